/* keyenc.c — order-preserving clustering keys, their ranges, serialized partition keys
 * and their tokens (see keyenc.h; the hash is util/murmur3.h's).
 *
 * A component is a header byte (0x01 null, inside tuples only; 0x02 empty; 0x03 a value)
 * and the value's body: integers big-endian with the sign bit flipped, floats with the
 * IEEE order trick, byte strings with 0x00 escaped as 0x00 0xff and ended by 0x00 0x00,
 * varints and decimals as sign, magnitude or exponent, and digits, uuids reordered as
 * their comparators read them, and collections, tuples and UDTs as their elements'
 * components ended by 0x00. A DESC column's component is all its bytes inverted. */
#include "cql/keyenc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/value.h"
#include "cqlwire/cql_value.h"
#include "util/murmur3.h"

#define H_NULL 0x01
#define H_EMPTY 0x02
#define H_VALUE 0x03

static int bad_key(cql_parse_error *err)
{
    return cql_error_record(err, CQL_ERR_SERVER, "A stored clustering key is malformed");
}

/* ---- encoding ---- */

static int put_be(buf *out, uint64_t v, int n)
{
    uint8_t b[8];
    for (int i = n - 1; i >= 0; i--) {
        b[i] = (uint8_t)v;
        v >>= 8;
    }
    return buf_append(out, b, (size_t)n);
}

static uint64_t get_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static int put_escaped(buf *out, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf_putc(out, p[i])) return -1;
        if (p[i] == 0 && buf_putc(out, 0xff)) return -1;
    }
    return buf_append(out, "\0\0", 2);
}

static int int_width(uint16_t id)
{
    switch (id) {
    case CQL_TYPE_TINYINT:
        return 1;
    case CQL_TYPE_SMALLINT:
        return 2;
    case CQL_TYPE_INT:
        return 4;
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
    case CQL_TYPE_TIMESTAMP:
        return 8;
    default:
        return 0;
    }
}

static uint64_t timeuuid_msb(const uint8_t *u)
{
    uint64_t msb = get_be(u, 8);
    return (msb << 48) | ((msb << 16) & 0xffff00000000ull) | (msb >> 32);
}

static uint64_t timeuuid_unmsb(uint64_t r)
{
    /* r = hi16 << 48 | mid16 << 32 | low32, back to low32 << 32 | mid16 << 16 | hi16 */
    return (r << 32) | ((r >> 16) & 0xffff0000ull) | (r >> 48);
}

static int put_body(buf *out, const cql_ctype *t, const uint8_t *v, size_t len,
                    cql_parse_error *err, int depth);

/* An element: header and body; vlen < 0 is null. */
static int put_element(buf *out, const cql_ctype *t, const uint8_t *v, int32_t vlen,
                       cql_parse_error *err, int depth)
{
    if (vlen < 0) return buf_putc(out, H_NULL);
    if (vlen == 0) return buf_putc(out, H_EMPTY);
    if (buf_putc(out, H_VALUE)) return -1;
    return put_body(out, t, v, (size_t)vlen, err, depth + 1);
}

static int put_varint(buf *out, const uint8_t *p, size_t len)
{
    while (len > 1 && ((p[0] == 0x00 && !(p[1] & 0x80)) || (p[0] == 0xff && (p[1] & 0x80)))) {
        p++;
        len--;
    }
    int neg = (p[0] & 0x80) != 0;
    if (!neg && len == 1 && p[0] == 0) return buf_putc(out, 0x01);
    uint8_t *mag = malloc(len);
    if (!mag) return -1;
    if (neg) { /* the magnitude is the two's complement */
        int carry = 1;
        for (size_t i = len; i-- > 0;) {
            int x = (uint8_t)~p[i] + carry;
            mag[i] = (uint8_t)x;
            carry = x >> 8;
        }
    } else {
        memcpy(mag, p, len);
    }
    size_t s = 0;
    while (s < len - 1 && mag[s] == 0)
        s++;
    size_t n = len - s;
    int rc = buf_putc(out, neg ? 0x00 : 0x02);
    rc = rc ? rc : put_be(out, neg ? ~(uint32_t)n : (uint32_t)n, 4);
    for (size_t i = s; i < len && !rc; i++)
        rc = buf_putc(out, neg ? (uint8_t)~mag[i] : mag[i]);
    free(mag);
    return rc;
}

