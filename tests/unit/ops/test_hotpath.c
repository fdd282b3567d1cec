/* test_hotpath.c — the shortcuts of the GetItem/PutItem path give what the long way gives.
 *
 * value_dump (which writes stored items and responses) must produce exactly jansson's
 * json_dumpb bytes for any value: checked on hand-picked edge cases and on thousands of
 * random values mixing every JSON type, escapes, control bytes, non-ASCII text and deep
 * nesting. value_type_from_name must agree with a plain search of the type names. Requests
 * without expression parameters skip exprs_parse's lookups, so every one of those
 * parameters is tried alone (present, null, mistyped) through qr_call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/value.h"
#include "quarry.h"

#include "check.h"

static void check_dump(const json_t *v, const char *what)
{
    buf b;
    buf_init(&b, 0);
    char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    int rc = value_dump(&b, v);
    if (want == NULL) {
        CHECK(rc == -1 && b.len == 0, "%s: jansson refuses, value_dump gave %d (%zu bytes)", what,
              rc, b.len);
    } else {
        CHECK(rc == 0 && b.len == strlen(want) && memcmp(b.data, want, b.len) == 0,
              "%s:\n  got  %s\n  want %s", what, b.data ? b.data : "(null)", want);
    }
    free(want);
    buf_free(&b);
}

static const char *const edge_cases[] = {
    "{}",
    "[]",
    "\"\"",
    "true",
    "false",
    "null",
    "0",
    "-12",
    "1.5",
    "1e300",
    "[[],{}]",
    "{\"pk\":{\"S\":\"user#00001\"},\"sk\":{\"S\":\"profile\"},\"n\":{\"N\":\"42\"}}",
    "{\"a\":\"quote \\\" backslash \\\\ slash / tab \\t nl \\n cr \\r bs \\b ff \\f\"}",
    "{\"\\u0001key\":\"\\u001f\\u0000x\"}",
    "{\"del\":\"\\u007f\"}",
    "{\"u\":\"caf\\u00e9 \\u4e2d \\ud83d\\ude00\"}",
    "{\"k\\\"q\":[\"x\",\"y\",{\"z\":[true,false,null]}]}",
    "{\"\":\"\"}",
    "{\"M\":{\"a\":{\"L\":[{\"N\":\"1\"},{\"BOOL\":true}]}}}",
};

/* A random JSON value: every type, with strings drawn from bytes that need escapes,
 * printable ASCII, and multi-byte UTF-8; with plain set, only what items are made of
 * (no numbers) and printable ASCII, so that value_dump writes it all itself. */
static json_t *random_value(unsigned *seed, int depth, int plain)
{
    static const char *const pieces[] = {"a",
                                         "Z",
                                         "~",
                                         " ",
                                         "/",
                                         "#",
                                         ":",
                                         "\"",
                                         "\\",
                                         "\n",
                                         "\t",
                                         "\x01",
                                         "\x1f",
                                         "\x7f",
                                         "\xc3\xa9",
                                         "\xe4\xb8\xad",
                                         "\xf0\x9f\x98\x80",
                                         "{",
                                         "0"};
    int kind = rand_r(seed) % (depth > 40 ? 6 : 8);
    size_t npieces = plain ? 7 : sizeof pieces / sizeof pieces[0];
    if (plain && (kind == 3 || kind == 4)) kind = 5;
    switch (kind) {
    case 0:
        return json_true();
    case 1:
        return json_false();
    case 2:
        return json_null();
    case 3:
        return json_integer((json_int_t)rand_r(seed) - RAND_MAX / 2);
    case 4:
        return json_real((double)rand_r(seed) / 7.0);
    case 5: {
        char s[64] = "";
        int n = rand_r(seed) % 8;
        for (int i = 0; i < n; i++)
            strcat(s, pieces[rand_r(seed) % npieces]);
        return json_string(s);
    }
    case 6: {
        json_t *a = json_array();
        int n = rand_r(seed) % 4;
        for (int i = 0; i < n; i++)
            json_array_append_new(a, random_value(seed, depth + 1, plain));
        return a;
    }
    default: {
        json_t *o = json_object();
        int n = rand_r(seed) % 4;
        for (int i = 0; i < n; i++) {
            char k[64];
            snprintf(k, sizeof k, "%s%d", pieces[rand_r(seed) % npieces], i);
            json_object_set_new(o, k, random_value(seed, depth + 1, plain));
        }
        return o;
    }
    }
}

