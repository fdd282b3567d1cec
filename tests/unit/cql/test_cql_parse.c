/* test_cql_parse.c — the CQL parser and printer (src/cql) against tables of cases.
 *
 * Every statement form the front end takes is a row of input → canonical print; each print
 * must parse again to itself. Every error form is a row of input → Cassandra's message
 * (SyntaxException wording, line and column, snippet) or the grammar's own check. Bind
 * markers are counted in order with their names and offsets; scripts split on ';' with
 * comments; and the CQL `quarry model export --format cql` writes for every example model
 * parses as a script. Run from the repository root. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker/check.h"
#include "checker/model.h"
#include "checker/output.h"
#include "cql/ast.h"

#include "check.h"

typedef struct ok_case {
    const char *in;
    const char *out; /* NULL: the input is already canonical */
} ok_case;

static const ok_case ok_cases[] = {
    /* keyspaces */
    {"CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'NetworkTopologyStrategy', "
     "'dc1': 3} AND durable_writes = false",
     NULL},
    {"create keyspace Ks with REPLICATION = { 'class' : 'SimpleStrategy', 'replication_factor' : 1 "
     "}",
     "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"},
    {"CREATE SCHEMA s WITH replication = {'class': 'SimpleStrategy'}",
     "CREATE KEYSPACE s WITH replication = {'class': 'SimpleStrategy'}"},
    {"ALTER KEYSPACE ks WITH durable_writes = true", NULL},
    {"ALTER KEYSPACE IF EXISTS ks WITH replication = {'class': 'SimpleStrategy'}", NULL},
    {"DROP KEYSPACE ks", NULL},
    {"DROP KEYSPACE IF EXISTS \"MyKs\"", NULL},
    /* tables */
    {"CREATE TABLE IF NOT EXISTS ks.events (user_id uuid, month int, event_time timestamp, "
     "event_id timeuuid, payload text, PRIMARY KEY ((user_id, month), event_time, event_id)) "
     "WITH CLUSTERING ORDER BY (event_time DESC, event_id ASC) AND default_time_to_live = 86400",
     NULL},
    {"CREATE TABLE t (k text PRIMARY KEY, v int)", NULL},
    {"CREATE TABLE t (k text, c int, v int, PRIMARY KEY (k, c))", NULL},
    {"CREATE TABLE t (k text, c int, PRIMARY KEY ((k), c))",
     "CREATE TABLE t (k text, c int, PRIMARY KEY (k, c))"},
    {"CREATE TABLE t (k int, c int, s text STATIC, PRIMARY KEY (k, c))", NULL},
    {"CREATE TABLE t (k int PRIMARY KEY, n counter)", NULL},
    {"CREATE TABLE t (k int PRIMARY KEY, v int,)", "CREATE TABLE t (k int PRIMARY KEY, v int)"},
    {"CREATE TABLE t (k int PRIMARY KEY) WITH compaction = {'class': "
     "'LeveledCompactionStrategy', 'sstable_size_in_mb': 160} AND comment = 'it''s' AND "
     "gc_grace_seconds = 3600 AND caching = {'keys': 'ALL'} AND speculative_retry = '99p'",
     NULL},
    {"CREATE TABLE t (k int PRIMARY KEY) WITH comment = 'c' AND CLUSTERING ORDER BY (c DESC)",
     "CREATE TABLE t (k int PRIMARY KEY) WITH CLUSTERING ORDER BY (c DESC) AND comment = 'c'"},
    {"CREATE TABLE t (k int PRIMARY KEY) WITH bloom_filter_fp_chance = 0.01 AND "
     "read_repair = 'BLOCKING'",
     NULL},
    {"CREATE TABLE t (k int PRIMARY KEY) WITH caching = all",
     "CREATE TABLE t (k int PRIMARY KEY) WITH caching = all"},
    /* every type */
    {"CREATE TABLE t (a ascii, b text, c varchar, d int, e bigint, f smallint, g tinyint, h "
     "varint, "
     "i decimal, j float, k double, l boolean, m blob, n uuid, o timeuuid, p timestamp, q date, "
     "r time, s duration, t inet, u list<int>, v set<text>, w map<text, frozen<list<int>>>, "
     "x frozen<set<uuid>>, y tuple<int, text, frozen<map<int, int>>>, z addr, aa ks.addr, "
     "ab frozen<ks.addr>, ac 'org.apache.cassandra.db.marshal.BytesType', PRIMARY KEY (a))",
     NULL},
    {"CREATE TABLE t (k int PRIMARY KEY, m map, l list)", NULL},
    /* unreserved keywords are names; reserved ones and mixed case are quoted */
    {"create table \"Quoted\" (key text primary key, value blob, type int, ttl int, count int, "
     "writetime int, \"Weird Col\" text, \"select\" int, \"a\"\"b\" int)",
     "CREATE TABLE \"Quoted\" (key text PRIMARY KEY, value blob, type int, ttl int, count int, "
     "writetime int, \"Weird Col\" text, \"select\" int, \"a\"\"b\" int)"},
    {"CREATE TABLE MixedCase (Id int PRIMARY KEY, \"lower\" int)",
     "CREATE TABLE mixedcase (id int PRIMARY KEY, lower int)"},
    {"ALTER TABLE t ADD a int", NULL},
    {"ALTER TABLE t ADD (a int, b set<text> STATIC)", NULL},
    {"ALTER TABLE t ADD (a int)", "ALTER TABLE t ADD a int"},
    {"ALTER TABLE IF EXISTS t ADD IF NOT EXISTS a int", NULL},
    {"ALTER TABLE t DROP a", NULL},
    {"ALTER TABLE t DROP (a, b) USING TIMESTAMP 123", NULL},
    {"ALTER TABLE t DROP IF EXISTS a", NULL},
    {"ALTER TABLE t RENAME a TO b AND c TO d", NULL},
    {"ALTER TABLE t WITH comment = 'x' AND default_time_to_live = 0", NULL},
    {"ALTER TABLE t ALTER a TYPE blob", NULL},
    {"ALTER TABLE t DROP COMPACT STORAGE", NULL},
    {"ALTER TABLE t DROP compact", NULL},
    {"DROP TABLE t", NULL},
    {"DROP TABLE IF EXISTS ks.t", NULL},
    {"DROP COLUMNFAMILY t", "DROP TABLE t"},
    {"TRUNCATE ks.t", NULL},
    {"TRUNCATE TABLE t", "TRUNCATE t"},
    {"USE ks", NULL},
    {"use \"MyKs\"", "USE \"MyKs\""},
    /* DESCRIBE */
    {"DESCRIBE KEYSPACES", NULL},
    {"DESC TABLES", "DESCRIBE TABLES"},
    {"describe cluster", "DESCRIBE CLUSTER"},
    {"DESCRIBE SCHEMA", NULL},
    {"DESCRIBE FULL SCHEMA", NULL},
    {"DESCRIBE KEYSPACE", NULL},
    {"DESCRIBE ONLY KEYSPACE ks WITH INTERNALS", NULL},
    {"DESCRIBE TABLE ks.t", NULL},
    {"DESCRIBE COLUMNFAMILY t", "DESCRIBE TABLE t"},
    {"DESCRIBE TYPE ks.addr", NULL},
    {"DESCRIBE TYPES", NULL},
    {"DESCRIBE FUNCTION ks.f", NULL},
    {"DESCRIBE AGGREGATES", NULL},
    {"DESCRIBE INDEX ks.t_v_idx", NULL},
    {"DESCRIBE MATERIALIZED VIEW v", NULL},
    {"DESCRIBE ks.t", NULL},
    {"DESCRIBE \"Tables\"", NULL},
    {"DESCRIBE tables.x", NULL},
    /* types */
    {"CREATE TYPE IF NOT EXISTS ks.addr (street text, zip int, tags frozen<set<text>>)", NULL},
    {"CREATE TYPE key (a int)", NULL},
    {"ALTER TYPE addr ADD country text", NULL},
    {"ALTER TYPE addr ALTER zip TYPE bigint", NULL},
    {"ALTER TYPE addr RENAME zip TO postcode AND street TO road", NULL},
    {"DROP TYPE addr", NULL},
    {"DROP TYPE IF EXISTS ks.addr", NULL},
    /* indexes */
    {"CREATE INDEX ON t (v)", NULL},
    {"CREATE INDEX IF NOT EXISTS by_v ON ks.t (v)", NULL},
    {"CREATE INDEX ON t (keys(m))", "CREATE INDEX ON t (KEYS(m))"},
    {"CREATE INDEX ON t (VALUES(m))", NULL},
    {"CREATE INDEX ON t (ENTRIES(m))", NULL},
    {"CREATE INDEX ON t (FULL(f))", NULL},
    {"CREATE INDEX ON t (values)", NULL},
    {"CREATE CUSTOM INDEX idx ON t (v) USING 'org.apache.cassandra.index.sasi.SASIIndex' WITH "
     "OPTIONS = {'mode': 'CONTAINS'}",
     "CREATE CUSTOM INDEX idx ON t (v) USING 'org.apache.cassandra.index.sasi.SASIIndex' WITH "
     "options = {'mode': 'CONTAINS'}"},
    {"DROP INDEX by_v", NULL},
    {"DROP INDEX IF EXISTS ks.by_v", NULL},
    /* materialized views */
    {"CREATE MATERIALIZED VIEW ks.by_email AS SELECT email, id FROM ks.users WHERE email IS NOT "
     "NULL AND id IS NOT NULL PRIMARY KEY (email, id)",
     NULL},
    {"CREATE MATERIALIZED VIEW IF NOT EXISTS v AS SELECT * FROM t WHERE a IS NOT NULL AND b IS NOT "
     "NULL PRIMARY KEY ((a, b)) WITH CLUSTERING ORDER BY (b DESC) AND comment = 'v'",
     NULL},
    {"ALTER MATERIALIZED VIEW v WITH gc_grace_seconds = 10", NULL},
    {"DROP MATERIALIZED VIEW IF EXISTS ks.v", NULL},
    /* INSERT */
    {"INSERT INTO ks.t (a, b, c) VALUES (1, 'x', ?) IF NOT EXISTS USING TTL 86400 AND TIMESTAMP "
     "123",
     NULL},
    {"INSERT INTO t (a) VALUES (:v) USING TIMESTAMP ? AND TTL ?", NULL},
    {"INSERT INTO t JSON '{\"a\": 1}'", NULL},
    {"INSERT INTO t JSON ? DEFAULT UNSET IF NOT EXISTS", NULL},
    {"INSERT INTO t JSON :j DEFAULT NULL USING TTL 5", NULL},
    /* literals */
    {"INSERT INTO t (a, b, c, d, e, f, g, h, i, j, k, l) VALUES ('it''s', $$dollar 'q'$$, 12, "
     "-3.5e2, NaN, -Infinity, 0xCAFE, 123e4567-e89b-12d3-a456-426614174000, TRUE, 1h30m, P1DT2H, "
     "{street: 'x', \"Zip\": 1})",
     "INSERT INTO t (a, b, c, d, e, f, g, h, i, j, k, l) VALUES ('it''s', 'dollar ''q''', 12, "
     "-3.5e2, NaN, -Infinity, 0xCAFE, 123e4567-e89b-12d3-a456-426614174000, true, 1h30m, P1DT2H, "
     "{street: 'x', \"Zip\": 1})"},
    {"INSERT INTO t (a, b, c, d, e, f) VALUES ([1, 2], {'a', 'b'}, {'k': 1, 'l': 2}, (1, 'a'), {}, "
     "[])",
     NULL},
    {"INSERT INTO t (a, b, c, d, e) VALUES (-NaN, Infinity, 1.5, 2E10, 0x)", NULL},
    {"INSERT INTO t (a, b, c, d) VALUES (P0001-02-03T04:05:06, -2w, 10ms, PT1H30M)", NULL},
    {"INSERT INTO t (a, b, c) VALUES (now(), uuid(), toTimestamp(now()))",
     "INSERT INTO t (a, b, c) VALUES (now(), uuid(), totimestamp(now()))"},
    {"INSERT INTO t (a, b) VALUES ((int) ?, (frozen<list<int>>) [1])", NULL},
    {"INSERT INTO t (a, b) VALUES (CAST(1 AS text), ks.f(1, 'a'))", NULL},
    {"INSERT INTO t (a, b, c) VALUES (1 + 2 * 3, - f(1), 4 % 2 - 1)", NULL},
    {"INSERT INTO t (a) VALUES (NULL)", NULL},
    {"INSERT INTO t (a) VALUES (null)", "INSERT INTO t (a) VALUES (NULL)"},
    /* UPDATE */
    {"UPDATE t USING TTL ? SET c = c + 1, d = d - 2 WHERE k = ?", NULL},
    {"UPDATE t SET l = l + [1], l = [0] + l, s = s - {'a'}, m = m - {'k'}, m = m + {'k': 'v'} "
     "WHERE k = 1",
     NULL},
    {"UPDATE t SET m['k'] = 'v', l[2] = 5, u.f = 3 WHERE k = 1", NULL},
    {"UPDATE t SET x += 1, y -= 2 WHERE k = 1", "UPDATE t SET x = x + 1, y = y - 2 WHERE k = 1"},
    {"UPDATE t SET z = z -3 WHERE k = 1", "UPDATE t SET z = z + -3 WHERE k = 1"},
    {"UPDATE t SET a = f(1), b = ks.g() WHERE k = 1", NULL},
    {"UPDATE t USING TIMESTAMP 5 AND TTL 10 SET a = 1 WHERE k = 1 AND c IN (1, 2) IF EXISTS", NULL},
    {"UPDATE t SET a = 1 WHERE k = 1 IF a = 1 AND b['x'] > 2 AND c.f IN (1, 2) AND d != NULL AND "
     "e IN ?",
     NULL},
    {"UPDATE t SET a = 1 WHERE k = 1 IF exists = 1", NULL},
    {"UPDATE t SET l = l + [1], l = l - [2], m['a'] = 1, m['b'] = 2, u.f = 1, u.g = 2 WHERE k = 1",
     NULL},
    /* DELETE */
    {"DELETE FROM t WHERE k = 1", NULL},
    {"DELETE a, m['k'], l[0], u.f FROM ks.t USING TIMESTAMP 5 WHERE k = 1 AND c >= 2 AND c < 5 IF "
     "EXISTS",
     NULL},
    {"DELETE FROM t WHERE k = 1 AND (c, d) >= (1, 2) AND (c, d) < (1, 5) IF a = 2 AND b != 3",
     NULL},
    /* BATCH */
    {"BEGIN BATCH INSERT INTO t (a) VALUES (1); APPLY BATCH", NULL},
    {"BEGIN UNLOGGED BATCH USING TIMESTAMP 1 INSERT INTO t (a) VALUES (?) UPDATE t SET a = ? WHERE "
     "k = ? DELETE FROM t WHERE k = :k; APPLY BATCH",
     "BEGIN UNLOGGED BATCH USING TIMESTAMP 1 INSERT INTO t (a) VALUES (?); UPDATE t SET a = ? "
     "WHERE k = ?; DELETE FROM t WHERE k = :k; APPLY BATCH"},
    {"BEGIN COUNTER BATCH UPDATE c SET n = n + 1 WHERE k = 1; UPDATE c SET n = n - 1 WHERE k = 2; "
     "APPLY BATCH",
     NULL},
    {"BEGIN BATCH APPLY BATCH", NULL},
    /* SELECT */
    {"SELECT * FROM t", NULL},
    {"SELECT a, b AS bee, \"C\" FROM ks.t", NULL},
    {"SELECT writetime(b), ttl(c), token(a, b), now(), COUNT(*), count(1), min(a), max(a), "
     "sum(a), avg(a), CAST(a AS text), ks.f(a, 1), m['k'], u.f, (int) 3, [1, 2], {1: 2}, - a, "
     "a + b * 2, m['a' .. 'c'], m[.. 'c'] FROM t",
     NULL},
    {"SELECT COUNT(*) AS n FROM t WHERE k = 1", NULL},
    {"SELECT DISTINCT k FROM t", NULL},
    {"SELECT JSON * FROM t", NULL},
    {"SELECT JSON DISTINCT a, b FROM t", NULL},
    {"SELECT json FROM t", "SELECT \"json\" FROM t"},
    {"SELECT distinct, a FROM t", "SELECT \"distinct\", a FROM t"},
    {"SELECT key, value, type FROM t WHERE key = 1", NULL},
    {"SELECT * FROM t WHERE k = 1 AND c = 2 AND d < 3 AND d <= 4 AND e > 5 AND e >= 6 AND f != 7",
     NULL},
    {"SELECT * FROM t WHERE k IN (1, 2, 3) AND c IN ? AND d IN :ds AND e IN ()", NULL},
    {"SELECT * FROM t WHERE f CONTAINS 3 AND g CONTAINS KEY 'k' AND m['x'] = 1 ALLOW FILTERING",
     NULL},
    {"SELECT * FROM t WHERE (c, d) > (1, 2) AND (c, d) <= ? AND (c, d) IN ((1, 2), (3, 4)) AND "
     "(c, d) IN (?, ?) AND (c, d) IN ? AND (c) > (1)",
     NULL},
    {"SELECT * FROM t WHERE token(a, b) > token(?, ?) AND TOKEN(a, b) <= 100",
     "SELECT * FROM t WHERE TOKEN(a, b) > token(?, ?) AND TOKEN(a, b) <= 100"},
    {"SELECT * FROM t WHERE a IS NOT NULL AND b LIKE 'x%'", NULL},
    {"SELECT * FROM t WHERE (a = 1) AND ((b = 2))", "SELECT * FROM t WHERE a = 1 AND b = 2"},
    {"SELECT a, max(b) FROM t WHERE a = 1 GROUP BY a, c ORDER BY c DESC, d ASC PER PARTITION "
     "LIMIT 2 LIMIT 10 ALLOW FILTERING",
     NULL},
    {"SELECT * FROM t ORDER BY c", "SELECT * FROM t ORDER BY c ASC"},
    {"SELECT * FROM t LIMIT ?", NULL},
    {"SELECT * FROM t PER PARTITION LIMIT :p", NULL},
    /* case, comments, statement terminators */
    {"SeLeCt A, \"B\" FrOm Ks.T wHeRe A = 1", "SELECT a, \"B\" FROM ks.t WHERE a = 1"},
    {"-- a comment\nSELECT /* inline */ a // to the end\nFROM t;;", "SELECT a FROM t"},
    {"SELECT a FROM t;", "SELECT a FROM t"},
};

