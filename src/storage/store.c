/* store.c — RocksDB behind quarry's storage interface (see store.h): one database, default
 * column family, with a block cache and bloom filters tuned for point reads of items and
 * prefix-ordered range scans of item collections. */
#include "storage/store.h"

#include "storage/rowcache.h"
#include "util/deadline.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* The largest value the row cache keeps. */
#define ROW_MAX_VALUE 2048
/* The largest memtable (the budget's sixteenth, up to this); RocksDB preallocates each new
 * WAL in blocks of 1.1 times it. */
#define MEMTABLE_BYTES (8u << 20)
/* Of the budget, what the row cache takes: an eighth. */
#define ROW_SHARE 8
/* RocksDB's compact-on-deletion collector marks a file for compaction when some
 * DELETE_WINDOW consecutive entries of it hold DELETE_DENSE deletes. */
#define DELETE_WINDOW 1024
#define DELETE_DENSE 512
/* A flush for deletes comes at most once a second; an idle maintenance thread ends after
 * MAINT_IDLE_SECONDS. */
#define DELETE_FLUSH_GAP_MS 1000
#define MAINT_IDLE_SECONDS 10
/* The block cache is split into shards of at least this (and at most 64 shards). An entry
 * larger than what is left of its shard is dropped as soon as its last reader lets go of
 * it, and a file's index and filter are single blocks of about 2.5% and 1% of its data
 * (up to 3.2 and 1.3 MB in RocksDB's files of 64 to 128 MB): in RocksDB's default shards
 * of 512 KB and up, they were read from the file again by nearly every read. */
#define CACHE_SHARD_MIN ((size_t)16 << 20)
/* What an open writes besides the WAL's first block and what recovery turns into tables:
 * a new MANIFEST and OPTIONS file, and quarry's catalogue and history records. */
#define OPEN_SLACK_BYTES (1u << 20)

struct store {
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_env_t *mem_env; /* in memory: the environment holding every file */
    rocksdb_writeoptions_t *wopts;
    rocksdb_writeoptions_t *wopts_nosync;
    rocksdb_readoptions_t *ropts;
    rocksdb_block_based_table_options_t *topts;
    rocksdb_cache_t *cache;
    rocksdb_filterpolicy_t *filter;
    int one_writer; /* no syncs: writers take write_mu instead of RocksDB's write group */
    pthread_mutex_t write_mu;
    int manual_flush; /* no syncs: the WAL is handed to the OS by flush_wal, not by each write */
    /* With manual flushes, writes counted three ways (all only grow): begun before a
     * write's record can be seen, appended once it is in RocksDB's WAL buffer (in the
     * order of write_mu, so "appended n" means records 1..n are there), flushed up to
     * what the last flush handed to the OS. A read that finds begun > flushed may have
     * seen a record still in the buffer (see settle_read). */
    _Atomic uint64_t wal_begun, wal_appended, wal_flushed;
    rowcache *rows; /* recently read values, for reads without a snapshot */
    /* Background maintenance (store_open): flushes asked for by deletes and compactions
     * of ranges, on one thread made on demand; under maint_mu. */
    pthread_mutex_t maint_mu;
    pthread_cond_t maint_cv; /* work queued, work done, the thread gone */
    pthread_t maint_thread;
    int maint_running;  /* a thread is there and will look at the queue */
    int maint_joinable; /* a thread was made and not yet joined */
    int maint_stop, maint_busy, flush_wanted;
    struct range_job *ranges; /* to compact, oldest first */
    long last_delete_flush_ms;
    _Atomic uint64_t deletes; /* point deletes written since the last flush asked for */
    /* The first error of a WAL flush. RocksDB's writer refuses every later flush with
     * "Seen error", which names no cause; those report this one instead. */
    _Atomic(char *) wal_error;
    char *dir; /* where it is, for what a full disk's error says at the close */
};

/* A thread that defers flushes (store_defer_flushes) and the store it has written to
 * since its last store_flush_owed. */
static __thread int tl_defer;
static __thread store *tl_owed;

/* A growing array of rowcache marks with room for a few in place, so that a small write
 * needs no allocation for them. */
typedef struct mark_list {
    rowcache_mark *at;
    size_t n, cap;
    rowcache_mark few[4];
    int all; /* every key: a range was deleted (or a mark could not be kept) */
} mark_list;

struct batch_hook {
    store_done_fn fn;
    void *arg;
    uint64_t value;
};

/* What waits for a write to be over: a batch's hooks, or what follows a thread's staged
 * writes (their batches' hooks, then what store_after_commit was asked, in order). */
typedef struct hook_list {
    struct batch_hook *at;
    size_t n, cap;
} hook_list;

struct store_batch {
    rocksdb_writebatch_t *wb;
    uint32_t deletes; /* point deletes in wb */
    mark_list marks;  /* each key written, for the row cache */
    hook_list hooks;
    int written; /* by its last write, for the hooks */
};

/* This thread's staged writes (store_write_staged): their records, gathered in RocksDB's
 * write-batch format (a 12-byte header, then the records), what their batches carried
 * for the row cache, and what follows their commit. A commit writes them as one batch. */
static __thread struct staged {
    store *s;
    char *rep;
    size_t len, cap;
    uint32_t count, deletes;
    mark_list marks;
    hook_list hooks;
} tl_staged;
/* The first error of a commit this thread made since its last store_flush_owed, which
 * reports it: the writes it lost may have been answered by then. */
static __thread char *tl_commit_error;
static void commit_staged(int flush, char **e);
static void note_deletes(store *s, uint32_t n);

