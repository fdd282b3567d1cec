/* http.c — the HTTP layer of `quarry serve` on libmicrohttpd (see server.h).
 *
 * One MHD daemon with a pool of epoll threads; each request's body is gathered (bounded
 * by max_body) and then answered on the same thread: health check, content type,
 * X-Amz-Target, SigV4, then qr_call. Errors are ordered as DynamoDB orders them. MHD
 * parses HTTP; nothing here reads raw protocol bytes. The listening socket is made here
 * so that a bind failure can be reported precisely. */
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "server/wire.h"
#include "util/buf.h"

#define E_TOO_LARGE "RequestEntityTooLarge"
#define UNKNOWN_OP_XML "<UnknownOperationException/>\n"
#define HEALTH_BODY "healthy: quarry\n"
#define SERVICE "dynamodb"
/* Per-connection memory for request headers and I/O buffers. MHD clears it between
 * requests, so it is kept small; request headers beyond it are answered 431. */
#define CONNECTION_MEMORY (16 * 1024)
#define PREALLOCATE_MAX ((size_t)1 << 20)

struct server {
    qr_db *db;
    server_config cfg;
    struct sockaddr_storage addr;
    struct MHD_Daemon *daemon;
    int listen_fd;
    int quiesced;
    unsigned port;
    const char *const *ops;
    atomic_uint in_flight;
    atomic_int draining;
};

/* One HTTP request, from its headers to the completion of its response. */
typedef struct request {
    struct timespec start;
    buf body;
    size_t received;
    int too_large;
    int answered;
} request;

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

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
    server *s = cls;
    if (s->cfg.log_level > SERVER_LOG_WARN) return;
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) msg[--n] = '\0';
    log_line("warn http: %s", msg);
}

static long elapsed_us(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000000L + (now.tv_nsec - start->tv_nsec) / 1000;
}

static void log_request(server *s, request *r, const char *op, int status, const char *error,
                        const char *message, const char *id)
{
    server_log_level lvl = status >= 500 ? SERVER_LOG_ERROR
                           : status >= 400 ? SERVER_LOG_WARN
                                           : SERVER_LOG_INFO;
    if (lvl < s->cfg.log_level) return;
    char tables[256] = "";
    if (r->body.len && !r->too_large) wire_table_names(r->body.data, r->body.len, tables, sizeof tables);
    static const char *const names[] = {"debug", "info", "warn", "error", "none"};
    if (s->cfg.log_level == SERVER_LOG_DEBUG && message && *message) {
        log_line("%s %s table=%s status=%d error=%s us=%ld bytes=%zu id=%s message=\"%.300s\"",
                 names[lvl], op ? op : "-", *tables ? tables : "-", status, error ? error : "-",
                 elapsed_us(&r->start), r->received, id, message);
    } else {
        log_line("%s %s table=%s status=%d error=%s us=%ld", names[lvl], op ? op : "-",
                 *tables ? tables : "-", status, error ? error : "-", elapsed_us(&r->start));
    }
}

/* ---- responses ---- */

static enum MHD_Result send_response(server *s, struct MHD_Connection *c, request *r, int status,
                                     const char *ctype, const char *body, size_t len,
                                     const char *op, const char *error, const char *message)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (resp == NULL) return MHD_NO;
    char id[53], crc[16];
    wire_request_id(id);
    snprintf(crc, sizeof crc, "%u", wire_crc32(body, len));
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(resp, "x-amzn-RequestId", id);
    MHD_add_response_header(resp, "x-amz-crc32", crc);
    if (atomic_load(&s->draining)) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    r->answered = 1;
    log_request(s, r, op, status, error, message, id);
    return rc;
}

static enum MHD_Result send_error(server *s, struct MHD_Connection *c, request *r, int status,
                                  const char *ctype, const char *op, const char *type,
                                  const char *message)
{
    buf b;
    buf_init(&b, 0);
    if (wire_error_body(&b, type, message)) {
        buf_free(&b);
        return MHD_NO;
    }
    enum MHD_Result rc = send_response(s, c, r, status, ctype, b.data, b.len, op, type, message);
    buf_free(&b);
    return rc;
}

/* ---- gathering the request for SigV4 ---- */

