/* scale.c — quarry at 10^4 to 10^7 items through the public C API, beside raw RocksDB over
 * the same keys and values in the same run, and what it costs at rest.
 *
 * At each size: a load through BatchWriteItem, then GetItem p50/p99, Query(50) p50/p99 both
 * ways, a full Scan (items/s and its time), the process's RSS and the data directory's size
 * against the items' logical size; then the tombstone scenario (a partition 90% deleted one
 * item at a time, and the same expiring through TTL) and a long mixed load that checks RSS
 * against --cache-size. Not a throughput benchmark of the server: bench/http is that.
 *
 *   build/bench/scale [N ...] [--mixed SECONDS] [--cache-size BYTES] [--dir DIR] [--keep]
 * N defaults to 10000 1000000; 10000000 needs ~5 GB of disk (both stores) and long. */
#include <rocksdb/c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "quarry.h"

#define PARTITION 100  /* items a partition */
#define DATA_CHARS 176 /* so that an item is 200 bytes by DynamoDB's measure */
#define GET_SAMPLES 20000
#define QUERY_SAMPLES 4000
#define BATCH 25
#define FEED_ITEMS 20000 /* the tombstone scenario's partition */
#define FEED_DELETED 18000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* VmRSS (or VmHWM) of this process in kB. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') kb = atol(line + n + 1);
    if (f) fclose(f);
    return kb;
}

static double dir_mb(const char *dir)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "du -sk '%s' 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    long kb = 0;
    if (p && fscanf(p, "%ld", &kb) != 1) kb = 0;
    if (p) pclose(p);
    return (double)kb / 1024;
}

static void rm_rf(const char *dir)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- the items ---- */

/* The data attribute of item i: 96 characters that differ from item to item, then text
 * that repeats, so that the store's LZ4 finds something to compress, as in real items. */
static void item_data(long i, char out[DATA_CHARS + 1])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz012345";
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + 1;
    for (int k = 0; k < 96; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out[k] = alphabet[x & 31];
    }
    static const char tail[] = "the quick brown fox jumps over the lazy dog; pack my box with "
                               "five dozen liquor jugs";
    for (int k = 96; k < DATA_CHARS; k++)
        out[k] = tail[(k - 96) % (sizeof tail - 1)];
    out[DATA_CHARS] = '\0';
}

/* DynamoDB's size of an item: names and values (pk 2+9, sk 2+7, data 4+176). */
#define ITEM_BYTES 200

static int item_json(char *out, size_t cap, long i)
{
    char data[DATA_CHARS + 1];
    item_data(i, data);
    return snprintf(out, cap,
                    "{\"pk\":{\"S\":\"p%08ld\"},\"sk\":{\"S\":\"s%06ld\"},\"data\":{\"S\":\"%s\"}}",
                    i / PARTITION, i % PARTITION, data);
}

/* Raw RocksDB's key of item i: a table prefix, the partition key, a separator, the sort key. */
static int raw_key(char *out, long i)
{
    memcpy(out, "t\0\0\0\1", 5);
    return 5 + sprintf(out + 5, "p%08ld%cs%06ld", i / PARTITION, 0, i % PARTITION);
}

static int raw_prefix(char *out, long part, int end)
{
    memcpy(out, "t\0\0\0\1", 5);
    int n = 5 + sprintf(out + 5, "p%08ld", part);
    out[n] = end ? 1 : 0;
    return n + 1;
}

/* ---- quarry ---- */

static unsigned long long cache_size; /* --cache-size, 0: quarry's default */

static qr_db *q_open(const char *dir, int ttl_ms)
{
    qr_db *db;
    char *err = NULL;
    qr_options o = {.no_sync = 1,
                    .capacity = QR_CAPACITY_OFF,
                    .cache_size = cache_size,
                    .ttl_interval_ms = ttl_ms};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open %s: %s\n", dir, err);
        exit(1);
    }
    return db;
}

/* Runs op; its response's body, to be freed, or exits on an error. */
static char *q_call(qr_db *db, const char *op, const char *body, size_t len)
{
    qr_response r;
    if (qr_call(db, op, body, len, &r) != QR_OK) {
        fprintf(stderr, "%s failed: %.300s\n", op, r.body);
        exit(1);
    }
    return r.body;
}

static void q_call0(qr_db *db, const char *op, const char *body)
{
    free(q_call(db, op, body, strlen(body)));
}

