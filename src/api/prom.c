/* prom.c — Prometheus's text exposition format, version 0.0.4 (see prom.h): lines of
 * "# HELP", "# TYPE" and samples "name{label=\"value\",...} value", each ending in a line
 * feed. It only formats; what is measured, and when, is the caller's. */
#include "api/prom.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void prom_init(prom *p)
{
    buf_init(&p->out, 0);
    p->failed = 0;
}

void prom_free(prom *p)
{
    buf_free(&p->out);
}

static void put(prom *p, const char *s, size_t n)
{
    if (!p->failed && buf_append(&p->out, s, n)) p->failed = 1;
}

static void puts_(prom *p, const char *s)
{
    put(p, s, strlen(s));
}

/* s with backslash and line feed escaped, and the double quote too in a label value. */
static void escaped(prom *p, const char *s, int quote)
{
    const char *run = s;
    for (; *s; s++) {
        const char *esc = *s == '\\'           ? "\\\\"
                          : *s == '\n'         ? "\\n"
                          : quote && *s == '"' ? "\\\""
                                               : NULL;
        if (esc == NULL) continue;
        put(p, run, (size_t)(s - run));
        puts_(p, esc);
        run = s + 1;
    }
    put(p, run, (size_t)(s - run));
}

void prom_family(prom *p, const char *name, const char *type, const char *help)
{
    puts_(p, "# HELP ");
    puts_(p, name);
    put(p, " ", 1);
    escaped(p, help, 0);
    puts_(p, "\n# TYPE ");
    puts_(p, name);
    put(p, " ", 1);
    puts_(p, type);
    put(p, "\n", 1);
}

/* name{labels[,extra]} and the space before the value. */
static void sample_head(prom *p, const char *name, const prom_label *labels, size_t n,
                        const prom_label *extra)
{
    puts_(p, name);
    if (n == 0 && extra == NULL) {
        put(p, " ", 1);
        return;
    }
    put(p, "{", 1);
    for (size_t i = 0; i < n + (extra != NULL); i++) {
        const prom_label *l = i < n ? &labels[i] : extra;
        if (i) put(p, ",", 1);
        puts_(p, l->name);
        put(p, "=\"", 2);
        escaped(p, l->value, 1);
        put(p, "\"", 1);
    }
    put(p, "} ", 2);
}

static void put_u64(prom *p, uint64_t v)
{
    char num[24];
    int len = snprintf(num, sizeof num, "%" PRIu64 "\n", v);
    put(p, num, (size_t)len);
}

void prom_sample_u64(prom *p, const char *name, const prom_label *labels, size_t n, uint64_t v)
{
    sample_head(p, name, labels, n, NULL);
    put_u64(p, v);
}

void prom_sample_double(prom *p, const char *name, const prom_label *labels, size_t n, double v)
{
    sample_head(p, name, labels, n, NULL);
    char num[40];
    int len;
    if (isnan(v)) {
        len = snprintf(num, sizeof num, "NaN\n");
    } else if (isinf(v)) {
        len = snprintf(num, sizeof num, "%sInf\n", v < 0 ? "-" : "+");
    } else { /* the shorter form when it reads back as the same number (0.1, not 0.1000…01) */
        len = snprintf(num, sizeof num, "%.15g\n", v);
        if (strtod(num, NULL) != v) len = snprintf(num, sizeof num, "%.17g\n", v);
    }
    put(p, num, (size_t)len);
}

void prom_histogram(prom *p, const char *name, const prom_label *labels, size_t n,
                    const char *const *le_text, size_t nbounds, const uint64_t *counts,
                    const char *sum_text)
{
    size_t nlen = strlen(name);
    char series[128];
    if (nlen + sizeof "_bucket" > sizeof series) {
        p->failed = 1;
        return;
    }
    memcpy(series, name, nlen);
    uint64_t total = 0;
    strcpy(series + nlen, "_bucket");
    for (size_t i = 0; i <= nbounds; i++) {
        total += counts[i];
        prom_label le = {"le", i < nbounds ? le_text[i] : "+Inf"};
        sample_head(p, series, labels, n, &le);
        put_u64(p, total);
    }
    strcpy(series + nlen, "_sum");
    sample_head(p, series, labels, n, NULL);
    puts_(p, sum_text);
    put(p, "\n", 1);
    strcpy(series + nlen, "_count");
    sample_head(p, series, labels, n, NULL);
    put_u64(p, total);
}
