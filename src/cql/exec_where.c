/* exec_where.c — a WHERE clause against a table's primary key: which partitions it names
 * (= and IN on every partition key column), which clustering prefix (= and IN on the
 * leading clustering columns) and slice (a range on the next column, or a multi-column
 * range), and what is left to filter row by row, with Cassandra's messages for what
 * needs ALLOW FILTERING or cannot run at all.
 *
 * It reads no row: exec_select.c and exec_write.c turn the keys into reads and writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cql/exec_int.h"
#include "cql/keyenc.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"

#define MAX_COMBINATIONS 10000

static void vlist_free(cql_vlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        buf_free(&l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* A key column's value is at most this long, as Cassandra's keys' lengths are unsigned
 * shorts. */
#define KEY_PART_MAX 65535

/* Appends the value of term e for col to l (null and unset refused in Cassandra's words
 * for a key column's = and IN). */
static int vlist_add(cql_run *r, const cql_tcol *col, const cql_expr *e, cql_vlist *l)
{
    buf *n = realloc(l->v, (l->n + 1) * sizeof *n);
    if (n == NULL) return cql_fail(r->call, CQL_ERR_SERVER, "out of memory");
    l->v = n;
    buf_init(&l->v[l->n], 0);
    int rc = cql_term(r, col->type, col->name, e, &l->v[l->n]);
    if (rc == CQLVAL_ERROR) {
        buf_free(&l->v[l->n]);
        return -1;
    }
    if (rc != CQLVAL_OK) {
        buf_free(&l->v[l->n]);
        return cql_fail(r->call, CQL_ERR_INVALID, "Invalid %s value %sfor column %s",
                        rc == CQLVAL_NULL ? "null" : "unset",
                        rc == CQLVAL_NULL ? "in condition " : "", col->name);
    }
    if (l->v[l->n].len > KEY_PART_MAX) {
        size_t len = l->v[l->n].len;
        buf_free(&l->v[l->n]);
        return cql_fail(r->call, CQL_ERR_INVALID, "Key length of %zu is longer than maximum of %d",
                        len, KEY_PART_MAX);
    }
    l->n++;
    return 0;
}

/* The values of an IN: listed terms (none for IN ()), or one bound list. */
static int vlist_in(cql_run *r, const cql_tcol *col, const cql_relation *rel, cql_vlist *l)
{
    if (rel->value == NULL) {
        for (size_t i = 0; i < rel->nvalues; i++)
            if (vlist_add(r, col, rel->values[i], l) != 0) return -1;
        return 0;
    }
    /* IN ?: a list of the column's type */
    cql_value v;
    if (cql_bound(r, rel->value, &v) != 1) return -1;
    if (v.len < 0)
        return cql_fail(r->call, CQL_ERR_INVALID, "Invalid %s value for column %s",
                        v.len == CQL_UNSET ? "unset" : "null", col->name);
    cql_elements e;
    uint32_t n;
    if (cql_collection_open(&e, v.p, (size_t)v.len, 0, &n) != 0)
        return cql_fail(r->call, CQL_ERR_INVALID, "Invalid list value for IN restriction on %s",
                        col->name);
    const uint8_t *p;
    int32_t len;
    int got;
    while ((got = cql_element_next(&e, &p, &len)) == 1) {
        buf *nv = realloc(l->v, (l->n + 1) * sizeof *nv);
        if (nv == NULL) return cql_fail(r->call, CQL_ERR_SERVER, "out of memory");
        l->v = nv;
        buf_init(&l->v[l->n], 0);
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (len < 0 || cqlval_validate(col->type, p, (size_t)len, &perr) != 0) {
            buf_free(&l->v[l->n]);
            return cql_fail(r->call, CQL_ERR_INVALID, "Invalid IN value for %s: %s", col->name,
                            len < 0 ? "null" : perr.msg);
        }
        if (len > KEY_PART_MAX) {
            buf_free(&l->v[l->n]);
            return cql_fail(r->call, CQL_ERR_INVALID,
                            "Key length of %d is longer than maximum of %d", (int)len,
                            KEY_PART_MAX);
        }
        buf_append(&l->v[l->n], p, (size_t)len);
        l->n++;
    }
    if (got < 0)
        return cql_fail(r->call, CQL_ERR_INVALID, "Invalid list value for IN restriction on %s",
                        col->name);
    return 0;
}

/* Appends v (taken: v is left empty) to l, as vlist_add appends a term's value. */
static int vlist_take(cql_run *r, buf *v, cql_vlist *l)
{
    if (v->len > KEY_PART_MAX)
        return cql_fail(r->call, CQL_ERR_INVALID, "Key length of %zu is longer than maximum of %d",
                        v->len, KEY_PART_MAX);
    buf *n = realloc(l->v, (l->n + 1) * sizeof *n);
    if (n == NULL) return cql_fail(r->call, CQL_ERR_SERVER, "out of memory");
    l->v = n;
    l->v[l->n++] = *v;
    buf_init(v, 0);
    return 0;
}

/* Refuses a tuple of the wrong length as Cassandra does, with the tuple as written. */
static int tuple_length_refused(cql_call *c, size_t want, const cql_expr *e)
{
    char *text = cql_print_expr(e);
    int rc = cql_fail(c, CQL_ERR_INVALID, "Expected %zu elements in value tuple, but got %zu: %s",
                      want, e && e->kind == CQL_E_TUPLE ? e->nitems : (size_t)1, text ? text : "?");
    free(text);
    return rc;
}

/* The fields of the serialised tuple p (len bytes) as the values of cols: CQLVAL_OK with
 * out[0..n) set, CQLVAL_NULL with *which the null field's column, or CQLVAL_ERROR with
 * the error set. */
static int tuple_fields(cql_run *r, const cql_tcol *const *cols, size_t n, const uint8_t *p,
                        size_t len, buf *out, size_t *which)
{
    cql_elements e;
    cql_fields_open(&e, p, len);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *v;
        int32_t vlen;
        if (cql_element_next(&e, &v, &vlen) != 1) {
            cql_fail(r->call, CQL_ERR_INVALID, "Invalid tuple value for %zu columns", n);
            return CQLVAL_ERROR;
        }
        if (vlen < 0) {
            *which = i;
            return CQLVAL_NULL;
        }
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (cqlval_validate(cols[i]->type, v, (size_t)vlen, &perr) != 0) {
            cql_fail(r->call, CQL_ERR_INVALID, "Invalid value for column %s: %s", cols[i]->name,
                     perr.msg);
            return CQLVAL_ERROR;
        }
        buf_append(&out[i], v, (size_t)vlen);
    }
    const uint8_t *v;
    int32_t vlen;
    if (cql_element_next(&e, &v, &vlen) != 0) {
        cql_fail(r->call, CQL_ERR_INVALID, "Invalid tuple value for %zu columns", n);
        return CQLVAL_ERROR;
    }
    return CQLVAL_OK;
}

/* The values term e gives the n columns of a multi-column relation: a tuple literal's
 * items, or the fields of the tuple a marker binds ((a, b) = ?). CQLVAL_OK with out[0..n)
 * set (each initialised by the caller), CQLVAL_NULL or CQLVAL_UNSET with *which the
 * column that has none (n for the whole tuple), or CQLVAL_ERROR with the error set. */
static int tuple_values(cql_run *r, const cql_tcol *const *cols, size_t n, const cql_expr *e,
                        buf *out, size_t *which)
{
    *which = n;
    if (e && e->kind == CQL_E_BIND) {
        cql_value v;
        if (cql_bound(r, e, &v) != 1) return CQLVAL_ERROR;
        if (v.len < 0) return v.len == CQL_UNSET ? CQLVAL_UNSET : CQLVAL_NULL;
        return tuple_fields(r, cols, n, v.p, (size_t)v.len, out, which);
    }
    if (e == NULL || e->kind != CQL_E_TUPLE || e->nitems != n) {
        tuple_length_refused(r->call, n, e);
        return CQLVAL_ERROR;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = cql_term(r, cols[i]->type, cols[i]->name, e->items[i], &out[i]);
        if (rc != CQLVAL_OK) {
            *which = i;
            return rc;
        }
    }
    return CQLVAL_OK;
}

