/* test_deferred_flush.c — deferred WAL flushes (qr_defer_flushes) on no_sync databases.
 *
 * A server thread that defers flushes answers a write only after qr_flush_deferred; this
 * checks the promise that rests on: a child process writes, flushes, writes more without
 * flushing and kills itself with SIGKILL; after reopening, every flushed item is there and
 * the unflushed one is not (so the deferral really held the write back). A thread that
 * does not defer needs no flush: its acknowledged writes survive the kill as before.
 * qr_flush_pending tracks the calling thread only, and stays 0 on durable databases.
 * A read that sees another thread's unflushed write must not be answered before that
 * write is flushed either: a reader that does not defer flushes it then and there, and
 * one that defers is left owing a flush. And a flush writes nothing to RocksDB's own LOG:
 * thousands of turns a second must not grow it without end. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "quarry.h"

#include "check.h"

#define FLUSHED 20

static qr_db *open_db(const char *dir, int no_sync)
{
    qr_db *db;
    char *err = NULL;
    qr_options o = {.no_sync = no_sync};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open %s: %s\n", dir, err);
        exit(1);
    }
    return db;
}

static int call(qr_db *db, const char *op, const char *body)
{
    qr_response r;
    int rc = qr_call(db, op, body, strlen(body), &r);
    if (rc != QR_OK) fprintf(stderr, "%s: %s\n", op, r.body);
    qr_response_free(&r);
    return rc;
}

static int put(qr_db *db, const char *id)
{
    char body[160];
    snprintf(body, sizeof body, "{\"TableName\":\"acks\",\"Item\":{\"id\":{\"S\":\"%s\"}}}", id);
    return call(db, "PutItem", body);
}

/* 1 if the item is there, 0 if not, -1 if the read failed. */
static int has(qr_db *db, const char *id)
{
    char body[160];
    snprintf(body, sizeof body,
             "{\"TableName\":\"acks\",\"Key\":{\"id\":{\"S\":\"%s\"}},\"ConsistentRead\":true}",
             id);
    qr_response r;
    int rc = qr_call(db, "GetItem", body, strlen(body), &r);
    int found = rc == QR_OK ? strstr(r.body, "\"Item\"") != NULL : -1;
    qr_response_free(&r);
    return found;
}

static void create_table(const char *dir)
{
    qr_db *db = open_db(dir, 1);
    CHECK_THAT(call(db, "CreateTable",
                    "{\"TableName\":\"acks\",\"KeySchema\":[{\"AttributeName\":\"id\",\"KeyType\":"
                    "\"HASH\"}],"
                    "\"AttributeDefinitions\":[{\"AttributeName\":\"id\",\"AttributeType\":\"S\"}],"
                    "\"BillingMode\":\"PAY_PER_REQUEST\"}") == QR_OK);
    qr_close(db);
}

static void *undeferred_writer(void *arg)
{
    qr_db *db = arg;
    return (void *)(long)(put(db, "other-thread") == QR_OK && !qr_flush_pending());
}

/* Creates the table in dir, runs steps on the database in a child process that then
 * dies by SIGKILL without closing anything, and returns the database reopened. steps
 * returns 0 if something went wrong (the child then exits 2 instead, and a check fails). */
static qr_db *after_killed_child(const char *dir, int (*steps)(qr_db *))
{
    create_table(dir);
    pid_t pid = fork();
    CHECK_THAT(pid >= 0);
    if (pid == 0) {
        if (!steps(open_db(dir, 1))) _exit(2);
        raise(SIGKILL);
        _exit(3);
    }
    int status = 0;
    CHECK_THAT(waitpid(pid, &status, 0) == pid);
    CHECK_THAT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    return open_db(dir, 1);
}

/* Writes that are flushed, one from a thread that never deferred, one left unflushed. */
static int write_some_unflushed(qr_db *db)
{
    qr_defer_flushes(1);
    int ok = !qr_flush_pending();
    char id[32];
    for (int i = 0; i < FLUSHED; i++) {
        snprintf(id, sizeof id, "flushed-%d", i);
        ok &= put(db, id) == QR_OK;
    }
    ok &= qr_flush_pending() == 1;
    ok &= qr_flush_deferred() == QR_OK;
    ok &= qr_flush_pending() == 0;
    pthread_t th;
    void *thread_ok = NULL;
    ok &= pthread_create(&th, NULL, undeferred_writer, db) == 0 &&
          pthread_join(th, &thread_ok) == 0 && thread_ok != NULL;
    ok &= qr_flush_pending() == 0; /* the other thread's write is not this one's to flush */
    ok &= put(db, "unflushed") == QR_OK && qr_flush_pending() == 1;
    return ok;
}

static void test_survival(const char *dir)
{
    qr_db *db = after_killed_child(dir, write_some_unflushed);
    char id[32];
    for (int i = 0; i < FLUSHED; i++) {
        snprintf(id, sizeof id, "flushed-%d", i);
        CHECK_THAT(has(db, id) == 1);
    }
    CHECK_THAT(has(db, "other-thread") == 1);
    CHECK_THAT(has(db, "unflushed") == 0);
    qr_close(db);
}

/* A thread that defers its flushes writes id and leaves it in the WAL's buffer. */
static void *deferred_writer(void *arg)
{
    void **a = arg;
    qr_defer_flushes(1);
    int ok = put(a[0], a[1]) == QR_OK && qr_flush_pending() == 1;
    return (void *)(long)ok;
}

