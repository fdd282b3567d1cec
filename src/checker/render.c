/* render.c — `quarry model render`: the single-table layout as the modelling write-ups
 * draw it (partition key, sort key, item type, the patterns each item shape serves), with
 * example items generated from the key templates, then each index's view of them.
 *
 * Text for terminals, or one self-contained HTML page (inline CSS, no scripts, no links
 * to fetch). The examples are illustrations made from the formats; they are not data. */
#include "checker/output.h"

#include <stdlib.h>
#include <string.h>

#define EXAMPLES 2
#define CELL 256

typedef struct row {
    char pk[CELL], sk[CELL];
    const m_entity *e;
    const char *serves;
} row;

static int row_cmp(const void *a, const void *b)
{
    const row *x = a, *y = b;
    int c = strcmp(x->pk, y->pk);
    return c ? c : strcmp(x->sk, y->sk);
}

/* Names of the patterns that use entity e through index ix (NULL: the base table). */
static const char *serves(ck_report *r, const m_entity *e, const m_index *ix)
{
    char buf[1024] = "";
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        int mine = p->entity == e;
        for (size_t j = 0; j < p->nalso; j++) mine |= p->also[j] == e;
        if (!mine || !pl->served || pl->path.index != ix) continue;
        if (buf[0]) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, p->name, sizeof buf - strlen(buf) - 1);
    }
    return ck_arena_printf(&r->arena, "%s", buf[0] ? buf : "-");
}

/* The rows of table t (ix NULL) or of index ix, sorted as DynamoDB stores them. */
static row *collect(ck_report *r, const m_table *t, const m_index *ix, size_t *n)
{
    const qr_model *m = r->model;
    row *rows = calloc(m->nentities * EXAMPLES + 1, sizeof *rows);
    *n = 0;
    if (rows == NULL) return NULL;
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        if (e->table != t) continue;
        const m_entkey *k = ix ? model_entity_key(e, ix) : NULL;
        if (ix && k == NULL) continue;
        const m_template *pk = ix ? (ix->local ? &e->pk : &k->pk) : &e->pk;
        const m_template *sk = ix ? &k->sk : &e->sk;
        const char *sv = serves(r, e, ix);
        for (int v = 0; v < EXAMPLES; v++) {
            if (ix && !check_item_in_index(e, k, v)) continue;
            row *w = &rows[*n];
            check_item_key(e, pk, v, w->pk, CELL);
            if (sk->text) check_item_key(e, sk, v, w->sk, CELL);
            w->e = e;
            w->serves = sv;
            int dup = 0;
            for (size_t i = 0; i < *n; i++) dup |= strcmp(rows[i].pk, w->pk) == 0 && strcmp(rows[i].sk, w->sk) == 0;
            if (!dup) (*n)++;
        }
    }
    qsort(rows, *n, sizeof *rows, row_cmp);
    return rows;
}

static const char *proj_name(const m_index *ix)
{
    return ix->projection == MP_ALL ? "all attributes" : ix->projection == MP_KEYS_ONLY ? "keys only" : "keys and listed attributes";
}

static void text_rows(FILE *f, const char *pkn, const char *skn, const row *rows, size_t n)
{
    int wp = (int)strlen(pkn), ws = skn ? (int)strlen(skn) : 0, wt = 9;
    for (size_t i = 0; i < n; i++) {
        if ((int)strlen(rows[i].pk) > wp) wp = (int)strlen(rows[i].pk);
        if ((int)strlen(rows[i].sk) > ws) ws = (int)strlen(rows[i].sk);
        if ((int)strlen(rows[i].e->name) > wt) wt = (int)strlen(rows[i].e->name);
    }
    fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wp, pkn, ws, skn ? skn : "", wt, "item type", "access patterns");
    for (size_t i = 0; i < n; i++) {
        int same = i > 0 && strcmp(rows[i].pk, rows[i - 1].pk) == 0;
        fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wp, same ? "" : rows[i].pk, ws, rows[i].sk, wt, rows[i].e->name, rows[i].serves);
    }
}

