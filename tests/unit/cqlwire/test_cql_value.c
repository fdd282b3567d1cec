/* test_cql_value.c — CQL value bytes (src/cqlwire/cql_value.h).
 *
 * Vectors from the specification's section 6 (varint table, date examples, vint example,
 * time range), IEEE and two's complement widths, decimal text both ways, durations and
 * their sign rule, UTF-8 edge cases, and the cursors over collections and UDT fields. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cqlwire/cql_value.h"

#include "check.h"

static int bytes_are(const buf *b, const char *hex)
{
    size_t n = strlen(hex) / 2;
    if (b->len != n) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned x;
        sscanf(hex + 2 * i, "%2x", &x);
        if ((uint8_t)b->data[i] != x) return 0;
    }
    return 1;
}

static void test_fixed(void)
{
    uint8_t b[8];
    int32_t i;
    cql_int_encode(-2, b);
    CHECK_THAT(memcmp(b, "\xff\xff\xff\xfe", 4) == 0);
    CHECK_THAT(cql_int_decode(b, 4, &i) == 0 && i == -2);
    CHECK_THAT(cql_int_decode(b, 3, &i) == -1 && cql_int_decode(b, 0, &i) == -1);
    int64_t l;
    cql_bigint_encode(INT64_MIN, b);
    CHECK_THAT(memcmp(b, "\x80\0\0\0\0\0\0\0", 8) == 0);
    CHECK_THAT(cql_bigint_decode(b, 8, &l) == 0 && l == INT64_MIN);
    int16_t s;
    cql_smallint_encode(-129, b);
    CHECK_THAT(b[0] == 0xff && b[1] == 0x7f && cql_smallint_decode(b, 2, &s) == 0 && s == -129);
    int8_t t;
    cql_tinyint_encode(-128, b);
    CHECK_THAT(b[0] == 0x80 && cql_tinyint_decode(b, 1, &t) == 0 && t == -128);
    CHECK_THAT(cql_tinyint_decode(b, 2, &t) == -1);
    float f;
    cql_float_encode(1.5f, b);
    CHECK_THAT(memcmp(b, "\x3f\xc0\x00\x00", 4) == 0 && cql_float_decode(b, 4, &f) == 0 &&
               f == 1.5f);
    double d;
    cql_double_encode(-0.1, b);
    CHECK_THAT(memcmp(b, "\xbf\xb9\x99\x99\x99\x99\x99\x9a", 8) == 0);
    CHECK_THAT(cql_double_decode(b, 8, &d) == 0 && d == -0.1);
    cql_double_encode(NAN, b);
    CHECK_THAT(cql_double_decode(b, 8, &d) == 0 && isnan(d));
    int v;
    cql_boolean_encode(7, b);
    CHECK_THAT(b[0] == 1);
    uint8_t two = 2;
    CHECK_THAT(cql_boolean_decode(&two, 1, &v) == 0 && v == 1);
    uint8_t zero = 0;
    CHECK_THAT(cql_boolean_decode(&zero, 1, &v) == 0 && v == 0);
    uint8_t u[16], out[16];
    memcpy(u, "\x12\x3e\x45\x67\xe8\x9b\x11\xd3\xa4\x56\x42\x66\x14\x17\x40\x00", 16);
    CHECK_THAT(cql_uuid_decode(u, 16, out) == 0 && memcmp(u, out, 16) == 0);
    CHECK_THAT(cql_timeuuid_decode(u, 16, out) == 0); /* version nibble 1 */
    u[6] = 0x41;
    CHECK_THAT(cql_timeuuid_decode(u, 16, out) == -1 && cql_uuid_decode(u, 15, out) == -1);
    int fam;
    CHECK_THAT(cql_inet_decode((const uint8_t *)"\x7f\0\0\1", 4, out, &fam) == 0 && fam == 4);
    CHECK_THAT(cql_inet_decode(u, 16, out, &fam) == 0 && fam == 6);
    CHECK_THAT(cql_inet_decode(u, 5, out, &fam) == -1);
}

