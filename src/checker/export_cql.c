/* export_cql.c — Cassandra / ScyllaDB tables, one per query shape, as the query-first method
 * builds them; a CQL table of the model (one with a cql section, as import --cql writes it)
 * is written as it is declared. Writes are not tables in CQL: they are the application
 * writing every table. */
#include "checker/output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAXCOLS 64
#define NAME 128

typedef struct shape {
    char name[NAME * 2];
    char part[MAXCOLS][NAME];
    size_t npart;
    char clus[MAXCOLS][NAME];
    size_t nclus;
    int desc; /* the ordering column sorts descending */
    const m_pattern *p;
    const m_entity *e;
    char patterns[512];
} shape;

static void snake(const char *s, char *out, size_t size)
{
    size_t o = 0;
    for (; *s && o + 2 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (isupper(c) && o > 0 && out[o - 1] != '_' &&
            (islower((unsigned char)s[-1]) || isdigit((unsigned char)s[-1])))
            out[o++] = '_';
        out[o++] = isalnum(c) ? (char)tolower(c) : '_';
    }
    out[o] = '\0';
}

static const char *cql_type(const m_entity *e, const m_attr *a)
{
    if (e->counter && a->type == MT_NUMBER) return "counter";
    switch (a->format) {
    case MF_TIMESTAMP:
        return "timestamp";
    case MF_DATE:
        return a->pattern ? "text" : "date";
    case MF_UUID:
        return "uuid";
    case MF_EPOCH:
    case MF_INTEGER:
        return "bigint";
    case MF_SHARD:
        return "int";
    default:
        break;
    }
    switch (a->type) {
    case MT_NUMBER:
        return "decimal";
    case MT_BOOLEAN:
        return "boolean";
    case MT_BINARY:
        return "blob";
    case MT_MAP:
        return "map<text, text>";
    case MT_LIST:
        return "list<text>";
    case MT_SET:
        return "set<text>";
    default:
        return "text";
    }
}

static int has_col(char cols[][NAME], size_t n, const char *c)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cols[i], c) == 0) return 1;
    return 0;
}

static void push(char cols[][NAME], size_t *n, const char *attr)
{
    char c[NAME];
    snake(attr, c, sizeof c);
    if (*n < MAXCOLS && !has_col(cols, *n, c)) snprintf(cols[(*n)++], NAME, "%s", c);
}

static void push_template(shape *s, const m_template *t, int part)
{
    for (size_t i = 0; t->text && i < t->nseg; i++)
        if (t->seg[i].is_var) {
            char c[NAME];
            snake(t->seg[i].text, c, sizeof c);
            if (part)
                push(s->part, &s->npart, t->seg[i].text);
            else if (!has_col(s->part, s->npart, c))
                push(s->clus, &s->nclus, t->seg[i].text);
        }
}

/* The partition key comes from what the pattern is given, the clustering columns in sort-key
 * order, with CLUSTERING ORDER BY matching the pattern's direction. Patterns the DynamoDB model
 * serves take their shape from the key that serves them (so buckets and shards carry over); the
 * others from their given values and condition. */
