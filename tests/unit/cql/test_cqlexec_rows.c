/* test_cqlexec_rows.c — rows through qr_cql_call: INSERT, UPDATE and DELETE (rows,
 * clustering ranges, columns, partitions), SELECT (partition = and IN, clustering prefix
 * and slices, multi-column slices, ORDER BY both ways, LIMIT, PER PARTITION LIMIT,
 * DISTINCT, aliases, writetime(), ttl(), COUNT), static columns, composite partition
 * keys, USING TTL and TIMESTAMP with the last write winning per cell, counters, set, list
 * and map operations, conditions answered with [applied], bind markers (mistyped values
 * refused), ALLOW FILTERING refused and allowed, paging over thousands of rows, and rows
 * after qr_close and qr_open. */
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

static void fails(const char *text, uint16_t code, const char *msg)
{
    tresult r;
    CHECK(tquery(db, "ks", text, NULL, &r) == QR_ERR, "%s should fail", text);
    CHECK(r.err_code == code, "%s: code %x, want %x (%s)", text, r.err_code, code, r.msg);
    if (msg) CHECK_STR(r.msg, msg);
    tresult_free(&r);
}

static int32_t int_at(const tresult *r, uint32_t row, const char *col)
{
    cql_value v = tval(r, row, col);
    int32_t x = -999;
    if (v.len == 4) cql_int_decode(v.p, 4, &x);
    return x;
}

static int64_t big_at(const tresult *r, uint32_t row, const char *col)
{
    cql_value v = tval(r, row, col);
    int64_t x = -999;
    if (v.len == 8) cql_bigint_decode(v.p, 8, &x);
    return x;
}

/* Runs a SELECT and checks the int column col of its rows, in order, against want
 * (terminated by -1). */
static void ints(const char *text, const char *col, const int32_t *want)
{
    tresult r;
    CHECK(tquery(db, "ks", text, NULL, &r) == QR_OK, "%s: %s", text, r.msg);
    size_t n = 0;
    while (want[n] != -1)
        n++;
    CHECK(r.nrows == n, "%s: %u rows, want %zu", text, r.nrows, n);
    for (uint32_t i = 0; i < r.nrows && i < n; i++)
        CHECK(int_at(&r, i, col) == want[i], "%s: row %u %s = %d, want %d", text, i, col,
              int_at(&r, i, col), want[i]);
    tresult_free(&r);
}

