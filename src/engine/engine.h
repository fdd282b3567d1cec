/* engine.h — the engine's interface: what the layers above (operations, PartiQL, the
 * protocols) may use of a database. Tables are opaque handles with accessors; every write
 * of items is an item transaction, every read of items a range cursor or a point read,
 * and each reports to one hook. How items are stored, locked and indexed stays behind it,
 * in engine_int.h, the way SQLite's btree.h keeps btreeInt.h to itself. */
#ifndef QR_ENGINE_H
#define QR_ENGINE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/index.h"
#include "engine/meta.h"
#include "engine/pitr.h"
#include "engine/stream.h"
#include "capacity/meter.h"
#include "expr/expr.h"
#include "quarry.h"
#include "util/buf.h"
#include "util/err.h"

/* A table of an open database. A handle comes from catalog_get (or catalog_create) and
 * stays valid, with everything borrowed from it, until catalog_release; while it is held,
 * the table's key schema and index list do not change. */
typedef struct table table;

typedef struct key_attr {
    char *name; /* NULL if absent (a table without a sort key) */
    char type;  /* 'S', 'N' or 'B' */
} key_attr;

/* ---- tables: borrowed views, valid while the handle is held ---- */
const char *table_name(const table *t);
uint32_t table_id(const table *t);
const key_attr *table_pk(const table *t);
const key_attr *table_sk(const table *t);
/* The table's secondary indexes, table_index_count of them (an array; borrowed). */
const qr_index *table_indexes(const table *t);
size_t table_index_count(const table *t);
/* The index of t with the given name; NULL if none. */
const qr_index *table_index(const table *t, const char *name);
/* True if writes to t must maintain secondary indexes. */
int table_has_indexes(const table *t);
/* Table t's local index count. */
size_t table_lsi_count(const table *t);
/* A copy of t's TableDescription as the catalog keeps it (the caller owns it), and a
 * copy of one of its members (NULL when absent). The description can change at any time
 * (UpdateTable, a backfill finishing): these copies are taken under the catalog's lock. */
json_t *table_description(table *t);
json_t *table_desc_member(table *t, const char *member);

/* A table whose items a front end other than DynamoDB's lays out: a CQL table, whose
 * description member of this name ({"keyspace", "table"}) names it in the CQL schema.
 * Its items are written only through that front end (TXN_OWNER) and the engine's own
 * work; its schema changes only through that front end. */
#define QR_CQL_TABLE_FIELD "QuarryCqlTable"
/* The front end owning t ("CQL"), or NULL for a DynamoDB table. */
const char *table_owner(const table *t);
/* ValidationException naming t as its owner's when t has one: for a DynamoDB request
 * that would change it. */
int table_refuse_owned(const table *t, qr_err *err);

/* Where a table's TTL setting lives in its catalog description (stripped from
 * DescribeTable): {"TimeToLiveStatus": "ENABLED", "AttributeName": …}. */
#define QR_TTL_FIELD "QuarryTimeToLive"
/* When the TTL setting last changed (epoch seconds), for the hour in which DynamoDB
 * refuses another change (ops/ttl.c); stripped from DescribeTable too. */
#define QR_TTL_CHANGED_FIELD "QuarryTimeToLiveChangedAt"
/* Point-in-time recovery settings (ops/backups.c), kept like the TTL setting. */
#define QR_PITR_FIELD "QuarryPointInTimeRecovery"

/* Where a table's partitions lie in key order, in its catalog description: a table whose
 * description holds {QR_PARTITION_ORDER_FIELD: QR_PARTITION_ORDER_TOKEN} (the CQL front
 * end's, given at catalog_create and never changed) has a binary partition key and places
 * each partition by Cassandra's Murmur3Partitioner token of the key's bytes
 * (util/murmur3.h) where other tables have the engine's hash, so that its partitions
 * follow in ascending token order (ties in the key's order) and a token range is a key
 * range. Every other table (all DynamoDB tables) keeps the hash order. */
