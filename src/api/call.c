/* call.c — qr_call, the one entry point of every request, and the operation table.
 *
 * Like Redis's command table, operations are data: a name, a handler (in src/ops or the
 * PartiQL front end), whether it only reads and which of DynamoDB's two layers checks its
 * values (model/layer.h). qr_call finds the operation, runs its handler and serialises the
 * answer or DynamoDB's error document; handlers never see unknown operations. */
#include <stdlib.h>
#include <string.h>

#include "api/metrics.h"
#include "model/layer.h"
#include "model/value.h"
#include "ops/ops.h"
#include "ops/shapes.h"
#include "partiql/api.h"
#include "util/jsonread.h"
#include "watch/watch.h"

typedef struct operation {
    const char *name;
    op_handler run;
    int reads;        /* only reads: never waits for a disk sync */
    int older_values; /* checks values in DynamoDB's older layer (model/layer.h) */
    int reads_text;   /* its handler reads the request's text before parsing it */
} operation;

static const operation operations[] = {
    {"CreateTable", op_create_table, 0, 0, 0},
    {"DescribeTable", op_describe_table, 1, 0, 0},
    {"ListTables", op_list_tables, 1, 0, 0},
    {"DeleteTable", op_delete_table, 0, 0, 0},
    {"UpdateTable", op_update_table, 0, 0, 0},
    {"UpdateTimeToLive", op_update_time_to_live, 0, 0, 0},
    {"DescribeTimeToLive", op_describe_time_to_live, 1, 0, 0},
    {"DescribeContinuousBackups", op_describe_continuous_backups, 1, 0, 0},
    {"UpdateContinuousBackups", op_update_continuous_backups, 0, 0, 0},
    {"DescribeEndpoints", op_describe_endpoints, 1, 0, 0},
    {"DescribeLimits", op_describe_limits, 1, 0, 0},
    {"TagResource", op_tag_resource, 0, 0, 0},
    {"UntagResource", op_untag_resource, 0, 0, 0},
    {"ListTagsOfResource", op_list_tags_of_resource, 1, 0, 0},
    {"PutItem", op_put_item, 0, 0, 1},
    {"GetItem", op_get_item, 1, 0, 1},
    {"UpdateItem", op_update_item, 0, 0, 0},
    {"DeleteItem", op_delete_item, 0, 0, 0},
    {"Query", op_query, 1, 0, 0},
    {"Scan", op_scan, 1, 1, 0},
    {"BatchGetItem", op_batch_get_item, 1, 0, 0},
    {"BatchWriteItem", op_batch_write_item, 0, 1, 0},
    {"TransactWriteItems", op_transact_write_items, 0, 1, 0},
    {"TransactGetItems", op_transact_get_items, 0, 1,
     0}, /* waits on the locks of writes being synced */
    {"ExecuteStatement", op_execute_statement, 0, 0, 0},
    {"BatchExecuteStatement", op_batch_execute_statement, 0, 0, 0},
    {"ExecuteTransaction", op_execute_transaction, 0, 0, 0},
    {"CreateBackup", op_create_backup, 0, 0, 0},
    {"DescribeBackup", op_describe_backup, 1, 0, 0},
    {"ListBackups", op_list_backups, 1, 0, 0},
    {"DeleteBackup", op_delete_backup, 0, 0, 0},
    {"RestoreTableFromBackup", op_restore_table_from_backup, 0, 0, 0},
    {"RestoreTableToPointInTime", op_restore_table_to_point_in_time, 0, 0, 0},
    {"DescribeContributorInsights", op_describe_contributor_insights, 1, 0, 0},
    {"QuarryAdvanceClock", op_quarry_advance_clock, 1, 0, 0},
    {"UpdateContributorInsights", op_update_contributor_insights, 0, 0, 0},
    {"ListContributorInsights", op_list_contributor_insights, 1, 0, 0},
    {"GetInsightRuleReport", op_get_insight_rule_report, 1, 0, 0},
    {"QuarryLargeItemCollections", op_quarry_large_item_collections, 1, 0, 0},
    {"QuarryDescribeModel", op_quarry_describe_model, 1, 0, 0},
    {"PutResourcePolicy", op_put_resource_policy, 0, 0, 0},
    {"GetResourcePolicy", op_get_resource_policy, 1, 0, 0},
    {"DeleteResourcePolicy", op_delete_resource_policy, 0, 0, 0},
    {"ExportTableToPointInTime", op_export_table_to_point_in_time, 0, 0, 0},
    {"DescribeExport", op_describe_export, 1, 0, 0},
    {"ListExports", op_list_exports, 1, 0, 0},
    {"ImportTable", op_import_table, 0, 0, 0},
    {"DescribeImport", op_describe_import, 1, 0, 0},
    {"ListImports", op_list_imports, 1, 0, 0},
    /* The DynamoDB Streams API (from NSTREAM_FIRST on). */
    {"ListStreams", op_list_streams, 1, 0, 0},
    {"DescribeStream", op_describe_stream, 1, 0, 0},
    {"GetShardIterator", op_get_shard_iterator, 1, 0, 0},
    {"GetRecords", op_get_records, 1, 0, 0},
};
#define NOPS (sizeof operations / sizeof operations[0])
#define NSTREAM_FIRST (NOPS - 4)
_Static_assert(NOPS <= METRICS_UNKNOWN_OP, "metrics.h counts every operation apart");

