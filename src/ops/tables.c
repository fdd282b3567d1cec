/* tables.c — CreateTable, DescribeTable, ListTables, DeleteTable, UpdateTable.
 *
 * A table's description is kept as the TableDescription object DynamoDB returns, so
 * DescribeTable serves it with the current status and statistics filled in. Tables are
 * ready as soon as CreateTable returns: its response says CREATING, as DynamoDB's does,
 * and the next DescribeTable says ACTIVE. */
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ops/ops.h"

#define MAX_PROVISIONED 40000000000LL

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1000.0;
}

static json_t *new_uuid(void)
{
    unsigned char b[16];
    if (RAND_bytes(b, sizeof b) != 1) memset(b, 0x5a, sizeof b);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    char s[37];
    snprintf(s, sizeof s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return json_string(s);
}

static int null_member(const char *field, qr_err *err)
{
    return err_validation(err, "1 validation error detected: Value null at '%s' failed to satisfy constraint: "
                               "Member must not be null", field);
}

/* Checks AttributeDefinitions and KeySchema; returns the pk/sk names through the
 * schema itself (the caller copies both arrays into the description). */
static int check_key_schema(json_t *defs, json_t *ks, qr_err *err)
{
    if (defs == NULL) return null_member("attributeDefinitions", err);
    if (ks == NULL) return null_member("keySchema", err);
    if (!json_is_array(defs) || !json_is_array(ks))
        return err_set(err, QR_E_SERIALIZATION, "KeySchema and AttributeDefinitions must be lists");
    size_t nks = json_array_size(ks);
    if (nks == 0)
        return err_validation(err, "1 validation error detected: Value '[]' at 'keySchema' failed to satisfy "
                                   "constraint: Member must have length greater than or equal to 1");
    if (nks > 2)
        return err_validation(err, "1 validation error detected: Value at 'keySchema' failed to satisfy "
                                   "constraint: Member must have length less than or equal to 2");
    size_t i, j;
    json_t *d, *k;
    json_array_foreach(defs, i, d) {
        json_t *name = json_object_get(d, "AttributeName"), *type = json_object_get(d, "AttributeType");
        if (!json_is_string(name) || json_string_length(name) == 0)
            return null_member("attributeDefinitions.member.attributeName", err);
        if (!json_is_string(type)) return null_member("attributeDefinitions.member.attributeType", err);
        const char *ts = json_string_value(type);
        if (strcmp(ts, "S") && strcmp(ts, "N") && strcmp(ts, "B"))
            return err_validation(err, "1 validation error detected: Value '%s' at "
                                       "'attributeDefinitions.%zu.member.attributeType' failed to satisfy constraint: "
                                       "Member must satisfy enum value set: [B, N, S]", ts, i + 1);
        for (j = 0; j < i; j++)
            if (json_equal(json_object_get(json_array_get(defs, j), "AttributeName"), name))
                return err_validation(err, "Cannot have two attributes with the same name");
    }
    json_array_foreach(ks, i, k) {
        json_t *name = json_object_get(k, "AttributeName"), *type = json_object_get(k, "KeyType");
        if (!json_is_string(name)) return null_member("keySchema.member.attributeName", err);
        if (!json_is_string(type)) return null_member("keySchema.member.keyType", err);
        const char *ts = json_string_value(type);
        if (strcmp(ts, "HASH") && strcmp(ts, "RANGE"))
            return err_validation(err, "1 validation error detected: Value '%s' at 'keySchema.%zu.member.keyType' "
                                       "failed to satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]", ts, i + 1);
        if (i == 0 && strcmp(ts, "HASH"))
            return err_validation(err, "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
        if (i == 1 && strcmp(ts, "RANGE"))
            return err_validation(err, "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
        if (i == 1 && json_equal(name, json_object_get(json_array_get(ks, 0), "AttributeName")))
            return err_validation(err, "Both the Hash Key and the Range Key element in the KeySchema have the same name");
        int defined = 0;
        json_array_foreach(defs, j, d) defined |= json_equal(json_object_get(d, "AttributeName"), name);
        if (!defined)
            return err_validation(err, "One or more parameter values were invalid: Some index key attributes are not "
                                       "defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]",
                                  json_string_value(name),
                                  json_string_value(json_object_get(json_array_get(defs, 0), "AttributeName")));
    }
    if (json_array_size(defs) != nks)
        return err_validation(err, "One or more parameter values were invalid: Number of attributes in KeySchema does "
                                   "not exactly match number of attributes defined in AttributeDefinitions");
    return 0;
}

/* Reads BillingMode and ProvisionedThroughput into the description. */
static int apply_billing(json_t *req, json_t *desc, int creating, qr_err *err)
{
    static const char *const modes[] = {"PROVISIONED", "PAY_PER_REQUEST", NULL};
    const char *mode;
    json_t *pt;
    json_t *old = json_object_get(json_object_get(desc, "BillingModeSummary"), "BillingMode");
    const char *current = old ? json_string_value(old) : "PROVISIONED";
    if (param_enum(req, "BillingMode", modes, creating ? "PROVISIONED" : current, &mode, err)) return -1;
    if (param_object(req, "ProvisionedThroughput", &pt, err)) return -1;
    long long rcu = 0, wcu = 0;
    if (pt) {
        json_t *r = json_object_get(pt, "ReadCapacityUnits"), *w = json_object_get(pt, "WriteCapacityUnits");
        if (r == NULL) return null_member("provisionedThroughput.readCapacityUnits", err);
        if (w == NULL) return null_member("provisionedThroughput.writeCapacityUnits", err);
        if (!json_is_integer(r) || !json_is_integer(w))
            return err_set(err, QR_E_SERIALIZATION, "ProvisionedThroughput values must be integers");
        rcu = json_integer_value(r);
        wcu = json_integer_value(w);
        if (rcu < 1 || wcu < 1)
            return err_validation(err, "1 validation error detected: Value '%lld' at 'provisionedThroughput.%s' "
                                       "failed to satisfy constraint: Member must have value greater than or equal to 1",
                                  rcu < 1 ? rcu : wcu, rcu < 1 ? "readCapacityUnits" : "writeCapacityUnits");
        if (rcu > MAX_PROVISIONED || wcu > MAX_PROVISIONED)
            return err_set(err, QR_E_LIMIT, "Subscriber limit exceeded: Provisioned throughput for the table exceeds the account limit");
    }
    if (strcmp(mode, "PROVISIONED") == 0) {
        if (pt == NULL && (creating || strcmp(current, "PROVISIONED") != 0))
            return err_validation(err, "One or more parameter values were invalid: ReadCapacityUnits and "
                                       "WriteCapacityUnits must both be specified when BillingMode is PROVISIONED");
    } else if (pt) {
        return err_validation(err, "One or more parameter values were invalid: Neither ReadCapacityUnits nor "
                                   "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
    }
    json_t *thr = json_object_get(desc, "ProvisionedThroughput");
    if (thr == NULL) {
        thr = json_pack("{s:i,s:i,s:i}", "NumberOfDecreasesToday", 0, "ReadCapacityUnits", 0, "WriteCapacityUnits", 0);
        json_object_set_new(desc, "ProvisionedThroughput", thr);
    }
    if (strcmp(mode, "PAY_PER_REQUEST") == 0) {
        json_object_set_new(thr, "ReadCapacityUnits", json_integer(0));
        json_object_set_new(thr, "WriteCapacityUnits", json_integer(0));
        if (strcmp(current, "PAY_PER_REQUEST") != 0 || creating)
            json_object_set_new(desc, "BillingModeSummary",
                                json_pack("{s:s,s:f}", "BillingMode", "PAY_PER_REQUEST",
                                          "LastUpdateToPayPerRequestDateTime", now_seconds()));
    } else {
        if (pt) {
            long long old_r = json_integer_value(json_object_get(thr, "ReadCapacityUnits"));
            long long old_w = json_integer_value(json_object_get(thr, "WriteCapacityUnits"));
            if (!creating && (rcu > old_r || wcu > old_w))
                json_object_set_new(thr, "LastIncreaseDateTime", json_real(now_seconds()));
            if (!creating && (rcu < old_r || wcu < old_w)) {
                json_object_set_new(thr, "LastDecreaseDateTime", json_real(now_seconds()));
                json_object_set_new(thr, "NumberOfDecreasesToday",
                                    json_integer(json_integer_value(json_object_get(thr, "NumberOfDecreasesToday")) + 1));
            }
            json_object_set_new(thr, "ReadCapacityUnits", json_integer(rcu));
            json_object_set_new(thr, "WriteCapacityUnits", json_integer(wcu));
        }
        if (creating) json_object_del(desc, "BillingModeSummary");
        else if (strcmp(current, "PROVISIONED") != 0)
            json_object_set_new(desc, "BillingModeSummary", json_pack("{s:s}", "BillingMode", "PROVISIONED"));
    }
    return 0;
}

int op_create_table(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    json_t *name = json_object_get(req, "TableName");
    if (param_check_table_name(name, "tableName", err)) return -1;
    json_t *defs = json_object_get(req, "AttributeDefinitions"), *ks = json_object_get(req, "KeySchema");
    if (check_key_schema(defs, ks, err)) return -1;
    const char *indexes[] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};
    for (int i = 0; i < 2; i++)
        if (json_array_size(json_object_get(req, indexes[i])) > 0)
            return err_validation(err, "One or more parameter values were invalid: %s are not supported by this "
                                       "quarry version; see issue 4", indexes[i]);
    json_t *desc = json_object();
    json_object_set(desc, "AttributeDefinitions", defs);
    json_object_set(desc, "TableName", name);
    json_object_set(desc, "KeySchema", ks);
    json_object_set_new(desc, "TableStatus", json_string("ACTIVE"));
    json_object_set_new(desc, "CreationDateTime", json_real(now_seconds()));
    if (apply_billing(req, desc, 1, err)) {
        json_decref(desc);
        return -1;
    }
    json_object_set_new(desc, "TableSizeBytes", json_integer(0));
    json_object_set_new(desc, "ItemCount", json_integer(0));
    char arn[512];
    snprintf(arn, sizeof arn, "arn:aws:dynamodb:ddblocal:000000000000:table/%s", json_string_value(name));
    json_object_set_new(desc, "TableArn", json_string(arn));
    json_object_set_new(desc, "TableId", new_uuid());
    const char *copied[] = {"StreamSpecification", "SSESpecification", "TableClassSummary", NULL};
    for (int i = 0; copied[i]; i++) {
        json_t *v = json_object_get(req, copied[i]);
        if (v) json_object_set(desc, copied[i], v);
    }
    int protect;
    if (param_bool(req, "DeletionProtectionEnabled", 0, &protect, err)) {
        json_decref(desc);
        return -1;
    }
    json_object_set_new(desc, "DeletionProtectionEnabled", json_boolean(protect));
    table *t;
    json_t *answer = json_deep_copy(desc);
    if (catalog_create(db, desc, &t, err)) {
        json_decref(answer);
        return -1;
    }
    catalog_release(db, t);
    json_object_set_new(answer, "TableStatus", json_string("CREATING"));
    *resp = json_pack("{s:o}", "TableDescription", answer);
    return 0;
}

/* A copy of t's description with current statistics. */
static json_t *describe(qr_db *db, table *t)
{
    pthread_mutex_lock(&db->catalog_lock);
    json_t *desc = json_deep_copy(t->desc);
    pthread_mutex_unlock(&db->catalog_lock);
    table_stats_fill(db, t, desc);
    return desc;
}

static int table_not_found(json_t *req, qr_err *err)
{
    return err_set(err, QR_E_NOT_FOUND, "Requested resource not found: Table: %s not found",
                   json_string_value(json_object_get(req, "TableName")));
}

int op_describe_table(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    table *t;
    if (param_check_table_name(json_object_get(req, "TableName"), "tableName", err)) return -1;
    if ((t = catalog_get(db, json_string_value(json_object_get(req, "TableName")))) == NULL)
        return table_not_found(req, err);
    *resp = json_pack("{s:o}", "Table", describe(db, t));
    catalog_release(db, t);
    return 0;
}

int op_list_tables(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    long long limit = 100;
    int has_limit;
    const char *start;
    if (param_int(req, "Limit", 1, 100, &limit, &has_limit, err)) return -1;
    if (!has_limit) limit = 100;
    json_t *esn = json_object_get(req, "ExclusiveStartTableName");
    if (esn && param_check_table_name(esn, "exclusiveStartTableName", err)) return -1;
    if (param_string(req, "ExclusiveStartTableName", &start, err)) return -1;
    json_t *all = catalog_names(db), *names = json_array();
    size_t i;
    json_t *n;
    const char *last = NULL;
    int more = 0;
    json_array_foreach(all, i, n) {
        if (start && strcmp(json_string_value(n), start) <= 0) continue;
        if ((long long)json_array_size(names) == limit) {
            more = 1;
            break;
        }
        json_array_append(names, n);
        last = json_string_value(n);
    }
    *resp = json_pack("{s:o}", "TableNames", names);
    if (more && last) json_object_set_new(*resp, "LastEvaluatedTableName", json_string(last));
    json_decref(all);
    return 0;
}

int op_delete_table(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    table *t;
    if (param_check_table_name(json_object_get(req, "TableName"), "tableName", err)) return -1;
    if ((t = catalog_get(db, json_string_value(json_object_get(req, "TableName")))) == NULL)
        return table_not_found(req, err);
    if (json_is_true(json_object_get(t->desc, "DeletionProtectionEnabled"))) {
        catalog_release(db, t);
        return err_validation(err, "Resource cannot be deleted as it is currently protected against deletion. "
                                   "Disable deletion protection first.");
    }
    json_t *desc = describe(db, t);
    int rc = catalog_delete(db, t, err);
    catalog_release(db, t);
    if (rc) {
        json_decref(desc);
        return -1;
    }
    json_object_set_new(desc, "TableStatus", json_string("DELETING"));
    *resp = json_pack("{s:o}", "TableDescription", desc);
    return 0;
}

int op_update_table(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    table *t;
    if (param_table(db, req, "TableName", &t, err)) return -1;
    int rc = -1;
    json_t *desc = NULL;
    const char *changes[] = {"ProvisionedThroughput", "BillingMode", "DeletionProtectionEnabled",
                             "StreamSpecification", "SSESpecification", "TableClass"};
    int any = 0;
    for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++) any |= json_object_get(req, changes[i]) != NULL;
    if (json_array_size(json_object_get(req, "GlobalSecondaryIndexUpdates")) > 0) {
        err_validation(err, "One or more parameter values were invalid: GlobalSecondaryIndexUpdates are not "
                            "supported by this quarry version; see issue 4");
        goto done;
    }
    if (!any) {
        err_validation(err, "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                            "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required");
        goto done;
    }
    pthread_mutex_lock(&db->catalog_lock);
    desc = json_deep_copy(t->desc);
    pthread_mutex_unlock(&db->catalog_lock);
    if (apply_billing(req, desc, 0, err)) goto done;
    json_t *dp = json_object_get(req, "DeletionProtectionEnabled");
    if (dp) {
        if (!json_is_boolean(dp)) {
            err_set(err, QR_E_SERIALIZATION, "DeletionProtectionEnabled must be a boolean");
            goto done;
        }
        json_object_set(desc, "DeletionProtectionEnabled", dp);
    }
    json_t *ss = json_object_get(req, "StreamSpecification");
    if (ss) json_object_set(desc, "StreamSpecification", ss);
    if (catalog_update(db, t, json_incref(desc), err)) goto done;
    json_t *answer = describe(db, t);
    *resp = json_pack("{s:o}", "TableDescription", answer);
    rc = 0;
done:
    json_decref(desc);
    catalog_release(db, t);
    return rc;
}
