/* render.c — `quarry model render`: the single-table layout as the modelling write-ups
 * draw it (partition key, sort key, item type, the patterns each item shape serves), with
 * example items generated from the key templates, then each index's view of them.
 *
 * This file builds the rows, places the check's findings on the model's elements and
 * writes the rows as text; render_html.c writes the same rows and findings as a page. The
 * examples are illustrations made from the formats; they are not data. */
#include "checker/render.h"

#include <stdlib.h>
#include <string.h>

/* Two key values as DynamoDB orders them: numbers by value, strings and binaries by
 * their bytes (UTF-8 order for strings); a multi-attribute key part by part, each by its
 * type (types holds one letter a part; the rendered parts are joined by ", "). */
static int key_cmp(const char *a, const char *b, const char *types)
{
    for (; *types; types++) {
        const char *ea = types[1] ? strstr(a, ", ") : NULL, *eb = types[1] ? strstr(b, ", ") : NULL;
        size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
        if (*types == 'N') {
            double x = strtod(a, NULL), y = strtod(b, NULL);
            if (x != y) return x < y ? -1 : 1;
        }
        int c = strncmp(a, b, la < lb ? la : lb);
        if (c == 0 && la != lb) c = la < lb ? -1 : 1;
        if (c || ea == NULL || eb == NULL) return c ? c : ea ? 1 : eb ? -1 : 0;
        a = ea + 2;
        b = eb + 2;
    }
    return strcmp(a, b);
}

/* The type letters of a key: one, or one per part of a multi-attribute key. */
static void key_types(const m_keyattr *k, const m_keyattr *parts, size_t nparts, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < nparts && i < QR_MODEL_MAX_KEY_PARTS; i++)
        out[n++] = parts[i].type ? parts[i].type : 'S';
    if (n == 0) out[n++] = k->type ? k->type : 'S';
    out[n] = '\0';
}

/* Two rows of one entity of a CQL table as its clustering columns order them: each column
 * by its type, in its CLUSTERING ORDER (DESC reverses it). */
static int clustering_cmp(const row *x, const row *y)
{
    const m_entity *e = x->e;
    for (size_t i = 0; i < e->sk.nseg; i++) {
        const m_seg *s = &e->sk.seg[i];
        if (!s->is_var) continue;
        char u[RENDER_CELL], v[RENDER_CELL];
        check_partition_value(e, s->attr, x->part, x->k, u, sizeof u);
        check_partition_value(e, s->attr, y->part, y->k, v, sizeof v);
        int c = key_cmp(u, v, s->attr->type == MT_NUMBER ? "N" : "S");
        if (c) return model_clustering_order(e->table, s->text) < 0 ? -c : c;
    }
    return 0;
}

