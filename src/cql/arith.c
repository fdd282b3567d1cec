/* arith.c — Cassandra's arithmetic operators (see arith.h): the overload table, the
 * resolution among its entries, and the computations. Fixed-width integers wrap and divide
 * with truncation as Java's do; float and double follow IEEE (a division by zero is an
 * infinity); varint and decimal are exact through GMP, a decimal division keeping at
 * least 32 digits after the point (HALF_UP, trailing zeros stripped) as Cassandra's
 * DecimalType does; a timestamp or date moves by a duration's months on the UTC calendar
 * (the day clamped to the month's last), then its days and time. */
#include "cql/arith.h"

#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"

/* ---- the overloads ---- */

static const uint16_t numeric[] = {CQL_TYPE_TINYINT, CQL_TYPE_SMALLINT, CQL_TYPE_INT,
                                   CQL_TYPE_BIGINT,  CQL_TYPE_FLOAT,    CQL_TYPE_DOUBLE,
                                   CQL_TYPE_DECIMAL, CQL_TYPE_VARINT,   CQL_TYPE_COUNTER};
#define NNUMERIC (sizeof numeric / sizeof numeric[0])

static int is_float(uint16_t t)
{
    return t == CQL_TYPE_FLOAT || t == CQL_TYPE_DOUBLE || t == CQL_TYPE_DECIMAL;
}

/* The width Cassandra ranks a numeric type by (unbounded for varint and decimal). */
static int width(uint16_t t)
{
    switch (t) {
    case CQL_TYPE_TINYINT:
        return 1;
    case CQL_TYPE_SMALLINT:
        return 2;
    case CQL_TYPE_INT:
    case CQL_TYPE_FLOAT:
        return 4;
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_DOUBLE:
    case CQL_TYPE_COUNTER:
        return 8;
    default:
        return 16;
    }
}

/* The result type of a number op another: the wider width, floating when either is. */
static uint16_t number_result(uint16_t l, uint16_t r)
{
    int w = width(l) > width(r) ? width(l) : width(r);
    if (is_float(l) || is_float(r))
        return w <= 4 ? CQL_TYPE_FLOAT : w == 8 ? CQL_TYPE_DOUBLE : CQL_TYPE_DECIMAL;
    return w == 1   ? CQL_TYPE_TINYINT
           : w == 2 ? CQL_TYPE_SMALLINT
           : w == 4 ? CQL_TYPE_INT
           : w == 8 ? CQL_TYPE_BIGINT
                    : CQL_TYPE_VARINT;
}

/* The k-th overload of op (0 when k is past the last). */
static int overload(char op, size_t k, cqlarith_op *o)
{
    o->op = op;
    if (op == 'n') {
        if (k >= NNUMERIC) return 0;
        o->left = numeric[k];
        o->right = 0;
        o->ret = numeric[k] == CQL_TYPE_COUNTER ? CQL_TYPE_BIGINT : numeric[k];
        return 1;
    }
    if (k < NNUMERIC * NNUMERIC) {
        o->left = numeric[k / NNUMERIC];
        o->right = numeric[k % NNUMERIC];
        o->ret = number_result(o->left, o->right);
        return 1;
    }
    k -= NNUMERIC * NNUMERIC;
    if ((op != '+' && op != '-') || k >= 2) return 0;
    o->left = k == 0 ? CQL_TYPE_TIMESTAMP : CQL_TYPE_DATE;
    o->right = CQL_TYPE_DURATION;
    o->ret = o->left;
    return 1;
}

/* Whether a value of type from may be assigned where type to is expected. */
static int assignable_to(uint16_t to, uint16_t from)
{
    if (to == from || to == CQL_TYPE_BLOB) return 1;
    if (to == CQL_TYPE_VARINT)
        return from == CQL_TYPE_TINYINT || from == CQL_TYPE_SMALLINT || from == CQL_TYPE_INT ||
               from == CQL_TYPE_BIGINT;
    return (to == CQL_TYPE_TIMESTAMP && from == CQL_TYPE_BIGINT) ||
           (to == CQL_TYPE_BIGINT && from == CQL_TYPE_TIMESTAMP);
}

const char *cqlarith_symbol(char op)
{
    switch (op) {
    case '+':
        return "+";
    case '*':
        return "*";
    case '/':
        return "/";
    case '%':
        return "%";
    default:
        return "-";
    }
}

