/* ion.c — Ion text for DynamoDB's exports and imports (see ion.h): a writer of
 * AttributeValues, and a recursive-descent reader of the Ion values DynamoDB's mapping
 * uses, turned back into AttributeValues. Numbers go through the exact decimal type of
 * model/number.h, so no digit is lost either way. */
#include "ops/ion.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/number.h"
#include "util/err.h"

#define ION_MAX_DEPTH 64

/* ---- writing ---- */

static void write_string(buf *out, const char *s, char quote)
{
    buf_putc(out, (uint8_t)quote);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == (unsigned char)quote || *p == '\\') {
            buf_putc(out, '\\');
            buf_putc(out, *p);
        } else if (*p == '\n' || *p == '\t' || *p == '\r') {
            buf_putc(out, '\\');
            buf_putc(out, *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
        } else if (*p < 0x20) {
            buf_printf(out, "\\x%02x", *p);
        } else {
            buf_putc(out, *p);
        }
    }
    buf_putc(out, (uint8_t)quote);
}

void ion_write_name(buf *out, const char *name)
{
    int ident = (isalpha((unsigned char)name[0]) || name[0] == '_') != 0;
    for (const char *p = name; ident && *p; p++)
        ident = isalnum((unsigned char)*p) || *p == '_' || *p == '$';
    static const char *const keywords[] = {"true", "false", "null", "nan", NULL};
    for (int i = 0; ident && keywords[i]; i++)
        if (strcmp(name, keywords[i]) == 0) ident = 0;
    if (ident)
        buf_puts(out, name);
    else
        write_string(out, name, '\'');
}

/* A DynamoDB number as an Ion decimal: digits, then the point where the exponent allows,
 * else an exponent ("103.", "1.5", "6d2", "5d-40"). */
static int write_number(buf *out, const char *text)
{
    qr_num n;
    qr_err e;
    err_init(&e);
    int rc = num_parse(text, strlen(text), &n, &e);
    err_clear(&e);
    if (rc) return -1;
    if (n.sign == 0) return buf_puts(out, "0.");
    if (n.sign < 0) buf_putc(out, '-');
    int point = n.exp; /* digits before the point */
    if (point >= n.ndigits) {
        for (int i = 0; i < n.ndigits; i++)
            buf_putc(out, (uint8_t)('0' + n.d[i]));
        if (point == n.ndigits)
            buf_putc(out, '.');
        else
            buf_printf(out, "d%d", point - n.ndigits);
    } else if (point > 0) {
        for (int i = 0; i < n.ndigits; i++) {
            if (i == point) buf_putc(out, '.');
            buf_putc(out, (uint8_t)('0' + n.d[i]));
        }
    } else if (point > -6) {
        buf_puts(out, "0.");
        for (int i = point; i < 0; i++)
            buf_putc(out, '0');
        for (int i = 0; i < n.ndigits; i++)
            buf_putc(out, (uint8_t)('0' + n.d[i]));
    } else {
        for (int i = 0; i < n.ndigits; i++)
            buf_putc(out, (uint8_t)('0' + n.d[i]));
        buf_printf(out, "d%d", point - n.ndigits);
    }
    return 0;
}

static int write_blob(buf *out, const json_t *b64)
{
    if (!json_is_string(b64)) return -1;
    buf_puts(out, "{{");
    buf_puts(out, json_string_value(b64));
    buf_puts(out, "}}");
    return 0;
}

int ion_write_struct(buf *out, const json_t *map)
{
    if (!json_is_object(map)) return -1;
    buf_putc(out, '{');
    const char *name;
    json_t *v;
    int first = 1;
    json_object_foreach((json_t *)map, name, v)
    {
        if (!first) buf_putc(out, ',');
        first = 0;
        ion_write_name(out, name);
        buf_putc(out, ':');
        if (ion_write_value(out, v)) return -1;
    }
    buf_putc(out, '}');
    return 0;
}

