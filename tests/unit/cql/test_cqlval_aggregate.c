/* test_cqlval_aggregate.c — COUNT, MIN, MAX, SUM and AVG (src/cql/aggregate.c).
 *
 * Each row is an aggregate over a type, the values fed to it (CQL literals, NULL for a
 * null) and the result's CQL literal, following Cassandra's AggregateFcts: integer sums
 * wrap in the type's width, integer averages truncate over an exact sum, float and double
 * sums are Kahan-compensated (the expected doubles computed with the same algorithm in
 * Python), decimal averages round half-even step by step (so AVG(1, 2) of decimals is 1),
 * and varint and decimal sums are exact. Types an aggregate is not defined on are refused. */
#include <string.h>

#include "cql/aggregate.h"
#include "cql/ast.h"
#include "cql/types.h"
#include "cql/value.h"

#include "check.h"

static arena test_arena;

static const cql_ctype *type_of(const char *s)
{
    cql_parse_error err = {0};
    const cql_ctype *t = NULL;
    CHECK(cqltype_parse(&test_arena, s, strlen(s), NULL, &t, &err) == 0, "type %s: %s", s, err.msg);
    return t;
}

/* A literal's bytes (CQLVAL_NULL for NULL). */
static int literal(const cql_ctype *t, const char *lit, buf *out)
{
    char stmt[512];
    snprintf(stmt, sizeof stmt, "INSERT INTO t (v) VALUES (%s)", lit);
    cql_parsed p;
    cql_parse_error err = {0};
    if (cql_parse(stmt, strlen(stmt), &p, &err) != 0) return CQLVAL_ERROR;
    int r = cqlval_from_term(t, "v", p.stmts[0]->u.insert.values[0], NULL, out, &err);
    CHECK(r != CQLVAL_ERROR, "literal %s: %s", lit, err.msg);
    cql_parsed_free(&p);
    return r;
}

typedef struct acase {
    const char *fn, *type;
    const char *values[8]; /* NULL-terminated */
    const char *want;      /* the result's CQL literal, or "null" */
} acase;

