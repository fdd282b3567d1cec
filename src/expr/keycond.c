/* keycond.c — KeyConditionExpression reduced to a key range for Query.
 *
 * Held to DynamoDB's rules: AND only; =, <, <=, >, >=, BETWEEN, begins_with; equality on
 * every partition-key attribute; sort-key attributes left to right, all but the last with
 * =; operand types matching key types. A single-attribute key is the one-attribute case;
 * legacy KeyConditions share keycond_finish. Scanning storage is the caller's work. */
#include "expr/ast.h"

#include <stdlib.h>
#include <string.h>

#include "model/value.h"

#define PREFIX "Invalid KeyConditionExpression: "

typedef struct key_parts {
    key_part p[KEY_PARTS_MAX];
    int n;
    const char *prefix; /* of messages: PREFIX, or "" in a bare context */
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
                err, "%sKeyConditionExpressions must only contain one condition per key",
                kp->prefix);
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

static int missed(qr_err *err, const char *name)
{
    return err_validation(err, "Query condition missed key schema element: %s", name);
}

/* A key attribute never holds an empty string or binary, so DynamoDB refuses to look
 * one up by equality, as it refuses to store one. */
static int empty_key(const json_t *v, char t, const char *name, qr_err *err)
{
    if (t == 'N' || value_size(v) != 0) return 0;
    return err_validation(err, QR_MSG_EMPTY_KEY, t == 'S' ? "string" : "binary", name);
}

static int begins_with_number(const char *prefix, qr_err *err)
{
    return err_validation(err,
                          "%sIncorrect operand type for operator or function; "
                          "operator or function: begins_with, operand type: N",
                          prefix);
}

static int type_mismatch(qr_err *err)
{
    return err_validation(err, QR_MSG_INVALID_PARAMETER "Condition parameter "
                                                        "type does not match schema type");
}

