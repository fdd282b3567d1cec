/* fuzz_cql_frame.c — libFuzzer harness for the CQL native protocol's codec: envelopes and
 * v5 segments (src/cqlwire/cql_frame.h), request bodies (cql_codec.h), value bytes
 * (cql_value.h).
 *
 * Input: one mode byte, then bytes. Mode 0 parses envelopes one after the other under four
 * sets of rules and decodes each request body (decompressed when flagged); 1 and 2 feed
 * the bytes, in chunks the next byte sizes, to a v5 reader (plain, LZ4) and decode each
 * envelope; 3 parses segments and writes each one again; 4 decodes the rest as the body of
 * the request opcode, version and flags the next bytes pick; 5 reads values and types.
 * Checks crashes, leaks, hangs and the invariants below, not messages' wording. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqlwire/cql_codec.h"
#include "cqlwire/cql_frame.h"
#include "cqlwire/cql_value.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_cql_frame: check failed at line %d: %s\n", __LINE__, #c);        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static const uint8_t request_ops[] = {CQL_OP_STARTUP, CQL_OP_AUTH_RESPONSE, CQL_OP_OPTIONS,
                                      CQL_OP_QUERY,   CQL_OP_PREPARE,       CQL_OP_EXECUTE,
                                      CQL_OP_BATCH,   CQL_OP_REGISTER,      CQL_OP_READY};

/* Decodes env as a request; a refusal must say why, a success must hold in the body. */
static void decode_request(const cql_envelope *env)
{
    buf plain;
    buf_init(&plain, 1 << 20);
    cql_envelope e = *env;
    if (e.flags & CQL_FLAG_COMPRESSION) {
        cql_frame_error err;
        if (cql_body_decompress_lz4(e.body, e.length, 1 << 20, &plain, &err) != 0) {
            CHECK(err.msg[0]);
            buf_free(&plain);
            return;
        }
        e.body = (const uint8_t *)plain.data;
        e.length = (uint32_t)plain.len;
    }
    cql_request req;
    char msg[256];
    int rc = cql_request_decode(&e, &req, msg, sizeof msg);
    CHECK(rc == 0 || (rc == -1 && msg[0]));
    if (rc == 0 && req.opcode == CQL_OP_QUERY) {
        const cql_str q = req.u.query.query;
        CHECK((const uint8_t *)q.p >= e.body && (const uint8_t *)q.p + q.len <= e.body + e.length);
        for (uint16_t i = 0; i < req.u.query.params.values.n; i++) {
            cql_value v = req.u.query.params.values.values[i];
            CHECK(v.len >= CQL_UNSET);
            if (v.len > 0) CHECK(v.p >= e.body && v.p + v.len <= e.body + e.length);
        }
    }
    cql_request_free(&req);
    buf_free(&plain);
}

static void run_envelopes(const uint8_t *p, size_t n)
{
    cql_envelope_rules rules[] = {{0}, {.responses = 1}, {.max_envelope = 64}, {.version = 4}};
    for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
        size_t pos = 0;
        while (pos < n) {
            cql_envelope env;
            cql_frame_error err;
            size_t used;
            cql_parse_result rc = cql_envelope_parse(p + pos, n - pos, &rules[k], &env, &used, &err);
            if (rc == CQL_PARSE_MORE) {
                CHECK(used == 0);
                break;
            }
            if (rc == CQL_PARSE_ERROR) {
                CHECK(err.msg[0] && used == 0);
                if (err.skip == 0 || err.skip > n - pos) break;
                pos += (size_t)err.skip;
                continue;
            }
            CHECK(used == (size_t)env.length + CQL_HEADER_LEN && used <= n - pos);
            CHECK(env.version >= CQL_VERSION_MIN && env.version <= CQL_VERSION_MAX);
            if (rules[k].max_envelope) CHECK(used <= rules[k].max_envelope);
            if (!env.response) decode_request(&env);
            pos += used;
        }
    }
}

static void run_v5(const uint8_t *p, size_t n, int lz4)
{
    if (n < 1) return;
    size_t chunk = (size_t)p[0] * 37 + 1;
    p++;
    n--;
    cql_envelope_rules rules = {.max_envelope = 1 << 18};
    cql_v5_reader r;
    cql_v5_reader_init(&r, lz4, &rules);
    size_t fed = 0, pos = 0;
    for (int guard = 0; guard < 100000; guard++) {
        cql_envelope env;
        cql_frame_error err;
        size_t used;
        cql_parse_result rc = cql_v5_next(&r, p + pos, fed - pos, &used, &env, &err);
        CHECK(used <= fed - pos);
        pos += used;
        if (rc == CQL_PARSE_OK) {
            CHECK(env.version == 5 && env.length + CQL_HEADER_LEN <= rules.max_envelope);
            if (!env.response) decode_request(&env);
            continue;
        }
        if (rc == CQL_PARSE_ERROR) {
            CHECK(err.msg[0]);
            if (err.skip == 0) break;
            continue;
        }
        if (fed == n) break;
        fed = n - fed < chunk ? n : fed + chunk;
    }
    cql_v5_reader_free(&r);
}

