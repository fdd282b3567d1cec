/* capacity.c — the engine's capacity meters: one per table and per global index, made
 * from the table's description, asked before each access and charged after it.
 *
 * The rules are capacity/meter.h's; this file knows where accesses happen (txn.c's
 * staging, cursor.c's reads) and turns a refusal into DynamoDB's throttling error. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine_int.h"

/* One meter of a table: its own (index NULL) or a global index's. */
typedef struct table_meter {
    char *index;
    meter *m;
} table_meter;

struct table_meters {
    table_meter *all;
    size_t n;
};

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double capacity_now(qr_db *db)
{
    double advanced = (double)__atomic_load_n(&db->clock_advanced_us, __ATOMIC_RELAXED) / 1e6;
    return (db->opts.capacity_clock == QR_CLOCK_MANUAL ? db->clock_base : monotonic_seconds()) +
           advanced;
}

void qr_clock_advance(qr_db *db, double seconds)
{
    if (seconds > 0)
        __atomic_add_fetch(&db->clock_advanced_us, (int64_t)(seconds * 1e6), __ATOMIC_RELAXED);
}

int engine_clock_manual(const qr_db *db)
{
    return db->opts.capacity_clock == QR_CLOCK_MANUAL;
}

static double number(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* The limits a table (gsi NULL) or one of its global indexes (its description) has. */
static void limits_of(const qr_db *db, const json_t *desc, const json_t *gsi, meter_limits *l)
{
    memset(l, 0, sizeof *l);
    const char *mode = json_string_value(
        json_object_get(json_object_get(desc, "BillingModeSummary"), "BillingMode"));
    l->on_demand = mode && strcmp(mode, "PAY_PER_REQUEST") == 0;
    const json_t *holder = gsi ? gsi : desc;
    json_t *pt = json_object_get(holder, "ProvisionedThroughput");
    l->rcu = number(pt, "ReadCapacityUnits");
    l->wcu = number(pt, "WriteCapacityUnits");
    json_t *odt = json_object_get(holder, "OnDemandThroughput");
    l->max_rru = number(odt, "MaxReadRequestUnits");
    l->max_wru = number(odt, "MaxWriteRequestUnits");
    json_t *warm = json_object_get(holder, "WarmThroughput");
    l->warm_rru = number(warm, "ReadUnitsPerSecond");
    l->warm_wru = number(warm, "WriteUnitsPerSecond");
    l->split_after = db->opts.capacity_split_seconds;
    /* The items of one partition key stay together in a table with local indexes. */
    l->sort_key_splits =
        gsi != NULL || json_array_size(json_object_get(desc, "LocalSecondaryIndexes")) == 0;
    double quota = db->opts.account_table_units;
    l->account_rru = l->account_wru = quota > 0 ? quota : quota < 0 ? 0 : QR_ACCOUNT_TABLE_UNITS;
    if (!gsi) l->bytes = (uint64_t)number(desc, "TableSizeBytes");
}

static meter *find_meter(const table *t, const char *index)
{
    struct table_meters *tm = t->meters;
    if (tm == NULL) return NULL;
    for (size_t i = 0; i < tm->n; i++) {
        const char *name = tm->all[i].index;
        if (index == NULL ? name == NULL : name && strcmp(name, index) == 0) return tm->all[i].m;
    }
    return NULL;
}

static void add_meter(table *t, const char *index, meter *m)
{
    struct table_meters *tm = t->meters;
    table_meter *all = realloc(tm->all, (tm->n + 1) * sizeof *all);
    if (all == NULL) {
        meter_free(m);
        return;
    }
    all[tm->n].index = index ? strdup(index) : NULL;
    all[tm->n].m = m;
    tm->all = all;
    tm->n++;
}

/* Makes or reconfigures the meter of the table (gsi NULL) or of one global index. */
static void follow_one(qr_db *db, table *t, const char *index, const json_t *gsi, double now)
{
    meter_limits l;
    limits_of(db, t->desc, gsi, &l);
    meter *m = find_meter(t, index);
    if (m)
        meter_configure(m, &l, now);
    else if ((m = meter_new(&l, now)) != NULL)
        add_meter(t, index, m);
}

void capacity_follow(qr_db *db, table *t)
{
    if (db->opts.capacity == QR_CAPACITY_OFF) return;
    if (t->meters == NULL && (t->meters = calloc(1, sizeof *t->meters)) == NULL) return;
    double now = capacity_now(db);
    follow_one(db, t, NULL, NULL, now);
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(t->desc, "GlobalSecondaryIndexes"), i, g)
    {
        const char *name = json_string_value(json_object_get(g, "IndexName"));
        if (name) follow_one(db, t, name, g, now);
    }
}