int cqlarith_resolve(char op, size_t n, cqlarith_fit fit, void *ctx, const int *markers,
                     const char *const *texts, uint16_t receiver, cqlarith_op *out,
                     cql_parse_error *err)
{
    cqlarith_op o, weak = {0};
    size_t nweak = 0;
    for (size_t k = 0; overload(op, k, &o); k++) {
        if (receiver && !assignable_to(receiver, o.ret)) continue;
        int m = fit(ctx, 0, o.left);
        if (m && n > 1) {
            int m1 = fit(ctx, 1, o.right);
            if (m1 < m) m = m1;
        }
        if (m == 2) {
            *out = o;
            return 0;
        }
        if (m == 1 && nweak++ == 0) weak = o;
    }
    if (nweak == 1) {
        *out = weak;
        return 0;
    }
    if (op == 'n')
        return cql_error_record(err, CQL_ERR_INVALID,
                                nweak ? "Ambiguous negation: use type casts to disambiguate"
                                      : "the '-' operation is not supported for %s",
                                texts[0]);
    if (nweak == 0)
        return cql_error_record(err, CQL_ERR_INVALID,
                                "the '%s' operation is not supported between %s and %s",
                                cqlarith_symbol(op), texts[0], texts[1]);
    if (receiver && !markers[0] && !markers[1]) {
        for (size_t k = 0; overload(op, k, &o); k++)
            if (o.left == receiver && o.right == receiver && fit(ctx, 0, o.left) &&
                fit(ctx, 1, o.right)) {
                *out = o;
                return 0;
            }
    }
    return cql_error_record(err, CQL_ERR_INVALID,
                            "Ambiguous '%s' operation with args %s and %s: use type hint to "
                            "disambiguate, example '(int) ?'",
                            cqlarith_symbol(op), texts[0], texts[1]);
}

/* ---- operands ---- */

static int64_t as_int64(uint16_t t, const uint8_t *p, size_t len)
{
    int8_t b;
    int16_t s;
    int32_t i;
    int64_t l = 0;
    switch (t) {
    case CQL_TYPE_TINYINT:
        return cql_tinyint_decode(p, len, &b) == 0 ? b : 0;
    case CQL_TYPE_SMALLINT:
        return cql_smallint_decode(p, len, &s) == 0 ? s : 0;
    case CQL_TYPE_INT:
        return cql_int_decode(p, len, &i) == 0 ? i : 0;
    default:
        cql_bigint_decode(p, len, &l);
        return l;
    }
}

static double as_double(uint16_t t, const uint8_t *p, size_t len)
{
    float f;
    double d;
    if (t == CQL_TYPE_FLOAT) return cql_float_decode(p, len, &f) == 0 ? f : 0;
    if (t == CQL_TYPE_DOUBLE) return cql_double_decode(p, len, &d) == 0 ? d : 0;
    return (double)as_int64(t, p, len);
}

/* A varint's value into z: 0, or -1 for a malformed one. */
static int varint_get(mpz_t z, const uint8_t *p, size_t len)
{
    buf text;
    buf_init(&text, 0);
    int rc = cql_varint_to_text(p, len, &text) == 0 && buf_append(&text, "", 1) == 0 &&
                     mpz_set_str(z, text.data, 10) == 0
                 ? 0
                 : -1;
    buf_free(&text);
    return rc;
}

static int varint_put(const mpz_t z, buf *out)
{
    char *s = mpz_get_str(NULL, 10, z);
    if (s == NULL) return -1;
    int rc = cql_varint_from_text(s, strlen(s), out);
    free(s);
    return rc;
}

/* A decimal: unscaled * 10^-scale. */
typedef struct dec {
    mpz_t u;
    long scale;
} dec;

/* Reads decimal text (digits, an optional point and exponent) into d. */
static int dec_from_text(dec *d, const char *s)
{
    char digits[512];
    size_t n = 0;
    long scale = 0;
    int point = 0;
    const char *p = s;
    if (*p == '-' || *p == '+') digits[n++] = *p++;
    for (; *p && *p != 'E' && *p != 'e'; p++) {
        if (*p == '.') {
            point = 1;
            continue;
        }
        if (*p < '0' || *p > '9' || n + 1 >= sizeof digits) return -1;
        digits[n++] = *p;
        scale += point;
    }
    if (*p) scale -= strtol(p + 1, NULL, 10);
    digits[n] = '\0';
    d->scale = scale;
    return mpz_set_str(d->u, digits[0] == '+' ? digits + 1 : digits, 10);
}

