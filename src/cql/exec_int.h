/* exec_int.h — what the executor's files share: the database's CQL state (schema and
 * prepared statements, hung on the handle), a statement's bound values, and the rows of
 * a result as they are built.
 *
 * Not for the layers above: they call exec.h. */
#ifndef QR_CQL_EXEC_INT_H
#define QR_CQL_EXEC_INT_H

#include <jansson.h>
#include <pthread.h>
#include <string.h>

#include "cql/aggregate.h"
#include "cql/ast.h"
#include "cql/exec.h"
#include "cql/keyenc.h"
#include "cql/schema.h"
#include "cql/storedrow.h"

/* How a CQL table is kept in its engine table (the contract's storage mapping): the
 * partition key's serialized form and the clustering key's order-preserving form as two
 * binary key attributes and the row's expiry for the TTL sweeper (the description's
 * member naming the CQL table is engine.h's QR_CQL_TABLE_FIELD). */
#define CQL_PK_ATTR "$pk"
#define CQL_CK_ATTR "$ck"
#define CQL_EXPIRES_ATTR "$expires"
/* Deletions kept as tombstones, as Cassandra keeps them (exec_row.c): a row's deletion
 * time ($del, microseconds; in a partition's static row item, the partition's), a
 * partition's range deletions ($rt, in its static row item), and until when the item's
 * tombstones are kept ($delexp, seconds: gc_grace_seconds after the last deletion). */
#define CQL_DEL_ATTR "$del"
#define CQL_RT_ATTR "$rt"
#define CQL_DELEXP_ATTR "$delexp"

struct cqltype_env;

/* The database's CQL state: its schema (schema.h), the tables' descriptions as statements
 * see them (built once per schema version, shared by the statements that run on it) and
 * the prepared statements. */
typedef struct cql_prepared_entry cql_prepared_entry;
typedef struct cql_tshared cql_tshared;
typedef struct cql_state {
    pthread_mutex_t lock; /* the schema, the tables' descriptions and prepared statements */
    cql_schema *schema;
    char tables_version[40]; /* the schema version the descriptions below were built from */
    cql_tshared **tables;
    size_t ntables, captables;
    cql_prepared_entry *prepared;
    size_t nprepared, capprepared;
} cql_state;

/* The state of c's database, made (and the schema loaded) at its first call; NULL with
 * the call's error set when the schema cannot be read. */
cql_state *cql_state_of(cql_call *c);

/* A type environment for keyspace ks whose user types are read from st's schema (the
 * caller holds st's lock while env is used); trees are allocated from a. */
void cql_type_env(cql_state *st, const char *ks, arena *a, struct cqltype_env *env);

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
    const char *keyspace;           /* a prepared statement's keyspace, or NULL */
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
    const char *attr; /* the name its cells are stored under: the name it was created with,
                       * or one given when another column's cells hold that name */
    const struct cql_ctype *type; /* NULL for a system table's column */
    const cql_type *wire;
    char kind;          /* 'p' partition key, 'c' clustering, 's' static, 'r' regular */
    int pos;            /* position in the partition key or clustering; -1 otherwise */
    int desc;           /* clustering DESC */
    const char *index;  /* the secondary index on the column, or NULL */
    int64_t dropped_at; /* a column of this name was dropped then: older cells are gone */
} cql_tcol;

/* The name col's cells and their times are stored under in a row's item. */
static inline const char *cql_col_stored(const cql_tcol *col)
{
    return col->attr ? col->attr : col->name;
}

/* An index on a collection (values(c), keys(m), entries(m)) or a frozen collection
 * (full(f)), or a plain one on a type no engine key type holds (kind CQL_INDEX_FULL: its
 * value's bytes): a multi-valued global index of the engine table (exec_index.c). */
typedef struct cql_tindex {
    const char *name;
    const cql_tcol *col;
    int kind; /* CQL_INDEX_KEYS, CQL_INDEX_VALUES, CQL_INDEX_ENTRIES or CQL_INDEX_FULL */
} cql_tindex;

