/* http.c — the HTTP layer of `quarry serve` on h2o (see server.h).
 *
 * Several h2o event loops (two per CPU by default) share one listening socket and deal
 * new connections among themselves round robin. h2o parses HTTP, keeps connections
 * alive, gathers each request body (bounded by max_body) and calls on_req; nothing
 * here reads raw protocol bytes. A request is judged on its loop, in DynamoDB's order:
 * health check, content type, content coding (a gzip or deflate body is decoded), JSON,
 * X-Amz-Target, SigV4; then qr_call runs on the loop too, unless the operation may wait
 * for a disk sync (a write, when writes are durable): those go to a pool of worker
 * threads, so that writes waiting together share one group commit, and their answers
 * come back to the loop as h2o messages. Answers go compressed to clients that accept it. */
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define H2O_USE_LIBUV 0
#include <h2o.h>
#include <h2o/http1.h>

#include "server/wire.h"
#include "util/buf.h"

#define UNKNOWN_OP_XML "<UnknownOperationException/>\n"
#define HEALTH_PREFIX "healthy: "
#define SERVICE "dynamodb"
/* How long server_stop waits for connections to close once it has shut them down. */
#define STOP_GRACE_MS 2000
/* A connection h2o closes after answering an unread body itself (413, 400) is kept open
 * this long, or until this many bodies' worth of bytes were read and dropped, so that the
 * client can finish sending and read the answer instead of a reset (see linger_start). */
#define LINGER_MS 5000
#define LINGER_BODIES 2
#define LINGER_MAX_PER_LOOP 64

typedef struct loop loop;
typedef struct job job;

struct server {
    qr_db *db;
    server_config cfg;
    struct sockaddr_storage addr;
    int listen_fd;
    unsigned port;
    const char *const *ops;
    const char *const *stream_ops; /* the DynamoDB Streams API's */
    h2o_globalconf_t h2o;
    loop *loops;
    unsigned n_loops;
    atomic_uint connections; /* open, across loops */
    atomic_uint next_loop;   /* round robin of new connections over the loops */
    int *pin_cpus;           /* with pin_loops: the CPUs the process may use, ascending */
    unsigned n_pin_cpus;
    int *cpu_slot; /* CPU number -> its index in pin_cpus, or -1 (CPU_SETSIZE of them) */
    atomic_int draining;
    atomic_uint drain_acks;   /* loops that have stopped accepting */
    pthread_mutex_t ready_mu; /* loops report to server_start when built */
    pthread_cond_t ready_cv;
    int go; /* every loop is built (or the start failed): loops may run */

    /* The worker pool (only when writes are offloaded). */
    pthread_t *workers;
    unsigned n_workers;
    pthread_mutex_t pool_mu;
    pthread_cond_t pool_cv;
    job *queue_head, *queue_tail;
    int pool_stopping;
};

/* One event loop and the connections it serves; only its own thread touches it, except
 * for the atomics and the receivers (h2o's thread-safe message queues). */
struct loop {
    server *s;
    pthread_t thread;
    int ready; /* 0 until its thread has run: 1 once it built the loop, -1 if that failed */
    h2o_evloop_t *ev;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept;
    h2o_socket_t *listener;
    h2o_multithread_receiver_t done;     /* answers from the worker pool */
    h2o_multithread_receiver_t control;  /* drain and stop */
    h2o_multithread_receiver_t incoming; /* connections accepted by another loop */
    h2o_multithread_message_t drain_msg, stop_msg;
    atomic_uint handoffs; /* connections sent here and not yet taken */
    atomic_uint serving;  /* connections given to this loop and not yet closed */
    h2o_linklist_t conns; /* struct conn */
    unsigned n_conns;
    h2o_linklist_t lingering; /* struct lingerer */
    unsigned n_lingering;
    h2o_timeout_t linger_timeout;
    unsigned pending_jobs;  /* sent to the pool, answer not yet received */
    h2o_linklist_t answers; /* struct answer: made on the loop this turn, sent at its end */
    h2o_timeout_t turn_end; /* 0 ms: its entries run once this turn's requests have */
    h2o_timeout_entry_t answers_due; /* linked to turn_end while answers is not empty */
    int draining, stopping;
    atomic_uint in_flight; /* recounted on every turn while draining */
};

/* An open connection, so that server_stop can shut it down. */
typedef struct conn {
    h2o_linklist_t link;
    loop *owner;
    h2o_socket_t *sock;
    int linger_fd; /* a duplicate of the socket kept past h2o's close, or -1 */
} conn;

/* A closed connection whose unread request bytes are still being read and dropped. */
typedef struct lingerer {
    h2o_linklist_t link;
    loop *owner;
    h2o_socket_t *sock;
    h2o_timeout_entry_t timeout;
    size_t dropped;
} lingerer;

static void linger_keep(h2o_req_t *req);

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
} exchange;

/* A request handed to the worker pool. It owns a copy of the body, since h2o may dispose
 * of the request (its client gone) meanwhile; req is cleared when it does. */
struct job {
    h2o_multithread_message_t msg;
    job *next;
    loop *owner;
    h2o_req_t *req;
    job **guard; /* in req's memory pool; points back here while req lives */
    const char *op;
    const char *ctype;
    struct timespec start;
    char region[64]; /* signed for; "" if unknown */
    qr_response resp;
    size_t len;
    char body[];
};

