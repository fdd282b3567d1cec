/* backups.c — point-in-time recovery: DescribeContinuousBackups, UpdateContinuousBackups
 * and RestoreTableToPointInTime. On-demand backups are backup_ondemand.c's. */
#include <stdlib.h>
#include <string.h>

#include "model/value.h"
#include "ops/ops.h"

/* The table named by TableName (held: catalog_release it); DynamoDB's backup calls
 * report a missing table as TableNotFoundException. */
static table *find_table(qr_db *db, json_t *req, qr_err *err)
{
    json_t *name = json_object_get(req, "TableName");
    if (param_check_table_name(name, "tableName", err)) return NULL;
    table *t = catalog_get(db, json_string_value(name));
    if (t == NULL)
        err_set(err, "TableNotFoundException", "Table not found: %s", json_string_value(name));
    return t;
}

/* The ContinuousBackupsDescription of a table whose PITR record is pitr (NULL: never
 * enabled). While enabled, the restorable window runs from when it was enabled (at most
 * its recovery period ago) to five minutes ago, as DynamoDB reports it. */
static json_t *describe(const json_t *pitr)
{
    json_t *d = json_pack("{s:s}", "PointInTimeRecoveryStatus", "DISABLED");
    double earliest, latest;
    if (pitr_window(pitr, ops_now_seconds(), &earliest, &latest) == 0) {
        json_int_t days = json_integer_value(json_object_get(pitr, "RecoveryPeriodInDays"));
        json_object_set_new(d, "PointInTimeRecoveryStatus", json_string("ENABLED"));
        json_object_set_new(d, "RecoveryPeriodInDays", json_integer(days));
        json_object_set_new(d, "EarliestRestorableDateTime", json_real(earliest));
        json_object_set_new(d, "LatestRestorableDateTime", json_real(latest));
    }
    return json_pack("{s:{s:s,s:o}}", "ContinuousBackupsDescription", "ContinuousBackupsStatus",
                     "ENABLED", "PointInTimeRecoveryDescription", d);
}

int op_describe_continuous_backups(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t = find_table(db, req, err);
    if (t == NULL) return -1;
    json_t *pitr = table_desc_member(t, QR_PITR_FIELD);
    c->answer = describe(pitr);
    json_decref(pitr);
    catalog_release(db, t);
    return 0;
}

typedef struct pitr_change {
    int enable;
    json_int_t days;
    json_t *result; /* the description after the change */
} pitr_change;

/* The setting lives in the table's catalog record (not shown by DescribeTable); while it is
 * enabled, engine/pitr.c keeps what each write replaced, for the recovery period. */
static int apply_pitr(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    (void)err;
    pitr_change *c = arg;
    json_t *cur = json_object_get(desc, QR_PITR_FIELD);
    if (c->enable) {
        /* Enabling again keeps the window; a new recovery period applies at once. */
        double since = json_is_true(json_object_get(cur, "Enabled"))
                           ? json_real_value(json_object_get(cur, "Since"))
                           : 0;
        if (since == 0) since = ops_now_seconds();
        json_object_set_new(desc, QR_PITR_FIELD,
                            json_pack("{s:b,s:I,s:f}", "Enabled", 1, "RecoveryPeriodInDays",
                                      c->days, "Since", since));
    } else {
        json_object_del(desc, QR_PITR_FIELD);
    }
    c->result = describe(json_object_get(desc, QR_PITR_FIELD));
    return 0;
}