static void q_create(qr_db *db, const char *name)
{
    char req[512];
    snprintf(req, sizeof req,
             "{\"TableName\":\"%s\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
             "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\","
             "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
             "\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]}",
             name);
    q_call0(db, "CreateTable", req);
}

static double q_load(qr_db *db, long n)
{
    static char req[BATCH * 400 + 100];
    double t0 = now();
    for (long i = 0; i < n;) {
        int len = snprintf(req, sizeof req, "{\"RequestItems\":{\"big\":[");
        for (int k = 0; k < BATCH && i < n; k++, i++) {
            len +=
                snprintf(req + len, sizeof req - len, "%s{\"PutRequest\":{\"Item\":", k ? "," : "");
            len += item_json(req + len, sizeof req - len, i);
            len += snprintf(req + len, sizeof req - len, "}}");
        }
        len += snprintf(req + len, sizeof req - len, "]}}");
        char *resp = q_call(db, "BatchWriteItem", req, (size_t)len);
        if (strstr(resp, "\"UnprocessedItems\":{}") == NULL) {
            fprintf(stderr, "BatchWriteItem left items unprocessed: %.200s\n", resp);
            exit(1);
        }
        free(resp);
    }
    return (double)n / (now() - t0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct lat {
    double p50, p99; /* microseconds */
} lat;

static lat percentiles(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return (lat){t[n / 2] * 1e6, t[(int)((double)n * 0.99)] * 1e6};
}

static lat q_gets(qr_db *db, long n, int samples)
{
    double *t = malloc(sizeof *t * (size_t)samples);
    char req[256];
    for (int s = 0; s < samples; s++) {
        long i = (long)(rng() % (uint64_t)n);
        int len = snprintf(req, sizeof req,
                           "{\"TableName\":\"big\",\"Key\":{\"pk\":{\"S\":\"p%08ld\"},\"sk\":{"
                           "\"S\":\"s%06ld\"}}}",
                           i / PARTITION, i % PARTITION);
        double t0 = now();
        char *resp = q_call(db, "GetItem", req, (size_t)len);
        t[s] = now() - t0;
        if (strstr(resp, "\"Item\"") == NULL) {
            fprintf(stderr, "GetItem found no item %ld\n", i);
            exit(1);
        }
        free(resp);
    }
    lat l = percentiles(t, samples);
    free(t);
    return l;
}

/* Query(50) of table's partition pk, in the direction given; its response's Count. */
static int q_query(qr_db *db, const char *table, const char *pk, int forward, double *took)
{
    char req[400];
    int len = snprintf(req, sizeof req,
                       "{\"TableName\":\"%s\",\"KeyConditionExpression\":\"pk = :p\","
                       "\"ScanIndexForward\":%s,\"Limit\":50,\"ExpressionAttributeValues\":{\":p\":"
                       "{\"S\":\"%s\"}}}",
                       table, forward ? "true" : "false", pk);
    double t0 = now();
    char *resp = q_call(db, "Query", req, (size_t)len);
    *took = now() - t0;
    const char *c = strstr(resp, "\"Count\":");
    int count = c ? atoi(c + 8) : -1;
    free(resp);
    return count;
}

static lat q_queries(qr_db *db, long n, int samples, int forward)
{
    double *t = malloc(sizeof *t * (size_t)samples);
    long parts = n / PARTITION > 0 ? n / PARTITION : 1;
    for (int s = 0; s < samples; s++) {
        char pk[32];
        snprintf(pk, sizeof pk, "p%08ld", (long)(rng() % (uint64_t)parts));
        if (q_query(db, "big", pk, forward, &t[s]) != (n < 50 ? n : 50)) {
            fprintf(stderr, "Query of %s did not return 50 items\n", pk);
            exit(1);
        }
    }
    lat l = percentiles(t, samples);
    free(t);
    return l;
}

/* The object after "LastEvaluatedKey": in a Scan's response, or NULL at the end. */
static char *last_key(const char *resp)
{
    const char *at = strstr(resp, "\"LastEvaluatedKey\":");
    if (at == NULL) return NULL;
    at += strlen("\"LastEvaluatedKey\":");
    int depth = 0;
    const char *p = at;
    do {
        if (*p == '{') depth++;
        if (*p == '}') depth--;
        p++;
    } while (depth > 0 && *p);
    return strndup(at, (size_t)(p - at));
}

/* A full Scan, page by page (DynamoDB's 1 MB pages); returns the items it counted. */
static long q_scan(qr_db *db, double *took)
{
    char *start = NULL;
    long items = 0;
    double t0 = now();
    static char req[4096];
    do {
        int len = start ? snprintf(req, sizeof req,
                                   "{\"TableName\":\"big\",\"ExclusiveStartKey\":%s}", start)
                        : snprintf(req, sizeof req, "{\"TableName\":\"big\"}");
        char *resp = q_call(db, "Scan", req, (size_t)len);
        const char *c = strstr(resp, "\"Count\":");
        items += c ? atol(c + 8) : 0;
        free(start);
        start = last_key(resp);
        free(resp);
    } while (start);
    *took = now() - t0;
    return items;
}

/* ---- raw RocksDB, configured as quarry's store is ---- */

/* What the raw reads add up, so that the compiler keeps them. */
static volatile size_t sink;

typedef struct raw {
    rocksdb_t *db;
    rocksdb_options_t *o;
    rocksdb_block_based_table_options_t *t;
    rocksdb_cache_t *cache;
    rocksdb_writeoptions_t *wo;
    rocksdb_readoptions_t *ro;
} raw;

static raw raw_open(const char *dir)
{
    raw r;
    /* The memtables and the block cache quarry's budget gives (qr_options.cache_size):
     * two memtables of a sixteenth (8 MB at most), an eighth for quarry's row cache, which
     * raw RocksDB has not, and the rest. */
    size_t budget = cache_size ? (size_t)cache_size : (size_t)256 << 20;
    size_t memtable = budget / 16 < (8u << 20) ? budget / 16 : (8u << 20);
    r.o = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(r.o, 1);
    rocksdb_options_increase_parallelism(r.o, 2);
    rocksdb_options_set_max_background_jobs(r.o, 2);
    rocksdb_options_set_write_buffer_size(r.o, memtable);
    rocksdb_options_set_max_write_buffer_number(r.o, 2);
    rocksdb_options_set_compression(r.o, rocksdb_lz4_compression);
    r.t = rocksdb_block_based_options_create();
    r.cache = rocksdb_cache_create_lru(budget - budget / 8 - 2 * memtable);
    rocksdb_block_based_options_set_block_cache(r.t, r.cache);
    rocksdb_block_based_options_set_filter_policy(r.t, rocksdb_filterpolicy_create_bloom_full(10));
    rocksdb_block_based_options_set_cache_index_and_filter_blocks(r.t, 1);
    rocksdb_options_set_block_based_table_factory(r.o, r.t);
    char *err = NULL;
    r.db = rocksdb_open(r.o, dir, &err);
    if (err) {
        fprintf(stderr, "rocksdb %s: %s\n", dir, err);
        exit(1);
    }
    r.wo = rocksdb_writeoptions_create();
    r.ro = rocksdb_readoptions_create();
    return r;
}

static void raw_close(raw *r)
{
    rocksdb_close(r->db);
    rocksdb_writeoptions_destroy(r->wo);
    rocksdb_readoptions_destroy(r->ro);
    rocksdb_options_destroy(r->o);
    rocksdb_block_based_options_destroy(r->t);
    rocksdb_cache_destroy(r->cache);
}

/* Waits until raw RocksDB has no flush or compaction running or owed, as
 * qr_wait_compactions does for quarry's; the seconds it took. */
static double raw_settle(raw *r)
{
    static const char *const busy[] = {
        "rocksdb.num-running-flushes", "rocksdb.num-running-compactions",
        "rocksdb.compaction-pending", "rocksdb.mem-table-flush-pending"};
    double t0 = now();
    for (;;) {
        int any = 0;
        for (size_t i = 0; i < sizeof busy / sizeof *busy; i++) {
            uint64_t v = 0;
            if (rocksdb_property_int(r->db, busy[i], &v) == 0 && v) any = 1;
        }
        if (!any) return now() - t0;
        usleep(10000);
    }
}

static double raw_load(raw *r, long n)
{
    char key[64], value[512];
    rocksdb_writebatch_t *b = rocksdb_writebatch_create();
    char *err = NULL;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        int kl = raw_key(key, i);
        int vl = item_json(value, sizeof value, i);
        rocksdb_writebatch_put(b, key, (size_t)kl, value, (size_t)vl);
        if (rocksdb_writebatch_count(b) == BATCH || i == n - 1) {
            rocksdb_write(r->db, r->wo, b, &err);
            if (err) {
                fprintf(stderr, "rocksdb write: %s\n", err);
                exit(1);
            }
            rocksdb_writebatch_clear(b);
        }
    }
    rocksdb_writebatch_destroy(b);
    return (double)n / (now() - t0);
}

static lat raw_gets(raw *r, long n, int samples)
{
    double *t = malloc(sizeof *t * (size_t)samples);
    char key[64];
    for (int s = 0; s < samples; s++) {
        long i = (long)(rng() % (uint64_t)n);
        int kl = raw_key(key, i);
        size_t vl;
        char *err = NULL;
        double t0 = now();
        char *v = rocksdb_get(r->db, r->ro, key, (size_t)kl, &vl, &err);
        t[s] = now() - t0;
        if (v == NULL) {
            fprintf(stderr, "rocksdb_get found no item %ld\n", i);
            exit(1);
        }
        free(v);
    }
    lat l = percentiles(t, samples);
    free(t);
    return l;
}

/* 50 keys and values of [lo, hi) from one end; the number read. */
static int raw_range(raw *r, const char *lo, int ll, const char *hi, int hl, int forward,
                     double *took)
{
    double t0 = now();
    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    rocksdb_readoptions_set_iterate_lower_bound(ro, lo, (size_t)ll);
    rocksdb_readoptions_set_iterate_upper_bound(ro, hi, (size_t)hl);
    rocksdb_iterator_t *it = rocksdb_create_iterator(r->db, ro);
    if (forward)
        rocksdb_iter_seek_to_first(it);
    else
        rocksdb_iter_seek_to_last(it);
    int got = 0;
    for (; got < 50 && rocksdb_iter_valid(it); got++) {
        size_t kl, vl;
        sink += (size_t)rocksdb_iter_key(it, &kl)[0] + (size_t)rocksdb_iter_value(it, &vl)[0];
        if (forward)
            rocksdb_iter_next(it);
        else
            rocksdb_iter_prev(it);
    }
    rocksdb_iter_destroy(it);
    rocksdb_readoptions_destroy(ro);
    *took = now() - t0;
    return got;
}

static lat raw_queries(raw *r, long n, int samples, int forward)
{
    double *t = malloc(sizeof *t * (size_t)samples);
    long parts = n / PARTITION > 0 ? n / PARTITION : 1;
    for (int s = 0; s < samples; s++) {
        long part = (long)(rng() % (uint64_t)parts);
        char lo[32], hi[32];
        int ll = raw_prefix(lo, part, 0), hl = raw_prefix(hi, part, 1);
        if (raw_range(r, lo, ll, hi, hl, forward, &t[s]) != (n < 50 ? n : 50)) {
            fprintf(stderr, "raw range of partition %ld did not hold 50 items\n", part);
            exit(1);
        }
    }
    lat l = percentiles(t, samples);
    free(t);
    return l;
}

static long raw_scan(raw *r, double *took)
{
    double t0 = now();
    rocksdb_iterator_t *it = rocksdb_create_iterator(r->db, r->ro);
    long items = 0;
    for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
        size_t kl, vl;
        sink += (size_t)rocksdb_iter_key(it, &kl)[0] + (size_t)rocksdb_iter_value(it, &vl)[0];
        items++;
    }
    rocksdb_iter_destroy(it);
    *took = now() - t0;
    return items;
}

