/* items.c — PutItem, GetItem, UpdateItem, DeleteItem: one item, atomically.
 *
 * A write takes the item's stripe lock, reads the current item, evaluates the
 * condition against it, computes the new item and writes it in one durable batch
 * before releasing the lock, so conditional writes and updates to one item never
 * interleave. Reads take no lock: RocksDB gives each read a consistent view. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/index.h"
#include "model/value.h"
#include "ops/ops.h"
#include "util/jsonread.h"

static const char *const capacity_modes[] = {"INDEXES", "TOTAL", "NONE", NULL};
/* In the order DynamoDB lists them when it refuses another value. */
static const char *const return_values[] = {"ALL_NEW", "UPDATED_OLD", "ALL_OLD",
                                            "NONE",    "UPDATED_NEW", NULL};
static const char *const metrics_modes[] = {"SIZE", "NONE", NULL};
static const char *const on_failure_modes[] = {"ALL_OLD", "NONE", NULL};

/* The parameters every single-item write shares. */
typedef struct write_params {
    const char *return_values;
    const char *capacity;
    const char *on_failure;
    const char *metrics;
} write_params;

/* ReturnValues refused among other refused members, in DynamoDB's generic words. */
#define RV_AMONG_OTHERS                                                                            \
    "Failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, UPDATED_OLD, "    \
    "ALL_NEW, UPDATE_NEW, NONE]"

/* PutItem and DeleteItem judge ReturnConsumedCapacity, ReturnValues and
 * ReturnItemCollectionMetrics together and report every one that fails in one message,
 * in that order; a bad ReturnValues among others is worded generically, alone it is
 * named (recorded in eu-west-2, us-east-1, ap-southeast-2 and eu-central-1, September
 * 2026). An error of another kind (a member of the wrong JSON type) is reported alone. */
static int judge_write_enums(json_t *req, write_params *p, qr_err *err)
{
    static const char *const keys[] = {"ReturnConsumedCapacity", "ReturnValues",
                                       "ReturnItemCollectionMetrics"};
    const char *const *sets[] = {capacity_modes, return_values, metrics_modes};
    const char **outs[] = {&p->capacity, &p->return_values, &p->metrics};
    qr_err e[3];
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        err_init(&e[i]);
        if (param_enum(req, keys[i], sets[i], "NONE", outs[i], &e[i]) == 0) continue;
        if (strcmp(e[i].type, QR_E_VALIDATION) != 0) {
            err_set(err, e[i].type, "%s", e[i].msg);
            for (int j = 0; j <= i; j++)
                err_clear(&e[j]);
            return -1;
        }
        bad++;
    }
    if (bad == 1) {
        for (int i = 0; i < 3; i++)
            if (e[i].type) err_set(err, e[i].type, "%s", e[i].msg);
    } else if (bad > 1) {
        member_errors m;
        member_errors_init(&m);
        for (int i = 0; i < 3; i++)
            if (e[i].type) member_errors_add(&m, i == 1 ? RV_AMONG_OTHERS : e[i].msg);
        member_errors_finish(&m, err);
    }
    for (int i = 0; i < 3; i++)
        err_clear(&e[i]);
    return bad ? -1 : 0;
}

/* True if the request carries a value nested past QR_DEEP_READ_LEVELS: DynamoDB's
 * single-item writes then read it in an older way (measured in us-east-1 and eu-west-2,
 * October 2026), which checks ConditionalOperator and ReturnValues in older words before
 * anything else. */
static int read_the_older_way(json_t *req)
{
    static const char *const holders[] = {"Item", "Key", "ExpressionAttributeValues"};
    int most = 0, levels;
    for (size_t i = 0; i < sizeof holders / sizeof holders[0]; i++)
        if ((levels = value_nesting_most(json_object_get(req, holders[i]))) > most) most = levels;
    const char *k;
    json_t *cond;
    json_object_foreach(json_object_get(req, "Expected"), k, cond)
    {
        json_t *one = json_object_get(cond, "Value");
        levels = one ? value_nesting(one)
                     : value_nesting_most(json_object_get(cond, "AttributeValueList"));
        if (levels > most) most = levels;
    }
    return most > QR_DEEP_READ_LEVELS;
}

