/* backups.c — DescribeContinuousBackups and UpdateContinuousBackups.
 *
 * quarry keeps no continuous backups to restore to a point in time from (on-demand
 * backups are backup_ondemand.c's). These two calls exist because tools that manage
 * DynamoDB tables (Terraform's aws_dynamodb_table, compliance scripts) read and set
 * point-in-time recovery on every table; they answer as DynamoDB does and remember the
 * setting in the table's catalog record, not shown by DescribeTable. */
#include "ops/ops.h"

/* The table named by TableName (held: catalog_release it); DynamoDB's backup calls
 * report a missing table as TableNotFoundException. */
static table *find_table(qr_db *db, json_t *req, qr_err *err)
{
    json_t *name = json_object_get(req, "TableName");
    if (param_check_table_name(name, "tableName", err)) return NULL;
    table *t = catalog_get(db, json_string_value(name));
    if (t == NULL) err_set(err, "TableNotFoundException", "Table not found: %s", json_string_value(name));
    return t;
}

/* The ContinuousBackupsDescription of a table whose PITR record is pitr (NULL: never
 * enabled). While enabled, the restorable window runs from when it was enabled (at most
 * its recovery period ago) to five minutes ago, as DynamoDB reports it. */
static json_t *describe(const json_t *pitr)
{
    json_t *d = json_pack("{s:s}", "PointInTimeRecoveryStatus", "DISABLED");
    if (json_is_true(json_object_get(pitr, "Enabled"))) {
        double now = ops_now_seconds();
        json_int_t days = json_integer_value(json_object_get(pitr, "RecoveryPeriodInDays"));
        double since = json_real_value(json_object_get(pitr, "Since"));
        double earliest = now - (double)days * 86400.0;
        if (since > earliest) earliest = since;
        double latest = now - 300.0 > earliest ? now - 300.0 : earliest;
        json_object_set_new(d, "PointInTimeRecoveryStatus", json_string("ENABLED"));
        json_object_set_new(d, "RecoveryPeriodInDays", json_integer(days));
        json_object_set_new(d, "EarliestRestorableDateTime", json_real(earliest));
        json_object_set_new(d, "LatestRestorableDateTime", json_real(latest));
    }
    return json_pack("{s:{s:s,s:o}}", "ContinuousBackupsDescription", "ContinuousBackupsStatus", "ENABLED",
                     "PointInTimeRecoveryDescription", d);
}

int op_describe_continuous_backups(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    table *t = find_table(db, req, err);
    if (t == NULL) return -1;
    pthread_mutex_lock(&db->catalog_lock);
    *resp = describe(json_object_get(t->desc, QR_PITR_FIELD));
    pthread_mutex_unlock(&db->catalog_lock);
    catalog_release(db, t);
    return 0;
}

typedef struct pitr_change {
    int enable;
    json_int_t days;
    json_t *result; /* the description after the change */
} pitr_change;

static int apply_pitr(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    (void)err;
    pitr_change *c = arg;
    json_t *cur = json_object_get(desc, QR_PITR_FIELD);
    if (c->enable) {
        /* Enabling again keeps the window; a new recovery period applies at once. */
        double since = json_is_true(json_object_get(cur, "Enabled")) ? json_real_value(json_object_get(cur, "Since")) : 0;
        if (since == 0) since = ops_now_seconds();
        json_object_set_new(desc, QR_PITR_FIELD,
                            json_pack("{s:b,s:I,s:f}", "Enabled", 1, "RecoveryPeriodInDays", c->days, "Since", since));
    } else {
        json_object_del(desc, QR_PITR_FIELD);
    }
    c->result = describe(json_object_get(desc, QR_PITR_FIELD));
    return 0;
}

int op_update_continuous_backups(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    json_t *spec;
    if (param_object(req, "PointInTimeRecoverySpecification", &spec, err)) return -1;
    if (spec == NULL) return param_null("pointInTimeRecoverySpecification", err);
    json_t *enabled = json_object_get(spec, "PointInTimeRecoveryEnabled");
    if (enabled && !json_is_null(enabled) && !json_is_boolean(enabled))
        return err_set(err, QR_E_SERIALIZATION, "PointInTimeRecoveryEnabled must be a boolean");
    if (!json_is_boolean(enabled)) return param_null("pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled", err);
    json_t *days = json_object_get(spec, "RecoveryPeriodInDays");
    if (days && !json_is_null(days) && !json_is_integer(days))
        return err_set(err, QR_E_SERIALIZATION, "RecoveryPeriodInDays must be an integer");
    pitr_change c = {json_is_true(enabled), days && json_is_integer(days) ? json_integer_value(days) : 35, NULL};
    if (c.days < 1 || c.days > 35)
        return err_validation(err, "1 validation error detected: Value '%lld' at "
                                   "'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed to satisfy "
                                   "constraint: Member must have value %s",
                              (long long)c.days, c.days < 1 ? "greater than or equal to 1" : "less than or equal to 35");
    /* The period belongs to an enabled recovery; disabling forgets it. */
    if (!c.enable && json_is_integer(days))
        return err_validation(err, "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time "
                                   "recovery.");
    table *t = find_table(db, req, err);
    if (t == NULL) return -1;
    char name[256];
    snprintf(name, sizeof name, "%s", t->name);
    catalog_release(db, t); /* a schema change must not hold a table */
    if (catalog_change_schema(db, name, apply_pitr, &c, err)) {
        json_decref(c.result);
        return -1;
    }
    *resp = c.result;
    return 0;
}
