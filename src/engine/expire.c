/* expire.c — Time to Live: a sweeper thread deletes items whose expiry time has passed.
 * Each deletion goes through the ordinary write path, so indexes follow. The thread starts
 * with the first table (at the open, or when one is created). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_int.h"
#include "model/value.h"
#include "util/deadline.h"

#define SWEEP_CHUNK 256
#define FIVE_YEARS (5LL * 365 * 86400)

static int stopping(qr_db *db)
{
    pthread_mutex_lock(&db->prop_lock);
    int stop = db->prop_stop;
    pthread_mutex_unlock(&db->prop_lock);
    return stop;
}

/* An item expires when its TTL attribute is a number of epoch seconds in the past, but not
 * more than five years in the past, which DynamoDB also leaves alone. Items of other types
 * in the TTL attribute are ignored, as DynamoDB does.
 *
 * True if item's TTL attribute says it has expired at time now. */
static int expired(const json_t *item, const char *attr, const qr_num *now, const qr_num *oldest)
{
    json_t *v = item ? json_object_get(item, attr) : NULL;
    qr_num n;
    if (v == NULL || value_type(v) != QR_T_N || value_number(v, &n)) return 0;
    return num_cmp(&n, now) < 0 && num_cmp(&n, oldest) >= 0;
}

static void seconds(long long s, qr_num *out)
{
    char text[32];
    int len = snprintf(text, sizeof text, "%lld", s);
    qr_err e;
    err_init(&e);
    num_parse(text, (size_t)len, out, &e);
}

/* Re-reads the item under its lock, so a concurrent update that extends the expiry wins.
 *
 * Deletes the item at key if it is still expired. Returns 1 if it was deleted. */
static int expire_one(qr_db *db, table *t, const buf *key, const char *attr, const qr_num *now,
                      const qr_num *oldest)
{
    qr_err e;
    err_init(&e);
    item_txn *x;
    if (txn_begin(db, TXN_ITEM | TXN_SYSTEM, 1, &t, key, &x, &e)) return 0;
    const json_t *item;
    int deleted = 0;
    if (txn_read(x, 0, &item, &e) == 1 && expired(item, attr, now, oldest)) {
        stream_set_service_origin(1); /* the stream record says DynamoDB deleted it */
        deleted = txn_delete(x, 0, &e) == 0 && txn_commit(x, &e) == 0;
        stream_set_service_origin(0);
    }
    txn_end(x);
    err_clear(&e);
    return deleted;
}

static size_t sweep_table(qr_db *db, table *t, const char *attr)
{
    qr_num now, oldest;
    long long clock = (long long)time(NULL);
    seconds(clock, &now);
    seconds(clock - FIVE_YEARS, &oldest);
    buf lo, hi, cursor;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    buf_init(&cursor, 0);
    key_table_prefix(&lo, t, 0);
    key_table_prefix(&hi, t, 1);
    buf_append(&cursor, lo.data, lo.len);
    size_t deleted = 0;
    for (;;) {
        buf keys[SWEEP_CHUNK];
        size_t n = 0;
        int more = 0;
        store_iter *it = store_iter_new(db->st, NULL, cursor.data, cursor.len, hi.data, hi.len);
        for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
            size_t kl, vl;
            const char *k = store_iter_key(it, &kl), *v = store_iter_value(it, &vl);
            buf_reset(&cursor);
            buf_append(&cursor, k, kl);
            buf_putc(&cursor, 0);
            json_t *item = item_decode(v, vl);
            int old = expired(item, attr, &now, &oldest);
            json_decref(item);
            if (!old) continue;
            buf_init(&keys[n], 0);
            buf_append(&keys[n], k, kl);
            if (++n == SWEEP_CHUNK) {
                more = 1;
                break;
            }
        }
        store_iter_free(it);
        for (size_t i = 0; i < n; i++) {
            deleted += (size_t)expire_one(db, t, &keys[i], attr, &now, &oldest);
            buf_free(&keys[i]);
        }
        if (!more || stopping(db)) break;
    }
    buf_free(&lo);
    buf_free(&hi);
    buf_free(&cursor);
    return deleted;
}

size_t expire_sweep(qr_db *db)
{
    json_t *names = catalog_names(db);
    size_t i, deleted = 0;
    json_t *name;
    json_array_foreach(names, i, name)
    {
        table *t = catalog_get(db, json_string_value(name));
        if (t == NULL) continue;
        pthread_mutex_lock(&db->catalog_lock);
        json_t *ttl = json_object_get(t->desc, QR_TTL_FIELD);
        char *attr = ttl ? strdup(json_string_value(json_object_get(ttl, "AttributeName"))) : NULL;
        pthread_mutex_unlock(&db->catalog_lock);
        if (attr) deleted += sweep_table(db, t, attr);
        free(attr);
        catalog_release(db, t);
        if (stopping(db)) break;
    }
    json_decref(names);
    stream_trim(db, (double)time(NULL));
    pitr_trim(db, (double)time(NULL));
    return deleted;
}

/* Visits every table with TTL enabled every ttl_interval_ms, sleeping in between until
 * the next sweep is due or expire_stop wakes it. */
static void *expirer_main(void *arg)
{
    qr_db *db = arg;
    long interval = db->opts.ttl_interval_ms > 0 ? db->opts.ttl_interval_ms : 60000;
    pthread_mutex_lock(&db->prop_lock);
    for (;;) {
        struct timespec due = deadline_after_ms(CLOCK_MONOTONIC, interval);
        while (!db->prop_stop &&
               pthread_cond_timedwait(&db->expire_wake, &db->prop_lock, &due) != ETIMEDOUT)
            ;
        if (db->prop_stop) break;
        pthread_mutex_unlock(&db->prop_lock);
        expire_sweep(db);
        pthread_mutex_lock(&db->prop_lock);
    }
    pthread_mutex_unlock(&db->prop_lock);
    return NULL;
}

int expire_start(qr_db *db)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&db->expire_wake, &ca);
    pthread_condattr_destroy(&ca);
    db->expire_ready = 1;
    return db->ntables ? expire_need(db) : 0;
}

int expire_need(qr_db *db)
{
    if (!db->expire_ready) return 0; /* read-only: nothing is swept */
    int rc = 0;
    pthread_mutex_lock(&db->prop_lock);
    if (!db->expirer_running && !db->prop_stop) {
        rc = pthread_create(&db->expirer, NULL, expirer_main, db) == 0 ? 0 : -1;
        db->expirer_running = rc == 0;
    }
    pthread_mutex_unlock(&db->prop_lock);
    return rc;
}

void expire_stop(qr_db *db)
{
    if (!db->expire_ready) return;
    pthread_mutex_lock(&db->prop_lock);
    db->prop_stop = 1;
    pthread_cond_broadcast(&db->expire_wake);
    int running = db->expirer_running; /* none starts once prop_stop is set */
    pthread_mutex_unlock(&db->prop_lock);
    if (running) pthread_join(db->expirer, NULL);
    db->expirer_running = 0;
    pthread_cond_destroy(&db->expire_wake);
    db->expire_ready = 0;
}
