/* test_rowcache.c — the row cache in front of the store's point reads.
 *
 * First the protocol on its own: what is offered is found, what a write touches is
 * forgotten, and an offer whose ticket predates a write (or was taken while one was in
 * progress) is refused. Then the store with the cache under load: writers, each owning a
 * few keys, write increasing numbers and read each one back, while readers check that no
 * key ever goes back to an older number; a stale value served from the cache would show
 * as one or the other. The writers write in three ways: plain puts; puts whose values
 * the cache keeps once written; and, on a store opened with no_sync, such puts staged a
 * few at a time and committed together (store_write_staged), as an event loop does. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/rowcache.h"
#include "storage/store.h"

#include "check.h"

static int cached(rowcache *c, const char *key, const char *want, uint64_t *ticket)
{
    char *v = NULL;
    size_t vl = 0;
    uint64_t t = 0;
    int rc = rowcache_get(c, rowcache_hash(key, strlen(key)), key, strlen(key), &v, &vl, &t);
    int ok = rc == 1 && want && vl == strlen(want) && memcmp(v, want, vl) == 0;
    free(v);
    if (ticket) *ticket = t;
    return rc == 0 ? 0 : ok ? 1 : -1;
}

static void offer(rowcache *c, const char *key, const char *val, uint64_t ticket)
{
    rowcache_offer(c, rowcache_hash(key, strlen(key)), key, strlen(key), val, strlen(val), ticket);
}

/* Two writes of key "a" that keep their values, the second begun before the first ends;
 * the second ends first if second_ends_first. */
static void overlap(rowcache *c, uint64_t hash, int second_ends_first)
{
    rowcache_mark first = {.hash = hash, .keep = rowcache_entry_new("a", 1, "five", 4)};
    rowcache_mark second = {.hash = hash, .keep = rowcache_entry_new("a", 1, "six", 3)};
    rowcache_write_begin(c, &first, 1, 0);
    rowcache_write_begin(c, &second, 1, 0);
    rowcache_write_end(c, second_ends_first ? &second : &first, 1, 0, 1);
    rowcache_write_end(c, second_ends_first ? &first : &second, 1, 0, 1);
}

