/* test_txn_race.c — threads racing through qr_call on one in-process database.
 *
 * Checks that TransactWriteItems and UpdateItem incrementing one counter lose no update,
 * that concurrent transfers keep the sum of two balances constant as seen by concurrent
 * TransactGetItems, and that a ClientRequestToken applies a transaction once, also when
 * the same request races with itself. Iteration counts are small and bounded: this is a
 * correctness test, not a benchmark. */
#include <ftw.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quarry.h"

#define NTHREADS 4
#define COUNTER_ITERATIONS 400
#define TRANSFER_ITERATIONS 300
#define READ_ITERATIONS 300
#define MAX_ATTEMPTS 1000 /* per increment, before the test gives up */

static qr_db *db;
static atomic_int failures;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&report_lock);
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failures++;
    pthread_mutex_unlock(&report_lock);
}

/* Runs op with the request built from fmt; returns the response (caller frees). */
static qr_response call(const char *op, const char *fmt, ...)
{
    char req[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(req, sizeof req, fmt, ap);
    va_end(ap);
    qr_response r;
    qr_call(db, op, req, strlen(req), &r);
    return r;
}

static int is_error(const qr_response *r, const char *type)
{
    return r->error_type && strcmp(r->error_type, type) == 0;
}

/* Numeric attribute attr of item pk in table, or -1 if absent. */
static long number_of(const char *table, const char *pk, const char *attr)
{
    qr_response r = call(
        "GetItem", "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"%s\"}},\"ConsistentRead\":true}",
        table, pk);
    long v = -1;
    json_t *doc = json_loads(r.body, 0, NULL);
    const char *s = json_string_value(
        json_object_get(json_object_get(json_object_get(doc, "Item"), attr), "N"));
    if (r.error_type) fail("GetItem %s: %s", pk, r.body);
    if (s) v = strtol(s, NULL, 10);
    json_decref(doc);
    qr_response_free(&r);
    return v;
}

/* ---- 1. no lost update ---- */

static long successes[NTHREADS], txn_successes[NTHREADS], conflicts[NTHREADS];

static void *increment(void *arg)
{
    int id = (int)(long)arg;
    for (int k = 0; k < COUNTER_ITERATIONS; k++) {
        int transactional = (k + id) % 2 == 0;
        for (int attempt = 0;; attempt++) {
            qr_response r;
            if (transactional)
                r = call(
                    "TransactWriteItems",
                    "{\"TransactItems\":["
                    "{\"Update\":{\"TableName\":\"Race\",\"Key\":{\"pk\":{\"S\":\"counter\"}},"
                    "\"UpdateExpression\":\"ADD c "
                    ":one\",\"ExpressionAttributeValues\":{\":one\":{\"N\":\"1\"}}}},"
                    "{\"Update\":{\"TableName\":\"Race\",\"Key\":{\"pk\":{\"S\":\"thread%d\"}},"
                    "\"UpdateExpression\":\"ADD c "
                    ":one\",\"ExpressionAttributeValues\":{\":one\":{\"N\":\"1\"}}}}]}",
                    id);
            else
                r = call("UpdateItem",
                         "{\"TableName\":\"Race\",\"Key\":{\"pk\":{\"S\":\"counter\"}},"
                         "\"UpdateExpression\":\"ADD c :one\","
                         "\"ExpressionAttributeValues\":{\":one\":{\"N\":\"1\"}}}");
            int retry = is_error(&r, "TransactionConflictException") ||
                        is_error(&r, "TransactionCanceledException");
            if (r.error_type == NULL) {
                successes[id]++;
                if (transactional) txn_successes[id]++;
            } else if (!retry) {
                fail("increment: %s", r.body);
            }
            qr_response_free(&r);
            if (!retry) break;
            conflicts[id]++;
            if (attempt >= MAX_ATTEMPTS) {
                fail("increment: no progress after %d attempts", attempt);
                break;
            }
            sched_yield();
        }
    }
    return NULL;
}

static void test_no_lost_update(void)
{
    pthread_t th[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, increment, (void *)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    long total = 0, retried = 0;
    for (int i = 0; i < NTHREADS; i++) {
        total += successes[i];
        retried += conflicts[i];
        char name[32];
        snprintf(name, sizeof name, "thread%d", i);
        long mine = number_of("Race", name, "c");
        if (mine != txn_successes[i])
            fail("thread%d item is %ld, expected %ld", i, mine, txn_successes[i]);
    }
    long counter = number_of("Race", "counter", "c");
    if (counter != total) fail("counter is %ld after %ld successful increments", counter, total);
    if (total != (long)NTHREADS * COUNTER_ITERATIONS)
        fail("only %ld of the increments succeeded", total);
    printf("no lost update: counter %ld = %ld increments (%ld retries after conflicts)\n", counter,
           total, retried);
}

/* ---- 2. transfers keep the sum ---- */

static long transfers_done, transfers_cancelled, reads_done, notes_conflicted;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

static void *transfer(void *arg)
{
    unsigned seed = (unsigned)(long)arg * 7919u + 1;
    for (int k = 0; k < TRANSFER_ITERATIONS; k++) {
        int forward = rand_r(&seed) % 2, amount = 1 + rand_r(&seed) % 300;
        const char *from = forward ? "A" : "B", *to = forward ? "B" : "A";
        qr_response r = call(
            "TransactWriteItems",
            "{\"TransactItems\":["
            "{\"Update\":{\"TableName\":\"Race\",\"Key\":{\"pk\":{\"S\":\"%s\"}},"
            "\"UpdateExpression\":\"SET bal = bal - :a\",\"ConditionExpression\":\"bal >= :a\","
            "\"ExpressionAttributeValues\":{\":a\":{\"N\":\"%d\"}}}},"
            "{\"Update\":{\"TableName\":\"Race\",\"Key\":{\"pk\":{\"S\":\"%s\"}},"
            "\"UpdateExpression\":\"SET bal = bal + :a\","
            "\"ExpressionAttributeValues\":{\":a\":{\"N\":\"%d\"}}}}]}",
            from, amount, to, amount);
        pthread_mutex_lock(&stats_lock);
        if (r.error_type == NULL)
            transfers_done++;
        else if (is_error(&r, "TransactionCanceledException"))
            transfers_cancelled++;
        else
            fail("transfer: %s", r.body);
        pthread_mutex_unlock(&stats_lock);
        qr_response_free(&r);
        /* A single-item write to a transaction's item may meet TransactionConflictException. */
        r = call("UpdateItem",
                 "{\"TableName\":\"Race\",\"Key\":{\"pk\":{\"S\":\"%s\"}},"
                 "\"UpdateExpression\":\"SET note = "
                 ":n\",\"ExpressionAttributeValues\":{\":n\":{\"N\":\"%d\"}}}",
                 to, k);
        pthread_mutex_lock(&stats_lock);
        if (is_error(&r, "TransactionConflictException"))
            notes_conflicted++;
        else if (r.error_type)
            fail("note: %s", r.body);
        pthread_mutex_unlock(&stats_lock);
        qr_response_free(&r);
    }
    return NULL;
}

static atomic_int transfers_running;

static void *audit(void *arg)
{
    (void)arg;
    for (int k = 0; k < READ_ITERATIONS || transfers_running; k++) {
        qr_response r = call("TransactGetItems",
                             "{\"TransactItems\":["
                             "{\"Get\":{\"TableName\":\"Race\",\"Key\":{\"pk\":{\"S\":\"A\"}}}},"
                             "{\"Get\":{\"TableName\":\"Race\",\"Key\":{\"pk\":{\"S\":\"B\"}}}}]}");
        json_t *doc = json_loads(r.body, 0, NULL), *resp = json_object_get(doc, "Responses");
        long sum = 0;
        for (size_t i = 0; i < 2; i++) {
            json_t *bal = json_object_get(
                json_object_get(json_object_get(json_array_get(resp, i), "Item"), "bal"), "N");
            sum += bal ? strtol(json_string_value(bal), NULL, 10) : -100000;
        }
        if (r.error_type || sum != 2000) fail("audit: sum %ld in %s", sum, r.body);
        json_decref(doc);
        qr_response_free(&r);
        pthread_mutex_lock(&stats_lock);
        reads_done++;
        pthread_mutex_unlock(&stats_lock);
        if (failures) break;
    }
    return NULL;
}

static void test_transfers_keep_sum(void)
{
    qr_response r =
        call("TransactWriteItems", "{\"TransactItems\":[{\"Put\":{\"TableName\":\"Race\",\"Item\":{"
                                   "\"pk\":{\"S\":\"A\"},\"bal\":{\"N\":\"1000\"}}}},"
                                   "{\"Put\":{\"TableName\":\"Race\",\"Item\":{\"pk\":{\"S\":\"B\"}"
                                   ",\"bal\":{\"N\":\"1000\"}}}}]}");
    if (r.error_type) fail("setup: %s", r.body);
    qr_response_free(&r);
    pthread_t writers[NTHREADS - 1], reader;
    transfers_running = 1;
    pthread_create(&reader, NULL, audit, NULL);
    for (long i = 0; i < NTHREADS - 1; i++)
        pthread_create(&writers[i], NULL, transfer, (void *)i);
    for (int i = 0; i < NTHREADS - 1; i++)
        pthread_join(writers[i], NULL);
    transfers_running = 0;
    pthread_join(reader, NULL);
    long a = number_of("Race", "A", "bal"), b = number_of("Race", "B", "bal");
    if (a + b != 2000 || a < 0 || b < 0) fail("balances %ld + %ld after the transfers", a, b);
    if (transfers_done == 0) fail("no transfer succeeded");
    printf("transfers: %ld done, %ld cancelled by their condition, %ld audits, %ld note conflicts; "
           "A=%ld B=%ld\n",
           transfers_done, transfers_cancelled, reads_done, notes_conflicted, a, b);
}

/* ---- 3. ClientRequestToken ---- */

static const char idem_fmt[] =
    "{\"ClientRequestToken\":\"%s\",\"TransactItems\":[{\"Update\":{\"TableName\":\"Race\","
    "\"Key\":{\"pk\":{\"S\":\"%s\"}},\"UpdateExpression\":\"ADD c :inc\",%s"
    "\"ExpressionAttributeValues\":{\":inc\":{\"N\":\"%d\"}}}}]}";

static long same_token_ok, same_token_in_progress;

static void *same_token(void *arg)
{
    pthread_barrier_t *start = arg;
    pthread_barrier_wait(start);
    qr_response r = call("TransactWriteItems", idem_fmt, "tok-race", "idem2", "", 1);
    pthread_mutex_lock(&stats_lock);
    if (r.error_type == NULL)
        same_token_ok++;
    else if (is_error(&r, "TransactionInProgressException"))
        same_token_in_progress++;
    else
        fail("same token: %s", r.body);
    pthread_mutex_unlock(&stats_lock);
    qr_response_free(&r);
    return NULL;
}

static void test_idempotency(void)
{
    qr_response r1 = call("TransactWriteItems", idem_fmt, "tok-1", "idem", "", 1);
    qr_response r2 = call("TransactWriteItems", idem_fmt, "tok-1", "idem", "", 1);
    if (r1.error_type || r2.error_type || strcmp(r1.body, r2.body) != 0)
        fail("same token, same request: %s / %s", r1.body, r2.body);
    qr_response_free(&r1);
    qr_response_free(&r2);
    /* The same request with its members in another order is the same request. */
    r1 = call(
        "TransactWriteItems",
        "{\"TransactItems\":[{\"Update\":{\"ExpressionAttributeValues\":{\":inc\":{\"N\":\"1\"}},"
        "\"UpdateExpression\":\"ADD c "
        ":inc\",\"Key\":{\"pk\":{\"S\":\"idem\"}},\"TableName\":\"Race\"}}],"
        "\"ClientRequestToken\":\"tok-1\"}");
    if (r1.error_type) fail("same token, reordered request: %s", r1.body);
    qr_response_free(&r1);
    if (number_of("Race", "idem", "c") != 1) fail("a repeated token applied the transaction again");
    r1 = call("TransactWriteItems", idem_fmt, "tok-1", "idem", "", 5);
    if (!is_error(&r1, "IdempotentParameterMismatchException"))
        fail("same token, other request: %s", r1.body);
    qr_response_free(&r1);
    /* A cancelled transaction does not use its token up. */
    r1 = call("TransactWriteItems", idem_fmt, "tok-2", "idem",
              "\"ConditionExpression\":\"c > :inc\",", 1);
    if (!is_error(&r1, "TransactionCanceledException"))
        fail("expected a cancellation: %s", r1.body);
    qr_response_free(&r1);
    r1 = call("TransactWriteItems", idem_fmt, "tok-2", "idem",
              "\"ConditionExpression\":\"c >= :inc\",", 1);
    r2 = call("TransactWriteItems", idem_fmt, "tok-2", "idem",
              "\"ConditionExpression\":\"c >= :inc\",", 1);
    if (r1.error_type || r2.error_type)
        fail("token after a cancellation: %s / %s", r1.body, r2.body);
    qr_response_free(&r1);
    qr_response_free(&r2);
    if (number_of("Race", "idem", "c") != 2)
        fail("idem is %ld, expected 2", number_of("Race", "idem", "c"));

    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, NTHREADS);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, same_token, &start);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    long v = number_of("Race", "idem2", "c");
    if (v != 1 || same_token_ok == 0)
        fail("racing same-token requests: value %ld, %ld succeeded", v, same_token_ok);
    printf(
        "idempotency: racing same-token requests applied once (%ld succeeded, %ld in progress)\n",
        same_token_ok, same_token_in_progress);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    char dir[] = "/tmp/quarry-txn-race-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    qr_options opts = {.no_sync = 1, .capacity = QR_CAPACITY_OFF}; /* races, not throughput */
    char *errmsg = NULL;
    if (qr_open(dir, &opts, &db, &errmsg) != QR_OK) {
        fprintf(stderr, "cannot open %s: %s\n", dir, errmsg ? errmsg : "?");
        free(errmsg);
        return 1;
    }
    qr_response r =
        call("CreateTable",
             "{\"TableName\":\"Race\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
             "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
             "\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}");
    if (r.error_type) fail("CreateTable: %s", r.body);
    qr_response_free(&r);
    if (!failures) test_no_lost_update();
    if (!failures) test_transfers_keep_sum();
    if (!failures) test_idempotency();
    qr_close(db);
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    printf("%s\n", failures ? "test_txn_race: FAILED" : "test_txn_race: ok");
    return failures ? 1 : 0;
}
