/* entrydiff.h — the comparison at the heart of `quarry verify`: the entries an index
 * should hold (made from its table's items) against the entries it holds, matched by key,
 * each difference reported as one line: missing, stale (no base item) or differing. Keys
 * and values are opaque bytes; the caller says how to compare two values and how to show
 * an entry. It reads no store and no API: the engine feeds it stored entries, the tools
 * entries read through DynamoDB's API, so both report drift in the same words. */
#ifndef QR_ENTRYDIFF_H
#define QR_ENTRYDIFF_H

#include <stddef.h>

#include "util/buf.h"

typedef struct diff_entry {
    char *key, *val;
    size_t klen, vlen;
} diff_entry;

/* A growable set of entries (owned copies). */
typedef struct diff_set {
    diff_entry *e;
    size_t n, cap;
} diff_set;

/* Adds a copy of an entry; -1 when memory runs out. */
int diff_set_add(diff_set *s, const void *key, size_t klen, const void *val, size_t vlen);
/* Sorts the entries by key (bytewise, shorter first on a tie). */
void diff_set_sort(diff_set *s);
void diff_set_free(diff_set *s);
/* Bytewise order of two entries' keys, as diff_set_sort orders them. */
int diff_key_cmp(const diff_entry *a, const diff_entry *b);

typedef struct diff_ops {
    /* 1 when want and have (same key) are the same entry; NULL: the bytes must be equal. */
    int (*same)(void *arg, const diff_entry *want, const diff_entry *have);
    /* Appends what identifies the entry's item to out. */
    void (*describe)(void *arg, buf *out, const diff_entry *e);
    /* Yields the entries held, in key order: 1 with *e set (borrowed until the next
     * call), 0 at the end. */
    int (*next_held)(void *arg, diff_entry *e);
    void *arg;
} diff_ops;

/* Merges the expected entries (sorted) with those held, appending one line per
 * difference to report, each starting "  NAME: " (name: "Table.Index"). Returns the
 * number of differences; *held is set to the number of entries held. */
size_t diff_merge(const diff_set *want, const diff_ops *ops, const char *name, buf *report,
                  size_t *held);

/* The line that ends an index's comparison: "T index I: N base entries expected, M
 * stored, D differences". */
void diff_summary(buf *report, const char *table, const char *index, size_t expected, size_t held,
                  size_t diffs);

#endif
