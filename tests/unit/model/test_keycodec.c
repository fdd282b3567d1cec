/* test_keycodec.c — property tests for keycodec.c.
 *
 * For thousands of random S, N and B values, alone and as 2-component tuples with each
 * component ascending or descending, checks that the memcmp order of the encodings is
 * DynamoDB's order of the values and that decoding gives the values back; then feeds
 * the decoders truncated, malformed and random bytes. Values are drawn from small
 * alphabets so that equal values and prefixes are common. It does not test storage. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "model/keycodec.h"
#include "model/number.h"

#include "check.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* A test value: its type, its AttributeValue, and what orders it (raw bytes for S and
 * B, the parsed number for N). */
typedef struct tval {
    char type;
    json_t *av;
    uint8_t raw[64];
    size_t rawlen;
    qr_num num;
} tval;

static const char *const utf8_pieces[] = {"",
                                          "\x00",
                                          "a",
                                          "b",
                                          "ab",
                                          "\x7f",
                                          "\xc3\xa9",
                                          "\xc3\xbf",
                                          "\xe2\x82\xac",
                                          "\xef\xbf\xbf",
                                          "\xf0\x9d\x84\x9e",
                                          "\x01",
                                          "z"};

static void make_s(tval *v)
{
    v->type = 'S';
    v->rawlen = 0;
    int parts = (int)rnd(5);
    for (int i = 0; i < parts; i++) {
        int k = 1 + (int)rnd(sizeof utf8_pieces / sizeof utf8_pieces[0] - 1);
        size_t n = k == 1 ? 1 : strlen(utf8_pieces[k]);
        memcpy(v->raw + v->rawlen, utf8_pieces[k], n);
        v->rawlen += n;
    }
    v->av = json_object();
    json_object_set_new(v->av, "S", json_stringn((const char *)v->raw, v->rawlen));
}

static void make_b(tval *v)
{
    static const uint8_t alphabet[] = {0x00, 0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff};
    v->type = 'B';
    v->rawlen = rnd(7);
    for (size_t i = 0; i < v->rawlen; i++)
        v->raw[i] = alphabet[rnd(sizeof alphabet)];
    char text[128];
    int n = EVP_EncodeBlock((unsigned char *)text, v->raw, (int)v->rawlen);
    v->av = json_object();
    json_object_set_new(v->av, "B", json_stringn(text, (size_t)n));
}

static void make_n(tval *v)
{
    char text[128];
    size_t k = 0;
    int r = (int)rnd(10);
    if (rnd(3) == 0) text[k++] = '-';
    if (r == 0) {
        text[k++] = '0';
    } else {
        int nd = r < 3 ? 38 : 1 + (int)rnd(4);
        text[k++] = (char)('1' + rnd(9));
        text[k++] = '.';
        for (int i = 1; i < nd; i++)
            text[k++] = (char)('0' + (rnd(3) ? rnd(3) : rnd(10)));
        int e = r == 3 ? 125 : r == 4 ? -130 : (int)rnd(7) - 3;
        k += (size_t)snprintf(text + k, sizeof text - k, "e%d", e);
    }
    text[k] = '\0';
    qr_err err;
    err_init(&err);
    v->type = 'N';
    if (num_parse(text, k, &v->num, &err)) {
        check_failures++;
        fprintf(stderr, "generator made bad number %s: %s\n", text, err.msg);
    }
    v->av = json_object();
    json_object_set_new(v->av, "N", json_string(text));
}

static void make(tval *v, char type)
{
    memset(v, 0, sizeof *v);
    if (type == 'S')
        make_s(v);
    else if (type == 'B')
        make_b(v);
    else
        make_n(v);
}

/* DynamoDB's order of two values of the same type. */
static int value_order(const tval *a, const tval *b)
{
    if (a->type == 'N') return num_cmp(&a->num, &b->num);
    size_t m = a->rawlen < b->rawlen ? a->rawlen : b->rawlen;
    int c = memcmp(a->raw, b->raw, m);
    if (c == 0) c = a->rawlen < b->rawlen ? -1 : a->rawlen > b->rawlen;
    return c < 0 ? -1 : c > 0;
}

static int bytes_order(const buf *a, const buf *b)
{
    size_t m = a->len < b->len ? a->len : b->len;
    int c = m ? memcmp(a->data, b->data, m) : 0;
    if (c == 0) c = a->len < b->len ? -1 : a->len > b->len;
    return c < 0 ? -1 : c > 0;
}

