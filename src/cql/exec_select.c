/* exec_select.c — SELECT of a CQL table on the engine: the partitions the WHERE names
 * (or every partition, in the engine's order), each read with a range cursor over its
 * clustering prefix and slice, forward or backward for ORDER BY; static columns joined to
 * their partition's rows; rows filtered when ALLOW FILTERING let the query through; the
 * selection (columns, aliases, writetime(), ttl(), COUNT), DISTINCT, PER PARTITION LIMIT,
 * LIMIT, the rows of an IN's partitions sorted together for ORDER BY, and result paging
 * with an opaque paging_state.
 *
 * Reads use cursor_open and item_get only; the item layout is exec_row.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/exec_int.h"
#include "cql/aggregate.h"
#include "cql/exec_watch.h"
#include "cql/func.h"
#include "cql/keyenc.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"
#include "engine/engine.h"
#include "model/keycodec.h"
#include "model/value.h"
#include "util/jsonread.h"

/* How long an index read waits for the index to take the writes acknowledged before it. */
#define INDEX_CATCH_UP_MS 5000

/* ---- byte bounds ---- */

/* The escaped form the engine keeps a binary sort key in, without its terminator: raw
 * strings compare as their escaped forms do. */
static int escaped(buf *out, const buf *raw)
{
    json_t *av = cql_b64(raw->data ? raw->data : "", raw->len);
    size_t start = out->len;
    qr_err err;
    err_init(&err);
    int rc = keycodec_append(out, av, 0, &err);
    json_decref(av);
    if (rc == 0 && out->len >= start + 2) out->len -= 2; /* the 0x00 0x01 terminator */
    return rc;
}

int cql_partition_bounds(const table *et, const buf *pk, const buf *lo, const buf *hi,
                         int with_static, buf *lower, buf *upper, qr_err *err)
{
    json_t *av = cql_b64(pk->data ? pk->data : "", pk->len);
    const json_t *vals[1] = {av};
    buf part;
    buf_init(&part, 0);
    int rc = key_partition_tuple(&part, et, 0, vals, 1, err);
    json_decref(av);
    if (rc) {
        buf_free(&part);
        return -1;
    }
    buf_reset(lower);
    buf_reset(upper);
    buf_append(lower, part.data, part.len);
    buf_append(upper, part.data, part.len);
    if (table_sk(et)->name == NULL) {
        buf_prefix_successor(upper);
        buf_free(&part);
        return 0;
    }
    buf l;
    buf_init(&l, 0);
    if (lo->len)
        buf_append(&l, lo->data, lo->len);
    else if (!with_static)
        buf_putc(&l, CQL_CK_ROW);
    if (l.len) escaped(lower, &l);
    if (hi->len) {
        escaped(upper, hi);
    } else {
        buf_prefix_successor(upper);
    }
    buf_free(&l);
    buf_free(&part);
    return 0;
}

size_t cql_slice_count(const cql_keys *k)
{
    return k->slice ? k->ranges.n : 1;
}

void cql_slice_range(const buf *prefix, const cql_keys *k, size_t i, buf *lo, buf *hi)
{
    buf_reset(lo);
    buf_reset(hi);
    buf_append(lo, prefix->data, prefix->len);
    buf_append(hi, prefix->data, prefix->len);
    const cqlkey_range *r = k->slice && i < k->ranges.n ? &k->ranges.r[i] : NULL;
    if (r) buf_append(lo, r->lo.data, r->lo.len);
    if (r && !r->no_hi)
        buf_append(hi, r->hi.data, r->hi.len);
    else if (!k->slice || r)
        buf_prefix_successor(hi);
}

void cql_slice_bytes(const buf *prefix, const cql_keys *k, buf *lo, buf *hi)
{
    cql_slice_range(prefix, k, 0, lo, hi);
}

/* ---- the selection ---- */

typedef enum sel_kind { SEL_COLUMN, SEL_WRITETIME, SEL_TTL, SEL_COUNT, SEL_FN } sel_kind;
typedef struct selitem {
    sel_kind kind;
    const cql_tcol *col; /* NULL for COUNT(*) and functions */
    cql_fnsel fn;        /* SEL_FN */
    cqlagg agg;          /* SEL_COUNT: any aggregate */
    int agg_on;
    int agg_fn;           /* the aggregate's argument is the computed selector fn */
    int agg_cell;         /* 'w', 't': its argument is writetime(col) or ttl(col) */
    cql_fnagg *nested[8]; /* SEL_FN over aggregates (max(b) + 1): them */
    size_t nnested;
} selitem;

typedef struct qctx {
    cql_run *r;
    const cql_stmt *s;
    const cql_select *q;
    const cql_tinfo *t;
    table *et;
    cql_keys k;
    selitem *sels;
    size_t nsel;
    int aggregate; /* aggregates or GROUP BY: a row per group */
    size_t ngroup; /* GROUP BY's columns: a prefix of the primary key */
    const cql_tcol *group[64];
    buf group_key;  /* the current group's values */
    int in_group;   /* a group is open */
    cql_rows grow;  /* the group's first row: its plain selectors' values */
    int64_t groups; /* groups answered */
    cql_rows out;
    cql_rows jrow;            /* SELECT JSON: the selection's columns, one row at a time */
    int64_t limit, ppl, page; /* -1: none */
    int reversed;
    int token_ranged; /* the token restriction is the scan's key range */
    int64_t now_s;
    /* paging */
    uint32_t part_index;
    int64_t emitted_total;
    int64_t emitted_part;
    int64_t groups_part; /* GROUP BY: the groups opened in the current partition */
    buf last_key;        /* engine key of the last item read */
    buf cur_pk;          /* the serialized partition key of the last item read */
    int resume;          /* paging_state given */
    int full;            /* the page is full */
    int ended;           /* the last row emitted was a partition's static row alone */
    size_t nread;        /* items read, for the model watch */
    int metered;         /* the watch wants the bytes read: */
    size_t nbytes;       /* the sizes of the items read since the last charge */
    /* the current partition */
    cql_rowmap map;      /* what the rows' members hold, and which of them are read */
    cql_srow row;        /* the row being read (its memory kept from row to row) */
    cql_srow static_row; /* the partition's static row, when has_static */
    int has_static;
    int static_used;
    buf *vals; /* per column */
    int8_t *has;
    /* post-query ordering (IN on the partition key with ORDER BY): every row is gathered,
     * then sorted by the ordering columns' values and cut to the LIMIT */
    int post_order;
    int64_t post_limit;            /* the LIMIT, applied after the sort (-1: none) */
    const cql_tcol *order_col[64]; /* the ORDER BY columns */
    size_t norder_col;
    buf order_keys;  /* each answered row's ordering values (order_values), one after another */
    buf group_order; /* GROUP BY: the open group's first row's ordering values */
    struct answered *answered;
    size_t nanswered, answered_cap;
    /* a selector over aggregates reading a column too: the open group's first row */
    int first_row;
    buf *first_vals;
    int8_t *first_has;
} qctx;

/* A row of the answer and where its ordering values are, for post-query ordering. */
typedef struct answered {
    size_t at, len; /* its bytes in the answer's rows */
    size_t key_at;  /* its ordering values in order_keys */
} answered;

static const cql_tcol *col_named(const cql_tinfo *t, const char *name)
{
    return cql_tinfo_col(t, name);
}

/* 1 when key column at (partition key columns first, then the clustering ones) is
 * restricted to one value by the WHERE clause. */
static int key_fixed(const qctx *q, size_t at)
{
    if (at < q->t->npk) return q->k.partitions && q->k.pk[at].n == 1;
    at -= q->t->npk;
    return at < q->k.ck_eq && q->k.ck[at].n == 1;
}

/* The first column selector e reads that is neither a partition key nor a static column
 * (NULL when none), and through *reads whether it reads column want. */
static const cql_tcol *distinct_misfit(const cql_tinfo *t, const cql_expr *e, const cql_tcol *want,
                                       int *reads, int depth)
{
    if (e == NULL || depth > CQL_TYPE_MAX_DEPTH) return NULL;
    if (e->kind == CQL_E_COLUMN) {
        const cql_tcol *col = col_named(t, e->text);
        if (col && col == want) *reads = 1;
        return col && col->kind != 'p' && col->kind != 's' ? col : NULL;
    }
    const cql_tcol *bad = NULL;
    for (size_t i = 0; i < e->nitems; i++) {
        const cql_tcol *b = distinct_misfit(t, e->items[i], want, reads, depth + 1);
        if (bad == NULL) bad = b;
    }
    return bad;
}

