/* export_cql.c — Cassandra / ScyllaDB tables, one per query shape, as the query-first method
 * builds them; a CQL table of the model (one with a cql section, as import --cql writes it)
 * is written as it is declared. What it writes Cassandra accepts: names quoted where they must
 * be, each attribute its own column, counters in tables of their own, keyspace and table
 * names \w+ of at most 48 characters. Writes are not tables in CQL: they are the application
 * writing every table. */
#include "checker/output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cql/ast.h"

#define MAXCOLS 64
#define NAME 128
/* Cassandra's longest keyspace and table name (SchemaConstants.NAME_LENGTH); names are \w+ */
#define CQL_NAME_LEN 48

/* A query shape: its key columns are attribute names (the entity's template variables and
 * what the pattern is given), made column names only when the table is written. */
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

static void put(char *buf, size_t size, size_t *o, char c)
{
    if (*o + 1 < size) buf[*o] = c;
    (*o)++;
}

size_t model_cql_name(char *buf, size_t size, const char *name)
{
    int bare = islower((unsigned char)name[0]) && !cql_is_reserved(name, strlen(name));
    for (const char *c = name; bare && *c; c++)
        bare = islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_';
    if (bare) return (size_t)snprintf(buf, size, "%s", name);
    size_t o = 0;
    put(buf, size, &o, '"');
    for (const char *c = name; *c; c++) {
        if (*c == '"') put(buf, size, &o, '"');
        put(buf, size, &o, *c);
    }
    put(buf, size, &o, '"');
    if (size) buf[o < size ? o : size - 1] = '\0';
    return o;
}

static void ident(FILE *f, const char *s)
{
    char small[256];
    size_t n = model_cql_name(small, sizeof small, s);
    if (n < sizeof small) {
        fputs(small, f);
        return;
    }
    char *big = malloc(n + 1);
    if (big == NULL) return;
    model_cql_name(big, n + 1, s);
    fputs(big, f);
    free(big);
}

/* Text for a comment line: control characters (a newline would end the comment) as spaces. */
static void comment(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

/* keyspace.table, each quoted as it must be. */
static void qualified(FILE *f, const char *ks, const char *table)
{
    ident(f, ks);
    fputc('.', f);
    ident(f, table);
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
    if (*n < MAXCOLS && !has_col(cols, *n, attr)) snprintf(cols[(*n)++], NAME, "%s", attr);
}

static void push_template(shape *s, const m_template *t, int part)
{
    for (size_t i = 0; t->text && i < t->nseg; i++)
        if (t->seg[i].is_var) {
            if (part)
                push(s->part, &s->npart, t->seg[i].text);
            else if (!has_col(s->part, s->npart, t->seg[i].text))
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
    char ename[NAME], col[NAME];
    snake(e->name, ename, sizeof ename);
    size_t o = (size_t)snprintf(s->name, sizeof s->name, "%ss_by", ename);
    for (size_t i = 0; i < s->npart && o < sizeof s->name; i++) {
        snake(s->part[i], col, sizeof col);
        o += (size_t)snprintf(s->name + o, sizeof s->name - o, "_%s", col);
    }
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

/* True if every key variable of e is a partition column: one row of e per partition, so
 * its other columns are STATIC beside the clustered rows of the collection. */
static int one_per_partition(const shape *s, const m_entity *e)
{
    const m_template *ts[2] = {&e->pk, &e->sk};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; ts[t]->text && i < ts[t]->nseg; i++)
            if (ts[t]->seg[i].is_var &&
                !has_col((char(*)[NAME])s->part, s->npart, ts[t]->seg[i].text))
                return 0;
    return 1;
}

static int is_given(const m_pattern *p, const char *attr)
{
    for (size_t i = 0; i < p->ngiven; i++)
        if (strcmp(p->given[i].name, attr) == 0) return 1;
    return 0;
}

/* The columns of one table: each attribute its own column, named in snake case, the name
 * made unique when two attributes would share it (userId and user_id: user_id, user_id_2). */
typedef struct column {
    const char *attr;
    char name[NAME + 16];
    const char *type;
    int is_static, key;
} column;

typedef struct columns {
    column c[MAXCOLS * 4];
    size_t n;
} columns;

static column *column_of(columns *cs, const char *attr)
{
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(cs->c[i].attr, attr) == 0) return &cs->c[i];
    return NULL;
}

static int name_taken(const columns *cs, const char *name)
{
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(cs->c[i].name, name) == 0) return 1;
    return 0;
}

