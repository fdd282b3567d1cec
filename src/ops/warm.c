/* warm.c — WarmThroughput, as DynamoDB keeps it for a table and each global index: what
 * it can serve at once. It follows capacity up (provisioned units, the on-demand
 * baseline, the peaks on-demand traffic has reached) and never comes down; raising it
 * pre-splits the capacity meter's partitions (engine/capacity.c reads it back from the
 * description). Not the meter itself. */
#include "ops/warm.h"

#include <string.h>

#include "ops/ops.h"

static const char *const units[2] = {"ReadUnitsPerSecond", "WriteUnitsPerSecond"};
static const char *const fields[2] = {"readUnitsPerSecond", "writeUnitsPerSecond"};
static const char *const capacities[2] = {"ReadCapacityUnits", "WriteCapacityUnits"};

static int provisioned_billing(json_t *desc)
{
    json_t *mode = json_object_get(json_object_get(desc, "BillingModeSummary"), "BillingMode");
    return mode == NULL || strcmp(json_string_value(mode), "PROVISIONED") == 0;
}

/* A new on-demand table or index starts at 12,000 read and 4,000 write units a second; a
 * provisioned one at its provisioned units.
 *
 * The least warm throughput target's capacity guarantees, unit i. */
static json_int_t baseline(json_t *target, int provisioned, int i)
{
    if (!provisioned) return i == 0 ? WARM_ON_DEMAND_READ : WARM_ON_DEMAND_WRITE;
    json_int_t v = json_integer_value(
        json_object_get(json_object_get(target, "ProvisionedThroughput"), capacities[i]));
    return v > 0 ? v : 1;
}

/* target's WarmThroughput object, made at its baseline if it has none yet. */
static json_t *warm_of(json_t *target, int provisioned)
{
    json_t *w = json_object_get(target, "WarmThroughput");
    if (json_is_object(w)) return w;
    w = json_pack("{s:I,s:I,s:s}", units[0], baseline(target, provisioned, 0), units[1],
                  baseline(target, provisioned, 1), "Status", "ACTIVE");
    json_object_set_new(target, "WarmThroughput", w);
    return w;
}

/* Warm throughput follows capacity up (a higher ProvisionedThroughput, or a switch to
 * on-demand) and never comes down again. */
static void follow(json_t *target, int provisioned)
{
    json_t *w = warm_of(target, provisioned);
    for (int i = 0; i < 2; i++) {
        json_int_t base = baseline(target, provisioned, i);
        if (json_integer_value(json_object_get(w, units[i])) < base)
            json_object_set_new(w, units[i], json_integer(base));
    }
}

void warm_follow_capacity(json_t *desc)
{
    int provisioned = provisioned_billing(desc);
    follow(desc, provisioned);
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
        follow(g, provisioned);
}

/* CreateTable and UpdateTable may raise it, one unit or both; a unit below the baseline
 * (CreateTable) or below the current value, 0 or less included (UpdateTable), is refused;
 * CreateTable takes an empty one as the baseline. Changes apply at once, so its status is
 * always that of the table or index. */
int warm_apply(json_t *spec, json_t *target, int creating, int provisioned, const char *index,
               const char *field, qr_err *err)
{
    if (spec == NULL || json_is_null(spec)) return 0; /* its types are the shape checker's */
    json_int_t want[2];
    int given[2];
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(spec, units[i]);
        given[i] = v != NULL && !json_is_null(v);
        if (!given[i]) continue;
        want[i] = json_integer_value(v);
        if (want[i] < 1 && creating) {
            char shown[32], path[160];
            snprintf(shown, sizeof shown, "%lld", (long long)want[i]);
            snprintf(path, sizeof path, "%s.%s", field, fields[i]);
            return err_violation(err, shown, path, QR_MSG_VALUE_AT_LEAST, 1LL);
        }
    }
    char what[300];
    if (index)
        snprintf(what, sizeof what, "index %s", index);
    else
        snprintf(what, sizeof what, "table");
    if (!given[0] && !given[1] && creating) return 0;
    if (!given[0] && !given[1])
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER
                              "WarmThroughput must have at least one "
                              "of ReadUnitsPerSecond or WriteUnitsPerSecond specified%s%s",
                              index ? " for index: " : "", index ? index : "");
    json_t *w = warm_of(target, provisioned);
    for (int i = 0; i < 2; i++) {
        if (!given[i]) continue;
        json_int_t cur = json_integer_value(json_object_get(w, units[i]));
        if (want[i] >= cur) continue;
        if (!creating)
            return err_validation(
                err,
                QR_MSG_INVALID_PARAMETER
                "Requested %s for WarmThroughput "
                "for %s is lower than current WarmThroughput, decreasing WarmThroughput is "
                "not supported",
                units[i], what);
        if (provisioned)
            return err_validation(err,
                                  QR_MSG_INVALID_PARAMETER
                                  "Requested %s for WarmThroughput "
                                  "for %s is lower than %s of ProvisionedThroughput",
                                  units[i], what, capacities[i]);
        return err_validation(
            err,
            QR_MSG_INVALID_PARAMETER
            "Requested %s for WarmThroughput for "
            "%s is lower than initial throughput for OnDemand. See: https://docs.aws.amazon.com/"
            "amazondynamodb/latest/developerguide/on-demand-capacity-mode.html"
            "#on-demand-capacity-mode-initial",
            units[i], what);
    }
    for (int i = 0; i < 2; i++)
        if (given[i]) json_object_set_new(w, units[i], json_integer(want[i]));
    return 0;
}

void warm_follow_traffic(json_t *target, double read, double write)
{
    json_t *w = json_object_get(target, "WarmThroughput");
    if (!json_is_object(w)) return;
    double at_once[2] = {read, write};
    for (int i = 0; i < 2; i++)
        if ((double)json_integer_value(json_object_get(w, units[i])) < at_once[i])
            json_object_set_new(w, units[i], json_integer((json_int_t)at_once[i]));
}

void warm_describe(json_t *desc)
{
    warm_follow_capacity(desc); /* tables made before quarry kept warm throughput */
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
    {
        json_t *status = json_object_get(g, "IndexStatus");
        json_t *w = json_object_get(g, "WarmThroughput");
        if (json_is_string(status) && json_is_object(w)) json_object_set(w, "Status", status);
    }
}