static int put_decimal(buf *out, const uint8_t *p, size_t len)
{
    int32_t scale;
    if (len < 5 || cql_int_decode(p, 4, &scale)) return -1;
    buf u;
    buf_init(&u, 0);
    if (cql_varint_to_text(p + 4, len - 4, &u)) {
        buf_free(&u);
        return -1;
    }
    const char *d = u.data;
    int neg = d[0] == '-';
    d += neg;
    size_t total = strlen(d), nd = total;
    while (nd > 0 && d[nd - 1] == '0')
        nd--;
    int rc;
    if (nd == 0) {
        rc = buf_putc(out, 0x01);
    } else {
        /* value = 0.d × 10^exp */
        int64_t exp = (int64_t)total - scale;
        uint64_t e = (uint64_t)exp ^ 0x8000000000000000ull;
        rc = buf_putc(out, neg ? 0x00 : 0x02);
        rc = rc ? rc : put_be(out, neg ? ~e : e, 8);
        for (size_t i = 0; i < nd && !rc; i++) {
            uint8_t x = (uint8_t)(d[i] - '0' + 1);
            rc = buf_putc(out, neg ? (uint8_t)~x : x);
        }
        rc = rc ? rc : buf_putc(out, neg ? 0xff : 0x00);
    }
    buf_free(&u);
    return rc;
}

static int put_body(buf *out, const cql_ctype *t, const uint8_t *v, size_t len,
                    cql_parse_error *err, int depth)
{
    uint16_t id = t->wire.id;
    int w = int_width(id);
    if (depth > CQL_TYPE_MAX_DEPTH)
        return cql_error_record(err, CQL_ERR_INVALID, "A clustering value is nested too deep");
    if (w) return put_be(out, get_be(v, w) ^ ((uint64_t)0x80 << (8 * (w - 1))), w);
    switch (id) {
    case CQL_TYPE_DATE:
    case CQL_TYPE_TIME:
    case CQL_TYPE_BOOLEAN:
        return buf_append(out, v, len);
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE: {
        int n = id == CQL_TYPE_FLOAT ? 4 : 8;
        uint64_t bits = get_be(v, n), sign = (uint64_t)1 << (8 * n - 1);
        uint64_t mask = n == 4 ? 0xffffffffull : ~0ull;
        int nan = n == 4 ? (bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff)
                         : (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull &&
                               (bits & 0xfffffffffffffull);
        if (nan) bits = n == 4 ? 0x7fc00000 : 0x7ff8000000000000ull;
        bits = (bits & sign) ? ~bits & mask : bits | sign;
        return put_be(out, bits, n);
    }
    case CQL_TYPE_UUID: {
        int version = v[6] >> 4;
        if (buf_putc(out, (uint8_t)version)) return -1;
        if (version == 1) {
            if (put_be(out, timeuuid_msb(v), 8)) return -1;
            return buf_append(out, v + 8, 8);
        }
        return buf_append(out, v, 16);
    }
    case CQL_TYPE_TIMEUUID: {
        if (put_be(out, timeuuid_msb(v), 8)) return -1;
        for (int i = 8; i < 16; i++)
            if (buf_putc(out, v[i] ^ 0x80)) return -1;
        return 0;
    }
    case CQL_TYPE_VARINT:
        return put_varint(out, v, len);
    case CQL_TYPE_DECIMAL:
        return put_decimal(out, v, len);
    case CQL_TYPE_DURATION:
        return cql_error_record(err, CQL_ERR_INVALID, "duration values cannot be ordered");
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_MAP: {
        cql_elements e;
        uint32_t count;
        int pairs = id == CQL_TYPE_MAP;
        if (cql_collection_open(&e, v, len, pairs, &count)) return -1;
        const uint8_t *x;
        int32_t xl;
        for (uint64_t i = 0; i < (uint64_t)count * (pairs ? 2 : 1); i++) {
            if (cql_element_next(&e, &x, &xl) != 1) return -1;
            if (put_element(out, t->args[pairs ? i % 2 : 0], x, xl, err, depth)) return -1;
        }
        return buf_putc(out, 0x00);
    }
    case CQL_TYPE_TUPLE:
    case CQL_TYPE_UDT: {
        cql_elements e;
        cql_fields_open(&e, v, len);
        const uint8_t *x;
        int32_t xl;
        for (uint16_t i = 0; i < t->wire.n; i++) {
            int r = cql_element_next(&e, &x, &xl);
            if (r < 0) return -1;
            if (r == 0) break;
            if (put_element(out, t->args[i], x, xl, err, depth)) return -1;
        }
        return buf_putc(out, 0x00);
    }
    default: /* text, ascii, blob, inet, custom */
        return put_escaped(out, v, len);
    }
}

int cqlkey_put(buf *out, const cqlkey_col *col, const uint8_t *v, size_t len, cql_parse_error *err)
{
    cql_parse_error inner = {0};
    if (cqlval_validate(col->type, v, len, &inner))
        return cql_error_record(err, CQL_ERR_INVALID, "%s", inner.msg);
    size_t start = out->len;
    int rc = len == 0 ? buf_putc(out, H_EMPTY)
                      : (buf_putc(out, H_VALUE) || put_body(out, col->type, v, len, err, 0));
    if (rc) {
        out->len = start;
        return cql_error_record(err, CQL_ERR_SERVER, "A clustering key is too large");
    }
    if (col->desc)
        for (size_t i = start; i < out->len; i++)
            out->data[i] = (char)~out->data[i];
    return 0;
}

int cqlkey_encode(buf *out, const cqlkey_col *cols, size_t n, const cql_value *values,
                  cql_parse_error *err)
{
    size_t start = out->len;
    for (size_t i = 0; i < n; i++) {
        if (values[i].len < 0) {
            out->len = start;
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Invalid null value for clustering key part %zu", i);
        }
        if (cqlkey_put(out, &cols[i], values[i].p, (size_t)values[i].len, err)) {
            out->len = start;
            return -1;
        }
    }
    return 0;
}

/* ---- decoding ---- */

typedef struct reader {
    const uint8_t *p;
    size_t len, pos;
    int desc;
} reader;

static int rd(reader *r, uint8_t *b)
{
    if (r->pos >= r->len) return -1;
    *b = r->desc ? (uint8_t)~r->p[r->pos] : r->p[r->pos];
    r->pos++;
    return 0;
}

static int rd_be(reader *r, int n, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++) {
        uint8_t b;
        if (rd(r, &b)) return -1;
        x = x << 8 | b;
    }
    *v = x;
    return 0;
}

