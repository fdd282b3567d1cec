/* transact.c — TransactWriteItems and TransactGetItems: all or nothing, across tables.
 *
 * A write transaction validates every action, then runs them as one engine item
 * transaction (txn_begin with TXN_ATOMIC): conditions checked on the current items,
 * everything written in one batch. A read transaction reads from one read view. The
 * ClientRequestToken memory is the engine's (meta_token_*, in memory only). */
#include <stdlib.h>
#include <string.h>

#include "engine/index.h"
#include "model/value.h"
#include "ops/ops.h"

#define TXN_MAX_ACTIONS 100
#define TXN_MAX_BYTES ((size_t)4 << 20)
#define TOKEN_MAX_LEN 36

static const char *const capacity_modes[] = {"INDEXES", "TOTAL", "NONE", NULL};
static const char *const metrics_modes[] = {"SIZE", "NONE", NULL};
static const char *const on_failure_modes[] = {"ALL_OLD", "NONE", NULL};

static const char MSG_DUPLICATE[] =
    "Transaction request cannot include multiple operations on one item";
/* DynamoDB speaks of the transaction's payload (the Put items), and its text reads
 * "... size cannot exceed ..." (ScyllaDB's suite, run against DynamoDB, matches that). */
static const char MSG_TOO_BIG[] = "The transaction payload size cannot exceed 4 MB";

/* ---- ClientRequestToken: completed transactions remembered for ten minutes ----
 * The database keeps the tokens (meta_token_*); what a token stands for and what its
 * states answer are decided here. */

/* Looks the token up for request req: what it stands for is the transaction's items
 * (their text with keys sorted); the Return* parameters shape only the answer, so a retry
 * may change them without a mismatch. Returns 1 with *replay set (malloc'd response text)
 * if the same request already succeeded; 0 if this request now owns the token; -1 with
 * err set on a mismatch or while the first request is still running. */
