/* test_cqlexec_badinput.c — what qr_cql_call does with bad input: bodies cut short, with
 * lengths past their end or random bytes, for every opcode; statements cut at every byte;
 * bound values of every wrong length for each column type; paging states that are not
 * ours. Every call answers a RESULT or a readable ERROR with the protocol's code, nothing
 * crashes, and the database answers normally afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqlexec_helper.h"
#include "quarry.h"

#include "check.h"

static qr_db *db;
static unsigned long seed = 12345;

static unsigned rnd(void)
{
    seed = seed * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(seed >> 33);
}

/* One call whose answer must be a RESULT or an ERROR with a known code. */
static void answered(uint8_t opcode, const void *body, size_t len, const char *what)
{
    qr_cql_request req = {
        .version = 4, .opcode = opcode, .body = body, .len = len, .keyspace = "ks"};
    qr_cql_response resp;
    int rc = qr_cql_call(db, &req, &resp);
    if (rc == QR_OK) {
        CHECK(resp.opcode == CQL_OP_RESULT && resp.len >= 4, "%s: a RESULT", what);
    } else {
        CHECK(resp.opcode == CQL_OP_ERROR && resp.len >= 6, "%s: an ERROR body", what);
        if (resp.len >= 6) {
            int32_t code = (int32_t)be32_read(resp.body);
            CHECK(code == CQL_ERR_PROTOCOL || code == CQL_ERR_SYNTAX || code == CQL_ERR_INVALID ||
                      code == CQL_ERR_UNPREPARED || code == CQL_ERR_SERVER ||
                      code == CQL_ERR_ALREADY_EXISTS || code == CQL_ERR_UNAUTHORIZED ||
                      code == CQL_ERR_CONFIG,
                  "%s: error code %x", what, code);
        }
    }
    qr_cql_response_free(&resp);
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_badinput_XXXXXX";
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
    tquery(db, "ks",
           "CREATE TABLE t (k int, c text, v bigint, d double, b blob, u uuid, s set<int>, m "
           "map<text, int>, PRIMARY KEY (k, c))",
           NULL, &r);
    tresult_free(&r);

    /* good bodies cut at every length, and with random bytes */
    const uint8_t ops[] = {CQL_OP_QUERY, CQL_OP_PREPARE, CQL_OP_EXECUTE, CQL_OP_BATCH};
    buf b;
    buf_init(&b, 0);
    for (size_t o = 0; o < sizeof ops; o++) {
        buf_reset(&b);
        if (ops[o] == CQL_OP_QUERY || ops[o] == CQL_OP_PREPARE) {
            uint8_t four[4];
            cql_int_encode(4, four);
            tv v = {four, 4, NULL};
            tparams p = {.values = &v, .n = 1, .page_size = 10};
            if (ops[o] == CQL_OP_QUERY)
                body_query(&b, 4, "SELECT * FROM t WHERE k = ?", &p);
            else
                body_prepare(&b, 4, "SELECT * FROM t WHERE k = ?");
        } else if (ops[o] == CQL_OP_EXECUTE) {
            uint8_t id[16] = {0};
            body_execute(&b, 4, id, 16, NULL);
        } else {
            tbatch_stmt st[] = {{.text = "INSERT INTO t (k, c) VALUES (1, 'x')"}};
            body_batch(&b, 4, 0, st, 1);
        }
        for (size_t cut = 0; cut <= b.len; cut++)
            answered(ops[o], b.data, cut, "a body cut short");
        for (int i = 0; i < 300; i++) {
            uint8_t junk[64];
            size_t n = rnd() % sizeof junk;
            for (size_t k = 0; k < n; k++)
                junk[k] = (uint8_t)rnd();
            answered(ops[o], junk, n, "random bytes");
        }
        /* a length past the end */
        uint8_t longer[8] = {0x7f, 0xff, 0xff, 0xff, 'S', 'E', 'L', 0};
        answered(ops[o], longer, sizeof longer, "a length past the end");
    }

    /* statements cut at every byte */
    const char *stmts[] = {
        "INSERT INTO t (k, c, v, s, m) VALUES (1, 'a', 2, {1, 2}, {'x': 1}) USING TTL 10",
        "UPDATE t SET v = 3, s = s + {3}, m['y'] = 2 WHERE k = 1 AND c = 'a' IF v = 2",
        "SELECT k, c, writetime(v), ttl(v), token(k) FROM t WHERE k IN (1, 2) AND c > 'a' "
        "ORDER BY c DESC LIMIT 5",
        "DELETE m['x'] FROM t WHERE k = 1 AND c = 'a'",
        "BEGIN BATCH INSERT INTO t (k, c) VALUES (2, 'b'); DELETE FROM t WHERE k = 2; APPLY BATCH",
        "CREATE TABLE x (a int, b text, PRIMARY KEY ((a), b)) WITH CLUSTERING ORDER BY (b DESC)",
    };
    for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
        size_t n = strlen(stmts[i]);
        for (size_t cut = 0; cut <= n; cut++) {
            char text[512];
            snprintf(text, sizeof text, "%.*s", (int)cut, stmts[i]);
            buf_reset(&b);
            body_query(&b, 4, text, NULL);
            answered(CQL_OP_QUERY, b.data, b.len, text);
        }
    }
    tquery(db, "ks", "DROP TABLE IF EXISTS x", NULL, &r);
    tresult_free(&r);

    /* bound values of every length up to 20 bytes for each column */
    const char *cols[] = {"v", "d", "b", "u", "s", "m", "c"};
    for (size_t ci = 0; ci < sizeof cols / sizeof cols[0]; ci++) {
        char text[128];
        snprintf(text, sizeof text, "INSERT INTO t (k, c, %s) VALUES (7, 'z', ?)",
                 strcmp(cols[ci], "c") == 0 ? "v" : cols[ci]);
        for (int32_t len = -2; len <= 20; len++) {
            uint8_t bytes[20];
            for (int k = 0; k < 20; k++)
                bytes[k] = (uint8_t)rnd();
            tv v = {bytes, len, NULL};
            tparams p = {.values = &v, .n = 1};
            buf_reset(&b);
            body_query(&b, 4, text, &p);
            answered(CQL_OP_QUERY, b.data, b.len, text);
        }
    }

    /* paging states that are not ours */
    for (int i = 0; i < 200; i++) {
        uint8_t ps[48];
        size_t n = rnd() % sizeof ps;
        for (size_t k = 0; k < n; k++)
            ps[k] = (uint8_t)rnd();
        if (n && i % 2) ps[0] = 1; /* our version byte, then junk */
        tparams p = {.page_size = 2, .paging_state = ps, .paging_len = n};
        buf_reset(&b);
        body_query(&b, 4, i % 3 ? "SELECT * FROM t" : "SELECT * FROM t WHERE k = 1", &p);
        answered(CQL_OP_QUERY, b.data, b.len, "a foreign paging state");
    }
    buf_free(&b);

    /* and the database still answers */
    CHECK_THAT(tquery(db, "ks", "INSERT INTO t (k, c, v) VALUES (100, 'ok', 1)", NULL, &r) ==
               QR_OK);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT v FROM t WHERE k = 100", NULL, &r) == QR_OK);
    CHECK(r.nrows == 1, "a row after all that: %u", r.nrows);
    tresult_free(&r);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_badinput");
}
