/* test_put_fast.c — a PutItem or GetItem read by the decoder (src/ops/plain.c) answers
 * and stores what the whole way does.
 *
 * Two tables of one schema (pk S, sk N). Each request goes to "fast" through qr_call, the
 * decoder's verdict noted (plain_decode), and to "slow" with "ReturnValues":"NONE" added,
 * which the decoder always declines. Answers must be the
 * same, and so must the items read back: on hand-picked requests, which must take the
 * fast path or decline as expected, and on thousands of random ones mixing plain items
 * with numbers in every spelling, text with escapes or non-ASCII bytes, other types,
 * wrong shapes, missing, mistyped and oversized keys, repeated names and extra
 * parameters. At the end both tables must count the same items and bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/ops.h"
#include "quarry.h"

#include "check.h"

static qr_db *db;
static int fast_taken, declined;

static void create(const char *name)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"TableName\":\"%s\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
             "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],\"AttributeDefinitions\":["
             "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\","
             "\"AttributeType\":\"N\"}],"
             "\"BillingMode\":\"PAY_PER_REQUEST\"}",
             name);
    qr_response r;
    CHECK(qr_call(db, "CreateTable", body, strlen(body), &r) == QR_OK, "CreateTable %s: %s", name,
          r.body);
    qr_response_free(&r);
}

/* The decoder's verdict on a PutItem body: 1 if it reads it (the plain case), 0 if not. */
static int decodes(const char *body)
{
    plain_request d;
    if (!plain_decode(db, PLAIN_PUT, body, strlen(body), &d)) return 0;
    plain_free(&d);
    catalog_release(db, d.t);
    return 1;
}

/* PutItem of item (JSON text) into "fast" the dispatcher's way; returns the decoder's
 * verdict (1 taken, 0 declined) and the answer in *r. */
static int put_fast(const char *item, const char *extra, qr_response *r)
{
    char *body = malloc(strlen(item) + strlen(extra) + 64);
    sprintf(body, "{\"TableName\":\"fast\",\"Item\":%s%s}", item, extra);
    int fast = decodes(body);
    qr_call(db, "PutItem", body, strlen(body), r);
    CHECK(!fast || r->http_status == 200, "a decoded write failed: %s", r->body);
    free(body);
    return fast;
}

static void put_slow(const char *item, const char *extra, qr_response *r)
{
    char *body = malloc(strlen(item) + strlen(extra) + 64);
    sprintf(body, "{\"TableName\":\"slow\",\"Item\":%s%s,\"ReturnValues\":\"NONE\"}", item, extra);
    qr_call(db, "PutItem", body, strlen(body), r);
    free(body);
}

static char *get(const char *table, const char *key)
{
    char *body = malloc(strlen(key) + 64);
    sprintf(body, "{\"TableName\":\"%s\",\"Key\":%s}", table, key);
    qr_response r;
    qr_call(db, "GetItem", body, strlen(body), &r);
    free(body);
    char *out = r.body;
    r.body = NULL;
    qr_response_free(&r);
    return out;
}

/* Puts item both ways and compares; key (JSON text) reads it back when it was written.
 * want_fast: 1 or 0 to require the verdict, -1 for either. */
static void compare(const char *item, const char *extra, const char *key, int want_fast)
{
    qr_response f, s;
    int fast = put_fast(item, extra, &f);
    put_slow(item, extra, &s);
    fast ? fast_taken++ : declined++;
    if (want_fast >= 0)
        CHECK(fast == want_fast, "fast path %s for %s%s", fast ? "taken" : "declined", item, extra);
    CHECK(f.http_status == s.http_status && f.body && s.body && strcmp(f.body, s.body) == 0,
          "answers differ for %s%s\n  fast: %d %s\n  slow: %d %s", item, extra, f.http_status,
          f.body, s.http_status, s.body);
    if (fast)
        CHECK(f.http_status == 200 && strcmp(f.tables, "fast") == 0, "fast answer %d, tables '%s'",
              f.http_status, f.tables);
    if (key && f.http_status == 200) {
        char *a = get("fast", key), *b = get("slow", key);
        CHECK(a && b && strcmp(a, b) == 0, "stored items differ for %s\n  fast: %s\n  slow: %s",
              item, a, b);
        free(a);
        free(b);
    }
    qr_response_free(&f);
    qr_response_free(&s);
}

