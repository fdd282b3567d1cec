/* tables.c — CreateTable, DescribeTable, ListTables, DeleteTable, UpdateTable.
 *
 * A table's description is kept as the TableDescription object DynamoDB returns, so
 * DescribeTable serves it with the current status and statistics filled in. Tables are
 * ready as soon as CreateTable returns: its response says CREATING, as DynamoDB's does,
 * and the next DescribeTable says ACTIVE. */
#include <sys/random.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ops/ops.h"
#include "ops/warm.h"

#define MAX_PROVISIONED 40000000000LL
/* The per-table quota DescribeLimits reports: capacity units, and on-demand limits. */
#define TABLE_MAX_UNITS 40000LL
/* After this many capacity decreases in a UTC day, one more an hour. */
#define DECREASES_A_DAY 4
/* TableClass may change this often in CLASS_WINDOW seconds (30 days). */
#define CLASS_CHANGES 2
#define CLASS_WINDOW (30.0 * 86400.0)
/* When the table's class changed (a list of times), kept apart from what DynamoDB
 * describes. */
#define CLASS_CHANGES_FIELD "QuarryTableClassChanges"

/* See ops.h. */
double ops_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1000.0;
}

static json_t *new_uuid(void)
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) memset(b, 0x5a, sizeof b);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    char s[37];
    snprintf(s, sizeof s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return json_string(s);
}

/* Checks that AttributeDefinitions names no attribute twice (each definition's members
 * are the shape checker's). */
static int check_attribute_definitions(json_t *defs, qr_err *err)
{
    size_t i, j;
    json_t *d;
    json_array_foreach(defs, i, d)
    {
        json_t *name = json_object_get(d, "AttributeName");
        for (j = 0; j < i; j++)
            if (json_equal(json_object_get(json_array_get(defs, j), "AttributeName"), name))
                return err_validation(err, "Attribute Name is duplicated: %s",
                                      json_string_value(name));
    }
    return 0;
}

/* Checks AttributeDefinitions and KeySchema against each other (their members, and the
 * key schema's size, are the shape checker's); returns the pk/sk names through the schema
 * itself (the caller copies both arrays into the description). */
