/* test_expr.c — focused tests of the expression module that the declarative cases in
 * tests/expr/cases cannot express: operand limits, ownership of parsed trees, helper
 * queries (mentions, top names), deep nesting and a randomised robustness run that
 * parses and evaluates garbage to prove bad input never crashes or leaks (run it under
 * `make SANITIZE=1`). Behavioural cases belong in the JSON files instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "model/value.h"

#include "check.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
    if (j == NULL) {
        fprintf(stderr, "bad JSON in test: %s: %s\n", text, e.text);
        exit(2);
    }
    return j;
}

/* IN takes at most 100 operands besides the first. */
static void test_in_limit(void)
{
    json_t *values = json_object();
    char expr[4096] = "a IN (";
    for (int i = 0; i < 101; i++) {
        char name[16];
        snprintf(name, sizeof name, ":v%d", i);
        json_object_set_new(values, name, json_pack("{s:s}", "S", "x"));
    }
    for (int n = 100; n <= 101; n++) {
        size_t len = strlen("a IN (");
        expr[len] = '\0';
        for (int i = 0; i < n; i++) {
            char part[16];
            snprintf(part, sizeof part, "%s:v%d", i ? ", " : "", i);
            strcat(expr, part);
        }
        strcat(expr, ")");
        qr_err err;
        err_init(&err);
        expr_ctx cx;
        expr_ctx_init(&cx, NULL, values, &err);
        expr_cond *c = NULL;
        int rc = expr_parse_condition(&cx, "ConditionExpression", expr, &c);
        if (n == 100) {
            CHECK(rc == 0, "IN with 100 operands failed: %s", err.msg);
            json_t *item = J("{\"a\":{\"S\":\"x\"}}");
            CHECK(rc != 0 || expr_cond_eval(c, item, &err) == 1, "IN with 100 operands is false");
            json_decref(item);
        } else {
            CHECK(rc == -1 && strcmp(err.msg, "Invalid ConditionExpression: The IN operator is "
                                              "provided with too many operands; number of "
                                              "operands: 101") == 0,
                  "IN with 101 operands: %s", err.msg);
        }
        expr_cond_free(c);
        expr_ctx_free(&cx);
    }
    json_decref(values);
}

/* A parsed tree keeps its own references: it outlives the request's values. */
static void test_ownership(void)
{
    qr_err err;
    err_init(&err);
    json_t *values = J("{\":v\":{\"S\":\"x\"},\":l\":{\"L\":[{\"N\":\"1\"}]}}");
    json_t *names = J("{\"#a\":\"a\"}");
    expr_ctx cx;
    expr_ctx_init(&cx, names, values, &err);
    expr_cond *c = NULL;
    expr_update *u = NULL;
    expr_proj *p = NULL;
    CHECK(expr_parse_condition(&cx, "ConditionExpression", "#a = :v", &c) == 0, "%s", err.msg);
    CHECK(expr_parse_update(&cx, "SET #a = list_append(:l, :l)", &u) == 0, "%s", err.msg);
    CHECK(expr_parse_projection(&cx, "#a", &p) == 0, "%s", err.msg);
    CHECK(expr_ctx_check_unused(&cx) == 0, "%s", err.msg);
    expr_ctx_free(&cx);
    json_decref(values);
    json_decref(names);
    json_t *item = J("{\"a\":{\"S\":\"x\"},\"b\":{\"N\":\"1\"}}");
    CHECK(c && expr_cond_eval(c, item, &err) == 1, "condition after values freed");
    CHECK(u && expr_update_apply(u, item, &err) == 0, "update after values freed: %s", err.msg);
    json_t *want = J("{\"a\":{\"L\":[{\"N\":\"1\"},{\"N\":\"1\"}]},\"b\":{\"N\":\"1\"}}");
    CHECK(json_equal(item, want), "update result");
    json_t *proj = p ? expr_project(p, item) : NULL;
    json_t *pwant = J("{\"a\":{\"L\":[{\"N\":\"1\"},{\"N\":\"1\"}]}}");
    CHECK(proj && json_equal(proj, pwant), "projection result");
    /* The projection is a copy: changing it leaves the item alone. */
    if (proj) json_object_set_new(json_object_get(proj, "a"), "L", json_array());
    CHECK(json_equal(item, want), "projection shares memory with the item");
    json_decref(proj);
    json_decref(pwant);
    json_decref(want);
    json_decref(item);
    expr_cond_free(c);
    expr_update_free(u);
    expr_proj_free(p);
}

