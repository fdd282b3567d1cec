/* engine_int.h — the engine's inside: the database handle, the in-memory catalog, locks,
 * statistics and the write path's staging. Only src/engine includes it; the layers above
 * use engine.h. */
#ifndef QR_ENGINE_INT_H
#define QR_ENGINE_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "capacity/meter.h"
#include "engine/engine.h"
#include "storage/store.h"
#include "util/buf.h"
#include "util/err.h"

#define QR_LOCK_STRIPES 1024
#define QR_KEY_PREFIX_LEN 15 /* 't' + table id + index id + hash */

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

/* A table has a numeric id; all its items live under one key range:
 *
 *     't' | table id (4 bytes BE) | index id (2 bytes BE, 0 = the table itself)
 *         | hash of the encoded partition key (8 bytes BE) | partition key | sort key
 *
 * so an item collection is contiguous and sorted by sort key, and partitions are ordered by
 * hash as DynamoDB's Scan order is (which also makes parallel-scan segments hash ranges). */
typedef struct table {
    struct qr_db *db; /* the database it belongs to */
    char *name;
    uint32_t id;
    key_attr pk, sk;
    int token_order;    /* partitions placed by token (QR_PARTITION_ORDER_FIELD) */
    json_t *desc;       /* TableDescription as DescribeTable shows it (owned) */
    const char *owner;  /* table_owner's answer, fixed when the table is made */
    int refs;           /* atomic: taken under the catalog lock, let go without it */
    int dropped;        /* set once DeleteTable removed it from the catalog */
    range_stats *stats; /* the table's (id 0) and its indexes'; guarded by stats_lock */
    size_t nstats;
    pthread_mutex_t stats_lock;
    pthread_mutex_t count_lock; /* one count of a snapshot at a time */
    qr_index *indexes;          /* secondary indexes; changed only under the schema write lock */
    size_t nindexes;
    json_t *index_ids;           /* index name -> id in keys (owned object) */
    struct table_meters *meters; /* capacity meters (capacity.c); NULL when capacity is off */
} table;

/* A qr_db owns the store and an in-memory catalog of tables loaded from it. Everything but
 * items and index entries lives under a "\0" + letter prefix, each owned by one module:
 * "\0C" + table name catalog records (engine.c), "\0D" stream descriptors and "\0R" stream
 * records (stream.c), "\0L" the global-index propagation log (propagate.c), "\0P"
 * point-in-time recovery's history (pitr.c), and the metadata records of meta.c. */
struct qr_db {
    /* Orders point-in-time history records of one millisecond (atomic); starts at the
     * clock in microseconds, so a later opening continues above an earlier one's. */
    uint64_t pitr_seq;
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
     * scan, possibly after a newer record for the same item, leaving a stale global index
     * entry: so the array holds far more notes than a loaded machine keeps in flight. */
    struct {
        uint64_t seq, at_us;
    } inflight[4096];
    size_t ninflight;
    pthread_t worker;
    int worker_running; /* started on first need; guarded by prop_lock */
    int prop_ready;     /* propagate_start ran: the locks exist (open and close only) */
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
    uint32_t lag_us[1024];      /* propagation lag of the most recent records (ring) */
    uint64_t lag_count;         /* records ever applied; guarded by prop_lock */
    pthread_t expirer;          /* the TTL sweeper (expire.c) */
    int expirer_running;        /* guarded by prop_lock */
    int expire_ready;           /* expire_start ran: expire_wake exists (open and close only) */
    pthread_cond_t expire_wake; /* expire_stop's signal to the sweeper (prop_lock) */
    pthread_t backfills[64];    /* index backfill threads not yet joined (prop_lock) */
    unsigned char backfill_done[64]; /* set by a backfill thread as its last act */
    size_t nbackfills;
    /* Item collection sizes of tables with local indexes (collection.c). */
    pthread_mutex_t coll_lock;
    json_t *collections;             /* hex of partition key prefix -> bytes */
    struct stream_registry *streams; /* DynamoDB Streams (stream.c) */
    engine_hook_fn hook;             /* engine_set_hook's, or NULL */
    void *hook_arg;
    struct meta_state *meta;   /* backups, settings and request tokens (meta.c) */
    double clock_base;         /* the capacity clock's start (QR_CLOCK_MANUAL) */
    int64_t clock_advanced_us; /* qr_clock_advance's total (atomic) */
    void *api_state;           /* the api layer's (engine_api_state_set; atomic), or NULL */
    void (*api_state_free)(void *);
    void *model_state; /* the model watch's (engine_model_state_set; atomic), or NULL */
    void (*model_state_free)(void *);
    void *cql_state; /* the CQL front end's (engine_cql_state_set; atomic), or NULL */
    void (*cql_state_free)(void *);
    struct hotkeys *hotkeys; /* contributor insights' counts (hotkeys.c) */
    int hotkeys_on;          /* how many tables and indexes they count (atomic) */
};