static column *add_column(columns *cs, const char *attr, const char *type, int is_static, int key)
{
    column *c = column_of(cs, attr);
    if (c || cs->n == sizeof cs->c / sizeof cs->c[0]) return c;
    c = &cs->c[cs->n];
    char base[NAME];
    snake(attr, base, sizeof base);
    snprintf(c->name, sizeof c->name, "%s", base);
    for (int k = 2; name_taken(cs, c->name); k++)
        snprintf(c->name, sizeof c->name, "%s_%d", base, k);
    c->attr = attr;
    c->type = type;
    c->is_static = is_static;
    c->key = key;
    cs->n++;
    return c;
}

static void write_key(FILE *f, const columns *cs, size_t npart)
{
    fprintf(f, "    PRIMARY KEY ((");
    for (size_t i = 0; i < npart; i++) {
        fprintf(f, "%s", i ? ", " : "");
        ident(f, cs->c[i].name);
    }
    fprintf(f, ")");
    for (size_t i = npart; i < cs->n && cs->c[i].key; i++) {
        fprintf(f, ", ");
        ident(f, cs->c[i].name);
    }
    fprintf(f, ")\n)");
}

/* CREATE TABLE ks.name with the key columns of cs and those of its other columns that
 * counters (1) or not (0) are. */
static void write_table(FILE *f, const char *ks, const char *name, const columns *cs, size_t npart,
                        int counters)
{
    fprintf(f, "CREATE TABLE IF NOT EXISTS ");
    qualified(f, ks, name);
    fprintf(f, " (\n");
    for (size_t i = 0; i < cs->n; i++) {
        const column *c = &cs->c[i];
        if (!c->key && (strcmp(c->type, "counter") == 0) != counters) continue;
        fprintf(f, "    ");
        ident(f, c->name);
        fprintf(f, " %s%s,\n", c->type, c->is_static ? " STATIC" : "");
    }
    write_key(f, cs, npart);
}

/* " WITH CLUSTERING ORDER BY (...)" and the default TTL; order: the clustering column that
 * sorts descending (-1: none). */
static void write_options(FILE *f, const columns *cs, size_t npart, long order, double ttl_days)
{
    const char *with = " WITH";
    if (cs->n > npart && cs->c[npart].key) {
        fprintf(f, "%s CLUSTERING ORDER BY (", with);
        for (size_t i = npart; i < cs->n && cs->c[i].key; i++) {
            fprintf(f, "%s", i > npart ? ", " : "");
            ident(f, cs->c[i].name);
            fprintf(f, " %s", (long)i == order ? "DESC" : "ASC");
        }
        fprintf(f, ")");
        with = "\n  AND";
    }
    if (ttl_days > 0) fprintf(f, "%s default_time_to_live = %.0f", with, ttl_days * 86400);
    fprintf(f, ";\n");
}

static int emit(FILE *f, const char *ks, const shape *s)
{
    const m_pattern *p = s->p;
    const m_entity *ents[65];
    size_t ne = 0;
    ents[ne++] = s->e;
    for (size_t i = 0; i < p->nalso && ne < 65; i++)
        ents[ne++] = p->also[i];
    columns *cs = calloc(1, sizeof *cs);
    if (cs == NULL) return -1;
    for (size_t i = 0; i < s->npart + s->nclus; i++) {
        const char *attr = i < s->npart ? s->part[i] : s->clus[i - s->npart];
        const m_attr *a = NULL;
        const m_entity *owner = s->e;
        for (size_t k = 0; k < ne && a == NULL; k++)
            if ((a = model_entity_attr(ents[k], attr)) != NULL) owner = ents[k];
        /* key columns never have the counter type */
        const char *type = a ? cql_type(owner, a) : "text";
        if (strcmp(type, "counter") == 0) type = "bigint";
        add_column(cs, attr, type, 0, 1);
    }
    int counters = 0;
    for (size_t k = 0; k < ne; k++) {
        const m_entity *e = ents[k];
        int stat = ne > 1 && s->nclus > 0 && one_per_partition(s, e);
        for (size_t ai = 0; ai < e->nattrs; ai++) {
            const m_attr *a = &e->attrs[ai];
            if (e->table->ttl && strcmp(a->name, e->table->ttl) == 0)
                continue; /* CQL expires rows with TTL itself */
            const column *c = add_column(cs, a->name, cql_type(e, a), stat, 0);
            counters |= c && !c->key && strcmp(c->type, "counter") == 0;
        }
    }
    /* the first clustering column the pattern does not fix is the one it orders by */
    long order = -1;
    if (s->desc)
        for (size_t i = s->npart; i < cs->n && cs->c[i].key && order < 0; i++)
            if (!is_given(p, cs->c[i].attr)) order = (long)i;
    fprintf(f, "\n-- serves: ");
    comment(f, s->patterns);
    fputc('\n', f);
    write_table(f, ks, s->name, cs, s->npart, counters);
    write_options(f, cs, s->npart, order, s->e->retention_days);
    size_t others = 0;
    for (size_t i = 0; counters && i < cs->n; i++)
        others += !cs->c[i].key && strcmp(cs->c[i].type, "counter") != 0;
    if (others) {
        /* Cassandra refuses other columns beside counters: they get a table of the same key */
        char name[NAME * 2 + 8];
        snprintf(name, sizeof name, "%.*s_values", CQL_NAME_LEN - 7, s->name);
        fprintf(f,
                "-- the columns beside the counters of %s (a counter table holds only keys and "
                "counters)\n",
                s->name);
        write_table(f, ks, name, cs, s->npart, 0);
        write_options(f, cs, s->npart, order, s->e->retention_days);
    }
    free(cs);
    return 0;
}