typedef struct err_case {
    const char *in;
    const char *msg;
    int code;
} err_case;

#define SYN CQL_ERR_SYNTAX
static const err_case err_cases[] = {
    /* no viable alternative, at the token the decision failed on, snippet bracketing where
     * it began */
    {"SELECT FROM t", "line 1:7 no viable alternative at input 'FROM' (SELECT [FROM]...)", SYN},
    {"SELEC * FROM t", "line 1:0 no viable alternative at input 'SELEC' ([SELEC]...)", SYN},
    {"COMMIT;", "line 1:0 no viable alternative at input 'COMMIT' ([COMMIT]...)", SYN},
    {"DROP cqlkeyspace.t;",
     "line 1:5 no viable alternative at input 'cqlkeyspace' ([DROP] cqlkeyspace...)", SYN},
    {"CREATE FOO x", "line 1:7 no viable alternative at input 'FOO' ([CREATE] FOO...)", SYN},
    {"SELECT * FROM t WHERE a b",
     "line 1:24 no viable alternative at input 'b' (SELECT * FROM t WHERE [a] b)", SYN},
    {"SELECT * FROM t LIMIT x",
     "line 1:22 no viable alternative at input 'x' (SELECT * FROM t "
     "LIMIT [x])",
     SYN},
    {"SELECT * FROM WHERE a = 1",
     "line 1:14 no viable alternative at input 'WHERE' (SELECT * FROM [WHERE]...)", SYN},
    {"UPDATE t SET c = c WHERE k = 1",
     "line 1:19 no viable alternative at input 'WHERE' (UPDATE t SET c = [c] WHERE...)", SYN},
    {"CREATE TABLE t (k int PRIMARY KEY) WITH CLUSTERING ORDER BY (c)",
     "line 1:62 no viable alternative at input ')' (...WITH CLUSTERING ORDER BY (c[)])", SYN},
    /* at the end of the text: Cassandra's EOF token has no position */
    {"SELECT", "line 0:-1 no viable alternative at input '<EOF>'", SYN},
    {"SELECT * FROM t WHERE", "line 0:-1 no viable alternative at input '<EOF>'", SYN},
    {"INSERT INTO t (a, age)", "line 0:-1 mismatched input '<EOF>' expecting K_VALUES", SYN},
    {"CREATE TABLE t (k int", "line 0:-1 mismatched input '<EOF>' expecting ')'", SYN},
    /* mismatched input: the one token the grammar requires */
    {"DELETE cqlkeyspace.t;",
     "line 1:20 mismatched input ';' expecting K_FROM (DELETE cqlkeyspace.t[;])", SYN},
    {"BEGIN;", "line 1:5 mismatched input ';' expecting K_BATCH (BEGIN[;])", SYN},
    {"CREATE TABLE Monkey (\nidentifier uuid,\nspecies text,\nnickname text,\npopulation int,\n"
     "PRIMARY KEY ((identifier), species);",
     "line 6:35 mismatched input ';' expecting ')' (...KEY ((identifier), species)[;])", SYN},
    {"SELECT * FROM t; SELECT",
     "line 1:17 mismatched input 'SELECT' expecting EOF (SELECT * FROM t; [SELECT])", SYN},
    {"SELECT * FROM t WHERE a = 1 AND b = 2 ALLOW",
     "line 0:-1 mismatched input '<EOF>' expecting K_FILTERING", SYN},
    {"DELETE FROM t USING TTL 5 WHERE k = 1",
     "line 1:20 mismatched input 'TTL' expecting K_TIMESTAMP (DELETE FROM t USING [TTL]...)", SYN},
    {"INSERT INTO t (a) VALUES (1) IF EXISTS",
     "line 1:32 mismatched input 'EXISTS' expecting K_NOT (...) VALUES (1) IF [EXISTS])", SYN},
    /* a column set twice, its whole value at least once (Parser.g's addRawUpdate) */
    {"UPDATE t SET a = 1, a = 2 WHERE k = 1", "Multiple incompatible setting of column a", SYN},
    {"UPDATE t SET m['x'] = 1, b = 2, m = {} WHERE k = 1",
     "Multiple incompatible setting of column m", SYN},
    {"UPDATE t SET \"A\".f = 1, \"A\".f = 2 WHERE k = 1",
     "Multiple incompatible setting of column \"A\"", SYN},
    /* Cassandra 4's conditions have no CONTAINS (5.0 added it) */
    {"UPDATE t SET v = 1 WHERE k = 0 IF l CONTAINS 1",
     "line 1:36 no viable alternative at input 'CONTAINS' (...k = 0 IF l [CONTAINS]...)", SYN},
    {"DELETE FROM t WHERE k = 0 IF v = 1 AND m CONTAINS KEY 1",
     "line 1:41 no viable alternative at input 'CONTAINS' (...v = 1 AND m [CONTAINS]...)", SYN},
    {"BEGIN BATCH SELECT * FROM t APPLY BATCH",
     "line 1:12 mismatched input 'SELECT' expecting K_APPLY (BEGIN BATCH [SELECT]...)", SYN},
    {"CREATE TABLE t (a map<int>)",
     "line 1:25 mismatched input '>' expecting ',' (...TABLE t (a map<int[>]...)", SYN},
    {"SELECT json AS j FROM t",
     "line 1:15 mismatched input 'j' expecting K_FROM (SELECT json AS [j]...)", SYN},
    {"select\n  a,\n  b\nfrom t\nwhere a = 1 and\n  b > ) limit 3",
     "line 6:6 no viable alternative at input ')' (...= 1 and  b > [)]...)", SYN},
    /* the lexer's errors: no snippet */
    {"SELECT * FROM t WHERE a = 'unterminated",
     "line 1:39 mismatched character '<EOF>' expecting '''", SYN},
    {"SELECT * FROM t WHERE a # 1", "line 1:24 no viable alternative at character '#'", SYN},
    {"SELECT * FROM t /* open", "line 1:23 mismatched character '<EOF>' expecting '*'", SYN},
    {"SELECT * FROM t WHERE a = $$x", "line 1:29 mismatched character '<EOF>' expecting '$'", SYN},
    {"SELECT * FROM \"open", "line 1:19 mismatched character '<EOF>' expecting '\"'", SYN},
    {"SELECT a FROM t WHERE b = 1 AND\n c = 'x' ! 2",
     "line 2:9 no viable alternative at character '!'", SYN},
    /* the grammar's own checks */
    {"UPDATE t SET c = d + 1 WHERE k = 1",
     "Only expressions of the form X = X +<value> are supported.", SYN},
    {"UPDATE t SET c = d - 1 WHERE k = 1",
     "Only expressions of the form X = X -<value> are supported.", SYN},
    {"UPDATE t SET c = [1] + d WHERE k = 1",
     "Only expressions of the form X = <value> + X are supported.", SYN},
    {"UPDATE t SET c = d -1 WHERE k = 1",
     "Only expressions of the form X = X - <value> are supported.", SYN},
    {"SELECT * FROM ?", "Bind variables cannot be used for table names", SYN},
    {"SELECT * FROM ?.t", "Bind variables cannot be used for keyspace names", SYN},
    {"USE ?", "Bind variables cannot be used for keyspace names", SYN},
    {"DROP INDEX ?", "Bind variables cannot be used for index names", SYN},
    {"CREATE TABLE t (k int PRIMARY KEY) WITH COMPACT STORAGE",
     "COMPACT STORAGE tables are not allowed starting with version 4.0", SYN},
    {"CREATE KEYSPACE k WITH a = 1 AND a = 2", "Multiple definition for property a", SYN},
    {"CREATE KEYSPACE k WITH replication = {'a': 1, 'a': 2}", "Multiple definition for property a",
     SYN},
    {"CREATE KEYSPACE k WITH replication = {'a': ?}",
     "Invalid property value: ? for property: 'a' (bind variables are not supported in DDL "
     "queries)",
     SYN},
    {"CREATE KEYSPACE k WITH replication = {f(1): 'x'}", "Invalid property name: f(1)", SYN},
    {"CREATE TYPE byte (a int)", "Invalid (reserved) user type name byte", SYN},
    {"CREATE TYPE Byte (a int)", "Invalid (reserved) user type name byte", SYN},
    /* statements quarry does not run */
    {"GRANT SELECT ON t TO r",
     "GRANT statements are not supported by quarry (roles, permissions, functions, aggregates "
     "and triggers are outside its CQL)",
     CQL_ERR_INVALID},
    {"CREATE ROLE r",
     "CREATE ROLE statements are not supported by quarry (roles, permissions, functions, "
     "aggregates and triggers are outside its CQL)",
     CQL_ERR_INVALID},
    {"DESCRIBE", "line 0:-1 no viable alternative at input '<EOF>'", SYN},
    {"DESCRIBE FULL TABLES",
     "line 1:14 mismatched input 'TABLES' expecting K_SCHEMA (DESCRIBE FULL [TABLES])", SYN},
    {"DESCRIBE MATERIALIZED t",
     "line 1:22 mismatched input 't' expecting K_VIEW (DESCRIBE MATERIALIZED [t])", SYN},
};

