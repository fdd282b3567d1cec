/* update.c — applying a parsed UpdateExpression (or translated AttributeUpdates) to an item,
 * with DynamoDB's semantics. Parsing lives in parser.c; this file does not read storage. */
#include "expr/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/value.h"
#include "util/buf.h"

#define MSG_MISSING "The provided expression refers to an attribute that does not exist in the item"
#define MSG_BAD_PATH "The document path provided in the update expression is invalid for update"
#define MSG_BAD_TYPE "An operand in the update expression has an incorrect data type"
#define MSG_LEGACY_TYPE "Type mismatch for attribute to update"

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

/* Levels of nesting in an AttributeValue: 1 for a scalar or set, more for maps and lists. */
static int nesting(const json_t *av)
{
    qr_type t = value_type(av);
    if (t != QR_T_M && t != QR_T_L) return 1;
    int deepest = 0;
    json_t *pl = value_payload(av), *v;
    if (t == QR_T_M) {
        const char *k;
        json_object_foreach(pl, k, v)
        {
            int d = nesting(v);
            if (d > deepest) deepest = d;
        }
    } else {
        size_t i;
        json_array_foreach(pl, i, v)
        {
            int d = nesting(v);
            if (d > deepest) deepest = d;
        }
    }
    return 1 + deepest;
}

/* Puts v (stolen) at p. */
static int set_at(applier *ap, json_t *item, const path *p, json_t *v)
{
    const path_elem *last = &p->e[p->n - 1];
    if (v == NULL) return err_set(ap->err, QR_E_INTERNAL, "out of memory");
    if (p->n - 1 + nesting(v) > QR_MAX_DEPTH) {
        json_decref(v);
        return err_validation(ap->err, "Nesting Levels have exceeded supported limits");
    }
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

/* The identity of a set element as bytes in out: the string itself, the canonical text
 * of a number, the decoded bytes of a binary. */
static int elem_key(qr_type set, const json_t *e, buf *out)
{
    buf_reset(out);
    if (set == QR_T_NS) {
        qr_num n;
        char text[NUM_FMT_MAX];
        if (value_number(e, &n)) return -1;
        return buf_append(out, text, num_format(&n, text));
    }
    if (set == QR_T_BS) {
        unsigned char *b;
        size_t n;
        if (value_binary(e, &b, &n)) return -1;
        int rc = buf_append(out, b, n);
        free(b);
        return rc;
    }
    return buf_append(out, json_string_value(e), json_string_length(e));
}

/* An object whose keys are the identities of the elements of arr (a set payload). */
static json_t *set_index(qr_type set, const json_t *arr, buf *scratch)
{
    json_t *idx = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        if (idx == NULL || elem_key(set, e, scratch) ||
            json_object_setn_new(idx, scratch->data ? scratch->data : "", scratch->len,
                                 json_true())) {
            json_decref(idx);
            return NULL;
        }
    }
    return idx;
}

static int in_index(const json_t *idx, const buf *key)
{
    return json_object_getn(idx, key->data ? key->data : "", key->len) != NULL;
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
    if (tc == QR_T_L && ap->u->legacy) /* AttributeUpdates ADD appends to a list */
        return json_array_extend(value_payload(cur), value_payload(v)) ? bad_type(ap) : 0;
    if (!is_set(tc)) return bad_type(ap);
    json_t *arr = value_payload(cur), *add = value_payload(v);
    buf key;
    buf_init(&key, 0);
    json_t *idx = set_index(tc, arr, &key);
    size_t i;
    json_t *e;
    int rc = idx ? 0 : bad_type(ap);
    json_array_foreach(add, i, e)
    {
        if (rc || elem_key(tc, e, &key)) {
            rc = rc ? rc : bad_type(ap);
            break;
        }
        if (in_index(idx, &key)) continue;
        json_object_setn_new(idx, key.data ? key.data : "", key.len, json_true());
        json_array_append(arr, e);
    }
    json_decref(idx);
    buf_free(&key);
    if (rc == 0) value_sort_set(cur);
    return rc;
}

/* Whether the path up to p's last element leads to a map (for a name) or a list (for an
 * index), so that p names a place in the item. */
static int place_exists(json_t *item, const path *p)
{
    if (p->n == 1) return 1;
    qr_type t = value_type(parent_of(item, p));
    return p->e[p->n - 1].name ? t == QR_T_M : t == QR_T_L;
}