const char *call_operation_name(size_t i)
{
    return i < NOPS ? operations[i].name : NULL;
}

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

/* Whether DynamoDB answers this failure with a bare {"__type": ...}: it does so for a
 * body that is not JSON at all (the document then names no more than the error). */
static int bare_error(const qr_err *err, const char *request, size_t len)
{
    if (strcmp(err->type, QR_E_SERIALIZATION) != 0) return 0;
    json_t *doc = request ? json_loadb(request, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
    json_decref(doc);
    return doc == NULL;
}

static void fill_error(qr_response *resp, qr_err *err, const char *request, size_t len)
{
    char type[128];
    snprintf(type, sizeof type, "%s%s", err_namespace(err->type), err->type);
    json_t *body =
        bare_error(err, request, len)
            ? json_pack("{s:s}", "__type", type)
            : json_pack("{s:s,s:s}", "__type", type, err_message_member(err->type), err->msg);
    /* An attached object with CancellationReasons (TransactionCanceledException) adds its
     * keys to the body, message included, as it may exceed err->msg, and one with
     * ThrottlingReasons (a throttled request) its reasons; else it is the Item. */
    json_t *extra = err->item;
    if (json_object_get(extra, "CancellationReasons") ||
        json_object_get(extra, "ThrottlingReasons"))
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

static int call(qr_db *db, const struct operation *op, const char *operation, const char *request,
                size_t len, qr_response *resp);

static int answer(op_call *c, qr_response *resp, qr_err *err);

/* Every call is counted for qr_metrics (api/metrics.h): its operation, the time it took
 * and its error type, in a few atomic additions. */
int qr_call_in(qr_db *db, const qr_call_context *ctx, const char *operation, const char *request,
               size_t len, qr_response *resp)
{
    const qr_call_context *outer = ops_enter_context(ctx);
    uint64_t start = metrics_now_ns();
    const struct operation *op = operation ? find_operation(operation) : NULL;
    watch_call outer_call = watch_enter_call(db, op ? op->name : NULL, request, len);
    int rc = call(db, op, operation, request, len, resp);
    watch_leave_call(&outer_call);
    metrics_count(db, op ? (size_t)(op - operations) : METRICS_UNKNOWN_OP, metrics_now_ns() - start,
                  resp->error_type);
    ops_enter_context(outer);
    return rc;
}

/* The operations that change a table's schema, which a table owned by another front end
 * (a CQL table: its schema is the CQL schema's) refuses; the engine refuses writes of its
 * items itself. */
static int changes_schema(const operation *op)
{
    return op->run == op_delete_table || op->run == op_update_table ||
           op->run == op_update_time_to_live;
}

/* Runs operation op (NULL: the name operation is none). */
static int call(qr_db *db, const struct operation *op, const char *operation, const char *request,
                size_t len, qr_response *resp)
{
    qr_err err;
    err_init(&err);
    memset(resp, 0, sizeof *resp);
    op_call c = {.text = request,
                 .len = len,
                 .tables = resp->tables,
                 .tables_cap = sizeof resp->tables,
                 .input = op ? shapes_operation(op->name) : NULL};
    buf_init(&c.out, 0);
    if (op == NULL) {
        err_set(&err, QR_E_UNKNOWN_OP, "An unknown operation was requested: %s",
                operation ? operation : "(none)");
        goto fail;
    }
    if (!op->reads_text && op_call_parse(&c, &err)) goto fail;
    if (changes_schema(op) && ops_refuse_owned_table(db, c.req, &err)) goto fail;
    value_layer outer_layer =
        value_layer_enter(op->older_values ? VALUE_LAYER_OLDER : VALUE_LAYER_CURRENT);
    int failed = op->run(db, &c, &err) != 0;
    if (failed && err.type == NULL)
        err_set(&err, QR_E_INTERNAL,
                "The server encountered an internal error trying to fulfill the request.");
    failed = failed || answer(&c, resp, &err) != 0;
    value_layer_enter(outer_layer);
    if (failed) goto fail;
    resp->http_status = 200;
    op_call_done(&c);
    return QR_OK;
fail:
    op_call_done(&c);
    fill_error(resp, &err, request, len);
    err_clear(&err);
    return QR_ERR;
}

/* Sets resp's body to the handler's answer; -1 with err set if it gave none. */
static int answer(op_call *c, qr_response *resp, qr_err *err)
{
    if (c->answer == NULL) {
        if (c->out.data == NULL)
            return err_set(err, QR_E_INTERNAL,
                           "The server encountered an internal error trying to fulfill the "
                           "request.");
        resp->body = buf_detach(&c->out, &resp->len);
        return 0;
    }
    /* An empty answer (most writes) is "{}" whatever the serialiser. */
    resp->body = json_is_object(c->answer) && json_object_size(c->answer) == 0
                     ? strdup("{}")
                     : json_dumps(c->answer, JSON_COMPACT);
    if (resp->body == NULL)
        return err_set(err, QR_E_INTERNAL, "The response could not be encoded.");
    resp->len = strlen(resp->body);
    return 0;
}

void qr_request_tables(const char *body, size_t len, char *out, size_t cap)
{
    if (cap == 0) return;
    out[0] = '\0';
    if (body == NULL || len == 0) return;
    json_t *doc = json_loadb(body, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (doc == NULL) return;
    ops_request_tables(doc, out, cap);
    json_decref(doc);
}

void qr_response_free(qr_response *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->len = 0;
}
