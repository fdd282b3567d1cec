/* test_cqlexec_view.c — materialized views through qr_cql_call: CREATE MATERIALIZED VIEW
 * as a global index of the base's engine table (all of the row projected, built over the
 * rows there and kept up asynchronously), SELECT by the view's key in its clustering order,
 * rows moving when the keyed column changes, system_schema.views and the view's columns,
 * Cassandra's refusals (key columns, IS NOT NULL, writes to a view, dropping a base that
 * has views), and DROP MATERIALIZED VIEW. */
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

static void fails(const char *text, const char *msg)
{
    tresult r;
    CHECK(tquery(db, "ks", text, NULL, &r) == QR_ERR, "%s should fail", text);
    if (msg) CHECK_STR(r.msg, msg);
    tresult_free(&r);
}

/* The SELECT's rows (waiting while the view is built) into *r. */
static void query(const char *text, tresult *r)
{
    for (int tries = 0; tries < 100; tries++) {
        int rc = tquery(db, "ks", text, NULL, r);
        if (rc == QR_OK) return;
        int building = r->err_code == CQL_ERR_READ_FAILURE;
        if (!building) {
            CHECK(0, "%s: %s", text, r->msg);
            return;
        }
        tresult_free(r);
        usleep(50000);
    }
    CHECK(0, "%s: never built", text);
}

static int32_t int_at(const tresult *r, uint32_t row, const char *col)
{
    cql_value v = tval(r, row, col);
    int32_t x = -999;
    if (v.len == 4) cql_int_decode(v.p, 4, &x);
    return x;
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_view_XXXXXX";
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
    ok("CREATE TABLE users (id int PRIMARY KEY, email text, age int)");
    for (int i = 0; i < 12; i++) {
        char q[128];
        snprintf(q, sizeof q, "INSERT INTO users (id, email, age) VALUES (%d, '%c@x', %d)", i,
                 'a' + i % 3, 20 + i % 2);
        ok(q);
    }
    CHECK_THAT(tquery(db, "ks",
                      "CREATE MATERIALIZED VIEW by_email AS SELECT * FROM users WHERE email IS NOT "
                      "NULL AND id IS NOT NULL PRIMARY KEY (email, id)",
                      NULL, &r) == QR_OK);
    CHECK(r.kind == CQL_RESULT_SCHEMA_CHANGE, "%s", r.msg);
    CHECK_STR(r.change, "CREATED");
    tresult_free(&r);
    query("SELECT id, age FROM by_email WHERE email = 'b@x'", &r);
    CHECK(r.nrows == 4 && r.ncols == 2, "the rows there before: %u", r.nrows);
    int ordered = 1;
    for (uint32_t i = 1; i < r.nrows; i++)
        ordered &= int_at(&r, i, "id") > int_at(&r, i - 1, "id");
    CHECK(ordered, "in the view's clustering order");
    tresult_free(&r);
    /* a view named as briefly as CQL allows, though engine index names are 3 or more */
    ok("CREATE MATERIALIZED VIEW va AS SELECT id, email FROM users WHERE age IS NOT NULL AND "
       "id IS NOT NULL PRIMARY KEY (age, id) WITH CLUSTERING ORDER BY (id DESC)");
    query("SELECT * FROM va WHERE age = 21", &r);
    CHECK(r.nrows == 6 && r.ncols == 3, "by age: %u rows %u cols", r.nrows, r.ncols);
    CHECK(int_at(&r, 0, "id") == 11 && int_at(&r, 5, "id") == 1, "id DESC: %d .. %d",
          int_at(&r, 0, "id"), int_at(&r, 5, "id"));
    tresult_free(&r);
    query("SELECT id FROM va WHERE age = 21 AND id < 5", &r);
    CHECK(r.nrows == 2, "a clustering slice of the view: %u", r.nrows);
    tresult_free(&r);

    /* a changed row moves */
    ok("UPDATE users SET email = 'z@x' WHERE id = 1");
    ok("DELETE FROM users WHERE id = 4");
    CHECK_THAT(qr_wait_indexes(db, 10000) == QR_OK);
    query("SELECT id FROM by_email WHERE email = 'z@x'", &r);
    CHECK(r.nrows == 1 && int_at(&r, 0, "id") == 1, "moved to z@x");
    tresult_free(&r);
    query("SELECT id FROM by_email WHERE email = 'b@x'", &r);
    CHECK(r.nrows == 2, "left b@x, and deleted: %u", r.nrows);
    tresult_free(&r);
    query("SELECT * FROM by_email", &r);
    CHECK(r.nrows == 11, "the whole view: %u", r.nrows);
    tresult_free(&r);

    /* the schema tables */
    CHECK_THAT(tquery(db, NULL,
                      "SELECT view_name, base_table_name, where_clause, include_all_columns FROM "
                      "system_schema.views WHERE keyspace_name = 'ks'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 2, "two views: %u", r.nrows);
    char t[128];
    CHECK_STR(ttext(&r, 0, "base_table_name", t, sizeof t), "users");
    CHECK_STR(ttext(&r, 0, "where_clause", t, sizeof t), "email IS NOT NULL AND id IS NOT NULL");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "SELECT column_name, kind FROM system_schema.columns WHERE keyspace_name = "
                      "'ks' AND table_name = 'va'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 3, "the view's columns: %u", r.nrows);
    tresult_free(&r);

    /* refusals */
    fails("CREATE MATERIALIZED VIEW v1 AS SELECT * FROM users WHERE email IS NOT NULL PRIMARY KEY "
          "(email)",
          "Cannot create Materialized View v1 without primary key columns from base users (id)");
    fails(
        "CREATE MATERIALIZED VIEW v2 AS SELECT * FROM users WHERE email IS NOT NULL AND id IS NOT "
        "NULL AND age IS NOT NULL PRIMARY KEY (email, age, id)",
        "Cannot include more than one non-primary key column in materialized view primary key "
        "(got email, age)");
    fails("CREATE MATERIALIZED VIEW v3 AS SELECT * FROM users WHERE id IS NOT NULL PRIMARY KEY "
          "(email, id)",
          "Primary key column 'email' is required to be filtered by 'IS NOT NULL'");
    fails("INSERT INTO by_email (email, id) VALUES ('q', 1)",
          "Cannot directly modify a materialized view");
    fails("DROP TABLE users",
          "Cannot drop table when materialized views still depend on it (ks.{by_email})");

    /* TRUNCATE empties the base and its views, which stay */
    ok("TRUNCATE users");
    ok("INSERT INTO users (id, email, age) VALUES (70, 'n@x', 30)");
    CHECK_THAT(qr_wait_indexes(db, 10000) == QR_OK);
    query("SELECT id FROM by_email", &r);
    CHECK(r.nrows == 1 && int_at(&r, 0, "id") == 70, "after TRUNCATE: %u rows", r.nrows);
    tresult_free(&r);

    ok("DROP MATERIALIZED VIEW by_email");
    ok("DROP MATERIALIZED VIEW va");
    fails("SELECT * FROM va", "table va does not exist");
    ok("DROP TABLE users");
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_view");
}
