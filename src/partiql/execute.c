/* execute.c — runs PartiQL plans through the operations' own functions (ops.h).
 *
 * Each plan's expressions are written from the tree as expression text with #n / :v
 * placeholders (never with the statement's own text), parsed here as the expression
 * language parses any, and handed parsed to items_*, query_read / scan_read and
 * transact_*, which apply their rules as they do for the JSON handlers. It writes no
 * request, decides nothing a plan decides, and neither pages nor shapes answers (api.c). */
#include <stdlib.h>
#include <string.h>

#include "model/value.h"
#include "ops/ops.h"
#include "partiql/execute.h"
#include "util/jsonread.h"

static int out_of_memory(qr_err *err)
{
    return err_set(err, QR_E_INTERNAL, "out of memory");
}

/* ---- expressions, written with placeholders ---- */

typedef struct xb {
    json_t *names;  /* "#nK" -> attribute name */
    json_t *byname; /* attribute name -> "#nK" */
    json_t *values; /* ":vK" -> AttributeValue */
    int nvalues;
    qr_err *err;
} xb;

static void xb_init(xb *x, qr_err *err)
{
    x->names = json_object();
    x->byname = json_object();
    x->values = json_object();
    x->nvalues = 0;
    x->err = err;
}

static void xb_free(xb *x)
{
    json_decref(x->names);
    json_decref(x->byname);
    json_decref(x->values);
}

static int x_name(xb *x, buf *o, const char *name)
{
    json_t *ph = json_object_get(x->byname, name);
    if (ph == NULL) {
        char key[32];
        snprintf(key, sizeof key, "#n%zu", json_object_size(x->names));
        /* json_object_set_new takes its value even when it fails */
        if (json_object_set_new(x->names, key, json_string(name)) ||
            json_object_set_new(x->byname, name, json_string(key)))
            return out_of_memory(x->err);
        ph = json_object_get(x->byname, name);
    }
    return buf_puts(o, json_string_value(ph));
}

static int x_value(xb *x, buf *o, const json_t *v)
{
    char key[32];
    snprintf(key, sizeof key, ":v%d", x->nvalues++);
    if (json_object_set_new(x->values, key, json_deep_copy(v))) return out_of_memory(x->err);
    return buf_puts(o, key);
}

static int x_path(xb *x, buf *o, const json_t *path)
{
    size_t i;
    json_t *c;
    int rc = 0;
    json_array_foreach(path, i, c)
    {
        if (json_is_integer(c)) {
            rc |= buf_printf(o, "[%lld]", (long long)json_integer_value(c));
        } else {
            if (i) rc |= buf_putc(o, '.');
            rc |= x_name(x, o, json_string_value(c));
        }
    }
    return rc;
}

/* Trees pq_check_condition refuses never reach the writers below. */
static int unplanned(xb *x)
{
    return err_set(x->err, QR_E_INTERNAL, "a PartiQL expression the planner did not check");
}

static int x_args(xb *x, buf *o, const pq_node *n, size_t from);

static int x_operand(xb *x, buf *o, const pq_node *n)
{
    int rc = 0;
    switch (n->kind) {
    case PQN_PATH:
        return x_path(x, o, n->path);
    case PQN_VALUE:
        return x_value(x, o, n->value);
    case PQN_ADD:
    case PQN_SUB:
        rc |= x_operand(x, o, n->args[0]);
        rc |= buf_puts(o, n->kind == PQN_ADD ? " + " : " - ");
        return rc | x_operand(x, o, n->args[1]);
    case PQN_FUNC:
        rc |= buf_printf(o, "%s(", n->fn);
        rc |= x_args(x, o, n, 0);
        return rc | buf_putc(o, ')');
    default:
        return unplanned(x);
    }
}

/* n's operands from the from-th, ", "-separated. */
static int x_args(xb *x, buf *o, const pq_node *n, size_t from)
{
    int rc = 0;
    for (size_t i = from; i < n->nargs; i++) {
        if (i > from) rc |= buf_puts(o, ", ");
        rc |= x_operand(x, o, n->args[i]);
    }
    return rc;
}