/* A number operand as Cassandra turns it into a BigDecimal: varints and decimals exactly,
 * the other numbers through their value as a Java double (1 becomes 1.0). 0, or an error
 * message for NaN and the infinities. */
static const char *dec_get(dec *d, uint16_t t, const uint8_t *p, size_t len)
{
    if (t == CQL_TYPE_DECIMAL) {
        int32_t scale;
        if (len < 4 || cql_int_decode(p, 4, &scale) != 0 || varint_get(d->u, p + 4, len - 4) != 0)
            return "a malformed decimal";
        d->scale = scale;
        return NULL;
    }
    if (t == CQL_TYPE_VARINT) {
        d->scale = 0;
        return varint_get(d->u, p, len) == 0 ? NULL : "a malformed varint";
    }
    double v = as_double(t, p, len);
    if (isnan(v)) return "A NaN cannot be converted into a decimal";
    if (isinf(v)) return "An infinite number cannot be converted into a decimal";
    uint8_t b[8];
    cql_double_encode(v, b);
    buf text;
    buf_init(&text, 0);
    int rc = cqlval_to_text(cqltype_native(CQL_TYPE_DOUBLE), b, 8, &text) == 0 &&
                     buf_append(&text, "", 1) == 0
                 ? dec_from_text(d, text.data)
                 : -1;
    buf_free(&text);
    return rc == 0 ? NULL : "a number that cannot be converted into a decimal";
}

static int dec_put(const dec *d, buf *out)
{
    uint8_t s[4];
    cql_int_encode((int32_t)d->scale, s);
    return buf_append(out, s, 4) || varint_put(d->u, out);
}

/* Multiplies z by 10^k (k >= 0). */
static void scale_up(mpz_t z, long k)
{
    mpz_t p;
    mpz_init(p);
    mpz_ui_pow_ui(p, 10, (unsigned long)k);
    mpz_mul(z, z, p);
    mpz_clear(p);
}

/* Brings a and b to the larger of their scales. */
static void dec_align(dec *a, dec *b)
{
    if (a->scale < b->scale) {
        scale_up(a->u, b->scale - a->scale);
        a->scale = b->scale;
    } else if (b->scale < a->scale) {
        scale_up(b->u, a->scale - b->scale);
        b->scale = a->scale;
    }
}

/* The number of decimal digits of |z| (1 for 0), as BigDecimal.precision counts them. */
static long digits_of(const mpz_t z)
{
    if (mpz_sgn(z) == 0) return 1;
    char *s = mpz_get_str(NULL, 10, z);
    long n = (long)strlen(s) - (s[0] == '-');
    free(s);
    return n;
}

static void strip_zeros(dec *d)
{
    if (mpz_sgn(d->u) == 0) {
        d->scale = 0;
        return;
    }
    while (mpz_divisible_ui_p(d->u, 10)) {
        mpz_divexact_ui(d->u, d->u, 10);
        d->scale--;
    }
}

/* l / r as DecimalType.divide: at a scale giving 32 significant digits, at least 32 and
 * the operands' own, at most 1000; rounded HALF_UP; trailing zeros stripped. */
static void dec_divide(dec *q, dec *l, dec *r)
{
    long first = (digits_of(l->u) - l->scale) - (digits_of(r->u) - r->scale);
    long scale = 32 - first;
    if (scale < l->scale) scale = l->scale;
    if (scale < r->scale) scale = r->scale;
    if (scale < 32) scale = 32;
    if (scale > 1000) scale = 1000;
    mpz_t num, den, rem;
    mpz_inits(num, den, rem, NULL);
    mpz_set(num, l->u);
    mpz_set(den, r->u);
    long e = scale - l->scale + r->scale;
    if (e >= 0)
        scale_up(num, e);
    else
        scale_up(den, -e);
    mpz_tdiv_qr(q->u, rem, num, den);
    mpz_mul_2exp(rem, rem, 1);
    if (mpz_cmpabs(rem, den) >= 0) { /* half or more: away from zero */
        if ((mpz_sgn(num) < 0) != (mpz_sgn(den) < 0))
            mpz_sub_ui(q->u, q->u, 1);
        else
            mpz_add_ui(q->u, q->u, 1);
    }
    q->scale = scale;
    strip_zeros(q);
    mpz_clears(num, den, rem, NULL);
}

