/* execute.c — runs PartiQL plans by writing the requests of the item operations' handlers.
 *
 * The one file that turns plans into DynamoDB JSON requests: expressions are written from
 * the tree with #n / :v placeholders only, never with the statement's own text, and the
 * handlers (op_put_item, op_query, ...) apply every rule of their own. It does not decide
 * anything a plan decides, nor page, project or shape the PartiQL API's answers. */
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

/* Adds the names and values used to req (only if any: DynamoDB refuses empty maps). */
static void xb_attach(xb *x, json_t *req)
{
    if (json_object_size(x->names)) json_object_set(req, "ExpressionAttributeNames", x->names);
    if (json_object_size(x->values)) json_object_set(req, "ExpressionAttributeValues", x->values);
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
    const char *k;
    json_t *v;
    json_object_foreach(f->x.values, k, v) e |= value_validate(v, 1, k, err);
    expr_ctx_init(&f->cx, f->x.names, f->x.values, err);
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
    if (st->where == NULL) return 0;
    qr_err e;
    err_init(&e);
    xb x;
    xb_init(&x, &e);
    buf text;
    buf_init(&text, 0);
    json_t *filter = NULL;
    int rc = 0;
    /* the WHERE clause as one FilterExpression, whose parse checks the types */
    if (pq_check_condition(st->where, &e) == 0 && x_cond(&x, &text, st->where) == 0 &&
        e.type == NULL && (filter = json_stringn(text.data ? text.data : "", text.len)) &&
        exprs_operand_type_error(filter, json_object_size(x.names) ? x.names : NULL,
                                 json_object_size(x.values) ? x.values : NULL, &e))
        rc = err_set(err, e.type, "%s", e.msg);
    json_decref(filter);
    err_clear(&e);
    buf_free(&text);
    xb_free(&x);
    return rc;
}

void pq_exec_unname_error(qr_err *err)
{
    static const char *const names[] = {"Invalid FilterExpression: ",
                                        "Invalid KeyConditionExpression: ",
                                        "Invalid ConditionExpression: ",
                                        "Invalid UpdateExpression: ",
                                        "Invalid ProjectionExpression: ",
                                        "Invalid WHERE: ",
                                        NULL};
    static const char envelope[] = "1 validation error detected: "; /* item operations' */
    if (err->type == NULL || strcmp(err->type, QR_E_VALIDATION) != 0) return;
    size_t skip = strncmp(err->msg, envelope, sizeof envelope - 1) ? 0 : sizeof envelope - 1;
    for (int i = 0; names[i]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(err->msg + skip, names[i], n) == 0) {
            memmove(err->msg, err->msg + skip + n, strlen(err->msg + skip + n) + 1);
            return;
        }
    }
}

/* ---- the handlers ---- */

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
    *out = catalog_get(db, p->stmt->table);
    return *out ? 0 : err_set(err, QR_E_NOT_FOUND, "Requested resource not found");
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

/* Checks the values x holds, as an operation checks a request's, and starts cx on them. */
static int xb_context(xb *x, expr_ctx *cx, qr_err *err)
{
    const char *k;
    json_t *v;
    int e = 0;
    json_object_foreach(x->values, k, v) e |= value_validate(v, 1, k, err);
    expr_ctx_init(cx, json_object_size(x->names) ? x->names : NULL,
                  json_object_size(x->values) ? x->values : NULL, err);
    return e ? -1 : 0;
}

/* Writes the expressions of write plan p as text and parses them into w (zeroed here;
 * freed by write_exprs_free, whether or not this succeeds). */
static int write_exprs_parse(const pq_plan *p, write_exprs *w, qr_err *err)
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
    if (e == 0 && p->op == PQ_OP_UPDATE_ITEM)
        e = upd.len ? expr_parse_update(&w->cx, upd.data, &w->update)
                    : err_validation(err, "Invalid UpdateExpression: The expression can not be "
                                          "empty;");
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
        write_exprs_parse(p, &w, err))
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

