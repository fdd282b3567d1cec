/* verify.c — qr_verify: does every secondary index hold exactly its base items'
 * projections, and does DescribeTable count what is stored? It only reads; repairing drift
 * is not its job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "util/entrydiff.h"
#include "util/jsonread.h"
#include "util/progress.h"

/* Describes an index entry by the base item it holds. */
static void describe(void *arg, buf *out, const diff_entry *e)
{
    (void)arg;
    const char *json;
    size_t jlen, size;
    if (item_stored(e->val, e->vlen, &json, &jlen, &size) == 0)
        buf_append(out, json, jlen > 200 ? 200 : jlen);
    else
        buf_puts(out, "(undecodable entry)");
}

/* Two stored entries of one key hold the same item: the same bytes, or the same JSON. */
static int same_entry(void *arg, const diff_entry *want, const diff_entry *have)
{
    (void)arg;
    if (want->vlen == have->vlen && memcmp(want->val, have->val, have->vlen) == 0) return 1;
    const char *j1, *j2;
    size_t l1, l2, s1, s2;
    json_t *a = NULL, *b = NULL;
    if (item_stored(want->val, want->vlen, &j1, &l1, &s1) == 0 &&
        item_stored(have->val, have->vlen, &j2, &l2, &s2) == 0) {
        a = json_read(j1, l1, JSON_ALLOW_NUL, NULL);
        b = json_read(j2, l2, JSON_ALLOW_NUL, NULL);
    }
    int same = a && b && json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return same;
}

/* The entries an index holds, from the store in key order, summing their sizes. */
typedef struct held_entries {
    store_iter *it;
    int started;
    int64_t bytes;
} held_entries;

static int next_held(void *arg, diff_entry *e)
{
    held_entries *h = arg;
    if (h->started)
        store_iter_next(h->it);
    else
        store_iter_first(h->it);
    h->started = 1;
    if (!store_iter_valid(h->it)) return 0;
    e->key = (char *)store_iter_key(h->it, &e->klen);
    e->val = (char *)store_iter_value(h->it, &e->vlen);
    const char *json;
    size_t jlen, size;
    if (item_stored(e->val, e->vlen, &json, &jlen, &size) == 0) h->bytes += (int64_t)size;
    return 1;
}

/* Compares the counts kept for t's id (if known) with those stored; returns 1 if they
 * differ. Stored entries that are not stored items count as verify_index's
 * differences, not here: count_stored skips them too. */
static size_t check_stats(table *t, uint16_t id, const char *what, int64_t items, int64_t bytes,
                          buf *report)
{
    int64_t kept_items, kept_bytes;
    if (!stats_peek(t, id, &kept_items, &kept_bytes) ||
        (kept_items == items && kept_bytes == bytes))
        return 0;
    buf_printf(report,
               "  %s%s%s: DescribeTable counts %lld items of %lld bytes, %lld items of %lld bytes "
               "are stored\n",
               t->name, id ? "." : "", id ? what : "", (long long)kept_items, (long long)kept_bytes,
               (long long)items, (long long)bytes);
    return 1;
}

/* Compares the ItemCount and size kept in memory (when known) with the stored ones.
 *
 * Counts the base items of t and compares them with the counts kept. */
static size_t verify_table_stats(qr_db *db, table *t, buf *report)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    key_table_prefix(&lo, t, 0);
    key_table_prefix(&hi, t, 1);
    int64_t items = 0, bytes = 0;
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t vl, jlen, size;
        const char *v = store_iter_value(it, &vl), *json;
        if (item_stored(v, vl, &json, &jlen, &size) == 0) {
            items++;
            bytes += (int64_t)size;
        }
    }
    store_iter_free(it);
    buf_free(&lo);
    buf_free(&hi);
    return check_stats(t, 0, "", items, bytes, report);
}

typedef struct want_ctx {
    const table *t;
    const qr_index *ix;
    diff_set *want;
    buf *val;
} want_ctx;

/* Adds one entry a base item should have (a multi-valued index's item has several). */
static int want_entry(void *arg, const buf *key, const json_t *entry_item)
{
    want_ctx *w = arg;
    json_t *p = index_project(w->t, w->ix, entry_item);
    buf_reset(w->val);
    item_encode(w->t, p, w->val);
    json_decref(p);
    return diff_set_add(w->want, key->data, key->len, w->val->data, w->val->len) != 0;
}

