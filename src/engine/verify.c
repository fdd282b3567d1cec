/* verify.c — qr_verify: does every secondary index hold exactly its base items'
 * projections, and does DescribeTable count what is stored? It only reads; repairing drift
 * is not its job. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "util/jsonread.h"

typedef struct entry {
    char *key, *val;
    size_t klen, vlen;
} entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    return x->klen < y->klen ? -1 : x->klen > y->klen;
}

static char *dup(const char *p, size_t n)
{
    char *q = malloc(n + 1);
    if (q == NULL) return NULL;
    memcpy(q, p, n);
    q[n] = 0;
    return q;
}

/* Appends a copy of an expected entry; -1 when memory runs out. */
static int want_add(entry **want, size_t *n, size_t *cap, const buf *key, const buf *val)
{
    if (*n == *cap) {
        size_t more = *cap ? *cap * 2 : 256;
        entry *grown = realloc(*want, more * sizeof *grown);
        if (grown == NULL) return -1;
        *want = grown;
        *cap = more;
    }
    entry x = {dup(key->data, key->len), dup(val->data, val->len), key->len, val->len};
    if (x.key == NULL || x.val == NULL) {
        free(x.key);
        free(x.val);
        return -1;
    }
    (*want)[(*n)++] = x;
    return 0;
}

/* Describes an index entry by the base item it holds. */
static void describe(buf *out, const char *val, size_t vlen)
{
    const char *json;
    size_t jlen, size;
    if (item_stored(val, vlen, &json, &jlen, &size) == 0)
        buf_append(out, json, jlen > 200 ? 200 : jlen);
    else
        buf_puts(out, "(undecodable entry)");
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

/* After the propagation log drains, the index's expected entries are computed from the base
 * table, sorted, and compared in one merge pass with the entries actually stored. Missing,
 * stale and differing entries are each reported with the item's key.
 *
 * Checks one index; appends findings to report and returns the number of differences. */
static size_t verify_index(qr_db *db, table *t, qr_index *ix, buf *report)
{
    entry *want = NULL;
    size_t n = 0, cap = 0, diffs = 0, have_count = 0;
    int64_t have_bytes = 0;
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
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    for (store_iter_first(it); !oom && store_iter_valid(it); store_iter_next(it)) {
        size_t vl;
        const char *v = store_iter_value(it, &vl);
        json_t *item = item_decode(v, vl);
        if (item == NULL) continue;
        buf_reset(&ek);
        if (index_entry_key(t, ix, item, &ek, &e) == 1) {
            json_t *p = index_project(t, ix, item);
            buf_reset(&val);
            item_encode(p, &val);
            json_decref(p);
            oom = want_add(&want, &n, &cap, &ek, &val) != 0;
        }
        json_decref(item);
    }
    store_iter_free(it);
    if (oom) { /* the index is not compared: say so, and count it as unconfirmed */
        buf_printf(report, "  %s.%s: out of memory after %zu base entries; index not checked\n",
                   t->name, ix->name, n);
        diffs = 1;
        goto done;
    }
    if (n > 1) qsort(want, n, sizeof *want, entry_cmp);
    buf_reset(&lo);
    buf_reset(&hi);
    key_table_prefix(&lo, t, ix->id);
    key_table_prefix(&hi, t, (uint16_t)(ix->id + 1));
    it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    size_t i = 0;
    store_iter_first(it);
    while (i < n || store_iter_valid(it)) {
        entry have = {0};
        if (store_iter_valid(it)) {
            have.key = (char *)store_iter_key(it, &have.klen);
            have.val = (char *)store_iter_value(it, &have.vlen);
        }
        int c = i >= n ? 1 : !store_iter_valid(it) ? -1 : entry_cmp(&want[i], &have);
        if (c < 0) {
            buf_printf(report, "  %s.%s: missing entry for item ", t->name, ix->name);
            describe(report, want[i].val, want[i].vlen);
            buf_putc(report, '\n');
            diffs++;
            i++;
            continue;
        }
        if (c > 0) {
            buf_printf(report, "  %s.%s: stale entry with no base item: ", t->name, ix->name);
            describe(report, have.val, have.vlen);
            buf_putc(report, '\n');
            diffs++;
        } else {
            int same = want[i].vlen == have.vlen && memcmp(want[i].val, have.val, have.vlen) == 0;
            if (!same) {
                const char *j1, *j2;
                size_t l1, l2, s1, s2;
                json_t *a = NULL, *b = NULL;
                if (item_stored(want[i].val, want[i].vlen, &j1, &l1, &s1) == 0 &&
                    item_stored(have.val, have.vlen, &j2, &l2, &s2) == 0) {
                    a = json_read(j1, l1, JSON_ALLOW_NUL, NULL);
                    b = json_read(j2, l2, JSON_ALLOW_NUL, NULL);
                }
                same = a && b && json_equal(a, b);
                json_decref(a);
                json_decref(b);
            }
            if (!same) {
                buf_printf(report, "  %s.%s: entry differs from its base item ", t->name, ix->name);
                describe(report, want[i].val, want[i].vlen);
                buf_putc(report, '\n');
                diffs++;
            }
            i++;
        }
        have_count++;
        const char *json;
        size_t jlen, size;
        if (item_stored(have.val, have.vlen, &json, &jlen, &size) == 0) have_bytes += (int64_t)size;
        store_iter_next(it);
    }
    store_iter_free(it);
    diffs += check_stats(t, ix->id, ix->name, (int64_t)have_count, have_bytes, report);
    buf_printf(report, "%s index %s: %zu base entries expected, %zu stored, %zu difference%s\n",
               t->name, ix->name, n, have_count, diffs, diffs == 1 ? "" : "s");
done:
    for (size_t k = 0; k < n; k++) {
        free(want[k].key);
        free(want[k].val);
    }
    free(want);
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
    if (propagate_drain(db, 60000))
        buf_puts(&out, "warning: index propagation did not drain within 60 s\n");
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