/* The request of a write plan in a transaction: Put, Update, Delete or ConditionCheck. */
static int write_request(const pq_plan *p, json_t **out, qr_err *err)
{
    const pq_stmt *st = p->stmt;
    xb x;
    buf cond, upd;
    int e = 0;
    *out = NULL;
    json_t *r = json_pack("{s:s}", "TableName", st->table);
    if (r == NULL) return out_of_memory(err);
    xb_init(&x, err);
    buf_init(&cond, 0);
    buf_init(&upd, 0);
    if (p->op == PQ_OP_PUT_ITEM)
        json_object_set(r, "Item", st->item);
    else
        json_object_set(r, "Key", p->key);
    e |= x_item_test(&x, &cond, p);
    if (p->op == PQ_OP_UPDATE_ITEM) {
        e |= x_update(&x, &upd, st);
        json_object_set_new(r, "UpdateExpression", json_string(upd.data ? upd.data : ""));
    }
    if (e == 0 && cond.len) json_object_set_new(r, "ConditionExpression", json_string(cond.data));
    xb_attach(&x, r);
    buf_free(&cond);
    buf_free(&upd);
    xb_free(&x);
    if (e) {
        json_decref(r);
        return err->type ? -1 : out_of_memory(err);
    }
    *out = r;
    return 0;
}

/* Runs operation h on request r (taken over) into out: 0 with out's body and capacity set,
 * or -1 with err set and out freed. */
static int run(qr_db *db, op_handler h, json_t *r, pq_result *out, qr_err *err)
{
    int rc = op_run(db, h, r, &out->body, err);
    json_decref(r);
    if (rc) {
        pq_result_free(out);
        return -1;
    }
    out->capacity = json_object_get(out->body, "ConsumedCapacity");
    return 0;
}

int pq_exec_transact_get(qr_db *db, const pq_plan *plans, size_t n, const char *capacity,
                         const json_t **items, pq_result *out, qr_err *err)
{
    memset(out, 0, sizeof *out);
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++)
        json_array_append_new(list, json_pack("{s:{s:s,s:O}}", "Get", "TableName",
                                              plans[i].stmt->table, "Key", plans[i].key));
    json_t *r = list ? json_pack("{s:o}", "TransactItems", list) : NULL;
    if (r == NULL) return out_of_memory(err);
    if (capacity) json_object_set_new(r, "ReturnConsumedCapacity", json_string(capacity));
    if (run(db, op_transact_get_items, r, out, err)) return -1;
    json_t *responses = json_object_get(out->body, "Responses");
    for (size_t i = 0; i < n; i++)
        items[i] = json_object_get(json_array_get(responses, i), "Item");
    return 0;
}

int pq_exec_transact_write(qr_db *db, const pq_plan *plans, size_t n, const char *const *on_failure,
                           json_t *client_token, const char *capacity, pq_result *out, qr_err *err)
{
    memset(out, 0, sizeof *out);
    json_t *list = json_array();
    if (list == NULL) return out_of_memory(err);
    for (size_t i = 0; i < n; i++) {
        const pq_plan *p = &plans[i];
        json_t *w;
        if (write_request(p, &w, err)) {
            json_decref(list);
            return -1;
        }
        if (on_failure[i] && p->op != PQ_OP_PUT_ITEM)
            json_object_set_new(w, "ReturnValuesOnConditionCheckFailure",
                                json_string(on_failure[i]));
        const char *what = p->op == PQ_OP_PUT_ITEM      ? "Put"
                           : p->op == PQ_OP_UPDATE_ITEM ? "Update"
                           : p->op == PQ_OP_DELETE_ITEM ? "Delete"
                                                        : "ConditionCheck";
        json_array_append_new(list, json_pack("{s:o}", what, w));
    }
    json_t *r = json_pack("{s:o}", "TransactItems", list);
    if (r == NULL) return out_of_memory(err);
    if (client_token) json_object_set(r, "ClientRequestToken", client_token);
    if (capacity) json_object_set_new(r, "ReturnConsumedCapacity", json_string(capacity));
    return run(db, op_transact_write_items, r, out, err);
}

