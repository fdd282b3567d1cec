/* exec_write.c — INSERT, UPDATE and DELETE on the engine: the rows a statement names
 * (exec_where.c), each changed in one item transaction with the others of the statement
 * (txn_begin's locks make a conditional write linearisable per row), cell by cell with
 * the last write winning by timestamp; USING TTL and TIMESTAMP, the table's default TTL,
 * counters, set/list/map operations, static columns, range deletes, and the conditions of
 * lightweight transactions answered with [applied].
 *
 * The item layout is exec_row.c's; values are value.h's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/exec_int.h"
#include "cql/exec_watch.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"
#include "engine/engine.h"
#include "model/value.h"

#define MAX_ITEM_BYTES (400 * 1024)
#define MAX_TTL 630720000 /* 20 years, Cassandra's cap */

/* One item the statements of a request change. */
typedef struct witem {
    table *et;
    const cql_tinfo *t;
    buf pk, ck;
    int clustered; /* ck holds a $ck */
    int is_static; /* the partition's static row */
    buf key;
    json_t *item;     /* the new state (owned) */
    json_t *keycells; /* the key columns' attributes for a new item (owned), or NULL */
    int existed;      /* a live row was there */
    int written;      /* a statement changes it (else it is only read, for conditions) */
} witem;

/* The items of one request (one statement, or a BATCH's), locked together. */
typedef struct wset {
    witem *items;
    size_t n, cap;
    buf *txn_keys; /* borrowed by the transaction until txn_end */
} wset;

/* One statement: what it runs with, and which of the set's items are its. */
typedef struct wctx {
    cql_run *r;
    const cql_stmt *s;
    const cql_tinfo *t;
    table *et;
    int64_t ts, now_s, exp_s;
    wset *set;
    size_t *idx, nidx, idxcap;
    /* INSERT and UPDATE: the assignments */
    const char **cols;
    cql_assign_kind *kinds;
    const cql_expr **values, **ekeys;
    const char **efields; /* u.f = v: the field */
    size_t nassign;
    int insert, rows;
    cql_keys k;
    int has_keys;
    /* a conditional statement's partition static row (an index in set), read for the
     * conditions and the [applied] answer; -1 when there is none to read */
    long static_at;
    /* INSERT JSON: the values read from the JSON as bound values of made-up markers */
    cql_run jrun;
    cql_values jvalues;
    buf *jbytes;
    cql_expr *jexprs;
    const char **jcols;
    size_t nj;
    /* DELETE of ranges of rows: each one's $ck bounds and its partition's static row item
     * (an index in set), where it is kept */
    struct del_range {
        size_t part;
        buf lo, hi;
    } * ranges;
    size_t nranges;
} wctx;

#define W_ITEM(w, j) (&(w)->set->items[(w)->idx[j]])

static void wset_free(wset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        buf_free(&s->items[i].pk);
        buf_free(&s->items[i].ck);
        buf_free(&s->items[i].key);
        json_decref(s->items[i].item);
        json_decref(s->items[i].keycells);
    }
    free(s->items);
    free(s->txn_keys);
    memset(s, 0, sizeof *s);
}

static void wctx_free(wctx *w)
{
    for (size_t i = 0; i < w->nranges; i++) {
        buf_free(&w->ranges[i].lo);
        buf_free(&w->ranges[i].hi);
    }
    free(w->ranges);
    for (size_t i = 0; i < w->nj; i++)
        buf_free(&w->jbytes[i]);
    free(w->jbytes);
    free(w->jexprs);
    free(w->jcols);
    free(w->jvalues.values);
    free(w->idx);
    free(w->cols);
    free(w->kinds);
    free(w->values);
    free(w->ekeys);
    free(w->efields);
    if (w->has_keys) cql_keys_free(&w->k);
    if (w->et) catalog_release_after_writes(w->et);
}

static int key_cells(const cql_tinfo *t, json_t *item, const buf *const *pkv,
                     const buf *const *ckv);

static int own(wctx *w, size_t at)
{
    for (size_t j = 0; j < w->nidx; j++)
        if (w->idx[j] == at) return 0;
    if (w->nidx == w->idxcap) {
        size_t cap = w->idxcap ? w->idxcap * 2 : 8;
        size_t *n = realloc(w->idx, cap * sizeof *n);
        if (n == NULL) return cql_fail(w->r->call, CQL_ERR_SERVER, "out of memory");
        w->idx = n;
        w->idxcap = cap;
    }
    w->idx[w->nidx++] = at;
    w->set->items[at].written = 1;
    return 0;
}

/* The item of (pk, ck) in the set, added once, and made one of the statement's. ck NULL:
 * the table has no clustering; is_static: the partition's static row. */
static witem *target(wctx *w, const buf *pk, const buf *ck, int is_static, const buf *const *pkv,
                     const buf *const *ckv)
{
    wset *set = w->set;
    buf ckb;
    buf_init(&ckb, 0);
    if (w->t->nck) {
        if (is_static)
            buf_putc(&ckb, CQL_CK_STATIC);
        else
            buf_append(&ckb, ck->data, ck->len);
    }
    for (size_t i = 0; i < set->n; i++)
        if (set->items[i].et == w->et &&
            cql_same_bytes(set->items[i].pk.data, set->items[i].pk.len, pk->data, pk->len) &&
            set->items[i].ck.len == ckb.len &&
            (ckb.len == 0 || memcmp(set->items[i].ck.data, ckb.data, ckb.len) == 0)) {
            buf_free(&ckb);
            return own(w, i) == 0 ? &set->items[i] : NULL;
        }
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        witem *n = realloc(set->items, cap * sizeof *n);
        if (n == NULL) {
            buf_free(&ckb);
            cql_fail(w->r->call, CQL_ERR_SERVER, "out of memory");
            return NULL;
        }
        set->items = n;
        set->cap = cap;
    }
    witem *it = &set->items[set->n];
    memset(it, 0, sizeof *it);
    it->et = w->et;
    it->t = w->t;
    buf_init(&it->pk, 0);
    buf_append(&it->pk, pk->data ? pk->data : "", pk->len);
    it->ck = ckb;
    it->clustered = w->t->nck > 0;
    it->is_static = is_static;
    buf_init(&it->key, 0);
    qr_err err;
    err_init(&err);
    if (cql_row_key(w->et, &it->pk, it->clustered ? &it->ck : NULL, &it->key, &err) != 0) {
        cql_fail_engine(w->r->call, CQL_ERR_INVALID, &err);
        buf_free(&it->pk);
        buf_free(&it->ck);
        buf_free(&it->key);
        return NULL;
    }
    if (pkv) {
        it->keycells = json_object();
        if (key_cells(w->t, it->keycells, pkv, is_static ? NULL : ckv) != 0) {
            cql_fail(w->r->call, CQL_ERR_SERVER, "out of memory");
            json_decref(it->keycells);
            buf_free(&it->pk);
            buf_free(&it->ck);
            buf_free(&it->key);
            return NULL;
        }
    }
    set->n++;
    if (own(w, set->n - 1) != 0) return NULL;
    return &set->items[set->n - 1];
}

/* ---- the values of the primary key ---- */

/* The serialized partition key of one combination of partition key values. */
static int pk_of(cql_call *c, const cql_tinfo *t, const buf *const *vals, buf *out)
{
    cql_value v[64];
    for (size_t i = 0; i < t->npk; i++) {
        v[i].p = (const uint8_t *)vals[i]->data;
        v[i].len = (int32_t)vals[i]->len;
    }
    return cql_pk_serialize(c, t, v, out);
}

static const cql_tcol *key_col(const cql_tinfo *t, char kind, size_t pos)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (t->cols[i].kind == kind && t->cols[i].pos == (int)pos) return &t->cols[i];
    return NULL;
}

/* $ck of one combination of clustering values (the first n columns). */
static int ck_of(const cql_tinfo *t, const buf *const *vals, size_t n, buf *out)
{
    if (buf_putc(out, CQL_CK_ROW)) return -1;
    for (size_t i = 0; i < n; i++)
        if (cql_ck_append(out, key_col(t, 'c', i), (const uint8_t *)vals[i]->data, vals[i]->len))
            return -1;
    return 0;
}

/* Sets the key columns' attributes on a new item. */
static int key_cells(const cql_tinfo *t, json_t *item, const buf *const *pkv, const buf *const *ckv)
{
    for (size_t i = 0; i < t->ncols; i++) {
        const cql_tcol *c = &t->cols[i];
        const buf *v = c->kind == 'p' ? pkv[c->pos] : c->kind == 'c' && ckv ? ckv[c->pos] : NULL;
        if (v == NULL) continue;
        json_t *av = cqlval_to_item(c->type, (const uint8_t *)v->data, v->len);
        if (av == NULL) return -1;
        char attr[CQL_NAME_MAX + 2];
        cql_cell_attr(cql_col_stored(c), attr, sizeof attr);
        json_object_set_new(item, attr, av);
    }
    return 0;
}

/* ---- USING ---- */

static int conditional(const wctx *w);

static int usings(wctx *w, const cql_using *u, size_t n, int ttl_allowed)
{
    const cql_tinfo *t = w->t;
    int64_t ttl = t->default_ttl;
    if (t->counter && conditional(w))
        return cql_fail(w->r->call, CQL_ERR_INVALID,
                        "Conditional updates are not supported on counter tables");
    for (size_t i = 0; i < n; i++) {
        int64_t v;
        int got = cql_int_term_opt(w->r, u[i].value, &v, u[i].ttl ? "[ttl]" : "[timestamp]");
        if (got == CQLVAL_ERROR) return -1;
        /* as Cassandra: an unset TTL or timestamp is the default, a null TTL is none */
        if (got == CQLVAL_UNSET) continue;
        if (got == CQLVAL_NULL && !u[i].ttl)
            return cql_fail(w->r->call, CQL_ERR_INVALID, "Invalid null value of timestamp");
        if (got == CQLVAL_NULL) v = 0;
        if (u[i].ttl) {
            if (!ttl_allowed)
                return cql_fail(w->r->call, CQL_ERR_INVALID, "A TTL cannot be set on a DELETE");
            if (v < 0)
                return cql_fail(w->r->call, CQL_ERR_INVALID,
                                "A TTL must be greater or equal to 0, but was %lld", (long long)v);
            if (v > MAX_TTL)
                return cql_fail(w->r->call, CQL_ERR_INVALID,
                                "ttl is too large. requested (%lld) maximum (%d)", (long long)v,
                                MAX_TTL);
            if (t->counter && v > 0)
                return cql_fail(w->r->call, CQL_ERR_INVALID,
                                "Cannot provide custom TTL for counter updates");
            ttl = v;
        } else {
            if (t->counter)
                return cql_fail(w->r->call, CQL_ERR_INVALID,
                                "Cannot provide custom timestamp for counter updates");
            if (conditional(w))
                return cql_fail(w->r->call, CQL_ERR_INVALID,
                                "Cannot provide custom timestamp for conditional updates");
            /* UpdateParameters: Long.MIN_VALUE means no timestamp */
            if (v == INT64_MIN)
                return cql_fail(w->r->call, CQL_ERR_INVALID,
                                "Out of bound timestamp, must be in [%lld, %lld]",
                                (long long)INT64_MIN + 1, (long long)INT64_MAX);
            w->ts = v;
        }
    }
    w->exp_s = ttl > 0 ? w->now_s + ttl : 0;
    return 0;
}

/* ---- collections ---- */

typedef struct elems {
    const uint8_t **p;
    int32_t *len;
    size_t n;
} elems;

static void elems_free(elems *e)
{
    free(e->p);
    free(e->len);
    memset(e, 0, sizeof *e);
}

/* The elements of a collection value (for a map: key, value, key, value, ...). */
static int elems_of(const uint8_t *p, size_t len, int map, elems *out)
{
    memset(out, 0, sizeof *out);
    if (p == NULL) return 0;
    cql_elements e;
    uint32_t count;
    if (cql_collection_open(&e, p, len, map, &count) != 0) return -1;
    size_t n = (size_t)count * (map ? 2 : 1);
    out->p = calloc(n + 1, sizeof *out->p);
    out->len = calloc(n + 1, sizeof *out->len);
    if (out->p == NULL || out->len == NULL) return -1;
    const uint8_t *ep;
    int32_t el;
    int got;
    while ((got = cql_element_next(&e, &ep, &el)) == 1 && out->n < n) {
        out->p[out->n] = ep;
        out->len[out->n++] = el;
    }
    return got < 0 ? -1 : 0;
}

/* Where key k goes in a sorted set or map (step 2 for maps): *found when it is there. */
static size_t sorted_find(const cql_ctype *kt, const elems *e, int step, const uint8_t *k,
                          int32_t klen, int *found)
{
    *found = 0;
    size_t i = 0;
    for (; i < e->n; i += (size_t)step) {
        int c = cqlval_compare(kt, e->p[i], (size_t)e->len[i], k, (size_t)klen);
        if (c == 0) {
            *found = 1;
            return i;
        }
        if (c > 0) return i;
    }
    return i;
}