static void run_segments(const uint8_t *p, size_t n)
{
    buf scratch, again, scratch2;
    buf_init(&scratch, 0);
    buf_init(&again, 0);
    buf_init(&scratch2, 0);
    for (int lz4 = 0; lz4 < 2; lz4++) {
        size_t pos = 0;
        while (pos < n) {
            cql_segment seg;
            cql_frame_error err;
            size_t used;
            cql_parse_result rc = cql_segment_parse(p + pos, n - pos, lz4, &scratch, &seg, &used, &err);
            if (rc != CQL_PARSE_OK) {
                if (rc == CQL_PARSE_ERROR) CHECK(err.msg[0] && err.skip == 0);
                break;
            }
            CHECK(used <= n - pos && seg.len <= CQL_SEGMENT_MAX_PAYLOAD);
            /* Written again and read back, the payload and flag are the same. */
            buf_reset(&again);
            CHECK(cql_segment_write(&again, seg.payload, seg.len, seg.self_contained, lz4) == 0);
            cql_segment seg2;
            size_t used2;
            CHECK(cql_segment_parse((uint8_t *)again.data, again.len, lz4, &scratch2, &seg2, &used2,
                                    &err) == CQL_PARSE_OK);
            CHECK(used2 == again.len && seg2.len == seg.len &&
                  seg2.self_contained == seg.self_contained &&
                  (seg.len == 0 || memcmp(seg2.payload, seg.payload, seg.len) == 0));
            pos += used;
        }
    }
    buf_free(&scratch);
    buf_free(&again);
    buf_free(&scratch2);
}

static void run_body(const uint8_t *p, size_t n)
{
    if (n < 2) return;
    cql_envelope env = {.version = (uint8_t)(CQL_VERSION_MIN + p[0] % 3),
                        .opcode = request_ops[(p[0] / 3) % sizeof request_ops],
                        .flags = p[1],
                        .length = (uint32_t)(n - 2),
                        .body = p + 2};
    decode_request(&env);
}

static void run_values(const uint8_t *p, size_t n)
{
    buf a, b, c;
    buf_init(&a, 1 << 20);
    buf_init(&b, 1 << 20);
    buf_init(&c, 1 << 20);
    /* varint: text, then bytes from that text, then text again: the same text. */
    if (n > 0 && cql_varint_to_text(p, n, &a) == 0) {
        CHECK(cql_varint_from_text(a.data, a.len, &b) == 0);
        CHECK(cql_varint_to_text((uint8_t *)b.data, b.len, &c) == 0);
        CHECK(a.len == c.len && memcmp(a.data, c.data, a.len) == 0);
        int64_t v;
        if (cql_varint_to_int64(p, n, &v) == 0) {
            char t[32];
            snprintf(t, sizeof t, "%lld", (long long)v);
            CHECK(strcmp(t, a.data) == 0);
        }
    }
    buf_reset(&a);
    buf_reset(&b);
    buf_reset(&c);
    if (cql_decimal_to_text(p, n, &a) == 0) {
        CHECK(cql_decimal_from_text(a.data, a.len, &b) == 0);
        CHECK(cql_decimal_to_text((uint8_t *)b.data, b.len, &c) == 0);
        CHECK(a.len == c.len && memcmp(a.data, c.data, a.len) == 0);
    }
    /* The bytes as text. */
    buf_reset(&a);
    if (cql_decimal_from_text((const char *)p, n, &a) == 0) {
        buf_reset(&b);
        CHECK(cql_decimal_to_text((uint8_t *)a.data, a.len, &b) == 0);
    }
    buf_reset(&a);
    if (cql_varint_from_text((const char *)p, n, &a) == 0) CHECK(a.len > 0);
    int32_t months, days;
    int64_t nanos;
    char why[160];
    if (cql_duration_decode(p, n, &months, &days, &nanos, why, sizeof why) == 0) {
        buf_reset(&a);
        CHECK(cql_duration_encode(months, days, nanos, &a) == 0);
        int32_t m2, d2;
        int64_t n2;
        CHECK(cql_duration_decode((uint8_t *)a.data, a.len, &m2, &d2, &n2, why, sizeof why) == 0);
        CHECK(m2 == months && d2 == days && n2 == nanos);
    } else {
        CHECK(why[0]);
    }
    cql_utf8_valid(p, n);
    for (int pairs = 0; pairs < 2; pairs++) {
        cql_elements e;
        uint32_t count;
        if (cql_collection_open(&e, p, n, pairs, &count) == 0) {
            const uint8_t *v;
            int32_t vlen;
            uint32_t got = 0;
            int rc;
            while ((rc = cql_element_next(&e, &v, &vlen)) == 1) {
                CHECK(vlen == -1 || (v >= p && v + vlen <= p + n));
                got++;
            }
            if (rc == 0) CHECK(got == count * (pairs ? 2u : 1u));
        }
    }
    cql_elements f;
    cql_fields_open(&f, p, n);
    const uint8_t *v;
    int32_t vlen;
    while (cql_element_next(&f, &v, &vlen) == 1)
        CHECK(vlen == -1 || v + vlen <= p + n);
    /* An [option] and an [option list], written again when read. */
    cql_pool pool = {0};
    cql_reader r;
    cql_reader_init(&r, p, n, &pool);
    cql_type *t;
    if (cql_read_type(&r, "the type", &t) == 0) {
        buf_reset(&a);
        CHECK(cql_put_type(&a, t) == 0);
        CHECK(a.len == r.pos && memcmp(a.data, p, a.len) == 0);
    } else {
        CHECK(r.err[0]);
    }
    cql_reader_init(&r, p, n, &pool);
    cql_type **types;
    uint16_t nt;
    cql_read_type_list(&r, "the types", &types, &nt);
    cql_pool_free(&pool);
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t n = size - 1;
    /* An exact-size copy so reads past the end are caught. */
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, data + 1, n);
    switch (data[0] % 6) {
    case 0:
        run_envelopes(copy, n);
        break;
    case 1:
        run_v5(copy, n, 0);
        break;
    case 2:
        run_v5(copy, n, 1);
        break;
    case 3:
        run_segments(copy, n);
        break;
    case 4:
        run_body(copy, n);
        break;
    default:
        run_values(copy, n);
        break;
    }
    free(copy);
    return 0;
}
