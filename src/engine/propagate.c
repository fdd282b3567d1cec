/* propagate.c — applying global index work in the background, and backfilling indexes. Base
 * writes leave records in the propagation log ("\0L" + sequence number), each a timestamp
 * and a list of index puts and deletes; one worker thread applies them in sequence order. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_int.h"
#include "model/value.h"
#include "util/progress.h"

#define APPLY_BATCH 256
/* A numbered record not committed within this long is taken as abandoned (its write
 * failed); a full scan every FULL_SCAN_US catches one that commits later still. */
#define INFLIGHT_US 2000000
#define FULL_SCAN_US 10000000

static uint64_t now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static void *worker_main(void *arg);

/* Under prop_lock: starts the worker unless it runs (or the database is closing). It is
 * started by the first record numbered or committed, so a database whose writes never
 * touch a global index has no worker thread. A record is numbered (and so the worker
 * started) before it commits, and the commit takes prop_lock after that, so the worker
 * sees every record. */
static void worker_need_locked(qr_db *db)
{
    if (db->worker_running || db->prop_stop) return;
    if (pthread_create(&db->worker, NULL, worker_main, db) == 0) db->worker_running = 1;
}

uint64_t propagate_next_seq(qr_db *db)
{
    pthread_mutex_lock(&db->prop_lock);
    worker_need_locked(db);
    uint64_t seq = db->log_seq++;
    size_t cap = sizeof db->inflight / sizeof db->inflight[0];
    if (db->ninflight == cap) { /* drop the oldest note; the full scan covers it */
        memmove(db->inflight, db->inflight + 1, (cap - 1) * sizeof db->inflight[0]);
        db->ninflight--;
    }
    db->inflight[db->ninflight].seq = seq;
    db->inflight[db->ninflight++].at_us = now_us();
    pthread_mutex_unlock(&db->prop_lock);
    return seq;
}

/* Where a scan of the log must start: the lowest record still in flight, a record
 * committed behind the cursor, or the cursor. Forgets notes older than INFLIGHT_US.
 * Called with prop_lock held. */
static uint64_t scan_start_locked(qr_db *db, uint64_t now)
{
    uint64_t start = db->log_rescan < db->log_cursor ? db->log_rescan : db->log_cursor;
    size_t k = 0;
    for (size_t i = 0; i < db->ninflight; i++) {
        if (now - db->inflight[i].at_us > INFLIGHT_US) continue;
        if (db->inflight[i].seq < start) start = db->inflight[i].seq;
        db->inflight[k++] = db->inflight[i];
    }
    db->ninflight = k;
    return start;
}

static void applied_locked(qr_db *db, uint64_t seq)
{
    if (seq + 1 > db->log_cursor) db->log_cursor = seq + 1;
    for (size_t i = 0; i < db->ninflight; i++)
        if (db->inflight[i].seq == seq) {
            db->inflight[i] = db->inflight[--db->ninflight];
            break;
        }
}

/* Marks the records of a flushed batch applied. */
static void applied_all(qr_db *db, const uint64_t *seqs, size_t *n)
{
    pthread_mutex_lock(&db->prop_lock);
    for (size_t i = 0; i < *n; i++)
        applied_locked(db, seqs[i]);
    pthread_mutex_unlock(&db->prop_lock);
    *n = 0;
}

/* True if the index entry key belongs to an index that still exists. */
static int index_alive(qr_db *db, const char *key, size_t len)
{
    if (len < 7 || key[0] != 't') return 0;
    table *t = catalog_get_by_id(db, be32_read(key + 1));
    if (t == NULL) return 0;
    int alive = table_index_by_id(t, be16_read(key + 5)) != NULL;
    catalog_release(db, t);
    return alive;
}

/* A batch of the worker's being built: its writes, the state of each entry key it
 * touches as the batch leaves it (so a later record in the same batch sees it), the
 * count changes per index, and the records it deletes. */
typedef struct gsi_delta {
    uint32_t table_id;
    uint16_t index_id;
    int64_t items, bytes;
} gsi_delta;

typedef struct apply_batch {
    store_batch *b;
    json_t *touched; /* hex of entry key -> its stored size after this batch, -1 if none */
    gsi_delta *d;
    size_t nd, cap;
    int64_t records;
} apply_batch;

