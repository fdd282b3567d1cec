/* test_match.c — the model watch's pure matcher (src/watch/match.c): key values against
 * key templates, reads against the plans of tests/server/models/shop.yaml's patterns,
 * written items against its entities, and values against each declared format. */
#include <string.h>

#include "check.h"
#include "checker/check.h"
#include "checker/model.h"
#include "watch/match.h"

#ifndef MODEL_PATH
#define MODEL_PATH "tests/server/models/shop.yaml"
#endif

static wm_value S(const char *s)
{
    return (wm_value){'S', s, strlen(s)};
}

static const wm_plan *plan_of(const ck_report *r, const char *name, wm_plan *out)
{
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        if (strcmp(pl->pattern->name, name) != 0) continue;
        *out = (wm_plan){.p = pl->pattern,
                         .pl = pl,
                         .query = strcmp(pl->operation, "Query") == 0,
                         .table = pl->path.table,
                         .index = pl->path.index ? pl->path.index->name : NULL,
                         .pk = pl->path.pk,
                         .sk = pl->path.sk,
                         .sk_given = pl->sk_given,
                         .sk_whole = pl->sk_whole};
        return out;
    }
    return NULL;
}

static void test_templates(const qr_model *m)
{
    const m_entity *item = model_entity(m, "OrderItem");
    wm_span vars[8];
    const char *v = "ORDER#o1#ITEM#007";
    CHECK_THAT(wm_template(&item->sk, item->sk.nseg, NULL, v, strlen(v), 1, vars));
    CHECK(vars[1].len == 2 && memcmp(vars[1].at, "o1", 2) == 0, "orderId");
    CHECK(vars[3].len == 3 && memcmp(vars[3].at, "007", 3) == 0, "line");
    CHECK_THAT(!wm_template(&item->sk, item->sk.nseg, NULL, "ORDER#o1", 8, 1, NULL));
    CHECK_THAT(!wm_template(&item->sk, item->sk.nseg, NULL, "ORDER##ITEM#1", 13, 1, NULL));
    /* a prefix: the first two segments, and the value may go on */
    CHECK_THAT(wm_template(&item->sk, 2, NULL, "ORDER#o1", 8, 0, NULL));
    CHECK_THAT(!wm_template(&item->sk, 2, NULL, "ORD", 3, 0, NULL));
    CHECK(wm_literal_len(&item->sk) == strlen("ORDER#") + strlen("#ITEM#"), "literal length");
}

static void test_reads(const qr_model *m, const ck_report *r)
{
    wm_plan get, orders, lines, status;
    CHECK_THAT(plan_of(r, "get-customer", &get) && !get.query && get.sk_whole);
    CHECK_THAT(plan_of(r, "customer-orders", &orders) && orders.query);
    CHECK_THAT(plan_of(r, "order-lines", &lines) && lines.query);
    CHECK_THAT(plan_of(r, "orders-by-status", &status) && status.index);
    wm_read rd = {
        .query = 0, .pk = S("CUSTOMER#c1"), .sk = WM_SK_EQ, .sk1 = S("PROFILE"), .forward = 1};
    CHECK(wm_read_differs(&get, &rd) == 0, "GetItem of a profile is get-customer");
    rd.sk1 = S("ADDRESS");
    CHECK(wm_read_differs(&get, &rd) == WM_DIFF_SK, "another sort key");
    rd.pk = S("USER#c1");
    CHECK(wm_read_differs(&get, &rd) == (WM_DIFF_PK | WM_DIFF_SK), "another partition key");
    /* a Query of the whole key reads what the GetItem does */
    rd = (wm_read){.query = 1, .pk = S("CUSTOMER#c1"), .sk = WM_SK_EQ, .sk1 = S("PROFILE")};
    CHECK(wm_read_differs(&get, &rd) == 0, "Query of the whole key");

    wm_read q = {
        .query = 1, .pk = S("CUSTOMER#c1"), .sk = WM_SK_BEGINS, .sk1 = S("ORDER#"), .forward = 0};
    CHECK(wm_read_differs(&orders, &q) == 0, "customer-orders, newest first");
    q.forward = 1;
    CHECK(wm_read_differs(&orders, &q) == WM_DIFF_DIRECTION, "declared descending");
    q.sk = WM_SK_NONE;
    q.forward = 0;
    CHECK(wm_read_differs(&orders, &q) == WM_DIFF_SK, "the whole partition");
    q = (wm_read){.query = 1,
                  .pk = S("CUSTOMER#c1"),
                  .sk = WM_SK_BEGINS,
                  .sk1 = S("ORDER#o1#ITEM#"),
                  .forward = 1};
    CHECK(wm_read_differs(&lines, &q) == 0, "order-lines");
    CHECK(wm_read_nearness(&lines, &q) > wm_read_nearness(&get, &q), "nearness");
    q = (wm_read){.query = 1, .index = "GSI1", .pk = S("STATUS#PENDING"), .forward = 1};
    CHECK(wm_read_differs(&status, &q) == 0, "orders-by-status");
    q.index = NULL;
    CHECK(wm_read_differs(&status, &q) & WM_DIFF_INDEX, "the table is not GSI1");
    char text[200];
    wm_diff_text(WM_DIFF_SK | WM_DIFF_DIRECTION, text, sizeof text);
    CHECK_STR(text, "another sort-key condition, the other direction");
    (void)m;
}