/* The columns a multi-column relation names (checked by cql_where_keys), at most 64. */
static size_t tuple_cols(const cql_tinfo *t, const cql_relation *rel, const cql_tcol **cols)
{
    size_t n = rel->ncolumns < 64 ? rel->ncolumns : 64;
    for (size_t j = 0; j < n; j++)
        cols[j] = cql_tinfo_col(t, rel->columns[j]);
    return n;
}

static void bufs_free(buf *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_free(&b[i]);
}

/* A multi-column relation's values missing, refused in Cassandra's words: the column's
 * null (condition 0: (a, b) = ..., 1: a slice's, "in condition", 2: an IN's, "in condition
 * for columns: [a, b]"), or the unset value. Always -1. */
static int tuple_value_missing(cql_call *c, const cql_tcol *const *cols, size_t n, size_t which,
                               int rc, int condition)
{
    const char *name = which < n ? cols[which]->name : NULL;
    if (rc == CQLVAL_UNSET)
        return name ? cql_fail(c, CQL_ERR_INVALID, "Invalid unset value for column %s", name)
                    : cql_fail(c, CQL_ERR_INVALID, "Invalid unset value for tuple of %s",
                               cols[0]->name);
    if (name == NULL)
        return cql_fail(c, CQL_ERR_INVALID, "Invalid null value for tuple of %s", cols[0]->name);
    if (condition < 2)
        return cql_fail(c, CQL_ERR_INVALID, "Invalid null value %sfor column %s",
                        condition ? "in condition " : "", name);
    buf names;
    buf_init(&names, 0);
    for (size_t j = 0; j < n; j++)
        buf_printf(&names, "%s%s", j ? ", " : "[", cols[j]->name);
    buf_printf(&names, "]");
    cql_fail(c, CQL_ERR_INVALID, "Invalid null value in condition for columns: %.*s",
             (int)names.len, names.data ? names.data : "");
    buf_free(&names);
    return -1;
}

int cql_tuple_matches(cql_run *r, const cql_tinfo *t, const cql_relation *rel, const buf *vals,
                      const int8_t *has)
{
    const cql_tcol *cols[64];
    size_t n = tuple_cols(t, rel, cols);
    for (size_t j = 0; j < n; j++)
        if (cols[j] == NULL || !has[cols[j] - t->cols]) return 0; /* a partition's static row */
    const cql_expr *const *terms = rel->op == CQL_OP_IN && rel->values
                                       ? (const cql_expr *const *)rel->values
                                       : (const cql_expr *const *)&rel->value;
    size_t nterms = rel->op == CQL_OP_IN && rel->values ? rel->nvalues : 1;
    buf want[64];
    for (size_t v = 0; v < nterms; v++) {
        for (size_t j = 0; j < n; j++)
            buf_init(&want[j], 0);
        size_t which;
        int rc = tuple_values(r, cols, n, terms[v], want, &which);
        if (rc != CQLVAL_OK) {
            bufs_free(want, n);
            if (rc == CQLVAL_ERROR) return -1;
            return tuple_value_missing(r->call, cols, n, which, rc, rel->op != CQL_OP_EQ);
        }
        int cmp = 0;
        for (size_t j = 0; j < n && cmp == 0; j++) {
            const buf *got = &vals[cols[j] - t->cols];
            cmp = cqlval_compare(cols[j]->type, (const uint8_t *)got->data, got->len,
                                 (const uint8_t *)want[j].data, want[j].len);
        }
        bufs_free(want, n);
        if (cql_compare_op(rel->op == CQL_OP_IN ? CQL_OP_EQ : rel->op, cmp)) return 1;
    }
    return 0;
}

void cql_keys_free(cql_keys *k)
{
    for (size_t i = 0; i < k->npk_cols; i++)
        vlist_free(&k->pk[i]);
    for (size_t i = 0; i < k->nck_cols; i++)
        vlist_free(&k->ck[i]);
    free(k->pk);
    free(k->ck);
    vlist_free(&k->lo);
    vlist_free(&k->hi);
    vlist_free(&k->tin);
    cqlkey_ranges_free(&k->ranges);
    free(k->filters);
    memset(k, 0, sizeof *k);
}

static int add_filter(cql_keys *k, const cql_relation *rel)
{
    const cql_relation **n = realloc(k->filters, (k->nfilters + 1) * sizeof *n);
    if (n == NULL) return -1;
    k->filters = n;
    k->filters[k->nfilters++] = rel;
    return 0;
}

/* A filter's term for receiver (named as Cassandra names it) checked: 0 when it has a
 * value of the receiver's type, else -1 with Cassandra's error ("Unsupported null map key
 * for column m" when what is "map key"). */
static int filter_term_given(cql_run *r, const struct cql_ctype *type, const char *receiver,
                             const cql_expr *e, const char *what, const char *column)
{
    buf v;
    buf_init(&v, 0);
    int rc = cql_term(r, type, receiver, e, &v);
    buf_free(&v);
    if (rc == CQLVAL_ERROR) return -1;
    if (rc == CQLVAL_OK) return 0;
    return cql_fail(r->call, CQL_ERR_INVALID, "Unsupported %s %s for column %s",
                    rc == CQLVAL_NULL ? "null" : "unset", what, column);
}

/* Whether every comparison a filter makes has a value: a null or unset one, or one of
 * another type, is refused before any row is read, as Cassandra refuses it (a counter's
 * null in its own words, which cql_term gives). 0, or -1 with the error set. */
static int filter_values_given(cql_run *r, const cql_tinfo *t, const cql_keys *k)
{
    for (size_t f = 0; f < k->nfilters; f++) {
        const cql_relation *rel = k->filters[f];
        const cql_tcol *col = cql_tinfo_col(t, rel->columns[0]);
        if (col && col->type && rel->value && rel->kind == CQL_REL_COLUMN &&
            (rel->op == CQL_OP_CONTAINS || rel->op == CQL_OP_CONTAINS_KEY) &&
            col->type->wire.n >= 1) {
            /* the element (or key) a collection holds */
            int map = col->type->wire.id == CQL_TYPE_MAP;
            const cql_ctype *et = rel->op == CQL_OP_CONTAINS && map && col->type->wire.n >= 2
                                      ? col->type->args[1]
                                      : col->type->args[0];
            if (filter_term_given(r, et, col->name, rel->value, "value", col->name) != 0) return -1;
            continue;
        }
        if (col == NULL || col->type == NULL || rel->op > CQL_OP_NEQ || rel->value == NULL)
            continue;
        if (rel->kind == CQL_REL_COLUMN) {
            if (filter_term_given(r, col->type, col->name, rel->value, "value", col->name) != 0)
                return -1;
            continue;
        }
        /* m[key] = value on a map */
        if (rel->kind != CQL_REL_ELEMENT || col->type->wire.id != CQL_TYPE_MAP ||
            col->type->wire.n < 2 || rel->key == NULL)
            continue;
        char receiver[CQL_NAME_MAX + 8];
        snprintf(receiver, sizeof receiver, "key(%s)", col->name);
        if (filter_term_given(r, col->type->args[0], receiver, rel->key, "map key", col->name))
            return -1;
        snprintf(receiver, sizeof receiver, "value(%s)", col->name);
        if (filter_term_given(r, col->type->args[1], receiver, rel->value, "map value", col->name))
            return -1;
    }
    return 0;
}

static const char *FILTERING =
    "Cannot execute this query as it might involve data filtering and thus may have "
    "unpredictable performance. If you want to execute this query despite the performance "
    "unpredictability, use ALLOW FILTERING";

const char *cql_filtering_message(void)
{
    return FILTERING;
}

/* Records one side of a slice: op (in value order) on the columns from the prefix on,
 * compared with value (a tuple for a multi-column relation) as Cassandra compares
 * tuples. */
