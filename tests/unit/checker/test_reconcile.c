/* test_reconcile.c — reconcile never overwrites what changed after it read: a copy
 * rewritten, or its source renamed, between reconcile's read and its repair is left as
 * the later write made it (the repair is skipped and counted), while the other stale
 * copies are repaired; the next run finds what is stale then. Also the pieces reconcile
 * stands on: which entity a key is, the source key a copy gives (copy_key included), and
 * how far behind a timestamp is. Runs in-process over conn_call_db. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "checker/conn.h"
#include "checker/keymatch.h"
#include "checker/model.h"
#include "checker/reconcile.h"
#include "quarry.h"

#include "call.h"
#include "check.h"

static const char MODEL[] = "tables:\n"
                            "  Shop: {partition_key: PK, sort_key: SK}\n"
                            "entities:\n"
                            "  Customer:\n"
                            "    pk: \"CUSTOMER#{customerId}\"\n"
                            "    sk: PROFILE\n"
                            "    attributes: {customerId: id, name: text, updatedAt: timestamp}\n"
                            "  Order:\n"
                            "    pk: \"CUSTOMER#{customerId}\"\n"
                            "    sk: \"ORDER#{orderId}\"\n"
                            "    attributes:\n"
                            "      customerId: id\n"
                            "      orderId: id\n"
                            "      updatedAt: timestamp\n"
                            "      customerName: {type: string, copy_of: Customer.name}\n"
                            "  OrderItem:\n"
                            "    pk: \"CUSTOMER#{customerId}\"\n"
                            "    sk: \"ORDER#{orderId}#ITEM#{line}\"\n"
                            "    attributes: {customerId: id, orderId: id, line: id}\n"
                            "  Review:\n"
                            "    pk: \"REVIEW#{reviewId}\"\n"
                            "    sk: \"BY#{buyer}\"\n"
                            "    attributes:\n"
                            "      reviewId: id\n"
                            "      buyer: id\n"
                            "      buyerName: {type: string, copy_of: Customer.name, copy_key: "
                            "{customerId: buyer}}\n"
                            "access_patterns: []\n"
                            "denormalised:\n"
                            "  - {source: Customer.name, copies: [Order.customerName, "
                            "Review.buyerName], strategy: background-job}\n";

static qr_db *db;

static void put(const char *pk, const char *sk, const char *more)
{
    json_decref(
        call(db, "PutItem", 1,
             "{\"TableName\":\"Shop\",\"Item\":{\"PK\":{\"S\":\"%s\"},\"SK\":{\"S\":\"%s\"}%s}}",
             pk, sk, more));
}

static char *name_of(const char *pk, const char *sk, const char *attr)
{
    json_t *r =
        call(db, "GetItem", 1,
             "{\"TableName\":\"Shop\",\"ConsistentRead\":true,\"Key\":{\"PK\":{\"S\":\"%s\"},"
             "\"SK\":{\"S\":\"%s\"}}}",
             pk, sk);
    const char *s =
        json_string_value(json_object_get(json_object_get(json_object_get(r, "Item"), attr), "S"));
    char *out = strdup(s ? s : "(none)");
    json_decref(r);
    return out;
}

/* The interleaving: before reconcile's repair of order o1 another writer sets o1's copy to
 * a newer value; before its repair of o3, another renames o3's customer. */
static int interleaved;

static int meddling(conn *c, const char *op, json_t *body, json_t **out, qr_err *err)
{
    if (strcmp(op, "TransactWriteItems") == 0) {
        json_t *upd =
            json_object_get(json_array_get(json_object_get(body, "TransactItems"), 1), "Update");
        const char *sk = json_string_value(
            json_object_get(json_object_get(json_object_get(upd, "Key"), "SK"), "S"));
        if (sk && strcmp(sk, "ORDER#o1") == 0) {
            put("CUSTOMER#c1", "ORDER#o1",
                ",\"customerId\":{\"S\":\"c1\"},\"orderId\":{\"S\":\"o1\"},\"customerName\":{\"S\":"
                "\"Newest\"}");
            interleaved++;
        }
        if (sk && strcmp(sk, "ORDER#o3") == 0) {
            put("CUSTOMER#c2", "PROFILE",
                ",\"customerId\":{\"S\":\"c2\"},\"name\":{\"S\":\"Renamed\"}");
            interleaved++;
        }
    }
    return conn_call_db(c, op, body, out, err);
}

