/* rowcache.c — recently read values of single keys, in front of the store's point reads
 * (see rowcache.h for the protocol that keeps them from going stale). */
#include "storage/rowcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define STRIPES 256
#define WAYS 2
#define NO_TICKET UINT64_MAX

struct rowcache_entry {
    uint64_t hash; /* set as it is cached */
    size_t kl, vl;
    char bytes[]; /* key, then value */
};
typedef struct rowcache_entry entry;

/* The keys whose hashes select it, and the writes on them; under its stripe's mutex.
 * Two ways rather than one slot per hash, and writes counted per bucket rather than per
 * stripe: with one slot per hash another key on the slot, and with a count per stripe
 * another write on the stripe (each event loop's turn stages a dozen), would make a write
 * forget what it put, sending the next PutItem's read of the item to RocksDB. */
typedef struct bucket {
    entry *way[WAYS];
    uint64_t gen;         /* moves on every write_begin and write_end */
    unsigned writing;     /* writes begun and not ended */
    unsigned char recent; /* the way last found or filled: the other one is replaced first */
} bucket;

typedef struct stripe {
    pthread_mutex_t mu;
    size_t bytes; /* held by the entries of its buckets */
} stripe;

struct rowcache {
    size_t nbuckets, max_value, stripe_budget;
    bucket *buckets;
    stripe stripes[STRIPES];
};

rowcache *rowcache_new(size_t slots, size_t max_value, size_t budget)
{
    rowcache *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->nbuckets = slots / WAYS ? slots / WAYS : 1;
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    if (c->buckets == NULL) {
        free(c);
        return NULL;
    }
    c->max_value = max_value;
    c->stripe_budget = budget / STRIPES;
    for (int i = 0; i < STRIPES; i++)
        pthread_mutex_init(&c->stripes[i].mu, NULL);
    return c;
}

void rowcache_free(rowcache *c)
{
    if (c == NULL) return;
    for (size_t i = 0; i < c->nbuckets; i++)
        for (int w = 0; w < WAYS; w++)
            free(c->buckets[i].way[w]);
    for (int i = 0; i < STRIPES; i++)
        pthread_mutex_destroy(&c->stripes[i].mu);
    free(c->buckets);
    free(c);
}

uint64_t rowcache_hash(const void *key, size_t len)
{
    return XXH3_64bits(key, len);
}

static size_t bucket_of(const rowcache *c, uint64_t hash)
{
    return (size_t)(hash % c->nbuckets);
}

static stripe *stripe_of(rowcache *c, size_t b)
{
    return &c->stripes[b % STRIPES];
}

static size_t entry_size(const entry *e)
{
    return sizeof *e + e->kl + e->vl;
}

/* Empties way w of bk; the stripe's mutex is held. */
static void drop_way(stripe *st, bucket *bk, int w)
{
    entry *e = bk->way[w];
    if (e == NULL) return;
    st->bytes -= entry_size(e);
    free(e);
    bk->way[w] = NULL;
}

/* Forgets every key of bk with this hash (a write's mark knows its key by hash alone). */
static void drop_hash(stripe *st, bucket *bk, uint64_t hash)
{
    for (int w = 0; w < WAYS; w++)
        if (bk->way[w] && bk->way[w]->hash == hash) drop_way(st, bk, w);
}

/* Caches e, whose key bk does not hold, in an empty way or else in place of the key used
 * less recently, if the stripe's budget allows once that key is gone. Returns whether it
 * took e. */
static int place(rowcache *c, stripe *st, bucket *bk, entry *e)
{
    int w = 0;
    while (w < WAYS && bk->way[w])
        w++;
    if (w == WAYS) {
        w = !bk->recent;
        drop_way(st, bk, w);
    }
    size_t size = entry_size(e);
    if (st->bytes + size > c->stripe_budget) return 0;
    bk->way[w] = e;
    bk->recent = (unsigned char)w;
    st->bytes += size;
    return 1;
}

int rowcache_get(rowcache *c, uint64_t hash, const void *key, size_t kl, char **val, size_t *vlen,
                 uint64_t *ticket)
{
    size_t b = bucket_of(c, hash);
    bucket *bk = &c->buckets[b];
    stripe *st = stripe_of(c, b);
    pthread_mutex_lock(&st->mu);
    for (int w = 0; w < WAYS; w++) {
        entry *e = bk->way[w];
        if (e && e->hash == hash && e->kl == kl && memcmp(e->bytes, key, kl) == 0) {
            char *copy = malloc(e->vl ? e->vl : 1);
            if (copy) memcpy(copy, e->bytes + kl, e->vl);
            *vlen = e->vl;
            bk->recent = (unsigned char)w;
            pthread_mutex_unlock(&st->mu);
            *val = copy;
            return copy ? 1 : -1;
        }
    }
    *ticket = bk->writing ? NO_TICKET : bk->gen;
    pthread_mutex_unlock(&st->mu);
    return 0;
}

