/* wire.c — target parsing, checksums, request ids and error documents (see wire.h).
 *
 * Nothing here touches a socket or the engine; the HTTP layer (http.c) composes these.
 * JSON is read and written with jansson, the checksum is zlib's crc32. */
#include "server/wire.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <zlib.h>

#include "ops/ops.h"
#include "server/sigv4.h"
#include "util/err.h"

const char *wire_operation(const char *target, const char *const *ops)
{
    if (target == NULL || ops == NULL) return NULL;
    size_t pl = strlen(WIRE_API_PREFIX);
    if (strncmp(target, WIRE_API_PREFIX, pl) != 0 || target[pl] != '.') return NULL;
    const char *op = target + pl + 1;
    for (size_t i = 0; ops[i]; i++)
        if (strcmp(ops[i], op) == 0) return ops[i];
    return NULL;
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

const char *wire_error_namespace(const char *type)
{
    if (strcmp(type, QR_E_VALIDATION) == 0) return "com.amazon.coral.validate#";
    if (strcmp(type, QR_E_SERIALIZATION) == 0 || strcmp(type, QR_E_UNKNOWN_OP) == 0 ||
        strcmp(type, SIGV4_E_MISSING) == 0 || strcmp(type, SIGV4_E_INCOMPLETE) == 0 ||
        strcmp(type, SIGV4_E_INVALID) == 0 || strcmp(type, SIGV4_E_UNRECOGNIZED) == 0 ||
        strcmp(type, "RequestEntityTooLarge") == 0)
        return "com.amazon.coral.service#";
    return "com.amazonaws.dynamodb.v20120810#";
}

int wire_error_body(buf *out, const char *type, const char *msg)
{
    char full[256];
    snprintf(full, sizeof full, "%s%s", wire_error_namespace(type), type);
    json_t *o = json_object();
    if (o == NULL) return -1;
    int rc = json_object_set_new(o, "__type", json_string(full));
    if (rc == 0 && msg) {
        /* The message may quote the request cut to fit, possibly inside a character. */
        char *text = strdup(msg);
        if (text) err_utf8_repair(text);
        rc = text ? json_object_set_new(o, "message", json_string(text)) : -1;
        free(text);
    }
    char *text = rc == 0 ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (text == NULL) return -1;
    rc = buf_puts(out, text);
    free(text);
    return rc;
}

void wire_table_names(const char *body, size_t len, char *out, size_t cap)
{
    if (cap == 0) return;
    out[0] = '\0';
    if (body == NULL || len == 0) return;
    json_t *doc = json_loadb(body, len, JSON_DECODE_ANY, NULL);
    if (doc == NULL) return;
    ops_request_tables(doc, out, cap);
    json_decref(doc);
}

int wire_json_valid(const char *body, size_t len, char *why, size_t whylen)
{
    json_error_t jerr;
    json_t *doc = json_loadb(body, len, 0, &jerr);
    if (doc == NULL) {
        if (why && whylen) snprintf(why, whylen, "%s", jerr.text);
        return 0;
    }
    json_decref(doc);
    return 1;
}
