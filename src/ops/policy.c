/* policy.c — PutResourcePolicy, GetResourcePolicy and DeleteResourcePolicy: the
 * resource-based policy document attached to a table or to one of its streams.
 *
 * quarry does not evaluate IAM policies (its authentication is by access key alone), so
 * a policy is stored and given back, with DynamoDB's revision ids: each Put or Delete
 * makes a new one, and ExpectedRevisionId makes the change conditional on the current. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

#define KIND 'P'
#define MAX_POLICY_BYTES 20480

static pthread_mutex_t update_lock =
    PTHREAD_MUTEX_INITIALIZER; /* one read-modify-write at a time */
static uint64_t last_revision; /* under update_lock */

/* The table a ResourceArn names (held), or the error DynamoDB gives; *sub is the
 * setting's sub-name: NULL for the table's own policy, "stream/LABEL" for one of its
 * streams' (which must exist). */
static int arn_table(qr_db *db, json_t *req, table **out, char *sub, size_t cap, qr_err *err)
{
    const char *arn;
    if (param_string(req, "ResourceArn", &arn, err)) return -1;
    if (arn == NULL) return param_null("resourceArn", err);
    size_t n = strlen(arn);
    if (n < 1 || n > 1283)
        return err_validation(
            err,
            "1 validation error detected: Value '%s' at 'resourceArn' failed to satisfy "
            "constraint: Member must have length between 1 and 1283",
            arn);
    arn_parts a;
    if (arn_split_resource(arn, &a, err)) return -1;
    if (a.sub && (!arn_is(a.sub, a.sub_len, "stream") || a.sub_name == NULL || *a.sub_name == '\0'))
        return err_validation(
            err,
            "One or more parameter values were invalid: Invalid resource arn provided, only "
            "table or stream is accepted. Provided resource arn: %s",
            arn);
    if (!arn_is(a.partition, a.partition_len, "aws") || a.region_len == 0 || a.table_len == 0 ||
        a.table_len > 255)
        return err_validation(
            err, "One or more parameter values were invalid: Invalid resource Arn: %s", arn);
    if (!arn_is(a.account, a.account_len, QR_ACCOUNT))
        return err_validation(
            err, "This action is only supported by accounts that match the resource owner\u2019s "
                 "account.");
    char name[256];
    memcpy(name, a.table, a.table_len);
    name[a.table_len] = '\0';
    if ((*out = catalog_get(db, name)) == NULL)
        return err_set(err, QR_E_NOT_FOUND, "Requested resource not found: Table: %s not found",
                       name);
    sub[0] = '\0';
    if (a.sub) {
        json_t *d = stream_find(db, arn);
        json_decref(d);
        if (d == NULL) {
            catalog_release(db, *out);
            return err_set(err, QR_E_NOT_FOUND,
                           "Requested resource not found: Stream: %s not found for Table: %s",
                           a.sub_name, name);
        }
        snprintf(sub, cap, "stream/%s", a.sub_name);
    }
    return 0;
}

static int not_found(const char *arn, qr_err *err)
{
    return err_set(err, "PolicyNotFoundException",
                   "Resource-based policy not found for the provided ResourceArn: %s", arn);
}

/* A stored policy record is {"Policy": text, "RevisionId": id}, or after a delete the
 * tombstone {"Deleted": true, "RevisionId": the deletion's id}, which answers a repeated
 * delete as DynamoDB does. */
static int has_policy(const json_t *cur)
{
    return cur && !json_is_true(json_object_get(cur, "Deleted"));
}

/* Checks ExpectedRevisionId (if given) against the current record cur (NULL: none) of
 * table name. "NO_POLICY" expects that there is none. */
static int check_expected(json_t *req, const json_t *cur, const char *name, qr_err *err)
{
    const char *expected;
    if (param_string(req, "ExpectedRevisionId", &expected, err)) return -1;
    if (expected == NULL) return 0;
    const char *now = json_string_value(json_object_get(cur, "RevisionId"));
    if (strcmp(expected, "NO_POLICY") == 0) {
        if (!has_policy(cur)) return 0;
        return err_set(err, "PolicyNotFoundException",
                       "Resource-based policy not found for the provided ResourceArn: "
                       "Requested policy update expecting none to be present for table %s, but a "
                       "policy exists with "
                       "revision id %s.",
                       name, now);
    }
    if (!has_policy(cur))
        return err_set(err, "PolicyNotFoundException",
                       "Resource-based policy not found for the provided ResourceArn: "
                       "Requested update for policy with revision id %s, but table %s has no "
                       "associated policy.",
                       expected, name);
    if (strcmp(expected, now) != 0)
        return err_set(err, "PolicyNotFoundException",
                       "Resource-based policy not found for the provided ResourceArn: "
                       "Requested update for policy with revision id %s, but the policy associated "
                       "to target table %s "
                       "has revision id %s.",
                       expected, name, now);
    return 0;
}

/* A new revision id: the time of the change in epoch milliseconds, always above the
 * last one given. */