static int row_cmp(const void *a, const void *b)
{
    const row *x = a, *y = b;
    int c = key_cmp(x->pk, y->pk, x->pktypes);
    if (c == 0 && x->clustered && x->e == y->e) c = clustering_cmp(x, y);
    if (c == 0) c = key_cmp(x->sk, y->sk, x->sktypes);
    if (c == 0) c = strcmp(x->tpk, y->tpk); /* equal index keys: any order, but always one */
    return c ? c : strcmp(x->tsk, y->tsk);
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

row *render_collect(ck_report *r, const m_table *t, const m_index *ix, size_t *n)
{
    const qr_model *m = r->model;
    row *rows = calloc(m->nentities * RENDER_PARTITIONS * RENDER_EXAMPLES + 1, sizeof *rows);
    *n = 0;
    if (rows == NULL) return NULL;
    char pkt[QR_MODEL_MAX_KEY_PARTS + 1], skt[QR_MODEL_MAX_KEY_PARTS + 1];
    if (ix && !ix->local)
        key_types(&ix->pk, ix->pk_parts, ix->npk_parts, pkt);
    else
        key_types(&t->pk, NULL, 0, pkt);
    if (ix)
        key_types(&ix->sk, ix->sk_parts, ix->nsk_parts, skt);
    else
        key_types(&t->sk, NULL, 0, skt);
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        if (e->table != t) continue;
        const m_entkey *k = ix ? model_entity_key(e, ix) : NULL;
        if (ix && k == NULL) continue;
        const m_template *pk = ix ? (ix->local ? &e->pk : &k->pk) : &e->pk;
        const m_template *sk = ix ? &k->sk : &e->sk;
        const char *sv = serves(r, e, ix);
        int items = model_template_is_constant(&e->sk) ? 1 : RENDER_EXAMPLES;
        for (int part = 0; part < RENDER_PARTITIONS; part++)
            for (int v = 0; v < items; v++) {
                int ex = part * RENDER_EXAMPLES + v; /* distinct items across partitions */
                if (ix && !check_partition_in_index(e, k, part, ex)) continue;
                row *w = &rows[*n];
                check_partition_key(e, &e->pk, part, ex, w->tpk, RENDER_CELL);
                if (e->sk.text) check_partition_key(e, &e->sk, part, ex, w->tsk, RENDER_CELL);
                int dup = 0; /* the same item (one table key) is one row */
                for (size_t i = 0; i < *n && !dup; i++)
                    dup = strcmp(rows[i].tpk, w->tpk) == 0 && strcmp(rows[i].tsk, w->tsk) == 0;
                if (dup) {
                    memset(w, 0, sizeof *w);
                    continue;
                }
                check_partition_key(e, pk, part, ex, w->pk, RENDER_CELL);
                if (sk->text) check_partition_key(e, sk, part, ex, w->sk, RENDER_CELL);
                memcpy(w->pktypes, pkt, sizeof pkt);
                memcpy(w->sktypes, skt, sizeof skt);
                w->e = e;
                w->clustered = t->cql && ix == NULL;
                w->part = part;
                w->k = ex;
                w->serves = sv;
                (*n)++;
            }
    }
    qsort(rows, *n, sizeof *rows, row_cmp);
    return rows;
}

/* Whether copy attribute a of example item (part, k) of e names example item (sp, sk) of
 * its source: each variable of the source's key templates has the same value in both. */
static int copy_names(const m_entity *e, const m_attr *a, int part, int k, int sp, int sk)
{
    const m_entity *src = a->copy_entity;
    const m_template *keys[2] = {&src->pk, &src->sk};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < keys[t]->nseg; i++) {
            const m_seg *s = &keys[t]->seg[i];
            if (!s->is_var) continue;
            const m_attr *mine = model_copy_key_attr(e, a, s->text);
            if (mine == NULL) return 0;
            char x[RENDER_CELL], y[RENDER_CELL];
            check_partition_value(e, mine, part, k, x, sizeof x);
            check_partition_value(src, s->attr, sp, sk, y, sizeof y);
            if (strcmp(x, y) != 0) return 0;
        }
    return 1;
}

void render_value(const m_entity *e, const m_attr *a, int part, int k, char *buf, size_t size)
{
    check_partition_value(e, a, part, k, buf, size);
    const m_entity *src = a->copy_entity;
    if (src == NULL || a->copy_attr == NULL) return;
    int items = model_template_is_constant(&src->sk) ? 1 : RENDER_EXAMPLES;
    for (int sp = 0; sp < RENDER_PARTITIONS; sp++)
        for (int v = 0; v < items; v++)
            if (copy_names(e, a, part, k, sp, sp * RENDER_EXAMPLES + v)) {
                check_partition_value(src, a->copy_attr, sp, sp * RENDER_EXAMPLES + v, buf, size);
                return;
            }
}

int render_projects(const m_index *ix, const m_attr *a)
{
    if (ix == NULL || ix->projection == MP_ALL) return 1;
    for (size_t i = 0; ix->projection == MP_INCLUDE && i < ix->ninclude; i++)
        if (strcmp(ix->include[i], a->name) == 0) return 1;
    return 0;
}

