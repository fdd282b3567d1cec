/* load.c — building a qr_model from a parsed model document (see model.h, docs/model.md).
 *
 * Every field is checked against the fields its section allows, so a misspelt key is an
 * error with its position rather than a silently ignored setting. Names are resolved here
 * (template variables, tables, indexes, entities) so later stages never meet a dangling
 * reference. Judging whether the model is any good is the checker's job, not this file's. */
#include "checker/model.h"
#include "util/readfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_MODEL_FILE ((size_t)16 << 20)

typedef struct loader {
    qr_model *m;
    const char *path;
    qr_err *err; /* set only when memory runs out: that stops the load */
    model_errors *errs;
} loader;

/* The load stops at once only when memory runs out; every other error is recorded and the
 * loader goes on with the next field, attribute, entity or pattern. */
#define OOM(L) ((L)->err->type != NULL)
#define MAX_ERRORS 200

static int report_at(loader *L, int line, int col, const char *msg)
{
    model_errors *e = L->errs;
    if (e->n >= MAX_ERRORS) {
        e->dropped++;
        return -1;
    }
    if (e->n == e->cap) {
        size_t nc = e->cap ? e->cap * 2 : 16;
        model_error *v = realloc(e->v, nc * sizeof *v);
        if (v == NULL) return err_set(L->err, QR_E_INTERNAL, "out of memory");
        e->v = v;
        e->cap = nc;
    }
    char *copy = strdup(msg);
    if (copy == NULL) return err_set(L->err, QR_E_INTERNAL, "out of memory");
    e->v[e->n++] = (model_error){line, col, copy};
    return -1;
}