/* One collection operation on the elements of c. */
typedef struct coll_op {
    wctx *w;
    cql_coll *c;
    int front; /* prepend */
} coll_op;

static int coll_add_el(void *arg, const uint8_t *k, uint32_t klen, const uint8_t *v, uint32_t vlen)
{
    coll_op *o = arg;
    int64_t lkey = o->c->list ? cql_coll_list_key(o->c, o->front) : 0;
    return cql_coll_put(o->c, k, klen, lkey, v, (int32_t)vlen, o->w->ts, o->w->exp_s, o->w->now_s) <
           0;
}

/* A set's element or a map's key (m - {k1, k2} is handed a set), deleted. */
static int coll_del_key(void *arg, const uint8_t *k, uint32_t klen, const uint8_t *v, uint32_t vlen)
{
    (void)v, (void)vlen;
    coll_op *o = arg;
    return cql_coll_put(o->c, k, klen, 0, NULL, -1, o->w->ts, 0, o->w->now_s) < 0;
}

static int coll_prepend(coll_op *o, const uint8_t *p, size_t len)
{
    /* [a, b] + l: b goes in front first */
    elems e;
    if (elems_of(p, len, 0, &e) != 0) {
        elems_free(&e);
        return -1;
    }
    int rc = 0;
    for (size_t i = e.n; rc == 0 && i-- > 0;)
        rc = coll_add_el(o, NULL, 0, e.p[i], (uint32_t)e.len[i]);
    elems_free(&e);
    return rc;
}

/* l - [x, y]: every element equal to one of them goes. */
static int coll_sub_list(coll_op *o, const uint8_t *p, size_t len)
{
    elems e;
    if (elems_of(p, len, 0, &e) != 0) {
        elems_free(&e);
        return -1;
    }
    cql_coll *c = o->c;
    const cql_ctype *et = c->col->type->args[0];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        if (!cql_coll_el_live(c, i, o->w->now_s)) continue;
        const uint8_t *v =
            c->bytes.data ? (const uint8_t *)c->bytes.data + c->el[i].voff : (const uint8_t *)"";
        for (size_t j = 0; j < e.n; j++)
            if (cqlval_compare(et, v, c->el[i].vlen, e.p[j], (size_t)e.len[j]) == 0) {
                rc =
                    cql_coll_put(c, NULL, 0, c->el[i].lkey, NULL, -1, o->w->ts, 0, o->w->now_s) < 0;
                break;
            }
    }
    elems_free(&e);
    return rc;
}

/* l[i] = v, m[k] = v, DELETE l[i], m[k], s[e] (v NULL): on element key of c. */
static int coll_element(wctx *w, cql_coll *c, const buf *key, const buf *v)
{
    const uint8_t *vp = v ? (const uint8_t *)v->data : NULL;
    int32_t vlen = v ? (int32_t)v->len : -1;
    if (!c->list)
        return cql_coll_put(c, (const uint8_t *)key->data, (uint32_t)key->len, 0,
                            vp ? vp : (const uint8_t *)"", vlen, w->ts, w->exp_s, w->now_s) < 0
                   ? cql_fail(w->r->call, CQL_ERR_SERVER, "out of memory")
                   : 0;
    int32_t idx = -1;
    cql_int_decode((const uint8_t *)key->data, key->len, &idx);
    size_t live = 0, at = c->n;
    for (size_t i = 0; i < c->n; i++)
        if (cql_coll_el_live(c, i, w->now_s) && live++ == (size_t)idx) at = i;
    if (live == 0)
        return cql_fail(w->r->call, CQL_ERR_INVALID, "Attempted to %s a list which is null",
                        v ? "set an element on" : "delete an element from");
    if (idx < 0 || at == c->n)
        return cql_fail(w->r->call, CQL_ERR_INVALID,
                        "List index %d out of bound, list has size %zu", idx, live);
    return cql_coll_put(c, NULL, 0, c->el[at].lkey, vp, vlen, w->ts, w->exp_s, w->now_s) < 0
               ? cql_fail(w->r->call, CQL_ERR_SERVER, "out of memory")
               : 0;
}

/* An assignment of kind to non-frozen collection col, element by element: c = c + v,
 * c = v + c, c = c - v, c[k] = v, and with value NULL, DELETE c[k] (c = v is a write of
 * the whole cell, cql_cell_write's). */
static int coll_assign(wctx *w, json_t *item, const cql_tcol *col, cql_assign_kind kind,
                       const cql_expr *value, const cql_expr *key)
{
    cql_call *call = w->r->call;
    const cql_ctype *t = col->type;
    int map = t->wire.id == CQL_TYPE_MAP, list = t->wire.id == CQL_TYPE_LIST;
    if (kind == CQL_SET_PREPEND && !list)
        return cql_fail(call, CQL_ERR_INVALID,
                        "Invalid operation (%s = ... + %s) for non list column %s", col->name,
                        col->name, col->name);
    if (kind == CQL_SET_ELEMENT && !list && !map && value)
        return cql_fail(call, CQL_ERR_INVALID,
                        "Invalid operation (%s[...] = ...) for set column %s", col->name,
                        col->name);
    buf v, kb;
    buf_init(&v, 0);
    buf_init(&kb, 0);
    int rc = -1;
    /* the operand's type: an element's for c[k], a set of the keys for m - {...} */
    const cql_ctype *vt = t;
    cql_ctype setk;
    const cql_ctype *args[1] = {t->args[0]};
    const cql_type *params[1] = {&t->args[0]->wire};
    if (kind == CQL_SET_ELEMENT) {
        const cql_ctype *kt = list ? cqltype_native(CQL_TYPE_INT) : t->args[0];
        int krc = cql_term(w->r, kt, col->name, key, &kb);
        if (krc == CQLVAL_UNSET && list && value == NULL) {
            rc = 0; /* DELETE l[unset]: nothing changes, as Lists.DiscarderByIndex does */
            goto done;
        }
        if (krc != CQLVAL_OK) {
            const char *which = krc == CQLVAL_UNSET ? "unset" : "null";
            if (krc != CQLVAL_ERROR && list)
                cql_fail(call, CQL_ERR_INVALID, "Invalid %s value for list index", which);
            else if (krc != CQLVAL_ERROR)
                cql_fail(call, CQL_ERR_INVALID, "Invalid %s %s", which,
                         map ? "map key" : "set element");
            goto done;
        }
        vt = map ? t->args[1] : t->args[0];
    } else if (kind == CQL_SET_SUB && map) {
        memset(&setk, 0, sizeof setk);
        setk.wire.id = CQL_TYPE_SET;
        setk.wire.params = params;
        setk.wire.n = 1;
        setk.args = args;
        setk.frozen = 1;
        vt = &setk;
    }
    int vrc = value ? cql_term(w->r, vt, col->name, value, &v) : CQLVAL_NULL;
    if (vrc == CQLVAL_ERROR) goto done;
    if (vrc == CQLVAL_UNSET || (vrc == CQLVAL_NULL && kind != CQL_SET_ELEMENT)) {
        rc = 0; /* c + null: nothing changes */
        goto done;
    }
    cql_coll c;
    if (cql_coll_load(item, col, &c) != 0) {
        cql_coll_free(&c);
        cql_fail(call, CQL_ERR_SERVER, "a stored collection of %s cannot be read", col->name);
        goto done;
    }
    coll_op o = {.w = w, .c = &c, .front = kind == CQL_SET_PREPEND};
    const uint8_t *p = (const uint8_t *)v.data;
    int bad = 0;
    switch (kind) {
    case CQL_SET_ADD:
        bad = cql_coll_each(p, v.len, list, map, coll_add_el, &o);
        break;
    case CQL_SET_PREPEND:
        bad = coll_prepend(&o, p, v.len);
        break;
    case CQL_SET_SUB:
        bad = list ? coll_sub_list(&o, p, v.len) : cql_coll_each(p, v.len, 0, 0, coll_del_key, &o);
        break;
    default: /* CQL_SET_ELEMENT */
        rc = coll_element(w, &c, &kb, vrc == CQLVAL_OK ? &v : NULL);
        break;
    }
    if (kind != CQL_SET_ELEMENT)
        rc = bad ? cql_fail(call, CQL_ERR_SERVER, "the elements of %s cannot be written", col->name)
                 : 0;
    if (rc == 0 && cql_coll_store(item, &c, w->now_s) != 0)
        rc = cql_fail(call, CQL_ERR_SERVER, "out of memory");
    cql_coll_free(&c);
done:
    buf_free(&v);
    buf_free(&kb);
    return rc;
}

/* ---- reading the current rows ---- */

static int64_t counter_value(json_t *item, const cql_tcol *col, int64_t now_s)
{
    buf b;
    buf_init(&b, 0);
    int64_t v = 0;
    if (cql_cell_read(item, col, now_s, &b) == 1)
        cql_bigint_decode((const uint8_t *)b.data, b.len, &v);
    buf_free(&b);
    return v;
}

/* ---- conditions (lightweight transactions) ---- */

/* The value of a condition's left side in the current item: 1 with bytes, 0 null. */
/* The index of UDT field name in type, or -1. */
static int udt_field(const cql_ctype *type, const char *name)
{
    for (uint16_t i = 0; i < type->wire.n; i++)
        if (type->wire.field_names && strcmp(type->wire.field_names[i], name) == 0) return i;
    return -1;
}

/* The type a condition's right side is read as: the column's, an element's, or a UDT
 * field's (u.f). 0, or -1 with Cassandra's error. */
static int cond_type(wctx *w, const cql_relation *rel, const cql_tcol *col, const cql_ctype **type)
{
    *type = col->type;
    if (rel->kind == CQL_REL_ELEMENT && col->type && col->type->wire.n >= 1)
        *type = col->type->wire.id == CQL_TYPE_MAP && col->type->wire.n >= 2 ? col->type->args[1]
                                                                             : col->type->args[0];
    if (rel->kind != CQL_REL_FIELD) return 0;
    if (col->type == NULL || col->type->wire.id != CQL_TYPE_UDT)
        return cql_fail(w->r->call, CQL_ERR_INVALID,
                        "Invalid field selection: %s is not a user type", col->name);
    int fi = udt_field(col->type, rel->field);
    if (fi < 0)
        return cql_fail(w->r->call, CQL_ERR_INVALID, "Unknown field %s for column %s", rel->field,
                        col->name);
    *type = col->type->args[fi];
    return 0;
}

