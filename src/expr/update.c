/* update.c — applying a parsed UpdateExpression (or translated AttributeUpdates) to an
 * item, with DynamoDB's semantics.
 *
 * Every SET value is computed from the item as it was before the update, then the
 * actions are applied: SET, REMOVE (highest list index first, so removals do not shift
 * one another), ADD, DELETE. A set never becomes empty: emptying one removes the
 * attribute. Parsing lives in parser.c; this file does not read storage. */
#include "expr/ast.h"

#include <stdlib.h>
#include <string.h>

#include "model/value.h"

#define MSG_MISSING "The provided expression refers to an attribute that does not exist in the item"
#define MSG_BAD_PATH "The document path provided in the update expression is invalid for update"
#define MSG_BAD_TYPE "An operand in the update expression has an incorrect data type"
#define MSG_LEGACY_TYPE \
    "One or more parameter values were invalid: Type mismatch for attribute to update"

typedef struct applier {
    const expr_update *u;
    qr_err *err;
} applier;

static int bad_type(applier *ap)
{
    return err_validation(ap->err, "%s", ap->u->legacy ? MSG_LEGACY_TYPE : MSG_BAD_TYPE);
}

/* ---- computing SET values ---- */

static json_t *eval_value(applier *ap, const operand *o, const json_t *item)
{
    switch (o->kind) {
    case OP_PATH: {
        const json_t *v = path_get(item, &o->path);
        if (v == NULL) {
            err_validation(ap->err, MSG_MISSING);
            return NULL;
        }
        return json_deep_copy(v);
    }
    case OP_VALUE:
        return json_deep_copy(o->value);
    case OP_IF_NOT_EXISTS: {
        const json_t *v = path_get(item, &o->a[0]->path);
        return v ? json_deep_copy(v) : eval_value(ap, o->a[1], item);
    }
    case OP_LIST_APPEND:
    case OP_PLUS:
    case OP_MINUS: {
        json_t *x = eval_value(ap, o->a[0], item);
        json_t *y = x ? eval_value(ap, o->a[1], item) : NULL;
        json_t *r = NULL;
        if (x && y && o->kind == OP_LIST_APPEND) {
            if (value_type(x) != QR_T_L || value_type(y) != QR_T_L) {
                bad_type(ap);
            } else {
                r = x;
                x = NULL;
                json_array_extend(value_payload(r), value_payload(y));
            }
        } else if (x && y) {
            qr_num a, b, c;
            if (value_type(x) != QR_T_N || value_type(y) != QR_T_N || value_number(x, &a) ||
                value_number(y, &b)) {
                bad_type(ap);
            } else if ((o->kind == OP_PLUS ? num_add(&a, &b, &c, ap->err)
                                           : num_sub(&a, &b, &c, ap->err)) == 0) {
                r = value_from_number(&c);
            }
        }
        json_decref(x);
        json_decref(y);
        return r;
    }
    default:
        err_set(ap->err, QR_E_INTERNAL, "unchecked function in update");
        return NULL;
    }
}

/* ---- writing into the item ---- */

/* The AttributeValue holding the last element of p (p without its last element). */
static json_t *parent_of(json_t *item, const path *p)
{
    path pre = {p->n - 1, p->e};
    return (json_t *)path_get(item, &pre);
}

/* Puts v (stolen) at p. */
static int set_at(applier *ap, json_t *item, const path *p, json_t *v)
{
    const path_elem *last = &p->e[p->n - 1];
    if (p->n == 1) {
        json_object_set_new(item, last->name, v);
        return 0;
    }
    json_t *parent = parent_of(item, p);
    qr_type t = value_type(parent);
    if (parent && last->name && t == QR_T_M) {
        json_object_set_new(value_payload(parent), last->name, v);
        return 0;
    }
    if (parent && !last->name && t == QR_T_L) {
        json_t *arr = value_payload(parent);
        if ((size_t)last->index < json_array_size(arr))
            json_array_set_new(arr, (size_t)last->index, v);
        else
            json_array_append_new(arr, v);
        return 0;
    }
    json_decref(v);
    return err_validation(ap->err, MSG_BAD_PATH);
}

static int remove_at(applier *ap, json_t *item, const path *p)
{
    const path_elem *last = &p->e[p->n - 1];
    if (p->n == 1) {
        json_object_del(item, last->name);
        return 0;
    }
    json_t *parent = parent_of(item, p);
    if (parent == NULL) return 0;
    qr_type t = value_type(parent);
    if (last->name && t == QR_T_M) {
        json_object_del(value_payload(parent), last->name);
        return 0;
    }
    if (!last->name && t == QR_T_L) {
        json_t *arr = value_payload(parent);
        if ((size_t)last->index < json_array_size(arr)) json_array_remove(arr, (size_t)last->index);
        return 0;
    }
    return err_validation(ap->err, MSG_BAD_PATH);
}

static qr_type elem_type(qr_type set)
{
    return set == QR_T_SS ? QR_T_S : set == QR_T_NS ? QR_T_N : QR_T_B;
}

