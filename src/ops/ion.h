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

/* Reads the next top-level value of Ion text from *pos, passing over $ion_1_0 markers:
 * 1 with *out the value, which must be a struct, as a map of AttributeValues (a new
 * reference) and *pos after it; 0 at the end of the text; -1 with msg set (naming where)
 * when the value is not such a struct, *pos then at the start of the next line. */
int ion_read_next(const char *text, size_t len, size_t *pos, json_t **out, char *msg,
                  size_t msg_cap);

#endif