static int fail_at(loader *L, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(loader *L, int line, int col, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return report_at(L, line, col, msg);
}

static int fail(loader *L, const doc_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(loader *L, const doc_node *n, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return report_at(L, n ? n->line : 1, n ? n->col : 1, msg);
}

/* Edit distance between a and b, ignoring case (at most 64 characters of each). */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            size_t best = diag + (same ? 0 : 1);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* " (did you mean 'X'?)" for the candidate nearest to word, or "" when none is near enough:
 * within one edit for short words, two up to eight characters, three beyond. name(ctx, i)
 * gives candidate i of n (NULL to skip it). Returns static storage for one message. */
static const char *hint(const char *word, const char *(*name)(const void *, size_t),
                        const void *ctx, size_t n)
{
    static char buf[160];
    size_t len = strlen(word), limit = len <= 4 ? 1 : len <= 8 ? 2 : 3, best = limit + 1;
    const char *pick = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *c = name(ctx, i);
        if (c == NULL || strcmp(c, word) == 0) continue;
        size_t d = distance(word, c);
        if (d < best) best = d, pick = c;
    }
    if (pick == NULL) return "";
    snprintf(buf, sizeof buf, " (did you mean '%.100s'?)", pick);
    return buf;
}

static const char *name_in_list(const void *ctx, size_t i)
{
    return ((const char *const *)ctx)[i];
}
static const char *name_of_entity(const void *ctx, size_t i)
{
    return ((const qr_model *)ctx)->entities[i].name;
}
static const char *name_of_table(const void *ctx, size_t i)
{
    return ((const qr_model *)ctx)->tables[i].name;
}
static const char *name_of_attr(const void *ctx, size_t i)
{
    return ((const m_entity *)ctx)->attrs[i].name;
}
static const char *name_of_index(const void *ctx, size_t i)
{
    return ((const m_table *)ctx)->idx[i].name;
}

static const char *list_hint(const char *word, const char *const *list)
{
    size_t n = 0;
    while (list[n])
        n++;
    return hint(word, name_in_list, list, n);
}
static const char *entity_hint(const loader *L, const char *word)
{
    return hint(word, name_of_entity, L->m, L->m->nentities);
}
static const char *attr_hint(const m_entity *e, const char *word)
{
    return hint(word, name_of_attr, e, e->nattrs);
}

static m_pos pos_of(const doc_node *n)
{
    m_pos p = {n ? n->line : 0, n ? n->col : 0};
    return p;
}

static void *alloc(loader *L, size_t n)
{
    void *p = ck_arena_alloc(&L->m->arena, n);
    if (p == NULL) err_set(L->err, QR_E_INTERNAL, "out of memory");
    return p;
}

/* Reports every key of map not in allowed (a NULL-terminated list); the known ones are
 * still read. */
static void only_fields(loader *L, const doc_node *map, const char *what,
                        const char *const *allowed)
{
    for (size_t i = 0; i < map->n; i++) {
        const char *k = map->keys[i]->str;
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, k) == 0) ok = 1;
        if (ok) continue;
        const char *h = list_hint(k, allowed);
        if (*h) {
            fail(L, map->keys[i], "unknown field '%s' in %s%s", k, what, h);
            continue;
        }
        char list[400] = "";
        for (const char *const *a = allowed; *a; a++) {
            strncat(list, *a, sizeof list - strlen(list) - 1);
            if (a[1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
        fail(L, map->keys[i], "unknown field '%s' in %s (allowed: %s)", k, what, list);
    }
}

static int want(loader *L, const doc_node *n, doc_kind kind, const char *what)
{
    static const char *const names[] = {"a single value", "a map", "a list"};
    if (n->kind != kind) return fail(L, n, "%s must be %s", what, names[kind]);
    return 0;
}

static int get_str(loader *L, const doc_node *map, const char *key, const char **out)
{
    doc_node *n = doc_get(map, key);
    if (n == NULL) return 0;
    char what[80];
    snprintf(what, sizeof what, "'%s'", key);
    if (want(L, n, DOC_SCALAR, what)) return -1;
    *out = n->str;
    return 0;
}

static int need_str(loader *L, const doc_node *map, const char *key, const char *what,
                    const char **out)
{
    *out = NULL;
    if (get_str(L, map, key, out)) return -1;
    if (*out == NULL || **out == '\0') return fail(L, map, "%s needs '%s'", what, key);
    return 0;
}

/* A number with an optional unit. unit_kind: 'c' counts (k, M, G), 's' sizes (B, KB, MB,
 * GB), 'd' durations in days (s, h, d, w, m, y, "forever" = 0), 't' latencies in ms (ms, s). */
int model_quantity(const char *s, int unit_kind, double *out, char *msg, size_t msgsize)
{
    if (unit_kind == 'd' && strcmp(s, "forever") == 0) {
        *out = 0;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0) {
        snprintf(msg, msgsize, "'%s' is not a non-negative number", s);
        return -1;
    }
    if (v > 1e15) {
        snprintf(msg, msgsize, "'%s' is too large", s);
        return -1;
    }
    while (*end == ' ')
        end++;
    double mul = 1;
    if (*end) {
        static const struct {
            char kind;
            const char *u;
            double mul;
        } units[] = {
            {'c', "k", 1e3},         {'c', "K", 1e3},
            {'c', "M", 1e6},         {'c', "G", 1e9},
            {'s', "B", 1},           {'s', "KB", 1024},
            {'s', "MB", 1048576},    {'s', "GB", 1073741824.0},
            {'d', "s", 1 / 86400.0}, {'d', "h", 1 / 24.0},
            {'d', "d", 1},           {'d', "days", 1},
            {'d', "w", 7},           {'d', "weeks", 7},
            {'d', "m", 30},          {'d', "months", 30},
            {'d', "y", 365},         {'d', "years", 365},
            {'t', "ms", 1},          {'t', "s", 1000},
        };
        int found = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (units[i].kind == unit_kind && strcmp(units[i].u, end) == 0) {
                mul = units[i].mul;
                found = 1;
            }
        if (!found) {
            snprintf(msg, msgsize, "unknown unit '%s' in '%s'", end, s);
            return -1;
        }
    }
    if (v * mul > 1e15) {
        snprintf(msg, msgsize, "'%s' is too large", s);
        return -1;
    }
    *out = v * mul;
    return 0;
}

static int parse_quantity(loader *L, const doc_node *n, int unit_kind, double *out)
{
    if (n->kind != DOC_SCALAR) return fail(L, n, "expected a number");
    char msg[300];
    if (model_quantity(n->str, unit_kind, out, msg, sizeof msg)) return fail(L, n, "%s", msg);
    return 0;
}

static int get_num(loader *L, const doc_node *map, const char *key, int unit_kind, double *out)
{
    doc_node *n = doc_get(map, key);
    if (n == NULL) return 0;
    return parse_quantity(L, n, unit_kind, out);
}

static int get_bool(loader *L, const doc_node *map, const char *key, int *out)
{
    doc_node *n = doc_get(map, key);
    if (n == NULL) return 0;
    if (n->kind == DOC_SCALAR && n->quoted == 0) {
        if (strcmp(n->str, "true") == 0 || strcmp(n->str, "yes") == 0) return *out = 1, 0;
        if (strcmp(n->str, "false") == 0 || strcmp(n->str, "no") == 0) return *out = 0, 0;
    }
    return fail(L, n, "'%s' must be true or false", key);
}

/* A list of names (or one name) into an arena array. */
static int get_names(loader *L, const doc_node *n, const char ***out, size_t *count)
{
    if (n->kind == DOC_SCALAR) {
        const char **v = alloc(L, sizeof *v);
        if (v == NULL) return -1;
        v[0] = n->str;
        *out = v;
        *count = 1;
        return 0;
    }
    if (want(L, n, DOC_SEQ, "a list of names")) return -1;
    const char **v = alloc(L, (n->n + 1) * sizeof *v);
    if (v == NULL) return -1;
    for (size_t i = 0; i < n->n; i++) {
        if (want(L, n->vals[i], DOC_SCALAR, "a name")) return -1;
        v[i] = n->vals[i]->str;
    }
    *out = v;
    *count = n->n;
    return 0;
}

/* ---- tables ---- */

static int load_keyattr(loader *L, const doc_node *n, const char *what, m_keyattr *k)
{
    k->type = 'S';
    if (n->kind == DOC_SCALAR) {
        k->name = n->str;
        return 0;
    }
    if (want(L, n, DOC_MAP, what)) return -1;
    static const char *const f[] = {"name", "type", NULL};
    only_fields(L, n, what, f);
    if (need_str(L, n, "name", what, &k->name)) return -1;
    const char *t = NULL;
    if (get_str(L, n, "type", &t)) return -1;
    if (t) {
        if (strcmp(t, "S") == 0 || strcmp(t, "string") == 0)
            k->type = 'S';
        else if (strcmp(t, "N") == 0 || strcmp(t, "number") == 0)
            k->type = 'N';
        else if (strcmp(t, "B") == 0 || strcmp(t, "binary") == 0)
            k->type = 'B';
        else
            return fail(L, doc_get(n, "type"), "key type must be S, N or B, not '%s'", t);
    }
    return 0;
}

/* A GSI key: one attribute, or a list of up to four (a multi-attribute key, whose parts are
 * attributes of the items themselves). */
static int load_key_parts(loader *L, const m_index *ix, const doc_node *n, const char *what,
                          m_keyattr *first, m_keyattr *parts, size_t *nparts)
{
    if (n->kind != DOC_SEQ) return load_keyattr(L, n, what, first);
    if (n->n == 0 || n->n > QR_MODEL_MAX_KEY_PARTS)
        return fail(L, n, "index %s: a multi-attribute %s has 1 to %d attributes, not %zu",
                    ix->name, what, QR_MODEL_MAX_KEY_PARTS, n->n);
    int bad = 0;
    for (size_t i = 0; i < n->n; i++) {
        bad |= load_keyattr(L, n->vals[i], what, &parts[i]);
        for (size_t j = 0; j < i && !bad; j++)
            if (parts[j].name && parts[i].name && strcmp(parts[j].name, parts[i].name) == 0)
                bad |= fail(L, n->vals[i], "index %s names %s twice in its key", ix->name,
                            parts[i].name);
    }
    if (bad) return -1;
    *nparts = n->n;
    *first = parts[0];
    return 0;
}

static int load_projection(loader *L, const doc_node *n, m_index *ix)
{
    if (n == NULL) return 0;
    if (n->kind == DOC_SEQ) {
        ix->projection = MP_INCLUDE;
        return get_names(L, n, &ix->include, &ix->ninclude);
    }
    if (want(L, n, DOC_SCALAR, "'projection'")) return -1;
    if (strcasecmp(n->str, "all") == 0)
        ix->projection = MP_ALL;
    else if (strcasecmp(n->str, "keys_only") == 0 || strcasecmp(n->str, "keys-only") == 0)
        ix->projection = MP_KEYS_ONLY;
    else
        return fail(L, n, "projection must be all, keys_only or a list of attributes, not '%s'",
                    n->str);
    return 0;
}

static int load_index(loader *L, m_table *t, const doc_node *n, int local, m_index *ix)
{
    const char *what = local ? "a local secondary index" : "a global secondary index";
    if (want(L, n, DOC_MAP, what)) return -1;
    static const char *const fg[] = {"name",          "partition_key",  "sort_key", "projection",
                                     "read_capacity", "write_capacity", NULL};
    static const char *const fl[] = {"name", "sort_key", "projection", NULL};
    only_fields(L, n, what, local ? fl : fg);
    ix->pos = pos_of(n);
    ix->local = local;
    if (need_str(L, n, "name", what, &ix->name)) return -1;
    if (model_table_index(t, ix->name))
        return fail(L, doc_get(n, "name"), "table %s already has an index named %s", t->name,
                    ix->name);
    int bad = 0;
    if (local) {
        ix->pk = t->pk;
    } else {
        doc_node *pk = doc_get(n, "partition_key");
        if (pk == NULL)
            bad |= fail(L, n, "index %s needs 'partition_key'", ix->name);
        else
            bad |=
                load_key_parts(L, ix, pk, "'partition_key'", &ix->pk, ix->pk_parts, &ix->npk_parts);
    }
    doc_node *sk = doc_get(n, "sort_key");
    if (local && sk == NULL) bad |= fail(L, n, "local index %s needs 'sort_key'", ix->name);
    if (local && sk && sk->kind == DOC_SEQ)
        bad |= fail(L, sk,
                    "local index %s: only global indexes take multi-attribute keys; an LSI's "
                    "sort key is one attribute",
                    ix->name);
    else if (sk)
        bad |= load_key_parts(L, ix, sk, "'sort_key'", &ix->sk, ix->sk_parts, &ix->nsk_parts);
    bad |= load_projection(L, doc_get(n, "projection"), ix);
    bad |= get_num(L, n, "read_capacity", 'c', &ix->rcu);
    bad |= get_num(L, n, "write_capacity", 'c', &ix->wcu);
    return bad;
}

/* The 'cql' section of a table: clustering_order (a map of clustering column to asc or
 * desc, in clustering order), default_time_to_live, indexes, types (a map of user type to
 * its fields as CQL, each after the types it uses), source. Its columns are
 * checked against the entities' sort keys once they are loaded (check_cql_tables). */
static int load_cql(loader *L, m_table *t, const doc_node *n)
{
    if (want(L, n, DOC_MAP, "'cql'")) return -1;
    static const char *const f[] = {
        "clustering_order", "default_time_to_live", "indexes", "types", "source", NULL};
    only_fields(L, n, "'cql'", f);
    if ((t->cql = alloc(L, sizeof *t->cql)) == NULL) return -1;
    t->cql->pos = pos_of(n);
    if (t->nidx) return fail(L, n, "CQL table %s cannot have gsis or lsis", t->name);
    doc_node *o = doc_get(n, "clustering_order");
    if (o) {
        if (want(L, o, DOC_MAP, "'clustering_order'")) return -1;
        if (t->sk.name == NULL && o->n)
            return fail(L, o, "table %s has no sort key, so it has no clustering columns", t->name);
        if ((t->cql->order = alloc(L, (o->n + 1) * sizeof *t->cql->order)) == NULL) return -1;
        for (size_t i = 0; i < o->n; i++) {
            if (want(L, o->vals[i], DOC_SCALAR, "a clustering order")) return -1;
            const char *d = o->vals[i]->str;
            int desc = strcasecmp(d, "desc") == 0;
            if (!desc && strcasecmp(d, "asc") != 0)
                return fail(L, o->vals[i], "clustering order must be asc or desc, not '%s'", d);
            t->cql->order[t->cql->norder++] = (m_order){o->keys[i]->str, desc, pos_of(o->keys[i])};
        }
    }
    if (get_num(L, n, "default_time_to_live", 'd', &t->cql->default_ttl_days)) return -1;
    doc_node *ix = doc_get(n, "indexes");
    if (ix && get_names(L, ix, &t->cql->indexes, &t->cql->nindexes)) return -1;
    doc_node *ty = doc_get(n, "types");
    if (ty) {
        if (want(L, ty, DOC_MAP, "'types'")) return -1;
        t->cql->types = alloc(L, (ty->n + 1) * sizeof *t->cql->types);
        t->cql->type_fields = alloc(L, (ty->n + 1) * sizeof *t->cql->type_fields);
        if (t->cql->types == NULL || t->cql->type_fields == NULL) return -1;
        for (size_t i = 0; i < ty->n; i++) {
            if (want(L, ty->vals[i], DOC_SCALAR, "a user type's fields")) return -1;
            t->cql->types[i] = ty->keys[i]->str;
            t->cql->type_fields[i] = ty->vals[i]->str;
        }
        t->cql->ntypes = ty->n;
    }
    return get_str(L, n, "source", &t->cql->source);
}

/* A CQL table's clustering_order names its entities' clustering columns (the variables of
 * their sort-key templates) in their order; its indexes name their attributes. */
static int check_cql_tables(loader *L, const doc_node *tables)
{
    for (size_t ti = 0; ti < L->m->ntables; ti++) {
        m_table *t = &L->m->tables[ti];
        if (t->cql == NULL) continue;
        doc_node *cn = doc_get(tables->vals[ti], "cql");
        for (size_t ei = 0; ei < L->m->nentities; ei++) {
            const m_entity *e = &L->m->entities[ei];
            if (e->table != t) continue;
            size_t k = 0;
            for (size_t i = 0; i < e->sk.nseg && k < t->cql->norder; i++) {
                if (!e->sk.seg[i].is_var) continue;
                const m_order *o = &t->cql->order[k];
                if (strcmp(e->sk.seg[i].text, o->column) != 0) {
                    fail_at(L, o->pos.line, o->pos.col,
                            "clustering_order of table %s names %s where entity %s's sort key "
                            "has %s",
                            t->name, o->column, e->name, e->sk.seg[i].text);
                    k = t->cql->norder;
                    break;
                }
                k++;
            }
            if (k < t->cql->norder) {
                const m_order *o = &t->cql->order[k];
                fail_at(L, o->pos.line, o->pos.col,
                        "clustering_order of table %s names %s, which is not a clustering column "
                        "(a variable of entity %s's sk)",
                        t->name, o->column, e->name);
            }
            for (size_t i = 0; i < t->cql->nindexes; i++)
                if (model_entity_attr(e, t->cql->indexes[i]) == NULL)
                    fail(L, doc_get(cn, "indexes"),
                         "table %s indexes '%s', which entity %s does not define%s", t->name,
                         t->cql->indexes[i], e->name, attr_hint(e, t->cql->indexes[i]));
        }
    }
    return 0;
}

int model_clustering_order(const m_table *t, const char *col)
{
    if (t->cql == NULL) return 0;
    for (size_t i = 0; i < t->cql->norder; i++)
        if (strcmp(t->cql->order[i].column, col) == 0) return t->cql->order[i].desc ? -1 : 1;
    return 0;
}

/* 'existing': true, or {lsis: [NAME, ...]}: the table exists with exactly these LSIs
 * (LSIs are made with a table, never added later), each of which the model declares. */
static int load_existing(loader *L, m_table *t, const doc_node *n)
{
    t->existing_pos = pos_of(n);
    if (n->kind == DOC_SCALAR) {
        if (!n->quoted && (strcmp(n->str, "true") == 0 || strcmp(n->str, "yes") == 0))
            return t->existing = 1, 0;
        if (!n->quoted && (strcmp(n->str, "false") == 0 || strcmp(n->str, "no") == 0)) return 0;
        return fail(L, n, "'existing' must be true, false or {lsis: [...]}");
    }
    if (want(L, n, DOC_MAP, "'existing'")) return -1;
    static const char *const f[] = {"lsis", NULL};
    only_fields(L, n, "'existing'", f);
    t->existing = 1;
    doc_node *l = doc_get(n, "lsis");
    if (l == NULL) return 0;
    if (get_names(L, l, &t->existing_lsis, &t->nexisting_lsis)) return -1;
    int bad = 0;
    for (size_t i = 0; i < t->nexisting_lsis; i++) {
        const m_index *ix = model_table_index(t, t->existing_lsis[i]);
        if (ix == NULL || !ix->local)
            bad |= fail(L, l->kind == DOC_SEQ ? l->vals[i] : l,
                        "existing table %s was created with LSI '%s', which its 'lsis' do not "
                        "declare (an LSI cannot be dropped: declare it)%s",
                        t->name, t->existing_lsis[i],
                        hint(t->existing_lsis[i], name_of_index, t, t->nidx));
    }
    return bad;
}

static int load_table(loader *L, const doc_node *name, const doc_node *n, m_table *t)
{
    t->name = name->str;
    t->pos = pos_of(name);
    if (want(L, n, DOC_MAP, "a table")) return -1;
    static const char *const f[] = {"partition_key",
                                    "sort_key",
                                    "billing",
                                    "read_capacity",
                                    "write_capacity",
                                    "ttl",
                                    "gsis",
                                    "lsis",
                                    "cql",
                                    "existing",
                                    NULL};
    only_fields(L, n, "a table", f);
    int bad = 0;
    doc_node *pk = doc_get(n, "partition_key");
    if (pk == NULL)
        bad |= fail(L, name, "table %s needs 'partition_key'", t->name);
    else
        bad |= load_keyattr(L, pk, "'partition_key'", &t->pk);
    doc_node *sk = doc_get(n, "sort_key");
    if (sk) bad |= load_keyattr(L, sk, "'sort_key'", &t->sk);
    const char *billing = NULL;
    bad |= get_str(L, n, "billing", &billing);
    if (billing) {
        if (strcasecmp(billing, "on-demand") == 0 || strcasecmp(billing, "pay_per_request") == 0)
            t->provisioned = 0;
        else if (strcasecmp(billing, "provisioned") == 0)
            t->provisioned = 1;
        else
            bad |= fail(L, doc_get(n, "billing"),
                        "billing must be on-demand or provisioned, not '%s'", billing);
    }
    int caps = get_num(L, n, "read_capacity", 'c', &t->rcu);
    caps |= get_num(L, n, "write_capacity", 'c', &t->wcu);
    bad |= caps;
    if (!caps && t->provisioned && (t->rcu <= 0 || t->wcu <= 0))
        bad |=
            fail(L, name, "provisioned table %s needs read_capacity and write_capacity", t->name);
    bad |= get_str(L, n, "ttl", &t->ttl);
    doc_node *g = doc_get(n, "gsis"), *l = doc_get(n, "lsis");
    if (g && want(L, g, DOC_SEQ, "'gsis'")) g = NULL, bad = -1;
    if (l && want(L, l, DOC_SEQ, "'lsis'")) l = NULL, bad = -1;
    size_t total = (g ? g->n : 0) + (l ? l->n : 0);
    if (total > QR_MODEL_MAX_INDEXES)
        return fail(L, g ? g : l,
                    "table %s declares %zu indexes; a model may declare at most %d per table",
                    t->name, total, QR_MODEL_MAX_INDEXES);
    t->idx = alloc(L, (total + 1) * sizeof *t->idx);
    if (t->idx == NULL) return -1;
    for (size_t i = 0; g && i < g->n; i++, t->nidx++)
        bad |= load_index(L, t, g->vals[i], 0, &t->idx[t->nidx]);
    if (l && t->sk.name == NULL && l->n)
        bad |= fail(L, l, "table %s has no sort key, so it cannot have local indexes", t->name);
    else
        for (size_t i = 0; l && i < l->n; i++, t->nidx++)
            bad |= load_index(L, t, l->vals[i], 1, &t->idx[t->nidx]);
    doc_node *c = doc_get(n, "cql");
    if (c) bad |= load_cql(L, t, c);
    doc_node *ex = doc_get(n, "existing");
    if (ex) bad |= load_existing(L, t, ex);
    return bad;
}

/* ---- attributes and templates ---- */

static const struct {
    const char *name;
    m_format f;
    m_type t;
} formats[] = {
    {"timestamp", MF_TIMESTAMP, MT_STRING}, {"iso8601", MF_TIMESTAMP, MT_STRING},
    {"date", MF_DATE, MT_STRING},           {"month", MF_MONTH, MT_STRING},
    {"year", MF_YEAR, MT_STRING},           {"epoch", MF_EPOCH, MT_NUMBER},
    {"zero-padded", MF_PADDED, MT_STRING},  {"integer", MF_INTEGER, MT_NUMBER},
    {"enum", MF_ENUM, MT_STRING},           {"uuid", MF_UUID, MT_STRING},
    {"ulid", MF_ULID, MT_STRING},           {"id", MF_ID, MT_STRING},
    {"shard", MF_SHARD, MT_NUMBER},         {"text", MF_NONE, MT_STRING},
};
static const struct {
    const char *name;
    m_type t;
} types[] = {
    {"string", MT_STRING}, {"number", MT_NUMBER}, {"boolean", MT_BOOLEAN}, {"binary", MT_BINARY},
    {"map", MT_MAP},       {"list", MT_LIST},     {"set", MT_SET},
};

const char *model_format_name(m_format f)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].f == f) return formats[i].name;
    return "text";
}

