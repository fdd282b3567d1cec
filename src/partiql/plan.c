/* plan.c — the PartiQL planner: which item operation serves a statement, and with what.
 *
 * SELECT becomes a Query when its WHERE fixes the partition key with = or IN, else a
 * Scan, or a GetItem when it must name one item; INSERT a PutItem that must not find the
 * item, UPDATE an UpdateItem that must find it, DELETE a DeleteItem, EXISTS a
 * ConditionCheck. Pure: no storage, no requests; the tree is borrowed, never copied. */
#include <stdlib.h>
#include <string.h>

#include "partiql/execute.h"
#include "partiql/plan.h"
#include "util/buf.h"

#define IN_KEYS_MAX 50 /* partition key values in one IN (non-key IN takes 100) */

static int out_of_memory(qr_err *err)
{
    return err_set(err, QR_E_INTERNAL, "out of memory");
}

int pq_refuse_in_transaction(qr_err *err, size_t i, const char *why)
{
    return err_validation(err, QR_MSG_TXN_STATEMENT_INVALID, i, why);
}

void pq_plan_free(pq_plan *p)
{
    pq_schema_free(&p->schema);
    json_decref(p->key);
    free(p->filter.v);
    pq_filter_free(p->key_filter);
    free(p->conditions.v);
    memset(p, 0, sizeof *p);
}

/* Starts plan p of st, taking over *schema. */
static void plan_init(pq_plan *p, pq_op op, const pq_stmt *st, pq_schema *schema)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    p->stmt = st;
    p->schema = *schema;
    memset(schema, 0, sizeof *schema);
}

/* ---- what the item operations' expressions can say ---- */

/* A value: a path, a value, +, - and the functions size and list_append. */
static int check_operand(const pq_node *n, qr_err *err)
{
    switch (n->kind) {
    case PQN_PATH:
    case PQN_VALUE:
        return 0;
    case PQN_ADD:
    case PQN_SUB:
        return check_operand(n->args[0], err) || check_operand(n->args[1], err) ? -1 : 0;
    case PQN_FUNC:
        if (strcmp(n->fn, "size") == 0 || strcmp(n->fn, "list_append") == 0) {
            for (size_t i = 0; i < n->nargs; i++)
                if (check_operand(n->args[i], err)) return -1;
            return 0;
        }
        return err_validation(err, "Unsupported operator in Update Expression. Operator: %s",
                              n->fn);
    default:
        return err_validation(err, "Unsupported operation: a condition cannot be used as a value");
    }
}

int pq_check_condition(const pq_node *n, qr_err *err)
{
    switch (n->kind) {
    case PQN_AND:
    case PQN_OR:
        return pq_check_condition(n->args[0], err) || pq_check_condition(n->args[1], err) ? -1 : 0;
    case PQN_NOT:
        return pq_check_condition(n->args[0], err);
    case PQN_CMP:
    case PQN_BETWEEN:
        for (size_t i = 0; i < n->nargs; i++)
            if (check_operand(n->args[i], err)) return -1;
        return 0;
    case PQN_IN:
        if (n->nargs > 101)
            return err_validation(
                err, "Unsupported operation: IN takes at most 100 values, here %zu", n->nargs - 1);
        for (size_t i = 0; i < n->nargs; i++)
            if (check_operand(n->args[i], err)) return -1;
        return 0;
    case PQN_IS:
        return 0;
    case PQN_FUNC:
        if (strcmp(n->fn, "begins_with") == 0 || strcmp(n->fn, "contains") == 0 ||
            strcmp(n->fn, "attribute_type") == 0 || strcmp(n->fn, "attribute_exists") == 0 ||
            strcmp(n->fn, "attribute_not_exists") == 0) {
            for (size_t i = 0; i < n->nargs; i++)
                if (check_operand(n->args[i], err)) return -1;
            return 0;
        }
        return err_validation(err,
                              "WHERE clause must contain an expression that resolves to a boolean");
    default:
        return err_validation(err,
                              "WHERE clause must contain an expression that resolves to a boolean");
    }
}

static int check_conditions(const pq_conds *list, qr_err *err)
{
    for (size_t i = 0; i < list->n; i++)
        if (pq_check_condition(list->v[i], err)) return -1;
    return 0;
}

/* ---- looking at a WHERE clause ---- */

/* Appends n to out. */
static int push(pq_node *n, pq_conds *out, qr_err *err)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 8;
        pq_node **v = realloc(out->v, cap * sizeof *v);
        if (v == NULL) return out_of_memory(err);
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = n;
    return 0;
}