static int read_write_params(json_t *req, int allow_updated, write_params *p, qr_err *err)
{
    static const char *const operators[] = {"OR", "AND", NULL};
    const char *op;
    /* (the walk over every value happens only where its answer can matter) */
    if (json_object_get(req, "ConditionalOperator") && read_the_older_way(req) &&
        param_enum(req, "ConditionalOperator", operators, NULL, &op, err))
        return -1;
    if (allow_updated
            ? param_enum(req, "ReturnValues", return_values, "NONE", &p->return_values, err) ||
                  param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &p->capacity,
                             err) ||
                  param_enum(req, "ReturnItemCollectionMetrics", metrics_modes, "NONE", &p->metrics,
                             err)
            : judge_write_enums(req, p, err))
        return -1;
    if (param_enum(req, "ReturnValuesOnConditionCheckFailure", on_failure_modes, "NONE",
                   &p->on_failure, err))
        return -1;
    if (!allow_updated && strcmp(p->return_values, "NONE") && strcmp(p->return_values, "ALL_OLD"))
        return err_validation(err, "%sReturnValues can only be ALL_OLD or NONE",
                              read_the_older_way(req) ? "" : "1 validation error detected: ");
    return 0;
}

/* Puts a ValidationException's message inside DynamoDB's "1 validation error detected: "
 * envelope, unless it is there already. Returns -1, for the caller's error path. */
static int envelope(qr_err *err)
{
    static const char prefix[] = "1 validation error detected: ";
    size_t n = sizeof prefix - 1, len = strlen(err->msg);
    if (err->type && strcmp(err->type, QR_E_VALIDATION) == 0 && strncmp(err->msg, prefix, n) != 0) {
        if (len + n >= sizeof err->msg) len = sizeof err->msg - n - 1;
        memmove(err->msg + n, err->msg, len);
        memcpy(err->msg, prefix, n);
        err->msg[n + len] = '\0';
    }
    return -1;
}

/* Parses a single-item write's expressions. DynamoDB reports what is wrong with them
 * (names, values, syntax, the legacy parameters) inside its "1 validation error
 * detected: " envelope for PutItem, UpdateItem and DeleteItem. */
static int parse_write_exprs(req_exprs *x, json_t *req, int allowed, qr_err *err)
{
    if (exprs_parse(x, req, allowed, err) == 0 && exprs_finish(x) == 0) {
        /* A value nested deeper than an item may be is refused, even where only the
         * condition reads it (31 of 33 regions in October 2026, for UpdateItem). */
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(req, "ExpressionAttributeValues"), k, v)
        {
            int levels = value_nesting(v);
            /* far past the limit, the older reading names the value's key, bare */
            if (levels > QR_DEEP_READ_LEVELS + 1)
                return err_validation(
                    err,
                    "ExpressionAttributeValues contains invalid value: " QR_MSG_TOO_DEEP
                    " for key %s",
                    k);
            if (levels > QR_MAX_DEPTH)
                return err_validation(err, "1 validation error detected: " QR_MSG_TOO_DEEP);
        }
        return 0;
    }
    return envelope(err);
}

int item_update_leaves_none(const table *t, const json_t *old, const expr_update *u,
                            const json_t *item)
{
    if (old || u == NULL || item == NULL) return 0;
    json_t *names = expr_update_top_names(u);
    size_t acts = json_array_size(names);
    json_decref(names);
    return acts > 0 && json_object_size(item) == (table_sk(t)->name ? 2u : 1u);
}

