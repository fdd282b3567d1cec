/* index.h — secondary indexes: their definitions, their entries, and their upkeep. Local
 * indexes are updated in the same atomic batch as the base item; global indexes
 * asynchronously, through a durable propagation log applied in order (propagate.c). */
#ifndef QR_INDEX_H
#define QR_INDEX_H

#include <jansson.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

struct table;
struct qr_db;

enum { QR_PROJ_KEYS_ONLY, QR_PROJ_INCLUDE, QR_PROJ_ALL };

typedef struct qr_index {
    char *name;
    uint16_t id;         /* the index's id in keys (1 and up) */
    int global;          /* GSI (1) or LSI (0) */
    int npk, nsk;        /* key attributes: 1-4 partition, 0-4 sort (GSIs; LSIs have 1 and 1) */
    char *pk[4], *sk[4]; /* their names, in key schema order */
    char pk_type[4], sk_type[4];
    int projection;  /* QR_PROJ_* */
    json_t *include; /* INCLUDE's NonKeyAttributes (owned array), or NULL */
    int creating;    /* backfilling; not yet readable */
    int token_order; /* its entries of one key follow the base table's token order */
} qr_index;

#define QR_MAX_GSI 20
#define QR_MAX_LSI 5
/* The engine's own bound on a table's indexes: a CQL table's (Cassandra sets no limit on
 * secondary indexes and views); DynamoDB's tables keep QR_MAX_GSI and QR_MAX_LSI. */
#define QR_MAX_INDEXES 256
#define QR_MAX_PROJECTED 100
#define QR_MAX_KEY_ATTRS 4

/* Builds the index list of a table from its description and the ids stored with it.
 * Returns the number of indexes; *out is malloc'd (free with index_list_free). */
size_t index_list_from_desc(json_t *desc, json_t *ids, qr_index **out);
void index_list_free(qr_index *list, size_t n);

/* Validates LocalSecondaryIndexes / GlobalSecondaryIndexes of a CreateTable request
 * against the table's key schema and attribute definitions. */
int index_check_definitions(json_t *req, qr_err *err);
/* Validates one GSI definition (CreateTable or UpdateTable's Create). */
int index_check_gsi(json_t *gsi, json_t *defs, qr_err *err);
/* Writes the attribute names of an AttributeDefinitions list as DynamoDB lists them in
 * messages ("a, b"), cut to fit cap. */
void index_definition_names(json_t *defs, char *out, size_t cap);

/* An index entry lives in its table's key range under the index's id:
 *
 *     't' | table id | index id | hash(index pk) | index pk | index sk | base pk | base sk
 *
 * and holds the projection of the base item in the stored item form; in an index with
 * token_order (a global index made on a table in token order: its description holds
 * QR_INDEX_ORDER_FIELD, engine.h) the base pk's token (8 bytes, ordered as the base
 * table orders them) goes before the base pk, so the entries of one index key follow the
 * base table's order, as the rows of a Cassandra index read do. An item without every
 * index key attribute has no entry (a sparse index).
 *
 * The entry key of item in index ix of table t; returns 1 if the item has one, 0 if it
 * lacks an index key attribute (sparse), -1 on error. */
int index_entry_key(const struct table *t, const qr_index *ix, const json_t *item, buf *out,
                    qr_err *err);
/* A global index of a CQL table keyed by one hash attribute and no range may be
 * multi-valued: an item whose attribute holds a set of the key's type (SS for S, NS for
 * N, BS for B) has one entry per element, each the entry the item would have with the
 * attribute holding that element alone (the CQL front end's indexes on collections).
 * Calls fn with each entry's key and that item until fn answers non-zero; returns fn's
 * answer, 0 when done (or the item has no entry), or -1 on error. A scalar attribute
 * gives index_entry_key's one entry. */
typedef int (*index_entry_fn)(void *arg, const buf *key, const json_t *entry_item);
int index_each_entry(const struct table *t, const qr_index *ix, const json_t *item,
                     index_entry_fn fn, void *arg, qr_err *err);
/* 1 when item holds a set in ix's multi-valued key attribute. */
int index_item_multi(const struct table *t, const qr_index *ix, const json_t *item);
/* The entry writes one base write (old -> new, either NULL) makes in the multi-valued
 * index ix, each passed to fn with the entry's key, its size (item_size of what the entry
 * stores) and put (1) or delete (0): the entries of elements gone deleted, those of new
 * elements put, and those kept put again only when what they store changes. Stops at
 * fn's first non-zero answer and returns it; 0 when done, -1 on error. */
typedef int (*index_write_fn)(void *arg, const buf *key, size_t bytes, int put);
int index_multi_writes(const struct table *t, const qr_index *ix, const json_t *old_item,
                       const json_t *new_item, index_write_fn fn, void *arg, qr_err *err);
/* The projection of item stored in index ix (a new item). */
json_t *index_project(const struct table *t, const qr_index *ix, const json_t *item);
/* Checks that item's index key attributes, where present, have the index's types and
 * are not empty (DynamoDB rejects such writes). */
int index_check_item(const struct table *t, const json_t *item, qr_err *err);

/* The bytes one base write (old -> new) writes to index ix: the new entry's size, or
 * the old entry's when it is only deleted; 0 when the write does not touch the index.
 * *writes is set to the number of index writes (2 when the entry's key changes). */
size_t index_write_bytes(const struct table *t, const qr_index *ix, const json_t *old_item,
                         const json_t *new_item, int *writes);

/* ---- the propagation worker (propagate.c) ---- */
/* The base write adds a record of its global index work to the propagation log in the same
 * batch, so a crash loses no index work and the lag is observable.
 *
 * Waits until the log is empty (or timeout_ms passes); returns 0 if drained. */
int propagate_drain(struct qr_db *db, int timeout_ms);
/* Waits until the global index work of every write committed before the call has been
 * applied (read-your-writes for a front end whose index reads promise it), timeout_ms at
 * most, and not at all while a lag is injected (--gsi-lag-ms keeps its lag). Writes still
 * uncommitted when it is called may be waited for too. 0, or -1 when it timed out. */
int propagate_catch_up(struct qr_db *db, int timeout_ms);
/* Records pending (kept as a count) and the age in milliseconds of the oldest one (one
 * seek). */
void propagate_lag(struct qr_db *db, uint64_t *pending, double *oldest_ms);
/* The median and 99th percentile of the propagation lag (write to index update) of the
 * most recent 1024 records, in milliseconds; *count is how many records were applied. */
void propagate_lag_percentiles(struct qr_db *db, double *p50, double *p99, uint64_t *count);
/* A global index created on a live table is filled by a background backfill while its
 * status is CREATING.
 *
 * Starts the backfill of a CREATING global index. */
int backfill_start(struct qr_db *db, const char *table_name, const char *index_name);

#endif
