/* items.c — PutItem, GetItem, UpdateItem, DeleteItem: one item, atomically.
 *
 * Handlers read a request into an item_request that items_* run (as PartiQL's do). A
 * write locks the item's stripe, reads it, evaluates the condition, computes the new item
 * and writes it in one durable batch before unlocking, so conditional writes to one item
 * never interleave. Reads take no lock: RocksDB gives each read a consistent view. */
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

/* True if the request carries a value nested past QR_DEEP_READ_LEVELS: DynamoDB's
 * single-item writes then read it in an older way (measured in us-east-1 and eu-west-2,
 * October 2026), which words the ReturnValues rule without its envelope. */
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

/* Reads the Return* members (their enums, and ConditionalOperator's, are the shape
 * checker's, in the order and words DynamoDB gives each operation) and checks what a
 * write may return. */
static int read_write_params(json_t *req, int allow_updated, write_params *p, qr_err *err)
{
    if (param_enum(req, "ReturnValues", return_values, "NONE", &p->return_values, err) ||
        param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &p->capacity, err) ||
        param_enum(req, "ReturnItemCollectionMetrics", metrics_modes, "NONE", &p->metrics, err) ||
        param_enum(req, "ReturnValuesOnConditionCheckFailure", on_failure_modes, "NONE",
                   &p->on_failure, err))
        return -1;
    /* Far too deep a request is read the older way, which words this without the envelope. */
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
                return err_validation(err, QR_MSG_INVALID_VALUE "" QR_MSG_TOO_DEEP " for key %s",
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
    double idx[QR_MAX_INDEXES] = {0};
    capacity_index_writes(t, old_item, new_item, idx);
    json_object_set_new(resp, "ConsumedCapacity", capacity_object_indexed(mode, t, units, idx, 1));
}

/* Adds ItemCollectionMetrics when asked for (metrics "SIZE") and the table has local
 * indexes. */
static void report_metrics(qr_db *db, const table *t, const char *metrics, json_t *resp,
                           const json_t *item)
{
    if (item && strcmp(metrics, "SIZE") == 0 && table_lsi_count(t) > 0)
        json_object_set_new(resp, "ItemCollectionMetrics", collection_metrics(db, t, item));
}

static double write_units(const json_t *old_item, const json_t *new_item)
{
    size_t a = old_item ? item_size(old_item) : 0, b = new_item ? item_size(new_item) : 0;
    return meter_write_units(a > b ? a : b);
}

/* PutItem's one write: lock the item, read what it replaces when the condition or the
 * answer needs it, check the condition, put, commit, answer. */
int items_put(qr_db *db, const item_request *r, json_t **answer, qr_err *err)
{
    item_txn *tx = NULL;
    const json_t *old = NULL;
    size_t old_size;
    buf key;
    buf_init(&key, 0);
    int rc = -1;
    int want_old = r->condition || strcmp(r->return_values, "ALL_OLD") == 0;
    uint64_t watched = watch_begin_write(db);
    if (key_item(&key, r->t, r->key, err) || txn_begin(db, TXN_ITEM, 1, &r->t, &key, &tx, err))
        goto done;
    if ((want_old && txn_read(tx, 0, &old, err) < 0) || txn_read_size(tx, 0, &old_size, err) < 0 ||
        txn_check(tx, 0, r->condition, r->on_failure, err) ||
        (r->stored ? txn_put_stored(tx, 0, r->stored, err)
                   : txn_put(tx, 0, r->item, r->size, err)) ||
        txn_commit(tx, err))
        goto done;
    *answer = json_object();
    if (old && strcmp(r->return_values, "ALL_OLD") == 0)
        json_object_set(*answer, "Attributes", (json_t *)old);
    if (strcmp(r->capacity, "NONE")) {
        if (old == NULL && table_has_indexes(r->t)) txn_read(tx, 0, &old, err);
        report_write_capacity(*answer, r->capacity, r->t,
                              meter_write_units(old_size > r->size ? old_size : r->size), old,
                              r->item);
    }
    report_metrics(db, r->t, r->metrics, *answer, r->item);
    if (watched) {
        size_t size = r->size;
        const char *json;
        size_t json_len;
        if (r->stored) item_stored(r->stored->data, r->stored->len, &json, &json_len, &size);
        watch_write(db, r->t, WATCH_PUT, r->item, r->attrs, r->nattrs,
                    meter_write_units(old_size > size ? old_size : size), watched);
    }
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
    plain_request d;
    if (!plain_decode(db, PLAIN_PUT, c->text, c->len, &d)) return 0;
    snprintf(c->tables, c->tables_cap, "%s", d.table);
    item_request r = {.t = d.t,
                      .key = d.key,
                      .stored = &d.stored,
                      .return_values = "NONE",
                      .on_failure = "NONE",
                      .capacity = "NONE",
                      .metrics = "NONE"};
    watch_attr attrs[PLAIN_ATTRS];
    if (engine_model_state(db)) {
        for (size_t i = 0; i < d.nattrs; i++)
            attrs[i] = (watch_attr){d.attrs[i].name, d.attrs[i].text, d.attrs[i].name_len,
                                    d.attrs[i].text_len, d.attrs[i].number};
        r.attrs = attrs;
        r.nattrs = d.nattrs;
    }
    int rc = items_put(db, &r, &c->answer, err) ? -1 : 1;
    plain_free(&d);
    catalog_release_after_writes(d.t);
    return rc;
}

