/* topk.c — weighted Space-Saving summaries and sliding windows of them (see topk.h).
 *
 * A summary is k slots, a min-heap of them by count (the slot a new key takes over is
 * the lightest) and an open-addressing table from key to slot (linear probing, deletion
 * by backward shift), so an add is O(log k) with no allocation once the slots' key
 * buffers have grown. A window is a ring of summaries made on first use. */
#include "capacity/topk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef struct slot {
    char *key;
    size_t len, cap;
    uint64_t hash;
    double count, error, aux[TOPK_AUX];
    size_t hpos; /* its place in the heap */
} slot;

struct topk {
    size_t k, n;
    slot *slots;
    size_t *heap; /* slot numbers, a min-heap by count */
    long *table;  /* slot number or -1, tmask + 1 of them */
    size_t tmask;
    double total;
};

topk *topk_new(size_t k)
{
    if (k == 0) return NULL;
    topk *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    size_t tsize = 4;
    while (tsize < 2 * k)
        tsize *= 2;
    s->k = k;
    s->tmask = tsize - 1;
    s->slots = calloc(k, sizeof *s->slots);
    s->heap = calloc(k, sizeof *s->heap);
    s->table = malloc(tsize * sizeof *s->table);
    if (s->slots == NULL || s->heap == NULL || s->table == NULL) {
        topk_free(s);
        return NULL;
    }
    topk_reset(s);
    return s;
}

void topk_free(topk *s)
{
    if (s == NULL) return;
    if (s->slots)
        for (size_t i = 0; i < s->k; i++)
            free(s->slots[i].key);
    free(s->slots);
    free(s->heap);
    free(s->table);
    free(s);
}

void topk_reset(topk *s)
{
    s->n = 0;
    s->total = 0;
    for (size_t i = 0; i <= s->tmask; i++)
        s->table[i] = -1;
}

static uint64_t hash_of(const void *key, size_t len)
{
    return XXH3_64bits(key, len);
}

/* The table position of key, or of the empty place where it would go. */
static size_t probe(const topk *s, const void *key, size_t len, uint64_t h)
{
    size_t i = (size_t)h & s->tmask;
    for (;;) {
        long at = s->table[i];
        if (at < 0) return i;
        const slot *e = &s->slots[at];
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) return i;
        i = (i + 1) & s->tmask;
    }
}

/* Removes the table entry at i, shifting back the entries its removal would cut off. */
static void unlink_at(topk *s, size_t i)
{
    s->table[i] = -1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & s->tmask;
        long at = s->table[j];
        if (at < 0) return;
        size_t home = (size_t)s->slots[at].hash & s->tmask;
        /* The entry at j stays if its home lies cyclically in (i, j]. */
        int stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays) continue;
        s->table[i] = at;
        s->table[j] = -1;
        i = j;
    }
}

static void heap_swap(topk *s, size_t a, size_t b)
{
    size_t x = s->heap[a];
    s->heap[a] = s->heap[b];
    s->heap[b] = x;
    s->slots[s->heap[a]].hpos = a;
    s->slots[s->heap[b]].hpos = b;
}

static void sift_up(topk *s, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (s->slots[s->heap[p]].count <= s->slots[s->heap[i]].count) return;
        heap_swap(s, p, i);
        i = p;
    }
}

static void sift_down(topk *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->n && s->slots[s->heap[l]].count < s->slots[s->heap[m]].count) m = l;
        if (r < s->n && s->slots[s->heap[r]].count < s->slots[s->heap[m]].count) m = r;
        if (m == i) return;
        heap_swap(s, i, m);
        i = m;
    }
}

static int set_key(slot *e, const void *key, size_t len, uint64_t h)
{
    if (e->cap < len) {
        size_t cap = len < 32 ? 32 : len;
        char *k = realloc(e->key, cap);
        if (k == NULL) return -1;
        e->key = k;
        e->cap = cap;
    }
    memcpy(e->key, key, len);
    e->len = len;
    e->hash = h;
    return 0;
}

static void aux_set(double *to, const double *from, int add)
{
    for (int i = 0; i < TOPK_AUX; i++)
        to[i] = (add ? to[i] : 0) + (from ? from[i] : 0);
}