struct store_iter {
    rocksdb_iterator_t *it;
    rocksdb_readoptions_t *ropts;
    char *lower, *upper;
    char *flush_error; /* settle_read's, reported by store_iter_status */
};

/* After a write or a WAL flush of s failed with *e: the first such error is kept, and a
 * later one that names no cause (RocksDB's "Seen error" of a WAL writer that failed
 * before) is replaced by it. */
static void wal_failed(store *s, char **e)
{
    char *first = atomic_load(&s->wal_error);
    if (first == NULL) {
        char *mine = strdup(*e);
        if (mine && atomic_compare_exchange_strong(&s->wal_error, &first, mine)) return;
        free(mine);
    }
    char *again = first && strstr(*e, "Seen error") ? strdup(first) : NULL;
    if (again == NULL) return;
    free(*e);
    *e = again;
}

/* Hands RocksDB's WAL buffer to the operating system, and notes how far that reached:
 * every record appended before the flush began. */
static void flush_wal(store *s, char **e)
{
    uint64_t reached = atomic_load(&s->wal_appended);
    rocksdb_flush_wal(s->db, 0, e);
    if (*e) {
        wal_failed(s, e);
        return;
    }
    uint64_t was = atomic_load(&s->wal_flushed);
    while (was < reached && !atomic_compare_exchange_weak(&s->wal_flushed, &was, reached)) {
    }
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
    if (tl_defer)
        owe(s, e);
    else
        flush_wal(s, e);
}

/* A RocksDB error, or the same error said to be a full disk when that is its cause
 * (malloc'd). */
static char *describe(const char *e)
{
    char *out = NULL;
    if (strstr(e, "No space left on device") || strstr(e, "NoSpace")) {
        if (asprintf(&out, "the disk is full (%s)", e) < 0) out = NULL;
    } else {
        out = strdup(e);
    }
    return out;
}

/* Sets err to e, a RocksDB error of a write or a WAL flush. */
static void write_error(qr_err *err, const char *e)
{
    char *said = describe(e);
    err_set(err, QR_E_INTERNAL, "storage write failed: %s", said ? said : e);
    free(said);
}

/* Bytes of the regular files in dir whose names begin with prefix and end with suffix. */
static uint64_t bytes_of(const char *dir, const char *prefix, const char *suffix)
{
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    uint64_t sum = 0;
    size_t pl = strlen(prefix), sl = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (nl < pl + sl || strncmp(de->d_name, prefix, pl) != 0 ||
            strcmp(de->d_name + nl - sl, suffix) != 0)
            continue;
        char path[4096];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < (int)sizeof path &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode))
            sum += (uint64_t)st.st_size;
    }
    closedir(d);
    return sum;
}

/* The size in bytes, said in the largest unit under which it is at least 1. */
static void say_bytes(uint64_t n, char *out, size_t cap)
{
    if (n >= (1u << 20))
        snprintf(out, cap, "%.1f MB", (double)n / (1 << 20));
    else if (n >= 1024)
        snprintf(out, cap, "%.1f KB", (double)n / 1024);
    else
        snprintf(out, cap, "%llu bytes", (unsigned long long)n);
}

/* The space an open of the store in dir for writing needs: the WAL's first preallocated
 * block, the MANIFEST and OPTIONS files rewritten, and the tables recovery makes of the
 * WALs left behind (at most their size); what the filesystem has free (at: the folder
 * measured, dir or its nearest existing parent). Returns -1 if it cannot be measured. */
static int measure_space(const char *dir, char at[4096], uint64_t *free_bytes, uint64_t *need,
                         uint64_t *wal)
{
    snprintf(at, 4096, "%s", dir);
    struct statvfs vfs;
    /* A directory not yet made is made on the filesystem of its nearest parent. */
    while (statvfs(at, &vfs) != 0) {
        char *slash = strrchr(at, '/');
        if (slash == NULL) {
            snprintf(at, 4096, ".");
            if (statvfs(at, &vfs) != 0) return -1;
            break;
        }
        if (slash == at)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    *free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    *wal = bytes_of(dir, "", ".log");
    *need = (uint64_t)MEMTABLE_BYTES * 11 / 10 + OPEN_SLACK_BYTES + *wal +
            bytes_of(dir, "MANIFEST-", "");
    return 0;
}

/* Refuses to open a store for writing where the disk lacks what measure_space counts:
 * opening with less would fail part-way, or leave a database that refuses its first
 * write. */
static int check_space(const char *dir, char **errmsg)
{
    char at[4096];
    uint64_t free_bytes, need, wal;
    if (measure_space(dir, at, &free_bytes, &need, &wal) || free_bytes >= need) return 0;
    char has[32], needs[32], logs[32];
    say_bytes(free_bytes, has, sizeof has);
    say_bytes(need, needs, sizeof needs);
    say_bytes(wal, logs, sizeof logs);
    if (asprintf(errmsg,
                 "the disk is full: the filesystem of %s has %s free, and opening the database "
                 "needs at least %s (the write-ahead log's first block, a new MANIFEST and "
                 "OPTIONS file, and tables for the %s of write-ahead log to recover); free "
                 "space there and start again",
                 at, has, needs, logs) < 0)
        *errmsg = NULL;
    return -1;
}

/* mkdir -p: dir and each missing parent; 0, or -1 with errno set. */
static int make_dirs(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char c = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
        path[i] = c;
    }
    return 0;
}

