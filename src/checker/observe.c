/* observe.c — `quarry model observe`: a server's model watch (QuarryDescribeModel) read
 * through the DynamoDB API and set beside the model: per access pattern, declared against
 * observed rate, latency, items and units, with monthly costs at the prices of an editable
 * price table (share/quarry/prices.yaml); the hottest keys (GetInsightRuleReport) against
 * the declared `hottest` shares; indexes and patterns no traffic used. It also carries
 * observed figures back into a model for `quarry model check --observed`. The figures are
 * the server's; this file only fetches, combines and prints them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker/client.h"
#include "checker/output.h"
#include "util/readfile.h"

static double scalar_number(const doc_node *map, const char *path, int *ok)
{
    const doc_node *n = map;
    char key[64];
    for (const char *p = path; n && *p;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        snprintf(key, sizeof key, "%.*s", (int)len, p);
        n = n->kind == DOC_MAP ? doc_get(n, key) : NULL;
        p += len + (dot != NULL);
    }
    char *end;
    double v = n && n->kind == DOC_SCALAR ? strtod(n->str, &end) : NAN;
    if (n == NULL || n->kind != DOC_SCALAR || *end != '\0' || !(v >= 0)) *ok = 0;
    return v;
}

int model_prices_load(const char *path, model_prices *out, qr_err *err)
{
    char *text;
    size_t len;
    if (readfile_path(path, (size_t)1 << 20, &text, &len) != 0)
        return err_set(err, errno == ENOMEM ? QR_E_INTERNAL : QR_E_VALIDATION,
                       "%s: cannot read the price table: %s", path,
                       errno == EFBIG ? "larger than 1 MB" : strerror(errno));
    ck_arena a = {0};
    doc_node *root;
    int rc = doc_parse(&a, path, text, len, &root, err);
    if (rc == 0) {
        int ok = root->kind == DOC_MAP;
        out->read_per_million = scalar_number(root, "on_demand.read_per_million", &ok);
        out->write_per_million = scalar_number(root, "on_demand.write_per_million", &ok);
        out->rcu_hour = scalar_number(root, "provisioned.rcu_hour", &ok);
        out->wcu_hour = scalar_number(root, "provisioned.wcu_hour", &ok);
        out->hours_per_month = scalar_number(root, "hours_per_month", &ok);
        int has_storage = 1;
        out->storage_gb_month = scalar_number(root, "storage.gb_month", &has_storage);
        if (!has_storage) out->storage_gb_month = 0;
        const char *const names[] = {"region", "source", "date"};
        char *const dest[] = {out->region, out->source, out->date};
        const size_t sizes[] = {sizeof out->region, sizeof out->source, sizeof out->date};
        for (int i = 0; i < 3; i++) {
            const doc_node *v = doc_get(root, names[i]);
            snprintf(dest[i], sizes[i], "%s", v && v->kind == DOC_SCALAR ? v->str : "");
        }
        snprintf(out->path, sizeof out->path, "%s", path);
        if (!ok)
            rc = err_set(err, QR_E_VALIDATION,
                         "%s: a price table needs numbers on_demand.read_per_million, "
                         "on_demand.write_per_million, provisioned.rcu_hour, "
                         "provisioned.wcu_hour and hours_per_month",
                         path);
    }
    ck_arena_free(&a);
    free(text);
    return rc;
}

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

/* Monthly costs of rate requests a second each using read and write units. */
static json_t *costs(const model_prices *pr, double rate, double read, double write)
{
    return json_pack("{s:f,s:f}", "OnDemand", check_cost_on_demand(pr, rate * read, rate * write),
                     "Provisioned", check_cost_provisioned(pr, rate * read, rate * write));
}

/* The largest declared `hottest` share among the partition-key variables of the
 * entities of table (0: none declared). */
static double declared_hottest(const qr_model *m, const char *table)
{
    double h = 0;
    for (size_t i = 0; m && i < m->nentities; i++) {
        const m_entity *e = &m->entities[i];
        if (strcmp(e->table->name, table) != 0) continue;
        for (size_t s = 0; s < e->pk.nseg; s++)
            if (e->pk.seg[s].is_var && e->pk.seg[s].attr && e->pk.seg[s].attr->hottest > h)
                h = e->pk.seg[s].attr->hottest;
    }
    return h;
}

