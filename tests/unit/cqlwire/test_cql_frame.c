/* test_cql_frame.c — CQL envelopes and v5 segments (src/cqlwire/cql_frame.h).
 *
 * Header vectors written from the v4/v5 specifications, every prefix of an input fed to
 * the incremental decoders, Cassandra's refusals, v4 LZ4 bodies, CRC24/CRC32 values
 * computed by the Python driver's cassandra/segment.py, and the reassembly of large
 * envelopes. With an option it is the harness of tests/server/test_cql_wire.py: stdin to
 * stdout through one codec (see usage()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqlwire/cql_frame.h"

#include "check.h"

static cql_envelope_rules server_rules = {.max_envelope = 0, .responses = 0, .version = 0};

static void test_envelope_options(void)
{
    /* OPTIONS, v4, stream 1, empty body. */
    const uint8_t in[] = {0x04, 0x00, 0x00, 0x01, 0x05, 0x00, 0x00, 0x00, 0x00, 0xAA};
    cql_envelope env;
    cql_frame_error err;
    size_t used = 99;
    for (size_t n = 0; n < 9; n++) {
        CHECK(cql_envelope_parse(in, n, &server_rules, &env, &used, &err) == CQL_PARSE_MORE,
              "prefix %zu", n);
        CHECK_THAT(used == 0);
    }
    CHECK_THAT(cql_envelope_parse(in, sizeof in, &server_rules, &env, &used, &err) == CQL_PARSE_OK);
    CHECK_THAT(used == 9);
    CHECK_THAT(env.version == 4 && !env.response && env.flags == 0 && env.stream == 1);
    CHECK_THAT(env.opcode == CQL_OP_OPTIONS && env.length == 0);

    /* QUERY with a 3-byte body, negative-looking stream 0x8001 read as a signed short. */
    const uint8_t q[] = {0x05, 0x02, 0x80, 0x01, 0x07, 0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c'};
    for (size_t n = 0; n < sizeof q; n++)
        CHECK(cql_envelope_parse(q, n, &server_rules, &env, &used, &err) == CQL_PARSE_MORE,
              "prefix %zu", n);
    CHECK_THAT(cql_envelope_parse(q, sizeof q, &server_rules, &env, &used, &err) == CQL_PARSE_OK);
    CHECK_THAT(used == 12 && env.version == 5 && env.flags == CQL_FLAG_TRACING);
    CHECK_THAT(env.stream == -32767 && env.length == 3 && memcmp(env.body, "abc", 3) == 0);
}

static void test_envelope_versions(void)
{
    cql_envelope env;
    cql_frame_error err;
    size_t used;
    /* The version is judged from the first byte alone. */
    const uint8_t v6[] = {0x06};
    CHECK_THAT(cql_envelope_parse(v6, 1, &server_rules, &env, &used, &err) == CQL_PARSE_ERROR);
    CHECK_STR(err.msg, "Invalid or unsupported protocol version (6); supported versions are "
                       "(3/v3, 4/v4, 5/v5)");
    CHECK_THAT(err.code == CQL_ERR_PROTOCOL && err.skip == 0 && err.version == 5);
    /* Retired versions are answered in their own version, with their one-byte stream. */
    const uint8_t v2[] = {0x02, 0x00, 0x07, 0x05, 0, 0, 0, 0};
    CHECK_THAT(cql_envelope_parse(v2, sizeof v2, &server_rules, &env, &used, &err) ==
               CQL_PARSE_ERROR);
    CHECK_THAT(err.version == 2 && err.stream == 7);
    CHECK_STR(err.msg, "Invalid or unsupported protocol version (2); supported versions are "
                       "(3/v3, 4/v4, 5/v5)");
    /* A DSE client's version 65 (0x41), with the response bit masked off 0xC1. */
    const uint8_t dse[] = {0xC1, 0x00, 0x00, 0x03};
    CHECK_THAT(cql_envelope_parse(dse, sizeof dse, &server_rules, &env, &used, &err) ==
               CQL_PARSE_ERROR);
    CHECK_THAT(strstr(err.msg, "version (65)") != NULL && err.stream == 3);
    const uint8_t v0[] = {0x00};
    CHECK_THAT(cql_envelope_parse(v0, 1, &server_rules, &env, &used, &err) == CQL_PARSE_ERROR);

    /* Once a connection has a version, another one is refused with it. */
    cql_envelope_rules v4 = {.version = 4};
    const uint8_t v3[] = {0x03, 0x00, 0x00, 0x09, 0x05, 0, 0, 0, 0};
    CHECK_THAT(cql_envelope_parse(v3, sizeof v3, &v4, &env, &used, &err) == CQL_PARSE_ERROR);
    CHECK_STR(err.msg, "Invalid message version. Got 3 but previous messages on this connection "
                       "had version 4");
    CHECK_THAT(err.version == 4 && err.stream == 9 && err.skip == 9);
}

