/* cql_frame.h — the framing of the CQL native protocol: envelopes and v5 segments.
 *
 * Envelope headers (protocol versions 3 to 5) decoded incrementally from a byte buffer
 * and written, v4's LZ4 body compression, and v5's segments (CRC24 header, CRC32
 * payload, LZ4 or not) with the reassembly of envelopes split over several of them.
 * No sockets and no connection state beyond that reassembly; what the bodies mean is
 * cql_codec.h's. Errors carry what the server answers with (code, stream, message). */
#ifndef QR_CQL_FRAME_H
#define QR_CQL_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* The protocol versions spoken, and the envelope header's layout. */
#define CQL_VERSION_MIN 3
#define CQL_VERSION_MAX 5
#define CQL_RESPONSE_BIT 0x80
#define CQL_HEADER_LEN 9

/* The supported versions as Cassandra names them (SUPPORTED's PROTOCOL_VERSIONS and the
 * message refusing any other version). */
#define CQL_PROTOCOL_VERSIONS_TEXT "3/v3, 4/v4, 5/v5"

/* Envelope header flags. */
#define CQL_FLAG_COMPRESSION 0x01
#define CQL_FLAG_TRACING 0x02
#define CQL_FLAG_CUSTOM_PAYLOAD 0x04
#define CQL_FLAG_WARNING 0x08
#define CQL_FLAG_USE_BETA 0x10

typedef enum cql_opcode {
    CQL_OP_ERROR = 0x00,
    CQL_OP_STARTUP = 0x01,
    CQL_OP_READY = 0x02,
    CQL_OP_AUTHENTICATE = 0x03,
    CQL_OP_OPTIONS = 0x05,
    CQL_OP_SUPPORTED = 0x06,
    CQL_OP_QUERY = 0x07,
    CQL_OP_RESULT = 0x08,
    CQL_OP_PREPARE = 0x09,
    CQL_OP_EXECUTE = 0x0A,
    CQL_OP_REGISTER = 0x0B,
    CQL_OP_EVENT = 0x0C,
    CQL_OP_BATCH = 0x0D,
    CQL_OP_AUTH_CHALLENGE = 0x0E,
    CQL_OP_AUTH_RESPONSE = 0x0F,
    CQL_OP_AUTH_SUCCESS = 0x10,
} cql_opcode;

/* The error codes of the specification (ERROR's first [int]). */
typedef enum cql_error_code {
    CQL_ERR_SERVER = 0x0000,
    CQL_ERR_PROTOCOL = 0x000A,
    CQL_ERR_AUTH = 0x0100,
    CQL_ERR_UNAVAILABLE = 0x1000,
    CQL_ERR_OVERLOADED = 0x1001,
    CQL_ERR_BOOTSTRAPPING = 0x1002,
    CQL_ERR_TRUNCATE = 0x1003,
    CQL_ERR_WRITE_TIMEOUT = 0x1100,
    CQL_ERR_READ_TIMEOUT = 0x1200,
    CQL_ERR_READ_FAILURE = 0x1300,
    CQL_ERR_FUNCTION_FAILURE = 0x1400,
    CQL_ERR_WRITE_FAILURE = 0x1500,
    CQL_ERR_CDC_WRITE_FAILURE = 0x1600,
    CQL_ERR_CAS_WRITE_UNKNOWN = 0x1700,
    CQL_ERR_SYNTAX = 0x2000,
    CQL_ERR_UNAUTHORIZED = 0x2100,
    CQL_ERR_INVALID = 0x2200,
    CQL_ERR_CONFIG = 0x2300,
    CQL_ERR_ALREADY_EXISTS = 0x2400,
    CQL_ERR_UNPREPARED = 0x2500,
} cql_error_code;

/* The opcode's name as the specification spells it ("QUERY"), or NULL for a byte that
 * is no opcode. */
const char *cql_opcode_name(int opcode);
/* 1 for the opcodes a client sends, 0 for those a server sends, -1 for no opcode. */
int cql_opcode_is_request(int opcode);

/* What a decoder could not accept, and how the server answers it: an ERROR of code
 * with msg, in version (the direction bit clear), on stream. skip is how many bytes
 * the bad envelope takes, header included, so that the connection can drop them and
 * read on; 0 when the input cannot be resynchronised and the connection must close
 * after the answer. */
typedef struct cql_frame_error {
    cql_error_code code;
    uint8_t version;
    int16_t stream;
    uint64_t skip;
    char msg[256];
} cql_frame_error;

/* A decoded envelope. body points into the decoder's input (or, for v5, into the
 * reader's memory) and holds length bytes. */
typedef struct cql_envelope {
    uint8_t version; /* 3..5, the direction bit removed */
    int response;    /* the direction bit was set */
    uint8_t flags;
    int16_t stream;
    uint8_t opcode;
    uint32_t length;
    const uint8_t *body;
} cql_envelope;

/* How envelopes are judged. */
typedef struct cql_envelope_rules {
    size_t max_envelope; /* most bytes an envelope may take, header included; 0: 256 MiB */
    int responses;       /* 1: the reader is a client and reads responses; 0: requests */
    uint8_t version;     /* the connection's version once set; 0 while none is */
} cql_envelope_rules;

typedef enum cql_parse_result {
    CQL_PARSE_MORE = 0,   /* the input holds no whole unit yet */
    CQL_PARSE_OK = 1,     /* one unit decoded; *used bytes of input were consumed */
    CQL_PARSE_ERROR = -1, /* *err says why and how to answer */
} cql_parse_result;

