/* storedrow.c — stored rows as flat nodes: the engine's item text read in one pass
 * straight into nodes (strings found sixteen bytes at a time, members nothing asks for
 * passed over by their brackets), allocating only when the kept arrays must grow; text
 * with a \u escape is read by jansson and its value walked into the same form. Lookups
 * scan an object's members; rows have a few dozen at most.
 *
 * Not a general JSON reader: the top value must be an object, numbers are kept as text. */
#include "cql/storedrow.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "util/jsonread.h"

void cql_srow_init(cql_srow *r)
{
    memset(r, 0, sizeof *r);
    buf_init(&r->text, 0);
}

void cql_srow_free(cql_srow *r)
{
    free(r->nodes);
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
    if (r->nslot) memset(r->slot, 0xff, (size_t)r->nslot * sizeof *r->slot); /* CQL_SNONE */
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
    uint32_t open[CQL_SROW_MAX_DEPTH]; /* the containers not yet closed */
    int depth;
    uint32_t key, klen;          /* the key of the member that comes next */
    const cql_srow_picker *pick; /* the top object's members to read, or NULL: all */
} builder;

/* Whether the member of the top object that comes next is read (its node will be the
 * next one added). */
static int picked(builder *b)
{
    if (b->pick == NULL || b->depth != 1) return 1;
    b->r->member = b->r->nodes[b->open[0]].n;
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
        if (b->depth == CQL_SROW_MAX_DEPTH) return -1;
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

/* Whether any of the eight bytes of w is a quote, a backslash or a control character:
 * the bytes a string's scan stops at. */
static inline uint64_t string_stops(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20)) & ~w & highs;
}

/* The place of the first flagged byte (its high bit set) of a word loaded from memory. */
static inline unsigned first_byte(uint64_t flags)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (unsigned)__builtin_ctzll(flags) / 8;
#else
    return (unsigned)__builtin_clzll(flags) / 8;
#endif
}

/* The closing quote of the string whose text starts at p (after its opening quote), or
 * NULL when it has none, a control character, a \u escape (left to jansson) or another
 * escape JSON has not. *escaped is set when it has an escape. Sixteen bytes at a time
 * with SSE2, then eight, until one might stop the scan. */
static inline const char *string_end(const char *p, const char *end, int *escaped)
{
    for (;;) {
#ifdef __SSE2__
        const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                      below_space = _mm_set1_epi8(0x1f);
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            __m128i hit =
                _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                             _mm_cmpeq_epi8(_mm_min_epu8(v, below_space), v)); /* v <= 0x1f */
            unsigned stops = (unsigned)_mm_movemask_epi8(hit);
            if (stops) {
                p += __builtin_ctz(stops);
                goto stopped;
            }
            p += 16;
        }
#endif
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t stops = string_stops(w);
            if (stops) {
                /* the lowest flag is exact (those above it may not be) */
                p += first_byte(stops);
                break;
            }
            p += 8;
        }
#ifdef __SSE2__
    stopped:
#endif
        if (p == end) return NULL;
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p;
        if (c < 0x20) return NULL;
        if (c == '\\') {
            if (end - p < 2 || !strchr("\"\\/bfnrt", p[1]) || p[1] == '\0') return NULL;
            *escaped = 1;
            p += 2;
        } else {
            p++;
        }
    }
}

/* JSON string text (between its quotes, its escapes checked by string_end) decoded into
 * out (n bytes at most, out may be s): the decoded length. */
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