static void test_envelope_refusals(void)
{
    cql_envelope env;
    cql_frame_error err;
    size_t used;
    /* 0x04 is no opcode; the envelope's length says how much to drop. */
    const uint8_t op4[] = {0x04, 0x00, 0x00, 0x05, 0x04, 0x00, 0x00, 0x00, 0x02};
    CHECK_THAT(cql_envelope_parse(op4, sizeof op4, &server_rules, &env, &used, &err) ==
               CQL_PARSE_ERROR);
    CHECK_STR(err.msg, "Unknown opcode 4");
    CHECK_THAT(err.code == CQL_ERR_PROTOCOL && err.stream == 5 && err.skip == 11 &&
               err.version == 4);
    const uint8_t op99[] = {0x04, 0x00, 0x00, 0x05, 0x63, 0x00, 0x00, 0x00, 0x00};
    CHECK_THAT(cql_envelope_parse(op99, 9, &server_rules, &env, &used, &err) == CQL_PARSE_ERROR);
    CHECK_STR(err.msg, "Unknown opcode 99");

    /* A server opcode sent as a request, and a request sent with the response bit. */
    const uint8_t ready[] = {0x04, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0};
    CHECK_THAT(cql_envelope_parse(ready, 9, &server_rules, &env, &used, &err) == CQL_PARSE_ERROR);
    CHECK_STR(err.msg,
              "Wrong protocol direction (expected RESPONSE, got REQUEST) for opcode 2 (READY)");
    const uint8_t query[] = {0x84, 0x00, 0x00, 0x01, 0x07, 0, 0, 0, 0};
    CHECK_THAT(cql_envelope_parse(query, 9, &server_rules, &env, &used, &err) == CQL_PARSE_ERROR);
    CHECK_STR(err.msg,
              "Wrong protocol direction (expected REQUEST, got RESPONSE) for opcode 7 (QUERY)");
    /* A client reading responses accepts the second and refuses the first. */
    cql_envelope_rules client = {.responses = 1};
    const uint8_t ready_resp[] = {0x84, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0};
    CHECK_THAT(cql_envelope_parse(ready_resp, 9, &client, &env, &used, &err) == CQL_PARSE_OK);
    CHECK_THAT(env.response && env.opcode == CQL_OP_READY);
    CHECK_THAT(cql_envelope_parse(query, 9, &client, &env, &used, &err) == CQL_PARSE_ERROR);

    /* Too big: refused from the header, before the body arrives. */
    cql_envelope_rules small = {.max_envelope = 100};
    const uint8_t big[] = {0x04, 0x00, 0x00, 0x2A, 0x07, 0x00, 0x00, 0x03, 0xE8};
    CHECK_THAT(cql_envelope_parse(big, 9, &small, &env, &used, &err) == CQL_PARSE_ERROR);
    CHECK_STR(err.msg, "Request is too big: length 1009 exceeds maximum allowed length 100.");
    CHECK_THAT(err.code == CQL_ERR_INVALID && err.stream == 42 && err.skip == 1009);
    /* Exactly at the cap is accepted. */
    const uint8_t at[] = {0x04, 0x00, 0x00, 0x2A, 0x07, 0x00, 0x00, 0x00, 91};
    CHECK_THAT(cql_envelope_parse(at, 9, &small, &env, &used, &err) == CQL_PARSE_MORE);
    /* The protocol's own limit of 256 MiB holds whatever the rules say. */
    cql_envelope_rules huge = {.max_envelope = (size_t)1 << 40};
    const uint8_t max[] = {0x04, 0x00, 0x00, 0x01, 0x07, 0xFF, 0xFF, 0xFF, 0xFF};
    CHECK_THAT(cql_envelope_parse(max, 9, &huge, &env, &used, &err) == CQL_PARSE_ERROR);
    CHECK_THAT(err.skip == 0xFFFFFFFFull + 9);
}