/* ---- hot keys (hotkeys.c) ---- */
/* Sets up db->hotkeys, following the insights settings stored (qr_open, after the
 * catalog is loaded); -1 if out of memory. hotkeys_close frees it. */
int hotkeys_open(qr_db *db);
void hotkeys_close(qr_db *db);
/* Drops the counts of a deleted table (index_id -1: with its indexes) or of one deleted
 * global index: a table or index made later starts with none. */
void hotkeys_forget(qr_db *db, uint32_t table_id, int index_id);
/* Counts one access (engine_report, when db->hotkeys_on). */
void hotkeys_note(qr_db *db, const engine_access *a);
/* Whether anything listens to engine_report: the hook, or hot keys being counted. */
static inline int engine_watched(qr_db *db)
{
    return db->hook != NULL || __atomic_load_n(&db->hotkeys_on, __ATOMIC_RELAXED);
}

/* ---- capacity (capacity.c) ---- */
/* The capacity clock, in seconds: monotonic, or manual (qr_options), plus what
 * qr_clock_advance added. */
double capacity_now(qr_db *db);
/* Makes or reconfigures t's meters from its description (a new table, UpdateTable). */
void capacity_follow(qr_db *db, table *t);
void capacity_forget(table *t);
/* Admission before an access: -1 with DynamoDB's throttling error (and ThrottlingReasons
 * in err->item) when a bucket the access draws on is spent and capacity is enforced. A
 * read of index ix (NULL: the table) at key (a range's lower bound; NULL for a Scan) in
 * the partition of hash, or of several partitions (in_partition 0); a write of the item
 * at key, from old_item to new_item (either NULL), with the global index entries it
 * changes. Each refusal is reported to the hook as a throttled access. */
int capacity_admit_read(qr_db *db, const table *t, const qr_index *ix, int in_partition,
                        uint64_t hash, const buf *key, qr_err *err);
int capacity_admit_write(qr_db *db, const table *t, const buf *key, const json_t *old_item,
                         const json_t *new_item, qr_err *err);
/* Charges units consumed to the meter of ix (NULL: the table) and, when key (a stored
 * key) is given, to the partition holding it; capacity_charge_partition charges the
 * partition only. */
void capacity_charge(qr_db *db, const table *t, const qr_index *ix, int write, const char *key,
                     size_t key_len, double units);
void capacity_charge_partition(qr_db *db, const table *t, const qr_index *ix, int write,
                               const char *key, size_t key_len, double units);
/* 1 when the read's partition key (of hash, in ix or the table) is split by sort key
 * among partitions, so that a range read charges each its part (cursor.c). */
int capacity_sort_key_split(const table *t, const qr_index *ix, uint64_t hash);
/* capacity_charge for an index entry known by its partition hash alone (a backfill's). */
void capacity_charge_hash(qr_db *db, const table *t, const qr_index *ix, int write, uint64_t hash,
                          double units);
/* 1 when global index ix has no write capacity left for its backfill, which then waits
 * (DynamoDB's OnlineIndexThrottleEvents, counted here) instead of throttling the table. */
int capacity_backfill_spent(qr_db *db, const table *t, const qr_index *ix);

/* ---- metadata (meta.c) ---- */
typedef struct meta_state meta_state;
/* Sets up db->meta (qr_open); -1 if out of memory. meta_close frees it (db->meta may
 * be NULL). */
int meta_open(qr_db *db);
void meta_close(qr_db *db);

#define QR_LOG_PREFIX "\0L"
#define QR_LOG_PREFIX_LEN 2
/* The records the propagation log holds, counted from the store (for data opened
 * read-only, whose worker does not run and so keeps no count). */
uint64_t propagate_log_records(qr_db *db);
/* Point-in-time recovery's history (pitr.c): this prefix, then the table's id (be32). */
#define QR_PITR_PREFIX "\0P"
#define QR_PITR_PREFIX_LEN 2

/* ---- catalog ---- */
/* The index of t with the given id; NULL if none. */
const qr_index *table_index_by_id(const table *t, uint16_t id);
/* Appends the key prefix of partition pk_value of index index_id of t to out. */
int key_partition(buf *out, const table *t, uint16_t index_id, const json_t *pk_value, qr_err *err);
/* Appends the 8 bytes that place partition pk_value of t, a table in token order, by its
 * token (what key_partition puts after the prefix for the base table). */
