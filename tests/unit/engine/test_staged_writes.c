/* test_staged_writes.c — single-item writes staged by a thread that defers flushes.
 *
 * On a no_sync database, a thread that defers flushes (an event loop) stages its
 * PutItem, UpdateItem and DeleteItem writes and commits them together when it flushes,
 * keeping each item locked until then. This checks what that must not change:
 *   - a staged write is in the table once the thread flushes, and not before;
 *   - the thread's next write of the same item, in the same turn, reads the staged one
 *     (its condition and its update see it), instead of waiting on its own lock;
 *   - batch writes, transactions and schema changes on that thread, which lock items
 *     their own way, commit what is staged first instead of waiting on it;
 *   - two such threads writing the same items in opposite orders never wait on each
 *     other for ever, and lose no update (a deadlock shows as the alarm's SIGALRM);
 *   - a thread that ends with writes staged commits them;
 *   - a global index created while a write is staged gets that item too: the write keeps
 *     its table, so the index's creation waits for the commit;
 *   - a restore on such a thread does not wait on its own staged items, and its global
 *     index is complete once they are committed;
 *   - qr_close on a thread with writes staged commits them before it stops the TTL
 *     sweeper and the streams, which would otherwise wait on them or be gone. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quarry.h"

#include "call.h"
#include "check.h"

#define TURNS 400

static qr_db *open_db(const char *dir)
{
    qr_db *db;
    char *err = NULL;
    qr_options o = {.no_sync = 1, .capacity = QR_CAPACITY_OFF}; /* races, not throughput */
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open %s: %s\n", dir, err);
        exit(1);
    }
    return db;
}

/* The number n of item id, -1 if there is no such item. */
static long number_of(qr_db *db, const char *id)
{
    json_t *r = call(
        db, "GetItem", 1,
        "{\"TableName\":\"staged\",\"Key\":{\"id\":{\"S\":\"%s\"}},\"ConsistentRead\":true}", id);
    json_t *n = json_object_get(json_object_get(json_object_get(r, "Item"), "n"), "N");
    long v = n ? atol(json_string_value(n)) : -1;
    json_decref(r);
    return v;
}

static int add(qr_db *db, const char *id, int by)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"TableName\":\"staged\",\"Key\":{\"id\":{\"S\":\"%s\"}},\"UpdateExpression\":\"ADD "
             "n :d\","
             "\"ExpressionAttributeValues\":{\":d\":{\"N\":\"%d\"}}}",
             id, by);
    qr_response r;
    int rc = qr_call(db, "UpdateItem", body, strlen(body), &r);
    qr_response_free(&r);
    return rc;
}

static void create_table(qr_db *db, const char *name, const char *extra)
{
    json_decref(call(
        db, "CreateTable", 1,
        "{\"TableName\":\"%s\",\"KeySchema\":[{\"AttributeName\":\"id\",\"KeyType\":\"HASH\"}],"
        "\"AttributeDefinitions\":[{\"AttributeName\":\"id\",\"AttributeType\":\"S\"}],"
        "\"BillingMode\":\"PAY_PER_REQUEST\"%s}",
        name, extra));
}