/* ---- logging ---- */

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line, written with a single write(2) so that lines from threads never interleave. */
static void log_line(const char *fmt, ...)
{
    char line[2048];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ ", ts.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) return;
    n += (size_t)m;
    if (n > sizeof line - 2) n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}

static long elapsed_us(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000000L + (now.tv_nsec - start->tv_nsec) / 1000;
}

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
        if (x->len) wire_table_names(x->body, x->len, parsed, sizeof parsed);
        tables = parsed;
    }
    static const char *const names[] = {"debug", "info", "warn", "error", "none"};
    if (s->cfg.log_level == SERVER_LOG_DEBUG && message && *message) {
        log_line("%s %s table=%s status=%d error=%s us=%ld bytes=%zu id=%s message=\"%.300s\"",
                 names[lvl], op ? op : "-", *tables ? tables : "-", status, error ? error : "-",
                 elapsed_us(&x->start), x->len, id, message);
    } else {
        log_line("%s %s table=%s status=%d error=%s us=%ld", names[lvl], op ? op : "-",
                 *tables ? tables : "-", status, error ? error : "-", elapsed_us(&x->start));
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
 * A request a browser script makes carries Origin. Like DynamoDB, quarry then lets any
 * origin read the answer and the headers a client needs, and answers a preflight
 * (OPTIONS) by allowing the method and headers it asks for. A request without Origin
 * gets no CORS headers. */
#define CORS_EXPOSE_HEADERS "x-amzn-RequestId,x-amz-crc32,Date"
#define CORS_MAX_AGE "172800"

static const h2o_iovec_t *find_header(h2o_req_t *req, const char *name, size_t len)
{
    ssize_t i = h2o_find_header_by_str(&req->headers, name, len, -1);
    return i < 0 ? NULL : &req->headers.entries[i].value;
}

static void add_cors_headers(h2o_req_t *req)
{
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ACCESS_CONTROL_ALLOW_ORIGIN, NULL,
                   H2O_STRLIT("*"));
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

/* Sends body with DynamoDB's headers; h2o copies it, so it may be freed afterwards. */
static void send_response(server *s, h2o_req_t *req, const exchange *x, int status,
                          const char *ctype, const char *body, size_t len, const char *op,
                          const char *error, const char *message)
{
    /* Like DynamoDB, bodies from 4 KB on go compressed to a client that accepts it; the
     * checksum is then of the compressed bytes. */
    buf packed;
    buf_init(&packed, 0);
    const char *coding = NULL;
    if (len >= WIRE_COMPRESS_MIN) {
        const h2o_iovec_t *ae = last_header(req, H2O_STRLIT("accept-encoding"));
        wire_coding c = ae ? wire_accept_coding(ae->base, ae->len) : WIRE_IDENTITY;
        if (c != WIRE_IDENTITY && wire_encode(c, body, len, &packed) == 0) {
            coding = c == WIRE_GZIP ? "gzip" : "deflate";
            body = packed.data;
            len = packed.len;
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
    if (find_header(req, H2O_STRLIT("origin"))) add_cors_headers(req);
    /* Once draining, every answer asks its client to go elsewhere. */
    if (atomic_load_explicit(&s->draining, memory_order_relaxed)) req->http1_is_persistent = 0;
    log_request(s, x, op, status, error, message, id);
    h2o_send_inline(req, body, len);
    buf_free(&packed);
}

static void send_error(server *s, h2o_req_t *req, const exchange *x, int status, const char *ctype,
                       const char *op, const char *type, const char *message)
{
    buf b;
    buf_init(&b, 0);
    if (wire_error_body(&b, type, message)) {
        buf_free(&b);
        h2o_send_error_500(req, "Internal Server Error", "out of memory", 0);
        return;
    }
    send_response(s, req, x, status, ctype, b.data, b.len, op, type, message);
    buf_free(&b);
}

/* The engine's answer to a call (or a 500 when it gave none). */
static void send_call_response(server *s, h2o_req_t *req, const exchange *x, const char *ctype,
                               const char *op, const qr_response *resp)
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
        send_response(s, req, &called, status, ctype, "", 0, op, NULL, NULL);
    } else if (status == 200 && strcmp(op, "DescribeEndpoints") == 0 && host->len &&
               wire_endpoints_at(resp->body, resp->len, host->base, host->len, &at) == 0) {
        send_response(s, req, &called, status, ctype, at.data, at.len, op, NULL, NULL);
    } else {
        send_response(s, req, &called, status, ctype, resp->body, resp->len, op, resp->error_type,
                      message);
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
    linger_keep(req);
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

/* ---- the worker pool ---- */

static void job_unguard(void *p)
{
    job **guard = p;
    if (*guard) (*guard)->req = NULL;
}

static void pool_push(server *s, job *j)
{
    pthread_mutex_lock(&s->pool_mu);
    j->next = NULL;
    if (s->queue_tail)
        s->queue_tail->next = j;
    else
        s->queue_head = j;
    s->queue_tail = j;
    pthread_cond_signal(&s->pool_cv);
    pthread_mutex_unlock(&s->pool_mu);
}

/* A job for req, owning a copy of its body; NULL if out of memory. */
static job *job_new(loop *l, h2o_req_t *req, const exchange *x, const char *op, const char *ctype,
                    const char *region)
{
    job *j = malloc(sizeof *j + x->len + 1);
    if (j == NULL) return NULL;
    memset(j, 0, sizeof *j);
    memcpy(j->body, x->body, x->len);
    j->body[x->len] = '\0';
    j->len = x->len;
    j->owner = l;
    j->req = req;
    j->op = op;
    j->ctype = ctype;
    j->start = x->start;
    snprintf(j->region, sizeof j->region, "%s", region);
    j->guard = h2o_mem_alloc_shared(&req->pool, sizeof *j->guard, job_unguard);
    *j->guard = j;
    return j;
}

/* Sends job's answer if its request still stands, and frees the job. */
static void job_answer(loop *l, job *j)
{
    if (j->req) {
        *j->guard = NULL;
        exchange x = {j->start, j->body, j->len, NULL};
        send_call_response(l->s, j->req, &x, j->ctype, j->op, &j->resp);
    }
    qr_response_free(&j->resp);
    free(j);
}

/* ---- answers at the end of a turn ----
 * A call run on the loop is answered at the end of the loop's turn, with the others of
 * that turn, not as soon as it is made. Without syncs, the writes of the turn's calls
 * then reach the WAL in one write(2) before any answer that depends on them leaves (see
 * qr_defer_flushes). And the answers leave back to back: a client woken by the first
 * finds the next ones already there, instead of being woken once per answer (Query(50):
 * 38k -> 44k/s, 37 -> 35 us of CPU per request, alternating runs). An answer lives in
 * its request's memory pool, and leaves the turn's list if the request goes first (its
 * client gone). */
typedef struct answer {
    h2o_linklist_t link;
    h2o_req_t *req;
    exchange x;
    const char *op, *ctype;
    qr_response resp;
    int after_write; /* made while a write of this turn waited for the WAL's flush */
} answer;

static void answer_dispose(void *p)
{
    answer *a = p;
    if (h2o_linklist_is_linked(&a->link)) h2o_linklist_unlink(&a->link);
    qr_response_free(&a->resp);
}

static void answer_later(loop *l, h2o_req_t *req, const exchange *x, const char *op,
                         const char *ctype, const qr_response *resp)
{
    answer *a = h2o_mem_alloc_shared(&req->pool, sizeof *a, answer_dispose);
    *a = (answer){.req = req,
                  .x = *x,
                  .op = op,
                  .ctype = ctype,
                  .resp = *resp,
                  .after_write = qr_flush_pending()};
    h2o_linklist_insert(&l->answers, &a->link);
    if (!h2o_timeout_is_linked(&l->answers_due))
        h2o_timeout_link(l->ev, &l->turn_end, &l->answers_due);
}

/* Flushes the turn's deferred writes, then sends its answers in the order they were
 * made; if the flush failed, those made after a write get a 500 instead. h2o runs it as
 * a 0 ms timeout, after the turn's reads and before it polls again, so that the
 * connections' next reads are set up in the same turn: answered after the turn (loop_main
 * calls it too, for any left), each connection cost two more epoll_ctl calls. */
static void answer_turn(loop *l)
{
    /* Writes staged this turn are committed and flushed even with nothing to answer:
     * they hold their items' locks until then. */
    int failed = qr_flush_pending() && qr_flush_deferred() != QR_OK;
    while (!h2o_linklist_is_empty(&l->answers)) {
        answer *a = H2O_STRUCT_FROM_MEMBER(answer, link, l->answers.next);
        h2o_linklist_unlink(&a->link);
        /* Sending may dispose of the request, and the answer with it. */
        qr_response resp = a->resp;
        a->resp = (qr_response){0};
        if (failed && a->after_write)
            send_error(l->s, a->req, &a->x, 500, a->ctype, a->op, QR_E_INTERNAL,
                       "the write-ahead log could not be written");
        else
            send_call_response(l->s, a->req, &a->x, a->ctype, a->op, &resp);
        qr_response_free(&resp);
    }
    if (h2o_timeout_is_linked(&l->answers_due)) h2o_timeout_unlink(&l->answers_due);
}

static void on_turn_end(h2o_timeout_entry_t *entry)
{
    answer_turn(H2O_STRUCT_FROM_MEMBER(loop, answers_due, entry));
}

/* Runs queued calls until told to stop and the queue is empty. */
static void *worker_main(void *arg)
{
    server *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->pool_mu);
        while (s->queue_head == NULL && !s->pool_stopping)
            pthread_cond_wait(&s->pool_cv, &s->pool_mu);
        job *j = s->queue_head;
        if (j) {
            s->queue_head = j->next;
            if (s->queue_head == NULL) s->queue_tail = NULL;
        }
        pthread_mutex_unlock(&s->pool_mu);
        if (j == NULL) return NULL;
        qr_call_context ctx = {.region = j->region};
        qr_call_in(s->db, &ctx, j->op, j->body, j->len, &j->resp);
        h2o_multithread_send_message(&j->owner->done, &j->msg);
    }
}

/* On the loop: answers from the pool, sent if their requests still stand. */
static void on_jobs_done(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    loop *l = H2O_STRUCT_FROM_MEMBER(loop, done, receiver);
    while (!h2o_linklist_is_empty(messages)) {
        job *j = H2O_STRUCT_FROM_MEMBER(job, msg.link, messages->next);
        h2o_linklist_unlink(&j->msg.link);
        l->pending_jobs--;
        job_answer(l, j);
    }
}

/* ---- the request handler ---- */

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    server *s = ((handler *)self)->s;
    loop *l = H2O_STRUCT_FROM_MEMBER(loop, ctx, req->conn->ctx);
    exchange x = {.tables = NULL};
    clock_gettime(CLOCK_MONOTONIC, &x.start);
    x.body = req->entity.base ? req->entity.base : "";
    x.len = req->entity.base ? req->entity.len : 0;

    const h2o_iovec_t *method = &req->input.method;
    int is_post = h2o_memis(method->base, method->len, H2O_STRLIT("POST"));
    int is_root = h2o_memis(req->input.path.base, req->input.path.len, H2O_STRLIT("/"));
    if (!is_post && is_root &&
        (h2o_memis(method->base, method->len, H2O_STRLIT("GET")) ||
         h2o_memis(method->base, method->len, H2O_STRLIT("HEAD")))) {
        /* DynamoDB names the endpoint it was reached at: "healthy: <Host>". */
        const h2o_iovec_t *host = &req->input.authority;
        size_t hlen = host->len > 255 ? 255 : host->len;
        char body[sizeof HEALTH_PREFIX + 256];
        int n = hlen ? snprintf(body, sizeof body, HEALTH_PREFIX "%.*s\n", (int)hlen, host->base)
                     : snprintf(body, sizeof body, HEALTH_PREFIX "quarry\n");
        send_response(s, req, &x, 200, "text/plain", body, (size_t)n, "health", NULL, NULL);
        return 0;
    }

    if (h2o_memis(method->base, method->len, H2O_STRLIT("OPTIONS")) &&
        find_header(req, H2O_STRLIT("origin"))) {
        add_preflight_headers(req);
        send_response(s, req, &x, 200, "text/plain", "", 0, "preflight", NULL, NULL);
        return 0;
    }

    ssize_t ct = h2o_find_header(&req->headers, H2O_TOKEN_CONTENT_TYPE, -1);
    const char *ctype = json_content_type(ct < 0 ? NULL : &req->headers.entries[ct].value);
    if (!is_post || (x.len > 0 && ctype == NULL)) {
        char m[16];
        snprintf(m, sizeof m, "%.*s", (int)method->len, method->base);
        send_response(s, req, &x, 404, "text/xml", UNKNOWN_OP_XML, strlen(UNKNOWN_OP_XML), m,
                      QR_E_UNKNOWN_OP, "not a POST of DynamoDB JSON");
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
        /* DynamoDB judges the JSON first, then the target, then the signature. */
        char why[200];
        if (x.len && !wire_json_valid(x.body, x.len, why, sizeof why)) {
            char msg[256];
            snprintf(msg, sizeof msg, "Malformed JSON: %s", why);
            send_error(s, req, &x, 400, ctype, op, QR_E_SERIALIZATION, msg);
        } else if (op == NULL) {
            send_error(s, req, &x, 400, ctype, NULL, QR_E_UNKNOWN_OP, WIRE_UNKNOWN_OP_MESSAGE);
        } else {
            send_error(s, req, &x, err_http_status(e.type), ctype, op, e.type, e.msg);
        }
        return 0;
    }
    /* The region the client signed for is the one it believes it reached. */
    char region[64] = "";
    const h2o_iovec_t *authz = find_header(req, H2O_STRLIT("authorization"));
    if (authz) sigv4_credential_region(authz->base, authz->len, region, sizeof region);

    if (s->n_workers && qr_operation_writes(op)) {
        job *j = job_new(l, req, &x, op, ctype, region);
        if (j == NULL) {
            send_error(s, req, &x, 500, ctype, op, QR_E_INTERNAL,
                       "out of memory queueing the request");
            return 0;
        }
        l->pending_jobs++;
        pool_push(s, j);
        return 0;
    }
    qr_response resp;
    qr_call_context ctx = {.region = region};
    qr_call_in(s->db, &ctx, op, x.body, x.len, &resp);
    answer_later(l, req, &x, op, ctype, &resp);
    return 0;
}

