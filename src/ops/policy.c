/* policy.c — PutResourcePolicy, GetResourcePolicy and DeleteResourcePolicy: the
 * resource-based policy document attached to a table or to one of its streams. quarry
 * does not evaluate IAM policies (its authentication is by access key alone), so a policy
 * is stored (by the engine, meta.h) and given back, with DynamoDB's revision ids: each Put
 * or Delete makes a new one, and ExpectedRevisionId makes the change conditional. */
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

#define KIND META_SETTING_POLICY
#define MAX_POLICY_BYTES 20480

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
        return err_violation(err, arn, "resourceArn", QR_MSG_LENGTH_BETWEEN, 1LL, 1283LL);
    arn_parts a;
    if (arn_split_resource(arn, &a, err)) return -1;
    if (a.sub && (!arn_is(a.sub, a.sub_len, "stream") || a.sub_name == NULL || *a.sub_name == '\0'))
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER
                              "Invalid resource arn provided, only "
                              "table or stream is accepted. Provided resource arn: %s",
                              arn);
    if (!arn_is(a.partition, a.partition_len, "aws") || a.region_len == 0 || a.table_len == 0 ||
        a.table_len > 255)
        return err_validation(err, QR_MSG_INVALID_PARAMETER "Invalid resource Arn: %s", arn);
    if (!arn_is(a.account, a.account_len, QR_ACCOUNT))
        return err_validation(
            err, "This action is only supported by accounts that match the resource owner\u2019s "
                 "account.");
    char name[256];
    memcpy(name, a.table, a.table_len);
    name[a.table_len] = '\0';
    if ((*out = catalog_get(db, name)) == NULL)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_TABLE_NOT_FOUND, name);
    sub[0] = '\0';
    if (a.sub) {
        json_t *d = stream_find(db, arn);
        json_decref(d);
        if (d == NULL) {
            catalog_release(db, *out);
            return err_set(err, QR_E_NOT_FOUND,
                           QR_MSG_NOT_FOUND ": Stream: %s not found for Table: %s", a.sub_name,
                           name);
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
 * last one the database gave. */
static void new_revision(qr_db *db, char *out, size_t cap)
{
    uint64_t r = meta_revision_next(db, (uint64_t)(ops_now_seconds() * 1e3));
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
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER "Maximum policy size of %d bytes "
                                                       "exceeded",
                              MAX_POLICY_BYTES);
    json_t *doc = json_loads(policy, JSON_REJECT_DUPLICATES, NULL);
    json_t *st = json_object_get(doc, "Statement");
    int rc = 0;
    if (!json_is_object(doc))
        rc = err_validation(err, QR_MSG_INVALID_PARAMETER "Invalid policy document: This policy "
                                                          "contains invalid Json");
    else if (st == NULL || (json_is_array(st) && json_array_size(st) == 0) ||
             !(json_is_array(st) || json_is_object(st)))
        rc = err_validation(err, QR_MSG_INVALID_PARAMETER "Invalid policy document: Could not "
                                                          "parse the policy: Statement is empty!");
    json_decref(doc);
    return rc;
}

/* A change of a policy record, under the settings' lock: the request, and the revision
 * it answers. */
typedef struct policy_change {
    qr_db *db;
    json_t *req;
    const char *table;
    const char *policy; /* the document to put; NULL for a delete */
    char rev[32];       /* the answer's revision id ("" for none) */
} policy_change;

static int change_put(const json_t *cur, json_t **next, void *arg, qr_err *err)
{
    policy_change *c = arg;
    if (check_expected(c->req, cur, c->table, err)) return -1;
    if (has_policy(cur) &&
        same_document(json_string_value(json_object_get(cur, "Policy")), c->policy)) {
        /* The same document again changes nothing, its revision included. */
        const char *was = json_string_value(json_object_get(cur, "RevisionId"));
        snprintf(c->rev, sizeof c->rev, "%s", was ? was : "");
        return 0;
    }
    new_revision(c->db, c->rev, sizeof c->rev);
    *next = json_pack("{s:s,s:s}", "Policy", c->policy, "RevisionId", c->rev);
    return *next ? 0 : err_set(err, QR_E_INTERNAL, "out of memory");
}

int op_put_resource_policy(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
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
    policy_change change = {db, req, table_name(t), policy, ""};
    int rc = meta_setting_update(db, t, KIND, sub, change_put, &change, err);
    if (rc == 0) c->answer = json_pack("{s:s}", "RevisionId", change.rev);
    catalog_release(db, t);
    return rc;
}

int op_get_resource_policy(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t;
    json_t *cur;
    char sub[300];
    if (arn_table(db, req, &t, sub, sizeof sub, err)) return -1;
    int rc = meta_setting_get(db, t, KIND, sub, &cur, err);
    catalog_release(db, t);
    if (rc) return -1;
    if (!has_policy(cur)) {
        json_decref(cur);
        return not_found(json_string_value(json_object_get(req, "ResourceArn")), err);
    }
    c->answer = json_pack("{s:O,s:O}", "Policy", json_object_get(cur, "Policy"), "RevisionId",
                          json_object_get(cur, "RevisionId"));
    json_decref(cur);
    return 0;
}

static int change_delete(const json_t *cur, json_t **next, void *arg, qr_err *err)
{
    policy_change *c = arg;
    if (check_expected(c->req, cur, c->table, err)) return -1;
    /* The answer is the revision the record had (none if there never was a policy); a
     * policy present leaves a tombstone with the deletion's. */
    const char *was = json_string_value(json_object_get(cur, "RevisionId"));
    snprintf(c->rev, sizeof c->rev, "%s", was ? was : "");
    if (!has_policy(cur)) return 0;
    char rev[32];
    new_revision(c->db, rev, sizeof rev);
    *next = json_pack("{s:b,s:s}", "Deleted", 1, "RevisionId", rev);
    return *next ? 0 : err_set(err, QR_E_INTERNAL, "out of memory");
}

int op_delete_resource_policy(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t;
    char sub[300];
    if (arn_table(db, req, &t, sub, sizeof sub, err)) return -1;
    policy_change change = {db, req, table_name(t), NULL, ""};
    int rc = meta_setting_update(db, t, KIND, sub, change_delete, &change, err);
    if (rc == 0) {
        /* Deleting nothing succeeds: with no revision if there never was a policy, else
         * with the deletion's. */
        c->answer = json_object();
        if (change.rev[0]) json_object_set_new(c->answer, "RevisionId", json_string(change.rev));
    }
    catalog_release(db, t);
    return rc;
}
