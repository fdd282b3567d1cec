/* keycond.c — KeyConditionExpression reduced to a key range for Query.
 *
 * Parsed by the condition grammar, then held to DynamoDB's rules: AND only; =, <, <=,
 * >, >=, BETWEEN, begins_with; one equality on the partition key; at most one sort-key
 * condition; operand types matching the key types. Legacy KeyConditions share
 * keycond_finish. Scanning storage for the range is the caller's work. */
#include "expr/ast.h"

#include <stdlib.h>
#include <string.h>

#include "model/value.h"

#define PREFIX "Invalid KeyConditionExpression: "

#define KEY_PARTS_MAX 8

typedef struct key_parts {
    key_part p[KEY_PARTS_MAX];
    int n;
} key_parts;

static int invalid_op(qr_err *err, const char *op)
{
    return err_validation(err, "Invalid operator used in KeyConditionExpression: %s", op);
}

static int add_part(key_parts *kp, const char *name, expr_key_op op, json_t *v1, json_t *v2,
                    qr_err *err)
{
    int stored = kp->n < KEY_PARTS_MAX ? kp->n : KEY_PARTS_MAX;
    for (int i = 0; i < stored; i++)
        if (strcmp(kp->p[i].name, name) == 0)
            return err_validation(
                err, "KeyConditionExpressions must only contain one condition per key");
    /* Past the few a key can have, only the count matters (for the length message). */
    if (kp->n < KEY_PARTS_MAX) kp->p[kp->n] = (key_part){name, op, v1, v2};
    kp->n++;
    return 0;
}

static int collect(const cnode *c, key_parts *kp, qr_err *err)
{
    switch (c->kind) {
    case C_AND:
        return collect(c->l, kp, err) || collect(c->r, kp, err) ? -1 : 0;
    case C_OR:
        return invalid_op(err, "OR");
    case C_NOT:
        return invalid_op(err, "NOT");
    case C_IN:
        return invalid_op(err, "IN");
    case C_EXISTS:
        return invalid_op(err, "attribute_exists");
    case C_NOT_EXISTS:
        return invalid_op(err, "attribute_not_exists");
    case C_TYPE:
        return invalid_op(err, "attribute_type");
    case C_CONTAINS:
        return invalid_op(err, "contains");
    case C_CMP:
        if (c->op == CMP_NE) return invalid_op(err, "<>");
        break;
    case C_BETWEEN:
    case C_BEGINS:
        break;
    default:
        return invalid_op(err, "?");
    }
    if ((c->kind == C_BETWEEN || c->kind == C_BEGINS) && c->a[0]->kind != OP_PATH)
        return err_validation(err,
                              "Invalid condition in KeyConditionExpression: %s operator must "
                              "have the key attribute as its first operand",
                              c->kind == C_BETWEEN ? "BETWEEN" : "begins_with");
    int at = -1;
    for (int i = 0; i < c->na; i++) {
        const operand *o = c->a[i];
        if (o->kind == OP_SIZE)
            return err_validation(err, "KeyConditionExpressions cannot contain nested operations");
        if (o->kind != OP_PATH) continue;
        if (at >= 0)
            return err_validation(err, "Invalid condition in KeyConditionExpression: Multiple "
                                       "attribute names used in one condition");
        if (o->path.n > 1)
            return err_validation(
                err, "KeyConditionExpressions cannot have conditions on nested attributes");
        at = i;
    }
    if (at < 0)
        return err_validation(
            err, "Invalid condition in KeyConditionExpression: No key attribute specified");
    const path *pa = &c->a[at]->path;
    if (c->kind == C_BETWEEN)
        return add_part(kp, pa->e[0].name, EXPR_KEY_BETWEEN, c->a[1]->value, c->a[2]->value, err);
    if (c->kind == C_BEGINS)
        return add_part(kp, pa->e[0].name, EXPR_KEY_BEGINS_WITH, c->a[1]->value, NULL, err);
    static const expr_key_op ops[] = {EXPR_KEY_EQ, EXPR_KEY_NONE, EXPR_KEY_LT,
                                      EXPR_KEY_LE, EXPR_KEY_GT,   EXPR_KEY_GE};
    static const expr_key_op flipped[] = {EXPR_KEY_EQ, EXPR_KEY_NONE, EXPR_KEY_GT,
                                          EXPR_KEY_GE, EXPR_KEY_LT,   EXPR_KEY_LE};
    expr_key_op op = at == 0 ? ops[c->op] : flipped[c->op];
    return add_part(kp, pa->e[0].name, op, c->a[1 - at]->value, NULL, err);
}

static int type_is(const json_t *v, char t)
{
    const char *n = value_type_name(value_type(v));
    return n[0] == t && n[1] == '\0';
}

int keycond_finish(const key_part *parts, int n, const char *pk_name, char pk_type,
                   const char *sk_name, char sk_type, expr_keycond *out, qr_err *err)
{
    const key_part *pk = NULL, *sk = NULL;
    memset(out, 0, sizeof *out);
    if (n < 1 || n > 2) return err_validation(err, "Conditions can be of length 1 or 2 only");
    for (int i = 0; i < n; i++) {
        if (strcmp(parts[i].name, pk_name) == 0)
            pk = &parts[i];
        else if (sk_name && strcmp(parts[i].name, sk_name) == 0)
            sk = &parts[i];
    }
    if (pk == NULL)
        return err_validation(err, "Query condition missed key schema element: %s", pk_name);
    for (int i = 0; i < n; i++)
        if (&parts[i] != pk && &parts[i] != sk)
            return err_validation(err, "Query condition missed key schema element: %s",
                                  sk_name ? sk_name : pk_name);
    if (pk->op != EXPR_KEY_EQ) return err_validation(err, "Query key condition not supported");
    if (!type_is(pk->v1, pk_type) ||
        (sk && (!type_is(sk->v1, sk_type) || (sk->v2 && !type_is(sk->v2, sk_type)))))
        return err_validation(err, "One or more parameter values were invalid: Condition parameter "
                                   "type does not match schema type");
    if (sk && sk->op == EXPR_KEY_BEGINS_WITH && sk_type == 'N')
        return err_validation(err, PREFIX "Incorrect operand type for operator or function; "
                                          "operator or function: begins_with, operand type: N");
    out->pk_value = json_incref(pk->v1);
    if (sk) {
        out->sk_op = sk->op;
        out->sk_value1 = json_incref(sk->v1);
        out->sk_value2 = json_incref(sk->v2);
    }
    return 0;
}

int expr_parse_key_condition(expr_ctx *cx, const char *text, const char *pk_name, char pk_type,
                             const char *sk_name, char sk_type, expr_keycond *out)
{
    arena ar;
    cnode *root;
    key_parts kp = {.n = 0};
    int rc = -1;
    memset(out, 0, sizeof *out);
    arena_init(&ar);
    if (parse_condition(cx, "KeyConditionExpression", text, &ar, &root) == 0 &&
        collect(root, &kp, cx->err) == 0)
        rc = keycond_finish(kp.p, kp.n, pk_name, pk_type, sk_name, sk_type, out, cx->err);
    arena_free(&ar);
    return rc;
}

void expr_keycond_free(expr_keycond *k)
{
    if (k == NULL) return;
    json_decref(k->pk_value);
    json_decref(k->sk_value1);
    json_decref(k->sk_value2);
    memset(k, 0, sizeof *k);
}