typedef struct cql_tinfo {
    char ks[CQL_NAME_MAX], name[CQL_NAME_MAX];
    char engine[CQL_NAME_MAX]; /* the table whose engine table holds the rows (a view's base) */
    int view;   /* a materialized view: an index of its base's engine table, named name */
    int system; /* a system table (system.c answers it) */
    cql_tcol *cols;
    size_t ncols, npk, nck;
    int counter;
    int64_t default_ttl; /* seconds */
    int64_t gc_grace;    /* seconds a tombstone is kept (gc_grace_seconds) */
    cql_tindex *indexes; /* the indexes on collections and frozen collections */
    size_t nindexes;
    arena arena;         /* a system table's columns; a statement's own allocations */
    cql_tshared *shared; /* the database's description cols point into, or NULL */
} cql_tinfo;

/* Fills *t for ks.name, from the schema or the system tables. A schema table's columns
 * are the state's description of it for the current schema version (built at its first
 * use in that version, then shared, read-only); t->arena is the statement's own. 0, or
 * -1 with the call's error ("keyspace x does not exist", "table x does not exist") set.
 * cql_tinfo_free either way. */
int cql_tinfo_load(cql_call *c, const char *ks, const char *name, cql_tinfo *t);
void cql_tinfo_free(cql_tinfo *t);
/* Lets go of the state's descriptions (when the schema version moved on, and at close). */
void cql_tinfo_cache_clear(cql_state *st);
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
/* A prepared statement as EXECUTE and BATCH run it: its parse, kept from PREPARE (the
 * tree does not depend on the schema and is only read while statements run), and the
 * keyspace it was prepared in (NULL: the connection's). Shared by the calls running it. */
typedef struct cql_plan {
    int refs; /* atomic */
    cql_parsed parsed;
    char *keyspace;
} cql_plan;
/* A new plan (one reference) of a statement's text: NULL with the call's error set (the
 * SyntaxException of a text that does not parse). */
cql_plan *cql_plan_parse(cql_call *c, const char *text, size_t len);
/* The plan of a prepared id, with a reference taken (cql_plan_release): 0, or -1 with
 * UNPREPARED set. */
int cql_prepared_get(cql_call *c, const uint8_t *id, size_t len, cql_plan **plan);
/* The result metadata id of prepared statement id as its latest PREPARE answered: 1 with
 * out set, 0 when it is not kept. */
int cql_prepared_result_id(cql_call *c, const uint8_t *id, size_t len, uint8_t out[16]);
/* The id of a result's metadata, Cassandra's ResultMetadata id: the MD5 of its column
 * specifications (what PREPARE and a v5 METADATA_CHANGED answer with). */
void cql_metadata_id(uint8_t version, const cql_metadata *m, uint8_t out[16]);
void cql_plan_release(cql_plan *p);
void cql_prepared_free_all(cql_state *st);

/* A selector that calls a function on a row: a native function (func.h) of columns and
 * constants, token() of the partition key, or CAST of a column. */
struct cqlfn_fn;
#define CQL_FNSEL_MAX_ARGS 8
typedef struct cql_fnsel {
    int kind; /* 'f' function, 't' token, 'c' cast, 'u' field of a UDT, 'k' a typed term,
                 'e' element and 's' slice of a set or map (keys: argexpr[1], [2]), 'o' an
                 arithmetic operation, 'h' a selector under a type hint, 'a' an aggregate's
                 result */
    const struct cqlfn_fn *fn;
    const struct cql_ctype *ret;
    size_t nargs;
    size_t field;                                       /* 'u': the field's position in its type */
    const cql_tcol *argcol[CQL_FNSEL_MAX_ARGS];         /* a column, or NULL for: */
    const struct cql_fnsel *argsel[CQL_FNSEL_MAX_ARGS]; /* a nested selector, or NULL for */
    const cql_expr *argexpr[CQL_FNSEL_MAX_ARGS];        /* a constant term ('k': the hint) */
    const struct cql_ctype *argtype[CQL_FNSEL_MAX_ARGS];
    char argcell[CQL_FNSEL_MAX_ARGS]; /* 'w', 't': argcol's writetime() or ttl(), not its value */
    const struct cqlarith_op *arith;  /* 'o', an operation: its overload (arith.h) */
    struct cql_fnagg *agg;            /* 'a', an aggregate */
} cql_fnsel;