static int check_key_schema(json_t *defs, json_t *ks, qr_err *err)
{
    if (check_attribute_definitions(defs, err)) return -1;
    size_t i, j;
    json_t *d, *k;
    json_array_foreach(ks, i, k)
    {
        json_t *name = json_object_get(k, "AttributeName");
        const char *ts = json_string_value(json_object_get(k, "KeyType"));
        if (ts == NULL) ts = ""; /* (a request made here, by op_run, is not shape-checked) */
        if (i == 0 && strcmp(ts, "HASH"))
            return err_validation(
                err, "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
        if (i == 1 && strcmp(ts, "RANGE"))
            return err_validation(
                err, "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
        if (i == 1 && json_equal(name, json_object_get(json_array_get(ks, 0), "AttributeName")))
            return err_validation(err,
                                  "Invalid KeySchema: Some index key attribute have no definition");
        if (json_array_size(defs) == 0)
            return err_validation(err,
                                  "Invalid KeySchema: Some index key attribute have no definition");
        int defined = 0;
        json_array_foreach(defs, j, d) defined |=
            json_equal(json_object_get(d, "AttributeName"), name);
        if (!defined) {
            char names[512];
            index_definition_names(defs, names, sizeof names);
            return err_validation(
                err,
                QR_MSG_INVALID_PARAMETER
                "Some index key attributes are not "
                "defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]",
                json_string_value(name), names);
        }
    }
    return 0;
}

/* Reads a ProvisionedThroughput object: both units, up to the account limit (their types
 * and minimum are the shape checker's). field names it in messages
 * ("provisionedThroughput"): an index update's capacity without either unit is refused
 * here, naming both, the write units first. */
static int read_throughput(json_t *pt, const char *field, long long *rcu, long long *wcu,
                           qr_err *err)
{
    static const char *const members[2] = {"WriteCapacityUnits", "ReadCapacityUnits"};
    static const char *const names[2] = {"writeCapacityUnits", "readCapacityUnits"};
    long long *out[2] = {wcu, rcu};
    char found[2][400];
    int n = 0;
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(pt, members[i]);
        *out[i] = json_integer_value(v);
        char path[160];
        snprintf(path, sizeof path, "%s.%s", field, names[i]);
        if (v == NULL || json_is_null(v))
            err_violation_text(found[n++], sizeof found[0], NULL, path, QR_MSG_NOT_NULL);
    }
    if (n == 1) return err_validation(err, "1 validation error detected: %s", found[0]);
    if (n == 2)
        return err_validation(err, "2 validation errors detected: %s; %s", found[0], found[1]);
    if (*rcu > MAX_PROVISIONED || *wcu > MAX_PROVISIONED)
        return err_set(err, QR_E_LIMIT,
                       "Subscriber limit exceeded: Provisioned throughput for the table exceeds "
                       "the account limit");
    return 0;
}

/* A time as DynamoDB writes it in its decrease messages. */
static void utc_text(double when, char *out, size_t cap)
{
    time_t t = (time_t)when;
    struct tm tm;
    gmtime_r(&t, &tm);
    if (strftime(out, cap, "%A, %B %-d, %Y at %-I:%M:%S %p Coordinated Universal Time", &tm) == 0 &&
        cap)
        out[0] = '\0';
}

/* Records a capacity decrease in thr (a ProvisionedThroughput description): four a UTC
 * day, then one an hour after the last. */
static int note_decrease(json_t *thr, double now, qr_err *err)
{
    json_t *last = json_object_get(thr, "LastDecreaseDateTime");
    json_int_t count = json_integer_value(json_object_get(thr, "NumberOfDecreasesToday"));
    if (last == NULL || (long long)(json_number_value(last) / 86400) != (long long)(now / 86400))
        count = 0;
    if (count >= DECREASES_A_DAY && now < json_number_value(last) + 3600) {
        char at[96], next[96];
        utc_text(json_number_value(last), at, sizeof at);
        utc_text(json_number_value(last) + 3600, next, sizeof next);
        return err_set(
            err, QR_E_LIMIT,
            "Subscriber limit exceeded: Provisioned throughput decreases are limited "
            "within a given UTC day. After the first %d decreases, each subsequent "
            "decrease in the same UTC day can be performed at most once every 3600 "
            "seconds. Number of decreases today: %lld. Last decrease at %s. Next decrease "
            "can be made at %s",
            DECREASES_A_DAY, (long long)count, at, next);
    }
    json_object_set_new(thr, "LastDecreaseDateTime", json_real(now));
    json_object_set_new(thr, "NumberOfDecreasesToday", json_integer(count + 1));
    return 0;
}

/* A decrease count from an earlier UTC day reads 0. */
static void forget_old_decreases(json_t *thr, double now)
{
    json_t *last = json_object_get(thr, "LastDecreaseDateTime");
    if (last && (long long)(json_number_value(last) / 86400) != (long long)(now / 86400))
        json_object_set_new(thr, "NumberOfDecreasesToday", json_integer(0));
}

/* Refuses a table capacity above the per-table quota. */
static int check_table_quota(long long rcu, long long wcu, qr_err *err)
{
    if (rcu <= TABLE_MAX_UNITS && wcu <= TABLE_MAX_UNITS) return 0;
    return err_set(
        err, QR_E_LIMIT,
        "The requested %s, %lld, is above the per table maximum for the account in %s. "
        "Per table maximum: %lld. Refer to the Amazon DynamoDB Developer Guide for current "
        "limits and how to request higher limits.",
        rcu > TABLE_MAX_UNITS ? "ReadCapacityUnits" : "WriteCapacityUnits",
        rcu > TABLE_MAX_UNITS ? rcu : wcu, ops_request_region(), TABLE_MAX_UNITS);
}

/* Reads BillingMode and ProvisionedThroughput into the description. */
static int apply_billing(json_t *req, json_t *desc, int creating, double now, qr_err *err)
{
    static const char *const modes[] = {"PROVISIONED", "PAY_PER_REQUEST", NULL};
    const char *mode;
    json_t *pt;
    json_t *old = json_object_get(json_object_get(desc, "BillingModeSummary"), "BillingMode");
    const char *current = old ? json_string_value(old) : "PROVISIONED";
    if (param_enum(req, "BillingMode", modes, creating ? "PROVISIONED" : current, &mode, err))
        return -1;
    if (param_object(req, "ProvisionedThroughput", &pt, err)) return -1;
    long long rcu = 0, wcu = 0;
    if (pt && read_throughput(pt, "provisionedThroughput", &rcu, &wcu, err)) return -1;
    int asked = json_object_get(req, "BillingMode") != NULL;
    if (strcmp(mode, "PROVISIONED") == 0) {
        if (pt == NULL && creating)
            return err_validation(
                err, QR_MSG_INVALID_PARAMETER
                "ReadCapacityUnits and "
                "WriteCapacityUnits must both be specified when BillingMode is PROVISIONED");
        /* Even on a provisioned table, BillingMode=PROVISIONED comes with its capacity. */
        if (pt == NULL && (asked || strcmp(current, "PROVISIONED") != 0))
            return err_validation(err, QR_MSG_INVALID_PARAMETER
                                  "ProvisionedThroughput must be "
                                  "specified when BillingMode is PROVISIONED");
    } else if (pt && !creating && asked && strcmp(current, "PROVISIONED") == 0) {
        return err_validation(err, QR_MSG_INVALID_PARAMETER
                              "ProvisionedThroughput cannot be "
                              "specified when BillingMode is PAY_PER_REQUEST");
    } else if (pt) {
        return err_validation(
            err, QR_MSG_INVALID_PARAMETER
            "Neither ReadCapacityUnits nor "
            "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
    }
    if (pt && check_table_quota(rcu, wcu, err)) return -1;
    json_t *thr = json_object_get(desc, "ProvisionedThroughput");
    if (thr == NULL) {
        thr = json_pack("{s:i,s:i,s:i}", "NumberOfDecreasesToday", 0, "ReadCapacityUnits", 0,
                        "WriteCapacityUnits", 0);
        json_object_set_new(desc, "ProvisionedThroughput", thr);
    }
    if (strcmp(mode, "PAY_PER_REQUEST") == 0) {
        json_object_set_new(thr, "ReadCapacityUnits", json_integer(0));
        json_object_set_new(thr, "WriteCapacityUnits", json_integer(0));
        if (strcmp(current, "PAY_PER_REQUEST") != 0 || creating)
            json_object_set_new(desc, "BillingModeSummary",
                                json_pack("{s:s,s:f}", "BillingMode", "PAY_PER_REQUEST",
                                          "LastUpdateToPayPerRequestDateTime", now));
    } else {
        if (pt) {
            long long old_r = json_integer_value(json_object_get(thr, "ReadCapacityUnits"));
            long long old_w = json_integer_value(json_object_get(thr, "WriteCapacityUnits"));
            if (!creating && strcmp(current, "PROVISIONED") == 0 && rcu == old_r && wcu == old_w)
                return err_validation(
                    err,
                    "The provisioned throughput for the table will not change. The requested "
                    "value equals the current value. Current ReadCapacityUnits provisioned "
                    "for the table: %lld. Requested ReadCapacityUnits: %lld. Current "
                    "WriteCapacityUnits provisioned for the table: %lld. Requested "
                    "WriteCapacityUnits: %lld. Refer to the Amazon DynamoDB Developer Guide "
                    "for current limits and how to request higher limits.",
                    old_r, rcu, old_w, wcu);
            if (!creating && (rcu > old_r || wcu > old_w))
                json_object_set_new(thr, "LastIncreaseDateTime", json_real(now));
            if (!creating && (rcu < old_r || wcu < old_w) && note_decrease(thr, now, err))
                return -1;
            json_object_set_new(thr, "ReadCapacityUnits", json_integer(rcu));
            json_object_set_new(thr, "WriteCapacityUnits", json_integer(wcu));
        }
        if (creating) {
            json_object_del(desc, "BillingModeSummary");
        } else if (strcmp(current, "PROVISIONED") != 0) {
            /* The summary keeps the time of the last switch to on-demand; the on-demand
             * limits of the table and its indexes go. */
            json_object_set_new(json_object_get(desc, "BillingModeSummary"), "BillingMode",
                                json_string("PROVISIONED"));
            json_object_del(desc, "OnDemandThroughput");
            size_t i;
            json_t *g;
            json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
                json_object_del(g, "OnDemandThroughput");
        }
    }
    return 0;
}

/* Reads StreamSpecification into the description. Enabling gives the table a new stream
 * (a table may have one enabled stream at a time, and its view type cannot change in
 * place); disabling closes it, and a disabled stream is not described at all. creating
 * is set for CreateTable, where a disabled specification simply asks for no stream. */
static int apply_stream_spec(qr_db *db, json_t *req, json_t *desc, int creating, double now,
                             qr_err *err)
{
    json_t *ss;
    if (param_object(req, "StreamSpecification", &ss, err)) return -1;
    if (ss == NULL) return 0;
    /* (StreamEnabled's presence and the view type's enum are the shape checker's) */
    json_t *enabled = json_object_get(ss, "StreamEnabled");
    const char *name = json_string_value(json_object_get(desc, "TableName"));
    int has = json_object_get(desc, QR_STREAM_FIELD) != NULL;
    const char *type = json_string_value(json_object_get(ss, "StreamViewType"));
    if (json_is_false(enabled)) {
        /* DynamoDB's messages call the view type UpdateViewType. */
        if (type)
            return err_validation(
                err, creating ? QR_MSG_INVALID_PARAMETER
                         "Table is being created "
                         "with a stream disabled, UpdateViewType should not be specified"
                              : QR_MSG_INVALID_PARAMETER
                         "If stream is being "
                         "disabled, then UpdateViewType must not be specified");
        if (!creating && !has)
            return err_validation(err, "Table has no stream to disable: TableName: %s", name);
        json_object_del(desc, QR_STREAM_FIELD);
        json_object_del(desc, "StreamSpecification");
        return 0;
    }
    if (type == NULL)
        return err_validation(
            err, creating ? QR_MSG_INVALID_PARAMETER "Table is being created with "
                                                     "a stream enabled, UpdateViewType is required"
                          : QR_MSG_INVALID_PARAMETER "If stream is being enabled "
                                                     "then UpdateViewType is required");
    if (has) return err_validation(err, "Table already has an enabled stream: TableName: %s", name);
    json_object_set_new(desc, "StreamSpecification",
                        json_pack("{s:b,s:s}", "StreamEnabled", 1, "StreamViewType", type));
    stream_describe_new(db, desc, type, now);
    return 0;
}

/* Reads SSESpecification into SSEDescription, as DynamoDB describes it: a table
 * encrypted with a KMS key (Enabled, or SSEType KMS alone) is ENABLED with that key's
 * ARN (the key DynamoDB manages unless KMSMasterKeyId names one); one with the AWS owned
 * key has no description. UpdateTable (creating unset) refuses to turn the AWS owned key
 * on again for a table that has it already. */
static int apply_sse(json_t *req, json_t *desc, int creating, qr_err *err)
{
    static const char pre[] = QR_MSG_INVALID_PARAMETER;
    json_t *sse;
    if (param_object(req, "SSESpecification", &sse, err)) return -1;
    if (sse == NULL) return 0;
    const char *type, *key; /* (their constraints are the shape checker's) */
    json_t *enabled = json_object_get(sse, "Enabled");
    if (param_string(sse, "SSEType", &type, err) || param_string(sse, "KMSMasterKeyId", &key, err))
        return -1;
    /* SSEType KMS alone asks for KMS encryption; Enabled false asks for the AWS owned key. */
    int on = json_is_true(enabled) ||
             ((enabled == NULL || json_is_null(enabled)) && type && strcmp(type, "KMS") == 0);
    if (json_is_false(enabled) && type)
        return err_validation(err, "%sSSEType can not be specified if Enabled is false", pre);
    if (json_is_false(enabled) && key)
        return err_validation(err, "%sKMSMasterKeyId can not be specified if Enabled is false",
                              pre);
    if (on && type && strcmp(type, "AES256") == 0)
        return err_validation(err, "%sSSEType AES256 is not supported", pre);
    if (on && key && type == NULL)
        return err_validation(err, "%sSSEType KMS is required if KMSMasterKeyId is specified", pre);
    if (!on) {
        if (!creating && json_object_get(desc, "SSEDescription") == NULL)
            return err_validation(err, "%sTable is already encrypted by default", pre);
        json_object_del(desc, "SSEDescription");
        return 0;
    }
    char arn[512];
    if (key && strncmp(key, "arn:", 4) == 0)
        snprintf(arn, sizeof arn, "%s", key);
    else
        snprintf(arn, sizeof arn, "arn:aws:kms:ddblocal:000000000000:key/%s",
                 key ? key : "aws/dynamodb");
    json_object_set_new(
        desc, "SSEDescription",
        json_pack("{s:s,s:s,s:s}", "Status", "ENABLED", "SSEType", "KMS", "KMSMasterKeyArn", arn));
    return 0;
}

/* Reads TableClass into TableClassSummary. A table whose class was never given has no
 * summary (STANDARD); UpdateTable also records when the class changed. */
static int apply_table_class(json_t *req, json_t *desc, int creating, double now, qr_err *err)
{
    const char *cls;
    if (param_string(req, "TableClass", &cls, err)) return -1;
    if (cls == NULL) return 0; /* (its enum is the shape checker's, in DynamoDB's words) */
    /* STANDARD on a table that never had a class changes nothing. */
    if (!creating && strcmp(cls, "STANDARD") == 0 &&
        json_object_get(desc, "TableClassSummary") == NULL)
        return 0;
    const char *was = json_string_value(
        json_object_get(json_object_get(desc, "TableClassSummary"), "TableClass"));
    if (!creating && strcmp(cls, was ? was : "STANDARD") != 0) {
        /* A class change counts against its 30-day quota. */
        json_t *times = json_object_get(desc, CLASS_CHANGES_FIELD), *recent = json_array();
        size_t i;
        json_t *when;
        json_array_foreach(times, i, when) if (json_number_value(when) > now - CLASS_WINDOW)
            json_array_append(recent, when);
        if (json_array_size(recent) >= CLASS_CHANGES) {
            json_decref(recent);
            return err_set(err, QR_E_LIMIT,
                           "Subscriber limit exceeded: Updates to TableClass are limited to %d "
                           "times in 30 day(s).",
                           CLASS_CHANGES);
        }
        json_array_append_new(recent, json_real(now));
        json_object_set_new(desc, CLASS_CHANGES_FIELD, recent);
    }
    json_t *summary = json_pack("{s:s}", "TableClass", cls);
    if (!creating) json_object_set_new(summary, "LastUpdateDateTime", json_real(now));
    json_object_set_new(desc, "TableClassSummary", summary);
    return 0;
}

/* Reads OnDemandThroughput (the most request units a second the table may use) from
 * holder (a request, or an index's definition or Update) into target (the table's or an
 * index's description). Each limit is a positive number or -1 (no limit); UpdateTable
 * clears one with -1, which leaves the description (and the whole member once both are
 * clear), and changes only the members it gives. An empty object asks for nothing. Limits belong to
 * on-demand tables: provisioned is set for a provisioned one. index names the index
 * (NULL for the table). */
static int apply_on_demand(json_t *holder, json_t *target, int creating, int provisioned,
                           const char *index, qr_err *err)
{
    json_t *odt;
    if (param_object(holder, "OnDemandThroughput", &odt, err)) return -1;
    if (odt == NULL || json_object_size(odt) == 0) return 0;
    static const char *const members[] = {"MaxReadRequestUnits", "MaxWriteRequestUnits"};
    static const char pre[] = QR_MSG_INVALID_PARAMETER;
    int given[2]; /* (their types are the shape checker's) */
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(odt, members[i]);
        given[i] = v != NULL && !json_is_null(v);
    }
    for (int i = 0; i < 2; i++) {
        if (!given[i] || !provisioned) continue;
        if (index)
            return err_validation(
                err,
                "%s%s for OnDemandThroughput for index: %s cannot be specified when table "
                "BillingMode is PROVISIONED.",
                pre, members[i], index);
        return err_validation(
            err,
            "%s%s for OnDemandThroughput cannot be specified when %s BillingMode is "
            "PROVISIONED%s",
            pre, members[i], creating ? "table" : "the table", creating ? "." : "");
    }
    for (int i = 0; i < 2; i++) {
        json_int_t units = json_integer_value(json_object_get(odt, members[i]));
        /* -1 (no limit) clears a limit; CreateTable has none to clear and refuses it
         * (DDB-TABLE-051, DDB-TABLE-128). */
        if (!given[i] || units > 0 || (units == -1 && !creating)) continue;
        if (index)
            return err_validation(
                err,
                "%sRequested %s for OnDemandThroughput for index : %s is outside of valid "
                "range",
                pre, members[i], index);
        return err_validation(
            err, "%sRequested %s for OnDemandThroughput for table is outside of valid range", pre,
            members[i]);
    }
    for (int i = 0; i < 2; i++) {
        json_int_t units = json_integer_value(json_object_get(odt, members[i]));
        if (!given[i] || units <= TABLE_MAX_UNITS) continue;
        char what[300];
        if (index)
            snprintf(what, sizeof what, "index : %s", index);
        else
            snprintf(what, sizeof what, "table");
        return err_set(
            err, QR_E_LIMIT,
            "Subscriber limit exceeded: Requested %s for OnDemandThroughput for %s exceeds "
            "TableMax%sCapacityUnits of the account in region %s",
            members[i], what, i == 0 ? "Read" : "Write", ops_request_region());
    }
    json_t *cur = json_object_get(target, "OnDemandThroughput");
    json_t *next = cur ? json_deep_copy(cur) : json_object();
    for (int i = 0; i < 2; i++) {
        if (!given[i]) continue;
        json_int_t units = json_integer_value(json_object_get(odt, members[i]));
        if (units == -1 && !creating)
            json_object_del(next, members[i]);
        else
            json_object_set_new(next, members[i], json_integer(units));
    }
    if (json_object_size(next) == 0) {
        json_decref(next);
        json_object_del(target, "OnDemandThroughput");
    } else {
        json_object_set_new(target, "OnDemandThroughput", next);
    }
    return 0;
}

/* The description of one index as CreateTable (creating) or UpdateTable defines it. */
static json_t *index_description(json_t *def, const char *table_arn, int global, int provisioned,
                                 int creating, qr_err *err)
{
    const char *name = json_string_value(json_object_get(def, "IndexName"));
    /* Copies, not the request's own objects: a description outlives its request and is
     * read by other threads (the backfill) while the request is freed. */
    json_t *d = json_pack("{s:s,s:o,s:o,s:i,s:i}", "IndexName", name, "KeySchema",
                          json_deep_copy(json_object_get(def, "KeySchema")), "Projection",
                          json_deep_copy(json_object_get(def, "Projection")), "IndexSizeBytes", 0,
                          "ItemCount", 0);
    char arn[800];
    snprintf(arn, sizeof arn, "%s/index/%s", table_arn, name);
    json_object_set_new(d, "IndexArn", json_string(arn));
    if (global) {
        json_object_set_new(d, "IndexStatus", json_string("ACTIVE"));
        json_t *pt = json_object_get(def, "ProvisionedThroughput");
        /* CreateTable and UpdateTable word these two differently. */
        if (provisioned && pt == NULL) {
            json_decref(d);
            err_validation(err, QR_MSG_INVALID_PARAMETER "ProvisionedThroughput %s for index: %s",
                           creating ? "is not specified" : "must be specified", name);
            return NULL;
        }
        if (!provisioned && pt) {
            json_decref(d);
            if (creating)
                err_validation(err,
                               QR_MSG_INVALID_PARAMETER
                               "ProvisionedThroughput "
                               "should not be "
                               "specified for index: %s when BillingMode is PAY_PER_REQUEST",
                               name);
            else
                err_validation(
                    err,
                    QR_MSG_INVALID_PARAMETER
                    "Neither ReadCapacityUnits nor "
                    "WriteCapacityUnits can be specified for index: %s when BillingMode is "
                    "PAY_PER_REQUEST",
                    name);
            return NULL;
        }
        long long r = 0, w = 0;
        if (pt && read_throughput(pt, "globalSecondaryIndexes.member.provisionedThroughput", &r, &w,
                                  err)) {
            json_decref(d);
            return NULL;
        }
        json_object_set_new(d, "ProvisionedThroughput",
                            json_pack("{s:i,s:I,s:I}", "NumberOfDecreasesToday", 0,
                                      "ReadCapacityUnits", (json_int_t)r, "WriteCapacityUnits",
                                      (json_int_t)w));
        if (apply_on_demand(def, d, 1, provisioned, name, err)) {
            json_decref(d);
            return NULL;
        }
    }
    return d;
}

static json_t *find_gsi(json_t *desc, const char *name, size_t *pos);

static int is_provisioned(json_t *desc)
{
    json_t *mode = json_object_get(json_object_get(desc, "BillingModeSummary"), "BillingMode");
    return mode == NULL || strcmp(json_string_value(mode), "PROVISIONED") == 0;
}

static int describe_indexes(json_t *req, json_t *desc, const char *table_arn, qr_err *err)
{
    const char *lists[2] = {"LocalSecondaryIndexes", "GlobalSecondaryIndexes"};
    for (int g = 0; g < 2; g++) {
        json_t *defs = json_object_get(req, lists[g]);
        if (json_array_size(defs) == 0) continue;
        json_t *out = json_array();
        size_t i;
        json_t *def;
        json_array_foreach(defs, i, def)
        {
            json_t *d = index_description(def, table_arn, g, is_provisioned(desc), 1, err);
            if (d == NULL) {
                json_decref(out);
                return -1;
            }
            json_array_append_new(out, d);
        }
        json_object_set_new(desc, lists[g], out);
    }
    return 0;
}

/* The warm throughput of a new table and of its global indexes: their baselines, raised
 * where the request asks. */
static int create_warm(json_t *req, json_t *desc, qr_err *err)
{
    warm_follow_capacity(desc);
    int provisioned = is_provisioned(desc);
    if (warm_apply(json_object_get(req, "WarmThroughput"), desc, 1, provisioned, NULL,
                   "warmThroughput", err))
        return -1;
    size_t i;
    json_t *def;
    json_array_foreach(json_object_get(req, "GlobalSecondaryIndexes"), i, def)
    {
        const char *name = json_string_value(json_object_get(def, "IndexName"));
        json_t *gsi = name ? find_gsi(desc, name, NULL) : NULL;
        if (gsi && warm_apply(json_object_get(def, "WarmThroughput"), gsi, 1, provisioned, name,
                              "globalSecondaryIndexes.member.warmThroughput", err))
            return -1;
    }
    return 0;
}

/* The name a sorted element is ordered by: an attribute definition's, or a string's. */
static const char *element_name(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v)
                             : json_string_value(json_object_get(v, "AttributeName"));
}

