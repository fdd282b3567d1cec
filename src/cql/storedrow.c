/* storedrow.c — stored rows as flat nodes: jsmn (Debian's libjsmn-dev, a tokenizer that
 * allocates nothing) splits the text into tokens kept in the row, which become its nodes;
 * text jsmn does not take, or with a \u escape, is read by jansson and its value walked
 * into the same form. Lookups scan an object's members; rows have a few dozen at most.
 *
 * Not a general JSON reader: the top value must be an object, numbers are kept as text. */
#include "cql/storedrow.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "util/jsonread.h"

/* Deep enough for a value nested CQL_TYPE_MAX_DEPTH deep (two JSON levels each) in an
 * item's attribute. */
#define SROW_DEPTH 160

void cql_srow_init(cql_srow *r)
{
    memset(r, 0, sizeof *r);
    buf_init(&r->text, 0);
}

void cql_srow_free(cql_srow *r)
{
    free(r->nodes);
    free(r->toks);
    free(r->slot);
    buf_free(&r->text);
    cql_srow_init(r);
}

void cql_srow_swap(cql_srow *a, cql_srow *b)
{
    cql_srow t = *a;
    *a = *b;
    *b = t;
}

static void srow_reset(cql_srow *r)
{
    r->n = 0;
    buf_reset(&r->text);
    for (uint32_t i = 0; i < r->nslot; i++)
        r->slot[i] = CQL_SNONE;
}

/* r's slots made p's (all CQL_SNONE), or none when p is NULL: 0, or -1. */
static int slots_for(cql_srow *r, const cql_srow_picker *p)
{
    uint32_t n = p ? p->nslot : 0;
    if (n > r->slot_cap) {
        uint32_t *slot = realloc(r->slot, (size_t)n * sizeof *slot);
        if (slot == NULL) return -1;
        r->slot = slot;
        r->slot_cap = n;
    }
    r->nslot = n;
    r->map = p ? p->map : NULL;
    return 0;
}

/* Appends s (n bytes) and a NUL to r's text: its offset, or -1. */
static int64_t text_put(cql_srow *r, const void *s, size_t n)
{
    size_t at = r->text.len;
    if (n > UINT32_MAX - 1 || at > UINT32_MAX - n - 1) return -1;
    if (buf_reserve(&r->text, n + 1) != 0) return -1;
    if (n) memcpy(r->text.data + at, s, n);
    r->text.data[at + n] = '\0';
    r->text.len = at + n + 1;
    return (int64_t)at;
}

/* ---- building ---- */

typedef struct builder {
    cql_srow *r;
    uint32_t open[SROW_DEPTH]; /* the containers not yet closed */
    int depth;
    uint32_t key, klen;          /* the key of the member that comes next */
    const cql_srow_picker *pick; /* the top object's members to read, or NULL: all */
} builder;

/* Whether the member of the top object that comes next is read (its node will be the
 * next one added). */
static int picked(builder *b)
{
    if (b->pick == NULL || b->depth != 1) return 1;
    return b->pick->pick(b->pick->arg, b->r, b->r->text.data + b->key, b->klen, b->r->n);
}

/* Room for n nodes in r->nodes: 0, or -1. */
static int nodes_room(cql_srow *r, uint32_t n)
{
    if (n <= r->cap) return 0;
    uint32_t cap = r->cap ? r->cap : 64;
    while (cap < n) {
        if (cap > UINT32_MAX / 2) return -1;
        cap *= 2;
    }
    cql_snode *nodes = realloc(r->nodes, (size_t)cap * sizeof *nodes);
    if (nodes == NULL) return -1;
    r->nodes = nodes;
    r->cap = cap;
    return 0;
}

/* A new node of kind under the innermost open container: its index, or -1. */
static int64_t node_add(builder *b, uint8_t kind)
{
    cql_srow *r = b->r;
    if (r->n == 0 && kind != CQL_SN_OBJECT) return -1; /* the top value is an object */
    if (r->n > 0 && b->depth == 0) return -1;          /* one top value */
    if (r->n == UINT32_MAX || nodes_room(r, r->n + 1) != 0) return -1;
    uint32_t i = r->n++;
    cql_snode *nd = &r->nodes[i];
    memset(nd, 0, sizeof *nd);
    nd->kind = kind;
    nd->end = i + 1;
    if (b->depth > 0) {
        cql_snode *parent = &r->nodes[b->open[b->depth - 1]];
        parent->n++;
        if (parent->kind == CQL_SN_OBJECT) {
            nd->key = b->key;
            nd->klen = b->klen;
        }
    }
    if (kind == CQL_SN_OBJECT || kind == CQL_SN_ARRAY) {
        if (b->depth == SROW_DEPTH) return -1;
        b->open[b->depth++] = i;
    }
    return i;
}

