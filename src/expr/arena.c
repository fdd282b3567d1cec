/* arena.c — the one-free memory of a parsed expression (see ast.h).
 *
 * Blocks are chained and freed together; AttributeValues the tree refers to are held by
 * one reference each and released with the blocks. There is no per-node free. */
#include "expr/ast.h"

#include <stdlib.h>
#include <string.h>

struct arena_block {
    arena_block *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
};

#define ARENA_BLOCK 4096

void arena_init(arena *a)
{
    memset(a, 0, sizeof *a);
}

void *arena_alloc(arena *a, size_t n)
{
    size_t align = _Alignof(max_align_t);
    n = (n + align - 1) / align * align;
    if (n == 0) n = align;
    arena_block *b = a->head;
    if (b == NULL || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        b = malloc(sizeof *b + cap);
        if (b == NULL) return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
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
    memcpy(p, s, n);
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
    arena_init(a);
}