/* An aggregate inside a computed selector (cast(count(*) AS int), max(b) + 1): its running
 * state, which the SELECT executor feeds and resets, and its argument as cql_agg_arg gives
 * it. A selector with one answers the aggregate's result for each group. */
typedef struct cql_fnagg {
    cqlagg state;
    const cql_tcol *col; /* the argument column; NULL for COUNT(*) or with: */
    int cellfn;          /* 'w', 't': the argument is writetime(col) or ttl(col) */
    int on_fn;           /* the argument is the computed selector fn */
    cql_fnsel fn;
} cql_fnagg;
/* The aggregates inside f into out (at most max): how many there are. *plain is set when
 * f also reads a column outside them. */
size_t cql_fnsel_aggregates(const cql_fnsel *f, cql_fnagg **out, size_t max, int *plain);
/* Resolves the computed selector e (a function call, CAST, field selection a.f or typed
 * term (int)1; arguments may nest) against t (exec_selector.c): 0, or -1 with the error
 * set. Nested selectors live in t's arena. *name gets the column name Cassandra gives it
 * ("system.totimestamp(system.now())", "addr.zip", "(int)1"; malloc'd). */
int cql_fnsel_resolve(cql_call *c, const cql_tinfo *t, const cql_expr *e, cql_fnsel *out,
                      char **name);
/* The write time ('w', a bigint) or TTL ('t', an int) of a column's cell in the row a
 * computed selector is evaluated on, into b: its length, or -1 for null (no cell, no TTL). */
typedef struct cql_cellmeta {
    int32_t (*get)(void *ctx, const cql_tcol *col, int which, uint8_t b[8]);
    void *ctx;
} cql_cellmeta;
/* Whether f reads a writetime() or ttl() (cql_cellmeta's 'w' or 't'), directly or nested. */
int cql_fnsel_cells(const cql_fnsel *f, int which);
/* f's value for a row whose column i has the value vals[i] when has[i] (both indexed like
 * t->cols; unused when f reads no column) and whose cells' write times and TTLs meta
 * answers (NULL: none, they are null): CQLVAL_OK with the bytes appended to out,
 * CQLVAL_NULL, or CQLVAL_ERROR with the call's error set. */
int cql_fnsel_value(cql_run *r, const cql_tinfo *t, const cql_fnsel *f, const buf *vals,
                    const int8_t *has, const cql_cellmeta *meta, buf *out);

/* 1 when an aggregate's only argument is a literal (COUNT(1) counts rows), not a column
 * or a computed selector. */
static inline int cql_agg_literal_arg(const cql_expr *e)
{
    return e->nitems == 1 && e->items[0]->kind <= CQL_E_NULL;
}

/* The argument of aggregate call e (not COUNT(*)): a column, *col; writetime(col) or
 * ttl(col), *col with *cellfn 'w' or 't' (else 0); or a computed selector resolved into
 * *fn (exec_selector.c). *type is its type and *name (malloc'd) what the result column's
 * name holds ("b", "writetime(b)", "cast(b as double)"). 0, or -1 with the error set. */
int cql_agg_arg(cql_call *c, const cql_tinfo *t, const cql_expr *e, const cql_tcol **col,
                int *cellfn, cql_fnsel *fn, const struct cql_ctype **type, char **name);

/* The columns a SELECT answers with (names and types) into rs's metadata. 0, or -1 with
 * the call's error set. */
int cql_select_metadata(cql_call *c, const cql_stmt *s, const cql_tinfo *t, cql_rows *rs);

/* ---- rows in engine items (exec_row.c) ---- */
struct table;
struct item_txn;
json_t *cql_b64(const void *p, size_t len); /* a new {"B": base64} */
int cql_unb64(const json_t *av, buf *out);
int64_t cql_now_us(void);
/* The partition key's serialized form (Cassandra's composite form for several columns);
 * -1 with the call c (unless NULL) failed in Cassandra's words for a null, empty or
 * oversized key. */
int cql_pk_serialize(cql_call *c, const cql_tinfo *t, const cql_value *vals, buf *out);
/* Appends one clustering component in its order-preserving form. */
int cql_ck_append(buf *out, const cql_tcol *col, const uint8_t *p, size_t len);
#define CQL_CK_ROW 0x01    /* the first byte of a clustering row's $ck */
#define CQL_CK_STATIC 0x00 /* a partition's static row: $ck is this byte alone */
/* The engine key of the row (ck NULL for a table without clustering). */
int cql_row_key(const struct table *et, const buf *pk, const buf *ck, buf *key, qr_err *err);
/* A new item holding only the row's key attributes. */
json_t *cql_row_new(const buf *pk, const buf *ck);
void cql_cell_attr(const char *name, char *out, size_t cap);

