/* test_cqlval_value.c — typed CQL values (src/cql/value.c) against tables of cases.
 *
 * Literals are parsed by the CQL parser (as the value of an INSERT) and turned into bytes
 * for a type: each row gives the bytes (hex) and the text CAST, the CQL literal and JSON
 * write for them, or Cassandra's refusal. Every accepted value must also validate, read
 * back from its CQL literal, its JSON and its stored AttributeValue to the same bytes.
 * Ordered rows check the comparator; malformed bytes check the validator. */
#include <math.h>
#include <string.h>

#include "cql/ast.h"
#include "cql/types.h"
#include "cql/value.h"

#include "check.h"

static arena test_arena;

static const cql_ctype *udt_point;

static const cql_ctype *lookup(void *ctx, const char *ks, const char *name)
{
    (void)ctx;
    (void)ks;
    return strcmp(name, "point") == 0 ? udt_point : NULL;
}

static const cqltype_env env = {"ks", lookup, NULL};

static const cql_ctype *type_of(const char *s)
{
    cql_parse_error err = {0};
    const cql_ctype *t = NULL;
    if (cqltype_parse(&test_arena, s, strlen(s), &env, &t, &err) != 0) {
        CHECK(0, "type %s: %s", s, err.msg);
        return NULL;
    }
    return t;
}

static void hex(const buf *b, char *out)
{
    static const char hx[] = "0123456789abcdef";
    size_t k = 0;
    for (size_t i = 0; i < b->len && k < 1000; i++) {
        out[k++] = hx[(uint8_t)b->data[i] >> 4];
        out[k++] = hx[(uint8_t)b->data[i] & 15];
    }
    out[k] = '\0';
}

/* Parses `lit` and makes a value of t; returns the code, bytes in out, error in err. */
static int literal(const cql_ctype *t, const char *lit, buf *out, cql_parse_error *err)
{
    char stmt[2048];
    snprintf(stmt, sizeof stmt, "INSERT INTO t (v) VALUES (%s)", lit);
    cql_parsed p;
    cql_parse_error perr = {0};
    if (cql_parse(stmt, strlen(stmt), &p, &perr) != 0) {
        snprintf(err->msg, sizeof err->msg, "parse: %.900s", perr.msg);
        err->code = CQL_ERR_SYNTAX;
        return CQLVAL_ERROR;
    }
    int r = cqlval_from_term(t, "v", p.stmts[0]->u.insert.values[0], NULL, out, err);
    cql_parsed_free(&p);
    return r;
}

typedef struct vcase {
    const char *type, *lit;
    const char *hex;               /* the bytes, or NULL to skip */
    const char *text, *cql, *json; /* NULL: same as the previous column */
} vcase;