static void test_mentions_and_top_names(void)
{
    qr_err err;
    err_init(&err);
    json_t *values = J("{\":v\":{\"S\":\"x\"},\":n\":{\"N\":\"1\"}}");
    json_t *names = J("{\"#k\":\"pk\"}");
    expr_ctx cx;
    expr_ctx_init(&cx, names, values, &err);
    expr_cond *c = NULL;
    CHECK(expr_parse_condition(&cx, "FilterExpression",
                               "a.b = :v AND (size(#k) > :n OR contains(c[1], :v))", &c) == 0,
          "%s", err.msg);
    CHECK(expr_cond_mentions(c, "pk"), "mentions pk through #k and size()");
    CHECK(expr_cond_mentions(c, "a"), "mentions a");
    CHECK(expr_cond_mentions(c, "c"), "mentions c inside a function");
    CHECK(!expr_cond_mentions(c, "b"), "b is nested, not top-level");
    CHECK(!expr_cond_mentions(c, "#k"), "names are substituted");
    expr_cond_free(c);

    expr_update *u = NULL;
    CHECK(expr_parse_update(&cx, "SET a.b = :v, #k = :v, c[0] = :n REMOVE a.c, d ADD e :n", &u) ==
              0,
          "%s", err.msg);
    json_t *tops = u ? expr_update_top_names(u) : NULL;
    json_t *want = J("[\"a\",\"pk\",\"c\",\"d\",\"e\"]");
    CHECK(tops && json_equal(tops, want), "top names");
    json_decref(tops);
    json_decref(want);
    expr_update_free(u);
    expr_ctx_free(&cx);
    json_decref(values);
    json_decref(names);
}

/* The first error of a request wins; later parse check_failures do not overwrite it. */
static void test_first_error_wins(void)
{
    qr_err err;
    err_init(&err);
    expr_ctx cx;
    expr_ctx_init(&cx, NULL, NULL, &err);
    expr_cond *c = NULL;
    CHECK(expr_parse_condition(&cx, "ConditionExpression", "a = = b", &c) == -1, "syntax error");
    char first[QR_ERR_MSG_MAX];
    snprintf(first, sizeof first, "%s", err.msg);
    CHECK(expr_parse_condition(&cx, "FilterExpression", "b <", &c) == -1, "second error");
    CHECK(strcmp(first, err.msg) == 0, "first error was replaced by %s", err.msg);
    CHECK(expr_ctx_check_unused(&cx) == 0, "no names or values: nothing unused");
    expr_ctx_free(&cx);
}

/* Nesting far beyond anything useful is a clean error, not a stack overflow. */
static void test_deep_nesting(void)
{
    static char text[8192];
    qr_err err;
    json_t *values = J("{\":v\":{\"S\":\"x\"}}");
    const char *shapes[] = {"(", "NOT ", "size("};
    for (size_t s = 0; s < 3; s++) {
        size_t n = 0;
        while (n + strlen(shapes[s]) + 6 <= 4096)
            n += (size_t)sprintf(text + n, "%s", shapes[s]);
        n += (size_t)sprintf(text + n, "a = :v");
        err_init(&err);
        expr_ctx cx;
        expr_ctx_init(&cx, NULL, values, &err);
        expr_cond *c = NULL;
        CHECK(expr_parse_condition(&cx, "ConditionExpression", text, &c) == -1,
              "deep nesting %s accepted", shapes[s]);
        CHECK(strncmp(err.msg, "Invalid ConditionExpression: Syntax error", 41) == 0, "%s",
              err.msg);
        expr_cond_free(c);
        expr_ctx_free(&cx);
    }
    /* An expression longer than 4 KB is refused before parsing. */
    memset(text, 'a', 4097);
    text[4097] = '\0';
    err_init(&err);
    expr_ctx cx0;
    expr_ctx_init(&cx0, NULL, values, &err);
    expr_proj *p = NULL;
    CHECK(expr_parse_projection(&cx0, text, &p) == -1 &&
              strcmp(err.msg, "Invalid ProjectionExpression: Expression size has exceeded the "
                              "maximum allowed size; expression size: 4097") == 0,
          "long expression: %s", err.msg);
    text[4096] = '\0';
    err_init(&err);
    CHECK(expr_parse_projection(&cx0, text, &p) == 0, "4096 bytes refused: %s", err.msg);
    expr_proj_free(p);
    expr_ctx_free(&cx0);
    /* Moderate nesting works. */
    size_t n = 0;
    for (int i = 0; i < 50; i++)
        n += (size_t)sprintf(text + n, "NOT ");
    sprintf(text + n, "(a = :v)");
    err_init(&err);
    expr_ctx cx;
    expr_ctx_init(&cx, NULL, values, &err);
    expr_cond *c = NULL;
    CHECK(expr_parse_condition(&cx, "ConditionExpression", text, &c) == 0, "%s", err.msg);
    json_t *item = J("{\"a\":{\"S\":\"x\"}}");
    CHECK(c && expr_cond_eval(c, item, &err) == 1, "50 NOTs of true");
    json_decref(item);
    expr_cond_free(c);
    expr_ctx_free(&cx);
    json_decref(values);
}