static void build_shape(const ck_plan *pl, shape *s)
{
    const m_pattern *p = pl->pattern;
    const m_entity *e = p->entity;
    memset(s, 0, sizeof *s);
    s->e = e;
    s->p = p;
    s->desc = p->direction < 0;
    if (pl->served) {
        push_template(s, pl->path.pk, 1);
        push_template(s, pl->path.sk, 0);
        /* the other entity types of a collection read together add their clustering keys */
        for (size_t i = 0; i < p->nalso; i++)
            push_template(s, &p->also[i]->sk, 0);
    } else {
        for (size_t i = 0; i < p->ngiven; i++)
            if (model_entity_attr(e, p->given[i].name) &&
                !(p->sk_attr && strcmp(p->sk_attr, p->given[i].name) == 0))
                push(s->part, &s->npart, p->given[i].name);
        if (p->sk_attr) push(s->clus, &s->nclus, p->sk_attr);
        if (p->order_by) push(s->clus, &s->nclus, p->order_by);
    }
    if (s->npart == 0) push(s->part, &s->npart, "bucket");
    /* the entity's own key makes each row unique */
    push_template(s, &e->pk, 0);
    push_template(s, &e->sk, 0);
    for (size_t i = 0; i < p->nalso; i++)
        push_template(s, &p->also[i]->pk, 0);
    char ename[NAME];
    snake(e->name, ename, sizeof ename);
    size_t o = (size_t)snprintf(s->name, sizeof s->name, "%ss_by", ename);
    for (size_t i = 0; i < s->npart && o < sizeof s->name; i++)
        o += (size_t)snprintf(s->name + o, sizeof s->name - o, "_%s", s->part[i]);
    snprintf(s->patterns, sizeof s->patterns, "%s", p->name);
}

static int same_shape(const shape *a, const shape *b)
{
    if (strcmp(a->name, b->name) || a->nclus != b->nclus || a->npart != b->npart ||
        a->desc != b->desc)
        return 0;
    for (size_t i = 0; i < a->nclus; i++)
        if (strcmp(a->clus[i], b->clus[i])) return 0;
    return 1;
}

/* The attribute behind column col in entity e, or NULL. */
static const m_attr *column_attr(const m_entity *e, const char *col)
{
    for (size_t k = 0; k < e->nattrs; k++) {
        char c[NAME];
        snake(e->attrs[k].name, c, sizeof c);
        if (strcmp(c, col) == 0) return &e->attrs[k];
    }
    return NULL;
}

/* True if every key variable of e is a partition column: one row of e per partition, so
 * its other columns are STATIC beside the clustered rows of the collection. */
static int one_per_partition(const shape *s, const m_entity *e)
{
    const m_template *ts[2] = {&e->pk, &e->sk};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; ts[t]->text && i < ts[t]->nseg; i++) {
            char c[NAME];
            if (!ts[t]->seg[i].is_var) continue;
            snake(ts[t]->seg[i].text, c, sizeof c);
            if (!has_col((char(*)[NAME])s->part, s->npart, c)) return 0;
        }
    return 1;
}

static int is_given(const m_pattern *p, const char *col)
{
    for (size_t i = 0; i < p->ngiven; i++) {
        char c[NAME];
        snake(p->given[i].name, c, sizeof c);
        if (strcmp(c, col) == 0) return 1;
    }
    return 0;
}

