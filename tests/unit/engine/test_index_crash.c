/* test_index_crash.c — global indexes survive crashes and concurrent writes.
 *
 * 1. A child process writes (puts, updates that move items between index partitions,
 *    deletes) to a table with a GSI, a GSI with injected lag and an LSI, and is killed
 *    with SIGKILL at a random moment; the parent reopens the database and qr_verify must
 *    find every index equal to the projection of its base items once the log drains.
 * 2. Writers keep writing while UpdateTable adds a GSI to the live table; after the
 *    backfill the index must match the table exactly.
 * 3. A child is killed in the middle of a backfill; reopening resumes it to ACTIVE. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "quarry.h"

#include "check.h"

static qr_db *open_db(const char *dir, int lag)
{
    qr_db *db;
    char *err = NULL;
    qr_options o = {.no_sync = 0, .gsi_lag_ms = lag};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open %s: %s\n", dir, err);
        exit(1);
    }
    return db;
}

static int call(qr_db *db, const char *op, const char *body, char **out)
{
    qr_response r;
    int rc = qr_call(db, op, body, strlen(body), &r);
    if (out) *out = strdup(r.body);
    qr_response_free(&r);
    return rc;
}

static void create_table(qr_db *db, int with_gsi)
{
    char req[2048];
    snprintf(
        req, sizeof req,
        "{\"TableName\":\"events\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
        "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\","
        "\"AttributeType\":\"S\"}"
        "%s],"
        "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
        "\"KeyType\":\"RANGE\"}]"
        "%s}",
        with_gsi ? ",{\"AttributeName\":\"status\",\"AttributeType\":\"S\"},{\"AttributeName\":"
                   "\"at\",\"AttributeType\":\"N\"}"
                 : "",
        with_gsi ? ",\"GlobalSecondaryIndexes\":[{\"IndexName\":\"ByStatus\",\"KeySchema\":["
                   "{\"AttributeName\":\"status\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"at\","
                   "\"KeyType\":\"RANGE\"}],"
                   "\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"n\"]}}],"
                   "\"LocalSecondaryIndexes\":[{\"IndexName\":\"ByAt\",\"KeySchema\":["
                   "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"at\","
                   "\"KeyType\":\"RANGE\"}],"
                   "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]"
                 : "");
    char *out;
    int rc = call(db, "CreateTable", req, &out);
    CHECK(rc == QR_OK, "CreateTable: %s", out);
    free(out);
}

/* One random write: put (with or without the sparse index key), update moving the item
 * to another status partition, or delete. */
static void random_write(qr_db *db, unsigned *seed)
{
    static const char *statuses[] = {"OPEN", "CLOSED", "PENDING"};
    char req[512];
    int k = rand_r(seed) % 200, what = rand_r(seed) % 4;
    const char *st = statuses[rand_r(seed) % 3];
    if (what == 0 || what == 1) {
        snprintf(
            req, sizeof req,
            "{\"TableName\":\"events\",\"Item\":{\"pk\":{\"S\":\"dev#%d\"},\"sk\":{\"S\":\"e#%d\"},"
            "%s\"at\":{\"N\":\"%d\"},\"n\":{\"N\":\"%d\"},\"pad\":{\"S\":\"xxxxxxxxxxxxxxxxxxxx\"}}"
            "}",
            k % 20, k, what ? "" : "\"status\":{\"S\":\"OPEN\"},", rand_r(seed) % 1000, k);
        call(db, "PutItem", req, NULL);
    } else if (what == 2) {
        snprintf(
            req, sizeof req,
            "{\"TableName\":\"events\",\"Key\":{\"pk\":{\"S\":\"dev#%d\"},\"sk\":{\"S\":\"e#%d\"}},"
            "\"UpdateExpression\":\"SET #s = :s, n = if_not_exists(n, :z) + :one\","
            "\"ExpressionAttributeNames\":{\"#s\":\"status\"},"
            "\"ExpressionAttributeValues\":{\":s\":{\"S\":\"%s\"},\":z\":{\"N\":\"0\"},\":one\":{"
            "\"N\":\"1\"}}}",
            k % 20, k, st);
        call(db, "UpdateItem", req, NULL);
    } else {
        snprintf(req, sizeof req,
                 "{\"TableName\":\"events\",\"Key\":{\"pk\":{\"S\":\"dev#%d\"},\"sk\":{\"S\":\"e#%"
                 "d\"}}}",
                 k % 20, k);
        call(db, "DeleteItem", req, NULL);
    }
}

