/* topk.h — the heaviest keys of a stream in bounded memory: a weighted Space-Saving
 * summary (Metwally, Agrawal and El Abbadi, 2005) of k counters, and a sliding window of
 * such summaries, one per time bucket, merged when asked. A pure model of byte-string
 * keys and weights: it knows nothing of tables, items or clocks (the caller gives the
 * time), and it does no locking (the caller serialises each summary's use).
 *
 * The guarantee, for a summary of k counters that has seen keys of total weight N: every
 * key whose true weight exceeds N/k is kept, and each kept key's count c and error e
 * bound its true weight w as c - e <= w <= c, with e <= N/k. A window keeps the bound
 * over any run of its buckets: counts are summed, and a bucket that does not hold a key
 * adds its smallest count (what the key could at most have had there) to the estimate,
 * so the estimate still over-estimates by at most N/k, N being the window's total. */
#ifndef QR_TOPK_H
#define QR_TOPK_H

#include <stddef.h>
#include <stdint.h>

/* Keys longer than this are cut to it (a DynamoDB key is at most 2048 + 1024 bytes,
 * plus quarry's prefix). */
#define TOPK_MAX_KEY 4096

typedef struct topk topk;
/* A new empty summary of k counters (k >= 1); NULL when out of memory. */
topk *topk_new(size_t k);
void topk_free(topk *s);
/* Forgets every key (the memory is kept). */
void topk_reset(topk *s);
/* Counts weight w (> 0) for key (len bytes, copied), and aux[0..TOPK_AUX) beside it:
 * figures (units read and written, say) summed per key from the moment the key entered
 * the summary, so lower bounds on the key's true totals, with no guarantee for keys that
 * came and went. aux may be NULL (zeros). Returns -1 only when out of memory (nothing is
 * counted then). */
#define TOPK_AUX 2
int topk_add(topk *s, const void *key, size_t len, double w, const double *aux);

/* What a summary (or a window) holds about one key. */
typedef struct topk_entry {
    const char *key; /* borrowed: valid until the summary changes */
    size_t len;
    double count; /* the estimate: at least the true weight */
    double error; /* count - error is at most the true weight */
    double aux[TOPK_AUX];
} topk_entry;
/* The summary's total weight N, the number of keys held, and its smallest count when
 * all k counters are taken (0 while one is free: an absent key then has weight 0). */
double topk_total(const topk *s);
size_t topk_size(const topk *s);
double topk_floor(const topk *s);
/* Copies up to max entries into out, heaviest first (ties in key order); returns how
 * many. */
size_t topk_list(const topk *s, topk_entry *out, size_t max);
/* The entry of key, if it is held: returns 1 and fills *out, else 0. */
int topk_find(const topk *s, const void *key, size_t len, topk_entry *out);

/* ---- sliding windows ----
 * A ring of nbuckets summaries, each covering width seconds of the caller's clock
 * (bucket b covers [b*width, (b+1)*width)); adding at time now first clears a bucket
 * whose time has passed, so the window always holds the last nbuckets * width seconds. */
typedef struct topk_window topk_window;
topk_window *topk_window_new(size_t k, size_t nbuckets, double width);
void topk_window_free(topk_window *w);
int topk_window_add(topk_window *w, double now, const void *key, size_t len, double weight,
                    const double *aux);
double topk_window_width(const topk_window *w);

/* One bucket's figures, for a report's datapoints. */
typedef struct topk_bucket_info {
    double start;  /* the bucket's start time */
    double total;  /* its total weight */
    uint64_t adds; /* how many topk_window_add calls it counted */
    size_t keys;   /* keys it holds */
    double max;    /* its heaviest key's count */
} topk_bucket_info;
/* The buckets of w that lie in [from, to) and still hold their time, oldest first; up to
 * max of them into out (may be NULL to count); returns how many there are. */
size_t topk_window_buckets(const topk_window *w, double from, double to, topk_bucket_info *out,
                           size_t max);

/* The heaviest keys of [from, to): each key any bucket there holds, with its estimate
 * summed over those buckets (see above), heaviest first. A result owns its copies. */
typedef struct topk_result {
    topk_entry *all; /* keys point into the result's own storage */
    size_t n;
    double total; /* the window's total weight N over [from, to) */
    char *keys;   /* the storage */
} topk_result;
int topk_window_top(const topk_window *w, double from, double to, topk_result *out);
void topk_result_free(topk_result *r);
/* The estimate of key in the one bucket starting at start (0 if the bucket is not kept):
 * its count there, or that bucket's floor when it does not hold the key. */
double topk_window_bucket_estimate(const topk_window *w, double start, const void *key, size_t len);

#endif
