/* backup_ondemand.c — on-demand backups: CreateBackup, DescribeBackup, ListBackups,
 * DeleteBackup and RestoreTableFromBackup. A backup is a copy, from one read view, of a
 * table's items and a record of its description, both kept by the engine (meta.h); this
 * file decides what the record says and how requests are answered. Backups outlive their
 * table. A restore makes a new table from the record and writes the items through item
 * transactions, so indexes and streams see them as any write. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "model/value.h"
#include "ops/ops.h"
#include "util/jsonread.h"
#include "util/progress.h"

#define ARN_REGION_ACCOUNT "arn:aws:dynamodb:ddblocal:000000000000:table/"
#define SYSTEM_BACKUP_DAYS 35
#define RESTORE_BATCH_ITEMS 100

/* The backup id an ARN "arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/backup/MS-ID" names
 * (0 if none), and, in *a, its parts. Checks what DynamoDB checks after the shape checker
 * has judged the ARN's length, in its words: a backup's identity is its account, table
 * name and id (the region is not looked at). */
static int backup_arn(const char *arn, arn_parts *a, uint32_t *id, qr_err *err)
{
    if (arn_split(arn, a) || a->table == NULL || a->sub == NULL ||
        !arn_is(a->sub, a->sub_len, "backup") || a->sub_name == NULL)
        return err_validation(err, "Invalid Backup ARN");
    if (!arn_is(a->partition, a->partition_len, "aws") ||
        !arn_is(a->service, a->service_len, "dynamodb"))
        return err_validation(err, "Invalid Request: BackupArn is not valid");
    if (a->region_len == 0 || !arn_is(a->account, a->account_len, QR_ACCOUNT))
        return err_set(err, "AccessDeniedException", "Access is denied");
    /* The id is the last 8 hex digits of MS-ID. */
    size_t len = strlen(a->sub_name);
    uint32_t v = 0;
    int ok = len > 9 && a->sub_name[len - 9] == '-';
    for (size_t i = len - 8; ok && i < len; i++) {
        char c = a->sub_name[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        ok = d >= 0;
        v = v << 4 | (uint32_t)(d < 0 ? 0 : d);
    }
    *id = ok ? v : 0;
    return 0;
}

/* The record a BackupArn names (required parameter), or BackupNotFoundException. */
static int find(qr_db *db, json_t *req, json_t **rec, uint32_t *id, qr_err *err)
{
    const char *arn = json_string_value(json_object_get(req, "BackupArn")); /* required */
    arn_parts a;
    *rec = NULL;
    if (backup_arn(arn, &a, id, err)) return -1;
    if (*id && meta_backup_get(db, *id, rec, err) < 0) return -1;
    /* The same table and backup id, whatever the region says. */
    const char *stored =
        json_string_value(json_object_get(json_object_get(*rec, "BackupDetails"), "BackupArn"));
    arn_parts s;
    if (*rec == NULL || stored == NULL || arn_split(stored, &s) || s.table_len != a.table_len ||
        strncmp(s.table, a.table, a.table_len) != 0 || s.sub_name == NULL ||
        strcmp(s.sub_name, a.sub_name) != 0) {
        json_decref(*rec);
        *rec = NULL;
        return err_set(err, "BackupNotFoundException", "Backup not found: %s", arn);
    }
    /* The answer echoes the ARN asked with. */
    json_object_set_new(json_object_get(*rec, "BackupDetails"), "BackupArn", json_string(arn));
    return 0;
}

/* The index definitions of a description, as CreateTable takes them. */
static json_t *index_defs(const json_t *list, int global)
{
    if (json_array_size(list) == 0) return NULL;
    json_t *out = json_array();
    size_t i;
    json_t *ix;
    json_array_foreach(list, i, ix)
    {
        json_t *d = json_pack("{s:O,s:O,s:O}", "IndexName", json_object_get(ix, "IndexName"),
                              "KeySchema", json_object_get(ix, "KeySchema"), "Projection",
                              json_object_get(ix, "Projection"));
        json_t *pt = json_object_get(ix, "ProvisionedThroughput");
        json_int_t r = json_integer_value(json_object_get(pt, "ReadCapacityUnits")),
                   w = json_integer_value(json_object_get(pt, "WriteCapacityUnits"));
        if (global && r > 0 && w > 0)
            json_object_set_new(
                d, "ProvisionedThroughput",
                json_pack("{s:I,s:I}", "ReadCapacityUnits", r, "WriteCapacityUnits", w));
        json_array_append_new(out, d);
    }
    return out;
}

static const char *billing_mode(const json_t *desc)
{
    const char *m = json_string_value(
        json_object_get(json_object_get(desc, "BillingModeSummary"), "BillingMode"));
    return m ? m : "PROVISIONED";
}

/* The backup's record: BackupDetails, SourceTableDetails, SourceTableFeatureDetails and
 * the CreateTable request that makes the table again. */
static json_t *record_of(const json_t *desc, const char *arn, const char *name, const char *type,
                         double now, int64_t items, int64_t bytes)
{
    json_t *details = json_pack("{s:s,s:s,s:I,s:s,s:s,s:f}", "BackupArn", arn, "BackupName", name,
                                "BackupSizeBytes", (json_int_t)bytes, "BackupStatus", "AVAILABLE",
                                "BackupType", type, "BackupCreationDateTime", now);
    /* DynamoDB keeps the backup it takes of a deleted table for 35 days. */
    if (strcmp(type, "SYSTEM") == 0)
        json_object_set_new(details, "BackupExpiryDateTime",
                            json_real(now + SYSTEM_BACKUP_DAYS * 86400.0));
    json_t *pt = json_object_get(desc, "ProvisionedThroughput");
    json_t *source = json_pack(
        "{s:O,s:O,s:O,s:I,s:O,s:O,s:{s:O,s:O},s:I,s:s}", "TableName",
        json_object_get(desc, "TableName"), "TableId", json_object_get(desc, "TableId"), "TableArn",
        json_object_get(desc, "TableArn"), "TableSizeBytes", (json_int_t)bytes, "KeySchema",
        json_object_get(desc, "KeySchema"), "TableCreationDateTime",
        json_object_get(desc, "CreationDateTime"), "ProvisionedThroughput", "ReadCapacityUnits",
        json_object_get(pt, "ReadCapacityUnits"), "WriteCapacityUnits",
        json_object_get(pt, "WriteCapacityUnits"), "ItemCount", (json_int_t)items, "BillingMode",
        billing_mode(desc));
    if (json_object_get(desc, "OnDemandThroughput"))
        json_object_set(source, "OnDemandThroughput", json_object_get(desc, "OnDemandThroughput"));
    json_t *features = json_object();
    json_t *lsis = index_defs(json_object_get(desc, "LocalSecondaryIndexes"), 0),
           *gsis = index_defs(json_object_get(desc, "GlobalSecondaryIndexes"), 1);
    if (lsis) json_object_set(features, "LocalSecondaryIndexes", lsis);
    if (gsis) json_object_set(features, "GlobalSecondaryIndexes", gsis);
    json_t *ss = json_object_get(desc, "StreamSpecification");
    if (ss) json_object_set(features, "StreamDescription", ss);
    json_t *ttl = json_object_get(desc, QR_TTL_FIELD);
    if (ttl) json_object_set(features, "TimeToLiveDescription", ttl);
    json_t *sse = json_object_get(desc, "SSEDescription");
    if (sse) json_object_set(features, "SSEDescription", sse);
    /* What CreateTable needs to make the table again. */
    json_t *create = json_pack(
        "{s:O,s:O,s:s}", "AttributeDefinitions", json_object_get(desc, "AttributeDefinitions"),
        "KeySchema", json_object_get(desc, "KeySchema"), "BillingMode", billing_mode(desc));
    if (strcmp(billing_mode(desc), "PROVISIONED") == 0)
        json_object_set_new(
            create, "ProvisionedThroughput",
            json_pack("{s:O,s:O}", "ReadCapacityUnits", json_object_get(pt, "ReadCapacityUnits"),
                      "WriteCapacityUnits", json_object_get(pt, "WriteCapacityUnits")));
    if (lsis) json_object_set_new(create, "LocalSecondaryIndexes", lsis);
    if (gsis) json_object_set_new(create, "GlobalSecondaryIndexes", gsis);
    /* The restored table is encrypted as the source was, with the same key. */
    if (sse && json_object_get(sse, "KMSMasterKeyArn"))
        json_object_set_new(create, "SSESpecification",
                            json_pack("{s:b,s:s,s:O}", "Enabled", 1, "SSEType", "KMS",
                                      "KMSMasterKeyId", json_object_get(sse, "KMSMasterKeyArn")));
    return json_pack("{s:o,s:o,s:o,s:o}", "BackupDetails", details, "SourceTableDetails", source,
                     "SourceTableFeatureDetails", features, "Create", create);
}

/* Takes a backup of t (released here) named name, of type USER or SYSTEM; *resp is
 * CreateBackup's answer. */
static int make_backup(qr_db *db, table *t, const char *name, const char *type, json_t **resp,
                       qr_err *err)
{
    uint32_t id = meta_backup_id_take(db);
    double now = ops_now_seconds();
    char arn[600];
    snprintf(arn, sizeof arn, ARN_REGION_ACCOUNT "%s/backup/%014lld-%08" PRIx32, table_name(t),
             (long long)(now * 1000), id);
    json_t *desc = table_description(t);
    int64_t items = 0, bytes = 0;
    const read_view *v = read_view_open(db);
    int rc = meta_backup_copy(db, t, v, id, &items, &bytes, err);
    read_view_close(db, v);
    catalog_release(db, t);
    json_t *rec = rc == 0 ? record_of(desc, arn, name, type, now, items, bytes) : NULL;
    json_decref(desc);
    if (rc == 0) rc = meta_backup_put(db, id, rec, err); /* the record last: then complete */
    if (rc) {
        qr_err ignored;
        err_init(&ignored);
        meta_backup_drop(db, id, &ignored);
        err_clear(&ignored);
        json_decref(rec);
        return -1;
    }
    /* As DynamoDB answers it: the backup is being made (DescribeBackup then finds it
     * AVAILABLE, as it already is). */
    json_t *details = json_deep_copy(json_object_get(rec, "BackupDetails"));
    json_object_set_new(details, "BackupStatus", json_string("CREATING"));
    *resp = json_pack("{s:o}", "BackupDetails", details);
    json_decref(rec);
    return 0;
}

int backup_deleted_table(qr_db *db, table *t, qr_err *err)
{
    char name[300];
    snprintf(name, sizeof name, "%s$DeletedTableBackup", table_name(t));
    json_t *answer = NULL;
    int rc = make_backup(db, t, name, "SYSTEM", &answer, err);
    json_decref(answer);
    return rc;
}

int op_create_backup(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    const char *name;
    /* BackupName's presence, length and pattern are judged by the shape checker. */
    if (param_string(req, "BackupName", &name, err)) return -1;
    json_t *tname = json_object_get(req, "TableName");
    if (param_check_table_name(tname, "tableName", err)) return -1;
    table *t = catalog_get(db, json_string_value(tname));
    if (t == NULL)
        return err_set(err, "TableNotFoundException", "Table not found: %s",
                       json_string_value(tname));
    return make_backup(db, t, name, "USER", &c->answer, err);
}

static json_t *description(const json_t *rec)
{
    return json_pack("{s:O,s:O,s:O}", "BackupDetails", json_object_get(rec, "BackupDetails"),
                     "SourceTableDetails", json_object_get(rec, "SourceTableDetails"),
                     "SourceTableFeatureDetails",
                     json_object_get(rec, "SourceTableFeatureDetails"));
}

int op_describe_backup(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *rec;
    uint32_t id;
    if (find(db, req, &rec, &id, err)) return -1;
    c->answer = json_pack("{s:o}", "BackupDescription", description(rec));
    json_decref(rec);
    return 0;
}

/* Whether a backup's record rec is a system backup past its expiry (then forgotten). */
static int expired(qr_db *db, uint32_t id, const json_t *rec)
{
    const json_t *until =
        json_object_get(json_object_get(rec, "BackupDetails"), "BackupExpiryDateTime");
    if (until == NULL || json_number_value(until) > ops_now_seconds()) return 0;
    qr_err ignored;
    err_init(&ignored);
    meta_backup_drop(db, id, &ignored);
    err_clear(&ignored);
    return 1;
}

int op_delete_backup(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *rec;
    uint32_t id;
    if (find(db, req, &rec, &id, err)) return -1;
    const json_t *details = json_object_get(rec, "BackupDetails");
    if (strcmp(json_string_value(json_object_get(details, "BackupType")), "SYSTEM") == 0) {
        /* DynamoDB keeps the backups it takes itself until they expire. */
        time_t until = (time_t)json_number_value(json_object_get(details, "BackupExpiryDateTime"));
        struct tm tm;
        char when[40];
        gmtime_r(&until, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        err_validation(
            err,
            "Invalid Request: User is not allowed to delete the system backup with arn %s. It will "
            "automatically expire on %s",
            json_string_value(json_object_get(details, "BackupArn")), when);
        json_decref(rec);
        return -1;
    }
    if (meta_backup_drop(db, id, err)) {
        json_decref(rec);
        return -1;
    }
    json_t *d = description(rec);
    json_object_set_new(json_object_get(d, "BackupDetails"), "BackupStatus",
                        json_string("DELETED"));
    c->answer = json_pack("{s:o}", "BackupDescription", d);
    json_decref(rec);
    return 0;
}

int op_list_backups(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    static const char *const types[] = {"USER", "SYSTEM", "AWS_BACKUP", "ALL", NULL};
    const char *table_name, *start, *type;
    long long limit = 100;
    int given;
    json_t *lower = json_object_get(req, "TimeRangeLowerBound"),
           *upper = json_object_get(req, "TimeRangeUpperBound");
    if (param_optional_table_name(req, &table_name, err) ||
        param_int(req, "Limit", 1, 100, &limit, &given, err) ||
        param_string(req, "ExclusiveStartBackupArn", &start, err) ||
        param_enum(req, "BackupType", types, "USER", &type, err))
        return -1;
    if ((lower && !json_is_number(lower)) || (upper && !json_is_number(upper)))
        return err_set(err, QR_E_SERIALIZATION,
                       "TimeRangeLowerBound and TimeRangeUpperBound must be timestamps");
    if (lower && upper && json_number_value(lower) > json_number_value(upper))
        return err_validation(err, QR_MSG_INVALID_PARAMETER "Time range lower bound must be less "
                                                            "than or equal to upper bound");
    /* ExclusiveStartBackupArn is a position: listing resumes after its backup, which need
     * not exist any more. */
    uint32_t after = 0;
    if (start) {
        arn_parts a;
        if (backup_arn(start, &a, &after, err)) return -1;
    }
    uint32_t last = meta_backup_id_peek(db), id = after;
    json_t *summaries = json_array(), *rec;
    int more = 0, found = 0;
    char last_arn[1100] = "";
    while (!more && (found = meta_backup_next(db, id, last, &id, &rec, err)) == 1) {
        if (expired(db, id, rec)) {
            json_decref(rec);
            continue;
        }
        json_t *d = json_object_get(rec, "BackupDetails"),
               *s = json_object_get(rec, "SourceTableDetails");
        double when = json_number_value(json_object_get(d, "BackupCreationDateTime"));
        /* The time range includes its lower bound and excludes its upper one. */
        int keep = (table_name == NULL ||
                    strcmp(json_string_value(json_object_get(s, "TableName")), table_name) == 0) &&
                   (strcmp(type, "ALL") == 0 ||
                    strcmp(type, json_string_value(json_object_get(d, "BackupType"))) == 0) &&
                   (lower == NULL || when >= json_number_value(lower)) &&
                   (upper == NULL || when < json_number_value(upper));
        if (keep && (long long)json_array_size(summaries) == limit)
            more = 1;
        else if (keep) {
            json_array_append_new(
                summaries,
                json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "TableName",
                          json_object_get(s, "TableName"), "TableId", json_object_get(s, "TableId"),
                          "TableArn", json_object_get(s, "TableArn"), "BackupArn",
                          json_object_get(d, "BackupArn"), "BackupName",
                          json_object_get(d, "BackupName"), "BackupCreationDateTime",
                          json_object_get(d, "BackupCreationDateTime"), "BackupStatus",
                          json_object_get(d, "BackupStatus"), "BackupType",
                          json_object_get(d, "BackupType"), "BackupSizeBytes",
                          json_object_get(d, "BackupSizeBytes")));
            snprintf(last_arn, sizeof last_arn, "%s",
                     json_string_value(json_object_get(d, "BackupArn")));
        }
        json_decref(rec);
    }
    if (!more && found < 0) {
        json_decref(summaries);
        return -1;
    }
    c->answer = json_pack("{s:o}", "BackupSummaries", summaries);
    if (more && last_arn[0])
        json_object_set_new(c->answer, "LastEvaluatedBackupArn", json_string(last_arn));
    return 0;
}

typedef struct restore_note {
    json_t *summary;
    json_t *unlimited; /* on-demand limits the restore sets to -1 (none) */
} restore_note;

/* Adds the -1 on-demand limits an override asked for to desc. */
static void set_unlimited(json_t *desc, const json_t *unlimited)
{
    if (json_object_size(unlimited) == 0) return;
    json_t *odt = json_object_get(desc, "OnDemandThroughput");
    if (odt == NULL) json_object_set_new(desc, "OnDemandThroughput", odt = json_object());
    json_object_update(odt, (json_t *)unlimited);
}

static int note_restore(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    (void)err;
    restore_note *n = arg;
    json_object_set(desc, "RestoreSummary", n->summary);
    set_unlimited(desc, n->unlimited);
    return 0;
}

/* Writes n items (parsed, sized and keyed) into t in one item transaction of the
 * engine's own. */
static int restore_chunk(qr_db *db, table *t, size_t n, json_t *const *items, const size_t *sizes,
                         const buf *keys, qr_err *err)
{
    table *tables[RESTORE_BATCH_ITEMS];
    for (size_t i = 0; i < n; i++)
        tables[i] = t;
    item_txn *x;
    if (txn_begin(db, TXN_BATCH | TXN_SYSTEM, n, tables, keys, &x, err)) return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = txn_put(x, i, items[i], sizes[i], err);
    if (rc == 0) rc = txn_commit(x, err);
    txn_end(x);
    return rc;
}

/* Writes the backup's items into table name, RESTORE_BATCH_ITEMS at a time, each checked
 * as PutItem checks an item. */
static int restore_items(qr_db *db, uint32_t id, const char *name, uint64_t total, qr_err *err)
{
    table *t = catalog_get(db, name);
    if (t == NULL) return err_set(err, QR_E_NOT_FOUND, QR_MSG_NOT_FOUND);
    meta_backup_items *it = meta_backup_items_open(db, id);
    json_t *items[RESTORE_BATCH_ITEMS];
    size_t sizes[RESTORE_BATCH_ITEMS];
    buf keys[RESTORE_BATCH_ITEMS];
    for (size_t i = 0; i < RESTORE_BATCH_ITEMS; i++)
        buf_init(&keys[i], 0);
    char what[300];
    snprintf(what, sizeof what, "restore of %s", name);
    progress meter;
    progress_start(&meter, what, total, progress_now(), engine_progress_sink, db);
    uint64_t written = 0;
    int rc = 0, more = 1;
    while (rc == 0 && more) {
        size_t n = 0;
        while (rc == 0 && n < RESTORE_BATCH_ITEMS) {
            const char *json;
            size_t len;
            int got = meta_backup_items_next(it, &json, &len, err);
            if (got <= 0) {
                rc = got;
                more = 0;
                break;
            }
            json_t *item = json_read(json, len, JSON_ALLOW_NUL, NULL);
            if (item == NULL) {
                rc = err_set(err, QR_E_INTERNAL, "an item of the backup cannot be decoded");
                break;
            }
            buf_reset(&keys[n]);
            if (key_check_item(t, item, err) || item_validate_size(item, &sizes[n], err) ||
                key_item(&keys[n], t, item, err)) {
                json_decref(item);
                rc = -1;
                break;
            }
            items[n++] = item;
        }
        if (rc == 0 && n > 0) rc = restore_chunk(db, t, n, items, sizes, keys, err);
        for (size_t i = 0; i < n; i++)
            json_decref(items[i]);
        if (rc == 0) progress_update(&meter, written += n, progress_now());
    }
    if (rc == 0) progress_finish(&meter, progress_now());
    meta_backup_items_close(it);
    for (size_t i = 0; i < RESTORE_BATCH_ITEMS; i++)
        buf_free(&keys[i]);
    catalog_release_after_writes(t);
    return rc;
}

/* Checks a restore's overrides against the backup as DynamoDB does: throughput goes with
 * provisioned billing only, provisioned billing needs it (for the table and for each
 * index), and an index override may only name an index the source had. */
static int check_overrides(json_t *req, const json_t *rec, qr_err *err)
{
    json_t *mode = json_object_get(req, "BillingModeOverride"),
           *pt = json_object_get(req, "ProvisionedThroughputOverride"),
           *gsis = json_object_get(req, "GlobalSecondaryIndexOverride"),
           *lsis = json_object_get(req, "LocalSecondaryIndexOverride");
    const char *was =
        json_string_value(json_object_get(json_object_get(rec, "Create"), "BillingMode"));
    const char *will = json_is_string(mode) ? json_string_value(mode) : was;
    int provisioned = will && strcmp(will, "PROVISIONED") == 0;
    if (pt && json_is_string(mode) && !provisioned)
        return err_validation(
            err,
            "Invalid Request: Cannot override ProvisionedThroughput if BillingMode is overridden "
            "to PAY_PER_REQUEST");
    if (pt && !provisioned)
        return err_validation(
            err, "Invalid Request: Cannot override ProvisionedThroughput unless BillingMode is "
                 "PROVISIONED");
    int switching = provisioned && was && strcmp(was, "PROVISIONED") != 0;
    if (switching && pt == NULL)
        return err_validation(
            err,
            "Invalid Request: Must override ProvisionedThroughput if BillingMode is overridden "
            "to PROVISIONED");
    const json_t *features = json_object_get(rec, "SourceTableFeatureDetails");
    const json_t *lists[2] = {gsis, lsis};
    const char *kinds[2] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};
    for (int k = 0; k < 2; k++) {
        size_t i, j;
        json_t *o, *src;
        json_array_foreach(lists[k], i, o)
        {
            const char *name = json_string_value(json_object_get(o, "IndexName"));
            int found = 0;
            json_array_foreach(
                json_object_get(features, kinds[k]), j,
                src) if (name &&
                         strcmp(name, json_string_value(json_object_get(src, "IndexName"))) == 0)
                found = 1;
            if (name && !found)
                return err_validation(
                    err,
                    "Invalid Request: Index %s does not match a secondary index that existed "
                    "in the source table and cannot be created during the restore operation",
                    name);
        }
    }
    if (switching && gsis == NULL) {
        size_t i;
        json_t *g;
        json_array_foreach(
            json_object_get(features, "GlobalSecondaryIndexes"), i,
            g) return err_validation(err,
                                     "Invalid Request: Must specify provisioned throughput for "
                                     "index %s",
                                     json_string_value(json_object_get(g, "IndexName")));
    }
    return 0;
}

