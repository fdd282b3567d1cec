/* test_number.c — unit tests for number.c: parsing, DynamoDB's error messages,
 * normalised text, ordering, exact add/subtract, billed size and key encoding.
 * With no arguments it runs the focused cases below. With `--vectors FILE` it reads one
 * operation per line and prints one result per line, for
 * tests/number/test_number_vectors.py to check against Python's decimal module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/number.h"

#include "check.h"

#define MSG_NAN "The parameter cannot be converted to a numeric value"
#define MSG_DIGITS "Attempting to store more than 38 significant digits in a Number"
#define MSG_OVERFLOW                                                                               \
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
#define MSG_UNDERFLOW                                                                              \
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"

static qr_num parse_ok(const char *s)
{
    qr_num n;
    qr_err e;
    err_init(&e);
    if (num_parse(s, strlen(s), &n, &e)) {
        check_failures++;
        fprintf(stderr, "parse(%s) failed: %s\n", s, e.msg);
    }
    return n;
}

static char *repeat(char *dst, const char *prefix, char c, int count, const char *suffix)
{
    strcpy(dst, prefix);
    size_t k = strlen(dst);
    for (int i = 0; i < count; i++)
        dst[k++] = c;
    dst[k] = '\0';
    strcat(dst, suffix);
    return dst;
}

static void test_format(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"0", "0"},
        {"-0", "0"},
        {"+0", "0"},
        {"00", "0"},
        {"0.000", "0"},
        {"-0.0e5", "0"},
        {"0e125", "0"},
        {"0.0e126", "0"},
        {"0e-130", "0"},
        {"1", "1"},
        {"+3", "3"},
        {"01.50", "1.5"},
        {"0042.1200", "42.12"},
        {"1e3", "1000"},
        {"1E+3", "1000"},
        {"1.5e2", "150"},
        {"1.23e4", "12300"},
        {"1e-3", "0.001"},
        {"123e-2", "1.23"},
        {".5", "0.5"},
        {"-.5", "-0.5"},
        {"5.", "5"},
        {"0.000001", "0.000001"},
        {"-273.15", "-273.15"},
        {"100.000", "100"},
        {"1.10", "1.1"},
        {"-17e5", "-1700000"},
        {"1e+5", "100000"},
        {"0001.23", "1.23"},
        {"1e0000000000000000000000000002", "100"},
        {"3.1415926535897932384626433832795028841", "3.1415926535897932384626433832795028841"},
        {"110111111111111110000000000000000000000", "110111111111111110000000000000000000000"},
        {"1.0000000000000000000000000000000000000000000", "1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qr_num n = parse_ok(cases[i].in);
        char out[NUM_FMT_MAX];
        size_t len = num_format(&n, out);
        CHECK(strcmp(out, cases[i].out) == 0 && len == strlen(out), "format(%s) = %s, want %s",
              cases[i].in, out, cases[i].out);
    }

    char in[300], want[300], out[NUM_FMT_MAX];
    qr_num n = parse_ok("1E-130");
    num_format(&n, out);
    CHECK(strcmp(out, repeat(want, "0.", '0', 129, "1")) == 0, "1E-130 -> %s", out);
    n = parse_ok("-1E-130");
    num_format(&n, out);
    CHECK(strcmp(out, repeat(want, "-0.", '0', 129, "1")) == 0, "-1E-130 -> %s", out);
    n = parse_ok("9.9999999999999999999999999999999999999E+125");
    num_format(&n, out);
    CHECK(strcmp(out, repeat(want, "99999999999999999999999999999999999999", '0', 88, "")) == 0,
          "max -> %s", out);
    n = parse_ok("1e125");
    num_format(&n, out);
    CHECK(strcmp(out, repeat(want, "1", '0', 125, "")) == 0, "1e125 -> %s", out);
    /* The longest text: a negative 38-digit number just above the minimum. */
    n = parse_ok("-1.2345678901234567890123456789012345678E-93");
    size_t len = num_format(&n, out);
    CHECK(len < NUM_FMT_MAX && len == strlen(out), "long text %zu", len);
    repeat(in, "0.", '0', 200, "5");
    n = parse_ok(repeat(in, "0.", '0', 129, "5e0"));
    num_format(&n, out);
    CHECK(strcmp(out, repeat(want, "0.", '0', 129, "5")) == 0, "5e-130 -> %s", out);
}

