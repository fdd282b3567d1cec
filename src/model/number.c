/* number.c — DynamoDB's N type: parsing, printing, ordering, exact add/subtract, billed
 * size and an order-preserving key encoding (see number.h).
 *
 * Everything works on decimal digit arrays; no binary floating point and no rounding.
 * This file does not know JSON, AttributeValues or storage; value.c and keycodec.c
 * build on it. */
#include "model/number.h"
#include "model/layer.h"

#include <string.h>

/* What DynamoDB does, as far as public evidence shows (AWS developer guide, dynalite's
 * validations, ScyllaDB Alternator's tests run against DynamoDB, and the
 * paritysuite/dynamodb-conformance captures of 2026):
 *
 * Accepted text: optional '+' or '-', digits with at most one '.', at least one digit,
 * then optionally 'e' or 'E', an optional sign and at least one digit. No spaces, no
 * "NaN"/"Infinity", no hex. "+3", ".123", "5.", "1e+5" and "0001.23" are numbers.
 *
 * Normalised output is the plain decimal form of the value with leading zeros, trailing
 * fraction zeros, '+' and the sign of zero dropped, and never scientific notation:
 *   "01.50" -> "1.5"      "1e3" -> "1000"       "-0" -> "0"        ".5" -> "0.5"
 *   "0.000001" -> "0.000001"      "1E-130" -> "0.", 129 zeros, "1"
 *   "9.9999999999999999999999999999999999999E+125" -> 38 nines then 88 zeros
 *
 * Limits, checked in dynalite's order: magnitude above 9.99…E+125 is an overflow and
 * below 1E-130 an underflow; only then more than 38 significant digits (leading and
 * trailing zeros are not significant). Zero is range-checked by the exponent it is
 * written with, as Java's BigDecimal sees it (exponent minus fraction digits): DynamoDB
 * refuses "0e126" and "0e-131" but takes "0.0e126". An exponent that does not fit in a
 * 64-bit integer cannot be converted at all; one that fits but is far out of range is an
 * overflow or underflow. That is the current layer's reading (model/layer.h); the older
 * layer reads like Java's BigDecimal, as described where num_parse does it.
 *
 * Arithmetic is exact. A sum that would need more than 38 significant digits is refused
 * with the overflow message: that is what DynamoDB answers for SET b = :x + :y with
 * 1e50 and 1 (noted in ScyllaDB's test_number.py), odd as it reads. */

#define MSG_NAN "The parameter cannot be converted to a numeric value"
#define MSG_DIGITS "Attempting to store more than 38 significant digits in a Number"
#define MSG_OVERFLOW                                                                               \
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
#define MSG_UNDERFLOW                                                                              \
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"

/* A nonzero value is 0.d[0]d[1]… × 10^exp, so 1E-130 has exp -129 and
 * 9.99…E+125 has exp 126. */
#define EXP_MIN (-129)
#define EXP_MAX 126

/* Written exponents are clamped to this before any arithmetic: far beyond the range,
 * far below overflow of int64_t when digit counts are added. */
#define EXP_CLAMP ((int64_t)1 << 60)

static void set_zero(qr_num *n)
{
    memset(n, 0, sizeof *n);
}