static int x_cond(xb *x, buf *o, const pq_node *n)
{
    int rc = 0;
    switch (n->kind) {
    case PQN_AND:
    case PQN_OR:
        rc |= buf_putc(o, '(');
        rc |= x_cond(x, o, n->args[0]);
        rc |= buf_puts(o, n->kind == PQN_AND ? ") AND (" : ") OR (");
        rc |= x_cond(x, o, n->args[1]);
        return rc | buf_putc(o, ')');
    case PQN_NOT:
        rc |= buf_puts(o, "NOT (");
        rc |= x_cond(x, o, n->args[0]);
        return rc | buf_putc(o, ')');
    case PQN_CMP:
        rc |= x_operand(x, o, n->args[0]);
        rc |= buf_printf(o, " %s ", n->op);
        return rc | x_operand(x, o, n->args[1]);
    case PQN_BETWEEN:
        rc |= x_operand(x, o, n->args[0]);
        rc |= buf_puts(o, " BETWEEN ");
        rc |= x_operand(x, o, n->args[1]);
        rc |= buf_puts(o, " AND ");
        return rc | x_operand(x, o, n->args[2]);
    case PQN_IN:
        rc |= x_operand(x, o, n->args[0]);
        rc |= buf_puts(o, " IN (");
        rc |= x_args(x, o, n, 1);
        return rc | buf_putc(o, ')');
    case PQN_IS:
        if (n->is_type[0]) {
            json_t *type = json_pack("{s:s}", "S", n->is_type);
            rc |= buf_puts(o, n->negated ? "NOT attribute_type(" : "attribute_type(");
            rc |= x_path(x, o, n->args[0]->path);
            rc |= buf_puts(o, ", ");
            rc |= type ? x_value(x, o, type) : out_of_memory(x->err);
            json_decref(type);
            return rc | buf_putc(o, ')');
        }
        rc |= buf_puts(o, n->negated ? "attribute_exists(" : "attribute_not_exists(");
        rc |= x_path(x, o, n->args[0]->path);
        return rc | buf_putc(o, ')');
    case PQN_FUNC:
        rc |= buf_printf(o, "%s(", n->fn);
        rc |= x_args(x, o, n, 0);
        return rc | buf_putc(o, ')');
    default:
        return unplanned(x);
    }
}

/* "(c1) AND (c2) ...", each conjunct in parentheses (and no more: DynamoDB refuses
 * redundant ones such as "((a = b))"). */
static int x_conj(xb *x, buf *o, const pq_conds *list)
{
    int rc = 0;
    for (size_t i = 0; i < list->n; i++) {
        rc |= buf_puts(o, i ? " AND (" : "(");
        rc |= x_cond(x, o, list->v[i]);
        rc |= buf_putc(o, ')');
    }
    return rc;
}

/* A write's condition on its item (plan.h's pq_item_test). */
static int x_item_test(xb *x, buf *o, const pq_plan *p)
{
    const pq_conds *c = &p->conditions;
    int rc = 0;
    switch (p->item_test) {
    case PQ_ITEM_ANY:
        return 0;
    case PQ_ITEM_ABSENT:
        rc |= buf_puts(o, "attribute_not_exists(");
        rc |= x_name(x, o, p->schema.pk);
        return rc | buf_putc(o, ')');
    case PQ_ITEM_ABSENT_OR:
        rc |= buf_puts(o, "attribute_not_exists(");
        rc |= x_name(x, o, p->schema.pk);
        rc |= buf_puts(o, c->n > 1 ? ") OR (" : ") OR ");
        rc |= x_conj(x, o, c);
        return c->n > 1 ? rc | buf_putc(o, ')') : rc;
    case PQ_ITEM_PRESENT_AND:
        rc |= buf_puts(o, "attribute_exists(");
        rc |= x_name(x, o, p->schema.pk);
        rc |= buf_putc(o, ')');
        if (c->n) {
            rc |= buf_puts(o, " AND ");
            rc |= x_conj(x, o, c);
        }
        return rc;
    }
    return unplanned(x);
}

/* UPDATE's actions as one UpdateExpression: its SET, REMOVE, ADD and DELETE clauses in
 * that order, each action in the statement's order within its clause. */