static int token_claim(qr_db *db, const char *token, json_t *req, char **replay, qr_err *err)
{
    json_t *items = json_object_get(req, "TransactItems");
    char *text = items ? json_dumps(items, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    meta_token_state st =
        meta_token_claim(db, token, text ? text : "", text ? strlen(text) : 0, replay);
    free(text);
    switch (st) {
    case META_TOKEN_CLAIMED:
        return 0;
    case META_TOKEN_DONE:
        return 1;
    case META_TOKEN_MISMATCH:
        return err_set(err, QR_E_IDEMPOTENT,
                       "Request parameters do not match the parameters of the previous "
                       "request with the same client request token");
    case META_TOKEN_RUNNING:
        return err_set(err, QR_E_TXN_IN_PROGRESS,
                       "Transaction from previous request is still in progress");
    case META_TOKEN_FULL:
        return err_set(err, QR_E_LIMIT,
                       "Too many transactions with a client request token are in progress");
    case META_TOKEN_NO_MEMORY:
        break;
    }
    return err_set(err, QR_E_INTERNAL, "out of memory");
}

/* Ends the claim: remembers what a repeat answers (resp: the per-table read units of the
 * items) if the transaction succeeded, forgets the token if it failed (resp NULL), so a
 * retry runs again. */
static void token_finish(qr_db *db, const char *token, const json_t *resp)
{
    char *text = resp ? json_dumps(resp, JSON_COMPACT) : NULL;
    meta_token_finish(db, token, text);
    free(text);
}

/* ---- parsing actions ---- */

typedef enum act_kind { ACT_CHECK, ACT_PUT, ACT_DELETE, ACT_UPDATE, ACT_GET } act_kind;

static const struct {
    const char *param, *field;
    act_kind kind;
} write_kinds[] = {
    {"ConditionCheck", "conditionCheck", ACT_CHECK},
    {"Put", "put", ACT_PUT},
    {"Delete", "delete", ACT_DELETE},
    {"Update", "update", ACT_UPDATE},
};

/* The write kinds entry names (not null): how many, and the last one's spec and place in
 * write_kinds. A well-formed entry names exactly one. */
static int find_write_kind(json_t *entry, json_t **spec, size_t *which)
{
    int found = 0;
    for (size_t k = 0; k < sizeof write_kinds / sizeof write_kinds[0]; k++) {
        json_t *v = json_object_get(entry, write_kinds[k].param);
        if (v == NULL || json_is_null(v)) continue;
        found++;
        *spec = v;
        *which = k;
    }
    return found;
}

typedef struct action {
    act_kind kind;
    table *t;
    json_t *keyv;      /* Key (borrowed), or for Put the item */
    json_t *item;      /* Put: the item (borrowed) */
    json_t *exprs_src; /* the expression parameters of the action (owned) */
    req_exprs x;
    const char *on_failure;
    buf key;
    json_t *old, *new_item; /* current and new item (owned; NULL when absent) */
} action;

typedef struct txn {
    action *a;
    size_t n;
} txn;

static void txn_free(qr_db *db, txn *tx)
{
    for (size_t i = 0; i < tx->n; i++) {
        action *a = &tx->a[i];
        exprs_free(&a->x);
        json_decref(a->exprs_src);
        json_decref(a->old);
        json_decref(a->new_item);
        buf_free(&a->key);
        catalog_release(db, a->t);
    }
    free(tx->a);
    tx->a = NULL;
    tx->n = 0;
}

static int null_at(qr_err *err, const char *prefix, const char *member)
{
    return err_validation(
        err,
        "1 validation error detected: Value null at '%s%s%s' failed to satisfy constraint: "
        "Member must not be null",
        prefix, *member ? "." : "", member);
}

/* The TransactItems list: present, 1 to 100 entries. */
static int transact_items(json_t *req, json_t **out, qr_err *err)
{
    if (param_array(req, "TransactItems", out, err)) return -1;
    if (*out == NULL) return null_at(err, "transactItems", "");
    if (json_array_size(*out) == 0)
        return err_validation(
            err, "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy "
                 "constraint: Member must have length greater than or equal to 1");
    if (json_array_size(*out) > TXN_MAX_ACTIONS)
        return err_validation(
            err,
            "1 validation error detected: Value '[...]' at 'transactItems' failed to satisfy "
            "constraint: Member must have length less than or equal to %d",
            TXN_MAX_ACTIONS);
    return 0;
}

/* Copies the named expression parameters of spec into a new object, so an action sees
 * exactly the parameters its shape has (no legacy Expected or AttributeUpdates). */
static json_t *expression_params(json_t *spec, const char *const *keys)
{
    json_t *o = json_object();
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(spec, keys[i]);
        if (v) json_object_set(o, keys[i], v);
    }
    return o;
}

/* Parses and checks one action of either kind of transaction; nothing is read. */
/* 1 when v holds every key attribute of t (whatever their values). */
static int has_key_attributes(const table *t, const json_t *v)
{
    return json_object_get(v, table_pk(t)->name) &&
           (table_sk(t)->name == NULL || json_object_get(v, table_sk(t)->name));
}

/* An empty string or binary key value is refused before the transaction runs, as a
 * ValidationException of the whole request, where other bad key values cancel it. */
static int empty_key_value(const qr_err *err)
{
    static const char empty[] =
        "One or more parameter values are not valid. The AttributeValue for a key "
        "attribute cannot contain an empty";
    return strncmp(err->msg, empty, sizeof empty - 1) == 0;
}

static int empty_index_value(const qr_err *err)
{
    static const char empty[] =
        "One or more parameter values are not valid. A value specified for a secondary "
        "index key is not supported. The AttributeValue for a key attribute cannot "
        "contain an empty ";
    return strncmp(err->msg, empty, sizeof empty - 1) == 0;
}

/* *key_error is set when the action's key attributes (or its Put item's) are all there
 * but one has a value the schema refuses (a wrong type, say), or when a Get's key does not
 * fit at all (a malformed value is not such a key: it fails the request up front): DynamoDB cancels
 * the transaction for that, with a ValidationError reason, where other invalid input fails the
 * whole request. */
