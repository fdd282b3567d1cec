/* policy.c — PutResourcePolicy, GetResourcePolicy and DeleteResourcePolicy: the
 * resource-based policy document attached to a table.
 *
 * quarry does not evaluate IAM policies (its authentication is by access key alone), so
 * a policy is stored and given back, with DynamoDB's revision ids: each Put or Delete
 * makes a new one, and ExpectedRevisionId makes the change conditional on the current. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

#define KIND 'P'
#define ACCOUNT "000000000000"
#define MAX_POLICY_BYTES 20480

static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER; /* one read-modify-write at a time */
static uint64_t last_revision;                                   /* under update_lock */

/* The table a ResourceArn names (held), or the error DynamoDB gives. */
static int arn_table(qr_db *db, json_t *req, table **out, qr_err *err)
{
    const char *arn;
    if (param_string(req, "ResourceArn", &arn, err)) return -1;
    if (arn == NULL) return param_null("resourceArn", err);
    size_t n = strlen(arn);
    if (n < 1 || n > 1283)
        return err_validation(err, "1 validation error detected: Value '%s' at 'resourceArn' failed to satisfy "
                                   "constraint: Member must have length between 1 and 1283", arn);
    const char *p = arn, *account = NULL;
    size_t alen = 0;
    int ok = strncmp(p, "arn:aws:dynamodb:", 17) == 0;
    if (ok) {
        p += 17;
        size_t rlen = strcspn(p, ":/");
        ok = rlen > 0 && p[rlen] == ':';
        p += rlen + 1;
    }
    if (ok) {
        account = p;
        alen = strcspn(p, ":/");
        ok = alen > 0 && p[alen] == ':';
        p += alen + 1;
    }
    ok = ok && strncmp(p, "table/", 6) == 0 && strlen(p + 6) >= 3 && strlen(p + 6) <= 255 && !strchr(p + 6, '/');
    if (!ok) return err_validation(err, "Invalid ResourceArn provided as input %s", arn);
    if (alen != strlen(ACCOUNT) || strncmp(account, ACCOUNT, alen) != 0)
        return err_set(err, "AccessDeniedException", "User: arn:aws:iam::" ACCOUNT ":root is not authorized to "
                       "perform this operation on resource: %s because no resource-based policy allows it", arn);
    if ((*out = catalog_get(db, p + 6)) == NULL)
        return err_set(err, QR_E_NOT_FOUND, "Requested resource not found: Table: %s not found", p + 6);
    return 0;
}

static int not_found(const char *arn, qr_err *err)
{
    return err_set(err, "PolicyNotFoundException", "Resource-based policy not found for the provided ResourceArn: %s",
                   arn);
}

/* Checks ExpectedRevisionId (if given) against the current policy cur (NULL: none). */
static int check_expected(json_t *req, const json_t *cur, const char *arn, qr_err *err)
{
    const char *expected;
    if (param_string(req, "ExpectedRevisionId", &expected, err)) return -1;
    if (expected == NULL) return 0;
    if (cur == NULL) return not_found(arn, err);
    const char *now = json_string_value(json_object_get(cur, "RevisionId"));
    if (strcmp(expected, now) != 0)
        return err_set(err, "PolicyNotFoundException", "Resource-based policy not found for the provided ResourceArn: "
                       "Requested update for policy with revision id %s, but the policy associated to target table %s "
                       "has revision id %s.", expected, arn, now);
    return 0;
}

/* A new revision id: the time in microseconds, always above the last one given. */
static void new_revision(char *out, size_t cap)
{
    uint64_t r = (uint64_t)(ops_now_seconds() * 1e6);
    if (r <= last_revision) r = last_revision + 1;
    last_revision = r;
    snprintf(out, cap, "%llu", (unsigned long long)r);
}

int op_put_resource_policy(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    const char *policy;
    int confirm;
    if (param_string(req, "Policy", &policy, err) ||
        param_bool(req, "ConfirmRemoveSelfResourceAccess", 0, &confirm, err))
        return -1;
    if (policy == NULL) return param_null("policy", err);
    if (strlen(policy) > MAX_POLICY_BYTES)
        return err_validation(err, "Policy document size exceeds the limit of %d bytes", MAX_POLICY_BYTES);
    json_t *doc = json_loads(policy, JSON_REJECT_DUPLICATES, NULL);
    int valid = json_is_object(doc) && json_object_get(doc, "Statement") != NULL;
    json_decref(doc);
    if (!valid) return err_validation(err, "Resource-based policy must contain a valid JSON policy document with a "
                                           "Statement: %s", policy);
    table *t;
    if (arn_table(db, req, &t, err)) return -1;
    const char *arn = json_string_value(json_object_get(req, "ResourceArn"));
    json_t *cur = NULL, *next = NULL;
    char rev[32];
    pthread_mutex_lock(&update_lock);
    int rc = setting_get(db, t, KIND, NULL, &cur, err);
    if (rc == 0) rc = check_expected(req, cur, arn, err);
    if (rc == 0) {
        new_revision(rev, sizeof rev);
        next = json_pack("{s:s,s:s}", "Policy", policy, "RevisionId", rev);
        rc = setting_put(db, t, KIND, NULL, next, err);
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
    if (arn_table(db, req, &t, err)) return -1;
    int rc = setting_get(db, t, KIND, NULL, &cur, err);
    catalog_release(db, t);
    if (rc) return -1;
    if (cur == NULL) return not_found(json_string_value(json_object_get(req, "ResourceArn")), err);
    *resp = json_pack("{s:O,s:O}", "Policy", json_object_get(cur, "Policy"), "RevisionId",
                      json_object_get(cur, "RevisionId"));
    json_decref(cur);
    return 0;
}

int op_delete_resource_policy(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    table *t;
    if (arn_table(db, req, &t, err)) return -1;
    const char *arn = json_string_value(json_object_get(req, "ResourceArn"));
    json_t *cur = NULL;
    char rev[32];
    pthread_mutex_lock(&update_lock);
    int rc = setting_get(db, t, KIND, NULL, &cur, err);
    if (rc == 0 && cur == NULL) rc = not_found(arn, err);
    if (rc == 0) rc = check_expected(req, cur, arn, err);
    if (rc == 0) rc = setting_put(db, t, KIND, NULL, NULL, err);
    if (rc == 0) new_revision(rev, sizeof rev);
    pthread_mutex_unlock(&update_lock);
    if (rc == 0) *resp = json_pack("{s:s}", "RevisionId", rev);
    json_decref(cur);
    catalog_release(db, t);
    return rc;
}