const char *model_type_name(m_type t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].t == t) return types[i].name;
    return "string";
}

/* Sets a's type or format from a word; 0 if known, -1 if not. */
static int type_or_format(m_attr *a, const char *w)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, w) == 0) {
            a->format = formats[i].f;
            a->type = formats[i].t;
            return 0;
        }
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, w) == 0) {
            a->type = types[i].t;
            return 0;
        }
    return -1;
}

static const char *format_or_type_name(const void *ctx, size_t i)
{
    (void)ctx;
    size_t nf = sizeof formats / sizeof formats[0];
    return i < nf ? formats[i].name : types[i - nf].name;
}

static const char *format_hint(const char *w)
{
    return hint(w, format_or_type_name, NULL,
                sizeof formats / sizeof formats[0] + sizeof types / sizeof types[0]);
}

static int load_attr(loader *L, const doc_node *name, const doc_node *n, m_attr *a)
{
    a->name = name->str;
    a->pos = pos_of(name);
    if (n->kind == DOC_SCALAR) {
        if (type_or_format(a, n->str))
            return fail(L, n, "unknown attribute type or format '%s'%s", n->str,
                        format_hint(n->str));
        if (a->format == MF_ENUM || a->format == MF_PADDED || a->format == MF_SHARD)
            return fail(L, n, "attribute %s: format %s needs the long form with its %s", a->name,
                        n->str,
                        a->format == MF_ENUM     ? "values"
                        : a->format == MF_PADDED ? "width"
                                                 : "shards");
        return 0;
    }
    if (want(L, n, DOC_MAP, "an attribute")) return -1;
    static const char *const f[] = {"type",    "format",      "width",    "pattern", "values",
                                    "shards",  "cardinality", "hottest",  "size",    "example",
                                    "copy_of", "copy_key",    "cql_type", "static",  NULL};
    only_fields(L, n, "an attribute", f);
    int bad = 0;
    const char *t = NULL, *fm = NULL;
    bad |= get_str(L, n, "format", &fm);
    bad |= get_str(L, n, "type", &t);
    if (fm && type_or_format(a, fm))
        bad |= fail(L, doc_get(n, "format"), "unknown format '%s'%s", fm, format_hint(fm));
    if (t) {
        m_attr tmp = {0};
        if (type_or_format(&tmp, t) || tmp.format != MF_NONE)
            bad |= fail(L, doc_get(n, "type"), "unknown type '%s'%s", t, format_hint(t));
        else
            a->type = tmp.type;
    }
    double width = 0, shards = 0;
    bad |= get_num(L, n, "width", 'c', &width);
    bad |= get_num(L, n, "shards", 'c', &shards);
    if (width > 38) bad |= fail(L, doc_get(n, "width"), "'width' is at most 38 digits");
    if (shards > 100000) bad |= fail(L, doc_get(n, "shards"), "'shards' is at most 100000");
    a->width = width > 38 ? 0 : (int)width;
    a->shards = shards > 100000 ? 0 : (int)shards;
    bad |= get_str(L, n, "pattern", &a->pattern);
    bad |= get_str(L, n, "example", &a->example);
    bad |= get_str(L, n, "copy_of", &a->copy_of);
    bad |= get_str(L, n, "cql_type", &a->cql_type);
    bad |= get_bool(L, n, "static", &a->is_static);
    bad |= get_num(L, n, "cardinality", 'c', &a->cardinality);
    bad |= get_num(L, n, "hottest", 'c', &a->hottest);
    bad |= get_num(L, n, "size", 's', &a->size);
    if (a->hottest > 1)
        bad |= fail(L, doc_get(n, "hottest"), "'hottest' is a share of traffic between 0 and 1");
    if (doc_get(n, "size") && a->size <= 0 && !bad)
        bad |= fail(L, doc_get(n, "size"),
                    "attribute %s: 'size' must be more than 0 bytes (leave it out to use the "
                    "format's typical size)",
                    a->name);
    if (doc_get(n, "cardinality") && a->cardinality <= 0 && !bad)
        bad |= fail(L, doc_get(n, "cardinality"),
                    "attribute %s: 'cardinality' must be at least 1 distinct value", a->name);
    doc_node *v = doc_get(n, "values");
    if (v) bad |= get_names(L, v, &a->values, &a->nvalues);
    if (a->format == MF_ENUM && a->nvalues == 0 && !v)
        bad |= fail(L, n, "enum attribute %s needs 'values'", a->name);
    else if (a->format == MF_ENUM && a->nvalues == 0 && !bad)
        bad |= fail(L, v, "enum attribute %s: 'values' is empty", a->name);
    if (a->format == MF_PADDED && (a->width < 1 || a->width > 38))
        bad |= fail(L, n, "zero-padded attribute %s needs a 'width' from 1 to 38", a->name);
    if (a->format == MF_SHARD && a->shards < 2)
        bad |= fail(L, n, "shard attribute %s needs 'shards' of 2 or more", a->name);
    if (a->pattern && a->format != MF_DATE)
        bad |= fail(L, doc_get(n, "pattern"), "'pattern' applies to format date only");
    doc_node *ck = doc_get(n, "copy_key");
    if (ck) {
        if (a->copy_of == NULL)
            return fail(L, ck, "attribute %s: 'copy_key' applies to a copy (with copy_of)",
                        a->name);
        if (want(L, ck, DOC_MAP, "'copy_key'")) return -1;
        if ((a->copy_key = alloc(L, (ck->n + 1) * sizeof *a->copy_key)) == NULL) return -1;
        for (size_t i = 0; i < ck->n; i++) {
            if (want(L, ck->vals[i], DOC_SCALAR, "a 'copy_key' attribute")) return -1;
            a->copy_key[a->ncopy_key++] =
                (m_keymap){ck->keys[i]->str, ck->vals[i]->str, pos_of(ck->keys[i])};
        }
    }
    if (bad) {
        /* what failed stays unusable: a later stage must not read a half-set format */
        if (a->format == MF_ENUM && a->nvalues == 0) a->format = MF_NONE;
        if (a->format == MF_PADDED && a->width < 1) a->format = MF_NONE;
        if (a->format == MF_SHARD && a->shards < 2) a->format = MF_NONE;
    }
    return bad;
}

