/* cursor.c — the one read path of items: point reads, range cursors and read views.
 *
 * GetItem, the batch and transactional reads, Query, Scan and the index fetches of the
 * operations above all read items here, and each item read is reported to the hook with
 * its table or index, partition and size, as are the base items a backfill reads.
 * Decoding requests and paging are the callers' part; the engine's own sweeps (TTL,
 * counts, verify) read the store directly. */
#include <stdlib.h>

#include "engine/engine_int.h"

struct range_cursor {
    qr_db *db;
    store_iter *it;
    engine_access a;
    int forward, started;
};

const read_view *read_view_open(qr_db *db)
{
    return (const read_view *)store_snapshot_new(db->st);
}

void read_view_close(qr_db *db, const read_view *v)
{
    if (v) store_snapshot_free(db->st, (const store_snapshot *)v);
}

static void report_read(qr_db *db, const table *t, const buf *key, size_t bytes, int consistent)
{
    if (db->hook == NULL) return;
    engine_access a = {.table = t->name,
                       .partition = key_partition_hash(key->data, key->len),
                       .bytes = bytes,
                       .consistent = consistent};
    engine_report(db, &a);
}

int item_get(qr_db *db, const table *t, const read_view *v, const buf *key, int consistent,
             stored_item *out, qr_err *err)
{
    *out = (stored_item){0};
    int found = item_read_raw(db, (const store_snapshot *)v, key, &out->raw, &out->raw_len, err);
    if (found < 0) return -1;
    if (found && item_stored(out->raw, out->raw_len, &out->json, &out->len, &out->size)) {
        stored_item_free(out);
        return err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    }
    report_read(db, t, key, out->size, consistent);
    return found;
}

int item_get_parsed(qr_db *db, const table *t, const read_view *v, const buf *key, int consistent,
                    json_t **item, qr_err *err)
{
    stored_item s;
    *item = NULL;
    int found = item_get(db, t, v, key, consistent, &s, err);
    if (found == 1 && (*item = item_decode(s.raw, s.raw_len)) == NULL)
        found = err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    stored_item_free(&s);
    return found;
}

void stored_item_free(stored_item *s)
{
    free(s->raw);
    *s = (stored_item){0};
}

range_cursor *cursor_open(qr_db *db, const table *t, const qr_index *ix, const buf *lower,
                          const buf *upper, int forward, int consistent, const read_view *v)
{
    range_cursor *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->db = db;
    c->forward = forward;
    c->a =
        (engine_access){.table = t->name, .index = ix ? ix->name : NULL, .consistent = consistent};
    c->it =
        store_iter_new(db->st, (const store_snapshot *)v, lower ? lower->data : NULL,
                       lower ? lower->len : 0, upper ? upper->data : NULL, upper ? upper->len : 0);
    if (c->it == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

int cursor_next(range_cursor *c, const char **json, size_t *len, size_t *size, qr_err *err)
{
    for (;;) {
        if (!c->started) {
            c->started = 1;
            if (c->forward)
                store_iter_first(c->it);
            else
                store_iter_last(c->it);
        } else if (c->forward) {
            store_iter_next(c->it);
        } else {
            store_iter_prev(c->it);
        }
        if (!store_iter_valid(c->it)) return store_iter_status(c->it, err) ? -1 : 0;
        size_t vl;
        const char *v = store_iter_value(c->it, &vl);
        if (item_stored(v, vl, json, len, size)) continue; /* not an item: passed over */
        if (c->db->hook) {
            size_t kl;
            const char *k = store_iter_key(c->it, &kl);
            c->a.partition = key_partition_hash(k, kl);
            c->a.bytes = *size;
            engine_report(c->db, &c->a);
        }
        return 1;
    }
}

void cursor_set_system(range_cursor *c)
{
    c->a.system = 1;
}

const char *cursor_key(const range_cursor *c, size_t *len)
{
    return store_iter_key(c->it, len);
}

void cursor_close(range_cursor *c)
{
    if (c == NULL) return;
    store_iter_free(c->it);
    free(c);
}