static int plan_selection(qctx *q)
{
    cql_call *c = q->r->call;
    const cql_select *sel = q->q;
    if (cql_select_metadata(c, q->s, q->t, &q->out) != 0) return -1;
    if (sel->json) {
        cql_stmt plain = *q->s;
        plain.u.select.json = 0;
        if (cql_select_metadata(c, &plain, q->t, &q->jrow) != 0) return -1;
    }
    size_t n = sel->nsel ? sel->nsel : q->t->ncols;
    q->sels = calloc(n + 1, sizeof *q->sels);
    if (q->sels == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    q->nsel = n;
    int counts = 0, plain = 0;
    cqlagg_kind ak;
    for (size_t i = 0; i < n; i++) {
        selitem *x = &q->sels[i];
        if (!sel->nsel) {
            x->kind = SEL_COLUMN;
            x->col = &q->t->cols[i];
            plain++;
            continue;
        }
        const cql_expr *e = sel->sel[i].expr;
        if (e->kind == CQL_E_COLUMN) {
            x->kind = SEL_COLUMN;
            x->col = col_named(q->t, e->text);
            plain++;
        } else if (e->kind == CQL_E_FUNCTION &&
                   cqlagg_lookup(e->fn.name, e->star, cql_agg_literal_arg(e), &ak)) {
            x->kind = SEL_COUNT;
            const cql_ctype *argtype = NULL;
            if (ak != CQLAGG_COUNT_ROWS) {
                char *argname = NULL;
                int rc = cql_agg_arg(c, q->t, e, &x->col, &x->agg_cell, &x->fn, &argtype, &argname);
                free(argname);
                if (rc != 0) return -1;
                x->agg_fn = x->col == NULL;
            }
            cql_parse_error perr;
            memset(&perr, 0, sizeof perr);
            if (cqlagg_init(&x->agg, ak, argtype, &perr) != 0) return cql_fail_parsed(c, &perr);
            x->agg_on = 1;
            counts++;
        } else if (e->kind == CQL_E_FUNCTION && e->fn.ks == NULL &&
                   (strcmp(e->fn.name, "writetime") == 0 || strcmp(e->fn.name, "ttl") == 0)) {
            x->kind = e->fn.name[0] == 'w' ? SEL_WRITETIME : SEL_TTL;
            x->col = col_named(q->t, e->items[0]->text);
            plain++;
        } else {
            char *name = NULL;
            if (cql_fnsel_resolve(c, q->t, e, &x->fn, &name) != 0) return -1;
            x->kind = SEL_FN;
            int columns = 0;
            size_t nested = cql_fnsel_aggregates(&x->fn, x->nested, 8, &columns);
            if (nested > 8) {
                int rc =
                    cql_fail(c, CQL_ERR_INVALID, "Too many aggregates in the selector %s", name);
                free(name);
                return rc;
            }
            free(name);
            x->nnested = nested;
            /* a column beside aggregates (a + max(b)) has its group's first row's value */
            q->first_row |= nested && columns;
            if (nested)
                counts++;
            else
                plain++;
        }
    }
    (void)plain;
    q->aggregate = counts > 0 || sel->ngroup > 0;
    /* GROUP BY: a prefix of the primary key, in its order */
    if (sel->ngroup > 64) return cql_fail(c, CQL_ERR_INVALID, "Too many GROUP BY columns");
    /* key columns restricted by one value may be left out: their value is the same in
     * every group */
    size_t at = 0, nkey = q->t->npk + q->t->nck;
    for (size_t i = 0; i < sel->ngroup; i++) {
        const cql_expr *g = sel->group_by[i];
        const cql_tcol *col = g->kind == CQL_E_COLUMN ? col_named(q->t, g->text) : NULL;
        if (col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            g->kind == CQL_E_COLUMN ? g->text : "?", q->t->ks, q->t->name);
        if (col->kind != 'p' && col->kind != 'c')
            return cql_fail(c, CQL_ERR_INVALID,
                            "Group by is currently only supported on the columns of the PRIMARY "
                            "KEY, got %s",
                            col->name);
        size_t want = col->kind == 'p' ? (size_t)col->pos : q->t->npk + (size_t)col->pos;
        while (at < want && at < nkey && key_fixed(q, at))
            at++;
        if (at != want)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Group by currently only support groups of columns following their "
                            "declared order in the PRIMARY KEY");
        at++;
        q->group[i] = col;
    }
    if (sel->ngroup && at < q->t->npk)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Group by is not supported on only a part of the partition key");
    q->ngroup = sel->ngroup;

    if (sel->distinct) {
        for (size_t i = 0; i < q->ngroup; i++)
            if (q->group[i]->kind == 'c')
                return cql_fail(c, CQL_ERR_INVALID,
                                "Grouping on clustering columns is not allowed for SELECT DISTINCT "
                                "queries");
        for (size_t i = 0; i < n; i++) {
            const cql_tcol *col = q->sels[i].col;
            /* an aggregate of the distinct partitions (COUNT(*), or of a key or static
             * column) */
            if (q->sels[i].kind == SEL_COUNT && !q->sels[i].agg_fn && !q->sels[i].agg_cell &&
                (col == NULL || col->kind == 'p' || col->kind == 's'))
                continue;
            /* a function of partition key and static columns, such as token(k) */
            int unused = 0;
            if (q->sels[i].kind == SEL_FN && q->sels[i].nnested == 0 && sel->nsel) {
                col = distinct_misfit(q->t, sel->sel[i].expr, NULL, &unused, 0);
                if (col == NULL) continue;
            }
            if (q->sels[i].kind != SEL_COLUMN || (col->kind != 'p' && col->kind != 's'))
                return cql_fail(c, CQL_ERR_INVALID,
                                "SELECT DISTINCT queries must only request partition key columns "
                                "and/or static columns (not %s)",
                                col ? col->name : "an aggregate");
        }
        /* restrictions on the partition key and static columns only, filtered or not */
        int other = q->k.ck_eq || q->k.slice;
        for (size_t i = 0; i < sel->where.n && !other; i++) {
            const cql_relation *rel = &sel->where.rels[i];
            if (rel->kind == CQL_REL_TOKEN) continue;
            for (size_t k = 0; k < rel->ncolumns; k++) {
                const cql_tcol *col = col_named(q->t, rel->columns[k]);
                other |= col && col->kind != 'p' && col->kind != 's';
            }
        }
        if (other)
            return cql_fail(c, CQL_ERR_INVALID,
                            "SELECT DISTINCT with WHERE clause only supports restriction by "
                            "partition key and/or static columns.");
        /* over a range of partitions every partition key column is selected, or is an
         * aggregate's argument (Cassandra counts the columns any selector reads) */
        for (size_t i = 0; !q->k.partitions && i < q->t->ncols; i++) {
            const cql_tcol *pc = &q->t->cols[i];
            int selected = pc->kind != 'p';
            for (size_t j = 0; j < n && !selected; j++) {
                selected = q->sels[j].col == pc &&
                           (q->sels[j].kind == SEL_COLUMN || q->sels[j].kind == SEL_COUNT);
                if (q->sels[j].kind == SEL_FN && sel->nsel)
                    distinct_misfit(q->t, sel->sel[j].expr, pc, &selected, 0);
            }
            if (!selected)
                return cql_fail(c, CQL_ERR_INVALID,
                                "SELECT DISTINCT queries must request all the partition key "
                                "columns (missing %s)",
                                pc->name);
        }
    }
    return 0;
}

/* 1 when rel restricts col to one value as Cassandra reads it: by =, or by an IN of one
 * listed value (an IN with a marker names any number of values). */
static int restricts_to_one(const qctx *q, const cql_relation *rel, const cql_tcol *col)
{
    if (rel->kind != CQL_REL_COLUMN && rel->kind != CQL_REL_TUPLE) return 0;
    int names = 0;
    for (size_t k = 0; k < rel->ncolumns; k++)
        names |= col_named(q->t, rel->columns[k]) == col;
    if (!names) return 0;
    return rel->op == CQL_OP_EQ || (rel->op == CQL_OP_IN && rel->values && rel->nvalues == 1);
}

static int restricted_by_eq(const qctx *q, const cql_tcol *col)
{
    for (size_t i = 0; i < q->q->where.n; i++)
        if (restricts_to_one(q, &q->q->where.rels[i], col)) return 1;
    return 0;
}

/* 1 when the partition key is restricted by an IN: a marker, or other than one value. */
static int key_in(const qctx *q)
{
    for (size_t i = 0; i < q->q->where.n; i++) {
        const cql_relation *rel = &q->q->where.rels[i];
        const cql_tcol *col = rel->kind == CQL_REL_COLUMN ? col_named(q->t, rel->columns[0]) : NULL;
        if (col && col->kind == 'p' && rel->op == CQL_OP_IN && !restricts_to_one(q, rel, col))
            return 1;
    }
    return 0;
}

static const cql_tcol *clustering_col(const cql_tinfo *t, int pos)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (t->cols[i].kind == 'c' && t->cols[i].pos == pos) return &t->cols[i];
    return NULL;
}

/* ORDER BY: clustering columns in their declared order (skipping those restricted to one
 * value), all in the declared directions or all reversed. With an IN on the partition key
 * the rows of the partitions are sorted together afterwards, as Cassandra does. */
static int plan_order(qctx *q)
{
    cql_call *c = q->r->call;
    const cql_select *sel = q->q;
    if (sel->norder == 0) return 0;
    if (q->k.indexed)
        return cql_fail(c, CQL_ERR_INVALID, "ORDER BY with 2ndary indexes is not supported.");
    if (!q->k.partitions)
        return cql_fail(c, CQL_ERR_INVALID,
                        "ORDER BY is only supported when the partition key is restricted by an EQ "
                        "or an IN.");
    if (sel->norder > sizeof q->order_col / sizeof q->order_col[0])
        return cql_fail(c, CQL_ERR_INVALID, "Too many ORDER BY columns");
    int next = 0;
    for (size_t i = 0; i < sel->norder; i++) {
        const cql_tcol *col = col_named(q->t, sel->order[i].column);
        if (col == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                            sel->order[i].column, q->t->ks, q->t->name);
        if (col->kind != 'c')
            return cql_fail(c, CQL_ERR_INVALID,
                            "Order by is currently only supported on the clustered columns of the "
                            "PRIMARY KEY, got %s",
                            col->name);
        for (; next < col->pos; next++)
            if (!restricted_by_eq(q, clustering_col(q->t, next))) break;
        if (next != col->pos)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Order by currently only supports the ordering of columns following "
                            "their declared order in the PRIMARY KEY");
        next++;
        q->order_col[i] = col;
    }
    q->norder_col = sel->norder;
    int rev = -1;
    for (size_t i = 0; i < sel->norder; i++) {
        int r = sel->order[i].desc != q->order_col[i]->desc;
        if (rev >= 0 && r != rev)
            return cql_fail(c, CQL_ERR_INVALID, "Unsupported order by relation");
        rev = r;
    }
    q->reversed = rev > 0;
    q->post_order = key_in(q);
    return 0;
}

/* ---- rows ---- */

static void row_clear(qctx *q)
{
    for (size_t i = 0; i < q->t->ncols; i++) {
        buf_reset(&q->vals[i]);
        q->has[i] = 0;
    }
}

/* The stored row a column's cells are read from: the partition's static row for a static
 * column, else item (NULL: none). */
static const cql_srow *row_of(const qctx *q, const cql_tcol *c, const cql_srow *item)
{
    if (c->kind == 's') return q->has_static ? &q->static_row : NULL;
    return item;
}

static size_t col_index(const qctx *q, const cql_tcol *c)
{
    return c ? (size_t)(c - q->t->cols) : 0;
}

/* The columns the statement reads (keys, selected, filtered) into the map's choice, and
 * whether it asks for write times. 0, or -1 with the call's error set. */
static int plan_reads(qctx *q)
{
    const cql_tinfo *t = q->t;
    if (cql_rowmap_init(&q->map, t->cols, t->ncols) != 0)
        return cql_fail(q->r->call, CQL_ERR_SERVER, "out of memory");
    uint8_t *cells = calloc(t->ncols + 1, 1);
    if (cells == NULL) return cql_fail(q->r->call, CQL_ERR_SERVER, "out of memory");
    int times = 0;
    for (size_t i = 0; i < t->ncols; i++)
        cells[i] = t->cols[i].kind == 'p' || t->cols[i].kind == 'c';
    for (size_t i = 0; i < q->nsel; i++) {
        const selitem *x = &q->sels[i];
        if (x->kind == SEL_FN || x->agg_fn) /* its arguments: any column */
            memset(cells, 1, t->ncols);
        if (x->col) cells[col_index(q, x->col)] = 1;
        times |= x->kind == SEL_WRITETIME || x->agg_cell == 'w' ||
                 ((x->kind == SEL_FN || x->agg_fn) && cql_fnsel_cells(&x->fn, 'w'));
    }
    for (size_t f = 0; f < q->k.nfilters; f++) {
        const cql_relation *rel = q->k.filters[f];
        for (size_t k = 0; k < rel->ncolumns; k++) {
            const cql_tcol *col = col_named(t, rel->columns[k]);
            if (col) cells[col_index(q, col)] = 1;
        }
    }
    cql_rowmap_want(&q->map, cells, times);
    free(cells);
    return 0;
}

