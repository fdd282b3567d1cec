/* test_cqlval_keyenc.c — clustering keys, key ranges, partition keys and tokens
 * (src/cql/keyenc.c).
 *
 * Order: random values of every orderable type, encoded ASC and DESC, must sort by their
 * bytes as value.c's comparator orders them (reversed for DESC) and decode to values equal
 * to them. Ranges: a table of rows over (a int ASC, b text DESC) is filtered by each
 * restriction through the ranges and directly; both must select the same rows. Tokens:
 * vectors computed by the Python driver's Murmur3Token (Debian python3-cassandra), made by
 * the script below, for every tail length and bytes over 0x7f, and composite keys (the
 * empty key, whose token the driver gives as 0 and Cassandra as Long.MIN_VALUE without
 * hashing, is left out of the table and checked on its own).
 *
 *   # Prints the token vectors of test_cqlval_keyenc.c: Murmur3Token.from_key of the python
 *   # driver (Debian python3-cassandra) for keys of every tail length, with high bytes.
 *   from cassandra.metadata import Murmur3Token
 *   keys = [bytes((i * 37 + n * 11 + 0x80) % 256 for i in range(n)) for n in range(0, 41)]
 *   keys += [b"hello", b"\x00\x00\x00\x01", b"\xff" * 17, bytes(range(256))]
 *   for k in keys:
 *       t = Murmur3Token.from_key(k).value
 *       print('    {"%s", %dLL},' % (k.hex(), t) if t != -2**63 else '    {"%s", INT64_MIN},' %
 * k.hex()) import struct def comp(*parts): return b"".join(struct.pack(">H", len(p)) + p + b"\x00"
 * for p in parts) for k in [comp(struct.pack(">i", 1), b"a"), comp(b"user-42", struct.pack(">i",
 * 202401)), comp(bytes.fromhex("123e4567e89b42d3a456426614174000"), struct.pack(">q", -1))]:
 *       print('    {"%s", %dLL},' % (k.hex(), Murmur3Token.from_key(k).value)) */
#include <stdlib.h>
#include <string.h>

#include "cql/ast.h"
#include "cql/keyenc.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"

#include "check.h"

