/* test_cqlval_types.c — CQL types as written resolved to wire trees (src/cql/types.c).
 *
 * Each row is a column type as a CREATE TABLE writes it and either the name system_schema
 * writes for it (which must parse back to an equal tree) or Cassandra's refusal. User
 * types come from a lookup over two types in keyspace ks. */
#include <string.h>

#include "cql/ast.h"
#include "cql/types.h"

#include "check.h"

static arena defs;
static const cql_ctype *address, *pair;

/* The lookup the tests give: ks.address (street text, tags set<text>) and ks."Pair". */
static const cql_ctype *lookup(void *ctx, const char *ks, const char *name)
{
    (void)ctx;
    if (strcmp(ks, "ks") != 0) return NULL;
    if (strcmp(name, "address") == 0) return address;
    if (strcmp(name, "Pair") == 0) return pair;
    return NULL;
}

/* A UDT definition: fields named and typed by type strings. */
static const cql_ctype *make_udt(const char *name, const char *const *fields,
                                 const char *const *types, int n)
{
    cql_ctype *u = arena_alloc(&defs, sizeof *u);
    const cql_type **params = arena_alloc(&defs, (size_t)n * sizeof *params);
    const cql_ctype **args = arena_alloc(&defs, (size_t)n * sizeof *args);
    u->wire.id = CQL_TYPE_UDT;
    u->wire.name = name;
    u->wire.keyspace = "ks";
    u->wire.field_names = fields;
    u->wire.n = (uint16_t)n;
    u->wire.params = params;
    u->args = args;
    for (int i = 0; i < n; i++) {
        cql_parse_error err = {0};
        cqltype_env env = {"ks", NULL, NULL};
        const cql_ctype *t = NULL;
        CHECK(cqltype_parse(&defs, types[i], strlen(types[i]), &env, &t, &err) == 0,
              "field type %s: %s", types[i], err.msg);
        args[i] = t;
        params[i] = &t->wire;
    }
    return u;
}

/* Resolves `type` written as a column's type in CREATE TABLE; returns its name or the
 * error message (static buffer). */
static const char *resolve(const char *type, const cql_ctype **out)
{
    static char result[2048];
    char stmt[1024];
    snprintf(stmt, sizeof stmt, "CREATE TABLE t (k int PRIMARY KEY, v %s)", type);
    cql_parsed p;
    cql_parse_error perr = {0};
    if (cql_parse(stmt, strlen(stmt), &p, &perr) != 0) {
        snprintf(result, sizeof result, "parse: %s", perr.msg);
        return result;
    }
    static arena a;
    arena_free(&a);
    arena_init(&a, 0);
    cqltype_env env = {"ks", lookup, NULL};
    cql_parse_error err = {0};
    const cql_ctype *t = NULL;
    const cql_type_expr *te = p.stmts[0]->u.create_table.cols[1].type;
    if (cqltype_resolve(&a, te, &env, &t, &err) != 0) {
        snprintf(result, sizeof result, "error %04x: %s", err.code, err.msg);
        cql_parsed_free(&p);
        return result;
    }
    buf b;
    buf_init(&b, 0);
    cqltype_name(t, &b);
    snprintf(result, sizeof result, "%s", b.data ? b.data : "");
    /* the name parses back to the same tree */
    const cql_ctype *back = NULL;
    cql_parse_error err2 = {0};
    CHECK(cqltype_parse(&a, b.data, b.len, &env, &back, &err2) == 0, "%s does not parse: %s",
          b.data, err2.msg);
    CHECK(back && cqltype_equal(back, t), "%s parsed back differs", b.data);
    /* a copy is equal too */
    const cql_ctype *copy = cqltype_copy(&a, t);
    CHECK(copy && cqltype_equal(copy, t), "copy of %s differs", b.data);
    buf_free(&b);
    cql_parsed_free(&p);
    if (out) *out = t;
    return result;
}

typedef struct tcase {
    const char *in, *want;
} tcase;

