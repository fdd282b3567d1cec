/* storedrow.h — a stored row (an engine item's JSON text) read into a flat array of nodes
 * and one text buffer, all kept from row to row, so that a page of rows is read without
 * a jansson tree or an allocation per value. It only reads: rows are changed as jansson
 * trees (exec_row.c). A jansson value can be read into the same form, so the decoding of
 * stored values (value.c) and of collections (exec_row.c) is written once, on this form. */
#ifndef QR_CQL_STOREDROW_H
#define QR_CQL_STOREDROW_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"

typedef enum cql_snode_kind {
    CQL_SN_NULL,
    CQL_SN_FALSE,
    CQL_SN_TRUE,
    CQL_SN_NUMBER,
    CQL_SN_STRING,
    CQL_SN_OBJECT,
    CQL_SN_ARRAY,
    CQL_SN_SKIPPED /* a member of the top object whose value was not read (cql_srow_picker) */
} cql_snode_kind;

/* One JSON value. Node 0 is the top value; a container's members follow it in order, the
 * first at its own index + 1, each next one at the previous one's end. */
typedef struct cql_snode {
    uint32_t key, klen; /* a member of an object: its key in the row's text */
    uint32_t str, slen; /* a string's bytes or a number's text */
    uint32_t n;         /* an object's or array's members */
    uint32_t end;       /* the index after this value and everything in it */
    uint8_t kind;       /* cql_snode_kind */
} cql_snode;

/* The deepest nesting of objects and arrays a row may hold, the top object counted: deep
 * enough for a value nested CQL_TYPE_MAX_DEPTH deep (two JSON levels each) in an item's
 * attribute. A deeper row is refused. */
#define CQL_SROW_MAX_DEPTH 160

/* "No such node", from lookups. */
#define CQL_SNONE UINT32_MAX

/* Places of the top object's members for which a picker keeps a hint (cql_srow.hint). */
#define CQL_SROW_HINTS 16

typedef struct cql_srow {
    cql_snode *nodes;
    uint32_t n, cap;
    buf text;       /* the keys and strings (each followed by a NUL) */
    uint32_t *slot; /* nodes recorded by the picker of the last read (CQL_SNONE: none) */
    uint32_t nslot, slot_cap;
    const struct cql_rowmap *map; /* what the slots mean (exec_row.c), NULL when unpicked */
    uint32_t member; /* for the picker: the place among the top object's members of the one
                      * being picked (0 the first) */
    uint32_t hint[CQL_SROW_HINTS]; /* the picker's own, kept from row to row: what it found
                                    * for the member in each of the first places */
} cql_srow;

/* Chooses, for each member of the top object as a row is read, whether its value is read:
 * pick answers 1 (read it) or 0 (leave it out: the member keeps a node of kind
 * CQL_SN_SKIPPED, with nothing under it), and may record node, the member's index, in
 * r->slot. The slots (nslot of them) are CQL_SNONE before each read. */
typedef struct cql_srow_picker {
    int (*pick)(const void *arg, cql_srow *r, const char *key, size_t klen, uint32_t node);
    const void *arg;
    uint32_t nslot;
    const struct cql_rowmap *map; /* kept in r->map */
} cql_srow_picker;

void cql_srow_init(cql_srow *r);
void cql_srow_free(cql_srow *r);
/* Exchanges two rows' contents (keeping a row while the next is read into the other's
 * memory). */
void cql_srow_swap(cql_srow *a, cql_srow *b);

/* Reads JSON text (one object, as the engine stores items) into r, replacing what r held,
 * as jansson reads it. 0, or -1 when the text is not such an object. */
int cql_srow_parse(cql_srow *r, const char *json, size_t len);
/* Reads a jansson value into r, replacing what r held: 0, or -1 (out of memory). */
int cql_srow_from_json(cql_srow *r, const json_t *v);
/* As cql_srow_parse and cql_srow_from_json, the top object's members chosen by p. */
int cql_srow_parse_picked(cql_srow *r, const char *json, size_t len, const cql_srow_picker *p);
int cql_srow_from_json_picked(cql_srow *r, const json_t *v, const cql_srow_picker *p);

/* The member of object node obj named key (klen bytes); of several so named, the last, as
 * jansson keeps. CQL_SNONE when obj is no object or has none. */
uint32_t cql_srow_member(const cql_srow *r, uint32_t obj, const char *key, size_t klen);
/* As cql_srow_member with a NUL-terminated key. */
static inline uint32_t cql_srow_get(const cql_srow *r, uint32_t obj, const char *key)
{
    return cql_srow_member(r, obj, key, strlen(key));
}
/* The i-th member of object or array node at (CQL_SNONE past its end). */
uint32_t cql_srow_at(const cql_srow *r, uint32_t at, uint32_t i);

static inline const cql_snode *cql_srow_node(const cql_srow *r, uint32_t i)
{
    return &r->nodes[i];
}
static inline int cql_srow_is(const cql_srow *r, uint32_t i, cql_snode_kind kind)
{
    return i < r->n && r->nodes[i].kind == kind;
}
/* A string node's bytes (NUL-terminated) and length; NULL for any other node. */
static inline const char *cql_srow_str(const cql_srow *r, uint32_t i, size_t *len)
{
    if (!cql_srow_is(r, i, CQL_SN_STRING)) return NULL;
    *len = r->nodes[i].slen;
    return r->text.data + r->nodes[i].str;
}
/* A member's key (NUL-terminated). */
static inline const char *cql_srow_key(const cql_srow *r, uint32_t i, size_t *len)
{
    *len = r->nodes[i].klen;
    return r->text.data + r->nodes[i].key;
}
/* The one member of an object holding one (a DynamoDB AttributeValue's {"S": ...}): its
 * index, with *tag its key; CQL_SNONE when node i is not such an object. */
uint32_t cql_srow_tagged(const cql_srow *r, uint32_t i, const char **tag);

#endif
