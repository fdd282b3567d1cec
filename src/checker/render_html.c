/* render_html.c — `quarry model render --html`: one self-contained page (inline CSS, no
 * scripts, nothing to fetch), readable from a file without a server. It shows the verdict
 * and every finding of the check (listed at the top and placed beside the table, index,
 * entity or pattern it concerns), the example items of each table and index with their
 * attributes, the item shapes with their sizes and rates, and the monthly costs. A model
 * that does not load gets a page of its errors beside the lines of the file, with the
 * layout of the parts that load. Every model string is HTML-escaped. */
#include "checker/render.h"
#include "util/readfile.h"

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

static const char *const STYLE =
    "<style>\n"
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
    "th,td{border:1px solid #bbb;padding:4px 10px;text-align:left;vertical-align:top;"
    "font-family:ui-monospace,monospace;font-size:13px}\n"
    "th{background:#eee}\ntd.pk{font-weight:bold;background:#fff}\n"
    ".e0 td{background:#eef5ff}.e1 td{background:#eefbea}.e2 td{background:#fff6e5}.e3 "
    "td{background:#f6ecff}\n"
    ".e4 td{background:#e9fbfb}.e5 td{background:#fdeef3}.e6 td{background:#f3f3e6}.e7 "
    "td{background:#f0f0f0}\n"
    ".ok{color:#17752b}.fail{color:#b3261e;font-weight:bold}\n"
    ".attr{display:inline-block;margin-right:1em}.attr i{color:#666;font-style:normal}\n"
    ".verdict{font-size:1.1em;padding:6px 10px;border-radius:4px}\n"
    ".verdict.ok{background:#e6f4ea}.verdict.fail{background:#fce8e6}\n"
    ".finding{margin:4px 0;padding:4px 8px;border-left:4px solid #888;background:#fafafa;"
    "font-size:13px}\n"
    ".finding.error{border-color:#b3261e;background:#fce8e6}\n"
    ".finding.warning{border-color:#b06000;background:#fef7e0}\n"
    ".finding.note{border-color:#1967d2;background:#e8f0fe}\n"
    ".sev{font-weight:bold;text-transform:uppercase;font-size:11px}\n"
    "tr.error td:first-child{box-shadow:inset 4px 0 #b3261e}\n"
    "tr.warning td:first-child{box-shadow:inset 4px 0 #b06000}\n"
    "a.mark{font-size:11px;font-weight:bold;margin-left:6px;text-decoration:none}\n"
    "a.mark.error{color:#b3261e}a.mark.warning{color:#b06000}a.mark.note{color:#1967d2}\n"
    "td.findings{background:#fff;border-top:none}\n"
    ".meta{color:#555;font-size:14px}\n"
    "pre.src{margin:0}.src td{border:none;padding:0 8px}.src td.ln{color:#888;"
    "text-align:right}\n"
    "</style>";

/* A count as the model file writes one: 1M, 20M, 1.5K, 200. */
static void put_count(FILE *f, double v)
{
    if (v >= 1e9)
        fprintf(f, "%gB", v / 1e9);
    else if (v >= 1e6)
        fprintf(f, "%gM", v / 1e6);
    else if (v >= 1e3)
        fprintf(f, "%gK", v / 1e3);
    else
        fprintf(f, "%g", v);
}

static void put_size(FILE *f, double bytes)
{
    if (bytes >= 1024.0 * 1024)
        fprintf(f, "%.3g MB", bytes / (1024.0 * 1024));
    else if (bytes >= 1024)
        fprintf(f, "%.3g KB", bytes / 1024);
    else
        fprintf(f, "%.0f B", bytes);
}

/* The page's view of the report: where each finding belongs. */
typedef struct page {
    ck_report *r;
    const qr_model *m;
    render_place *place; /* one per finding shown */
    size_t nfind;        /* the findings of r shown: all, or none for a model's parts */
} page;

static const char *sev_class(ck_severity s)
{
    return check_severity_name(s);
}