static const acase acases[] = {
    {"count", "int", {"1", "NULL", "3"}, "2"},
    {"count(*)", "int", {"1", "NULL", "3"}, "3"},
    {"count", "int", {NULL}, "0"},
    {"count(*)", "int", {NULL}, "0"},
    {"sum", "int", {"1", "2", "3", "NULL"}, "6"},
    {"sum", "int", {"2147483647", "1"}, "-2147483648"},
    {"sum", "tinyint", {"100", "100"}, "-56"},
    {"sum", "smallint", {"30000", "30000"}, "-5536"},
    {"sum", "bigint", {"9223372036854775807", "1"}, "-9223372036854775808"},
    {"sum", "counter", {"5", "-7"}, "-2"},
    {"sum", "int", {NULL}, "0"},
    {"avg", "int", {"1", "2"}, "1"},
    {"avg", "int", {"-1", "-2"}, "-1"},
    {"avg", "int", {"2147483647", "2147483647"}, "2147483647"},
    {"avg", "bigint", {"9223372036854775807", "1"}, "4611686018427387904"},
    {"avg", "tinyint", {"100", "100", "NULL"}, "100"},
    {"avg", "int", {NULL}, "0"},
    {"sum", "float", {"0.1", "0.2"}, "0.3"},
    {"sum", "double", {"0.1", "0.2"}, "0.30000000000000004"},
    {"sum", "double", {"0.1", "0.2", "0.3"}, "0.6"},
    {"sum", "double", {"0.1", "0.1", "0.1", "0.1", "0.1", "0.1", "0.1", "0.1"}, "0.8"},
    {"sum", "double", {"1e308", "1e308"}, "Infinity"},
    {"sum", "double", {"Infinity", "-Infinity"}, "NaN"},
    {"sum", "double", {"Infinity", "Infinity"}, "Infinity"},
    {"avg", "double", {"1", "2"}, "1.5"},
    {"avg", "double", {"0.1", "0.2", "0.3"}, "0.19999999999999998"},
    {"avg", "double", {"1e308", "1e308"}, "1.0E308"},
    {"avg", "double", {NULL}, "0.0"},
    {"avg", "float", {"1", "2", "4"}, "2.3333333"},
    {"sum", "decimal", {"1.5", "2.25", "NULL"}, "3.75"},
    {"sum", "decimal", {"1e3", "1"}, "1001"},
    {"sum", "decimal", {"0.000000000002", "-0.000000000001", "999.999", "-999.999"}, "1E-12"},
    {"sum", "decimal", {NULL}, "0"},
    {"avg", "decimal", {"1", "2"}, "1"},
    {"avg", "decimal", {"1.0", "2.0"}, "1.5"},
    {"avg", "decimal", {"1", "4"}, "3"},
    {"avg", "decimal", {"-1", "-4"}, "-3"},
    {"avg", "decimal", {"1.00", "2.00", "4.00"}, "2.33"},
    {"sum",
     "varint",
     {"123456789012345678901234567890", "123456789012345678901234567890"},
     "246913578024691357802469135780"},
    {"sum", "varint", {"-5", "3"}, "-2"},
    {"avg", "varint", {"-1", "-2"}, "-1"},
    {"avg", "varint", {"10", "20", "31"}, "20"},
    {"min", "int", {"5", "-3", "NULL", "7"}, "-3"},
    {"max", "int", {"5", "-3", "NULL", "7"}, "7"},
    {"min", "text", {"'b'", "'a'", "'c'"}, "'a'"},
    {"max", "text", {"'b'", "'a'", "'c'"}, "'c'"},
    {"max", "varint", {"-100000000000000000000", "5", "-1"}, "5"},
    {"min", "decimal", {"1.5", "0.25", "3"}, "0.25"},
    {"max", "double", {"1.5", "NaN", "3"}, "NaN"},
    {"min",
     "timeuuid",
     {"00000000-0000-1001-0000-000000000000", "ffffffff-ffff-1000-8000-000000000000"},
     "ffffffff-ffff-1000-8000-000000000000"},
    {"max", "timestamp", {"'2024-01-31'", "'2023-01-31'"}, "'2024-01-31T00:00:00.000Z'"},
    {"min", "int", {NULL}, "null"},
    {"max", "counter", {"3", "9"}, "9"},
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof acases / sizeof acases[0]; i++) {
        const acase *c = &acases[i];
        const cql_ctype *t = type_of(c->type);
        if (!t) continue;
        cqlagg_kind kind;
        int star = strcmp(c->fn, "count(*)") == 0;
        CHECK(cqlagg_lookup(star ? "count" : c->fn, star, 0, &kind), "lookup %s", c->fn);
        cqlagg a;
        cql_parse_error err = {0};
        CHECK(cqlagg_init(&a, kind, star ? NULL : t, &err) == 0, "%s(%s): %s", c->fn, c->type,
              err.msg);
        /* the aggregate runs twice: reset must start it afresh */
        for (int round = 0; round < 2; round++) {
            for (size_t k = 0; k < 8 && c->values[k]; k++) {
                buf v;
                buf_init(&v, 0);
                int r = literal(t, c->values[k], &v);
                CHECK(cqlagg_add(&a, (const uint8_t *)v.data,
                                 r == CQLVAL_NULL ? CQL_NULL : (int32_t)v.len, &err) == 0,
                      "%s add %s: %s", c->fn, c->values[k], err.msg);
                buf_free(&v);
            }
            buf out;
            buf_init(&out, 0);
            int r = cqlagg_result(&a, &out, &err);
            if (strcmp(c->want, "null") == 0) {
                CHECK(r == CQLVAL_NULL, "%s(%s) should be null", c->fn, c->type);
            } else {
                CHECK(r == CQLVAL_OK, "%s(%s): %s", c->fn, c->type, err.msg);
                buf s;
                buf_init(&s, 0);
                cqlval_to_cql(a.result, (const uint8_t *)out.data, out.len, &s);
                CHECK(s.data && strcmp(s.data, c->want) == 0, "%s(%s) of row %zu gave %s, want %s",
                      c->fn, c->type, i, s.data ? s.data : "", c->want);
                cql_parse_error verr = {0};
                CHECK(cqlval_validate(a.result, (const uint8_t *)out.data, out.len, &verr) == 0,
                      "result valid: %s", verr.msg);
                buf_free(&s);
            }
            buf_free(&out);
            cqlagg_reset(&a);
        }
        CHECK(
            a.result->wire.id ==
                (kind == CQLAGG_COUNT || kind == CQLAGG_COUNT_ROWS ? CQL_TYPE_BIGINT : t->wire.id),
            "%s(%s) result type", c->fn, c->type);
        cqlagg_free(&a);
    }
}

