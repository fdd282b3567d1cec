/* api.c — ExecuteStatement, BatchExecuteStatement and ExecuteTransaction: DynamoDB's
 * PartiQL API, as translations into the requests of the item operations.
 *
 * Each statement (parsed by parse.c) becomes the request of an existing handler,
 * which then applies every rule of its own: SELECT a Query (when the WHERE fixes the
 * partition key with = or IN) or a Scan, INSERT a PutItem that must not find the item,
 * UPDATE an UpdateItem that must find it, DELETE a DeleteItem; in transactions
 * TransactGetItems / TransactWriteItems (EXISTS a ConditionCheck). Expressions are written
 * with #n / :v placeholders only, never with the statement's own text, and their errors
 * reach the caller without naming them. A SELECT's projection is applied here to the
 * items read (DynamoDB names each value by its path's last component), and its paging
 * state travels in an opaque NextToken tied to the statement and its parameters. */
#include <limits.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "model/layer.h"
#include "model/value.h"
#include "ops/ops.h"
#include "partiql/api.h"
#include "partiql/statement.h"
#include "util/jsonread.h"

#define STATEMENT_MAX 8192
#define NEXT_TOKEN_MAX 32768
#define BATCH_MAX 25
#define TXN_MAX 100
#define IN_KEYS_MAX 50 /* partition key values in one IN (non-key IN takes 100) */

static const char E_DUPLICATE[] = "DuplicateItemException";
static const char MSG_DUPLICATE[] = "Duplicate primary key exists in table";
static const char MSG_KEY[] =
    "Where clause does not contain a mandatory equality on all key attributes";
static const char MSG_BAD_TOKEN[] = "Invalid NextToken";
/* A batch reads by GetItem: by the table's key, never from an index */
static const char MSG_BATCH_KEY[] =
    "Select statements within BatchExecuteStatement must specify the primary key in the where "
    "clause.";

static int out_of_memory(qr_err *err)
{
    return err_set(err, QR_E_INTERNAL, "out of memory");
}

static const char *const capacity_modes[] = {"INDEXES", "TOTAL", "NONE", NULL};
static const char *const on_failure_modes[] = {"ALL_OLD", "NONE", NULL};

/* ---- the key schema a statement works with ---- */

typedef struct source {
    char *pk, *sk;               /* the table's key attributes (sk NULL if none) */
    int npk, nsk;                /* the key attributes of what a SELECT reads: */
    char *rpk[QR_MAX_KEY_ATTRS]; /* the index's, or the table's */
    char *rsk[QR_MAX_KEY_ATTRS];
    int global;      /* the statement reads a global secondary index */
    char *index;     /* the index it reads (NULL: the table) */
    int projection;  /* the index's QR_PROJ_* (QR_PROJ_ALL for the table) */
    json_t *include; /* INCLUDE's NonKeyAttributes (owned), or NULL */
} source;

static void source_free(source *s)
{
    free(s->pk);
    free(s->sk);
    for (int i = 0; i < QR_MAX_KEY_ATTRS; i++) {
        free(s->rpk[i]);
        free(s->rsk[i]);
    }
    free(s->index);
    json_decref(s->include);
    memset(s, 0, sizeof *s);
}

/* The k-th key attribute of what a SELECT reads: its partition keys, then its sort keys. */
static const char *read_key(const source *s, int k)
{
    return k < s->npk ? s->rpk[k] : s->rsk[k - s->npk];
}

static int check_operand_types(const pq_stmt *st, qr_err *err);

/* What DynamoDB refuses in a statement once it has found the index it reads, before
 * anything else about the index, its key or the WHERE clause: any statement on a global
 * index whose key has more than one HASH or more than one RANGE attribute (multi-attribute
 * keys, which PartiQL does not read, though the table's other indexes and the table itself
 * stay readable), then a call in the projection. ix NULL: the statement reads the table. */
static int check_source(const qr_index *ix, const pq_stmt *st, qr_err *err)
{
    if (ix && (ix->npk > 1 || ix->nsk > 1))
        return err_validation(err, "PartiQL statements cannot be executed on tables with "
                                   "multi-attribute HASH keys or multi-attribute RANGE keys.");
    if (st->proj_error) return err_validation(err, "%s", st->proj_error);
    return 0;
}

static int source_load(qr_db *db, const pq_stmt *st, source *s, qr_err *err)
{
    memset(s, 0, sizeof *s);
    if (check_operand_types(st, err)) return -1;
    json_t *name = json_string(st->table);
    json_t *probe = json_pack("{s:o}", "TableName", name);
    if (probe == NULL)
        return err_validation(err,
                              "Table name should be within the length [3, 255] and only contain "
                              "'a-z', 'A-Z', '0-9', '-', '_', '.'.");
    table *t = NULL;
    int rc = param_table(db, probe, "TableName", &t, err);
    json_decref(probe);
    if (rc) return -1;
    int oom = (s->pk = strdup(t->pk.name)) == NULL;
    if (t->sk.name) oom |= (s->sk = strdup(t->sk.name)) == NULL;
    const qr_index *ix = st->index ? table_index(t, st->index) : NULL;
    if (st->index && ix == NULL) {
        /* Query and Scan name the index in this message; PartiQL does not */
        catalog_release(db, t);
        source_free(s);
        return err_validation(err, "The table does not have the specified index");
    }
    if (check_source(ix, st, err)) {
        catalog_release(db, t);
        source_free(s);
        return -1;
    }
    s->projection = QR_PROJ_ALL;
    if (ix) {
        s->global = ix->global;
        s->projection = ix->projection;
        s->include = json_deep_copy(ix->include);
        oom |= (s->index = strdup(ix->name)) == NULL || (ix->include && s->include == NULL);
        s->npk = ix->npk;
        s->nsk = ix->nsk;
        for (int i = 0; i < ix->npk; i++)
            oom |= (s->rpk[i] = strdup(ix->pk[i])) == NULL;
        for (int i = 0; i < ix->nsk; i++)
            oom |= (s->rsk[i] = strdup(ix->sk[i])) == NULL;
    } else {
        s->npk = 1;
        oom |= (s->rpk[0] = strdup(t->pk.name)) == NULL;
        if (t->sk.name) {
            s->nsk = 1;
            oom |= (s->rsk[0] = strdup(t->sk.name)) == NULL;
        }
    }
    catalog_release(db, t);
    if (oom) {
        source_free(s);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    return 0;
}

/* True if the index a statement reads holds attribute name (the table always does). */
static int projected(const source *s, const char *name)
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
static int reaches_back(const source *s, const pq_stmt *st)
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
static void unprojected(const source *s, const pq_node *n, json_t *seen, buf *b)
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
static int check_projected(const source *s, const pq_stmt *st, int query, qr_err *err)
{
    if (s->index == NULL || s->projection == QR_PROJ_ALL) return 0;
    json_t *seen = json_object();
    buf b;
    int rc = 0;
    buf_init(&b, 0);
    if (query) unprojected(s, st->where, seen, &b);
    if (b.len) {
        rc = err_validation(err,
                            "One or more parameter values were invalid: Secondary index %s does "
                            "not project one or more filter attributes: [%.400s]",
                            s->index, b.data);
    } else if (s->global) {
        for (size_t i = 0; i < st->nproj; i++)
            unprojected(s, st->proj[i], seen, &b);
        if (b.len)
            rc = err_validation(err,
                                "One or more parameter values were invalid: Global secondary index "
                                "%s does not project [%.400s]",
                                s->index, b.data);
    }
    buf_free(&b);
    json_decref(seen);
    return rc;
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
    if (json_object_set_new(x->values, key, json_deep_copy(v)))
        return err_set(x->err, QR_E_INTERNAL, "out of memory");
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
        if (strcmp(n->fn, "size") == 0 || strcmp(n->fn, "list_append") == 0) {
            rc |= buf_printf(o, "%s(", n->fn);
            for (size_t i = 0; i < n->nargs; i++) {
                if (i) rc |= buf_puts(o, ", ");
                rc |= x_operand(x, o, n->args[i]);
            }
            return rc | buf_putc(o, ')');
        }
        return err_validation(x->err, "Unsupported operator in Update Expression. Operator: %s",
                              n->fn);
    default:
        return err_validation(x->err,
                              "Unsupported operation: a condition cannot be used as a value");
    }
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
        if (n->nargs > 101)
            return err_validation(x->err,
                                  "Unsupported operation: IN takes at most 100 values, here %zu",
                                  n->nargs - 1);
        rc |= x_operand(x, o, n->args[0]);
        rc |= buf_puts(o, " IN (");
        for (size_t i = 1; i < n->nargs; i++) {
            if (i > 1) rc |= buf_puts(o, ", ");
            rc |= x_operand(x, o, n->args[i]);
        }
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
        if (strcmp(n->fn, "begins_with") == 0 || strcmp(n->fn, "contains") == 0 ||
            strcmp(n->fn, "attribute_type") == 0 || strcmp(n->fn, "attribute_exists") == 0 ||
            strcmp(n->fn, "attribute_not_exists") == 0) {
            rc |= buf_printf(o, "%s(", n->fn);
            for (size_t i = 0; i < n->nargs; i++) {
                if (i) rc |= buf_puts(o, ", ");
                rc |= x_operand(x, o, n->args[i]);
            }
            return rc | buf_putc(o, ')');
        }
        return err_validation(x->err,
                              "WHERE clause must contain an expression that resolves to a boolean");
    default:
        return err_validation(x->err,
                              "WHERE clause must contain an expression that resolves to a boolean");
    }
}