static void check_ok(const ok_case *c)
{
    cql_parsed p;
    cql_parse_error e;
    if (cql_parse(c->in, strlen(c->in), &p, &e)) {
        CHECK(0, "'%s' does not parse: %s", c->in, e.msg);
        return;
    }
    CHECK(p.nstmts == 1, "'%s': %zu statements", c->in, p.nstmts);
    char *s = cql_print(p.stmts[0]);
    CHECK_STR(s, c->out ? c->out : c->in);
    cql_parsed p2;
    if (s && cql_parse(s, strlen(s), &p2, &e) == 0) {
        char *s2 = cql_print(p2.stmts[0]);
        CHECK(s2 && strcmp(s, s2) == 0, "print of '%s' reparses to '%s'", s, s2 ? s2 : "");
        CHECK(p2.nbinds == p.nbinds, "'%s': %zu markers, then %zu", s, p.nbinds, p2.nbinds);
        free(s2);
        cql_parsed_free(&p2);
    } else {
        CHECK(0, "print '%s' does not parse: %s", s ? s : "(null)", e.msg);
    }
    free(s);
    cql_parsed_free(&p);
}

static void check_err(const err_case *c)
{
    cql_parsed p;
    cql_parse_error e;
    if (cql_parse(c->in, strlen(c->in), &p, &e) == 0) {
        CHECK(0, "'%s' parses, want error %s", c->in, c->msg);
        cql_parsed_free(&p);
        return;
    }
    CHECK_STR(e.msg, c->msg);
    CHECK(e.code == c->code, "'%s': code %x, want %x", c->in, e.code, c->code);
    CHECK(p.nstmts == 0 && p.stmts == NULL, "a failed parse leaves nothing");
}