static int key_named(const m_keyattr *k, const m_keyattr *parts, size_t nparts, const char *name)
{
    if (k->name && strcmp(k->name, name) == 0) return 1;
    for (size_t i = 0; i < nparts; i++)
        if (parts[i].name && strcmp(parts[i].name, name) == 0) return 1;
    return 0;
}

int render_is_key_attribute(const m_table *t, const m_index *ix, const char *name)
{
    if (key_named(&t->pk, NULL, 0, name) || key_named(&t->sk, NULL, 0, name)) return 1;
    return ix && (key_named(&ix->pk, ix->pk_parts, ix->npk_parts, name) ||
                  key_named(&ix->sk, ix->sk_parts, ix->nsk_parts, name));
}

/* ---- where findings belong ---- */

static int pos_eq(m_pos a, m_pos b)
{
    return a.line == b.line && a.col == b.col;
}

static int pos_before(m_pos a, m_pos b)
{
    return a.line < b.line || (a.line == b.line && a.col <= b.col);
}

/* Considers element what starting at start for fd's position: an exact match wins, else
 * the latest start before it. */
static void consider(render_place *best, m_pos *best_pos, int *exact, m_pos fd, m_pos start,
                     render_place_kind kind, const void *what)
{
    if (*exact || start.line <= 0) return;
    if (pos_eq(start, fd)) {
        *best = (render_place){kind, what};
        *exact = 1;
    } else if (pos_before(start, fd) && (best->kind == RP_MODEL || pos_before(*best_pos, start))) {
        *best = (render_place){kind, what};
        *best_pos = start;
    }
}

/* The element fd's position points at (see render_finding_place). */
static render_place place_by_position(const qr_model *m, m_pos at)
{
    render_place best = {RP_MODEL, NULL};
    m_pos bp = {0, 0};
    int exact = 0;
    if (at.line <= 0) return best;
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        consider(&best, &bp, &exact, at, t->pos, RP_TABLE, t);
        if (t->existing) consider(&best, &bp, &exact, at, t->existing_pos, RP_TABLE, t);
        for (size_t i = 0; i < t->nidx; i++)
            consider(&best, &bp, &exact, at, t->idx[i].pos, RP_INDEX, &t->idx[i]);
    }
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        consider(&best, &bp, &exact, at, e->pos, RP_ENTITY, e);
        /* the parts of an entity: exact matches only, they do not start elements */
        int part = pos_eq(at, e->pk.pos) || pos_eq(at, e->sk.pos);
        for (size_t a = 0; a < e->nattrs; a++)
            part |= pos_eq(at, e->attrs[a].pos);
        for (size_t k = 0; k < e->nkeys; k++)
            part |= pos_eq(at, e->keys[k].pk.pos) || pos_eq(at, e->keys[k].sk.pos);
        if (part && !exact) {
            best = (render_place){RP_ENTITY, e};
            exact = 1;
        }
    }
    for (size_t i = 0; i < m->npatterns; i++)
        consider(&best, &bp, &exact, at, m->patterns[i].pos, RP_PATTERN, &m->patterns[i]);
    for (size_t i = 0; i < m->ndenorms; i++)
        consider(&best, &bp, &exact, at, m->denorms[i].pos, RP_DENORM, &m->denorms[i]);
    for (size_t i = 0; i < m->naggregates; i++)
        consider(&best, &bp, &exact, at, m->aggregates[i].pos, RP_AGGREGATE, &m->aggregates[i]);
    return best;
}

/* The table of the element at pl, or NULL. */
static const m_table *place_table(const qr_model *m, render_place pl)
{
    if (pl.kind == RP_TABLE) return pl.what;
    if (pl.kind == RP_ENTITY) return ((const m_entity *)pl.what)->table;
    if (pl.kind == RP_PATTERN) {
        const m_entity *e = ((const m_pattern *)pl.what)->entity;
        return e ? e->table : NULL;
    }
    for (size_t ti = 0; pl.kind == RP_INDEX && ti < m->ntables; ti++) {
        const m_index *ix = pl.what;
        if (ix >= m->tables[ti].idx && ix < m->tables[ti].idx + m->tables[ti].nidx)
            return &m->tables[ti];
    }
    return NULL;
}

