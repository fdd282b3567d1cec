/* test_backfill_slots.c — a database creates any number of global indexes over its life.
 *
 * Each index added to a live table is filled by a backfill thread. The database kept
 * those threads in 64 slots that were freed only at close, so from the 65th index on a
 * new index stayed CREATING for good. Here one table gets an index, waits for it to be
 * ACTIVE and loses it again, 80 times over. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quarry.h"

#include "check.h"

static int call(qr_db *db, const char *op, const char *body, char **out)
{
    qr_response r;
    int rc = qr_call(db, op, body, strlen(body), &r);
    if (out)
        *out = strdup(r.body);
    else if (rc != QR_OK)
        fprintf(stderr, "%s: %s\n", op, r.body);
    qr_response_free(&r);
    return rc;
}

int main(void)
{
    char dir[] = "/tmp/quarry-backfill-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *err;
    qr_options o = {.no_sync = 1};
    if (qr_open(dir, &o, &db, &err) != QR_OK) return 1;
    CHECK_THAT(call(db, "CreateTable",
                    "{\"TableName\":\"people\",\"BillingMode\":\"PAY_PER_REQUEST\","
                    "\"AttributeDefinitions\":["
                    "{\"AttributeName\":\"id\",\"AttributeType\":\"S\"}],\"KeySchema\":[{"
                    "\"AttributeName\":\"id\","
                    "\"KeyType\":\"HASH\"}]}",
                    NULL) == QR_OK);
    for (int i = 0; i < 5; i++) {
        char put[160];
        snprintf(
            put, sizeof put,
            "{\"TableName\":\"people\",\"Item\":{\"id\":{\"S\":\"p%d\"},\"city\":{\"S\":\"c%d\"}}}",
            i, i % 2);
        CHECK_THAT(call(db, "PutItem", put, NULL) == QR_OK);
    }
    int active = 0;
    for (int round = 0; round < 80; round++) {
        CHECK_THAT(
            call(db, "UpdateTable",
                 "{\"TableName\":\"people\",\"AttributeDefinitions\":[{\"AttributeName\":\"city\","
                 "\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{\"Create\":{"
                 "\"IndexName\":"
                 "\"ByCity\",\"KeySchema\":[{\"AttributeName\":\"city\",\"KeyType\":\"HASH\"}],"
                 "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}}]}",
                 NULL) == QR_OK);
        CHECK(qr_wait_indexes(db, 10000) == QR_OK, "round %d: the index backfill finishes", round);
        char *desc;
        call(db, "DescribeTable", "{\"TableName\":\"people\"}", &desc);
        int ok = strstr(desc, "\"IndexStatus\":\"ACTIVE\"") != NULL &&
                 strstr(desc, "\"ItemCount\":5") != NULL;
        active += ok;
        CHECK(ok, "round %d: the index is ACTIVE with its 5 entries: %s", round, desc);
        free(desc);
        CHECK_THAT(call(db, "UpdateTable",
                        "{\"TableName\":\"people\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{"
                        "\"IndexName\":"
                        "\"ByCity\"}}]}",
                        NULL) == QR_OK);
        if (!ok) break; /* one stuck index is the failure; the rest would repeat it */
    }
    CHECK(active == 80, "80 indexes created one after another, %d became ACTIVE", active);
    qr_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    printf("test_backfill_slots: %d passed, %d failed\n", check_count - check_failures,
           check_failures);
    return check_failures != 0;
}
