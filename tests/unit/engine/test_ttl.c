/* test_ttl.c — Time to Live: expired items disappear from the table and its indexes.
 *
 * With the sweep interval lowered to 100 ms, items whose TTL attribute lies in the past
 * are deleted (and their index entries with them); items in the future, with a
 * non-number TTL, without one, or more than five years in the past stay, as in DynamoDB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quarry.h"

#include "check.h"

static char *call(qr_db *db, const char *op, const char *body, int expect_ok)
{
    qr_response r;
    int rc = qr_call(db, op, body, strlen(body), &r);
    CHECK((rc == QR_OK) == expect_ok, "%s %s: %s", op, body, r.body);
    char *out = strdup(r.body);
    qr_response_free(&r);
    return out;
}

static void put(qr_db *db, const char *id, const char *ttl_json)
{
    char req[512];
    snprintf(
        req, sizeof req,
        "{\"TableName\":\"sessions\",\"Item\":{\"id\":{\"S\":\"%s\"},\"user\":{\"S\":\"u1\"}%s%s}}",
        id, ttl_json ? ",\"expires\":" : "", ttl_json ? ttl_json : "");
    free(call(db, "PutItem", req, 1));
}

int main(void)
{
    char dir[] = "/tmp/quarry-ttl-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *err;
    qr_options o = {.ttl_interval_ms = 100};
    if (qr_open(dir, &o, &db, &err) != QR_OK) return 1;
    free(call(
        db, "CreateTable",
        "{\"TableName\":\"sessions\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
        "{\"AttributeName\":\"id\",\"AttributeType\":\"S\"},{\"AttributeName\":\"user\","
        "\"AttributeType\":\"S\"}],"
        "\"KeySchema\":[{\"AttributeName\":\"id\",\"KeyType\":\"HASH\"}],"
        "\"GlobalSecondaryIndexes\":[{"
        "\"IndexName\":\"ByUser\",\"KeySchema\":[{\"AttributeName\":\"user\",\"KeyType\":\"HASH\"}]"
        ","
        "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}",
        1));
    char *out = call(db, "DescribeTimeToLive", "{\"TableName\":\"sessions\"}", 1);
    CHECK(strstr(out, "\"DISABLED\"") != NULL, "TTL starts disabled: %s", out);
    free(out);
    free(call(db, "UpdateTimeToLive",
              "{\"TableName\":\"sessions\",\"TimeToLiveSpecification\":{\"Enabled\":true,"
              "\"AttributeName\":\"expires\"}}",
              1));
    out = call(db, "UpdateTimeToLive",
               "{\"TableName\":\"sessions\",\"TimeToLiveSpecification\":{\"Enabled\":true,"
               "\"AttributeName\":\"expires\"}}",
               0);
    CHECK(strstr(out, "already enabled") != NULL, "enabling twice: %s", out);
    free(out);
    out = call(db, "DescribeTimeToLive", "{\"TableName\":\"sessions\"}", 1);
    CHECK(strstr(out, "\"ENABLED\"") && strstr(out, "\"expires\""), "TTL enabled: %s", out);
    free(out);
    out = call(db, "DescribeTable", "{\"TableName\":\"sessions\"}", 1);
    CHECK(strstr(out, "TimeToLive") == NULL, "DescribeTable does not show TTL: %s", out);
    free(out);

    long long now = (long long)time(NULL);
    char past[64], future[64], ancient[64];
    snprintf(past, sizeof past, "{\"N\":\"%lld\"}", now - 10);
    snprintf(future, sizeof future, "{\"N\":\"%lld\"}", now + 3600);
    snprintf(ancient, sizeof ancient, "{\"N\":\"%lld\"}", now - 6LL * 365 * 86400);
    put(db, "gone1", past);
    put(db, "gone2", past);
    put(db, "stays-future", future);
    put(db, "stays-string", "{\"S\":\"yesterday\"}");
    put(db, "stays-none", NULL);
    put(db, "stays-ancient", ancient);
    usleep(600000);
    out = call(db, "Scan", "{\"TableName\":\"sessions\"}", 1);
    CHECK(strstr(out, "gone") == NULL, "expired items are deleted: %s", out);
    CHECK(strstr(out, "\"Count\":4") != NULL, "four items stay: %s", out);
    free(out);
    qr_wait_indexes(db, 10000);
    out = call(db, "Query",
               "{\"TableName\":\"sessions\",\"IndexName\":\"ByUser\",\"KeyConditionExpression\":"
               "\"#u = :u\",\"ExpressionAttributeNames\":{\"#u\":\"user\"},"
               "\"ExpressionAttributeValues\":{\":u\":{\"S\":\"u1\"}}}",
               1);
    CHECK(strstr(out, "\"Count\":4") != NULL && strstr(out, "gone") == NULL,
          "the index follows: %s", out);
    free(out);
    /* As in DynamoDB, the setting cannot change again within the hour: TTL stays on. */
    out = call(db, "UpdateTimeToLive",
               "{\"TableName\":\"sessions\",\"TimeToLiveSpecification\":{\"Enabled\":false,"
               "\"AttributeName\":\"expires\"}}",
               0);
    CHECK(strstr(out, "Time to live has been modified multiple times within a fixed interval") !=
              NULL,
          "a second change within the hour is refused: %s", out);
    free(out);
    out = call(db, "DescribeTimeToLive", "{\"TableName\":\"sessions\"}", 1);
    CHECK(strstr(out, "\"ENABLED\"") != NULL, "TTL is still enabled: %s", out);
    free(out);
    /* A table without TTL keeps an item whose attribute lies in the past. */
    free(call(
        db, "CreateTable",
        "{\"TableName\":\"notes\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
        "{\"AttributeName\":\"id\",\"AttributeType\":\"S\"}],"
        "\"KeySchema\":[{\"AttributeName\":\"id\",\"KeyType\":\"HASH\"}]}",
        1));
    char body[256];
    snprintf(
        body, sizeof body,
        "{\"TableName\":\"notes\",\"Item\":{\"id\":{\"S\":\"stays-disabled\"},\"expires\":%s}}",
        past);
    free(call(db, "PutItem", body, 1));
    usleep(300000);
    out = call(db, "GetItem",
               "{\"TableName\":\"notes\",\"Key\":{\"id\":{\"S\":\"stays-disabled\"}}}", 1);
    CHECK(strstr(out, "stays-disabled") != NULL, "nothing expires with TTL disabled: %s", out);
    free(out);
    char *report;
    CHECK(qr_verify(db, NULL, &report) == QR_OK, "indexes match after expiry: %s", report);
    free(report);
    qr_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    if (check_failures) {
        fprintf(stderr, "test_ttl: %d failure(s)\n", check_failures);
        return 1;
    }
    printf("test_ttl: ok\n");
    return 0;
}