/* ---- looking at a WHERE clause ---- */

typedef struct nodes {
    pq_node **v;
    size_t n, cap;
} nodes;

/* Appends n to out. */
static int push(pq_node *n, nodes *out, qr_err *err)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 8;
        pq_node **v = realloc(out->v, cap * sizeof *v);
        if (v == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = n;
    return 0;
}

/* The conjuncts of n (the operands of its top-level ANDs). */
static int flatten(pq_node *n, nodes *out, qr_err *err)
{
    if (n->kind == PQN_AND)
        return flatten(n->args[0], out, err) || flatten(n->args[1], out, err) ? -1 : 0;
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

/* Splits where into the item's full table key (one equality per key attribute) and the
 * other conjuncts (rest, borrowed from where). missing is the message when a key
 * attribute has no equality. */
static int key_of(const source *s, pq_node *where, const char *missing, json_t **key, nodes *rest,
                  qr_err *err)
{
    nodes all = {0};
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
        err_set(err, QR_E_INTERNAL, "out of memory");
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

/* "(c1) AND (c2) ...", each conjunct in parentheses (and no more: DynamoDB refuses
 * redundant ones such as "((a = b))"). */
static int x_conj(xb *x, buf *o, const nodes *list)
{
    int rc = 0;
    for (size_t i = 0; i < list->n; i++) {
        rc |= buf_puts(o, i ? " AND (" : "(");
        rc |= x_cond(x, o, list->v[i]);
        rc |= buf_putc(o, ')');
    }
    return rc;
}

/* ---- results of the handlers ---- */

/* Runs a text handler and parses its answer. */
static int run_text(op_text_handler h, qr_db *db, json_t *req, json_t **out, qr_err *err)
{
    buf text;
    buf_init(&text, 0);
    *out = NULL;
    int rc = h(db, req, &text, err);
    if (rc == 0) {
        *out = json_read(text.data ? text.data : "{}", text.len ? text.len : 2, 0, NULL);
        if (*out == NULL)
            rc = err_set(err, QR_E_INTERNAL,
                         "The server encountered an internal error trying to fulfill the request.");
    }
    buf_free(&text);
    return rc;
}

/* Adds the capacity units of more into acc, field by field, into the Table and per-index
 * maps too (a field acc lacks is copied). */
static void units_add(json_t *acc, const json_t *more)
{
    const char *k;
    json_t *b;
    json_object_foreach((json_t *)more, k, b)
    {
        json_t *a = json_object_get(acc, k);
        if (a == NULL)
            json_object_set_new(acc, k, json_deep_copy(b));
        else if (json_is_number(a) && json_is_number(b))
            json_object_set_new(acc, k, json_real(json_number_value(a) + json_number_value(b)));
        else if (json_is_object(a) && json_is_object(b))
            units_add(a, b);
    }
}

/* Adds ConsumedCapacity object cc to the running total *acc. */
static void capacity_merge(json_t **acc, const json_t *cc)
{
    if (!json_is_object(cc)) return;
    if (*acc == NULL)
        *acc = json_deep_copy(cc);
    else
        units_add(*acc, cc);
}

/* Adds cc to a list of ConsumedCapacity objects, one per table. */
static void capacity_list_add(json_t *list, const json_t *cc)
{
    if (!json_is_object(cc)) return;
    const char *name = json_string_value(json_object_get(cc, "TableName"));
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "TableName"));
        if (n && name && strcmp(n, name) == 0) {
            capacity_merge(&e, cc);
            return;
        }
    }
    json_array_append_new(list, json_deep_copy(cc));
}

/* ---- writes ---- */

static const char MSG_TXN_KEY[] =
    "Select statements within ExecuteTransaction must specify the primary key in the where clause.";

/* Refuses statement i of a transaction, in DynamoDB's words for a statement it checks
 * before running any. */
static int txn_refuse(qr_err *err, size_t i, const char *why)
{
    return err_validation(err, "Validation failed in TransactStatements[%zu]: %s", i, why);
}

/* The request of the operation a write statement becomes: PutItem (INSERT), UpdateItem
 * (UPDATE), DeleteItem (DELETE) or a transaction's ConditionCheck (EXISTS), without the
 * request-level parameters (ReturnValues, capacity), which callers add. i is an EXISTS'
 * place in its transaction, for messages. */
