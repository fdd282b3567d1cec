/* test_hotkeys.c — contributor insights counting for real, through qr_call on a manual
 * capacity clock: nothing is counted until UpdateContributorInsights enables it; then a
 * skewed load names its hot partition key, its hot item, its throttled key and its hot
 * global-index key in GetInsightRuleReport, with counts within the summary's bound; the
 * THROTTLED_KEYS mode keeps only throttled rules; disabling stops it, a reopened database
 * follows the stored setting, the window forgets old traffic, four threads count exactly,
 * and QuarryLargeItemCollections lists a partition above a threshold. */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h" /* engine_watched */
#include "quarry.h"

#include "call.h"

static qr_db *open_db(const char *dir)
{
    qr_db *db = NULL;
    char *err = NULL;
    qr_options o = {.no_sync = 1, .capacity_clock = QR_CLOCK_MANUAL};
    CHECK(qr_open(dir, &o, &db, &err) == QR_OK, "open %s: %s", dir, err ? err : "");
    free(err);
    return db;
}

static void put(qr_db *db, const char *table, const char *pk, const char *sk, const char *g)
{
    char gpart[128] = "";
    if (g) snprintf(gpart, sizeof gpart, ",\"g\":{\"S\":\"%s\"}", g);
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"%s\"}%s}}",
             table, pk, sk, gpart));
}

/* The rule of kind ("PKC", …) that DescribeContributorInsights names for table (index). */
static void rule_name(qr_db *db, const char *table, const char *index, const char *kind, char *out,
                      size_t cap)
{
    char ix[128] = "";
    if (index) snprintf(ix, sizeof ix, ",\"IndexName\":\"%s\"", index);
    json_t *d = call(db, "DescribeContributorInsights", 1, "{\"TableName\":\"%s\"%s}", table, ix);
    size_t i;
    json_t *r;
    out[0] = '\0';
    json_array_foreach(json_object_get(d, "ContributorInsightsRuleList"), i, r)
    {
        if (strstr(json_string_value(r), kind)) snprintf(out, cap, "%s", json_string_value(r));
    }
    json_decref(d);
}

static json_t *report(qr_db *db, const char *rule, int expect_ok)
{
    return call(db, "GetInsightRuleReport", expect_ok,
                "{\"RuleName\":\"%s\",\"Period\":60,\"MaxContributorCount\":5,"
                "\"Metrics\":[\"Sum\",\"UniqueContributors\"]}",
                rule);
}

/* The first contributor's keys joined by '/', and its value. */
static double top_of(json_t *rep, char *keys, size_t cap)
{
    json_t *c = json_array_get(json_object_get(rep, "Contributors"), 0);
    size_t at = 0, i;
    json_t *k;
    keys[0] = '\0';
    json_array_foreach(json_object_get(c, "Keys"), i, k) at +=
        (size_t)snprintf(keys + at, cap - at, "%s%s", i ? "/" : "", json_string_value(k));
    return json_number_value(json_object_get(c, "ApproximateAggregateValue"));
}

static void enable(qr_db *db, const char *table, const char *index, const char *mode)
{
    char ix[128] = "", md[128] = "";
    if (index) snprintf(ix, sizeof ix, ",\"IndexName\":\"%s\"", index);
    if (mode) snprintf(md, sizeof md, ",\"ContributorInsightsMode\":\"%s\"", mode);
    json_decref(call(db, "UpdateContributorInsights", 1,
                     "{\"TableName\":\"%s\"%s,\"ContributorInsightsAction\":\"ENABLE\"%s}", table,
                     ix, md));
}

