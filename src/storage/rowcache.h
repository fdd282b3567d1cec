/* rowcache.h — recently read values of single keys, kept in front of the store's point
 * reads so that a hot item is not looked up in RocksDB's memtable or files every time. A
 * value replaced in RocksDB never comes back through the cache. */
#ifndef QR_ROWCACHE_H
#define QR_ROWCACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rowcache rowcache;

/* A fixed number of slots in buckets of two (a key's bucket follows from its hash), each
 * bucket keeping a count of the writes in progress on its keys and a generation; the
 * buckets are split into stripes, each with a mutex and a share of the byte budget.
 *
 * A cache of up to `slots` keys whose values are at most max_value bytes, holding at most
 * budget bytes of keys and values. NULL if out of memory. */
rowcache *rowcache_new(size_t slots, size_t max_value, size_t budget);
void rowcache_free(rowcache *c);

uint64_t rowcache_hash(const void *key, size_t len);

/* A reader that misses takes a ticket before it reads RocksDB and offers what it read with
 * that ticket; the offer is refused if a write touched the bucket meanwhile.
 *
 * If key is cached, returns 1 with a malloc'd copy of its value in *val and *vlen (or -1
 * if that copy could not be made). Otherwise returns 0 and sets *ticket for rowcache_offer. */
int rowcache_get(rowcache *c, uint64_t hash, const void *key, size_t kl, char **val, size_t *vlen,
                 uint64_t *ticket);
/* Caches key's value as just read from the store, unless a write has touched its bucket
 * since the ticket was taken (or the value is too large to keep). */
void rowcache_offer(rowcache *c, uint64_t hash, const void *key, size_t kl, const char *val,
                    size_t vlen, uint64_t ticket);

/* A value a write puts, copied for the cache to keep once the write is in the store
 * (see rowcache_mark). NULL if out of memory. */
typedef struct rowcache_entry rowcache_entry;
rowcache_entry *rowcache_entry_new(const void *key, size_t kl, const void *val, size_t vl);
void rowcache_entry_free(rowcache_entry *e);

/* One key of a write: its hash (rowcache_hash of the key); the bucket's generation as the write
 * began on it (set by rowcache_write_begin); for a put, the value to keep once it is written, or
 * NULL. */
typedef struct rowcache_mark {
    uint64_t hash;
    uint64_t gen;
    rowcache_entry *keep;
} rowcache_mark;

/* A writer marks each key's bucket before its batch is written and again once it is: in
 * between, readers may still find the old value (the write is not acknowledged yet) but
 * cannot put one back. A write that was alone on its bucket leaves the value it put in the
 * cache: an item written is often read or written again next (an update's read of the
 * current item).
 *
 * Around a write of the marked keys: write_begin before the store writes them, write_end
 * after, written saying whether it succeeded. all instead of marks: every key. write_end
 * caches a mark's kept value when the write succeeded and no other write began or ended
 * on the key's bucket in between (so nothing newer can be in the store), and forgets the
 * key otherwise; it frees what it does not keep and sets each keep to NULL. */
void rowcache_write_begin(rowcache *c, rowcache_mark *marks, size_t n, int all);
void rowcache_write_end(rowcache *c, rowcache_mark *marks, size_t n, int all, int written);

#endif