static void test_date_time(void)
{
    uint8_t b[8];
    int64_t days;
    /* 2^31 is 1970-01-01; 0 is -5877641-06-23, 2^32-1 the last day. */
    cql_date_encode(0, b);
    CHECK_THAT(memcmp(b, "\x80\0\0\0", 4) == 0);
    cql_date_encode(-1, b);
    CHECK_THAT(memcmp(b, "\x7f\xff\xff\xff", 4) == 0);
    CHECK_THAT(cql_date_decode((const uint8_t *)"\0\0\0\0", 4, &days) == 0 &&
               days == -2147483648LL);
    CHECK_THAT(cql_date_decode((const uint8_t *)"\xff\xff\xff\xff", 4, &days) == 0 &&
               days == 2147483647LL);
    cql_date_encode(19000, b); /* 2022-01-08 */
    CHECK_THAT(cql_date_decode(b, 4, &days) == 0 && days == 19000);
    int64_t ns;
    CHECK_THAT(cql_time_encode(CQL_TIME_MAX_NS, b) == 0 && cql_time_decode(b, 8, &ns) == 0 &&
               ns == 86399999999999LL);
    CHECK_THAT(cql_time_encode(CQL_TIME_MAX_NS + 1, b) == -1 && cql_time_encode(-1, b) == -1);
    uint8_t day[8];
    cql_bigint_encode(86400000000000LL, day);
    CHECK_THAT(cql_time_decode(day, 8, &ns) == -1);
    int64_t ts;
    cql_bigint_encode(-1000, b); /* a timestamp before the epoch */
    CHECK_THAT(cql_bigint_decode(b, 8, &ts) == 0 && ts == -1000);
}

static void test_vint(void)
{
    uint8_t b[CQL_VINT_MAX];
    uint64_t u;
    /* The specification's example: 256000 is [110]00011 11101000 00000000. */
    CHECK_THAT(cql_uvint_encode(256000, b) == 3 && b[0] == 0xC3 && b[1] == 0xE8 && b[2] == 0x00);
    CHECK_THAT(cql_uvint_decode(b, 3, &u) == 3 && u == 256000);
    CHECK_THAT(cql_uvint_decode(b, 2, &u) == 0);
    CHECK_THAT(cql_uvint_encode(0, b) == 1 && b[0] == 0);
    CHECK_THAT(cql_uvint_encode(127, b) == 1 && b[0] == 0x7f);
    CHECK_THAT(cql_uvint_encode(128, b) == 2 && b[0] == 0x80 && b[1] == 0x80);
    CHECK_THAT(cql_uvint_encode(UINT64_MAX, b) == 9 && b[0] == 0xff && b[8] == 0xff);
    CHECK_THAT(cql_uvint_decode(b, 9, &u) == 9 && u == UINT64_MAX);
    uint64_t edges[] = {0, 1, 127, 128, 16383, 16384, (1ull << 56) - 1, 1ull << 56, 1ull << 63};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        int n = cql_uvint_encode(edges[i], b);
        CHECK(cql_uvint_decode(b, (size_t)n, &u) == (size_t)n && u == edges[i], "edge %zu", i);
    }
    /* Zig-zag: 0 0, -1 1, 1 2, -2 3. */
    int64_t v;
    CHECK_THAT(cql_vint_encode(-1, b) == 1 && b[0] == 1);
    CHECK_THAT(cql_vint_encode(1, b) == 1 && b[0] == 2);
    CHECK_THAT(cql_vint_encode(-2, b) == 1 && b[0] == 3);
    int64_t sedges[] = {0, -1, 63, -64, 64, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof sedges / sizeof sedges[0]; i++) {
        int n = cql_vint_encode(sedges[i], b);
        CHECK(cql_vint_decode(b, (size_t)n, &v) == (size_t)n && v == sedges[i], "sedge %zu", i);
    }
}

