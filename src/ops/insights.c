/* insights.c — DescribeContributorInsights, UpdateContributorInsights and
 * ListContributorInsights: the contributor insights setting of a table or of one of its
 * global indexes (kept by the engine, meta.h), which the engine's hot-key counts follow
 * (engine.h, hotkeys_*); and the reports CloudWatch would give of them: GetInsightRuleReport
 * for one of the rules Describe names, and QuarryLargeItemCollections. Enabling and
 * disabling take effect at once (Update answers ENABLING or DISABLING, as DynamoDB does,
 * and the next Describe shows ENABLED or DISABLED). Counting is the engine's part. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/ops.h"

#define KIND META_SETTING_INSIGHTS

static const char *const modes[] = {"ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS", NULL};

/* The table (held) and, if IndexName is given, that global secondary index's name. */
static int target(qr_db *db, json_t *req, table **t, const char **index, qr_err *err)
{
    /* IndexName's length, with the operations' own message for it, is judged by the shape
     * checker (tools/shapes_overrides.json). */
    if (param_string(req, "IndexName", index, err)) return -1;
    json_t *name = json_object_get(req, "TableName");
    if (param_check_table_name(name, "tableName", err)) return -1;
    if ((*t = catalog_get(db, json_string_value(name))) == NULL)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_TABLE_NOT_FOUND, json_string_value(name));
    if (*index) {
        const qr_index *ix = table_index(*t, *index);
        if (ix == NULL || !ix->global) {
            err_set(err, QR_E_NOT_FOUND, QR_MSG_INDEX_NOT_FOUND, *index, table_name(*t));
            catalog_release(db, *t);
            return -1;
        }
    }
    return 0;
}

/* The rules DynamoDB makes for a table or index, named after it and the time insights
 * were enabled: partition keys (and sort keys, when there are) accessed (PKC, SKC; not
 * in THROTTLED_KEYS mode) and throttled (PKT, SKT). */
static json_t *rules(const table *t, const char *index, const json_t *s)
{
    const qr_index *ix = index ? table_index(t, index) : NULL;
    int has_sk = ix ? ix->nsk > 0 : table_sk(t)->name != NULL;
    int accessed = strcmp(json_string_value(json_object_get(s, "Mode")), "THROTTLED_KEYS") != 0;
    long long since = (long long)(json_number_value(json_object_get(s, "Since")) * 1000);
    static const char *const kinds[] = {"PKC", "SKC", "PKT", "SKT"};
    json_t *list = json_array();
    char rule[600];
    for (int i = 0; i < 4; i++) {
        if ((kinds[i][0] == 'S' && !has_sk) || (kinds[i][2] == 'C' && !accessed)) continue;
        snprintf(rule, sizeof rule, "DynamoDBContributorInsights-%s-%s%s%s-%lld", kinds[i],
                 table_name(t), index ? "-" : "", index ? index : "", since);
        json_array_append_new(list, json_string(rule));
    }
    return list;
}

/* A setting record: {"Enabled": bool, "Since": when enabled, "Updated": when last changed,
 * "Mode": mode}. None until insights were first enabled. */
static int is_enabled(const json_t *s)
{
    return json_is_true(json_object_get(s, "Enabled"));
}

int op_describe_contributor_insights(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t;
    const char *index;
    json_t *s;
    if (target(db, req, &t, &index, err)) return -1;
    if (meta_setting_get(db, t, KIND, index, &s, err)) {
        catalog_release(db, t);
        return -1;
    }
    c->answer = json_pack("{s:s}", "TableName", table_name(t));
    if (index) json_object_set_new(c->answer, "IndexName", json_string(index));
    /* A table never enabled shows its status alone; once enabled, when it last changed and
     * the mode stay shown. */
    if (is_enabled(s))
        json_object_set_new(c->answer, "ContributorInsightsRuleList", rules(t, index, s));
    json_object_set_new(c->answer, "ContributorInsightsStatus",
                        json_string(is_enabled(s) ? "ENABLED" : "DISABLED"));
    if (s) {
        json_object_set(c->answer, "LastUpdateDateTime", json_object_get(s, "Updated"));
        json_object_set(c->answer, "ContributorInsightsMode", json_object_get(s, "Mode"));
    }
    json_decref(s);
    catalog_release(db, t);
    return 0;
}