/* The stored size of an entry value, or -1 if it is not a stored item (count_stored
 * does not count those either). */
static int64_t entry_size(const char *v, size_t vl)
{
    const char *json;
    size_t jlen, size;
    return item_stored(v, vl, &json, &jlen, &size) == 0 ? (int64_t)size : -1;
}

static void hex(const char *k, size_t kl, buf *out)
{
    static const char digits[] = "0123456789abcdef";
    buf_reset(out);
    for (size_t i = 0; i < kl; i++) {
        buf_putc(out, (uint8_t)digits[(unsigned char)k[i] >> 4]);
        buf_putc(out, (uint8_t)digits[(unsigned char)k[i] & 15]);
    }
}

/* The size of the entry at k as the store plus the batch so far hold it (-1: none). */
static int64_t entry_now(qr_db *db, apply_batch *ab, const char *k, size_t kl, const char *name)
{
    json_t *v = json_object_get(ab->touched, name);
    if (v) return json_integer_value(v);
    char *val;
    size_t vl;
    qr_err e;
    err_init(&e);
    int64_t size = -1;
    if (store_get(db->st, NULL, k, kl, &val, &vl, &e) == 1) {
        size = entry_size(val, vl);
        free(val);
    }
    return size;
}

static void note_delta(apply_batch *ab, const char *k, int64_t before, int64_t after)
{
    int64_t items = (after >= 0) - (before >= 0),
            bytes = (after > 0 ? after : 0) - (before > 0 ? before : 0);
    if (items == 0 && bytes == 0) return;
    uint32_t tid = be32_read(k + 1);
    uint16_t iid = be16_read(k + 5);
    for (size_t i = 0; i < ab->nd; i++)
        if (ab->d[i].table_id == tid && ab->d[i].index_id == iid) {
            ab->d[i].items += items;
            ab->d[i].bytes += bytes;
            return;
        }
    if (ab->nd == ab->cap)
        ab->d = realloc(ab->d, (ab->cap = ab->cap ? ab->cap * 2 : 8) * sizeof *ab->d);
    ab->d[ab->nd++] = (gsi_delta){tid, iid, items, bytes};
}

/* A record's operations and the record's deletion are written in one batch, so a crash
 * between the base write and the index write only delays the index work; it never loses it
 * or applies it twice in a harmful way (puts and deletes are idempotent). Work for an index
 * or table dropped meanwhile is skipped.
 *
 * Adds the operations of one log record to the batch. Returns -1 if the record is
 * malformed (it is then dropped). Called with gsi_lock held. */
static int apply_record(qr_db *db, const char *v, size_t len, apply_batch *ab)
{
    size_t p = 8;
    buf name;
    buf_init(&name, 0);
    int rc = -1;
    while (p < len) {
        char op = v[p++];
        if (p + 4 > len) goto out;
        size_t kl = be32_read(v + p);
        p += 4;
        if (p + kl > len) goto out;
        const char *k = v + p;
        p += kl;
        const char *val = NULL;
        size_t vl = 0;
        if (op == 'P') {
            if (p + 4 > len) goto out;
            vl = be32_read(v + p);
            p += 4;
            if (p + vl > len) goto out;
            val = v + p;
            p += vl;
        } else if (op != 'D') {
            goto out;
        }
        if (!index_alive(db, k, kl)) continue;
        hex(k, kl, &name);
        int64_t before = entry_now(db, ab, k, kl, name.data),
                after = op == 'P' ? entry_size(val, vl) : -1;
        if (op == 'P')
            store_batch_put(ab->b, k, kl, val, vl);
        else
            store_batch_delete(ab->b, k, kl);
        json_object_set_new(ab->touched, name.data, json_integer(after));
        note_delta(ab, k, before, after);
    }
    rc = 0;
out:
    buf_free(&name);
    return rc;
}

/* Writes the batch; once it is written, adjusts the indexes' counts and the pending
 * record count. Then starts a new batch. Called with gsi_lock held. */