static int set_slice(cql_run *r, cql_keys *k, const cql_tcol *const *cols, size_t n, cql_op op,
                     const cql_expr *value, int tuple)
{
    int lower = op == CQL_OP_GT || op == CQL_OP_GTE;
    if (lower ? k->has_lo : k->has_hi)
        return cql_fail(r->call, CQL_ERR_INVALID,
                        "More than one restriction was found for the %s bound on %s",
                        lower ? "start" : "end", cols[0]->name);
    cql_vlist *l = lower ? &k->lo : &k->hi;
    buf vals[64];
    for (size_t i = 0; i < n; i++)
        buf_init(&vals[i], 0);
    size_t which = 0;
    int rc = tuple ? tuple_values(r, cols, n, value, vals, &which)
                   : cql_term(r, cols[0]->type, cols[0]->name, value, &vals[0]);
    if (rc != CQLVAL_OK) {
        bufs_free(vals, n);
        if (rc == CQLVAL_ERROR) return -1;
        return tuple_value_missing(r->call, cols, n, which, rc, 1);
    }
    for (size_t i = 0; i < n; i++) {
        buf *nv = realloc(l->v, (l->n + 1) * sizeof *nv);
        if (nv == NULL) {
            bufs_free(vals, n);
            return cql_fail(r->call, CQL_ERR_SERVER, "out of memory");
        }
        l->v = nv;
        l->v[l->n++] = vals[i];
        buf_init(&vals[i], 0);
    }
    int incl = op == CQL_OP_GTE || op == CQL_OP_LTE;
    if (lower) {
        k->has_lo = 1;
        k->lo_incl = incl;
    } else {
        k->has_hi = 1;
        k->hi_incl = incl;
    }
    k->slice = 1;
    return 0;
}

/* The slice's bounds over the clustering columns from position from on, as ranges of the
 * bytes of $ck that follow the prefix. */
static int slice_ranges(cql_run *r, const cql_tinfo *t, size_t from, cql_keys *k)
{
    cqlkey_col cols[64];
    cql_value lo[64], hi[64];
    size_t n = 0;
    for (size_t pos = from; pos < t->nck && n < 64; pos++)
        for (size_t j = 0; j < t->ncols; j++)
            if (t->cols[j].kind == 'c' && t->cols[j].pos == (int)pos)
                cols[n++] = (cqlkey_col){.type = t->cols[j].type, .desc = t->cols[j].desc};
    for (size_t i = 0; i < k->lo.n && i < 64; i++)
        lo[i] = (cql_value){.p = (const uint8_t *)k->lo.v[i].data, .len = (int32_t)k->lo.v[i].len};
    for (size_t i = 0; i < k->hi.n && i < 64; i++)
        hi[i] = (cql_value){.p = (const uint8_t *)k->hi.v[i].data, .len = (int32_t)k->hi.v[i].len};
    cqlkey_bound lb = {.values = lo, .n = k->lo.n, .inclusive = k->lo_incl};
    cqlkey_bound ub = {.values = hi, .n = k->hi.n, .inclusive = k->hi_incl};
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    if (cqlkey_ranges_for(cols, n, NULL, 0, k->has_lo ? &lb : NULL, k->has_hi ? &ub : NULL,
                          &k->ranges, &perr) != 0)
        return cql_fail(r->call, perr.code ? (cql_error_code)perr.code : CQL_ERR_INVALID, "%s",
                        perr.msg);
    return 0;
}

static const char *joined(const cql_tinfo *t, char kind, const int *restricted, char *out,
                          size_t cap)
{
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < t->ncols; i++) {
        const cql_tcol *c = &t->cols[i];
        if (c->kind != kind || restricted[c->pos]) continue;
        used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s", used ? ", " : "",
                                 c->name);
    }
    return out;
}

/* Appends the tuple of e (a literal or a marker's tuple) to l, a value per column; a
 * null is refused as Cassandra refuses it in an IN. */
static int tuple_in_add(cql_run *r, const cql_tcol *const *cols, size_t n, const cql_expr *e,
                        cql_vlist *l)
{
    buf vals[64];
    for (size_t j = 0; j < n; j++)
        buf_init(&vals[j], 0);
    size_t which;
    int rc = tuple_values(r, cols, n, e, vals, &which);
    if (rc != CQLVAL_OK) {
        bufs_free(vals, n);
        return rc == CQLVAL_ERROR ? -1 : tuple_value_missing(r->call, cols, n, which, rc, 2);
    }
    for (size_t j = 0; j < n; j++)
        if (vlist_take(r, &vals[j], l) != 0) {
            bufs_free(vals, n);
            return -1;
        }
    return 0;
}

/* (c1, c2) IN ((1, 2), (3, 4)), IN (?, ?) or IN ?: consecutive clustering columns, each
 * restricted by nothing else, whose tuples become k's tin (one column's, its list of
 * values). 0, or -1 with the error set. */
static int tuple_in(cql_run *r, const cql_tinfo *t, const cql_relation *rel, cql_keys *k,
                    int *ck_eq)
{
    cql_call *c = r->call;
    const cql_tcol *cols[64];
    if (rel->ncolumns > 64) return cql_fail(c, CQL_ERR_INVALID, "Too many columns in a tuple");
    size_t n = tuple_cols(t, rel, cols);
    for (size_t j = 0; j < n; j++)
        if (ck_eq[cols[j]->pos] || (k->tin_n && n > 1))
            return cql_fail(c, CQL_ERR_INVALID,
                            "%s cannot be restricted by more than one relation if it includes a "
                            "IN",
                            cols[j]->name);
    /* the columns follow the clustering order (cql_where_keys checked it) */
    cql_vlist *l = n == 1 ? &k->ck[cols[0]->pos] : &k->tin;
    if (rel->values == NULL && rel->value) { /* IN ?: a list of tuples */
        cql_value v;
        if (cql_bound(r, rel->value, &v) != 1) return -1;
        if (v.len < 0)
            return cql_fail(c, CQL_ERR_INVALID, "Invalid %s value for IN restriction",
                            v.len == CQL_UNSET ? "unset" : "null");
        cql_elements e;
        uint32_t count;
        const uint8_t *p;
        int32_t len;
        int got = cql_collection_open(&e, v.p, (size_t)v.len, 0, &count);
        while (got == 0 && (got = cql_element_next(&e, &p, &len)) == 1) {
            buf vals[64];
            for (size_t j = 0; j < n; j++)
                buf_init(&vals[j], 0);
            size_t which = n;
            int rc = len < 0 ? CQLVAL_NULL : tuple_fields(r, cols, n, p, (size_t)len, vals, &which);
            for (size_t j = 0; rc == CQLVAL_OK && j < n; j++)
                if (vlist_take(r, &vals[j], l) != 0) rc = CQLVAL_ERROR;
            bufs_free(vals, n);
            if (rc == CQLVAL_ERROR) return -1;
            if (rc != CQLVAL_OK) return tuple_value_missing(c, cols, n, which, rc, 2);
            got = 0;
        }
        if (got < 0)
            return cql_fail(c, CQL_ERR_INVALID, "Invalid list value for IN restriction on %s",
                            cols[0]->name);
    } else {
        for (size_t i = 0; i < rel->nvalues; i++)
            if (tuple_in_add(r, cols, n, rel->values[i], l) != 0) return -1;
    }
    if (n > 1) {
        k->tin_at = (size_t)cols[0]->pos;
        k->tin_n = n;
    }
    for (size_t j = 0; j < n; j++)
        ck_eq[cols[j]->pos] = 1;
    return 0;
}

/* token(a, b) on the left of a relation: the partition key columns, each once, in their
 * order, refused in Cassandra's words (checked in its order). 0, or -1 with the error. */