int topk_add(topk *s, const void *key, size_t len, double w, const double *aux)
{
    if (len > TOPK_MAX_KEY) len = TOPK_MAX_KEY;
    uint64_t h = hash_of(key, len);
    size_t i = probe(s, key, len, h);
    long at = s->table[i];
    if (at >= 0) {
        slot *e = &s->slots[at];
        e->count += w;
        aux_set(e->aux, aux, 1);
        sift_down(s, e->hpos);
    } else if (s->n < s->k) {
        slot *e = &s->slots[s->n];
        if (set_key(e, key, len, h)) return -1;
        e->count = w;
        e->error = 0;
        aux_set(e->aux, aux, 0);
        s->table[i] = (long)s->n;
        s->heap[s->n] = s->n;
        e->hpos = s->n;
        s->n++;
        sift_up(s, e->hpos);
    } else {
        /* The lightest key gives its slot up: the new key may have had all its weight. */
        size_t victim = s->heap[0];
        slot *e = &s->slots[victim];
        if (e->cap < len) { /* grow first, so a failure leaves the summary whole */
            char *k = realloc(e->key, len);
            if (k == NULL) return -1;
            e->key = k;
            e->cap = len;
        }
        unlink_at(s, probe(s, e->key, e->len, e->hash));
        set_key(e, key, len, h);
        e->error = e->count;
        e->count += w;
        aux_set(e->aux, aux, 0);
        s->table[probe(s, key, len, h)] = (long)victim;
        sift_down(s, 0);
    }
    s->total += w;
    return 0;
}

double topk_total(const topk *s)
{
    return s->total;
}

size_t topk_size(const topk *s)
{
    return s->n;
}

double topk_floor(const topk *s)
{
    return s->n < s->k ? 0 : s->slots[s->heap[0]].count;
}

static void entry_of(const slot *e, topk_entry *out)
{
    *out = (topk_entry){e->key, e->len, e->count, e->error, {0}};
    aux_set(out->aux, e->aux, 0);
}

static int key_cmp(const topk_entry *a, const topk_entry *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->key, b->key, n);
    return c ? c : a->len < b->len ? -1 : a->len > b->len;
}

static int heaviest_first(const void *x, const void *y)
{
    const topk_entry *a = x, *b = y;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return key_cmp(a, b);
}

static int by_key(const void *x, const void *y)
{
    return key_cmp(x, y);
}

size_t topk_list(const topk *s, topk_entry *out, size_t max)
{
    topk_entry *all = malloc((s->n ? s->n : 1) * sizeof *all);
    if (all == NULL) return 0;
    for (size_t i = 0; i < s->n; i++)
        entry_of(&s->slots[i], &all[i]);
    qsort(all, s->n, sizeof *all, heaviest_first);
    size_t n = s->n < max ? s->n : max;
    memcpy(out, all, n * sizeof *out);
    free(all);
    return n;
}

int topk_find(const topk *s, const void *key, size_t len, topk_entry *out)
{
    if (len > TOPK_MAX_KEY) len = TOPK_MAX_KEY;
    long at = s->table[probe(s, key, len, hash_of(key, len))];
    if (at < 0) return 0;
    entry_of(&s->slots[at], out);
    return 1;
}

/* ---- sliding windows ---- */

typedef struct bucket {
    int64_t epoch; /* which width-long stretch of time it holds; -1: none yet */
    uint64_t adds;
    topk *s;
} bucket;

struct topk_window {
    size_t k, nb;
    double width;
    bucket *b;
};

topk_window *topk_window_new(size_t k, size_t nbuckets, double width)
{
    if (k == 0 || nbuckets == 0 || !(width > 0)) return NULL;
    topk_window *w = calloc(1, sizeof *w);
    if (w == NULL || (w->b = calloc(nbuckets, sizeof *w->b)) == NULL) {
        free(w);
        return NULL;
    }
    w->k = k;
    w->nb = nbuckets;
    w->width = width;
    for (size_t i = 0; i < nbuckets; i++)
        w->b[i].epoch = -1;
    return w;
}

void topk_window_free(topk_window *w)
{
    if (w == NULL) return;
    for (size_t i = 0; i < w->nb; i++)
        topk_free(w->b[i].s);
    free(w->b);
    free(w);
}

double topk_window_width(const topk_window *w)
{
    return w->width;
}

