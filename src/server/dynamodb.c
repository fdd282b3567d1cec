/* dynamodb.c — DynamoDB's JSON protocol over HTTP, on h2o and the server core (server.h).
 *
 * A request h2o has read on a core loop is first refused if its framing or header syntax
 * is in doubt (framing.h) or, without credentials, if its Host or Origin is foreign
 * (origin.h); then it is judged in DynamoDB's order: health check, content type, content
 * coding (a gzip or deflate body is decoded), JSON, X-Amz-Target, SigV4; the core then
 * runs its call, and the answer leaves with DynamoDB's headers, compressed to clients
 * that accept it. GET /metrics, signed as the API's requests are, is answered with
 * qr_metrics' text, and GET /console with the console's files (console.h), unsigned: they
 * hold no data, and the page signs its own API calls. Loops, workers and flushing are the
 * core's. */
#include "server/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/core.h" /* and h2o.h, which h2o/http1.h needs first */
#include <h2o/http1.h>

#include "server/bodybound.h"
#include "server/budget.h"
#include "server/console.h"
#include "server/framing.h"
#include "server/origin.h"
#include "server/wire.h"
#include "util/buf.h"

#define UNKNOWN_OP_XML "<UnknownOperationException/>\n"
#define HEALTH_PREFIX "healthy: "
#define METRICS_PATH "/metrics"
/* Prometheus's text exposition format (qr_metrics writes version 0.0.4). */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4"
#define SERVICE "dynamodb"
/* A connection h2o closes after answering an unread body itself (413, 400) lingers until
 * this many bodies' worth of bytes were read and dropped (see core_linger_on_close), so
 * that the client can finish sending and read the answer instead of a reset. */
#define LINGER_BODIES 2
/* DynamoDB answers a request whose request line and headers pass 16 KB with 400 Bad
 * Request, before reading its signature (recorded by Alternator's suite against it). */
#define MAX_HEAD_BYTES (16 << 10)

struct server {
    server_config cfg;
    qr_db *db; /* for GET /metrics; calls reach it through the core */
    const char *const *ops;
    const char *const *stream_ops; /* the DynamoDB Streams API's */
    h2o_globalconf_t h2o;
    core_protocol proto;
    core *core;
    budget budget;    /* SERVER_EXCHANGE_BUDGET, over all loops */
    bodybound bodies; /* SERVER_BODY_BOUND, over all loops */
};

/* What h2o keeps for the protocol on one of the core's loops. */
typedef struct http_loop {
    server *s;
    core_loop *core;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept;
    budget_loop budget;
    bodybound_loop bodies;
    h2o_timeout_t send_check; /* a SEND_CHECKS-th of the server's timeout (held_body) */
} http_loop;

/* The handler h2o calls, with the server it belongs to. */
typedef struct handler {
    h2o_handler_t super;
    server *s;
} handler;

/* What a log line says of a request besides its answer. */
typedef struct exchange {
    struct timespec start;
    const char *body; /* the request body, for the table names */
    size_t len;
    const char *tables; /* the table names, once the engine has read them (else NULL) */
    int origin_ok;      /* without credentials: the request's Origin may read the answer */
} exchange;

/* A request's call of the engine, in the request's memory pool: when h2o disposes of the
 * request (its client gone), the core drops its answer. From when it starts (the budget,
 * budget.h) until it is disposed of, it is charged its request body and, once the call
 * has built it, its answer at the size it was built (compressed, it holds less): one
 * charge and one release cover the exchange. */
typedef struct http_call {
    core_call call;
    server *s;
    http_loop *loop;
    h2o_req_t *req;
    exchange x;
    const char *ctype;
    char region[64];
    budget_wait wait;
    size_t charge;
} http_call;

static void linger_keep(server *s, h2o_req_t *req);

/* ---- logging ---- */

static void log_request(server *s, const exchange *x, const char *op, int status, const char *error,
                        const char *message, const char *id)
{
    server_log_level lvl = status >= 500   ? SERVER_LOG_ERROR
                           : status >= 400 ? SERVER_LOG_WARN
                                           : SERVER_LOG_INFO;
    if (lvl < s->cfg.log_level) return;
    char parsed[sizeof((qr_response *)0)->tables] = "";
    const char *tables = x->tables;
    if (tables == NULL) {
        /* Answered before the engine read the body (an error): read it here. */
        if (x->len) qr_request_tables(x->body, x->len, parsed, sizeof parsed);
        tables = parsed;
    }
    static const char *const names[] = {"debug", "info", "warn", "error", "none"};
    if (s->cfg.log_level == SERVER_LOG_DEBUG && message && *message) {
        core_log("%s %s table=%s status=%d error=%s us=%ld bytes=%zu id=%s message=\"%.300s\"",
                 names[lvl], op ? op : "-", *tables ? tables : "-", status, error ? error : "-",
                 core_elapsed_us(&x->start), x->len, id, message);
    } else {
        core_log("%s %s table=%s status=%d error=%s us=%ld", names[lvl], op ? op : "-",
                 *tables ? tables : "-", status, error ? error : "-", core_elapsed_us(&x->start));
    }
}

/* ---- responses ---- */

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 413:
        return "Request Entity Too Large";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
    }
}

/* Decimal digits of v into out (at least 21 bytes), NUL-terminated; returns the length. */
static size_t format_decimal(uint64_t v, char *out)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* The value of the last header called name (DynamoDB heeds the last of repeated ones). */
static const h2o_iovec_t *last_header(h2o_req_t *req, const char *name, size_t len)
{
    const h2o_iovec_t *v = NULL;
    for (ssize_t i = -1; (i = h2o_find_header_by_str(&req->headers, name, len, i)) >= 0;)
        v = &req->headers.entries[i].value;
    return v;
}

/* Adds x-amzn-RequestId (a fresh id, which it returns) and x-amz-crc32 of body. */
static const char *stamp(h2o_req_t *req, const char *body, size_t len)
{
    char *id = h2o_mem_alloc_pool(&req->pool, 53);
    char *crc = h2o_mem_alloc_pool(&req->pool, 21);
    wire_request_id(id);
    size_t crc_len = format_decimal(wire_crc32(body, len), crc);
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("x-amzn-requestid"), 0,
                          "x-amzn-RequestId", id, 52);
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("x-amz-crc32"), 0, NULL, crc,
                          crc_len);
    return id;
}

/* ---- CORS ----
 * A request a browser script makes carries Origin. With credentials, like DynamoDB,
 * quarry then lets any origin read the answer and the headers a client needs, and
 * answers a preflight (OPTIONS) by allowing the method and headers it asks for. Without
 * credentials only the origins origin.h allows are answered, each by its own name; the
 * others are refused before anything runs (refuse_foreign). A request without Origin
 * gets no CORS headers. */
