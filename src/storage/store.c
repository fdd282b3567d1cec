/* store.c — RocksDB behind quarry's storage interface (see store.h).
 *
 * One RocksDB database, default column family, with a block cache and bloom filters
 * tuned for point reads of items and prefix-ordered range scans of item collections. */
#include "storage/store.h"

#include "storage/rowcache.h"

#include <pthread.h>
#include <rocksdb/c.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct store {
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_writeoptions_t *wopts;
    rocksdb_writeoptions_t *wopts_nosync;
    rocksdb_readoptions_t *ropts;
    rocksdb_block_based_table_options_t *topts;
    rocksdb_cache_t *cache;
    rocksdb_filterpolicy_t *filter;
    int one_writer;               /* no syncs: writers take write_mu instead of RocksDB's write group */
    pthread_mutex_t write_mu;
    int manual_flush; /* no syncs: the WAL is handed to the OS by flush_wal, not by each write */
    /* With manual flushes, writes counted three ways (all only grow): begun before a
     * write's record can be seen, appended once it is in RocksDB's WAL buffer (in the
     * order of write_mu, so "appended n" means records 1..n are there), flushed up to
     * what the last flush handed to the OS. A read that finds begun > flushed may have
     * seen a record still in the buffer (see settle_read). */
    _Atomic uint64_t wal_begun, wal_appended, wal_flushed;
    rowcache *rows; /* recently read values, for reads without a snapshot */
};

/* A thread that defers flushes (store_defer_flushes) and the store it has written to
 * since its last store_flush_owed. */
static __thread int tl_defer;
static __thread store *tl_owed;

struct store_batch {
    rocksdb_writebatch_t *wb;
    uint64_t *hashes; /* rowcache_hash of each key written, for the row cache */
    size_t nhashes, hashes_cap;
    uint64_t few[4];  /* hashes' first home, so that small batches need no allocation */
    int touches_all;  /* a range was deleted (or a hash could not be kept) */
    struct batch_hook { store_batch_done_fn fn; void *arg; uint64_t value; } *hooks;
    size_t nhooks, hooks_cap;
};

struct store_iter {
    rocksdb_iterator_t *it;
    rocksdb_readoptions_t *ropts;
    char *lower, *upper;
    char *flush_error; /* settle_read's, reported by store_iter_status */
};

/* Hands RocksDB's WAL buffer to the operating system, and notes how far that reached:
 * every record appended before the flush began. */
static void flush_wal(store *s, char **e)
{
    uint64_t reached = atomic_load(&s->wal_appended);
    rocksdb_flush_wal(s->db, 0, e);
    if (*e) return;
    uint64_t was = atomic_load(&s->wal_flushed);
    while (was < reached && !atomic_compare_exchange_weak(&s->wal_flushed, &was, reached)) {}
}

/* Makes s the store this deferring thread owes a flush; it owes one store at a time. */
static void owe(store *s, char **e)
{
    if (tl_owed == s) return;
    if (tl_owed) flush_wal(tl_owed, e);
    tl_owed = s;
}

/* After a read. Another thread's write can be seen before its record leaves RocksDB's
 * WAL buffer: the memtable has it as soon as the buffer does. Were the process to die
 * then, the write would be lost although the reader had answered with it, so a read
 * that may have seen such a write is answered only after a flush: at once on a thread
 * that does not defer flushes, and with the thread's own deferred writes on one that
 * does. Without writes in flight this is two atomic loads. */
static void settle_read(store *s, char **e)
{
    if (!s->manual_flush || atomic_load(&s->wal_begun) <= atomic_load(&s->wal_flushed)) return;
    if (tl_defer) owe(s, e);
    else flush_wal(s, e);
}