static void test_basics(void)
{
    ok("CREATE TABLE msgs (u text, at int, body text, n text static, PRIMARY KEY (u, at)) "
       "WITH CLUSTERING ORDER BY (at DESC)");
    for (int i = 0; i < 5; i++) {
        char q[128];
        snprintf(q, sizeof q, "INSERT INTO msgs (u, at, body) VALUES ('bob', %d, 'hello %d')", i,
                 i);
        ok(q);
    }
    ok("INSERT INTO msgs (u, at, body, n) VALUES ('amy', 1, 'hi', 'Amy')");
    ints("SELECT at FROM msgs WHERE u = 'bob'", "at", (int32_t[]){4, 3, 2, 1, 0, -1});
    ints("SELECT at FROM msgs WHERE u = 'bob' ORDER BY at ASC", "at",
         (int32_t[]){0, 1, 2, 3, 4, -1});
    ints("SELECT at FROM msgs WHERE u = 'bob' AND at > 1 AND at <= 3", "at", (int32_t[]){3, 2, -1});
    ints("SELECT at FROM msgs WHERE u = 'bob' AND at >= 3 ORDER BY at ASC", "at",
         (int32_t[]){3, 4, -1});
    ints("SELECT at FROM msgs WHERE u = 'bob' AND at IN (0, 4, 2)", "at", (int32_t[]){4, 2, 0, -1});
    ints("SELECT at FROM msgs WHERE u = 'bob' LIMIT 2", "at", (int32_t[]){4, 3, -1});
    /* the partitions of an IN come in their keys' order, not the order written */
    ints("SELECT at FROM msgs WHERE u IN ('bob', 'amy') PER PARTITION LIMIT 1", "at",
         (int32_t[]){1, 4, -1});

    tresult r;
    CHECK_THAT(tquery(db, "ks", "SELECT * FROM msgs WHERE u = 'amy'", NULL, &r) == QR_OK);
    CHECK(r.nrows == 1 && r.ncols == 4, "%u rows %u cols", r.nrows, r.ncols);
    CHECK_STR(r.cols[2], "n"); /* static columns before regular ones */
    char t[64];
    CHECK_STR(ttext(&r, 0, "n", t, sizeof t), "Amy");
    CHECK_STR(ttext(&r, 0, "body", t, sizeof t), "hi");
    tresult_free(&r);
    /* a static column written alone */
    ok("UPDATE msgs SET n = 'Bob' WHERE u = 'bob'");
    CHECK_THAT(tquery(db, "ks", "SELECT n, body AS b FROM msgs WHERE u = 'bob' AND at = 3", NULL,
                      &r) == QR_OK);
    CHECK_STR(ttext(&r, 0, "n", t, sizeof t), "Bob");
    CHECK_STR(r.cols[1], "b");
    CHECK_STR(ttext(&r, 0, "b", t, sizeof t), "hello 3");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT DISTINCT u, n FROM msgs", NULL, &r) == QR_OK);
    CHECK(r.nrows == 2, "DISTINCT: %u rows %s", r.nrows, r.msg);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT COUNT(*) FROM msgs WHERE u = 'bob'", NULL, &r) == QR_OK);
    CHECK(r.nrows == 1 && big_at(&r, 0, "count") == 5, "COUNT(*): %lld",
          (long long)big_at(&r, 0, "count"));
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT COUNT(*) FROM msgs", NULL, &r) == QR_OK);
    CHECK(big_at(&r, 0, "count") == 6, "COUNT(*) of all: %lld", (long long)big_at(&r, 0, "count"));
    tresult_free(&r);

    /* updates and deletes */
    ok("UPDATE msgs SET body = 'changed' WHERE u = 'bob' AND at = 2");
    CHECK_THAT(tquery(db, "ks", "SELECT body FROM msgs WHERE u = 'bob' AND at = 2", NULL, &r) ==
               QR_OK);
    CHECK_STR(ttext(&r, 0, "body", t, sizeof t), "changed");
    tresult_free(&r);
    ok("DELETE body FROM msgs WHERE u = 'bob' AND at = 2");
    CHECK_THAT(tquery(db, "ks", "SELECT body FROM msgs WHERE u = 'bob' AND at = 2", NULL, &r) ==
               QR_OK);
    CHECK(r.nrows == 1 && tval(&r, 0, "body").len < 0, "the row stays, its cell goes: %u", r.nrows);
    tresult_free(&r);
    ok("DELETE FROM msgs WHERE u = 'bob' AND at = 4");
    ok("DELETE FROM msgs WHERE u = 'bob' AND at < 2");
    ints("SELECT at FROM msgs WHERE u = 'bob'", "at", (int32_t[]){3, 2, -1});
    ok("DELETE FROM msgs WHERE u = 'amy'");
    CHECK_THAT(tquery(db, "ks", "SELECT * FROM msgs WHERE u = 'amy'", NULL, &r) == QR_OK);
    CHECK(r.nrows == 0, "the partition went, static row too: %u", r.nrows);
    tresult_free(&r);

    /* refusals */
    fails("SELECT * FROM msgs WHERE body = 'x'", CQL_ERR_INVALID,
          "Cannot execute this query as it might involve data filtering and thus may have "
          "unpredictable performance. If you want to execute this query despite the "
          "performance unpredictability, use ALLOW FILTERING");
    fails("SELECT * FROM msgs WHERE at = 3", CQL_ERR_INVALID, NULL);
    ints("SELECT at FROM msgs WHERE body = 'hello 3' ALLOW FILTERING", "at", (int32_t[]){3, -1});
    ints("SELECT at FROM msgs WHERE at = 3 ALLOW FILTERING", "at", (int32_t[]){3, -1});
    fails("INSERT INTO msgs (at, body) VALUES (1, 'x')", CQL_ERR_INVALID,
          "Some partition key parts are missing: u");
    fails("INSERT INTO msgs (u, body) VALUES ('x', 'x')", CQL_ERR_INVALID,
          "Some clustering keys are missing: at");
    fails("UPDATE msgs SET body = 'x' WHERE u = 'bob'", CQL_ERR_INVALID,
          "Some clustering keys are missing: at");
    fails("UPDATE msgs SET body = 'x' WHERE u = 'bob' AND at = 1 AND body = 'y'", CQL_ERR_INVALID,
          "Non PRIMARY KEY columns found in where clause: body");
    fails("INSERT INTO msgs (u, at, nope) VALUES ('x', 1, 2)", CQL_ERR_INVALID,
          "Undefined column name nope in table ks.msgs");
    fails("INSERT INTO msgs (u, at, body) VALUES ('x', 'one', 'x')", CQL_ERR_INVALID, NULL);
    fails("SELECT * FROM msgs WHERE u = 'bob' ORDER BY body", CQL_ERR_INVALID, NULL);
    fails("SELECT * FROM nope", CQL_ERR_INVALID, "table nope does not exist");
}

