/* metrics.c — qr_metrics: a database's metrics in Prometheus's text format (prom.h), and
 * the counters behind its request families (metrics.h).
 *
 * A scrape describes every table once, through DescribeTable's own handler, and hands
 * what it gathered to each family's writer in turn, in the order of the families table
 * below: a new family is one more writer there. It meters no capacity and throttles
 * nothing; it reports what the operations and the engine already know. */
#include "api/metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/prom.h"
#include "ops/ops.h" /* the handlers, and engine_api_state through the engine's interface */

/* ---- the counters ---- */

/* The latency histogram's upper bounds, from 10 µs (an in-process GetItem takes a few)
 * to 10 s, in nanoseconds and as the le label gives them. */
static const uint64_t bound_ns[] = {10000,      25000,      50000,      100000,     250000,
                                    500000,     1000000,    2500000,    5000000,    10000000,
                                    25000000,   50000000,   100000000,  250000000,  500000000,
                                    1000000000, 2500000000, 5000000000, 10000000000};
static const char *const bound_text[] = {"0.00001", "0.000025", "0.00005", "0.0001", "0.00025",
                                         "0.0005",  "0.001",    "0.0025",  "0.005",  "0.01",
                                         "0.025",   "0.05",     "0.1",     "0.25",   "0.5",
                                         "1",       "2.5",      "5",       "10"};
#define NBOUNDS (sizeof bound_ns / sizeof bound_ns[0])
_Static_assert(sizeof bound_text / sizeof bound_text[0] == NBOUNDS, "a label for every bound");

/* Error types counted apart; past that many, the rest count as "other". */
#define MAX_ERROR_TYPES 48

/* One operation's calls: each bucket alone (the last past every bound; their total is
 * the call count) and the time they took, on cache lines of its own, so that threads
 * running different operations do not share one. */
typedef struct op_counts {
    _Alignas(64) uint64_t buckets[NBOUNDS + 1];
    uint64_t sum_ns;
} op_counts;

typedef struct metrics_state {
    op_counts ops[METRICS_MAX_OPS];
    /* Error types in the order first seen (static strings, installed by compare and
     * swap), and each one's count per operation. */
    const char *error_types[MAX_ERROR_TYPES];
    uint64_t errors[MAX_ERROR_TYPES][METRICS_MAX_OPS];
} metrics_state;

uint64_t metrics_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* db's counters, made at its first call; NULL only when out of memory. */
static metrics_state *state_of(qr_db *db)
{
    metrics_state *m = engine_api_state(db);
    if (m) return m;
    m = aligned_alloc(_Alignof(op_counts), sizeof *m);
    if (m == NULL) return NULL;
    memset(m, 0, sizeof *m);
    metrics_state *installed = engine_api_state_set(db, m, free);
    if (installed != m) free(m);
    return installed;
}

