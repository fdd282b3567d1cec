/* engine.h — the database handle, the table catalog, item keys and item locks.
 *
 * A qr_db owns the store and an in-memory catalog of tables loaded from it. Each table
 * has a numeric id; all its items live under one key range:
 *
 *     't' | table id (4 bytes BE) | index id (2 bytes BE, 0 = the table itself)
 *         | hash of the encoded partition key (8 bytes BE) | partition key | sort key
 *
 * so an item collection is contiguous and sorted by sort key, and partitions are
 * ordered by hash as DynamoDB's Scan order is (which also makes parallel-scan segments
 * hash ranges). Everything else lives under a "\0" + letter prefix, each owned by one
 * module: "\0B" on-demand backups (ops/backup_ondemand.c), "\0C" + table name catalog
 * records (here), "\0D" stream descriptors and "\0R" stream records (stream.c), "\0L"
 * the global-index propagation log (propagate.c), "\0P" point-in-time recovery's history
 * (pitr.c), "\0S" per-table settings such as resource policies (ops/settings.c). Writers of one
 * item serialise on a striped lock so read-modify-write operations (conditions, updates) are atomic
 * with respect to each other. Operations (src/ops) use this; nothing here parses requests. */
#ifndef QR_ENGINE_H
#define QR_ENGINE_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "engine/index.h"
#include "engine/pitr.h"
#include "engine/stream.h"
#include "quarry.h"
#include "storage/store.h"
#include "util/buf.h"
#include "util/err.h"

#define QR_LOCK_STRIPES 1024
#define QR_KEY_PREFIX_LEN 15 /* 't' + table id + index id + hash */

typedef struct key_attr {
    char *name; /* NULL if absent (a table without a sort key) */
    char type;  /* 'S', 'N' or 'B' */
} key_attr;

/* The ItemCount and size in bytes of a table (id 0) or of one of its indexes. count is
 * -1 while unknown (after opening) until a count of a snapshot fixes it; while that
 * count runs, adjustments collect in acc_* so that writes landing after the snapshot
 * are added to its result. since is the stats epoch of that snapshot: a base write
 * staged before it (under its item's lock, so committed before the snapshot) is in the
 * count already, and its adjustment, even if it comes later, is ignored. */
typedef struct range_stats {
    uint16_t id;
    int counting;
    uint64_t since;
    int64_t count, bytes;
    int64_t acc_count, acc_bytes;
} range_stats;

typedef struct table {
    struct qr_db *db; /* the database it belongs to */
    char *name;
    uint32_t id;
    key_attr pk, sk;
    json_t *desc;       /* TableDescription as DescribeTable shows it (owned) */
    int refs;           /* atomic: taken under the catalog lock, let go without it */
    int dropped;        /* set once DeleteTable removed it from the catalog */
    range_stats *stats; /* the table's (id 0) and its indexes'; guarded by stats_lock */
    size_t nstats;
    pthread_mutex_t stats_lock;
    pthread_mutex_t count_lock; /* one count of a snapshot at a time */
    qr_index *indexes;          /* secondary indexes; changed only under the schema write lock */
    size_t nindexes;
    json_t *index_ids; /* index name -> id in keys (owned object) */
} table;