static int close_container(builder *b)
{
    if (b->depth == 0) return -1;
    uint32_t i = b->open[--b->depth];
    b->r->nodes[i].end = b->r->n;
    return 0;
}

/* A scalar node; s (n bytes) its text for a string or number. 0, or -1. */
static int scalar(builder *b, uint8_t kind, const void *s, size_t n)
{
    int64_t i = node_add(b, kind);
    if (i < 0) return -1;
    if (kind == CQL_SN_STRING || kind == CQL_SN_NUMBER) {
        int64_t at = text_put(b->r, s, n);
        if (at < 0) return -1;
        b->r->nodes[i].str = (uint32_t)at;
        b->r->nodes[i].slen = (uint32_t)n;
    }
    return 0;
}

static int set_key(builder *b, const char *s, size_t n)
{
    int64_t at = text_put(b->r, s, n);
    if (at < 0) return -1;
    b->key = (uint32_t)at;
    b->klen = (uint32_t)n;
    return 0;
}

/* ---- from text ---- */

/* JSON string text (between its quotes; escapes as jsmn lets them through, \u excepted)
 * decoded in place into out (n bytes at most): the decoded length. */
static size_t unescape(const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < n) {
            switch (s[++i]) {
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'n':
                c = '\n';
                break;
            case 'r':
                c = '\r';
                break;
            case 't':
                c = '\t';
                break;
            default: /* " \ / */
                c = s[i];
                break;
            }
        }
        out[k++] = c;
    }
    return k;
}

/* String token t of the row's text (a copy of the text read, in r->text): decoded in
 * place when escaped (some string of the text has a backslash) and ended by a NUL where
 * its closing quote was. *at and *len its place and length. */
static inline void token_text(cql_srow *r, const jsmntok_t *t, int escaped, uint32_t *at,
                              uint32_t *len)
{
    char *s = r->text.data + t->start;
    size_t n = (size_t)(t->end - t->start);
    if (escaped && memchr(s, '\\', n)) n = unescape(s, n, s);
    s[n] = '\0';
    *at = (uint32_t)t->start;
    *len = (uint32_t)n;
}

/* A container open in the walk of the tokens: its node, and its members still to come. */
typedef struct open_container {
    uint32_t node;
    int left;
} open_container;

/* The nodes of jsmn's tokens (tok[0] an object, the text's copy in r->text), the top
 * object's members chosen by pick: 0, or -1 when the tokens are not one such value. A
 * walk with its state in locals: r->nodes has room for ntok nodes (a node takes at least
 * one token), so nothing here allocates, and the text's stores (strings ended in place)
 * are the only ones through char pointers. */