static int parse_action(qr_db *db, json_t *entry, size_t idx, int is_get, action *a, int *key_error,
                        qr_err *err)
{
    static const char *const write_exprs[] = {"ConditionExpression", "UpdateExpression",
                                              "ExpressionAttributeNames",
                                              "ExpressionAttributeValues", NULL};
    static const char *const get_exprs[] = {"ProjectionExpression", "ExpressionAttributeNames",
                                            NULL};
    char prefix[96];
    json_t *spec = NULL;
    const char *field = "get";
    if (!json_is_object(entry))
        return err_set(err, QR_E_SERIALIZATION,
                       "Unexpected value type for parameter TransactItems member: "
                       "expected an object");
    if (is_get) {
        a->kind = ACT_GET;
        spec = json_object_get(entry, "Get");
        if (spec == NULL || json_is_null(spec) || json_object_size(entry) != 1) {
            snprintf(prefix, sizeof prefix, "transactItems.%zu.member", idx + 1);
            return null_at(err, prefix, "get");
        }
    } else {
        size_t which = 0;
        int found = find_write_kind(entry, &spec, &which);
        a->kind = write_kinds[which].kind;
        field = write_kinds[which].field;
        /* an action naming none (us-east-1's words; eu-west-2 has moved to the
         * validation framework's) or more than one */
        if (found == 0)
            return err_validation(err, "Invalid Request: TransactWriteRequest should contain "
                                       "Delete or Put or Update request");
        if (found != 1)
            return err_validation(
                err, "TransactItems can only contain one of Check, Put, Update or Delete");
    }
    if (!json_is_object(spec))
        return err_set(err, QR_E_SERIALIZATION,
                       "Unexpected value type for parameter %s: expected an object", field);
    snprintf(prefix, sizeof prefix, "transactItems.%zu.member.%s", idx + 1, field);

    char name_field[128];
    snprintf(name_field, sizeof name_field, "%s.tableName", prefix);
    json_t *name = json_object_get(spec, "TableName");
    if (param_check_table_name(name, name_field, err)) return -1;
    if ((a->t = catalog_get(db, json_string_value(name))) == NULL)
        return err_set(err, QR_E_NOT_FOUND, "Requested resource not found");
    if (param_enum(spec, "ReturnValuesOnConditionCheckFailure", on_failure_modes, "NONE",
                   &a->on_failure, err))
        return -1;

    if (a->kind == ACT_PUT) {
        if (param_object(spec, "Item", &a->item, err)) return -1;
        if (a->item == NULL) return null_at(err, prefix, "item");
        if (key_check_item(a->t, a->item, err)) {
            *key_error = has_key_attributes(a->t, a->item) && !empty_key_value(err) &&
                         !value_error_is_malformed(err);
            return -1;
        }
        if (item_validate(a->item, err)) return -1;
        /* An index key value of the wrong type cancels the transaction, as a table key's
         * does; an empty one fails the whole request. */
        if (index_check_item(a->t, a->item, err)) {
            *key_error = !empty_index_value(err);
            return -1;
        }
        a->keyv = a->item;
    } else {
        if (param_object(spec, "Key", &a->keyv, err)) return -1;
        if (a->keyv == NULL) return null_at(err, prefix, "key");
        if (key_check_key(a->t, a->keyv, err)) {
            /* A Get whose key does not fit cancels the transaction even when attributes
             * are missing (an empty Key: the public conformance suite's recording); a
             * write's cancels only when every key attribute is there. */
            *key_error =
                (is_get || (has_key_attributes(a->t, a->keyv) &&
                            json_object_size(a->keyv) == (table_sk(a->t)->name ? 2u : 1u))) &&
                !empty_key_value(err) && !value_error_is_malformed(err);
            return -1;
        }
    }
    const char *text;
    if (a->kind == ACT_CHECK) {
        if (param_string(spec, "ConditionExpression", &text, err)) return -1;
        if (text == NULL) return null_at(err, prefix, "conditionExpression");
    }
    if (a->kind == ACT_UPDATE) {
        if (param_string(spec, "UpdateExpression", &text, err)) return -1;
        if (text == NULL) return null_at(err, prefix, "updateExpression");
    }
    a->exprs_src = expression_params(spec, is_get ? get_exprs : write_exprs);
    int allowed =
        is_get ? EXPRS_PROJECTION : EXPRS_CONDITION | (a->kind == ACT_UPDATE ? EXPRS_UPDATE : 0);
    if (exprs_parse(&a->x, a->exprs_src, allowed, err) || exprs_finish(&a->x)) return -1;
    if (a->kind == ACT_UPDATE && item_update_check_keys(a->t, a->x.update, err)) return -1;
    return key_item(&a->key, a->t, a->keyv, err);
}

