/* capacity.c — consumed capacity by DynamoDB's rules.
 *
 * Reads are billed in 4 KB units (half a unit when eventually consistent), writes in
 * 1 KB units, each rounded up and at least one unit. Query and Scan sum the sizes of
 * the items they read (before any filter) and round the total once. This module only
 * computes and reports; it does not throttle. */
#include <string.h>

#include "ops/ops.h"

double capacity_read_units(size_t bytes, int consistent)
{
    size_t units = (bytes + 4095) / 4096;
    if (units == 0) units = 1;
    return consistent ? (double)units : (double)units / 2.0;
}

double capacity_write_units(size_t bytes)
{
    size_t units = (bytes + 1023) / 1024;
    return units == 0 ? 1.0 : (double)units;
}

json_t *capacity_object(const char *mode, const char *table, double units, int is_write)
{
    if (mode == NULL || strcmp(mode, "NONE") == 0) return NULL;
    json_t *c = json_pack("{s:s,s:f,s:f}", "TableName", table, "CapacityUnits", units,
                          is_write ? "WriteCapacityUnits" : "ReadCapacityUnits", units);
    if (strcmp(mode, "INDEXES") == 0)
        json_object_set_new(c, "Table", json_pack("{s:f,s:f}", "CapacityUnits", units,
                                                  is_write ? "WriteCapacityUnits" : "ReadCapacityUnits", units));
    return c;
}

void capacity_report(json_t *resp, const char *mode, const char *table, double units, int is_write)
{
    json_t *c = capacity_object(mode, table, units, is_write);
    if (c) json_object_set_new(resp, "ConsumedCapacity", c);
}
