/* fuzz_expr.c — libFuzzer harness for the expression language (src/expr/expr.h).
 *
 * Input: one mode byte, then "text<NUL>values-json<NUL>names-json" (the last two
 * optional; defaults are used when absent or not JSON objects). Modes parse and run a
 * condition, an update (applied to a copy of a fixed item), a projection, a key
 * condition (single and multi-attribute schema), and the legacy JSON parameters
 * (Expected, ScanFilter, AttributeUpdates, AttributesToGet, KeyConditions). It checks
 * only for crashes, leaks, hangs and broken invariants, not for DynamoDB's messages. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "expr/expr.h"
#include "model/value.h"

#define CHECK(c)                                                                             \
    do {                                                                                     \
        if (!(c)) {                                                                          \
            fprintf(stderr, "fuzz_expr: check failed at line %d: %s\n", __LINE__, #c);       \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

static const char *item_text =
    "{\"id\":{\"S\":\"1\"},\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"3\"},\"n\":{\"N\":\"5\"},"
    "\"s\":{\"S\":\"str\"},\"b\":{\"B\":\"AQID\"},\"t\":{\"BOOL\":true},\"z\":{\"NULL\":true},"
    "\"l\":{\"L\":[{\"N\":\"0\"},{\"S\":\"x\"},{\"L\":[{\"N\":\"7\"}]},{\"M\":{\"k\":{\"S\":\"v\"}}}]},"
    "\"m\":{\"M\":{\"a\":{\"M\":{\"b\":{\"N\":\"3\"}}},\"name\":{\"S\":\"bob\"},\"l\":{\"L\":[]}}},"
    "\"ss\":{\"SS\":[\"a\",\"b\"]},\"ns\":{\"NS\":[\"1\",\"2.5\"]},\"bs\":{\"BS\":[\"AQ==\"]},"
    "\"status\":{\"S\":\"on\"},\"big\":{\"N\":\"9.9999999999999999999999999999999999999E+125\"}}";

static const char *values_text =
    "{\":v\":{\"S\":\"x\"},\":n\":{\"N\":\"1\"},\":s\":{\"S\":\"S\"},\":b\":{\"B\":\"AQ==\"},"
    "\":l\":{\"L\":[{\"S\":\"y\"}]},\":m\":{\"M\":{\"q\":{\"N\":\"1\"}}},\":ss\":{\"SS\":[\"a\",\"c\"]},"
    "\":ns\":{\"NS\":[\"3\",\"1.0\"]},\":bs\":{\"BS\":[\"Ag==\"]},\":t\":{\"BOOL\":false},"
    "\":z\":{\"NULL\":true},\":big\":{\"N\":\"9.9999999999999999999999999999999999999E+125\"},"
    "\":tiny\":{\"N\":\"1E-130\"},\":neg\":{\"N\":\"-2\"}}";

static const char *names_text =
    "{\"#n\":\"n\",\"#s\":\"s\",\"#st\":\"status\",\"#a\":\"a\",\"#pk\":\"pk\",\"#sk\":\"sk\","
    "\"#l\":\"l\",\"#m\":\"m\",\"#dot\":\"a.b\",\"#e\":\"\"}";

static json_t *item, *def_values, *def_names;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    json_error_t je;
    item = json_loads(item_text, 0, &je);
    def_values = json_loads(values_text, 0, &je);
    def_names = json_loads(names_text, 0, &je);
    CHECK(item && def_values && def_names);
    qr_err err;
    err_init(&err);
    CHECK(item_validate(item, &err) == 0);
    return 0;
}

/* A JSON object from len bytes, or NULL. */
static json_t *object_from(const char *p, size_t len)
{
    json_error_t je;
    json_t *j = json_loadb(p, len, JSON_REJECT_DUPLICATES, &je);
    if (j && !json_is_object(j)) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

/* Keeps only what the request layer would let through (src/ops/exprs.c). */
static void clean_values(json_t *values)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(values, tmp, k, v) {
        qr_err err;
        err_init(&err);
        if (k[0] != ':' || value_validate(v, 1, k, &err) != 0) json_object_del(values, k);
        err_clear(&err);
    }
}

static void clean_names(json_t *names)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(names, tmp, k, v) {
        if (k[0] != '#' || !json_is_string(v) || json_string_length(v) == 0) json_object_del(names, k);
    }
}