/* l % r as BigDecimal.remainder: l - trunc(l / r) * r, at the scale Java gives it. */
static void dec_remainder(dec *m, dec *l, dec *r)
{
    long ls = l->scale, rs = r->scale, preferred = ls - rs;
    dec a = *l, b = *r; /* aligned copies share nothing with l and r */
    mpz_init_set(a.u, l->u);
    mpz_init_set(b.u, r->u);
    dec_align(&a, &b);
    mpz_t q;
    mpz_init(q);
    mpz_tdiv_qr(q, m->u, a.u, b.u);
    long qs = preferred;
    if (preferred < 0 && mpz_sgn(q) != 0) {
        long tz = 0;
        while (tz < -preferred && mpz_divisible_ui_p(q, 10)) {
            mpz_divexact_ui(q, q, 10);
            tz++;
        }
        qs = -tz;
    }
    long want = ls > qs + rs ? ls : qs + rs;
    m->scale = a.scale;
    if (want > m->scale) {
        scale_up(m->u, want - m->scale);
        m->scale = want;
    } else {
        while (m->scale > want && mpz_divisible_ui_p(m->u, 10)) {
            mpz_divexact_ui(m->u, m->u, 10);
            m->scale--;
        }
    }
    mpz_clears(q, a.u, b.u, NULL);
}

/* ---- dates ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* ms moved by months on the UTC calendar (the day kept, or the month's last), then by
 * days and ms, as java.util.Calendar adds them. */
static int64_t add_to_ms(int64_t ms, int64_t months, int64_t days, int64_t add_ms)
{
    if (months) {
        int64_t day = floor_div(ms, 86400000), in_day = ms - day * 86400000;
        int64_t y, m, d;
        civil_from_days(day, &y, &m, &d);
        int64_t total = y * 12 + (m - 1) + months;
        y = floor_div(total, 12);
        m = total - y * 12 + 1;
        int64_t last =
            days_from_civil(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1, 1) - days_from_civil(y, m, 1);
        if (d > last) d = last;
        ms = days_from_civil(y, m, d) * 86400000 + in_day;
    }
    return ms + days * 86400000 + add_ms;
}

/* ---- computation ---- */

const char *cqlarith_function(char op)
{
    switch (op) {
    case '+':
        return "_add";
    case '-':
        return "_substract";
    case '*':
        return "_multiply";
    case '/':
        return "_divide";
    case '%':
        return "_modulo";
    default:
        return "_negate";
    }
}

static int failed(cql_parse_error *err, const cqlarith_op *o, const char *why)
{
    const char *ln = cql_type_name(o->left);
    const char *args[2] = {ln, o->op == 'n' ? NULL : cql_type_name(o->right)};
    if (err && !err->code && !err->msg[0])
        cql_error_function(err, cqlarith_function(o->op), args, o->op == 'n' ? 1 : 2);
    if (o->op == 'n')
        return cql_error_record(err, CQL_ERR_FUNCTION_FAILURE, "the operation '-%s' failed: %s", ln,
                                why);
    return cql_error_record(err, CQL_ERR_FUNCTION_FAILURE, "the operation '%s %s %s' failed: %s",
                            ln, cqlarith_symbol(o->op), cql_type_name(o->right), why);
}

static int fixed_put(buf *out, uint16_t t, uint64_t v)
{
    uint8_t b[8];
    switch (t) {
    case CQL_TYPE_TINYINT:
        cql_tinyint_encode((int8_t)(uint8_t)v, b);
        return buf_append(out, b, 1);
    case CQL_TYPE_SMALLINT:
        cql_smallint_encode((int16_t)(uint16_t)v, b);
        return buf_append(out, b, 2);
    case CQL_TYPE_INT:
        cql_int_encode((int32_t)(uint32_t)v, b);
        return buf_append(out, b, 4);
    default:
        cql_bigint_encode((int64_t)v, b);
        return buf_append(out, b, 8);
    }
}

