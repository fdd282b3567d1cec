/* hotkeys.c — contributor insights' engine side: for each table and global index whose
 * insights are on, the most accessed and most throttled partition keys and partition +
 * sort keys (DynamoDB's four rules), fed by engine_report and kept in sliding windows
 * of Space-Saving summaries (capacity/topk.h), and the large item collections of a
 * table, counted from the store on request. Keys stay raw bytes of the stored key until
 * a report decodes them. What the rules are called and how a report reads to CloudWatch's
 * clients is ops/insights.c's; whether insights are on is that file's setting too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/topk.h"
#include "engine/engine_int.h"
#include "model/keycodec.h"
#include "model/number.h"

/* Each rule keeps HOTKEYS_K counters per bucket of HOTKEYS_WIDTH seconds, for
 * HOTKEYS_BUCKETS buckets (a quarter of an hour). */
#define HOTKEYS_K 64
#define HOTKEYS_WIDTH 10.0
#define HOTKEYS_BUCKETS 90

typedef struct hk_target {
    uint32_t table_id;
    uint16_t index_id; /* 0: the table's own items */
    int mode;          /* HOTKEYS_ACCESSED or HOTKEYS_THROTTLED */
    int npk, nsk;
    char pk_type[QR_MAX_KEY_ATTRS], sk_type[QR_MAX_KEY_ATTRS];
    pthread_mutex_t lock; /* guards the windows */
    topk_window *w[4];    /* by hotkeys_rule; NULL when the rule is not kept */
} hk_target;

struct hotkeys {
    pthread_rwlock_t lock; /* guards the list (each target's windows have its own lock) */
    hk_target **all;
    size_t n;
    double wall_base; /* a manual clock's time 0, on the wall clock */
};

double hotkeys_now(qr_db *db)
{
    if (!engine_clock_manual(db)) return engine_now_seconds();
    /* The manual capacity clock moved forward from a wall-clock hour. */
    return db->hotkeys->wall_base + (capacity_now(db) - db->clock_base);
}

static void target_free(hk_target *g)
{
    if (g == NULL) return;
    for (int i = 0; i < 4; i++)
        topk_window_free(g->w[i]);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* A target for t (ix NULL) or its global index ix in mode; NULL when out of memory. */
static hk_target *target_new(const table *t, const qr_index *ix, int mode)
{
    hk_target *g = calloc(1, sizeof *g);
    if (g == NULL) return NULL;
    g->table_id = t->id;
    g->index_id = ix ? ix->id : 0;
    g->mode = mode;
    if (ix) {
        g->npk = ix->npk;
        g->nsk = ix->nsk;
        memcpy(g->pk_type, ix->pk_type, sizeof g->pk_type);
        memcpy(g->sk_type, ix->sk_type, sizeof g->sk_type);
    } else {
        g->npk = 1;
        g->pk_type[0] = t->pk.type;
        g->nsk = t->sk.name != NULL;
        g->sk_type[0] = t->sk.type;
    }
    pthread_mutex_init(&g->lock, NULL);
    for (int r = 0; r < 4; r++) {
        int sort = r == HOTKEYS_SKC || r == HOTKEYS_SKT;
        int accessed = r == HOTKEYS_PKC || r == HOTKEYS_SKC;
        if ((sort && g->nsk == 0) || (accessed && mode != HOTKEYS_ACCESSED)) continue;
        if ((g->w[r] = topk_window_new(HOTKEYS_K, HOTKEYS_BUCKETS, HOTKEYS_WIDTH)) == NULL) {
            target_free(g);
            return NULL;
        }
    }
    return g;
}

static hk_target *find(const struct hotkeys *h, uint32_t table_id, uint16_t index_id)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->all[i]->table_id == table_id && h->all[i]->index_id == index_id) return h->all[i];
    return NULL;
}