/* The on-demand override's limits, judged before the backup is looked up, in DynamoDB's
 * words: each -1 (none) or at least 1. */
static int check_on_demand_override(const json_t *req, qr_err *err)
{
    static const char *const limits[] = {"MaxReadRequestUnits", "MaxWriteRequestUnits"};
    const json_t *odt = json_object_get(req, "OnDemandThroughputOverride");
    for (int i = 0; odt && i < 2; i++) {
        json_t *v = json_object_get(odt, limits[i]);
        if (json_is_integer(v) && json_integer_value(v) < 1 && json_integer_value(v) != -1)
            return err_validation(
                err,
                "Invalid Request: Requested %s for OnDemandThroughput is outside of valid "
                "range",
                limits[i]);
    }
    return 0;
}

void restore_abandon(qr_db *db, const char *name)
{
    table *t = catalog_get(db, name);
    qr_err ignored;
    err_init(&ignored);
    if (t) {
        catalog_delete(db, t, &ignored);
        catalog_release(db, t);
    }
    err_clear(&ignored);
}

int restore_check_request(const json_t *req, json_t **target, qr_err *err)
{
    *target = json_object_get(req, "TargetTableName"); /* required, its length judged */
    return param_check_table_name(*target, "targetTableName", err) ||
           check_on_demand_override(req, err);
}