/* Index of name in names[0..n), or -1. */
static int find_name(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

static int schema_ok(const expr_key_schema *s, qr_err *err)
{
    int ok = s && s->npk >= 1 && s->npk <= EXPR_KEY_MAX_ATTRS && s->nsk >= 0 &&
             s->nsk <= EXPR_KEY_MAX_ATTRS;
    for (int i = 0; ok && i < s->npk; i++)
        ok = s->pk_names[i] != NULL;
    for (int i = 0; ok && i < s->nsk; i++)
        ok = s->sk_names[i] != NULL;
    return ok ? 0 : err_set(err, QR_E_INTERNAL, "invalid key schema for a key condition");
}

int keycond_finish(const key_part *parts, int n, const expr_key_schema *s, const char *expression,
                   expr_keycond_multi *out, qr_err *err)
{
    int pk_part[EXPR_KEY_MAX_ATTRS], sk_part[EXPR_KEY_MAX_ATTRS]; /* index in parts, or -1 */
    int stored = n < KEY_PARTS_MAX ? n : KEY_PARTS_MAX;
    int extra = n > stored; /* a condition on an attribute outside the key */
    memset(out, 0, sizeof *out);
    if (schema_ok(s, err)) return -1;
    if (s->npk + s->nsk <= 2 && expression && n > 2)
        return err_validation(
            err,
            "The number of query conditions (%d) exceeds the number of key attributes "
            "defined in the schema (%d)",
            n, s->npk + s->nsk);
    if (s->npk + s->nsk <= 2 && (n < 1 || n > 2))
        return err_validation(err, "Conditions can be of length 1 or 2 only");
    for (int i = 0; i < EXPR_KEY_MAX_ATTRS; i++)
        pk_part[i] = sk_part[i] = -1;
    for (int i = 0; i < stored; i++) {
        int at = find_name(s->pk_names, s->npk, parts[i].name);
        if (at >= 0) {
            pk_part[at] = i;
        } else if ((at = find_name(s->sk_names, s->nsk, parts[i].name)) >= 0) {
            sk_part[at] = i;
        } else {
            extra = 1;
        }
    }
    for (int i = 0; i < s->npk; i++)
        if (pk_part[i] < 0) return missed(err, s->pk_names[i]);
    if (extra) {
        /* A table or index keyed by one partition attribute alone refuses any other
         * condition as it refuses a non-equality on that attribute. */
        if (s->npk == 1 && s->nsk == 0)
            return err_validation(err, "Query key condition not supported");
        /* Named after the first sort-key attribute not tested, as for a single sort key. */
        const char *name = s->pk_names[0];
        for (int i = s->nsk - 1; i >= 0; i--)
            if (sk_part[i] < 0) name = s->sk_names[i];
        return missed(err, name);
    }
    for (int i = 0; i < s->npk; i++)
        if (parts[pk_part[i]].op != EXPR_KEY_EQ)
            return err_validation(err, "Query key condition not supported");
    /* The sort-key attributes tested are a prefix of the schema's, all but the last with =. */
    for (int j = 1; j < s->nsk; j++) {
        if (sk_part[j] < 0) continue;
        for (int i = 0; i < j; i++)
            if (sk_part[i] < 0 || parts[sk_part[i]].op != EXPR_KEY_EQ)
                return err_validation(err,
                                      "RANGE key attributes %s must have equality conditions "
                                      "specified in the query because a condition is present on "
                                      "key attribute %s",
                                      s->sk_names[i], s->sk_names[j]);
    }
    /* In an expression, begins_with with a string or binary operand on a number sort key
     * fails the schema check below, as DynamoDB answers (eu-west-2, October 2026); a
     * number operand was refused by the parser already. */
    for (int i = 0; i < s->npk; i++)
        if (!type_is(parts[pk_part[i]].v1, s->pk_types[i])) return type_mismatch(err);
    for (int i = 0; i < s->nsk; i++) {
        const key_part *p = sk_part[i] >= 0 ? &parts[sk_part[i]] : NULL;
        if (p && (!type_is(p->v1, s->sk_types[i]) || (p->v2 && !type_is(p->v2, s->sk_types[i]))))
            return type_mismatch(err);
    }
    for (int i = 0; i < s->npk; i++)
        if (empty_key(parts[pk_part[i]].v1, s->pk_types[i], s->pk_names[i], err)) return -1;
    for (int i = 0; i < s->nsk; i++)
        if (sk_part[i] >= 0 && parts[sk_part[i]].op == EXPR_KEY_EQ &&
            empty_key(parts[sk_part[i]].v1, s->sk_types[i], s->sk_names[i], err))
            return -1;
    for (int i = 0; i < s->nsk; i++)
        if (sk_part[i] >= 0 && parts[sk_part[i]].op == EXPR_KEY_BEGINS_WITH &&
            s->sk_types[i] == 'N')
            return begins_with_number(expression ? expression : PREFIX, err);
    for (int i = 0; i < s->npk; i++)
        out->pk_values[i] = json_incref(parts[pk_part[i]].v1);
    for (int i = 0; i < s->nsk && sk_part[i] >= 0; i++) {
        const key_part *p = &parts[sk_part[i]];
        if (p->op == EXPR_KEY_EQ) {
            out->sk_eq[out->nsk_eq++] = json_incref(p->v1);
        } else {
            out->last_op = p->op;
            out->last_v1 = json_incref(p->v1);
            out->last_v2 = json_incref(p->v2);
        }
    }
    return 0;
}

void keycond_schema1(expr_key_schema *s, const char *pk_name, char pk_type, const char *sk_name,
                     char sk_type)
{
    memset(s, 0, sizeof *s);
    s->npk = 1;
    s->pk_names[0] = pk_name;
    s->pk_types[0] = pk_type;
    if (sk_name) {
        s->nsk = 1;
        s->sk_names[0] = sk_name;
        s->sk_types[0] = sk_type;
    }
}

void keycond_to_single(expr_keycond_multi *m, expr_keycond *out)
{
    out->pk_value = m->pk_values[0];
    if (m->nsk_eq > 0) {
        out->sk_op = EXPR_KEY_EQ;
        out->sk_value1 = m->sk_eq[0];
        out->sk_value2 = NULL;
    } else {
        out->sk_op = m->last_op;
        out->sk_value1 = m->last_v1;
        out->sk_value2 = m->last_v2;
    }
    memset(m, 0, sizeof *m);
}

int expr_parse_key_condition_multi(expr_ctx *cx, const char *text, const expr_key_schema *schema,
                                   expr_keycond_multi *out)
{
    arena ar;
    cnode *root;
    key_parts kp = {.n = 0, .prefix = cx->bare ? "" : PREFIX};
    int rc = -1;
    memset(out, 0, sizeof *out);
    arena_init(&ar, 0);
    if (parse_condition(cx, "KeyConditionExpression", text, &ar, &root) == 0 &&
        collect(root, &kp, cx->err) == 0)
        rc = keycond_finish(kp.p, kp.n, schema, kp.prefix, out, cx->err);
    arena_free(&ar);
    return rc;
}

int expr_parse_key_condition(expr_ctx *cx, const char *text, const char *pk_name, char pk_type,
                             const char *sk_name, char sk_type, expr_keycond *out)
{
    expr_key_schema s;
    expr_keycond_multi m;
    memset(out, 0, sizeof *out);
    keycond_schema1(&s, pk_name, pk_type, sk_name, sk_type);
    if (expr_parse_key_condition_multi(cx, text, &s, &m)) return -1;
    keycond_to_single(&m, out);
    return 0;
}

void expr_keycond_free(expr_keycond *k)
{
    if (k == NULL) return;
    json_decref(k->pk_value);
    json_decref(k->sk_value1);
    json_decref(k->sk_value2);
    memset(k, 0, sizeof *k);
}

void expr_keycond_multi_free(expr_keycond_multi *k)
{
    if (k == NULL) return;
    for (int i = 0; i < EXPR_KEY_MAX_ATTRS; i++) {
        json_decref(k->pk_values[i]);
        json_decref(k->sk_eq[i]);
    }
    json_decref(k->last_v1);
    json_decref(k->last_v2);
    memset(k, 0, sizeof *k);
}
