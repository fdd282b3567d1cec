/* exec_selector.c — SELECT's computed selectors (exec_int.h's cql_fnsel): function calls,
 * nested ones included (toTimestamp(now())), CAST, token(), the field of a user-defined
 * type (addr.zip, frozen or not), the element or slice of a set or map (m['k'],
 * m['a'..'c']), typed terms ((int)1), arithmetic ((c - b) / a, -d) and aggregates under
 * them (cast(count(*) AS int)); each resolved against a table into its result type and
 * the column name Cassandra gives it, then evaluated on one row's column values (or a
 * group's aggregate states); and the argument of an aggregate (a column,
 * writetime()/ttl() of one, or a computed selector).
 *
 * Not plain columns, writetime()/ttl() or the aggregates themselves: the SELECT executor
 * reads and folds those. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/aggregate.h"
#include "cql/arith.h"
#include "cql/exec_int.h"
#include "cql/func.h"
#include "cql/keyenc.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"

/* ---- resolution ---- */

static int resolve(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out, buf *name);
static int resolve_operand(cql_call *c, const cql_tinfo *t, const cql_expr *a, cql_fnsel *out,
                           size_t i, buf *name);
static int resolve_aggregate(cql_call *c, const cql_tinfo *t, const cql_expr *e, cqlagg_kind ak,
                             cql_fnsel *out, buf *name);

/* A selector in parentheses (the parser's tuple of one). */
static int parenthesised(const cql_expr *e)
{
    return e->kind == CQL_E_TUPLE && e->nitems == 1;
}

static int is_computed(const cql_expr *e)
{
    while (parenthesised(e))
        e = e->items[0];
    return e->kind == CQL_E_FUNCTION || e->kind == CQL_E_CAST || e->kind == CQL_E_FIELD ||
           e->kind == CQL_E_HINT || e->kind == CQL_E_ELEMENT || e->kind == CQL_E_SLICE ||
           e->kind == CQL_E_BINARY || e->kind == CQL_E_NEGATE;
}

static int oom(cql_call *c)
{
    return cql_fail(c, CQL_ERR_SERVER, "out of memory");
}

