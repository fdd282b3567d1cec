/* cql_frame.c — envelopes and v5 segments of the CQL native protocol.
 *
 * Header checks in the order Cassandra makes them (version from the first byte, then
 * opcode, direction, connection version and size from the whole header), v4's LZ4
 * bodies, and v5's CRC-protected segments with the reassembly of large envelopes.
 * Message bodies are opaque here. */
#include "cqlwire/cql_frame.h"

#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define PROTOCOL_MAX_ENVELOPE ((size_t)256 << 20)

static const char *const opcode_names[] = {
    [CQL_OP_ERROR] = "ERROR",
    [CQL_OP_STARTUP] = "STARTUP",
    [CQL_OP_READY] = "READY",
    [CQL_OP_AUTHENTICATE] = "AUTHENTICATE",
    [CQL_OP_OPTIONS] = "OPTIONS",
    [CQL_OP_SUPPORTED] = "SUPPORTED",
    [CQL_OP_QUERY] = "QUERY",
    [CQL_OP_RESULT] = "RESULT",
    [CQL_OP_PREPARE] = "PREPARE",
    [CQL_OP_EXECUTE] = "EXECUTE",
    [CQL_OP_REGISTER] = "REGISTER",
    [CQL_OP_EVENT] = "EVENT",
    [CQL_OP_BATCH] = "BATCH",
    [CQL_OP_AUTH_CHALLENGE] = "AUTH_CHALLENGE",
    [CQL_OP_AUTH_RESPONSE] = "AUTH_RESPONSE",
    [CQL_OP_AUTH_SUCCESS] = "AUTH_SUCCESS",
};

const char *cql_opcode_name(int opcode)
{
    if (opcode < 0 || opcode >= (int)(sizeof opcode_names / sizeof opcode_names[0])) return NULL;
    return opcode_names[opcode];
}

int cql_opcode_is_request(int opcode)
{
    switch (opcode) {
    case CQL_OP_STARTUP:
    case CQL_OP_OPTIONS:
    case CQL_OP_QUERY:
    case CQL_OP_PREPARE:
    case CQL_OP_EXECUTE:
    case CQL_OP_REGISTER:
    case CQL_OP_BATCH:
    case CQL_OP_AUTH_RESPONSE:
        return 1;
    default:
        return cql_opcode_name(opcode) ? 0 : -1;
    }
}