/* The conjuncts of n (the operands of its top-level ANDs). */
static int flatten(pq_node *n, pq_conds *out, qr_err *err)
{
    if (n->kind == PQN_AND)
        return flatten(n->args[0], out, err) || flatten(n->args[1], out, err) ? -1 : 0;
    return push(n, out, err);
}

/* The branches of n (the operands of its top-level ORs). */
static int branches(pq_node *n, pq_conds *out, qr_err *err)
{
    if (n->kind == PQN_OR)
        return branches(n->args[0], out, err) || branches(n->args[1], out, err) ? -1 : 0;
    return push(n, out, err);
}

/* True if n is the bare top-level attribute name. */
static int is_attr(const pq_node *n, const char *name)
{
    if (n->kind != PQN_PATH || json_array_size(n->path) != 1) return 0;
    const char *s = json_string_value(json_array_get(n->path, 0));
    return s && strcmp(s, name) == 0;
}

/* The value v of a conjunct "name = v" (or "v = name"), or NULL. */
static const json_t *eq_value(const pq_node *c, const char *name)
{
    if (c->kind != PQN_CMP || strcmp(c->op, "=") != 0) return NULL;
    if (is_attr(c->args[0], name) && c->args[1]->kind == PQN_VALUE) return c->args[1]->value;
    if (is_attr(c->args[1], name) && c->args[0]->kind == PQN_VALUE) return c->args[0]->value;
    return NULL;
}

/* True if n refers anywhere to the top-level attribute name. */
static int mentions(const pq_node *n, const char *name)
{
    if (n->kind == PQN_PATH) {
        const char *s = json_string_value(json_array_get(n->path, 0));
        return s && strcmp(s, name) == 0;
    }
    for (size_t i = 0; i < n->nargs; i++)
        if (mentions(n->args[i], name)) return 1;
    return 0;
}

/* True if c is a condition DynamoDB takes on a sort key in KeyConditionExpression, with
 * the attribute on the left: sk op v, sk BETWEEN v AND w, begins_with(sk, v). */
static int sort_cond(const pq_node *c, const char *sk)
{
    if (c->kind == PQN_CMP)
        return strcmp(c->op, "<>") != 0 && is_attr(c->args[0], sk) && c->args[1]->kind == PQN_VALUE;
    if (c->kind == PQN_BETWEEN)
        return is_attr(c->args[0], sk) && c->args[1]->kind == PQN_VALUE &&
               c->args[2]->kind == PQN_VALUE;
    if (c->kind == PQN_FUNC && strcmp(c->fn, "begins_with") == 0)
        return is_attr(c->args[0], sk) && c->args[1]->kind == PQN_VALUE;
    return 0;
}

/* Splits where into the item's full table key (one equality per key attribute) and the
 * other conjuncts (rest, borrowed from where). missing is the message when a key
 * attribute has no equality. */
static int key_of(const pq_schema *s, pq_node *where, const char *missing, json_t **key,
                  pq_conds *rest, qr_err *err)
{
    pq_conds all = {0};
    char *used = NULL;
    const char *names[2] = {s->pk, s->sk};
    int rc = -1;
    *key = NULL;
    memset(rest, 0, sizeof *rest);
    if (where == NULL) return err_validation(err, "%s", missing);
    if (flatten(where, &all, err)) goto done;
    used = calloc(all.n, 1);
    *key = json_object();
    if (used == NULL || *key == NULL) {
        out_of_memory(err);
        goto done;
    }
    for (int k = 0; k < 2 && names[k]; k++) {
        int found = -1;
        for (size_t i = 0; i < all.n; i++) {
            if (used[i] || eq_value(all.v[i], names[k]) == NULL) continue;
            if (found >= 0) {
                err_validation(err,
                               "Multiple conditions on same key %s. Only single item "
                               "Update/Insert/Delete are supported",
                               names[k]);
                goto done;
            }
            found = (int)i;
        }
        if (found < 0) {
            err_validation(err, "%s", missing);
            goto done;
        }
        used[found] = 1;
        json_object_set_new(*key, names[k], json_deep_copy(eq_value(all.v[found], names[k])));
    }
    for (size_t i = 0; i < all.n; i++)
        if (!used[i] && flatten(all.v[i], rest, err)) goto done;
    rc = 0;
done:
    free(all.v);
    free(used);
    if (rc) {
        json_decref(*key);
        *key = NULL;
        free(rest->v);
        memset(rest, 0, sizeof *rest);
    }
    return rc;
}