int op_restore_table_from_backup(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *target;
    if (restore_check_request(req, &target, err)) return -1;
    json_t *rec;
    uint32_t id;
    if (find(db, req, &rec, &id, err)) return -1;
    const char *name = json_string_value(target);
    table *existing = catalog_get(db, name);
    if (existing) {
        catalog_release(db, existing);
        json_decref(rec);
        return err_set(err, "TableAlreadyExistsException", QR_MSG_TABLE_EXISTS, name);
    }
    if (check_overrides(req, rec, err)) {
        json_decref(rec);
        return -1;
    }
    /* CreateTable's request from the backup, with the overrides the restore asks for. */
    json_t *create = json_deep_copy(json_object_get(rec, "Create"));
    json_object_set(create, "TableName", target);
    static const struct {
        const char *override, *param;
    } overrides[] = {{"BillingModeOverride", "BillingMode"},
                     {"ProvisionedThroughputOverride", "ProvisionedThroughput"},
                     {"GlobalSecondaryIndexOverride", "GlobalSecondaryIndexes"},
                     {"LocalSecondaryIndexOverride", "LocalSecondaryIndexes"},
                     {"SSESpecificationOverride", "SSESpecification"},
                     {"OnDemandThroughputOverride", "OnDemandThroughput"}};
    for (size_t i = 0; i < sizeof overrides / sizeof overrides[0]; i++) {
        json_t *v = json_object_get(req, overrides[i].override);
        /* An empty on-demand override leaves the limits as the backup had them. */
        if (v && !(i == sizeof overrides / sizeof overrides[0] - 1 && json_object_size(v) == 0))
            json_object_set(create, overrides[i].param, v);
    }
    /* On demand, the source's provisioned throughput (table and indexes) no longer applies. */
    if (json_is_string(json_object_get(create, "BillingMode")) &&
        strcmp(json_string_value(json_object_get(create, "BillingMode")), "PAY_PER_REQUEST") == 0) {
        if (json_object_get(req, "ProvisionedThroughputOverride") == NULL)
            json_object_del(create, "ProvisionedThroughput");
        if (json_object_get(req, "GlobalSecondaryIndexOverride") == NULL) {
            size_t i;
            json_t *g;
            json_array_foreach(json_object_get(create, "GlobalSecondaryIndexes"), i, g)
                json_object_del(g, "ProvisionedThroughput");
        }
    }
    /* CreateTable refuses an on-demand limit of -1 (none), which a restore's override
     * keeps: such limits are set once the table exists. */
    json_t *unlimited = json_object(), *odt = json_object_get(create, "OnDemandThroughput");
    const char *member;
    json_t *units;
    void *next;
    json_object_foreach_safe(odt, next, member, units)
    {
        if (json_integer_value(units) != -1) continue;
        json_object_set(unlimited, member, units);
        json_object_del(odt, member);
    }
    if (odt && json_object_size(odt) == 0) json_object_del(create, "OnDemandThroughput");
    json_t *created = NULL;
    int rc = op_run(db, op_create_table, create, &created, err);
    json_decref(create);
    if (rc) {
        json_decref(unlimited);
        json_decref(rec);
        return -1;
    }
    const json_t *source = json_object_get(rec, "SourceTableDetails");
    json_t *summary = json_pack(
        "{s:O,s:O,s:f,s:b}", "SourceBackupArn",
        json_object_get(json_object_get(rec, "BackupDetails"), "BackupArn"), "SourceTableArn",
        json_object_get(source, "TableArn"), "RestoreDateTime",
        json_number_value(json_object_get(json_object_get(rec, "BackupDetails"),
                                          "BackupCreationDateTime")), /* the backup's time */
        "RestoreInProgress", 0);
    json_int_t total = json_integer_value(json_object_get(source, "ItemCount"));
    rc = restore_items(db, id, name, total > 0 ? (uint64_t)total : 0, err);
    /* A restored table is ACTIVE with its global indexes complete, as DynamoDB's is once
     * the restore ends: the items' index entries are applied before the answer. */
    if (rc == 0) propagate_drain(db, RESTORE_INDEX_WAIT_MS);
    restore_note note = {summary, unlimited};
    if (rc == 0) rc = catalog_change_schema(db, name, note_restore, &note, err);
    if (rc) {
        restore_abandon(db, name);
        json_decref(summary);
        json_decref(unlimited);
        json_decref(created);
        json_decref(rec);
        return -1;
    }
    /* The answer is the table as CreateTable made it, restore under way, as DynamoDB
     * answers; DescribeTable then shows it restored. */
    json_t *desc = json_object_get(created, "TableDescription"), *answer = json_deep_copy(summary);
    json_object_set_new(answer, "RestoreInProgress", json_true());
    json_object_set_new(desc, "RestoreSummary", answer);
    set_unlimited(desc, unlimited);
    json_decref(unlimited);
    json_decref(summary);
    c->answer = created;
    json_decref(rec);
    return 0;
}