static void test_keymatch(const qr_model *m)
{
    const m_table *tb = model_table(m, "Shop");
    json_t *item = json_pack("{s:{s:s},s:{s:s}}", "PK", "S", "CUSTOMER#c1", "SK", "S",
                             "ORDER#o2#ITEM#007"),
           *vars = NULL;
    const m_entity *e = keymatch_entity(m, tb, item, &vars);
    CHECK(e && strcmp(e->name, "OrderItem") == 0, "ORDER#o2#ITEM#007 is %s, not an OrderItem",
          e ? e->name : "nothing");
    CHECK_STR(json_string_value(json_object_get(vars, "orderId")), "o2");
    CHECK_STR(json_string_value(json_object_get(vars, "line")), "007");
    json_decref(vars);
    json_object_set_new(item, "SK", json_pack("{s:s}", "S", "ORDER#o2"));
    e = keymatch_entity(m, tb, item, &vars);
    CHECK(e && strcmp(e->name, "Order") == 0, "ORDER#o2 is %s", e ? e->name : "nothing");
    /* the copy's source key from the copy's key alone (no customerId attribute stored) */
    const char *missing = NULL;
    json_t *key =
        keymatch_source_key(e, model_entity_attr(e, "customerName"), item, vars, &missing);
    char *text = key ? json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    CHECK_STR(text, "{\"PK\":{\"S\":\"CUSTOMER#c1\"},\"SK\":{\"S\":\"PROFILE\"}}");
    free(text);
    json_decref(key);
    json_decref(vars);
    json_decref(item);
    /* copy_key: the review's buyer gives the customer's customerId */
    item = json_pack("{s:{s:s},s:{s:s}}", "PK", "S", "REVIEW#r1", "SK", "S", "BY#c7");
    e = keymatch_entity(m, tb, item, &vars);
    CHECK(e && strcmp(e->name, "Review") == 0, "REVIEW#r1 is %s", e ? e->name : "nothing");
    key =
        e ? keymatch_source_key(e, model_entity_attr(e, "buyerName"), item, vars, &missing) : NULL;
    text = key ? json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    CHECK_STR(text, "{\"PK\":{\"S\":\"CUSTOMER#c7\"},\"SK\":{\"S\":\"PROFILE\"}}");
    free(text);
    json_decref(key);
    json_decref(vars);
    json_decref(item);
    /* a split that disagrees with a stored attribute is not taken */
    m_seg segs[] = {{0, "U#", NULL}, {1, "a", NULL}, {0, "#", NULL}, {1, "b", NULL}};
    m_template t = {"U#{a}#{b}", segs, 4, {0, 0}};
    json_t *v = json_object(), *stored = json_pack("{s:{s:s}}", "a", "S", "x#y");
    CHECK_THAT(keymatch_template(&t, "U#x#y#z", stored, v) == 1);
    CHECK_STR(json_string_value(json_object_get(v, "a")), "x#y");
    CHECK_STR(json_string_value(json_object_get(v, "b")), "z");
    CHECK_THAT(keymatch_template(&t, "U#x", NULL, v) == 0);
    CHECK_THAT(keymatch_template(&t, "V#x#y", NULL, v) == 0);
    json_decref(v);
    json_decref(stored);
    /* items of no entity */
    item = json_pack("{s:{s:s},s:{s:s}}", "PK", "S", "OTHER#1", "SK", "S", "X");
    CHECK_THAT(keymatch_entity(m, tb, item, NULL) == NULL);
    json_decref(item);
    /* timestamps */
    const m_attr *ts = model_entity_attr(model_entity(m, "Order"), "updatedAt");
    double s1 = 0, s2 = 0;
    json_t *a1 = json_pack("{s:s}", "S", "2026-03-14T09:14:00Z"),
           *a2 = json_pack("{s:s}", "S", "2026-03-14T10:14:30.5+01:00"),
           *bad = json_pack("{s:s}", "S", "14/3/2026");
    CHECK_THAT(reconcile_stamp_seconds(ts, a1, &s1) == 0 &&
               reconcile_stamp_seconds(ts, a2, &s2) == 0);
    CHECK(s2 - s1 == 30.5, "10:14:30.5+01:00 is %.1f s after 09:14Z", s2 - s1);
    CHECK_THAT(reconcile_stamp_seconds(ts, bad, &s1) == -1);
    json_decref(a1);
    json_decref(a2);
    json_decref(bad);
}

