/* aggregate.c — COUNT, MIN, MAX, SUM and AVG as Cassandra's AggregateFcts compute them
 * (see aggregate.h).
 *
 * Exact arithmetic for varint and decimal uses a small signed bignum in base 10^9 limbs
 * (add, multiply by a power of ten, divide by a count with truncation or half-even
 * rounding); the running decimal is kept as its unscaled digits and a scale. */
#include "cql/aggregate.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/value.h"
#include "cqlwire/cql_value.h"

static int fail(cql_parse_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(cql_parse_error *err, int code, const char *fmt, ...)
{
    if (err && !err->code && !err->msg[0]) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- a signed bignum, base 10^9 ---- */

#define BASE 1000000000u

typedef struct bn {
    int neg;
    uint32_t *l; /* little-endian limbs */
    size_t n;
} bn;

static void bn_free(bn *a)
{
    free(a->l);
    memset(a, 0, sizeof *a);
}

static void bn_trim(bn *a)
{
    while (a->n && a->l[a->n - 1] == 0)
        a->n--;
    if (!a->n) a->neg = 0;
}

static int bn_from_text(bn *a, const char *s, size_t len)
{
    memset(a, 0, sizeof *a);
    if (len && (s[0] == '-' || s[0] == '+')) {
        a->neg = s[0] == '-';
        s++;
        len--;
    }
    a->l = calloc(len / 9 + 2, sizeof *a->l);
    if (!a->l) return -1;
    for (size_t end = len; end > 0;) {
        size_t start = end >= 9 ? end - 9 : 0;
        uint32_t v = 0;
        for (size_t i = start; i < end; i++)
            v = v * 10 + (uint32_t)(s[i] - '0');
        a->l[a->n++] = v;
        end = start;
    }
    bn_trim(a);
    return 0;
}

static int bn_to_text(const bn *a, buf *out)
{
    if (!a->n) return buf_putc(out, '0');
    int rc = a->neg ? buf_putc(out, '-') : 0;
    rc = rc ? rc : buf_printf(out, "%u", a->l[a->n - 1]);
    for (size_t i = a->n - 1; i-- > 0 && !rc;)
        rc = buf_printf(out, "%09u", a->l[i]);
    return rc;
}

/* |a| vs |b| */
static int bn_cmp_mag(const bn *a, const bn *b)
{
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (size_t i = a->n; i-- > 0;)
        if (a->l[i] != b->l[i]) return a->l[i] < b->l[i] ? -1 : 1;
    return 0;
}

/* *r = a + b (r may be a). */
static int bn_add(bn *r, const bn *a, const bn *b)
{
    size_t n = (a->n > b->n ? a->n : b->n) + 1;
    uint32_t *l = calloc(n, sizeof *l);
    if (!l) return -1;
    int neg;
    if (a->neg == b->neg) {
        uint64_t carry = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t x = carry + (i < a->n ? a->l[i] : 0) + (i < b->n ? b->l[i] : 0);
            l[i] = (uint32_t)(x % BASE);
            carry = x / BASE;
        }
        neg = a->neg;
    } else {
        const bn *big = bn_cmp_mag(a, b) >= 0 ? a : b, *small = big == a ? b : a;
        int64_t borrow = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t x =
                (int64_t)(i < big->n ? big->l[i] : 0) - (i < small->n ? small->l[i] : 0) - borrow;
            borrow = x < 0;
            l[i] = (uint32_t)(x < 0 ? x + BASE : x);
        }
        neg = big->neg;
    }
    free(r->l);
    r->l = l;
    r->n = n;
    r->neg = neg;
    bn_trim(r);
    return 0;
}

/* a *= 10^k */
static int bn_mul_pow10(bn *a, int64_t k)
{
    if (!a->n || k <= 0) return 0;
    if (k > CQL_NUMBER_DIGITS) return -1;
    buf t;
    buf_init(&t, 0);
    int rc = bn_to_text(a, &t);
    for (int64_t i = 0; i < k && !rc; i++)
        rc = buf_putc(&t, '0');
    bn r;
    rc = rc ? rc : bn_from_text(&r, t.data, t.len);
    buf_free(&t);
    if (rc) return -1;
    bn_free(a);
    *a = r;
    return 0;
}