static void test_hand_picked(void)
{
    const char *key = "{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}";
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}", "", key, 1);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"01.000\"},\"n\":{\"N\":\"-0.50e1\"},\"s\":{"
            "\"S\":\"\"}}",
            "", key, 1);
    compare("{ \"sk\" : {\"N\":\"1\"} , \"x y\":{\"S\":\"a b/c#~\"},\"pk\":{\"S\":\"a\"}}", "", key,
            1);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"n\":{\"N\":\"9.9E+125\"}}", "", key, 1);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"n\":{\"N\":\"1e126\"}}", "", key, 0);
    /* declined: each is something the fast path leaves to op_put_item */
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"b\":{\"BOOL\":true}}", "", key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"m\":{\"M\":{\"x\":{\"S\":\"y\"}}}}", "",
            key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"t\":{\"S\":\"caf\\u00e9\"}}", "", key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"t\":{\"S\":\"caf\xc3\xa9\"}}", "", key,
            0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"t\":{\"S\":\"q\\\"q\"}}", "", key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"t\":{\"S\":[\"x\"]}}", "", key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"t\":{\"S\":5}}", "", key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"t\":{\"S\":\"x\",\"N\":\"1\"}}", "", key,
            0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"t\":{}}", "", key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"n\":{\"N\":\"1e126x\"}}", "", key, 0);
    compare(
        "{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"n\":{\"N\":\"1e126\"},\"n\":{\"N\":\"2\"}}",
        "", key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"\":{\"S\":\"x\"}}", "", key, 0);
    compare("{\"pk\":{\"S\":\"\"},\"sk\":{\"N\":\"1\"}}", "", key, 0);
    compare("{\"pk\":{\"N\":\"1\"},\"sk\":{\"N\":\"1\"}}", "", key, 0);
    compare("{\"sk\":{\"N\":\"1\"}}", "", key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}", ",\"ReturnConsumedCapacity\":\"NONE\"",
            key, 0);
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}", ",\"Item\":{}", key, 0);
    compare("[]", "", NULL, 0);
    compare("\"x\"", "", NULL, 0);
    /* YAJL's looser readings of the text */
    compare("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}\v", "", key, 0);
    const char *tail[] = {
        "{\"TableName\":\"fast\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}}\"",
        "{\"TableName\":\"fast\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}} x",
        "{\"TableName\":\"nope\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}}",
        "{\"TableName\":\"arn:aws:dynamodb:ddblocal:000000000000:table/"
        "fast\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}}",
        "{\"TableName\":\"fast\",\"TableName\":\"fast\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{"
        "\"N\":\"1\"}}}"};
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        CHECK(decodes(tail[i]) == 0, "not declined: %s", tail[i]);
}

/* GetItem of key (JSON text, with extra members after it) from "fast" through qr_call and,
 * with ReturnConsumedCapacity NONE added (which the decoder declines), the whole way: the
 * answers must be the same. want_plain: 1 or 0 to require the decoder's verdict, -1 for
 * either. */
static int gets_decoded, gets_declined;
static void compare_get(const char *key, const char *extra, int want_plain)
{
    char *plain = malloc(strlen(key) + strlen(extra) + 96),
         *whole = malloc(strlen(key) + strlen(extra) + 128);
    sprintf(plain, "{\"TableName\":\"fast\",\"Key\":%s%s}", key, extra);
    sprintf(whole, "{\"TableName\":\"fast\",\"Key\":%s%s,\"ReturnConsumedCapacity\":\"NONE\"}", key,
            extra);
    plain_request d;
    int decoded = plain_decode(db, PLAIN_GET, plain, strlen(plain), &d);
    if (decoded) {
        plain_free(&d);
        catalog_release(db, d.t);
    }
    decoded ? gets_decoded++ : gets_declined++;
    CHECK(plain_decode(db, PLAIN_GET, whole, strlen(whole), &d) == 0, "decoded: %s", whole);
    if (want_plain >= 0)
        CHECK(decoded == want_plain, "GetItem %s: %s", decoded ? "decoded" : "declined", plain);
    qr_response a, b;
    qr_call(db, "GetItem", plain, strlen(plain), &a);
    qr_call(db, "GetItem", whole, strlen(whole), &b);
    CHECK(a.http_status == b.http_status && a.body && b.body && strcmp(a.body, b.body) == 0,
          "GetItem answers differ for %s%s\n  plain: %d %s\n  whole: %d %s", key, extra,
          a.http_status, a.body, b.http_status, b.body);
    qr_response_free(&a);
    qr_response_free(&b);
    free(plain);
    free(whole);
}