#define QR_PARTITION_ORDER_FIELD "QuarryPartitionOrder"
#define QR_PARTITION_ORDER_TOKEN "Murmur3Token"
/* A global index made on such a table holds {QR_INDEX_ORDER_FIELD:
 * QR_PARTITION_ORDER_TOKEN} in its description (given when it is made, never changed,
 * stripped from DescribeTable): its entries of one index key follow the table's token
 * order (engine/index.h). An index made by a build before this field has none, and keeps
 * the order its stored entries have. */
#define QR_INDEX_ORDER_FIELD "QuarryEntryOrder"
/* 1 when t's partitions are in token order. */
int table_token_order(const table *t);

/* ---- the catalog ---- */
/* Finds a table by name and takes a reference; NULL if there is none. */
table *catalog_get(qr_db *db, const char *name);
/* Drops a reference taken by catalog_get or catalog_create (t may be NULL). */
void catalog_release(qr_db *db, table *t);
/* catalog_release once this thread's writes are in the store: a request that wrote
 * through an item transaction lets its table go this way, so that no change of the
 * table's indexes or stream passes a write made with the old ones. */
void catalog_release_after_writes(table *t);
/* Changes a table's description and index ids under the schema write lock: change()
 * edits copies of both in place (returning 0, or -1 with err set to cancel); they are
 * persisted and the index list rebuilt. The caller must not hold a table reference.
 * ResourceNotFoundException if the table does not exist. */
typedef int (*schema_change_fn)(json_t *desc, json_t *ids, void *arg, qr_err *err);
int catalog_change_schema(qr_db *db, const char *name, schema_change_fn change, void *arg,
                          qr_err *err);
/* Adds a table described by desc (a TableDescription; stolen), persisting it. Fails with
 * ResourceInUseException if the name is taken. */
int catalog_create(qr_db *db, json_t *desc, table **out, qr_err *err);
/* Removes a table and all its items. */
int catalog_delete(qr_db *db, table *t, qr_err *err);
/* A new array of the table names in order (ListTables). */
json_t *catalog_names(qr_db *db);
/* Removes every entry of index id of t (an index dropped by UpdateTable, after it left
 * the catalog). Fails, with err set, if the store refuses the range delete. */
int catalog_drop_index_entries(qr_db *db, const table *t, uint16_t id, qr_err *err);

/* ---- keys ---- */
/* The same for a partition key of n attributes (multi-attribute GSI keys). */
int key_partition_tuple(buf *out, const table *t, uint16_t index_id, const json_t *const *values,
                        int n, qr_err *err);
/* Appends the whole key of the item (or Key map) of t's base table. The key attributes
 * must be present and of the right type (checked by key_check first). */
int key_item(buf *out, const table *t, const json_t *item, qr_err *err);
/* Appends the first key of t's index index_id (its whole range is prefix..prefix+1). */
void key_table_prefix(buf *out, const table *t, uint16_t index_id);
/* For a table in token order: appends the first key of its items whose partition's token
 * is at least token (the items of tokens [a, b] lie between the bounds of a and of b + 1,
 * or to the end of the table's prefix when b is INT64_MAX). */
void key_token_bound(buf *out, const table *t, int64_t token);
/* Checks a Key parameter: exactly the key attributes, with the schema's types, not
 * empty, within the size limits. */
int key_check_key(const table *t, json_t *key, qr_err *err);
/* Checks the key attributes of a whole item (PutItem): present, typed, not empty, within
 * the size limits. */
int key_check_item(const table *t, json_t *item, qr_err *err);
/* A new Key map holding just t's key attributes of item. */
json_t *key_of_item(const table *t, const json_t *item);

/* The wall clock, in seconds since the epoch: what the engine stamps its records with. */
double engine_now_seconds(void);
/* qr_options.transient_ms of db: how long tables and indexes show their transient states. */
int engine_transient_ms(const qr_db *db);