struct qr_db {
    uint64_t instance; /* unique to this opening, within the process */
    store *st;
    qr_options opts;
    pthread_mutex_t catalog_lock;
    table **tables; /* sorted by name */
    size_t ntables, cap;
    uint32_t next_table_id;
    pthread_mutex_t stripes[QR_LOCK_STRIPES];
    uint64_t stats_epoch;     /* bumped, with every stripe held, by each count of base
                               * items or local entries (atomic) */
    pthread_mutex_t txn_lock; /* guards txn_keys */
    buf *txn_keys;            /* keys of items that transactions hold right now */
    size_t ntxn_keys, txn_cap;
    /* Every request that uses a table holds this for reading (catalog_get to
     * catalog_release, or to the commit of its staged write); changing a table's indexes
     * takes it for writing, so no write is ever in flight with an outdated index list.
     * It prefers readers (glibc's default), which the staged writes rely on: a thread
     * holding it for a staged write takes it again for its next request, and must get
     * it although a writer waits (a writer-preferring lock would deadlock there). */
    pthread_rwlock_t schema_lock;
    /* The global-index propagation log and its worker (propagate.c). */
    uint64_t log_seq;    /* next log record number; guarded by prop_lock */
    uint64_t log_cursor; /* one past the highest record the worker applied */
    uint64_t log_rescan; /* a record committed behind the cursor (UINT64_MAX: none) */
    uint64_t last_full_scan_us;
    /* Records numbered but perhaps not yet committed (guarded by prop_lock): a scan starts
     * at the lowest of them, or at the cursor, so it never wades through the tombstones
     * of applied records; a periodic full scan catches any write that outlived its entry.
     * A note stays until its record is applied, so the array must outlast the worker's
     * lag, not just the writers in flight: when it overflows, the oldest note goes, and
     * if its writer has not committed yet, that record is applied only by the next full
     * scan, possibly after a newer record for the same item (which is how a stale global
     * index entry appeared, with 256 notes, under a loaded machine). */
    struct {
        uint64_t seq, at_us;
    } inflight[4096];
    size_t ninflight;
    pthread_t worker;
    int worker_running;
    pthread_mutex_t prop_lock;
    pthread_cond_t prop_wake;
    int prop_stop, prop_kicked;
    int prop_idle; /* the worker waits with nothing gathered or held back: a kick or a commit wakes
                      it */
    int64_t log_pending; /* committed records not yet applied (atomic); may dip below
                          * 0 for a moment when the worker applies a record before its
                          * writer has counted it */
    /* Held by whoever writes global index entries (the worker, a backfill) from reading
     * the entries it replaces until its statistics are adjusted, and by a count of a
     * global index while it takes its snapshot. */
    pthread_mutex_t gsi_lock;
    uint32_t lag_us[1024]; /* propagation lag of the most recent records (ring) */
    uint64_t lag_count;    /* records ever applied; guarded by prop_lock */
    pthread_t expirer;     /* the TTL sweeper (expire.c) */
    int expirer_running;
    pthread_t backfills[64];         /* index backfill threads not yet joined (prop_lock) */
    unsigned char backfill_done[64]; /* set by a backfill thread as its last act */
    size_t nbackfills;
    /* Item collection sizes of tables with local indexes (collection.c). */
    pthread_mutex_t coll_lock;
    json_t *collections;             /* hex of partition key prefix -> bytes */
    struct stream_registry *streams; /* DynamoDB Streams (stream.c) */
};

/* Where a table's TTL setting lives in its catalog description (stripped from
 * DescribeTable): {"TimeToLiveStatus": "ENABLED", "AttributeName": …}. */
#define QR_TTL_FIELD "QuarryTimeToLive"
/* When the TTL setting last changed (epoch seconds), for the hour in which DynamoDB
 * refuses another change (ops/ttl.c); stripped from DescribeTable too. */
#define QR_TTL_CHANGED_FIELD "QuarryTimeToLiveChangedAt"
/* Point-in-time recovery settings (ops/backups.c), kept like the TTL setting. */
#define QR_PITR_FIELD "QuarryPointInTimeRecovery"

#define QR_LOG_PREFIX "\0L"
#define QR_LOG_PREFIX_LEN 2
/* Point-in-time recovery's history (pitr.c): this prefix, then the table's id (be32). */
#define QR_PITR_PREFIX "\0P"
#define QR_PITR_PREFIX_LEN 2

/* True if writes to t must maintain secondary indexes. */
int table_has_indexes(const table *t);

/* ---- catalog ---- */
/* Finds a table by name and takes a reference (and the schema read lock); NULL if
 * there is none. */