/* The worst severity of the findings on element what, or -1 when it has none. */
static int worst(const page *pg, render_place_kind kind, const void *what)
{
    int w = -1;
    for (size_t i = 0; i < pg->nfind; i++)
        if (pg->place[i].kind == kind && pg->place[i].what == what &&
            (int)pg->r->findings[i].severity > w)
            w = (int)pg->r->findings[i].severity;
    return w;
}

/* Opens a table row with id prefix and n, marked by the severity w of its findings
 * (none when w < 0), and its first cell. */
static void open_marked_row(FILE *f, char prefix, size_t n, int w)
{
    fprintf(f, "<tr id=\"%c%zu\"%s%s%s><td>", prefix, n, w >= 0 ? " class=\"" : "",
            w >= 0 ? sev_class((ck_severity)w) : "", w >= 0 ? "\"" : "");
}

static void finding_block(FILE *f, const page *pg, size_t i)
{
    const ck_finding *fd = &pg->r->findings[i];
    fprintf(f, "<div class=\"finding %s\" id=\"f%zu\"><span class=\"sev\">%s</span> <code>",
            sev_class(fd->severity), i, check_severity_name(fd->severity));
    esc(f, fd->rule);
    fputs("</code> ", f);
    esc(f, fd->message);
    fprintf(f, " <small>(line %d, column %d)</small><br><b>why:</b> ", fd->pos.line, fd->pos.col);
    esc(f, fd->explanation);
    fputs("<br><b>fix:</b> ", f);
    esc(f, fd->fix);
    fputs("</div>\n", f);
}

/* The findings placed on element what, errors first. */
static void findings_of(FILE *f, const page *pg, render_place_kind kind, const void *what)
{
    for (int sev = CK_ERROR; sev >= CK_NOTE; sev--)
        for (size_t i = 0; i < pg->nfind; i++)
            if (pg->place[i].kind == kind && pg->place[i].what == what &&
                (int)pg->r->findings[i].severity == sev)
                finding_block(f, pg, i);
}

/* The same as a row under a table's row of the element, spanning its cols columns. */
static void findings_row(FILE *f, const page *pg, render_place_kind kind, const void *what,
                         int cols)
{
    if (worst(pg, kind, what) < 0) return;
    fprintf(f, "<tr><td class=\"findings\" colspan=\"%d\">\n", cols);
    findings_of(f, pg, kind, what);
    fputs("</td></tr>\n", f);
}

/* The id of the element at pl on the page. */
static const char *place_id(const page *pg, render_place pl, char *buf, size_t size)
{
    const qr_model *m = pg->m;
    snprintf(buf, size, "findings"); /* the model as a whole: the list itself */
    switch (pl.kind) {
    case RP_TABLE:
        snprintf(buf, size, "t%zu", (size_t)((const m_table *)pl.what - m->tables));
        break;
    case RP_INDEX: {
        const m_index *ix = pl.what;
        for (size_t ti = 0; ti < m->ntables; ti++)
            if (ix >= m->tables[ti].idx && ix < m->tables[ti].idx + m->tables[ti].nidx)
                snprintf(buf, size, "t%zu-i%zu", ti, (size_t)(ix - m->tables[ti].idx));
        break;
    }
    case RP_ENTITY:
        snprintf(buf, size, "e%zu", (size_t)((const m_entity *)pl.what - m->entities));
        break;
    case RP_PATTERN:
        snprintf(buf, size, "p%zu", (size_t)((const m_pattern *)pl.what - m->patterns));
        break;
    case RP_DENORM:
        snprintf(buf, size, "d%zu", (size_t)((const m_denorm *)pl.what - m->denorms));
        break;
    case RP_AGGREGATE:
        snprintf(buf, size, "g%zu", (size_t)((const m_aggregate *)pl.what - m->aggregates));
        break;
    default:
        break;
    }
    return buf;
}

/* The verdict, the list of every finding (each linked to where it is placed) and the
 * findings about the model as a whole. */