/* An update of the setting: what it asks for, and what it answers. */
typedef struct insights_change {
    int enable;
    const char *mode;   /* the mode asked for, or NULL */
    const char *status; /* the status answered */
    json_t *shown_mode; /* the mode answered (a new reference), or NULL */
} insights_change;

static int change_insights(const json_t *cur, json_t **next, void *arg, qr_err *err)
{
    (void)err;
    insights_change *c = arg;
    double now = ops_now_seconds();
    *next = NULL;
    if (c->enable) {
        /* ENABLE without a mode asks for the default one. Asking for what is already so
         * changes nothing and answers the settled status; a new mode is a new enabling
         * (the rules keep their names). */
        const char *want = c->mode ? c->mode : modes[0],
                   *was = json_string_value(json_object_get(cur, "Mode"));
        if (is_enabled(cur) && was && strcmp(want, was) == 0) {
            c->status = "ENABLED";
        } else {
            c->status = "ENABLING";
            *next =
                json_pack("{s:b,s:f,s:f,s:s}", "Enabled", 1, "Since",
                          is_enabled(cur) ? json_number_value(json_object_get(cur, "Since")) : now,
                          "Updated", now, "Mode", want);
        }
    } else if (!is_enabled(cur)) {
        c->status = "DISABLED"; /* nothing to disable */
    } else {
        c->status = "DISABLING";
        *next = json_deep_copy(cur);
        json_object_set_new(*next, "Enabled", json_false());
        json_object_set_new(*next, "Updated", json_real(now));
    }
    c->shown_mode = json_incref(json_object_get(*next ? *next : cur, "Mode"));
    return 0;
}

int op_update_contributor_insights(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    /* The action's presence and both enums are judged by the shape checker. */
    const char *action, *mode;
    if (param_string(req, "ContributorInsightsAction", &action, err) ||
        param_string(req, "ContributorInsightsMode", &mode, err))
        return -1;
    table *t;
    const char *index;
    if (target(db, req, &t, &index, err)) return -1;
    insights_change change = {strcmp(action, "ENABLE") == 0, mode, NULL, NULL};
    int rc = meta_setting_update(db, t, KIND, index, change_insights, &change, err);
    /* The counts follow the setting: a new mode starts them again. */
    if (rc == 0 &&
        (strcmp(change.status, "ENABLING") == 0 || strcmp(change.status, "DISABLING") == 0))
        rc = hotkeys_follow(db, t, index,
                            !change.enable ? HOTKEYS_OFF
                            : strcmp(json_string_value(change.shown_mode), "THROTTLED_KEYS") == 0
                                ? HOTKEYS_THROTTLED
                                : HOTKEYS_ACCESSED,
                            err);
    if (rc == 0) {
        c->answer = json_pack("{s:s,s:s}", "TableName", table_name(t), "ContributorInsightsStatus",
                              change.status);
        if (index) json_object_set_new(c->answer, "IndexName", json_string(index));
        if (change.shown_mode)
            json_object_set(c->answer, "ContributorInsightsMode", change.shown_mode);
    }
    json_decref(change.shown_mode);
    catalog_release(db, t);
    return rc;
}

/* Appends the summary of t (and of each of its global indexes) that has insights on. */
static int summarise(qr_db *db, table *t, const char *index, json_t *out, qr_err *err)
{
    json_t *s;
    if (meta_setting_get(db, t, KIND, index, &s, err)) return -1;
    if (!is_enabled(s)) { /* DynamoDB lists no table whose insights are off */
        json_decref(s);
        return 0;
    }
    json_t *e = json_pack("{s:s,s:s,s:O}", "TableName", table_name(t), "ContributorInsightsStatus",
                          "ENABLED", "ContributorInsightsMode", json_object_get(s, "Mode"));
    if (index) json_object_set_new(e, "IndexName", json_string(index));
    json_array_append_new(out, e);
    json_decref(s);
    return 0;
}