/* After the propagation log drains, the index's expected entries are computed from the base
 * table, sorted, and compared in one merge pass with the entries actually stored. Missing,
 * stale and differing entries are each reported with the item's key.
 *
 * Checks one index; appends findings to report and returns the number of differences. */
static size_t verify_index(qr_db *db, table *t, qr_index *ix, buf *report)
{
    diff_set want = {0};
    size_t diffs = 0, have_count = 0;
    buf lo, hi, ek, val;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    buf_init(&ek, 0);
    buf_init(&val, 0);
    key_table_prefix(&lo, t, 0);
    key_table_prefix(&hi, t, 1);
    qr_err e;
    err_init(&e);
    int oom = 0;
    char what[300];
    snprintf(what, sizeof what, "verify of %s.%s", t->name, ix->name);
    progress meter;
    progress_start(&meter, what, (uint64_t)table_item_count(db, t), progress_now(),
                   engine_progress_sink, db);
    uint64_t seen = 0;
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    for (store_iter_first(it); !oom && store_iter_valid(it); store_iter_next(it)) {
        size_t vl;
        const char *v = store_iter_value(it, &vl);
        json_t *item = item_decode(v, vl);
        if (item == NULL) continue;
        want_ctx wc = {t, ix, &want, &val};
        oom = index_each_entry(t, ix, item, want_entry, &wc, &e) != 0;
        err_clear(&e);
        json_decref(item);
        if ((++seen & 1023) == 0) progress_update(&meter, seen, progress_now());
    }
    store_iter_free(it);
    if (oom) { /* the index is not compared: say so, and count it as unconfirmed */
        buf_printf(report, "  %s.%s: out of memory after %zu base entries; index not checked\n",
                   t->name, ix->name, want.n);
        diffs = 1;
        goto done;
    }
    diff_set_sort(&want);
    buf_reset(&lo);
    buf_reset(&hi);
    key_table_prefix(&lo, t, ix->id);
    key_table_prefix(&hi, t, (uint16_t)(ix->id + 1));
    held_entries held = {store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len), 0, 0};
    diff_ops ops = {same_entry, describe, next_held, &held};
    char name[300];
    snprintf(name, sizeof name, "%s.%s", t->name, ix->name);
    diffs = diff_merge(&want, &ops, name, report, &have_count);
    store_iter_free(held.it);
    diffs += check_stats(t, ix->id, ix->name, (int64_t)have_count, held.bytes, report);
    diff_summary(report, t->name, ix->name, want.n, have_count, diffs);
    progress_update(&meter, seen, progress_now());
    progress_finish(&meter, progress_now());
done:
    diff_set_free(&want);
    buf_free(&lo);
    buf_free(&hi);
    buf_free(&ek);
    buf_free(&val);
    return diffs;
}

int qr_verify(qr_db *db, const char *table_name, char **report)
{
    buf out;
    buf_init(&out, 0);
    if (db->opts.read_only) { /* the process that holds the data applies them, not us */
        uint64_t pending = propagate_log_records(db);
        if (pending)
            buf_printf(&out,
                       "warning: %llu global index update%s pending in the data as read; the "
                       "entries %s change may show as differences\n",
                       (unsigned long long)pending, pending == 1 ? " was" : "s were",
                       pending == 1 ? "it would" : "they would");
    } else if (propagate_drain(db, 60000)) {
        buf_puts(&out, "warning: index propagation did not drain within 60 s\n");
    }
    json_t *names = catalog_names(db);
    size_t diffs = 0, checked = 0, i;
    json_t *n;
    int found = table_name == NULL;
    json_array_foreach(names, i, n)
    {
        if (table_name && strcmp(table_name, json_string_value(n))) continue;
        found = 1;
        table *t = catalog_get(db, json_string_value(n));
        if (t == NULL) continue;
        diffs += verify_table_stats(db, t, &out);
        if (t->nindexes == 0) buf_printf(&out, "%s: no secondary indexes\n", t->name);
        for (size_t k = 0; k < t->nindexes; k++) {
            diffs += verify_index(db, t, &t->indexes[k], &out);
            checked++;
        }
        catalog_release(db, t);
    }
    json_decref(names);
    if (!found) {
        buf_printf(&out, "no table named %s\n", table_name);
        diffs++;
    }
    buf_printf(&out, "%zu index%s checked, %zu difference%s\n", checked, checked == 1 ? "" : "es",
               diffs, diffs == 1 ? "" : "s");
    *report = buf_detach(&out, NULL);
    return diffs ? QR_ERR : QR_OK;
}
