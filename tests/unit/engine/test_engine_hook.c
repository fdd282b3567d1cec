/* test_engine_hook.c — the engine's one hook point sees every item access.
 *
 * Runs the data-plane operations through qr_call on a table with a global index and
 * checks what the hook was told of each: the table or index, the partition, the bytes, read
 * or write, consistency and whether the engine did it on its own (TTL). A failed condition
 * and a not-yet-committed write report nothing. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_int.h"

#include "call.h"

#define MAX_EVENTS 256

typedef struct seen {
    char table[32], index[32]; /* index "" for the table's own items */
    uint64_t partition;
    size_t bytes;
    int write, consistent, system;
} seen;

static seen events[MAX_EVENTS];
static size_t nevents;

static void record(void *arg, const engine_access *a)
{
    (void)arg;
    if (nevents == MAX_EVENTS) return;
    seen *s = &events[nevents++];
    snprintf(s->table, sizeof s->table, "%s", a->table);
    snprintf(s->index, sizeof s->index, "%s", a->index ? a->index : "");
    s->partition = a->partition;
    s->bytes = a->bytes;
    s->write = a->write;
    s->consistent = a->consistent;
    s->system = a->system;
}

/* How many events since `from` match: table or index name ("" the table), write. */
static size_t count(size_t from, const char *index, int write)
{
    size_t n = 0;
    for (size_t i = from; i < nevents; i++)
        n += strcmp(events[i].index, index) == 0 && events[i].write == write;
    return n;
}

static const seen *first(size_t from, const char *index, int write)
{
    for (size_t i = from; i < nevents; i++)
        if (strcmp(events[i].index, index) == 0 && events[i].write == write) return &events[i];
    return NULL;
}

static void drop(json_t *doc)
{
    json_decref(doc);
}

