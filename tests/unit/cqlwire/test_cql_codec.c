/* test_cql_codec.c — CQL message bodies (src/cqlwire/cql_codec.h).
 *
 * Request bodies written by hand from the v4 and v5 specifications and decoded, every
 * truncation of them refused with a message, Cassandra's refusals (STARTUP options,
 * batch kinds, event types, consistencies, timestamps), and response bodies compared
 * with bytes written by hand. With an option it is the harness of
 * tests/server/test_cql_wire.py: requests on stdin decoded to JSON lines, or a fixed set
 * of responses written for the Python driver to decode (see usage()). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqlwire/cql_codec.h"
#include "cqlwire/cql_value.h"

#include "check.h"

/* Bytes from hex text; spaces are ignored. Returns the length. */
static size_t unhex(const char *hex, uint8_t *out)
{
    size_t n = 0;
    for (const char *p = hex; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        unsigned x;
        sscanf(p, "%2x", &x);
        out[n++] = (uint8_t)x;
        p += 2;
    }
    return n;
}

static int buf_is(const buf *b, size_t from, const char *hex)
{
    static uint8_t want[4096];
    size_t n = unhex(hex, want);
    if (b->len - from != n || memcmp(b->data + from, want, n) != 0) {
        fprintf(stderr, "  got  ");
        for (size_t i = from; i < b->len; i++)
            fprintf(stderr, "%02x", (uint8_t)b->data[i]);
        fprintf(stderr, "\n  want %s\n", hex);
        return 0;
    }
    return 1;
}

static int str_eq(cql_str s, const char *lit)
{
    return s.p && s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0;
}

/* Decodes a body given in hex as a request of opcode in version. */
static int decode(uint8_t version, uint8_t flags, uint8_t opcode, const char *hex, cql_request *req,
                  char *err, size_t errlen)
{
    static uint8_t body[4096];
    cql_envelope env = {.version = version, .flags = flags, .stream = 3, .opcode = opcode};
    env.length = (uint32_t)unhex(hex, body);
    env.body = body;
    return cql_request_decode(&env, req, err, errlen);
}

/* Every proper prefix of the body must be refused with a message. */
static void check_truncations(uint8_t version, uint8_t opcode, const char *hex)
{
    static uint8_t body[4096];
    size_t n = unhex(hex, body);
    for (size_t k = 0; k < n; k++) {
        uint8_t *copy = malloc(k ? k : 1); /* exact size, so an over-read is caught by ASan */
        memcpy(copy, body, k);
        cql_envelope env = {
            .version = version, .opcode = opcode, .length = (uint32_t)k, .body = copy};
        cql_request req;
        char err[256];
        int rc = cql_request_decode(&env, &req, err, sizeof err);
        CHECK(rc == -1 && err[0], "%s v%u: prefix %zu of %zu accepted", cql_opcode_name(opcode),
              version, k, n);
        cql_request_free(&req);
        free(copy);
    }
}

static void test_reader(void)
{
    uint8_t b[64];
    size_t n = unhex("0003 616263 ffffffff 000000", b);
    cql_reader r;
    cql_reader_init(&r, b, n, NULL);
    cql_str s;
    CHECK_THAT(cql_read_string(&r, "the name", &s) == 0 && str_eq(s, "abc"));
    cql_value v;
    CHECK_THAT(cql_read_bytes(&r, "the token", &v) == 0 && v.len == CQL_NULL && !v.p);
    int32_t i;
    CHECK_THAT(cql_read_int(&r, "the count", &i) == -1);
    CHECK_STR(r.err, "the count needs 4 bytes but 3 remain");
    /* After a failure every read fails, keeping the first message. */
    uint8_t x;
    CHECK_THAT(cql_read_byte(&r, "anything", &x) == -1);
    CHECK_STR(r.err, "the count needs 4 bytes but 3 remain");

    n = unhex("0010 6162", b);
    cql_reader_init(&r, b, n, NULL);
    CHECK_THAT(cql_read_string(&r, "the keyspace's [string]", &s) == -1);
    CHECK_STR(r.err, "the keyspace's [string] claims 16 bytes but 2 remain");
    n = unhex("fffffffd", b);
    cql_reader_init(&r, b, n, NULL);
    CHECK_THAT(cql_read_value(&r, "a bound [value]", &v) == -1);
    CHECK_STR(r.err, "a bound [value] has an invalid length -3 (a [value] may be -1 for null or "
                     "-2 for not set)");
    n = unhex("fffffffe ffffffff fffffffd", b);
    cql_reader_init(&r, b, n, NULL);
    CHECK_THAT(cql_read_value(&r, "v", &v) == 0 && v.len == CQL_UNSET);
    CHECK_THAT(cql_read_value(&r, "v", &v) == 0 && v.len == CQL_NULL);
    CHECK_THAT(cql_read_bytes(&r, "b", &v) == 0 && v.len == CQL_NULL); /* [bytes]: any n < 0 */
    n = unhex("ffffffff", b);
    cql_reader_init(&r, b, n, NULL);
    CHECK_THAT(cql_read_long_string(&r, "the query", &s) == -1);
    CHECK_STR(r.err, "the query has a negative length (-1)");
    n = unhex("000b", b);
    cql_reader_init(&r, b, n, NULL);
    uint16_t cl;
    CHECK_THAT(cql_read_consistency(&r, "the consistency", &cl) == -1);
    CHECK_STR(r.err, "Unknown code 11 for a consistency level");
    CHECK_STR(cql_consistency_name(CQL_CL_LOCAL_ONE), "LOCAL_ONE");

    /* [inet] 127.0.0.1:9042, [inetaddr] ::1, and an address of 5 bytes. */
    n = unhex("04 7f000001 00002352 10 00000000000000000000000000000001 05", b);
    cql_reader_init(&r, b, n, NULL);
    cql_inet in;
    CHECK_THAT(cql_read_inet(&r, "the node", &in) == 0 && in.len == 4 && in.port == 9042);
    CHECK_THAT(in.addr[0] == 127 && in.addr[3] == 1);
    CHECK_THAT(cql_read_inetaddr(&r, "the endpoint", &in) == 0 && in.len == 16 && in.addr[15] == 1);
    CHECK_THAT(cql_read_inetaddr(&r, "the endpoint", &in) == -1);
    CHECK_STR(r.err, "the endpoint has an address of 5 bytes (4 or 16 expected)");

    /* vints, a uuid, a long. */
    n = unhex("c3e800 03 000102030405060708090a0b0c0d0e0f 8000000000000001", b);
    cql_reader_init(&r, b, n, NULL);
    uint64_t u;
    int64_t sv, l;
    uint8_t uuid[16];
    CHECK_THAT(cql_read_uvint(&r, "u", &u) == 0 && u == 256000);
    CHECK_THAT(cql_read_vint(&r, "s", &sv) == 0 && sv == -2);
    CHECK_THAT(cql_read_uuid(&r, "id", uuid) == 0 && uuid[15] == 15);
    CHECK_THAT(cql_read_long(&r, "l", &l) == 0 && l == INT64_MIN + 1);
    CHECK_THAT(cql_reader_left(&r) == 0);
    n = unhex("c3e8", b);
    cql_reader_init(&r, b, n, NULL);
    CHECK_THAT(cql_read_uvint(&r, "the vint", &u) == -1);
    CHECK_STR(r.err, "the vint is cut short (2 bytes remain)");
}

static void test_reader_maps(void)
{
    cql_pool pool = {0};
    uint8_t b[256];
    cql_reader r;
    /* [string multimap] {"COMPRESSION": ["lz4", "snappy"]} */
    size_t n = unhex("0001 000b 434f4d5052455353494f4e 0002 00036c7a34 0006736e61707079", b);
    cql_reader_init(&r, b, n, &pool);
    cql_multi *m;
    uint16_t count;
    CHECK_THAT(cql_read_string_multimap(&r, "the options", &m, &count) == 0 && count == 1);
    CHECK_THAT(str_eq(m[0].key, "COMPRESSION") && m[0].n == 2 && str_eq(m[0].values[1], "snappy"));
    /* [bytes map] {"k": 0x01, "n": null} */
    n = unhex("0002 00016b 0000000101 00016e ffffffff", b);
    cql_reader_init(&r, b, n, &pool);
    cql_bytes_pair *bp;
    CHECK_THAT(cql_read_bytes_map(&r, "the payload", &bp, &count) == 0 && count == 2);
    CHECK_THAT(bp[0].value.len == 1 && bp[0].value.p[0] == 1 && bp[1].value.len == CQL_NULL);
    /* A count that cannot fit in what remains is refused before anything is allocated. */
    n = unhex("ffff 0000", b);
    cql_reader_init(&r, b, n, &pool);
    cql_pair *pairs;
    CHECK_THAT(cql_read_string_map(&r, "the options", &pairs, &count) == -1);
    CHECK_STR(r.err, "the options counts 65535 pairs but only 2 bytes remain");
    cql_reader_init(&r, b, n, &pool);
    cql_str *list;
    CHECK_THAT(cql_read_string_list(&r, "the events", &list, &count) == -1);
    CHECK_STR(r.err, "the events counts 65535 strings but only 2 bytes remain");
    cql_pool_free(&pool);
}