static cql_parse_result fail(cql_frame_error *err, cql_error_code code, uint8_t version,
                             int16_t stream, uint64_t skip, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static cql_parse_result fail(cql_frame_error *err, cql_error_code code, uint8_t version,
                             int16_t stream, uint64_t skip, const char *fmt, ...)
{
    err->code = code;
    err->version = version;
    err->stream = stream;
    err->skip = skip;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return CQL_PARSE_ERROR;
}

/* The version an answer to a refused version goes in: Cassandra answers the retired
 * versions 1 and 2 in their own version, anything else in its newest. */
static uint8_t answer_version(unsigned v)
{
    return v == 1 || v == 2 ? (uint8_t)v : CQL_VERSION_MAX;
}

cql_parse_result cql_envelope_parse(const uint8_t *in, size_t len, const cql_envelope_rules *rules,
                                    cql_envelope *env, size_t *used, cql_frame_error *err)
{
    *used = 0;
    if (len == 0) return CQL_PARSE_MORE;
    unsigned version = in[0] & 0x7f;
    int response = (in[0] & CQL_RESPONSE_BIT) != 0;
    if (version < CQL_VERSION_MIN || version > CQL_VERSION_MAX) {
        /* Versions 1 and 2 have a one-byte stream at offset 2; later ones two bytes. */
        int16_t stream = 0;
        if (version < 3 && len >= 3)
            stream = (int8_t)in[2];
        else if (version >= 3 && len >= 4)
            stream = (int16_t)be16_read(in + 2);
        return fail(err, CQL_ERR_PROTOCOL, answer_version(version), stream, 0,
                    "Invalid or unsupported protocol version (%u); supported versions are (%s)",
                    version, CQL_PROTOCOL_VERSIONS_TEXT);
    }
    if (len < CQL_HEADER_LEN) return CQL_PARSE_MORE;
    uint8_t flags = in[1];
    int16_t stream = (int16_t)be16_read(in + 2);
    uint8_t opcode = in[4];
    uint32_t length = be32_read(in + 5);
    uint64_t total = (uint64_t)length + CQL_HEADER_LEN;
    size_t max = rules && rules->max_envelope ? rules->max_envelope : PROTOCOL_MAX_ENVELOPE;
    if (max > PROTOCOL_MAX_ENVELOPE) max = PROTOCOL_MAX_ENVELOPE;
    uint8_t answer = rules && rules->version ? rules->version : (uint8_t)version;

    int is_request = cql_opcode_is_request(opcode);
    if (is_request < 0)
        return fail(err, CQL_ERR_PROTOCOL, answer, stream, total, "Unknown opcode %u", opcode);
    int want_responses = rules ? rules->responses : 0;
    if (response != !is_request || response != want_responses) {
        /* Cassandra names the direction the opcode has and the one the version byte says. */
        return fail(err, CQL_ERR_PROTOCOL, answer, stream, total,
                    "Wrong protocol direction (expected %s, got %s) for opcode %u (%s)",
                    is_request ? "REQUEST" : "RESPONSE", response ? "RESPONSE" : "REQUEST", opcode,
                    cql_opcode_name(opcode));
    }
    if (rules && rules->version && rules->version != version)
        return fail(err, CQL_ERR_PROTOCOL, rules->version, stream, total,
                    "Invalid message version. Got %u but previous messages on this connection "
                    "had version %u",
                    version, rules->version);
    if (total > max)
        return fail(err, CQL_ERR_INVALID, answer, stream, total,
                    "Request is too big: length %llu exceeds maximum allowed length %zu.",
                    (unsigned long long)total, max);
    if (len < total) return CQL_PARSE_MORE;

    env->version = (uint8_t)version;
    env->response = response;
    env->flags = flags;
    env->stream = stream;
    env->opcode = opcode;
    env->length = length;
    env->body = in + CQL_HEADER_LEN;
    *used = (size_t)total;
    return CQL_PARSE_OK;
}

void cql_envelope_header(uint8_t out[CQL_HEADER_LEN], uint8_t version, uint8_t flags,
                         int16_t stream, uint8_t opcode, uint32_t length)
{
    out[0] = (uint8_t)(version | (cql_opcode_is_request(opcode) == 1 ? 0 : CQL_RESPONSE_BIT));
    out[1] = flags;
    out[2] = (uint8_t)((uint16_t)stream >> 8);
    out[3] = (uint8_t)stream;
    out[4] = opcode;
    out[5] = (uint8_t)(length >> 24);
    out[6] = (uint8_t)(length >> 16);
    out[7] = (uint8_t)(length >> 8);
    out[8] = (uint8_t)length;
}

size_t cql_envelope_begin(buf *out, uint8_t version, uint8_t flags, int16_t stream, uint8_t opcode)
{
    uint8_t h[CQL_HEADER_LEN];
    cql_envelope_header(h, version, flags, stream, opcode, 0);
    size_t start = out->len;
    if (buf_append(out, h, sizeof h) != 0) return (size_t)-1;
    return start;
}

static void put_be32_at(buf *out, size_t at, uint32_t v)
{
    uint8_t *p = (uint8_t *)out->data + at;
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

int cql_envelope_end(buf *out, size_t start)
{
    size_t body = out->len - start - CQL_HEADER_LEN;
    if (body > PROTOCOL_MAX_ENVELOPE - CQL_HEADER_LEN) return -1;
    put_be32_at(out, start + 5, (uint32_t)body);
    return 0;
}

int cql_envelope_compress_lz4(buf *out, size_t start)
{
    size_t body_at = start + CQL_HEADER_LEN;
    size_t n = out->len - body_at;
    if (n == 0) return 0; /* nothing to gain; drivers expect no flag on an empty body */
    if (n > (size_t)LZ4_MAX_INPUT_SIZE) return -1;
    int bound = LZ4_compressBound((int)n);
    buf tmp;
    buf_init(&tmp, out->max);
    if (buf_reserve(&tmp, 4 + (size_t)bound) != 0) {
        buf_free(&tmp);
        return -1;
    }
    uint8_t *t = (uint8_t *)tmp.data;
    t[0] = (uint8_t)(n >> 24);
    t[1] = (uint8_t)(n >> 16);
    t[2] = (uint8_t)(n >> 8);
    t[3] = (uint8_t)n;
    int c = LZ4_compress_default(out->data + body_at, (char *)t + 4, (int)n, bound);
    if (c <= 0) {
        buf_free(&tmp);
        return -1;
    }
    out->len = body_at;
    int rc = buf_append(out, t, 4 + (size_t)c);
    buf_free(&tmp);
    if (rc != 0) return -1;
    out->data[start + 1] = (char)(out->data[start + 1] | CQL_FLAG_COMPRESSION);
    return cql_envelope_end(out, start);
}

int cql_body_decompress_lz4(const uint8_t *body, size_t len, size_t max, buf *out,
                            cql_frame_error *err)
{
    buf_reset(out);
    if (len < 4) {
        fail(err, CQL_ERR_PROTOCOL, 0, 0, 0,
             "Compressed body of %zu bytes is too short for its uncompressed length", len);
        return -1;
    }
    uint32_t n = be32_read(body);
    if (n > max || n > (uint32_t)LZ4_MAX_INPUT_SIZE || len - 4 > (size_t)LZ4_MAX_INPUT_SIZE) {
        fail(err, CQL_ERR_PROTOCOL, 0, 0, 0,
             "Compressed body would decompress to %u bytes, more than the %zu allowed", n, max);
        return -1;
    }
    if (buf_reserve(out, n) != 0) {
        fail(err, CQL_ERR_SERVER, 0, 0, 0, "Out of memory decompressing a body of %u bytes", n);
        return -1;
    }
    int got = LZ4_decompress_safe((const char *)body + 4, out->data, (int)(len - 4), (int)n);
    if (got < 0 || (uint32_t)got != n) {
        fail(err, CQL_ERR_PROTOCOL, 0, 0, 0,
             "Compressed body is not a valid LZ4 block of %u uncompressed bytes", n);
        return -1;
    }
    out->len = n;
    out->data[n] = '\0';
    return 0;
}

/* ---- v5 segments ---- */

#define CRC24_INIT 0x875060u
#define CRC24_POLY 0x1974F0Bu

uint32_t cql_crc24(uint64_t bits, int n)
{
    uint32_t crc = CRC24_INIT;
    for (int i = 0; i < n; i++) {
        crc ^= (uint32_t)(bits & 0xff) << 16;
        bits >>= 8;
        for (int k = 0; k < 8; k++) {
            crc <<= 1;
            if (crc & 0x1000000u) crc ^= CRC24_POLY;
        }
    }
    return crc;
}

uint32_t cql_crc32(const void *p, size_t n)
{
    static const uint8_t initial[4] = {0xFA, 0x2D, 0x55, 0xCA};
    uLong crc = crc32(0L, initial, sizeof initial);
    const uint8_t *b = p;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, b, chunk);
        b += chunk;
        n -= chunk;
    }
    return (uint32_t)crc;
}

