/* test_run.c — `quarry model check --run` in-process: the bounds a Query puts on a range
 * over a sort-key component (check_range_bounds, exact where the key allows), and model_run
 * on small models: a clean one passes every pattern, a prefix shared with another entity
 * fails as "entity", a table the database refuses fails its patterns as "table" without
 * failing the run, and two runs of one model send the same requests. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "checker/check.h"
#include "checker/model.h"
#include "checker/run.h"

#include "check.h"

static const m_template *sk_of(qr_model *m, const char *entity)
{
    return &model_entity(m, entity)->sk;
}

static qr_model *load(const char *text)
{
    qr_model *m = NULL;
    qr_err err;
    err_init(&err);
    if (model_load("test.yaml", text, strlen(text), &m, &err)) {
        CHECK(0, "model does not load: %s", err.msg);
        err_clear(&err);
        return NULL;
    }
    return m;
}

static const char BOUNDS[] = "tables: {T: {partition_key: PK, sort_key: SK}}\n"
                             "entities:\n"
                             "  Msg:\n"
                             "    pk: \"T#{t}\"\n"
                             "    sk: \"MSG#{at}#{id}\"\n"
                             "    attributes: {t: id, at: timestamp, id: ulid}\n"
                             "  Evt:\n"
                             "    pk: \"T#{t}\"\n"
                             "    sk: \"EVT#{at}\"\n"
                             "    attributes: {t: id, at: timestamp}\n"
                             "  Bare:\n"
                             "    pk: \"B#{t}\"\n"
                             "    sk: \"{at}\"\n"
                             "    attributes: {t: id, at: timestamp}\n"
                             "access_patterns: []\n";

static void test_bounds(void)
{
    qr_model *m = load(BOUNDS);
    if (m == NULL) return;
    char lo[200], hi[200];
    const m_template *msg = sk_of(m, "Msg"), *evt = sk_of(m, "Evt"), *bare = sk_of(m, "Bare");
    /* a component more of the key follows: past the items at the value, inside the prefix */
    CHECK_STR(check_range_bounds(">", msg, 1, "MSG#", "v", "", 1, lo, hi, sizeof lo), "BETWEEN");
    CHECK_STR(lo, "MSG#v$");
    CHECK_STR(hi, "MSG$");
    CHECK_STR(check_range_bounds(">=", msg, 1, "MSG#", "v", "", 1, lo, hi, sizeof lo), "BETWEEN");
    CHECK_STR(lo, "MSG#v");
    CHECK_STR(check_range_bounds("<", msg, 1, "MSG#", "v", "", 1, lo, hi, sizeof lo), "BETWEEN");
    CHECK_STR(lo, "MSG#");
    CHECK_STR(hi, "MSG#v");
    CHECK_STR(check_range_bounds("<=", msg, 1, "MSG#", "v", "", 1, lo, hi, sizeof lo), "BETWEEN");
    CHECK_STR(hi, "MSG#v$");
    CHECK_STR(check_range_bounds("between", msg, 1, "MSG#", "a", "b", 1, lo, hi, sizeof lo),
              "BETWEEN");
    CHECK_STR(lo, "MSG#a");
    CHECK_STR(hi, "MSG#b$");
    CHECK_STR(check_range_bounds("begins_with", msg, 1, "MSG#", "2026", "", 1, lo, hi, sizeof lo),
              "begins_with");
    CHECK_STR(lo, "MSG#2026");
    /* the last component: > starts just above the value; < stays one-sided */
    CHECK_STR(check_range_bounds(">", evt, 1, "EVT#", "v", "", 1, lo, hi, sizeof lo), "BETWEEN");
    CHECK_STR(lo, "EVT#v\\u0001");
    CHECK_STR(hi, "EVT$");
    check_range_bounds(">", evt, 1, "EVT#", "v", "", 0, lo, hi, sizeof lo);
    CHECK_STR(lo, "EVT#v\x01");
    CHECK_STR(check_range_bounds("<", evt, 1, "EVT#", "v", "", 1, lo, hi, sizeof lo), "<");
    CHECK_STR(lo, "EVT#v");
    CHECK_STR(check_range_bounds("<=", evt, 1, "EVT#", "v", "", 1, lo, hi, sizeof lo), "BETWEEN");
    CHECK_STR(lo, "EVT#");
    CHECK_STR(hi, "EVT#v");
    /* no prefix: nothing to bound the other side by */
    CHECK_STR(check_range_bounds(">", bare, 0, "", "v", "", 1, lo, hi, sizeof lo), ">");
    CHECK_STR(lo, "v");
    CHECK_STR(check_range_bounds("<=", bare, 0, "", "v", "", 1, lo, hi, sizeof lo), "<=");
    model_free(m);
}

