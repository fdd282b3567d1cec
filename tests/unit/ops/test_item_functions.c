/* test_item_functions.c — the operations' functions of parsed requests (ops.h), called as
 * PartiQL calls them: no request, expressions parsed by the caller.
 *
 * One table (pk S, sk N). items_put with a condition and its failure with the old item
 * attached, items_update answering ALL_NEW, items_get, query_read with a parsed key
 * condition, transact_join refusing two members on one item, transact_write, and
 * items_delete answering ALL_OLD; each answer as the JSON handlers answer it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops/ops.h"
#include "quarry.h"

#include "call.h"
#include "check.h"

static qr_db *db;

/* The expressions one call takes, parsed from text with names and values (JSON text). */
typedef struct parsed {
    json_t *names, *values;
    qr_err err;
    expr_ctx cx;
    expr_cond *cond;
    expr_update *update;
} parsed;

static void parse(parsed *p, const char *names, const char *values, const char *cond,
                  const char *update)
{
    memset(p, 0, sizeof *p);
    p->names = names ? json_loads(names, 0, NULL) : NULL;
    p->values = values ? json_loads(values, 0, NULL) : NULL;
    err_init(&p->err);
    expr_ctx_init(&p->cx, p->names, p->values, &p->err);
    if (cond)
        CHECK(expr_parse_condition(&p->cx, "ConditionExpression", cond, &p->cond) == 0, "%s: %s",
              cond, p->err.msg);
    if (update)
        CHECK(expr_parse_update(&p->cx, update, &p->update) == 0, "%s: %s", update, p->err.msg);
}

static void parsed_free(parsed *p)
{
    expr_cond_free(p->cond);
    expr_update_free(p->update);
    expr_ctx_free(&p->cx);
    err_clear(&p->err);
    json_decref(p->names);
    json_decref(p->values);
}

/* The answer as compact JSON text (freed by the caller). */
static char *text(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
}

static item_request request(table *t, json_t *key, const parsed *p)
{
    return (item_request){.t = t,
                          .key = key,
                          .condition = p->cond,
                          .update = p->update,
                          .return_values = "NONE",
                          .on_failure = "NONE",
                          .capacity = "NONE",
                          .metrics = "NONE"};
}

static void test_put_update_get(table *t)
{
    json_t *item =
        json_loads("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"n\":{\"N\":\"5\"}}", 0, NULL);
    json_t *key = json_loads("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}", 0, NULL);
    parsed p;
    parse(&p, "{\"#k\":\"pk\"}", NULL, "attribute_not_exists(#k)", NULL);
    item_request r = request(t, item, &p);
    r.item = item;
    qr_err err;
    err_init(&err);
    CHECK_THAT(item_check_put(t, item, &r.size, &err) == 0);
    json_t *answer = NULL;
    CHECK(items_put(db, &r, &answer, &err) == 0, "items_put: %s", err.msg);
    char *s = text(answer);
    CHECK_STR(s, "{}");
    free(s);
    json_decref(answer);
    answer = NULL;
    /* the item exists now: the condition fails, with the item for ALL_OLD */
    r.on_failure = "ALL_OLD";
    CHECK_THAT(items_put(db, &r, &answer, &err) == -1 && answer == NULL);
    CHECK_STR(err.type, QR_E_CONDITION);
    s = err.item ? text(err.item) : NULL;
    CHECK_STR(s, "{\"n\":{\"N\":\"5\"},\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}");
    free(s);
    err_clear(&err);
    parsed_free(&p);

    parse(&p, NULL, "{\":one\":{\"N\":\"1\"}}", NULL, "SET n = n + :one");
    r = request(t, key, &p);
    r.return_values = "ALL_NEW";
    r.measure_update = 1;
    CHECK_THAT(item_check_key(t, key, &err) == 0);
    CHECK(items_update(db, &r, &answer, &err) == 0, "items_update: %s", err.msg);
    s = text(answer);
    CHECK_STR(s,
              "{\"Attributes\":{\"n\":{\"N\":\"6\"},\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}}");
    free(s);
    json_decref(answer);
    parsed_free(&p);

    parse(&p, NULL, NULL, NULL, NULL);
    r = request(t, key, &p);
    r.capacity = "TOTAL";
    buf out;
    buf_init(&out, 0);
    CHECK(items_get(db, &r, &out, &err) == 0, "items_get: %s", err.msg);
    json_t *got = json_loadb(out.data, out.len, 0, NULL),
           *want = json_loads("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"},\"n\":{\"N\":\"6\"}}", 0,
                              NULL);
    CHECK(json_equal(json_object_get(got, "Item"), want), "GetItem answered %.*s", (int)out.len,
          out.data);
    CHECK_THAT(json_object_get(got, "ConsumedCapacity") != NULL);
    json_decref(want);
    json_decref(got);
    buf_free(&out);
    parsed_free(&p);
    json_decref(item);
    json_decref(key);
}