static int write_unflushed(qr_db *db, const char *id)
{
    void *args[2] = {db, (void *)id}, *ok = NULL;
    pthread_t th;
    return pthread_create(&th, NULL, deferred_writer, args) == 0 && pthread_join(th, &ok) == 0 &&
           ok != NULL;
}

/* Reads the item a[1] on a thread that defers flushes: 1 if it found it, owed a flush for
 * it and made that flush; 2 if it found it already flushed (so owed nothing); 0 if
 * anything went wrong. */
static void *deferring_reader(void *arg)
{
    void **a = arg;
    qr_defer_flushes(1);
    if (has(a[0], a[1]) != 1) return (void *)0L;
    if (qr_flush_pending() == 0) return (void *)2L;
    return (void *)(long)(qr_flush_deferred() == QR_OK && qr_flush_pending() == 0);
}

#define READ_TRIES 20

/* Two writes left unflushed by their threads and then read, one by this thread (which
 * does not defer), one by a thread that does. The index worker reads too when it polls
 * (every millisecond just after opening, then every 50), and flushes whatever waits: a
 * poll between the write and the deferring reader's read leaves the reader owing
 * nothing, so that read is tried again with a fresh item, up to READ_TRIES times, until
 * the reader is seen to owe the flush. The number of tries is then written by this
 * thread, whose writes are flushed at once, as "tries-N". (No unread write serves as a
 * control here, for the same reason. Without settle_read the items read are lost.) */
static int read_unflushed(qr_db *db)
{
    int ok = write_unflushed(db, "read-here") && has(db, "read-here") == 1;
    long owed = 0;
    int tries = 0;
    while (ok && owed != 1 && tries < READ_TRIES) {
        char id[32];
        snprintf(id, sizeof id, "read-by-deferrer-%d", tries++);
        void *args[2] = {db, id}, *r = NULL;
        pthread_t th;
        ok = write_unflushed(db, id) && pthread_create(&th, NULL, deferring_reader, args) == 0 &&
             pthread_join(th, &r) == 0 && r != NULL;
        owed = (long)r;
    }
    char count[32];
    snprintf(count, sizeof count, "tries-%d", tries);
    return ok && owed == 1 && put(db, count) == QR_OK;
}

static void test_reads_wait_for_flush(const char *dir)
{
    qr_db *db = after_killed_child(dir, read_unflushed);
    CHECK_THAT(has(db, "read-here") == 1);
    int tries = 0;
    char id[32];
    for (int n = 1; n <= READ_TRIES && tries == 0; n++) {
        snprintf(id, sizeof id, "tries-%d", n);
        if (has(db, id) == 1) tries = n;
    }
    CHECK(tries > 0, "the child's count of tries is missing");
    for (int i = 0; i < tries; i++) {
        snprintf(id, sizeof id, "read-by-deferrer-%d", i);
        CHECK(has(db, id) == 1, "%s was read, then lost", id);
    }
    qr_close(db);
}

/* Durable databases sync every write themselves: deferring changes nothing there. */
static void test_durable_ignores_deferral(const char *dir)
{
    create_table(dir);
    qr_db *db = open_db(dir, 0);
    qr_defer_flushes(1);
    CHECK_THAT(put(db, "durable") == QR_OK);
    CHECK_THAT(qr_flush_pending() == 0);
    CHECK_THAT(qr_flush_deferred() == QR_OK);
    qr_defer_flushes(0);
    qr_close(db);
}

/* 5000 turns of one write and one flush, as a busy event loop makes in about a second:
 * RocksDB's LOG must not have grown by a line per flush (it did at DEBUG, the level
 * Debian's librocksdb starts at, ~90 bytes a flush). */
static void test_flushes_leave_the_log_alone(const char *dir)
{
    create_table(dir);
    qr_db *db = open_db(dir, 1);
    char path[128];
    snprintf(path, sizeof path, "%s/LOG", dir);
    struct stat before, after;
    CHECK_THAT(stat(path, &before) == 0);
    qr_defer_flushes(1);
    for (int i = 0; i < 5000; i++) {
        char id[16];
        snprintf(id, sizeof id, "k%d", i % 50);
        put(db, id);
        qr_flush_deferred();
    }
    qr_defer_flushes(0);
    qr_close(db); /* RocksDB's logger writes out what it holds */
    CHECK_THAT(stat(path, &after) == 0);
    long grown = (long)(after.st_size - before.st_size);
    CHECK(grown < 50000, "5000 flushes grew RocksDB's LOG by %ld bytes", grown);
}

int main(void)
{
    char base[] = "/tmp/quarry-deferred-XXXXXX";
    CHECK_THAT(mkdtemp(base) != NULL);
    char a[64], b[64], c[64], d[64];
    snprintf(a, sizeof a, "%s/killed", base);
    snprintf(b, sizeof b, "%s/durable", base);
    snprintf(c, sizeof c, "%s/reads", base);
    snprintf(d, sizeof d, "%s/log", base);
    test_survival(a);
    test_reads_wait_for_flush(c);
    test_durable_ignores_deferral(b);
    test_flushes_leave_the_log_alone(d);
    check_remove_tree(base);
    return check_report("test_deferred_flush");
}