static void html_findings(FILE *f, const page *pg)
{
    const ck_report *r = pg->r;
    fprintf(f, "<section id=\"findings\">\n<p class=\"verdict %s\">", r->errors ? "fail" : "ok");
    fprintf(f, "%s: %d error%s, %d warning%s, %d note%s</p>\n",
            r->errors ? "<code>quarry model check</code> rejects this model"
                      : "<code>quarry model check</code> accepts this model",
            r->errors, r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s",
            r->notes, r->notes == 1 ? "" : "s");
    if (r->nfindings == 0) {
        fputs("</section>\n", f);
        return;
    }
    fputs("<h2>Findings</h2>\n<table><thead><tr><th>severity</th><th>rule</th><th>about</th>"
          "<th>finding</th><th>line</th></tr></thead><tbody>\n",
          f);
    for (int sev = CK_ERROR; sev >= CK_NOTE; sev--)
        for (size_t i = 0; i < r->nfindings; i++) {
            const ck_finding *fd = &r->findings[i];
            if ((int)fd->severity != sev) continue;
            char id[64];
            fprintf(f, "<tr class=\"%s\"><td class=\"sev\">%s</td><td>", sev_class(fd->severity),
                    check_severity_name(fd->severity));
            esc(f, fd->rule);
            fprintf(f, "</td><td><a href=\"#%s\">", place_id(pg, pg->place[i], id, sizeof id));
            esc(f, fd->subject);
            fputs("</a></td><td>", f);
            esc(f, fd->message);
            fprintf(f, " <a href=\"#f%zu\">(why, fix)</a></td><td>%d:%d</td></tr>\n", i,
                    fd->pos.line, fd->pos.col);
        }
    fputs("</tbody></table>\n", f);
    findings_of(f, pg, RP_MODEL, NULL);
    fputs("</section>\n", f);
}

static void key_header(FILE *f, const m_keyattr *k, const m_keyattr *parts, size_t nparts)
{
    if (nparts == 0) {
        esc(f, k->name ? k->name : "");
        return;
    }
    for (size_t i = 0; i < nparts; i++) {
        if (i) fputs(" + ", f);
        esc(f, parts[i].name);
    }
}

static void attr_span(FILE *f, const char *name, const char *value)
{
    fputs("<span class=\"attr\"><i>", f);
    esc(f, name);
    fputs("</i> ", f);
    esc(f, value);
    fputs("</span> ", f);
}

/* The attributes item w holds in table t (ix NULL) or index ix: an index holds the table's
 * keys and the attributes it projects. */
static void row_attributes(FILE *f, const m_table *t, const m_index *ix, const row *w)
{
    if (ix) {
        if (!ix->local) attr_span(f, t->pk.name, w->tpk);
        if (t->sk.name) attr_span(f, t->sk.name, w->tsk);
    }
    const m_entity *e = w->e;
    for (size_t a = 0; a < e->nattrs; a++) {
        const m_attr *at = &e->attrs[a];
        if (render_is_key_attribute(t, ix, at->name) || !render_projects(ix, at)) continue;
        char v[RENDER_CELL];
        render_value(e, at, w->part, w->k, v, sizeof v);
        attr_span(f, at->name, v);
    }
}