table *catalog_get(qr_db *db, const char *name);
/* The same by table id. */
table *catalog_get_by_id(qr_db *db, uint32_t id);
/* The index of t with the given name or id; NULL if none. */
qr_index *table_index(const table *t, const char *name);
qr_index *table_index_by_id(const table *t, uint16_t id);
/* Changes a table's description and index ids under the schema write lock: change()
 * edits copies of both in place (returning 0, or -1 with err set to cancel); they are
 * persisted and the index list rebuilt. The caller must not hold a table reference.
 * ResourceNotFoundException if the table does not exist. */
typedef int (*schema_change_fn)(json_t *desc, json_t *ids, void *arg, qr_err *err);
int catalog_change_schema(qr_db *db, const char *name, schema_change_fn change, void *arg,
                          qr_err *err);
/* Drops a reference taken by catalog_get or catalog_create. */
void catalog_release(qr_db *db, table *t);
/* catalog_release once this thread's staged writes are in the store (at once if it has
 * none): a write keeps its table, and with it the schema lock for reading, until it is
 * in the store, so that no change of the table's indexes or stream passes a write made
 * with the old ones (see item_write_locked). */
void catalog_release_after_writes(table *t);
/* Adds a table described by desc (a TableDescription; stolen), persisting it. Fails with
 * ResourceInUseException if the name is taken. */
int catalog_create(qr_db *db, json_t *desc, table **out, qr_err *err);
/* Removes a table and all its items. */
int catalog_delete(qr_db *db, table *t, qr_err *err);
/* A new array of the table names in order (ListTables). */
json_t *catalog_names(qr_db *db);

/* ---- keys ---- */
/* Appends the key prefix of partition pk_value of index index_id of t to out. */
int key_partition(buf *out, const table *t, uint16_t index_id, const json_t *pk_value, qr_err *err);
/* The same for a partition key of n attributes (multi-attribute GSI keys). */
int key_partition_tuple(buf *out, const table *t, uint16_t index_id, const json_t *const *values,
                        int n, qr_err *err);
/* Appends the whole key of the item (or Key map) of t's base table. The key attributes
 * must be present and of the right type (checked by key_check first). */
int key_item(buf *out, const table *t, const json_t *item, qr_err *err);
/* Appends the first key of t's index index_id (its whole range is prefix..prefix+1). */
void key_table_prefix(buf *out, const table *t, uint16_t index_id);

/* Checks a Key parameter: exactly the key attributes, with the schema's types, not
 * empty, within the size limits. */
int key_check_key(const table *t, json_t *key, qr_err *err);
/* Checks the key attributes of a whole item (PutItem): present, typed, not empty, within
 * the size limits. */
int key_check_item(const table *t, json_t *item, qr_err *err);
/* A new Key map holding just t's key attributes of item. */
json_t *key_of_item(const table *t, const json_t *item);

/* The wall clock, in seconds since the epoch: what the engine stamps its records with
 * (stream records and descriptors, point-in-time history). */
double engine_now_seconds(void);

/* ---- items ----
 * The stored form of an item is a format byte, the item's DynamoDB size (4 bytes BE),
 * then its JSON wire form, so reads can bill and page by size and copy the JSON into
 * responses without parsing it. */
#define ITEM_HEADER_LEN 5
/* Reads the item at key; returns 1 and sets *item (new reference), 0 if absent, -1 on
 * error. */
int item_read(qr_db *db, const store_snapshot *snap, const buf *key, json_t **item, qr_err *err);
/* Like item_read, but returns the stored bytes (malloc'd; caller frees) unparsed. */
int item_read_raw(qr_db *db, const store_snapshot *snap, const buf *key, char **val, size_t *len,
                  qr_err *err);
/* item_read and item_read_raw of the current item by a write about to replace it (see
 * store_get_before_write). */