int item_check_put(const table *t, json_t *item, size_t *size, qr_err *err)
{
    if (key_check_item(t, item, err) == 0 && item_validate_size(item, size, err) == 0) return 0;
    /* PutItem reports a NULL that is not true (every region) and a name too long
     * (measured in September 2026) inside the envelope. */
    static const char null_false[] = QR_MSG_INVALID_PARAMETER "Null attribute value types";
    if (strncmp(err->msg, null_false, sizeof null_false - 1) == 0 ||
        strcmp(err->msg, QR_MSG_NAME_TOO_LARGE) == 0 || value_error_is_malformed(err) ||
        (strcmp(err->msg, QR_MSG_TOO_DEEP) == 0 && value_nesting_most(item) <= QR_DEEP_READ_LEVELS))
        envelope(err);
    return -1;
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
    /* The members' constraints are the shape checker's (an empty table name, judged before
     * all else, and ReturnValues among others have their own words there); what is left
     * before the table is looked for is the operation's rules. */
    if (read_write_params(req, 0, &p, err)) goto done;
    if (param_table(db, req, "TableName", &t, err)) goto done;
    if (param_object(req, "Item", &item, err)) goto done;
    size_t size;
    if (item_check_put(t, item, &size, err)) goto done;
    if (parse_write_exprs(&x, req, EXPRS_CONDITION, err)) goto done;
    item_request r = {.t = t,
                      .key = item,
                      .item = item,
                      .size = size,
                      .condition = x.condition,
                      .return_values = p.return_values,
                      .on_failure = p.on_failure,
                      .capacity = p.capacity,
                      .metrics = p.metrics};
    rc = items_put(db, &r, &c->answer, err);
done:
    exprs_free(&x);
    catalog_release_after_writes(t);
    return rc;
}

/* GetItem's one read, however its request was read. */
int items_get(qr_db *db, const item_request *r, buf *out, qr_err *err)
{
    table *t = r->t;
    const expr_proj *projection = r->projection;
    stored_item it = {0};
    watch_req w;
    if (watch_get(db, t, r->key, r->consistent, &w, err)) return -1;
    buf key;
    buf_init(&key, 0);
    int found =
        key_item(&key, t, r->key, err) ? -1 : item_get(db, t, NULL, &key, r->consistent, &it, err);
    buf_free(&key);
    if (found < 0) return -1;
    watch_read_done(&w, found, found, meter_read_units(it.size, r->consistent));
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
        capacity_object(r->capacity, table_name(t), meter_read_units(it.size, r->consistent), 0);
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
            item_request r = {
                .t = d.t, .key = d.key, .consistent = d.consistent, .capacity = "NONE"};
            int rc = items_get(db, &r, &c->out, err);
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
    item_request r = {.t = t,
                      .key = keyv,
                      .projection = x.projection,
                      .consistent = consistent,
                      .capacity = capacity};
    rc = items_get(db, &r, &c->out, err);
done:
    exprs_free(&x);
    catalog_release(db, t);
    return rc;
}

