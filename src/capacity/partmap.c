/* partmap.c — partitions as a sorted array of (first hash, first key suffix) bounds, each
 * with a read and a write bucket of one second of its ceiling (see partmap.h).
 *
 * Heat is watched per partition: the charges of a hot one feed a majority vote over
 * hashes and a ring of recent key suffixes, which choose where it splits. */
#include <stdlib.h>
#include <string.h>

#include "capacity/meter.h"
#include "capacity/partmap.h"

#define SAMPLES 31

typedef struct pbucket {
    double tokens, rate, at;
} pbucket;

typedef struct part {
    uint64_t lo;       /* first hash; the range runs to the next partition's */
    unsigned char *sk; /* first key suffix within hash lo, or NULL: from the first */
    size_t sk_len;
    pbucket b[2];     /* reads, writes: one second of the ceiling */
    double hot_since; /* < 0 while not hot */
    uint64_t candidate;
    long votes;                   /* Boyer-Moore majority over the hashes charged while hot */
    long candidate_hits, charges; /* of the candidate, of all, while hot */
    unsigned char sample[SAMPLES][PARTMAP_SUFFIX_MAX];
    size_t sample_len[SAMPLES];
    unsigned nsamples;
} part;

struct partmap {
    part *parts;
    unsigned n;
    double split_after;
    int sort_key_splits;
    uint64_t rng; /* xorshift state for sampling */
};

static double ceiling(int write)
{
    return write ? METER_PARTITION_WCU : METER_PARTITION_RCU;
}

static void part_fresh(part *p, double now)
{
    for (int w = 0; w < 2; w++)
        p->b[w] = (pbucket){.tokens = ceiling(w), .rate = ceiling(w), .at = now};
    p->hot_since = -1;
    p->votes = p->candidate_hits = p->charges = 0;
    p->nsamples = 0;
}

static void refill(pbucket *b, int write, double now)
{
    if (now <= b->at) return;
    b->tokens += b->rate * (now - b->at);
    if (b->tokens > ceiling(write)) b->tokens = ceiling(write);
    b->at = now;
}

partmap *partmap_new(double now)
{
    partmap *p = calloc(1, sizeof *p);
    if (p == NULL || (p->parts = calloc(1, sizeof *p->parts)) == NULL) {
        free(p);
        return NULL;
    }
    p->n = 1;
    p->split_after = 300;
    p->rng = 0x9E3779B97F4A7C15ULL;
    part_fresh(&p->parts[0], now);
    return p;
}

void partmap_free(partmap *p)
{
    if (p == NULL) return;
    for (unsigned i = 0; i < p->n; i++)
        free(p->parts[i].sk);
    free(p->parts);
    free(p);
}

void partmap_configure(partmap *p, double split_after, int sort_key_splits)
{
    p->split_after = split_after > 0 ? split_after : 300;
    p->sort_key_splits = sort_key_splits;
}

unsigned partmap_count(const partmap *p)
{
    return p->n;
}

/* The last hash of partition i's range. */
static uint64_t range_end(const partmap *p, unsigned i)
{
    for (unsigned j = i + 1; j < p->n; j++)
        if (p->parts[j].lo != p->parts[i].lo) return p->parts[j].lo - 1;
    return UINT64_MAX;
}

static int suffix_cmp(const unsigned char *a, size_t al, const void *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = memcmp(a, b, n);
    return c ? c : al < bl ? -1 : al > bl;
}