static int by_element_name(const void *a, const void *b)
{
    const char *x = element_name(*(json_t *const *)a), *y = element_name(*(json_t *const *)b);
    return strcmp(x ? x : "", y ? y : "");
}

/* Sorts a JSON array of attribute definitions or of names, in place, by name. */
static void sort_by_name(json_t *arr)
{
    size_t n = json_array_size(arr);
    if (n < 2) return;
    json_t **v = malloc(n * sizeof *v);
    if (v == NULL) return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof *v, by_element_name);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

/* DynamoDB keeps a table's attribute definitions, and each index's non-key attributes,
 * sorted by name, whatever order they were given in. */
static void sort_definitions(json_t *desc)
{
    json_t *defs = json_deep_copy(json_object_get(desc, "AttributeDefinitions"));
    sort_by_name(defs);
    json_object_set_new(desc, "AttributeDefinitions", defs);
    const char *lists[2] = {"LocalSecondaryIndexes", "GlobalSecondaryIndexes"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *ix;
        json_array_foreach(json_object_get(desc, lists[l]), i, ix)
        {
            json_t *p = json_deep_copy(json_object_get(ix, "Projection"));
            sort_by_name(json_object_get(p, "NonKeyAttributes"));
            json_object_set_new(ix, "Projection", p);
        }
    }
}