static int put_str(buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

/* Appends e printed as CQL (a constant's text as written). */
static int put_printed(buf *b, const cql_expr *e)
{
    char *p = cql_print_expr(e);
    int rc = p ? put_str(b, p) : -1;
    free(p);
    return rc;
}

/* One argument of a function, cast or field selection: a column, a nested computed
 * selector, or a constant term (type left NULL). Its column name goes to name. */
static int resolve_arg(cql_call *c, const cql_tinfo *t, const cql_expr *a, cql_fnsel *out, size_t i,
                       buf *name)
{
    size_t parens = 0;
    for (; parenthesised(a) && a->items[0]->kind != CQL_E_BIND; parens++) {
        if (put_str(name, "(") != 0) return oom(c);
        a = a->items[0];
    }
    int rc = resolve_operand(c, t, a, out, i, name);
    for (; rc == 0 && parens; parens--)
        if (put_str(name, ")") != 0) rc = oom(c);
    return rc;
}

static int resolve_operand(cql_call *c, const cql_tinfo *t, const cql_expr *a, cql_fnsel *out,
                           size_t i, buf *name)
{
    out->argexpr[i] = a;
    if (a->kind == CQL_E_COLUMN) {
        const cql_tcol *col = cql_tinfo_col(t, a->text);
        if (col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s", a->text,
                            t->ks, t->name);
        if (col->type == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "%s.%s answers its columns as they are, not %s",
                            t->ks, t->name, "computed from them");
        out->argcol[i] = col;
        out->argtype[i] = col->type;
        return put_str(name, col->name) == 0 ? 0 : oom(c);
    }
    if (a->kind == CQL_E_FUNCTION && a->fn.ks == NULL && a->nitems == 1 && !a->star &&
        a->items[0]->kind == CQL_E_COLUMN &&
        (strcmp(a->fn.name, "writetime") == 0 || strcmp(a->fn.name, "ttl") == 0)) {
        /* writetime(col) or ttl(col) as an argument (CASSANDRA-8451) */
        const cql_tcol *col = cql_tinfo_col(t, a->items[0]->text);
        if (col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            a->items[0]->text, t->ks, t->name);
        if (col->kind == 'p' || col->kind == 'c')
            return cql_fail(c, CQL_ERR_INVALID,
                            "Cannot use selection function %s on PRIMARY KEY part %s", a->fn.name,
                            col->name);
        if (col->type && cqltype_is_multicell(col->type))
            return cql_fail(c, CQL_ERR_INVALID,
                            "Cannot use selection function %s on non-frozen %s %s",
                            a->fn.name[0] == 'w' ? "writeTime" : "ttl",
                            cqltype_is_collection(col->type) ? "collection" : "UDT", col->name);
        out->argcol[i] = col;
        out->argcell[i] = a->fn.name[0];
        out->argtype[i] = cqltype_native(a->fn.name[0] == 'w' ? CQL_TYPE_BIGINT : CQL_TYPE_INT);
        return put_str(name, a->fn.name) || put_str(name, "(") || put_str(name, col->name) ||
                       put_str(name, ")")
                   ? oom(c)
                   : 0;
    }
    if (is_computed(a)) {
        cql_fnsel *sub = arena_alloc((arena *)&t->arena, sizeof *sub);
        if (sub == NULL) return oom(c);
        if (resolve(c, t, a, sub, name) != 0) return -1;
        out->argsel[i] = sub;
        out->argtype[i] = sub->ret;
        return 0;
    }
    return put_printed(name, a) == 0 ? 0 : oom(c);
}

/* The type e names (a CAST's target or a type hint's), resolved in t's keyspace; NULL when
 * it names none, the call failed with Cassandra's message. */
static const cql_ctype *hint_type(cql_call *c, const cql_tinfo *t, const cql_expr *e)
{
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    cqltype_env env = {.keyspace = t->ks};
    const cql_ctype *to;
    if (cqltype_resolve((arena *)&t->arena, e->type, &env, &to, &perr) == 0) return to;
    cql_fail_parsed(c, &perr);
    return NULL;
}

static int resolve_cast(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                        buf *name)
{
    size_t mark = name->len;
    if (put_str(name, "cast(") != 0) return oom(c);
    const cql_expr *a = e->nitems ? e->items[0] : NULL;
    if (a == NULL || (a->kind != CQL_E_COLUMN && !is_computed(a)))
        return cql_fail(c, CQL_ERR_INVALID, "CAST takes a column of %s.%s or a function of one",
                        t->ks, t->name);
    size_t argat = name->len;
    if (resolve_arg(c, t, a, out, 0, name) != 0) return -1;
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    const cql_ctype *to = hint_type(c, t, e);
    if (to == NULL) return -1;
    char what[256];
    snprintf(what, sizeof what, "%.*s", (int)(name->len - argat), name->data + argat);
    if (cqlfn_cast_check_as(out->argtype[0], to, what, &perr) != 0)
        return cql_fail_parsed(c, &perr);
    out->kind = 'c';
    out->ret = to;
    out->nargs = 1;
    if (put_str(name, " as ") != 0 || cqltype_name(to, name) != 0 || put_str(name, ")") != 0)
        return oom(c);
    for (size_t k = mark; k < argat; k++)
        name->data[k] = (char)tolower((unsigned char)name->data[k]);
    return 0;
}

static int resolve_token(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                         buf *name)
{
    if (e->nitems != t->npk)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Invalid number of arguments in call to function system.token: %zu "
                        "required but %zu provided",
                        t->npk, e->nitems);
    if (put_str(name, "system.token(") != 0) return oom(c);
    for (size_t i = 0; i < e->nitems; i++) {
        const cql_tcol *col =
            e->items[i]->kind == CQL_E_COLUMN ? cql_tinfo_col(t, e->items[i]->text) : NULL;
        if (col == NULL && e->items[i]->kind == CQL_E_COLUMN)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            e->items[i]->text, t->ks, t->name);
        const cql_tcol *want = NULL; /* the key column the argument stands for */
        for (size_t j = 0; j < t->ncols; j++)
            if (t->cols[j].kind == 'p' && t->cols[j].pos == (int)i) want = &t->cols[j];
        if (col && want && col != want && col->type && want->type &&
            !cqltype_equal(col->type, want->type)) {
            buf tn;
            buf_init(&tn, 0);
            cqltype_name(want->type, &tn);
            int rc = cql_fail(c, CQL_ERR_INVALID,
                              "Type error: %s cannot be passed as argument %zu of function "
                              "system.token of type %.*s",
                              col->name, i, (int)tn.len, tn.data ? tn.data : "");
            buf_free(&tn);
            return rc;
        }
        if (col == NULL || col->kind != 'p' || col->pos != (int)i)
            return cql_fail(c, CQL_ERR_INVALID,
                            "The token function arguments must be the partition key "
                            "columns in order");
        out->argcol[i] = col;
        if ((i && put_str(name, ", ") != 0) || put_str(name, col->name) != 0) return oom(c);
    }
    out->kind = 't';
    out->ret = cqltype_native(CQL_TYPE_BIGINT);
    out->nargs = e->nitems;
    return put_str(name, ")") == 0 ? 0 : oom(c);
}