/* a /= d, truncating toward zero (half_even: rounding half to even instead). */
static void bn_div(bn *a, uint64_t d, int half_even)
{
    int neg = a->neg;
    unsigned __int128 rem = 0;
    for (size_t i = a->n; i-- > 0;) {
        unsigned __int128 x = rem * BASE + a->l[i];
        a->l[i] = (uint32_t)(x / d);
        rem = x % d;
    }
    if (half_even && rem) {
        unsigned __int128 twice = rem * 2;
        int up = twice > d || (twice == d && a->n && (a->l[0] & 1));
        if (up) {
            uint32_t one = 1;
            bn inc = {neg, &one, 1};
            bn r = {0, NULL, 0};
            if (bn_add(&r, a, &inc) == 0) {
                bn_free(a);
                *a = r;
            }
        }
    }
    bn_trim(a);
}

/* ---- decimals as (unscaled, scale) ---- */

typedef struct dec {
    bn u;
    int64_t scale;
} dec;

static int dec_from_wire(dec *d, const uint8_t *p, size_t len)
{
    int32_t scale;
    memset(d, 0, sizeof *d);
    if (len < 5 || cql_int_decode(p, 4, &scale)) return -1;
    buf t;
    buf_init(&t, 0);
    int rc = cql_varint_to_text(p + 4, len - 4, &t);
    rc = rc ? rc : bn_from_text(&d->u, t.data, t.len);
    buf_free(&t);
    d->scale = scale;
    return rc;
}

/* A double as BigDecimal.valueOf makes it: from Double.toString's digits. */
static int dec_from_double(dec *d, double v)
{
    uint8_t b[8];
    cql_double_encode(v, b);
    buf t, w;
    buf_init(&t, 0);
    buf_init(&w, 0);
    int rc = cqlval_to_text(cqltype_native(CQL_TYPE_DOUBLE), b, 8, &t);
    rc = rc ? rc : cql_decimal_from_text(t.data, t.len, &w);
    rc = rc ? rc : dec_from_wire(d, (const uint8_t *)w.data, w.len);
    buf_free(&t);
    buf_free(&w);
    return rc;
}

static int dec_to_wire(const dec *d, buf *out)
{
    if (d->scale < INT32_MIN || d->scale > INT32_MAX) return -1;
    uint8_t s[4];
    cql_int_encode((int32_t)d->scale, s);
    buf t;
    buf_init(&t, 0);
    int rc = bn_to_text(&d->u, &t);
    rc = rc ? rc : buf_append(out, s, 4);
    rc = rc ? rc : cql_varint_from_text(t.data, t.len, out);
    buf_free(&t);
    return rc;
}

/* Brings a and b to the larger scale. */
static int dec_align(dec *a, dec *b)
{
    if (a->scale < b->scale) {
        if (bn_mul_pow10(&a->u, b->scale - a->scale)) return -1;
        a->scale = b->scale;
    } else if (b->scale < a->scale) {
        if (bn_mul_pow10(&b->u, a->scale - b->scale)) return -1;
        b->scale = a->scale;
    }
    return 0;
}

/* r = a + b; b's sign flipped first when sub. a and b are consumed. */
static int dec_add(dec *r, dec *a, dec *b, int sub)
{
    if (dec_align(a, b)) return -1;
    if (sub && b->u.n) b->u.neg = !b->u.neg;
    bn s = {0, NULL, 0};
    if (bn_add(&s, &a->u, &b->u)) return -1;
    r->u = s;
    r->scale = a->scale;
    return 0;
}

/* The running decimal kept in the aggregate: unscaled digits in big, scale in big_scale. */
static int state_get(const cqlagg *a, dec *d)
{
    d->scale = a->big_scale;
    if (!a->big.len) {
        memset(&d->u, 0, sizeof d->u);
        return 0;
    }
    return bn_from_text(&d->u, a->big.data, a->big.len);
}

static int state_put(cqlagg *a, const dec *d)
{
    buf_reset(&a->big);
    a->big_scale = d->scale;
    return bn_to_text(&d->u, &a->big);
}

/* ---- the aggregates ---- */