/* ---- one size ---- */

static void print_lat(const char *what, lat q, lat r, const char *goal)
{
    printf("| %s p50 | %.1f µs | %.1f µs | %.2f× | %s |\n", what, q.p50, r.p50, q.p50 / r.p50,
           goal);
    printf("| %s p99 | %.1f µs | %.1f µs | %.2f× | |\n", what, q.p99, r.p99, q.p99 / r.p99);
}

/* Waits for quarry's compactions after a load; the seconds it took. */
static double q_settle(qr_db *db)
{
    double t0 = now();
    if (qr_wait_compactions(db, 3 * 3600 * 1000) != QR_OK) {
        fprintf(stderr, "compactions still ran after 3 hours\n");
        exit(1);
    }
    return now() - t0;
}

static int keep; /* --keep: leave the data directories */

static void run_size(const char *base, long n)
{
    char qdir[700], rdir[700];
    snprintf(qdir, sizeof qdir, "%s/q%ld", base, n);
    snprintf(rdir, sizeof rdir, "%s/r%ld", base, n);
    int gets = n < GET_SAMPLES ? (int)n : GET_SAMPLES;

    qr_db *db = q_open(qdir, 0);
    q_create(db, "big");
    double q_put = q_load(db, n);
    qr_close(db);
    db = q_open(qdir, 0); /* reads then meet the files, as in a steady state */
    double q_wait = q_settle(db);
    rng_state = 42;
    q_gets(db, n, gets / 4); /* warm up as much as the raw side does */
    q_queries(db, n, QUERY_SAMPLES / 4, 1);
    lat q_get = q_gets(db, n, gets);
    lat q_fwd = q_queries(db, n, QUERY_SAMPLES, 1), q_back = q_queries(db, n, QUERY_SAMPLES, 0);
    double q_scan_s;
    long q_items = q_scan(db, &q_scan_s);
    long q_rss = status_kb("VmRSS"), q_hwm = status_kb("VmHWM");
    qr_close(db);
    double q_mb = dir_mb(qdir);
    if (q_items != n) {
        fprintf(stderr, "Scan counted %ld items of %ld\n", q_items, n);
        exit(1);
    }

    raw r = raw_open(rdir);
    double r_put = raw_load(&r, n);
    raw_close(&r);
    r = raw_open(rdir);
    double r_wait = raw_settle(&r);
    rng_state = 42;
    raw_gets(&r, n, gets / 4);
    raw_queries(&r, n, QUERY_SAMPLES / 4, 1);
    lat r_get = raw_gets(&r, n, gets);
    lat r_fwd = raw_queries(&r, n, QUERY_SAMPLES, 1), r_back = raw_queries(&r, n, QUERY_SAMPLES, 0);
    double r_scan_s;
    long r_items = raw_scan(&r, &r_scan_s);
    raw_close(&r);
    double r_mb = dir_mb(rdir);

    double logical_mb = (double)n * ITEM_BYTES / (1 << 20);
    printf("\n### %ld items of %d bytes (%.1f MB logical), %ld partitions of %d\n\n", n, ITEM_BYTES,
           logical_mb, n / PARTITION > 0 ? n / PARTITION : 1, PARTITION);
    printf("| measure | quarry | RocksDB | quarry / RocksDB | goal |\n|---|---:|---:|---:|---|\n");
    printf("| load (BatchWriteItem of %d / write batch) | %.0f items/s | %.0f items/s | %.2f× "
           "| |\n",
           BATCH, q_put, r_put, q_put / r_put);
    printf("| compactions after the load and reopen, waited for | %.1f s | %.1f s | | |\n", q_wait,
           r_wait);
    print_lat("GetItem", q_get, r_get, n >= 10000000 ? "≤ 2× at 10^7" : "");
    print_lat("Query(50) forward", q_fwd, r_fwd, n >= 10000000 ? "≤ 2× at 10^7" : "");
    print_lat("Query(50) backward", q_back, r_back, n >= 10000000 ? "≤ 2× at 10^7" : "");
    printf("| full Scan | %.0f items/s, %.2f s | %.0f items/s, %.2f s | %.2f× the time | |\n",
           (double)q_items / q_scan_s, q_scan_s, (double)r_items / r_scan_s, r_scan_s,
           q_scan_s / r_scan_s);
    printf("| data directory | %.1f MB (%.2f× logical) | %.1f MB (%.2f× logical) | %.2f× | |\n",
           q_mb, q_mb / logical_mb, r_mb, r_mb / logical_mb, q_mb / r_mb);
    printf("| process RSS after quarry's reads (peak) | %.1f MB (%.1f MB) | | | |\n",
           (double)q_rss / 1024, (double)q_hwm / 1024);
    fflush(stdout);
    if (!keep) rm_rf(rdir);
}