/* Decodes the envelope at the start of in[0..len). The version is judged from the first
 * byte alone, the rest once the 9 header bytes are there; an envelope over the rules'
 * size is refused from its header, before its body arrives (err->skip tells how much to
 * drop). On CQL_PARSE_OK, *used = 9 + env->length. */
cql_parse_result cql_envelope_parse(const uint8_t *in, size_t len, const cql_envelope_rules *rules,
                                    cql_envelope *env, size_t *used, cql_frame_error *err);

/* Writes the 9 header bytes of an envelope; the direction bit follows from the opcode. */
void cql_envelope_header(uint8_t out[CQL_HEADER_LEN], uint8_t version, uint8_t flags,
                         int16_t stream, uint8_t opcode, uint32_t length);

/* Starts an envelope at the end of out (header with length 0) and returns its offset,
 * or (size_t)-1 when out is full; cql_envelope_end sets its length from what was
 * appended since. Returns 0, or -1 if the body passes the protocol's 256 MiB. */
size_t cql_envelope_begin(buf *out, uint8_t version, uint8_t flags, int16_t stream, uint8_t opcode);
int cql_envelope_end(buf *out, size_t start);

/* v4 (and v3) body compression, the envelope's flag 0x01: the body is the uncompressed
 * length as a big-endian [int] and one LZ4 block. Compresses the body of the finished
 * envelope at out[start..] in place and sets its flag (an empty body is left as it is):
 * 0, or -1 when out is full. */
int cql_envelope_compress_lz4(buf *out, size_t start);

/* Decompresses such a body into out (emptied first): 0, or -1 with err filled (code
 * PROTOCOL) when it is not one, or when it would pass max bytes. */
int cql_body_decompress_lz4(const uint8_t *body, size_t len, size_t max, buf *out,
                            cql_frame_error *err);

/* ---- v5 segments ---- */

#define CQL_SEGMENT_MAX_PAYLOAD (128 * 1024 - 1)

/* The CRC24 of a segment header: the first n bytes (3 or 5) of the little-endian value
 * bits, from an initial 0x875060 with the polynomial 0x1974F0B. */
uint32_t cql_crc24(uint64_t bits, int n);
/* The CRC32 of a segment payload: zlib's CRC-32 started over the bytes FA 2D 55 CA. */
uint32_t cql_crc32(const void *p, size_t n);

/* A decoded segment; payload points into the input, or into scratch when it was
 * compressed. */
typedef struct cql_segment {
    int self_contained;
    const uint8_t *payload;
    size_t len;
} cql_segment;

/* Decodes the segment at the start of in[0..len), LZ4-compressed when lz4 is set.
 * CQL_PARSE_OK consumes *used bytes; a bad CRC or LZ4 block is CQL_PARSE_ERROR with
 * skip 0 (the connection cannot go on). */
cql_parse_result cql_segment_parse(const uint8_t *in, size_t len, int lz4, buf *scratch,
                                   cql_segment *seg, size_t *used, cql_frame_error *err);

/* Appends one segment carrying payload[0..len) (len <= CQL_SEGMENT_MAX_PAYLOAD). With lz4
 * the payload is compressed unless that does not make it smaller (then its uncompressed
 * length is written as 0). Returns 0, or -1 when out is full or len is too long. */
int cql_segment_write(buf *out, const void *payload, size_t len, int self_contained, int lz4);

/* Appends payload as segments: one self-contained segment when it fits, else as many
 * non-self-contained ones as it takes (for one envelope larger than a segment). */
int cql_segments_write(buf *out, const void *payload, size_t len, int lz4);

/* Reads the envelopes of a v5 connection out of its segments. A self-contained segment
 * holds whole envelopes only; a large envelope comes alone in a run of segments that
 * are not, reassembled here up to the rules' size. */
typedef struct cql_v5_reader {
    int lz4;
    cql_envelope_rules rules;
    buf segment;    /* the payload of the self-contained segment being read */
    size_t seg_pos; /* bytes of it already returned as envelopes */
    buf large;      /* a large envelope's bytes so far */
    uint64_t need;  /* its total length once its header is in, else 0 */
    uint64_t drop;  /* bytes still to drop of a large envelope that was refused */
    buf scratch;    /* decompression */
} cql_v5_reader;

/* Starts a reader (the rules are copied; rules->version is set to 5 when 0). */
void cql_v5_reader_init(cql_v5_reader *r, int lz4, const cql_envelope_rules *rules);
void cql_v5_reader_free(cql_v5_reader *r);

/* Returns the next envelope: consumes *used bytes of in (also on CQL_PARSE_MORE: drop
 * them and call again when more arrive). env->body stays valid until the next call. An
 * envelope that is refused on its own (too large, unknown opcode) is CQL_PARSE_ERROR
 * with skip nonzero: the reader drops it itself and reading may go on. skip 0 means the
 * connection must close after the answer. */
cql_parse_result cql_v5_next(cql_v5_reader *r, const uint8_t *in, size_t len, size_t *used,
                             cql_envelope *env, cql_frame_error *err);

/* The envelope cql_v5_next returned last is done with (its body is no longer valid): a
 * large envelope's buffer is freed now rather than kept for the connection's next one.
 * cql_v5_next does it too, first. */
void cql_v5_envelope_done(cql_v5_reader *r);

#endif