int main(void)
{
    char dir[] = "/tmp/qr_reconcile_XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    char *msg = NULL;
    CHECK(qr_open(dir, NULL, &db, &msg) == QR_OK, "open: %s", msg ? msg : "");
    if (db == NULL) return 1;
    qr_model *m = NULL;
    qr_err err;
    err_init(&err);
    CHECK(model_load("test.yaml", MODEL, strlen(MODEL), &m, &err) == 0, "model: %s", err.msg);
    if (m == NULL) return check_report("test_reconcile");
    test_keymatch(m);

    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"Shop\",\"BillingMode\":\"PAY_PER_REQUEST\","
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"PK\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"SK\",\"AttributeType\":\"S\"}],\"KeySchema\":[{"
                     "\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"SK\","
                     "\"KeyType\":\"RANGE\"}]}"));
    /* three customers renamed after their orders copied the old names */
    const char *cust[] = {"c1", "c2", "c3"};
    for (int i = 0; i < 3; i++) {
        char pk[64], more[256];
        snprintf(pk, sizeof pk, "CUSTOMER#%s", cust[i]);
        snprintf(more, sizeof more,
                 ",\"customerId\":{\"S\":\"%s\"},\"name\":{\"S\":\"New %s\"},\"updatedAt\":{\"S\":"
                 "\"2026-03-14T10:00:00Z\"}",
                 cust[i], cust[i]);
        put(pk, "PROFILE", more);
    }
    const char *orders[][2] = {{"c1", "o1"}, {"c1", "o2"}, {"c2", "o3"}, {"c3", "o4"}};
    for (int i = 0; i < 4; i++) {
        char pk[64], sk[64], more[300];
        snprintf(pk, sizeof pk, "CUSTOMER#%s", orders[i][0]);
        snprintf(sk, sizeof sk, "ORDER#%s", orders[i][1]);
        snprintf(
            more, sizeof more,
            ",\"customerId\":{\"S\":\"%s\"},\"orderId\":{\"S\":\"%s\"},\"customerName\":{\"S\":"
            "\"Old %s\"},\"updatedAt\":{\"S\":\"2026-03-14T09:00:00Z\"}",
            orders[i][0], orders[i][1], orders[i][0]);
        put(pk, sk, more);
    }
    put("CUSTOMER#c1", "ORDER#o2#ITEM#001", ",\"orderId\":{\"S\":\"o2\"}"); /* no copy */

    conn c;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.where = dir;
    c.call = meddling;
    rc_options o = {.repair = 1, .quiet = 1};
    rc_report r;
    CHECK(reconcile_run(&c, m, &o, &r, &err) == 0, "reconcile: %s", err.msg);
    CHECK_THAT(interleaved == 2);
    const rc_copy *oc = NULL;
    for (size_t i = 0; i < r.ncopies; i++)
        if (strcmp(r.copies[i].attr->name, "customerName") == 0) oc = &r.copies[i];
    CHECK_THAT(oc != NULL);
    if (oc) {
        CHECK(oc->checked == 4 && oc->stale == 4, "%zu checked, %zu stale", oc->checked, oc->stale);
        CHECK(oc->repaired == 2 && oc->skipped == 2 && oc->failed == 0,
              "%zu repaired, %zu skipped, %zu failed (%s)", oc->repaired, oc->skipped, oc->failed,
              oc->error);
        CHECK(oc->behind_known && oc->max_behind == 3600, "behind %.0f s", oc->max_behind);
    }
    reconcile_free(&r);
    char *v;
    CHECK_STR(v = name_of("CUSTOMER#c1", "ORDER#o1", "customerName"), "Newest");
    free(v);
    CHECK_STR(v = name_of("CUSTOMER#c1", "ORDER#o2", "customerName"), "New c1");
    free(v);
    /* o3 keeps the value it had: neither the name reconcile read nor a later one */
    CHECK_STR(v = name_of("CUSTOMER#c2", "ORDER#o3", "customerName"), "Old c2");
    free(v);
    CHECK_STR(v = name_of("CUSTOMER#c3", "ORDER#o4", "customerName"), "New c3");
    free(v);

    /* the next run, undisturbed, finds the two left and repairs them */
    c.call = conn_call_db;
    CHECK(reconcile_run(&c, m, &o, &r, &err) == 0, "reconcile: %s", err.msg);
    CHECK(r.stale == 2 && r.repaired == 2, "second run: %zu stale, %zu repaired", r.stale,
          r.repaired);
    reconcile_free(&r);
    CHECK_STR(v = name_of("CUSTOMER#c1", "ORDER#o1", "customerName"), "New c1");
    free(v);
    CHECK_STR(v = name_of("CUSTOMER#c2", "ORDER#o3", "customerName"), "Renamed");
    free(v);
    o.repair = 0;
    CHECK(reconcile_run(&c, m, &o, &r, &err) == 0, "reconcile: %s", err.msg);
    CHECK(r.stale == 0, "third run: %zu stale", r.stale);
    reconcile_free(&r);

    model_free(m);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_reconcile");
}