static const struct {
    const char *hex;
    int64_t token;
} tokens[] = {
    {"8b", -7299393527204481650LL},
    {"96bb", -8140077134074869146LL},
    {"a1c6eb", -3133735113233649620LL},
    {"acd1f61b", -2657119990765585433LL},
    {"b7dc01264b", 7879282496902941315LL},
    {"c2e70c31567b", -8418765997777948644LL},
    {"cdf2173c6186ab", 873729386038173999LL},
    {"d8fd22476c91b6db", 6581273143521528945LL},
    {"e3082d52779cc1e60b", -8799594591213860864LL},
    {"ee13385d82a7ccf1163b", -5979826225369487658LL},
    {"f91e43688db2d7fc21466b", 5657743957007385836LL},
    {"04294e7398bde2072c51769b", -4240281926472779084LL},
    {"0f34597ea3c8ed12375c81a6cb", -2518468629978268745LL},
    {"1a3f6489aed3f81d42678cb1d6fb", 3810991415888822318LL},
    {"254a6f94b9de03284d7297bce1062b", -6201635066792473843LL},
    {"30557a9fc4e90e33587da2c7ec11365b", -2588277571949181093LL},
    {"3b6085aacff4193e6388add2f71c41668b", 4240280231472771572LL},
    {"466b90b5daff24496e93b8dd02274c7196bb", 1625761987028481799LL},
    {"51769bc0e50a2f54799ec3e80d32577ca1c6eb", 398048559534229443LL},
    {"5c81a6cbf0153a5f84a9cef3183d6287acd1f61b", -7333274933463781782LL},
    {"678cb1d6fb20456a8fb4d9fe23486d92b7dc01264b", 3400909845472238191LL},
    {"7297bce1062b50759abfe4092e53789dc2e70c31567b", -1596376939192148906LL},
    {"7da2c7ec11365b80a5caef14395e83a8cdf2173c6186ab", 6269954798478228941LL},
    {"88add2f71c41668bb0d5fa1f44698eb3d8fd22476c91b6db", 2624990123792075921LL},
    {"93b8dd02274c7196bbe0052a4f7499bee3082d52779cc1e60b", 5609274453120610316LL},
    {"9ec3e80d32577ca1c6eb10355a7fa4c9ee13385d82a7ccf1163b", -7619275339747734995LL},
    {"a9cef3183d6287acd1f61b40658aafd4f91e43688db2d7fc21466b", -2450320486239038821LL},
    {"b4d9fe23486d92b7dc01264b7095badf04294e7398bde2072c51769b", 6596349291545672150LL},
    {"bfe4092e53789dc2e70c31567ba0c5ea0f34597ea3c8ed12375c81a6cb", 5980130945346738655LL},
    {"caef14395e83a8cdf2173c6186abd0f51a3f6489aed3f81d42678cb1d6fb", 633616233590772269LL},
    {"d5fa1f44698eb3d8fd22476c91b6db00254a6f94b9de03284d7297bce1062b", 6839175351950593501LL},
    {"e0052a4f7499bee3082d52779cc1e60b30557a9fc4e90e33587da2c7ec11365b", 324723088855937792LL},
    {"eb10355a7fa4c9ee13385d82a7ccf1163b6085aacff4193e6388add2f71c41668b", -5881371542806061671LL},
    {"f61b40658aafd4f91e43688db2d7fc21466b90b5daff24496e93b8dd02274c7196bb", 8291982996170083141LL},
    {"01264b7095badf04294e7398bde2072c51769bc0e50a2f54799ec3e80d32577ca1c6eb",
     3396816591338108028LL},
    {"0c31567ba0c5ea0f34597ea3c8ed12375c81a6cbf0153a5f84a9cef3183d6287acd1f61b",
     2704926916510985981LL},
    {"173c6186abd0f51a3f6489aed3f81d42678cb1d6fb20456a8fb4d9fe23486d92b7dc01264b",
     -6442354085706277606LL},
    {"22476c91b6db00254a6f94b9de03284d7297bce1062b50759abfe4092e53789dc2e70c31567b",
     655365816980806727LL},
    {"2d52779cc1e60b30557a9fc4e90e33587da2c7ec11365b80a5caef14395e83a8cdf2173c6186ab",
     -6337226636263929817LL},
    {"385d82a7ccf1163b6085aacff4193e6388add2f71c41668bb0d5fa1f44698eb3d8fd22476c91b6db",
     -18520900233311729LL},
    {"68656c6c6f", -3758069500696749310LL},
    {"00000001", -4069959284402364209LL},
    {"ffffffffffffffffffffffffffffffffff", -4128212798341382003LL},
    {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2"
     "e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c"
     "5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8"
     "b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9"
     "babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e"
     "8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
     2060892794568774329LL},
    {"0004000000010000016100", 6516349416904725244LL},
    {"0007757365722d3432000004000316a100", 6350391646459598778LL},
    {"0010123e4567e89b42d3a456426614174000000008ffffffffffffffff00", 3267949964298572508LL},
};

static size_t unhex(const char *h, uint8_t *out)
{
    size_t n = 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned x;
        sscanf(h, "%2x", &x);
        out[n++] = (uint8_t)x;
    }
    return n;
}

static void test_tokens(void)
{
    uint8_t key[512];
    for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++) {
        size_t n = unhex(tokens[i].hex, key);
        int64_t t = cqlkey_token(key, n);
        CHECK(t == tokens[i].token, "token of %zu bytes %s: %lld, want %lld", n, tokens[i].hex,
              (long long)t, (long long)tokens[i].token);
    }
    CHECK(cqlkey_token(key, 0) == INT64_MIN, "the empty key is the minimum token");
    uint8_t b[8];
    cqlkey_token_bytes(-2, b);
    CHECK(b[0] == 0xff && b[7] == 0xfe, "token bytes big-endian");
}

