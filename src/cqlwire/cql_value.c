/* cql_value.c — each CQL type's value bytes, per the native protocol's section 6.
 *
 * Big-endian fixed widths, vints, durations, arbitrary-length varints and decimals
 * converted to and from decimal text by schoolbook arithmetic (quadratic, capped at
 * CQL_NUMBER_DIGITS digits), text checks and the cursors over collections and fields. */
#include "cqlwire/cql_value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void be_put(uint64_t v, uint8_t *out, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        out[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint64_t be_get(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

void cql_int_encode(int32_t v, uint8_t out[4])
{
    be_put((uint32_t)v, out, 4);
}

int cql_int_decode(const uint8_t *p, size_t len, int32_t *v)
{
    if (len != 4) return -1;
    *v = (int32_t)(uint32_t)be_get(p, 4);
    return 0;
}

void cql_bigint_encode(int64_t v, uint8_t out[8])
{
    be_put((uint64_t)v, out, 8);
}

int cql_bigint_decode(const uint8_t *p, size_t len, int64_t *v)
{
    if (len != 8) return -1;
    *v = (int64_t)be_get(p, 8);
    return 0;
}

void cql_smallint_encode(int16_t v, uint8_t out[2])
{
    be_put((uint16_t)v, out, 2);
}

int cql_smallint_decode(const uint8_t *p, size_t len, int16_t *v)
{
    if (len != 2) return -1;
    *v = (int16_t)(uint16_t)be_get(p, 2);
    return 0;
}

void cql_tinyint_encode(int8_t v, uint8_t out[1])
{
    out[0] = (uint8_t)v;
}

int cql_tinyint_decode(const uint8_t *p, size_t len, int8_t *v)
{
    if (len != 1) return -1;
    *v = (int8_t)p[0];
    return 0;
}

void cql_float_encode(float v, uint8_t out[4])
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    be_put(bits, out, 4);
}

int cql_float_decode(const uint8_t *p, size_t len, float *v)
{
    if (len != 4) return -1;
    uint32_t bits = (uint32_t)be_get(p, 4);
    memcpy(v, &bits, 4);
    return 0;
}

void cql_double_encode(double v, uint8_t out[8])
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    be_put(bits, out, 8);
}

int cql_double_decode(const uint8_t *p, size_t len, double *v)
{
    if (len != 8) return -1;
    uint64_t bits = be_get(p, 8);
    memcpy(v, &bits, 8);
    return 0;
}

void cql_boolean_encode(int v, uint8_t out[1])
{
    out[0] = v ? 1 : 0;
}

int cql_boolean_decode(const uint8_t *p, size_t len, int *v)
{
    if (len != 1) return -1;
    *v = p[0] != 0;
    return 0;
}

int cql_uuid_decode(const uint8_t *p, size_t len, uint8_t out[16])
{
    if (len != 16) return -1;
    memcpy(out, p, 16);
    return 0;
}

int cql_timeuuid_decode(const uint8_t *p, size_t len, uint8_t out[16])
{
    if (len != 16 || (p[6] >> 4) != 1) return -1;
    memcpy(out, p, 16);
    return 0;
}

#define DATE_EPOCH ((int64_t)1 << 31)

void cql_date_encode(int64_t days, uint8_t out[4])
{
    be_put((uint32_t)(days + DATE_EPOCH), out, 4);
}

int cql_date_decode(const uint8_t *p, size_t len, int64_t *days)
{
    if (len != 4) return -1;
    *days = (int64_t)be_get(p, 4) - DATE_EPOCH;
    return 0;
}

int cql_time_encode(int64_t ns, uint8_t out[8])
{
    if (ns < 0 || ns > CQL_TIME_MAX_NS) return -1;
    be_put((uint64_t)ns, out, 8);
    return 0;
}