static int resolve_function(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                            buf *name)
{
    if (e->nitems > CQL_FNSEL_MAX_ARGS)
        return cql_fail(c, CQL_ERR_INVALID, "Too many arguments in call to function %s",
                        e->fn.name);
    /* the arguments' names, after the function's once it is known */
    buf args;
    buf_init(&args, 0);
    int rc = -1;
    for (size_t i = 0; i < e->nitems; i++) {
        if (i && put_str(&args, ", ") != 0) {
            oom(c);
            goto done;
        }
        if (resolve_arg(c, t, e->items[i], out, i, &args) != 0) goto done;
    }
    char fname[160];
    snprintf(fname, sizeof fname, "%s%s%s", e->fn.ks ? e->fn.ks : "", e->fn.ks ? "." : "",
             e->fn.name);
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    const cql_ctype *types[CQL_FNSEL_MAX_ARGS];
    for (size_t i = 0; i < e->nitems; i++)
        types[i] = out->argtype[i];
    out->fn = cqlfn_resolve(fname, types, out->argexpr, e->nitems, NULL, &perr);
    if (out->fn == NULL) {
        cql_fail_parsed(c, &perr);
        goto done;
    }
    out->kind = 'f';
    out->nargs = e->nitems;
    out->ret = cqlfn_return_type(out->fn, NULL);
    if (out->ret == NULL) {
        cql_fail(c, CQL_ERR_INVALID, "Unknown function %s called in selection clause", fname);
        goto done;
    }
    for (size_t i = 0; i < e->nitems; i++)
        out->argtype[i] = cqlfn_arg_type(out->fn, i, types[i]);
    if (put_str(name, cqlfn_name(out->fn)) != 0 || put_str(name, "(") != 0 ||
        buf_append(name, args.data ? args.data : "", args.len) != 0 || put_str(name, ")") != 0) {
        oom(c);
        goto done;
    }
    rc = 0;
done:
    buf_free(&args);
    return rc;
}

static int resolve_field(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                         buf *name)
{
    size_t at = name->len;
    if (e->nitems != 1 || (e->items[0]->kind != CQL_E_COLUMN && !is_computed(e->items[0])))
        return cql_fail(c, CQL_ERR_INVALID, "Invalid field selection: %s is not a column", e->text);
    if (resolve_arg(c, t, e->items[0], out, 0, name) != 0) return -1;
    const cql_ctype *ut = out->argtype[0];
    char what[256];
    snprintf(what, sizeof what, "%.*s", (int)(name->len - at), name->data + at);
    buf tn;
    buf_init(&tn, 0);
    if (ut) cqltype_name(ut, &tn);
    int rc = 0;
    if (ut == NULL || ut->wire.id != CQL_TYPE_UDT) {
        rc = cql_fail(c, CQL_ERR_INVALID,
                      "Invalid field selection: %s of type %.*s is not a user type", what,
                      (int)tn.len, tn.data ? tn.data : "");
    } else {
        size_t k = 0;
        while (k < ut->wire.n && strcmp(ut->wire.field_names[k], e->text) != 0)
            k++;
        if (k == ut->wire.n) {
            rc = cql_fail(c, CQL_ERR_INVALID, "%s of type %.*s has no field %s", what, (int)tn.len,
                          tn.data ? tn.data : "", e->text);
        } else {
            out->kind = 'u';
            out->field = k;
            out->nargs = 1;
            out->ret = ut->args[k];
            if (put_str(name, ".") != 0 || put_str(name, e->text) != 0) rc = oom(c);
        }
    }
    buf_free(&tn);
    return rc;
}

/* c[k] and c[lo..hi] of a set or map (frozen or not): its element (a map's value, a
 * set's element when present) or the sub-collection whose keys lie within the bounds,
 * named c['k'] and c['a'..'c'] as Cassandra names them. */