/* The keyspace and name of CQL table t of the model ("ks.table", else ks). */
static void split_name(const m_table *t, const char *ks, char *tks, size_t ksz, const char **name)
{
    const char *dot = strchr(t->name, '.');
    snprintf(tks, ksz, "%.*s", dot ? (int)(dot - t->name) : (int)strlen(ks), dot ? t->name : ks);
    *name = dot ? dot + 1 : t->name;
}

/* CREATE TYPE for each user type t's columns use that no earlier table of its keyspace
 * has made. */
static void emit_types(FILE *f, const qr_model *m, const char *ks, const m_table *t)
{
    char tks[NAME * 2], oks[NAME * 2];
    const char *name, *oname;
    split_name(t, ks, tks, sizeof tks, &name);
    for (size_t i = 0; i < t->cql->ntypes; i++) {
        int made = 0;
        for (const m_table *o = m->tables; o < t && !made; o++) {
            if (o->cql == NULL) continue;
            split_name(o, ks, oks, sizeof oks, &oname);
            for (size_t k = 0; k < o->cql->ntypes && strcmp(oks, tks) == 0; k++)
                made |= strcmp(o->cql->types[k], t->cql->types[i]) == 0;
        }
        if (made) continue;
        fprintf(f, "CREATE TYPE IF NOT EXISTS ");
        qualified(f, tks, t->cql->types[i]);
        fprintf(f, " (%s);\n", t->cql->type_fields[i]);
    }
}

/* A CQL table as declared: its entity's columns with their CQL types, the key columns of its
 * templates, its clustering order, default TTL and secondary indexes, after the user types
 * they use. */
static void emit_declared(FILE *f, const char *ks, const ck_report *r, const m_table *t)
{
    const qr_model *m = r->model;
    const m_entity *e = NULL;
    for (size_t i = 0; i < m->nentities && e == NULL; i++)
        if (m->entities[i].table == t) e = &m->entities[i];
    if (e == NULL) return;
    fprintf(f, "\n");
    emit_types(f, m, ks, t);
    char serves[512] = "";
    for (size_t i = 0; i < r->nplans; i++)
        if (r->plans[i].pattern->entity == e) {
            if (serves[0]) strncat(serves, ", ", sizeof serves - strlen(serves) - 1);
            strncat(serves, r->plans[i].pattern->name, sizeof serves - strlen(serves) - 1);
        }
    if (serves[0]) {
        fprintf(f, "-- serves: ");
        comment(f, serves);
        fputc('\n', f);
    }
    char tks[NAME * 2];
    const char *name;
    split_name(t, ks, tks, sizeof tks, &name);
    fprintf(f, "CREATE TABLE IF NOT EXISTS ");
    qualified(f, tks, name);
    fprintf(f, " (\n");
    for (size_t i = 0; i < e->nattrs; i++) {
        const m_attr *a = &e->attrs[i];
        fprintf(f, "    ");
        ident(f, a->name);
        fprintf(f, " %s%s,\n", a->cql_type ? a->cql_type : cql_type(e, a),
                a->is_static ? " STATIC" : "");
    }
    fprintf(f, "    PRIMARY KEY ((");
    int first = 1;
    for (size_t i = 0; i < e->pk.nseg; i++)
        if (e->pk.seg[i].is_var) {
            fprintf(f, "%s", first ? "" : ", ");
            ident(f, e->pk.seg[i].text);
            first = 0;
        }
    fprintf(f, ")");
    for (size_t i = 0; e->sk.text && i < e->sk.nseg; i++)
        if (e->sk.seg[i].is_var) {
            fprintf(f, ", ");
            ident(f, e->sk.seg[i].text);
        }
    fprintf(f, ")\n)");
    const char *with = " WITH";
    if (t->cql->norder) {
        fprintf(f, "%s CLUSTERING ORDER BY (", with);
        for (size_t i = 0; i < t->cql->norder; i++) {
            fprintf(f, "%s", i ? ", " : "");
            ident(f, t->cql->order[i].column);
            fprintf(f, " %s", t->cql->order[i].desc ? "DESC" : "ASC");
        }
        fprintf(f, ")");
        with = "\n  AND";
    }
    if (t->cql->default_ttl_days > 0)
        fprintf(f, "%s default_time_to_live = %.0f", with, t->cql->default_ttl_days * 86400);
    fprintf(f, ";\n");
    for (size_t i = 0; i < t->cql->nindexes; i++) {
        fprintf(f, "CREATE INDEX IF NOT EXISTS ON ");
        qualified(f, tks, name);
        fprintf(f, " (");
        ident(f, t->cql->indexes[i]);
        fprintf(f, ");\n");
    }
}