static void test_partition(void)
{
    uint8_t one[4] = {0, 0, 0, 1};
    cql_value v[2] = {{one, 4}, {(const uint8_t *)"a", 1}};
    const char *names[] = {"k1", "k2"};
    buf b;
    buf_init(&b, 0);
    cql_parse_error err = {0};
    CHECK(cqlkey_partition(&b, v, names, 1, &err) == 0 && b.len == 4 && memcmp(b.data, one, 4) == 0,
          "one column: its bytes");
    cql_value empty = {one, 0};
    CHECK(cqlkey_partition(&b, &empty, names, 1, &err) == -1, "empty key");
    CHECK_STR(err.msg, "Key may not be empty");
    memset(&err, 0, sizeof err);
    buf_reset(&b);
    CHECK(cqlkey_partition(&b, v, names, 2, &err) == 0, "composite");
    uint8_t want[16];
    size_t n = unhex("0004000000010000016100", want);
    CHECK(b.len == n && memcmp(b.data, want, n) == 0, "composite form");
    CHECK(cqlkey_token((const uint8_t *)b.data, b.len) == 6516349416904725244LL, "composite token");
    cql_value back[2];
    CHECK(cqlkey_partition_split((const uint8_t *)b.data, b.len, 2, back) == 0 &&
              back[0].len == 4 && back[1].len == 1 && back[1].p[0] == 'a',
          "split");
    CHECK(cqlkey_partition_split((const uint8_t *)b.data, b.len - 1, 2, back) == -1, "short");
    CHECK(cqlkey_partition_split((const uint8_t *)b.data, b.len, 3, back) == -1, "too few");
    cql_value nul[2] = {{one, 4}, {NULL, CQL_NULL}};
    buf_reset(&b);
    CHECK(cqlkey_partition(&b, nul, names, 2, &err) == -1, "null part");
    CHECK_STR(err.msg, "Invalid null value for partition key part k2");
    static uint8_t big[70000];
    cql_value huge[2] = {{big, 70000}, {one, 4}};
    memset(&err, 0, sizeof err);
    CHECK(cqlkey_partition(&b, huge, names, 2, &err) == -1, "too long");
    CHECK_STR(err.msg, "Key length of 70000 is longer than maximum of 65535");
    buf_free(&b);
}

