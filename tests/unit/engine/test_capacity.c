/* test_capacity.c — throttling as DynamoDB does it, through qr_call on a manual capacity
 * clock: a provisioned table once its burst is spent, one hot partition key against
 * cold ones, a hot global index key and an under-provisioned index throttling base
 * writes (which then change nothing), BatchWriteItem's UnprocessedItems, and the error
 * documents with their ThrottlingReasons. The wire is the server tests' part. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "quarry.h"

#include "call.h"

#define ARN "arn:aws:dynamodb:ddblocal:000000000000:table/"

static qr_db *open_db(char *dir, int mode)
{
    qr_db *db = NULL;
    char *err = NULL;
    qr_options o = {.no_sync = 1, .capacity = mode, .capacity_clock = QR_CLOCK_MANUAL};
    CHECK(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
    CHECK(qr_open(dir, &o, &db, &err) == QR_OK, "open %s: %s", dir, err ? err : "");
    free(err);
    return db;
}

/* A PutItem of item pk (with g, when given, for the index); returns the error document
 * (a new reference) or NULL when it succeeded. */
static json_t *put(qr_db *db, const char *table, const char *pk, const char *g)
{
    char body[512];
    snprintf(body, sizeof body, "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"%s\"}%s%s%s}}",
             table, pk, g ? ",\"g\":{\"S\":\"" : "", g ? g : "", g ? "\"}" : "");
    qr_response r;
    int rc = qr_call(db, "PutItem", body, strlen(body), &r);
    json_t *doc = rc == QR_OK ? NULL : json_loads(r.body, 0, NULL);
    qr_response_free(&r);
    return doc;
}

/* Puts until one is refused (at most limit); returns how many went, *refusal the error. */
static int puts_until_refused(qr_db *db, const char *table, const char *pk_fmt, const char *g,
                              int limit, json_t **refusal)
{
    *refusal = NULL;
    char pk[64];
    for (int i = 0; i < limit; i++) {
        snprintf(pk, sizeof pk, pk_fmt, i);
        if ((*refusal = put(db, table, pk, g)) != NULL) return i;
    }
    return limit;
}

static void check_refusal(json_t *doc, const char *type, const char *reason, const char *resource)
{
    const char *t = json_string_value(json_object_get(doc, "__type"));
    CHECK(t && strstr(t, type), "type %s, want %s", t ? t : "(none)", type);
    json_t *r = json_array_get(json_object_get(doc, "ThrottlingReasons"), 0);
    CHECK_STR(json_string_value(json_object_get(r, "reason")), reason);
    CHECK_STR(json_string_value(json_object_get(r, "resource")), resource);
}

static void advance(qr_db *db, double seconds)
{
    json_decref(call(db, "QuarryAdvanceClock", 1, "{\"Seconds\":%g}", seconds));
}