static const vcase vcases[] = {
    /* map keys that are not text: their JSON as a JSON string (Cassandra's JsonTest) */
    {"map<frozen<tuple<int, text>>, boolean>", "{(1, 'b'): false, (0, 'a'): true}", NULL,
     "{(0, 'a'): true, (1, 'b'): false}", NULL,
     "{\"[0, \\\"a\\\"]\": true, \"[1, \\\"b\\\"]\": false}"},
    {"map<boolean, boolean>", "{true: true, false: false}", NULL, "{false: false, true: true}",
     NULL, "{\"false\": false, \"true\": true}"},
    {"map<frozen<set<int>>, boolean>", "{{3, 4, 5}: false, {0, 1, 2}: true}", NULL,
     "{{0, 1, 2}: true, {3, 4, 5}: false}", NULL, "{\"[0, 1, 2]\": true, \"[3, 4, 5]\": false}"},
    {"map<float, boolean>", "{1.23: true, 4.56: false}", NULL, "{1.23: true, 4.56: false}", NULL,
     "{\"1.23\": true, \"4.56\": false}"},
    {"int", "42", "0000002a", "42", NULL, NULL},
    {"int", "-1", "ffffffff", "-1", NULL, NULL},
    {"int", "-2147483648", "80000000", "-2147483648", NULL, NULL},
    {"bigint", "9223372036854775807", "7fffffffffffffff", "9223372036854775807", NULL, NULL},
    {"smallint", "-300", "fed4", "-300", NULL, NULL},
    {"tinyint", "127", "7f", "127", NULL, NULL},
    {"counter", "5", "0000000000000005", "5", NULL, NULL},
    {"varint", "123456789012345678901234567890", "018ee90ff6c373e0ee4e3f0ad2",
     "123456789012345678901234567890", NULL, NULL},
    {"varint", "-128", "80", "-128", NULL, NULL},
    {"decimal", "1.50", "000000020096", "1.50", NULL, NULL},
    {"decimal", "-0.001", "00000003ff", "-0.001", NULL, NULL},
    {"decimal", "12", "000000000c", "12", NULL, NULL},
    {"decimal", "1e10", "fffffff601", "1E+10", NULL, NULL},
    {"float", "1.5", "3fc00000", "1.5", NULL, NULL},
    {"float", "0.1", "3dcccccd", "0.1", NULL, NULL},
    {"float", "1e10", "501502f9", "1.0E10", NULL, NULL},
    {"double", "1.5", "3ff8000000000000", "1.5", NULL, NULL},
    {"double", "3", "4008000000000000", "3.0", NULL, NULL},
    {"double", "0.001", "3f50624dd2f1a9fc", "0.001", NULL, NULL},
    {"double", "1.0E-5", "3ee4f8b588e368f1", "1.0E-5", NULL, NULL},
    {"double", "123456789.125", "419d6f3454800000", "1.23456789125E8", NULL, NULL},
    {"double", "NaN", "7ff8000000000000", "NaN", NULL, "null"},
    {"double", "-Infinity", "fff0000000000000", "-Infinity", NULL, "null"},
    {"float", "Infinity", "7f800000", "Infinity", NULL, "null"},
    {"boolean", "true", "01", "true", NULL, NULL},
    {"boolean", "FALSE", "00", "false", NULL, NULL},
    {"text", "'it''s'", "69742773", "it's", "'it''s'", "\"it's\""},
    {"text", "'h\xc3\xa9'", "68c3a9", "h\xc3\xa9", "'h\xc3\xa9'", "\"h\xc3\xa9\""},
    {"text", "$$a \"q\"$$", "61202271 22", "a \"q\"", "'a \"q\"'", "\"a \\\"q\\\"\""},
    {"varchar", "''", "", "", "''", "\"\""},
    {"ascii", "'abc'", "616263", "abc", "'abc'", "\"abc\""},
    {"blob", "0xCAFE", "cafe", "0xcafe", NULL, "\"0xcafe\""},
    {"blob", "0x", "", "", "0x", "\"0x\""},
    {"uuid", "123e4567-e89b-42d3-a456-426614174000", "123e4567e89b42d3a456426614174000",
     "123e4567-e89b-42d3-a456-426614174000", NULL, "\"123e4567-e89b-42d3-a456-426614174000\""},
    {"timeuuid", "e3ba1b40-8b5d-11ee-b9d1-0242ac120002", "e3ba1b408b5d11eeb9d10242ac120002",
     "e3ba1b40-8b5d-11ee-b9d1-0242ac120002", NULL, "\"e3ba1b40-8b5d-11ee-b9d1-0242ac120002\""},
    {"timestamp", "'2024-01-31 12:00:00+0000'", "0000018d5f63ea00", "2024-01-31T12:00:00.000Z",
     "'2024-01-31T12:00:00.000Z'", "\"2024-01-31 12:00:00.000Z\""},
    {"timestamp", "'2024-01-31T12:00:00.250Z'", "0000018d5f63eafa", "2024-01-31T12:00:00.250Z",
     "'2024-01-31T12:00:00.250Z'", "\"2024-01-31 12:00:00.250Z\""},
    {"timestamp", "'2024-01-31 13:30+01:30'", "0000018d5f63ea00", "2024-01-31T12:00:00.000Z",
     "'2024-01-31T12:00:00.000Z'", "\"2024-01-31 12:00:00.000Z\""},
    {"timestamp", "'2024-01-31'", "0000018d5cd0bc00", "2024-01-31T00:00:00.000Z",
     "'2024-01-31T00:00:00.000Z'", "\"2024-01-31 00:00:00.000Z\""},
    {"timestamp", "1706702400000", "0000018d5f63ea00", "2024-01-31T12:00:00.000Z",
     "'2024-01-31T12:00:00.000Z'", "\"2024-01-31 12:00:00.000Z\""},
    {"timestamp", "'-1'", "ffffffffffffffff", "1969-12-31T23:59:59.999Z",
     "'1969-12-31T23:59:59.999Z'", "\"1969-12-31 23:59:59.999Z\""},
    {"date", "'2024-01-31'", "80004d29", "2024-01-31", "'2024-01-31'", "\"2024-01-31\""},
    {"date", "'1969-12-31'", "7fffffff", "1969-12-31", "'1969-12-31'", "\"1969-12-31\""},
    {"date", "2147483648", "80000000", "1970-01-01", "'1970-01-01'", "\"1970-01-01\""},
    {"time", "'12:00:00.5'", "0000274a6674e500", "12:00:00.500000000", "'12:00:00.500000000'",
     "\"12:00:00.500000000\""},
    {"time", "1000", "00000000000003e8", "00:00:00.000001000", "'00:00:00.000001000'",
     "\"00:00:00.000001000\""},
    {"duration", "1h30m", "0000fc09d29229e000", "1h30m", NULL, "\"1h30m\""},
    {"duration", "P1Y2M3DT4H", "1c06fc1a3185c50000", "1y2mo3d4h", NULL, "\"1y2mo3d4h\""},
    {"duration", "-2w", "001b00", "-14d", NULL, "\"-14d\""},
    {"duration", "P2W", "001c00", "14d", NULL, "\"14d\""},
    {"duration", "1y3mo5us10ns", "1e00a724", "1y3mo5us10ns", NULL, "\"1y3mo5us10ns\""},
    {"inet", "'127.0.0.1'", "7f000001", "127.0.0.1", "'127.0.0.1'", "\"127.0.0.1\""},
    {"inet", "'::1'", "00000000000000000000000000000001", "0:0:0:0:0:0:0:1", "'0:0:0:0:0:0:0:1'",
     "\"0:0:0:0:0:0:0:1\""},
    {"list<int>", "[1, 2, 1]",
     "00000003000000040000000100000004"
     "000000020000000400000001",
     "[1, 2, 1]", NULL, NULL},
    {"list<int>", "[]", "00000000", "[]", NULL, NULL},
    {"set<int>", "{3, 1, 2, 1}",
     "00000003000000040000000100000004"
     "000000020000000400000003",
     "{1, 2, 3}", NULL, "[1, 2, 3]"},
    {"set<text>", "{'b', 'a'}",
     "00000002000000016100000001"
     "62",
     "{'a', 'b'}", NULL, "[\"a\", \"b\"]"},
    {"map<text, int>", "{'b': 2, 'a': 1, 'b': 3}", NULL, "{'a': 1, 'b': 3}", NULL,
     "{\"a\": 1, \"b\": 3}"},
    {"map<int, text>", "{2: 'x', 1: 'y'}", NULL, "{1: 'y', 2: 'x'}", NULL,
     "{\"1\": \"y\", \"2\": \"x\"}"},
    {"map<text, int>", "{}", "00000000", "{}", NULL, NULL},
    {"frozen<list<frozen<set<int>>>>", "[{2, 1}, {}]", NULL, "[{1, 2}, {}]", NULL, "[[1, 2], []]"},
    {"frozen<tuple<int, text>>", "(1, 'a')", "00000004000000010000000161", "(1, 'a')", NULL,
     "[1, \"a\"]"},
    {"frozen<tuple<int, text>>", "(1, null)", "0000000400000001ffffffff", "(1, null)", NULL,
     "[1, null]"},
    {"frozen<tuple<int, text>>", "(7)", "0000000400000007", "(7)", NULL, "[7, null]"},
    {"frozen<point>", "{x: 1, y: 2}", "00000004000000010000000400000002", "{x: 1, y: 2}", NULL,
     "{\"x\": 1, \"y\": 2}"},
    {"frozen<point>", "{y: 2}", "ffffffff0000000400000002", "{x: null, y: 2}", NULL,
     "{\"x\": null, \"y\": 2}"},
    {"map<uuid, frozen<list<timestamp>>>", "{123e4567-e89b-42d3-a456-426614174000: ['2024-01-31']}",
     NULL, "{123e4567-e89b-42d3-a456-426614174000: ['2024-01-31T00:00:00.000Z']}", NULL,
     "{\"\\\"123e4567-e89b-42d3-a456-426614174000\\\"\": [\"2024-01-31 00:00:00.000Z\"]}"},
};

