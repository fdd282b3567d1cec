/* test_many_figures.c — a write that changes more index figures than a thread keeps inline.
 *
 * Twenty tables with a local index each take one TransactWriteItems of a put into every
 * table (40 figures: each table's and each index's), on the main thread and again on a
 * thread of its own that then ends. Every table's and index's ItemCount must count what
 * the transactions wrote. Not a test of the counts' other paths: test_index_stats is. */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quarry.h"

#include "check.h"

#define TABLES 20

static json_t *call(qr_db *db, const char *op, const char *body)
{
    qr_response r;
    int rc = qr_call(db, op, body, strlen(body), &r);
    CHECK(rc == QR_OK, "%s: %s", op, r.body);
    json_t *out = rc == QR_OK ? json_loads(r.body, 0, NULL) : NULL;
    qr_response_free(&r);
    return out;
}

static void create_tables(qr_db *db)
{
    char req[2048];
    for (int i = 0; i < TABLES; i++) {
        snprintf(req, sizeof req,
                 "{\"TableName\":\"table%d\",\"BillingMode\":\"PAY_PER_REQUEST\","
                 "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                 "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
                 "{\"AttributeName\":\"at\",\"AttributeType\":\"N\"}],"
                 "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                 "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                 "\"LocalSecondaryIndexes\":[{\"IndexName\":\"ByAt\",\"KeySchema\":["
                 "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                 "{\"AttributeName\":\"at\",\"KeyType\":\"RANGE\"}],"
                 "\"Projection\":{\"ProjectionType\":\"ALL\"}}]}",
                 i);
        json_decref(call(db, "CreateTable", req));
    }
}

typedef struct round {
    qr_db *db;
    int n; /* the round's number: its items' sort keys */
} round;

/* One transaction putting an item, with the local index's attribute, into every table. */
static void *transact(void *arg)
{
    round *r = arg;
    char req[16384];
    size_t len = (size_t)snprintf(req, sizeof req, "{\"TransactItems\":[");
    for (int i = 0; i < TABLES; i++)
        len +=
            (size_t)snprintf(req + len, sizeof req - len,
                             "%s{\"Put\":{\"TableName\":\"table%d\",\"Item\":{\"pk\":{\"S\":\"p\"},"
                             "\"sk\":{\"S\":\"s%d\"},\"at\":{\"N\":\"%d\"}}}}",
                             i ? "," : "", i, r->n, r->n);
    snprintf(req + len, sizeof req - len, "]}");
    json_decref(call(r->db, "TransactWriteItems", req));
    return NULL;
}

static void check_counts(qr_db *db, long long want, const char *when)
{
    char req[128];
    for (int i = 0; i < TABLES; i++) {
        snprintf(req, sizeof req, "{\"TableName\":\"table%d\"}", i);
        json_t *d = call(db, "DescribeTable", req);
        json_t *t = json_object_get(d, "Table");
        CHECK(json_integer_value(json_object_get(t, "ItemCount")) == want,
              "%s: table%d ItemCount %lld, want %lld", when, i,
              (long long)json_integer_value(json_object_get(t, "ItemCount")), want);
        json_t *lsi = json_array_get(json_object_get(t, "LocalSecondaryIndexes"), 0);
        CHECK(json_integer_value(json_object_get(lsi, "ItemCount")) == want,
              "%s: table%d ByAt ItemCount %lld, want %lld", when, i,
              (long long)json_integer_value(json_object_get(lsi, "ItemCount")), want);
        json_decref(d);
    }
}

int main(void)
{
    char dir[] = "/tmp/quarry-figures-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *err = NULL;
    qr_options o = {.no_sync = 1};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open %s: %s\n", dir, err);
        return 1;
    }
    create_tables(db);
    round first = {db, 1}, second = {db, 2};
    transact(&first);
    check_counts(db, 1, "after the main thread's transaction");
    pthread_t th;
    CHECK_THAT(pthread_create(&th, NULL, transact, &second) == 0);
    pthread_join(th, NULL);
    check_counts(db, 2, "after the second thread's transaction");
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_many_figures");
}