/* ---- connections ---- */

/* h2o answers an over-long or malformed body before reading it, then closes the
 * connection; closing a socket with unread bytes makes the kernel send a reset, and the
 * client, still sending, loses the answer (it sees "connection reset" where DynamoDB's
 * client reads 413). So the socket is duplicated when h2o answers (linger_keep), and when
 * h2o has closed its descriptor, the duplicate finishes the connection the way HTTP
 * servers close after an error: the answer is followed by our end of the stream, and what
 * the client still sends is read and dropped until it closes, LINGER_MS pass, or
 * LINGER_BODIES bodies' worth arrived. */
static void linger_keep(h2o_req_t *req)
{
    h2o_socket_t *sock =
        req->conn->callbacks->get_socket ? req->conn->callbacks->get_socket(req->conn) : NULL;
    conn *c = sock ? sock->on_close.data : NULL;
    if (c == NULL || c->linger_fd >= 0 || c->owner->n_lingering >= LINGER_MAX_PER_LOOP) return;
    c->linger_fd = fcntl(h2o_socket_get_fd(sock), F_DUPFD_CLOEXEC, 0);
}

static void linger_end(lingerer *g)
{
    loop *l = g->owner;
    if (h2o_timeout_is_linked(&g->timeout)) h2o_timeout_unlink(&g->timeout);
    h2o_linklist_unlink(&g->link);
    l->n_lingering--;
    h2o_socket_close(g->sock);
    free(g);
}