/* Markers are numbered in the order of the text, across a batch's statements. */
static void test_binds(void)
{
    const char *q = "BEGIN BATCH USING TIMESTAMP ? INSERT INTO t (a, b) VALUES (?, :b); "
                    "UPDATE t SET c = c + ? WHERE k IN ? AND (x, y) > (?, :y) APPLY BATCH";
    cql_parsed p;
    cql_parse_error e;
    CHECK(cql_parse(q, strlen(q), &p, &e) == 0, "%s", e.msg);
    const char *names[] = {NULL, NULL, "b", NULL, NULL, NULL, "y"};
    CHECK(p.nbinds == 7, "%zu markers", p.nbinds);
    for (size_t i = 0; i < p.nbinds && i < 7; i++) {
        CHECK(p.binds[i].node->bind == (int)i, "marker %zu numbered %d", i, p.binds[i].node->bind);
        CHECK((names[i] == NULL && p.binds[i].name == NULL) ||
                  (names[i] && p.binds[i].name && strcmp(names[i], p.binds[i].name) == 0),
              "marker %zu named %s", i, p.binds[i].name ? p.binds[i].name : "?");
        CHECK(q[p.binds[i].offset] == (names[i] ? ':' : '?'), "marker %zu at %zu", i,
              p.binds[i].offset);
    }
    cql_parsed_free(&p);

    /* a JSON or DISTINCT tried as a keyword and given up leaves no marker behind */
    q = "SELECT json, ? FROM t WHERE k = ?";
    CHECK(cql_parse(q, strlen(q), &p, &e) == 0, "%s", e.msg);
    CHECK(p.nbinds == 2 && p.binds[0].offset == 13 && p.binds[1].offset == 32, "%zu markers",
          p.nbinds);
    cql_parsed_free(&p);
}

