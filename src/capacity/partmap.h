/* partmap.h — the physical partitions of one table or global index: hash ranges of
 * partition keys (and, split for heat, sort-key ranges of one partition key), each with
 * DynamoDB's per-partition read and write ceilings. Private to src/capacity (meter.c
 * holds one, under its lock); it knows nothing of tables or provisioned rates. */
#ifndef QR_PARTMAP_H
#define QR_PARTMAP_H

#include <stddef.h>
#include <stdint.h>

/* How much of a key past its hash is kept to place it among sort-key ranges. */
#define PARTMAP_SUFFIX_MAX 64
/* A meter never holds more partitions than this. */
#define PARTMAP_MAX 4096

typedef struct partmap partmap;
/* One partition covering every key, with full buckets at time now. */
partmap *partmap_new(double now);
void partmap_free(partmap *p);
/* A partition that stays hot (its ceiling more than half used) for split_after seconds
 * splits in two: by hash, isolating a partition key that takes most of its traffic, or,
 * for a range of one partition key when sort_key_splits is set (a table without local
 * indexes, or a global index), by sort key. One item never splits. */
void partmap_configure(partmap *p, double split_after, int sort_key_splits);
/* Splits the widest hash ranges until there are at least n partitions. */
void partmap_grow(partmap *p, unsigned n, double now);
unsigned partmap_count(const partmap *p);
/* 1 when the items of the partition key of hash are split among partitions by sort key. */
int partmap_sort_key_split(const partmap *p, uint64_t hash);
/* The key: its partition hash, and what follows the hash in its stored form (suffix,
 * len; NULL for none), which orders the sort keys of one partition key. */
int partmap_spent(partmap *p, int write, uint64_t hash, const void *suffix, size_t len, double now);
void partmap_charge(partmap *p, int write, uint64_t hash, const void *suffix, size_t len,
                    double units, double now);

#endif
