/* test_cqlexec_aggregate.c — aggregates through qr_cql_call: COUNT, MIN, MAX, SUM and AVG
 * of one partition and of the table (named and typed as Cassandra names and types them),
 * no row answering COUNT 0 and null, GROUP BY on the partition key and on a clustering
 * prefix (a row per group, plain columns from the group's first row), LIMIT counting
 * groups, and GROUP BY on a column out of the key's order refused. */
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

static int64_t num(const tresult *r, uint32_t row, const char *col)
{
    cql_value v = tval(r, row, col);
    int64_t x = -999;
    int32_t i;
    if (v.len == 8) cql_bigint_decode(v.p, 8, &x);
    if (v.len == 4 && cql_int_decode(v.p, 4, &i) == 0) x = i;
    return x;
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_aggregate_XXXXXX";
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
    ok("CREATE TABLE t (p int, c int, d int, v int, PRIMARY KEY (p, c, d))");
    for (int p = 1; p <= 3; p++)
        for (int c = 0; c < 4; c++) {
            char q[128];
            snprintf(q, sizeof q, "INSERT INTO t (p, c, d, v) VALUES (%d, %d, %d, %d)", p, c / 2, c,
                     p * 10 + c);
            ok(q);
        }
    CHECK_THAT(tquery(db, "ks",
                      "SELECT COUNT(*), MIN(v), MAX(v), SUM(v), AVG(v) FROM t WHERE p = 2", NULL,
                      &r) == QR_OK);
    CHECK(r.ok && r.nrows == 1 && r.ncols == 5, "%s", r.msg);
    CHECK_STR(r.cols[0], "count");
    CHECK_STR(r.cols[1], "system.min(v)");
    CHECK_STR(r.cols[4], "system.avg(v)");
    CHECK_THAT(r.col_types[0] == CQL_TYPE_BIGINT && r.col_types[3] == CQL_TYPE_INT);
    CHECK(num(&r, 0, "count") == 4, "count %lld", (long long)num(&r, 0, "count"));
    CHECK(num(&r, 0, "system.min(v)") == 20 && num(&r, 0, "system.max(v)") == 23, "min max");
    CHECK(num(&r, 0, "system.sum(v)") == 86 && num(&r, 0, "system.avg(v)") == 21,
          "sum %lld avg %lld", (long long)num(&r, 0, "system.sum(v)"),
          (long long)num(&r, 0, "system.avg(v)"));
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT COUNT(*), MAX(v) FROM t WHERE p = 9", NULL, &r) == QR_OK);
    CHECK(r.nrows == 1 && num(&r, 0, "count") == 0 && tval(&r, 0, "system.max(v)").len < 0,
          "no row: COUNT 0, MAX null");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT COUNT(*) FROM t", NULL, &r) == QR_OK);
    CHECK(num(&r, 0, "count") == 12, "every row: %lld", (long long)num(&r, 0, "count"));
    tresult_free(&r);

    /* GROUP BY the partition key */
    CHECK_THAT(tquery(db, "ks", "SELECT p, COUNT(*), MAX(v) AS top FROM t GROUP BY p", NULL, &r) ==
               QR_OK);
    CHECK(r.nrows == 3, "a row per partition: %u %s", r.nrows, r.msg);
    int64_t total = 0;
    for (uint32_t i = 0; i < r.nrows; i++) {
        total += num(&r, i, "count");
        CHECK(num(&r, i, "top") == num(&r, i, "p") * 10 + 3, "top of %lld",
              (long long)num(&r, i, "p"));
    }
    CHECK(total == 12, "the groups' counts add up: %lld", (long long)total);
    tresult_free(&r);
    /* GROUP BY a clustering prefix in one partition */
    CHECK_THAT(tquery(db, "ks", "SELECT c, d, SUM(v) FROM t WHERE p = 1 GROUP BY p, c", NULL, &r) ==
               QR_OK);
    CHECK(r.nrows == 2, "two groups: %u %s", r.nrows, r.msg);
    CHECK(num(&r, 0, "c") == 0 && num(&r, 0, "d") == 0 && num(&r, 0, "system.sum(v)") == 21,
          "first group: c %lld d %lld sum %lld", (long long)num(&r, 0, "c"),
          (long long)num(&r, 0, "d"), (long long)num(&r, 0, "system.sum(v)"));
    CHECK(num(&r, 1, "c") == 1 && num(&r, 1, "system.sum(v)") == 25, "second group");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT p, COUNT(*) FROM t GROUP BY p LIMIT 2", NULL, &r) == QR_OK);
    CHECK(r.nrows == 2, "LIMIT counts groups: %u", r.nrows);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT COUNT(*) FROM t GROUP BY c", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "Group by currently only support groups of columns following their declared "
                     "order in the PRIMARY KEY");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT SUM(p) FROM t WHERE p = 1", NULL, &r) == QR_OK);
    CHECK(num(&r, 0, "system.sum(p)") == 4, "sum of a key column");
    tresult_free(&r);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_aggregate");
}