/* ---- random values of a type, as wire bytes ---- */

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void random_value(const cql_ctype *t, buf *out, int depth)
{
    uint8_t b[16];
    switch (t->wire.id) {
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_TIMESTAMP: {
        int w = t->wire.id == CQL_TYPE_INT        ? 4
                : t->wire.id == CQL_TYPE_SMALLINT ? 2
                : t->wire.id == CQL_TYPE_TINYINT  ? 1
                                                  : 8;
        uint64_t v = rnd();
        if (rnd() % 4 == 0) v %= 5; /* small values meet often */
        if (rnd() % 4 == 0) v = (uint64_t) - (int64_t)(v % 5);
        for (int i = 0; i < w; i++)
            b[i] = (uint8_t)(v >> (8 * (w - 1 - i)));
        buf_append(out, b, (size_t)w);
        break;
    }
    case CQL_TYPE_DATE:
        cql_int_encode((int32_t)rnd(), b);
        buf_append(out, b, 4);
        break;
    case CQL_TYPE_TIME: {
        uint8_t tb[8];
        cql_time_encode((int64_t)(rnd() % (CQL_TIME_MAX_NS + 1)), tb);
        buf_append(out, tb, 8);
        break;
    }
    case CQL_TYPE_BOOLEAN:
        buf_putc(out, rnd() % 2);
        break;
    case CQL_TYPE_FLOAT: {
        static const uint32_t special[] = {0,           0x80000000u, 0x7f800000u, 0xff800000u,
                                           0x7fc00000u, 0x3f800000u, 0xbf800000u};
        uint32_t v = rnd() % 3 ? (uint32_t)rnd() : special[rnd() % 7];
        float f;
        memcpy(&f, &v, 4);
        cql_float_encode(f, b);
        buf_append(out, b, 4);
        break;
    }
    case CQL_TYPE_DOUBLE: {
        static const uint64_t special[] = {0,
                                           0x8000000000000000ull,
                                           0x7ff0000000000000ull,
                                           0xfff0000000000000ull,
                                           0x7ff8000000000000ull,
                                           0x3ff0000000000000ull};
        uint64_t v = rnd() % 3 ? rnd() : special[rnd() % 6];
        double d;
        memcpy(&d, &v, 8);
        cql_double_encode(d, b);
        buf_append(out, b, 8);
        break;
    }
    case CQL_TYPE_UUID:
    case CQL_TYPE_TIMEUUID: {
        for (int i = 0; i < 16; i++)
            b[i] = (uint8_t)rnd();
        if (rnd() % 2) memset(b + 8, rnd() % 2 ? 0x00 : 0xff, 4);
        int version = t->wire.id == CQL_TYPE_TIMEUUID || rnd() % 2 ? 1 : (int)(rnd() % 5);
        b[6] = (uint8_t)(version << 4 | (b[6] & 15));
        buf_append(out, b, 16);
        break;
    }
    case CQL_TYPE_VARINT: {
        size_t n = 1 + rnd() % 12;
        for (size_t i = 0; i < n; i++)
            buf_putc(out, (uint8_t)(i == 0 && rnd() % 3 == 0 ? (rnd() % 2 ? 0x00 : 0xff) : rnd()));
        break;
    }
    case CQL_TYPE_DECIMAL: {
        cql_int_encode((int32_t)(rnd() % 21) - 10, b);
        buf_append(out, b, 4);
        size_t n = 1 + rnd() % 6;
        for (size_t i = 0; i < n; i++)
            buf_putc(out, (uint8_t)(rnd() % 3 == 0 ? 0 : rnd()));
        break;
    }
    case CQL_TYPE_VARCHAR:
    case CQL_TYPE_BLOB:
    case CQL_TYPE_INET: {
        size_t n = t->wire.id == CQL_TYPE_INET ? (rnd() % 2 ? 4 : 16) : rnd() % 6;
        for (size_t i = 0; i < n; i++) {
            uint8_t c = (uint8_t)(rnd() % 4 == 0 ? 0 : rnd() % 4 == 0 ? 0xff : 'a' + rnd() % 3);
            if (t->wire.id == CQL_TYPE_VARCHAR && c == 0xff) c = 'z';
            buf_putc(out, c);
        }
        break;
    }
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_MAP: {
        int pairs = t->wire.id == CQL_TYPE_MAP;
        size_t n = depth > 2 ? 0 : rnd() % 4;
        buf raw;
        buf_init(&raw, 0);
        size_t at = cql_collection_begin(&raw);
        for (size_t i = 0; i < n * (pairs ? 2 : 1); i++) {
            buf e;
            buf_init(&e, 0);
            random_value(t->args[pairs ? i % 2 : 0], &e, depth + 1);
            cql_element_put(&raw, e.data, (int32_t)e.len);
            buf_free(&e);
        }
        cql_collection_end(&raw, at, (uint32_t)n);
        cqlval_canonical(t, (const uint8_t *)raw.data, raw.len, out);
        buf_free(&raw);
        break;
    }
    case CQL_TYPE_TUPLE:
    case CQL_TYPE_UDT:
        for (uint16_t i = 0; i < t->wire.n; i++) {
            if (rnd() % 5 == 0) {
                cql_element_put(out, NULL, -1);
                continue;
            }
            buf e;
            buf_init(&e, 0);
            random_value(t->args[i], &e, depth + 1);
            cql_element_put(out, e.data, (int32_t)e.len);
            buf_free(&e);
        }
        break;
    }
}