/* Two byte strings are the same (either may be NULL when empty). */
static int same_bytes(const buf *a, const buf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* The same value: the same bytes, or (JSON names every item of a tuple, null for those a
 * shorter value leaves out) equal as values of t. */
static int same_value(const cql_ctype *t, const buf *a, const buf *b)
{
    return same_bytes(a, b) || cqlval_compare(t, (const uint8_t *)a->data, a->len,
                                              (const uint8_t *)b->data, b->len) == 0;
}

static void roundtrips(const cql_ctype *t, const buf *v, const char *where)
{
    cql_parse_error err = {0};
    CHECK(cqlval_validate(t, (const uint8_t *)v->data, v->len, &err) == 0, "%s: validate: %s",
          where, err.msg);
    /* the CQL literal reads back */
    buf c, back;
    buf_init(&c, 0);
    buf_init(&back, 0);
    CHECK(cqlval_to_cql(t, (const uint8_t *)v->data, v->len, &c) == 0, "%s: to_cql", where);
    memset(&err, 0, sizeof err);
    if (c.data && literal(t, c.data, &back, &err) == CQLVAL_OK)
        CHECK(cqlval_compare(t, (const uint8_t *)back.data, back.len, (const uint8_t *)v->data,
                             v->len) == 0 &&
                  back.len == v->len,
              "%s: literal %s reads back differently", where, c.data);
    else
        CHECK(0, "%s: literal %s does not read back: %s", where, c.data ? c.data : "", err.msg);
    /* JSON reads back */
    buf j;
    buf_init(&j, 0);
    CHECK(cqlval_to_json(t, (const uint8_t *)v->data, v->len, &j) == 0, "%s: to_json", where);
    cql_parse_error perr = {0};
    json_t *parsed = cqlval_json_parse(j.data ? j.data : "", j.len, &perr);
    CHECK(parsed != NULL, "%s: json %s does not parse: %s", where, j.data, perr.msg);
    buf_reset(&back);
    memset(&err, 0, sizeof err);
    /* NaN and Infinity are written as null, which reads back as null */
    int empty_json = json_is_null(parsed);
    if (parsed && !empty_json) {
        int r = cqlval_from_json(t, "v", parsed, &back, &err);
        CHECK(r == CQLVAL_OK && same_value(t, &back, v), "%s: json %s reads back differently (%s)",
              where, j.data, err.msg);
    }
    /* jansson's own tree reads back too, where its numbers hold the value (64-bit
     * integers, doubles) */
    json_t *jt = json_loads(j.data ? j.data : "", JSON_DECODE_ANY, NULL);
    if (jt && !empty_json && t->wire.id != CQL_TYPE_DECIMAL) {
        buf_reset(&back);
        memset(&err, 0, sizeof err);
        CHECK(cqlval_from_json(t, "v", jt, &back, &err) == CQLVAL_OK && same_value(t, &back, v),
              "%s: jansson's json %s reads back differently (%s)", where, j.data, err.msg);
    }
    json_decref(jt);
    json_decref(parsed);
    /* the stored form reads back exactly */
    json_t *item = cqlval_to_item(t, (const uint8_t *)v->data, v->len);
    CHECK(item != NULL, "%s: to_item", where);
    buf_reset(&back);
    memset(&err, 0, sizeof err);
    CHECK(item && cqlval_from_item(t, item, &back, &err) == 0 && same_bytes(&back, v),
          "%s: stored form reads back differently (%s)", where, err.msg);
    json_decref(item);
    buf_free(&c);
    buf_free(&j);
    buf_free(&back);
}

static void test_values(void)
{
    for (size_t i = 0; i < sizeof vcases / sizeof vcases[0]; i++) {
        const vcase *c = &vcases[i];
        const cql_ctype *t = type_of(c->type);
        if (!t) continue;
        buf v;
        buf_init(&v, 0);
        cql_parse_error err = {0};
        char where[300];
        snprintf(where, sizeof where, "%s %s", c->type, c->lit);
        int r = literal(t, c->lit, &v, &err);
        CHECK(r == CQLVAL_OK, "%s: %s", where, err.msg);
        if (r != CQLVAL_OK) continue;
        if (c->hex) {
            char want[1024], got[1024];
            size_t k = 0;
            for (const char *h = c->hex; *h; h++)
                if (*h != ' ') want[k++] = *h;
            want[k] = '\0';
            hex(&v, got);
            CHECK(strcmp(got, want) == 0, "%s: bytes %s, want %s", where, got, want);
        }
        buf s;
        buf_init(&s, 0);
        CHECK(cqlval_to_text(t, (const uint8_t *)v.data, v.len, &s) == 0, "%s: to_text", where);
        CHECK_STR(s.data ? s.data : "", c->text);
        buf_reset(&s);
        cqlval_to_cql(t, (const uint8_t *)v.data, v.len, &s);
        CHECK_STR(s.data ? s.data : "", c->cql ? c->cql : c->text);
        buf_reset(&s);
        cqlval_to_json(t, (const uint8_t *)v.data, v.len, &s);
        CHECK_STR(s.data ? s.data : "", c->json ? c->json : c->cql ? c->cql : c->text);
        buf_free(&s);
        roundtrips(t, &v, where);
        buf_free(&v);
    }
}

typedef struct ecase {
    const char *type, *lit, *msg;
} ecase;

static const ecase ecases[] = {
    {"int", "'abc'", "Invalid STRING constant (abc) for \"v\" of type int"},
    {"int", "99999999999", "Unable to make int from '99999999999'"},
    {"int", "1.5", "Invalid FLOAT constant (1.5) for \"v\" of type int"},
    {"int", "true", "Invalid BOOLEAN constant (true) for \"v\" of type int"},
    {"int", "0x01", "Invalid HEX constant (0x01) for \"v\" of type int"},
    {"smallint", "40000", "Unable to make short from '40000'"},
    {"tinyint", "-129", "Unable to make byte from '-129'"},
    {"bigint", "9223372036854775808", "Unable to make long from '9223372036854775808'"},
    {"text", "1", "Invalid INTEGER constant (1) for \"v\" of type text"},
    {"text", "0xff", "Invalid HEX constant (0xff) for \"v\" of type text"},
    {"ascii", "'h\xc3\xa9'", "Invalid ASCII character in string literal: h\xc3\xa9"},
    {"blob", "'cafe'", "Invalid STRING constant (cafe) for \"v\" of type blob"},
    {"uuid", "'123e4567-e89b-42d3-a456-426614174000'",
     "Invalid STRING constant (123e4567-e89b-42d3-a456-426614174000) for \"v\" of type uuid"},
    {"timeuuid", "123e4567-e89b-42d3-a456-426614174000", "TimeUUID supports only version 1 UUIDs"},
    {"boolean", "1", "Invalid INTEGER constant (1) for \"v\" of type boolean"},
    {"double", "'1.5'", "Invalid STRING constant (1.5) for \"v\" of type double"},
    {"timestamp", "'yesterday'", "Unable to coerce 'yesterday' to a formatted date (long)"},
    {"timestamp", "'2024-02-30'", "Unable to coerce '2024-02-30' to a formatted date (long)"},
    {"timestamp", "1.5", "Invalid FLOAT constant (1.5) for \"v\" of type timestamp"},
    {"date", "'2024-13-01'", "Unable to coerce '2024-13-01' to a formatted date (long)"},
    {"date", "-1", "Unable to make unsigned int (for date) from: '-1'"},
    {"time", "'25:00:00'", "(TimeType) Unable to coerce '25:00:00' to a formatted time (long)"},
    {"time", "86400000000000", "Unable to make long (for time) from: '86400000000000'"},
    {"inet", "'300.1.1.1'", "Unable to make inet address from '300.1.1.1'"},
    {"duration", "12", "Unable to convert '12' to a duration"},
    {"duration", "'1h'", "Invalid STRING constant (1h) for \"v\" of type duration"},
    {"decimal", "NaN", "unable to make BigDecimal from 'NaN'"},
    {"counter", "NULL", "Invalid null value for counter increment/decrement"},
    {"list<int>", "{1}", "Invalid set literal for v of type list<int>"},
    {"list<int>", "'x'", "Invalid STRING constant (x) for \"v\" of type list<int>"},
    {"set<int>", "[1]", "Invalid list literal for v of type set<int>"},
    {"map<text, int>", "[1]", "Invalid list literal for v of type map<text, int>"},
    {"map<text, int>", "{1: 1}", "Invalid INTEGER constant (1) for \"key(v)\" of type text"},
    {"map<text, int>", "{'a': 'b'}", "Invalid STRING constant (b) for \"value(v)\" of type int"},
    {"list<int>", "[1, 'a']", "Invalid STRING constant (a) for \"value(v)\" of type int"},
    {"list<int>", "[1, null]", "null is not supported inside collections"},
    {"set<text>", "{'a', null}", "null is not supported inside collections"},
    {"frozen<tuple<int, text>>", "(1, 'a', 2)",
     "Invalid tuple literal for v: too many elements. Type frozen<tuple<int, text>> expects 2 but "
     "got 3"},
    {"frozen<tuple<int, text>>", "('a', 'b')",
     "Invalid STRING constant (a) for \"v[0]\" of type int"},
    {"frozen<tuple<int, text>>", "[1]",
     "Invalid list literal for v of type frozen<tuple<int, text>>"},
    {"frozen<point>", "{x: 1, z: 2}", "Unknown field 'z' in value of user defined type point"},
    {"frozen<point>", "{x: 'a'}", "Invalid STRING constant (a) for \"v.x\" of type int"},
    {"int", "?", "Invalid term for \"v\" of type int: only constants are allowed here"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof ecases / sizeof ecases[0]; i++) {
        const cql_ctype *t = type_of(ecases[i].type);
        if (!t) continue;
        buf v;
        buf_init(&v, 0);
        buf_puts(&v, "keep");
        cql_parse_error err = {0};
        int r = literal(t, ecases[i].lit, &v, &err);
        CHECK(r == CQLVAL_ERROR && err.code == CQL_ERR_INVALID, "%s %s: should fail (%d)",
              ecases[i].type, ecases[i].lit, r);
        CHECK_STR(err.msg, ecases[i].msg);
        CHECK(v.len == 4, "%s %s: out left as it was", ecases[i].type, ecases[i].lit);
        buf_free(&v);
    }
}

/* A bind marker handed to the caller's hook: the hook sees the element's type. */
static int hook(void *ctx, const cql_ctype *t, const char *receiver, const cql_expr *e, buf *out,
                cql_parse_error *err)
{
    (void)err;
    int *calls = ctx;
    (*calls)++;
    CHECK(e->kind == CQL_E_BIND, "hook gets the marker");
    CHECK(t->wire.id == CQL_TYPE_INT, "hook gets the element type");
    CHECK_STR(receiver, "value(v)");
    uint8_t b[4] = {0, 0, 0, 9};
    return buf_append(out, b, 4) ? CQLVAL_ERROR : CQLVAL_OK;
}

/* A marker named u is unset; any other marker is int 9. */
static int unset_hook(void *ctx, const cql_ctype *t, const char *receiver, const cql_expr *e,
                      buf *out, cql_parse_error *err)
{
    (void)ctx;
    (void)t;
    (void)receiver;
    (void)err;
    if (e->text && strcmp(e->text, "u") == 0) return CQLVAL_UNSET;
    uint8_t b[4] = {0, 0, 0, 9};
    return buf_append(out, b, 4) ? CQLVAL_ERROR : CQLVAL_OK;
}

static void test_unset(void)
{
    static const struct {
        const char *type, *lit;
        int want;
        const char *msg;
    } cases[] = {
        {"list<int>", "[1, :u]", CQLVAL_UNSET, NULL},
        {"set<int>", "{:u}", CQLVAL_UNSET, NULL},
        {"map<int, int>", "{1: :u}", CQLVAL_UNSET, NULL},
        {"map<int, int>", "{:u: 1}", CQLVAL_ERROR, "unset value is not supported for map keys"},
        {"frozen<tuple<int, int>>", "(1, :u)", CQLVAL_ERROR,
         "Invalid unset value for tuple field number 1"},
        {"frozen<point>", "{x: :u}", CQLVAL_ERROR,
         "Invalid unset value for field 'x' of user defined type point"},
        {"list<int>", "[:a, 1]", CQLVAL_OK, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const cql_ctype *t = type_of(cases[i].type);
        char stmt[256];
        snprintf(stmt, sizeof stmt, "INSERT INTO t (v) VALUES (%s)", cases[i].lit);
        cql_parsed p;
        cql_parse_error err = {0};
        if (!t || cql_parse(stmt, strlen(stmt), &p, &err) != 0) {
            CHECK(0, "parse %s: %s", stmt, err.msg);
            continue;
        }
        cqlval_terms terms = {unset_hook, NULL};
        buf v;
        buf_init(&v, 0);
        int r = cqlval_from_term(t, "v", p.stmts[0]->u.insert.values[0], &terms, &v, &err);
        CHECK(r == cases[i].want, "%s %s: %d, want %d (%s)", cases[i].type, cases[i].lit, r,
              cases[i].want, err.msg);
        if (cases[i].msg) CHECK_STR(err.msg, cases[i].msg);
        if (r != CQLVAL_OK) CHECK(v.len == 0, "nothing written");
        buf_free(&v);
        cql_parsed_free(&p);
    }
}

static void test_hook(void)
{
    const cql_ctype *t = type_of("list<int>");
    const char *stmt = "INSERT INTO t (v) VALUES ([1, ?])";
    cql_parsed p;
    cql_parse_error err = {0};
    CHECK(cql_parse(stmt, strlen(stmt), &p, &err) == 0, "parse");
    int calls = 0;
    cqlval_terms terms = {hook, &calls};
    buf v;
    buf_init(&v, 0);
    CHECK(cqlval_from_term(t, "v", p.stmts[0]->u.insert.values[0], &terms, &v, &err) == CQLVAL_OK,
          "hook: %s", err.msg);
    CHECK(calls == 1, "hook called once");
    buf s;
    buf_init(&s, 0);
    cqlval_to_text(t, (const uint8_t *)v.data, v.len, &s);
    CHECK_STR(s.data, "[1, 9]");
    buf_free(&s);
    buf_free(&v);
    cql_parsed_free(&p);
}

/* Each row: a type and literals in Cassandra's ascending order (equal ones joined by =). */
typedef struct ocase {
    const char *type;
    const char *lits[8];
} ocase;

static const ocase ocases[] = {
    {"int", {"-5", "0", "3", "2147483647"}},
    {"bigint", {"-9223372036854775808", "-1", "1"}},
    {"varint",
     {"-100000000000000000000", "-129", "-1", "0", "127", "128", "100000000000000000000"}},
    {"decimal", {"-10", "-1.5", "0", "0.001", "1.5=1.50", "2", "1e3"}},
    {"double", {"-Infinity", "-1.5", "-0.0", "0.0", "1e-300", "Infinity", "NaN"}},
    {"float", {"-1", "0.5", "3.4e38", "NaN"}},
    {"text", {"''", "'A'", "'a'", "'ab'", "'b'", "'\xc3\xa9'"}},
    {"blob", {"0x", "0x00", "0x0000", "0x01", "0xff"}},
    {"boolean", {"false", "true"}},
    {"timestamp", {"'1969-01-01'", "0", "'2024-01-31'", "'2024-01-31 00:00:01'"}},
    {"date", {"'1900-01-01'", "'1970-01-01'", "'2024-01-31'"}},
    {"time", {"'00:00:00'", "'00:00:00.000000001'", "'23:59:59.999999999'"}},
    /* timeuuid: by time (time_hi, time_mid, time_low), then the rest as signed bytes */
    {"timeuuid",
     {"ffffffff-ffff-1000-8000-000000000000", "00000000-0000-1001-ff00-000000000000",
      "00000000-0000-1001-0000-000000000000", "00000000-0000-1001-0000-000000000001",
      "00000000-0000-1001-7f00-000000000000"}},
    /* uuid: version first, then time for version 1, then unsigned bytes */
    {"uuid",
     {"ffffffff-ffff-1000-8000-000000000000", "00000000-0000-1001-0000-000000000000",
      "00000000-0000-4000-8000-000000000000", "10000000-0000-4000-0000-000000000000"}},
    {"inet", {"'::1'", "'1.2.3.4'", "'10.0.0.1'"}},
    {"frozen<list<int>>", {"[]", "[1]", "[1, 2]", "[2]"}},
    {"frozen<set<text>>", {"{}", "{'a'}", "{'a', 'b'}", "{'b'}"}},
    {"frozen<map<int, int>>", {"{}", "{1: 1}", "{1: 2}", "{2: 0}"}},
    {"frozen<tuple<int, text>>", {"(null, 'z')", "(1, null)", "(1, 'a')", "(2, 'a')"}},
};

static void test_order(void)
{
    for (size_t i = 0; i < sizeof ocases / sizeof ocases[0]; i++) {
        const cql_ctype *t = type_of(ocases[i].type);
        if (!t) continue;
        buf v[16];
        int rank[16];
        size_t n = 0;
        for (size_t k = 0; k < 8 && ocases[i].lits[k]; k++) {
            char copy[256];
            snprintf(copy, sizeof copy, "%s", ocases[i].lits[k]);
            char *save, *part = strtok_r(copy, "=", &save);
            for (; part && n < 16; part = strtok_r(NULL, "=", &save)) {
                buf_init(&v[n], 0);
                cql_parse_error err = {0};
                CHECK(literal(t, part, &v[n], &err) == CQLVAL_OK, "%s %s: %s", ocases[i].type, part,
                      err.msg);
                rank[n++] = (int)k;
            }
        }
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < n; b++) {
                int c = cqlval_compare(t, (const uint8_t *)v[a].data, v[a].len,
                                       (const uint8_t *)v[b].data, v[b].len);
                int want = rank[a] < rank[b] ? -1 : rank[a] > rank[b];
                CHECK((c > 0) - (c < 0) == want, "%s: compare #%zu #%zu gave %d, want %d",
                      ocases[i].type, a, b, c, want);
            }
        for (size_t a = 0; a < n; a++)
            buf_free(&v[a]);
    }
}

typedef struct bcase {
    const char *type, *hex, *msg; /* msg NULL: valid */
} bcase;

static const bcase bcases[] = {
    {"int", "000001", "Expected 4 or 0 byte int (3)"},
    {"int", "", NULL},
    {"bigint", "01", "Expected 8 or 0 byte long (1)"},
    {"smallint", "", "Expected 2 bytes for a smallint (0)"},
    {"text", "c328", "String didn't validate."},
    {"ascii", "80", "Invalid byte for ascii: -128"},
    {"timeuuid", "123e4567e89b42d3a456426614174000", "Invalid version for TimeUUID type."},
    {"uuid", "0102", "UUID should be 16 or 0 bytes (2)"},
    {"time", "ffffffffffffffff", "Time value out of bounds"},
    {"date", "00", "Expected 4 byte long for date (1)"},
    {"inet", "010203", "Expected 4 or 16 byte inetaddress; got 3 bytes"},
    {"list<int>", "00000001", "Not enough bytes to read a list"},
    {"list<int>", "00000001000000040000", "Not enough bytes to read list<int> element 0"},
    {"list<int>", "000000010000000300000000", "Expected 4 or 0 byte int (3)"},
    {"list<int>", "00000001ffffffff", "null is not supported inside collections"},
    {"list<int>", "000000010000000400000001ff",
     "Unexpected extraneous bytes after list<int> value"},
    {"map<int, text>", "00000001000000040000000100000001ff", "String didn't validate."},
    {"frozen<tuple<int>>", "000000040000000100000000",
     "Invalid remaining data after end of tuple value"},
    {"frozen<tuple<int, int>>", "ffffffff", NULL},
    {"duration", "0000", "Expected at least 3 bytes for a duration (2)"},
    {"duration", "020002", NULL},
    {"decimal", "0000", "Expected 0 or at least 5 bytes (2)"},
};

static void test_validate(void)
{
    for (size_t i = 0; i < sizeof bcases / sizeof bcases[0]; i++) {
        const cql_ctype *t = type_of(bcases[i].type);
        if (!t) continue;
        uint8_t b[256];
        size_t n = 0;
        for (const char *h = bcases[i].hex; h[0] && h[1]; h += 2) {
            unsigned x;
            sscanf(h, "%2x", &x);
            b[n++] = (uint8_t)x;
        }
        cql_parse_error err = {0};
        int rc = cqlval_validate(t, b, n, &err);
        if (bcases[i].msg) {
            CHECK(rc == -1 && err.code == CQL_ERR_INVALID, "%s %s should not validate",
                  bcases[i].type, bcases[i].hex);
            CHECK_STR(err.msg, bcases[i].msg);
        } else {
            CHECK(rc == 0, "%s %s should validate: %s", bcases[i].type, bcases[i].hex, err.msg);
        }
    }
}

static void test_json_in(void)
{
    static const struct {
        const char *type, *json, *want; /* want: to_text, or "!" + message */
    } jcases[] = {
        {"int", "\"12\"", "12"},
        {"int", "12", "12"},
        {"int", "1.5", "!Expected an int value, but got a Double: 1.5"},
        {"bigint", "\"x\"", "!Unable to make long from 'x'"},
        {"text", "1", "!Expected a UTF-8 string, but got a Integer: 1"},
        {"blob", "\"cafe\"", "!String representation of blob is missing 0x prefix: cafe"},
        {"timestamp", "1706702400000", "2024-01-31T12:00:00.000Z"},
        {"timestamp", "\"2024-01-31 12:00:00.000Z\"", "2024-01-31T12:00:00.000Z"},
        {"set<int>", "[3, 1, 1]", "{1, 3}"},
        {"list<int>", "{\"a\": 1}", "!Expected a list, but got a LinkedHashMap: {\"a\":1}"},
        {"list<int>", "[1, null]", "!Invalid null element in collection for value(v)"},
        {"map<int, text>", "{\"2\": \"b\", \"1\": \"a\"}", "{1: 'a', 2: 'b'}"},
        {"map<int, text>", "{\"x\": \"b\"}", "!Unable to make int from 'x'"},
        {"frozen<point>", "{\"X\": 1}", "{x: 1, y: null}"},
        {"frozen<point>", "{\"q\": 1}", "!Unknown field 'q' in value of user defined type point"},
        {"frozen<tuple<int, int>>", "[1, 2, 3]",
         "!Tuple contains extra items (expected 2): [1,2,3]"},
        {"double", "\"NaN\"", "NaN"},
        {"decimal", "1.25", "1.25"},
        {"boolean", "\"true\"", "true"},
        {"decimal", "1.50", "1.50"},
        {"decimal", "-1.0E-30", "-1.0E-30"},
        {"varint", "123456789012345678901234567890", "123456789012345678901234567890"},
        {"map<decimal, int>", "{\"1.50\": 1}", "{1.50: 1}"},
        {"list<int>", "[1, 2.5]", "!Expected an int value, but got a Double: 2.5"},
        {"int", "3000000000", "!Expected an int value, but got a Long: 3000000000"},
        {"bigint", "3000000000", "3000000000"},
        {"bigint", "1e3", "!Expected a bigint value, but got a Double: 1e3"},
        {"bigint", "99999999999999999999",
         "!Expected a bigint value, but got a BigInteger: 99999999999999999999"},
        {"smallint", "1.5", "!Unable to make short from '1.5'"},
        {"varint", "99999999999999999999", "99999999999999999999"},
        {"text", "[1, 2]", "!Expected a UTF-8 string, but got a ArrayList: [1,2]"},
    };
    for (size_t i = 0; i < sizeof jcases / sizeof jcases[0]; i++) {
        const cql_ctype *t = type_of(jcases[i].type);
        cql_parse_error perr = {0};
        json_t *j = cqlval_json_parse(jcases[i].json, strlen(jcases[i].json), &perr);
        CHECK(t && j, "json case %zu", i);
        if (!t || !j) continue;
        buf v;
        buf_init(&v, 0);
        cql_parse_error err = {0};
        int r = cqlval_from_json(t, "v", j, &v, &err);
        if (jcases[i].want[0] == '!') {
            CHECK(r == CQLVAL_ERROR, "%s %s should fail", jcases[i].type, jcases[i].json);
            CHECK_STR(err.msg, jcases[i].want + 1);
        } else {
            CHECK(r == CQLVAL_OK, "%s %s: %s", jcases[i].type, jcases[i].json, err.msg);
            buf s;
            buf_init(&s, 0);
            cqlval_to_text(t, (const uint8_t *)v.data, v.len, &s);
            CHECK_STR(s.data ? s.data : "", jcases[i].want);
            buf_free(&s);
        }
        json_t *null = json_null();
        buf_reset(&v);
        CHECK(cqlval_from_json(t, "v", null, &v, &err) == CQLVAL_NULL, "json null");
        json_decref(null);
        buf_free(&v);
        json_decref(j);
    }
}

static void test_json_parse(void)
{
    static const char *const bad[] = {
        "",
        "[",
        "[1,]",
        "{\"a\" 1}",
        "{\"a\":}",
        "01",
        "1.",
        "1e",
        "-",
        "\"\\x\"",
        "\"\\ud800\"",
        "tru",
        "[1] 2",
        "\"\x01\"",
        "{1: 2}",
        "\"\xc3\x28\"",
        "NaN",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
        "[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cql_parse_error err = {0};
        json_t *j = cqlval_json_parse(bad[i], strlen(bad[i]), &err);
        CHECK(j == NULL && err.code == CQL_ERR_INVALID &&
                  strncmp(err.msg, "Could not decode JSON string", 28) == 0,
              "bad JSON %s accepted", bad[i]);
        json_decref(j);
    }
    cql_parse_error err = {0};
    const char *ok =
        " {\"s\": \"a\\\"\\u00e9\\ud83d\\ude00\\n\", \"l\": [true, false, null, -0.5e+3], "
        "\"e\": {}} ";
    json_t *j = cqlval_json_parse(ok, strlen(ok), &err);
    CHECK(j != NULL, "good JSON: %s", err.msg);
    CHECK_STR(json_string_value(json_object_get(j, "s")), "a\"\xc3\xa9\xf0\x9f\x98\x80\n");
    CHECK(json_array_size(json_object_get(j, "l")) == 4, "array");
    json_decref(j);
}

static void test_json_object(void)
{
    static const struct {
        const char *text, *msg; /* msg NULL: an object */
    } cases[] = {
        {"{\"k\": 0, \"v\": 1.50}", NULL},
        {"null", "Got null for INSERT JSON values"},
        {"\"notamap\"", "Could not decode JSON string as a map: the value is not a JSON object"},
        {"12.34", "Could not decode JSON string as a map: the value is not a JSON object"},
        {"{\"k\": ",
         "Could not decode JSON string as a map: unexpected end of input at character 6"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cql_parse_error err = {0};
        json_t *j = cqlval_json_object(cases[i].text, strlen(cases[i].text), &err);
        if (cases[i].msg) {
            CHECK(j == NULL, "%s should be refused", cases[i].text);
            CHECK_STR(err.msg, cases[i].msg);
        } else {
            CHECK(j != NULL, "%s: %s", cases[i].text, err.msg);
            buf v;
            buf_init(&v, 0);
            CHECK(j && cqlval_from_json(type_of("decimal"), "v", json_object_get(j, "v"), &v,
                                        &err) == CQLVAL_OK,
                  "member value");
            buf s;
            buf_init(&s, 0);
            cqlval_to_text(type_of("decimal"), (const uint8_t *)v.data, v.len, &s);
            CHECK_STR(s.data, "1.50");
            buf_free(&s);
            buf_free(&v);
        }
        json_decref(j);
    }
    static const char *const names[][2] = {
        {"k", "k"}, {"K", "k"}, {"\"Foo\"", "Foo"}, {"\"\"", ""}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        buf b;
        buf_init(&b, 0);
        CHECK(cqlval_json_name(names[i][0], &b) == 0, "name");
        CHECK_STR(b.data ? b.data : "", names[i][1]);
        buf_free(&b);
    }
}

/* The stored form is what a DynamoDB client should see. */
static void test_item_shape(void)
{
    static const struct {
        const char *type, *lit, *item;
    } icases[] = {
        {"text", "'hi'", "{\"S\":\"hi\"}"},
        {"int", "-7", "{\"N\":\"-7\"}"},
        {"double", "1.5", "{\"N\":\"1.5\"}"},
        {"double", "1e300", "{\"S\":\"1.0E300\"}"},
        {"double", "-0.0", "{\"S\":\"-0.0\"}"},
        {"float", "0.1", "{\"N\":\"0.1\"}"},
        {"decimal", "1.5", "{\"N\":\"1.5\"}"},
        {"decimal", "1.50", "{\"S\":\"1.50\"}"},
        {"varint", "12", "{\"N\":\"12\"}"},
        {"boolean", "true", "{\"BOOL\":true}"},
        {"blob", "0x0102ff", "{\"B\":\"AQL/\"}"},
        {"timestamp", "'2024-01-31 12:00:00+0000'", "{\"S\":\"2024-01-31T12:00:00.000Z\"}"},
        {"date", "'2024-01-31'", "{\"S\":\"2024-01-31\"}"},
        {"uuid", "123e4567-e89b-42d3-a456-426614174000",
         "{\"S\":\"123e4567-e89b-42d3-a456-426614174000\"}"},
        {"list<int>", "[1, 2]", "{\"L\":[{\"N\":\"1\"},{\"N\":\"2\"}]}"},
        {"set<text>", "{'a'}", "{\"L\":[{\"S\":\"a\"}]}"},
        {"map<text, int>", "{'a': 1}", "{\"M\":{\"a\":{\"N\":\"1\"}}}"},
        {"map<int, boolean>", "{2: true}", "{\"M\":{\"2\":{\"BOOL\":true}}}"},
        {"map<frozen<list<int>>, int>", "{[1]: 2}",
         "{\"L\":[{\"L\":[{\"L\":[{\"N\":\"1\"}]},{\"N\":\"2\"}]}]}"},
        {"frozen<tuple<int, text>>", "(1, null)", "{\"L\":[{\"N\":\"1\"},{\"NULL\":true}]}"},
        {"frozen<point>", "{x: 3}", "{\"M\":{\"x\":{\"N\":\"3\"},\"y\":{\"NULL\":true}}}"},
    };
    for (size_t i = 0; i < sizeof icases / sizeof icases[0]; i++) {
        const cql_ctype *t = type_of(icases[i].type);
        if (!t) continue;
        buf v;
        buf_init(&v, 0);
        cql_parse_error err = {0};
        CHECK(literal(t, icases[i].lit, &v, &err) == CQLVAL_OK, "%s: %s", icases[i].lit, err.msg);
        json_t *item = cqlval_to_item(t, (const uint8_t *)v.data, v.len);
        char *s = item ? json_dumps(item, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        CHECK_STR(s, icases[i].item);
        free(s);
        if (item) roundtrips(t, &v, icases[i].lit);
        json_decref(item);
        buf_free(&v);
    }
    /* a map read back from a stored M whose keys come in another order is sorted again */
    const cql_ctype *t = type_of("map<int, int>");
    json_t *m = json_loads("{\"M\":{\"10\":{\"N\":\"1\"},\"9\":{\"N\":\"2\"}}}", 0, NULL);
    buf v;
    buf_init(&v, 0);
    cql_parse_error err = {0};
    CHECK(cqlval_from_item(t, m, &v, &err) == 0, "stored map: %s", err.msg);
    buf s;
    buf_init(&s, 0);
    cqlval_to_text(t, (const uint8_t *)v.data, v.len, &s);
    CHECK_STR(s.data, "{9: 2, 10: 1}");
    json_decref(m);
    /* a stored form of another type is refused */
    m = json_loads("{\"BOOL\":true}", 0, NULL);
    memset(&err, 0, sizeof err);
    buf_reset(&v);
    CHECK(cqlval_from_item(type_of("int"), m, &v, &err) == -1 && err.code == CQL_ERR_SERVER,
          "BOOL is no int");
    json_decref(m);
    buf_free(&s);
    buf_free(&v);
}

static void test_canonical(void)
{
    const cql_ctype *t = type_of("frozen<set<int>>");
    /* {2, 1, 2} as a driver might bind it */
    static const uint8_t in[] = {0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0,
                                 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2};
    buf v;
    buf_init(&v, 0);
    CHECK(cqlval_canonical(t, in, sizeof in, &v) == 0, "canonical");
    buf s;
    buf_init(&s, 0);
    cqlval_to_text(t, (const uint8_t *)v.data, v.len, &s);
    CHECK_STR(s.data, "{1, 2}");
    buf_free(&s);
    buf_free(&v);
}

int main(void)
{
    arena_init(&test_arena, 0);
    static const char *const fields[] = {"x", "y"};
    cql_ctype *u = arena_alloc(&test_arena, sizeof *u);
    static const cql_type *params[2];
    static const cql_ctype *args[2];
    args[0] = args[1] = cqltype_native(CQL_TYPE_INT);
    params[0] = params[1] = &args[0]->wire;
    u->wire.id = CQL_TYPE_UDT;
    u->wire.name = "point";
    u->wire.keyspace = "ks";
    u->wire.field_names = fields;
    u->wire.n = 2;
    u->wire.params = params;
    u->args = args;
    udt_point = u;
    test_values();
    test_errors();
    test_hook();
    test_unset();
    test_order();
    test_validate();
    test_json_in();
    test_json_parse();
    test_json_object();
    test_item_shape();
    test_canonical();
    arena_free(&test_arena);
    return check_report("test_cqlval_value");
}
