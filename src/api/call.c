/* call.c — qr_call, the one entry point of every request, and the operation table.
 *
 * Like Redis's command table, operations are data: a name, a handler (in src/ops or the
 * PartiQL front end), whether it only reads and which of DynamoDB's two layers checks its
 * values (model/layer.h). qr_call finds the operation, runs its handler and serialises the
 * answer or DynamoDB's error document; handlers never see unknown operations. */
#include <stdlib.h>
#include <string.h>

#include "model/layer.h"
#include "model/value.h"
#include "ops/ops.h"
#include "partiql/api.h"
#include "util/jsonread.h"

typedef struct operation {
    const char *name;
    op_handler run;           /* returns a JSON document, or */
    op_text_handler run_text; /* writes the response text itself */
    int reads;                /* only reads: never waits for a disk sync */
    int older_values;         /* checks values in DynamoDB's older layer (model/layer.h) */
} operation;

static const operation operations[] = {
    {"CreateTable", op_create_table, NULL, 0, 0},
    {"DescribeTable", op_describe_table, NULL, 1, 0},
    {"ListTables", op_list_tables, NULL, 1, 0},
    {"DeleteTable", op_delete_table, NULL, 0, 0},
    {"UpdateTable", op_update_table, NULL, 0, 0},
    {"UpdateTimeToLive", op_update_time_to_live, NULL, 0, 0},
    {"DescribeTimeToLive", op_describe_time_to_live, NULL, 1, 0},
    {"DescribeContinuousBackups", op_describe_continuous_backups, NULL, 1, 0},
    {"UpdateContinuousBackups", op_update_continuous_backups, NULL, 0, 0},
    {"DescribeEndpoints", op_describe_endpoints, NULL, 1, 0},
    {"DescribeLimits", op_describe_limits, NULL, 1, 0},
    {"TagResource", op_tag_resource, NULL, 0, 0},
    {"UntagResource", op_untag_resource, NULL, 0, 0},
    {"ListTagsOfResource", op_list_tags_of_resource, NULL, 1, 0},
    {"PutItem", op_put_item, NULL, 0, 0},
    {"GetItem", NULL, op_get_item, 1, 0},
    {"UpdateItem", op_update_item, NULL, 0, 0},
    {"DeleteItem", op_delete_item, NULL, 0, 0},
    {"Query", NULL, op_query, 1, 0},
    {"Scan", NULL, op_scan, 1, 1},
    {"BatchGetItem", op_batch_get_item, NULL, 1, 0},
    {"BatchWriteItem", op_batch_write_item, NULL, 0, 1},
    {"TransactWriteItems", op_transact_write_items, NULL, 0, 1},
    {"TransactGetItems", op_transact_get_items, NULL, 0,
     1}, /* waits on the locks of writes being synced */
    {"ExecuteStatement", op_execute_statement, NULL, 0, 0},
    {"BatchExecuteStatement", op_batch_execute_statement, NULL, 0, 0},
    {"ExecuteTransaction", op_execute_transaction, NULL, 0, 0},
    {"CreateBackup", op_create_backup, NULL, 0, 0},
    {"DescribeBackup", op_describe_backup, NULL, 1, 0},
    {"ListBackups", op_list_backups, NULL, 1, 0},
    {"DeleteBackup", op_delete_backup, NULL, 0, 0},
    {"RestoreTableFromBackup", op_restore_table_from_backup, NULL, 0, 0},
    {"RestoreTableToPointInTime", op_restore_table_to_point_in_time, NULL, 0, 0},
    {"DescribeContributorInsights", op_describe_contributor_insights, NULL, 1, 0},
    {"UpdateContributorInsights", op_update_contributor_insights, NULL, 0, 0},
    {"ListContributorInsights", op_list_contributor_insights, NULL, 1, 0},
    {"PutResourcePolicy", op_put_resource_policy, NULL, 0, 0},
    {"GetResourcePolicy", op_get_resource_policy, NULL, 1, 0},
    {"DeleteResourcePolicy", op_delete_resource_policy, NULL, 0, 0},
    /* The DynamoDB Streams API (from NSTREAM_FIRST on). */
    {"ListStreams", op_list_streams, NULL, 1, 0},
    {"DescribeStream", op_describe_stream, NULL, 1, 0},
    {"GetShardIterator", op_get_shard_iterator, NULL, 1, 0},
    {"GetRecords", op_get_records, NULL, 1, 0},
};
#define NOPS (sizeof operations / sizeof operations[0])
#define NSTREAM_FIRST (NOPS - 4)