static int cancel(json_t *reasons, qr_err *err);

/* Cancels a transaction of n actions whose action bad has a key that does not fit
 * its table (the message is in err): that action's reason is ValidationError, the others
 * None, as DynamoDB stops validating at the first such action. */
static int cancel_for_key(size_t n, size_t bad, qr_err *err)
{
    json_t *reasons = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(reasons, i == bad ? json_pack("{s:s,s:s}", "Code", "ValidationError",
                                                            "Message", err->msg)
                                                : json_pack("{s:s}", "Code", "None"));
    err_clear(err);
    int rc = cancel(reasons, err);
    json_decref(reasons);
    return rc;
}

/* What DynamoDB judges of a write action before it looks up any table: the values of a
 * Put item and the expressions (syntax, names and values used). Between actions the
 * first in request order wins, and either wins over a missing table anywhere (recorded
 * in us-east-1 and eu-west-2, October 2026). Malformed actions are left to
 * parse_action, which reports them in their turn. */
static int precheck_write_action(json_t *entry, qr_err *err)
{
    static const char *const write_exprs[] = {"ConditionExpression", "UpdateExpression",
                                              "ExpressionAttributeNames",
                                              "ExpressionAttributeValues", NULL};
    if (!json_is_object(entry)) return 0;
    json_t *spec = NULL;
    size_t which = 0;
    if (find_write_kind(entry, &spec, &which) != 1 || !json_is_object(spec)) return 0;
    act_kind kind = write_kinds[which].kind;
    if (kind == ACT_PUT) {
        json_t *item = json_object_get(spec, "Item");
        /* The item's top-level names are read before any of its values: an empty one
         * is reported, in these words, ahead of a value nested too deep (ten regions,
         * October 2026). */
        if (json_is_object(item) && json_object_get(item, ""))
            return err_validation(err, "Empty attribute name");
        if (json_is_object(item) && item_validate(item, err)) return -1;
    }
    int has_expression =
        !(kind == ACT_CHECK && !json_is_string(json_object_get(spec, "ConditionExpression"))) &&
        !(kind == ACT_UPDATE && !json_is_string(json_object_get(spec, "UpdateExpression")));
    if (has_expression) {
        json_t *src = expression_params(spec, write_exprs);
        req_exprs x = {0};
        int rc =
            exprs_parse(&x, src, EXPRS_CONDITION | (kind == ACT_UPDATE ? EXPRS_UPDATE : 0), err) ||
                    exprs_finish(&x)
                ? -1
                : 0;
        exprs_free(&x);
        json_decref(src);
        /* A transaction reports an oversized UpdateExpression without the size that
         * UpdateItem and a transaction's ConditionExpression add (recorded in ten regions,
         * October 2026). */
        static const char oversized_update[] =
            "Invalid UpdateExpression: Expression size has exceeded the maximum "
            "allowed size;";
        if (rc && strncmp(err->msg, oversized_update, sizeof oversized_update - 1) == 0)
            err->msg[sizeof oversized_update - 1] = '\0';
        if (rc) return -1;
    }
    /* Then a key nested past the limit (a key is a scalar, but the request is read before
     * that is judged), and a value two levels past it: refused before the transaction
     * runs, naming its key (30 regions; the rest refuse it bare). A value one level past
     * is left to the condition, as DynamoDB leaves it (recorded in us-east-1 and
     * eu-west-2, October 2026). */
    if (kind != ACT_PUT && value_nesting_most(json_object_get(spec, "Key")) > QR_MAX_DEPTH)
        return err_validation(err, QR_MSG_TOO_DEEP);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(spec, "ExpressionAttributeValues"), k, v)
    {
        if (value_nesting(v) > QR_MAX_DEPTH + 1)
            return err_validation(
                err,
                "ExpressionAttributeValues contains invalid value: " QR_MSG_TOO_DEEP " for key %s",
                k);
    }
    return 0;
}

