/* jsonread.h — JSON text to jansson values, read by YAJL's lexer (faster than jansson's reader
 * on strings) where it agrees with jansson. json_read takes that fast path only for text on
 * which the two readers agree; anything else is read again by json_loadb, so the values and
 * every error message are exactly jansson's. */
#ifndef QR_JSONREAD_H
#define QR_JSONREAD_H

#include <jansson.h>
#include <stddef.h>

/* As json_loadb(text, len, flags, error): a new reference, or NULL with error filled in
 * (error may be NULL). flags are jansson's decoding flags; JSON_REJECT_DUPLICATES,
 * JSON_ALLOW_NUL and JSON_DECODE_ANY keep their meaning. */
json_t *json_read(const char *text, size_t len, size_t flags, json_error_t *error);

/* The fast path alone, for tests and benchmarks: the value, or NULL when it declines the
 * text (which json_read then gives to json_loadb). */
json_t *json_read_fast(const char *text, size_t len, size_t flags);

/* What YAJL reads more loosely than JSON, for other readers that lex with it: whether
 * only JSON's white space follows offset end (YAJL lets an unfinished string pass after
 * the top value: {}" or {}"x), and whether text holds a vertical tab or form feed (white
 * space to YAJL only). */
int json_only_space_after(const char *text, size_t len, size_t end);
int json_has_yajl_space(const char *text, size_t len);

#endif
