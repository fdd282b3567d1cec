/* reconcile.h — `quarry reconcile`: every denormalised copy a model declares (an
 * attribute with copy_of) compared with the attribute of the item it was copied from, and
 * with repair, each stale copy rewritten through the ordinary write path, conditionally,
 * so a value written since it was read is never overwritten. Runs over conn.h, so against
 * a server's endpoint or a data folder alike. It does not watch live traffic. */
#ifndef QR_CHECKER_RECONCILE_H
#define QR_CHECKER_RECONCILE_H

#include <jansson.h>

#include "checker/conn.h"
#include "checker/model.h"
#include "util/buf.h"

typedef struct rc_options {
    int repair;     /* rewrite stale copies */
    int quiet;      /* no progress lines on stderr */
    size_t samples; /* stale copies listed per copied attribute; 0 means 10 */
} rc_options;

/* What was found for one copied attribute. */
typedef struct rc_copy {
    const m_entity *entity; /* the copy's entity and attribute */
    const m_attr *attr;
    const m_attr *stamp;              /* a timestamp both entities have (updatedAt), or NULL */
    size_t checked;                   /* copies compared with their source */
    size_t stale;                     /* holding another value than their source */
    size_t orphans;                   /* whose source item does not exist */
    size_t unresolved;                /* without the values their source's key needs */
    size_t repaired, skipped, failed; /* with repair: rewritten; changed since read; errors */
    int behind_known;
    double max_behind;          /* seconds the stalest copy's stamp is behind its source's */
    json_t *samples;            /* [{key, source_key, value, source_value, behind_seconds?}] */
    json_t *orphan_samples;     /* [key] */
    char error[QR_ERR_MSG_MAX]; /* the first repair error, or "" */
} rc_copy;

typedef struct rc_report {
    rc_copy *copies;
    size_t ncopies;
    size_t stale, repaired; /* over every copy */
} rc_report;

/* Reconciles every copy model m declares, reading each table that holds copies with
 * Scan and each copy's source with BatchGetItem (both consistent). Returns 0 with *out
 * filled (free it with reconcile_free), or -1 with err set: the model declares no
 * copies, a table's live key schema is not the model's, or the data cannot be read. */
int reconcile_run(conn *c, const qr_model *m, const rc_options *o, rc_report *out, qr_err *err);
void reconcile_free(rc_report *r);

/* The report as JSON (a new object; docs/model.md gives its shape) or as text. */
json_t *reconcile_json(const rc_report *r, int repair);
void reconcile_text(const rc_report *r, int repair, buf *out);

/* Seconds since the epoch of a timestamp attribute value (ISO 8601 text, or epoch
 * seconds), for the format of a; -1 when it is not one. */
int reconcile_stamp_seconds(const m_attr *a, const json_t *av, double *out);

#endif
