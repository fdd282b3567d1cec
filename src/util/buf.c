/* buf.c — growable byte buffer with a cap (see buf.h). */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(buf *b, size_t max)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->max = max ? max : BUF_DEFAULT_MAX;
}

void buf_free(buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void buf_reset(buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

static int grow(buf *b, size_t extra)
{
    if (extra > b->max || b->len > b->max - extra) return -1;
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int buf_reserve(buf *b, size_t n)
{
    return grow(b, n);
}

int buf_append(buf *b, const void *p, size_t n)
{
    if (grow(b, n)) return -1;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_putc(buf *b, uint8_t c)
{
    return buf_append(b, &c, 1);
}

int buf_puts(buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

int buf_printf(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || grow(b, (size_t)n)) return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int buf_put_be16(buf *b, uint16_t v)
{
    uint8_t p[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    return buf_append(b, p, 2);
}

int buf_put_be32(buf *b, uint32_t v)
{
    uint8_t p[4];
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
    return buf_append(b, p, 4);
}

int buf_put_be64(buf *b, uint64_t v)
{
    uint8_t p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
    return buf_append(b, p, 8);
}

int buf_prefix_successor(buf *b)
{
    while (b->len > 0) {
        unsigned char *last = (unsigned char *)b->data + b->len - 1;
        if (*last != 0xff) {
            (*last)++;
            return 0;
        }
        b->len--;
    }
    return -1;
}

char *buf_detach(buf *b, size_t *len)
{
    char *p = b->data;
    if (len) *len = b->len;
    if (p == NULL) p = calloc(1, 1);
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

uint16_t be16_read(const void *p)
{
    const uint8_t *q = p;
    return (uint16_t)((q[0] << 8) | q[1]);
}

uint32_t be32_read(const void *p)
{
    const uint8_t *q = p;
    return ((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) | ((uint32_t)q[2] << 8) | q[3];
}

uint64_t be64_read(const void *p)
{
    const uint8_t *q = p;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | q[i];
    return v;
}