/* ---- what an index holds ---- */

/* The k-th key attribute of what a SELECT reads: its partition keys, then its sort keys. */
static const char *read_key(const pq_schema *s, int k)
{
    return k < s->npk ? s->rpk[k] : s->rsk[k - s->npk];
}

/* True if the index a statement reads holds attribute name (the table always does). */
static int projected(const pq_schema *s, const char *name)
{
    if (s->projection == QR_PROJ_ALL || strcmp(name, s->pk) == 0 ||
        (s->sk && strcmp(name, s->sk) == 0))
        return 1;
    for (int i = 0; i < s->npk + s->nsk; i++)
        if (strcmp(name, read_key(s, i)) == 0) return 1;
    size_t i;
    json_t *v;
    json_array_foreach(s->include, i, v) if (strcmp(name, json_string_value(v)) == 0) return 1;
    return 0;
}

/* True if the statement's projection names an attribute the index does not hold. */
static int reaches_back(const pq_schema *s, const pq_stmt *st)
{
    for (size_t i = 0; i < st->nproj; i++) {
        const pq_node *n = st->proj[i];
        const char *name =
            n->kind == PQN_PATH ? json_string_value(json_array_get(n->path, 0)) : NULL;
        if (name && !projected(s, name)) return 1;
    }
    return 0;
}

/* Adds to list (", "-separated in b) the top-level attributes n refers to that the index
 * does not hold, each once. */
static void unprojected(const pq_schema *s, const pq_node *n, json_t *seen, buf *b)
{
    if (n->kind == PQN_PATH) {
        const char *name = json_string_value(json_array_get(n->path, 0));
        if (name && !projected(s, name) && json_object_get(seen, name) == NULL) {
            json_object_set_new(seen, name, json_true());
            buf_printf(b, "%s%s", b->len ? ", " : "", name);
        }
    }
    for (size_t i = 0; i < n->nargs; i++)
        unprojected(s, n->args[i], seen, b);
}

/* DynamoDB's PartiQL refuses to read through an index an attribute the index does not
 * hold, where Query would answer without it: in the WHERE clause of a keyed read (a
 * Query; a Scan of the index just matches nothing), for any index, and in the projection
 * for a global index (a local one reads it from the table). */
static int check_projected(const pq_schema *s, const pq_stmt *st, int query, qr_err *err)
{
    if (s->index == NULL || s->projection == QR_PROJ_ALL) return 0;
    json_t *seen = json_object();
    buf b;
    int rc = 0;
    buf_init(&b, 0);
    if (query) unprojected(s, st->where, seen, &b);
    if (b.len) {
        rc = err_validation(err,
                            QR_MSG_INVALID_PARAMETER
                            "Secondary index %s does "
                            "not project one or more filter attributes: [%.400s]",
                            s->index, b.data);
    } else if (s->global) {
        for (size_t i = 0; i < st->nproj; i++)
            unprojected(s, st->proj[i], seen, &b);
        if (b.len)
            rc = err_validation(err,
                                QR_MSG_INVALID_PARAMETER "Global secondary index "
                                                         "%s does not project [%.400s]",
                                s->index, b.data);
    }
    buf_free(&b);
    json_decref(seen);
    return rc;
}

/* ---- SELECT ---- */

/* What one OR branch reads of a table with one sort key: whether its conjuncts fix every
 * partition key attribute (vals, borrowed), and whether it takes a condition on the sort
 * key as a key condition (ranged) or names the sort key nowhere (whole). */
typedef struct branch_keys {
    int fixed, ranged, whole;
    const json_t *vals[QR_MAX_KEY_ATTRS];
} branch_keys;

static int branch_read(const pq_schema *s, pq_node *b, branch_keys *k, qr_err *err)
{
    pq_conds c = {0};
    memset(k, 0, sizeof *k);
    if (flatten(b, &c, err)) {
        free(c.v);
        return -1;
    }
    k->fixed = 1;
    k->whole = 1;
    for (int i = 0; i < s->npk; i++) {
        for (size_t j = 0; j < c.n && k->vals[i] == NULL; j++)
            k->vals[i] = eq_value(c.v[j], s->rpk[i]);
        if (k->vals[i] == NULL) k->fixed = 0;
    }
    for (size_t j = 0; j < c.n; j++) {
        k->ranged |= sort_cond(c.v[j], s->rsk[0]);
        if (mentions(c.v[j], s->rsk[0])) k->whole = 0;
    }
    free(c.v);
    return 0;
}

