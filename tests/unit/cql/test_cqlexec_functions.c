/* test_cqlexec_functions.c — functions in statements through qr_cql_call: now(),
 * toTimestamp() and uuid() as values, native functions, CAST and token() as selectors
 * (with Cassandra's column names), token() of the partition key equal to Murmur3's
 * (the Python driver's value for 'a'), and token() ranges in WHERE. */
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

static int64_t big(const tresult *r, uint32_t row, const char *col)
{
    cql_value v = tval(r, row, col);
    int64_t x = 0;
    if (v.len == 8) cql_bigint_decode(v.p, 8, &x);
    return x;
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_functions_XXXXXX";
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
    ok("CREATE TABLE ev (k text, id timeuuid, at timestamp, u uuid, PRIMARY KEY (k, id))");
    ok("INSERT INTO ev (k, id, at, u) VALUES ('a', now(), toTimestamp(now()), uuid())");
    ok("INSERT INTO ev (k, id, at) VALUES ('b', now(), '2024-01-31 12:00:00+0000')");

    CHECK_THAT(
        tquery(db, "ks",
               "SELECT k, token(k), toTimestamp(id), CAST(at AS text), u FROM ev WHERE k = 'b'",
               NULL, &r) == QR_OK);
    CHECK(r.ok && r.nrows == 1 && r.ncols == 5, "%s", r.msg);
    CHECK_STR(r.cols[1], "system.token(k)");
    CHECK_STR(r.cols[2], "system.totimestamp(id)");
    CHECK_STR(r.cols[3], "cast(at as text)");
    CHECK_THAT(r.col_types[1] == CQL_TYPE_BIGINT && r.col_types[2] == CQL_TYPE_TIMESTAMP &&
               r.col_types[3] == CQL_TYPE_VARCHAR);
    char t[64];
    CHECK_STR(ttext(&r, 0, "cast(at as text)", t, sizeof t), "2024-01-31T12:00:00.000Z");
    CHECK_THAT(tval(&r, 0, "u").len < 0);
    int64_t tok_b = big(&r, 0, "system.token(k)");
    CHECK(tok_b == 8833996863197925870LL, "token('b') = %lld", (long long)tok_b);
    tresult_free(&r);

    CHECK_THAT(tquery(db, "ks", "SELECT k, token(k), u, at FROM ev WHERE k = 'a'", NULL, &r) ==
               QR_OK);
    CHECK(big(&r, 0, "system.token(k)") == -8839064797231613815LL, "token('a')");
    CHECK_THAT(tval(&r, 0, "u").len == 16);
    int64_t at = big(&r, 0, "at");
    CHECK(at > 1700000000000LL, "toTimestamp(now()) %lld", (long long)at);
    tresult_free(&r);

    /* token ranges */
    CHECK_THAT(tquery(db, "ks", "SELECT k FROM ev WHERE token(k) > 0", NULL, &r) == QR_OK);
    CHECK(r.nrows == 1, "token > 0: %u", r.nrows);
    CHECK_STR(ttext(&r, 0, "k", t, sizeof t), "b");
    tresult_free(&r);
    uint8_t lo[8], hi[8];
    cql_bigint_encode(-8839064797231613815LL, lo);
    cql_bigint_encode(-8839064797231613815LL, hi);
    tv v[2] = {{lo, 8, NULL}, {hi, 8, NULL}};
    tparams p = {.values = v, .n = 2};
    CHECK_THAT(tquery(db, "ks", "SELECT k FROM ev WHERE token(k) >= ? AND token(k) <= ?", &p, &r) ==
               QR_OK);
    CHECK(r.nrows == 1, "one token: %u %s", r.nrows, r.msg);
    tresult_free(&r);
    /* a token restriction beside the partition key filters the partition named */
    CHECK_THAT(tquery(db, "ks", "SELECT k FROM ev WHERE token(k) = token('a') AND k = 'a'", NULL,
                      &r) == QR_OK);
    CHECK(r.nrows == 1, "token and = agreeing: %u %s", r.nrows, r.msg);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT k FROM ev WHERE token(k) > token('a') AND k = 'a'", NULL,
                      &r) == QR_OK);
    CHECK(r.nrows == 0, "token and = disagreeing: %u %s", r.nrows, r.msg);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT nosuchfn(k) FROM ev", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "unknown function: %s", r.msg);
    tresult_free(&r);

    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_functions");
}