int cqlagg_lookup(const char *name, int star, int constant_arg, cqlagg_kind *kind)
{
    if (strncasecmp(name, "system.", 7) == 0) name += 7;
    if (strcasecmp(name, "count") == 0) {
        *kind = star || constant_arg ? CQLAGG_COUNT_ROWS : CQLAGG_COUNT;
        return 1;
    }
    if (star) return 0;
    static const struct {
        const char *name;
        cqlagg_kind kind;
    } names[] = {
        {"min", CQLAGG_MIN}, {"max", CQLAGG_MAX}, {"sum", CQLAGG_SUM}, {"avg", CQLAGG_AVG}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0) {
            *kind = names[i].kind;
            return 1;
        }
    return 0;
}

static const char *kind_name(cqlagg_kind k)
{
    static const char *const n[] = {"countRows", "count", "min", "max", "sum", "avg"};
    return n[k];
}

static int numeric(uint16_t id)
{
    switch (id) {
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE:
    case CQL_TYPE_DECIMAL:
    case CQL_TYPE_VARINT:
    case CQL_TYPE_COUNTER:
        return 1;
    default:
        return 0;
    }
}

int cqlagg_init(cqlagg *a, cqlagg_kind kind, const cql_ctype *arg, cql_parse_error *err)
{
    memset(a, 0, sizeof *a);
    buf_init(&a->big, 0);
    a->kind = kind;
    a->arg = arg;
    a->result =
        kind == CQLAGG_COUNT_ROWS || kind == CQLAGG_COUNT ? cqltype_native(CQL_TYPE_BIGINT) : arg;
    if (kind == CQLAGG_COUNT_ROWS || kind == CQLAGG_COUNT) return 0;
    uint16_t id = arg ? arg->wire.id : 0;
    int ok = arg &&
             (kind == CQLAGG_MIN || kind == CQLAGG_MAX ? cqltype_native(id) != NULL : numeric(id));
    if (ok) return 0;
    buf b;
    buf_init(&b, 8192);
    static const uint16_t sums[] = {CQL_TYPE_TINYINT, CQL_TYPE_SMALLINT, CQL_TYPE_INT,
                                    CQL_TYPE_BIGINT,  CQL_TYPE_FLOAT,    CQL_TYPE_DOUBLE,
                                    CQL_TYPE_DECIMAL, CQL_TYPE_VARINT,   CQL_TYPE_COUNTER};
    static const uint16_t all[] = {
        CQL_TYPE_ASCII,    CQL_TYPE_BIGINT,  CQL_TYPE_BLOB,    CQL_TYPE_BOOLEAN,
        CQL_TYPE_COUNTER,  CQL_TYPE_DATE,    CQL_TYPE_DECIMAL, CQL_TYPE_DOUBLE,
        CQL_TYPE_DURATION, CQL_TYPE_FLOAT,   CQL_TYPE_INET,    CQL_TYPE_INT,
        CQL_TYPE_SMALLINT, CQL_TYPE_VARCHAR, CQL_TYPE_TIME,    CQL_TYPE_TIMESTAMP,
        CQL_TYPE_TIMEUUID, CQL_TYPE_TINYINT, CQL_TYPE_UUID,    CQL_TYPE_VARINT};
    int minmax = kind == CQLAGG_MIN || kind == CQLAGG_MAX;
    const uint16_t *ids = minmax ? all : sums;
    size_t n = minmax ? sizeof all / sizeof all[0] : sizeof sums / sizeof sums[0];
    for (size_t i = 0; i < n; i++)
        buf_printf(&b, "%ssystem.%s : (%s) -> %s", i ? ", " : "", kind_name(kind),
                   cql_type_name(ids[i]), cql_type_name(ids[i]));
    fail(err, CQL_ERR_INVALID,
         "Invalid call to function system.%s, none of its type signatures match (known type "
         "signatures: %s)",
         kind_name(kind), b.data ? b.data : "");
    buf_free(&b);
    buf_free(&a->big);
    return -1;
}

void cqlagg_reset(cqlagg *a)
{
    buf saved = a->big;
    cqlagg_kind kind = a->kind;
    const cql_ctype *arg = a->arg, *result = a->result;
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->arg = arg;
    a->result = result;
    a->big = saved;
    buf_reset(&a->big);
}

void cqlagg_free(cqlagg *a)
{
    buf_free(&a->big);
}

static int64_t as_int64(const uint8_t *p, size_t len)
{
    int64_t v = (int8_t)p[0];
    for (size_t i = 1; i < len; i++)
        v = v * 256 + p[i];
    return v;
}