static int not_a_number(const char *s, size_t len, qr_err *err)
{
    /* The current layer keeps the colon and a space for an empty string; the older
     * one has nothing after the message. */
    if (len == 0)
        return err_validation(err, value_layer_now() == VALUE_LAYER_OLDER ? MSG_NAN : MSG_NAN ": ");
    return err_validation(err, MSG_NAN ": %.*s", (int)(len > 512 ? 512 : len), s);
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int num_parse(const char *s, size_t len, qr_num *out, qr_err *err)
{
    set_zero(out);
    if (s == NULL || len == 0) return not_a_number("", 0, err);

    size_t i = 0;
    int negative = 0;
    if (s[i] == '+' || s[i] == '-') negative = s[i++] == '-';

    /* Mantissa: collect significant digits, remembering where the first and last
     * nonzero digits sit among all mantissa digits. */
    int64_t int_digits = 0, frac_digits = 0, mant = 0;
    int64_t first_nz = -1, last_nz = -1;
    uint8_t dig[NUM_MAX_DIGITS];
    int seen_point = 0;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (seen_point) return not_a_number(s, len, err);
            seen_point = 1;
            continue;
        }
        if (!is_digit(c)) break;
        if (c != '0') {
            if (first_nz < 0) first_nz = mant;
            last_nz = mant;
        }
        if (first_nz >= 0 && mant - first_nz < NUM_MAX_DIGITS)
            dig[mant - first_nz] = (uint8_t)(c - '0');
        if (seen_point)
            frac_digits++;
        else
            int_digits++;
        mant++;
    }
    if (mant == 0) return not_a_number(s, len, err);

    /* Exponent: must fit a signed 64-bit integer, as DynamoDB reads it. */
    int64_t wexp = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < len && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        if (i >= len || !is_digit(s[i])) return not_a_number(s, len, err);
        uint64_t v = 0;
        uint64_t limit = eneg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (; i < len && is_digit(s[i]); i++) {
            uint64_t d = (uint64_t)(s[i] - '0');
            if (v > (limit - d) / 10) return not_a_number(s, len, err);
            v = v * 10 + d;
        }
        if (v > (uint64_t)EXP_CLAMP) v = (uint64_t)EXP_CLAMP;
        wexp = eneg ? -(int64_t)v : (int64_t)v;
    }
    if (i != len) return not_a_number(s, len, err);

    /* The older layer reads the text as Java's BigDecimal: an exponent or a scale that
     * does not fit 32 bits cannot be converted, and the magnitude is judged on
     * precision minus scale in 32-bit arithmetic, which wraps (1e2147483647 comes out as
     * an underflow). */
    if (value_layer_now() == VALUE_LAYER_OLDER) {
        if (wexp > INT32_MAX || wexp < INT32_MIN || frac_digits - wexp > INT32_MAX ||
            frac_digits - wexp < INT32_MIN)
            return not_a_number(s, len, err);
        if (first_nz >= 0) {
            int64_t wrapped = (int32_t)(uint32_t)(uint64_t)(int_digits - first_nz + wexp);
            if (wrapped > EXP_MAX) return err_validation(err, MSG_OVERFLOW);
            if (wrapped < EXP_MIN) return err_validation(err, MSG_UNDERFLOW);
        }
    }

    if (first_nz < 0) {
        /* Zero: BigDecimal's adjusted exponent of a zero is -scale. */
        int64_t adjusted = wexp - frac_digits;
        if (adjusted > EXP_MAX - 1) return err_validation(err, MSG_OVERFLOW);
        if (adjusted < EXP_MIN - 1) return err_validation(err, MSG_UNDERFLOW);
        return 0;
    }

    int64_t exp = int_digits - first_nz + wexp;
    if (exp > EXP_MAX) return err_validation(err, MSG_OVERFLOW);
    if (exp < EXP_MIN) return err_validation(err, MSG_UNDERFLOW);
    int64_t nd = last_nz - first_nz + 1;
    if (nd > NUM_MAX_DIGITS) return err_validation(err, MSG_DIGITS);

    out->sign = negative ? -1 : 1;
    out->ndigits = (uint8_t)nd;
    out->exp = (int16_t)exp;
    memcpy(out->d, dig, (size_t)nd);
    return 0;
}

size_t num_format(const qr_num *n, char *out)
{
    size_t k = 0;
    if (n->sign == 0 || n->ndigits == 0) {
        out[0] = '0';
        out[1] = '\0';
        return 1;
    }
    if (n->sign < 0) out[k++] = '-';
    int e = n->exp, nd = n->ndigits;
    if (e <= 0) {
        out[k++] = '0';
        out[k++] = '.';
        for (int z = 0; z < -e; z++)
            out[k++] = '0';
        for (int j = 0; j < nd; j++)
            out[k++] = (char)('0' + n->d[j]);
    } else if (e >= nd) {
        for (int j = 0; j < nd; j++)
            out[k++] = (char)('0' + n->d[j]);
        for (int z = nd; z < e; z++)
            out[k++] = '0';
    } else {
        for (int j = 0; j < e; j++)
            out[k++] = (char)('0' + n->d[j]);
        out[k++] = '.';
        for (int j = e; j < nd; j++)
            out[k++] = (char)('0' + n->d[j]);
    }
    out[k] = '\0';
    return k;
}

/* Compares magnitudes of two nonzero numbers. */
static int cmp_abs(const qr_num *a, const qr_num *b)
{
    if (a->exp != b->exp) return a->exp < b->exp ? -1 : 1;
    int m = a->ndigits < b->ndigits ? a->ndigits : b->ndigits;
    for (int j = 0; j < m; j++)
        if (a->d[j] != b->d[j]) return a->d[j] < b->d[j] ? -1 : 1;
    if (a->ndigits != b->ndigits) return a->ndigits < b->ndigits ? -1 : 1;
    return 0;
}