/* True if av is the value v (numbers compared by value, B by its canonical base64). */
static int same_value(const tval *v, const json_t *av)
{
    if (v->type == 'N') {
        const json_t *p = json_object_get(av, "N");
        qr_num n;
        qr_err e;
        err_init(&e);
        if (!json_is_string(p) || num_parse(json_string_value(p), json_string_length(p), &n, &e))
            return 0;
        return num_cmp(&n, &v->num) == 0 && json_object_size(av) == 1;
    }
    return json_equal((json_t *)v->av, (json_t *)av);
}

static void encode(buf *b, const tval *v, int desc)
{
    qr_err e;
    err_init(&e);
    CHECK(keycodec_append(b, v->av, desc, &e) == 0, "append failed: %s", e.msg);
}

static void test_single(void)
{
    static const char types[] = {'S', 'N', 'B'};
    for (int round = 0; round < 6000; round++) {
        char type = types[round % 3];
        int desc = (round / 3) % 2;
        tval a, b;
        make(&a, type);
        make(&b, type);
        buf ea, eb;
        buf_init(&ea, 0);
        buf_init(&eb, 0);
        encode(&ea, &a, desc);
        encode(&eb, &b, desc);
        int want = value_order(&a, &b);
        if (desc) want = -want;
        CHECK(bytes_order(&ea, &eb) == want, "%c order desc=%d: want %d", type, desc, want);
        if (want == 0)
            CHECK(ea.len == eb.len && memcmp(ea.data, eb.data, ea.len) == 0, "equal values differ");

        json_t *back = NULL;
        size_t used = keycodec_decode((const uint8_t *)ea.data, ea.len, type, desc, &back);
        CHECK(used == ea.len, "%c decode used %zu of %zu", type, used, ea.len);
        CHECK(back && same_value(&a, back), "%c round trip desc=%d", type, desc);
        json_decref(back);
        /* Every proper prefix is incomplete. */
        for (size_t cut = 0; cut < ea.len; cut++) {
            back = NULL;
            CHECK(keycodec_decode((const uint8_t *)ea.data, cut, type, desc, &back) == 0 &&
                      back == NULL,
                  "%c prefix of %zu decoded", type, cut);
            json_decref(back);
        }
        json_decref(a.av);
        json_decref(b.av);
        buf_free(&ea);
        buf_free(&eb);
    }
}

static void test_tuples(void)
{
    static const char types[] = {'S', 'N', 'B'};
    for (int round = 0; round < 9000; round++) {
        char t1 = types[rnd(3)], t2 = types[rnd(3)];
        int d1 = (int)rnd(2), d2 = (int)rnd(2);
        tval a1, a2, b1, b2;
        make(&a1, t1);
        make(&a2, t2);
        make(&b1, t1);
        make(&b2, t2);
        if (rnd(3) == 0) { /* share the first component often */
            json_decref(b1.av);
            b1 = a1;
            b1.av = json_deep_copy(a1.av);
        }
        buf ea, eb;
        buf_init(&ea, 0);
        buf_init(&eb, 0);
        encode(&ea, &a1, d1);
        encode(&ea, &a2, d2);
        encode(&eb, &b1, d1);
        encode(&eb, &b2, d2);
        int c = value_order(&a1, &b1);
        if (d1) c = -c;
        if (c == 0) {
            c = value_order(&a2, &b2);
            if (d2) c = -c;
        }
        CHECK(bytes_order(&ea, &eb) == c, "tuple (%c%s,%c%s) order: want %d", t1, d1 ? "desc" : "",
              t2, d2 ? "desc" : "", c);

        json_t *x = NULL, *y = NULL;
        size_t u1 = keycodec_decode((const uint8_t *)ea.data, ea.len, t1, d1, &x);
        size_t u2 =
            u1 ? keycodec_decode((const uint8_t *)ea.data + u1, ea.len - u1, t2, d2, &y) : 0;
        CHECK(u1 && u2 && u1 + u2 == ea.len, "tuple decode lengths %zu + %zu of %zu", u1, u2,
              ea.len);
        CHECK(x && y && same_value(&a1, x) && same_value(&a2, y), "tuple round trip");
        json_decref(x);
        json_decref(y);
        json_decref(a1.av);
        json_decref(a2.av);
        json_decref(b1.av);
        json_decref(b2.av);
        buf_free(&ea);
        buf_free(&eb);
    }
}

