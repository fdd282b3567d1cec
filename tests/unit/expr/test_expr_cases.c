/* test_expr_cases.c — runs the declarative expression cases in the files of tests/expr/cases.
 *
 * Each file is an object whose "cases" array holds the cases; its other fields are
 * defaults every case may override. Each case names a kind (condition, update,
 * projection, key, expected, filter, attribute_updates, attributes_to_get,
 * key_conditions), its input (expr, names, values, item, …) and either the expected
 * outcome (result, expect) or the exact error message. Run from the repository root;
 * exits non-zero if any case fails. Focused tests that need code live in test_expr.c. */
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "model/value.h"

static int failures, passed;

static void failf(const char *file, size_t idx, json_t *c, const char *fmt, const char *a,
                  const char *b)
{
    const char *e = json_string_value(json_object_get(c, "expr"));
    const char *name = json_string_value(json_object_get(c, "name"));
    fprintf(stderr, "FAIL %s[%zu] %s%s%s: ", file, idx, name ? name : "", name ? " " : "",
            e ? e : "");
    fprintf(stderr, fmt, a ? a : "(null)", b ? b : "(null)");
    fprintf(stderr, "\n");
    failures++;
}

static char *dump(const json_t *j)
{
    return j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : strdup("null");
}

static int same_json(const json_t *a, const json_t *b)
{
    if (a == NULL || b == NULL) return a == b;
    return json_equal((json_t *)a, (json_t *)b);
}

/* Checks err against the case's expected error field; returns 1 if the case ended. */
static int check_error(const char *file, size_t idx, json_t *c, const char *field, int rc,
                       qr_err *err)
{
    const char *want = json_string_value(json_object_get(c, field));
    /* "error_prefix" checks only the start of the message (for syntax errors whose
     * quoted neighbourhood is beside the point of the case). */
    const char *prefix =
        strcmp(field, "error") == 0 ? json_string_value(json_object_get(c, "error_prefix")) : NULL;
    if (prefix) {
        if (rc == 0) {
            failf(file, idx, c, "expected an error starting \"%s\"%s", prefix, "");
        } else if (strncmp(err->msg, prefix, strlen(prefix)) != 0) {
            failf(file, idx, c, "error mismatch:\n   want: %s...\n    got: %s", prefix, err->msg);
        } else {
            passed++;
        }
        return 1;
    }
    if (rc == 0 && want == NULL) return 0;
    if (rc == 0) {
        failf(file, idx, c, "expected error \"%s\"%s", want, "");
        return 1;
    }
    if (want == NULL) {
        failf(file, idx, c, "unexpected error \"%s\"%s", err->msg, "");
        return 1;
    }
    if (strcmp(want, err->msg) != 0) {
        failf(file, idx, c, "error mismatch:\n   want: %s\n    got: %s", want, err->msg);
        return 1;
    }
    if (err->type == NULL || strcmp(err->type, QR_E_VALIDATION) != 0) {
        failf(file, idx, c, "error type %s%s", err->type, "");
        return 1;
    }
    passed++;
    return 1;
}

static void check_result(const char *file, size_t idx, json_t *c, expr_cond *cond, json_t *item)
{
    qr_err err;
    err_init(&err);
    int r = expr_cond_eval(cond, item, &err);
    json_t *want = json_object_get(c, "result");
    if (r < 0) {
        failf(file, idx, c, "evaluation failed: %s%s", err.msg, "");
    } else if (!json_is_boolean(want)) {
        failf(file, idx, c, "case has no boolean result%s%s", "", "");
    } else if (r != json_is_true(want)) {
        failf(file, idx, c, "result %s, want %s", r ? "true" : "false",
              json_is_true(want) ? "true" : "false");
    } else {
        passed++;
    }
}

static void check_json(const char *file, size_t idx, json_t *c, const json_t *got)
{
    json_t *want = json_object_get(c, "expect");
    if (same_json(want, got)) {
        passed++;
        return;
    }
    char *w = dump(want), *g = dump(got);
    failf(file, idx, c, "result mismatch:\n   want: %s\n    got: %s", w, g);
    free(w);
    free(g);
}

static json_t *keycond_json(const expr_keycond *k)
{
    static const char *const ops[] = {"NONE", "EQ", "LT",      "LE",
                                      "GT",   "GE", "BETWEEN", "BEGINS_WITH"};
    json_t *j = json_pack("{s:O,s:s}", "pk", k->pk_value, "op", ops[k->sk_op]);
    if (k->sk_value1) json_object_set(j, "v1", k->sk_value1);
    if (k->sk_value2) json_object_set(j, "v2", k->sk_value2);
    return j;
}