#define CORS_EXPOSE_HEADERS "x-amzn-RequestId,x-amz-crc32,Date"
#define CORS_MAX_AGE "172800"

static const h2o_iovec_t *find_header(h2o_req_t *req, const char *name, size_t len)
{
    ssize_t i = h2o_find_header_by_str(&req->headers, name, len, -1);
    return i < 0 ? NULL : &req->headers.entries[i].value;
}

static void add_cors_headers(h2o_req_t *req, const h2o_iovec_t *origin)
{
    if (origin) {
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ACCESS_CONTROL_ALLOW_ORIGIN, NULL,
                       origin->base, origin->len);
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_VARY, NULL, H2O_STRLIT("Origin"));
    } else {
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ACCESS_CONTROL_ALLOW_ORIGIN, NULL,
                       H2O_STRLIT("*"));
    }
    h2o_add_header_by_str(&req->pool, &req->res.headers,
                          H2O_STRLIT("access-control-expose-headers"), 0,
                          "Access-Control-Expose-Headers", H2O_STRLIT(CORS_EXPOSE_HEADERS));
}

/* Adds to a preflight's answer what it asked to be allowed. */
static void add_preflight_headers(h2o_req_t *req)
{
    h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("access-control-max-age"), 0,
                          "Access-Control-Max-Age", H2O_STRLIT(CORS_MAX_AGE));
    static const struct {
        const char *asked, *allowed, *name;
    } echoes[] = {{"access-control-request-method", "access-control-allow-methods",
                   "Access-Control-Allow-Methods"},
                  {"access-control-request-headers", "access-control-allow-headers",
                   "Access-Control-Allow-Headers"}};
    for (size_t i = 0; i < sizeof echoes / sizeof echoes[0]; i++) {
        const h2o_iovec_t *v = find_header(req, echoes[i].asked, strlen(echoes[i].asked));
        if (v)
            h2o_add_header_by_str(&req->pool, &req->res.headers, echoes[i].allowed,
                                  strlen(echoes[i].allowed), 0, echoes[i].name, v->base, v->len);
    }
}

/* How send_response holds a body while h2o sends it: one in static memory is sent where it
 * is, one the caller allocated (malloc) is taken and freed when h2o disposes of the request
 * (after its last byte went out), and any other is copied into the request's pool. A page
 * is so held once, not copied, for as long as a slow client takes to read it. A taken
 * body is charged to the budget, unless BODY_CHARGED says its call's charge covers it
 * (http_call). */
typedef enum body_hold { BODY_COPY, BODY_STATIC, BODY_TAKEN, BODY_CHARGED } body_hold;

/* A taken body while h2o sends it: charged to the server's budget, and watched by a
 * timer that cuts the connection if its client takes nothing of the answer for the
 * server's timeout (h2o's HTTP/1 times out reads, not writes, and tells of no progress
 * within a write: the kernel's count of the bytes the client took does), so that a client
 * that stops reading holds its share for that long at most, and a slow one that reads on
 * is not cut. */
#define SEND_CHECKS 4
typedef struct held_body {
    char *data;
    size_t len, charge;
    http_loop *loop;
    h2o_req_t *req;
    h2o_timeout_entry_t stalled;
    uint64_t taken;              /* core_bytes_taken when last seen to grow, */
    struct timespec progress_at; /* at this time */
} held_body;

static void free_taken_body(void *p)
{
    held_body *h = p;
    if (h2o_timeout_is_linked(&h->stalled)) h2o_timeout_unlink(&h->stalled);
    free(h->data);
    budget_charge(&h->loop->budget, &h->charge, 0);
}

/* Marks now as the send's last progress, and looks again in a while. */
static void watch_send(held_body *h, h2o_socket_t *sock)
{
    h->taken = sock ? core_bytes_taken(sock) : 0;
    clock_gettime(CLOCK_MONOTONIC, &h->progress_at);
    h2o_timeout_link(h->loop->ctx.loop, &h->loop->send_check, &h->stalled);
}

static void on_send_stalled(h2o_timeout_entry_t *entry)
{
    held_body *h = H2O_STRUCT_FROM_MEMBER(held_body, stalled, entry);
    h2o_conn_t *conn = h->req->conn;
    h2o_socket_t *sock = conn->callbacks->get_socket ? conn->callbacks->get_socket(conn) : NULL;
    unsigned timeout = h->loop->s->cfg.timeout_seconds;
    if (sock && core_bytes_taken(sock) != h->taken) {
        watch_send(h, sock);
        return;
    }
    if (core_elapsed_us(&h->progress_at) < (long)timeout * 1000000L) {
        h2o_timeout_link(h->loop->ctx.loop, &h->loop->send_check, &h->stalled);
        return;
    }
    if (h->loop->s->cfg.log_level <= SERVER_LOG_WARN)
        core_log("warn http status=%d error=SendTimeout message=\"the client took nothing of "
                 "a %zu-byte answer for %u s: connection closed\"",
                 h->req->res.status, h->len, timeout);
    /* h2o's pending write then fails, and h2o closes the connection and disposes of the
     * request, which frees the body. */
    if (sock) shutdown(h2o_socket_get_fd(sock), SHUT_RDWR);
}

/* Ties data (malloc'd, len bytes) to the request's pool, charged to the budget (charge
 * bytes) and timed as held_body says: freed when h2o clears the pool. */
static void keep_until_disposed(h2o_req_t *req, char *data, size_t len, size_t charge)
{
    http_loop *l = H2O_STRUCT_FROM_MEMBER(http_loop, ctx, req->conn->ctx);
    held_body *h = h2o_mem_alloc_shared(&req->pool, sizeof *h, free_taken_body);
    *h = (held_body){.data = data, .len = len, .loop = l, .req = req};
    h->stalled.cb = on_send_stalled;
    budget_charge(&l->budget, &h->charge, charge);
    if (l->s->cfg.timeout_seconds) {
        h2o_conn_t *conn = req->conn;
        watch_send(h, conn->callbacks->get_socket ? conn->callbacks->get_socket(conn) : NULL);
    }
}

/* h2o_send_inline's answer, with the body sent from where it is (the pool or static
 * memory, alive until the request is disposed of). A HEAD answer sends no body. */
static void send_body(h2o_req_t *req, const char *body, size_t len)
{
    static h2o_generator_t whole = {NULL, NULL};
    h2o_start_response(req, &whole);
    if (h2o_memis(req->input.method.base, req->input.method.len, H2O_STRLIT("HEAD"))) {
        h2o_send(req, NULL, 0, H2O_SEND_STATE_FINAL);
        return;
    }
    h2o_iovec_t v = h2o_iovec_init(body, len);
    h2o_send(req, &v, 1, H2O_SEND_STATE_FINAL);
}