int ion_write_value(buf *out, const json_t *av)
{
    if (!json_is_object(av) || json_object_size(av) != 1) return -1;
    const char *type = json_object_iter_key(json_object_iter((json_t *)av));
    const json_t *v = json_object_iter_value(json_object_iter((json_t *)av));
    if (strcmp(type, "S") == 0) {
        if (!json_is_string(v)) return -1;
        write_string(out, json_string_value(v), '"');
        return 0;
    }
    if (strcmp(type, "N") == 0)
        return json_is_string(v) ? write_number(out, json_string_value(v)) : -1;
    if (strcmp(type, "B") == 0) return write_blob(out, v);
    if (strcmp(type, "BOOL") == 0) return buf_puts(out, json_is_true(v) ? "true" : "false");
    if (strcmp(type, "NULL") == 0) return buf_puts(out, "null");
    if (strcmp(type, "M") == 0) return ion_write_struct(out, v);
    int set = strcmp(type, "SS") == 0 || strcmp(type, "NS") == 0 || strcmp(type, "BS") == 0;
    if (!set && strcmp(type, "L") != 0) return -1;
    if (!json_is_array(v)) return -1;
    if (set) buf_printf(out, "$dynamodb_%s::", type);
    buf_putc(out, '[');
    size_t i;
    json_t *m;
    json_array_foreach((json_t *)v, i, m)
    {
        if (i) buf_putc(out, ',');
        int rc = type[0] == 'S'
                     ? (json_is_string(m) ? (write_string(out, json_string_value(m), '"'), 0) : -1)
                 : type[0] == 'N'
                     ? (json_is_string(m) ? write_number(out, json_string_value(m)) : -1)
                 : type[0] == 'B' ? write_blob(out, m)
                                  : ion_write_value(out, m);
        if (rc) return -1;
    }
    buf_putc(out, ']');
    return 0;
}

/* ---- reading ---- */

typedef struct reader {
    const char *s;
    size_t len, pos;
    char *msg;
    size_t msg_cap;
} reader;

static int fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->msg, r->msg_cap, "Ion text at column %zu: %s", r->pos + 1, what);
    return -1;
}

