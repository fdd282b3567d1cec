/* apply.c — `quarry model apply`: makes the tables at a DynamoDB endpoint match the model,
 * through the DynamoDB API itself, so the same command prepares quarry, DynamoDB Local or
 * DynamoDB. It never deletes. Requests go through client.c (libcurl's built-in SigV4). */
#include "checker/client.h"
#include "checker/output.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_SECONDS 600

static json_t *describe(client *c, const char *table, qr_err *err)
{
    json_t *req = json_pack("{s:s}", "TableName", table), *resp = NULL;
    int rc = client_call(c, "DescribeTable", req, &resp, err);
    json_decref(req);
    return rc ? NULL : resp;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits until the table and all its GSIs are ACTIVE. */
static int wait_active(client *c, const char *table, qr_err *err)
{
    time_t start = time(NULL);
    long delay = 100;
    for (;;) {
        json_t *d = describe(c, table, err);
        if (d == NULL) return -1;
        json_t *t = json_object_get(d, "Table");
        const char *st = json_string_value(json_object_get(t, "TableStatus"));
        int active = st == NULL || strcmp(st, "ACTIVE") == 0;
        size_t i;
        json_t *g;
        json_array_foreach(json_object_get(t, "GlobalSecondaryIndexes"), i, g)
        {
            const char *is = json_string_value(json_object_get(g, "IndexStatus"));
            if (is && strcmp(is, "ACTIVE") != 0) active = 0;
        }
        json_decref(d);
        if (active) return 0;
        if (time(NULL) - start > WAIT_SECONDS)
            return err_set(err, QR_E_INTERNAL, "table %s is not ACTIVE after %d seconds", table,
                           WAIT_SECONDS);
        pause_ms(delay);
        if (delay < 2000) delay *= 2;
    }
}

static json_t *find_index(json_t *arr, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        const char *n = json_string_value(json_object_get(v, "IndexName"));
        if (n && strcmp(n, name) == 0) return v;
    }
    return NULL;
}

/* The live table's key schema matches the wanted one. */
static int same_keys(json_t *a, json_t *b)
{
    if (json_array_size(a) != json_array_size(b)) return 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        const char *xn = json_string_value(json_object_get(x, "AttributeName")),
                   *yn = json_string_value(json_object_get(y, "AttributeName"));
        const char *xt = json_string_value(json_object_get(x, "KeyType")),
                   *yt = json_string_value(json_object_get(y, "KeyType"));
        if (!xn || !yn || !xt || !yt || strcmp(xn, yn) || strcmp(xt, yt)) return 0;
    }
    return 1;
}

static int apply_ttl(client *c, const m_table *t, FILE *log, qr_err *err)
{
    json_t *req = json_pack("{s:s}", "TableName", t->name), *resp = NULL;
    qr_err e2;
    err_init(&e2);
    int rc = client_call(c, "DescribeTimeToLive", req, &resp, &e2);
    json_decref(req);
    if (rc == 0) {
        json_t *d = json_object_get(resp, "TimeToLiveDescription");
        const char *st = json_string_value(json_object_get(d, "TimeToLiveStatus"));
        const char *an = json_string_value(json_object_get(d, "AttributeName"));
        int on = st && (strcmp(st, "ENABLED") == 0 || strcmp(st, "ENABLING") == 0) && an &&
                 strcmp(an, t->ttl) == 0;
        json_decref(resp);
        if (on) return 0;
    } else if (e2.type && strcmp(e2.type, QR_E_UNKNOWN_OP) == 0) {
        /* an endpoint without TTL support (an older quarry): the tables are still usable */
        fprintf(
            log,
            "table %s: warning: the endpoint does not support TTL, so %s will not expire items\n",
            t->name, t->ttl);
        return 0;
    } else {
        return err_set(err, e2.type, "%s", e2.msg);
    }
    req = json_pack("{s:s, s:{s:s, s:b}}", "TableName", t->name, "TimeToLiveSpecification",
                    "AttributeName", t->ttl, "Enabled", 1);
    rc = client_call(c, "UpdateTimeToLive", req, &resp, err);
    json_decref(req);
    if (rc) return -1;
    json_decref(resp);
    fprintf(log, "table %s: TTL enabled on %s\n", t->name, t->ttl);
    return 0;
}