static int x_update(xb *x, buf *expr, const pq_stmt *st)
{
    static const char *const words[4] = {"SET", "REMOVE", "ADD", "DELETE"};
    buf clause[4];
    int e = 0;
    for (int k = 0; k < 4; k++)
        buf_init(&clause[k], 0);
    for (size_t i = 0; i < st->nactions; i++) {
        const pq_action *a = &st->actions[i];
        buf *b = &clause[a->kind];
        e |= buf_puts(b, b->len ? ", " : " ");
        e |= x_path(x, b, a->target->path);
        if (a->kind == PQA_SET) {
            e |= buf_puts(b, " = ");
            e |= x_operand(x, b, a->value);
        } else if (a->kind != PQA_REMOVE) {
            e |= buf_putc(b, ' ');
            e |= x_operand(x, b, a->value);
        }
    }
    for (int k = 0; k < 4; k++)
        if (clause[k].len)
            e |= buf_printf(expr, "%s%s%s", expr->len ? " " : "", words[k], clause[k].data);
    for (int k = 0; k < 4; k++)
        buf_free(&clause[k]);
    return e;
}

/* Checks the values x holds, as an operation checks a request's, and starts cx on them. */
static int xb_context(xb *x, expr_ctx *cx, qr_err *err)
{
    const char *k;
    json_t *v;
    int e = 0;
    json_object_foreach(x->values, k, v) e |= value_validate(v, 1, k, err);
    expr_ctx_init(cx, json_object_size(x->names) ? x->names : NULL,
                  json_object_size(x->values) ? x->values : NULL, err);
    cx->bare = 1; /* DynamoDB's PartiQL names no expression parameter in its messages */
    return e ? -1 : 0;
}

/* ---- conditions quarry evaluates itself ---- */

struct pq_filter {
    xb x; /* the names and values cx reads */
    expr_ctx cx;
    expr_cond *cond; /* NULL: every item passes */
};

void pq_filter_free(pq_filter *f)
{
    if (f == NULL) return;
    expr_cond_free(f->cond);
    expr_ctx_free(&f->cx);
    xb_free(&f->x);
    free(f);
}

int pq_filter_compile(const pq_conds *conds, pq_filter **out, qr_err *err)
{
    buf where;
    int e = 0;
    *out = NULL;
    if (conds == NULL || conds->n == 0) return 0;
    pq_filter *f = calloc(1, sizeof *f);
    if (f == NULL) return out_of_memory(err);
    xb_init(&f->x, err);
    buf_init(&where, 0);
    e |= x_conj(&f->x, &where, conds);
    e |= xb_context(&f->x, &f->cx, err);
    if (e == 0 && where.len) e |= expr_parse_condition(&f->cx, "WHERE", where.data, &f->cond);
    buf_free(&where);
    if (e) {
        if (err->type == NULL) out_of_memory(err);
        pq_filter_free(f);
        return -1;
    }
    *out = f;
    return 0;
}

int pq_filter_passes(const pq_filter *f, const json_t *item, qr_err *err)
{
    return f && f->cond ? expr_cond_eval(f->cond, item, err) : 1;
}

int pq_check_operand_types(const pq_stmt *st, qr_err *err)
{
    static const char wrong_type[] = "Incorrect operand type";
    if (st->where == NULL) return 0;
    qr_err e;
    err_init(&e);
    xb x;
    xb_init(&x, &e);
    expr_ctx cx = {0};
    expr_cond *c = NULL;
    buf text;
    buf_init(&text, 0);
    int rc = 0;
    /* the WHERE clause as one FilterExpression, whose parse checks the types; other
     * faults are left to their turn */
    if (pq_check_condition(st->where, &e) == 0 && x_cond(&x, &text, st->where) == 0 &&
        e.type == NULL && text.len && xb_context(&x, &cx, &e) == 0 &&
        expr_parse_condition(&cx, "FilterExpression", text.data, &c) &&
        strcmp(e.type, QR_E_VALIDATION) == 0 && strstr(e.msg, wrong_type))
        rc = err_validation(err, "%s", strstr(e.msg, wrong_type));
    expr_cond_free(c);
    expr_ctx_free(&cx);
    err_clear(&e);
    buf_free(&text);
    xb_free(&x);
    return rc;
}

/* ---- running plans ---- */

void pq_result_free(pq_result *r)
{
    json_decref(r->body);
    memset(r, 0, sizeof *r);
}

void pq_page_free(pq_page *p)
{
    json_decref(p->body);
    memset(p, 0, sizeof *p);
}

/* The table a plan names, looked up again for its operation (the caller releases it). */
static int plan_table(qr_db *db, const pq_plan *p, table **out, qr_err *err)
{
    *out = ops_table_get(db, p->schema.table);
    return *out ? 0 : err_set(err, QR_E_NOT_FOUND, QR_MSG_NOT_FOUND);
}