static void verify(const char *dir, const char *what)
{
    qr_db *db = open_db(dir, 0);
    char *report = NULL;
    int rc = qr_verify(db, NULL, &report);
    CHECK(rc == QR_OK, "%s: indexes drifted:\n%s", what, report);
    CHECK(strstr(report, "0 differences") != NULL, "%s: report: %s", what, report);
    free(report);
    qr_close(db);
}

/* Forks a child that runs body(dir) until it is killed after ms milliseconds. */
static void run_and_kill(const char *dir, void (*body)(const char *), int ms)
{
    pid_t pid = fork();
    if (pid == 0) {
        body(dir);
        _exit(0);
    }
    usleep((useconds_t)ms * 1000);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
}

static void write_forever(const char *dir)
{
    qr_db *db = open_db(dir, 200); /* lag keeps work in the log when the kill lands */
    unsigned seed = (unsigned)getpid();
    for (;;)
        random_write(db, &seed);
}

static void test_kill_during_propagation(const char *base)
{
    for (int round = 0; round < 3; round++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/crash%d", base, round);
        qr_db *db = open_db(dir, 0);
        create_table(db, 1);
        qr_close(db);
        run_and_kill(dir, write_forever, 300 + 150 * round);
        verify(dir, "after SIGKILL during propagation");
    }
}

typedef struct writer_arg {
    qr_db *db;
    atomic_int *stop;
    unsigned seed;
} writer_arg;

static void *writer(void *p)
{
    writer_arg *w = p;
    while (!atomic_load(w->stop))
        random_write(w->db, &w->seed);
    return NULL;
}

static const char *add_gsi_req =
    "{\"TableName\":\"events\",\"AttributeDefinitions\":[{\"AttributeName\":\"status\","
    "\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"at\",\"AttributeType\":\"N\"}],\"GlobalSecondaryIndexUpdates\":[{"
    "\"Create\":{"
    "\"IndexName\":\"Late\",\"KeySchema\":[{\"AttributeName\":\"status\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"at\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}"
    "}]}";

static int wait_active(qr_db *db, int seconds)
{
    for (int i = 0; i < seconds * 20; i++) {
        char *out;
        call(db, "DescribeTable", "{\"TableName\":\"events\"}", &out);
        int creating = strstr(out, "CREATING") != NULL;
        free(out);
        if (!creating) return 1;
        usleep(50000);
    }
    return 0;
}

static void test_backfill_with_writers(const char *base)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/backfill", base);
    qr_db *db = open_db(dir, 0);
    create_table(db, 0);
    unsigned seed = 7;
    for (int i = 0; i < 2000; i++)
        random_write(db, &seed);
    atomic_int stop = 0;
    pthread_t th[3];
    writer_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (writer_arg){db, &stop, (unsigned)(100 + i)};
        pthread_create(&th[i], NULL, writer, &args[i]);
    }
    char *out;
    int rc = call(db, "UpdateTable", add_gsi_req, &out);
    CHECK(rc == QR_OK, "UpdateTable: %s", out);
    free(out);
    CHECK(wait_active(db, 60), "the new index never became ACTIVE");
    usleep(100000);
    atomic_store(&stop, 1);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    qr_close(db);
    verify(dir, "backfill with concurrent writers");
}

static void add_index_then_write(const char *dir)
{
    qr_db *db = open_db(dir, 0);
    call(db, "UpdateTable", add_gsi_req, NULL);
    unsigned seed = (unsigned)getpid();
    for (;;)
        random_write(db, &seed);
}

static void test_kill_during_backfill(const char *base)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/killfill", base);
    qr_db *db = open_db(dir, 0);
    create_table(db, 0);
    unsigned seed = 11;
    for (int i = 0; i < 3000; i++)
        random_write(db, &seed);
    qr_close(db);
    run_and_kill(dir, add_index_then_write, 150);
    db = open_db(dir, 0);
    CHECK(wait_active(db, 60), "the resumed backfill never finished");
    qr_close(db);
    verify(dir, "after SIGKILL during backfill");
}

int main(void)
{
    char base[] = "/tmp/quarry-index-crash-XXXXXX";
    if (mkdtemp(base) == NULL) return 1;
    test_kill_during_propagation(base);
    test_backfill_with_writers(base);
    test_kill_during_backfill(base);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    if (check_failures) {
        fprintf(stderr, "test_index_crash: %d failure(s)\n", check_failures);
        return 1;
    }
    printf("test_index_crash: ok\n");
    return 0;
}
