/* model.h — the access-patterns-as-schema model: tables, entities with key templates,
 * access patterns, denormalised copies and aggregates, as loaded from a model file. The
 * model is read-only after loading; nothing here touches storage or the network. */
#ifndef QR_CHECKER_MODEL_H
#define QR_CHECKER_MODEL_H

#include <stddef.h>

#include "checker/doc.h"
#include "util/err.h"

/* Far above DynamoDB's 20 GSIs + 5 LSIs, so the checker can report the excess, but bounded. */
#define QR_MODEL_MAX_INDEXES 64
/* The largest row a CQL table's entity may declare: Cassandra refuses a mutation over half of
 * commitlog_segment_size, 32 MB by default. */
#define QR_MODEL_CQL_MAX_ROW (16.0 * 1024 * 1024)

typedef struct m_pos {
    int line, col;
} m_pos;

typedef enum m_type { MT_STRING, MT_NUMBER, MT_BOOLEAN, MT_BINARY, MT_MAP, MT_LIST, MT_SET } m_type;

typedef enum m_format {
    MF_NONE,      /* free text or a plain number */
    MF_TIMESTAMP, /* ISO-8601 date-time, 2026-03-14T09:14:00Z */
    MF_DATE,      /* a date; ordered only if its pattern runs coarse to fine with fixed widths */
    MF_MONTH,     /* 2026-03 */
    MF_YEAR,      /* 2026 */
    MF_EPOCH,     /* seconds since 1970 */
    MF_PADDED,    /* an integer zero-padded to width digits */
    MF_INTEGER,   /* an integer without padding: does not sort as text */
    MF_ENUM,      /* one of values */
    MF_UUID,      /* random UUID: unique, unordered */
    MF_ULID,      /* time-ordered unique id (ULID, KSUID) */
    MF_ID,        /* opaque unique id */
    MF_SHARD      /* a write-sharding suffix 0..shards-1, chosen at write time */
} m_format;

typedef struct m_attr {
    const char *name;
    m_type type;
    m_format format;
    int width;           /* MF_PADDED: digits */
    const char *pattern; /* MF_DATE: e.g. "YYYY-MM-DD" (default) or "D/M/YYYY" */
    const char **values; /* MF_ENUM */
    size_t nvalues;
    int shards;                   /* MF_SHARD */
    double cardinality;           /* distinct values; 0 = derived from the format */
    double hottest;               /* share of items/traffic on the most common value; 0 = uniform */
    double size;                  /* typical bytes; 0 = derived */
    const char *example;          /* example value for rendering; NULL = generated */
    const char *copy_of;          /* "Entity.attribute" this attribute duplicates, or NULL */
    struct m_entity *copy_entity; /* copy_of resolved: the source entity and attribute */
    struct m_attr *copy_attr;
    struct m_keymap *copy_key; /* copy_key: which attributes of this entity give the */
    size_t ncopy_key;          /* variables of the source's key templates */
    const char *cql_type;      /* the CQL column type as written ("map<text, text>"), or NULL */
    int is_static;             /* a CQL STATIC column: one value per partition */
    m_pos pos;
} m_attr;

/* One variable of a copy's source key and the attribute of the copy's entity that holds
 * its value: copy_key: {customerId: buyerId}. Variables not listed come from the
 * attribute of the same name. */
typedef struct m_keymap {
    const char *source; /* a variable of the source entity's pk or sk template */
    const char *copy;   /* an attribute of the copy's entity */
    m_pos pos;
} m_keymap;

typedef struct m_seg {
    int is_var;
    const char *text; /* literal text, or the variable name */
    m_attr *attr;     /* for variables */
} m_seg;

typedef struct m_template {
    const char *text; /* as written, e.g. "USER#{userId}"; NULL when absent */
    m_seg *seg;
    size_t nseg;
    m_pos pos;
} m_template;

typedef enum m_projection { MP_ALL, MP_KEYS_ONLY, MP_INCLUDE } m_projection;

typedef struct m_keyattr {
    const char *name; /* NULL when the key has no sort key */
    char type;        /* 'S', 'N' or 'B' */
} m_keyattr;

/* DynamoDB's limit on the attributes of one multi-attribute GSI key (partition or sort). */
#define QR_MODEL_MAX_KEY_PARTS 4

typedef struct m_index {
    const char *name;
    int local;        /* LSI (shares the table's partition key) */
    m_keyattr pk, sk; /* a multi-attribute key: its first attribute */
    /* A multi-attribute GSI key (partition_key or sort_key given as a list): the item's own
     * attributes, in key order; npk_parts and nsk_parts are 0 for a one-attribute key. */
    m_keyattr pk_parts[QR_MODEL_MAX_KEY_PARTS], sk_parts[QR_MODEL_MAX_KEY_PARTS];
    size_t npk_parts, nsk_parts;
    m_projection projection;
    const char **include; /* MP_INCLUDE attributes */
    size_t ninclude;
    double rcu, wcu; /* provisioned capacity (0 when on demand) */
    m_pos pos;
} m_index;

