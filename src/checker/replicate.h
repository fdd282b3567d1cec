/* replicate.h — `quarry replicate`: tables copied from one DynamoDB-API endpoint to another
 * (schema, then the items by Scan), then the source's streams followed and every change
 * applied in order, with a checkpoint in a state file after each applied batch so that a
 * run stopped anywhere (kill -9 included) resumes where it was; and the comparison of the
 * two sides that tells when a cutover is safe. It talks to both ends only through conn.h. */
#ifndef QR_CHECKER_REPLICATE_H
#define QR_CHECKER_REPLICATE_H

#include <signal.h>

#include "checker/conn.h"
#include "util/buf.h"

typedef struct rp_options {
    const char *const *tables;   /* NULL-terminated names, or NULL: every table of the source */
    const char *state_path;      /* the checkpoint file (written atomically: FILE.tmp, rename) */
    const char *from, *to;       /* the endpoints' URLs, kept in the state to refuse a mix-up */
    int until_caught_up;         /* return once every stream has been read to its present end */
    int poll_ms;                 /* the pause between reads of a stream with nothing new */
    double report_seconds;       /* at most one progress line per table this often */
    volatile sig_atomic_t *stop; /* set (by a signal) to stop after the batch being applied */
} rp_options;

/* Replicates o->tables from src to dst until *o->stop is set or, with until_caught_up, until
 * every stream has been read to its end, printing progress lines on stderr ("T: 120 records
 * applied, newest 0.4 s old"). A source table without a stream carrying new images is an
 * error before anything is written. Unreachable endpoints and throttling are waited out.
 * Returns 0, or -1 with err set. */
int replicate_run(conn *src, conn *dst, const rp_options *o, qr_err *err);

/* Compares tables (NULL-terminated, or NULL: every table of src) on both sides: key schema
 * and index names, then every item (read with Scan, matched by key). Appends a line per
 * table and per difference (a few of each kind) to report. Returns the number of
 * differences, or -1 with err set. */
long replicate_compare(conn *src, conn *dst, const char *const *tables, buf *report, qr_err *err);

#endif
