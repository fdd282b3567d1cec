/* context.c — what the operations share beyond their parameters: the call itself (its
 * request parsed, its table names noted), the call's context (the region it was received
 * for) and the writing of documents into answers.
 *
 * The context is set by qr_call_in for the calls of one thread. The only table read here
 * is the owner check the dispatcher makes before a schema change. */
#include <string.h>

#include "model/value.h"
#include "ops/ops.h"
#include "ops/shapes.h"
#include "util/jsonread.h"

/* The context of the call this thread is running, for what handlers ask of it. */
static __thread const qr_call_context *current_context;

const qr_call_context *ops_enter_context(const qr_call_context *ctx)
{
    const qr_call_context *outer = current_context;
    current_context = ctx;
    return outer;
}

const char *ops_request_region(void)
{
    const char *r = current_context ? current_context->region : NULL;
    return r && *r ? r : "ddblocal";
}

int json_append(buf *out, const json_t *v)
{
    if (!json_is_object(v) && !json_is_array(v))
        return -1; /* as json_dump_callback without JSON_ENCODE_ANY */
    return value_dump(out, v);
}

int op_call_parse(op_call *c, qr_err *err)
{
    json_error_t je;
    c->req = json_read(c->text, c->len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (c->req == NULL)
        return err_set(err, QR_E_SERIALIZATION, "Malformed request body: %s at line %d, column %d",
                       je.text, je.line, je.column);
    if (!json_is_object(c->req))
        return err_set(err, QR_E_SERIALIZATION, "The request body must be a JSON object");
    if (c->tables) ops_request_tables(c->req, c->tables, c->tables_cap);
    return shapes_check(c->input, c->req, err);
}

int ops_refuse_owned_table(qr_db *db, const json_t *req, qr_err *err)
{
    const char *name = json_string_value(json_object_get(req, "TableName"));
    if (name == NULL) return 0;
    const char *arn_table = strncmp(name, "arn:", 4) == 0 ? strstr(name, ":table/") : NULL;
    table *t = catalog_get(db, arn_table ? arn_table + 7 : name);
    if (t == NULL) return 0;
    int rc = table_refuse_owned(t, err);
    catalog_release(db, t);
    return rc;
}

int op_run(qr_db *db, op_handler h, json_t *req, json_t **answer, qr_err *err)
{
    op_call c = {.req = json_incref(req)};
    buf_init(&c.out, 0);
    *answer = NULL;
    int rc = h(db, &c, err);
    if (rc == 0 && c.answer == NULL &&
        (c.out.data == NULL ||
         (c.answer = json_read(c.out.data, c.out.len, JSON_ALLOW_NUL, NULL)) == NULL))
        rc = err_set(err, QR_E_INTERNAL, "an operation gave no answer");
    if (rc == 0) {
        *answer = c.answer;
        c.answer = NULL;
    }
    op_call_done(&c);
    return rc;
}

void op_call_done(op_call *c)
{
    json_decref(c->req);
    json_decref(c->answer);
    buf_free(&c->out);
    c->req = c->answer = NULL;
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

void ops_request_tables(const json_t *doc, char *out, size_t cap)
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