int op_update_continuous_backups(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *spec;
    if (param_object(req, "PointInTimeRecoverySpecification", &spec, err)) return -1;
    if (spec == NULL) return param_null("pointInTimeRecoverySpecification", err);
    json_t *enabled = json_object_get(spec, "PointInTimeRecoveryEnabled");
    if (enabled && !json_is_null(enabled) && !json_is_boolean(enabled))
        return err_set(err, QR_E_SERIALIZATION, "PointInTimeRecoveryEnabled must be a boolean");
    if (!json_is_boolean(enabled))
        return param_null("pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled", err);
    json_t *days = json_object_get(spec, "RecoveryPeriodInDays");
    if (days && !json_is_null(days) && !json_is_integer(days))
        return err_set(err, QR_E_SERIALIZATION, "RecoveryPeriodInDays must be an integer");
    pitr_change change = {json_is_true(enabled),
                          days && json_is_integer(days) ? json_integer_value(days) : 35, NULL};
    if (change.days < 1 || change.days > 35) {
        char shown[32];
        snprintf(shown, sizeof shown, "%lld", (long long)change.days);
        return err_violation(err, shown, "pointInTimeRecoverySpecification.recoveryPeriodInDays",
                             change.days < 1 ? QR_MSG_VALUE_AT_LEAST : QR_MSG_VALUE_AT_MOST,
                             change.days < 1 ? 1LL : 35LL);
    }
    /* The period belongs to an enabled recovery; disabling forgets it. */
    if (!change.enable && json_is_integer(days))
        return err_validation(
            err,
            "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time "
            "recovery.");
    table *t = find_table(db, req, err);
    if (t == NULL) return -1;
    char name[256];
    snprintf(name, sizeof name, "%s", table_name(t));
    uint32_t id = table_id(t);
    int was = pitr_enabled(t);
    catalog_release(db, t); /* a schema change must not hold a table */
    /* A new window starts with no history (what a failed drop left is dropped now); a
     * disabled recovery keeps none. */
    if (change.enable && !was && pitr_drop(db, id, err)) return -1;
    if (catalog_change_schema(db, name, apply_pitr, &change, err)) {
        json_decref(change.result);
        return -1;
    }
    if (!change.enable) {
        qr_err ignored; /* left for the next enable to drop */
        err_init(&ignored);
        pitr_drop(db, id, &ignored);
        err_clear(&ignored);
    }
    c->answer = change.result;
    return 0;
}

/* ---- RestoreTableToPointInTime ---- */

/* Sets a restored table's RestoreSummary to name its source table and time, not the
 * backup the restore went through. */
static int note_point_in_time(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    (void)err;
    json_object_set(desc, "RestoreSummary", arg);
    return 0;
}

/* Turns the restored table name (a copy of its source at a snapshot) back to its source's
 * state at when, with the history recorded after when: each change undone by the
 * engine's own write of the item as it was (or its delete). */
static int roll_back(qr_db *db, uint32_t source_id, const char *name, double when, qr_err *err)
{
    json_t *changes;
    if (pitr_changes_since(db, source_id, when, &changes, err)) return -1;
    table *t = catalog_get(db, name);
    if (t == NULL) {
        json_decref(changes);
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_NOT_FOUND);
    }
    const char *k;
    json_t *rec;
    int rc = 0;
    buf key;
    buf_init(&key, 0);
    json_object_foreach(changes, k, rec)
    {
        json_t *old = json_object_get(rec, "O");
        item_txn *x = NULL;
        buf_reset(&key);
        rc = key_item(&key, t, json_object_get(rec, "K"), err) ||
                     txn_begin(db, TXN_ITEM | TXN_SYSTEM, 1, &t, &key, &x, err) ||
                     (old ? txn_put(x, 0, old, item_size(old), err) : txn_delete(x, 0, err)) ||
                     txn_commit(x, err)
                 ? -1
                 : 0;
        txn_end(x);
        if (rc) break;
    }
    buf_free(&key);
    catalog_release_after_writes(t);
    json_decref(changes);
    return rc;
}

/* A restore is an on-demand backup of the table now (backup_ondemand.c) restored into the
 * new table and then turned back to the asked time with pitr.c's history (roll_back). */