static double as_double(uint16_t id, const uint8_t *p, size_t len)
{
    if (id == CQL_TYPE_FLOAT) {
        float f;
        cql_float_decode(p, len, &f);
        return f;
    }
    double d;
    cql_double_decode(p, len, &d);
    return d;
}

static int too_large(cql_parse_error *err)
{
    return fail(err, CQL_ERR_INVALID, "The aggregate's exact result is too large");
}

int cqlagg_add(cqlagg *a, const uint8_t *v, int32_t len, cql_parse_error *err)
{
    if (a->kind == CQLAGG_COUNT_ROWS) {
        a->count++;
        return 0;
    }
    if (len < 0) return 0;
    if (a->kind == CQLAGG_COUNT) {
        a->count++;
        return 0;
    }
    cql_parse_error inner = {0};
    if (cqlval_validate(a->arg, v, (size_t)len, &inner))
        return fail(err, CQL_ERR_INVALID, "%s", inner.msg);
    uint16_t id = a->arg->wire.id;
    if (a->kind == CQLAGG_MIN || a->kind == CQLAGG_MAX) {
        if (a->have) {
            int c =
                cqlval_compare(a->arg, (const uint8_t *)a->big.data, a->big.len, v, (size_t)len);
            if (a->kind == CQLAGG_MIN ? c <= 0 : c >= 0) return 0;
        }
        buf_reset(&a->big);
        if (buf_append(&a->big, v, (size_t)len)) return too_large(err);
        a->have = 1;
        return 0;
    }
    if (len == 0) return 0; /* an empty value adds nothing (Cassandra composes it as null) */
    a->count++;
    switch (id) {
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
        a->isum += as_int64(v, (size_t)len);
        return 0;
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE: {
        double d = as_double(id, v, (size_t)len);
        if (a->overflow) { /* AVG past the double range: exact decimals */
            dec s, x, r;
            if (state_get(a, &s) || dec_from_double(&x, d) || dec_add(&r, &s, &x, 0)) {
                bn_free(&s.u);
                bn_free(&x.u);
                return too_large(err);
            }
            bn_free(&s.u);
            bn_free(&x.u);
            int rc = state_put(a, &r);
            bn_free(&r.u);
            return rc ? too_large(err) : 0;
        }
        a->simple += d;
        double prev = a->sum, tmp = d - a->comp, rounded = a->sum + tmp;
        a->comp = (rounded - a->sum) - tmp;
        a->sum = rounded;
        if (a->kind == CQLAGG_AVG && isinf(a->sum) && !isinf(d)) {
            a->overflow = 1;
            dec p, x, r;
            if (dec_from_double(&p, prev) || dec_from_double(&x, d) || dec_add(&r, &p, &x, 0)) {
                bn_free(&p.u);
                bn_free(&x.u);
                return too_large(err);
            }
            bn_free(&p.u);
            bn_free(&x.u);
            int rc = state_put(a, &r);
            bn_free(&r.u);
            return rc ? too_large(err) : 0;
        }
        return 0;
    }
    case CQL_TYPE_VARINT:
    case CQL_TYPE_DECIMAL: {
        dec s, x, r;
        memset(&r, 0, sizeof r);
        int rc;
        if (id == CQL_TYPE_VARINT) {
            buf t;
            buf_init(&t, 0);
            memset(&x, 0, sizeof x);
            rc = cql_varint_to_text(v, (size_t)len, &t) || bn_from_text(&x.u, t.data, t.len);
            buf_free(&t);
        } else {
            rc = dec_from_wire(&x, v, (size_t)len);
        }
        rc = rc || state_get(a, &s);
        if (!rc && a->kind == CQLAGG_AVG && id == CQL_TYPE_DECIMAL) {
            /* avg = avg + (value - avg) / count, the quotient rounded half-even at the
             * difference's scale */
            dec s2, diff;
            memset(&s2, 0, sizeof s2);
            rc = state_get(a, &s2) || dec_add(&diff, &x, &s2, 1);
            bn_free(&s2.u);
            if (!rc) {
                bn_div(&diff.u, (uint64_t)a->count, 1);
                rc = dec_add(&r, &s, &diff, 0);
                bn_free(&diff.u);
            }
        } else if (!rc) {
            rc = dec_add(&r, &s, &x, 0);
        }
        if (!rc) rc = state_put(a, &r);
        bn_free(&s.u);
        bn_free(&x.u);
        bn_free(&r.u);
        return rc ? too_large(err) : 0;
    }
    }
    return fail(err, CQL_ERR_INVALID, "Cannot aggregate values of this type");
}