static void test_one_thread(qr_db *db)
{
    qr_defer_flushes(1);
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"staged\",\"Item\":{\"id\":{\"S\":\"a\"},\"n\":{\"N\":\"1\"}}}"));
    CHECK_THAT(qr_flush_pending() == 1);
    CHECK(number_of(db, "a") == -1, "a staged write was read before its commit");
    CHECK_THAT(qr_flush_deferred() == QR_OK);
    CHECK_THAT(number_of(db, "a") == 1);

    /* The same item again and again in one turn: each write sees the one before. */
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"staged\",\"Item\":{\"id\":{\"S\":\"b\"},\"n\":{\"N\":\"10\"}}}"));
    CHECK_THAT(add(db, "b", 5) == QR_OK);
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"staged\",\"Item\":{\"id\":{\"S\":\"b\"},\"n\":{\"N\":\"20\"}},"
             "\"ConditionExpression\":\"n = "
             ":v\",\"ExpressionAttributeValues\":{\":v\":{\"N\":\"15\"}}}"));
    json_t *r = call(
        db, "DeleteItem", 1,
        "{\"TableName\":\"staged\",\"Key\":{\"id\":{\"S\":\"b\"}},\"ReturnValues\":\"ALL_OLD\"}");
    CHECK_STR(json_string_value(
                  json_object_get(json_object_get(json_object_get(r, "Attributes"), "n"), "N")),
              "20");
    json_decref(r);
    CHECK_THAT(add(db, "b", 1) == QR_OK);
    CHECK_THAT(qr_flush_deferred() == QR_OK);
    CHECK_THAT(number_of(db, "b") == 1);

    /* Writes that lock items their own way, each after a staged write of its item. */
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"staged\",\"Item\":{\"id\":{\"S\":\"c\"},\"n\":{\"N\":\"1\"}}}"));
    json_decref(call(db, "BatchWriteItem", 1,
                     "{\"RequestItems\":{\"staged\":[{\"PutRequest\":{\"Item\":{\"id\":{\"S\":"
                     "\"c\"},\"n\":{\"N\":\"2\"}}}}]}}"));
    CHECK_THAT(add(db, "c", 1) == QR_OK);
    json_decref(call(
        db, "TransactWriteItems", 1,
        "{\"TransactItems\":[{\"Update\":{\"TableName\":\"staged\",\"Key\":{\"id\":{\"S\":\"c\"}},"
        "\"UpdateExpression\":\"ADD n :d\",\"ConditionExpression\":\"n = :three\","
        "\"ExpressionAttributeValues\":{\":d\":{\"N\":\"10\"},\":three\":{\"N\":\"3\"}}}}]}"));
    CHECK_THAT(add(db, "c", 100) == QR_OK);
    json_decref(call(db, "UpdateTable", 1,
                     "{\"TableName\":\"staged\",\"StreamSpecification\":{\"StreamEnabled\":true,"
                     "\"StreamViewType\":\"NEW_IMAGE\"}}"));
    CHECK_THAT(add(db, "c", 1000) == QR_OK);
    json_decref(call(db, "DescribeTable", 1, "{\"TableName\":\"staged\"}"));
    CHECK_THAT(qr_flush_deferred() == QR_OK);
    CHECK(number_of(db, "c") == 1113, "c is %ld", number_of(db, "c"));

    /* Tables created and deleted after a staged write, in the same turn: their catalog
     * changes write while they hold the catalog's lock, which the staged write's commit
     * needs to let go of its table. */
    CHECK_THAT(add(db, "d", 1) == QR_OK);
    create_table(
        db, "passing",
        ",\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":\"KEYS_ONLY\"}");
    CHECK_THAT(add(db, "d", 1) == QR_OK);
    json_decref(
        call(db, "PutItem", 1, "{\"TableName\":\"passing\",\"Item\":{\"id\":{\"S\":\"x\"}}}"));
    json_decref(call(db, "DeleteTable", 1, "{\"TableName\":\"passing\"}"));
    CHECK_THAT(add(db, "d", 1) == QR_OK);
    CHECK_THAT(qr_flush_deferred() == QR_OK);
    CHECK(number_of(db, "d") == 3, "d is %ld", number_of(db, "d"));
    qr_defer_flushes(0);
}

typedef struct racer {
    qr_db *db;
    int reverse;
    int ok;
} racer;

/* Turns of two increments, of x then y (or y then x), each turn flushed as a loop would. */
static void *race(void *arg)
{
    racer *r = arg;
    qr_defer_flushes(1);
    r->ok = 1;
    for (int i = 0; i < TURNS; i++) {
        r->ok &= add(r->db, r->reverse ? "y" : "x", 1) == QR_OK;
        r->ok &= add(r->db, r->reverse ? "x" : "y", 1) == QR_OK;
        r->ok &= qr_flush_deferred() == QR_OK;
    }
    qr_defer_flushes(0);
    return NULL;
}