static int token_columns_refused(cql_call *c, const cql_tinfo *t, const cql_relation *rel)
{
    int others = 0, order = rel->ncolumns == t->npk;
    for (size_t j = 0; j < rel->ncolumns; j++) {
        const cql_tcol *col = cql_tinfo_col(t, rel->columns[j]);
        if (col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            rel->columns[j], t->ks, t->name);
        for (size_t d = 0; d < j; d++)
            if (cql_tinfo_col(t, rel->columns[d]) == col)
                return cql_fail(c, CQL_ERR_INVALID,
                                "The token() function contains duplicate partition key "
                                "components");
        others |= col->kind != 'p';
        order &= col->kind == 'p' && col->pos == (int)j;
    }
    if (rel->ncolumns != t->npk)
        return cql_fail(c, CQL_ERR_INVALID,
                        "The token() function must be applied to all partition key components "
                        "or none of them");
    if (others)
        return cql_fail(c, CQL_ERR_INVALID,
                        "The token() function must contains only partition key components");
    if (order) return 0;
    buf names;
    buf_init(&names, 0);
    for (int pos = 0; pos < (int)t->npk; pos++)
        for (size_t i = 0; i < t->ncols; i++)
            if (t->cols[i].kind == 'p' && t->cols[i].pos == pos)
                buf_printf(&names, "%s%s", pos ? ", " : "", t->cols[i].name);
    int rc = cql_fail(c, CQL_ERR_INVALID,
                      "The token function arguments must be in the partition key order: %s",
                      names.data ? names.data : "");
    buf_free(&names);
    return rc;
}

int cql_token_call(const cql_expr *e, size_t npk)
{
    return e && e->kind == CQL_E_FUNCTION && e->nitems == npk &&
           (e->fn.ks == NULL || strcmp(e->fn.ks, "system") == 0) &&
           strcasecmp(e->fn.name, "token") == 0;
}

/* token(v1, ...) on the right of a token restriction: the token of the partition key of
 * those values (each typed as its key column). A CQLVAL_* code. */
static int token_of(cql_run *r, const cql_tinfo *t, const cql_expr *e, int64_t *tok)
{
    buf vals[64];
    cql_value v[64];
    size_t n = t->npk < 64 ? t->npk : 64, done = 0;
    int rc = CQLVAL_OK;
    for (; done < n && rc == CQLVAL_OK; done++) {
        const cql_tcol *col = NULL;
        for (size_t j = 0; j < t->ncols; j++)
            if (t->cols[j].kind == 'p' && t->cols[j].pos == (int)done) col = &t->cols[j];
        buf_init(&vals[done], 0);
        rc = col ? cql_term(r, col->type, col->name, e->items[done], &vals[done]) : CQLVAL_ERROR;
        v[done].p = (const uint8_t *)vals[done].data;
        v[done].len = (int32_t)vals[done].len;
    }
    if (rc == CQLVAL_OK) {
        buf key;
        buf_init(&key, 0);
        if (cql_pk_serialize(r->call, t, v, &key) != 0)
            rc = -1;
        else
            *tok = cqlkey_token((const uint8_t *)(key.data ? key.data : ""), key.len);
        buf_free(&key);
    }
    for (size_t i = 0; i < done; i++)
        buf_free(&vals[i]);
    return rc;
}

/* A multi-column relation whose columns are not the clustering columns in their order
 * (or name one twice, when twice is set): refused with the relation as written, as
 * Cassandra refuses it. */
static int out_of_order(cql_call *c, const cql_relation *rel, const char *twice)
{
    static const char *const ops[] = {
        [CQL_OP_EQ] = "=",   [CQL_OP_LT] = "<",   [CQL_OP_LTE] = "<=", [CQL_OP_GT] = ">",
        [CQL_OP_GTE] = ">=", [CQL_OP_NEQ] = "!=", [CQL_OP_IN] = "IN"};
    buf text;
    buf_init(&text, 0);
    buf_printf(&text, "(");
    for (size_t j = 0; j < rel->ncolumns; j++)
        buf_printf(&text, "%s%s", j ? ", " : "", rel->columns[j]);
    const char *op =
        (size_t)rel->op < sizeof ops / sizeof *ops && ops[rel->op] ? ops[rel->op] : "?";
    buf_printf(&text, ") %s ", op);
    for (size_t v = 0; rel->values && v < rel->nvalues; v++) {
        char *one = cql_print_expr(rel->values[v]);
        buf_printf(&text, "%s%s%s", v ? ", " : "(", one ? one : "?",
                   v + 1 == rel->nvalues ? ")" : "");
        free(one);
    }
    char *value = rel->values ? NULL : rel->value ? cql_print_expr(rel->value) : NULL;
    if (!rel->values) buf_printf(&text, "%s", value ? value : "?");
    free(value);
    int rc = twice ? cql_fail(c, CQL_ERR_INVALID, "Column \"%s\" appeared twice in a relation: %s",
                              twice, text.data ? text.data : "")
                   : cql_fail(c, CQL_ERR_INVALID,
                              "Clustering columns must appear in the PRIMARY KEY order in "
                              "multi-column relations: %s",
                              text.data ? text.data : "");
    buf_free(&text);
    return rc;
}

/* A WHERE clause's != relation, which Cassandra 4 has no restriction for: refused, in its
 * words, with the relation as written (token(k) != 0, (a, b) != (1, 2), m['x'] != 1). */
static int unsupported_neq(cql_call *c, const cql_relation *rel)
{
    buf lhs;
    buf_init(&lhs, 0);
    int tuple = rel->kind == CQL_REL_TOKEN || rel->kind == CQL_REL_TUPLE;
    buf_printf(&lhs, "%s", rel->kind == CQL_REL_TOKEN ? "token(" : tuple ? "(" : "");
    for (size_t j = 0; j < rel->ncolumns; j++)
        buf_printf(&lhs, "%s%s", j ? ", " : "", rel->columns[j]);
    if (tuple) buf_printf(&lhs, ")");
    char *key = rel->kind == CQL_REL_ELEMENT && rel->key ? cql_print_expr(rel->key) : NULL;
    if (key) buf_printf(&lhs, "[%s]", key);
    char *v = rel->value ? cql_print_expr(rel->value) : NULL;
    int rc = cql_fail(c, CQL_ERR_INVALID, "Unsupported \"!=\" relation: %s != %s",
                      lhs.data ? lhs.data : "", v ? v : "?");
    free(key);
    free(v);
    buf_free(&lhs);
    return rc;
}

/* 1 when type is a duration or holds one (in a collection, tuple or UDT, at any depth). */
static int has_duration(const cql_ctype *type)
{
    if (type->wire.id == CQL_TYPE_DURATION) return 1;
    for (uint16_t i = 0; type->args && i < type->wire.n; i++)
        if (type->args[i] && has_duration(type->args[i])) return 1;
    return 0;
}

/* The relations a SELECT refuses whatever the rest of its WHERE clause, as Cassandra does:
 * IS NOT NULL (a view's definition only), a slice of a duration (durations do not order),
 * and the comparisons of a whole non-frozen collection. 0, or -1 with the error set. */
static int refused_relation(cql_call *c, const cql_relation *rel, const cql_tcol *col)
{
    if (rel->op == CQL_OP_IS_NOT_NULL)
        return cql_fail(c, CQL_ERR_INVALID, "Unsupported restriction: %s IS NOT NULL", col->name);
    /* c[k] = v: only the entries of a map that is not frozen, in Cassandra's order */
    if (rel->kind == CQL_REL_ELEMENT && rel->op == CQL_OP_EQ && col->type) {
        int id = col->type->wire.id;
        if (id == CQL_TYPE_LIST)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Indexes on list entries (%s[index] = value) are not supported.",
                            col->name);
        if (id != CQL_TYPE_MAP)
            return cql_fail(c, CQL_ERR_INVALID, "Column %s cannot be used as a map", col->name);
        if (col->type->frozen)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Map-entry equality predicates on frozen map column %s are not "
                            "supported",
                            col->name);
    }
    int slice = rel->op == CQL_OP_LT || rel->op == CQL_OP_LTE || rel->op == CQL_OP_GT ||
                rel->op == CQL_OP_GTE;
    if (slice && rel->kind == CQL_REL_COLUMN && col->type && has_duration(col->type)) {
        int id = col->type->wire.id;
        return cql_fail(c, CQL_ERR_INVALID, "Slice restrictions are not supported on %s",
                        id == CQL_TYPE_LIST || id == CQL_TYPE_SET || id == CQL_TYPE_MAP
                            ? "collections containing durations"
                        : id == CQL_TYPE_TUPLE ? "tuples containing durations"
                        : id == CQL_TYPE_UDT   ? "UDTs containing durations"
                                               : "duration columns");
    }
    if (rel->kind != CQL_REL_COLUMN || col->type == NULL || col->type->frozen) return 0;
    int id = col->type->wire.id;
    if (id == CQL_TYPE_UDT && rel->op != CQL_OP_NEQ && rel->op != CQL_OP_CONTAINS &&
        rel->op != CQL_OP_CONTAINS_KEY)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Non-frozen UDT column '%s' (%s) cannot be restricted by any relation",
                        col->name, col->type->wire.name ? col->type->wire.name : "?");
    if (id != CQL_TYPE_LIST && id != CQL_TYPE_SET && id != CQL_TYPE_MAP) return 0;
    static const char *const ops[] = {[CQL_OP_EQ] = "=", [CQL_OP_LT] = "<",   [CQL_OP_LTE] = "<=",
                                      [CQL_OP_GT] = ">", [CQL_OP_GTE] = ">=", [CQL_OP_IN] = "IN"};
    if (rel->op == CQL_OP_NEQ) {
        char *v = rel->value ? cql_print_expr(rel->value) : NULL;
        int rc = cql_fail(c, CQL_ERR_INVALID, "Unsupported \"!=\" relation: %s != %s", col->name,
                          v ? v : "?");
        free(v);
        return rc;
    }
    if ((size_t)rel->op >= sizeof ops / sizeof *ops || ops[rel->op] == NULL) return 0;
    buf name;
    buf_init(&name, 0);
    cqltype_name(col->type, &name);
    int rc = cql_fail(c, CQL_ERR_INVALID,
                      "Collection column '%s' (%.*s) cannot be restricted by a '%s' relation",
                      col->name, (int)name.len, name.data ? name.data : "", ops[rel->op]);
    buf_free(&name);
    return rc;
}