int cql_time_decode(const uint8_t *p, size_t len, int64_t *ns)
{
    if (len != 8) return -1;
    int64_t v = (int64_t)be_get(p, 8);
    if (v < 0 || v > CQL_TIME_MAX_NS) return -1;
    *ns = v;
    return 0;
}

int cql_inet_decode(const uint8_t *p, size_t len, uint8_t out[16], int *family)
{
    if (len != 4 && len != 16) return -1;
    memcpy(out, p, len);
    *family = len == 4 ? 4 : 6;
    return 0;
}

/* ---- vints ---- */

int cql_uvint_encode(uint64_t v, uint8_t out[CQL_VINT_MAX])
{
    int bits = 64 - (v ? __builtin_clzll(v) : 63);
    int size = bits > 56 ? 9 : (bits + 6) / 7;
    if (size == 9) {
        out[0] = 0xff;
        be_put(v, out + 1, 8);
        return 9;
    }
    int extra = size - 1;
    be_put(v, out, size);
    out[0] = (uint8_t)(out[0] | (uint8_t)(0xff << (8 - extra)));
    return size;
}

size_t cql_uvint_decode(const uint8_t *p, size_t len, uint64_t *v)
{
    if (len == 0) return 0;
    int extra = __builtin_clz((unsigned)(uint8_t)~p[0] << 24 | 0xffffffu);
    if (p[0] == 0xff) extra = 8;
    if (len < (size_t)extra + 1) return 0;
    uint64_t r = extra == 8 ? 0 : (uint64_t)(p[0] & (0xff >> extra));
    for (int i = 1; i <= extra; i++)
        r = (r << 8) | p[i];
    *v = r;
    return (size_t)extra + 1;
}

int cql_vint_encode(int64_t v, uint8_t out[CQL_VINT_MAX])
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    return cql_uvint_encode(z, out);
}

size_t cql_vint_decode(const uint8_t *p, size_t len, int64_t *v)
{
    uint64_t z;
    size_t n = cql_uvint_decode(p, len, &z);
    if (n) *v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
    return n;
}

int cql_duration_encode(int32_t months, int32_t days, int64_t nanos, buf *out)
{
    uint8_t b[3 * CQL_VINT_MAX];
    int n = cql_vint_encode(months, b);
    n += cql_vint_encode(days, b + n);
    n += cql_vint_encode(nanos, b + n);
    return buf_append(out, b, (size_t)n);
}

int cql_duration_decode(const uint8_t *p, size_t len, int32_t *months, int32_t *days,
                        int64_t *nanos, char *why, size_t whylen)
{
    int64_t v[3];
    size_t pos = 0;
    for (int i = 0; i < 3; i++) {
        size_t n = cql_vint_decode(p + pos, len - pos, &v[i]);
        if (!n) {
            snprintf(why, whylen, "A duration needs 3 vints; its %zu bytes hold %d", len, i);
            return -1;
        }
        pos += n;
    }
    if (pos != len) {
        snprintf(why, whylen, "A duration of %zu bytes has %zu bytes after its 3 vints", len,
                 len - pos);
        return -1;
    }
    for (int i = 0; i < 2; i++)
        if (v[i] < INT32_MIN || v[i] > INT32_MAX) {
            snprintf(why, whylen, "The duration %s must be a 32 bits integer but was: %lld",
                     i == 0 ? "months" : "days", (long long)v[i]);
            return -1;
        }
    if ((v[0] < 0 || v[1] < 0 || v[2] < 0) && (v[0] > 0 || v[1] > 0 || v[2] > 0)) {
        snprintf(why, whylen,
                 "The duration months, days and nanoseconds must be all of the same sign "
                 "(%lld, %lld, %lld)",
                 (long long)v[0], (long long)v[1], (long long)v[2]);
        return -1;
    }
    *months = (int32_t)v[0];
    *days = (int32_t)v[1];
    *nanos = v[2];
    return 0;
}

/* ---- varint and decimal ---- */

