/* wire.c — target parsing, checksums, request ids and error documents (see wire.h).
 *
 * Nothing here touches a socket or the engine; the HTTP layer (dynamodb.c) composes these.
 * JSON is read and written with jansson, the checksum is zlib's crc32. */
#include "server/wire.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <zlib.h>

#include "server/sigv4.h"
#include "util/err.h"

/* s[0..n) without the spaces and tabs around it. */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* The entry of ops named by target[0..n) if it is prefix + "." + a name in ops. */
static const char *match(const char *target, size_t n, const char *prefix, const char *const *ops)
{
    size_t pl = strlen(prefix);
    if (ops == NULL || n <= pl || strncmp(target, prefix, pl) != 0 || target[pl] != '.')
        return NULL;
    const char *op = target + pl + 1;
    size_t ol = n - pl - 1;
    for (size_t i = 0; ops[i]; i++)
        if (strlen(ops[i]) == ol && strncmp(ops[i], op, ol) == 0) return ops[i];
    return NULL;
}

const char *wire_operation(const char *target, const char *const *ops,
                           const char *const *stream_ops)
{
    if (target == NULL) return NULL;
    /* Whitespace around a field value is not part of it (RFC 9110, 5.5). */
    size_t n = strlen(target);
    trim(&target, &n);
    const char *op = match(target, n, WIRE_API_PREFIX, ops);
    return op ? op : match(target, n, WIRE_STREAMS_API_PREFIX, stream_ops);
}

int wire_empty_success(const char *op)
{
    return op && (strcmp(op, "TagResource") == 0 || strcmp(op, "UntagResource") == 0);
}

uint32_t wire_crc32(const void *data, size_t len)
{
    uLong c = crc32(0L, Z_NULL, 0);
    const Bytef *p = data;
    while (len > 0) {
        uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
        c = crc32(c, p, chunk);
        p += chunk;
        len -= chunk;
    }
    return (uint32_t)c;
}

/* xorshift64* per thread, seeded from the kernel: ids need to be unique, not secret. */
static __thread uint64_t rng_state;

static uint64_t rng_next(void)
{
    if (rng_state == 0) {
        if (getrandom(&rng_state, sizeof rng_state, 0) != (ssize_t)sizeof rng_state)
            rng_state = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&rng_state;
        if (rng_state == 0) rng_state = 0x9E3779B97F4A7C15ull;
    }
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

void wire_request_id(char out[53])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint64_t r = 0;
    for (int i = 0; i < 52; i++) {
        if (i % 10 == 0) r = rng_next();
        out[i] = alphabet[r % 36];
        r /= 36;
    }
    out[52] = '\0';
}

int wire_error_body(buf *out, const char *type, const char *msg)
{
    char full[256];
    snprintf(full, sizeof full, "%s%s", err_namespace(type), type);
    json_t *o = json_object();
    if (o == NULL) return -1;
    int rc = json_object_set_new(o, "__type", json_string(full));
    if (rc == 0 && msg) {
        /* The message may quote the request cut to fit, possibly inside a character. */
        char *text = strdup(msg);
        if (text) err_utf8_repair(text);
        rc = text ? json_object_set_new(o, err_message_member(type), json_string(text)) : -1;
        free(text);
    }
    char *text = rc == 0 ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (text == NULL) return -1;
    rc = buf_puts(out, text);
    free(text);
    return rc;
}

int wire_endpoints_at(const char *body, size_t len, const char *host, size_t host_len, buf *out)
{
    json_t *doc = json_loadb(body, len, 0, NULL);
    json_t *list = doc ? json_object_get(doc, "Endpoints") : NULL;
    int rc = json_is_array(list) ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < json_array_size(list); i++) {
        json_t *ep = json_array_get(list, i);
        rc = json_is_object(ep) ? json_object_set_new(ep, "Address", json_stringn(host, host_len))
                                : -1;
    }
    char *text = rc == 0 ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    buf_reset(out);
    rc = text ? buf_puts(out, text) : -1;
    free(text);
    return rc;
}

int wire_json_valid(const char *body, size_t len, char *why, size_t whylen)
{
    json_error_t jerr;
    /* As the engine reads requests: a string may hold U+0000, as DynamoDB allows. */
    json_t *doc = json_loadb(body, len, JSON_ALLOW_NUL, &jerr);
    if (doc == NULL) {
        if (why && whylen) snprintf(why, whylen, "%s", jerr.text);
        return 0;
    }
    json_decref(doc);
    return 1;
}

/* ---- content codings (zlib does the work) ---- */

static int token_is(const char *s, size_t n, const char *word)
{
    return n == strlen(word) && strncasecmp(s, word, n) == 0;
}

int wire_content_coding(const char *v, size_t len)
{
    trim(&v, &len);
    if (token_is(v, len, "identity")) return WIRE_IDENTITY;
    if (token_is(v, len, "gzip")) return WIRE_GZIP;
    if (token_is(v, len, "deflate")) return WIRE_DEFLATE;
    return -1;
}

/* zlib's window bits for a coding: 15 plus 16 for the gzip wrapper. */
static int window_bits(wire_coding c)
{
    return c == WIRE_GZIP ? 15 + 16 : 15;
}