/* Adds ConsumedCapacity for a write, with what each index consumed. */
static void report_write_capacity(json_t *resp, const char *mode, const table *t, double units,
                                  const json_t *old_item, const json_t *new_item)
{
    if (strcmp(mode, "NONE") == 0) return;
    double idx[QR_MAX_GSI + QR_MAX_LSI] = {0};
    capacity_index_writes(t, old_item, new_item, idx);
    json_object_set_new(resp, "ConsumedCapacity", capacity_object_indexed(mode, t, units, idx, 1));
}

/* Adds ItemCollectionMetrics when asked for and the table has local indexes. */
static void report_metrics(qr_db *db, const table *t, const write_params *p, json_t *resp,
                           const json_t *item)
{
    if (item && strcmp(p->metrics, "SIZE") == 0 && table_lsi_count(t) > 0)
        json_object_set_new(resp, "ItemCollectionMetrics", collection_metrics(db, t, item));
}

static double write_units(const json_t *old_item, const json_t *new_item)
{
    size_t a = old_item ? item_size(old_item) : 0, b = new_item ? item_size(new_item) : 0;
    return capacity_write_units(a > b ? a : b);
}

/* What a PutItem writes, however its request was read: the item parsed, or its key
 * attributes and stored form as the decoder read them from the request's text (with no
 * ReturnConsumedCapacity or ReturnItemCollectionMetrics, which need it parsed). */
typedef struct put_request {
    table *t;
    const json_t *item;      /* NULL when given as stored only */
    const json_t *key_attrs; /* the item, or a map of its key attributes */
    const buf *stored;       /* the item in the stored form, or NULL */
    size_t size;             /* item_size of item */
    const expr_cond *condition;
    const write_params *p;
} put_request;

/* PutItem's one write: lock the item, read what it replaces when the condition or the
 * answer needs it, check the condition, put, commit, answer. */
static int put_write(qr_db *db, const put_request *r, json_t **answer, qr_err *err)
{
    item_txn *tx = NULL;
    const json_t *old = NULL;
    size_t old_size;
    buf key;
    buf_init(&key, 0);
    int rc = -1;
    int want_old = r->condition || strcmp(r->p->return_values, "ALL_OLD") == 0;
    if (key_item(&key, r->t, r->key_attrs, err) ||
        txn_begin(db, TXN_ITEM, 1, &r->t, &key, &tx, err))
        goto done;
    if ((want_old && txn_read(tx, 0, &old, err) < 0) || txn_read_size(tx, 0, &old_size, err) < 0 ||
        txn_check(tx, 0, r->condition, r->p->on_failure, err) ||
        (r->stored ? txn_put_stored(tx, 0, r->stored, err)
                   : txn_put(tx, 0, r->item, r->size, err)) ||
        txn_commit(tx, err))
        goto done;
    *answer = json_object();
    if (old && strcmp(r->p->return_values, "ALL_OLD") == 0)
        json_object_set(*answer, "Attributes", (json_t *)old);
    if (strcmp(r->p->capacity, "NONE")) {
        if (old == NULL && table_has_indexes(r->t)) txn_read(tx, 0, &old, err);
        report_write_capacity(*answer, r->p->capacity, r->t,
                              capacity_write_units(old_size > r->size ? old_size : r->size), old,
                              r->item);
    }
    report_metrics(db, r->t, r->p, *answer, r->item);
    rc = 0;
done:
    txn_end(tx);
    buf_free(&key);
    return rc;
}

/* A plain PutItem (see plain.c), written from its text: returns 1 once answered,
 * -1 if its write failed, 0 if the request is not plain (the whole way then reads it and
 * answers it, its errors in DynamoDB's order included). */
