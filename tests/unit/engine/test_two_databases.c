/* test_two_databases.c — two databases open in one process share no state: each has its
 * own ClientRequestToken registry (the same token applies in each, and a replay answers
 * from its own database), its own backup ids and listing (a restore gives back its own
 * items), its own resource policies and revision counter, and its own contributor
 * insights settings. Each feature's wire behaviour is the e2e tests' part. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/meta.h"
#include "quarry.h"

#include "call.h"

#define RESTORED_ITEMS 230 /* more than one restore chunk */
#define TABLE_ARN "arn:aws:dynamodb:ddblocal:000000000000:table/tbl"

static qr_db *open_db(char *dir)
{
    qr_db *db = NULL;
    char *err = NULL;
    qr_options o = {.no_sync = 1, .ttl_interval_ms = 3600 * 1000};
    CHECK(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
    CHECK(qr_open(dir, &o, &db, &err) == QR_OK, "open %s: %s", dir, err ? err : "");
    free(err);
    return db;
}

/* Runs op expecting it to fail with error type want. */
static void call_fails(qr_db *db, const char *op, const char *want, const char *body)
{
    qr_response r;
    qr_call(db, op, body, strlen(body), &r);
    CHECK(r.error_type && strcmp(r.error_type, want) == 0, "%s %s: want %s, got %s", op, body, want,
          r.body);
    qr_response_free(&r);
}

static void create_table(qr_db *db)
{
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"tbl\",\"BillingMode\":\"PAY_PER_REQUEST\","
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
                     "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
                     "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"by_g\",\"KeySchema\":["
                     "{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"
                     "\"Projection\":{\"ProjectionType\":\"ALL\"}}]}"));
}

/* Attribute n of item pk of table, or -1 if there is no such item. */
static long number_of(qr_db *db, const char *table, const char *pk)
{
    json_t *got = call(db, "GetItem", 1,
                       "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"%s\"}},"
                       "\"ConsistentRead\":true}",
                       table, pk);
    const char *n =
        json_string_value(json_object_get(json_object_get(json_object_get(got, "Item"), "n"), "N"));
    long v = n ? strtol(n, NULL, 10) : -1;
    json_decref(got);
    return v;
}

/* TransactWriteItems adding 1 to n of item pk, with client request token tok. */
static void add_one(qr_db *db, const char *tok, const char *pk, int expect_ok)
{
    json_decref(call(db, "TransactWriteItems", expect_ok,
                     "{\"ClientRequestToken\":\"%s\",\"TransactItems\":[{\"Update\":{"
                     "\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"%s\"}},"
                     "\"UpdateExpression\":\"ADD n :one\","
                     "\"ExpressionAttributeValues\":{\":one\":{\"N\":\"1\"}}}}]}",
                     tok, pk));
}

static void tokens(qr_db *a, qr_db *b)
{
    /* The very same request and token in both: each applies it once. */
    add_one(a, "tok-same", "same", 1);
    add_one(b, "tok-same", "same", 1);
    CHECK(number_of(a, "tbl", "same") == 1, "A applied its transaction");
    CHECK(number_of(b, "tbl", "same") == 1, "B applied its own, not answered from A's token");
    add_one(a, "tok-same", "same", 1); /* replays, in each */
    add_one(b, "tok-same", "same", 1);
    CHECK(number_of(a, "tbl", "same") == 1, "a replay in A changes nothing");
    CHECK(number_of(b, "tbl", "same") == 1, "a replay in B changes nothing");
    /* One token, different requests: each database knows only its own. */
    add_one(a, "tok-other", "only-a", 1);
    add_one(b, "tok-other", "only-b", 1);
    CHECK(number_of(a, "tbl", "only-a") == 1 && number_of(a, "tbl", "only-b") == -1,
          "A holds its item alone");
    CHECK(number_of(b, "tbl", "only-b") == 1 && number_of(b, "tbl", "only-a") == -1,
          "B holds its item alone");
    add_one(b, "tok-other", "only-b", 1);
    CHECK(number_of(b, "tbl", "only-b") == 1, "B's replay answers from B");
    /* A's request under the token in B is a mismatch with B's, not a replay of A's. */
    call_fails(b, "TransactWriteItems", "IdempotentParameterMismatchException",
               "{\"ClientRequestToken\":\"tok-other\",\"TransactItems\":[{\"Update\":{"
               "\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"only-a\"}},"
               "\"UpdateExpression\":\"ADD n :one\","
               "\"ExpressionAttributeValues\":{\":one\":{\"N\":\"1\"}}}}]}");
    CHECK(number_of(b, "tbl", "only-a") == -1, "the mismatch wrote nothing in B");
}

