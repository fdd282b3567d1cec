/* number.h — DynamoDB's N type: exact decimals of up to 38 significant digits, from 1E-130
 * to 9.9999999999999999999999999999999999999E+125 as DynamoDB documents. No binary floating
 * point is used: parsing, printing, comparison and arithmetic are exact. This module knows
 * nothing of JSON or storage. */
#ifndef QR_NUMBER_H
#define QR_NUMBER_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

#define NUM_MAX_DIGITS 38
/* Longest text num_format can produce, with its NUL. */
#define NUM_FMT_MAX 192

/* A qr_num is sign × 0.d[0]d[1]…d[ndigits-1] × 10^exp, with d[0] != 0 and no trailing zero
 * digits (so every value has exactly one representation and equality is memcmp of the used
 * fields); zero has sign 0, ndigits 0, exp 0. */
typedef struct qr_num {
    int8_t sign;               /* -1, 0 or +1 */
    uint8_t ndigits;           /* 0..38 significant digits in d */
    int16_t exp;               /* decimal exponent, see above */
    uint8_t d[NUM_MAX_DIGITS]; /* digit values 0..9 (not ASCII) */
} qr_num;

/* Parses DynamoDB number text (optional sign, digits, optional fraction, optional
 * exponent; leading and trailing zeros allowed and dropped). Fails with a
 * ValidationException naming the problem as DynamoDB does: not a number, more than 38
 * significant digits, magnitude over the maximum or under the minimum. */
int num_parse(const char *s, size_t len, qr_num *out, qr_err *err);

/* Writes the normalised text DynamoDB returns for n into out (NUM_FMT_MAX bytes) and
 * returns its length. */
size_t num_format(const qr_num *n, char *out);

/* -1, 0 or +1 as a is less than, equal to or greater than b. */
int num_cmp(const qr_num *a, const qr_num *b);

/* out = a + b, out = a - b exactly. Fail with a ValidationException if the result needs
 * more than 38 significant digits or leaves the magnitude range (DynamoDB's messages). */
int num_add(const qr_num *a, const qr_num *b, qr_num *out, qr_err *err);
int num_sub(const qr_num *a, const qr_num *b, qr_num *out, qr_err *err);

/* Bytes DynamoDB bills for a number (for item size), as measured against DynamoDB:
 * 1 + ceil(integer significant digits / 2) + ceil(fraction significant digits / 2),
 * + 1 if negative; zero costs 1 (see number.c). */
size_t num_size(const qr_num *n);

/* Appends an order-preserving encoding of n: for any a, b, memcmp order of the
 * encodings equals num_cmp(a, b). The encoding is self-delimiting (a decoder can find
 * its end) so it can be followed by further key components. With desc set, every byte
 * is complemented so the order is reversed. */
int num_key_encode(const qr_num *n, int desc, buf *out);

/* Reads one encoding written by num_key_encode from p (at most len bytes); returns the
 * bytes consumed, or 0 if the bytes are not a valid encoding. */
size_t num_key_decode(const uint8_t *p, size_t len, int desc, qr_num *out);

#endif
