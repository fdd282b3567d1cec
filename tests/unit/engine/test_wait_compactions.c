/* test_wait_compactions.c — qr_wait_compactions after a load that fills many write buffers
 * (an 8 MB budget gives 512 KB memtables, so ~10 MB of items means flushes and compactions
 * in the background): it returns QR_OK once they are done, a second call right after finds
 * nothing left to wait for, and every item loaded reads back. What RocksDB runs when is
 * its own; bench/scale uses the call before it measures reads. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quarry.h"

#include "call.h"

#define ITEMS 40000
#define BATCH 25

static void load(qr_db *db)
{
    static char body[BATCH * 400 + 100];
    char pad[201];
    memset(pad, 'x', 200);
    pad[200] = '\0';
    for (int i = 0; i < ITEMS;) {
        int len = snprintf(body, sizeof body, "{\"RequestItems\":{\"settle\":[");
        for (int k = 0; k < BATCH; k++, i++)
            len += snprintf(
                body + len, sizeof body - len,
                "%s{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"N\":\"%d\"},"
                "\"pad\":{\"S\":\"%s%d\"}}}}",
                k ? "," : "", i % 997, i, pad, i);
        len += snprintf(body + len, sizeof body - len, "]}}");
        qr_response r;
        CHECK(qr_call(db, "BatchWriteItem", body, (size_t)len, &r) == QR_OK, "BatchWriteItem: %s",
              r.body);
        qr_response_free(&r);
    }
}

/* Items in the table, counted by a Scan page by page. */
static long count_items(qr_db *db)
{
    long n = 0;
    char *start = NULL;
    for (;;) {
        json_t *page = start
                           ? call(db, "Scan", 1,
                                  "{\"TableName\":\"settle\",\"Select\":\"COUNT\","
                                  "\"ExclusiveStartKey\":%s}",
                                  start)
                           : call(db, "Scan", 1, "{\"TableName\":\"settle\",\"Select\":\"COUNT\"}");
        free(start);
        start = NULL;
        if (page == NULL) break;
        n += (long)json_integer_value(json_object_get(page, "Count"));
        json_t *last = json_object_get(page, "LastEvaluatedKey");
        if (last) start = json_dumps(last, JSON_COMPACT);
        json_decref(page);
        if (start == NULL) break;
    }
    return n;
}

int main(void)
{
    char dir[] = "/tmp/quarry-settle-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
    qr_db *db = NULL;
    char *err = NULL;
    qr_options o = {.no_sync = 1,
                    .capacity = QR_CAPACITY_OFF,
                    .cache_size = 8u << 20,
                    .ttl_interval_ms = 3600 * 1000};
    CHECK(qr_open(dir, &o, &db, &err) == QR_OK, "open %s: %s", dir, err ? err : "");
    free(err);
    if (db == NULL) return check_report("test_wait_compactions");
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"settle\",\"BillingMode\":\"PAY_PER_REQUEST\","
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}],\"KeySchema\":["
                     "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]}"));
    load(db);
    CHECK(qr_wait_compactions(db, 120000) == QR_OK, "compactions still ran after 120 s");
    CHECK(qr_wait_compactions(db, 0) == QR_OK, "work left right after the wait");
    CHECK(count_items(db) == ITEMS, "a Scan after the wait counts %ld items of %d", count_items(db),
          ITEMS);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_wait_compactions");
}