/* Sets the target of (t, ix) to mode, with h->lock held for writing. */
static int follow_locked(struct hotkeys *h, const table *t, const qr_index *ix, int mode)
{
    uint16_t id = ix ? ix->id : 0;
    for (size_t i = 0; i < h->n; i++) {
        if (h->all[i]->table_id != t->id || h->all[i]->index_id != id) continue;
        if (h->all[i]->mode == mode) return 0; /* as it is: the windows carry on */
        target_free(h->all[i]);
        h->all[i] = h->all[--h->n];
        break;
    }
    if (mode == HOTKEYS_OFF) return 0;
    hk_target *g = target_new(t, ix, mode);
    hk_target **all = g ? realloc(h->all, (h->n + 1) * sizeof *all) : NULL;
    if (all == NULL) {
        target_free(g);
        return -1;
    }
    h->all = all;
    h->all[h->n++] = g;
    return 0;
}

int hotkeys_follow(qr_db *db, const table *t, const char *index, int mode, qr_err *err)
{
    struct hotkeys *h = db->hotkeys;
    const qr_index *ix = index ? table_index(t, index) : NULL;
    if (index && (ix == NULL || !ix->global))
        return err_set(err, QR_E_NOT_FOUND, "no global index %s", index);
    pthread_rwlock_wrlock(&h->lock);
    int rc = follow_locked(h, t, ix, mode);
    __atomic_store_n(&db->hotkeys_on, (int)h->n, __ATOMIC_RELAXED);
    pthread_rwlock_unlock(&h->lock);
    return rc ? err_set(err, QR_E_INTERNAL, "out of memory") : 0;
}

void hotkeys_forget(qr_db *db, uint32_t table_id, int index_id)
{
    struct hotkeys *h = db->hotkeys;
    if (h == NULL) return;
    pthread_rwlock_wrlock(&h->lock);
    for (size_t i = 0; i < h->n;) {
        hk_target *g = h->all[i];
        if (g->table_id != table_id || (index_id >= 0 && g->index_id != index_id)) {
            i++;
            continue;
        }
        target_free(g);
        h->all[i] = h->all[--h->n];
    }
    __atomic_store_n(&db->hotkeys_on, (int)h->n, __ATOMIC_RELAXED);
    pthread_rwlock_unlock(&h->lock);
}

/* The mode a stored insights setting asks for. */
static int mode_of(const json_t *s)
{
    if (!json_is_true(json_object_get(s, "Enabled"))) return HOTKEYS_OFF;
    const char *m = json_string_value(json_object_get(s, "Mode"));
    return m && strcmp(m, "THROTTLED_KEYS") == 0 ? HOTKEYS_THROTTLED : HOTKEYS_ACCESSED;
}

int hotkeys_open(qr_db *db)
{
    struct hotkeys *h = calloc(1, sizeof *h);
    if (h == NULL) return -1;
    pthread_rwlock_init(&h->lock, NULL);
    h->wall_base = (double)((long long)engine_now_seconds() / 3600 * 3600);
    db->hotkeys = h;
    /* Settings stored by an earlier run take effect again. */
    for (size_t i = 0; i < db->ntables; i++) {
        table *t = db->tables[i];
        for (size_t j = 0; j <= t->nindexes; j++) {
            const qr_index *ix = j < t->nindexes ? &t->indexes[j] : NULL;
            if (ix && !ix->global) continue;
            json_t *s = NULL;
            qr_err e;
            err_init(&e);
            if (meta_setting_get(db, t, META_SETTING_INSIGHTS, ix ? ix->name : NULL, &s, &e) == 0 &&
                mode_of(s) != HOTKEYS_OFF)
                follow_locked(h, t, ix, mode_of(s));
            err_clear(&e);
            json_decref(s);
        }
    }
    db->hotkeys_on = (int)h->n;
    return 0;
}

