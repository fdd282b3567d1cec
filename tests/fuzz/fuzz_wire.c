/* fuzz_wire.c — libFuzzer harness for what the server reads from the network before
 * qr_call: SigV4 verification (src/server/sigv4.h), credentials files, the X-Amz-Target
 * and body helpers (src/server/wire.h), and the key codec's decoder (src/model/keycodec.h).
 *
 * Input: one mode byte, then text. Mode 0 parses the text as a credentials file; 1 reads
 * "name: value" header lines up to an empty line and the rest as the body, and verifies
 * the request with and without a keyring; 2 runs the wire helpers; 3 decodes key bytes.
 * Checks crashes, leaks, hangs and round trips, not messages. No sockets are opened. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "model/keycodec.h"
#include "quarry.h"
#include "server/sigv4.h"
#include "server/wire.h"

#define CHECK(c)                                                                             \
    do {                                                                                     \
        if (!(c)) {                                                                          \
            fprintf(stderr, "fuzz_wire: check failed at line %d: %s\n", __LINE__, #c);       \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

#define MAX_HEADERS 64

static sigv4_keyring ring;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char creds[] = "[default]\naws_access_key_id = AKIDEXAMPLE\n"
                                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n";
    char errbuf[256];
    CHECK(sigv4_keyring_parse(&ring, creds, sizeof creds - 1, "fuzz", errbuf, sizeof errbuf) == 0);
    return 0;
}

static void run_verify(const char *p, size_t n)
{
    sigv4_pair headers[MAX_HEADERS];
    size_t nh = 0, pos = 0;
    while (pos < n && nh < MAX_HEADERS) {
        const char *line = p + pos;
        const char *nl = memchr(line, '\n', n - pos);
        size_t len = nl ? (size_t)(nl - line) : n - pos;
        pos += len + (nl ? 1 : 0);
        if (len == 0) break;
        const char *colon = memchr(line, ':', len);
        if (!colon) continue;
        size_t vstart = (size_t)(colon - line) + 1;
        while (vstart < len && line[vstart] == ' ') vstart++;
        headers[nh].name = line;
        headers[nh].name_len = (size_t)(colon - line);
        headers[nh].value = line + vstart;
        headers[nh].value_len = len - vstart;
        nh++;
    }
    sigv4_pair query[2] = {{"a", 1, "b%20c", 5}, {"flag", 4, NULL, 0}};
    sigv4_request req = {.method = "POST", .path = "/", .query = query, .n_query = n & 1 ? 2 : 0,
                         .headers = headers, .n_headers = nh, .body = p + pos, .body_len = n - pos};
    char ak[64];
    qr_err e;
    err_init(&e);
    int rc = sigv4_verify(&req, &ring, "dynamodb", 1440938160, ak, sizeof ak, &e);
    CHECK(rc == 0 || (rc == -1 && e.type));
    err_init(&e);
    rc = sigv4_verify(&req, NULL, "dynamodb", 1440938160, NULL, 0, &e);
    CHECK(rc == 0 || (rc == -1 && e.type));
}

static void run_wire(const char *p, size_t n)
{
    char out[256], why[128];
    qr_request_tables(p, n, out, sizeof out);
    CHECK(strlen(out) < sizeof out);
    qr_request_tables(p, n, out, 4);
    CHECK(strlen(out) < 4);
    int valid = wire_json_valid(p, n, why, sizeof why);
    json_error_t je;
    json_t *j = json_loadb(p, n, JSON_DECODE_ANY, &je);
    (void)valid;
    json_decref(j);
    char *target = malloc(n + 1);
    memcpy(target, p, n);
    target[n] = '\0';
    const char *op = wire_operation(target, qr_operations(), qr_stream_operations());
    if (op) CHECK(strstr(target, op) != NULL);
    free(target);
}

static void run_keycodec(const uint8_t *p, size_t n)
{
    static const char types[] = {'S', 'N', 'B'};
    for (int t = 0; t < 3; t++) {
        for (int desc = 0; desc < 2; desc++) {
            json_t *av = NULL;
            size_t used = keycodec_decode(p, n, types[t], desc, &av);
            CHECK(used <= n);
            if (!used) {
                json_decref(av);
                continue;
            }
            CHECK(av != NULL);
            buf b;
            buf_init(&b, 1 << 20);
            qr_err e;
            err_init(&e);
            if (keycodec_append(&b, av, desc, &e) != 0) {
                char *text = json_dumps(av, JSON_COMPACT | JSON_ENCODE_ANY);
                fprintf(stderr, "fuzz_wire: decoded %s (type %c) does not re-encode: %s\n", text, types[t], e.msg);
                free(text);
                abort();
            }
            /* Re-decoding the canonical encoding gives the same value. */
            json_t *again = NULL;
            size_t used2 = keycodec_decode((const uint8_t *)b.data, b.len, types[t], desc, &again);
            CHECK(used2 == b.len && again && json_equal(av, again));
            json_decref(again);
            buf_free(&b);
            json_decref(av);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    /* An exact-size copy so reads past the end are caught. */
    char *copy = malloc(n ? n : 1);
    memcpy(copy, p, n);
    switch (data[0] % 4) {
    case 0: {
        sigv4_keyring kr;
        memset(&kr, 0, sizeof kr);
        char errbuf[256];
        if (sigv4_keyring_parse(&kr, copy, n, "fuzz", errbuf, sizeof errbuf) == 0) {
            CHECK(kr.n > 0);
            for (size_t i = 0; i < kr.n; i++)
                CHECK(sigv4_keyring_find(&kr, kr.keys[i].access_key, strlen(kr.keys[i].access_key)) != NULL);
        }
        sigv4_keyring_free(&kr);
        break;
    }
    case 1: run_verify(copy, n); break;
    case 2: run_wire(copy, n); break;
    default: run_keycodec((const uint8_t *)copy, n); break;
    }
    free(copy);
    return 0;
}