static void drop_if_deleted(qr_db *db, const char *name);

int op_create_table(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *name = json_object_get(req, "TableName");
    if (param_check_table_name(name, "tableName", err)) return -1;
    json_t *defs = json_object_get(req, "AttributeDefinitions"),
           *ks = json_object_get(req, "KeySchema");
    if (check_key_schema(defs, ks, err)) return -1;
    if (index_check_definitions(req, err)) return -1;
    json_t *tags = json_object_get(req, "Tags");
    if (tags && account_check_tags(tags, err)) return -1; /* bad tags create no table */
    json_t *desc = json_object();
    json_object_set_new(desc, "AttributeDefinitions", json_deep_copy(defs));
    json_object_set_new(desc, "TableName", json_deep_copy(name));
    json_object_set_new(desc, "KeySchema", json_deep_copy(ks));
    json_object_set_new(desc, "TableStatus", json_string("ACTIVE"));
    double now = ops_now_seconds(); /* a table created on demand was so since its creation */
    json_object_set_new(desc, "CreationDateTime", json_real(now));
    if (apply_billing(req, desc, 1, now, err)) {
        json_decref(desc);
        return -1;
    }
    json_object_set_new(desc, "TableSizeBytes", json_integer(0));
    json_object_set_new(desc, "ItemCount", json_integer(0));
    char arn[512];
    snprintf(arn, sizeof arn, "arn:aws:dynamodb:ddblocal:000000000000:table/%s",
             json_string_value(name));
    json_object_set_new(desc, "TableArn", json_string(arn));
    if (describe_indexes(req, desc, arn, err)) {
        json_decref(desc);
        return -1;
    }
    sort_definitions(desc);
    json_object_set_new(desc, "TableId", new_uuid());
    if (apply_stream_spec(db, req, desc, 1, now, err) ||
        apply_table_class(req, desc, 1, now, err) || apply_sse(req, desc, 1, err) ||
        apply_on_demand(req, desc, 1, is_provisioned(desc), NULL, err) ||
        create_warm(req, desc, err)) {
        json_decref(desc);
        return -1;
    }
    int protect;
    if (param_bool(req, "DeletionProtectionEnabled", 0, &protect, err)) {
        json_decref(desc);
        return -1;
    }
    json_object_set_new(desc, "DeletionProtectionEnabled", json_boolean(protect));
    table *t;
    json_t *answer = json_deep_copy(desc);
    json_object_del(answer, QR_STREAM_FIELD);
    transient_mark(db, desc, "CREATING");
    drop_if_deleted(db, json_string_value(name));
    if (catalog_create(db, desc, &t, err)) {
        json_decref(answer);
        return -1;
    }
    catalog_release(db, t);
    account_tag_new_table(db, json_string_value(name), json_object_get(req, "Tags"), err);
    /* Like DynamoDB, the answer shows the table and its global indexes being created;
     * DescribeTable finds them ACTIVE from the start. */
    json_object_set_new(answer, "TableStatus", json_string("CREATING"));
    size_t i;
    json_t *gsi;
    /* The billing mode's time and warm throughput nobody asked for are DescribeTable's,
     * not CreateTable's. */
    json_t *mode = json_object_get(json_object_get(answer, "BillingModeSummary"), "BillingMode");
    if (mode)
        json_object_set_new(answer, "BillingModeSummary", json_pack("{s:O}", "BillingMode", mode));
    if (json_object_size(json_object_get(req, "WarmThroughput")) == 0)
        json_object_del(answer, "WarmThroughput");
    json_array_foreach(json_object_get(answer, "GlobalSecondaryIndexes"), i, gsi)
    {
        json_object_set_new(gsi, "IndexStatus", json_string("CREATING"));
        const char *ix = json_string_value(json_object_get(gsi, "IndexName"));
        size_t j;
        json_t *def;
        json_array_foreach(json_object_get(req, "GlobalSecondaryIndexes"), j, def)
        {
            if (ix &&
                json_equal(json_object_get(def, "IndexName"), json_object_get(gsi, "IndexName")) &&
                json_object_size(json_object_get(def, "WarmThroughput")) == 0)
                json_object_del(gsi, "WarmThroughput");
        }
    }
    c->answer = json_pack("{s:o}", "TableDescription", answer);
    return 0;
}

/* desc (stolen), a copy of t's description, as DynamoDB shows it, with current statistics. */
static json_t *describe_copy(qr_db *db, table *t, json_t *desc)
{
    transient_describe(desc);
    json_object_del(desc, QR_TTL_FIELD); /* DescribeTimeToLive's, not DescribeTable's */
    json_object_del(desc, QR_TTL_CHANGED_FIELD);
    json_object_del(desc, QR_PITR_FIELD); /* DescribeContinuousBackups' */
    json_object_del(desc, "QuarryTags");  /* ListTagsOfResource's */
    json_object_del(desc, QR_STREAM_FIELD);
    json_object_del(desc, CLASS_CHANGES_FIELD); /* the class quota's bookkeeping */
    double now = ops_now_seconds();
    forget_old_decreases(json_object_get(desc, "ProvisionedThroughput"), now);
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
    {
        forget_old_decreases(json_object_get(g, "ProvisionedThroughput"), now);
        json_object_del(g, QR_INDEX_ORDER_FIELD);
    }
    warm_describe(desc);
    meter_totals mt;
    if (table_capacity(t, NULL, db, &mt) == 0)
        warm_follow_traffic(desc, mt.read_at_once, mt.write_at_once);
    json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
    {
        const char *name = json_string_value(json_object_get(g, "IndexName"));
        if (name && table_capacity(t, name, db, &mt) == 0)
            warm_follow_traffic(g, mt.read_at_once, mt.write_at_once);
    }
    table_stats_fill(db, t, desc);
    index_stats_fill(db, t, desc);
    return desc;
}

/* A copy of t's description with current statistics. */
static json_t *describe(qr_db *db, table *t)
{
    return describe_copy(db, t, table_description(t));
}

static int table_not_found(json_t *req, qr_err *err)
{
    return err_set(err, QR_E_NOT_FOUND, QR_MSG_TABLE_NOT_FOUND,
                   json_string_value(json_object_get(req, "TableName")));
}