/* The engine's global index behind the CQL index or materialized view name: "cql." and
 * the name, so CQL's one- and two-letter names meet the engine's index-name rules. */
void cql_index_engine_name(const char *name, char *out, size_t cap);
int64_t cql_cell_ts(json_t *item, const char *col);  /* INT64_MIN: never written */
int64_t cql_cell_exp(json_t *item, const char *col); /* 0: no expiry */
/* Writes a cell (len < 0: deletes it) at timestamp ts, expiring at exp_s (0: never), if
 * ts is not older than the cell's: 1 written, 0 older, -1 out of memory. */
int cql_cell_write(json_t *item, const cql_tcol *col, const uint8_t *p, int32_t len, int64_t ts,
                   int64_t exp_s);
/* A live cell's value bytes appended to out: 1, 0 when there is none, -1 malformed. */
int cql_cell_read(json_t *item, const cql_tcol *col, int64_t now_s, buf *out);
void cql_row_mark(json_t *item, int64_t ts, int64_t exp_s);

/* A non-frozen list, set or map is a cell per element, as in Cassandra: each element has
 * its own write time and expiry, and its deletion leaves a tombstone at its time; the
 * whole collection's deletion (DELETE c, or c = ... replacing it) is one time before
 * which every element is gone. The cql_cell_* functions above read and write such a
 * column whole; the cql_coll_* ones its elements. */
typedef struct cql_coll_el {
    size_t koff, voff; /* the key's and value's bytes in the collection's bytes */
    uint32_t klen, vlen;
    int64_t lkey; /* a list: the element's place (the list is in lkey order) */
    int64_t ts;   /* written (or deleted) at, microseconds */
    int64_t exp;  /* live: its expiry (0 never); tombstone: when it was made (seconds) */
    int dead;     /* a tombstone */
} cql_coll_el;

typedef struct cql_coll {
    const cql_tcol *col;
    int list, map;
    int64_t deleted; /* the whole collection deleted at (INT64_MIN: never) */
    cql_coll_el *el; /* in the collection's order (a set's, a map key's, lkey), tombstones too */
    size_t n, cap;
    buf bytes;
} cql_coll;

/* 1 when col is a non-frozen list, set or map. */
int cql_coll_col(const cql_tcol *col);
/* Reads col's elements from item into *c (cql_coll_free either way): 0, or -1 when the
 * stored form is malformed. */
int cql_coll_load(json_t *item, const cql_tcol *col, cql_coll *c);
void cql_coll_free(cql_coll *c);
/* Writes element key (a set's element or map's key; lkey for a list) at ts, with value v
 * (a map's value or list's element; vlen 0 for a set; vlen < 0 deletes it), expiring
 * at exp_s (0: never), unless the element or the collection is newer: 1 written, 0
 * older, -1 out of memory. k and v must not point into c. */
int cql_coll_put(cql_coll *c, const uint8_t *k, uint32_t klen, int64_t lkey, const uint8_t *v,
                 int32_t vlen, int64_t ts, int64_t exp_s, int64_t now_s);
/* Calls fn with each element of p[0..len), a value of a list (list), set or map (map)
 * type: its key (a set's element, a map's key; empty for a list) and value (a map's
 * value, a list's element; empty for a set). 0, fn's first non-zero answer, or -1 when
 * the value is malformed or holds a null. */
typedef int (*cql_coll_fn)(void *arg, const uint8_t *k, uint32_t klen, const uint8_t *v,
                           uint32_t vlen);
int cql_coll_each(const uint8_t *p, size_t len, int list, int map, cql_coll_fn fn, void *arg);
/* Deletes every element not newer than ts. */
void cql_coll_delete(cql_coll *c, int64_t ts);
/* The lkey of a new element at the list's front or back. */
int64_t cql_coll_list_key(const cql_coll *c, int front);
/* 1 when element i is live at now_s. */
int cql_coll_el_live(const cql_coll *c, size_t i, int64_t now_s);
/* The live elements' value appended to out (the wire form of the collection): their
 * count (0: none, nothing appended), or -1 when out is full. */