static int delete_at(applier *ap, json_t *item, const path *p, const json_t *v)
{
    if (!place_exists(item, p)) return err_validation(ap->err, MSG_BAD_PATH);
    json_t *cur = (json_t *)path_get(item, p);
    if (cur == NULL) return 0;
    qr_type tc = value_type(cur);
    if (tc != value_type(v) || !is_set(tc)) return bad_type(ap);
    json_t *arr = value_payload(cur), *del = value_payload(v);
    buf key;
    buf_init(&key, 0);
    json_t *idx = set_index(tc, del, &key);
    json_t *kept = json_array();
    int rc = idx && kept ? 0 : bad_type(ap);
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        if (rc) break;
        if (elem_key(tc, e, &key))
            rc = bad_type(ap);
        else if (!in_index(idx, &key))
            json_array_append(kept, e);
    }
    json_decref(idx);
    buf_free(&key);
    if (rc == 0 && json_array_size(kept) == 0)
        rc = remove_at(ap, item, p);
    else if (rc == 0)
        json_object_set(cur, value_type_name(tc), kept);
    json_decref(kept);
    return rc;
}

/* A total order of paths: names by bytes, list indexes by number (descending if desc). */
static int path_order(const path *a, const path *b, int desc)
{
    for (int i = 0; i < a->n && i < b->n; i++) {
        const path_elem *x = &a->e[i], *y = &b->e[i];
        if (x->name && y->name) {
            int c = strcmp(x->name, y->name);
            if (c) return c;
        } else if (!x->name && !y->name) {
            if (x->index != y->index) return (x->index < y->index) == !desc ? -1 : 1;
        } else {
            return x->name ? -1 : 1;
        }
    }
    return a->n - b->n;
}

/* Removals run highest list index first, so no removal shifts another's element. */
static int cmp_removal(const void *pa, const void *pb)
{
    return path_order(&(*(const upd_action *const *)pa)->path,
                      &(*(const upd_action *const *)pb)->path, 1);
}

/* Elements SET past the end of a list are appended in order of their indexes. */
static int cmp_append(const void *pa, const void *pb)
{
    return path_order(&(*(const upd_action *const *)pa)->path,
                      &(*(const upd_action *const *)pb)->path, 0);
}

/* Whether SET at p appends to a list (its index is past the list's end). */
static int is_append(json_t *item, const path *p)
{
    const path_elem *last = &p->e[p->n - 1];
    if (p->n < 2 || last->name) return 0;
    json_t *parent = parent_of(item, p);
    return value_type(parent) == QR_T_L &&
           (size_t)last->index >= json_array_size(value_payload(parent));
}

static int is_later(const upd_action *const *later, int n, const upd_action *a)
{
    for (int i = 0; i < n; i++)
        if (later[i] == a) return 1;
    return 0;
}

/* Every SET value is computed from the item as it was before the update, then the actions are
 * applied: SET, REMOVE (highest list index first, so removals do not shift one another), ADD,
 * DELETE. A set never becomes empty: emptying one removes the attribute. */
static int apply(const expr_update *u, json_t *item, int exists, qr_err *err)
{
    applier ap = {u, err};
    int rc = -1, n = u->nacts, nrem = 0, nlater = 0;
    json_t **vals = calloc((size_t)n + 1, sizeof *vals);
    const upd_action **rem = calloc((size_t)n + 1, sizeof *rem);
    const upd_action **later = calloc((size_t)n + 1, sizeof *later);
    if (vals == NULL || rem == NULL || later == NULL) {
        err_set(err, QR_E_INTERNAL, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_SET && (vals[i] = eval_value(&ap, u->acts[i].value, item)) == NULL)
            goto done;
    /* SETs past a list's end run last, in index order, so appends land sorted. */
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_SET && is_append(item, &u->acts[i].path))
            later[nlater++] = &u->acts[i];
    for (int i = 0; i < n; i++) {
        if (u->acts[i].kind != U_SET || is_later(later, nlater, &u->acts[i])) continue;
        json_t *v = vals[i];
        vals[i] = NULL;
        if (set_at(&ap, item, &u->acts[i].path, v)) goto done;
    }
    qsort(later, (size_t)nlater, sizeof *later, cmp_append);
    for (int i = 0; i < nlater; i++) {
        size_t k = (size_t)(later[i] - u->acts); /* the action's own value */
        json_t *v = vals[k];
        vals[k] = NULL;
        if (set_at(&ap, item, &later[i]->path, v)) goto done;
    }
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_REMOVE) rem[nrem++] = &u->acts[i];
    qsort(rem, (size_t)nrem, sizeof *rem, cmp_removal);
    for (int i = 0; i < nrem; i++) {
        /* DynamoDB refuses REMOVE x.y when x is missing from an item, yet ignores it when
         * the whole item is missing. */
        if (!exists && !place_exists(item, &rem[i]->path)) continue;
        if (remove_at(&ap, item, &rem[i]->path)) goto done;
    }
    /* ADDs too run in path order, so ADDs past a list's end append in index order. */
    nlater = 0;
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_ADD) later[nlater++] = &u->acts[i];
    qsort(later, (size_t)nlater, sizeof *later, cmp_append);
    for (int i = 0; i < nlater; i++)
        if (add_at(&ap, item, &later[i]->path, later[i]->value->value)) goto done;
    for (int i = 0; i < n; i++)
        if (u->acts[i].kind == U_DELETE &&
            delete_at(&ap, item, &u->acts[i].path, u->acts[i].value->value))
            goto done;
    rc = 0;
