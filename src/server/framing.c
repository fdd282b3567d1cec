/* framing.c — the request header block's framing and field syntax, judged from its bytes
 * (see framing.h). A name is a token, a value visible ASCII, obs-text, spaces and tabs;
 * Content-Length digits, equal if repeated; Transfer-Encoding exactly "chunked", alone
 * and without Content-Length. It knows no header besides those two and Host. */
#include "server/framing.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* RFC 9110's tchar. */
static int is_tchar(unsigned char c)
{
    if (c >= '0' && c <= '9') return 1;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return 1;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* A field value's byte: visible ASCII, obs-text, space or tab (RFC 9110 section 5.5). */
static int is_value_byte(unsigned char c)
{
    return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

static int refuse(char *why, size_t cap, const char *what)
{
    snprintf(why, cap, "%s", what);
    return -1;
}

/* Trims spaces and tabs from both ends of [*v, *v + *n). */
static void trim(const char **v, size_t *n)
{
    while (*n && (**v == ' ' || **v == '\t'))
        ++*v, --*n;
    while (*n && ((*v)[*n - 1] == ' ' || (*v)[*n - 1] == '\t'))
        --*n;
}

/* Folds one Content-Length field (a list of equal values is the one value) into *have
 * (-1 before the first). Returns -1 if it is not digits or differs from what came before. */
static int fold_length(const char *v, size_t n, long long *have)
{
    size_t i = 0;
    do {
        size_t start = i;
        while (i < n && v[i] != ',')
            i++;
        const char *item = v + start;
        size_t len = i - start;
        trim(&item, &len);
        if (len == 0 || len > 18) return -1;
        long long x = 0;
        for (size_t k = 0; k < len; k++) {
            if (item[k] < '0' || item[k] > '9') return -1;
            x = x * 10 + (item[k] - '0');
        }
        if (*have >= 0 && *have != x) return -1;
        *have = x;
    } while (i++ < n);
    return 0;
}

size_t framing_head_len(const char *head, size_t cap)
{
    for (size_t i = 0; i < cap; i++) {
        if (head[i] != '\n') continue;
        if (i + 1 < cap && head[i + 1] == '\n') return i + 2;
        if (i + 2 < cap && head[i + 1] == '\r' && head[i + 2] == '\n') return i + 3;
    }
    return 0;
}

int framing_check(const char *head, size_t len, char *why, size_t cap)
{
    const char *p = memchr(head, '\n', len);
    if (p == NULL) return 0; /* a request line alone */
    const char *end = head + len;
    long long length = -1;
    int lengths = 0, encodings = 0, hosts = 0;
    for (p++; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        const char *line_end = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
        size_t n = (size_t)(line_end - p);
        if (n == 0) break; /* the empty line: the block is over */
        if (*p == ' ' || *p == '\t')
            return refuse(why, cap,
                          "obsolete line folding (a header line that begins with "
                          "a space or tab) is not accepted");
        const char *colon = memchr(p, ':', n);
        if (colon == NULL || colon == p)
            return refuse(why, cap, "a header line has no field name and colon");
        for (const char *c = p; c < colon; c++)
            if (!is_tchar((unsigned char)*c))
                return refuse(why, cap,
                              "a header name holds a byte RFC 9110 does not allow "
                              "(space, control or separator)");
        const char *v = colon + 1;
        size_t vn = (size_t)(line_end - v);
        for (size_t i = 0; i < vn; i++)
            if (!is_value_byte((unsigned char)v[i]))
                return refuse(why, cap,
                              "a header value holds a byte RFC 9110 does not allow "
                              "(CR, LF, NUL or another control character)");
        trim(&v, &vn);
        size_t nn = (size_t)(colon - p);
        if (nn == 14 && strncasecmp(p, "content-length", 14) == 0) {
            lengths++;
            if (fold_length(v, vn, &length))
                return refuse(why, cap,
                              "Content-Length is given more than once with "
                              "different values, or is not a number");
        } else if (nn == 17 && strncasecmp(p, "transfer-encoding", 17) == 0) {
            if (++encodings > 1 || vn != 7 || strncasecmp(v, "chunked", 7) != 0)
                return refuse(why, cap, "Transfer-Encoding must be given once, as chunked");
        } else if (nn == 4 && strncasecmp(p, "host", 4) == 0) {
            if (++hosts > 1) return refuse(why, cap, "Host is given more than once");
        }
        p = nl ? nl + 1 : end;
    }
    if (lengths && encodings)
        return refuse(why, cap,
                      "a request with both Content-Length and Transfer-Encoding "
                      "is ambiguous (RFC 9112 section 6.3)");
    return 0;
}

const char *framing_host(const char *head, size_t len, size_t *host_len)
{
    *host_len = 0;
    const char *p = memchr(head, '\n', len), *end = head + len;
    for (p = p ? p + 1 : end; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        const char *line_end = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
        size_t n = (size_t)(line_end - p);
        if (n == 0) break;
        if (n >= 5 && strncasecmp(p, "host:", 5) == 0) {
            const char *v = p + 5;
            size_t vn = n - 5;
            trim(&v, &vn);
            *host_len = vn;
            return v;
        }
        p = nl ? nl + 1 : end;
    }
    return NULL;
}