/* 1 when rel is an IN of one listed value, which Cassandra takes for an = (IN ? and
 * IN () name any number). */
static int one_value_in(const cql_relation *rel)
{
    return rel->op == CQL_OP_IN && rel->values && rel->nvalues == 1;
}

/* 1 when a relation of w is an = an index of t serves (the index Cassandra would read,
 * which spares the clustering columns' gaps their refusals: the query filters instead). */
static int any_index_serves(const cql_tinfo *t, const cql_where *w)
{
    for (size_t i = 0; i < w->n; i++) {
        const cql_relation *rel = &w->rels[i];
        const cql_tcol *col =
            rel->kind == CQL_REL_COLUMN ? cql_tinfo_col(t, rel->columns[0]) : NULL;
        if (col && col->index && (rel->op == CQL_OP_EQ || one_value_in(rel))) return 1;
        if (cql_index_serving(t, rel)) return 1;
    }
    return 0;
}

/* 1 when a relation of w before the i-th restricts col by IN (alone or in a tuple): the
 * restriction a later one on col merges with, which names it in Cassandra's message. */
static int in_first(const cql_tinfo *t, const cql_where *w, size_t i, const cql_tcol *col)
{
    for (size_t j = 0; j < i && j < w->n; j++) {
        const cql_relation *rel = &w->rels[j];
        if (rel->op != CQL_OP_IN || (rel->kind != CQL_REL_COLUMN && rel->kind != CQL_REL_TUPLE))
            continue;
        for (size_t c = 0; c < rel->ncolumns; c++)
            if (cql_tinfo_col(t, rel->columns[c]) == col) return 1;
    }
    return 0;
}

/* 1 when one of the slices so far (of one column or a tuple) restricts col. */
static int tuple_sliced(const cql_tinfo *t, const cql_relation *const *slices, size_t n,
                        const cql_tcol *col)
{
    for (size_t j = 0; j < n; j++)
        for (size_t c = 0; c < slices[j]->ncolumns; c++)
            if (cql_tinfo_col(t, slices[j]->columns[c]) == col) return 1;
    return 0;
}

/* A new slice rel against the slices so far: Cassandra merges slices that share a column
 * into one, which must start at one column, and (without ALLOW FILTERING) refuses one
 * past a sliced column. 0, or -1 with its refusal set. */
static int slice_merges(cql_call *c, const cql_tinfo *t, const cql_relation *const *slices,
                        size_t n, const cql_relation *rel, int allow_filtering)
{
    const cql_tcol *first = cql_tinfo_col(t, rel->columns[0]);
    for (size_t j = 0; j < n; j++) {
        int shared = 0;
        for (size_t a = 0; a < rel->ncolumns && !shared; a++)
            shared = tuple_sliced(t, &slices[j], 1, cql_tinfo_col(t, rel->columns[a]));
        const cql_tcol *other = cql_tinfo_col(t, slices[j]->columns[0]);
        if (!shared && !allow_filtering && other->pos < first->pos)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Clustering column \"%s\" cannot be restricted (preceding column "
                            "\"%s\" is restricted by a non-EQ relation)",
                            first->name, other->name);
        if (!shared || other == first) continue;
        return cql_fail(c, CQL_ERR_INVALID,
                        "Column \"%s\" cannot be restricted by two inequalities not starting "
                        "with the same column",
                        (other->pos > first->pos ? other : first)->name);
    }
    return 0;
}

/* 1 when w restricts clustering column pos of t by an = (not IN) that an index of the
 * column serves. */
static int indexed_eq(const cql_tinfo *t, const cql_where *w, size_t pos)
{
    for (size_t i = 0; i < w->n; i++) {
        const cql_relation *rel = &w->rels[i];
        const cql_tcol *col =
            rel->kind == CQL_REL_COLUMN ? cql_tinfo_col(t, rel->columns[0]) : NULL;
        if (col && col->kind == 'c' && col->pos == (int)pos && rel->op == CQL_OP_EQ &&
            (col->index || cql_index_serving(t, rel)))
            return 1;
    }
    return 0;
}