static int put_plain(qr_db *db, op_call *c, qr_err *err)
{
    static const write_params defaults = {"NONE", "NONE", "NONE", "NONE"};
    plain_request d;
    if (!plain_decode(db, PLAIN_PUT, c->text, c->len, &d)) return 0;
    snprintf(c->tables, c->tables_cap, "%s", d.table);
    put_request r = {.t = d.t, .key_attrs = d.key, .stored = &d.stored, .p = &defaults};
    int rc = put_write(db, &r, &c->answer, err) ? -1 : 1;
    plain_free(&d);
    catalog_release_after_writes(d.t);
    return rc;
}

int op_put_item(qr_db *db, op_call *c, qr_err *err)
{
    if (c->req == NULL) {
        int plain = put_plain(db, c, err);
        if (plain) return plain > 0 ? 0 : -1;
        if (op_call_parse(c, err)) return -1;
    }
    json_t *req = c->req;
    table *t = NULL;
    req_exprs x = {0};
    write_params p;
    json_t *item;
    int rc = -1;
    /* An empty table name stops PutItem before anything else is judged, and is named
     * without an echo of the value (31 of 33 regions in October 2026; the other two
     * still add the ReturnValues error beside it). */
    json_t *name = json_object_get(req, "TableName");
    if (json_is_string(name) && json_string_length(name) == 0) {
        err_validation(err, "1 validation error detected: Value at 'TableName' failed to satisfy "
                            "constraint: Member "
                            "must have length greater than or equal to 1");
        goto done;
    }
    /* DynamoDB judges the parameters' own constraints before it looks for the table. */
    if (read_write_params(req, 0, &p, err)) goto done;
    if (param_table(db, req, "TableName", &t, err)) goto done;
    if (param_object(req, "Item", &item, err)) goto done;
    if (item == NULL) {
        param_null("item", err);
        goto done;
    }
    size_t size;
    if (key_check_item(t, item, err) || item_validate_size(item, &size, err)) {
        /* PutItem reports a NULL that is not true (every region) and a name too long
         * (measured in September 2026) inside the envelope. */
        static const char null_false[] =
            "One or more parameter values were invalid: Null attribute value types";
        if (strncmp(err->msg, null_false, sizeof null_false - 1) == 0 ||
            strcmp(err->msg, QR_MSG_NAME_TOO_LARGE) == 0 || value_error_is_malformed(err) ||
            (strcmp(err->msg, QR_MSG_TOO_DEEP) == 0 &&
             value_nesting_most(item) <= QR_DEEP_READ_LEVELS))
            envelope(err);
        goto done;
    }
    if (parse_write_exprs(&x, req, EXPRS_CONDITION, err)) goto done;
    put_request r = {
        .t = t, .item = item, .key_attrs = item, .size = size, .condition = x.condition, .p = &p};
    rc = put_write(db, &r, &c->answer, err);
done:
    exprs_free(&x);
    catalog_release_after_writes(t);
    return rc;
}

/* GetItem's one read, however its request was read: the item of t at Key keyv, answered
 * into out with its projection (NULL: all of it) and capacity (mode capacity). */
static int get_read(qr_db *db, table *t, const json_t *keyv, int consistent,
                    const expr_proj *projection, const char *capacity, buf *out, qr_err *err)
{
    stored_item it = {0};
    buf key;
    buf_init(&key, 0);
    int found =
        key_item(&key, t, keyv, err) ? -1 : item_get(db, t, NULL, &key, consistent, &it, err);
    buf_free(&key);
    if (found < 0) return -1;
    buf_reserve(out, it.raw_len + 128); /* the item and what surrounds it, in one allocation */
    buf_putc(out, '{');
    if (found) {
        buf_puts(out, "\"Item\":");
        if (projection) {
            json_t *item = json_read(it.json, it.len, JSON_ALLOW_NUL, NULL),
                   *p = expr_project(projection, item);
            json_append(out, p);
            json_decref(p);
            json_decref(item);
        } else {
            buf_append(out, it.json, it.len);
        }
    }
    json_t *cc =
        capacity_object(capacity, table_name(t), capacity_read_units(it.size, consistent), 0);
    if (cc) {
        buf_puts(out, found ? ",\"ConsumedCapacity\":" : "\"ConsumedCapacity\":");
        json_append(out, cc);
        json_decref(cc);
    }
    buf_putc(out, '}');
    stored_item_free(&it);
    return 0;
}

