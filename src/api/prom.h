/* prom.h — a writer of Prometheus's text exposition format, version 0.0.4: families
 * (# HELP and # TYPE lines), samples with labels, histograms with cumulative buckets,
 * _sum and _count. It escapes what the format asks to be escaped and knows nothing of
 * quarry; what the metrics are is metrics.c's. It does not write OpenMetrics (no # EOF,
 * no exemplars, no _created). */
#ifndef QR_API_PROM_H
#define QR_API_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* The text being written. The first append that fails (out of memory, or the buffer's
 * cap) sets failed, and every later call does nothing. */
typedef struct prom {
    buf out;
    int failed;
} prom;

/* One label of a sample: its name (a valid label name, not escaped) and its value (any
 * UTF-8 text: backslashes, double quotes and line feeds are escaped). */
typedef struct prom_label {
    const char *name;
    const char *value;
} prom_label;

void prom_init(prom *p);
void prom_free(prom *p);

/* Begins a family: name (snake_case, with its unit and, for a counter, "_total"), its
 * type ("counter", "gauge" or "histogram") and a line of help (backslashes and line
 * feeds escaped). A family's samples follow it, before the next family begins. */
void prom_family(prom *p, const char *name, const char *type, const char *help);

/* A sample of the family just begun: name (the family's, or for a histogram the
 * family's with _bucket, _sum or _count), labels (n of them) and an integer or a
 * floating-point value. */
void prom_sample_u64(prom *p, const char *name, const prom_label *labels, size_t n, uint64_t v);
void prom_sample_double(prom *p, const char *name, const prom_label *labels, size_t n, double v);

/* One histogram series of the family name: nbounds finite upper bounds, as text
 * (le_text[i]: "0.005"), counts[0..nbounds] the observations in each bucket alone, the
 * last past every bound, and their sum as text. Written cumulatively: one _bucket per
 * bound and le="+Inf", then _sum and _count (which equals the +Inf bucket). */
void prom_histogram(prom *p, const char *name, const prom_label *labels, size_t n,
                    const char *const *le_text, size_t nbounds, const uint64_t *counts,
                    const char *sum_text);

#endif
