/* metrics.h — what qr_call counts for qr_metrics: each call's operation, time and error
 * type, in atomic counters that hang on the database handle (engine_api_state), so two
 * databases in one process count apart. Counting takes no lock and allocates nothing
 * after a database's first call. The families qr_metrics writes are metrics.c's. */
#ifndef QR_API_METRICS_H
#define QR_API_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "quarry.h"

/* Operations counted apart: the operation table's (call.c checks that they fit), and
 * the last slot for names that are none of them. */
#define METRICS_MAX_OPS 64
#define METRICS_UNKNOWN_OP (METRICS_MAX_OPS - 1)

/* CLOCK_MONOTONIC in nanoseconds: what calls are timed with. */
uint64_t metrics_now_ns(void);

/* Counts a call of operation op (an index of the operation table, or METRICS_UNKNOWN_OP)
 * that took ns nanoseconds and failed with error type error (static; NULL when it
 * succeeded). */
void metrics_count(qr_db *db, size_t op, uint64_t ns, const char *error);

/* call.c: the name of operation i of the operation table, NULL past its end. */
const char *call_operation_name(size_t i);

#endif