static void test_skewed(qr_db *db)
{
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"hot_t\",\"BillingMode\":\"PAY_PER_REQUEST\","
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
                     "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                     "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"by_g\",\"KeySchema\":["
                     "{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"
                     "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}"));
    char rule[512], keys[256];
    /* Before insights are on, there is no rule to report. */
    put(db, "hot_t", "early", "0", NULL);
    json_decref(call(db, "GetInsightRuleReport", 0,
                     "{\"RuleName\":\"DynamoDBContributorInsights-PKC-hot_t-1\",\"Period\":60}"));
    enable(db, "hot_t", NULL, NULL);
    enable(db, "hot_t", "by_g", NULL);
    rule_name(db, "hot_t", NULL, "-PKC-", rule, sizeof rule);
    CHECK(rule[0], "Describe names a PKC rule");

    /* 600 writes to partition "hot" (300 items, each twice), 400 to distinct cold ones;
     * item hot/s7 is read 200 times; the index key "hg" has the hot items. */
    char sk[32], pk[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 300; i++) {
            snprintf(sk, sizeof sk, "s%d", i);
            put(db, "hot_t", "hot", sk, i % 2 ? "hg" : NULL);
        }
    for (int i = 0; i < 400; i++) {
        snprintf(pk, sizeof pk, "cold%d", i);
        put(db, "hot_t", pk, "0", pk);
    }
    for (int i = 0; i < 200; i++)
        json_decref(call(
            db, "GetItem", 1,
            "{\"TableName\":\"hot_t\",\"Key\":{\"pk\":{\"S\":\"hot\"},\"sk\":{\"S\":\"s7\"}}}"));
    json_t *rep = report(db, rule, 1);
    double v = top_of(rep, keys, sizeof keys);
    CHECK_STR(keys, "hot");
    /* 800 accesses of "hot" in 1,200 (the early write was not counted): within N/k. */
    CHECK(v >= 800 && v <= 800 + 1200.0 / 64, "hot counted %g", v);
    CHECK(json_number_value(json_object_get(rep, "AggregateValue")) == 1200, "total %g",
          json_number_value(json_object_get(rep, "AggregateValue")));
    CHECK_STR(json_string_value(json_array_get(json_object_get(rep, "KeyLabels"), 0)), "pk");
    CHECK_STR(json_string_value(json_object_get(rep, "AggregationStatistic")), "Count");
    json_t *c0 = json_array_get(json_object_get(rep, "Contributors"), 0);
    CHECK(json_number_value(json_object_get(c0, "QuarryWriteUnits")) >= 1 &&
              json_number_value(json_object_get(c0, "QuarryReadUnits")) > 0,
          "units are kept beside the counts");
    json_t *dp = json_array_get(json_object_get(c0, "Datapoints"), 0);
    CHECK(dp && json_number_value(json_object_get(dp, "ApproximateValue")) == v,
          "one period holds the whole load");
    json_t *md = json_array(), *m;
    size_t i;
    double sum = 0;
    json_array_foreach(json_object_get(rep, "MetricDatapoints"), i, m) sum +=
        json_number_value(json_object_get(m, "Sum"));
    CHECK(sum == 1200, "MetricDatapoints' Sum %g", sum);
    json_decref(md);
    CHECK(json_array_size(json_object_get(rep, "Contributors")) == 5, "MaxContributorCount");
    json_decref(rep);

    rule_name(db, "hot_t", NULL, "-SKC-", rule, sizeof rule);
    rep = report(db, rule, 1);
    v = top_of(rep, keys, sizeof keys);
    CHECK_STR(keys, "hot/s7");
    CHECK(v >= 202, "hot/s7 counted %g", v);
    CHECK_STR(json_string_value(json_array_get(json_object_get(rep, "KeyLabels"), 1)), "sk");
    json_decref(rep);

    rule_name(db, "hot_t", "by_g", "-PKC-", rule, sizeof rule);
    CHECK(strstr(rule, "-PKC-hot_t-by_g-") != NULL, "the index rule %s", rule);
    rep = report(db, rule, 1);
    v = top_of(rep, keys, sizeof keys);
    CHECK_STR(keys, "hg");
    /* 150 items put twice: the second put leaves their entries as they are, unwritten. */
    CHECK(v == 150, "hg counted %g", v);
    json_decref(rep);

    /* Old traffic leaves the window. */
    qr_clock_advance(db, 1000);
    rule_name(db, "hot_t", NULL, "-PKC-", rule, sizeof rule);
    rep = report(db, rule, 1);
    CHECK(json_array_size(json_object_get(rep, "Contributors")) == 0, "a quarter hour later");
    json_decref(rep);

    /* A rule Describe does not name (an unknown kind, or a past timestamp) is unknown. */
    char bad[600];
    snprintf(bad, sizeof bad, "%.*s-1", (int)(strrchr(rule, '-') - rule), rule);
    json_decref(call(db, "GetInsightRuleReport", 0, "{\"RuleName\":\"%s\"}", bad));

    /* Disabled, the rules go, and so does the counting. */
    json_decref(call(db, "UpdateContributorInsights", 1,
                     "{\"TableName\":\"hot_t\",\"ContributorInsightsAction\":\"DISABLE\"}"));
    json_decref(call(db, "GetInsightRuleReport", 0, "{\"RuleName\":\"%s\"}", rule));

    /* A table deleted with its index's insights on: its counts go with it (nothing is
     * counted any more), and a new table of the name starts with none. */
    rule_name(db, "hot_t", "by_g", "-PKC-", rule, sizeof rule);
    CHECK(engine_watched(db), "the index's insights count accesses");
    json_decref(call(db, "DeleteTable", 1, "{\"TableName\":\"hot_t\"}"));
    CHECK(!engine_watched(db), "a deleted table's insights still count accesses");
    json_decref(call(db, "GetInsightRuleReport", 0, "{\"RuleName\":\"%s\"}", rule));
    json_decref(
        call(db, "CreateTable", 1,
             "{\"TableName\":\"hot_t\",\"BillingMode\":\"PAY_PER_REQUEST\","
             "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
             "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}"));
    enable(db, "hot_t", NULL, NULL);
    json_decref(
        call(db, "PutItem", 1, "{\"TableName\":\"hot_t\",\"Item\":{\"pk\":{\"S\":\"fresh\"}}}"));
    rule_name(db, "hot_t", NULL, "-PKC-", rule, sizeof rule);
    rep = report(db, rule, 1);
    CHECK(top_of(rep, keys, sizeof keys) == 1 &&
              json_number_value(json_object_get(rep, "AggregateValue")) == 1,
          "the new table counts from nothing");
    CHECK_STR(keys, "fresh");
    json_decref(rep);
}