static int get_body(reader *r, const cql_ctype *t, buf *out, int depth);

/* An element into out as [bytes]. */
static int get_element(reader *r, const cql_ctype *t, buf *out, int depth, int *end)
{
    uint8_t h;
    *end = 0;
    if (rd(r, &h)) return -1;
    if (h == 0x00) {
        *end = 1;
        return 0;
    }
    if (h == H_NULL) return cql_element_put(out, NULL, -1);
    if (h == H_EMPTY) return cql_element_put(out, NULL, 0);
    if (h != H_VALUE) return -1;
    size_t at = out->len;
    uint8_t zero[4] = {0};
    if (buf_append(out, zero, 4) || get_body(r, t, out, depth + 1)) return -1;
    cql_int_encode((int32_t)(out->len - at - 4), (uint8_t *)out->data + at);
    return 0;
}

static int get_varint(reader *r, buf *out)
{
    uint8_t cls;
    uint64_t n;
    if (rd(r, &cls)) return -1;
    if (cls == 0x01) return buf_putc(out, 0);
    if (cls != 0x00 && cls != 0x02) return -1;
    int neg = cls == 0x00;
    if (rd_be(r, 4, &n)) return -1;
    if (neg) n = ~n & 0xffffffffu;
    if (n == 0 || n > r->len) return -1;
    uint8_t *mag = malloc(n);
    if (!mag) return -1;
    for (uint64_t i = 0; i < n; i++) {
        uint8_t b;
        if (rd(r, &b)) {
            free(mag);
            return -1;
        }
        mag[i] = neg ? (uint8_t)~b : b;
    }
    int rc = 0;
    if (neg) {
        int carry = 1;
        for (uint64_t i = n; i-- > 0;) {
            int x = (uint8_t)~mag[i] + carry;
            mag[i] = (uint8_t)x;
            carry = x >> 8;
        }
        if (!(mag[0] & 0x80)) rc = buf_putc(out, 0xff);
    } else if (mag[0] & 0x80) {
        rc = buf_putc(out, 0x00);
    }
    rc = rc ? rc : buf_append(out, mag, n);
    free(mag);
    return rc;
}