/* Sends body with DynamoDB's headers, holding it as hold says (BODY_TAKEN, BODY_CHARGED:
 * body is the caller's malloc'd memory, freed here or with the request). */
static void send_response(server *s, h2o_req_t *req, const exchange *x, int status,
                          const char *ctype, const char *body, size_t len, body_hold hold,
                          const char *op, const char *error, const char *message)
{
    int charged = hold == BODY_CHARGED;
    if (charged) hold = BODY_TAKEN;
    /* Like DynamoDB, bodies from 4 KB on go compressed to a client that accepts it; the
     * checksum is then of the compressed bytes. The plain body is freed once the log line
     * (whose message may point into it) is written. */
    char *plain_taken = hold == BODY_TAKEN ? (char *)body : NULL;
    const char *coding = NULL;
    if (len >= WIRE_COMPRESS_MIN) {
        const h2o_iovec_t *ae = last_header(req, H2O_STRLIT("accept-encoding"));
        wire_coding c = ae ? wire_accept_coding(ae->base, ae->len) : WIRE_IDENTITY;
        buf packed;
        buf_init(&packed, 0);
        if (c != WIRE_IDENTITY && wire_encode(c, body, len, &packed) == 0) {
            coding = c == WIRE_GZIP ? "gzip" : "deflate";
            body = packed.data;
            len = packed.len;
            hold = BODY_TAKEN;
        } else {
            buf_free(&packed);
        }
    }
    req->res.status = status;
    req->res.reason = reason_phrase(status);
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, ctype,
                   strlen(ctype));
    const char *id = stamp(req, body, len);
    if (coding)
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_ENCODING, NULL, coding,
                       strlen(coding));
    const h2o_iovec_t *origin = find_header(req, H2O_STRLIT("origin"));
    if (origin && s->cfg.keys)
        add_cors_headers(req, NULL);
    else if (origin && x->origin_ok)
        add_cors_headers(req, origin);
    /* Once draining, every answer asks its client to go elsewhere. */
    if (core_draining(s->core)) req->http1_is_persistent = 0;
    log_request(s, x, op, status, error, message, id);
    if (hold == BODY_TAKEN && body != plain_taken) free(plain_taken);
    if (hold == BODY_TAKEN)
        keep_until_disposed(req, (char *)body, len, charged ? 0 : len);
    else if (hold == BODY_COPY)
        body = h2o_strdup(&req->pool, body, len).base;
    send_body(req, body, len);
}

/* The error document of type with message as its text (NULL: none, as DynamoDB answers
 * a body that is no JSON and an unknown target); why is what the log line says. */
static void send_error_doc(server *s, h2o_req_t *req, const exchange *x, int status,
                           const char *ctype, const char *op, const char *type, const char *message,
                           const char *why)
{
    buf b;
    buf_init(&b, 0);
    if (wire_error_body(&b, type, message)) {
        buf_free(&b);
        h2o_send_error_500(req, "Internal Server Error", "out of memory", 0);
        return;
    }
    send_response(s, req, x, status, ctype, b.data, b.len, BODY_TAKEN, op, type, why);
}

static void send_error(server *s, h2o_req_t *req, const exchange *x, int status, const char *ctype,
                       const char *op, const char *type, const char *message)
{
    send_error_doc(s, req, x, status, ctype, op, type, message, message);
}

/* The engine's answer to a call (or a 500 when it gave none); its body is taken from resp
 * (resp->body is left NULL), already charged to the budget as the call's. */
static void send_call_response(server *s, h2o_req_t *req, const exchange *x, const char *ctype,
                               const char *op, qr_response *resp)
{
    if (resp->body == NULL) {
        send_error(s, req, x, 500, ctype, op, QR_E_INTERNAL, "the engine returned no response");
        return;
    }
    const char *message = NULL;
    if (resp->error_type && s->cfg.log_level == SERVER_LOG_DEBUG) message = resp->body;
    exchange called = *x;
    called.tables = resp->tables;
    int status = resp->http_status ? resp->http_status : 200;
    /* Only the HTTP layer knows the address the client reached: DescribeEndpoints names
     * it, so that a client sent there (endpoint discovery) comes back here. A tagging
     * call's success goes out with no body at all, as DynamoDB answers it. */
    buf at;
    buf_init(&at, 0);
    const h2o_iovec_t *host = &req->input.authority;
    if (status == 200 && wire_empty_success(op)) {
        send_response(s, req, &called, status, ctype, "", 0, BODY_STATIC, op, NULL, NULL);
    } else if (status == 200 && strcmp(op, "DescribeEndpoints") == 0 && host->len &&
               wire_endpoints_at(resp->body, resp->len, host->base, host->len, &at) == 0) {
        send_response(s, req, &called, status, ctype, at.data, at.len, BODY_CHARGED, op, NULL,
                      NULL);
        buf_init(&at, 0);
    } else {
        char *body = resp->body;
        resp->body = NULL;
        send_response(s, req, &called, status, ctype, body, resp->len, BODY_CHARGED, op,
                      resp->error_type, message);
    }
    buf_free(&at);
}

/* ---- h2o's own answers ---- */

/* h2o answers some requests itself before on_req sees them: a body past the limit (413),
 * a broken chunked coding or Content-Length (400), an Expect it cannot meet (417). It
 * binds those requests to the host's fallback path, whose filter this is: each such
 * answer leaves as DynamoDB's error document, with x-amzn-RequestId and x-amz-crc32, and
 * is logged like any other. */
typedef struct early_filter {
    h2o_filter_t super;
    server *s;
} early_filter;

typedef struct early_ostream {
    h2o_ostream_t super;
    server *s;
    int replaced;
} early_ostream;