static void test_provisioned(qr_db *db)
{
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"small\",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":5,"
                     "\"WriteCapacityUnits\":5},\"AttributeDefinitions\":[{\"AttributeName\":"
                     "\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
                     "\"KeyType\":\"HASH\"}]}"));
    /* 1,500 units banked; the one partition serves 1,000 of them in a second. */
    json_t *doc;
    int n = puts_until_refused(db, "small", "k%d", NULL, 5000, &doc);
    CHECK(n == 1000, "%d writes in the first second", n);
    check_refusal(doc, "ProvisionedThroughputExceededException",
                  "TableWriteKeyRangeThroughputExceeded", ARN "small");
    json_decref(doc);
    advance(db, 1);
    n = puts_until_refused(db, "small", "m%d", NULL, 5000, &doc);
    CHECK(n == 505, "%d writes in the second second", n);
    check_refusal(doc, "ProvisionedThroughputExceededException",
                  "TableWriteProvisionedThroughputExceeded", ARN "small");
    CHECK_STR(json_string_value(json_object_get(doc, "message")),
              "The level of configured provisioned throughput for the table was exceeded. "
              "Consider increasing your provisioning level with the UpdateTable API.");
    json_decref(doc);
    /* The refused write changed nothing. */
    json_t *got =
        call(db, "GetItem", 1, "{\"TableName\":\"small\",\"Key\":{\"pk\":{\"S\":\"m505\"}}}");
    CHECK_THAT(got && json_object_get(got, "Item") == NULL);
    json_decref(got);
    /* Reads have their own bucket. */
    got = call(db, "GetItem", 1, "{\"TableName\":\"small\",\"Key\":{\"pk\":{\"S\":\"k1\"}}}");
    CHECK_THAT(got && json_object_get(got, "Item") != NULL);
    json_decref(got);
    advance(db, 2);
    n = puts_until_refused(db, "small", "n%d", NULL, 5000, &doc);
    CHECK(n == 10, "%d writes after two seconds at 5 WCU", n);
    json_decref(doc);

    /* BatchWriteItem hands back what was refused; only all refused is an error. */
    advance(db, 1);
    char body[4096];
    size_t len = (size_t)snprintf(body, sizeof body, "{\"RequestItems\":{\"small\":[");
    for (int i = 0; i < 8; i++)
        len += (size_t)snprintf(body + len, sizeof body - len,
                                "%s{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"b%d\"}}}}",
                                i ? "," : "", i);
    snprintf(body + len, sizeof body - len, "]}}");
    json_t *answer = call(db, "BatchWriteItem", 1, "%s", body);
    /* With 5 units banked the batch is admitted, and charged its 8 after: 3 in debt. */
    size_t left =
        json_array_size(json_object_get(json_object_get(answer, "UnprocessedItems"), "small"));
    CHECK(left == 0, "%zu unprocessed of 8 with 5 units banked", left);
    json_decref(answer);
    answer = call(db, "BatchWriteItem", 0, "%s", body);
    check_refusal(answer, "ProvisionedThroughputExceededException",
                  "TableWriteProvisionedThroughputExceeded", ARN "small");
    json_decref(answer);

    /* A write whose condition fails is charged, as DynamoDB charges it; one on a spent
     * table is throttled before its condition is looked at. */
    const char *cond = "{\"TableName\":\"small\",\"Item\":{\"pk\":{\"S\":\"k1\"}},"
                       "\"ConditionExpression\":\"attribute_not_exists(pk)\"}";
    answer = call(db, "PutItem", 0, "%s", cond);
    check_refusal(answer, "ProvisionedThroughputExceededException",
                  "TableWriteProvisionedThroughputExceeded", ARN "small");
    json_decref(answer);
    advance(db, 10);
    table *t = catalog_get(db, "small");
    meter_totals before, after;
    CHECK_THAT(table_capacity(t, NULL, db, &before) == 0);
    answer = call(db, "PutItem", 0, "%s", cond);
    const char *type = json_string_value(json_object_get(answer, "__type"));
    CHECK(type && strstr(type, "ConditionalCheckFailed"), "%s", type ? type : "(none)");
    json_decref(answer);
    CHECK_THAT(table_capacity(t, NULL, db, &after) == 0);
    CHECK(after.write_units == before.write_units + 1, "a failed condition charged %g",
          after.write_units - before.write_units);
    /* A transactional read costs twice a consistent one. */
    json_decref(call(db, "TransactGetItems", 1,
                     "{\"TransactItems\":[{\"Get\":{\"TableName\":\"small\",\"Key\":{\"pk\":"
                     "{\"S\":\"k1\"}}}}]}"));
    CHECK_THAT(table_capacity(t, NULL, db, &before) == 0);
    CHECK(before.read_units == after.read_units + 2, "a transactional read charged %g",
          before.read_units - after.read_units);
    catalog_release(db, t);
}