/* A write plan's condition and update, parsed, with the names and values they read. */
typedef struct write_exprs {
    xb x;
    expr_ctx cx;
    expr_cond *condition; /* NULL: none */
    expr_update *update;  /* UPDATE_ITEM's */
} write_exprs;

static void write_exprs_free(write_exprs *w)
{
    expr_cond_free(w->condition);
    expr_update_free(w->update);
    expr_ctx_free(&w->cx);
    xb_free(&w->x);
}

/* Writes the expressions of write plan p as text and parses them into w (zeroed here;
 * freed by write_exprs_free, whether or not this succeeds); in_transaction, an update's
 * errors are a transaction's. */
static int write_exprs_parse(const pq_plan *p, write_exprs *w, int in_transaction, qr_err *err)
{
    buf cond, upd;
    int e = 0;
    memset(w, 0, sizeof *w);
    xb_init(&w->x, err);
    buf_init(&cond, 0);
    buf_init(&upd, 0);
    e |= x_item_test(&w->x, &cond, p);
    if (p->op == PQ_OP_UPDATE_ITEM) e |= x_update(&w->x, &upd, p->stmt);
    if (e == 0) e = xb_context(&w->x, &w->cx, err);
    if (e == 0 && cond.len)
        e = expr_parse_condition(&w->cx, "ConditionExpression", cond.data, &w->condition);
    if (e == 0 && p->op == PQ_OP_UPDATE_ITEM) {
        e = upd.len ? expr_parse_update(&w->cx, upd.data, &w->update)
                    : err_validation(err, "The expression can not be empty;");
        if (e && in_transaction) transact_trim_update_error(err);
    }
    buf_free(&cond);
    buf_free(&upd);
    if (e && err->type == NULL) out_of_memory(err);
    return e ? -1 : 0;
}

/* Checks the item or key of write plan p against t, as its operation does. */
static int write_check(const table *t, const pq_plan *p, size_t *size, qr_err *err)
{
    *size = 0;
    return p->op == PQ_OP_PUT_ITEM ? item_check_put(t, p->stmt->item, size, err)
                                   : item_check_key(t, p->key, err);
}

int pq_exec_write(qr_db *db, const pq_plan *p, const char *capacity, const char *on_failure,
                  pq_result *out, qr_err *err)
{
    table *t = NULL;
    write_exprs w;
    size_t size;
    int rc = -1;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    if (plan_table(db, p, &t, err) || write_check(t, p, &size, err) ||
        write_exprs_parse(p, &w, 0, err))
        goto done;
    item_request r = {.t = t,
                      .key = p->op == PQ_OP_PUT_ITEM ? p->stmt->item : p->key,
                      .size = size,
                      .condition = w.condition,
                      .update = w.update,
                      .return_values = p->op == PQ_OP_PUT_ITEM ? "NONE" : p->return_values,
                      .on_failure = on_failure && p->op != PQ_OP_PUT_ITEM ? on_failure : "NONE",
                      .capacity = capacity ? capacity : "NONE",
                      .metrics = "NONE"};
    if (p->op == PQ_OP_PUT_ITEM) r.item = p->stmt->item;
    rc = p->op == PQ_OP_PUT_ITEM      ? items_put(db, &r, &out->body, err)
         : p->op == PQ_OP_UPDATE_ITEM ? items_update(db, &r, &out->body, err)
                                      : items_delete(db, &r, &out->body, err);
    if (rc == 0) {
        out->item = json_object_get(out->body, "Attributes");
        out->capacity = json_object_get(out->body, "ConsumedCapacity");
    }
done:
    write_exprs_free(&w);
    catalog_release_after_writes(t);
    return rc;
}

int pq_exec_get_item(qr_db *db, const pq_plan *p, const char *capacity, pq_result *out, qr_err *err)
{
    table *t = NULL;
    buf text;
    buf_init(&text, 0);
    int rc = -1;
    memset(out, 0, sizeof *out);
    if (plan_table(db, p, &t, err) || key_check_key(t, p->key, err)) goto done;
    item_request r = {.t = t,
                      .key = p->key,
                      .consistent = p->consistent,
                      .capacity = capacity ? capacity : "NONE"};
    if (items_get(db, &r, &text, err)) goto done;
    if ((out->body = json_read(text.data, text.len, JSON_ALLOW_NUL, NULL)) == NULL) {
        out_of_memory(err);
        goto done;
    }
    out->item = json_object_get(out->body, "Item");
    out->capacity = json_object_get(out->body, "ConsumedCapacity");
    rc = 0;
done:
    buf_free(&text);
    catalog_release(db, t);
    return rc;
}