static void test_composite(void)
{
    ok("CREATE TABLE events (tenant text, month int, at int, seq int, v text, PRIMARY KEY "
       "((tenant, month), at, seq))");
    for (int at = 0; at < 3; at++)
        for (int seq = 0; seq < 3; seq++) {
            char q[160];
            snprintf(q, sizeof q,
                     "INSERT INTO events (tenant, month, at, seq, v) VALUES ('t', 202401, %d, %d, "
                     "'x')",
                     at, seq);
            ok(q);
        }
    ints("SELECT seq FROM events WHERE tenant = 't' AND month = 202401 AND at = 1", "seq",
         (int32_t[]){0, 1, 2, -1});
    ints("SELECT seq FROM events WHERE tenant = 't' AND month = 202401 AND (at, seq) > (1, 1) "
         "LIMIT 3",
         "seq", (int32_t[]){2, 0, 1, -1});
    ints("SELECT at FROM events WHERE tenant = 't' AND month = 202401 AND at = 2 AND seq >= 1",
         "at", (int32_t[]){2, 2, -1});
    fails("SELECT * FROM events WHERE tenant = 't'", CQL_ERR_INVALID, NULL);
    ints("SELECT seq FROM events WHERE tenant = 't' AND month = 202401 AND seq = 2 ALLOW "
         "FILTERING",
         "seq", (int32_t[]){2, 2, 2, -1});
    ok("DELETE FROM events WHERE tenant = 't' AND month = 202401 AND at = 1");
    ints("SELECT at FROM events WHERE tenant = 't' AND month = 202401 AND seq = 0 ALLOW FILTERING",
         "at", (int32_t[]){0, 2, -1});
}

