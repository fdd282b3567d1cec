/* cql_codec.c — message bodies of the CQL native protocol, read and written.
 *
 * A bounds-checked reader whose first failure names the field, the request decoders
 * with Cassandra's messages for what it refuses, and the response writers, each
 * following the field order of the specification for the connection's version. */
#include "cqlwire/cql_codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cqlwire/cql_value.h"

/* ---- the pool ---- */

struct cql_pool_block {
    cql_pool_block *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

#define POOL_BLOCK 4096

void *cql_pool_alloc(cql_pool *pool, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    cql_pool_block *b = pool->head;
    if (!b || b->size - b->used < size) {
        size_t n = size > POOL_BLOCK ? size : POOL_BLOCK;
        b = malloc(sizeof *b + n);
        if (!b) return NULL;
        b->size = n;
        b->used = 0;
        b->next = pool->head;
        pool->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

void cql_pool_free(cql_pool *pool)
{
    cql_pool_block *b = pool->head;
    while (b) {
        cql_pool_block *next = b->next;
        free(b);
        b = next;
    }
    pool->head = NULL;
}

/* ---- reading ---- */

void cql_reader_init(cql_reader *r, const void *p, size_t len, cql_pool *pool)
{
    r->p = p;
    r->len = len;
    r->pos = 0;
    r->pool = pool;
    r->err[0] = '\0';
}

size_t cql_reader_left(const cql_reader *r)
{
    return r->len - r->pos;
}

int cql_reader_fail(cql_reader *r, const char *fmt, ...)
{
    if (r->err[0]) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    if (!r->err[0]) snprintf(r->err, sizeof r->err, "malformed body");
    return -1;
}

/* n more bytes are there, else the failure names what needed them. */
static int need(cql_reader *r, const char *what, size_t n)
{
    if (r->err[0]) return -1;
    if (n > cql_reader_left(r))
        return cql_reader_fail(r, "%s needs %zu bytes but %zu remain", what, n, cql_reader_left(r));
    return 0;
}

static void *pool_array(cql_reader *r, const char *what, size_t n, size_t size)
{
    if (n == 0) return NULL;
    void *p = r->pool ? cql_pool_alloc(r->pool, n * size) : NULL;
    if (!p) cql_reader_fail(r, "out of memory reading %s", what);
    return p;
}

int cql_read_byte(cql_reader *r, const char *what, uint8_t *v)
{
    if (need(r, what, 1)) return -1;
    *v = r->p[r->pos++];
    return 0;
}

int cql_read_short(cql_reader *r, const char *what, uint16_t *v)
{
    if (need(r, what, 2)) return -1;
    *v = be16_read(r->p + r->pos);
    r->pos += 2;
    return 0;
}

int cql_read_int(cql_reader *r, const char *what, int32_t *v)
{
    if (need(r, what, 4)) return -1;
    *v = (int32_t)be32_read(r->p + r->pos);
    r->pos += 4;
    return 0;
}

int cql_read_long(cql_reader *r, const char *what, int64_t *v)
{
    if (need(r, what, 8)) return -1;
    *v = (int64_t)be64_read(r->p + r->pos);
    r->pos += 8;
    return 0;
}

/* n bytes of text or bytes as a slice. */
static int take(cql_reader *r, const char *what, size_t n, const uint8_t **p)
{
    if (r->err[0]) return -1;
    if (n > cql_reader_left(r))
        return cql_reader_fail(r, "%s claims %zu bytes but %zu remain", what, n,
                               cql_reader_left(r));
    *p = r->p + r->pos;
    r->pos += n;
    return 0;
}

int cql_read_string(cql_reader *r, const char *what, cql_str *s)
{
    uint16_t n;
    const uint8_t *p = NULL;
    if (cql_read_short(r, what, &n) || take(r, what, n, &p)) return -1;
    s->p = (const char *)p;
    s->len = n;
    return 0;
}

int cql_read_long_string(cql_reader *r, const char *what, cql_str *s)
{
    int32_t n;
    const uint8_t *p = NULL;
    if (cql_read_int(r, what, &n)) return -1;
    if (n < 0) return cql_reader_fail(r, "%s has a negative length (%d)", what, n);
    if (take(r, what, (size_t)n, &p)) return -1;
    s->p = (const char *)p;
    s->len = (size_t)n;
    return 0;
}

int cql_read_uuid(cql_reader *r, const char *what, uint8_t out[16])
{
    if (need(r, what, 16)) return -1;
    memcpy(out, r->p + r->pos, 16);
    r->pos += 16;
    return 0;
}

int cql_read_string_list(cql_reader *r, const char *what, cql_str **items, uint16_t *n)
{
    *items = NULL;
    *n = 0;
    uint16_t count;
    if (cql_read_short(r, what, &count)) return -1;
    if ((size_t)count * 2 > cql_reader_left(r))
        return cql_reader_fail(r, "%s counts %u strings but only %zu bytes remain", what, count,
                               cql_reader_left(r));
    cql_str *a = pool_array(r, what, count, sizeof *a);
    if (count && !a) return -1;
    for (uint16_t i = 0; i < count; i++)
        if (cql_read_string(r, what, &a[i])) return -1;
    *items = a;
    *n = count;
    return 0;
}

static int read_sized(cql_reader *r, const char *what, cql_value *v, int is_value)
{
    int32_t n;
    if (cql_read_int(r, what, &n)) return -1;
    if (n < 0) {
        if (!is_value || n == CQL_NULL || n == CQL_UNSET) {
            v->p = NULL;
            v->len = is_value ? n : CQL_NULL;
            return 0;
        }
        return cql_reader_fail(r,
                               "%s has an invalid length %d (a [value] may be -1 for null "
                               "or -2 for not set)",
                               what, n);
    }
    if (take(r, what, (size_t)n, &v->p)) return -1;
    v->len = n;
    return 0;
}

int cql_read_bytes(cql_reader *r, const char *what, cql_value *v)
{
    return read_sized(r, what, v, 0);
}

int cql_read_value(cql_reader *r, const char *what, cql_value *v)
{
    return read_sized(r, what, v, 1);
}

int cql_read_short_bytes(cql_reader *r, const char *what, cql_str *v)
{
    return cql_read_string(r, what, v);
}

int cql_read_uvint(cql_reader *r, const char *what, uint64_t *v)
{
    if (r->err[0]) return -1;
    size_t n = cql_uvint_decode(r->p + r->pos, cql_reader_left(r), v);
    if (!n)
        return cql_reader_fail(r, "%s is cut short (%zu bytes remain)", what, cql_reader_left(r));
    r->pos += n;
    return 0;
}

int cql_read_vint(cql_reader *r, const char *what, int64_t *v)
{
    if (r->err[0]) return -1;
    size_t n = cql_vint_decode(r->p + r->pos, cql_reader_left(r), v);
    if (!n)
        return cql_reader_fail(r, "%s is cut short (%zu bytes remain)", what, cql_reader_left(r));
    r->pos += n;
    return 0;
}

int cql_read_inetaddr(cql_reader *r, const char *what, cql_inet *v)
{
    uint8_t n;
    if (cql_read_byte(r, what, &n)) return -1;
    if (n != 4 && n != 16)
        return cql_reader_fail(r, "%s has an address of %u bytes (4 or 16 expected)", what, n);
    if (need(r, what, n)) return -1;
    v->len = n;
    memcpy(v->addr, r->p + r->pos, n);
    r->pos += n;
    v->port = 0;
    return 0;
}

int cql_read_inet(cql_reader *r, const char *what, cql_inet *v)
{
    if (cql_read_inetaddr(r, what, v)) return -1;
    return cql_read_int(r, what, &v->port);
}

static const char *const consistency_names[] = {
    "ANY",          "ONE",         "TWO",    "THREE",        "QUORUM",    "ALL",
    "LOCAL_QUORUM", "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE",
};

const char *cql_consistency_name(uint16_t code)
{
    return code < sizeof consistency_names / sizeof consistency_names[0] ? consistency_names[code]
                                                                         : NULL;
}

int cql_read_consistency(cql_reader *r, const char *what, uint16_t *v)
{
    if (cql_read_short(r, what, v)) return -1;
    if (!cql_consistency_name(*v))
        return cql_reader_fail(r, "Unknown code %u for a consistency level", *v);
    return 0;
}

int cql_read_string_map(cql_reader *r, const char *what, cql_pair **pairs, uint16_t *n)
{
    *pairs = NULL;
    *n = 0;
    uint16_t count;
    if (cql_read_short(r, what, &count)) return -1;
    if ((size_t)count * 4 > cql_reader_left(r))
        return cql_reader_fail(r, "%s counts %u pairs but only %zu bytes remain", what, count,
                               cql_reader_left(r));
    cql_pair *a = pool_array(r, what, count, sizeof *a);
    if (count && !a) return -1;
    for (uint16_t i = 0; i < count; i++)
        if (cql_read_string(r, what, &a[i].key) || cql_read_string(r, what, &a[i].value)) return -1;
    *pairs = a;
    *n = count;
    return 0;
}

int cql_read_string_multimap(cql_reader *r, const char *what, cql_multi **entries, uint16_t *n)
{
    *entries = NULL;
    *n = 0;
    uint16_t count;
    if (cql_read_short(r, what, &count)) return -1;
    if ((size_t)count * 4 > cql_reader_left(r))
        return cql_reader_fail(r, "%s counts %u entries but only %zu bytes remain", what, count,
                               cql_reader_left(r));
    cql_multi *a = pool_array(r, what, count, sizeof *a);
    if (count && !a) return -1;
    for (uint16_t i = 0; i < count; i++)
        if (cql_read_string(r, what, &a[i].key) ||
            cql_read_string_list(r, what, &a[i].values, &a[i].n))
            return -1;
    *entries = a;
    *n = count;
    return 0;
}

int cql_read_bytes_map(cql_reader *r, const char *what, cql_bytes_pair **pairs, uint16_t *n)
{
    *pairs = NULL;
    *n = 0;
    uint16_t count;
    if (cql_read_short(r, what, &count)) return -1;
    if ((size_t)count * 6 > cql_reader_left(r))
        return cql_reader_fail(r, "%s counts %u pairs but only %zu bytes remain", what, count,
                               cql_reader_left(r));
    cql_bytes_pair *a = pool_array(r, what, count, sizeof *a);
    if (count && !a) return -1;
    for (uint16_t i = 0; i < count; i++)
        if (cql_read_string(r, what, &a[i].key) || cql_read_bytes(r, what, &a[i].value)) return -1;
    *pairs = a;
    *n = count;
    return 0;
}

/* ---- types ---- */

const char *cql_type_name(uint16_t id)
{
    switch (id) {
    case CQL_TYPE_ASCII:
        return "ascii";
    case CQL_TYPE_BIGINT:
        return "bigint";
    case CQL_TYPE_BLOB:
        return "blob";
    case CQL_TYPE_BOOLEAN:
        return "boolean";
    case CQL_TYPE_COUNTER:
        return "counter";
    case CQL_TYPE_DECIMAL:
        return "decimal";
    case CQL_TYPE_DOUBLE:
        return "double";
    case CQL_TYPE_FLOAT:
        return "float";
    case CQL_TYPE_INT:
        return "int";
    case CQL_TYPE_TIMESTAMP:
        return "timestamp";
    case CQL_TYPE_UUID:
        return "uuid";
    case CQL_TYPE_VARCHAR:
        return "text";
    case CQL_TYPE_VARINT:
        return "varint";
    case CQL_TYPE_TIMEUUID:
        return "timeuuid";
    case CQL_TYPE_INET:
        return "inet";
    case CQL_TYPE_DATE:
        return "date";
    case CQL_TYPE_TIME:
        return "time";
    case CQL_TYPE_SMALLINT:
        return "smallint";
    case CQL_TYPE_TINYINT:
        return "tinyint";
    case CQL_TYPE_DURATION:
        return "duration";
    default:
        return NULL;
    }
}

/* A [string] copied into the pool, NUL-terminated. */
static int read_cstring(cql_reader *r, const char *what, const char **out)
{
    cql_str s;
    if (cql_read_string(r, what, &s)) return -1;
    if (memchr(s.p, '\0', s.len)) return cql_reader_fail(r, "%s has a NUL byte in a name", what);
    char *c = r->pool ? cql_pool_alloc(r->pool, s.len + 1) : NULL;
    if (!c) return cql_reader_fail(r, "out of memory reading %s", what);
    memcpy(c, s.p, s.len);
    *out = c;
    return 0;
}

static int read_type_at(cql_reader *r, const char *what, cql_type **out, int depth)
{
    if (depth > CQL_TYPE_MAX_DEPTH)
        return cql_reader_fail(r, "%s nests types more than %d deep", what, CQL_TYPE_MAX_DEPTH);
    uint16_t id;
    if (cql_read_short(r, what, &id)) return -1;
    cql_type *t = r->pool ? cql_pool_alloc(r->pool, sizeof *t) : NULL;
    if (!t) return cql_reader_fail(r, "out of memory reading %s", what);
    t->id = id;
    uint16_t n = 0;
    int named = 0;
    switch (id) {
    case CQL_TYPE_CUSTOM:
        if (read_cstring(r, what, &t->name)) return -1;
        break;
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
        n = 1;
        break;
    case CQL_TYPE_MAP:
        n = 2;
        break;
    case CQL_TYPE_UDT:
        if (read_cstring(r, what, &t->keyspace) || read_cstring(r, what, &t->name) ||
            cql_read_short(r, what, &n))
            return -1;
        named = 1;
        break;
    case CQL_TYPE_TUPLE:
        if (cql_read_short(r, what, &n)) return -1;
        break;
    default:
        if (!cql_type_name(id))
            return cql_reader_fail(r, "%s has an unknown type id 0x%04x", what, id);
        break;
    }
    if ((size_t)n * (named ? 4 : 2) > cql_reader_left(r))
        return cql_reader_fail(r, "%s counts %u component types but only %zu bytes remain", what, n,
                               cql_reader_left(r));
    if (n) {
        const cql_type **params = pool_array(r, what, n, sizeof *params);
        const char **names = named ? pool_array(r, what, n, sizeof *names) : NULL;
        if (!params || (named && !names)) return -1;
        for (uint16_t i = 0; i < n; i++) {
            cql_type *sub;
            if (named && read_cstring(r, what, &names[i])) return -1;
            if (read_type_at(r, what, &sub, depth + 1)) return -1;
            params[i] = sub;
        }
        t->params = params;
        t->field_names = names;
    }
    t->n = n;
    *out = t;
    return 0;
}

int cql_read_type(cql_reader *r, const char *what, cql_type **t)
{
    return read_type_at(r, what, t, 1);
}

int cql_read_type_list(cql_reader *r, const char *what, cql_type ***types, uint16_t *n)
{
    *types = NULL;
    *n = 0;
    uint16_t count;
    if (cql_read_short(r, what, &count)) return -1;
    if ((size_t)count * 2 > cql_reader_left(r))
        return cql_reader_fail(r, "%s counts %u types but only %zu bytes remain", what, count,
                               cql_reader_left(r));
    cql_type **a = pool_array(r, what, count, sizeof *a);
    if (count && !a) return -1;
    for (uint16_t i = 0; i < count; i++)
        if (cql_read_type(r, what, &a[i])) return -1;
    *types = a;
    *n = count;
    return 0;
}

/* ---- writing ---- */

int cql_put_byte(buf *out, uint8_t v)
{
    return buf_putc(out, v);
}

int cql_put_short(buf *out, uint16_t v)
{
    return buf_put_be16(out, v);
}

int cql_put_int(buf *out, int32_t v)
{
    return buf_put_be32(out, (uint32_t)v);
}

int cql_put_long(buf *out, int64_t v)
{
    return buf_put_be64(out, (uint64_t)v);
}

int cql_put_string_n(buf *out, const char *p, size_t len)
{
    if (len > UINT16_MAX || buf_put_be16(out, (uint16_t)len)) return -1;
    return buf_append(out, p, len);
}

int cql_put_string(buf *out, const char *s)
{
    return cql_put_string_n(out, s ? s : "", s ? strlen(s) : 0);
}

int cql_put_long_string(buf *out, const char *p, size_t len)
{
    if (len > INT32_MAX || cql_put_int(out, (int32_t)len)) return -1;
    return buf_append(out, p, len);
}

int cql_put_uuid(buf *out, const uint8_t v[16])
{
    return buf_append(out, v, 16);
}

int cql_put_string_list(buf *out, const char *const *items, uint16_t n)
{
    if (cql_put_short(out, n)) return -1;
    for (uint16_t i = 0; i < n; i++)
        if (cql_put_string(out, items[i])) return -1;
    return 0;
}

int cql_put_bytes(buf *out, const void *p, int32_t len)
{
    if (len < 0) return cql_put_int(out, CQL_NULL);
    /* one reservation for the length and the bytes, made only when the room is short: a
     * row's cells are written this way */
    size_t need = 4 + (size_t)len;
    int room = need < out->cap - out->len && need <= out->max - out->len;
    if (!room && buf_reserve(out, need)) return -1;
    uint8_t *at = (uint8_t *)out->data + out->len;
    uint32_t n = (uint32_t)len;
    at[0] = (uint8_t)(n >> 24);
    at[1] = (uint8_t)(n >> 16);
    at[2] = (uint8_t)(n >> 8);
    at[3] = (uint8_t)n;
    if (len) memcpy(at + 4, p, (size_t)len);
    out->len += 4 + (size_t)len;
    out->data[out->len] = '\0';
    return 0;
}

int cql_put_value(buf *out, const void *p, int32_t len)
{
    if (len == CQL_UNSET) return cql_put_int(out, CQL_UNSET);
    return cql_put_bytes(out, p, len);
}

int cql_put_short_bytes(buf *out, const void *p, size_t len)
{
    return cql_put_string_n(out, p, len);
}

int cql_put_uvint(buf *out, uint64_t v)
{
    uint8_t b[CQL_VINT_MAX];
    return buf_append(out, b, (size_t)cql_uvint_encode(v, b));
}

int cql_put_vint(buf *out, int64_t v)
{
    uint8_t b[CQL_VINT_MAX];
    return buf_append(out, b, (size_t)cql_vint_encode(v, b));
}

int cql_put_inetaddr(buf *out, const cql_inet *v)
{
    if (v->len != 4 && v->len != 16) return -1;
    if (buf_putc(out, v->len)) return -1;
    return buf_append(out, v->addr, v->len);
}

int cql_put_inet(buf *out, const cql_inet *v)
{
    if (cql_put_inetaddr(out, v)) return -1;
    return cql_put_int(out, v->port);
}

int cql_put_consistency(buf *out, uint16_t v)
{
    return cql_put_short(out, v);
}

int cql_put_string_map(buf *out, const cql_text_pair *pairs, uint16_t n)
{
    if (cql_put_short(out, n)) return -1;
    for (uint16_t i = 0; i < n; i++)
        if (cql_put_string(out, pairs[i].key) || cql_put_string(out, pairs[i].value)) return -1;
    return 0;
}

int cql_put_string_multimap(buf *out, const cql_text_multi *entries, uint16_t n)
{
    if (cql_put_short(out, n)) return -1;
    for (uint16_t i = 0; i < n; i++)
        if (cql_put_string(out, entries[i].key) ||
            cql_put_string_list(out, entries[i].values, entries[i].n))
            return -1;
    return 0;
}

int cql_put_bytes_map(buf *out, const cql_text_bytes *pairs, uint16_t n)
{
    if (cql_put_short(out, n)) return -1;
    for (uint16_t i = 0; i < n; i++)
        if (cql_put_string(out, pairs[i].key) || cql_put_bytes(out, pairs[i].value, pairs[i].len))
            return -1;
    return 0;
}

int cql_put_type(buf *out, const cql_type *t)
{
    if (cql_put_short(out, t->id)) return -1;
    uint16_t want = 0;
    switch (t->id) {
    case CQL_TYPE_CUSTOM:
        return cql_put_string(out, t->name);
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
        want = 1;
        break;
    case CQL_TYPE_MAP:
        want = 2;
        break;
    case CQL_TYPE_UDT:
        if (cql_put_string(out, t->keyspace) || cql_put_string(out, t->name) ||
            cql_put_short(out, t->n))
            return -1;
        for (uint16_t i = 0; i < t->n; i++)
            if (cql_put_string(out, t->field_names[i]) || cql_put_type(out, t->params[i]))
                return -1;
        return 0;
    case CQL_TYPE_TUPLE:
        return cql_put_type_list(out, t->params, t->n);
    default:
        return cql_type_name(t->id) ? 0 : -1;
    }
    if (t->n != want) return -1;
    for (uint16_t i = 0; i < want; i++)
        if (cql_put_type(out, t->params[i])) return -1;
    return 0;
}

int cql_put_type_list(buf *out, const cql_type *const *types, uint16_t n)
{
    if (cql_put_short(out, n)) return -1;
    for (uint16_t i = 0; i < n; i++)
        if (cql_put_type(out, types[i])) return -1;
    return 0;
}

/* ---- requests ---- */

static int read_values(cql_reader *r, int named, cql_values *v, const char *what)
{
    uint16_t n;
    if (cql_read_short(r, what, &n)) return -1;
    if ((size_t)n * (named ? 6 : 4) > cql_reader_left(r))
        return cql_reader_fail(r, "%s counts %u values but only %zu bytes remain", what, n,
                               cql_reader_left(r));
    v->values = pool_array(r, what, n, sizeof *v->values);
    v->names = named ? pool_array(r, what, n, sizeof *v->names) : NULL;
    if (n && (!v->values || (named && !v->names))) return -1;
    for (uint16_t i = 0; i < n; i++) {
        if (named && cql_read_string(r, "a bound value's name", &v->names[i])) return -1;
        if (cql_read_value(r, "a bound [value]", &v->values[i])) return -1;
    }
    v->n = n;
    return 0;
}

static int read_flags(cql_reader *r, uint8_t version, uint32_t *flags)
{
    if (version >= 5) {
        int32_t f;
        if (cql_read_int(r, "the flags' [int]", &f)) return -1;
        *flags = (uint32_t)f;
        return 0;
    }
    uint8_t f;
    if (cql_read_byte(r, "the flags' [byte]", &f)) return -1;
    *flags = f;
    return 0;
}

static int read_timestamp(cql_reader *r, int64_t *ts)
{
    if (cql_read_long(r, "the default timestamp's [long]", ts)) return -1;
    if (*ts == INT64_MIN)
        return cql_reader_fail(r, "Out of bound timestamp, must be in [%lld, %lld] (got %lld)",
                               (long long)INT64_MIN + 1, (long long)INT64_MAX, (long long)*ts);
    return 0;
}

static int read_query_params(cql_reader *r, uint8_t version, cql_query_params *q)
{
    q->page_size = -1;
    q->paging_state.len = CQL_NULL;
    q->serial_consistency = CQL_CL_SERIAL;
    q->timestamp = INT64_MIN;
    if (cql_read_consistency(r, "the consistency", &q->consistency) ||
        read_flags(r, version, &q->flags))
        return -1;
    uint32_t f = q->flags;
    if ((f & CQL_QF_VALUES) &&
        read_values(r, (f & CQL_QF_NAMES_FOR_VALUES) != 0, &q->values, "the values"))
        return -1;
    if (f & CQL_QF_PAGE_SIZE) {
        if (cql_read_int(r, "the result page size's [int]", &q->page_size)) return -1;
        if (q->page_size == 0) return cql_reader_fail(r, "The page size cannot be 0");
    }
    if ((f & CQL_QF_PAGING_STATE) &&
        cql_read_bytes(r, "the paging state's [bytes]", &q->paging_state))
        return -1;
    if ((f & CQL_QF_SERIAL_CONSISTENCY) &&
        cql_read_consistency(r, "the serial consistency", &q->serial_consistency))
        return -1;
    if ((f & CQL_QF_DEFAULT_TIMESTAMP) && read_timestamp(r, &q->timestamp)) return -1;
    if (version >= 5) {
        if ((f & CQL_QF_KEYSPACE) && cql_read_string(r, "the keyspace's [string]", &q->keyspace))
            return -1;
        if ((f & CQL_QF_NOW_IN_SECONDS) &&
            cql_read_int(r, "now in seconds' [int]", &q->now_in_seconds))
            return -1;
    }
    return 0;
}

/* Cassandra's check of CQL_VERSION: major.minor[.patch][-pre][+build], at least 3.0.0. */
static int check_cql_version(cql_str v, char *err, size_t errlen)
{
    long part[3] = {0, 0, 0};
    size_t i = 0;
    int parts = 0;
    while (parts < 3) {
        size_t start = i;
        long x = 0;
        while (i < v.len && v.p[i] >= '0' && v.p[i] <= '9' && i - start < 9)
            x = x * 10 + (v.p[i++] - '0');
        if (i == start) break;
        part[parts++] = x;
        if (parts == 3 || i == v.len || v.p[i] != '.') break;
        i++;
    }
    int ok = parts >= 2 && (i == v.len || v.p[i] == '-' || v.p[i] == '+');
    for (size_t k = i; ok && k < v.len; k++) {
        char c = v.p[k];
        ok = c == '-' || c == '+' || c == '.' || c == '_' || (c >= '0' && c <= '9') ||
             (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }
    if (!ok) {
        snprintf(err, errlen, "Invalid version value: %.*s", (int)(v.len > 64 ? 64 : v.len), v.p);
        return -1;
    }
    if (part[0] < 2 || (part[0] == 2 && part[1] < 99)) {
        snprintf(err, errlen,
                 "CQL version %.*s is not supported by the binary protocol (supported version "
                 "are >= 3.0.0)",
                 (int)(v.len > 64 ? 64 : v.len), v.p);
        return -1;
    }
    return 0;
}

static int str_is(cql_str s, const char *lit)
{
    return s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0;
}

static int decode_startup(cql_reader *r, cql_startup *s, char *err, size_t errlen)
{
    if (cql_read_string_map(r, "the options' [string map]", &s->options, &s->n)) return -1;
    int have_version = 0;
    for (uint16_t i = 0; i < s->n; i++) {
        cql_str k = s->options[i].key, v = s->options[i].value;
        if (str_is(k, "CQL_VERSION")) {
            s->cql_version = v;
            have_version = 1;
        } else if (str_is(k, "DRIVER_NAME")) {
            s->driver_name = v;
        } else if (str_is(k, "DRIVER_VERSION")) {
            s->driver_version = v;
        } else if (str_is(k, "THROW_ON_OVERLOAD")) {
            s->throw_on_overload = str_is(v, "1");
        }
    }
    if (!have_version) {
        snprintf(err, errlen, "Missing value CQL_VERSION in STARTUP message");
        return -1;
    }
    if (check_cql_version(s->cql_version, err, errlen)) return -1;
    for (uint16_t i = 0; i < s->n; i++) {
        if (!str_is(s->options[i].key, "COMPRESSION")) continue;
        cql_str v = s->options[i].value;
        if (v.len == 3 && strncasecmp(v.p, "lz4", 3) == 0) {
            s->compression = CQL_COMPRESSION_LZ4;
        } else if (v.len == 6 && strncasecmp(v.p, "snappy", 6) == 0) {
            snprintf(err, errlen, "This instance does not support Snappy compression");
            return -1;
        } else {
            snprintf(err, errlen, "Unknown compression algorithm: %.*s",
                     (int)(v.len > 64 ? 64 : v.len), v.p);
            return -1;
        }
    }
    return 0;
}

static int decode_batch(cql_reader *r, uint8_t version, cql_batch *b)
{
    if (cql_read_byte(r, "the batch type's [byte]", &b->type)) return -1;
    if (b->type > CQL_BATCH_COUNTER)
        return cql_reader_fail(r, "Invalid BATCH message type %u (0 logged, 1 unlogged, 2 counter)",
                               b->type);
    if (cql_read_short(r, "the number of statements' [short]", &b->n)) return -1;
    if ((size_t)b->n * 7 > cql_reader_left(r))
        return cql_reader_fail(r, "the batch counts %u statements but only %zu bytes remain", b->n,
                               cql_reader_left(r));
    b->statements = pool_array(r, "the statements", b->n, sizeof *b->statements);
    if (b->n && !b->statements) return -1;
    for (uint16_t i = 0; i < b->n; i++) {
        cql_batch_statement *s = &b->statements[i];
        uint8_t kind;
        if (cql_read_byte(r, "a statement's kind [byte]", &kind)) return -1;
        if (kind > 1)
            return cql_reader_fail(
                r, "Invalid query kind in BATCH messages. Must be 0 or 1 but got %u", kind);
        s->prepared = kind;
        if (kind ? cql_read_short_bytes(r, "a statement's prepared id", &s->query)
                 : cql_read_long_string(r, "a statement's query [long string]", &s->query))
            return -1;
        /* Values carry no names: the flag that would say so comes after them. */
        if (read_values(r, 0, &s->values, "a statement's values")) return -1;
    }
    b->serial_consistency = CQL_CL_SERIAL;
    b->timestamp = INT64_MIN;
    if (cql_read_consistency(r, "the consistency", &b->consistency) ||
        read_flags(r, version, &b->flags))
        return -1;
    if (b->flags & 0x0F)
        return cql_reader_fail(
            r, "BATCH flags 0x%x set bits 0x0F, which only QUERY and EXECUTE use", b->flags);
    if (b->flags & CQL_QF_NAMES_FOR_VALUES)
        return cql_reader_fail(r, "Names for values (flag 0x40) cannot be used in a BATCH: "
                                  "its values come before its flags (CASSANDRA-10246)");
    if ((b->flags & CQL_QF_SERIAL_CONSISTENCY) &&
        cql_read_consistency(r, "the serial consistency", &b->serial_consistency))
        return -1;
    if ((b->flags & CQL_QF_DEFAULT_TIMESTAMP) && read_timestamp(r, &b->timestamp)) return -1;
    if (version >= 5) {
        if ((b->flags & CQL_QF_KEYSPACE) &&
            cql_read_string(r, "the keyspace's [string]", &b->keyspace))
            return -1;
        if ((b->flags & CQL_QF_NOW_IN_SECONDS) &&
            cql_read_int(r, "now in seconds' [int]", &b->now_in_seconds))
            return -1;
    }
    return 0;
}

static int decode_register(cql_reader *r, cql_register *g)
{
    cql_str *types;
    uint16_t n;
    if (cql_read_string_list(r, "the event types' [string list]", &types, &n)) return -1;
    for (uint16_t i = 0; i < n; i++) {
        if (str_is(types[i], "TOPOLOGY_CHANGE"))
            g->events |= CQL_EVENT_TOPOLOGY_CHANGE;
        else if (str_is(types[i], "STATUS_CHANGE"))
            g->events |= CQL_EVENT_STATUS_CHANGE;
        else if (str_is(types[i], "SCHEMA_CHANGE"))
            g->events |= CQL_EVENT_SCHEMA_CHANGE;
        else
            return cql_reader_fail(r, "Invalid value '%.*s' for Type",
                                   (int)(types[i].len > 64 ? 64 : types[i].len), types[i].p);
    }
    return 0;
}

int cql_request_decode(const cql_envelope *env, cql_request *req, char *err, size_t errlen)
{
    memset(req, 0, sizeof *req);
    req->version = env->version;
    req->flags = env->flags;
    req->opcode = env->opcode;
    req->stream = env->stream;
    err[0] = '\0';
    const char *name = cql_opcode_name(env->opcode);
    if (cql_opcode_is_request(env->opcode) != 1) {
        snprintf(err, errlen, "A client may not send %s messages", name ? name : "unknown");
        return -1;
    }
    cql_reader r;
    cql_reader_init(&r, env->body, env->length, &req->pool);
    if (env->flags & CQL_FLAG_CUSTOM_PAYLOAD) {
        if (env->version < 4) {
            snprintf(err, errlen,
                     "Received frame with CUSTOM_PAYLOAD flag for native protocol version < 4");
            return -1;
        }
        cql_read_bytes_map(&r, "the custom payload's [bytes map]", &req->custom_payload,
                           &req->n_custom);
    }
    int semantic = 0;
    if (!r.err[0]) {
        switch (env->opcode) {
        case CQL_OP_STARTUP:
            semantic = decode_startup(&r, &req->u.startup, err, errlen) != 0 && !r.err[0];
            break;
        case CQL_OP_AUTH_RESPONSE:
            cql_read_bytes(&r, "the token's [bytes]", &req->u.auth_token);
            break;
        case CQL_OP_OPTIONS:
            break;
        case CQL_OP_QUERY:
            if (!cql_read_long_string(&r, "the query's [long string]", &req->u.query.query))
                read_query_params(&r, env->version, &req->u.query.params);
            break;
        case CQL_OP_PREPARE: {
            cql_prepare *p = &req->u.prepare;
            if (cql_read_long_string(&r, "the query's [long string]", &p->query)) break;
            if (env->version >= 5 && !read_flags(&r, env->version, &p->flags) &&
                (p->flags & CQL_PREPARE_KEYSPACE))
                cql_read_string(&r, "the keyspace's [string]", &p->keyspace);
            break;
        }
        case CQL_OP_EXECUTE: {
            cql_execute *x = &req->u.execute;
            if (cql_read_short_bytes(&r, "the prepared id's [short bytes]", &x->id)) break;
            if (env->version >= 5 &&
                cql_read_short_bytes(&r, "the result metadata id's [short bytes]",
                                     &x->result_metadata_id))
                break;
            read_query_params(&r, env->version, &x->params);
            break;
        }
        case CQL_OP_BATCH:
            decode_batch(&r, env->version, &req->u.batch);
            break;
        case CQL_OP_REGISTER:
            decode_register(&r, &req->u.reg);
            break;
        }
    }
    if (semantic) return -1;
    if (r.err[0]) {
        snprintf(err, errlen, "%s message: %s", name, r.err);
        return -1;
    }
    return 0;
}

void cql_request_free(cql_request *req)
{
    cql_pool_free(&req->pool);
}

/* ---- responses ---- */

size_t cql_response_begin(buf *out, uint8_t version, int16_t stream, uint8_t opcode,
                          const cql_response_extras *x)
{
    uint8_t flags = 0;
    if (x && x->tracing_id) flags |= CQL_FLAG_TRACING;
    if (x && x->n_warnings && version >= 4) flags |= CQL_FLAG_WARNING;
    if (x && x->n_custom && version >= 4) flags |= CQL_FLAG_CUSTOM_PAYLOAD;
    size_t start = cql_envelope_begin(out, version, flags, stream, opcode);
    if (start == (size_t)-1) return start;
    if (((flags & CQL_FLAG_TRACING) && cql_put_uuid(out, x->tracing_id)) ||
        ((flags & CQL_FLAG_WARNING) && cql_put_string_list(out, x->warnings, x->n_warnings)) ||
        ((flags & CQL_FLAG_CUSTOM_PAYLOAD) &&
         cql_put_bytes_map(out, x->custom_payload, x->n_custom))) {
        out->len = start;
        return (size_t)-1;
    }
    return start;
}

static int put_failures(buf *out, uint8_t version, const cql_error *e)
{
    if (version < 5) return cql_put_int(out, (int32_t)e->n_reasons);
    if (cql_put_int(out, (int32_t)e->n_reasons)) return -1;
    for (uint32_t i = 0; i < e->n_reasons; i++)
        if (cql_put_inetaddr(out, &e->reasons[i].endpoint) ||
            cql_put_short(out, e->reasons[i].code))
            return -1;
    return 0;
}

int cql_write_error(buf *out, uint8_t version, const cql_error *e)
{
    if (cql_put_int(out, (int32_t)e->code) || cql_put_string(out, e->message)) return -1;
    switch (e->code) {
    case CQL_ERR_UNAVAILABLE:
        return cql_put_consistency(out, e->consistency) || cql_put_int(out, e->required) ||
                       cql_put_int(out, e->alive)
                   ? -1
                   : 0;
    case CQL_ERR_WRITE_TIMEOUT:
        if (cql_put_consistency(out, e->consistency) || cql_put_int(out, e->received) ||
            cql_put_int(out, e->block_for) || cql_put_string(out, e->write_type))
            return -1;
        if (version >= 5 && e->write_type && strcmp(e->write_type, "CAS") == 0)
            return cql_put_short(out, e->contentions);
        return 0;
    case CQL_ERR_READ_TIMEOUT:
        return cql_put_consistency(out, e->consistency) || cql_put_int(out, e->received) ||
                       cql_put_int(out, e->block_for) || cql_put_byte(out, e->data_present ? 1 : 0)
                   ? -1
                   : 0;
    case CQL_ERR_READ_FAILURE:
        return cql_put_consistency(out, e->consistency) || cql_put_int(out, e->received) ||
                       cql_put_int(out, e->block_for) || put_failures(out, version, e) ||
                       cql_put_byte(out, e->data_present ? 1 : 0)
                   ? -1
                   : 0;
    case CQL_ERR_FUNCTION_FAILURE:
        return cql_put_string(out, e->keyspace) || cql_put_string(out, e->name) ||
                       cql_put_string_list(out, e->arg_types, e->n_arg_types)
                   ? -1
                   : 0;
    case CQL_ERR_WRITE_FAILURE:
        return cql_put_consistency(out, e->consistency) || cql_put_int(out, e->received) ||
                       cql_put_int(out, e->block_for) || put_failures(out, version, e) ||
                       cql_put_string(out, e->write_type)
                   ? -1
                   : 0;
    case CQL_ERR_CAS_WRITE_UNKNOWN:
        return cql_put_consistency(out, e->consistency) || cql_put_int(out, e->received) ||
                       cql_put_int(out, e->block_for)
                   ? -1
                   : 0;
    case CQL_ERR_ALREADY_EXISTS:
        return cql_put_string(out, e->keyspace) || cql_put_string(out, e->name) ? -1 : 0;
    case CQL_ERR_UNPREPARED:
        return cql_put_short_bytes(out, e->id, e->id_len);
    default:
        return 0;
    }
}

int cql_write_authenticate(buf *out, const char *authenticator)
{
    return cql_put_string(out, authenticator);
}

int cql_write_auth_token(buf *out, const void *token, int32_t len)
{
    return cql_put_bytes(out, token, len);
}

int cql_write_supported(buf *out, const cql_text_multi *options, uint16_t n)
{
    return cql_put_string_multimap(out, options, n);
}

int cql_write_void(buf *out)
{
    return cql_put_int(out, CQL_RESULT_VOID);
}

static int put_column_specs(buf *out, const char *keyspace, const char *table,
                            const cql_column *cols, uint32_t n)
{
    int global = keyspace && table;
    if (global && (cql_put_string(out, keyspace) || cql_put_string(out, table))) return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!global &&
            (cql_put_string(out, cols[i].keyspace) || cql_put_string(out, cols[i].table)))
            return -1;
        if (cql_put_string(out, cols[i].name) || cql_put_type(out, cols[i].type)) return -1;
    }
    return 0;
}

static int put_metadata(buf *out, uint8_t version, const cql_metadata *m)
{
    int32_t flags = 0;
    int changed = version >= 5 && m->new_metadata_id && !m->no_metadata;
    int global = m->keyspace && m->table && !m->no_metadata;
    if (global) flags |= CQL_ROWS_GLOBAL_TABLES_SPEC;
    if (m->paging_state) flags |= CQL_ROWS_HAS_MORE_PAGES;
    if (m->no_metadata) flags |= CQL_ROWS_NO_METADATA;
    if (changed) flags |= CQL_ROWS_METADATA_CHANGED;
    if (m->n_columns > INT32_MAX || cql_put_int(out, flags) ||
        cql_put_int(out, (int32_t)m->n_columns))
        return -1;
    if (m->paging_state && cql_put_bytes(out, m->paging_state, (int32_t)m->paging_len)) return -1;
    if (changed && cql_put_short_bytes(out, m->new_metadata_id, m->new_metadata_id_len)) return -1;
    if (m->no_metadata) return 0;
    return put_column_specs(out, global ? m->keyspace : NULL, global ? m->table : NULL, m->columns,
                            m->n_columns);
}

int cql_write_rows_begin(buf *out, uint8_t version, const cql_metadata *m, size_t *count_at)
{
    if (cql_put_int(out, CQL_RESULT_ROWS) || put_metadata(out, version, m)) return -1;
    *count_at = out->len;
    return cql_put_int(out, 0);
}

void cql_write_rows_count(buf *out, size_t count_at, uint32_t rows)
{
    uint8_t *p = (uint8_t *)out->data + count_at;
    p[0] = (uint8_t)(rows >> 24);
    p[1] = (uint8_t)(rows >> 16);
    p[2] = (uint8_t)(rows >> 8);
    p[3] = (uint8_t)rows;
}

int cql_write_set_keyspace(buf *out, const char *keyspace)
{
    return cql_put_int(out, CQL_RESULT_SET_KEYSPACE) || cql_put_string(out, keyspace) ? -1 : 0;
}

int cql_write_prepared(buf *out, uint8_t version, const cql_prepared *p)
{
    if (cql_put_int(out, CQL_RESULT_PREPARED) || cql_put_short_bytes(out, p->id, p->id_len))
        return -1;
    if (version >= 5 && cql_put_short_bytes(out, p->result_metadata_id, p->result_metadata_id_len))
        return -1;
    int global = p->keyspace && p->table;
    if (p->n_markers > INT32_MAX || cql_put_int(out, global ? CQL_ROWS_GLOBAL_TABLES_SPEC : 0) ||
        cql_put_int(out, (int32_t)p->n_markers))
        return -1;
    if (version >= 4) {
        if (p->n_pk > INT32_MAX || cql_put_int(out, (int32_t)p->n_pk)) return -1;
        for (uint32_t i = 0; i < p->n_pk; i++)
            if (cql_put_short(out, p->pk_indexes[i])) return -1;
    }
    if (put_column_specs(out, p->keyspace, p->table, p->markers, p->n_markers)) return -1;
    cql_metadata none = {.no_metadata = 1};
    return put_metadata(out, version, p->result ? p->result : &none);
}

static int put_schema_change(buf *out, const cql_schema_change *c)
{
    if (cql_put_string(out, c->change) || cql_put_string(out, c->target) ||
        cql_put_string(out, c->keyspace))
        return -1;
    const char *t = c->target ? c->target : "";
    if (strcmp(t, "KEYSPACE") == 0) return 0;
    if (cql_put_string(out, c->name)) return -1;
    if (strcmp(t, "FUNCTION") == 0 || strcmp(t, "AGGREGATE") == 0)
        return cql_put_string_list(out, c->arg_types, c->n_arg_types);
    return 0;
}

int cql_write_schema_change_result(buf *out, const cql_schema_change *c)
{
    return cql_put_int(out, CQL_RESULT_SCHEMA_CHANGE) || put_schema_change(out, c) ? -1 : 0;
}

int cql_write_topology_event(buf *out, const char *change, const cql_inet *node)
{
    return cql_put_string(out, "TOPOLOGY_CHANGE") || cql_put_string(out, change) ||
                   cql_put_inet(out, node)
               ? -1
               : 0;
}

int cql_write_status_event(buf *out, const char *change, const cql_inet *node)
{
    return cql_put_string(out, "STATUS_CHANGE") || cql_put_string(out, change) ||
                   cql_put_inet(out, node)
               ? -1
               : 0;
}

int cql_write_schema_event(buf *out, const cql_schema_change *c)
{
    return cql_put_string(out, "SCHEMA_CHANGE") || put_schema_change(out, c) ? -1 : 0;
}