static void apply_flush(qr_db *db, apply_batch *ab)
{
    qr_err e;
    err_init(&e);
    if (store_batch_count(ab->b) && store_write_nosync(db->st, ab->b, &e) == 0) {
        for (size_t i = 0; i < ab->nd; i++) {
            table *t = catalog_get_by_id(db, ab->d[i].table_id);
            if (t) index_stats_adjust(t, ab->d[i].index_id, ab->d[i].items, ab->d[i].bytes);
            catalog_release(db, t);
        }
        __atomic_sub_fetch(&db->log_pending, ab->records, __ATOMIC_RELAXED);
    }
    store_batch_clear(ab->b);
    json_object_clear(ab->touched);
    ab->nd = 0;
    ab->records = 0;
}

/* A configured lag holds every record back until it is that old.
 *
 * One pass over the log. Returns the records applied; *wait_us is set to how long the
 * first record still held back by the lag must wait (0 if none). */
static size_t apply_pass(qr_db *db, uint64_t *wait_us)
{
    size_t applied = 0;
    uint64_t lag = (uint64_t)db->opts.gsi_lag_ms * 1000u, now = now_us();
    *wait_us = 0;
    buf lower;
    buf_init(&lower, 0);
    buf_append(&lower, QR_LOG_PREFIX, QR_LOG_PREFIX_LEN);
    pthread_mutex_lock(&db->prop_lock);
    if (now - db->last_full_scan_us < FULL_SCAN_US)
        buf_put_be64(&lower, scan_start_locked(db, now));
    else
        db->last_full_scan_us = now;
    db->log_rescan = UINT64_MAX; /* this pass reaches it */
    pthread_mutex_unlock(&db->prop_lock);
    store_iter *it = store_iter_new(db->st, NULL, lower.data, lower.len, "\0M", 2);
    buf_free(&lower);
    apply_batch ab = {.b = store_batch_new(), .touched = json_object()};
    /* the records of the batch being built: applied once its writes are visible */
    uint64_t done[APPLY_BATCH];
    size_t ndone = 0;
    pthread_mutex_lock(&db->gsi_lock);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t kl, vl;
        const char *k = store_iter_key(it, &kl), *v = store_iter_value(it, &vl);
        if (vl >= 8 && lag) {
            uint64_t at = be64_read(v) + lag;
            if (at > now) {
                *wait_us = at - now;
                break;
            }
        }
        if (vl >= 8) apply_record(db, v, vl, &ab);
        store_batch_delete(ab.b, k, kl);
        ab.records++;
        pthread_mutex_lock(&db->prop_lock);
        if (vl >= 8) {
            uint64_t at = be64_read(v);
            db->lag_us[db->lag_count++ % 1024] =
                now > at ? (uint32_t)(now - at > 0xffffffffu ? 0xffffffffu : now - at) : 0;
        }
        pthread_mutex_unlock(&db->prop_lock);
        if (kl == QR_LOG_PREFIX_LEN + 8) done[ndone++] = be64_read(k + QR_LOG_PREFIX_LEN);
        applied++;
        if (ab.records == APPLY_BATCH) {
            apply_flush(db, &ab);
            applied_all(db, done, &ndone);
            /* Let a backfill or a count in between batches. */
            pthread_mutex_unlock(&db->gsi_lock);
            pthread_mutex_lock(&db->gsi_lock);
        }
    }
    apply_flush(db, &ab);
    applied_all(db, done, &ndone);
    pthread_mutex_unlock(&db->gsi_lock);
    store_batch_free(ab.b);
    json_decref(ab.touched);
    free(ab.d);
    store_iter_free(it);
    return applied;
}

/* The worker's loop. While records keep coming it works in short rounds, letting a
 * millisecond's records gather between passes (a pass costs an iterator, so batching
 * them is what keeps index upkeep cheap); when the log runs dry it is idle, and a
 * writer's kick or commit wakes it. */