static void test_envelope_write(void)
{
    buf b;
    buf_init(&b, 0);
    size_t at = cql_envelope_begin(&b, 4, 0, 3, CQL_OP_READY);
    CHECK_THAT(at == 0);
    CHECK_THAT(cql_envelope_end(&b, at) == 0);
    const uint8_t ready[] = {0x84, 0x00, 0x00, 0x03, 0x02, 0, 0, 0, 0};
    CHECK_THAT(b.len == 9 && memcmp(b.data, ready, 9) == 0);
    /* A request keeps the direction bit clear; events go on stream -1. */
    at = cql_envelope_begin(&b, 5, 0, 0, CQL_OP_OPTIONS);
    CHECK_THAT(at == 9 && (uint8_t)b.data[9] == 0x05);
    at = cql_envelope_begin(&b, 4, 0, -1, CQL_OP_EVENT);
    buf_append(&b, "xyz", 3);
    cql_envelope_end(&b, at);
    const uint8_t event[] = {0x84, 0x00, 0xFF, 0xFF, 0x0C, 0, 0, 0, 3, 'x', 'y', 'z'};
    CHECK_THAT(memcmp(b.data + at, event, sizeof event) == 0);
    /* A full buffer refuses the header. */
    buf small;
    buf_init(&small, 5);
    CHECK_THAT(cql_envelope_begin(&small, 4, 0, 0, CQL_OP_READY) == (size_t)-1);
    buf_free(&small);
    buf_free(&b);
    CHECK_STR(cql_opcode_name(CQL_OP_AUTH_SUCCESS), "AUTH_SUCCESS");
    CHECK_THAT(cql_opcode_name(4) == NULL && cql_opcode_name(17) == NULL &&
               cql_opcode_name(-1) == NULL);
    CHECK_THAT(cql_opcode_is_request(CQL_OP_BATCH) == 1 &&
               cql_opcode_is_request(CQL_OP_RESULT) == 0);
    CHECK_THAT(cql_opcode_is_request(4) == -1);
}

static void test_body_lz4(void)
{
    buf b, out;
    buf_init(&b, 0);
    buf_init(&out, 0);
    size_t at = cql_envelope_begin(&b, 4, CQL_FLAG_TRACING, 7, CQL_OP_RESULT);
    for (int i = 0; i < 200; i++)
        buf_puts(&b, "rows rows rows ");
    size_t plain = b.len - at - 9;
    cql_envelope_end(&b, at);
    CHECK_THAT(cql_envelope_compress_lz4(&b, at) == 0);
    CHECK_THAT((uint8_t)b.data[1] == (CQL_FLAG_TRACING | CQL_FLAG_COMPRESSION));
    uint32_t len = be32_read(b.data + 5);
    CHECK(len == b.len - 9 && len < plain, "compressed length %u of %zu", len, plain);
    CHECK_THAT(be32_read(b.data + 9) == plain); /* the uncompressed length, big-endian */
    cql_frame_error err;
    CHECK_THAT(cql_body_decompress_lz4((uint8_t *)b.data + 9, len, 1 << 20, &out, &err) == 0);
    CHECK_THAT(out.len == plain && memcmp(out.data, "rows rows rows rows", 19) == 0);
    /* Larger than allowed, truncated, corrupt, too short. */
    CHECK_THAT(cql_body_decompress_lz4((uint8_t *)b.data + 9, len, 100, &out, &err) == -1);
    CHECK_THAT(strstr(err.msg, "more than the 100 allowed") != NULL && out.len == 0);
    CHECK_THAT(cql_body_decompress_lz4((uint8_t *)b.data + 9, len - 3, 1 << 20, &out, &err) == -1);
    CHECK_THAT(err.code == CQL_ERR_PROTOCOL);
    b.data[9 + 3] = (char)(b.data[9 + 3] + 1); /* claims one byte more */
    CHECK_THAT(cql_body_decompress_lz4((uint8_t *)b.data + 9, len, 1 << 20, &out, &err) == -1);
    CHECK_THAT(cql_body_decompress_lz4((uint8_t *)"\0\0", 2, 1 << 20, &out, &err) == -1);
    /* An empty body stays as it is, without the flag. */
    buf_reset(&b);
    at = cql_envelope_begin(&b, 4, 0, 0, CQL_OP_READY);
    cql_envelope_end(&b, at);
    CHECK_THAT(cql_envelope_compress_lz4(&b, at) == 0);
    CHECK_THAT(b.len == 9 && b.data[1] == 0);
    /* A compressed empty body (length 0, empty block) decompresses to nothing. */
    CHECK_THAT(cql_body_decompress_lz4((const uint8_t *)"\0\0\0\0\0", 5, 10, &out, &err) == 0);
    CHECK_THAT(out.len == 0);
    buf_free(&b);
    buf_free(&out);
}