static int write_request(qr_db *db, const pq_stmt *st, size_t i, json_t **out, qr_err *err)
{
    source src;
    xb x;
    buf cond, upd[4];
    nodes rest = {0};
    json_t *key = NULL, *r = NULL;
    int rc = -1, e = 0;
    *out = NULL;
    if (st->index) /* UPDATE and DELETE parse "table"."index"; INSERT does not */
        return err_validation(err, st->kind == PQ_EXISTS
                                       ? "Operations on indices are not supported in transactions"
                                       : "This operation is not supported on an index");
    if (source_load(db, st, &src, err)) return -1;
    xb_init(&x, err);
    buf_init(&cond, 0);
    for (int i = 0; i < 4; i++)
        buf_init(&upd[i], 0);
    r = json_pack("{s:s}", "TableName", st->table);
    if (r == NULL) {
        out_of_memory(err);
        goto done;
    }
    if (st->kind == PQ_INSERT) {
        json_object_set(r, "Item", st->item);
        e |= buf_puts(&cond, "attribute_not_exists(");
        e |= x_name(&x, &cond, src.pk);
        e |= buf_putc(&cond, ')');
    } else {
        if (key_of(&src, st->where, MSG_KEY, &key, &rest, err)) goto done;
        if (st->kind == PQ_EXISTS && rest.n == 0) {
            txn_refuse(err, i,
                       "EXISTS() must contain a single item read with additional condition");
            goto done;
        }
        json_object_set(r, "Key", key);
        if (st->kind == PQ_DELETE) {
            if (rest.n) {
                e |= buf_puts(&cond, "attribute_not_exists(");
                e |= x_name(&x, &cond, src.pk);
                e |= buf_puts(&cond, rest.n > 1 ? ") OR (" : ") OR ");
                e |= x_conj(&x, &cond, &rest);
                if (rest.n > 1) e |= buf_putc(&cond, ')');
            }
        } else {
            e |= buf_puts(&cond, "attribute_exists(");
            e |= x_name(&x, &cond, src.pk);
            e |= buf_putc(&cond, ')');
            if (rest.n) {
                e |= buf_puts(&cond, " AND ");
                e |= x_conj(&x, &cond, &rest);
            }
        }
    }
    if (st->kind == PQ_UPDATE) {
        static const char *const words[4] = {"SET", "REMOVE", "ADD", "DELETE"};
        for (size_t i = 0; i < st->nactions; i++) {
            const pq_action *a = &st->actions[i];
            buf *b = &upd[a->kind];
            e |= buf_puts(b, b->len ? ", " : " ");
            e |= x_path(&x, b, a->target->path);
            if (a->kind == PQA_SET) {
                e |= buf_puts(b, " = ");
                e |= x_operand(&x, b, a->value);
            } else if (a->kind != PQA_REMOVE) {
                e |= buf_putc(b, ' ');
                e |= x_operand(&x, b, a->value);
            }
        }
        buf expr;
        buf_init(&expr, 0);
        for (int k = 0; k < 4; k++)
            if (upd[k].len)
                e |= buf_printf(&expr, "%s%s%s", expr.len ? " " : "", words[k], upd[k].data);
        json_object_set_new(r, "UpdateExpression", json_string(expr.data ? expr.data : ""));
        buf_free(&expr);
    }
    if (err->type) goto done;
    if (e) {
        out_of_memory(err);
        goto done;
    }
    if (cond.len) json_object_set_new(r, "ConditionExpression", json_string(cond.data));
    xb_attach(&x, r);
    *out = r;
    r = NULL;
    rc = 0;
done:
    json_decref(r);
    json_decref(key);
    free(rest.v);
    buf_free(&cond);
    for (int i = 0; i < 4; i++)
        buf_free(&upd[i]);
    xb_free(&x);
    source_free(&src);
    return rc;
}

typedef struct opts {
    const char *capacity;   /* ReturnConsumedCapacity (NULL: absent) */
    const char *on_failure; /* ReturnValuesOnConditionCheckFailure (NULL: absent) */
    int consistent;
    long long limit;        /* 0: none */
    const char *next_token; /* NULL: none */
    XXH64_hash_t hash;      /* of the statement and its parameters, for NextToken */
} opts;

/* INSERT, UPDATE or DELETE on its own: answers {"Items": [...]} as DynamoDB does. */
static int exec_write(qr_db *db, const pq_stmt *st, const opts *o, json_t **resp, qr_err *err)
{
    json_t *r, *out = NULL;
    if (write_request(db, st, 0, &r, err)) return -1;
    if (o->capacity) json_object_set_new(r, "ReturnConsumedCapacity", json_string(o->capacity));
    if (st->kind != PQ_INSERT) {
        if (o->on_failure)
            json_object_set_new(r, "ReturnValuesOnConditionCheckFailure",
                                json_string(o->on_failure));
        json_object_set_new(r, "ReturnValues", json_string(st->returning ? st->returning : "NONE"));
    }
    int rc = st->kind == PQ_INSERT   ? op_put_item(db, r, &out, err)
             : st->kind == PQ_UPDATE ? op_update_item_as_written(db, r, &out, err)
                                     : op_delete_item(db, r, &out, err);
    json_decref(r);
    if (rc) {
        json_decref(out);
        if (st->kind == PQ_INSERT && err->type && strcmp(err->type, QR_E_CONDITION) == 0) {
            err_clear(err);
            err_set(err, E_DUPLICATE, "%s", MSG_DUPLICATE);
        }
        return -1;
    }
    *resp = json_pack("{s:[]}", "Items");
    json_t *attrs = json_object_get(out, "Attributes");
    if (attrs) json_array_append(json_object_get(*resp, "Items"), attrs);
    json_t *cc = json_object_get(out, "ConsumedCapacity");
    if (cc) json_object_set(*resp, "ConsumedCapacity", cc);
    json_decref(out);
    return 0;
}

/* ---- reads of one item (batches and transactions) ---- */

/* The Key of a SELECT that names one item of a table by its full key and nothing else
 * (GetItem and TransactGetItems take no filter, and DynamoDB refuses a read in a batch or
 * a transaction whose WHERE adds any condition to the key's equalities); missing is the
 * message when it does not, or reads an index. An index that check_source refuses is
 * refused in its words first. */
static int select_key(qr_db *db, const pq_stmt *st, const char *missing, json_t **key, qr_err *err)
{
    source src;
    nodes rest;
    *key = NULL;
    if (st->index) {
        json_t *probe = json_pack("{s:s}", "TableName", st->table);
        table *t = NULL;
        qr_err quiet;
        err_init(&quiet);
        int found = probe && param_table(db, probe, "TableName", &t, &quiet) == 0;
        json_decref(probe);
        err_clear(&quiet);
        const qr_index *ix = found ? table_index(t, st->index) : NULL;
        int rc = ix ? check_source(ix, st, err) : 0;
        if (found) catalog_release(db, t);
        return rc ? rc : err_validation(err, "%s", missing);
    }
    if (source_load(db, st, &src, err)) return -1;
    int rc = key_of(&src, st->where, missing, key, &rest, err);
    if (rc == 0 && rest.n) {
        json_decref(*key);
        *key = NULL;
        rc = err_validation(err, "%s", missing);
    }
    free(rest.v);
    source_free(&src);
    return rc;
}

/* The value at path in item (a map of attribute name -> AttributeValue), or NULL. */
static const json_t *path_value(const json_t *item, const json_t *path)
{
    const json_t *v = NULL, *c;
    size_t i;
    json_array_foreach(path, i, c)
    {
        if (i == 0)
            v = json_object_get(item, json_string_value(c));
        else if (json_is_integer(c))
            v = json_array_get(json_object_get(v, "L"), (size_t)json_integer_value(c));
        else
            v = json_object_get(json_object_get(v, "M"), json_string_value(c));
        if (v == NULL) return NULL;
    }
    return v;
}

/* The item as a SELECT returns it. Each projected path yields its value under the name
 * of the path's last component (SELECT a.b gives {"b": ...}, not {"a": {"b": ...}}), or
 * under "_N" (N: its place in the list, from 1) when the path ends with a list index, as
 * PartiQL names a select item it cannot name otherwise. Paths the item lacks are left
 * out. NULL when out of memory. */
