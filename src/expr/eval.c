/* eval.c — evaluating conditions (ConditionExpression, FilterExpression and the legacy
 * forms translated to them) against an item, with DynamoDB's semantics.
 *
 * A missing attribute or a comparison between different types is simply false, never
 * an error; <, <=, >, >= and BETWEEN order only S, N and B; <> is true whenever = is
 * not. This file also holds the public wrappers for conditions. It parses nothing. */
#include "expr/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/value.h"

const json_t *path_get(const json_t *item, const path *p)
{
    if (item == NULL || p->n == 0 || p->e[0].name == NULL) return NULL;
    const json_t *v = json_object_get(item, p->e[0].name);
    for (int i = 1; v && i < p->n; i++) {
        const path_elem *e = &p->e[i];
        qr_type t = value_type(v);
        if (e->name) {
            v = t == QR_T_M ? json_object_get(value_payload(v), e->name) : NULL;
        } else {
            json_t *arr = value_payload(v);
            v = (t == QR_T_L && e->index >= 0 && (size_t)e->index < json_array_size(arr))
                    ? json_array_get(arr, (size_t)e->index)
                    : NULL;
        }
    }
    return v;
}

static json_t *number_av(size_t n)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", n);
    return json_pack("{s:s}", "N", buf);
}

/* The length of UTF-8 text in UTF-16 code units, as DynamoDB (a Java service) counts a
 * string: one per character, two for a character beyond U+FFFF. */
static size_t utf16_units(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80) n++; /* a character starts here */
        if (c >= 0xF0) n++;          /* four UTF-8 bytes: a surrogate pair */
    }
    return n;
}

/* DynamoDB's size(): UTF-16 code units of S, bytes of B, elements of sets and lists,
 * entries of maps. */
static json_t *size_of(const json_t *v)
{
    json_t *pl = value_payload(v);
    switch (value_type(v)) {
    case QR_T_S:
        return number_av(utf16_units(json_string_value(pl), json_string_length(pl)));
    case QR_T_B: {
        unsigned char *b;
        size_t n;
        if (value_binary(pl, &b, &n)) return NULL;
        free(b);
        return number_av(n);
    }
    case QR_T_SS:
    case QR_T_NS:
    case QR_T_BS:
    case QR_T_L:
        return number_av(json_array_size(pl));
    case QR_T_M:
        return number_av(json_object_size(pl));
    default:
        return NULL;
    }
}

json_t *cond_operand_eval(const operand *o, const json_t *item)
{
    switch (o->kind) {
    case OP_PATH:
        return json_incref((json_t *)path_get(item, &o->path));
    case OP_VALUE:
        return json_incref(o->value);
    case OP_SIZE: {
        json_t *x = cond_operand_eval(o->a[0], item);
        json_t *s = x ? size_of(x) : NULL;
        json_decref(x);
        return s;
    }
    default:
        return NULL;
    }
}

/* Whether two payload strings of set elements (or scalars) of type t are equal. */
static int element_eq(qr_type t, const json_t *a, const json_t *b)
{
    if (t == QR_T_N) {
        qr_num x, y;
        if (value_number(a, &x) || value_number(b, &y)) return 0;
        return num_cmp(&x, &y) == 0;
    }
    if (t == QR_T_B) {
        unsigned char *x, *y;
        size_t xn, yn;
        if (value_binary(a, &x, &xn)) return 0;
        if (value_binary(b, &y, &yn)) {
            free(x);
            return 0;
        }
        int eq = xn == yn && memcmp(x, y, xn) == 0;
        free(x);
        free(y);
        return eq;
    }
    return json_string_length(a) == json_string_length(b) &&
           memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
}

static int begins_with(const json_t *x, const json_t *y)
{
    qr_type t = value_type(x);
    if (t != value_type(y) || (t != QR_T_S && t != QR_T_B)) return 0;
    json_t *px = value_payload(x), *py = value_payload(y);
    if (t == QR_T_S)
        return json_string_length(py) <= json_string_length(px) &&
               memcmp(json_string_value(px), json_string_value(py), json_string_length(py)) == 0;
    unsigned char *a, *b;
    size_t an, bn;
    if (value_binary(px, &a, &an)) return 0;
    if (value_binary(py, &b, &bn)) {
        free(a);
        return 0;
    }
    int r = bn <= an && memcmp(a, b, bn) == 0;
    free(a);
    free(b);
    return r;
}

