/* expr.h — DynamoDB's expression language: parse once, evaluate against items. The legacy
 * parameters (Expected, KeyConditions, QueryFilter, ScanFilter, AttributeUpdates,
 * AttributesToGet) are translated into the same parsed forms, so one evaluator serves both.
 * It never touches storage; operations call it with the item they read. */
#ifndef QR_EXPR_H
#define QR_EXPR_H

#include <jansson.h>

#include "util/err.h"

/* Covers KeyConditionExpression, ConditionExpression, FilterExpression, UpdateExpression
 * and ProjectionExpression, with ExpressionAttributeNames (#n) and
 * ExpressionAttributeValues (:v), document paths (a.b[2].c), comparators, BETWEEN, IN,
 * AND/OR/NOT with DynamoDB's precedence, the functions attribute_exists,
 * attribute_not_exists, attribute_type, begins_with, contains, size, and in updates SET (+,
 * -, list_append, if_not_exists), REMOVE, ADD and DELETE. Items and values are jansson
 * AttributeValues as described in model/value.h.
 *
 * Every error is a ValidationException whose message follows DynamoDB's text, e.g.
 *   Invalid ConditionExpression: Syntax error; token: "=", near: "a = = b"
 *   Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}
 *   An expression attribute value used in expression is not defined; attribute value: :y
 *
 * The names and values one request supplies, shared by all expressions of the request,
 * and a record of which of them the expressions used. */
typedef struct expr_ctx {
    json_t *names;       /* ExpressionAttributeNames (borrowed; NULL if absent) */
    json_t *values;      /* ExpressionAttributeValues (borrowed; NULL if absent) */
    json_t *used_names;  /* object used as a set of the #names used (owned) */
    json_t *used_values; /* object used as a set of the :values used (owned) */
    qr_err *err;         /* where parse errors go (borrowed) */
    /* Messages name no parameter: "Syntax error; ..." where a request's read "Invalid
     * FilterExpression: Syntax error; ..." (PartiQL's, whose expressions are no
     * parameters); expr_ctx_init clears it. */
    int bare;
} expr_ctx;

/* Starts a context. names and values are borrowed and must outlive it; values must
 * have been validated by value_validate already (the caller does that). */
void expr_ctx_init(expr_ctx *cx, json_t *names, json_t *values, qr_err *err);
void expr_ctx_free(expr_ctx *cx);
/* After every expression of a request is parsed: fails if some supplied name or value
 * was not used, with DynamoDB's message. */
int expr_ctx_check_unused(expr_ctx *cx);

/* ---- Conditions: ConditionExpression, FilterExpression ---- */
typedef struct expr_cond expr_cond;

/* Parses a condition. which is the parameter name used in messages
 * ("ConditionExpression" or "FilterExpression"). On success *out owns the tree. */
int expr_parse_condition(expr_ctx *cx, const char *which, const char *text, expr_cond **out);
/* Evaluates against item (NULL means no item: every path is missing). Returns 1 for
 * true, 0 for false, -1 with err set on an evaluation error. */
int expr_cond_eval(const expr_cond *c, const json_t *item, qr_err *err);
/* True if the condition refers to the top-level attribute name (after #name
 * substitution); used to reject filters on key attributes in Query. */
int expr_cond_mentions(const expr_cond *c, const char *top_name);
/* True if the condition looks inside the top-level attribute top_name (a.b, a[0]). */
int expr_cond_nests_into(const expr_cond *c, const char *top_name);
/* A new JSON array of the distinct top-level attribute names the condition's paths
 * start at (after #name substitution), in first-use order. */
json_t *expr_cond_top_names(const expr_cond *c);
void expr_cond_free(expr_cond *c);

/* ---- UpdateExpression ---- */
typedef struct expr_update expr_update;

int expr_parse_update(expr_ctx *cx, const char *text, expr_update **out);
/* Applies the update to item in place (item is an object, empty if the item did not
 * exist). Fails with DynamoDB's ValidationException for a wrong operand type, an invalid
 * document path, and so on; on failure item may be partly changed, so callers apply to
 * a copy. */
int expr_update_apply(const expr_update *u, json_t *item, qr_err *err);
/* The same for an item that does not exist (item holds only its key): a REMOVE whose
 * path leads through a missing attribute is ignored, as DynamoDB ignores it there while
 * it refuses it on an existing item. */
int expr_update_apply_missing(const expr_update *u, json_t *item, qr_err *err);
/* A new JSON array of the distinct top-level attribute names the update writes or
 * removes, in first-use order (for key checks and ReturnValues UPDATED_*). */
json_t *expr_update_top_names(const expr_update *u);
/* A new projection of every document path the update writes or removes (free it with
 * expr_proj_free; NULL when out of memory). Projecting the old or new item through it
 * gives DynamoDB's ReturnValues UPDATED_OLD / UPDATED_NEW, nested parts included. */
struct expr_proj *expr_update_projection(const expr_update *u);
/* What UpdateItem charges the statement against the 400 KB item limit, from the request
 * alone: 3, plus for each SET or ADD 19, its target and its operands, and for each
 * REMOVE or DELETE 1 and its target (DynamoDB's figures, measured, not documented). */
size_t expr_update_request_size(const expr_update *u);
void expr_update_free(expr_update *u);

