/* entrydiff.c — entrydiff.h's merge of expected and held index entries. */
#include "util/entrydiff.h"

#include <stdlib.h>
#include <string.h>

int diff_set_add(diff_set *s, const void *key, size_t klen, const void *val, size_t vlen)
{
    if (s->n == s->cap) {
        size_t more = s->cap ? s->cap * 2 : 256;
        diff_entry *grown = realloc(s->e, more * sizeof *grown);
        if (grown == NULL) return -1;
        s->e = grown;
        s->cap = more;
    }
    diff_entry x = {malloc(klen + 1), malloc(vlen + 1), klen, vlen};
    if (x.key == NULL || x.val == NULL) {
        free(x.key);
        free(x.val);
        return -1;
    }
    memcpy(x.key, key, klen);
    x.key[klen] = 0;
    memcpy(x.val, val, vlen);
    x.val[vlen] = 0;
    s->e[s->n++] = x;
    return 0;
}

int diff_key_cmp(const diff_entry *x, const diff_entry *y)
{
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    return x->klen < y->klen ? -1 : x->klen > y->klen;
}

static int entry_cmp(const void *a, const void *b)
{
    return diff_key_cmp(a, b);
}

void diff_set_sort(diff_set *s)
{
    if (s->n > 1) qsort(s->e, s->n, sizeof *s->e, entry_cmp);
}

void diff_set_free(diff_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].key);
        free(s->e[i].val);
    }
    free(s->e);
    memset(s, 0, sizeof *s);
}

static void line(buf *report, const diff_ops *ops, const char *name, const char *what,
                 const diff_entry *e)
{
    buf_printf(report, "  %s: %s", name, what);
    ops->describe(ops->arg, report, e);
    buf_putc(report, '\n');
}

size_t diff_merge(const diff_set *want, const diff_ops *ops, const char *name, buf *report,
                  size_t *held)
{
    size_t i = 0, diffs = 0, count = 0;
    diff_entry have;
    int more = ops->next_held(ops->arg, &have);
    while (i < want->n || more) {
        int c = i >= want->n ? 1 : !more ? -1 : diff_key_cmp(&want->e[i], &have);
        if (c < 0) {
            line(report, ops, name, "missing entry for item ", &want->e[i++]);
            diffs++;
            continue;
        }
        if (c > 0) {
            line(report, ops, name, "stale entry with no base item: ", &have);
            diffs++;
        } else {
            const diff_entry *w = &want->e[i++];
            int same = ops->same ? ops->same(ops->arg, w, &have)
                                 : w->vlen == have.vlen && memcmp(w->val, have.val, w->vlen) == 0;
            if (!same) {
                line(report, ops, name, "entry differs from its base item ", w);
                diffs++;
            }
        }
        count++;
        more = ops->next_held(ops->arg, &have);
    }
    *held = count;
    return diffs;
}

void diff_summary(buf *report, const char *table, const char *index, size_t expected, size_t held,
                  size_t diffs)
{
    buf_printf(report, "%s index %s: %zu base entries expected, %zu stored, %zu difference%s\n",
               table, index, expected, held, diffs, diffs == 1 ? "" : "s");
}
