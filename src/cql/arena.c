/* arena.c — the memory of one CQL parse (see ast.h): blocks chained and freed together,
 * with a cap on the total so a hostile statement cannot make the parser allocate without
 * bound. There is no per-node free. */
#include "cql/ast.h"

#include <stdlib.h>
#include <string.h>

struct cql_arena_block {
    cql_arena_block *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
};

#define BLOCK 8192

void cql_arena_init(cql_arena *a, size_t max)
{
    memset(a, 0, sizeof *a);
    a->max = max;
}

void *cql_arena_alloc(cql_arena *a, size_t n)
{
    size_t align = _Alignof(max_align_t);
    if (n > ((size_t)1 << 40)) return NULL;
    n = (n + align - 1) / align * align;
    if (n == 0) n = align;
    cql_arena_block *b = a->head;
    if (b == NULL || b->cap - b->used < n) {
        size_t cap = n > BLOCK ? n : BLOCK;
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

char *cql_arena_strndup(cql_arena *a, const char *s, size_t n)
{
    char *p = cql_arena_alloc(a, n + 1);
    if (p == NULL) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void cql_arena_free(cql_arena *a)
{
    cql_arena_block *b = a->head;
    while (b) {
        cql_arena_block *next = b->next;
        free(b);
        b = next;
    }
    size_t max = a->max;
    cql_arena_init(a, max);
}