static void early_send(h2o_ostream_t *self, h2o_req_t *req, h2o_iovec_t *bufs, size_t bufcnt,
                       h2o_send_state_t state)
{
    early_ostream *o = (early_ostream *)self;
    if (req->res.status < 400) {
        h2o_ostream_send_next(self, req, bufs, bufcnt, state);
        return;
    }
    if (o->replaced) { /* the document went out whole with the first call */
        h2o_ostream_send_next(self, req, NULL, 0, state);
        return;
    }
    o->replaced = 1;
    linger_keep(o->s, req);
    /* h2o's own text, e.g. "broken chunked-encoding". */
    char said[128];
    size_t n = 0;
    for (size_t i = 0; i < bufcnt; i++)
        for (size_t k = 0; k < bufs[i].len && n < sizeof said - 1; k++)
            if (bufs[i].base[k] != '\n') said[n++] = bufs[i].base[k];
    said[n] = '\0';
    int status = req->res.status;
    if (status == 400) req->res.reason = reason_phrase(status); /* h2o says "Invalid Request" */
    const char *type = status == 413   ? "RequestEntityTooLarge"
                       : status >= 500 ? QR_E_INTERNAL
                                       : QR_E_SERIALIZATION;
    char msg[256];
    if (status == 413)
        snprintf(msg, sizeof msg,
                 "Request entity too large: a request body may hold at most %zu bytes",
                 o->s->cfg.max_body);
    else
        snprintf(msg, sizeof msg, "The request could not be read: %s", n ? said : req->res.reason);
    buf b;
    buf_init(&b, 0);
    h2o_iovec_t doc = h2o_iovec_init(NULL, 0);
    if (wire_error_body(&b, type, msg) == 0) {
        doc.base = h2o_mem_alloc_pool(&req->pool, b.len);
        memcpy(doc.base, b.data, b.len);
        doc.len = b.len;
    }
    buf_free(&b);
    for (size_t i = 0; i < req->res.headers.size; i++)
        if (req->res.headers.entries[i].name == &H2O_TOKEN_CONTENT_TYPE->buf)
            req->res.headers.entries[i].value = h2o_iovec_init(H2O_STRLIT(WIRE_JSON_CONTENT_TYPE));
    req->res.content_length = doc.len;
    const char *id = stamp(req, doc.base, doc.len);
    exchange x = {.tables = NULL};
    clock_gettime(CLOCK_MONOTONIC, &x.start);
    x.body = "";
    log_request(o->s, &x, NULL, status, type, msg, id);
    h2o_ostream_send_next(self, req, &doc, 1, state);
}

static void on_early_answer(h2o_filter_t *self, h2o_req_t *req, h2o_ostream_t **slot)
{
    early_ostream *o = (early_ostream *)h2o_add_ostream(req, sizeof *o, slot);
    o->super.do_send = early_send;
    o->s = ((early_filter *)self)->s;
    o->replaced = 0;
    h2o_setup_next_ostream(req, &o->super.next);
}

/* ---- judging the request ---- */

/* Header and query pairs for SigV4: on the stack for ordinary requests, on the heap past that. */
typedef struct pairs {
    sigv4_pair *v;
    size_t n, cap;
    sigv4_pair local[32];
} pairs;

static int pairs_add(pairs *p, const char *name, size_t name_len, const char *value,
                     size_t value_len)
{
    if (p->v == NULL) {
        p->v = p->local;
        p->cap = sizeof p->local / sizeof p->local[0];
    }
    if (p->n == p->cap) {
        size_t cap = p->cap * 2;
        sigv4_pair *v = p->v == p->local ? malloc(cap * sizeof *v) : realloc(p->v, cap * sizeof *v);
        if (v == NULL) return -1;
        if (p->v == p->local) memcpy(v, p->local, sizeof p->local);
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (sigv4_pair){name, name_len, value, value_len};
    return 0;
}

static void pairs_free(pairs *p)
{
    if (p->v != p->local) free(p->v);
}

/* The raw query string split at '&' and '=' (still percent-encoded, as SigV4 signs it). */
static int split_query(const char *q, size_t len, pairs *out)
{
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && q[end] != '&')
            end++;
        if (end > i) {
            const char *eq = memchr(q + i, '=', end - i);
            int rc = eq ? pairs_add(out, q + i, (size_t)(eq - (q + i)), eq + 1,
                                    (size_t)(q + end - eq - 1))
                        : pairs_add(out, q + i, end - i, NULL, 0);
            if (rc) return -1;
        }
        i = end + 1;
    }
    return 0;
}

/* Verifies the request's signature; 0, or -1 with e set. h2o keeps Host and
 * Content-Length out of the header list, so they are put back as the client sent them. */
static int authenticate(server *s, h2o_req_t *req, const char *body, size_t body_len, qr_err *e)
{
    pairs headers = {0}, query = {0};
    char length[21];
    size_t n = format_decimal(body_len, length);
    int failed =
        pairs_add(&headers, "host", 4, req->input.authority.base, req->input.authority.len) ||
        pairs_add(&headers, "content-length", 14, length, n);
    for (size_t i = 0; !failed && i < req->headers.size; i++) {
        const h2o_header_t *h = req->headers.entries + i;
        failed = pairs_add(&headers, h->name->base, h->name->len, h->value.base, h->value.len);
    }
    const char *path = req->input.path.base;
    size_t path_len = req->input.path.len;
    char *raw_path = NULL;
    const char *q = memchr(path, '?', path_len);
    if (!failed && q) failed = split_query(q + 1, path_len - (size_t)(q + 1 - path), &query);
    /* sigv4 wants the path NUL-terminated and without its query. */
    if (!failed) {
        size_t plen = q ? (size_t)(q - path) : path_len;
        raw_path = h2o_mem_alloc_pool(&req->pool, plen + 1);
        memcpy(raw_path, path, plen);
        raw_path[plen] = '\0';
    }
    int rc;
    if (failed) {
        rc = err_set(e, QR_E_INTERNAL, "out of memory reading the request headers");
    } else {
        char method[16];
        size_t mlen =
            req->input.method.len < sizeof method - 1 ? req->input.method.len : sizeof method - 1;
        memcpy(method, req->input.method.base, mlen);
        method[mlen] = '\0';
        sigv4_request sr = {method,    raw_path,  query.v, query.n,
                            headers.v, headers.n, body,    body_len};
        rc = sigv4_verify(&sr, s->cfg.keys, SERVICE, time(NULL), NULL, 0, e);
    }
    pairs_free(&headers);
    pairs_free(&query);
    return rc;
}

/* The media type of a Content-Type value, if it is one DynamoDB accepts. */
static const char *json_content_type(const h2o_iovec_t *v)
{
    if (v == NULL) return NULL;
    const char *semi = memchr(v->base, ';', v->len);
    size_t n = semi ? (size_t)(semi - v->base) : v->len;
    while (n && (v->base[n - 1] == ' ' || v->base[n - 1] == '\t'))
        n--;
    if (n == strlen(WIRE_JSON_CONTENT_TYPE) && strncasecmp(v->base, WIRE_JSON_CONTENT_TYPE, n) == 0)
        return WIRE_JSON_CONTENT_TYPE;
    if (n == 16 && strncasecmp(v->base, "application/json", n) == 0) return "application/json";
    return NULL;
}

/* ---- the engine's call ---- */

/* The core's answer to a request's call, sent if the request still stands (the core does
 * not deliver to a cancelled call). */
