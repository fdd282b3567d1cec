/* legacy.c — the pre-expression parameters translated into the parsed forms.
 *
 * Expected, QueryFilter/ScanFilter (+ ConditionalOperator), AttributeUpdates,
 * AttributesToGet and KeyConditions are validated with DynamoDB's messages and become
 * the trees the parser builds, so one evaluator serves both. NE is true for a missing
 * attribute and NOT_CONTAINS false for one, as DynamoDB documents. */
#include "expr/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/value.h"

#define INVALID QR_MSG_INVALID_PARAMETER

/* A legacy parameter names attributes directly; the item limit on names applies. */
static int check_name(const char *attr, qr_err *err)
{
    if (strlen(attr) > QR_MAX_NAME_SIZE)
        return err_validation(err,
                              INVALID "Attribute name is too large, must be less than 65536 bytes");
    return 0;
}

typedef enum legacy_op {
    L_EQ,
    L_NE,
    L_LE,
    L_LT,
    L_GE,
    L_GT,
    L_NOT_NULL,
    L_NULL,
    L_CONTAINS,
    L_NOT_CONTAINS,
    L_BEGINS_WITH,
    L_IN,
    L_BETWEEN,
    L_NONE
} legacy_op;

static const char *const op_names[] = {
    "EQ",   "NE",       "LE",           "LT",          "GE", "GT",     "NOT_NULL",
    "NULL", "CONTAINS", "NOT_CONTAINS", "BEGINS_WITH", "IN", "BETWEEN"};

static legacy_op op_from_name(const char *s)
{
    for (int i = 0; s && i < L_NONE; i++)
        if (strcmp(s, op_names[i]) == 0) return (legacy_op)i;
    return L_NONE;
}

static int enum_error(qr_err *err, const char *value, const char *where, const char *set)
{
    return err_violation(err, value, where, QR_MSG_ENUM, set);
}

#define OP_SET                                                                                     \
    "IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS"

/* "scanFilter" for "ScanFilter": the member path DynamoDB names in enum errors. */
static void lower_first(const char *s, char *out, size_t cap)
{
    snprintf(out, cap, "%s", s);
    if (out[0] >= 'A' && out[0] <= 'Z') out[0] = (char)(out[0] - 'A' + 'a');
}

static int count_ok(legacy_op op, size_t n)
{
    switch (op) {
    case L_NOT_NULL:
    case L_NULL:
        return n == 0;
    case L_IN:
        return n > 0;
    case L_BETWEEN:
        return n == 2;
    default:
        return n == 1;
    }
}

/* Types each operator accepts in its AttributeValueList. */
static int type_ok(legacy_op op, qr_type t)
{
    switch (op) {
    case L_EQ:
    case L_NE:
        return 1;
    case L_CONTAINS:
    case L_NOT_CONTAINS:
        return t == QR_T_S || t == QR_T_N || t == QR_T_B || t == QR_T_BOOL || t == QR_T_NULL;
    case L_BEGINS_WITH:
        return t == QR_T_S || t == QR_T_B;
    default:
        return t == QR_T_S || t == QR_T_N || t == QR_T_B;
    }
}

static int validate_values(json_t *list, const char *attr, qr_err *err)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        if (value_validate(v, 1, attr, err)) return -1;
    }
    return 0;
}

/* Checks an operator with its values: count, one type, types allowed, BETWEEN order. */
static int check_operands(legacy_op op, const char *opname, json_t *list, qr_err *err)
{
    size_t n = json_array_size(list);
    if (!count_ok(op, n))
        return err_validation(
            err, INVALID "Invalid number of argument(s) for the %s ComparisonOperator", opname);
    for (size_t i = 1; i < n; i++)
        if (value_type(json_array_get(list, i)) != value_type(json_array_get(list, 0)))
            return err_validation(err, INVALID
                                  "AttributeValues inside AttributeValueList must be of same type");
    for (size_t i = 0; i < n; i++) {
        qr_type t = value_type(json_array_get(list, i));
        if (!type_ok(op, t))
            return err_validation(
                err, INVALID "ComparisonOperator %s is not valid for %s AttributeValue type",
                opname, value_type_name(t));
    }
    if (op == L_BETWEEN) {
        int cmp;
        if (value_compare(json_array_get(list, 0), json_array_get(list, 1), &cmp) == 0 && cmp > 0)
            return err_validation(err, "The BETWEEN condition was provided a range where the lower "
                                       "bound is greater than the upper bound");
    }
    return 0;
}