int num_cmp(const qr_num *a, const qr_num *b)
{
    if (a->sign != b->sign) return a->sign < b->sign ? -1 : 1;
    if (a->sign == 0) return 0;
    int c = cmp_abs(a, b);
    return a->sign > 0 ? c : -c;
}

/* Exact sum of two in-range numbers spans at most EXP_MAX - (EXP_MIN - 38) + 1 digit
 * places, plus one for a carry. */
#define SPAN (EXP_MAX - (EXP_MIN - NUM_MAX_DIGITS) + 2)

/* Writes |n| into acc, where acc[p] holds the digit of place 10^(top - p). */
static void place_digits(const qr_num *n, int top, uint8_t *acc)
{
    for (int j = 0; j < n->ndigits; j++)
        acc[top - (n->exp - 1 - j)] = n->d[j];
}

/* Builds out from sign and the digit places in acc (acc[p] is the place
 * 10^(top - p)), checking DynamoDB's limits on the result. */
static int from_places(int sign, const uint8_t *acc, int top, int nplaces, qr_num *out, qr_err *err)
{
    int first = 0, last = nplaces - 1;
    while (first < nplaces && acc[first] == 0)
        first++;
    if (first == nplaces) {
        set_zero(out);
        return 0;
    }
    while (acc[last] == 0)
        last--;
    int exp = top - first + 1;
    if (exp > EXP_MAX) return err_validation(err, MSG_OVERFLOW);
    if (exp < EXP_MIN) return err_validation(err, MSG_UNDERFLOW);
    /* DynamoDB refuses an inexact result with its overflow message. */
    if (last - first + 1 > NUM_MAX_DIGITS) return err_validation(err, MSG_OVERFLOW);
    set_zero(out);
    out->sign = (int8_t)sign;
    out->exp = (int16_t)exp;
    out->ndigits = (uint8_t)(last - first + 1);
    memcpy(out->d, acc + first, out->ndigits);
    return 0;
}

/* out = a + sb·b where sb is +1 or -1. */
static int add_signed(const qr_num *a, const qr_num *b, int sb, qr_num *out, qr_err *err)
{
    int bsign = b->sign * sb;
    if (b->sign == 0) {
        *out = *a;
        return 0;
    }
    if (a->sign == 0) {
        *out = *b;
        out->sign = (int8_t)bsign;
        return 0;
    }
    /* Highest place is one above the larger exponent (room for a carry); lowest is
     * the lowest digit of either operand. */
    int hi = (a->exp > b->exp ? a->exp : b->exp);
    int lo_a = a->exp - a->ndigits, lo_b = b->exp - b->ndigits;
    int lo = lo_a < lo_b ? lo_a : lo_b;
    int nplaces = hi - lo + 1;
    uint8_t x[SPAN], y[SPAN], r[SPAN];
    memset(x, 0, sizeof x);
    memset(y, 0, sizeof y);
    place_digits(a, hi, x);
    place_digits(b, hi, y);

    if (a->sign == bsign) {
        int carry = 0;
        for (int p = nplaces - 1; p >= 0; p--) {
            int v = x[p] + y[p] + carry;
            r[p] = (uint8_t)(v % 10);
            carry = v / 10;
        }
        return from_places(a->sign, r, hi, nplaces, out, err);
    }
    /* Opposite signs: subtract the smaller magnitude from the larger. */
    int c = cmp_abs(a, b);
    if (c == 0) {
        set_zero(out);
        return 0;
    }
    const uint8_t *big = c > 0 ? x : y, *small = c > 0 ? y : x;
    int sign = c > 0 ? a->sign : bsign;
    int borrow = 0;
    for (int p = nplaces - 1; p >= 0; p--) {
        int v = big[p] - small[p] - borrow;
        borrow = v < 0;
        r[p] = (uint8_t)(v + (borrow ? 10 : 0));
    }
    return from_places(sign, r, hi, nplaces, out, err);
}

int num_add(const qr_num *a, const qr_num *b, qr_num *out, qr_err *err)
{
    return add_signed(a, b, 1, out, err);
}

int num_sub(const qr_num *a, const qr_num *b, qr_num *out, qr_err *err)
{
    return add_signed(a, b, -1, out, err);
}

