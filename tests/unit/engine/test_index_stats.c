/* test_index_stats.c — DescribeTable's counts are kept exactly, without scanning.
 *
 * A table with a local index and two global ones (one sparse with KEYS_ONLY, one
 * projecting ALL) takes puts, updates moving items in and out of the sparse index,
 * deletes, batch writes and transactions; a global index is added by UpdateTable while
 * writes go on (backfill) and one is deleted. After qr_wait_indexes, every ItemCount,
 * TableSizeBytes and IndexSizeBytes must equal a full count by Scan, PendingUpdates must
 * be 0, and so again after closing and reopening (counted once, then kept), also when
 * writers run while that first count is taken, and after Time to Live deletes. With
 * gsi_lag_ms holding updates back, PendingUpdates must be above 0. qr_verify, which
 * also compares the counts with the stored entries, must agree throughout. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/value.h"
#include "quarry.h"

#include "check.h"

static qr_db *open_db(const char *dir, int lag, int ttl_ms)
{
    qr_db *db;
    char *err = NULL;
    qr_options o = {.no_sync = 1, .gsi_lag_ms = lag, .ttl_interval_ms = ttl_ms};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open %s: %s\n", dir, err);
        exit(1);
    }
    return db;
}

/* Runs one operation; returns its parsed response (NULL if it failed). */
static json_t *call(qr_db *db, const char *op, const char *body, int must_succeed)
{
    qr_response r;
    int rc = qr_call(db, op, body, strlen(body), &r);
    if (must_succeed) CHECK(rc == QR_OK, "%s %s: %s", op, body, r.body);
    json_t *out = rc == QR_OK ? json_loads(r.body, 0, NULL) : NULL;
    qr_response_free(&r);
    return out;
}

static void create_table(qr_db *db)
{
    json_decref(call(
        db, "CreateTable",
        "{\"TableName\":\"stats\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
        "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\","
        "\"AttributeType\":\"S\"},"
        "{\"AttributeName\":\"at\",\"AttributeType\":\"N\"},{\"AttributeName\":\"status\","
        "\"AttributeType\":\"S\"},"
        "{\"AttributeName\":\"owner\",\"AttributeType\":\"S\"}],"
        "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
        "\"KeyType\":\"RANGE\"}],"
        "\"LocalSecondaryIndexes\":[{\"IndexName\":\"ByAt\",\"KeySchema\":["
        "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"at\",\"KeyType\":"
        "\"RANGE\"}],"
        "\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"n\"]}}],"
        "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"ByStatus\",\"KeySchema\":["
        "{\"AttributeName\":\"status\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"at\",\"KeyType\":"
        "\"RANGE\"}],"
        "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}},"
        "{\"IndexName\":\"ByOwner\",\"KeySchema\":[{\"AttributeName\":\"owner\",\"KeyType\":"
        "\"HASH\"}],"
        "\"Projection\":{\"ProjectionType\":\"ALL\"}}]}",
        1));
}

/* The attributes of item k: the sparse ones (status, at, owner, kind) present or not. */
static void item_json(char *out, size_t cap, int k, unsigned *seed)
{
    static const char *statuses[] = {"OPEN", "CLOSED", "PENDING"};
    int r = rand_r(seed);
    snprintf(out, cap,
             "{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"},\"n\":{\"N\":\"%d\"}%s%s%s%s%s%s%s%s%s"
             ",\"pad\":{\"S\":\"%.*s\"}}",
             k % 17, k, r % 1000, r & 1 ? ",\"status\":{\"S\":\"" : "",
             r & 1 ? statuses[(r >> 4) % 3] : "", r & 1 ? "\"}" : "",
             r & 2 ? ",\"at\":{\"N\":\"" : "", r & 2 ? "7" : "", r & 2 ? "\"}" : "",
             r & 4 ? ",\"owner\":{\"S\":\"u" : "", r & 4 ? (r & 8 ? "1" : "2") : "",
             r & 4 ? "\"}" : "", (r >> 8) % 40, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    if (r & 16) { /* the attribute of the index UpdateTable adds */
        size_t len = strlen(out);
        snprintf(out + len - 1, cap - len + 1, ",\"kind\":{\"S\":\"k%d\"}}", (r >> 5) % 3);
    }
}

/* One random write of every kind there is. Alone, every write but a put or a
 * transaction (which may find its condition false) must succeed; racing others, any may
 * meet a transaction on its item. */