static void create_keyspace(FILE *f, const char *ks)
{
    fprintf(f, "CREATE KEYSPACE IF NOT EXISTS ");
    ident(f, ks);
    fprintf(f, "\n  WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': "
               "3};\n");
}

/* Table names are \w+ of at most 48 characters: a longer one is cut, and a cut name that
 * another table has already ends in _2, _3, ... */
static void fit_names(shape *shapes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *name = shapes[i].name;
        if (strlen(name) > CQL_NAME_LEN) name[CQL_NAME_LEN] = '\0';
        char base[CQL_NAME_LEN + 1];
        snprintf(base, sizeof base, "%s", name);
        for (int k = 2;; k++) {
            int taken = 0;
            for (size_t j = 0; j < i; j++)
                taken |= strcmp(shapes[j].name, name) == 0;
            if (!taken) break;
            char suffix[16];
            int sl = snprintf(suffix, sizeof suffix, "_%d", k);
            int keep = CQL_NAME_LEN - sl;
            if ((size_t)keep > strlen(base)) keep = (int)strlen(base);
            while (keep > 1 && base[keep - 1] == '_')
                keep--;
            snprintf(name, CQL_NAME_LEN + 1, "%.*s%s", keep, base, suffix);
        }
    }
}

/* The model's name as a keyspace name: snake case, runs of '_' made one and none at the
 * ends, at most 48 characters; "quarry" when nothing is left. */
static void keyspace_name(const char *model, char *ks, size_t size)
{
    char raw[NAME];
    snake(model ? model : "", raw, sizeof raw);
    size_t o = 0;
    for (const char *c = raw; *c && o < CQL_NAME_LEN && o + 1 < size; c++)
        if (*c != '_' || (o > 0 && ks[o - 1] != '_')) ks[o++] = *c;
    while (o > 0 && ks[o - 1] == '_')
        o--;
    ks[o] = '\0';
    if (o == 0) snprintf(ks, size, "quarry");
}

int model_export_cql(const ck_report *r, FILE *f, qr_err *err)
{
    const qr_model *m = r->model;
    /* the keyspace of the query-shape tables: the model's name, as \w+ of at most 48 */
    char ks[NAME];
    keyspace_name(m->name, ks, sizeof ks);
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
                char col[NAME];
                snake(s.nclus ? s.clus[0] : "key", col, sizeof col);
                size_t l = strlen(s.name);
                snprintf(s.name + l, sizeof s.name - l, "_%s", col);
                if (s.desc)
                    snprintf(s.name + strlen(s.name), sizeof s.name - strlen(s.name), "_desc");
                break;
            }
        shapes[n++] = s;
    }
    fit_names(shapes, n);
    fprintf(f, "-- Generated by quarry model export from model ");
    comment(f, m->name ? m->name : "(unnamed)");
    fprintf(f, ": one table per query shape.\n");
    /* the keyspaces used, each once: the model's for its query shapes and undotted CQL
     * tables, and those of CQL tables named ks.table */
    int own = n > 0;
    for (size_t i = 0; i < m->ntables; i++)
        own |= m->tables[i].cql && strchr(m->tables[i].name, '.') == NULL;
    if (own) create_keyspace(f, ks);
    for (size_t i = 0; i < m->ntables; i++) {
        const char *dot = m->tables[i].cql ? strchr(m->tables[i].name, '.') : NULL;
        if (dot == NULL) continue;
        size_t len = (size_t)(dot - m->tables[i].name);
        int seen = own && len == strlen(ks) && strncmp(m->tables[i].name, ks, len) == 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = m->tables[j].cql && strncmp(m->tables[j].name, m->tables[i].name, len + 1) == 0;
        if (seen) continue;
        char tks[NAME * 2];
        snprintf(tks, sizeof tks, "%.*s", (int)len, m->tables[i].name);
        create_keyspace(f, tks);
    }
    for (size_t i = 0; i < m->ntables; i++)
        if (m->tables[i].cql) emit_declared(f, ks, r, &m->tables[i]);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = emit(f, ks, &shapes[i]);
    free(shapes);
    return rc ? err_set(err, QR_E_INTERNAL, "out of memory") : 0;
}