static void test_dump(void)
{
    for (size_t i = 0; i < sizeof edge_cases / sizeof edge_cases[0]; i++) {
        json_t *v = json_loads(edge_cases[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        CHECK(v != NULL, "bad test JSON %s", edge_cases[i]);
        if (v) check_dump(v, edge_cases[i]);
        json_decref(v);
    }
    /* Deeper than value_dump writes itself: handed to jansson, still identical. */
    json_t *deep = json_string("x");
    for (int i = 0; i < 100; i++) {
        json_t *o = json_object();
        json_object_set_new(o, i % 2 ? "M" : "L", deep);
        deep = o;
    }
    check_dump(deep, "100 levels");
    json_decref(deep);
    /* A key with a NUL byte (jansson's json_object_setn). */
    json_t *o = json_object();
    json_object_setn_new(o, "a\0b", 3, json_string("v"));
    check_dump(o, "key with NUL");
    json_decref(o);
    /* Random values, and a cap that cuts the text: -1 and the buffer left as it was. */
    unsigned seed = 7;
    for (int i = 0; i < 10000; i++) {
        json_t *v = random_value(&seed, 0, i % 2);
        char what[32];
        snprintf(what, sizeof what, "random value %d", i);
        check_dump(v, what);
        buf b;
        buf_init(&b, 8);
        buf_append(&b, "ab", 2);
        char *full = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        int rc = value_dump(&b, v);
        if (full && strlen(full) + 2 > 8)
            CHECK(rc == -1 && b.len == 2 && strcmp(b.data, "ab") == 0,
                  "%s: cap not kept: %d %s (%s)", what, rc, b.data, full);
        else if (full)
            CHECK(rc == 0 && strcmp(b.data + 2, full) == 0, "%s: small value under the cap", what);
        free(full);
        buf_free(&b);
        json_decref(v);
    }
}

static void test_type_names(void)
{
    static const char *const names[] = {"",  "S", "N",  "B",  "BOOL", "NULL",
                                        "M", "L", "SS", "NS", "BS"};
    static const char *const others[] = {"",        "s",  "SSS", "NUL", "NULLS", "BO",
                                         "BOOLEAN", "Nx", "BSS", "MM",  "LL",    "X",
                                         "SN",      "NB", "BN",  "Sx",  "B\xff"};
    for (int t = 1; t <= 10; t++)
        CHECK(value_type_from_name(names[t]) == (qr_type)t, "%s not recognised", names[t]);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        CHECK(value_type_from_name(others[i]) == QR_T_NONE, "'%s' taken for a type", others[i]);
}

static qr_db *db;

/* Calls op with body and returns the response body (static; "" on none) and *status. */
static const char *call(const char *op, const char *body, int *status)
{
    static char out[4096];
    qr_response r;
    qr_call(db, op, body, strlen(body), &r);
    snprintf(out, sizeof out, "%s", r.body ? r.body : "");
    *status = r.http_status;
    qr_response_free(&r);
    return out;
}

/* Each parameter exprs_parse reads, alone in a GetItem and a PutItem. Absent (the short
 * way) and null (the long way) must give the same answer; mistyped, a parameter the
 * operation reads is refused and one it does not read changes nothing. */
static void test_expression_params(void)
{
    static const char *const params[] = {"ExpressionAttributeNames",
                                         "ExpressionAttributeValues",
                                         "ConditionalOperator",
                                         "ConditionExpression",
                                         "Expected",
                                         "FilterExpression",
                                         "QueryFilter",
                                         "ScanFilter",
                                         "UpdateExpression",
                                         "AttributeUpdates",
                                         "ProjectionExpression",
                                         "AttributesToGet",
                                         "KeyConditionExpression",
                                         "KeyConditions"};
    const char *get = "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"a\"}}%s}";
    const char *put =
        "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"a\"},\"v\":{\"S\":\"x\"}}%s}";
    int status;
    const char *r = call(
        "PutItem", "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"a\"},\"v\":{\"S\":\"x\"}}}",
        &status);
    CHECK(status == 200 && strcmp(r, "{}") == 0, "plain PutItem: %d %s", status, r);
    r = call("GetItem", "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"a\"}}}", &status);
    CHECK(status == 200 && strcmp(r, "{\"Item\":{\"pk\":{\"S\":\"a\"},\"v\":{\"S\":\"x\"}}}") == 0,
          "plain GetItem: %s", r);
    /* The parameters each operation reads, as a bit per entry of params. */
    const unsigned reads[2] = {1u | 2u | 4u | 1024u | 2048u, 1u | 2u | 4u | 8u | 16u};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        const char *ops[2] = {"GetItem", "PutItem"}, *fmts[2] = {get, put};
        for (int o = 0; o < 2; o++) {
            char extra[128], body[512], absent[4096];
            snprintf(body, sizeof body, fmts[o], "");
            r = call(ops[o], body, &status);
            snprintf(absent, sizeof absent, "%s", r);
            CHECK(status == 200, "%s: %d %s", ops[o], status, r);
            snprintf(extra, sizeof extra, ",\"%s\":null", params[i]);
            snprintf(body, sizeof body, fmts[o], extra);
            r = call(ops[o], body, &status);
            CHECK(status == 200 && strcmp(r, absent) == 0, "%s with %s null: %d %s", ops[o],
                  params[i], status, r);
            snprintf(extra, sizeof extra, ",\"%s\":5", params[i]);
            snprintf(body, sizeof body, fmts[o], extra);
            r = call(ops[o], body, &status);
            if (reads[o] & (1u << i))
                CHECK(status == 400 && strstr(r, "SerializationException"), "%s with %s = 5: %d %s",
                      ops[o], params[i], status, r);
            else
                CHECK(status == 200 && strcmp(r, absent) == 0, "%s with %s = 5: %d %s", ops[o],
                      params[i], status, r);
        }
    }
    /* Names and values without an expression are refused, not ignored. */
    r = call("GetItem",
             "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"a\"}},\"ExpressionAttributeNames\":{"
             "\"#a\":\"v\"}}",
             &status);
    CHECK(status == 400 &&
              strstr(r, "ExpressionAttributeNames can only be specified when using expressions"),
          "%s", r);
    r = call("PutItem",
             "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"a\"}},\"ExpressionAttributeValues\":"
             "{\":a\":{\"S\":\"v\"}}}",
             &status);
    CHECK(status == 400 &&
              strstr(r, "ExpressionAttributeValues can only be specified when using expressions"),
          "%s", r);
    /* A projection still applies, and an unused name is still reported. */
    r = call(
        "GetItem",
        "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"a\"}},\"ProjectionExpression\":\"v\"}",
        &status);
    CHECK(status == 200 && strcmp(r, "{\"Item\":{\"v\":{\"S\":\"x\"}}}") == 0, "projection: %s", r);
    r = call("GetItem",
             "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"a\"}},\"ProjectionExpression\":\"v\","
             "\"ExpressionAttributeNames\":{\"#a\":\"v\"}}",
             &status);
    CHECK(status == 400 && strstr(r, "unused in expressions: keys: {#a}"), "unused name: %s", r);
    /* An ALL_OLD PutItem answers with the old item, written by value_dump. */
    r = call("PutItem",
             "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"a\"},\"w\":{\"N\":\"1.50\"}},"
             "\"ReturnValues\":\"ALL_OLD\"}",
             &status);
    CHECK(status == 200 &&
              strcmp(r, "{\"Attributes\":{\"pk\":{\"S\":\"a\"},\"v\":{\"S\":\"x\"}}}") == 0,
          "ALL_OLD: %s", r);
    r = call("GetItem", "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"a\"}}}", &status);
    CHECK(status == 200 &&
              strcmp(r, "{\"Item\":{\"pk\":{\"S\":\"a\"},\"w\":{\"N\":\"1.5\"}}}") == 0,
          "normalised: %s", r);
}

int main(void)
{
    test_dump();
    test_type_names();
    char dir[] = "/tmp/quarry-hotpath-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    char *err = NULL;
    qr_options o = {.no_sync = 1};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open: %s\n", err);
        return 1;
    }
    int status;
    call("CreateTable",
         "{\"TableName\":\"tbl\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":"
         "[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":"
         "[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}",
         &status);
    CHECK(status == 200, "CreateTable: %d", status);
    test_expression_params();
    qr_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    if (check_failures)
        fprintf(stderr, "test_hotpath: %d failures\n", check_failures);
    else
        printf("test_hotpath: ok\n");
    return check_failures != 0;
}