/* The slot of error type t, taking a free one for a type not seen before. */
static size_t error_slot(metrics_state *m, const char *t)
{
    for (size_t i = 0; i < MAX_ERROR_TYPES - 1; i++) {
        const char *seen = __atomic_load_n(&m->error_types[i], __ATOMIC_ACQUIRE);
        if (seen == NULL && __atomic_compare_exchange_n(&m->error_types[i], &seen, t, 0,
                                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return i;
        /* seen is now the slot's type, whoever installed it */
        if (seen == t || strcmp(seen, t) == 0) return i;
    }
    return MAX_ERROR_TYPES - 1;
}

void metrics_count(qr_db *db, size_t op, uint64_t ns, const char *error)
{
    metrics_state *m = state_of(db);
    if (m == NULL) return;
    if (op >= METRICS_MAX_OPS) op = METRICS_UNKNOWN_OP;
    size_t b = 0;
    while (b < NBOUNDS && ns > bound_ns[b])
        b++;
    op_counts *c = &m->ops[op];
    __atomic_fetch_add(&c->buckets[b], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->sum_ns, ns, __ATOMIC_RELAXED);
    if (error) __atomic_fetch_add(&m->errors[error_slot(m, error)][op], 1, __ATOMIC_RELAXED);
}

/* ---- a scrape ---- */

/* What the family writers share: the counters and every table's description. */
typedef struct scrape {
    const metrics_state *m;
    json_t **tables; /* DescribeTable's Table of each table, by name */
    size_t ntables;
    /* QuarryIndexPropagation (engine.h: index_stats_fill) of the first table with a global
     * index: the database's, whichever table reports it; NULL when no table has one. */
    const json_t *propagation;
    /* What each table's and global index's capacity meter has counted (none when
     * capacity is off); names borrowed from tables[]. */
    struct scrape_meter {
        const char *table, *index; /* index NULL for the table's own */
        meter_totals totals;
    } * meters;
    size_t nmeters;
} scrape;

static uint64_t load(const uint64_t *v)
{
    return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static const char *op_name(size_t i)
{
    return i == METRICS_UNKNOWN_OP ? "unknown" : call_operation_name(i);
}

/* A snapshot of operation i's buckets; returns the call count. */
static uint64_t op_snapshot(const metrics_state *m, size_t i, uint64_t counts[NBOUNDS + 1])
{
    uint64_t total = 0;
    for (size_t b = 0; b <= NBOUNDS; b++)
        total += counts[b] = load(&m->ops[i].buckets[b]);
    return total;
}

/* The slot after i of the operations to report, the table's and then the unknown names'
 * (METRICS_MAX_OPS past the last): for (i = 0; i < METRICS_MAX_OPS; i = next_op(i)). */
static size_t next_op(size_t i)
{
    if (i + 1 < METRICS_UNKNOWN_OP && call_operation_name(i + 1)) return i + 1;
    return i < METRICS_UNKNOWN_OP ? METRICS_UNKNOWN_OP : METRICS_MAX_OPS;
}

static void requests_total(const scrape *s, prom *p)
{
    prom_family(p, "quarry_requests_total", "counter",
                "Calls of each operation (qr_call), answered with success or error, since the "
                "database was opened.");
    uint64_t counts[NBOUNDS + 1];
    for (size_t i = 0; i < METRICS_MAX_OPS; i = next_op(i)) {
        uint64_t n = op_snapshot(s->m, i, counts);
        prom_label l = {"operation", op_name(i)};
        if (n) prom_sample_u64(p, "quarry_requests_total", &l, 1, n);
    }
}

static void request_errors_total(const scrape *s, prom *p)
{
    prom_family(p, "quarry_request_errors_total", "counter",
                "Calls of each operation answered with an error, by DynamoDB's error type.");
    for (size_t e = 0; e < MAX_ERROR_TYPES; e++) {
        const char *type = e == MAX_ERROR_TYPES - 1
                               ? "other"
                               : __atomic_load_n(&s->m->error_types[e], __ATOMIC_ACQUIRE);
        if (type == NULL) continue;
        for (size_t i = 0; i < METRICS_MAX_OPS; i = next_op(i)) {
            uint64_t n = load(&s->m->errors[e][i]);
            prom_label l[2] = {{"operation", op_name(i)}, {"error", type}};
            if (n) prom_sample_u64(p, "quarry_request_errors_total", l, 2, n);
        }
    }
}

static void request_duration_seconds(const scrape *s, prom *p)
{
    prom_family(p, "quarry_request_duration_seconds", "histogram",
                "Time each call spent in qr_call, from its request's text to its answer's (an "
                "HTTP request's reading, signature and sending are not in it).");
    uint64_t counts[NBOUNDS + 1];
    for (size_t i = 0; i < METRICS_MAX_OPS; i = next_op(i)) {
        if (op_snapshot(s->m, i, counts) == 0) continue;
        uint64_t ns = load(&s->m->ops[i].sum_ns);
        char sum[48];
        snprintf(sum, sizeof sum, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
        prom_label l = {"operation", op_name(i)};
        prom_histogram(p, "quarry_request_duration_seconds", &l, 1, bound_text, NBOUNDS, counts,
                       sum);
    }
}

static void tables(const scrape *s, prom *p)
{
    prom_family(p, "quarry_tables", "gauge", "Tables in the database.");
    prom_sample_u64(p, "quarry_tables", NULL, 0, s->ntables);
}

/* A gauge of each table's integer member (of its description), labelled by table. */
static void table_gauge(const scrape *s, prom *p, const char *name, const char *help,
                        const char *member)
{
    prom_family(p, name, "gauge", help);
    for (size_t t = 0; t < s->ntables; t++) {
        json_t *v = json_object_get(s->tables[t], member);
        prom_label l = {"table", json_string_value(json_object_get(s->tables[t], "TableName"))};
        if (json_is_integer(v) && l.value)
            prom_sample_u64(p, name, &l, 1, (uint64_t)json_integer_value(v));
    }
}

/* The same for each index's member, labelled by table and index. */
static void index_gauge(const scrape *s, prom *p, const char *name, const char *help,
                        const char *member)
{
    static const char *const lists[] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};
    prom_family(p, name, "gauge", help);
    for (size_t t = 0; t < s->ntables; t++)
        for (size_t k = 0; k < 2; k++) {
            size_t i;
            json_t *ix;
            json_array_foreach(json_object_get(s->tables[t], lists[k]), i, ix)
            {
                json_t *v = json_object_get(ix, member);
                prom_label l[2] = {
                    {"table", json_string_value(json_object_get(s->tables[t], "TableName"))},
                    {"index", json_string_value(json_object_get(ix, "IndexName"))}};
                if (json_is_integer(v) && l[0].value && l[1].value)
                    prom_sample_u64(p, name, l, 2, (uint64_t)json_integer_value(v));
            }
        }
}

static void table_items(const scrape *s, prom *p)
{
    table_gauge(s, p, "quarry_table_items", "Items in each table (DescribeTable's ItemCount).",
                "ItemCount");
}

static void table_size_bytes(const scrape *s, prom *p)
{
    table_gauge(s, p, "quarry_table_size_bytes",
                "DynamoDB size of each table's items (DescribeTable's TableSizeBytes).",
                "TableSizeBytes");
}

static void index_items(const scrape *s, prom *p)
{
    index_gauge(s, p, "quarry_index_items",
                "Items in each secondary index (DescribeTable's ItemCount of the index).",
                "ItemCount");
}

static void index_size_bytes(const scrape *s, prom *p)
{
    index_gauge(s, p, "quarry_index_size_bytes",
                "DynamoDB size of each secondary index's items (its IndexSizeBytes).",
                "IndexSizeBytes");
}

/* Global-index propagation is the database's (one log, one worker), reported only while
 * a table has a global index to propagate to. */
static double propagation_member(const scrape *s, const char *member)
{
    return json_number_value(json_object_get(s->propagation, member));
}

static void propagation_pending(const scrape *s, prom *p)
{
    if (s->propagation == NULL) return;
    prom_family(p, "quarry_index_propagation_pending_updates", "gauge",
                "Writes whose global secondary index updates are not applied yet.");
    prom_sample_u64(p, "quarry_index_propagation_pending_updates", NULL, 0,
                    (uint64_t)propagation_member(s, "PendingUpdates"));
    prom_family(p, "quarry_index_propagation_oldest_pending_seconds", "gauge",
                "Age of the oldest write whose global index updates are pending; 0 when none "
                "is.");
    prom_sample_double(p, "quarry_index_propagation_oldest_pending_seconds", NULL, 0,
                       propagation_member(s, "OldestPendingMillis") / 1000.0);
}

static void propagation_applied(const scrape *s, prom *p)
{
    if (s->propagation == NULL) return;
    prom_family(p, "quarry_index_propagation_applied_updates_total", "counter",
                "Writes whose global index updates were applied since the database was opened.");
    prom_sample_u64(p, "quarry_index_propagation_applied_updates_total", NULL, 0,
                    (uint64_t)propagation_member(s, "AppliedUpdates"));
}

static void propagation_lag(const scrape *s, prom *p)
{
    if (s->propagation == NULL) return;
    prom_family(p, "quarry_index_propagation_lag_p50_seconds", "gauge",
                "Median time from a write to its global index update, over the last 1024 "
                "applied.");
    prom_sample_double(p, "quarry_index_propagation_lag_p50_seconds", NULL, 0,
                       propagation_member(s, "LagP50Millis") / 1000.0);
    prom_family(p, "quarry_index_propagation_lag_p99_seconds", "gauge",
                "99th percentile of the time from a write to its global index update, over "
                "the last 1024 applied.");
    prom_sample_double(p, "quarry_index_propagation_lag_p99_seconds", NULL, 0,
                       propagation_member(s, "LagP99Millis") / 1000.0);
}

/* ---- capacity, by CloudWatch's names ---- */

/* The limit-type words of DynamoDB's throttling reasons, by meter_verdict. */
static const char *const verdict_words[] = {
    NULL, "ProvisionedThroughputExceeded", "KeyRangeThroughputExceeded",
    "MaxOnDemandThroughputExceeded", "AccountLimitExceeded"};

static size_t meter_labels(const struct scrape_meter *sm, prom_label *l)
{
    l[0] = (prom_label){"table", sm->table};
    if (sm->index == NULL) return 1;
    l[1] = (prom_label){"index", sm->index};
    return 2;
}

static void consumed_units(const scrape *s, prom *p)
{
    static const char *const names[] = {"quarry_consumed_read_capacity_units_total",
                                        "quarry_consumed_write_capacity_units_total"};
    static const char *const help[] = {
        "Read capacity units consumed by each table and global index (ConsumedReadCapacityUnits).",
        "Write capacity units consumed by each table and global index "
        "(ConsumedWriteCapacityUnits)."};
    for (int w = 0; w < 2; w++) {
        prom_family(p, names[w], "counter", help[w]);
        for (size_t i = 0; i < s->nmeters; i++) {
            prom_label l[2];
            size_t n = meter_labels(&s->meters[i], l);
            prom_sample_double(p, names[w], l, n,
                               w ? s->meters[i].totals.write_units
                                 : s->meters[i].totals.read_units);
        }
    }
}

static void throttle_events(const scrape *s, prom *p)
{
    static const char *const names[] = {"quarry_read_throttle_events_total",
                                        "quarry_write_throttle_events_total"};
    static const char *const help[] = {
        "Reads refused for capacity (ReadThrottleEvents), by the reason's limit type.",
        "Writes refused for capacity (WriteThrottleEvents), by the reason's limit type; a "
        "write a global index refused counts on the index."};
    for (int w = 0; w < 2; w++) {
        prom_family(p, names[w], "counter", help[w]);
        for (size_t i = 0; i < s->nmeters; i++)
            for (int v = METER_PROVISIONED; v <= METER_ACCOUNT; v++) {
                prom_label l[3];
                size_t n = meter_labels(&s->meters[i], l);
                l[n++] = (prom_label){"reason", verdict_words[v]};
                const meter_totals *t = &s->meters[i].totals;
                prom_sample_u64(p, names[w], l, n,
                                w ? t->write_throttles[v] : t->read_throttles[v]);
            }
    }
    prom_family(p, "quarry_throttled_requests_total", "counter",
                "Requests refused for capacity, per table and its indexes (ThrottledRequests).");
    for (size_t i = 0; i < s->nmeters; i++) {
        if (s->meters[i].index) continue;
        uint64_t sum = 0;
        for (size_t j = 0; j < s->nmeters; j++)
            if (strcmp(s->meters[j].table, s->meters[i].table) == 0)
                for (int v = METER_PROVISIONED; v <= METER_ACCOUNT; v++)
                    sum += s->meters[j].totals.read_throttles[v] +
                           s->meters[j].totals.write_throttles[v];
        prom_label l = {"table", s->meters[i].table};
        prom_sample_u64(p, "quarry_throttled_requests_total", &l, 1, sum);
    }
    prom_family(p, "quarry_online_index_throttle_events_total", "counter",
                "Times a global index's backfill waited for its write capacity "
                "(OnlineIndexThrottleEvents).");
    for (size_t i = 0; i < s->nmeters; i++) {
        if (s->meters[i].index == NULL) continue;
        prom_label l[2];
        size_t n = meter_labels(&s->meters[i], l);
        prom_sample_u64(p, "quarry_online_index_throttle_events_total", l, n,
                        s->meters[i].totals.online_index_throttles);
    }
}

static void partitions(const scrape *s, prom *p)
{
    prom_family(p, "quarry_partitions", "gauge",
                "Physical partitions of each table and global index, from throughput, size and "
                "splits for heat.");
    for (size_t i = 0; i < s->nmeters; i++) {
        prom_label l[2];
        size_t n = meter_labels(&s->meters[i], l);
        prom_sample_u64(p, "quarry_partitions", l, n, s->meters[i].totals.partitions);
    }
}

/* The limits each table and global index has: provisioned units, or on-demand maxima
 * (-1: none), as their descriptions give them. */
static void limits(const scrape *s, prom *p)
{
    static const struct {
        const char *name, *holder, *member, *help;
    } gauges[] = {
        {"quarry_provisioned_read_capacity_units", "ProvisionedThroughput", "ReadCapacityUnits",
         "Provisioned read capacity units (0 on demand)."},
        {"quarry_provisioned_write_capacity_units", "ProvisionedThroughput", "WriteCapacityUnits",
         "Provisioned write capacity units (0 on demand)."},
        {"quarry_on_demand_max_read_request_units", "OnDemandThroughput", "MaxReadRequestUnits",
         "OnDemandThroughput's MaxReadRequestUnits (-1: none)."},
        {"quarry_on_demand_max_write_request_units", "OnDemandThroughput", "MaxWriteRequestUnits",
         "OnDemandThroughput's MaxWriteRequestUnits (-1: none)."},
    };
    for (size_t g = 0; g < sizeof gauges / sizeof gauges[0]; g++) {
        prom_family(p, gauges[g].name, "gauge", gauges[g].help);
        for (size_t t = 0; t < s->ntables; t++) {
            const char *name = json_string_value(json_object_get(s->tables[t], "TableName"));
            json_t *v =
                json_object_get(json_object_get(s->tables[t], gauges[g].holder), gauges[g].member);
            prom_label l[2] = {{"table", name}, {"index", NULL}};
            if (name && json_is_number(v))
                prom_sample_double(p, gauges[g].name, l, 1, json_number_value(v));
            size_t i;
            json_t *ix;
            json_array_foreach(json_object_get(s->tables[t], "GlobalSecondaryIndexes"), i, ix)
            {
                v = json_object_get(json_object_get(ix, gauges[g].holder), gauges[g].member);
                l[1].value = json_string_value(json_object_get(ix, "IndexName"));
                if (name && l[1].value && json_is_number(v))
                    prom_sample_double(p, gauges[g].name, l, 2, json_number_value(v));
            }
        }
    }
}

/* The families, in the order they are written. */
typedef void (*family_writer)(const scrape *s, prom *p);
static const family_writer families[] = {
    requests_total,
    request_errors_total,
    request_duration_seconds,
    tables,
    table_items,
    table_size_bytes,
    index_items,
    index_size_bytes,
    propagation_pending,
    propagation_applied,
    propagation_lag,
    consumed_units,
    throttle_events,
    partitions,
    limits,
};

/* Adds the capacity meters of the table described by desc to s (none if it has none). */
static void note_meters(qr_db *db, scrape *s, json_t *desc)
{
    const char *name = json_string_value(json_object_get(desc, "TableName"));
    table *t = name ? catalog_get(db, name) : NULL;
    if (t == NULL) return;
    json_t *gsis = json_object_get(desc, "GlobalSecondaryIndexes");
    for (size_t i = 0; i <= json_array_size(gsis); i++) {
        const char *index =
            i ? json_string_value(json_object_get(json_array_get(gsis, i - 1), "IndexName")) : NULL;
        if (i && index == NULL) continue;
        struct scrape_meter sm = {.table = name, .index = index};
        if (table_capacity(t, index, db, &sm.totals)) continue;
        struct scrape_meter *grown = realloc(s->meters, (s->nmeters + 1) * sizeof *grown);
        if (grown == NULL) break;
        s->meters = grown;
        s->meters[s->nmeters++] = sm;
    }
    catalog_release(db, t);
}

/* Describes every table into s (in name order, as ListTables gives them); a table
 * deleted meanwhile is left out. */
static int describe_tables(qr_db *db, scrape *s)
{
    size_t cap = 0;
    json_t *start = NULL; /* the last name of the previous page */
    for (;;) {
        qr_err err;
        err_init(&err);
        json_t *req = start ? json_pack("{s:O}", "ExclusiveStartTableName", start) : json_object();
        json_t *page = NULL;
        int rc = req ? op_run(db, op_list_tables, req, &page, &err) : -1;
        json_decref(req);
        json_decref(start);
        start = NULL;
        err_clear(&err);
        if (rc) return -1;
        size_t i;
        json_t *name;
        json_array_foreach(json_object_get(page, "TableNames"), i, name)
        {
            json_t *dreq = json_pack("{s:O}", "TableName", name), *answer = NULL;
            err_init(&err);
            if (dreq && op_run(db, op_describe_table, dreq, &answer, &err) == 0) {
                if (s->ntables == cap) {
                    cap = cap ? cap * 2 : 16;
                    json_t **grown = realloc(s->tables, cap * sizeof *grown);
                    if (grown == NULL) {
                        json_decref(answer);
                        json_decref(dreq);
                        json_decref(page);
                        return -1;
                    }
                    s->tables = grown;
                }
                s->tables[s->ntables++] = json_incref(json_object_get(answer, "Table"));
                note_meters(db, s, s->tables[s->ntables - 1]);
            }
            err_clear(&err);
            json_decref(answer);
            json_decref(dreq);
        }
        start = json_incref(json_object_get(page, "LastEvaluatedTableName"));
        json_decref(page);
        if (start == NULL) return 0;
    }
}

int qr_metrics(qr_db *db, char **text, size_t *len)
{
    *text = NULL;
    if (len) *len = 0;
    const metrics_state *m = state_of(db);
    if (m == NULL) return QR_ERR;
    scrape s = {.m = m};
    prom p;
    prom_init(&p);
    int rc = describe_tables(db, &s);
    for (size_t t = 0; t < s.ntables && s.propagation == NULL; t++)
        s.propagation = json_object_get(s.tables[t], "QuarryIndexPropagation");
    for (size_t f = 0; rc == 0 && f < sizeof families / sizeof families[0]; f++)
        families[f](&s, &p);
    if (rc == 0 && !p.failed && p.out.data) {
        size_t n;
        *text = buf_detach(&p.out, &n);
        if (len) *len = n;
    } else {
        rc = -1;
    }
    prom_free(&p);
    for (size_t t = 0; t < s.ntables; t++)
        json_decref(s.tables[t]);
    free(s.tables);
    free(s.meters);
    return rc ? QR_ERR : QR_OK;
}