static int from_tokens(cql_srow *r, int escaped, const jsmntok_t *tok, unsigned ntok,
                       const cql_srow_picker *pick)
{
    open_container open[SROW_DEPTH];
    cql_snode *nodes = r->nodes;
    char *text = r->text.data;
    uint32_t n = 0;
    nodes[n] = (cql_snode){.kind = CQL_SN_OBJECT, .end = 1};
    open[0] = (open_container){.node = n++, .left = tok[0].size};
    int depth = 1;
    unsigned i = 1;
    while (depth > 0) {
        open_container *top = &open[depth - 1];
        cql_snode *parent = &nodes[top->node];
        if (top->left == 0) {
            parent->end = n;
            depth--;
            continue;
        }
        top->left--;
        parent->n++;
        uint32_t key = 0, klen = 0;
        if (parent->kind == CQL_SN_OBJECT) {
            if (i >= ntok || tok[i].type != JSMN_STRING) return -1;
            token_text(r, &tok[i++], escaped, &key, &klen);
            if (depth == 1 && pick && i < ntok) {
                r->n = n; /* the picker may look at the nodes so far */
                if (!pick->pick(pick->arg, r, text + key, klen, n)) {
                    /* the value's tokens are those that start before it ends */
                    int vend = tok[i++].end;
                    while (i < ntok && tok[i].start < vend)
                        i++;
                    nodes[n] =
                        (cql_snode){.key = key, .klen = klen, .kind = CQL_SN_SKIPPED, .end = n + 1};
                    n++;
                    continue;
                }
            }
        }
        if (i >= ntok) return -1;
        const jsmntok_t *t = &tok[i++];
        cql_snode *nd = &nodes[n];
        *nd = (cql_snode){.key = key, .klen = klen, .end = n + 1};
        switch (t->type) {
        case JSMN_OBJECT:
        case JSMN_ARRAY:
            if (depth == SROW_DEPTH) return -1;
            nd->kind = t->type == JSMN_OBJECT ? CQL_SN_OBJECT : CQL_SN_ARRAY;
            open[depth++] = (open_container){.node = n, .left = t->size};
            break;
        case JSMN_STRING:
            nd->kind = CQL_SN_STRING;
            token_text(r, t, escaped, &nd->str, &nd->slen);
            break;
        case JSMN_PRIMITIVE: {
            const char *v = text + t->start;
            size_t len = (size_t)(t->end - t->start);
            if (len == 4 && memcmp(v, "true", 4) == 0) {
                nd->kind = CQL_SN_TRUE;
            } else if (len == 5 && memcmp(v, "false", 5) == 0) {
                nd->kind = CQL_SN_FALSE;
            } else if (len == 4 && memcmp(v, "null", 4) == 0) {
                nd->kind = CQL_SN_NULL;
            } else if (len && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))) {
                nd->kind = CQL_SN_NUMBER;
                text[t->end] = '\0'; /* the delimiter after it, no longer needed */
                nd->str = (uint32_t)t->start;
                nd->slen = (uint32_t)len;
            } else {
                return -1;
            }
            break;
        }
        default:
            return -1;
        }
        n++;
    }
    r->n = n;
    return i == ntok ? 0 : -1;
}

/* jsmn's tokens of the text into r's token array: their count, or a negative jsmn error. */
static int tokenize(cql_srow *r, const char *json, size_t len)
{
    jsmn_parser p;
    jsmn_init(&p);
    for (;;) {
        int got = r->ntok_cap ? jsmn_parse(&p, json, len, r->toks, r->ntok_cap) : JSMN_ERROR_NOMEM;
        if (got != JSMN_ERROR_NOMEM) return got;
        if (r->ntok_cap > UINT_MAX / 4) return JSMN_ERROR_NOMEM;
        unsigned cap = r->ntok_cap ? r->ntok_cap * 2 : 128;
        void *toks = realloc(r->toks, (size_t)cap * sizeof(jsmntok_t));
        if (toks == NULL) return JSMN_ERROR_NOMEM;
        r->toks = toks;
        r->ntok_cap = cap;
    }
}

/* Whether text has a \u escape (or what looks like one after an escaped backslash),
 * looking from the first backslash, at. */
static int has_unicode_escape(const char *at, const char *end)
{
    for (const char *p = at; p && p + 1 < end; p = memchr(p + 1, '\\', (size_t)(end - p - 1)))
        if (p[1] == 'u') return 1;
    return 0;
}

/* The text through jsmn: 0, or -1 when jsmn does not take it as exactly one object, or
 * it has a \u escape (jansson decodes those). jsmn does not check UTF-8 or refuse
 * control characters in strings as jansson does: rows are the engine's own text, and a
 * value's bytes are checked when it is decoded (value.c). */
static int parse_tokens(cql_srow *r, const char *json, size_t len, const cql_srow_picker *pick)
{
    if (len == 0 || len > INT_MAX / 2) return -1;
    const char *backslash = memchr(json, '\\', len);
    if (backslash && has_unicode_escape(backslash, json + len)) return -1;
    int ntok = tokenize(r, json, len);
    if (ntok <= 0) return -1;
    const jsmntok_t *tok = r->toks;
    if (tok[0].type != JSMN_OBJECT || !json_only_space_after(json, len, (size_t)tok[0].end))
        return -1;
    /* the nodes' text is a copy of the text, strings decoded and ended in place */
    if (buf_append(&r->text, json, len) != 0 || nodes_room(r, (uint32_t)ntok) != 0) return -1;
    return from_tokens(r, backslash != NULL, tok, (unsigned)ntok, pick);
}