static int contains(const json_t *x, const json_t *y)
{
    qr_type tx = value_type(x), ty = value_type(y);
    json_t *px = value_payload(x), *py = value_payload(y);
    size_t i;
    json_t *e;
    switch (tx) {
    case QR_T_S:
        return ty == QR_T_S && memmem(json_string_value(px), json_string_length(px),
                                      json_string_value(py), json_string_length(py)) != NULL;
    case QR_T_B: {
        /* A binary contains a binary subsequence, as the legacy CONTAINS documents. */
        unsigned char *a, *b;
        size_t an, bn;
        if (ty != QR_T_B || value_binary(px, &a, &an)) return 0;
        if (value_binary(py, &b, &bn)) {
            free(a);
            return 0;
        }
        int r = bn == 0 || (an > 0 && memmem(a, an, b, bn) != NULL);
        free(a);
        free(b);
        return r;
    }
    case QR_T_SS:
    case QR_T_NS:
    case QR_T_BS: {
        qr_type elem = tx == QR_T_SS ? QR_T_S : tx == QR_T_NS ? QR_T_N : QR_T_B;
        if (ty != elem) return 0;
        json_array_foreach(px, i, e) if (element_eq(elem, e, py)) return 1;
        return 0;
    }
    case QR_T_L:
        json_array_foreach(px, i, e) if (value_equal(e, y)) return 1;
        return 0;
    default:
        return 0;
    }
}

static int compare(const json_t *x, const json_t *y, int *cmp)
{
    return x && y ? value_compare(x, y, cmp) : -1;
}

static int eval_leaf(const cnode *c, const json_t *item)
{
    json_t *v[3] = {NULL, NULL, NULL};
    int r = 0, cmp, cmp2;
    if (c->kind == C_EXISTS) return path_get(item, &c->a[0]->path) != NULL;
    if (c->kind == C_NOT_EXISTS) return path_get(item, &c->a[0]->path) == NULL;
    if (c->kind == C_TYPE) {
        json_t *x = cond_operand_eval(c->a[0], item);
        const char *want = json_string_value(value_payload(c->a[1]->value));
        r = x && want && strcmp(value_type_name(value_type(x)), want) == 0;
        json_decref(x);
        return r;
    }
    if (c->kind == C_IN) {
        json_t *x = cond_operand_eval(c->a[0], item);
        for (int i = 1; x && !r && i < c->na; i++) {
            json_t *y = cond_operand_eval(c->a[i], item);
            r = y && value_equal(x, y);
            json_decref(y);
        }
        json_decref(x);
        return r;
    }
    for (int i = 0; i < c->na && i < 3; i++)
        v[i] = cond_operand_eval(c->a[i], item);
    switch (c->kind) {
    case C_CMP:
        switch (c->op) {
        case CMP_EQ:
            r = v[0] && v[1] && value_equal(v[0], v[1]);
            break;
        case CMP_NE:
            r = !(v[0] && v[1] && value_equal(v[0], v[1]));
            break;
        case CMP_LT:
            r = compare(v[0], v[1], &cmp) == 0 && cmp < 0;
            break;
        case CMP_LE:
            r = compare(v[0], v[1], &cmp) == 0 && cmp <= 0;
            break;
        case CMP_GT:
            r = compare(v[0], v[1], &cmp) == 0 && cmp > 0;
            break;
        case CMP_GE:
            r = compare(v[0], v[1], &cmp) == 0 && cmp >= 0;
            break;
        }
        break;
    case C_BETWEEN:
        r = compare(v[0], v[1], &cmp) == 0 && compare(v[0], v[2], &cmp2) == 0 && cmp >= 0 &&
            cmp2 <= 0;
        break;
    case C_BEGINS:
        r = v[0] && v[1] && begins_with(v[0], v[1]);
        break;
    case C_CONTAINS:
        r = v[0] && v[1] && contains(v[0], v[1]);
        break;
    default:
        break;
    }
    for (int i = 0; i < 3; i++)
        json_decref(v[i]);
    return r;
}