static void test_crc(void)
{
    /* Values from the Python driver's compute_crc24 / compute_crc32. */
    CHECK_THAT(cql_crc24(0, 3) == 0x7de777);
    CHECK_THAT(cql_crc24(5 | (1 << 17), 3) == 0x9a9919);
    CHECK_THAT(cql_crc24(0x123456789aULL, 5) == 0x40d313);
    CHECK_THAT(cql_crc32("", 0) == 0x44777ed3);
    CHECK_THAT(cql_crc32("hello", 5) == 0xb60e8074);
}

static void test_segment_vector(void)
{
    /* An OPTIONS envelope in one uncompressed self-contained segment, as the Python
     * driver's SegmentCodec().encode writes it. */
    const uint8_t want[] = {0x09, 0x00, 0x02, 0xa4, 0xc8, 0xc1, 0x04, 0x00, 0x00, 0x01,
                            0x05, 0x00, 0x00, 0x00, 0x00, 0xf6, 0x41, 0x0f, 0x91};
    const uint8_t env[] = {0x04, 0x00, 0x00, 0x01, 0x05, 0x00, 0x00, 0x00, 0x00};
    buf b, scratch;
    buf_init(&b, 0);
    buf_init(&scratch, 0);
    CHECK_THAT(cql_segments_write(&b, env, sizeof env, 0) == 0);
    CHECK_THAT(b.len == sizeof want && memcmp(b.data, want, sizeof want) == 0);
    cql_segment seg;
    cql_frame_error err;
    size_t used;
    for (size_t n = 0; n < sizeof want; n++)
        CHECK(cql_segment_parse(want, n, 0, &scratch, &seg, &used, &err) == CQL_PARSE_MORE,
              "prefix %zu", n);
    CHECK_THAT(cql_segment_parse(want, sizeof want, 0, &scratch, &seg, &used, &err) ==
               CQL_PARSE_OK);
    CHECK_THAT(used == sizeof want && seg.self_contained && seg.len == 9);
    CHECK_THAT(memcmp(seg.payload, env, 9) == 0);
    /* One flipped bit in the header, in the payload, in the trailer. */
    uint8_t bad[sizeof want];
    size_t spots[] = {0, 4, 9, 17};
    for (size_t i = 0; i < 4; i++) {
        memcpy(bad, want, sizeof want);
        bad[spots[i]] ^= 0x10;
        cql_parse_result rc = cql_segment_parse(bad, sizeof bad, 0, &scratch, &seg, &used, &err);
        if (spots[i] == 0) {
            /* The length changed too: the CRC still fails first. */
            CHECK_THAT(rc == CQL_PARSE_ERROR);
        }
        CHECK(rc == CQL_PARSE_ERROR && err.skip == 0 && strstr(err.msg, "CRC mismatch"),
              "flip at %zu: rc %d %s", spots[i], rc, err.msg);
    }
    buf_free(&b);
    buf_free(&scratch);
}

static void fill(uint8_t *p, size_t n, unsigned seed, int compressible)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = compressible ? (uint8_t)("cassandra"[(i / 7) % 9]) : (uint8_t)(seed >> 16);
    }
}