static int sign(int c)
{
    return (c > 0) - (c < 0);
}

static void test_order(void)
{
    static const char *const types[] = {"int",
                                        "bigint",
                                        "smallint",
                                        "tinyint",
                                        "timestamp",
                                        "date",
                                        "time",
                                        "boolean",
                                        "float",
                                        "double",
                                        "uuid",
                                        "timeuuid",
                                        "varint",
                                        "decimal",
                                        "text",
                                        "blob",
                                        "inet",
                                        "frozen<list<int>>",
                                        "frozen<set<text>>",
                                        "frozen<map<int, blob>>",
                                        "frozen<tuple<int, text, frozen<list<bigint>>>>",
                                        "frozen<list<frozen<tuple<varint, double>>>>"};
    arena a;
    arena_init(&a, 0);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        cql_parse_error err = {0};
        const cql_ctype *t = NULL;
        CHECK(cqltype_parse(&a, types[ti], strlen(types[ti]), NULL, &t, &err) == 0, "%s",
              types[ti]);
        if (!t) continue;
        enum { N = 60 };
        buf v[N], asc[N], desc[N];
        int bad = 0;
        for (int i = 0; i < N; i++) {
            buf_init(&v[i], 0);
            buf_init(&asc[i], 0);
            buf_init(&desc[i], 0);
            if (i > 0 && rnd() % 8 == 0) { /* an empty value now and then (where valid) */
                cql_parse_error e2 = {0};
                if (cqlval_validate(t, NULL, 0, &e2) == 0) goto encode;
            }
            random_value(t, &v[i], 0);
        encode:;
            cqlkey_col ca = {t, 0}, cd = {t, 1};
            memset(&err, 0, sizeof err);
            int ok = cqlkey_put(&asc[i], &ca, (const uint8_t *)v[i].data, v[i].len, &err) == 0 &&
                     cqlkey_put(&desc[i], &cd, (const uint8_t *)v[i].data, v[i].len, &err) == 0;
            CHECK(ok, "%s: encode: %s", types[ti], err.msg);
            if (!ok) bad = 1;
            /* decodes to an equal value, the whole component read */
            for (int d = 0; d < 2 && ok; d++) {
                buf back;
                buf_init(&back, 0);
                size_t pos = 0;
                const buf *k = d ? &desc[i] : &asc[i];
                int r =
                    cqlkey_get((const uint8_t *)k->data, k->len, &pos, d ? &cd : &ca, &back, &err);
                CHECK(r == 0 && pos == k->len, "%s: decode %s: %s", types[ti], d ? "desc" : "asc",
                      err.msg);
                CHECK(r == 0 && cqlval_compare(t, (const uint8_t *)back.data, back.len,
                                               (const uint8_t *)v[i].data, v[i].len) == 0,
                      "%s: decoded value differs", types[ti]);
                cql_parse_error e3 = {0};
                CHECK(r == 0 && cqlval_validate(t, (const uint8_t *)back.data, back.len, &e3) == 0,
                      "%s: decoded value invalid: %s", types[ti], e3.msg);
                buf_free(&back);
            }
        }
        for (int i = 0; i < N && !bad; i++)
            for (int j = 0; j < N; j++) {
                int c = sign(cqlval_compare(t, (const uint8_t *)v[i].data, v[i].len,
                                            (const uint8_t *)v[j].data, v[j].len));
                size_t n = asc[i].len < asc[j].len ? asc[i].len : asc[j].len;
                int ba = memcmp(asc[i].data, asc[j].data, n);
                ba = ba ? sign(ba) : sign((int)asc[i].len - (int)asc[j].len);
                n = desc[i].len < desc[j].len ? desc[i].len : desc[j].len;
                int bd = memcmp(desc[i].data, desc[j].data, n);
                bd = bd ? sign(bd) : sign((int)desc[i].len - (int)desc[j].len);
                CHECK(ba == c, "%s: asc bytes order %d, values %d (#%d #%d)", types[ti], ba, c, i,
                      j);
                CHECK(bd == -c, "%s: desc bytes order %d, values %d", types[ti], bd, c);
                CHECK(asc[i].data[0] != 0 && (uint8_t)desc[i].data[0] != 0xff, "first byte");
            }
        for (int i = 0; i < N; i++) {
            buf_free(&v[i]);
            buf_free(&asc[i]);
            buf_free(&desc[i]);
        }
    }
    cqlkey_col dur = {cqltype_native(CQL_TYPE_DURATION), 0};
    buf b;
    buf_init(&b, 0);
    cql_parse_error err = {0};
    CHECK(cqlkey_put(&b, &dur, (const uint8_t *)"\x02\x00\x02", 3, &err) == -1, "duration");
    memset(&err, 0, sizeof err);
    cqlkey_col i32 = {cqltype_native(CQL_TYPE_INT), 0};
    CHECK(cqlkey_put(&b, &i32, (const uint8_t *)"\x01", 1, &err) == -1, "bad int");
    CHECK_STR(err.msg, "Expected 4 or 0 byte int (1)");
    /* malformed stored keys are refused, not read past their end */
    static const char *const junk[] = {"", "03", "0380", "04", "03800000", "030000000100"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        uint8_t k[16];
        size_t n = unhex(junk[i], k), pos = 0;
        memset(&err, 0, sizeof err);
        buf_reset(&b);
        cqlkey_col c = {cqltype_native(CQL_TYPE_INT), 0};
        int r = cqlkey_get(k, n, &pos, &c, &b, &err);
        if (i < 5)
            CHECK(r == -1 && err.code == CQL_ERR_SERVER, "junk %s", junk[i]);
        else
            CHECK(r == 0 && pos == 5, "one int and more");
    }
    buf_free(&b);
    arena_free(&a);
}

