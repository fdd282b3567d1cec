/* value.h — typed CQL values: a literal of the statement turned into a type's wire bytes,
 * bound bytes validated against a type, two values compared as Cassandra orders them, a
 * value written as text (CAST, cqlsh-style CQL literals) and as JSON and read back from
 * JSON, and a value's stored form in an engine item (a DynamoDB AttributeValue).
 *
 * The bytes of each type are cqlwire/cql_value.h's; types come from types.h. Values are
 * the bytes of the native protocol's [value] without its length: a (p, len) pair, with
 * null handled by the caller (it is not a value). Nothing here knows a table. */
#ifndef QR_CQL_TYPED_VALUE_H
#define QR_CQL_TYPED_VALUE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cql/ast.h"
#include "cql/storedrow.h"
#include "cql/types.h"
#include "cqlwire/cql_codec.h"
#include "util/buf.h"

/* What turning a term into a value gives. */
#define CQLVAL_ERROR (-1) /* err is set */
#define CQLVAL_OK 0       /* the value's bytes were appended to out */
#define CQLVAL_NULL 1     /* the term is null (NULL, or a null bound value) */
#define CQLVAL_UNSET 2    /* a bound value that is not set (or a list, set or map holding one) */

/* The caller's part of turning a term into a value: called for the terms that are not
 * constants (bind markers, function calls, CAST, type hints, arithmetic) wherever they
 * stand, also inside collection, tuple and UDT literals. t is the type the term must
 * have; receiver names it in messages ("k", "value(l)"). Returns a CQLVAL_* code, with
 * the bytes appended to out for CQLVAL_OK (func.h's cqlfn_term evaluates function calls
 * and casts). */
typedef int (*cqlval_term_fn)(void *ctx, const cql_ctype *t, const char *receiver,
                              const cql_expr *e, buf *out, cql_parse_error *err);

typedef struct cqlval_terms {
    cqlval_term_fn fn; /* NULL: a non-constant term is an error */
    void *ctx;
} cqlval_terms;

/* Turns the term e into a value of type t for the column (or element) named receiver,
 * appending its bytes to out. Constants as Cassandra reads them: strings for text,
 * ascii, inet, timestamps ('2024-01-31 12:00:00+0000', '2024-01-31T12:00:00.000Z',
 * '2024-01-31', 'now', digits as milliseconds), dates ('2024-01-31', digits as the day number),
 * times ('12:00:00.5'); integers for every numeric type, timestamps, dates and times;
 * floats, NaN and Infinity for float, double and decimal; uuids; hex blobs; booleans; durations
 * (1h30m, P1DT2H, P2W); [lists], {sets}, {maps}, (tuples) and {udt: literals}. Returns a
 * CQLVAL_* code; errors are Invalid with Cassandra's words: "Invalid STRING constant
 * (abc) for \"k\" of type int", "Unable to make int from '99999999999'", "Invalid list
 * literal for l of type list<int>", "null is not supported inside collections", "Unknown
 * field 'x' in value of user defined type t". out is left as it was on an error. */
int cqlval_from_term(const cql_ctype *t, const char *receiver, const cql_expr *e,
                     const cqlval_terms *terms, buf *out, cql_parse_error *err);

/* Whether term e may be assigned to type t, as Cassandra's testAssignment answers: 2 an
 * exact match (the constant's preferred type: INTEGER is int, bigint or varint by size,
 * STRING ascii or text, UUID timeuuid for version 1, ...), 1 weakly assignable (a constant
 * the type takes, a literal of the right shape, NULL, a bind marker or any other term
 * whose type the caller decides), 0 not assignable. For overload resolution (func.h). */
int cqlval_assignable(const cql_ctype *t, const cql_expr *e);

/* Parses text as the value of a native type t the way Cassandra's fromString does (what
 * a STRING or INTEGER constant holds, a CAST from text, a JSON string): "12" for int,
 * "2024-01-31" for date, "0x01ff" for blob. CQLVAL_OK or CQLVAL_ERROR with the
 * MarshalException's message ("Unable to make int from 'x'"). */
int cqlval_from_text(const cql_ctype *t, const char *text, size_t len, buf *out,
                     cql_parse_error *err);

/* Appends the canonical form of a valid value of t: sets sorted with duplicates dropped,
 * maps sorted by key with the last of equal keys kept, at every depth (Cassandra keeps
 * collections so; a bound value need not be). Literals and JSON come out canonical
 * already. 0, or -1 when out is full or the value is malformed. */
int cqlval_canonical(const cql_ctype *t, const uint8_t *p, size_t len, buf *out);

/* Checks that p[0..len) is a valid value of t (a bound value, a stored value read back):
 * the lengths, UTF-8, a timeuuid's version, a time's range, collection framing, and each
 * element of a collection, tuple or UDT. 0, or -1 with err Invalid, as Cassandra's
 * validators say it: "Expected 4 or 0 byte int (3)", "Invalid UTF-8 bytes ...".
 * Empty values (len 0) are valid for the types Cassandra allows them on. */
int cqlval_validate(const cql_ctype *t, const uint8_t *p, size_t len, cql_parse_error *err);

/* Orders two valid values of t as Cassandra's comparator does: < 0, 0 or > 0. Integers,
 * varint and decimal numerically (1.5 equals 1.50), floats with NaN above everything and
 * -0.0 below 0.0, text and blobs by their bytes, uuid by version then time (version 1) or
 * bytes, timeuuid by time then signed bytes, timestamps and dates and times by value,
 * inet by bytes, booleans false first, collections, tuples and UDTs element by element
 * (shorter first). Empty values sort before every other value. */