/* Reads the columns the statement reads of item (and the partition's static row) into
 * q->vals. */
static int row_load(qctx *q, const cql_srow *item)
{
    row_clear(q);
    for (size_t i = 0; i < q->t->ncols; i++) {
        const cql_tcol *c = &q->t->cols[i];
        if (!cql_rowmap_reads(&q->map, i)) continue;
        const cql_srow *from = row_of(q, c, item);
        if (from == NULL) continue;
        int got = cql_srow_cell_read(from, c, q->now_s, &q->vals[i]);
        if (got < 0)
            return cql_fail(q->r->call, CQL_ERR_SERVER, "a stored value of %s cannot be read",
                            c->name);
        q->has[i] = got == 1;
    }
    return 0;
}

static int32_t cell_meta(qctx *q, const cql_tcol *col, const cql_srow *item, int which,
                         uint8_t b[8]);

static int32_t loaded_cell_meta(void *ctx, const cql_tcol *col, int which, uint8_t b[8])
{
    qctx *q = ctx;
    return cell_meta(q, col, &q->row, which, b);
}

/* A function selector's value for the loaded row (cql_fnsel_value). */
static int fn_value(qctx *q, const cql_fnsel *f, buf *out)
{
    cql_cellmeta meta = {loaded_cell_meta, q};
    return cql_fnsel_value(q->r, q->t, f, q->vals, q->has, &meta, out);
}

/* m[key] op value against the map v: 1 when its entry of that key has such a value, 0
 * when not, -1 with the error set. */
static int entry_matches(qctx *q, const cql_tcol *col, const cql_relation *rel, const uint8_t *v,
                         size_t vlen)
{
    const cql_ctype *type = col->type;
    if (type->wire.id != CQL_TYPE_MAP)
        return cql_fail(q->r->call, CQL_ERR_INVALID, "Column %s cannot be used as a map",
                        col->name);
    buf key, want;
    buf_init(&key, 0);
    buf_init(&want, 0);
    int rc = cql_term(q->r, type->args[0], col->name, rel->key, &key);
    if (rc == CQLVAL_OK) rc = cql_term(q->r, type->args[1], col->name, rel->value, &want);
    int ok = rc == CQLVAL_ERROR ? -1 : 0;
    cql_elements e;
    uint32_t n;
    if (rc == CQLVAL_OK && cql_collection_open(&e, v, vlen, 1, &n) == 0) {
        const uint8_t *k, *val;
        int32_t klen, valen;
        while (cql_element_next(&e, &k, &klen) == 1 && cql_element_next(&e, &val, &valen) == 1) {
            if (klen < 0 || cqlval_compare(type->args[0], k, (size_t)klen,
                                           (const uint8_t *)key.data, key.len) != 0)
                continue;
            ok = valen >= 0 &&
                 cql_compare_op(rel->op, cqlval_compare(type->args[1], val, (size_t)valen,
                                                        (const uint8_t *)want.data, want.len));
            break;
        }
    }
    buf_free(&key);
    buf_free(&want);
    return ok;
}

/* A row against the filters: 1 kept, 0 not, -1 error. */
static int row_filtered(qctx *q)
{
    if (q->k.token && !q->token_ranged) {
        /* the token of the row's partition key */
        cql_fnsel f;
        memset(&f, 0, sizeof f);
        f.kind = 't';
        for (size_t i = 0; i < q->t->ncols; i++)
            if (q->t->cols[i].kind == 'p') f.argcol[q->t->cols[i].pos] = &q->t->cols[i];
        f.nargs = q->t->npk;
        buf b;
        buf_init(&b, 0);
        int got = fn_value(q, &f, &b);
        int64_t tok = 0;
        if (got == CQLVAL_OK) cql_bigint_decode((const uint8_t *)b.data, b.len, &tok);
        buf_free(&b);
        if (got == CQLVAL_ERROR) return -1;
        if (got != CQLVAL_OK || tok < q->k.token_lo || tok > q->k.token_hi) return 0;
    }
    for (size_t f = 0; f < q->k.nfilters; f++) {
        const cql_relation *rel = q->k.filters[f];
        if (rel->kind == CQL_REL_TUPLE) {
            int ok = cql_tuple_matches(q->r, q->t, rel, q->vals, q->has);
            if (ok <= 0) return ok;
            continue;
        }
        const cql_tcol *col = col_named(q->t, rel->columns[0]);
        size_t ci = col_index(q, col);
        if (!q->has[ci] && rel->op != CQL_OP_IS_NOT_NULL) return 0;
        if (rel->op == CQL_OP_IS_NOT_NULL) {
            if (!q->has[ci]) return 0;
            continue;
        }
        const uint8_t *v = (const uint8_t *)q->vals[ci].data;
        size_t vlen = q->vals[ci].len;
        const cql_ctype *type = col->type;
        int ok = 0;
        if (rel->kind == CQL_REL_ELEMENT) {
            ok = entry_matches(q, col, rel, v, vlen);
            if (ok < 0) return -1;
        } else if (rel->op == CQL_OP_CONTAINS || rel->op == CQL_OP_CONTAINS_KEY) {
            int map = type->wire.id == CQL_TYPE_MAP;
            const cql_ctype *et = rel->op == CQL_OP_CONTAINS_KEY ? type->args[0]
                                  : map                          ? type->args[1]
                                                                 : type->args[0];
            buf want;
            buf_init(&want, 0);
            if (cql_term(q->r, et, col->name, rel->value, &want) != CQLVAL_OK) {
                buf_free(&want);
                return -1;
            }
            cql_elements e;
            uint32_t n;
            if (cql_collection_open(&e, v, vlen, map, &n) == 0) {
                const uint8_t *p;
                int32_t len;
                size_t i = 0;
                while (!ok && cql_element_next(&e, &p, &len) == 1) {
                    int is_key = map ? i % 2 == 0 : 1;
                    int take = rel->op == CQL_OP_CONTAINS_KEY ? is_key : map ? !is_key : 1;
                    if (take && len >= 0 &&
                        cqlval_compare(et, p, (size_t)len, (const uint8_t *)want.data, want.len) ==
                            0)
                        ok = 1;
                    i++;
                }
            }
            buf_free(&want);
        } else {
            const cql_expr *const *terms = rel->op == CQL_OP_IN && rel->values
                                               ? (const cql_expr *const *)rel->values
                                               : (const cql_expr *const *)&rel->value;
            size_t nterms = rel->op == CQL_OP_IN && rel->values ? rel->nvalues : 1;
            if (rel->op == CQL_OP_IN && !rel->values && rel->value) { /* IN ?, not IN () */
                cql_value lv;
                if (cql_bound(q->r, rel->value, &lv) != 1) return -1;
                cql_elements e;
                uint32_t n;
                if (lv.len >= 0 && cql_collection_open(&e, lv.p, (size_t)lv.len, 0, &n) == 0) {
                    const uint8_t *p;
                    int32_t len;
                    while (!ok && cql_element_next(&e, &p, &len) == 1)
                        ok = len >= 0 && cqlval_compare(type, v, vlen, p, (size_t)len) == 0;
                }
            }
            for (size_t j = 0; j < nterms && !ok && rel->values; j++) {
                buf want;
                buf_init(&want, 0);
                int rc = cql_term(q->r, type, col->name, terms[j], &want);
                if (rc == CQLVAL_ERROR) {
                    buf_free(&want);
                    return -1;
                }
                ok = rc == CQLVAL_OK &&
                     cqlval_compare(type, v, vlen, (const uint8_t *)want.data, want.len) == 0;
                buf_free(&want);
            }
            if (rel->op != CQL_OP_IN) {
                buf want;
                buf_init(&want, 0);
                int rc = cql_term(q->r, type, col->name, rel->value, &want);
                if (rc == CQLVAL_ERROR) {
                    buf_free(&want);
                    return -1;
                }
                ok = rc == CQLVAL_OK &&
                     cql_compare_op(rel->op, cqlval_compare(type, v, vlen,
                                                            (const uint8_t *)want.data, want.len));
                buf_free(&want);
            }
        }
        if (!ok) return 0;
    }
    return 1;
}

/* Emits the loaded row (item: the row's own item, for writetime and ttl). */
/* The type of selector x's values. */
static const cql_ctype *sel_type(const selitem *x)
{
    switch (x->kind) {
    case SEL_COLUMN:
        return x->col->type;
    case SEL_WRITETIME:
    case SEL_COUNT:
        return cqltype_native(CQL_TYPE_BIGINT);
    case SEL_TTL:
        return cqltype_native(CQL_TYPE_INT);
    default:
        return x->fn.ret;
    }
}

/* A JSON object's key for a column name, as Cassandra's Selection.rowToJson writes it:
 * wrapped in double quotes when lower-casing would change it (an upper-case letter), as is
 * otherwise, so system.tojson(v) and cast(v as float) stay bare. */
static void json_key(buf *out, const char *name)
{
    int plain = 1;
    for (const char *p = name; *p; p++)
        plain &= !(*p >= 'A' && *p <= 'Z');
    json_t *s = NULL;
    if (plain) {
        s = json_string(name);
    } else {
        buf q;
        buf_init(&q, 0);
        buf_putc(&q, '"');
        for (const char *p = name; *p; p++)
            buf_putc(&q, (uint8_t)*p);
        buf_putc(&q, '"');
        s = json_string(q.data);
        buf_free(&q);
    }
    char *text = json_dumps(s, JSON_ENCODE_ANY);
    buf_puts(out, text ? text : "\"\"");
    free(text);
    json_decref(s);
}

