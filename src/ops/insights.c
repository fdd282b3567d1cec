/* insights.c — DescribeContributorInsights, UpdateContributorInsights and
 * ListContributorInsights: the contributor insights setting of a table or of one of its
 * global indexes (kept by the engine, meta.h). quarry has no CloudWatch to send key
 * statistics to, so this is the setting alone, as DynamoDB reports it; enabling and
 * disabling take effect at once (Update answers ENABLING or DISABLING, as DynamoDB does,
 * and the next Describe shows ENABLED or DISABLED). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

#define KIND META_SETTING_INSIGHTS

static const char *const modes[] = {"ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS", NULL};
/* The same modes in the order DynamoDB lists them when one is refused. */
static const char *const listed_modes[] = {"THROTTLED_KEYS", "ACCESSED_AND_THROTTLED_KEYS", NULL};

/* The table (held) and, if IndexName is given, that global secondary index's name. */
static int target(qr_db *db, json_t *req, table **t, const char **index, qr_err *err)
{
    if (param_string(req, "IndexName", index, err)) return -1;
    if (*index && (strlen(*index) < 3 || strlen(*index) > 255))
        return err_validation(
            err, "IndexName must be at least 3 characters long and at most 255 characters long");
    json_t *name = json_object_get(req, "TableName");
    if (param_check_table_name(name, "tableName", err)) return -1;
    if ((*t = catalog_get(db, json_string_value(name))) == NULL)
        return err_set(err, QR_E_NOT_FOUND, "Requested resource not found: Table: %s not found",
                       json_string_value(name));
    if (*index) {
        const qr_index *ix = table_index(*t, *index);
        if (ix == NULL || !ix->global) {
            err_set(err, QR_E_NOT_FOUND,
                    "Requested resource not found: Index: %s not found for table: %s", *index,
                    table_name(*t));
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
    static const char *const actions[] = {"ENABLE", "DISABLE", NULL};
    const char *action, *mode;
    if (json_object_get(req, "ContributorInsightsAction") == NULL)
        return param_null("contributorInsightsAction", err);
    if (param_enum(req, "ContributorInsightsAction", actions, NULL, &action, err) ||
        param_enum(req, "ContributorInsightsMode", listed_modes, NULL, &mode, err))
        return -1;
    table *t;
    const char *index;
    if (target(db, req, &t, &index, err)) return -1;
    insights_change change = {strcmp(action, "ENABLE") == 0, mode, NULL, NULL};
    int rc = meta_setting_update(db, t, KIND, index, change_insights, &change, err);
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
        return err_set(err, QR_E_NOT_FOUND, "Requested resource not found: Table: %s not found",
                       table_name);
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