/* The bytes an action adds to the transaction's payload, which DynamoDB caps at 4 MB: the
 * item a Put writes, or the key and the values an Update, Delete or ConditionCheck
 * carries. The items those touch do not count (deleting 5 MB of items in one transaction
 * is allowed). */
static size_t action_payload(const action *a)
{
    if (a->item) return item_size(a->item);
    json_t *values = json_object_get(a->exprs_src, "ExpressionAttributeValues");
    return item_size(a->keyv) + (json_is_object(values) ? item_size(values) : 0);
}

/* Parses every action; fails on the first invalid one or on two actions on one item. */
static int parse_actions(qr_db *db, json_t *list, int is_get, txn *tx, qr_err *err)
{
    for (size_t i = 0; !is_get && i < json_array_size(list); i++)
        if (precheck_write_action(json_array_get(list, i), err)) return -1;
    size_t n = json_array_size(list), payload = 0;
    tx->a = calloc(n, sizeof *tx->a);
    if (tx->a == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        action *a = &tx->a[i];
        buf_init(&a->key, 0);
        tx->n++;
        int key_error = 0;
        if (parse_action(db, json_array_get(list, i), i, is_get, a, &key_error, err)) {
            if (key_error && err->type && strcmp(err->type, QR_E_VALIDATION) == 0)
                return cancel_for_key(n, i, err);
            return -1;
        }
        for (size_t j = 0; j < i; j++)
            if (tx->a[j].key.len == a->key.len &&
                memcmp(tx->a[j].key.data, a->key.data, a->key.len) == 0)
                return err_validation(err, "%s", MSG_DUPLICATE);
        if (!is_get) payload += action_payload(a);
        if (payload > TXN_MAX_BYTES) return err_validation(err, "%s", MSG_TOO_BIG);
    }
    return 0;
}

/* ---- capacity ---- */

/* Adds read and write units for table name to the per-table list (first-use order). */
static void units_add(json_t *per_table, const char *name, double read, double write)
{
    size_t i;
    json_t *e = NULL, *x;
    json_array_foreach(per_table, i, x)
    {
        if (strcmp(json_string_value(json_object_get(x, "TableName")), name) == 0) e = x;
    }
    if (e == NULL) {
        e = json_pack("{s:s,s:f,s:f}", "TableName", name, "r", 0.0, "w", 0.0);
        json_array_append_new(per_table, e);
    }
    json_object_set_new(e, "r", json_real(json_real_value(json_object_get(e, "r")) + read));
    json_object_set_new(e, "w", json_real(json_real_value(json_object_get(e, "w")) + write));
}

/* The ConsumedCapacity list DynamoDB returns for a transaction, or NULL for NONE. */
static json_t *capacity_list(json_t *per_table, const char *mode)
{
    if (strcmp(mode, "NONE") == 0) return NULL;
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(per_table, i, e)
    {
        double r = json_real_value(json_object_get(e, "r")),
               w = json_real_value(json_object_get(e, "w"));
        json_t *units = json_pack("{s:f}", "CapacityUnits", r + w);
        if (r > 0) json_object_set_new(units, "ReadCapacityUnits", json_real(r));
        if (w > 0) json_object_set_new(units, "WriteCapacityUnits", json_real(w));
        json_t *c = json_deep_copy(units);
        json_object_set_new(c, "TableName",
                            json_string(json_string_value(json_object_get(e, "TableName"))));
        if (strcmp(mode, "INDEXES") == 0) json_object_set(c, "Table", units);
        json_decref(units);
        json_array_append_new(out, c);
    }
    return out;
}

/* ---- TransactWriteItems ---- */

/* Checks the index keys of the item an Update leaves. An empty value fails the whole
 * request, in the words DynamoDB uses for an update (into fatal, returning -2); any
 * other fault is the action's cancellation reason (in e, returning -1). */