static int get_decimal(reader *r, buf *out)
{
    uint8_t cls;
    if (rd(r, &cls)) return -1;
    if (cls == 0x01) return buf_append(out, "\0\0\0\0\0", 5);
    if (cls != 0x00 && cls != 0x02) return -1;
    int neg = cls == 0x00;
    uint64_t e;
    if (rd_be(r, 8, &e)) return -1;
    if (neg) e = ~e;
    int64_t exp = (int64_t)(e ^ 0x8000000000000000ull);
    buf d;
    buf_init(&d, 0);
    if (neg) buf_putc(&d, '-');
    size_t nd = 0;
    for (;;) {
        uint8_t b;
        if (rd(r, &b)) {
            buf_free(&d);
            return -1;
        }
        if (neg) b = (uint8_t)~b;
        if (b == 0) break;
        if (b > 10 || nd >= CQL_NUMBER_DIGITS) {
            buf_free(&d);
            return -1;
        }
        buf_putc(&d, (uint8_t)('0' + b - 1));
        nd++;
    }
    /* digits d × 10^(exp - nd); a small negative scale is written as zeros instead
     * (1000 rather than 1E+3), a large one kept */
    int64_t scale = (int64_t)nd - exp;
    if (scale < 0 && (int64_t)nd - scale <= 64) {
        for (; scale < 0; scale++)
            buf_putc(&d, '0');
    }
    if (scale < INT32_MIN) {
        buf_free(&d);
        return -1;
    }
    if (scale > INT32_MAX) {
        buf_free(&d);
        return -1;
    }
    uint8_t s[4];
    cql_int_encode((int32_t)scale, s);
    int rc = buf_append(out, s, 4);
    rc = rc ? rc : cql_varint_from_text(d.data, d.len, out);
    buf_free(&d);
    return rc;
}

static int get_body(reader *r, const cql_ctype *t, buf *out, int depth)
{
    uint16_t id = t->wire.id;
    int w = int_width(id);
    uint64_t v;
    if (depth > CQL_TYPE_MAX_DEPTH) return -1;
    if (w) {
        if (rd_be(r, w, &v)) return -1;
        return put_be(out, v ^ ((uint64_t)0x80 << (8 * (w - 1))), w);
    }
    switch (id) {
    case CQL_TYPE_DATE:
        return rd_be(r, 4, &v) ? -1 : put_be(out, v, 4);
    case CQL_TYPE_TIME:
        return rd_be(r, 8, &v) ? -1 : put_be(out, v, 8);
    case CQL_TYPE_BOOLEAN:
        return rd_be(r, 1, &v) ? -1 : put_be(out, v, 1);
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE: {
        int n = id == CQL_TYPE_FLOAT ? 4 : 8;
        uint64_t sign = (uint64_t)1 << (8 * n - 1), mask = n == 4 ? 0xffffffffull : ~0ull;
        if (rd_be(r, n, &v)) return -1;
        v = (v & sign) ? v & ~sign : ~v & mask;
        return put_be(out, v, n);
    }
    case CQL_TYPE_UUID: {
        uint8_t version;
        uint64_t a, b;
        if (rd(r, &version) || rd_be(r, 8, &a) || rd_be(r, 8, &b)) return -1;
        if (version == 1) a = timeuuid_unmsb(a);
        return put_be(out, a, 8) || put_be(out, b, 8);
    }
    case CQL_TYPE_TIMEUUID: {
        uint64_t a, b;
        if (rd_be(r, 8, &a) || rd_be(r, 8, &b)) return -1;
        return put_be(out, timeuuid_unmsb(a), 8) || put_be(out, b ^ 0x8080808080808080ull, 8);
    }
    case CQL_TYPE_VARINT:
        return get_varint(r, out);
    case CQL_TYPE_DECIMAL:
        return get_decimal(r, out);
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_MAP: {
        size_t at = cql_collection_begin(out);
        if (at == (size_t)-1) return -1;
        int pairs = id == CQL_TYPE_MAP, end = 0;
        uint32_t n = 0;
        for (;;) {
            if (get_element(r, t->args[pairs ? n % 2 : 0], out, depth, &end)) return -1;
            if (end) break;
            n++;
        }
        if (pairs && n % 2) return -1;
        cql_collection_end(out, at, pairs ? n / 2 : n);
        return 0;
    }
    case CQL_TYPE_TUPLE:
    case CQL_TYPE_UDT: {
        int end = 0;
        for (uint16_t i = 0; i < t->wire.n; i++) {
            if (get_element(r, t->args[i], out, depth, &end)) return -1;
            if (end) return 0;
        }
        uint8_t b;
        return rd(r, &b) || b != 0x00 ? -1 : 0;
    }
    case CQL_TYPE_DURATION:
        return -1;
    default: {
        for (;;) {
            uint8_t b, c;
            if (rd(r, &b)) return -1;
            if (b != 0) {
                if (buf_putc(out, b)) return -1;
                continue;
            }
            if (rd(r, &c)) return -1;
            if (c == 0x00) return 0;
            if (c != 0xff || buf_putc(out, 0)) return -1;
        }
    }
    }
}