/* The minimum of a fixed-width type, whose division by -1 wraps to itself. */
static int64_t fixed_min(uint16_t t)
{
    return t == CQL_TYPE_TINYINT    ? INT8_MIN
           : t == CQL_TYPE_SMALLINT ? INT16_MIN
           : t == CQL_TYPE_INT      ? INT32_MIN
                                    : INT64_MIN;
}

static int fixed(const cqlarith_op *o, int64_t a, int64_t b, buf *out, cql_parse_error *err)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b, v;
    switch (o->op) {
    case '+':
        v = ua + ub;
        break;
    case '-':
        v = ua - ub;
        break;
    case '*':
        v = ua * ub;
        break;
    case 'n':
        v = 0 - ua;
        break;
    default:
        if (b == 0) return failed(err, o, "/ by zero");
        if (b == -1) /* MIN / -1 wraps; MIN % -1 is 0 */
            v = o->op == '/' ? (a == fixed_min(o->ret) ? ua : 0 - ua) : 0;
        else
            v = (uint64_t)(o->op == '/' ? a / b : a % b);
        break;
    }
    return fixed_put(out, o->ret, v) ? CQLVAL_ERROR : CQLVAL_OK;
}

static double floating(char op, double a, double b)
{
    switch (op) {
    case '+':
        return a + b;
    case '-':
        return a - b;
    case '*':
        return a * b;
    case '/':
        return a / b;
    case '%':
        return fmod(a, b);
    default:
        return -a;
    }
}

static int temporal(const cqlarith_op *o, const uint8_t *l, size_t ll, const uint8_t *r, size_t rl,
                    buf *out, cql_parse_error *err)
{
    int32_t months, days;
    int64_t nanos;
    char bad[64];
    if (cql_duration_decode(r, rl, &months, &days, &nanos, bad, sizeof bad) != 0)
        return failed(err, o, "a malformed duration");
    int date = o->left == CQL_TYPE_DATE;
    if (nanos % (date ? INT64_C(86400000000000) : 1000000) != 0) {
        buf d;
        buf_init(&d, 0);
        cqlval_to_text(cqltype_native(CQL_TYPE_DURATION), r, rl, &d);
        char why[160];
        snprintf(why, sizeof why, "The duration must have a %s precision. Was: %.*s",
                 date ? "day" : "millisecond", (int)d.len, d.data ? d.data : "");
        buf_free(&d);
        return failed(err, o, why);
    }
    int64_t sign = o->op == '-' ? -1 : 1, ms;
    if (date) {
        int64_t day;
        if (cql_date_decode(l, ll, &day) != 0) return failed(err, o, "a malformed date");
        ms = add_to_ms(day * 86400000, sign * months, sign * days, sign * (nanos / 1000000));
        int64_t moved = floor_div(ms, 86400000);
        if (moved < INT32_MIN || moved > INT32_MAX) return failed(err, o, "the date overflows");
        uint8_t b[4];
        cql_date_encode(moved, b);
        return buf_append(out, b, 4) ? CQLVAL_ERROR : CQLVAL_OK;
    }
    cql_bigint_decode(l, ll, &ms);
    ms = add_to_ms(ms, sign * months, sign * days, sign * (nanos / 1000000));
    uint8_t b[8];
    cql_bigint_encode(ms, b);
    return buf_append(out, b, 8) ? CQLVAL_ERROR : CQLVAL_OK;
}

static int exact_varint(const cqlarith_op *o, const uint8_t *l, size_t ll, const uint8_t *r,
                        size_t rl, buf *out, cql_parse_error *err)
{
    mpz_t a, b;
    mpz_inits(a, b, NULL);
    int rc = CQLVAL_OK;
    if (o->left == CQL_TYPE_VARINT ? varint_get(a, l, ll)
                                   : (mpz_set_si(a, as_int64(o->left, l, ll)), 0))
        rc = failed(err, o, "a malformed varint");
    if (rc == CQLVAL_OK && o->op != 'n' &&
        (o->right == CQL_TYPE_VARINT ? varint_get(b, r, rl)
                                     : (mpz_set_si(b, as_int64(o->right, r, rl)), 0)))
        rc = failed(err, o, "a malformed varint");
    if (rc == CQLVAL_OK && (o->op == '/' || o->op == '%') && mpz_sgn(b) == 0)
        rc = failed(err, o, "BigInteger divide by zero");
    if (rc == CQLVAL_OK) {
        switch (o->op) {
        case '+':
            mpz_add(a, a, b);
            break;
        case '-':
            mpz_sub(a, a, b);
            break;
        case '*':
            mpz_mul(a, a, b);
            break;
        case '/':
            mpz_tdiv_q(a, a, b);
            break;
        case '%':
            mpz_tdiv_r(a, a, b);
            break;
        default:
            mpz_neg(a, a);
            break;
        }
        if (varint_put(a, out)) rc = CQLVAL_ERROR;
    }
    mpz_clears(a, b, NULL);
    return rc;
}