/* The partition holding the key: the last whose bounds are at or below it. */
static unsigned find(const partmap *p, uint64_t hash, const void *suffix, size_t len)
{
    if (len > PARTMAP_SUFFIX_MAX) len = PARTMAP_SUFFIX_MAX;
    if (suffix == NULL) {
        suffix = "";
        len = 0;
    }
    unsigned lo = 0, hi = p->n; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        const part *m = &p->parts[mid];
        int at_or_below =
            m->lo < hash ||
            (m->lo == hash && (m->sk == NULL || suffix_cmp(m->sk, m->sk_len, suffix, len) <= 0));
        if (at_or_below)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int partmap_sort_key_split(const partmap *p, uint64_t hash)
{
    unsigned i = find(p, hash, NULL, 0);
    return i + 1 < p->n && p->parts[i + 1].lo == hash && p->parts[i + 1].sk != NULL;
}

/* Inserts a partition at index at with bounds (lo, sk), its buckets as from's (a split
 * gives no burst: each half goes on from where the whole was). */
static int insert(partmap *p, unsigned at, uint64_t lo, const unsigned char *sk, size_t sk_len,
                  const part *from, double now)
{
    if (p->n >= PARTMAP_MAX) return -1;
    part *parts = realloc(p->parts, (p->n + 1) * sizeof *parts);
    if (parts == NULL) return -1;
    p->parts = parts;
    memmove(&parts[at + 1], &parts[at], (p->n - at) * sizeof *parts);
    p->n++;
    part *np = &parts[at];
    memset(np, 0, sizeof *np);
    np->lo = lo;
    if (sk) {
        if ((np->sk = malloc(sk_len ? sk_len : 1)) == NULL) {
            memmove(&parts[at], &parts[at + 1], (p->n - at - 1) * sizeof *parts);
            p->n--;
            return -1;
        }
        memcpy(np->sk, sk, sk_len);
        np->sk_len = sk_len;
    }
    part_fresh(np, now);
    if (from) memcpy(np->b, from->b, sizeof np->b);
    return 0;
}

void partmap_grow(partmap *p, unsigned n, double now)
{
    if (n > PARTMAP_MAX) n = PARTMAP_MAX;
    if (p->n == 1 && !p->parts[0].sk && n > 1) {
        /* A new table's partitions divide the hash space evenly. */
        uint64_t step = UINT64_MAX / n;
        for (unsigned i = 1; i < n; i++)
            if (insert(p, i, step * i, NULL, 0, NULL, now)) return;
        return;
    }
    while (p->n < n) {
        unsigned widest = 0;
        uint64_t width = 0;
        for (unsigned i = 0; i < p->n; i++) {
            if (p->parts[i].sk) continue;
            uint64_t w = range_end(p, i) - p->parts[i].lo;
            if (w > width) {
                width = w;
                widest = i;
            }
        }
        if (width == 0) return;
        unsigned at = widest + 1;
        while (at < p->n && p->parts[at].lo == p->parts[widest].lo)
            at++;
        if (insert(p, at, p->parts[widest].lo + width / 2 + 1, NULL, 0, NULL, now)) return;
    }
}

/* Ends partition i's hot period after a split, keeping its buckets. */
static void cooled(partmap *p, unsigned i, double now)
{
    pbucket b[2];
    memcpy(b, p->parts[i].b, sizeof b);
    part_fresh(&p->parts[i], now);
    memcpy(p->parts[i].b, b, sizeof b);
}

/* Moves the partition key that takes most of partition i's traffic (its candidate) to a
 * partition of its own, which keeps i's buckets, debt included: the keys it shared them
 * with go on in fresh partitions, as adaptive capacity isolates a hot item. Returns 1 if
 * it did. */
static int isolate(partmap *p, unsigned i, double now)
{
    part h = p->parts[i];
    uint64_t lo = h.lo, end = range_end(p, i), c = h.candidate;
    if (h.sk || end == lo || c < lo || c > end) return 0;
    int rc = 0;
    if (c < end) rc |= insert(p, i + 1, c + 1, NULL, 0, NULL, now);
    if (c > lo) {
        rc |= insert(p, i + 1, c, NULL, 0, &h, now);
        part_fresh(&p->parts[i], now);
    } else {
        cooled(p, i, now);
    }
    return rc == 0;
}

/* Splits hot partition i, if it can be split: returns 1 if it was. */
static int split(partmap *p, unsigned i, double now)
{
    part h = p->parts[i]; /* a copy: insert moves the array */
    uint64_t lo = h.lo, end = range_end(p, i);
    unsigned after = i + 1;
    while (after < p->n && p->parts[after].lo == lo)
        after++;
    if (h.sk == NULL && end > lo && after == i + 1) {
        /* A range of hashes: isolate the one that takes most of it, else halve it. */
        int rc = 0;
        if (h.charges > 0 && h.candidate_hits * 2 > h.charges) return isolate(p, i, now);
        {
            rc = insert(p, i + 1, lo + (end - lo) / 2 + 1, NULL, 0, &h, now);
        }
        cooled(p, i, now);
        return rc == 0;
    }
    if (end != lo || !p->sort_key_splits || h.nsamples < 2) return 0;
    /* One partition key: split its sort keys at the median of the recent ones, when they
     * are not all one item's. */
    unsigned order[SAMPLES];
    for (unsigned k = 0; k < h.nsamples; k++)
        order[k] = k;
    for (unsigned a = 1; a < h.nsamples; a++)
        for (unsigned b = a;
             b > 0 && suffix_cmp(h.sample[order[b]], h.sample_len[order[b]], h.sample[order[b - 1]],
                                 h.sample_len[order[b - 1]]) < 0;
             b--) {
            unsigned t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    unsigned m = order[h.nsamples / 2], first = order[0];
    if (suffix_cmp(h.sample[m], h.sample_len[m], h.sample[first], h.sample_len[first]) <= 0)
        return 0; /* the lower half would be empty: one hot item */
    if (h.sk && suffix_cmp(h.sample[m], h.sample_len[m], h.sk, h.sk_len) <= 0) return 0;
    int rc = insert(p, i + 1, lo, h.sample[m], h.sample_len[m], &h, now);
    cooled(p, i, now);
    return rc == 0;
}

/* Notes a charge or refusal of partition i: heat, and the split it may bring. */
static void watch(partmap *p, unsigned i, int write, uint64_t hash, const void *suffix, size_t len,
                  double now)
{
    part *h = &p->parts[i];
    double used = 1.0 - h->b[write].tokens / ceiling(write);
    if (used < 0.1) {
        h->hot_since = -1;
        h->votes = h->candidate_hits = h->charges = 0;
        h->nsamples = 0;
        return;
    }
    if (used < 0.5 && h->hot_since < 0) return;
    if (h->hot_since < 0) h->hot_since = now;
    h->charges++;
    if (h->votes == 0) {
        h->candidate = hash;
        h->candidate_hits = 0;
    }
    h->votes += h->candidate == hash ? 1 : -1;
    h->candidate_hits += h->candidate == hash;
    if (suffix) {
        /* A uniform sample of the hot period's keys (reservoir sampling), so the median
         * splits its traffic in halves. */
        unsigned slot = h->nsamples < SAMPLES ? h->nsamples++ : SAMPLES;
        if (slot == SAMPLES) {
            p->rng ^= p->rng << 13;
            p->rng ^= p->rng >> 7;
            p->rng ^= p->rng << 17;
            uint64_t j = p->rng % (uint64_t)h->charges;
            if (j < SAMPLES) slot = (unsigned)j;
        }
        if (slot < SAMPLES) {
            size_t n = len > PARTMAP_SUFFIX_MAX ? PARTMAP_SUFFIX_MAX : len;
            memcpy(h->sample[slot], suffix, n);
            h->sample_len[slot] = n;
        }
    }
    if (now - h->hot_since >= p->split_after) {
        if (!split(p, i, now)) h->hot_since = now; /* look again a period later */
    }
}

/* At least this many charges of a hot partition name its dominant key before a refusal
 * isolates it. */
#define ISOLATE_AFTER 32

int partmap_spent(partmap *p, int write, uint64_t hash, const void *suffix, size_t len, double now)
{
    write = write != 0;
    unsigned i = find(p, hash, suffix, len);
    refill(&p->parts[i].b[write], write, now);
    if (p->parts[i].b[write].tokens > 0) return 0;
    watch(p, i, write, hash, suffix, len, now);
    /* A spent partition that one key dominates sheds that key at once, so the keys beside
     * it are not throttled for it; the key itself keeps the partition's ceiling. */
    part *h = &p->parts[i];
    if (h->hot_since >= 0 && h->charges >= ISOLATE_AFTER && h->candidate_hits * 2 > h->charges &&
        isolate(p, i, now)) {
        i = find(p, hash, suffix, len);
        refill(&p->parts[i].b[write], write, now);
        if (p->parts[i].b[write].tokens > 0) return 0;
    }
    return 1;
}

void partmap_charge(partmap *p, int write, uint64_t hash, const void *suffix, size_t len,
                    double units, double now)
{
    write = write != 0;
    unsigned i = find(p, hash, suffix, len);
    refill(&p->parts[i].b[write], write, now);
    p->parts[i].b[write].tokens -= units;
    watch(p, i, write, hash, suffix, len, now);
}
