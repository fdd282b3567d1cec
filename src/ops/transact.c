/* transact.c — TransactWriteItems and TransactGetItems: all or nothing, across tables.
 *
 * Handlers read actions into transact_members (as PartiQL does) that transact_write runs
 * as one engine item transaction (TXN_ATOMIC: conditions checked on the current items,
 * everything written in one batch) and transact_get reads from one read view. The
 * ClientRequestToken memory is the engine's (meta_token_*, in memory only). */
#include <stdlib.h>
#include <string.h>

#include "engine/index.h"
#include "model/value.h"
#include "ops/ops.h"

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

/* Looks the token up for a request standing for identity (see transact_write_request).
 * Returns 1 with *replay set (malloc'd response text) if the same request already
 * succeeded; 0 if this request now owns the token; -1 with err set on a mismatch or while
 * the first request is still running. */
static int token_claim(qr_db *db, const char *token, const char *identity, char **replay,
                       qr_err *err)
{
    switch (meta_token_claim(db, token, identity, strlen(identity), replay)) {
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

static const struct {
    const char *param, *field;
    transact_kind kind;
} write_kinds[] = {
    {"ConditionCheck", "conditionCheck", TRANSACT_CHECK},
    {"Put", "put", TRANSACT_PUT},
    {"Delete", "delete", TRANSACT_DELETE},
    {"Update", "update", TRANSACT_UPDATE},
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

/* The expressions of an action as its request gave them. */
typedef struct action {
    json_t *exprs_src; /* the expression parameters of the action (owned) */
    req_exprs x;
} action;

/* A request's actions, read: m[i] runs as a[i] gave it. */
typedef struct txn {
    transact_member *m;
    action *a;
    size_t n;
} txn;

void transact_member_free(qr_db *db, transact_member *m)
{
    json_decref(m->old);
    json_decref(m->new_item);
    buf_free(&m->ekey);
    catalog_release(db, m->t);
    memset(m, 0, sizeof *m);
}

static void txn_free(qr_db *db, txn *tx)
{
    for (size_t i = 0; i < tx->n; i++) {
        exprs_free(&tx->a[i].x);
        json_decref(tx->a[i].exprs_src);
        transact_member_free(db, &tx->m[i]);
    }
    free(tx->m);
    free(tx->a);
    memset(tx, 0, sizeof *tx);
}

static int null_at(qr_err *err, const char *prefix, const char *member)
{
    return err_not_null(err, "%s%s%s", prefix, *member ? "." : "", member);
}

/* The TransactItems list (its presence and size are the shape checker's). */
static int transact_items(json_t *req, json_t **out, qr_err *err)
{
    if (param_array(req, "TransactItems", out, err)) return -1;
    if (*out == NULL) return null_at(err, "transactItems", "");
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
    static const char empty[] = QR_MSG_EMPTY_KEY_START;
    return strncmp(err->msg, empty, sizeof empty - 1) == 0;
}

static int empty_index_value(const qr_err *err)
{
    static const char empty[] = QR_MSG_EMPTY_INDEX_KEY_START;
    return strncmp(err->msg, empty, sizeof empty - 1) == 0;
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

/* A key that does not fit is one whose action's key attributes (or its Put item's) are
 * all there but one has a value the schema refuses (a wrong type, say), or a Get's key
 * that does not fit at all (a malformed value is not such a key: it fails the request up
 * front): DynamoDB cancels the transaction for that, with a ValidationError reason, where
 * other invalid input fails the whole request. */
int transact_check_member(transact_member *m, size_t i, size_t n, qr_err *err)
{
    int key_error = 0, rc = 0;
    if (m->kind == TRANSACT_PUT) {
        if (key_check_item(m->t, m->item, err)) {
            key_error = has_key_attributes(m->t, m->item) && !empty_key_value(err) &&
                        !value_error_is_malformed(err);
            rc = -1;
        } else if (item_validate(m->item, err)) {
            rc = -1;
        } else if (index_check_item(m->t, m->item, err)) {
            /* An index key value of the wrong type cancels the transaction, as a table
             * key's does; an empty one fails the whole request. */
            key_error = !empty_index_value(err);
            rc = -1;
        }
        m->key = m->item;
    } else if (key_check_key(m->t, m->key, err)) {
        /* A Get whose key does not fit cancels the transaction even when attributes are
         * missing (an empty Key: the public conformance suite's recording); a write's
         * cancels only when every key attribute is there. */
        key_error = (m->kind == TRANSACT_GET ||
                     (has_key_attributes(m->t, m->key) &&
                      json_object_size(m->key) == (table_sk(m->t)->name ? 2u : 1u))) &&
                    !empty_key_value(err) && !value_error_is_malformed(err);
        rc = -1;
    }
    if (rc && key_error && err->type && strcmp(err->type, QR_E_VALIDATION) == 0)
        return cancel_for_key(n, i, err);
    return rc;
}

/* Parses and checks one action of either kind of transaction into m (its table found)
 * and a (its expressions); nothing is read. */
static int parse_action(qr_db *db, json_t *entry, size_t idx, size_t n, int is_get,
                        transact_member *m, action *a, qr_err *err)
{
    static const char *const write_exprs[] = {"ConditionExpression", "UpdateExpression",
                                              "ExpressionAttributeNames",
                                              "ExpressionAttributeValues", NULL};
    static const char *const get_exprs[] = {"ProjectionExpression", "ExpressionAttributeNames",
                                            NULL};
    char prefix[96];
    json_t *spec = NULL;
    const char *field = "get";
    if (value_wire_check(entry, WIRE_STRUCTURE, 0, NULL, err)) return -1;
    if (is_get) {
        m->kind = TRANSACT_GET;
        spec = json_object_get(entry, "Get");
        if (spec == NULL || json_is_null(spec) || json_object_size(entry) != 1) {
            snprintf(prefix, sizeof prefix, "transactItems.%zu.member", idx + 1);
            return null_at(err, prefix, "get");
        }
    } else {
        size_t which = 0;
        int found = find_write_kind(entry, &spec, &which);
        m->kind = write_kinds[which].kind;
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
    if (value_wire_check(spec, WIRE_STRUCTURE, 1, NULL, err)) return -1;
    snprintf(prefix, sizeof prefix, "transactItems.%zu.member.%s", idx + 1, field);

    char name_field[128];
    snprintf(name_field, sizeof name_field, "%s.tableName", prefix);
    json_t *name = json_object_get(spec, "TableName");
    if (param_check_table_name(name, name_field, err)) return -1;
    if ((m->t = ops_table_get(db, json_string_value(name))) == NULL)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_NOT_FOUND);
    if (param_enum(spec, "ReturnValuesOnConditionCheckFailure", on_failure_modes, "NONE",
                   &m->on_failure, err))
        return -1;
    /* (the members each kind requires are the shape checker's to judge) */
    if (param_object(spec, m->kind == TRANSACT_PUT ? "Item" : "Key",
                     m->kind == TRANSACT_PUT ? &m->item : &m->key, err))
        return -1;
    if (transact_check_member(m, idx, n, err)) return -1;
    a->exprs_src = expression_params(spec, is_get ? get_exprs : write_exprs);
    int allowed = is_get ? EXPRS_PROJECTION
                         : EXPRS_CONDITION | (m->kind == TRANSACT_UPDATE ? EXPRS_UPDATE : 0);
    if (exprs_parse(&a->x, a->exprs_src, allowed, err) || exprs_finish(&a->x)) return -1;
    m->condition = a->x.condition;
    m->update = a->x.update;
    m->projection = a->x.projection;
    m->values = json_object_get(a->exprs_src, "ExpressionAttributeValues");
    return 0;
}

int transact_check_put_item(json_t *item, qr_err *err)
{
    /* The item's top-level names are read before any of its values: an empty one is
     * reported, in these words, ahead of a value nested too deep (ten regions, October
     * 2026). */
    if (json_is_object(item) && json_object_get(item, ""))
        return err_validation(err, "Empty attribute name");
    return json_is_object(item) ? item_validate(item, err) : 0;
}

void transact_trim_update_error(qr_err *err)
{
    static const char named[] = "Invalid UpdateExpression: ",
                      oversized[] = "Expression size has exceeded the maximum allowed size;";
    char *at = err->msg + (strncmp(err->msg, named, sizeof named - 1) ? 0 : sizeof named - 1);
    if (strncmp(at, oversized, sizeof oversized - 1) == 0) at[sizeof oversized - 1] = '\0';
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
    transact_kind kind = write_kinds[which].kind;
    if (kind == TRANSACT_PUT && transact_check_put_item(json_object_get(spec, "Item"), err))
        return -1;
    int has_expression =
        !(kind == TRANSACT_CHECK &&
          !json_is_string(json_object_get(spec, "ConditionExpression"))) &&
        !(kind == TRANSACT_UPDATE && !json_is_string(json_object_get(spec, "UpdateExpression")));
    if (has_expression) {
        json_t *src = expression_params(spec, write_exprs);
        req_exprs x = {0};
        int rc = exprs_parse(&x, src,
                             EXPRS_CONDITION | (kind == TRANSACT_UPDATE ? EXPRS_UPDATE : 0), err) ||
                         exprs_finish(&x)
                     ? -1
                     : 0;
        exprs_free(&x);
        json_decref(src);
        if (rc) {
            transact_trim_update_error(err);
            return -1;
        }
    }
    /* Then a key nested past the limit (a key is a scalar, but the request is read before
     * that is judged), and a value two levels past it: refused before the transaction
     * runs, naming its key (30 regions; the rest refuse it bare). A value one level past
     * is left to the condition, as DynamoDB leaves it (recorded in us-east-1 and
     * eu-west-2, October 2026). */
    if (kind != TRANSACT_PUT && value_nesting_most(json_object_get(spec, "Key")) > QR_MAX_DEPTH)
        return err_validation(err, QR_MSG_TOO_DEEP);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(spec, "ExpressionAttributeValues"), k, v)
    {
        if (value_nesting(v) > QR_MAX_DEPTH + 1)
            return err_validation(err, QR_MSG_INVALID_VALUE "" QR_MSG_TOO_DEEP " for key %s", k);
    }
    return 0;
}

/* The bytes a member adds to the transaction's payload, which DynamoDB caps at 4 MB: the
 * item a Put writes, or the key and the values an Update, Delete or ConditionCheck
 * carries. The items those touch do not count (deleting 5 MB of items in one transaction
 * is allowed). */
static size_t member_payload(const transact_member *m)
{
    if (m->item) return item_size(m->item);
    return item_size(m->key) + (json_is_object(m->values) ? item_size(m->values) : 0);
}

int transact_join(transact_member *m, size_t i, size_t *payload, qr_err *err)
{
    transact_member *a = &m[i];
    buf_init(&a->ekey, 0);
    if (a->kind == TRANSACT_UPDATE && item_update_check_keys(a->t, a->update, err)) return -1;
    if (key_item(&a->ekey, a->t, a->key, err)) return -1;
    for (size_t j = 0; j < i; j++)
        if (m[j].ekey.len == a->ekey.len && memcmp(m[j].ekey.data, a->ekey.data, a->ekey.len) == 0)
            return err_validation(err, "%s", MSG_DUPLICATE);
    if (a->kind != TRANSACT_GET) *payload += member_payload(a);
    if (*payload > TXN_MAX_BYTES) return err_validation(err, "%s", MSG_TOO_BIG);
    return 0;
}

/* Parses every action; fails on the first invalid one or on two actions on one item. */
static int parse_actions(qr_db *db, json_t *list, int is_get, txn *tx, qr_err *err)
{
    for (size_t i = 0; !is_get && i < json_array_size(list); i++)
        if (precheck_write_action(json_array_get(list, i), err)) return -1;
    size_t n = json_array_size(list), payload = 0;
    tx->m = calloc(n, sizeof *tx->m);
    tx->a = calloc(n, sizeof *tx->a);
    if (tx->m == NULL || tx->a == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        tx->n++;
        if (parse_action(db, json_array_get(list, i), i, n, is_get, &tx->m[i], &tx->a[i], err) ||
            transact_join(tx->m, i, &payload, err))
            return -1;
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
static int check_updated_index_keys(const transact_member *a, qr_err *e, qr_err *fatal)
{
    if (a->new_item == NULL || index_check_item(a->t, a->new_item, e) == 0) return 0;
    if (!empty_index_value(e)) return -1;
    err_validation(fatal, QR_MSG_EMPTY_INDEX_UPDATE,
                   strstr(e->msg, "empty binary") ? "binary" : "string");
    err_clear(e);
    return -2;
}

/* Computes the outcome of member a on its current item: 0 and a->new_item set, -1 with
 * the cancellation reason appended to reasons, or -2 with a failure of the whole request
 * in fatal. */
static int evaluate(item_txn *x, size_t i, transact_member *a, json_t *reasons, qr_err *fatal)
{
    qr_err e;
    err_init(&e);
    if (txn_check(x, i, a->condition, a->on_failure, &e) == 0) {
        if (a->kind == TRANSACT_PUT) a->new_item = json_incref(a->item);
        if (a->kind == TRANSACT_UPDATE) {
            a->new_item = json_deep_copy(a->old ? a->old : a->key);
            int applied = a->old ? expr_update_apply(a->update, a->new_item, &e)
                                 : expr_update_apply_missing(a->update, a->new_item, &e);
            if (applied == 0 && item_size(a->new_item) > QR_MAX_ITEM_SIZE)
                err_validation(&e, QR_MSG_UPDATE_TOO_LARGE);
            /* A value the update wrote may bring a map key over the name limit, as in UpdateItem.
             */
            if (applied == 0 && e.type == NULL) item_check_names(a->new_item, &e);
            if (e.type == NULL && item_update_leaves_none(a->t, a->old, a->update, a->new_item)) {
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
    } else if (err_is_throttling(&e)) {
        r = json_pack("{s:s,s:s}", "Code", "ThrottlingError", "Message", e.msg);
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
    buf_puts(&msg, QR_MSG_TXN_CANCELED "[");
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

/* Cancels a transaction whose member bad was refused for capacity (err holds the
 * refusal): its reason is ThrottlingError, the others' None. */
static void throttled_cancel(size_t n, size_t bad, qr_err *err)
{
    char msg[QR_ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    err_clear(err);
    json_t *reasons = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            reasons, i == bad ? json_pack("{s:s,s:s}", "Code", "ThrottlingError", "Message", msg)
                              : json_pack("{s:s}", "Code", "None"));
    cancel(reasons, err);
    json_decref(reasons);
}

/* Runs a checked transaction: lock, read, evaluate, write, unlock. */
static int run_write(qr_db *db, transact_member *m, size_t n, json_t *per_table, qr_err *err)
{
    buf *keys = malloc(n * sizeof *keys);
    if (keys == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++)
        keys[i] = m[i].ekey; /* shallow: unlock matches by data pointer */
    table **tables = malloc(n * sizeof *tables);
    if (tables == NULL) {
        free(keys);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        tables[i] = m[i].t;
    json_t *reasons = json_array();
    item_txn *x = NULL;
    int rc = -1, failed = 0;
    uint64_t watched = watch_begin_write(db);
    if (txn_begin(db, TXN_ATOMIC, n, tables, keys, &x, err)) goto unlock;
    for (size_t i = 0; i < n; i++) {
        const json_t *old;
        if (txn_read(x, i, &old, err) < 0) goto unlock;
        m[i].old = json_incref((json_t *)old);
    }
    for (size_t i = 0; i < n; i++) {
        int outcome = evaluate(x, i, &m[i], reasons, err);
        if (outcome == -2) goto unlock;
        if (outcome) failed = 1;
    }
    /* The 4 MB limit is on the payload (checked by transact_join), not on the items the
     * actions touch: one transaction may delete or update 5 MB of stored items. */
    if (failed) {
        cancel(reasons, err);
        goto unlock;
    }
    for (size_t i = 0; i < n; i++) {
        transact_member *a = &m[i];
        if (a->kind == TRANSACT_CHECK || (a->old == NULL && a->new_item == NULL)) continue;
        if (a->new_item ? txn_put(x, i, a->new_item, item_size(a->new_item), err)
                        : txn_delete(x, i, err)) {
            /* A member refused for capacity cancels the transaction, nothing written. */
            if (err_is_throttling(err)) throttled_cancel(n, i, err);
            goto unlock;
        }
    }
    if (txn_commit(x, err)) goto unlock;
    for (size_t i = 0; i < n; i++) {
        transact_member *a = &m[i];
        size_t os = a->old ? item_size(a->old) : 0, ns = a->new_item ? item_size(a->new_item) : 0;
        if (a->kind == TRANSACT_CHECK) {
            /* billed as a transactional write of the item it checks, not a read
             * (recorded by the public conformance suite) */
            units_add(per_table, table_name(a->t), 0, 2 * meter_write_units(os));
            continue;
        }
        units_add(per_table, table_name(a->t), 0, 2 * meter_write_units(os > ns ? os : ns));
        if (watched && (a->new_item || a->old))
            watch_write(db, a->t, WATCH_TRANSACTION, a->new_item ? a->new_item : a->old, NULL, 0,
                        2 * meter_write_units(os > ns ? os : ns), watched);
    }
    if (watched) {
        const table **ts = calloc(n ? n : 1, sizeof *ts);
        const json_t **olds = calloc(n ? n : 1, sizeof *olds),
                     **news = calloc(n ? n : 1, sizeof *news);
        size_t k = 0;
        for (size_t i = 0; ts && olds && news && i < n; i++) {
            if (m[i].kind == TRANSACT_CHECK) continue;
            ts[k] = m[i].t;
            olds[k] = m[i].old;
            news[k++] = m[i].new_item;
        }
        if (ts && olds && news) watch_transaction(db, k, ts, olds, news);
        free(ts), free(olds), free(news);
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
static json_t *collection_list(qr_db *db, const transact_member *m, size_t n)
{
    json_t *icm = json_object();
    for (size_t i = 0; i < n; i++) {
        const transact_member *a = &m[i];
        const json_t *item = a->new_item ? a->new_item : a->old;
        if (a->kind == TRANSACT_CHECK || item == NULL || table_lsi_count(a->t) == 0) continue;
        json_t *list = json_object_get(icm, table_name(a->t));
        if (list == NULL) json_object_set_new(icm, table_name(a->t), list = json_array());
        json_array_append_new(list, collection_metrics(db, a->t, item));
    }
    return icm;
}

/* A ClientRequestToken's length, as ExecuteTransaction judges it (TransactWriteItems'
 * token is judged by the shape checker, with ReturnConsumedCapacity and
 * ReturnItemCollectionMetrics after it: recorded in us-east-1, October 2026). */
static void token_error(const char *token, member_errors *m)
{
    if (token == NULL || (*token && strlen(token) <= TOKEN_MAX_LEN)) return;
    char text[QR_ERR_MSG_MAX];
    err_violation_text(text, sizeof text, token, "clientRequestToken",
                       *token ? QR_MSG_LENGTH_AT_MOST : QR_MSG_LENGTH_AT_LEAST,
                       *token ? (long long)TOKEN_MAX_LEN : 1LL);
    member_errors_add(m, text);
}

int transact_check_token(json_t *req, const char **token, qr_err *err)
{
    member_errors m;
    if (param_string(req, "ClientRequestToken", token, err)) return -1;
    member_errors_init(&m);
    token_error(*token, &m);
    return member_errors_finish(&m, err);
}

/* Claims r's token, if it has one: 1 when the same request already ran (*answer is then
 * what a repeat answers), 0 when this request is to run, -1 with err set. */
static int claim(qr_db *db, const transact_write_request *r, json_t **answer, qr_err *err)
{
    char *replay = NULL;
    if (r->token == NULL) return 0;
    int rc = token_claim(db, r->token, r->identity, &replay, err);
    if (rc <= 0) return rc;
    /* A repeat changes nothing; as DynamoDB, it answers with what reading the items
     * transactionally costs (remembered per table when the transaction ran). */
    json_t *reads = json_loads(replay, JSON_ALLOW_NUL, NULL);
    free(replay);
    if (!json_is_array(reads)) {
        json_decref(reads);
        return err_set(err, QR_E_INTERNAL, "cannot decode the remembered response");
    }
    *answer = json_object();
    json_t *cc = capacity_list(reads, r->capacity);
    if (cc) json_object_set_new(*answer, "ConsumedCapacity", cc);
    if (strcmp(r->metrics, "SIZE") == 0)
        json_object_set_new(*answer, "ItemCollectionMetrics", json_object());
    json_decref(reads);
    return 1;
}

/* Runs r, its token claimed (if any), and ends the claim: remembered when the
 * transaction succeeded, forgotten when it failed. */
static int write_claimed(qr_db *db, const transact_write_request *r, json_t **answer, qr_err *err)
{
    json_t *per_table = json_array();
    int rc = -1;
    if (per_table == NULL) {
        err_set(err, QR_E_INTERNAL, "out of memory");
        goto done;
    }
    if (run_write(db, r->m, r->n, per_table, err)) goto done;
    *answer = json_object();
    json_t *cc = capacity_list(per_table, r->capacity);
    if (cc) json_object_set_new(*answer, "ConsumedCapacity", cc);
    if (strcmp(r->metrics, "SIZE") == 0)
        json_object_set_new(*answer, "ItemCollectionMetrics", collection_list(db, r->m, r->n));
    rc = 0;
done:
    if (r->token) {
        json_t *reads = NULL;
        if (rc == 0) {
            reads = json_array();
            for (size_t i = 0; i < r->n; i++) {
                const transact_member *a = &r->m[i];
                const json_t *now = a->kind == TRANSACT_CHECK ? a->old : a->new_item;
                /* a transactional read: twice a strongly consistent one (2 units for
                 * a small item, as the public conformance suite recorded) */
                units_add(reads, table_name(a->t),
                          2 * meter_read_units(now ? item_size(now) : 0, 1), 0);
            }
        }
        token_finish(db, r->token, reads);
        json_decref(reads);
    }
    json_decref(per_table);
    return rc;
}

int transact_write(qr_db *db, const transact_write_request *r, json_t **answer, qr_err *err)
{
    int claimed = claim(db, r, answer, err);
    if (claimed) return claimed > 0 ? 0 : -1;
    return write_claimed(db, r, answer, err);
}

int op_transact_write_items(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *list;
    txn tx = {0};
    transact_write_request r = {0};
    char *identity = NULL;
    int rc = -1;
    if (transact_items(req, &list, err)) return -1;
    if (param_string(req, "ClientRequestToken", &r.token, err)) return -1;
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &r.capacity, err))
        return -1;
    if (param_enum(req, "ReturnItemCollectionMetrics", metrics_modes, "NONE", &r.metrics, err))
        return -1;
    /* What the token stands for is the transaction's items (their text with keys
     * sorted); the Return* parameters shape only the answer, so a retry may change them
     * without a mismatch. */
    if (r.token && (identity = json_dumps(list, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
        return err_set(err, QR_E_INTERNAL, "out of memory");
    r.identity = identity;
    int claimed = claim(db, &r, &c->answer, err);
    if (claimed) {
        rc = claimed > 0 ? 0 : -1;
        goto done;
    }
    if (parse_actions(db, list, 0, &tx, err)) {
        if (r.token) token_finish(db, r.token, NULL);
        goto done;
    }
    r.m = tx.m;
    r.n = tx.n;
    rc = write_claimed(db, &r, &c->answer, err);
done:
    free(identity);
    txn_free(db, &tx);
    return rc;
}

/* ---- TransactGetItems ---- */

int transact_get(qr_db *db, transact_member *m, size_t n, const char *capacity, json_t **answer,
                 qr_err *err)
{
    json_t *per_table = json_array(), *responses = json_array();
    const read_view *snap = read_view_open(db);
    int rc = -1;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        transact_member *a = &m[i];
        watch_req watched;
        if (watch_get(db, a->t, a->key, 1, &watched, err) ||
            item_get_parsed(db, a->t, snap, &a->ekey, 1, &a->old, err) < 0)
            goto done;
        size_t size = a->old ? item_size(a->old) : 0;
        watch_read_done(&watched, a->old != NULL, a->old != NULL, 2 * meter_read_units(size, 1));
        bytes += size;
        if (bytes > TXN_MAX_BYTES) {
            err_validation(err, "%s", MSG_TOO_BIG);
            goto done;
        }
        json_t *r = json_object(), *item = NULL;
        if (a->old)
            item = a->projection ? expr_project(a->projection, a->old) : json_incref(a->old);
        /* a projection that matches nothing of a present item leaves no Item, as none */
        if (item && json_object_size(item) > 0) json_object_set(r, "Item", item);
        json_decref(item);
        json_array_append_new(responses, r);
        units_add(per_table, table_name(a->t), 2 * meter_read_units(size, 1), 0);
    }
    *answer = json_pack("{s:O}", "Responses", responses);
    json_t *cc = capacity_list(per_table, capacity);
    if (cc) json_object_set_new(*answer, "ConsumedCapacity", cc);
    rc = 0;
done:
    read_view_close(db, snap);
    json_decref(responses);
    json_decref(per_table);
    return rc;
}

int op_transact_get_items(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *list;
    const char *capacity;
    txn tx = {0};
    int rc = -1;
    if (transact_items(req, &list, err)) return -1;
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", &capacity, err))
        return -1;
    if (parse_actions(db, list, 1, &tx, err) == 0)
        rc = transact_get(db, tx.m, tx.n, capacity, &c->answer, err);
    txn_free(db, &tx);
    return rc;
}
