/* test_cqlexec_schema.c — the schema statements through qr_cql_call: keyspaces (with
 * replication shown as system_schema shows it), tables (composite partition keys,
 * clustering order, static columns, options), ALTER, TRUNCATE, DROP, user types; the
 * SCHEMA_CHANGE results and events, Cassandra's messages for what exists or does not,
 * IF [NOT] EXISTS; what system_schema lists; and the schema after qr_close and qr_open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqlexec_helper.h"
#include "quarry.h"

#include "check.h"

/* Runs text and checks it succeeded; returns the result kind (its result freed). */
static int ok(qr_db *db, const char *ks, const char *text)
{
    tresult r;
    int rc = tquery(db, ks, text, NULL, &r);
    CHECK(rc == QR_OK && r.ok, "%s: %s", text, r.msg);
    int kind = r.kind;
    tresult_free(&r);
    return kind;
}

/* Runs text and checks it failed with code and message. */
static void fails(qr_db *db, const char *ks, const char *text, uint16_t code, const char *msg)
{
    tresult r;
    CHECK(tquery(db, ks, text, NULL, &r) == QR_ERR, "%s should fail", text);
    CHECK(r.err_code == code, "%s: code %x, want %x (%s)", text, r.err_code, code, r.msg);
    CHECK_STR(r.msg, msg);
    tresult_free(&r);
}

static void schema_version(qr_db *db, uint8_t out[16])
{
    tresult r;
    tquery(db, NULL, "SELECT schema_version FROM system.local", NULL, &r);
    cql_value v = tval(&r, 0, "schema_version");
    CHECK_THAT(v.len == 16);
    if (v.len == 16) memcpy(out, v.p, 16);
    tresult_free(&r);
}