const m_attr *model_copy_key_attr(const m_entity *e, const m_attr *a, const char *var)
{
    for (size_t i = 0; i < a->ncopy_key; i++)
        if (strcmp(a->copy_key[i].source, var) == 0)
            return model_entity_attr(e, a->copy_key[i].copy);
    return model_entity_attr(e, var);
}

m_attr *model_entity_attr(const m_entity *e, const char *name)
{
    for (size_t i = 0; i < e->nattrs; i++)
        if (strcmp(e->attrs[i].name, name) == 0) return &e->attrs[i];
    return NULL;
}

/* Splits "USER#{userId}#{month}" into literal and variable segments bound to e's attributes. */
static int load_template(loader *L, m_entity *e, const doc_node *n, const char *what, m_template *t)
{
    if (want(L, n, DOC_SCALAR, what)) return -1;
    t->pos = pos_of(n);
    if (n->str[0] == '\0')
        return fail(L, n, "%s of entity %s is empty: a key template needs text or a {variable}",
                    what, e->name);
    t->text = n->str;
    size_t len = strlen(n->str), cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += n->str[i] == '{' ? 2 : 0;
    t->seg = alloc(L, (cap + 1) * sizeof *t->seg);
    if (t->seg == NULL) return -1;
    const char *s = n->str;
    int off = n->quoted ? 1 : 0; /* column of s[0] relative to the node */
    for (size_t i = 0; i < len;) {
        if (s[i] == '}') return fail(L, n, "%s '%s': '}' without '{'", what, s);
        if (s[i] != '{') {
            size_t j = i;
            while (j < len && s[j] != '{' && s[j] != '}')
                j++;
            char *lit = alloc(L, j - i + 1);
            if (lit == NULL) return -1;
            memcpy(lit, s + i, j - i);
            t->seg[t->nseg++] = (m_seg){0, lit, NULL};
            i = j;
            continue;
        }
        const char *close = strchr(s + i, '}');
        if (close == NULL) return fail(L, n, "%s '%s': '{' is never closed", what, s);
        size_t vlen = (size_t)(close - (s + i + 1));
        char *var = alloc(L, vlen + 1);
        if (var == NULL) return -1;
        memcpy(var, s + i + 1, vlen);
        if (vlen == 0 || strchr(var, '{'))
            return fail(L, n, "%s '%s': empty or nested variable", what, s);
        m_attr *a = model_entity_attr(e, var);
        if (a == NULL)
            return fail_at(L, n->line, n->col + off + (int)i + 1,
                           "template variable '%s' in %s of entity %s is not defined by any of "
                           "its attributes%s",
                           var, what, e->name, attr_hint(e, var));
        if (t->nseg && t->seg[t->nseg - 1].is_var)
            return fail_at(L, n->line, n->col + off + (int)i,
                           "%s '%s': variables {%s} and {%s} need a separator between them", what,
                           s, t->seg[t->nseg - 1].text, var);
        t->seg[t->nseg++] = (m_seg){1, var, a};
        i += vlen + 2;
    }
    return 0;
}

int model_template_is_constant(const m_template *t)
{
    for (size_t i = 0; i < t->nseg; i++)
        if (t->seg[i].is_var) return 0;
    return 1;
}

const char *model_template_prefix(ck_arena *a, const m_template *t)
{
    if (t->nseg && !t->seg[0].is_var) return ck_arena_strdup(a, t->seg[0].text);
    return "";
}

/* ---- entities ---- */

m_table *model_table(const qr_model *m, const char *name)
{
    for (size_t i = 0; i < m->ntables; i++)
        if (strcmp(m->tables[i].name, name) == 0) return &m->tables[i];
    return NULL;
}

m_entity *model_entity(const qr_model *m, const char *name)
{
    for (size_t i = 0; i < m->nentities; i++)
        if (strcmp(m->entities[i].name, name) == 0) return &m->entities[i];
    return NULL;
}

m_index *model_table_index(const m_table *t, const char *name)
{
    for (size_t i = 0; i < t->nidx; i++)
        if (t->idx[i].name && strcmp(t->idx[i].name, name) == 0) return &t->idx[i];
    return NULL;
}

const m_entkey *model_entity_key(const m_entity *e, const m_index *ix)
{
    for (size_t i = 0; i < e->nkeys; i++)
        if (e->keys[i].index == ix) return &e->keys[i];
    return NULL;
}

/* A key of type N holds a number: its template must be one number variable (or a number). */
static int check_key_type(loader *L, const m_entity *e, const doc_node *n, const char *what,
                          const m_template *t, const m_keyattr *k)
{
    if (k->type != 'N' || t->text == NULL) return 0;
    if (t->nseg == 1 && t->seg[0].is_var && t->seg[0].attr->type == MT_NUMBER) return 0;
    char *end;
    if (t->nseg == 1 && !t->seg[0].is_var) {
        errno = 0;
        double v = strtod(t->seg[0].text, &end);
        if (*end == '\0' && errno == 0 && isfinite(v)) return 0;
    }
    const char *var = NULL;
    for (size_t i = 0; i < t->nseg && var == NULL; i++)
        if (t->seg[i].is_var) var = t->seg[i].text;
    const char *key = k->name ? k->name : "the key";
    if (var)
        return fail(L, n,
                    "%s \"%s\" of entity %s writes text, but key %s is a number (type N): make "
                    "it \"{%s}\" with %s of type number, or make %s type S",
                    what, t->text, e->name, key, var, var, key);
    return fail(L, n,
                "%s \"%s\" of entity %s is not a number, but key %s is a number (type N): write "
                "a number, or make %s type S",
                what, t->text, e->name, key, key);
}

/* The template of a multi-attribute key: its parts as variables of e's attributes of the
 * same names (", " between them, for people). Reports the parts e lacks or types wrongly at
 * n (quiet when n is NULL: the entity is only tried). */
static int key_parts_template(loader *L, m_entity *e, const m_index *ix, const m_keyattr *parts,
                              size_t nparts, const doc_node *n, m_template *t)
{
    char text[600] = "";
    t->seg = alloc(L, (2 * nparts + 1) * sizeof *t->seg);
    if (t->seg == NULL) return -1;
    int bad = 0;
    for (size_t i = 0; i < nparts; i++) {
        m_attr *a = model_entity_attr(e, parts[i].name);
        if (a == NULL) {
            bad = n ? fail(L, n,
                           "entity %s has no attribute %s, part of the key of index %s "
                           "(multi-attribute keys are the items' own attributes)%s",
                           e->name, parts[i].name, ix->name, attr_hint(e, parts[i].name))
                    : -1;
            continue;
        }
        int numeric = a->type == MT_NUMBER,
            scalar = a->type == MT_STRING || numeric || a->type == MT_BINARY;
        if (!scalar || (parts[i].type == 'N') != numeric ||
            (parts[i].type == 'B') != (a->type == MT_BINARY)) {
            bad =
                n ? fail(L, n, "attribute %s of entity %s is a %s, but index %s keys it as type %c",
                         a->name, e->name, model_type_name(a->type), ix->name, parts[i].type)
                  : -1;
            continue;
        }
        if (t->nseg) t->seg[t->nseg++] = (m_seg){0, ", ", NULL};
        t->seg[t->nseg++] = (m_seg){1, a->name, a};
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s{%s}", i ? ", " : "", a->name);
    }
    if (bad) return -1;
    t->text = ck_arena_strdup(&L->m->arena, text);
    if (n) t->pos = pos_of(n);
    return t->text ? 0 : err_set(L->err, QR_E_INTERNAL, "out of memory");
}