int key_append_token(buf *out, const table *t, const json_t *pk_value, qr_err *err);

/* catalog_get by table id. */
table *catalog_get_by_id(qr_db *db, uint32_t id);
/* The index of t with the given name or id, for the engine's own changes; NULL if none. */
qr_index *table_index_mut(const table *t, const char *name);

/* ---- items ---- */
/* Reads the item at key; returns 1 and sets *item (new reference), 0 if absent, -1 on
 * error. */
int item_read(qr_db *db, const store_snapshot *snap, const buf *key, json_t **item, qr_err *err);
/* Like item_read, but returns the stored bytes (malloc'd; caller frees) unparsed. */
int item_read_raw(qr_db *db, const store_snapshot *snap, const buf *key, char **val, size_t *len,
                  qr_err *err);
/* item_read_raw of the current item by a write about to replace it (see
 * store_get_before_write). */
int item_read_raw_before_write(qr_db *db, const buf *key, char **val, size_t *len, qr_err *err);

/* ---- the write path's staging (txn.c calls these) ---- */
/* Adds to b the index work of one base write (old → new), its stream record and its
 * recovery history. new_stored is new_item's stored form, or NULL for a delete. */
int index_stage(qr_db *db, table *t, store_batch *b, const json_t *old_item, const json_t *new_item,
                const buf *new_stored, qr_err *err);
int stream_stage(qr_db *db, const table *t, store_batch *b, const json_t *old_item,
                 const json_t *new_item, qr_err *err);
int pitr_stage(qr_db *db, const table *t, store_batch *b, const json_t *old_item,
               const json_t *new_item, qr_err *err);
/* Adds to b the deletion of table id's history (the table is being deleted). */
void pitr_stage_drop(store_batch *b, uint32_t id);
/* Reports one access to db's hook, if it has one. */
void engine_report(qr_db *db, const engine_access *a);
/* The partition hash a stored key of a table or index carries. */
uint64_t key_partition_hash(const char *key, size_t len);

/* ---- the engine's own work through the interface ----
 * The backfill of a global index (propagate.c) finds the base items with a range cursor
 * and writes their entries with an item transaction, as any writer does, so that the
 * hook hears of it as the engine's own work. */
/* In a TXN_BATCH transaction, stages the entry that item i, as it is now, has in global
 * index ix of its table: written to the index itself, not through the propagation log.
 * An item that is gone or lacks a key attribute of ix stages nothing. A transaction that
 * fills writes no items (txn_put and txn_delete fail in it). From its first fill to its
 * commit it holds gsi_lock, so that the worker cannot change an entry between the read
 * of what it replaces and the adjustment of the index's counts; the commit (not synced)
 * reports each entry to the hook with the index's name. */
int txn_fill(item_txn *x, size_t i, const qr_index *ix, qr_err *err);

/* ---- the propagation worker (propagate.c) ---- */
/* Counts the records a previous run left in the log, then starts the worker. */
int propagate_start(struct qr_db *db);
void propagate_stop(struct qr_db *db);
/* Numbers a new log record and notes it as in flight until the worker applies it. */
uint64_t propagate_next_seq(struct qr_db *db);
/* After a write committed log records numbered from lowest on: if the worker has
 * already moved past lowest (the record's in-flight note was lost), its next pass goes
 * back for it, before any newer record for the same item can be applied. */
void propagate_committed(struct qr_db *db, uint64_t lowest);
/* Wakes the worker after a write that logged index work. */
void propagate_kick(struct qr_db *db);

/* ---- locks ---- */
/* Writers of one item serialise on a striped lock so read-modify-write operations
 * (conditions, updates) are atomic with respect to each other.
 *
 * The stripe lock that guards the item at key. */
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
/* Adds delta bytes to the size of the item collection pk_value of t. A growth that
 * would pass the limit fails with ItemCollectionSizeLimitExceededException. */
int collection_adjust(qr_db *db, const table *t, const json_t *pk_value, int64_t delta,
                      qr_err *err);
/* The collection's size in bytes. */
uint64_t collection_size(qr_db *db, const table *t, const json_t *pk_value);
/* Forgets every cached collection size (after DeleteTable). */
void collection_forget_all(qr_db *db);

/* ---- TTL expiry (expire.c) ---- */
int expire_start(qr_db *db);
/* Makes sure the sweeper runs (once there is a table); -1 if it cannot be started. */
int expire_need(qr_db *db);
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
#endif