/* Whether subject starts with word and a space; *rest then points past them. */
static int subject_is(const char *subject, const char *word, const char **rest)
{
    size_t n = strlen(word);
    if (strncmp(subject, word, n) != 0 || subject[n] != ' ') return 0;
    *rest = subject + n + 1;
    return 1;
}

/* The first n bytes of s equal name, all of it. */
static int names(const char *s, size_t n, const char *name)
{
    return name && strlen(name) == n && strncmp(s, name, n) == 0;
}

render_place render_finding_place(const qr_model *m, const ck_finding *fd)
{
    render_place by_pos = place_by_position(m, fd->pos);
    const char *rest, *subject = fd->subject ? fd->subject : "";
    size_t n;
    if (subject_is(subject, "pattern", &rest)) {
        for (size_t i = 0; i < m->npatterns; i++)
            if (names(rest, strlen(rest), m->patterns[i].name))
                return (render_place){RP_PATTERN, &m->patterns[i]};
    } else if (subject_is(subject, "entity", &rest) || subject_is(subject, "attribute", &rest)) {
        const char *end = strstr(rest, " on "), *dot = strchr(rest, '.');
        n = end                        ? (size_t)(end - rest)
            : dot && subject[0] == 'a' ? (size_t)(dot - rest)
                                       : strlen(rest);
        for (size_t i = 0; i < m->nentities; i++)
            if (names(rest, n, m->entities[i].name))
                return (render_place){RP_ENTITY, &m->entities[i]};
    } else if (subject_is(subject, "table", &rest)) {
        const m_table *t = model_table(m, rest);
        if (t) return (render_place){RP_TABLE, t};
    } else if (subject_is(subject, "index", &rest)) {
        /* index names repeat across tables: the one of the table the position is in first */
        const m_table *near = place_table(m, by_pos);
        const m_index *ix = near ? model_table_index(near, rest) : NULL;
        for (size_t ti = 0; ix == NULL && ti < m->ntables; ti++)
            ix = model_table_index(&m->tables[ti], rest);
        if (ix) return (render_place){RP_INDEX, ix};
    } else if (subject_is(subject, "denormalised", &rest)) {
        for (size_t i = 0; i < m->ndenorms; i++)
            if (names(rest, strlen(rest), m->denorms[i].source))
                return (render_place){RP_DENORM, &m->denorms[i]};
    } else if (subject_is(subject, "aggregate", &rest)) {
        for (size_t i = 0; i < m->naggregates; i++)
            if (names(rest, strlen(rest), m->aggregates[i].name))
                return (render_place){RP_AGGREGATE, &m->aggregates[i]};
    }
    return by_pos;
}

const char *render_projection_name(const m_index *ix)
{
    return ix->projection == MP_ALL         ? "all attributes"
           : ix->projection == MP_KEYS_ONLY ? "keys only"
                                            : "keys and listed attributes";
}

/* A key's attribute name, or its parts' joined by " + " (in r's arena); NULL for none. */
static const char *key_name(ck_report *r, const m_keyattr *k, const m_keyattr *parts, size_t nparts)
{
    if (nparts == 0) return k->name;
    char buf[600] = "";
    for (size_t i = 0; i < nparts; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " + " : "",
                 parts[i].name);
    return ck_arena_printf(&r->arena, "%s", buf);
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
            const char *pkn =
                ix->local ? t->pk.name : key_name(r, &ix->pk, ix->pk_parts, ix->npk_parts);
            const char *skn = key_name(r, &ix->sk, ix->sk_parts, ix->nsk_parts);
            if (pkn == NULL) pkn = "";
            fprintf(f, "\n  %s %s  (partition key %s%s%s; projects %s)\n",
                    ix->local ? "LSI" : "GSI", ix->name, pkn, skn ? ", sort key " : "",
                    skn ? skn : "", render_projection_name(ix));
            rows = render_collect(r, t, ix, &n);
            if (rows && n)
                text_rows(f, pkn, skn, rows, n);
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
