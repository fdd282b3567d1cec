/* execute.h — the PartiQL executor: runs plans (plan.h) through the operations' functions.
 *
 * execute.c calls the functions src/ops runs its operations with (items_put, query_read,
 * transact_write, ...), giving them the plan's expressions parsed; their answers come back
 * here as the operations answer. It does not plan, page, project or shape the PartiQL
 * API's responses (api.c does). */
#ifndef QR_PARTIQL_EXECUTE_H
#define QR_PARTIQL_EXECUTE_H

#include <jansson.h>
#include <stddef.h>

#include "engine/engine.h"
#include "partiql/plan.h"
#include "util/err.h"

/* ---- conditions quarry evaluates itself on items read ----
 * The WHERE of a SELECT read by key in a batch or a transaction (GetItem and
 * TransactGetItems take no filter), and the conditions on key attributes a Query's
 * FilterExpression may not hold. */

/* Compiles the conjunction of conds (every one passed pq_check_condition); *out NULL when
 * conds is empty. Errors read as the item operations report a condition's. */
int pq_filter_compile(const pq_conds *conds, pq_filter **out, qr_err *err);
/* 1 if item satisfies f (NULL: every item does), 0 if not, -1 with err set. */
int pq_filter_passes(const pq_filter *f, const json_t *item, qr_err *err);
void pq_filter_free(pq_filter *f);

/* DynamoDB judges the operand types of a statement's conditions before anything else
 * about its table: `val < ?` with a BOOL parameter is refused even on a table that does
 * not exist (recorded by the public conformance suite, tier 3 validation ordering). */
int pq_check_operand_types(const pq_stmt *st, qr_err *err);

/* ---- running plans ---- */

/* What one operation answered; the pointers are borrowed from body. */
typedef struct pq_result {
    const json_t *item;     /* GetItem's Item; a write's Attributes (RETURNING); or NULL */
    const json_t *capacity; /* ConsumedCapacity, or NULL */
    json_t *body;           /* the answer (owned) */
} pq_result;
void pq_result_free(pq_result *r);

/* capacity: ReturnConsumedCapacity, NULL when the caller's request had none. */

/* A PQ_OP_GET_ITEM plan. */
int pq_exec_get_item(qr_db *db, const pq_plan *p, const char *capacity, pq_result *out,
                     qr_err *err);
/* A write plan on its own (not PQ_OP_CONDITION_CHECK). on_failure is
 * ReturnValuesOnConditionCheckFailure (NULL: none; a PutItem takes none). A PutItem whose
 * item exists fails with ConditionalCheckFailedException. */
int pq_exec_write(qr_db *db, const pq_plan *p, const char *capacity, const char *on_failure,
                  pq_result *out, qr_err *err);
/* n PQ_OP_GET_ITEM plans as one TransactGetItems; items[i] (borrowed from out->body) is
 * plan i's item, or NULL. */
int pq_exec_transact_get(qr_db *db, const pq_plan *plans, size_t n, const char *capacity,
                         const json_t **items, pq_result *out, qr_err *err);
/* n write plans as one TransactWriteItems; on_failure[i] is statement i's
 * ReturnValuesOnConditionCheckFailure (NULL: none), token the request's ClientRequestToken
 * (checked; NULL: none) and identity what it stands for (transact_write_request). A
 * cancellation's reasons are in err->item. */
int pq_exec_transact_write(qr_db *db, const pq_plan *plans, size_t n, const char *const *on_failure,
                           const char *token, const char *identity, const char *capacity,
                           pq_result *out, qr_err *err);

/* A PQ_OP_QUERY or PQ_OP_SCAN plan, made ready to run page by page. */
typedef struct pq_read pq_read;
int pq_read_prepare(const pq_plan *p, const char *capacity, pq_read **out, qr_err *err);
void pq_read_free(pq_read *r);

/* One page: the items as the operation returned them (the plan's key_filter and the
 * projection not applied); the pointers are borrowed from body. */
typedef struct pq_page {
    const json_t *items;
    const json_t *last_key; /* LastEvaluatedKey; NULL when the read is complete */
    const json_t *capacity; /* ConsumedCapacity, or NULL */
    long long scanned;      /* items read before the filter */
    json_t *body;           /* owned */
} pq_page;
/* Reads one page: of the partition partition_value when the plan reads partition_in's
 * values in turn (NULL otherwise), at most limit items (0: no limit), from after
 * start_key (taken, whether or not the read succeeds; NULL: from the beginning). */
int pq_read_page(qr_db *db, pq_read *r, const json_t *partition_value, long long limit,
                 json_t *start_key, pq_page *out, qr_err *err);
void pq_page_free(pq_page *p);

/* ---- what is left of the text path ----
 *
 * Expressions reach the operations parsed from text execute.c writes, not built from the
 * tree: expr/ has no way yet to build an expr_cond, an expr_update or a key condition
 * from paths and values with the checks its parser makes (operand types, 300 operators,
 * the 4 KB size of the text). execute.c checks each value (value_validate) first. The
 * text's #nK and :vK placeholders stay inside (its messages name no parameter:
 * expr_ctx.bare). */

#endif