/* p past white space. Compact text has none: one comparison finds that. */
static inline const char *skip_space(const char *p, const char *end)
{
    while (p < end && (unsigned char)*p <= ' ' &&
           (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

static inline int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The end of the JSON number starting at p, or NULL when none starts there. */
static const char *number_end(const char *p, const char *end)
{
    if (p < end && *p == '-') p++;
    if (p == end || !is_digit(*p)) return NULL;
    if (*p++ != '0')
        while (p < end && is_digit(*p))
            p++;
    if (p < end && *p == '.') {
        if (++p == end || !is_digit(*p)) return NULL;
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        if (++p < end && (*p == '+' || *p == '-')) p++;
        if (p == end || !is_digit(*p)) return NULL;
        while (p < end && is_digit(*p))
            p++;
    }
    return p;
}

/* The object at *p when it is a string under one key written compactly, as stored
 * AttributeValues are ({"S":"text"}): 1, with *nd the member's string node and *p past
 * the object; 0 (*p unmoved) for any other value, which the general reading takes. */
static inline int tagged_string(cql_srow *r, const char *src, const char *end, const char **at,
                                cql_snode *nd)
{
    const char *p = *at;
    int kesc = 0, vesc = 0;
    if (end - p < 7 || p[1] != '"') return 0;
    const char *kq = string_end(p + 2, end, &kesc);
    if (kq == NULL || end - kq < 4 || kq[1] != ':' || kq[2] != '"') return 0;
    const char *vq = string_end(kq + 3, end, &vesc);
    if (vq == NULL || vq + 1 == end || vq[1] != '}') return 0;
    char *text = r->text.data;
    uint32_t key = (uint32_t)(p + 2 - src), klen = (uint32_t)(kq - p - 2);
    uint32_t str = (uint32_t)(kq + 3 - src), slen = (uint32_t)(vq - kq - 3);
    if (kesc) klen = (uint32_t)unescape(src + key, klen, text + key);
    if (vesc) slen = (uint32_t)unescape(src + str, slen, text + str);
    text[key + klen] = '\0';
    text[str + slen] = '\0';
    *nd = (cql_snode){.key = key, .klen = klen, .str = str, .slen = slen, .kind = CQL_SN_STRING};
    *at = vq + 2;
    return 1;
}

/* A container open in the reading of the text: its node, whether it is an object, and
 * its members so far. */
typedef struct open_container {
    uint32_t node, count;
    int object;
} open_container;

/* The end of the value starting at p, passed over unread: a string to its closing quote,
 * a container to the bracket that balances it (its strings whole, its grammar not
 * checked further), anything else to the delimiter after it. NULL when it has no end. */
static const char *value_skip(const char *p, const char *end)
{
    int esc = 0;
    if (*p == '"') {
        const char *q = string_end(p + 1, end, &esc);
        return q ? q + 1 : NULL;
    }
    if (*p != '{' && *p != '[') {
        const char *start = p;
        while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' &&
               *p != '\t' && *p != '\r')
            p++;
        return p > start ? p : NULL;
    }
    size_t depth = 0;
    for (; p < end; p++) {
        switch (*p) {
        case '"':
            p = string_end(p + 1, end, &esc);
            if (p == NULL) return NULL;
            break;
        case '{':
        case '[':
            depth++;
            break;
        case '}':
        case ']':
            if (--depth == 0) return p + 1;
            break;
        default:
            break;
        }
    }
    return NULL;
}

/* The row's text (src, len bytes, copied to r->text) read straight into nodes, the top
 * object's members chosen by pick: 0, or -1 when it is not one object as JSON has it, or
 * it holds what this reader leaves to jansson (\u escapes, nesting deeper than
 * CQL_SROW_MAX_DEPTH). It reads src and writes only the copy: strings decoded in place and ended
 * by a NUL where their closing quote was, numbers where the delimiter after them was. */
static int from_text(cql_srow *r, const char *src, size_t len, const cql_srow_picker *pick)
{
    open_container open[CQL_SROW_MAX_DEPTH];
    char *text = r->text.data;
    const char *p = skip_space(src, src + len), *end = src + len;
    if (p == end || *p++ != '{') return -1;
    if (nodes_room(r, 16) != 0) return -1;
    cql_snode *nodes = r->nodes;
    uint32_t n = 0;
    nodes[n] = (cql_snode){.kind = CQL_SN_OBJECT};
    open[0] = (open_container){.node = n++, .object = 1};
    int depth = 1;
    while (depth > 0) {
        open_container *top = &open[depth - 1];
        p = skip_space(p, end);
        if (p == end) return -1;
        if (*p == (top->object ? '}' : ']')) {
            p++;
            nodes[top->node].n = top->count;
            nodes[top->node].end = n;
            depth--;
            continue;
        }
        if (top->count > 0) {
            if (*p != ',') return -1;
            p = skip_space(p + 1, end);
            if (p == end) return -1;
        }
        top->count++;
        uint32_t key = 0, klen = 0;
        if (top->object) {
            int esc = 0;
            const char *q = *p == '"' ? string_end(p + 1, end, &esc) : NULL;
            if (q == NULL) return -1;
            key = (uint32_t)(p + 1 - src);
            klen = (uint32_t)(q - p - 1);
            if (esc) klen = (uint32_t)unescape(src + key, klen, text + key);
            text[key + klen] = '\0';
            p = skip_space(q + 1, end);
            if (p == end || *p != ':') return -1;
            p = skip_space(p + 1, end);
            if (p == end) return -1;
            if (depth == 1 && pick) {
                if (n == r->cap && nodes_room(r, n + 1) != 0) return -1;
                nodes = r->nodes;
                r->n = n; /* the picker may look at the nodes so far */
                r->member = top->count - 1;
                if (!pick->pick(pick->arg, r, text + key, klen, n)) {
                    nodes[n] =
                        (cql_snode){.key = key, .klen = klen, .kind = CQL_SN_SKIPPED, .end = n + 1};
                    n++;
                    p = value_skip(p, end);
                    if (p == NULL) return -1;
                    continue;
                }
            }
        }
        cql_snode nd = {.key = key, .klen = klen, .end = n + 1};
        char c = *p;
        if (c == '{' && depth < CQL_SROW_MAX_DEPTH && tagged_string(r, src, end, &p, &nd)) {
            /* an AttributeValue such as {"S":"text"}: its member's node follows (an
             * object, so one level of the depth a row may have) */
            if (r->cap - n < 2) {
                if (nodes_room(r, n + 2) != 0) return -1;
                nodes = r->nodes;
            }
            nodes[n] =
                (cql_snode){.key = key, .klen = klen, .n = 1, .end = n + 2, .kind = CQL_SN_OBJECT};
            nd.end = n + 2;
            nodes[n + 1] = nd;
            n += 2;
            continue;
        }
        if (c == '{' || c == '[') {
            if (depth == CQL_SROW_MAX_DEPTH) return -1;
            p++;
            nd.kind = c == '{' ? CQL_SN_OBJECT : CQL_SN_ARRAY;
            open[depth++] = (open_container){.node = n, .object = c == '{'};
        } else if (c == '"') {
            int esc = 0;
            const char *q = string_end(p + 1, end, &esc);
            if (q == NULL) return -1;
            nd.kind = CQL_SN_STRING;
            nd.str = (uint32_t)(p + 1 - src);
            nd.slen = (uint32_t)(q - p - 1);
            p = q + 1;
            if (esc) nd.slen = (uint32_t)unescape(src + nd.str, nd.slen, text + nd.str);
            text[nd.str + nd.slen] = '\0';
        } else if (c == '-' || is_digit(c)) {
            const char *q = number_end(p, end);
            if (q == NULL) return -1;
            nd.kind = CQL_SN_NUMBER;
            nd.str = (uint32_t)(p - src);
            nd.slen = (uint32_t)(q - p);
            p = q;
            text[nd.str + nd.slen] = '\0'; /* the delimiter's place in the copy */
        } else if (end - p >= 4 && memcmp(p, "true", 4) == 0) {
            nd.kind = CQL_SN_TRUE;
            p += 4;
        } else if (end - p >= 5 && memcmp(p, "false", 5) == 0) {
            nd.kind = CQL_SN_FALSE;
            p += 5;
        } else if (end - p >= 4 && memcmp(p, "null", 4) == 0) {
            nd.kind = CQL_SN_NULL;
            p += 4;
        } else {
            return -1;
        }
        if (n == r->cap) {
            if (nodes_room(r, n + 1) != 0) return -1;
            nodes = r->nodes;
        }
        nodes[n++] = nd;
    }
    r->n = n;
    return skip_space(p, end) == end ? 0 : -1;
}

/* The text read by from_text: 0, or -1 when it leaves it to jansson. UTF-8 is not
 * checked here: rows are the engine's own text, and a value's bytes are checked when it
 * is decoded (value.c). */
static int parse_text(cql_srow *r, const char *json, size_t len, const cql_srow_picker *pick)
{
    if (len == 0 || len > UINT32_MAX / 2) return -1;
    /* the nodes' text is a copy of the text, strings decoded and ended in place */
    if (buf_append(&r->text, json, len) != 0) return -1;
    return from_text(r, json, len, pick);
}

int cql_srow_parse_picked(cql_srow *r, const char *json, size_t len, const cql_srow_picker *p)
{
    if (slots_for(r, p) != 0) return -1;
    srow_reset(r);
    if (parse_text(r, json, len, p) == 0) return 0;
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