static void test_protocol(void)
{
    rowcache *c = rowcache_new(1024, 16, 1 << 20);
    CHECK_THAT(c != NULL);
    uint64_t t, t2;
    CHECK_THAT(cached(c, "a", NULL, &t) == 0);
    offer(c, "a", "one", t);
    CHECK_THAT(cached(c, "a", "one", NULL) == 1);
    CHECK_THAT(cached(c, "b", NULL, &t2) == 0);
    offer(c, "b", "a value past sixteen bytes", t2); /* too large to keep */
    CHECK_THAT(cached(c, "b", NULL, NULL) == 0);

    /* A write forgets the key, and a ticket taken before it is refused after it. */
    rowcache_mark m = {.hash = rowcache_hash("a", 1)};
    rowcache_write_begin(c, &m, 1, 0);
    CHECK_THAT(cached(c, "a", NULL, &t2) == 0);
    offer(c, "a", "stale", t2); /* taken while the write was in progress */
    rowcache_write_end(c, &m, 1, 0, 1);
    CHECK_THAT(cached(c, "a", NULL, NULL) == 0);
    CHECK_THAT(cached(c, "a", NULL, &t) == 0);
    rowcache_write_begin(c, &m, 1, 0);
    rowcache_write_end(c, &m, 1, 0, 1);
    offer(c, "a", "stale", t); /* taken before the write */
    CHECK_THAT(cached(c, "a", NULL, NULL) == 0);
    CHECK_THAT(cached(c, "a", NULL, &t) == 0);
    offer(c, "a", "two", t);
    CHECK_THAT(cached(c, "a", "two", NULL) == 1);

    /* A write alone on its slot leaves the value it put; one that failed leaves none. */
    m.keep = rowcache_entry_new("a", 1, "three", 5);
    rowcache_write_begin(c, &m, 1, 0);
    CHECK_THAT(cached(c, "a", NULL, &t) == 0);
    offer(c, "a", "two", t); /* read during the write: refused */
    rowcache_write_end(c, &m, 1, 0, 1);
    CHECK_THAT(m.keep == NULL);
    CHECK_THAT(cached(c, "a", "three", NULL) == 1);
    m.keep = rowcache_entry_new("a", 1, "four", 4);
    rowcache_write_begin(c, &m, 1, 0);
    rowcache_write_end(c, &m, 1, 0, 0);
    CHECK_THAT(cached(c, "a", NULL, NULL) == 0);

    /* Two writes of a key overlapping leave nothing, whichever ends last: either might
     * have reached the store last. */
    overlap(c, m.hash, 0);
    CHECK_THAT(cached(c, "a", NULL, NULL) == 0);
    overlap(c, m.hash, 1);
    CHECK_THAT(cached(c, "a", NULL, NULL) == 0);
    /* ... and a value too large to keep is dropped. */
    m.keep = rowcache_entry_new("a", 1, "a value past sixteen bytes", 26);
    rowcache_write_begin(c, &m, 1, 0);
    rowcache_write_end(c, &m, 1, 0, 1);
    CHECK_THAT(cached(c, "a", NULL, NULL) == 0);

    /* Writes of other keys meanwhile, in other buckets of the same stripe (as an event
     * loop's turn stages a dozen), do not make a write forget what it put. 1024 slots:
     * 512 buckets, and bucket b in stripe b % 256. */
    char other[16];
    uint64_t ha = rowcache_hash("a", 1), ho = 0;
    for (int i = 0; ho == 0 && i < 100000; i++) {
        snprintf(other, sizeof other, "o%d", i);
        uint64_t h = rowcache_hash(other, strlen(other));
        if (h % 512 != ha % 512 && h % 512 % 256 == ha % 512 % 256) ho = h;
    }
    CHECK_THAT(ho != 0);
    rowcache_mark both[2] = {
        {.hash = ha, .keep = rowcache_entry_new("a", 1, "seven", 5)},
        {.hash = ho, .keep = rowcache_entry_new(other, strlen(other), "eight", 5)}};
    rowcache_write_begin(c, &both[0], 1, 0);
    rowcache_write_begin(c, &both[1], 1, 0);
    rowcache_write_end(c, &both[1], 1, 0, 1);
    rowcache_write_end(c, &both[0], 1, 0, 1);
    CHECK_THAT(cached(c, "a", "seven", NULL) == 1);
    CHECK_THAT(cached(c, other, "eight", NULL) == 1);

    /* A bucket holds two keys; a third replaces the one used less recently. */
    char same[2][16];
    int found = 0;
    for (int i = 0; found < 2 && i < 100000; i++) {
        snprintf(same[found], sizeof same[found], "s%d", i);
        found += rowcache_hash(same[found], strlen(same[found])) % 512 == ha % 512;
    }
    CHECK_THAT(found == 2);
    CHECK_THAT(cached(c, same[0], NULL, &t) == 0);
    offer(c, same[0], "nine", t);
    CHECK_THAT(cached(c, "a", "seven", NULL) == 1);
    CHECK_THAT(cached(c, same[0], "nine", NULL) == 1);
    CHECK_THAT(cached(c, "a", "seven", NULL) == 1); /* "a" now the more recent */
    CHECK_THAT(cached(c, same[1], NULL, &t) == 0);
    offer(c, same[1], "ten", t);
    CHECK_THAT(cached(c, same[1], "ten", NULL) == 1);
    CHECK_THAT(cached(c, "a", "seven", NULL) == 1);
    CHECK_THAT(cached(c, same[0], NULL, NULL) == 0);
    /* A write forgets only its own key of the bucket. */
    rowcache_mark ms = {.hash = rowcache_hash(same[1], strlen(same[1]))};
    rowcache_write_begin(c, &ms, 1, 0);
    rowcache_write_end(c, &ms, 1, 0, 1);
    CHECK_THAT(cached(c, same[1], NULL, NULL) == 0);
    CHECK_THAT(cached(c, "a", "seven", NULL) == 1);

    /* A write of every key (a range deleted) forgets them all. */
    CHECK_THAT(cached(c, "d", NULL, &t) == 0);
    offer(c, "d", "four", t);
    CHECK_THAT(cached(c, "d", "four", NULL) == 1);
    rowcache_write_begin(c, NULL, 0, 1);
    rowcache_write_end(c, NULL, 0, 1, 1);
    CHECK_THAT(cached(c, "a", NULL, NULL) == 0);
    CHECK_THAT(cached(c, "d", NULL, NULL) == 0);

    /* The budget bounds what is kept. */
    rowcache *small = rowcache_new(1024, 16, 256 * 64); /* 64 bytes a stripe */
    char key[16];
    int kept = 0;
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        if (cached(small, key, NULL, &t) == 0) offer(small, key, "0123456789abcdef", t);
    }
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        kept += cached(small, key, "0123456789abcdef", NULL) == 1;
    }
    CHECK(kept > 0 && kept <= 256, "kept %d", kept);
    rowcache_free(small);
    rowcache_free(c);
}

/* ---- the store under load ---- */

#define WRITERS 3
#define READERS 3
#define KEYS_EACH 4
#define RUN_MS 1500

typedef struct run {
    store *s;
    atomic_int stop;
    atomic_long writes, reads, stale, unread;
} run;

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void key_of(int k, char out[16])
{
    snprintf(out, 16, "key-%02d", k);
}

/* The number stored at key k, -1 if absent, -2 on error. */
static long read_number(store *s, int k)
{
    char key[16], *v = NULL;
    size_t vl;
    qr_err e;
    err_init(&e);
    key_of(k, key);
    int rc = store_get(s, NULL, key, strlen(key), &v, &vl, &e);
    if (rc <= 0) return rc == 0 ? -1 : -2;
    char text[32];
    snprintf(text, sizeof text, "%.*s", (int)(vl < 31 ? vl : 31), v);
    free(v);
    return atol(text);
}