static void test_get_hand_picked(void)
{
    const char *key = "{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}";
    compare_get(key, "", 1);
    compare_get(key, ",\"ConsistentRead\":true", 1);
    compare_get(key, ",\"ConsistentRead\":false", 1);
    compare_get("{\"sk\":{\"N\":\"1.0\"},\"pk\":{\"S\":\"a\"}}", "", 1);
    compare_get("{\"pk\":{\"S\":\"zz\"},\"sk\":{\"N\":\"9\"}}", "", 1); /* absent */
    /* declined: each is something the decoder leaves to the whole way */
    compare_get(key, ",\"ConsistentRead\":true,\"ConsistentRead\":false", 0);
    compare_get(key, ",\"ConsistentRead\":\"true\"", 0);
    compare_get(key, ",\"ConsistentRead\":null", 0);
    compare_get(key, ",\"ProjectionExpression\":\"pk\"", 0);
    compare_get(key, ",\"Item\":{}", 0);
    compare_get("{\"pk\":{\"S\":\"a\"}}", "", 0);
    compare_get("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"x\":{\"S\":\"y\"}}", "", 0);
    compare_get("{\"pk\":{\"N\":\"1\"},\"sk\":{\"N\":\"1\"}}", "", 0);
    compare_get("{\"pk\":{\"S\":\"\"},\"sk\":{\"N\":\"1\"}}", "", 0);
    compare_get("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1x\"}}", "", 0);
    compare_get("{\"pk\":{\"S\":\"caf\\u00e9\"},\"sk\":{\"N\":\"1\"}}", "", 0);
    compare_get("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}", ",\"TableName\":\"x\"", 0);
}

/* ---- random requests ---- */

static void add(char *out, size_t cap, const char *s)
{
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "%s", s);
}

static const char *random_number(unsigned *seed)
{
    static const char *const spellings[] = {"0",
                                            "7",
                                            "-7",
                                            "007",
                                            "1.50",
                                            "-0",
                                            "0.0",
                                            "1e2",
                                            "1E-3",
                                            "12.5e+3",
                                            ".5",
                                            "5.",
                                            "-.5",
                                            "1e126",
                                            "1e-130",
                                            "123456789012345678901234567890123456789",
                                            "9.99999999999999999999999999999999999999E+125",
                                            "abc",
                                            "",
                                            " 5",
                                            "1e",
                                            "--1",
                                            "0x10",
                                            "Infinity",
                                            "3.14159",
                                            "100000000000000000000000"};
    return spellings[rand_r(seed) % (sizeof spellings / sizeof spellings[0])];
}

