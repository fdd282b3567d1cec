/* test_jsonread.c — json_read reads every text exactly as json_loadb does.
 *
 * Each text, hand-picked at the edges where YAJL and jansson differ or mutated at random
 * from request-shaped seeds, is read by both; the values must be equal in type, content
 * and key order, and a refused text must get jansson's error, word for word and position
 * for position. The fast path must also take the requests it exists for. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonread.h"

#include "check.h"

static const size_t flag_sets[] = {0, JSON_ALLOW_NUL, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                                   JSON_DECODE_ANY, JSON_REJECT_DUPLICATES};

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void same_as_jansson(const char *text, size_t len)
{
    for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
        size_t flags = flag_sets[f];
        json_error_t ours, theirs;
        memset(&ours, 0, sizeof ours);
        memset(&theirs, 0, sizeof theirs);
        json_t *a = json_read(text, len, flags, &ours), *b = json_loadb(text, len, flags, &theirs);
        if (a && b) {
            char *da = dump(a), *db = dump(b);
            CHECK(json_equal(a, b) && da && db && strcmp(da, db) == 0,
                  "flags %zu: '%.*s' read as %s, jansson %s", flags, (int)(len < 200 ? len : 200),
                  text, da ? da : "?", db ? db : "?");
            free(da);
            free(db);
        } else {
            CHECK(a == NULL && b == NULL, "flags %zu: '%.*s' read %s by json_read, %s by jansson",
                  flags, (int)(len < 200 ? len : 200), text, a ? "taken" : "refused",
                  b ? "taken" : "refused");
            if (a == NULL && b == NULL)
                CHECK(strcmp(ours.text, theirs.text) == 0 && ours.line == theirs.line &&
                          ours.column == theirs.column && ours.position == theirs.position,
                      "flags %zu: '%.*s' error '%s' %d:%d, jansson '%s' %d:%d", flags,
                      (int)(len < 200 ? len : 200), text, ours.text, ours.line, ours.column,
                      theirs.text, theirs.line, theirs.column);
        }
        json_decref(a);
        json_decref(b);
    }
}

static void same(const char *text)
{
    same_as_jansson(text, strlen(text));
}

/* The texts the fast path exists for must not fall back. */
static void fast(const char *text, size_t flags)
{
    json_t *v = json_read_fast(text, strlen(text), flags);
    CHECK(v != NULL, "fast path declined '%s'", text);
    json_decref(v);
    same(text);
}

