/* prepared.c — PREPARE and EXECUTE: the database's prepared statements (Cassandra's
 * cache is per node), their ids (the MD5 of the keyspace and the query text), the bind
 * markers' metadata PREPARE answers with, and EXECUTE running the kept text with the
 * values bound. Kept in memory only: after a restart EXECUTE answers UNPREPARED and
 * drivers prepare again.
 *
 * How a statement runs is exec.c's; this file keeps texts and describes markers. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/arith.h"
#include "cql/exec_int.h"
#include "cql/func.h"
#include "cql/types.h"
#include "engine/engine.h"

/* At most this many statements are kept; the least recently used goes first. */
#define PREPARED_MAX 4096

struct cql_prepared_entry {
    uint8_t id[16];
    uint8_t result_id[16]; /* the result metadata id the latest PREPARE answered */
    cql_plan *plan;
    int writes;
    uint64_t used; /* a tick, for eviction */
};

static uint64_t tick;

static void prepared_id(const char *ks, const char *text, size_t len, uint8_t out[16])
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    unsigned int n = 0;
    EVP_DigestInit_ex(m, EVP_md5(), NULL);
    if (ks) EVP_DigestUpdate(m, ks, strlen(ks));
    EVP_DigestUpdate(m, text, len);
    EVP_DigestFinal_ex(m, out, &n);
    EVP_MD_CTX_free(m);
}

static cql_prepared_entry *find(cql_state *st, const uint8_t *id, size_t len)
{
    if (len != 16) return NULL;
    for (size_t i = 0; i < st->nprepared; i++)
        if (memcmp(st->prepared[i].id, id, 16) == 0) return &st->prepared[i];
    return NULL;
}