static void on_linger_timeout(h2o_timeout_entry_t *entry)
{
    linger_end(H2O_STRUCT_FROM_MEMBER(lingerer, timeout, entry));
}

static void on_linger_read(h2o_socket_t *sock, const char *err)
{
    lingerer *g = sock->data;
    if (err == NULL) {
        g->dropped += sock->input->size;
        h2o_buffer_consume(&sock->input, sock->input->size);
        if (g->dropped <= LINGER_BODIES * g->owner->s->cfg.max_body) return;
    }
    linger_end(g);
}

static void linger_start(loop *l, int fd)
{
    lingerer *g = l->stopping ? NULL : calloc(1, sizeof *g);
    if (g == NULL) {
        close(fd);
        return;
    }
    shutdown(fd, SHUT_WR); /* after the answer h2o already handed to the kernel */
    g->owner = l;
    g->sock = h2o_evloop_socket_create(l->ev, fd, 0);
    g->sock->data = g;
    g->timeout.cb = on_linger_timeout;
    h2o_linklist_insert(&l->lingering, &g->link);
    l->n_lingering++;
    h2o_timeout_link(l->ev, &l->linger_timeout, &g->timeout);
    h2o_socket_read_start(g->sock, on_linger_read);
}

static void linger_end_all(loop *l)
{
    while (!h2o_linklist_is_empty(&l->lingering))
        linger_end(H2O_STRUCT_FROM_MEMBER(lingerer, link, l->lingering.next));
}