static void run_condition(expr_ctx *cx, const char *text)
{
    expr_cond *c = NULL;
    if (expr_parse_condition(cx, "ConditionExpression", text, &c) == 0) {
        CHECK(c != NULL);
        expr_ctx_check_unused(cx);
        qr_err e;
        err_init(&e);
        int r = expr_cond_eval(c, item, &e);
        CHECK(r == 1 || r == 0 || (r == -1 && e.type));
        err_clear(&e);
        r = expr_cond_eval(c, NULL, &e);
        CHECK(r == 1 || r == 0 || (r == -1 && e.type));
        err_clear(&e);
        expr_cond_mentions(c, "pk");
        expr_cond_mentions(c, "n");
        expr_cond_free(c);
    }
}

static void run_update(expr_ctx *cx, const char *text)
{
    expr_update *u = NULL;
    if (expr_parse_update(cx, text, &u) == 0) {
        CHECK(u != NULL);
        json_t *names = expr_update_top_names(u);
        CHECK(json_is_array(names));
        json_decref(names);
        expr_proj *p = expr_update_projection(u);
        json_t *copy = json_deep_copy(item);
        qr_err e;
        err_init(&e);
        if (expr_update_apply(u, copy, &e) == 0) {
            /* The result must still be a valid item. */
            qr_err v;
            err_init(&v);
            json_t *check = json_deep_copy(copy);
            const char *k;
            json_t *av;
            json_object_foreach(check, k, av) {
                if (value_validate(av, 1, k, &v) != 0) {
                    char *dump = json_dumps(copy, JSON_COMPACT);
                    fprintf(stderr, "fuzz_expr: update \"%s\" produced an invalid item: %s\n%s\n", text,
                            v.msg, dump);
                    free(dump);
                    abort();
                }
            }
            json_decref(check);
            if (p) {
                json_t *pr = expr_project(p, copy);
                json_decref(pr);
            }
        } else {
            CHECK(e.type != NULL);
        }
        err_clear(&e);
        json_t *empty = json_object();
        if (expr_update_apply(u, empty, &e) != 0) CHECK(e.type != NULL);
        err_clear(&e);
        json_decref(empty);
        json_decref(copy);
        if (p) expr_proj_free(p);
        expr_update_free(u);
    }
}

static void run_projection(expr_ctx *cx, const char *text)
{
    expr_proj *p = NULL;
    if (expr_parse_projection(cx, text, &p) == 0) {
        CHECK(p != NULL);
        json_t *r = expr_project(p, item);
        CHECK(json_is_object(r));
        json_decref(r);
        json_t *empty = json_object();
        r = expr_project(p, empty);
        json_decref(r);
        json_decref(empty);
        expr_proj_free(p);
    }
}

static void run_key(expr_ctx *cx, const char *text, int variant)
{
    static const char types[] = {'S', 'N', 'B'};
    expr_keycond k;
    memset(&k, 0, sizeof k);
    if (expr_parse_key_condition(cx, text, "pk", types[variant % 3], variant & 4 ? NULL : "sk",
                                 types[(variant / 3) % 3], &k) == 0)
        CHECK(k.pk_value != NULL);
    expr_keycond_free(&k);
}

static void run_key_multi(expr_ctx *cx, const char *text, int variant)
{
    expr_key_schema ks;
    memset(&ks, 0, sizeof ks);
    static const char *pks[] = {"pk", "t", "r", "#x"};
    static const char *sks[] = {"sk", "score", "player", "n"};
    static const char types[] = {'S', 'N', 'B'};
    ks.npk = 1 + (variant & 3);
    ks.nsk = (variant >> 2) % 5;
    for (int i = 0; i < ks.npk; i++) {
        ks.pk_names[i] = pks[i];
        ks.pk_types[i] = types[(variant + i) % 3];
    }
    for (int i = 0; i < ks.nsk; i++) {
        ks.sk_names[i] = sks[i];
        ks.sk_types[i] = types[(variant + 2 * i) % 3];
    }
    expr_keycond_multi k;
    memset(&k, 0, sizeof k);
    if (expr_parse_key_condition_multi(cx, text, &ks, &k) == 0) {
        for (int i = 0; i < ks.npk; i++) CHECK(k.pk_values[i] != NULL);
        CHECK(k.nsk_eq <= ks.nsk);
    }
    expr_keycond_multi_free(&k);
}