/* ---- tombstones ---- */

/* p50 in µs of count Query(50) calls at the head of the feed (whose partition key is the
 * table's name). */
static double feed_p50(qr_db *db, const char *table, int count)
{
    double *t = malloc(sizeof *t * (size_t)count);
    for (int s = 0; s < count; s++)
        q_query(db, table, table, 1, &t[s]);
    lat l = percentiles(t, count);
    free(t);
    return l.p50;
}

static void feed_put(qr_db *db, const char *table, long i, long expires)
{
    char req[600], data[DATA_CHARS + 1];
    item_data(i, data);
    char ttl[64] = "";
    if (expires) snprintf(ttl, sizeof ttl, ",\"exp\":{\"N\":\"%ld\"}", expires);
    snprintf(req, sizeof req,
             "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"s%06ld\"},"
             "\"data\":{\"S\":\"%s\"}%s}}",
             table, table, i, data, ttl);
    q_call0(db, "PutItem", req);
}

/* Whether the feed's item i is there. */
static int feed_has(qr_db *db, const char *table, long i)
{
    char req[300];
    snprintf(req, sizeof req,
             "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"s%06ld\"}}}",
             table, table, i);
    char *resp = q_call(db, "GetItem", req, strlen(req));
    int has = strstr(resp, "\"Item\"") != NULL;
    free(resp);
    return has;
}