/* ---- ProjectionExpression ---- */
typedef struct expr_proj expr_proj;

int expr_parse_projection(expr_ctx *cx, const char *text, expr_proj **out);
/* A new item holding only the projected paths of item (nested maps and lists keep
 * only the named parts, as DynamoDB returns them). */
json_t *expr_project(const expr_proj *p, const json_t *item);
/* True if a projected path looks inside the top-level attribute top_name (a.b, a[0]). */
int expr_proj_nests_into(const expr_proj *p, const char *top_name);
/* A new JSON array of the distinct top-level attribute names projected, in order. */
json_t *expr_proj_top_names(const expr_proj *p);
void expr_proj_free(expr_proj *p);

/* ---- KeyConditionExpression ---- */
typedef enum expr_key_op {
    EXPR_KEY_NONE = 0,
    EXPR_KEY_EQ,
    EXPR_KEY_LT,
    EXPR_KEY_LE,
    EXPR_KEY_GT,
    EXPR_KEY_GE,
    EXPR_KEY_BETWEEN,
    EXPR_KEY_BEGINS_WITH
} expr_key_op;

typedef struct expr_keycond {
    json_t *pk_value;  /* AttributeValue the partition key must equal (owned ref) */
    expr_key_op sk_op; /* EXPR_KEY_NONE if no sort-key condition */
    json_t *sk_value1; /* operand (owned ref), or NULL */
    json_t *sk_value2; /* second operand of BETWEEN (owned ref), or NULL */
} expr_keycond;

/* Parses a key condition for a key schema whose partition key is pk_name and sort key
 * sk_name (NULL if none). Checks DynamoDB's rules: exactly one equality on the
 * partition key, at most one condition on the sort key, only AND, only the allowed
 * operators, operand types matching key types (pk_type/sk_type are 'S', 'N' or 'B'),
 * BETWEEN bounds in order; messages as DynamoDB's ("Query condition missed key schema
 * element: pk", "Query key condition not supported", …). */
int expr_parse_key_condition(expr_ctx *cx, const char *text, const char *pk_name, char pk_type,
                             const char *sk_name, char sk_type, expr_keycond *out);
void expr_keycond_free(expr_keycond *k);

/* ---- KeyConditionExpression on a multi-attribute key (GSIs since November 2025) ----
 * A global secondary index's key may have up to four partition-key attributes and up to
 * four sort-key attributes. A Query must test every partition-key attribute for
 * equality; it may test the sort-key attributes left to right, each with equality,
 * except that the last one tested may use any sort-key operator (<, <=, >, >=,
 * BETWEEN, begins_with); attributes may not be skipped. */
#define EXPR_KEY_MAX_ATTRS 4

typedef struct expr_key_schema {
    int npk, nsk; /* 1..4 and 0..4 */
    const char *pk_names[EXPR_KEY_MAX_ATTRS];
    char pk_types[EXPR_KEY_MAX_ATTRS]; /* 'S', 'N' or 'B' */
    const char *sk_names[EXPR_KEY_MAX_ATTRS];
    char sk_types[EXPR_KEY_MAX_ATTRS];
} expr_key_schema;

typedef struct expr_keycond_multi {
    json_t *pk_values[EXPR_KEY_MAX_ATTRS]; /* in key schema order (owned refs) */
    int nsk_eq;                            /* leading sort-key attributes tested with = */
    json_t *sk_eq[EXPR_KEY_MAX_ATTRS];     /* their values (owned refs) */
    expr_key_op last_op;                   /* test on sort-key attribute nsk_eq, or NONE;
                                              never EQ (an equality counts in nsk_eq) */
    json_t *last_v1, *last_v2;             /* its operands (owned refs), or NULL */
} expr_keycond_multi;

/* Parses a key condition against a (possibly) multi-attribute key schema, with the same
 * checks and messages as expr_parse_key_condition for the single-attribute case. */
int expr_parse_key_condition_multi(expr_ctx *cx, const char *text, const expr_key_schema *schema,
                                   expr_keycond_multi *out);
/* The same for the legacy KeyConditions parameter. */
int expr_from_key_conditions_multi(json_t *conds, const expr_key_schema *schema,
                                   expr_keycond_multi *out, qr_err *err);
void expr_keycond_multi_free(expr_keycond_multi *k);

/* ---- Legacy parameters ---- */
/* Expected + ConditionalOperator (PutItem, UpdateItem, DeleteItem). op may be NULL. */
int expr_from_expected(json_t *expected, const char *op, expr_cond **out, qr_err *err);
/* QueryFilter or ScanFilter + ConditionalOperator. which names the parameter. */
int expr_from_filter(const char *which, json_t *filter, const char *op, expr_cond **out,
                     qr_err *err);
/* AttributeUpdates (UpdateItem). */
int expr_from_attribute_updates(json_t *updates, expr_update **out, qr_err *err);
/* AttributesToGet. */
int expr_from_attributes_to_get(json_t *names, expr_proj **out, qr_err *err);
/* KeyConditions (Query), with the same checks as expr_parse_key_condition. */
int expr_from_key_conditions(json_t *conds, const char *pk_name, char pk_type, const char *sk_name,
                             char sk_type, expr_keycond *out, qr_err *err);

#endif