static int emit(FILE *f, const char *ks, const shape *s)
{
    const m_pattern *p = s->p;
    const m_entity *ents[65];
    size_t ne = 0;
    ents[ne++] = s->e;
    for (size_t i = 0; i < p->nalso && ne < 65; i++)
        ents[ne++] = p->also[i];
    fprintf(f, "\n-- serves: %s\n", s->patterns);
    fprintf(f, "CREATE TABLE IF NOT EXISTS %s.%s (\n", ks, s->name);
    char(*done)[NAME] = calloc(MAXCOLS * 4, NAME);
    size_t nd = 0;
    if (done == NULL) return -1;
    for (size_t i = 0; i < s->npart + s->nclus; i++) {
        const char *col = i < s->npart ? s->part[i] : s->clus[i - s->npart];
        const m_attr *a = NULL;
        const m_entity *owner = s->e;
        for (size_t k = 0; k < ne && a == NULL; k++)
            if ((a = column_attr(ents[k], col)) != NULL) owner = ents[k];
        /* key columns never have the counter type */
        const char *type = a ? cql_type(owner, a) : "text";
        if (strcmp(type, "counter") == 0) type = "bigint";
        fprintf(f, "    %s %s,\n", col, type);
        snprintf(done[nd++], NAME, "%s", col);
    }
    for (size_t k = 0; k < ne; k++) {
        const m_entity *e = ents[k];
        int stat = ne > 1 && s->nclus > 0 && one_per_partition(s, e);
        for (size_t ai = 0; ai < e->nattrs; ai++) {
            char c[NAME];
            snake(e->attrs[ai].name, c, sizeof c);
            if (has_col(done, nd, c) || nd >= MAXCOLS * 4) continue;
            if (e->table->ttl && strcmp(e->attrs[ai].name, e->table->ttl) == 0)
                continue; /* CQL expires rows with TTL itself */
            fprintf(f, "    %s %s%s,\n", c, cql_type(e, &e->attrs[ai]), stat ? " STATIC" : "");
            snprintf(done[nd++], NAME, "%s", c);
        }
    }
    fprintf(f, "    PRIMARY KEY ((");
    for (size_t i = 0; i < s->npart; i++)
        fprintf(f, "%s%s", i ? ", " : "", s->part[i]);
    fprintf(f, ")");
    for (size_t i = 0; i < s->nclus; i++)
        fprintf(f, ", %s", s->clus[i]);
    fprintf(f, ")\n)");
    const char *with = " WITH";
    if (s->nclus) {
        /* the first clustering column the pattern does not fix is the one it orders by */
        size_t order = 0;
        while (order < s->nclus && is_given(p, s->clus[order]))
            order++;
        fprintf(f, "%s CLUSTERING ORDER BY (", with);
        for (size_t i = 0; i < s->nclus; i++)
            fprintf(f, "%s%s %s", i ? ", " : "", s->clus[i],
                    i == order && s->desc ? "DESC" : "ASC");
        fprintf(f, ")");
        with = "\n  AND";
    }
    if (s->e->retention_days > 0)
        fprintf(f, "%s default_time_to_live = %.0f", with, s->e->retention_days * 86400);
    fprintf(f, ";\n");
    free(done);
    return 0;
}

/* A CQL table as declared: its entity's columns with their CQL types, the key columns of its
 * templates, its clustering order, default TTL and secondary indexes. */
static void emit_declared(FILE *f, const char *ks, const ck_report *r, const m_table *t)
{
    const qr_model *m = r->model;
    const m_entity *e = NULL;
    for (size_t i = 0; i < m->nentities && e == NULL; i++)
        if (m->entities[i].table == t) e = &m->entities[i];
    if (e == NULL) return;
    char serves[512] = "";
    for (size_t i = 0; i < r->nplans; i++)
        if (r->plans[i].pattern->entity == e) {
            if (serves[0]) strncat(serves, ", ", sizeof serves - strlen(serves) - 1);
            strncat(serves, r->plans[i].pattern->name, sizeof serves - strlen(serves) - 1);
        }
    if (serves[0])
        fprintf(f, "\n-- serves: %s\n", serves);
    else
        fprintf(f, "\n");
    const char *dot = strchr(t->name, '.');
    fprintf(f, "CREATE TABLE IF NOT EXISTS %s%s%s (\n", dot ? "" : ks, dot ? "" : ".", t->name);
    for (size_t i = 0; i < e->nattrs; i++) {
        const m_attr *a = &e->attrs[i];
        fprintf(f, "    %s %s%s,\n", a->name, a->cql_type ? a->cql_type : cql_type(e, a),
                a->is_static ? " STATIC" : "");
    }
    fprintf(f, "    PRIMARY KEY ((");
    int first = 1;
    for (size_t i = 0; i < e->pk.nseg; i++)
        if (e->pk.seg[i].is_var)
            fprintf(f, "%s%s", first ? "" : ", ", e->pk.seg[i].text), first = 0;
    fprintf(f, ")");
    for (size_t i = 0; e->sk.text && i < e->sk.nseg; i++)
        if (e->sk.seg[i].is_var) fprintf(f, ", %s", e->sk.seg[i].text);
    fprintf(f, ")\n)");
    const char *with = " WITH";
    if (t->cql->norder) {
        fprintf(f, "%s CLUSTERING ORDER BY (", with);
        for (size_t i = 0; i < t->cql->norder; i++)
            fprintf(f, "%s%s %s", i ? ", " : "", t->cql->order[i].column,
                    t->cql->order[i].desc ? "DESC" : "ASC");
        fprintf(f, ")");
        with = "\n  AND";
    }
    if (t->cql->default_ttl_days > 0)
        fprintf(f, "%s default_time_to_live = %.0f", with, t->cql->default_ttl_days * 86400);
    fprintf(f, ";\n");
    for (size_t i = 0; i < t->cql->nindexes; i++)
        fprintf(f, "CREATE INDEX IF NOT EXISTS ON %s%s%s (%s);\n", dot ? "" : ks, dot ? "" : ".",
                t->name, t->cql->indexes[i]);
}