long cql_coll_value(const cql_coll *c, int64_t now_s, buf *out);
/* Writes c back into item: the live elements as the column's attribute (value.h's stored
 * form, so a DynamoDB reader sees the collection), their times beside it; elements expired
 * by now_s become tombstones, tombstones older than gc_grace are dropped. 0, or -1 out of
 * memory. */
int cql_coll_store(json_t *item, cql_coll *c, int64_t now_s);
/* 1 when the row has a live marker or a visible regular or static cell. */
int cql_row_live(json_t *item, const cql_tinfo *t, int64_t now_s);
/* Sets the item's expiry for the TTL sweeper from its marker, cells and tombstones. */
void cql_row_seal(json_t *item, const cql_tinfo *t);

/* ---- tombstones ----
 * A deletion is kept in the item of the row it deletes (a partition's and a range's in
 * the partition's static row item), and what it covers is removed from the items it
 * finds at once, so reads need only skip items with nothing live; a write no newer than
 * a deletion covering its row is dropped (on a tie the tombstone wins). */
/* The row's deletion time (INT64_MIN: none). */
int64_t cql_row_deleted(json_t *item);
/* Deletes the row at ts: its marker and every cell not newer go, and ts is kept until
 * until_s. 0, or -1 out of memory. */
int cql_row_delete(json_t *item, const cql_tinfo *t, int64_t ts, int64_t until_s);
/* Keeps the item's tombstones at least until until_s. */
void cql_tombstone_keep(json_t *item, int64_t until_s);
/* 1 when the item holds a deletion (of the row, a range, a cell or an element): it is
 * kept, not deleted, when nothing in it lives. */
int cql_row_tombstoned(json_t *item);
/* An item with nothing live kept for its tombstones: the key columns' attributes go (no
 * index or view sees it) and the tombstones are kept until at least until_s. */
void cql_row_bury(json_t *item, const cql_tinfo *t, int64_t until_s);
/* Records in part (a partition's static row item) the deletion at ts of the rows whose
 * $ck is in [lo, hi) (lo empty: from the first; hi empty: to the last), kept until
 * until_s; ranges purged by now_s or under the partition's deletion go. 0, or -1 out of
 * memory. */
int cql_range_delete(json_t *part, const buf *lo, const buf *hi, int64_t ts, int64_t until_s,
                     int64_t now_s);
/* The latest deletion in part (a partition's static row item) that covers the row of
 * $ck ck, INT64_MIN for none; *until_s: until when it is kept. */
int64_t cql_partition_floor(json_t *part, const buf *ck, int64_t now_s, int64_t *until_s);

/* What the members of a table's stored rows hold, by name: each column's cell attribute,
 * the keys ($pk, $ck), the row's marker and the cells' times. A row is read against it
 * (cql_row_parse): each member of its top object is mapped to what it holds in the one
 * pass that reads it, and a member nothing asks for is passed over unread; the readers
 * below then find a column's cell and times by the column, without looking names up. */
typedef struct cql_rowname {
    const char *name; /* NULL: a free place */
    uint32_t len, slot;
} cql_rowname;
typedef struct cql_rowmap {
    const cql_tcol *cols; /* the table's columns (cols[i] is column i of every reader) */
    size_t ncols;
    cql_rowname *members;  /* top-level member names, hashed */
    cql_rowname *colnames; /* column names (the keys of the $ts, $exp and $el maps) */
    uint32_t mask;         /* both tables' size - 1 */
    uint32_t nslot;
    uint8_t *want; /* per slot: the member's value is read */
    char *text;    /* the member names */
} cql_rowmap;
/* A map of the ncols columns at cols (borrowed; they outlive m) with every cell read.
 * 0, or -1 out of memory (m then holds nothing to free). */
int cql_rowmap_init(cql_rowmap *m, const cql_tcol *cols, size_t ncols);
/* Reads only the cells of the columns i with cells[i] set (the others' members are
 * seen, for a row's liveness, but not read), and the cells' write times only when times
 * is set or something else needs them (a dropped column, a non-frozen collection). */