static void html_rows(FILE *f, const page *pg, const m_table *t, const m_index *ix, const row *rows,
                      size_t n)
{
    const qr_model *m = pg->m;
    fputs("<table><thead><tr><th>", f);
    if (ix && !ix->local)
        key_header(f, &ix->pk, ix->pk_parts, ix->npk_parts);
    else
        esc(f, t->pk.name);
    int has_sk = ix ? ix->sk.name != NULL : t->sk.name != NULL;
    if (has_sk) fputs("</th><th>", f);
    if (ix && has_sk)
        key_header(f, &ix->sk, ix->sk_parts, ix->nsk_parts);
    else if (has_sk)
        esc(f, t->sk.name);
    fputs("</th><th>item type</th><th>attributes</th><th>access patterns</th></tr></thead>"
          "<tbody>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        size_t ei = (size_t)(rows[i].e - m->entities);
        int w = worst(pg, RP_ENTITY, rows[i].e);
        fprintf(f, "<tr class=\"e%zu\">", ei % 8);
        if (i == 0 || strcmp(rows[i].pk, rows[i - 1].pk) != 0) {
            size_t span = 1;
            while (i + span < n && strcmp(rows[i + span].pk, rows[i].pk) == 0)
                span++;
            fprintf(f, "<td class=\"pk\" rowspan=\"%zu\">", span);
            esc(f, rows[i].pk);
            fputs("</td>", f);
        }
        if (has_sk) {
            fputs("<td>", f);
            esc(f, rows[i].sk);
            fputs("</td>", f);
        }
        fputs("<td>", f);
        esc(f, rows[i].e->name);
        if (w >= 0)
            fprintf(f, " <a class=\"mark %s\" href=\"#e%zu\">%s</a>", sev_class((ck_severity)w), ei,
                    check_severity_name((ck_severity)w));
        fputs("</td><td>", f);
        row_attributes(f, t, ix, &rows[i]);
        fputs("</td><td>", f);
        esc(f, rows[i].serves);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

static void key_meta(FILE *f, const char *what, const m_keyattr *k, const m_keyattr *parts,
                     size_t nparts)
{
    fprintf(f, "%s ", what);
    if (nparts == 0) {
        esc(f, k->name);
        fprintf(f, " (%c)", k->type ? k->type : 'S');
        return;
    }
    for (size_t i = 0; i < nparts; i++) {
        fputs(i ? ", " : "", f);
        esc(f, parts[i].name);
        fprintf(f, " (%c)", parts[i].type ? parts[i].type : 'S');
    }
}

/* Links to the findings placed on an entity that are about its keys in table t (ix NULL)
 * or index ix: subjects "entity E on table T" and "entity E on GSI I of table T". */
static void view_links(FILE *f, const page *pg, const m_table *t, const m_index *ix)
{
    char view[600];
    if (ix)
        snprintf(view, sizeof view, " on %s %s of table %s", ix->local ? "LSI" : "GSI", ix->name,
                 t->name);
    else
        snprintf(view, sizeof view, " on table %s", t->name);
    size_t vl = strlen(view), shown = 0;
    for (size_t i = 0; i < pg->nfind; i++) {
        const ck_finding *fd = &pg->r->findings[i];
        size_t sl = strlen(fd->subject);
        if (sl <= vl || strcmp(fd->subject + sl - vl, view) != 0) continue;
        fputs(shown++ ? ", " : "<p class=\"meta\">About the keys here: ", f);
        fprintf(f, "<a class=\"mark %s\" href=\"#f%zu\">%s ", sev_class(fd->severity), i,
                check_severity_name(fd->severity));
        esc(f, fd->rule);
        fputs("</a> (", f);
        char *about = strndup(fd->subject, sl - vl);
        if (about) esc(f, about);
        free(about);
        fputs(")", f);
    }
    if (shown) fputs("</p>\n", f);
}

static void html_table(FILE *f, const page *pg, size_t ti)
{
    ck_report *r = pg->r;
    const m_table *t = &pg->m->tables[ti];
    fprintf(f, "<h2 id=\"t%zu\">Table ", ti);
    esc(f, t->name);
    fputs("</h2>\n<p class=\"meta\">", f);
    key_meta(f, "partition key", &t->pk, NULL, 0);
    if (t->sk.name) key_meta(f, ", sort key", &t->sk, NULL, 0);
    if (t->provisioned)
        fprintf(f, "; provisioned %g RCU, %g WCU", t->rcu, t->wcu);
    else
        fputs("; on demand", f);
    if (t->ttl) {
        fputs("; TTL ", f);
        esc(f, t->ttl);
    }
    if (t->existing) fputs("; exists already", f);
    if (t->cql) fputs("; a CQL table", f);
    fputs("</p>\n", f);
    findings_of(f, pg, RP_TABLE, t);
    view_links(f, pg, t, NULL);
    size_t n;
    row *rows = render_collect(r, t, NULL, &n);
    if (rows) html_rows(f, pg, t, NULL, rows, n);
    free(rows);
    for (size_t i = 0; i < t->nidx; i++) {
        const m_index *ix = &t->idx[i];
        fprintf(f, "<h3 id=\"t%zu-i%zu\">%s ", ti, i, ix->local ? "LSI" : "GSI");
        esc(f, ix->name);
        fputs("</h3>\n<p class=\"meta\">", f);
        if (ix->local)
            key_meta(f, "partition key", &t->pk, NULL, 0);
        else
            key_meta(f, "partition key", &ix->pk, ix->pk_parts, ix->npk_parts);
        if (ix->sk.name) key_meta(f, ", sort key", &ix->sk, ix->sk_parts, ix->nsk_parts);
        fprintf(f, "; projects %s", render_projection_name(ix));
        for (size_t j = 0; ix->projection == MP_INCLUDE && j < ix->ninclude; j++) {
            fputs(j ? ", " : " (", f);
            esc(f, ix->include[j]);
            if (j + 1 == ix->ninclude) fputs(")", f);
        }
        if (ix->rcu > 0 || ix->wcu > 0)
            fprintf(f, "; provisioned %g RCU, %g WCU", ix->rcu, ix->wcu);
        fputs("</p>\n", f);
        findings_of(f, pg, RP_INDEX, ix);
        view_links(f, pg, t, ix);
        rows = render_collect(r, t, ix, &n);
        if (rows && n)
            html_rows(f, pg, t, ix, rows, n);
        else if (rows)
            fputs("<p class=\"meta\">No entity writes keys for this index.</p>\n", f);
        free(rows);
    }
}

static void template_text(FILE *f, const char *attr, const m_template *t)
{
    esc(f, attr);
    fputs(" = ", f);
    esc(f, t->text);
}

static void entity_keys(FILE *f, const m_entity *e)
{
    template_text(f, e->table->pk.name, &e->pk);
    if (e->sk.text) {
        fputs(", ", f);
        template_text(f, e->table->sk.name, &e->sk);
    }
    for (size_t k = 0; k < e->nkeys; k++) {
        const m_entkey *ek = &e->keys[k];
        fputs("<br>", f);
        esc(f, ek->index->name);
        fputs(": ", f);
        if (!ek->index->local && ek->pk.text) {
            template_text(f, ek->index->npk_parts ? "key" : ek->index->pk.name, &ek->pk);
            if (ek->sk.text) fputs(", ", f);
        }
        if (ek->sk.text)
            template_text(f, ek->index->nsk_parts ? "key" : ek->index->sk.name, &ek->sk);
        for (size_t w = 0; w < ek->nwhen; w++) {
            fputs(w ? " and " : " while ", f);
            esc(f, ek->when[w].name);
            fputs(" = ", f);
            esc(f, ek->when[w].value);
        }
    }
}

/* One attribute as the model declares it: type or format, typical size, an example. */
static void attr_line(FILE *f, const m_entity *e, const m_attr *a)
{
    fputs("<code>", f);
    esc(f, a->name);
    fputs("</code> ", f);
    if (a->cql_type)
        esc(f, a->cql_type);
    else if (a->format != MF_NONE)
        esc(f, model_format_name(a->format));
    else
        esc(f, model_type_name(a->type));
    if (a->format == MF_PADDED) fprintf(f, " (%d digits)", a->width);
    if (a->format == MF_SHARD) fprintf(f, " (%d shards)", a->shards);
    for (size_t v = 0; a->format == MF_ENUM && v < a->nvalues; v++) {
        fputs(v ? ", " : " (", f);
        esc(f, a->values[v]);
        if (v + 1 == a->nvalues) fputs(")", f);
    }
    if (a->cardinality > 0) {
        fputs(", ", f);
        put_count(f, a->cardinality);
        fputs(" values", f);
    }
    if (a->hottest > 0) fprintf(f, ", hottest %g%%", a->hottest * 100);
    fputs(", ~", f);
    put_size(f, model_attr_size(a));
    if (a->copy_of) {
        fputs(", copy of ", f);
        esc(f, a->copy_of);
    }
    char v[RENDER_CELL];
    render_value(e, a, 0, 0, v, sizeof v);
    fputs(", e.g. <code>", f);
    esc(f, v);
    fputs("</code>", f);
}

static void html_entities(FILE *f, const page *pg)
{
    const qr_model *m = pg->m;
    fputs("<h2>Item shapes</h2>\n<table><thead><tr><th>entity</th><th>table</th><th>keys</th>"
          "<th>items</th><th>item size</th><th>growth a day</th><th>kept</th>"
          "<th>attributes</th></tr></thead><tbody>\n",
          f);
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        int w = worst(pg, RP_ENTITY, e);
        fprintf(f, "<tr class=\"e%zu%s%s\" id=\"e%zu\"><td>", ei % 8, w >= 0 ? " " : "",
                w >= 0 ? sev_class((ck_severity)w) : "", ei);
        esc(f, e->name);
        if (e->counter) fputs(" <small>(counter)</small>", f);
        fputs("</td><td>", f);
        esc(f, e->table->name);
        fputs("</td><td>", f);
        entity_keys(f, e);
        fputs("</td><td>", f);
        if (e->count > 0) put_count(f, e->count);
        fputs("</td><td>", f);
        if (e->item_size > 0)
            put_size(f, e->item_size);
        else
            fputs("1 KB assumed", f);
        fputs("</td><td>", f);
        if (e->growth_per_day > 0) {
            put_count(f, e->growth_per_day);
            fputs(" per partition", f);
        }
        fputs("</td><td>", f);
        if (e->retention_days > 0)
            fprintf(f, "%g days", e->retention_days);
        else
            fputs("forever", f);
        fputs("</td><td>", f);
        for (size_t a = 0; a < e->nattrs; a++) {
            if (a) fputs("<br>", f);
            attr_line(f, e, &e->attrs[a]);
        }
        fputs("</td></tr>\n", f);
        findings_row(f, pg, RP_ENTITY, e, 8);
    }
    fputs("</tbody></table>\n", f);
}

static void html_patterns(FILE *f, const page *pg)
{
    const ck_report *r = pg->r;
    fputs("<h2>Access patterns</h2>\n<table><thead><tr><th>pattern</th><th>sentence</th>"
          "<th>kind</th><th>rate</th><th>served by</th></tr></thead><tbody>\n",
          f);
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        int w = worst(pg, RP_PATTERN, p);
        open_marked_row(f, 'p', (size_t)(p - pg->m->patterns), w);
        esc(f, p->name);
        fputs("</td><td>", f);
        esc(f, p->sentence ? p->sentence : "");
        fputs("</td><td>", f);
        esc(f, model_kind_name(p->kind));
        fputs("</td><td>", f);
        if (p->rps > 0) fprintf(f, "%g/s", p->rps);
        if (p->limit > 0) fprintf(f, "%slimit %g", p->rps > 0 ? ", " : "", p->limit);
        if (p->result_size > 0)
            fprintf(f, "%s%g items", p->rps > 0 || p->limit > 0 ? ", " : "", p->result_size);
        if (p->consistent) fputs(", strongly consistent", f);
        fprintf(f, "</td><td class=\"%s\">", pl->served ? "ok" : "fail");
        esc(f, pl->text);
        fputs("</td></tr>\n", f);
        findings_row(f, pg, RP_PATTERN, p, 5);
    }
    fputs("</tbody></table>\n", f);
}