static json_t *project(const pq_stmt *st, const json_t *item)
{
    if (st->nproj == 0) return json_deep_copy(item);
    json_t *out = json_object();
    for (size_t i = 0; out && i < st->nproj; i++) {
        const json_t *path = st->proj[i]->path;
        const json_t *v = path_value(item, path);
        if (v == NULL) continue;
        const json_t *last = json_array_get(path, json_array_size(path) - 1);
        char name[32];
        if (json_is_integer(last)) snprintf(name, sizeof name, "_%zu", i + 1);
        if (json_object_set_new(out, json_is_integer(last) ? name : json_string_value(last),
                                json_deep_copy(v))) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}

/* Conditions quarry applies itself to items another operation read: the WHERE of a
 * SELECT read by key in a batch or a transaction (GetItem and TransactGetItems take no
 * filter), and the conditions on key attributes a Query's FilterExpression may not
 * hold. Parsed once with their own names and values. */
typedef struct post {
    xb x;
    expr_ctx cx;
    expr_cond *cond; /* NULL: every item passes */
} post;

/* conds NULL (or empty): every item passes. */
static int post_prepare(post *p, const nodes *conds, qr_err *err)
{
    buf where;
    int e = 0;
    memset(p, 0, sizeof *p);
    xb_init(&p->x, err);
    buf_init(&where, 0);
    if (conds) e |= x_conj(&p->x, &where, conds);
    const char *k;
    json_t *v;
    json_object_foreach(p->x.values, k, v) e |= value_validate(v, 1, k, err);
    expr_ctx_init(&p->cx, p->x.names, p->x.values, err);
    if (e == 0 && where.len) e |= expr_parse_condition(&p->cx, "WHERE", where.data, &p->cond);
    buf_free(&where);
    if (e && err->type == NULL) out_of_memory(err);
    return e ? -1 : 0;
}

/* *out: item as the statement returns it (projected), or NULL if it fails the
 * conditions. */
static int post_apply(const post *p, const pq_stmt *st, const json_t *item, json_t **out,
                      qr_err *err)
{
    *out = NULL;
    int ok = p->cond ? expr_cond_eval(p->cond, item, err) : 1;
    if (ok < 0) return -1;
    if (ok && (*out = project(st, item)) == NULL) return out_of_memory(err);
    return 0;
}

static void post_free(post *p)
{
    expr_cond_free(p->cond);
    expr_ctx_free(&p->cx);
    xb_free(&p->x);
}

/* Applies the rest of a SELECT read by key, its WHERE and its projection, to the item
 * read (NULL: none). *out is the projected item, or NULL when there is none or it does
 * not satisfy the WHERE. */
static int finish_read(const pq_stmt *st, const json_t *item, json_t **out, qr_err *err)
{
    post p;
    pq_node *where = st->where;
    nodes conds = {&where, 1, 1};
    *out = NULL;
    if (item == NULL) return 0;
    int rc = post_prepare(&p, where ? &conds : NULL, err);
    if (rc == 0) rc = post_apply(&p, st, item, out, err);
    post_free(&p);
    return rc;
}

/* ---- SELECT ---- */

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

static int token_encode(XXH64_hash_t hash, size_t i, const json_t *lek, char **out)
{
    char h[17];
    snprintf(h, sizeof h, "%016llx", (unsigned long long)hash);
    json_t *t = json_pack("{s:s,s:I,s:O?}", "s", h, "i", (json_int_t)i, "k", lek);
    char *text = t ? json_dumps(t, JSON_COMPACT) : NULL;
    json_decref(t);
    *out = NULL;
    if (text == NULL) return -1;
    size_t n = strlen(text);
    *out = malloc(4 * ((n + 2) / 3) + 1);
    if (*out) EVP_EncodeBlock((unsigned char *)*out, (const unsigned char *)text, (int)n);
    free(text);
    return *out ? 0 : -1;
}

static int token_decode(const char *tok, XXH64_hash_t hash, size_t nkeys, size_t *i, json_t **lek,
                        qr_err *err)
{
    size_t n = strlen(tok);
    *lek = NULL;
    if (n == 0 || n % 4 || n > NEXT_TOKEN_MAX) return err_validation(err, "%s", MSG_BAD_TOKEN);
    unsigned char *raw = malloc(n);
    if (raw == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    int len = EVP_DecodeBlock(raw, (const unsigned char *)tok, (int)n);
    if (len >= 0) {
        if (tok[n - 1] == '=') len--;
        if (tok[n - 2] == '=') len--;
    }
    json_t *t =
        len > 0 ? json_read((const char *)raw, (size_t)len, JSON_REJECT_DUPLICATES, NULL) : NULL;
    free(raw);
    const char *h = json_string_value(json_object_get(t, "s"));
    json_t *k = json_object_get(t, "k");
    json_int_t at = json_integer_value(json_object_get(t, "i"));
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)hash);
    int rc = 0;
    if (h == NULL || !json_is_integer(json_object_get(t, "i")) || at < 0 || (size_t)at >= nkeys ||
        (k && !json_is_object(k)))
        rc = err_validation(err, "%s", MSG_BAD_TOKEN);
    else if (strcmp(h, want) != 0)
        rc = err_validation(err, "NextToken does not match request");
    else {
        *i = (size_t)at;
        *lek = json_incref(k);
    }
    json_decref(t);
    return rc;
}

/* Runs the planned request req (a Query when query, else a Scan) from NextToken's place
 * to the end or to Limit, once per IN value when in (its value bound to :k), passing each
 * item read through pp; answers the items, NextToken, LastEvaluatedKey and the summed
 * ConsumedCapacity. */
static int select_pages(qr_db *db, const pq_stmt *st, const opts *o, json_t *req, int query,
                        const pq_node *in, const post *pp, json_t **resp, qr_err *err)
{
    json_t *items = json_array(), *cc = NULL, *lek = NULL, *start = NULL;
    char *token = NULL;
    int rc = -1;
    size_t nkeys = in ? in->nargs - 1 : 1, i = 0;
    if (items == NULL) return out_of_memory(err);
    if (o->next_token && token_decode(o->next_token, o->hash, nkeys, &i, &start, err)) goto done;
    long long left = o->limit;
    for (; i < nkeys; i++) {
        json_t *out = NULL;
        int repeated = 0; /* IN ['a', 'a'] reads the partition once */
        for (size_t j = 0; in && j < i && !repeated; j++)
            repeated = value_equal(in->args[j + 1]->value, in->args[i + 1]->value);
        if (repeated) continue;
        if (in)
            json_object_set_new(json_object_get(req, "ExpressionAttributeValues"), ":k",
                                json_deep_copy(in->args[i + 1]->value));
        if (left) json_object_set_new(req, "Limit", json_integer(left));
        if (start)
            json_object_set_new(req, "ExclusiveStartKey", start);
        else
            json_object_del(req, "ExclusiveStartKey");
        start = NULL;
        if (run_text(query ? op_query : op_scan, db, req, &out, err)) goto done;
        size_t k;
        json_t *item;
        json_array_foreach(json_object_get(out, "Items"), k, item)
        {
            json_t *kept;
            if (post_apply(pp, st, item, &kept, err)) {
                json_decref(out);
                goto done;
            }
            if (kept) json_array_append_new(items, kept);
        }
        capacity_merge(&cc, json_object_get(out, "ConsumedCapacity"));
        json_t *last = json_object_get(out, "LastEvaluatedKey");
        if (left) left -= json_integer_value(json_object_get(out, "ScannedCount"));
        if (last) {
            lek = json_incref(last);
            json_decref(out);
            if (token_encode(o->hash, i, lek, &token)) {
                out_of_memory(err);
                goto done;
            }
            break;
        }
        json_decref(out);
        if (o->limit && left <= 0 && i + 1 < nkeys) {
            if (token_encode(o->hash, i + 1, NULL, &token)) {
                out_of_memory(err);
                goto done;
            }
            break;
        }
    }
    *resp = json_pack("{s:O}", "Items", items);
    if (*resp == NULL) {
        out_of_memory(err);
        goto done;
    }
    if (token) json_object_set_new(*resp, "NextToken", json_string(token));
    if (lek) json_object_set(*resp, "LastEvaluatedKey", lek);
    if (cc) json_object_set(*resp, "ConsumedCapacity", cc);
    rc = 0;
done:
    free(token);
    json_decref(start);
    json_decref(lek);
    json_decref(cc);
    json_decref(items);
    return rc;
}