/* A key condition's values are its own references. */
static void test_keycond_ownership(void)
{
    qr_err err;
    err_init(&err);
    json_t *values = J("{\":p\":{\"S\":\"a\"},\":lo\":{\"N\":\"1\"},\":hi\":{\"N\":\"2\"}}");
    expr_ctx cx;
    expr_ctx_init(&cx, NULL, values, &err);
    expr_keycond k;
    CHECK(expr_parse_key_condition(&cx, "pk = :p AND sk BETWEEN :lo AND :hi", "pk", 'S', "sk", 'N',
                                   &k) == 0,
          "%s", err.msg);
    expr_ctx_free(&cx);
    json_decref(values);
    CHECK(k.sk_op == EXPR_KEY_BETWEEN, "op");
    CHECK(strcmp(json_string_value(json_object_get(k.pk_value, "S")), "a") == 0, "pk value");
    CHECK(strcmp(json_string_value(json_object_get(k.sk_value2, "N")), "2") == 0, "upper bound");
    expr_keycond_free(&k);
    CHECK(k.pk_value == NULL && k.sk_op == EXPR_KEY_NONE, "free resets");
    expr_keycond_free(&k);
}

/* ADD and DELETE on large sets: exact counts, numbers compared by value. */
static void test_large_sets(void)
{
    qr_err err;
    err_init(&err);
    json_t *cur = json_array(), *add = json_array(), *del = json_array();
    char buf[32];
    for (int i = 0; i < 20000; i++) {
        snprintf(buf, sizeof buf, "%d", i);
        json_array_append_new(cur, json_string(buf));
        snprintf(buf, sizeof buf, "%d.0", i + 10000); /* overlaps cur for 10000..19999 */
        json_array_append_new(add, json_string(buf));
        snprintf(buf, sizeof buf, "%d", 2 * i);
        json_array_append_new(del, json_string(buf));
    }
    json_t *item = json_pack("{s:{s:o}}", "ns", "NS", cur);
    json_t *values = json_pack("{s:{s:o},s:{s:o}}", ":add", "NS", add, ":del", "NS", del);
    expr_ctx cx;
    expr_ctx_init(&cx, NULL, values, &err);
    expr_update *u1 = NULL, *u2 = NULL;
    CHECK(expr_parse_update(&cx, "ADD ns :add", &u1) == 0, "%s", err.msg);
    CHECK(expr_parse_update(&cx, "DELETE ns :del", &u2) == 0, "%s", err.msg);
    CHECK(u1 && expr_update_apply(u1, item, &err) == 0, "%s", err.msg);
    size_t n = json_array_size(json_object_get(json_object_get(item, "ns"), "NS"));
    CHECK(n == 30000, "union has %zu elements, want 30000", n);
    CHECK(u2 && expr_update_apply(u2, item, &err) == 0, "%s", err.msg);
    n = json_array_size(json_object_get(json_object_get(item, "ns"), "NS"));
    CHECK(n == 15000, "difference has %zu elements, want 15000", n);
    expr_update_free(u1);
    expr_update_free(u2);
    expr_ctx_free(&cx);
    json_decref(values);
    json_decref(item);
}

