/* keycodec.h — order-preserving byte encodings of key values, as tuples of typed components
 * (S, N or B), each ascending or descending. The same codec serves a table's partition and
 * sort keys, multi-attribute GSI keys, and Cassandra-style composite keys with per-column
 * CLUSTERING ORDER. */
#ifndef QR_KEYCODEC_H
#define QR_KEYCODEC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

/* Encodings are self-delimiting and memcmp-ordered: the byte order of two encoded tuples
 * equals DynamoDB's order of the values, component by component (S by UTF-8 bytes, B by
 * unsigned bytes, N numerically), with a shorter value sorting before any longer value it
 * prefixes. Values are jansson AttributeValues ({"S":"…"}, {"N":"…"}, {"B":"<base64>"})
 * already validated by value.c.
 *
 * Appends the encoding of one S, N or B AttributeValue. desc complements the bytes so
 * the component sorts in reverse. Fails (ValidationException) on any other type. */
int keycodec_append(buf *out, const json_t *av, int desc, qr_err *err);

/* Decodes one component encoded by keycodec_append, of the given type ('S', 'N' or
 * 'B'), from p; sets *av to a new AttributeValue and returns the bytes consumed, or 0
 * if the bytes are not a valid encoding. */
size_t keycodec_decode(const uint8_t *p, size_t len, char type, int desc, json_t **av);

/* 64-bit hash of an encoded partition key, used to order partitions as DynamoDB's
 * Scan does and to split Scan segments (xxHash XXH3_64bits). */
uint64_t keycodec_hash(const void *encoded, size_t len);

#endif