/* A UDT value's field fi into out: 1, or 0 when the value has it null or not at all. */
static int udt_field_value(const buf *whole, int fi, buf *out)
{
    const uint8_t *p = (const uint8_t *)whole->data;
    size_t left = whole->len;
    for (int i = 0; left >= 4; i++) {
        int32_t len =
            (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
        p += 4;
        left -= 4;
        if (len > 0 && (size_t)len > left) return 0;
        if (i == fi) {
            if (len < 0) return 0;
            buf_append(out, p, (size_t)len);
            return 1;
        }
        if (len > 0) {
            p += len;
            left -= (size_t)len;
        }
    }
    return 0;
}

static int cond_value(wctx *w, json_t *item, const cql_relation *rel, const cql_tcol *col, buf *out,
                      const cql_ctype **type)
{
    if (cond_type(w, rel, col, type) != 0) return -1;
    if (item == NULL) return 0;
    buf whole;
    buf_init(&whole, 0);
    int got = cql_cell_read(item, col, w->now_s, &whole);
    if (got != 1) {
        buf_free(&whole);
        return 0;
    }
    if (rel->kind == CQL_REL_FIELD) {
        int has = udt_field_value(&whole, udt_field(col->type, rel->field), out);
        buf_free(&whole);
        return has;
    }
    if (rel->kind != CQL_REL_ELEMENT) {
        buf_append(out, whole.data, whole.len);
        buf_free(&whole);
        return 1;
    }
    /* l[i] or m[k] */
    int map = col->type->wire.id == CQL_TYPE_MAP;
    buf key;
    buf_init(&key, 0);
    const cql_ctype *kt = map ? col->type->args[0] : cqltype_native(CQL_TYPE_INT);
    int found = 0;
    if (cql_term(w->r, kt, col->name, rel->key, &key) == CQLVAL_OK) {
        elems e;
        if (elems_of((const uint8_t *)whole.data, whole.len, map, &e) == 0) {
            if (map) {
                int f;
                size_t at = sorted_find(kt, &e, 2, (const uint8_t *)key.data, (int32_t)key.len, &f);
                if (f) {
                    buf_append(out, e.p[at + 1], (size_t)e.len[at + 1]);
                    found = 1;
                }
            } else {
                int32_t idx = -1;
                cql_int_decode((const uint8_t *)key.data, key.len, &idx);
                if (idx >= 0 && (size_t)idx < e.n) {
                    buf_append(out, e.p[idx], (size_t)e.len[idx]);
                    found = 1;
                }
            }
        }
        elems_free(&e);
    }
    *type = map ? col->type->args[1] : col->type->args[0];
    buf_free(&key);
    buf_free(&whole);
    return found;
}

int cql_compare_op(cql_op op, int cmp)
{
    switch (op) {
    case CQL_OP_EQ:
        return cmp == 0;
    case CQL_OP_NEQ:
        return cmp != 0;
    case CQL_OP_LT:
        return cmp < 0;
    case CQL_OP_LTE:
        return cmp <= 0;
    case CQL_OP_GT:
        return cmp > 0;
    case CQL_OP_GTE:
        return cmp >= 0;
    default:
        return 0;
    }
}

/* 1 when the current value (has: whether the cell is set) stands in relation op to v
 * (vlen < 0: null, which equals null only). */
static int cond_match(const cql_ctype *type, int has, const buf *cur, cql_op op, const uint8_t *v,
                      int32_t vlen)
{
    if (vlen < 0 || !has) {
        int both = vlen < 0 && !has;
        return op == CQL_OP_EQ ? both : op == CQL_OP_NEQ ? !both : 0;
    }
    int cmp = cqlval_compare(type, (const uint8_t *)cur->data, cur->len, v, (size_t)vlen);
    return cql_compare_op(op, cmp);
}

/* 1 when the current value is one of the elements of the list bound to IN ?, 0 when not,
 * -1 with the error set. */
static int cond_in_bound(wctx *w, const cql_relation *rel, const cql_tcol *col,
                         const cql_ctype *type, int has, const buf *cur)
{
    cql_value v;
    if (cql_bound(w->r, rel->value, &v) != 1) return -1;
    if (v.len == CQL_UNSET)
        return cql_fail(w->r->call, CQL_ERR_INVALID, "Invalid 'unset' value in condition");
    if (v.len < 0)
        return cql_fail(w->r->call, CQL_ERR_INVALID, "Invalid null list in IN condition");
    cql_elements e;
    uint32_t n;
    if (cql_collection_open(&e, v.p, (size_t)v.len, 0, &n) != 0)
        return cql_fail(w->r->call, CQL_ERR_INVALID, "Invalid list value for IN condition on %s",
                        col->name);
    const uint8_t *p;
    int32_t len;
    int got;
    while ((got = cql_element_next(&e, &p, &len)) == 1) {
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (len >= 0 && cqlval_validate(type, p, (size_t)len, &perr) != 0)
            return cql_fail(w->r->call, CQL_ERR_INVALID, "Invalid IN value for %s: %s", col->name,
                            perr.msg);
        if (cond_match(type, has, cur, CQL_OP_EQ, p, len)) return 1;
    }
    if (got < 0)
        return cql_fail(w->r->call, CQL_ERR_INVALID, "Invalid list value for IN condition on %s",
                        col->name);
    return 0;
}

/* Evaluates the IF conditions on item (NULL when the row does not exist), static columns
 * on stat (the partition's static row, NULL when it does not exist): 1, 0, -1. */
static int conditions_hold(wctx *w, json_t *item, json_t *stat, const cql_relation *conds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cql_relation *rel = &conds[i];
        const cql_tcol *col = cql_tinfo_col(w->t, rel->columns[0]);
        if (col == NULL)
            return cql_fail(w->r->call, CQL_ERR_INVALID, "Undefined column name %s",
                            rel->columns[0]);
        if (col->kind == 'p' || col->kind == 'c')
            return cql_fail(w->r->call, CQL_ERR_INVALID,
                            "PRIMARY KEY column '%s' cannot have IF conditions", col->name);
        buf cur;
        buf_init(&cur, 0);
        const cql_ctype *type;
        int has = cond_value(w, col->kind == 's' ? stat : item, rel, col, &cur, &type);
        if (has < 0) {
            buf_free(&cur);
            return -1;
        }
        int ok = 0;
        if (rel->op == CQL_OP_IN && rel->value) {
            ok = cond_in_bound(w, rel, col, type, has, &cur);
            if (ok < 0) {
                buf_free(&cur);
                return -1;
            }
        }
        /* an IN list of terms (empty for IN ()), or the one term of another operator */
        int listed = rel->op == CQL_OP_IN;
        const cql_expr *const *terms =
            listed ? (const cql_expr *const *)rel->values : (const cql_expr *const *)&rel->value;
        size_t nterms = listed ? (rel->value ? 0 : rel->nvalues) : 1;
        for (size_t j = 0; j < nterms && !ok; j++) {
            buf v;
            buf_init(&v, 0);
            int rc = cql_term(w->r, type, col->name, terms[j], &v);
            /* an unset value of an IN list is left out, as Cassandra leaves it */
            if (rc == CQLVAL_UNSET && listed) {
                buf_free(&v);
                continue;
            }
            if (rc == CQLVAL_UNSET)
                rc = cql_fail(w->r->call, CQL_ERR_INVALID, "Invalid 'unset' value in condition");
            if (rc == CQLVAL_ERROR) {
                buf_free(&v);
                buf_free(&cur);
                return -1;
            }
            cql_op op = listed ? CQL_OP_EQ : rel->op;
            if (rc == CQLVAL_NULL && op != CQL_OP_EQ && op != CQL_OP_NEQ) {
                static const char *const ops[] = {
                    [CQL_OP_LT] = "<", [CQL_OP_LTE] = "<=", [CQL_OP_GT] = ">", [CQL_OP_GTE] = ">="};
                buf_free(&v);
                buf_free(&cur);
                return cql_fail(w->r->call, CQL_ERR_INVALID,
                                "Invalid comparison with null for operator \"%s\"",
                                (size_t)op < sizeof ops / sizeof *ops && ops[op] ? ops[op] : "?");
            }
            ok = cond_match(type, has, &cur, op, (const uint8_t *)v.data,
                            rc == CQLVAL_OK ? (int32_t)v.len : -1);
            buf_free(&v);
        }
        buf_free(&cur);
        if (!ok) return 0;
    }
    return 1;
}

/* Puts col's cell of from (NULL, or no live cell: null) as the next value of an answer's
 * row: 0, or -1 (out of memory). */
static int put_cell(cql_rows *rs, json_t *from, const cql_tcol *col, int64_t now_s)
{
    buf v;
    buf_init(&v, 0);
    int got = from ? cql_cell_read(from, col, now_s, &v) : 0;
    int rc = cql_rows_put(rs, v.data ? v.data : "", got == 1 ? (int32_t)v.len : -1);
    buf_free(&v);
    return rc;
}

/* Writes rs as the call's answer unless building it failed (rc), then frees it. */
static int send_rows(cql_rows *rs, cql_call *call, int rc)
{
    if (rc == 0) {
        buf_reset(&call->body);
        rc = cql_rows_write(rs, call, NULL, 0);
    } else {
        cql_fail(call, CQL_ERR_SERVER, "out of memory");
    }
    cql_rows_free(rs);
    return rc;
}

/* The [applied] answer: true alone, or false with the current values of the columns the
 * conditions name (regular ones, then static ones, as Cassandra orders them), or of all
 * the table's for IF NOT EXISTS; item is the row (NULL when it does not exist), stat the
 * partition's static row (NULL when none). Nothing but false when neither exists, or
 * when only the static row does and no condition reads it. */