/* The hottest partition key of table by contributor insights, against the model. */
static json_t *hot_keys(client *cl, const qr_model *m, const char *table, int window)
{
    qr_err err;
    err_init(&err);
    json_t *o = json_pack("{s:s}", "Table", table), *d = NULL,
           *req = json_pack("{s:s}", "TableName", table);
    double declared = declared_hottest(m, table);
    if (declared > 0) json_object_set_new(o, "DeclaredHottest", json_real(declared));
    int rc = client_call(cl, "DescribeContributorInsights", req, &d, &err);
    json_decref(req);
    const char *status =
        rc ? NULL : json_string_value(json_object_get(d, "ContributorInsightsStatus"));
    json_object_set_new(o, "Insights", json_string(status ? status : "UNKNOWN"));
    if (rc || status == NULL || strcmp(status, "ENABLED") != 0) {
        json_object_set_new(o, "Note",
                            json_string(rc ? err.msg
                                           : "contributor insights are off for this "
                                             "table: UpdateContributorInsights turns "
                                             "them on, and the hot keys are counted "
                                             "from then"));
        err_clear(&err);
        json_decref(d);
        return o;
    }
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(d, "ContributorInsightsRuleList"), i, r)
    {
        const char *name = json_string_value(r);
        if (name == NULL || strstr(name, "-PKC-") == NULL) continue;
        json_t *q = json_pack("{s:s,s:i,s:i,s:i}", "RuleName", name, "QuarryLastSeconds", window,
                              "Period", window, "MaxContributorCount", 5),
               *rep = NULL;
        if (client_call(cl, "GetInsightRuleReport", q, &rep, &err) == 0) {
            double total = num(rep, "AggregateValue");
            json_t *top = json_array(), *c;
            size_t k;
            json_array_foreach(json_object_get(rep, "Contributors"), k, c)
            {
                double v = num(c, "ApproximateAggregateValue");
                json_array_append_new(top,
                                      json_pack("{s:O,s:f,s:f}", "Keys", json_object_get(c, "Keys"),
                                                "Accesses", v, "Share", total > 0 ? v / total : 0));
            }
            json_t *first = json_array_get(top, 0);
            double share = first ? num(first, "Share") : 0;
            json_object_set_new(o, "Accesses", json_real(total));
            json_object_set_new(o, "HottestShare", json_real(share));
            json_object_set_new(o, "Top", top);
            if (declared > 0 && share > declared)
                json_object_set_new(o, "AboveDeclared", json_true());
        } else {
            json_object_set_new(o, "Note", json_string(err.msg));
            err_clear(&err);
        }
        json_decref(q);
        json_decref(rep);
        break;
    }
    json_decref(d);
    return o;
}

static int model_has_table(const qr_model *m, const char *table)
{
    return m == NULL || (table && model_table(m, table) != NULL);
}

int model_observe(const char *endpoint, const qr_model *m, const model_prices *pr, json_t **out,
                  qr_err *err)
{
    *out = NULL;
    client cl;
    int rc = -1;
    json_t *d = NULL, *req = json_object();
    if (client_init(&cl, endpoint, err)) goto out_global;
    if (client_call(&cl, "QuarryDescribeModel", req, &d, err)) goto done;
    if (json_array_size(json_object_get(d, "Models")) == 0) {
        err_set(err, QR_E_VALIDATION,
                "the server at %s watches no model: start it with quarry serve --model FILE",
                endpoint);
        goto done;
    }
    json_t *o = json_object(), *pats = json_array(), *tables = json_object();
    json_object_set_new(o, "Endpoint", json_string(endpoint));
    json_object_set_new(o, "Prices",
                        json_pack("{s:s,s:s,s:f,s:f,s:f,s:f,s:f}", "File", pr->path, "Region",
                                  pr->region, "ReadPerMillion", pr->read_per_million,
                                  "WritePerMillion", pr->write_per_million, "RcuHour", pr->rcu_hour,
                                  "WcuHour", pr->wcu_hour, "HoursPerMonth", pr->hours_per_month));
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(d, "Patterns"), i, p)
    {
        const char *table = json_string_value(json_object_get(p, "Table"));
        if (!model_has_table(m, table)) continue;
        json_t *q = json_deep_copy(p), *ob = json_object_get(q, "Observed"),
               *de = json_object_get(q, "Declared");
        double reqs = num(ob, "Requests");
        double ru = reqs ? num(ob, "ReadUnits") / reqs : 0,
               wu = reqs ? num(ob, "WriteUnits") / reqs : 0;
        json_object_set_new(ob, "ReadUnitsPerRequest", json_real(ru));
        json_object_set_new(ob, "WriteUnitsPerRequest", json_real(wu));
        json_object_set_new(ob, "MonthlyCost", costs(pr, num(ob, "Rps"), ru, wu));
        if (reqs && num(de, "Rps") > 0)
            json_object_set_new(de, "MonthlyCost", costs(pr, num(de, "Rps"), ru, wu));
        json_array_append_new(pats, q);
        if (table) json_object_set_new(tables, table, json_true());
    }
    json_object_set_new(o, "Patterns", pats);
    json_t *hot = json_array();
    const char *table;
    json_t *unused;
    json_object_foreach(tables, table, unused)
        json_array_append_new(hot, hot_keys(&cl, m, table, 3600));
    json_object_set_new(o, "HotKeys", hot);
    json_decref(tables);
    const char *lists[] = {"UnusedIndexes", "UnexercisedPatterns", "Findings", "Models"};
    for (size_t k = 0; k < 4; k++)
        json_object_set(o, lists[k], json_object_get(d, lists[k]));
    *out = o;
    rc = 0;
done:
    client_free(&cl);
out_global:
    json_decref(req);
    json_decref(d);
    return rc;
}