int store_open(const char *dir, int no_sync, store **out, char **errmsg)
{
    store *s = calloc(1, sizeof *s);
    /* Items read again and again skip RocksDB's lookup (a skiplist search through the
     * memtable, then the files): 64k keys of values up to 2 KB, 32 MB at most. GetItem
     * of 10 000 items in the memtable: RocksDB's Get was 1.7 of 11.6 us of CPU. */
    if (s) s->rows = rowcache_new(1 << 16, 2048, 32 << 20);
    if (s == NULL || s->rows == NULL) {
        free(s);
        *errmsg = strdup("out of memory");
        return -1;
    }
    s->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(s->opts, 1);
    rocksdb_options_increase_parallelism(s->opts, 2);
    rocksdb_options_set_max_background_jobs(s->opts, 2);
    rocksdb_options_set_write_buffer_size(s->opts, 64 << 20);
    rocksdb_options_set_compression(s->opts, rocksdb_lz4_compression);
    /* Writers waiting for the write group's leader block instead of spinning with
     * sched_yield: on a 2-CPU machine the spinning took the CPU the leader and the other
     * requests needed (4 writer threads: ~23 -> ~19 us of CPU per PutItem). */
    rocksdb_options_set_enable_write_thread_adaptive_yield(s->opts, 0);
    /* Without syncs, a write holds no one up for long, and writers from several event
     * loops take turns on a mutex instead of forming RocksDB write groups: the group's
     * followers sleep on a condition variable and are woken one by one, which on two CPUs
     * cost more than the turns (PutItem --no-sync: 38.3 -> 36.3 us of CPU, a third fewer
     * context switches, ~5% more requests/s; pipelined groups had been 40 -> 38 us). With
     * syncs, the groups are what shares one fsync among many writers, so they stay.
     * The mutex spins briefly before it sleeps, as a turn is a few microseconds: three
     * alternating runs gave 40.3-41.7k PutItem/s against 39.2-40.6k for a plain mutex,
     * at the same CPU per request. */
    s->one_writer = no_sync;
    /* Without syncs, a write is acknowledged once the WAL holds it in the operating
     * system's cache. RocksDB writes it there itself after each write, one write(2) per
     * write; with manual flushes it keeps it in its buffer until flush_wal, so that a
     * thread answering several requests at a time (an event loop, store_defer_flushes)
     * hands all of their records over in one write(2) before it answers any of them
     * (PutItem --no-sync on one event loop: the WAL's write(2) was ~4 us of the ~32 us of
     * CPU per request). Every other thread flushes right after each of its writes, as
     * before. */
    s->manual_flush = no_sync;
    rocksdb_options_set_manual_wal_flush(s->opts, (unsigned char)no_sync);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&s->write_mu, &ma);
    pthread_mutexattr_destroy(&ma);
    /* A bloom filter of whole keys over the memtable (5% of its size): writes read the
     * current item first, and for a new item the filter answers "absent" without the
     * skiplist search (PutItem of a new item: ~118k -> ~110k instructions). */
    rocksdb_options_set_memtable_prefix_bloom_size_ratio(s->opts, 0.05);
    rocksdb_options_set_memtable_whole_key_filtering(s->opts, 1);
    s->topts = rocksdb_block_based_options_create();
    s->cache = rocksdb_cache_create_lru(256 << 20);
    rocksdb_block_based_options_set_block_cache(s->topts, s->cache);
    s->filter = rocksdb_filterpolicy_create_bloom_full(10);
    rocksdb_block_based_options_set_filter_policy(s->topts, s->filter);
    rocksdb_block_based_options_set_cache_index_and_filter_blocks(s->topts, 1);
    rocksdb_options_set_block_based_table_factory(s->opts, s->topts);
    s->wopts = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(s->wopts, no_sync ? 0 : 1);
    s->wopts_nosync = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(s->wopts_nosync, 0);
    s->ropts = rocksdb_readoptions_create();
    char *err = NULL;
    s->db = rocksdb_open(s->opts, dir, &err);
    if (err != NULL) {
        *errmsg = err;
        s->db = NULL;
        store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void store_close(store *s)
{
    if (s == NULL) return;
    if (s->db && s->manual_flush) {
        char *e = NULL;
        flush_wal(s, &e);
        free(e); /* nothing left to report it to; the close below reports nothing either */
    }
    if (s->db) rocksdb_close(s->db);
    rocksdb_writeoptions_destroy(s->wopts);
    rocksdb_writeoptions_destroy(s->wopts_nosync);
    rocksdb_readoptions_destroy(s->ropts);
    rocksdb_options_destroy(s->opts);
    rocksdb_block_based_options_destroy(s->topts);
    rocksdb_cache_destroy(s->cache);
    rowcache_free(s->rows);
    pthread_mutex_destroy(&s->write_mu);
    free(s);
}

/* RocksDB counts into a per-thread perf context unless told not to; quarry never reads
 * those counters, and under load they cost every get and write more than the skiplist
 * does. The level is per thread, so each thread sets it before its first call. */
static __thread int perf_level_set;

static void perf_off(void)
{
    if (perf_level_set) return;
    rocksdb_set_perf_level(rocksdb_disable);
    perf_level_set = 1;
}

/* store_get, and store_get_before_write when fill is 0. */
static int get_with(store *s, const store_snapshot *snap, const void *key, size_t klen, char **val,
                    size_t *vlen, int fill, qr_err *err)
{
    char *e = NULL;
    perf_off();
    /* Reads at a snapshot see the past, which the row cache does not keep. */
    uint64_t hash = 0, ticket = 0;
    int cached = 0;
    if (snap == NULL) {
        hash = rowcache_hash(key, klen);
        cached = rowcache_get(s->rows, hash, key, klen, val, vlen, &ticket);
        if (cached < 0) return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    if (!cached) {
        rocksdb_readoptions_t *ro = s->ropts;
        if (snap) {
            ro = rocksdb_readoptions_create();
            rocksdb_readoptions_set_snapshot(ro, (const rocksdb_snapshot_t *)snap);
        }
        *val = rocksdb_get(s->db, ro, key, klen, vlen, &e);
        if (snap) rocksdb_readoptions_destroy(ro);
        if (e) {
            err_set(err, QR_E_INTERNAL, "storage read failed: %s", e);
            free(e);
            return -1;
        }
        if (snap == NULL && fill && *val) rowcache_offer(s->rows, hash, key, klen, *val, *vlen, ticket);
    }
    settle_read(s, &e);
    if (e) {
        err_set(err, QR_E_INTERNAL, "storage write failed: %s", e);
        free(e);
        free(*val);
        *val = NULL;
        return -1;
    }
    return *val != NULL;
}

int store_get(store *s, const store_snapshot *snap, const void *key, size_t klen, char **val,
              size_t *vlen, qr_err *err)
{
    return get_with(s, snap, key, klen, val, vlen, 1, err);
}

int store_get_before_write(store *s, const void *key, size_t klen, char **val, size_t *vlen, qr_err *err)
{
    return get_with(s, NULL, key, klen, val, vlen, 0, err);
}

store_batch *store_batch_new(void)
{
    store_batch *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    b->wb = rocksdb_writebatch_create();
    b->hashes = b->few;
    b->hashes_cap = sizeof b->few / sizeof b->few[0];
    return b;
}

int store_batch_on_done(store_batch *b, store_batch_done_fn fn, void *arg, uint64_t value)
{
    if (b->nhooks == b->hooks_cap) {
        size_t cap = b->hooks_cap ? b->hooks_cap * 2 : 4;
        struct batch_hook *h = realloc(b->hooks, cap * sizeof *h);
        if (h == NULL) return -1;
        b->hooks = h;
        b->hooks_cap = cap;
    }
    b->hooks[b->nhooks++] = (struct batch_hook){fn, arg, value};
    return 0;
}

static void run_hooks(store_batch *b)
{
    for (size_t i = 0; i < b->nhooks; i++) b->hooks[i].fn(b->hooks[i].arg, b->hooks[i].value);
    b->nhooks = 0;
}

/* Notes that b writes key, so that the row cache forgets it. */
static void note_key(store_batch *b, const void *k, size_t kl)
{
    if (b->touches_all) return;
    if (b->nhashes == b->hashes_cap) {
        size_t cap = 2 * b->hashes_cap;
        uint64_t *h = b->hashes == b->few ? malloc(cap * sizeof *h) : realloc(b->hashes, cap * sizeof *h);
        if (h == NULL) {
            b->touches_all = 1; /* forgetting everything is always right */
            return;
        }
        if (b->hashes == b->few) memcpy(h, b->few, sizeof b->few);
        b->hashes = h;
        b->hashes_cap = cap;
    }
    b->hashes[b->nhashes++] = rowcache_hash(k, kl);
}

void store_batch_put(store_batch *b, const void *k, size_t kl, const void *v, size_t vl)
{
    rocksdb_writebatch_put(b->wb, k, kl, v, vl);
    note_key(b, k, kl);
}

void store_batch_delete(store_batch *b, const void *k, size_t kl)
{
    rocksdb_writebatch_delete(b->wb, k, kl);
    note_key(b, k, kl);
}

void store_batch_delete_range(store_batch *b, const void *begin, size_t bl, const void *end, size_t el)
{
    rocksdb_writebatch_delete_range(b->wb, begin, bl, end, el);
    b->touches_all = 1;
}

int store_batch_count(const store_batch *b)
{
    return rocksdb_writebatch_count(b->wb);
}

void store_batch_clear(store_batch *b)
{
    run_hooks(b);
    rocksdb_writebatch_clear(b->wb);
    b->nhashes = 0;
    b->touches_all = 0;
}

void store_batch_free(store_batch *b)
{
    if (b == NULL) return;
    run_hooks(b);
    free(b->hooks);
    if (b->hashes != b->few) free(b->hashes);
    rocksdb_writebatch_destroy(b->wb);
    free(b);
}

static int write_with(store *s, rocksdb_writeoptions_t *wo, store_batch *b, qr_err *err)
{
    char *e = NULL;
    perf_off();
    rowcache_write_begin(s->rows, b->hashes, b->nhashes, b->touches_all);
    if (s->one_writer) pthread_mutex_lock(&s->write_mu);
    if (s->manual_flush) atomic_fetch_add(&s->wal_begun, 1); /* manual_flush implies one_writer */
    rocksdb_write(s->db, wo, b->wb, &e);
    if (s->manual_flush) atomic_fetch_add(&s->wal_appended, 1);
    if (s->one_writer) pthread_mutex_unlock(&s->write_mu);
    rowcache_write_end(s->rows, b->hashes, b->nhashes, b->touches_all);
    if (e == NULL && s->manual_flush) {
        if (!tl_defer) flush_wal(s, &e);
        else owe(s, &e);
    }
    if (e) {
        err_set(err, QR_E_INTERNAL, "storage write failed: %s", e);
        free(e);
        return -1;
    }
    return 0;
}

void store_defer_flushes(int on)
{
    tl_defer = on;
}

int store_flush_owed_pending(void)
{
    return tl_owed != NULL;
}

int store_flush_owed(qr_err *err)
{
    store *s = tl_owed;
    if (s == NULL) return 0;
    tl_owed = NULL;
    char *e = NULL;
    flush_wal(s, &e);
    if (e) {
        err_set(err, QR_E_INTERNAL, "storage write failed: %s", e);
        free(e);
        return -1;
    }
    return 0;
}

int store_write(store *s, store_batch *b, qr_err *err)
{
    return write_with(s, s->wopts, b, err);
}

int store_write_nosync(store *s, store_batch *b, qr_err *err)
{
    return write_with(s, s->wopts_nosync, b, err);
}

static char *dup_bytes(const void *p, size_t n)
{
    char *q = malloc(n ? n : 1);
    if (q && n) memcpy(q, p, n);
    return q;
}

store_iter *store_iter_new(store *s, const store_snapshot *snap, const void *lower, size_t ll,
                           const void *upper, size_t ul)
{
    store_iter *it = calloc(1, sizeof *it);
    if (it == NULL) return NULL;
    it->ropts = rocksdb_readoptions_create();
    if (snap) rocksdb_readoptions_set_snapshot(it->ropts, (const rocksdb_snapshot_t *)snap);
    if (lower) {
        it->lower = dup_bytes(lower, ll);
        rocksdb_readoptions_set_iterate_lower_bound(it->ropts, it->lower, ll);
    }
    if (upper) {
        it->upper = dup_bytes(upper, ul);
        rocksdb_readoptions_set_iterate_upper_bound(it->ropts, it->upper, ul);
    }
    perf_off();
    it->it = rocksdb_create_iterator(s->db, it->ropts);
    settle_read(s, &it->flush_error); /* the iterator reads what was there at its creation */
    return it;
}

void store_iter_first(store_iter *it)
{
    rocksdb_iter_seek_to_first(it->it);
}

void store_iter_last(store_iter *it)
{
    rocksdb_iter_seek_to_last(it->it);
}

int store_iter_valid(store_iter *it)
{
    return rocksdb_iter_valid(it->it);
}

void store_iter_next(store_iter *it)
{
    rocksdb_iter_next(it->it);
}

void store_iter_prev(store_iter *it)
{
    rocksdb_iter_prev(it->it);
}

const char *store_iter_key(store_iter *it, size_t *len)
{
    return rocksdb_iter_key(it->it, len);
}

const char *store_iter_value(store_iter *it, size_t *len)
{
    return rocksdb_iter_value(it->it, len);
}

int store_iter_status(store_iter *it, qr_err *err)
{
    if (it->flush_error) {
        err_set(err, QR_E_INTERNAL, "storage write failed: %s", it->flush_error);
        return -1;
    }
    char *e = NULL;
    rocksdb_iter_get_error(it->it, &e);
    if (e) {
        err_set(err, QR_E_INTERNAL, "storage read failed: %s", e);
        free(e);
        return -1;
    }
    return 0;
}

void store_iter_free(store_iter *it)
{
    if (it == NULL) return;
    rocksdb_iter_destroy(it->it);
    rocksdb_readoptions_destroy(it->ropts);
    free(it->lower);
    free(it->upper);
    free(it->flush_error);
    free(it);
}

const store_snapshot *store_snapshot_new(store *s)
{
    return (const store_snapshot *)rocksdb_create_snapshot(s->db);
}

void store_snapshot_free(store *s, const store_snapshot *snap)
{
    rocksdb_release_snapshot(s->db, (const rocksdb_snapshot_t *)snap);
}

int store_put(store *s, const void *k, size_t kl, const void *v, size_t vl, qr_err *err)
{
    store_batch *b = store_batch_new();
    if (b == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    store_batch_put(b, k, kl, v, vl);
    int rc = store_write(s, b, err);
    store_batch_free(b);
    return rc;
}
