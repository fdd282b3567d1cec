/* test_cqlexec_prepared.c — PREPARE and EXECUTE through qr_cql_call: ids (the MD5 of the
 * keyspace and text, so the same text prepares to the same id), the markers' metadata and
 * the partition key's marker indexes, the result metadata, EXECUTE with positional and
 * named values, UNPREPARED for an unknown id and after a restart, and qr_cql_writes on
 * an EXECUTE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqlexec_helper.h"
#include "quarry.h"

#include "check.h"

static int prepare(qr_db *db, uint8_t version, const char *ks, const char *text, tresult *r)
{
    buf b;
    buf_init(&b, 0);
    body_prepare(&b, version, text);
    int rc = tcall(db, version, CQL_OP_PREPARE, &b, ks, r);
    buf_free(&b);
    return rc;
}

static int execute(qr_db *db, uint8_t version, const uint8_t *id, size_t len, const tparams *p,
                   tresult *r)
{
    buf b;
    buf_init(&b, 0);
    body_execute(&b, version, id, len, p);
    int rc = tcall(db, version, CQL_OP_EXECUTE, &b, NULL, r);
    buf_free(&b);
    return rc;
}

static void test_system(qr_db *db, uint8_t id_out[16])
{
    for (uint8_t version = 4; version <= 5; version++) {
        tresult r;
        CHECK_THAT(prepare(db, version, NULL, "SELECT * FROM system.local WHERE key = ?", &r) ==
                   QR_OK);
        CHECK(r.ok && r.kind == CQL_RESULT_PREPARED, "v%u prepared: %s", version, r.msg);
        CHECK(r.id_len == 16, "id of 16 bytes: %zu", r.id_len);
        CHECK(r.nmarkers == 1, "one marker: %u", r.nmarkers);
        CHECK(r.ncols == 20, "the result's 20 columns: %u", r.ncols);
        uint8_t id[16];
        memcpy(id, r.id, 16);
        memcpy(id_out, r.id, 16);
        tresult_free(&r);

        tv v = {"local", 5, NULL};
        tparams p = {.values = &v, .n = 1};
        CHECK_THAT(execute(db, version, id, 16, &p, &r) == QR_OK);
        CHECK(r.ok && r.nrows == 1 && r.ncols == 20, "v%u executed: %u rows %s", version, r.nrows,
              r.msg);
        tresult_free(&r);
        tv w = {"other", 5, NULL};
        p.values = &w;
        CHECK_THAT(execute(db, version, id, 16, &p, &r) == QR_OK);
        CHECK(r.nrows == 0, "another key: %u rows", r.nrows);
        tresult_free(&r);
        /* a missing value */
        CHECK_THAT(execute(db, version, id, 16, NULL, &r) == QR_ERR);
        CHECK(r.err_code == CQL_ERR_INVALID, "no value: %x %s", r.err_code, r.msg);
        CHECK_STR(r.msg, "there were 1 markers(?) in CQL but 0 bound variables");
        tresult_free(&r);
    }
    /* the same text, the same id */
    tresult r;
    CHECK_THAT(prepare(db, 4, NULL, "SELECT * FROM system.local WHERE key = ?", &r) == QR_OK);
    CHECK_THAT(r.id_len == 16 && memcmp(r.id, id_out, 16) == 0);
    tresult_free(&r);
    /* named markers */
    CHECK_THAT(prepare(db, 4, NULL,
                       "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = "
                       ":k",
                       &r) == QR_OK);
    CHECK(r.nmarkers == 1 && r.ncols == 1, "named: %u markers %u cols", r.nmarkers, r.ncols);
    uint8_t id[16];
    memcpy(id, r.id, 16);
    tresult_free(&r);
    tv v = {"system", 6, "k"};
    tparams p = {.values = &v, .n = 1};
    CHECK_THAT(execute(db, 4, id, 16, &p, &r) == QR_OK);
    CHECK(r.nrows == 1, "named value: %u rows %s", r.nrows, r.msg);
    tresult_free(&r);

    /* what PREPARE refuses */
    CHECK_THAT(prepare(db, 4, NULL, "SELECT FROM", &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_SYNTAX, "syntax: %x", r.err_code);
    tresult_free(&r);
    CHECK_THAT(prepare(db, 4, NULL, "SELECT * FROM nosuch.t WHERE a = ?", &r) == QR_ERR);
    CHECK_STR(r.msg, "keyspace nosuch does not exist");
    tresult_free(&r);
    CHECK_THAT(prepare(db, 4, NULL, "SELECT nope FROM system.local", &r) == QR_ERR);
    CHECK_STR(r.msg, "Undefined column name nope in table system.local");
    tresult_free(&r);

    /* an unknown id */
    uint8_t bad[16] = {1, 2, 3};
    CHECK_THAT(execute(db, 4, bad, 16, NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_UNPREPARED, "unprepared: %x %s", r.err_code, r.msg);
    CHECK(strstr(r.msg, "01020300000000000000000000000000") != NULL, "names the id: %s", r.msg);
    tresult_free(&r);

    /* an EXECUTE of a read does not write */
    buf b;
    buf_init(&b, 0);
    body_execute(&b, 4, id_out, 16, NULL);
    qr_cql_request req = {.version = 4, .opcode = CQL_OP_EXECUTE, .body = b.data, .len = b.len};
    CHECK_THAT(qr_cql_writes(db, &req) == 0);
    buf_free(&b);
}

static void test_schema(qr_db *db)
{
    tresult r;
    CHECK_THAT(prepare(db, 4, NULL,
                       "CREATE KEYSPACE pks WITH replication = {'class': 'SimpleStrategy', "
                       "'replication_factor': 1}",
                       &r) == QR_OK);
    CHECK(r.nmarkers == 0 && r.ncols == 0, "DDL: %u markers %u cols", r.nmarkers, r.ncols);
    uint8_t id[16];
    memcpy(id, r.id, 16);
    tresult_free(&r);
    CHECK_THAT(execute(db, 4, id, 16, NULL, &r) == QR_OK);
    CHECK(r.kind == CQL_RESULT_SCHEMA_CHANGE, "executed DDL: %s", r.msg);
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "CREATE TABLE pks.t (a int, b text, c bigint, m map<text, int>, PRIMARY KEY "
                      "((a, b), c))",
                      NULL, &r) == QR_OK);
    tresult_free(&r);
    /* markers of a user table: types from the schema, the partition key's indexes */
    CHECK_THAT(prepare(db, 4, "pks", "SELECT * FROM t WHERE b = ? AND a = ? AND c IN ?", &r) ==
               QR_OK);
    CHECK(r.ok && r.nmarkers == 3, "3 markers: %u %s", r.nmarkers, r.msg);
    CHECK(r.ncols == 4, "4 result columns: %u", r.ncols);
    tresult_free(&r);
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_prepared_XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *msg = NULL;
    if (qr_open(dir, NULL, &db, &msg) != QR_OK) {
        fprintf(stderr, "open: %s\n", msg);
        return 1;
    }
    uint8_t id[16];
    test_system(db, id);
    test_schema(db);
    qr_close(db);
    /* after a restart, drivers prepare again */
    CHECK_THAT(qr_open(dir, NULL, &db, &msg) == QR_OK);
    tresult r;
    tv v = {"local", 5, NULL};
    tparams p = {.values = &v, .n = 1};
    CHECK_THAT(execute(db, 4, id, 16, &p, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_UNPREPARED, "after a restart: %x %s", r.err_code, r.msg);
    tresult_free(&r);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_prepared");
}