static void test_script(void)
{
    const char *q = "-- schema\nCREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy'};\n"
                    "USE k;\n\n/* tables */\nCREATE TABLE t (a int PRIMARY KEY, b text) ;\n"
                    ";\nINSERT INTO t (a, b) VALUES (?, ?);\nSELECT * FROM t WHERE a = ?";
    cql_parsed p;
    cql_parse_error e;
    CHECK(cql_parse_script(q, strlen(q), &p, &e) == 0, "%s", e.msg);
    CHECK(p.nstmts == 5, "%zu statements", p.nstmts);
    CHECK(p.nbinds == 0, "a script is not prepared");
    if (p.nstmts == 5) {
        CHECK(p.stmts[0]->kind == CQL_CREATE_KEYSPACE && p.stmts[1]->kind == CQL_USE &&
                  p.stmts[2]->kind == CQL_CREATE_TABLE && p.stmts[3]->kind == CQL_INSERT &&
                  p.stmts[4]->kind == CQL_SELECT,
              "statement kinds");
        CHECK(p.stmts[4]->u.select.where.rels[0].value->bind == 0,
              "each statement numbers its markers from 0");
        const cql_stmt *s = p.stmts[1];
        CHECK(s->length == 5 && strncmp(q + s->offset, "USE k", 5) == 0, "USE at %zu+%zu",
              s->offset, s->length);
    }
    cql_parsed_free(&p);

    q = "USE k;\nSELECT * FROM t\nWHERE a = 1\nSELECT";
    CHECK(cql_parse_script(q, strlen(q), &p, &e) != 0, "two statements without ';'");
    CHECK_STR(e.msg, "line 4:0 mismatched input 'SELECT' expecting ';' (...tWHERE a = 1[SELECT])");

    q = "";
    CHECK(cql_parse_script(q, 0, &p, &e) == 0 && p.nstmts == 0, "an empty script");
    cql_parsed_free(&p);
    CHECK(cql_parse(q, 0, &p, &e) != 0, "an empty statement");
    CHECK_STR(e.msg, "line 0:-1 no viable alternative at input '<EOF>'");
}