static void test_duration(void)
{
    buf b;
    buf_init(&b, 0);
    CHECK_THAT(cql_duration_encode(1, 2, 3, &b) == 0 && bytes_are(&b, "020406"));
    int32_t m, d;
    int64_t ns;
    char why[160];
    CHECK_THAT(cql_duration_decode((uint8_t *)b.data, b.len, &m, &d, &ns, why, sizeof why) == 0);
    CHECK_THAT(m == 1 && d == 2 && ns == 3);
    buf_reset(&b);
    cql_duration_encode(-14, 0, -1000000000LL, &b);
    CHECK_THAT(cql_duration_decode((uint8_t *)b.data, b.len, &m, &d, &ns, why, sizeof why) == 0);
    CHECK_THAT(m == -14 && d == 0 && ns == -1000000000LL);
    /* Mixed signs, a month count past 32 bits, trailing and missing bytes. */
    const uint8_t mixed[] = {0x02, 0x01, 0x00};
    CHECK_THAT(cql_duration_decode(mixed, 3, &m, &d, &ns, why, sizeof why) == -1);
    CHECK_STR(why,
              "The duration months, days and nanoseconds must be all of the same sign (1, -1, 0)");
    buf_reset(&b);
    uint8_t vb[CQL_VINT_MAX];
    buf_append(&b, vb, (size_t)cql_vint_encode((int64_t)1 << 33, vb));
    buf_append(&b, "\0\0", 2);
    CHECK_THAT(cql_duration_decode((uint8_t *)b.data, b.len, &m, &d, &ns, why, sizeof why) == -1);
    CHECK_THAT(cql_duration_decode((const uint8_t *)"\0\0\0\0", 4, &m, &d, &ns, why, sizeof why) ==
               -1);
    CHECK_THAT(strstr(why, "after its 3 vints") != NULL);
    CHECK_THAT(cql_duration_decode((const uint8_t *)"\0\0", 2, &m, &d, &ns, why, sizeof why) == -1);
    buf_free(&b);
}

static void test_varint(void)
{
    /* The specification's table. */
    struct {
        int64_t v;
        const char *hex;
    } table[] = {{0, "00"},
                 {1, "01"},
                 {127, "7f"},
                 {128, "0080"},
                 {129, "0081"},
                 {-1, "ff"},
                 {-128, "80"},
                 {-129, "ff7f"},
                 {255, "00ff"},
                 {-256, "ff00"},
                 {INT64_MAX, "7fffffffffffffff"},
                 {INT64_MIN, "8000000000000000"}};
    buf b, t;
    buf_init(&b, 0);
    buf_init(&t, 0);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        buf_reset(&b);
        CHECK_THAT(cql_varint_from_int64(table[i].v, &b) == 0);
        CHECK(bytes_are(&b, table[i].hex), "%lld", (long long)table[i].v);
        int64_t back;
        CHECK_THAT(cql_varint_to_int64((uint8_t *)b.data, b.len, &back) == 0 && back == table[i].v);
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)table[i].v);
        buf_reset(&t);
        CHECK_THAT(cql_varint_to_text((uint8_t *)b.data, b.len, &t) == 0);
        CHECK_STR(t.data, text);
        buf_reset(&b);
        CHECK_THAT(cql_varint_from_text(text, strlen(text), &b) == 0);
        CHECK(bytes_are(&b, table[i].hex), "text %s", text);
    }
    /* Non-minimal encodings decode too; nine significant bytes do not fit an int64. */
    int64_t v;
    CHECK_THAT(cql_varint_to_int64((const uint8_t *)"\0\0\x01", 3, &v) == 0 && v == 1);
    CHECK_THAT(cql_varint_to_int64((const uint8_t *)"\xff\xff\xff", 3, &v) == 0 && v == -1);
    CHECK_THAT(cql_varint_to_int64((const uint8_t *)"\x00\x80\0\0\0\0\0\0\0", 9, &v) == -1);
    CHECK_THAT(cql_varint_to_int64((const uint8_t *)"", 0, &v) == -1);
    /* Past 64 bits: 2^64 = 0x010000000000000000, -(2^64) = 0xff0000000000000000. */
    const char *big = "18446744073709551616";
    buf_reset(&b);
    CHECK_THAT(cql_varint_from_text(big, strlen(big), &b) == 0 &&
               bytes_are(&b, "010000000000000000"));
    buf_reset(&t);
    cql_varint_to_text((uint8_t *)b.data, b.len, &t);
    CHECK_STR(t.data, big);
    buf_reset(&b);
    CHECK_THAT(cql_varint_from_text("-18446744073709551616", 21, &b) == 0);
    CHECK_THAT(bytes_are(&b, "ff0000000000000000"));
    const char *many = "-123456789012345678901234567890123456789012345678901234567890";
    buf_reset(&b);
    CHECK_THAT(cql_varint_from_text(many, strlen(many), &b) == 0);
    buf_reset(&t);
    cql_varint_to_text((uint8_t *)b.data, b.len, &t);
    CHECK_STR(t.data, many);
    CHECK_THAT(cql_varint_from_text("", 0, &b) == -1 && cql_varint_from_text("-", 1, &b) == -1);
    CHECK_THAT(cql_varint_from_text("1x", 2, &b) == -1 && cql_varint_from_text("1.5", 3, &b) == -1);
    buf_reset(&b);
    CHECK_THAT(cql_varint_from_text("-0", 2, &b) == 0 && bytes_are(&b, "00"));
    buf_free(&b);
    buf_free(&t);
}