void cql_rowmap_want(cql_rowmap *m, const uint8_t *cells, int times);
/* Whether rows read against m have column i's cell read. */
int cql_rowmap_reads(const cql_rowmap *m, size_t i);
void cql_rowmap_free(cql_rowmap *m);
/* A stored row's text, or a jansson item, read into r against m (which must outlive r's
 * use): 0, or -1 when it is not an object or out of memory. */
int cql_row_parse(cql_srow *r, const cql_rowmap *m, const char *json, size_t len);
int cql_row_from_json(cql_srow *r, const cql_rowmap *m, const json_t *item);
/* The nodes of the row's $pk and $ck attributes (CQL_SNONE: none). */
uint32_t cql_srow_pk(const cql_srow *r);
uint32_t cql_srow_ck(const cql_srow *r);

/* The same readers on a stored row read without a jansson tree (storedrow.h), read with
 * cql_row_parse; col must be one of its map's columns, and one whose cell was read for
 * cql_srow_cell_read and cql_srow_coll_load. The statements that only read go through
 * these; the jansson forms above convert the item and call them. */
int64_t cql_srow_cell_ts(const cql_srow *r, const cql_tcol *col);  /* INT64_MIN: never written */
int64_t cql_srow_cell_exp(const cql_srow *r, const cql_tcol *col); /* 0: no expiry */
int cql_srow_cell_read(const cql_srow *r, const cql_tcol *col, int64_t now_s, buf *out);
/* t's columns are the map's. */
int cql_srow_row_live(const cql_srow *r, const cql_tinfo *t, int64_t now_s);
int cql_srow_coll_load(const cql_srow *r, const cql_tcol *col, cql_coll *c);
/* The bytes of the {"B": base64} at node av appended to out: 0, or -1 when it is none. */
int cql_srow_unb64(const cql_srow *r, uint32_t av, buf *out);

/* Whether t (its engine table et) keeps deletions of partitions or ranges, so that a
 * write to a row with nothing live must look for them (1), or has never made one (0); -1
 * with the error set. Answered from memory after the first call in a schema version. */
int cql_table_keeps_deletions(cql_call *c, const cql_tinfo *t, const struct table *et);
/* Records, before the first such deletion of t is made, that t keeps them. 0, or -1 with
 * the error set. */
int cql_table_note_deletions(cql_call *c, const cql_tinfo *t, const struct table *et);

/* The engine table of t (a reference: catalog_release), NULL with the error set. */
struct table *cql_engine_table(cql_call *c, const cql_tinfo *t);

/* ---- terms ---- */
/* Turns the term e into a value of col's type (or type, when not NULL), appending its
 * bytes: a CQLVAL_* code (value.h), the call's error set for CQLVAL_ERROR. */
int cql_term(cql_run *r, const struct cql_ctype *type, const char *receiver, const cql_expr *e,
             buf *out);
/* An int or bigint term (LIMIT, USING TTL): 0 with *v, or -1 with the error set. */
int cql_int_term(cql_run *r, const cql_expr *e, int64_t *v, const char *what);
/* The same, where a null or unset value has a meaning (USING TTL ?, USING TIMESTAMP ?): a
 * CQLVAL_* code, with *v for CQLVAL_OK and the error set for CQLVAL_ERROR. */
int cql_int_term_opt(cql_run *r, const cql_expr *e, int64_t *v, const char *what);

/* ---- indexes on collections (exec_index.c) ---- */
/* An index's target as the schema keeps it ("values(tags)", or a column alone for a plain
 * index): its kind (CQL_INDEX_SIMPLE for a plain one) and column. 0. */
int cql_index_target_parse(const char *target, int *kind, char *column, size_t cap);
/* The target of an index of kind on column as the schema keeps it and system_schema shows
 * it, Cassandra's form: the column's name as CQL writes it ("values(tags)", "\"Ab\""). 0, or
 * -1 when it does not fit cap. */
int cql_index_target_format(int kind, const char *column, char *out, size_t cap);
/* "keys", "values", "entries" or "full" ("" for CQL_INDEX_SIMPLE). */
const char *cql_index_kind_name(int kind);
/* The item attribute an index on a collection keys: "$i:" and its name. */
void cql_index_attr(const char *index, char *out, size_t cap);
/* Sets (or, with nothing to index, removes) the attribute of each of t's indexes on
 * collections in item from the row's live cells, and removes those of indexes t no longer
 * has. 0, or -1 for a value that cannot be read. */