/* The branches of n (the operands of its top-level ORs). */
static int branches(pq_node *n, nodes *out, qr_err *err)
{
    if (n->kind == PQN_OR)
        return branches(n->args[0], out, err) || branches(n->args[1], out, err) ? -1 : 0;
    return push(n, out, err);
}

/* What one OR branch reads of a table with one sort key: whether its conjuncts fix every
 * partition key attribute (vals, borrowed), and whether it takes a condition on the sort
 * key as a key condition (ranged) or names the sort key nowhere (whole). */
typedef struct branch_keys {
    int fixed, ranged, whole;
    const json_t *vals[QR_MAX_KEY_ATTRS];
} branch_keys;

static int branch_read(const source *s, pq_node *b, branch_keys *k, qr_err *err)
{
    nodes c = {0};
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
static int check_overlap(const source *s, const pq_stmt *st, qr_err *err)
{
    if (st->where == NULL || st->where->kind != PQN_OR || s->nsk != 1) return 0;
    nodes or = {0};
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

static int exec_select(qr_db *db, const pq_stmt *st, const opts *o, json_t **resp, qr_err *err)
{
    source src;
    nodes all = {0}, rest = {0}, later = {0};
    char *used = NULL;
    xb x;
    post pp;
    int prepared = 0;
    buf kc, fc;
    const json_t *pkv[QR_MAX_KEY_ATTRS] = {0};
    const pq_node *in = NULL;
    json_t *req = NULL;
    int rc = -1, e = 0, skc = -1;
    if (source_load(db, st, &src, err)) return -1;
    xb_init(&x, err);
    buf_init(&kc, 0);
    buf_init(&fc, 0);
    if (o->consistent && src.global) {
        /* Query's message for this differs; PartiQL has its own */
        err_validation(err,
                       "Strongly consistent read is not supported on Global Secondary Indexes");
        goto done;
    }
    if (check_overlap(&src, st, err)) goto done;
    if (st->where && flatten(st->where, &all, err)) goto done;
    used = calloc(all.n + 1, 1);
    if (used == NULL) {
        out_of_memory(err);
        goto done;
    }
    /* A Query when every partition key attribute has an equality (or the one has IN). */
    int query = st->where != NULL;
    for (int i = 0; query && i < src.npk; i++) {
        int f = -1;
        for (size_t j = 0; j < all.n && f < 0; j++)
            if (!used[j] && eq_value(all.v[j], src.rpk[i])) f = (int)j;
        if (f < 0 && src.npk == 1)
            for (size_t j = 0; j < all.n && f < 0; j++) {
                const pq_node *c = all.v[j];
                if (c->kind != PQN_IN || !is_attr(c->args[0], src.rpk[0])) continue;
                size_t k = 1;
                while (k < c->nargs && c->args[k]->kind == PQN_VALUE)
                    k++;
                if (k == c->nargs) {
                    f = (int)j;
                    in = c;
                }
            }
        if (f < 0)
            query = 0;
        else {
            used[f] = 1;
            if (all.v[f] != in) pkv[i] = eq_value(all.v[f], src.rpk[i]);
        }
    }
    if (in && in->nargs - 1 > IN_KEYS_MAX) {
        err_validation(err,
                       "Unsupported operation: IN on a partition key takes at most %d values, here "
                       "%zu",
                       IN_KEYS_MAX, in->nargs - 1);
        goto done;
    }
    if (check_projected(&src, st, query, err)) goto done;
    if (query && src.nsk == 1)
        for (size_t j = 0; j < all.n && skc < 0; j++)
            if (!used[j] && sort_cond(all.v[j], src.rsk[0])) {
                skc = (int)j;
                used[j] = 1;
            }
    /* The other conditions go to the FilterExpression, except those on the key attributes
     * it may not name: quarry applies them to the items the Query returns. */
    for (size_t j = 0; query && j < all.n; j++) {
        if (used[j]) continue;
        int on_key = 0;
        for (int k = 0; k < src.npk + src.nsk; k++)
            on_key |= mentions(all.v[j], read_key(&src, k));
        if (flatten(all.v[j], on_key ? &later : &rest, err)) goto done;
    }
    prepared = 1;
    if (post_prepare(&pp, &later, err)) goto done;
    if (st->order_by) {
        int key = 0;
        for (int k = 0; k < src.npk + src.nsk; k++)
            key |= strcmp(st->order_by, read_key(&src, k)) == 0;
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
    req = json_pack("{s:s}", "TableName", st->table);
    if (req == NULL) {
        out_of_memory(err);
        goto done;
    }
    if (st->index) json_object_set_new(req, "IndexName", json_string(st->index));
    /* A local index reads what it does not hold from the table, each item read there
     * charged to the table; the projection, applied to the items read, may name such
     * attributes (check_projected refused them for a global one). One that names only
     * what the index holds reads the index alone. */
    if (st->index && !src.global && src.projection != QR_PROJ_ALL && reaches_back(&src, st))
        json_object_set_new(req, "Select", json_string("ALL_ATTRIBUTES"));
    if (query) {
        for (int i = 0; i < src.npk; i++) {
            if (i) e |= buf_puts(&kc, " AND ");
            e |= x_name(&x, &kc, src.rpk[i]);
            e |= buf_puts(&kc, " = ");
            if (i == 0)
                e |= buf_puts(&kc, ":k");
            else
                e |= x_value(&x, &kc, pkv[i]);
        }
        if (skc >= 0) {
            const pq_node *c = all.v[skc];
            e |= buf_puts(&kc, " AND ");
            e |= x_cond(&x, &kc, c);
        }
        e |= x_conj(&x, &fc, &rest);
        json_object_set_new(req, "ScanIndexForward", json_boolean(!st->order_desc));
    } else if (st->where) {
        e |= x_cond(&x, &fc, st->where);
    }
    if (err->type) goto done;
    if (e) {
        out_of_memory(err);
        goto done;
    }
    if (kc.len) json_object_set_new(req, "KeyConditionExpression", json_string(kc.data));
    if (fc.len) json_object_set_new(req, "FilterExpression", json_string(fc.data));
    if (query)
        json_object_set_new(x.values, ":k", json_deep_copy(in ? in->args[1]->value : pkv[0]));
    xb_attach(&x, req);
    if (o->consistent) json_object_set_new(req, "ConsistentRead", json_true());
    if (o->capacity) json_object_set_new(req, "ReturnConsumedCapacity", json_string(o->capacity));

    rc = select_pages(db, st, o, req, query, in, &pp, resp, err);
done:
    json_decref(req);
    if (prepared) post_free(&pp);
    free(all.v);
    free(rest.v);
    free(later.v);
    free(used);
    buf_free(&kc);
    buf_free(&fc);
    xb_free(&x);
    source_free(&src);
    return rc;
}

/* The requests a statement becomes are quarry's, not the caller's: DynamoDB's PartiQL
 * reports what is wrong in them without naming an expression the caller never wrote
 * ("Incorrect operand type ...", not "Invalid FilterExpression: Incorrect ..."). */
static void unname_expression(qr_err *err)
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

/* DynamoDB judges the operand types of a statement's conditions before anything else
 * about its table: `val < ?` with a BOOL parameter is refused even on a table that does
 * not exist (recorded by the public conformance suite, tier 3 validation ordering). The
 * WHERE clause is rendered as one FilterExpression, whose parse checks the types. */
static int check_operand_types(const pq_stmt *st, qr_err *err)
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
    if (x_cond(&x, &text, st->where) == 0 && e.type == NULL &&
        (filter = json_stringn(text.data ? text.data : "", text.len)) &&
        exprs_operand_type_error(filter, json_object_size(x.names) ? x.names : NULL,
                                 json_object_size(x.values) ? x.values : NULL, &e))
        rc = err_set(err, e.type, "%s", e.msg);
    json_decref(filter);
    err_clear(&e);
    buf_free(&text);
    xb_free(&x);
    return rc;
}

/* ---- request parameters ---- */

/* The length of UTF-8 text as DynamoDB measures a string's length constraint: in UTF-16
 * code units (a character beyond the BMP, 4 bytes in UTF-8, counts 2). */
static size_t text_length(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xc0) != 0x80) n += c >= 0xf0 ? 2 : 1;
    }
    return n;
}

