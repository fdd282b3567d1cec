/* render.c — `quarry model render`: the single-table layout as the modelling write-ups
 * draw it (partition key, sort key, item type, the patterns each item shape serves), with
 * example items generated from the key templates, then each index's view of them.
 *
 * This file builds the rows and writes them as text; render_html.c writes the same rows
 * as a page. The examples are illustrations made from the formats; they are not data. */
#include "checker/render.h"

#include <stdlib.h>
#include <string.h>

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
        for (size_t j = 0; j < p->nalso; j++)
            mine |= p->also[j] == e;
        if (!mine || !pl->served || pl->path.index != ix) continue;
        if (buf[0]) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, p->name, sizeof buf - strlen(buf) - 1);
    }
    return ck_arena_printf(&r->arena, "%s", buf[0] ? buf : "-");
}

/* The rows of table t (ix NULL) or of index ix, sorted as DynamoDB stores them. */
row *render_collect(ck_report *r, const m_table *t, const m_index *ix, size_t *n)
{
    const qr_model *m = r->model;
    row *rows = calloc(m->nentities * RENDER_EXAMPLES + 1, sizeof *rows);
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
        for (int v = 0; v < RENDER_EXAMPLES; v++) {
            if (ix && !check_item_in_index(e, k, v)) continue;
            row *w = &rows[*n];
            check_item_key(e, pk, v, w->pk, RENDER_CELL);
            if (sk->text) check_item_key(e, sk, v, w->sk, RENDER_CELL);
            w->e = e;
            w->serves = sv;
            int dup = 0;
            for (size_t i = 0; i < *n; i++)
                dup |= strcmp(rows[i].pk, w->pk) == 0 && strcmp(rows[i].sk, w->sk) == 0;
            if (!dup) (*n)++;
        }
    }
    qsort(rows, *n, sizeof *rows, row_cmp);
    return rows;
}

const char *render_projection_name(const m_index *ix)
{
    return ix->projection == MP_ALL         ? "all attributes"
           : ix->projection == MP_KEYS_ONLY ? "keys only"
                                            : "keys and listed attributes";
}

static void text_rows(FILE *f, const char *pkn, const char *skn, const row *rows, size_t n)
{
    int wp = (int)strlen(pkn), ws = skn ? (int)strlen(skn) : 0, wt = 9;
    for (size_t i = 0; i < n; i++) {
        if ((int)strlen(rows[i].pk) > wp) wp = (int)strlen(rows[i].pk);
        if ((int)strlen(rows[i].sk) > ws) ws = (int)strlen(rows[i].sk);
        if ((int)strlen(rows[i].e->name) > wt) wt = (int)strlen(rows[i].e->name);
    }
    fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wp, pkn, ws, skn ? skn : "", wt, "item type",
            "access patterns");
    for (size_t i = 0; i < n; i++) {
        int same = i > 0 && strcmp(rows[i].pk, rows[i - 1].pk) == 0;
        fprintf(f, "  %-*s  %-*s  %-*s  %s\n", wp, same ? "" : rows[i].pk, ws, rows[i].sk, wt,
                rows[i].e->name, rows[i].serves);
    }
}

void model_render_text(const ck_report *rc, FILE *f)
{
    ck_report *r = (ck_report *)rc; /* only its arena is written to */
    const qr_model *m = r->model;
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        fprintf(f, "Table %s  (partition key %s%s%s%s%s; %s)\n", t->name, t->pk.name,
                t->sk.name ? ", sort key " : "", t->sk.name ? t->sk.name : "",
                t->ttl ? ", TTL " : "", t->ttl ? t->ttl : "",
                t->provisioned ? "provisioned" : "on demand");
        size_t n;
        row *rows = render_collect(r, t, NULL, &n);
        if (rows) text_rows(f, t->pk.name, t->sk.name, rows, n);
        free(rows);
        for (size_t i = 0; i < t->nidx; i++) {
            const m_index *ix = &t->idx[i];
            fprintf(f, "\n  %s %s  (partition key %s%s%s; projects %s)\n",
                    ix->local ? "LSI" : "GSI", ix->name, ix->pk.name,
                    ix->sk.name ? ", sort key " : "", ix->sk.name ? ix->sk.name : "",
                    render_projection_name(ix));
            rows = render_collect(r, t, ix, &n);
            if (rows && n)
                text_rows(f, ix->pk.name, ix->sk.name, rows, n);
            else if (rows)
                fprintf(f, "  (no entity writes keys for this index)\n");
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
                if (ek->sk.text)
                    fprintf(f, "%s %s = \"%s\"", ek->index->local ? "" : ",", ek->index->sk.name,
                            ek->sk.text);
                for (size_t w = 0; w < ek->nwhen; w++)
                    fprintf(f, "%s%s = %s", w ? " and " : " while ", ek->when[w].name,
                            ek->when[w].value);
            }
            fprintf(f, "\n");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "Access patterns\n");
    for (size_t i = 0; i < r->nplans; i++)
        fprintf(f, "  %-28s %s\n", r->plans[i].pattern->name, r->plans[i].text);
    model_money_text(r, f);
}