/* A request of a write addressed by Key (UpdateItem, DeleteItem), as read. */
typedef struct keyed_write {
    table *t;
    req_exprs x;
    write_params p;
    json_t *keyv; /* the request's Key (borrowed) */
} keyed_write;

int item_check_key(const table *t, json_t *key, qr_err *err)
{
    if (key_check_key(t, key, err)) return value_error_is_malformed(err) ? envelope(err) : -1;
    return 0;
}

/* Reads and checks the request: table, Key, the common parameters and the expressions. */
static int keyed_begin(qr_db *db, json_t *req, int allow_updated, int expressions, keyed_write *w,
                       qr_err *err)
{
    memset(w, 0, sizeof *w);
    if (read_write_params(req, allow_updated, &w->p, err))
        return -1; /* before the table, as in PutItem */
    if (param_table(db, req, "TableName", &w->t, err)) return -1;
    if (param_object(req, "Key", &w->keyv, err)) return -1;
    if (w->keyv == NULL) return param_null("key", err);
    if (item_check_key(w->t, w->keyv, err)) return -1;
    return parse_write_exprs(&w->x, req, expressions, err);
}

/* The request w read, to run. */
static item_request keyed_request(const keyed_write *w)
{
    return (item_request){.t = w->t,
                          .key = w->keyv,
                          .condition = w->x.condition,
                          .update = w->x.update,
                          .return_values = w->p.return_values,
                          .on_failure = w->p.on_failure,
                          .capacity = w->p.capacity,
                          .metrics = w->p.metrics};
}

static void keyed_end(keyed_write *w)
{
    exprs_free(&w->x);
    catalog_release_after_writes(w->t);
}

/* Encodes r's key, locks the item, reads it and checks r's condition against it. */
static int keyed_lock_read(qr_db *db, const item_request *r, buf *key, item_txn **tx,
                           const json_t **old, qr_err *err)
{
    if (key_item(key, r->t, r->key, err)) return -1;
    if (txn_begin(db, TXN_ITEM, 1, &r->t, key, tx, err)) return -1;
    if (txn_read(*tx, 0, old, err) < 0) return -1;
    return txn_check(*tx, 0, r->condition, r->on_failure, err);
}

int items_delete(qr_db *db, const item_request *r, json_t **answer, qr_err *err)
{
    item_txn *tx = NULL;
    const json_t *old = NULL;
    buf key;
    buf_init(&key, 0);
    int rc = -1;
    uint64_t watched = watch_begin_write(db);
    if (keyed_lock_read(db, r, &key, &tx, &old, err)) goto done;
    if (txn_delete(tx, 0, err) || txn_commit(tx, err)) goto done;
    if (watched)
        watch_write(db, r->t, WATCH_DELETE, old ? old : r->key, NULL, 0, write_units(old, NULL),
                    watched);
    *answer = json_object();
    if (old && strcmp(r->return_values, "ALL_OLD") == 0)
        json_object_set(*answer, "Attributes", (json_t *)old);
    report_write_capacity(*answer, r->capacity, r->t, write_units(old, NULL), old, NULL);
    report_metrics(db, r->t, r->metrics, *answer, old);
    rc = 0;
done:
    txn_end(tx);
    buf_free(&key);
    return rc;
}

int op_delete_item(qr_db *db, op_call *c, qr_err *err)
{
    keyed_write w;
    int rc = -1;
    if (keyed_begin(db, c->req, 0, EXPRS_CONDITION, &w, err) == 0) {
        item_request r = keyed_request(&w);
        rc = items_delete(db, &r, &c->answer, err);
    }
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
            rc = err_validation(err,
                                QR_MSG_INVALID_PARAMETER "Cannot update attribute %s. "
                                                         "This attribute is part of the key",
                                s);
            break;
        }
    }
    json_decref(names);
    return rc;
}