/* ---- ranges over a table of rows (a int ASC, b text DESC) ---- */

static cqlkey_col cols[2];
enum { NA = 4, NB = 4 };
static const char *const bvals[NB] = {"", "x", "y", "z"};

static cql_value iv(int32_t x, uint8_t *b)
{
    cql_int_encode(x, b);
    cql_value v = {b, 4};
    return v;
}

static cql_value tv(const char *s)
{
    cql_value v = {(const uint8_t *)s, (int32_t)strlen(s)};
    return v;
}

/* Tuple comparison of a row's (a, b) prefix of n columns with values. */
static int row_cmp(int32_t a, const char *b, const cql_value *vals, size_t from, size_t n)
{
    uint8_t ab[4];
    cql_value row[2] = {iv(a, ab), tv(b)};
    for (size_t i = 0; i < n; i++) {
        int c = cqlval_compare(cols[from + i].type, row[from + i].p, (size_t)row[from + i].len,
                               vals[i].p, (size_t)vals[i].len);
        if (c) return c;
    }
    return 0;
}

typedef struct rcase {
    const char *what;
    size_t neq;
    int eq_a;
    const char *eq_b;
    size_t nlo;
    int lo_a;
    const char *lo_b;
    int lo_incl;
    size_t nhi;
    int hi_a;
    const char *hi_b;
    int hi_incl;
} rcase;