static void random_write(qr_db *db, unsigned *seed, int alone)
{
    char req[4096], item[1024], item2[1024];
    int k = rand_r(seed) % 120, what = rand_r(seed) % 7;
    switch (what) {
    case 0:
    case 1:
        item_json(item, sizeof item, k, seed);
        snprintf(req, sizeof req, "{\"TableName\":\"stats\",\"Item\":%s}", item);
        json_decref(call(db, "PutItem", req, 0));
        break;
    case 2: /* into or out of the sparse index, or to another partition of it */
        if (rand_r(seed) % 2)
            snprintf(
                req, sizeof req,
                "{\"TableName\":\"stats\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"}},"
                "\"UpdateExpression\":\"SET #s = :v, #a = "
                ":t\",\"ExpressionAttributeNames\":{\"#s\":\"status\","
                "\"#a\":\"at\"},\"ExpressionAttributeValues\":{\":v\":{\"S\":\"%s\"},\":t\":{\"N\":"
                "\"%d\"}}}",
                k % 17, k, rand_r(seed) % 2 ? "OPEN" : "CLOSED", rand_r(seed) % 50);
        else
            snprintf(
                req, sizeof req,
                "{\"TableName\":\"stats\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"}},"
                "\"UpdateExpression\":\"REMOVE #s SET #a = "
                ":t\",\"ExpressionAttributeNames\":{\"#s\":\"status\","
                "\"#a\":\"at\"},\"ExpressionAttributeValues\":{\":t\":{\"N\":\"%d\"}}}",
                k % 17, k, rand_r(seed) % 50);
        json_decref(call(db, "UpdateItem", req, alone));
        break;
    case 3:
        snprintf(
            req, sizeof req,
            "{\"TableName\":\"stats\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"}}}",
            k % 17, k);
        json_decref(call(db, "DeleteItem", req, alone));
        break;
    case 4: { /* a transaction: a put, an update and a delete of three other items */
        int k2 = (k + 1) % 120, k3 = (k + 2) % 120;
        item_json(item, sizeof item, k, seed);
        snprintf(
            req, sizeof req,
            "{\"TransactItems\":[{\"Put\":{\"TableName\":\"stats\",\"Item\":%s}},"
            "{\"Update\":{\"TableName\":\"stats\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":"
            "\"s%d\"}},"
            "\"UpdateExpression\":\"SET #o = :o\",\"ExpressionAttributeNames\":{\"#o\":\"owner\"},"
            "\"ExpressionAttributeValues\":{\":o\":{\"S\":\"u3\"}}}},"
            "{\"Delete\":{\"TableName\":\"stats\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":"
            "\"s%d\"}}}}]}",
            item, k2 % 17, k2, k3 % 17, k3);
        json_decref(call(db, "TransactWriteItems", req, 0));
        break;
    }
    default: { /* a batch: two puts and a delete */
        int k2 = (k + 5) % 120, k3 = (k + 9) % 120;
        item_json(item, sizeof item, k, seed);
        item_json(item2, sizeof item2, k2, seed);
        snprintf(req, sizeof req,
                 "{\"RequestItems\":{\"stats\":[{\"PutRequest\":{\"Item\":%s}},{\"PutRequest\":{"
                 "\"Item\":%s}},"
                 "{\"DeleteRequest\":{\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"}}}}]}}",
                 item, item2, k3 % 17, k3);
        json_decref(call(db, "BatchWriteItem", req, alone));
        break;
    }
    }
}

/* Counts the items of the table (index NULL) or of an index by Scan, and their sizes. */
static void scan_count(qr_db *db, const char *index, int64_t *n, int64_t *bytes)
{
    *n = *bytes = 0;
    json_t *start = NULL;
    do {
        json_t *req = json_pack("{s:s}", "TableName", "stats");
        if (index) json_object_set_new(req, "IndexName", json_string(index));
        if (start) json_object_set_new(req, "ExclusiveStartKey", start);
        char *text = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        json_t *resp = call(db, "Scan", text, 1);
        free(text);
        if (resp == NULL) return;
        size_t i;
        json_t *item;
        json_array_foreach(json_object_get(resp, "Items"), i, item)
        {
            (*n)++;
            *bytes += (int64_t)item_size(item);
        }
        start = json_incref(json_object_get(resp, "LastEvaluatedKey"));
        json_decref(resp);
    } while (start);
}

static json_t *describe(qr_db *db)
{
    json_t *r = call(db, "DescribeTable", "{\"TableName\":\"stats\"}", 1);
    json_t *t = json_incref(json_object_get(r, "Table"));
    json_decref(r);
    return t;
}

