/* wire.h — the small pieces of DynamoDB's JSON wire protocol that sit around a call.
 *
 * The X-Amz-Target header's operation, the x-amz-crc32 checksum, request ids, the error
 * documents the HTTP layer itself answers with, and the table names a log line shows.
 * Pure functions with no I/O and no engine calls, so they are unit-tested on their own.
 * The request and response bodies proper are the engine's (qr_call). */
#ifndef QR_WIRE_H
#define QR_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* The only API version quarry serves (the prefix of X-Amz-Target). */
#define WIRE_API_PREFIX "DynamoDB_20120810"
/* The DynamoDB Streams API, served on the same endpoint. */
#define WIRE_STREAMS_API_PREFIX "DynamoDBStreams_20120810"
#define WIRE_JSON_CONTENT_TYPE "application/x-amz-json-1.0"
/* AWS's message for an X-Amz-Target that names no operation it serves. */
#define WIRE_UNKNOWN_OP_MESSAGE "The requested operation is not recognized by the service."

/* The operation named by an X-Amz-Target value ("DynamoDB_20120810.PutItem"): the
 * matching entry of ops (a NULL-terminated list, e.g. qr_operations()), or for the
 * Streams API ("DynamoDBStreams_20120810.GetRecords") of stream_ops (either list may be
 * NULL); NULL when the header is absent, malformed, of another API version or names no
 * operation of its API. Spaces and tabs around the value are no part of it. */
const char *wire_operation(const char *target, const char *const *ops,
                           const char *const *stream_ops);

/* Whether DynamoDB answers a success of op with an empty body rather than a JSON
 * document: TagResource and UntagResource do. */
int wire_empty_success(const char *op);

/* CRC32 (zlib's) of the body, as DynamoDB sends it in x-amz-crc32. */
uint32_t wire_crc32(const void *data, size_t len);

/* A fresh 52-character request id of [A-Z0-9], NUL-terminated, like DynamoDB's. */
void wire_request_id(char out[53]);

/* The error document for type (a short name such as "SerializationException") with
 * DynamoDB's namespace prefix and the text in the member DynamoDB spells for it
 * (err_message_member); msg may be NULL for a document with no message, as DynamoDB
 * answers a body that is not JSON and a target that names no operation. */
int wire_error_body(buf *out, const char *type, const char *msg);

/* Content codings of request and response bodies (RFC 9110's "gzip" and "deflate",
 * the latter being the zlib format), which DynamoDB reads and writes. */
typedef enum wire_coding { WIRE_IDENTITY, WIRE_GZIP, WIRE_DEFLATE } wire_coding;

/* DynamoDB compresses a response (for a client that accepts it) from this size on. */
#define WIRE_COMPRESS_MIN 4096

/* The coding a Content-Encoding value names ("gzip", "deflate" or "identity", in any
 * case, spaces around), or -1 for any other. */
int wire_content_coding(const char *v, size_t len);

/* Decodes in (coded as c) into out: 0, -1 if in is not a complete stream of that coding
 * (gzip may be several members one after the other; nothing may follow the last), or -2
 * if the decoded body would pass max bytes. out is left empty on failure. */
int wire_decode(wire_coding c, const char *in, size_t len, size_t max, buf *out);

/* Encodes in with coding c (not identity) into out: 0, or -1 when out of memory. */
int wire_encode(wire_coding c, const char *in, size_t len, buf *out);

/* The coding to answer a client with, read from its Accept-Encoding value (NULL when it
 * sent none) as DynamoDB reads it: the acceptable coding (q > 0) of highest q, ties going
 * to the one listed first; "*" stands for the codings not listed, gzip before deflate; a
 * q that is not a number counts as 1, above 1 as 1, at or below 0 as refused; the first q
 * of an entry counts; "identity" and unknown codings are ignored. */
wire_coding wire_accept_coding(const char *v, size_t len);

/* DescribeEndpoints' answer (body) with every endpoint's Address set to host, the
 * address the client reached (DynamoDB names its own endpoint there, and clients send
 * requests to it). 0, or -1 when body is not such an answer or out of memory. */
int wire_endpoints_at(const char *body, size_t len, const char *host, size_t host_len, buf *out);

/* Whether body is one well-formed JSON document (used to order errors as DynamoDB
 * does: a malformed body is a SerializationException before anything else is judged). */
int wire_json_valid(const char *body, size_t len, char *why, size_t whylen);

#endif