static const tcase cases[] = {
    {"int", "int"},
    {"text", "text"},
    {"varchar", "text"},
    {"ascii", "ascii"},
    {"bigint", "bigint"},
    {"timeuuid", "timeuuid"},
    {"duration", "duration"},
    {"counter", "counter"},
    {"list<int>", "list<int>"},
    {"set<text>", "set<text>"},
    {"map<text, int>", "map<text, int>"},
    {"map<varchar,int>", "map<text, int>"},
    {"frozen<list<int>>", "frozen<list<int>>"},
    {"list<frozen<list<int>>>", "list<frozen<list<int>>>"},
    {"frozen<list<list<int>>>", "frozen<list<frozen<list<int>>>>"},
    {"frozen<map<int, set<text>>>", "frozen<map<int, frozen<set<text>>>>"},
    {"tuple<int, text>", "frozen<tuple<int, text>>"},
    {"frozen<tuple<int, text>>", "frozen<tuple<int, text>>"},
    {"list<tuple<int, list<int>>>", "list<frozen<tuple<int, frozen<list<int>>>>>"},
    {"address", "address"},
    {"frozen<address>", "frozen<address>"},
    {"ks.address", "address"},
    {"list<frozen<address>>", "list<frozen<address>>"},
    {"\"Pair\"", "\"Pair\""},
    {"frozen<\"Pair\">", "frozen<\"Pair\">"},
    {"tuple<address>", "frozen<tuple<frozen<address>>>"},
    {"map<duration, int>", "error 2200: Durations are not allowed as map keys: map<duration, int>"},
    {"set<duration>", "error 2200: Durations are not allowed inside sets: set<duration>"},
    {"list<duration>", "list<duration>"},
    {"list<counter>", "error 2200: Counters are not allowed inside collections: list<counter>"},
    {"map<text, counter>",
     "error 2200: Counters are not allowed inside collections: map<text, counter>"},
    {"frozen<list<counter>>",
     "error 2200: Counters are not allowed inside collections: frozen<list<counter>>"},
    {"tuple<int, counter>", "error 2200: Counters are not allowed inside tuples"},
    {"list<set<int>>",
     "error 2200: Non-frozen collections are not allowed inside collections: list<set<int>>"},
    {"map<list<int>, int>",
     "error 2200: Non-frozen collections are not allowed inside collections: map<list<int>, int>"},
    {"list<address>",
     "error 2200: Non-frozen UDTs are not allowed inside collections: list<address>"},
    {"set<ks.address>",
     "error 2200: Non-frozen UDTs are not allowed inside collections: set<ks.address>"},
    {"map<address, int>",
     "error 2200: Non-frozen UDTs are not allowed inside collections: map<address, int>"},
    {"nosuch", "error 2200: Unknown type ks.nosuch"},
    {"frozen<nosuch>", "error 2200: Unknown type ks.nosuch"},
    {"other.address",
     "error 2200: Statement on keyspace ks cannot refer to a user type in keyspace other; user "
     "types can only be used in the keyspace they are defined in"},
    {"'org.apache.cassandra.db.marshal.UTF8Type'", "text"},
    {"'Int32Type'", "int"},
    {"'com.example.MyType'", "'com.example.MyType'"},
    {"frozen<int>",
     "error 2200: frozen<> is only allowed on collections, tuples, and user-defined types (got "
     "int)"},
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_STR(resolve(cases[i].in, NULL), cases[i].want);
}

static void test_tree(void)
{
    const cql_ctype *t = NULL;
    resolve("map<text, frozen<list<address>>>", &t);
    CHECK(t && t->wire.id == CQL_TYPE_MAP && t->wire.n == 2 && !t->frozen, "map node");
    if (!t) return;
    CHECK(t->wire.params[0] == &t->args[0]->wire, "params point at args' wire");
    CHECK(t->args[0]->wire.id == CQL_TYPE_VARCHAR, "key text");
    const cql_ctype *l = t->args[1];
    CHECK(l->wire.id == CQL_TYPE_LIST && l->frozen, "frozen list");
    const cql_ctype *u = l->args[0];
    CHECK(u->wire.id == CQL_TYPE_UDT && u->frozen, "frozen udt inside a frozen list");
    CHECK_STR(u->wire.name, "address");
    CHECK_STR(u->wire.keyspace, "ks");
    CHECK(u->wire.n == 2 && strcmp(u->wire.field_names[1], "tags") == 0, "udt fields");
    CHECK(u->args[1]->wire.id == CQL_TYPE_SET && u->args[1]->frozen,
          "a frozen udt's collection field is frozen");
    CHECK(cqltype_of(&u->wire) == u, "cqltype_of");
    CHECK(cqltype_uses_udt(t, "ks", "address") && !cqltype_uses_udt(t, "ks", "Pair"), "uses");

    resolve("address", &t);
    CHECK(t && !t->frozen && cqltype_is_multicell(t), "non-frozen udt is multi-cell");
    CHECK(t && !t->args[1]->frozen, "its set field stays as defined");

    /* wire form round trip through cql_put_type / cql_read_type */
    resolve("map<int, frozen<tuple<text, frozen<address>>>>", &t);
    buf b;
    buf_init(&b, 0);
    CHECK(cql_put_type(&b, &t->wire) == 0, "put_type");
    cql_pool pool = {0};
    cql_reader r;
    cql_reader_init(&r, b.data, b.len, &pool);
    cql_type *back = NULL;
    CHECK(cql_read_type(&r, "type", &back) == 0 && back->id == CQL_TYPE_MAP &&
              back->params[1]->id == CQL_TYPE_TUPLE &&
              back->params[1]->params[1]->id == CQL_TYPE_UDT &&
              strcmp(back->params[1]->params[1]->name, "address") == 0,
          "wire round trip");
    cql_pool_free(&pool);
    buf_free(&b);
}