int wire_decode(wire_coding c, const char *in, size_t len, size_t max, buf *out)
{
    buf_reset(out);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, window_bits(c)) != Z_OK) return -1;
    z.next_in = (Bytef *)in;
    size_t left = len;
    int rc = -1, ended = 0;
    for (;;) {
        if (z.avail_in == 0) {
            uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
            z.avail_in = chunk;
            left -= chunk;
        }
        if (z.avail_in == 0 && ended) {
            rc = out->len > max ? -2 : 0; /* every member ended, nothing after */
            break;
        }
        /* One byte of room past max tells a body of max bytes from a longer one. */
        if (out->len > max) {
            rc = -2;
            break;
        }
        size_t room = max + 1 - out->len < 65536 ? max + 1 - out->len : 65536;
        if (buf_reserve(out, room)) break;
        z.next_out = (Bytef *)out->data + out->len;
        z.avail_out = (uInt)room;
        int zr = inflate(&z, Z_NO_FLUSH);
        out->len += room - z.avail_out;
        if (zr == Z_STREAM_END) {
            ended = 1;
            /* gzip allows another member to follow; a zlib stream is alone. */
            if (z.avail_in == 0 && left == 0) continue;
            if (c != WIRE_GZIP || inflateReset(&z) != Z_OK) break;
            ended = 0;
        } else if (zr == Z_OK) {
            ended = 0;
        } else if (zr == Z_BUF_ERROR && z.avail_out != 0) {
            break; /* the input stops inside the stream */
        } else if (zr != Z_BUF_ERROR) {
            break; /* not this coding */
        }
    }
    inflateEnd(&z);
    if (rc) buf_reset(out);
    return rc;
}

int wire_encode(wire_coding c, const char *in, size_t len, buf *out)
{
    buf_reset(out);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits(c), 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    int rc = -1;
    uLong bound = deflateBound(&z, (uLong)len);
    if (buf_reserve(out, bound) == 0) {
        z.next_in = (Bytef *)in;
        z.avail_in = (uInt)len;
        z.next_out = (Bytef *)out->data;
        z.avail_out = (uInt)bound;
        if (len <= (1u << 30) && deflate(&z, Z_FINISH) == Z_STREAM_END) {
            out->len = bound - z.avail_out;
            rc = 0;
        }
    }
    deflateEnd(&z);
    if (rc) buf_reset(out);
    return rc;
}

/* A q value as DynamoDB reads it: a number, clamped to 1; anything else counts as 1. */
static double quality(const char *s, size_t n)
{
    char tmp[32];
    if (n == 0 || n >= sizeof tmp) return 1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    double q = strtod(tmp, &end);
    if (end == tmp || *end != '\0' || q != q) return 1;
    return q > 1 ? 1 : q;
}

wire_coding wire_accept_coding(const char *v, size_t len)
{
    /* Per coding (gzip, deflate): its best q and the position of its entry, if listed. */
    double q[2] = {0, 0}, star = -1;
    long pos[2] = {-1, -1};
    long entry = 0;
    size_t i = 0;
    while (v && i < len) {
        size_t end = i;
        while (end < len && v[end] != ',')
            end++;
        const char *e = v + i;
        size_t en = end - i;
        i = end + 1;
        /* coding [; param]... */
        const char *semi = memchr(e, ';', en);
        const char *name = e;
        size_t nn = semi ? (size_t)(semi - e) : en;
        trim(&name, &nn);
        if (nn == 0) continue;
        double eq = 1;
        for (const char *p = semi; p;) {
            const char *start = p + 1;
            const char *next = memchr(start, ';', (size_t)(e + en - start));
            size_t pn = next ? (size_t)(next - start) : (size_t)(e + en - start);
            const char *eqs = memchr(start, '=', pn);
            if (eqs) {
                const char *pname = start, *pval = eqs + 1;
                size_t pnl = (size_t)(eqs - start), pvl = pn - pnl - 1;
                trim(&pname, &pnl);
                trim(&pval, &pvl);
                if (token_is(pname, pnl, "q")) {
                    eq = quality(pval, pvl);
                    break; /* the first q counts */
                }
            }
            p = next;
        }
        int k = token_is(name, nn, "gzip") ? 0 : token_is(name, nn, "deflate") ? 1 : -1;
        if (k >= 0) {
            if (pos[k] < 0 || eq > q[k]) q[k] = eq;
            if (pos[k] < 0) pos[k] = entry;
        } else if (token_is(name, nn, "*")) {
            if (eq > star) star = eq;
        }
        entry++;
    }
    /* Codings not listed take the star's q, ranked after every listed one. */
    for (int k = 0; k < 2; k++)
        if (pos[k] < 0 && star >= 0) {
            q[k] = star;
            pos[k] = entry + k;
        }
    int best = -1;
    for (int k = 0; k < 2; k++) {
        if (pos[k] < 0 || q[k] <= 0) continue;
        if (best < 0 || q[k] > q[best] || (q[k] == q[best] && pos[k] < pos[best])) best = k;
    }
    return best == 0 ? WIRE_GZIP : best == 1 ? WIRE_DEFLATE : WIRE_IDENTITY;
}