typedef struct worker {
    run *r;
    int id;
} worker;

/* Writes n to key k in writer w's way; with staging the write waits for the commit. */
static int write_number(const worker *w, int k, long n)
{
    char key[16], val[32];
    key_of(k, key);
    snprintf(val, sizeof val, "%ld", n);
    store_batch *b = store_batch_new();
    if (w->id % 3 == 0)
        store_batch_put(b, key, strlen(key), val, strlen(val));
    else
        store_batch_put_cached(b, key, strlen(key), val, strlen(val));
    qr_err e;
    err_init(&e);
    int rc = w->id % 3 == 2 ? store_write_staged(w->r->s, b, &e) : store_write(w->r->s, b, &e);
    store_batch_free(b);
    return rc;
}

static void *writer_main(void *arg)
{
    worker *w = arg;
    run *r = w->r;
    long n = 0;
    if (w->id % 3 == 2) store_defer_flushes(1);
    while (!atomic_load(&r->stop)) {
        /* A turn: each of its keys written once, then all read back. */
        n++;
        int failed = 0;
        for (int i = 0; i < KEYS_EACH; i++)
            failed |= write_number(w, w->id * KEYS_EACH + i, n) != 0;
        qr_err e;
        err_init(&e);
        if (store_flush_owed_pending()) failed |= store_flush_owed(&e) != 0;
        if (failed) atomic_fetch_add(&r->unread, 1);
        for (int i = 0; i < KEYS_EACH && !failed; i++)
            if (read_number(r->s, w->id * KEYS_EACH + i) != n)
                atomic_fetch_add(&r->stale, 1); /* its own write */
        atomic_fetch_add(&r->writes, KEYS_EACH);
    }
    store_defer_flushes(0);
    return NULL;
}

static void *reader_main(void *arg)
{
    worker *w = arg;
    run *r = w->r;
    long seen[WRITERS * KEYS_EACH];
    for (int k = 0; k < WRITERS * KEYS_EACH; k++)
        seen[k] = -1;
    unsigned x = (unsigned)w->id * 2654435761u + 1;
    while (!atomic_load(&r->stop)) {
        x = x * 1103515245u + 12345u;
        int k = (int)((x >> 8) % (WRITERS * KEYS_EACH));
        long got = read_number(r->s, k);
        if (got == -2)
            atomic_fetch_add(&r->unread, 1);
        else if (got < seen[k])
            atomic_fetch_add(&r->stale, 1); /* went back in time */
        else
            seen[k] = got;
        atomic_fetch_add(&r->reads, 1);
    }
    return NULL;
}

static void test_no_stale_reads(const char *dir, int no_sync)
{
    run r = {0};
    char *msg = NULL;
    store_config sc = {.no_sync = no_sync};
    CHECK(store_open(dir, &sc, &r.s, &msg) == 0, "open: %s", msg ? msg : "");
    if (r.s == NULL) return;
    pthread_t th[WRITERS + READERS];
    worker ws[WRITERS + READERS];
    for (int i = 0; i < WRITERS + READERS; i++) {
        ws[i] = (worker){&r, i < WRITERS ? i : i - WRITERS};
        pthread_create(&th[i], NULL, i < WRITERS ? writer_main : reader_main, &ws[i]);
    }
    long until = now_ms() + RUN_MS;
    while (now_ms() < until) {
        struct timespec pause = {0, 20 * 1000000L};
        nanosleep(&pause, NULL);
    }
    atomic_store(&r.stop, 1);
    for (int i = 0; i < WRITERS + READERS; i++)
        pthread_join(th[i], NULL);
    CHECK(atomic_load(&r.stale) == 0, "%ld stale reads (%ld writes, %ld reads)",
          atomic_load(&r.stale), atomic_load(&r.writes), atomic_load(&r.reads));
    CHECK(atomic_load(&r.unread) == 0, "%ld failed reads or writes", atomic_load(&r.unread));
    CHECK(atomic_load(&r.writes) > 100 && atomic_load(&r.reads) > 100, "%ld writes, %ld reads",
          atomic_load(&r.writes), atomic_load(&r.reads));
    /* A range deleted is forgotten too. */
    store_batch *b = store_batch_new();
    store_batch_delete_range(b, "key-", 4, "key.", 4);
    qr_err e;
    err_init(&e);
    CHECK_THAT(store_write(r.s, b, &e) == 0);
    store_batch_free(b);
    for (int k = 0; k < WRITERS * KEYS_EACH; k++)
        CHECK(read_number(r.s, k) == -1, "key %d survived", k);
    store_close(r.s, NULL);
}

int main(void)
{
    test_protocol();
    char base[] = "/tmp/quarry-rowcache-XXXXXX";
    CHECK_THAT(mkdtemp(base) != NULL);
    char a[64], b[64];
    snprintf(a, sizeof a, "%s/nosync", base);
    snprintf(b, sizeof b, "%s/durable", base);
    test_no_stale_reads(a, 1);
    test_no_stale_reads(b, 0);
    check_remove_tree(base);
    return check_report("test_rowcache");
}