int cql_where_keys(cql_run *r, const cql_tinfo *t, const cql_where *w, int mode,
                   int allow_filtering, cql_keys *k)
{
    cql_call *c = r->call;
    memset(k, 0, sizeof *k);
    k->npk_cols = t->npk;
    k->nck_cols = t->nck;
    k->pk = calloc(t->npk + 1, sizeof *k->pk);
    k->ck = calloc(t->nck + 1, sizeof *k->ck);
    int pk_set[64] = {0}, ck_eq[64] = {0};
    if (k->pk == NULL || k->ck == NULL || t->npk > 64 || t->nck > 64)
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    char names[512];
    /* the slices: one relation at most per bound, on one column (or tuple) */
    const cql_relation *slices[64] = {0};
    size_t nslices = 0;
    for (size_t i = 0; i < w->n; i++) {
        const cql_relation *rel = &w->rels[i];
        if (rel->op == CQL_OP_NEQ) return unsupported_neq(c, rel);
        if (rel->op == CQL_OP_LIKE) { /* a SASI index's, which quarry has not */
            char *v = rel->value ? cql_print_expr(rel->value) : NULL;
            int rc = cql_fail(c, CQL_ERR_INVALID,
                              "LIKE restriction is only supported on properly indexed columns. "
                              "%s LIKE %s is not valid.",
                              rel->ncolumns ? rel->columns[0] : "?", v ? v : "?");
            free(v);
            return rc;
        }
        if (rel->kind == CQL_REL_TOKEN) {
            if (mode != CQL_KEYS_SELECT)
                return cql_fail(c, CQL_ERR_INVALID,
                                "The token function cannot be used in WHERE clauses for %s "
                                "statements",
                                mode == CQL_KEYS_DELETE ? "DELETE" : "UPDATE");
            if (token_columns_refused(c, t, rel) != 0) return -1;
            buf v;
            buf_init(&v, 0);
            int64_t tok = 0;
            int rc;
            if (cql_token_call(rel->value, t->npk)) {
                rc = token_of(r, t, rel->value, &tok);
            } else {
                rc = cql_term(r, cqltype_native(CQL_TYPE_BIGINT), "partition key token", rel->value,
                              &v);
                if (rc == CQLVAL_OK && v.len == 8)
                    cql_bigint_decode((const uint8_t *)v.data, 8, &tok);
            }
            buf_free(&v);
            if (rc != CQLVAL_OK) {
                if (rc == CQLVAL_NULL)
                    cql_fail(c, CQL_ERR_INVALID, "Invalid null token value");
                else if (rc == CQLVAL_UNSET)
                    cql_fail(c, CQL_ERR_INVALID, "%s",
                             cql_token_call(rel->value, t->npk)
                                 ? "Invalid unset value for argument in call to function token"
                                 : "Invalid unset token value");
                return -1;
            }
            if (!k->token) {
                k->token = 1;
                k->token_lo = INT64_MIN;
                k->token_hi = INT64_MAX;
            }
            switch (rel->op) {
            case CQL_OP_EQ:
                if (tok > k->token_lo) k->token_lo = tok;
                if (tok < k->token_hi) k->token_hi = tok;
                break;
            case CQL_OP_GT:
                if (tok == INT64_MAX)
                    k->token_lo = INT64_MAX, k->token_hi = INT64_MIN;
                else if (tok + 1 > k->token_lo)
                    k->token_lo = tok + 1;
                break;
            case CQL_OP_GTE:
                if (tok > k->token_lo) k->token_lo = tok;
                break;
            case CQL_OP_LT:
                if (tok == INT64_MIN)
                    k->token_lo = INT64_MAX, k->token_hi = INT64_MIN;
                else if (tok - 1 < k->token_hi)
                    k->token_hi = tok - 1;
                break;
            case CQL_OP_LTE:
                if (tok < k->token_hi) k->token_hi = tok;
                break;
            default:
                return cql_fail(c, CQL_ERR_INVALID,
                                "Unsupported operator on the partition key token");
            }
            continue;
        }
        if (rel->kind == CQL_REL_TUPLE) {
            for (size_t j = 0; j < rel->ncolumns; j++) {
                const cql_tcol *col = cql_tinfo_col(t, rel->columns[j]);
                if (col == NULL)
                    return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                                    rel->columns[j], t->ks, t->name);
                if (col->kind != 'c')
                    return cql_fail(c, CQL_ERR_INVALID,
                                    "Multi-column relations can only be applied to clustering "
                                    "columns but was applied to: %s",
                                    col->name);
                const cql_tcol *first = cql_tinfo_col(t, rel->columns[0]);
                for (size_t d = 0; d < j; d++)
                    if (strcmp(rel->columns[d], rel->columns[j]) == 0)
                        return out_of_order(c, rel, col->name);
                if (j > 0 && col->pos != first->pos + (int)j) return out_of_order(c, rel, NULL);
            }
            if (rel->op == CQL_OP_EQ) {
                const cql_tcol *cols[64];
                size_t n = tuple_cols(t, rel, cols);
                for (size_t j = 0; j < n; j++) {
                    if (ck_eq[cols[j]->pos])
                        return cql_fail(c, CQL_ERR_INVALID,
                                        "%s cannot be restricted by more than one relation if it "
                                        "includes %s",
                                        cols[j]->name,
                                        in_first(t, w, i, cols[j]) ? "a IN" : "an Equal");
                    if (tuple_sliced(t, slices, nslices, cols[j]))
                        return cql_fail(c, CQL_ERR_INVALID,
                                        "Column \"%s\" cannot be restricted by both an equality "
                                        "and an inequality relation",
                                        cols[j]->name);
                }
                buf vals[64];
                for (size_t j = 0; j < n; j++)
                    buf_init(&vals[j], 0);
                size_t which;
                int rc = tuple_values(r, cols, n, rel->value, vals, &which);
                if (rc != CQLVAL_OK) {
                    bufs_free(vals, n);
                    return rc == CQLVAL_ERROR ? -1 : tuple_value_missing(c, cols, n, which, rc, 0);
                }
                for (size_t j = 0; j < n; j++) {
                    if (vlist_take(r, &vals[j], &k->ck[cols[j]->pos]) != 0) {
                        bufs_free(vals, n);
                        return -1;
                    }
                    ck_eq[cols[j]->pos] = 1;
                }
                continue;
            }
            if (rel->op == CQL_OP_IN) {
                if (tuple_in(r, t, rel, k, ck_eq) != 0) return -1;
                continue;
            }
            for (size_t j = 0; j < rel->ncolumns; j++) {
                const cql_tcol *col = cql_tinfo_col(t, rel->columns[j]);
                if (ck_eq[col->pos])
                    return cql_fail(c, CQL_ERR_INVALID,
                                    "%s cannot be restricted by more than one relation if it "
                                    "includes %s",
                                    col->name, in_first(t, w, i, col) ? "a IN" : "an Equal");
            }
            if (slice_merges(c, t, slices, nslices, rel, allow_filtering) != 0) return -1;
            if (nslices < 64) slices[nslices++] = rel;
            continue;
        }
        const cql_tcol *col = cql_tinfo_col(t, rel->columns[0]);
        if (col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            rel->columns[0], t->ks, t->name);
        if (rel->op == CQL_OP_CONTAINS || rel->op == CQL_OP_CONTAINS_KEY) {
            int id = col->type ? col->type->wire.id : 0;
            int key = rel->op == CQL_OP_CONTAINS_KEY;
            if (key ? id != CQL_TYPE_MAP
                    : id != CQL_TYPE_LIST && id != CQL_TYPE_SET && id != CQL_TYPE_MAP)
                return cql_fail(c, CQL_ERR_INVALID, "Cannot use %s on non-%s column %s",
                                key ? "CONTAINS KEY" : "CONTAINS", key ? "map" : "collection",
                                col->name);
            if (mode != CQL_KEYS_SELECT)
                return cql_fail(c, CQL_ERR_INVALID, "Cannot use %s relations in %s statements",
                                key ? "CONTAINS KEY" : "CONTAINS",
                                mode == CQL_KEYS_DELETE ? "DELETE" : "UPDATE");
            /* on a clustering column, past a sliced one: refused as a clustering
             * restriction (Cassandra merges it with the others) */
            for (size_t j = 0; j < nslices && col->kind == 'c' && !allow_filtering; j++) {
                const cql_tcol *sliced = cql_tinfo_col(t, slices[j]->columns[0]);
                if (sliced && sliced->kind == 'c' && sliced->pos < col->pos)
                    return cql_fail(c, CQL_ERR_INVALID,
                                    "Clustering column \"%s\" cannot be restricted (preceding "
                                    "column \"%s\" is restricted by a non-EQ relation)",
                                    col->name, sliced->name);
            }
        }
        if (rel->kind == CQL_REL_COLUMN && rel->op == CQL_OP_IN && !one_value_in(rel) &&
            (col->kind == 'r' || col->kind == 's'))
            return cql_fail(c, CQL_ERR_INVALID,
                            "IN predicates on non-primary-key columns (%s) is not yet supported",
                            col->name);
        if (mode == CQL_KEYS_SELECT && refused_relation(c, rel, col) != 0) return -1;
        int eq = rel->op == CQL_OP_EQ || rel->op == CQL_OP_IN;
        if (rel->kind == CQL_REL_COLUMN && col->kind == 'p' && eq) {
            if (pk_set[col->pos])
                return cql_fail(c, CQL_ERR_INVALID,
                                "%s cannot be restricted by more than one relation if it includes "
                                "%s",
                                col->name, in_first(t, w, i, col) ? "a IN" : "an Equal");
            int rc = rel->op == CQL_OP_IN ? vlist_in(r, col, rel, &k->pk[col->pos])
                                          : vlist_add(r, col, rel->value, &k->pk[col->pos]);
            if (rc) return -1;
            pk_set[col->pos] = 1;
            continue;
        }
        if (rel->kind == CQL_REL_COLUMN && col->kind == 'c' && eq) {
            if (ck_eq[col->pos])
                return cql_fail(c, CQL_ERR_INVALID,
                                "%s cannot be restricted by more than one relation if it includes "
                                "%s",
                                col->name, in_first(t, w, i, col) ? "a IN" : "an Equal");
            if (tuple_sliced(t, slices, nslices, col)) /* a slice of it came first */
                return cql_fail(c, CQL_ERR_INVALID,
                                "Column \"%s\" cannot be restricted by both an equality and an "
                                "inequality relation",
                                col->name);
            int rc = rel->op == CQL_OP_IN ? vlist_in(r, col, rel, &k->ck[col->pos])
                                          : vlist_add(r, col, rel->value, &k->ck[col->pos]);
            if (rc) return -1;
            ck_eq[col->pos] = 1;
            continue;
        }
        if (rel->kind == CQL_REL_COLUMN && col->kind == 'c' &&
            (rel->op == CQL_OP_LT || rel->op == CQL_OP_LTE || rel->op == CQL_OP_GT ||
             rel->op == CQL_OP_GTE)) {
            if (ck_eq[col->pos]) /* an = or IN of it came first */
                return cql_fail(c, CQL_ERR_INVALID,
                                "%s cannot be restricted by more than one relation if it includes "
                                "%s",
                                col->name, in_first(t, w, i, col) ? "a IN" : "an Equal");
            if (slice_merges(c, t, slices, nslices, rel, allow_filtering) != 0) return -1;
            if (nslices < 64) slices[nslices++] = rel;
            continue;
        }
        if (mode != CQL_KEYS_SELECT) {
            if (col->kind == 'r' || col->kind == 's')
                return cql_fail(c, CQL_ERR_INVALID,
                                "Non PRIMARY KEY columns found in where clause: %s", col->name);
            if (col->kind == 'p')
                return cql_fail(
                    c, CQL_ERR_INVALID,
                    "Only EQ and IN relation are supported on the partition key (unless "
                    "you use the token() function or allow filtering)");
        }
        if (add_filter(k, rel) != 0) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
        k->needs_filtering = 1;
        if (col->kind == 'p') pk_set[col->pos] = 2; /* restricted, but by a filter */
    }
    /* the partition */
    size_t npk_eq = 0, npk_any = 0;
    for (size_t i = 0; i < t->npk; i++) {
        npk_eq += pk_set[i] == 1;
        npk_any += pk_set[i] != 0;
    }
    k->partitions = npk_eq == t->npk;
    /* a token range beside the whole partition key (a = 1 AND token(a) > ...) filters the
     * partitions named; beside a part of it, it is refused */
    if (k->token && npk_any && !k->partitions)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Columns of the partition key cannot be restricted by both a normal "
                        "relation and a token relation");
    if (!k->partitions) {
        if (mode != CQL_KEYS_SELECT)
            return cql_fail(c, CQL_ERR_INVALID, "Some partition key parts are missing: %s",
                            joined(t, 'p', pk_set, names, sizeof names));
        /* the columns restricted by = move to the filters; an IN cannot, as Cassandra
         * filters none (after its refusal of filtering without ALLOW FILTERING) */
        for (size_t i = 0; i < w->n && !t->view; i++) {
            const cql_relation *rel = &w->rels[i];
            const cql_tcol *col =
                rel->kind == CQL_REL_COLUMN ? cql_tinfo_col(t, rel->columns[0]) : NULL;
            if (col == NULL || col->kind != 'p' || rel->op != CQL_OP_IN || one_value_in(rel))
                continue;
            if (!allow_filtering && !any_index_serves(t, w))
                return cql_fail(c, CQL_ERR_INVALID, "%s", FILTERING);
            return cql_fail(c, CQL_ERR_INVALID,
                            "IN restrictions are not supported when the query involves filtering");
        }
        for (size_t i = 0; i < w->n; i++) {
            const cql_relation *rel = &w->rels[i];
            const cql_tcol *col =
                rel->kind == CQL_REL_COLUMN ? cql_tinfo_col(t, rel->columns[0]) : NULL;
            if (col && col->kind == 'p' && (rel->op == CQL_OP_EQ || rel->op == CQL_OP_IN)) {
                if (add_filter(k, rel) != 0) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
                k->needs_filtering = 1;
            }
        }
        for (size_t i = 0; i < t->npk; i++)
            vlist_free(&k->pk[i]);
    }
    /* the clustering prefix */
    size_t prefix = 0;
    while (prefix < t->nck && ck_eq[prefix])
        prefix++;
    k->ck_eq = prefix;
    if (k->tin_n && k->tin_at + k->tin_n > prefix) {
        /* a multi-column IN past a gap: it cannot be read as prefixes, nor filtered */
        const cql_tcol *gap = NULL, *col = NULL;
        for (size_t j = 0; j < t->ncols; j++) {
            if (t->cols[j].kind == 'c' && t->cols[j].pos == (int)prefix) gap = &t->cols[j];
            if (t->cols[j].kind == 'c' && t->cols[j].pos == (int)k->tin_at) col = &t->cols[j];
        }
        if (gap && tuple_sliced(t, slices, nslices, gap))
            return cql_fail(c, CQL_ERR_INVALID,
                            "Clustering column \"%s\" cannot be restricted (preceding column "
                            "\"%s\" is restricted by a non-EQ relation)",
                            col ? col->name : "?", gap->name);
        return cql_fail(c, CQL_ERR_INVALID,
                        "PRIMARY KEY column \"%s\" cannot be restricted as preceding column "
                        "\"%s\" is not restricted",
                        col ? col->name : "?", gap ? gap->name : "?");
    }
    for (size_t i = prefix; i < t->nck; i++) {
        if (!ck_eq[i]) continue;
        /* an equality past a gap filters (SELECT with ALLOW FILTERING only, or with an index
         * on the column to read it) */
        const cql_tcol *gap = NULL, *col = NULL;
        for (size_t j = 0; j < t->ncols; j++) {
            if (t->cols[j].kind == 'c' && t->cols[j].pos == (int)prefix) gap = &t->cols[j];
            if (t->cols[j].kind == 'c' && t->cols[j].pos == (int)i) col = &t->cols[j];
        }
        /* past a sliced column, an index of its own does not spare it the refusal */
        int after_slice = gap && tuple_sliced(t, slices, nslices, gap);
        if (mode != CQL_KEYS_SELECT ||
            (!allow_filtering &&
             (after_slice || (!indexed_eq(t, w, i) && !any_index_serves(t, w))))) {
            if (mode == CQL_KEYS_UPDATE || mode == CQL_KEYS_INSERT)
                return cql_fail(c, CQL_ERR_INVALID, "Some clustering keys are missing: %s",
                                gap ? gap->name : "?");
            if (after_slice)
                return cql_fail(c, CQL_ERR_INVALID,
                                "Clustering column \"%s\" cannot be restricted (preceding column "
                                "\"%s\" is restricted by a non-EQ relation)",
                                col ? col->name : "?", gap->name);
            return cql_fail(c, CQL_ERR_INVALID,
                            "PRIMARY KEY column \"%s\" cannot be restricted as preceding column "
                            "\"%s\" is not restricted",
                            col ? col->name : "?", gap ? gap->name : "?");
        }
    }
    if (prefix < t->nck)
        for (size_t i = prefix; i < t->nck; i++)
            if (ck_eq[i]) {
                /* keep those values as filters */
                for (size_t j = 0; j < w->n; j++) {
                    const cql_relation *rel = &w->rels[j];
                    const cql_tcol *col =
                        rel->kind == CQL_REL_COLUMN ? cql_tinfo_col(t, rel->columns[0]) : NULL;
                    if (col == NULL || col->kind != 'c' || col->pos != (int)i ||
                        (rel->op != CQL_OP_EQ && rel->op != CQL_OP_IN))
                        continue;
                    if (rel->op == CQL_OP_IN && !one_value_in(rel))
                        return cql_fail(c, CQL_ERR_INVALID,
                                        "IN restrictions are not supported on indexed columns");
                    add_filter(k, rel);
                }
                vlist_free(&k->ck[i]);
                k->needs_filtering = 1;
            }
    /* the slices */
    for (size_t s = 0; s < nslices; s++) {
        const cql_relation *rel = slices[s];
        const cql_tcol *cols[64] = {0};
        int tuple = rel->kind == CQL_REL_TUPLE;
        size_t n = tuple_cols(t, rel, cols);
        if (n == 0) continue;
        int in_order = (size_t)cols[0]->pos == prefix;
        for (size_t j = 1; j < n; j++)
            in_order &= cols[j]->pos == cols[0]->pos + (int)j;
        if (!in_order || !k->partitions) {
            if (mode == CQL_KEYS_UPDATE)
                return cql_fail(c, CQL_ERR_INVALID,
                                "Slice restrictions are not supported on the clustering columns "
                                "in UPDATE statements");
            /* a DELETE never filters: it deletes ranges of rows, and what is not one is
             * refused as Cassandra refuses it */
            if (!in_order &&
                (mode == CQL_KEYS_DELETE ||
                 (!allow_filtering && !(mode == CQL_KEYS_SELECT && any_index_serves(t, w)))) &&
                (size_t)cols[0]->pos > prefix) {
                const cql_tcol *gap = NULL;
                for (size_t j = 0; j < t->ncols; j++)
                    if (t->cols[j].kind == 'c' && t->cols[j].pos == (int)prefix) gap = &t->cols[j];
                /* the gap sliced before this slice, or after it (which Cassandra words
                 * from the later slice's side) */
                int gap_sliced = 0;
                for (size_t j = 0; j < nslices && gap; j++)
                    if (cql_tinfo_col(t, slices[j]->columns[0]) == gap) gap_sliced = j < s ? 1 : 2;
                if (!gap_sliced)
                    return cql_fail(c, CQL_ERR_INVALID,
                                    "PRIMARY KEY column \"%s\" cannot be restricted as preceding "
                                    "column \"%s\" is not restricted",
                                    cols[0]->name, gap ? gap->name : "?");
                return cql_fail(c, CQL_ERR_INVALID,
                                "%s column \"%s\" cannot be restricted (preceding column "
                                "\"%s\" is restricted by a non-EQ relation)",
                                gap_sliced == 1 ? "Clustering" : "PRIMARY KEY", cols[0]->name,
                                gap ? gap->name : "?");
            }
            if (tuple && !in_order)
                return cql_fail(c, CQL_ERR_INVALID,
                                "Multi-column slice restrictions cannot be used for filtering.");
            add_filter(k, rel);
            k->needs_filtering = 1;
            continue;
        }
        if (mode == CQL_KEYS_UPDATE)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Slice restrictions are not supported on the clustering columns in "
                            "UPDATE statements");
        if (set_slice(r, k, cols, n, rel->op, rel->value, tuple) != 0) return -1;
    }
    if (mode == CQL_KEYS_UPDATE && prefix < t->nck)
        return cql_fail(c, CQL_ERR_INVALID, "Some clustering keys are missing: %s",
                        joined(t, 'c', ck_eq, names, sizeof names));
    if (mode == CQL_KEYS_SELECT && (!k->partitions || t->view)) {
        /* without a partition every partition is read, and a view's rows come in its
         * index's order: the clustering restrictions filter */
        for (size_t i = 0; i < w->n; i++) {
            const cql_relation *rel = &w->rels[i];
            const cql_tcol *col = cql_tinfo_col(t, rel->columns[0]);
            if (col == NULL || col->kind != 'c') continue;
            int counted = 0;
            for (size_t f = 0; f < k->nfilters; f++)
                counted |= k->filters[f] == rel;
            if (!counted && add_filter(k, rel) != 0)
                return cql_fail(c, CQL_ERR_SERVER, "out of memory");
            if (!k->partitions) k->needs_filtering = 1;
        }
        for (size_t i = 0; i < t->nck; i++)
            vlist_free(&k->ck[i]);
        k->ck_eq = 0;
        k->slice = k->has_lo = k->has_hi = 0;
    }
    if (k->slice && slice_ranges(r, t, prefix, k) != 0) return -1;
    /* an = on an indexed column reads the index instead of every partition; with the
     * partitions named, they are read and the one restriction an index serves filters
     * their rows, as Cassandra needs no ALLOW FILTERING for it either */
    if (mode == CQL_KEYS_SELECT) {
        const cql_tcol *icol = NULL;
        const cql_relation *irel = NULL;
        const cql_tindex *cix = NULL;
        for (size_t f = 0; f < k->nfilters && !icol; f++) {
            const cql_relation *rel = k->filters[f];
            /* (c) = (v), a tuple of one column, is that column's = */
            int one_tuple = rel->kind == CQL_REL_TUPLE && rel->ncolumns == 1 &&
                            rel->op == CQL_OP_EQ && rel->value && rel->value->kind == CQL_E_TUPLE &&
                            rel->value->nitems == 1;
            const cql_tcol *col =
                rel->kind == CQL_REL_COLUMN || one_tuple ? cql_tinfo_col(t, rel->columns[0]) : NULL;
            if (col && col->index && (rel->op == CQL_OP_EQ || one_value_in(rel))) {
                icol = col;
                irel = rel;
            }
            /* CONTAINS, CONTAINS KEY, c[k] = v or = on a frozen collection with an index
             * on the collection that serves it */
            const cql_tindex *ix = icol ? NULL : cql_index_serving(t, rel);
            if (ix) {
                icol = ix->col;
                irel = rel;
                cix = ix;
            }
        }
        if (icol) {
            k->indexed = 1;
            k->needs_filtering = k->nfilters > 1;
            if (!k->partitions && !t->view) {
                k->index = icol;
                k->index_rel = irel;
                k->cindex = cix;
            }
        }
    }
    if (k->needs_filtering && mode == CQL_KEYS_SELECT && !allow_filtering)
        return cql_fail(c, CQL_ERR_INVALID, "%s", FILTERING);
    if (mode == CQL_KEYS_SELECT && filter_values_given(r, t, k) != 0) return -1;
    /* how many reads the IN lists make */
    size_t combos = 1;
    for (size_t i = 0; k->partitions && i < t->npk; i++)
        combos *= k->pk[i].n ? k->pk[i].n : 1;
    for (size_t i = 0; i < prefix; i++)
        combos *= k->ck[i].n ? k->ck[i].n : 1;
    if (k->tin_n && k->tin_at < prefix) combos *= k->tin.n / k->tin_n;
    if (combos > MAX_COMBINATIONS)
        return cql_fail(c, CQL_ERR_INVALID,
                        "The cartesian product of the IN restrictions (%zu) is larger than %d",
                        combos, MAX_COMBINATIONS);
    return 0;
}