static int answer_applied(wctx *w, int applied, json_t *item, json_t *stat,
                          const cql_relation *conds, size_t nconds, int all_columns)
{
    static const cql_type t_bool = {.id = CQL_TYPE_BOOLEAN};
    cql_rows rs;
    cql_rows_init(&rs, w->t->ks, w->t->name);
    int rc = cql_rows_column(&rs, "[applied]", &t_bool);
    const cql_tcol *cols[256];
    size_t n = 0;
    if (!applied && all_columns && item) {
        for (size_t i = 0; i < w->t->ncols && n < 256; i++)
            cols[n++] = &w->t->cols[i];
    } else if (!applied && !all_columns) {
        int reads_static = 0;
        for (int pass = 0; pass < 2; pass++)
            for (size_t j = 0; j < nconds && n < 256; j++) {
                const cql_tcol *c = cql_tinfo_col(w->t, conds[j].columns[0]);
                if (c == NULL || (c->kind == 's') != pass) continue;
                int seen = 0;
                for (size_t k = 0; k < n && !seen; k++)
                    seen = cols[k] == c;
                if (!seen) cols[n++] = c;
                reads_static |= pass;
            }
        if (!item && !(stat && reads_static)) n = 0;
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = cql_rows_column(&rs, cols[i]->name, cols[i]->wire);
    uint8_t b = (uint8_t)applied;
    rc |= cql_rows_put(&rs, &b, 1);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = put_cell(&rs, cols[i]->kind == 's' && stat ? stat : item, cols[i], w->now_s);
    rs.nrows = 1;
    return send_rows(&rs, w->r->call, rc);
}

/* ---- the transaction ---- */

/* An engine refusal as the protocol's error: a throttled write (the table's capacity, as
 * DynamoDB meters it) is Cassandra's Overloaded, which drivers retry; others fail the
 * write. */
static int engine_error(cql_call *c, qr_err *err)
{
    return cql_fail_engine(c, CQL_ERR_WRITE_FAILURE, err);
}

/* The static row item of the partition of row it, among the set's items, or NULL. */
static witem *partition_item(wset *set, const witem *it)
{
    for (size_t i = 0; i < set->n; i++) {
        witem *p = &set->items[i];
        if (p->is_static && p->et == it->et &&
            cql_same_bytes(p->pk.data, p->pk.len, it->pk.data, it->pk.len))
            return p;
    }
    return NULL;
}

/* A row's item with nothing live (or none) takes the deletions of its partition that
 * cover it, which are kept in the partition's static row item (read here when the set
 * does not hold it): a live row was there when they were made and holds them already.
 * 0, or -1 with the call's error set. */
static int inherit_deletions(wset *set, witem *it, cql_call *c, int64_t now_s)
{
    if (!it->clustered || it->is_static || partition_item(set, it)) return 0;
    int kept = cql_table_keeps_deletions(c, it->t, it->et);
    if (kept <= 0) return kept;
    buf ck, key;
    buf_init(&ck, 0);
    buf_init(&key, 0);
    buf_putc(&ck, CQL_CK_STATIC);
    qr_err err;
    err_init(&err);
    stored_item si;
    int got = cql_row_key(it->et, &it->pk, &ck, &key, &err);
    if (got == 0) got = item_get_system(c->db, it->et, &key, &si, &err);
    buf_free(&ck);
    buf_free(&key);
    if (got < 0) return cql_fail_engine(c, CQL_ERR_SERVER, &err);
    if (got == 0) return 0;
    json_t *part = json_loadb(si.json, si.len, 0, NULL);
    stored_item_free(&si);
    if (part == NULL) return cql_fail(c, CQL_ERR_SERVER, "a stored row cannot be read");
    int64_t until, floor = cql_partition_floor(part, &it->ck, now_s, &until);
    json_decref(part);
    if (floor != INT64_MIN && cql_row_delete(it->item, it->t, floor, until) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    return 0;
}

/* Locks and reads the set's items: each one's current state into ->item (a copy, or a
 * new item with its key and the deletions that cover it). */
static int begin(wset *set, cql_call *c, int64_t now_s, item_txn **x)
{
    table **tables = calloc(set->n + 1, sizeof *tables);
    buf *keys = calloc(set->n + 1, sizeof *keys);
    if (tables == NULL || keys == NULL) {
        free(tables);
        free(keys);
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    }
    set->txn_keys = keys;
    for (size_t i = 0; i < set->n; i++) {
        tables[i] = set->items[i].et;
        keys[i] = set->items[i].key;
    }
    qr_err err;
    err_init(&err);
    int rc = txn_begin(c->db, (set->n == 1 ? TXN_ITEM : TXN_BATCH) | TXN_OWNER, set->n, tables,
                       keys, x, &err);
    free(tables);
    if (rc != 0) return engine_error(c, &err);
    for (size_t i = 0; i < set->n; i++) {
        witem *it = &set->items[i];
        const json_t *cur = NULL;
        int got = txn_read(*x, i, &cur, &err);
        if (got < 0) return cql_fail_engine(c, CQL_ERR_SERVER, &err);
        if (got == 1) {
            it->item = json_deep_copy(cur);
            it->existed = cql_row_live(it->item, it->t, now_s);
        } else {
            it->item = cql_row_new(&it->pk, it->clustered ? &it->ck : NULL);
        }
        if (it->item == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
        if (!it->existed && inherit_deletions(set, it, c, now_s) != 0) return -1;
        if (it->keycells) json_object_update_missing(it->item, it->keycells);
    }
    return 0;
}

/* Stages every item (a put, or a delete when nothing in it lives and it holds no
 * tombstone) and commits. */
static int finish(wset *set, cql_call *c, int64_t now_s, item_txn *x)
{
    qr_err err;
    err_init(&err);
    for (size_t i = 0; i < set->n; i++) {
        witem *it = &set->items[i];
        int rc;
        if (!it->written) continue;
        int live = cql_row_live(it->item, it->t, now_s);
        if (!live && !cql_row_tombstoned(it->item)) {
            rc = txn_delete(x, i, &err);
        } else {
            if (!live) cql_row_bury(it->item, it->t, now_s + it->t->gc_grace);
            if (it->t->nindexes && cql_row_index(it->item, it->t, now_s) != 0)
                return cql_fail(c, CQL_ERR_SERVER, "a row of %s cannot be indexed", it->t->name);
            cql_row_seal(it->item, it->t);
            size_t size = item_size(it->item);
            if (size > MAX_ITEM_BYTES)
                return cql_fail(c, CQL_ERR_INVALID,
                                "Row is too large: it would take %zu bytes, above the engine's "
                                "%d bytes per row",
                                size, MAX_ITEM_BYTES);
            rc = txn_put(x, i, it->item, size, &err);
        }
        if (rc) return engine_error(c, &err);
    }
    if (txn_commit(x, &err) != 0) return engine_error(c, &err);
    return 0;
}

typedef struct pkcombo {
    wctx *w;
    const cql_keys *k;
    int statics, rows;
    size_t nck; /* clustering columns given */
    const buf *const *pkv;
    buf pk;
} pkcombo;

static int add_ck(void *arg, const buf *const *ckv)
{
    pkcombo *p = arg;
    buf ck;
    buf_init(&ck, 0);
    if (ck_of(p->w->t, ckv, p->nck, &ck) != 0) {
        buf_free(&ck);
        return cql_fail(p->w->r->call, CQL_ERR_SERVER, "out of memory");
    }
    witem *it = target(p->w, &p->pk, &ck, 0, p->pkv, ckv);
    buf_free(&ck);
    return it ? 0 : -1;
}

static int add_pk(void *arg, const buf *const *pkv)
{
    pkcombo *p = arg;
    buf_reset(&p->pk);
    if (pk_of(p->w->r->call, p->w->t, pkv, &p->pk) != 0) return -1;
    p->pkv = pkv;
    if (p->statics && target(p->w, &p->pk, NULL, 1, pkv, NULL) == NULL) return -1;
    if (!p->rows) return 0;
    if (p->w->t->nck == 0) return target(p->w, &p->pk, NULL, 0, pkv, NULL) ? 0 : -1;
    return cql_each_prefix(p->k, p->nck, add_ck, p);
}

/* The items of the rows the keys name: for each partition, the static row when statics
 * is set and the rows of the clustering values when rows is set. */
static int targets(wctx *w, const cql_keys *k, int statics, int rows)
{
    pkcombo p = {.w = w, .k = k, .statics = statics, .rows = rows, .nck = k->ck_eq};
    p.pkv = NULL;
    buf_init(&p.pk, 0);
    int rc = cql_each_combination(k->pk, w->t->npk, add_pk, &p);
    buf_free(&p.pk);
    return rc ? -1 : 0;
}

/* ---- INSERT and UPDATE ---- */

/* Whether an assignment of kind is one col's type takes (other than a field's, u.f = v):
 * a counter is only added to or taken from, a column that is no collection only set. 0, or
 * -1 with Cassandra's error. */
static int operation_fits(wctx *w, const cql_tcol *col, cql_assign_kind kind, const cql_expr *value,
                          const cql_expr *key)
{
    cql_call *c = w->r->call;
    const cql_ctype *t = col->type;
    if (cqltype_has_counter(t))
        return kind == CQL_SET_ADD || kind == CQL_SET_SUB
                   ? 0
                   : cql_fail(c, CQL_ERR_INVALID,
                              "Cannot set the value of counter column %s (counters can only be "
                              "incremented/decremented, not set)",
                              col->name);
    if (kind == CQL_SET_VALUE || kind == CQL_SET_FIELD || cql_coll_col(col)) return 0;
    if (kind == CQL_SET_ELEMENT && value == NULL) /* DELETE col[key] */
        return cql_fail(c, CQL_ERR_INVALID, "Invalid deletion operation for %s column %s",
                        cqltype_is_collection(t) ? "frozen collection" : "non collection",
                        col->name);
    char *l = key ? cql_print_expr(key) : NULL, *r = value ? cql_print_expr(value) : NULL;
    const char *lv = l ? l : "?", *rv = r ? r : "?";
    char text[512];
    if (kind == CQL_SET_ELEMENT)
        snprintf(text, sizeof text, "%s[%s] = %s", col->name, lv, rv);
    else if (kind == CQL_SET_PREPEND)
        snprintf(text, sizeof text, "%s = %s + %s", col->name, rv, col->name);
    else
        snprintf(text, sizeof text, "%s = %s %c %s", col->name, col->name,
                 kind == CQL_SET_SUB ? '-' : '+', rv);
    free(l);
    free(r);
    const char *what = cqltype_is_collection(t)  ? "frozen collection"
                       : kind == CQL_SET_ELEMENT ? "non collection"
                       : kind == CQL_SET_PREPEND ? "non list"
                                                 : "non counter";
    return cql_fail(c, CQL_ERR_INVALID, "Invalid operation (%s) for %s column %s", text, what,
                    col->name);
}

/* Whether a write at the statement's time to row it is shadowed by the latest deletion
 * covering the row (on a tie the deletion wins): its own, or one of its partition's made
 * by an earlier statement of the request, which the row then takes. 1 shadowed, 0 not, -1
 * with the error set. */
static int shadowed(wctx *w, witem *it)
{
    witem *part = it->clustered && !it->is_static ? partition_item(w->set, it) : NULL;
    if (part) {
        int64_t until, floor = cql_partition_floor(part->item, &it->ck, w->now_s, &until);
        if (floor > cql_row_deleted(it->item) && cql_row_delete(it->item, w->t, floor, until) != 0)
            return cql_fail(w->r->call, CQL_ERR_SERVER, "out of memory");
    }
    return w->ts <= cql_row_deleted(it->item);
}

/* One assignment on one item. */
static int assign(wctx *w, json_t *item, const cql_tcol *col, cql_assign_kind kind,
                  const cql_expr *value, const cql_expr *key)
{
    cql_call *c = w->r->call;
    const cql_ctype *t = col->type;
    if (operation_fits(w, col, kind, value, key) != 0) return -1;
    if (cqltype_has_counter(t)) {
        buf d;
        buf_init(&d, 0);
        int rc = cql_term(w->r, cqltype_native(CQL_TYPE_BIGINT), col->name, value, &d);
        if (rc == CQLVAL_UNSET) {
            buf_free(&d);
            return 0;
        }
        if (rc != CQLVAL_OK) {
            buf_free(&d);
            return rc == CQLVAL_ERROR
                       ? -1
                       : cql_fail(c, CQL_ERR_INVALID, "Invalid null value for counter increment");
        }
        int64_t delta = 0, cur = counter_value(item, col, w->now_s);
        cql_bigint_decode((const uint8_t *)d.data, d.len, &delta);
        buf_free(&d);
        /* Cassandra's counters wrap around at 64 bits, as Java's longs do */
        uint64_t sum =
            kind == CQL_SET_ADD ? (uint64_t)cur + (uint64_t)delta : (uint64_t)cur - (uint64_t)delta;
        uint8_t b[8];
        cql_bigint_encode((int64_t)sum, b);
        /* counters add up whatever the timestamps */
        json_object_del(json_object_get(json_object_get(item, "$ts"), "M"), cql_col_stored(col));
        return cql_cell_write(item, col, b, 8, w->ts, 0) < 0
                   ? cql_fail(c, CQL_ERR_SERVER, "out of memory")
                   : 0;
    }
    if (cql_coll_col(col) && kind != CQL_SET_VALUE)
        return coll_assign(w, item, col, kind, value, key);
    buf v;
    buf_init(&v, 0);
    int vrc = value ? cql_term(w->r, t, col->name, value, &v) : CQLVAL_NULL;
    int rc = vrc == CQLVAL_ERROR ? -1 : 0;
    if (vrc == CQLVAL_OK || vrc == CQLVAL_NULL)
        rc = cql_cell_write(item, col, (const uint8_t *)v.data,
                            vrc == CQLVAL_OK ? (int32_t)v.len : -1, w->ts, w->exp_s) < 0
                 ? cql_fail(c, CQL_ERR_SERVER, "out of memory")
                 : 0;
    buf_free(&v);
    return rc;
}

/* u.f = v (value NULL: DELETE u.f) on a non-frozen user type's cell: the other fields
 * as they were. */
static int set_field(wctx *w, json_t *item, const cql_tcol *col, const char *field,
                     const cql_expr *value)
{
    cql_call *c = w->r->call;
    const cql_ctype *t = col->type;
    int udt = t->wire.id == CQL_TYPE_UDT, frozen = udt && !cqltype_is_multicell(t);
    if (value == NULL && !udt)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Invalid field deletion operation for non-UDT column %s", col->name);
    if (value == NULL && frozen)
        return cql_fail(c, CQL_ERR_INVALID, "Frozen UDT column %s does not support field deletion",
                        col->name);
    if (!udt || frozen) {
        char *text = cql_print_expr(value);
        int rc = cql_fail(c, CQL_ERR_INVALID, "Invalid operation (%s.%s = %s) for %s column %s",
                          col->name, field, text ? text : "?", udt ? "frozen UDT" : "non-UDT",
                          col->name);
        free(text);
        return rc;
    }
    size_t fi = t->wire.n;
    for (size_t i = 0; i < t->wire.n; i++)
        if (strcmp(t->wire.field_names[i], field) == 0) fi = i;
    if (fi == t->wire.n)
        return cql_fail(c, CQL_ERR_INVALID, "UDT column %s does not have a field named %s",
                        col->name, field);
    buf v, old, out;
    buf_init(&v, 0);
    buf_init(&old, 0);
    buf_init(&out, 0);
    int vrc = value ? cql_term(w->r, t->args[fi], col->name, value, &v) : CQLVAL_NULL;
    int rc = 0;
    if (vrc == CQLVAL_ERROR) rc = -1;
    if (rc == 0 && vrc != CQLVAL_UNSET) {
        int had = cql_cell_read(item, col, w->now_s, &old);
        cql_elements e;
        cql_fields_open(&e, had == 1 ? (const uint8_t *)old.data : NULL, had == 1 ? old.len : 0);
        int all_null = 1;
        for (size_t i = 0; i < t->wire.n && rc == 0; i++) {
            const uint8_t *p = NULL;
            int32_t len = -1;
            if (had == 1 && cql_element_next(&e, &p, &len) != 1) len = -1;
            if (i == fi) {
                p = (const uint8_t *)v.data;
                len = vrc == CQLVAL_OK ? (int32_t)v.len : -1;
            }
            if (len >= 0) all_null = 0;
            rc = cql_element_put(&out, p ? p : (const uint8_t *)"", len);
        }
        if (rc == 0)
            rc = cql_cell_write(item, col, (const uint8_t *)out.data,
                                all_null ? -1 : (int32_t)out.len, w->ts, w->exp_s) < 0
                     ? -1
                     : 0;
        if (rc) cql_fail(c, CQL_ERR_SERVER, "out of memory");
    }
    buf_free(&v);
    buf_free(&old);
    buf_free(&out);
    return rc;
}

/* ---- planning, checking and applying a statement ----
 * plan: the statement's checks, its values' conversion and its items; check: its IF
 * conditions on the items read under the locks; apply: its changes to them. */

/* The item a conditional statement's conditions are about: its row, or its partition's
 * static row when it names no other. */
static witem *main_item(wctx *w)
{
    witem *m = NULL;
    for (size_t j = 0; j < w->nidx; j++)
        if (!W_ITEM(w, j)->is_static || m == NULL) m = W_ITEM(w, j);
    return m;
}

static int conditional(const wctx *w)
{
    const cql_stmt *s = w->s;
    if (s->kind == CQL_INSERT) return s->if_not_exists;
    if (s->kind == CQL_UPDATE) return s->if_exists || s->u.update.nconds;
    return s->if_exists || s->u.del.nconds;
}

/* A conditional statement writes one row: IN on the partition key or on a clustering
 * column is refused, as Cassandra refuses it (even IN of one value). 0, or -1 with the
 * error set. */
static int conditional_in(wctx *w, const cql_where *where, const char *what)
{
    if (!conditional(w)) return 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < where->n; i++) {
            const cql_relation *rel = &where->rels[i];
            if (rel->op != CQL_OP_IN || rel->kind == CQL_REL_TOKEN) continue;
            const cql_tcol *col = cql_tinfo_col(w->t, rel->columns[0]);
            if (col == NULL || col->kind != (pass == 0 ? 'p' : 'c')) continue;
            return cql_fail(w->r->call, CQL_ERR_INVALID,
                            "IN on the %s is not supported with conditional %s",
                            pass == 0 ? "partition key" : "clustering key columns", what);
        }
    return 0;
}

static const cql_relation *conds_of(const wctx *w, size_t *n)
{
    if (w->s->kind == CQL_UPDATE) {
        *n = w->s->u.update.nconds;
        return w->s->u.update.conds;
    }
    if (w->s->kind == CQL_DELETE) {
        *n = w->s->u.del.nconds;
        return w->s->u.del.conds;
    }
    *n = 0;
    return NULL;
}

/* 1 when one of the IF conditions is on a column neither static nor of the key: then the
 * statement applies to a row, not only to static columns (Cassandra's
 * appliesOnlyToStaticColumns counts the conditions' columns too). */
static int conditions_on_regular(const cql_tinfo *t, const cql_relation *conds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cql_tcol *col = cql_tinfo_col(t, conds[i].columns[0]);
        if (col && col->kind == 'r') return 1;
    }
    return 0;
}

/* The partition's static row a conditional statement reads (its own, or the one read
 * for it), NULL when the table has none. */
static witem *static_item(wctx *w)
{
    if (w->static_at >= 0) return &w->set->items[w->static_at];
    for (size_t j = 0; j < w->nidx; j++)
        if (W_ITEM(w, j)->is_static) return W_ITEM(w, j);
    return NULL;
}

static json_t *live_item(const witem *it)
{
    return it && it->existed ? it->item : NULL;
}

/* 1 when the statement's conditions hold (or it has none), 0 when not, -1 error. */
static int check(wctx *w)
{
    if (!conditional(w)) return 1;
    witem *m = main_item(w);
    int exists = m && m->existed;
    if (w->s->kind == CQL_INSERT) return !exists;
    if (w->s->if_exists) return exists;
    size_t n;
    const cql_relation *conds = conds_of(w, &n);
    return conditions_hold(w, exists ? m->item : NULL, live_item(static_item(w)), conds, n);
}

/* Whether partition pk of the statement's table has a live row or static row: 1 (the
 * first such item, owned, in *first when first is given), 0, or -1 with the error set. */
static int partition_live(wctx *w, const buf *pk, json_t **first)
{
    qr_err err;
    err_init(&err);
    buf lower, upper, none;
    buf_init(&lower, 0);
    buf_init(&upper, 0);
    buf_init(&none, 0);
    if (cql_partition_bounds(w->et, pk, &none, &none, 1, &lower, &upper, &err) != 0) {
        buf_free(&lower);
        buf_free(&upper);
        return cql_fail_engine(w->r->call, CQL_ERR_SERVER, &err);
    }
    range_cursor *cur = cursor_open(w->r->call->db, w->et, NULL, &lower, &upper, 1, 1, NULL);
    const char *json;
    size_t len, size;
    int got, live = 0;
    while (!live && (got = cursor_next(cur, &json, &len, &size, &err)) == 1) {
        json_t *item = json_loadb(json, len, 0, NULL);
        live = item && cql_row_live(item, w->t, w->now_s);
        if (live && first)
            *first = item;
        else
            json_decref(item);
    }
    cursor_close(cur);
    buf_free(&lower);
    buf_free(&upper);
    if (!live && got < 0) return cql_fail_engine(w->r->call, CQL_ERR_SERVER, &err);
    return live;
}

static int answer_not_applied(wctx *w)
{
    witem *m = main_item(w);
    size_t n;
    const cql_relation *conds = conds_of(w, &n);
    json_t *stat = live_item(static_item(w)), *none = NULL;
    /* conditions on static columns only read the partition, as Cassandra's do: when it has
     * rows, their (null) values answer beside [applied] */
    int statics_only = n > 0 && !w->s->if_exists;
    for (size_t i = 0; i < n && statics_only; i++) {
        const cql_tcol *c = cql_tinfo_col(w->t, conds[i].columns[0]);
        statics_only = c && c->kind == 's';
    }
    if (statics_only && stat == NULL && m) {
        int live = partition_live(w, &m->pk, NULL);
        if (live < 0) return -1;
        if (live) stat = none = json_object();
    }
    int rc = answer_applied(w, 0, m && m->existed ? m->item : NULL, stat, conds, n,
                            w->s->kind == CQL_INSERT);
    json_decref(none);
    return rc;
}

/* A conditional statement on a table with static columns also reads its partition's
 * static row, under the same lock, without writing it: conditions on static columns and
 * the [applied] answer take their values from it. 0, or -1 with the error set. */
static int plan_static_read(wctx *w)
{
    w->static_at = -1;
    int statics = 0;
    for (size_t i = 0; i < w->t->ncols; i++)
        statics |= w->t->cols[i].kind == 's';
    if (!conditional(w) || !statics || w->nidx == 0 || static_item(w)) return 0;
    const buf *pkv[64];
    for (size_t i = 0; i < w->t->npk && i < 64; i++) {
        if (w->k.pk[i].n != 1) return 0; /* conditions name one partition */
        pkv[i] = &w->k.pk[i].v[0];
    }
    buf pk;
    buf_init(&pk, 0);
    buf_append(&pk, W_ITEM(w, 0)->pk.data, W_ITEM(w, 0)->pk.len);
    size_t had = w->set->n, owned = w->nidx;
    witem *st = target(w, &pk, NULL, 1, pkv, NULL);
    buf_free(&pk);
    if (st == NULL) return -1;
    if (w->set->n > had) st->written = 0;
    w->static_at = (long)(st - w->set->items);
    w->nidx = owned;
    return 0;
}

static int cmp_ck(const void *a, const void *b)
{
    const witem *x = *(const witem *const *)a, *y = *(const witem *const *)b;
    size_t n = x->ck.len < y->ck.len ? x->ck.len : y->ck.len;
    int c = n ? memcmp(x->ck.data, y->ck.data, n) : 0;
    return c ? c : (x->ck.len > y->ck.len) - (x->ck.len < y->ck.len);
}

/* A batch whose conditions failed answers as Cassandra's does: [applied] false beside
 * the primary key and the conditions' columns (every column when a statement says IF
 * EXISTS or IF NOT EXISTS), one row per row the conditions read that exists, in
 * clustering order (conditions on static columns only read the partition's first row). */
static int answer_batch_not_applied(wctx *ws, size_t n)
{
    wctx *w0 = NULL;
    for (size_t i = 0; i < n && !w0; i++)
        if (conditional(&ws[i])) w0 = &ws[i];
    if (w0 == NULL) return answer_applied(&ws[0], 0, NULL, NULL, NULL, 0, 0);
    const cql_tinfo *t = w0->t;
    static const cql_type t_bool = {.id = CQL_TYPE_BOOLEAN};
    const cql_tcol *cols[256];
    size_t nc = 0;
    int wildcard = 0, statics_only = 1;
    for (size_t i = 0; i < n; i++) {
        if (!conditional(&ws[i])) continue;
        if (ws[i].s->if_exists || ws[i].s->if_not_exists) wildcard = 1;
        size_t nn;
        const cql_relation *conds = conds_of(&ws[i], &nn);
        for (size_t j = 0; j < nn; j++) {
            const cql_tcol *c = cql_tinfo_col(t, conds[j].columns[0]);
            statics_only &= c != NULL && c->kind == 's';
        }
    }
    if (wildcard) {
        statics_only = 0;
        for (size_t i = 0; i < t->ncols && nc < 256; i++)
            cols[nc++] = &t->cols[i];
    } else {
        for (int kind = 0; kind < 2; kind++)
            for (size_t pos = 0; pos < (kind ? t->nck : t->npk); pos++)
                for (size_t i = 0; i < t->ncols && nc < 256; i++)
                    if (t->cols[i].kind == (kind ? 'c' : 'p') && t->cols[i].pos == (int)pos)
                        cols[nc++] = &t->cols[i];
        for (size_t i = 0; i < n; i++) {
            if (!conditional(&ws[i])) continue;
            size_t nn;
            const cql_relation *conds = conds_of(&ws[i], &nn);
            for (int pass = 0; pass < 2; pass++)
                for (size_t j = 0; j < nn && nc < 256; j++) {
                    const cql_tcol *c = cql_tinfo_col(t, conds[j].columns[0]);
                    if (c == NULL || (c->kind == 's') != pass) continue;
                    int seen = 0;
                    for (size_t k = 0; k < nc && !seen; k++)
                        seen = cols[k] == c;
                    if (!seen) cols[nc++] = c;
                }
        }
    }
    /* the rows read */
    json_t *stat = NULL, *first = NULL;
    const witem *found[64];
    size_t nrows = 0;
    for (size_t i = 0; i < n; i++) {
        if (!conditional(&ws[i])) continue;
        if (stat == NULL) stat = live_item(static_item(&ws[i]));
        witem *m = main_item(&ws[i]);
        if (statics_only || m == NULL || m->is_static || !m->existed) continue;
        int seen = 0;
        for (size_t k = 0; k < nrows && !seen; k++)
            seen = found[k] == m;
        if (!seen && nrows < 64) found[nrows++] = m;
    }
    if (nrows > 1) qsort(found, nrows, sizeof *found, cmp_ck);
    json_t *items[64];
    for (size_t k = 0; k < nrows; k++)
        items[k] = found[k]->item;
    if (statics_only) {
        witem *m = main_item(w0);
        int live = m ? partition_live(w0, &m->pk, &first) : 0;
        if (live < 0) return -1;
        if (live) items[nrows++] = first;
    }
    cql_rows rs;
    cql_rows_init(&rs, t->ks, t->name);
    int rc = cql_rows_column(&rs, "[applied]", &t_bool);
    for (size_t i = 0; nrows && i < nc && rc == 0; i++)
        rc = cql_rows_column(&rs, cols[i]->name, cols[i]->wire);
    uint8_t no = 0;
    for (size_t r = 0; rc == 0 && r < (nrows ? nrows : 1); r++) {
        rc = cql_rows_put(&rs, &no, 1);
        for (size_t i = 0; nrows && i < nc && rc == 0; i++)
            rc = put_cell(&rs, cols[i]->kind == 's' ? stat : items[r], cols[i], w0->now_s);
        rs.nrows++;
    }
    json_decref(first);
    return send_rows(&rs, w0->r->call, rc);
}

static int holds_bind(const cql_expr *e)
{
    if (e == NULL) return 0;
    if (e->kind == CQL_E_BIND) return 1;
    for (size_t i = 0; i < e->nitems; i++)
        if (holds_bind(e->items[i])) return 1;
    return 0;
}

/* The column an INSERT or UPDATE sets, the operation (operation_fits) and the value it
 * sets it to (c = v), checked as Cassandra prepares them: column by column, before the
 * key's values are read and the key found whole, so that a constant its column cannot hold
 * is refused before a missing clustering key is. A value with a bind marker is read when
 * bound, as there. *col is the column: 0, or -1 with the error set. */
static int prepare_assignment(wctx *w, const char *name, cql_assign_kind kind,
                              const cql_expr *value, const cql_expr *key, const cql_tcol **col)
{
    cql_call *c = w->r->call;
    *col = cql_tinfo_col(w->t, name);
    if (*col == NULL)
        return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s", name,
                        w->t->ks, w->t->name);
    if ((*col)->kind == 'p' || (*col)->kind == 'c') {
        if (w->s->kind == CQL_INSERT) return 0;
        return cql_fail(c, CQL_ERR_INVALID, "PRIMARY KEY part %s found in SET part", (*col)->name);
    }
    if (operation_fits(w, *col, kind, value, key) != 0) return -1;
    if (kind != CQL_SET_VALUE || value == NULL || holds_bind(value) ||
        cqltype_has_counter((*col)->type))
        return 0;
    buf v;
    buf_init(&v, 0);
    int rc = cql_term(w->r, (*col)->type, (*col)->name, value, &v);
    buf_free(&v);
    return rc == CQLVAL_ERROR ? -1 : 0;
}

