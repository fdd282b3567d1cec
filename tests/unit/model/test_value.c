/* test_value.c — AttributeValue validation, normalisation, comparison and item size.
 *
 * Sizes follow DynamoDB's documented rules: strings by UTF-8 bytes, binaries by their
 * decoded bytes, numbers as number.c measures them, BOOL and NULL one byte, lists and
 * maps 3 bytes plus 1 byte per element, sets the sum of their elements, and every
 * attribute name counted in its item. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/value.h"

#include "check.h"

static json_t *parse(const char *text)
{
    json_t *v = json_loads(text, 0, NULL);
    if (v == NULL) {
        fprintf(stderr, "bad test JSON: %s\n", text);
        check_failures++;
    }
    return v;
}

/* Validates text as an AttributeValue; returns the message ("" if valid) and leaves the
 * normalised value in *out (caller decrefs). */
static const char *validate(const char *text, json_t **out)
{
    static qr_err e;
    err_init(&e);
    *out = parse(text);
    if (*out == NULL) return "unparsable";
    return value_validate(*out, 1, "a", &e) ? e.msg : "";
}

static void expect_valid(const char *text, const char *normalised)
{
    json_t *v;
    const char *msg = validate(text, &v);
    CHECK(msg[0] == '\0', "%s should be valid, got: %s", text, msg);
    if (normalised) {
        char *dump = json_dumps(v, JSON_COMPACT);
        CHECK(strcmp(dump, normalised) == 0, "%s normalised to %s, want %s", text, dump,
              normalised);
        free(dump);
    }
    json_decref(v);
}

static void expect_invalid(const char *text, const char *fragment)
{
    json_t *v;
    const char *msg = validate(text, &v);
    CHECK(msg[0] != '\0', "%s should be invalid", text);
    CHECK(strstr(msg, fragment) != NULL, "%s: message '%s' lacks '%s'", text, msg, fragment);
    json_decref(v);
}

static void test_validation(void)
{
    expect_valid("{\"S\":\"\"}", NULL);
    expect_valid("{\"N\":\"01.50\"}", "{\"N\":\"1.5\"}");
    expect_valid("{\"N\":\"-0\"}", "{\"N\":\"0\"}");
    expect_valid("{\"NS\":[\"1e2\",\"7\"]}",
                 "{\"NS\":[\"7\",\"100\"]}"); /* canonical, and in order of value */
    expect_valid("{\"B\":\"AAEC\"}", NULL);
    expect_valid("{\"BOOL\":false}", NULL);
    expect_valid("{\"NULL\":true}", NULL);
    expect_valid("{\"M\":{\"x\":{\"L\":[{\"N\":\"1\"},{\"SS\":[\"a\"]}]}}}", NULL);
    expect_invalid("{}", "Supplied AttributeValue is empty");
    expect_invalid("{\"S\":\"a\",\"N\":\"1\"}", "more than one datatypes");
    expect_invalid("{\"SS\":[]}", "may not be empty");
    expect_invalid("{\"SS\":[\"a\",\"b\",\"a\"]}", "contains duplicates");
    expect_invalid("{\"NS\":[\"1\",\"1.0\"]}", "contains duplicates");
    expect_invalid("{\"BS\":[\"AQ==\",\"AQ==\"]}", "contains duplicates");
    expect_invalid("{\"NULL\":false}", "Null attribute value types must have the value of true");
    expect_invalid("{\"N\":\"12345678901234567890123456789012345678901\"}",
                   "38 significant digits");
    expect_invalid("{\"B\":\"abc\"}", "Base64");
    expect_invalid("{\"S\":5}", "NUMBER_VALUE cannot be converted to String");
    /* Nesting: 32 levels are allowed, 33 are not. */
    char deep[1024] = "{\"S\":\"x\"}", tmp[1100];
    for (int i = 1; i < 32; i++) {
        snprintf(tmp, sizeof tmp, "{\"L\":[%s]}", deep);
        memcpy(deep, tmp, sizeof deep);
    }
    expect_valid(deep, NULL);
    snprintf(tmp, sizeof tmp, "{\"L\":[%s]}", deep);
    expect_invalid(tmp, "Nesting Levels");
}

static size_t size_of(const char *item_text)
{
    json_t *item = parse(item_text);
    qr_err e;
    err_init(&e);
    if (item == NULL || item_validate(item, &e)) {
        fprintf(stderr, "invalid item %s: %s\n", item_text, e.msg);
        check_failures++;
        json_decref(item);
        return 0;
    }
    size_t n = item_size(item);
    json_decref(item);
    return n;
}