/* The legacy parameters take JSON: the text part is the JSON document. */
static void run_legacy(const char *text, size_t len, int which)
{
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!j) return;
    qr_err e;
    err_init(&e);
    static const char *ops[] = {NULL, "AND", "OR", "XOR"};
    if (which == 0 && json_is_object(j)) {
        expr_cond *c = NULL;
        if (expr_from_expected(j, ops[len % 4], &c, &e) == 0) {
            qr_err e2;
            err_init(&e2);
            expr_cond_eval(c, item, &e2);
            err_clear(&e2);
            expr_cond_eval(c, NULL, &e2);
            err_clear(&e2);
            expr_cond_free(c);
        }
    } else if (which == 1 && json_is_object(j)) {
        expr_cond *c = NULL;
        if (expr_from_filter(len & 1 ? "QueryFilter" : "ScanFilter", j, ops[len % 4], &c, &e) == 0) {
            qr_err e2;
            err_init(&e2);
            expr_cond_eval(c, item, &e2);
            err_clear(&e2);
            expr_cond_free(c);
        }
    } else if (which == 2 && json_is_object(j)) {
        expr_update *u = NULL;
        if (expr_from_attribute_updates(j, &u, &e) == 0) {
            json_t *copy = json_deep_copy(item);
            qr_err e2;
            err_init(&e2);
            expr_update_apply(u, copy, &e2);
            err_clear(&e2);
            json_decref(copy);
            json_t *names = expr_update_top_names(u);
            json_decref(names);
            expr_update_free(u);
        }
    } else if (which == 3 && json_is_array(j)) {
        expr_proj *p = NULL;
        if (expr_from_attributes_to_get(j, &p, &e) == 0) {
            json_t *r = expr_project(p, item);
            json_decref(r);
            expr_proj_free(p);
        }
    } else if (which == 4 && json_is_object(j)) {
        expr_keycond k;
        memset(&k, 0, sizeof k);
        expr_from_key_conditions(j, "pk", 'S', len & 1 ? NULL : "sk", 'N', &k, &e);
        expr_keycond_free(&k);
        err_clear(&e);
        expr_key_schema ks = {.npk = 2, .nsk = 2, .pk_names = {"pk", "t"}, .pk_types = {'S', 'S'},
                              .sk_names = {"sk", "n"}, .sk_types = {'N', 'B'}};
        expr_keycond_multi km;
        memset(&km, 0, sizeof km);
        expr_from_key_conditions_multi(j, &ks, &km, &e);
        expr_keycond_multi_free(&km);
    }
    err_clear(&e);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    const char *nul1 = memchr(p, '\0', n);
    size_t tlen = nul1 ? (size_t)(nul1 - p) : n;
    char *text = malloc(tlen + 1);
    memcpy(text, p, tlen);
    text[tlen] = '\0';

    unsigned m = mode % 16;
    if (m >= 11) {
        run_legacy(text, tlen, (int)(m - 11));
        free(text);
        return 0;
    }

    json_t *values = NULL, *names = NULL;
    if (nul1) {
        const char *vp = nul1 + 1;
        size_t vn = n - tlen - 1;
        const char *nul2 = memchr(vp, '\0', vn);
        size_t vlen = nul2 ? (size_t)(nul2 - vp) : vn;
        values = object_from(vp, vlen);
        if (nul2) names = object_from(nul2 + 1, vn - vlen - 1);
    }
    if (!values) values = json_deep_copy(def_values);
    if (!names) names = json_deep_copy(def_names);
    clean_values(values);
    clean_names(names);
    json_t *v = json_object_size(values) ? values : NULL;
    json_t *nm = json_object_size(names) ? names : NULL;

    qr_err err;
    err_init(&err);
    expr_ctx cx;
    expr_ctx_init(&cx, nm, v, &err);
    switch (m) {
    case 0: case 1: run_condition(&cx, text); break;
    case 2: case 3: case 4: run_update(&cx, text); break;
    case 5: case 6: run_projection(&cx, text); break;
    case 7: case 8: run_key(&cx, text, mode >> 4); break;
    default: run_key_multi(&cx, text, mode >> 4); break;
    }
    expr_ctx_free(&cx);
    err_clear(&err);
    json_decref(values);
    json_decref(names);
    free(text);
    return 0;
}