static const cql_type t_int = {.id = CQL_TYPE_INT};
static const cql_type t_text = {.id = CQL_TYPE_VARCHAR};
static const cql_type *const list_params[] = {&t_int};
static const cql_type t_list = {.id = CQL_TYPE_LIST, .params = list_params, .n = 1};
static const cql_type *const map_params[] = {&t_text, &t_list};
static const cql_type t_map = {.id = CQL_TYPE_MAP, .params = map_params, .n = 2};
static const cql_type *const udt_params[] = {&t_text, &t_int};
static const char *const udt_fields[] = {"street", "zip"};
static const cql_type t_udt = {.id = CQL_TYPE_UDT,
                               .keyspace = "ks",
                               .name = "addr",
                               .params = udt_params,
                               .field_names = udt_fields,
                               .n = 2};
static const cql_type *const tuple_params[] = {&t_int, &t_udt};
static const cql_type t_tuple = {.id = CQL_TYPE_TUPLE, .params = tuple_params, .n = 2};
static const cql_type t_custom = {.id = CQL_TYPE_CUSTOM,
                                  .name = "org.apache.cassandra.db.marshal.BytesType"};

static void test_types(void)
{
    buf b;
    buf_init(&b, 0);
    /* map<text, list<int>>: 0021, 000d, 0020 0009. */
    CHECK_THAT(cql_put_type(&b, &t_map) == 0 && buf_is(&b, 0, "0021 000d 0020 0009"));
    buf_reset(&b);
    /* tuple<int, addr>, addr a UDT ks.addr {street text, zip int}. */
    CHECK_THAT(cql_put_type(&b, &t_tuple) == 0);
    CHECK_THAT(buf_is(&b, 0,
                      "0031 0002 0009 0030 00026b73 000461646472 0002 "
                      "0006737472656574 000d 00037a6970 0009"));
    cql_pool pool = {0};
    cql_reader r;
    cql_reader_init(&r, b.data, b.len, &pool);
    cql_type *t;
    CHECK_THAT(cql_read_type(&r, "the type", &t) == 0 && cql_reader_left(&r) == 0);
    CHECK_THAT(t->id == CQL_TYPE_TUPLE && t->n == 2 && t->params[1]->id == CQL_TYPE_UDT);
    CHECK_STR(t->params[1]->name, "addr");
    CHECK_STR(t->params[1]->field_names[1], "zip");
    CHECK_THAT(t->params[1]->params[0]->id == CQL_TYPE_VARCHAR);
    buf_reset(&b);
    CHECK_THAT(cql_put_type(&b, &t_custom) == 0);
    cql_reader_init(&r, b.data, b.len, &pool);
    CHECK_THAT(cql_read_type(&r, "the type", &t) == 0 && t->id == CQL_TYPE_CUSTOM);
    CHECK_STR(t->name, "org.apache.cassandra.db.marshal.BytesType");
    /* Every native id writes as itself alone; 0x000A and 0x0016 are no type. */
    uint16_t natives[] = {1,   2,   3,   4,   5,    6,    7,    8,    9,    0xB,
                          0xC, 0xD, 0xE, 0xF, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15};
    for (size_t i = 0; i < sizeof natives / sizeof natives[0]; i++) {
        buf_reset(&b);
        cql_type nt = {.id = natives[i]};
        CHECK(cql_put_type(&b, &nt) == 0 && b.len == 2 && cql_type_name(natives[i]), "id %u",
              natives[i]);
    }
    cql_type bad = {.id = 0x000A};
    CHECK_THAT(cql_put_type(&b, &bad) == -1 && cql_type_name(0x16) == NULL);
    uint8_t raw[128];
    size_t n = unhex("000a", raw);
    cql_reader_init(&r, raw, n, &pool);
    CHECK_THAT(cql_read_type(&r, "the type", &t) == -1);
    CHECK_STR(r.err, "the type has an unknown type id 0x000a");
    /* Nesting past the limit: list<list<...>> 40 deep. */
    for (int i = 0; i < 40; i++)
        unhex("0020", raw + 2 * i);
    unhex("0009", raw + 80);
    cql_reader_init(&r, raw, 82, &pool);
    CHECK_THAT(cql_read_type(&r, "the type", &t) == -1);
    CHECK_STR(r.err, "the type nests types more than 32 deep");
    /* [option list] */
    buf_reset(&b);
    const cql_type *const two[] = {&t_int, &t_list};
    CHECK_THAT(cql_put_type_list(&b, two, 2) == 0 && buf_is(&b, 0, "0002 0009 0020 0009"));
    cql_reader_init(&r, b.data, b.len, &pool);
    cql_type **types;
    uint16_t nt;
    CHECK_THAT(cql_read_type_list(&r, "the types", &types, &nt) == 0 && nt == 2);
    CHECK_THAT(types[1]->id == CQL_TYPE_LIST && types[1]->params[0]->id == CQL_TYPE_INT);
    cql_pool_free(&pool);
    buf_free(&b);
}

/* STARTUP {"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4"} */
#define STARTUP_BODY                                                                               \
    "0002 000b43514c5f56455253494f4e 0005332e302e30 000b434f4d5052455353494f4e 00036c7a34"