int cqlkey_get(const uint8_t *key, size_t len, size_t *pos, const cqlkey_col *col, buf *out,
               cql_parse_error *err)
{
    reader r = {key, len, *pos, col->desc};
    size_t start = out->len;
    uint8_t h;
    int rc = rd(&r, &h);
    if (!rc && h == H_VALUE)
        rc = get_body(&r, col->type, out, 0);
    else if (!rc && h != H_EMPTY)
        rc = -1;
    if (rc) {
        out->len = start;
        return bad_key(err);
    }
    *pos = r.pos;
    return 0;
}

int cqlkey_decode(const uint8_t *key, size_t len, const cqlkey_col *cols, size_t n, buf *out,
                  size_t *at, cql_parse_error *err)
{
    size_t pos = 0, start = out->len;
    for (size_t i = 0; i < n; i++) {
        at[i] = out->len - start;
        if (cqlkey_get(key, len, &pos, &cols[i], out, err)) {
            out->len = start;
            return -1;
        }
    }
    at[n] = out->len - start;
    if (pos != len) {
        out->len = start;
        return bad_key(err);
    }
    return 0;
}

/* ---- ranges ---- */

void cqlkey_ranges_free(cqlkey_ranges *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        buf_free(&rs->r[i].lo);
        buf_free(&rs->r[i].hi);
    }
    free(rs->r);
    rs->r = NULL;
    rs->n = 0;
}