static void on_conn_close(void *data)
{
    conn *c = data;
    loop *l = c->owner;
    h2o_linklist_unlink(&c->link);
    l->n_conns--;
    atomic_fetch_sub(&l->serving, 1);
    atomic_fetch_sub(&l->s->connections, 1);
    if (c->linger_fd >= 0) linger_start(l, c->linger_fd);
    free(c);
}

/* A connection accepted by one loop for another. */
typedef struct handoff {
    h2o_multithread_message_t msg;
    int fd;
} handoff;

/* Starts serving an accepted connection on loop l. */
static void adopt(loop *l, int fd)
{
    conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        close(fd);
        atomic_fetch_sub(&l->serving, 1);
        atomic_fetch_sub(&l->s->connections, 1);
        return;
    }
    h2o_socket_t *sock =
        h2o_evloop_socket_create(l->ev, fd, H2O_SOCKET_FLAG_IS_ACCEPTED_CONNECTION);
    c->owner = l;
    c->sock = sock;
    c->linger_fd = -1;
    h2o_linklist_insert(&l->conns, &c->link);
    l->n_conns++;
    sock->on_close.cb = on_conn_close;
    sock->on_close.data = c;
    h2o_accept(&l->accept, sock);
}

static void on_handoffs(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    loop *l = H2O_STRUCT_FROM_MEMBER(loop, incoming, receiver);
    while (!h2o_linklist_is_empty(messages)) {
        handoff *h = H2O_STRUCT_FROM_MEMBER(handoff, msg.link, messages->next);
        h2o_linklist_unlink(&h->msg.link);
        if (l->stopping) {
            close(h->fd);
            atomic_fetch_sub(&l->serving, 1);
            atomic_fetch_sub(&l->s->connections, 1);
        } else {
            adopt(l, h->fd);
        }
        free(h);
        atomic_fetch_sub(&l->handoffs, 1);
    }
}

/* The loop a new connection goes to: in turn over all loops or, with pinned loops, over
 * those pinned to the CPU the connection's packets arrive on (SO_INCOMING_CPU; for a
 * client on this machine, the CPU its thread ran on). The connection is then served
 * where its client runs, and a client thread and the loops it talks to take turns on one
 * CPU instead of waking each other across two: GetItem 105k -> 118k/s and PutItem
 * --no-sync 52k -> 60k/s with wrk on the same two CPUs (bench/http/README.md). But a
 * client whose threads all happened to run on one CPU when they connected would leave
 * the other CPUs' loops idle, pinned loops cannot move, and the client's threads may
 * spread later: so a loop that serves more than twice as many connections as the least
 * busy one, and STEER_SLACK more, gets no more until the others catch up. (A slack of 4
 * alone diverted connections while wrk's two threads were still connecting, and cost
 * GetItem 10%.) */
#define STEER_SLACK 8

static loop *loop_for(server *s, int fd)
{
    unsigned turn = atomic_fetch_add(&s->next_loop, 1);
    loop *target = &s->loops[turn % s->n_loops];
    int cpu = -1;
    socklen_t len = sizeof cpu;
    if (s->cpu_slot && getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &len) == 0 && cpu >= 0 &&
        cpu < CPU_SETSIZE && s->cpu_slot[cpu] >= 0 && (unsigned)s->cpu_slot[cpu] < s->n_loops) {
        unsigned slot = (unsigned)s->cpu_slot[cpu], n = s->n_pin_cpus;
        unsigned on_cpu = (s->n_loops - slot + n - 1) / n; /* loops slot, slot + n, ... */
        target = &s->loops[slot + (turn % on_cpu) * n];
        loop *idlest = target;
        unsigned there = atomic_load(&target->serving), least = there;
        for (unsigned i = 0; i < s->n_loops; i++) {
            unsigned serving = atomic_load(&s->loops[i].serving);
            if (serving < least) {
                least = serving;
                idlest = &s->loops[i];
            }
        }
        if (there > 2 * least + STEER_SLACK) target = idlest;
    }
    return target;
}