static int put_int(buf *out, uint16_t id, int64_t v)
{
    uint8_t b[8];
    switch (id) {
    case CQL_TYPE_TINYINT:
        return buf_putc(out, (uint8_t)v);
    case CQL_TYPE_SMALLINT:
        cql_smallint_encode((int16_t)v, b);
        return buf_append(out, b, 2);
    case CQL_TYPE_INT:
        cql_int_encode((int32_t)v, b);
        return buf_append(out, b, 4);
    default:
        cql_bigint_encode(v, b);
        return buf_append(out, b, 8);
    }
}

static int put_double(buf *out, uint16_t id, double d)
{
    uint8_t b[8];
    if (id == CQL_TYPE_FLOAT) {
        cql_float_encode((float)d, b);
        return buf_append(out, b, 4);
    }
    cql_double_encode(d, b);
    return buf_append(out, b, 8);
}

int cqlagg_result(cqlagg *a, buf *out, cql_parse_error *err)
{
    size_t start = out->len;
    int rc = 0;
    switch (a->kind) {
    case CQLAGG_COUNT_ROWS:
    case CQLAGG_COUNT:
        rc = put_int(out, CQL_TYPE_BIGINT, a->count);
        break;
    case CQLAGG_MIN:
    case CQLAGG_MAX:
        if (!a->have) return CQLVAL_NULL;
        rc = buf_append(out, a->big.data, a->big.len);
        break;
    case CQLAGG_SUM:
    case CQLAGG_AVG: {
        uint16_t id = a->arg->wire.id;
        int avg = a->kind == CQLAGG_AVG;
        switch (id) {
        case CQL_TYPE_TINYINT:
        case CQL_TYPE_SMALLINT:
        case CQL_TYPE_INT:
        case CQL_TYPE_BIGINT:
        case CQL_TYPE_COUNTER: {
            /* SUM: Java arithmetic in the type's width wraps; AVG: the exact sum divided,
             * truncated, then narrowed */
            __int128 v = avg ? (a->count ? a->isum / a->count : 0) : a->isum;
            rc = put_int(out, id, (int64_t)(uint64_t)(unsigned __int128)v);
            break;
        }
        case CQL_TYPE_FLOAT:
        case CQL_TYPE_DOUBLE: {
            double r;
            if (avg && a->count == 0) {
                r = 0;
            } else if (avg && a->overflow) {
                dec s;
                if (state_get(a, &s)) return too_large(err);
                bn_div(&s.u, (uint64_t)a->count, 1);
                buf w, t;
                buf_init(&w, 0);
                buf_init(&t, 0);
                int bad =
                    dec_to_wire(&s, &w) || cql_decimal_to_text((const uint8_t *)w.data, w.len, &t);
                r = bad ? NAN : strtod(t.data, NULL);
                buf_free(&w);
                buf_free(&t);
                bn_free(&s.u);
                if (bad) return too_large(err);
            } else {
                double tmp = a->sum + a->comp;
                r = isnan(tmp) && isinf(a->simple) ? a->simple : tmp;
                if (avg) r /= (double)a->count;
            }
            rc = put_double(out, id, r);
            break;
        }
        case CQL_TYPE_VARINT:
        case CQL_TYPE_DECIMAL: {
            dec s;
            if (state_get(a, &s)) return too_large(err);
            if (id == CQL_TYPE_VARINT) {
                if (avg && a->count) bn_div(&s.u, (uint64_t)a->count, 0);
                buf t;
                buf_init(&t, 0);
                rc = bn_to_text(&s.u, &t) || cql_varint_from_text(t.data, t.len, out);
                buf_free(&t);
            } else {
                rc = dec_to_wire(&s, out);
            }
            bn_free(&s.u);
            break;
        }
        }
        break;
    }
    }
    if (rc) {
        out->len = start;
        too_large(err);
        return CQLVAL_ERROR;
    }
    return CQLVAL_OK;
}

int cqlagg_column_name(cqlagg_kind kind, const char *column, buf *out)
{
    if (kind == CQLAGG_COUNT_ROWS) return buf_puts(out, "count");
    return buf_printf(out, "system.%s(%s)", kind_name(kind), column);
}