static int cmp_buf(const buf *a, const buf *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    if (c) return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* -1, 0, 1 comparing two upper limits (no_hi is the greatest). */
static int cmp_hi(const cqlkey_range *a, const cqlkey_range *b)
{
    if (a->no_hi || b->no_hi) return a->no_hi == b->no_hi ? 0 : a->no_hi ? 1 : -1;
    return cmp_buf(&a->hi, &b->hi);
}

static int copy_buf(buf *to, const buf *from)
{
    buf_init(to, 0);
    return buf_append(to, from->data ? from->data : "", from->len);
}

/* Adds [lo, hi) (hi NULL: unlimited), dropping an empty range. lo empty means from 0x01:
 * above the static row's key (empty, or the one byte 0x00), below every row's key. */
static int add_range(cqlkey_ranges *rs, const buf *lo, const buf *hi)
{
    cqlkey_range r;
    memset(&r, 0, sizeof r);
    if (copy_buf(&r.lo, lo)) return -1;
    if (r.lo.len == 0 && buf_putc(&r.lo, 0x01)) return -1;
    if (hi) {
        if (copy_buf(&r.hi, hi)) return -1;
    } else {
        buf_init(&r.hi, 0);
        r.no_hi = 1;
    }
    if (!r.no_hi && cmp_buf(&r.lo, &r.hi) >= 0) {
        buf_free(&r.lo);
        buf_free(&r.hi);
        return 0;
    }
    cqlkey_range *grown = realloc(rs->r, (rs->n + 1) * sizeof *grown);
    if (!grown) {
        buf_free(&r.lo);
        buf_free(&r.hi);
        return -1;
    }
    rs->r = grown;
    rs->r[rs->n++] = r;
    return 0;
}

/* The successor of prefix p (the first key after all keys starting with it); *none when
 * there is no such key (the range is then unlimited). */
static int successor(const buf *p, buf *out, int *none)
{
    *none = 0;
    if (copy_buf(out, p)) return -1;
    if (p->len == 0 || buf_prefix_successor(out) != 0) *none = 1;
    return 0;
}

static int range_cmp(const void *a, const void *b)
{
    return cmp_buf(&((const cqlkey_range *)a)->lo, &((const cqlkey_range *)b)->lo);
}

/* Sorts and merges touching or overlapping ranges. */
static void normalize(cqlkey_ranges *rs)
{
    if (rs->n < 2) return;
    qsort(rs->r, rs->n, sizeof *rs->r, range_cmp);
    size_t k = 0;
    for (size_t i = 1; i < rs->n; i++) {
        cqlkey_range *last = &rs->r[k], *cur = &rs->r[i];
        if (!last->no_hi && cmp_buf(&cur->lo, &last->hi) > 0) {
            rs->r[++k] = *cur;
            continue;
        }
        if (cmp_hi(cur, last) > 0) {
            buf_free(&last->hi);
            last->hi = cur->hi;
            last->no_hi = cur->no_hi;
            buf_init(&cur->hi, 0);
        } else {
            buf_free(&cur->hi);
        }
        buf_free(&cur->lo);
    }
    rs->n = k + 1;
}

/* The ranges of one side of a slice below the base prefix. upper: c < x rather than c > x. */
static int side(const cqlkey_col *cols, size_t ncols, const buf *base, size_t neq,
                const cqlkey_bound *b, int upper, cqlkey_ranges *rs, cql_parse_error *err)
{
    if (neq + b->n > ncols)
        return cql_error_record(err, CQL_ERR_INVALID,
                                "A slice names more columns than the key has");
    buf prev, cur, sp, sc;
    int rc = copy_buf(&prev, base);
    buf_init(&cur, 0);
    buf_init(&sp, 0);
    buf_init(&sc, 0);
    for (size_t i = 0; i < b->n && !rc; i++) {
        const cqlkey_col *col = &cols[neq + i];
        if (b->values[i].len < 0) {
            rc = cql_error_record(err, CQL_ERR_INVALID,
                                  "Invalid null value in condition for column %zu", neq + i);
            break;
        }
        buf_reset(&cur);
        rc = buf_append(&cur, prev.data ? prev.data : "", prev.len);
        rc = rc ? rc : cqlkey_put(&cur, col, b->values[i].p, (size_t)b->values[i].len, err);
        if (rc) break;
        int none_p, none_c;
        buf_free(&sp);
        buf_free(&sc);
        rc = successor(&prev, &sp, &none_p) || successor(&cur, &sc, &none_c);
        if (rc) break;
        /* the rows whose column i is strictly beyond x_i in the slice's direction */
        int bytes_up = upper == col->desc; /* beyond means larger bytes */
        if (bytes_up) {
            if (!none_c) rc = add_range(rs, &sc, none_p ? NULL : &sp);
        } else {
            rc = add_range(rs, &prev, &cur);
        }
        buf_reset(&prev);
        rc = rc ? rc : buf_append(&prev, cur.data ? cur.data : "", cur.len);
    }
    if (!rc && b->inclusive) {
        int none;
        buf_free(&sp);
        rc = successor(&prev, &sp, &none) || add_range(rs, &prev, none ? NULL : &sp);
    }
    buf_free(&prev);
    buf_free(&cur);
    buf_free(&sp);
    buf_free(&sc);
    if (!rc) normalize(rs);
    return rc ? -1 : 0;
}

/* a ∩ b into out; all sorted and disjoint. */
static int intersect(const cqlkey_ranges *a, const cqlkey_ranges *b, cqlkey_ranges *out)
{
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        const cqlkey_range *x = &a->r[i], *y = &b->r[j];
        const buf *lo = cmp_buf(&x->lo, &y->lo) >= 0 ? &x->lo : &y->lo;
        const cqlkey_range *first = cmp_hi(x, y) <= 0 ? x : y;
        if (add_range(out, lo, first->no_hi ? NULL : &first->hi)) return -1;
        if (first == x)
            i++;
        else
            j++;
    }
    return 0;
}