int topk_window_add(topk_window *w, double now, const void *key, size_t len, double weight,
                    const double *aux)
{
    int64_t e = (int64_t)floor(now / w->width);
    bucket *b = &w->b[(uint64_t)e % w->nb];
    if (b->epoch < e) { /* a bucket whose time has passed starts again */
        if (b->s == NULL && (b->s = topk_new(w->k)) == NULL) return -1;
        topk_reset(b->s);
        b->epoch = e;
        b->adds = 0;
    }
    /* (A clock that stepped back counts into the newer bucket it finds.) */
    if (topk_add(b->s, key, len, weight, aux)) return -1;
    b->adds++;
    return 0;
}

/* Whether bucket b holds time in [from, to). */
static int in_range(const topk_window *w, const bucket *b, double from, double to)
{
    if (b->epoch < 0 || b->s == NULL) return 0;
    double start = (double)b->epoch * w->width;
    return start + w->width > from && start < to;
}

static int by_start(const void *x, const void *y)
{
    const topk_bucket_info *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

size_t topk_window_buckets(const topk_window *w, double from, double to, topk_bucket_info *out,
                           size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nb; i++) {
        const bucket *b = &w->b[i];
        if (!in_range(w, b, from, to)) continue;
        if (out && n < max) {
            topk_entry top = {0};
            topk_list(b->s, &top, 1);
            out[n] = (topk_bucket_info){(double)b->epoch * w->width, topk_total(b->s), b->adds,
                                        topk_size(b->s), top.count};
        }
        n++;
    }
    if (out) qsort(out, n < max ? n : max, sizeof *out, by_start);
    return n;
}

double topk_window_bucket_estimate(const topk_window *w, double start, const void *key, size_t len)
{
    int64_t e = (int64_t)floor(start / w->width + 0.5);
    const bucket *b = &w->b[(uint64_t)e % w->nb];
    if (b->epoch != e || b->s == NULL) return 0;
    topk_entry x;
    return topk_find(b->s, key, len, &x) ? x.count : topk_floor(b->s);
}

int topk_window_top(const topk_window *w, double from, double to, topk_result *out)
{
    *out = (topk_result){0};
    /* Every key a bucket in range holds is a candidate; sorted, each is summed once. */
    size_t ncand = 0, bytes = 0;
    for (size_t i = 0; i < w->nb; i++)
        if (in_range(w, &w->b[i], from, to)) {
            ncand += topk_size(w->b[i].s);
            out->total += topk_total(w->b[i].s);
        }
    topk_entry *cand = malloc((ncand ? ncand : 1) * sizeof *cand);
    if (cand == NULL) return -1;
    size_t n = 0;
    for (size_t i = 0; i < w->nb; i++)
        if (in_range(w, &w->b[i], from, to)) n += topk_list(w->b[i].s, cand + n, ncand - n);
    qsort(cand, n, sizeof *cand, by_key);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || key_cmp(&cand[u - 1], &cand[i]) != 0) {
            cand[u++] = cand[i];
            bytes += cand[i].len;
        }
    out->all = malloc((u ? u : 1) * sizeof *out->all);
    out->keys = malloc(bytes ? bytes : 1);
    if (out->all == NULL || out->keys == NULL) {
        free(cand);
        topk_result_free(out);
        return -1;
    }
    size_t at = 0;
    for (size_t c = 0; c < u; c++) {
        topk_entry sum = {out->keys + at, cand[c].len, 0, 0, {0}};
        for (size_t i = 0; i < w->nb; i++) {
            const bucket *b = &w->b[i];
            if (!in_range(w, b, from, to)) continue;
            topk_entry x;
            if (topk_find(b->s, cand[c].key, cand[c].len, &x)) {
                sum.count += x.count;
                sum.error += x.error;
                aux_set(sum.aux, x.aux, 1);
            } else { /* absent here: it had at most the bucket's floor */
                sum.count += topk_floor(b->s);
                sum.error += topk_floor(b->s);
            }
        }
        memcpy(out->keys + at, cand[c].key, cand[c].len);
        at += cand[c].len;
        out->all[c] = sum;
    }
    out->n = u;
    free(cand);
    qsort(out->all, out->n, sizeof *out->all, heaviest_first);
    return 0;
}

void topk_result_free(topk_result *r)
{
    free(r->all);
    free(r->keys);
    *r = (topk_result){0};
}