static void test_hot_key(qr_db *db)
{
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"ondemand\",\"BillingMode\":\"PAY_PER_REQUEST\","
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
                     "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
                     "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"by_g\",\"KeySchema\":["
                     "{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"
                     "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}"));
    /* One partition key, written over and over: its partition's 1,000 WCU, then refused. */
    json_t *doc;
    int n = puts_until_refused(db, "ondemand", "hot", NULL, 5000, &doc);
    CHECK(n == 1000, "%d writes of one key", n);
    check_refusal(doc, "ProvisionedThroughputExceededException",
                  "TableWriteKeyRangeThroughputExceeded", ARN "ondemand");
    json_decref(doc);
    /* Ten cold keys at 100 writes each, in the same second, spread over the partitions
     * of a table of their own, are not refused. (Beside the hot key, the ones that share
     * its partition would be, until a split for heat isolates it.) */
    json_decref(
        call(db, "CreateTable", 1,
             "{\"TableName\":\"coldkeys\",\"BillingMode\":\"PAY_PER_REQUEST\","
             "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
             "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}"));
    char key[32];
    int refused = 0;
    for (int k = 0; k < 10; k++)
        for (int i = 0; i < 100; i++) {
            snprintf(key, sizeof key, "cold-%d", k);
            json_t *d = put(db, "coldkeys", key, NULL);
            refused += d != NULL;
            json_decref(d);
        }
    CHECK(refused == 0, "%d cold writes refused", refused);

    /* A batch with the hot key and cold ones: the hot one comes back unprocessed. */
    json_t *answer = call(db, "BatchWriteItem", 1,
                          "{\"RequestItems\":{\"ondemand\":[{\"PutRequest\":{\"Item\":{\"pk\":"
                          "{\"S\":\"hot\"}}}},{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":"
                          "\"warm-1\"}}}},{\"DeleteRequest\":{\"Key\":{\"pk\":{\"S\":"
                          "\"warm-2\"}}}}]}}");
    json_t *left = json_object_get(json_object_get(answer, "UnprocessedItems"), "ondemand");
    CHECK(json_array_size(left) == 1, "%zu unprocessed", json_array_size(left));
    CHECK_STR(
        json_string_value(json_object_get(
            json_object_get(
                json_object_get(json_object_get(json_array_get(left, 0), "PutRequest"), "Item"),
                "pk"),
            "S")),
        "hot");
    json_decref(answer);

    /* TransactWriteItems with the spent key cancels, with ThrottlingError for its member,
     * whether or not the member has a condition; the other member is not written. */
    for (int conditional = 0; conditional < 2; conditional++) {
        answer = call(db, "TransactWriteItems", 0,
                      "{\"TransactItems\":[{\"Put\":{\"TableName\":\"ondemand\",\"Item\":{\"pk\":"
                      "{\"S\":\"other-%d\"}}}},{\"Put\":{\"TableName\":\"ondemand\",\"Item\":"
                      "{\"pk\":{\"S\":\"hot\"}}%s}}]}",
                      conditional,
                      conditional ? ",\"ConditionExpression\":\"attribute_exists(pk)\"" : "");
        const char *type = json_string_value(json_object_get(answer, "__type"));
        CHECK(type && strstr(type, "TransactionCanceledException"), "%s", type ? type : "(none)");
        json_t *reasons = json_object_get(answer, "CancellationReasons");
        CHECK_STR(json_string_value(json_object_get(json_array_get(reasons, 0), "Code")), "None");
        CHECK_STR(json_string_value(json_object_get(json_array_get(reasons, 1), "Code")),
                  "ThrottlingError");
        json_decref(answer);
        json_t *got =
            call(db, "GetItem", 1,
                 "{\"TableName\":\"ondemand\",\"Key\":{\"pk\":{\"S\":\"other-%d\"}}}", conditional);
        CHECK_THAT(got && json_object_get(got, "Item") == NULL);
        json_decref(got);
    }

    /* A global index key every write carries: its partition throttles the base table,
     * and a refused write leaves no item behind. */
    advance(db, 10);
    n = puts_until_refused(db, "ondemand", "s%d", "STATUS#OPEN", 5000, &doc);
    CHECK(n == 1000, "%d writes to one index key", n);
    check_refusal(doc, "ProvisionedThroughputExceededException",
                  "IndexWriteKeyRangeThroughputExceeded", ARN "ondemand/index/by_g");
    json_decref(doc);
    json_t *got =
        call(db, "GetItem", 1, "{\"TableName\":\"ondemand\",\"Key\":{\"pk\":{\"S\":\"s%d\"}}}", n);
    CHECK_THAT(got && json_object_get(got, "Item") == NULL);
    json_decref(got);
}

