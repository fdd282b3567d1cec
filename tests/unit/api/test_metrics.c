/* test_metrics.c — qr_metrics and the counting behind it: per-operation counts, errors
 * and latency histograms (cumulative, ending in +Inf, _count equal to it), the table
 * and index gauges and the propagation families, counts exact under threads (TSan's
 * build checks that counting races with nothing), two databases counting apart, and
 * the text writer's escaping. The HTTP side, parsed by Prometheus's own parser, is
 * tests/server/test_metrics.py's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/prom.h"
#include "quarry.h"

#include "call.h"

#define THREADS 4
#define CALLS_PER_THREAD 500

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

static char *metrics(qr_db *db)
{
    char *text = NULL;
    size_t len = 0;
    CHECK(qr_metrics(db, &text, &len) == QR_OK, "qr_metrics failed");
    CHECK(text && strlen(text) == len, "length %zu", len);
    return text ? text : strdup("");
}

/* The value of the sample whose name and labels are exactly series; -1 if none. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        if (strncmp(line, series, n) == 0 && line[n] == ' ') return strtod(line + n + 1, NULL);
    return -1;
}

/* Whether the text has a line beginning with prefix. */
static int has_line(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        if (strncmp(line, prefix, n) == 0) return 1;
    return 0;
}

/* Checks the histogram series of op: buckets never fall, the last is +Inf, and _count
 * equals it; returns the count. */
static double histogram_count(const char *text, const char *op)
{
    char prefix[128];
    int n = snprintf(prefix, sizeof prefix,
                     "quarry_request_duration_seconds_bucket{operation=\"%s\",le=\"", op);
    double last = 0, inf = -1;
    int buckets = 0;
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, prefix, (size_t)n) != 0) continue;
        const char *v = strstr(line, "} ");
        double got = v ? strtod(v + 2, NULL) : -1;
        CHECK(got >= last, "%s: a bucket fell from %g to %g", op, last, got);
        last = got;
        buckets++;
        if (strncmp(line + n, "+Inf\"", 5) == 0) inf = got;
    }
    CHECK(buckets == 20, "%s: %d buckets", op, buckets);
    snprintf(prefix, sizeof prefix, "quarry_request_duration_seconds_count{operation=\"%s\"}", op);
    double count = sample(text, prefix);
    CHECK(count == inf && inf == last, "%s: _count %g, +Inf %g, last %g", op, count, inf, last);
    snprintf(prefix, sizeof prefix, "quarry_request_duration_seconds_sum{operation=\"%s\"}", op);
    CHECK(sample(text, prefix) > 0, "%s: no time summed", op);
    return count;
}

static void create_table(qr_db *db)
{
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"tbl\",\"BillingMode\":\"PAY_PER_REQUEST\","
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
                     "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                     "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"by_g\",\"KeySchema\":["
                     "{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"
                     "\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
                     "\"LocalSecondaryIndexes\":[{\"IndexName\":\"by_g_local\",\"KeySchema\":["
                     "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"g\",\"KeyType\":\"RANGE\"}],"
                     "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}"));
}

static void test_counts_and_gauges(void)
{
    char dir[] = "/tmp/quarry-metrics-XXXXXX";
    qr_db *db = open_db(dir);
    char *text = metrics(db);
    /* Before any call: the families are there, with no samples but the table count. */
    CHECK(has_line(text, "# TYPE quarry_requests_total counter"), "%s", text);
    CHECK(has_line(text, "# TYPE quarry_request_duration_seconds histogram"), "%s", text);
    CHECK(sample(text, "quarry_tables") == 0, "%s", text);
    CHECK(!has_line(text, "quarry_requests_total{"), "%s", text);
    CHECK(!has_line(text, "# TYPE quarry_index_propagation"), "no global index yet: %s", text);
    free(text);

    create_table(db);
    for (int i = 0; i < 10; i++)
        json_decref(
            call(db, "PutItem", 1,
                 "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"%d\"},"
                 "\"g\":{\"S\":\"g%d\"}}}",
                 i, i % 3));
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"q\"},\"sk\":{\"S\":\"x\"}}}"));
    for (int i = 0; i < 3; i++)
        json_decref(
            call(db, "GetItem", 1,
                 "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}}"));
    json_decref(call(db, "GetItem", 0, "{\"TableName\":\"nope\",\"Key\":{\"pk\":{\"S\":\"p\"}}}"));
    json_decref(call(db, "GetItem", 0, "{\"TableName\":\"nope\",\"Key\":{\"pk\":{\"S\":\"p\"}}}"));
    json_decref(call(db, "PutItem", 0, "{\"TableName\":\"tbl\"}"));
    json_decref(call(db, "NoSuchOperation", 0, "{}"));
    CHECK(qr_wait_indexes(db, 10000) == QR_OK, "indexes did not drain");

    text = metrics(db);
    CHECK(sample(text, "quarry_requests_total{operation=\"CreateTable\"}") == 1, "%s", text);
    CHECK(sample(text, "quarry_requests_total{operation=\"PutItem\"}") == 12, "%s", text);
    CHECK(sample(text, "quarry_requests_total{operation=\"GetItem\"}") == 5, "%s", text);
    CHECK(sample(text, "quarry_requests_total{operation=\"unknown\"}") == 1, "%s", text);
    CHECK(sample(text, "quarry_requests_total{operation=\"Query\"}") == -1, "never called: %s",
          text);
    CHECK(sample(text, "quarry_request_errors_total{operation=\"GetItem\",error="
                       "\"ResourceNotFoundException\"}") == 2,
          "%s", text);
    CHECK(sample(
              text,
              "quarry_request_errors_total{operation=\"PutItem\",error=\"ValidationException\"}") ==
              1,
          "%s", text);
    CHECK(sample(text, "quarry_request_errors_total{operation=\"unknown\",error="
                       "\"UnknownOperationException\"}") == 1,
          "%s", text);
    CHECK(histogram_count(text, "PutItem") == 12, "PutItem's histogram");
    CHECK(histogram_count(text, "GetItem") == 5, "GetItem's histogram");

    CHECK(sample(text, "quarry_tables") == 1, "%s", text);
    CHECK(sample(text, "quarry_table_items{table=\"tbl\"}") == 11, "%s", text);
    CHECK(sample(text, "quarry_table_size_bytes{table=\"tbl\"}") > 0, "%s", text);
    CHECK(sample(text, "quarry_index_items{table=\"tbl\",index=\"by_g\"}") == 10, "%s", text);
    CHECK(sample(text, "quarry_index_items{table=\"tbl\",index=\"by_g_local\"}") == 10, "%s", text);
    CHECK(sample(text, "quarry_index_size_bytes{table=\"tbl\",index=\"by_g\"}") > 0, "%s", text);
    CHECK(sample(text, "quarry_index_propagation_pending_updates") == 0, "%s", text);
    CHECK(sample(text, "quarry_index_propagation_oldest_pending_seconds") == 0, "%s", text);
    CHECK(sample(text, "quarry_index_propagation_applied_updates_total") == 10, "%s", text);
    CHECK(sample(text, "quarry_index_propagation_lag_p99_seconds") >= 0, "%s", text);
    CHECK(text[strlen(text) - 1] == '\n', "the text ends its last line");
    free(text);
    qr_close(db);
    check_remove_tree(dir);
}