static void expect_error(const char *s, size_t len, const char *msg)
{
    qr_num n;
    qr_err e;
    err_init(&e);
    int rc = num_parse(s, len, &n, &e);
    CHECK(rc == -1, "parse(%.*s) should fail", (int)len, s);
    CHECK(e.type && strcmp(e.type, QR_E_VALIDATION) == 0, "parse(%.*s) type %s", (int)len, s,
          e.type ? e.type : "(none)");
    CHECK(strcmp(e.msg, msg) == 0, "parse(%.*s): '%s', want '%s'", (int)len, s, e.msg, msg);
}

static void test_errors(void)
{
    static const char *bad[] = {"NaN",   "Infinity", "-Infinity", "-NaN", "dog",  "-dog",  " 1",
                                "1 ",    ".",        "-",         "+",    "e5",   "1e",    "1e+",
                                "1.2.3", "1+2",      "+-1",       "--1",  "0x10", "1_000", "1e5.5",
                                "1,5",   "١",        "1e-",       "+e2"};
    char msg[1200];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(msg, sizeof msg, MSG_NAN ": %s", bad[i]);
        expect_error(bad[i], strlen(bad[i]), msg);
    }
    expect_error("", 0, MSG_NAN ": "); /* the current layer keeps the colon */
    expect_error("1\0002", 3, MSG_NAN ": 1");
    expect_error("1e9223372036854775808", 21, MSG_NAN ": 1e9223372036854775808");
    expect_error("1e99999999999999999999", 22, MSG_NAN ": 1e99999999999999999999");

    expect_error("1e126", 5, MSG_OVERFLOW);
    expect_error("-1e126", 6, MSG_OVERFLOW);
    expect_error("11e125", 6, MSG_OVERFLOW);
    expect_error("1e99999999999", 13, MSG_OVERFLOW);
    expect_error("1e2147483648", 12, MSG_OVERFLOW);
    expect_error("1e9223372036854775807", 21, MSG_OVERFLOW);
    expect_error("0e126", 5, MSG_OVERFLOW);
    expect_error("1e-131", 6, MSG_UNDERFLOW);
    expect_error("-1e-131", 7, MSG_UNDERFLOW);
    expect_error("0.9e-130", 8, MSG_UNDERFLOW);
    expect_error("1e-99999999999", 14, MSG_UNDERFLOW);
    expect_error("1e-9223372036854775808", 22, MSG_UNDERFLOW);
    expect_error("0e-131", 6, MSG_UNDERFLOW);
    expect_error("0.0e-130", 8, MSG_UNDERFLOW);
    expect_error("123456789012345678901234567890123456789", 39, MSG_DIGITS);
    expect_error("-1.23456789012345678901234567890123456789", 41, MSG_DIGITS);
    expect_error("314159265358979323846264338327950288419e30", 42, MSG_DIGITS);
    /* Out of range and too precise: the range is reported, as dynalite does. */
    expect_error("3141592653589793238462643383279502884191e200", 44, MSG_OVERFLOW);

    /* The first error wins. */
    qr_err e;
    qr_num n;
    err_init(&e);
    num_parse("x", 1, &n, &e);
    num_parse("1e200", 5, &n, &e);
    CHECK(strcmp(e.msg, MSG_NAN ": x") == 0, "first error kept: %s", e.msg);

    /* Long garbage is quoted but bounded. */
    char big[5000];
    memset(big, 'z', sizeof big);
    err_init(&e);
    CHECK(num_parse(big, sizeof big, &n, &e) == -1 && strlen(e.msg) < QR_ERR_MSG_MAX,
          "long garbage");

    /* A very long run of zeros around one digit is still one significant digit. */
    char zeros[20000];
    zeros[0] = '0';
    zeros[1] = '.';
    memset(zeros + 2, '0', 10000);
    strcpy(zeros + 10002, "1e10050");
    n = parse_ok(zeros);
    char out[NUM_FMT_MAX];
    num_format(&n, out);
    char want[NUM_FMT_MAX];
    CHECK(strcmp(out, repeat(want, "1", '0', 49, "")) == 0, "zeros: %s", out);
}

static void test_limits(void)
{
    qr_num a = parse_ok("1E-130"), b = parse_ok("9.9999999999999999999999999999999999999E+125");
    CHECK(a.exp == -129 && a.ndigits == 1 && a.sign == 1, "1E-130 fields");
    CHECK(b.exp == 126 && b.ndigits == 38, "max fields");
    qr_num z = parse_ok("-0");
    CHECK(z.sign == 0 && z.ndigits == 0 && z.exp == 0, "zero fields");
    qr_num c = parse_ok("12345678901234567890123456789012345678e88");
    CHECK(c.exp == 126, "38 digits at the top");
}