static int resolve_element(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                           buf *name)
{
    int slice = e->kind == CQL_E_SLICE;
    size_t at = name->len;
    if (e->items[0]->kind != CQL_E_COLUMN && !is_computed(e->items[0]))
        return cql_fail(c, CQL_ERR_INVALID, "Invalid element selection: not a column");
    if (resolve_arg(c, t, e->items[0], out, 0, name) != 0) return -1;
    const cql_ctype *ct = out->argtype[0];
    char what[256];
    snprintf(what, sizeof what, "%.*s", (int)(name->len - at), name->data + at);
    int id = ct ? ct->wire.id : 0;
    if (id == CQL_TYPE_LIST)
        return cql_fail(c, CQL_ERR_INVALID,
                        "%s selection is only allowed on sets and maps, but %s is a list",
                        slice ? "Slice" : "Element", what);
    if (id != CQL_TYPE_SET && id != CQL_TYPE_MAP) {
        buf tn;
        buf_init(&tn, 0);
        if (ct) cqltype_name(ct, &tn);
        int rc = cql_fail(c, CQL_ERR_INVALID,
                          "Invalid %s selection: %s is of type %.*s is not a collection",
                          slice ? "slice" : "element", what, (int)tn.len, tn.data ? tn.data : "");
        buf_free(&tn);
        return rc;
    }
    out->kind = slice ? 's' : 'e';
    out->nargs = 1;
    out->argexpr[1] = e->items[1];
    out->argexpr[2] = slice ? e->items[2] : NULL;
    out->ret = slice ? ct : id == CQL_TYPE_MAP ? ct->args[1] : ct->args[0];
    if (put_str(name, "[") != 0 || (e->items[1] && put_printed(name, e->items[1]) != 0) ||
        (slice && put_str(name, "..") != 0) ||
        (slice && e->items[2] && put_printed(name, e->items[2]) != 0) || put_str(name, "]") != 0)
        return oom(c);
    return 0;
}

/* (type) term: the term as a value of type, named "(type)term" as Cassandra names it. */
static int resolve_hint(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                        buf *name)
{
    const cql_expr *a = e->nitems ? e->items[0] : NULL;
    if (a == NULL) return cql_fail(c, CQL_ERR_INVALID, "A type hint needs a term");
    const cql_ctype *to = hint_type(c, t, e);
    if (to == NULL) return -1;
    if (a->kind == CQL_E_COLUMN || is_computed(a)) {
        /* over a selector the hint names the type it has: nothing is converted */
        if (put_str(name, "(") != 0 || cqltype_name(to, name) != 0 || put_str(name, ")") != 0)
            return oom(c);
        size_t at = name->len;
        if (resolve_arg(c, t, a, out, 0, name) != 0) return -1;
        if (!cqlfn_compatible(to, out->argtype[0])) {
            buf tn;
            buf_init(&tn, 0);
            cqltype_name(out->argtype[0], &tn);
            int rc = cql_fail(c, CQL_ERR_INVALID, "Cannot assign value of type %.*s to %.*s",
                              (int)tn.len, tn.data ? tn.data : "", (int)(name->len - at),
                              name->data + at);
            buf_free(&tn);
            return rc;
        }
        out->kind = 'h';
        out->ret = to;
        out->nargs = 1;
        return 0;
    }
    out->kind = 'k';
    out->ret = to;
    out->nargs = 1;
    out->argexpr[0] = e;
    if (put_str(name, "(") != 0 || cqltype_name(to, name) != 0 || put_str(name, ")") != 0 ||
        put_printed(name, a) != 0)
        return oom(c);
    return 0;
}

/* How well operand i of an operation fits a parameter of native type id: by its type
 * when it has one (a column, a computed selector), else as a term. */
static int operand_fit(void *ctx, size_t i, uint16_t id)
{
    const cql_fnsel *f = ctx;
    const cql_ctype *pt = cqltype_native(id);
    if (f->argtype[i]) return cqlfn_compatible(pt, f->argtype[i]);
    return cqlval_assignable(pt, f->argexpr[i]);
}

/* a op b and -a over columns, computed selectors and terms, named as written
 * ("a + 1", "(c - b) / a"). */