/* Runs the model's plans; the report, or NULL (a failed check). */
static run_report *run_model(qr_model *m, ck_report **r)
{
    qr_err err;
    err_init(&err);
    run_report *run = NULL;
    *r = NULL;
    if (check_run(m, r, &err) || model_run(*r, &run, &err)) {
        CHECK(0, "the run failed: %s", err.msg);
        err_clear(&err);
        return NULL;
    }
    return run;
}

static const run_result *result(const run_report *run, const char *name)
{
    for (size_t i = 0; i < run->nresults; i++)
        if (strcmp(run->results[i].pattern->name, name) == 0) return &run->results[i];
    CHECK(0, "no result for pattern %s", name);
    return NULL;
}

static const char SHOP[] = "tables: {Shop: {partition_key: PK, sort_key: SK}}\n"
                           "entities:\n"
                           "  Order:\n"
                           "    pk: \"C#{customerId}\"\n"
                           "    sk: \"ORDER#{orderId}\"\n"
                           "    attributes: {customerId: id, orderId: ulid, total: number}\n"
                           "  Line:\n"
                           "    pk: \"C#{customerId}\"\n"
                           "    sk: \"%s\"\n"
                           "    attributes: {customerId: id, orderId: ulid, line: {format: "
                           "zero-padded, width: 2}}\n"
                           "access_patterns:\n"
                           "  - {name: orders, kind: query, entity: Order, given: [customerId], "
                           "order_by: orderId, direction: desc, limit: 4}\n"
                           "  - {name: order-lines, kind: query, entity: Line, given: [customerId, "
                           "orderId], order_by: line}\n"
                           "  - {name: add, kind: put, entity: Order}\n"
                           "  - {name: drop, kind: delete, entity: Order, given: [customerId, "
                           "orderId]}\n";

static void test_shop(const char *line_sk, const char *orders_verdict, const char *problem)
{
    char text[2048];
    snprintf(text, sizeof text, SHOP, line_sk);
    qr_model *m = load(text);
    if (m == NULL) return;
    ck_report *r;
    run_report *run = run_model(m, &r);
    if (run) {
        const run_result *o = result(run, "orders");
        static const char *const names[] = {"pass", "fail", "skipped"};
        if (o) {
            CHECK_STR(names[o->verdict], orders_verdict);
            CHECK(problem ? o->problem && strcmp(o->problem, problem) == 0 : o->problem == NULL,
                  "%s: problem %s", line_sk, o->problem ? o->problem : "none");
            CHECK(o->request && json_object_get(o->request, "KeyConditionExpression"),
                  "the Query's request is kept");
        }
        for (size_t i = 0; i < run->nresults; i++)
            if (strcmp(run->results[i].pattern->name, "orders") != 0)
                CHECK(run->results[i].verdict == RUN_PASS, "%s: %s %s", line_sk,
                      run->results[i].pattern->name,
                      run->results[i].message ? run->results[i].message : "");
        CHECK(run->items > 0 && run->entities == 2, "%zu items of %zu entities", run->items,
              run->entities);
        /* the same model, the same requests */
        ck_report *r2;
        run_report *again = run_model(m, &r2);
        if (again)
            for (size_t i = 0; i < run->nresults; i++)
                CHECK(json_equal(run->results[i].request, again->results[i].request),
                      "pattern %zu sent another request the second time", i);
        model_run_free(again);
        check_free(r2);
    }
    model_run_free(run);
    check_free(r);
    model_free(m);
}

static void test_refused_table(void)
{
    /* six LSIs: DynamoDB allows five, so CreateTable is refused */
    char text[2048] = "tables:\n  T:\n    partition_key: PK\n    sort_key: SK\n    lsis:\n";
    for (int i = 0; i < 6; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "      - {name: L%d, sort_key: S%d}\n", i, i);
    strncat(text,
            "entities:\n  E:\n    pk: \"E#{id}\"\n    sk: X\n    attributes: {id: id}\n"
            "access_patterns:\n  - {name: get, kind: get, entity: E, given: [id]}\n",
            sizeof text - strlen(text) - 1);
    qr_model *m = load(text);
    if (m == NULL) return;
    ck_report *r;
    run_report *run = run_model(m, &r);
    if (run) {
        const run_result *g = result(run, "get");
        CHECK(g && g->verdict == RUN_FAIL && g->problem && strcmp(g->problem, "table") == 0,
              "a refused table fails its patterns");
        CHECK(g && g->message && strstr(g->message, "CreateTable of table T was refused"),
              "message: %s", g && g->message ? g->message : "(none)");
        CHECK(run->failed == 1 && run->items == 0, "failed %d, items %zu", run->failed, run->items);
    }
    model_run_free(run);
    check_free(r);
    model_free(m);
}

int main(void)
{
    test_bounds();
    test_shop("LINE#{orderId}#{line}", "pass", NULL);
    test_shop("ORDER#{orderId}#LINE#{line}", "fail", "entity");
    test_refused_table();
    return check_report("test_run");
}