/* One clustering column of a CQL table and the order it is stored in. */
typedef struct m_order {
    const char *column;
    int desc; /* CLUSTERING ORDER BY (column DESC) */
    m_pos pos;
} m_order;

/* What a CQL (Cassandra, ScyllaDB) table adds to a table: its key columns are typed CQL
 * columns (sorted by their type, not as text), stored in a clustering order, expired by a
 * default TTL. The key columns themselves are the variables of its entity's templates. */
typedef struct m_cql {
    m_order *order; /* clustering_order: the clustering columns in order */
    size_t norder;
    double default_ttl_days; /* default_time_to_live (0: none) */
    const char **indexes;    /* columns with a secondary index (CREATE INDEX) */
    size_t nindexes;
    const char **types;       /* the user types its columns use, each after those it uses, */
    const char **type_fields; /* with their fields as CQL: "street text, city text" */
    size_t ntypes;
    const char *source; /* "FILE:LINE:COL" of the CREATE TABLE it came from, or NULL */
    m_pos pos;
} m_cql;

typedef struct m_table {
    const char *name;
    m_keyattr pk, sk;
    int provisioned; /* billing mode PROVISIONED (else PAY_PER_REQUEST) */
    double rcu, wcu;
    const char *ttl; /* TTL attribute name, or NULL */
    m_index *idx;    /* GSIs then LSIs */
    size_t nidx;
    m_cql *cql;                 /* a CQL table (the 'cql' section), or NULL */
    int existing;               /* the table exists already ('existing'): only GSIs can be added */
    const char **existing_lsis; /* the LSIs it was created with */
    size_t nexisting_lsis;
    m_pos existing_pos;
    m_pos pos;
} m_table;

typedef struct m_entkey {
    m_index *index;
    m_template pk, sk;    /* pk.text NULL for an LSI (the table's pk is used) */
    struct m_given *when; /* sparse index: keys written only while these attributes hold */
    size_t nwhen;         /* these values (none: always written) */
} m_entkey;

typedef struct m_entity {
    const char *name;
    m_table *table;
    m_template pk, sk;
    m_entkey *keys; /* index key templates */
    size_t nkeys;
    m_attr *attrs;
    size_t nattrs;
    double count;          /* expected items */
    double item_size;      /* bytes; 0 = 1 KB assumed */
    double growth_per_day; /* items added per day to one partition key value (the busiest) */
    double retention_days; /* 0 = kept forever */
    int counter;           /* a counter/aggregate item updated with ADD */
    m_pos pos;
} m_entity;

typedef enum m_kind { MK_GET, MK_QUERY, MK_PUT, MK_UPDATE, MK_DELETE, MK_TRANSACTION } m_kind;

typedef struct m_given m_given;
struct m_given {
    const char *name;
    const char *value; /* a fixed value ("OPEN"), or NULL for a request parameter */
    m_pos pos;
};

typedef struct m_pattern {
    const char *name;
    const char *sentence;
    m_kind kind;
    m_entity *entity;
    m_entity **also; /* further entities read or written by the same request */
    size_t nalso;
    m_given *given;
    size_t ngiven;
    const char *sk_op;    /* "=", "<", "<=", ">", ">=", "between", "begins_with" or NULL */
    const char *sk_attr;  /* attribute the sort-key condition is on */
    const char *order_by; /* attribute the results are ordered by, or NULL */
    int direction;        /* +1 ascending, -1 descending, 0 unspecified */
    double limit;         /* 0 = none */
    double result_size;   /* expected items returned */
    double latency_ms;
    double rps;
    int consistent;        /* needs strongly consistent reads */
    const char *aggregate; /* "count", "sum", "max", "min", "avg" or NULL */
    const char *index;     /* index the designer intends, or NULL */
    const char *statement; /* the CQL statement the pattern was imported from, or NULL */
    const char *source;    /* "FILE:LINE:COL" of that statement, or NULL */
    int allow_filtering;   /* the statement says ALLOW FILTERING */
    int static_only;       /* an update that sets only STATIC columns (one per partition) */
    const char **in;       /* given attributes the request lists several values of (CQL IN) */
    size_t nin;
    double ttl_days;   /* a write's USING TTL (0: none) */
    int ttl_request;   /* USING TTL ?: the request gives the TTL */
    const char **sets; /* update: the attributes it changes (NULL: not said) */
    size_t nsets;
    m_pos pos;
} m_pattern;

typedef enum m_strategy { MS_NONE, MS_TRANSACTION, MS_STREAM, MS_JOB, MS_STALE } m_strategy;

