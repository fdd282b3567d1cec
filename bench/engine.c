/* engine.c — benchmark of the engine through the public C API, beside raw RocksDB.
 *
 * In one process and one run: PutItem and GetItem through qr_call against rocksdb_put
 * and rocksdb_get of the same key and value sizes, with and without fsync; then Query
 * of 50 items (descending) against 5 GetItems. It prints throughput and the ratios the
 * foundation issue sets as goals (quarry ≥ 50% of raw RocksDB; a 50-item Query costs
 * less than 5 point Gets). Shared machines are noisy: compare ratios, not absolutes.
 *
 * `engine profile [N]` instead runs the requests of the HTTP benchmark (bench/http/gen.py's
 * shapes) for counting instructions under callgrind: N GetItems, N PutItems and N SigV4
 * verifications, each in its own function (profile_get, profile_put, profile_sigv4) so
 * `valgrind --tool=callgrind --toggle-collect=profile_get …` counts one kind alone. */
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quarry.h"
#include "server/sigv4.h"

#define VALUE_BYTES 100

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void call(qr_db *db, const char *op, const char *body)
{
    qr_response r;
    if (qr_call(db, op, body, strlen(body), &r) != QR_OK) {
        fprintf(stderr, "%s failed: %s\n", op, r.body);
        exit(1);
    }
    qr_response_free(&r);
}

static char payload[VALUE_BYTES + 1];

static void item_request(char *out, size_t cap, long i)
{
    snprintf(out, cap,
             "{\"TableName\":\"bench\",\"Item\":{\"pk\":{\"S\":\"user#%08ld\"},\"sk\":{\"S\":"
             "\"item#%04ld\"},"
             "\"data\":{\"S\":\"%s\"}}}",
             i / 50, i % 50, payload);
}

static void key_request(char *out, size_t cap, long i)
{
    snprintf(out, cap,
             "{\"TableName\":\"bench\",\"Key\":{\"pk\":{\"S\":\"user#%08ld\"},\"sk\":{\"S\":\"item#"
             "%04ld\"}}}",
             i / 50, i % 50);
}

typedef struct result {
    double put, get, query_desc, query_asc;
} result;

static qr_db *open_db(const char *dir, int no_sync)
{
    qr_db *db;
    char *err = NULL;
    /* The load runs faster than one table's quota of 40,000 units a second, which
     * capacity metering would throttle: off unless QUARRY_CAPACITY says otherwise (the
     * profile's tables have the quota as their warm throughput, so enforce measures what
     * metering costs without throttling). */
    const char *mode = getenv("QUARRY_CAPACITY");
    qr_options o = {.no_sync = no_sync,
                    .capacity = mode && strcmp(mode, "enforce") == 0   ? QR_CAPACITY_ENFORCE
                                : mode && strcmp(mode, "observe") == 0 ? QR_CAPACITY_OBSERVE
                                                                       : QR_CAPACITY_OFF};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open: %s\n", err);
        exit(1);
    }
    return db;
}

static double run_queries(qr_db *db, long n, long nq, int forward)
{
    char req[512];
    double t0 = now();
    for (long i = 0; i < nq; i++) {
        snprintf(req, sizeof req,
                 "{\"TableName\":\"bench\",\"KeyConditionExpression\":\"pk = "
                 ":p\",\"ScanIndexForward\":%s,"
                 "\"Limit\":50,\"ExpressionAttributeValues\":{\":p\":{\"S\":\"user#%08ld\"}}}",
                 forward ? "true" : "false", (long)(rand() % (n / 50)));
        call(db, "Query", req);
    }
    return (double)nq / (now() - t0);
}

/* The table every run loads: on-demand, warmed so that capacity never throttles. */
static const char BENCH_TABLE[] =
    "{\"TableName\":\"bench\",\"BillingMode\":\"PAY_PER_REQUEST\",\"WarmThroughput\":{"
    "\"ReadUnitsPerSecond\":40000,\"WriteUnitsPerSecond\":40000},\"AttributeDefinitions\":["
    "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\","
    "\"AttributeType\":\"S\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
    "\"KeyType\":\"RANGE\"}]}";

/* Loads n items, reopens the database (so reads meet the LSM tree's files, as in a
 * steady state, rather than only the memtable), then reads. */
static result run_quarry(const char *dir, int no_sync, long n, long nq)
{
    qr_db *db = open_db(dir, no_sync);
    call(db, "CreateTable", BENCH_TABLE);
    char req[512];
    result r = {0};
    double t0 = now();
    for (long i = 0; i < n; i++) {
        item_request(req, sizeof req, i);
        call(db, "PutItem", req);
    }
    r.put = (double)n / (now() - t0);
    if (nq == 0) {
        qr_close(db);
        return r;
    }
    qr_close(db);
    db = open_db(dir, no_sync);
    srand(42);
    t0 = now();
    for (long i = 0; i < n; i++) {
        key_request(req, sizeof req, rand() % n);
        call(db, "GetItem", req);
    }
    r.get = (double)n / (now() - t0);
    r.query_desc = run_queries(db, n, nq, 0);
    r.query_asc = run_queries(db, n, nq, 1);
    qr_close(db);
    return r;
}