/* Texts that are not NUL-terminated, hold NUL bytes or nest deeply are refused cleanly. */
static void test_hostile(void)
{
    cql_parsed p;
    cql_parse_error e;
    char text[] = "SELECT * FROM tXXXX";
    CHECK(cql_parse(text, 15, &p, &e) == 0, "a length without a NUL: %s", e.msg);
    if (p.nstmts) CHECK_STR(p.stmts[0]->name.name, "t");
    cql_parsed_free(&p);
    CHECK(cql_parse("SELECT\0 * FROM t", 16, &p, &e) != 0, "a NUL byte");
    CHECK_STR(e.msg, "line 1:6 no viable alternative at character '\\u0000'");
    /* the tree's names and strings are C strings: a NUL inside one is refused, not cut */
    CHECK(cql_parse("DROP KEYSPACE \"a\0b\"", 19, &p, &e) != 0, "a NUL in a name");
    CHECK_STR(e.msg, "line 1:16 no viable alternative at character '\\u0000'");
    CHECK(cql_parse("INSERT INTO t (a) VALUES ($$a\0$$)", 33, &p, &e) != 0, "a NUL in a string");
    CHECK_STR(e.msg, "line 1:29 no viable alternative at character '\\u0000'");
    size_t n = 100000;
    char *deep = malloc(n * 2 + 64);
    size_t o = (size_t)sprintf(deep, "INSERT INTO t (a) VALUES (");
    for (size_t i = 0; i < n; i++)
        deep[o++] = '[';
    deep[o] = '\0';
    CHECK(cql_parse(deep, o, &p, &e) != 0, "deep nesting is refused");
    CHECK(strstr(e.msg, "nesting too deep") != NULL, "%s", e.msg);
    free(deep);
}