static void test_segment_round_trips(void)
{
    static uint8_t payload[CQL_SEGMENT_MAX_PAYLOAD];
    size_t sizes[] = {0, 1, 100, 5000, CQL_SEGMENT_MAX_PAYLOAD};
    buf b, scratch;
    buf_init(&b, 0);
    buf_init(&scratch, 0);
    for (int lz4 = 0; lz4 < 2; lz4++) {
        for (int comp = 0; comp < 2; comp++) {
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                size_t n = sizes[k];
                fill(payload, n, (unsigned)k, comp);
                buf_reset(&b);
                for (int sc = 0; sc < 2; sc++)
                    CHECK_THAT(cql_segment_write(&b, payload, n, sc, lz4) == 0);
                size_t hl = lz4 ? 8 : 6;
                if (lz4 && comp && n >= 100)
                    CHECK(b.len < 2 * (hl + n + 4), "lz4 %zu bytes did not shrink", n);
                if (!lz4) CHECK_THAT(b.len == 2 * (hl + n + 4));
                size_t pos = 0;
                for (int sc = 0; sc < 2; sc++) {
                    cql_segment seg;
                    cql_frame_error err;
                    size_t used;
                    cql_parse_result rc = cql_segment_parse((uint8_t *)b.data + pos, b.len - pos,
                                                            lz4, &scratch, &seg, &used, &err);
                    CHECK(rc == CQL_PARSE_OK && seg.self_contained == sc && seg.len == n &&
                              (n == 0 || memcmp(seg.payload, payload, n) == 0),
                          "lz4 %d comp %d size %zu sc %d: rc %d", lz4, comp, n, sc, rc);
                    pos += used;
                }
                CHECK_THAT(pos == b.len);
            }
        }
    }
    /* A payload over the maximum is refused. */
    CHECK_THAT(cql_segment_write(&b, payload, CQL_SEGMENT_MAX_PAYLOAD + 1, 1, 0) == -1);
    /* A compressed segment whose LZ4 block is corrupt (CRCs recomputed around it). */
    fill(payload, 1000, 1, 1);
    buf_reset(&b);
    cql_segment_write(&b, payload, 1000, 1, 1);
    uint64_t bits = 0;
    for (int i = 4; i >= 0; i--)
        bits = (bits << 8) | (uint8_t)b.data[i];
    size_t plen = bits & CQL_SEGMENT_MAX_PAYLOAD;
    memset(b.data + 8, 0xff, plen > 8 ? 8 : plen);
    uint32_t crc = cql_crc32(b.data + 8, plen);
    for (int i = 0; i < 4; i++)
        b.data[8 + plen + i] = (char)(crc >> (8 * i));
    cql_segment seg;
    cql_frame_error err;
    size_t used;
    CHECK_THAT(cql_segment_parse((uint8_t *)b.data, b.len, 1, &scratch, &seg, &used, &err) ==
               CQL_PARSE_ERROR);
    CHECK_THAT(strstr(err.msg, "LZ4") != NULL);
    buf_free(&b);
    buf_free(&scratch);
}

/* An envelope of opcode op with a body of n bytes made by fill(). */
static void put_envelope(buf *b, uint8_t version, int16_t stream, uint8_t op, size_t n)
{
    size_t at = cql_envelope_begin(b, version, 0, stream, op);
    buf_reserve(b, n);
    fill((uint8_t *)b->data + b->len, n, (unsigned)stream, 0);
    b->len += n;
    cql_envelope_end(b, at);
}

/* Feeds in to a v5 reader chunk bytes at a time; stores the streams of the envelopes
 * read (and checks each body) and returns how many, or -1 on an error (kept in *err). */