static result run_rocksdb(const char *dir, int no_sync, long n)
{
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(o, 1);
    char *err = NULL;
    rocksdb_t *db = rocksdb_open(o, dir, &err);
    if (err) {
        fprintf(stderr, "rocksdb: %s\n", err);
        exit(1);
    }
    rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(wo, !no_sync);
    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    char key[64], value[256];
    result r = {0};
    int vlen = snprintf(
        value, sizeof value,
        "{\"pk\":{\"S\":\"user#00000000\"},\"sk\":{\"S\":\"item#0000\"},\"data\":{\"S\":\"%s\"}}",
        payload);
    double t0 = now();
    for (long i = 0; i < n; i++) {
        int klen = snprintf(key, sizeof key, "t\x01user#%08ld\x01item#%04ld", i / 50, i % 50);
        rocksdb_put(db, wo, key, (size_t)klen, value, (size_t)vlen, &err);
    }
    r.put = (double)n / (now() - t0);
    if (no_sync == 0) goto out;
    rocksdb_close(db);
    db = rocksdb_open(o, dir, &err);
    srand(42);
    t0 = now();
    for (long i = 0; i < n; i++) {
        long j = rand() % n;
        int klen = snprintf(key, sizeof key, "t\x01user#%08ld\x01item#%04ld", j / 50, j % 50);
        size_t got;
        char *v = rocksdb_get(db, ro, key, (size_t)klen, &got, &err);
        free(v);
    }
    r.get = (double)n / (now() - t0);
out:
    rocksdb_writeoptions_destroy(wo);
    rocksdb_readoptions_destroy(ro);
    rocksdb_close(db);
    rocksdb_options_destroy(o);
    return r;
}