/* The condition "attr op values" as a tree. */
static cnode *build(arena *ar, const char *attr, legacy_op op, json_t *list)
{
    operand *pa = operand_path1(ar, attr);
    if (pa == NULL) return NULL;
    cond_kind kinds[] = {C_CMP,        C_CMP,      C_CMP,      C_CMP,    C_CMP, C_CMP,    C_EXISTS,
                         C_NOT_EXISTS, C_CONTAINS, C_CONTAINS, C_BEGINS, C_IN,  C_BETWEEN};
    static const cmp_op cmps[] = {CMP_EQ, CMP_NE, CMP_LE, CMP_LT, CMP_GE, CMP_GT};
    cnode *c = cnode_new(ar, kinds[op]);
    if (c == NULL) return NULL;
    size_t n = json_array_size(list);
    c->na = 1 + (int)n;
    c->a = arena_alloc(ar, (size_t)c->na * sizeof *c->a);
    if (c->a == NULL) return NULL;
    c->a[0] = pa;
    for (size_t i = 0; i < n; i++)
        if ((c->a[i + 1] = operand_value(ar, json_array_get(list, i))) == NULL) return NULL;
    if (op <= L_GT) c->op = cmps[op];
    if (op == L_NOT_CONTAINS) {
        /* attribute_exists(a) AND NOT contains(a, v) */
        cnode *ex = cnode_new(ar, C_EXISTS), *no = cnode_new(ar, C_NOT),
              *both = cnode_new(ar, C_AND);
        if (!ex || !no || !both) return NULL;
        ex->a = c->a;
        ex->na = 1;
        no->l = c;
        both->l = ex;
        both->r = no;
        return both;
    }
    return c;
}

static cnode *combine(arena *ar, cnode *acc, cnode *c, int or)
{
    if (acc == NULL) return c;
    cnode *j = cnode_new(ar, or ? C_OR : C_AND);
    if (j == NULL) return NULL;
    j->l = acc;
    j->r = c;
    return j;
}

static int conditional_operator(const char *op, int * or, qr_err *err)
{
    * or = 0;
    if (op == NULL || strcmp(op, "AND") == 0) return 0;
    if (strcmp(op, "OR") == 0) {
        * or = 1;
        return 0;
    }
    return enum_error(err, op, "conditionalOperator", "OR, AND");
}

static expr_cond *new_cond(void)
{
    expr_cond *c = calloc(1, sizeof *c);
    if (c) arena_init(&c->ar, 0);
    return c;
}

static int oom(qr_err *err)
{
    return err_set(err, QR_E_INTERNAL, "out of memory");
}