int cql_srow_parse_picked(cql_srow *r, const char *json, size_t len, const cql_srow_picker *p)
{
    if (slots_for(r, p) != 0) return -1;
    srow_reset(r);
    if (parse_tokens(r, json, len, p) == 0) return 0;
    srow_reset(r);
    json_t *v = len ? json_read(json, len, JSON_ALLOW_NUL, NULL) : NULL;
    int rc = json_is_object(v) ? cql_srow_from_json_picked(r, v, p) : -1;
    json_decref(v);
    return rc;
}

int cql_srow_parse(cql_srow *r, const char *json, size_t len)
{
    return cql_srow_parse_picked(r, json, len, NULL);
}

/* ---- from jansson ---- */

static int walk(builder *b, const json_t *v)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (node_add(b, CQL_SN_OBJECT) < 0) return -1;
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
        {
            if (set_key(b, k, strlen(k))) return -1;
            if (!picked(b)) {
                if (node_add(b, CQL_SN_SKIPPED) < 0) return -1;
            } else if (walk(b, m)) {
                return -1;
            }
        }
        return close_container(b);
    }
    case JSON_ARRAY: {
        if (node_add(b, CQL_SN_ARRAY) < 0) return -1;
        for (size_t i = 0; i < json_array_size(v); i++)
            if (walk(b, json_array_get(v, i))) return -1;
        return close_container(b);
    }
    case JSON_STRING:
        return scalar(b, CQL_SN_STRING, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return scalar(b, CQL_SN_NUMBER, num, strlen(num));
    case JSON_REAL:
        snprintf(num, sizeof num, "%.17g", json_real_value(v));
        return scalar(b, CQL_SN_NUMBER, num, strlen(num));
    case JSON_TRUE:
        return scalar(b, CQL_SN_TRUE, NULL, 0);
    case JSON_FALSE:
        return scalar(b, CQL_SN_FALSE, NULL, 0);
    default:
        return scalar(b, CQL_SN_NULL, NULL, 0);
    }
}

int cql_srow_from_json_picked(cql_srow *r, const json_t *v, const cql_srow_picker *p)
{
    if (slots_for(r, p) != 0) return -1;
    srow_reset(r);
    builder b = {.r = r, .pick = p};
    int rc;
    if (json_is_object(v)) {
        rc = walk(&b, v);
    } else {
        /* a value other than an object sits in an object of one member, named "" */
        rc = node_add(&b, CQL_SN_OBJECT) < 0 || set_key(&b, "", 0) || walk(&b, v) ||
             close_container(&b);
    }
    if (rc) srow_reset(r);
    return rc ? -1 : 0;
}

int cql_srow_from_json(cql_srow *r, const json_t *v)
{
    return cql_srow_from_json_picked(r, v, NULL);
}

/* ---- reading ---- */

uint32_t cql_srow_member(const cql_srow *r, uint32_t obj, const char *key, size_t klen)
{
    if (obj >= r->n || r->nodes[obj].kind != CQL_SN_OBJECT) return CQL_SNONE;
    uint32_t found = CQL_SNONE, end = r->nodes[obj].end;
    const char *text = r->text.data;
    for (uint32_t i = obj + 1; i < end; i = r->nodes[i].end) {
        const cql_snode *m = &r->nodes[i];
        if (m->klen == klen &&
            (klen == 0 || (text[m->key] == key[0] && memcmp(text + m->key, key, klen) == 0)))
            found = i;
    }
    return found;
}

uint32_t cql_srow_at(const cql_srow *r, uint32_t at, uint32_t i)
{
    if (at >= r->n || (r->nodes[at].kind != CQL_SN_OBJECT && r->nodes[at].kind != CQL_SN_ARRAY) ||
        i >= r->nodes[at].n)
        return CQL_SNONE;
    uint32_t k = at + 1;
    while (i--)
        k = r->nodes[k].end;
    return k;
}

uint32_t cql_srow_tagged(const cql_srow *r, uint32_t i, const char **tag)
{
    if (!cql_srow_is(r, i, CQL_SN_OBJECT) || r->nodes[i].n != 1) return CQL_SNONE;
    *tag = r->text.data + r->nodes[i + 1].key;
    return i + 1;
}