static int resolve_operation(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                             buf *name)
{
    size_t n = e->kind == CQL_E_NEGATE ? 1 : 2;
    if (e->nitems != n) return cql_fail(c, CQL_ERR_INVALID, "Malformed operation");
    buf texts[2];
    buf_init(&texts[0], 0);
    buf_init(&texts[1], 0);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = resolve_arg(c, t, e->items[i], out, i, &texts[i]);
        if (rc == 0 && buf_append(&texts[i], "", 1) != 0) rc = oom(c);
    }
    cqlarith_op *o = rc == 0 ? arena_alloc((arena *)&t->arena, sizeof *o) : NULL;
    if (rc == 0 && o == NULL) rc = oom(c);
    if (rc == 0) {
        int markers[2] = {out->argexpr[0]->kind == CQL_E_BIND,
                          n > 1 && out->argexpr[1]->kind == CQL_E_BIND};
        const char *shown[2] = {texts[0].data, n > 1 ? texts[1].data : ""};
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        char op = n == 1 ? 'n' : e->op;
        if (cqlarith_resolve(op, n, operand_fit, out, markers, shown, 0, o, &perr) != 0)
            rc = cql_fail_parsed(c, &perr);
    }
    if (rc == 0) {
        out->kind = 'o';
        out->arith = o;
        out->nargs = n;
        out->ret = cqltype_native(o->ret);
        out->argtype[0] = cqltype_native(o->left);
        if (n > 1) out->argtype[1] = cqltype_native(o->right);
        if (n == 1)
            rc = put_str(name, "-") || put_str(name, texts[0].data) ? oom(c) : 0;
        else
            rc = put_str(name, texts[0].data) || put_str(name, " ") ||
                         put_str(name, cqlarith_symbol(e->op)) || put_str(name, " ") ||
                         put_str(name, texts[1].data)
                     ? oom(c)
                     : 0;
    }
    buf_free(&texts[0]);
    buf_free(&texts[1]);
    return rc;
}

/* An aggregate under a computed selector: its state, named as its own column would be. */
static int resolve_aggregate(cql_call *c, const cql_tinfo *t, const cql_expr *e, cqlagg_kind ak,
                             cql_fnsel *out, buf *name)
{
    cql_fnagg *a = arena_alloc((arena *)&t->arena, sizeof *a);
    if (a == NULL) return oom(c);
    memset(a, 0, sizeof *a);
    const cql_ctype *argtype = NULL;
    char *argname = NULL;
    if (ak != CQLAGG_COUNT_ROWS) {
        if (cql_agg_arg(c, t, e, &a->col, &a->cellfn, &a->fn, &argtype, &argname) != 0) {
            free(argname);
            return -1;
        }
        a->on_fn = a->col == NULL;
    }
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    int rc = cqlagg_init(&a->state, ak, argtype, &perr) != 0 ? cql_fail_parsed(c, &perr)
             : cqlagg_column_name(ak, argname, name) != 0    ? oom(c)
                                                             : 0;
    free(argname);
    if (rc != 0) return rc;
    out->kind = 'a';
    out->agg = a;
    out->ret = a->state.result;
    return 0;
}

size_t cql_fnsel_aggregates(const cql_fnsel *f, cql_fnagg **out, size_t max, int *plain)
{
    if (f->kind == 'a') {
        if (max) out[0] = f->agg;
        return 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < f->nargs && i < CQL_FNSEL_MAX_ARGS; i++) {
        if (f->argcol[i]) *plain = 1;
        if (f->argsel[i])
            n += cql_fnsel_aggregates(f->argsel[i], out + (n < max ? n : max),
                                      n < max ? max - n : 0, plain);
    }
    if (f->kind == 't' && f->nargs) *plain = 1;
    return n;
}

static int resolve(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out, buf *name)
{
    memset(out, 0, sizeof *out);
    if (parenthesised(e) && is_computed(e->items[0])) {
        if (put_str(name, "(") != 0 || resolve(c, t, e->items[0], out, name) != 0) return -1;
        return put_str(name, ")") == 0 ? 0 : oom(c);
    }
    switch (e->kind) {
    case CQL_E_BINARY:
    case CQL_E_NEGATE:
        return resolve_operation(c, t, e, out, name);
    case CQL_E_CAST:
        return resolve_cast(c, t, e, out, name);
    case CQL_E_FIELD:
        return resolve_field(c, t, e, out, name);
    case CQL_E_HINT:
        return resolve_hint(c, t, e, out, name);
    case CQL_E_ELEMENT:
    case CQL_E_SLICE:
        return resolve_element(c, t, e, out, name);
    case CQL_E_FUNCTION: {
        cqlagg_kind ak;
        if ((e->fn.ks == NULL || strcmp(e->fn.ks, "system") == 0) &&
            cqlagg_lookup(e->fn.name, e->star, cql_agg_literal_arg(e), &ak))
            return resolve_aggregate(c, t, e, ak, out, name);
    }
        if (strcmp(e->fn.name, "token") == 0 &&
            (e->fn.ks == NULL || strcmp(e->fn.ks, "system") == 0))
            return resolve_token(c, t, e, out, name);
        return resolve_function(c, t, e, out, name);
    default:
        break;
    }
    char *printed = cql_print_expr(e);
    int rc;
    if (e->kind == CQL_E_COLUMN || e->kind == CQL_E_TUPLE)
        rc = cql_fail(c, CQL_ERR_INVALID, "Unsupported selector %s on %s.%s",
                      printed ? printed : "?", t->ks, t->name);
    else
        rc = cql_fail(c, CQL_ERR_INVALID,
                      "Cannot infer type for term %s in selection clause (try using a cast to "
                      "force a type)",
                      printed ? printed : "?");
    free(printed);
    return rc;
}