static void test_two_threads(qr_db *db)
{
    pthread_t th[2];
    racer rs[2] = {{db, 0, 0}, {db, 1, 0}};
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, race, &rs[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK_THAT(rs[0].ok && rs[1].ok);
    CHECK(number_of(db, "x") == 2 * TURNS, "x is %ld", number_of(db, "x"));
    CHECK(number_of(db, "y") == 2 * TURNS, "y is %ld", number_of(db, "y"));
}

static void *stage_and_end(void *arg)
{
    qr_defer_flushes(1);
    return (void *)(long)(add(arg, "z", 7) == QR_OK && qr_flush_pending());
}

static void test_thread_end(qr_db *db)
{
    pthread_t th;
    void *ok = NULL;
    pthread_create(&th, NULL, stage_and_end, db);
    pthread_join(th, &ok);
    CHECK_THAT(ok != NULL);
    CHECK_THAT(number_of(db, "z") == 7);
    CHECK_THAT(add(db, "z", 1) == QR_OK); /* its lock was let go */
    CHECK_THAT(number_of(db, "z") == 8);
}

#define WITH_GSI                                                                                   \
    ",\"AttributeDefinitions\":[{\"AttributeName\":\"id\",\"AttributeType\":\"S\"},"               \
    "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{"        \
    "\"Create\":"                                                                                  \
    "{\"IndexName\":\"by-g\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"      \
    "\"Projection\":{\"ProjectionType\":\"ALL\"}}}]"

/* Items of table under g = value in its index by-g. */
static long in_index(qr_db *db, const char *table, const char *value)
{
    json_t *r =
        call(db, "Query", 1,
             "{\"TableName\":\"%s\",\"IndexName\":\"by-g\",\"KeyConditionExpression\":\"g = :g\","
             "\"ExpressionAttributeValues\":{\":g\":{\"S\":\"%s\"}}}",
             table, value);
    long n = (long)json_integer_value(json_object_get(r, "Count"));
    json_decref(r);
    return n;
}

typedef struct turn {
    qr_db *db;
    const char *table; /* where the turn's write goes */
    sem_t staged, go;
} turn;

/* A loop's turn that stages a write and goes on with other work until told to end. */
static void *staging_turn(void *arg)
{
    turn *t = arg;
    qr_defer_flushes(1);
    json_decref(call(t->db, "PutItem", 1,
                     "{\"TableName\":\"%s\",\"Item\":{\"id\":{\"S\":\"new\"},\"g\":{\"S\":\"G\"}}}",
                     t->table));
    sem_post(&t->staged);
    sem_wait(&t->go);
    qr_flush_deferred();
    qr_defer_flushes(0);
    return NULL;
}

static void *create_index(void *db)
{
    json_decref(call(db, "UpdateTable", 1, "{\"TableName\":\"indexed\"" WITH_GSI "}"));
    return NULL;
}

static void test_index_created_meanwhile(qr_db *db)
{
    create_table(db, "indexed", "");
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"indexed\",\"Item\":{\"id\":{\"S\":\"old\"},\"g\":{\"S\":\"G\"}}}"));
    turn t = {.db = db, .table = "indexed"};
    sem_init(&t.staged, 0, 0);
    sem_init(&t.go, 0, 0);
    pthread_t loop, admin;
    pthread_create(&loop, NULL, staging_turn, &t);
    sem_wait(&t.staged);
    pthread_create(&admin, NULL, create_index, db);
    usleep(200 * 1000); /* the index's creation is under way while the write is staged */
    sem_post(&t.go);
    pthread_join(loop, NULL);
    pthread_join(admin, NULL);
    CHECK_THAT(qr_wait_indexes(db, 20000) == QR_OK);
    CHECK(in_index(db, "indexed", "G") == 2, "the index has %ld of 2 items",
          in_index(db, "indexed", "G"));
    sem_destroy(&t.staged);
    sem_destroy(&t.go);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_restore(qr_db *db)
{
    create_table(db, "source", "");
    json_decref(call(db, "UpdateTable", 1, "{\"TableName\":\"source\"" WITH_GSI "}"));
    for (int i = 0; i < 20; i++)
        json_decref(call(
            db, "PutItem", 1,
            "{\"TableName\":\"source\",\"Item\":{\"id\":{\"S\":\"i%d\"},\"g\":{\"S\":\"G\"}}}", i));
    CHECK_THAT(qr_wait_indexes(db, 20000) == QR_OK);
    json_t *b = call(db, "CreateBackup", 1, "{\"TableName\":\"source\",\"BackupName\":\"before\"}");
    const char *arn =
        json_string_value(json_object_get(json_object_get(b, "BackupDetails"), "BackupArn"));
    qr_defer_flushes(1);
    double t0 = seconds_now();
    json_decref(call(db, "RestoreTableFromBackup", 1,
                     "{\"TargetTableName\":\"restored\",\"BackupArn\":\"%s\"}", arn ? arn : ""));
    double took = seconds_now() - t0;
    CHECK(took < 10, "the restore took %.1f s", took);
    /* Then an item moves to another index key, in a later turn. */
    CHECK_THAT(qr_flush_deferred() == QR_OK);
    json_decref(call(db, "UpdateItem", 1,
                     "{\"TableName\":\"restored\",\"Key\":{\"id\":{\"S\":\"i0\"}},"
                     "\"UpdateExpression\":\"SET g = :h\","
                     "\"ExpressionAttributeValues\":{\":h\":{\"S\":\"H\"}}}"));
    CHECK_THAT(qr_flush_deferred() == QR_OK);
    qr_defer_flushes(0);
    json_decref(b);
    CHECK_THAT(qr_wait_indexes(db, 20000) == QR_OK);
    CHECK(in_index(db, "restored", "G") == 19, "G has %ld of 19", in_index(db, "restored", "G"));
    CHECK(in_index(db, "restored", "H") == 1, "H has %ld of 1", in_index(db, "restored", "H"));
}

