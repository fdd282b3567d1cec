/* fuzz_call.c — libFuzzer harness for the whole request path: qr_call (include/quarry.h).
 *
 * Input: one byte choosing the operation (an index into qr_operations(), or one past
 * the end for an unknown name), then the JSON request body, passed with its exact length
 * and no NUL after it. The database lives in /tmp/quarry-fuzz-<pid>, opened once, with
 * two tables holding a few items: "Fuzz" (composite key, an LSI, a GSI, a GSI with a
 * multi-attribute key, TTL on) and "Flat" (numeric hash key). Every FUZZ_RESET inputs the
 * indexes are verified against their tables (qr_verify; a difference aborts) and every
 * table is dropped and the baseline recreated, so the database stays small. Checks
 * crashes, leaks, hangs, response invariants and index consistency, not DynamoDB texts.
 * FUZZ_DEFER=1 runs the requests as an event loop of `serve --no-sync` does: single-item
 * writes are staged and committed together at the end of a turn (qr_defer_flushes), a
 * turn being one input of the sequence mode, or FUZZ_TURN inputs otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "quarry.h"

/* Items per baseline table: fewer in sequence mode, which rebuilds them every input. */
#ifdef FUZZ_SEQUENCE
#define BASE_ITEMS 4
#else
#define BASE_ITEMS 12
#endif

#ifndef FUZZ_RESET
#define FUZZ_RESET 2000
#endif

