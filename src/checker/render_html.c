/* render_html.c — `quarry model render --html`: the rows of render.c as one self-contained
 * page (inline CSS, no scripts, nothing to fetch), readable from a file without a server.
 * One colour per entity type; every model string is HTML-escaped. */
#include "checker/render.h"

#include <stdlib.h>
#include <string.h>

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static size_t entity_index(const qr_model *m, const m_entity *e)
{
    return (size_t)(e - m->entities);
}

static void html_rows(FILE *f, const qr_model *m, const char *pkn, const char *skn, const row *rows,
                      size_t n)
{
    fputs("<table><thead><tr><th>", f);
    esc(f, pkn);
    fputs("</th><th>", f);
    esc(f, skn ? skn : "");
    fputs("</th><th>item type</th><th>access patterns</th></tr></thead><tbody>\n", f);
    for (size_t i = 0; i < n; i++) {
        int same = i > 0 && strcmp(rows[i].pk, rows[i - 1].pk) == 0;
        fprintf(f, "<tr class=\"e%zu\"><td class=\"pk\">", entity_index(m, rows[i].e) % 8);
        if (!same) esc(f, rows[i].pk);
        fputs("</td><td>", f);
        esc(f, rows[i].sk);
        fputs("</td><td>", f);
        esc(f, rows[i].e->name);
        fputs("</td><td>", f);
        esc(f, rows[i].serves);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

static void html_cost_row(FILE *f, const char *what, const char *name, const ck_cost *c)
{
    fputs("<tr><td>", f);
    esc(f, what);
    if (name) {
        fputs(" ", f);
        esc(f, name);
    }
    fprintf(f, "</td><td>%.1f</td><td>%.1f</td><td>%.2f</td><td>$%.2f</td><td>$%.2f</td></tr>\n",
            c->write_units, c->read_units, c->storage_gb, c->on_demand + c->storage,
            c->provisioned + c->storage);
}

/* The monthly costs of check_price, per table, index and pattern. */
static void html_money(FILE *f, const ck_report *r)
{
    const ck_money *mo = r->money;
    if (mo == NULL || !mo->priced) return;
    fputs("<h2>Monthly cost</h2>\n<p>Prices of ", f);
    esc(f, mo->prices.region[0] ? mo->prices.region : "an unnamed region");
    if (mo->prices.date[0]) {
        fputs(" as of ", f);
        esc(f, mo->prices.date);
    }
    fputs(" (", f);
    esc(f, model_prices_name(&mo->prices));
    fputs("); storage included.</p>\n<table><thead><tr><th>what</th><th>WCU/s</th><th>RCU/s</th>"
          "<th>GB stored</th><th>on demand</th><th>provisioned</th></tr></thead><tbody>\n",
          f);
    const qr_model *m = r->model;
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        if (t->cql) continue;
        html_cost_row(f, "table", t->name, &mo->tables[ti].total);
        for (size_t i = 0; t->nidx && i < t->nidx; i++)
            html_cost_row(f, t->idx[i].local ? "table's LSI" : "table's GSI", t->idx[i].name,
                          &mo->tables[ti].idx[i]);
    }
    for (size_t i = 0; i < r->nplans; i++)
        if (mo->patterns[i].read_units > 0 || mo->patterns[i].write_units > 0)
            html_cost_row(f, "pattern", r->plans[i].pattern->name, &mo->patterns[i]);
    html_cost_row(f, "total", NULL, &mo->total);
    fputs("</tbody></table>\n", f);
}

void model_render_html(const ck_report *rc, FILE *f)
{
    ck_report *r = (ck_report *)rc;
    const qr_model *m = r->model;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    esc(f, m->name ? m->name : m->path);
    fputs("</title>\n<style>\n"
          "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n"
          "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
          "th,td{border:1px solid #bbb;padding:4px "
          "10px;text-align:left;font-family:ui-monospace,monospace;font-size:13px}\n"
          "th{background:#eee}\ntd.pk{font-weight:bold}\n"
          ".e0 td{background:#eef5ff}.e1 td{background:#eefbea}.e2 td{background:#fff6e5}.e3 "
          "td{background:#f6ecff}\n"
          ".e4 td{background:#e9fbfb}.e5 td{background:#fdeef3}.e6 td{background:#f3f3e6}.e7 "
          "td{background:#f0f0f0}\n"
          ".ok{color:#17752b}.fail{color:#b3261e;font-weight:bold}\n"
          "</style></head><body>\n<h1>",
          f);
    esc(f, m->name ? m->name : m->path);
    fputs("</h1>\n", f);
    if (m->description) {
        fputs("<p>", f);
        esc(f, m->description);
        fputs("</p>\n", f);
    }
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        fputs("<h2>Table ", f);
        esc(f, t->name);
        fputs("</h2>\n", f);
        size_t n;
        row *rows = render_collect(r, t, NULL, &n);
        if (rows) html_rows(f, m, t->pk.name, t->sk.name, rows, n);
        free(rows);
        for (size_t i = 0; i < t->nidx; i++) {
            const m_index *ix = &t->idx[i];
            fprintf(f, "<h3>%s ", ix->local ? "LSI" : "GSI");
            esc(f, ix->name);
            fprintf(f, " <small>(projects %s)</small></h3>\n", render_projection_name(ix));
            rows = render_collect(r, t, ix, &n);
            if (rows) html_rows(f, m, ix->pk.name, ix->sk.name, rows, n);
            free(rows);
        }
    }
    fputs("<h2>Item "
          "shapes</h2>\n<table><thead><tr><th>entity</th><th>table</th><th>keys</th></tr></"
          "thead><tbody>\n",
          f);
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        fprintf(f, "<tr class=\"e%zu\"><td>", ei % 8);
        esc(f, e->name);
        fputs("</td><td>", f);
        esc(f, e->table->name);
        fputs("</td><td>", f);
        esc(f, e->table->pk.name);
        fputs(" = ", f);
        esc(f, e->pk.text);
        if (e->sk.text) {
            fputs(", ", f);
            esc(f, e->table->sk.name);
            fputs(" = ", f);
            esc(f, e->sk.text);
        }
        for (size_t k = 0; k < e->nkeys; k++) {
            const m_entkey *ek = &e->keys[k];
            fputs("<br>", f);
            esc(f, ek->index->name);
            fputs(": ", f);
            if (!ek->index->local) {
                esc(f, ek->index->pk.name);
                fputs(" = ", f);
                esc(f, ek->pk.text);
                if (ek->sk.text) fputs(", ", f);
            }
            if (ek->sk.text) {
                esc(f, ek->index->sk.name);
                fputs(" = ", f);
                esc(f, ek->sk.text);
            }
            for (size_t w = 0; w < ek->nwhen; w++) {
                fputs(w ? " and " : " while ", f);
                esc(f, ek->when[w].name);
                fputs(" = ", f);
                esc(f, ek->when[w].value);
            }
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    fputs("<h2>Access patterns</h2>\n<table><thead><tr><th>pattern</th><th>sentence</th><th>served "
          "by</th></tr></thead><tbody>\n",
          f);
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        fputs("<tr><td>", f);
        esc(f, pl->pattern->name);
        fputs("</td><td>", f);
        esc(f, pl->pattern->sentence ? pl->pattern->sentence : "");
        fprintf(f, "</td><td class=\"%s\">", pl->served ? "ok" : "fail");
        esc(f, pl->text);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    html_money(f, r);
    fputs("</body></html>\n", f);
}