/* DynamoDB's billed size, as measured byte by byte at the 400 KB item limit
 * (paritysuite/dynamodb-conformance, tests/tier3/limits/numberByteSize.test.ts, and
 * nubo-db/dynoxide#195): 1 byte, plus ceil(integer significant digits / 2), plus
 * ceil(fraction significant digits / 2), plus 1 if negative; zero costs 1. The
 * developer guide's "1 byte per two significant digits plus 1" is the same for
 * integers and pure fractions but undercounts digits straddling the decimal point
 * ("1.5" costs 3, "15" costs 2) and the sign of negatives. */
size_t num_size(const qr_num *n)
{
    if (n->sign == 0 || n->ndigits == 0) return 1;
    int e = n->exp, nd = n->ndigits;
    size_t size = 1;
    if (e <= 0 || e >= nd)
        size += (size_t)(nd + 1) / 2;
    else
        size += (size_t)(e + 1) / 2 + (size_t)(nd - e + 1) / 2;
    if (n->sign < 0) size++;
    return size;
}

/* Key encoding (ascending; desc complements every byte):
 *   zero      0x02
 *   positive  0x03, exp + 129 (one byte: exp runs -129..126), then the digits in pairs
 *             as bytes 1 + (10·d[2i] + d[2i+1]) (a lone last digit is paired with 0),
 *             then 0x00.
 *   negative  0x01, 126 - exp, then pair bytes 254 - (10·d[2i] + d[2i+1]), then 0xFF.
 * Canonical digits have no trailing zero, so the pairs are unique. A terminator sorts
 * below (positive) or above (negative) every pair byte, so a shorter digit string sorts
 * as the smaller magnitude, and no encoding is a prefix of another. */
#define TAG_NEG 0x01
#define TAG_ZERO 0x02
#define TAG_POS 0x03
#define KEY_MAX (2 + NUM_MAX_DIGITS / 2 + 1)

int num_key_encode(const qr_num *n, int desc, buf *out)
{
    uint8_t k[KEY_MAX];
    size_t len = 0;
    if (n->sign == 0 || n->ndigits == 0) {
        k[len++] = TAG_ZERO;
    } else {
        int neg = n->sign < 0;
        k[len++] = neg ? TAG_NEG : TAG_POS;
        k[len++] = (uint8_t)(neg ? EXP_MAX - n->exp : n->exp - EXP_MIN);
        for (int j = 0; j < n->ndigits; j += 2) {
            int pair = 10 * n->d[j] + (j + 1 < n->ndigits ? n->d[j + 1] : 0);
            k[len++] = (uint8_t)(neg ? 254 - pair : 1 + pair);
        }
        k[len++] = neg ? 0xFF : 0x00;
    }
    if (desc)
        for (size_t j = 0; j < len; j++)
            k[j] = (uint8_t)~k[j];
    return buf_append(out, k, len);
}

size_t num_key_decode(const uint8_t *p, size_t len, int desc, qr_num *out)
{
    uint8_t flip = desc ? 0xFF : 0x00;
    set_zero(out);
    if (len < 1) return 0;
    uint8_t tag = p[0] ^ flip;
    if (tag == TAG_ZERO) return 1;
    if ((tag != TAG_POS && tag != TAG_NEG) || len < 2) return 0;
    int neg = tag == TAG_NEG;
    uint8_t eb = p[1] ^ flip;
    int exp = neg ? EXP_MAX - eb : eb + EXP_MIN;
    size_t i = 2;
    int nd = 0;
    for (;; i++) {
        if (i >= len) return 0;
        uint8_t b = p[i] ^ flip;
        if (b == (neg ? 0xFF : 0x00)) break;
        int pair = neg ? 254 - b : b - 1;
        if (pair < 0 || pair > 99 || nd + 2 > NUM_MAX_DIGITS) return 0;
        out->d[nd++] = (uint8_t)(pair / 10);
        out->d[nd++] = (uint8_t)(pair % 10);
    }
    if (nd == 0) return 0;
    if (out->d[nd - 1] == 0) nd--;
    /* Only canonical encodings decode: first digit nonzero, no trailing zero. */
    if (out->d[0] == 0 || out->d[nd - 1] == 0) {
        set_zero(out);
        return 0;
    }
    memset(out->d + nd, 0, (size_t)(NUM_MAX_DIGITS - nd));
    out->sign = neg ? -1 : 1;
    out->exp = (int16_t)exp;
    out->ndigits = (uint8_t)nd;
    return i + 1;
}
