/* warm.h — WarmThroughput: the read and write units a table and each of its global
 * secondary indexes are prepared to serve at once (see warm.c). */
#ifndef QUARRY_OPS_WARM_H
#define QUARRY_OPS_WARM_H

#include <jansson.h>

#include "util/err.h"

/* What DynamoDB prepares every on-demand table and index for: 12,000 read and 4,000
 * write units a second. */
#define WARM_ON_DEMAND_READ 12000
#define WARM_ON_DEMAND_WRITE 4000

/* Raises the WarmThroughput of the table described by desc, and of each of its global
 * indexes, to what their capacity already guarantees: the on-demand baseline, or the
 * provisioned units. Warm throughput never falls, so a lower capacity leaves it. */
void warm_follow_capacity(json_t *desc);

/* Applies a request's WarmThroughput (spec, NULL for none) to target (the table's
 * description, or one global index's within it), after warm_follow_capacity. creating
 * is set for CreateTable, where a unit below the baseline is refused and an empty spec
 * asks for the baseline; UpdateTable refuses a unit below the current value (0 and
 * below included) and an empty spec. index names the index (NULL for the table);
 * field names the parameter in shape errors ("warmThroughput"). */
int warm_apply(json_t *spec, json_t *target, int creating, int provisioned, const char *index,
               const char *field, qr_err *err);

/* Raises target's WarmThroughput (the table's description, or one global index's within
 * it) to the units its capacity meter serves at once now (meter_totals' read_at_once and
 * write_at_once): an on-demand table's grows with its peaks. */
void warm_follow_traffic(json_t *target, double read, double write);

/* Sets each global index's WarmThroughput status to its IndexStatus (for DescribeTable). */
void warm_describe(json_t *desc);

#endif
