/* buf.h — a growable byte buffer with a size cap, after curl's dynbuf.
 *
 * Used for storage keys, encoded items and response text. Appends that would pass the
 * cap fail (return -1) and leave the buffer as it was, so a hostile request can never
 * make quarry allocate without bound. The bytes are always followed by a NUL that is
 * not counted in len, so text can be used as a C string. */
#ifndef QR_BUF_H
#define QR_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct buf {
    char *data; /* owned; NULL until the first append */
    size_t len; /* bytes used */
    size_t cap; /* bytes allocated */
    size_t max; /* most bytes this buffer may ever hold */
} buf;

#define BUF_DEFAULT_MAX ((size_t)64 << 20)

/* Starts an empty buffer that may grow to max bytes (0 means BUF_DEFAULT_MAX). */
void buf_init(buf *b, size_t max);
/* Frees the bytes; the buffer is empty and usable again. */
void buf_free(buf *b);
/* Empties the buffer but keeps its memory. */
void buf_reset(buf *b);
int buf_append(buf *b, const void *p, size_t n);
int buf_putc(buf *b, uint8_t c);
int buf_puts(buf *b, const char *s);
int buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends v as 2, 4 or 8 big-endian bytes (so encodings sort as the numbers do). */
int buf_put_be16(buf *b, uint16_t v);
int buf_put_be32(buf *b, uint32_t v);
int buf_put_be64(buf *b, uint64_t v);
/* Makes room for n more bytes (plus the NUL) past len without changing len, so callers
 * can write into data + len directly. */
int buf_reserve(buf *b, size_t n);
/* Replaces the bytes, taken as a key prefix, by the smallest key greater than every key
 * that starts with them (the exclusive upper bound of the prefix's range). Returns -1,
 * leaving the buffer empty, if there is none (the bytes are all 0xff). */
int buf_prefix_successor(buf *b);
/* Hands the bytes to the caller (free() them) and empties the buffer. */
char *buf_detach(buf *b, size_t *len);

uint16_t be16_read(const void *p);
uint32_t be32_read(const void *p);
uint64_t be64_read(const void *p);

#endif