/* What RocksDB's refusal to lock dir means, in one line: the process that holds the lock
 * (fcntl's F_GETLK names it, and /proc its command line). NULL when no other process holds
 * it, so the refusal was something else. */
static char *lock_holder(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/LOCK", dir);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int got = fcntl(fd, F_GETLK, &fl);
    close(fd);
    if (got != 0 || fl.l_type == F_UNLCK) return NULL;
    char cmd[512] = "";
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)fl.l_pid);
    FILE *f = fopen(path, "rb");
    if (f) {
        size_t n = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        while (n > 0 && cmd[n - 1] == '\0')
            n--;
        for (size_t i = 0; i < n; i++)
            if (cmd[i] == '\0') cmd[i] = ' ';
        cmd[n] = '\0';
    }
    char *msg = malloc(strlen(cmd) + 80);
    if (msg)
        sprintf(msg, "locked by process %ld%s%s%s", (long)fl.l_pid, cmd[0] ? " (" : "", cmd,
                cmd[0] ? ")" : "");
    return msg;
}

/* How cfg's budget is shared (store_config): the memtable's size, the row cache's and
 * the block cache's. */
static void share_budget(const store_config *cfg, size_t *memtable, size_t *rows, size_t *blocks)
{
    size_t budget = cfg->cache_bytes ? cfg->cache_bytes : STORE_DEFAULT_CACHE;
    if (budget < STORE_MIN_CACHE) budget = STORE_MIN_CACHE;
    *memtable = budget / 16 < MEMTABLE_BYTES ? budget / 16 : MEMTABLE_BYTES;
    *rows = budget / ROW_SHARE;
    *blocks = budget - 2 * *memtable - *rows;
}

/* The block cache of capacity bytes, in shards of CACHE_SHARD_MIN or more. */
static rocksdb_cache_t *block_cache(size_t capacity)
{
    int bits = 0;
    while (bits < 6 && (capacity >> (bits + 1)) >= CACHE_SHARD_MIN)
        bits++;
    rocksdb_lru_cache_options_t *lo = rocksdb_lru_cache_options_create();
    rocksdb_lru_cache_options_set_capacity(lo, capacity);
    rocksdb_lru_cache_options_set_num_shard_bits(lo, bits);
    rocksdb_cache_t *c = rocksdb_cache_create_lru_opts(lo);
    rocksdb_lru_cache_options_destroy(lo);
    return c;
}

