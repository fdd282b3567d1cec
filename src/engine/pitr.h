/* pitr.h — point-in-time recovery's history: what a table's items were before each
 * write while its PITR is enabled, and the table's state at a past time (see pitr.c). */
#ifndef QUARRY_ENGINE_PITR_H
#define QUARRY_ENGINE_PITR_H

#include <jansson.h>
#include <stdint.h>

#include "quarry.h"
#include "util/err.h"

struct table;

/* Whether t's point-in-time recovery is enabled. */
int pitr_enabled(const struct table *t);

/* The restorable window of a table whose PITR record (its QR_PITR_FIELD) is pitr, at
 * now: from when PITR was enabled (at most its recovery period ago) to five minutes ago,
 * as DynamoDB reports it. Returns 0, or -1 when PITR is not enabled. */
int pitr_window(const json_t *pitr, double now, double *earliest, double *latest);

/* The items of table id that changed after when (seconds since the epoch), each as it
 * was then: *changes maps a key to {"K": its key attributes, "O": the item, absent when
 * there was none}. Read after a snapshot of the table, it turns the snapshot into the
 * table at when. */
int pitr_changes_since(qr_db *db, uint32_t id, double when, json_t **changes, qr_err *err);

/* The items of table id written at a millisecond in [from_ms, to_ms): *changes maps a key
 * to {"K": its key attributes, "O": the item before the first of those writes (absent
 * when there was none), "T": the millisecond of the last}. With to_ms UINT64_MAX, every
 * write from from_ms on. */
int pitr_changes_between(qr_db *db, uint32_t id, uint64_t from_ms, uint64_t to_ms, json_t **changes,
                         qr_err *err);

/* Forgets table id's history (PITR disabled, or enabled afresh). */
int pitr_drop(qr_db *db, uint32_t id, qr_err *err);

/* Trims each table's history to its recovery period (the expiry sweeper's turn). */
void pitr_trim(qr_db *db, double now);

#endif