int op_list_contributor_insights(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    const char *table_name, *after;
    long long max = 100;
    int given;
    if (param_optional_table_name(req, &table_name, err) ||
        param_string(req, "NextToken", &after, err) ||
        param_int(req, "MaxResults", 0, 100, &max, &given, err))
        return -1;
    if (max == 0) max = 100;
    json_t *names = catalog_names(db), *all = json_array();
    size_t i;
    json_t *n;
    int rc = 0;
    json_array_foreach(names, i, n)
    {
        const char *name = json_string_value(n);
        if (table_name && strcmp(name, table_name) != 0) continue;
        table *t = catalog_get(db, name);
        if (t == NULL) continue; /* deleted meanwhile */
        rc = summarise(db, t, NULL, all, err);
        const qr_index *ixs = table_indexes(t);
        for (size_t j = 0; rc == 0 && j < table_index_count(t); j++)
            if (ixs[j].global) rc = summarise(db, t, ixs[j].name, all, err);
        catalog_release(db, t);
        if (rc) break;
    }
    json_decref(names);
    if (rc) {
        json_decref(all);
        return -1;
    }
    table *named = table_name && json_array_size(all) == 0 ? catalog_get(db, table_name) : NULL;
    if (named)
        catalog_release(db, named);
    else if (table_name && json_array_size(all) == 0) {
        json_decref(all);
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_TABLE_NOT_FOUND, table_name);
    }
    /* Pages go in table order; NextToken is the position of the first summary not given. */
    size_t first = 0;
    if (after) {
        char *end;
        unsigned long long v = strtoull(after, &end, 10);
        if (*after == '\0' || *end != '\0' || v > json_array_size(all)) {
            json_decref(all);
            return err_validation(err, "Invalid NextToken: %s", after);
        }
        first = (size_t)v;
    }
    json_t *page = json_array();
    for (i = first; i < json_array_size(all) && (long long)json_array_size(page) < max; i++)
        json_array_append(page, json_array_get(all, i));
    c->answer = json_pack("{s:o}", "ContributorInsightsSummaries", page);
    if (i < json_array_size(all)) {
        char tok[32];
        snprintf(tok, sizeof tok, "%zu", i);
        json_object_set_new(c->answer, "NextToken", json_string(tok));
    }
    json_decref(all);
    return 0;
}

/* ---- GetInsightRuleReport ---- */

#define RULE_PREFIX "DynamoDBContributorInsights-"

/* The table (held), index and rule kind a rule name stands for: one Describe names now. */
static int find_rule(qr_db *db, const char *name, table **t, const char **index, char *index_buf,
                     size_t cap, hotkeys_rule *rule, qr_err *err)
{
    static const char *const kinds[] = {"PKC", "SKC", "PKT", "SKT"};
    *t = NULL;
    *index = NULL;
    size_t n = strlen(name), pl = strlen(RULE_PREFIX);
    const char *dash = strrchr(name, '-');
    int kind = -1;
    for (int i = 0; i < 4 && n > pl + 4; i++)
        if (strncmp(name + pl, kinds[i], 3) == 0 && name[pl + 3] == '-') kind = i;
    if (strncmp(name, RULE_PREFIX, pl) != 0 || kind < 0 || dash == NULL || dash <= name + pl + 4)
        goto missing;
    /* The resource is a table, or a table, a dash and one of its global indexes (both
     * may hold dashes: each split is tried). */
    char resource[600];
    size_t rl = (size_t)(dash - (name + pl + 4));
    if (rl >= sizeof resource) goto missing;
    memcpy(resource, name + pl + 4, rl);
    resource[rl] = '\0';
    for (size_t cut = rl;; cut--) {
        if (cut == rl || resource[cut] == '-') {
            char tn[600];
            memcpy(tn, resource, cut);
            tn[cut] = '\0';
            table *cand = catalog_get(db, tn);
            const char *ix = cut == rl ? NULL : resource + cut + 1;
            const qr_index *gi = cand && ix ? table_index(cand, ix) : NULL;
            if (cand && (ix == NULL || (gi && gi->global))) {
                json_t *s = NULL;
                if (meta_setting_get(db, cand, KIND, ix, &s, err)) {
                    catalog_release(db, cand);
                    return -1;
                }
                json_t *names = is_enabled(s) ? rules(cand, ix, s) : json_array();
                json_decref(s);
                size_t i;
                json_t *r;
                int found = 0;
                json_array_foreach(names, i, r) found |= strcmp(json_string_value(r), name) == 0;
                json_decref(names);
                if (found) {
                    *t = cand;
                    if (ix) {
                        snprintf(index_buf, cap, "%s", ix);
                        *index = index_buf;
                    }
                    *rule = (hotkeys_rule)kind;
                    return 0;
                }
            }
            catalog_release(db, cand);
        }
        if (cut == 0) break;
    }
missing:
    return err_set(err, QR_E_NOT_FOUND, "Rule %s does not exist", name);
}