void model_observe_text(const json_t *o, FILE *f)
{
    const json_t *pr = json_object_get(o, "Prices");
    fprintf(f, "%s — declared against observed (prices: %s, %s)\n\n",
            json_string_value(json_object_get(o, "Endpoint")),
            json_string_value(json_object_get(pr, "File")),
            json_string_value(json_object_get(pr, "Region")));
    fprintf(f, "%-24s %8s %15s %17s %15s %9s %9s %21s\n", "pattern", "requests", "rps obs/decl",
            "p50/p99 ms (budget)", "items read/ret", "RU", "WU", "$/month demand/prov");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(o, "Patterns"), i, p)
    {
        const json_t *ob = json_object_get(p, "Observed"), *de = json_object_get(p, "Declared"),
                     *cost = json_object_get(ob, "MonthlyCost");
        char rps[32], lat[40], items[40], money[40];
        snprintf(rps, sizeof rps, "%.2f/%g", num(ob, "Rps"), num(de, "Rps"));
        if (num(de, "LatencyMs") > 0)
            snprintf(lat, sizeof lat, "%.3f/%.3f (%g)", num(ob, "P50Ms"), num(ob, "P99Ms"),
                     num(de, "LatencyMs"));
        else
            snprintf(lat, sizeof lat, "%.3f/%.3f", num(ob, "P50Ms"), num(ob, "P99Ms"));
        snprintf(items, sizeof items, "%.0f/%.0f", num(ob, "ItemsRead"), num(ob, "ItemsReturned"));
        snprintf(money, sizeof money, "%.2f/%.2f", num(cost, "OnDemand"), num(cost, "Provisioned"));
        fprintf(f, "%-24.24s %8.0f %15s %17s %15s %9.1f %9.1f %21s\n",
                json_string_value(json_object_get(p, "Name")), num(ob, "Requests"), rps, lat, items,
                num(ob, "ReadUnits"), num(ob, "WriteUnits"), money);
    }
    fprintf(f, "\nhot keys\n");
    json_array_foreach(json_object_get(o, "HotKeys"), i, p)
    {
        const char *note = json_string_value(json_object_get(p, "Note"));
        if (note) {
            fprintf(f, "  %s: %s\n", json_string_value(json_object_get(p, "Table")), note);
            continue;
        }
        char *key = json_dumps(
            json_object_get(json_array_get(json_object_get(p, "Top"), 0), "Keys"), JSON_COMPACT);
        fprintf(f, "  %s: hottest partition key %s has %.1f%% of %.0f accesses",
                json_string_value(json_object_get(p, "Table")), key ? key : "-",
                100 * num(p, "HottestShare"), num(p, "Accesses"));
        if (num(p, "DeclaredHottest") > 0)
            fprintf(f, " (declared %.1f%%%s)", 100 * num(p, "DeclaredHottest"),
                    json_is_true(json_object_get(p, "AboveDeclared")) ? ", above it" : "");
        fputc('\n', f);
        free(key);
    }
    fprintf(f, "\nindexes no traffic used:");
    json_array_foreach(json_object_get(o, "UnusedIndexes"), i, p)
        fprintf(f, " %s.%s", json_string_value(json_object_get(p, "Table")),
                json_string_value(json_object_get(p, "Index")));
    fprintf(f, "%s\npatterns no traffic exercised:",
            json_array_size(json_object_get(o, "UnusedIndexes")) ? "" : " none");
    json_array_foreach(json_object_get(o, "UnexercisedPatterns"), i, p)
        fprintf(f, " %s", json_string_value(p));
    fprintf(f, "%s\nfindings: %zu",
            json_array_size(json_object_get(o, "UnexercisedPatterns")) ? "" : " none",
            json_array_size(json_object_get(o, "Findings")));
    json_array_foreach(json_object_get(o, "Findings"), i, p)
        fprintf(f, "%s%s x%.0f", i ? ", " : " (", json_string_value(json_object_get(p, "Kind")),
                num(p, "Count"));
    fprintf(f, "%s\n", json_array_size(json_object_get(o, "Findings")) ? ")" : "");
}

int model_apply_observed(qr_model *m, const json_t *observed, qr_err *err)
{
    const json_t *pats = json_object_get(observed, "Patterns");
    if (!json_is_array(pats))
        return err_set(err, QR_E_VALIDATION,
                       "the observed file is not the output of quarry model observe --json (it "
                       "has no Patterns)");
    int applied = 0;
    size_t i;
    json_t *p;
    json_array_foreach(pats, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "Name"));
        const json_t *ob = json_object_get(p, "Observed");
        double reqs = num(ob, "Requests");
        if (name == NULL || reqs <= 0) continue;
        for (size_t k = 0; k < m->npatterns; k++) {
            m_pattern *mp = &m->patterns[k];
            if (strcmp(mp->name, name) != 0) continue;
            mp->rps = num(ob, "Rps");
            if (mp->kind == MK_QUERY) mp->result_size = num(ob, "ItemsReturned") / reqs;
            applied++;
        }
    }
    return applied;
}