/* The names of operations [from, to), NULL-terminated, in names. */
static const char *const *names_of(const char **names, size_t from, size_t to)
{
    if (names[0] == NULL)
        for (size_t i = from; i < to; i++)
            names[i - from] = operations[i].name;
    return names;
}

const char *const *qr_operations(void)
{
    static const char *names[NSTREAM_FIRST + 1];
    return names_of(names, 0, NSTREAM_FIRST);
}

const char *const *qr_stream_operations(void)
{
    static const char *names[NOPS - NSTREAM_FIRST + 1];
    return names_of(names, NSTREAM_FIRST, NOPS);
}

static const operation *find_operation(const char *name)
{
    /* Calls come in runs of one operation, so the last one found is tried first (and the
     * server passes the table's own name, which matches by address). */
    static _Thread_local const operation *last;
    if (last && (last->name == name || strcmp(last->name, name) == 0)) return last;
    for (size_t i = 0; i < NOPS; i++)
        if (strcmp(operations[i].name, name) == 0) return last = &operations[i];
    return NULL;
}

int qr_operation_writes(const char *name)
{
    const operation *op = name ? find_operation(name) : NULL;
    return op == NULL || !op->reads;
}

/* The member that carries an error's text: "message" for most of DynamoDB's errors,
 * "Message" for the three whose shapes name it so in DynamoDB's service model, which is
 * the only spelling some SDKs read (the AWS SDK for Go v2's ErrorMessage()). */
static const char *message_member(const char *type)
{
    static const char *const capitalised[] = {QR_E_TXN_CANCELED, QR_E_IDEMPOTENT,
                                              QR_E_TXN_IN_PROGRESS, NULL};
    for (int i = 0; capitalised[i]; i++)
        if (strcmp(type, capitalised[i]) == 0) return "Message";
    return "message";
}

static void fill_error(qr_response *resp, qr_err *err)
{
    char type[128];
    snprintf(type, sizeof type, "%s%s", err_namespace(err->type), err->type);
    json_t *body = json_pack("{s:s,s:s}", "__type", type, message_member(err->type), err->msg);
    /* An attached object with CancellationReasons (TransactionCanceledException) adds its
     * keys to the body, message included, as it may exceed err->msg; else it is the Item. */
    json_t *extra = err->item;
    if (json_object_get(extra, "CancellationReasons"))
        json_object_update(body, extra);
    else if (extra)
        json_object_set(body, "Item", extra);
    resp->body = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (resp->body == NULL) { /* never expected: messages are made valid UTF-8 by err_set */
        char fallback[256];
        snprintf(fallback, sizeof fallback,
                 "{\"__type\":\"%s\",\"message\":\"The error could not be encoded.\"}", type);
        resp->body = strdup(fallback);
    }
    resp->len = strlen(resp->body);
    resp->http_status = err_http_status(err->type);
    resp->error_type = err->type;
    json_decref(body);
}

int qr_call(qr_db *db, const char *operation, const char *request, size_t len, qr_response *resp)
{
    return qr_call_in(db, NULL, operation, request, len, resp);
}

static int call(qr_db *db, const char *operation, const char *request, size_t len,
                qr_response *resp);
static void request_tables(const json_t *doc, char *out, size_t cap);
static int call_handler(qr_db *db, const struct operation *op, json_t *req, qr_response *resp,
                        json_t **out, qr_err *err);

int qr_call_in(qr_db *db, const qr_call_context *ctx, const char *operation, const char *request,
               size_t len, qr_response *resp)
{
    const qr_call_context *outer = ops_enter_context(ctx);
    int rc = call(db, operation, request, len, resp);
    ops_enter_context(outer);
    return rc;
}