void capacity_forget(table *t)
{
    struct table_meters *tm = t->meters;
    if (tm == NULL) return;
    for (size_t i = 0; i < tm->n; i++) {
        free(tm->all[i].index);
        meter_free(tm->all[i].m);
    }
    free(tm->all);
    free(tm);
    t->meters = NULL;
}

/* The meter an index's accesses draw on: a global index's own, else the table's (local
 * indexes share their table's capacity). */
static meter *meter_for(const table *t, const qr_index *ix)
{
    return find_meter(t, ix && ix->global ? ix->name : NULL);
}

/* DynamoDB's throttling error for a refusal of verdict v. */
static int refuse(const table *t, const qr_index *ix, int write, meter_verdict v, qr_err *err)
{
    int index = ix && ix->global;
    const char *kind = v == METER_PROVISIONED     ? "ProvisionedThroughputExceeded"
                       : v == METER_KEY_RANGE     ? "KeyRangeThroughputExceeded"
                       : v == METER_ON_DEMAND_MAX ? "MaxOnDemandThroughputExceeded"
                                                  : "AccountLimitExceeded";
    char reason[96], resource[1024];
    snprintf(reason, sizeof reason, "%s%s%s", index ? "Index" : "Table", write ? "Write" : "Read",
             kind);
    const char *arn = json_string_value(json_object_get(t->desc, "TableArn"));
    snprintf(resource, sizeof resource, "%s%s%s", arn ? arn : t->name, index ? "/index/" : "",
             index ? ix->name : "");
    if (v == METER_PROVISIONED && index)
        err_set(err, QR_E_THROUGHPUT,
                "The level of configured provisioned throughput for one or more global secondary "
                "indexes of the table was exceeded. Consider increasing your provisioning level "
                "for the under-provisioned global secondary indexes with the UpdateTable API");
    else if (v == METER_PROVISIONED)
        err_set(err, QR_E_THROUGHPUT,
                "The level of configured provisioned throughput for the table was exceeded. "
                "Consider increasing your provisioning level with the UpdateTable API.");
    else if (v == METER_KEY_RANGE)
        err_set(err, QR_E_THROUGHPUT,
                "Throughput exceeds the current capacity of your table or index. DynamoDB is "
                "automatically scaling your table or index so please try again shortly. If "
                "exceptions persist, check if you have a hot key: "
                "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
                "bp-partition-key-design.html");
    else if (v == METER_ON_DEMAND_MAX)
        err_set(err, QR_E_THROTTLING,
                "Throughput exceeds the maximum OnDemandThroughput configured on table or index");
    else
        err_set(err, QR_E_REQUEST_LIMIT,
                "Throughput exceeds the current throughput limit for your account. Please "
                "contact AWS Support at https://aws.amazon.com/support request a limit increase");
    if (err->item == NULL)
        err->item = json_pack("{s:[{s:s,s:s}]}", "ThrottlingReasons", "reason", reason, "resource",
                              resource);
    return -1;
}

/* Whether a refusal of the meters of t is the request's error: under ENFORCE, on a table
 * the DynamoDB API owns. A table a front end owns (CQL's) is metered and its throttles
 * counted and reported, but never refused: Cassandra has no capacity to exceed, so its
 * clients would get OVERLOADED where Cassandra answers. */
static int enforced(const qr_db *db, const table *t)
{
    return db->opts.capacity == QR_CAPACITY_ENFORCE && t->owner == NULL;
}

/* Asks one meter about an access of key (its stored form, or a range's lower bound; NULL
 * for a Scan's); -1 with err set when it refuses and the mode enforces. A refusal is
 * reported to the hook as a throttled access. */
static int admit(qr_db *db, const table *t, const qr_index *ix, int write, int in_partition,
                 uint64_t hash, const buf *key, double now, qr_err *err)
{
    meter *m = meter_for(t, ix);
    if (m == NULL) return 0;
    meter_verdict v = meter_admit(m, write, in_partition, hash, key ? key->data + 15 : NULL,
                                  key && key->len > 15 ? key->len - 15 : 0, now);
    if (v == METER_OK) return 0;
    meter_count_throttle(m, write, v);
    engine_access a = {.table = t->name,
                       .index = ix ? ix->name : NULL,
                       .partition = hash,
                       .write = write,
                       .throttled = 1,
                       .key = key ? key->data : NULL,
                       .key_len = key ? key->len : 0};
    engine_report(db, &a);
    return enforced(db, t) ? refuse(t, ix, write, v, err) : 0;
}