int store_open(const char *dir, const store_config *cfg, store **out, char **errmsg)
{
    int no_sync = cfg->no_sync, read_only = cfg->read_only, in_memory = cfg->in_memory;
    size_t memtable, row_bytes, block_bytes;
    share_budget(cfg, &memtable, &row_bytes, &block_bytes);
    if (!read_only && !in_memory && check_space(dir, errmsg)) return -1;
    store *s = calloc(1, sizeof *s);
    /* Items read again and again skip RocksDB's lookup (a skiplist search through the
     * memtable, then the files): 64k keys of values up to 2 KB, the budget's share at
     * most. */
    if (s) s->rows = rowcache_new(1 << 16, ROW_MAX_VALUE, row_bytes);
    if (s) s->dir = strdup(dir);
    if (s == NULL || s->rows == NULL || s->dir == NULL) {
        if (s) rowcache_free(s->rows);
        if (s) free(s->dir);
        free(s);
        *errmsg = strdup("out of memory");
        return -1;
    }
    s->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(s->opts, 1);
    if (in_memory) {
        s->mem_env = rocksdb_create_mem_env();
        rocksdb_options_set_env(s->opts, s->mem_env);
    } else if (!read_only && make_dirs(dir) != 0) {
        char *m = malloc(strlen(dir) + 200);
        if (m) sprintf(m, "cannot create the directory %s: %s", dir, strerror(errno));
        *errmsg = m ? m : strdup("out of memory");
        rocksdb_options_destroy(s->opts);
        rowcache_free(s->rows);
        free(s->dir);
        free(s);
        return -1;
    }
    /* One flush and one compaction at a time, each in a thread of its own RocksDB pool;
     * the compaction pool gets a second thread when quarry first asks for a compaction
     * of its own (store_compact_range), which then runs beside RocksDB's. */
    rocksdb_options_set_max_background_jobs(s->opts, 2);
    /* An 8 MB memtable at most, not RocksDB's 64 MB. Under load, inserting into the
     * memtable is a skiplist search that misses the CPU's caches level after level, and
     * the smaller the skiplist the fewer misses. The price is that recent data leaves the
     * memtable for the files sooner, where reading it (a Query's range) costs more. Two of
     * them at most (the one filling and the one being flushed): past that writes wait. */
    rocksdb_options_set_write_buffer_size(s->opts, memtable);
    rocksdb_options_set_max_write_buffer_number(s->opts, 2);
    rocksdb_options_set_db_write_buffer_size(s->opts, 2 * memtable);
    /* Files where deletes crowd together are compacted soon, which drops the deletes
     * (and what they delete) instead of leaving them for reads to step over. */
    rocksdb_options_add_compact_on_deletion_collector_factory(s->opts, DELETE_WINDOW, DELETE_DENSE);
    rocksdb_options_set_compression(s->opts, rocksdb_lz4_compression);
    /* RocksDB's own LOG stays empty. Its writer ignores the error of a write that fails,
     * and the next line it writes to the same file trips an assertion in
     * WritableFileWriter (Debian builds librocksdb with assertions): on a full disk the
     * first lines of an open, or the error RocksDB logs about a WAL write the disk
     * refused, and then its shutdown lines, abort the process. quarry reports RocksDB's
     * errors itself, from the statuses its calls return. */
    rocksdb_options_set_info_log_level(s->opts, 6 /* NUM_INFO_LOG_LEVELS: none */);
    /* Nor does RocksDB dump its statistics into it every 10 minutes: the dump walks the
     * block cache to count its entries and formats every counter, on an idle server too,
     * for lines the LOG drops. No statistics object is kept to persist either. */
    rocksdb_options_set_stats_dump_period_sec(s->opts, 0);
    rocksdb_options_set_stats_persist_period_sec(s->opts, 0);
    /* Writers waiting for the write group's leader block instead of spinning with
     * sched_yield: on a 2-CPU machine the spinning takes the CPU the leader and the other
     * requests need. */
    rocksdb_options_set_enable_write_thread_adaptive_yield(s->opts, 0);
    /* Without syncs, a write holds no one up for long, and writers from several event
     * loops take turns on a mutex instead of forming RocksDB write groups: the group's
     * followers sleep on a condition variable and are woken one by one, which on two CPUs
     * costs more than the turns. With syncs, the groups are what shares one fsync among
     * many writers, so they stay. The mutex spins briefly before it sleeps
     * (PTHREAD_MUTEX_ADAPTIVE_NP), as a turn is a few microseconds. */
    s->one_writer = no_sync;
    /* Without syncs, a write is acknowledged once the WAL holds it in the operating
     * system's cache. RocksDB writes it there itself after each write, one write(2) per
     * write; with manual flushes it keeps it in its buffer until flush_wal, so that a
     * thread answering several requests at a time (an event loop, store_defer_flushes)
     * hands all of their records over in one write(2) before it answers any of them. Every
     * other thread flushes right after each of its writes. */
    s->manual_flush = no_sync;
    rocksdb_options_set_manual_wal_flush(s->opts, (unsigned char)no_sync);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&s->write_mu, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_mutex_init(&s->maint_mu, NULL);
    pthread_cond_init(&s->maint_cv, NULL);
    /* A bloom filter of whole keys over the memtable (2% of its size): writes read the
     * current item first, and for a new item the filter answers "absent" without the
     * skiplist search. RocksDB zeroes it when it makes the memtable, so it is resident
     * from the open on: 2% of an 8 MB memtable is 160 KB, over 40 bits per key for
     * 200-byte items and 13 for 60-byte ones (false positives well under 1%). */
    rocksdb_options_set_memtable_prefix_bloom_size_ratio(s->opts, 0.02);
    rocksdb_options_set_memtable_whole_key_filtering(s->opts, 1);
    s->topts = rocksdb_block_based_options_create();
    s->cache = block_cache(block_bytes);
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
    if (read_only) {
        rocksdb_options_set_create_if_missing(s->opts, 0);
        s->manual_flush = 0;
        s->db = rocksdb_open_for_read_only(s->opts, dir, 0, &err);
    } else {
        s->db = rocksdb_open(s->opts, dir, &err);
    }
    if (err != NULL) {
        char *held = in_memory || read_only ? NULL : lock_holder(dir);
        if (held) {
            *errmsg = held;
        } else {
            *errmsg = describe(err);
        }
        free(err);
        s->db = NULL;
        store_close(s, NULL);
        return -1;
    }
    *out = s;
    return 0;
}

/* ---- background maintenance: flushes asked for by deletes, compactions of ranges ---- */

struct range_job {
    struct range_job *next;
    size_t bl, el;
    char *begin, *end;
};

static long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Under maint_mu: waits on maint_cv until ms (CLOCK_REALTIME, as pthread_cond_timedwait). */
static int maint_wait_ms(store *s, long ms)
{
    struct timespec ts = deadline_after_ms(CLOCK_REALTIME, ms);
    return pthread_cond_timedwait(&s->maint_cv, &s->maint_mu, &ts);
}

/* Flushes the memtable, so that the deletes in it reach a file that the compact-on-deletion
 * collector can mark. Errors are RocksDB's to report at the next write. */
static void flush_memtable(store *s)
{
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flushoptions_set_wait(fo, 1);
    char *e = NULL;
    rocksdb_flush(s->db, fo, &e);
    free(e);
    rocksdb_flushoptions_destroy(fo);
}

/* Compacts [begin, end) without keeping RocksDB's own compactions waiting meanwhile;
 * store_close cancels it. */
static void compact(store *s, const struct range_job *j)
{
    rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
    rocksdb_compactoptions_set_exclusive_manual_compaction(co, 0);
    rocksdb_compact_range_opt(s->db, co, j->begin, j->bl, j->end, j->el);
    rocksdb_compactoptions_destroy(co);
}

static void *maint_main(void *arg)
{
    store *s = arg;
    pthread_mutex_lock(&s->maint_mu);
    for (;;) {
        if (s->maint_stop) break;
        if (s->flush_wanted) {
            long wait = s->last_delete_flush_ms + DELETE_FLUSH_GAP_MS - mono_ms();
            if (wait > 0 && s->last_delete_flush_ms) {
                maint_wait_ms(s, wait);
                continue;
            }
            s->flush_wanted = 0;
            s->maint_busy = 1;
            pthread_mutex_unlock(&s->maint_mu);
            flush_memtable(s);
            pthread_mutex_lock(&s->maint_mu);
            s->last_delete_flush_ms = mono_ms();
            s->maint_busy = 0;
            pthread_cond_broadcast(&s->maint_cv);
            continue;
        }
        struct range_job *j = s->ranges;
        if (j) {
            s->ranges = j->next;
            s->maint_busy = 1;
            pthread_mutex_unlock(&s->maint_mu);
            compact(s, j);
            free(j->begin);
            free(j->end);
            free(j);
            pthread_mutex_lock(&s->maint_mu);
            s->maint_busy = 0;
            pthread_cond_broadcast(&s->maint_cv);
            continue;
        }
        if (maint_wait_ms(s, MAINT_IDLE_SECONDS * 1000L) != 0 && !s->flush_wanted &&
            s->ranges == NULL)
            break; /* idle: made again when there is work */
    }
    s->maint_running = 0;
    pthread_cond_broadcast(&s->maint_cv);
    pthread_mutex_unlock(&s->maint_mu);
    return NULL;
}

