/* exprs.c — collecting the expressions of one request, and their legacy forms (Expected,
 * QueryFilter/ScanFilter, AttributeUpdates, AttributesToGet, KeyConditions): the request's
 * checks of them. Parsing and evaluating them is src/expr's. */
#include <string.h>

#include "model/value.h"
#include "model/layer.h"
#include "ops/ops.h"

typedef struct style_pair {
    int flag;
    const char *expression;
    const char *legacy;
    const char *legacy2;
} style_pair;

/* In the order DynamoDB lists them in its message: projection, filter and key condition
 * for reads; the legacy AttributesToGet, ScanFilter, QueryFilter, ConditionalOperator
 * and KeyConditions. */
static const style_pair pairs[] = {
    {EXPRS_CONDITION, "ConditionExpression", "Expected", NULL},
    {EXPRS_UPDATE, "UpdateExpression", "AttributeUpdates", NULL},
    {EXPRS_PROJECTION, "ProjectionExpression", "AttributesToGet", NULL},
    {EXPRS_FILTER, "FilterExpression", "ScanFilter", "QueryFilter"},
    {EXPRS_KEY_CONDITION, "KeyConditionExpression", "KeyConditions", NULL},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

/* Appends name to the list being built in list[0..*n), after sep unless it is the first. */
static void list_add(char *list, size_t cap, size_t *n, const char *sep, const char *name)
{
    if (*n < cap) *n += (size_t)snprintf(list + *n, cap - *n, "%s%s", *n ? sep : "", name);
}

static int check_mixing(json_t *req, int allowed, qr_err *err)
{
    char legacy[256] = "", modern[256] = "";
    size_t ln = 0, mn = 0;
    for (size_t i = 0; i < NPAIRS; i++) {
        /* ConditionalOperator belongs to the legacy conditions, so it is legacy too. */
        if (pairs[i].flag == EXPRS_KEY_CONDITION && (allowed & (EXPRS_CONDITION | EXPRS_FILTER)) &&
            json_object_get(req, "ConditionalOperator"))
            list_add(legacy, sizeof legacy, &ln, ", ", "ConditionalOperator");
        if (!(allowed & pairs[i].flag)) continue;
        int has_modern = json_object_get(req, pairs[i].expression) != NULL;
        if (has_modern) list_add(modern, sizeof modern, &mn, ", ", pairs[i].expression);
        /* KeyConditions goes with a ProjectionExpression or a FilterExpression; only
         * KeyConditionExpression excludes it. */
        if (pairs[i].flag == EXPRS_KEY_CONDITION && !has_modern) continue;
        const char *l[2] = {pairs[i].legacy, pairs[i].legacy2};
        for (int j = 0; j < 2; j++)
            if (l[j] && json_object_get(req, l[j]))
                list_add(legacy, sizeof legacy, &ln, ", ", l[j]);
    }
    if (ln && mn)
        return err_validation(err,
                              QR_MSG_MIXED_EXPRESSIONS
                              "Non-expression parameters: {%s} Expression parameters: {%s}",
                              legacy, modern);
    return 0;
}

/* A key of ExpressionAttributeNames or ExpressionAttributeValues is at most 255 bytes:
 * its prefix ('#' or ':') and then letters, digits and '_', as the expression lexer
 * reads them. DynamoDB checks emptiness, then length, then syntax. */
static int check_key(const char *param, char prefix, const char *k, qr_err *err)
{
    size_t n = strlen(k);
    if (n == 0)
        return err_validation(
            err, "%s contains invalid key: The expression attribute map contains an empty key;",
            param);
    if (n > 255) {
        /* DynamoDB gives the size for a name's key, not for a value's. */
        if (prefix == '#')
            return err_validation(err,
                                  "%s contains invalid key: The expression attribute map contains "
                                  "a key that is too long; size of key: %zu",
                                  param, n);
        return err_validation(err,
                              "%s contains invalid key: The expression attribute map contains a "
                              "key that is too long;",
                              param);
    }
    int ok = k[0] == prefix && n > 1;
    for (size_t i = 1; ok && i < n; i++) {
        unsigned char c = (unsigned char)k[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (!ok)
        return err_validation(err, "%s contains invalid key: Syntax error; key: \"%s\"", param, k);
    return 0;
}

/* Values are only for the expressions that compare or assign: a ProjectionExpression
 * alone does not take them. DynamoDB's message names the expressions that would. */
static int check_values_need_expression(json_t *req, int allowed, qr_err *err)
{
    static const struct {
        int flag;
        const char *name;
    } users[] = {{EXPRS_UPDATE, "UpdateExpression"},
                 {EXPRS_CONDITION, "ConditionExpression"},
                 {EXPRS_FILTER, "FilterExpression"},
                 {EXPRS_KEY_CONDITION, "KeyConditionExpression"}};
    char list[128] = "";
    size_t n = 0;
    int count = 0;
    for (size_t i = 0; i < sizeof users / sizeof users[0]; i++) {
        if (!(allowed & users[i].flag)) continue;
        if (json_object_get(req, users[i].name)) return 0;
        list_add(list, sizeof list, &n, " and ", users[i].name);
        count++;
    }
    /* The single-item writes no longer name the missing expressions. */
    if (count == 0 || (allowed & EXPRS_CONDITION))
        return err_validation(
            err, "ExpressionAttributeValues can only be specified when using expressions");
    return err_validation(
        err, "ExpressionAttributeValues can only be specified when using expressions: %s %s null",
        list, count > 1 ? "are" : "is");
}

static int check_names_values(json_t *names, json_t *values, qr_err *err)
{
    if (names) {
        if (json_object_size(names) == 0)
            return err_validation(err, "ExpressionAttributeNames must not be empty");
        const char *k;
        json_t *v;
        json_object_foreach(names, k, v)
        {
            if (!json_is_string(v))
                return err_set(err, QR_E_SERIALIZATION,
                               "ExpressionAttributeNames values must be strings");
            if (json_string_length(v) == 0)
                return err_validation(err,
                                      "ExpressionAttributeNames contains invalid value: Empty "
                                      "attribute name for key %s",
                                      k);
            /* Attribute names are C strings here, as object keys are in every request. */
            if (strlen(json_string_value(v)) != json_string_length(v))
                return err_validation(err,
                                      "ExpressionAttributeNames contains invalid value: NUL "
                                      "character in attribute name for key %s",
                                      k);
            if (check_key("ExpressionAttributeNames", '#', k, err)) return -1;
        }
    }
    if (values) {
        if (json_object_size(values) == 0)
            return err_validation(err, "ExpressionAttributeValues must not be empty");
        const char *k;
        json_t *v;
        json_object_foreach(values, k, v)
        {
            if (check_key("ExpressionAttributeValues", ':', k, err)) return -1;
            qr_err inner;
            err_init(&inner);
            /* Their nesting is judged by each operation (a transaction does not judge it). */
            /* The older layer (model/layer.h) wraps what is wrong with a value in the
             * name of its key; the current one reports it as it is. */
            if (value_validate_any_depth(v, k, &inner)) {
                if (strcmp(inner.type, QR_E_VALIDATION) == 0 &&
                    value_layer_now() == VALUE_LAYER_OLDER)
                    return err_validation(err, QR_MSG_INVALID_VALUE "%s for key %s", inner.msg, k);
                return err_set(err, inner.type, "%s", inner.msg);
            }
        }
    }
    return 0;
}

static int expression_text(json_t *req, const char *key, const char **out, qr_err *err)
{
    if (param_string(req, key, out, err)) return -1;
    /* The parser reads C strings: a NUL would silently end the expression early. */
    if (*out && strlen(*out) != json_string_length(json_object_get(req, key)))
        return err_validation(err, "Invalid %s: Syntax error; token: \"\\u0000\", near: \"%s\"",
                              key, *out);
    if (*out && (*out)[strspn(*out, " \t\r\n")] == '\0')
        return err_validation(err, "Invalid %s: The expression can not be empty;", key);
    return 0;
}

/* ConditionalOperator joins the conditions of Expected, QueryFilter or ScanFilter, so
 * DynamoDB refuses it without one of them, or with one that holds a single condition. */
static int check_conditional_operator(json_t *req, int allowed, qr_err *err)
{
    static const char *const maps[] = {"Expected", "QueryFilter", "ScanFilter"};
    int present = 0;
    for (size_t i = 0; i < 3; i++) {
        if (!(allowed & (i == 0 ? EXPRS_CONDITION : EXPRS_FILTER))) continue;
        json_t *m = json_object_get(req, maps[i]);
        if (m == NULL || json_is_null(m)) continue;
        present = 1;
        if (json_is_object(m) && json_object_size(m) <= 1)
            return err_validation(err, "ConditionalOperator can only be used when Filter or "
                                       "Expected has two or more elements");
    }
    if (!present)
        return err_validation(err, "ConditionalOperator cannot be used without Filter or Expected");
    return 0;
}

/* Every parameter exprs_parse reads. */
static const char *const expression_params[] = {"ExpressionAttributeNames",
                                                "ExpressionAttributeValues",
                                                "ConditionalOperator",
                                                "ConditionExpression",
                                                "Expected",
                                                "FilterExpression",
                                                "QueryFilter",
                                                "ScanFilter",
                                                "UpdateExpression",
                                                "AttributeUpdates",
                                                "ProjectionExpression",
                                                "AttributesToGet",
                                                "KeyConditionExpression",
                                                "KeyConditions",
                                                NULL};

/* Whether req has none of the parameters exprs_parse reads. Requests have a handful of
 * keys, so one pass over them is cheaper than a hash lookup of each parameter. */
static int no_expression_params(json_t *req)
{
    const char *k;
    json_t *v;
    json_object_foreach(req, k, v)
    {
        for (size_t i = 0; expression_params[i]; i++)
            if (k[0] == expression_params[i][0] && strcmp(k, expression_params[i]) == 0) return 0;
    }
    return 1;
}

/* An operation allows some of ConditionExpression, FilterExpression, UpdateExpression,
 * ProjectionExpression and KeyConditionExpression (allowed), each with its legacy equivalent.
 * DynamoDB forbids mixing the two styles in one request, requires names and values to be used,
 * and requires them to be absent when no expression is given. */
int exprs_parse(req_exprs *x, json_t *req, int allowed, qr_err *err)
{
    memset(x, 0, sizeof *x);
    if (no_expression_params(req)) {
        /* What the full course below comes to when every parameter is absent. */
        expr_ctx_init(&x->cx, NULL, NULL, err);
        return 0;
    }
    json_t *names, *values;
    if (param_object(req, "ExpressionAttributeNames", &names, err)) return -1;
    if (param_object(req, "ExpressionAttributeValues", &values, err)) return -1;
    expr_ctx_init(&x->cx, names, values, err);
    if (check_mixing(req, allowed, err)) return -1;
    int any = 0;
    for (size_t i = 0; i < NPAIRS; i++)
        if ((allowed & pairs[i].flag) && json_object_get(req, pairs[i].expression)) any = 1;
    if (names && !any)
        return err_validation(
            err, "ExpressionAttributeNames can only be specified when using expressions");
    if (values && check_values_need_expression(req, allowed, err)) return -1;
    if (check_names_values(names, values, err)) return -1;

    const char *text, *op;
    if (param_string(req, "ConditionalOperator", &op, err)) return -1;
    if (op && (allowed & (EXPRS_CONDITION | EXPRS_FILTER)) &&
        check_conditional_operator(req, allowed, err))
        return -1;
    if (allowed & EXPRS_CONDITION) {
        if (expression_text(req, "ConditionExpression", &text, err)) return -1;
        json_t *expected;
        if (param_object(req, "Expected", &expected, err)) return -1;
        if (text && expr_parse_condition(&x->cx, "ConditionExpression", text, &x->condition))
            return -1;
        if (expected && expr_from_expected(expected, op, &x->condition, err)) return -1;
    }
    if (allowed & EXPRS_FILTER) {
        if (expression_text(req, "FilterExpression", &text, err)) return -1;
        json_t *qf, *sf;
        if (param_object(req, "QueryFilter", &qf, err) || param_object(req, "ScanFilter", &sf, err))
            return -1;
        if (text && expr_parse_condition(&x->cx, "FilterExpression", text, &x->filter)) return -1;
        if (qf && expr_from_filter("QueryFilter", qf, op, &x->filter, err)) return -1;
        if (sf && expr_from_filter("ScanFilter", sf, op, &x->filter, err)) return -1;
    }
    if (allowed & EXPRS_UPDATE) {
        if (expression_text(req, "UpdateExpression", &text, err)) return -1;
        json_t *au;
        if (param_object(req, "AttributeUpdates", &au, err)) return -1;
        if (text && expr_parse_update(&x->cx, text, &x->update)) return -1;
        if (au && expr_from_attribute_updates(au, &x->update, err)) return -1;
    }
    if (allowed & EXPRS_PROJECTION) {
        if (expression_text(req, "ProjectionExpression", &text, err)) return -1;
        json_t *atg;
        if (param_array(req, "AttributesToGet", &atg, err)) return -1;
        if (text && expr_parse_projection(&x->cx, text, &x->projection)) return -1;
        if (atg && expr_from_attributes_to_get(atg, &x->projection, err)) return -1;
    }
    if (allowed & EXPRS_KEY_CONDITION) {
        if (expression_text(req, "KeyConditionExpression", &text, err)) return -1;
        x->has_key_condition = text != NULL;
    }
    return 0;
}

int exprs_finish(req_exprs *x)
{
    return expr_ctx_check_unused(&x->cx);
}

/* Whether projection p or filter f looks inside attribute name. */
static int nests_into(const expr_proj *p, const expr_cond *f, const char *name)
{
    return expr_proj_nests_into(p, name) || expr_cond_nests_into(f, name);
}

int exprs_check_key_paths(const req_exprs *x, const table *t, qr_err *err)
{
    return exprs_check_paths(x->projection, x->filter, t, err);
}

int exprs_check_paths(const expr_proj *p, const expr_cond *f, const table *t, qr_err *err)
{
    static const char msg[] =
        "Key attributes must be scalars; list random access '[]' and map lookup '.' "
        "are not allowed: %s: %s";
    const key_attr *keys[2] = {table_pk(t), table_sk(t)};
    for (int k = 0; k < 2; k++)
        if (keys[k]->name && nests_into(p, f, keys[k]->name))
            return err_validation(err, msg, "Key", keys[k]->name);
    for (size_t i = 0; i < table_index_count(t); i++) {
        const qr_index *ix = &table_indexes(t)[i];
        for (int k = 0; k < ix->npk; k++)
            if (nests_into(p, f, ix->pk[k])) return err_validation(err, msg, "IndexKey", ix->pk[k]);
        for (int k = 0; k < ix->nsk; k++)
            if (nests_into(p, f, ix->sk[k])) return err_validation(err, msg, "IndexKey", ix->sk[k]);
    }
    return 0;
}

void exprs_free(req_exprs *x)
{
    if (x->condition) expr_cond_free(x->condition);
    if (x->filter) expr_cond_free(x->filter);
    if (x->update) expr_update_free(x->update);
    if (x->projection) expr_proj_free(x->projection);
    expr_ctx_free(&x->cx);
    memset(x, 0, sizeof *x);
}

int exprs_operand_type_error(json_t *filter, json_t *names, json_t *values, qr_err *err)
{
    static const char wrong_type[] = "Incorrect operand type";
    json_t *probe = json_pack("{s:O}", "FilterExpression", filter);
    if (probe == NULL) return 0;
    if (names) json_object_set(probe, "ExpressionAttributeNames", names);
    if (values) json_object_set(probe, "ExpressionAttributeValues", values);
    req_exprs x;
    qr_err e;
    err_init(&e);
    if (exprs_parse(&x, probe, EXPRS_FILTER, &e) == 0) exprs_finish(&x);
    exprs_free(&x);
    json_decref(probe);
    const char *at =
        e.type && strcmp(e.type, QR_E_VALIDATION) == 0 ? strstr(e.msg, wrong_type) : NULL;
    int rc = at ? err_validation(err, "%s", at) : 0;
    err_clear(&e);
    return rc;
}