static void test_bad_input(void)
{
    qr_err e;
    buf b;
    buf_init(&b, 0);
    static const char *bad_avs[] = {"{\"BOOL\":true}",
                                    "{\"NULL\":true}",
                                    "{\"SS\":[\"a\"]}",
                                    "{}",
                                    "{\"N\":\"abc\"}",
                                    "{\"N\":\"1e200\"}",
                                    "{\"N\":5}",
                                    "{\"S\":5}",
                                    "{\"B\":\"abc\"}",
                                    "{\"B\":\"a!==\"}",
                                    "{\"S\":\"a\",\"N\":\"1\"}",
                                    "[]",
                                    "\"S\""};
    for (size_t i = 0; i < sizeof bad_avs / sizeof bad_avs[0]; i++) {
        json_t *av = json_loads(bad_avs[i], JSON_DECODE_ANY, NULL);
        err_init(&e);
        buf_reset(&b);
        CHECK(av && keycodec_append(&b, av, 0, &e) == -1 && e.type &&
                  strcmp(e.type, QR_E_VALIDATION) == 0,
              "append(%s) accepted", bad_avs[i]);
        json_decref(av);
    }
    err_init(&e);
    json_t *n = json_pack("{s:s}", "N", "1e126");
    CHECK(keycodec_append(&b, n, 0, &e) == -1 &&
              strcmp(e.msg, "Number overflow. Attempting to store a number with magnitude larger "
                            "than supported range") == 0,
          "number message: %s", e.msg);
    json_decref(n);

    /* The buffer cap is honoured. */
    buf small;
    buf_init(&small, 4);
    json_t *s = json_pack("{s:s}", "S", "abcdef");
    err_init(&e);
    CHECK(keycodec_append(&small, s, 0, &e) == -1 && e.type, "cap ignored");
    json_decref(s);
    buf_free(&small);

    /* Malformed encodings. */
    static const struct {
        const char *bytes;
        size_t len;
        char type;
    } bad[] = {
        {"a\x00", 2, 'S'},        /* unterminated escape */
        {"a\x00\x02", 3, 'S'},    /* bad escape */
        {"\xff\x00\x01", 3, 'S'}, /* not UTF-8 */
        {"\xc3\x00\x01", 3, 'S'}, /* truncated UTF-8 */
        {"a\x00\x01", 3, 'X'},    /* unknown type */
        {"a\x00\x01", 3, 'M'},    {"", 0, 'B'}, {"\x05", 1, 'N'},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *av = NULL;
        CHECK(keycodec_decode((const uint8_t *)bad[i].bytes, bad[i].len, bad[i].type, 0, &av) ==
                      0 &&
                  av == NULL,
              "bad encoding %zu decoded", i);
    }
    /* Embedded NUL in S survives. */
    json_t *nul = json_object();
    json_object_set_new(nul, "S", json_stringn("a\0b", 3));
    buf_reset(&b);
    err_init(&e);
    CHECK(keycodec_append(&b, nul, 1, &e) == 0, "append NUL string");
    json_t *back = NULL;
    CHECK(keycodec_decode((const uint8_t *)b.data, b.len, 'S', 1, &back) == b.len &&
              json_equal(back, nul),
          "NUL string round trip");
    json_decref(back);
    json_decref(nul);

    /* Random bytes never crash a decoder, and anything accepted re-encodes exactly. */
    uint8_t junk[24];
    static const char types[] = {'S', 'N', 'B'};
    for (int round = 0; round < 20000; round++) {
        size_t len = rnd(sizeof junk + 1);
        for (size_t i = 0; i < len; i++)
            junk[i] = (uint8_t)(rnd(4) ? rnd(4) : rnd(256));
        if (rnd(2) && len) junk[0] = (uint8_t)(1 + rnd(3));
        char type = types[rnd(3)];
        int desc = (int)rnd(2);
        if (desc)
            for (size_t i = 0; i < len; i++)
                junk[i] = (uint8_t)~junk[i];
        json_t *av = NULL;
        size_t used = keycodec_decode(junk, len, type, desc, &av);
        CHECK((used == 0) == (av == NULL) && used <= len, "junk decode");
        if (used) {
            buf_reset(&b);
            err_init(&e);
            CHECK(keycodec_append(&b, av, desc, &e) == 0 && b.len == used &&
                      memcmp(b.data, junk, used) == 0,
                  "junk %c re-encodes differently", type);
        }
        json_decref(av);
    }
    buf_free(&b);
}

static void test_hash(void)
{
    const char *k1 = "\x61\x00\x01", *k2 = "\x62\x00\x01";
    CHECK(keycodec_hash(k1, 3) == XXH3_64bits(k1, 3), "hash is XXH3_64bits");
    CHECK(keycodec_hash(k1, 3) == keycodec_hash(k1, 3), "hash is deterministic");
    CHECK(keycodec_hash(k1, 3) != keycodec_hash(k2, 3), "hash separates keys");
    CHECK(keycodec_hash("", 0) == XXH3_64bits("", 0), "hash of empty");
}

int main(void)
{
    test_single();
    test_tuples();
    test_bad_input();
    test_hash();
    if (check_failures) {
        fprintf(stderr, "test_keycodec: %d failure(s)\n", check_failures);
        return 1;
    }
    printf("test_keycodec: ok\n");
    return 0;
}