static void test_timestamps(void)
{
    ok("CREATE TABLE kv (k int PRIMARY KEY, v text, w text) WITH default_time_to_live = 0");
    ok("INSERT INTO kv (k, v) VALUES (1, 'new') USING TIMESTAMP 1000");
    ok("INSERT INTO kv (k, v) VALUES (1, 'old') USING TIMESTAMP 500");
    tresult r;
    char t[64];
    CHECK_THAT(tquery(db, "ks", "SELECT v, writetime(v) FROM kv WHERE k = 1", NULL, &r) == QR_OK);
    CHECK_STR(ttext(&r, 0, "v", t, sizeof t), "new");
    CHECK(big_at(&r, 0, "writetime(v)") == 1000, "writetime %lld",
          (long long)big_at(&r, 0, "writetime(v)"));
    tresult_free(&r);
    /* per cell: a newer w beside the older v */
    ok("UPDATE kv USING TIMESTAMP 2000 SET w = 'w2' WHERE k = 1");
    ok("UPDATE kv USING TIMESTAMP 700 SET v = 'lost', w = 'lost' WHERE k = 1");
    CHECK_THAT(tquery(db, "ks", "SELECT v, w FROM kv WHERE k = 1", NULL, &r) == QR_OK);
    CHECK_STR(ttext(&r, 0, "v", t, sizeof t), "new");
    CHECK_STR(ttext(&r, 0, "w", t, sizeof t), "w2");
    tresult_free(&r);
    /* a delete older than a cell leaves it */
    ok("DELETE v FROM kv USING TIMESTAMP 900 WHERE k = 1");
    CHECK_THAT(tquery(db, "ks", "SELECT v FROM kv WHERE k = 1", NULL, &r) == QR_OK);
    CHECK_STR(ttext(&r, 0, "v", t, sizeof t), "new");
    tresult_free(&r);
    ok("DELETE v FROM kv USING TIMESTAMP 1500 WHERE k = 1");
    ok("INSERT INTO kv (k, v) VALUES (1, 'before the delete') USING TIMESTAMP 1200");
    CHECK_THAT(tquery(db, "ks", "SELECT v FROM kv WHERE k = 1", NULL, &r) == QR_OK);
    CHECK(tval(&r, 0, "v").len < 0, "a write older than the delete stays deleted");
    tresult_free(&r);
    /* TTL */
    ok("INSERT INTO kv (k, v) VALUES (2, 'short') USING TTL 1000");
    CHECK_THAT(tquery(db, "ks", "SELECT ttl(v), ttl(w) FROM kv WHERE k = 2", NULL, &r) == QR_OK);
    int32_t ttl = int_at(&r, 0, "ttl(v)");
    CHECK(ttl > 990 && ttl <= 1000, "ttl %d", ttl);
    CHECK_THAT(tval(&r, 0, "ttl(w)").len < 0);
    tresult_free(&r);
    ok("INSERT INTO kv (k, v) VALUES (3, 'gone') USING TTL 1");
    sleep(2);
    CHECK_THAT(tquery(db, "ks", "SELECT * FROM kv WHERE k = 3", NULL, &r) == QR_OK);
    CHECK(r.nrows == 0, "expired: %u rows", r.nrows);
    tresult_free(&r);
    ok("CREATE TABLE short (k int PRIMARY KEY, v text) WITH default_time_to_live = 500");
    ok("INSERT INTO short (k, v) VALUES (1, 'x')");
    CHECK_THAT(tquery(db, "ks", "SELECT ttl(v) FROM short WHERE k = 1", NULL, &r) == QR_OK);
    CHECK(int_at(&r, 0, "ttl(v)") > 490, "default ttl %d", int_at(&r, 0, "ttl(v)"));
    tresult_free(&r);
    fails("INSERT INTO kv (k, v) VALUES (4, 'x') USING TTL -1", CQL_ERR_INVALID,
          "A TTL must be greater or equal to 0, but was -1");
    /* a column dropped and added again does not bring its old cells back */
    ok("INSERT INTO kv (k, w) VALUES (5, 'before')");
    ok("ALTER TABLE kv DROP w");
    ok("ALTER TABLE kv ADD w text");
    CHECK_THAT(tquery(db, "ks", "SELECT w FROM kv WHERE k = 5", NULL, &r) == QR_OK);
    CHECK(r.nrows == 0 || tval(&r, 0, "w").len < 0, "the old cell stays dropped");
    tresult_free(&r);
    ok("UPDATE kv SET w = 'after' WHERE k = 5");
    CHECK_THAT(tquery(db, "ks", "SELECT w FROM kv WHERE k = 5", NULL, &r) == QR_OK);
    CHECK_STR(ttext(&r, 0, "w", t, sizeof t), "after");
    tresult_free(&r);
}

