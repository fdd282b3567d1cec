/* keycodec.c — order-preserving, self-delimiting encodings of S, N and B key components,
 * and the partition hash (see keycodec.h). S and B bytes have each 0x00 escaped as
 * 0x00 0xFF and end with 0x00 0x01, so memcmp orders them as unsigned byte strings with
 * a prefix first; N uses num_key_encode; descending is the bitwise complement. It does
 * not validate AttributeValues (value.c does) nor know which attributes form a key. */
#include "model/keycodec.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "model/number.h"
#include "model/value.h"

#define ESC 0x00
#define ESC_ZERO 0xFF
#define ESC_END 0x01

/* Appends bytes p[0..n) escaped and terminated, complemented when desc is set. */
static int append_bytes(buf *out, const uint8_t *p, size_t n, int desc)
{
    uint8_t flip = desc ? 0xFF : 0x00;
    uint8_t chunk[256];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k + 2 > sizeof chunk) {
            if (buf_append(out, chunk, k)) return -1;
            k = 0;
        }
        if (p[i] == 0x00) {
            chunk[k++] = ESC ^ flip;
            chunk[k++] = ESC_ZERO ^ flip;
        } else {
            chunk[k++] = p[i] ^ flip;
        }
    }
    if (k + 2 > sizeof chunk) {
        if (buf_append(out, chunk, k)) return -1;
        k = 0;
    }
    chunk[k++] = ESC ^ flip;
    chunk[k++] = ESC_END ^ flip;
    return buf_append(out, chunk, k);
}

/* Reads one escaped, terminated byte string from p. On success sets *raw (malloc'd,
 * NUL-terminated) and *rawlen and returns the bytes consumed; returns 0 if the bytes
 * are not a complete valid encoding. */
static size_t read_bytes(const uint8_t *p, size_t len, int desc, uint8_t **raw, size_t *rawlen)
{
    uint8_t flip = desc ? 0xFF : 0x00;
    size_t end = 0, n = 0;
    for (;;) {
        if (end >= len) return 0;
        uint8_t c = p[end] ^ flip;
        if (c != ESC) {
            end++;
            n++;
            continue;
        }
        if (end + 1 >= len) return 0;
        uint8_t t = p[end + 1] ^ flip;
        if (t == ESC_END) break;
        if (t != ESC_ZERO) return 0;
        end += 2;
        n++;
    }
    uint8_t *r = malloc(n + 1);
    if (r == NULL) return 0;
    size_t k = 0;
    for (size_t i = 0; i < end; i++) {
        uint8_t c = p[i] ^ flip;
        r[k++] = c;
        if (c == ESC) i++; /* skip the ESC_ZERO that follows */
    }
    r[k] = '\0';
    *raw = r;
    *rawlen = n;
    return end + 2;
}

static int too_large(qr_err *err)
{
    return err_set(err, QR_E_INTERNAL, "Key encoding exceeds the buffer limit or memory");
}

int keycodec_append(buf *out, const json_t *av, int desc, qr_err *err)
{
    qr_type t = value_type(av);
    const json_t *p = t == QR_T_NONE ? NULL : value_payload(av);
    switch (t) {
    case QR_T_S:
        if (!json_is_string(p))
            return err_validation(err, QR_MSG_INVALID_PARAMETER "S key value must be a string");
        if (append_bytes(out, (const uint8_t *)json_string_value(p), json_string_length(p), desc))
            return too_large(err);
        return 0;
    case QR_T_N: {
        if (!json_is_string(p))
            return err_validation(err, QR_MSG_INVALID_PARAMETER "N key value must be a string");
        qr_num n;
        if (num_parse(json_string_value(p), json_string_length(p), &n, err)) return -1;
        if (num_key_encode(&n, desc, out)) return too_large(err);
        return 0;
    }
    case QR_T_B: {
        unsigned char *bytes;
        size_t len;
        if (value_binary(av, &bytes, &len))
            return err_validation(err, QR_MSG_INVALID_PARAMETER "B key value is not valid base64");
        int rc = append_bytes(out, bytes, len, desc);
        free(bytes);
        if (rc) return too_large(err);
        return 0;
    }
    default:
        return err_validation(err, QR_MSG_INVALID_PARAMETER
                              "Key attributes must be scalars of type S, N or B");
    }
}

/* {"<type>": s} taking ownership of s; NULL if s is NULL or on allocation failure. */
static json_t *wrap(const char *type, json_t *s)
{
    if (s == NULL) return NULL;
    json_t *av = json_object();
    if (av == NULL || json_object_set_new(av, type, s)) {
        json_decref(av);
        return NULL;
    }
    return av;
}

size_t keycodec_decode(const uint8_t *p, size_t len, char type, int desc, json_t **av)
{
    *av = NULL;
    if (type == 'N') {
        qr_num n;
        size_t used = num_key_decode(p, len, desc, &n);
        if (used == 0) return 0;
        *av = value_from_number(&n);
        return *av ? used : 0;
    }
    if (type != 'S' && type != 'B') return 0;
    uint8_t *raw;
    size_t rawlen;
    size_t used = read_bytes(p, len, desc, &raw, &rawlen);
    if (used == 0) return 0;
    json_t *s = NULL;
    if (type == 'S') {
        s = json_stringn((const char *)raw, rawlen); /* NULL unless valid UTF-8 */
    } else if (rawlen <= (size_t)INT32_MAX / 4 * 3 - 3) {
        char *text = malloc((rawlen + 2) / 3 * 4 + 1);
        if (text) {
            int n = EVP_EncodeBlock((unsigned char *)text, raw, (int)rawlen);
            s = json_stringn(text, (size_t)n);
            free(text);
        }
    }
    free(raw);
    *av = wrap(type == 'S' ? "S" : "B", s);
    return *av ? used : 0;
}

uint64_t keycodec_hash(const void *encoded, size_t len)
{
    return XXH3_64bits(encoded, len);
}