static int exact_decimal(const cqlarith_op *o, const uint8_t *l, size_t ll, const uint8_t *r,
                         size_t rl, buf *out, cql_parse_error *err)
{
    dec a, b, res;
    mpz_inits(a.u, b.u, res.u, NULL);
    a.scale = b.scale = res.scale = 0;
    const char *why = dec_get(&a, o->left, l, ll);
    if (why == NULL && o->op != 'n') why = dec_get(&b, o->right, r, rl);
    if (why == NULL && (o->op == '/' || o->op == '%') && mpz_sgn(b.u) == 0)
        why = "BigInteger divide by zero";
    int rc = why ? failed(err, o, why) : CQLVAL_OK;
    if (rc == CQLVAL_OK) {
        switch (o->op) {
        case '+':
        case '-':
            dec_align(&a, &b);
            (o->op == '+' ? mpz_add : mpz_sub)(res.u, a.u, b.u);
            res.scale = a.scale;
            break;
        case '*':
            mpz_mul(res.u, a.u, b.u);
            res.scale = a.scale + b.scale;
            break;
        case '/':
            dec_divide(&res, &a, &b);
            break;
        case '%':
            dec_remainder(&res, &a, &b);
            break;
        default:
            mpz_neg(res.u, a.u);
            res.scale = a.scale;
            break;
        }
        if (res.scale < INT32_MIN || res.scale > INT32_MAX)
            rc = failed(err, o, "the result's scale overflows");
        else if (dec_put(&res, out))
            rc = CQLVAL_ERROR;
    }
    mpz_clears(a.u, b.u, res.u, NULL);
    return rc;
}

int cqlarith_apply(const cqlarith_op *o, const uint8_t *l, int32_t llen, const uint8_t *r,
                   int32_t rlen, buf *out, cql_parse_error *err)
{
    if (llen < 0 || (o->op != 'n' && rlen < 0)) return CQLVAL_NULL;
    size_t ll = (size_t)llen, rl = o->op == 'n' ? 0 : (size_t)rlen;
    size_t start = out->len;
    int rc;
    if (o->right == CQL_TYPE_DURATION) {
        rc = temporal(o, l, ll, r, rl, out, err);
    } else if (o->ret == CQL_TYPE_FLOAT) {
        uint8_t b[4];
        /* the operands as floats; a double result of floats rounds to the float result */
        float v = (float)floating(o->op, (float)as_double(o->left, l, ll),
                                  o->op == 'n' ? 0 : (float)as_double(o->right, r, rl));
        cql_float_encode(v, b);
        rc = buf_append(out, b, 4) ? CQLVAL_ERROR : CQLVAL_OK;
    } else if (o->ret == CQL_TYPE_DOUBLE) {
        uint8_t b[8];
        cql_double_encode(floating(o->op, as_double(o->left, l, ll),
                                   o->op == 'n' ? 0 : as_double(o->right, r, rl)),
                          b);
        rc = buf_append(out, b, 8) ? CQLVAL_ERROR : CQLVAL_OK;
    } else if (o->ret == CQL_TYPE_VARINT) {
        rc = exact_varint(o, l, ll, r, rl, out, err);
    } else if (o->ret == CQL_TYPE_DECIMAL) {
        rc = exact_decimal(o, l, ll, r, rl, out, err);
    } else {
        rc = fixed(o, as_int64(o->left, l, ll), o->op == 'n' ? 0 : as_int64(o->right, r, rl), out,
                   err);
    }
    if (rc == CQLVAL_ERROR) {
        out->len = start;
        if (err && !err->code) cql_error_record(err, CQL_ERR_SERVER, "out of memory");
    }
    return rc;
}
