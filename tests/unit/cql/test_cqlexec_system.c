/* test_cqlexec_system.c — qr_cql_call on the tables drivers read to connect: system.local
 * with every column a single-node Cassandra 4.1 answers, system.peers and peers_v2 empty,
 * system_schema.keyspaces; and the errors of a statement that does not parse or names a
 * keyspace or table that does not exist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqlexec_helper.h"
#include "quarry.h"

#include "check.h"

static void test_local(qr_db *db)
{
    tresult r;
    CHECK_THAT(tquery(db, NULL, "SELECT * FROM system.local", NULL, &r) == QR_OK);
    CHECK(r.ok && r.kind == CQL_RESULT_ROWS, "rows: %s", r.msg);
    CHECK(r.nrows == 1, "one row, got %u", r.nrows);
    static const char *const cols[] = {"key",
                                       "bootstrapped",
                                       "broadcast_address",
                                       "broadcast_port",
                                       "cluster_name",
                                       "cql_version",
                                       "data_center",
                                       "gossip_generation",
                                       "host_id",
                                       "listen_address",
                                       "listen_port",
                                       "native_protocol_version",
                                       "partitioner",
                                       "rack",
                                       "release_version",
                                       "rpc_address",
                                       "rpc_port",
                                       "schema_version",
                                       "tokens",
                                       "truncated_at"};
    CHECK(r.ncols == sizeof cols / sizeof cols[0], "%u columns", r.ncols);
    for (size_t i = 0; i < sizeof cols / sizeof cols[0] && i < r.ncols; i++)
        CHECK_STR(r.cols[i], cols[i]);
    char t[128];
    CHECK_STR(ttext(&r, 0, "key", t, sizeof t), "local");
    CHECK_STR(ttext(&r, 0, "partitioner", t, sizeof t),
              "org.apache.cassandra.dht.Murmur3Partitioner");
    CHECK_STR(ttext(&r, 0, "data_center", t, sizeof t), "datacenter1");
    CHECK_STR(ttext(&r, 0, "release_version", t, sizeof t), "4.1.3");
    CHECK_THAT(r.col_types[tcol(&r, "host_id")] == CQL_TYPE_UUID);
    CHECK_THAT(r.col_types[tcol(&r, "tokens")] == CQL_TYPE_SET);
    CHECK_THAT(r.col_types[tcol(&r, "rpc_address")] == CQL_TYPE_INET);
    CHECK_THAT(tval(&r, 0, "host_id").len == 16);
    CHECK_THAT(tval(&r, 0, "schema_version").len == 16);
    CHECK_THAT(tval(&r, 0, "rpc_address").len == 4);
    uint8_t host[16];
    memcpy(host, tval(&r, 0, "host_id").p, 16);
    tresult_free(&r);

    /* the Python driver's own query: columns chosen, WHERE key='local' */
    CHECK_THAT(tquery(db, NULL,
                      "SELECT peer, data_center, host_id, rack, release_version, rpc_address, "
                      "schema_version, tokens FROM system.local WHERE key='local'",
                      NULL, &r) != QR_OK);
    CHECK(!r.ok && r.err_code == CQL_ERR_INVALID, "peer is no column of local: %s", r.msg);
    CHECK_STR(r.msg, "Undefined column name peer in table system.local");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "SELECT host_id AS h, cluster_name FROM system.local WHERE key='local'", NULL,
                      &r) == QR_OK);
    CHECK(r.nrows == 1 && r.ncols == 2, "%u rows %u cols: %s", r.nrows, r.ncols, r.msg);
    CHECK_STR(r.cols[0], "h");
    CHECK_THAT(tval(&r, 0, "h").len == 16 && memcmp(tval(&r, 0, "h").p, host, 16) == 0);
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL, "SELECT key FROM system.local WHERE key='other'", NULL, &r) ==
               QR_OK);
    CHECK(r.ok && r.nrows == 0, "no row for another key: %u", r.nrows);
    tresult_free(&r);

    /* a bound value */
    tv v = {"local", 5, NULL};
    tparams p = {.values = &v, .n = 1};
    CHECK_THAT(tquery(db, NULL, "SELECT key FROM system.local WHERE key = ?", &p, &r) == QR_OK);
    CHECK(r.nrows == 1, "bound key: %u rows %s", r.nrows, r.msg);
    tresult_free(&r);

    /* in the connection's keyspace */
    CHECK_THAT(tquery(db, "system", "SELECT key FROM local", NULL, &r) == QR_OK);
    CHECK(r.nrows == 1, "USE system: %s", r.msg);
    tresult_free(&r);
}