static void test_keyspaces(qr_db *db)
{
    uint8_t v0[16], v1[16];
    schema_version(db, v0);
    tresult r;
    CHECK_THAT(tquery(db, NULL,
                      "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
                      "'replication_factor': 1}",
                      NULL, &r) == QR_OK);
    CHECK(r.kind == CQL_RESULT_SCHEMA_CHANGE, "kind %d: %s", r.kind, r.msg);
    CHECK_STR(r.change, "CREATED");
    CHECK_STR(r.target, "KEYSPACE");
    CHECK_STR(r.ks, "ks");
    CHECK_THAT(r.has_event);
    tresult_free(&r);
    schema_version(db, v1);
    CHECK(memcmp(v0, v1, 16) != 0, "the schema version changes");

    CHECK_THAT(tquery(db, NULL,
                      "CREATE KEYSPACE ks WITH replication = {'class': "
                      "'SimpleStrategy', 'replication_factor': 1}",
                      NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_ALREADY_EXISTS, "code %x", r.err_code);
    CHECK_STR(r.msg, "Cannot add existing keyspace \"ks\"");
    CHECK_STR(r.ks, "ks");
    CHECK_STR(r.name, "");
    tresult_free(&r);
    CHECK_THAT(ok(db, NULL,
                  "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': "
                  "'SimpleStrategy', 'replication_factor': 1}") == CQL_RESULT_VOID);
    fails(db, NULL, "CREATE KEYSPACE k2 WITH durable_writes = true", CQL_ERR_INVALID,
          "Missing mandatory option 'replication'");
    fails(db, NULL, "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy'}",
          CQL_ERR_CONFIG, "SimpleStrategy requires a replication_factor strategy option.");
    fails(db, NULL, "CREATE KEYSPACE k2 WITH replication = {'class': 'Nope'}", CQL_ERR_CONFIG,
          "Unable to find replication strategy class 'org.apache.cassandra.locator.Nope'");
    fails(db, NULL,
          "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', "
          "'replication_factor': 1} AND colour = 'red'",
          CQL_ERR_SYNTAX, "Unknown property 'colour'");
    ok(db, NULL,
       "CREATE KEYSPACE nts WITH replication = {'class': 'NetworkTopologyStrategy', "
       "'datacenter1': 3} AND durable_writes = false");

    CHECK_THAT(tquery(db, NULL, "SELECT * FROM system_schema.keyspaces WHERE keyspace_name = 'nts'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 1, "nts listed: %u", r.nrows);
    cql_value dw = tval(&r, 0, "durable_writes");
    CHECK_THAT(dw.len == 1 && dw.p[0] == 0);
    /* replication: {'class': 'org.apache...NetworkTopologyStrategy', 'datacenter1': '3'} */
    cql_value repl = tval(&r, 0, "replication");
    cql_elements e;
    uint32_t n = 0;
    CHECK_THAT(cql_collection_open(&e, repl.p, (size_t)repl.len, 1, &n) == 0 && n == 2);
    const uint8_t *p;
    int32_t len;
    char kv[4][80];
    for (int i = 0; i < 4 && cql_element_next(&e, &p, &len) == 1; i++) {
        snprintf(kv[i], sizeof kv[i], "%.*s", (int)len, (const char *)p);
    }
    CHECK_STR(kv[0], "class");
    CHECK_STR(kv[1], "org.apache.cassandra.locator.NetworkTopologyStrategy");
    CHECK_STR(kv[2], "datacenter1");
    CHECK_STR(kv[3], "3");
    tresult_free(&r);

    ok(db, NULL, "ALTER KEYSPACE nts WITH durable_writes = true");
    fails(db, NULL, "ALTER KEYSPACE nope WITH durable_writes = true", CQL_ERR_INVALID,
          "Keyspace 'nope' doesn't exist");
    CHECK_THAT(ok(db, NULL, "ALTER KEYSPACE IF EXISTS nope WITH durable_writes = true") ==
               CQL_RESULT_VOID);
    fails(db, NULL, "DROP KEYSPACE system", CQL_ERR_UNAUTHORIZED, "Cannot DROP <keyspace system>");
    CHECK_THAT(ok(db, NULL, "DROP KEYSPACE nts") == CQL_RESULT_SCHEMA_CHANGE);
    fails(db, NULL, "DROP KEYSPACE nts", CQL_ERR_INVALID, "Keyspace 'nts' doesn't exist");
    CHECK_THAT(ok(db, NULL, "DROP KEYSPACE IF EXISTS nts") == CQL_RESULT_VOID);
}

static void test_tables(qr_db *db)
{
    tresult r;
    CHECK_THAT(tquery(db, "ks",
                      "CREATE TABLE messages (user_id uuid, sent_at timestamp, id timeuuid, body "
                      "text, name text static, tags set<text>, PRIMARY KEY ((user_id), sent_at, "
                      "id)) WITH CLUSTERING ORDER BY (sent_at DESC, id ASC) AND "
                      "default_time_to_live = 3600 AND comment = 'by user' AND compaction = "
                      "{'class': 'LeveledCompactionStrategy'}",
                      NULL, &r) == QR_OK);
    CHECK(r.kind == CQL_RESULT_SCHEMA_CHANGE, "create table: %s", r.msg);
    CHECK_STR(r.change, "CREATED");
    CHECK_STR(r.target, "TABLE");
    CHECK_STR(r.ks, "ks");
    CHECK_STR(r.name, "messages");
    tresult_free(&r);
    ok(db, NULL,
       "CREATE TABLE ks.events (tenant text, month int, at timestamp, seq bigint, payload blob, "
       "PRIMARY KEY ((tenant, month), at, seq))");
    ok(db, NULL, "CREATE TABLE ks.counts (page text PRIMARY KEY, views counter)");

    /* columns, in Cassandra's order */
    CHECK_THAT(tquery(db, NULL,
                      "SELECT * FROM system_schema.columns WHERE keyspace_name = 'ks' AND "
                      "table_name = 'messages'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 6, "6 columns: %u", r.nrows);
    /* clustered by column name, as system_schema.columns is */
    static const char *const want[][5] = {
        {"body", "regular", "-1", "none", "text"},
        {"id", "clustering", "1", "asc", "timeuuid"},
        {"name", "static", "-1", "none", "text"},
        {"sent_at", "clustering", "0", "desc", "timestamp"},
        {"tags", "regular", "-1", "none", "set<text>"},
        {"user_id", "partition_key", "0", "none", "uuid"},
    };
    for (uint32_t i = 0; i < r.nrows && i < 6; i++) {
        char t[64];
        CHECK_STR(ttext(&r, i, "column_name", t, sizeof t), want[i][0]);
        CHECK_STR(ttext(&r, i, "kind", t, sizeof t), want[i][1]);
        int32_t pos = 0;
        cql_value pv = tval(&r, i, "position");
        cql_int_decode(pv.p, (size_t)pv.len, &pos);
        CHECK(pos == atoi(want[i][2]), "%s position %d", want[i][0], pos);
        CHECK_STR(ttext(&r, i, "clustering_order", t, sizeof t), want[i][3]);
        CHECK_STR(ttext(&r, i, "type", t, sizeof t), want[i][4]);
    }
    tresult_free(&r);

    CHECK_THAT(tquery(db, NULL,
                      "SELECT * FROM system_schema.tables WHERE keyspace_name = 'ks' AND "
                      "table_name = 'messages'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 1, "one table row: %u", r.nrows);
    char t[128];
    CHECK_STR(ttext(&r, 0, "comment", t, sizeof t), "by user");
    int32_t ttl = 0;
    cql_value tv_ = tval(&r, 0, "default_time_to_live");
    cql_int_decode(tv_.p, (size_t)tv_.len, &ttl);
    CHECK(ttl == 3600, "default_time_to_live %d", ttl);
    CHECK_STR(ttext(&r, 0, "speculative_retry", t, sizeof t), "99p");
    CHECK_THAT(tval(&r, 0, "id").len == 16);
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'ks'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 3, "three tables: %u", r.nrows);
    tresult_free(&r);

    /* the engine table beside it */
    qr_response resp;
    CHECK_THAT(qr_call(db, "ListTables", "{}", 2, &resp) == QR_OK);
    CHECK(strstr(resp.body, "\"ks.messages\"") && strstr(resp.body, "\"ks.events\""), "%s",
          resp.body);
    qr_response_free(&resp);

    /* refusals */
    fails(db, NULL, "CREATE TABLE nope.t (a int PRIMARY KEY)", CQL_ERR_INVALID,
          "Keyspace 'nope' doesn't exist");
    CHECK_THAT(tquery(db, NULL, "CREATE TABLE ks.events (a int PRIMARY KEY)", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_ALREADY_EXISTS, "code %x", r.err_code);
    CHECK_STR(r.msg, "Cannot add already existing table \"events\" to keyspace \"ks\"");
    CHECK_STR(r.ks, "ks");
    CHECK_STR(r.name, "events");
    tresult_free(&r);
    CHECK_THAT(ok(db, NULL, "CREATE TABLE IF NOT EXISTS ks.events (a int PRIMARY KEY)") ==
               CQL_RESULT_VOID);
    fails(db, "ks", "CREATE TABLE t (a int, b int static, PRIMARY KEY (a))", CQL_ERR_INVALID,
          "Static columns are only useful (and thus allowed) if the table has at least one "
          "clustering column");
    fails(db, "ks", "CREATE TABLE t (a int, PRIMARY KEY (a, b))", CQL_ERR_INVALID,
          "Unknown column 'b' referenced in PRIMARY KEY for table 't'");
    fails(db, "ks", "CREATE TABLE t (a int, b int)", CQL_ERR_INVALID,
          "No PRIMARY KEY specifed for table 't' (exactly one required)");
    fails(db, "ks", "CREATE TABLE t (a int PRIMARY KEY, a text)", CQL_ERR_INVALID,
          "Duplicate column 'a' declaration for table 't'");
    fails(db, "ks", "CREATE TABLE t (a int PRIMARY KEY, b int) WITH colour = 1", CQL_ERR_SYNTAX,
          "Unknown property 'colour'");
    fails(db, "ks", "CREATE TABLE t (a int PRIMARY KEY, b counter, c int)", CQL_ERR_INVALID,
          "Cannot mix counter and non counter columns in the same table");
    fails(db, "ks",
          "CREATE TABLE t (a int, b int, c int, PRIMARY KEY (a, b, c)) WITH CLUSTERING ORDER BY "
          "(c DESC, b ASC)",
          CQL_ERR_INVALID,
          "The order of columns in the CLUSTERING ORDER directive must match that of the "
          "clustering columns (b must appear before c)");
    CHECK_THAT(tquery(db, "ks", "CREATE TABLE t (a set<int> PRIMARY KEY, b int)", NULL, &r) ==
               QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID &&
              strncmp(r.msg, "Invalid non-frozen collection type", 34) == 0,
          "a set as the key: %s", r.msg);
    tresult_free(&r);
    fails(db, NULL, "CREATE TABLE t (a int PRIMARY KEY)", CQL_ERR_INVALID,
          "No keyspace has been specified. USE a keyspace, or explicitly specify "
          "keyspace.tablename");

    /* ALTER */
    CHECK_THAT(ok(db, "ks", "ALTER TABLE messages ADD score double") == CQL_RESULT_SCHEMA_CHANGE);
    fails(db, "ks", "ALTER TABLE messages ADD score int", CQL_ERR_INVALID,
          "Column with name 'score' already exists");
    ok(db, "ks", "ALTER TABLE messages DROP body");
    fails(db, "ks", "ALTER TABLE messages DROP user_id", CQL_ERR_INVALID,
          "Cannot drop PRIMARY KEY column user_id");
    fails(db, "ks", "ALTER TABLE messages DROP nope", CQL_ERR_INVALID,
          "Column nope was not found in table messages");
    ok(db, "ks", "ALTER TABLE messages WITH comment = 'changed'");
    fails(db, "ks", "ALTER TABLE nope ADD x int", CQL_ERR_INVALID, "Table 'ks.nope' doesn't exist");
    CHECK_THAT(tquery(db, NULL,
                      "SELECT column_name, type FROM system_schema.dropped_columns WHERE "
                      "keyspace_name = 'ks' AND table_name = 'messages'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 1, "one dropped column: %u", r.nrows);
    CHECK_STR(ttext(&r, 0, "column_name", t, sizeof t), "body");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'ks' "
                      "AND table_name = 'messages'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 6, "columns after ALTER: %u", r.nrows);
    CHECK_STR(ttext(&r, 0, "column_name", t, sizeof t), "id");
    CHECK_STR(ttext(&r, 2, "column_name", t, sizeof t), "score");
    tresult_free(&r);

    /* TRUNCATE and DROP */
    CHECK_THAT(ok(db, "ks", "TRUNCATE events") == CQL_RESULT_VOID);
    CHECK_THAT(ok(db, "ks", "TRUNCATE TABLE ks.events") == CQL_RESULT_VOID);
    fails(db, "ks", "TRUNCATE nope", CQL_ERR_INVALID, "table nope does not exist");
    CHECK_THAT(ok(db, "ks", "DROP TABLE events") == CQL_RESULT_SCHEMA_CHANGE);
    fails(db, "ks", "DROP TABLE events", CQL_ERR_INVALID, "Table 'ks.events' doesn't exist");
    CHECK_THAT(ok(db, "ks", "DROP TABLE IF EXISTS events") == CQL_RESULT_VOID);
    CHECK_THAT(qr_call(db, "ListTables", "{}", 2, &resp) == QR_OK);
    CHECK(strstr(resp.body, "\"ks.events\"") == NULL, "engine table dropped: %s", resp.body);
    qr_response_free(&resp);
}

static void test_types(qr_db *db)
{
    tresult r;
    CHECK_THAT(tquery(db, "ks",
                      "CREATE TYPE address (street text, zip int, tags frozen<list<text>>)", NULL,
                      &r) == QR_OK);
    CHECK_STR(r.change, "CREATED");
    CHECK_STR(r.target, "TYPE");
    CHECK_STR(r.name, "address");
    tresult_free(&r);
    fails(db, "ks", "CREATE TYPE address (a int)", CQL_ERR_INVALID,
          "A user type with name 'address' already exists");
    CHECK_THAT(ok(db, "ks", "CREATE TYPE IF NOT EXISTS address (a int)") == CQL_RESULT_VOID);
    ok(db, "ks", "ALTER TYPE address ADD country text");
    ok(db, "ks", "CREATE TYPE tagged (tags list<text>)");
    fails(db, "ks", "CREATE TABLE bad (id int PRIMARY KEY, t tagged)", CQL_ERR_INVALID,
          "Non-frozen UDTs with nested non-frozen collections are not supported");
    ok(db, "ks", "DROP TYPE tagged");
    ok(db, "ks", "CREATE TABLE people (id int PRIMARY KEY, home frozen<address>, work address)");
    CHECK_THAT(tquery(db, NULL,
                      "SELECT * FROM system_schema.types WHERE keyspace_name = 'ks' AND "
                      "type_name = 'address'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 1, "type listed: %u", r.nrows);
    cql_value fn = tval(&r, 0, "field_names");
    cql_elements e;
    uint32_t n = 0;
    CHECK_THAT(cql_collection_open(&e, fn.p, (size_t)fn.len, 0, &n) == 0 && n == 4);
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = "
                      "'ks' AND table_name = 'people'",
                      NULL, &r) == QR_OK);
    char t[64];
    CHECK_STR(ttext(&r, 0, "column_name", t, sizeof t), "home");
    CHECK_STR(ttext(&r, 0, "type", t, sizeof t), "frozen<address>");
    CHECK_STR(ttext(&r, 2, "type", t, sizeof t), "address");
    tresult_free(&r);
    fails(db, "ks", "DROP TYPE address", CQL_ERR_INVALID,
          "Cannot drop user type 'ks.address' as it is still used by table people");
    fails(db, "ks", "CREATE TABLE t2 (id int PRIMARY KEY, a nope)", CQL_ERR_INVALID,
          "Unknown type ks.nope");
    ok(db, "ks", "DROP TABLE people");
    CHECK_THAT(ok(db, "ks", "DROP TYPE address") == CQL_RESULT_SCHEMA_CHANGE);
    fails(db, "ks", "DROP TYPE address", CQL_ERR_INVALID, "Type 'ks.address' doesn't exist");
    CHECK_THAT(ok(db, "ks", "DROP TYPE IF EXISTS address") == CQL_RESULT_VOID);
    ok(db, "ks", "CREATE TYPE kept (a int)");
}

static void test_reopen(const char *dir)
{
    qr_db *db;
    char *msg = NULL;
    CHECK_THAT(qr_open(dir, NULL, &db, &msg) == QR_OK);
    if (msg) free(msg);
    tresult r;
    CHECK_THAT(tquery(db, NULL, "USE ks", NULL, &r) == QR_OK);
    CHECK_STR(r.keyspace_after, "ks");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'ks'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 2, "messages and counts after reopening: %u", r.nrows);
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL, "SELECT * FROM system_schema.types WHERE keyspace_name = 'ks'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 1, "the type after reopening: %u", r.nrows);
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "SELECT comment FROM system_schema.tables WHERE keyspace_name = 'ks' AND "
                      "table_name = 'messages'",
                      NULL, &r) == QR_OK);
    char t[64];
    CHECK_STR(ttext(&r, 0, "comment", t, sizeof t), "changed");
    tresult_free(&r);
    CHECK_THAT(ok(db, NULL, "DROP KEYSPACE ks") == CQL_RESULT_SCHEMA_CHANGE);
    qr_response resp;
    CHECK_THAT(qr_call(db, "ListTables", "{}", 2, &resp) == QR_OK);
    CHECK(strstr(resp.body, "ks.") == NULL, "the keyspace's tables dropped: %s", resp.body);
    qr_response_free(&resp);
    qr_close(db);
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_schema_XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *msg = NULL;
    if (qr_open(dir, NULL, &db, &msg) != QR_OK) {
        fprintf(stderr, "open: %s\n", msg);
        return 1;
    }
    test_keyspaces(db);
    test_tables(db);
    test_types(db);
    qr_close(db);
    test_reopen(dir);
    check_remove_tree(dir);
    return check_report("test_cqlexec_schema");
}