int item_read_before_write(qr_db *db, const buf *key, json_t **item, qr_err *err);
int item_read_raw_before_write(qr_db *db, const buf *key, char **val, size_t *len, qr_err *err);
/* Serialises an item into out (the stored form). */
int item_encode(const json_t *item, buf *out);
/* The same for an item whose item_size the caller has already computed. */
int item_encode_sized(const json_t *item, size_t size, buf *out);
/* The same for an item already written as compact JSON text (value_dump's form) of
 * item_size size. */
int item_encode_text(const char *json, size_t len, size_t size, buf *out);
/* Parses a stored item. */
json_t *item_decode(const char *v, size_t len);
/* The JSON text and DynamoDB size of a stored item, without parsing it. Returns -1 if
 * the bytes are not a stored item. */
int item_stored(const char *v, size_t len, const char **json, size_t *json_len, size_t *size);

/* ---- write.c: the write path shared by every kind of write ---- */
/* Adds to batch b everything that writing new_item (or deleting, when NULL) at key
 * entails, given the current item old_item (NULL if none): the base item and any index
 * work. Nothing is written until the caller's store_write; the caller holds the item's
 * lock from before reading old_item until after the write. */
int item_stage(qr_db *db, table *t, store_batch *b, const buf *key, const json_t *old_item,
               const json_t *new_item, qr_err *err);
/* The same, new_item's item_size (when new_item is not NULL) given by the caller, and
 * replacing saying whether an item is there now (old_item may be NULL although one is,
 * when the caller did not need it parsed). */
int item_stage_sized(qr_db *db, table *t, store_batch *b, const buf *key, int replacing,
                     const json_t *old_item, const json_t *new_item, size_t new_size, qr_err *err);
/* Whether t keeps nothing beside its items that a write must update: no index, no
 * stream, no recovery history. */
int table_keeps_items_only(const table *t);
/* item_stage_sized for a put of an item already encoded (item_encode_text's val), on a
 * table that keeps items only; -1 (nothing staged) on any other table. */
int item_stage_encoded(qr_db *db, const table *t, store_batch *b, const buf *key, int replacing,
                       const buf *val);
/* After a successful store_write of staged writes: adjusts the table's statistics
 * (with table_stats_adjust, which also applies the batch's index notes). */
void item_staged_done(table *t, const json_t *old_item, const json_t *new_item);
/* Writes b, one item's staged records, for a caller holding the item's lock (item_lock),
 * with store_write_staged; once the write is in the store (at once, or at the commit of
 * the thread's staged writes), the table's statistics move by items and bytes (with the
 * index figures b's staging noted, as item_staged_done) and the lock is let go. *lock is
 * set to NULL: it is no longer the caller's, whether or not the write succeeded. */
int item_write_locked(qr_db *db, table *t, store_batch *b, pthread_mutex_t **lock, int64_t items,
                      int64_t bytes, qr_err *err);
/* item_stage + a write + item_staged_done for one item; with lock (the item's, held),
 * the write is item_write_locked's. */
int item_write(qr_db *db, table *t, const buf *key, const json_t *old_item, const json_t *new_item,
               pthread_mutex_t **lock, qr_err *err);

/* ---- locks ---- */
/* The stripe lock that guards the item at key. */
pthread_mutex_t *item_lock_for(qr_db *db, const buf *key);
/* Locks the item at key for a single-item write. If a transaction holds the item, fails
 * at once with TransactionConflictException, as DynamoDB does, instead of waiting. */
int item_lock(qr_db *db, const buf *key, pthread_mutex_t **out, qr_err *err);
/* Locks the stripes of several items, each once and in ascending order, so that writers
 * of several items (batches, transactions, backfill) can never deadlock each other;
 * keys_unlock releases them. */
void keys_lock(qr_db *db, const buf *keys, size_t n);
void keys_unlock(qr_db *db, const buf *keys, size_t n);
/* For transactions: registers the keys as held by a transaction (so single-item writes
 * to them conflict), then keys_lock. txn_unlock_keys undoes both. */