/* Every loop watches the listening socket; whichever wakes accepts what is waiting and
 * deals the connections round robin, so that each loop serves its share (left to the
 * kernel, 32 connections could split 28 to 4 and leave a CPU idle). */
static void on_accept(h2o_socket_t *listener, const char *err)
{
    loop *l = listener->data;
    server *s = l->s;
    if (err != NULL) return;
    for (int i = 0; i < 64; i++) {
        int fd = accept4(h2o_socket_get_fd(listener), NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        if (atomic_fetch_add(&s->connections, 1) >= s->cfg.max_connections) {
            /* Past the limit: closed unanswered. */
            atomic_fetch_sub(&s->connections, 1);
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        loop *target = loop_for(s, fd);
        handoff *h = target == l ? NULL : calloc(1, sizeof *h);
        if (h == NULL) target = l; /* served here, also when the handoff cannot be made */
        atomic_fetch_add(&target->serving, 1);
        if (h == NULL) {
            adopt(l, fd);
            continue;
        }
        h->fd = fd;
        atomic_fetch_add(&target->handoffs, 1);
        h2o_multithread_send_message(&target->incoming, &h->msg);
    }
}

/* ---- draining, stopping and the loop itself ---- */

static int count_started(h2o_req_t *req, void *data)
{
    /* h2o stamps a request when its first byte arrives and clears the stamp when the
     * connection is ready for the next one. */
    if (req->timestamps.request_begin_at.tv_sec != 0 ||
        req->timestamps.request_begin_at.tv_usec != 0)
        ++*(unsigned *)data;
    return 0;
}

static void recount_in_flight(loop *l)
{
    unsigned n = 0;
    H2O_HTTP1_CALLBACKS.foreach_request(&l->ctx, count_started, &n);
    atomic_store(&l->in_flight, n);
}

static void close_listener(loop *l)
{
    if (l->listener == NULL) return;
    h2o_socket_read_stop(l->listener);
    h2o_socket_close(l->listener);
    l->listener = NULL;
}

static void on_control(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    loop *l = H2O_STRUCT_FROM_MEMBER(loop, control, receiver);
    while (!h2o_linklist_is_empty(messages)) {
        h2o_multithread_message_t *m =
            H2O_STRUCT_FROM_MEMBER(h2o_multithread_message_t, link, messages->next);
        h2o_linklist_unlink(&m->link);
        if (m == &l->drain_msg) {
            l->draining = 1;
            close_listener(l);
            h2o_context_request_shutdown(&l->ctx);
            recount_in_flight(l);
            atomic_fetch_add(&l->s->drain_acks, 1);
        } else if (m == &l->stop_msg) {
            l->stopping = 1;
            close_listener(l);
            linger_end_all(l);
            h2o_context_request_shutdown(&l->ctx);
            /* Whatever is left is cut: h2o sees the end of each stream and closes it. */
            for (h2o_linklist_t *n = l->conns.next; n != &l->conns; n = n->next) {
                conn *c = H2O_STRUCT_FROM_MEMBER(conn, link, n);
                shutdown(h2o_socket_get_fd(c->sock), SHUT_RDWR);
            }
        }
    }
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* ---- lifecycle ---- */

#ifdef __SANITIZE_ADDRESS__
/* What h2o itself never frees, which LeakSanitizer would report at every exit: its
 * per-thread caches of memory chunks (kept by design for the next connection), and the
 * message queue that h2o_context_init makes and this version's h2o_context_dispose
 * leaves behind (destroying it ourselves crashes inside h2o). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:h2o_mem_alloc_recycle\nleak:h2o_multithread_create_queue\n";
}
#endif

static int open_listener(const struct sockaddr *addr, socklen_t len, char *errbuf, size_t errlen)
{
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(errbuf, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (addr->sa_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    char host[INET6_ADDRSTRLEN + 2] = "?";
    unsigned port = 0;
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
    } else if (addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
    }
    if (bind(fd, addr, len) != 0) {
        snprintf(errbuf, errlen, "cannot listen on %s port %u: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    if (listen(fd, 1024) != 0) {
        snprintf(errbuf, errlen, "listen on %s port %u: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Builds loop l's event loop, context and listener (a duplicate of the listening
 * socket, so that each loop closes its own). It runs on the loop's own thread: h2o ties
 * a socket's buffers to the memory caches of the thread that made it. */
static int loop_init(loop *l)
{
    server *s = l->s;
    h2o_linklist_init_anchor(&l->conns);
    h2o_linklist_init_anchor(&l->lingering);
    h2o_linklist_init_anchor(&l->answers);
    int fd = fcntl(s->listen_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return -1;
    l->ev = h2o_evloop_create();
    h2o_timeout_init(l->ev, &l->linger_timeout, LINGER_MS);
    h2o_timeout_init(l->ev, &l->turn_end, 0);
    l->answers_due.cb = on_turn_end;
    h2o_context_init(&l->ctx, l->ev, &s->h2o);
    l->accept.ctx = &l->ctx;
    l->accept.hosts = s->h2o.hosts;
    h2o_multithread_register_receiver(l->ctx.queue, &l->done, on_jobs_done);
    h2o_multithread_register_receiver(l->ctx.queue, &l->control, on_control);
    h2o_multithread_register_receiver(l->ctx.queue, &l->incoming, on_handoffs);
    l->listener = h2o_evloop_socket_create(l->ev, fd, H2O_SOCKET_FLAG_DONT_READ);
    l->listener->data = l;
    h2o_socket_read_start(l->listener, on_accept);
    return 0;
}

/* Undoes loop_init, on the loop's thread, once its connections are gone. */
static void loop_dispose(loop *l)
{
    close_listener(l);
    linger_end_all(l);
    /* Connections that outlived the grace period are left to the process's exit. */
    if (l->n_conns || l->pending_jobs || atomic_load(&l->handoffs)) return;
    /* request_shutdown armed HTTP/2's graceful-shutdown timer, which h2o_context_dispose
     * wants gone; quarry serves no HTTP/2, so nothing waits on it. */
    if (h2o_timeout_is_linked(&l->ctx.http2._graceful_shutdown_timeout))
        h2o_timeout_unlink(&l->ctx.http2._graceful_shutdown_timeout);
    h2o_multithread_unregister_receiver(l->ctx.queue, &l->done);
    h2o_multithread_unregister_receiver(l->ctx.queue, &l->control);
    h2o_multithread_unregister_receiver(l->ctx.queue, &l->incoming);
    h2o_timeout_dispose(l->ev, &l->linger_timeout);
    h2o_timeout_dispose(l->ev, &l->turn_end);
    h2o_context_dispose(&l->ctx);
    h2o_evloop_destroy(l->ev);
    l->ev = NULL;
}

static void loop_report(loop *l, int ready)
{
    pthread_mutex_lock(&l->s->ready_mu);
    l->ready = ready;
    pthread_cond_broadcast(&l->s->ready_cv);
    pthread_mutex_unlock(&l->s->ready_mu);
}

static void *loop_main(void *arg)
{
    loop *l = arg;
    if (loop_init(l)) {
        loop_report(l, -1);
        return NULL;
    }
    loop_report(l, 1);
    /* A loop may hand connections to any other, so none runs before all are built. */
    pthread_mutex_lock(&l->s->ready_mu);
    while (!l->s->go)
        pthread_cond_wait(&l->s->ready_cv, &l->s->ready_mu);
    pthread_mutex_unlock(&l->s->ready_mu);
    qr_defer_flushes(1); /* answer_turn ends each turn */
    long stop_deadline = 0;
    for (;;) {
        if (l->stopping) {
            if (l->n_conns == 0 && l->pending_jobs == 0 && atomic_load(&l->handoffs) == 0) break;
            if (stop_deadline == 0)
                stop_deadline = now_ms() + STOP_GRACE_MS;
            else if (now_ms() > stop_deadline)
                break;
        }
        h2o_evloop_run(l->ev, l->draining || l->stopping ? 10 : INT32_MAX);
        answer_turn(l);
        if (l->draining) recount_in_flight(l);
    }
    qr_defer_flushes(0); /* answer_turn left nothing staged; this frees the thread's buffers */
    loop_dispose(l);
    return NULL;
}

static void pool_stop(server *s)
{
    if (s->workers == NULL) return;
    pthread_mutex_lock(&s->pool_mu);
    s->pool_stopping = 1;
    pthread_cond_broadcast(&s->pool_cv);
    pthread_mutex_unlock(&s->pool_mu);
    for (unsigned i = 0; i < s->n_workers; i++)
        pthread_join(s->workers[i], NULL);
    free(s->workers);
    s->workers = NULL;
}

static void server_free(server *s)
{
    free(s->loops);
    free(s->pin_cpus);
    free(s->cpu_slot);
    h2o_config_dispose(&s->h2o);
    pthread_mutex_destroy(&s->pool_mu);
    pthread_cond_destroy(&s->pool_cv);
    pthread_mutex_destroy(&s->ready_mu);
    pthread_cond_destroy(&s->ready_cv);
    if (s->listen_fd >= 0) close(s->listen_fd);
    free(s);
}

/* For pin_loops: the CPUs this process may run on (its affinity, which taskset or a
 * cpuset may have narrowed), in order, and each one's place among them. */
static int plan_pins(server *s, char *errbuf, size_t errlen)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        snprintf(errbuf, errlen, "cannot pin the event loops: cannot read the CPUs allowed: %s",
                 strerror(errno));
        return -1;
    }
    s->pin_cpus = malloc((size_t)CPU_COUNT(&allowed) * sizeof *s->pin_cpus);
    s->cpu_slot = malloc(CPU_SETSIZE * sizeof *s->cpu_slot);
    if (s->pin_cpus == NULL || s->cpu_slot == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        s->cpu_slot[cpu] = -1;
        if (CPU_ISSET(cpu, &allowed)) {
            s->cpu_slot[cpu] = (int)s->n_pin_cpus;
            s->pin_cpus[s->n_pin_cpus++] = cpu;
        }
    }
    return 0;
}

int server_start(qr_db *db, const server_config *cfg, server **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    if (cfg->addr_len > sizeof(struct sockaddr_storage)) {
        snprintf(errbuf, errlen, "listen address too long");
        return -1;
    }
    server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    s->db = db;
    s->cfg = *cfg;
    if (s->cfg.max_body == 0) s->cfg.max_body = SERVER_MAX_BODY;
    if (s->cfg.max_connections == 0) s->cfg.max_connections = 1;
    memcpy(&s->addr, cfg->addr, cfg->addr_len);
    s->cfg.addr = (const struct sockaddr *)&s->addr;
    s->ops = qr_operations();
    s->stream_ops = qr_stream_operations();
    atomic_init(&s->connections, 0);
    atomic_init(&s->next_loop, 0);
    atomic_init(&s->draining, 0);
    atomic_init(&s->drain_acks, 0);
    pthread_mutex_init(&s->pool_mu, NULL);
    pthread_cond_init(&s->pool_cv, NULL);
    pthread_mutex_init(&s->ready_mu, NULL);
    pthread_cond_init(&s->ready_cv, NULL);

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

    s->listen_fd = open_listener(s->cfg.addr, cfg->addr_len, errbuf, errlen);
    if (s->listen_fd < 0) {
        server_free(s);
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof bound;
    if (getsockname(s->listen_fd, (struct sockaddr *)&bound, &bl) == 0)
        s->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                              : ntohs(((struct sockaddr_in *)&bound)->sin_port);

    s->n_loops = s->cfg.loops ? s->cfg.loops : 1;
    s->loops = calloc(s->n_loops, sizeof *s->loops);
    if (s->loops == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        server_free(s);
        return -1;
    }
    for (unsigned i = 0; i < s->n_loops; i++) {
        s->loops[i].s = s;
        atomic_init(&s->loops[i].in_flight, 0);
        atomic_init(&s->loops[i].handoffs, 0);
        atomic_init(&s->loops[i].serving, 0);
    }
    if (s->cfg.pin_loops && plan_pins(s, errbuf, errlen)) {
        server_free(s);
        return -1;
    }
    if (s->cfg.workers) {
        s->workers = calloc(s->cfg.workers, sizeof *s->workers);
        if (s->workers == NULL) {
            snprintf(errbuf, errlen, "out of memory");
            server_free(s);
            return -1;
        }
        for (; s->n_workers < s->cfg.workers; s->n_workers++)
            if (pthread_create(&s->workers[s->n_workers], NULL, worker_main, s) != 0) {
                snprintf(errbuf, errlen, "cannot start a worker thread: %s", strerror(errno));
                pool_stop(s);
                server_free(s);
                return -1;
            }
    }
    int failed = 0;
    for (unsigned i = 0; i < s->n_loops && !failed; i++) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        int rc = 0;
        if (s->pin_cpus) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(s->pin_cpus[i % s->n_pin_cpus], &one);
            rc = pthread_attr_setaffinity_np(&attr, sizeof one, &one);
        }
        if (rc == 0) rc = pthread_create(&s->loops[i].thread, &attr, loop_main, &s->loops[i]);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            if (s->pin_cpus)
                snprintf(errbuf, errlen, "cannot start an event loop thread on CPU %d: %s",
                         s->pin_cpus[i % s->n_pin_cpus], strerror(rc));
            else
                snprintf(errbuf, errlen, "cannot start an event loop thread: %s", strerror(rc));
            failed = 1;
            break;
        }
        pthread_mutex_lock(&s->ready_mu);
        while (s->loops[i].ready == 0)
            pthread_cond_wait(&s->ready_cv, &s->ready_mu);
        pthread_mutex_unlock(&s->ready_mu);
        if (s->loops[i].ready < 0) {
            snprintf(errbuf, errlen, "cannot duplicate the listening socket: %s", strerror(errno));
            failed = 1;
        }
    }
    pthread_mutex_lock(&s->ready_mu);
    s->go = 1;
    pthread_cond_broadcast(&s->ready_cv);
    pthread_mutex_unlock(&s->ready_mu);
    if (failed) {
        server_stop(s);
        return -1;
    }
    *out = s;
    return 0;
}