static int load_index_keys(loader *L, m_entity *e, const doc_node *name, const doc_node *v,
                           m_entkey *k)
{
    if (want(L, v, DOC_MAP, "index keys")) return -1;
    static const char *const fk[] = {"pk", "sk", "when", NULL};
    only_fields(L, v, "index keys", fk);
    int bad = 0;
    const m_index *ix = k->index;
    doc_node *ipk = doc_get(v, "pk"), *isk = doc_get(v, "sk");
    if (ix->local) {
        if (ipk)
            bad |= fail(L, ipk,
                        "index %s is local: it shares the table's partition key, so give only "
                        "'sk'",
                        ix->name);
    } else if (ix->npk_parts) {
        if (ipk)
            bad |= fail(L, ipk,
                        "index %s has a multi-attribute partition key: its parts are the item's "
                        "attributes, so give no 'pk'",
                        ix->name);
        else
            bad |= key_parts_template(L, e, ix, ix->pk_parts, ix->npk_parts, name, &k->pk);
    } else if (ipk == NULL) {
        bad |= fail(L, v, "entity %s needs 'pk' for index %s", e->name, ix->name);
    } else if (load_template(L, e, ipk, "index pk", &k->pk) == 0) {
        bad |= check_key_type(L, e, ipk, "index pk", &k->pk, &ix->pk);
    } else {
        bad = -1;
    }
    if (ix->nsk_parts) {
        if (isk)
            bad |= fail(L, isk,
                        "index %s has a multi-attribute sort key: its parts are the item's "
                        "attributes, so give no 'sk'",
                        ix->name);
        else
            bad |= key_parts_template(L, e, ix, ix->sk_parts, ix->nsk_parts, name, &k->sk);
    } else if (isk && ix->sk.name == NULL)
        bad |= fail(L, isk, "index %s has no sort key", ix->name);
    else if (!isk && ix->sk.name)
        bad |= fail(L, v, "entity %s needs 'sk' for index %s", e->name, ix->name);
    else if (isk && load_template(L, e, isk, "index sk", &k->sk) == 0)
        bad |= check_key_type(L, e, isk, "index sk", &k->sk, &ix->sk);
    else if (isk)
        bad = -1;
    doc_node *w = doc_get(v, "when");
    if (w) {
        if (want(L, w, DOC_MAP, "'when'")) return -1;
        if ((k->when = alloc(L, (w->n + 1) * sizeof *k->when)) == NULL) return -1;
        for (size_t j = 0; j < w->n; j++) {
            if (want(L, w->vals[j], DOC_SCALAR, "a 'when' value")) {
                bad = -1;
                continue;
            }
            if (model_entity_attr(e, w->keys[j]->str) == NULL) {
                bad |= fail(L, w->keys[j], "'when' names '%s', which entity %s does not define%s",
                            w->keys[j]->str, e->name, attr_hint(e, w->keys[j]->str));
                continue;
            }
            k->when[k->nwhen++] = (m_given){w->keys[j]->str, w->vals[j]->str, pos_of(w->keys[j])};
        }
    }
    return bad;
}

static int load_entity(loader *L, const doc_node *name, const doc_node *n, m_entity *e)
{
    e->name = name->str;
    e->pos = pos_of(name);
    if (want(L, n, DOC_MAP, "an entity")) return -1;
    static const char *const f[] = {"table",      "pk",      "sk",        "indexes",
                                    "attributes", "count",   "item_size", "growth_per_day",
                                    "retention",  "counter", NULL};
    only_fields(L, n, "an entity", f);
    int bad = 0;
    const char *tname = NULL;
    bad |= get_str(L, n, "table", &tname);
    if (bad) {
    } else if (tname == NULL) {
        if (L->m->ntables != 1)
            bad |= fail(L, name, "entity %s needs 'table' (the model has %zu tables)", e->name,
                        L->m->ntables);
        else
            e->table = &L->m->tables[0];
    } else if ((e->table = model_table(L->m, tname)) == NULL) {
        bad |= fail(L, doc_get(n, "table"),
                    "entity %s refers to table '%s', which the model does not define%s", e->name,
                    tname, hint(tname, name_of_table, L->m, L->m->ntables));
    }
    doc_node *attrs = doc_get(n, "attributes");
    if (attrs && want(L, attrs, DOC_MAP, "'attributes'")) attrs = NULL, bad = -1;
    if (attrs) {
        e->attrs = alloc(L, (attrs->n + 1) * sizeof *e->attrs);
        if (e->attrs == NULL) return -1;
        for (size_t i = 0; i < attrs->n; i++, e->nattrs++)
            bad |= load_attr(L, attrs->keys[i], attrs->vals[i], &e->attrs[i]);
        if (OOM(L)) return -1;
    }
    doc_node *pk = doc_get(n, "pk"), *sk = doc_get(n, "sk");
    if (pk == NULL)
        bad |= fail(L, name, "entity %s needs 'pk', its partition key template", e->name);
    else if (load_template(L, e, pk, "pk", &e->pk))
        bad = -1;
    else if (e->table)
        bad |= check_key_type(L, e, pk, "pk", &e->pk, &e->table->pk);
    if (e->table == NULL) {
        if (sk && load_template(L, e, sk, "sk", &e->sk)) bad = -1;
    } else if (sk && e->table->sk.name == NULL) {
        bad |=
            fail(L, sk, "entity %s has 'sk' but table %s has no sort key", e->name, e->table->name);
    } else if (!sk && e->table->sk.name) {
        bad |= fail(L, name, "entity %s needs 'sk': table %s has sort key %s", e->name,
                    e->table->name, e->table->sk.name);
    } else if (sk && load_template(L, e, sk, "sk", &e->sk) == 0) {
        bad |= check_key_type(L, e, sk, "sk", &e->sk, &e->table->sk);
    } else if (sk) {
        bad = -1;
    }
    doc_node *ix = doc_get(n, "indexes");
    if (ix && want(L, ix, DOC_MAP, "'indexes'")) ix = NULL, bad = -1;
    if (ix && e->table) {
        e->keys = alloc(L, (ix->n + 1) * sizeof *e->keys);
        if (e->keys == NULL) return -1;
        for (size_t i = 0; i < ix->n; i++) {
            m_entkey *k = &e->keys[e->nkeys];
            k->index = model_table_index(e->table, ix->keys[i]->str);
            if (k->index == NULL) {
                bad |= fail(L, ix->keys[i],
                            "entity %s has keys for index '%s', which table %s does not define%s",
                            e->name, ix->keys[i]->str, e->table->name,
                            hint(ix->keys[i]->str, name_of_index, e->table, e->table->nidx));
                continue;
            }
            e->nkeys++;
            bad |= load_index_keys(L, e, ix->keys[i], ix->vals[i], k);
            if (OOM(L)) return -1;
        }
    }
    /* an item with every attribute of a multi-attribute GSI key is in that index, listed
     * or not (DynamoDB indexes it by those attributes) */
    if (e->table && e->table->nidx) {
        m_entkey *keys = alloc(L, (e->nkeys + e->table->nidx + 1) * sizeof *keys);
        if (keys == NULL) return -1;
        if (e->nkeys) memcpy(keys, e->keys, e->nkeys * sizeof *keys);
        e->keys = keys;
        for (size_t i = 0; i < e->table->nidx; i++) {
            m_index *gx = &e->table->idx[i];
            if (gx->local || gx->npk_parts == 0 || (gx->sk.name && gx->nsk_parts == 0) ||
                model_entity_key(e, gx))
                continue;
            m_entkey *k = &e->keys[e->nkeys];
            *k = (m_entkey){gx, {0}, {0}, NULL, 0};
            if (key_parts_template(L, e, gx, gx->pk_parts, gx->npk_parts, NULL, &k->pk) == 0 &&
                (gx->nsk_parts == 0 ||
                 key_parts_template(L, e, gx, gx->sk_parts, gx->nsk_parts, NULL, &k->sk) == 0)) {
                k->pk.pos = k->sk.pos = e->pos;
                e->nkeys++;
            }
            if (OOM(L)) return -1;
        }
    }
    bad |= get_num(L, n, "count", 'c', &e->count);
    int size_bad = get_num(L, n, "item_size", 's', &e->item_size);
    bad |= size_bad;
    bad |= get_num(L, n, "growth_per_day", 'c', &e->growth_per_day);
    doc_node *ret = doc_get(n, "retention");
    int ret_bad = get_num(L, n, "retention", 'd', &e->retention_days);
    bad |= ret_bad;
    bad |= get_bool(L, n, "counter", &e->counter);
    if (!size_bad && doc_get(n, "item_size") && e->item_size <= 0)
        bad |=
            fail(L, doc_get(n, "item_size"),
                 "entity %s: item_size must be more than 0 bytes (leave it out for 1 KB)", e->name);
    if (!ret_bad && ret && ret->kind == DOC_SCALAR && strcmp(ret->str, "forever") != 0 &&
        e->retention_days <= 0)
        bad |= fail(L, ret,
                    "entity %s: a retention of 0 keeps nothing; give a duration (30d, 1y) or "
                    "forever",
                    e->name);
    if (e->table && e->table->cql && e->item_size > QR_MODEL_CQL_MAX_ROW)
        bad |= fail(L, doc_get(n, "item_size"),
                    "item_size exceeds Cassandra's largest write by default, 16 MB (half of "
                    "commitlog_segment_size)");
    if (e->table && !e->table->cql && e->item_size > 409600)
        bad |= fail(L, doc_get(n, "item_size"), "item_size exceeds DynamoDB's 400 KB item limit");
    return bad;
}

int model_table_needs_stream(const qr_model *m, const m_table *t)
{
    for (size_t i = 0; i < m->ndenorms; i++) {
        if (m->denorms[i].strategy != MS_STREAM) continue;
        const char *src = m->denorms[i].source, *dot = strchr(src, '.');
        for (size_t e = 0; dot && e < m->nentities; e++)
            if (m->entities[e].table == t && strlen(m->entities[e].name) == (size_t)(dot - src) &&
                strncmp(m->entities[e].name, src, (size_t)(dot - src)) == 0)
                return 1;
    }
    for (size_t i = 0; i < m->naggregates; i++)
        if (m->aggregates[i].strategy == MS_STREAM && m->aggregates[i].of->table == t) return 1;
    return 0;
}

double model_item_size(const m_entity *e)
{
    return e->item_size > 0 ? e->item_size : 1024;
}

double model_attr_size(const m_attr *a)
{
    if (a->size > 0) return a->size;
    switch (a->format) {
    case MF_TIMESTAMP:
        return 20;
    case MF_DATE:
        return 10;
    case MF_MONTH:
        return 7;
    case MF_YEAR:
        return 4;
    case MF_UUID:
        return 36;
    case MF_ULID:
        return 26;
    case MF_PADDED:
        return a->width;
    case MF_EPOCH:
        return 6;
    case MF_SHARD:
        return 2;
    default:
        break;
    }
    switch (a->type) {
    case MT_NUMBER:
        return 8;
    case MT_BOOLEAN:
        return 1;
    case MT_MAP:
    case MT_LIST:
    case MT_SET:
        return 200;
    default:
        return 24;
    }
}

/* ---- access patterns ---- */

static const char *const kind_names[] = {"get",    "query",       "put", "update",
                                         "delete", "transaction", NULL};

const char *model_kind_name(m_kind k)
{
    return kind_names[k];
}

static int has_attr_anywhere(const m_pattern *p, const char *name)
{
    if (model_entity_attr(p->entity, name)) return 1;
    for (size_t i = 0; i < p->nalso; i++)
        if (model_entity_attr(p->also[i], name)) return 1;
    return 0;
}