static void test_counters_collections(void)
{
    ok("CREATE TABLE views (page text PRIMARY KEY, n counter)");
    ok("UPDATE views SET n = n + 5 WHERE page = 'a'");
    ok("UPDATE views SET n = n - 2 WHERE page = 'a'");
    tresult r;
    CHECK_THAT(tquery(db, "ks", "SELECT n FROM views WHERE page = 'a'", NULL, &r) == QR_OK);
    CHECK(big_at(&r, 0, "n") == 3, "counter %lld", (long long)big_at(&r, 0, "n"));
    tresult_free(&r);
    fails("INSERT INTO views (page, n) VALUES ('b', 1)", CQL_ERR_INVALID,
          "INSERT statements are not allowed on counter tables, use UPDATE instead");
    fails("UPDATE views SET n = 4 WHERE page = 'a'", CQL_ERR_INVALID,
          "Cannot set the value of counter column n (counters can only be incremented/decremented, "
          "not set)");

    ok("CREATE TABLE c (k int PRIMARY KEY, s set<int>, l list<int>, m map<text, int>)");
    ok("INSERT INTO c (k, s, l, m) VALUES (1, {3, 1}, [1, 2], {'a': 1})");
    ok("UPDATE c SET s = s + {2, 5}, l = l + [3], m = m + {'b': 2} WHERE k = 1");
    ok("UPDATE c SET s = s - {1}, l = [0] + l, m['c'] = 3 WHERE k = 1");
    ok("UPDATE c SET l[1] = 10 WHERE k = 1");
    ok("DELETE m['a'] FROM c WHERE k = 1");
    CHECK_THAT(tquery(db, "ks", "SELECT s, l, m FROM c WHERE k = 1", NULL, &r) == QR_OK);
    /* s = {2, 3, 5} */
    cql_value s = tval(&r, 0, "s");
    cql_elements e;
    uint32_t n = 0;
    CHECK_THAT(cql_collection_open(&e, s.p, (size_t)s.len, 0, &n) == 0 && n == 3);
    const uint8_t *p;
    int32_t len, x;
    int32_t want_s[] = {2, 3, 5};
    for (int i = 0; i < 3 && cql_element_next(&e, &p, &len) == 1; i++) {
        cql_int_decode(p, (size_t)len, &x);
        CHECK(x == want_s[i], "s[%d] = %d", i, x);
    }
    /* l = [0, 10, 2, 3] */
    cql_value l = tval(&r, 0, "l");
    CHECK_THAT(cql_collection_open(&e, l.p, (size_t)l.len, 0, &n) == 0 && n == 4);
    int32_t want_l[] = {0, 10, 2, 3};
    for (int i = 0; i < 4 && cql_element_next(&e, &p, &len) == 1; i++) {
        cql_int_decode(p, (size_t)len, &x);
        CHECK(x == want_l[i], "l[%d] = %d", i, x);
    }
    cql_value m = tval(&r, 0, "m");
    CHECK_THAT(cql_collection_open(&e, m.p, (size_t)m.len, 1, &n) == 0 && n == 2);
    tresult_free(&r);
    fails("UPDATE c SET l[9] = 1 WHERE k = 1", CQL_ERR_INVALID,
          "List index 9 out of bound, list has size 4");
}