typedef struct worker {
    qr_db *db;
    int failures;
} worker;

static void *get_items(void *arg)
{
    worker *w = arg;
    const char *body =
        "{\"TableName\":\"tbl\",\"Key\":{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}}";
    for (int i = 0; i < CALLS_PER_THREAD; i++) {
        qr_response r;
        if (qr_call(w->db, "GetItem", body, strlen(body), &r) != QR_OK) w->failures++;
        qr_response_free(&r);
        if (i % 100 == 0) { /* a scrape while others count */
            char *text = NULL;
            if (qr_metrics(w->db, &text, NULL) != QR_OK) w->failures++;
            free(text);
        }
    }
    return NULL;
}

/* Threads counting at once lose no call; a second database counts none of them. */
static void test_threads_and_two_databases(void)
{
    char dir[] = "/tmp/quarry-metrics-XXXXXX", dir2[] = "/tmp/quarry-metrics-XXXXXX";
    qr_db *db = open_db(dir), *other = open_db(dir2);
    create_table(db);
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"tbl\",\"Item\":{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}}"));
    json_decref(call(other, "ListTables", 1, "{}"));
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.db = db};
        pthread_create(&th[i], NULL, get_items, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK(w[i].failures == 0, "thread %d: %d failures", i, w[i].failures);
    }
    char *text = metrics(db);
    CHECK(sample(text, "quarry_requests_total{operation=\"GetItem\"}") ==
              THREADS * CALLS_PER_THREAD,
          "%s", text);
    CHECK(histogram_count(text, "GetItem") == THREADS * CALLS_PER_THREAD, "GetItem's histogram");
    free(text);
    text = metrics(other);
    CHECK(sample(text, "quarry_requests_total{operation=\"ListTables\"}") == 1, "%s", text);
    CHECK(sample(text, "quarry_requests_total{operation=\"GetItem\"}") == -1, "%s", text);
    CHECK(sample(text, "quarry_tables") == 0, "%s", text);
    free(text);
    qr_close(other);
    qr_close(db);
    check_remove_tree(dir);
    check_remove_tree(dir2);
}

static void test_escaping(void)
{
    prom p;
    prom_init(&p);
    prom_family(&p, "x_total", "counter", "help with a \\ and a\nline feed \"quoted\"");
    prom_label l[2] = {{"a", "quote \" backslash \\ line\nfeed"}, {"b", "plain"}};
    prom_sample_u64(&p, "x_total", l, 2, 7);
    prom_sample_double(&p, "y", NULL, 0, 0.1);
    prom_sample_double(&p, "y", NULL, 0, 1.0 / 3.0);
    CHECK_STR(p.out.data, "# HELP x_total help with a \\\\ and a\\nline feed \"quoted\"\n"
                          "# TYPE x_total counter\n"
                          "x_total{a=\"quote \\\" backslash \\\\ line\\nfeed\",b=\"plain\"} 7\n"
                          "y 0.1\n"
                          "y 0.33333333333333331\n");
    prom_free(&p);
    prom_init(&p);
    const char *le[2] = {"0.5", "1"};
    uint64_t counts[3] = {2, 0, 3};
    prom_histogram(&p, "h_seconds", NULL, 0, le, 2, counts, "4.25");
    CHECK_STR(p.out.data, "h_seconds_bucket{le=\"0.5\"} 2\n"
                          "h_seconds_bucket{le=\"1\"} 2\n"
                          "h_seconds_bucket{le=\"+Inf\"} 5\n"
                          "h_seconds_sum 4.25\n"
                          "h_seconds_count 5\n");
    prom_free(&p);
}

int main(void)
{
    test_escaping();
    test_counts_and_gauges();
    test_threads_and_two_databases();
    return check_report("test_metrics");
}
