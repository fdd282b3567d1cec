/* render.h — rows of the rendered single-table layout and where each finding of the check
 * belongs, shared by the text (render.c) and HTML (render_html.c) renderers. Internal to
 * the checker. */
#ifndef QR_CHECKER_RENDER_H
#define QR_CHECKER_RENDER_H

#include "checker/output.h"

/* Example partitions per partition-key template, and example items per partition of an
 * entity whose sort key varies (a constant sort key gives one item per partition). */
#define RENDER_PARTITIONS 2
#define RENDER_EXAMPLES 2
#define RENDER_CELL 256

typedef struct row {
    char pk[RENDER_CELL], sk[RENDER_CELL];    /* the keys of the table or index viewed */
    char tpk[RENDER_CELL], tsk[RENDER_CELL];  /* the item's table keys */
    char pktypes[QR_MODEL_MAX_KEY_PARTS + 1]; /* 'S', 'N' or 'B' of pk (one a part) */
    char sktypes[QR_MODEL_MAX_KEY_PARTS + 1]; /* the same of sk */
    const m_entity *e;
    int clustered;      /* a CQL table's row: ordered by its clustering columns */
    int part, k;        /* the example item: check_partition_value's part and k */
    const char *serves; /* the patterns this item shape serves (in r's arena) */
} row;

/* The example items of table t (ix NULL) or of index ix, each item once, grouped by
 * partition key and sorted within a partition as DynamoDB orders the sort key (numbers by
 * value, strings and binaries by bytes); *n gets their count. The caller frees the array
 * with free(); NULL when memory runs out. */
row *render_collect(ck_report *r, const m_table *t, const m_index *ix, size_t *n);
/* The value of attribute a in example item (part, k) of e, as check_partition_value
 * gives it, but a denormalised copy holds its source's value in the example item of the
 * source its key attributes name (when that item is one of the examples). */
void render_value(const m_entity *e, const m_attr *a, int part, int k, char *buf, size_t size);
/* "all attributes", "keys only" or "keys and listed attributes". */
const char *render_projection_name(const m_index *ix);
/* True if index ix (NULL: the base table) holds attribute a of its items. */
int render_projects(const m_index *ix, const m_attr *a);
/* True if name is a key attribute of table t or of its index ix (NULL: none): the key
 * columns of that view's rows, not among the items' other attributes there. */
int render_is_key_attribute(const m_table *t, const m_index *ix, const char *name);

/* What a finding is about: the element its subject names ("pattern P", "entity E on GSI1
 * of table T", "index I", "table T", "attribute E.a", "denormalised E.a", "aggregate A");
 * else, by its position in the model file, the element that starts there (an attribute or
 * key template counts as its entity), else the element that starts last before it, else
 * the model as a whole. */
typedef enum render_place_kind {
    RP_MODEL,
    RP_TABLE,
    RP_INDEX,
    RP_ENTITY,
    RP_PATTERN,
    RP_DENORM,
    RP_AGGREGATE
} render_place_kind;

typedef struct render_place {
    render_place_kind kind;
    const void *what; /* the m_table, m_index, m_entity, m_pattern, m_denorm or m_aggregate */
} render_place;

render_place render_finding_place(const qr_model *m, const ck_finding *fd);

#endif