static void *worker_main(void *arg)
{
    qr_db *db = arg;
    int idle_retries = 0;
    pthread_mutex_lock(&db->prop_lock);
    while (!db->prop_stop) {
        db->prop_kicked = 0;
        pthread_mutex_unlock(&db->prop_lock);
        uint64_t wait_us;
        size_t applied = apply_pass(db, &wait_us);
        pthread_mutex_lock(&db->prop_lock);
        uint64_t sleep_us;
        if (applied) {
            idle_retries = 0;
            sleep_us = applied >= APPLY_BATCH ? 0 : 1000;
        } else if (wait_us) {
            sleep_us = wait_us;
        } else if (db->prop_kicked) {
            /* A record committed during the pass, after its iterator was made. */
            idle_retries = 0;
            sleep_us = 0;
        } else {
            /* A kick can arrive just before its write commits: look again shortly. */
            sleep_us = idle_retries < 3 ? 1000 : 50000;
            if (idle_retries < 3) idle_retries++;
        }
        if (sleep_us == 0) continue;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + sleep_us * 1000u;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        /* Idle: neither gathering the records of a busy spell nor holding one back for
         * the lag, so a kick or a commit wakes the worker at once. Read without the lock
         * by propagate_kick, hence the atomic stores. */
        __atomic_store_n(&db->prop_idle, applied == 0 && wait_us == 0, __ATOMIC_RELAXED);
        if (!db->prop_stop) pthread_cond_timedwait(&db->prop_wake, &db->prop_lock, &ts);
        __atomic_store_n(&db->prop_idle, 0, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&db->prop_lock);
    return NULL;
}

int propagate_start(qr_db *db)
{
    pthread_mutex_init(&db->prop_lock, NULL);
    pthread_mutex_init(&db->gsi_lock, NULL);
    pthread_cond_init(&db->prop_wake, NULL);
    /* Count the records a previous run left (once; from here on the count is kept), and
     * continue numbering after the last. */
    store_iter *it = store_iter_new(db->st, NULL, QR_LOG_PREFIX, QR_LOG_PREFIX_LEN, "\0M", 2);
    db->log_pending = 0;
    db->log_rescan = UINT64_MAX;
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it))
        db->log_pending++;
    store_iter_last(it);
    db->log_seq = 1;
    if (store_iter_valid(it)) {
        size_t kl;
        const char *k = store_iter_key(it, &kl);
        if (kl == QR_LOG_PREFIX_LEN + 8) db->log_seq = be64_read(k + QR_LOG_PREFIX_LEN) + 1;
    }
    store_iter_free(it);
    db->prop_ready = 1;
    /* Records a previous run left are applied now; otherwise the first write that logs
     * one starts the worker (worker_need_locked). */
    if (db->log_pending > 0) {
        if (pthread_create(&db->worker, NULL, worker_main, db) != 0) return -1;
        db->worker_running = 1;
    }
    return 0;
}

void propagate_stop(qr_db *db)
{
    pthread_mutex_lock(&db->prop_lock);
    db->prop_stop = 1;
    pthread_cond_broadcast(&db->prop_wake);
    pthread_mutex_unlock(&db->prop_lock);
    for (size_t i = 0; i < db->nbackfills; i++)
        pthread_join(db->backfills[i], NULL);
    db->nbackfills = 0;
    pthread_mutex_lock(&db->prop_lock);
    int running = db->worker_running; /* none starts once prop_stop is set */
    pthread_mutex_unlock(&db->prop_lock);
    if (running) pthread_join(db->worker, NULL);
    db->worker_running = 0;
    db->prop_ready = 0;
    pthread_mutex_destroy(&db->prop_lock);
    pthread_mutex_destroy(&db->gsi_lock);
    pthread_cond_destroy(&db->prop_wake);
}

void propagate_committed(qr_db *db, uint64_t lowest)
{
    pthread_mutex_lock(&db->prop_lock);
    /* Whatever the cursor says now: a pass already under way, with a view from before
     * this commit, may still carry the cursor past lowest. */
    if (lowest < db->log_rescan) db->log_rescan = lowest;
    /* The kick at staging may have found the record not yet committed and the worker
     * gone (or about to go) back to sleep: note the commit, so a pass under way looks
     * again at once, and wake an idle worker, so that a lone write's index entries
     * follow its acknowledgement by one pass, not by a poll interval. */
    db->prop_kicked = 1;
    worker_need_locked(db);
    if (__atomic_load_n(&db->prop_idle, __ATOMIC_RELAXED)) pthread_cond_signal(&db->prop_wake);
    pthread_mutex_unlock(&db->prop_lock);
}