static void test_refusals(void)
{
    cqlagg a;
    cql_parse_error err = {0};
    CHECK(cqlagg_init(&a, CQLAGG_SUM, type_of("text"), &err) == -1, "sum of text");
    CHECK_STR(err.msg,
              "Invalid call to function system.sum, none of its type signatures match (known type "
              "signatures: system.sum : (tinyint) -> tinyint, system.sum : (smallint) -> "
              "smallint, system.sum : (int) -> int, system.sum : (bigint) -> bigint, system.sum : "
              "(float) -> float, system.sum : (double) -> double, system.sum : (decimal) -> "
              "decimal, system.sum : (varint) -> varint, system.sum : (counter) -> counter)");
    memset(&err, 0, sizeof err);
    CHECK(cqlagg_init(&a, CQLAGG_AVG, type_of("timestamp"), &err) == -1, "avg of timestamp");
    memset(&err, 0, sizeof err);
    CHECK(cqlagg_init(&a, CQLAGG_MAX, type_of("frozen<list<int>>"), &err) == -1 &&
              strncmp(err.msg, "Invalid call to function system.max, none of its type signatures",
                      64) == 0,
          "max of a list: %s", err.msg);
    memset(&err, 0, sizeof err);
    CHECK(cqlagg_init(&a, CQLAGG_COUNT, type_of("frozen<list<int>>"), &err) == 0,
          "count of a list");
    cqlagg_free(&a);
    /* a malformed value is refused, not read */
    CHECK(cqlagg_init(&a, CQLAGG_SUM, type_of("int"), &err) == 0, "sum of int");
    CHECK(cqlagg_add(&a, (const uint8_t *)"\x01\x02", 2, &err) == -1, "two bytes for an int");
    CHECK_STR(err.msg, "Expected 4 or 0 byte int (2)");
    cqlagg_free(&a);

    cqlagg_kind k;
    CHECK(cqlagg_lookup("COUNT", 0, 1, &k) && k == CQLAGG_COUNT_ROWS, "COUNT(1)");
    CHECK(cqlagg_lookup("system.avg", 0, 0, &k) && k == CQLAGG_AVG, "system.avg");
    CHECK(!cqlagg_lookup("now", 0, 0, &k), "now is no aggregate");
    CHECK(!cqlagg_lookup("max", 1, 0, &k), "max(*) is none");
    buf n;
    buf_init(&n, 0);
    cqlagg_column_name(CQLAGG_COUNT_ROWS, NULL, &n);
    CHECK_STR(n.data, "count");
    buf_reset(&n);
    cqlagg_column_name(CQLAGG_MAX, "v", &n);
    CHECK_STR(n.data, "system.max(v)");
    buf_free(&n);
}

int main(void)
{
    arena_init(&test_arena, 0);
    test_cases();
    test_refusals();
    arena_free(&test_arena);
    return check_report("test_cqlval_aggregate");
}