static int peek(reader *r)
{
    return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

/* Skips white space and comments. */
static void skip(reader *r)
{
    while (r->pos < r->len) {
        char c = r->s[r->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            r->pos++;
        } else if (c == '/' && r->pos + 1 < r->len && r->s[r->pos + 1] == '/') {
            while (r->pos < r->len && r->s[r->pos] != '\n')
                r->pos++;
        } else if (c == '/' && r->pos + 1 < r->len && r->s[r->pos + 1] == '*') {
            const char *end = memmem(r->s + r->pos + 2, r->len - r->pos - 2, "*/", 2);
            r->pos = end ? (size_t)(end - r->s) + 2 : r->len;
        } else {
            break;
        }
    }
}

static void put_utf8(buf *b, unsigned long cp)
{
    if (cp < 0x80) {
        buf_putc(b, (uint8_t)cp);
    } else if (cp < 0x800) {
        buf_putc(b, (uint8_t)(0xC0 | cp >> 6));
        buf_putc(b, (uint8_t)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        buf_putc(b, (uint8_t)(0xE0 | cp >> 12));
        buf_putc(b, (uint8_t)(0x80 | (cp >> 6 & 0x3F)));
        buf_putc(b, (uint8_t)(0x80 | (cp & 0x3F)));
    } else {
        buf_putc(b, (uint8_t)(0xF0 | cp >> 18));
        buf_putc(b, (uint8_t)(0x80 | (cp >> 12 & 0x3F)));
        buf_putc(b, (uint8_t)(0x80 | (cp >> 6 & 0x3F)));
        buf_putc(b, (uint8_t)(0x80 | (cp & 0x3F)));
    }
}

/* Reads a quoted text (the opening quote at pos, of length qlen: 1, or 3 for '''),
 * appending its characters to b. */
static int read_quoted(reader *r, char quote, size_t qlen, buf *b)
{
    r->pos += qlen;
    for (;;) {
        if (r->pos >= r->len) return fail(r, "unterminated %s", quote == '"' ? "string" : "symbol");
        char c = r->s[r->pos];
        if (c == quote && (qlen == 1 || (r->pos + 2 < r->len && r->s[r->pos + 1] == quote &&
                                         r->s[r->pos + 2] == quote))) {
            r->pos += qlen;
            return 0;
        }
        if (qlen == 1 && (c == '\n' || c == '\r')) return fail(r, "a new line inside a string");
        if (c != '\\') {
            buf_putc(b, (uint8_t)c);
            r->pos++;
            continue;
        }
        if (++r->pos >= r->len) return fail(r, "unterminated escape");
        c = r->s[r->pos++];
        int hex = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
        if (hex) {
            if (r->pos + (size_t)hex > r->len) return fail(r, "a short \\%c escape", c);
            unsigned long cp = 0;
            for (int i = 0; i < hex; i++) {
                int d = r->s[r->pos + (size_t)i];
                if (!isxdigit(d)) return fail(r, "a bad \\%c escape", c);
                cp = cp * 16 + (unsigned long)(isdigit(d) ? d - '0' : (tolower(d) - 'a' + 10));
            }
            r->pos += (size_t)hex;
            put_utf8(b, cp);
            continue;
        }
        static const char from[] = "abtnfrv?0/'\"\\", to[] = "\a\b\t\n\f\r\v?\0/'\"\\";
        const char *at = memchr(from, c, sizeof from - 1);
        if (c == '\n') continue; /* an escaped new line joins the lines */
        if (at == NULL) return fail(r, "an unknown escape \\%c", c);
        buf_putc(b, (uint8_t)to[at - from]);
    }
}

/* A string value: one "..." or one or more adjacent '''...''' parts. */
static int read_string(reader *r, buf *b)
{
    if (peek(r) == '"') return read_quoted(r, '"', 1, b);
    do {
        if (read_quoted(r, '\'', 3, b)) return -1;
        skip(r);
    } while (r->pos + 2 < r->len && memcmp(r->s + r->pos, "'''", 3) == 0);
    return 0;
}

static int is_ident_start(int c)
{
    return isalpha(c) || c == '_' || c == '$';
}

/* An identifier or a quoted symbol, into b. */
static int read_symbol(reader *r, buf *b)
{
    if (peek(r) == '\'') return read_quoted(r, '\'', 1, b);
    if (!is_ident_start(peek(r))) return fail(r, "a name was expected");
    while (r->pos < r->len &&
           (isalnum((unsigned char)r->s[r->pos]) || r->s[r->pos] == '_' || r->s[r->pos] == '$'))
        buf_putc(b, (uint8_t)r->s[r->pos++]);
    return 0;
}

/* A number at pos, as DynamoDB's normalised number text. */
static int read_number(reader *r, json_t **out)
{
    size_t start = r->pos;
    while (r->pos < r->len && (isalnum((unsigned char)r->s[r->pos]) || r->s[r->pos] == '.' ||
                               r->s[r->pos] == '_' || r->s[r->pos] == '-' || r->s[r->pos] == '+'))
        r->pos++;
    char text[512], clean[512];
    size_t n = r->pos - start, k = 0;
    if (n == 0 || n >= sizeof text) return fail(r, "a number was expected");
    memcpy(text, r->s + start, n);
    text[n] = '\0';
    const char *t = text;
    int neg = t[0] == '-';
    if (neg) t++;
    if (t[0] == '0' && (t[1] == 'x' || t[1] == 'X' || t[1] == 'b' || t[1] == 'B')) {
        unsigned long long v = 0;
        int base = t[1] == 'x' || t[1] == 'X' ? 16 : 2;
        for (const char *p = t + 2; *p; p++) {
            if (*p == '_') continue;
            int d = isdigit((unsigned char)*p)    ? *p - '0'
                    : isxdigit((unsigned char)*p) ? tolower(*p) - 'a' + 10
                                                  : 99;
            if (d >= base || v > (~0ULL - (unsigned)d) / (unsigned)base)
                return fail(r, "a bad integer %s", text);
            v = v * (unsigned)base + (unsigned)d;
        }
        snprintf(clean, sizeof clean, "%s%llu", neg ? "-" : "", v);
    } else {
        if (neg) clean[k++] = '-';
        for (const char *p = t; *p; p++) {
            if (*p == '_') continue;
            char c = *p == 'd' || *p == 'D' ? 'E' : *p;
            /* "103." and "1.d2": a point with no fraction after it is dropped. */
            if (c == '.' &&
                (p[1] == '\0' || p[1] == 'd' || p[1] == 'D' || p[1] == 'e' || p[1] == 'E'))
                continue;
            clean[k++] = c;
        }
        clean[k] = '\0';
    }
    qr_num num;
    qr_err e;
    err_init(&e);
    if (num_parse(clean, strlen(clean), &num, &e)) {
        fail(r, "%s is not a DynamoDB number: %s", text, e.msg);
        err_clear(&e);
        return -1;
    }
    err_clear(&e);
    char fmt[NUM_FMT_MAX];
    num_format(&num, fmt);
    *out = json_pack("{s:s}", "N", fmt);
    return 0;
}

/* A blob {{ base64 }} (pos after the "{{"), as a B value. */
static int read_blob(reader *r, json_t **out)
{
    buf b;
    buf_init(&b, 0);
    for (;;) {
        skip(r);
        int c = peek(r);
        if (c < 0) {
            buf_free(&b);
            return fail(r, "unterminated blob");
        }
        if (c == '}') break;
        if (c == '"') {
            buf_free(&b);
            return fail(r, "a clob, which DynamoDB has no type for");
        }
        if (!isalnum(c) && c != '+' && c != '/' && c != '=') {
            buf_free(&b);
            return fail(r, "a bad character in a blob");
        }
        buf_putc(&b, (uint8_t)c);
        r->pos++;
    }
    if (r->pos + 1 >= r->len || r->s[r->pos + 1] != '}') {
        buf_free(&b);
        return fail(r, "a blob must end with }}");
    }
    r->pos += 2;
    if (b.len % 4) {
        buf_free(&b);
        return fail(r, "a blob's base64 is cut short");
    }
    *out = json_object();
    json_object_set_new(*out, "B", json_stringn(b.data ? (const char *)b.data : "", b.len));
    buf_free(&b);
    return 0;
}

static int read_value(reader *r, int depth, json_t **out);

static int read_struct(reader *r, int depth, json_t **out)
{
    r->pos++; /* '{' */
    json_t *m = json_object();
    buf name;
    buf_init(&name, 0);
    for (int first = 1;; first = 0) {
        skip(r);
        if (peek(r) == '}') {
            r->pos++;
            break;
        }
        if (!first) {
            if (peek(r) != ',') goto bad_sep;
            r->pos++;
            skip(r);
            if (peek(r) == '}') {
                r->pos++;
                break;
            }
        }
        buf_reset(&name);
        if ((peek(r) == '"' || (r->pos + 2 < r->len && memcmp(r->s + r->pos, "'''", 3) == 0))
                ? read_string(r, &name)
                : read_symbol(r, &name))
            goto fail;
        buf_putc(&name, 0);
        skip(r);
        if (peek(r) != ':') {
            fail(r, "':' was expected after the field name");
            goto fail;
        }
        r->pos++;
        json_t *v;
        if (read_value(r, depth + 1, &v)) goto fail;
        json_object_set_new(m, (const char *)name.data, v);
    }
    buf_free(&name);
    *out = json_pack("{s:o}", "M", m);
    return 0;
bad_sep:
    fail(r, "',' or '}' was expected in a struct");
fail:
    buf_free(&name);
    json_decref(m);
    return -1;
}

/* A list (pos at '['), as L, or as the set a $dynamodb_ annotation names. */
static int read_list(reader *r, int depth, const char *set, json_t **out)
{
    r->pos++;
    json_t *items = json_array();
    for (int first = 1;; first = 0) {
        skip(r);
        if (peek(r) == ']') {
            r->pos++;
            break;
        }
        if (!first) {
            if (peek(r) != ',') {
                json_decref(items);
                return fail(r, "',' or ']' was expected in a list");
            }
            r->pos++;
            skip(r);
            if (peek(r) == ']') {
                r->pos++;
                break;
            }
        }
        json_t *v;
        if (read_value(r, depth + 1, &v)) {
            json_decref(items);
            return -1;
        }
        if (set) {
            char type[2] = {set[0], '\0'}; /* "SS" holds S values, ... */
            json_t *member = json_object_get(v, type);
            if (member == NULL) {
                json_decref(v);
                json_decref(items);
                return fail(r, "a member of a %s set is not of its type", set);
            }
            json_array_append(items, member);
            json_decref(v);
        } else {
            json_array_append_new(items, v);
        }
    }
    *out = json_object();
    json_object_set_new(*out, set ? set : "L", items);
    return 0;
}

static int read_value(reader *r, int depth, json_t **out)
{
    if (depth > ION_MAX_DEPTH) return fail(r, "values nested too deep");
    skip(r);
    const char *set = NULL;
    /* Annotations: name::value. */
    for (;;) {
        size_t at = r->pos;
        int c = peek(r);
        if (!(is_ident_start(c) ||
              (c == '\'' && !(r->pos + 2 < r->len && memcmp(r->s + r->pos, "'''", 3) == 0))))
            break;
        buf a;
        buf_init(&a, 0);
        if (read_symbol(r, &a)) {
            buf_free(&a);
            return -1;
        }
        skip(r);
        if (!(r->pos + 1 < r->len && r->s[r->pos] == ':' && r->s[r->pos + 1] == ':')) {
            buf_free(&a);
            r->pos = at;
            break;
        }
        r->pos += 2;
        static const char *const sets[] = {"$dynamodb_SS", "$dynamodb_NS", "$dynamodb_BS"};
        for (int i = 0; i < 3; i++)
            if (a.len == strlen(sets[i]) && memcmp(a.data, sets[i], a.len) == 0) set = sets[i] + 10;
        buf_free(&a);
        skip(r);
    }
    int c = peek(r);
    if (set && c != '[')
        return fail(r, "a $dynamodb_%s annotation on a value that is not a list", set);
    if (c == '{') {
        if (r->pos + 1 < r->len && r->s[r->pos + 1] == '{') {
            r->pos += 2;
            return read_blob(r, out);
        }
        return read_struct(r, depth, out);
    }
    if (c == '[') return read_list(r, depth, set, out);
    if (c == '"' || (c == '\'' && r->pos + 2 < r->len && memcmp(r->s + r->pos, "'''", 3) == 0)) {
        buf s;
        buf_init(&s, 0);
        if (read_string(r, &s)) {
            buf_free(&s);
            return -1;
        }
        *out = json_object();
        json_object_set_new(*out, "S", json_stringn(s.data ? (const char *)s.data : "", s.len));
        buf_free(&s);
        return 0;
    }
    if (c == '(') return fail(r, "an s-expression, which DynamoDB has no type for");
    if (isdigit(c) || c == '-' || c == '+') {
        if (c == '+' || (c == '-' && r->pos + 1 < r->len && r->s[r->pos + 1] == 'i'))
            return fail(r, "infinity, which DynamoDB's numbers cannot hold");
        /* A timestamp (2007-02-23T...) starts like a number. */
        size_t e = r->pos;
        while (e < r->len && (isdigit((unsigned char)r->s[e])))
            e++;
        if (e - r->pos == 4 && e < r->len && (r->s[e] == '-' || r->s[e] == 'T'))
            return fail(r, "a timestamp, which DynamoDB has no type for");
        return read_number(r, out);
    }
    if (is_ident_start(c)) {
        buf w;
        buf_init(&w, 0);
        read_symbol(r, &w);
        buf_putc(&w, 0);
        const char *word = (const char *)w.data;
        int rc = 0;
        if (strcmp(word, "true") == 0 || strcmp(word, "false") == 0) {
            *out = json_pack("{s:b}", "BOOL", word[0] == 't');
        } else if (strcmp(word, "null") == 0) {
            /* null, or a typed null: null.string, null.struct, ... */
            if (peek(r) == '.') {
                r->pos++;
                buf ignored;
                buf_init(&ignored, 0);
                rc = read_symbol(r, &ignored);
                buf_free(&ignored);
            }
            if (rc == 0) *out = json_pack("{s:b}", "NULL", 1);
        } else {
            rc = fail(r, "the symbol %s, which DynamoDB has no type for", word);
        }
        buf_free(&w);
        return rc;
    }
    return c < 0 ? fail(r, "the text ends where a value was expected")
                 : fail(r, "'%c' cannot start a value", c);
}

int ion_read_next(const char *text, size_t len, size_t *pos, json_t **out, char *msg,
                  size_t msg_cap)
{
    reader r = {text, len, *pos, msg, msg_cap};
    *out = NULL;
    for (;;) {
        skip(&r);
        if (r.pos + 8 <= len && memcmp(text + r.pos, "$ion_1_0", 8) == 0 &&
            (r.pos + 8 == len || !isalnum((unsigned char)text[r.pos + 8]))) {
            r.pos += 8;
            continue;
        }
        break;
    }
    *pos = r.pos;
    if (r.pos == len) return 0;
    json_t *v = NULL;
    int rc = peek(&r) != '{' || (r.pos + 1 < len && text[r.pos + 1] == '{')
                 ? fail(&r, "a struct was expected")
                 : read_value(&r, 0, &v);
    if (rc) { /* go on at the next line */
        const char *nl = memchr(text + *pos, '\n', len - *pos);
        *pos = nl ? (size_t)(nl - text) + 1 : len;
        return -1;
    }
    *pos = r.pos;
    *out = json_incref(json_object_get(v, "M"));
    json_decref(v);
    return 1;
}