/* Every figure DescribeTable gives equals a full count. Returns the indexes checked. */
static int check_counts(qr_db *db, const char *when)
{
    json_t *t = describe(db);
    int64_t n, bytes, checked = 0;
    scan_count(db, NULL, &n, &bytes);
    CHECK(json_integer_value(json_object_get(t, "ItemCount")) == n,
          "%s: table ItemCount %lld, scan %lld", when,
          (long long)json_integer_value(json_object_get(t, "ItemCount")), (long long)n);
    CHECK(json_integer_value(json_object_get(t, "TableSizeBytes")) == bytes,
          "%s: TableSizeBytes %lld, scan %lld", when,
          (long long)json_integer_value(json_object_get(t, "TableSizeBytes")), (long long)bytes);
    CHECK(n > 10, "%s: the workload leaves items (%lld)", when, (long long)n);
    const char *lists[2] = {"LocalSecondaryIndexes", "GlobalSecondaryIndexes"};
    for (int g = 0; g < 2; g++) {
        size_t i;
        json_t *d;
        json_array_foreach(json_object_get(t, lists[g]), i, d)
        {
            const char *name = json_string_value(json_object_get(d, "IndexName"));
            scan_count(db, name, &n, &bytes);
            long long have_n = json_integer_value(json_object_get(d, "ItemCount"));
            long long have_b = json_integer_value(json_object_get(d, "IndexSizeBytes"));
            CHECK(have_n == n, "%s: %s ItemCount %lld, scan %lld", when, name, have_n,
                  (long long)n);
            CHECK(have_b == bytes, "%s: %s IndexSizeBytes %lld, scan %lld", when, name, have_b,
                  (long long)bytes);
            CHECK(n > 0, "%s: %s holds entries", when, name);
            checked++;
        }
    }
    json_t *prop = json_object_get(t, "QuarryIndexPropagation");
    CHECK(json_integer_value(json_object_get(prop, "PendingUpdates")) == 0,
          "%s: PendingUpdates %lld after the wait", when,
          (long long)json_integer_value(json_object_get(prop, "PendingUpdates")));
    json_decref(t);
    char *report = NULL;
    CHECK(qr_verify(db, "stats", &report) == QR_OK, "%s: qr_verify:\n%s", when, report);
    free(report);
    return (int)checked;
}

static int index_status_active(qr_db *db, const char *name)
{
    json_t *t = describe(db);
    size_t i;
    json_t *d;
    int active = 0;
    json_array_foreach(json_object_get(t, "GlobalSecondaryIndexes"), i, d)
    {
        if (strcmp(json_string_value(json_object_get(d, "IndexName")), name) == 0)
            active = strcmp(json_string_value(json_object_get(d, "IndexStatus")), "ACTIVE") == 0;
    }
    json_decref(t);
    return active;
}

typedef struct writer {
    qr_db *db;
    unsigned seed;
    int n, done;
} writer;