int capacity_admit_read(qr_db *db, const table *t, const qr_index *ix, int in_partition,
                        uint64_t hash, const buf *key, qr_err *err)
{
    if (t->meters == NULL) return 0;
    return admit(db, t, ix, 0, in_partition, hash, key, capacity_now(db), err);
}

/* The admission of a multi-valued index's entry writes, at each entry's partition. */
typedef struct entry_admit {
    qr_db *db;
    const table *t;
    const qr_index *ix;
    double now;
    qr_err *err;
} entry_admit;

static int admit_entry(void *arg, const buf *key, size_t bytes, int put)
{
    entry_admit *a = arg;
    (void)bytes, (void)put;
    return admit(a->db, a->t, a->ix, 1, 1, key_partition_hash(key->data, key->len), key, a->now,
                 a->err);
}

int capacity_admit_write(qr_db *db, const table *t, const buf *key, const json_t *old_item,
                         const json_t *new_item, qr_err *err)
{
    if (t->meters == NULL) return 0;
    double now = capacity_now(db);
    if (admit(db, t, NULL, 1, 1, key_partition_hash(key->data, key->len), key, now, err)) return -1;
    /* A write waits for its global indexes: one whose index, or the index partition its
     * entry moves into or out of, is spent is throttled, and nothing is written. */
    buf k;
    buf_init(&k, 0);
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < t->nindexes; j++) {
        const qr_index *ix = &t->indexes[j];
        int writes = 0;
        if (!ix->global) continue;
        if (index_item_multi(t, ix, old_item) || index_item_multi(t, ix, new_item)) {
            entry_admit a = {db, t, ix, now, err};
            rc = index_multi_writes(t, ix, old_item, new_item, admit_entry, &a, err) ? -1 : 0;
            continue;
        }
        index_write_bytes(t, ix, old_item, new_item, &writes);
        if (writes == 0) continue;
        const json_t *items[2] = {old_item, new_item};
        for (int i = 0; rc == 0 && i < 2; i++) {
            qr_err e;
            err_init(&e);
            buf_reset(&k);
            if (items[i] && index_entry_key(t, ix, items[i], &k, &e) == 1)
                rc = admit(db, t, ix, 1, 1, key_partition_hash(k.data, k.len), &k, now, err);
            err_clear(&e);
        }
    }
    buf_free(&k);
    return rc;
}

void capacity_charge(qr_db *db, const table *t, const qr_index *ix, int write, const char *key,
                     size_t key_len, double units)
{
    meter *m = t->meters ? meter_for(t, ix) : NULL;
    if (m == NULL) return;
    double now = capacity_now(db);
    if (key)
        meter_charge_key(m, write, key_partition_hash(key, key_len), key_len > 15 ? key + 15 : NULL,
                         key_len > 15 ? key_len - 15 : 0, units, now);
    else
        meter_charge(m, write, units, now);
}

void capacity_charge_partition(qr_db *db, const table *t, const qr_index *ix, int write,
                               const char *key, size_t key_len, double units)
{
    meter *m = t->meters ? meter_for(t, ix) : NULL;
    if (m)
        meter_charge_partition(m, write, key_partition_hash(key, key_len),
                               key_len > 15 ? key + 15 : NULL, key_len > 15 ? key_len - 15 : 0,
                               units, capacity_now(db));
}

void capacity_charge_hash(qr_db *db, const table *t, const qr_index *ix, int write, uint64_t hash,
                          double units)
{
    meter *m = t->meters ? meter_for(t, ix) : NULL;
    if (m) meter_charge_key(m, write, hash, NULL, 0, units, capacity_now(db));
}

int capacity_sort_key_split(const table *t, const qr_index *ix, uint64_t hash)
{
    meter *m = t->meters ? meter_for(t, ix) : NULL;
    return m != NULL && meter_sort_key_split(m, hash);
}

int capacity_backfill_spent(qr_db *db, const table *t, const qr_index *ix)
{
    meter *m = t->meters ? meter_for(t, ix) : NULL;
    if (m == NULL || meter_admit(m, 1, 0, 0, NULL, 0, capacity_now(db)) == METER_OK) return 0;
    meter_count_online_throttle(m);
    return enforced(db, t);
}

int table_capacity(const table *t, const char *index, qr_db *db, meter_totals *out)
{
    meter *m = find_meter(t, index);
    if (m == NULL) return -1;
    meter_totals_get(m, capacity_now(db), out);
    return 0;
}