static void test_query(table *t)
{
    parsed p;
    parse(&p, NULL, "{\":p\":{\"S\":\"a\"},\":s\":{\"N\":\"0\"}}", NULL, NULL);
    expr_key_schema ks;
    expr_keycond_multi kc;
    query_key_schema(t, NULL, &ks);
    CHECK(expr_parse_key_condition_multi(&p.cx, "pk = :p AND sk > :s", &ks, &kc) == 0, "%s",
          p.err.msg);
    query_request q = {.t = t, .key = &kc, .forward = 1, .capacity = "NONE"};
    buf out;
    buf_init(&out, 0);
    qr_err err;
    err_init(&err);
    CHECK(query_read(db, &q, &out, &err) == 0, "query_read: %s", err.msg);
    json_t *got = json_loadb(out.data, out.len, 0, NULL);
    CHECK(json_integer_value(json_object_get(got, "Count")) == 1, "Query answered %.*s",
          (int)out.len, out.data);
    json_decref(got);
    buf_free(&out);
    expr_keycond_multi_free(&kc);
    parsed_free(&p);
}

static void test_transactions(const char *name)
{
    json_t *key = json_loads("{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}", 0, NULL);
    json_t *item = json_loads("{\"pk\":{\"S\":\"b\"},\"sk\":{\"N\":\"2\"}}", 0, NULL);
    parsed p;
    parse(&p, NULL, "{\":v\":{\"N\":\"6\"}}", "n = :v", NULL);
    transact_member m[2] = {{.kind = TRANSACT_CHECK, .key = key, .condition = p.cond},
                            {.kind = TRANSACT_DELETE, .key = key}};
    size_t payload = 0;
    qr_err err;
    err_init(&err);
    for (size_t i = 0; i < 2; i++) {
        m[i].t = catalog_get(db, name);
        m[i].on_failure = "NONE";
        CHECK_THAT(transact_check_member(&m[i], i, 2, &err) == 0);
    }
    CHECK_THAT(transact_join(m, 0, &payload, &err) == 0);
    CHECK_THAT(transact_join(m, 1, &payload, &err) == -1);
    CHECK_STR(err.msg, "Transaction request cannot include multiple operations on one item");
    err_clear(&err);
    /* the second member puts another item instead */
    transact_member_free(db, &m[1]);
    m[1] = (transact_member){.kind = TRANSACT_PUT, .item = item, .on_failure = "NONE"};
    m[1].t = catalog_get(db, name);
    CHECK_THAT(transact_check_member(&m[1], 1, 2, &err) == 0);
    CHECK_THAT(transact_join(m, 1, &payload, &err) == 0);
    transact_write_request r = {.m = m, .n = 2, .capacity = "TOTAL", .metrics = "NONE"};
    json_t *answer = NULL;
    CHECK(transact_write(db, &r, &answer, &err) == 0, "transact_write: %s", err.msg);
    CHECK_THAT(json_array_size(json_object_get(answer, "ConsumedCapacity")) == 1);
    json_decref(answer);
    for (size_t i = 0; i < 2; i++)
        transact_member_free(db, &m[i]);
    parsed_free(&p);
    json_decref(item);

    parse(&p, NULL, NULL, NULL, NULL);
    table *t = catalog_get(db, name);
    item_request del = request(t, key, &p);
    del.return_values = "ALL_OLD";
    CHECK(items_delete(db, &del, &answer, &err) == 0, "items_delete: %s", err.msg);
    char *s = text(answer);
    CHECK_STR(s,
              "{\"Attributes\":{\"n\":{\"N\":\"6\"},\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}}");
    free(s);
    json_decref(answer);
    catalog_release_after_writes(t);
    parsed_free(&p);
    json_decref(key);
}

int main(void)
{
    char dir[] = "/tmp/quarry-itemfns-XXXXXX";
    CHECK_THAT(mkdtemp(dir) != NULL);
    char *err = NULL;
    qr_options o = {.no_sync = 1};
    CHECK(qr_open(dir, &o, &db, &err) == QR_OK, "open: %s", err);
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"tbl\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
                     "\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}],"
                     "\"BillingMode\":\"PAY_PER_REQUEST\"}"));
    table *t = catalog_get(db, "tbl");
    CHECK_THAT(t != NULL);
    test_put_update_get(t);
    test_query(t);
    catalog_release_after_writes(t);
    test_transactions("tbl");
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_item_functions");
}