static void test_cmp(void)
{
    static const char *ordered[] = {"-9.9999999999999999999999999999999999999E+125",
                                    "-1e125",
                                    "-100",
                                    "-10.5",
                                    "-10",
                                    "-9.99",
                                    "-1.0001",
                                    "-1",
                                    "-0.9999999999999999999999999999999999999",
                                    "-0.1",
                                    "-0.01",
                                    "-1E-130",
                                    "0",
                                    "1E-130",
                                    "2E-130",
                                    "0.00001",
                                    "0.1",
                                    "0.12",
                                    "0.1201",
                                    "0.123",
                                    "0.2",
                                    "1",
                                    "1.000000000000000000000000000000000001",
                                    "1.5",
                                    "9",
                                    "10",
                                    "10.01",
                                    "99",
                                    "100",
                                    "1e100",
                                    "9.9999999999999999999999999999999999999E+125"};
    size_t n = sizeof ordered / sizeof ordered[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            qr_num a = parse_ok(ordered[i]), b = parse_ok(ordered[j]);
            int want = i < j ? -1 : i > j ? 1 : 0;
            CHECK(num_cmp(&a, &b) == want, "cmp(%s, %s) = %d", ordered[i], ordered[j],
                  num_cmp(&a, &b));
            for (int desc = 0; desc <= 1; desc++) {
                buf ka, kb;
                buf_init(&ka, 0);
                buf_init(&kb, 0);
                CHECK(num_key_encode(&a, desc, &ka) == 0 && num_key_encode(&b, desc, &kb) == 0,
                      "encode");
                size_t m = ka.len < kb.len ? ka.len : kb.len;
                int c = memcmp(ka.data, kb.data, m);
                if (c == 0) c = ka.len < kb.len ? -1 : ka.len > kb.len ? 1 : 0;
                c = c < 0 ? -1 : c > 0;
                CHECK(c == (desc ? -want : want), "key order %s vs %s desc=%d", ordered[i],
                      ordered[j], desc);
                buf_free(&ka);
                buf_free(&kb);
            }
        }
    qr_num x = parse_ok("1000"), y = parse_ok("1e3");
    CHECK(num_cmp(&x, &y) == 0 && memcmp(&x, &y, sizeof x) == 0, "1000 == 1e3, one representation");
}

static void expect_sum(const char *a, const char *op, const char *b, const char *want)
{
    qr_num x = parse_ok(a), y = parse_ok(b), r;
    qr_err e;
    err_init(&e);
    int rc = op[0] == '+' ? num_add(&x, &y, &r, &e) : num_sub(&x, &y, &r, &e);
    if (strncmp(want, "ERR ", 4) == 0) {
        CHECK(rc == -1 && strcmp(e.msg, want + 4) == 0, "%s %s %s: rc %d '%s'", a, op, b, rc,
              e.msg);
        return;
    }
    char out[NUM_FMT_MAX];
    num_format(&r, out);
    CHECK(rc == 0 && strcmp(out, want) == 0, "%s %s %s = %s (%s), want %s", a, op, b, out, e.msg,
          want);
}

static void test_arith(void)
{
    expect_sum("1", "+", "10000000000000000000000", "10000000000000000000001");
    expect_sum("10000000000000000000000", "-", "1", "9999999999999999999999");
    expect_sum("9e125", "+", "9e124",
               "990000000000000000000000000000000000000000000000000000000000000"
               "000000000000000000000000000000000000000000000000000000000000000");
    expect_sum("9e125", "+", "9e125", "ERR " MSG_OVERFLOW);
    expect_sum("9e125", "-", "-9e125", "ERR " MSG_OVERFLOW);
    expect_sum("-9e125", "-", "9e125", "ERR " MSG_OVERFLOW);
    expect_sum("1e50", "+", "1", "ERR " MSG_OVERFLOW);
    expect_sum("1e50", "-", "1", "ERR " MSG_OVERFLOW);
    expect_sum("1", "+", "1e-50", "ERR " MSG_OVERFLOW);
    expect_sum("9.9999999999999999999999999999999999999E+125", "+", "1E+125", "ERR " MSG_OVERFLOW);
    expect_sum("1.0000000000000000000000000000000000001e-123", "-", "1e-123", "ERR " MSG_UNDERFLOW);
    char tiny[NUM_FMT_MAX];
    expect_sum("2E-130", "-", "1E-130", repeat(tiny, "0.", '0', 129, "1"));
    expect_sum("0.1", "+", "0.2", "0.3");
    expect_sum("0.1", "-", "0.1", "0");
    expect_sum("-0.1", "+", "0.1", "0");
    expect_sum("0", "-", "5", "-5");
    expect_sum("0", "+", "0", "0");
    expect_sum("-5", "-", "0", "-5");
    expect_sum("99999999999999999999999999999999999999", "+", "1",
               "100000000000000000000000000000000000000");
    expect_sum("-99999999999999999999999999999999999999", "-", "1",
               "-100000000000000000000000000000000000000");
    expect_sum("99999999999999999999999999999999999999", "+", "2", "ERR " MSG_OVERFLOW);
    expect_sum("1.5", "-", "2.25", "-0.75");
    expect_sum("-1.5", "-", "-2.25", "0.75");
    expect_sum("12345678901234567890123456789012345678", "-",
               "12345678901234567890123456789012345677", "1");
    expect_sum("1e125", "-", "1E-130", "ERR " MSG_OVERFLOW);

    /* The result may be the same object as an operand. */
    qr_num a = parse_ok("2"), b = parse_ok("3");
    qr_err e;
    err_init(&e);
    CHECK(num_add(&a, &b, &a, &e) == 0 && a.d[0] == 5 && a.ndigits == 1, "aliasing add");
    CHECK(num_sub(&a, &a, &a, &e) == 0 && a.sign == 0, "aliasing sub");
}