int pq_exec_transact_get(qr_db *db, const pq_plan *plans, size_t n, const char *capacity,
                         const json_t **items, pq_result *out, qr_err *err)
{
    size_t payload = 0;
    int rc = -1;
    memset(out, 0, sizeof *out);
    transact_member *m = calloc(n, sizeof *m);
    if (m == NULL) return out_of_memory(err);
    for (size_t i = 0; i < n; i++) {
        m[i].kind = TRANSACT_GET;
        m[i].key = plans[i].key;
        m[i].on_failure = "NONE";
        if (plan_table(db, &plans[i], &m[i].t, err) || transact_check_member(&m[i], i, n, err) ||
            transact_join(m, i, &payload, err))
            goto done;
    }
    if (transact_get(db, m, n, capacity ? capacity : "NONE", &out->body, err)) goto done;
    json_t *responses = json_object_get(out->body, "Responses");
    for (size_t i = 0; i < n; i++)
        items[i] = json_object_get(json_array_get(responses, i), "Item");
    out->capacity = json_object_get(out->body, "ConsumedCapacity");
    rc = 0;
done:
    for (size_t i = 0; i < n; i++)
        transact_member_free(db, &m[i]);
    free(m);
    return rc;
}

static const transact_kind member_kinds[] = {[PQ_OP_PUT_ITEM] = TRANSACT_PUT,
                                             [PQ_OP_UPDATE_ITEM] = TRANSACT_UPDATE,
                                             [PQ_OP_DELETE_ITEM] = TRANSACT_DELETE,
                                             [PQ_OP_CONDITION_CHECK] = TRANSACT_CHECK};

int pq_exec_transact_write(qr_db *db, const pq_plan *plans, size_t n, const char *const *on_failure,
                           const char *token, const char *identity, const char *capacity,
                           pq_result *out, qr_err *err)
{
    size_t payload = 0;
    int rc = -1;
    memset(out, 0, sizeof *out);
    transact_member *m = calloc(n, sizeof *m);
    write_exprs *w = calloc(n, sizeof *w);
    if (m == NULL || w == NULL) {
        out_of_memory(err);
        goto done;
    }
    /* What a transaction judges before it looks up any table: every Put's item and every
     * member's expressions, in order. */
    for (size_t i = 0; i < n; i++) {
        const pq_plan *p = &plans[i];
        if (p->op == PQ_OP_PUT_ITEM && transact_check_put_item(p->stmt->item, err)) goto done;
        if (write_exprs_parse(p, &w[i], 1, err)) goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const pq_plan *p = &plans[i];
        transact_member *a = &m[i];
        a->kind = member_kinds[p->op];
        a->on_failure = on_failure[i] && p->op != PQ_OP_PUT_ITEM ? on_failure[i] : "NONE";
        if (p->op == PQ_OP_PUT_ITEM)
            a->item = p->stmt->item;
        else
            a->key = p->key;
        if (plan_table(db, p, &a->t, err) || transact_check_member(&m[i], i, n, err)) goto done;
        a->condition = w[i].condition;
        a->update = w[i].update;
        a->values = json_object_size(w[i].x.values) ? w[i].x.values : NULL;
        if (transact_join(m, i, &payload, err)) goto done;
    }
    transact_write_request r = {.m = m,
                                .n = n,
                                .token = token,
                                .identity = identity,
                                .capacity = capacity ? capacity : "NONE",
                                .metrics = "NONE"};
    if (transact_write(db, &r, &out->body, err)) goto done;
    out->capacity = json_object_get(out->body, "ConsumedCapacity");
    rc = 0;
done:
    for (size_t i = 0; m && w && i < n; i++) {
        transact_member_free(db, &m[i]);
        write_exprs_free(&w[i]);
    }
    free(m);
    free(w);
    return rc;
}

/* ---- Query and Scan ---- */