/* Brings billing mode and provisioned capacity in line with the model (one UpdateTable). */
static int apply_billing(client *c, const m_table *t, json_t *live, json_t *want, FILE *log,
                         qr_err *err, int *changed)
{
    const char *mode = json_string_value(
        json_object_get(json_object_get(live, "BillingModeSummary"), "BillingMode"));
    if (mode == NULL) mode = "PROVISIONED"; /* DynamoDB omits the summary for provisioned tables */
    const char *wanted = json_string_value(json_object_get(want, "BillingMode"));
    json_t *pt = json_object_get(live, "ProvisionedThroughput");
    json_int_t r = json_integer_value(json_object_get(pt, "ReadCapacityUnits"));
    json_int_t w = json_integer_value(json_object_get(pt, "WriteCapacityUnits"));
    int mode_differs = strcmp(mode, wanted) != 0;
    int capacity_differs = t->provisioned && (r != (json_int_t)t->rcu || w != (json_int_t)t->wcu);
    if (!mode_differs && !capacity_differs) return 0;
    json_t *req = json_pack("{s:s}", "TableName", t->name), *resp = NULL;
    if (req == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    if (mode_differs) json_object_set_new(req, "BillingMode", json_string(wanted));
    if (t->provisioned)
        json_object_set(req, "ProvisionedThroughput",
                        json_object_get(want, "ProvisionedThroughput"));
    int rc = client_call(c, "UpdateTable", req, &resp, err);
    json_decref(req);
    if (rc) return -1;
    json_decref(resp);
    if (wait_active(c, t->name, err)) return -1;
    if (t->provisioned)
        fprintf(log, "table %s: billing set to PROVISIONED (%.0f RCU, %.0f WCU)\n", t->name, t->rcu,
                t->wcu);
    else
        fprintf(log, "table %s: billing set to PAY_PER_REQUEST\n", t->name);
    *changed = 1;
    return 0;
}

/* Creates a missing table (CreateTable), aligns billing mode and capacity, adds missing
 * GSIs one at a time (UpdateTable, waiting for each to become ACTIVE, as DynamoDB requires)
 * and enables TTL. Tables and indexes the model does not mention are left alone, and
 * changes DynamoDB cannot make (key schema, new LSIs on an existing table) are reported as
 * errors. */
static int apply_table(client *c, const qr_model *m, const m_table *t, FILE *log, qr_err *err)
{
    json_t *want = model_export_create_table(m, t);
    if (want == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    int rc = -1;
    qr_err e2;
    err_init(&e2);
    json_t *d = describe(c, t->name, &e2), *resp = NULL;
    if (d == NULL) {
        if (e2.type == NULL || strcmp(e2.type, QR_E_NOT_FOUND) != 0) {
            err_set(err, e2.type, "%s", e2.msg);
            goto done;
        }
        if (client_call(c, "CreateTable", want, &resp, err)) goto done;
        json_decref(resp);
        if (wait_active(c, t->name, err)) goto done;
        fprintf(log, "table %s: created (%zu index%s)\n", t->name, t->nidx,
                t->nidx == 1 ? "" : "es");
    } else {
        json_t *live = json_object_get(d, "Table");
        if (!same_keys(json_object_get(live, "KeySchema"), json_object_get(want, "KeySchema"))) {
            err_validation(err,
                           "table %s exists with a different key schema; DynamoDB cannot change a "
                           "table's keys (create a new table and migrate)",
                           t->name);
            goto done;
        }
        for (size_t i = 0; i < t->nidx; i++)
            if (t->idx[i].local &&
                !find_index(json_object_get(live, "LocalSecondaryIndexes"), t->idx[i].name)) {
                err_validation(err,
                               "table %s exists without local index %s; LSIs can only be created "
                               "with the table (recreate it, or use a GSI)",
                               t->name, t->idx[i].name);
                goto done;
            }
        int changed = 0;
        if (apply_billing(c, t, live, want, log, err, &changed)) goto done;
        size_t i;
        json_t *g;
        json_array_foreach(json_object_get(want, "GlobalSecondaryIndexes"), i, g)
        {
            const char *name = json_string_value(json_object_get(g, "IndexName"));
            if (find_index(json_object_get(live, "GlobalSecondaryIndexes"), name)) continue;
            json_t *req =
                json_pack("{s:s, s:O, s:[{s:O}]}", "TableName", t->name, "AttributeDefinitions",
                          json_object_get(want, "AttributeDefinitions"),
                          "GlobalSecondaryIndexUpdates", "Create", g);
            int r2 = req ? client_call(c, "UpdateTable", req, &resp, err)
                         : err_set(err, QR_E_INTERNAL, "out of memory");
            json_decref(req);
            if (r2) goto done;
            json_decref(resp);
            if (wait_active(c, t->name, err)) goto done;
            fprintf(log, "table %s: GSI %s created\n", t->name, name);
            changed = 1;
        }
        json_array_foreach(json_object_get(live, "GlobalSecondaryIndexes"), i, g)
        {
            const char *name = json_string_value(json_object_get(g, "IndexName"));
            if (name && !model_table_index(t, name))
                fprintf(log, "table %s: GSI %s is not in the model; left in place\n", t->name,
                        name);
        }
        if (!changed) fprintf(log, "table %s: exists, up to date\n", t->name);
    }
    if (t->ttl && apply_ttl(c, t, log, err)) goto done;
    rc = 0;
done:
    json_decref(d);
    json_decref(want);
    return rc;
}

int model_apply(const qr_model *m, const char *endpoint, FILE *log, qr_err *err)
{
    if (strncmp(endpoint, "http://", 7) != 0 && strncmp(endpoint, "https://", 8) != 0)
        return err_validation(err, "endpoint '%s' must be an http:// or https:// URL", endpoint);
    client c;
    int rc = client_init(&c, endpoint, err);
    for (size_t i = 0; rc == 0 && i < m->ntables; i++)
        rc = apply_table(&c, m, &m->tables[i], log, err);
    client_free(&c);
    return rc;
}