/* Polls the head of the feed until its p50 is within 1.5 times before or timeout seconds
 * pass; the p50 then, and in *after the seconds it took. */
static double feed_settle(qr_db *db, const char *table, double before, double timeout,
                          double *after)
{
    double t0 = now(), p50;
    do {
        usleep(250000);
        p50 = feed_p50(db, table, 100);
    } while (p50 > 1.5 * before && now() - t0 < timeout);
    *after = now() - t0;
    return p50;
}

typedef struct feed_result {
    double before, right_after, later, waited, swept;
} feed_result;

/* The feed pattern: FEED_ITEMS items in one partition, written long enough ago to be in
 * the store's files (a reopen flushes them there), then the oldest FEED_DELETED deleted
 * one by one, or expiring through TTL; Query(50) at the head before, right after, and
 * once quarry's own flush and compactions have dropped the deletes. */
static feed_result feed(const char *qdir, const char *table, int ttl)
{
    feed_result f = {0};
    qr_db *db = q_open(qdir, 200);
    q_create(db, table);
    char req[300];
    if (ttl) {
        snprintf(req, sizeof req,
                 "{\"TableName\":\"%s\",\"TimeToLiveSpecification\":{\"Enabled\":true,"
                 "\"AttributeName\":\"exp\"}}",
                 table);
        q_call0(db, "UpdateTimeToLive", req);
    }
    long soon = (long)time(NULL) + 10;
    for (long i = 0; i < FEED_ITEMS; i++)
        feed_put(db, table, i, !ttl ? 0 : i < FEED_DELETED ? soon : soon + 86400);
    qr_close(db);
    db = q_open(qdir, 200);
    feed_p50(db, table, 100); /* warm up */
    f.before = feed_p50(db, table, 500);
    double t0 = now();
    if (ttl) { /* until the sweeper has deleted them: the last expired item is gone */
        while (feed_has(db, table, FEED_DELETED - 1)) {
            if (now() - t0 > 120) {
                fprintf(stderr, "the TTL sweeper did not delete the expired items in 120 s\n");
                exit(1);
            }
            usleep(50000);
        }
    } else {
        for (long i = 0; i < FEED_DELETED; i++) {
            snprintf(req, sizeof req,
                     "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":"
                     "\"s%06ld\"}}}",
                     table, table, i);
            q_call0(db, "DeleteItem", req);
        }
    }
    f.swept = now() - t0;
    f.right_after = feed_p50(db, table, 500);
    f.later = feed_settle(db, table, f.before, 20, &f.waited);
    qr_close(db);
    return f;
}