int cql_fnsel_resolve(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                      char **name)
{
    *name = NULL;
    buf nb;
    buf_init(&nb, 0);
    if (resolve(c, t, e, out, &nb) != 0) {
        buf_free(&nb);
        return -1;
    }
    if (buf_append(&nb, "", 1) != 0) {
        buf_free(&nb);
        return oom(c);
    }
    *name = nb.data;
    return 0;
}

/* ---- evaluation ---- */

/* Field k of the UDT value v (fields missing at its end, as after ALTER TYPE ADD, are
 * null): CQLVAL_OK with out, CQLVAL_NULL, or CQLVAL_ERROR for a malformed value. */
static int udt_field(const uint8_t *v, size_t len, size_t k, buf *out)
{
    size_t pos = 0;
    for (size_t i = 0;; i++) {
        if (pos == len) return CQLVAL_NULL;
        if (len - pos < 4) return CQLVAL_ERROR;
        int32_t n = (int32_t)((uint32_t)v[pos] << 24 | (uint32_t)v[pos + 1] << 16 |
                              (uint32_t)v[pos + 2] << 8 | v[pos + 3]);
        pos += 4;
        if (n >= 0 && (size_t)n > len - pos) return CQLVAL_ERROR;
        if (i == k) {
            if (n < 0) return CQLVAL_NULL;
            return buf_append(out, v + pos, (size_t)n) == 0 ? CQLVAL_OK : CQLVAL_ERROR;
        }
        if (n > 0) pos += (size_t)n;
    }
}

/* c[k] or c[lo..hi] of the set or map v (type ct) into out: CQLVAL_OK, CQLVAL_NULL (no
 * such element), or CQLVAL_ERROR with the error set. */
static int element_value(cql_run *r, const cql_fnsel *f, const cql_ctype *ct, const uint8_t *v,
                         size_t len, buf *out)
{
    int map = ct->wire.id == CQL_TYPE_MAP, slice = f->kind == 's';
    const cql_ctype *kt = ct->args[0];
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    int rc = CQLVAL_OK;
    if (f->argexpr[1]) rc = cql_term(r, kt, "[selection]", f->argexpr[1], &lo);
    if (rc == CQLVAL_OK && slice && f->argexpr[2])
        rc = cql_term(r, kt, "[selection]", f->argexpr[2], &hi);
    if (rc != CQLVAL_OK) {
        buf_free(&lo);
        buf_free(&hi);
        if (rc == CQLVAL_ERROR) return rc;
        cql_fail(r->call, CQL_ERR_INVALID, "Invalid null value for a selection's %s",
                 map ? "key" : "element");
        return CQLVAL_ERROR;
    }
    cql_elements e;
    uint32_t n;
    buf sub; /* a slice's elements */
    buf_init(&sub, 0);
    uint32_t kept = 0;
    rc = CQLVAL_NULL;
    if (cql_collection_open(&e, v, len, map, &n) == 0) {
        const uint8_t *k, *val = NULL;
        int32_t klen, vlen = 0;
        while (cql_element_next(&e, &k, &klen) == 1 &&
               (!map || cql_element_next(&e, &val, &vlen) == 1)) {
            if (klen < 0) continue;
            int past_lo = !f->argexpr[1] || cqlval_compare(kt, k, (size_t)klen,
                                                           (const uint8_t *)lo.data, lo.len) >= 0;
            if (!slice) {
                if (f->argexpr[1] &&
                    cqlval_compare(kt, k, (size_t)klen, (const uint8_t *)lo.data, lo.len) == 0) {
                    const uint8_t *p = map ? val : k;
                    int32_t plen = map ? vlen : klen;
                    if (plen >= 0) buf_append(out, p, (size_t)plen);
                    rc = plen >= 0 ? CQLVAL_OK : CQLVAL_NULL;
                    break;
                }
                continue;
            }
            int before_hi = !f->argexpr[2] || cqlval_compare(kt, k, (size_t)klen,
                                                             (const uint8_t *)hi.data, hi.len) <= 0;
            if (!past_lo || !before_hi) continue;
            buf_put_be32(&sub, (uint32_t)klen);
            buf_append(&sub, k, (size_t)klen);
            if (map) {
                buf_put_be32(&sub, (uint32_t)vlen);
                if (vlen > 0) buf_append(&sub, val, (size_t)vlen);
            }
            kept++;
        }
    }
    if (slice) {
        /* an empty slice is null, as an empty collection is */
        if (kept) {
            buf_put_be32(out, kept);
            buf_append(out, sub.data, sub.len);
        }
        rc = kept ? CQLVAL_OK : CQLVAL_NULL;
    }
    buf_free(&sub);
    buf_free(&lo);
    buf_free(&hi);
    return rc;
}