/* The IF conditions of an UPDATE or DELETE checked as Cassandra prepares them, before the
 * columns set or deleted and the key: each column known, its field (u.f) known, a constant
 * compared with a whole column one of its type, and no key column. Values with a bind
 * marker, and those of an element or a field, are read when the conditions are evaluated.
 * 0, or -1 with the error set. */
static int prepare_conditions(wctx *w)
{
    size_t n;
    const cql_relation *conds = conds_of(w, &n);
    for (size_t i = 0; i < n; i++) {
        const cql_relation *rel = &conds[i];
        const cql_tcol *col = cql_tinfo_col(w->t, rel->columns[0]);
        const cql_ctype *type;
        if (col == NULL)
            return cql_fail(w->r->call, CQL_ERR_INVALID, "Undefined column name %s",
                            rel->columns[0]);
        if (cond_type(w, rel, col, &type) != 0) return -1;
        int listed = rel->op == CQL_OP_IN;
        const cql_expr *const *terms =
            listed ? (const cql_expr *const *)rel->values : (const cql_expr *const *)&rel->value;
        size_t nterms = rel->kind != CQL_REL_COLUMN ? 0 : listed ? rel->nvalues : 1;
        for (size_t j = 0; j < nterms; j++) {
            if (terms[j] == NULL || holds_bind(terms[j])) continue;
            buf v;
            buf_init(&v, 0);
            int rc = cql_term(w->r, type, col->name, terms[j], &v);
            buf_free(&v);
            if (rc == CQLVAL_ERROR) return -1;
        }
        if (col->kind == 'p' || col->kind == 'c')
            return cql_fail(w->r->call, CQL_ERR_INVALID,
                            "PRIMARY KEY column '%s' cannot have IF conditions", col->name);
    }
    return 0;
}