static void on_call_answer(core_call *c, core_result *r, int unflushed)
{
    http_call *hc = H2O_STRUCT_FROM_MEMBER(http_call, call, c);
    /* A worker's answer is charged as it arrives (one built on the loop already is). */
    budget_charge(&hc->loop->budget, &hc->charge, hc->x.len + r->resp.len);
    if (unflushed) {
        char msg[600];
        snprintf(msg, sizeof msg, "the write-ahead log could not be written: %s", qr_flush_error());
        send_error(hc->s, hc->req, &hc->x, 500, hc->ctype, c->op, QR_E_INTERNAL, msg);
        return;
    }
    send_call_response(hc->s, hc->req, &hc->x, hc->ctype, c->op, &r->resp);
}

static void call_dispose(void *p)
{
    http_call *hc = p;
    budget_cancel(&hc->loop->budget, &hc->wait);
    core_call_cancel(&hc->call);
    budget_charge(&hc->loop->budget, &hc->charge, 0);
}

/* Runs hc's call, which the budget let start. A call run on the loop has built its answer
 * when core_call_start returns, and the core holds it until the turn ends: it is charged
 * at once, so that the loop's next request of the turn is judged with it counted. */
static void start_call(http_call *hc)
{
    if (core_call_start(hc->loop->core, &hc->call)) {
        send_error(hc->s, hc->req, &hc->x, 500, hc->ctype, hc->call.op, QR_E_INTERNAL,
                   "out of memory queueing the request");
        return;
    }
    budget_charge(&hc->loop->budget, &hc->charge, hc->x.len + core_call_held(&hc->call));
}

static void on_budget_admit(budget_wait *w)
{
    start_call(H2O_STRUCT_FROM_MEMBER(http_call, wait, w));
}

/* ---- GET /metrics ---- */

/* Whether the request's path, without its query, is /metrics. */
static int is_metrics_path(const h2o_req_t *req)
{
    const char *path = req->input.path.base;
    size_t len = req->input.path.len;
    const char *q = memchr(path, '?', len);
    if (q) len = (size_t)(q - path);
    return h2o_memis(path, len, H2O_STRLIT(METRICS_PATH));
}

/* The server's own gauges after the database's: the bound on requests' bytes (bodybound.h)
 * and the exchange budget (budget.h). Both are the server's, over its HTTP and CQL
 * listeners together, and are named for neither protocol. */
static int append_budget_metrics(server *s, buf *out)
{
    int rc = buf_printf(
        out,
        "# HELP quarry_server_request_bytes Bytes held for requests being read and not yet "
        "handled, HTTP and CQL together: HTTP requests in their connections' input buffers "
        "until answered, CQL envelopes until handed to their calls.\n"
        "# TYPE quarry_server_request_bytes gauge\n"
        "quarry_server_request_bytes %zu\n"
        "# HELP quarry_server_request_peak_bytes The most quarry_server_request_bytes has been "
        "since the start.\n"
        "# TYPE quarry_server_request_peak_bytes gauge\n"
        "quarry_server_request_peak_bytes %zu\n"
        "# HELP quarry_server_request_bound_bytes What requests may hold before connections "
        "whose requests are arriving (HTTP or CQL) are read no further.\n"
        "# TYPE quarry_server_request_bound_bytes gauge\n"
        "quarry_server_request_bound_bytes %zu\n"
        "# HELP quarry_server_reads_paused Connections, HTTP and CQL, not read until bytes "
        "held for requests are freed.\n"
        "# TYPE quarry_server_reads_paused gauge\n"
        "quarry_server_reads_paused %u\n",
        bodybound_held(&s->bodies), bodybound_peak(&s->bodies), s->bodies.limit,
        bodybound_paused(&s->bodies));
    if (rc) return rc;
    return buf_printf(out,
                      "# HELP quarry_server_exchange_bytes Bytes the exchanges under way hold: "
                      "HTTP answers built and not yet sent and their calls' request bodies, "
                      "and CQL answers not yet written to their sockets.\n"
                      "# TYPE quarry_server_exchange_bytes gauge\n"
                      "quarry_server_exchange_bytes %zu\n"
                      "# HELP quarry_server_exchange_budget_bytes What the exchanges may hold "
                      "before further calls wait.\n"
                      "# TYPE quarry_server_exchange_budget_bytes gauge\n"
                      "quarry_server_exchange_budget_bytes %zu\n"
                      "# HELP quarry_server_calls_waiting Calls (HTTP requests, and CQL "
                      "connections whose next request waits) waiting for the exchanges under "
                      "way to release bytes of the budget.\n"
                      "# TYPE quarry_server_calls_waiting gauge\n"
                      "quarry_server_calls_waiting %u\n",
                      budget_held(&s->budget), s->budget.limit, budget_waiting(&s->budget));
}

/* The database's metrics (qr_metrics), to a request authenticated as the API's are: by
 * the same SigV4 check, with the same keys, over the method, path, query, headers and
 * body it was sent with. With --credentials it must be signed by one of the file's keys
 * (`curl --aws-sigv4 "aws:amz:REGION:dynamodb" --user KEY:SECRET`); without, any key
 * passes but a SigV4 Authorization header must still be there, as on every API request.
 * (The health check at / is the one request answered unsigned, as DynamoDB answers it.)
 * A failure is answered as the API answers it: DynamoDB's error document, status 400. */
