/* check.h — `quarry model check`: how each access pattern is served, and the modelling
 * checklist run over a loaded model. It only reads the model; it does not need the storage
 * engine, and it prints nothing (report.c formats the result). */
#ifndef QR_CHECKER_CHECK_H
#define QR_CHECKER_CHECK_H

#include "checker/model.h"

typedef enum ck_severity { CK_NOTE, CK_WARNING, CK_ERROR } ck_severity;

typedef struct ck_finding {
    ck_severity severity;
    const char *rule;        /* e.g. "partition-key-cardinality" */
    const char *subject;     /* what it is about: "pattern list-orders", "index GSI1", … */
    m_pos pos;               /* where in the model file */
    const char *message;     /* the problem in one sentence */
    const char *explanation; /* why it matters */
    const char *fix;         /* what to change */
} ck_finding;

/* One way to reach items: the base table or an index, with the entity's key templates. */
typedef struct ck_path {
    const m_table *table;
    const m_index *index;      /* NULL for the base table */
    const m_template *pk, *sk; /* sk may have text NULL (no sort key) */
    const m_entkey *key;       /* the entity's index keys, NULL for the base table */
} ck_path;

typedef struct ck_plan {
    const m_pattern *pattern;
    int served;                /* 1: one operation serves it without Scan or filter */
    ck_path path;              /* valid when served (or when only a filter is missing) */
    const char *operation;     /* "GetItem", "Query", "PutItem", … or "Scan" */
    const char *key_condition; /* e.g. PK = "USER#{userId}" AND begins_with(SK, "CONV#") */
    int forward;               /* ScanIndexForward for a Query (1 or 0) */
    int scatter;               /* partitions read per request (shards), 1 normally */
    size_t sk_given;           /* served: the sort-key segments the request fixes (an
                                  equality prefix, literal text included) */
    int sk_whole;              /* served: the whole sort key is fixed (or there is none) */
    const char *text;          /* the whole plan as one line for people */
} ck_plan;

/* A price table (share/quarry/prices.yaml's form: docs/model.md). */
typedef struct model_prices {
    double read_per_million, write_per_million; /* on demand, per million request units */
    double rcu_hour, wcu_hour;                  /* provisioned, per capacity unit and hour */
    double storage_gb_month;                    /* per GB stored a month */
    double hours_per_month;
    char region[64];
    char source[256]; /* where the prices come from, and as of when */
    char date[32];
    char path[512];
} model_prices;

/* Read and write units per second and what they cost a month: on demand (request units)
 * and provisioned (capacity for that average load, no headroom); storage apart, the same
 * in both modes. */
typedef struct ck_cost {
    double read_units, write_units; /* per second */
    double on_demand, provisioned;  /* a month, storage not included */
    double storage_gb, storage;     /* GB stored and its monthly price */
} ck_cost;

typedef struct ck_table_cost {
    ck_cost base;  /* the table's own writes, reads and items */
    ck_cost *idx;  /* one per index of the table, in its order */
    ck_cost total; /* base and every index */
} ck_table_cost;

typedef struct ck_money {
    model_prices prices;
    ck_cost *patterns;     /* one per plan (reads, or writes of every path they touch) */
    ck_table_cost *tables; /* one per model table; CQL tables stay zero */
    ck_cost total;
    int priced; /* some pattern declares an rps or some entity a count */
} ck_money;

/* The monthly price of units per second at prices p. */
double check_cost_on_demand(const model_prices *p, double read_units, double write_units);
double check_cost_provisioned(const model_prices *p, double read_units, double write_units);

typedef struct ck_report {
    ck_arena arena;        /* owns plans, findings and their strings */
    const qr_model *model; /* borrowed */
    ck_plan *plans;        /* one per access pattern, in file order */
    size_t nplans;
    ck_finding *findings;
    size_t nfindings, cap;
    int errors, warnings, notes;
    ck_money *money; /* set by check_price, else NULL */
} ck_report;