static void test_conditions(void)
{
    ok("CREATE TABLE acct (id int PRIMARY KEY, owner text, balance int)");
    tresult r;
    CHECK_THAT(tquery(db, "ks",
                      "INSERT INTO acct (id, owner, balance) VALUES (1, 'a', 10) IF NOT EXISTS",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 1 && r.ncols == 1 && tval(&r, 0, "[applied]").p[0] == 1, "applied: %s", r.msg);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks",
                      "INSERT INTO acct (id, owner, balance) VALUES (1, 'b', 0) IF NOT EXISTS",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 1 && tval(&r, 0, "[applied]").p[0] == 0, "not applied");
    CHECK(r.ncols == 4, "the row that is there: %u columns", r.ncols);
    char t[64];
    CHECK_STR(ttext(&r, 0, "owner", t, sizeof t), "a");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "UPDATE acct SET balance = 5 WHERE id = 1 IF balance = 10", NULL,
                      &r) == QR_OK);
    CHECK_THAT(tval(&r, 0, "[applied]").p[0] == 1);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "UPDATE acct SET balance = 0 WHERE id = 1 IF balance = 10", NULL,
                      &r) == QR_OK);
    CHECK_THAT(tval(&r, 0, "[applied]").p[0] == 0);
    CHECK(r.ncols == 2 && int_at(&r, 0, "balance") == 5, "the balance that is there");
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "UPDATE acct SET balance = 1 WHERE id = 9 IF EXISTS", NULL, &r) ==
               QR_OK);
    CHECK_THAT(tval(&r, 0, "[applied]").p[0] == 0);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "DELETE FROM acct WHERE id = 1 IF owner = 'a'", NULL, &r) == QR_OK);
    CHECK_THAT(tval(&r, 0, "[applied]").p[0] == 1);
    tresult_free(&r);
    CHECK_THAT(tquery(db, "ks", "SELECT * FROM acct WHERE id = 1", NULL, &r) == QR_OK);
    CHECK(r.nrows == 0, "deleted under its condition");
    tresult_free(&r);
}