/* DynamoDB reads each branch of a WHERE's top-level OR that fixes a partition as a range
 * of it, and refuses two branches whose ranges of the same partition overlap. It is
 * refused here where that is certain: one branch reads the whole partition (naming the
 * sort key nowhere) beside one that narrows the same partition by a sort-key condition.
 * (A branch whose sort-key condition is negated or uses <> is not refused by DynamoDB.) */
static int check_overlap(const pq_schema *s, const pq_stmt *st, qr_err *err)
{
    if (st->where == NULL || st->where->kind != PQN_OR || s->nsk != 1) return 0;
    pq_conds or = {0};
    branch_keys *k = NULL;
    int rc = -1;
    if (branches(st->where, & or, err)) goto done;
    k = calloc(or.n, sizeof *k);
    if (k == NULL) {
        out_of_memory(err);
        goto done;
    }
    for (size_t i = 0; i < or.n; i++)
        if (branch_read(s, or.v[i], &k[i], err)) goto done;
    rc = 0;
    for (size_t i = 0; i < or.n && rc == 0; i++) {
        if (!k[i].fixed || !k[i].whole) continue;
        for (size_t j = 0; j < or.n && rc == 0; j++) {
            if (j == i || !k[j].fixed || !k[j].ranged) continue;
            int same = 1;
            for (int p = 0; p < s->npk; p++)
                same &= json_equal(k[i].vals[p], k[j].vals[p]);
            if (same)
                rc = err_validation(
                    err,
                    "Overlapping conditions with range keys are not supported in where clause");
        }
    }
done:
    free(or.v);
    free(k);
    return rc;
}

/* Finds the key condition of a Query in the conjuncts all: an equality on every partition
 * key attribute (or, for one such attribute, an IN of values), marking those it takes in
 * used. 0 if there is none: the SELECT is a Scan. */
static int find_partition(pq_plan *p, const pq_conds *all, char *used)
{
    const pq_schema *s = &p->schema;
    for (int i = 0; i < s->npk; i++) {
        int f = -1;
        for (size_t j = 0; j < all->n && f < 0; j++)
            if (!used[j] && eq_value(all->v[j], s->rpk[i])) f = (int)j;
        if (f < 0 && s->npk == 1)
            for (size_t j = 0; j < all->n && f < 0; j++) {
                const pq_node *c = all->v[j];
                if (c->kind != PQN_IN || !is_attr(c->args[0], s->rpk[0])) continue;
                size_t k = 1;
                while (k < c->nargs && c->args[k]->kind == PQN_VALUE)
                    k++;
                if (k == c->nargs) {
                    f = (int)j;
                    p->partition_in = c;
                }
            }
        if (f < 0) return 0;
        used[f] = 1;
        if (all->v[f] != p->partition_in) p->partition_values[i] = eq_value(all->v[f], s->rpk[i]);
    }
    return 1;
}

