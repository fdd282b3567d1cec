/* report.c — the check report as text for people and as JSON for tools (see output.h).
 *
 * Only formatting lives here: the plans and findings come from check.c unchanged. Colour
 * is the caller's decision (the CLI enables it only when stdout is a terminal). */
#include "checker/output.h"

#include <string.h>

static const char *sev_color(ck_severity s)
{
    return s == CK_ERROR ? "\033[1;31m" : s == CK_WARNING ? "\033[1;33m" : "\033[36m";
}

const char *model_prices_name(const model_prices *p)
{
    const char *shipped = strstr(p->path, "share/quarry/prices.yaml");
    return shipped ? shipped : p->path;
}

static void cost_line(FILE *f, const char *what, const ck_cost *c)
{
    char od[32], pv[32];
    snprintf(od, sizeof od, "$%.2f", c->on_demand + c->storage);
    snprintf(pv, sizeof pv, "$%.2f", c->provisioned + c->storage);
    fprintf(f, "  %-34s %11s on demand  %11s provisioned", what, od, pv);
    char parts[200] = "";
    if (c->write_units > 0)
        snprintf(parts + strlen(parts), sizeof parts - strlen(parts), "%.1f WCU/s", c->write_units);
    if (c->read_units > 0)
        snprintf(parts + strlen(parts), sizeof parts - strlen(parts), "%s%.1f RCU/s",
                 parts[0] ? ", " : "", c->read_units);
    if (c->storage_gb > 0)
        snprintf(parts + strlen(parts), sizeof parts - strlen(parts), "%s%.2f GB stored $%.2f",
                 parts[0] ? ", " : "", c->storage_gb, c->storage);
    fprintf(f, "%s%s%s\n", parts[0] ? "  (" : "", parts, parts[0] ? ")" : "");
}

void model_money_text(const ck_report *r, FILE *f)
{
    const ck_money *mo = r->money;
    const qr_model *m = r->model;
    if (mo == NULL) return;
    const model_prices *pr = &mo->prices;
    size_t dynamo = 0;
    for (size_t ti = 0; ti < m->ntables; ti++)
        dynamo += m->tables[ti].cql == NULL;
    if (dynamo == 0) return; /* DynamoDB's prices: nothing to say of CQL tables */
    fprintf(f, "\nMonthly cost (prices of %s%s%s, %s; storage included)\n",
            pr->region[0] ? pr->region : "an unnamed region", pr->date[0] ? " as of " : "",
            pr->date, model_prices_name(pr));
    if (!mo->priced) {
        fprintf(f, "  no pattern declares an rps and no entity a count: nothing to price\n");
        return;
    }
    char what[300];
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        if (t->cql) continue;
        snprintf(what, sizeof what, "table %s%s", t->name, t->nidx ? " (all)" : "");
        cost_line(f, what, &mo->tables[ti].total);
        if (t->nidx == 0) continue;
        cost_line(f, "  base table", &mo->tables[ti].base);
        for (size_t i = 0; i < t->nidx; i++) {
            snprintf(what, sizeof what, "  %s %s", t->idx[i].local ? "LSI" : "GSI", t->idx[i].name);
            cost_line(f, what, &mo->tables[ti].idx[i]);
        }
    }
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_cost *c = &mo->patterns[i];
        if (c->read_units <= 0 && c->write_units <= 0) continue;
        snprintf(what, sizeof what, "pattern %s", r->plans[i].pattern->name);
        cost_line(f, what, c);
    }
    cost_line(f, "total", &mo->total);
}

void model_report_text(const ck_report *r, FILE *f, int color)
{
    const qr_model *m = r->model;
    const char *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
    const char *green = color ? "\033[32m" : "", *red = color ? "\033[1;31m" : "";
    fprintf(f, "%s%s%s%s%s: %zu table%s, %zu entit%s, %zu access pattern%s\n\n", bold, m->path,
            m->name ? " — " : "", m->name ? m->name : "", off, m->ntables,
            m->ntables == 1 ? "" : "s", m->nentities, m->nentities == 1 ? "y" : "ies", m->npatterns,
            m->npatterns == 1 ? "" : "s");
    fprintf(f, "%sAccess patterns%s\n", bold, off);
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        fprintf(f, "  %s%-4s%s %s%s%s%s%s\n", pl->served ? green : red, pl->served ? "ok" : "FAIL",
                off, bold, p->name, off, p->sentence ? " — " : "", p->sentence ? p->sentence : "");
        fprintf(f, "       %s\n", pl->text);
        if (p->statement) fprintf(f, "       %s\n", p->statement);
    }
    if (r->nfindings) fprintf(f, "\n%sFindings%s\n", bold, off);
    for (int sev = CK_ERROR; sev >= CK_NOTE; sev--)
        for (size_t i = 0; i < r->nfindings; i++) {
            const ck_finding *fd = &r->findings[i];
            if ((int)fd->severity != sev) continue;
            fprintf(f, "  %s%-7s%s %s  %s  (%s:%d:%d)\n", color ? sev_color(fd->severity) : "",
                    check_severity_name(fd->severity), off, fd->rule, fd->subject, m->path,
                    fd->pos.line, fd->pos.col);
            fprintf(f, "          %s\n", fd->message);
            fprintf(f, "          why: %s\n", fd->explanation);
            fprintf(f, "          fix: %s\n", fd->fix);
        }
    model_money_text(r, f);
    fprintf(f, "\n%s%d error%s, %d warning%s, %d note%s%s\n", r->errors ? red : green, r->errors,
            r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s", r->notes,
            r->notes == 1 ? "" : "s", off);
}