/* What `quarry model export --format cql` writes for each example model is a script the
 * front end takes: as many CREATE statements as it wrote. */
static void test_exported_models(void)
{
    glob_t g;
    CHECK(glob("examples/*.yaml", 0, NULL, &g) == 0 && g.gl_pathc > 0,
          "no examples/*.yaml (run from the repository root)");
    for (size_t i = 0; i < g.gl_pathc; i++) {
        qr_model *m = NULL;
        ck_report *r = NULL;
        qr_err err;
        err_init(&err);
        if (model_load(g.gl_pathv[i], NULL, 0, &m, &err) || check_run(m, &r, &err)) {
            CHECK(0, "%s: %s", g.gl_pathv[i], err.msg);
            if (m) model_free(m);
            continue;
        }
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        CHECK(model_export_cql(r, f, &err) == 0, "%s: %s", g.gl_pathv[i], err.msg);
        fclose(f);
        size_t creates = 0;
        for (const char *c = text; (c = strstr(c, "CREATE ")) != NULL; c++)
            creates++;
        cql_parsed p;
        cql_parse_error e;
        if (cql_parse_script(text, len, &p, &e)) {
            CHECK(0, "%s exports CQL that does not parse: %s\n%s", g.gl_pathv[i], e.msg, text);
        } else {
            CHECK(p.nstmts == creates && creates >= 2, "%s: %zu statements, %zu CREATEs",
                  g.gl_pathv[i], p.nstmts, creates);
            for (size_t k = 0; k < p.nstmts; k++) {
                char *s = cql_print(p.stmts[k]);
                cql_parsed p2;
                CHECK(s && cql_parse(s, strlen(s), &p2, &e) == 0, "%s: reprint '%s': %s",
                      g.gl_pathv[i], s ? s : "", e.msg);
                if (s && p2.nstmts) cql_parsed_free(&p2);
                free(s);
            }
            cql_parsed_free(&p);
        }
        free(text);
        check_free(r);
        model_free(m);
    }
    globfree(&g);
}

int main(void)
{
    for (size_t i = 0; i < sizeof ok_cases / sizeof ok_cases[0]; i++)
        check_ok(&ok_cases[i]);
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++)
        check_err(&err_cases[i]);
    test_binds();
    test_script();
    test_hostile();
    test_exported_models();
    return check_report("test_cql_parse");
}