void hotkeys_close(qr_db *db)
{
    struct hotkeys *h = db->hotkeys;
    if (h == NULL) return;
    for (size_t i = 0; i < h->n; i++)
        target_free(h->all[i]);
    free(h->all);
    pthread_rwlock_destroy(&h->lock);
    free(h);
    db->hotkeys = NULL;
}

/* The bytes of one encoded key component of type at p, without decoding it; 0 if they
 * are not one (a range's bound may end inside a key). keycodec.h's encodings: a number
 * is num_key_encode's, a string or binary ends at an unescaped 0x00 0x01. */
static size_t component_len(const uint8_t *p, size_t len, char type)
{
    if (type == 'N') {
        qr_num n;
        return num_key_decode(p, len, 0, &n);
    }
    for (size_t i = 0; i + 1 < len; i++)
        if (p[i] == 0x00) {
            if (p[i + 1] == 0x01) return i + 2;
            i++; /* 0x00 0xFF: an escaped zero byte */
        }
    return 0;
}

/* The end of n components of the given types from at in key; 0 if they are not whole. */
static size_t components_end(const char *key, size_t len, size_t at, int n, const char *types)
{
    for (int i = 0; i < n; i++) {
        size_t used = component_len((const uint8_t *)key + at, len - at, types[i]);
        if (used == 0) return 0;
        at += used;
    }
    return at;
}

static void note(hk_target *g, const engine_access *a, double now)
{
    size_t pk_end = components_end(a->key, a->key_len, QR_KEY_PREFIX_LEN, g->npk, g->pk_type);
    if (pk_end == 0) return;
    size_t sk_end = 0;
    if (g->nsk)
        sk_end = g->index_id == 0 ? a->key_len /* an item's key is its partition and sort key */
                                  : components_end(a->key, a->key_len, pk_end, g->nsk, g->sk_type);
    if (sk_end <= pk_end) sk_end = 0; /* a bound without a sort key */
    double units[TOPK_AUX] = {0, 0};
    if (!a->throttled) {
        double times = a->transactional ? 2.0 : 1.0;
        if (a->write)
            units[1] = meter_write_units(a->bytes > a->old_bytes ? a->bytes : a->old_bytes) * times;
        else
            units[0] = meter_read_units(a->bytes, a->consistent) * times;
    }
    const char *k = a->key + QR_KEY_PREFIX_LEN;
    size_t pk_len = pk_end - QR_KEY_PREFIX_LEN, sk_len = sk_end ? sk_end - QR_KEY_PREFIX_LEN : 0;
    pthread_mutex_lock(&g->lock);
    if (g->mode == HOTKEYS_ACCESSED) { /* every access, throttled or not */
        topk_window_add(g->w[HOTKEYS_PKC], now, k, pk_len, 1, units);
        if (sk_len && g->w[HOTKEYS_SKC])
            topk_window_add(g->w[HOTKEYS_SKC], now, k, sk_len, 1, units);
    }
    if (a->throttled) {
        topk_window_add(g->w[HOTKEYS_PKT], now, k, pk_len, 1, NULL);
        if (sk_len && g->w[HOTKEYS_SKT])
            topk_window_add(g->w[HOTKEYS_SKT], now, k, sk_len, 1, NULL);
    }
    pthread_mutex_unlock(&g->lock);
}

void hotkeys_note(qr_db *db, const engine_access *a)
{
    /* The engine's own work is no request's; a Scan's refusal names no key. */
    if (a->system || a->key == NULL || a->key_len <= QR_KEY_PREFIX_LEN || a->key[0] != 't') return;
    const unsigned char *k = (const unsigned char *)a->key;
    uint32_t table_id = (uint32_t)k[1] << 24 | (uint32_t)k[2] << 16 | (uint32_t)k[3] << 8 | k[4];
    uint16_t index_id = (uint16_t)(k[5] << 8 | k[6]);
    struct hotkeys *h = db->hotkeys;
    pthread_rwlock_rdlock(&h->lock);
    hk_target *g = find(h, table_id, index_id);
    if (g) note(g, a, hotkeys_now(db));
    pthread_rwlock_unlock(&h->lock);
}