/* Resolves entity name en (node where) of pattern p; NULL (reported) when the model does
 * not define it. */
static m_entity *pattern_entity(loader *L, const m_pattern *p, const doc_node *where,
                                const char *ename)
{
    m_entity *e = model_entity(L->m, ename);
    if (e == NULL)
        fail(L, where, "access pattern %s refers to entity '%s', which the model does not define%s",
             p->name, ename, entity_hint(L, ename));
    return e;
}

static const char *pattern_attr_hint(const m_pattern *p, const char *name)
{
    return attr_hint(p->entity, name);
}

static int load_pattern(loader *L, const doc_node *n, m_pattern *p)
{
    if (want(L, n, DOC_MAP, "an access pattern")) return -1;
    static const char *const f[] = {"name",
                                    "sentence",
                                    "kind",
                                    "entity",
                                    "entities",
                                    "given",
                                    "sk_condition",
                                    "order_by",
                                    "direction",
                                    "limit",
                                    "result_size",
                                    "latency",
                                    "rps",
                                    "consistent",
                                    "aggregate",
                                    "index",
                                    "statement",
                                    "source",
                                    "allow_filtering",
                                    "ttl",
                                    "in",
                                    "static_only",
                                    "sets",
                                    NULL};
    only_fields(L, n, "an access pattern", f);
    p->pos = pos_of(n);
    if (need_str(L, n, "name", "an access pattern", &p->name)) return -1;
    int bad = get_str(L, n, "sentence", &p->sentence);
    const char *kind = NULL;
    if (need_str(L, n, "kind", "an access pattern", &kind)) {
        bad = -1;
    } else {
        size_t k = 0;
        while (k < 6 && strcmp(kind_names[k], kind) != 0)
            k++;
        if (k == 6)
            bad |= fail(L, doc_get(n, "kind"),
                        "kind must be get, query, put, update, delete or transaction, not "
                        "'%s'%s",
                        kind, hint(kind, name_in_list, kind_names, 6));
        else
            p->kind = (m_kind)k;
    }
    const char *ename = NULL;
    doc_node *en = doc_get(n, "entity"), *ens = doc_get(n, "entities");
    const char **names = NULL;
    size_t nnames = 0;
    if (en) {
        if (want(L, en, DOC_SCALAR, "'entity'")) return -1;
        ename = en->str;
    }
    if (ens && get_names(L, ens, &names, &nnames)) return -1;
    if (ename == NULL && nnames == 0)
        return fail(L, n, "access pattern %s needs 'entity'", p->name);
    if (ename == NULL) {
        ename = names[0];
        en = ens->kind == DOC_SEQ ? ens->vals[0] : ens;
        names++;
        nnames--;
    }
    p->entity = pattern_entity(L, p, en, ename);
    p->also = alloc(L, (nnames + 1) * sizeof *p->also);
    if (p->also == NULL) return -1;
    for (size_t i = 0; i < nnames; i++) {
        const doc_node *where = ens->kind == DOC_SEQ ? ens->vals[ens->n - nnames + i] : ens;
        m_entity *o = pattern_entity(L, p, where, names[i]);
        if (o == NULL)
            bad = -1;
        else if (o != p->entity)
            p->also[p->nalso++] = o;
    }
    /* what follows names the entity's attributes: an entity that did not load cannot say */
    if (p->entity == NULL || p->entity->table == NULL) return -1;
    doc_node *g = doc_get(n, "given");
    if (g) {
        size_t cnt = g->kind == DOC_SCALAR ? 1 : g->n;
        p->given = alloc(L, (cnt + 1) * sizeof *p->given);
        if (p->given == NULL) return -1;
        for (size_t i = 0; i < cnt; i++) {
            m_given *gv = &p->given[p->ngiven];
            const doc_node *key = g->kind == DOC_SCALAR ? g
                                  : g->kind == DOC_MAP  ? g->keys[i]
                                                        : g->vals[i];
            if (want(L, key, DOC_SCALAR, "a given attribute name")) {
                bad = -1;
                continue;
            }
            gv->name = key->str;
            gv->pos = pos_of(key);
            if (g->kind == DOC_MAP) {
                if (want(L, g->vals[i], DOC_SCALAR, "a given value")) {
                    bad = -1;
                    continue;
                }
                const doc_node *v = g->vals[i];
                int null = !v->quoted && (strcmp(v->str, "null") == 0 || strcmp(v->str, "~") == 0 ||
                                          v->str[0] == '\0');
                gv->value = null ? NULL : v->str; /* null: a request parameter, like a list entry */
            }
            if (!has_attr_anywhere(p, gv->name)) {
                bad |= fail(L, key,
                            "access pattern %s is given '%s', which entity %s does not define%s",
                            p->name, gv->name, p->entity->name, pattern_attr_hint(p, gv->name));
                continue;
            }
            p->ngiven++;
        }
    }
    doc_node *c = doc_get(n, "sk_condition");
    if (c && want(L, c, DOC_MAP, "'sk_condition'")) c = NULL, bad = -1;
    if (c) {
        static const char *const fc[] = {"op", "attribute", NULL};
        only_fields(L, c, "'sk_condition'", fc);
        static const char *const ops[] = {"=",  "<",       "<=",          ">",
                                          ">=", "between", "begins_with", NULL};
        const char *op = NULL, *attr = NULL;
        int cbad = need_str(L, c, "op", "'sk_condition'", &op);
        cbad |= need_str(L, c, "attribute", "'sk_condition'", &attr);
        int ok = 0;
        for (const char *const *o = ops; op && *o; o++)
            ok |= strcmp(*o, op) == 0;
        if (op && !ok)
            cbad |= fail(
                L, doc_get(c, "op"),
                "sort-key condition must be =, <, <=, >, >=, between or begins_with, not '%s'%s",
                op, list_hint(op, ops));
        if (attr && !has_attr_anywhere(p, attr))
            cbad |= fail(L, doc_get(c, "attribute"),
                         "sort-key condition on '%s', which entity %s does not define%s", attr,
                         p->entity->name, pattern_attr_hint(p, attr));
        if (cbad == 0) p->sk_op = op, p->sk_attr = attr;
        bad |= cbad;
    }
    const char *order_by = NULL;
    bad |= get_str(L, n, "order_by", &order_by);
    if (order_by && !has_attr_anywhere(p, order_by))
        bad |= fail(L, doc_get(n, "order_by"), "order_by '%s' is not an attribute of entity %s%s",
                    order_by, p->entity->name, pattern_attr_hint(p, order_by));
    else
        p->order_by = order_by;
    const char *dir = NULL;
    bad |= get_str(L, n, "direction", &dir);
    if (dir) {
        if (strcmp(dir, "asc") == 0 || strcmp(dir, "ascending") == 0)
            p->direction = 1;
        else if (strcmp(dir, "desc") == 0 || strcmp(dir, "descending") == 0)
            p->direction = -1;
        else
            bad |= fail(L, doc_get(n, "direction"), "direction must be asc or desc, not '%s'", dir);
    }
    int limit_bad = get_num(L, n, "limit", 'c', &p->limit);
    if (!limit_bad && doc_get(n, "limit") && p->limit < 1)
        limit_bad = fail(L, doc_get(n, "limit"),
                         "pattern %s: limit must be at least 1 (DynamoDB refuses Limit=0); leave "
                         "it out for no limit",
                         p->name);
    bad |= limit_bad;
    bad |= get_num(L, n, "result_size", 'c', &p->result_size);
    bad |= get_num(L, n, "latency", 't', &p->latency_ms);
    bad |= get_num(L, n, "rps", 'c', &p->rps);
    bad |= get_bool(L, n, "consistent", &p->consistent);
    const char *agg = NULL;
    static const char *const aggs[] = {"count", "sum", "max", "min", "avg", NULL};
    bad |= get_str(L, n, "aggregate", &agg);
    if (agg && strcmp(agg, "count") && strcmp(agg, "sum") && strcmp(agg, "max") &&
        strcmp(agg, "min") && strcmp(agg, "avg"))
        bad |= fail(L, doc_get(n, "aggregate"),
                    "aggregate must be count, sum, max, min or avg, not '%s'%s", agg,
                    list_hint(agg, aggs));
    else
        p->aggregate = agg;
    bad |= get_str(L, n, "statement", &p->statement);
    bad |= get_str(L, n, "source", &p->source);
    bad |= get_bool(L, n, "allow_filtering", &p->allow_filtering);
    bad |= get_bool(L, n, "static_only", &p->static_only);
    if (p->static_only && p->kind != MK_UPDATE)
        bad |= fail(L, doc_get(n, "static_only"), "'static_only' applies to update patterns");
    doc_node *in = doc_get(n, "in");
    if (in) {
        if (get_names(L, in, &p->in, &p->nin)) return -1;
        for (size_t i = 0; i < p->nin; i++) {
            int found = 0;
            for (size_t gi = 0; gi < p->ngiven; gi++)
                found |= strcmp(p->given[gi].name, p->in[i]) == 0;
            if (!found)
                bad |= fail(L, in, "'in' names '%s', which the pattern is not given", p->in[i]);
        }
    }
    doc_node *ttl = doc_get(n, "ttl");
    if (ttl) {
        if (p->kind != MK_PUT && p->kind != MK_UPDATE)
            bad |= fail(L, ttl, "'ttl' applies to put and update patterns (USING TTL)");
        else if (ttl->kind == DOC_SCALAR && strcmp(ttl->str, "request") == 0)
            p->ttl_request = 1;
        else
            bad |= parse_quantity(L, ttl, 'd', &p->ttl_days);
    }
    doc_node *sets = doc_get(n, "sets");
    if (sets && p->kind != MK_UPDATE) {
        bad |= fail(L, sets, "'sets' applies to update patterns (the attributes they change)");
    } else if (sets && get_names(L, sets, &p->sets, &p->nsets) == 0) {
        for (size_t i = 0; i < p->nsets; i++)
            if (model_entity_attr(p->entity, p->sets[i]) == NULL)
                bad |= fail(L, sets->kind == DOC_SEQ ? sets->vals[i] : sets,
                            "pattern %s sets '%s', which entity %s does not define%s", p->name,
                            p->sets[i], p->entity->name, pattern_attr_hint(p, p->sets[i]));
    } else if (sets) {
        bad = -1;
    }
    const char *index = NULL;
    bad |= get_str(L, n, "index", &index);
    if (index && model_table_index(p->entity->table, index) == NULL)
        bad |= fail(L, doc_get(n, "index"),
                    "access pattern %s names index '%s', which table %s does not define%s", p->name,
                    index, p->entity->table->name,
                    hint(index, name_of_index, p->entity->table, p->entity->table->nidx));
    else
        p->index = index;
    return bad;
}

