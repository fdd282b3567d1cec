/* test_streams.c — DynamoDB Streams across restarts, TTL expiry and the 24-hour trim.
 *
 * What the HTTP tests cannot reach: records and the sequence counter survive closing
 * and reopening the database; a TTL deletion's record names the service as its author;
 * stream_trim, given a clock a day ahead, drops old records (a read from before the trim
 * horizon gets TrimmedDataAccessException) and then closed streams altogether. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine_int.h"
#include "quarry.h"

#include "call.h"

static const char *str_at(json_t *doc, const char *a, const char *b)
{
    json_t *v = json_object_get(doc, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

/* Every record of the table's latest stream from TRIM_HORIZON. */
static json_t *all_records(qr_db *db, const char *arn)
{
    json_t *d = call(db, "DescribeStream", 1, "{\"StreamArn\":\"%s\"}", arn);
    json_t *shard =
        json_array_get(json_object_get(json_object_get(d, "StreamDescription"), "Shards"), 0);
    json_t *it =
        call(db, "GetShardIterator", 1,
             "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\",\"ShardIteratorType\":\"TRIM_HORIZON\"}",
             arn, str_at(shard, "ShardId", NULL));
    json_t *got =
        call(db, "GetRecords", 1, "{\"ShardIterator\":\"%s\"}", str_at(it, "ShardIterator", NULL));
    json_t *records = json_incref(json_object_get(got, "Records"));
    json_decref(d);
    json_decref(it);
    json_decref(got);
    return records ? records : json_array();
}

static const char *seq_of(json_t *record)
{
    return json_string_value(
        json_object_get(json_object_get(record, "dynamodb"), "SequenceNumber"));
}

int main(void)
{
    char dir[] = "/tmp/quarry-streams-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *err;
    qr_options o = {.ttl_interval_ms = 3600 * 1000}; /* sweeps only when this test runs them */
    if (qr_open(dir, &o, &db, &err) != QR_OK) return 1;
    json_t *t = call(
        db, "CreateTable", 1,
        "{\"TableName\":\"events\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
        "{\"AttributeName\":\"id\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
        "\"id\","
        "\"KeyType\":\"HASH\"}],\"StreamSpecification\":{\"StreamEnabled\":true,"
        "\"StreamViewType\":\"OLD_IMAGE\"}}");
    char *arn = strdup(str_at(json_object_get(t, "TableDescription"), "LatestStreamArn", NULL));
    json_decref(t);
    json_decref(call(db, "UpdateTimeToLive", 1,
                     "{\"TableName\":\"events\",\"TimeToLiveSpecification\":{"
                     "\"Enabled\":true,\"AttributeName\":\"exp\"}}"));
    long long now = (long long)time(NULL);
    json_decref(
        call(db, "PutItem", 1, "{\"TableName\":\"events\",\"Item\":{\"id\":{\"S\":\"a\"}}}"));
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"events\",\"Item\":{\"id\":{\"S\":\"b\"},\"exp\":{\"N\":\"%lld\"}}}",
             now - 5));
    CHECK(expire_sweep(db) == 1, "the expired item is swept");
    json_t *records = all_records(db, arn);
    CHECK(json_array_size(records) == 3, "two inserts and a TTL removal: %zu",
          json_array_size(records));
    json_t *gone = json_array_get(records, 2);
    CHECK_STR(str_at(gone, "eventName", NULL), "REMOVE");
    CHECK_STR(str_at(gone, "userIdentity", "Type"), "Service");
    CHECK_STR(str_at(gone, "userIdentity", "PrincipalId"), "dynamodb.amazonaws.com");
    CHECK(json_object_get(json_array_get(records, 0), "userIdentity") == NULL,
          "a user's write has no userIdentity");
    CHECK(json_object_get(json_object_get(gone, "dynamodb"), "OldImage") != NULL,
          "OLD_IMAGE carries the old item");
    char last[64];
    snprintf(last, sizeof last, "%s", seq_of(gone));
    json_decref(records);

    /* Reopened, the records are there and numbering goes on above them. */
    qr_close(db);
    if (qr_open(dir, &o, &db, &err) != QR_OK) return 1;
    json_decref(
        call(db, "PutItem", 1, "{\"TableName\":\"events\",\"Item\":{\"id\":{\"S\":\"c\"}}}"));
    records = all_records(db, arn);
    CHECK(json_array_size(records) == 4, "records survive a restart: %zu",
          json_array_size(records));
    const char *after = seq_of(json_array_get(records, 3));
    CHECK(after && strcmp(after, last) > 0, "numbers keep rising: %s after %s",
          after ? after : "(none)", last);
    char first[64];
    snprintf(first, sizeof first, "%s",
             records && seq_of(json_array_get(records, 0)) ? seq_of(json_array_get(records, 0))
                                                           : "");
    json_decref(records);

    /* A day later the records are trimmed, and reading from before them is refused. */
    stream_trim(db, (double)now + QR_STREAM_RETENTION_S + 60);
    records = all_records(db, arn);
    CHECK(json_array_size(records) == 0, "records older than a day are trimmed: %zu",
          json_array_size(records));
    json_decref(records);
    json_t *d = call(db, "DescribeStream", 1, "{\"StreamArn\":\"%s\"}", arn);
    json_t *shard =
        json_array_get(json_object_get(json_object_get(d, "StreamDescription"), "Shards"), 0);
    json_t *e = call(
        db, "GetShardIterator", 0,
        "{\"StreamArn\":\"%s\",\"ShardId\":\"%s\",\"ShardIteratorType\":\"AT_SEQUENCE_NUMBER\","
        "\"SequenceNumber\":\"%s\"}",
        arn, str_at(shard, "ShardId", NULL), first);
    const char *type = str_at(e, "__type", NULL);
    CHECK(type && strstr(type, "TrimmedDataAccessException") != NULL, "%s", type ? type : "(none)");
    json_decref(e);
    json_decref(d);
    json_decref(
        call(db, "PutItem", 1, "{\"TableName\":\"events\",\"Item\":{\"id\":{\"S\":\"d\"}}}"));
    records = all_records(db, arn);
    CHECK(json_array_size(records) == 1, "a write after the trim is read from TRIM_HORIZON: %zu",
          json_array_size(records));
    json_decref(records);

    /* A closed stream stays listed for a day, then goes. */
    json_decref(
        call(db, "UpdateTable", 1,
             "{\"TableName\":\"events\",\"StreamSpecification\":{\"StreamEnabled\":false}}"));
    json_t *l = call(db, "ListStreams", 1, "{}");
    CHECK(json_array_size(json_object_get(l, "Streams")) == 1, "the closed stream is listed");
    json_decref(l);
    stream_trim(db, (double)now + QR_STREAM_RETENTION_S + 60);
    l = call(db, "ListStreams", 1, "{}");
    CHECK(json_array_size(json_object_get(l, "Streams")) == 0, "a day after closing, it is gone");
    json_decref(l);
    json_decref(call(db, "DescribeStream", 0, "{\"StreamArn\":\"%s\"}", arn));
    free(arn);
    qr_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    printf("test_streams: %d passed, %d failed\n", check_count - check_failures, check_failures);
    return check_failures != 0;
}