int op_describe_table(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t;
    if (param_check_table_name(json_object_get(req, "TableName"), "tableName", err)) return -1;
    drop_if_deleted(db, json_string_value(json_object_get(req, "TableName")));
    if ((t = catalog_get(db, json_string_value(json_object_get(req, "TableName")))) == NULL)
        return table_not_found(req, err);
    c->answer = json_pack("{s:o}", "Table", describe(db, t));
    catalog_release(db, t);
    return 0;
}

int op_list_tables(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    /* Limit's type and range are judged by the shape checker (op_call_parse). */
    json_t *lv = json_object_get(req, "Limit");
    long long limit = json_is_integer(lv) ? json_integer_value(lv) : 100;
    const char *start;
    json_t *esn = json_object_get(req, "ExclusiveStartTableName");
    if (esn && param_check_table_name(esn, "exclusiveStartTableName", err)) return -1;
    if (param_string(req, "ExclusiveStartTableName", &start, err)) return -1;
    json_t *all = catalog_names(db), *names = json_array();
    if (engine_transient_ms(db) > 0) { /* deleted tables whose time is over go now */
        size_t k;
        json_t *nm;
        json_array_foreach(all, k, nm) drop_if_deleted(db, json_string_value(nm));
        json_decref(all);
        all = catalog_names(db);
    }
    size_t i;
    json_t *n;
    const char *last = NULL;
    int more = 0;
    json_array_foreach(all, i, n)
    {
        if (start && strcmp(json_string_value(n), start) <= 0) continue;
        if ((long long)json_array_size(names) == limit) {
            more = 1;
            break;
        }
        json_array_append(names, n);
        last = json_string_value(n);
    }
    c->answer = json_pack("{s:o}", "TableNames", names);
    if (more && last) json_object_set_new(c->answer, "LastEvaluatedTableName", json_string(last));
    json_decref(all);
    return 0;
}

/* Removes t from the catalog (the caller's reference stays the caller's): a table with
 * point-in-time recovery enabled is kept as a system backup, its settings go with it.
 * Returns its description as it was, or NULL with err set. */
static json_t *drop_table(qr_db *db, table *t, qr_err *err)
{
    table *kept = pitr_enabled(t) ? catalog_get(db, table_name(t)) : NULL;
    if (kept && backup_deleted_table(db, kept, err)) return NULL;
    json_t *desc = describe(db, t);
    if (catalog_delete(db, t, err)) {
        json_decref(desc);
        return NULL;
    }
    setting_forget_all(db, t); /* insights and policies go with the table */
    return desc;
}

/* Drops table name if it was deleted and its DELETING time is over (transient.c). */
static void drop_if_deleted(qr_db *db, const char *name)
{
    table *t = name ? catalog_get(db, name) : NULL;
    if (t && transient_deleted(db, t)) {
        qr_err e;
        err_init(&e);
        json_decref(drop_table(db, t, &e));
        err_clear(&e);
    }
    catalog_release(db, t);
}

static int mark_deleting(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    (void)err;
    transient_mark(arg, desc, "DELETING");
    return 0;
}

int op_delete_table(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t;
    if (param_check_table_name(json_object_get(req, "TableName"), "tableName", err)) return -1;
    drop_if_deleted(db, json_string_value(json_object_get(req, "TableName")));
    if ((t = catalog_get(db, json_string_value(json_object_get(req, "TableName")))) == NULL)
        return table_not_found(req, err);
    json_t *protection = table_desc_member(t, "DeletionProtectionEnabled");
    int is_protected = json_is_true(protection);
    json_decref(protection);
    if (is_protected) {
        catalog_release(db, t);
        return err_validation(
            err, "Resource cannot be deleted as it is currently protected against deletion. "
                 "Disable deletion protection first.");
    }
    if (transient_refuse_change(db, t, err)) {
        catalog_release(db, t);
        return -1;
    }
    json_t *desc;
    if (engine_transient_ms(db) > 0) {
        /* The table stays, DELETING, until its time is up; then the next look at it drops
         * it (drop_if_deleted). */
        desc = describe(db, t);
        catalog_release(db, t);
        if (catalog_change_schema(db, json_string_value(json_object_get(req, "TableName")),
                                  mark_deleting, db, err)) {
            json_decref(desc);
            return -1;
        }
    } else {
        desc = drop_table(db, t, err);
        catalog_release(db, t);
        if (desc == NULL) return -1;
    }
    json_object_set_new(desc, "TableStatus", json_string("DELETING"));
    /* DeleteTable describes the table without its schema, as DynamoDB does. */
    const char *schema[] = {"KeySchema",
                            "AttributeDefinitions",
                            "CreationDateTime",
                            "GlobalSecondaryIndexes",
                            "LocalSecondaryIndexes",
                            NULL};
    for (int i = 0; schema[i]; i++)
        json_object_del(desc, schema[i]);
    c->answer = json_pack("{s:o}", "TableDescription", desc);
    return 0;
}

/* What one UpdateTable call changes, applied to the description under the schema lock. */
typedef struct table_change {
    qr_db *db;
    json_t *req;
    json_t *result;     /* the description this change made (owned), for the answer */
    json_t *updates;    /* GlobalSecondaryIndexUpdates (borrowed), NULL for none */
    const char *action; /* its index Create or Delete: "Create", "Delete" or NULL */
    json_t *spec;       /* that entry's body */
    uint16_t index_id;  /* the created or deleted index's id */
    int synchronous;    /* set if every change applies at once (the table stays ACTIVE) */
} table_change;

static json_t *find_gsi(json_t *desc, const char *name, size_t *pos)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
    {
        if (strcmp(json_string_value(json_object_get(g, "IndexName")), name) == 0) {
            if (pos) *pos = i;
            return g;
        }
    }
    return NULL;
}

static int names_key_attribute(json_t *key_schema, json_t *name)
{
    size_t i;
    json_t *k;
    json_array_foreach(key_schema, i,
                       k) if (json_equal(json_object_get(k, "AttributeName"), name)) return 1;
    return 0;
}

/* Drops the attribute definitions no key of the table or of its indexes uses any more
 * (after an index is deleted), so the attribute may later be indexed with another type. */
static void prune_attribute_definitions(json_t *desc)
{
    json_t *defs = json_object_get(desc, "AttributeDefinitions");
    for (size_t i = json_array_size(defs); i-- > 0;) {
        json_t *name = json_object_get(json_array_get(defs, i), "AttributeName");
        int used = names_key_attribute(json_object_get(desc, "KeySchema"), name);
        const char *lists[] = {"LocalSecondaryIndexes", "GlobalSecondaryIndexes"};
        for (int l = 0; l < 2 && !used; l++) {
            size_t j;
            json_t *ix;
            json_array_foreach(json_object_get(desc, lists[l]), j, ix) used |=
                names_key_attribute(json_object_get(ix, "KeySchema"), name);
        }
        if (!used) json_array_remove(defs, i);
    }
}

/* Applies one GlobalSecondaryIndexUpdates entry (action, its body spec, at position pos
 * from 1) to desc. */
