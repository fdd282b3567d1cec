/* test_cqlval_func.c — native functions, CAST and timeuuids (src/cql/func.c).
 *
 * Terms with function calls are parsed as an INSERT's value and evaluated for a type
 * through cqlfn_term: each row gives the value's text or Cassandra's refusal. The clock
 * functions are checked against the time around the call; timeuuids must increase within a
 * thread and never repeat across threads; CAST rows give the source, the target and the
 * text of the result. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cql/ast.h"
#include "cql/func.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"

#include "check.h"

static arena test_arena;

static const cql_ctype *type_of(const char *s)
{
    cql_parse_error err = {0};
    const cql_ctype *t = NULL;
    CHECK(cqltype_parse(&test_arena, s, strlen(s), NULL, &t, &err) == 0, "type %s: %s", s, err.msg);
    return t;
}

/* Bind markers: the caller's hook gives int 7 for any marker of type int. */
static int binds(void *ctx, const cql_ctype *t, const char *receiver, const cql_expr *e, buf *out,
                 cql_parse_error *err)
{
    (void)ctx;
    (void)receiver;
    if (e->kind != CQL_E_BIND || t->wire.id != CQL_TYPE_INT) {
        snprintf(err->msg, sizeof err->msg, "unexpected term");
        err->code = CQL_ERR_INVALID;
        return CQLVAL_ERROR;
    }
    uint8_t b[4];
    cql_int_encode(7, b);
    return buf_append(out, b, 4) ? CQLVAL_ERROR : CQLVAL_OK;
}

/* Evaluates term `lit` for type t: CQLVAL_* with the bytes in out. */
static int eval(const cql_ctype *t, const char *lit, buf *out, cql_parse_error *err)
{
    char stmt[1024];
    snprintf(stmt, sizeof stmt, "INSERT INTO t (v) VALUES (%s)", lit);
    cql_parsed p;
    cql_parse_error perr = {0};
    if (cql_parse(stmt, strlen(stmt), &p, &perr) != 0) {
        snprintf(err->msg, sizeof err->msg, "parse: %.900s", perr.msg);
        return CQLVAL_ERROR;
    }
    cqlfn_env env = {{binds, NULL}, &test_arena, NULL};
    cqlval_terms terms = {cqlfn_term, &env};
    int r = cqlval_from_term(t, "v", p.stmts[0]->u.insert.values[0], &terms, out, err);
    cql_parsed_free(&p);
    return r;
}

typedef struct fcase {
    const char *type, *term, *want; /* want: the value's CQL literal, "null", "!" message
                                       (Invalid) or "~" message (FunctionFailure) */
} fcase;