int main(void)
{
    char dir[] = "/tmp/quarry-hook-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    qr_db *db;
    char *msg = NULL;
    CHECK(qr_open(dir, NULL, &db, &msg) == QR_OK, "open: %s", msg ? msg : "");
    drop(call(db, "CreateTable", 1,
              "{\"TableName\":\"Hook\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
              "\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
              "{\"AttributeName\":\"status\",\"AttributeType\":\"S\"}],\"KeySchema\":["
              "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\","
              "\"KeyType\":\"RANGE\"}],\"BillingMode\":\"PAY_PER_REQUEST\","
              "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"byStatus\",\"KeySchema\":["
              "{\"AttributeName\":\"status\",\"KeyType\":\"HASH\"}],\"Projection\":"
              "{\"ProjectionType\":\"ALL\"}}]}"));
    engine_set_hook(db, record, NULL);

    /* A put: the item (pk 3 + sk 3 + status 10 = 16 bytes) and its index entry. */
    size_t at = nevents;
    drop(call(db, "PutItem", 1,
              "{\"TableName\":\"Hook\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"},"
              "\"status\":{\"S\":\"OPEN\"}}}"));
    CHECK(count(at, "", 1) == 1 && count(at, "byStatus", 1) == 1 && nevents - at == 2,
          "a put reports its item and its index entry (%zu events)", nevents - at);
    const seen *put = first(at, "", 1);
    uint64_t part_a = put ? put->partition : 0;
    CHECK(put && strcmp(put->table, "Hook") == 0 && put->bytes == 16 && !put->system,
          "the put's item: table Hook, 16 bytes, a request's");
    const seen *entry = first(at, "byStatus", 1);
    uint64_t part_open = entry ? entry->partition : 0;
    CHECK(entry && entry->bytes == 16, "the index entry is 16 bytes");

    /* Point reads: found (consistent) and not found. */
    at = nevents;
    drop(call(db, "GetItem", 1,
              "{\"TableName\":\"Hook\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"}},"
              "\"ConsistentRead\":true}"));
    drop(call(db, "GetItem", 1,
              "{\"TableName\":\"Hook\",\"Key\":{\"pk\":{\"S\":\"b\"},\"sk\":{\"S\":\"1\"}}}"));
    CHECK(nevents - at == 2 && count(at, "", 0) == 2, "two point reads reported");
    if (nevents - at == 2) {
        CHECK(events[at].bytes == 16 && events[at].consistent && events[at].partition == part_a,
              "the consistent read of a: 16 bytes, its partition");
        CHECK(events[at + 1].bytes == 0 && !events[at + 1].consistent &&
                  events[at + 1].partition != part_a,
              "a read that finds nothing: 0 bytes, eventually consistent, b's partition");
    }

    /* A failed condition writes, and reports, nothing. */
    at = nevents;
    drop(call(db, "PutItem", 0,
              "{\"TableName\":\"Hook\",\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"}},"
              "\"ConditionExpression\":\"attribute_not_exists(pk)\"}"));
    CHECK(count(at, "", 1) == 0 && count(at, "byStatus", 1) == 0,
          "a failed condition reports no write");

    /* A batch of three more items in partition a, then a Query of the partition. */
    at = nevents;
    drop(call(db, "BatchWriteItem", 1,
              "{\"RequestItems\":{\"Hook\":[{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"a\"},\"sk\":"
              "{\"S\":\"2\"},\"status\":{\"S\":\"OPEN\"}}}},{\"PutRequest\":{\"Item\":{\"pk\":"
              "{\"S\":\"a\"},\"sk\":{\"S\":\"3\"}}}},{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":"
              "\"a\"},\"sk\":{\"S\":\"4\"}}}}]}}"));
    CHECK(count(at, "", 1) == 3 && count(at, "byStatus", 1) == 1,
          "a batch reports its three items and the one index entry");
    at = nevents;
    drop(call(db, "Query", 1,
              "{\"TableName\":\"Hook\",\"KeyConditionExpression\":\"pk = :p\","
              "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"a\"}},\"ConsistentRead\":true}"));
    CHECK(count(at, "", 0) == 4, "a Query of four items reports four reads (%zu)",
          count(at, "", 0));
    for (size_t i = at; i < nevents; i++)
        CHECK(events[i].partition == part_a && events[i].consistent,
              "each read of the Query is in a's partition, consistent");

    /* The index read, once the index has caught up. */
    CHECK(qr_wait_indexes(db, 10000) == QR_OK, "the index catches up");
    at = nevents;
    drop(call(db, "Query", 1,
              "{\"TableName\":\"Hook\",\"IndexName\":\"byStatus\",\"KeyConditionExpression\":"
              "\"#s = :s\",\"ExpressionAttributeNames\":{\"#s\":\"status\"},"
              "\"ExpressionAttributeValues\":{\":s\":{\"S\":\"OPEN\"}}}"));
    CHECK(count(at, "byStatus", 0) == 2 && count(at, "", 0) == 0,
          "a Query of the index reports its two entries as index reads");
    for (size_t i = at; i < nevents; i++)
        CHECK(events[i].partition == part_open, "the entries are in OPEN's partition");

    /* An update that moves the item's index key: the table, the entry removed from OPEN's
     * partition and the one put in CLOSED's. */
    at = nevents;
    drop(call(db, "UpdateItem", 1,
              "{\"TableName\":\"Hook\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"}},"
              "\"UpdateExpression\":\"SET #s = :c\",\"ExpressionAttributeNames\":{\"#s\":"
              "\"status\"},\"ExpressionAttributeValues\":{\":c\":{\"S\":\"CLOSED\"}}}"));
    CHECK(count(at, "", 1) == 1 && count(at, "byStatus", 1) == 2,
          "an update moving an index key reports the item and two index writes");
    int left_open = 0, entered_closed = 0;
    for (size_t i = at; i < nevents; i++) {
        if (strcmp(events[i].index, "byStatus")) continue;
        left_open += events[i].partition == part_open && events[i].bytes == 16;
        entered_closed += events[i].partition != part_open && events[i].bytes == 18;
    }
    CHECK(left_open == 1 && entered_closed == 1,
          "the entry leaves OPEN's partition (16 bytes) and enters CLOSED's (18)");

    /* A transaction's writes, and a delete's size is the item it removed. */
    at = nevents;
    drop(call(db, "TransactWriteItems", 1,
              "{\"TransactItems\":[{\"Put\":{\"TableName\":\"Hook\",\"Item\":{\"pk\":{\"S\":\"t\"},"
              "\"sk\":{\"S\":\"1\"}}}},{\"Delete\":{\"TableName\":\"Hook\",\"Key\":{\"pk\":{\"S\":"
              "\"a\"},\"sk\":{\"S\":\"2\"}}}}]}"));
    CHECK(count(at, "", 1) == 2 && count(at, "byStatus", 1) == 1,
          "a transaction reports its put, its delete and the deleted item's index entry");
    const seen *del = NULL;
    for (size_t i = at; i < nevents; i++)
        if (events[i].write && !*events[i].index && events[i].partition == part_a) del = &events[i];
    CHECK(del && del->bytes == 16, "the delete reports the 16 bytes it removed");

    /* TTL expiry is the engine's own work. */
    drop(call(db, "UpdateTimeToLive", 1,
              "{\"TableName\":\"Hook\",\"TimeToLiveSpecification\":{\"Enabled\":true,"
              "\"AttributeName\":\"exp\"}}"));
    drop(call(db, "PutItem", 1,
              "{\"TableName\":\"Hook\",\"Item\":{\"pk\":{\"S\":\"e\"},\"sk\":{\"S\":\"1\"},"
              "\"exp\":{\"N\":\"%lld\"}}}",
              (long long)time(NULL) - 100));
    at = nevents;
    CHECK(expire_sweep(db) == 1, "the sweep deletes the expired item");
    CHECK(count(at, "", 1) == 1 && first(at, "", 1) && first(at, "", 1)->system,
          "the TTL delete is reported as the engine's own");

    engine_set_hook(db, NULL, NULL);
    at = nevents;
    drop(call(db, "GetItem", 1,
              "{\"TableName\":\"Hook\",\"Key\":{\"pk\":{\"S\":\"a\"},\"sk\":{\"S\":\"1\"}}}"));
    CHECK(nevents == at, "a removed hook hears nothing");

    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_engine_hook");
}
