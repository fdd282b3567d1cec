/* value.h — DynamoDB AttributeValues and items, in their wire form as jansson values, kept
 * in exactly this form from the request to the disk and back, so responses need no
 * translation. This module validates, compares, measures and writes them as compact JSON;
 * it knows nothing of tables, keys or storage. */
#ifndef QR_VALUE_H
#define QR_VALUE_H

#include <jansson.h>
#include <stddef.h>

#include "model/number.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum qr_type {
    QR_T_NONE = 0, /* not a valid AttributeValue */
    QR_T_S,
    QR_T_N,
    QR_T_B,
    QR_T_BOOL,
    QR_T_NULL,
    QR_T_M,
    QR_T_L,
    QR_T_SS,
    QR_T_NS,
    QR_T_BS
} qr_type;

#define QR_MAX_DEPTH 32
/* DynamoDB's refusal of a value nested past QR_MAX_DEPTH, in its bare form. */
#define QR_MSG_TOO_DEEP                                                                            \
    "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels "    \
    "beyond supported limit"
/* Past about this many levels DynamoDB's single-item operations read a request in a
 * second way and answer a too deep value in an older form (measured in us-east-1 and
 * eu-west-2, October 2026: 61 levels inside the envelope, 63 without). */
#define QR_DEEP_READ_LEVELS 62
#define QR_MAX_ITEM_SIZE 409600
#define QR_MAX_PK_SIZE 2048
#define QR_MAX_SK_SIZE 1024
#define QR_MAX_NAME_SIZE 65535
/* DynamoDB's words for a name over QR_MAX_NAME_SIZE, at any depth (measured against the
 * service in September 2026 for PutItem and UpdateItem, inside their "1 validation error
 * detected: " envelope). */
#define QR_MSG_NAME_TOO_LARGE "Attribute name is too large, must be less than 65536 bytes"

/* An AttributeValue is a JSON object with exactly one type key: {"S":"x"}, {"N":"1.5"},
 * {"B":"<base64>"}, {"BOOL":true}, {"NULL":true}, {"M":{…}}, {"L":[…]}, {"SS":[…]},
 * {"NS":[…]}, {"BS":[…]}. An item is a JSON object mapping attribute names to
 * AttributeValues.
 *
 * The type of an AttributeValue, or QR_T_NONE if av is not one object with one known
 * type key. Does not validate the payload. */
qr_type value_type(const json_t *av);
/* "S", "N", … for a type; "" for QR_T_NONE. */
const char *value_type_name(qr_type t);
qr_type value_type_from_name(const char *name);
/* The payload of an AttributeValue: the string, array, object or boolean inside it. */
json_t *value_payload(const json_t *av);

/* The types of DynamoDB's service model, as its request reader reads JSON. */
typedef enum wire_type {
    WIRE_STRUCTURE,
    WIRE_LIST,
    WIRE_MAP,
    WIRE_STRING,
    WIRE_INTEGER,
    WIRE_LONG,
    WIRE_DOUBLE,
    WIRE_BOOLEAN,
    WIRE_BLOB,
    WIRE_TIMESTAMP
} wire_type;
/* Whether JSON value v (not null) reads as want: 0, or -1 with DynamoDB's
 * SerializationException for what its reader found ("NUMBER_VALUE cannot be converted to
 * String", "Start of structure or map found where not expected", ...). member says whether
 * v is a structure's member (else a list's element or a map's value), which changes what
 * a misplaced container is called. What the reader converts, a boolean's words ("TRUE")
 * and a number with a fraction where an integer is, sets *fixed (when fixed is not NULL)
 * to the converted value, a new reference for the caller to put in v's place. The one
 * place these messages are worded. */
int value_wire_check(const json_t *v, wire_type want, int member, json_t **fixed, qr_err *err);
/* Validates an AttributeValue in place and normalises its numbers (and number sets) to
 * DynamoDB's canonical text. depth is the nesting depth of av (1 for a top-level
 * attribute). what names the place for messages (e.g. the attribute name). */
int value_validate(json_t *av, int depth, const char *what, qr_err *err);
/* As value_validate for a top-level value, but with no limit on its nesting: for the
 * values of ExpressionAttributeValues, whose depth each operation judges itself. */