int cnode_eval(const cnode *c, const json_t *item, qr_err *err)
{
    int r;
    switch (c->kind) {
    case C_OR:
        r = cnode_eval(c->l, item, err);
        return r != 0 ? r : cnode_eval(c->r, item, err);
    case C_AND:
        r = cnode_eval(c->l, item, err);
        return r != 1 ? r : cnode_eval(c->r, item, err);
    case C_NOT:
        r = cnode_eval(c->l, item, err);
        return r < 0 ? r : !r;
    case C_CALL:
        return err_set(err, QR_E_INTERNAL, "unchecked function in condition");
    case C_TRUE:
        return 1;
    default:
        return eval_leaf(c, item);
    }
}

/* ---- public: conditions ---- */

int expr_parse_condition(expr_ctx *cx, const char *which, const char *text, expr_cond **out)
{
    expr_cond *c = malloc(sizeof *c);
    if (c == NULL) return err_set(cx->err, QR_E_INTERNAL, "out of memory");
    arena_init(&c->ar, 0);
    if (parse_condition(cx, which, text, &c->ar, &c->root)) {
        expr_cond_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

int expr_cond_eval(const expr_cond *c, const json_t *item, qr_err *err)
{
    return cnode_eval(c->root, item, err);
}

/* Whether a path in o starts at the top-level name top (and, if nested, goes below it). */
static int operand_mentions(const operand *o, const char *top, int nested)
{
    if (o->kind == OP_PATH)
        return o->path.n > (nested ? 1 : 0) && o->path.e[0].name &&
               strcmp(o->path.e[0].name, top) == 0;
    for (int i = 0; i < o->na; i++)
        if (operand_mentions(o->a[i], top, nested)) return 1;
    return 0;
}

static int cnode_mentions(const cnode *c, const char *top, int nested)
{
    if (c->l && cnode_mentions(c->l, top, nested)) return 1;
    if (c->r && cnode_mentions(c->r, top, nested)) return 1;
    for (int i = 0; i < c->na; i++)
        if (operand_mentions(c->a[i], top, nested)) return 1;
    return 0;
}

void path_add_top_name(json_t *names, const path *p)
{
    const char *top = p->n ? p->e[0].name : NULL;
    if (top == NULL) return;
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v)
    {
        if (strcmp(json_string_value(v), top) == 0) return;
    }
    json_array_append_new(names, json_string(top));
}

static void operand_top_names(const operand *o, json_t *names)
{
    if (o->kind == OP_PATH) path_add_top_name(names, &o->path);
    for (int i = 0; i < o->na; i++)
        operand_top_names(o->a[i], names);
}

static void cnode_top_names(const cnode *c, json_t *names)
{
    if (c->l) cnode_top_names(c->l, names);
    if (c->r) cnode_top_names(c->r, names);
    for (int i = 0; i < c->na; i++)
        operand_top_names(c->a[i], names);
}

json_t *expr_cond_top_names(const expr_cond *c)
{
    json_t *names = json_array();
    if (names && c && c->root) cnode_top_names(c->root, names);
    return names;
}

int expr_cond_mentions(const expr_cond *c, const char *top_name)
{
    return c && c->root && cnode_mentions(c->root, top_name, 0);
}

int expr_cond_nests_into(const expr_cond *c, const char *top_name)
{
    return c && c->root && cnode_mentions(c->root, top_name, 1);
}

void expr_cond_free(expr_cond *c)
{
    if (c == NULL) return;
    arena_free(&c->ar);
    free(c);
}

/* ---- construction helpers ---- */

operand *operand_path1(arena *ar, const char *name)
{
    operand *o = arena_alloc(ar, sizeof *o);
    if (o == NULL) return NULL;
    o->kind = OP_PATH;
    o->path.n = 1;
    o->path.e = arena_alloc(ar, sizeof *o->path.e);
    if (o->path.e == NULL) return NULL;
    o->path.e[0].name = arena_strndup(ar, name, strlen(name));
    o->path.e[0].raw = o->path.e[0].name;
    o->path.e[0].tok = -1;
    return o->path.e[0].name ? o : NULL;
}

operand *operand_value(arena *ar, json_t *av)
{
    operand *o = arena_alloc(ar, sizeof *o);
    if (o == NULL) return NULL;
    o->kind = OP_VALUE;
    o->vname = "";
    o->value = arena_keep(ar, av);
    return o->value ? o : NULL;
}