static int apply_gsi_change(table_change *c, const char *action, json_t *spec, size_t pos1,
                            json_t *desc, json_t *ids, qr_err *err)
{
    const char *name = json_string_value(json_object_get(spec, "IndexName"));
    json_t *gsis = json_object_get(desc, "GlobalSecondaryIndexes");
    size_t pos;
    json_t *existing = name ? find_gsi(desc, name, &pos) : NULL;
    if (name == NULL)
        return err_not_null(err, "globalSecondaryIndexUpdates.%zu.member.%s.indexName", pos1,
                            strcmp(action, "Create") == 0   ? "create"
                            : strcmp(action, "Delete") == 0 ? "delete"
                                                            : "update");
    if (strcmp(action, "Create") == 0) {
        json_t *defs = json_object_get(desc, "AttributeDefinitions"),
               *more = json_object_get(c->req, "AttributeDefinitions");
        if (more == NULL || json_is_null(more))
            return err_validation(err,
                                  QR_MSG_INVALID_PARAMETER "AttributeDefinitions is not "
                                                           "specified for index: %s",
                                  name);
        if (more && check_attribute_definitions(more, err)) return -1;
        /* The new index's key attributes are defined by this request's AttributeDefinitions,
         * even those the table already knows; definitions the index does not use are ignored. */
        json_t *given = more ? json_incref(more) : json_array();
        int rc = index_check_gsi(spec, given, err);
        size_t i, j, k;
        json_t *key, *d, *e;
        json_array_foreach(json_object_get(spec, "KeySchema"), k, key)
        {
            json_t *an = json_object_get(key, "AttributeName");
            json_array_foreach(given, i, d)
            {
                if (rc || !json_equal(json_object_get(d, "AttributeName"), an)) continue;
                int known = 0;
                json_array_foreach(defs, j, e)
                {
                    if (!json_equal(json_object_get(e, "AttributeName"), an)) continue;
                    known = 1;
                    if (!json_equal(json_object_get(e, "AttributeType"),
                                    json_object_get(d, "AttributeType")))
                        rc = err_validation(
                            err,
                            QR_MSG_INVALID_PARAMETER
                            "Attributes cannot be "
                            "redefined. Please check that your attribute has the same type as "
                            "previously defined. Attribute: %s, existing type: %s, new type: %s",
                            json_string_value(an),
                            json_string_value(json_object_get(e, "AttributeType")),
                            json_string_value(json_object_get(d, "AttributeType")));
                }
                if (!known && rc == 0) json_array_append_new(defs, json_deep_copy(d));
            }
        }
        json_decref(given);
        if (rc) return -1;
        json_t *l;
        json_array_foreach(json_object_get(desc, "LocalSecondaryIndexes"), k, l)
        {
            if (strcmp(json_string_value(json_object_get(l, "IndexName")), name) == 0) existing = l;
        }
        if (existing)
            return err_validation(err, "Attempting to create an index which already exists");
        /* DynamoDB's limit; a CQL table's indexes (Cassandra's have none) only the engine's */
        int cql = json_object_get(desc, QR_CQL_TABLE_FIELD) != NULL;
        size_t cap = cql ? QR_MAX_INDEXES - QR_MAX_LSI : QR_MAX_GSI;
        if (json_array_size(gsis) >= cap)
            return err_set(err, QR_E_LIMIT,
                           "Subscriber limit exceeded: Number of global secondary indexes exceeds "
                           "per-table limit of %zu",
                           cap);
        json_t *d2 = index_description(spec, json_string_value(json_object_get(desc, "TableArn")),
                                       1, is_provisioned(desc), 0, err);
        if (d2 == NULL) return -1;
        json_object_set_new(d2, "IndexStatus", json_string("CREATING"));
        json_object_set_new(d2, "Backfilling", json_true());
        const char *order = json_string_value(json_object_get(desc, QR_PARTITION_ORDER_FIELD));
        if (order && strcmp(order, QR_PARTITION_ORDER_TOKEN) == 0)
            json_object_set_new(d2, QR_INDEX_ORDER_FIELD, json_string(order));
        transient_mark_index(c->db, d2);
        if (gsis == NULL) json_object_set_new(desc, "GlobalSecondaryIndexes", gsis = json_array());
        json_array_append_new(gsis, d2);
        sort_definitions(desc);
        warm_follow_capacity(desc);
        if (warm_apply(json_object_get(spec, "WarmThroughput"), d2, 1, is_provisioned(desc), name,
                       "globalSecondaryIndexUpdates.member.create.warmThroughput", err))
            return -1;
        /* Ids are never reused, so late work for a deleted index can never reach a new one. */
        json_int_t next = json_integer_value(json_object_get(ids, "")); /* 0 is the table itself */
        if (next < 1) next = 1;
        const char *k2;
        json_t *v;
        json_object_foreach(ids, k2, v) if (json_integer_value(v) >= next) next =
            json_integer_value(v) + 1;
        json_object_set_new(ids, name, json_integer(next));
        json_object_set_new(ids, "", json_integer(next + 1));
        c->index_id = (uint16_t)next;
        return 0;
    }
    if (existing == NULL)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_INDEX_UPDATE_NOT_FOUND, name,
                       json_string_value(json_object_get(desc, "TableName")));
    if (strcmp(action, "Delete") == 0) {
        c->index_id = (uint16_t)json_integer_value(json_object_get(ids, name));
        json_int_t next = json_integer_value(json_object_get(ids, ""));
        if (c->index_id >= next) json_object_set_new(ids, "", json_integer(c->index_id + 1));
        transient_mark_deleted_index(c->db, desc, existing);
        json_array_remove(gsis, pos);
        if (json_array_size(gsis) == 0) json_object_del(desc, "GlobalSecondaryIndexes");
        json_object_del(ids, name);
        prune_attribute_definitions(desc);
        return 0;
    }
    /* An Update sets the index's capacity, its OnDemandThroughput or its WarmThroughput. */
    json_t *pt = json_object_get(spec, "ProvisionedThroughput");
    json_t *warm = json_object_get(spec, "WarmThroughput"),
           *odt = json_object_get(spec, "OnDemandThroughput");
    int has_pt = pt != NULL && !json_is_null(pt), has_warm = warm != NULL && !json_is_null(warm),
        has_odt = json_object_size(odt) > 0;
    if (!is_provisioned(desc)) {
        if (has_pt)
            return err_validation(err,
                                  QR_MSG_INVALID_PARAMETER
                                  "ProvisionedThroughput should not "
                                  "be specified for index: %s when BillingMode is PAY_PER_REQUEST",
                                  name);
        if (!has_warm && !has_odt)
            return err_validation(
                err,
                QR_MSG_INVALID_PARAMETER
                "The only Updates for index: %s "
                "when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, "
                "WarmThroughput",
                name);
    } else if (!has_pt && !has_warm) {
        return err_not_null(
            err, "globalSecondaryIndexUpdates.%zu.member.update.provisionedThroughput", pos1);
    }
    if (has_pt) {
        if (json_object_get(pt, "ReadCapacityUnits") == NULL ||
            json_object_get(pt, "WriteCapacityUnits") == NULL)
            return err_validation(err,
                                  QR_MSG_INVALID_PARAMETER
                                  "Both ReadCapacityUnits and "
                                  "WriteCapacityUnits must be specified for index: %s",
                                  name);
        long long r, w;
        if (read_throughput(pt, "globalSecondaryIndexUpdates.member.update.provisionedThroughput",
                            &r, &w, err))
            return -1;
        json_t *cur = json_object_get(existing, "ProvisionedThroughput");
        long long old_r = json_integer_value(json_object_get(cur, "ReadCapacityUnits"));
        long long old_w = json_integer_value(json_object_get(cur, "WriteCapacityUnits"));
        if (r == old_r && w == old_w)
            return err_validation(
                err,
                "The provisioned throughput for the index %s will not change. The requested "
                "value equals the current value. Current ReadCapacityUnits provisioned for "
                "index %s: %lld. Requested ReadCapacityUnits: %lld. Current "
                "WriteCapacityUnits provisioned for index %s: %lld. Requested "
                "WriteCapacityUnits: %lld. Refer to the Amazon DynamoDB Developer Guide for "
                "current limits and how to request higher limits.",
                name, name, old_r, r, name, old_w, w);
        double now = ops_now_seconds();
        if (r > old_r || w > old_w)
            json_object_set_new(cur, "LastIncreaseDateTime", json_real(now));
        if ((r < old_r || w < old_w) && note_decrease(cur, now, err)) return -1;
        json_object_set_new(cur, "ReadCapacityUnits", json_integer(r));
        json_object_set_new(cur, "WriteCapacityUnits", json_integer(w));
    }
    if (has_odt && apply_on_demand(spec, existing, 0, is_provisioned(desc), name, err)) return -1;
    warm_follow_capacity(desc);
    return warm_apply(warm, existing, 0, is_provisioned(desc), name,
                      "globalSecondaryIndexUpdates.member.update.warmThroughput", err);
}

/* The one action of a GlobalSecondaryIndexUpdates entry, NULL if it has none or more. */
static const char *entry_action(json_t *u, json_t **spec, int *count)
{
    static const char *const actions[] = {"Create", "Delete", "Update"};
    const char *found = NULL;
    *count = 0;
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(u, actions[i]);
        if (v == NULL || json_is_null(v)) continue;
        ++*count;
        found = actions[i];
        *spec = v;
    }
    return *count == 1 ? found : NULL;
}

static size_t count_changes(json_t *req);