static const char *strategy_name(m_strategy s)
{
    return s == MS_TRANSACTION ? "same-transaction"
           : s == MS_STREAM    ? "stream"
           : s == MS_JOB       ? "background-job"
           : s == MS_STALE     ? "accepted-staleness"
                               : "none";
}

static void html_copies(FILE *f, const page *pg)
{
    const qr_model *m = pg->m;
    if (m->ndenorms) {
        fputs("<h2>Denormalised copies</h2>\n<table><thead><tr><th>source</th><th>copies</th>"
              "<th>kept by</th></tr></thead><tbody>\n",
              f);
        for (size_t i = 0; i < m->ndenorms; i++) {
            const m_denorm *d = &m->denorms[i];
            int w = worst(pg, RP_DENORM, d);
            open_marked_row(f, 'd', i, w);
            esc(f, d->source);
            fputs("</td><td>", f);
            for (size_t c = 0; c < d->ncopies; c++) {
                fputs(c ? ", " : "", f);
                esc(f, d->copies[c]);
            }
            fprintf(f, "</td><td>%s", strategy_name(d->strategy));
            if (d->staleness) {
                fputs(" (", f);
                esc(f, d->staleness);
                fputs(")", f);
            }
            if (d->fan_out > 0) fprintf(f, ", up to %g copies per source", d->fan_out);
            fputs("</td></tr>\n", f);
            findings_row(f, pg, RP_DENORM, d, 3);
        }
        fputs("</tbody></table>\n", f);
    }
    if (m->naggregates) {
        fputs("<h2>Aggregates</h2>\n<table><thead><tr><th>aggregate</th><th>of</th>"
              "<th>kept in</th><th>kept by</th></tr></thead><tbody>\n",
              f);
        for (size_t i = 0; i < m->naggregates; i++) {
            const m_aggregate *g = &m->aggregates[i];
            int w = worst(pg, RP_AGGREGATE, g);
            open_marked_row(f, 'g', i, w);
            esc(f, g->name);
            fputs("</td><td>", f);
            if (g->function) {
                esc(f, g->function);
                fputs(" of ", f);
            }
            esc(f, g->of ? g->of->name : "");
            fputs("</td><td>", f);
            esc(f, g->counter ? g->counter->name : "");
            fprintf(f, "</td><td>%s</td></tr>\n", strategy_name(g->strategy));
            findings_row(f, pg, RP_AGGREGATE, g, 4);
        }
        fputs("</tbody></table>\n", f);
    }
}