/* One entry of Expected, validated and translated. */
static int expected_one(arena *ar, const char *attr, json_t *cond, cnode **out, qr_err *err)
{
    json_t *value = json_object_get(cond, "Value");
    json_t *list = json_object_get(cond, "AttributeValueList");
    json_t *exists = json_object_get(cond, "Exists");
    json_t *co = json_object_get(cond, "ComparisonOperator");
    if (!json_is_object(cond))
        return err_validation(err, INVALID "Expected condition for Attribute: %s must be an object",
                              attr);
    if (list && value)
        return err_validation(
            err, INVALID "Value and AttributeValueList cannot be used together for Attribute: %s",
            attr);
    if (value && value_validate(value, 1, attr, err)) return -1;
    if (list && (!json_is_array(list) || validate_values(list, attr, err))) {
        if (!json_is_array(list))
            return err_validation(
                err, INVALID "AttributeValueList must be a list for Attribute: %s", attr);
        return -1;
    }
    if (co) {
        const char *name = json_string_value(co);
        legacy_op op = op_from_name(name);
        if (op == L_NONE) {
            char where[600];
            snprintf(where, sizeof where, "expected.%s.member.comparisonOperator", attr);
            return enum_error(err, name ? name : "null", where, OP_SET);
        }
        if (exists)
            return err_validation(
                err,
                INVALID "Exists and ComparisonOperator cannot be used together for Attribute: %s",
                attr);
        if (op != L_NULL && op != L_NOT_NULL && !list && !value)
            return err_validation(err,
                                  INVALID "Value or AttributeValueList must be used with "
                                          "ComparisonOperator: %s for Attribute: %s",
                                  name, attr);
        json_t *vals = list ? json_incref(list) : json_array();
        if (vals == NULL) return oom(err);
        if (value) json_array_append(vals, value);
        int rc = check_operands(op, name, vals, err);
        if (rc == 0 && (*out = build(ar, attr, op, vals)) == NULL) rc = oom(err);
        json_decref(vals);
        return rc;
    }
    if (list)
        return err_validation(
            err,
            INVALID
            "AttributeValueList can only be used with a ComparisonOperator for Attribute: %s",
            attr);
    int ex = exists == NULL || json_is_true(exists);
    if (ex && value == NULL)
        return err_validation(err,
                              INVALID "Value must be provided when Exists is %s for Attribute: %s",
                              exists == NULL ? "null" : "true", attr);
    if (!ex && value)
        return err_validation(
            err, INVALID "Value cannot be used when Exists is false for Attribute: %s", attr);
    json_t *vals = json_array();
    if (vals == NULL) return oom(err);
    if (value) json_array_append(vals, value);
    *out = build(ar, attr, ex ? L_EQ : L_NULL, vals);
    json_decref(vals);
    return *out ? 0 : oom(err);
}

static int finish_cond(expr_cond *c, cnode *root, expr_cond **out, qr_err *err)
{
    if (root == NULL && (root = cnode_new(&c->ar, C_TRUE)) == NULL) {
        expr_cond_free(c);
        return oom(err);
    }
    c->root = root;
    *out = c;
    return 0;
}

int expr_from_expected(json_t *expected, const char *op, expr_cond **out, qr_err *err)
{
    int or ;
    if (conditional_operator(op, & or, err)) return -1;
    if (!json_is_object(expected)) return err_validation(err, "Expected must be a map");
    expr_cond *c = new_cond();
    if (c == NULL) return oom(err);
    cnode *root = NULL;
    const char *attr;
    json_t *cond;
    json_object_foreach(expected, attr, cond)
    {
        cnode *one = NULL;
        if (check_name(attr, err) || expected_one(&c->ar, attr, cond, &one, err) ||
            (root = combine(&c->ar, root, one, or)) == NULL) {
            if (err->type == NULL) oom(err);
            expr_cond_free(c);
            return -1;
        }
    }
    return finish_cond(c, root, out, err);
}

/* One entry of a filter or KeyConditions map: validated; *op and *list describe it. */
static int filter_one(const char *which, const char *attr, json_t *cond, legacy_op *op,
                      json_t **list, qr_err *err)
{
    char where[600], lw[64];
    lower_first(which, lw, sizeof lw);
    if (!json_is_object(cond))
        return err_validation(err, INVALID "%s condition for Attribute: %s must be an object",
                              which, attr);
    json_t *co = json_object_get(cond, "ComparisonOperator");
    *list = json_object_get(cond, "AttributeValueList");
    if (*list && !json_is_array(*list))
        return err_validation(err, INVALID "AttributeValueList must be a list for Attribute: %s",
                              attr);
    if (co == NULL) {
        snprintf(where, sizeof where, "%s.%s.member.comparisonOperator", lw, attr);
        return err_not_null(err, "%s", where);
    }
    const char *name = json_string_value(co);
    *op = op_from_name(name);
    if (*op == L_NONE) {
        snprintf(where, sizeof where, "%s.%s.member.comparisonOperator", lw, attr);
        return enum_error(err, name ? name : "null", where, OP_SET);
    }
    if (*list && validate_values(*list, attr, err)) return -1;
    json_t *empty = json_array();
    int rc = check_operands(*op, name, *list ? *list : empty, err);
    json_decref(empty);
    return rc;
}

