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