void propagate_kick(qr_db *db)
{
    /* A busy worker comes back within a millisecond anyway; only an idle one needs
     * waking, which spares every write a futex call. */
    if (!__atomic_load_n(&db->prop_idle, __ATOMIC_RELAXED)) return;
    pthread_mutex_lock(&db->prop_lock);
    db->prop_kicked = 1;
    pthread_cond_signal(&db->prop_wake);
    pthread_mutex_unlock(&db->prop_lock);
}

/* Where the oldest record may be: the lowest in flight, or the cursor; from_start looks
 * from the log's beginning instead (past the tombstones of applied records). */
static store_iter *log_from(qr_db *db, int from_start)
{
    buf lower;
    buf_init(&lower, 0);
    buf_append(&lower, QR_LOG_PREFIX, QR_LOG_PREFIX_LEN);
    if (!from_start) {
        pthread_mutex_lock(&db->prop_lock);
        buf_put_be64(&lower, scan_start_locked(db, now_us()));
        pthread_mutex_unlock(&db->prop_lock);
    }
    store_iter *it = store_iter_new(db->st, NULL, lower.data, lower.len, "\0M", 2);
    buf_free(&lower);
    store_iter_first(it);
    return it;
}

void propagate_lag(qr_db *db, uint64_t *pending, double *oldest_ms)
{
    int64_t n = __atomic_load_n(&db->log_pending, __ATOMIC_RELAXED);
    *pending = n > 0 ? (uint64_t)n : 0;
    *oldest_ms = 0;
    store_iter *it = log_from(db, 0);
    if (!store_iter_valid(it) && n > 0) { /* a record that committed late, behind the cursor */
        store_iter_free(it);
        it = log_from(db, 1);
    }
    if (store_iter_valid(it)) {
        size_t vl;
        const char *v = store_iter_value(it, &vl);
        uint64_t now = now_us(), at = vl >= 8 ? be64_read(v) : now;
        *oldest_ms = now > at ? (double)(now - at) / 1000.0 : 0;
    }
    store_iter_free(it);
}

uint64_t propagate_log_records(qr_db *db)
{
    uint64_t n = 0;
    store_iter *it = log_from(db, 1);
    for (; store_iter_valid(it); store_iter_next(it))
        n++;
    store_iter_free(it);
    return n;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void propagate_lag_percentiles(qr_db *db, double *p50, double *p99, uint64_t *count)
{
    uint32_t copy[1024];
    pthread_mutex_lock(&db->prop_lock);
    size_t n = db->lag_count < 1024 ? (size_t)db->lag_count : 1024;
    memcpy(copy, db->lag_us, n * sizeof *copy);
    *count = db->lag_count;
    pthread_mutex_unlock(&db->prop_lock);
    *p50 = *p99 = 0;
    if (n == 0) return;
    qsort(copy, n, sizeof *copy, u32_cmp);
    *p50 = copy[n / 2] / 1000.0;
    *p99 = copy[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1000.0;
}

/* True if a record is waiting at or after the cursor's margin (a cheap look that skips
 * the tombstones of applied records). */
static int recent_pending(qr_db *db)
{
    store_iter *it = log_from(db, 0);
    int any = store_iter_valid(it);
    store_iter_free(it);
    return any;
}

int propagate_drain(qr_db *db, int timeout_ms)
{
    /* The worker cannot apply what this thread staged until it is committed. */
    store_commit_staged(NULL);
    uint64_t deadline = now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int pending = recent_pending(db) || __atomic_load_n(&db->log_pending, __ATOMIC_RELAXED) > 0;
        int backfilling = 0;
        pthread_mutex_lock(&db->catalog_lock);
        for (size_t i = 0; i < db->ntables; i++)
            for (size_t j = 0; j < db->tables[i]->nindexes; j++)
                backfilling |= db->tables[i]->indexes[j].creating;
        pthread_mutex_unlock(&db->catalog_lock);
        if (pending == 0 && !backfilling) return 0;
        if (now_us() > deadline) return -1;
        propagate_kick(db);
        usleep(2000);
    }
}

int propagate_catch_up(qr_db *db, int timeout_ms)
{
    if (!db->prop_ready || db->opts.gsi_lag_ms) return 0;
    store_commit_staged(NULL);
    pthread_mutex_lock(&db->prop_lock);
    uint64_t upto = db->log_seq;
    pthread_mutex_unlock(&db->prop_lock);
    uint64_t deadline = now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        /* a record is noted from its numbering until it is applied; a note older than
         * INFLIGHT_US is an abandoned write's */
        uint64_t now = now_us();
        int waiting = 0;
        pthread_mutex_lock(&db->prop_lock);
        for (size_t i = 0; i < db->ninflight && !waiting; i++)
            waiting = db->inflight[i].seq < upto && now - db->inflight[i].at_us <= INFLIGHT_US;
        pthread_mutex_unlock(&db->prop_lock);
        if (!waiting) return 0;
        if (now > deadline) return -1;
        propagate_kick(db);
        usleep(200);
    }
}