static int check_updated_index_keys(const action *a, qr_err *e, qr_err *fatal)
{
    if (a->new_item == NULL || index_check_item(a->t, a->new_item, e) == 0) return 0;
    if (!empty_index_value(e)) return -1;
    err_validation(
        fatal,
        "One or more parameter values are not valid. The update expression attempted to update "
        "a secondary index key to a value that is not supported. The AttributeValue for a key "
        "attribute cannot contain an empty %s value.",
        strstr(e->msg, "empty binary") ? "binary" : "string");
    err_clear(e);
    return -2;
}

/* Computes the outcome of action a on its current item: 0 and a->new_item set, -1 with
 * the cancellation reason appended to reasons, or -2 with a failure of the whole request
 * in fatal. */
static int evaluate(item_txn *x, size_t i, action *a, json_t *reasons, qr_err *fatal)
{
    qr_err e;
    err_init(&e);
    if (txn_check(x, i, a->x.condition, a->on_failure, &e) == 0) {
        if (a->kind == ACT_PUT) a->new_item = json_incref(a->item);
        if (a->kind == ACT_UPDATE) {
            a->new_item = json_deep_copy(a->old ? a->old : a->keyv);
            int applied = a->old ? expr_update_apply(a->x.update, a->new_item, &e)
                                 : expr_update_apply_missing(a->x.update, a->new_item, &e);
            if (applied == 0 && item_size(a->new_item) > QR_MAX_ITEM_SIZE)
                err_validation(&e, "Item size to update has exceeded the maximum allowed size");
            /* A value the update wrote may bring a map key over the name limit, as in UpdateItem.
             */
            if (applied == 0 && e.type == NULL) item_check_names(a->new_item, &e);
            if (e.type == NULL && item_update_leaves_none(a->t, a->old, a->x.update, a->new_item)) {
                json_decref(a->new_item);
                a->new_item = NULL;
            }
            if (e.type == NULL && check_updated_index_keys(a, &e, fatal) == -2) return -2;
        }
    }
    if (e.type == NULL) {
        json_array_append_new(reasons, json_pack("{s:s}", "Code", "None"));
        return 0;
    }
    json_t *r;
    if (strcmp(e.type, QR_E_CONDITION) == 0) {
        r = json_pack("{s:s,s:s}", "Code", "ConditionalCheckFailed", "Message", e.msg);
        if (e.item) json_object_set(r, "Item", (json_t *)e.item);
    } else {
        r = json_pack("{s:s,s:s}", "Code",
                      strcmp(e.type, QR_E_VALIDATION) == 0 ? "ValidationError" : e.type, "Message",
                      e.msg);
    }
    json_array_append_new(reasons, r);
    err_clear(&e);
    return -1;
}

/* Records TransactionCanceledException with its reasons. The message can outgrow
 * err->msg, so the full text travels with the reasons in err->item. */
static int cancel(json_t *reasons, qr_err *err)
{
    buf msg;
    buf_init(&msg, 0);
    buf_puts(&msg,
             "Transaction cancelled, please refer cancellation reasons for specific reasons [");
    size_t i;
    json_t *r;
    json_array_foreach(reasons, i, r)
        buf_printf(&msg, "%s%s", i ? ", " : "", json_string_value(json_object_get(r, "Code")));
    buf_puts(&msg, "]");
    err_set(err, QR_E_TXN_CANCELED, "%s", msg.data);
    if (err->type && strcmp(err->type, QR_E_TXN_CANCELED) == 0 && err->item == NULL)
        err->item = json_pack("{s:O,s:s}", "CancellationReasons", reasons, "Message", msg.data);
    buf_free(&msg);
    return -1;
}