static const fcase fcases[] = {
    {"int", "blobAsInt(0x0000002a)", "42"},
    {"blob", "intAsBlob(42)", "0x0000002a"},
    {"blob", "textAsBlob('abc')", "0x616263"},
    {"text", "blobAsText(0x616263)", "'abc'"},
    {"varchar", "blobasvarchar(0x61)", "'a'"},
    {"bigint", "blobAsBigint(bigintAsBlob(-5))", "-5"},
    {"boolean", "blobAsBoolean(0x01)", "true"},
    {"int", "blobAsInt(null)", "null"},
    {"timeuuid", "minTimeuuid('2024-01-31 12:00:00+0000')", "4265e000-c030-11ee-8080-808080808080"},
    {"timeuuid", "maxTimeuuid('2024-01-31 12:00:00+0000')", "4266070f-c030-11ee-7f7f-7f7f7f7f7f7f"},
    {"timestamp", "toTimestamp(minTimeuuid('2024-01-31 12:00:00+0000'))",
     "'2024-01-31T12:00:00.000Z'"},
    {"timestamp", "dateOf(maxTimeuuid(1706702400000))", "'2024-01-31T12:00:00.000Z'"},
    {"bigint", "unixTimestampOf(minTimeuuid(0))", "0"},
    {"bigint", "toUnixTimestamp(minTimeuuid(1706702400123))", "1706702400123"},
    {"date", "toDate('2024-01-31 23:59:59+0000')", "'2024-01-31'"},
    {"date", "toDate(minTimeuuid(-1))", "'1969-12-31'"},
    {"timestamp", "toTimestamp('2024-01-31')", "'2024-01-31T00:00:00.000Z'"},
    {"bigint", "toUnixTimestamp(toDate('2024-01-31 10:00:00+0000'))", "1706659200000"},
    {"list<int>", "fromJson('[3, 1]')", "[3, 1]"},
    {"map<text, int>", "fromJson('{\"b\": 2, \"a\": 1}')", "{'a': 1, 'b': 2}"},
    {"text", "toJson(intAsBlob(1))",
     "!toJson() may only be used within the selection clause of SELECT statements"},
    {"int", "(int)?", "7"},
    {"int", "blobAsInt(intAsBlob(?))", "7"},
    {"list<int>", "[1, blobAsInt(0x00000002), ?]", "[1, 2, 7]"},
    {"uuid", "minTimeuuid(0)", "13814000-1dd2-11b2-8080-808080808080"},
    {"int", "now()",
     "!Type error: cannot assign result of function system.now (type timeuuid) to v (type int)"},
    {"int", "nosuch(1)", "!Unknown function nosuch"},
    {"timeuuid", "now(1)",
     "!Invalid number of arguments in call to function system.now: 0 required but 1 provided"},
    {"int", "blobAsInt(0x01)",
     "!In call to function system.blobasint, value 0x01 is not a valid binary representation "
     "for type int"},
    {"timestamp", "toTimestamp(1.5)",
     "!Invalid call to function system.totimestamp, none of its type signatures match (known "
     "type signatures: system.totimestamp : (timeuuid) -> timestamp, system.totimestamp : "
     "(date) -> timestamp)"},
    {"bigint", "toUnixTimestamp('2024-01-31')",
     "!Ambiguous call to function system.tounixtimestamp (can be matched by following "
     "signatures: system.tounixtimestamp : (timestamp) -> bigint, system.tounixtimestamp : "
     "(date) -> bigint): use type casts to disambiguate"},
    {"int", "blobAsInt('x')",
     "!Type error: 'x' cannot be passed as argument 0 of function system.blobasint of type "
     "blob"},
    {"list<int>", "fromJson('[1, ')",
     "~Could not decode JSON string '[1, ': unexpected end of input at character 4"},
    {"list<int>", "fromJson('{\"a\": 1}')", "~Expected a list, but got a LinkedHashMap: {\"a\":1}"},
    {"int", "(text)?", "!Cannot assign value of type text to v of type int"},
};

