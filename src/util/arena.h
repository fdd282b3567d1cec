/* arena.h — memory freed all at once: the nodes and strings of one parsed expression or
 * CQL statement. Blocks are chained and released together, with an optional cap on the
 * total so a hostile input cannot make a parser allocate without bound, and JSON values
 * the tree refers to are held by one reference each until the arena is freed. There is
 * no per-allocation free. */
#ifndef QR_ARENA_H
#define QR_ARENA_H

#include <jansson.h>
#include <stddef.h>

typedef struct arena_block arena_block;
typedef struct arena {
    arena_block *head;
    size_t total;  /* bytes of blocks allocated so far */
    size_t max;    /* most bytes it may allocate (0: no cap) */
    json_t **refs; /* values held, one reference each */
    size_t nrefs, caprefs;
} arena;

void arena_init(arena *a, size_t max);
/* Zeroed memory that lives until arena_free; NULL when out of memory or past the cap. */
void *arena_alloc(arena *a, size_t n);
char *arena_strndup(arena *a, const char *s, size_t n);
/* Takes a new reference to v, released by arena_free. Returns v (NULL on failure). */
json_t *arena_keep(arena *a, json_t *v);
/* Releases everything; the arena is then empty, with the same cap, ready for reuse. */
void arena_free(arena *a);

#endif
