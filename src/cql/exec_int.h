/* exec_int.h — what the executor's files share: the database's CQL state (schema and
 * prepared statements, hung on the handle), a statement's bound values, and the rows of
 * a result as they are built.
 *
 * Not for the layers above: they call exec.h. */
#ifndef QR_CQL_EXEC_INT_H
#define QR_CQL_EXEC_INT_H

#include <jansson.h>
#include <pthread.h>

#include "cql/ast.h"
#include "cql/exec.h"
#include "cql/schema.h"

/* How a CQL table is kept in its engine table (the contract's storage mapping): the
 * partition key's serialized form and the clustering key's order-preserving form as two
 * binary key attributes, the row's expiry for the TTL sweeper, and the description's
 * member naming the CQL table. */
#define CQL_PK_ATTR "$pk"
#define CQL_CK_ATTR "$ck"
#define CQL_EXPIRES_ATTR "$expires"
#define CQL_TABLE_FIELD "QuarryCqlTable"

struct cqltype_env;

/* The database's CQL state: its schema (schema.h) and prepared statements. */
typedef struct cql_prepared_entry cql_prepared_entry;
typedef struct cql_state {
    pthread_mutex_t lock; /* the schema and the prepared statements */
    cql_schema *schema;
    cql_prepared_entry *prepared;
    size_t nprepared, capprepared;
} cql_state;

/* The state of c's database, made (and the schema loaded) at its first call; NULL with
 * the call's error set when the schema cannot be read. */
cql_state *cql_state_of(cql_call *c);

/* A type environment for keyspace ks whose user types are read from st's schema (the
 * caller holds st's lock while env is used); trees are allocated from a. */
void cql_type_env(cql_state *st, const char *ks, cql_arena *a, struct cqltype_env *env);

/* The values bound to a statement's markers, positional or named. */
typedef struct cql_binds {
    const cql_values *values; /* NULL: none */
} cql_binds;

/* What a statement runs with beyond its tree. */
typedef struct cql_run {
    cql_call *call;
    const cql_parsed *parsed;
    const cql_query_params *params; /* NULL for a statement of a BATCH */
    const cql_values *values;       /* the bound values, or NULL */
    int64_t timestamp;              /* the request's default timestamp (microseconds) */
} cql_run;

/* The keyspace a statement's name resolves to: its own, else the connection's; NULL
 * with the call's error "No keyspace has been specified. USE a keyspace, or explicitly
 * specify keyspace.tablename" when neither is given. */
const char *cql_keyspace_of(cql_call *c, const cql_qname *name);

/* The bytes bound to marker i (by position, or by name for a named marker): 1 with *v
 * set, 0 when no value was bound (the call's error set), -1 on a malformed request. */
int cql_bound(cql_run *r, const cql_expr *marker, cql_value *v);

/* ---- the rows of a result ----
 * Values are appended row by row as [bytes]; the metadata is kept beside them. */
typedef struct cql_rows {
    const char *keyspace, *table;
    cql_column *cols;
    uint32_t ncols;
    buf data; /* the rows' values, ncols [bytes] a row */
    uint32_t nrows;
} cql_rows;

void cql_rows_init(cql_rows *rs, const char *keyspace, const char *table);
void cql_rows_free(cql_rows *rs);
int cql_rows_column(cql_rows *rs, const char *name, const cql_type *type);
int cql_rows_put(cql_rows *rs, const void *p, int32_t len); /* len < 0: null */
/* Writes the RESULT Rows body (paging_state may be NULL). */
int cql_rows_write(const cql_rows *rs, cql_call *c, const uint8_t *paging_state, size_t paging_len);

/* ---- a table as statements see it ---- */
typedef struct cql_tcol {
    const char *name;
    const struct cql_ctype *type; /* NULL for a system table's column */
    const cql_type *wire;
    char kind; /* 'p' partition key, 'c' clustering, 's' static, 'r' regular */
    int pos;   /* position in the partition key or clustering; -1 otherwise */
    int desc;  /* clustering DESC */
} cql_tcol;

typedef struct cql_tinfo {
    char ks[CQL_NAME_MAX], name[CQL_NAME_MAX];
    int system; /* a system table (system.c answers it) */
    cql_tcol *cols;
    size_t ncols, npk, nck;
    int counter;
    int64_t default_ttl; /* seconds */
    cql_arena arena;     /* everything above */
} cql_tinfo;

/* Fills *t for ks.name, from the schema or the system tables. 0, or -1 with the call's
 * error ("keyspace x does not exist", "table x does not exist") set. cql_tinfo_free
 * either way. */
int cql_tinfo_load(cql_call *c, const char *ks, const char *name, cql_tinfo *t);
void cql_tinfo_free(cql_tinfo *t);
/* The column named name, or NULL. */
const cql_tcol *cql_tinfo_col(const cql_tinfo *t, const char *name);
/* A system table's columns into t (1), or 0 when ks.name is none. */
int cql_system_tinfo(const char *ks, const char *name, cql_tinfo *t);

/* ---- prepared statements (prepared.c) ---- */
/* The bind markers of a parsed statement, as PREPARE's metadata gives them: each marker's
 * column spec, and the markers of the partition key in its order. 0, or -1 with the
 * call's error set. Strings live in t's arena or the parse's. */
typedef struct cql_markers {
    cql_column *cols;
    size_t n;
    uint16_t *pk;
    size_t npk;
} cql_markers;
int cql_markers_of(cql_call *c, const cql_stmt *s, const cql_parsed *p, cql_tinfo *t,
                   cql_markers *m);
void cql_markers_free(cql_markers *m);
/* The kept text of a prepared id and the keyspace it was prepared in (malloc'd copies):
 * 0, or -1 with UNPREPARED set. */
int cql_prepared_get(cql_call *c, const uint8_t *id, size_t len, char **text, size_t *tlen,
                     char **ks);
void cql_prepared_free_all(cql_state *st);

/* The columns a SELECT answers with (names and types) into rs's metadata. 0, or -1 with
 * the call's error set. */
int cql_select_metadata(cql_call *c, const cql_stmt *s, const cql_tinfo *t, cql_rows *rs);

/* ---- the executor's parts ---- */
/* SELECT of a system table (system.local, peers, system_schema.*): 1 when ks.table is
 * one (and it ran: 0 or -1 in *rc), 0 when it is not. */
int cql_system_select(cql_run *r, const cql_stmt *s, const char *ks, int *rc);
/* 1 when ks is a keyspace the system tables make (system, system_schema, ...). */
int cql_system_keyspace(const char *ks);

/* Schema statements (exec_ddl.c). */
int cql_exec_ddl(cql_run *r, const cql_stmt *s);

/* Writes a SCHEMA_CHANGE result and the matching event into the call. */
int cql_schema_changed(cql_call *c, const char *change, const char *target, const char *ks,
                       const char *name);

#endif
