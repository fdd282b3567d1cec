/* rowcache.c — recently read values of single keys, in front of the store's point reads
 * (see rowcache.h for the protocol that keeps them from going stale). */
#include "storage/rowcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define STRIPES 256
#define NO_TICKET UINT64_MAX

struct rowcache_entry {
    size_t kl, vl;
    char bytes[]; /* key, then value */
};
typedef struct rowcache_entry entry;

typedef struct stripe {
    pthread_mutex_t mu;
    unsigned writing; /* writes begun and not ended on keys of this stripe */
    uint64_t gen;     /* moves on every write_begin and write_end */
    size_t bytes;     /* held by its entries */
} stripe;

struct rowcache {
    size_t nslots, max_value, stripe_budget;
    entry **slots;
    stripe stripes[STRIPES];
};

rowcache *rowcache_new(size_t slots, size_t max_value, size_t budget)
{
    rowcache *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->slots = calloc(slots ? slots : 1, sizeof *c->slots);
    if (c->slots == NULL) {
        free(c);
        return NULL;
    }
    c->nslots = slots ? slots : 1;
    c->max_value = max_value;
    c->stripe_budget = budget / STRIPES;
    for (int i = 0; i < STRIPES; i++) pthread_mutex_init(&c->stripes[i].mu, NULL);
    return c;
}

void rowcache_free(rowcache *c)
{
    if (c == NULL) return;
    for (size_t i = 0; i < c->nslots; i++) free(c->slots[i]);
    for (int i = 0; i < STRIPES; i++) pthread_mutex_destroy(&c->stripes[i].mu);
    free(c->slots);
    free(c);
}

uint64_t rowcache_hash(const void *key, size_t len)
{
    return XXH3_64bits(key, len);
}

static size_t slot_of(const rowcache *c, uint64_t hash)
{
    return (size_t)(hash % c->nslots);
}

static stripe *stripe_of(rowcache *c, size_t slot)
{
    return &c->stripes[slot % STRIPES];
}

/* Empties slot; its stripe's mutex is held. */
static void drop(rowcache *c, stripe *st, size_t slot)
{
    entry *e = c->slots[slot];
    if (e == NULL) return;
    st->bytes -= sizeof *e + e->kl + e->vl;
    free(e);
    c->slots[slot] = NULL;
}

int rowcache_get(rowcache *c, uint64_t hash, const void *key, size_t kl, char **val, size_t *vlen,
                 uint64_t *ticket)
{
    size_t slot = slot_of(c, hash);
    stripe *st = stripe_of(c, slot);
    pthread_mutex_lock(&st->mu);
    entry *e = c->slots[slot];
    if (e && e->kl == kl && memcmp(e->bytes, key, kl) == 0) {
        char *copy = malloc(e->vl ? e->vl : 1);
        if (copy) memcpy(copy, e->bytes + kl, e->vl);
        *vlen = e->vl;
        pthread_mutex_unlock(&st->mu);
        *val = copy;
        return copy ? 1 : -1;
    }
    *ticket = st->writing ? NO_TICKET : st->gen;
    pthread_mutex_unlock(&st->mu);
    return 0;
}

void rowcache_offer(rowcache *c, uint64_t hash, const void *key, size_t kl, const char *val, size_t vlen,
                    uint64_t ticket)
{
    if (ticket == NO_TICKET || vlen > c->max_value) return;
    size_t size = sizeof(entry) + kl + vlen;
    if (size > c->stripe_budget) return;
    size_t slot = slot_of(c, hash);
    stripe *st = stripe_of(c, slot);
    entry *e = malloc(size);
    if (e == NULL) return;
    e->kl = kl;
    e->vl = vlen;
    memcpy(e->bytes, key, kl);
    memcpy(e->bytes + kl, val, vlen);
    pthread_mutex_lock(&st->mu);
    if (st->writing == 0 && st->gen == ticket) {
        drop(c, st, slot);
        if (st->bytes + size <= c->stripe_budget) {
            c->slots[slot] = e;
            st->bytes += size;
            e = NULL;
        }
    }
    pthread_mutex_unlock(&st->mu);
    free(e);
}

rowcache_entry *rowcache_entry_new(const void *key, size_t kl, const void *val, size_t vl)
{
    entry *e = malloc(sizeof *e + kl + vl);
    if (e == NULL) return NULL;
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

/* A write begins (or ends) on keys of st: offers made with earlier tickets, or while it
 * lasts, are refused. st's mutex is held. */
static void stripe_mark(stripe *st, int begin)
{
    if (begin) st->writing++;
    else st->writing--;
    st->gen++;
}

/* Marks every stripe and empties every slot, on either side of a write of every key. */
static void mark_all(rowcache *c, int begin)
{
    for (int i = 0; i < STRIPES; i++) {
        stripe *st = &c->stripes[i];
        pthread_mutex_lock(&st->mu);
        stripe_mark(st, begin);
        for (size_t slot = (size_t)i; slot < c->nslots; slot += STRIPES) drop(c, st, slot);
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
        size_t slot = slot_of(c, marks[i].hash);
        stripe *st = stripe_of(c, slot);
        pthread_mutex_lock(&st->mu);
        stripe_mark(st, 1);
        marks[i].gen = st->gen;
        drop(c, st, slot);
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
        size_t slot = slot_of(c, marks[i].hash);
        stripe *st = stripe_of(c, slot);
        size_t size = keep ? sizeof *keep + keep->kl + keep->vl : 0;
        pthread_mutex_lock(&st->mu);
        /* Alone on the stripe since it began: no other write of this key can have
         * landed after it, nor a reader cached anything meanwhile. */
        int alone = written && st->writing == 1 && st->gen == marks[i].gen;
        stripe_mark(st, 0);
        drop(c, st, slot);
        if (keep && alone && keep->vl <= c->max_value && st->bytes + size <= c->stripe_budget) {
            c->slots[slot] = keep;
            st->bytes += size;
            keep = NULL;
        }
        pthread_mutex_unlock(&st->mu);
        free(keep);
    }
}
