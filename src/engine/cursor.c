/* cursor.c — the one read path of items: point reads, range cursors and read views.
 *
 * GetItem, the batch and transactional reads, Query, Scan and the index fetches of the
 * operations above all read items here, and each item read is reported to the hook with
 * its table or index, partition and size, as are the base items a backfill reads.
 * Decoding requests and paging are the callers' part; the engine's own sweeps (TTL,
 * counts, verify) read the store directly. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

struct range_cursor {
    qr_db *db;
    const table *t;
    const qr_index *ix;
    store_iter *it;
    engine_access a;
    int forward, started;
    int metered;      /* a request's read of a metered table: admitted and charged */
    int in_partition; /* the bounds lie in one partition, of hash a.partition */
    buf lower;        /* then the lower bound, for a refusal's report */
    size_t bytes;     /* read so far, charged at cursor_close */
    size_t page;      /* what the item last returned counts toward a page */
    int by_item;      /* each item's partition is charged as it is read (a Scan, or a
                         Query of a partition key split by sort key) */
    double charged;   /* what by_item has charged so far */
};

const read_view *read_view_open(qr_db *db)
{
    return (const read_view *)store_snapshot_new(db->st);
}

void read_view_close(qr_db *db, const read_view *v)
{
    if (v) store_snapshot_free(db->st, (const store_snapshot *)v);
}

static void report_read(qr_db *db, const table *t, const buf *key, size_t bytes, int consistent,
                        int transactional)
{
    if (!engine_watched(db)) return;
    engine_access a = {.table = t->name,
                       .partition = key_partition_hash(key->data, key->len),
                       .bytes = bytes,
                       .consistent = consistent,
                       .transactional = transactional,
                       .key = key->data,
                       .key_len = key->len};
    engine_report(db, &a);
}

int item_get(qr_db *db, const table *t, const read_view *v, const buf *key, int consistent,
             stored_item *out, qr_err *err)
{
    *out = (stored_item){0};
    if (t->meters &&
        capacity_admit_read(db, t, NULL, 1, key_partition_hash(key->data, key->len), key, err))
        return -1;
    int found = item_read_raw(db, (const store_snapshot *)v, key, &out->raw, &out->raw_len, err);
    if (found < 0) return -1;
    if (found && item_stored(out->raw, out->raw_len, &out->json, &out->len, &out->size)) {
        stored_item_free(out);
        return err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    }
    /* A point read from a view is TransactGetItems': charged twice, as DynamoDB does. */
    report_read(db, t, key, out->size, consistent, v != NULL);
    if (t->meters)
        capacity_charge(db, t, NULL, 0, key->data, key->len,
                        meter_read_units(out->size, consistent) * (v ? 2.0 : 1.0));
    return found;
}

int item_get_system(qr_db *db, const table *t, const buf *key, stored_item *out, qr_err *err)
{
    (void)t;
    *out = (stored_item){0};
    int found = item_read_raw(db, NULL, key, &out->raw, &out->raw_len, err);
    if (found < 0) return -1;
    if (found && item_stored(out->raw, out->raw_len, &out->json, &out->len, &out->size)) {
        stored_item_free(out);
        return err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    }
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
    c->t = t;
    c->ix = ix;
    c->metered = t->meters != NULL;
    c->forward = forward;
    c->a =
        (engine_access){.table = t->name, .index = ix ? ix->name : NULL, .consistent = consistent};
    /* A Query's bounds share their partition key, and with it the hash after the prefix. */
    if (lower && upper && lower->len >= 15 && upper->len >= 15 &&
        memcmp(lower->data + 7, upper->data + 7, 8) == 0) {
        c->in_partition = 1;
        c->a.partition = key_partition_hash(lower->data, lower->len);
        buf_init(&c->lower, 0);
        buf_append(&c->lower, lower->data, lower->len);
    }
    c->it =
        store_iter_new(db->st, (const store_snapshot *)v, lower ? lower->data : NULL,
                       lower ? lower->len : 0, upper ? upper->data : NULL, upper ? upper->len : 0);
    if (c->it == NULL) {
        if (c->in_partition) buf_free(&c->lower);
        free(c);
        return NULL;
    }
    return c;
}

int cursor_next(range_cursor *c, const char **json, size_t *len, size_t *size, qr_err *err)
{
    for (;;) {
        if (!c->started) {
            if (c->metered &&
                capacity_admit_read(c->db, c->t, c->ix, c->in_partition, c->a.partition,
                                    c->in_partition ? &c->lower : NULL, err))
                return -1;
            c->started = 1;
            c->by_item = c->metered &&
                         (!c->in_partition || capacity_sort_key_split(c->t, c->ix, c->a.partition));
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
        c->bytes += *size;
        c->page = item_stored_page(v, vl);
        if (engine_watched(c->db) || c->metered) {
            size_t kl;
            const char *k = store_iter_key(c->it, &kl);
            c->a.partition = key_partition_hash(k, kl);
            c->a.bytes = *size;
            c->a.key = k;
            c->a.key_len = kl;
            engine_report(c->db, &c->a);
            /* Each partition a Scan passes, or a Query of a partition key split by sort
             * key, bears what was read there; the table bears the total, rounded once,
             * at cursor_close. */
            if (c->by_item) {
                double units = (double)*size / 4096.0 * (c->a.consistent ? 1.0 : 0.5);
                capacity_charge_partition(c->db, c->t, c->ix, 0, k, kl, units);
                c->charged += units;
            }
        }
        return 1;
    }
}

void cursor_set_system(range_cursor *c)
{
    c->a.system = 1;
    c->metered = 0; /* the engine's own reads cost no one capacity */
}

const char *cursor_key(const range_cursor *c, size_t *len)
{
    return store_iter_key(c->it, len);
}

size_t cursor_page_size(const range_cursor *c)
{
    return c->page;
}

void cursor_close(range_cursor *c)
{
    if (c == NULL) return;
    /* A Query's partition bears its total; one split by sort key bears item by item
     * what was read in each part, and the range of the lower bound what rounding adds. */
    if (c->started && c->metered) {
        double units = meter_read_units(c->bytes, c->a.consistent);
        if (!c->by_item) {
            capacity_charge(c->db, c->t, c->ix, 0, c->in_partition ? c->lower.data : NULL,
                            c->in_partition ? c->lower.len : 0, units);
        } else {
            capacity_charge(c->db, c->t, c->ix, 0, NULL, 0, units);
            if (c->in_partition && units > c->charged)
                capacity_charge_partition(c->db, c->t, c->ix, 0, c->lower.data, c->lower.len,
                                          units - c->charged);
        }
    }
    store_iter_free(c->it);
    if (c->in_partition) buf_free(&c->lower);
    free(c);
}