static int apply_table_change(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    table_change *c = arg;
    double now = ops_now_seconds();
    int was_provisioned = is_provisioned(desc);
    if (apply_billing(c->req, desc, 0, now, err)) return -1;
    json_t *dp = json_object_get(c->req, "DeletionProtectionEnabled");
    if (dp) {
        if (!json_is_boolean(dp))
            return err_set(err, QR_E_SERIALIZATION, "DeletionProtectionEnabled must be a boolean");
        json_object_set(desc, "DeletionProtectionEnabled", dp);
    }
    if (apply_stream_spec(c->db, c->req, desc, 0, now, err) ||
        apply_table_class(c->req, desc, 0, now, err) || apply_sse(c->req, desc, 0, err) ||
        apply_on_demand(c->req, desc, 0, is_provisioned(desc), NULL, err))
        return -1;
    warm_follow_capacity(desc);
    /* An empty WarmThroughput beside another change asks for nothing. */
    json_t *warm = json_object_get(c->req, "WarmThroughput");
    if (json_is_object(warm) && json_object_size(warm) == 0 && count_changes(c->req) > 1)
        warm = NULL;
    if (warm_apply(warm, desc, 0, is_provisioned(desc), NULL, "warmThroughput", err)) return -1;
    size_t i;
    json_t *u;
    json_array_foreach(c->updates, i, u)
    {
        json_t *spec = NULL;
        int count;
        const char *action = entry_action(u, &spec, &count);
        if (apply_gsi_change(c, action, spec, i + 1, desc, ids, err)) return -1;
    }
    /* A switch to PROVISIONED gives every index its capacity in the same call. */
    json_t *g;
    if (!was_provisioned && is_provisioned(desc))
        json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
        {
            if (json_integer_value(json_object_get(json_object_get(g, "ProvisionedThroughput"),
                                                   "ReadCapacityUnits")) < 1)
                return err_validation(err,
                                      QR_MSG_INVALID_PARAMETER "ProvisionedThroughput must be "
                                                               "specified for index: %s",
                                      json_string_value(json_object_get(g, "IndexName")));
        }
    /* The answer shows this change, not a later one another request made meanwhile. */
    json_decref(c->result);
    c->result = json_deep_copy(desc);
    return 0;
}

/* Checks GlobalSecondaryIndexUpdates before the table is looked up: one action per entry,
 * one entry per index, the shapes DynamoDB judges first, and at most one index created or
 * deleted. Notes the list and its Create or Delete in c. */
static int read_gsi_update(json_t *req, qr_db *db, table_change *c, qr_err *err)
{
    static const char pre[] = QR_MSG_INVALID_PARAMETER;
    json_t *updates = json_object_get(req, "GlobalSecondaryIndexUpdates");
    if (updates == NULL || json_is_null(updates)) return 0;
    if (!json_is_array(updates))
        return err_set(err, QR_E_SERIALIZATION, "GlobalSecondaryIndexUpdates must be a list");
    if (json_array_size(updates) == 0)
        return err_validation(err, "%sList of GlobalSecondaryIndexUpdates is empty", pre);
    size_t i, j, ddl = 0;
    json_t *u;
    json_array_foreach(updates, i, u)
    {
        json_t *spec = NULL;
        int count;
        const char *action = entry_action(u, &spec, &count);
        if (count > 1)
            return err_validation(err,
                                  "%sOnly one global secondary index action is allowed per "
                                  "GlobalSecondaryIndexUpdate object",
                                  pre);
        if (action == NULL)
            return err_validation(
                err,
                "%sOne of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
                "GlobalSecondaryIndexUpdate.Delete must not be null",
                pre);
        if (!json_is_object(spec))
            return err_set(err, QR_E_SERIALIZATION,
                           "GlobalSecondaryIndexUpdate.%s must be an object", action);
        const char *name = json_string_value(json_object_get(spec, "IndexName"));
        for (j = 0; name && j < i; j++) {
            json_t *other = NULL;
            int n;
            entry_action(json_array_get(updates, j), &other, &n);
            const char *seen = json_string_value(json_object_get(other, "IndexName"));
            if (seen && strcmp(seen, name) == 0)
                return err_validation(
                    err,
                    "%sOnly one global secondary index update per index is allowed "
                    "simultaneously. Index: %s",
                    pre, name);
        }
        if (strcmp(action, "Update") == 0) {
            json_t *warm = json_object_get(spec, "WarmThroughput"),
                   *pt = json_object_get(spec, "ProvisionedThroughput");
            if (json_is_object(warm) && json_object_get(warm, "ReadUnitsPerSecond") == NULL &&
                json_object_get(warm, "WriteUnitsPerSecond") == NULL)
                return err_validation(
                    err,
                    "%sWarmThroughput must have at least one of ReadUnitsPerSecond or "
                    "WriteUnitsPerSecond specified for index: %s",
                    pre, name ? name : "null");
            /* Capacity with one unit missing is judged against the index later. */
            int has_r = json_object_get(pt, "ReadCapacityUnits") != NULL,
                has_w = json_object_get(pt, "WriteCapacityUnits") != NULL;
            if (json_is_object(pt) && has_r == has_w) {
                char field[96];
                long long r, w;
                snprintf(field, sizeof field,
                         "globalSecondaryIndexUpdates.%zu.member.update.provisionedThroughput",
                         i + 1);
                if (read_throughput(pt, field, &r, &w, err)) return -1;
            }
        } else {
            ddl++;
            c->action = action;
            c->spec = spec;
        }
    }
    if (ddl > 1)
        return err_set(err, QR_E_LIMIT,
                       "Subscriber limit exceeded: Only 1 online index can be created or deleted "
                       "simultaneously per table");
    c->updates = updates;
    if (c->action == NULL) return 0;
    /* While an index is being created no other may be created or deleted, but the one
     * being backfilled may itself be deleted, as DynamoDB allows. */
    table *t = catalog_get(db, json_string_value(json_object_get(req, "TableName")));
    const char *target = json_string_value(json_object_get(c->spec, "IndexName"));
    int busy = 0;
    for (i = 0; t && i < table_index_count(t); i++) {
        const qr_index *ix = &table_indexes(t)[i];
        busy |= ix->creating &&
                !(strcmp(c->action, "Delete") == 0 && target && strcmp(ix->name, target) == 0);
    }
    catalog_release(db, t);
    if (busy)
        return err_set(err, QR_E_LIMIT,
                       "Subscriber limit exceeded: Only 1 online index can be created or deleted "
                       "simultaneously per table");
    return 0;
}

/* The members an UpdateTable may change. */
static const char *const update_members[] = {
    "ProvisionedThroughput",       "BillingMode",        "DeletionProtectionEnabled",
    "StreamSpecification",         "SSESpecification",   "TableClass",
    "GlobalSecondaryIndexUpdates", "OnDemandThroughput", "WarmThroughput"};

/* Whether the request changes member name (present, and not null or an empty list). */
static int changes(json_t *req, const char *name)
{
    json_t *v = json_object_get(req, name);
    return v != NULL && !json_is_null(v) && !(json_is_array(v) && json_array_size(v) == 0);
}

/* How many members the request changes. */
static size_t count_changes(json_t *req)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof update_members / sizeof update_members[0]; i++)
        n += changes(req, update_members[i]);
    return n;
}

/* The changes one UpdateTable may not combine, in DynamoDB's words; action is the index
 * update's ("Create", "Delete", "Update" or NULL). */
static int check_combination(json_t *req, const char *action, qr_err *err)
{
    int n = 0;
    for (size_t i = 0; i < sizeof update_members / sizeof update_members[0]; i++) {
        /* An empty object (WarmThroughput: {}) is judged by its own rules, later. */
        json_t *v = json_object_get(req, update_members[i]);
        n += changes(req, update_members[i]) && !(json_is_object(v) && json_object_size(v) == 0);
    }
    int pt = changes(req, "ProvisionedThroughput"), stream = changes(req, "StreamSpecification");
    int index_ddl = action && strcmp(action, "Update") != 0;
    static const char pre[] = QR_MSG_INVALID_PARAMETER;
    if (changes(req, "SSESpecification") && n > 1)
        return err_validation(
            err, "%sServer-Side Encryption modification must be the only operation in the request",
            pre);
    if (changes(req, "TableClass") && n > 1)
        return err_validation(
            err, "%sTableClass modification must be the only operation in the request", pre);
    if (changes(req, "DeletionProtectionEnabled") && n > 1)
        return err_validation(
            err, "%sDeletionProtection modification must be the only operation in the request",
            pre);
    if (changes(req, "WarmThroughput") &&
        json_object_size(json_object_get(req, "WarmThroughput")) > 0) {
        if (action && strcmp(action, "Create") == 0)
            return err_validation(
                err,
                "%sCreate global secondary index cannot be specified when updating "
                "WarmThroughput",
                pre);
        if (n > 1 + (action != NULL)) /* an index's own warm throughput may change with it */
            return err_validation(err, "%sWarmThroughput must be the only operation in the request",
                                  pre);
    }
    if (changes(req, "OnDemandThroughput") && n > 1 + changes(req, "BillingMode"))
        return err_validation(
            err,
            "%sOnDemandThroughput can only be combined with BillingMode in an UpdateTable "
            "request",
            pre);
    if (stream && pt)
        return err_validation(err, "%sYou cannot modify stream status while updating table IOPS",
                              pre);
    if (index_ddl && pt)
        return err_validation(err, "%sYou cannot create or delete index while updating table IOPS",
                              pre);
    if (index_ddl && stream)
        return err_validation(
            err, "%sYou cannot create or delete index while changing stream status", pre);
    return 0;
}