int qr_wait_indexes(qr_db *db, int timeout_ms)
{
    return propagate_drain(db, timeout_ms) == 0 ? QR_OK : QR_ERR;
}

/* ---- backfill ---- */

typedef struct backfill_job {
    qr_db *db;
    char *table;
    char *index;
    pthread_t self;
} backfill_job;

static int mark_active(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    (void)err;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
    {
        if (strcmp(json_string_value(json_object_get(g, "IndexName")), arg) == 0) {
            json_object_set_new(g, "IndexStatus", json_string("ACTIVE"));
            json_object_del(g, "Backfilling");
        }
    }
    return 0;
}

#define BACKFILL_CHUNK 64

/* Fills the index from the base items, a chunk at a time, through the engine's
 * interface: a range cursor finds the chunk's items and an item transaction of the
 * engine's own (TXN_SYSTEM) locks them, reads each as it is now and writes its entry
 * (txn_fill), so the hook hears of every entry the backfill writes.
 *
 * A live write never leaves an entry stale or missing. Every base write since the index
 * joined the table's index list logs its work for the index (the list changes under the
 * schema write lock, so no write in flight has missed it), and the worker applies a
 * record only once it is committed, in order. What the cursor read of a chunk may be
 * outdated by the time the chunk is written, so it only names the items: the entries are
 * made from the items read again under their locks. A write to an item of the chunk then
 * commits either before the transaction locks the item, which reads what it wrote (that
 * write's record, and any older one, applied before or after, ends with the same entry),
 * or after the transaction commits, and its record, applied later still, replaces the
 * entry. An item put after the cursor passed, or gone under the lock, is the log's alone.
 *
 * A chunk waits while the index has no write capacity left: the backfill spends the
 * index's capacity, as DynamoDB's does, and is throttled itself, not the table.
 *
 * Returns 0 and moves *cursor past the chunk, setting *done at the table's end; -1 if
 * the chunk could not be read or written, or must wait for capacity (it is tried
 * again). */
static int backfill_chunk(qr_db *db, table *t, const qr_index *ix, buf *cursor, int *done,
                          uint64_t *filled)
{
    if (capacity_backfill_spent(db, t, ix)) return -1;
    buf hi, keys[BACKFILL_CHUNK];
    table *tables[BACKFILL_CHUNK];
    size_t n = 0;
    qr_err e;
    err_init(&e);
    buf_init(&hi, 0);
    key_table_prefix(&hi, t, 1);
    range_cursor *c = cursor_open(db, t, NULL, cursor, &hi, 1, 1, NULL);
    buf_free(&hi);
    if (c == NULL) return -1;
    cursor_set_system(c);
    int step = 1;
    while (n < BACKFILL_CHUNK) {
        const char *json;
        size_t len, size, kl;
        if ((step = cursor_next(c, &json, &len, &size, &e)) != 1) break;
        const char *k = cursor_key(c, &kl);
        buf_init(&keys[n], 0);
        buf_append(&keys[n], k, kl);
        tables[n++] = t;
    }
    cursor_close(c);
    item_txn *x = NULL;
    int rc = step < 0 ? -1 : 0;
    if (rc == 0 && n) rc = txn_begin(db, TXN_BATCH | TXN_SYSTEM, n, tables, keys, &x, &e);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = txn_fill(x, i, ix, &e);
    if (rc == 0 && x) rc = txn_commit(x, &e);
    txn_end(x);
    err_clear(&e);
    if (rc == 0) {
        *done = n < BACKFILL_CHUNK;
        *filled += n;
        if (n) {
            buf_reset(cursor);
            buf_append(cursor, keys[n - 1].data, keys[n - 1].len);
            buf_putc(cursor, 0);
        }
    }
    for (size_t i = 0; i < n; i++)
        buf_free(&keys[i]);
    return rc;
}