int cqlkey_ranges_for(const cqlkey_col *cols, size_t ncols, const cql_value *eq, size_t neq,
                      const cqlkey_bound *lower, const cqlkey_bound *upper, cqlkey_ranges *out,
                      cql_parse_error *err)
{
    memset(out, 0, sizeof *out);
    if (neq > ncols)
        return cql_error_record(err, CQL_ERR_INVALID, "More equal values than key columns");
    buf base;
    buf_init(&base, 0);
    if (cqlkey_encode(&base, cols, neq, eq, err)) {
        buf_free(&base);
        return -1;
    }
    int rc = 0;
    cqlkey_ranges lo = {0}, hi = {0};
    if (lower && lower->n) rc = side(cols, ncols, &base, neq, lower, 0, &lo, err);
    if (!rc && upper && upper->n) rc = side(cols, ncols, &base, neq, upper, 1, &hi, err);
    if (!rc) {
        cqlkey_ranges all = {0};
        int none;
        buf s;
        rc = successor(&base, &s, &none) || add_range(&all, &base, none ? NULL : &s);
        buf_free(&s);
        if (!rc && lower && lower->n && upper && upper->n)
            rc = intersect(&lo, &hi, out);
        else if (!rc && lower && lower->n)
            rc = intersect(&lo, &all, out);
        else if (!rc && upper && upper->n)
            rc = intersect(&hi, &all, out);
        else if (!rc)
            rc = intersect(&all, &all, out);
        cqlkey_ranges_free(&all);
    }
    cqlkey_ranges_free(&lo);
    cqlkey_ranges_free(&hi);
    buf_free(&base);
    if (!rc) normalize(out);
    if (rc) {
        cqlkey_ranges_free(out);
        return cql_error_record(err, CQL_ERR_SERVER, "Out of memory computing key ranges");
    }
    return 0;
}

/* ---- partition keys ---- */

int cqlkey_partition(buf *out, const cql_value *values, const char *const *names, size_t n,
                     cql_parse_error *err)
{
    size_t start = out->len;
    for (size_t i = 0; i < n; i++) {
        if (values[i].len < 0)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Invalid null value for partition key part %s",
                                    names ? names[i] : "");
        if (values[i].len > 65535)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Key length of %d is longer than maximum of 65535",
                                    values[i].len);
    }
    if (n == 1 && values[0].len == 0)
        return cql_error_record(err, CQL_ERR_INVALID, "Key may not be empty");
    int rc = 0;
    if (n == 1) {
        rc = buf_append(out, values[0].p, (size_t)values[0].len);
    } else {
        for (size_t i = 0; i < n && !rc; i++) {
            rc = buf_put_be16(out, (uint16_t)values[i].len);
            rc = rc ? rc : buf_append(out, values[i].p, (size_t)values[i].len);
            rc = rc ? rc : buf_putc(out, 0);
        }
    }
    if (rc) {
        out->len = start;
        return cql_error_record(err, CQL_ERR_SERVER, "A partition key is too large");
    }
    return 0;
}

int cqlkey_partition_split(const uint8_t *key, size_t len, size_t n, cql_value *values)
{
    if (n == 1) {
        if (len > INT32_MAX) return -1;
        values[0].p = key;
        values[0].len = (int32_t)len;
        return 0;
    }
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (len - pos < 2) return -1;
        size_t l = (size_t)key[pos] << 8 | key[pos + 1];
        pos += 2;
        if (len - pos < l + 1 || key[pos + l] != 0) return -1;
        values[i].p = key + pos;
        values[i].len = (int32_t)l;
        pos += l + 1;
    }
    return pos == len ? 0 : -1;
}

int64_t cqlkey_token(const uint8_t *key, size_t len)
{
    return murmur3_token(key, len);
}

void cqlkey_token_bytes(int64_t token, uint8_t out[8])
{
    cql_bigint_encode(token, out);
}