static void test_terms(void)
{
    for (size_t i = 0; i < sizeof fcases / sizeof fcases[0]; i++) {
        const fcase *c = &fcases[i];
        const cql_ctype *t = type_of(c->type);
        if (!t) continue;
        buf v;
        buf_init(&v, 0);
        cql_parse_error err = {0};
        int r = eval(t, c->term, &v, &err);
        if (c->want[0] == '!' || c->want[0] == '~') {
            int code = c->want[0] == '!' ? CQL_ERR_INVALID : CQL_ERR_FUNCTION_FAILURE;
            CHECK(r == CQLVAL_ERROR && err.code == code, "%s should fail (%d)", c->term, r);
            CHECK_STR(err.msg, c->want + 1);
        } else if (strcmp(c->want, "null") == 0) {
            CHECK(r == CQLVAL_NULL, "%s should be null (%d %s)", c->term, r, err.msg);
        } else {
            CHECK(r == CQLVAL_OK, "%s: %s", c->term, err.msg);
            buf s;
            buf_init(&s, 0);
            cqlval_to_cql(t, (const uint8_t *)v.data, v.len, &s);
            CHECK_STR(s.data ? s.data : "", c->want);
            buf_free(&s);
        }
        buf_free(&v);
    }
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_clock(void)
{
    int64_t before = wall_ms();
    buf v;
    buf_init(&v, 0);
    cql_parse_error err = {0};
    CHECK(eval(type_of("timestamp"), "toTimestamp(now())", &v, &err) == CQLVAL_OK, "%s", err.msg);
    int64_t ms = 0;
    cql_bigint_decode((const uint8_t *)v.data, v.len, &ms);
    int64_t after = wall_ms();
    CHECK(ms >= before && ms <= after, "toTimestamp(now()) %lld not in [%lld, %lld]", (long long)ms,
          (long long)before, (long long)after);
    buf_reset(&v);
    CHECK(eval(type_of("timestamp"), "currentTimestamp()", &v, &err) == CQLVAL_OK, "%s", err.msg);
    cql_bigint_decode((const uint8_t *)v.data, v.len, &ms);
    CHECK(ms >= before && ms <= wall_ms(), "currentTimestamp");
    buf_reset(&v);
    CHECK(eval(type_of("date"), "currentDate()", &v, &err) == CQLVAL_OK, "%s", err.msg);
    int64_t days;
    cql_date_decode((const uint8_t *)v.data, v.len, &days);
    CHECK(days == before / 86400000 || days == wall_ms() / 86400000, "currentDate");
    buf_reset(&v);
    CHECK(eval(type_of("time"), "currentTime()", &v, &err) == CQLVAL_OK, "%s", err.msg);
    int64_t ns;
    CHECK(cql_time_decode((const uint8_t *)v.data, v.len, &ns) == 0, "currentTime is a time");
    CHECK(ns / 1000000 >= before % 86400000 - 1000 || ns / 1000000 < 2000, "currentTime");
    buf_reset(&v);
    CHECK(eval(type_of("uuid"), "uuid()", &v, &err) == CQLVAL_OK && v.len == 16 &&
              ((uint8_t)v.data[6] >> 4) == 4 && ((uint8_t)v.data[8] & 0xc0) == 0x80,
          "uuid() is version 4");
    buf_reset(&v);
    CHECK(eval(type_of("uuid"), "now()", &v, &err) == CQLVAL_OK && ((uint8_t)v.data[6] >> 4) == 1,
          "now() fits a uuid column");
    buf_free(&v);
    uint8_t lo[16], hi[16];
    cqlfn_timeuuid_min(1706702400123, lo);
    cqlfn_timeuuid_max(1706702400123, hi);
    CHECK(cqlfn_timeuuid_ms(lo) == 1706702400123 && cqlfn_timeuuid_ms(hi) == 1706702400123,
          "min and max keep their millisecond");
    cqlfn_timeuuid_min(-5, lo);
    CHECK(cqlfn_timeuuid_ms(lo) == -5, "before the epoch");
    /* every timeuuid of a millisecond lies within its min and max */
    uint8_t u[16];
    cqlfn_timeuuid_now(u);
    int64_t m = cqlfn_timeuuid_ms(u);
    cqlfn_timeuuid_min(m, lo);
    cqlfn_timeuuid_max(m, hi);
    const cql_ctype *tu = cqltype_native(CQL_TYPE_TIMEUUID);
    CHECK(cqlval_compare(tu, lo, 16, u, 16) < 0 && cqlval_compare(tu, u, 16, hi, 16) < 0,
          "now() between minTimeuuid and maxTimeuuid of its millisecond");
}

enum { PER_THREAD = 20000 };

static void *make_uuids(void *arg)
{
    uint8_t *out = arg;
    for (int i = 0; i < PER_THREAD; i++)
        cqlfn_timeuuid_now(out + 16 * i);
    return NULL;
}

static int cmp16(const void *a, const void *b)
{
    return cqlval_compare(cqltype_native(CQL_TYPE_TIMEUUID), a, 16, b, 16);
}

static void test_monotonic(void)
{
    uint8_t *a = malloc(16 * PER_THREAD), *b = malloc(16 * PER_THREAD);
    pthread_t ta, tb;
    pthread_create(&ta, NULL, make_uuids, a);
    pthread_create(&tb, NULL, make_uuids, b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    int increasing = 1;
    for (int i = 1; i < PER_THREAD; i++)
        if (cmp16(a + 16 * (i - 1), a + 16 * i) >= 0 || cmp16(b + 16 * (i - 1), b + 16 * i) >= 0)
            increasing = 0;
    CHECK(increasing, "timeuuids increase within a thread");
    uint8_t *all = malloc(32 * PER_THREAD);
    memcpy(all, a, 16 * PER_THREAD);
    memcpy(all + 16 * PER_THREAD, b, 16 * PER_THREAD);
    qsort(all, 2 * PER_THREAD, 16, cmp16);
    int unique = 1;
    for (int i = 1; i < 2 * PER_THREAD; i++)
        if (memcmp(all + 16 * (i - 1), all + 16 * i, 16) == 0) unique = 0;
    CHECK(unique, "no timeuuid repeats across threads");
    int versions = 1;
    for (int i = 0; i < 2 * PER_THREAD; i++)
        if ((all[16 * i + 6] >> 4) != 1 || (all[16 * i + 8] & 0xc0) != 0x80) versions = 0;
    CHECK(versions, "version 1, variant 10");
    free(a);
    free(b);
    free(all);
}

typedef struct ccase {
    const char *from, *lit, *to, *want; /* want: the result's CQL literal, or "!" message */
} ccase;

static const ccase ccases[] = {
    {"int", "42", "bigint", "42"},
    {"bigint", "1099511627777", "int", "1"},
    {"bigint", "-1", "tinyint", "-1"},
    {"int", "300", "tinyint", "44"},
    {"double", "3.9", "int", "3"},
    {"double", "-3.9", "int", "-3"},
    {"double", "1e20", "int", "2147483647"},
    {"double", "1e20", "bigint", "9223372036854775807"},
    {"double", "NaN", "int", "0"},
    {"float", "1.5", "double", "1.5"},
    {"double", "0.1", "float", "0.1"},
    {"decimal", "12.75", "int", "12"},
    {"decimal", "-12.75", "bigint", "-12"},
    {"decimal", "1e3", "int", "1000"},
    {"decimal", "12.5", "double", "12.5"},
    {"varint", "18446744073709551617", "bigint", "1"},
    {"varint", "123", "decimal", "123"},
    {"float", "1.5", "decimal", "1.5"},
    {"float", "0.1", "decimal", "0.10000000149011612"},
    {"double", "1e10", "varint", "10000000000"},
    {"double", "1e20", "varint", "9223372036854775807"},
    {"decimal", "-12.75", "varint", "-12"},
    {"double", "-2.5", "varint", "-2"},
    {"int", "-7", "varint", "-7"},
    {"int", "7", "decimal", "7"},
    {"counter", "5", "int", "5"},
    {"ascii", "'a'", "text", "'a'"},
    {"inet", "'10.0.0.1'", "text", "'10.0.0.1'"},
    {"time", "'12:00:00'", "text", "'12:00:00.000000000'"},
    {"int", "42", "text", "'42'"},
    {"double", "1e10", "text", "'1.0E10'"},
    {"uuid", "123e4567-e89b-42d3-a456-426614174000", "ascii",
     "'123e4567-e89b-42d3-a456-426614174000'"},
    {"timestamp", "'2024-01-31 12:00:00+0000'", "text", "'2024-01-31T12:00:00.000Z'"},
    {"timestamp", "'2024-01-31 12:00:00+0000'", "date", "'2024-01-31'"},
    {"date", "'2024-01-31'", "timestamp", "'2024-01-31T00:00:00.000Z'"},
    {"timeuuid", "4265e000-c030-11ee-8080-808080808080", "timestamp", "'2024-01-31T12:00:00.000Z'"},
    {"boolean", "true", "text", "'true'"},
    {"blob", "0x01", "text", "!blob cannot be cast to text"},
    {"text", "'h\xc3\xa9'", "ascii", "!text cannot be cast to ascii"},
    {"double", "NaN", "varint", "0"},
    {"double", "NaN", "decimal", "!Cannot cast NaN to decimal: Infinite or NaN"},
    {"text", "'1'", "int", "!text cannot be cast to int"},
    {"int", "1", "boolean", "!int cannot be cast to boolean"},
};

static void test_cast(void)
{
    for (size_t i = 0; i < sizeof ccases / sizeof ccases[0]; i++) {
        const ccase *c = &ccases[i];
        const cql_ctype *from = type_of(c->from), *to = type_of(c->to);
        if (!from || !to) continue;
        buf v, r;
        buf_init(&v, 0);
        buf_init(&r, 0);
        cql_parse_error err = {0};
        CHECK(eval(from, c->lit, &v, &err) == CQLVAL_OK, "%s %s: %s", c->from, c->lit, err.msg);
        int rc = cqlfn_cast(from, to, (const uint8_t *)v.data, v.len, &r, &err);
        if (c->want[0] == '!') {
            CHECK(rc == CQLVAL_ERROR, "CAST(%s AS %s) should fail", c->lit, c->to);
            CHECK_STR(err.msg, c->want + 1);
        } else {
            CHECK(rc == CQLVAL_OK, "CAST(%s %s AS %s): %s", c->from, c->lit, c->to, err.msg);
            buf s;
            buf_init(&s, 0);
            cqlval_to_cql(to, (const uint8_t *)r.data, r.len, &s);
            CHECK(s.data && strcmp(s.data, c->want) == 0, "CAST(%s %s AS %s) gave %s, want %s",
                  c->from, c->lit, c->to, s.data ? s.data : "", c->want);
            cql_parse_error verr = {0};
            CHECK(cqlval_validate(to, (const uint8_t *)r.data, r.len, &verr) == 0,
                  "cast result valid: %s", verr.msg);
            buf_free(&s);
        }
        buf_free(&v);
        buf_free(&r);
    }
    /* the selector's name in the refusal, as CastFctsTest has it */
    cql_parse_error cerr = {0};
    CHECK(cqlfn_cast_check_as(type_of("int"), type_of("boolean"), "a", &cerr) == -1, "int->bool");
    CHECK_STR(cerr.msg, "a cannot be cast to boolean");
    memset(&cerr, 0, sizeof cerr);
    CHECK(cqlfn_cast_check_as(type_of("frozen<list<int>>"), type_of("text"), "l", &cerr) == -1,
          "list->text");
    CHECK_STR(cerr.msg, "l cannot be cast to text");
    /* CAST as a term: the inner term's type must be known */
    buf v;
    buf_init(&v, 0);
    cql_parse_error err = {0};
    const char *stmt = "SELECT CAST(blobAsInt(0x00000005) AS text) FROM t";
    cql_parsed p;
    CHECK(cql_parse(stmt, strlen(stmt), &p, &err) == 0, "parse cast: %s", err.msg);
    if (p.nstmts) {
        cqlfn_env env = {{NULL, NULL}, &test_arena, NULL};
        CHECK(cqlfn_term(&env, type_of("text"), "v", p.stmts[0]->u.select.sel[0].expr, &v, &err) ==
                      CQLVAL_OK &&
                  v.len == 1 && v.data[0] == '5',
              "CAST of a call: %s", err.msg);
        cql_parsed_free(&p);
    }
    buf_free(&v);
}

static void test_resolve(void)
{
    cql_parse_error err = {0};
    const cql_ctype *ts = cqltype_native(CQL_TYPE_TIMESTAMP);
    const cqlfn_fn *f = cqlfn_resolve("todate", &ts, NULL, 1, NULL, &err);
    CHECK(f && strcmp(cqlfn_name(f), "system.todate") == 0, "todate(timestamp)");
    CHECK(f && cqlfn_return_type(f, NULL)->wire.id == CQL_TYPE_DATE, "returns date");
    const cql_ctype *i32 = cqltype_native(CQL_TYPE_INT);
    f = cqlfn_resolve("system.tojson", &i32, NULL, 1, NULL, &err);
    CHECK(f && cqlfn_arg_type(f, 0, i32) == i32, "toJson takes the argument's type");
    if (f) {
        uint8_t b[4];
        cql_int_encode(-3, b);
        cql_value a = {b, 4};
        buf out;
        buf_init(&out, 0);
        CHECK(cqlfn_call(f, &i32, &a, 1, cqlfn_return_type(f, NULL), &out, &err) == CQLVAL_OK &&
                  out.len == 2 && memcmp(out.data, "-3", 2) == 0,
              "toJson(-3)");
        cql_value nul = {NULL, CQL_NULL};
        buf_reset(&out);
        CHECK(cqlfn_call(f, &i32, &nul, 1, cqlfn_return_type(f, NULL), &out, &err) == CQLVAL_OK &&
                  out.len == 4 && memcmp(out.data, "null", 4) == 0,
              "toJson(null) is 'null'");
        buf_free(&out);
    }
    memset(&err, 0, sizeof err);
    const cql_ctype *txt = cqltype_native(CQL_TYPE_VARCHAR);
    CHECK(cqlfn_resolve("fromjson", &txt, NULL, 1, NULL, &err) == NULL, "fromJson in a selection");
    CHECK_STR(err.msg, "fromJson() cannot be used in the selection clause of a SELECT statement");
}

int main(void)
{
    arena_init(&test_arena, 0);
    test_terms();
    test_clock();
    test_monotonic();
    test_cast();
    test_resolve();
    arena_free(&test_arena);
    return check_report("test_cqlval_func");
}
