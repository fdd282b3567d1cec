/* exec_watch.h — what the executor tells the model watch (watch/watch.h) of a statement
 * on a CQL table: the columns its WHERE names and how the executor reads it, before a
 * SELECT reads and after a write commits. Not for the layers above. */
#ifndef QR_CQL_EXEC_WATCH_H
#define QR_CQL_EXEC_WATCH_H

#include "cql/exec_int.h"
#include "watch/watch.h"

#define CQL_WATCH_COLUMNS 64

/* A SELECT being watched, from cql_watch_select to cql_watch_select_done. */
typedef struct cql_watched {
    watch_cql q;
    const char *columns[CQL_WATCH_COLUMNS];
    char view[2 * CQL_NAME_MAX + 2]; /* a view's model table, "ks.view" */
    watch_req req;
    int consistent; /* read at a strong consistency level */
    double units;   /* read units charged so far */
} cql_watched;

/* Before a SELECT of t (its engine table et; a view's is its base's) reads, with k as
 * cql_where_keys resolved its WHERE, the plan's direction and aggregation, and the
 * request's consistency level (CQL_CL_*): 0, or -1 with the call's error set (Invalid)
 * when `serve --model --strict` refuses it. w is always set. A view's read is watched as
 * one of the model's table named after the view, or, when the model declares none, as a
 * read of the base table through the index the view is. */
int cql_watch_select(cql_call *c, table *et, const cql_stmt *s, const cql_tinfo *t,
                     const cql_keys *k, int reversed, int aggregate, uint16_t consistency,
                     cql_watched *w);
/* 1 when the SELECT is watched: only then need its rows' sizes be counted. */
static inline int cql_watch_on(const cql_watched *w)
{
    return w->req.w != NULL;
}
/* Charges one read request of the SELECT, as DynamoDB meters a Query or GetItem: the
 * bytes of the items it read (a partition the WHERE names; every row of a scan, an index
 * or a view read) in 4 KB read units, rounded up, at least one, half for an eventually
 * consistent level (ANY, ONE, LOCAL_ONE). */
void cql_watch_read_bytes(cql_watched *w, size_t bytes);
/* After the SELECT: the rows it read (live or not) and those it answered. */
void cql_watch_select_done(cql_watched *w, size_t read, size_t returned);

/* After the INSERT, UPDATE or DELETE s of t committed; start is watch_begin_write's. */
void cql_watch_write(cql_call *c, const table *et, const cql_stmt *s, const cql_tinfo *t,
                     uint64_t start);

#endif