static void cleanup(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- profile mode ---- */

#define PROFILE_USERS 10000
#define PROFILE_PAYLOAD                                                                            \
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
    "xxxxxxxx"

/* A user item as gen.py writes it (pk "user#%05d", or "put#%06d" for new items). */
static void user_item_request(char *out, size_t cap, const char *pk_fmt, long pk, long i)
{
    char pkv[32];
    snprintf(pkv, sizeof pkv, pk_fmt, pk);
    snprintf(out, cap,
             "{\"TableName\":\"bench\",\"Item\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"profile\"},"
             "\"name\":{\"S\":\"user "
             "%ld\"},\"email\":{\"S\":\"user%ld@example.com\"},\"n\":{\"N\":\"%ld\"},"
             "\"payload\":{\"S\":\"" PROFILE_PAYLOAD "\"}}}",
             pkv, i, i, i);
}

__attribute__((noinline)) static void profile_get(qr_db *db, long n)
{
    char req[256];
    for (long i = 0; i < n; i++) {
        snprintf(req, sizeof req,
                 "{\"TableName\":\"bench\",\"Key\":{\"pk\":{\"S\":\"user#%05d\"},\"sk\":{\"S\":"
                 "\"profile\"}}}",
                 rand() % PROFILE_USERS);
        call(db, "GetItem", req);
    }
}

__attribute__((noinline)) static void profile_put(qr_db *db, long n)
{
    char req[512];
    for (long i = 0; i < n; i++) {
        user_item_request(req, sizeof req, "put#%06ld", i, i);
        call(db, "PutItem", req);
    }
}

/* A signed GetItem as wrk sends it for bench/http (headers in wrk's order). */
typedef struct signed_req {
    char body[256], date[17], auth[512], target[64], length[16];
    sigv4_pair headers[6];
    sigv4_request req;
    sigv4_keyring keys;
    time_t now;
} signed_req;

static void sign_request(signed_req *s)
{
    const char *secret = "quarry-bench-secret";
    snprintf(s->body, sizeof s->body,
             "{\"TableName\":\"bench\",\"Key\":{\"pk\":{\"S\":\"user#00042\"},\"sk\":{\"S\":"
             "\"profile\"}}}");
    snprintf(s->target, sizeof s->target, "DynamoDB_20120810.GetItem");
    snprintf(s->date, sizeof s->date, "20261130T010000Z");
    snprintf(s->length, sizeof s->length, "%zu", strlen(s->body));
    s->now = 1796000400; /* 2026-11-30T01:00:00Z */
    const char *names[6] = {"Host",       "Content-Type",  "X-Amz-Target",
                            "X-Amz-Date", "Authorization", "Content-Length"};
    const char *values[6] = {
        "127.0.0.1:8000", "application/x-amz-json-1.0", s->target, s->date, s->auth, s->length};
    for (int i = 0; i < 6; i++)
        s->headers[i] = (sigv4_pair){names[i], strlen(names[i]), values[i], strlen(values[i])};
    s->req = (sigv4_request){"POST", "/", NULL, 0, s->headers, 6, s->body, strlen(s->body)};
    const char *sh = "content-type;host;x-amz-date;x-amz-target";
    char payload[65], canon_hash[65], sig[65], sts[256];
    buf canon;
    buf_init(&canon, 0);
    sigv4_sha256_hex(s->body, strlen(s->body), payload);
    sigv4_canonical_request(&s->req, sh, strlen(sh), payload, &canon);
    sigv4_sha256_hex(canon.data, canon.len, canon_hash);
    buf_free(&canon);
    int n = snprintf(sts, sizeof sts,
                     "AWS4-HMAC-SHA256\n%s\n20261130/us-east-1/dynamodb/aws4_request\n%s", s->date,
                     canon_hash);
    sigv4_sign(secret, "20261130", "us-east-1", "dynamodb", sts, (size_t)n, sig);
    snprintf(
        s->auth, sizeof s->auth,
        "AWS4-HMAC-SHA256 Credential=AKIDQUARRYBENCH/20261130/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=%s, Signature=%s",
        sh, sig);
    s->headers[4].value_len = strlen(s->auth);
    const char *creds = "[default]\naws_access_key_id = AKIDQUARRYBENCH\naws_secret_access_key = "
                        "quarry-bench-secret\n";
    char why[256];
    if (sigv4_keyring_parse(&s->keys, creds, strlen(creds), "bench", why, sizeof why)) {
        fprintf(stderr, "keyring: %s\n", why);
        exit(1);
    }
}

__attribute__((noinline)) static void profile_sigv4(signed_req *s, long n)
{
    for (long i = 0; i < n; i++) {
        qr_err e;
        err_init(&e);
        if (sigv4_verify(&s->req, &s->keys, "dynamodb", s->now, NULL, 0, &e)) {
            fprintf(stderr, "sigv4_verify: %s\n", e.msg);
            exit(1);
        }
    }
}

static int profile(long n)
{
    char base[] = "/tmp/quarry-profile-XXXXXX";
    if (mkdtemp(base) == NULL) return 1;
    qr_db *db = open_db(base, 1);
    call(db, "CreateTable", BENCH_TABLE);
    char req[512];
    for (long i = 0; i < PROFILE_USERS; i++) {
        user_item_request(req, sizeof req, "user#%05ld", i, i);
        call(db, "PutItem", req);
    }
    srand(42);
    double t0 = now();
    profile_get(db, n);
    double t1 = now();
    profile_put(db, n);
    double t2 = now();
    signed_req s;
    sign_request(&s);
    double t3 = now();
    profile_sigv4(&s, n);
    double t4 = now();
    sigv4_keyring_free(&s.keys);
    qr_close(db);
    cleanup(base);
    printf("profile: %ld each; microseconds per call (wall clock, single thread): GetItem %.2f, "
           "PutItem %.2f, "
           "sigv4_verify %.2f\n",
           n, (t1 - t0) * 1e6 / (double)n, (t2 - t1) * 1e6 / (double)n,
           (t4 - t3) * 1e6 / (double)n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "profile") == 0)
        return profile(argc > 2 ? atol(argv[2]) : 1000);
    long n = argc > 1 ? atol(argv[1]) : 50000, n_sync = argc > 2 ? atol(argv[2]) : 2000;
    memset(payload, 'x', VALUE_BYTES);
    char base[] = "/tmp/quarry-bench-XXXXXX";
    if (mkdtemp(base) == NULL) return 1;
    char d1[300], d2[300], d3[300], d4[300];
    snprintf(d1, sizeof d1, "%s/q", base);
    snprintf(d2, sizeof d2, "%s/r", base);
    snprintf(d3, sizeof d3, "%s/qs", base);
    snprintf(d4, sizeof d4, "%s/rs", base);
    result rq = run_quarry(d1, 1, n, n / 20);
    result rr = run_rocksdb(d2, 1, n);
    result sq = run_quarry(d3, 0, n_sync, 0);
    result sr = run_rocksdb(d4, 0, n_sync);
    cleanup(base);
    printf("engine benchmark: %ld items of ~%d bytes, single thread\n", n, VALUE_BYTES + 60);
    printf("%-28s %12s %12s %8s\n", "operation", "quarry/s", "rocksdb/s", "ratio");
    printf("%-28s %12.0f %12.0f %7.0f%%\n", "put (no sync)", rq.put, rr.put, 100 * rq.put / rr.put);
    printf("%-28s %12.0f %12.0f %7.0f%%\n", "get", rq.get, rr.get, 100 * rq.get / rr.get);
    printf("%-28s %12.0f %12.0f %7.0f%%\n", "put (fsync per write)", sq.put, sr.put,
           100 * sq.put / sr.put);
    printf("%-28s %12.0f %12s %8s\n", "query 50 items, descending", rq.query_desc, "-", "-");
    printf("%-28s %12.0f %12s %8s\n", "query 50 items, ascending", rq.query_asc, "-", "-");
    printf("query(50) descending costs %.2f GetItems, ascending %.2f (goal: < 5)\n",
           rq.get / rq.query_desc, rq.get / rq.query_asc);
    return 0;
}
