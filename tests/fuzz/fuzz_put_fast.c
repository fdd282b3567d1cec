/* fuzz_put_fast.c — libFuzzer harness for PutItem's decoder (src/ops/plain.c) against
 * the whole way.
 *
 * The input is the text of a PutItem's Item, and of whatever follows it in the body. It is
 * put into table "fast" through qr_call (the decoder's verdict noted) and into table "slow"
 * of the same schema with "ReturnValues":"NONE" first, which the decoder always declines (inputs that name ReturnValues, or hold a \u
 * escape that could spell it, are skipped). The answers must be equal; when the put succeeded,
 * the item read back from both must be equal too (its key taken from the input). The
 * fixed cases and a seeded random run of the same comparison are in
 * tests/unit/ops/test_put_fast.c, which make test runs. Seeds: a few items such as
 *   {"pk":{"S":"a"},"sk":{"N":"1"},"n":{"N":"-0.50"},"s":{"S":"x y"}} */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/ops.h"
#include "quarry.h"

#define CHECK(c, ...)                                                            \
    do {                                                                         \
        if (!(c)) {                                                              \
            fprintf(stderr, "fuzz_put_fast: check failed at line %d: %s\n", __LINE__, #c); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
            abort();                                                             \
        }                                                                        \
    } while (0)

static qr_db *db;

static void create(const char *name)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"TableName\":\"%s\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
             "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],\"AttributeDefinitions\":["
             "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}],"
             "\"BillingMode\":\"PAY_PER_REQUEST\"}",
             name);
    qr_response r;
    if (qr_call(db, "CreateTable", body, strlen(body), &r) != QR_OK) abort();
    qr_response_free(&r);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char dir[] = "/tmp/quarry-fuzz-putfast-XXXXXX";
    if (mkdtemp(dir) == NULL) abort();
    qr_options o = {.no_sync = 1};
    char *err = NULL;
    if (qr_open(dir, &o, &db, &err) != QR_OK) abort();
    create("fast");
    create("slow");
    return 0;
}

static char *get(const char *table, const char *key)
{
    char *body = malloc(strlen(key) + 64);
    sprintf(body, "{\"TableName\":\"%s\",\"Key\":%s}", table, key);
    qr_response r;
    qr_call(db, "GetItem", body, strlen(body), &r);
    free(body);
    char *out = r.body;
    r.body = NULL;
    qr_response_free(&r);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096 || memmem(data, size, "ReturnValues", 12) || memmem(data, size, "\\u", 2)) return 0;
    /* The same length before the input, so that an error's line and column agree: the
     * fast path takes white space, and declines any parameter beside TableName and Item. */
    static const char fast_head[] = "{                      \"TableName\":\"fast\",\"Item\":";
    static const char slow_head[] = "{\"ReturnValues\":\"NONE\",\"TableName\":\"slow\",\"Item\":";
    _Static_assert(sizeof fast_head == sizeof slow_head, "heads of one length");
    size_t head = sizeof fast_head - 1, len = head + size + 1;
    char *fast = malloc(len), *slow = malloc(len);
    memcpy(fast, fast_head, head);
    memcpy(slow, slow_head, head);
    memcpy(fast + head, data, size);
    memcpy(slow + head, data, size);
    fast[len - 1] = slow[len - 1] = '}';
    size_t flen = len, slen = len;

    qr_response f, s;
    plain_request d;
    int taken = plain_decode(db, PLAIN_PUT, fast, flen, &d);
    if (taken) {
        plain_free(&d);
        catalog_release(db, d.t);
    }
    qr_call(db, "PutItem", fast, flen, &f);
    CHECK(!taken || f.http_status == 200, "a decoded write failed: %s", f.body);
    qr_call(db, "PutItem", slow, slen, &s);
    /* ConsumedCapacity names the table */
    for (char *t = f.body ? strstr(f.body, "\"TableName\":\"fast\"") : NULL; t; t = strstr(t + 1, "\"TableName\":\"fast\""))
        memcpy(t + 13, "slow", 4);
    CHECK(f.http_status == s.http_status && f.body && s.body && strcmp(f.body, s.body) == 0,
          "fast (%s): %d %s\nslow: %d %s", taken ? "taken" : "declined", f.http_status, f.body, s.http_status, s.body);
    if (f.http_status == 200) {
        json_t *item = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        json_t *key = json_pack("{s:O?,s:O?}", "pk", json_object_get(item, "pk"), "sk", json_object_get(item, "sk"));
        char *ktext = key ? json_dumps(key, JSON_COMPACT) : NULL;
        if (ktext) {
            char *a = get("fast", ktext), *b = get("slow", ktext);
            CHECK(a && b && strcmp(a, b) == 0, "stored items differ\n  fast: %s\n  slow: %s", a, b);
            free(a);
            free(b);
        }
        free(ktext);
        json_decref(key);
        json_decref(item);
    }
    qr_response_free(&f);
    qr_response_free(&s);
    free(fast);
    free(slow);
    return 0;
}
