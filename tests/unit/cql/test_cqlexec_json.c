/* test_cqlexec_json.c — INSERT JSON and SELECT JSON through qr_cql_call: a JSON map's
 * values turned into the columns' types (collections, timestamps, quoted names), DEFAULT
 * NULL and DEFAULT UNSET, a bound JSON string, Cassandra's refusals of an unknown column
 * and of text that is no map, and rows answered as one [json] column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqlexec_helper.h"
#include "quarry.h"

#include "check.h"

static qr_db *db;

static void ok(const char *text)
{
    tresult r;
    int rc = tquery(db, "ks", text, NULL, &r);
    CHECK(rc == QR_OK && r.ok, "%s: %s", text, r.msg);
    tresult_free(&r);
}

static void json_is(const char *query, const char *want)
{
    tresult r;
    CHECK(tquery(db, "ks", query, NULL, &r) == QR_OK, "%s: %s", query, r.msg);
    CHECK(r.ncols == 1 && r.nrows == 1, "%s: %u cols %u rows", query, r.ncols, r.nrows);
    if (r.ncols == 1) CHECK_STR(r.cols[0], "[json]");
    char t[512];
    CHECK_STR(ttext(&r, 0, "[json]", t, sizeof t), want);
    tresult_free(&r);
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_json_XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    char *msg = NULL;
    if (qr_open(dir, NULL, &db, &msg) != QR_OK) {
        fprintf(stderr, "open: %s\n", msg);
        return 1;
    }
    tresult r;
    tquery(db, NULL,
           "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
           "'replication_factor': 1}",
           NULL, &r);
    tresult_free(&r);
    ok("CREATE TABLE p (id int PRIMARY KEY, name text, tags set<text>, \"Score\" double, born "
       "date)");
    ok("INSERT INTO p JSON '{\"id\": 1, \"name\": \"ann\", \"tags\": [\"b\", \"a\"], "
       "\"\\\"Score\\\"\": 2.5, \"born\": \"1990-05-01\"}'");
    json_is("SELECT JSON * FROM p WHERE id = 1",
            "{\"id\": 1, \"\\\"Score\\\"\": 2.5, \"born\": \"1990-05-01\", \"name\": \"ann\", "
            "\"tags\": [\"a\", \"b\"]}");
    json_is("SELECT JSON id, name AS who FROM p WHERE id = 1", "{\"id\": 1, \"who\": \"ann\"}");
    /* DEFAULT NULL clears what the map leaves out; DEFAULT UNSET keeps it */
    ok("INSERT INTO p JSON '{\"id\": 1, \"born\": \"1990-05-02\"}' DEFAULT UNSET");
    json_is("SELECT JSON name, born FROM p WHERE id = 1",
            "{\"name\": \"ann\", \"born\": \"1990-05-02\"}");
    ok("INSERT INTO p JSON '{\"id\": 1, \"born\": \"1990-05-03\"}'");
    json_is("SELECT JSON name, born FROM p WHERE id = 1",
            "{\"name\": null, \"born\": \"1990-05-03\"}");
    /* a bound JSON string */
    const char *doc = "{\"id\": 2, \"name\": \"bea\"}";
    tv v = {doc, (int32_t)strlen(doc), NULL};
    tparams p = {.values = &v, .n = 1};
    CHECK_THAT(tquery(db, "ks", "INSERT INTO p JSON ?", &p, &r) == QR_OK);
    tresult_free(&r);
    json_is("SELECT JSON name FROM p WHERE id = 2", "{\"name\": \"bea\"}");
    json_is("SELECT JSON COUNT(*) FROM p", "{\"count\": 2}");
    /* fields of a user type: set and deleted one at a time */
    ok("CREATE TYPE addr (street text, zip int)");
    ok("CREATE TABLE people (id int PRIMARY KEY, a addr, f frozen<addr>)");
    ok("INSERT INTO people (id, a, f) VALUES (1, {street: 'main', zip: 1}, {street: 'x', zip: 9})");
    ok("UPDATE people SET a.zip = 2 WHERE id = 1");
    json_is("SELECT JSON a FROM people WHERE id = 1",
            "{\"a\": {\"street\": \"main\", \"zip\": 2}}");
    ok("DELETE a.street FROM people WHERE id = 1");
    json_is("SELECT JSON a FROM people WHERE id = 1", "{\"a\": {\"street\": null, \"zip\": 2}}");
    CHECK_THAT(tquery(db, "ks", "UPDATE people SET f.zip = 3 WHERE id = 1", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "Invalid operation (f.zip = 3) for frozen UDT column f");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "UPDATE people SET a.nope = 3 WHERE id = 1", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "UDT column a does not have a field named nope");
    tresult_free(&r);

    /* refusals */
    CHECK_THAT(tquery(db, "ks", "INSERT INTO p JSON '{\"id\": 3, \"nope\": 1}'", NULL, &r) ==
               QR_ERR);
    CHECK_STR(r.msg, "JSON values map contains unrecognized column: nope");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "INSERT INTO p JSON '[1, 2]'", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID &&
              strncmp(r.msg, "Could not decode JSON string as a map", 37) == 0,
          "not a map: %s", r.msg);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "INSERT INTO p JSON '{\"id\": \"x\"}'", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "a mistyped value: %s", r.msg);
    tresult_free(&r);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_json");
}
