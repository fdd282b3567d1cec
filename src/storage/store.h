/* store.h — the ordered, durable key-value store under quarry: a thin layer on RocksDB, and
 * the only module that includes rocksdb/c.h. It knows nothing of tables or items: keys and
 * values are opaque bytes. */
#ifndef QR_STORE_H
#define QR_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef struct store store;
typedef struct store_batch store_batch;
typedef struct store_iter store_iter;
typedef struct store_snapshot store_snapshot;

/* The memory budget when none is given: 256 MB. */
#define STORE_DEFAULT_CACHE ((size_t)256 << 20)
/* The smallest budget store_open accepts: 8 MB. */
#define STORE_MIN_CACHE ((size_t)8 << 20)

typedef struct store_config {
    int no_sync;   /* writes are acknowledged before the WAL is fsync'd */
    int read_only; /* opens what exists, without taking its lock (another process may
                      hold it), as it is at the open, and refuses every write */
    int in_memory; /* in RocksDB's in-memory environment: dir only names it, nothing
                      reaches a file */
    /* One budget, in bytes, for what the store keeps in memory: the memtables (two of
     * cache_bytes / 16, at most 8 MB each), the row cache (cache_bytes / 8) and RocksDB's
     * block cache (the rest, which also holds the files' index and filter blocks). 0:
     * STORE_DEFAULT_CACHE; less than STORE_MIN_CACHE counts as that. */
    size_t cache_bytes;
} store_config;

/* Opens or creates the store in dir as cfg says, creating dir's missing parents too. On
 * failure returns -1 and sets *errmsg (malloc'd), which, when another process holds dir,
 * names that process.
 *
 * Deletes are kept from piling up as tombstones that reads step over: a range that a
 * range deletion emptied (store_compact_range) is compacted in the background, and once
 * STORE_DELETE_FLUSH point deletes have reached the memtable it is flushed, so that
 * RocksDB's compact-on-deletion collector marks the files dense with deletes and its
 * compactions drop them. That work runs on one thread, made when there is some to do
 * and gone after a while without. */
int store_open(const char *dir, const store_config *cfg, store **out, char **errmsg);

/* The point deletes that make the store flush its memtable (see store_open). */
#define STORE_DELETE_FLUSH 4096

/* Compacts [begin, end) in the background: for a range emptied by a range deletion (a
 * dropped table or index), so that its space comes back and reads no longer meet the
 * deletion. Returns at once; -1 if out of memory (nothing is lost: the range is compacted
 * by RocksDB in time). */
int store_compact_range(store *s, const void *begin, size_t bl, const void *end, size_t el);
/* Waits until the background work is done: what store_open's maintenance was asked so far
 * (flushes and range compactions for deletes), then RocksDB's own flushes and the
 * compactions it runs or still owes. For tests and benchmarks that measure a settled
 * store. 0, or -1 if work was still running after timeout_ms. */
int store_settle(store *s, int timeout_ms);
/* Closes the store, first writing what this thread staged and handing the WAL to the
 * operating system. Returns 0, or -1 when a write to the WAL failed while it was open (a
 * full disk, say: what failed was never acknowledged) or that last write did, and sets
 * *errmsg (malloc'd) to the first such failure if errmsg is not NULL. s may be NULL. */
int store_close(store *s, char **errmsg);

/* Reads key. Returns 1 and sets *val (malloc'd, caller frees with free()) and *vlen if
 * found, 0 if not found, -1 on a storage error (err set). snap may be NULL. */
int store_get(store *s, const store_snapshot *snap, const void *key, size_t klen, char **val,
              size_t *vlen, qr_err *err);
/* store_get of the current value by a writer about to replace it: what it reads is not
 * kept in the row cache, which the write would empty again at once. */
int store_get_before_write(store *s, const void *key, size_t klen, char **val, size_t *vlen,
                           qr_err *err);

store_batch *store_batch_new(void);
void store_batch_put(store_batch *b, const void *k, size_t kl, const void *v, size_t vl);
/* A put of a key that store_get reads (an item): once written, its value stays in the
 * row cache, so that the next read of the key, or the next write's read of it, finds it
 * there instead of in RocksDB. */
void store_batch_put_cached(store_batch *b, const void *k, size_t kl, const void *v, size_t vl);
void store_batch_delete(store_batch *b, const void *k, size_t kl);
void store_batch_delete_range(store_batch *b, const void *begin, size_t bl, const void *end,
                              size_t el);
int store_batch_count(const store_batch *b);
void store_batch_clear(store_batch *b);
void store_batch_free(store_batch *b);
/* What must follow a write (a stream's hold on a sequence number, an item's lock, its
 * statistics): fn(arg, value, written), written saying whether the write's records
 * reached the store (even if the WAL's flush then failed: the turn's answers report
 * that). fn must not write: it may run inside a commit, out of order with it. */
