/* conn.c — conn.h's two ways to the data: the HTTP client, or qr_open and qr_call in this
 * process, whose error documents are turned into qr_err as the client turns a server's. */
#include "checker/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int call_http(conn *c, const char *op, json_t *body, json_t **out, qr_err *err)
{
    return client_call(&c->http, op, body, out, err);
}

int conn_call_db(conn *c, const char *op, json_t *body, json_t **out, qr_err *err)
{
    *out = NULL;
    char *text = json_dumps(body, JSON_COMPACT);
    if (text == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    qr_response r;
    int rc = qr_call(c->db, op, text, strlen(text), &r);
    free(text);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    if (rc == QR_OK && j) {
        *out = j;
        qr_response_free(&r);
        return 0;
    }
    const char *type = j ? json_string_value(json_object_get(j, "__type")) : NULL;
    const char *msg = j ? json_string_value(json_object_get(j, "message")) : NULL;
    if (msg == NULL && j) msg = json_string_value(json_object_get(j, "Message"));
    err_set(err, rc == QR_OK ? QR_E_INTERNAL : err_type_named(type ? type : r.error_type),
            "%s: %s: %s", op, r.error_type ? r.error_type : "answer is not JSON",
            msg ? msg : r.body);
    json_decref(j);
    qr_response_free(&r);
    return -1;
}

int conn_open_endpoint(conn *c, const char *url, qr_err *err)
{
    memset(c, 0, sizeof *c);
    c->where = url;
    c->call = call_http;
    if (client_init(&c->http, url, err)) {
        client_free(&c->http);
        memset(&c->http, 0, sizeof c->http);
        return -1;
    }
    return 0;
}

int conn_open_data(conn *c, const char *dir, int may_share,
                   void (*log)(void *arg, const char *line, int last), qr_err *err)
{
    memset(c, 0, sizeof *c);
    c->where = dir;
    c->call = conn_call_db;
    char current[4096];
    snprintf(current, sizeof current, "%s/CURRENT", dir);
    if (access(current, F_OK) != 0)
        return err_set(err, QR_E_VALIDATION, "cannot open %s: no database there", dir);
    qr_options o = {0};
    o.log = log;
    char *msg = NULL;
    if (qr_open(dir, &o, &c->db, &msg) == QR_OK) return 0;
    /* RocksDB names its lock when another process holds it: "IO error: lock ... LOCK:
     * Resource temporarily unavailable". */
    int locked = msg && strstr(msg, "lock") != NULL;
    if (may_share && locked) {
        free(msg);
        msg = NULL;
        o.read_only = 1;
        if (qr_open(dir, &o, &c->db, &msg) == QR_OK) {
            c->read_only = 1;
            return 0;
        }
    }
    err_set(err, QR_E_VALIDATION, "cannot open %s: %s", dir, msg ? msg : "unknown error");
    free(msg);
    c->db = NULL;
    return -1;
}

void conn_close(conn *c)
{
    if (c->db) qr_close(c->db);
    if (c->http.curl) client_free(&c->http);
    memset(c, 0, sizeof *c);
}

int conn_call(conn *c, const char *op, json_t *body, json_t **out, qr_err *err)
{
    /* A throttled request is tried again, waiting longer each time (up to a second), as
     * the SDKs do: a tool reading a whole table runs into the table's capacity. */
    useconds_t wait = 20000;
    for (int attempt = 0;; attempt++) {
        qr_err e;
        err_init(&e);
        if (c->call(c, op, body, out, &e) == 0) return 0;
        if (!err_is_throttling(&e) || attempt >= 60) {
            err_set(err, e.type, "%s", e.msg);
            err_clear(&e);
            return -1;
        }
        err_clear(&e);
        usleep(wait);
        if (wait < 1000000) wait *= 2;
    }
}

int conn_scan(conn *c, const json_t *request, int (*each)(void *arg, json_t *item), void *arg,
              qr_err *err)
{
    json_t *req = json_deep_copy(request);
    if (req == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    int rc = 0;
    for (;;) {
        json_t *page;
        if ((rc = conn_call(c, "Scan", req, &page, err)) != 0) break;
        size_t i;
        json_t *item;
        json_array_foreach(json_object_get(page, "Items"), i, item)
        {
            if ((rc = each(arg, item)) != 0) break;
        }
        json_t *last = json_object_get(page, "LastEvaluatedKey");
        if (rc == 0 && last) json_object_set(req, "ExclusiveStartKey", last);
        json_decref(page);
        if (rc || last == NULL) break;
    }
    json_decref(req);
    return rc;
}