void cql_plan_release(cql_plan *p)
{
    if (p == NULL || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    cql_parsed_free(&p->parsed);
    free(p->keyspace);
    free(p);
}

cql_plan *cql_plan_parse(cql_call *c, const char *text, size_t len)
{
    cql_plan *p = calloc(1, sizeof *p);
    if (p == NULL) {
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        return NULL;
    }
    p->refs = 1;
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    if (cql_parse(text, len, &p->parsed, &perr) != 0) {
        free(p);
        cql_fail_parsed(c, &perr);
        return NULL;
    }
    return p;
}

/* Keeps a statement (the state's lock held), taking over the plan (released when the id
 * is kept already): 0, or -1 out of memory (the plan released). */
static int keep(cql_state *st, const uint8_t id[16], cql_plan *plan, int writes,
                const uint8_t result_id[16])
{
    cql_prepared_entry *e = find(st, id, 16);
    if (e) {
        e->used = ++tick;
        memcpy(e->result_id, result_id, 16);
        cql_plan_release(plan);
        return 0;
    }
    if (st->nprepared == st->capprepared) {
        if (st->capprepared >= PREPARED_MAX) {
            size_t old = 0;
            for (size_t i = 1; i < st->nprepared; i++)
                if (st->prepared[i].used < st->prepared[old].used) old = i;
            cql_plan_release(st->prepared[old].plan);
            st->prepared[old] = st->prepared[--st->nprepared];
        } else {
            size_t cap = st->capprepared ? st->capprepared * 2 : 64;
            cql_prepared_entry *n = realloc(st->prepared, cap * sizeof *n);
            if (n == NULL) {
                cql_plan_release(plan);
                return -1;
            }
            st->prepared = n;
            st->capprepared = cap;
        }
    }
    e = &st->prepared[st->nprepared++];
    memcpy(e->id, id, 16);
    memcpy(e->result_id, result_id, 16);
    e->plan = plan;
    e->writes = writes;
    e->used = ++tick;
    return 0;
}

void cql_prepared_free_all(cql_state *st)
{
    for (size_t i = 0; i < st->nprepared; i++)
        cql_plan_release(st->prepared[i].plan);
    free(st->prepared);
    st->prepared = NULL;
    st->nprepared = st->capprepared = 0;
}

/* ---- the markers' metadata ---- */

static const cql_type t_int = {.id = CQL_TYPE_INT}, t_bigint = {.id = CQL_TYPE_BIGINT},
                      t_text = {.id = CQL_TYPE_VARCHAR};

typedef struct marks {
    cql_call *c;
    const cql_parsed *p;
    cql_tinfo *t;
    cql_markers *m;
    int pk_marker[64]; /* the marker binding partition key column i, or -1 */
    int in_selection;  /* while the markers of a selector are typed */
} marks;

static void set_marker(marks *k, const cql_expr *e, const char *name, const cql_type *type)
{
    if (e == NULL || e->kind != CQL_E_BIND || e->bind < 0 || (size_t)e->bind >= k->m->n) return;
    cql_column *col = &k->m->cols[e->bind];
    col->keyspace = k->t->ks;
    col->table = k->t->name;
    col->name = e->text ? e->text : name;
    col->type = type;
}

/* A collection type made for a marker (IN ?, a list of the column's type) from the
 * tinfo's arena. */
static const cql_type *collection_of(marks *k, uint16_t id, const cql_type *elem)
{
    cql_type *t = arena_alloc(&k->t->arena, sizeof *t);
    const cql_type **params = arena_alloc(&k->t->arena, sizeof *params);
    if (t == NULL || params == NULL) return NULL;
    params[0] = elem;
    t->id = id;
    t->params = params;
    t->n = 1;
    return t;
}

static const cql_type *list_of(marks *k, const cql_type *elem)
{
    const cql_type *t = collection_of(k, CQL_TYPE_LIST, elem);
    return t ? t : elem;
}

/* A receiver's name as Cassandra's ColumnSpecification names it: "value(l)", "key(m)",
 * "idx(l)" (fmt holds one %s), in the table's arena; name itself when out of memory. */
static const char *spec_name(marks *k, const char *fmt, const char *name)
{
    size_t len = strlen(fmt) + strlen(name) + 1;
    char *out = arena_alloc(&k->t->arena, len);
    if (out == NULL) return name;
    snprintf(out, len, fmt, name);
    return out;
}

/* The tuple of the columns of a multi-column relation, the type of a marker that stands
 * for a whole tuple ((a, b) = ?), named (*name) as Cassandra names its receiver, (a,b).
 * NULL when a column is unknown or memory ran out. */
static const cql_type *tuple_of(marks *k, const cql_relation *r, const char **name)
{
    cql_type *t = arena_alloc(&k->t->arena, sizeof *t);
    const cql_type **params = arena_alloc(&k->t->arena, (r->ncolumns + 1) * sizeof *params);
    size_t len = 3;
    for (size_t j = 0; j < r->ncolumns; j++)
        len += strlen(r->columns[j]) + 1;
    char *shown = arena_alloc(&k->t->arena, len);
    if (t == NULL || params == NULL || shown == NULL || r->ncolumns > UINT16_MAX) return NULL;
    size_t used = 0;
    shown[used++] = '(';
    for (size_t j = 0; j < r->ncolumns; j++) {
        const cql_tcol *col = cql_tinfo_col(k->t, r->columns[j]);
        if (col == NULL) return NULL;
        params[j] = col->wire;
        used += (size_t)snprintf(shown + used, len - used, "%s%s", j ? "," : "", col->name);
    }
    snprintf(shown + used, len - used, ")");
    t->id = CQL_TYPE_TUPLE;
    t->params = params;
    t->n = (uint16_t)r->ncolumns;
    *name = shown;
    return t;
}

/* Markers inside a term: the term itself, or the items of a collection or tuple literal
 * whose element types follow from type. */
/* Whether call e failing to resolve without its markers' types is its error at PREPARE:
 * it has a marker, and its other arguments are plain literals or type hints, whose types
 * the resolver had (a nested call's, a collection's or a column's it had not). fromJson takes its
 * type from the receiver, which is not known here. */
static int refused_at_prepare(const cql_expr *e)
{
    const char *name = strncmp(e->fn.name, "system.", 7) == 0 ? e->fn.name + 7 : e->fn.name;
    if (strcmp(name, "fromjson") == 0) return 0;
    int markers = 0;
    for (size_t i = 0; i < e->nitems; i++) {
        cql_expr_kind kind = e->items[i]->kind;
        if (kind == CQL_E_BIND)
            markers++;
        else if (kind > CQL_E_NULL && kind != CQL_E_HINT)
            return 0;
    }
    return markers > 0;
}

static void term_markers(marks *k, const cql_expr *e, const char *name, const cql_type *type)
{
    if (e == NULL) return;
    if (e->kind == CQL_E_BIND) {
        set_marker(k, e, name, type);
        return;
    }
    if (e->kind == CQL_E_TUPLE && e->nitems == 1 && type && type->id != CQL_TYPE_TUPLE) {
        term_markers(k, e->items[0], name, type); /* (term) */
        return;
    }
    cqltype_env types = {.keyspace = k->t->ks};
    cqlfn_env env = {.arena = &k->t->arena, .types = &types};
    if (e->kind == CQL_E_HINT && e->nitems == 1) {
        const cql_ctype *h = NULL;
        cql_parse_error perr = {0};
        if (cqltype_resolve(&k->t->arena, e->type, &types, &h, &perr) == 0)
            term_markers(k, e->items[0], name, &h->wire);
        return;
    }
    if (e->kind == CQL_E_FUNCTION && !e->star && e->nitems <= 8) {
        /* a call's markers take its overload's argument types (one it resolves to without
         * them: the statement says the rest when it runs) */
        char fname[2 * CQL_NAME_MAX + 2];
        snprintf(fname, sizeof fname, "%s%s%s", e->fn.ks ? e->fn.ks : "", e->fn.ks ? "." : "",
                 e->fn.name);
        cql_parse_error perr = {0};
        if (!k->in_selection && cqlfn_is_selection_only(fname)) {
            cqlfn_selection_only_error(&perr);
            cql_fail_parsed(k->c, &perr);
            return;
        }
        const cql_ctype *known[8] = {0};
        for (size_t i = 0; i < e->nitems; i++) /* a hinted argument has its type */
            if (e->items[i]->kind == CQL_E_HINT &&
                cqltype_resolve(&k->t->arena, e->items[i]->type, &types, &known[i], &perr) != 0)
                known[i] = NULL;
        memset(&perr, 0, sizeof perr);
        const cqlfn_fn *f =
            cqlfn_resolve(fname, known, (const cql_expr *const *)e->items, e->nitems, NULL, &perr);
        if (f == NULL && refused_at_prepare(e)) {
            /* Cassandra picks the overload as it prepares: a marker it cannot type is an
             * ambiguous call, refused then */
            cql_fail_parsed(k->c, &perr);
            return;
        }
        for (size_t i = 0; i < e->nitems; i++) {
            const cql_ctype *at = f ? cqlfn_arg_type(f, i, NULL) : NULL;
            /* named as Cassandra names a call's argument: arg0(system.blobasint) */
            const char *fn = f ? cqlfn_name(f) : fname;
            size_t len = strlen(fn) + 24;
            char *an = arena_alloc(&k->t->arena, len);
            if (an) snprintf(an, len, "arg%zu(%s)", i, fn);
            term_markers(k, e->items[i], an ? an : name, at ? &at->wire : NULL);
        }
        return;
    }
    if (e->kind == CQL_E_BINARY || e->kind == CQL_E_NEGATE) {
        /* an operation's markers take the types of the overload it resolves to */
        cqlarith_op o;
        cql_parse_error perr = {0};
        uint16_t want = type && cqltype_native(type->id) ? type->id : 0;
        if (cqlfn_operation(&env, e, want, &o, &perr) != 0) {
            /* refused as PREPARE refuses it, when the receiver is known */
            if (want) cql_fail_parsed(k->c, &perr);
            return;
        }
        for (size_t i = 0; i < e->nitems && i < 2; i++)
            term_markers(k, e->items[i], i ? "arg1" : "arg0",
                         &cqltype_native(i ? o.right : o.left)->wire);
        return;
    }
    /* elements named as Lists/Sets/Maps.valueSpecOf, keySpecOf and Tuples' components */
    if ((e->kind == CQL_E_LIST || e->kind == CQL_E_SET) && type && type->n >= 1)
        for (size_t i = 0; i < e->nitems; i++)
            term_markers(k, e->items[i], spec_name(k, "value(%s)", name), type->params[0]);
    if (e->kind == CQL_E_MAP && type && type->id == CQL_TYPE_MAP)
        for (size_t i = 0; i < e->nitems; i++)
            term_markers(k, e->items[i], spec_name(k, i % 2 ? "value(%s)" : "key(%s)", name),
                         type->params[i % 2]);
    if (e->kind == CQL_E_TUPLE && type && type->id == CQL_TYPE_TUPLE)
        for (size_t i = 0; i < e->nitems && i < type->n; i++) {
            char fmt[32];
            snprintf(fmt, sizeof fmt, "%%s[%zu]", i);
            term_markers(k, e->items[i], spec_name(k, fmt, name), type->params[i]);
        }
    if (e->kind == CQL_E_UDT && type && type->id == CQL_TYPE_UDT)
        for (size_t i = 0; i < e->nitems; i++)
            for (uint16_t f = 0; f < type->n; f++) {
                if (strcmp(type->field_names[f], e->fields[i]) != 0) continue;
                /* named as Cassandra names a field's receiver: v.x */
                size_t len = strlen(name) + strlen(e->fields[i]) + 2;
                char *fn = arena_alloc(&k->t->arena, len);
                if (fn) snprintf(fn, len, "%s.%s", name, e->fields[i]);
                term_markers(k, e->items[i], fn ? fn : name, type->params[f]);
            }
}

static void where_markers(marks *k, const cql_where *w)
{
    for (size_t i = 0; i < w->n; i++) {
        const cql_relation *r = &w->rels[i];
        if (r->kind == CQL_REL_TOKEN) {
            if (cql_token_call(r->value, k->t->npk)) {
                /* token(?, ...): each marker a partition key column */
                for (size_t j = 0; j < k->t->ncols; j++) {
                    const cql_tcol *col = &k->t->cols[j];
                    if (col->kind == 'p' && (size_t)col->pos < r->value->nitems)
                        term_markers(k, r->value->items[col->pos], col->name, col->wire);
                }
            } else {
                set_marker(k, r->value, "partition key token", &t_bigint);
            }
            continue;
        }
        if (r->kind == CQL_REL_TUPLE) {
            /* (a, b) > (?, ?) or (a, b) IN ((?, ?), ...) */
            const cql_expr *const *vals = r->op == CQL_OP_IN && r->values
                                              ? (const cql_expr *const *)r->values
                                              : (const cql_expr *const *)&r->value;
            size_t nv = r->op == CQL_OP_IN && r->values ? r->nvalues : 1;
            const char *shown = NULL;
            const cql_type *whole = tuple_of(k, r, &shown);
            if (whole && r->op == CQL_OP_IN && !r->values && r->value) {
                /* (a, b) IN ?: a list of tuples, named in(a,b) */
                size_t len = strlen(shown) + 3;
                char *in = arena_alloc(&k->t->arena, len);
                if (in) snprintf(in, len, "in(%.*s)", (int)strlen(shown) - 2, shown + 1);
                set_marker(k, r->value, in ? in : shown, list_of(k, whole));
            }
            for (size_t v = 0; v < nv; v++) {
                const cql_expr *e = vals[v];
                if (whole && e && e->kind == CQL_E_BIND && (r->op != CQL_OP_IN || r->values))
                    set_marker(k, e, shown, whole); /* (a, b) = ?, IN (?, ?) */
                if (e == NULL || e->kind != CQL_E_TUPLE) continue;
                if (e->nitems != r->ncolumns) { /* refused as PREPARE refuses it */
                    char *text = cql_print_expr(e);
                    cql_fail(k->c, CQL_ERR_INVALID,
                             "Expected %zu elements in value tuple, but got %zu: %s", r->ncolumns,
                             e->nitems, text ? text : "?");
                    free(text);
                    return;
                }
                for (size_t j = 0; j < e->nitems && j < r->ncolumns; j++) {
                    const cql_tcol *col = cql_tinfo_col(k->t, r->columns[j]);
                    if (col) term_markers(k, e->items[j], col->name, col->wire);
                }
            }
            continue;
        }
        const cql_tcol *col = cql_tinfo_col(k->t, r->columns[0]);
        if (col == NULL) continue;
        const cql_type *type = col->wire;
        const char *name = col->name;
        if (r->kind == CQL_REL_FIELD && type->id == CQL_TYPE_UDT && r->field) {
            /* IF u.f = ?: the field's type, named u.f */
            for (uint16_t f = 0; f < type->n; f++)
                if (type->field_names && strcmp(type->field_names[f], r->field) == 0) {
                    size_t len = strlen(col->name) + strlen(r->field) + 2;
                    char *shown = arena_alloc(&k->t->arena, len);
                    if (shown) snprintf(shown, len, "%s.%s", col->name, r->field);
                    name = shown ? shown : col->name;
                    type = type->params[f];
                    break;
                }
        }
        if (r->kind == CQL_REL_ELEMENT && type->id == CQL_TYPE_MAP) {
            term_markers(k, r->key, spec_name(k, "key(%s)", col->name), type->params[0]);
            name = spec_name(k, "value(%s)", col->name);
            type = type->params[1];
        } else if (r->kind == CQL_REL_ELEMENT && type->id == CQL_TYPE_LIST) {
            term_markers(k, r->key, spec_name(k, "idx(%s)", col->name), &t_int);
            name = spec_name(k, "value(%s)", col->name);
            type = type->params[0];
        } else if (r->op == CQL_OP_CONTAINS && type->n >= 1) {
            name = spec_name(k, "value(%s)", col->name);
            type = type->id == CQL_TYPE_MAP ? type->params[1] : type->params[0];
        } else if (r->op == CQL_OP_CONTAINS_KEY && type->id == CQL_TYPE_MAP) {
            name = spec_name(k, "key(%s)", col->name);
            type = type->params[0];
        }
        if (r->op == CQL_OP_IN) {
            if (r->values) {
                for (size_t v = 0; v < r->nvalues; v++)
                    term_markers(k, r->values[v], name, type);
            } else {
                /* IN ?: named as Cassandra names it, in(k), which a driver does not take
                 * for the partition key column that routes the statement */
                size_t len = strlen(name) + 5;
                char *in = arena_alloc(&k->t->arena, len);
                if (in) snprintf(in, len, "in(%s)", name);
                set_marker(k, r->value, in ? in : name, list_of(k, type));
            }
        } else {
            term_markers(k, r->value, name, type);
            if (r->op == CQL_OP_EQ && col->kind == 'p' && col->pos < 64 && r->value &&
                r->value->kind == CQL_E_BIND)
                k->pk_marker[col->pos] = r->value->bind;
        }
    }
}

static void using_markers(marks *k, const cql_using *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        set_marker(k, u[i].value, u[i].ttl ? "[ttl]" : "[timestamp]",
                   u[i].ttl ? &t_int : &t_bigint);
}

/* Whether a marker is among e's arguments (not deeper). */
static int has_marker_arg(const cql_expr *e)
{
    for (size_t i = 0; i < e->nitems; i++)
        if (e->items[i]->kind == CQL_E_BIND) return 1;
    return 0;
}

/* Markers in a selector: those a type hint types ((int) ?), and those a function call's
 * overload types (intAsBlob(?): an int, named arg0(system.intasblob)). */
static void selector_markers(marks *k, const cql_expr *e, int depth)
{
    if (e == NULL || depth > CQL_TYPE_MAX_DEPTH) return;
    if (e->kind == CQL_E_HINT || (e->kind == CQL_E_FUNCTION && has_marker_arg(e))) {
        k->in_selection = 1;
        term_markers(k, e, "[selection]", NULL);
        k->in_selection = 0;
        return;
    }
    for (size_t i = 0; i < e->nitems; i++)
        selector_markers(k, e->items[i], depth + 1);
}

static void stmt_markers(marks *k, const cql_stmt *s)
{
    switch (s->kind) {
    case CQL_SELECT:
        for (size_t i = 0; i < s->u.select.nsel; i++)
            selector_markers(k, s->u.select.sel[i].expr, 0);
        where_markers(k, &s->u.select.where);
        set_marker(k, s->u.select.limit, "[limit]", &t_int);
        set_marker(k, s->u.select.per_partition_limit, "[per_partition_limit]", &t_int);
        break;
    case CQL_INSERT: {
        const cql_insert *in = &s->u.insert;
        if (in->json) set_marker(k, in->json, "[json]", &t_text);
        for (size_t i = 0; i < in->ncolumns && i < in->nvalues; i++) {
            const cql_tcol *col = cql_tinfo_col(k->t, in->columns[i]);
            if (col == NULL) continue;
            term_markers(k, in->values[i], col->name, col->wire);
            if (col->kind == 'p' && col->pos < 64 && in->values[i]->kind == CQL_E_BIND)
                k->pk_marker[col->pos] = in->values[i]->bind;
        }
        using_markers(k, in->using, in->nusing);
        break;
    }
    case CQL_UPDATE: {
        const cql_update *up = &s->u.update;
        using_markers(k, up->using, up->nusing);
        for (size_t i = 0; i < up->nset; i++) {
            const cql_assign *a = &up->set[i];
            const cql_tcol *col = cql_tinfo_col(k->t, a->column);
            if (col == NULL) continue;
            const cql_type *type = col->wire;
            const char *name = col->name;
            if (a->kind == CQL_SET_ELEMENT) {
                if (type->id == CQL_TYPE_MAP) {
                    term_markers(k, a->key, spec_name(k, "key(%s)", col->name), type->params[0]);
                    type = type->params[1];
                } else {
                    term_markers(k, a->key, spec_name(k, "idx(%s)", col->name), &t_int);
                    if (type->n >= 1) type = type->params[0];
                }
                if (type != col->wire) name = spec_name(k, "value(%s)", col->name);
            } else if (a->kind == CQL_SET_FIELD && a->field &&
                       (type->id != CQL_TYPE_UDT || !col->type ||
                        !cqltype_is_multicell(col->type))) {
                /* Operation.SetField refuses it as it prepares */
                char *text = cql_print_expr(a->value);
                cql_fail(k->c, CQL_ERR_INVALID, "Invalid operation (%s.%s = %s) for %s column %s",
                         col->name, a->field, text ? text : "?",
                         type->id == CQL_TYPE_UDT ? "frozen UDT" : "non-UDT", col->name);
                free(text);
                return;
            } else if (a->kind == CQL_SET_FIELD && a->field) {
                /* u.f = ?: the field's type, named as UserTypes.fieldSpecOf names it */
                int known = 0;
                for (uint16_t f = 0; f < type->n; f++)
                    known |= type->field_names && strcmp(type->field_names[f], a->field) == 0;
                if (!known) {
                    cql_fail(k->c, CQL_ERR_INVALID, "UDT column %s does not have a field named %s",
                             col->name, a->field);
                    return;
                }
                for (uint16_t f = 0; f < type->n; f++) {
                    if (!type->field_names || strcmp(type->field_names[f], a->field) != 0) continue;
                    size_t len = strlen(col->name) + strlen(a->field) + 2;
                    char *shown = arena_alloc(&k->t->arena, len);
                    if (shown) snprintf(shown, len, "%s.%s", col->name, a->field);
                    name = shown ? shown : col->name;
                    type = type->params[f];
                    break;
                }
            } else if (a->kind == CQL_SET_SUB && type->id == CQL_TYPE_MAP) {
                /* m = m - {keys}: a set of the key type */
                type = collection_of(k, CQL_TYPE_SET, type->params[0]);
            }
            if (type) term_markers(k, a->value, name, type);
        }
        where_markers(k, &up->where);
        for (size_t i = 0; i < up->nconds; i++) {
            cql_where w = {&up->conds[i], 1};
            where_markers(k, &w);
        }
        break;
    }
    case CQL_DELETE: {
        const cql_delete *d = &s->u.del;
        for (size_t i = 0; i < d->ncols; i++) {
            const cql_tcol *col = cql_tinfo_col(k->t, d->cols[i].column);
            if (col && d->cols[i].key)
                term_markers(k, d->cols[i].key,
                             spec_name(k,
                                       col->wire->id == CQL_TYPE_MAP   ? "key(%s)"
                                       : col->wire->id == CQL_TYPE_SET ? "value(%s)"
                                                                       : "idx(%s)",
                                       col->name),
                             col->wire->id == CQL_TYPE_MAP || col->wire->id == CQL_TYPE_SET
                                 ? col->wire->params[0]
                                 : &t_int);
        }
        using_markers(k, d->using, d->nusing);
        where_markers(k, &d->where);
        for (size_t i = 0; i < d->nconds; i++) {
            cql_where w = {&d->conds[i], 1};
            where_markers(k, &w);
        }
        break;
    }
    default:
        break;
    }
}

int cql_markers_of(cql_call *c, const cql_stmt *s, const cql_parsed *p, cql_tinfo *t,
                   cql_markers *m)
{
    memset(m, 0, sizeof *m);
    m->n = p->nbinds;
    m->cols = calloc(m->n + 1, sizeof *m->cols);
    m->pk = calloc(t->npk + 1, sizeof *m->pk);
    if (m->cols == NULL || m->pk == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    marks k = {.c = c, .p = p, .t = t, .m = m};
    for (size_t i = 0; i < 64; i++)
        k.pk_marker[i] = -1;
    stmt_markers(&k, s);
    if (c->failed) return -1;
    for (size_t i = 0; i < m->n; i++) {
        if (m->cols[i].type == NULL) {
            /* a marker whose receiver this statement does not say (an unknown column is
             * an error the statement gives when it runs) */
            m->cols[i].keyspace = t->ks;
            m->cols[i].table = t->name;
            m->cols[i].name = p->binds[i].name ? p->binds[i].name : "?";
            m->cols[i].type = &t_text;
        }
    }
    int all = t->npk > 0 && t->npk <= 64;
    for (size_t i = 0; all && i < t->npk; i++)
        all = k.pk_marker[i] >= 0;
    if (all) {
        for (size_t i = 0; i < t->npk; i++)
            m->pk[i] = (uint16_t)k.pk_marker[i];
        m->npk = t->npk;
    }
    return 0;
}

void cql_markers_free(cql_markers *m)
{
    free(m->cols);
    free(m->pk);
    memset(m, 0, sizeof *m);
}

/* The markers of a BATCH statement's text: each inner statement's against its own table
 * (ts[i], loaded here; the caller frees them), the batch's USING TIMESTAMP, and text for
 * any other. A batch names no one partition: no partition key indexes. 0, or -1 with the
 * error set. */
static int check_columns(cql_call *c, const cql_stmt *s, const cql_tinfo *t);
static int batch_markers(cql_call *c, const cql_batch_stmt *b, const cql_parsed *p, cql_tinfo *ts,
                         cql_markers *m)
{
    memset(m, 0, sizeof *m);
    m->n = p->nbinds;
    m->cols = calloc(m->n + 1, sizeof *m->cols);
    m->pk = calloc(1, sizeof *m->pk);
    if (m->cols == NULL || m->pk == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    for (size_t i = 0; i < b->nstmts; i++) {
        const cql_stmt *s = b->stmts[i];
        const char *ks = cql_keyspace_of(c, &s->name);
        if (ks == NULL || cql_tinfo_load(c, ks, s->name.name, &ts[i]) != 0) return -1;
        if (check_columns(c, s, &ts[i]) != 0) return -1;
        marks k = {.c = c, .p = p, .t = &ts[i], .m = m};
        stmt_markers(&k, s);
        if (c->failed) return -1;
        if (i == 0) using_markers(&k, b->using, b->nusing);
    }
    for (size_t i = 0; i < m->n; i++) {
        if (m->cols[i].type) continue;
        m->cols[i].keyspace = b->nstmts ? ts[0].ks : "system";
        m->cols[i].table = b->nstmts ? ts[0].name : "local";
        m->cols[i].name = p->binds[i].name ? p->binds[i].name : "?";
        m->cols[i].type = &t_text;
    }
    return 0;
}

/* ---- PREPARE and EXECUTE ---- */

static int undefined(cql_call *c, const cql_tinfo *t, const char *name)
{
    return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s", name, t->ks,
                    t->name);
}

/* The columns a WHERE clause or IF conditions name exist; a token() restriction is for a
 * SELECT only (what, "UPDATE" or "DELETE", names the statement when it is not). */
static int check_relations(cql_call *c, const cql_tinfo *t, const cql_relation *rels, size_t n,
                           const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (rels[i].kind == CQL_REL_TOKEN && what)
            return cql_fail(c, CQL_ERR_INVALID,
                            "The token function cannot be used in WHERE clauses for %s statements",
                            what);
        for (size_t j = 0; j < rels[i].ncolumns; j++)
            if (cql_tinfo_col(t, rels[i].columns[j]) == NULL)
                return undefined(c, t, rels[i].columns[j]);
    }
    return 0;
}

/* What PREPARE refuses as Cassandra does, before any value is bound: a column the table
 * does not have, and token() in an UPDATE or DELETE. 0, or -1 with the error set. */
static int check_columns(cql_call *c, const cql_stmt *s, const cql_tinfo *t)
{
    switch (s->kind) {
    case CQL_SELECT:
        return check_relations(c, t, s->u.select.where.rels, s->u.select.where.n, NULL);
    case CQL_INSERT:
        for (size_t i = 0; i < s->u.insert.ncolumns; i++)
            if (cql_tinfo_col(t, s->u.insert.columns[i]) == NULL)
                return undefined(c, t, s->u.insert.columns[i]);
        return 0;
    case CQL_UPDATE: {
        const cql_update *up = &s->u.update;
        for (size_t i = 0; i < up->nset; i++)
            if (cql_tinfo_col(t, up->set[i].column) == NULL)
                return undefined(c, t, up->set[i].column);
        if (check_relations(c, t, up->where.rels, up->where.n, "UPDATE") != 0) return -1;
        return check_relations(c, t, up->conds, up->nconds, "UPDATE");
    }
    case CQL_DELETE: {
        const cql_delete *d = &s->u.del;
        for (size_t i = 0; i < d->ncols; i++)
            if (cql_tinfo_col(t, d->cols[i].column) == NULL)
                return undefined(c, t, d->cols[i].column);
        if (check_relations(c, t, d->where.rels, d->where.n, "DELETE") != 0) return -1;
        return check_relations(c, t, d->conds, d->nconds, "DELETE");
    }
    default:
        return 0;
    }
}

/* The table a statement reads or writes, NULL for the others. */
static const cql_qname *stmt_table(const cql_stmt *s)
{
    switch (s->kind) {
    case CQL_SELECT:
    case CQL_INSERT:
    case CQL_UPDATE:
    case CQL_DELETE:
        return &s->name;
    default:
        return NULL;
    }
}

int cql_exec_prepare(cql_call *c, const cql_prepare *p)
{
    const char *ks = p->keyspace.p ? NULL : c->keyspace;
    char ksbuf[CQL_NAME_MAX];
    if (p->keyspace.p) {
        snprintf(ksbuf, sizeof ksbuf, "%.*s", (int)p->keyspace.len, p->keyspace.p);
        ks = ksbuf;
        c->keyspace = ksbuf;
    }
    cql_plan *plan = cql_plan_parse(c, p->query.p, p->query.len);
    if (plan == NULL) return -1;
    const cql_parsed *parsed = &plan->parsed;
    const cql_stmt *s = parsed->stmts[0];
    int rc = -1;
    cql_tinfo t;
    memset(&t, 0, sizeof t);
    arena_init(&t.arena, 0);
    cql_markers m;
    memset(&m, 0, sizeof m);
    cql_rows result;
    cql_rows_init(&result, NULL, NULL);
    const cql_qname *tn = stmt_table(s);
    cql_tinfo *bts = NULL; /* a BATCH's tables, one per statement */
    size_t nbts = 0;
    if (s->kind == CQL_BATCH) {
        nbts = s->u.batch.nstmts;
        bts = calloc(nbts + 1, sizeof *bts);
        if (bts == NULL) {
            cql_fail(c, CQL_ERR_SERVER, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < nbts; i++)
            arena_init(&bts[i].arena, 0);
        if (batch_markers(c, &s->u.batch, parsed, bts, &m) != 0) goto done;
    } else if (tn) {
        const char *tks = cql_keyspace_of(c, tn);
        if (tks == NULL || cql_tinfo_load(c, tks, tn->name, &t) != 0) goto done;
        if (check_columns(c, s, &t) != 0) goto done;
        if (cql_markers_of(c, s, parsed, &t, &m) != 0) goto done;
        if (s->kind == CQL_SELECT && cql_select_metadata(c, s, &t, &result) != 0) goto done;
    } else if (parsed->nbinds) {
        cql_fail(c, CQL_ERR_INVALID, "Bind variables are not allowed in this statement");
        goto done;
    }
    uint8_t id[16];
    prepared_id(ks, p->query.p, p->query.len, id);
    cql_state *st = cql_state_of(c);
    if (st == NULL) goto done;
    if (ks && (plan->keyspace = strdup(ks)) == NULL) {
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        goto done;
    }
    int writes = s->kind != CQL_SELECT && s->kind != CQL_USE;
    cql_metadata md;
    memset(&md, 0, sizeof md);
    md.keyspace = result.ncols ? t.ks : NULL;
    md.table = result.ncols ? t.name : NULL;
    md.columns = result.cols;
    md.n_columns = result.ncols;
    uint8_t mdid[16];
    cql_metadata_id(c->version, &md, mdid);
    plan->refs++; /* the state's */
    pthread_mutex_lock(&st->lock);
    int kept = keep(st, id, plan, writes, mdid);
    pthread_mutex_unlock(&st->lock);
    if (kept != 0) {
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        goto done;
    }
    cql_prepared pr = {.id = id,
                       .id_len = 16,
                       .result_metadata_id = mdid,
                       .result_metadata_id_len = 16,
                       .keyspace = tn ? t.ks : NULL,
                       .table = tn ? t.name : NULL,
                       .markers = m.cols,
                       .n_markers = (uint32_t)m.n,
                       .pk_indexes = m.pk,
                       .n_pk = (uint32_t)m.npk,
                       .result = result.ncols ? &md : NULL};
    if (cql_write_prepared(&c->body, c->version, &pr) != 0) {
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        goto done;
    }
    rc = 0;
done:
    cql_rows_free(&result);
    cql_markers_free(&m);
    cql_tinfo_free(&t);
    for (size_t i = 0; i < nbts; i++)
        cql_tinfo_free(&bts[i]);
    free(bts);
    cql_plan_release(plan);
    return rc;
}

static void hex(const uint8_t *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

int cql_prepared_get(cql_call *c, const uint8_t *id, size_t len, cql_plan **plan)
{
    cql_state *st = cql_state_of(c);
    if (st == NULL) return -1;
    pthread_mutex_lock(&st->lock);
    cql_prepared_entry *e = find(st, id, len);
    *plan = NULL;
    if (e) {
        e->used = ++tick;
        *plan = e->plan;
        __atomic_add_fetch(&e->plan->refs, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&st->lock);
    if (e == NULL) {
        char h[2 * 64 + 1];
        size_t n = len < 64 ? len : 64;
        hex(id, n, h);
        c->err_id_len = len < sizeof c->err_id ? len : sizeof c->err_id;
        memcpy(c->err_id, id, c->err_id_len);
        return cql_fail(c, CQL_ERR_UNPREPARED,
                        "Prepared query with ID %s not found (either the query was not prepared "
                        "on this host (maybe the host has been restarted?) or you have prepared "
                        "too many queries and it has been evicted from the internal cache)",
                        h);
    }
    return 0;
}

int cql_prepared_result_id(cql_call *c, const uint8_t *id, size_t len, uint8_t out[16])
{
    cql_state *st = cql_state_of(c);
    if (st == NULL) return 0;
    pthread_mutex_lock(&st->lock);
    cql_prepared_entry *e = find(st, id, len);
    if (e) memcpy(out, e->result_id, 16);
    pthread_mutex_unlock(&st->lock);
    return e != NULL;
}

int cql_prepared_writes(qr_db *db, const uint8_t *id, size_t len)
{
    cql_state *st = engine_cql_state(db);
    if (st == NULL) return 1;
    pthread_mutex_lock(&st->lock);
    cql_prepared_entry *e = find(st, id, len);
    int w = e ? e->writes : 1;
    pthread_mutex_unlock(&st->lock);
    return w;
}
