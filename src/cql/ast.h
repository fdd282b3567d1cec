/* ast.h — the tree of a parsed CQL statement (Cassandra 4's language), its arena, and the
 * entry points that parse text into it and print it back as canonical CQL.
 *
 * The tree is what the text says, nothing more: names are folded as Cassandra folds them,
 * literals keep their text, bind markers are numbered in order. It is not checked against
 * a schema (types of values, existence of columns, which restrictions need filtering): the
 * executor does that. Everything in a parse result lives in its arena and dies with it. */
#ifndef QR_CQL_AST_H
#define QR_CQL_AST_H

#include <stddef.h>

#include "cqlwire/cql_frame.h" /* the error codes (cql_error_code) */
#include "util/arena.h"

/* ---- names ---- */

/* A name as Cassandra keeps it: an unquoted identifier folded to lower case, a quoted one
 * as written (with "" read as "). The printer quotes it again when it needs to. */
typedef struct cql_qname {
    const char *ks;   /* keyspace, NULL when not given */
    const char *name; /* table, type, index, view or function */
} cql_qname;

/* ---- types ---- */
typedef enum cql_type_expr_kind {
    CQL_TE_NATIVE, /* name: ascii, bigint, ... (lower case, as written: text or varchar) */
    CQL_TE_LIST,   /* args[0] */
    CQL_TE_SET,    /* args[0] */
    CQL_TE_MAP,    /* args[0], args[1] */
    CQL_TE_TUPLE,  /* args[0..nargs) */
    CQL_TE_FROZEN, /* args[0] */
    CQL_TE_UDT,    /* udt */
    CQL_TE_CUSTOM  /* name: the class name of a 'quoted' custom type */
} cql_type_expr_kind;

typedef struct cql_type_expr {
    cql_type_expr_kind kind;
    const char *name;
    cql_qname udt;
    struct cql_type_expr **args;
    size_t nargs;
} cql_type_expr;

/* ---- terms and selectors: one expression tree ---- */
typedef enum cql_expr_kind {
    CQL_E_STRING,   /* text: the contents, quotes removed and '' read as ' */
    CQL_E_INTEGER,  /* text as written, sign included */
    CQL_E_FLOAT,    /* text as written */
    CQL_E_BOOLEAN,  /* text: "true" or "false" */
    CQL_E_DURATION, /* text as written (1h30m, P1DT2H, ...) */
    CQL_E_UUID,     /* text as written */
    CQL_E_HEX,      /* text as written, 0x included */
    CQL_E_NAN,      /* negative: -NaN */
    CQL_E_INFINITY, /* negative: -Infinity */
    CQL_E_NULL,
    CQL_E_WORD,     /* a property's unquoted keyword value (WITH caching = all): text */
    CQL_E_BIND,     /* bind: its position; text: its name for :name, NULL for ? */
    CQL_E_LIST,     /* items */
    CQL_E_SET,      /* items ({} is an empty set, as in Cassandra) */
    CQL_E_MAP,      /* items: key, value, key, value, ... */
    CQL_E_UDT,      /* fields[i] named, items[i] its value */
    CQL_E_TUPLE,    /* items; in a selector also a parenthesised selector */
    CQL_E_FUNCTION, /* fn(items...); star for COUNT(*) */
    CQL_E_CAST,     /* CAST(items[0] AS type) */
    CQL_E_HINT,     /* (type) items[0] */
    CQL_E_NEGATE,   /* - items[0] */
    CQL_E_BINARY,   /* items[0] op items[1], op one of + - * / % */
    CQL_E_COLUMN,   /* a selector's column: text */
    CQL_E_FIELD,    /* items[0].text */
    CQL_E_ELEMENT,  /* items[0][items[1]] */
    CQL_E_SLICE     /* items[0][items[1]..items[2]], either bound NULL */
} cql_expr_kind;

typedef struct cql_expr {
    cql_expr_kind kind;
    const char *text;
    int negative;
    int bind;
    char op;
    int star;
    cql_qname fn;
    cql_type_expr *type;
    struct cql_expr **items;
    const char **fields;
    size_t nitems;
} cql_expr;

/* ---- WHERE relations and IF conditions ---- */
typedef enum cql_op {
    CQL_OP_EQ,
    CQL_OP_LT,
    CQL_OP_LTE,
    CQL_OP_GT,
    CQL_OP_GTE,
    CQL_OP_NEQ,
    CQL_OP_IN,
    CQL_OP_CONTAINS,
    CQL_OP_CONTAINS_KEY,
    CQL_OP_LIKE,
    CQL_OP_IS_NOT_NULL
} cql_op;