int cql_varint_from_int64(int64_t v, buf *out)
{
    uint8_t b[8];
    be_put((uint64_t)v, b, 8);
    int i = 0;
    /* Drop leading bytes that only repeat the sign of the next one. */
    while (i < 7 && ((b[i] == 0x00 && !(b[i + 1] & 0x80)) || (b[i] == 0xff && (b[i + 1] & 0x80))))
        i++;
    return buf_append(out, b + i, (size_t)(8 - i));
}

int cql_varint_to_int64(const uint8_t *p, size_t len, int64_t *v)
{
    if (len == 0) return -1;
    uint8_t sign = (p[0] & 0x80) ? 0xff : 0x00;
    while (len > 8) {
        if (p[0] != sign) return -1;
        p++;
        len--;
    }
    if (len == 8 && ((p[0] & 0x80) ? 0xff : 0x00) != sign) return -1;
    uint64_t r = sign ? UINT64_MAX : 0;
    for (size_t i = 0; i < len; i++)
        r = (r << 8) | p[i];
    *v = (int64_t)r;
    return 0;
}

/* Most bytes a varint of CQL_NUMBER_DIGITS digits takes (log2(10) / 8 per digit, plus a sign byte).
 */
#define VARINT_MAX_BYTES (CQL_NUMBER_DIGITS * 416 / 1000 + 2)

/* Appends the minimal two's complement of (negative ? -mag : mag), mag being n
 * little-endian base-256 limbs. */
static int put_twos(buf *out, uint8_t *mag, size_t n, int negative)
{
    while (n > 0 && mag[n - 1] == 0)
        n--;
    if (n == 0) return buf_putc(out, 0);
    if (negative) {
        /* Two's complement of the magnitude, one more byte for the sign. */
        int carry = 1;
        for (size_t i = 0; i < n; i++) {
            int x = (uint8_t)~mag[i] + carry;
            mag[i] = (uint8_t)x;
            carry = x >> 8;
        }
        size_t m = n;
        while (m > 1 && mag[m - 1] == 0xff && (mag[m - 2] & 0x80))
            m--;
        if (!(mag[m - 1] & 0x80)) {
            if (buf_putc(out, 0xff) != 0) return -1;
        }
        for (size_t i = m; i-- > 0;)
            if (buf_putc(out, mag[i]) != 0) return -1;
        return 0;
    }
    if (mag[n - 1] & 0x80) {
        if (buf_putc(out, 0) != 0) return -1;
    }
    for (size_t i = n; i-- > 0;)
        if (buf_putc(out, mag[i]) != 0) return -1;
    return 0;
}

/* The digits (no sign) into out as a varint; neg for a '-'. */
static int digits_to_varint(const char *d, size_t nd, int neg, buf *out)
{
    uint8_t *mag = calloc(VARINT_MAX_BYTES, 1);
    if (!mag) return -1;
    size_t n = 0;
    for (size_t i = 0; i < nd; i++) {
        unsigned carry = (unsigned)(d[i] - '0');
        for (size_t k = 0; k < n; k++) {
            unsigned x = mag[k] * 10u + carry;
            mag[k] = (uint8_t)x;
            carry = x >> 8;
        }
        if (carry) mag[n++] = (uint8_t)carry;
    }
    int rc = put_twos(out, mag, n, neg);
    free(mag);
    return rc;
}

int cql_varint_from_text(const char *text, size_t len, buf *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (text[i] == '-' || text[i] == '+')) neg = text[i++] == '-';
    if (i == len || len - i > CQL_NUMBER_DIGITS) return -1;
    for (size_t k = i; k < len; k++)
        if (text[k] < '0' || text[k] > '9') return -1;
    return digits_to_varint(text + i, len - i, neg, out);
}