/* SELECT JSON: the row just written to q->jrow as one [json] text value of q->out. */
static int json_row(qctx *q)
{
    cql_reader rd;
    cql_reader_init(&rd, q->jrow.data.data, q->jrow.data.len, NULL);
    buf text;
    buf_init(&text, 0);
    buf_putc(&text, '{');
    for (size_t i = 0; i < q->nsel; i++) {
        cql_value v;
        cql_read_bytes(&rd, "a value", &v);
        if (i) buf_puts(&text, ", ");
        json_key(&text, q->jrow.cols[i].name);
        buf_puts(&text, ": ");
        if (v.len < 0)
            buf_puts(&text, "null");
        else if (cqlval_to_json(sel_type(&q->sels[i]), v.p, (size_t)v.len, &text) != 0) {
            buf_free(&text);
            return cql_fail(q->r->call, CQL_ERR_SERVER, "a value cannot be written as JSON");
        }
    }
    buf_putc(&text, '}');
    int rc = cql_rows_put(&q->out, text.data, (int32_t)text.len);
    buf_free(&text);
    buf_reset(&q->jrow.data);
    q->jrow.nrows = 0;
    if (rc) return cql_fail(q->r->call, CQL_ERR_SERVER, "the result is too large to answer");
    q->out.nrows++;
    return 0;
}

static int put_selectors(qctx *q, const cql_srow *item, cql_rows *dst);

/* ---- post-query ordering ---- */

/* The loaded row's values of the ORDER BY columns into out: for each, its length (all ones
 * for null) and bytes. */
static void order_values(const qctx *q, buf *out)
{
    buf_reset(out);
    for (size_t i = 0; i < q->norder_col; i++) {
        size_t ci = col_index(q, q->order_col[i]);
        buf_put_be32(out, q->has[ci] ? (uint32_t)q->vals[ci].len : UINT32_MAX);
        if (q->has[ci]) buf_append(out, q->vals[ci].data, q->vals[ci].len);
    }
}

/* Notes the row just appended to the answer from at, and its ordering values. */
static int order_note(qctx *q, size_t at, const buf *values)
{
    if (q->nanswered == q->answered_cap) {
        size_t cap = q->answered_cap ? q->answered_cap * 2 : 64;
        answered *n = realloc(q->answered, cap * sizeof *n);
        if (n == NULL) return cql_fail(q->r->call, CQL_ERR_SERVER, "out of memory");
        q->answered = n;
        q->answered_cap = cap;
    }
    answered *a = &q->answered[q->nanswered++];
    a->at = at;
    a->len = q->out.data.len - at;
    a->key_at = q->order_keys.len;
    if (values->len)
        buf_append(&q->order_keys, values->data, values->len);
    else /* an aggregate over no row */
        for (size_t i = 0; i < q->norder_col; i++)
            buf_put_be32(&q->order_keys, UINT32_MAX);
    return 0;
}

/* Cassandra's comparison of two rows' ordering values: each column by its declared order
 * with null first, the whole reversed when the query reads backwards; ties keep the order
 * the rows were read in. */
static int answered_cmp(const void *pa, const void *pb, void *ctx)
{
    const qctx *q = ctx;
    const answered *a = pa, *b = pb;
    const uint8_t *ka = (const uint8_t *)q->order_keys.data + a->key_at;
    const uint8_t *kb = (const uint8_t *)q->order_keys.data + b->key_at;
    int c = 0;
    for (size_t i = 0; c == 0 && i < q->norder_col; i++) {
        uint32_t la = be32_read(ka), lb = be32_read(kb);
        ka += 4;
        kb += 4;
        if (la == UINT32_MAX || lb == UINT32_MAX) {
            c = (lb == UINT32_MAX) - (la == UINT32_MAX);
        } else {
            c = cqlval_compare(q->order_col[i]->type, ka, la, kb, lb);
            if (q->order_col[i]->desc) c = -c;
        }
        if (la != UINT32_MAX) ka += la;
        if (lb != UINT32_MAX) kb += lb;
    }
    if (q->reversed) c = -c;
    if (c == 0) c = (a->at > b->at) - (a->at < b->at);
    return c;
}

/* Sorts the answer's rows by their ordering values and keeps the first post_limit. */
static int order_answer(qctx *q)
{
    if (q->nanswered > 1) qsort_r(q->answered, q->nanswered, sizeof *q->answered, answered_cmp, q);
    size_t keep = q->nanswered;
    if (q->post_limit >= 0 && (uint64_t)q->post_limit < keep) keep = (size_t)q->post_limit;
    buf sorted;
    buf_init(&sorted, 0);
    for (size_t i = 0; i < keep; i++)
        if (buf_append(&sorted, q->out.data.data + q->answered[i].at, q->answered[i].len) != 0) {
            buf_free(&sorted);
            return cql_fail(q->r->call, CQL_ERR_SERVER, "out of memory");
        }
    buf_free(&q->out.data);
    q->out.data = sorted;
    q->out.nrows = (uint32_t)keep;
    return 0;
}

/* Ends the open group: one row of its first row's plain values and its aggregates. */
static int group_flush(qctx *q)
{
    if (!q->in_group) return 0;
    q->in_group = 0;
    cql_rows *dst = q->q->json ? &q->jrow : &q->out;
    size_t at = q->out.data.len;
    cql_reader rd;
    cql_reader_init(&rd, q->grow.data.data, q->grow.data.len, NULL);
    int rc = 0;
    for (size_t i = 0; i < q->nsel && rc == 0; i++) {
        cql_value v = {NULL, CQL_NULL};
        if (q->grow.nrows) cql_read_bytes(&rd, "a value", &v);
        selitem *x = &q->sels[i];
        if (x->nnested) {
            buf out;
            buf_init(&out, 0);
            int got = q->first_row ? cql_fnsel_value(q->r, q->t, &x->fn, q->first_vals,
                                                     q->first_has, NULL, &out)
                                   : fn_value(q, &x->fn, &out);
            rc = got == CQLVAL_ERROR ? -1
                                     : cql_rows_put(dst, out.data ? out.data : "",
                                                    got == CQLVAL_OK ? (int32_t)out.len : -1);
            buf_free(&out);
            for (size_t k = 0; k < x->nnested; k++)
                cqlagg_reset(&x->nested[k]->state);
            continue;
        }
        if (!x->agg_on) {
            rc = cql_rows_put(dst, v.p ? v.p : (const uint8_t *)"", v.len);
            continue;
        }
        buf out;
        buf_init(&out, 0);
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        int got = cqlagg_result(&x->agg, &out, &perr);
        if (got == CQLVAL_ERROR)
            rc = cql_fail_parsed(q->r->call, &perr);
        else
            rc = cql_rows_put(dst, out.data ? out.data : "",
                              got == CQLVAL_OK ? (int32_t)out.len : -1);
        buf_free(&out);
        cqlagg_reset(&x->agg);
    }
    buf_reset(&q->grow.data);
    q->grow.nrows = 0;
    if (rc) return q->r->call->failed ? -1 : cql_fail(q->r->call, CQL_ERR_SERVER, "out of memory");
    dst->nrows++;
    q->groups++;
    if (q->q->json && json_row(q) != 0) return -1;
    return q->post_order ? order_note(q, at, &q->group_order) : 0;
}

/* writetime(col) (which 'w') or ttl(col) ('t') of the loaded row into b: its length, or -1
 * for null (no cell, or no TTL). */
static int32_t cell_meta(qctx *q, const cql_tcol *col, const cql_srow *item, int which,
                         uint8_t b[8])
{
    size_t ci = col_index(q, col);
    const cql_srow *from = row_of(q, col, item);
    if (!q->has[ci] || from == NULL) return -1;
    if (which == 'w') {
        cql_bigint_encode(cql_srow_cell_ts(from, col), b);
        return 8;
    }
    int64_t e = cql_srow_cell_exp(from, col);
    if (e == 0) return -1;
    cql_int_encode((int32_t)(e - q->now_s), b);
    return 4;
}

/* Feeds the loaded row to the aggregates, opening a group when its GROUP BY values
 * change. */
/* Adds the loaded row's argument of an aggregate to its state: the computed selector fn
 * when given, else writetime or ttl of col (cellfn 'w', 't'), else col (NULL: the row). */
static int agg_feed(qctx *q, const cql_srow *item, cqlagg *agg, const cql_tcol *col, int cellfn,
                    const cql_fnsel *fn)
{
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    int rc = 0;
    if (fn) {
        buf v;
        buf_init(&v, 0);
        int got = fn_value(q, fn, &v);
        if (got == CQLVAL_ERROR) rc = -1;
        if (got != CQLVAL_ERROR &&
            cqlagg_add(agg, (const uint8_t *)(v.data ? v.data : ""),
                       got == CQLVAL_OK ? (int32_t)v.len : CQL_NULL, &perr) != 0)
            rc = cql_fail_parsed(q->r->call, &perr);
        buf_free(&v);
        return rc;
    }
    if (cellfn) {
        uint8_t b[8];
        int32_t len = cell_meta(q, col, item, cellfn, b);
        if (cqlagg_add(agg, b, len < 0 ? CQL_NULL : len, &perr) != 0)
            rc = cql_fail_parsed(q->r->call, &perr);
        return rc;
    }
    size_t ci = col_index(q, col);
    int has = col == NULL || q->has[ci];
    if (cqlagg_add(agg, has && col ? (const uint8_t *)q->vals[ci].data : (const uint8_t *)"",
                   has ? (col ? (int32_t)q->vals[ci].len : 0) : CQL_NULL, &perr) != 0)
        rc = cql_fail_parsed(q->r->call, &perr);
    return rc;
}

static int group_add(qctx *q, const cql_srow *item)
{
    buf key;
    buf_init(&key, 0);
    for (size_t i = 0; i < q->ngroup; i++) {
        size_t ci = col_index(q, q->group[i]);
        buf_put_be32(&key, (uint32_t)q->vals[ci].len);
        buf_append(&key, q->vals[ci].data, q->vals[ci].len);
    }
    int rc = 0;
    if (q->in_group && !cql_same_bytes(key.data, key.len, q->group_key.data, q->group_key.len))
        rc = group_flush(q);
    if (rc == 0 && !q->in_group) {
        if (q->limit >= 0 && q->groups >= q->limit) {
            buf_free(&key);
            return 1;
        }
        if (q->ppl >= 0 && q->ngroup && q->groups_part >= q->ppl) {
            buf_free(&key);
            return 0; /* the partition has its groups: its other rows are skipped */
        }
        q->groups_part++;
        q->in_group = 1;
        if (q->post_order) order_values(q, &q->group_order);
        for (size_t i = 0; q->first_row && i < q->t->ncols; i++) {
            buf_reset(&q->first_vals[i]);
            buf_append(&q->first_vals[i], q->vals[i].data, q->vals[i].len);
            q->first_has[i] = q->has[i];
        }
        buf_reset(&q->group_key);
        buf_append(&q->group_key, key.data, key.len);
        rc = put_selectors(q, item, &q->grow);
        if (rc == 0) q->grow.nrows = 1;
    }
    buf_free(&key);
    for (size_t i = 0; rc == 0 && i < q->nsel; i++) {
        selitem *x = &q->sels[i];
        for (size_t k = 0; rc == 0 && k < x->nnested; k++) {
            cql_fnagg *a = x->nested[k];
            rc = agg_feed(q, item, &a->state, a->col, a->cellfn, a->on_fn ? &a->fn : NULL);
        }
        if (x->agg_on && rc == 0)
            rc = agg_feed(q, item, &x->agg, x->col, x->agg_cell, x->agg_fn ? &x->fn : NULL);
    }
    return rc;
}

