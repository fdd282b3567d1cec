/* test_cqlexec_index.c — secondary indexes through qr_cql_call: CREATE INDEX as a global
 * index of the engine table (built in the background over the rows there, then kept up
 * asynchronously by the propagation machinery), SELECT by the indexed column without
 * ALLOW FILTERING, a changed or deleted row leaving the index's answer, paging through
 * index reads, system_schema.indexes, DROP INDEX, and Cassandra's refusals; an index
 * on a clustering column read right after each write, which it answers (an index read
 * lets propagation catch up with the writes before it). */
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

/* Rows of a SELECT, waiting (a few seconds at most) while the index is being built. */
static int count(const char *text)
{
    for (int tries = 0; tries < 100; tries++) {
        tresult r;
        int rc = tquery(db, "ks", text, NULL, &r);
        int n = (int)r.nrows;
        int building = rc != QR_OK && r.err_code == CQL_ERR_READ_FAILURE;
        if (rc != QR_OK && !building) CHECK(0, "%s: %s", text, r.msg);
        tresult_free(&r);
        if (!building) return rc == QR_OK ? n : -1;
        usleep(50000);
    }
    CHECK(0, "%s: the index was never built", text);
    return -1;
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_index_XXXXXX";
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
    ok("CREATE TABLE users (id int, at int, email text, age int, ok boolean, PRIMARY KEY (id, "
       "at))");
    for (int i = 0; i < 30; i++) {
        char q[160];
        snprintf(q, sizeof q, "INSERT INTO users (id, at, email, age) VALUES (%d, %d, '%s', %d)",
                 i % 10, i, i % 3 ? "a@x" : "b@x", 20 + i % 5);
        ok(q);
    }
    CHECK_THAT(tquery(db, "ks", "SELECT * FROM users WHERE email = 'b@x'", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "no index yet: %s", r.msg);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "CREATE INDEX ON users (email)", NULL, &r) == QR_OK);
    CHECK(r.kind == CQL_RESULT_SCHEMA_CHANGE, "%s", r.msg);
    CHECK_STR(r.change, "UPDATED");
    CHECK_STR(r.target, "TABLE");
    tresult_free(&r);
    CHECK(count("SELECT * FROM users WHERE email = 'b@x'") == 10, "the rows there before");
    ok("CREATE INDEX ag ON users (age)");
    CHECK(count("SELECT id FROM users WHERE age = 22") == 6, "by age");
    CHECK(count("SELECT id FROM users WHERE age = 22 AND email = 'a@x' ALLOW FILTERING") == 4,
          "an index and a filter");
    CHECK_THAT(tquery(db, "ks", "SELECT id FROM users WHERE age = 22 AND email = 'a@x'", NULL,
                      &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "a filter beside the index needs ALLOW FILTERING");
    tresult_free(&r);

    /* new and changed rows, once propagated */
    ok("INSERT INTO users (id, at, email, age) VALUES (50, 1, 'c@x', 99)");
    ok("UPDATE users SET email = 'c@x' WHERE id = 0 AND at = 0");
    ok("DELETE FROM users WHERE id = 3 AND at = 3");
    CHECK_THAT(qr_wait_indexes(db, 10000) == QR_OK);
    CHECK(count("SELECT id, at FROM users WHERE email = 'c@x'") == 2, "new and changed rows");
    CHECK(count("SELECT * FROM users WHERE email = 'b@x'") == 8, "changed and deleted rows gone");

    /* pages through an index */
    uint8_t state[512];
    int32_t state_len = -1;
    int total = 0, pages = 0;
    do {
        tparams p = {.page_size = 3,
                     .paging_state = state_len >= 0 ? state : NULL,
                     .paging_len = state_len >= 0 ? (size_t)state_len : 0};
        CHECK_THAT(tquery(db, "ks", "SELECT id FROM users WHERE email = 'a@x'", &p, &r) == QR_OK);
        total += (int)r.nrows;
        state_len = r.paging_len;
        if (state_len > 0) memcpy(state, r.paging, (size_t)state_len);
        pages++;
        tresult_free(&r);
    } while (state_len > 0 && pages < 50);
    CHECK(total == 20, "20 rows over pages of 3: %d in %d pages", total, pages);

    CHECK_THAT(tquery(db, NULL,
                      "SELECT index_name, options FROM system_schema.indexes WHERE keyspace_name "
                      "= 'ks' AND table_name = 'users'",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 2, "two indexes listed: %u", r.nrows);
    char t[64];
    CHECK_STR(ttext(&r, 0, "index_name", t, sizeof t), "users_email_idx");
    tresult_free(&r);

    /* refusals */
    CHECK_THAT(tquery(db, "ks", "CREATE INDEX ag ON users (email)", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "Index 'ag' already exists");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "CREATE INDEX IF NOT EXISTS ag ON users (email)", NULL, &r) ==
               QR_OK);
    CHECK(r.kind == CQL_RESULT_VOID, "IF NOT EXISTS");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "CREATE INDEX ON users (nope)", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "Undefined column name nope in table ks.users");
    tresult_free(&r);
    /* a boolean has no engine key type: it is keyed by its value's bytes */
    ok("CREATE INDEX ON users (ok)");
    ok("DROP INDEX users_ok_idx");

    ok("DROP INDEX ag");
    CHECK_THAT(tquery(db, "ks", "DROP INDEX ag", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "Index 'ks.ag' doesn't exist");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT id FROM users WHERE age = 22", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "dropped: filtering again");
    tresult_free(&r);
    /* TRUNCATE keeps the index */
    ok("TRUNCATE users");
    ok("INSERT INTO users (id, at, email) VALUES (1, 1, 'after@x')");
    CHECK_THAT(qr_wait_indexes(db, 10000) == QR_OK);
    CHECK(count("SELECT id FROM users WHERE email = 'after@x'") == 1, "the index after TRUNCATE");
    CHECK(count("SELECT id FROM users WHERE email = 'a@x'") == 0, "emptied");

    /* the index on the second clustering column, read right after each write */
    ok("CREATE INDEX ON users (at)");
    CHECK(count("SELECT id FROM users WHERE at = 1") == 1, "the clustering column's index");
    int missed = 0;
    for (int i = 0; i < 200; i++) {
        char q[160];
        snprintf(q, sizeof q, "INSERT INTO users (id, at, email) VALUES (%d, %d, 'n@x')", i % 7,
                 1000 + i);
        ok(q);
        snprintf(q, sizeof q, "SELECT id FROM users WHERE at = %d", 1000 + i);
        missed += count(q) != 1;
    }
    CHECK(missed == 0, "%d of 200 index reads missed the write before them", missed);

    char *report = NULL;
    CHECK(qr_verify(db, "ks.users", &report) == QR_OK, "quarry verify: %s", report ? report : "");
    free(report);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_index");
}