int cql_fnsel_cells(const cql_fnsel *f, int which)
{
    for (size_t i = 0; i < f->nargs; i++)
        if (f->argcell[i] == which || (f->argsel[i] && cql_fnsel_cells(f->argsel[i], which)))
            return 1;
    return 0;
}

int cql_fnsel_value(cql_run *r, const cql_tinfo *t, const cql_fnsel *f, const buf *vals,
                    const int8_t *has, const cql_cellmeta *meta, buf *out)
{
    cql_call *c = r->call;
    if (f->kind == 'k') return cql_term(r, f->ret, "[selection]", f->argexpr[0], out);
    if (f->kind == 'a') {
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        int got = cqlagg_result(&f->agg->state, out, &perr);
        if (got == CQLVAL_ERROR) cql_fail_parsed(c, &perr);
        return got;
    }
    if (f->kind == 't') {
        cql_value v[64];
        for (size_t i = 0; i < f->nargs; i++) {
            size_t ci = (size_t)(f->argcol[i] - t->cols);
            if (!has[ci]) return CQLVAL_NULL;
            v[f->argcol[i]->pos].p = (const uint8_t *)vals[ci].data;
            v[f->argcol[i]->pos].len = (int32_t)vals[ci].len;
        }
        buf pk;
        buf_init(&pk, 0);
        if (cql_pk_serialize(c, t, v, &pk) != 0) {
            buf_free(&pk);
            return CQLVAL_ERROR;
        }
        uint8_t b[8];
        cqlkey_token_bytes(cqlkey_token((const uint8_t *)pk.data, pk.len), b);
        buf_free(&pk);
        buf_append(out, b, 8);
        return CQLVAL_OK;
    }
    /* the arguments' values */
    cql_value args[CQL_FNSEL_MAX_ARGS];
    buf own[CQL_FNSEL_MAX_ARGS];
    uint64_t cell[CQL_FNSEL_MAX_ARGS] = {0}; /* an argument's write time or TTL (8 bytes) */
    int rc = CQLVAL_OK;
    for (size_t i = 0; i < f->nargs; i++) {
        buf_init(&own[i], 0);
        if (rc != CQLVAL_OK) continue;
        int got;
        if (f->argcol[i] && f->argcell[i]) {
            int32_t len =
                meta ? meta->get(meta->ctx, f->argcol[i], f->argcell[i], (uint8_t *)&cell[i]) : -1;
            args[i].p = (const uint8_t *)&cell[i];
            args[i].len = len < 0 ? CQL_NULL : len;
            continue;
        }
        if (f->argcol[i]) {
            size_t ci = (size_t)(f->argcol[i] - t->cols);
            args[i].p = (const uint8_t *)vals[ci].data;
            args[i].len = has[ci] ? (int32_t)vals[ci].len : CQL_NULL;
            continue;
        }
        if (f->argsel[i])
            got = cql_fnsel_value(r, t, f->argsel[i], vals, has, meta, &own[i]);
        else
            got = cql_term(r, f->argtype[i], "argument", f->argexpr[i], &own[i]);
        if (got == CQLVAL_ERROR) rc = CQLVAL_ERROR;
        args[i].p = (const uint8_t *)own[i].data;
        args[i].len = got == CQLVAL_OK ? (int32_t)own[i].len : CQL_NULL;
    }
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    if (rc == CQLVAL_OK && (f->kind == 'e' || f->kind == 's')) {
        rc = args[0].len < 0
                 ? CQLVAL_NULL
                 : element_value(r, f, f->argtype[0], args[0].p, (size_t)args[0].len, out);
    } else if (rc == CQLVAL_OK && f->kind == 'u') {
        rc = args[0].len < 0 ? CQLVAL_NULL
                             : udt_field(args[0].p, (size_t)args[0].len, f->field, out);
        if (rc == CQLVAL_ERROR)
            cql_fail(c, CQL_ERR_SERVER, "a stored value of user type %s cannot be read",
                     f->argtype[0]->wire.name ? f->argtype[0]->wire.name : "?");
    } else if (rc == CQLVAL_OK && f->kind == 'h') {
        rc = args[0].len < 0                                   ? CQLVAL_NULL
             : buf_append(out, args[0].p, (size_t)args[0].len) ? oom(c)
                                                               : CQLVAL_OK;
    } else if (rc == CQLVAL_OK && f->kind == 'o') {
        rc = cqlarith_apply(f->arith, args[0].p, args[0].len, f->nargs > 1 ? args[1].p : NULL,
                            f->nargs > 1 ? args[1].len : CQL_NULL, out, &perr);
        if (rc == CQLVAL_ERROR) cql_fail_parsed(c, &perr);
    } else if (rc == CQLVAL_OK && f->kind == 'c') {
        rc = args[0].len < 0
                 ? CQLVAL_NULL
                 : cqlfn_cast(f->argtype[0], f->ret, args[0].p, (size_t)args[0].len, out, &perr);
        if (rc == CQLVAL_ERROR) cql_fail_parsed(c, &perr);
    } else if (rc == CQLVAL_OK) {
        rc = cqlfn_call(f->fn, f->argtype, args, f->nargs, f->ret, out, &perr);
        if (rc == CQLVAL_ERROR) cql_fail_parsed(c, &perr);
    }
    for (size_t i = 0; i < f->nargs; i++)
        buf_free(&own[i]);
    return rc;
}