/* DynamoDB's answer to an UpdateTable that changes nothing names what it could change,
 * less what the request holds. */
static int nothing_to_change(json_t *req, qr_err *err)
{
    static const char *const names[] = {"ProvisionedThroughput",
                                        "BillingMode",
                                        "UpdateStreamEnabled",
                                        "GlobalSecondaryIndexUpdates",
                                        "SSESpecification",
                                        "ReplicaUpdates",
                                        "MultiAccountReplicaReady",
                                        "ReplicaTransitRoleArn",
                                        "MultiRegionConsistency",
                                        "DeletionProtectionEnabled",
                                        "OnDemandThroughput",
                                        "WarmThroughput",
                                        "TableClass"};
    const char *left[sizeof names / sizeof names[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *asked =
            strcmp(names[i], "UpdateStreamEnabled") == 0 ? "StreamSpecification" : names[i];
        json_t *v = json_object_get(req, asked);
        /* An empty list of index updates counts as absent here. */
        if (v == NULL || (json_is_array(v) && json_array_size(v) == 0)) left[n++] = names[i];
    }
    char list[600] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                 i == 0       ? ""
                                 : i + 1 == n ? " or "
                                              : ", ",
                                 left[i]);
    return err_validation(err, "At least one of %s is required", list);
}

/* Whether every change the request asks for applies at once: deletion protection,
 * on-demand limits, warm throughput and index updates other than a Create or Delete. */
static int synchronous(json_t *req, const table_change *c)
{
    static const char *const quick[] = {"DeletionProtectionEnabled", "OnDemandThroughput",
                                        "WarmThroughput", "GlobalSecondaryIndexUpdates"};
    if (c->action) return 0;
    for (size_t i = 0; i < sizeof update_members / sizeof update_members[0]; i++) {
        int ok = 0;
        for (size_t j = 0; j < sizeof quick / sizeof quick[0]; j++)
            ok |= strcmp(update_members[i], quick[j]) == 0;
        if (!ok && changes(req, update_members[i])) return 0;
    }
    return 1;
}

/* DynamoDB lets a table switch from provisioned capacity to on-demand four times in a
 * rolling 24 hours (switches back are not limited); the times are kept as a setting. */
#define SWITCHES_PER_DAY 4

static int switching_to_on_demand(json_t *req, table *t)
{
    const char *asked = json_string_value(json_object_get(req, "BillingMode"));
    if (asked == NULL || strcmp(asked, "PAY_PER_REQUEST") != 0) return 0;
    json_t *summary = table_desc_member(t, "BillingModeSummary");
    const char *mode = json_string_value(json_object_get(summary, "BillingMode"));
    int provisioned = mode == NULL || strcmp(mode, "PAY_PER_REQUEST") != 0;
    json_decref(summary);
    return provisioned;
}

/* The switch times of the last 24 hours, of cur (a JSON array of seconds), and now's if
 * add is set: a new array. */
static json_t *recent_switches(const json_t *cur, double now, int add)
{
    json_t *kept = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(cur, i, v) if (json_is_number(v) && now - json_number_value(v) < 86400.0)
        json_array_append(kept, v);
    if (add) json_array_append_new(kept, json_real(now));
    return kept;
}

static int record_switch(const json_t *cur, json_t **next, void *arg, qr_err *err)
{
    (void)err;
    *next = recent_switches(cur, *(double *)arg, 1);
    return 0;
}

/* LimitExceededException when t has switched to on-demand SWITCHES_PER_DAY times in the
 * last 24 hours. */
static int check_switches(qr_db *db, table *t, double now, qr_err *err)
{
    json_t *cur = NULL;
    if (meta_setting_get(db, t, META_SETTING_BILLING, NULL, &cur, err)) return -1;
    json_t *recent = recent_switches(cur, now, 0);
    size_t n = json_array_size(recent);
    json_decref(recent);
    json_decref(cur);
    if (n < SWITCHES_PER_DAY) return 0;
    return err_set(err, QR_E_LIMIT,
                   "Subscriber limit exceeded: Update to PayPerRequest mode are limited to %d "
                   "times within 1 day(s).",
                   SWITCHES_PER_DAY);
}

/* apply_table_change, and the table UPDATING for a while unless every change applies at
 * once (transient.c). */
static int apply_and_mark(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    table_change *c = arg;
    if (apply_table_change(desc, ids, arg, err)) return -1;
    if (!synchronous(c->req, c)) transient_mark(c->db, desc, "UPDATING");
    return 0;
}

int op_update_table(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t = NULL;
    if (param_check_table_name(json_object_get(req, "TableName"), "tableName", err)) return -1;
    char *name = strdup(json_string_value(json_object_get(req, "TableName")));
    int rc = -1;
    table_change change = {.db = db, .req = req};
    /* DynamoDB judges the request before it looks the table up. */
    if (count_changes(req) == 0) {
        nothing_to_change(req, err);
        goto done;
    }
    json_t *defs = json_object_get(req, "AttributeDefinitions"),
           *pt = json_object_get(req, "ProvisionedThroughput");
    if (defs && !json_is_null(defs) && check_attribute_definitions(defs, err)) goto done;
    long long r, w;
    if (json_is_object(pt) && read_throughput(pt, "provisionedThroughput", &r, &w, err)) goto done;
    if (read_gsi_update(req, db, &change, err) || check_combination(req,
                                                                    change.action    ? change.action
                                                                    : change.updates ? "Update"
                                                                                     : NULL,
                                                                    err))
        goto done;
    drop_if_deleted(db, name);
    if ((t = catalog_get(db, name)) == NULL) {
        table_not_found(req, err);
        goto done;
    }
    if (transient_refuse_change(db, t, err)) goto done;
    double now = ops_now_seconds();
    int to_on_demand = switching_to_on_demand(req, t);
    if (to_on_demand && check_switches(db, t, now, err)) goto done;
    catalog_release(db, t); /* a schema change must not hold a table */
    t = NULL;
    if (catalog_change_schema(db, name, apply_and_mark, &change, err)) goto done;
    if (change.action && strcmp(change.action, "Create") == 0)
        backfill_start(db, name, json_string_value(json_object_get(change.spec, "IndexName")));
    t = catalog_get(db, name);
    if (t == NULL) {
        err_set(err, QR_E_NOT_FOUND, QR_MSG_TABLE_NOT_FOUND, name);
        goto done;
    }
    if (to_on_demand) {
        qr_err e; /* the switch is made; a time not kept only forgets one switch */
        err_init(&e);
        meta_setting_update(db, t, META_SETTING_BILLING, NULL, record_switch, &now, &e);
        err_clear(&e);
    }
    if (change.action && strcmp(change.action, "Delete") == 0 &&
        catalog_drop_index_entries(db, t, change.index_id, err))
        goto done;
    json_t *mine = change.result;
    change.result = NULL;
    c->answer =
        json_pack("{s:o}", "TableDescription", mine ? describe_copy(db, t, mine) : describe(db, t));
    /* DynamoDB answers an UpdateTable with the table UPDATING, unless every change applies
     * at once; DescribeTable finds it ACTIVE again at once. */
    json_t *answer = json_object_get(c->answer, "TableDescription");
    json_object_set_new(answer, "TableStatus",
                        json_string(synchronous(req, &change) ? "ACTIVE" : "UPDATING"));
    /* The answer echoes an on-demand limit cleared with -1; the description drops it. */
    const char *member;
    json_t *v;
    json_object_foreach(json_object_get(req, "OnDemandThroughput"), member, v)
    {
        if (json_integer_value(v) != -1) continue;
        json_t *odt = json_object_get(answer, "OnDemandThroughput");
        if (odt == NULL) json_object_set_new(answer, "OnDemandThroughput", odt = json_object());
        json_object_set(odt, member, v);
    }
    if (change.action && strcmp(change.action, "Delete") == 0) {
        json_t *desc = json_object_get(c->answer, "TableDescription");
        json_t *deleted = json_pack("{s:s,s:s}", "IndexName",
                                    json_string_value(json_object_get(change.spec, "IndexName")),
                                    "IndexStatus", "DELETING");
        json_t *g = json_object_get(desc, "GlobalSecondaryIndexes");
        if (g == NULL) json_object_set_new(desc, "GlobalSecondaryIndexes", g = json_array());
        size_t k;
        json_t *shown;
        json_array_foreach(g, k, shown) /* transient_describe may show it DELETING already */
        {
            if (json_equal(json_object_get(shown, "IndexName"),
                           json_object_get(deleted, "IndexName"))) {
                json_array_remove(g, k);
                break;
            }
        }
        json_array_append_new(g, deleted);
    }
    rc = 0;
done:
    json_decref(change.result);
    catalog_release(db, t);
    free(name);
    return rc;
}
