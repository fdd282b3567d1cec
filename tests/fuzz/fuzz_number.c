/* fuzz_number.c — libFuzzer harness for DynamoDB numbers (src/model/number.h).
 *
 * The input is number text, optionally "a<NUL>b" for two operands. num_parse must never
 * crash; what it accepts must format to text that parses back to the same value, and
 * must survive the key encoding round trip with order preserved. Raw input is also fed
 * to num_key_decode, whose output must be a normalised qr_num. Not a test of DynamoDB's
 * exact messages: those are in tests/unit/model/test_number.c and tests/number/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/number.h"

#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "fuzz_number: check failed at line %d: %s\n", __LINE__, #c); \
            abort();                                                              \
        }                                                                         \
    } while (0)

static int same(const qr_num *a, const qr_num *b)
{
    return a->sign == b->sign && a->ndigits == b->ndigits && a->exp == b->exp &&
           memcmp(a->d, b->d, a->ndigits) == 0;
}

static void check_normal(const qr_num *n)
{
    CHECK(n->ndigits <= NUM_MAX_DIGITS);
    if (n->sign == 0) {
        CHECK(n->ndigits == 0 && n->exp == 0);
        return;
    }
    CHECK(n->sign == 1 || n->sign == -1);
    CHECK(n->ndigits > 0);
    CHECK(n->d[0] != 0 && n->d[n->ndigits - 1] != 0);
    for (int i = 0; i < n->ndigits; i++) CHECK(n->d[i] <= 9);
}

/* format → parse gives the same value; encode → decode gives the same value. */
static void round_trip(const qr_num *n, buf *enc, int desc)
{
    check_normal(n);
    char text[NUM_FMT_MAX];
    size_t len = num_format(n, text);
    CHECK(len > 0 && len < NUM_FMT_MAX && text[len] == '\0' && strlen(text) == len);
    qr_num back;
    qr_err err;
    err_init(&err);
    if (num_parse(text, len, &back, &err) != 0) {
        fprintf(stderr, "fuzz_number: formatted \"%s\" does not reparse: %s\n", text, err.msg);
        abort();
    }
    CHECK(same(n, &back) && num_cmp(n, &back) == 0);

    buf_reset(enc);
    CHECK(num_key_encode(n, desc, enc) == 0);
    qr_num dec;
    size_t used = num_key_decode((const uint8_t *)enc->data, enc->len, desc, &dec);
    CHECK(used == enc->len);
    CHECK(same(n, &dec));
}

static int sgn(int x) { return (x > 0) - (x < 0); }

static int enc_cmp(const buf *a, const buf *b)
{
    size_t m = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->data, b->data, m);
    if (c) return sgn(c);
    return (a->len > b->len) - (a->len < b->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    buf ea, eb;
    buf_init(&ea, 1024);
    buf_init(&eb, 1024);

    /* Raw bytes as a key encoding, both directions. */
    for (int desc = 0; desc < 2; desc++) {
        qr_num raw;
        size_t used = num_key_decode(data, size, desc, &raw);
        CHECK(used <= size);
        if (used) check_normal(&raw);
    }

    /* The text, split at the first NUL into two operands. */
    const char *s = (const char *)data;
    const char *nul = memchr(s, '\0', size);
    size_t la = nul ? (size_t)(nul - s) : size;
    /* A copy of exactly la bytes, so reading past the given length is caught. */
    char *ta = malloc(la ? la : 1);
    memcpy(ta, s, la);
    qr_num a, b;
    qr_err err;
    err_init(&err);
    int oka = num_parse(ta, la, &a, &err) == 0;
    CHECK(oka || err.type != NULL);
    free(ta);
    if (oka) {
        round_trip(&a, &ea, 0);
        round_trip(&a, &ea, 1);
    }
    if (nul) {
        size_t lb = size - la - 1;
        char *tb = malloc(lb ? lb : 1);
        memcpy(tb, nul + 1, lb);
        err_init(&err);
        int okb = num_parse(tb, lb, &b, &err) == 0;
        free(tb);
        if (oka && okb) {
            round_trip(&b, &eb, 0);
            int c = num_cmp(&a, &b);
            CHECK(c == -num_cmp(&b, &a));
            CHECK((c == 0) == same(&a, &b));
            buf_reset(&ea);
            buf_reset(&eb);
            num_key_encode(&a, 0, &ea);
            num_key_encode(&b, 0, &eb);
            CHECK(enc_cmp(&ea, &eb) == sgn(c));
            buf_reset(&ea);
            buf_reset(&eb);
            num_key_encode(&a, 1, &ea);
            num_key_encode(&b, 1, &eb);
            CHECK(enc_cmp(&ea, &eb) == -sgn(c));

            qr_num sum, diff, back;
            err_init(&err);
            if (num_add(&a, &b, &sum, &err) == 0) {
                check_normal(&sum);
                /* Exact arithmetic: (a + b) - b is a, which is representable. */
                err_init(&err);
                if (num_sub(&sum, &b, &back, &err) != 0) {
                    fprintf(stderr, "fuzz_number: (a+b)-b failed: %s\n", err.msg);
                    abort();
                }
                CHECK(same(&back, &a));
                round_trip(&sum, &ea, 0);
            }
            err_init(&err);
            if (num_sub(&a, &b, &diff, &err) == 0) {
                check_normal(&diff);
                CHECK(sgn(diff.sign) == c);
                round_trip(&diff, &ea, 0);
            }
            CHECK(num_size(&a) >= 1);
        }
    }
    buf_free(&ea);
    buf_free(&eb);
    return 0;
}