static json_t *cost_json(const ck_cost *c)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "read_units_per_second", c->read_units,
                     "write_units_per_second", c->write_units, "on_demand",
                     c->on_demand + c->storage, "provisioned", c->provisioned + c->storage,
                     "storage_gb", c->storage_gb, "storage", c->storage);
}

/* {"prices": {...}, "tables": [{name, ...cost, base, indexes: [{name, ...cost}]}],
 * "patterns": [{name, ...cost}], "total"}; costs are monthly, storage included. */
static json_t *money_json(const ck_report *r)
{
    const ck_money *mo = r->money;
    const model_prices *pr = &mo->prices;
    json_t *o = json_object(), *tables = json_array(), *pats = json_array();
    json_object_set_new(o, "prices",
                        json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "file",
                                  pr->path, "region", pr->region, "source", pr->source, "date",
                                  pr->date, "read_per_million", pr->read_per_million,
                                  "write_per_million", pr->write_per_million, "rcu_hour",
                                  pr->rcu_hour, "wcu_hour", pr->wcu_hour, "storage_gb_month",
                                  pr->storage_gb_month, "hours_per_month", pr->hours_per_month));
    for (size_t ti = 0; ti < r->model->ntables; ti++) {
        const m_table *t = &r->model->tables[ti];
        if (t->cql) continue;
        json_t *tj = cost_json(&mo->tables[ti].total), *ix = json_array();
        json_object_set_new(tj, "name", json_string(t->name));
        json_object_set_new(tj, "base", cost_json(&mo->tables[ti].base));
        for (size_t i = 0; i < t->nidx; i++) {
            json_t *ij = cost_json(&mo->tables[ti].idx[i]);
            json_object_set_new(ij, "name", json_string(t->idx[i].name));
            json_array_append_new(ix, ij);
        }
        json_object_set_new(tj, "indexes", ix);
        json_array_append_new(tables, tj);
    }
    for (size_t i = 0; i < r->nplans; i++) {
        json_t *pj = cost_json(&mo->patterns[i]);
        json_object_set_new(pj, "name", json_string(r->plans[i].pattern->name));
        json_array_append_new(pats, pj);
    }
    json_object_set_new(o, "tables", tables);
    json_object_set_new(o, "patterns", pats);
    json_object_set_new(o, "total", cost_json(&mo->total));
    return o;
}

json_t *model_report_json(const ck_report *r)
{
    json_t *root = json_object(), *plans = json_array(), *findings = json_array();
    if (root == NULL || plans == NULL || findings == NULL) {
        json_decref(root);
        json_decref(plans);
        json_decref(findings);
        return NULL;
    }
    json_object_set_new(root, "file", json_string(r->model->path));
    if (r->model->name) json_object_set_new(root, "model", json_string(r->model->name));
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(pl->pattern->name));
        if (pl->pattern->sentence)
            json_object_set_new(o, "sentence", json_string(pl->pattern->sentence));
        json_object_set_new(o, "kind", json_string(model_kind_name(pl->pattern->kind)));
        json_object_set_new(o, "served", json_boolean(pl->served));
        json_object_set_new(o, "operation", json_string(pl->operation));
        if (pl->path.table) json_object_set_new(o, "table", json_string(pl->path.table->name));
        json_object_set_new(o, "index",
                            pl->path.index ? json_string(pl->path.index->name) : json_null());
        if (pl->key_condition)
            json_object_set_new(o, "key_condition", json_string(pl->key_condition));
        if (strcmp(pl->operation, "Query") == 0)
            json_object_set_new(o, "scan_index_forward", json_boolean(pl->forward));
        if (pl->pattern->limit > 0) json_object_set_new(o, "limit", json_real(pl->pattern->limit));
        json_object_set_new(o, "scatter", json_integer(pl->scatter));
        json_object_set_new(o, "plan", json_string(pl->text));
        if (pl->pattern->statement)
            json_object_set_new(o, "statement", json_string(pl->pattern->statement));
        if (pl->pattern->source) json_object_set_new(o, "source", json_string(pl->pattern->source));
        json_object_set_new(o, "line", json_integer(pl->pattern->pos.line));
        json_object_set_new(o, "column", json_integer(pl->pattern->pos.col));
        json_array_append_new(plans, o);
    }
    for (size_t i = 0; i < r->nfindings; i++) {
        const ck_finding *fd = &r->findings[i];
        json_t *o = json_object();
        json_object_set_new(o, "severity", json_string(check_severity_name(fd->severity)));
        json_object_set_new(o, "rule", json_string(fd->rule));
        json_object_set_new(o, "subject", json_string(fd->subject));
        json_object_set_new(o, "line", json_integer(fd->pos.line));
        json_object_set_new(o, "column", json_integer(fd->pos.col));
        json_object_set_new(o, "message", json_string(fd->message));
        json_object_set_new(o, "explanation", json_string(fd->explanation));
        json_object_set_new(o, "fix", json_string(fd->fix));
        json_array_append_new(findings, o);
    }
    json_object_set_new(root, "access_patterns", plans);
    json_object_set_new(root, "findings", findings);
    json_t *sum = json_object();
    json_object_set_new(sum, "errors", json_integer(r->errors));
    json_object_set_new(sum, "warnings", json_integer(r->warnings));
    json_object_set_new(sum, "notes", json_integer(r->notes));
    json_object_set_new(root, "summary", sum);
    if (r->money) json_object_set_new(root, "costs", money_json(r));
    return root;
}