/* The backup id an ARN ends with (its last 8 hex digits). */
static uint32_t arn_id(const char *arn)
{
    size_t n = arn ? strlen(arn) : 0;
    return n > 8 ? (uint32_t)strtoul(arn + n - 8, NULL, 16) : 0;
}

/* Creates backup name of table tbl; returns its ARN (a copy, or NULL). */
static char *backup(qr_db *db, const char *name)
{
    json_t *got =
        call(db, "CreateBackup", 1, "{\"TableName\":\"tbl\",\"BackupName\":\"%s\"}", name);
    const char *arn =
        json_string_value(json_object_get(json_object_get(got, "BackupDetails"), "BackupArn"));
    char *copy = arn ? strdup(arn) : NULL;
    json_decref(got);
    return copy;
}

/* Checks that db lists exactly the backups named want (in id order). */
static void check_listing(qr_db *db, const char *who, const char *const *want, size_t n)
{
    json_t *got = call(db, "ListBackups", 1, "{}");
    json_t *list = json_object_get(got, "BackupSummaries");
    CHECK(json_array_size(list) == n, "%s lists %zu backups, want %zu", who, json_array_size(list),
          n);
    for (size_t i = 0; i < n && i < json_array_size(list); i++)
        CHECK_STR(json_string_value(json_object_get(json_array_get(list, i), "BackupName")),
                  want[i]);
    json_decref(got);
}

static void backups(qr_db *a, qr_db *b)
{
    /* B's table holds items A's does not, enough for several restore chunks. */
    for (int i = 0; i < RESTORED_ITEMS; i++)
        json_decref(call(b, "PutItem", 1,
                         "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"b%03d\"},"
                         "\"g\":{\"S\":\"grp\"},\"n\":{\"N\":\"%d\"}}}",
                         i, i));
    char *b1 = backup(b, "b-one"), *a1 = backup(a, "a-one"), *b2 = backup(b, "b-two"),
         *a2 = backup(a, "a-two"), *a3 = backup(a, "a-three");
    CHECK(arn_id(a1) == 1 && arn_id(a2) == 2 && arn_id(a3) == 3, "A numbers its own: %s %s %s", a1,
          a2, a3);
    CHECK(arn_id(b1) == 1 && arn_id(b2) == 2, "B numbers its own: %s %s", b1, b2);
    static const char *const in_a[] = {"a-one", "a-two", "a-three"};
    static const char *const in_b[] = {"b-one", "b-two"};
    check_listing(a, "A", in_a, 3);
    check_listing(b, "B", in_b, 2);
    /* Deleting A's backup 2 leaves B's backup 2 alone. */
    json_decref(call(a, "DeleteBackup", 1, "{\"BackupArn\":\"%s\"}", a2));
    static const char *const in_a_after[] = {"a-one", "a-three"};
    check_listing(a, "A after a delete", in_a_after, 2);
    check_listing(b, "B after A's delete", in_b, 2);
    /* A restore in B gives back B's items, global index entries included. */
    json_decref(call(b, "RestoreTableFromBackup", 1,
                     "{\"TargetTableName\":\"restored\",\"BackupArn\":\"%s\"}", b1));
    json_t *count = call(b, "Scan", 1, "{\"TableName\":\"restored\",\"Select\":\"COUNT\"}");
    long items = (long)json_integer_value(json_object_get(count, "Count"));
    json_decref(count);
    /* the items put above, and the two of tokens() */
    CHECK(items == RESTORED_ITEMS + 2, "restored %ld items, want %d", items, RESTORED_ITEMS + 2);
    CHECK(number_of(b, "restored", "b117") == 117, "a restored item");
    json_t *q = call(b, "Query", 1,
                     "{\"TableName\":\"restored\",\"IndexName\":\"by_g\",\"Select\":\"COUNT\","
                     "\"KeyConditionExpression\":\"g = :g\","
                     "\"ExpressionAttributeValues\":{\":g\":{\"S\":\"grp\"}}}");
    CHECK(json_integer_value(json_object_get(q, "Count")) == RESTORED_ITEMS,
          "the restored index holds %lld entries",
          (long long)json_integer_value(json_object_get(q, "Count")));
    json_decref(q);
    call_fails(a, "DescribeTable", "ResourceNotFoundException", "{\"TableName\":\"restored\"}");
    free(a1);
    free(a2);
    free(a3);
    free(b1);
    free(b2);
}