static const rcase rcases[] = {
    {"all rows", 0, 0, NULL, 0, 0, NULL, 0, 0, 0, NULL, 0},
    {"a = 2", 1, 2, NULL, 0, 0, NULL, 0, 0, 0, NULL, 0},
    {"a = 1 AND b = 'y'", 2, 1, "y", 0, 0, NULL, 0, 0, 0, NULL, 0},
    {"a > 1", 0, 0, NULL, 1, 1, NULL, 0, 0, 0, NULL, 0},
    {"a >= 2", 0, 0, NULL, 1, 2, NULL, 1, 0, 0, NULL, 0},
    {"a < 2", 0, 0, NULL, 0, 0, NULL, 0, 1, 2, NULL, 0},
    {"a <= 2 AND a > 0", 0, 0, NULL, 1, 0, NULL, 0, 1, 2, NULL, 1},
    {"a > 1 AND a < 3", 0, 0, NULL, 1, 1, NULL, 0, 1, 3, NULL, 0},
    {"a > 3", 0, 0, NULL, 1, 3, NULL, 0, 0, 0, NULL, 0},
    {"a = 2 AND b > 'x'", 1, 2, NULL, 1, 0, "x", 0, 0, 0, NULL, 0},
    {"a = 2 AND b >= 'x'", 1, 2, NULL, 1, 0, "x", 1, 0, 0, NULL, 0},
    {"a = 2 AND b <= 'y'", 1, 2, NULL, 0, 0, NULL, 0, 1, 0, "y", 1},
    {"a = 2 AND b < 'y' AND b > ''", 1, 2, NULL, 1, 0, "", 0, 1, 0, "y", 0},
    {"(a, b) > (1, 'y')", 0, 0, NULL, 2, 1, "y", 0, 0, 0, NULL, 0},
    {"(a, b) >= (2, 'y')", 0, 0, NULL, 2, 2, "y", 1, 0, 0, NULL, 0},
    {"(a, b) < (3, 'x')", 0, 0, NULL, 0, 0, NULL, 0, 2, 3, "x", 0},
    {"(a, b) <= (0, '')", 0, 0, NULL, 0, 0, NULL, 0, 2, 0, "", 1},
    {"(a, b) > (1, 'y') AND (a, b) < (3, 'y')", 0, 0, NULL, 2, 1, "y", 0, 2, 3, "y", 0},
    {"(a, b) >= (1, 'x') AND a < 2", 0, 0, NULL, 2, 1, "x", 1, 1, 2, NULL, 0},
};