static void *writer_main(void *arg)
{
    writer *w = arg;
    for (int i = 0; i < w->n; i++) {
        random_write(w->db, &w->seed, 0);
        __atomic_add_fetch(&w->done, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/quarry-index-stats-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    unsigned seed = 20261130;
    qr_db *db = open_db(dir, 0, 0);
    create_table(db);
    for (int i = 0; i < 600; i++)
        random_write(db, &seed, 1);
    CHECK(qr_wait_indexes(db, 30000) == QR_OK, "indexes drain");
    CHECK(check_counts(db, "after the workload") == 3, "three indexes");

    /* A global index added to the live table while writes go on, then one deleted. */
    json_decref(call(
        db, "UpdateTable",
        "{\"TableName\":\"stats\",\"AttributeDefinitions\":[{\"AttributeName\":\"kind\","
        "\"AttributeType\":\"S\"}],"
        "\"GlobalSecondaryIndexUpdates\":[{\"Create\":{\"IndexName\":\"ByKind\",\"KeySchema\":["
        "{\"AttributeName\":\"kind\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":"
        "\"INCLUDE\","
        "\"NonKeyAttributes\":[\"n\"]}}}]}",
        1));
    json_decref(describe(db)); /* while it fills */
    CHECK(qr_wait_indexes(db, 30000) == QR_OK, "indexes drain after the backfill");
    CHECK(index_status_active(db, "ByKind"), "the backfill finished");
    CHECK(check_counts(db, "after the backfill") == 4, "four indexes");
    for (int i = 0; i < 300; i++)
        random_write(db, &seed, 1);
    CHECK(qr_wait_indexes(db, 30000) == QR_OK, "indexes drain after more writes");
    CHECK(check_counts(db, "after more writes") == 4, "four indexes still");
    json_decref(call(db, "UpdateTable",
                     "{\"TableName\":\"stats\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{"
                     "\"IndexName\":\"ByOwner\"}}]}",
                     1));
    for (int i = 0; i < 200; i++)
        random_write(db, &seed, 1);
    CHECK(qr_wait_indexes(db, 30000) == QR_OK, "indexes drain after the delete");
    CHECK(check_counts(db, "after the delete") == 3, "three indexes again");
    qr_close(db);

    /* Reopened: counted once, then kept; writers run while that count is taken. */
    db = open_db(dir, 0, 0);
    CHECK(check_counts(db, "after reopening") == 3, "three indexes after reopening");
    qr_close(db);
    for (int round = 0; round < 3; round++) {
        db = open_db(dir, 0, 0);
        writer ws[2] = {{db, 7u + (unsigned)round, 1500, 0}, {db, 11u + (unsigned)round, 1500, 0}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, writer_main, &ws[i]);
        usleep(2000 * (unsigned)round);
        json_decref(describe(db)); /* the first count, under concurrent writes */
        int done = 0;
        for (int i = 0; i < 2; i++)
            done += __atomic_load_n(&ws[i].done, __ATOMIC_RELAXED);
        CHECK(done < 2 * ws[0].n, "round %d: the count ran while writes went on (%d written)",
              round, done);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        CHECK(qr_wait_indexes(db, 30000) == QR_OK, "indexes drain after the concurrent writes");
        check_counts(db, "after writes during the first count");
        qr_close(db);
    }

    /* Held back by the lag, the updates are pending; and survive a reopen as pending. */
    db = open_db(dir, 1500, 0);
    for (int i = 0; i < 20; i++)
        random_write(db, &seed, 1);
    json_t *t = describe(db);
    json_int_t pending = json_integer_value(
        json_object_get(json_object_get(t, "QuarryIndexPropagation"), "PendingUpdates"));
    CHECK(pending > 0, "PendingUpdates %lld while the lag holds updates back", (long long)pending);
    json_decref(t);
    qr_close(db);
    db = open_db(dir, 1500, 0);
    t = describe(db);
    json_int_t again = json_integer_value(
        json_object_get(json_object_get(t, "QuarryIndexPropagation"), "PendingUpdates"));
    CHECK(again > 0 && again <= pending, "PendingUpdates %lld after reopening (was %lld)",
          (long long)again, (long long)pending);
    json_decref(t);
    CHECK(qr_wait_indexes(db, 30000) == QR_OK, "indexes drain after the lag");
    check_counts(db, "after the lag");
    qr_close(db);

    /* Time to Live deletes through the ordinary write path, and the counts follow. */
    db = open_db(dir, 0, 100);
    json_decref(call(db, "UpdateTimeToLive",
                     "{\"TableName\":\"stats\",\"TimeToLiveSpecification\":{\"Enabled\":true,"
                     "\"AttributeName\":\"exp\"}}",
                     1));
    int64_t before, before_bytes, after, after_bytes;
    scan_count(db, NULL, &before, &before_bytes);
    for (int k = 0; k < 30; k++) {
        char req[512];
        snprintf(req, sizeof req,
                 "{\"TableName\":\"stats\",\"Item\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"},"
                 "\"at\":{\"N\":\"%d\"},"
                 "\"status\":{\"S\":\"OPEN\"},\"kind\":{\"S\":\"k1\"},\"exp\":{\"N\":\"%lld\"}}}",
                 k % 17, k, k, (long long)time(NULL) - 100);
        json_decref(call(db, "PutItem", req, 1));
    }
    usleep(800000);
    CHECK(qr_wait_indexes(db, 30000) == QR_OK, "indexes drain after expiry");
    scan_count(db, NULL, &after, &after_bytes);
    CHECK(after < before, "expired items are gone (%lld items before, %lld after)",
          (long long)before, (long long)after);
    check_counts(db, "after expiry");
    qr_close(db);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    if (check_failures) {
        fprintf(stderr, "test_index_stats: %d failure(s)\n", check_failures);
        return 1;
    }
    printf("test_index_stats: ok\n");
    return 0;
}