void rowcache_offer(rowcache *c, uint64_t hash, const void *key, size_t kl, const char *val,
                    size_t vlen, uint64_t ticket)
{
    if (ticket == NO_TICKET || vlen > c->max_value) return;
    size_t size = sizeof(entry) + kl + vlen;
    if (size > c->stripe_budget) return;
    size_t b = bucket_of(c, hash);
    bucket *bk = &c->buckets[b];
    stripe *st = stripe_of(c, b);
    entry *e = malloc(size);
    if (e == NULL) return;
    e->hash = hash;
    e->kl = kl;
    e->vl = vlen;
    memcpy(e->bytes, key, kl);
    memcpy(e->bytes + kl, val, vlen);
    pthread_mutex_lock(&st->mu);
    if (bk->writing == 0 && bk->gen == ticket) {
        drop_hash(st, bk, hash); /* another reader's offer of the same value meanwhile */
        if (place(c, st, bk, e)) e = NULL;
    }
    pthread_mutex_unlock(&st->mu);
    free(e);
}

rowcache_entry *rowcache_entry_new(const void *key, size_t kl, const void *val, size_t vl)
{
    entry *e = malloc(sizeof *e + kl + vl);
    if (e == NULL) return NULL;
    e->hash = 0;
    e->kl = kl;
    e->vl = vl;
    memcpy(e->bytes, key, kl);
    if (vl) memcpy(e->bytes + kl, val, vl);
    return e;
}

void rowcache_entry_free(rowcache_entry *e)
{
    free(e);
}

/* A write begins (or ends) on keys of bk: offers made with earlier tickets, or while it
 * lasts, are refused. The stripe's mutex is held. */
static void bucket_mark(bucket *bk, int begin)
{
    if (begin)
        bk->writing++;
    else
        bk->writing--;
    bk->gen++;
}

/* Marks and empties every bucket, on either side of a write of every key. */
static void mark_all(rowcache *c, int begin)
{
    for (int i = 0; i < STRIPES; i++) {
        stripe *st = &c->stripes[i];
        pthread_mutex_lock(&st->mu);
        for (size_t b = (size_t)i; b < c->nbuckets; b += STRIPES) {
            bucket_mark(&c->buckets[b], begin);
            for (int w = 0; w < WAYS; w++)
                drop_way(st, &c->buckets[b], w);
        }
        pthread_mutex_unlock(&st->mu);
    }
}

void rowcache_write_begin(rowcache *c, rowcache_mark *marks, size_t n, int all)
{
    if (all) {
        mark_all(c, 1);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t b = bucket_of(c, marks[i].hash);
        bucket *bk = &c->buckets[b];
        stripe *st = stripe_of(c, b);
        pthread_mutex_lock(&st->mu);
        bucket_mark(bk, 1);
        marks[i].gen = bk->gen;
        drop_hash(st, bk, marks[i].hash);
        pthread_mutex_unlock(&st->mu);
    }
}

void rowcache_write_end(rowcache *c, rowcache_mark *marks, size_t n, int all, int written)
{
    if (all) {
        mark_all(c, 0);
        for (size_t i = 0; i < n; i++) {
            free(marks[i].keep);
            marks[i].keep = NULL;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        entry *keep = marks[i].keep;
        marks[i].keep = NULL;
        size_t b = bucket_of(c, marks[i].hash);
        bucket *bk = &c->buckets[b];
        stripe *st = stripe_of(c, b);
        pthread_mutex_lock(&st->mu);
        /* Alone on the bucket since it began: no other write of this key can have landed
         * after it, nor a reader cached anything meanwhile. */
        int alone = written && bk->writing == 1 && bk->gen == marks[i].gen;
        bucket_mark(bk, 0);
        drop_hash(st, bk, marks[i].hash);
        if (keep && alone && keep->vl <= c->max_value) {
            keep->hash = marks[i].hash;
            if (place(c, st, bk, keep)) keep = NULL;
        }
        pthread_mutex_unlock(&st->mu);
        free(keep);
    }
}