int op_get_item(qr_db *db, op_call *c, qr_err *err)
{
    if (c->req == NULL) {
        plain_request d;
        if (plain_decode(db, PLAIN_GET, c->text, c->len, &d)) {
            snprintf(c->tables, c->tables_cap, "%s", d.table);
            int rc = get_read(db, d.t, d.key, d.consistent, NULL, "NONE", &c->out, err);
            plain_free(&d);
            catalog_release(db, d.t);
            return rc;
        }
        if (op_call_parse(c, err)) return -1;
    }
    json_t *req = c->req;
    table *t = NULL;
    req_exprs x = {0};
    json_t *keyv;
    const char *capacity;
    int consistent, rc = -1;
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &capacity, err))
        goto done;
    if (param_table(db, req, "TableName", &t, err)) goto done;
    if (param_object(req, "Key", &keyv, err)) goto done;
    if (keyv == NULL) {
        param_null("key", err);
        goto done;
    }
    if (param_bool(req, "ConsistentRead", 0, &consistent, err)) goto done;
    if (json_object_get(req, "IndexName")) {
        err_validation(err, "GetItem does not accept IndexName: an item is read by its table key; "
                            "use Query with IndexName to read an index");
        goto done;
    }
    if (key_check_key(t, keyv, err)) goto done;
    if (exprs_parse(&x, req, EXPRS_PROJECTION, err) || exprs_finish(&x)) goto done;
    if (exprs_check_key_paths(&x, t, err)) goto done;
    rc = get_read(db, t, keyv, consistent, x.projection, capacity, &c->out, err);
done:
    exprs_free(&x);
    catalog_release(db, t);
    return rc;
}

/* The shared course of a write addressed by Key (UpdateItem, DeleteItem). */
typedef struct keyed_write {
    table *t;
    req_exprs x;
    write_params p;
    json_t *keyv; /* the request's Key (borrowed) */
    buf key;
    item_txn *tx;      /* from keyed_lock_read to keyed_end */
    const json_t *old; /* the current item, or NULL (the transaction's) */
} keyed_write;

/* A keyed write without its Key: DynamoDB judges the request's members together and
 * reports every one that breaks its constraints in one message, in the order
 * returnConsumedCapacity, tableName, returnValues, conditionalOperator, key. Recorded
 * alike in eu-west-2 and us-east-1 (October 2026). Returns 0 when Key is present. */
static int missing_key_errors(qr_db *db, json_t *req, qr_err *err)
{
    json_t *keyv = json_object_get(req, "Key");
    if (keyv && !json_is_null(keyv)) return 0;
    member_errors m;
    member_errors_init(&m);
    const char *s;
    qr_err e;
    err_init(&e);
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &s, &e))
        member_errors_add(&m, e.msg);
    err_clear(&e);
    table *t = NULL;
    if (param_table(db, req, "TableName", &t, &e) && strcmp(e.type, QR_E_VALIDATION) == 0)
        member_errors_add(&m, e.msg);
    if (t) catalog_release(db, t);
    err_clear(&e);
    if (param_enum(req, "ReturnValues", return_values, "NONE", &s, &e))
        member_errors_add(&m, e.msg);
    err_clear(&e);
    static const char *const operators[] = {"OR", "AND", NULL};
    if (param_enum(req, "ConditionalOperator", operators, NULL, &s, &e))
        member_errors_add(&m, e.msg);
    err_clear(&e);
    member_errors_add(&m,
                      "Value null at 'key' failed to satisfy constraint: Member must not be null");
    return member_errors_finish(&m, err);
}