/* A time parameter: epoch seconds (the JSON protocol's timestamps) or ISO 8601 text
 * (yyyy-MM-ddTHH:mm:ss, UTC); *out stays as it is when absent. */
static int param_time(json_t *req, const char *key, double *out, qr_err *err)
{
    json_t *v = json_object_get(req, key);
    if (v == NULL || json_is_null(v)) return 0;
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 0;
    }
    struct tm tm = {0};
    const char *end =
        json_is_string(v) ? strptime(json_string_value(v), "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (end == NULL || (*end && strcmp(end, "Z") != 0 && strncmp(end, ".", 1) != 0))
        return err_validation(err, "The parameter %s must be a timestamp", key);
    *out = (double)timegm(&tm);
    return 0;
}

/* A key attribute value as Contributor Insights shows it: its text. */
static json_t *key_text(const json_t *av)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)av, k, v) return json_string(json_string_value(v));
    return json_string("");
}

/* The labels of a rule's keys: the partition key's attributes, then the sort key's. */
static json_t *key_labels(const table *t, const char *index, hotkeys_rule rule)
{
    json_t *labels = json_array();
    const qr_index *ix = index ? table_index(t, index) : NULL;
    int sort = rule == HOTKEYS_SKC || rule == HOTKEYS_SKT;
    if (ix) {
        for (int i = 0; i < ix->npk; i++)
            json_array_append_new(labels, json_string(ix->pk[i]));
        for (int i = 0; sort && i < ix->nsk; i++)
            json_array_append_new(labels, json_string(ix->sk[i]));
    } else {
        json_array_append_new(labels, json_string(table_pk(t)->name));
        if (sort && table_sk(t)->name)
            json_array_append_new(labels, json_string(table_sk(t)->name));
    }
    return labels;
}

static double max_point(const json_t *c)
{
    double m = 0;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(c, "Datapoints"), i, p)
    {
        double v = json_number_value(json_object_get(p, "ApproximateValue"));
        if (v > m) m = v;
    }
    return m;
}

static int by_maximum(const void *x, const void *y)
{
    double a = max_point(*(json_t *const *)x), b = max_point(*(json_t *const *)y);
    return a > b ? -1 : a < b;
}

