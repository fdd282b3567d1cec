/* test_cqlval_robust.c — the typed-value functions against hostile bytes.
 *
 * Values of many types are built, then mutated (bytes flipped, cut short, extended, length
 * prefixes changed). Whatever cqlval_validate accepts must then go through every other
 * function without failing: text, CQL literal, JSON and back, stored form and back, the
 * canonical form, comparison with itself, and (for orderable types) the clustering key
 * and back. Whatever it refuses is not used further. Random bytes are also fed to the key
 * decoder, random text to the type and JSON parsers, and random AttributeValues to the
 * stored-form reader: each must answer an error, never crash (run under ASan). */
#include <stdlib.h>
#include <string.h>

#include "cql/ast.h"
#include "cql/func.h"
#include "cql/keyenc.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"

#include "check.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static arena test_arena;

static const char *const types[] = {"int",
                                    "bigint",
                                    "smallint",
                                    "tinyint",
                                    "varint",
                                    "decimal",
                                    "float",
                                    "double",
                                    "boolean",
                                    "text",
                                    "ascii",
                                    "blob",
                                    "uuid",
                                    "timeuuid",
                                    "timestamp",
                                    "date",
                                    "time",
                                    "duration",
                                    "inet",
                                    "counter",
                                    "list<int>",
                                    "set<text>",
                                    "map<int, text>",
                                    "frozen<list<frozen<set<int>>>>",
                                    "frozen<tuple<int, text, frozen<list<varint>>>>",
                                    "map<text, frozen<map<int, decimal>>>",
                                    "frozen<tuple<duration, inet>>"};

/* A value that may or may not be valid: a valid one for the type, then mutated. */
static void make(const cql_ctype *t, buf *out, int depth)
{
    uint8_t b[16];
    switch (t->wire.id) {
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_MAP: {
        int pairs = t->wire.id == CQL_TYPE_MAP;
        size_t n = depth > 3 ? 0 : rnd() % 4;
        size_t at = cql_collection_begin(out);
        for (size_t i = 0; i < n * (pairs ? 2 : 1); i++) {
            buf e;
            buf_init(&e, 0);
            make(t->args[pairs ? i % 2 : 0], &e, depth + 1);
            cql_element_put(out, e.data, (int32_t)e.len);
            buf_free(&e);
        }
        cql_collection_end(out, at, (uint32_t)n);
        return;
    }
    case CQL_TYPE_TUPLE:
        for (uint16_t i = 0; i < t->wire.n; i++) {
            buf e;
            buf_init(&e, 0);
            make(t->args[i], &e, depth + 1);
            cql_element_put(out, e.data, rnd() % 6 ? (int32_t)e.len : -1);
            buf_free(&e);
        }
        return;
    case CQL_TYPE_DURATION:
        cql_duration_encode((int32_t)(rnd() % 100), (int32_t)(rnd() % 100),
                            (int64_t)(rnd() % 1000000), out);
        return;
    case CQL_TYPE_DECIMAL:
        cql_int_encode((int32_t)(rnd() % 2000) - 1000, b);
        buf_append(out, b, 4);
        /* fall through - the unscaled varint follows */
    default: {
        static const int width[] = {
            [CQL_TYPE_INT] = 4,       [CQL_TYPE_BIGINT] = 8, [CQL_TYPE_SMALLINT] = 2,
            [CQL_TYPE_TINYINT] = 1,   [CQL_TYPE_FLOAT] = 4,  [CQL_TYPE_DOUBLE] = 8,
            [CQL_TYPE_BOOLEAN] = 1,   [CQL_TYPE_UUID] = 16,  [CQL_TYPE_TIMEUUID] = 16,
            [CQL_TYPE_TIMESTAMP] = 8, [CQL_TYPE_DATE] = 4,   [CQL_TYPE_TIME] = 8,
            [CQL_TYPE_INET] = 4,      [CQL_TYPE_COUNTER] = 8};
        size_t n = t->wire.id < sizeof width / sizeof width[0] && width[t->wire.id]
                       ? (size_t)width[t->wire.id]
                       : rnd() % 9;
        if (t->wire.id == CQL_TYPE_DECIMAL && n == 0) n = 1;
        for (size_t i = 0; i < n; i++)
            b[i % 16] = (uint8_t)(rnd() % 3 ? 'a' + rnd() % 26 : rnd());
        if (t->wire.id == CQL_TYPE_TIMEUUID) b[6] = (uint8_t)(0x10 | (b[6] & 15));
        if (t->wire.id == CQL_TYPE_TIME) b[0] = 0;
        buf_append(out, b, n > 16 ? 16 : n);
    }
    }
}