static void test_under_provisioned_index(qr_db *db)
{
    json_decref(call(
        db, "CreateTable", 1,
        "{\"TableName\":\"gsi\",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":100,"
        "\"WriteCapacityUnits\":1000},\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
        "\"AttributeType\":\"S\"},{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
        "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
        "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"thin\",\"KeySchema\":[{\"AttributeName\":"
        "\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"},"
        "\"ProvisionedThroughput\":{\"ReadCapacityUnits\":1,\"WriteCapacityUnits\":1}}]}"));
    json_t *doc;
    char g[32];
    int n = 0;
    for (; n < 5000; n++) {
        snprintf(g, sizeof g, "g%d", n);
        char pk[32];
        snprintf(pk, sizeof pk, "p%d", n);
        if ((doc = put(db, "gsi", pk, g)) != NULL) break;
    }
    CHECK(n == 300, "%d writes through an index of 1 WCU", n);
    check_refusal(doc, "ProvisionedThroughputExceededException",
                  "IndexWriteProvisionedThroughputExceeded", ARN "gsi/index/thin");
    json_decref(doc);
    /* Writes the index does not see are not held back by it. */
    doc = put(db, "gsi", "no-index-key", NULL);
    CHECK(doc == NULL, "a write without the index key: %s", doc ? "refused" : "");
    json_decref(doc);
}

/* What the hook saw of refusals: their count and the last one's partition key bytes. */
typedef struct refusals {
    int n, writes;
    char index[64];
    size_t pk_len;
} refusals;

static void count_refusals(void *arg, const engine_access *a)
{
    refusals *r = arg;
    if (!a->throttled) return;
    r->n++;
    r->writes += a->write;
    snprintf(r->index, sizeof r->index, "%s", a->index ? a->index : "");
    r->pk_len = a->key_len;
}

/* Runs the Query body until one is refused (at most 10,000); returns how many went, and
 * *refusal the refused one's error document (a new reference). */
static int queries_until_refused(qr_db *db, const char *body, json_t **refusal)
{
    *refusal = NULL;
    for (int n = 0; n < 10000; n++) {
        qr_response r;
        int rc = qr_call(db, "Query", body, strlen(body), &r);
        if (rc != QR_OK) *refusal = json_loads(r.body, 0, NULL);
        qr_response_free(&r);
        if (rc != QR_OK) return n;
    }
    return 10000;
}