static uint64_t le_read(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

cql_parse_result cql_segment_parse(const uint8_t *in, size_t len, int lz4, buf *scratch,
                                   cql_segment *seg, size_t *used, cql_frame_error *err)
{
    *used = 0;
    int hl = lz4 ? 5 : 3;
    if (len < (size_t)hl + 3) return CQL_PARSE_MORE;
    uint64_t bits = le_read(in, hl);
    uint32_t got = (uint32_t)le_read(in + hl, 3);
    uint32_t want = cql_crc24(bits, hl);
    if (got != want)
        return fail(err, CQL_ERR_PROTOCOL, CQL_VERSION_MAX, 0, 0,
                    "CRC mismatch on segment header: received %06x, computed %06x", got, want);
    size_t plen = (size_t)(bits & CQL_SEGMENT_MAX_PAYLOAD);
    size_t ulen = 0;
    int self_contained;
    if (lz4) {
        ulen = (size_t)((bits >> 17) & CQL_SEGMENT_MAX_PAYLOAD);
        self_contained = (int)((bits >> 34) & 1);
    } else {
        self_contained = (int)((bits >> 17) & 1);
    }
    size_t total = (size_t)hl + 3 + plen + 4;
    if (len < total) return CQL_PARSE_MORE;
    const uint8_t *payload = in + hl + 3;
    uint32_t crc_got = (uint32_t)le_read(payload + plen, 4);
    uint32_t crc_want = cql_crc32(payload, plen);
    if (crc_got != crc_want)
        return fail(err, CQL_ERR_PROTOCOL, CQL_VERSION_MAX, 0, 0,
                    "CRC mismatch on segment payload: received %08x, computed %08x", crc_got,
                    crc_want);
    seg->self_contained = self_contained;
    if (lz4 && ulen > 0) {
        buf_reset(scratch);
        if (buf_reserve(scratch, ulen) != 0)
            return fail(err, CQL_ERR_SERVER, CQL_VERSION_MAX, 0, 0,
                        "Out of memory decompressing a segment of %zu bytes", ulen);
        int n = LZ4_decompress_safe((const char *)payload, scratch->data, (int)plen, (int)ulen);
        if (n < 0 || (size_t)n != ulen)
            return fail(err, CQL_ERR_PROTOCOL, CQL_VERSION_MAX, 0, 0,
                        "Segment payload is not a valid LZ4 block of %zu uncompressed bytes", ulen);
        scratch->len = ulen;
        seg->payload = (const uint8_t *)scratch->data;
        seg->len = ulen;
    } else {
        seg->payload = payload;
        seg->len = plen;
    }
    *used = total;
    return CQL_PARSE_OK;
}

int cql_segment_write(buf *out, const void *payload, size_t len, int self_contained, int lz4)
{
    if (len > CQL_SEGMENT_MAX_PAYLOAD) return -1;
    size_t start = out->len;
    int hl = lz4 ? 5 : 3;
    size_t room = (size_t)hl + 3 + (size_t)LZ4_COMPRESSBOUND(len) + 4;
    if (buf_reserve(out, room) != 0) return -1;
    uint8_t *at = (uint8_t *)out->data + start;
    uint8_t *body = at + hl + 3;
    size_t blen = len, ulen = 0;
    if (lz4 && len > 0) {
        int c = LZ4_compress_default(payload, (char *)body, (int)len, LZ4_COMPRESSBOUND(len));
        if (c > 0 && (size_t)c < len) {
            blen = (size_t)c;
            ulen = len;
        }
    }
    if (ulen == 0 && len > 0) memcpy(body, payload, len); /* sent as it is */
    uint64_t sc = self_contained ? 1 : 0;
    uint64_t bits =
        lz4 ? (uint64_t)blen | ((uint64_t)ulen << 17) | (sc << 34) : (uint64_t)blen | (sc << 17);
    uint32_t hcrc = cql_crc24(bits, hl);
    for (int i = 0; i < hl; i++)
        at[i] = (uint8_t)(bits >> (8 * i));
    for (int i = 0; i < 3; i++)
        at[hl + i] = (uint8_t)(hcrc >> (8 * i));
    uint32_t pcrc = cql_crc32(body, blen);
    for (int i = 0; i < 4; i++)
        body[blen + i] = (uint8_t)(pcrc >> (8 * i));
    out->len = start + (size_t)hl + 3 + blen + 4;
    out->data[out->len] = '\0';
    return 0;
}

int cql_segments_write(buf *out, const void *payload, size_t len, int lz4)
{
    if (len <= CQL_SEGMENT_MAX_PAYLOAD) return cql_segment_write(out, payload, len, 1, lz4);
    size_t start = out->len;
    const uint8_t *p = payload;
    for (size_t off = 0; off < len; off += CQL_SEGMENT_MAX_PAYLOAD) {
        size_t n = len - off < CQL_SEGMENT_MAX_PAYLOAD ? len - off : CQL_SEGMENT_MAX_PAYLOAD;
        if (cql_segment_write(out, p + off, n, 0, lz4) != 0) {
            out->len = start;
            if (out->data) out->data[start] = '\0';
            return -1;
        }
    }
    return 0;
}

void cql_v5_reader_init(cql_v5_reader *r, int lz4, const cql_envelope_rules *rules)
{
    memset(r, 0, sizeof *r);
    r->lz4 = lz4;
    if (rules) r->rules = *rules;
    if (!r->rules.version) r->rules.version = 5;
    size_t max = r->rules.max_envelope ? r->rules.max_envelope : PROTOCOL_MAX_ENVELOPE;
    buf_init(&r->segment, CQL_SEGMENT_MAX_PAYLOAD + 1);
    buf_init(&r->scratch, CQL_SEGMENT_MAX_PAYLOAD + 1);
    buf_init(&r->large, max + 1);
}

void cql_v5_reader_free(cql_v5_reader *r)
{
    buf_free(&r->segment);
    buf_free(&r->scratch);
    buf_free(&r->large);
}

void cql_v5_envelope_done(cql_v5_reader *r)
{
    if (r->need == 0 && r->large.len >= CQL_HEADER_LEN) buf_free(&r->large);
}

/* The next envelope of the self-contained segment being read: each must be whole. */
static cql_parse_result next_in_segment(cql_v5_reader *r, cql_envelope *env, cql_frame_error *err)
{
    const uint8_t *p = (const uint8_t *)r->segment.data + r->seg_pos;
    size_t left = r->segment.len - r->seg_pos;
    size_t n;
    cql_parse_result rc = cql_envelope_parse(p, left, &r->rules, env, &n, err);
    if (rc == CQL_PARSE_OK) {
        r->seg_pos += n;
        return rc;
    }
    if (rc == CQL_PARSE_ERROR) {
        /* A refused envelope whose end is inside this segment is dropped, and reading
         * goes on; one that claims to run past it leaves nothing to resynchronise on. */
        if (err->skip && err->skip <= left) {
            r->seg_pos += (size_t)err->skip;
        } else {
            err->skip = 0;
            r->seg_pos = r->segment.len;
        }
        return rc;
    }
    r->seg_pos = r->segment.len;
    return fail(err, CQL_ERR_PROTOCOL, 5, left >= 4 ? (int16_t)be16_read(p + 2) : 0, 0,
                "A self-contained segment ends inside an envelope (%zu bytes of it left)", left);
}

/* Adds a non-self-contained segment's payload to the large envelope being assembled. */
static cql_parse_result add_to_large(cql_v5_reader *r, const cql_segment *seg, cql_envelope *env,
                                     cql_frame_error *err)
{
    const uint8_t *p = seg->payload;
    size_t n = seg->len;
    if (r->drop) {
        if (n > r->drop)
            return fail(err, CQL_ERR_PROTOCOL, 5, 0, 0,
                        "Segments of a large envelope carry %zu bytes more than it",
                        n - (size_t)r->drop);
        r->drop -= n;
        return CQL_PARSE_MORE;
    }
    if (r->need == 0) {
        /* The header may itself be split; gather its 9 bytes first. */
        size_t take = r->large.len + n < CQL_HEADER_LEN ? n : CQL_HEADER_LEN - r->large.len;
        if (buf_append(&r->large, p, take) != 0)
            return fail(err, CQL_ERR_SERVER, 5, 0, 0, "Out of memory reading an envelope");
        p += take;
        n -= take;
        if (r->large.len < CQL_HEADER_LEN) return CQL_PARSE_MORE;
        size_t used;
        cql_parse_result rc = cql_envelope_parse((const uint8_t *)r->large.data, r->large.len,
                                                 &r->rules, env, &used, err);
        if (rc == CQL_PARSE_ERROR) {
            /* The rest of the refused envelope is dropped as its segments arrive. */
            uint64_t rest = err->skip ? err->skip - CQL_HEADER_LEN : 0;
            buf_reset(&r->large);
            if (!err->skip || n > rest) {
                err->skip = 0;
                return rc;
            }
            r->drop = rest - n;
            return rc;
        }
        r->need = (uint64_t)be32_read(r->large.data + 5) + CQL_HEADER_LEN;
        /* Its whole length at once: gathered in one buffer, not in buffers that double. */
        if (buf_reserve(&r->large, (size_t)r->need - r->large.len) != 0)
            return fail(err, CQL_ERR_SERVER, 5, (int16_t)be16_read(r->large.data + 2), 0,
                        "Out of memory reading an envelope");
    }
    if (r->large.len + n > r->need)
        return fail(err, CQL_ERR_PROTOCOL, 5, (int16_t)be16_read(r->large.data + 2), 0,
                    "Segments of a large envelope carry %zu bytes more than it",
                    (size_t)(r->large.len + n - r->need));
    if (buf_append(&r->large, p, n) != 0)
        return fail(err, CQL_ERR_SERVER, 5, 0, 0, "Out of memory reading an envelope");
    if (r->large.len < r->need) return CQL_PARSE_MORE;
    size_t used;
    cql_parse_result rc = cql_envelope_parse((const uint8_t *)r->large.data, r->large.len,
                                             &r->rules, env, &used, err);
    r->need = 0;
    return rc;
}

cql_parse_result cql_v5_next(cql_v5_reader *r, const uint8_t *in, size_t len, size_t *used,
                             cql_envelope *env, cql_frame_error *err)
{
    static const uint8_t nothing[1];
    *used = 0;
    if (!in) in = nothing; /* an empty input may come as NULL */
    cql_v5_envelope_done(r);
    for (;;) {
        if (r->seg_pos < r->segment.len) return next_in_segment(r, env, err);
        cql_segment seg;
        size_t n;
        cql_parse_result rc =
            cql_segment_parse(in + *used, len - *used, r->lz4, &r->scratch, &seg, &n, err);
        if (rc != CQL_PARSE_OK) return rc;
        *used += n;
        if (seg.self_contained) {
            if (r->large.len || r->drop)
                return fail(err, CQL_ERR_PROTOCOL, 5, 0, 0,
                            "A self-contained segment came inside a large envelope's segments");
            buf_reset(&r->segment);
            r->seg_pos = 0;
            if (buf_append(&r->segment, seg.payload, seg.len) != 0)
                return fail(err, CQL_ERR_SERVER, 5, 0, 0, "Out of memory reading a segment");
            continue;
        }
        rc = add_to_large(r, &seg, env, err);
        if (rc != CQL_PARSE_MORE) return rc;
    }
}