/* The folder standing for S3 (qr_options.s3_root), or NULL when there is none. */
const char *engine_s3_root(const qr_db *db);

/* Says a line (printf's format) through the database's qr_options.log, if it has one. */
void engine_log(qr_db *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a progress line; last: the line that ends the work. */
void engine_log_progress(qr_db *db, const char *line, int last);
/* A progress_sink (util/progress.h) whose arg is a qr_db: each line goes to engine_log. */
void engine_progress_sink(void *db, const char *line, int last);
/* The number of items stored in t (counted the first time, as DescribeTable counts). */
int64_t table_item_count(qr_db *db, table *t);

/* ---- the stored form of items ----
 * A format byte, the item's DynamoDB size (4 bytes BE), what it counts toward a Query or
 * Scan page (item_page_size under its table's sort key, 4 bytes BE), then its JSON wire
 * form, so reads can bill and page by size and copy the JSON into responses without
 * parsing. An item stored before the page size was (an older format byte, no page size)
 * reads as ever, its item_size standing for its page size. */
#define ITEM_HEADER_LEN 9
/* Serialises an item of t (an item or one of its index entries) into out (the stored
 * form); the second for an item whose item_size and item_page_size the caller has
 * already computed. */
int item_encode(const table *t, const json_t *item, buf *out);
int item_encode_sized(const json_t *item, size_t size, size_t page, buf *out);
/* An item written as compact JSON text straight into its stored form: item_encode_open
 * appends the header (at out->len before the call: start) with the sizes left open, the
 * caller appends the item's text, and item_encode_close sets its item_size and
 * item_page_size. */
int item_encode_open(buf *out);
void item_encode_close(buf *out, size_t start, size_t size, size_t page);
/* Parses a stored item. */
json_t *item_decode(const char *v, size_t len);
/* The JSON text and DynamoDB size of a stored item, without parsing it. Returns -1 if
 * the bytes are not a stored item. */
int item_stored(const char *v, size_t len, const char **json, size_t *json_len, size_t *size);
/* What a stored item (one item_stored takes) counts toward a Query or Scan page. */
size_t item_stored_page(const char *v, size_t len);

/* ---- the hook: every access of items, in one place ----
 * Each committed write of an item or an index entry, and each item a cursor or a point
 * read returns, is reported here as it happens, with what metering, heat maps and
 * traffic matching need. A global index's entries are reported once each, with the
 * index's name, when the base write that logs them for the propagation worker commits,
 * flagged as that write is; the worker, applying them later, reports nothing. (An entry
 * a write leaves as it was is not reported, as DynamoDB does not charge for it.) A
 * backfill reports the base items it reads and each entry it writes as the engine's own
 * (system). The hook runs on the accessing thread (a backfill's too), with item locks
 * held for writes: it must be quick and must not call back into the database. */
typedef struct engine_access {
    const char *table;  /* the table's name */
    const char *index;  /* the index's name, or NULL for the table's own items */
    uint64_t partition; /* hash of the encoded partition key: where keys are ordered */
    size_t bytes;       /* DynamoDB size of the item (or index entry) read, written or
                           removed; 0 for a point read that found nothing */
    size_t old_bytes;   /* a write of an item: the size of the item it replaced (0: none) */
    int write;          /* 1: written or deleted; 0: read */
    int consistent;     /* reads: a strongly consistent read was asked for */
    int system;         /* the engine's own work (TTL expiry, restores, backfills), not a
                           request's */
    int transactional;  /* part of TransactWriteItems or TransactGetItems */
    int throttled;      /* refused for capacity before it happened (nothing was read or
                           written; bytes is 0) */
    const char *key;    /* the stored key of the item or index entry (borrowed, for the
                           call): key_partition_len's bytes are its partition key */
    size_t key_len;
} engine_access;
typedef void (*engine_hook_fn)(void *arg, const engine_access *a);
/* The bytes of a stored key (engine_access.key) that hold its partition: the table or
 * index prefix, the hash and the encoded partition key; the rest is the sort key and,
 * for an index entry, the base item's key. 0 if key is not one of t's. */
size_t key_partition_len(const table *t, const char *key, size_t len);
/* Sets (or, with fn NULL, removes) the database's hook. Set it before requests run. */
void engine_set_hook(qr_db *db, engine_hook_fn fn, void *arg);

/* ---- the api layer's state ----
 * One pointer per database that the layer above the operations (src/api: its request
 * statistics) hangs on the handle, so that two databases in one process share nothing.
 * engine_api_state returns it, NULL until set. engine_api_state_set installs state
 * unless one is installed already (by another thread first), and returns the one
 * installed either way: a caller whose state lost frees its own. qr_close calls
 * free_fn on the installed state, once no call runs. */
void *engine_api_state(qr_db *db);
void *engine_api_state_set(qr_db *db, void *state, void (*free_fn)(void *));

/* ---- the CQL front end's state ----
 * The same for the CQL front end (src/cql: its schema cache and prepared statements):
 * engine_cql_state_set installs state unless another thread did first, and returns the
 * one installed; qr_close calls free_fn on it once no call runs. */
void *engine_cql_state(qr_db *db);
void *engine_cql_state_set(qr_db *db, void *state, void (*free_fn)(void *));

/* ---- opening, and the model watch's state ----
 * engine_open is qr_open's work below the api layer (src/api/open.c adds the models of
 * qr_options.models). The model watch (src/watch) hangs its state on the handle:
 * engine_model_state returns it (NULL when no model is loaded, which is one load and
 * one branch for a request to learn); engine_model_state_set installs it, before any
 * call runs, and qr_close calls free_fn on it once no call runs. */
int engine_open(const char *dir, const qr_options *opts, qr_db **out, char **errmsg);
void *engine_model_state(const qr_db *db);
void engine_model_state_set(qr_db *db, void *state, void (*free_fn)(void *));

/* ---- item transactions (txn.c) ----
 * Every write of items: begin with the items it will touch (their locks are taken, in
 * order, so writers of several items never deadlock), read them, check conditions, put
 * or delete each at most once, then commit, which writes the items, their local index
 * entries, global index work, stream records, point-in-time history, statistics and item
 * collection sizes in one atomic batch. Nothing is written before the commit; txn_end
 * lets go of everything (and abandons an uncommitted transaction). */
typedef struct item_txn item_txn;
typedef enum txn_kind {
    /* One item. Fails at once with TransactionConflictException if a transaction holds
     * it. On a thread that defers flushes (serve --no-sync), the write joins the thread's
     * staged writes and the item stays locked until their commit. */
    TXN_ITEM,
    /* Several items (BatchWriteItem): waits for their locks. */
    TXN_BATCH,
    /* TransactWriteItems: holds its items so that single-item writes to them conflict. */
    TXN_ATOMIC
} txn_kind;
/* Or'd into the kind: the engine's own work, reported to the hook as such. */
#define TXN_SYSTEM 0x100
/* Or'd into the kind: the front end owning the tables (table_owner) writes them; any
 * other transaction on such a table is refused with table_refuse_owned's error. */
#define TXN_OWNER 0x200

/* Begins a transaction over n items: item i is the base-table item of tables[i] at
 * keys[i] (key_item's form). The keys and tables are borrowed until txn_end and must be
 * distinct items. */
int txn_begin(qr_db *db, int kind, size_t n, table *const *tables, const buf *keys, item_txn **out,
              qr_err *err);
/* Item i as it is now: returns 1 and sets *item (borrowed, valid until txn_end), or 0
 * when there is none; -1 with err set if it cannot be read. */
int txn_read(item_txn *x, size_t i, const json_t **item, qr_err *err);
/* The same without parsing it: *size its DynamoDB size (0 when absent). */
int txn_read_size(item_txn *x, size_t i, size_t *size, qr_err *err);
/* Evaluates condition c (NULL: none) against item i. On failure records
 * ConditionalCheckFailedException, with a copy of the item attached to err->item when
 * on_failure is "ALL_OLD". */
int txn_check(item_txn *x, size_t i, const expr_cond *c, const char *on_failure, qr_err *err);
/* Puts item (already checked: key, size, index keys) as item i; size is its item_size. */
int txn_put(item_txn *x, size_t i, const json_t *item, size_t size, qr_err *err);
/* The same for an item already in the stored form (item_encode_open's), as a decoder
 * reading the request text makes it; a table that keeps more than its items (indexes,
 * a stream, recovery history) parses it for them. */
int txn_put_stored(item_txn *x, size_t i, const buf *stored, qr_err *err);
/* Deletes item i (nothing is written if there is none). */
int txn_delete(item_txn *x, size_t i, qr_err *err);
/* Writes what the transaction put and deleted, atomically. */
int txn_commit(item_txn *x, qr_err *err);
/* Lets go of the items (after the commit of this thread's staged writes, for a staged
 * TXN_ITEM) and frees x; an uncommitted transaction writes nothing. x may be NULL. */
void txn_end(item_txn *x);

/* ---- reads (cursor.c) ---- */
/* A consistent view of the whole database at one moment (TransactGetItems, backups).
 * A point read from a view is a transactional read, charged twice its units. */
typedef struct read_view read_view;
const read_view *read_view_open(qr_db *db);
void read_view_close(qr_db *db, const read_view *v);

/* A point read of the item of t at key (key_item's form), from v (NULL: now). Returns 1
 * and fills *out, 0 if there is no item, -1 on error. stored_item_free releases it. */
typedef struct stored_item {
    char *raw; /* the stored form (owned) */
    size_t raw_len;
    const char *json; /* its JSON text, inside raw */
    size_t len;       /* bytes of json */
    size_t size;      /* the item's DynamoDB size */
} stored_item;
int item_get(qr_db *db, const table *t, const read_view *v, const buf *key, int consistent,
             stored_item *out, qr_err *err);
/* As item_get, as the engine's own read for a front end's bookkeeping (a CQL write
 * looking for the deletions that cover its row): it costs no capacity and is reported
 * to no hook. */
int item_get_system(qr_db *db, const table *t, const buf *key, stored_item *out, qr_err *err);
/* The same, parsed: *item a new reference. */
int item_get_parsed(qr_db *db, const table *t, const read_view *v, const buf *key, int consistent,
                    json_t **item, qr_err *err);
void stored_item_free(stored_item *s);

/* A range cursor over t's items, or over the entries of its index ix, with keys in
 * [lower, upper) (the bounds are copied), read forward or backward, from v (NULL: now). */
typedef struct range_cursor range_cursor;
range_cursor *cursor_open(qr_db *db, const table *t, const qr_index *ix, const buf *lower,
                          const buf *upper, int forward, int consistent, const read_view *v);
/* Marks c's reads as the engine's own work (system, to the hook), which costs no one
 * capacity: an index's backfill, a front end's upkeep of its schema. */
void cursor_set_system(range_cursor *c);
/* Steps to the next item: returns 1 with *json, *len and *size set (borrowed, valid until
 * the next step or cursor_close), 0 at the end of the range, -1 with err set on a storage
 * error. */
int cursor_next(range_cursor *c, const char **json, size_t *len, size_t *size, qr_err *err);
/* The stored key (key_item's form) of the item cursor_next last returned: borrowed, valid
 * as that item's JSON is. */
const char *cursor_key(const range_cursor *c, size_t *len);
/* What the item cursor_next last returned counts toward a Query or Scan page
 * (item_page_size, as it was stored). */
size_t cursor_page_size(const range_cursor *c);
void cursor_close(range_cursor *c);

/* ---- item collections (tables with local secondary indexes) ---- */
#define QR_COLLECTION_LIMIT (10ULL << 30)
/* An ItemCollectionMetrics object for the collection holding item. */
json_t *collection_metrics(qr_db *db, const table *t, const json_t *item);

/* ---- capacity ---- */
/* What the meter of t (index NULL) or of its global index has counted; -1 when it has
 * none (capacity off, or no such index). */
int table_capacity(const table *t, const char *index, qr_db *db, meter_totals *out);
/* 1 when db's capacity clock is manual (it moves only by qr_clock_advance). */
int engine_clock_manual(const qr_db *db);

/* ---- hot keys: contributor insights (hotkeys.c) ----
 * While a table's or a global index's insights are on, every access of its items that
 * engine_report sees (requests', not the engine's own) is counted by partition key and
 * by partition and sort key, accessed (HOTKEYS_ACCESSED mode: every access, throttled or
 * not) and throttled (both modes), in sliding windows of top-k summaries
 * (capacity/topk.h: each estimate over-estimates by at most N/k, N the window's total).
 * Off, the cost is one branch per access. */
enum { HOTKEYS_OFF, HOTKEYS_ACCESSED, HOTKEYS_THROTTLED };
typedef enum hotkeys_rule { HOTKEYS_PKC, HOTKEYS_SKC, HOTKEYS_PKT, HOTKEYS_SKT } hotkeys_rule;
/* Starts, changes or stops (HOTKEYS_OFF) the counting of t (index NULL) or of its
 * global index. A change of mode starts the counts again. The setting itself is the
 * caller's to keep: at qr_open, settings of kind META_SETTING_INSIGHTS holding
 * {"Enabled": true, "Mode": …} start counting again. */
int hotkeys_follow(qr_db *db, const table *t, const char *index, int mode, qr_err *err);
/* The time the counts are kept in, in seconds since the epoch: the wall clock, or with
 * the manual capacity clock, an hour of the wall clock at qr_open plus qr_clock_advance's
 * seconds. */
double hotkeys_now(qr_db *db);
/* The heaviest keys of one rule over [from, to] (rounded out to whole buckets), in
 * periods of period seconds (whole buckets): *out a new object, or NULL when the rule is not kept,
 *   {"Total": N, "Unique": keys seen, "From": the range's start, rounded down,
 *    "Width": bucket seconds, "Period": seconds,
 *    "Contributors": [{"Key": [AttributeValue…], "Value": estimate, "Error": bound,
 *                      "ReadUnits": …, "WriteUnits": …, "Points": [estimate per period]}],
 *    "Periods": [{"Start": t, "Sum": accesses, "Samples": …, "Keys": …, "Max": …}]}
 * heaviest first, at most max contributors. Key holds the partition key's attributes
 * and, for the sort-key rules, the sort key's, in key schema order. */
int hotkeys_report(qr_db *db, const table *t, const char *index, hotkeys_rule rule, double from,
                   double to, double period, size_t max, json_t **out, qr_err *err);
/* The item collections (partitions) of t (index NULL) or of one of its indexes holding
 * at least min_bytes (DynamoDB sizes) or at least min_items items (a threshold of 0 is
 * not checked), read from the store now: *out a new array of {"Key": [AttributeValue…],
 * "SizeBytes": n, "ItemCount": n}, largest first, at most max. Reads the whole range. */
int hotkeys_large_collections(qr_db *db, const table *t, const char *index, uint64_t min_bytes,
                              uint64_t min_items, size_t max, json_t **out, qr_err *err);

/* ---- statistics ---- */
/* Fills ItemCount and TableSizeBytes (counting them the first time). */
void table_stats_fill(qr_db *db, table *t, json_t *desc);
/* Fills each index's ItemCount and IndexSizeBytes in desc (counting each the first
 * time), and, for tables with global indexes, the propagation lag: pending updates and
 * the age of the oldest ("QuarryIndexPropagation"; DynamoDB has no such field). */
void index_stats_fill(qr_db *db, table *t, json_t *desc);

#endif