static void nested(int depth, char open, char close)
{
    size_t n = (size_t)depth * 2;
    char *s = malloc(n + 1);
    memset(s, open, (size_t)depth);
    memset(s + depth, close, (size_t)depth);
    s[n] = '\0';
    same(s);
    free(s);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Bytes a mutation may write: JSON's own, white space of both kinds, escapes, digits,
 * control bytes and the starts of valid and invalid UTF-8. */
static const char alphabet[] =
    "{}[]:,\"\\/ "
    "\t\r\n\v\f0123456789-+.eEutrfalsn\x01\x1f\x7f\x80\xbf\xc0\xc3\xa9\xe2\xed\xa0\xf0\xf4\xf5\xff";

static void mutations(const char *seed, int rounds)
{
    size_t n = strlen(seed);
    char *s = malloc(n + 16);
    for (int r = 0; r < rounds; r++) {
        memcpy(s, seed, n);
        size_t len = n;
        int edits = 1 + (int)(next_random() % 3);
        for (int e = 0; e < edits; e++) {
            size_t at = (size_t)(next_random() % (len + 1));
            char c = alphabet[next_random() % (sizeof alphabet - 1)];
            switch (next_random() % 3) {
            case 0: /* replace */
                if (at < len) s[at] = c;
                break;
            case 1: /* insert */
                if (len < n + 15) {
                    memmove(s + at + 1, s + at, len - at);
                    s[at] = c;
                    len++;
                }
                break;
            default: /* delete */
                if (at < len) {
                    memmove(s + at, s + at + 1, len - at - 1);
                    len--;
                }
            }
        }
        same_as_jansson(s, len);
    }
    free(s);
}

int main(void)
{
    /* What DynamoDB's clients send. */
    static const char put[] = "{\"TableName\":\"bench\",\"Item\":{\"pk\":{\"S\":\"user#00042\"},"
                              "\"sk\":{\"S\":\"profile\"},\"name\":{\"S\":"
                              "\"user "
                              "42\"},\"email\":{\"S\":\"user42@example.com\"},\"n\":{\"N\":\"42\"},"
                              "\"ok\":{\"BOOL\":true},\"none\":"
                              "{\"NULL\":true},\"tags\":{\"SS\":[\"a\",\"b\"]},\"m\":{\"M\":{\"l\":"
                              "{\"L\":[{\"N\":\"-1.5e3\"},{\"B\":\"AAE=\"}]}}}}}";
    static const char query[] = "{\"TableName\":\"t\",\"KeyConditionExpression\":\"#p = :p AND "
                                "begins_with(#s, :s)\",\"Limit\":50,"
                                "\"ScanIndexForward\":false,\"ConsistentRead\":null,"
                                "\"ExpressionAttributeNames\":{\"#p\":\"pk\",\"#s\":\"sk\"},"
                                "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"x\"},\":s\":{\"S\":"
                                "\"e#\"}},\"ExclusiveStartKey\":null}";
    fast(put, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL);
    fast(query, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL);
    fast("{\"TableName\":\"t\",\"Key\":{\"pk\":{\"S\":\"caf\xc3\xa9 \xf0\x9f\x98\x80\"}}}",
         JSON_REJECT_DUPLICATES);
    fast("{\"s\":\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"}", 0);
    fast(" \r\n\t{ } ", 0);
    fast("[]", 0);
    fast("{\"a\":[1,-0,0,9223372036854775807,-9223372036854775808,[],{}]}", 0);
    fast("{\"a\":1,\"a\":2}", 0);

    /* Escapes jansson judges for itself. */
    same("{\"s\":\"\\u00e9\"}");
    same("{\"s\":\"\\u0000\"}");
    same("{\"\\u0000\":1}");
    same("{\"s\":\"\\ud800\"}");
    same("{\"s\":\"\\ud83d\\ude00\"}");
    same("{\"s\":\"\\udc00\\ud800\"}");
    same("{\"s\":\"\\u12\"}");
    same("{\"s\":\"\\a\"}");
    same("{\"s\":\"\\x41\"}");
    /* UTF-8 and control bytes. */
    same("{\"s\":\"\xc0\x80\"}");
    same("{\"s\":\"\xed\xa0\x80\"}");
    same("{\"s\":\"\xf4\x90\x80\x80\"}");
    same("{\"s\":\"\xf5\x80\x80\x80\"}");
    same("{\"s\":\"\xc3\"}");
    same("{\"s\":\"\x80\"}");
    same("{\"\xc0\xaf\":1}");
    same("{\"s\":\"a\x01\"}");
    same("{\"s\":\"a\x1f\"}");
    same("{\"s\":\"a\x7f\"}");
    same_as_jansson("{\"s\":\"a\0b\"}", 10);
    same_as_jansson("{}\0", 3);
    /* White space YAJL takes and jansson does not. */
    same("{\v}");
    same("{\f\"a\":1}");
    same("\v{}");
    /* Numbers. */
    static const char *const numbers[] = {"0",
                                          "-0",
                                          "01",
                                          "-01",
                                          "00",
                                          "1.5",
                                          "1e5",
                                          "1E+2",
                                          "1e-2",
                                          "-",
                                          "+1",
                                          ".5",
                                          "1.",
                                          "9223372036854775807",
                                          "9223372036854775808",
                                          "-9223372036854775808",
                                          "-9223372036854775809",
                                          "123456789012345678901234",
                                          "1e400",
                                          "-1e400",
                                          "0.0000001",
                                          "Infinity",
                                          "NaN",
                                          "0x10",
                                          "1 2"};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        char text[80];
        snprintf(text, sizeof text, "{\"n\":%s}", numbers[i]);
        same(text);
        snprintf(text, sizeof text, "[%s]", numbers[i]);
        same(text);
        same(numbers[i]);
    }
    /* Duplicates, at the top and below. */
    same("{\"a\":1,\"a\":2}");
    same("{\"x\":{\"a\":[],\"a\":{}}}");
    same("{\"a\":1,\"b\":{\"a\":1}}");
    /* Scalars at the top, and texts that are not one value. */
    static const char *const odd[] = {
        "", " ", "1", "\"s\"", "null", "true", "false", "True", "NULL", "{}x", "{} {}", "{}\n",
        "[1,]", "{\"a\":1,}", "{,}", "[,1]", "{\"a\"}", "{\"a\":}", "{a:1}", "{'a':1}", "/*c*/{}",
        "{}//c", "{", "[", "{\"a\":", "[1,", "]", "}", "\"", "{\"a\":1]", "[1}", "\xef\xbb\xbf{}",
        "{\"a\":tru}", "{\"a\":nul}",
        /* an unfinished string after the value (YAJL lets it pass) */
        "{}\"", "{} \"", "{}\"a", "{}\"}", "[1]\"\\\"", "{}\n\""};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        same(odd[i]);
    /* Nesting around the fast path's and jansson's limits. */
    int depths[] = {1, 64, 127, 128, 129, 2047, 2048, 2049, 3000};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        nested(depths[i], '[', ']');
    }
    {
        char *s = malloc(200 * 6 + 3);
        size_t n = 0;
        for (int i = 0; i < 200; i++)
            n += (size_t)sprintf(s + n, "{\"a\":");
        s[n++] = '1';
        for (int i = 0; i < 200; i++)
            s[n++] = '}';
        s[n] = '\0';
        same(s);
        free(s);
    }
    /* A long string, past any buffer YAJL starts with. */
    {
        size_t n = 300000;
        char *s = malloc(n + 16);
        memcpy(s, "{\"s\":\"", 6);
        for (size_t i = 6; i < n; i++)
            s[i] = (char)('a' + i % 26);
        memcpy(s + n, "\"}", 3);
        fast(s, JSON_REJECT_DUPLICATES);
        free(s);
    }
    /* Random edits of request-shaped text. */
    mutations(put, 20000);
    mutations(query, 10000);
    mutations("{\"a\":[1,\"x\\n\",{\"b\":null},true,-12]}", 10000);
    mutations("{\"k\":\"caf\xc3\xa9\",\"k2\":\"\\u00e9\"}", 5000);
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures != 0;
}
