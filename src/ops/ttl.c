/* ttl.c — UpdateTimeToLive and DescribeTimeToLive.
 *
 * A table's TTL setting is kept in its catalog record (not shown by DescribeTable, as in
 * DynamoDB); the engine's expiry sweeper (engine/expire.c) deletes items whose TTL
 * attribute, a number of epoch seconds, lies in the past. As in DynamoDB, a change is
 * followed by an hour in which the setting cannot change again. */
#include <string.h>

#include "model/value.h"
#include "ops/ops.h"

/* How long a TTL change takes to settle, during which another change is refused. */
#define TTL_SETTLE_SECONDS 3600.0

/* The table named by TableName (held: catalog_release it), or DynamoDB's error naming it. */
static int find_table(qr_db *db, json_t *req, table **t, qr_err *err)
{
    json_t *name = json_object_get(req, "TableName");
    if (param_check_table_name(name, "tableName", err)) return -1;
    if ((*t = catalog_get(db, json_string_value(name))) == NULL)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_TABLE_NOT_FOUND, json_string_value(name));
    return 0;
}

typedef struct ttl_change {
    int enable;
    const char *attribute;
} ttl_change;

static int apply_ttl(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    ttl_change *c = arg;
    json_t *cur = json_object_get(desc, QR_TTL_FIELD);
    int enabled =
        cur && strcmp(json_string_value(json_object_get(cur, "TimeToLiveStatus")), "ENABLED") == 0;
    if (c->enable && enabled) return err_validation(err, "TimeToLive is already enabled");
    if (!c->enable && !enabled) return err_validation(err, "TimeToLive is already disabled");
    if (!c->enable &&
        strcmp(json_string_value(json_object_get(cur, "AttributeName")), c->attribute) != 0)
        return err_validation(
            err, "TimeToLive is active on a different AttributeName: current AttributeName is %s",
            json_string_value(json_object_get(cur, "AttributeName")));
    /* "It can take up to one hour for the change to fully process. Any additional
     * UpdateTimeToLive calls for the same table during this one hour duration result in a
     * ValidationException" (the API reference); what is wrong with the request itself is
     * reported first. */
    double now = ops_now_seconds();
    json_t *changed = json_object_get(desc, QR_TTL_CHANGED_FIELD);
    if (json_is_number(changed) && now - json_number_value(changed) < TTL_SETTLE_SECONDS)
        return err_validation(
            err, "Time to live has been modified multiple times within a fixed interval");
    json_object_set_new(desc, QR_TTL_CHANGED_FIELD, json_real(now));
    if (c->enable)
        json_object_set_new(
            desc, QR_TTL_FIELD,
            json_pack("{s:s,s:s}", "TimeToLiveStatus", "ENABLED", "AttributeName", c->attribute));
    else
        json_object_del(desc, QR_TTL_FIELD);
    return 0;
}

int op_update_time_to_live(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    /* The specification's members, their types and constraints, are judged by the shape
     * checker before the table is looked up, as DynamoDB does. */
    json_t *spec = json_object_get(req, "TimeToLiveSpecification");
    json_t *enabled = json_object_get(spec, "Enabled"),
           *attr = json_object_get(spec, "AttributeName");
    table *t;
    if (find_table(db, req, &t, err)) return -1;
    char name[256];
    snprintf(name, sizeof name, "%s", table_name(t));
    catalog_release(db, t); /* a schema change must not hold a table */
    ttl_change change = {json_is_true(enabled), json_string_value(attr)};
    if (catalog_change_schema(db, name, apply_ttl, &change, err)) return -1;
    c->answer = json_pack("{s:{s:b,s:s}}", "TimeToLiveSpecification", "Enabled", change.enable,
                          "AttributeName", change.attribute);
    return 0;
}

int op_describe_time_to_live(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t;
    if (find_table(db, req, &t, err)) return -1;
    json_t *ttl = table_desc_member(t, QR_TTL_FIELD);
    catalog_release(db, t);
    if (ttl == NULL) ttl = json_pack("{s:s}", "TimeToLiveStatus", "DISABLED");
    c->answer = json_pack("{s:o}", "TimeToLiveDescription", ttl);
    return 0;
}