/* INSERT and UPDATE: the items the assignments (checked by prepare_assignment) change. */
static int plan_assign(wctx *w)
{
    cql_call *c = w->r->call;
    const cql_keys *k = &w->k;
    int statics = 0, rows = 0;
    for (size_t i = 0; i < w->nassign; i++) {
        const cql_tcol *col = cql_tinfo_col(w->t, w->cols[i]);
        if (col->kind == 'p' || col->kind == 'c') continue;
        if (col->kind == 's')
            statics = 1;
        else
            rows = 1;
    }
    /* static columns set under conditions on the row's columns: the row is read for them,
     * and none of its cells change */
    size_t nconds;
    const cql_relation *conds = conds_of(w, &nconds);
    if (conditions_on_regular(w->t, conds, nconds)) rows = 1;
    /* an INSERT writes its row, unless it sets only static columns and names no
     * clustering column (then it writes the partition's static row alone) */
    if ((w->insert && !(statics && !rows && k->ck_eq == 0)) || (!statics && !rows)) rows = 1;
    if (w->t->nck && k->ck_eq < w->t->nck && rows) {
        char names[256] = "";
        size_t used = 0;
        for (size_t i = k->ck_eq; i < w->t->nck; i++) {
            const cql_tcol *col = key_col(w->t, 'c', i);
            used += (size_t)snprintf(names + used, used < sizeof names ? sizeof names - used : 0,
                                     "%s%s", used ? ", " : "", col->name);
        }
        return cql_fail(c, CQL_ERR_INVALID, "Some clustering keys are missing: %s", names);
    }
    if (w->t->nck == 0) statics = 0;
    w->rows = rows;
    if (targets(w, k, statics, rows) != 0) return -1;
    return 0;
}

static int apply_assign(wctx *w)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->nidx; i++) {
        witem *it = W_ITEM(w, i);
        int gone = shadowed(w, it);
        if (gone) {
            rc = gone < 0 ? -1 : 0;
            continue;
        }
        if (w->insert && !it->is_static) cql_row_mark(it->item, w->ts, w->exp_s);
        for (size_t j = 0; rc == 0 && j < w->nassign; j++) {
            const cql_tcol *col = cql_tinfo_col(w->t, w->cols[j]);
            if (col->kind == 'p' || col->kind == 'c') continue;
            if ((col->kind == 's') != it->is_static && w->t->nck) continue;
            if (w->kinds[j] == CQL_SET_FIELD)
                rc = set_field(w, it->item, col, w->efields[j], w->values[j]);
            else
                rc = assign(w, it->item, col, w->kinds[j], w->values[j],
                            w->ekeys ? w->ekeys[j] : NULL);
        }
    }
    return rc;
}

/* INSERT JSON: the map's values turned into the values of made-up bind markers, one per
 * column named (and, with DEFAULT NULL, a null for every other column). */
