/* statement.h — DynamoDB's dialect of PartiQL as a tree: what parse.c builds from a
 * statement's text and its ? parameters, and what the planner (plan.h) reads.
 *
 * Values are already DynamoDB AttributeValues (jansson, as in model/value.h), parameters
 * substituted; paths are JSON arrays of names (strings) and list indexes (integers).
 * Nothing here knows tables, plans or evaluates anything. */
#ifndef QR_PARTIQL_STATEMENT_H
#define QR_PARTIQL_STATEMENT_H

#include <jansson.h>
#include <stddef.h>

#include "util/err.h"

/* The message prefix DynamoDB gives every statement it cannot parse. */
#define PARTIQL_MALFORMED "Statement wasn't well formed, can't be processed: "

typedef enum pq_node_kind {
    PQN_PATH,    /* path */
    PQN_VALUE,   /* value */
    PQN_AND,     /* args[0] AND args[1] */
    PQN_OR,      /* args[0] OR args[1] */
    PQN_NOT,     /* NOT args[0] */
    PQN_CMP,     /* args[0] op args[1] */
    PQN_BETWEEN, /* args[0] BETWEEN args[1] AND args[2] */
    PQN_IN,      /* args[0] IN (args[1], ...) */
    PQN_IS,      /* args[0] IS [NOT] MISSING | NULL | a type name */
    PQN_FUNC,    /* fn(args...): begins_with, contains, attribute_type, attribute_exists,
                    attribute_not_exists, size, list_append, set_add, set_delete */
    PQN_ADD,     /* args[0] + args[1] (UPDATE's SET) */
    PQN_SUB      /* args[0] - args[1] */
} pq_node_kind;

typedef struct pq_node {
    pq_node_kind kind;
    char op[3];            /* PQN_CMP: "=", "<>", "<", "<=", ">", ">=" */
    int negated;           /* PQN_IS: IS NOT */
    char is_type[5];       /* PQN_IS: the DynamoDB type ("NULL", "S", ...); "" for MISSING */
    char fn[24];           /* PQN_FUNC: the function's name in lower case */
    struct pq_node **args; /* owned */
    size_t nargs;
    json_t *path;  /* PQN_PATH (owned) */
    json_t *value; /* PQN_VALUE: an AttributeValue (owned) */
} pq_node;

typedef enum pq_kind { PQ_SELECT, PQ_INSERT, PQ_UPDATE, PQ_DELETE, PQ_EXISTS } pq_kind;

typedef enum pq_action_kind { PQA_SET, PQA_REMOVE, PQA_ADD, PQA_DELETE } pq_action_kind;

/* One action of UPDATE: SET target = value, REMOVE target, and SET target =
 * set_add(target, value) / set_delete(target, value) (ADD / DELETE value). */
typedef struct pq_action {
    pq_action_kind kind;
    pq_node *target; /* a PQN_PATH */
    pq_node *value;  /* NULL for REMOVE */
} pq_action;

typedef struct pq_stmt {
    pq_kind kind;   /* PQ_EXISTS: EXISTS(SELECT ...), the SELECT's fields below */
    char *table;    /* owned */
    char *index;    /* SELECT ... FROM "table"."index"; NULL if none */
    pq_node **proj; /* SELECT's projection; nproj 0 for * */
    size_t nproj;
    char *proj_error; /* a call in the projection (COUNT(*), ...): the message refusing it,
                         reported once the table is known (owned); NULL if none */
    pq_node *where;   /* NULL if none */
    char *order_by;   /* ORDER BY's first key; NULL if none */
    int order_desc;
    json_t *item;       /* INSERT's item: attribute name -> AttributeValue (owned) */
    pq_action *actions; /* UPDATE's actions */
    size_t nactions;
    const char *returning; /* RETURNING as ReturnValues ("ALL_OLD", ...); NULL if none */
} pq_stmt;

/* Parses one statement of len bytes. params is the request's Parameters (an array of
 * AttributeValues, validated already) or NULL; each ? takes the next one, and their
 * numbers must match. On failure records a ValidationException (DynamoDB's text where
 * known, else PARTIQL_MALFORMED and where the statement went wrong). */
int partiql_parse(const char *text, size_t len, json_t *params, pq_stmt **out, qr_err *err);
void partiql_free(pq_stmt *s);

#endif