int op_get_insight_rule_report(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    static const char *const orders[] = {"Sum", "Maximum", NULL};
    static const char *const metrics[] = {"UniqueContributors",
                                          "MaxContributorValue",
                                          "SampleCount",
                                          "Sum",
                                          "Minimum",
                                          "Maximum",
                                          "Average",
                                          NULL};
    const char *name, *order;
    long long max = 10, period = 60;
    int given;
    json_t *want = NULL;
    if (json_object_get(req, "RuleName") == NULL) return param_null("ruleName", err);
    if (param_string(req, "RuleName", &name, err) ||
        param_int(req, "MaxContributorCount", 1, 100, &max, &given, err) ||
        param_int(req, "Period", 1, 86400, &period, &given, err) ||
        param_enum(req, "OrderBy", orders, "Sum", &order, err) ||
        param_array(req, "Metrics", &want, err))
        return -1;
    /* quarry's report holds the last HOTKEYS window; without times, it is the whole of it. */
    double end = hotkeys_now(db), start = end - 900;
    long long last = 0;
    if (param_time(req, "EndTime", &end, err) || param_time(req, "StartTime", &start, err) ||
        param_int(req, "QuarryLastSeconds", 1, 86400, &last, &given, err))
        return -1;
    if (json_object_get(req, "EndTime") && !json_object_get(req, "StartTime")) start = end - 900;
    if (last) { /* the last seconds of the server's clock (quarry top) */
        end = hotkeys_now(db);
        start = end - (double)last;
    }
    if (!(end > start)) return err_validation(err, "The EndTime must be after the StartTime");
    size_t i;
    json_t *m;
    json_array_foreach(want, i, m)
    {
        int ok = 0;
        for (int j = 0; metrics[j] && json_is_string(m); j++)
            ok |= strcmp(json_string_value(m), metrics[j]) == 0;
        if (!ok)
            return err_validation(err, "The Metrics must be among UniqueContributors, "
                                       "MaxContributorValue, SampleCount, Sum, Minimum, "
                                       "Maximum and Average");
    }
    table *t;
    const char *index;
    char index_buf[256];
    hotkeys_rule rule = HOTKEYS_PKC;
    if (find_rule(db, name, &t, &index, index_buf, sizeof index_buf, &rule, err)) return -1;
    int by_max = strcmp(order, "Maximum") == 0;
    json_t *r;
    if (hotkeys_report(db, t, index, rule, start, end, (double)period, by_max ? 100 : (size_t)max,
                       &r, err)) {
        catalog_release(db, t);
        return -1;
    }
    if (r == NULL) /* counting could not start (out of memory): nothing counted */
        r = json_pack("{s:i,s:i,s:[],s:[]}", "Total", 0, "Unique", 0, "Contributors", "Periods");
    json_t *contributors = json_array(), *periods = json_object_get(r, "Periods");
    json_array_foreach(json_object_get(r, "Contributors"), i, m)
    {
        json_t *keys = json_array(), *points = json_array();
        size_t j;
        json_t *v;
        json_array_foreach(json_object_get(m, "Key"), j, v)
            json_array_append_new(keys, key_text(v));
        json_array_foreach(json_object_get(m, "Points"), j, v)
        {
            double at = json_number_value(json_object_get(json_array_get(periods, j), "Start"));
            if (json_number_value(v) > 0)
                json_array_append_new(
                    points, json_pack("{s:f,s:O}", "Timestamp", at, "ApproximateValue", v));
        }
        json_array_append_new(contributors,
                              json_pack("{s:o,s:O,s:o,s:O,s:O,s:O}", "Keys", keys,
                                        "ApproximateAggregateValue", json_object_get(m, "Value"),
                                        "Datapoints", points, "QuarryMaxError",
                                        json_object_get(m, "Error"), "QuarryReadUnits",
                                        json_object_get(m, "ReadUnits"), "QuarryWriteUnits",
                                        json_object_get(m, "WriteUnits")));
    }
    if (by_max) { /* ranked by their heaviest period, then cut to the count asked for */
        size_t n = json_array_size(contributors);
        json_t **all = malloc((n ? n : 1) * sizeof *all);
        for (i = 0; all && i < n; i++)
            all[i] = json_incref(json_array_get(contributors, i));
        if (all) {
            qsort(all, n, sizeof *all, by_maximum);
            json_array_clear(contributors);
            for (i = 0; i < n; i++)
                if ((long long)i < max)
                    json_array_append_new(contributors, all[i]);
                else
                    json_decref(all[i]);
        }
        free(all);
    }
    c->answer =
        json_pack("{s:o,s:s,s:O,s:O,s:o,s:f,s:f}", "KeyLabels", key_labels(t, index, rule),
                  "AggregationStatistic", "Count", "AggregateValue", json_object_get(r, "Total"),
                  "ApproximateUniqueCount", json_object_get(r, "Unique"), "Contributors",
                  contributors, "QuarryStartTime", start, "QuarryEndTime", end);
    /* quarry's own members: the range counted (rounded out to whole buckets) and the
     * ceiling of one partition, for units per second against it (quarry top). */
    double from = json_number_value(json_object_get(r, "From"));
    if (from > 0) json_object_set_new(c->answer, "QuarryStartTime", json_real(from));
    json_object_set_new(c->answer, "QuarryPartitionCeiling",
                        json_pack("{s:f,s:f}", "ReadUnitsPerSecond", METER_PARTITION_RCU,
                                  "WriteUnitsPerSecond", METER_PARTITION_WCU));
    if (want) {
        json_t *points = json_array();
        json_t *p;
        json_array_foreach(periods, i, p)
        {
            json_t *d = json_pack("{s:O}", "Timestamp", json_object_get(p, "Start"));
            double sum = json_number_value(json_object_get(p, "Sum"));
            json_int_t samples = json_integer_value(json_object_get(p, "Samples"));
            size_t j;
            json_array_foreach(want, j, m)
            {
                const char *w = json_string_value(m);
                /* Each access counts 1: the minimum, maximum and average of one are 1. */
                double v = strcmp(w, "UniqueContributors") == 0
                               ? (double)json_integer_value(json_object_get(p, "Keys"))
                           : strcmp(w, "MaxContributorValue") == 0
                               ? json_number_value(json_object_get(p, "Max"))
                           : strcmp(w, "SampleCount") == 0 ? (double)samples
                           : strcmp(w, "Sum") == 0         ? sum
                           : samples > 0                   ? 1.0
                                                           : 0.0;
                json_object_set_new(d, w, json_real(v));
            }
            json_array_append_new(points, d);
        }
        json_object_set_new(c->answer, "MetricDatapoints", points);
    }
    json_decref(r);
    catalog_release(db, t);
    return 0;
}