static int read_all(cql_v5_reader *r, const buf *in, size_t chunk, int16_t *streams, int max,
                    cql_frame_error *err)
{
    buf pending;
    buf_init(&pending, 0);
    int count = 0;
    size_t fed = 0;
    int result = 0;
    for (;;) {
        cql_envelope env;
        size_t used;
        cql_parse_result rc =
            cql_v5_next(r, (uint8_t *)pending.data, pending.len, &used, &env, err);
        if (used) {
            memmove(pending.data, pending.data + used, pending.len - used);
            pending.len -= used;
        }
        if (rc == CQL_PARSE_OK) {
            static uint8_t want[400000];
            fill(want, env.length, (unsigned)env.stream, 0);
            CHECK(memcmp(env.body, want, env.length) == 0, "body of stream %d", env.stream);
            if (count < max) streams[count] = env.stream;
            count++;
            continue;
        }
        if (rc == CQL_PARSE_ERROR) {
            if (err->skip == 0) {
                result = -1;
                break;
            }
            if (count < max) streams[count] = (int16_t)(-1000 - err->stream);
            count++;
            continue;
        }
        if (fed == in->len) break;
        size_t n = in->len - fed < chunk ? in->len - fed : chunk;
        buf_append(&pending, in->data + fed, n);
        fed += n;
    }
    if (result == 0) CHECK_THAT(pending.len == 0);
    buf_free(&pending);
    return result ? result : count;
}

static void test_v5_reader(void)
{
    for (int lz4 = 0; lz4 < 2; lz4++) {
        /* Three small envelopes in one segment, one of 300 000 bytes over three segments,
         * then one more small one. */
        buf small, wire;
        buf_init(&small, 0);
        buf_init(&wire, 0);
        put_envelope(&small, 5, 1, CQL_OP_QUERY, 10);
        put_envelope(&small, 5, 2, CQL_OP_OPTIONS, 0);
        put_envelope(&small, 5, 3, CQL_OP_EXECUTE, 1000);
        CHECK_THAT(cql_segments_write(&wire, small.data, small.len, lz4) == 0);
        buf large;
        buf_init(&large, 0);
        put_envelope(&large, 5, 4, CQL_OP_BATCH, 300000);
        CHECK_THAT(cql_segments_write(&wire, large.data, large.len, lz4) == 0);
        buf_reset(&small);
        put_envelope(&small, 5, 5, CQL_OP_QUERY, 20);
        cql_segments_write(&wire, small.data, small.len, lz4);
        size_t chunks[] = {1, 7, 4096, 1 << 20};
        for (size_t c = 0; c < 4; c++) {
            cql_v5_reader r;
            cql_v5_reader_init(&r, lz4, NULL);
            int16_t streams[8];
            cql_frame_error err;
            int n = read_all(&r, &wire, chunks[c], streams, 8, &err);
            CHECK(n == 5, "lz4 %d chunk %zu: %d envelopes (%s)", lz4, chunks[c], n,
                  n < 0 ? err.msg : "");
            for (int i = 0; i < 5 && i < n; i++)
                CHECK_THAT(streams[i] == i + 1);
            cql_v5_reader_free(&r);
        }

        /* A large envelope over the reader's cap is refused from its header; its other
         * segments are dropped and the next envelope is read. */
        cql_envelope_rules capped = {.max_envelope = 200000};
        cql_v5_reader r;
        cql_v5_reader_init(&r, lz4, &capped);
        int16_t streams[8];
        cql_frame_error err;
        int n = read_all(&r, &wire, 4096, streams, 8, &err);
        CHECK(n == 5, "capped: %d", n);
        CHECK_THAT(n == 5 && streams[3] == -1004 && streams[4] == 5);
        cql_v5_reader_free(&r);

        /* A v4 envelope inside v5 segments. */
        buf_reset(&wire);
        buf_reset(&small);
        put_envelope(&small, 4, 9, CQL_OP_QUERY, 3);
        cql_segments_write(&wire, small.data, small.len, lz4);
        cql_v5_reader_init(&r, lz4, NULL);
        n = read_all(&r, &wire, 100, streams, 8, &err);
        CHECK_THAT(n == 1 && streams[0] == -1009);
        cql_v5_reader_free(&r);

        /* A self-contained segment that ends inside an envelope. */
        buf_reset(&wire);
        buf_reset(&small);
        put_envelope(&small, 5, 9, CQL_OP_QUERY, 3);
        cql_segment_write(&wire, small.data, small.len - 1, 1, lz4);
        cql_v5_reader_init(&r, lz4, NULL);
        n = read_all(&r, &wire, 100, streams, 8, &err);
        CHECK_THAT(n == -1 && strstr(err.msg, "ends inside an envelope"));
        cql_v5_reader_free(&r);

        /* A self-contained segment in the middle of a large envelope's segments. */
        buf_reset(&wire);
        cql_segment_write(&wire, large.data, CQL_SEGMENT_MAX_PAYLOAD, 0, lz4);
        cql_segment_write(&wire, small.data, small.len, 1, lz4);
        cql_v5_reader_init(&r, lz4, NULL);
        n = read_all(&r, &wire, 100, streams, 8, &err);
        CHECK_THAT(n == -1 && strstr(err.msg, "inside a large envelope"));
        cql_v5_reader_free(&r);

        /* Non-self-contained segments carrying more than their one envelope. */
        buf_reset(&wire);
        buf_reset(&small);
        put_envelope(&small, 5, 1, CQL_OP_QUERY, 10);
        put_envelope(&small, 5, 2, CQL_OP_QUERY, 10);
        cql_segment_write(&wire, small.data, small.len, 0, lz4);
        cql_v5_reader_init(&r, lz4, NULL);
        n = read_all(&r, &wire, 100, streams, 8, &err);
        CHECK_THAT(n == -1 && strstr(err.msg, "more than it"));
        cql_v5_reader_free(&r);

        /* A bad CRC ends the connection. */
        buf_reset(&wire);
        cql_segments_write(&wire, small.data, small.len, lz4);
        wire.data[wire.len - 1] ^= 1;
        cql_v5_reader_init(&r, lz4, NULL);
        n = read_all(&r, &wire, 100, streams, 8, &err);
        CHECK_THAT(n == -1 && strstr(err.msg, "CRC mismatch on segment payload"));
        cql_v5_reader_free(&r);
        buf_free(&small);
        buf_free(&large);
        buf_free(&wire);
    }
}