/* Runs a parsed transaction: lock, read, evaluate, write, unlock. */
static int run_write(qr_db *db, txn *tx, json_t *per_table, qr_err *err)
{
    buf *keys = malloc(tx->n * sizeof *keys);
    if (keys == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < tx->n; i++)
        keys[i] = tx->a[i].key; /* shallow: unlock matches by data pointer */
    table **tables = malloc(tx->n * sizeof *tables);
    if (tables == NULL) {
        free(keys);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    for (size_t i = 0; i < tx->n; i++)
        tables[i] = tx->a[i].t;
    json_t *reasons = json_array();
    item_txn *x = NULL;
    int rc = -1, failed = 0;
    if (txn_begin(db, TXN_ATOMIC, tx->n, tables, keys, &x, err)) goto unlock;
    for (size_t i = 0; i < tx->n; i++) {
        const json_t *old;
        if (txn_read(x, i, &old, err) < 0) goto unlock;
        tx->a[i].old = json_incref((json_t *)old);
    }
    for (size_t i = 0; i < tx->n; i++) {
        int outcome = evaluate(x, i, &tx->a[i], reasons, err);
        if (outcome == -2) goto unlock;
        if (outcome) failed = 1;
    }
    /* The 4 MB limit is on the payload (checked by parse_actions), not on the items the
     * actions touch: one transaction may delete or update 5 MB of stored items. */
    if (failed) {
        cancel(reasons, err);
        goto unlock;
    }
    for (size_t i = 0; i < tx->n; i++) {
        action *a = &tx->a[i];
        if (a->kind == ACT_CHECK || (a->old == NULL && a->new_item == NULL)) continue;
        if (a->new_item ? txn_put(x, i, a->new_item, item_size(a->new_item), err)
                        : txn_delete(x, i, err))
            goto unlock;
    }
    if (txn_commit(x, err)) goto unlock;
    for (size_t i = 0; i < tx->n; i++) {
        action *a = &tx->a[i];
        size_t os = a->old ? item_size(a->old) : 0, ns = a->new_item ? item_size(a->new_item) : 0;
        if (a->kind == ACT_CHECK) {
            /* billed as a transactional write of the item it checks, not a read
             * (recorded by the public conformance suite) */
            units_add(per_table, table_name(a->t), 0, 2 * capacity_write_units(os));
            continue;
        }
        units_add(per_table, table_name(a->t), 0, 2 * capacity_write_units(os > ns ? os : ns));
    }
    rc = 0;
unlock:
    txn_end(x);
    json_decref(reasons);
    free(tables);
    free(keys);
    return rc;
}

/* ItemCollectionMetrics of a transaction that ran: per table with local secondary
 * indexes, the item collection of each item a Put, Update or Delete wrote or removed, in
 * the order of the actions (tables without local indexes have no item collections). */
static json_t *collection_list(qr_db *db, const txn *tx)
{
    json_t *icm = json_object();
    for (size_t i = 0; i < tx->n; i++) {
        const action *a = &tx->a[i];
        const json_t *item = a->new_item ? a->new_item : a->old;
        if (a->kind == ACT_CHECK || item == NULL || table_lsi_count(a->t) == 0) continue;
        json_t *list = json_object_get(icm, table_name(a->t));
        if (list == NULL) json_object_set_new(icm, table_name(a->t), list = json_array());
        json_array_append_new(list, collection_metrics(db, a->t, item));
    }
    return icm;
}

/* TransactWriteItems' own members (ClientRequestToken, ReturnConsumedCapacity,
 * ReturnItemCollectionMetrics, in that order) are judged together, and every one that
 * breaks its constraint is reported in one message (recorded in us-east-1, October
 * 2026; eu-west-2 has begun to name a long token alone). */
static int write_member_errors(json_t *req, const char *token, qr_err *err)
{
    member_errors m;
    member_errors_init(&m);
    const char *s;
    qr_err e;
    err_init(&e);
    if (token && (*token == '\0' || strlen(token) > TOKEN_MAX_LEN)) {
        err_validation(
            &e,
            "Value '%s' at 'clientRequestToken' failed to satisfy constraint: Member must have "
            "length %s",
            token, *token ? "less than or equal to 36" : "greater than or equal to 1");
        member_errors_add(&m, e.msg);
        err_clear(&e);
    }
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &s, &e))
        member_errors_add(&m, e.msg);
    err_clear(&e);
    if (param_enum(req, "ReturnItemCollectionMetrics", metrics_modes, "NONE", &s, &e))
        member_errors_add(&m, e.msg);
    err_clear(&e);
    return member_errors_finish(&m, err);
}