void model_render_text(const ck_report *rc, FILE *f)
{
    ck_report *r = (ck_report *)rc; /* only its arena is written to */
    const qr_model *m = r->model;
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        fprintf(f, "Table %s  (partition key %s%s%s%s%s; %s)\n", t->name, t->pk.name, t->sk.name ? ", sort key " : "",
                t->sk.name ? t->sk.name : "", t->ttl ? ", TTL " : "", t->ttl ? t->ttl : "", t->provisioned ? "provisioned" : "on demand");
        size_t n;
        row *rows = collect(r, t, NULL, &n);
        if (rows) text_rows(f, t->pk.name, t->sk.name, rows, n);
        free(rows);
        for (size_t i = 0; i < t->nidx; i++) {
            const m_index *ix = &t->idx[i];
            fprintf(f, "\n  %s %s  (partition key %s%s%s; projects %s)\n", ix->local ? "LSI" : "GSI", ix->name, ix->pk.name,
                    ix->sk.name ? ", sort key " : "", ix->sk.name ? ix->sk.name : "", proj_name(ix));
            rows = collect(r, t, ix, &n);
            if (rows && n) text_rows(f, ix->pk.name, ix->sk.name, rows, n);
            else if (rows) fprintf(f, "  (no entity writes keys for this index)\n");
            free(rows);
        }
        fprintf(f, "\n  Item shapes\n");
        for (size_t ei = 0; ei < m->nentities; ei++) {
            const m_entity *e = &m->entities[ei];
            if (e->table != t) continue;
            fprintf(f, "  %-14s %s = \"%s\"", e->name, t->pk.name, e->pk.text);
            if (e->sk.text) fprintf(f, ", %s = \"%s\"", t->sk.name, e->sk.text);
            for (size_t k = 0; k < e->nkeys; k++) {
                const m_entkey *ek = &e->keys[k];
                fprintf(f, "; %s:", ek->index->name);
                if (!ek->index->local) fprintf(f, " %s = \"%s\"", ek->index->pk.name, ek->pk.text);
                if (ek->sk.text) fprintf(f, "%s %s = \"%s\"", ek->index->local ? "" : ",", ek->index->sk.name, ek->sk.text);
                for (size_t w = 0; w < ek->nwhen; w++) fprintf(f, "%s%s = %s", w ? " and " : " while ", ek->when[w].name, ek->when[w].value);
            }
            fprintf(f, "\n");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "Access patterns\n");
    for (size_t i = 0; i < r->nplans; i++)
        fprintf(f, "  %-28s %s\n", r->plans[i].pattern->name, r->plans[i].text);
}

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static size_t entity_index(const qr_model *m, const m_entity *e)
{
    return (size_t)(e - m->entities);
}

static void html_rows(FILE *f, const qr_model *m, const char *pkn, const char *skn, const row *rows, size_t n)
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

void model_render_html(const ck_report *rc, FILE *f)
{
    ck_report *r = (ck_report *)rc;
    const qr_model *m = r->model;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    esc(f, m->name ? m->name : m->path);
    fputs("</title>\n<style>\n"
          "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n"
          "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
          "th,td{border:1px solid #bbb;padding:4px 10px;text-align:left;font-family:ui-monospace,monospace;font-size:13px}\n"
          "th{background:#eee}\ntd.pk{font-weight:bold}\n"
          ".e0 td{background:#eef5ff}.e1 td{background:#eefbea}.e2 td{background:#fff6e5}.e3 td{background:#f6ecff}\n"
          ".e4 td{background:#e9fbfb}.e5 td{background:#fdeef3}.e6 td{background:#f3f3e6}.e7 td{background:#f0f0f0}\n"
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
        row *rows = collect(r, t, NULL, &n);
        if (rows) html_rows(f, m, t->pk.name, t->sk.name, rows, n);
        free(rows);
        for (size_t i = 0; i < t->nidx; i++) {
            const m_index *ix = &t->idx[i];
            fprintf(f, "<h3>%s ", ix->local ? "LSI" : "GSI");
            esc(f, ix->name);
            fprintf(f, " <small>(projects %s)</small></h3>\n", proj_name(ix));
            rows = collect(r, t, ix, &n);
            if (rows) html_rows(f, m, ix->pk.name, ix->sk.name, rows, n);
            free(rows);
        }
    }
    fputs("<h2>Item shapes</h2>\n<table><thead><tr><th>entity</th><th>table</th><th>keys</th></tr></thead><tbody>\n", f);
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
    fputs("<h2>Access patterns</h2>\n<table><thead><tr><th>pattern</th><th>sentence</th><th>served by</th></tr></thead><tbody>\n", f);
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
    fputs("</tbody></table>\n</body></html>\n", f);
}