static size_t number_size(const char *text)
{
    qr_num n;
    qr_err e;
    err_init(&e);
    num_parse(text, strlen(text), &n, &e);
    return num_size(&n);
}

static void test_sizes(void)
{
    CHECK(size_of("{\"ab\":{\"S\":\"hello\"}}") == 2 + 5, "string");
    CHECK(size_of("{\"s\":{\"S\":\"\\u00e9\\u4e2d\"}}") == 1 + 2 + 3,
          "UTF-8 bytes, not characters");
    CHECK(size_of("{\"b\":{\"B\":\"AAECAw==\"}}") == 1 + 4, "binary counts decoded bytes");
    CHECK(size_of("{\"t\":{\"BOOL\":true},\"n\":{\"NULL\":true}}") == 1 + 1 + 1 + 1,
          "BOOL and NULL are one byte");
    CHECK(size_of("{\"n\":{\"N\":\"123.45\"}}") == 1 + number_size("123.45"), "number");
    CHECK(size_of("{\"l\":{\"L\":[]}}") == 1 + 3, "empty list is 3 bytes");
    CHECK(size_of("{\"m\":{\"M\":{}}}") == 1 + 3, "empty map is 3 bytes");
    CHECK(size_of("{\"l\":{\"L\":[{\"S\":\"ab\"},{\"BOOL\":true}]}}") == 1 + 3 + (2 + 1) + (1 + 1),
          "list");
    CHECK(size_of("{\"m\":{\"M\":{\"key\":{\"S\":\"value\"}}}}") == 1 + 3 + (3 + 5 + 1),
          "map counts names");
    CHECK(size_of("{\"ss\":{\"SS\":[\"a\",\"bc\"]}}") == 2 + 3, "string set");
    CHECK(size_of("{\"ns\":{\"NS\":[\"1\",\"22\"]}}") == 2 + number_size("1") + number_size("22"),
          "number set");
    CHECK(size_of("{\"bs\":{\"BS\":[\"AQ==\",\"AQI=\"]}}") == 2 + 1 + 2, "binary set");
    /* 400 KB: an item at the limit is accepted, one byte more is not. */
    static char big[409700];
    size_t body = 409600 - 1;
    int n = snprintf(big, sizeof big, "{\"d\":{\"S\":\"");
    memset(big + n, 'x', body);
    snprintf(big + n + body, sizeof big - (size_t)n - body, "\"}}");
    json_t *item = parse(big);
    qr_err e;
    err_init(&e);
    CHECK(item && item_validate(item, &e) == 0, "an item of exactly 400 KB is accepted: %s", e.msg);
    json_decref(item);
    memset(big + n, 'x', body + 1);
    snprintf(big + n + body + 1, sizeof big - (size_t)n - body - 1, "\"}}");
    item = parse(big);
    err_init(&e);
    CHECK(item && item_validate(item, &e) != 0 && strstr(e.msg, "Item size has exceeded") != NULL,
          "an item one byte over 400 KB is refused");
    json_decref(item);
}