typedef struct two {
    const char *pk, *sk;
} two;

static int get_two(const void *item, const char *name, wm_value *out)
{
    const two *t = item;
    const char *v = strcmp(name, "PK") == 0 ? t->pk : strcmp(name, "SK") == 0 ? t->sk : NULL;
    if (v == NULL) return 0;
    *out = S(v);
    return 1;
}

static void test_entities(const qr_model *m)
{
    const m_table *t = model_table(m, "Shop");
    wm_span pk[QR_WM_MAX_SEG], sk[QR_WM_MAX_SEG];
    two line = {"CUSTOMER#c1", "ORDER#o1#ITEM#7"}, order = {"CUSTOMER#c1", "ORDER#o1"},
        profile = {"CUSTOMER#c1", "PROFILE"}, stray = {"USER#1", "PROFILE"};
    const m_entity *e = wm_entity_of(m, t, &line, get_two, pk, sk);
    CHECK(e && strcmp(e->name, "OrderItem") == 0, "the most specific template wins");
    CHECK(sk[3].len == 1 && sk[3].at[0] == '7', "line's text");
    e = wm_entity_of(m, t, &order, get_two, pk, sk);
    CHECK(e && strcmp(e->name, "Order") == 0, "Order");
    e = wm_entity_of(m, t, &profile, get_two, pk, sk);
    CHECK(e && strcmp(e->name, "Customer") == 0, "Customer");
    CHECK(wm_entity_of(m, t, &stray, get_two, pk, sk) == NULL, "no entity");
    const m_template *tmpl;
    wm_value gsi = S("STATUS#PAID");
    e = wm_entity_of_pk(m, t, "GSI1", &gsi, &tmpl);
    CHECK(e && strcmp(e->name, "Order") == 0 && strcmp(tmpl->text, "STATUS#{status}") == 0,
          "GSI1's partition key is Order's");
}