static void test_peers(qr_db *db)
{
    tresult r;
    CHECK_THAT(tquery(db, NULL, "SELECT * FROM system.peers", NULL, &r) == QR_OK);
    CHECK(r.ok && r.nrows == 0 && r.ncols == 9, "peers: %u rows %u cols", r.nrows, r.ncols);
    CHECK_STR(r.cols[0], "peer");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL, "SELECT * FROM system.peers_v2", NULL, &r) == QR_OK);
    CHECK(r.ok && r.nrows == 0 && r.ncols == 12, "peers_v2: %u rows %u cols", r.nrows, r.ncols);
    CHECK_STR(r.cols[1], "peer_port");
    tresult_free(&r);
}

static void test_keyspaces(qr_db *db)
{
    tresult r;
    CHECK_THAT(tquery(db, NULL, "SELECT * FROM system_schema.keyspaces", NULL, &r) == QR_OK);
    CHECK(r.ok && r.nrows >= 5, "system keyspaces: %u", r.nrows);
    CHECK_STR(r.cols[0], "keyspace_name");
    CHECK_STR(r.cols[2], "replication");
    CHECK_THAT(r.col_types[2] == CQL_TYPE_MAP);
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL,
                      "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name IN "
                      "('system', 'system_auth', 'none')",
                      NULL, &r) == QR_OK);
    CHECK(r.nrows == 2, "IN: %u", r.nrows);
    tresult_free(&r);
}

static void test_errors(qr_db *db)
{
    tresult r;
    CHECK_THAT(tquery(db, NULL, "SELEC * FROM system.local", NULL, &r) == QR_ERR);
    CHECK(!r.ok && r.err_code == CQL_ERR_SYNTAX, "syntax: %x %s", r.err_code, r.msg);
    CHECK(strstr(r.msg, "line 1:0") != NULL, "where: %s", r.msg);
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL, "SELECT * FROM nosuch.t", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "code %x", r.err_code);
    CHECK_STR(r.msg, "keyspace nosuch does not exist");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL, "SELECT * FROM system.nosuch", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "code %x", r.err_code);
    CHECK_STR(r.msg, "table nosuch does not exist");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL, "SELECT * FROM t", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "No keyspace has been specified. USE a keyspace, or explicitly specify "
                     "keyspace.tablename");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL, "SELECT nosuch FROM system.local", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "Undefined column name nosuch in table system.local");
    tresult_free(&r);
    /* a marker without a value */
    CHECK_THAT(tquery(db, NULL, "SELECT key FROM system.local WHERE key = ?", NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_INVALID, "unbound: %x %s", r.err_code, r.msg);
    tresult_free(&r);
    /* a body that is not a QUERY body */
    buf b;
    buf_init(&b, 0);
    cql_put_int(&b, 1000);
    CHECK_THAT(tcall(db, 4, CQL_OP_QUERY, &b, NULL, &r) == QR_ERR);
    CHECK(r.err_code == CQL_ERR_PROTOCOL, "short body: %x %s", r.err_code, r.msg);
    tresult_free(&r);
    buf_free(&b);
    /* USE */
    CHECK_THAT(tquery(db, NULL, "USE nosuch", NULL, &r) == QR_ERR);
    CHECK_STR(r.msg, "Keyspace 'nosuch' does not exist");
    tresult_free(&r);
    CHECK_THAT(tquery(db, NULL, "USE system", NULL, &r) == QR_OK);
    CHECK(r.kind == CQL_RESULT_SET_KEYSPACE, "kind %d", r.kind);
    CHECK_STR(r.ks, "system");
    CHECK_STR(r.keyspace_after, "system");
    tresult_free(&r);
}

static void test_writes(qr_db *db)
{
    buf b;
    buf_init(&b, 0);
    body_query(&b, 4, "  select * from system.local", NULL);
    qr_cql_request req = {.version = 4, .opcode = CQL_OP_QUERY, .body = b.data, .len = b.len};
    CHECK_THAT(qr_cql_writes(db, &req) == 0);
    buf_reset(&b);
    body_query(&b, 4, "/* c */ INSERT INTO ks.t (a) VALUES (1)", NULL);
    req.body = b.data;
    req.len = b.len;
    CHECK_THAT(qr_cql_writes(db, &req) == 1);
    buf_reset(&b);
    body_query(&b, 4, "selection_is_no_select", NULL);
    req.body = b.data;
    req.len = b.len;
    CHECK_THAT(qr_cql_writes(db, &req) == 1);
    buf_free(&b);
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_system_XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *msg = NULL;
    if (qr_open(dir, NULL, &db, &msg) != QR_OK) {
        fprintf(stderr, "open: %s\n", msg);
        return 1;
    }
    test_local(db);
    test_peers(db);
    test_keyspaces(db);
    test_errors(db);
    test_writes(db);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_system");
}
