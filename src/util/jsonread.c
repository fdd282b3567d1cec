/* jsonread.c — JSON text to jansson values: YAJL lexes, jansson's constructors build.
 * Everything the fast path accepts, jansson accepts as the same value:
 * tests/unit/util/test_jsonread.c checks it on edge cases and mutated text, and
 * tests/fuzz/fuzz_json.c under libFuzzer. */
#include "util/jsonread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "util/buf.h"

/* Deep enough for a request holding an item nested 32 levels (two JSON levels each). */
#define FAST_DEPTH 128

typedef struct reader {
    json_t *root;             /* the value read so far; owns everything below */
    json_t *open[FAST_DEPTH]; /* the objects and arrays not yet closed */
    int depth;
    int reject_duplicates;
    buf key; /* the key whose value comes next (YAJL reuses its copy) */
    yajl_handle yajl;
    size_t end; /* bytes up to the end of the top value */
} reader;

/* Adds v (a new reference, or NULL when its constructor failed) where the text puts it.
 * Returns 1 to go on, 0 to make YAJL stop (the text goes to jansson). */
static int place(reader *r, json_t *v)
{
    if (v == NULL) return 0;
    if (r->depth == 0) {
        if (!json_is_object(v) && !json_is_array(v)) { /* jansson's flags decide on these */
            json_decref(v);
            return 0;
        }
        r->root = v;
    } else {
        json_t *parent = r->open[r->depth - 1];
        if (json_is_object(parent)) {
            /* A duplicate key replaces the value before it without growing the object:
             * cheaper to notice afterwards than to look every key up first. */
            size_t size = json_object_size(parent);
            if (json_object_setn_new(parent, r->key.data, r->key.len, v)) return 0; /* UTF-8 */
            if (r->reject_duplicates && json_object_size(parent) == size) return 0;
        } else if (json_array_append_new(parent, v)) {
            return 0;
        }
    }
    if (json_is_object(v) || json_is_array(v)) {
        if (r->depth == FAST_DEPTH) return 0;
        r->open[r->depth++] = v;
    }
    return 1;
}

static int on_null(void *ctx)
{
    return place(ctx, json_null());
}

static int on_boolean(void *ctx, int value)
{
    return place(ctx, json_boolean(value));
}

/* Plain integers only: -?(0|[1-9][0-9]*) within long long, converted as jansson does. */
static int on_number(void *ctx, const char *s, size_t n)
{
    size_t i = n && s[0] == '-';
    if (i == n || n > 20 || (s[i] == '0' && n > i + 1)) return 0;
    for (size_t k = i; k < n; k++)
        if (s[k] < '0' || s[k] > '9') return 0;
    char digits[24];
    memcpy(digits, s, n);
    digits[n] = '\0';
    errno = 0;
    long long v = strtoll(digits, NULL, 10);
    if (errno == ERANGE) return 0;
    return place(ctx, json_integer(v));
}

static int on_string(void *ctx, const unsigned char *s, size_t n)
{
    return place(ctx, json_stringn((const char *)s, n)); /* NULL for text jansson refuses */
}

static int on_start_map(void *ctx)
{
    return place(ctx, json_object());
}

static int on_map_key(void *ctx, const unsigned char *s, size_t n)
{
    reader *r = ctx;
    buf_reset(&r->key);
    return buf_append(&r->key, s, n) == 0;
}

static int on_end(void *ctx)
{
    reader *r = ctx;
    if (--r->depth == 0) r->end = yajl_get_bytes_consumed(r->yajl);
    return 1;
}

int json_only_space_after(const char *text, size_t len, size_t end)
{
    for (size_t i = end; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') return 0;
    return 1;
}

int json_has_yajl_space(const char *text, size_t len)
{
    return memchr(text, '\v', len) || memchr(text, '\f', len);
}

static int on_start_array(void *ctx)
{
    return place(ctx, json_array());
}

static const yajl_callbacks build = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

/* Whether text has a \u escape (or what looks like one after an escaped backslash). */
static int has_unicode_escape(const char *text, size_t len)
{
    const char *end = text + len;
    for (const char *p = memchr(text, '\\', len); p && p + 1 < end;
         p = memchr(p + 1, '\\', (size_t)(end - p - 1)))
        if (p[1] == 'u') return 1;
    return 0;
}

/* Declines (and json_loadb reads the text from the start) whenever the two readers could
 * differ: any YAJL error; anything but white space after the top value (YAJL lets an
 * unfinished string pass there); a \u escape anywhere (jansson's surrogate and U+0000
 * rules); a number that is not a plain integer within long long (jansson's reals and its
 * overflow errors); a duplicate key when duplicates are refused; a string or key that
 * jansson's own UTF-8 check refuses; a vertical tab or form feed (white space to YAJL
 * only); a scalar at the top; nesting past FAST_DEPTH (jansson allows 2048). */
json_t *json_read_fast(const char *text, size_t len, size_t flags)
{
    if (len == 0 || has_unicode_escape(text, len) || json_has_yajl_space(text, len)) return NULL;
    reader r = {.reject_duplicates = (flags & JSON_REJECT_DUPLICATES) != 0};
    buf_init(&r.key, 0);
    yajl_handle h = r.yajl = yajl_alloc(&build, NULL, &r);
    int ok = h && yajl_parse(h, (const unsigned char *)text, len) == yajl_status_ok &&
             yajl_complete_parse(h) == yajl_status_ok && r.root && r.depth == 0 &&
             json_only_space_after(text, len, r.end);
    if (h) yajl_free(h);
    buf_free(&r.key);
    if (!ok) {
        json_decref(r.root);
        return NULL;
    }
    return r.root;
}

json_t *json_read(const char *text, size_t len, size_t flags, json_error_t *error)
{
    json_t *v = json_read_fast(text, len, flags);
    return v ? v : json_loadb(text, len, flags, error);
}