static int set_has(qr_type set, const json_t *arr, const json_t *e)
{
    json_t *wrap_e = json_pack("{sO}", value_type_name(elem_type(set)), (json_t *)e);
    size_t i;
    json_t *x;
    int found = 0;
    json_array_foreach(arr, i, x) {
        json_t *wrap_x = json_pack("{sO}", value_type_name(elem_type(set)), x);
        found = wrap_e && wrap_x && value_equal(wrap_e, wrap_x);
        json_decref(wrap_x);
        if (found) break;
    }
    json_decref(wrap_e);
    return found;
}

static int is_set(qr_type t)
{
    return t == QR_T_SS || t == QR_T_NS || t == QR_T_BS;
}

static int add_at(applier *ap, json_t *item, const path *p, const json_t *v)
{
    json_t *cur = (json_t *)path_get(item, p);
    qr_type tv = value_type(v);
    if (cur == NULL) return set_at(ap, item, p, json_deep_copy(v));
    qr_type tc = value_type(cur);
    if (tc != tv) return bad_type(ap);
    if (tc == QR_T_N) {
        qr_num a, b, c;
        if (value_number(cur, &a) || value_number(v, &b)) return bad_type(ap);
        if (num_add(&a, &b, &c, ap->err)) return -1;
        return set_at(ap, item, p, value_from_number(&c));
    }
    if (!is_set(tc)) return bad_type(ap);
    json_t *arr = value_payload(cur), *add = value_payload(v);
    size_t i;
    json_t *e;
    json_array_foreach(add, i, e) {
        if (!set_has(tc, arr, e)) json_array_append(arr, e);
    }
    return 0;
}

static int delete_at(applier *ap, json_t *item, const path *p, const json_t *v)
{
    json_t *cur = (json_t *)path_get(item, p);
    if (cur == NULL) return 0;
    qr_type tc = value_type(cur);
    if (tc != value_type(v) || !is_set(tc)) return bad_type(ap);
    json_t *arr = value_payload(cur), *del = value_payload(v);
    for (size_t i = json_array_size(arr); i-- > 0;)
        if (set_has(tc, del, json_array_get(arr, i))) json_array_remove(arr, i);
    if (json_array_size(arr) == 0) return remove_at(ap, item, p);
    return 0;
}

/* Removal order: where two paths first differ by list index, the higher index first. */
static int cmp_removal(const void *pa, const void *pb)
{
    const path *a = &(*(const upd_action *const *)pa)->path;
    const path *b = &(*(const upd_action *const *)pb)->path;
    for (int i = 0; i < a->n && i < b->n; i++) {
        const path_elem *x = &a->e[i], *y = &b->e[i];
        if (x->name && y->name) {
            int c = strcmp(x->name, y->name);
            if (c) return c;
        } else if (!x->name && !y->name) {
            if (x->index != y->index) return x->index > y->index ? -1 : 1;
        } else {
            return x->name ? -1 : 1;
        }
    }
    return a->n - b->n;
}

int expr_update_apply(const expr_update *u, json_t *item, qr_err *err)
{
    applier ap = {u, err};
    int rc = -1, n = u->nacts, nrem = 0;
    json_t **vals = calloc((size_t)n + 1, sizeof *vals);
    const upd_action **rem = calloc((size_t)n + 1, sizeof *rem);
    if (vals == NULL || rem == NULL) {
        err_set(err, QR_E_INTERNAL, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_SET && (vals[i] = eval_value(&ap, u->acts[i].value, item)) == NULL)
            goto done;
    for (int i = 0; i < n; i++) {
        if (u->acts[i].kind != U_SET) continue;
        json_t *v = vals[i];
        vals[i] = NULL;
        if (set_at(&ap, item, &u->acts[i].path, v)) goto done;
    }
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_REMOVE) rem[nrem++] = &u->acts[i];
    qsort(rem, (size_t)nrem, sizeof *rem, cmp_removal);
    for (int i = 0; i < nrem; i++)
        if (remove_at(&ap, item, &rem[i]->path)) goto done;
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_ADD && add_at(&ap, item, &u->acts[i].path, u->acts[i].value->value))
            goto done;
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_DELETE &&
            delete_at(&ap, item, &u->acts[i].path, u->acts[i].value->value))
            goto done;
    rc = 0;
done:
    if (vals)
        for (int i = 0; i < n; i++) json_decref(vals[i]);
    free(vals);
    free(rem);
    return rc;
}

/* ---- public ---- */

int expr_parse_update(expr_ctx *cx, const char *text, expr_update **out)
{
    expr_update *u = calloc(1, sizeof *u);
    if (u == NULL) return err_set(cx->err, QR_E_INTERNAL, "out of memory");
    arena_init(&u->ar);
    if (parse_update(cx, text, &u->ar, &u->acts, &u->nacts)) {
        expr_update_free(u);
        return -1;
    }
    *out = u;
    return 0;
}

json_t *expr_update_top_names(const expr_update *u)
{
    json_t *names = json_array();
    for (int i = 0; names && i < u->nacts; i++) {
        const char *top = u->acts[i].path.e[0].name;
        size_t j;
        json_t *x;
        int seen = 0;
        json_array_foreach(names, j, x) {
            if (strcmp(json_string_value(x), top) == 0) seen = 1;
        }
        if (!seen) json_array_append_new(names, json_string(top));
    }
    return names;
}

void expr_update_free(expr_update *u)
{
    if (u == NULL) return;
    arena_free(&u->ar);
    free(u);
}