static void page_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    esc(f, title);
    fprintf(f, "</title>\n%s</head><body>\n<h1>", STYLE);
    esc(f, title);
    fputs("</h1>\n", f);
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
    ck_report *r = (ck_report *)rc; /* only its arena is written to */
    const qr_model *m = r->model;
    page pg = {r, m, calloc(r->nfindings + 1, sizeof *pg.place), r->nfindings};
    if (pg.place == NULL) {
        fputs("<!DOCTYPE html>\n<p>out of memory</p>\n", f);
        return;
    }
    for (size_t i = 0; i < r->nfindings; i++)
        pg.place[i] = render_finding_place(m, &r->findings[i]);
    page_head(f, m->name ? m->name : m->path);
    if (m->description) {
        fputs("<p>", f);
        esc(f, m->description);
        fputs("</p>\n", f);
    }
    fputs("<p class=\"meta\">", f);
    esc(f, m->path);
    fputs("</p>\n", f);
    html_findings(f, &pg);
    for (size_t ti = 0; ti < m->ntables; ti++)
        html_table(f, &pg, ti);
    html_entities(f, &pg);
    html_patterns(f, &pg);
    html_copies(f, &pg);
    html_money(f, r);
    fputs("</body></html>\n", f);
    free(pg.place);
}

/* The largest model file load.c reads. */
#define MAX_SOURCE ((size_t)16 << 20)