/* UpdateItem with both ReturnValues and ReturnConsumedCapacity outside their enums:
 * most regions (31 of 33 in October 2026) stop at the first and answer one generic
 * enum error, in these words and with this list, where older regions named both. */
static int update_enums_both_bad(json_t *req, qr_err *err)
{
    const char *s;
    qr_err a, b;
    err_init(&a);
    err_init(&b);
    int bad_rv = param_enum(req, "ReturnValues", return_values, "NONE", &s, &a) != 0;
    int bad_rcc = param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &s, &b) != 0;
    err_clear(&a);
    err_clear(&b);
    if (!bad_rv || !bad_rcc) return 0;
    return err_validation(err, "1 validation error detected: " RV_AMONG_OTHERS);
}

/* Checks the request: table, Key, the common parameters and the expressions. */
static int keyed_begin(qr_db *db, json_t *req, int allow_updated, int expressions, keyed_write *w,
                       qr_err *err)
{
    memset(w, 0, sizeof *w);
    buf_init(&w->key, 0);
    if (missing_key_errors(db, req, err)) return -1;
    if (allow_updated && update_enums_both_bad(req, err)) return -1;
    if (read_write_params(req, allow_updated, &w->p, err))
        return -1; /* before the table, as in PutItem */
    if (param_table(db, req, "TableName", &w->t, err)) return -1;
    if (param_object(req, "Key", &w->keyv, err)) return -1;
    if (w->keyv == NULL) return param_null("key", err);
    if (key_check_key(w->t, w->keyv, err))
        return value_error_is_malformed(err) ? envelope(err) : -1;
    if (parse_write_exprs(&w->x, req, expressions, err)) return -1;
    return key_item(&w->key, w->t, w->keyv, err);
}

/* Locks the item, reads it and checks the request's condition against it. */
static int keyed_lock_read(qr_db *db, keyed_write *w, qr_err *err)
{
    if (txn_begin(db, TXN_ITEM, 1, &w->t, &w->key, &w->tx, err)) return -1;
    if (txn_read(w->tx, 0, &w->old, err) < 0) return -1;
    return txn_check(w->tx, 0, w->x.condition, w->p.on_failure, err);
}

static void keyed_end(keyed_write *w)
{
    txn_end(w->tx);
    exprs_free(&w->x);
    buf_free(&w->key);
    catalog_release_after_writes(w->t);
}

int op_delete_item(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    keyed_write w;
    int rc = -1;
    if (keyed_begin(db, req, 0, EXPRS_CONDITION, &w, err) || keyed_lock_read(db, &w, err))
        goto done;
    if (txn_delete(w.tx, 0, err) || txn_commit(w.tx, err)) goto done;
    c->answer = json_object();
    if (w.old && strcmp(w.p.return_values, "ALL_OLD") == 0)
        json_object_set(c->answer, "Attributes", (json_t *)w.old);
    report_write_capacity(c->answer, w.p.capacity, w.t, write_units(w.old, NULL), w.old, NULL);
    report_metrics(db, w.t, &w.p, c->answer, w.old);
    rc = 0;
done:
    keyed_end(&w);
    return rc;
}

int item_update_check_keys(const table *t, const expr_update *u, qr_err *err)
{
    if (u == NULL) return 0;
    json_t *names = expr_update_top_names(u);
    size_t i;
    json_t *n;
    int rc = 0;
    json_array_foreach(names, i, n)
    {
        const char *s = json_string_value(n);
        if (strcmp(s, table_pk(t)->name) == 0 ||
            (table_sk(t)->name && strcmp(s, table_sk(t)->name) == 0)) {
            rc = err_validation(
                err,
                "One or more parameter values were invalid: Cannot update attribute %s. "
                "This attribute is part of the key",
                s);
            break;
        }
    }
    json_decref(names);
    return rc;
}

/* measure_request: also judge the size of what the UpdateExpression writes (UpdateItem's
 * own rule), not only the finished item's. */