/* Pairs gathered from MHD: on the stack for ordinary requests, on the heap past that. */
typedef struct pairs {
    sigv4_pair *v;
    size_t n, cap;
    int failed;
    sigv4_pair local[32];
} pairs;

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                               const char *value, size_t value_size)
{
    (void)kind;
    pairs *p = cls;
    if (p->v == NULL) {
        p->v = p->local;
        p->cap = sizeof p->local / sizeof p->local[0];
    }
    if (p->n == p->cap) {
        size_t cap = p->cap * 2;
        sigv4_pair *v = p->v == p->local ? malloc(cap * sizeof *v) : realloc(p->v, cap * sizeof *v);
        if (v == NULL) {
            p->failed = 1;
            return MHD_NO;
        }
        if (p->v == p->local) memcpy(v, p->local, sizeof p->local);
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (sigv4_pair){key, key_size, value, value_size};
    return MHD_YES;
}

/* Verifies the request's signature; 0, or -1 with e set. */
static int authenticate(server *s, struct MHD_Connection *c, const char *url, const char *method,
                        request *r, qr_err *e)
{
    pairs headers, query;
    headers.v = query.v = NULL;
    headers.n = query.n = headers.cap = query.cap = 0;
    headers.failed = query.failed = 0;
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, collect, &headers);
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect, &query);
    int rc;
    if (headers.failed || query.failed) {
        rc = err_set(e, QR_E_INTERNAL, "out of memory reading the request headers");
    } else {
        sigv4_request req = {method, url, query.v, query.n, headers.v, headers.n,
                             r->body.data ? r->body.data : "", r->body.len};
        rc = sigv4_verify(&req, s->cfg.keys, SERVICE, time(NULL), NULL, 0, e);
    }
    if (headers.v != headers.local) free(headers.v);
    if (query.v != query.local) free(query.v);
    return rc;
}

/* The media type of a Content-Type value, if it is one DynamoDB accepts. */
static const char *json_content_type(const char *v)
{
    if (v == NULL) return NULL;
    size_t n = strcspn(v, ";");
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
    if (n == strlen(WIRE_JSON_CONTENT_TYPE) && strncasecmp(v, WIRE_JSON_CONTENT_TYPE, n) == 0)
        return WIRE_JSON_CONTENT_TYPE;
    if (n == 16 && strncasecmp(v, "application/json", n) == 0) return "application/json";
    return NULL;
}

/* ---- the request handler ---- */

static enum MHD_Result answer(server *s, struct MHD_Connection *c, request *r, const char *url,
                              const char *method)
{
    int is_post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    if (!is_post && (strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
                     strcmp(method, MHD_HTTP_METHOD_HEAD) == 0) &&
        strcmp(url, "/") == 0)
        return send_response(s, c, r, 200, "text/plain", HEALTH_BODY, strlen(HEALTH_BODY),
                             "health", NULL, NULL);

    const char *ctype_in = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *ctype = json_content_type(ctype_in);
    if (!is_post || (r->body.len > 0 && ctype == NULL))
        return send_response(s, c, r, 404, "text/xml", UNKNOWN_OP_XML, strlen(UNKNOWN_OP_XML),
                             method, QR_E_UNKNOWN_OP, "not a POST of DynamoDB JSON");
    if (ctype == NULL) ctype = WIRE_JSON_CONTENT_TYPE;

    const char *target = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Amz-Target");
    const char *op = wire_operation(target, s->ops);
    qr_err e;
    err_init(&e);
    int auth_failed = authenticate(s, c, url, method, r, &e) != 0;
    if (op == NULL || auth_failed) {
        /* DynamoDB judges the JSON first, then the target, then the signature. */
        char why[200];
        if (r->body.len && !wire_json_valid(r->body.data, r->body.len, why, sizeof why)) {
            char msg[256];
            snprintf(msg, sizeof msg, "Malformed JSON: %s", why);
            return send_error(s, c, r, 400, ctype, op, QR_E_SERIALIZATION, msg);
        }
        if (op == NULL) {
            char msg[160];
            snprintf(msg, sizeof msg, "Unknown operation: X-Amz-Target '%.100s'",
                     target ? target : "");
            return send_error(s, c, r, 400, ctype, NULL, QR_E_UNKNOWN_OP, msg);
        }
        return send_error(s, c, r, err_http_status(e.type), ctype, op, e.type, e.msg);
    }

    qr_response resp;
    qr_call(s->db, op, r->body.data ? r->body.data : "", r->body.len, &resp);
    enum MHD_Result rc;
    if (resp.body == NULL) {
        rc = send_error(s, c, r, 500, ctype, op, QR_E_INTERNAL, "the engine returned no response");
    } else {
        const char *message = NULL;
        if (resp.error_type && s->cfg.log_level == SERVER_LOG_DEBUG) message = resp.body;
        rc = send_response(s, c, r, resp.http_status ? resp.http_status : 200, ctype, resp.body,
                           resp.len, op, resp.error_type, message);
    }
    qr_response_free(&resp);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    server *s = cls;
    request *r = *con_cls;
    if (r == NULL) {
        r = calloc(1, sizeof *r);
        if (r == NULL) return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &r->start);
        buf_init(&r->body, s->cfg.max_body);
        *con_cls = r;
        atomic_fetch_add(&s->in_flight, 1);
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno == 0 && *end == '\0' && n > s->cfg.max_body) {
                r->too_large = 1;
                char msg[160];
                snprintf(msg, sizeof msg, "Request body of %llu bytes exceeds the limit of %zu bytes",
                         n, s->cfg.max_body);
                return send_error(s, c, r, 413, WIRE_JSON_CONTENT_TYPE, NULL, E_TOO_LARGE, msg);
            }
            /* An announced body gets one allocation up front, but no more than a
             * megabyte before the bytes actually arrive. */
            if (errno == 0 && *end == '\0' && n > 0) {
                size_t first = n < PREALLOCATE_MAX ? (size_t)n + 1 : PREALLOCATE_MAX;
                r->body.data = malloc(first);
                if (r->body.data == NULL) return MHD_NO;
                r->body.cap = first;
                r->body.data[0] = '\0';
            }
        }
        return MHD_YES;
    }
    if (*upload_size > 0) {
        size_t n = *upload_size;
        *upload_size = 0;
        r->received += n;
        if (r->answered) return MHD_YES;
        if (!r->too_large && buf_append(&r->body, upload, n)) {
            r->too_large = 1;
            buf_free(&r->body);
        }
        /* A chunked body past the limit is read and dropped, but not without end. */
        if (r->too_large && r->received > 2 * s->cfg.max_body) return MHD_NO;
        return MHD_YES;
    }
    if (r->answered) return MHD_YES;
    if (r->too_large) {
        char msg[160];
        snprintf(msg, sizeof msg, "Request body exceeds the limit of %zu bytes", s->cfg.max_body);
        return send_error(s, c, r, 413, WIRE_JSON_CONTENT_TYPE, NULL, E_TOO_LARGE, msg);
    }
    return answer(s, c, r, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    server *s = cls;
    request *r = *con_cls;
    if (r == NULL) return;
    buf_free(&r->body);
    free(r);
    *con_cls = NULL;
    atomic_fetch_sub(&s->in_flight, 1);
}

