/* indexes.c — what secondary indexes cost writes, and how far global indexes lag.
 *
 * PutItem throughput (single writer, --no-sync, so the engine rather than fsync is
 * measured) on a table with no index, 1 GSI, 5 GSIs and 1 LSI, each reported as a ratio
 * to no index. Global index work is asynchronous, so "sustained" counts the time until
 * the propagation log has drained too. Then writes paced at 80% of the 1-GSI sustained
 * rate for a few seconds, and the propagation lag's p50/p99 from the engine's metric
 * (DescribeTable's QuarryIndexPropagation). Goals (issue 4): each GSI costs at most 30%
 * of base write throughput; p99 lag under 100 ms at 80% load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quarry.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *call(qr_db *db, const char *op, const char *body)
{
    qr_response r;
    if (qr_call(db, op, body, strlen(body), &r) != QR_OK) {
        fprintf(stderr, "%s failed: %s\n", op, r.body);
        exit(1);
    }
    return r.body;
}

/* CreateTable with ngsi GSIs on g0..g4 and nlsi LSIs on l0. */
static void create(qr_db *db, int ngsi, int nlsi)
{
    char req[8192], defs[1024] = "", gsis[4096] = "", lsis[1024] = "";
    size_t dn = 0, gn = 0;
    for (int i = 0; i < ngsi; i++) {
        dn += (size_t)snprintf(defs + dn, sizeof defs - dn,
                               ",{\"AttributeName\":\"g%d\",\"AttributeType\":\"S\"}", i);
        gn += (size_t)snprintf(gsis + gn, sizeof gsis - gn,
                               "%s{\"IndexName\":\"gsi%d\",\"KeySchema\":[{\"AttributeName\":\"g%"
                               "d\",\"KeyType\":\"HASH\"},"
                               "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],\"Projection\":{"
                               "\"ProjectionType\":\"ALL\"}}",
                               i ? "," : "", i, i);
    }
    if (nlsi) {
        dn += (size_t)snprintf(defs + dn, sizeof defs - dn,
                               ",{\"AttributeName\":\"l0\",\"AttributeType\":\"S\"}");
        snprintf(lsis, sizeof lsis,
                 ",\"LocalSecondaryIndexes\":[{\"IndexName\":\"lsi0\",\"KeySchema\":[{"
                 "\"AttributeName\":\"pk\","
                 "\"KeyType\":\"HASH\"},{\"AttributeName\":\"l0\",\"KeyType\":\"RANGE\"}],"
                 "\"Projection\":{\"ProjectionType\":\"ALL\"}}]");
    }
    snprintf(
        req, sizeof req,
        "{\"TableName\":\"bench\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
        "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\","
        "\"AttributeType\":\"S\"}%s],"
        "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
        "\"KeyType\":\"RANGE\"}]"
        "%s%s%s%s}",
        defs, ngsi ? ",\"GlobalSecondaryIndexes\":[" : "", gsis, ngsi ? "]" : "", lsis);
    free(call(db, "CreateTable", req));
}

static void put(qr_db *db, long i)
{
    char req[1024];
    snprintf(req, sizeof req,
             "{\"TableName\":\"bench\",\"Item\":{\"pk\":{\"S\":\"user#%06ld\"},\"sk\":{\"S\":"
             "\"item#%04ld\"},"
             "\"g0\":{\"S\":\"s%ld\"},\"g1\":{\"S\":\"t%ld\"},\"g2\":{\"S\":\"u%ld\"},\"g3\":{"
             "\"S\":\"v%ld\"},"
             "\"g4\":{\"S\":\"w%ld\"},\"l0\":{\"S\":\"x%08ld\"},"
             "\"data\":{\"S\":"
             "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
             "xxxxxxxxx\"}}}",
             i / 20, i % 20, i % 97, i % 89, i % 83, i % 79, i % 73, i);
    free(call(db, "PutItem", req));
}

static qr_db *fresh(const char *base, const char *name)
{
    char dir[512], cmd[600];
    snprintf(dir, sizeof dir, "%s/%s", base, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) exit(1);
    qr_db *db;
    char *err;
    qr_options o = {.no_sync = 1};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open: %s\n", err);
        exit(1);
    }
    return db;
}

/* Returns sustained puts per second (writes plus draining the index log). */
static double run(const char *base, const char *name, int ngsi, int nlsi, long n, double *front)
{
    qr_db *db = fresh(base, name);
    create(db, ngsi, nlsi);
    double t0 = now();
    for (long i = 0; i < n; i++)
        put(db, i);
    double t1 = now();
    qr_wait_indexes(db, 120000);
    double t2 = now();
    qr_close(db);
    *front = (double)n / (t1 - t0);
    return (double)n / (t2 - t0);
}

static double json_number_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? atof(p + strlen(key) + 1) : -1; /* past the colon */
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 40000;
    char base[] = "/tmp/quarry-bench-idx-XXXXXX";
    if (mkdtemp(base) == NULL) return 1;
    double f0, f1, f5, fl;
    double s0 = run(base, "none", 0, 0, n, &f0);
    double s1 = run(base, "gsi1", 1, 0, n, &f1);
    double s5 = run(base, "gsi5", 5, 0, n, &f5);
    double sl = run(base, "lsi1", 0, 1, n, &fl);
    printf("index write cost: %ld PutItems, single writer, no fsync\n", n);
    printf("%-10s %14s %12s %14s %12s\n", "indexes", "accepted/s", "ratio", "sustained/s", "ratio");
    printf("%-10s %14.0f %11.0f%% %14.0f %11.0f%%\n", "none", f0, 100.0, s0, 100.0);
    printf("%-10s %14.0f %11.0f%% %14.0f %11.0f%%\n", "1 GSI", f1, 100 * f1 / f0, s1,
           100 * s1 / s0);
    printf("%-10s %14.0f %11.0f%% %14.0f %11.0f%%\n", "5 GSIs", f5, 100 * f5 / f0, s5,
           100 * s5 / s0);
    printf("%-10s %14.0f %11.0f%% %14.0f %11.0f%%\n", "1 LSI", fl, 100 * fl / f0, sl,
           100 * sl / s0);
    printf("cost per GSI (sustained): %.0f%% of base write throughput (goal: at most 30%%)\n",
           100.0 * (1.0 - s1 / s0));

    /* Lag at 80% of the sustained 1-GSI rate, paced for a few seconds. */
    double rate = 0.8 * s1, seconds = 4.0;
    qr_db *db = fresh(base, "lag");
    create(db, 1, 0);
    double t0 = now();
    long i = 0;
    while (now() - t0 < seconds) {
        double due = t0 + (double)i / rate;
        while (now() < due)
            usleep(50);
        put(db, i++);
    }
    qr_wait_indexes(db, 60000);
    char *desc = call(db, "DescribeTable", "{\"TableName\":\"bench\"}");
    printf("propagation lag at %.0f puts/s (80%% of sustained 1-GSI rate), %ld puts: p50 %.2f ms, "
           "p99 %.2f ms "
           "(goal: p99 < 100 ms)\n",
           rate, i, json_number_after(desc, "\"LagP50Millis\""),
           json_number_after(desc, "\"LagP99Millis\""));
    free(desc);
    qr_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) return 1;
    return 0;
}