typedef struct m_denorm {
    const char *source; /* "Entity.attribute" */
    const char **copies;
    size_t ncopies;
    m_strategy strategy;
    const char *staleness; /* accepted staleness, e.g. "1h" */
    double fan_out;        /* the most copies one source item has (0: estimated) */
    m_pos pos;
} m_denorm;

typedef struct m_aggregate {
    const char *name;
    m_entity *of;         /* entity counted or summed */
    const char *function; /* count, sum, max, min */
    m_entity *counter;    /* counter item entity, or NULL */
    m_strategy strategy;
    m_pos pos;
} m_aggregate;

typedef struct qr_model {
    ck_arena arena; /* owns everything below */
    const char *path;
    const doc_node *doc; /* the file as parsed, before any meaning was given to it */
    const char *name;
    const char *description;
    m_table *tables;
    size_t ntables;
    m_entity *entities;
    size_t nentities;
    m_pattern *patterns;
    size_t npatterns;
    m_denorm *denorms;
    size_t ndenorms;
    m_aggregate *aggregates;
    size_t naggregates;
} qr_model;

/* Reads YAML or JSON (docs/model.md is the format) and resolves every name: template
 * variables to attributes, entities to tables, patterns to entities. Every element keeps
 * the line and column it came from so findings can point at the file.
 *
 * Loads the model file at path (or text when text is not NULL; path then only names
 * it). On success *out is a model the caller frees with model_free. Errors carry
 * "FILE:LINE:COL: message". */
int model_load(const char *path, const char *text, size_t len, qr_model **out, qr_err *err);
void model_free(qr_model *m);

/* One error of a model file, at its line and column (message without the position). */
typedef struct model_error {
    int line, col;
    char *message;
} model_error;
/* Every error of one model file, in file order (the first 200; dropped counts the rest). */
typedef struct model_errors {
    model_error *v;
    size_t n, cap, dropped;
} model_errors;

/* model_load, reporting every error of the file, as a compiler does: each field,
 * attribute, entity and pattern is checked even after another failed. On failure errs
 * holds them (empty when the file could not be read; err says why) and err the first, as
 * model_load sets it. The caller frees errs with model_errors_free, on success too. */
int model_load_all(const char *path, const char *text, size_t len, qr_model **out,
                   model_errors *errs, qr_err *err);
void model_errors_free(model_errors *e);
/* The parts of a model file that load when the whole does not: the file at path with every
 * table, entity, access pattern, denormalised copy or aggregate that has an error left out
 * (and then each that names one left out), as a model whose references all resolve. On
 * success *out is that model (free with model_free) and *left_out its *nleft names of
 * what was left out ("entity Order", in its arena). -1 when the file does not parse or
 * nothing would load; err says why when the file cannot be read or memory runs out. */
int model_load_partial(const char *path, qr_model **out, const char ***left_out, size_t *nleft,
                       qr_err *err);

/* Lookups by name; NULL when absent. */
m_table *model_table(const qr_model *m, const char *name);
m_entity *model_entity(const qr_model *m, const char *name);
m_attr *model_entity_attr(const m_entity *e, const char *name);
m_index *model_table_index(const m_table *t, const char *name);
const m_entkey *model_entity_key(const m_entity *e, const m_index *ix);

const char *model_kind_name(m_kind k);
const char *model_format_name(m_format f);
const char *model_type_name(m_type t);

/* True if the template has no variable. */
int model_template_is_constant(const m_template *t);
/* Writes the template's literal prefix (text up to the first variable) into a. */
const char *model_template_prefix(ck_arena *a, const m_template *t);

/* True if a denormalised copy or an aggregate kept by "stream" reads its source from table
 * t, so the table needs DynamoDB Streams (new and old images). */
int model_table_needs_stream(const qr_model *m, const m_table *t);

/* The attribute of copy entity e that gives variable var of its source's key templates
 * (a: the copy attribute): copy_key's mapping, else the attribute named var; NULL when e
 * has neither. */
const m_attr *model_copy_key_attr(const m_entity *e, const m_attr *a, const char *var);

/* Reads a quantity as the model file writes it ("5M", "600B", "30d", "20ms"): unit_kind
 * 'c' counts, 's' sizes in bytes, 'd' durations in days, 't' latencies in ms. Returns 0,
 * or -1 with a message in msg. */
int model_quantity(const char *s, int unit_kind, double *out, char *msg, size_t msgsize);

/* The clustering order of column col of a CQL table: +1 ascending, -1 descending, 0 when
 * the table is not CQL or col is not one of its clustering columns. */
int model_clustering_order(const m_table *t, const char *col);

/* The item size used for estimates (item_size, or 1 KB when not given). */
double model_item_size(const m_entity *e);
/* The typical size in bytes of one attribute's value. */
double model_attr_size(const m_attr *a);

#endif
