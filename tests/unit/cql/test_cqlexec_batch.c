/* test_cqlexec_batch.c — BATCH through qr_cql_call: logged and unlogged batches of CQL
 * text and prepared statements with their values, across tables, applied in one item
 * transaction (a statement that fails leaves nothing written); counter batches and
 * their refusals; a conditional batch on one partition answered with [applied]; and
 * BEGIN BATCH ... APPLY BATCH sent as a QUERY. */
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

static uint32_t rows(const char *text)
{
    tresult r;
    CHECK(tquery(db, "ks", text, NULL, &r) == QR_OK, "%s: %s", text, r.msg);
    uint32_t n = r.nrows;
    tresult_free(&r);
    return n;
}

static int batch(uint8_t type, const tbatch_stmt *s, uint16_t n, tresult *r)
{
    buf b;
    buf_init(&b, 0);
    body_batch(&b, 4, type, s, n);
    int rc = tcall(db, 4, CQL_OP_BATCH, &b, "ks", r);
    buf_free(&b);
    return rc;
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_batch_XXXXXX";
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
    ok("CREATE TABLE users (id int PRIMARY KEY, name text)");
    ok("CREATE TABLE by_name (name text, id int, PRIMARY KEY (name, id))");
    ok("CREATE TABLE hits (page text PRIMARY KEY, n counter)");

    /* a prepared statement in the batch */
    buf b;
    buf_init(&b, 0);
    body_prepare(&b, 4, "INSERT INTO by_name (name, id) VALUES (?, ?)");
    CHECK_THAT(tcall(db, 4, CQL_OP_PREPARE, &b, "ks", &r) == QR_OK);
    uint8_t id[16];
    memcpy(id, r.id, 16);
    tresult_free(&r);
    buf_free(&b);

    uint8_t one[4], two[4];
    cql_int_encode(1, one);
    cql_int_encode(2, two);
    tv v1[2] = {{"ann", 3, NULL}, {one, 4, NULL}};
    tv v2[1] = {{two, 4, NULL}};
    tbatch_stmt logged[] = {
        {.text = "INSERT INTO users (id, name) VALUES (1, 'ann')"},
        {.id = id, .id_len = 16, .values = v1, .n = 2},
        {.text = "INSERT INTO users (id, name) VALUES (?, 'bea')", .values = v2, .n = 1},
    };
    CHECK_THAT(batch(CQL_BATCH_LOGGED, logged, 3, &r) == QR_OK);
    CHECK(r.ok && r.kind == CQL_RESULT_VOID, "logged batch: %s", r.msg);
    tresult_free(&r);
    CHECK_THAT(rows("SELECT * FROM users") == 2);
    CHECK_THAT(rows("SELECT * FROM by_name WHERE name = 'ann'") == 1);

    /* a failing statement leaves nothing written */
    tbatch_stmt bad[] = {
        {.text = "INSERT INTO users (id, name) VALUES (3, 'cy')"},
        {.text = "INSERT INTO users (id, name) VALUES ('x', 'dee')"},
    };
    CHECK_THAT(batch(CQL_BATCH_UNLOGGED, bad, 2, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "bad value: %x %s", r.err_code, r.msg);
    tresult_free(&r);
    CHECK(rows("SELECT * FROM users WHERE id = 3") == 0, "the first statement did not apply");
    tbatch_stmt sel[] = {{.text = "SELECT * FROM users"}};
    CHECK_THAT(batch(CQL_BATCH_LOGGED, sel, 1, &r) == QR_ERR);
    CHECK_STR(r.msg, "Invalid statement in batch: only UPDATE, INSERT and DELETE statements are "
                     "allowed.");
    tresult_free(&r);

    /* counters */
    tbatch_stmt counts[] = {
        {.text = "UPDATE hits SET n = n + 2 WHERE page = 'a'"},
        {.text = "UPDATE hits SET n = n + 3 WHERE page = 'a'"},
        {.text = "UPDATE hits SET n = n + 1 WHERE page = 'b'"},
    };
    CHECK_THAT(batch(CQL_BATCH_COUNTER, counts, 3, &r) == QR_OK);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT n FROM hits WHERE page = 'a'", NULL, &r) == QR_OK);
    int64_t n = 0;
    cql_value nv = tval(&r, 0, "n");
    if (nv.len == 8) cql_bigint_decode(nv.p, 8, &n);
    CHECK(n == 5, "counter batch: %lld", (long long)n);
    tresult_free(&r);
    CHECK_THAT(batch(CQL_BATCH_LOGGED, counts, 1, &r) == QR_ERR);
    CHECK_STR(r.msg, "Cannot include a counter statement in a logged batch");
    tresult_free(&r);
    CHECK_THAT(batch(CQL_BATCH_COUNTER, logged, 1, &r) == QR_ERR);
    CHECK_STR(r.msg, "Cannot include non-counter statement in a counter batch");
    tresult_free(&r);
    /* an unlogged batch takes counters, but not beside other writes */
    CHECK_THAT(batch(CQL_BATCH_UNLOGGED, counts, 3, &r) == QR_OK);
    tresult_free(&r);
    tbatch_stmt mixed[] = {counts[0], logged[0]};
    CHECK_THAT(batch(CQL_BATCH_UNLOGGED, mixed, 2, &r) == QR_ERR);
    CHECK_STR(r.msg, "Counter and non-counter mutations cannot exist in the same batch");
    tresult_free(&r);

    /* conditions on one partition */
    ok("CREATE TABLE seats (show text, seat int, who text, PRIMARY KEY (show, seat))");
    tbatch_stmt lwt[] = {
        {.text = "INSERT INTO seats (show, seat, who) VALUES ('s', 1, 'ann') IF NOT EXISTS"},
        {.text = "INSERT INTO seats (show, seat, who) VALUES ('s', 2, 'ann')"},
    };
    CHECK_THAT(batch(CQL_BATCH_LOGGED, lwt, 2, &r) == QR_OK);
    CHECK(r.kind == CQL_RESULT_ROWS && tval(&r, 0, "[applied]").len == 1 &&
              tval(&r, 0, "[applied]").p[0] == 1,
          "applied: %s", r.msg);
    tresult_free(&r);
    tbatch_stmt lwt2[] = {
        {.text = "INSERT INTO seats (show, seat, who) VALUES ('s', 1, 'bob') IF NOT EXISTS"},
        {.text = "INSERT INTO seats (show, seat, who) VALUES ('s', 3, 'bob')"},
    };
    CHECK_THAT(batch(CQL_BATCH_LOGGED, lwt2, 2, &r) == QR_OK);
    CHECK(tval(&r, 0, "[applied]").len == 1 && tval(&r, 0, "[applied]").p[0] == 0, "not applied");
    tresult_free(&r);
    CHECK(rows("SELECT * FROM seats WHERE show = 's'") == 2, "the whole batch stayed out");
    tbatch_stmt lwt3[] = {
        {.text = "INSERT INTO seats (show, seat, who) VALUES ('s', 9, 'bob') IF NOT EXISTS"},
        {.text = "INSERT INTO seats (show, seat, who) VALUES ('t', 1, 'bob')"},
    };
    CHECK_THAT(batch(CQL_BATCH_LOGGED, lwt3, 2, &r) == QR_ERR);
    CHECK_STR(r.msg, "Batch with conditions cannot span multiple tables or partitions");
    tresult_free(&r);

    /* BEGIN BATCH as a QUERY, its markers numbered across the batch */
    uint8_t five[4];
    cql_int_encode(5, five);
    tv qv[2] = {{five, 4, NULL}, {"eve", 3, NULL}};
    tparams qp = {.values = qv, .n = 2};
    CHECK_THAT(tquery(db, "ks",
                      "BEGIN BATCH INSERT INTO users (id, name) VALUES (?, 'x'); INSERT INTO "
                      "by_name (name, id) VALUES (?, 5); APPLY BATCH",
                      &qp, &r) == QR_OK);
    CHECK(r.ok, "BEGIN BATCH: %s", r.msg);
    tresult_free(&r);
    CHECK_THAT(rows("SELECT * FROM users WHERE id = 5") == 1);
    CHECK_THAT(rows("SELECT * FROM by_name WHERE name = 'eve'") == 1);

    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_batch");
}