/* Statement and Parameters of one statement (field: where they sit, for messages), the
 * parameters validated into a new array *params (NULL if none). */
static int statement_params(json_t *obj, const char *field, const char **text, size_t *len,
                            json_t **params, qr_err *err)
{
    char where[96];
    json_t *s = json_object_get(obj, "Statement"), *p;
    *params = NULL;
    snprintf(where, sizeof where, "%sstatement", field);
    if (s == NULL || json_is_null(s)) return param_null(where, err);
    if (param_string(obj, "Statement", text, err)) return -1;
    *len = json_string_length(s);
    size_t chars = text_length(*text, *len);
    if (chars == 0 || chars > STATEMENT_MAX) {
        char shown[72];
        snprintf(shown, sizeof shown, "%.64s", *text);
        err_utf8_repair(shown);
        return err_validation(
            err,
            "1 validation error detected: Value '%s%s' at '%s' failed to satisfy constraint: "
            "Member must have length %s",
            shown, chars > 64 ? "..." : "", where,
            chars ? "less than or equal to 8192" : "greater than or equal to 1");
    }
    if (param_array(obj, "Parameters", &p, err)) return -1;
    if (p == NULL) return 0;
    if (json_array_size(p) == 0)
        return err_validation(
            err,
            "1 validation error detected: Value '[]' at '%sparameters' failed to satisfy "
            "constraint: Member must have length greater than or equal to 1",
            field);
    *params = json_deep_copy(p);
    return *params ? 0 : err_set(err, QR_E_INTERNAL, "out of memory");
}

/* True if s is a number as DynamoDB's PartiQL reads a parameter (as Java's BigDecimal
 * reads a string): digits with an optional point and exponent, the exponent and the
 * scale it leaves within 32 bits. */
static int convertible(const char *s)
{
    long long frac = 0, exp = 0;
    int digits = 0;
    if (*s == '+' || *s == '-') s++;
    for (; *s >= '0' && *s <= '9'; s++)
        digits = 1;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, frac++)
            digits = 1;
    if (!digits) return 0;
    if (*s == 'e' || *s == 'E') {
        int neg = s[1] == '-';
        s += 1 + (s[1] == '+' || s[1] == '-');
        if (*s < '0' || *s > '9') return 0;
        for (; *s >= '0' && *s <= '9'; s++)
            if ((exp = exp * 10 + (*s - '0')) > INT32_MAX + 1LL) return 0;
        if (neg) exp = -exp;
        if (exp > INT32_MAX || frac - exp > INT32_MAX || frac - exp < INT32_MIN) return 0;
    }
    return *s == '\0';
}

static int number_param(const char *n, qr_err *err)
{
    if (n == NULL || convertible(n)) return 0; /* (not a string: value_validate says so) */
    if (*n == '\0')
        return err_validation(err, "The parameter cannot be converted to a numeric value");
    return err_validation(err, "The parameter cannot be converted to a numeric value: %.100s", n);
}

/* The first problem of a parameter in document order, nesting too deep or a number
 * that cannot be read, as DynamoDB reports them for PartiQL parameters. */
static int param_scan(const json_t *v, int depth, qr_err *err)
{
    if (depth > QR_MAX_DEPTH)
        return err_validation(err, "Nesting Levels have exceeded supported limits: Attributes in "
                                   "the item have nested levels beyond supported limit");
    const json_t *p = value_payload(v), *c;
    const char *k;
    size_t i;
    switch (value_type(v)) {
    case QR_T_N:
        return number_param(json_string_value(p), err);
    case QR_T_NS:
        json_array_foreach((json_t *)p, i,
                           c) if (number_param(json_string_value(c), err)) return -1;
        return 0;
    case QR_T_L:
        json_array_foreach((json_t *)p, i, c) if (param_scan(c, depth + 1, err)) return -1;
        return 0;
    case QR_T_M:
        json_object_foreach((json_t *)p, k, c) if (param_scan(c, depth + 1, err)) return -1;
        return 0;
    default:
        return 0;
    }
}

/* Validates (and normalises) a statement's parameters. DynamoDB reads them in its older
 * layer (model/layer.h), as Java's BigDecimal reads a number; literals in the statement
 * are read in the current one. */
static int params_check(json_t *params, qr_err *err)
{
    size_t i;
    json_t *v;
    int rc = 0;
    value_layer outer = value_layer_enter(VALUE_LAYER_OLDER);
    json_array_foreach(params, i, v)
    {
        char what[48];
        snprintf(what, sizeof what, "parameters[%zu]", i);
        if (value_type(v) == QR_T_NONE) {
            rc = err_validation(err, "Supplied AttributeValue is empty, must contain exactly "
                                     "one of the supported datatypes");
            break;
        }
        if (param_scan(v, 1, err) || value_validate(v, 1, what, err)) {
            rc = -1;
            break;
        }
    }
    value_layer_enter(outer);
    return rc;
}

static XXH64_hash_t statement_hash(const char *text, size_t len, const json_t *params)
{
    XXH64_hash_t h = XXH64(text, len, 0x5157);
    char *p = params ? json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (p) h = XXH64(p, strlen(p), h);
    free(p);
    return h;
}

/* ---- ExecuteStatement ---- */