static void test_reads(qr_db *db)
{
    refusals seen = {0};
    engine_set_hook(db, count_refusals, &seen);
    json_decref(call(
        db, "CreateTable", 1,
        "{\"TableName\":\"reads\",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":40000,"
        "\"WriteCapacityUnits\":1000},\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
        "\"AttributeType\":\"S\"},{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
        "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
        "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"by_g\",\"KeySchema\":[{\"AttributeName\":"
        "\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"},"
        "\"ProvisionedThroughput\":{\"ReadCapacityUnits\":40000,\"WriteCapacityUnits\":100}}]}"));
    json_t *doc = put(db, "reads", "r1", "G");
    CHECK(doc == NULL, "put: %s", "refused");
    json_decref(doc);
    CHECK(qr_wait_indexes(db, 10000) == QR_OK, "index caught up");
    /* Consistent Queries of one partition: 1 unit each, 3,000 of them at once. */
    const char *q =
        "{\"TableName\":\"reads\",\"KeyConditionExpression\":\"pk = :p\","
        "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"r1\"}},\"ConsistentRead\":true}";
    int n = queries_until_refused(db, q, &doc);
    CHECK(n == 3000, "%d Queries of one partition", n);
    check_refusal(doc, "ProvisionedThroughputExceededException",
                  "TableReadKeyRangeThroughputExceeded", ARN "reads");
    json_decref(doc);
    CHECK(seen.n == 1 && seen.writes == 0 && seen.index[0] == '\0', "hook saw %d refusals", seen.n);
    CHECK(seen.pk_len > 15, "the refusal's key holds the partition key (%zu bytes)", seen.pk_len);
    /* The index has partitions of its own: its reads go on. */
    const char *gq = "{\"TableName\":\"reads\",\"IndexName\":\"by_g\",\"KeyConditionExpression\":"
                     "\"g = :g\",\"ExpressionAttributeValues\":{\":g\":{\"S\":\"G\"}}}";
    n = queries_until_refused(db, gq, &doc);
    CHECK(n == 6000, "%d eventually consistent Queries of one index partition", n);
    check_refusal(doc, "ProvisionedThroughputExceededException",
                  "IndexReadKeyRangeThroughputExceeded", ARN "reads/index/by_g");
    json_decref(doc);
    CHECK_STR(seen.index, "by_g");
    /* Index reads spent do not hold back the table's writes. */
    doc = put(db, "reads", "r2", NULL);
    CHECK(doc == NULL, "a base write after index reads were refused: %s", "refused");
    json_decref(doc);
    engine_set_hook(db, NULL, NULL);
}

/* Seconds of a client putting 1,500 items a second to partition key "hot" (sort keys
 * sk0..sk<nsks - 1>, in turn) on the manual clock; returns the refusals of second last. */
static int refused_in_second(qr_db *db, const char *table, int nsks, int seconds, int last)
{
    int refused = 0;
    char body[256];
    for (int s = 0; s < seconds; s++)
        for (int i = 0; i < 1500; i++) {
            snprintf(body, sizeof body,
                     "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"hot\"},\"sk\":{\"S\":"
                     "\"sk%d\"}}}",
                     table, nsks > 1 ? i % nsks : 0);
            qr_response r;
            int rc = qr_call(db, "PutItem", body, strlen(body), &r);
            qr_response_free(&r);
            if (s == last) refused += rc != QR_OK;
            qr_clock_advance(db, 1.0 / 1500);
        }
    return refused;
}

