/* cql_value.h — CQL values to and from the bytes of the native protocol.
 *
 * Pure functions for each type's serialisation (section 6 of the v4 specification):
 * fixed-width integers, varint and decimal (with decimal text), IEEE floats, booleans,
 * uuids, timestamps, dates, times, durations, inet addresses, UTF-8 and ASCII checks,
 * and the [int]-counted collections and [bytes] fields of lists, sets, maps, tuples and
 * UDTs. No type metadata ([option]s are cql_codec.h's) and no CQL text literals. */
#ifndef QR_CQL_VALUE_H
#define QR_CQL_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Fixed-width values: the encoders write exactly the type's size; the decoders return 0,
 * or -1 when len is not that size. */
void cql_int_encode(int32_t v, uint8_t out[4]);
int cql_int_decode(const uint8_t *p, size_t len, int32_t *v);
void cql_bigint_encode(int64_t v, uint8_t out[8]); /* bigint, counter, timestamp (ms) */
int cql_bigint_decode(const uint8_t *p, size_t len, int64_t *v);
void cql_smallint_encode(int16_t v, uint8_t out[2]);
int cql_smallint_decode(const uint8_t *p, size_t len, int16_t *v);
void cql_tinyint_encode(int8_t v, uint8_t out[1]);
int cql_tinyint_decode(const uint8_t *p, size_t len, int8_t *v);
void cql_float_encode(float v, uint8_t out[4]);
int cql_float_decode(const uint8_t *p, size_t len, float *v);
void cql_double_encode(double v, uint8_t out[8]);
int cql_double_decode(const uint8_t *p, size_t len, double *v);
/* boolean: one byte, 0 false and anything else true; encodes 1 for true. */
void cql_boolean_encode(int v, uint8_t out[1]);
int cql_boolean_decode(const uint8_t *p, size_t len, int *v);
/* uuid and timeuuid: 16 bytes as they are; timeuuid also requires version 1. */
int cql_uuid_decode(const uint8_t *p, size_t len, uint8_t out[16]);
int cql_timeuuid_decode(const uint8_t *p, size_t len, uint8_t out[16]);

/* date: days since 1970-01-01 (may be negative) as the unsigned count centred at 2^31. */
void cql_date_encode(int64_t days, uint8_t out[4]); /* days within [-2^31, 2^31) */
int cql_date_decode(const uint8_t *p, size_t len, int64_t *days);
/* time: nanoseconds since midnight, 0 to 86399999999999; -1 outside that range too. */
#define CQL_TIME_MAX_NS 86399999999999LL
int cql_time_encode(int64_t ns, uint8_t out[8]);
int cql_time_decode(const uint8_t *p, size_t len, int64_t *ns);

/* inet: 4 bytes (IPv4) or 16 (IPv6). The decoder sets *family to 4 or 6. */
int cql_inet_decode(const uint8_t *p, size_t len, uint8_t out[16], int *family);

/* ---- variable-length integers ---- */

/* [unsigned vint] and [vint] (zig-zag): the encoders return the bytes written (1 to 9);
 * the decoders the bytes read, or 0 when p[0..len) holds no whole vint. */
#define CQL_VINT_MAX 9
int cql_uvint_encode(uint64_t v, uint8_t out[CQL_VINT_MAX]);
size_t cql_uvint_decode(const uint8_t *p, size_t len, uint64_t *v);
int cql_vint_encode(int64_t v, uint8_t out[CQL_VINT_MAX]);
size_t cql_vint_decode(const uint8_t *p, size_t len, int64_t *v);

/* duration: three vints, months and days within 32 bits, nanoseconds within 64, all of
 * one sign. The decoder returns 0, or -1 with why (NUL-terminated, at most whylen). */
int cql_duration_encode(int32_t months, int32_t days, int64_t nanos, buf *out);
int cql_duration_decode(const uint8_t *p, size_t len, int32_t *months, int32_t *days,
                        int64_t *nanos, char *why, size_t whylen);

/* varint: minimal two's complement, big-endian. From and to an int64 (the decoder
 * returns -1 when the value does not fit or len is 0). */
int cql_varint_from_int64(int64_t v, buf *out);
int cql_varint_to_int64(const uint8_t *p, size_t len, int64_t *v);
/* Any length, from and to decimal text ("-123"): 0, or -1 when the text is not an
 * optional '-' and digits, when len is 0, or when out is full. At most CQL_NUMBER_DIGITS
 * digits either way. */
#define CQL_NUMBER_DIGITS 4096
int cql_varint_from_text(const char *text, size_t len, buf *out);
int cql_varint_to_text(const uint8_t *p, size_t len, buf *out);

/* decimal: an [int] scale and the varint of the unscaled value, meaning
 * unscaled * 10^-scale. Text is plain ("-12.50", "0.001") when 0 <= scale <= 64 and
 * "<unscaled>E<-scale>" otherwise; the parser takes [-]digits[.digits][(e|E)[+-]digits]
 * and keeps the scale the text shows ("1.50" has scale 2). */
int cql_decimal_from_text(const char *text, size_t len, buf *out);
int cql_decimal_to_text(const uint8_t *p, size_t len, buf *out);

/* Text checks: UTF-8 (no overlong forms, surrogates or code points past U+10FFFF) for
 * text/varchar, bytes below 0x80 for ascii. 1 when valid. */
int cql_utf8_valid(const uint8_t *p, size_t len);
int cql_ascii_valid(const uint8_t *p, size_t len);

/* ---- collections, tuples and UDTs ---- */

/* Writing: cql_collection_begin appends a count of 0 and returns where it is (or
 * (size_t)-1 when out is full); elements follow as [bytes] (cql_element_put, len -1 for
 * null); cql_collection_end writes the count (elements; pairs for a map). Tuples and
 * UDTs are only the [bytes] fields, with no count. */
size_t cql_collection_begin(buf *out);
int cql_element_put(buf *out, const void *p, int32_t len);
void cql_collection_end(buf *out, size_t at, uint32_t count);

/* Reading: a cursor over a value's bytes. */
typedef struct cql_elements {
    const uint8_t *p;
    size_t len, pos;
    uint32_t left; /* elements still to read; for tuples and UDTs, unused */
} cql_elements;

/* Opens a list or set (pairs = 0) or a map (pairs = 1): reads the [int] count, which
 * must be >= 0 and fit in the bytes (4 per element at least). 0 or -1. *count is the
 * number of elements, or of key-value pairs for a map. */
int cql_collection_open(cql_elements *e, const uint8_t *p, size_t len, int pairs, uint32_t *count);
/* Opens the fields of a tuple or UDT. */
void cql_fields_open(cql_elements *e, const uint8_t *p, size_t len);
/* The next [bytes]: 1 with *v and *vlen (-1 for null), 0 when none is left (for
 * fields: the value ended; for collections: all counted elements read and no byte
 * left over), -1 when malformed (truncated, negative length other than -1, or trailing
 * bytes after the last element). */
int cql_element_next(cql_elements *e, const uint8_t **v, int32_t *vlen);

#endif
