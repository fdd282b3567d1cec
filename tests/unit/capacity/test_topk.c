/* test_topk.c — the Space-Saving summary and its sliding window against exact counts:
 * skewed (Zipf-like) streams, unit and weighted, checked key by key for topk.h's
 * guarantee (every key above N/k kept, each count within [true, true + N/k] and its error
 * bounding it from below), the heaviest keys found in order, a window's buckets expiring,
 * and a window's merged estimate keeping the bound over several buckets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/topk.h"

#include "check.h"

#define NKEYS 5000

/* A Zipf(s)-distributed key number in [0, NKEYS), by inverting the cumulative weights. */
static double cdf[NKEYS];
static void zipf_init(double s)
{
    double sum = 0;
    for (int i = 0; i < NKEYS; i++)
        cdf[i] = (sum += 1.0 / pow(i + 1, s));
    for (int i = 0; i < NKEYS; i++)
        cdf[i] /= sum;
}

static unsigned long long rng = 88172645463325252ULL;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static int zipf_draw(void)
{
    double u = uniform();
    int lo = 0, hi = NKEYS - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int key_of(char *out, int i)
{
    return snprintf(out, 32, "key-%d", i);
}

/* Checks s against the exact weights of each key (total N). */
static void check_bound(const topk *s, const double *exact, double n, size_t k, const char *what)
{
    char key[32];
    double bound = n / (double)k;
    int kept_all_heavy = 1, bounded = 1;
    for (int i = 0; i < NKEYS; i++) {
        int len = key_of(key, i);
        topk_entry e;
        int held = topk_find(s, key, (size_t)len, &e);
        if (exact[i] > bound && !held) kept_all_heavy = 0;
        if (held && !(e.count >= exact[i] - 1e-9 && e.count - e.error <= exact[i] + 1e-9 &&
                      e.error <= bound + 1e-9 && e.count - exact[i] <= bound + 1e-9)) {
            bounded = 0;
            fprintf(stderr, "  %s: %s true %g count %g error %g bound %g\n", what, key, exact[i],
                    e.count, e.error, bound);
        }
    }
    CHECK(kept_all_heavy, "%s: a key above N/k = %g was dropped", what, bound);
    CHECK(bounded, "%s: a count is outside its bound", what);
    CHECK(fabs(topk_total(s) - n) < 1e-6, "%s: total %g, want %g", what, topk_total(s), n);
}

static void test_unit_stream(void)
{
    static double exact[NKEYS];
    memset(exact, 0, sizeof exact);
    size_t k = 50;
    topk *s = topk_new(k);
    char key[32];
    int n = 200000;
    for (int i = 0; i < n; i++) {
        int x = zipf_draw();
        exact[x] += 1;
        topk_add(s, key, (size_t)key_of(key, x), 1, NULL);
    }
    check_bound(s, exact, n, k, "unit weights");
    /* The heaviest keys of a Zipf stream stand far apart: the first three are found in
     * their true order. */
    topk_entry top[3];
    CHECK(topk_list(s, top, 3) == 3, "three entries listed");
    for (int i = 0; i < 3; i++) {
        key_of(key, i);
        CHECK(top[i].len == strlen(key) && memcmp(top[i].key, key, top[i].len) == 0,
              "rank %d is %.*s, want %s", i, (int)top[i].len, top[i].key, key);
    }
    CHECK(topk_size(s) == k, "%zu keys held, want %zu", topk_size(s), k);
    CHECK(topk_floor(s) > 0, "a full summary has a floor");
    topk_reset(s);
    CHECK(topk_size(s) == 0 && topk_total(s) == 0 && topk_floor(s) == 0, "reset empties it");
    topk_free(s);
}

static void test_weighted_stream(void)
{
    static double exact[NKEYS];
    memset(exact, 0, sizeof exact);
    size_t k = 20;
    topk *s = topk_new(k);
    char key[32];
    double n = 0;
    for (int i = 0; i < 100000; i++) {
        int x = zipf_draw();
        double w = 1 + (double)(i % 7) * 0.5; /* units: 1 to 4 */
        exact[x] += w;
        n += w;
        double units[TOPK_AUX] = {w, 2 * w};
        topk_add(s, key, (size_t)key_of(key, x), w, units);
    }
    check_bound(s, exact, n, k, "weighted");
    /* aux is summed from the key's entry on: never above the true total. */
    topk_entry e;
    key_of(key, 0);
    CHECK(topk_find(s, key, strlen(key), &e) && e.aux[0] <= exact[0] + 1e-9 && e.aux[0] > 0 &&
              e.aux[1] == 2 * e.aux[0],
          "aux of the heaviest key %g %g, true %g", e.aux[0], e.aux[1], exact[0]);
    topk_free(s);
}

/* An adversarial stream: every key distinct but one that comes back every fifth add
 * (2,000 of 10,000: above N/k = 1,250). */
static void test_churn(void)
{
    topk *s = topk_new(8);
    char key[32];
    int hot = 0;
    for (int i = 0; i < 10000; i++) {
        if (i % 5 == 0) {
            topk_add(s, "hot", 3, 1, NULL);
            hot++;
        } else {
            topk_add(s, key, (size_t)snprintf(key, sizeof key, "cold-%d", i), 1, NULL);
        }
    }
    topk_entry e = {0};
    CHECK(topk_find(s, "hot", 3, &e), "the recurring key is kept");
    CHECK(e.count >= hot && e.count - e.error <= hot && e.count - hot <= 10000.0 / 8,
          "hot: count %g error %g true %d", e.count, e.error, hot);
    /* Long keys are cut, not refused. */
    static char big[TOPK_MAX_KEY + 100];
    memset(big, 'x', sizeof big);
    CHECK(topk_add(s, big, sizeof big, 5000, NULL) == 0, "a long key is counted");
    CHECK(topk_find(s, big, sizeof big, &e) && e.len == TOPK_MAX_KEY, "under its cut length");
    topk_free(s);
}

static void test_window(void)
{
    /* Six buckets of ten seconds: a minute. */
    topk_window *w = topk_window_new(10, 6, 10);
    static double exact[NKEYS];
    memset(exact, 0, sizeof exact);
    char key[32];
    double n = 0;
    /* Keys seen before t = 100 leave the window by t = 160. */
    for (int i = 0; i < 1000; i++)
        topk_window_add(w, 95 + i * 0.001, "old", 3, 1, NULL);
    for (int i = 0; i < 60000; i++) {
        double t = 100 + i * 0.001; /* [100, 160): all six buckets */
        int x = zipf_draw();
        exact[x] += 1;
        n += 1;
        topk_window_add(w, t, key, (size_t)key_of(key, x), 1, NULL);
    }
    topk_result r;
    CHECK(topk_window_top(w, 100, 160, &r) == 0, "top of the window");
    CHECK(fabs(r.total - n) < 1e-6, "window total %g, want %g", r.total, n);
    int ok = 1;
    for (size_t i = 0; i < r.n; i++) {
        int x = -1;
        if (sscanf(r.all[i].key, "key-%d", &x) != 1) {
            ok = 0;
            continue;
        }
        if (!(r.all[i].count >= exact[x] - 1e-9 && r.all[i].count - exact[x] <= n / 10 + 1e-9 &&
              r.all[i].count - r.all[i].error <= exact[x] + 1e-9))
            ok = 0;
    }
    CHECK(ok, "every merged estimate is within N/k above its true weight");
    CHECK(r.n > 0 && r.all[0].len == 5 && memcmp(r.all[0].key, "key-0", 5) == 0,
          "the heaviest key of the window is key-0");
    /* Every key above N/k over the window is among the candidates. */
    int heavy_found = 1;
    for (int x = 0; x < NKEYS; x++) {
        if (exact[x] <= n / 10) continue;
        int len = key_of(key, x), found = 0;
        for (size_t i = 0; i < r.n; i++)
            found |= r.all[i].len == (size_t)len && memcmp(r.all[i].key, key, (size_t)len) == 0;
        heavy_found &= found;
    }
    CHECK(heavy_found, "every key above N/k is reported");
    int old_gone = 1;
    for (size_t i = 0; i < r.n; i++)
        old_gone &= !(r.all[i].len == 3 && memcmp(r.all[i].key, "old", 3) == 0);
    CHECK(old_gone, "the key of a bucket overwritten is gone");
    topk_result_free(&r);

    topk_bucket_info info[8];
    CHECK(topk_window_buckets(w, 100, 160, info, 8) == 6, "six buckets in the last minute");
    CHECK(info[0].start == 100 && info[5].start == 150, "oldest first: %g .. %g", info[0].start,
          info[5].start);
    CHECK(info[0].adds == 10000 && info[0].total == 10000, "a bucket counted its adds");
    CHECK(topk_window_buckets(w, 120, 130, NULL, 0) == 1, "one bucket in [120, 130)");
    key_of(key, 0);
    CHECK(topk_window_bucket_estimate(w, 120, key, strlen(key)) > 0, "a bucket's estimate");
    CHECK(topk_window_bucket_estimate(w, 60, key, strlen(key)) == 0, "a bucket not kept: 0");
    /* Time passes: an add at 175 clears the bucket of [110, 120) for [170, 180). */
    topk_window_add(w, 175, "new", 3, 1, NULL);
    CHECK(topk_window_buckets(w, 0, 1000, NULL, 0) == 6, "still six buckets kept");
    CHECK(topk_window_buckets(w, 110, 120, NULL, 0) == 0, "[110, 120) was replaced");
    topk_window_free(w);
}

int main(void)
{
    zipf_init(1.1);
    test_unit_stream();
    test_weighted_stream();
    test_churn();
    test_window();
    return check_report("test_topk");
}