int expr_from_filter(const char *which, json_t *filter, const char *op, expr_cond **out,
                     qr_err *err)
{
    int or ;
    if (conditional_operator(op, & or, err)) return -1;
    if (!json_is_object(filter)) return err_validation(err, "%s must be a map", which);
    expr_cond *c = new_cond();
    if (c == NULL) return oom(err);
    cnode *root = NULL;
    const char *attr;
    json_t *cond;
    json_object_foreach(filter, attr, cond)
    {
        legacy_op lop;
        json_t *list;
        if (check_name(attr, err) || filter_one(which, attr, cond, &lop, &list, err)) {
            expr_cond_free(c);
            return -1;
        }
        json_t *vals = list ? json_incref(list) : json_array();
        cnode *one = vals ? build(&c->ar, attr, lop, vals) : NULL;
        json_decref(vals);
        if (one == NULL || (root = combine(&c->ar, root, one, or)) == NULL) {
            expr_cond_free(c);
            return oom(err);
        }
    }
    return finish_cond(c, root, out, err);
}

int expr_from_attribute_updates(json_t *updates, expr_update **out, qr_err *err)
{
    if (!json_is_object(updates)) return err_validation(err, "AttributeUpdates must be a map");
    expr_update *u = calloc(1, sizeof *u);
    if (u == NULL) return oom(err);
    arena_init(&u->ar, 0);
    u->legacy = 1;
    size_t n = json_object_size(updates);
    u->acts = arena_alloc(&u->ar, (n ? n : 1) * sizeof *u->acts);
    if (u->acts == NULL) goto nomem;
    const char *attr;
    json_t *upd;
    json_object_foreach(updates, attr, upd)
    {
        if (check_name(attr, err)) goto fail;
        json_t *value = json_is_object(upd) ? json_object_get(upd, "Value") : NULL;
        json_t *action = json_is_object(upd) ? json_object_get(upd, "Action") : NULL;
        const char *an = action ? json_string_value(action) : "PUT";
        upd_kind kind;
        if (an && strcmp(an, "PUT") == 0)
            kind = U_SET;
        else if (an && strcmp(an, "ADD") == 0)
            kind = U_ADD;
        else if (an && strcmp(an, "DELETE") == 0)
            kind = value ? U_DELETE : U_REMOVE;
        else {
            char where[600];
            snprintf(where, sizeof where, "attributeUpdates.%s.member.action", attr);
            enum_error(err, an ? an : "null", where, "ADD, PUT, DELETE");
            goto fail;
        }
        if (value && value_validate(value, 1, attr, err)) goto fail;
        if (value == NULL && kind != U_REMOVE) {
            err_validation(err, INVALID
                           "Only DELETE action is allowed when no attribute value is specified");
            goto fail;
        }
        qr_type t = value_type(value);
        int set = t == QR_T_SS || t == QR_T_NS || t == QR_T_BS;
        if (kind == U_DELETE && !set) {
            err_validation(err, INVALID "Action DELETE is not supported for the type %s",
                           value_type_name(t));
            goto fail;
        }
        if (kind == U_ADD && !set && t != QR_T_N && t != QR_T_L) {
            err_validation(err, INVALID "Action ADD is not supported for the type %s",
                           value_type_name(t));
            goto fail;
        }
        upd_action *a = &u->acts[u->nacts++];
        a->kind = kind;
        operand *pa = operand_path1(&u->ar, attr);
        if (pa == NULL) goto nomem;
        a->path = pa->path;
        if (value && (a->value = operand_value(&u->ar, value)) == NULL) goto nomem;
    }
    *out = u;
    return 0;
nomem:
    oom(err);
fail:
    expr_update_free(u);
    return -1;
}