static void test_size(void)
{
    /* Measured against DynamoDB (paritysuite/dynamodb-conformance, src/item-size.ts). */
    static const struct {
        const char *in;
        size_t size;
    } cases[] = {{"0", 1},         {"1", 2},     {"12", 2},
                 {"123", 3},       {"1234", 3},  {"12345678901234567890123456789012345678", 20},
                 {"0042", 2},      {"100", 2},   {"1010", 3},
                 {"0.0000001", 2}, {"1E125", 2}, {"1E-100", 2},
                 {"1.5", 3},       {"15", 2},    {"1.2", 3},
                 {"1.200", 3},     {"1.234", 4}, {"3.14159", 5},
                 {"123456", 4},    {"100.5", 4}, {"0.15", 2},
                 {"-42", 3},       {"-0", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qr_num n = parse_ok(cases[i].in);
        CHECK(num_size(&n) == cases[i].size, "size(%s) = %zu, want %zu", cases[i].in, num_size(&n),
              cases[i].size);
    }
}

static void test_key_codec(void)
{
    static const char *values[] = {"0",
                                   "1",
                                   "-1",
                                   "0.5",
                                   "-0.5",
                                   "1E-130",
                                   "-1E-130",
                                   "12.5",
                                   "-12.5",
                                   "9.9999999999999999999999999999999999999E+125",
                                   "-9.9999999999999999999999999999999999999E+125",
                                   "1.2345678901234567890123456789012345678",
                                   "101",
                                   "1010"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        for (int desc = 0; desc <= 1; desc++) {
            qr_num n = parse_ok(values[i]), back;
            buf k;
            buf_init(&k, 0);
            CHECK(num_key_encode(&n, desc, &k) == 0, "encode %s", values[i]);
            buf_putc(&k, 0x42); /* a following component must not disturb decoding */
            size_t used = num_key_decode((const uint8_t *)k.data, k.len, desc, &back);
            CHECK(used == k.len - 1, "decode %s used %zu of %zu", values[i], used, k.len - 1);
            CHECK(memcmp(&n, &back, sizeof n) == 0, "round trip %s desc=%d", values[i], desc);
            /* Every truncation is rejected. */
            for (size_t cut = 0; cut + 1 < k.len; cut++)
                CHECK(num_key_decode((const uint8_t *)k.data, cut, desc, &back) == 0,
                      "truncated %s at %zu", values[i], cut);
            /* The other direction's decoder does not accept it as the same value. */
            size_t other = num_key_decode((const uint8_t *)k.data, k.len - 1, !desc, &back);
            CHECK(other == 0 || memcmp(&n, &back, sizeof n) != 0 || n.sign == 0,
                  "direction confusion %s", values[i]);
            buf_free(&k);
        }

    /* Non-canonical or malformed encodings decode to nothing. */
    static const uint8_t bad[][6] = {
        {0x00},                         /* unknown tag */
        {0x03, 0x81, 0x00},             /* no digits */
        {0x03, 0x81, 0x01, 0x00},       /* pair 00: leading zero */
        {0x03, 0x81, 0x0B, 0x01, 0x00}, /* trailing 00 pair */
        {0x03, 0x81, 0x66, 0x00},       /* pair byte 102 is not a pair */
        {0x01, 0x81, 0xFE, 0xFF},       /* negative with leading zero pair */
        {0x04},
    };
    static const size_t bad_len[] = {1, 3, 4, 5, 4, 4, 1};
    for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
        qr_num n;
        CHECK(num_key_decode(bad[i], bad_len[i], 0, &n) == 0, "bad encoding %zu accepted", i);
    }
    uint8_t too_long[2 + 20 + 1];
    too_long[0] = 0x03;
    too_long[1] = 0x81;
    for (int i = 0; i < 20; i++)
        too_long[2 + i] = 12;
    too_long[22] = 0;
    qr_num n;
    CHECK(num_key_decode(too_long, sizeof too_long, 0, &n) == 0, "40 digits accepted");
    CHECK(num_key_decode(too_long, 0, 0, &n) == 0, "empty accepted");

    /* The encoding stays within the buffer cap. */
    buf k;
    buf_init(&k, 3);
    n = parse_ok("1.5");
    CHECK(num_key_encode(&n, 0, &k) == -1, "cap ignored");
    buf_free(&k);
}

/* ---- vectors mode ---- */

static void print_result(int rc, const qr_num *n, const qr_err *e)
{
    if (rc) {
        printf("ERR %s\n", e->msg);
        return;
    }
    char out[NUM_FMT_MAX];
    num_format(n, out);
    printf("OK %s\n", out);
}

static int key_cmp(const qr_num *a, const qr_num *b, int desc)
{
    buf ka, kb;
    buf_init(&ka, 0);
    buf_init(&kb, 0);
    num_key_encode(a, desc, &ka);
    num_key_encode(b, desc, &kb);
    size_t m = ka.len < kb.len ? ka.len : kb.len;
    int c = memcmp(ka.data, kb.data, m);
    if (c == 0) c = ka.len < kb.len ? -1 : ka.len > kb.len ? 1 : 0;
    buf_free(&ka);
    buf_free(&kb);
    return c < 0 ? -1 : c > 0;
}

/* Lines are "P\tTEXT" (parse and format, plus size and a key round trip),
 * "C\tA\tB" (compare, and compare keys ascending and descending), "A\tA\tB" (add)
 * and "S\tA\tB" (subtract). Each prints one line. */
static int run_vectors(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        if (line[got - 1] == '\n') line[--got] = '\0';
        char *op = line, *a = strchr(line, '\t');
        if (a == NULL) {
            printf("BAD LINE\n");
            continue;
        }
        *a++ = '\0';
        char *b = strchr(a, '\t');
        if (b) *b++ = '\0';
        qr_num x, y, r;
        qr_err e;
        err_init(&e);
        if (op[0] == 'P') {
            int rc = num_parse(a, strlen(a), &x, &e);
            if (rc) {
                printf("ERR %s\n", e.msg);
                continue;
            }
            char out[NUM_FMT_MAX];
            num_format(&x, out);
            buf k;
            buf_init(&k, 0);
            int ok = 1;
            for (int desc = 0; desc <= 1; desc++) {
                buf_reset(&k);
                num_key_encode(&x, desc, &k);
                qr_num back;
                size_t used = num_key_decode((const uint8_t *)k.data, k.len, desc, &back);
                ok &= used == k.len && memcmp(&back, &x, sizeof x) == 0;
            }
            buf_free(&k);
            printf("OK %s %zu %s\n", out, num_size(&x), ok ? "key-ok" : "key-bad");
            continue;
        }
        if (b == NULL) {
            printf("BAD LINE\n");
            continue;
        }
        if (num_parse(a, strlen(a), &x, &e) || num_parse(b, strlen(b), &y, &e)) {
            printf("ERR operand %s\n", e.msg);
            continue;
        }
        if (op[0] == 'C') {
            printf("%d %d %d\n", num_cmp(&x, &y), key_cmp(&x, &y, 0), key_cmp(&x, &y, 1));
        } else if (op[0] == 'A') {
            int rc = num_add(&x, &y, &r, &e);
            print_result(rc, &r, &e);
        } else if (op[0] == 'S') {
            int rc = num_sub(&x, &y, &r, &e);
            print_result(rc, &r, &e);
        } else {
            printf("BAD LINE\n");
        }
    }
    free(line);
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--vectors") == 0) return run_vectors(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_number [--vectors FILE]\n");
        return 2;
    }
    test_format();
    test_errors();
    test_limits();
    test_cmp();
    test_arith();
    test_size();
    test_key_codec();
    if (check_failures) {
        fprintf(stderr, "test_number: %d failure(s)\n", check_failures);
        return 1;
    }
    printf("test_number: ok\n");
    return 0;
}
