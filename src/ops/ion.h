/* ion.h — Amazon Ion's text form as DynamoDB's exports write it and its imports read it:
 * AttributeValues to Ion values (strings, decimals for numbers, blobs, bools, null, lists,
 * structs, and sets as lists annotated $dynamodb_SS / _NS / _BS) and Ion text back to
 * AttributeValues. Neither Ion's binary form nor its timestamps, symbols tables or clobs
 * are read or written: DynamoDB's files have none. */
#ifndef QR_OPS_ION_H
#define QR_OPS_ION_H

#include <jansson.h>
#include <stddef.h>

#include "util/buf.h"

/* Appends AttributeValue av as an Ion value. -1 if av is not a well-formed one. */
int ion_write_value(buf *out, const json_t *av);
/* Appends a map's members, {name: value, ...}, as an Ion struct. */
int ion_write_struct(buf *out, const json_t *map);
/* Appends name as an Ion field name (an identifier, or a quoted symbol). */
void ion_write_name(buf *out, const char *name);

/* Reads one line of Ion text holding, after optional $ion_1_0 markers, one struct: *out is
 * the struct as a map of AttributeValues (a new reference). -1 with msg set (naming
 * where) if the text is not such a line. */
int ion_read_line(const char *text, size_t len, json_t **out, char *msg, size_t msg_cap);

#endif