static void tombstones(const char *base)
{
    char qdir[700], rdir[700];
    snprintf(qdir, sizeof qdir, "%s/qfeed", base);
    snprintf(rdir, sizeof rdir, "%s/rfeed", base);
    feed_result del = feed(qdir, "feed", 0), ttl = feed(qdir, "feedttl", 1);

    /* Raw RocksDB: the same puts, a reopen and the deletes; then nothing, as long as quarry
     * waited; then a CompactRange by hand. */
    raw r = raw_open(rdir);
    char key[64], value[512], lo[32], hi[32];
    char *err = NULL;
    for (long i = 0; i < FEED_ITEMS; i++) {
        int kl = raw_key(key, i), vl = item_json(value, sizeof value, i);
        rocksdb_put(r.db, r.wo, key, (size_t)kl, value, (size_t)vl, &err);
    }
    raw_close(&r);
    r = raw_open(rdir);
    int ll = raw_prefix(lo, 0, 0), hl = raw_prefix(hi, 0, 1);
    double *t = malloc(sizeof *t * 500);
    lat rb, ra, rl, rc;
    for (int s = 0; s < 500; s++)
        raw_range(&r, lo, ll, hi, hl, 1, &t[s]);
    rb = percentiles(t, 500);
    for (long i = 0; i < FEED_DELETED; i++) {
        int kl = raw_key(key, i);
        rocksdb_delete(r.db, r.wo, key, (size_t)kl, &err);
    }
    for (int s = 0; s < 500; s++)
        raw_range(&r, lo, ll, hi, hl, 1, &t[s]);
    ra = percentiles(t, 500);
    usleep((useconds_t)(del.waited * 1e6));
    for (int s = 0; s < 500; s++)
        raw_range(&r, lo, ll, hi, hl, 1, &t[s]);
    rl = percentiles(t, 500);
    rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
    rocksdb_compactoptions_set_bottommost_level_compaction(co, 1 /* kForce */);
    rocksdb_compact_range_opt(r.db, co, lo, (size_t)ll, hi, (size_t)hl);
    rocksdb_compactoptions_destroy(co);
    for (int s = 0; s < 500; s++)
        raw_range(&r, lo, ll, hi, hl, 1, &t[s]);
    rc = percentiles(t, 500);
    free(t);
    raw_close(&r);
    rm_rf(rdir);

    printf("\n### Tombstones: a partition of %d items in the files, the oldest %d deleted, "
           "Query(50) at its head (p50)\n\n",
           FEED_ITEMS, FEED_DELETED);
    printf("| | before | right after | later |\n|---|---:|---:|---:|\n");
    printf("| quarry, DeleteItem one by one (%.1f s) | %.1f µs | %.1f µs (%.1f×) | %.1f µs "
           "(%.1f×) %.1f s later |\n",
           del.swept, del.before, del.right_after, del.right_after / del.before, del.later,
           del.later / del.before, del.waited);
    printf("| quarry, expired through TTL (swept in %.1f s) | %.1f µs | %.1f µs (%.1f×) | %.1f "
           "µs (%.1f×) %.1f s later |\n",
           ttl.swept, ttl.before, ttl.right_after, ttl.right_after / ttl.before, ttl.later,
           ttl.later / ttl.before, ttl.waited);
    printf("| raw RocksDB, rocksdb_delete one by one | %.1f µs | %.1f µs (%.1f×) | %.1f µs "
           "(%.1f×) %.1f s later; %.1f µs (%.1f×) after a CompactRange by hand |\n",
           rb.p50, ra.p50, ra.p50 / rb.p50, rl.p50, rl.p50 / rb.p50, del.waited, rc.p50,
           rc.p50 / rb.p50);
    fflush(stdout);
}