int op_transact_write_items(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *list, *per_table = NULL;
    const char *capacity, *metrics, *token;
    txn tx = {0};
    char *replay = NULL;
    int claimed = 0, rc = -1;
    if (transact_items(req, &list, err)) return -1;
    if (param_string(req, "ClientRequestToken", &token, err)) return -1;
    if (write_member_errors(req, token, err)) return -1;
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &capacity, err))
        return -1;
    if (param_enum(req, "ReturnItemCollectionMetrics", metrics_modes, "NONE", &metrics, err))
        return -1;
    if (token) {
        int r = token_claim(db, token, req, &replay, err);
        if (r < 0) return -1;
        if (r == 1) {
            /* A repeat changes nothing; as DynamoDB, it answers with what reading the items
             * transactionally costs (remembered per table when the transaction ran). */
            json_t *reads = json_loads(replay, JSON_ALLOW_NUL, NULL);
            free(replay);
            if (!json_is_array(reads)) {
                json_decref(reads);
                return err_set(err, QR_E_INTERNAL, "cannot decode the remembered response");
            }
            c->answer = json_object();
            json_t *cc = capacity_list(reads, capacity);
            if (cc) json_object_set_new(c->answer, "ConsumedCapacity", cc);
            if (strcmp(metrics, "SIZE") == 0)
                json_object_set_new(c->answer, "ItemCollectionMetrics", json_object());
            json_decref(reads);
            return 0;
        }
        claimed = 1;
    }
    if (parse_actions(db, list, 0, &tx, err)) goto done;
    per_table = json_array();
    if (run_write(db, &tx, per_table, err)) goto done;
    c->answer = json_object();
    json_t *cc = capacity_list(per_table, capacity);
    if (cc) json_object_set_new(c->answer, "ConsumedCapacity", cc);
    if (strcmp(metrics, "SIZE") == 0)
        json_object_set_new(c->answer, "ItemCollectionMetrics", collection_list(db, &tx));
    rc = 0;
done:
    if (claimed) {
        json_t *reads = NULL;
        if (rc == 0) {
            reads = json_array();
            for (size_t i = 0; i < tx.n; i++) {
                const json_t *now = tx.a[i].kind == ACT_CHECK ? tx.a[i].old : tx.a[i].new_item;
                /* a transactional read: twice a strongly consistent one (2 units for
                 * a small item, as the public conformance suite recorded) */
                units_add(reads, table_name(tx.a[i].t),
                          2 * capacity_read_units(now ? item_size(now) : 0, 1), 0);
            }
        }
        token_finish(db, token, reads);
        json_decref(reads);
    }
    json_decref(per_table);
    txn_free(db, &tx);
    return rc;
}

/* ---- TransactGetItems ---- */

int op_transact_get_items(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *list, *per_table = NULL, *responses = NULL;
    const char *capacity;
    txn tx = {0};
    const read_view *snap = NULL;
    int rc = -1;
    size_t bytes = 0;
    if (transact_items(req, &list, err)) return -1;
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &capacity, err))
        return -1;
    if (parse_actions(db, list, 1, &tx, err)) goto done;
    per_table = json_array();
    responses = json_array();
    snap = read_view_open(db);
    for (size_t i = 0; i < tx.n; i++) {
        action *a = &tx.a[i];
        if (item_get_parsed(db, a->t, snap, &a->key, 1, &a->old, err) < 0) goto done;
        size_t size = a->old ? item_size(a->old) : 0;
        bytes += size;
        if (bytes > TXN_MAX_BYTES) {
            err_validation(err, "%s", MSG_TOO_BIG);
            goto done;
        }
        json_t *r = json_object(), *item = NULL;
        if (a->old)
            item = a->x.projection ? expr_project(a->x.projection, a->old) : json_incref(a->old);
        /* a projection that matches nothing of a present item leaves no Item, as none */
        if (item && json_object_size(item) > 0) json_object_set(r, "Item", item);
        json_decref(item);
        json_array_append_new(responses, r);
        units_add(per_table, table_name(a->t), 2 * capacity_read_units(size, 1), 0);
    }
    c->answer = json_pack("{s:O}", "Responses", responses);
    json_t *cc = capacity_list(per_table, capacity);
    if (cc) json_object_set_new(c->answer, "ConsumedCapacity", cc);
    rc = 0;
done:
    read_view_close(db, snap);
    json_decref(responses);
    json_decref(per_table);
    txn_free(db, &tx);
    return rc;
}