static void test_ranges(void)
{
    cols[0].type = cqltype_native(CQL_TYPE_INT);
    cols[0].desc = 0;
    cols[1].type = cqltype_native(CQL_TYPE_VARCHAR);
    cols[1].desc = 1;
    /* every row's key, and the static row's empty key */
    buf keys[NA * NB + 2];
    int32_t ka[NA * NB];
    const char *kb[NA * NB];
    size_t nk = 0;
    for (int32_t a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++) {
            uint8_t ab[4];
            cql_value v[2] = {iv(a, ab), tv(bvals[b])};
            buf_init(&keys[nk], 0);
            cql_parse_error err = {0};
            CHECK(cqlkey_encode(&keys[nk], cols, 2, v, &err) == 0, "encode row");
            /* it decodes back */
            buf back;
            buf_init(&back, 0);
            size_t at[3];
            CHECK(cqlkey_decode((const uint8_t *)keys[nk].data, keys[nk].len, cols, 2, &back, at,
                                &err) == 0 &&
                      at[1] - at[0] == 4 && at[2] - at[1] == strlen(bvals[b]) &&
                      memcmp(back.data + at[1], bvals[b], at[2] - at[1]) == 0,
                  "decode row");
            buf_free(&back);
            ka[nk] = a;
            kb[nk] = bvals[b];
            nk++;
        }
    buf_init(&keys[nk], 0); /* the static row: the empty key, or the one byte 0x00 */
    buf_init(&keys[nk + 1], 0);
    buf_putc(&keys[nk + 1], 0x00);
    for (size_t ci = 0; ci < sizeof rcases / sizeof rcases[0]; ci++) {
        const rcase *c = &rcases[ci];
        uint8_t e0[4], l0[4], h0[4];
        cql_value eq[2] = {iv(c->eq_a, e0), tv(c->eq_b ? c->eq_b : "")};
        cql_value lo[2], hi[2];
        size_t from = c->neq;
        /* a bound's values start at column neq */
        if (from == 0) {
            lo[0] = iv(c->lo_a, l0);
            lo[1] = tv(c->lo_b ? c->lo_b : "");
            hi[0] = iv(c->hi_a, h0);
            hi[1] = tv(c->hi_b ? c->hi_b : "");
        } else {
            lo[0] = tv(c->lo_b ? c->lo_b : "");
            hi[0] = tv(c->hi_b ? c->hi_b : "");
        }
        cqlkey_bound lb = {lo, c->nlo, c->lo_incl}, ub = {hi, c->nhi, c->hi_incl};
        cqlkey_ranges rs;
        cql_parse_error err = {0};
        int rc = cqlkey_ranges_for(cols, 2, eq, c->neq, c->nlo ? &lb : NULL, c->nhi ? &ub : NULL,
                                   &rs, &err);
        CHECK(rc == 0, "%s: %s", c->what, err.msg);
        if (rc) continue;
        for (size_t i = 1; i < rs.n; i++)
            CHECK(!rs.r[i - 1].no_hi &&
                      memcmp(rs.r[i - 1].hi.data, rs.r[i].lo.data,
                             rs.r[i - 1].hi.len < rs.r[i].lo.len ? rs.r[i - 1].hi.len
                                                                 : rs.r[i].lo.len) <= 0,
                  "%s: ranges sorted and disjoint", c->what);
        for (size_t k = 0; k <= nk + 1; k++) {
            int in = 0;
            for (size_t i = 0; i < rs.n; i++) {
                const cqlkey_range *r = &rs.r[i];
                size_t n = keys[k].len < r->lo.len ? keys[k].len : r->lo.len;
                int cl = n ? memcmp(keys[k].data, r->lo.data, n) : 0;
                if (!cl) cl = keys[k].len < r->lo.len ? -1 : keys[k].len > r->lo.len;
                int ch = -1;
                if (!r->no_hi) {
                    n = keys[k].len < r->hi.len ? keys[k].len : r->hi.len;
                    ch = n ? memcmp(keys[k].data, r->hi.data, n) : 0;
                    if (!ch) ch = keys[k].len < r->hi.len ? -1 : keys[k].len > r->hi.len;
                }
                if (cl >= 0 && ch < 0) in = 1;
            }
            if (k >= nk) {
                CHECK(!in, "%s: the static row is in a range", c->what);
                continue;
            }
            int want = 1;
            if (c->neq) want = want && row_cmp(ka[k], kb[k], eq, 0, c->neq) == 0;
            if (c->nlo) {
                int cmp = row_cmp(ka[k], kb[k], lo, from, c->nlo);
                want = want && (c->lo_incl ? cmp >= 0 : cmp > 0);
            }
            if (c->nhi) {
                int cmp = row_cmp(ka[k], kb[k], hi, from, c->nhi);
                want = want && (c->hi_incl ? cmp <= 0 : cmp < 0);
            }
            CHECK(in == want, "%s: row (%d, '%s') %s", c->what, ka[k], kb[k],
                  want ? "missing" : "selected");
        }
        cqlkey_ranges_free(&rs);
    }
    for (size_t k = 0; k <= nk + 1; k++)
        buf_free(&keys[k]);
    /* a slice past the columns is refused */
    uint8_t b4[4];
    cql_value x[3] = {iv(1, b4), tv("a"), tv("b")};
    cqlkey_bound too_many = {x, 3, 0};
    cqlkey_ranges rs;
    cql_parse_error err = {0};
    CHECK(cqlkey_ranges_for(cols, 2, NULL, 0, &too_many, NULL, &rs, &err) == -1, "too many");
}

int main(void)
{
    test_tokens();
    test_partition();
    test_order();
    test_ranges();
    return check_report("test_cqlval_keyenc");
}