/* An update may not nest maps and lists deeper than DynamoDB's 32 levels. */
static void test_update_nesting(void)
{
    qr_err err;
    char deep[2048] = "", nested[1024] = "SET a";
    json_t *v = json_pack("{s:s}", "S", "x");
    for (int i = 0; i < 31; i++)
        v = json_pack("{s:[o]}", "L", v); /* 32 levels */
    json_t *values = json_pack("{s:o,s:{s:s}}", ":deep", v, ":s", "S", "x");
    for (int i = 0; i < 31; i++)
        strcat(nested, ".m");
    snprintf(deep, sizeof deep, "%s = :s", nested);
    json_t *item = json_object();
    /* Build a:{m:{m:…}} 32 levels deep, the most allowed. */
    json_t *cur = json_pack("{s:s}", "S", "leaf");
    for (int i = 0; i < 31; i++)
        cur = json_pack("{s:{s:o}}", "M", "m", cur);
    json_object_set_new(item, "a", cur);
    const struct {
        const char *text;
        int ok;
    } cases[] = {
        {"SET b = :deep", 1},
        {"SET b.c = :deep", 0},
        {deep, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err_init(&err);
        expr_ctx cx;
        expr_ctx_init(&cx, NULL, values, &err);
        expr_update *u = NULL;
        json_t *work = json_deep_copy(item);
        json_object_set_new(work, "b", json_pack("{s:{}}", "M"));
        CHECK(expr_parse_update(&cx, cases[i].text, &u) == 0, "%s", err.msg);
        int rc = u ? expr_update_apply(u, work, &err) : -1;
        if (cases[i].ok)
            CHECK(rc == 0, "%s: %s", cases[i].text, err.msg);
        else
            CHECK(rc == -1 && strcmp(err.msg, "Nesting Levels have exceeded supported limits") == 0,
                  "%s: rc %d, %s", cases[i].text, rc, err.msg);
        expr_update_free(u);
        expr_ctx_free(&cx);
        json_decref(work);
    }
    /* One level more under the deepest map is refused. */
    strcat(nested, ".m = :s");
    err_init(&err);
    expr_ctx cx;
    expr_ctx_init(&cx, NULL, values, &err);
    expr_update *u = NULL;
    CHECK(expr_parse_update(&cx, nested, &u) == 0, "%s", err.msg);
    json_t *work = json_deep_copy(item);
    CHECK(u && expr_update_apply(u, work, &err) == -1, "33 levels accepted");
    json_decref(work);
    expr_update_free(u);
    expr_ctx_free(&cx);
    json_decref(item);
    json_decref(values);
}

/* Malformed legacy parameters fail with a message; none crash or leak. */
static void test_legacy_malformed(void)
{
    const char *shapes[] = {
        "null",
        "1",
        "\"x\"",
        "[]",
        "{}",
        "{\"a\":null}",
        "{\"a\":1}",
        "{\"a\":[]}",
        "{\"a\":{\"Value\":1}}",
        "{\"a\":{\"Value\":{}}}",
        "{\"a\":{\"Value\":{\"S\":1}}}",
        "{\"a\":{\"Exists\":\"no\"}}",
        "{\"a\":{\"ComparisonOperator\":1}}",
        "{\"a\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":{}}}",
        "{\"a\":{\"ComparisonOperator\":\"IN\",\"AttributeValueList\":[1,2]}}",
        "{\"a\":{\"ComparisonOperator\":\"BETWEEN\",\"AttributeValueList\":[{\"N\":\"x\"},{\"N\":"
        "\"1\"}]}}",
        "{\"a\":{\"Action\":1,\"Value\":{\"S\":\"x\"}}}",
        "{\"a\":{\"Action\":\"ADD\",\"Value\":{\"NS\":[]}}}",
        "{\"a\":{\"Action\":\"DELETE\",\"Value\":{\"SS\":[\"x\",\"x\"]}}}",
        "[\"a\",1]",
        "[null]",
        "[\"a\",\"b\"]",
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        json_t *j = J(shapes[i]);
        qr_err err;
        expr_cond *c = NULL;
        expr_update *u = NULL;
        expr_proj *p = NULL;
        expr_keycond k;
        err_init(&err);
        if (expr_from_expected(j, NULL, &c, &err) == 0)
            expr_cond_free(c);
        else
            CHECK(err.msg[0] != '\0', "Expected %s: no message", shapes[i]);
        err_clear(&err);
        c = NULL;
        if (expr_from_filter("ScanFilter", j, "OR", &c, &err) == 0)
            expr_cond_free(c);
        else
            CHECK(err.msg[0] != '\0', "ScanFilter %s: no message", shapes[i]);
        err_clear(&err);
        if (expr_from_attribute_updates(j, &u, &err) == 0) {
            json_t *item = json_object();
            expr_update_apply(u, item, &err);
            json_decref(item);
            expr_update_free(u);
        }
        err_clear(&err);
        if (expr_from_attributes_to_get(j, &p, &err) == 0) expr_proj_free(p);
        err_clear(&err);
        if (expr_from_key_conditions(j, "a", 'S', NULL, 'S', &k, &err) == 0) expr_keycond_free(&k);
        err_clear(&err);
        json_decref(j);
    }
}

/* ---- randomised robustness ---- */