/* The layout of the parts of a file that load (r, the check of them), and what was left
 * out; the check's findings wait for the whole file. */
static void html_parts(FILE *f, ck_report *r, const char *const *left_out, size_t nleft)
{
    page pg = {r, r->model, NULL, 0};
    fputs("<h2>What loads</h2>\n<p>The layout of the parts of the file that load", f);
    for (size_t i = 0; i < nleft; i++) {
        fputs(i ? ", " : ", without ", f);
        esc(f, left_out[i]);
    }
    fputs(". The check's findings come once the whole file loads.</p>\n", f);
    for (size_t ti = 0; ti < r->model->ntables; ti++)
        html_table(f, &pg, ti);
    if (r->model->nentities) html_entities(f, &pg);
    if (r->nplans) html_patterns(f, &pg);
    html_copies(f, &pg);
}

void model_render_html_load_errors(const char *path, const model_errors *errs, FILE *f)
{
    char *text = NULL;
    size_t len = 0;
    if (readfile_path(path, MAX_SOURCE, &text, &len)) text = NULL;
    qr_err err;
    err_init(&err);
    qr_model *part = NULL;
    const char **left_out = NULL;
    size_t nleft = 0;
    ck_report *pr = NULL;
    if (model_load_partial(path, &part, &left_out, &nleft, &err) == 0 && check_run(part, &pr, &err))
        pr = NULL;
    err_clear(&err);
    page_head(f, path);
    size_t total = errs->n + errs->dropped;
    fprintf(f,
            "<section id=\"findings\">\n<p class=\"verdict fail\">The model does not load: "
            "%zu error%s, each marked under its line of the file below. <code>quarry model "
            "check</code> judges the model once %s fixed.</p>\n",
            total, total == 1 ? "" : "s", total == 1 ? "it is" : "they are");
    fputs("<h2>Findings</h2>\n<table><thead><tr><th>severity</th><th>finding</th><th>line</th>"
          "</tr></thead><tbody>\n",
          f);
    for (size_t i = 0; i < errs->n; i++) {
        fprintf(f, "<tr class=\"error\"><td class=\"sev\">error</td><td><a href=\"#f%zu\">", i);
        esc(f, errs->v[i].message);
        fprintf(f, "</a></td><td>%d:%d</td></tr>\n", errs->v[i].line, errs->v[i].col);
    }
    fputs("</tbody></table>\n", f);
    if (errs->dropped) fprintf(f, "<p>%zu more errors not shown.</p>\n", errs->dropped);
    fputs("</section>\n", f);
    if (pr) html_parts(f, pr, left_out, nleft);
    fputs("<h2>The file</h2>\n", f);
    if (text == NULL) {
        fputs("<p class=\"meta\">The file cannot be read back to show its lines.</p>\n", f);
        for (size_t i = 0; i < errs->n; i++) {
            fprintf(f, "<div class=\"finding error\" id=\"f%zu\"><span class=\"sev\">error</span> ",
                    i);
            esc(f, errs->v[i].message);
            fprintf(f, " <small>(line %d, column %d)</small></div>\n", errs->v[i].line,
                    errs->v[i].col);
        }
    } else {
        /* each line of the file, each error under the line it is on (errs is in file order) */
        fputs("<table class=\"src\"><tbody>\n", f);
        size_t next = 0;
        int line = 1;
        for (const char *s = text; s < text + len; line++) {
            const char *eol = memchr(s, '\n', (size_t)(text + len - s));
            size_t l = eol ? (size_t)(eol - s) : (size_t)(text + len - s);
            int bad = next < errs->n && errs->v[next].line == line;
            fprintf(f, "<tr%s><td class=\"ln\">%d</td><td><pre class=\"src\">",
                    bad ? " class=\"error\"" : "", line);
            char *copy = strndup(s, l);
            if (copy) esc(f, copy);
            free(copy);
            fputs("</pre></td></tr>\n", f);
            for (; next < errs->n && errs->v[next].line <= line; next++) {
                fprintf(f,
                        "<tr><td></td><td><div class=\"finding error\" id=\"f%zu\">"
                        "<span class=\"sev\">error</span> ",
                        next);
                esc(f, errs->v[next].message);
                fprintf(f, " <small>(line %d, column %d)</small></div></td></tr>\n",
                        errs->v[next].line, errs->v[next].col);
            }
            s += l + (eol != NULL);
        }
        /* errors past the end of the file (an unexpected end) */
        for (; next < errs->n; next++) {
            fprintf(f,
                    "<tr><td></td><td><div class=\"finding error\" id=\"f%zu\">"
                    "<span class=\"sev\">error</span> ",
                    next);
            esc(f, errs->v[next].message);
            fprintf(f, " <small>(line %d, column %d)</small></div></td></tr>\n", errs->v[next].line,
                    errs->v[next].col);
        }
        fputs("</tbody></table>\n", f);
    }
    fputs("</body></html>\n", f);
    free(text);
    check_free(pr);
    model_free(part);
}