int model_export_cql(const ck_report *r, FILE *f, qr_err *err)
{
    const qr_model *m = r->model;
    char ks[NAME];
    snake(m->name ? m->name : "quarry", ks, sizeof ks);
    fprintf(f, "-- Generated by quarry model export from model %s: one table per query shape.\n",
            m->name ? m->name : "(unnamed)");
    fprintf(f,
            "CREATE KEYSPACE IF NOT EXISTS %s\n  WITH replication = {'class': "
            "'NetworkTopologyStrategy', 'replication_factor': 3};\n",
            ks);
    /* the keyspaces of CQL tables named ks.table, each once */
    for (size_t i = 0; i < m->ntables; i++) {
        const char *dot = m->tables[i].cql ? strchr(m->tables[i].name, '.') : NULL;
        if (dot == NULL || ((size_t)(dot - m->tables[i].name) == strlen(ks) &&
                            strncmp(m->tables[i].name, ks, strlen(ks)) == 0))
            continue;
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= m->tables[j].cql && strncmp(m->tables[j].name, m->tables[i].name,
                                                (size_t)(dot - m->tables[i].name) + 1) == 0;
        if (!seen)
            fprintf(f,
                    "CREATE KEYSPACE IF NOT EXISTS %.*s\n  WITH replication = {'class': "
                    "'NetworkTopologyStrategy', 'replication_factor': 3};\n",
                    (int)(dot - m->tables[i].name), m->tables[i].name);
    }
    for (size_t i = 0; i < m->ntables; i++)
        if (m->tables[i].cql) emit_declared(f, ks, r, &m->tables[i]);
    shape *shapes = calloc(r->nplans + 1, sizeof *shapes);
    if (shapes == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < r->nplans; i++) {
        const m_pattern *p = r->plans[i].pattern;
        if (p->kind != MK_GET && p->kind != MK_QUERY) continue;
        if (p->entity->table->cql) continue; /* written as declared */
        shape s;
        build_shape(&r->plans[i], &s);
        size_t k = 0;
        while (k < n && !same_shape(&shapes[k], &s))
            k++;
        if (k < n) {
            strncat(shapes[k].patterns, ", ",
                    sizeof shapes[k].patterns - strlen(shapes[k].patterns) - 1);
            strncat(shapes[k].patterns, p->name,
                    sizeof shapes[k].patterns - strlen(shapes[k].patterns) - 1);
            continue;
        }
        /* same name, different clustering: keep names unique */
        for (size_t j = 0; j < n; j++)
            if (strcmp(shapes[j].name, s.name) == 0) {
                size_t l = strlen(s.name);
                snprintf(s.name + l, sizeof s.name - l, "_%s", s.nclus ? s.clus[0] : "key");
                if (s.desc)
                    snprintf(s.name + strlen(s.name), sizeof s.name - strlen(s.name), "_desc");
                break;
            }
        shapes[n++] = s;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = emit(f, ks, &shapes[i]);
    free(shapes);
    return rc ? err_set(err, QR_E_INTERNAL, "out of memory") : 0;
}