int op_execute_statement(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    const char *text;
    size_t len;
    json_t *params = NULL;
    pq_stmt *st = NULL;
    opts o = {0};
    int present, rc = -1;
    if (statement_params(req, "", &text, &len, &params, err)) return -1;
    if (params_check(params, err)) goto done;
    if (param_bool(req, "ConsistentRead", 0, &o.consistent, err)) goto done;
    if (param_string(req, "NextToken", &o.next_token, err)) goto done;
    if (o.next_token && (*o.next_token == '\0' || strlen(o.next_token) > NEXT_TOKEN_MAX)) {
        err_validation(err,
                       "1 validation error detected: Value at 'nextToken' failed to satisfy "
                       "constraint: Member must "
                       "have length %s",
                       *o.next_token ? "less than or equal to 32768"
                                     : "greater than or equal to 1");
        goto done;
    }
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, NULL, &o.capacity, err))
        goto done;
    if (param_enum(req, "ReturnValuesOnConditionCheckFailure", on_failure_modes, NULL,
                   &o.on_failure, err))
        goto done;
    if (param_int(req, "Limit", 1, INT_MAX, &o.limit, &present, err)) goto done;
    if (partiql_parse(text, len, params, &st, err)) goto done;
    o.hash = statement_hash(text, len, params);
    if (st->kind == PQ_SELECT)
        rc = exec_select(db, st, &o, resp, err);
    else if (st->kind == PQ_EXISTS)
        err_validation(err, "EXISTS can only be used in ExecuteTransaction write requests.");
    else
        rc = exec_write(db, st, &o, resp, err);
done:
    if (rc) unname_expression(err);
    partiql_free(st);
    json_decref(params);
    return rc;
}

/* ---- BatchExecuteStatement ---- */

/* The Code of a BatchStatementError for an error type. */
static const char *batch_code(const char *type, char *out, size_t cap)
{
    if (strcmp(type, QR_E_VALIDATION) == 0 || strcmp(type, QR_E_SERIALIZATION) == 0)
        return "ValidationError";
    if (strcmp(type, QR_E_INTERNAL) == 0) return "InternalServerError";
    size_t n = strlen(type);
    if (n > 9 && strcmp(type + n - 9, "Exception") == 0) n -= 9;
    snprintf(out, cap, "%.*s", (int)n, type);
    return out;
}

/* Reads the one item a batch SELECT names. */
static int batch_read(qr_db *db, const pq_stmt *st, int consistent, const char *capacity,
                      json_t **item, json_t *ccs, qr_err *err)
{
    json_t *key, *out = NULL;
    *item = NULL;
    if (select_key(db, st, MSG_BATCH_KEY, &key, err)) return -1;
    json_t *r = json_pack("{s:s,s:o,s:b}", "TableName", st->table, "Key", key, "ConsistentRead",
                          consistent);
    if (r == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    if (capacity) json_object_set_new(r, "ReturnConsumedCapacity", json_string(capacity));
    int rc = run_text(op_get_item, db, r, &out, err);
    json_decref(r);
    if (rc == 0) {
        capacity_list_add(ccs, json_object_get(out, "ConsumedCapacity"));
        rc = finish_read(st, json_object_get(out, "Item"), item, err);
    }
    json_decref(out);
    return rc;
}

int op_batch_execute_statement(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    json_t *list, *ccs = NULL, *responses = NULL;
    pq_stmt *sts[BATCH_MAX] = {0};
    qr_err errs[BATCH_MAX];
    const char *capacity;
    size_t n = 0;
    int rc = -1, reads = 0, writes = 0;
    for (int i = 0; i < BATCH_MAX; i++)
        err_init(&errs[i]);
    if (param_array(req, "Statements", &list, err)) return -1;
    if (list == NULL) return param_null("statements", err);
    n = json_array_size(list);
    if (n == 0 || n > BATCH_MAX)
        return err_validation(
            err,
            "1 validation error detected: Value at 'statements' failed to satisfy constraint: "
            "Member must have length %s",
            n ? "less than or equal to 25" : "greater than or equal to 1");
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, NULL, &capacity, err)) return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i), *params = NULL;
        char field[48];
        const char *text, *on_failure;
        size_t len;
        int consistent;
        if (!json_is_object(e)) {
            err_set(err, QR_E_SERIALIZATION, "Start of structure or map found where not expected");
            goto done;
        }
        snprintf(field, sizeof field, "statements.%zu.member.", i + 1);
        if (statement_params(e, field, &text, &len, &params, err) ||
            param_bool(e, "ConsistentRead", 0, &consistent, err) ||
            param_enum(e, "ReturnValuesOnConditionCheckFailure", on_failure_modes, NULL,
                       &on_failure, err)) {
            json_decref(params);
            goto done;
        }
        /* a parameter's value, like the statement, is the member's own error */
        if (params_check(params, &errs[i]) == 0 &&
            partiql_parse(text, len, params, &sts[i], &errs[i]) == 0) {
            if (sts[i]->kind == PQ_SELECT)
                reads++;
            else if (sts[i]->kind != PQ_EXISTS) /* refused on its own below */
                writes++;
        }
        json_decref(params);
    }
    if (reads && writes) {
        err_validation(
            err,
            "Unsupported operation: a batch must contain either only reads (SELECT) or only writes "
            "(INSERT, UPDATE, DELETE)");
        goto done;
    }
    responses = json_array();
    ccs = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i), *r = json_object(), *item = NULL;
        json_array_append_new(responses, r);
        if (sts[i] && sts[i]->kind == PQ_SELECT) {
            batch_read(db, sts[i], json_is_true(json_object_get(e, "ConsistentRead")), capacity,
                       &item, ccs, &errs[i]);
        } else if (sts[i] && sts[i]->kind == PQ_EXISTS) {
            err_validation(&errs[i],
                           "EXISTS can only be used in ExecuteTransaction write requests.");
        } else if (sts[i]) {
            /* RETURNING is honoured (its item is the response's Item), while
             * ReturnValuesOnConditionCheckFailure is not: a failed member has no Item */
            opts o = {.capacity = capacity};
            json_t *out = NULL;
            if (exec_write(db, sts[i], &o, &out, &errs[i]) == 0) {
                capacity_list_add(ccs, json_object_get(out, "ConsumedCapacity"));
                item = json_incref(json_array_get(json_object_get(out, "Items"), 0));
            }
            json_decref(out);
        }
        /* A member refused before it reached its table does not name it */
        if (sts[i] && (errs[i].type == NULL || strcmp(errs[i].type, QR_E_VALIDATION) != 0))
            json_object_set_new(r, "TableName", json_string(sts[i]->table));
        if (item) json_object_set_new(r, "Item", item);
        if (errs[i].type) {
            char code[64];
            unname_expression(&errs[i]);
            json_object_set_new(r, "Error",
                                json_pack("{s:s,s:s}", "Code",
                                          batch_code(errs[i].type, code, sizeof code), "Message",
                                          errs[i].msg));
        }
    }
    *resp = json_pack("{s:O}", "Responses", responses);
    if (*resp && capacity && strcmp(capacity, "NONE") != 0 && json_array_size(ccs))
        json_object_set(*resp, "ConsumedCapacity", ccs);
    rc = *resp ? 0 : err_set(err, QR_E_INTERNAL, "out of memory");
done:
    for (size_t i = 0; i < BATCH_MAX; i++) {
        partiql_free(sts[i]);
        err_clear(&errs[i]);
    }
    json_decref(responses);
    json_decref(ccs);
    return rc;
}

/* ---- ExecuteTransaction ---- */