done:
    if (vals)
        for (int i = 0; i < n; i++)
            json_decref(vals[i]);
    free(vals);
    free(rem);
    free(later);
    return rc;
}

/* ---- public ---- */

int expr_update_apply(const expr_update *u, json_t *item, qr_err *err)
{
    return apply(u, item, 1, err);
}

int expr_update_apply_missing(const expr_update *u, json_t *item, qr_err *err)
{
    return apply(u, item, 0, err);
}

int expr_parse_update(expr_ctx *cx, const char *text, expr_update **out)
{
    expr_update *u = calloc(1, sizeof *u);
    if (u == NULL) return err_set(cx->err, QR_E_INTERNAL, "out of memory");
    arena_init(&u->ar, 0);
    if (parse_update(cx, text, &u->ar, &u->acts, &u->nacts)) {
        expr_update_free(u);
        return -1;
    }
    *out = u;
    return 0;
}

/* ---- what UpdateItem charges a statement against the item size limit ----
 * Measured against DynamoDB: 3 for the update, then per clause what the request
 * carries, not what the item holds. The figures have no documented basis. */

/* A list index counts its decimal digits, a name its bytes. */
static size_t element_bytes(const path_elem *e)
{
    if (e->name) return strlen(e->name);
    char digits[24];
    return (size_t)snprintf(digits, sizeof digits, "%ld", e->index);
}

/* A clause's target: its first name, then 4 and the element for each later one. */
static size_t target_bytes(const path *p)
{
    size_t n = element_bytes(&p->e[0]);
    for (int i = 1; i < p->n; i++)
        n += 4 + element_bytes(&p->e[i]);
    return n;
}

/* An operand: a value costs its size at every use; a path 1, plus 14 and the element
 * for each element (the value it reads is free); a function or arithmetic a fixed
 * amount plus its operands. */
static size_t operand_bytes(const operand *o)
{
    size_t n = 0;
    switch (o->kind) {
    case OP_VALUE:
        return o->value ? value_size(o->value) : 0;
    case OP_PATH:
        n = 1;
        for (int i = 0; i < o->path.n; i++)
            n += 14 + element_bytes(&o->path.e[i]);
        return n;
    case OP_PLUS:
        n = 34;
        break;
    case OP_MINUS:
        n = 37;
        break;
    case OP_IF_NOT_EXISTS:
        n = 39;
        break;
    case OP_LIST_APPEND:
        n = 37;
        break;
    default:
        return 0;
    }
    for (int i = 0; i < o->na; i++)
        n += operand_bytes(o->a[i]);
    return n;
}

size_t expr_update_request_size(const expr_update *u)
{
    size_t n = 3;
    for (int i = 0; i < u->nacts; i++) {
        const upd_action *a = &u->acts[i];
        switch (a->kind) {
        case U_SET:
            n += 19 + target_bytes(&a->path) + (a->value ? operand_bytes(a->value) : 0);
            break;
        case U_ADD:
            n += 19 + target_bytes(&a->path) + (a->value ? operand_bytes(a->value) : 0);
            break;
        case U_REMOVE:
        case U_DELETE:
            n += 1 + target_bytes(&a->path);
            break;
        }
    }
    return n;
}

json_t *expr_update_top_names(const expr_update *u)
{
    json_t *names = json_array();
    for (int i = 0; names && i < u->nacts; i++)
        path_add_top_name(names, &u->acts[i].path);
    return names;
}

expr_proj *expr_update_projection(const expr_update *u)
{
    expr_proj *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    arena_init(&p->ar, 0);
    p->paths = arena_alloc(&p->ar, (size_t)(u->nacts ? u->nacts : 1) * sizeof *p->paths);
    if (p->paths == NULL) goto nomem;
    for (int i = 0; i < u->nacts; i++) {
        const path *src = &u->acts[i].path;
        path *dst = &p->paths[p->npaths++];
        dst->n = src->n;
        dst->e = arena_alloc(&p->ar, (size_t)src->n * sizeof *dst->e);
        if (dst->e == NULL) goto nomem;
        for (int k = 0; k < src->n; k++) {
            dst->e[k] = src->e[k];
            dst->e[k].raw = NULL;
            if (src->e[k].name && (dst->e[k].name = arena_strndup(&p->ar, src->e[k].name,
                                                                  strlen(src->e[k].name))) == NULL)
                goto nomem;
        }
    }
    return p;
nomem:
    expr_proj_free(p);
    return NULL;
}

void expr_update_free(expr_update *u)
{
    if (u == NULL) return;
    arena_free(&u->ar);
    free(u);
}
