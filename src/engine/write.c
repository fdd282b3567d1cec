/* write.c — the one write path of base items: the item, its index work, its statistics.
 *
 * Single-item, batch and transactional writes, TTL expiry and nothing else write items,
 * and all of them go through item_stage, so index upkeep, item collection sizes and
 * stream records can never be skipped by one kind of write; item_stage_encoded, which
 * skips them, refuses a table that has any. Locking and conditions are the callers' part. */
#include <pthread.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/pitr.h"
#include "engine/stream.h"
#include "model/value.h"

int item_stage(qr_db *db, table *t, store_batch *b, const buf *key, const json_t *old_item,
               const json_t *new_item, qr_err *err)
{
    return item_stage_sized(db, t, b, key, old_item != NULL, old_item, new_item,
                            new_item ? item_size(new_item) : 0, err);
}

/* An item written over is often written or read again soon (updates, counters), and
 * the row cache keeps its new value; a new item's is not kept, which would cost each
 * insert a copy (engine bench: inserts 4% slower), and its first read caches it. */
static void put_item_value(store_batch *b, const buf *key, int replacing, const buf *val)
{
    if (replacing)
        store_batch_put_cached(b, key->data, key->len, val->data, val->len);
    else
        store_batch_put(b, key->data, key->len, val->data, val->len);
}

int item_stage_sized(qr_db *db, table *t, store_batch *b, const buf *key, int replacing,
                     const json_t *old_item, const json_t *new_item, size_t new_size, qr_err *err)
{
    stats_stage_begin(db, b);
    buf val;
    buf_init(&val, 0);
    if (new_item && item_encode_sized(new_item, new_size, &val)) {
        buf_free(&val);
        return err_set(err, QR_E_INTERNAL, "cannot encode the item");
    }
    if (index_stage(db, t, b, old_item, new_item, new_item ? &val : NULL, err) ||
        stream_stage(db, t, b, old_item, new_item, err) ||
        pitr_stage(db, t, b, old_item, new_item, err)) {
        buf_free(&val);
        return -1;
    }
    if (new_item)
        put_item_value(b, key, replacing, &val);
    else
        store_batch_delete(b, key->data, key->len);
    buf_free(&val);
    return 0;
}

int table_keeps_items_only(const table *t)
{
    return t->nindexes == 0 && !stream_enabled(t) && !pitr_enabled(t);
}

int item_stage_encoded(qr_db *db, const table *t, store_batch *b, const buf *key, int replacing,
                       const buf *val)
{
    if (!table_keeps_items_only(t)) return -1;
    stats_stage_begin(db, b);
    put_item_value(b, key, replacing, val);
    return 0;
}

/* The change a write makes to its table's item count and size. */
static void write_delta(const json_t *old_item, const json_t *new_item, int64_t *items,
                        int64_t *bytes)
{
    int64_t old_size = old_item ? (int64_t)item_size(old_item) : 0;
    int64_t new_size = new_item ? (int64_t)item_size(new_item) : 0;
    *items = (new_item != NULL) - (old_item != NULL);
    *bytes = new_size - old_size;
}

void item_staged_done(table *t, const json_t *old_item, const json_t *new_item)
{
    int64_t items, bytes;
    write_delta(old_item, new_item, &items, &bytes);
    table_stats_adjust(t, items, bytes);
}

static void unlock_stripe(void *m, uint64_t unused, int written)
{
    (void)unused;
    (void)written;
    pthread_mutex_unlock(m);
}

int item_write_locked(qr_db *db, table *t, store_batch *b, pthread_mutex_t **lock, int64_t items,
                      int64_t bytes, qr_err *err)
{
    int rc = store_write_staged(db->st, b, err);
    if (rc == 0) table_stats_adjust_after_commit(t, items, bytes);
    store_after_commit(unlock_stripe, *lock, 0);
    *lock = NULL;
    return rc;
}

int item_write(qr_db *db, table *t, const buf *key, const json_t *old_item, const json_t *new_item,
               pthread_mutex_t **lock, qr_err *err)
{
    if (old_item == NULL && new_item == NULL) return 0;
    store_batch *b = store_batch_new();
    int rc = item_stage(db, t, b, key, old_item, new_item, err);
    if (rc == 0 && lock) {
        int64_t items, bytes;
        write_delta(old_item, new_item, &items, &bytes);
        rc = item_write_locked(db, t, b, lock, items, bytes, err);
    } else if (rc == 0) {
        rc = store_write(db->st, b, err);
        if (rc == 0) item_staged_done(t, old_item, new_item);
    }
    store_batch_free(b);
    return rc;
}