typedef enum cql_rel_kind {
    CQL_REL_COLUMN,  /* columns[0] op value */
    CQL_REL_ELEMENT, /* columns[0][key] op value */
    CQL_REL_FIELD,   /* columns[0].field op value (IF conditions only) */
    CQL_REL_TOKEN,   /* token(columns...) op value */
    CQL_REL_TUPLE    /* (columns...) op value */
} cql_rel_kind;

typedef struct cql_relation {
    cql_rel_kind kind;
    const char **columns;
    size_t ncolumns;
    cql_expr *key;
    const char *field;
    cql_op op;
    cql_expr *value;   /* the right side; for IN: a bind marker (IN ?) or NULL */
    cql_expr **values; /* IN (...): the listed terms (tuples or markers for a tuple) */
    size_t nvalues;
} cql_relation;

typedef struct cql_where {
    cql_relation *rels;
    size_t n;
} cql_where;

/* ---- WITH properties ---- */
typedef struct cql_property {
    const char *name;
    cql_expr *value; /* a constant, a CQL_E_WORD, or a CQL_E_MAP of constants */
} cql_property;

typedef struct cql_props {
    cql_property *items;
    size_t n;
} cql_props;

/* ---- statements ---- */
typedef enum cql_stmt_kind {
    CQL_SELECT,
    CQL_INSERT,
    CQL_UPDATE,
    CQL_DELETE,
    CQL_BATCH,
    CQL_USE,
    CQL_TRUNCATE,
    CQL_CREATE_KEYSPACE,
    CQL_ALTER_KEYSPACE,
    CQL_DROP_KEYSPACE,
    CQL_CREATE_TABLE,
    CQL_ALTER_TABLE,
    CQL_DROP_TABLE,
    CQL_CREATE_TYPE,
    CQL_ALTER_TYPE,
    CQL_DROP_TYPE,
    CQL_CREATE_INDEX,
    CQL_DROP_INDEX,
    CQL_CREATE_VIEW,
    CQL_ALTER_VIEW,
    CQL_DROP_VIEW,
    CQL_DESCRIBE
} cql_stmt_kind;

/* USING TIMESTAMP / TTL, in the order written (bind markers keep their positions). */
typedef struct cql_using {
    int ttl; /* 1: TTL, 0: TIMESTAMP */
    cql_expr *value;
} cql_using;

typedef struct cql_order {
    const char *column;
    int desc;
} cql_order;

typedef struct cql_selector {
    cql_expr *expr;
    const char *alias; /* AS alias, NULL if none */
} cql_selector;

typedef struct cql_select {
    int json, distinct;
    cql_selector *sel; /* NULL with nsel 0 for SELECT * */
    size_t nsel;
    cql_where where;
    cql_expr **group_by;
    size_t ngroup;
    cql_order *order;
    size_t norder;
    cql_expr *per_partition_limit; /* INTEGER or bind marker, NULL if none */
    cql_expr *limit;
    int allow_filtering;
} cql_select;

typedef enum cql_assign_kind {
    CQL_SET_VALUE,   /* c = v */
    CQL_SET_ADD,     /* c = c + v, c += v */
    CQL_SET_SUB,     /* c = c - v, c -= v */
    CQL_SET_PREPEND, /* c = v + c */
    CQL_SET_ELEMENT, /* c[key] = v */
    CQL_SET_FIELD    /* c.field = v */
} cql_assign_kind;

typedef struct cql_assign {
    cql_assign_kind kind;
    const char *column;
    cql_expr *key;
    const char *field;
    cql_expr *value;
} cql_assign;

typedef struct cql_deletion {
    const char *column;
    cql_expr *key;     /* DELETE m[k]: the element, NULL otherwise */
    const char *field; /* DELETE u.f: the field, NULL otherwise */
} cql_deletion;

typedef struct cql_column_def {
    const char *name;
    cql_type_expr *type;
    int is_static;
    int primary_key; /* written `name type PRIMARY KEY` */
} cql_column_def;

/* PRIMARY KEY ((partition...), clustering...) */
typedef struct cql_pkey {
    const char **partition;
    size_t npartition;
    const char **clustering;
    size_t nclustering;
} cql_pkey;

typedef struct cql_table_opts {
    cql_props props;
    cql_order *clustering_order;
    size_t norder;
} cql_table_opts;