/* The magnitude of a varint as decimal digits (no sign) appended to out; *neg its sign. */
static int varint_digits(const uint8_t *p, size_t len, int *neg, buf *out)
{
    if (len == 0 || len > VARINT_MAX_BYTES) return -1;
    uint8_t *mag = malloc(len);
    if (!mag) return -1;
    *neg = (p[0] & 0x80) != 0;
    /* Big-endian magnitude. */
    if (*neg) {
        int carry = 1;
        for (size_t i = len; i-- > 0;) {
            int x = (uint8_t)~p[i] + carry;
            mag[i] = (uint8_t)x;
            carry = x >> 8;
        }
    } else {
        memcpy(mag, p, len);
    }
    char *digits = malloc(len * 3 + 2);
    if (!digits) {
        free(mag);
        return -1;
    }
    size_t nd = 0, start = 0;
    while (start < len && mag[start] == 0)
        start++;
    while (start < len) {
        /* Divide the magnitude by 10, keeping the remainder as the next digit. */
        unsigned rem = 0;
        for (size_t i = start; i < len; i++) {
            unsigned x = (rem << 8) | mag[i];
            mag[i] = (uint8_t)(x / 10);
            rem = x % 10;
        }
        digits[nd++] = (char)('0' + rem);
        while (start < len && mag[start] == 0)
            start++;
    }
    if (nd == 0) digits[nd++] = '0';
    int rc = nd > CQL_NUMBER_DIGITS ? -1 : 0;
    for (size_t i = nd; i-- > 0 && rc == 0;)
        rc = buf_putc(out, (uint8_t)digits[i]);
    free(digits);
    free(mag);
    return rc;
}

int cql_varint_to_text(const uint8_t *p, size_t len, buf *out)
{
    buf d;
    buf_init(&d, 0);
    int neg;
    int rc = varint_digits(p, len, &neg, &d);
    if (rc == 0 && neg) rc = buf_putc(out, '-');
    if (rc == 0) rc = buf_append(out, d.data, d.len);
    buf_free(&d);
    return rc;
}

int cql_decimal_from_text(const char *text, size_t len, buf *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (text[i] == '-' || text[i] == '+')) neg = text[i++] == '-';
    size_t int_at = i;
    while (i < len && text[i] >= '0' && text[i] <= '9')
        i++;
    size_t int_n = i - int_at, frac_at = i, frac_n = 0;
    if (i < len && text[i] == '.') {
        frac_at = ++i;
        while (i < len && text[i] >= '0' && text[i] <= '9')
            i++;
        frac_n = i - frac_at;
    }
    if (int_n + frac_n == 0 || int_n + frac_n > CQL_NUMBER_DIGITS) return -1;
    int64_t exp = 0;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < len && (text[i] == '-' || text[i] == '+')) eneg = text[i++] == '-';
        if (i == len) return -1;
        for (; i < len; i++) {
            if (text[i] < '0' || text[i] > '9') return -1;
            exp = exp * 10 + (text[i] - '0');
            if (exp > ((int64_t)1 << 32)) return -1;
        }
        if (eneg) exp = -exp;
    }
    if (i != len) return -1;
    int64_t scale = (int64_t)frac_n - exp;
    if (scale < INT32_MIN || scale > INT32_MAX) return -1;
    char *d = malloc(int_n + frac_n + 1);
    if (!d) return -1;
    memcpy(d, text + int_at, int_n);
    memcpy(d + int_n, text + frac_at, frac_n);
    uint8_t s[4];
    cql_int_encode((int32_t)scale, s);
    size_t start = out->len;
    int rc = buf_append(out, s, 4);
    if (rc == 0) rc = digits_to_varint(d, int_n + frac_n, neg, out);
    if (rc != 0) out->len = start;
    free(d);
    return rc;
}