static void test_split_for_heat(void)
{
    char dir[] = "/tmp/quarry-capacity-split-XXXXXX";
    qr_db *db = NULL;
    char *err = NULL;
    qr_options o = {.no_sync = 1, .capacity_clock = QR_CLOCK_MANUAL, .capacity_split_seconds = 5};
    CHECK(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
    CHECK(qr_open(dir, &o, &db, &err) == QR_OK, "open %s: %s", dir, err ? err : "");
    free(err);
    for (int t = 0; t < 2; t++)
        json_decref(
            call(db, "CreateTable", 1,
                 "{\"TableName\":\"%s\",\"BillingMode\":\"PAY_PER_REQUEST\","
                 "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                 "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],\"KeySchema\":["
                 "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
                 "\"KeyType\":\"RANGE\"}]}",
                 t ? "one_item" : "many_sort_keys"));
    /* A partition key with many sort keys is throttled at first, then its partition splits
     * and the same load goes through. */
    CHECK(refused_in_second(db, "many_sort_keys", 400, 3, 2) > 0, "never throttled");
    int late = refused_in_second(db, "many_sort_keys", 400, 20, 19);
    CHECK(late == 0, "%d writes of 1,500 refused after the split", late);
    /* A Query of every sort key spends each part of the split key what it read there: the
     * upper part, where no such Query starts, is spent too (by its share: the key has split
     * into several parts), and serves fewer Queries of its own until it refills. */
    json_t *doc;
    const char *all = "{\"TableName\":\"many_sort_keys\",\"ConsistentRead\":true,"
                      "\"KeyConditionExpression\":\"pk = :p\",\"ExpressionAttributeValues\":"
                      "{\":p\":{\"S\":\"hot\"}}}";
    const char *upper = "{\"TableName\":\"many_sort_keys\",\"ConsistentRead\":true,"
                        "\"KeyConditionExpression\":\"pk = :p AND sk >= :s\","
                        "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"hot\"},"
                        "\":s\":{\"S\":\"sk99\"}}}";
    int whole = queries_until_refused(db, all, &doc);
    json_decref(doc);
    CHECK(whole > 500 && whole < 10000, "%d Queries of the whole key", whole);
    int after = queries_until_refused(db, upper, &doc);
    json_decref(doc);
    CHECK(after < 2400, "%d Queries of the upper part after the whole key's", after);
    qr_clock_advance(db, 2);
    after = queries_until_refused(db, upper, &doc);
    json_decref(doc);
    CHECK(after > 2900, "%d Queries of the upper part, refilled", after);
    /* One item never splits: it stays at its partition's 1,000 a second. */
    late = refused_in_second(db, "one_item", 1, 20, 19);
    CHECK(late >= 400 && late <= 600, "one hot item: %d of 1,500 refused", late);
    qr_close(db);
    check_remove_tree(dir);
}

/* The status of index name of table, as DescribeTable shows it ("" if none). */
static const char *index_status(qr_db *db, const char *table, const char *name, char *out,
                                size_t cap)
{
    json_t *d = call(db, "DescribeTable", 1, "{\"TableName\":\"%s\"}", table);
    size_t i;
    json_t *g;
    out[0] = '\0';
    json_array_foreach(json_object_get(json_object_get(d, "Table"), "GlobalSecondaryIndexes"), i,
                       g) if (strcmp(json_string_value(json_object_get(g, "IndexName")), name) == 0)
        snprintf(out, cap, "%s", json_string_value(json_object_get(g, "IndexStatus")));
    json_decref(d);
    return out;
}

/* A backfill spends its index's write capacity and waits for more: the table's writes are
 * not what it throttles. */
static void test_backfill(qr_db *db)
{
    json_decref(
        call(db, "CreateTable", 1,
             "{\"TableName\":\"filled\",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":"
             "100,\"WriteCapacityUnits\":1000},\"AttributeDefinitions\":[{\"AttributeName\":"
             "\"pk\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\","
             "\"KeyType\":\"HASH\"}]}"));
    char pk[32];
    int refused = 0;
    for (int i = 0; i < 500; i++) {
        snprintf(pk, sizeof pk, "f%d", i);
        json_t *doc = put(db, "filled", pk, "G");
        refused += doc != NULL;
        json_decref(doc);
    }
    CHECK(refused == 0, "%d writes refused", refused);
    advance(db, 10);
    json_decref(
        call(db, "UpdateTable", 1,
             "{\"TableName\":\"filled\",\"AttributeDefinitions\":[{\"AttributeName\":"
             "\"g\",\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{\"Create\":"
             "{\"IndexName\":\"late\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":"
             "\"HASH\"}],\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"},"
             "\"ProvisionedThroughput\":{\"ReadCapacityUnits\":1,\"WriteCapacityUnits\":1}}}]}"));
    /* 300 units banked at 1 WCU: the backfill of 500 entries stops short, waiting. */
    char status[32];
    for (int i = 0; i < 100 && strcmp(index_status(db, "filled", "late", status, sizeof status),
                                      "ACTIVE") != 0;
         i++)
        usleep(20000);
    CHECK_STR(status, "CREATING");
    table *t = catalog_get(db, "filled");
    meter_totals m;
    CHECK_THAT(table_capacity(t, "late", db, &m) == 0);
    CHECK(m.online_index_throttles > 0, "no online index throttle events");
    CHECK(m.write_units >= 300 && m.write_units < 500, "the backfill spent %g", m.write_units);
    CHECK(m.write_throttles[METER_PROVISIONED] == 0, "requests were throttled");
    catalog_release(db, t); /* a held table would hold back the index's activation */
    /* As time passes it goes on, and finishes. */
    for (int i = 0; i < 500 && strcmp(index_status(db, "filled", "late", status, sizeof status),
                                      "ACTIVE") != 0;
         i++) {
        advance(db, 20);
        usleep(20000);
    }
    CHECK_STR(status, "ACTIVE");
    t = catalog_get(db, "filled");
    CHECK_THAT(table_capacity(t, "late", db, &m) == 0);
    CHECK(m.write_units == 500, "the backfill spent %g for 500 entries", m.write_units);
    catalog_release(db, t);
}

