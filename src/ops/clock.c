/* clock.c — QuarryAdvanceClock: moves the capacity clock of a database opened with the
 * manual clock (serve --capacity-clock manual), so tests of throttling and burst run
 * the same on every machine. Not a DynamoDB operation; refused on a real clock. */
#include <math.h>

#include "ops/ops.h"

int op_quarry_advance_clock(qr_db *db, op_call *c, qr_err *err)
{
    json_t *v = json_object_get(c->req, "Seconds");
    if (!engine_clock_manual(db))
        return err_validation(err, "QuarryAdvanceClock needs the manual capacity clock: start "
                                   "quarry with --capacity-clock manual");
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0 ||
        json_number_value(v) > 86400.0 * 366)
        return err_validation(err, "Seconds must be a number from 0 to 31622400");
    qr_clock_advance(db, json_number_value(v));
    c->answer = json_pack("{s:f}", "Seconds", json_number_value(v));
    return c->answer ? 0 : err_set(err, QR_E_INTERNAL, "out of memory");
}