static int row_emit(qctx *q, const cql_srow *item)
{
    if (q->aggregate) return group_add(q, item);
    cql_rows *dst = q->q->json ? &q->jrow : &q->out;
    size_t at = q->out.data.len;
    if (put_selectors(q, item, dst) != 0) return -1;
    dst->nrows++;
    if (q->q->json && json_row(q) != 0) return -1;
    if (!q->post_order) return 0;
    buf values;
    buf_init(&values, 0);
    order_values(q, &values);
    int rc = order_note(q, at, &values);
    buf_free(&values);
    return rc;
}

/* Appends the loaded row's selector values (aggregates as null) to dst. */
static int put_selectors(qctx *q, const cql_srow *item, cql_rows *dst)
{
    int rc = 0;
    for (size_t i = 0; i < q->nsel && rc == 0; i++) {
        const selitem *x = &q->sels[i];
        if (x->agg_on || x->nnested) {
            rc = cql_rows_put(dst, NULL, -1);
            continue;
        }
        if (x->kind == SEL_FN) {
            buf v;
            buf_init(&v, 0);
            int got = fn_value(q, &x->fn, &v);
            if (got == CQLVAL_ERROR) {
                buf_free(&v);
                return -1;
            }
            rc = cql_rows_put(dst, v.data ? v.data : "", got == CQLVAL_OK ? (int32_t)v.len : -1);
            buf_free(&v);
            continue;
        }
        size_t ci = col_index(q, x->col);
        if (x->kind == SEL_COLUMN) {
            rc = cql_rows_put(dst, q->vals[ci].data ? q->vals[ci].data : "",
                              q->has[ci] ? (int32_t)q->vals[ci].len : -1);
        } else {
            uint8_t b[8];
            int32_t len = cell_meta(q, x->col, item, x->kind == SEL_WRITETIME ? 'w' : 't', b);
            rc = cql_rows_put(dst, len < 0 ? NULL : b, len);
        }
    }
    if (rc) return cql_fail(q->r->call, CQL_ERR_SERVER, "the result is too large to answer");
    return 0;
}

/* The page and the limits: 1 when no more rows are wanted. */
static int done(qctx *q)
{
    if (q->aggregate) return 0;
    if (q->limit >= 0 && q->emitted_total >= q->limit) return 1;
    if (q->page > 0 && !q->aggregate && (int64_t)q->out.nrows >= q->page) {
        q->full = 1;
        return 1;
    }
    return 0;
}

/* The base64 text of a static row's $ck (CQL_CK_STATIC alone). */
#define CK_STATIC_B64 "AA=="

/* One item read: a row of the partition, or its static row; pk its serialized partition
 * key when the caller knows it (NULL: read from the item). 1 stop, 0 go on, -1 error. */
static int take(qctx *q, cql_srow *item, size_t size, const char *key, size_t key_len,
                const buf *pk)
{
    q->nread++;
    if (q->metered) q->nbytes += size;
    buf_reset(&q->last_key);
    buf_append(&q->last_key, key, key_len);
    if (pk == NULL) {
        buf_reset(&q->cur_pk);
        cql_srow_unb64(item, cql_srow_pk(item), &q->cur_pk);
    } else if (!cql_same_bytes(pk->data, pk->len, q->cur_pk.data, q->cur_pk.len)) {
        buf_reset(&q->cur_pk);
        buf_append(&q->cur_pk, pk->data, pk->len);
    }
    size_t cklen;
    const char *ck = cql_srow_str(item, cql_srow_get(item, cql_srow_ck(item), "B"), &cklen);
    if (ck && strcmp(ck, CK_STATIC_B64) == 0) {
        /* kept; the next row is read into the memory of the static row before */
        cql_srow_swap(&q->static_row, item);
        q->has_static = 1;
        return 0;
    }
    if (!cql_srow_row_live(item, q->t, q->now_s)) return 0;
    /* with GROUP BY, PER PARTITION LIMIT counts groups (group_add) */
    if (q->ppl >= 0 && q->ngroup == 0 && q->emitted_part >= q->ppl) return 0;
    if (row_load(q, item) != 0) return -1;
    int keep = row_filtered(q);
    if (keep < 0) return -1;
    if (!keep) return 0;
    q->static_used = 1;
    q->ended = 0;
    if (q->q->distinct) {
        if (q->emitted_part) return 0;
    }
    int e = row_emit(q, item);
    if (e != 0) return e;
    q->emitted_total++;
    q->emitted_part++;
    return done(q);
}

/* A partition with a static row and no row answers one row of its static values when
 * the query restricts no clustering column. */
static int static_only(qctx *q)
{
    if (!q->has_static || q->static_used || q->k.ck_eq || q->k.slice) return 0;
    if (!cql_srow_row_live(&q->static_row, q->t, q->now_s)) return 0;
    if (row_load(q, NULL) != 0) return -1;
    /* key columns come from the static row */
    for (size_t i = 0; i < q->t->ncols; i++)
        if (q->t->cols[i].kind == 'p') { /* read by every statement (plan_reads) */
            buf_reset(&q->vals[i]);
            q->has[i] =
                cql_srow_cell_read(&q->static_row, &q->t->cols[i], q->now_s, &q->vals[i]) == 1;
        }
    int keep = row_filtered(q);
    if (keep <= 0) return keep;
    q->static_used = 1;
    q->ended = 1;
    if (row_emit(q, &q->static_row) != 0) return -1;
    q->emitted_total++;
    q->emitted_part++;
    return done(q);
}

static void new_partition(qctx *q)
{
    q->has_static = 0;
    q->static_used = 0;
    q->emitted_part = 0;
    q->groups_part = 0;
}

/* Reads item_get's answer for key into r: 1 read, 0 none, -1 with the call's error set. */
static int row_get(qctx *q, const buf *key, int consistent, cql_srow *r, size_t *size)
{
    qr_err err;
    err_init(&err);
    stored_item si;
    int got = item_get(q->r->call->db, q->et, NULL, key, consistent, &si, &err);
    if (got < 0) return cql_fail_engine(q->r->call, CQL_ERR_SERVER, &err);
    if (got == 1 && size) *size = si.size;
    if (got == 1 && cql_row_parse(r, &q->map, si.json, si.len) != 0)
        got = cql_fail(q->r->call, CQL_ERR_SERVER, "a stored row cannot be read");
    stored_item_free(&si);
    return got;
}

/* The partition's static row into q->static_row (has_static: whether there is one),
 * counted as an item the statement read, as take counts the others. */
static int load_static(qctx *q, const buf *pk)
{
    int has_static = 0;
    for (size_t i = 0; i < q->t->ncols; i++)
        has_static |= q->t->cols[i].kind == 's';
    if (!has_static || q->t->nck == 0) return 0;
    qr_err err;
    err_init(&err);
    buf ck, key;
    buf_init(&ck, 0);
    buf_init(&key, 0);
    buf_putc(&ck, CQL_CK_STATIC);
    int rc = 0;
    if (cql_row_key(q->et, pk, &ck, &key, &err) == 0) {
        size_t size = 0;
        int got = row_get(q, &key, 1, &q->static_row, &size);
        q->has_static = got == 1;
        if (got < 0) rc = -1;
        if (got == 1) {
            q->nread++;
            if (q->metered) q->nbytes += size;
        }
    }
    buf_free(&ck);
    buf_free(&key);
    return rc;
}

/* Reads [lower, upper) of the table, forward or backward, handing each item to take:
 * the rows of partition pk, or with pk NULL a scan, which marks where partitions change. */
static int read_range(qctx *q, const buf *lower, const buf *upper, int forward, const buf *pk)
{
    qr_err err;
    err_init(&err);
    range_cursor *cur = cursor_open(q->r->call->db, q->et, NULL, lower, upper, forward, 1, NULL);
    const char *json, *key;
    size_t len, size, key_len;
    int got, rc = 0, scan = pk == NULL;
    buf part;
    buf_init(&part, 0);
    if (scan && q->resume && q->last_key.len) {
        /* resuming inside the partition of the last page's last item */
        size_t pl = key_partition_len(q->et, q->last_key.data, q->last_key.len);
        buf_append(&part, q->last_key.data, pl);
        q->static_used = 1;
        if (q->cur_pk.len && load_static(q, &q->cur_pk) != 0) rc = -1;
    }
    while (rc == 0 && (got = cursor_next(cur, &json, &len, &size, &err)) == 1) {
        key = cursor_key(cur, &key_len);
        if (cql_row_parse(&q->row, &q->map, json, len) != 0) {
            rc = cql_fail(q->r->call, CQL_ERR_SERVER, "a stored row cannot be read");
            break;
        }
        if (scan) {
            size_t pl = key_partition_len(q->et, key, key_len);
            if (!cql_same_bytes(part.data, part.len, key, pl)) {
                if (part.len) {
                    rc = static_only(q);
                    if (rc) break;
                }
                new_partition(q);
                buf_reset(&part);
                buf_append(&part, key, pl);
            }
        }
        rc = take(q, &q->row, size, key, key_len, pk);
    }
    if (rc == 0 && got < 0) rc = cql_fail_engine(q->r->call, CQL_ERR_SERVER, &err);
    if (rc == 0 && scan && part.len) rc = static_only(q);
    cursor_close(cur);
    buf_free(&part);
    return rc < 0 ? -1 : rc;
}