/* Under maint_mu: makes sure a thread will look at what was just queued. -1 if none can
 * be made (the work stays queued for the next request, or is dropped at the close). */
static int maint_wake(store *s)
{
    if (s->maint_running) {
        pthread_cond_broadcast(&s->maint_cv);
        return 0;
    }
    if (s->maint_joinable) pthread_join(s->maint_thread, NULL); /* it has ended, or is ending */
    s->maint_joinable = 0;
    if (pthread_create(&s->maint_thread, NULL, maint_main, s) != 0) return -1;
    s->maint_running = s->maint_joinable = 1;
    return 0;
}

/* After n point deletes were written: once STORE_DELETE_FLUSH have gathered, a flush. */
static void note_deletes(store *s, uint32_t n)
{
    if (n == 0) return;
    if (atomic_fetch_add(&s->deletes, n) + n < STORE_DELETE_FLUSH) return;
    if (atomic_exchange(&s->deletes, 0) < STORE_DELETE_FLUSH) return; /* another took it */
    pthread_mutex_lock(&s->maint_mu);
    if (!s->maint_stop) {
        s->flush_wanted = 1;
        maint_wake(s);
    }
    pthread_mutex_unlock(&s->maint_mu);
}

/* A second thread in RocksDB's compaction pool (of the process's default environment,
 * which the in-memory one shares), so that quarry's compactions of ranges do not hold
 * RocksDB's own compactions up. */
static void add_compaction_thread(void)
{
    rocksdb_env_t *env = rocksdb_create_default_env();
    rocksdb_env_set_background_threads(env, 2);
    rocksdb_env_destroy(env); /* the handle only: the default environment stays */
}

int store_compact_range(store *s, const void *begin, size_t bl, const void *end, size_t el)
{
    static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
    pthread_once(&pool_once, add_compaction_thread);
    struct range_job *j = calloc(1, sizeof *j);
    if (j) j->begin = malloc(bl ? bl : 1);
    if (j) j->end = malloc(el ? el : 1);
    if (j == NULL || j->begin == NULL || j->end == NULL) {
        if (j) free(j->begin);
        free(j);
        return -1;
    }
    memcpy(j->begin, begin, bl);
    memcpy(j->end, end, el);
    j->bl = bl;
    j->el = el;
    pthread_mutex_lock(&s->maint_mu);
    struct range_job **at = &s->ranges;
    while (*at)
        at = &(*at)->next;
    *at = j;
    int rc = s->maint_stop ? -1 : maint_wake(s);
    pthread_mutex_unlock(&s->maint_mu);
    return rc;
}

int store_settle(store *s, int timeout_ms)
{
    long until = mono_ms() + timeout_ms;
    pthread_mutex_lock(&s->maint_mu);
    while (s->maint_running && (s->flush_wanted || s->ranges || s->maint_busy)) {
        long left = until - mono_ms();
        if (left <= 0) break;
        maint_wait_ms(s, left < 100 ? left : 100);
    }
    pthread_mutex_unlock(&s->maint_mu);
    /* Then what RocksDB itself scheduled: the flushes and the compactions of marked files. */
    static const char *const busy[] = {
        "rocksdb.num-running-flushes", "rocksdb.num-running-compactions",
        "rocksdb.compaction-pending", "rocksdb.mem-table-flush-pending"};
    for (;;) {
        int any = 0;
        for (size_t i = 0; i < sizeof busy / sizeof *busy; i++) {
            uint64_t v = 0;
            if (rocksdb_property_int(s->db, busy[i], &v) == 0 && v) any = 1;
        }
        if (!any) return 0;
        if (mono_ms() >= until) return -1;
        usleep(10000);
    }
}

/* Stops the maintenance thread, cancelling a compaction it runs, and drops what is queued
 * (RocksDB compacts it in time). */
static void maint_stop(store *s)
{
    pthread_mutex_lock(&s->maint_mu);
    s->maint_stop = 1;
    int joinable = s->maint_joinable;
    if (s->maint_running && s->db) rocksdb_disable_manual_compaction(s->db);
    pthread_cond_broadcast(&s->maint_cv);
    pthread_mutex_unlock(&s->maint_mu);
    if (joinable) pthread_join(s->maint_thread, NULL);
    s->maint_joinable = 0;
    while (s->ranges) {
        struct range_job *j = s->ranges;
        s->ranges = j->next;
        free(j->begin);
        free(j->end);
        free(j);
    }
}

/* What store_close reports of a WAL write that failed (said): that nothing acknowledged
 * was lost, and for a full disk, measured once the store is closed, how much free space
 * the next open needs (malloc'd; NULL if out of memory). */
