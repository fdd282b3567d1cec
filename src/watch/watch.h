/* watch.h — the model at run time: the access patterns of loaded model files, every
 * data-plane request matched to one of them or recorded as a finding, and what was
 * observed of each (requests, rate, latency, items read and returned, units).
 *
 * The operations call it from their typed functions (items_get, query_read, scan_read,
 * items_put, …), so DynamoDB's JSON requests and PartiQL's statements take one path; the
 * CQL executor calls watch_cql_read and watch_cql_write (src/cql/exec_watch.c).
 * With no model loaded every entry point returns after one load and one branch. It
 * decides nothing about a request but, under --strict, whether to refuse it. */
#ifndef QR_WATCH_H
#define QR_WATCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "expr/expr.h"
#include "util/err.h"

/* Loads the model files of paths (NULL-terminated), plans their access patterns with the
 * checker's planner, reports on standard error how each model's tables differ from db's
 * and installs the watch on db (engine_model_state). strict: refuse Scans and undeclared
 * reads. On failure returns -1 with *errmsg malloc'd: "FILE:LINE:COL: message" for a
 * model that does not load. */
int watch_open(qr_db *db, const char *const *paths, int strict, char **errmsg);

/* The call running on this thread, for the sample request a finding keeps: qr_call_in
 * enters it and leaves it (restoring the outer one). Everything is borrowed for the call. */
#define WATCH_CALL_COUNTED 16
typedef struct watch_call {
    struct watch *w; /* NULL: the call's database has no model */
    const char *op;
    const char *text;
    size_t len;
    /* patterns already counted as requests of this call: a BatchGetItem or a
     * TransactWriteItems is one request of each pattern it touches */
    int counted[WATCH_CALL_COUNTED];
    int ncounted;
} watch_call;
watch_call watch_enter_call(qr_db *db, const char *op, const char *text, size_t len);
void watch_leave_call(const watch_call *outer);

/* A CQL statement as the CQL front end runs it on a table (src/cql/exec_watch.c fills
 * it): the columns its WHERE names, which `quarry model import --cql` reads into a
 * pattern's given and sk_condition, and how the executor reads it. Borrowed for the call
 * (a read's until watch_read_done). */
typedef struct watch_cql {
    const char *verb;           /* "SELECT", "INSERT", "UPDATE" or "DELETE" */
    const char *const *columns; /* every column a relation of the WHERE names, token() aside */
    size_t ncolumns;
    const char *range; /* the column a range is on (a clustering column's first), or NULL */
    int partitions;    /* the whole partition key by = or IN: one partition per value */
    int filtering;     /* rows are read and discarded (ALLOW FILTERING let it through) */
    const char *index; /* read through the secondary index on this column, or NULL */
    int reversed;      /* read against the clustering order (ORDER BY its reverse) */
    int aggregate;     /* aggregates or GROUP BY */
    const char *table; /* the model's table the read is of when not t's (a materialized
                          view's "ks.view", whose rows are an index of t), or NULL */
    /* the statement's text, asked for only when a finding keeps it: malloc'd, or NULL */
    char *(*text)(const void *arg);
    const void *text_arg;
} watch_cql;

/* A read being watched, from its classification to watch_read_done. */
typedef struct watch_req {
    struct watch *w; /* NULL: not watched (no model, or a table no model names) */
    struct w_table *tab;
    int pattern; /* the declared pattern it is, or -1 */
    int scan, filter;
    const char *op;
    const char *index;
    char shape[256]; /* the read's key shape, for findings */
    uint64_t start_ns;
    const watch_cql *cql; /* a CQL statement's read (its findings keep the statement) */
} watch_req;

/* Classify a read before it runs: 0 to go on, -1 with ValidationException in err when
 * --strict refuses it (a Scan, or a read no declared pattern is). r is always set. */
int watch_get(qr_db *db, const table *t, const json_t *key, int consistent, watch_req *r,
              qr_err *err);
int watch_query(qr_db *db, const table *t, const char *index, const expr_keycond_multi *kc,
                int filter, int forward, int consistent, watch_req *r, qr_err *err);
int watch_scan(qr_db *db, table *t, const char *index, int filter, int consistent, watch_req *r,
               qr_err *err);
/* Classify a CQL SELECT of table t before it runs, as watch_query does a Query: the
 * declared pattern whose given columns, range, direction and aggregate it has, or an
 * UndeclaredPattern finding naming the nearest; a read of every partition (no partition
 * key: a full table, token() ranges, ALLOW FILTERING) or one that filters rows is a Scan
 * finding naming the statement. 0 to go on, -1 with ValidationException in err when
 * --strict refuses it. r is always set. */
int watch_cql_read(qr_db *db, table *t, const watch_cql *q, watch_req *r, qr_err *err);
/* 1 when db's model declares a table named name (a materialized view declared as a table
 * of its own), 0 otherwise or with no model. */
int watch_has_table(qr_db *db, const char *name);
/* After a CQL INSERT, UPDATE or DELETE of table t committed (start from
 * watch_begin_write): counted for the put, update or delete pattern of the table's entity
 * whose WHERE names the same columns (an INSERT: the entity's put pattern). */
void watch_cql_write(qr_db *db, const table *t, const watch_cql *q, uint64_t start);
/* After the read: items read (scanned) and returned, read units consumed. */
void watch_read_done(watch_req *r, size_t read, size_t returned, double units);
/* A strongly consistent read of global index index of table was refused (the running
 * call's database's watch records it). */
void watch_strong_read(const char *table, const char *index);

/* Writes. An item is given parsed (json) or as the plain attributes of a PutItem read
 * from its text (attrs: S or N values, without escapes). */
typedef struct watch_attr {
    const char *name, *text;
    size_t name_len, text_len;
    int number;
} watch_attr;
typedef enum watch_write_kind {
    WATCH_PUT,
    WATCH_UPDATE,
    WATCH_DELETE,
    WATCH_TRANSACTION
} watch_write_kind;
/* The start of a write, for its latency: 0 when db has no model (then watch_write may
 * be skipped). */
uint64_t watch_begin_write(qr_db *db);
/* After a write committed: its item (for a delete, its key or old item) is matched to
 * an entity by the key templates, its attributes checked against their formats, and the
 * write counted for the entity's pattern of that kind. */
void watch_write(qr_db *db, const table *t, watch_write_kind kind, const json_t *item,
                 const watch_attr *attrs, size_t nattrs, double units, uint64_t start);

/* After a TransactWriteItems committed, its n written members: the table, the item
 * before (NULL: none) and after (NULL: deleted) of each. A member that changes an
 * attribute the model keeps copies of "same-transaction", while no other member writes
 * each copy's entity with the new value, is a StaleCopy finding. */
void watch_transaction(qr_db *db, size_t n, const table *const *tables, const json_t *const *olds,
                       const json_t *const *news);

/* QuarryDescribeModel's answer (docs/model.md; CONTRACT of the console): the models,
 * patterns declared and observed, findings, unused indexes and unexercised patterns,
 * only of table when it is not NULL. *out is a new object. */
int watch_describe(qr_db *db, const char *table, json_t **out);

#endif