/* One partition key written at 1,500 a second beside ten cold keys at 100 a second each,
 * in one table: the hot key is throttled with TableWriteKeyRangeThroughputExceeded, the
 * cold ones never (the hot key is isolated in a partition of its own). */
static void test_hot_beside_cold(qr_db *db)
{
    json_decref(
        call(db, "CreateTable", 1,
             "{\"TableName\":\"mixed\",\"BillingMode\":\"PAY_PER_REQUEST\","
             "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
             "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}"));
    int hot_refused = 0, cold_refused = 0;
    char key[32];
    for (int s = 0; s < 5; s++)
        for (int i = 0; i < 1500; i++) {
            json_t *doc = put(db, "mixed", "celebrity", NULL);
            if (doc) {
                hot_refused++;
                const char *r = json_string_value(json_object_get(
                    json_array_get(json_object_get(doc, "ThrottlingReasons"), 0), "reason"));
                CHECK(r && strcmp(r, "TableWriteKeyRangeThroughputExceeded") == 0, "reason %s",
                      r ? r : "(none)");
            }
            json_decref(doc);
            if (i % 15 == 0) { /* 100 a second for each of ten keys */
                snprintf(key, sizeof key, "fan-%d", (i / 15) % 10);
                doc = put(db, "mixed", key, NULL);
                cold_refused += doc != NULL;
                json_decref(doc);
            }
            qr_clock_advance(db, 1.0 / 1500);
        }
    CHECK(hot_refused >= 1500 && hot_refused <= 3500, "hot key refused %d of 7,500", hot_refused);
    CHECK(cold_refused == 0, "cold keys refused %d times", cold_refused);
}

static void test_observe(void)
{
    char dir[] = "/tmp/quarry-capacity-observe-XXXXXX";
    qr_db *db = open_db(dir, QR_CAPACITY_OBSERVE);
    json_decref(
        call(db, "CreateTable", 1,
             "{\"TableName\":\"obs\",\"BillingMode\":\"PAY_PER_REQUEST\","
             "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
             "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}"));
    json_t *doc;
    int n = puts_until_refused(db, "obs", "hot", NULL, 3000, &doc);
    CHECK(n == 3000, "observe refused write %d", n);
    json_decref(doc);
    /* The real clock is not moved by requests. */
    json_decref(call(db, "QuarryAdvanceClock", 1, "{\"Seconds\":1}"));
    json_decref(call(db, "QuarryAdvanceClock", 0, "{\"Seconds\":-1}"));
    qr_close(db);
    check_remove_tree(dir);
}

int main(void)
{
    char dir[] = "/tmp/quarry-capacity-XXXXXX";
    qr_db *db = open_db(dir, QR_CAPACITY_ENFORCE);
    test_provisioned(db);
    test_hot_key(db);
    test_under_provisioned_index(db);
    test_reads(db);
    test_backfill(db);
    test_hot_beside_cold(db);
    qr_close(db);
    check_remove_tree(dir);
    test_observe();
    test_split_for_heat();
    return check_report("test_capacity");
}