/* ---- Query and Scan ---- */

struct pq_read {
    json_t *req;
    int query;
};

void pq_read_free(pq_read *r)
{
    if (r == NULL) return;
    json_decref(r->req);
    free(r);
}

int pq_read_prepare(const pq_plan *p, const char *capacity, pq_read **out, qr_err *err)
{
    const pq_stmt *st = p->stmt;
    const pq_schema *s = &p->schema;
    xb x;
    buf kc, fc;
    int e = 0, rc = -1;
    pq_read *r = calloc(1, sizeof *r);
    *out = NULL;
    if (r == NULL) return out_of_memory(err);
    r->query = p->op == PQ_OP_QUERY;
    xb_init(&x, err);
    buf_init(&kc, 0);
    buf_init(&fc, 0);
    json_t *req = r->req = json_pack("{s:s}", "TableName", st->table);
    if (req == NULL) {
        out_of_memory(err);
        goto done;
    }
    if (st->index) json_object_set_new(req, "IndexName", json_string(st->index));
    if (p->select_all_attributes) json_object_set_new(req, "Select", json_string("ALL_ATTRIBUTES"));
    if (r->query) {
        /* the first partition key attribute's value is :k, which pq_read_page may change */
        for (int i = 0; i < s->npk; i++) {
            if (i) e |= buf_puts(&kc, " AND ");
            e |= x_name(&x, &kc, s->rpk[i]);
            e |= buf_puts(&kc, " = ");
            if (i == 0)
                e |= buf_puts(&kc, ":k");
            else
                e |= x_value(&x, &kc, p->partition_values[i]);
        }
        if (p->sort_condition) {
            e |= buf_puts(&kc, " AND ");
            e |= x_cond(&x, &kc, p->sort_condition);
        }
        e |= x_conj(&x, &fc, &p->filter);
        json_object_set_new(req, "ScanIndexForward", json_boolean(p->scan_forward));
    } else if (p->scan_filter) {
        e |= x_cond(&x, &fc, p->scan_filter);
    }
    if (e) {
        if (err->type == NULL) out_of_memory(err);
        goto done;
    }
    if (kc.len) json_object_set_new(req, "KeyConditionExpression", json_string(kc.data));
    if (fc.len) json_object_set_new(req, "FilterExpression", json_string(fc.data));
    if (r->query)
        json_object_set_new(x.values, ":k",
                            json_deep_copy(p->partition_in ? p->partition_in->args[1]->value
                                                           : p->partition_values[0]));
    xb_attach(&x, req);
    if (p->consistent) json_object_set_new(req, "ConsistentRead", json_true());
    if (capacity) json_object_set_new(req, "ReturnConsumedCapacity", json_string(capacity));
    *out = r;
    r = NULL;
    rc = 0;
done:
    pq_read_free(r);
    buf_free(&kc);
    buf_free(&fc);
    xb_free(&x);
    return rc;
}

int pq_read_page(qr_db *db, pq_read *r, const json_t *partition_value, long long limit,
                 json_t *start_key, pq_page *out, qr_err *err)
{
    json_t *req = r->req;
    memset(out, 0, sizeof *out);
    if (partition_value)
        json_object_set_new(json_object_get(req, "ExpressionAttributeValues"), ":k",
                            json_deep_copy(partition_value));
    if (limit) json_object_set_new(req, "Limit", json_integer(limit));
    if (start_key)
        json_object_set_new(req, "ExclusiveStartKey", start_key);
    else
        json_object_del(req, "ExclusiveStartKey");
    if (op_run(db, r->query ? op_query : op_scan, req, &out->body, err)) {
        pq_page_free(out);
        return -1;
    }
    out->items = json_object_get(out->body, "Items");
    out->last_key = json_object_get(out->body, "LastEvaluatedKey");
    out->capacity = json_object_get(out->body, "ConsumedCapacity");
    out->scanned = json_integer_value(json_object_get(out->body, "ScannedCount"));
    return 0;
}