static void test_decimal(void)
{
    struct {
        const char *in, *hex, *out;
    } cases[] = {
        {"1.50",
         "00000002"
         "0096",
         "1.50"}, /* scale 2, unscaled 150 */
        {"-0.001",
         "00000003"
         "ff",
         "-0.001"}, /* scale 3, unscaled -1 */
        {"12345",
         "00000000"
         "3039",
         "12345"},
        {"1E+3",
         "fffffffd"
         "01",
         "1E3"}, /* scale -3 */
        {"2.5e-70",
         "00000047"
         "19",
         "25E-71"}, /* scale 71 */
        {"0.0",
         "00000001"
         "00",
         "0.0"},
        {"-7",
         "00000000"
         "f9",
         "-7"},
    };
    buf b, t;
    buf_init(&b, 0);
    buf_init(&t, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf_reset(&b);
        CHECK(cql_decimal_from_text(cases[i].in, strlen(cases[i].in), &b) == 0, "%s", cases[i].in);
        CHECK(bytes_are(&b, cases[i].hex), "%s", cases[i].in);
        buf_reset(&t);
        CHECK_THAT(cql_decimal_to_text((uint8_t *)b.data, b.len, &t) == 0);
        CHECK_STR(t.data, cases[i].out);
    }
    const char *bad[] = {"", ".", "1e", "1e+", "--1", "1.2.3", "abc", "1e99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(cql_decimal_from_text(bad[i], strlen(bad[i]), &b) == -1, "'%s' accepted", bad[i]);
    CHECK_THAT(cql_decimal_to_text((const uint8_t *)"\0\0\0", 3, &t) == -1);
    CHECK_THAT(cql_decimal_to_text((const uint8_t *)"\0\0\0\0", 4, &t) == -1);
    buf_free(&b);
    buf_free(&t);
}

static void test_text(void)
{
    CHECK_THAT(cql_utf8_valid((const uint8_t *)"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80", 15));
    CHECK_THAT(!cql_utf8_valid((const uint8_t *)"\xc3", 1));             /* cut short */
    CHECK_THAT(!cql_utf8_valid((const uint8_t *)"\xc0\xaf", 2));         /* overlong */
    CHECK_THAT(!cql_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3));     /* surrogate */
    CHECK_THAT(!cql_utf8_valid((const uint8_t *)"\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
    /* a character, or a bad byte, at every place of an ASCII run read by words */
    for (size_t at = 0; at + 2 <= 26; at++) {
        uint8_t run[26];
        memset(run, 'a', sizeof run);
        run[at] = 0xc3, run[at + 1] = 0xa9;
        CHECK(cql_utf8_valid(run, sizeof run), "e-acute at %zu of an ASCII run", at);
        run[at] = 0xff;
        CHECK(!cql_utf8_valid(run, sizeof run), "a bad byte at %zu of an ASCII run", at);
        run[at] = 0xc3;
        CHECK(!cql_utf8_valid(run, at + 1), "cut short after %zu ASCII bytes", at);
    }
    CHECK_THAT(!cql_utf8_valid((const uint8_t *)"\x80", 1));
    CHECK_THAT(cql_utf8_valid((const uint8_t *)"", 0));
    CHECK_THAT(cql_ascii_valid((const uint8_t *)"abc\x7f", 4));
    CHECK_THAT(!cql_ascii_valid((const uint8_t *)"ab\x80", 3));
}

static void test_collections(void)
{
    /* list<int> [1, null, 3]: count 3, then [bytes] 1, null, 3. */
    buf b;
    buf_init(&b, 0);
    size_t at = cql_collection_begin(&b);
    uint8_t v[4];
    cql_int_encode(1, v);
    cql_element_put(&b, v, 4);
    cql_element_put(&b, NULL, -1);
    cql_int_encode(3, v);
    cql_element_put(&b, v, 4);
    cql_collection_end(&b, at, 3);
    CHECK_THAT(bytes_are(&b, "00000003"
                             "0000000400000001"
                             "ffffffff"
                             "0000000400000003"));
    cql_elements e;
    uint32_t count;
    CHECK_THAT(cql_collection_open(&e, (uint8_t *)b.data, b.len, 0, &count) == 0 && count == 3);
    const uint8_t *p;
    int32_t n;
    CHECK_THAT(cql_element_next(&e, &p, &n) == 1 && n == 4 && p[3] == 1);
    CHECK_THAT(cql_element_next(&e, &p, &n) == 1 && n == -1 && p == NULL);
    CHECK_THAT(cql_element_next(&e, &p, &n) == 1 && n == 4 && p[3] == 3);
    CHECK_THAT(cql_element_next(&e, &p, &n) == 0);
    /* Read as a map it is an odd number of elements: the count claims too much. */
    CHECK_THAT(cql_collection_open(&e, (uint8_t *)b.data, b.len, 1, &count) == -1);
    /* Trailing bytes, a truncated element, a negative count, a count past the bytes. */
    buf_putc(&b, 0);
    CHECK_THAT(cql_collection_open(&e, (uint8_t *)b.data, b.len, 0, &count) == 0);
    for (int i = 0; i < 3; i++)
        cql_element_next(&e, &p, &n);
    CHECK_THAT(cql_element_next(&e, &p, &n) == -1);
    CHECK_THAT(cql_collection_open(&e, (uint8_t *)b.data, b.len - 3, 0, &count) == 0);
    cql_element_next(&e, &p, &n);
    cql_element_next(&e, &p, &n);
    CHECK_THAT(cql_element_next(&e, &p, &n) == -1);
    CHECK_THAT(cql_collection_open(&e, (const uint8_t *)"\xff\xff\xff\xff", 4, 0, &count) == -1);
    CHECK_THAT(cql_collection_open(&e, (const uint8_t *)"\0\0\0\x02\0\0\0\0", 8, 0, &count) == -1);
    CHECK_THAT(cql_collection_open(&e, (const uint8_t *)"\0\0", 2, 0, &count) == -1);
    /* map<text, int> {'a': 1}: count 1 pair, key then value. */
    buf_reset(&b);
    at = cql_collection_begin(&b);
    cql_element_put(&b, "a", 1);
    cql_int_encode(1, v);
    cql_element_put(&b, v, 4);
    cql_collection_end(&b, at, 1);
    CHECK_THAT(bytes_are(&b, "00000001"
                             "0000000161"
                             "0000000400000001"));
    CHECK_THAT(cql_collection_open(&e, (uint8_t *)b.data, b.len, 1, &count) == 0 && count == 1);
    CHECK_THAT(cql_element_next(&e, &p, &n) == 1 && n == 1 && p[0] == 'a');
    CHECK_THAT(cql_element_next(&e, &p, &n) == 1 && n == 4);
    CHECK_THAT(cql_element_next(&e, &p, &n) == 0);
    /* A UDT's fields: no count, fewer fields than the type is allowed; a length < -1 not. */
    cql_fields_open(&e, (const uint8_t *)"\0\0\0\x01x\xff\xff\xff\xff", 9);
    CHECK_THAT(cql_element_next(&e, &p, &n) == 1 && n == 1 && p[0] == 'x');
    CHECK_THAT(cql_element_next(&e, &p, &n) == 1 && n == -1);
    CHECK_THAT(cql_element_next(&e, &p, &n) == 0);
    cql_fields_open(&e, (const uint8_t *)"\xff\xff\xff\xfe", 4);
    CHECK_THAT(cql_element_next(&e, &p, &n) == -1);
    cql_fields_open(&e, (const uint8_t *)"\0\0\0\x05x", 5);
    CHECK_THAT(cql_element_next(&e, &p, &n) == -1);
    buf_free(&b);
}

int main(void)
{
    test_fixed();
    test_date_time();
    test_vint();
    test_duration();
    test_varint();
    test_decimal();
    test_text();
    test_collections();
    return check_report("test_cql_value");
}
