/* plan.h — the planner: a parsed statement (statement.h) and its table's key schema become
 * a plan, naming the one item operation that serves the statement and that operation's
 * parts (key, key condition, filter, condition, update), each still a piece of the tree.
 *
 * Planning refuses what DynamoDB refuses about a statement against its table's keys. It
 * writes no request and runs nothing: schema.c reads the key schema, execute.h runs plans. */
#ifndef QR_PARTIQL_PLAN_H
#define QR_PARTIQL_PLAN_H

#include <jansson.h>
#include <stddef.h>

#include "engine/engine.h"
#include "partiql/statement.h"
#include "util/err.h"

/* The key schema a statement works with: its table's key and, for a SELECT, the key and
 * projection of what it reads (an index, or the table). */
typedef struct pq_schema {
    char *table;                 /* the table's name (the statement may give its ARN) */
    char *pk, *sk;               /* the table's key attributes (sk NULL if none) */
    int npk, nsk;                /* the key attributes of what a SELECT reads: */
    char *rpk[QR_MAX_KEY_ATTRS]; /* the index's, or the table's */
    char *rsk[QR_MAX_KEY_ATTRS];
    int global;      /* the statement reads a global secondary index */
    char *index;     /* the index it reads (NULL: the table) */
    int projection;  /* the index's QR_PROJ_* (QR_PROJ_ALL for the table) */
    json_t *include; /* INCLUDE's NonKeyAttributes (owned), or NULL */
} pq_schema;

/* schema.c. Reads the schema of st's table and the index it reads, after the checks
 * DynamoDB makes before it looks at the table (pq_check_operand_types), and refuses an
 * index PartiQL cannot read. */
int pq_schema_load(qr_db *db, const pq_stmt *st, pq_schema *out, qr_err *err);
/* Refuses a SELECT that reads one item by key (a batch's or a transaction's) from an
 * index: in pq_schema_load's words when it is an index PartiQL cannot read at all, else
 * with missing. Always returns -1. */
int pq_schema_refuse_index_read(qr_db *db, const pq_stmt *st, const char *missing, qr_err *err);
void pq_schema_free(pq_schema *s);

/* A list of conditions, borrowed from the statement's tree. */
typedef struct pq_conds {
    pq_node **v;
    size_t n, cap;
} pq_conds;

typedef enum pq_op {
    PQ_OP_GET_ITEM,        /* a SELECT of one item by its table key (batches, transactions) */
    PQ_OP_QUERY,           /* a SELECT whose WHERE fixes the partition key with = or IN */
    PQ_OP_SCAN,            /* any other SELECT */
    PQ_OP_PUT_ITEM,        /* INSERT */
    PQ_OP_UPDATE_ITEM,     /* UPDATE */
    PQ_OP_DELETE_ITEM,     /* DELETE */
    PQ_OP_CONDITION_CHECK, /* EXISTS, in a transaction */
} pq_op;

/* The condition a write puts on the item it names, on the table's partition key pk:
 *   ABSENT       attribute_not_exists(pk)                   INSERT
 *   PRESENT_AND  attribute_exists(pk) AND every condition   UPDATE, EXISTS
 *   ABSENT_OR    attribute_not_exists(pk) OR (every one)    DELETE with conditions
 *   ANY          no condition                               DELETE by key alone */
typedef enum pq_item_test {
    PQ_ITEM_ANY,
    PQ_ITEM_ABSENT,
    PQ_ITEM_PRESENT_AND,
    PQ_ITEM_ABSENT_OR,
} pq_item_test;

/* Conditions quarry evaluates itself on items read (execute.h). */
typedef struct pq_filter pq_filter;

/* A transaction runs the plans of its statements together: every one a PQ_OP_GET_ITEM
 * (TransactGetItems), or every one a write (TransactWriteItems). */
typedef struct pq_plan {
    pq_op op;
    const pq_stmt *stmt; /* borrowed: table, index, item, actions, projection, WHERE */
    pq_schema schema;    /* owned */
    /* GET_ITEM, UPDATE_ITEM, DELETE_ITEM, CONDITION_CHECK: the item's table key,
     * attribute name -> AttributeValue (owned). A GET_ITEM's WHERE holds nothing else;
     * the executor's caller applies it to the item read. */
    json_t *key;
    /* QUERY: the key condition, schema.rpk[i] = partition_values[i] for every partition
     * key attribute, except that rpk[0] takes each distinct value of partition_in in turn
     * when that is set (one Query each); then sort_condition on rsk[0], if any. */
    const json_t *partition_values[QR_MAX_KEY_ATTRS];
    const pq_node *partition_in; /* rpk[0] IN (v, ...), every v a value; NULL if none */
    const pq_node *sort_condition;
    pq_conds filter; /* QUERY: the FilterExpression, these conjuncts */
    /* QUERY: the conjuncts on key attributes, which a FilterExpression may not name,
     * applied to the items read (owned; NULL: none) */
    pq_filter *key_filter;
    const pq_node *scan_filter; /* SCAN: the FilterExpression, the whole WHERE (or NULL) */
    int scan_forward;           /* QUERY: ORDER BY ... ASC (or none) */
    int consistent;             /* GET_ITEM, QUERY, SCAN: ConsistentRead */
    /* QUERY, SCAN: a local index that does not hold an attribute the projection names
     * reads every attribute from the table */
    int select_all_attributes;
    /* PUT_ITEM, UPDATE_ITEM, DELETE_ITEM, CONDITION_CHECK */
    pq_item_test item_test;
    pq_conds conditions; /* those item_test combines */
    /* UPDATE_ITEM, DELETE_ITEM: ReturnValues (RETURNING's, else "NONE") */
    const char *return_values;
} pq_plan;

/* Each planner takes over *schema (pq_plan_free frees it; on failure it is freed). */

/* A SELECT on its own: a Query or a Scan. */
int pq_plan_select(const pq_stmt *st, pq_schema *schema, int consistent, pq_plan *out, qr_err *err);
/* A SELECT of one item of the table (not an index) by its full key and nothing else;
 * missing is the message when its WHERE says anything else. */
int pq_plan_get_item(const pq_stmt *st, pq_schema *schema, const char *missing, int consistent,
                     pq_plan *out, qr_err *err);
/* INSERT, UPDATE, DELETE, or EXISTS; i is the statement's place in its transaction, for
 * messages. The statement reads no index (the caller refuses one). */
int pq_plan_write(const pq_stmt *st, pq_schema *schema, size_t i, pq_plan *out, qr_err *err);
void pq_plan_free(pq_plan *p);

/* Fails, with DynamoDB's message, when condition n (a WHERE, or part of one) says what
 * the item operations' expressions cannot: a value where a condition belongs, a condition
 * or a function other than size and list_append where a value belongs, IN with more than
 * 100 values. Every condition of a plan has passed it. */
int pq_check_condition(const pq_node *n, qr_err *err);

/* Refuses statement i of a transaction, in DynamoDB's words for a statement it checks
 * before running any. Returns -1. */
int pq_refuse_in_transaction(qr_err *err, size_t i, const char *why);

#endif