int cqlval_compare(const cql_ctype *t, const uint8_t *a, size_t alen, const uint8_t *b,
                   size_t blen);

/* Appends the value as CAST(v AS text) gives it (Cassandra's getString): 12, abc,
 * 0x01ff, 2024-01-31T12:00:00.000Z, 2024-01-31, 12:00:00.000000000, 1h30m, 127.0.0.1,
 * [1, 2], {'a': 1}, (1, 'x'), {f: 1}; elements inside collections, tuples and UDTs are
 * written as CQL literals (cqlval_to_cql). 0, or -1 when out is full or the value is
 * malformed. */
int cqlval_to_text(const cql_ctype *t, const uint8_t *p, size_t len, buf *out);

/* Appends the value as a CQL literal that reads back as the same value: 'it''s', 12,
 * 0x01ff, '2024-01-31T12:00:00.000Z', [1, 2], {'a': 1}, (1, null), {f: 'x'}. */
int cqlval_to_cql(const cql_ctype *t, const uint8_t *p, size_t len, buf *out);

/* Appends the value as JSON as toJson() and SELECT JSON write it: numbers bare, text
 * and uuids and blobs ("0x01ff") and timestamps ("2024-01-31 12:00:00.000Z") quoted,
 * booleans, lists and sets and tuples as arrays, maps and UDTs as objects (non-text map
 * keys as their JSON text in a string: {"1": "a"}), NaN and Infinity as null (JSON has
 * neither), an empty value of a native type as "" and of a tuple or UDT as null. 0, or -1 when out
 * is full or the value is malformed. */
int cqlval_to_json(const cql_ctype *t, const uint8_t *p, size_t len, buf *out);

/* Turns a parsed JSON value (fromJson(), INSERT JSON) into a value of t for receiver:
 * numbers or numeric strings for numbers, strings for text-like types, "0x.." for blobs,
 * arrays for lists, sets and tuples, objects for maps (keys as strings) and UDTs.
 * CQLVAL_OK, CQLVAL_NULL for JSON null, or CQLVAL_ERROR with Cassandra's message
 * ("Unable to make int from '...'", "Expected a list, but got a Integer: 1", ...). */
int cqlval_from_json(const cql_ctype *t, const char *receiver, const json_t *j, buf *out,
                     cql_parse_error *err);

/* Parses JSON text (INSERT JSON, fromJson()) into a tree for cqlval_from_json in which
 * numbers keep the text they were written with, so a decimal keeps its scale and a varint
 * every digit (each number is a string holding a 0xff byte and then its text: hand the
 * tree only to cqlval_from_json). Returns the tree (json_decref it), or NULL with err
 * Invalid: "Could not decode JSON string '[1, ': unexpected end of input at character 4". */
json_t *cqlval_json_parse(const char *text, size_t len, cql_parse_error *err);

/* INSERT JSON's value: parses text (as cqlval_json_parse) and requires a JSON object,
 * answering with Cassandra's messages: "Got null for INSERT JSON values" for null, "Could
 * not decode JSON string as a map: ..." for another value or bad JSON. Returns the object
 * (json_decref it) or NULL with err Invalid. Its members' values go to cqlval_from_json. */
json_t *cqlval_json_object(const char *text, size_t len, cql_parse_error *err);

/* The column a JSON member name denotes, as INSERT JSON and fromJson read UDT fields: a
 * name in double quotes is exact ("\"Foo\"" is Foo), any other is folded to lower case
 * ("K" is k). Appends it to out; 0, or -1 when out is full. */
int cqlval_json_name(const char *key, buf *out);

/* The stored form of a valid value in an engine item: a new AttributeValue (the caller
 * owns it) chosen so a DynamoDB client reads a natural value: ascii and text {"S"};
 * integers, counters and floats {"N"}; varint and decimal {"N"} when DynamoDB's number
 * keeps them exactly, else {"S"} with their text; NaN, Infinity and -0.0 {"S"}; boolean
 * {"BOOL"}; blob {"B"}; uuid, timeuuid, inet and duration {"S"} with their text;
 * timestamp {"S"} ISO 8601 UTC ("2024-01-31T12:00:00.000Z"), date {"S"} ("2024-01-31"),
 * time {"S"} ("12:00:00.000000000"); list, set and tuple {"L"}; map {"M"} when its keys
 * are text-like or native (keys as their text), else {"L"} of [key, value] pairs; UDT
 * {"M"} by field names; null elements {"NULL": true}; an empty value of a type other
 * than text, ascii and blob {"B": ""}. NULL when out of memory or malformed. */
json_t *cqlval_to_item(const cql_ctype *t, const uint8_t *p, size_t len);

/* The wire bytes of a stored form written by cqlval_to_item, exactly as they were (a map
 * stored as {"M"} comes back in key order: store canonical values, cqlval_canonical).
 * 0, or -1 with err (CQL_ERR_SERVER) when av is not a stored form of t. */
int cqlval_from_item(const cql_ctype *t, const json_t *av, buf *out, cql_parse_error *err);
/* As cqlval_from_item, of the AttributeValue at node av of a stored row (storedrow.h). */
int cqlval_from_stored(const cql_ctype *t, const cql_srow *r, uint32_t av, buf *out,
                       cql_parse_error *err);

#endif
