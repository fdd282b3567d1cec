/* exec_watch.c — the executor's reports to the model watch: a statement's WHERE read into
 * the columns it names and its range, as `quarry model import --cql` reads a query into a
 * pattern's given and sk_condition, with how cql_where_keys resolved it (one partition
 * per value, a secondary index, filtering), and what it read in DynamoDB's read units
 * (meter_read_units) at the strength of its consistency level. A view's read is one of
 * the view's own model table, or of the base through the view's index. The matching, the
 * counts and the findings are the watch's; with no model loaded each call returns after
 * one load and a branch. */
#include "cql/exec_watch.h"

#include <stdio.h>
#include <string.h>

#include "engine/engine.h"

static const cql_where *where_of(const cql_stmt *s)
{
    switch (s->kind) {
    case CQL_SELECT:
        return &s->u.select.where;
    case CQL_UPDATE:
        return &s->u.update.where;
    case CQL_DELETE:
        return &s->u.del.where;
    default:
        return NULL;
    }
}

static int is_range(cql_op op)
{
    return op == CQL_OP_LT || op == CQL_OP_LTE || op == CQL_OP_GT || op == CQL_OP_GTE;
}

static char column_kind(const cql_tinfo *t, const char *name)
{
    const cql_tcol *col = cql_tinfo_col(t, name);
    return col ? col->kind : 0;
}

/* The columns s's WHERE names into w->q: a range on a clustering column names that column
 * alone (a multi-column slice its first) and is the range; a range on the partition key
 * gives no partition and names nothing; token() names nothing; the first range on another
 * column is the range when no clustering column has one. */
static void read_where(cql_watched *w, const cql_stmt *s, const cql_tinfo *t)
{
    const cql_where *wh = where_of(s);
    const char *other_range = NULL;
    w->q.columns = w->columns;
    for (size_t i = 0; wh && i < wh->n; i++) {
        const cql_relation *rel = &wh->rels[i];
        if (rel->kind == CQL_REL_TOKEN || rel->op == CQL_OP_IS_NOT_NULL || rel->ncolumns == 0)
            continue;
        char kind = column_kind(t, rel->columns[0]);
        size_t n = rel->ncolumns;
        if (is_range(rel->op) && rel->kind != CQL_REL_ELEMENT) {
            if (kind == 'p') continue;
            if (kind == 'c' && w->q.range == NULL) w->q.range = rel->columns[0];
            if (kind != 'c' && other_range == NULL) other_range = rel->columns[0];
            if (kind == 'c') n = 1;
        }
        for (size_t k = 0; k < n && w->q.ncolumns < CQL_WATCH_COLUMNS; k++)
            w->columns[w->q.ncolumns++] = rel->columns[k];
    }
    if (w->q.range == NULL) w->q.range = other_range;
}

static char *statement_text(const void *stmt)
{
    return cql_print(stmt);
}

static void watched_init(cql_watched *w, const cql_stmt *s, const char *verb)
{
    memset(w, 0, sizeof *w);
    w->q.verb = verb;
    w->q.text = statement_text;
    w->q.text_arg = s;
}

/* ANY, ONE and LOCAL_ONE read one replica: DynamoDB's eventually consistent read. */
static int strong_level(uint16_t consistency)
{
    return consistency != CQL_CL_ANY && consistency != CQL_CL_ONE &&
           consistency != CQL_CL_LOCAL_ONE;
}

int cql_watch_select(cql_call *c, table *et, const cql_stmt *s, const cql_tinfo *t,
                     const cql_keys *k, int reversed, int aggregate, uint16_t consistency,
                     cql_watched *w)
{
    watched_init(w, s, "SELECT");
    w->consistent = strong_level(consistency);
    if (engine_model_state(c->db) == NULL) return 0;
    read_where(w, s, t);
    w->q.partitions = k->partitions;
    w->q.filtering = k->needs_filtering;
    w->q.index = k->index ? k->index->name : NULL;
    if (t->view) {
        snprintf(w->view, sizeof w->view, "%s.%s", t->ks, t->name);
        if (watch_has_table(c->db, w->view))
            w->q.table = w->view;
        else
            w->q.index = t->name; /* the base's index the view's rows are */
    }
    w->q.reversed = reversed;
    w->q.aggregate = aggregate;
    qr_err err;
    err_init(&err);
    if (watch_cql_read(c->db, et, &w->q, &w->req, &err) == 0) return 0;
    cql_fail(c, CQL_ERR_INVALID, "%s", err.msg);
    err_clear(&err);
    return -1;
}

void cql_watch_read_bytes(cql_watched *w, size_t bytes)
{
    if (cql_watch_on(w)) w->units += meter_read_units(bytes, w->consistent);
}

void cql_watch_select_done(cql_watched *w, size_t read, size_t returned)
{
    watch_read_done(&w->req, read, returned, w->units);
}

void cql_watch_write(cql_call *c, const table *et, const cql_stmt *s, const cql_tinfo *t,
                     uint64_t start)
{
    if (start == 0) return; /* no model */
    cql_watched w;
    watched_init(&w, s,
                 s->kind == CQL_INSERT   ? "INSERT"
                 : s->kind == CQL_UPDATE ? "UPDATE"
                                         : "DELETE");
    read_where(&w, s, t);
    watch_cql_write(c->db, et, &w.q, start);
}