static int call(qr_db *db, const char *operation, const char *request, size_t len,
                qr_response *resp)
{
    qr_err err;
    err_init(&err);
    memset(resp, 0, sizeof *resp);
    const struct operation *op = operation ? find_operation(operation) : NULL;
    json_t *req = NULL, *out = NULL;
    if (op == NULL) {
        err_set(&err, QR_E_UNKNOWN_OP, "An unknown operation was requested: %s",
                operation ? operation : "(none)");
        goto fail;
    }
    if (op->run == op_put_item) {
        int fast = op_put_item_fast(db, request, len, resp, &err);
        if (fast > 0) return QR_OK;
        if (fast < 0) goto fail;
    }
    json_error_t je;
    req = json_read(request, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (req == NULL) {
        err_set(&err, QR_E_SERIALIZATION, "Malformed request body: %s at line %d, column %d",
                je.text, je.line, je.column);
        goto fail;
    }
    if (!json_is_object(req)) {
        err_set(&err, QR_E_SERIALIZATION, "The request body must be a JSON object");
        goto fail;
    }
    request_tables(req, resp->tables, sizeof resp->tables);
    value_layer outer_layer =
        value_layer_enter(op->older_values ? VALUE_LAYER_OLDER : VALUE_LAYER_CURRENT);
    int failed = call_handler(db, op, req, resp, &out, &err) != 0;
    value_layer_enter(outer_layer);
    if (failed) goto fail;
    resp->http_status = 200;
    json_decref(out);
    json_decref(req);
    return QR_OK;
fail:
    json_decref(out);
    json_decref(req);
    fill_error(resp, &err);
    err_clear(&err);
    return QR_ERR;
}

/* Runs op's handler and sets resp's body; -1 with err set if it fails. */
static int call_handler(qr_db *db, const struct operation *op, json_t *req, qr_response *resp,
                        json_t **out, qr_err *err)
{
    if (op->run_text) {
        buf text;
        buf_init(&text, 0);
        if (op->run_text(db, req, &text, err) != 0) {
            buf_free(&text);
            if (err->type == NULL)
                err_set(err, QR_E_INTERNAL,
                        "The server encountered an internal error trying to fulfill the request.");
            return -1;
        }
        resp->body = buf_detach(&text, &resp->len);
        return 0;
    }
    if (op->run(db, req, out, err) != 0 || *out == NULL) {
        if (err->type == NULL)
            err_set(err, QR_E_INTERNAL,
                    "The server encountered an internal error trying to fulfill the request.");
        return -1;
    }
    /* An empty answer (most writes) is "{}" whatever the serialiser. */
    resp->body = json_is_object(*out) && json_object_size(*out) == 0
                     ? strdup("{}")
                     : json_dumps(*out, JSON_COMPACT);
    if (resp->body == NULL)
        return err_set(err, QR_E_INTERNAL, "The response could not be encoded.");
    resp->len = strlen(resp->body);
    return 0;
}

static void append_name(char *out, size_t cap, size_t *used, const char *name)
{
    size_t n = strlen(name);
    if (*used && *used + 1 < cap) out[(*used)++] = ',';
    if (*used + n >= cap) n = cap - 1 - *used;
    memcpy(out + *used, name, n);
    *used += n;
    out[*used] = '\0';
}

/* Whether name is already one of the comma-separated names in list. */
static int has_name(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = list; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && memcmp(s, name, n) == 0) return 1;
        if (e == NULL) break;
        s = e + 1;
    }
    return 0;
}

static void request_tables(const json_t *doc, char *out, size_t cap)
{
    if (cap == 0) return;
    out[0] = '\0';
    size_t used = 0;
    const char *t = json_string_value(json_object_get(doc, "TableName"));
    json_t *items = json_object_get(doc, "RequestItems");
    json_t *txn = json_object_get(doc, "TransactItems");
    if (t) {
        append_name(out, cap, &used, t);
    } else if (json_is_object(items)) {
        const char *k;
        json_t *v;
        json_object_foreach(items, k, v) append_name(out, cap, &used, k);
    } else if (json_is_array(txn)) {
        size_t i;
        json_t *entry;
        json_array_foreach(txn, i, entry)
        {
            const char *k;
            json_t *v;
            json_object_foreach(entry, k, v)
            {
                const char *name = json_string_value(json_object_get(v, "TableName"));
                if (name && !has_name(out, name)) append_name(out, cap, &used, name);
            }
        }
    } else {
        /* The Streams API names its table inside the stream's ARN: …:table/<name>/stream/… */
        const char *arn = json_string_value(json_object_get(doc, "StreamArn"));
        const char *from = arn ? strstr(arn, ":table/") : NULL;
        const char *to = from ? strstr(from + 7, "/stream/") : NULL;
        if (to && to - (from + 7) < 256) {
            char name[256];
            memcpy(name, from + 7, (size_t)(to - (from + 7)));
            name[to - (from + 7)] = '\0';
            append_name(out, cap, &used, name);
        }
    }
}

void qr_request_tables(const char *body, size_t len, char *out, size_t cap)
{
    if (cap == 0) return;
    out[0] = '\0';
    if (body == NULL || len == 0) return;
    json_t *doc = json_loadb(body, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (doc == NULL) return;
    request_tables(doc, out, cap);
    json_decref(doc);
}

void qr_response_free(qr_response *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->len = 0;
}