/* Keeps the URL and query arguments exactly as sent: SigV4 signs the raw path. */
static size_t keep_raw(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

/* ---- lifecycle ---- */

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

int server_start(qr_db *db, const server_config *cfg, server **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    s->db = db;
    s->cfg = *cfg;
    if (s->cfg.max_body == 0) s->cfg.max_body = SERVER_MAX_BODY;
    if (s->cfg.threads == 0) s->cfg.threads = 1;
    if (cfg->addr_len > sizeof s->addr) {
        snprintf(errbuf, errlen, "listen address too long");
        free(s);
        return -1;
    }
    memcpy(&s->addr, cfg->addr, cfg->addr_len);
    s->cfg.addr = (const struct sockaddr *)&s->addr;
    s->ops = qr_operations();
    atomic_init(&s->in_flight, 0);
    atomic_init(&s->draining, 0);

    s->listen_fd = open_listener(s->cfg.addr, cfg->addr_len, errbuf, errlen);
    if (s->listen_fd < 0) {
        free(s);
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof bound;
    if (getsockname(s->listen_fd, (struct sockaddr *)&bound, &bl) == 0)
        s->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                              : ntohs(((struct sockaddr_in *)&bound)->sin_port);

    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_TURBO;
    if (s->cfg.addr->sa_family == AF_INET6) flags |= MHD_USE_IPv6;
    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s,
        MHD_OPTION_LISTEN_SOCKET, s->listen_fd, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)s->cfg.threads, MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->cfg.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->cfg.timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_UNESCAPE_CALLBACK, keep_raw, NULL, MHD_OPTION_END);
    if (s->daemon == NULL) {
        snprintf(errbuf, errlen, "cannot start the HTTP server (libmicrohttpd refused the options)");
        close(s->listen_fd);
        free(s);
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
    atomic_store(&s->draining, 1);
    if (!s->quiesced) {
        MHD_quiesce_daemon(s->daemon);
        s->quiesced = 1;
        /* Stop listening now, so new clients are refused rather than left waiting in the
         * backlog; the descriptor itself is closed only after MHD_stop_daemon. */
        shutdown(s->listen_fd, SHUT_RDWR);
    }
}

unsigned server_in_flight(const server *s)
{
    return atomic_load(&((server *)s)->in_flight);
}

void server_stop(server *s)
{
    if (s == NULL) return;
    MHD_stop_daemon(s->daemon);
    /* After a quiesce the listening socket is ours to close; otherwise MHD closed it. */
    if (s->quiesced) close(s->listen_fd);
    free(s);
}