static void test_compare_and_equal(void)
{
    struct {
        const char *a, *b;
        int cmp;
    } cases[] = {
        {"{\"S\":\"a\"}", "{\"S\":\"b\"}", -1},
        {"{\"S\":\"ab\"}", "{\"S\":\"a\"}", 1},
        {"{\"S\":\"Z\"}", "{\"S\":\"a\"}", -1},
        {"{\"N\":\"-10\"}", "{\"N\":\"-9.5\"}", -1},
        {"{\"N\":\"1E+2\"}", "{\"N\":\"100\"}", 0},
        {"{\"B\":\"/w==\"}", "{\"B\":\"AA==\"}", 1}, /* unsigned bytes: 0xff > 0x00 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *a = parse(cases[i].a), *b = parse(cases[i].b);
        int c = 99;
        CHECK(value_compare(a, b, &c) == 0 && c == cases[i].cmp, "compare %s %s gave %d",
              cases[i].a, cases[i].b, c);
        json_decref(a);
        json_decref(b);
    }
    json_t *s = parse("{\"S\":\"1\"}"), *n = parse("{\"N\":\"1\"}");
    int c;
    CHECK(value_compare(s, n, &c) != 0, "S and N do not compare");
    CHECK(!value_equal(s, n), "S 1 is not N 1");
    json_decref(s);
    json_decref(n);
    json_t *x = parse("{\"SS\":[\"a\",\"b\"]}"), *y = parse("{\"SS\":[\"b\",\"a\"]}");
    CHECK(value_equal(x, y), "sets are equal whatever their order");
    json_decref(x);
    json_decref(y);
    x = parse("{\"L\":[{\"N\":\"1\"},{\"N\":\"2\"}]}");
    y = parse("{\"L\":[{\"N\":\"2\"},{\"N\":\"1\"}]}");
    CHECK(!value_equal(x, y), "lists are ordered");
    json_decref(x);
    json_decref(y);
    x = parse("{\"M\":{\"a\":{\"N\":\"1.0\"},\"b\":{\"NULL\":true}}}");
    y = parse("{\"M\":{\"b\":{\"NULL\":true},\"a\":{\"N\":\"1\"}}}");
    CHECK(value_equal(x, y), "maps compare by member, numbers numerically");
    json_decref(x);
    json_decref(y);
}

/* What DynamoDB's request reader answers for text where it expects want ("" when it
 * reads it), and what it converts the value to (*fixed, "" when unchanged). */
static void expect_wire(const char *text, wire_type want, int member, const char *msg,
                        const char *converted)
{
    qr_err e;
    err_init(&e);
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL), *fixed = NULL;
    int rc = value_wire_check(v, want, member, &fixed, &e);
    const char *got = rc ? e.msg : "";
    CHECK(strcmp(got, msg) == 0, "%s: got \"%s\", want \"%s\"", text, got, msg);
    CHECK(rc == 0 || strcmp(e.type, QR_E_SERIALIZATION) == 0, "%s: %s", text, e.type);
    char *f = fixed ? json_dumps(fixed, JSON_ENCODE_ANY) : NULL;
    CHECK(strcmp(f ? f : "", converted) == 0, "%s: converted to %s", text, f ? f : "nothing");
    free(f);
    json_decref(fixed);
    json_decref(v);
}

static void test_wire_types(void)
{
    expect_wire("5", WIRE_STRING, 1, "NUMBER_VALUE cannot be converted to String", "");
    expect_wire("5.5", WIRE_STRING, 1, "DECIMAL_VALUE cannot be converted to String", "");
    expect_wire("true", WIRE_STRING, 1, "TRUE_VALUE cannot be converted to String", "");
    expect_wire("{}", WIRE_STRING, 1, "Start of structure or map found where not expected", "");
    expect_wire("[]", WIRE_STRING, 1, "UnknownError", "");
    expect_wire("\"5\"", WIRE_INTEGER, 1, "STRING_VALUE cannot be converted to Integer", "");
    expect_wire("\"5\"", WIRE_TIMESTAMP, 1, "STRING_VALUE cannot be converted to Date", "");
    expect_wire("5.7", WIRE_LONG, 1, "", "5");
    expect_wire("\"TRUE\"", WIRE_BOOLEAN, 1, "", "true");
    expect_wire("\"yes\"", WIRE_BOOLEAN, 1, "Unexpected token received from parser", "");
    expect_wire("0", WIRE_BOOLEAN, 1, "NUMBER_VALUE cannot be converted to Boolean", "");
    expect_wire("5", WIRE_BLOB, 1, "only base-64-encoded strings are convertible to bytes", "");
    expect_wire("\"a\"", WIRE_STRUCTURE, 1, "Unexpected field type", "");
    expect_wire("\"a\"", WIRE_STRUCTURE, 0, "Unexpected value type in payload", "");
    expect_wire("[]", WIRE_STRUCTURE, 1, "UnknownError", "");
    expect_wire("{}", WIRE_LIST, 1, "Start of structure or map found where not expected", "");
    expect_wire("5", WIRE_LIST, 0, "UnknownError", "");
    expect_wire("5", WIRE_MAP, 1, "Unexpected field type", "");
    expect_wire("{}", WIRE_MAP, 1, "", "");
}

int main(void)
{
    test_validation();
    test_wire_types();
    test_sizes();
    test_compare_and_equal();
    if (check_failures) {
        fprintf(stderr, "test_value: %d failure(s)\n", check_failures);
        return 1;
    }
    printf("test_value: ok\n");
    return 0;
}
