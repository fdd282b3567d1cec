/* doc.h — a parsed model document: a tree of maps, sequences and scalars, each node
 * carrying the line and column where it starts, plus the arena that owns it all.
 *
 * YAML and JSON both arrive here through libyaml (JSON is first checked by jansson, whose
 * messages are better for JSON syntax errors). This layer knows nothing of tables or
 * entities; load.c gives the tree its meaning. Anchors and aliases are refused. */
#ifndef QR_CHECKER_DOC_H
#define QR_CHECKER_DOC_H

#include <stddef.h>

#include "util/err.h"

/* A bump allocator: everything a loaded model owns dies with it in one ck_arena_free. */
typedef struct ck_arena_block ck_arena_block;
typedef struct ck_arena {
    ck_arena_block *head;
} ck_arena;

void *ck_arena_alloc(ck_arena *a, size_t n); /* zeroed; NULL only when memory runs out */
char *ck_arena_strdup(ck_arena *a, const char *s);
char *ck_arena_printf(ck_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ck_arena_free(ck_arena *a);

typedef enum doc_kind { DOC_SCALAR, DOC_MAP, DOC_SEQ } doc_kind;

typedef struct doc_node {
    doc_kind kind;
    int line, col;          /* 1-based position of the node's first character */
    const char *str;        /* DOC_SCALAR: the text (NUL-terminated) */
    int quoted;             /* DOC_SCALAR: written in quotes (so never a number or bool) */
    size_t n;               /* DOC_MAP: pairs; DOC_SEQ: items */
    struct doc_node **keys; /* DOC_MAP: key scalars */
    struct doc_node **vals; /* DOC_MAP: values; DOC_SEQ: items */
} doc_node;

/* Parses text (len bytes) as YAML, or as JSON when it starts with '{' or '['. path names
 * the file in messages ("FILE:LINE:COL: problem"). The tree is allocated in a. */
int doc_parse(ck_arena *a, const char *path, const char *text, size_t len, doc_node **out,
              qr_err *err);

/* The value of key in a map, or NULL. */
doc_node *doc_get(const doc_node *map, const char *key);

#endif