/* INSERTs whose item existed fail their Put's condition: DynamoDB names that DuplicateItem. */
static void rename_duplicates(pq_stmt **sts, size_t n, qr_err *err)
{
    json_t *reasons = json_object_get(err->item, "CancellationReasons");
    if (reasons == NULL) return;
    buf msg;
    buf_init(&msg, 0);
    buf_puts(&msg,
             "Transaction cancelled, please refer cancellation reasons for specific reasons [");
    for (size_t i = 0; i < json_array_size(reasons); i++) {
        json_t *r = json_array_get(reasons, i);
        const char *code = json_string_value(json_object_get(r, "Code"));
        if (i < n && sts[i]->kind == PQ_INSERT && code &&
            strcmp(code, "ConditionalCheckFailed") == 0) {
            json_object_set_new(r, "Code", json_string("DuplicateItem"));
            json_object_set_new(r, "Message", json_string(MSG_DUPLICATE));
            json_object_del(r, "Item");
        }
        buf_printf(&msg, "%s%s", i ? ", " : "", json_string_value(json_object_get(r, "Code")));
    }
    buf_puts(&msg, "]");
    if (msg.data) {
        snprintf(err->msg, sizeof err->msg, "%s", msg.data);
        json_object_set_new(err->item, "Message", json_string(msg.data));
    }
    buf_free(&msg);
}

static int txn_reads(qr_db *db, pq_stmt **sts, size_t n, const char *capacity, json_t **resp,
                     qr_err *err)
{
    json_t *items = json_array(), *out = NULL, *responses = NULL;
    int rc = -1;
    for (size_t i = 0; i < n; i++) {
        json_t *key;
        if (sts[i]->index) {
            txn_refuse(err, i, "Reads on indices are not supported within transactions.");
            goto done;
        }
        char missing[256];
        snprintf(missing, sizeof missing, "Validation failed in TransactStatements[%zu]: %s", i,
                 MSG_TXN_KEY);
        if (select_key(db, sts[i], missing, &key, err)) goto done;
        json_array_append_new(
            items, json_pack("{s:{s:s,s:o}}", "Get", "TableName", sts[i]->table, "Key", key));
    }
    json_t *r = json_pack("{s:O}", "TransactItems", items);
    if (r && capacity) json_object_set_new(r, "ReturnConsumedCapacity", json_string(capacity));
    rc = r ? op_transact_get_items(db, r, &out, err) : err_set(err, QR_E_INTERNAL, "out of memory");
    json_decref(r);
    if (rc) goto done;
    rc = -1;
    responses = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *item, *e = json_object();
        if (finish_read(
                sts[i],
                json_object_get(json_array_get(json_object_get(out, "Responses"), i), "Item"),
                &item, err)) {
            json_decref(e);
            goto done;
        }
        if (item) json_object_set_new(e, "Item", item);
        json_array_append_new(responses, e);
    }
    *resp = json_pack("{s:O}", "Responses", responses);
    json_t *cc = json_object_get(out, "ConsumedCapacity");
    if (*resp && cc) json_object_set(*resp, "ConsumedCapacity", cc);
    rc = *resp ? 0 : err_set(err, QR_E_INTERNAL, "out of memory");
done:
    json_decref(responses);
    json_decref(items);
    json_decref(out);
    return rc;
}

static int txn_writes(qr_db *db, pq_stmt **sts, json_t *list, size_t n, json_t *req,
                      const char *capacity, json_t **resp, qr_err *err)
{
    json_t *items = json_array(), *out = NULL;
    int rc = -1;
    for (size_t i = 0; i < n; i++) {
        json_t *w;
        if (sts[i]->returning) {
            txn_refuse(err, i, "RETURNING clause is not supported in ExecuteTransaction.");
            goto done;
        }
        if (write_request(db, sts[i], i, &w, err)) goto done;
        const char *on_failure = json_string_value(
            json_object_get(json_array_get(list, i), "ReturnValuesOnConditionCheckFailure"));
        if (on_failure && sts[i]->kind != PQ_INSERT)
            json_object_set_new(w, "ReturnValuesOnConditionCheckFailure", json_string(on_failure));
        const char *what = sts[i]->kind == PQ_INSERT   ? "Put"
                           : sts[i]->kind == PQ_UPDATE ? "Update"
                           : sts[i]->kind == PQ_DELETE ? "Delete"
                                                       : "ConditionCheck";
        json_array_append_new(items, json_pack("{s:o}", what, w));
    }
    json_t *r = json_pack("{s:O}", "TransactItems", items);
    if (r == NULL) {
        err_set(err, QR_E_INTERNAL, "out of memory");
        goto done;
    }
    json_t *token = json_object_get(req, "ClientRequestToken");
    if (token) json_object_set(r, "ClientRequestToken", token);
    if (capacity) json_object_set_new(r, "ReturnConsumedCapacity", json_string(capacity));
    rc = op_transact_write_items(db, r, &out, err);
    json_decref(r);
    if (rc) {
        if (err->type && strcmp(err->type, QR_E_TXN_CANCELED) == 0) rename_duplicates(sts, n, err);
        goto done;
    }
    *resp = json_pack("{s:[]}", "Responses"); /* DynamoDB answers writes with an empty list */
    if (*resp == NULL) {
        rc = out_of_memory(err);
        goto done;
    }
    json_t *cc = json_object_get(out, "ConsumedCapacity");
    if (cc) json_object_set(*resp, "ConsumedCapacity", cc);
done:
    json_decref(items);
    json_decref(out);
    return rc;
}

int op_execute_transaction(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    json_t *list;
    pq_stmt *sts[TXN_MAX] = {0};
    const char *capacity;
    size_t n, reads = 0;
    int rc = -1;
    if (param_array(req, "TransactStatements", &list, err)) return -1;
    if (list == NULL) return param_null("transactStatements", err);
    n = json_array_size(list);
    if (n == 0 || n > TXN_MAX)
        return err_validation(
            err,
            "1 validation error detected: Value at 'transactStatements' failed to satisfy "
            "constraint: Member must have length %s",
            n ? "less than or equal to 100" : "greater than or equal to 1");
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, NULL, &capacity, err)) return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i), *params = NULL;
        char field[64];
        const char *text, *on_failure;
        size_t len;
        if (!json_is_object(e)) {
            err_set(err, QR_E_SERIALIZATION, "Start of structure or map found where not expected");
            goto done;
        }
        snprintf(field, sizeof field, "transactStatements.%zu.member.", i + 1);
        int bad = statement_params(e, field, &text, &len, &params, err) ||
                  param_enum(e, "ReturnValuesOnConditionCheckFailure", on_failure_modes, NULL,
                             &on_failure, err) ||
                  params_check(params, err);
        if (!bad && partiql_parse(text, len, params, &sts[i], err)) {
            bad = 1;
            /* a statement PartiQL cannot parse is named, as DynamoDB names it */
            if (strncmp(err->msg, PARTIQL_MALFORMED, sizeof PARTIQL_MALFORMED - 1) == 0) {
                char msg[sizeof err->msg];
                snprintf(msg, sizeof msg, "%s", err->msg);
                err_clear(err);
                txn_refuse(err, i, msg);
            }
        }
        json_decref(params);
        if (bad) goto done;
        if (sts[i]->kind == PQ_SELECT) reads++;
    }
    if (reads && reads < n) {
        err_validation(
            err,
            "Unsupported operation: a transaction must contain either only reads (SELECT) or only "
            "writes (INSERT, UPDATE, DELETE, EXISTS)");
        goto done;
    }
    rc = reads ? txn_reads(db, sts, n, capacity, resp, err)
               : txn_writes(db, sts, list, n, req, capacity, resp, err);
    if (rc) unname_expression(err);
done:
    for (size_t i = 0; i < n && i < TXN_MAX; i++)
        partiql_free(sts[i]);
    return rc;
}
