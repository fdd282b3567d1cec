/* hotkeys.c — what contributor insights cost a request: PutItem and GetItem through
 * qr_call on a table of 1,000 partition keys (Zipf-skewed, s = 1.1), first with insights
 * off, then on, each loop in its own function (run_off, run_on) so that callgrind can
 * count one alone (`--toggle-collect=run_on`, or `--toggle-collect=hotkeys_note` for
 * the counting itself). Prints microseconds per call of each; noisy machines: compare
 * the two lines of one run, not runs. `hotkeys [N]`: N calls of each kind (20,000). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quarry.h"

#define KEYS 1000

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

static int keys[1 << 16];

/* A Zipf-skewed sequence of key numbers, the same for both runs. */
static void draw_keys(int n)
{
    double cdf[KEYS], sum = 0;
    for (int i = 0; i < KEYS; i++)
        cdf[i] = (sum += 1.0 / pow(i + 1, 1.1));
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double u = (double)(x >> 11) / 9007199254740992.0 * sum;
        int k = 0;
        while (k < KEYS - 1 && cdf[k] < u)
            k++;
        keys[i] = k;
    }
}

/* n PutItems then n GetItems; returns microseconds per call of each. */
static void run(qr_db *db, int n, double *put_us, double *get_us)
{
    char body[256];
    double t0 = now();
    for (int i = 0; i < n; i++) {
        snprintf(body, sizeof body,
                 "{\"TableName\":\"bench\",\"Item\":{\"pk\":{\"S\":\"user#%05d\"},\"v\":{\"N\":"
                 "\"%d\"}}}",
                 keys[i], i);
        call(db, "PutItem", body);
    }
    double t1 = now();
    for (int i = 0; i < n; i++) {
        snprintf(body, sizeof body,
                 "{\"TableName\":\"bench\",\"Key\":{\"pk\":{\"S\":\"user#%05d\"}}}", keys[i]);
        call(db, "GetItem", body);
    }
    double t2 = now();
    *put_us = (t1 - t0) / n * 1e6;
    *get_us = (t2 - t1) / n * 1e6;
}

__attribute__((noinline)) static void run_off(qr_db *db, int n, double *p, double *g)
{
    run(db, n, p, g);
}

__attribute__((noinline)) static void run_on(qr_db *db, int n, double *p, double *g)
{
    run(db, n, p, g);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n < 1 || n > (int)(sizeof keys / sizeof keys[0])) n = 20000;
    char dir[] = "/tmp/quarry_bench_hotkeys_XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *err = NULL;
    qr_options o = {.no_sync = 1, .capacity = QR_CAPACITY_OBSERVE};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open: %s\n", err ? err : "");
        return 1;
    }
    call(db, "CreateTable",
         "{\"TableName\":\"bench\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":"
         "[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
         "\"pk\",\"KeyType\":\"HASH\"}]}");
    draw_keys(n);
    double p0, g0, p1, g1;
    run(db, n, &p0, &g0); /* warm: every key exists, the row cache holds them */
    run_off(db, n, &p0, &g0);
    call(db, "UpdateContributorInsights",
         "{\"TableName\":\"bench\",\"ContributorInsightsAction\":\"ENABLE\"}");
    run_on(db, n, &p1, &g1);
    printf("insights off: PutItem %.2f us, GetItem %.2f us\n", p0, g0);
    printf("insights on:  PutItem %.2f us, GetItem %.2f us (%+.2f, %+.2f)\n", p1, g1, p1 - p0,
           g1 - g0);
    qr_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