typedef enum cql_alter_kind {
    CQL_ALTER_TYPE_OF, /* ALTER c TYPE t */
    CQL_ALTER_ADD,     /* ADD cols (name, type, static) */
    CQL_ALTER_DROP,    /* DROP names [USING TIMESTAMP n] */
    CQL_ALTER_RENAME,  /* RENAME names[i] TO to[i] */
    CQL_ALTER_WITH,    /* WITH props */
    CQL_ALTER_DROP_COMPACT_STORAGE
} cql_alter_kind;

typedef enum cql_index_target_kind {
    CQL_INDEX_SIMPLE,
    CQL_INDEX_KEYS,
    CQL_INDEX_VALUES,
    CQL_INDEX_ENTRIES,
    CQL_INDEX_FULL
} cql_index_target_kind;

typedef struct cql_index_target {
    cql_index_target_kind kind;
    const char *column;
} cql_index_target;

typedef struct cql_stmt cql_stmt;

typedef struct cql_insert {
    const char **columns; /* NULL for INSERT JSON */
    size_t ncolumns;
    cql_expr **values; /* as many as written (Cassandra checks the counts when preparing) */
    size_t nvalues;
    cql_expr *json;    /* INSERT JSON: the string or bind marker */
    int default_unset; /* JSON ... DEFAULT UNSET (1) or DEFAULT NULL (0) */
    int default_given;
    cql_using *using;
    size_t nusing;
} cql_insert;

typedef struct cql_update {
    cql_using *using;
    size_t nusing;
    cql_assign *set;
    size_t nset;
    cql_where where;
    cql_relation *conds; /* IF conditions */
    size_t nconds;
} cql_update;

typedef struct cql_delete {
    cql_deletion *cols;
    size_t ncols;
    cql_using *using; /* TIMESTAMP only */
    size_t nusing;
    cql_where where;
    cql_relation *conds;
    size_t nconds;
} cql_delete;

typedef struct cql_batch_stmt {
    int type; /* 0 logged, 1 unlogged, 2 counter */
    cql_using *using;
    size_t nusing;
    cql_stmt **stmts;
    size_t nstmts;
} cql_batch_stmt;

typedef struct cql_keyspace_opts {
    cql_props props; /* replication, durable_writes, ... */
} cql_keyspace_opts;

typedef struct cql_create_table {
    cql_column_def *cols;
    size_t ncols;
    cql_pkey pk;
    int has_pk; /* PRIMARY KEY (...) clauses written: pk is the first */
    cql_table_opts opts;
} cql_create_table;

typedef struct cql_alter_table {
    cql_alter_kind what;
    int if_column;       /* ALTER TABLE t ADD IF NOT EXISTS / DROP IF EXISTS ... */
    cql_column_def *add; /* ADD; ALTER TYPE_OF: add[0] */
    size_t nadd;
    const char **names; /* DROP; RENAME: from */
    const char **to;    /* RENAME: to */
    size_t nnames;
    cql_expr *timestamp; /* DROP ... USING TIMESTAMP */
    cql_props props;
} cql_alter_table;

typedef struct cql_create_type {
    const char **fields;
    cql_type_expr **types;
    size_t nfields;
} cql_create_type;

typedef struct cql_alter_type {
    cql_alter_kind what; /* TYPE_OF, ADD or RENAME */
    int if_field;
    const char **fields; /* ALTER/ADD: fields[0]; RENAME: from */
    const char **to;
    cql_type_expr *type;
    size_t nfields;
} cql_alter_type;

typedef struct cql_create_index {
    int custom;
    const char *index; /* NULL when unnamed */
    cql_index_target *targets;
    size_t ntargets;
    const char *using_class; /* USING 'class', NULL if none */
    cql_props props;
} cql_create_index;

typedef struct cql_create_view {
    cql_qname base;
    cql_selector *sel; /* NULL for * */
    size_t nsel;
    cql_where where;
    cql_pkey pk;
    cql_table_opts opts;
} cql_create_view;

typedef struct cql_alter_view {
    cql_props props;
} cql_alter_view;

/* DESCRIBE (DESC): what it names; the statement's name holds the element's name (and
 * keyspace), or the keyspace for DESCRIBE KEYSPACE (NULL: the current one). */
typedef enum cql_describe_what {
    CQL_DESC_CLUSTER,
    CQL_DESC_SCHEMA,
    CQL_DESC_KEYSPACES,
    CQL_DESC_KEYSPACE,
    CQL_DESC_TABLES,
    CQL_DESC_TABLE,
    CQL_DESC_TYPES,
    CQL_DESC_TYPE,
    CQL_DESC_FUNCTIONS,
    CQL_DESC_FUNCTION,
    CQL_DESC_AGGREGATES,
    CQL_DESC_AGGREGATE,
    CQL_DESC_INDEX,
    CQL_DESC_VIEW,
    CQL_DESC_ANY /* DESCRIBE name: a keyspace, table, index or view, in that order */
} cql_describe_what;