/* ---- QuarryLargeItemCollections ---- */

/* The item collections of a table (or index) above a size or an item count, as
 * ScyllaDB's system.large_partitions lists them: {"LargeItemCollections": [{"Key":
 * {attribute: AttributeValue}, "SizeBytes": n, "ItemCount": n}]}, largest first. */
int op_quarry_large_item_collections(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    long long min_bytes = 1LL << 30, min_items = 100000, limit = 100;
    int given_bytes, given_items, given;
    const char *index;
    table *t;
    if (param_int(req, "MinSizeBytes", 0, 1LL << 40, &min_bytes, &given_bytes, err) ||
        param_int(req, "MinItemCount", 0, 1LL << 40, &min_items, &given_items, err) ||
        param_int(req, "Limit", 1, 1000, &limit, &given, err) ||
        param_string(req, "IndexName", &index, err) || param_table(db, req, "TableName", &t, err))
        return -1;
    /* One threshold given alone is the only one checked. */
    if (given_bytes && !given_items) min_items = 0;
    if (given_items && !given_bytes) min_bytes = 0;
    const qr_index *ix = index ? table_index(t, index) : NULL;
    if (index && ix == NULL) {
        err_set(err, QR_E_NOT_FOUND, QR_MSG_INDEX_NOT_FOUND, index, table_name(t));
        catalog_release(db, t);
        return -1;
    }
    json_t *list;
    if (hotkeys_large_collections(db, t, index, (uint64_t)min_bytes, (uint64_t)min_items,
                                  (size_t)limit, &list, err)) {
        catalog_release(db, t);
        return -1;
    }
    /* Keys as Key maps, named by the key schema. */
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        json_t *avs = json_object_get(e, "Key"), *key = json_object();
        for (size_t j = 0; j < json_array_size(avs); j++)
            json_object_set(key, ix ? ix->pk[j] : table_pk(t)->name, json_array_get(avs, j));
        json_object_set_new(e, "Key", key);
    }
    c->answer = json_pack("{s:o}", "LargeItemCollections", list);
    catalog_release(db, t);
    return 0;
}
