/* rowcache.h — recently read values of single keys, kept in front of the store's point
 * reads so that a hot item is not looked up in RocksDB's memtable or files every time.
 *
 * A fixed number of slots, each holding at most one key (a key's slot follows from its
 * hash), split into stripes that each have a mutex, a count of writes in progress and a
 * generation. A reader that misses takes a ticket before it reads RocksDB and offers what
 * it read with that ticket; the offer is refused if a write touched the stripe meanwhile,
 * so a value replaced in RocksDB never comes back through the cache. A writer marks each
 * key's stripe before its batch is written and again once it is: in between, readers may
 * still find the old value (the write is not acknowledged yet) but cannot put one back. */
#ifndef QR_ROWCACHE_H
#define QR_ROWCACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rowcache rowcache;

/* A cache of up to `slots` keys whose values are at most max_value bytes, holding at most
 * budget bytes of keys and values. NULL if out of memory. */
rowcache *rowcache_new(size_t slots, size_t max_value, size_t budget);
void rowcache_free(rowcache *c);

uint64_t rowcache_hash(const void *key, size_t len);

/* If key is cached, returns 1 with a malloc'd copy of its value in *val and *vlen (or -1
 * if that copy could not be made). Otherwise returns 0 and sets *ticket for rowcache_offer. */
int rowcache_get(rowcache *c, uint64_t hash, const void *key, size_t kl, char **val, size_t *vlen,
                 uint64_t *ticket);
/* Caches key's value as just read from the store, unless a write has touched its stripe
 * since the ticket was taken (or the value is too large to keep). */
void rowcache_offer(rowcache *c, uint64_t hash, const void *key, size_t kl, const char *val, size_t vlen,
                    uint64_t ticket);

/* Around a write of the keys with these hashes: write_begin before the store writes them,
 * write_end after (whether or not it succeeded). all instead of hashes: every key. */
void rowcache_write_begin(rowcache *c, const uint64_t *hashes, size_t n, int all);
void rowcache_write_end(rowcache *c, const uint64_t *hashes, size_t n, int all);

#endif