int cql_row_index(json_t *item, const cql_tinfo *t, int64_t now_s);
/* The index of t that serves rel (CONTAINS for values(), CONTAINS KEY for keys(),
 * c[k] = v for entries(), = for full()), or NULL. */
const cql_tindex *cql_index_serving(const cql_tinfo *t, const cql_relation *rel);
/* The engine index key rel looks up in ix (a new {"B"}), or NULL with the error set. */
json_t *cql_index_lookup(cql_run *r, const cql_tindex *ix, const cql_relation *rel);
/* Writes the attributes of t's indexes on collections into every stored row of t (after
 * CREATE INDEX made one) and removes those of indexes t no longer has (after DROP INDEX),
 * a hundred rows to a transaction. 0, or -1 with the error set. */
int cql_index_rows(cql_call *c, const cql_tinfo *t);

/* One step of cql_each_row_in_transactions: row i of transaction x (txn_read it, then
 * txn_put or txn_delete). A value given to txn_put is left in *keep, released after the
 * commit. 0, or -1 with err set. */
typedef int (*cql_txn_row_fn)(void *arg, struct item_txn *x, size_t i, json_t **keep, qr_err *err);
/* Walks every row of engine table et in key order, a hundred rows to an owner's item
 * transaction, calling fn on each; rows written meanwhile are locked per chunk.
 * maintenance: the writes are the schema's upkeep (an index's attribute written into the
 * rows or taken out of them), the engine's own work (TXN_SYSTEM, and a system cursor),
 * whose reads and writes spend none of the table's capacity and are no traffic of its
 * keys, as a DynamoDB index backfill spends none of its table's; else they are the
 * statement's, charged as such. 0, or -1 with err set. */
int cql_each_row_in_transactions(cql_call *c, struct table *et, cql_txn_row_fn fn, void *arg,
                                 int maintenance, qr_err *err);

/* ---- WHERE against the primary key (exec_where.c) ---- */
typedef struct cql_vlist {
    buf *v; /* values (bytes) */
    size_t n;
} cql_vlist;

typedef struct cql_keys {
    int partitions; /* every partition key column restricted by = or IN */
    cql_vlist *pk;  /* per partition key column (when partitions) */
    size_t npk_cols;
    cql_vlist *ck; /* per clustering column; the first ck_eq are set, but for: */
    size_t nck_cols, ck_eq;
    size_t tin_at, tin_n; /* (c1, c2) IN ((..), ..): tin_n columns from tin_at, whose */
    cql_vlist tin;        /* tuples are tin's values, tin_n each, one after another */
    int slice;            /* a range after the prefix: */
    int has_lo, has_hi, lo_incl, hi_incl;
    cql_vlist lo, hi;     /* its bounds' values, in value order (> and >=; < and <=) */
    cqlkey_ranges ranges; /* the bytes of $ck after the prefix the slice selects */
    int token;            /* token(pk) restricted: rows with lo <= token <= hi */
    int64_t token_lo, token_hi;
    const cql_tcol *index; /* read through this column's index (its = stays a filter) */
    const cql_relation *index_rel;
    const cql_tindex *cindex; /* the index on a collection it is, or NULL (a plain one) */
    int indexed; /* an index serves a restriction (read through it, or filtering named rows) */
    const cql_relation **filters; /* what each row is checked against */
    size_t nfilters;
    int needs_filtering;
} cql_keys;

/* 1 when e is token(v1, ...) of npk values: the right side of token(k) = token(1). */
int cql_token_call(const cql_expr *e, size_t npk);

#define CQL_KEYS_SELECT 0
#define CQL_KEYS_UPDATE 1
#define CQL_KEYS_DELETE 2
#define CQL_KEYS_INSERT 3
/* Reads w against t for a statement of mode. 0, or -1 with Cassandra's message set
 * (ALLOW FILTERING's among them). cql_keys_free either way. */
int cql_where_keys(cql_run *r, const cql_tinfo *t, const cql_where *w, int mode,
                   int allow_filtering, cql_keys *k);
