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
    watch_req req;
} cql_watched;

/* Before a SELECT of t (its engine table et) reads, with k as cql_where_keys resolved its
 * WHERE and the plan's direction and aggregation: 0, or -1 with the call's error set
 * (Invalid) when `serve --model --strict` refuses it. w is always set. */
int cql_watch_select(cql_call *c, table *et, const cql_stmt *s, const cql_tinfo *t,
                     const cql_keys *k, int reversed, int aggregate, cql_watched *w);
/* After the SELECT: the rows it read (live or not) and those it answered. */
void cql_watch_select_done(cql_watched *w, size_t read, size_t returned);

/* After the INSERT, UPDATE or DELETE s of t committed; start is watch_begin_write's. */
void cql_watch_write(cql_call *c, const table *et, const cql_stmt *s, const cql_tinfo *t,
                     uint64_t start);

#endif