/* Plans every access pattern (the table or index and the exact DynamoDB operation that
 * serves it, or why it cannot be served without a Scan or a filter), then runs each
 * checklist rule, one function per rule, collecting findings with a severity, an
 * explanation and a concrete fix.
 *
 * Checks m. On success *out is a report the caller frees with check_free (findings of
 * severity error do not make this fail; only running out of memory does). */
int check_run(const qr_model *m, ck_report **out, qr_err *err);
void check_free(ck_report *r);

/* Prices r's model at p: each pattern, each table and index (their writes and reads at the
 * declared rates, their items at the declared counts), into r->money. DynamoDB tables
 * only. Returns 0, or -1 when memory runs out. */
int check_price(ck_report *r, const model_prices *p);

/* The entity's paths: the base table first, then each index it has keys for. Returns the
 * count (at most 1 + e->nkeys) written to out. */
size_t check_paths(const m_entity *e, ck_path *out);

/* Writes an example value for attribute a into buf: variants n 0 to 3 differ (an enum's
 * and a shard's as far as they have values), then they repeat. */
void check_example_value(const m_attr *a, int n, char *buf, size_t size);
/* The value of attribute a in example item k of entity e: attributes of the partition key
 * keep example 0, so the examples of one entity share an item collection. */
void check_item_value(const m_entity *e, const m_attr *a, int k, char *buf, size_t size);
/* Expands template t as it reads in example item k of entity e. */
void check_item_key(const m_entity *e, const m_template *t, int k, char *buf, size_t size);
/* True if example item k of e carries the keys of index key ek (its 'when' holds). */
int check_item_in_index(const m_entity *e, const m_entkey *ek, int k);

/* The same for example item k of partition part: attributes of e's partition key take
 * example part (so the entities sharing a key template share the partition), the others
 * example k. Part 0 gives the items of check_item_value and its siblings. */
void check_partition_value(const m_entity *e, const m_attr *a, int part, int k, char *buf,
                           size_t size);
void check_partition_key(const m_entity *e, const m_template *t, int part, int k, char *buf,
                         size_t size);
int check_partition_in_index(const m_entity *e, const m_entkey *ek, int part, int k);

/* How a Query bounds the range op ("<", "<=", ">", ">=", "between", "begins_with") on
 * segment range of sort-key template sk after its literal-and-given prefix, with values v1
 * (and v2 for between): the operator it uses ("BETWEEN", "begins_with" or op) and its
 * bound in lo (BETWEEN: lo and hi), each at most size bytes. Exact where the sort key
 * allows: a bound on a segment more of the key follows ends with the character after the
 * separator ("MSG#{t}$" sorts after every "MSG#{t}#..."), and a one-sided range gets the
 * prefix as its other bound ("MSG$" above every "MSG#..."), so other entities' items
 * sharing the partition stay out; "> v" on the last segment starts at v and U+0001, written
 * "\u0001" when for_people (a request gets the character). "< v" on the last segment stays
 * one-sided: no string is the greatest below v. */
const char *check_range_bounds(const char *op, const m_template *sk, size_t range,
                               const char *prefix, const char *v1, const char *v2, int for_people,
                               char *lo, char *hi, size_t size);

/* An id attribute's name as the stem of its example values (userId, user_id -> "user"):
 * the name copied into stem (size bytes), an Id/ID/_id suffix cut, lower-cased. Returns
 * the copy's length before the cut, so a caller can tell whether a suffix was cut. */
size_t check_id_stem(const char *name, char *stem, size_t size);

/* The sort-key prefix an item collection's entities share: common is cut to the part it
 * has in common with head; check_prefix_cut then cuts it back to a component boundary
 * ("ME" from META and MEMBER# is no prefix) and returns its length. */
void check_prefix_narrow(char *common, const char *head);
size_t check_prefix_cut(char *common);

/* Partitions DynamoDB allows per second, per partition. */
#define CK_PARTITION_RCU 3000.0
#define CK_PARTITION_WCU 1000.0
#define CK_COLLECTION_LIMIT (10.0 * 1024 * 1024 * 1024)
#define CK_MAX_GSI 20
#define CK_MAX_LSI 5

const char *check_severity_name(ck_severity s);

#endif