/* ---- the mixed load, in a process of its own so that its RSS is its own ---- */

static int mixed(const char *dir, long n, double seconds)
{
    qr_db *db = q_open(dir, 0);
    long rss0 = status_kb("VmRSS"), peak = rss0;
    double t0 = now(), next = t0;
    long calls[5] = {0};
    char req[1200];
    while (now() - t0 < seconds) {
        long i = (long)(rng() % (uint64_t)n);
        unsigned kind = (unsigned)(rng() % 100);
        if (kind < 55) { /* GetItem */
            int len = snprintf(req, sizeof req,
                               "{\"TableName\":\"big\",\"Key\":{\"pk\":{\"S\":\"p%08ld\"},\"sk\":{"
                               "\"S\":\"s%06ld\"}}}",
                               i / PARTITION, i % PARTITION);
            free(q_call(db, "GetItem", req, (size_t)len));
            calls[0]++;
        } else if (kind < 75) { /* PutItem over an existing item, or one deleted */
            int len = snprintf(req, sizeof req, "{\"TableName\":\"big\",\"Item\":");
            len += item_json(req + len, sizeof req - len, i);
            len += snprintf(req + len, sizeof req - len, "}");
            free(q_call(db, "PutItem", req, (size_t)len));
            calls[1]++;
        } else if (kind < 80) { /* DeleteItem */
            int len = snprintf(req, sizeof req,
                               "{\"TableName\":\"big\",\"Key\":{\"pk\":{\"S\":\"p%08ld\"},\"sk\":{"
                               "\"S\":\"s%06ld\"}}}",
                               i / PARTITION, i % PARTITION);
            free(q_call(db, "DeleteItem", req, (size_t)len));
            calls[4]++;
        } else if (kind < 98) { /* Query(50) */
            char pk[32];
            double took;
            snprintf(pk, sizeof pk, "p%08ld", i / PARTITION);
            q_query(db, "big", pk, kind & 1, &took);
            calls[2]++;
        } else { /* a page of Scan from a random item on */
            int len = snprintf(req, sizeof req,
                               "{\"TableName\":\"big\",\"Limit\":1000,\"ExclusiveStartKey\":{"
                               "\"pk\":{\"S\":\"p%08ld\"},\"sk\":{\"S\":\"s%06ld\"}}}",
                               i / PARTITION, i % PARTITION);
            free(q_call(db, "Scan", req, (size_t)len));
            calls[3]++;
        }
        if (now() >= next) {
            long rss = status_kb("VmRSS");
            if (rss > peak) peak = rss;
            next += 0.5;
        }
    }
    qr_close(db);
    unsigned long long budget = cache_size ? cache_size : 256ull << 20;
    printf("\n### Mixed load for %.0f s over %ld items, --cache-size %llu MB\n\n", seconds, n,
           budget >> 20);
    printf("%ld GetItem, %ld PutItem, %ld DeleteItem, %ld Query(50), %ld Scan pages of 1000; "
           "RSS at the open "
           "%.1f MB, peak %.1f MB (sampled every 0.5 s; VmHWM %.1f MB): peak − budget = %.1f "
           "MB\n",
           calls[0], calls[1], calls[4], calls[2], calls[3], (double)rss0 / 1024,
           (double)peak / 1024, (double)status_kb("VmHWM") / 1024,
           (double)peak / 1024 - (double)(budget >> 20));
    return 0;
}