static void new_revision(char *out, size_t cap)
{
    uint64_t r = (uint64_t)(ops_now_seconds() * 1e3);
    if (r <= last_revision) r = last_revision + 1;
    last_revision = r;
    snprintf(out, cap, "%llu", (unsigned long long)r);
}

/* 1 when the two documents say the same (layout and key order aside). */
static int same_document(const char *a, const char *b)
{
    json_t *x = json_loads(a, 0, NULL), *y = json_loads(b, 0, NULL);
    int same = x && y && json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return same;
}

/* Checks a policy document as DynamoDB does before storing it: its size, that it is
 * JSON, and that it has statements. */
static int check_policy(const char *policy, qr_err *err)
{
    if (strlen(policy) > MAX_POLICY_BYTES)
        return err_validation(
            err,
            "One or more parameter values were invalid: Maximum policy size of %d bytes "
            "exceeded",
            MAX_POLICY_BYTES);
    json_t *doc = json_loads(policy, JSON_REJECT_DUPLICATES, NULL);
    json_t *st = json_object_get(doc, "Statement");
    int rc = 0;
    if (!json_is_object(doc))
        rc = err_validation(
            err, "One or more parameter values were invalid: Invalid policy document: This policy "
                 "contains invalid Json");
    else if (st == NULL || (json_is_array(st) && json_array_size(st) == 0) ||
             !(json_is_array(st) || json_is_object(st)))
        rc = err_validation(
            err, "One or more parameter values were invalid: Invalid policy document: Could not "
                 "parse the policy: Statement is empty!");
    json_decref(doc);
    return rc;
}

int op_put_resource_policy(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    const char *policy;
    int confirm;
    if (param_string(req, "Policy", &policy, err) ||
        param_bool(req, "ConfirmRemoveSelfResourceAccess", 0, &confirm, err))
        return -1;
    if (policy == NULL) return param_null("policy", err);
    table *t;
    char sub[300];
    if (arn_table(db, req, &t, sub, sizeof sub, err)) return -1;
    if (check_policy(policy, err)) {
        catalog_release(db, t);
        return -1;
    }
    json_t *cur = NULL, *next = NULL;
    char rev[32];
    pthread_mutex_lock(&update_lock);
    int rc = setting_get(db, t, KIND, sub, &cur, err);
    if (rc == 0) rc = check_expected(req, cur, table_name(t), err);
    if (rc == 0 && has_policy(cur) &&
        same_document(json_string_value(json_object_get(cur, "Policy")), policy)) {
        /* The same document again changes nothing, its revision included. */
        snprintf(rev, sizeof rev, "%s", json_string_value(json_object_get(cur, "RevisionId")));
    } else if (rc == 0) {
        new_revision(rev, sizeof rev);
        next = json_pack("{s:s,s:s}", "Policy", policy, "RevisionId", rev);
        rc = setting_put(db, t, KIND, sub, next, err);
    }
    pthread_mutex_unlock(&update_lock);
    if (rc == 0) *resp = json_pack("{s:s}", "RevisionId", rev);
    json_decref(cur);
    json_decref(next);
    catalog_release(db, t);
    return rc;
}

int op_get_resource_policy(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    table *t;
    json_t *cur;
    char sub[300];
    if (arn_table(db, req, &t, sub, sizeof sub, err)) return -1;
    int rc = setting_get(db, t, KIND, sub, &cur, err);
    catalog_release(db, t);
    if (rc) return -1;
    if (!has_policy(cur)) {
        json_decref(cur);
        return not_found(json_string_value(json_object_get(req, "ResourceArn")), err);
    }
    *resp = json_pack("{s:O,s:O}", "Policy", json_object_get(cur, "Policy"), "RevisionId",
                      json_object_get(cur, "RevisionId"));
    json_decref(cur);
    return 0;
}

int op_delete_resource_policy(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    table *t;
    char sub[300];
    if (arn_table(db, req, &t, sub, sizeof sub, err)) return -1;
    json_t *cur = NULL, *tomb = NULL;
    pthread_mutex_lock(&update_lock);
    int rc = setting_get(db, t, KIND, sub, &cur, err);
    if (rc == 0) rc = check_expected(req, cur, table_name(t), err);
    if (rc == 0 && has_policy(cur)) {
        /* The answer is the revision removed; the tombstone keeps when it was. */
        char rev[32];
        new_revision(rev, sizeof rev);
        tomb = json_pack("{s:b,s:s}", "Deleted", 1, "RevisionId", rev);
        rc = setting_put(db, t, KIND, sub, tomb, err);
    }
    pthread_mutex_unlock(&update_lock);
    if (rc == 0) {
        /* Deleting nothing succeeds: with no revision if there never was a policy, else
         * with the deletion's. */
        *resp = json_object();
        if (cur) json_object_set(*resp, "RevisionId", json_object_get(cur, "RevisionId"));
    }
    json_decref(cur);
    json_decref(tomb);
    catalog_release(db, t);
    return rc;
}