static void run_case(const char *file, size_t idx, json_t *c)
{
    const char *kind = json_string_value(json_object_get(c, "kind"));
    const char *text = json_string_value(json_object_get(c, "expr"));
    json_t *names = json_object_get(c, "names");
    json_t *values = json_deep_copy(json_object_get(c, "values"));
    json_t *item = json_object_get(c, "item");
    if (json_is_null(item)) item = NULL;
    qr_err err;
    err_init(&err);
    const char *key;
    json_t *v;
    json_object_foreach(values, key, v)
    {
        if (value_validate(v, 1, key, &err)) {
            failf(file, idx, c, "invalid value in case: %s%s", err.msg, "");
            json_decref(values);
            return;
        }
    }
    expr_ctx cx;
    expr_ctx_init(&cx, names, values, &err);
    json_t *schema = json_object_get(c, "schema");
    const char *pk = json_string_value(json_object_get(schema, "pk"));
    const char *sk = json_string_value(json_object_get(schema, "sk"));
    const char *pkt = json_string_value(json_object_get(schema, "pk_type"));
    const char *skt = json_string_value(json_object_get(schema, "sk_type"));
    const char *op = json_string_value(json_object_get(c, "op"));
    int unused = json_is_true(json_object_get(c, "check_unused"));

    if (kind && (strcmp(kind, "condition") == 0 || strcmp(kind, "expected") == 0 ||
                 strcmp(kind, "filter") == 0)) {
        expr_cond *cond = NULL;
        int rc;
        if (kind[0] == 'c') {
            const char *which = json_string_value(json_object_get(c, "which"));
            rc = expr_parse_condition(&cx, which ? which : "ConditionExpression", text, &cond);
        } else if (kind[0] == 'e') {
            rc = expr_from_expected(json_object_get(c, "expected"), op, &cond, &err);
        } else {
            const char *which = json_string_value(json_object_get(c, "which"));
            rc = expr_from_filter(which ? which : "ScanFilter", json_object_get(c, "filter"), op,
                                  &cond, &err);
        }
        if (rc == 0 && unused) rc = expr_ctx_check_unused(&cx);
        if (!check_error(file, idx, c, "error", rc, &err)) check_result(file, idx, c, cond, item);
        expr_cond_free(cond);
    } else if (kind && (strcmp(kind, "update") == 0 || strcmp(kind, "attribute_updates") == 0)) {
        expr_update *u = NULL;
        int rc = kind[0] == 'u'
                     ? expr_parse_update(&cx, text, &u)
                     : expr_from_attribute_updates(json_object_get(c, "updates"), &u, &err);
        if (rc == 0 && unused) rc = expr_ctx_check_unused(&cx);
        if (!check_error(file, idx, c, "error", rc, &err)) {
            json_t *work = item ? json_deep_copy(item) : json_object();
            rc = expr_update_apply(u, work, &err);
            if (!check_error(file, idx, c, "apply_error", rc, &err)) check_json(file, idx, c, work);
            json_t *want_new = json_object_get(c, "updated_new");
            if (want_new && rc == 0) {
                expr_proj *up = expr_update_projection(u);
                json_t *got = up ? expr_project(up, work) : NULL;
                if (same_json(want_new, got)) {
                    passed++;
                } else {
                    char *w = dump(want_new), *g = dump(got);
                    failf(file, idx, c, "updated_new mismatch:\n   want: %s\n    got: %s", w, g);
                    free(w);
                    free(g);
                }
                json_decref(got);
                expr_proj_free(up);
            }
            json_t *tops = json_object_get(c, "top_names");
            if (tops) {
                json_t *got = expr_update_top_names(u);
                if (same_json(tops, got))
                    passed++;
                else
                    failf(file, idx, c, "top names differ%s%s", "", "");
                json_decref(got);
            }
            json_decref(work);
        }
        expr_update_free(u);
    } else if (kind &&
               (strcmp(kind, "projection") == 0 || strcmp(kind, "attributes_to_get") == 0)) {
        expr_proj *p = NULL;
        int rc = kind[0] == 'p'
                     ? expr_parse_projection(&cx, text, &p)
                     : expr_from_attributes_to_get(json_object_get(c, "names_list"), &p, &err);
        if (rc == 0 && unused) rc = expr_ctx_check_unused(&cx);
        if (!check_error(file, idx, c, "error", rc, &err)) {
            json_t *got = expr_project(p, item);
            check_json(file, idx, c, got);
            json_decref(got);
        }
        expr_proj_free(p);
    } else if (kind && (strcmp(kind, "key") == 0 || strcmp(kind, "key_conditions") == 0)) {
        expr_keycond k;
        int rc = kind[3] == '\0' ? expr_parse_key_condition(&cx, text, pk, pkt ? pkt[0] : 'S', sk,
                                                            skt ? skt[0] : 'S', &k)
                                 : expr_from_key_conditions(json_object_get(c, "conditions"), pk,
                                                            pkt ? pkt[0] : 'S', sk,
                                                            skt ? skt[0] : 'S', &k, &err);
        int parsed = rc == 0;
        if (rc == 0 && unused) rc = expr_ctx_check_unused(&cx);
        if (!check_error(file, idx, c, "error", rc, &err)) {
            json_t *got = keycond_json(&k);
            check_json(file, idx, c, got);
            json_decref(got);
        }
        if (parsed) expr_keycond_free(&k);
    } else {
        failf(file, idx, c, "unknown kind %s%s", kind, "");
    }
    expr_ctx_free(&cx);
    err_clear(&err);
    json_decref(values);
}

int main(void)
{
    glob_t g;
    if (glob("tests/expr/cases/*.json", 0, NULL, &g) != 0) {
        fprintf(stderr,
                "no case files found under tests/expr/cases (run from the repository root)\n");
        return 1;
    }
    for (size_t f = 0; f < g.gl_pathc; f++) {
        json_error_t je;
        json_t *doc = json_load_file(g.gl_pathv[f], 0, &je);
        json_t *cases = json_object_get(doc, "cases");
        if (!json_is_array(cases)) {
            fprintf(stderr, "FAIL %s: %s (line %d)\n", g.gl_pathv[f], doc ? "no cases" : je.text,
                    je.line);
            failures++;
            json_decref(doc);
            continue;
        }
        size_t i;
        json_t *c;
        json_array_foreach(cases, i, c)
        {
            /* Fields given at the top of the file are defaults for every case. */
            json_t *merged = json_deep_copy(doc);
            json_object_del(merged, "cases");
            json_object_update(merged, c);
            run_case(g.gl_pathv[f], i, merged);
            json_decref(merged);
        }
        json_decref(doc);
    }
    globfree(&g);
    printf("expr cases: %d checks passed, %d failed\n", passed, failures);
    return failures ? 1 : 0;
}