int main(int argc, char **argv)
{
    long sizes[8];
    int nsizes = 0;
    double mixed_seconds = 60;
    const char *where = "/tmp";
    if (argc == 6 && strcmp(argv[1], "mixed") == 0) { /* the mixed load's own process */
        cache_size = strtoull(argv[4], NULL, 10);
        return mixed(argv[2], atol(argv[3]), atof(argv[5]));
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mixed") == 0 && i + 1 < argc)
            mixed_seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--cache-size") == 0 && i + 1 < argc)
            cache_size = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            where = argv[++i];
        else if (strcmp(argv[i], "--keep") == 0)
            keep = 1;
        else if (argv[i][0] >= '1' && argv[i][0] <= '9' && nsizes < 8)
            sizes[nsizes++] = atol(argv[i]);
        else {
            fprintf(stderr,
                    "usage: scale [N ...] [--mixed SECONDS] [--cache-size BYTES] [--dir DIR] "
                    "[--keep]\n");
            return 2;
        }
    }
    if (nsizes == 0) {
        sizes[nsizes++] = 10000;
        sizes[nsizes++] = 1000000;
    }
    char base[600];
    snprintf(base, sizeof base, "%s/quarry-scale-XXXXXX", where);
    if (mkdtemp(base) == NULL) return 1;
    printf("## bench/scale: %d-byte items, partitions of %d, single thread, no fsync, capacity "
           "off\n",
           ITEM_BYTES, PARTITION);
    for (int i = 0; i < nsizes; i++)
        run_size(base, sizes[i]);
    tombstones(base);
    if (mixed_seconds > 0) {
        long n = sizes[nsizes - 1];
        char dir[700], nbuf[32], secs[32], cache[32];
        snprintf(dir, sizeof dir, "%s/q%ld", base, n);
        snprintf(nbuf, sizeof nbuf, "%ld", n);
        snprintf(secs, sizeof secs, "%g", mixed_seconds);
        snprintf(cache, sizeof cache, "%llu", cache_size);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "mixed", dir, nbuf, cache, secs, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        waitpid(pid, &status, 0);
    }
    if (keep)
        printf("\nthe data directories are kept in %s\n", base);
    else
        rm_rf(base);
    return 0;
}