static int json_columns(wctx *w, const cql_insert *in, cql_insert *out)
{
    cql_call *c = w->r->call;
    buf text;
    buf_init(&text, 0);
    if (in->json->kind == CQL_E_STRING) {
        buf_puts(&text, in->json->text);
    } else {
        int rc = cql_term(w->r, cqltype_native(CQL_TYPE_VARCHAR), "[json]", in->json, &text);
        if (rc != CQLVAL_OK) {
            buf_free(&text);
            return rc == CQLVAL_ERROR
                       ? -1
                       : cql_fail(c, CQL_ERR_INVALID, "Got null for INSERT JSON values");
        }
    }
    /* numbers keep their text: a varint past 64 bits, a decimal's scale */
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    json_t *map = cqlval_json_object(text.data ? text.data : "", text.len, &perr);
    buf_free(&text);
    if (map == NULL) return cql_fail(c, CQL_ERR_INVALID, "%s", perr.msg);
    size_t n = w->t->ncols;
    w->jbytes = calloc(n + 1, sizeof *w->jbytes);
    w->jexprs = calloc(n + 1, sizeof *w->jexprs);
    w->jcols = calloc(n + 1, sizeof *w->jcols);
    w->jvalues.values = calloc(n + 1, sizeof *w->jvalues.values);
    if (!w->jbytes || !w->jexprs || !w->jcols || !w->jvalues.values) {
        json_decref(map);
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    }
    int rc = 0;
    const char *key;
    json_t *v;
    json_object_foreach(map, key, v)
    {
        char name[CQL_NAME_MAX];
        size_t kl = strlen(key);
        if (kl >= 2 && key[0] == '"' && key[kl - 1] == '"') {
            snprintf(name, sizeof name, "%.*s", (int)(kl - 2), key + 1);
        } else {
            snprintf(name, sizeof name, "%s", key);
            for (char *p = name; *p; p++)
                if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
        }
        const cql_tcol *col = cql_tinfo_col(w->t, name);
        if (col == NULL) {
            rc = cql_fail(c, CQL_ERR_INVALID, "JSON values map contains unrecognized column: %s",
                          name);
            break;
        }
        size_t i = w->nj;
        buf_init(&w->jbytes[i], 0);
        memset(&perr, 0, sizeof perr);
        int got = cqlval_from_json(col->type, col->name, v, &w->jbytes[i], &perr);
        if (got == CQLVAL_ERROR) {
            buf_free(&w->jbytes[i]);
            rc = cql_fail(c, CQL_ERR_INVALID, "Error decoding JSON value for %s: %s", col->name,
                          perr.msg);
            break;
        }
        w->jcols[i] = col->name;
        w->nj++;
        w->jvalues.values[i].p = (const uint8_t *)w->jbytes[i].data;
        w->jvalues.values[i].len = got == CQLVAL_OK ? (int32_t)w->jbytes[i].len : CQL_NULL;
    }
    json_decref(map);
    if (rc) return -1;
    /* the columns the map leaves out: null (DEFAULT NULL), or untouched (DEFAULT UNSET) */
    if (!in->default_unset) {
        for (size_t i = 0; i < n; i++) {
            const cql_tcol *col = &w->t->cols[i];
            int named = 0;
            for (size_t j = 0; j < w->nj; j++)
                named |= strcmp(w->jcols[j], col->name) == 0;
            if (named || col->kind == 'p' || col->kind == 'c') continue;
            buf_init(&w->jbytes[w->nj], 0);
            w->jcols[w->nj] = col->name;
            w->jvalues.values[w->nj].len = CQL_NULL;
            w->nj++;
        }
    }
    cql_expr **exprs = calloc(w->nj + 1, sizeof *exprs);
    if (exprs == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    for (size_t i = 0; i < w->nj; i++) {
        w->jexprs[i].kind = CQL_E_BIND;
        w->jexprs[i].bind = (int)i;
        exprs[i] = &w->jexprs[i];
    }
    w->jvalues.n = (uint16_t)w->nj;
    w->jrun = *w->r;
    w->jrun.values = &w->jvalues;
    w->r = &w->jrun;
    *out = *in;
    out->json = NULL;
    out->columns = w->jcols;
    out->ncolumns = w->nj;
    out->values = exprs;
    out->nvalues = w->nj;
    return 0;
}

static int plan_insert_columns(wctx *w, const cql_insert *in);

static int plan_insert(wctx *w)
{
    const cql_insert *in = &w->s->u.insert;
    if (in->json) {
        cql_insert plain;
        if (json_columns(w, in, &plain) != 0) return -1;
        int rc = plan_insert_columns(w, &plain);
        free(plain.values);
        return rc;
    }
    return plan_insert_columns(w, in);
}

static int plan_insert_columns(wctx *w, const cql_insert *in)
{
    cql_call *c = w->r->call;
    if (w->t->counter)
        return cql_fail(c, CQL_ERR_INVALID,
                        "INSERT statements are not allowed on counter tables, use UPDATE instead");
    if (in->ncolumns != in->nvalues)
        return cql_fail(c, CQL_ERR_INVALID, "Unmatched column names/values");
    for (size_t i = 0; i < in->ncolumns; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(in->columns[i], in->columns[j]) == 0)
                return cql_fail(c, CQL_ERR_INVALID, "The column names contains duplicates");
    if (usings(w, in->using, in->nusing, 1) != 0) return -1;
    cql_relation *rels = calloc(in->ncolumns + 1, sizeof *rels);
    if (rels == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    size_t nr = 0;
    for (size_t i = 0; i < in->ncolumns; i++) {
        const cql_tcol *col;
        if (prepare_assignment(w, in->columns[i], CQL_SET_VALUE, in->values[i], NULL, &col) != 0) {
            free(rels);
            return -1;
        }
        if (col->kind != 'p' && col->kind != 'c') continue;
        rels[nr].kind = CQL_REL_COLUMN;
        rels[nr].columns = &in->columns[i];
        rels[nr].ncolumns = 1;
        rels[nr].op = CQL_OP_EQ;
        rels[nr].value = in->values[i];
        nr++;
    }
    cql_where wh = {rels, nr};
    int rc = cql_where_keys(w->r, w->t, &wh, CQL_KEYS_INSERT, 0, &w->k);
    w->has_keys = 1;
    free(rels);
    if (rc) return -1;
    w->nassign = in->ncolumns;
    w->cols = calloc(w->nassign + 1, sizeof *w->cols);
    w->kinds = calloc(w->nassign + 1, sizeof *w->kinds);
    w->values = calloc(w->nassign + 1, sizeof *w->values);
    if (!w->cols || !w->kinds || !w->values) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    for (size_t i = 0; i < w->nassign; i++) {
        w->cols[i] = in->columns[i];
        w->values[i] = in->values[i];
    }
    w->insert = 1;
    return plan_assign(w);
}

/* 1 when where restricts a clustering column (alone or in a tuple). */
static int restricts_clustering(const cql_tinfo *t, const cql_where *where)
{
    for (size_t i = 0; i < where->n; i++)
        for (size_t j = 0; j < where->rels[i].ncolumns; j++) {
            const cql_tcol *col = cql_tinfo_col(t, where->rels[i].columns[j]);
            if (col && col->kind == 'c' && where->rels[i].kind != CQL_REL_TOKEN) return 1;
        }
    return 0;
}

static int plan_update(wctx *w)
{
    const cql_update *up = &w->s->u.update;
    cql_call *c = w->r->call;
    if (usings(w, up->using, up->nusing, 1) != 0 || prepare_conditions(w) != 0) return -1;
    /* a statement that sets only static columns names no row: Cassandra refuses one that
     * restricts a clustering column, as a sign of a mistake */
    int statics_only = up->nset > 0 && w->t->nck > 0;
    for (size_t i = 0; i < up->nset; i++) {
        const cql_tcol *col;
        if (prepare_assignment(w, up->set[i].column, up->set[i].kind, up->set[i].value,
                               up->set[i].key, &col))
            return -1;
        statics_only &= col->kind == 's';
    }
    statics_only &= !conditions_on_regular(w->t, up->conds, up->nconds);
    if (statics_only && restricts_clustering(w->t, &up->where))
        return cql_fail(c, CQL_ERR_INVALID,
                        "Invalid restrictions on clustering columns since the UPDATE statement "
                        "modifies only static columns");
    int rc = cql_where_keys(w->r, w->t, &up->where, CQL_KEYS_UPDATE, 0, &w->k);
    w->has_keys = 1;
    /* a statement that sets only static columns needs no clustering key */
    if (rc != 0 && statics_only && strncmp(c->msg, "Some clustering keys are missing", 32) == 0) {
        c->failed = 0;
        cql_keys_free(&w->k);
        rc = cql_where_keys(w->r, w->t, &up->where, CQL_KEYS_DELETE, 0, &w->k);
    }
    if (rc || conditional_in(w, &up->where, "updates") != 0) return -1;
    size_t n = up->nset;
    w->nassign = n;
    w->cols = calloc(n + 1, sizeof *w->cols);
    w->kinds = calloc(n + 1, sizeof *w->kinds);
    w->values = calloc(n + 1, sizeof *w->values);
    w->ekeys = calloc(n + 1, sizeof *w->ekeys);
    w->efields = calloc(n + 1, sizeof *w->efields);
    if (!w->cols || !w->kinds || !w->values || !w->ekeys || !w->efields)
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    for (size_t i = 0; i < n; i++) {
        w->cols[i] = up->set[i].column;
        w->kinds[i] = up->set[i].kind;
        w->values[i] = up->set[i].value;
        w->ekeys[i] = up->set[i].key;
        w->efields[i] = up->set[i].field;
    }
    return plan_assign(w);
}

/* ---- DELETE ---- */

/* The items of a partition's live rows in a range (the whole partition when lo and hi
 * are empty), read to be deleted: the others take the deletion from their partition's
 * item when next written (inherit_deletions). */
static int range_items(wctx *w, const buf *pk, const buf *lo, const buf *hi, int with_static)
{
    qr_err err;
    err_init(&err);
    buf lower, upper;
    buf_init(&lower, 0);
    buf_init(&upper, 0);
    if (cql_partition_bounds(w->et, pk, lo, hi, with_static, &lower, &upper, &err) != 0) {
        buf_free(&lower);
        buf_free(&upper);
        return cql_fail_engine(w->r->call, CQL_ERR_SERVER, &err);
    }
    range_cursor *cur = cursor_open(w->r->call->db, w->et, NULL, &lower, &upper, 1, 1, NULL);
    const char *json;
    size_t len, size;
    int got;
    while ((got = cursor_next(cur, &json, &len, &size, &err)) == 1) {
        json_t *item = json_loadb(json, len, 0, NULL);
        json_t *ckav = json_object_get(item, CQL_CK_ATTR);
        if (item && !cql_row_live(item, w->t, w->now_s)) {
            json_decref(item);
            continue;
        }
        buf ck;
        buf_init(&ck, 0);
        if (ckav) cql_unb64(ckav, &ck);
        witem *it =
            target(w, pk, &ck, ck.len == 1 && (uint8_t)ck.data[0] == CQL_CK_STATIC, NULL, NULL);
        buf_free(&ck);
        json_decref(item);
        if (it == NULL) {
            got = -1;
            break;
        }
    }
    cursor_close(cur);
    buf_free(&lower);
    buf_free(&upper);
    if (got < 0) return cql_fail_engine(w->r->call, CQL_ERR_SERVER, &err);
    return 0;
}

typedef struct delctx {
    wctx *w;
    const cql_keys *k;
    int cells; /* columns named: only they go */
    buf pk;
    const buf *const *pkv;
} delctx;

/* Records the deletion of the rows in [lo, hi) of d's partition, to be kept in its static
 * row item. */
static int add_range(delctx *d, const buf *lo, const buf *hi)
{
    wctx *w = d->w;
    if (cql_table_note_deletions(w->r->call, w->t, w->et) != 0) return -1;
    witem *part = target(w, &d->pk, NULL, 1, d->pkv, NULL);
    if (part == NULL) return -1;
    struct del_range *n = realloc(w->ranges, (w->nranges + 1) * sizeof *n);
    if (n == NULL) return cql_fail(w->r->call, CQL_ERR_SERVER, "out of memory");
    w->ranges = n;
    struct del_range *r = &w->ranges[w->nranges++];
    r->part = (size_t)(part - w->set->items);
    buf_init(&r->lo, 0);
    buf_init(&r->hi, 0);
    if (buf_append(&r->lo, lo->data ? lo->data : "", lo->len) != 0 ||
        buf_append(&r->hi, hi->data ? hi->data : "", hi->len) != 0)
        return cql_fail(w->r->call, CQL_ERR_SERVER, "out of memory");
    return 0;
}

static int del_ck(void *arg, const buf *const *ckv)
{
    delctx *d = arg;
    wctx *w = d->w;
    const cql_keys *k = d->k;
    buf prefix;
    buf_init(&prefix, 0);
    int rc = ck_of(w->t, ckv, k->ck_eq, &prefix);
    if (rc == 0 && k->ck_eq == w->t->nck && !k->slice) {
        witem *it = target(w, &d->pk, &prefix, 0, d->pkv, ckv);
        rc = it ? 0 : -1;
    } else if (rc == 0) {
        /* each range of the slice (several over clustering columns of mixed orders) */
        size_t n = cql_slice_count(k);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            buf lo, hi;
            buf_init(&lo, 0);
            buf_init(&hi, 0);
            cql_slice_range(&prefix, k, i, &lo, &hi);
            rc = range_items(w, &d->pk, &lo, &hi, 0);
            if (rc == 0 && !d->cells) rc = add_range(d, &lo, &hi);
            buf_free(&lo);
            buf_free(&hi);
        }
    }
    buf_free(&prefix);
    return rc;
}

static int del_pk(void *arg, const buf *const *pkv)
{
    delctx *d = arg;
    wctx *w = d->w;
    buf_reset(&d->pk);
    if (pk_of(w->r->call, w->t, pkv, &d->pk) != 0) return -1;
    d->pkv = pkv;
    if (w->t->nck == 0) return target(w, &d->pk, NULL, 0, pkv, NULL) ? 0 : -1;
    if (d->cells) {
        /* the static row for static columns, the row for the others */
        int statics = 0, rows = 0;
        const cql_delete *del = &w->s->u.del;
        for (size_t i = 0; i < del->ncols; i++) {
            const cql_tcol *col = cql_tinfo_col(w->t, del->cols[i].column);
            if (col && col->kind == 's')
                statics = 1;
            else
                rows = 1;
        }
        if (statics && target(w, &d->pk, NULL, 1, pkv, NULL) == NULL) return -1;
        /* static columns deleted under conditions on the row's columns: the row is read
         * for them, and nothing of it is deleted */
        if (!rows && !conditions_on_regular(w->t, del->conds, del->nconds)) return 0;
        if (!rows) return cql_each_prefix(d->k, d->k->ck_eq, del_ck, d);
        if (d->k->ck_eq < w->t->nck || d->k->slice)
            return cql_fail(w->r->call, CQL_ERR_INVALID,
                            "Range deletions are not supported for specific columns");
    } else if (d->k->ck_eq == 0 && !d->k->slice) {
        /* the whole partition: its deletion is kept in its static row item */
        if (cql_table_note_deletions(w->r->call, w->t, w->et) != 0) return -1;
        if (target(w, &d->pk, NULL, 1, pkv, NULL) == NULL) return -1;
        buf none;
        buf_init(&none, 0);
        int rc = range_items(w, &d->pk, &none, &none, 1);
        buf_free(&none);
        return rc;
    }
    return cql_each_prefix(d->k, d->k->ck_eq, del_ck, d);
}

static int plan_delete(wctx *w)
{
    const cql_delete *del = &w->s->u.del;
    cql_call *c = w->r->call;
    if (usings(w, del->using, del->nusing, 0) != 0 || prepare_conditions(w) != 0) return -1;
    for (size_t i = 0; i < del->ncols; i++) {
        const cql_tcol *col = cql_tinfo_col(w->t, del->cols[i].column);
        if (col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            del->cols[i].column, w->t->ks, w->t->name);
        if (col->kind == 'p' || col->kind == 'c')
            return cql_fail(c, CQL_ERR_INVALID,
                            "Invalid identifier %s for deletion (should not be a PRIMARY KEY part)",
                            col->name);
    }
    int only_static = del->ncols > 0;
    for (size_t i = 0; i < del->ncols; i++)
        only_static &= cql_tinfo_col(w->t, del->cols[i].column)->kind == 's';
    if (only_static && !conditions_on_regular(w->t, del->conds, del->nconds) &&
        restricts_clustering(w->t, &del->where))
        return cql_fail(c, CQL_ERR_INVALID,
                        "Invalid restrictions on clustering columns since the DELETE statement "
                        "modifies only static columns");
    if (cql_where_keys(w->r, w->t, &del->where, CQL_KEYS_DELETE, 0, &w->k) != 0) {
        w->has_keys = 1;
        return -1;
    }
    w->has_keys = 1;
    if (conditional_in(w, &del->where, "deletions") != 0) return -1;
    /* a conditional deletion names one row, unless it deletes static columns only under
     * conditions on static columns only (Cassandra's DeleteStatement) */
    if (conditional(w) && (w->k.ck_eq < w->t->nck || w->k.slice)) {
        int regular_conds = 0;
        for (size_t i = 0; i < del->nconds; i++) {
            const cql_tcol *col = cql_tinfo_col(w->t, del->conds[i].columns[0]);
            regular_conds |= col && col->kind != 's';
        }
        if (!only_static || regular_conds)
            return cql_fail(c, CQL_ERR_INVALID,
                            "DELETE statements must restrict all PRIMARY KEY columns with "
                            "equality relations in order to %s",
                            !only_static ? "delete non static columns"
                                         : "use IF condition on non static columns");
    }
    delctx d = {.w = w, .k = &w->k, .cells = del->ncols > 0};
    buf_init(&d.pk, 0);
    int rc = cql_each_combination(w->k.pk, w->t->npk, del_pk, &d);
    buf_free(&d.pk);
    if (rc) return -1;
    return 0;
}

static int apply_delete(wctx *w)
{
    const cql_delete *del = &w->s->u.del;
    cql_call *c = w->r->call;
    int64_t until = w->now_s + w->t->gc_grace;
    int whole = !w->k.ck_eq && !w->k.slice; /* the partition, static row and all */
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->nidx; i++) {
        witem *it = W_ITEM(w, i);
        if (del->ncols == 0) {
            /* a range's deletion is kept in its static row item, not as the static row's */
            if (it->is_static && !whole) continue;
            if (cql_row_delete(it->item, w->t, w->ts, until) != 0)
                rc = cql_fail(c, CQL_ERR_SERVER, "out of memory");
            continue;
        }
        int gone = shadowed(w, it); /* deleted as late already */
        if (gone) {
            rc = gone < 0 ? -1 : 0;
            continue;
        }
        cql_tombstone_keep(it->item, until);
        for (size_t j = 0; rc == 0 && j < del->ncols; j++) {
            const cql_tcol *col = cql_tinfo_col(w->t, del->cols[j].column);
            if ((col->kind == 's') != it->is_static && w->t->nck) continue;
            if (del->cols[j].field)
                rc = set_field(w, it->item, col, del->cols[j].field, NULL);
            else if (del->cols[j].key)
                rc = assign(w, it->item, col, CQL_SET_ELEMENT, NULL, del->cols[j].key);
            else if (cql_cell_write(it->item, col, NULL, -1, w->ts, 0) < 0)
                rc = cql_fail(c, CQL_ERR_SERVER, "out of memory");
        }
    }
    for (size_t i = 0; rc == 0 && i < w->nranges; i++) {
        struct del_range *r = &w->ranges[i];
        if (cql_range_delete(w->set->items[r->part].item, &r->lo, &r->hi, w->ts, until, w->now_s) !=
            0)
            rc = cql_fail(c, CQL_ERR_SERVER, "out of memory");
    }
    return rc;
}

/* ---- statements ---- */

/* Readies w for statement s of run r: its table, then its plan. */
static int stmt_plan(wctx *w, cql_run *r, const cql_stmt *s, cql_tinfo *t, wset *set)
{
    cql_call *c = r->call;
    memset(w, 0, sizeof *w);
    w->r = r;
    w->s = s;
    w->t = t;
    w->set = set;
    w->ts = r->timestamp;
    w->now_s = cql_now_us() / 1000000;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    if (cql_tinfo_load(c, ks, s->name.name, t) != 0) return -1;
    if (t->system)
        return cql_fail(c, CQL_ERR_UNAUTHORIZED, "%s keyspace is not user-modifiable.", ks);
    if (t->view) return cql_fail(c, CQL_ERR_INVALID, "Cannot directly modify a materialized view");
    w->et = cql_engine_table(c, t);
    if (w->et == NULL) return -1;
    int rc;
    switch (s->kind) {
    case CQL_INSERT:
        rc = plan_insert(w);
        break;
    case CQL_UPDATE:
        rc = plan_update(w);
        break;
    case CQL_DELETE:
        rc = plan_delete(w);
        break;
    default:
        return cql_fail(c, CQL_ERR_INVALID,
                        "Invalid statement in batch: only UPDATE, INSERT and DELETE statements "
                        "are allowed.");
    }
    return rc == 0 ? plan_static_read(w) : rc;
}

static int stmt_apply(wctx *w)
{
    return w->s->kind == CQL_DELETE ? apply_delete(w) : apply_assign(w);
}

static int answer_void(cql_call *c)
{
    buf_reset(&c->body);
    return cql_write_void(&c->body) ? cql_fail(c, CQL_ERR_SERVER, "out of memory") : 0;
}