/* A large envelope is gathered into one buffer sized from its header, and that buffer is
 * freed once the envelope is done with, not kept for the connection's next one. */
static void test_v5_large_buffer(void)
{
    buf large, wire;
    buf_init(&large, 0);
    buf_init(&wire, 0);
    put_envelope(&large, 5, 4, CQL_OP_QUERY, 300000);
    CHECK_THAT(cql_segments_write(&wire, large.data, large.len, 0) == 0);
    cql_v5_reader r;
    cql_v5_reader_init(&r, 0, NULL);
    cql_envelope env;
    cql_frame_error err;
    size_t used, first = CQL_SEGMENT_MAX_PAYLOAD + 6 + 4; /* header, payload, CRC32 */
    CHECK_THAT(cql_v5_next(&r, (uint8_t *)wire.data, first, &used, &env, &err) == CQL_PARSE_MORE &&
               used == first);
    CHECK(r.large.cap > large.len && r.large.cap <= 2 * large.len,
          "room for the whole envelope from its first segment: cap %zu for %zu", r.large.cap,
          large.len);
    char *at_first = r.large.data;
    size_t pos = used;
    cql_parse_result rc = CQL_PARSE_MORE;
    while (rc == CQL_PARSE_MORE && pos < wire.len) {
        rc = cql_v5_next(&r, (uint8_t *)wire.data + pos, wire.len - pos, &used, &env, &err);
        pos += used;
    }
    CHECK_THAT(rc == CQL_PARSE_OK && env.stream == 4 && env.length == 300000);
    CHECK(r.large.data == at_first, "gathered without moving");
    CHECK_THAT(memcmp(env.body, large.data + CQL_HEADER_LEN, env.length) == 0);
    cql_v5_envelope_done(&r);
    CHECK(r.large.data == NULL && r.large.cap == 0 && r.large.len == 0,
          "buffer freed after its envelope: cap %zu", r.large.cap);
    /* The reader goes on with a small envelope after it. */
    buf_reset(&wire);
    buf_reset(&large);
    put_envelope(&large, 5, 5, CQL_OP_QUERY, 20);
    cql_segments_write(&wire, large.data, large.len, 0);
    CHECK_THAT(cql_v5_next(&r, (uint8_t *)wire.data, wire.len, &used, &env, &err) == CQL_PARSE_OK &&
               env.stream == 5 && r.large.cap == 0);
    cql_v5_reader_free(&r);
    buf_free(&large);
    buf_free(&wire);
}