int cql_agg_arg(cql_call *c, const cql_tinfo *t, const cql_expr *e, const cql_tcol **col,
                int *cellfn, cql_fnsel *fn, const cql_ctype **type, char **name)
{
    *col = NULL;
    *cellfn = 0;
    *name = NULL;
    if (e->nitems != 1)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Invalid number of arguments in call to function %s: 1 "
                        "required but %zu provided",
                        e->fn.name, e->nitems);
    const cql_expr *arg = e->items[0];
    cqlagg_kind inner;
    if (arg->kind == CQL_E_FUNCTION &&
        cqlagg_lookup(arg->fn.name, arg->star, cql_agg_literal_arg(arg), &inner))
        return cql_fail(c, CQL_ERR_INVALID,
                        "aggregate functions cannot be used as arguments of aggregate functions");
    if (arg->kind == CQL_E_COLUMN) {
        *col = cql_tinfo_col(t, arg->text);
        if (*col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            arg->text, t->ks, t->name);
        *type = (*col)->type;
        *name = strdup((*col)->name);
        return *name ? 0 : cql_fail(c, CQL_ERR_SERVER, "out of memory");
    }
    if (arg->kind == CQL_E_FUNCTION && arg->fn.ks == NULL && arg->nitems == 1 &&
        arg->items[0]->kind == CQL_E_COLUMN &&
        (strcmp(arg->fn.name, "writetime") == 0 || strcmp(arg->fn.name, "ttl") == 0)) {
        *col = cql_tinfo_col(t, arg->items[0]->text);
        if (*col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            arg->items[0]->text, t->ks, t->name);
        if ((*col)->kind == 'p' || (*col)->kind == 'c')
            return cql_fail(c, CQL_ERR_INVALID,
                            "Cannot use selection function %s on PRIMARY KEY part %s", arg->fn.name,
                            (*col)->name);
        *cellfn = arg->fn.name[0];
        *type = cqltype_native(*cellfn == 'w' ? CQL_TYPE_BIGINT : CQL_TYPE_INT);
        size_t len = strlen(arg->fn.name) + strlen((*col)->name) + 3;
        *name = malloc(len);
        if (*name == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
        snprintf(*name, len, "%s(%s)", arg->fn.name, (*col)->name);
        return 0;
    }
    if (cql_fnsel_resolve(c, t, arg, fn, name) != 0) return -1;
    *type = fn->ret;
    return 0;
}