int op_restore_table_to_point_in_time(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *target;
    if (restore_check_request(req, &target, err)) return -1;
    json_t *by_name = json_object_get(req, "SourceTableName"),
           *by_arn = json_object_get(req, "SourceTableArn");
    if ((by_name == NULL) == (by_arn == NULL))
        return err_validation(
            err, "Invalid Request: Must provide exactly one of: sourceTableArn, sourceTableName");
    int latest_asked;
    json_t *at = json_object_get(req, "RestoreDateTime");
    if (param_bool(req, "UseLatestRestorableTime", 0, &latest_asked, err)) return -1;
    int at_given = at != NULL && !json_is_null(at);
    if (latest_asked == at_given)
        return err_validation(
            err,
            "Invalid Request: Either one of RestoreDateTime or UseLatestRestorableTime must be "
            "specified, but not both");
    /* The source, by name or by ARN: a TableName check resolves an ARN to its name. */
    json_t *source_req = json_pack("{s:O}", "TableName", by_name ? by_name : by_arn);
    json_t *source = json_object_get(source_req, "TableName");
    if (param_check_table_name(source, by_name ? "sourceTableName" : "sourceTableArn", err)) {
        json_decref(source_req);
        return -1;
    }
    table *t = catalog_get(db, json_string_value(source));
    if (t == NULL) {
        err_set(err, "TableNotFoundException", "Table not found: %s", json_string_value(source));
        json_decref(source_req);
        return -1;
    }
    json_t *pitr = table_desc_member(t, QR_PITR_FIELD);
    json_t *source_arn = table_desc_member(t, "TableArn");
    uint32_t source_id = table_id(t);
    catalog_release(db, t);
    double earliest, latest, when = 0;
    int rc = -1;
    json_t *backup = NULL, *restored = NULL;
    if (pitr_window(pitr, ops_now_seconds(), &earliest, &latest)) {
        err_set(err, "PointInTimeRecoveryUnavailableException",
                "Point in time recovery is not enabled for table '%s'", json_string_value(source));
        goto done;
    }
    when = latest_asked ? latest : json_number_value(at);
    if (when < earliest || when > latest) {
        err_set(err, "InvalidRestoreTimeException",
                "Invalid Request: RestoreDateTime must be between "
                "EarliestRestorableDateTime and LatestRestorableDateTime");
        goto done;
    }
    table *existing = catalog_get(db, json_string_value(target));
    if (existing) {
        catalog_release(db, existing);
        err_set(err, "TableAlreadyExistsException", QR_MSG_TABLE_EXISTS, json_string_value(target));
        goto done;
    }
    /* The table now, as an on-demand backup, restored with the request's overrides. */
    json_t *create =
        json_pack("{s:O,s:s}", "TableName", source, "BackupName", "point-in-time-restore");
    rc = op_run(db, op_create_backup, create, &backup, err);
    json_decref(create);
    if (rc) goto done;
    json_t *arn = json_object_get(json_object_get(backup, "BackupDetails"), "BackupArn");
    json_t *restore = json_deep_copy(req);
    json_object_del(restore, "SourceTableName");
    json_object_del(restore, "SourceTableArn");
    json_object_del(restore, "UseLatestRestorableTime");
    json_object_del(restore, "RestoreDateTime");
    json_object_set(restore, "BackupArn", arn);
    rc = op_run(db, op_restore_table_from_backup, restore, &restored, err);
    json_decref(restore);
    if (rc == 0) rc = roll_back(db, source_id, json_string_value(target), when, err);
    if (rc == 0) propagate_drain(db, RESTORE_INDEX_WAIT_MS);
    json_t *summary = json_pack("{s:O,s:f,s:b}", "SourceTableArn", source_arn, "RestoreDateTime",
                                when, "RestoreInProgress", 0);
    if (rc == 0)
        rc = catalog_change_schema(db, json_string_value(target), note_point_in_time, summary, err);
    json_t *del = json_pack("{s:O}", "BackupArn", arn), *gone = NULL;
    qr_err ignored;
    err_init(&ignored);
    op_run(db, op_delete_backup, del, &gone, &ignored); /* the backup was only the way there */
    err_clear(&ignored);
    json_decref(gone);
    json_decref(del);
    if (rc) {
        restore_abandon(db, json_string_value(target));
        json_decref(summary);
        goto done;
    }
    json_object_set_new(summary, "RestoreInProgress", json_true());
    json_object_set_new(json_object_get(restored, "TableDescription"), "RestoreSummary", summary);
    c->answer = restored;
    restored = NULL;
done:
    json_decref(restored);
    json_decref(backup);
    json_decref(pitr);
    json_decref(source_arn);
    json_decref(source_req);
    return rc;
}