/* ---- denormalisation and aggregates ---- */

static const char *const strategy_names[] = {"none", "same-transaction", "stream", "background-job",
                                             "accepted-staleness"};

static int load_strategy(loader *L, const doc_node *map, m_strategy *s)
{
    const char *v = NULL;
    if (get_str(L, map, "strategy", &v)) return -1;
    *s = MS_NONE;
    if (v == NULL) return 0;
    for (int i = 1; i < 5; i++)
        if (strcmp(strategy_names[i], v) == 0) return *s = (m_strategy)i, 0;
    return fail(
        L, doc_get(map, "strategy"),
        "strategy must be same-transaction, stream, background-job or accepted-staleness, not "
        "'%s'%s",
        v, hint(v, name_in_list, strategy_names + 1, 4));
}

/* Checks that "Entity.attribute" names an existing attribute. */
static int check_ref(loader *L, const doc_node *n, const char *ref)
{
    const char *dot = strchr(ref, '.');
    if (dot == NULL) return fail(L, n, "'%s' must be written Entity.attribute", ref);
    char ename[256];
    size_t len = (size_t)(dot - ref);
    if (len >= sizeof ename) return fail(L, n, "entity name in '%s' is too long", ref);
    memcpy(ename, ref, len);
    ename[len] = '\0';
    m_entity *e = model_entity(L->m, ename);
    if (e == NULL)
        return fail(L, n, "'%s' refers to entity '%s', which the model does not define%s", ref,
                    ename, entity_hint(L, ename));
    if (model_entity_attr(e, dot + 1) == NULL)
        return fail(L, n, "'%s': entity %s has no attribute '%s'%s", ref, ename, dot + 1,
                    attr_hint(e, dot + 1));
    return 0;
}

/* Resolves the copy_of and copy_key of entity e's attributes (n: its node, for
 * positions): the source must be an attribute of another entity, copy_key's variables
 * variables of the source's key templates, and its attributes e's. */
static int resolve_copies(loader *L, const doc_node *n, m_entity *e)
{
    doc_node *attrs = doc_get(n, "attributes");
    for (size_t i = 0; i < e->nattrs; i++) {
        m_attr *a = &e->attrs[i];
        if (a->copy_of == NULL) continue;
        doc_node *an = attrs ? doc_get(attrs, a->name) : NULL;
        doc_node *at = an && an->kind == DOC_MAP ? doc_get(an, "copy_of") : an;
        if (check_ref(L, at, a->copy_of)) continue;
        const char *dot = strchr(a->copy_of, '.');
        char ename[256];
        snprintf(ename, sizeof ename, "%.*s", (int)(dot - a->copy_of), a->copy_of);
        a->copy_entity = model_entity(L->m, ename);
        a->copy_attr = model_entity_attr(a->copy_entity, dot + 1);
        if (a->copy_entity == e) {
            fail(L, at, "attribute %s.%s is a copy of its own entity's %s", e->name, a->name,
                 a->copy_of);
            continue;
        }
        for (size_t k = 0; k < a->ncopy_key; k++) {
            const m_keymap *km = &a->copy_key[k];
            const m_template *ts[2] = {&a->copy_entity->pk, &a->copy_entity->sk};
            int found = 0;
            for (int t = 0; t < 2; t++)
                for (size_t sg = 0; sg < ts[t]->nseg; sg++)
                    found |= ts[t]->seg[sg].is_var && strcmp(ts[t]->seg[sg].text, km->source) == 0;
            doc_node *kn = doc_get(doc_get(an, "copy_key"), km->source);
            if (!found)
                fail(L, kn, "copy_key names '%s', which is not a variable of %s's key templates",
                     km->source, a->copy_entity->name);
            else if (model_entity_attr(e, km->copy) == NULL)
                fail(L, kn, "copy_key maps %s to '%s', which entity %s does not define%s",
                     km->source, km->copy, e->name, attr_hint(e, km->copy));
        }
    }
    return 0;
}

static int load_denorm(loader *L, const doc_node *n, m_denorm *d)
{
    if (want(L, n, DOC_MAP, "a denormalised attribute")) return -1;
    static const char *const f[] = {"source", "copies", "strategy", "staleness", "fan_out", NULL};
    only_fields(L, n, "a denormalised attribute", f);
    d->pos = pos_of(n);
    if (need_str(L, n, "source", "a denormalised attribute", &d->source)) return -1;
    if (check_ref(L, doc_get(n, "source"), d->source)) return -1;
    doc_node *c = doc_get(n, "copies");
    if (c == NULL) return fail(L, n, "denormalised %s needs 'copies'", d->source);
    if (get_names(L, c, &d->copies, &d->ncopies)) return -1;
    int bad = 0;
    for (size_t i = 0; i < d->ncopies; i++)
        bad |= check_ref(L, c->kind == DOC_SEQ ? c->vals[i] : c, d->copies[i]);
    bad |= load_strategy(L, n, &d->strategy);
    bad |= get_str(L, n, "staleness", &d->staleness);
    int fan_bad = get_num(L, n, "fan_out", 'c', &d->fan_out);
    if (!fan_bad && doc_get(n, "fan_out") && d->fan_out < 1)
        fan_bad = fail(L, doc_get(n, "fan_out"),
                       "denormalised %s: fan_out is the most copies one source item has, at "
                       "least 1",
                       d->source);
    return bad | fan_bad;
}

static int load_aggregate(loader *L, const doc_node *n, m_aggregate *g)
{
    if (want(L, n, DOC_MAP, "an aggregate")) return -1;
    static const char *const f[] = {"name", "of", "function", "counter", "strategy", NULL};
    only_fields(L, n, "an aggregate", f);
    g->pos = pos_of(n);
    const char *of = NULL, *counter = NULL;
    if (need_str(L, n, "name", "an aggregate", &g->name) ||
        need_str(L, n, "of", "an aggregate", &of))
        return -1;
    if ((g->of = model_entity(L->m, of)) == NULL)
        return fail(L, doc_get(n, "of"),
                    "aggregate %s is of entity '%s', which the model does not define%s", g->name,
                    of, entity_hint(L, of));
    g->function = "count";
    if (get_str(L, n, "function", &g->function) || get_str(L, n, "counter", &counter)) return -1;
    if (counter && (g->counter = model_entity(L->m, counter)) == NULL)
        return fail(L, doc_get(n, "counter"),
                    "aggregate %s is kept in entity '%s', which the model does not define%s",
                    g->name, counter, entity_hint(L, counter));
    return load_strategy(L, n, &g->strategy);
}

/* ---- the file ---- */

static int load_root(loader *L, const doc_node *root)
{
    qr_model *m = L->m;
    static const char *const f[] = {
        "name",         "description", "tables", "entities", "access_patterns",
        "denormalised", "aggregates",  NULL};
    only_fields(L, root, "the model", f);
    get_str(L, root, "name", &m->name);
    get_str(L, root, "description", &m->description);
    doc_node *t = doc_get(root, "tables"), *e = doc_get(root, "entities"),
             *p = doc_get(root, "access_patterns");
    if (t == NULL) fail(L, root, "the model needs 'tables'");
    if (e == NULL) fail(L, root, "the model needs 'entities'");
    if (p == NULL) fail(L, root, "the model needs 'access_patterns'");
    if (t && want(L, t, DOC_MAP, "'tables'")) t = NULL;
    if (e && want(L, e, DOC_MAP, "'entities'")) e = NULL;
    if (p && want(L, p, DOC_SEQ, "'access_patterns'")) p = NULL;
    if (t == NULL || e == NULL) return -1; /* nothing below can be resolved */
    if ((m->tables = alloc(L, (t->n + 1) * sizeof *m->tables)) == NULL) return -1;
    for (size_t i = 0; i < t->n && !OOM(L); i++, m->ntables++)
        load_table(L, t->keys[i], t->vals[i], &m->tables[i]);
    if ((m->entities = alloc(L, (e->n + 1) * sizeof *m->entities)) == NULL) return -1;
    for (size_t i = 0; i < e->n && !OOM(L); i++, m->nentities++)
        load_entity(L, e->keys[i], e->vals[i], &m->entities[i]);
    for (size_t i = 0; i < m->nentities && !OOM(L); i++)
        resolve_copies(L, e->vals[i], &m->entities[i]);
    check_cql_tables(L, t);
    if (p) {
        if ((m->patterns = alloc(L, (p->n + 1) * sizeof *m->patterns)) == NULL) return -1;
        for (size_t i = 0; i < p->n && !OOM(L); i++, m->npatterns++) {
            load_pattern(L, p->vals[i], &m->patterns[i]);
            for (size_t j = 0; j < i && m->patterns[i].name; j++)
                if (m->patterns[j].name && strcmp(m->patterns[j].name, m->patterns[i].name) == 0)
                    fail(L, p->vals[i], "access pattern name '%s' is used twice",
                         m->patterns[i].name);
        }
    }
    doc_node *d = doc_get(root, "denormalised");
    if (d && !want(L, d, DOC_SEQ, "'denormalised'")) {
        if ((m->denorms = alloc(L, (d->n + 1) * sizeof *m->denorms)) == NULL) return -1;
        for (size_t i = 0; i < d->n && !OOM(L); i++, m->ndenorms++)
            load_denorm(L, d->vals[i], &m->denorms[i]);
    }
    doc_node *a = doc_get(root, "aggregates");
    if (a && !want(L, a, DOC_SEQ, "'aggregates'")) {
        if ((m->aggregates = alloc(L, (a->n + 1) * sizeof *m->aggregates)) == NULL) return -1;
        for (size_t i = 0; i < a->n && !OOM(L); i++, m->naggregates++)
            load_aggregate(L, a->vals[i], &m->aggregates[i]);
    }
    return OOM(L) || L->errs->n || L->errs->dropped ? -1 : 0;
}