int cql_exec_write(cql_run *r, const cql_stmt *s)
{
    cql_call *c = r->call;
    wset set;
    memset(&set, 0, sizeof set);
    cql_tinfo t;
    memset(&t, 0, sizeof t);
    arena_init(&t.arena, 0);
    wctx w;
    uint64_t watched = watch_begin_write(c->db);
    int rc = stmt_plan(&w, r, s, &t, &set);
    item_txn *x = NULL;
    if (rc == 0 && set.n == 0) {
        /* nothing to change (a range with no rows) */
        rc = conditional(&w) ? answer_applied(&w, 0, NULL, NULL, NULL, 0, 0) : answer_void(c);
        goto out;
    }
    if (rc == 0) rc = begin(&set, c, w.now_s, &x);
    if (rc == 0) {
        int holds = check(&w);
        if (holds < 0) rc = -1;
        if (holds == 0) {
            rc = answer_not_applied(&w);
            goto out;
        }
    }
    if (rc == 0) rc = stmt_apply(&w);
    if (rc == 0) rc = finish(&set, c, w.now_s, x);
    if (rc == 0) cql_watch_write(c, w.et, s, &t, watched);
    if (rc == 0)
        rc = conditional(&w) ? answer_applied(&w, 1, NULL, NULL, NULL, 0, 0) : answer_void(c);
out:
    txn_end(x);
    wctx_free(&w);
    wset_free(&set);
    cql_tinfo_free(&t);
    return rc;
}

/* ---- BATCH ---- */

/* The one partition statement w names, serialized into out: 0, or -1 when it names
 * several (IN on the partition key). */
static int stmt_partition(const wctx *w, buf *out)
{
    const buf *pkv[64];
    if (w->t->npk > 64) return -1;
    for (size_t i = 0; i < w->t->npk; i++) {
        if (w->k.pk == NULL || w->k.pk[i].n != 1) return -1;
        pkv[i] = &w->k.pk[i].v[0];
    }
    return pk_of(NULL, w->t, pkv, out) == 0 ? 0 : -1;
}

/* Cassandra's batch_size_warn_threshold_in_kb and batch_size_fail_threshold_in_kb
 * defaults: a batch over several partitions whose writes hold more data than the first
 * gets a client warning, more than the second is refused. */
#define BATCH_WARN_BYTES (5 * 1024)
#define BATCH_FAIL_BYTES (50 * 1024)
/* Cassandra's unlogged_batch_across_partitions_warn_threshold default: an unlogged batch
 * over more partitions than this gets a client warning. */
#define UNLOGGED_BATCH_WARN_PARTITIONS 10

/* The bytes of data a term writes: a constant's text, a bound value, a collection's or
 * call's items. */
static size_t term_bytes(cql_run *r, const cql_expr *e, int depth)
{
    if (e == NULL || depth > CQL_TYPE_MAX_DEPTH) return 0;
    if (e->kind == CQL_E_BIND) {
        cql_value v;
        return cql_bound(r, e, &v) == 1 && v.len > 0 ? (size_t)v.len : 0;
    }
    size_t n = e->kind != CQL_E_FUNCTION && e->text ? strlen(e->text) : 0;
    for (size_t i = 0; i < e->nitems; i++)
        n += term_bytes(r, e->items[i], depth + 1);
    return n;
}

/* The bytes of data statement s of run r writes, as Cassandra's batch size counts them
 * (its values; keys are small beside them). */
static size_t stmt_bytes(cql_run *r, const cql_stmt *s)
{
    size_t n = 0;
    if (s->kind == CQL_INSERT) {
        n += term_bytes(r, s->u.insert.json, 0);
        for (size_t i = 0; i < s->u.insert.nvalues; i++)
            n += term_bytes(r, s->u.insert.values[i], 0);
    } else if (s->kind == CQL_UPDATE) {
        for (size_t i = 0; i < s->u.update.nset; i++)
            n += term_bytes(r, s->u.update.set[i].key, 0) +
                 term_bytes(r, s->u.update.set[i].value, 0);
    }
    return n;
}

/* Appends "[ks.a, ks.b]", the tables the statements write, each once, as Cassandra names
 * a batch's tables in its warnings, and counts them in *count. 0, or -1 out of memory. */
static int batch_tables(const wctx *ws, size_t n, buf *out, size_t *count)
{
    *count = 0;
    int rc = buf_putc(out, '[');
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t seen = 0;
        while (seen < i && ws[seen].t != ws[i].t &&
               (strcmp(ws[seen].t->ks, ws[i].t->ks) || strcmp(ws[seen].t->name, ws[i].t->name)))
            seen++;
        if (seen < i) continue;
        if ((*count)++) rc = buf_append(out, ", ", 2);
        if (rc == 0) rc = buf_printf(out, "%s.%s", ws[i].t->ks, ws[i].t->name);
    }
    if (rc == 0) rc = buf_putc(out, ']');
    if (rc == 0) rc = buf_putc(out, '\0');
    return rc;
}

/* How many partition keys the set's written items have, each counted once (Cassandra
 * counts keys, whatever their table). */
static size_t written_partitions(const wset *set)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        if (!set->items[i].written) continue;
        size_t j = 0;
        while (j < i && !(set->items[j].written &&
                          cql_same_bytes(set->items[j].pk.data, set->items[j].pk.len,
                                         set->items[i].pk.data, set->items[i].pk.len)))
            j++;
        if (j == i) n++;
    }
    return n;
}

/* Cassandra's verifyBatchSize and verifyBatchType for a batch without conditions over
 * several partitions: refused past the fail threshold, else client warnings for its size
 * and, unlogged, for the partitions it covers. 0, or -1 with the call's error set. */
static int check_batch_spread(cql_call *c, cql_run *const *runs, const cql_stmt *const *stmts,
                              const wctx *ws, size_t n, const wset *set, int logged)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += stmt_bytes(runs[i], stmts[i]);
    if (bytes > BATCH_FAIL_BYTES) return cql_fail(c, CQL_ERR_INVALID, "Batch too large");
    size_t parts = logged ? 0 : written_partitions(set);
    if (bytes <= BATCH_WARN_BYTES && parts <= UNLOGGED_BATCH_WARN_PARTITIONS) return 0;
    buf tables;
    buf_init(&tables, 0);
    size_t ntables;
    if (batch_tables(ws, n, &tables, &ntables) != 0) {
        buf_free(&tables);
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    }
    if (bytes > BATCH_WARN_BYTES)
        cql_warn(c, "Batch for %s is of size %zu, exceeding specified threshold of %d by %zu.",
                 (const char *)tables.data, bytes, BATCH_WARN_BYTES, bytes - BATCH_WARN_BYTES);
    if (parts > UNLOGGED_BATCH_WARN_PARTITIONS)
        cql_warn(c,
                 "Unlogged batch covering %zu partitions detected against table%s %s. You "
                 "should use a logged batch for atomicity, or asynchronous writes for "
                 "performance.",
                 parts, ntables == 1 ? "" : "s", (const char *)tables.data);
    buf_free(&tables);
    return 0;
}

/* Whether the set's items are in more than one partition. */
static int spans_partitions(const wset *set)
{
    for (size_t i = 1; i < set->n; i++)
        if (set->items[i].et != set->items[0].et ||
            !cql_same_bytes(set->items[i].pk.data, set->items[i].pk.len, set->items[0].pk.data,
                            set->items[0].pk.len))
            return 1;
    return 0;
}

int cql_exec_write_batch(cql_call *c, cql_run *const *runs, const cql_stmt *const *stmts, size_t n,
                         int counter_batch, int logged)
{
    if (n == 0) return answer_void(c);
    wset set;
    memset(&set, 0, sizeof set);
    cql_tinfo *ts = calloc(n, sizeof *ts);
    wctx *ws = calloc(n, sizeof *ws);
    int rc = ts && ws ? 0 : cql_fail(c, CQL_ERR_SERVER, "out of memory");
    size_t planned = 0, conds = 0;
    const char *conn = c->keyspace;
    uint64_t watched = watch_begin_write(c->db);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        arena_init(&ts[i].arena, 0);
        c->keyspace = runs[i]->keyspace ? runs[i]->keyspace : conn;
        rc = stmt_plan(&ws[i], runs[i], stmts[i], &ts[i], &set);
        c->keyspace = conn;
        planned = i + 1;
        if (rc) break;
        /* Cassandra's BatchStatement rules: counters in COUNTER or UNLOGGED batches, not
         * beside other writes */
        if (counter_batch && !ts[i].counter)
            rc = cql_fail(c, CQL_ERR_INVALID,
                          "Cannot include non-counter statement in a counter batch");
        else if (logged && ts[i].counter)
            rc = cql_fail(c, CQL_ERR_INVALID,
                          "Cannot include a counter statement in a logged batch");
        else if (i > 0 && ts[i].counter != ts[0].counter)
            rc = cql_fail(c, CQL_ERR_INVALID,
                          "Counter and non-counter mutations cannot exist in the same batch");
        if (conditional(&ws[i])) conds++;
    }
    /* conditions: one partition of one table, as Cassandra requires (a statement may
     * name rows that are not there: its keys say its partition) */
    buf pk0, pki;
    buf_init(&pk0, 0);
    buf_init(&pki, 0);
    if (rc == 0 && conds && stmt_partition(&ws[0], &pk0) != 0)
        rc = cql_fail(c, CQL_ERR_INVALID,
                      "Batch with conditions cannot span multiple partitions (you cannot use IN "
                      "on the partition key)");
    for (size_t i = 1; rc == 0 && conds && i < n; i++) {
        buf_reset(&pki);
        if (ws[i].et != ws[0].et || stmt_partition(&ws[i], &pki) != 0 ||
            !cql_same_bytes(pki.data, pki.len, pk0.data, pk0.len))
            rc = cql_fail(c, CQL_ERR_INVALID,
                          "Batch with conditions cannot span multiple tables or partitions");
    }
    buf_free(&pk0);
    buf_free(&pki);
    /* only a batch over several partitions is measured, as Cassandra's */
    if (rc == 0 && !conds && spans_partitions(&set))
        rc = check_batch_spread(c, runs, stmts, ws, n, &set, logged);
    item_txn *x = NULL;
    if (rc == 0 && set.n) rc = begin(&set, c, ws[0].now_s, &x);
    int held = 1;
    for (size_t i = 0; rc == 0 && i < n && set.n; i++) {
        int h = check(&ws[i]);
        if (h < 0) rc = -1;
        if (h == 0) held = 0;
    }
    if (rc == 0 && !held) rc = answer_batch_not_applied(ws, n);
    if (rc == 0 && held) {
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = stmt_apply(&ws[i]);
        if (rc == 0 && set.n) rc = finish(&set, c, ws[0].now_s, x);
        for (size_t i = 0; rc == 0 && i < n; i++)
            cql_watch_write(c, ws[i].et, stmts[i], &ts[i], watched);
        if (rc == 0)
            rc = conds ? answer_applied(&ws[0], 1, NULL, NULL, NULL, 0, 0) : answer_void(c);
    }
    txn_end(x);
    for (size_t i = 0; i < planned; i++)
        wctx_free(&ws[i]);
    wset_free(&set);
    for (size_t i = 0; ts && i < planned; i++)
        cql_tinfo_free(&ts[i]);
    free(ts);
    free(ws);
    return rc;
}

int cql_each_row_in_transactions(cql_call *c, table *et, cql_txn_row_fn fn, void *arg,
                                 int maintenance, qr_err *err)
{
    buf lower, upper;
    buf_init(&lower, 0);
    buf_init(&upper, 0);
    key_table_prefix(&lower, et, 0);
    buf_append(&upper, lower.data, lower.len);
    buf_prefix_successor(&upper);
    enum { CHUNK = 100 };
    buf keys[CHUNK];
    table *tables[CHUNK];
    for (size_t i = 0; i < CHUNK; i++) {
        buf_init(&keys[i], 0);
        tables[i] = et;
    }
    int rc = 0;
    for (;;) {
        size_t n = 0;
        range_cursor *cur = cursor_open(c->db, et, NULL, &lower, &upper, 1, 1, NULL);
        if (maintenance) cursor_set_system(cur);
        const char *json;
        size_t len, size;
        while (n < CHUNK && cursor_next(cur, &json, &len, &size, err) == 1) {
            json_t *item = json_loadb(json, len, 0, NULL);
            buf_reset(&keys[n]);
            if (item && key_item(&keys[n], et, item, err) == 0) n++;
            json_decref(item);
        }
        cursor_close(cur);
        if (n == 0) break;
        item_txn *x = NULL;
        int kind = (n == 1 ? TXN_ITEM : TXN_BATCH) | TXN_OWNER | (maintenance ? TXN_SYSTEM : 0);
        rc = txn_begin(c->db, kind, n, tables, keys, &x, err);
        json_t *keep[CHUNK] = {0}; /* what fn gave txn_put, until the transaction ends */
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = fn(arg, x, i, &keep[i], err);
        if (rc == 0) rc = txn_commit(x, err);
        txn_end(x);
        for (size_t i = 0; i < n; i++)
            json_decref(keep[i]);
        if (rc) break;
        buf_reset(&lower);
        buf_append(&lower, keys[n - 1].data, keys[n - 1].len);
        buf_putc(&lower, 0);
    }
    for (size_t i = 0; i < CHUNK; i++)
        buf_free(&keys[i]);
    buf_free(&lower);
    buf_free(&upper);
    catalog_release_after_writes(et);
    return rc;
}