/* The AttributeValues of n components of the given types at p: a new array, or NULL if
 * the bytes are not them. */
static json_t *decode_key(const char *p, size_t len, int n, const char *types, json_t *into)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        json_t *av = NULL;
        size_t used = keycodec_decode((const uint8_t *)p + at, len - at, types[i], 0, &av);
        if (used == 0) return NULL;
        json_array_append_new(into, av);
        at += used;
    }
    return into;
}

int hotkeys_report(qr_db *db, const table *t, const char *index, hotkeys_rule rule, double from,
                   double to, double period, size_t max, json_t **out, qr_err *err)
{
    *out = NULL;
    const qr_index *ix = index ? table_index(t, index) : NULL;
    if (index && ix == NULL) return err_set(err, QR_E_NOT_FOUND, "no index %s", index);
    struct hotkeys *h = db->hotkeys;
    int rc = 0;
    pthread_rwlock_rdlock(&h->lock);
    hk_target *g = find(h, t->id, ix ? ix->id : 0);
    topk_window *w = g ? g->w[rule] : NULL;
    if (w == NULL) goto done;
    /* Periods are whole buckets, starting at a bucket's start; the range is rounded out
     * to whole buckets, the one holding to included. */
    double width = topk_window_width(w);
    if (period < width) period = width;
    period = (double)(long long)(period / width + 0.5) * width;
    from = floor(from / width) * width;
    to = (floor(to / width) + 1) * width;
    size_t nperiods = to > from ? (size_t)((to - from + period - 1e-9) / period) : 0;
    if (nperiods > 1440) nperiods = 1440;
    int sort = rule == HOTKEYS_SKC || rule == HOTKEYS_SKT;
    int ncomp = g->npk + (sort ? g->nsk : 0);
    char types[2 * QR_MAX_KEY_ATTRS];
    memcpy(types, g->pk_type, (size_t)g->npk);
    memcpy(types + g->npk, g->sk_type, (size_t)g->nsk);

    pthread_mutex_lock(&g->lock);
    topk_result r;
    if (topk_window_top(w, from, to, &r)) {
        pthread_mutex_unlock(&g->lock);
        rc = err_set(err, QR_E_INTERNAL, "out of memory");
        goto done;
    }
    json_t *contributors = json_array(), *periods = json_array();
    for (size_t i = 0; i < r.n && json_array_size(contributors) < max; i++) {
        const topk_entry *e = &r.all[i];
        json_t *key = decode_key(e->key, e->len, ncomp, types, json_array());
        if (key == NULL) continue; /* a range's bound that is no whole key */
        json_t *points = json_array();
        for (size_t p = 0; p < nperiods; p++) {
            double start = from + (double)p * period, v = 0;
            for (double b = start; b < start + period - 1e-9 && b < to; b += width)
                v += topk_window_bucket_estimate(w, b, e->key, e->len);
            json_array_append_new(points, json_real(v));
        }
        json_array_append_new(contributors,
                              json_pack("{s:o,s:f,s:f,s:f,s:f,s:o}", "Key", key, "Value", e->count,
                                        "Error", e->error, "ReadUnits", e->aux[0], "WriteUnits",
                                        e->aux[1], "Points", points));
    }
    topk_bucket_info info[HOTKEYS_BUCKETS];
    size_t nb = topk_window_buckets(w, from, to, info, HOTKEYS_BUCKETS);
    for (size_t p = 0; p < nperiods; p++) {
        double start = from + (double)p * period, sum = 0, max_value = 0;
        uint64_t samples = 0, keys = 0;
        for (size_t b = 0; b < nb && b < HOTKEYS_BUCKETS; b++) {
            if (info[b].start < start - 1e-9 || info[b].start >= start + period - 1e-9) continue;
            sum += info[b].total;
            samples += info[b].adds;
            keys += info[b].keys;
            if (info[b].max > max_value) max_value = info[b].max;
        }
        json_array_append_new(periods, json_pack("{s:f,s:f,s:I,s:I,s:f}", "Start", start, "Sum",
                                                 sum, "Samples", (json_int_t)samples, "Keys",
                                                 (json_int_t)keys, "Max", max_value));
    }
    pthread_mutex_unlock(&g->lock);
    *out =
        json_pack("{s:f,s:I,s:f,s:f,s:o,s:o}", "Total", r.total, "Unique", (json_int_t)r.n, "Width",
                  width, "Period", period, "Contributors", contributors, "Periods", periods);
    topk_result_free(&r);
done:
    pthread_rwlock_unlock(&h->lock);
    return rc;
}