typedef struct cql_describe {
    cql_describe_what what;
    int full;      /* DESCRIBE FULL SCHEMA: the system keyspaces too */
    int only;      /* DESCRIBE ONLY KEYSPACE: its own statement, not its elements' */
    int internals; /* WITH INTERNALS */
} cql_describe;

struct cql_stmt {
    cql_stmt_kind kind;
    cql_qname name; /* the table, keyspace (name), type, index or view the statement names */
    int if_exists, if_not_exists;
    size_t offset, length; /* the statement's bytes in the text parsed */
    union {
        cql_select select;
        cql_insert insert;
        cql_update update;
        cql_delete del;
        cql_batch_stmt batch;
        cql_keyspace_opts keyspace;
        cql_create_table create_table;
        cql_alter_table alter_table;
        cql_create_type create_type;
        cql_alter_type alter_type;
        cql_create_index create_index;
        cql_create_view create_view;
        cql_alter_view alter_view;
        cql_describe describe;
    } u;
};

/* A bind marker, in the order of the text: what PREPARE answers with. */
typedef struct cql_bind {
    const char *name; /* :name, or NULL for ? */
    size_t offset;    /* its byte offset in the text parsed */
    cql_expr *node;
} cql_bind;

#define CQL_ERR_MSG_MAX 1024
#define CQL_ERR_FN_MAX 64
#define CQL_ERR_FN_ARGS 2

typedef struct cql_parse_error {
    int code; /* 0 while no error, else CQL_ERR_SYNTAX, CQL_ERR_INVALID, CQL_ERR_SERVER, or
                 CQL_ERR_FUNCTION_FAILURE (fromJson of a bad text) */
    char msg[CQL_ERR_MSG_MAX];
    /* CQL_ERR_FUNCTION_FAILURE: the native function that failed and its argument types */
    char fn_name[CQL_ERR_FN_MAX];
    char fn_args[CQL_ERR_FN_ARGS][CQL_ERR_FN_MAX];
    unsigned fn_nargs;
} cql_parse_error;

/* Names the function whose failure err records (a CQL_ERR_FUNCTION_FAILURE): name in
 * keyspace system, with n argument types (at most CQL_ERR_FN_ARGS). */
void cql_error_function(cql_parse_error *err, const char *name, const char *const *args,
                        unsigned n);

/* Records a failure in err, unless one is recorded already (the first error wins), and
 * returns -1: how the front end's modules report Cassandra's errors. err may be NULL. */
int cql_error_record(cql_parse_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A parsed statement or script. */
typedef struct cql_parsed {
    arena arena;
    cql_stmt **stmts;
    size_t nstmts;
    cql_bind *binds; /* for cql_parse: the statement's markers; for a script: none */
    size_t nbinds;
} cql_parsed;

/* Parses one statement as the native protocol's QUERY and PREPARE carry it (trailing ';'
 * allowed). Returns 0 and fills *out (release with cql_parsed_free), or -1 with *err set to
 * Cassandra's SyntaxException message ("line 1:7 no viable alternative at input 'FROM'
 * (SELECT [FROM]...)"); *out is then empty. len is the text's length; it need not be
 * NUL-terminated. */
int cql_parse(const char *text, size_t len, cql_parsed *out, cql_parse_error *err);

/* Parses a cqlsh-style script: statements separated by ';', comments and blank statements
 * allowed. Each statement's markers are numbered from 0 (cql_parsed.binds stays empty; a
 * script is not prepared). Errors say the line and column in the whole script. */
int cql_parse_script(const char *text, size_t len, cql_parsed *out, cql_parse_error *err);

void cql_parsed_free(cql_parsed *p);

/* Writes s as canonical CQL into a malloc'd NUL-terminated string (free() it), NULL when out
 * of memory. Keywords are upper case, names quoted only when they must be, and parsing the
 * output gives a tree that prints the same. */
char *cql_print(const cql_stmt *s);

/* An expression (a term or selector) as canonical CQL, malloc'd; NULL when out of memory. */
char *cql_print_expr(const cql_expr *e);

/* Appends name to b as CQL writes it: bare when it reads back as itself, else in double
 * quotes. Returns 0, or -1 when out of memory. */
struct buf;
int cql_print_name(struct buf *b, const char *name);

/* 1 if word (any case) is one of CQL's reserved keywords, which a name must quote. */
int cql_is_reserved(const char *word, size_t len);

#endif