#define CHECK(c)                                                                             \
    do {                                                                                     \
        if (!(c)) {                                                                          \
            fprintf(stderr, "fuzz_call: check failed at line %d: %s\n", __LINE__, #c);       \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

static qr_db *db;
static char dir[64];
static const char *const *ops;
static size_t nops;
static unsigned long iterations;
static int print_calls; /* FUZZ_PRINT=1: log every request and response */
static int defer;       /* FUZZ_DEFER=1: stage writes and commit them once a turn */

#ifndef FUZZ_TURN
#define FUZZ_TURN 8
#endif

/* The end of a loop's turn: what the turn staged is committed. */
static void end_turn(void)
{
    if (defer) CHECK(qr_flush_deferred() == QR_OK);
}

static const char *baseline[][2] = {
    {"CreateTable",
     "{\"TableName\":\"Fuzz\",\"BillingMode\":\"PAY_PER_REQUEST\","
     "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
     "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"lsk\",\"AttributeType\":\"N\"},"
     "{\"AttributeName\":\"gpk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"gsk\",\"AttributeType\":\"N\"},"
     "{\"AttributeName\":\"t\",\"AttributeType\":\"S\"},{\"AttributeName\":\"r\",\"AttributeType\":\"S\"},"
     "{\"AttributeName\":\"score\",\"AttributeType\":\"N\"},{\"AttributeName\":\"player\",\"AttributeType\":\"B\"}],"
     "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
     "\"LocalSecondaryIndexes\":[{\"IndexName\":\"Lsi\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
     "{\"AttributeName\":\"lsk\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}],"
     "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"Gsi\",\"KeySchema\":[{\"AttributeName\":\"gpk\",\"KeyType\":\"HASH\"},"
     "{\"AttributeName\":\"gsk\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"INCLUDE\","
     "\"NonKeyAttributes\":[\"v\",\"l\"]}},"
     "{\"IndexName\":\"Multi\",\"KeySchema\":[{\"AttributeName\":\"t\",\"KeyType\":\"HASH\"},"
     "{\"AttributeName\":\"r\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"score\",\"KeyType\":\"RANGE\"},"
     "{\"AttributeName\":\"player\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
     "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":\"NEW_AND_OLD_IMAGES\"}}"},
    {"UpdateTimeToLive",
     "{\"TableName\":\"Fuzz\",\"TimeToLiveSpecification\":{\"Enabled\":true,\"AttributeName\":\"exp\"}}"},
    {"CreateTable",
     "{\"TableName\":\"Flat\",\"BillingMode\":\"PAY_PER_REQUEST\","
     "\"AttributeDefinitions\":[{\"AttributeName\":\"id\",\"AttributeType\":\"N\"}],"
     "\"KeySchema\":[{\"AttributeName\":\"id\",\"KeyType\":\"HASH\"}]}"},
};

static void call_ok(const char *op, const char *body)
{
    qr_response r;
    if (qr_call(db, op, body, strlen(body), &r) != QR_OK) {
        fprintf(stderr, "fuzz_call: setup %s failed: %s\n", op, r.body);
        abort();
    }
    qr_response_free(&r);
}

static void create_baseline(void)
{
    for (size_t i = 0; i < sizeof baseline / sizeof baseline[0]; i++) call_ok(baseline[i][0], baseline[i][1]);
    char body[1024];
    for (int i = 0; i < BASE_ITEMS; i++) {
        snprintf(body, sizeof body,
                 "{\"TableName\":\"Fuzz\",\"Item\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"},"
                 "\"lsk\":{\"N\":\"%d\"},\"gpk\":{\"S\":\"g%d\"},\"gsk\":{\"N\":\"%d.5\"},"
                 "\"t\":{\"S\":\"T\"},\"r\":{\"S\":\"%s\"},\"score\":{\"N\":\"%d\"},\"player\":{\"B\":\"AQI%c\"},"
                 "\"v\":{\"S\":\"value %d\"},\"l\":{\"L\":[{\"N\":\"1\"},{\"M\":{\"a\":{\"SS\":[\"x\",\"y\"]}}}]},"
                 "\"ns\":{\"NS\":[\"1\",\"2\"]},\"exp\":{\"N\":\"%s\"}}}",
                 i % 3, i, i * 7 % 5, i % 2, i, i % 2 ? "EU" : "US", 100 + i % 4, "ABCDEFGHIJKL"[i], i,
                 i == BASE_ITEMS - 1 ? "1000" : "4000000000");
        call_ok("PutItem", body);
        snprintf(body, sizeof body,
                 "{\"TableName\":\"Flat\",\"Item\":{\"id\":{\"N\":\"%d\"},\"c\":{\"N\":\"%d\"},\"b\":{\"BOOL\":%s}}}", i,
                 i * 10, i % 2 ? "true" : "false");
        call_ok("PutItem", body);
    }
}

/* What a successful CreateTable or UpdateTable stored must be a well-formed schema:
 * every attribute definition a non-empty name with type S, N or B. */
static void check_schema(const char *op, json_t *resp)
{
    if (strcmp(op, "CreateTable") != 0 && strcmp(op, "UpdateTable") != 0) return;
    json_t *defs = json_object_get(json_object_get(resp, "TableDescription"), "AttributeDefinitions");
    CHECK(json_is_array(defs));
    size_t i;
    json_t *d;
    json_array_foreach(defs, i, d) {
        const char *name = json_string_value(json_object_get(d, "AttributeName"));
        const char *type = json_string_value(json_object_get(d, "AttributeType"));
        if (!name || !*name || !type || (strcmp(type, "S") && strcmp(type, "N") && strcmp(type, "B"))) {
            char *text = json_dumps(defs, JSON_COMPACT);
            fprintf(stderr, "fuzz_call: %s stored an invalid attribute definition: %s\n", op, text);
            free(text);
            abort();
        }
    }
}

static void reset_database(int verify)
{
    end_turn();
    char *report = NULL;
    if (verify && qr_verify(db, NULL, &report) != QR_OK) {
        fprintf(stderr, "fuzz_call: indexes disagree with their tables after %lu inputs:\n%s\n", iterations,
                report ? report : "(no report)");
        abort();
    }
    free(report);
    qr_response r;
    CHECK(qr_call(db, "ListTables", "{}", 2, &r) == QR_OK);
    json_error_t je;
    json_t *list = json_loadb(r.body, r.len, 0, &je);
    qr_response_free(&r);
    CHECK(list);
    size_t i;
    json_t *name;
    json_array_foreach(json_object_get(list, "TableNames"), i, name) {
        /* An input may have protected a table against deletion: lift that first. */
        json_t *unprotect = json_pack("{sOsb}", "TableName", name, "DeletionProtectionEnabled", 0);
        char *text = json_dumps(unprotect, JSON_COMPACT);
        CHECK(qr_call(db, "UpdateTable", text, strlen(text), &r) == QR_OK || r.error_type != NULL);
        qr_response_free(&r);
        free(text);
        json_decref(unprotect);
        json_t *req = json_pack("{sO}", "TableName", name);
        char *body = json_dumps(req, JSON_COMPACT);
        call_ok("DeleteTable", body);
        free(body);
        json_decref(req);
    }
    json_decref(list);
    create_baseline();
}

static void remove_dir(const char *path)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "fuzz_call: could not remove %s\n", path);
}