static void test_formats(void)
{
    char why[200];
    m_attr padded = {.name = "line", .type = MT_STRING, .format = MF_PADDED, .width = 3};
    wm_value v = S("007");
    CHECK_THAT(!wm_format_problem(&padded, &v, why, sizeof why));
    v = S("7");
    CHECK_THAT(wm_format_problem(&padded, &v, why, sizeof why));
    CHECK_STR(why, "is \"7\", not zero-padded to 3 digits");
    m_attr date = {.name = "d", .type = MT_STRING, .format = MF_DATE};
    v = S("2026-03-14");
    CHECK_THAT(!wm_format_problem(&date, &v, why, sizeof why));
    v = S("14/3/2026");
    CHECK_THAT(wm_format_problem(&date, &v, why, sizeof why));
    date.pattern = "D/M/YYYY";
    CHECK_THAT(!wm_format_problem(&date, &v, why, sizeof why));
    m_attr ts = {.name = "t", .type = MT_STRING, .format = MF_TIMESTAMP};
    const char *good[] = {"2026-03-14T09:14:00Z", "2026-03-14T09:14:00.123+02:00",
                          "2026-03-14T09:14"};
    for (int i = 0; i < 3; i++) {
        v = S(good[i]);
        CHECK(!wm_format_problem(&ts, &v, why, sizeof why), "timestamp %s", good[i]);
    }
    v = S("14/03/2026 09:14");
    CHECK_THAT(wm_format_problem(&ts, &v, why, sizeof why));
    const char *values[] = {"PENDING", "PAID"};
    m_attr en = {.name = "s", .type = MT_STRING, .format = MF_ENUM, .values = values, .nvalues = 2};
    v = S("PAID");
    CHECK_THAT(!wm_format_problem(&en, &v, why, sizeof why));
    v = S("paid");
    CHECK_THAT(wm_format_problem(&en, &v, why, sizeof why));
    m_attr uuid = {.name = "u", .type = MT_STRING, .format = MF_UUID};
    v = S("123e4567-e89b-12d3-a456-426614174000");
    CHECK_THAT(!wm_format_problem(&uuid, &v, why, sizeof why));
    v = S("123e4567");
    CHECK_THAT(wm_format_problem(&uuid, &v, why, sizeof why));
    m_attr ulid = {.name = "u", .type = MT_STRING, .format = MF_ULID};
    v = S("01ARZ3NDEKTSV4RRFFQ69G5FAV");
    CHECK_THAT(!wm_format_problem(&ulid, &v, why, sizeof why));
    v = S("01ARZ3NDEKTSV4RRFFQ69G5FAI");
    CHECK_THAT(wm_format_problem(&ulid, &v, why, sizeof why));
    m_attr shard = {.name = "s", .type = MT_NUMBER, .format = MF_SHARD, .shards = 4};
    v = (wm_value){'N', "3", 1};
    CHECK_THAT(!wm_format_problem(&shard, &v, why, sizeof why));
    v = (wm_value){'N', "4", 1};
    CHECK_THAT(wm_format_problem(&shard, &v, why, sizeof why));
    m_attr total = {.name = "total", .type = MT_NUMBER};
    v = S("10");
    CHECK_THAT(wm_format_problem(&total, &v, why, sizeof why));
    CHECK_STR(why, "is the string \"10\", the model says a number");
}

/* A range the checker plans with both bounds (BETWEEN "MSG#{sentAt}$" AND "MSG$") is the
 * pattern when the application sends it so, and a bound past another prefix is not. */
static void test_fenced_range(void)
{
    static const char model[] =
        "tables: {Chat: {partition_key: PK, sort_key: SK}}\n"
        "entities:\n"
        "  Message:\n"
        "    pk: \"THREAD#{threadId}\"\n"
        "    sk: \"MSG#{sentAt}#{messageId}\"\n"
        "    attributes: {threadId: id, sentAt: timestamp, messageId: ulid}\n"
        "access_patterns:\n"
        "  - {name: since, kind: query, entity: Message, given: [threadId], "
        "sk_condition: {op: \">\", attribute: sentAt}}\n";
    qr_model *m = NULL;
    ck_report *r = NULL;
    qr_err err;
    err_init(&err);
    CHECK(model_load("fence.yaml", model, strlen(model), &m, &err) == 0, "load: %s", err.msg);
    if (m == NULL) return;
    CHECK(check_run(m, &r, &err) == 0, "check: %s", err.msg);
    wm_plan since;
    if (r && plan_of(r, "since", &since)) {
        wm_read q = {.query = 1,
                     .pk = S("THREAD#t1"),
                     .sk = WM_SK_RANGE,
                     .sk1 = S("MSG#2026-03-14T09:14:00Z$"),
                     .sk2 = S("MSG$"),
                     .forward = 1};
        CHECK(wm_read_differs(&since, &q) == 0, "BETWEEN \"MSG#t$\" AND \"MSG$\" is since");
        q.sk2 = (wm_value){0};
        CHECK(wm_read_differs(&since, &q) == 0, "SK > \"MSG#t\" is since too");
        q.sk2 = S("MSH");
        CHECK(wm_read_differs(&since, &q) == WM_DIFF_SK, "a bound past MSG# is not");
    }
    check_free(r);
    model_free(m);
}

int main(void)
{
    qr_model *m = NULL;
    ck_report *r = NULL;
    qr_err err;
    err_init(&err);
    CHECK(model_load(MODEL_PATH, NULL, 0, &m, &err) == 0, "load: %s", err.msg);
    if (m == NULL) return 1;
    CHECK(check_run(m, &r, &err) == 0, "check: %s", err.msg);
    test_templates(m);
    test_reads(m, r);
    test_entities(m);
    test_formats();
    test_fenced_range();
    check_free(r);
    model_free(m);
    return check_report("test_match");
}