static void mutate(buf *v)
{
    int how = (int)(rnd() % 6);
    if (how == 0 || v->len == 0) return; /* left valid (or empty) */
    if (how == 1) {
        v->data[rnd() % v->len] ^= (char)(1 << (rnd() % 8));
    } else if (how == 2) {
        v->len = rnd() % v->len;
    } else if (how == 3) {
        buf_putc(v, (uint8_t)rnd());
    } else if (how == 4 && v->len >= 4) {
        size_t at = rnd() % (v->len - 3);
        uint32_t x = (uint32_t)rnd();
        if (rnd() % 2) x = 0x7fffffff;
        if (rnd() % 3 == 0) x = 0xffffffff;
        memcpy(v->data + at, &x, 4);
    } else {
        v->data[rnd() % v->len] = (char)0xff;
    }
}

static void exercise(const cql_ctype *t, const buf *v)
{
    const uint8_t *p = (const uint8_t *)v->data;
    cql_parse_error err = {0};
    if (cqlval_validate(t, p, v->len, &err) != 0) {
        CHECK(err.code == CQL_ERR_INVALID && err.msg[0], "a refusal names the problem");
        return;
    }
    buf s;
    buf_init(&s, 0);
    CHECK(cqlval_to_text(t, p, v->len, &s) == 0, "to_text of a valid value");
    buf_reset(&s);
    CHECK(cqlval_to_cql(t, p, v->len, &s) == 0, "to_cql of a valid value");
    buf_reset(&s);
    CHECK(cqlval_to_json(t, p, v->len, &s) == 0, "to_json of a valid value");
    buf canon;
    buf_init(&canon, 0);
    CHECK(cqlval_canonical(t, p, v->len, &canon) == 0, "canonical of a valid value");
    CHECK(cqlval_validate(t, (const uint8_t *)canon.data, canon.len, &err) == 0,
          "canonical form valid: %s", err.msg);
    CHECK(cqlval_compare(t, p, v->len, p, v->len) == 0, "equal to itself");
    /* JSON back (for the canonical form: JSON cannot say a set's order or repeats) */
    json_t *j = cqlval_json_parse(s.data ? s.data : "", s.len, &err);
    CHECK(j != NULL, "own JSON parses: %s (%s)", s.data, err.msg);
    if (j && !(v->len == 0 && json_is_null(j))) {
        buf back;
        buf_init(&back, 0);
        memset(&err, 0, sizeof err);
        int r = cqlval_from_json(t, "v", j, &back, &err);
        /* NaN and Infinity are JSON strings, which a float accepts; empty values of
         * non-text types are null */
        /* an empty element (valid inside a collection) is written as null, which a
         * collection does not take back */
        /* as in Cassandra: an empty varint or decimal is written as "", which BigInteger
         * and BigDecimal do not read back */
        CHECK(r == CQLVAL_OK || r == CQLVAL_NULL ||
                  strncmp(err.msg, "Invalid null element in collection", 34) == 0 ||
                  (strstr(s.data ? s.data : "", "\"\"") &&
                   strstr(err.msg, "is not a valid representation")),
              "own JSON reads back: %s (%s)", s.data, err.msg);
        buf_free(&back);
    }
    json_decref(j);
    /* stored form of the canonical value (as the executor stores values), exactly */
    json_t *item = cqlval_to_item(t, (const uint8_t *)canon.data, canon.len);
    CHECK(item != NULL, "to_item of a valid value");
    if (item) {
        buf back;
        buf_init(&back, 0);
        memset(&err, 0, sizeof err);
        int ok = cqlval_from_item(t, item, &back, &err) == 0;
        CHECK(ok && back.len == canon.len &&
                  (canon.len == 0 || memcmp(back.data, canon.data, canon.len) == 0),
              "stored form reads back (%s)", err.msg);
        buf_free(&back);
        json_decref(item);
    }
    /* clustering key, for what may be one */
    if (!cqltype_is_multicell(t) && !cqltype_has_duration(t) && t->wire.id != CQL_TYPE_COUNTER) {
        cqlkey_col col = {t, (int)(rnd() % 2)};
        buf k, back;
        buf_init(&k, 0);
        buf_init(&back, 0);
        memset(&err, 0, sizeof err);
        CHECK(cqlkey_put(&k, &col, p, v->len, &err) == 0, "key of a valid value: %s", err.msg);
        size_t pos = 0;
        CHECK(cqlkey_get((const uint8_t *)k.data, k.len, &pos, &col, &back, &err) == 0 &&
                  pos == k.len,
              "key reads back: %s", err.msg);
        CHECK(cqlval_compare(t, (const uint8_t *)back.data, back.len, p, v->len) == 0,
              "key's value equals the value");
        buf_free(&k);
        buf_free(&back);
    }
    buf_free(&canon);
    buf_free(&s);
}