int items_update(qr_db *db, const item_request *r, json_t **answer, qr_err *err)
{
    item_txn *tx = NULL;
    const json_t *old = NULL;
    json_t *item = NULL;
    buf key;
    buf_init(&key, 0);
    int rc = -1;
    if (item_update_check_keys(r->t, r->update, err)) goto done;
    /* Most regions (31 of 33 in October 2026) also measure an UpdateExpression by what
     * the request writes, leaving out the key and what it leaves alone, and judge that
     * before the condition. A transaction or PartiQL measures only the finished item. */
    if (r->measure_update && r->update && expr_update_request_size(r->update) > QR_MAX_ITEM_SIZE) {
        err_validation(err, QR_MSG_UPDATE_TOO_LARGE);
        goto done;
    }
    uint64_t watched = watch_begin_write(db);
    if (keyed_lock_read(db, r, &key, &tx, &old, err)) goto done;
    item = json_deep_copy(old ? old : r->key);
    if (r->update && (old ? expr_update_apply(r->update, item, err)
                          : expr_update_apply_missing(r->update, item, err)))
        goto done;
    if (item_size(item) > QR_MAX_ITEM_SIZE) {
        err_validation(err, QR_MSG_UPDATE_TOO_LARGE);
        goto done;
    }
    /* A value the update wrote may bring a map key over the name limit (SET a = :m). */
    if (item_check_names(item, err)) {
        envelope(err);
        goto done;
    }
    if (item_update_leaves_none(r->t, old, r->update, item)) {
        json_decref(item);
        item = NULL;
    }
    /* An update that leaves an index key empty is told so in the update's own words. */
    if (item && index_check_item(r->t, item, err)) {
        static const char empty[] = QR_MSG_EMPTY_INDEX_KEY_START;
        if (strncmp(err->msg, empty, sizeof empty - 1) == 0) {
            const char *kind =
                strncmp(err->msg + sizeof empty - 1, "binary", 6) == 0 ? "binary" : "string";
            err_clear(err);
            err_validation(err, QR_MSG_EMPTY_INDEX_UPDATE, kind);
        }
        goto done;
    }
    if ((item ? txn_put(tx, 0, item, item_size(item), err) : txn_delete(tx, 0, err)) ||
        txn_commit(tx, err))
        goto done;
    *answer = json_object();
    const char *rv = r->return_values;
    json_t *attrs = NULL;
    if (strcmp(rv, "ALL_OLD") == 0 && old)
        attrs = json_incref((json_t *)old);
    else if (strcmp(rv, "ALL_NEW") == 0 && item)
        attrs = json_incref(item);
    else if (strncmp(rv, "UPDATED_", 8) == 0 && r->update &&
             (rv[8] == 'O' ? old != NULL : item != NULL)) {
        /* Exactly the paths the update touched, nested parts included, as DynamoDB returns. */
        expr_proj *touched = expr_update_projection(r->update);
        attrs = expr_project(touched, rv[8] == 'O' ? old : item);
        expr_proj_free(touched);
    }
    if (attrs && json_object_size(attrs) > 0) json_object_set(*answer, "Attributes", attrs);
    json_decref(attrs);
    report_write_capacity(*answer, r->capacity, r->t, write_units(old, item), old, item);
    report_metrics(db, r->t, r->metrics, *answer, item);
    if (watched)
        watch_write(db, r->t, item ? WATCH_UPDATE : WATCH_DELETE, item ? item : old, NULL, 0,
                    write_units(old, item), watched);
    rc = 0;
done:
    json_decref(item);
    txn_end(tx);
    buf_free(&key);
    return rc;
}

int op_update_item(qr_db *db, op_call *c, qr_err *err)
{
    keyed_write w;
    int rc = -1;
    if (keyed_begin(db, c->req, 1, EXPRS_CONDITION | EXPRS_UPDATE, &w, err) == 0) {
        item_request r = keyed_request(&w);
        r.measure_update = json_object_get(c->req, "UpdateExpression") != NULL;
        rc = items_update(db, &r, &c->answer, err);
    }
    keyed_end(&w);
    return rc;
}