int expr_from_attributes_to_get(json_t *names, expr_proj **out, qr_err *err)
{
    if (!json_is_array(names)) return err_validation(err, "AttributesToGet must be a list");
    size_t n = json_array_size(names);
    if (n == 0) return err_violation(err, "[]", "attributesToGet", QR_MSG_LENGTH_AT_LEAST, 1LL);
    for (size_t i = 0; i < n; i++) {
        const char *a = json_string_value(json_array_get(names, i));
        if (a == NULL) return err_validation(err, "AttributesToGet must hold strings");
        if (strlen(a) != json_string_length(json_array_get(names, i)))
            return err_validation(err,
                                  INVALID "NUL character in attribute name in AttributesToGet");
        if (check_name(a, err)) return -1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(a, json_string_value(json_array_get(names, j))) == 0)
                return err_validation(err, INVALID "Duplicate value in attribute name: %s", a);
    }
    expr_proj *p = calloc(1, sizeof *p);
    if (p == NULL) return oom(err);
    arena_init(&p->ar, 0);
    p->paths = arena_alloc(&p->ar, (n ? n : 1) * sizeof *p->paths);
    if (p->paths == NULL) goto nomem;
    for (size_t i = 0; i < n; i++) {
        operand *pa = operand_path1(&p->ar, json_string_value(json_array_get(names, i)));
        if (pa == NULL) goto nomem;
        p->paths[p->npaths++] = pa->path;
    }
    *out = p;
    return 0;
nomem:
    expr_proj_free(p);
    return oom(err);
}

int expr_from_key_conditions_multi(json_t *conds, const expr_key_schema *schema,
                                   expr_keycond_multi *out, qr_err *err)
{
    key_part parts[KEY_PARTS_MAX];
    int n = 0;
    memset(out, 0, sizeof *out);
    if (!json_is_object(conds)) return err_validation(err, "KeyConditions must be a map");
    const char *attr;
    json_t *cond, *list;
    legacy_op op;
    /* Every condition is validated before the count and the key schema are looked at. */
    json_object_foreach(conds, attr, cond)
    {
        if (filter_one("KeyConditions", attr, cond, &op, &list, err)) return -1;
    }
    /* A single-attribute key allows two conditions; a longer key is checked against its
     * attributes by keycond_finish. */
    size_t size = json_object_size(conds);
    if (schema && schema->npk + schema->nsk <= 2 && (size < 1 || size > 2))
        return err_validation(err, "Conditions can be of length 1 or 2 only");
    json_object_foreach(conds, attr, cond)
    {
        static const expr_key_op kops[] = {
            [L_EQ] = EXPR_KEY_EQ,           [L_LE] = EXPR_KEY_LE,
            [L_LT] = EXPR_KEY_LT,           [L_GE] = EXPR_KEY_GE,
            [L_GT] = EXPR_KEY_GT,           [L_BEGINS_WITH] = EXPR_KEY_BEGINS_WITH,
            [L_BETWEEN] = EXPR_KEY_BETWEEN, [L_NONE] = EXPR_KEY_NONE};
        op = op_from_name(json_string_value(json_object_get(cond, "ComparisonOperator")));
        list = json_object_get(cond, "AttributeValueList");
        if (kops[op] == EXPR_KEY_NONE)
            return err_validation(err,
                                  "Attempted conditional constraint is not an indexable operation");
        if (n < KEY_PARTS_MAX)
            parts[n] = (key_part){attr, kops[op], json_array_get(list, 0), json_array_get(list, 1)};
        n++;
    }
    return keycond_finish(parts, n, schema, NULL, out, err);
}

int expr_from_key_conditions(json_t *conds, const char *pk_name, char pk_type, const char *sk_name,
                             char sk_type, expr_keycond *out, qr_err *err)
{
    expr_key_schema s;
    expr_keycond_multi m;
    memset(out, 0, sizeof *out);
    keycond_schema1(&s, pk_name, pk_type, sk_name, sk_type);
    if (expr_from_key_conditions_multi(conds, &s, &m, err)) return -1;
    keycond_to_single(&m, out);
    return 0;
}