int value_validate_any_depth(json_t *av, const char *what, qr_err *err);
/* True if e is a malformed number or a repeated set member: the value errors whose
 * wording depends on the layer (model/layer.h), which PutItem, UpdateItem and DeleteItem
 * report inside DynamoDB's "1 validation error detected: " envelope wherever the value
 * sits. */
int value_error_is_malformed(const qr_err *e);
/* Puts a set's members (SS, NS or BS; anything else is left alone) in the order
 * DynamoDB keeps them: strings and binaries by their bytes, numbers by value. */
void value_sort_set(json_t *av);
/* The nesting depth of a valid AttributeValue: 1 for a scalar or a set, one more than
 * its deepest member for a map or a list. */
int value_nesting(const json_t *av);
/* The nesting depth of the deepest AttributeValue in values, a map of them (an item, a
 * key, ExpressionAttributeValues) or a list of them; 0 for anything else. */
int value_nesting_most(const json_t *values);

/* Validates every attribute of an item (names non-empty, values valid) and its size
 * (at most 400 KB by DynamoDB's rules). */
int item_validate(json_t *item, qr_err *err);
/* The same, also giving the item's size (item_size) that the check computed. */
int item_validate_size(json_t *item, size_t *size, qr_err *err);
/* Checks only the lengths of an item's attribute names, nested map keys included: for an
 * item an update built from valid parts. */
int item_check_names(const json_t *item, qr_err *err);

/* True if a and b are equal AttributeValues: same type and same value; numbers compare
 * numerically, sets as sets (order-insensitive), maps and lists element-wise. */
int value_equal(const json_t *a, const json_t *b);

/* Orders two scalars of the same type (S, N or B): sets *cmp to -1, 0 or +1 and returns
 * 0; returns -1 if the values are not both S, both N or both B. */
int value_compare(const json_t *a, const json_t *b, int *cmp);

/* Parses a number AttributeValue or number text that has been validated already. */
int value_number(const json_t *av, qr_num *out);
/* A new {"N": …} AttributeValue for n. */
json_t *value_from_number(const qr_num *n);

/* Decodes a B value's base64 payload into out (malloc'd; caller frees). Returns -1 on
 * bad base64. */
int value_binary(const json_t *av, unsigned char **out, size_t *len);
/* The bytes of base64 text s (n bytes, padded as DynamoDB's B values are) into out, which
 * has room for n / 4 * 3 bytes; *len their count. 0, or -1 when s is not such text. */
int value_base64_decode(const char *s, size_t n, unsigned char *out, size_t *len);

/* Appends v as compact JSON: exactly the bytes jansson's json_dumpb(v, JSON_COMPACT |
 * JSON_ENCODE_ANY) writes. Objects, arrays, booleans, null and strings of printable ASCII
 * (what items are made of) are written here, without jansson's per-character UTF-8
 * decoding and per-container loop bookkeeping; a value holding anything else (a number,
 * a string needing an escape or holding non-ASCII text) is handed whole to jansson.
 * Returns -1, leaving out as it was, if jansson cannot encode v or out's cap is hit. */
int value_dump(buf *out, const json_t *v);

/* DynamoDB's billed size of one AttributeValue (without its name). */
size_t value_size(const json_t *av);
/* DynamoDB's size of an item: attribute name lengths plus value sizes. */
size_t item_size(const json_t *item);
/* What an item counts toward the 1 MB a Query or Scan page reads, as DynamoDB counts it
 * (not its item_size): each attribute name 1 byte, each value its size and the bytes that
 * frame it (a string 1 to 3 for its length, a number or binary 1, a set one per member and
 * one, a list 3 and 1 per element, a map 3 and 2 per member, NULL nothing), and per 3 KB
 * of that, the table's sort key (range_key, NULL for none) at its plain size and 18 bytes
 * more; 2 bytes per item besides. Fitted to DynamoDB's page boundaries, which fall within
 * one byte of it. Computed when an item is written and stored with it. */
size_t item_page_size(const json_t *item, const char *range_key);
/* The same total from its parts: rest, what the attributes other than the sort key count
 * (1 + the value's count each), and range, the sort key's plain size (0 for none). */
size_t item_page_total(size_t rest, size_t range);
/* What an S, N or B value of DynamoDB size size counts, in the item's rest. */
size_t scalar_page_size(qr_type type, size_t size);

#endif
