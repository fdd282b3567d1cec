/* match.h — the pure half of the model watch: key values read against key templates, a
 * read's key shape against an access pattern's plan, written items against the entities'
 * templates, attribute values against their declared formats. No state, no locks, no
 * storage: watch.c keeps the counts and the findings, and these functions are unit-tested
 * alone (tests/unit/watch/test_match.c). */
#ifndef QR_WATCH_MATCH_H
#define QR_WATCH_MATCH_H

#include <stddef.h>

#include "checker/check.h"
#include "checker/model.h"

/* A slice of a value: the text a template variable matched. */
typedef struct wm_span {
    const char *at;
    size_t len;
} wm_span;

/* Whether v (len bytes) reads as the first nseg segments of template t: literal text
 * exactly, each variable as at least one character (up to the literal after it, or the
 * end). whole: v must end there; else v may go on (a begins_with operand, a bound). A variable
 * the pattern p (may be NULL) fixes in its given map must hold that value. vars (t->nseg
 * entries, or NULL) receives what each variable matched. */
int wm_template(const m_template *t, size_t nseg, const m_pattern *p, const char *v, size_t len,
                int whole, wm_span *vars);
/* The literal characters of t: the more, the more specific a match. */
size_t wm_literal_len(const m_template *t);

/* A key value as text: the string of an S, the digits of an N; type 0 for any other. */
typedef struct wm_value {
    char type; /* 'S', 'N', or another AttributeValue type letter; 0 when absent */
    const char *text;
    size_t len;
} wm_value;

/* A read's key shape, as a GetItem or Query gives it. */
typedef enum wm_sk {
    WM_SK_NONE,  /* no sort-key condition */
    WM_SK_EQ,    /* = (GetItem's whole key) */
    WM_SK_RANGE, /* <, <=, >, >= or BETWEEN */
    WM_SK_BEGINS /* begins_with */
} wm_sk;
typedef struct wm_read {
    int query;         /* 1 for Query, 0 for GetItem */
    const char *index; /* NULL: the table */
    wm_value pk;
    wm_sk sk;
    wm_value sk1, sk2; /* operands (sk2 BETWEEN's second) */
    int forward;
    int consistent;
} wm_read;

/* A served read pattern: the plan of a get or query pattern. */
typedef struct wm_plan {
    const m_pattern *p;
    const ck_plan *pl;
    int query; /* served by Query (else GetItem) */
    const m_table *table;
    const char *index; /* NULL: the table */
    const m_template *pk, *sk;
    size_t sk_given;
    int sk_whole;
} wm_plan;

/* What differs between a read and a plan (bits; 0: the read is the plan's shape). */
enum {
    WM_DIFF_INDEX = 1,     /* another index (or the table) */
    WM_DIFF_PK = 2,        /* the partition key value does not follow the template */
    WM_DIFF_SK = 4,        /* another sort-key condition */
    WM_DIFF_DIRECTION = 8, /* read the other way */
    WM_DIFF_OPERATION = 16 /* GetItem where a Query is declared */
};
int wm_read_differs(const wm_plan *plan, const wm_read *r);
/* How close r is to plan, for naming the nearest pattern: higher is nearer. */
int wm_read_nearness(const wm_plan *plan, const wm_read *r);
/* What the bits of a difference say, as a phrase ("another sort-key condition"). */
void wm_diff_text(int diff, char *buf, size_t cap);

/* Reads one attribute of an item: 1 with *out set, 0 when the item has none. */
typedef int (*wm_get_fn)(const void *item, const char *name, wm_value *out);
/* The entity of table t whose base key templates item's key follows (the most specific
 * when several do), or NULL; pk_vars and sk_vars (QR_WM_MAX_SEG each) receive the
 * variables' text. */
#define QR_WM_MAX_SEG 32
const m_entity *wm_entity_of(const qr_model *m, const m_table *t, const void *item, wm_get_fn get,
                             wm_span *pk_vars, wm_span *sk_vars);
/* The entity on t (and index: NULL for the table) whose key template for it the
 * partition key value v follows, the most specific; NULL when none does. *tmpl is that
 * template. */
const m_entity *wm_entity_of_pk(const qr_model *m, const m_table *t, const char *index,
                                const wm_value *v, const m_template **tmpl);

/* 1 when v follows entity e's partition-key template for index (NULL: the table), with
 * *tmpl that template; 0 when it does not or e has no keys for index. */
int wm_entity_of_pk_is(const m_entity *e, const m_table *t, const char *index, const wm_value *v,
                       const m_template **tmpl);

/* 1 when value v breaks attribute a's declared type or format, with why (a phrase:
 * "is \"7\", not zero-padded to 3 digits") written into buf; 0 when it follows them. */
int wm_format_problem(const m_attr *a, const wm_value *v, char *buf, size_t cap);

#endif