/* ---- the harness of tests/server/test_cql_wire.py ---- */

static int slurp(buf *b)
{
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, stdin)) > 0)
        if (buf_append(b, tmp, n) != 0) return -1;
    return 0;
}

static void put_hex(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
}

static int harness(const char *mode, const char *arg)
{
    int lz4 = arg && strcmp(arg, "lz4") == 0;
    buf in, out;
    buf_init(&in, 0);
    buf_init(&out, 0);
    int rc = 0;
    if (slurp(&in) != 0) return 2;
    const uint8_t *p = (const uint8_t *)in.data;
    cql_frame_error err;
    if (strcmp(mode, "--encode-segments") == 0) {
        rc = cql_segments_write(&out, in.data, in.len, lz4);
        fwrite(out.data, 1, out.len, stdout);
    } else if (strcmp(mode, "--decode-segments") == 0) {
        buf scratch;
        buf_init(&scratch, 0);
        size_t pos = 0;
        while (pos < in.len) {
            cql_segment seg;
            size_t used;
            cql_parse_result r =
                cql_segment_parse(p + pos, in.len - pos, lz4, &scratch, &seg, &used, &err);
            if (r != CQL_PARSE_OK) {
                fprintf(stderr, "%s\n", r == CQL_PARSE_MORE ? "incomplete segment" : err.msg);
                rc = 1;
                break;
            }
            printf("segment %d ", seg.self_contained);
            put_hex(seg.payload, seg.len);
            printf("\n");
            pos += used;
        }
        buf_free(&scratch);
    } else if (strcmp(mode, "--read-envelopes") == 0) {
        cql_v5_reader r;
        cql_v5_reader_init(&r, lz4, NULL);
        size_t pos = 0;
        for (;;) {
            cql_envelope env;
            size_t used;
            cql_parse_result x = cql_v5_next(&r, p + pos, in.len - pos, &used, &env, &err);
            pos += used;
            if (x == CQL_PARSE_MORE) {
                if (pos != in.len) rc = 1, fprintf(stderr, "incomplete segment\n");
                break;
            }
            if (x == CQL_PARSE_ERROR) {
                fprintf(stderr, "%s\n", err.msg);
                rc = 1;
                break;
            }
            printf("envelope %u %u %d %u ", env.version, env.flags, env.stream, env.opcode);
            put_hex(env.body, env.length);
            printf("\n");
        }
        cql_v5_reader_free(&r);
    } else if (strcmp(mode, "--compress-body") == 0) {
        size_t at = cql_envelope_begin(&out, 4, 0, 0, CQL_OP_RESULT);
        buf_append(&out, in.data, in.len);
        cql_envelope_end(&out, at);
        rc = cql_envelope_compress_lz4(&out, at);
        fwrite(out.data + 9, 1, out.len - 9, stdout);
    } else if (strcmp(mode, "--decompress-body") == 0) {
        rc = cql_body_decompress_lz4(p, in.len, 1 << 28, &out, &err);
        if (rc)
            fprintf(stderr, "%s\n", err.msg);
        else
            fwrite(out.data, 1, out.len, stdout);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        rc = 2;
    }
    buf_free(&in);
    buf_free(&out);
    return rc ? (rc < 0 ? 1 : rc) : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: test_cql_frame [--encode-segments|--decode-segments|--read-envelopes "
                    "plain|lz4 | --compress-body | --decompress-body] < input\n");
}

int main(int argc, char **argv)
{
    if (argc >= 2) {
        if (argv[1][0] != '-') {
            usage();
            return 2;
        }
        return harness(argv[1], argc >= 3 ? argv[2] : NULL);
    }
    test_envelope_options();
    test_envelope_versions();
    test_envelope_refusals();
    test_envelope_write();
    test_body_lz4();
    test_crc();
    test_segment_vector();
    test_segment_round_trips();
    test_v5_reader();
    test_v5_large_buffer();
    return check_report("test_cql_frame");
}