static void test_throttled(qr_db *db)
{
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"hot_p\",\"ProvisionedThroughput\":{\"ReadCapacityUnits\":5,"
                     "\"WriteCapacityUnits\":5},\"AttributeDefinitions\":[{\"AttributeName\":"
                     "\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":"
                     "\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]}"));
    enable(db, "hot_p", NULL, "THROTTLED_KEYS");
    char rule[512], keys[256], sk[32];
    rule_name(db, "hot_p", NULL, "-PKC-", rule, sizeof rule);
    CHECK(rule[0] == '\0', "THROTTLED_KEYS names no accessed rule");
    rule_name(db, "hot_p", NULL, "-PKT-", rule, sizeof rule);
    /* The partition serves 1,000 WCU in a second: the rest are refused. */
    int refused = 0;
    for (int i = 0; i < 1200; i++) {
        snprintf(sk, sizeof sk, "%d", i);
        char body[256];
        snprintf(
            body, sizeof body,
            "{\"TableName\":\"hot_p\",\"Item\":{\"pk\":{\"S\":\"burst\"},\"sk\":{\"S\":\"%s\"}}}",
            sk);
        qr_response r;
        refused += qr_call(db, "PutItem", body, strlen(body), &r) != QR_OK;
        qr_response_free(&r);
    }
    CHECK(refused == 200, "%d refused", refused);
    json_t *rep = report(db, rule, 1);
    double v = top_of(rep, keys, sizeof keys);
    CHECK_STR(keys, "burst");
    CHECK(v == 200, "burst throttled %g times", v);
    json_decref(rep);
    rule_name(db, "hot_p", NULL, "-SKT-", rule, sizeof rule);
    rep = report(db, rule, 1);
    CHECK(json_number_value(json_object_get(rep, "AggregateValue")) == 200, "SKT total");
    json_decref(rep);
}

typedef struct writer {
    qr_db *db;
    int n;
    int failed; /* counted here, not by CHECK, which is not for threads */
} writer;

static void *write_hot(void *arg)
{
    writer *w = arg;
    char body[256];
    for (int i = 0; i < 500; i++) {
        snprintf(body, sizeof body,
                 "{\"TableName\":\"hot_c\",\"Item\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":"
                 "\"w%d-%d\"}}}",
                 w->n % 2 ? "even" : "odd", w->n, i);
        qr_response r;
        w->failed += qr_call(w->db, "PutItem", body, strlen(body), &r) != QR_OK;
        qr_response_free(&r);
    }
    return NULL;
}

static void test_threads(qr_db *db)
{
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"hot_c\",\"BillingMode\":\"PAY_PER_REQUEST\","
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],"
                     "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]}"));
    enable(db, "hot_c", NULL, NULL);
    pthread_t th[4];
    writer w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (writer){db, i, 0};
        pthread_create(&th[i], NULL, write_hot, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(w[i].failed == 0, "writer %d: %d puts failed", i, w[i].failed);
    }
    char rule[512], keys[256];
    rule_name(db, "hot_c", NULL, "-PKC-", rule, sizeof rule);
    json_t *rep = report(db, rule, 1);
    CHECK(json_number_value(json_object_get(rep, "AggregateValue")) == 2000, "2,000 counted");
    /* Two keys in 64 counters: exact. */
    CHECK(top_of(rep, keys, sizeof keys) == 1000, "each key 1,000 times");
    json_decref(rep);

    /* The partitions above 999 items are listed, largest first. */
    json_t *large = call(db, "QuarryLargeItemCollections", 1,
                         "{\"TableName\":\"hot_c\",\"MinItemCount\":1000}");
    json_t *l = json_object_get(large, "LargeItemCollections");
    CHECK(json_array_size(l) == 2, "two large collections");
    json_t *first = json_array_get(l, 0);
    CHECK(json_integer_value(json_object_get(first, "ItemCount")) == 1000 &&
              json_integer_value(json_object_get(first, "SizeBytes")) > 1000,
          "counted: %s", json_dumps(first, 0));
    json_decref(large);
    large = call(db, "QuarryLargeItemCollections", 1, "{\"TableName\":\"hot_c\"}");
    CHECK(json_array_size(json_object_get(large, "LargeItemCollections")) == 0,
          "none above the default thresholds");
    json_decref(large);
}

int main(void)
{
    char dir[] = "/tmp/quarry_hotkeys_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    qr_db *db = open_db(dir);
    test_skewed(db);
    test_throttled(db);
    test_threads(db);
    qr_close(db);

    /* Reopened, the stored setting counts again. */
    db = open_db(dir);
    char rule[512], keys[256];
    put(db, "hot_c", "again", "1", NULL);
    rule_name(db, "hot_c", NULL, "-PKC-", rule, sizeof rule);
    json_t *rep = report(db, rule, 1);
    CHECK(top_of(rep, keys, sizeof keys) == 1, "counted after reopening");
    CHECK_STR(keys, "again");
    json_decref(rep);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_hotkeys");
}