static void *backfill_main(void *arg)
{
    backfill_job *job = arg;
    qr_db *db = job->db;
    buf cursor;
    buf_init(&cursor, 0);
    int done = 0, started = 0;
    uint64_t filled = 0;
    progress meter;
    while (!done) {
        pthread_mutex_lock(&db->prop_lock);
        int stop = db->prop_stop;
        pthread_mutex_unlock(&db->prop_lock);
        if (stop) break;
        table *t = catalog_get(db, job->table);
        qr_index *ix = t ? table_index_mut(t, job->index) : NULL;
        if (ix == NULL || !ix->creating) {
            catalog_release(db, t);
            break;
        }
        if (!started) {
            key_table_prefix(&cursor, t, 0);
            started = 1;
            char what[300];
            snprintf(what, sizeof what, "backfill of %s.%s", job->table, job->index);
            progress_start(&meter, what, (uint64_t)table_item_count(db, t), progress_now(),
                           engine_progress_sink, db);
            engine_log(db, "%s: started, %llu items in the table", what,
                       (unsigned long long)meter.total);
        }
        int failed = backfill_chunk(db, t, ix, &cursor, &done, &filled);
        catalog_release(db, t);
        progress_update(&meter, filled, progress_now());
        if (failed) usleep(10000); /* no capacity, or a store that refused the write */
        if (done) {
            qr_err e;
            err_init(&e);
            catalog_change_schema(db, job->table, mark_active, job->index, &e);
            progress_finish(&meter, progress_now());
        }
    }
    buf_free(&cursor);
    free(job->table);
    free(job->index);
    /* Say this thread is finished, so the next backfill_start can join it and reuse its
     * slot: a server creates any number of indexes over its life. */
    pthread_mutex_lock(&db->prop_lock);
    for (size_t i = 0; i < db->nbackfills; i++)
        if (pthread_equal(db->backfills[i], job->self)) db->backfill_done[i] = 1;
    pthread_mutex_unlock(&db->prop_lock);
    free(job);
    return NULL;
}

/* Joins the backfill threads that have finished and drops their slots (prop_lock held). A
 * finished thread takes no lock after saying so, so joining it here cannot wait on us. */
static void reap_backfills(qr_db *db)
{
    size_t kept = 0;
    for (size_t i = 0; i < db->nbackfills; i++) {
        if (db->backfill_done[i]) {
            pthread_join(db->backfills[i], NULL);
            continue;
        }
        db->backfills[kept] = db->backfills[i];
        db->backfill_done[kept++] = 0;
    }
    db->nbackfills = kept;
}

/* Backfill threads fill a new global index from the base table while writes keep flowing
 * into the log. */
int backfill_start(qr_db *db, const char *table_name, const char *index_name)
{
    backfill_job *job = malloc(sizeof *job);
    job->db = db;
    job->table = strdup(table_name);
    job->index = strdup(index_name);
    pthread_mutex_lock(&db->prop_lock);
    reap_backfills(db);
    int rc = -1;
    /* The thread looks for its slot under prop_lock, which is held until the slot is set. */
    if (db->nbackfills < sizeof db->backfills / sizeof db->backfills[0] &&
        pthread_create(&job->self, NULL, backfill_main, job) == 0) {
        db->backfills[db->nbackfills] = job->self;
        db->backfill_done[db->nbackfills++] = 0;
        rc = 0;
    }
    pthread_mutex_unlock(&db->prop_lock);
    if (rc) {
        free(job->table);
        free(job->index);
        free(job);
    }
    return rc;
}