static void test_startup(void)
{
    cql_request req;
    char err[256];
    CHECK_THAT(decode(4, 0, CQL_OP_STARTUP, STARTUP_BODY, &req, err, sizeof err) == 0);
    CHECK_THAT(req.u.startup.n == 2 && str_eq(req.u.startup.cql_version, "3.0.0"));
    CHECK_THAT(req.u.startup.compression == CQL_COMPRESSION_LZ4 && req.stream == 3);
    cql_request_free(&req);
    check_truncations(4, CQL_OP_STARTUP, STARTUP_BODY);

    struct {
        const char *body, *message;
    } refused[] = {
        /* {} */
        {"0000", "Missing value CQL_VERSION in STARTUP message"},
        /* {"CQL_VERSION": "2.0.0"} */
        {"0001 000b43514c5f56455253494f4e 0005322e302e30",
         "CQL version 2.0.0 is not supported by the binary protocol (supported version are >= "
         "3.0.0)"},
        /* {"CQL_VERSION": "three"} */
        {"0001 000b43514c5f56455253494f4e 00057468726565", "Invalid version value: three"},
        /* {"CQL_VERSION": "3.0.0", "COMPRESSION": "snappy"} */
        {"0002 000b43514c5f56455253494f4e 0005332e302e30 000b434f4d5052455353494f4e "
         "0006736e61707079",
         "This instance does not support Snappy compression"},
        /* ... "COMPRESSION": "zstd" */
        {"0002 000b43514c5f56455253494f4e 0005332e302e30 000b434f4d5052455353494f4e "
         "00047a737464",
         "Unknown compression algorithm: zstd"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK(decode(4, 0, CQL_OP_STARTUP, refused[i].body, &req, err, sizeof err) == -1, "%zu", i);
        CHECK_STR(err, refused[i].message);
        cql_request_free(&req);
    }
    /* "3.4.5", "3.0" and "3.4.5-SNAPSHOT" are all versions; "LZ4" is lz4. */
    CHECK_THAT(decode(4, 0, CQL_OP_STARTUP,
                      "0002 000b43514c5f56455253494f4e 000e332e342e352d534e415053484f54 "
                      "000b434f4d5052455353494f4e 00034c5a34",
                      &req, err, sizeof err) == 0);
    CHECK_THAT(req.u.startup.compression == CQL_COMPRESSION_LZ4);
    cql_request_free(&req);
    CHECK_THAT(decode(4, 0, CQL_OP_STARTUP, "0001 000b43514c5f56455253494f4e 0003332e30", &req, err,
                      sizeof err) == 0);
    cql_request_free(&req);
}

/* QUERY v4: "SELECT * FROM t WHERE k = ?", LOCAL_QUORUM, flags values | page size |
 * paging state | serial | timestamp | names: one value named "k" = int 7, page 100,
 * paging state 0xbeef, LOCAL_SERIAL, timestamp 1234567890. */
#define QUERY_V4_BODY                                                                              \
    "0000001b 53454c454354202a2046524f4d2074205748455245206b203d203f "                             \
    "0006 7d "                                                                                     \
    "0001 00016b 0000000400000007 "                                                                \
    "00000064 00000002beef 0009 00000000499602d2"

/* QUERY v5: "USE ks" (flags as an [int]), ONE, flags keyspace | now in seconds. */
#define QUERY_V5_BODY "00000006 555345206b73 0001 00000180 00026b73 5f5e1000"

static void test_query(void)
{
    cql_request req;
    char err[256];
    CHECK_THAT(decode(4, 0, CQL_OP_QUERY, QUERY_V4_BODY, &req, err, sizeof err) == 0);
    const cql_query *q = &req.u.query;
    CHECK_THAT(str_eq(q->query, "SELECT * FROM t WHERE k = ?"));
    const cql_query_params *p = &q->params;
    CHECK_THAT(p->consistency == CQL_CL_LOCAL_QUORUM && p->flags == 0x7d);
    CHECK_THAT(p->values.n == 1 && p->values.names && str_eq(p->values.names[0], "k"));
    CHECK_THAT(p->values.values[0].len == 4 && p->values.values[0].p[3] == 7);
    CHECK_THAT(p->page_size == 100 && p->paging_state.len == 2 && p->paging_state.p[0] == 0xbe);
    CHECK_THAT(p->serial_consistency == CQL_CL_LOCAL_SERIAL && p->timestamp == 1234567890);
    CHECK_THAT(p->keyspace.p == NULL);
    cql_request_free(&req);
    check_truncations(4, CQL_OP_QUERY, QUERY_V4_BODY);

    CHECK_THAT(decode(5, 0, CQL_OP_QUERY, QUERY_V5_BODY, &req, err, sizeof err) == 0);
    p = &req.u.query.params;
    CHECK_THAT(str_eq(req.u.query.query, "USE ks") && p->consistency == CQL_CL_ONE);
    CHECK_THAT(p->flags == 0x180 && str_eq(p->keyspace, "ks") && p->now_in_seconds == 1600000000);
    CHECK_THAT(p->page_size == -1 && p->paging_state.len == CQL_NULL && p->values.n == 0);
    CHECK_THAT(p->serial_consistency == CQL_CL_SERIAL && p->timestamp == INT64_MIN);
    cql_request_free(&req);
    check_truncations(5, CQL_OP_QUERY, QUERY_V5_BODY);

    /* The same v5 body read as v4: its flags are one byte, 0x00, and the rest ignored. */
    CHECK_THAT(decode(4, 0, CQL_OP_QUERY, QUERY_V5_BODY, &req, err, sizeof err) == 0);
    CHECK_THAT(req.u.query.params.flags == 0 && req.u.query.params.keyspace.p == NULL);
    cql_request_free(&req);

    /* Positional values: null and not set. */
    CHECK_THAT(decode(4, 0, CQL_OP_QUERY, "00000001 3f 0001 01 0002 ffffffff fffffffe", &req, err,
                      sizeof err) == 0);
    CHECK_THAT(req.u.query.params.values.n == 2 && req.u.query.params.values.names == NULL);
    CHECK_THAT(req.u.query.params.values.values[0].len == CQL_NULL);
    CHECK_THAT(req.u.query.params.values.values[1].len == CQL_UNSET);
    cql_request_free(&req);

    struct {
        const char *body, *message;
    } refused[] = {
        {"00000001 3f 0001 04 00000000", "QUERY message: The page size cannot be 0"},
        {"00000001 3f 0001 20 8000000000000000",
         "QUERY message: Out of bound timestamp, must be in [-9223372036854775807, "
         "9223372036854775807] (got -9223372036854775808)"},
        {"00000001 3f 00ff 00", "QUERY message: Unknown code 255 for a consistency level"},
        {"00000001 3f 0001 10 0042", "QUERY message: Unknown code 66 for a consistency level"},
        {"00000001 3f 0001 01 0001 fffffff0",
         "QUERY message: a bound [value] has an invalid length -16 (a [value] may be -1 for null "
         "or -2 for not set)"},
        {"00000001 3f 0001 01 ffff 00000000",
         "QUERY message: the values counts 65535 values but only 4 bytes remain"},
        {"00000010 3f", "QUERY message: the query's [long string] claims 16 bytes but 1 remain"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK(decode(4, 0, CQL_OP_QUERY, refused[i].body, &req, err, sizeof err) == -1, "%zu", i);
        CHECK_STR(err, refused[i].message);
        cql_request_free(&req);
    }

    /* A custom payload before the body (flag 0x04), from v4 only. */
    CHECK_THAT(decode(4, CQL_FLAG_CUSTOM_PAYLOAD, CQL_OP_QUERY,
                      "0001 00016b 0000000101 00000001 3f 0001 00", &req, err, sizeof err) == 0);
    CHECK_THAT(req.n_custom == 1 && str_eq(req.custom_payload[0].key, "k"));
    CHECK_THAT(str_eq(req.u.query.query, "?"));
    cql_request_free(&req);
    CHECK_THAT(decode(3, CQL_FLAG_CUSTOM_PAYLOAD, CQL_OP_QUERY, "0000 00000001 3f 0001 00", &req,
                      err, sizeof err) == -1);
    CHECK_STR(err, "Received frame with CUSTOM_PAYLOAD flag for native protocol version < 4");
    cql_request_free(&req);
}

/* PREPARE v5 with a keyspace; EXECUTE v4 and v5. */
#define PREPARE_V5_BODY "00000008 53454c4543542031 00000001 00026b73"
#define EXECUTE_V4_BODY "0002 abcd 0004 05 0001 00000001ff 00000010"
#define EXECUTE_V5_BODY "0002 abcd 0001 ee 0004 00000002"

static void test_prepare_execute(void)
{
    cql_request req;
    char err[256];
    CHECK_THAT(decode(5, 0, CQL_OP_PREPARE, PREPARE_V5_BODY, &req, err, sizeof err) == 0);
    CHECK_THAT(str_eq(req.u.prepare.query, "SELECT 1") && req.u.prepare.flags == 1);
    CHECK_THAT(str_eq(req.u.prepare.keyspace, "ks"));
    cql_request_free(&req);
    check_truncations(5, CQL_OP_PREPARE, PREPARE_V5_BODY);
    /* v4's PREPARE is the query alone. */
    CHECK_THAT(decode(4, 0, CQL_OP_PREPARE, "00000008 53454c4543542031", &req, err, sizeof err) ==
               0);
    CHECK_THAT(req.u.prepare.flags == 0 && req.u.prepare.keyspace.p == NULL);
    cql_request_free(&req);

    CHECK_THAT(decode(4, 0, CQL_OP_EXECUTE, EXECUTE_V4_BODY, &req, err, sizeof err) == 0);
    const cql_execute *x = &req.u.execute;
    CHECK_THAT(x->id.len == 2 && (uint8_t)x->id.p[0] == 0xab && x->result_metadata_id.p == NULL);
    CHECK_THAT(x->params.consistency == CQL_CL_QUORUM && x->params.values.n == 1);
    CHECK_THAT(x->params.values.values[0].len == 1 && x->params.page_size == 16);
    cql_request_free(&req);
    check_truncations(4, CQL_OP_EXECUTE, EXECUTE_V4_BODY);

    CHECK_THAT(decode(5, 0, CQL_OP_EXECUTE, EXECUTE_V5_BODY, &req, err, sizeof err) == 0);
    x = &req.u.execute;
    CHECK_THAT(x->result_metadata_id.len == 1 && (uint8_t)x->result_metadata_id.p[0] == 0xee);
    CHECK_THAT(x->params.consistency == CQL_CL_QUORUM && x->params.flags == CQL_QF_SKIP_METADATA);
    cql_request_free(&req);
    check_truncations(5, CQL_OP_EXECUTE, EXECUTE_V5_BODY);
}

/* BATCH v4, unlogged: an INSERT with two values and a prepared id 0x01 with none; ONE,
 * flags serial | timestamp. */
#define BATCH_V4_BODY                                                                              \
    "01 0002 "                                                                                     \
    "00 00000006 494e53455254 0002 0000000161 ffffffff "                                           \
    "01 0001 01 0000 "                                                                             \
    "0001 30 0009 0000000000000005"

static void test_batch(void)
{
    cql_request req;
    char err[256];
    CHECK_THAT(decode(4, 0, CQL_OP_BATCH, BATCH_V4_BODY, &req, err, sizeof err) == 0);
    const cql_batch *b = &req.u.batch;
    CHECK_THAT(b->type == CQL_BATCH_UNLOGGED && b->n == 2);
    CHECK_THAT(!b->statements[0].prepared && str_eq(b->statements[0].query, "INSERT"));
    CHECK_THAT(b->statements[0].values.n == 2 && b->statements[0].values.values[1].len == CQL_NULL);
    CHECK_THAT(b->statements[1].prepared && b->statements[1].query.len == 1);
    CHECK_THAT(b->statements[1].values.n == 0);
    CHECK_THAT(b->consistency == CQL_CL_ONE && b->flags == 0x30);
    CHECK_THAT(b->serial_consistency == CQL_CL_LOCAL_SERIAL && b->timestamp == 5);
    cql_request_free(&req);
    check_truncations(4, CQL_OP_BATCH, BATCH_V4_BODY);
    /* v5: counter batch with a keyspace. */
    CHECK_THAT(
        decode(5, 0, CQL_OP_BATCH, "02 0000 0004 00000080 00026b73", &req, err, sizeof err) == 0);
    CHECK_THAT(req.u.batch.type == CQL_BATCH_COUNTER && str_eq(req.u.batch.keyspace, "ks"));
    cql_request_free(&req);

    struct {
        const char *body, *message;
    } refused[] = {
        {"03 0000 0001 00",
         "BATCH message: Invalid BATCH message type 3 (0 logged, 1 unlogged, 2 counter)"},
        {"00 0001 02 0001 01 0000 0001 00",
         "BATCH message: Invalid query kind in BATCH messages. Must be 0 or 1 but got 2"},
        {"00 0000 0001 01", "BATCH message: BATCH flags 0x1 set bits 0x0F, which only QUERY and "
                            "EXECUTE use"},
        {"00 0000 0001 40", "BATCH message: Names for values (flag 0x40) cannot be used in a "
                            "BATCH: its values come before its flags (CASSANDRA-10246)"},
        {"00 ffff 00", "BATCH message: the batch counts 65535 statements but only 1 bytes remain"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK(decode(4, 0, CQL_OP_BATCH, refused[i].body, &req, err, sizeof err) == -1, "%zu", i);
        CHECK_STR(err, refused[i].message);
        cql_request_free(&req);
    }
}

static void test_other_requests(void)
{
    cql_request req;
    char err[256];
    /* REGISTER ["TOPOLOGY_CHANGE", "SCHEMA_CHANGE"] */
    const char *reg = "0002 000f544f504f4c4f47595f4348414e4745 000d534348454d415f4348414e4745";
    CHECK_THAT(decode(4, 0, CQL_OP_REGISTER, reg, &req, err, sizeof err) == 0);
    CHECK_THAT(req.u.reg.events == (CQL_EVENT_TOPOLOGY_CHANGE | CQL_EVENT_SCHEMA_CHANGE));
    cql_request_free(&req);
    check_truncations(4, CQL_OP_REGISTER, reg);
    CHECK_THAT(decode(4, 0, CQL_OP_REGISTER, "0001 0003464f4f", &req, err, sizeof err) == -1);
    CHECK_STR(err, "REGISTER message: Invalid value 'FOO' for Type");
    cql_request_free(&req);
    /* AUTH_RESPONSE: the PLAIN token "\0cassandra\0cassandra". */
    const char *auth = "00000014 0063617373616e647261 0063617373616e647261";
    CHECK_THAT(decode(4, 0, CQL_OP_AUTH_RESPONSE, auth, &req, err, sizeof err) == 0);
    CHECK_THAT(req.u.auth_token.len == 20 && req.u.auth_token.p[1] == 'c');
    cql_request_free(&req);
    check_truncations(4, CQL_OP_AUTH_RESPONSE, auth);
    /* OPTIONS has no body; anything after a body is ignored. */
    CHECK_THAT(decode(4, 0, CQL_OP_OPTIONS, "", &req, err, sizeof err) == 0);
    cql_request_free(&req);
    CHECK_THAT(decode(4, 0, CQL_OP_OPTIONS, "00ff", &req, err, sizeof err) == 0);
    cql_request_free(&req);
    /* A response opcode is no request. */
    CHECK_THAT(decode(4, 0, CQL_OP_READY, "", &req, err, sizeof err) == -1);
    CHECK_STR(err, "A client may not send READY messages");
    cql_request_free(&req);
}

static void test_errors(void)
{
    buf b;
    buf_init(&b, 0);
    cql_error e = {.code = CQL_ERR_UNAVAILABLE,
                   .message = "no",
                   .consistency = CQL_CL_QUORUM,
                   .required = 3,
                   .alive = 1};
    CHECK_THAT(cql_write_error(&b, 4, &e) == 0);
    CHECK_THAT(buf_is(&b, 0, "00001000 00026e6f 0004 00000003 00000001"));
    buf_reset(&b);
    cql_error wt = {.code = CQL_ERR_WRITE_TIMEOUT,
                    .message = "",
                    .consistency = CQL_CL_SERIAL,
                    .received = 1,
                    .block_for = 2,
                    .write_type = "CAS",
                    .contentions = 9};
    CHECK_THAT(cql_write_error(&b, 5, &wt) == 0);
    CHECK_THAT(buf_is(&b, 0, "00001100 0000 0008 00000001 00000002 0003434153 0009"));
    buf_reset(&b);
    CHECK_THAT(cql_write_error(&b, 4, &wt) == 0); /* v4 has no contentions */
    CHECK_THAT(buf_is(&b, 0, "00001100 0000 0008 00000001 00000002 0003434153"));
    buf_reset(&b);
    cql_error rt = {.code = CQL_ERR_READ_TIMEOUT,
                    .consistency = CQL_CL_ONE,
                    .received = 0,
                    .block_for = 1,
                    .data_present = 1};
    CHECK_THAT(cql_write_error(&b, 4, &rt) == 0);
    CHECK_THAT(buf_is(&b, 0, "00001200 0000 0001 00000000 00000001 01"));
    cql_failure_reason reasons[] = {{.endpoint = {.len = 4, .addr = {127, 0, 0, 1}}, .code = 1}};
    cql_error rf = {.code = CQL_ERR_READ_FAILURE,
                    .consistency = CQL_CL_ONE,
                    .received = 0,
                    .block_for = 1,
                    .reasons = reasons,
                    .n_reasons = 1};
    buf_reset(&b);
    CHECK_THAT(cql_write_error(&b, 5, &rf) == 0);
    CHECK_THAT(buf_is(&b, 0, "00001300 0000 0001 00000000 00000001 00000001 047f000001 0001 00"));
    buf_reset(&b);
    CHECK_THAT(cql_write_error(&b, 4, &rf) == 0); /* v4: the number of failures */
    CHECK_THAT(buf_is(&b, 0, "00001300 0000 0001 00000000 00000001 00000001 00"));
    cql_error wf = {.code = CQL_ERR_WRITE_FAILURE,
                    .consistency = CQL_CL_ALL,
                    .block_for = 1,
                    .write_type = "SIMPLE"};
    buf_reset(&b);
    CHECK_THAT(cql_write_error(&b, 5, &wf) == 0);
    CHECK_THAT(buf_is(&b, 0, "00001500 0000 0005 00000000 00000001 00000000 000653494d504c45"));
    const char *const args[] = {"int"};
    cql_error ff = {.code = CQL_ERR_FUNCTION_FAILURE,
                    .keyspace = "ks",
                    .name = "f",
                    .arg_types = args,
                    .n_arg_types = 1};
    buf_reset(&b);
    CHECK_THAT(cql_write_error(&b, 4, &ff) == 0);
    CHECK_THAT(buf_is(&b, 0, "00001400 0000 00026b73 000166 0001 0003696e74"));
    cql_error ae = {.code = CQL_ERR_ALREADY_EXISTS, .message = "x", .keyspace = "ks"};
    buf_reset(&b);
    CHECK_THAT(cql_write_error(&b, 4, &ae) == 0); /* a keyspace: the table is "" */
    CHECK_THAT(buf_is(&b, 0, "00002400 000178 00026b73 0000"));
    const uint8_t id[] = {0xca, 0xfe};
    cql_error up = {.code = CQL_ERR_UNPREPARED, .message = "", .id = id, .id_len = 2};
    buf_reset(&b);
    CHECK_THAT(cql_write_error(&b, 4, &up) == 0 && buf_is(&b, 0, "00002500 0000 0002cafe"));
    cql_error cas = {.code = CQL_ERR_CAS_WRITE_UNKNOWN,
                     .consistency = CQL_CL_SERIAL,
                     .received = 0,
                     .block_for = 1};
    buf_reset(&b);
    CHECK_THAT(cql_write_error(&b, 5, &cas) == 0);
    CHECK_THAT(buf_is(&b, 0, "00001700 0000 0008 00000000 00000001"));
    /* The codes with no extra fields. */
    cql_error_code plain[] = {CQL_ERR_SERVER,     CQL_ERR_PROTOCOL,         CQL_ERR_AUTH,
                              CQL_ERR_OVERLOADED, CQL_ERR_BOOTSTRAPPING,    CQL_ERR_TRUNCATE,
                              CQL_ERR_SYNTAX,     CQL_ERR_UNAUTHORIZED,     CQL_ERR_INVALID,
                              CQL_ERR_CONFIG,     CQL_ERR_CDC_WRITE_FAILURE};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        buf_reset(&b);
        cql_error pe = {.code = plain[i], .message = "m"};
        CHECK_THAT(cql_write_error(&b, 4, &pe) == 0 && b.len == 4 + 3);
        CHECK_THAT(be32_read(b.data) == (uint32_t)plain[i]);
    }
    /* A message that does not fit its [string]. */
    char *longmsg = malloc(70000);
    memset(longmsg, 'x', 69999);
    longmsg[69999] = '\0';
    cql_error le = {.code = CQL_ERR_INVALID, .message = longmsg};
    CHECK_THAT(cql_write_error(&b, 4, &le) == -1);
    free(longmsg);
    buf_free(&b);
}

static void test_results(void)
{
    buf b;
    buf_init(&b, 0);
    CHECK_THAT(cql_write_void(&b) == 0 && buf_is(&b, 0, "00000001"));
    buf_reset(&b);
    CHECK_THAT(cql_write_set_keyspace(&b, "ks") == 0 && buf_is(&b, 0, "00000003 00026b73"));

    /* Rows of ks.t (k int, v list<int>), more pages after state 0x01, one row (1, null). */
    cql_column cols[] = {{.name = "k", .type = &t_int}, {.name = "v", .type = &t_list}};
    const uint8_t state[] = {0x01};
    cql_metadata m = {.keyspace = "ks",
                      .table = "t",
                      .columns = cols,
                      .n_columns = 2,
                      .paging_state = state,
                      .paging_len = 1};
    buf_reset(&b);
    size_t count_at;
    CHECK_THAT(cql_write_rows_begin(&b, 4, &m, &count_at) == 0);
    uint8_t v[4];
    cql_int_encode(1, v);
    cql_put_bytes(&b, v, 4);
    cql_put_bytes(&b, NULL, -1);
    cql_write_rows_count(&b, count_at, 1);
    CHECK_THAT(buf_is(&b, 0,
                      "00000002 00000003 00000002 0000000101 00026b73 000174 "
                      "00016b 0009 000176 0020 0009 00000001 0000000400000001 ffffffff"));
    /* Without a global spec each column names its table. */
    cql_column own[] = {{.keyspace = "a", .table = "b", .name = "c", .type = &t_text}};
    cql_metadata mo = {.columns = own, .n_columns = 1};
    buf_reset(&b);
    CHECK_THAT(cql_write_rows_begin(&b, 4, &mo, &count_at) == 0);
    CHECK_THAT(buf_is(&b, 0, "00000002 00000000 00000001 000161 000162 000163 000d 00000000"));
    /* No metadata: flags, count, paging state. v5 metadata changed: the new id. */
    cql_metadata mn = {
        .keyspace = "ks", .table = "t", .columns = cols, .n_columns = 2, .no_metadata = 1};
    buf_reset(&b);
    CHECK_THAT(cql_write_rows_begin(&b, 5, &mn, &count_at) == 0);
    CHECK_THAT(buf_is(&b, 0, "00000002 00000004 00000002 00000000"));
    const uint8_t newid[] = {0x77};
    cql_metadata mc = {.keyspace = "ks",
                       .table = "t",
                       .columns = cols,
                       .n_columns = 1,
                       .new_metadata_id = newid,
                       .new_metadata_id_len = 1};
    buf_reset(&b);
    CHECK_THAT(cql_write_rows_begin(&b, 5, &mc, &count_at) == 0);
    CHECK_THAT(
        buf_is(&b, 0, "00000002 00000009 00000001 000177 00026b73 000174 00016b 0009 00000000"));
    buf_reset(&b);
    CHECK_THAT(cql_write_rows_begin(&b, 4, &mc, &count_at) == 0); /* v4: no such flag */
    CHECK_THAT(buf_is(&b, 0, "00000002 00000001 00000001 00026b73 000174 00016b 0009 00000000"));

    /* Prepared: id 0xab, markers (k int) with pk index 0, result (v list<int>). */
    const uint8_t pid[] = {0xab}, rid[] = {0xcd};
    const uint16_t pk[] = {0};
    cql_metadata result = {.keyspace = "ks", .table = "t", .columns = cols + 1, .n_columns = 1};
    cql_prepared p = {.id = pid,
                      .id_len = 1,
                      .result_metadata_id = rid,
                      .result_metadata_id_len = 1,
                      .keyspace = "ks",
                      .table = "t",
                      .markers = cols,
                      .n_markers = 1,
                      .pk_indexes = pk,
                      .n_pk = 1,
                      .result = &result};
    buf_reset(&b);
    CHECK_THAT(cql_write_prepared(&b, 5, &p) == 0);
    CHECK_THAT(buf_is(&b, 0,
                      "00000004 0001ab 0001cd 00000001 00000001 00000001 0000 "
                      "00026b73 000174 00016b 0009 "
                      "00000001 00000001 00026b73 000174 000176 0020 0009"));
    buf_reset(&b);
    CHECK_THAT(cql_write_prepared(&b, 4, &p) == 0); /* v4: no result metadata id */
    CHECK_THAT(buf_is(&b, 0,
                      "00000004 0001ab 00000001 00000001 00000001 0000 "
                      "00026b73 000174 00016b 0009 "
                      "00000001 00000001 00026b73 000174 000176 0020 0009"));
    buf_reset(&b);
    CHECK_THAT(cql_write_prepared(&b, 3, &p) == 0); /* v3: no partition key indexes */
    CHECK_THAT(buf_is(&b, 0,
                      "00000004 0001ab 00000001 00000001 "
                      "00026b73 000174 00016b 0009 "
                      "00000001 00000001 00026b73 000174 000176 0020 0009"));
    p.result = NULL; /* an INSERT: no result metadata */
    buf_reset(&b);
    CHECK_THAT(cql_write_prepared(&b, 4, &p) == 0);
    CHECK_THAT(buf_is(&b, 0,
                      "00000004 0001ab 00000001 00000001 00000001 0000 "
                      "00026b73 000174 00016b 0009 00000004 00000000"));

    /* Schema changes: a table, a keyspace, a function. */
    cql_schema_change tc = {.change = "CREATED", .target = "TABLE", .keyspace = "ks", .name = "t"};
    buf_reset(&b);
    CHECK_THAT(cql_write_schema_change_result(&b, &tc) == 0);
    CHECK_THAT(buf_is(&b, 0, "00000005 0007435245415445440005544142 4c45 00026b73 000174"));
    cql_schema_change kc = {.change = "DROPPED", .target = "KEYSPACE", .keyspace = "ks"};
    buf_reset(&b);
    CHECK_THAT(cql_write_schema_event(&b, &kc) == 0);
    CHECK_THAT(buf_is(&b, 0,
                      "000d534348454d415f4348414e4745 000744524f50504544 00084b4559535041"
                      "4345 00026b73"));
    const char *const fargs[] = {"int", "text"};
    cql_schema_change fc = {.change = "UPDATED",
                            .target = "FUNCTION",
                            .keyspace = "ks",
                            .name = "f",
                            .arg_types = fargs,
                            .n_arg_types = 2};
    buf_reset(&b);
    CHECK_THAT(cql_write_schema_change_result(&b, &fc) == 0);
    CHECK_THAT(buf_is(&b, 0,
                      "00000005 0007555044415445 44 000846554e4354494f4e 00026b73 000166 "
                      "0002 0003696e74 000474657874"));
    cql_inet node = {.len = 4, .addr = {127, 0, 0, 1}, .port = 9042};
    buf_reset(&b);
    CHECK_THAT(cql_write_status_event(&b, "UP", &node) == 0);
    CHECK_THAT(buf_is(&b, 0, "000d5354415455535f4348414e4745 00025550 047f000001 00002352"));
    buf_reset(&b);
    CHECK_THAT(cql_write_topology_event(&b, "NEW_NODE", &node) == 0);
    CHECK_THAT(buf_is(&b, 0,
                      "000f544f504f4c4f47595f4348414e4745 00084e45575f4e4f4445 "
                      "047f000001 00002352"));
    buf_free(&b);
}

static void test_other_responses(void)
{
    buf b;
    buf_init(&b, 0);
    const char *const lz4[] = {"lz4"};
    const char *const versions[] = {"3/v3", "4/v4", "5/v5"};
    cql_text_multi opts[] = {{"COMPRESSION", lz4, 1}, {"PROTOCOL_VERSIONS", versions, 3}};
    CHECK_THAT(cql_write_supported(&b, opts, 2) == 0);
    CHECK_THAT(buf_is(&b, 0,
                      "0002 000b434f4d5052455353494f4e 0001 00036c7a34 "
                      "001150524f544f434f4c5f56455253494f4e53 0003 0004332f7633 "
                      "0004342f7634 0004352f7635"));
    buf_reset(&b);
    CHECK_THAT(cql_write_authenticate(&b, "A") == 0 && buf_is(&b, 0, "000141"));
    buf_reset(&b);
    CHECK_THAT(cql_write_auth_token(&b, NULL, -1) == 0 && buf_is(&b, 0, "ffffffff"));
    buf_reset(&b);
    CHECK_THAT(cql_write_auth_token(&b, "ok", 2) == 0 && buf_is(&b, 0, "000000026f6b"));

    /* A response with a tracing id and warnings: flags 0x0A and the prefix. */
    const uint8_t trace[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const char *const warn[] = {"w"};
    cql_response_extras x = {.tracing_id = trace, .warnings = warn, .n_warnings = 1};
    buf_reset(&b);
    size_t at = cql_response_begin(&b, 4, 12, CQL_OP_RESULT, &x);
    CHECK_THAT(at == 0);
    cql_write_void(&b);
    cql_envelope_end(&b, at);
    CHECK_THAT(buf_is(&b, 0,
                      "84 0a 000c 08 00000019 0102030405060708090a0b0c0d0e0f10 "
                      "0001 000177 00000001"));
    /* v3 has no warnings: the flag is not set and none are written. */
    buf_reset(&b);
    at = cql_response_begin(&b, 3, 1, CQL_OP_READY, &x);
    cql_envelope_end(&b, at);
    CHECK_THAT(buf_is(&b, 0, "83 02 0001 02 00000010 0102030405060708090a0b0c0d0e0f10"));
    /* Writers stop at a full buffer. */
    buf small;
    buf_init(&small, 8);
    CHECK_THAT(cql_write_supported(&small, opts, 2) == -1);
    CHECK_THAT(cql_put_string_n(&small, "x", 70000) == -1);
    buf_free(&small);
    buf_free(&b);
}

/* ---- the harness of tests/server/test_cql_wire.py ---- */

static json_t *hexj(const void *p, size_t n)
{
    char *s = malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++)
        sprintf(s + 2 * i, "%02x", ((const uint8_t *)p)[i]);
    s[2 * n] = '\0';
    json_t *j = json_string(s);
    free(s);
    return j;
}

static json_t *strj(cql_str s)
{
    return s.p ? json_stringn(s.p, s.len) : json_null();
}

static json_t *values_json(const cql_values *v)
{
    json_t *a = json_array();
    for (uint16_t i = 0; i < v->n; i++) {
        const cql_value *x = &v->values[i];
        json_t *j = x->len == CQL_NULL    ? json_null()
                    : x->len == CQL_UNSET ? json_string("unset")
                                          : hexj(x->p, (size_t)x->len);
        if (v->names) {
            json_t *pair = json_pack("{s:o,s:o}", "name", strj(v->names[i]), "value", j);
            json_array_append_new(a, pair);
        } else {
            json_array_append_new(a, j);
        }
    }
    return a;
}

static void params_json(json_t *o, const cql_query_params *p)
{
    json_object_set_new(o, "consistency", json_string(cql_consistency_name(p->consistency)));
    json_object_set_new(o, "flags", json_integer(p->flags));
    json_object_set_new(o, "values", values_json(&p->values));
    json_object_set_new(o, "page_size", json_integer(p->page_size));
    json_object_set_new(o, "paging_state",
                        p->paging_state.len >= 0
                            ? hexj(p->paging_state.p, (size_t)p->paging_state.len)
                            : json_null());
    json_object_set_new(o, "serial", json_string(cql_consistency_name(p->serial_consistency)));
    json_object_set_new(o, "timestamp",
                        p->timestamp == INT64_MIN ? json_null() : json_integer(p->timestamp));
    json_object_set_new(o, "keyspace", strj(p->keyspace));
    json_object_set_new(o, "now_in_seconds", json_integer(p->now_in_seconds));
}

static void print_request(const cql_envelope *env)
{
    cql_request req;
    char err[256];
    json_t *o = json_object();
    json_object_set_new(o, "opcode", json_string(cql_opcode_name(env->opcode)));
    json_object_set_new(o, "stream", json_integer(env->stream));
    json_object_set_new(o, "version", json_integer(env->version));
    if (cql_request_decode(env, &req, err, sizeof err) != 0) {
        json_object_set_new(o, "error", json_string(err));
    } else {
        switch (env->opcode) {
        case CQL_OP_STARTUP: {
            json_t *opts = json_object();
            for (uint16_t i = 0; i < req.u.startup.n; i++) {
                char key[256];
                snprintf(key, sizeof key, "%.*s", (int)req.u.startup.options[i].key.len,
                         req.u.startup.options[i].key.p);
                json_object_set_new(opts, key, strj(req.u.startup.options[i].value));
            }
            json_object_set_new(o, "options", opts);
            json_object_set_new(o, "lz4", json_boolean(req.u.startup.compression));
            break;
        }
        case CQL_OP_QUERY:
            json_object_set_new(o, "query", strj(req.u.query.query));
            params_json(o, &req.u.query.params);
            break;
        case CQL_OP_PREPARE:
            json_object_set_new(o, "query", strj(req.u.prepare.query));
            json_object_set_new(o, "keyspace", strj(req.u.prepare.keyspace));
            break;
        case CQL_OP_EXECUTE:
            json_object_set_new(o, "id", hexj(req.u.execute.id.p, req.u.execute.id.len));
            json_object_set_new(
                o, "result_metadata_id",
                req.u.execute.result_metadata_id.p
                    ? hexj(req.u.execute.result_metadata_id.p, req.u.execute.result_metadata_id.len)
                    : json_null());
            params_json(o, &req.u.execute.params);
            break;
        case CQL_OP_BATCH: {
            const cql_batch *b = &req.u.batch;
            json_t *st = json_array();
            for (uint16_t i = 0; i < b->n; i++) {
                const cql_batch_statement *s = &b->statements[i];
                json_array_append_new(
                    st, json_pack("{s:b,s:o,s:o}", "prepared", s->prepared, "query",
                                  s->prepared ? hexj(s->query.p, s->query.len) : strj(s->query),
                                  "values", values_json(&s->values)));
            }
            json_object_set_new(o, "type", json_integer(b->type));
            json_object_set_new(o, "statements", st);
            json_object_set_new(o, "consistency",
                                json_string(cql_consistency_name(b->consistency)));
            json_object_set_new(o, "serial",
                                json_string(cql_consistency_name(b->serial_consistency)));
            json_object_set_new(o, "timestamp",
                                b->timestamp == INT64_MIN ? json_null()
                                                          : json_integer(b->timestamp));
            break;
        }
        case CQL_OP_REGISTER:
            json_object_set_new(o, "events", json_integer(req.u.reg.events));
            break;
        case CQL_OP_AUTH_RESPONSE:
            json_object_set_new(o, "token",
                                req.u.auth_token.len >= 0
                                    ? hexj(req.u.auth_token.p, (size_t)req.u.auth_token.len)
                                    : json_null());
            break;
        }
    }
    cql_request_free(&req);
    char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    printf("%s\n", text);
    free(text);
    json_decref(o);
}

/* Requests on stdin: v4 envelopes one after the other ("v4", bodies LZ4-compressed when
 * flagged), or v5 segments ("plain" or "lz4"). One JSON line per request. */
static int decode_requests(const buf *in, const char *how)
{
    const uint8_t *p = (const uint8_t *)in->data;
    size_t pos = 0;
    cql_frame_error err;
    if (strcmp(how, "v4") == 0) {
        buf body;
        buf_init(&body, 0);
        while (pos < in->len) {
            cql_envelope env;
            size_t used;
            cql_parse_result rc =
                cql_envelope_parse(p + pos, in->len - pos, NULL, &env, &used, &err);
            if (rc != CQL_PARSE_OK) {
                fprintf(stderr, "%s\n", rc == CQL_PARSE_MORE ? "incomplete envelope" : err.msg);
                buf_free(&body);
                return 1;
            }
            if (env.flags & CQL_FLAG_COMPRESSION) {
                if (cql_body_decompress_lz4(env.body, env.length, 1 << 28, &body, &err)) {
                    fprintf(stderr, "%s\n", err.msg);
                    buf_free(&body);
                    return 1;
                }
                env.body = (const uint8_t *)body.data;
                env.length = (uint32_t)body.len;
            }
            print_request(&env);
            pos += used;
        }
        buf_free(&body);
        return 0;
    }
    cql_v5_reader r;
    cql_v5_reader_init(&r, strcmp(how, "lz4") == 0, NULL);
    int rc = 0;
    for (;;) {
        cql_envelope env;
        size_t used;
        cql_parse_result x = cql_v5_next(&r, p + pos, in->len - pos, &used, &env, &err);
        pos += used;
        if (x == CQL_PARSE_MORE) break;
        if (x == CQL_PARSE_ERROR) {
            fprintf(stderr, "%s\n", err.msg);
            rc = 1;
            break;
        }
        print_request(&env);
    }
    cql_v5_reader_free(&r);
    return rc;
}

/* One value of each native type, as the Python test expects them back. */
static void put_int_value(buf *b, int32_t v)
{
    uint8_t x[4];
    cql_int_encode(v, x);
    cql_put_bytes(b, x, 4);
}

static void put_bigint_value(buf *b, int64_t v)
{
    uint8_t x[8];
    cql_bigint_encode(v, x);
    cql_put_bytes(b, x, 8);
}

/* Appends a [bytes] holding what fn writes into a buffer of its own. */
static void put_sized(buf *b, const buf *v)
{
    cql_put_bytes(b, v->data, (int32_t)v->len);
}

static void write_row_of_every_type(buf *out)
{
    static const cql_type natives[] = {
        {.id = CQL_TYPE_ASCII},     {.id = CQL_TYPE_BIGINT},   {.id = CQL_TYPE_BLOB},
        {.id = CQL_TYPE_BOOLEAN},   {.id = CQL_TYPE_COUNTER},  {.id = CQL_TYPE_DECIMAL},
        {.id = CQL_TYPE_DOUBLE},    {.id = CQL_TYPE_FLOAT},    {.id = CQL_TYPE_INT},
        {.id = CQL_TYPE_TIMESTAMP}, {.id = CQL_TYPE_UUID},     {.id = CQL_TYPE_VARCHAR},
        {.id = CQL_TYPE_VARINT},    {.id = CQL_TYPE_TIMEUUID}, {.id = CQL_TYPE_INET},
        {.id = CQL_TYPE_DATE},      {.id = CQL_TYPE_TIME},     {.id = CQL_TYPE_SMALLINT},
        {.id = CQL_TYPE_TINYINT},   {.id = CQL_TYPE_DURATION},
    };
    static const cql_type *const set_params[] = {&t_text};
    static const cql_type t_set = {.id = CQL_TYPE_SET, .params = set_params, .n = 1};
    static const cql_type *const m_params[] = {&t_text, &t_int};
    static const cql_type t_m = {.id = CQL_TYPE_MAP, .params = m_params, .n = 2};
    static const cql_type *const tup_params[] = {&t_int, &t_text};
    static const cql_type t_tup = {.id = CQL_TYPE_TUPLE, .params = tup_params, .n = 2};
    enum { N_NATIVE = sizeof natives / sizeof natives[0] };
    cql_column cols[N_NATIVE + 6];
    static char names[N_NATIVE + 6][16];
    for (int i = 0; i < N_NATIVE; i++) {
        snprintf(names[i], sizeof names[i], "c_%s", cql_type_name(natives[i].id));
        cols[i] = (cql_column){.name = names[i], .type = &natives[i]};
    }
    cols[N_NATIVE] = (cql_column){.name = "c_list", .type = &t_list};
    cols[N_NATIVE + 1] = (cql_column){.name = "c_map", .type = &t_m};
    cols[N_NATIVE + 2] = (cql_column){.name = "c_set", .type = &t_set};
    cols[N_NATIVE + 3] = (cql_column){.name = "c_udt", .type = &t_udt};
    cols[N_NATIVE + 4] = (cql_column){.name = "c_tuple", .type = &t_tup};
    cols[N_NATIVE + 5] = (cql_column){.name = "c_custom", .type = &t_custom};
    const uint8_t state[] = {0xde, 0xad};
    cql_metadata m = {.keyspace = "ks",
                      .table = "every",
                      .columns = cols,
                      .n_columns = N_NATIVE + 6,
                      .paging_state = state,
                      .paging_len = 2};
    size_t count_at;
    cql_write_rows_begin(out, 4, &m, &count_at);
    buf v;
    buf_init(&v, 0);
    uint8_t x[16];
    cql_put_bytes(out, "ascii", 5);
    put_bigint_value(out, -9000000000LL);
    cql_put_bytes(out, "\x00\x01\xff", 3);
    cql_boolean_encode(1, x);
    cql_put_bytes(out, x, 1);
    put_bigint_value(out, 42);
    cql_decimal_from_text("-12.345", 7, &v);
    put_sized(out, &v);
    cql_double_encode(2.5, x);
    cql_put_bytes(out, x, 8);
    cql_float_encode(-0.5f, x);
    cql_put_bytes(out, x, 4);
    put_int_value(out, -7);
    put_bigint_value(out, 1600000000123LL); /* 2020-09-13T12:26:40.123Z */
    cql_put_bytes(out, "\x12\x3e\x45\x67\xe8\x9b\x42\xd3\xa4\x56\x42\x66\x14\x17\x40\x00", 16);
    cql_put_bytes(out, "h\xc3\xa9", 3);
    buf_reset(&v);
    cql_varint_from_text("-123456789012345678901234567890", 31, &v);
    put_sized(out, &v);
    cql_put_bytes(out, "\x12\x3e\x45\x67\xe8\x9b\x11\xd3\xa4\x56\x42\x66\x14\x17\x40\x00", 16);
    cql_put_bytes(out, "\xc0\xa8\x00\x01", 4);
    cql_date_encode(18628, x); /* 2021-01-01 */
    cql_put_bytes(out, x, 4);
    cql_time_encode(3723000000004LL, x); /* 01:02:03.000000004 */
    cql_put_bytes(out, x, 8);
    cql_smallint_encode(-300, x);
    cql_put_bytes(out, x, 2);
    cql_tinyint_encode(-5, x);
    cql_put_bytes(out, x, 1);
    buf_reset(&v);
    cql_duration_encode(1, 2, 3000000000LL, &v);
    put_sized(out, &v);
    /* [1, 2] */
    buf_reset(&v);
    size_t at = cql_collection_begin(&v);
    cql_int_encode(1, x);
    cql_element_put(&v, x, 4);
    cql_int_encode(2, x);
    cql_element_put(&v, x, 4);
    cql_collection_end(&v, at, 2);
    put_sized(out, &v);
    /* {'a': 1} */
    buf_reset(&v);
    at = cql_collection_begin(&v);
    cql_element_put(&v, "a", 1);
    cql_int_encode(1, x);
    cql_element_put(&v, x, 4);
    cql_collection_end(&v, at, 1);
    put_sized(out, &v);
    /* {'x', 'y'} */
    buf_reset(&v);
    at = cql_collection_begin(&v);
    cql_element_put(&v, "x", 1);
    cql_element_put(&v, "y", 1);
    cql_collection_end(&v, at, 2);
    put_sized(out, &v);
    /* addr {street: 'main', zip: 12345} */
    buf_reset(&v);
    cql_element_put(&v, "main", 4);
    cql_int_encode(12345, x);
    cql_element_put(&v, x, 4);
    put_sized(out, &v);
    /* (3, 'z') */
    buf_reset(&v);
    cql_int_encode(3, x);
    cql_element_put(&v, x, 4);
    cql_element_put(&v, "z", 1);
    put_sized(out, &v);
    cql_put_bytes(out, "\xca\xfe", 2);
    cql_write_rows_count(out, count_at, 1);
    buf_free(&v);
}

/* A fixed set of responses, on streams 1, 2, ...: the Python test knows what each holds. */
static int write_responses(uint8_t version, int lz4)
{
    buf out, env;
    buf_init(&out, 0);
    buf_init(&env, 0);
    int16_t stream = 0;
    for (int k = 0;; k++) {
        stream++;
        uint8_t op = CQL_OP_RESULT;
        const uint8_t trace[16] = {0xa0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        const char *const warn[] = {"first warning", "second"};
        cql_response_extras extras = {.tracing_id = trace, .warnings = warn, .n_warnings = 2};
        const cql_response_extras *x = NULL;
        cql_failure_reason reasons[] = {
            {.endpoint = {.len = 4, .addr = {127, 0, 0, 1}}, .code = 1}};
        const char *const args[] = {"int", "text"};
        const uint8_t id[] = {0xca, 0xfe, 0xba, 0xbe};
        cql_error e = {.message = "m"};
        switch (k) {
        case 0:
            op = CQL_OP_READY;
            break;
        case 1:
            op = CQL_OP_SUPPORTED;
            break;
        case 2:
            op = CQL_OP_AUTHENTICATE;
            break;
        case 3:
            op = CQL_OP_AUTH_CHALLENGE;
            break;
        case 4:
            op = CQL_OP_AUTH_SUCCESS;
            break;
        case 5 ... 14:
            op = CQL_OP_ERROR;
            break;
        case 15 ... 20:
            op = CQL_OP_RESULT;
            break;
        case 21 ... 23:
            op = CQL_OP_EVENT;
            break;
        default:
            goto done;
        }
        if (k == 16) x = &extras;
        if (op == CQL_OP_EVENT) stream = -1;
        buf_reset(&env);
        size_t at = cql_response_begin(&env, version, stream, op, x);
        switch (k) {
        case 1: {
            const char *const cqlv[] = {"3.4.5"};
            const char *const comp[] = {"lz4"};
            const char *const pv[] = {"3/v3", "4/v4", "5/v5"};
            cql_text_multi o[] = {
                {"CQL_VERSION", cqlv, 1}, {"COMPRESSION", comp, 1}, {"PROTOCOL_VERSIONS", pv, 3}};
            cql_write_supported(&env, o, 3);
            break;
        }
        case 2:
            cql_write_authenticate(&env, "org.apache.cassandra.auth.PasswordAuthenticator");
            break;
        case 3:
            cql_write_auth_token(&env, "challenge", 9);
            break;
        case 4:
            cql_write_auth_token(&env, "welcome", 7);
            break;
        case 5:
            e = (cql_error){.code = CQL_ERR_UNAVAILABLE,
                            .message = "Cannot achieve consistency",
                            .consistency = CQL_CL_QUORUM,
                            .required = 3,
                            .alive = 1};
            break;
        case 6:
            e = (cql_error){.code = CQL_ERR_WRITE_TIMEOUT,
                            .message = "wt",
                            .consistency = CQL_CL_LOCAL_QUORUM,
                            .received = 1,
                            .block_for = 2,
                            .write_type = "BATCH_LOG"};
            break;
        case 7:
            e = (cql_error){.code = CQL_ERR_READ_TIMEOUT,
                            .message = "rt",
                            .consistency = CQL_CL_ONE,
                            .received = 0,
                            .block_for = 1,
                            .data_present = 1};
            break;
        case 8:
            e = (cql_error){.code = CQL_ERR_READ_FAILURE,
                            .message = "rf",
                            .consistency = CQL_CL_ALL,
                            .received = 2,
                            .block_for = 3,
                            .reasons = reasons,
                            .n_reasons = 1};
            break;
        case 9:
            e = (cql_error){.code = CQL_ERR_WRITE_FAILURE,
                            .message = "wf",
                            .consistency = CQL_CL_TWO,
                            .received = 1,
                            .block_for = 2,
                            .reasons = reasons,
                            .n_reasons = 1,
                            .write_type = "COUNTER"};
            break;
        case 10:
            e = (cql_error){.code = CQL_ERR_FUNCTION_FAILURE,
                            .message = "ff",
                            .keyspace = "ks",
                            .name = "fn",
                            .arg_types = args,
                            .n_arg_types = 2};
            break;
        case 11:
            e = (cql_error){
                .code = CQL_ERR_ALREADY_EXISTS, .message = "ae", .keyspace = "ks", .name = "tbl"};
            break;
        case 12:
            e = (cql_error){.code = CQL_ERR_UNPREPARED, .message = "up", .id = id, .id_len = 4};
            break;
        case 13:
            e = (cql_error){.code = CQL_ERR_SYNTAX, .message = "line 1:0 no viable alternative"};
            break;
        case 14:
            e = (cql_error){.code = CQL_ERR_PROTOCOL,
                            .message = "Invalid or unsupported protocol version (6); supported "
                                       "versions are (3/v3, 4/v4, 5/v5)"};
            break;
        case 15:
            cql_write_void(&env);
            break;
        case 16:
            write_row_of_every_type(&env);
            break;
        case 17:
            cql_write_set_keyspace(&env, "ks");
            break;
        case 18: {
            const uint8_t pid[] = {1, 2, 3}, rid[] = {4, 5};
            static const uint16_t pk[] = {1, 0};
            cql_column markers[] = {{.name = "b", .type = &t_text}, {.name = "a", .type = &t_int}};
            cql_column rcols[] = {{.name = "v", .type = &t_list}};
            cql_metadata result = {
                .keyspace = "ks", .table = "t", .columns = rcols, .n_columns = 1};
            cql_prepared p = {.id = pid,
                              .id_len = 3,
                              .result_metadata_id = rid,
                              .result_metadata_id_len = 2,
                              .keyspace = "ks",
                              .table = "t",
                              .markers = markers,
                              .n_markers = 2,
                              .pk_indexes = pk,
                              .n_pk = 2,
                              .result = &result};
            cql_write_prepared(&env, version, &p);
            break;
        }
        case 19: {
            cql_schema_change c = {
                .change = "CREATED", .target = "TABLE", .keyspace = "ks", .name = "t"};
            cql_write_schema_change_result(&env, &c);
            break;
        }
        case 20: {
            cql_schema_change c = {.change = "UPDATED",
                                   .target = "FUNCTION",
                                   .keyspace = "ks",
                                   .name = "fn",
                                   .arg_types = args,
                                   .n_arg_types = 2};
            cql_write_schema_change_result(&env, &c);
            break;
        }
        case 21: {
            cql_inet node = {.len = 4, .addr = {127, 0, 0, 1}, .port = 9042};
            cql_write_topology_event(&env, "NEW_NODE", &node);
            break;
        }
        case 22: {
            cql_inet node = {.len = 16, .addr = {[15] = 1}, .port = 9043};
            cql_write_status_event(&env, "DOWN", &node);
            break;
        }
        case 23: {
            cql_schema_change c = {.change = "DROPPED", .target = "KEYSPACE", .keyspace = "ks"};
            cql_write_schema_event(&env, &c);
            break;
        }
        }
        if (op == CQL_OP_ERROR) cql_write_error(&env, version, &e);
        cql_envelope_end(&env, at);
        if (version < 5) {
            if (lz4) cql_envelope_compress_lz4(&env, at);
            buf_append(&out, env.data, env.len);
        } else {
            cql_segments_write(&out, env.data, env.len, lz4);
        }
        if (op == CQL_OP_EVENT) stream = (int16_t)k;
    }
done:
    fwrite(out.data, 1, out.len, stdout);
    buf_free(&out);
    buf_free(&env);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: test_cql_codec --decode-requests v4|plain|lz4 < requests\n"
                    "       test_cql_codec --write-responses 4|5 plain|lz4 > responses\n");
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--decode-requests") == 0) {
        buf in;
        buf_init(&in, 0);
        char tmp[65536];
        size_t n;
        while ((n = fread(tmp, 1, sizeof tmp, stdin)) > 0)
            buf_append(&in, tmp, n);
        int rc = decode_requests(&in, argv[2]);
        buf_free(&in);
        return rc;
    }
    if (argc >= 4 && strcmp(argv[1], "--write-responses") == 0)
        return write_responses((uint8_t)atoi(argv[2]), strcmp(argv[3], "lz4") == 0);
    if (argc != 1) {
        usage();
        return 2;
    }
    test_reader();
    test_reader_maps();
    test_types();
    test_startup();
    test_query();
    test_prepare_execute();
    test_batch();
    test_other_requests();
    test_errors();
    test_results();
    test_other_responses();
    return check_report("test_cql_codec");
}