int cql_decimal_to_text(const uint8_t *p, size_t len, buf *out)
{
    int32_t scale;
    if (len < 5 || cql_int_decode(p, 4, &scale) != 0) return -1;
    buf d;
    buf_init(&d, 0);
    int neg;
    int rc = varint_digits(p + 4, len - 4, &neg, &d);
    if (rc == 0 && neg) rc = buf_putc(out, '-');
    if (rc != 0) {
        buf_free(&d);
        return -1;
    }
    if (scale == 0) {
        rc = buf_append(out, d.data, d.len);
    } else if (scale > 0 && scale <= 64) {
        size_t s = (size_t)scale;
        if (d.len > s) {
            rc = buf_append(out, d.data, d.len - s);
            if (rc == 0) rc = buf_putc(out, '.');
            if (rc == 0) rc = buf_append(out, d.data + d.len - s, s);
        } else {
            rc = buf_puts(out, "0.");
            for (size_t k = d.len; k < s && rc == 0; k++)
                rc = buf_putc(out, '0');
            if (rc == 0) rc = buf_append(out, d.data, d.len);
        }
    } else {
        rc = buf_append(out, d.data, d.len);
        if (rc == 0) rc = buf_printf(out, "E%lld", -(long long)scale);
    }
    buf_free(&d);
    return rc;
}

/* ---- text ---- */

int cql_utf8_valid(const uint8_t *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        /* ASCII eight bytes at a time */
        uint64_t w;
        while (len - i >= 8 && (memcpy(&w, p + i, 8), (w & 0x8080808080808080ull) == 0))
            i += 8;
        if (i == len) break;
        uint8_t c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) {
            n = 1, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return 0;
        }
        if (len - i <= n) return 0;
        for (size_t k = 1; k <= n; k++) {
            if ((p[i + k] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (p[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        i += n + 1;
    }
    return 1;
}

int cql_ascii_valid(const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] & 0x80) return 0;
    return 1;
}

/* ---- collections ---- */

size_t cql_collection_begin(buf *out)
{
    size_t at = out->len;
    uint8_t zero[4] = {0};
    if (buf_append(out, zero, 4) != 0) return (size_t)-1;
    return at;
}

int cql_element_put(buf *out, const void *p, int32_t len)
{
    uint8_t n[4];
    cql_int_encode(len < 0 ? -1 : len, n);
    size_t start = out->len;
    if (buf_append(out, n, 4) != 0) return -1;
    if (len > 0 && buf_append(out, p, (size_t)len) != 0) {
        out->len = start;
        out->data[start] = '\0';
        return -1;
    }
    return 0;
}

void cql_collection_end(buf *out, size_t at, uint32_t count)
{
    cql_int_encode((int32_t)count, (uint8_t *)out->data + at);
}

int cql_collection_open(cql_elements *e, const uint8_t *p, size_t len, int pairs, uint32_t *count)
{
    int32_t n;
    if (len < 4 || cql_int_decode(p, 4, &n) != 0 || n < 0) return -1;
    uint64_t elements = (uint64_t)n * (pairs ? 2 : 1);
    if (elements * 4 > len - 4) return -1;
    e->p = p;
    e->len = len;
    e->pos = 4;
    e->left = (uint32_t)elements;
    *count = (uint32_t)n;
    return 0;
}

void cql_fields_open(cql_elements *e, const uint8_t *p, size_t len)
{
    e->p = p;
    e->len = len;
    e->pos = 0;
    e->left = UINT32_MAX;
}

int cql_element_next(cql_elements *e, const uint8_t **v, int32_t *vlen)
{
    if (e->left == 0) return e->pos == e->len ? 0 : -1;
    if (e->left == UINT32_MAX && e->pos == e->len) return 0;
    if (e->len - e->pos < 4) return -1;
    int32_t n;
    cql_int_decode(e->p + e->pos, 4, &n);
    e->pos += 4;
    if (n < -1) return -1;
    if (n >= 0 && (size_t)n > e->len - e->pos) return -1;
    *v = n >= 0 ? e->p + e->pos : NULL;
    *vlen = n;
    if (n > 0) e->pos += (size_t)n;
    if (e->left != UINT32_MAX) e->left--;
    return 1;
}
