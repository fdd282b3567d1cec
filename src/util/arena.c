/* arena.c — memory freed all at once (see arena.h). Blocks start small, for the short
 * expressions of most requests, and double up to a limit, for long CQL batches. */
#include "util/arena.h"

#include <stdlib.h>
#include <string.h>

struct arena_block {
    arena_block *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
};

#define ARENA_FIRST_BLOCK 4096
#define ARENA_MAX_BLOCK 65536

void arena_init(arena *a, size_t max)
{
    memset(a, 0, sizeof *a);
    a->max = max;
}

void *arena_alloc(arena *a, size_t n)
{
    size_t align = _Alignof(max_align_t);
    if (n > ((size_t)1 << 40)) return NULL;
    n = (n + align - 1) / align * align;
    if (n == 0) n = align;
    arena_block *b = a->head;
    if (b == NULL || b->cap - b->used < n) {
        size_t cap = b == NULL ? ARENA_FIRST_BLOCK : b->cap * 2;
        if (cap > ARENA_MAX_BLOCK) cap = ARENA_MAX_BLOCK;
        if (cap < n) cap = n;
        if (a->max && a->total + cap > a->max) return NULL;
        b = malloc(sizeof *b + cap);
        if (b == NULL) return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
        a->total += cap;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (p == NULL) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

json_t *arena_keep(arena *a, json_t *v)
{
    if (v == NULL) return NULL;
    if (a->nrefs == a->caprefs) {
        size_t cap = a->caprefs ? a->caprefs * 2 : 8;
        json_t **r = realloc(a->refs, cap * sizeof *r);
        if (r == NULL) return NULL;
        a->refs = r;
        a->caprefs = cap;
    }
    a->refs[a->nrefs++] = json_incref(v);
    return v;
}

void arena_free(arena *a)
{
    arena_block *b = a->head;
    while (b) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    for (size_t i = 0; i < a->nrefs; i++)
        json_decref(a->refs[i]);
    free(a->refs);
    arena_init(a, a->max);
}