static uint64_t put_policy(qr_db *db, const char *who)
{
    json_t *got = call(db, "PutResourcePolicy", 1,
                       "{\"ResourceArn\":\"" TABLE_ARN "\",\"Policy\":\"{\\\"Version\\\":"
                       "\\\"2012-10-17\\\",\\\"Statement\\\":[{\\\"Sid\\\":\\\"%s\\\","
                       "\\\"Effect\\\":\\\"Deny\\\",\\\"Principal\\\":\\\"*\\\","
                       "\\\"Action\\\":\\\"dynamodb:GetItem\\\",\\\"Resource\\\":\\\"*\\\"}]}\"}",
                       who);
    const char *rev = json_string_value(json_object_get(got, "RevisionId"));
    uint64_t r = rev ? strtoull(rev, NULL, 10) : 0;
    json_decref(got);
    return r;
}

/* Whether db's policy of table tbl mentions word. */
static int policy_has(qr_db *db, const char *word)
{
    json_t *got = call(db, "GetResourcePolicy", 1, "{\"ResourceArn\":\"" TABLE_ARN "\"}");
    const char *text = json_string_value(json_object_get(got, "Policy"));
    int has = text && strstr(text, word) != NULL;
    json_decref(got);
    return has;
}

static void policies(qr_db *a, qr_db *b)
{
    uint64_t ra = put_policy(a, "a1"), rb = put_policy(b, "b1");
    CHECK(ra != 0 && rb != 0, "revisions %" PRIu64 " %" PRIu64, ra, rb);
    CHECK(policy_has(a, "a1"), "A gives its own policy");
    CHECK(policy_has(b, "b1"), "B gives its own policy");
    /* A's revision counter far ahead of the clock leaves B's where the clock is. */
    uint64_t ahead = ra + 1000000000;
    CHECK(meta_revision_next(a, ahead) == ahead, "A's counter moved");
    uint64_t rb2 = put_policy(b, "b2");
    CHECK(rb2 > rb && rb2 < ahead, "B's revision %" PRIu64 " follows B's %" PRIu64 " alone", rb2,
          rb);
    uint64_t ra2 = put_policy(a, "a2");
    CHECK(ra2 == ahead + 1, "A's revision %" PRIu64 " follows A's counter", ra2);
    /* Deleting B's policy leaves A's. */
    json_decref(call(b, "DeleteResourcePolicy", 1, "{\"ResourceArn\":\"" TABLE_ARN "\"}"));
    call_fails(b, "GetResourcePolicy", "PolicyNotFoundException",
               "{\"ResourceArn\":\"" TABLE_ARN "\"}");
    CHECK(policy_has(a, "a2"), "A keeps its policy");
}

static void insights(qr_db *a, qr_db *b)
{
    json_decref(call(a, "UpdateContributorInsights", 1,
                     "{\"TableName\":\"tbl\",\"ContributorInsightsAction\":\"ENABLE\"}"));
    json_t *ga = call(a, "DescribeContributorInsights", 1, "{\"TableName\":\"tbl\"}"),
           *gb = call(b, "DescribeContributorInsights", 1, "{\"TableName\":\"tbl\"}");
    CHECK_STR(json_string_value(json_object_get(ga, "ContributorInsightsStatus")), "ENABLED");
    CHECK_STR(json_string_value(json_object_get(gb, "ContributorInsightsStatus")), "DISABLED");
    json_decref(ga);
    json_decref(gb);
}

int main(void)
{
    char dir_a[] = "/tmp/quarry-two-a-XXXXXX", dir_b[] = "/tmp/quarry-two-b-XXXXXX";
    qr_db *a = open_db(dir_a), *b = open_db(dir_b);
    if (a == NULL || b == NULL) return check_report("test_two_databases");
    create_table(a);
    create_table(b);
    tokens(a, b);
    backups(a, b);
    policies(a, b);
    insights(a, b);
    qr_close(a);
    qr_close(b);
    check_remove_tree(dir_a);
    check_remove_tree(dir_b);
    return check_report("test_two_databases");
}