int pq_plan_select(const pq_stmt *st, pq_schema *schema, int consistent, pq_plan *p, qr_err *err)
{
    pq_conds all = {0}, on_keys = {0};
    char *used = NULL;
    int rc = -1;
    plan_init(p, PQ_OP_SCAN, st, schema);
    const pq_schema *s = &p->schema;
    p->consistent = consistent;
    if (consistent && s->global) {
        /* Query's message for this differs; PartiQL has its own */
        err_validation(err,
                       "Strongly consistent read is not supported on Global Secondary Indexes");
        goto done;
    }
    if (check_overlap(s, st, err)) goto done;
    if (st->where && flatten(st->where, &all, err)) goto done;
    used = calloc(all.n + 1, 1);
    if (used == NULL) {
        out_of_memory(err);
        goto done;
    }
    int query = st->where != NULL && find_partition(p, &all, used);
    if (query) p->op = PQ_OP_QUERY;
    if (p->partition_in && p->partition_in->nargs - 1 > IN_KEYS_MAX) {
        err_validation(err,
                       "Unsupported operation: IN on a partition key takes at most %d values, here "
                       "%zu",
                       IN_KEYS_MAX, p->partition_in->nargs - 1);
        goto done;
    }
    if (check_projected(s, st, query, err)) goto done;
    if (query && s->nsk == 1)
        for (size_t j = 0; j < all.n && p->sort_condition == NULL; j++)
            if (!used[j] && sort_cond(all.v[j], s->rsk[0])) {
                p->sort_condition = all.v[j];
                used[j] = 1;
            }
    /* The other conditions go to the FilterExpression, except those on the key attributes
     * it may not name: the executor applies them to the items the Query returns. */
    for (size_t j = 0; query && j < all.n; j++) {
        if (used[j]) continue;
        int on_key = 0;
        for (int k = 0; k < s->npk + s->nsk; k++)
            on_key |= mentions(all.v[j], read_key(s, k));
        if (flatten(all.v[j], on_key ? &on_keys : &p->filter, err)) goto done;
    }
    /* compiled here, so that its errors come before ORDER BY's */
    if (check_conditions(&on_keys, err) || pq_filter_compile(&on_keys, &p->key_filter, err))
        goto done;
    if (st->order_by) {
        int key = 0;
        for (int k = 0; k < s->npk + s->nsk; k++)
            key |= strcmp(st->order_by, read_key(s, k)) == 0;
        if (!key) {
            err_validation(
                err, "Variable reference %s in ORDER BY clause must be part of the primary key",
                st->order_by);
            goto done;
        }
        if (!query) {
            err_validation(
                err,
                "Must have at least one non-optional hash key condition in WHERE clause when using "
                "ORDER BY clause.");
            goto done;
        }
    }
    /* A local index reads what it does not hold from the table, each item read there
     * charged to the table; the projection, applied to the items read, may name such
     * attributes (check_projected refused them for a global one). One that names only
     * what the index holds reads the index alone. */
    p->select_all_attributes =
        st->index && !s->global && s->projection != QR_PROJ_ALL && reaches_back(s, st);
    if (query) {
        p->scan_forward = !st->order_desc;
        if (p->sort_condition && pq_check_condition(p->sort_condition, err)) goto done;
        if (check_conditions(&p->filter, err)) goto done;
    } else if (st->where) {
        p->scan_filter = st->where;
        if (pq_check_condition(st->where, err)) goto done;
    }
    rc = 0;
done:
    free(all.v);
    free(on_keys.v);
    free(used);
    if (rc) pq_plan_free(p);
    return rc;
}

int pq_plan_get_item(const pq_stmt *st, pq_schema *schema, const char *missing, int consistent,
                     pq_plan *p, qr_err *err)
{
    pq_conds rest;
    plan_init(p, PQ_OP_GET_ITEM, st, schema);
    p->consistent = consistent;
    int rc = key_of(&p->schema, st->where, missing, &p->key, &rest, err);
    if (rc == 0 && rest.n) rc = err_validation(err, "%s", missing);
    free(rest.v);
    if (rc) pq_plan_free(p);
    return rc;
}

int pq_plan_write(const pq_stmt *st, pq_schema *schema, size_t i, pq_plan *p, qr_err *err)
{
    static const pq_op ops[] = {[PQ_INSERT] = PQ_OP_PUT_ITEM,
                                [PQ_UPDATE] = PQ_OP_UPDATE_ITEM,
                                [PQ_DELETE] = PQ_OP_DELETE_ITEM,
                                [PQ_EXISTS] = PQ_OP_CONDITION_CHECK};
    plan_init(p, ops[st->kind], st, schema);
    if (st->kind != PQ_INSERT && st->kind != PQ_EXISTS)
        p->return_values = st->returning ? st->returning : "NONE";
    if (st->kind == PQ_INSERT) {
        p->item_test = PQ_ITEM_ABSENT;
        return 0;
    }
    if (key_of(&p->schema, st->where, QR_MSG_PQ_KEY_EQUALITY, &p->key, &p->conditions, err))
        goto fail;
    if (st->kind == PQ_EXISTS && p->conditions.n == 0) {
        pq_refuse_in_transaction(
            err, i, "EXISTS() must contain a single item read with additional condition");
        goto fail;
    }
    if (st->kind == PQ_DELETE)
        p->item_test = p->conditions.n ? PQ_ITEM_ABSENT_OR : PQ_ITEM_ANY;
    else
        p->item_test = PQ_ITEM_PRESENT_AND;
    if (check_conditions(&p->conditions, err)) goto fail;
    for (size_t k = 0; k < st->nactions; k++)
        if (st->actions[k].value && check_operand(st->actions[k].value, err)) goto fail;
    return 0;
fail:
    pq_plan_free(p);
    return -1;
}