static char *close_message(const char *dir, const char *said)
{
    char *out = NULL, at[4096];
    uint64_t free_bytes, need, wal;
    int full = strncmp(said, "the disk is full", 16) == 0 &&
               measure_space(dir, at, &free_bytes, &need, &wal) == 0;
    char has[32] = "", needs[32] = "";
    if (full) {
        say_bytes(free_bytes, has, sizeof has);
        say_bytes(need, needs, sizeof needs);
    }
    int n = full ? asprintf(&out,
                            "%s; the writes made since were refused, never acknowledged, and "
                            "every write acknowledged is kept; it opens again once %s has at "
                            "least %s free (it has %s)",
                            said, at, needs, has)
                 : asprintf(&out,
                            "%s; the writes made since were refused, never acknowledged, and "
                            "every write acknowledged is kept",
                            said);
    return n < 0 ? NULL : out;
}

int store_close(store *s, char **errmsg)
{
    if (s == NULL) return 0;
    char *e = NULL;
    if (tl_staged.s == s) commit_staged(0, &e);
    if (tl_owed == s) tl_owed = NULL; /* the flush below is the one owed */
    if (s->db && s->manual_flush && e == NULL) flush_wal(s, &e);
    char *first = atomic_load(&s->wal_error);
    int rc = first || e ? -1 : 0;
    char *said = rc ? describe(first ? first : e) : NULL;
    free(e);
    maint_stop(s);
    if (s->db) rocksdb_close(s->db);
    rocksdb_writeoptions_destroy(s->wopts);
    rocksdb_writeoptions_destroy(s->wopts_nosync);
    rocksdb_readoptions_destroy(s->ropts);
    rocksdb_options_destroy(s->opts);
    if (s->mem_env) rocksdb_env_destroy(s->mem_env);
    rocksdb_block_based_options_destroy(s->topts);
    rocksdb_cache_destroy(s->cache);
    rowcache_free(s->rows);
    pthread_mutex_destroy(&s->write_mu);
    pthread_mutex_destroy(&s->maint_mu);
    pthread_cond_destroy(&s->maint_cv);
    if (rc && errmsg) *errmsg = close_message(s->dir, said ? said : "a write failed");
    free(said);
    free(atomic_load(&s->wal_error));
    free(s->dir);
    free(s);
    return rc;
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
        if (snap == NULL && fill && *val)
            rowcache_offer(s->rows, hash, key, klen, *val, *vlen, ticket);
    }
    settle_read(s, &e);
    if (e) {
        write_error(err, e);
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

int store_get_before_write(store *s, const void *key, size_t klen, char **val, size_t *vlen,
                           qr_err *err)
{
    return get_with(s, NULL, key, klen, val, vlen, 0, err);
}

static void marks_init(mark_list *m)
{
    m->at = m->few;
    m->cap = sizeof m->few / sizeof m->few[0];
    m->n = 0;
    m->all = 0;
}

/* Makes room in m for more marks; -1 if out of memory. */
static int marks_reserve(mark_list *m, size_t more)
{
    if (m->at == NULL) marks_init(m); /* a zeroed list (the thread's staged writes) */
    if (m->n + more <= m->cap) return 0;
    size_t cap = 2 * (m->n + more);
    rowcache_mark *a = m->at == m->few ? malloc(cap * sizeof *a) : realloc(m->at, cap * sizeof *a);
    if (a == NULL) return -1;
    if (m->at == m->few) memcpy(a, m->few, m->n * sizeof *a);
    m->at = a;
    m->cap = cap;
    return 0;
}

static void marks_add(mark_list *m, uint64_t hash, rowcache_entry *keep)
{
    if (m->all || marks_reserve(m, 1)) {
        m->all = 1; /* forgetting everything is always right */
        rowcache_entry_free(keep);
        return;
    }
    m->at[m->n++] = (rowcache_mark){.hash = hash, .keep = keep};
}

/* Empties m, freeing any values it still kept. */
static void marks_clear(mark_list *m)
{
    for (size_t i = 0; i < m->n; i++)
        rowcache_entry_free(m->at[i].keep);
    m->n = 0;
    m->all = 0;
}

static void marks_free(mark_list *m)
{
    marks_clear(m);
    if (m->at != m->few) free(m->at);
    marks_init(m);
}

/* Moves src's marks (room reserved in dst) to the end of dst, leaving src empty. */
static void marks_move(mark_list *dst, mark_list *src)
{
    if (src->n == 0) return;
    memcpy(dst->at + dst->n, src->at, src->n * sizeof *src->at);
    dst->n += src->n;
    src->n = 0;
}

static int hooks_reserve(hook_list *h, size_t more)
{
    if (h->n + more <= h->cap) return 0;
    size_t cap = 2 * (h->n + more) < 4 ? 4 : 2 * (h->n + more);
    struct batch_hook *a = realloc(h->at, cap * sizeof *a);
    if (a == NULL) return -1;
    h->at = a;
    h->cap = cap;
    return 0;
}

static int hooks_add(hook_list *h, struct batch_hook hook)
{
    if (hooks_reserve(h, 1)) return -1;
    h->at[h->n++] = hook;
    return 0;
}

static void hooks_run(hook_list *h, int written)
{
    for (size_t i = 0; i < h->n; i++)
        h->at[i].fn(h->at[i].arg, h->at[i].value, written);
    h->n = 0;
}

/* Moves src's hooks (room reserved in dst) to the end of dst, leaving src empty. */
static void hooks_move(hook_list *dst, hook_list *src)
{
    if (src->n == 0) return;
    memcpy(dst->at + dst->n, src->at, src->n * sizeof *src->at);
    dst->n += src->n;
    src->n = 0;
}

store_batch *store_batch_new(void)
{
    store_batch *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    b->wb = rocksdb_writebatch_create();
    marks_init(&b->marks);
    return b;
}

int store_batch_on_done(store_batch *b, store_done_fn fn, void *arg, uint64_t value)
{
    return hooks_add(&b->hooks, (struct batch_hook){fn, arg, value});
}

void store_batch_put(store_batch *b, const void *k, size_t kl, const void *v, size_t vl)
{
    rocksdb_writebatch_put(b->wb, k, kl, v, vl);
    marks_add(&b->marks, rowcache_hash(k, kl), NULL);
}

void store_batch_put_cached(store_batch *b, const void *k, size_t kl, const void *v, size_t vl)
{
    rocksdb_writebatch_put(b->wb, k, kl, v, vl);
    marks_add(&b->marks, rowcache_hash(k, kl),
              vl <= ROW_MAX_VALUE ? rowcache_entry_new(k, kl, v, vl) : NULL);
}

void store_batch_delete(store_batch *b, const void *k, size_t kl)
{
    rocksdb_writebatch_delete(b->wb, k, kl);
    b->deletes++;
    marks_add(&b->marks, rowcache_hash(k, kl), NULL);
}

void store_batch_delete_range(store_batch *b, const void *begin, size_t bl, const void *end,
                              size_t el)
{
    rocksdb_writebatch_delete_range(b->wb, begin, bl, end, el);
    b->marks.all = 1;
}

int store_batch_count(const store_batch *b)
{
    return rocksdb_writebatch_count(b->wb);
}

void store_batch_clear(store_batch *b)
{
    hooks_run(&b->hooks, b->written);
    rocksdb_writebatch_clear(b->wb);
    marks_clear(&b->marks);
    b->written = 0;
    b->deletes = 0;
}

void store_batch_free(store_batch *b)
{
    if (b == NULL) return;
    hooks_run(&b->hooks, b->written);
    free(b->hooks.at);
    marks_free(&b->marks);
    rocksdb_writebatch_destroy(b->wb);
    free(b);
}

/* Reports e, the error of a write or of a WAL flush, in err (if not NULL) and frees it. */
static int write_failed(qr_err *err, char *e)
{
    if (err) write_error(err, e);
    free(e);
    return -1;
}

/* Notes e (a RocksDB error) as this thread's commit error unless one is noted already. */
static void note_commit_error(const char *e)
{
    if (tl_commit_error == NULL) tl_commit_error = strdup(e); /* described when reported */
}

/* A buffer grown past this by a turn's writes is given back after its commit. */
#define STAGED_KEEP (1u << 20)

/* Writes this thread's staged writes as one batch, and with flush also hands the WAL to
 * the operating system before letting go of the write mutex (the turn's last commit). The
 * stripes' marks end and the hooks and what follows the commit run whether or not the
 * write succeeded, after the staged state is empty again: one of them may write. */
static void commit_staged(int flush, char **e)
{
    struct staged *st = &tl_staged;
    store *s = st->s;
    if (s == NULL) return;
    unsigned char *count = (unsigned char *)st->rep + 8; /* little-endian, as RocksDB keeps it */
    for (int i = 0; i < 4; i++)
        count[i] = (unsigned char)(st->count >> (8 * i));
    rocksdb_writebatch_t *wb = rocksdb_writebatch_create_from(st->rep, st->len);
    pthread_mutex_lock(&s->write_mu);
    atomic_fetch_add(&s->wal_begun, 1);
    rocksdb_write(s->db, s->wopts_nosync, wb, e);
    if (*e) wal_failed(s, e);
    atomic_fetch_add(&s->wal_appended, 1);
    int written = *e == NULL; /* in the store, readable, whether or not the flush below fails */
    if (written && flush) flush_wal(s, e);
    pthread_mutex_unlock(&s->write_mu);
    rocksdb_writebatch_destroy(wb);
    if (*e) note_commit_error(*e);
    if (written) note_deletes(s, st->deletes);
    st->s = NULL;
    st->len = 0;
    st->count = 0;
    st->deletes = 0;
    if (st->cap > STAGED_KEEP) {
        free(st->rep);
        st->rep = NULL;
        st->cap = 0;
    }
    rowcache_write_end(s->rows, st->marks.at, st->marks.n, 0, written);
    marks_clear(&st->marks);
    hook_list hooks = st->hooks;
    st->hooks = (hook_list){0};
    hooks_run(&hooks, written);
    /* Keep the array for the next turn unless what ran staged anew meanwhile. */
    if (st->hooks.at == NULL)
        st->hooks = (hook_list){hooks.at, 0, hooks.cap};
    else
        free(hooks.at);
}

void store_after_commit(store_done_fn fn, void *arg, uint64_t value)
{
    struct staged *st = &tl_staged;
    if (st->s && hooks_add(&st->hooks, (struct batch_hook){fn, arg, value}) == 0) return;
    int written =
        st->s == NULL || store_commit_staged(NULL) == 0; /* out of memory: commit now instead */
    fn(arg, value, written);
}

int store_staged_pending(void)
{
    return tl_staged.s != NULL;
}

int store_commit_staged(qr_err *err)
{
    char *e = NULL;
    commit_staged(0, &e);
    return e ? write_failed(err, e) : 0;
}

/* A thread that ends with writes staged commits them as it goes (but does not flush
 * them: it has answered nothing that depends on them). */
static pthread_key_t staged_key;
static pthread_once_t staged_key_once = PTHREAD_ONCE_INIT;
static __thread int staged_key_set;

static void staged_thread_end(void *unused)
{
    (void)unused;
    char *e = NULL;
    commit_staged(0, &e);
    free(e);
    free(tl_commit_error);
    tl_commit_error = NULL;
    free(tl_staged.rep);
    marks_free(&tl_staged.marks);
    free(tl_staged.hooks.at);
    memset(&tl_staged, 0, sizeof tl_staged);
}

static void staged_key_create(void)
{
    pthread_key_create(&staged_key, staged_thread_end);
}

/* Adds b's records to this thread's staged writes for s, and takes over its marks (begun
 * now) and hooks, leaving b empty. -1 if out of memory, with nothing done. */
static int stage(store *s, store_batch *b)
{
    struct staged *st = &tl_staged;
    size_t n;
    const char *rep = rocksdb_writebatch_data(b->wb, &n);
    size_t need = (st->len ? st->len : 12) + n - 12;
    if (need > st->cap) {
        size_t cap = need < 4096 ? 4096 : 2 * need;
        char *p = realloc(st->rep, cap);
        if (p == NULL) return -1;
        st->rep = p;
        st->cap = cap;
    }
    if (marks_reserve(&st->marks, b->marks.n) || hooks_reserve(&st->hooks, b->hooks.n)) return -1;
    if (!staged_key_set) {
        pthread_once(&staged_key_once, staged_key_create);
        if (pthread_setspecific(staged_key, &staged_key) != 0) return -1;
        staged_key_set = 1;
    }
    if (st->len == 0) {
        memset(st->rep, 0, 12); /* sequence 0 (RocksDB assigns it) and the count, set at commit */
        st->len = 12;
    }
    memcpy(st->rep + st->len, rep + 12, n - 12);
    st->len += n - 12;
    st->count += (uint32_t)rocksdb_writebatch_count(b->wb);
    st->deletes += b->deletes;
    b->deletes = 0;
    st->s = s;
    rowcache_write_begin(s->rows, b->marks.at, b->marks.n, 0);
    marks_move(&st->marks, &b->marks);
    hooks_move(&st->hooks, &b->hooks);
    rocksdb_writebatch_clear(b->wb);
    return 0;
}

static int write_with(store *s, rocksdb_writeoptions_t *wo, store_batch *b, qr_err *err)
{
    char *e = NULL;
    perf_off();
    /* This thread's staged writes go first, so its writes reach the store in the order it
     * made them. */
    commit_staged(0, &e);
    if (e) return write_failed(err, e);
    rowcache_write_begin(s->rows, b->marks.at, b->marks.n, b->marks.all);
    if (s->one_writer) pthread_mutex_lock(&s->write_mu);
    if (s->manual_flush) atomic_fetch_add(&s->wal_begun, 1); /* manual_flush implies one_writer */
    rocksdb_write(s->db, wo, b->wb, &e);
    if (e) wal_failed(s, &e);
    if (s->manual_flush) atomic_fetch_add(&s->wal_appended, 1);
    if (s->one_writer) pthread_mutex_unlock(&s->write_mu);
    rowcache_write_end(s->rows, b->marks.at, b->marks.n, b->marks.all, e == NULL);
    b->written = e == NULL;
    if (e == NULL) note_deletes(s, b->deletes);
    if (e == NULL && s->manual_flush) {
        if (!tl_defer)
            flush_wal(s, &e);
        else
            owe(s, &e);
    }
    if (e) return write_failed(err, e);
    return 0;
}

/* Without syncs, an event loop's single-item writes are staged and committed as one RocksDB
 * write a turn, so the loops do not take (and wait for) RocksDB's write mutex once a
 * request. */
int store_write_staged(store *s, store_batch *b, qr_err *err)
{
    /* A write of every key (a range) is not staged: the row cache follows staged writes
     * key by key. Nor is an empty one. */
    if (!(tl_defer && s->manual_flush) || b->marks.all || store_batch_count(b) == 0)
        return store_write(s, b, err);
    perf_off();
    char *e = NULL;
    if (tl_staged.s && tl_staged.s != s) commit_staged(0, &e); /* one store's writes at a time */
    if (e == NULL) owe(s, &e);
    if (e) return write_failed(err, e);
    if (stage(s, b)) return store_write(s, b, err);
    return 0;
}

void store_defer_flushes(int on)
{
    tl_defer = on;
    if (on) return;
    /* A thread that stops deferring first writes and flushes what it staged or owes. */
    qr_err err;
    err_init(&err);
    store_flush_owed(&err);
    staged_thread_end(NULL);
}

int store_flush_owed_pending(void)
{
    return tl_owed != NULL || tl_staged.s != NULL || tl_commit_error != NULL;
}

int store_flush_owed(qr_err *err)
{
    char *e = NULL;
    store *staged = tl_staged.s;
    commit_staged(1, &e);
    store *s = tl_owed;
    tl_owed = NULL;
    if (e == NULL && s && s != staged) flush_wal(s, &e);
    if (e == NULL && tl_commit_error)
        e = tl_commit_error;
    else
        free(tl_commit_error);
    tl_commit_error = NULL;
    if (e) return write_failed(err, e);
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
        write_error(err, it->flush_error);
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

int store_delete_range(store *s, const void *begin, size_t bl, const void *end, size_t el,
                       qr_err *err)
{
    store_batch *b = store_batch_new();
    if (b == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    store_batch_delete_range(b, begin, bl, end, el);
    int rc = store_write(s, b, err);
    store_batch_free(b);
    return rc;
}