static int update_item(qr_db *db, json_t *req, int measure_request, json_t **resp, qr_err *err)
{
    keyed_write w;
    json_t *item = NULL;
    int rc = -1;
    if (keyed_begin(db, req, 1, EXPRS_CONDITION | EXPRS_UPDATE, &w, err)) goto done;
    if (item_update_check_keys(w.t, w.x.update, err)) goto done;
    /* Most regions (31 of 33 in October 2026) also measure an UpdateExpression by what
     * the request writes, leaving out the key and what it leaves alone, and judge that
     * before the condition. A transaction or PartiQL measures only the finished item. */
    if (measure_request && w.x.update && json_object_get(req, "UpdateExpression") &&
        expr_update_request_size(w.x.update) > QR_MAX_ITEM_SIZE) {
        err_validation(err, "Item size to update has exceeded the maximum allowed size");
        goto done;
    }
    if (keyed_lock_read(db, &w, err)) goto done;
    item = json_deep_copy(w.old ? w.old : w.keyv);
    if (w.x.update && (w.old ? expr_update_apply(w.x.update, item, err)
                             : expr_update_apply_missing(w.x.update, item, err)))
        goto done;
    if (item_size(item) > QR_MAX_ITEM_SIZE) {
        err_validation(err, "Item size to update has exceeded the maximum allowed size");
        goto done;
    }
    /* A value the update wrote may bring a map key over the name limit (SET a = :m). */
    if (item_check_names(item, err)) {
        envelope(err);
        goto done;
    }
    if (item_update_leaves_none(w.t, w.old, w.x.update, item)) {
        json_decref(item);
        item = NULL;
    }
    /* An update that leaves an index key empty is told so in the update's own words. */
    if (item && index_check_item(w.t, item, err)) {
        static const char empty[] =
            "One or more parameter values are not valid. A value specified for a secondary "
            "index key is not supported. The AttributeValue for a key attribute cannot "
            "contain an empty ";
        if (strncmp(err->msg, empty, sizeof empty - 1) == 0) {
            const char *kind =
                strncmp(err->msg + sizeof empty - 1, "binary", 6) == 0 ? "binary" : "string";
            err_clear(err);
            err_validation(
                err,
                "One or more parameter values are not valid. The update expression attempted to "
                "update a secondary index key to a value that is not supported. The AttributeValue "
                "for a key attribute cannot contain an empty %s value.",
                kind);
        }
        goto done;
    }
    if ((item ? txn_put(w.tx, 0, item, item_size(item), err) : txn_delete(w.tx, 0, err)) ||
        txn_commit(w.tx, err))
        goto done;
    *resp = json_object();
    const char *rv = w.p.return_values;
    json_t *attrs = NULL;
    if (strcmp(rv, "ALL_OLD") == 0 && w.old)
        attrs = json_incref((json_t *)w.old);
    else if (strcmp(rv, "ALL_NEW") == 0 && item)
        attrs = json_incref(item);
    else if (strncmp(rv, "UPDATED_", 8) == 0 && w.x.update &&
             (rv[8] == 'O' ? w.old != NULL : item != NULL)) {
        /* Exactly the paths the update touched, nested parts included, as DynamoDB returns. */
        expr_proj *touched = expr_update_projection(w.x.update);
        attrs = expr_project(touched, rv[8] == 'O' ? w.old : item);
        expr_proj_free(touched);
    }
    if (attrs && json_object_size(attrs) > 0) json_object_set(*resp, "Attributes", attrs);
    json_decref(attrs);
    report_write_capacity(*resp, w.p.capacity, w.t, write_units(w.old, item), w.old, item);
    report_metrics(db, w.t, &w.p, *resp, item);
    rc = 0;
done:
    json_decref(item);
    keyed_end(&w);
    return rc;
}

int op_update_item(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    return update_item(db, req, 1, &c->answer, err);
}

int op_update_item_as_written(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    return update_item(db, req, 0, &c->answer, err);
}