static const char *random_text(unsigned *seed)
{
    static const char *const texts[] = {
        "",        "x",      "hello world", "user#00042",
        "a/b:c~d", "  ",     "{}[]",        "caf\xc3\xa9",
        "q\\\"q",  "tab\\t", "\\u0041",     "payload-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};
    return texts[rand_r(seed) % (sizeof texts / sizeof texts[0])];
}

static const char *random_name(unsigned *seed)
{
    static const char *const names[] = {"a",
                                        "b",
                                        "name",
                                        "x y",
                                        "n",
                                        "payload",
                                        "e",
                                        "",
                                        "k\\\"q",
                                        "\xc3\xa9",
                                        "pk",
                                        "sk",
                                        "long_attribute_name_0123456789"};
    return names[rand_r(seed) % (sizeof names / sizeof names[0])];
}

static void random_value(unsigned *seed, char *out, size_t cap)
{
    char v[256];
    int kind = rand_r(seed) % 16;
    if (kind < 7)
        snprintf(v, sizeof v, "{\"S\":\"%s\"}", random_text(seed));
    else if (kind < 13)
        snprintf(v, sizeof v, "{\"N\":\"%s\"}", random_number(seed));
    else {
        static const char *const others[] = {"{\"BOOL\":true}",
                                             "{\"NULL\":true}",
                                             "{\"B\":\"AAAA\"}",
                                             "{\"M\":{}}",
                                             "{\"L\":[]}",
                                             "{\"SS\":[\"a\"]}",
                                             "{\"S\":[\"x\"]}",
                                             "{\"S\":5}",
                                             "{\"S\":\"a\",\"N\":\"1\"}",
                                             "{}",
                                             "{\"N\":7}",
                                             "null",
                                             "{\"S\":null}"};
        snprintf(v, sizeof v, "%s", others[rand_r(seed) % (sizeof others / sizeof others[0])]);
    }
    add(out, cap, v);
}

static void test_random(int n)
{
    unsigned seed = 20261201;
    char item[4096], key[400], extra[64];
    for (int i = 0; i < n; i++) {
        item[0] = '\0';
        key[0] = '\0';
        int pk_kind = rand_r(&seed) % 12, sk_kind = rand_r(&seed) % 10;
        char pk[2200], sk[128];
        if (pk_kind == 0)
            snprintf(pk, sizeof pk, "{\"N\":\"1\"}");
        else if (pk_kind == 1)
            snprintf(pk, sizeof pk, "{\"S\":\"\"}");
        else if (pk_kind == 2) {
            snprintf(pk, sizeof pk, "{\"S\":\"");
            for (int k = 0; k < 2049; k++)
                add(pk, sizeof pk, "p");
            add(pk, sizeof pk, "\"}");
        } else
            snprintf(pk, sizeof pk, "{\"S\":\"p%d\"}", rand_r(&seed) % 50);
        if (sk_kind == 0)
            snprintf(sk, sizeof sk, "{\"S\":\"1\"}");
        else
            snprintf(sk, sizeof sk, "{\"N\":\"%s\"}", sk_kind < 4 ? random_number(&seed) : "42");
        add(item, sizeof item, "{");
        int first = 1, others = rand_r(&seed) % 6, at_pk = rand_r(&seed) % (others + 1),
            at_sk = rand_r(&seed) % (others + 1);
        int drop = rand_r(&seed) % 20; /* 0: no pk, 1: no sk */
        for (int a = 0; a <= others; a++) {
            char part[2400];
            if (a == at_pk && drop != 0) {
                snprintf(part, sizeof part, "%s\"pk\":%s", first ? "" : ",", pk);
                add(item, sizeof item, part);
                first = 0;
            }
            if (a == at_sk && drop != 1) {
                snprintf(part, sizeof part, "%s\"sk\":%s", first ? "" : ",", sk);
                add(item, sizeof item, part);
                first = 0;
            }
            if (a < others) {
                snprintf(part, sizeof part, "%s\"%s\":", first ? "" : ",", random_name(&seed));
                add(item, sizeof item, part);
                random_value(&seed, item, sizeof item);
                first = 0;
            }
        }
        add(item, sizeof item, "}");
        snprintf(key, sizeof key, "{\"pk\":%.200s,\"sk\":%.100s}", pk, sk);
        snprintf(extra, sizeof extra, "%s",
                 rand_r(&seed) % 10 == 0 ? ",\"ReturnItemCollectionMetrics\":\"NONE\"" : "");
        compare(item, extra, strlen(pk) < 200 ? key : NULL, -1);
        if (strlen(pk) < 200) {
            static const char *const get_extras[] = {"", ",\"ConsistentRead\":true",
                                                     ",\"ConsistentRead\":false"};
            compare_get(key, get_extras[rand_r(&seed) % 3], -1);
        }
    }
}

static long described(const char *table, const char *field)
{
    char body[64];
    snprintf(body, sizeof body, "{\"TableName\":\"%s\"}", table);
    qr_response r;
    qr_call(db, "DescribeTable", body, strlen(body), &r);
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", field);
    const char *p = r.body ? strstr(r.body, pat) : NULL;
    long v = p ? atol(p + strlen(pat)) : -1;
    qr_response_free(&r);
    return v;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4000;
    char dir[] = "/tmp/quarry-putfast-XXXXXX";
    CHECK_THAT(mkdtemp(dir) != NULL);
    char *err = NULL;
    qr_options o = {.no_sync = 1};
    CHECK(qr_open(dir, &o, &db, &err) == QR_OK, "open: %s", err);
    create("fast");
    create("slow");
    test_hand_picked();
    test_get_hand_picked();
    test_random(n);
    CHECK(gets_decoded > n / 10 && gets_declined > n / 10, "GetItem decoded %d times, declined %d",
          gets_decoded, gets_declined);
    CHECK(fast_taken > n / 10 && declined > n / 10, "fast path taken %d times, declined %d",
          fast_taken, declined);
    CHECK(described("fast", "ItemCount") == described("slow", "ItemCount") &&
              described("fast", "TableSizeBytes") == described("slow", "TableSizeBytes"),
          "tables differ: %ld items of %ld bytes against %ld of %ld",
          described("fast", "ItemCount"), described("fast", "TableSizeBytes"),
          described("slow", "ItemCount"), described("slow", "TableSizeBytes"));
    printf(
        "test_put_fast: fast path taken %d times, declined %d; GetItem decoded %d, declined %d\n",
        fast_taken, declined, gets_decoded, gets_declined);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_put_fast");
}
