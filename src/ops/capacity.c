/* capacity.c — ConsumedCapacity in answers, by DynamoDB's rules. This module reports what
 * a request consumed; the engine's meters charge and throttle (src/engine/capacity.c). */
#include <string.h>

#include "ops/ops.h"

/* Like DynamoDB, the single-table operations report the aggregate CapacityUnits alone: only
 * transactions split reads from writes. */
json_t *capacity_object(const char *mode, const char *table, double units, int is_write)
{
    (void)is_write; /* the read/write split is a transaction's alone */
    if (mode == NULL || strcmp(mode, "NONE") == 0) return NULL;
    json_t *c = json_pack("{s:s,s:f}", "TableName", table, "CapacityUnits", units);
    if (strcmp(mode, "INDEXES") == 0)
        json_object_set_new(c, "Table", json_pack("{s:f}", "CapacityUnits", units));
    return c;
}

json_t *capacity_object_indexed(const char *mode, const table *t, double table_units,
                                const double *index_units, int is_write)
{
    (void)is_write;
    if (mode == NULL || strcmp(mode, "NONE") == 0) return NULL;
    double total = table_units;
    json_t *gsi = json_object(), *lsi = json_object();
    const qr_index *ixs = table_indexes(t);
    for (size_t i = 0; i < table_index_count(t); i++) {
        if (index_units[i] <= 0) continue;
        total += index_units[i];
        json_object_set_new(ixs[i].global ? gsi : lsi, ixs[i].name,
                            json_pack("{s:f}", "CapacityUnits", index_units[i]));
    }
    json_t *c = json_pack("{s:s,s:f}", "TableName", table_name(t), "CapacityUnits", total);
    if (strcmp(mode, "INDEXES") == 0) {
        json_object_set_new(c, "Table", json_pack("{s:f}", "CapacityUnits", table_units));
        if (json_object_size(gsi)) json_object_set(c, "GlobalSecondaryIndexes", gsi);
        if (json_object_size(lsi)) json_object_set(c, "LocalSecondaryIndexes", lsi);
    }
    json_decref(gsi);
    json_decref(lsi);
    return c;
}

void capacity_index_writes(const table *t, const json_t *old_item, const json_t *new_item,
                           double *index_units)
{
    for (size_t i = 0; i < table_index_count(t); i++) {
        int writes;
        size_t bytes = index_write_bytes(t, &table_indexes(t)[i], old_item, new_item, &writes);
        index_units[i] = writes ? meter_write_units(bytes) + (writes > 1 ? 1.0 : 0.0) : 0;
    }
}