typedef void (*store_done_fn)(void *arg, uint64_t value, int written);
/* Calls fn once b's write is over, written or not: when b is freed or cleared, or for a
 * staged b (store_write_staged), after the commit that writes it. -1 if out of memory. */
int store_batch_on_done(store_batch *b, store_done_fn fn, void *arg, uint64_t value);
/* Writes one key, durably as store_write does (catalog and descriptor records). */
int store_put(store *s, const void *k, size_t kl, const void *v, size_t vl, qr_err *err);
/* Deletes every key in [begin, end), durably as store_write does. */
int store_delete_range(store *s, const void *begin, size_t bl, const void *end, size_t el,
                       qr_err *err);
/* Applies the batch atomically; durable when it returns unless no_sync. RocksDB groups
 * concurrent synchronous writes into one WAL fsync (group commit), so writers on many
 * threads share the cost of durability. */
int store_write(store *s, store_batch *b, qr_err *err);
/* Applies the batch atomically without waiting for the WAL to reach the disk; for work
 * that can be redone from durable state after a crash (index propagation, backfill). */
int store_write_nosync(store *s, store_batch *b, qr_err *err);

/* Staged writes, for a thread that defers flushes (below) on a store opened with no_sync:
 * b's records join the thread's staged writes instead of being written at once, and
 * RocksDB writes all of them as one batch when the thread commits them, which
 * store_flush_owed does, as do the thread's next store_write and store_commit_staged. A
 * thread answering many requests a turn thus takes the write mutex and makes one RocksDB
 * write a turn instead of one a request. Until the commit the writes cannot be read, and
 * b's hooks (store_batch_on_done) wait for it: a caller keeps the keys it wrote locked
 * until then, by handing their unlock to store_after_commit. So that two threads never
 * wait for each other, a thread commits what it staged before it waits for any such lock.
 * b is left empty. Elsewhere this is store_write. */
int store_write_staged(store *s, store_batch *b, qr_err *err);
/* Runs fn once every write this thread made so far is in the store: at once (written 1)
 * when nothing is staged, else right after the commit of the staged writes, after their
 * batches' hooks and in the order asked. For what must follow a write that may be staged:
 * its statistics, its item's unlock, the release of its table. The commit can come
 * inside any later write of the thread (store_write commits what is staged first), so fn
 * must not write, and must not wait for a lock that a thread may hold while it writes:
 * the thread running fn may be the one holding it. */
void store_after_commit(store_done_fn fn, void *arg, uint64_t value);
int store_staged_pending(void);
/* Writes this thread's staged writes now (not flushed: store_flush_owed does that). -1
 * with err set (if not NULL) if they could not be written; store_flush_owed reports it too. */
int store_commit_staged(qr_err *err);

/* Deferred flushes, for a thread that answers several requests at a time: with on set,
 * this thread's writes to a store opened with no_sync stay in RocksDB's WAL buffer, in
 * this process, until store_flush_owed hands them to the operating system together.
 * Until then a crash of the process loses them, so nothing that depends on them may be
 * acknowledged before. store_flush_owed_pending says whether this thread owes a flush:
 * it has written since its last one, or read while another thread's write may still have
 * been in the buffer (answering with what it saw must wait for the flush as well). A
 * thread that does not defer flushes, when it reads such a write, flushes there and then.
 * store_flush_owed commits the thread's staged writes first, and fails if they, or any
 * commit of them since the last store_flush_owed, could not be written. Turning deferral
 * off commits and flushes what is left. Stores opened durably are not affected. */
void store_defer_flushes(int on);
int store_flush_owed_pending(void);
int store_flush_owed(qr_err *err);

/* An iterator over keys in [lower, upper) (either bound may be NULL/0 for open). The
 * bounds are copied. snap may be NULL for the latest state. */
store_iter *store_iter_new(store *s, const store_snapshot *snap, const void *lower, size_t ll,
                           const void *upper, size_t ul);
void store_iter_first(store_iter *it);
void store_iter_last(store_iter *it);
int store_iter_valid(store_iter *it);
void store_iter_next(store_iter *it);
void store_iter_prev(store_iter *it);
/* Borrowed; valid until the iterator moves or is freed. */
const char *store_iter_key(store_iter *it, size_t *len);
const char *store_iter_value(store_iter *it, size_t *len);
/* 0, or -1 with err set if the iterator hit a storage error. */
int store_iter_status(store_iter *it, qr_err *err);
void store_iter_free(store_iter *it);

const store_snapshot *store_snapshot_new(store *s);
void store_snapshot_free(store *s, const store_snapshot *snap);

#endif