int cql_each_prefix(const cql_keys *k, size_t n, int (*fn)(void *arg, const buf *const *vals),
                    void *arg)
{
    if (k->tin_n == 0 || k->tin_at >= n) return cql_each_combination(k->ck, n, fn, arg);
    size_t rows = k->tin.n / k->tin_n, end = k->tin_at + k->tin_n;
    if (n > 64 || rows == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if ((i < k->tin_at || i >= end) && k->ck[i].n == 0) return 0;
    /* an odometer over the columns, the tuple's columns one wheel */
    size_t idx[64] = {0};
    const buf *vals[64];
    for (;;) {
        for (size_t i = 0; i < n; i++)
            vals[i] = i < k->tin_at || i >= end
                          ? &k->ck[i].v[idx[i]]
                          : &k->tin.v[idx[k->tin_at] * k->tin_n + (i - k->tin_at)];
        int rc = fn(arg, vals);
        if (rc) return rc;
        size_t i = n;
        for (;;) {
            if (i == 0) return 0;
            i--;
            if (i >= k->tin_at && i < end) {
                if (i != k->tin_at) continue; /* the wheel turns at its first column */
                if (++idx[i] < rows) break;
            } else if (++idx[i] < k->ck[i].n) {
                break;
            }
            idx[i] = 0;
        }
    }
}

/* Calls fn for each combination of the lists, in order (the last list fastest). */
int cql_each_combination(const cql_vlist *lists, size_t n,
                         int (*fn)(void *arg, const buf *const *vals), void *arg)
{
    size_t idx[64] = {0};
    const buf *vals[64];
    if (n > 64) return -1;
    for (size_t i = 0; i < n; i++)
        if (lists[i].n == 0) return 0;
    for (;;) {
        for (size_t i = 0; i < n; i++)
            vals[i] = &lists[i].v[idx[i]];
        int rc = fn(arg, vals);
        if (rc) return rc;
        size_t i = n;
        while (i > 0) {
            i--;
            if (++idx[i] < lists[i].n) break;
            idx[i] = 0;
            if (i == 0) return 0;
        }
        if (n == 0) return 0;
    }
}