static void send_metrics(server *s, h2o_req_t *req, const exchange *x)
{
    qr_err e;
    err_init(&e);
    if (authenticate(s, req, x->body, x->len, &e)) {
        send_error(s, req, x, err_http_status(e.type), WIRE_JSON_CONTENT_TYPE, "metrics", e.type,
                   e.msg);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    buf all;
    buf_init(&all, 0);
    int failed = qr_metrics(s->db, &text, &len) != QR_OK || buf_append(&all, text, len) ||
                 append_budget_metrics(s, &all);
    free(text);
    if (failed) {
        buf_free(&all);
        send_error(s, req, x, 500, WIRE_JSON_CONTENT_TYPE, "metrics", QR_E_INTERNAL,
                   "the metrics could not be gathered");
        return;
    }
    text = buf_detach(&all, &len);
    send_response(s, req, x, 200, METRICS_CONTENT_TYPE, text, len, BODY_TAKEN, "metrics", NULL,
                  NULL);
}

/* ---- GET /console ---- */

/* What a browser is told of the console's files: read them afresh (a new binary may
 * ship new ones), run no script or style from anywhere but here (so that even a value
 * the page failed to escape could not run), fetch only this origin, never be framed. */
static const struct {
    const char *name, *lower, *value;
} console_headers[] = {
    {"Cache-Control", "cache-control", "no-cache"},
    {"X-Content-Type-Options", "x-content-type-options", "nosniff"},
    {"Content-Security-Policy", "content-security-policy",
     "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
    {"X-Frame-Options", "x-frame-options", "DENY"},
    {"Referrer-Policy", "referrer-policy", "no-referrer"},
};

static void send_console(server *s, h2o_req_t *req, const exchange *x, const console_file *f)
{
    for (size_t i = 0; i < sizeof console_headers / sizeof console_headers[0]; i++)
        h2o_add_header_by_str(&req->pool, &req->res.headers, console_headers[i].lower,
                              strlen(console_headers[i].lower), 0, console_headers[i].name,
                              console_headers[i].value, strlen(console_headers[i].value));
    send_response(s, req, x, 200, f->content_type, f->data, f->len, BODY_STATIC, "console", NULL,
                  NULL);
}

/* ---- the request handler ---- */

/* The request's header block as it arrived, from its request line through its empty line
 * (h2o keeps copies of what it parsed; the bytes stay at the start of the connection's
 * input buffer, names lower-cased, until the request is done); 0 if it is not there. */
static size_t raw_head(h2o_req_t *req, const char **head)
{
    h2o_socket_t *sock =
        req->conn->callbacks->get_socket ? req->conn->callbacks->get_socket(req->conn) : NULL;
    const h2o_iovec_t *m = &req->input.method;
    if (sock == NULL || sock->input == NULL || sock->input->size <= m->len) return 0;
    const char *start = sock->input->bytes;
    if (memcmp(start, m->base, m->len) != 0 || start[m->len] != ' ') return 0;
    *head = start;
    return framing_head_len(start, sock->input->size);
}

/* Refuses a request whose header block passes MAX_HEAD_BYTES or whose framing or header
 * syntax is not beyond doubt (framing.h): 400, and the connection closed after it, so
 * that no byte after the request is read as another. Nothing of the request runs.
 * Returns 1 if it refused. */
static int refuse_ambiguous(server *s, h2o_req_t *req, const exchange *x)
{
    const char *head = NULL;
    size_t len = raw_head(req, &head);
    char why[200];
    if (len == 0)
        snprintf(why, sizeof why, "the request's header block could not be checked");
    else if (len > MAX_HEAD_BYTES)
        snprintf(why, sizeof why,
                 "the request line and headers take %zu bytes; at most %d are read, as DynamoDB "
                 "reads them",
                 len, MAX_HEAD_BYTES);
    else if (framing_check(head, len, why, sizeof why) == 0)
        return 0;
    char body[256];
    int n = snprintf(body, sizeof body, "Bad Request: %s\n", why);
    req->http1_is_persistent = 0;
    linger_keep(s, req);
    send_response(s, req, x, 400, "text/plain", body, (size_t)n, BODY_COPY, "http", "BadRequest",
                  why);
    return 1;
}

/* The port the request's connection arrived on (0 if unknown). */
static unsigned local_port(h2o_req_t *req)
{
    struct sockaddr_storage sa;
    if (req->conn->callbacks->get_sockname == NULL ||
        req->conn->callbacks->get_sockname(req->conn, (struct sockaddr *)&sa) == 0)
        return 0;
    if (sa.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&sa)->sin_port);
    if (sa.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
    return 0;
}

/* Without credentials, refuses a request addressed to a Host that is not loopback or
 * allowed (a page that reached the server through DNS rebinding), or sent by a browser
 * page of an origin not allowed (origin.h): 400 AccessDeniedException, saying why and
 * which option allows it, before anything runs. A request without Host (HTTP/1.0) comes
 * from no browser. Returns 1 if it refused; otherwise notes in x whether the Origin may
 * read the answer. */
static int refuse_foreign(server *s, h2o_req_t *req, exchange *x)
{
    if (s->cfg.keys) return 0;
    const char *head = NULL, *host = NULL;
    size_t len = raw_head(req, &head), hl = 0;
    if (len) host = framing_host(head, len, &hl);
    origin_policy p = {s->cfg.allow_hosts, s->cfg.n_allow_hosts, s->cfg.cors_origins,
                       s->cfg.n_cors_origins, local_port(req)};
    char msg[700];
    if (host && !origin_host_allowed(&p, host, hl)) {
        size_t name = hl;
        const char *colon = host[0] == '[' ? NULL : memchr(host, ':', hl);
        if (colon) name = (size_t)(colon - host);
        snprintf(msg, sizeof msg,
                 "Host '%.*s' is not a loopback name or address. Without --credentials, quarry "
                 "serve answers only requests addressed to localhost, 127.0.0.1 or [::1], so "
                 "that no web page can reach it under a name of its own (DNS rebinding). Start "
                 "it with --allow-host %.*s to answer this name, or with --credentials FILE to "
                 "require signatures.",
                 (int)(hl > 200 ? 200 : hl), host, (int)(name > 200 ? 200 : name), host);
        send_error(s, req, x, 400, WIRE_JSON_CONTENT_TYPE, NULL, "AccessDeniedException", msg);
        return 1;
    }
    const h2o_iovec_t *origin = find_header(req, H2O_STRLIT("origin"));
    if (origin == NULL) return 0;
    if (origin_allowed(&p, origin->base, origin->len, host, hl)) {
        x->origin_ok = 1;
        return 0;
    }
    int on = (int)(origin->len > 200 ? 200 : origin->len);
    snprintf(msg, sizeof msg,
             "Origin '%.*s' may not call this server. Without --credentials, quarry serve "
             "answers browser pages only from its own origin and from loopback origins on port "
             "%u. Start it with --cors-origin %.*s to allow this one, or with --credentials "
             "FILE to require signatures.",
             on, origin->base, p.port, on, origin->base);
    send_error(s, req, x, 400, WIRE_JSON_CONTENT_TYPE, NULL, "AccessDeniedException", msg);
    return 1;
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    server *s = ((handler *)self)->s;
    http_loop *l = H2O_STRUCT_FROM_MEMBER(http_loop, ctx, req->conn->ctx);
    exchange x = {.tables = NULL};
    clock_gettime(CLOCK_MONOTONIC, &x.start);
    x.body = req->entity.base ? req->entity.base : "";
    x.len = req->entity.base ? req->entity.len : 0;
    if (refuse_ambiguous(s, req, &x) || refuse_foreign(s, req, &x)) return 0;

    const h2o_iovec_t *method = &req->input.method;
    int is_post = h2o_memis(method->base, method->len, H2O_STRLIT("POST"));
    int is_root = h2o_memis(req->input.path.base, req->input.path.len, H2O_STRLIT("/"));
    int is_get = h2o_memis(method->base, method->len, H2O_STRLIT("GET")) ||
                 h2o_memis(method->base, method->len, H2O_STRLIT("HEAD"));
    if (is_get && is_root) {
        /* DynamoDB names the endpoint it was reached at: "healthy: <Host>". */
        const h2o_iovec_t *host = &req->input.authority;
        size_t hlen = host->len > 255 ? 255 : host->len;
        char body[sizeof HEALTH_PREFIX + 256];
        int n = hlen ? snprintf(body, sizeof body, HEALTH_PREFIX "%.*s\n", (int)hlen, host->base)
                     : snprintf(body, sizeof body, HEALTH_PREFIX "quarry\n");
        send_response(s, req, &x, 200, "text/plain", body, (size_t)n, BODY_COPY, "health", NULL,
                      NULL);
        return 0;
    }
    if (is_get && is_metrics_path(req)) {
        send_metrics(s, req, &x);
        return 0;
    }
    if (is_get) {
        const char *path = req->input.path.base;
        const char *q = memchr(path, '?', req->input.path.len);
        console_file f;
        if (console_find(path, q ? (size_t)(q - path) : req->input.path.len, &f) == 0) {
            send_console(s, req, &x, &f);
            return 0;
        }
    }

    if (h2o_memis(method->base, method->len, H2O_STRLIT("OPTIONS")) &&
        find_header(req, H2O_STRLIT("origin"))) {
        add_preflight_headers(req);
        send_response(s, req, &x, 200, "text/plain", "", 0, BODY_STATIC, "preflight", NULL, NULL);
        return 0;
    }

    ssize_t ct = h2o_find_header(&req->headers, H2O_TOKEN_CONTENT_TYPE, -1);
    const char *ctype = json_content_type(ct < 0 ? NULL : &req->headers.entries[ct].value);
    if (!is_post || (x.len > 0 && ctype == NULL)) {
        char m[16];
        snprintf(m, sizeof m, "%.*s", (int)method->len, method->base);
        send_response(s, req, &x, 404, "text/xml", UNKNOWN_OP_XML, strlen(UNKNOWN_OP_XML),
                      BODY_STATIC, m, QR_E_UNKNOWN_OP, "not a POST of DynamoDB JSON");
        return 0;
    }
    if (ctype == NULL) ctype = WIRE_JSON_CONTENT_TYPE;

    /* A compressed body is judged and run decoded; its signature covers the bytes sent.
     * DynamoDB answers a coding it does not know, or a body not in its coding, with 500. */
    const char *sent = x.body;
    size_t sent_len = x.len;
    const h2o_iovec_t *ce = last_header(req, H2O_STRLIT("content-encoding"));
    int coding = ce ? wire_content_coding(ce->base, ce->len) : WIRE_IDENTITY;
    if (coding != WIRE_IDENTITY) {
        char msg[160];
        int rc = -1;
        buf plain;
        buf_init(&plain, s->cfg.max_body + 1);
        if (coding < 0) {
            snprintf(msg, sizeof msg, "Unsupported Content-Encoding '%.*s'",
                     (int)(ce->len < 60 ? ce->len : 60), ce->base);
        } else {
            rc = wire_decode((wire_coding)coding, x.body, x.len, s->cfg.max_body, &plain);
            if (rc == -2)
                snprintf(msg, sizeof msg, "The decoded request body is larger than %zu bytes",
                         s->cfg.max_body);
            else
                snprintf(msg, sizeof msg, "The request body is not valid %s content",
                         coding == WIRE_GZIP ? "gzip" : "deflate");
        }
        if (rc == 0) {
            char *copy = h2o_mem_alloc_pool(&req->pool, plain.len + 1);
            memcpy(copy, plain.data ? plain.data : "", plain.len);
            copy[plain.len] = '\0';
            x.body = copy;
            x.len = plain.len;
        }
        buf_free(&plain);
        if (rc) {
            x.len = 0; /* nothing readable for the log line */
            send_error(s, req, &x, rc == -2 ? 413 : 500, ctype, NULL,
                       rc == -2 ? "RequestEntityTooLarge" : QR_E_INTERNAL, msg);
            return 0;
        }
    }

    const h2o_iovec_t *tv = find_header(req, H2O_STRLIT("x-amz-target"));
    char target[128];
    size_t tlen = tv == NULL ? 0 : tv->len < sizeof target - 1 ? tv->len : sizeof target - 1;
    if (tlen) memcpy(target, tv->base, tlen);
    target[tlen] = '\0';
    const char *op = tv ? wire_operation(target, s->ops, s->stream_ops) : NULL;
    qr_err e;
    err_init(&e);
    int auth_failed = authenticate(s, req, sent, sent_len, &e) != 0;
    if (op == NULL || auth_failed) {
        /* DynamoDB judges the JSON first, then the target, then the signature; the first
         * two are answered with no text. */
        char why[200];
        if (x.len && !wire_json_valid(x.body, x.len, why, sizeof why)) {
            char msg[256];
            snprintf(msg, sizeof msg, "Malformed JSON: %s", why);
            send_error_doc(s, req, &x, 400, ctype, op, QR_E_SERIALIZATION, NULL, msg);
        } else if (op == NULL) {
            send_error_doc(s, req, &x, 400, ctype, NULL, QR_E_UNKNOWN_OP, NULL,
                           WIRE_UNKNOWN_OP_MESSAGE);
        } else {
            send_error(s, req, &x, err_http_status(e.type), ctype, op, e.type, e.msg);
        }
        return 0;
    }
    /* The region the client signed for is the one it believes it reached. */
    char region[64] = "";
    const h2o_iovec_t *authz = find_header(req, H2O_STRLIT("authorization"));
    const char *query = memchr(req->input.path.base, '?', req->input.path.len);
    if (authz)
        sigv4_credential_region(authz->base, authz->len, region, sizeof region);
    else if (query)
        sigv4_presigned_region(query + 1,
                               req->input.path.len - (size_t)(query + 1 - req->input.path.base),
                               region, sizeof region);

    /* The call may wait for the budget: what it needs lives in the request's pool. */
    http_call *hc = h2o_mem_alloc_shared(&req->pool, sizeof *hc, call_dispose);
    *hc = (http_call){.call = {.op = op, .body = x.body, .len = x.len, .answer = on_call_answer},
                      .s = s,
                      .loop = l,
                      .req = req,
                      .x = x,
                      .ctype = ctype,
                      .wait = {.admit = on_budget_admit}};
    snprintf(hc->region, sizeof hc->region, "%s", region);
    hc->call.region = hc->region;
    if (budget_admit(&l->budget, &hc->wait)) start_call(hc);
    return 0;
}

/* ---- connections ---- */

/* h2o answers an over-long or malformed body before reading it, then closes the
 * connection; closing a socket with unread bytes makes the kernel send a reset, and the
 * client, still sending, loses the answer (it sees "connection reset" where DynamoDB's
 * client reads 413). So such a connection lingers once h2o has closed it. */
static void linger_keep(server *s, h2o_req_t *req)
{
    h2o_socket_t *sock =
        req->conn->callbacks->get_socket ? req->conn->callbacks->get_socket(req->conn) : NULL;
    core_linger_on_close(sock, LINGER_BODIES * s->cfg.max_body);
}

/* ---- on the core's loops ---- */

static void http_loop_open(core_loop *cl, void *state, void *arg)
{
    http_loop *l = state;
    l->s = arg;
    l->core = cl;
    h2o_context_init(&l->ctx, core_loop_evloop(cl), &l->s->h2o);
    l->accept.ctx = &l->ctx;
    l->accept.hosts = l->s->h2o.hosts;
    budget_loop_open(&l->s->budget, &l->budget, l->ctx.queue);
    bodybound_loop_open(&l->s->bodies, &l->bodies, l->ctx.queue);
    h2o_timeout_init(l->ctx.loop, &l->send_check,
                     (uint64_t)l->s->cfg.timeout_seconds * 1000 / SEND_CHECKS);
}

static void http_serve(void *state, h2o_socket_t *sock)
{
    http_loop *l = state;
    h2o_accept(&l->accept, sock);
    bodybound_conn *c = bodybound_watch(&l->bodies, sock);
    if (c)
        core_conn_attach(sock, c);
    else /* out of memory: h2o sees the end of the stream and closes it */
        shutdown(h2o_socket_get_fd(sock), SHUT_RDWR);
}

static void http_closed(void *state, void *data)
{
    (void)state;
    bodybound_closed(data);
}

static void http_turn_end(void *state)
{
    bodybound_turn_end(&((http_loop *)state)->bodies);
}

/* Connections paused for the bound read again: those still to close are to see the end
 * of their streams (core_stop shuts them down). */
static void http_drain(void *state)
{
    http_loop *l = state;
    h2o_context_request_shutdown(&l->ctx);
    bodybound_resume_all(&l->bodies);
}

static int count_started(h2o_req_t *req, void *data)
{
    /* h2o stamps a request when its first byte arrives and clears the stamp when the
     * connection is ready for the next one. */
    if (req->timestamps.request_begin_at.tv_sec != 0 ||
        req->timestamps.request_begin_at.tv_usec != 0)
        ++*(unsigned *)data;
    return 0;
}

static unsigned http_in_flight(void *state)
{
    unsigned n = 0;
    H2O_HTTP1_CALLBACKS.foreach_request(&((http_loop *)state)->ctx, count_started, &n);
    return n;
}

static void http_loop_close(void *state)
{
    http_loop *l = state;
    /* request_shutdown armed HTTP/2's graceful-shutdown timer, which h2o_context_dispose
     * wants gone; quarry serves no HTTP/2, so nothing waits on it. */
    if (h2o_timeout_is_linked(&l->ctx.http2._graceful_shutdown_timeout))
        h2o_timeout_unlink(&l->ctx.http2._graceful_shutdown_timeout);
    budget_loop_close(&l->budget);
    bodybound_loop_close(&l->bodies);
    h2o_timeout_dispose(l->ctx.loop, &l->send_check);
    h2o_context_dispose(&l->ctx);
}

/* ---- lifecycle ---- */

static void server_free(server *s)
{
    h2o_config_dispose(&s->h2o);
    budget_dispose(&s->budget);
    bodybound_dispose(&s->bodies);
    free(s);
}

struct budget *server_exchange_budget(server *s)
{
    return &s->budget;
}

struct bodybound *server_body_bound(server *s)
{
    return &s->bodies;
}

int server_start(qr_db *db, const server_config *cfg, server **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    s->cfg = *cfg;
    s->db = db;
    if (s->cfg.max_body == 0) s->cfg.max_body = SERVER_MAX_BODY;
    s->ops = qr_operations();
    s->stream_ops = qr_stream_operations();
    if (budget_init(&s->budget, SERVER_EXCHANGE_BUDGET)) {
        snprintf(errbuf, errlen, "out of memory");
        free(s);
        return -1;
    }
    /* Its loops, and as many of another listener's (server_body_bound). */
    if (bodybound_init(&s->bodies, SERVER_BODY_BOUND, 2 * (cfg->loops ? cfg->loops : 1))) {
        snprintf(errbuf, errlen, "out of memory");
        budget_dispose(&s->budget);
        free(s);
        return -1;
    }

    h2o_config_init(&s->h2o);
    s->h2o.server_name = h2o_iovec_init(H2O_STRLIT("quarry"));
    s->h2o.max_request_entity_size = s->cfg.max_body;
    s->h2o.http1.req_timeout = (uint64_t)s->cfg.timeout_seconds * 1000;
    s->h2o.http1.upgrade_to_http2 = 0;
    /* The one host serves every Host; h2o gives its name as the authority of a request
     * that named none (an HTTP/1.0 health check thus reads "healthy: quarry"). */
    h2o_hostconf_t *host =
        h2o_config_register_host(&s->h2o, h2o_iovec_init(H2O_STRLIT("quarry")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    handler *h = (handler *)h2o_create_handler(path, sizeof *h);
    h->super.on_req = on_req;
    h->s = s;
    early_filter *early = (early_filter *)h2o_create_filter(&host->fallback_path, sizeof *early);
    early->super.on_setup_ostream = on_early_answer;
    early->s = s;

    s->proto = (core_protocol){.loop_state_size = sizeof(http_loop),
                               .arg = s,
                               .loop_open = http_loop_open,
                               .serve = http_serve,
                               .drain = http_drain,
                               .in_flight = http_in_flight,
                               .loop_close = http_loop_close,
                               .closed = http_closed,
                               .turn_end = http_turn_end};
    core_config cc = {.db = db,
                      .addr = cfg->addr,
                      .addr_len = cfg->addr_len,
                      .loops = cfg->loops,
                      .pin_loops = cfg->pin_loops,
                      .workers = cfg->workers,
                      .max_connections = cfg->max_connections};
    if (core_start(&cc, &s->proto, &s->core, errbuf, errlen)) {
        server_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

unsigned server_port(const server *s)
{
    return core_port(s->core);
}

void server_drain(server *s)
{
    core_drain(s->core);
}

unsigned server_in_flight(const server *s)
{
    return core_in_flight(s->core);
}

unsigned long server_calls(const server *s)
{
    return core_calls(s->core);
}

void server_stop(server *s)
{
    if (s == NULL) return;
    core_stop(s->core);
    server_free(s);
}
