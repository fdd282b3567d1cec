/* pitr.c — point-in-time recovery's history: while a table's PITR is enabled, each write
 * that changes one of its items also writes, in the same batch, what the item was before.
 * Records past the recovery period are trimmed by the expiry sweeper; disabling PITR or
 * deleting the table drops them. */
#include "engine/pitr.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "util/jsonread.h"

/* A record:
 *     "\0P" | be32 table id | be64 time (ms) | be64 sequence  ->  {"K": key, "O": old item}
 * ("O" absent when the write created the item). */
#define RECORD_KEY_LEN (QR_PITR_PREFIX_LEN + 4 + 8 + 8)
#define LATEST_LAG                                                                                 \
    300.0 /* DynamoDB's latest restorable time trails the present by five minutes                  \
           */

static void table_prefix(buf *k, uint32_t id)
{
    buf_append(k, QR_PITR_PREFIX, QR_PITR_PREFIX_LEN);
    buf_put_be32(k, id);
}

int pitr_enabled(const table *t)
{
    return json_is_true(json_object_get(json_object_get(t->desc, QR_PITR_FIELD), "Enabled"));
}

int pitr_window(const json_t *pitr, double now, double *earliest, double *latest)
{
    if (!json_is_true(json_object_get(pitr, "Enabled"))) return -1;
    json_int_t days = json_integer_value(json_object_get(pitr, "RecoveryPeriodInDays"));
    double since = json_number_value(json_object_get(pitr, "Since"));
    *earliest = now - (double)days * 86400.0;
    if (since > *earliest) *earliest = since;
    *latest = now - LATEST_LAG > *earliest ? now - LATEST_LAG : *earliest;
    return 0;
}

int pitr_stage(qr_db *db, const table *t, store_batch *b, const json_t *old_item,
               const json_t *new_item, qr_err *err)
{
    (void)db;
    if (!pitr_enabled(t) || (old_item == NULL && new_item == NULL)) return 0;
    json_t *rec = json_pack("{s:o}", "K", key_of_item(t, old_item ? old_item : new_item));
    if (rec && old_item) json_object_set(rec, "O", (json_t *)old_item);
    char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
    json_decref(rec);
    if (text == NULL)
        return err_set(err, QR_E_INTERNAL, "cannot encode a point-in-time recovery record");
    buf k;
    buf_init(&k, 0);
    table_prefix(&k, t->id);
    buf_put_be64(&k, (uint64_t)(engine_now_seconds() * 1000.0));
    buf_put_be64(&k, __atomic_fetch_add(&db->pitr_seq, 1, __ATOMIC_RELAXED));
    store_batch_put(b, k.data, k.len, text, strlen(text));
    buf_free(&k);
    free(text);
    return 0;
}

/* The table at a past time T is its present state with every item changed since T put back
 * as the first record after T holds it; a restore applies that to a snapshot, so writes
 * after the snapshot are either already undone by an earlier record or undo nothing the
 * snapshot had. */
int pitr_changes_since(qr_db *db, uint32_t id, double when, json_t **changes, qr_err *err)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    table_prefix(&lo, id);
    buf_put_be64(&lo, (uint64_t)(when * 1000.0) + 1); /* records of the millisecond after when */
    table_prefix(&hi, id + 1);
    *changes = json_object();
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t kl, vl;
        store_iter_key(it, &kl);
        const char *v = store_iter_value(it, &vl);
        if (kl != RECORD_KEY_LEN) continue;
        json_t *rec = json_read(v, vl, JSON_ALLOW_NUL, NULL);
        char *key =
            rec ? json_dumps(json_object_get(rec, "K"), JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        /* The first record after the time holds the item as it was then. */
        if (key && json_object_get(*changes, key) == NULL) json_object_set(*changes, key, rec);
        free(key);
        json_decref(rec);
    }
    int rc = store_iter_status(it, err);
    store_iter_free(it);
    buf_free(&lo);
    buf_free(&hi);
    if (rc) {
        json_decref(*changes);
        *changes = NULL;
    }
    return rc;
}

int pitr_changes_between(qr_db *db, uint32_t id, uint64_t from_ms, uint64_t to_ms, json_t **changes,
                         qr_err *err)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    table_prefix(&lo, id);
    buf_put_be64(&lo, from_ms);
    if (to_ms == UINT64_MAX) {
        table_prefix(&hi, id + 1);
    } else {
        table_prefix(&hi, id);
        buf_put_be64(&hi, to_ms);
    }
    *changes = json_object();
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t kl, vl;
        const unsigned char *k = (const unsigned char *)store_iter_key(it, &kl);
        const char *v = store_iter_value(it, &vl);
        if (kl != RECORD_KEY_LEN) continue;
        uint64_t ms = 0;
        for (int i = 0; i < 8; i++)
            ms = ms << 8 | k[QR_PITR_PREFIX_LEN + 4 + i];
        json_t *rec = json_read(v, vl, JSON_ALLOW_NUL, NULL);
        char *key =
            rec ? json_dumps(json_object_get(rec, "K"), JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_t *seen = key ? json_object_get(*changes, key) : NULL;
        if (key && seen == NULL) json_object_set(*changes, key, seen = rec);
        if (seen) json_object_set_new(seen, "T", json_integer((json_int_t)ms));
        free(key);
        json_decref(rec);
    }
    int rc = store_iter_status(it, err);
    store_iter_free(it);
    buf_free(&lo);
    buf_free(&hi);
    if (rc) {
        json_decref(*changes);
        *changes = NULL;
    }
    return rc;
}

/* Adds to b the deletion of table id's records stamped before cutoff_ms (all of them
 * when cutoff_ms is UINT64_MAX). */
static void stage_cut(store_batch *b, uint32_t id, uint64_t cutoff_ms)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    table_prefix(&lo, id);
    if (cutoff_ms == UINT64_MAX) {
        table_prefix(&hi, id + 1);
    } else {
        table_prefix(&hi, id);
        buf_put_be64(&hi, cutoff_ms);
    }
    store_batch_delete_range(b, lo.data, lo.len, hi.data, hi.len);
    buf_free(&lo);
    buf_free(&hi);
}

void pitr_stage_drop(store_batch *b, uint32_t id)
{
    stage_cut(b, id, UINT64_MAX);
}

int pitr_drop(qr_db *db, uint32_t id, qr_err *err)
{
    store_batch *b = store_batch_new();
    pitr_stage_drop(b, id);
    int rc = store_write(db->st, b, err);
    store_batch_free(b);
    return rc;
}

void pitr_trim(qr_db *db, double now)
{
    store_batch *b = store_batch_new();
    pthread_mutex_lock(&db->catalog_lock);
    for (size_t i = 0; i < db->ntables; i++) {
        const table *t = db->tables[i];
        const json_t *pitr = json_object_get(t->desc, QR_PITR_FIELD);
        double earliest, latest;
        if (pitr_window(pitr, now, &earliest, &latest) == 0)
            stage_cut(b, t->id, (uint64_t)(earliest * 1000.0));
    }
    pthread_mutex_unlock(&db->catalog_lock);
    qr_err e;
    err_init(&e);
    store_write(db->st, b, &e); /* a trim that fails is done at the next sweep */
    err_clear(&e);
    store_batch_free(b);
}