static void test_values(void)
{
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        cql_parse_error err = {0};
        const cql_ctype *t = NULL;
        CHECK(cqltype_parse(&test_arena, types[ti], strlen(types[ti]), NULL, &t, &err) == 0,
              "%s: %s", types[ti], err.msg);
        if (!t) continue;
        for (int i = 0; i < 1500; i++) {
            buf v;
            buf_init(&v, 0);
            make(t, &v, 0);
            mutate(&v);
            exercise(t, &v);
            buf_free(&v);
        }
    }
}

static void test_keys(void)
{
    cql_parse_error err = {0};
    const cql_ctype *t = NULL;
    const char *kt = "frozen<tuple<text, frozen<list<decimal>>, varint, uuid>>";
    cqltype_parse(&test_arena, kt, strlen(kt), NULL, &t, &err);
    CHECK(t != NULL, "key type: %s", err.msg);
    if (!t) return;
    for (int i = 0; i < 20000; i++) {
        uint8_t k[64];
        size_t n = rnd() % sizeof k;
        for (size_t b = 0; b < n; b++)
            k[b] = (uint8_t)(rnd() % 4 == 0 ? rnd() % 4 : rnd());
        cqlkey_col col = {t, (int)(rnd() % 2)};
        buf out;
        buf_init(&out, 0);
        size_t pos = 0;
        memset(&err, 0, sizeof err);
        if (cqlkey_get(k, n, &pos, &col, &out, &err) == 0) {
            CHECK(pos <= n, "read within the key");
            cql_parse_error verr = {0};
            CHECK(cqlval_validate(t, (const uint8_t *)out.data, out.len, &verr) == 0,
                  "a decoded key is a valid value: %s", verr.msg);
        } else {
            CHECK(err.code == CQL_ERR_SERVER, "refusal");
        }
        buf_free(&out);
    }
}

static void test_text(void)
{
    static const char alphabet[] = "<>,\"' frozenlistmaptupleintx{}[]:0123456789.-e\\u";
    for (int i = 0; i < 20000; i++) {
        char s[48];
        size_t n = rnd() % sizeof s;
        for (size_t c = 0; c < n; c++)
            s[c] = rnd() % 8 ? alphabet[rnd() % (sizeof alphabet - 1)] : (char)rnd();
        cql_parse_error err = {0};
        const cql_ctype *t = NULL;
        arena a;
        arena_init(&a, 1 << 20);
        if (cqltype_parse(&a, s, n, NULL, &t, &err) != 0)
            CHECK(err.msg[0], "a refused type says why");
        arena_free(&a);
        memset(&err, 0, sizeof err);
        json_t *j = cqlval_json_parse(s, n, &err);
        if (j) {
            const cql_ctype *m = NULL;
            arena_init(&a, 0);
            const char *mt = "map<int, frozen<list<decimal>>>";
            cqltype_parse(&a, mt, strlen(mt), NULL, &m, &err);
            buf v;
            buf_init(&v, 0);
            if (m && cqlval_from_json(m, "v", j, &v, &err) == CQLVAL_OK) {
                cql_parse_error verr = {0};
                CHECK(cqlval_validate(m, (const uint8_t *)v.data, v.len, &verr) == 0,
                      "JSON made a valid value");
            }
            buf_free(&v);
            arena_free(&a);
            json_decref(j);
        } else {
            CHECK(err.msg[0], "refused JSON says why");
        }
    }
}

static void test_items(void)
{
    static const char *const shapes[] = {"{\"N\":\"1e400\"}",
                                         "{\"N\":\"x\"}",
                                         "{\"S\":\"\"}",
                                         "{\"B\":\"!!\"}",
                                         "{\"L\":[{\"N\":\"1\"},{\"S\":\"a\"}]}",
                                         "{\"M\":{\"x\":{\"N\":\"1\"}}}",
                                         "{\"L\":[{\"L\":[]}]}",
                                         "{\"BOOL\":true}",
                                         "{\"NULL\":true}",
                                         "{}",
                                         "{\"S\":\"1\",\"N\":\"1\"}",
                                         "{\"L\":[{\"NULL\":true}]}",
                                         "{\"M\":{\"1\":{}}}",
                                         "[]"};
    static const char *const targets[] = {
        "int",  "decimal",   "list<int>", "map<int, int>", "frozen<tuple<int, text>>",
        "blob", "timestamp", "date",      "duration"};
    for (size_t ti = 0; ti < sizeof targets / sizeof targets[0]; ti++) {
        const cql_ctype *t = NULL;
        cql_parse_error err = {0};
        cqltype_parse(&test_arena, targets[ti], strlen(targets[ti]), NULL, &t, &err);
        if (!t) continue;
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            json_t *j = json_loads(shapes[si], JSON_DECODE_ANY, NULL);
            buf v;
            buf_init(&v, 0);
            memset(&err, 0, sizeof err);
            if (cqlval_from_item(t, j, &v, &err) == 0) {
                cql_parse_error verr = {0};
                CHECK(cqlval_validate(t, (const uint8_t *)v.data, v.len, &verr) == 0 ||
                          strcmp(shapes[si], "{\"B\":\"!!\"}") != 0,
                      "stored %s as %s", shapes[si], targets[ti]);
            } else {
                CHECK(err.code == CQL_ERR_SERVER, "refused %s as %s", shapes[si], targets[ti]);
            }
            buf_free(&v);
            json_decref(j);
        }
    }
}