struct pq_read {
    const pq_plan *p;
    xb x;            /* the names and values of both expressions; a Query's ":k" is the
                        value of its first partition key attribute, which pages may change */
    buf key, filter; /* KeyConditionExpression (a Query's) and FilterExpression, as text */
    const char *capacity;
};

void pq_read_free(pq_read *r)
{
    if (r == NULL) return;
    xb_free(&r->x);
    buf_free(&r->key);
    buf_free(&r->filter);
    free(r);
}

int pq_read_prepare(const pq_plan *p, const char *capacity, pq_read **out, qr_err *err)
{
    const pq_schema *s = &p->schema;
    int e = 0;
    pq_read *r = calloc(1, sizeof *r);
    *out = NULL;
    if (r == NULL) return out_of_memory(err);
    r->p = p;
    r->capacity = capacity ? capacity : "NONE";
    xb_init(&r->x, err);
    buf_init(&r->key, 0);
    buf_init(&r->filter, 0);
    if (p->op == PQ_OP_QUERY) {
        for (int i = 0; i < s->npk; i++) {
            if (i) e |= buf_puts(&r->key, " AND ");
            e |= x_name(&r->x, &r->key, s->rpk[i]);
            e |= buf_puts(&r->key, " = ");
            if (i == 0)
                e |= buf_puts(&r->key, ":k");
            else
                e |= x_value(&r->x, &r->key, p->partition_values[i]);
        }
        if (p->sort_condition) {
            e |= buf_puts(&r->key, " AND ");
            e |= x_cond(&r->x, &r->key, p->sort_condition);
        }
        e |= x_conj(&r->x, &r->filter, &p->filter);
        if (json_object_set_new(r->x.values, ":k",
                                json_deep_copy(p->partition_in ? p->partition_in->args[1]->value
                                                               : p->partition_values[0])))
            e |= out_of_memory(err);
    } else if (p->scan_filter) {
        e |= x_cond(&r->x, &r->filter, p->scan_filter);
    }
    if (e) {
        if (err->type == NULL) out_of_memory(err);
        pq_read_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

int pq_read_page(qr_db *db, pq_read *r, const json_t *partition_value, long long limit,
                 json_t *start_key, pq_page *out, qr_err *err)
{
    const pq_plan *p = r->p;
    int query = p->op == PQ_OP_QUERY;
    table *t = NULL;
    expr_ctx cx = {0};
    expr_cond *filter = NULL;
    expr_keycond_multi key = {0};
    expr_key_schema ks;
    buf text;
    buf_init(&text, 0);
    int rc = -1;
    memset(out, 0, sizeof *out);
    if (partition_value &&
        json_object_set_new(r->x.values, ":k", json_deep_copy(partition_value))) {
        out_of_memory(err);
        goto done;
    }
    query_request q = {.select = p->select_all_attributes ? "ALL_ATTRIBUTES" : NULL,
                       .limit = limit,
                       .start_key = start_key,
                       .consistent = p->consistent,
                       .forward = p->scan_forward,
                       .total_segments = 1,
                       .capacity = r->capacity};
    if (plan_table(db, p, &t, err) || xb_context(&r->x, &cx, err)) goto done;
    q.t = t;
    if (r->filter.len && expr_parse_condition(&cx, "FilterExpression", r->filter.data, &filter))
        goto done;
    q.filter = filter;
    if (query_index(t, p->stmt->index, p->consistent, &q.index, err)) goto done;
    if (query) {
        query_key_schema(t, q.index, &ks);
        if (expr_parse_key_condition_multi(&cx, r->key.data, &ks, &key)) goto done;
        q.key = &key;
    }
    if (query ? query_read(db, &q, &text, err) : scan_read(db, &q, &text, err)) goto done;
    if ((out->body = json_read(text.data, text.len, JSON_ALLOW_NUL, NULL)) == NULL) {
        out_of_memory(err);
        goto done;
    }
    out->items = json_object_get(out->body, "Items");
    out->last_key = json_object_get(out->body, "LastEvaluatedKey");
    out->capacity = json_object_get(out->body, "ConsumedCapacity");
    out->scanned = json_integer_value(json_object_get(out->body, "ScannedCount"));
    rc = 0;
done:
    expr_keycond_multi_free(&key);
    expr_cond_free(filter);
    expr_ctx_free(&cx);
    buf_free(&text);
    json_decref(start_key);
    catalog_release(db, t);
    return rc;
}