static void test_binds(void)
{
    buf b;
    buf_init(&b, 0);
    body_prepare(&b, 4, "INSERT INTO kv (k, v) VALUES (?, ?)");
    tresult r;
    CHECK_THAT(tcall(db, 4, CQL_OP_PREPARE, &b, "ks", &r) == QR_OK);
    CHECK(r.nmarkers == 2, "markers %u", r.nmarkers);
    uint8_t id[16];
    memcpy(id, r.id, 16);
    tresult_free(&r);
    uint8_t k[4];
    cql_int_encode(77, k);
    tv vals[2] = {{k, 4, NULL}, {"bound", 5, NULL}};
    tparams p = {.values = vals, .n = 2};
    buf_reset(&b);
    body_execute(&b, 4, id, 16, &p);
    CHECK_THAT(tcall(db, 4, CQL_OP_EXECUTE, &b, NULL, &r) == QR_OK);
    tresult_free(&r);
    /* a mistyped value: three bytes for an int */
    tv bad[2] = {{k, 3, NULL}, {"x", 1, NULL}};
    p.values = bad;
    buf_reset(&b);
    body_execute(&b, 4, id, 16, &p);
    CHECK_THAT(tcall(db, 4, CQL_OP_EXECUTE, &b, NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "mistyped: %x %s", r.err_code, r.msg);
    tresult_free(&r);
    /* named values */
    tv named[2] = {{"bound", 5, "val"}, {k, 4, "key"}};
    tparams np = {.values = named, .n = 2};
    CHECK_THAT(tquery(db, "ks", "SELECT k FROM kv WHERE k = :key AND v = :val ALLOW FILTERING", &np,
                      &r) == QR_OK);
    CHECK(r.nrows == 1 && int_at(&r, 0, "k") == 77, "named: %u %s", r.nrows, r.msg);
    tresult_free(&r);
    buf_free(&b);
}

static void test_paging(void)
{
    ok("CREATE TABLE big (p int, c int, v text, PRIMARY KEY (p, c))");
    buf b;
    buf_init(&b, 0);
    body_prepare(&b, 4, "INSERT INTO big (p, c, v) VALUES (?, ?, 'v')");
    tresult r;
    CHECK_THAT(tcall(db, 4, CQL_OP_PREPARE, &b, "ks", &r) == QR_OK);
    uint8_t id[16];
    memcpy(id, r.id, 16);
    tresult_free(&r);
    for (int i = 0; i < 3000; i++) {
        uint8_t pk[4], ck[4];
        cql_int_encode(i % 3, pk);
        cql_int_encode(i, ck);
        tv vals[2] = {{pk, 4, NULL}, {ck, 4, NULL}};
        tparams p = {.values = vals, .n = 2};
        buf_reset(&b);
        body_execute(&b, 4, id, 16, &p);
        if (tcall(db, 4, CQL_OP_EXECUTE, &b, NULL, &r) != QR_OK)
            CHECK(0, "insert %d: %s", i, r.msg);
        tresult_free(&r);
    }
    buf_free(&b);
    /* every row, 500 a page */
    const char *queries[] = {"SELECT p, c FROM big", "SELECT p, c FROM big WHERE p = 1",
                             "SELECT p, c FROM big WHERE p = 2 ORDER BY c DESC",
                             "SELECT p, c FROM big WHERE p IN (0, 1) AND c > 1000"};
    const int want[] = {3000, 1000, 1000, 1332};
    for (int qi = 0; qi < 4; qi++) {
        uint8_t state[512];
        int32_t state_len = -1;
        int total = 0, pages = 0, prev_c = -1, ordered = 1;
        do {
            tparams p = {.page_size = 500,
                         .paging_state = state_len >= 0 ? state : NULL,
                         .paging_len = state_len >= 0 ? (size_t)state_len : 0};
            CHECK(tquery(db, "ks", queries[qi], &p, &r) == QR_OK, "%s: %s", queries[qi], r.msg);
            CHECK(r.nrows <= 500, "a page holds at most 500: %u", r.nrows);
            for (uint32_t i = 0; i < r.nrows; i++) {
                int c = int_at(&r, i, "c");
                if (qi == 1 && c <= prev_c) ordered = 0;
                if (qi == 2 && prev_c >= 0 && c >= prev_c) ordered = 0;
                prev_c = c;
            }
            total += (int)r.nrows;
            state_len = r.paging_len;
            if (state_len > 0) memcpy(state, r.paging, (size_t)state_len);
            pages++;
            tresult_free(&r);
        } while (state_len > 0 && pages < 100);
        CHECK(total == want[qi], "%s: %d rows over %d pages, want %d", queries[qi], total, pages,
              want[qi]);
        CHECK(ordered, "%s: in clustering order across pages", queries[qi]);
    }
    /* LIMIT across pages */
    uint8_t state[512];
    int32_t state_len = -1;
    int total = 0;
    do {
        tparams p = {.page_size = 100,
                     .paging_state = state_len >= 0 ? state : NULL,
                     .paging_len = state_len >= 0 ? (size_t)state_len : 0};
        CHECK_THAT(tquery(db, "ks", "SELECT c FROM big WHERE p = 0 LIMIT 250", &p, &r) == QR_OK);
        total += (int)r.nrows;
        state_len = r.paging_len;
        if (state_len > 0) memcpy(state, r.paging, (size_t)state_len);
        tresult_free(&r);
    } while (state_len > 0);
    CHECK(total == 250, "LIMIT 250 over pages of 100: %d", total);
}

static void test_engine_view(void)
{
    /* the rows are items of the engine table ks.kv, read as DynamoDB reads them */
    qr_response resp;
    const char *scan = "{\"TableName\": \"ks.kv\"}";
    CHECK_THAT(qr_call(db, "Scan", scan, strlen(scan), &resp) == QR_OK);
    CHECK(strstr(resp.body, "\"bound\"") != NULL, "the text cell as S: %s", resp.body);
    qr_response_free(&resp);
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_rows_XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    char *msg = NULL;
    /* capacity metered but not enforced: thousands of writes a second into one partition
     * would pass an on-demand partition's ceiling */
    qr_options opts = {.capacity = QR_CAPACITY_OBSERVE};
    if (qr_open(dir, &opts, &db, &msg) != QR_OK) {
        fprintf(stderr, "open: %s\n", msg);
        return 1;
    }
    tresult r;
    tquery(db, NULL,
           "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
           "'replication_factor': 1}",
           NULL, &r);
    tresult_free(&r);
    test_basics();
    test_composite();
    test_timestamps();
    test_counters_collections();
    test_conditions();
    test_binds();
    test_paging();
    test_engine_view();
    qr_close(db);
    /* the rows after reopening */
    CHECK_THAT(qr_open(dir, &opts, &db, &msg) == QR_OK);
    ints("SELECT at FROM msgs WHERE u = 'bob'", "at", (int32_t[]){3, 2, -1});
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_rows");
}