static char *read_file(const char *path, size_t *len, qr_err *err)
{
    char *text;
    if (readfile_path(path, MAX_MODEL_FILE, &text, len) == 0) return text;
    if (errno == EFBIG)
        err_validation(err, "%s: file is larger than 16 MB", path);
    else if (errno == ENOMEM)
        err_set(err, QR_E_INTERNAL, "out of memory reading %s", path);
    else
        err_validation(err, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
}

static int by_position(const void *a, const void *b)
{
    const model_error *x = a, *y = b;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return 0;
}

/* A parse error arrives as one "FILE:LINE:COL: message" in err: it becomes the list's entry. */
static int parse_error(loader *L, qr_err *err)
{
    if (err->type == NULL || strcmp(err->type, QR_E_VALIDATION) != 0) return -1;
    int line = 1, col = 1, used = 0;
    size_t pl = strlen(L->path);
    const char *msg = err->msg;
    if (strncmp(msg, L->path, pl) == 0 && msg[pl] == ':' &&
        sscanf(msg + pl, ":%d:%d: %n", &line, &col, &used) == 2 && used > 0)
        msg += pl + (size_t)used;
    char copy[QR_ERR_MSG_MAX];
    snprintf(copy, sizeof copy, "%s", msg);
    err_clear(err);
    return report_at(L, line, col, copy);
}

int model_load_all(const char *path, const char *text, size_t len, qr_model **out,
                   model_errors *errs, qr_err *err)
{
    *out = NULL;
    char *owned = NULL;
    if (text == NULL) {
        if ((owned = read_file(path, &len, err)) == NULL) return -1;
        text = owned;
    }
    qr_model *m = calloc(1, sizeof *m);
    if (m == NULL) {
        free(owned);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    m->path = ck_arena_strdup(&m->arena, path);
    loader L = {m, m->path, err, errs};
    doc_node *root;
    int rc = m->path ? doc_parse(&m->arena, m->path, text, len, &root, err)
                     : err_set(err, QR_E_INTERNAL, "out of memory");
    if (rc && m->path)
        parse_error(&L, err);
    else if (rc == 0) {
        m->doc = root;
        rc = load_root(&L, root);
    }
    free(owned);
    if (rc) {
        qsort(errs->v, errs->n, sizeof *errs->v, by_position);
        if (err->type == NULL && errs->n) {
            size_t more = errs->n - 1 + errs->dropped;
            char tail[64] = "";
            if (more)
                snprintf(tail, sizeof tail, " (and %zu more error%s)", more, more == 1 ? "" : "s");
            err_validation(err, "%s:%d:%d: %s%s", path, errs->v[0].line, errs->v[0].col,
                           errs->v[0].message, tail);
        } else if (err->type == NULL) {
            err_set(err, QR_E_INTERNAL, "the model could not be loaded");
        }
        model_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

/* ---- what loads of a file that does not ---- */

/* One element of the file model_load_partial can leave out: an entry of a section (a
 * table, entity, access pattern, copy or aggregate) or a section. */
typedef struct part_entry {
    m_pos start, end; /* the entry's text: from start up to (not including) end */
    doc_node *parent; /* the section (or the root) holding it */
    size_t index;     /* its place there */
} part_entry;

static int pos_lt(m_pos a, m_pos b)
{
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

static m_pos child_pos(const doc_node *parent, size_t i)
{
    const doc_node *n = parent->kind == DOC_MAP ? parent->keys[i] : parent->vals[i];
    return (m_pos){n->line, n->col};
}

/* The entry of root that text position at lies in: the section's entry when it lies in
 * one, else the section itself. False when it lies before every section. */
static int entry_at(doc_node *root, m_pos at, part_entry *out)
{
    const m_pos far = {1 << 30, 0};
    for (size_t i = 0; root->kind == DOC_MAP && i < root->n; i++) {
        m_pos start = child_pos(root, i), end = i + 1 < root->n ? child_pos(root, i + 1) : far;
        if (pos_lt(at, start) || !pos_lt(at, end)) continue;
        *out = (part_entry){start, end, root, i};
        doc_node *sec = root->vals[i];
        if (sec->kind == DOC_SCALAR) return 1;
        for (size_t j = 0; j < sec->n; j++) {
            m_pos cs = child_pos(sec, j), ce = j + 1 < sec->n ? child_pos(sec, j + 1) : end;
            if (!pos_lt(at, cs) && pos_lt(at, ce)) *out = (part_entry){cs, ce, sec, j};
        }
        return 1;
    }
    return 0;
}

/* "table Shop", "access pattern get-order", "'description'": the entry as people name it. */
static const char *entry_name(ck_arena *a, doc_node *root, const part_entry *e)
{
    if (e->parent == root) return ck_arena_printf(a, "'%s'", root->keys[e->index]->str);
    const char *section = "";
    for (size_t i = 0; i < root->n; i++)
        if (root->vals[i] == e->parent) section = root->keys[i]->str;
    static const char *const kinds[][2] = {{"tables", "table"},
                                           {"entities", "entity"},
                                           {"access_patterns", "access pattern"},
                                           {"denormalised", "denormalised copy"},
                                           {"aggregates", "aggregate"}};
    const char *kind = section;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(section, kinds[i][0]) == 0) kind = kinds[i][1];
    if (e->parent->kind == DOC_MAP)
        return ck_arena_printf(a, "%s %s", kind, e->parent->keys[e->index]->str);
    const doc_node *item = e->parent->vals[e->index], *name = NULL;
    if (item->kind == DOC_MAP) name = doc_get(item, "name");
    if (name == NULL && item->kind == DOC_MAP) name = doc_get(item, "source");
    if (name && name->kind == DOC_SCALAR) return ck_arena_printf(a, "%s %s", kind, name->str);
    return ck_arena_printf(a, "%s %zu (line %d)", kind, e->index + 1, e->start.line);
}

/* Drops from root every entry that starts at one of the n positions in drop. */
static void prune(doc_node *root, const m_pos *drop, size_t n)
{
    doc_node *secs[64];
    size_t ns = 0;
    for (size_t i = 0; root->kind == DOC_MAP && i < root->n && ns < 64; i++)
        if (root->vals[i]->kind != DOC_SCALAR) secs[ns++] = root->vals[i];
    secs[ns++] = root;
    for (size_t s = 0; s < ns; s++) {
        doc_node *p = secs[s];
        size_t w = 0;
        for (size_t i = 0; i < p->n; i++) {
            m_pos at = child_pos(p, i);
            int gone = 0;
            for (size_t d = 0; d < n && !gone; d++)
                gone = drop[d].line == at.line && drop[d].col == at.col;
            if (gone) continue;
            if (p->kind == DOC_MAP) p->keys[w] = p->keys[i];
            p->vals[w++] = p->vals[i];
        }
        p->n = w;
    }
}

#define PARTIAL_ROUNDS 32
#define PARTIAL_DROPS 256

int model_load_partial(const char *path, qr_model **out, const char ***left_out, size_t *nleft,
                       qr_err *err)
{
    *out = NULL;
    *left_out = NULL;
    *nleft = 0;
    size_t len;
    char *text = read_file(path, &len, err);
    if (text == NULL) return -1;
    m_pos drop[PARTIAL_DROPS];
    char *names[PARTIAL_DROPS];
    size_t ndrop = 0;
    int rc = -1;
    for (int round = 0; round < PARTIAL_ROUNDS; round++) {
        qr_model *m = calloc(1, sizeof *m);
        if (m == NULL) break;
        m->path = ck_arena_strdup(&m->arena, path);
        model_errors errs = {0};
        loader L = {m, m->path, err, &errs};
        doc_node *root = NULL;
        if (m->path == NULL || doc_parse(&m->arena, m->path, text, len, &root, err) ||
            root->kind != DOC_MAP) {
            err_clear(err);
            model_free(m);
            break; /* a file that does not parse has no parts */
        }
        /* the entries of the errors, found in the whole file before it is pruned */
        part_entry entries[PARTIAL_DROPS];
        size_t nentries = 0;
        prune(root, drop, ndrop);
        int loaded = load_root(&L, root) == 0;
        if (OOM(&L)) {
            model_errors_free(&errs);
            model_free(m);
            break;
        }
        if (loaded) {
            const char **list = ck_arena_alloc(&m->arena, (ndrop + 1) * sizeof *list);
            for (size_t i = 0; list && i < ndrop; i++)
                list[i] = ck_arena_strdup(&m->arena, names[i]);
            model_errors_free(&errs);
            if (list == NULL) {
                model_free(m);
                break;
            }
            *out = m;
            *left_out = list;
            *nleft = ndrop;
            rc = 0;
            break;
        }
        /* the pruned tree's entries no longer hold the dropped ones: map each error to the
         * entry it lies in (positions are the file's, pruned or not) */
        for (size_t i = 0; i < errs.n && nentries < PARTIAL_DROPS; i++) {
            part_entry e;
            if (entry_at(root, (m_pos){errs.v[i].line, errs.v[i].col}, &e)) entries[nentries++] = e;
        }
        size_t before = ndrop;
        for (size_t i = 0; i < nentries && ndrop < PARTIAL_DROPS; i++) {
            int known = 0;
            for (size_t d = 0; d < ndrop && !known; d++)
                known =
                    drop[d].line == entries[i].start.line && drop[d].col == entries[i].start.col;
            if (known) continue;
            const char *name = entry_name(&m->arena, root, &entries[i]);
            if ((names[ndrop] = name ? strdup(name) : NULL) == NULL) break;
            drop[ndrop++] = entries[i].start;
        }
        model_errors_free(&errs);
        model_free(m);
        if (ndrop == before) break; /* errors outside every entry: nothing more can go */
    }
    for (size_t i = 0; i < ndrop; i++)
        free(names[i]);
    free(text);
    return rc;
}

int model_load(const char *path, const char *text, size_t len, qr_model **out, qr_err *err)
{
    model_errors errs = {0};
    int rc = model_load_all(path, text, len, out, &errs, err);
    model_errors_free(&errs);
    return rc;
}

void model_errors_free(model_errors *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i].message);
    free(e->v);
    *e = (model_errors){0};
}

void model_free(qr_model *m)
{
    if (m == NULL) return;
    ck_arena_free(&m->arena);
    free(m);
}