void txn_lock_keys(qr_db *db, const buf *keys, size_t n);
void txn_unlock_keys(qr_db *db, const buf *keys, size_t n);

/* ---- item collections (tables with local secondary indexes) ---- */
#define QR_COLLECTION_LIMIT (10ULL << 30)
/* Adds delta bytes to the size of the item collection pk_value of t. A growth that
 * would pass the limit fails with ItemCollectionSizeLimitExceededException. */
int collection_adjust(qr_db *db, const table *t, const json_t *pk_value, int64_t delta,
                      qr_err *err);
/* The collection's size in bytes. */
uint64_t collection_size(qr_db *db, const table *t, const json_t *pk_value);
/* Table t's local index count. */
size_t table_lsi_count(const table *t);
/* An ItemCollectionMetrics object for the collection holding item. */
json_t *collection_metrics(qr_db *db, const table *t, const json_t *item);
/* Forgets every cached collection size (after DeleteTable). */
void collection_forget_all(qr_db *db);

/* ---- TTL expiry (expire.c) ---- */
int expire_start(qr_db *db);
void expire_stop(qr_db *db);
/* One sweep over every table with TTL enabled; returns the items deleted. */
size_t expire_sweep(qr_db *db);

/* ---- statistics ----
 * A table's and each index's ItemCount and size are kept in memory, counted once from a
 * snapshot when first needed and then adjusted by every write that changes them, after
 * that write has committed:
 * - base items and local index entries: index_stage notes each local index's change on
 *   the writing thread (stats_stage_*), and table_stats_adjust, which every writer calls
 *   once its batch is written, applies them. A new batch (item_stage into an empty one)
 *   discards notes left by a batch that failed.
 * - global index entries: the propagation worker and backfills read the entries they
 *   replace, under gsi_lock, and adjust after their batch is written. */
/* Adjusts a table's counts after a write, and applies the index changes (and the count
 * of propagation log records) staged on this thread since its batch began. */
void table_stats_adjust(table *t, int64_t items, int64_t bytes);
/* table_stats_adjust once this thread's staged writes are committed (at once if it has
 * none), and only if the commit succeeded: the propagation worker must not hear of a
 * log record before it is in the store. */
void table_stats_adjust_after_commit(table *t, int64_t items, int64_t bytes);
/* Called by item_stage before staging into b (item lock held): starts a new set of
 * notes, at the current stats epoch, if b is empty. */
void stats_stage_begin(qr_db *db, store_batch *b);
/* Notes the change one staged write makes to local index id of t. Fails only if one
 * batch changes more index figures than any DynamoDB request can. */
int stats_stage_index(table *t, uint16_t id, int64_t items, int64_t bytes, qr_err *err);
/* Notes one staged propagation log record, numbered seq. */
void stats_stage_logged(qr_db *db, uint64_t seq);
/* Adjusts the counts of global index id of t (with gsi_lock held). */
void index_stats_adjust(table *t, uint16_t id, int64_t items, int64_t bytes);
/* An index created on a live table starts empty, its counts known (0); a deleted
 * index's counts are forgotten. catalog_change_schema calls both. */
void index_stats_created(table *t, uint16_t id);
void index_stats_forget(table *t, uint16_t id);
/* The counts of t's id (0: the table) as DescribeTable would give them; returns 0 if
 * they are not known yet. */
int stats_peek(table *t, uint16_t id, int64_t *items, int64_t *bytes);
/* Fills ItemCount and TableSizeBytes (counting them the first time). */
void table_stats_fill(qr_db *db, table *t, json_t *desc);
/* Fills each index's ItemCount and IndexSizeBytes in desc (counting each the first
 * time), and, for tables with global indexes, the propagation lag: pending updates and
 * the age of the oldest ("QuarryIndexPropagation"; DynamoDB has no such field). */
void index_stats_fill(qr_db *db, table *t, json_t *desc);

#endif
