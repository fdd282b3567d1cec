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
    fprintf(f, "\n%s%d error%s, %d warning%s, %d note%s%s\n", r->errors ? red : green, r->errors,
            r->errors == 1 ? "" : "s", r->warnings, r->warnings == 1 ? "" : "s", r->notes,
            r->notes == 1 ? "" : "s", off);
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
    return root;
}