unsigned server_port(const server *s)
{
    return s->port;
}

void server_drain(server *s)
{
    if (atomic_exchange(&s->draining, 1)) return;
    unsigned started = 0;
    for (unsigned i = 0; i < s->n_loops; i++) {
        if (s->loops[i].ready <= 0) continue;
        started++;
        h2o_multithread_send_message(&s->loops[i].control, &s->loops[i].drain_msg);
    }
    /* Once every loop has let go of its listener, the socket stops accepting for good. */
    while (atomic_load(&s->drain_acks) < started) {
        struct timespec tick = {0, 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    shutdown(s->listen_fd, SHUT_RDWR);
    close(s->listen_fd);
    s->listen_fd = -1;
}

unsigned server_in_flight(const server *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < s->n_loops; i++)
        n += atomic_load(&((server *)s)->loops[i].in_flight);
    return n;
}

void server_stop(server *s)
{
    if (s == NULL) return;
    /* Listeners first: once every loop has closed its own, no loop hands another a
     * connection, and each loop can tell when it has taken all it was sent. */
    server_drain(s);
    /* Calls already queued still run; their answers go back to the loops, which are
     * still turning. */
    pool_stop(s);
    for (unsigned i = 0; i < s->n_loops; i++)
        if (s->loops[i].ready > 0)
            h2o_multithread_send_message(&s->loops[i].control, &s->loops[i].stop_msg);
    for (unsigned i = 0; i < s->n_loops; i++)
        if (s->loops[i].ready) pthread_join(s->loops[i].thread, NULL); /* ran, so joinable */
    server_free(s);
}