static int cmp_buf(const void *a, const void *b)
{
    const buf *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->data, y->data, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Reads the one row of partition pk whose $ck is ck (NULL: a table without clustering)
 * with a point read, unless it is not past after (the last page's last key). */
static int read_row(qctx *q, const buf *pk, const buf *ck, const buf *after)
{
    qr_err err;
    err_init(&err);
    buf key;
    buf_init(&key, 0);
    int rc = cql_row_key(q->et, pk, ck, &key, &err) == 0 ? 0 : -1;
    if (rc != 0) {
        rc = cql_fail_engine(q->r->call, CQL_ERR_SERVER, &err);
        goto out;
    }
    if (after && after->len) {
        int past = q->reversed ? cmp_buf(&key, after) < 0 : cmp_buf(&key, after) > 0;
        if (!past) goto out;
    }
    size_t size = 0;
    int got = row_get(q, &key, 1, &q->row, &size);
    if (got < 0)
        rc = -1;
    else if (got == 1)
        rc = take(q, &q->row, size, key.data, key.len, pk);
out:
    buf_free(&key);
    return rc;
}

/* ---- reads through a secondary index ---- */

static int read_whole_partition(qctx *q, const buf *pk, const buf *after, int64_t carried);

/* The key of index ix's entry for the row (pk, ck) whose indexed attribute holds av: where
 * a page that ended at that row resumes. 0, or -1 with err set. */
static int entry_key_of(const qctx *q, const qr_index *ix, const json_t *av, const buf *pk,
                        const buf *ck, buf *out, qr_err *err)
{
    json_t *item = json_object();
    json_t *pkav = cql_b64(pk->data, pk->len);
    json_t *ckav = ck ? cql_b64(ck->data, ck->len) : NULL;
    int rc = -1;
    if (item && pkav && (ck == NULL || ckav)) {
        json_object_set(item, ix->pk[0], (json_t *)av);
        json_object_set(item, CQL_PK_ATTR, pkav);
        if (ckav) json_object_set(item, CQL_CK_ATTR, ckav);
        rc = index_entry_key(q->et, ix, item, out, err) == 1 ? 0 : -1;
    }
    json_decref(item);
    json_decref(pkav);
    json_decref(ckav);
    return rc;
}

/* The rows whose indexed column equals the index relation's value: the entries of the
 * engine's global index, caught up with the writes before the read, each row read from
 * the table and checked again by the filters. An index on a static column has an entry
 * per partition, whose rows are all read. A page resumes past the entry of the last row
 * it answered (or, for a static column, inside that row's partition), found by its key,
 * so rows deleted meanwhile do not lose the place. */
/* A page that ended on partition pk's static row alone (read by load_static, not take)
 * resumes past that row: its partition and key become the page's last. 0, or -1. */
static int static_resume(qctx *q, const buf *pk)
{
    qr_err err;
    err_init(&err);
    buf ck;
    buf_init(&ck, 0);
    buf_putc(&ck, CQL_CK_STATIC);
    buf_reset(&q->cur_pk);
    buf_append(&q->cur_pk, pk->data, pk->len);
    buf_reset(&q->last_key);
    int rc = cql_row_key(q->et, pk, &ck, &q->last_key, &err);
    buf_free(&ck);
    return rc == 0 ? 0 : cql_fail_engine(q->r->call, CQL_ERR_SERVER, &err);
}

static int read_index(qctx *q)
{
    cql_call *c = q->r->call;
    const cql_tcol *col = q->k.index;
    const char *iname = q->k.cindex ? q->k.cindex->name : col->index;
    int partitions = col->kind == 's';
    /* an index on a partition key column has entries for static rows too: a partition
     * with no rows answers its static row alone, as a scan does */
    int pk_index = q->k.cindex == NULL && col->kind == 'p';
    int in_part = 0;
    char ixname[CQL_NAME_MAX + 8];
    cql_index_engine_name(iname, ixname, sizeof ixname);
    const qr_index *ix = table_index(q->et, ixname);
    if (ix == NULL && q->k.cindex == NULL)
        return cql_fail(c, CQL_ERR_SERVER, "the index %s has no engine index", iname);
    if (ix == NULL || ix->creating) /* an index on a collection: its rows being indexed */
        return cql_fail(c, CQL_ERR_READ_FAILURE, "The secondary index %s is still being built",
                        iname);
    json_t *av;
    int rc;
    if (q->k.cindex) {
        /* an index on a collection: the key of the element, key or entry looked for */
        if ((av = cql_index_lookup(q->r, q->k.cindex, q->k.index_rel)) == NULL) return -1;
    } else {
        buf v;
        buf_init(&v, 0);
        const cql_relation *ir = q->k.index_rel; /* an =, an IN of one value, or (c) = (v) */
        const cql_expr *iv = ir->op == CQL_OP_IN && ir->values ? ir->values[0] : ir->value;
        if (ir->kind == CQL_REL_TUPLE) iv = iv->items[0];
        rc = cql_term(q->r, col->type, col->name, iv, &v);
        if (rc != CQLVAL_OK) {
            buf_free(&v);
            return rc == CQLVAL_ERROR ? -1
                                      : cql_fail(c, CQL_ERR_INVALID,
                                                 "Unsupported null value for column %s", col->name);
        }
        av = cqlval_to_item(col->type, (const uint8_t *)v.data, v.len);
        buf_free(&v);
    }
    qr_err err;
    err_init(&err);
    buf lower, upper, key, after, pk;
    buf_init(&lower, 0);
    buf_init(&upper, 0);
    buf_init(&key, 0);
    buf_init(&after, 0);
    buf_init(&pk, 0);
    const json_t *vals[1] = {av};
    rc = av ? key_partition_tuple(&lower, q->et, ix->id, vals, 1, &err) : -1;
    if (rc != 0) {
        json_decref(av);
        buf_free(&lower);
        return cql_fail(c, CQL_ERR_INVALID, "%s",
                        err.msg[0] ? err.msg : "the value cannot be indexed");
    }
    buf_append(&upper, lower.data, lower.len);
    buf_prefix_successor(&upper);
    int64_t carried = 0;
    if (q->resume && q->last_key.len) {
        buf from;
        buf_init(&from, 0);
        if (partitions) {
            /* the last row's partition is read on from its row */
            buf ck;
            buf_init(&ck, 0);
            buf_putc(&ck, CQL_CK_STATIC);
            if (entry_key_of(q, ix, av, &q->cur_pk, &ck, &from, &err) == 0) {
                buf_append(&after, q->last_key.data, q->last_key.len);
                carried = q->emitted_part;
            }
            buf_free(&ck);
        } else {
            /* the last page's last key is its entry's */
            buf_append(&from, q->last_key.data, q->last_key.len);
            buf_putc(&from, 0);
        }
        if (from.len && cmp_buf(&from, &lower) > 0 && cmp_buf(&from, &upper) < 0) {
            buf_reset(&lower);
            buf_append(&lower, from.data, from.len);
        }
        buf_free(&from);
    }
    json_decref(av);
    rc = 0;
    if (q->resume && q->last_key.len && !partitions && q->cur_pk.len) {
        /* the last page's partition goes on: its static row again, its rows answered */
        q->static_used = 1;
        in_part = 1;
        rc = load_static(q, &q->cur_pk);
    }
    /* Cassandra's index reads see every write acknowledged before them: the engine's
     * global index is let catch up first (INDEX_CATCH_UP_MS at most, then it is read as
     * it is: a worker that far behind is stuck or buried, and the read must still end) */
    propagate_catch_up(c->db, INDEX_CATCH_UP_MS);
    range_cursor *cur = cursor_open(c->db, q->et, ix, &lower, &upper, 1, 0, NULL);
    const char *json;
    size_t len, size;
    int got = 0;
    while (rc == 0 && (got = cursor_next(cur, &json, &len, &size, &err)) == 1) {
        json_t *entry = json_read(json, len, JSON_ALLOW_NUL, NULL);
        buf_reset(&key);
        buf_reset(&pk);
        if (entry == NULL || key_item(&key, q->et, entry, &err) != 0 ||
            cql_unb64(json_object_get(entry, CQL_PK_ATTR), &pk) != 0) {
            json_decref(entry);
            rc = cql_fail(c, CQL_ERR_SERVER, "an index entry of %s cannot be read", iname);
            break;
        }
        json_decref(entry);
        if (partitions) {
            rc = read_whole_partition(q, &pk, after.len ? &after : NULL, carried);
            buf_reset(&after);
            carried = 0;
            if (rc == 1 && q->ended && static_resume(q, &pk) != 0) rc = -1;
            continue;
        }
        size_t row_size = 0;
        int found = row_get(q, &key, 0, &q->row, &row_size);
        if (found < 0) {
            rc = -1;
            break;
        }
        if (found == 0) continue; /* deleted since the entry was written */
        if (!cql_same_bytes(pk.data, pk.len, q->cur_pk.data, q->cur_pk.len)) {
            if (pk_index && in_part && (rc = static_only(q)) != 0) break;
            new_partition(q);
            q->static_used = !pk_index;
            rc = load_static(q, &pk);
            in_part = 1;
        }
        if (rc == 0) rc = take(q, &q->row, row_size, key.data, key.len, NULL);
        /* a page resumes past this entry */
        size_t ekl;
        const char *ek = cursor_key(cur, &ekl);
        buf_reset(&q->last_key);
        buf_append(&q->last_key, ek, ekl);
    }
    if (rc == 0 && got < 0) rc = cql_fail_engine(c, CQL_ERR_SERVER, &err);
    if (rc == 0 && pk_index && in_part) rc = static_only(q);
    cursor_close(cur);
    buf_free(&lower);
    buf_free(&upper);
    buf_free(&key);
    buf_free(&after);
    buf_free(&pk);
    return rc < 0 ? -1 : rc;
}

/* ---- materialized views ---- */

typedef struct vparts {
    qctx *q;
    const qr_index *ix;
    int backward;
    buf skip;
    int skipping;
} vparts;

/* Reads [lower, upper) of the view's index: each entry is a whole row (ALL projected). */
static int view_range(vparts *v, const buf *lower, const buf *upper)
{
    qctx *q = v->q;
    cql_call *c = q->r->call;
    qr_err err;
    err_init(&err);
    range_cursor *cur = cursor_open(c->db, q->et, v->ix, lower, upper, !v->backward, 0, NULL);
    const char *json;
    size_t len, size;
    int got, rc = 0;
    buf key;
    buf_init(&key, 0);
    while (rc == 0 && (got = cursor_next(cur, &json, &len, &size, &err)) == 1) {
        json_t *item = json_read(json, len, JSON_ALLOW_NUL, NULL);
        buf_reset(&key);
        if (item == NULL || key_item(&key, q->et, item, &err) != 0) {
            json_decref(item);
            rc = cql_fail(c, CQL_ERR_SERVER, "a row of the view %s cannot be read", q->t->name);
            break;
        }
        if (v->skipping) {
            if (cql_same_bytes(key.data, key.len, v->skip.data, v->skip.len)) v->skipping = 0;
            json_decref(item);
            continue;
        }
        rc = cql_row_from_json(&q->row, &q->map, item) == 0
                 ? take(q, &q->row, item_size(item), key.data, key.len, NULL)
                 : cql_fail(c, CQL_ERR_SERVER, "out of memory");
        json_decref(item);
    }
    if (rc == 0 && got < 0) rc = cql_fail_engine(c, CQL_ERR_SERVER, &err);
    cursor_close(cur);
    buf_free(&key);
    return rc;
}

static int view_part(void *arg, const buf *const *vals)
{
    vparts *v = arg;
    qctx *q = v->q;
    const json_t *avs[4];
    json_t *owned[4] = {0};
    size_t n = q->t->npk;
    for (size_t i = 0; i < q->t->ncols; i++) {
        const cql_tcol *col = &q->t->cols[i];
        if (col->kind != 'p' || col->pos >= 4) continue;
        owned[col->pos] =
            cqlval_to_item(col->type, (const uint8_t *)vals[col->pos]->data, vals[col->pos]->len);
        avs[col->pos] = owned[col->pos];
    }
    qr_err err;
    err_init(&err);
    buf lower, upper;
    buf_init(&lower, 0);
    buf_init(&upper, 0);
    int rc = key_partition_tuple(&lower, q->et, v->ix->id, avs, (int)n, &err);
    for (size_t i = 0; i < 4; i++)
        json_decref(owned[i]);
    if (rc == 0) {
        buf_append(&upper, lower.data, lower.len);
        buf_prefix_successor(&upper);
        new_partition(q);
        rc = view_range(v, &lower, &upper);
    } else {
        rc = cql_fail_engine(q->r->call, CQL_ERR_INVALID, &err);
    }
    buf_free(&lower);
    buf_free(&upper);
    return rc;
}

/* SELECT of a view: its index's partitions for the = and IN on the view's partition key,
 * or the whole index; its clustering restrictions filter. */
static int read_mview(qctx *q)
{
    cql_call *c = q->r->call;
    vparts v = {.q = q};
    char ixname[CQL_NAME_MAX + 8];
    cql_index_engine_name(q->t->name, ixname, sizeof ixname);
    v.ix = table_index(q->et, ixname);
    if (v.ix == NULL)
        return cql_fail(c, CQL_ERR_SERVER, "the view %s has no engine index", q->t->name);
    if (v.ix->creating)
        return cql_fail(c, CQL_ERR_READ_FAILURE, "The materialized view %s is still being built",
                        q->t->name);
    int first_desc = 0;
    for (size_t i = 0; i < q->t->ncols; i++)
        if (q->t->cols[i].kind == 'c' && q->t->cols[i].pos == 0) first_desc = q->t->cols[i].desc;
    v.backward = first_desc != q->reversed;
    buf_init(&v.skip, 0);
    if (q->resume && q->last_key.len) {
        buf_append(&v.skip, q->last_key.data, q->last_key.len);
        v.skipping = 1;
    }
    int rc;
    if (q->k.partitions) {
        rc = cql_each_combination(q->k.pk, q->t->npk, view_part, &v);
    } else {
        buf lower, upper;
        buf_init(&lower, 0);
        buf_init(&upper, 0);
        key_table_prefix(&lower, q->et, v.ix->id);
        buf_append(&upper, lower.data, lower.len);
        buf_prefix_successor(&upper);
        rc = view_range(&v, &lower, &upper);
        buf_free(&lower);
        buf_free(&upper);
    }
    buf_free(&v.skip);
    return rc < 0 ? -1 : rc;
}

/* ---- partitions ---- */

static int value_cmp(const void *a, const void *b, void *ctx)
{
    const buf *x = a, *y = b;
    return cqlval_compare(ctx, (const uint8_t *)x->data, x->len, (const uint8_t *)y->data, y->len);
}

/* Puts each partition key column's values in its type's order: Cassandra reads the
 * partitions an IN names in the order of their keys, whatever the order written. */
static void sort_partition_values(qctx *q)
{
    for (size_t i = 0; i < q->t->ncols; i++) {
        const cql_tcol *col = &q->t->cols[i];
        if (col->kind != 'p' || (size_t)col->pos >= q->k.npk_cols) continue;
        cql_vlist *l = &q->k.pk[col->pos];
        if (l->n > 1) qsort_r(l->v, l->n, sizeof *l->v, value_cmp, (void *)col->type);
    }
}

typedef struct plist {
    buf *pk;
    size_t n;
} plist;

static int add_part(void *arg, const buf *const *vals)
{
    qctx *q = ((void **)arg)[0];
    plist *l = ((void **)arg)[1];
    buf pk;
    buf_init(&pk, 0);
    cql_value v[64];
    for (size_t i = 0; i < q->t->npk; i++) {
        v[i].p = (const uint8_t *)vals[i]->data;
        v[i].len = (int32_t)vals[i]->len;
    }
    if (cql_pk_serialize(q->r->call, q->t, v, &pk) != 0) {
        buf_free(&pk);
        return -1;
    }
    for (size_t i = 0; i < l->n; i++)
        if (cql_same_bytes(l->pk[i].data, l->pk[i].len, pk.data, pk.len)) {
            buf_free(&pk);
            return 0;
        }
    buf *n = realloc(l->pk, (l->n + 1) * sizeof *n);
    if (n == NULL) {
        buf_free(&pk);
        return cql_fail(q->r->call, CQL_ERR_SERVER, "out of memory");
    }
    l->pk = n;
    l->pk[l->n++] = pk;
    return 0;
}

typedef struct prefixes {
    buf *p;
    size_t n;
    const cql_tinfo *t;
    size_t nck;
} prefixes;

/* Drops the repeats of a sorted list of prefixes: a clustering value named twice in an IN
 * selects its rows once, as in Cassandra. */
static void unique_prefixes(prefixes *pre)
{
    size_t kept = 0;
    for (size_t i = 0; i < pre->n; i++) {
        if (kept && cmp_buf(&pre->p[kept - 1], &pre->p[i]) == 0) {
            buf_free(&pre->p[i]);
            continue;
        }
        pre->p[kept++] = pre->p[i];
    }
    pre->n = kept;
}

static int add_prefix(void *arg, const buf *const *vals)
{
    prefixes *l = arg;
    buf b;
    buf_init(&b, 0);
    buf_putc(&b, CQL_CK_ROW);
    for (size_t i = 0; i < l->nck; i++) {
        const cql_tcol *col = NULL;
        for (size_t j = 0; j < l->t->ncols; j++)
            if (l->t->cols[j].kind == 'c' && l->t->cols[j].pos == (int)i) col = &l->t->cols[j];
        cql_ck_append(&b, col, (const uint8_t *)vals[i]->data, vals[i]->len);
    }
    buf *n = realloc(l->p, (l->n + 1) * sizeof *n);
    if (n == NULL) {
        buf_free(&b);
        return -1;
    }
    l->p = n;
    l->p[l->n++] = b;
    return 0;
}

/* Reads one partition: its static row, then each clustering range; after: resume past
 * this key (the last page's last item), with carried rows of the partition already
 * answered. */
static int read_partition(qctx *q, const buf *pk, const prefixes *pre, const buf *after,
                          int64_t carried)
{
    qr_err err;
    err_init(&err);
    new_partition(q);
    q->emitted_part = carried;
    if (after && after->len) q->static_used = 1;
    int rc = 0;
    buf lower, upper, lo, hi;
    buf_init(&lower, 0);
    buf_init(&upper, 0);
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    if (q->t->nck == 0) {
        if (after && after->len) goto out; /* its one row was answered */
        rc = read_row(q, pk, NULL, NULL);
        goto out;
    }
    if (load_static(q, pk) != 0) {
        rc = -1;
        goto out;
    }
    /* a prefix of every clustering column names one row */
    int rows = q->k.ck_eq == q->t->nck && !q->k.slice;
    /* each prefix's ranges in order: the prefixes are sorted, and so are a slice's ranges */
    size_t nr = cql_slice_count(&q->k);
    for (size_t i = 0; rc == 0 && i < pre->n * nr; i++) {
        size_t at = q->reversed ? pre->n * nr - 1 - i : i;
        if (rows) {
            rc = read_row(q, pk, &pre->p[at], after);
            continue;
        }
        cql_slice_range(&pre->p[at / nr], &q->k, at % nr, &lo, &hi);
        if (cql_partition_bounds(q->et, pk, &lo, &hi, 0, &lower, &upper, &err) != 0) {
            rc = cql_fail_engine(q->r->call, CQL_ERR_SERVER, &err);
            break;
        }
        if (after && after->len) {
            /* resume past the last row of the previous page */
            if (!q->reversed) {
                if (cmp_buf(after, &lower) >= 0) {
                    buf_reset(&lower);
                    buf_append(&lower, after->data, after->len);
                    buf_putc(&lower, 0);
                }
            } else if (cmp_buf(after, &upper) < 0) {
                buf_reset(&upper);
                buf_append(&upper, after->data, after->len);
            }
            if (cmp_buf(&lower, &upper) >= 0) continue;
        }
        rc = read_range(q, &lower, &upper, !q->reversed, pk);
    }
    if (rc == 0) rc = static_only(q);
out:
    buf_free(&lower);
    buf_free(&upper);
    buf_free(&lo);
    buf_free(&hi);
    return rc < 0 ? -1 : rc;
}

/* Reads every row of partition pk (read_partition with no clustering restriction), for
 * an index on a static column. */
static int read_whole_partition(qctx *q, const buf *pk, const buf *after, int64_t carried)
{
    buf all;
    buf_init(&all, 0);
    buf_putc(&all, CQL_CK_ROW);
    prefixes pre = {&all, 1, q->t, 0};
    int rc = read_partition(q, pk, &pre, after, carried);
    buf_free(&all);
    return rc;
}

/* ---- paging state: version, partition index, rows so far, rows of the partition, the
 * last key ---- */
#define PAGING_VERSION 1

static void paging_write(qctx *q, buf *out)
{
    int next = q->ended && q->k.partitions; /* the partition is done */
    buf_putc(out, PAGING_VERSION);
    buf_put_be32(out, q->part_index + (next ? 1 : 0));
    buf_put_be64(out, (uint64_t)q->emitted_total);
    buf_put_be64(out, next ? 0 : (uint64_t)q->emitted_part);
    buf_put_be32(out, (uint32_t)q->cur_pk.len);
    buf_append(out, q->cur_pk.data, q->cur_pk.len);
    if (!next) buf_append(out, q->last_key.data, q->last_key.len);
}

static int paging_read(qctx *q, const cql_value *ps)
{
    if (ps->len < 25 || ps->p[0] != PAGING_VERSION)
        return cql_fail(q->r->call, CQL_ERR_PROTOCOL, "Invalid value for the paging state");
    q->part_index = be32_read(ps->p + 1);
    q->emitted_total = (int64_t)be64_read(ps->p + 5);
    q->emitted_part = (int64_t)be64_read(ps->p + 13);
    uint32_t pkl = be32_read(ps->p + 21);
    if ((size_t)pkl > (size_t)ps->len - 25)
        return cql_fail(q->r->call, CQL_ERR_PROTOCOL, "Invalid value for the paging state");
    buf_reset(&q->cur_pk);
    buf_append(&q->cur_pk, ps->p + 25, pkl);
    buf_reset(&q->last_key);
    buf_append(&q->last_key, ps->p + 25 + pkl, (size_t)ps->len - 25 - pkl);
    q->resume = 1;
    return 0;
}

/* A LIMIT or PER PARTITION LIMIT term into *v, left as it is (none) when the statement
 * has none or binds it unset: 0, or -1 with Cassandra's error, which words both limits'
 * refusals alike. */
static int limit_of(cql_run *r, const cql_expr *e, int64_t *v)
{
    if (e == NULL) return 0;
    int64_t n;
    int got = cql_int_term_opt(r, e, &n, "[limit]");
    if (got == CQLVAL_ERROR) return -1;
    if (got == CQLVAL_UNSET) return 0;
    if (got == CQLVAL_NULL)
        return cql_fail(r->call, CQL_ERR_INVALID, "Invalid null value of limit");
    if (n <= 0) return cql_fail(r->call, CQL_ERR_INVALID, "LIMIT must be strictly positive");
    *v = n;
    return 0;
}

int cql_exec_select(cql_run *r, const cql_stmt *s, const cql_tinfo *t)
{
    cql_call *c = r->call;
    const cql_select *sel = &s->u.select;
    qctx q;
    memset(&q, 0, sizeof q);
    q.r = r;
    q.s = s;
    q.q = sel;
    q.t = t;
    q.limit = q.ppl = q.page = -1;
    q.now_s = cql_now_us() / 1000000;
    buf_init(&q.last_key, 0);
    buf_init(&q.cur_pk, 0);
    cql_rows_init(&q.out, t->ks, t->name);
    cql_rows_init(&q.jrow, t->ks, t->name);
    cql_rows_init(&q.grow, t->ks, t->name);
    buf_init(&q.group_key, 0);
    buf_init(&q.order_keys, 0);
    buf_init(&q.group_order, 0);
    cql_srow_init(&q.row);
    cql_srow_init(&q.static_row);
    plist parts = {0};
    prefixes pre = {.t = t};
    int rc = -1;
    q.vals = calloc(t->ncols + 1, sizeof *q.vals);
    q.has = calloc(t->ncols + 1, 1);
    if (q.vals == NULL || q.has == NULL) {
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        goto end;
    }
    for (size_t i = 0; i < t->ncols; i++)
        buf_init(&q.vals[i], 0);
    if (cql_where_keys(r, t, &sel->where, CQL_KEYS_SELECT, sel->allow_filtering, &q.k) != 0)
        goto end;
    if (plan_selection(&q) != 0 || plan_order(&q) != 0 || plan_reads(&q) != 0) goto end;
    if (q.first_row) {
        q.first_vals = calloc(t->ncols + 1, sizeof *q.first_vals);
        q.first_has = calloc(t->ncols + 1, 1);
        if (q.first_vals == NULL || q.first_has == NULL) {
            cql_fail(c, CQL_ERR_SERVER, "out of memory");
            goto end;
        }
        for (size_t i = 0; i < t->ncols; i++)
            buf_init(&q.first_vals[i], 0);
    }
    if (q.k.partitions) sort_partition_values(&q);
    if (sel->per_partition_limit && sel->distinct) {
        cql_fail(c, CQL_ERR_INVALID,
                 "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries");
        goto end;
    }
    if (sel->per_partition_limit && q.aggregate && sel->ngroup == 0) {
        cql_fail(c, CQL_ERR_INVALID, "PER PARTITION LIMIT is not allowed with aggregate queries.");
        goto end;
    }
    if (limit_of(r, sel->limit, &q.limit) != 0) goto end;
    if (limit_of(r, sel->per_partition_limit, &q.ppl) != 0) goto end;
    if (sel->distinct) q.ppl = 1;
    if (r->params && r->params->page_size > 0) q.page = r->params->page_size;
    if (q.post_order && q.page > 0) {
        cql_fail(c, CQL_ERR_INVALID,
                 "Cannot page queries with both ORDER BY and a IN restriction on the partition "
                 "key; you must either remove the ORDER BY or the IN and sort client side, or "
                 "disable paging for this query");
        goto end;
    }
    /* the rows of every partition are read, sorted, then cut */
    q.post_limit = q.post_order ? q.limit : -1;
    if (q.post_order) q.limit = -1;
    if (r->params && r->params->paging_state.len >= 0 && !q.aggregate &&
        paging_read(&q, &r->params->paging_state) != 0)
        goto end;
    q.et = cql_engine_table(c, t);
    if (q.et == NULL) goto end;
    /* a view's rows may have the empty text as their partition key (its base's rows may
     * hold it), but it names no partition a read can ask for, as in a table */
    for (size_t i = 0; t->view && t->npk == 1 && q.k.partitions && i < q.k.pk[0].n; i++)
        if (q.k.pk[0].v[i].len == 0) {
            cql_fail(c, CQL_ERR_INVALID, "Key may not be empty");
            goto end;
        }
    cql_watched watched;
    if (cql_watch_select(c, q.et, s, t, &q.k, q.reversed, q.aggregate,
                         r->params ? r->params->consistency : CQL_CL_ONE, &watched) != 0)
        goto end;
    q.metered = cql_watch_on(&watched);
    if (t->view) {
        rc = read_mview(&q);
    } else if (q.k.partitions) {
        void *arg[2] = {&q, &parts};
        if (cql_each_combination(q.k.pk, t->npk, add_part, arg) != 0) goto end;
        pre.nck = q.k.ck_eq;
        if (cql_each_prefix(&q.k, q.k.ck_eq, add_prefix, &pre) != 0) goto end;
        if (pre.n > 1) qsort(pre.p, pre.n, sizeof *pre.p, cmp_buf);
        unique_prefixes(&pre);
        rc = 0;
        size_t first = q.resume ? q.part_index : 0;
        for (size_t i = first; rc == 0 && i < parts.n; i++) {
            q.part_index = (uint32_t)i;
            int resumed = q.resume && i == first;
            rc = read_partition(&q, &parts.pk[i], &pre, resumed ? &q.last_key : NULL,
                                resumed ? q.emitted_part : 0);
            /* each partition named is a read of its own, as a GetItem or Query is */
            cql_watch_read_bytes(&watched, q.nbytes);
            q.nbytes = 0;
            if (rc > 0) break;
        }
    } else if (q.k.index) {
        rc = read_index(&q);
    } else {
        buf lower, upper;
        buf_init(&lower, 0);
        buf_init(&upper, 0);
        key_table_prefix(&lower, q.et, 0);
        buf_append(&upper, lower.data, lower.len);
        buf_prefix_successor(&upper);
        if (q.k.token && table_token_order(q.et)) {
            /* partitions lie in token order: the token range is a key range */
            q.token_ranged = 1;
            buf_reset(&lower);
            key_token_bound(&lower, q.et, q.k.token_lo);
            if (q.k.token_lo > q.k.token_hi) {
                buf_reset(&upper);
                buf_append(&upper, lower.data, lower.len); /* no token is in the range */
            } else if (q.k.token_hi < INT64_MAX) {
                buf_reset(&upper);
                key_token_bound(&upper, q.et, q.k.token_hi + 1);
            }
        }
        if (q.resume && q.last_key.len && cmp_buf(&q.last_key, &lower) >= 0) {
            buf_reset(&lower);
            buf_append(&lower, q.last_key.data, q.last_key.len);
            buf_putc(&lower, 0);
        }
        rc = read_range(&q, &lower, &upper, 1, NULL);
        buf_free(&lower);
        buf_free(&upper);
    }
    if (rc < 0) goto end;
    if (!q.k.partitions || t->view) cql_watch_read_bytes(&watched, q.nbytes);
    cql_watch_select_done(&watched, q.nread, q.out.nrows);
    rc = -1;
    if (q.aggregate) {
        /* without GROUP BY, no row still answers one row (COUNT 0) */
        if (!q.in_group && q.groups == 0 && q.ngroup == 0) q.in_group = 1;
        if (group_flush(&q) != 0) goto end;
    }
    if (q.post_order && order_answer(&q) != 0) goto end;
    buf ps;
    buf_init(&ps, 0);
    int more = q.full && !(q.limit >= 0 && q.emitted_total >= q.limit);
    if (more) paging_write(&q, &ps);
    rc = cql_rows_write(&q.out, c, more ? (const uint8_t *)ps.data : NULL, more ? ps.len : 0);
    buf_free(&ps);
end:
    for (size_t i = 0; i < parts.n; i++)
        buf_free(&parts.pk[i]);
    free(parts.pk);
    for (size_t i = 0; i < pre.n; i++)
        buf_free(&pre.p[i]);
    free(pre.p);
    if (q.vals)
        for (size_t i = 0; i < t->ncols; i++)
            buf_free(&q.vals[i]);
    free(q.vals);
    free(q.has);
    if (q.first_vals)
        for (size_t i = 0; i < t->ncols; i++)
            buf_free(&q.first_vals[i]);
    free(q.first_vals);
    free(q.first_has);
    for (size_t i = 0; q.sels && i < q.nsel; i++) {
        if (q.sels[i].agg_on) cqlagg_free(&q.sels[i].agg);
        for (size_t k = 0; k < q.sels[i].nnested; k++)
            cqlagg_free(&q.sels[i].nested[k]->state);
    }
    free(q.sels);
    cql_srow_free(&q.row);
    cql_srow_free(&q.static_row);
    cql_rowmap_free(&q.map);
    buf_free(&q.last_key);
    buf_free(&q.cur_pk);
    cql_keys_free(&q.k);
    cql_rows_free(&q.out);
    cql_rows_free(&q.jrow);
    cql_rows_free(&q.grow);
    buf_free(&q.group_key);
    buf_free(&q.order_keys);
    buf_free(&q.group_order);
    free(q.answered);

    if (q.et) catalog_release(c->db, q.et);
    return rc;
}