/* ---- large item collections ---- */

int hotkeys_large_collections(qr_db *db, const table *t, const char *index, uint64_t min_bytes,
                              uint64_t min_items, size_t max, json_t **out, qr_err *err)
{
    *out = NULL;
    const qr_index *ix = index ? table_index(t, index) : NULL;
    if (index && ix == NULL) return err_set(err, QR_E_NOT_FOUND, "no index %s", index);
    int npk = ix ? ix->npk : 1;
    const char *types = ix ? ix->pk_type : &t->pk.type;
    buf lo, hi, part;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    buf_init(&part, 0);
    key_table_prefix(&lo, t, ix ? ix->id : 0);
    key_table_prefix(&hi, t, (uint16_t)((ix ? ix->id : 0) + 1));
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    json_t *list = json_array();
    uint64_t bytes = 0, items = 0;
    int rc = 0;
    /* Keys are in order, so a partition's items are contiguous: each run is summed, and
     * kept when it passes either threshold. */
    for (store_iter_first(it);; store_iter_next(it)) {
        int valid = store_iter_valid(it);
        size_t kl = 0, vl = 0;
        const char *k = valid ? store_iter_key(it, &kl) : NULL;
        int same = valid && part.len && kl >= part.len && memcmp(k, part.data, part.len) == 0;
        if (!same && part.len) {
            if ((min_bytes && bytes >= min_bytes) || (min_items && items >= min_items)) {
                json_t *key = decode_key(part.data + QR_KEY_PREFIX_LEN,
                                         part.len - QR_KEY_PREFIX_LEN, npk, types, json_array());
                if (key)
                    json_array_append_new(list, json_pack("{s:o,s:I,s:I}", "Key", key, "SizeBytes",
                                                          (json_int_t)bytes, "ItemCount",
                                                          (json_int_t)items));
            }
            buf_reset(&part);
            bytes = items = 0;
        }
        if (!valid) break;
        if (!same) {
            size_t end = components_end(k, kl, QR_KEY_PREFIX_LEN, npk, types);
            if (end == 0) continue; /* not an item's key */
            buf_append(&part, k, end);
        }
        const char *json;
        size_t jl, size;
        const char *v = store_iter_value(it, &vl);
        if (item_stored(v, vl, &json, &jl, &size) == 0) {
            bytes += size;
            items++;
        }
    }
    if (store_iter_status(it, err)) rc = -1;
    store_iter_free(it);
    buf_free(&lo);
    buf_free(&hi);
    buf_free(&part);
    if (rc) {
        json_decref(list);
        return -1;
    }
    /* Largest first, then cut to max. */
    size_t n = json_array_size(list);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0; j--) {
            json_t *a = json_array_get(list, j - 1), *b = json_array_get(list, j);
            if (json_integer_value(json_object_get(a, "SizeBytes")) >=
                json_integer_value(json_object_get(b, "SizeBytes")))
                break;
            json_incref(a);
            json_array_set(list, j - 1, b);
            json_array_set_new(list, j, a);
        }
    while (json_array_size(list) > max)
        json_array_remove(list, json_array_size(list) - 1);
    *out = list;
    return 0;
}