void cql_keys_free(cql_keys *k);
const char *cql_filtering_message(void);
/* Whether the row whose column values are vals (has: which are set), by t's column index,
 * satisfies the multi-column relation rel ((a, b) = (1, 2), IN, or a slice, compared in
 * value order): 1, 0 (0 too for a row without those columns), or -1 with the error set. */
int cql_tuple_matches(cql_run *r, const cql_tinfo *t, const cql_relation *rel, const buf *vals,
                      const int8_t *has);
/* Calls fn for each clustering prefix of the first n columns k restricts by = and IN:
 * cql_each_combination of their lists, with a multi-column IN's tuples as the values of
 * its columns together. */
int cql_each_prefix(const cql_keys *k, size_t n, int (*fn)(void *arg, const buf *const *vals),
                    void *arg);
/* Calls fn for each combination of one value of each list (the last list fastest);
 * stops at fn's first non-zero answer and returns it. */
int cql_each_combination(const cql_vlist *lists, size_t n,
                         int (*fn)(void *arg, const buf *const *vals), void *arg);

/* Engine key bounds of a partition's rows whose $ck is in [lo, hi) (lo empty: from the
 * first row, or the static row when with_static; hi empty: to the partition's end). */
int cql_partition_bounds(const struct table *et, const buf *pk, const buf *lo, const buf *hi,
                         int with_static, buf *lower, buf *upper, qr_err *err);
/* The $ck ranges [lo, hi) of a clustering prefix with the keys' slice: cql_slice_count of
 * them, in ascending order (one without a slice; a slice over clustering columns of mixed
 * orders may select several, one none). cql_slice_bytes gives the first, or for none an
 * empty range. */
size_t cql_slice_count(const cql_keys *k);
void cql_slice_range(const buf *prefix, const cql_keys *k, size_t i, buf *lo, buf *hi);
void cql_slice_bytes(const buf *prefix, const cql_keys *k, buf *lo, buf *hi);
/* 1 when cmp (a comparison's sign) satisfies op (=, !=, <, <=, >, >=). */
int cql_compare_op(cql_op op, int cmp);

/* Row statements (exec_write.c, exec_select.c). */
int cql_exec_write(cql_run *r, const cql_stmt *s);
/* The statements of a BATCH (INSERT, UPDATE, DELETE), each with its run, in one item
 * transaction: all applied or none; with conditions, all on one partition. */
int cql_exec_write_batch(cql_call *c, cql_run *const *runs, const cql_stmt *const *stmts, size_t n,
                         int counter_batch, int logged);
int cql_exec_select(cql_run *r, const cql_stmt *s, const cql_tinfo *t);

/* 1 when two byte strings are equal (either may be empty, with no bytes allocated). */
static inline int cql_same_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* ---- the executor's parts ---- */
/* SELECT of a system table (system.local, peers, system_schema.*): 1 when ks.table is
 * one (and it ran: 0 or -1 in *rc), 0 when it is not. */
int cql_system_select(cql_run *r, const cql_stmt *s, const char *ks, int *rc);
/* 1 when ks is a keyspace the system tables make (system, system_schema, ...). */
int cql_system_keyspace(const char *ks);
/* The i-th of those keyspaces, NULL past the last. */
const char *cql_system_keyspace_at(size_t i);
/* A system keyspace's replication as system_schema.keyspaces shows it (a new object in
 * *replication, NULL for a virtual keyspace); returns its durable_writes. */
int cql_system_keyspace_replication(const char *ks, json_t **replication);
/* The i-th system table's name with its keyspace in *ks, NULL past the last. */
const char *cql_system_table_at(size_t i, const char **ks);

/* The cluster's name, as system.local and DESCRIBE CLUSTER say it. */
#define CQL_CLUSTER_NAME "quarry"

/* DESCRIBE (exec_describe.c). */
int cql_exec_describe(cql_run *r, const cql_stmt *s);

/* Schema statements (exec_ddl.c). */
int cql_exec_ddl(cql_run *r, const cql_stmt *s);

/* Writes a SCHEMA_CHANGE result and the matching event into the call. */
int cql_schema_changed(cql_call *c, const char *change, const char *target, const char *ks,
                       const char *name);

#endif