static void cleanup(void)
{
    if (!db) return;
    qr_close(db);
    db = NULL;
    remove_dir(dir);
}

/* libFuzzer ends runs with _Exit (time limit, crash), so atexit cannot be relied on:
 * remove the directories of earlier runs whose process is gone. */
static void remove_stale_dirs(void)
{
    glob_t g;
    if (glob("/tmp/quarry-fuzz-*", 0, NULL, &g) != 0) return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        long pid = strtol(g.gl_pathv[i] + strlen("/tmp/quarry-fuzz-"), NULL, 10);
        if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) remove_dir(g.gl_pathv[i]);
    }
    globfree(&g);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    remove_stale_dirs();
    snprintf(dir, sizeof dir, "/tmp/quarry-fuzz-%ld", (long)getpid());
    remove_dir(dir);
    CHECK(mkdir(dir, 0700) == 0);
    qr_options o = {0};
    o.no_sync = 1;
    const char *ttl = getenv("FUZZ_TTL_MS");
    o.ttl_interval_ms = ttl ? atoi(ttl) : 0;
    char *msg = NULL;
    if (qr_open(dir, &o, &db, &msg) != QR_OK) {
        fprintf(stderr, "fuzz_call: qr_open(%s): %s\n", dir, msg ? msg : "?");
        abort();
    }
    print_calls = getenv("FUZZ_PRINT") != NULL;
    /* DynamoDB's operations, then the Streams API's. */
    static const char *all[64];
    for (const char *const *o = qr_operations(); *o && nops < 63; o++) all[nops++] = *o;
    for (const char *const *o = qr_stream_operations(); *o && nops < 63; o++) all[nops++] = *o;
    ops = all;
    create_baseline();
    defer = getenv("FUZZ_DEFER") != NULL;
    if (defer) qr_defer_flushes(1);
    atexit(cleanup);
    return 0;
}

/* One request: op index byte + body of len-1 bytes. */
static void run_one(const uint8_t *data, size_t size)
{
    size_t k = data[0] % (nops + 1);
    const char *op = k < nops ? ops[k] : "NoSuchOperation";
    size_t len = size - 1;
    /* Exactly len bytes, so a read past the body's end is caught. */
    char *body = malloc(len ? len : 1);
    memcpy(body, data + 1, len);
    qr_response r;
    memset(&r, 0xAB, sizeof r);
    int rc = qr_call(db, op, body, len, &r);
    if (print_calls) fprintf(stderr, "fuzz_call: %s %.*s\n  -> %d %s\n", op, (int)len, body, r.http_status, r.body);
    free(body);
    CHECK(rc == QR_OK || rc == QR_ERR);
    CHECK(r.body != NULL && strlen(r.body) == r.len);
    if (rc == QR_OK) {
        CHECK(r.error_type == NULL && r.http_status == 200);
    } else {
        CHECK(r.error_type != NULL && (r.http_status == 400 || r.http_status == 500));
    }
    json_error_t je;
    json_t *j = json_loadb(r.body, r.len, 0, &je);
    if (!j || !json_is_object(j)) {
        fprintf(stderr, "fuzz_call: %s answered with a body that is not a JSON object: %s\n", op, r.body);
        abort();
    }
    if (rc != QR_OK) CHECK(json_is_string(json_object_get(j, "__type")));
    else check_schema(op, j);
    json_decref(j);
    qr_response_free(&r);
}

#ifndef FUZZ_SEQUENCE
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (++iterations % FUZZ_RESET == 0) reset_database(1);
    run_one(data, size);
    if (iterations % FUZZ_TURN == 0) end_turn();
    return 0;
}
#else
/* Sequence mode (fuzz_seq.c): up to FUZZ_SEQUENCE requests separated by NUL bytes
 * (which JSON text cannot contain), run against a freshly reset database, so every
 * input reproduces on its own. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    /* Verify every index after the previous input (a verify per input would halve the
     * speed; every 16th input is checked). */
    reset_database(++iterations % 16 == 0);
    size_t pos = 0;
    for (int n = 0; n < FUZZ_SEQUENCE && pos < size; n++) {
        const uint8_t *end = memchr(data + pos + 1, 0, size - pos - 1);
        size_t len = end ? (size_t)(end - (data + pos)) : size - pos;
        if (len >= 1 && data[pos] != 0) run_one(data + pos, len);
        pos += len + 1;
    }
    end_turn();
    return 0;
}
#endif