/* Random literals through the parser and into values of many types: each either makes a
 * valid value or is refused with a message. */
static void test_literals(void)
{
    static const char *const atoms[] = {"1",
                                        "-7",
                                        "1.5",
                                        "1e400",
                                        "NaN",
                                        "-Infinity",
                                        "'a'",
                                        "'2024-01-31'",
                                        "''",
                                        "0x0f",
                                        "0x",
                                        "true",
                                        "null",
                                        "1h30m",
                                        "P2W",
                                        "?",
                                        "now()",
                                        ":x",
                                        "123e4567-e89b-12d3-a456-426614174000",
                                        "'12:00:00'",
                                        "99999999999999999999999",
                                        "'::1'",
                                        "{}",
                                        "[]",
                                        "(1)",
                                        "{a: 1}",
                                        "'\xc3\xa9'"};
    static const char *const types_[] = {"int",
                                         "text",
                                         "timestamp",
                                         "list<int>",
                                         "set<text>",
                                         "map<int, text>",
                                         "frozen<tuple<int, text>>",
                                         "decimal",
                                         "blob",
                                         "timeuuid",
                                         "duration",
                                         "inet",
                                         "date",
                                         "time",
                                         "varint",
                                         "double"};
    const cql_ctype *ts[16];
    for (size_t i = 0; i < 16; i++) {
        cql_parse_error err = {0};
        cqltype_parse(&test_arena, types_[i], strlen(types_[i]), NULL, &ts[i], &err);
    }
    for (int it = 0; it < 6000; it++) {
        char lit[512] = "";
        int depth = 0;
        size_t n = 1 + rnd() % 6;
        for (size_t k = 0; k < n && strlen(lit) < 400; k++) {
            int what = (int)(rnd() % 6);
            if (what == 0 && depth < 3) {
                strcat(lit, (const char *[]){"[", "{", "("}[rnd() % 3]);
                depth++;
            } else if (what == 1 && depth > 0) {
                strcat(lit, (const char *[]){"]", "}", ")"}[rnd() % 3]);
                depth--;
            } else {
                if (k && lit[strlen(lit) - 1] != '[' && lit[strlen(lit) - 1] != '{' &&
                    lit[strlen(lit) - 1] != '(')
                    strcat(lit, rnd() % 3 ? ", " : ": ");
                strcat(lit, atoms[rnd() % (sizeof atoms / sizeof atoms[0])]);
            }
        }
        while (depth-- > 0)
            strcat(lit, (const char *[]){"]", "}", ")"}[rnd() % 3]);
        char stmt[640];
        snprintf(stmt, sizeof stmt, "INSERT INTO t (v) VALUES (%s)", lit);
        cql_parsed p;
        cql_parse_error perr = {0};
        if (cql_parse(stmt, strlen(stmt), &p, &perr) != 0) continue;
        for (size_t ti = 0; ti < 16; ti++) {
            if (!ts[ti]) continue;
            buf v;
            buf_init(&v, 0);
            cql_parse_error err = {0};
            cqlfn_env env = {{NULL, NULL}, &test_arena, NULL};
            cqlval_terms terms = {cqlfn_term, &env};
            int r = cqlval_from_term(ts[ti], "v", p.stmts[0]->u.insert.values[0], &terms, &v, &err);
            if (r == CQLVAL_OK) {
                cql_parse_error verr = {0};
                CHECK(cqlval_validate(ts[ti], (const uint8_t *)v.data, v.len, &verr) == 0,
                      "%s as %s made an invalid value: %s", lit, types_[ti], verr.msg);
            } else if (r == CQLVAL_ERROR) {
                CHECK(err.msg[0] != 0, "%s as %s: a refusal says why", lit, types_[ti]);
            }
            buf_free(&v);
        }
        cql_parsed_free(&p);
    }
}

int main(void)
{
    arena_init(&test_arena, 0);
    test_values();
    test_keys();
    test_text();
    test_items();
    test_literals();
    arena_free(&test_arena);
    return check_report("test_cqlval_robust");
}