static unsigned long rng = 88172645463325252UL;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static const char *const pieces[] = {"a",
                                     "b",
                                     "l",
                                     "m",
                                     "s",
                                     "#a",
                                     "#b",
                                     "#zz",
                                     ":v",
                                     ":n",
                                     ":l",
                                     ":ss",
                                     ":zz",
                                     "=",
                                     "<>",
                                     "<",
                                     "<=",
                                     ">",
                                     ">=",
                                     "(",
                                     ")",
                                     "[",
                                     "]",
                                     "[0]",
                                     "[1]",
                                     "[7]",
                                     ",",
                                     ".",
                                     "+",
                                     "-",
                                     " AND ",
                                     " OR ",
                                     " NOT ",
                                     " BETWEEN ",
                                     " IN ",
                                     "SET ",
                                     "REMOVE ",
                                     "ADD ",
                                     "DELETE ",
                                     "size",
                                     "contains",
                                     "begins_with",
                                     "attribute_exists",
                                     "attribute_not_exists",
                                     "attribute_type",
                                     "if_not_exists",
                                     "list_append",
                                     "status",
                                     "1",
                                     "!",
                                     "\xc3\xa9",
                                     " ",
                                     "\t",
                                     "#",
                                     ":"};

static void random_text(char *out, size_t cap)
{
    size_t n = 0;
    unsigned k = 1 + rnd(14);
    out[0] = '\0';
    for (unsigned i = 0; i < k; i++) {
        const char *p = pieces[rnd(sizeof pieces / sizeof pieces[0])];
        size_t l = strlen(p);
        if (n + l + 1 >= cap) break;
        memcpy(out + n, p, l + 1);
        n += l;
    }
}

static void test_random(void)
{
    json_t *values = J("{\":v\":{\"S\":\"x\"},\":n\":{\"N\":\"1\"},\":l\":{\"L\":[{\"N\":\"1\"}]},"
                       "\":ss\":{\"SS\":[\"a\"]}}");
    json_t *names = J("{\"#a\":\"a\",\"#b\":\"b\"}");
    json_t *item =
        J("{\"a\":{\"N\":\"2\"},\"b\":{\"S\":\"xy\"},\"l\":{\"L\":[{\"M\":{\"a\":{\"N\":\"1\"}}},"
          "{\"SS\":[\"a\"]}]},\"m\":{\"M\":{\"l\":{\"L\":[]}}},\"s\":{\"SS\":[\"a\",\"b\"]}}");
    char text[256];
    int parsed = 0;
    for (int i = 0; i < 20000; i++) {
        random_text(text, sizeof text);
        if (i % 3 == 1) {
            memmove(text + 4, text,
                    strlen(text) + 1 > sizeof text - 4 ? sizeof text - 5 : strlen(text) + 1);
            memcpy(text, "SET ", 4);
        }
        qr_err err;
        err_init(&err);
        expr_ctx cx;
        expr_ctx_init(&cx, names, values, &err);
        expr_cond *c = NULL;
        if (expr_parse_condition(&cx, "ConditionExpression", text, &c) == 0) {
            parsed++;
            CHECK(expr_cond_eval(c, item, &err) >= 0, "eval failed for %s: %s", text, err.msg);
            CHECK(expr_cond_eval(c, NULL, &err) >= 0, "eval on no item failed for %s", text);
            expr_cond_free(c);
        }
        CHECK(err.type == NULL || err.msg[0] != '\0', "error without message for %s", text);
        err_clear(&err);
        expr_update *u = NULL;
        if (expr_parse_update(&cx, text, &u) == 0) {
            parsed++;
            json_t *work = json_deep_copy(item);
            expr_update_apply(u, work, &err);
            json_decref(work);
            json_t *t = expr_update_top_names(u);
            json_decref(t);
            expr_update_free(u);
        }
        err_clear(&err);
        expr_proj *p = NULL;
        if (expr_parse_projection(&cx, text, &p) == 0) {
            parsed++;
            json_t *r = expr_project(p, item);
            json_decref(r);
            expr_proj_free(p);
        }
        err_clear(&err);
        expr_keycond k;
        if (expr_parse_key_condition(&cx, text, "a", 'N', "b", 'S', &k) == 0) expr_keycond_free(&k);
        err_clear(&err);
        expr_ctx_free(&cx);
    }
    CHECK(parsed > 100, "random run parsed only %d expressions", parsed);
    printf("random run: %d of 20000 texts parsed as some expression\n", parsed);
    json_decref(values);
    json_decref(names);
    json_decref(item);
}

int main(void)
{
    test_in_limit();
    test_ownership();
    test_mentions_and_top_names();
    test_first_error_wins();
    test_deep_nesting();
    test_keycond_ownership();
    test_large_sets();
    test_update_nesting();
    test_legacy_malformed();
    test_random();
    if (check_failures) {
        fprintf(stderr, "test_expr: %d check_failures\n", check_failures);
        return 1;
    }
    printf("test_expr: ok\n");
    return 0;
}