static void test_checks(void)
{
    const cql_ctype *t = NULL;
    cql_parse_error err = {0};
    resolve("list<int>", &t);
    CHECK(t && cqltype_check_primary_key(t, "k", &err) == -1, "non-frozen list in key");
    CHECK_STR(err.msg, "Invalid non-frozen collection type for PRIMARY KEY component k");
    memset(&err, 0, sizeof err);
    resolve("address", &t);
    CHECK(t && cqltype_check_primary_key(t, "c", &err) == -1, "non-frozen udt in key");
    CHECK_STR(err.msg, "Invalid non-frozen user-defined type for PRIMARY KEY component c");
    memset(&err, 0, sizeof err);
    CHECK(cqltype_check_primary_key(cqltype_native(CQL_TYPE_COUNTER), "n", &err) == -1, "ctr");
    CHECK_STR(err.msg, "counter type is not supported for PRIMARY KEY column 'n'");
    memset(&err, 0, sizeof err);
    resolve("frozen<list<duration>>", &t);
    CHECK(t && cqltype_check_primary_key(t, "d", &err) == -1, "duration in key");
    CHECK_STR(err.msg, "duration type is not supported for PRIMARY KEY column 'd'");
    memset(&err, 0, sizeof err);
    resolve("frozen<list<int>>", &t);
    CHECK(t && cqltype_check_primary_key(t, "k", &err) == 0, "frozen list is a fine key");
    CHECK(cqltype_has_counter(cqltype_native(CQL_TYPE_COUNTER)), "has counter");
}

static void test_parse_errors(void)
{
    static const char *const bad[] = {
        "",        "list<",      "list<int", "map<int>",      "frozen",
        "int int", "list<int>>", "tuple<>",  "'unterminated", "map<int,>"};
    arena a;
    arena_init(&a, 0);
    cqltype_env env = {"ks", lookup, NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cql_parse_error err = {0};
        const cql_ctype *t = NULL;
        CHECK(cqltype_parse(&a, bad[i], strlen(bad[i]), &env, &t, &err) == -1 && err.msg[0],
              "'%s' should not parse", bad[i]);
    }
    /* deep nesting is refused, not recursed without bound */
    char deep[4096] = "";
    for (int i = 0; i < 300; i++)
        strcat(deep, "frozen<list<");
    cql_parse_error err = {0};
    const cql_ctype *t = NULL;
    CHECK(cqltype_parse(&a, deep, strlen(deep), &env, &t, &err) == -1, "deep");
    /* spaces and case */
    memset(&err, 0, sizeof err);
    CHECK(cqltype_parse(&a, " MAP < TEXT , frozen<LIST<INT>> > ", 34, &env, &t, &err) == 0 &&
              t->wire.id == CQL_TYPE_MAP && t->args[1]->frozen,
          "spaces and upper case: %s", err.msg);
    memset(&err, 0, sizeof err);
    CHECK(cqltype_parse(&a, "'org.apache.cassandra.db.marshal.UTF8Type'", 42, &env, &t, &err) ==
                  0 &&
              t->wire.id == CQL_TYPE_VARCHAR,
          "a native type's class: %s", err.msg);
    memset(&err, 0, sizeof err);
    CHECK(cqltype_parse(&a, "'com.example.MyType'", 20, &env, &t, &err) == 0 &&
              t->wire.id == CQL_TYPE_CUSTOM && strcmp(t->wire.name, "com.example.MyType") == 0,
          "custom: %s", err.msg);
    arena_free(&a);
}

static void test_udt_fields(void)
{
    static const struct {
        const char *stmt, *msg; /* msg NULL: accepted */
    } cases[] = {
        {"CREATE TYPE t (a int, b set<text>, c frozen<address>)", NULL},
        {"CREATE TYPE t (a int, a text)", "Duplicate field name a in type t"},
        {"CREATE TYPE t (a int, n counter)", "A user type cannot contain counters"},
        {"CREATE TYPE t (a address)", "A user type cannot contain non-frozen UDTs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cql_parsed p;
        cql_parse_error err = {0};
        CHECK(cql_parse(cases[i].stmt, strlen(cases[i].stmt), &p, &err) == 0, "parse %s: %s",
              cases[i].stmt, err.msg);
        if (!p.nstmts) continue;
        const cql_create_type *ct = &p.stmts[0]->u.create_type;
        int rc =
            cqltype_check_udt_fields(p.stmts[0]->name.name, ct->fields,
                                     (const cql_type_expr *const *)ct->types, ct->nfields, &err);
        if (cases[i].msg) {
            CHECK(rc == -1, "%s should be refused", cases[i].stmt);
            CHECK_STR(err.msg, cases[i].msg);
        } else {
            CHECK(rc == 0, "%s: %s", cases[i].stmt, err.msg);
        }
        cql_parsed_free(&p);
    }
}

int main(void)
{
    arena_init(&defs, 0);
    static const char *const addr_fields[] = {"street", "tags"};
    static const char *const addr_types[] = {"text", "set<text>"};
    address = make_udt("address", addr_fields, addr_types, 2);
    static const char *const pair_fields[] = {"a", "b"};
    static const char *const pair_types[] = {"int", "int"};
    pair = make_udt("Pair", pair_fields, pair_types, 2);
    test_cases();
    test_tree();
    test_checks();
    test_parse_errors();
    test_udt_fields();
    arena_free(&defs);
    return check_report("test_cqlval_types");
}