static long count_items(qr_db *db, const char *table)
{
    json_t *r = call(db, "Scan", 1, "{\"TableName\":\"%s\",\"Select\":\"COUNT\"}", table);
    long n = (long)json_integer_value(json_object_get(r, "Count"));
    json_decref(r);
    return n;
}

/* A write staged by one thread while another deletes its table lands after DeleteTable's
 * range delete, under the deleted table's id. That id is the highest, so the next open
 * gives it again: the new table must not find the late item. */
static void test_deleted_meanwhile(const char *dir)
{
    qr_db *db = open_db(dir);
    create_table(db, "kept", "");
    create_table(db, "gone", "");
    turn t = {.db = db, .table = "gone"};
    sem_init(&t.staged, 0, 0);
    sem_init(&t.go, 0, 0);
    pthread_t loop;
    pthread_create(&loop, NULL, staging_turn, &t);
    sem_wait(&t.staged);
    json_decref(call(db, "DeleteTable", 1, "{\"TableName\":\"gone\"}"));
    sem_post(&t.go);
    pthread_join(loop, NULL);
    sem_destroy(&t.staged);
    sem_destroy(&t.go);
    qr_close(db);
    db = open_db(dir);
    create_table(db, "fresh", "");
    CHECK(count_items(db, "fresh") == 0, "a new table holds %ld items of a deleted one",
          count_items(db, "fresh"));
    CHECK_THAT(count_items(db, "kept") == 0);
    qr_close(db);
}

/* qr_close with a write staged on the closing thread, on a table with a stream (whose
 * registry closes) or with TTL (whose sweeper may wait for the staged item). */
static void test_close(const char *dir, const char *extra)
{
    qr_options o = {.no_sync = 1, .ttl_interval_ms = 10};
    qr_db *db;
    char *err = NULL;
    CHECK_THAT(qr_open(dir, &o, &db, &err) == QR_OK);
    if (db == NULL) return;
    create_table(db, "closing", extra);
    json_decref(call(db, "UpdateTimeToLive", 1,
                     "{\"TableName\":\"closing\",\"TimeToLiveSpecification\":{\"Enabled\":true,"
                     "\"AttributeName\":\"exp\"}}"));
    long past = (long)time(NULL) - 1000;
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"closing\",\"Item\":{\"id\":{\"S\":\"k\"},\"exp\":{\"N\":\"%ld\"}}}",
             past));
    qr_defer_flushes(1);
    json_decref(
        call(db, "PutItem", 1, "{\"TableName\":\"closing\",\"Item\":{\"id\":{\"S\":\"kept\"}}}"));
    json_decref(call(db, "UpdateItem", 1,
                     "{\"TableName\":\"closing\",\"Key\":{\"id\":{\"S\":\"k\"}},"
                     "\"UpdateExpression\":\"SET x = :one\","
                     "\"ExpressionAttributeValues\":{\":one\":{\"N\":\"1\"}}}"));
    usleep(100 * 1000); /* the sweeper finds k expired and waits for its lock */
    qr_close(db);
    qr_defer_flushes(0);
    CHECK_THAT(qr_open(dir, &o, &db, &err) == QR_OK);
    if (db == NULL) return;
    json_t *r = call(
        db, "GetItem", 1,
        "{\"TableName\":\"closing\",\"Key\":{\"id\":{\"S\":\"kept\"}},\"ConsistentRead\":true}");
    CHECK(json_object_get(r, "Item") != NULL, "the staged write was lost at qr_close");
    json_decref(r);
    qr_close(db);
}

int main(void)
{
    char base[] = "/tmp/quarry-staged-XXXXXX";
    CHECK_THAT(mkdtemp(base) != NULL);
    alarm(120); /* a deadlock fails the test instead of hanging it */
    qr_db *db = open_db(base);
    create_table(db, "staged", "");
    test_one_thread(db);
    test_two_threads(db);
    test_thread_end(db);
    test_index_created_meanwhile(db);
    test_restore(db);
    qr_close(db);
    char dir[96];
    snprintf(dir, sizeof dir, "%s/stream", base);
    test_close(
        dir, ",\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":\"NEW_IMAGE\"}");
    snprintf(dir, sizeof dir, "%s/ttl", base);
    test_close(dir, "");
    snprintf(dir, sizeof dir, "%s/deleted", base);
    test_deleted_meanwhile(dir);
    check_remove_tree(base);
    return check_report("test_staged_writes");
}
