/* cql.c — Cassandra's native protocol on the server core (see cql.h).
 *
 * Per connection: envelopes read with a size cap (cql_frame.h), the handshake (OPTIONS,
 * STARTUP, AUTHENTICATE and AUTH_RESPONSE against the credentials), v4's LZ4 bodies or,
 * from v5, segments once READY or AUTHENTICATE has gone, REGISTER for events, and many
 * streams in flight, each request a core call of qr_cql_call with the connection's keyspace
 * and role. Schema changes are sent as EVENTs on stream -1 to the registered connections of
 * every loop. Answers not yet written to their sockets are charged to the server's exchange
 * budget (budget.h), and a connection reads its next request only while the budget allows;
 * the bytes of envelopes arrived and not yet handled count against the server's bound on
 * requests' bytes (bodybound.h), which stops reading a connection holding 64 KB or more of
 * them while it is full;
 * a client that takes nothing of an answer for the server's timeout is cut. What a statement
 * means is qr_cql_call's; no CQL is read here. */
#include "server/cql.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "cqlwire/cql_codec.h"
#include "cqlwire/cql_frame.h"
#include "server/bodybound.h"
#include "server/budget.h"
#include "server/core.h"
#include "util/buf.h"

/* The CQL version announced in SUPPORTED: Cassandra 4.1's. */
#define CQL_LANGUAGE_VERSION "3.4.6"
/* How often, in parts of the server's timeout, a write's progress is looked at. */
#define CQL_TIMEOUT_CHECKS 4
/* A buffer grown past this for a large answer is freed once it has served, not kept. */
#define CQL_KEEP_BUFFER ((size_t)1 << 20)

typedef struct cql_loop cql_loop;

struct cql_server {
    cql_server_config cfg;
    qr_db *db;
    core_protocol proto;
    core *core;
    pthread_mutex_t mu; /* loops, and each loop's open */
    cql_loop **loops;
    unsigned n_loops;
};

/* A SCHEMA_CHANGE event on its way to one loop. */
typedef struct cql_event {
    h2o_multithread_message_t msg;
    size_t len;
    unsigned char body[];
} cql_event;

/* The protocol's state on one of the core's loops. */
struct cql_loop {
    cql_server *s;
    core_loop *core;
    h2o_multithread_queue_t *queue; /* for events from the other loops */
    h2o_multithread_receiver_t events;
    budget_loop budget;
    bodybound_loop bodies;
    h2o_timeout_t write_check; /* a CQL_TIMEOUT_CHECKS-th of the server's timeout */
    int open;                  /* events may be sent to it (under s->mu) */
    h2o_linklist_t conns;
    int draining;
};

typedef enum conn_state { CONN_NEW, CONN_AUTHENTICATING, CONN_READY } conn_state;

/* One client connection. */
typedef struct cql_conn {
    h2o_linklist_t link; /* in its loop's conns */
    cql_loop *loop;
    h2o_socket_t *sock;
    conn_state state;
    uint8_t version; /* set by STARTUP; 0 before */
    int lz4;         /* compression asked for in STARTUP */
    int framed;      /* v5 segments, from the answer to STARTUP on */
    cql_v5_reader v5;
    cql_envelope_rules rules;
    uint64_t drop;               /* bytes still to drop of a refused envelope (before v5) */
    buf scratch;                 /* a decompressed body */
    buf envelope;                /* the answer being built */
    buf stage;                   /* v5: whole envelopes waiting to go as one segment */
    buf out;                     /* bytes to send after the write under way */
    buf sending;                 /* the bytes of the write under way */
    h2o_timeout_entry_t stalled; /* linked while a write is under way */
    uint64_t taken;              /* core_bytes_taken when last seen to grow, */
    struct timespec progress_at; /* at this time */
    size_t calls_held;     /* answers the core holds for the calls in flight (core_call_held) */
    size_t charge;         /* of the budget: stage, out, sending and calls_held, as last settled */
    budget_wait wait;      /* linked while the next envelope waits for the budget */
    int admitted;          /* the budget let the next envelope start (after a wait) */
    int writing;           /* h2o_socket_write under way */
    bodybound_conn *bound; /* its part of the bound on requests' bytes; NULL if out of memory */
    int peer_gone;         /* the socket failed, the client closed or memory ran out: close as soon
                              as no write is under way, cancelling the calls */
    int close_after;       /* read no more; close once the calls are answered and sent (a fatal
                              error, draining) */
    unsigned events;       /* REGISTERed event types (CQL_EVENT_*) */
    char keyspace[64];
    char user[128]; /* "" while no role authenticated */
    unsigned in_flight;
    h2o_linklist_t calls; /* cql_call.link */
} cql_conn;

/* A request under way: its core call, and where its answer goes. */
typedef struct cql_call {
    core_call call;
    h2o_linklist_t link;
    cql_conn *conn;
    int16_t stream;
    uint8_t opcode;
    size_t held; /* core_call_held once started: in c->conn's calls_held */
    struct timespec start;
} cql_call;

static int conn_settle(cql_conn *c);

/* ---- logging ---- */

static void log_request(const cql_conn *c, const cql_call *k, const unsigned char *body, size_t len,
                        int is_error)
{
    server_log_level lvl = is_error ? SERVER_LOG_WARN : SERVER_LOG_INFO;
    if (lvl < c->loop->s->cfg.log_level) return;
    long us = core_elapsed_us(&k->start);
    if (!is_error) {
        core_log("info CQL %s stream=%d keyspace=%s us=%ld", cql_opcode_name(k->opcode), k->stream,
                 c->keyspace[0] ? c->keyspace : "-", us);
        return;
    }
    int32_t code = len >= 4 ? (int32_t)be32_read(body) : -1;
    size_t mlen = len >= 6 ? be16_read(body + 4) : 0;
    if (mlen > len - 6) mlen = len >= 6 ? len - 6 : 0;
    core_log("warn CQL %s stream=%d keyspace=%s error=0x%04x us=%ld message=\"%.*s\"",
             cql_opcode_name(k->opcode), k->stream, c->keyspace[0] ? c->keyspace : "-", code, us,
             (int)(mlen > 300 ? 300 : mlen), (const char *)body + 6);
}

/* ---- output ---- */

static void on_write(h2o_socket_t *sock, const char *err);

/* What the budget is charged for c: the answers it holds, built or being built. */
static void conn_charge(cql_conn *c)
{
    budget_charge(&c->loop->budget, &c->charge,
                  c->stage.len + c->out.len + c->sending.len + c->calls_held);
}

/* Marks now as the write's last progress, and looks again in a while. */
static void watch_write(cql_conn *c)
{
    if (h2o_timeout_is_linked(&c->stalled)) h2o_timeout_unlink(&c->stalled);
    c->taken = core_bytes_taken(c->sock);
    clock_gettime(CLOCK_MONOTONIC, &c->progress_at);
    h2o_timeout_link(core_loop_evloop(c->loop->core), &c->loop->write_check, &c->stalled);
}

/* Hands what is queued to the socket unless a write is under way. */
static void conn_flush(cql_conn *c)
{
    if (c->peer_gone || c->writing) return;
    if (c->stage.len) {
        if (cql_segment_write(&c->out, c->stage.data, c->stage.len, 1, c->lz4)) {
            c->peer_gone = 1; /* out of memory: nothing sane can follow */
            return;
        }
        buf_reset(&c->stage);
    }
    if (c->out.len == 0) return;
    buf t = c->sending;
    c->sending = c->out;
    c->out = t;
    buf_reset(&c->out);
    c->writing = 1;
    if (c->loop->s->cfg.timeout_seconds) watch_write(c);
    h2o_iovec_t v = h2o_iovec_init(c->sending.data, c->sending.len);
    h2o_socket_write(c->sock, &v, 1, on_write);
}

/* Queues the envelope built in c->envelope: compressed before v5 when LZ4 was asked for,
 * and from v5 on inside segments. Returns 0, or -1 when memory ran out (the connection
 * then closes). */
static int conn_queue_envelope(cql_conn *c)
{
    buf *e = &c->envelope;
    int rc = 0;
    if (!c->framed) {
        if (c->lz4 && c->state != CONN_NEW && c->version < 5 && cql_envelope_compress_lz4(e, 0))
            rc = -1;
        if (rc == 0) rc = buf_append(&c->out, e->data, e->len);
    } else if (e->len <= CQL_SEGMENT_MAX_PAYLOAD) {
        if (c->stage.len + e->len > CQL_SEGMENT_MAX_PAYLOAD) {
            rc = cql_segment_write(&c->out, c->stage.data, c->stage.len, 1, c->lz4);
            buf_reset(&c->stage);
        }
        if (rc == 0) rc = buf_append(&c->stage, e->data, e->len);
    } else {
        if (c->stage.len) {
            rc = cql_segment_write(&c->out, c->stage.data, c->stage.len, 1, c->lz4);
            buf_reset(&c->stage);
        }
        if (rc == 0) rc = cql_segments_write(&c->out, e->data, e->len, c->lz4);
    }
    /* A large answer's memory is not kept for the connection's next small ones. */
    if (e->cap > CQL_KEEP_BUFFER)
        buf_free(e);
    else
        buf_reset(e);
    if (rc) c->peer_gone = 1;
    return rc;
}

/* The answer's version: the connection's once STARTUP set it, else the request's. */
static uint8_t answer_version(const cql_conn *c, uint8_t request_version)
{
    return c->version ? c->version : request_version;
}

/* Queues an envelope whose body is body[0..len), after what x carries (NULL: nothing). */
static int send_answer(cql_conn *c, uint8_t version, int16_t stream, uint8_t opcode,
                       const cql_response_extras *x, const void *body, size_t len)
{
    buf_reset(&c->envelope);
    size_t start = cql_response_begin(&c->envelope, version, stream, opcode, x);
    if (start == (size_t)-1 || buf_append(&c->envelope, body, len) ||
        cql_envelope_end(&c->envelope, start)) {
        buf_reset(&c->envelope);
        /* Too large for an envelope: the client is told why instead. */
        if (opcode != CQL_OP_ERROR) {
            cql_error e = {.code = CQL_ERR_SERVER, .message = "the response is too large"};
            size_t s2 = cql_envelope_begin(&c->envelope, version, 0, stream, CQL_OP_ERROR);
            if (s2 != (size_t)-1 && cql_write_error(&c->envelope, version, &e) == 0 &&
                cql_envelope_end(&c->envelope, s2) == 0)
                return conn_queue_envelope(c);
        }
        c->peer_gone = 1;
        return -1;
    }
    return conn_queue_envelope(c);
}

static int send_body(cql_conn *c, uint8_t version, int16_t stream, uint8_t opcode, const void *body,
                     size_t len)
{
    return send_answer(c, version, stream, opcode, NULL, body, len);
}

/* An ERROR in the retired versions 1 and 2, whose header is 8 bytes with a one-byte
 * stream: what a client of theirs reads when told its version is refused. */
static int send_old_error(cql_conn *c, uint8_t version, int16_t stream, const buf *body)
{
    uint8_t h[8] = {(uint8_t)(version | CQL_RESPONSE_BIT), 0, (uint8_t)stream, CQL_OP_ERROR};
    h[4] = (uint8_t)(body->len >> 24);
    h[5] = (uint8_t)(body->len >> 16);
    h[6] = (uint8_t)(body->len >> 8);
    h[7] = (uint8_t)body->len;
    if (buf_append(&c->out, h, sizeof h) || buf_append(&c->out, body->data, body->len)) {
        c->peer_gone = 1;
        return -1;
    }
    return 0;
}

static int send_error(cql_conn *c, uint8_t version, int16_t stream, cql_error_code code,
                      const char *message)
{
    buf b;
    buf_init(&b, 0);
    cql_error e = {.code = code, .message = message};
    int rc = cql_write_error(&b, version, &e) ? -1
             : version < CQL_VERSION_MIN && !c->framed
                 ? send_old_error(c, version, stream, &b)
                 : send_body(c, version, stream, CQL_OP_ERROR, b.data, b.len);
    buf_free(&b);
    if (c->loop->s->cfg.log_level <= SERVER_LOG_WARN)
        core_log("warn CQL stream=%d error=0x%04x message=\"%.300s\"", stream, code, message);
    return rc;
}

/* ---- reading and pausing ---- */

/* Whether the connection may take another request now. */
static int conn_can_take(const cql_conn *c)
{
    return c->in_flight < CQL_MAX_IN_FLIGHT && c->out.len + c->sending.len < CQL_MAX_PENDING_OUT &&
           !c->close_after && !c->peer_gone && !c->loop->draining &&
           c->wait.link.next == NULL; /* not waiting for the budget */
}

/* ---- answers of calls ---- */

static void call_free(cql_call *k)
{
    h2o_linklist_unlink(&k->link);
    k->conn->in_flight--;
    k->conn->calls_held -= k->held;
    free(k);
}

static void broadcast_event(cql_server *s, const unsigned char *body, size_t len);

static void on_call_answer(core_call *cc, core_result *r, int unflushed)
{
    cql_call *k = H2O_STRUCT_FROM_MEMBER(cql_call, call, cc);
    cql_conn *c = k->conn;
    qr_cql_response *resp = &r->cql;
    uint8_t v = c->version;
    if (unflushed) {
        send_error(c, v, k->stream, CQL_ERR_SERVER, "the write-ahead log could not be written");
    } else if (resp->body == NULL) {
        send_error(c, v, k->stream, CQL_ERR_SERVER, "the engine returned no response");
    } else {
        log_request(c, k, resp->body, resp->len, resp->opcode == CQL_OP_ERROR);
        if (resp->keyspace[0]) snprintf(c->keyspace, sizeof c->keyspace, "%s", resp->keyspace);
        if (resp->event && resp->event_len)
            broadcast_event(c->loop->s, resp->event, resp->event_len);
        cql_response_extras x = {
            .warnings = (const char *const *)resp->warnings,
            .n_warnings = resp->n_warnings > UINT16_MAX ? UINT16_MAX : (uint16_t)resp->n_warnings};
        send_answer(c, v, k->stream, resp->opcode, &x, resp->body, resp->len);
    }
    call_free(k);
    conn_settle(c);
}

/* Hands a QUERY, PREPARE, EXECUTE or BATCH body to the core. */
static void start_call(cql_conn *c, const cql_envelope *env, const uint8_t *body, size_t len)
{
    /* The custom payload before the message is ignored, as Cassandra's default query
     * handler ignores it; the executor reads the message. */
    if (env->flags & CQL_FLAG_CUSTOM_PAYLOAD) {
        if (c->version < 4) {
            send_error(c, c->version, env->stream, CQL_ERR_PROTOCOL,
                       "Received frame with CUSTOM_PAYLOAD flag for native protocol version < 4");
            return;
        }
        cql_pool pool = {0};
        cql_reader r;
        cql_reader_init(&r, body, len, &pool);
        cql_bytes_pair *pairs;
        uint16_t n;
        int bad = cql_read_bytes_map(&r, "the custom payload's [bytes map]", &pairs, &n);
        size_t used = r.pos;
        char msg[300];
        snprintf(msg, sizeof msg, "%s message: %s", cql_opcode_name(env->opcode), r.err);
        cql_pool_free(&pool);
        if (bad) {
            send_error(c, c->version, env->stream, CQL_ERR_PROTOCOL, msg);
            return;
        }
        body += used;
        len -= used;
    }
    cql_call *k = calloc(1, sizeof *k);
    if (k == NULL) {
        send_error(c, c->version, env->stream, CQL_ERR_OVERLOADED, "out of memory");
        return;
    }
    k->conn = c;
    k->stream = env->stream;
    k->opcode = env->opcode;
    clock_gettime(CLOCK_MONOTONIC, &k->start);
    k->call.kind = CORE_CALL_CQL;
    k->call.cql = (qr_cql_request){.version = c->version,
                                   .opcode = env->opcode,
                                   .body = body,
                                   .len = len,
                                   .keyspace = c->keyspace[0] ? c->keyspace : NULL,
                                   .user = c->user[0] ? c->user : NULL};
    k->call.answer = on_call_answer;
    h2o_linklist_insert(&c->calls, &k->link);
    c->in_flight++;
    if (core_call_start(c->loop->core, &k->call)) {
        call_free(k);
        send_error(c, c->version, env->stream, CQL_ERR_OVERLOADED,
                   "out of memory queueing the request");
        return;
    }
    /* A call run on the loop has built its answer already: it is charged now, before
     * the budget judges the next request. */
    k->held = core_call_held(&k->call);
    c->calls_held += k->held;
}

/* ---- the handshake and the server's own messages ---- */

static int send_supported(cql_conn *c, uint8_t version, int16_t stream)
{
    static const char *const cql_versions[] = {CQL_LANGUAGE_VERSION};
    static const char *const compressions[] = {"lz4"};
    static const char *const protocols[] = {"3/v3", "4/v4", "5/v5"};
    const cql_text_multi options[] = {
        {"CQL_VERSION", cql_versions, 1},
        {"COMPRESSION", compressions, 1},
        {"PROTOCOL_VERSIONS", protocols, 3},
    };
    buf b;
    buf_init(&b, 0);
    int rc = cql_write_supported(&b, options, 3)
                 ? -1
                 : send_body(c, version, stream, CQL_OP_SUPPORTED, b.data, b.len);
    buf_free(&b);
    return rc;
}

static void on_startup(cql_conn *c, const cql_envelope *env, const cql_request *req)
{
    c->version = env->version;
    c->rules.version = env->version;
    c->lz4 = req->u.startup.compression == CQL_COMPRESSION_LZ4;
    if (c->loop->s->cfg.credentials) {
        c->state = CONN_AUTHENTICATING;
        buf b;
        buf_init(&b, 0);
        if (cql_write_authenticate(&b, CQL_AUTHENTICATOR) == 0)
            send_body(c, c->version, env->stream, CQL_OP_AUTHENTICATE, b.data, b.len);
        buf_free(&b);
    } else {
        c->state = CONN_READY;
        send_body(c, c->version, env->stream, CQL_OP_READY, NULL, 0);
    }
    if (c->version >= 5) {
        /* The answer to STARTUP is the last envelope outside segments, both ways. */
        cql_v5_reader_init(&c->v5, c->lz4, &c->rules);
        c->framed = 1;
    }
}

static void on_auth_response(cql_conn *c, const cql_envelope *env, const cql_request *req)
{
    char msg[300];
    const cql_value *t = &req->u.auth_token;
    if (cql_credentials_check(c->loop->s->cfg.credentials, t->p, t->len, c->user, sizeof c->user,
                              msg, sizeof msg)) {
        c->user[0] = '\0';
        send_error(c, c->version, env->stream, CQL_ERR_AUTH, msg);
        return;
    }
    c->state = CONN_READY;
    buf b;
    buf_init(&b, 0);
    if (cql_write_auth_token(&b, NULL, -1) == 0)
        send_body(c, c->version, env->stream, CQL_OP_AUTH_SUCCESS, b.data, b.len);
    buf_free(&b);
}

/* Cassandra's check of a message against the connection's state, with its words. */
static const char *unexpected(const cql_conn *c, uint8_t opcode, char *msg, size_t len)
{
    const char *name = cql_opcode_name(opcode);
    switch (c->state) {
    case CONN_NEW:
        if (opcode == CQL_OP_STARTUP || opcode == CQL_OP_OPTIONS) return NULL;
        snprintf(msg, len, "Unexpected message %s, expecting STARTUP or OPTIONS", name);
        return msg;
    case CONN_AUTHENTICATING:
        if (opcode == CQL_OP_AUTH_RESPONSE) return NULL;
        snprintf(msg, len, "Unexpected message %s, expecting SASL_RESPONSE", name);
        return msg;
    case CONN_READY:
        if (opcode != CQL_OP_STARTUP && opcode != CQL_OP_AUTH_RESPONSE) return NULL;
        snprintf(msg, len, "Unexpected message %s, the connection is already initialized", name);
        return msg;
    }
    return NULL;
}

/* One whole request envelope. */
static void on_envelope(cql_conn *c, const cql_envelope *env)
{
    uint8_t v = answer_version(c, env->version);
    char msg[300];
    const char *bad = unexpected(c, env->opcode, msg, sizeof msg);
    if (bad) {
        send_error(c, v, env->stream, CQL_ERR_PROTOCOL, bad);
        return;
    }
    const uint8_t *body = env->body;
    size_t len = env->length;
    if ((env->flags & CQL_FLAG_COMPRESSION) && !c->framed) {
        cql_frame_error fe;
        if (!c->lz4 || env->opcode == CQL_OP_STARTUP) {
            send_error(c, v, env->stream, CQL_ERR_PROTOCOL,
                       "Received a compressed frame but no compression was negotiated");
            return;
        }
        if (cql_body_decompress_lz4(body, len, c->rules.max_envelope, &c->scratch, &fe)) {
            send_error(c, v, env->stream, fe.code, fe.msg);
            return;
        }
        body = (const uint8_t *)c->scratch.data;
        len = c->scratch.len;
    }
    if (env->opcode == CQL_OP_QUERY || env->opcode == CQL_OP_PREPARE ||
        env->opcode == CQL_OP_EXECUTE || env->opcode == CQL_OP_BATCH) {
        start_call(c, env, body, len);
        return;
    }
    cql_envelope plain = *env;
    plain.body = body;
    plain.length = (uint32_t)len;
    cql_request req;
    if (cql_request_decode(&plain, &req, msg, sizeof msg)) {
        send_error(c, v, env->stream, CQL_ERR_PROTOCOL, msg);
        cql_request_free(&req);
        return;
    }
    switch (env->opcode) {
    case CQL_OP_OPTIONS:
        send_supported(c, v, env->stream);
        break;
    case CQL_OP_STARTUP:
        on_startup(c, env, &req);
        break;
    case CQL_OP_AUTH_RESPONSE:
        on_auth_response(c, env, &req);
        break;
    case CQL_OP_REGISTER:
        c->events |= req.u.reg.events;
        send_body(c, v, env->stream, CQL_OP_READY, NULL, 0);
        break;
    }
    cql_request_free(&req);
}

/* Answers an envelope the decoders refused. Returns 1 when reading may go on. */
static int on_frame_error(cql_conn *c, const cql_frame_error *fe)
{
    send_error(c, fe->version, fe->stream, fe->code, fe->msg);
    if (fe->skip) return 1;
    c->close_after = 1;
    return 0;
}

/* Whether envelopes may wait to be read: bytes in the input, or (v5) envelopes left in the
 * segment the reader holds. */
static int has_input(const cql_conn *c)
{
    return c->sock->input->size || (c->framed && c->v5.seg_pos < c->v5.segment.len);
}

/* Before v5, an envelope is parsed where it lies in the socket's input: once its header
 * has come, the input is given room for all of it at once, so that it is read into one
 * buffer and not copied from buffer to buffer as they double. Its length was checked
 * against the connection's cap by the parser that asked for more. */
static void reserve_envelope(cql_conn *c)
{
    h2o_buffer_t **in = &c->sock->input;
    size_t avail = (*in)->size;
    if (avail < CQL_HEADER_LEN) return;
    size_t total = (size_t)be32_read((*in)->bytes + 5) + CQL_HEADER_LEN;
    if (total > avail) h2o_buffer_reserve(in, total - avail);
}

/* Reads the envelopes that have arrived, as many as the connection may take. */
static void conn_process(cql_conn *c)
{
    h2o_buffer_t **in = &c->sock->input;
    while (!c->peer_gone && !c->close_after && conn_can_take(c)) {
        size_t avail = (*in)->size;
        if (c->drop) {
            size_t n = avail < c->drop ? avail : (size_t)c->drop;
            h2o_buffer_consume(in, n);
            c->drop -= n;
            if (c->drop) break;
            continue;
        }
        if (!has_input(c)) break;
        /* Once the handshake is done (its answers are small), whatever the envelope asks
         * may build an answer: it waits while the budget is spent, and the connection reads
         * nothing more until on_budget_admit lets this envelope start. */
        if (c->state == CONN_READY && !c->admitted && !budget_admit(&c->loop->budget, &c->wait))
            break;
        const uint8_t *p = (const uint8_t *)(*in)->bytes;
        cql_envelope env;
        cql_frame_error fe;
        size_t used = 0;
        cql_parse_result pr;
        if (c->framed)
            pr = cql_v5_next(&c->v5, p, avail, &used, &env, &fe);
        else
            pr = cql_envelope_parse(p, avail, &c->rules, &env, &used, &fe);
        if (pr == CQL_PARSE_MORE) {
            if (used) h2o_buffer_consume(in, used);
            if (c->framed && used) continue;
            if (!c->framed) reserve_envelope(c);
            break;
        }
        if (pr == CQL_PARSE_ERROR) {
            if (c->framed) {
                if (used) h2o_buffer_consume(in, used);
            } else if (fe.skip) {
                size_t n = fe.skip < avail ? (size_t)fe.skip : avail;
                h2o_buffer_consume(in, n);
                c->drop = fe.skip - n;
            }
            c->admitted = 0;
            int go_on = on_frame_error(c, &fe);
            conn_charge(c);
            if (!go_on) break;
            continue;
        }
        /* The envelope lives in the input (or the v5 reader) until it is consumed. */
        c->admitted = 0;
        on_envelope(c, &env);
        h2o_buffer_consume(in, used);
        if (c->framed) cql_v5_envelope_done(&c->v5);
        /* A large body's decompressed form is not kept for the connection's next ones. */
        if (c->scratch.cap > CQL_KEEP_BUFFER) buf_free(&c->scratch);
        conn_charge(c);
    }
}

static void on_read(h2o_socket_t *sock, const char *err)
{
    cql_conn *c = sock->data;
    if (err != NULL) c->peer_gone = 1;
    conn_settle(c);
}

static void on_write(h2o_socket_t *sock, const char *err)
{
    cql_conn *c = sock->data;
    c->writing = 0;
    if (h2o_timeout_is_linked(&c->stalled)) h2o_timeout_unlink(&c->stalled);
    /* A large answer's memory is not kept for the connection's next small ones. */
    if (c->sending.cap > CQL_KEEP_BUFFER)
        buf_free(&c->sending);
    else
        buf_reset(&c->sending);
    if (err != NULL) c->peer_gone = 1;
    conn_settle(c);
}

/* A write under way, looked at again: a client that took some of it since the last look
 * is given the timeout anew; one that took nothing for the whole timeout reads nothing,
 * and is cut, so that what it holds goes back to the budget (the write then fails and
 * closes the connection). */
static void on_write_check(h2o_timeout_entry_t *entry)
{
    cql_conn *c = H2O_STRUCT_FROM_MEMBER(cql_conn, stalled, entry);
    unsigned timeout = c->loop->s->cfg.timeout_seconds;
    if (core_bytes_taken(c->sock) != c->taken) {
        watch_write(c);
        return;
    }
    if (core_elapsed_us(&c->progress_at) < (long)timeout * 1000000L) {
        h2o_timeout_link(core_loop_evloop(c->loop->core), &c->loop->write_check, &c->stalled);
        return;
    }
    if (c->loop->s->cfg.log_level <= SERVER_LOG_WARN)
        core_log("warn CQL error=WriteTimeout message=\"the client took nothing of a %zu-byte "
                 "write for %u s: connection closed\"",
                 c->sending.len, timeout);
    c->peer_gone = 1;
    shutdown(h2o_socket_get_fd(c->sock), SHUT_RDWR);
}

/* ---- connections ---- */

static void conn_destroy(cql_conn *c)
{
    if (h2o_timeout_is_linked(&c->stalled)) h2o_timeout_unlink(&c->stalled);
    budget_cancel(&c->loop->budget, &c->wait);
    while (!h2o_linklist_is_empty(&c->calls)) {
        cql_call *k = H2O_STRUCT_FROM_MEMBER(cql_call, link, c->calls.next);
        core_call_cancel(&k->call);
        call_free(k);
    }
    if (h2o_socket_is_reading(c->sock)) h2o_socket_read_stop(c->sock);
    h2o_linklist_unlink(&c->link);
    if (c->framed) cql_v5_reader_free(&c->v5);
    buf_free(&c->scratch);
    buf_free(&c->envelope);
    buf_free(&c->stage);
    buf_free(&c->out);
    buf_free(&c->sending);
    budget_charge(&c->loop->budget, &c->charge, 0);
    h2o_socket_t *sock = c->sock;
    free(c);
    h2o_socket_close(sock);
}

/* Whether c's socket is to be read: while it may take requests, and while its next one
 * waits for the budget, up to an envelope's worth of input more, so that a client that
 * goes away meanwhile is seen and its request dropped. */
static int conn_wants_read(const cql_conn *c)
{
    if (conn_can_take(c)) return 1;
    return c->wait.link.next != NULL && !c->peer_gone && !c->close_after &&
           c->sock->input->size < c->rules.max_envelope;
}

/* The one place a connection moves on, at the end of every callback that touched it:
 * reads what waits if it may take more, sends what is queued, reads from the socket or
 * not, and closes it when it is done. Returns 1 when c was freed. */
static int conn_settle(cql_conn *c)
{
    if (conn_can_take(c) && has_input(c)) conn_process(c);
    /* v5: a large envelope gathered from segments, until it is whole. */
    if (c->framed && c->bound)
        bodybound_hold(c->bound,
                       c->v5.need || c->v5.large.len < CQL_HEADER_LEN ? c->v5.large.len : 0);
    conn_flush(c);
    conn_charge(c);
    if (c->writing) {
        /* A socket whose write is under way is closed when it ends (on_write). */
        if (h2o_socket_is_reading(c->sock) && !conn_wants_read(c)) h2o_socket_read_stop(c->sock);
        return 0;
    }
    if (c->peer_gone || (c->close_after && c->in_flight == 0 && c->out.len == 0)) {
        conn_destroy(c);
        return 1;
    }
    /* Started through the bound, which leaves a connection it paused stopped until it
     * resumes it; one it resumed that is not to be read is stopped after that read. */
    if (conn_wants_read(c))
        bodybound_read_start(c->bound);
    else if (h2o_socket_is_reading(c->sock))
        h2o_socket_read_stop(c->sock);
    return 0;
}

/* The envelope that waited may start; the connection reads on from it. */
static void on_budget_admit(budget_wait *w)
{
    cql_conn *c = H2O_STRUCT_FROM_MEMBER(cql_conn, wait, w);
    c->admitted = 1;
    conn_settle(c);
}

static void cql_serve(void *state, h2o_socket_t *sock)
{
    cql_loop *l = state;
    cql_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        h2o_socket_close(sock);
        return;
    }
    size_t max = l->s->cfg.max_frame;
    c->loop = l;
    c->sock = sock;
    c->wait.admit = on_budget_admit;
    c->stalled.cb = on_write_check;
    c->rules = (cql_envelope_rules){.max_envelope = max, .responses = 0, .version = 0};
    buf_init(&c->scratch, max);
    buf_init(&c->envelope, (size_t)256 << 20);
    buf_init(&c->stage, CQL_SEGMENT_MAX_PAYLOAD + 1);
    buf_init(&c->out, (size_t)512 << 20);
    buf_init(&c->sending, (size_t)512 << 20);
    h2o_linklist_init_anchor(&c->calls);
    h2o_linklist_insert(&l->conns, &c->link);
    sock->data = c;
    /* The bound watches a socket that reads: it takes on_read's place and calls it. */
    h2o_socket_read_start(sock, on_read);
    c->bound = bodybound_watch(&l->bodies, sock);
    if (c->bound)
        core_conn_attach(sock, c->bound);
    else
        c->peer_gone = 1; /* out of memory: closed at once */
    conn_settle(c);
}

static void cql_closed(void *state, void *data)
{
    (void)state;
    bodybound_closed(data);
}

static void cql_turn_end(void *state)
{
    bodybound_turn_end(&((cql_loop *)state)->bodies);
}

/* ---- events ---- */

static void send_event(cql_conn *c, const unsigned char *body, size_t len)
{
    if (!(c->events & CQL_EVENT_SCHEMA_CHANGE) || c->peer_gone || c->state != CONN_READY) return;
    if (c->out.len + c->sending.len > 2 * CQL_MAX_PENDING_OUT) {
        /* A client that reads nothing while events keep coming is let go, not buffered for. */
        c->peer_gone = 1;
        conn_settle(c);
        return;
    }
    send_body(c, c->version, -1, CQL_OP_EVENT, body, len);
    conn_settle(c);
}

static void on_events(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    cql_loop *l = H2O_STRUCT_FROM_MEMBER(cql_loop, events, receiver);
    while (!h2o_linklist_is_empty(messages)) {
        cql_event *e = H2O_STRUCT_FROM_MEMBER(cql_event, msg.link, messages->next);
        h2o_linklist_unlink(&e->msg.link);
        for (h2o_linklist_t *n = l->conns.next, *next; n != &l->conns; n = next) {
            next = n->next; /* sending may close the connection */
            send_event(H2O_STRUCT_FROM_MEMBER(cql_conn, link, n), e->body, e->len);
        }
        free(e);
    }
}

/* Sends a copy of the event to every loop that is open, this one included. */
static void broadcast_event(cql_server *s, const unsigned char *body, size_t len)
{
    pthread_mutex_lock(&s->mu);
    for (unsigned i = 0; i < s->n_loops; i++) {
        cql_loop *l = s->loops[i];
        if (l == NULL || !l->open) continue;
        cql_event *e = malloc(sizeof *e + len);
        if (e == NULL) continue;
        memset(&e->msg, 0, sizeof e->msg);
        e->len = len;
        memcpy(e->body, body, len);
        h2o_multithread_send_message(&l->events, &e->msg);
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---- on the core's loops ---- */

static void cql_loop_open(core_loop *cl, void *state, void *arg)
{
    cql_loop *l = state;
    l->s = arg;
    l->core = cl;
    h2o_linklist_init_anchor(&l->conns);
    l->queue = h2o_multithread_create_queue(core_loop_evloop(cl));
    h2o_multithread_register_receiver(l->queue, &l->events, on_events);
    budget_loop_open(l->s->cfg.budget, &l->budget, l->queue);
    bodybound_loop_open(l->s->cfg.bodies, &l->bodies, l->queue);
    h2o_timeout_init(core_loop_evloop(cl), &l->write_check,
                     (uint64_t)l->s->cfg.timeout_seconds * 1000 / CQL_TIMEOUT_CHECKS);
    pthread_mutex_lock(&l->s->mu);
    l->s->loops[l->s->n_loops++] = l;
    l->open = 1;
    pthread_mutex_unlock(&l->s->mu);
}

static void cql_drain(void *state)
{
    cql_loop *l = state;
    l->draining = 1;
    for (h2o_linklist_t *n = l->conns.next, *next; n != &l->conns; n = next) {
        next = n->next;
        cql_conn *c = H2O_STRUCT_FROM_MEMBER(cql_conn, link, n);
        c->close_after = 1;
        conn_settle(c);
    }
    /* Those paused for the bound are read again, to see the end of their streams. */
    bodybound_resume_all(&l->bodies);
}

static unsigned cql_in_flight(void *state)
{
    cql_loop *l = state;
    unsigned n = 0;
    for (h2o_linklist_t *p = l->conns.next; p != &l->conns; p = p->next) {
        cql_conn *c = H2O_STRUCT_FROM_MEMBER(cql_conn, link, p);
        n += c->in_flight + (c->writing || c->out.len ? 1 : 0);
    }
    return n;
}

static void cql_loop_close(void *state)
{
    cql_loop *l = state;
    pthread_mutex_lock(&l->s->mu);
    l->open = 0;
    pthread_mutex_unlock(&l->s->mu);
    /* Events that arrived after the last turn are dropped. */
    while (!h2o_linklist_is_empty(&l->events._messages)) {
        cql_event *e = H2O_STRUCT_FROM_MEMBER(cql_event, msg.link, l->events._messages.next);
        h2o_linklist_unlink(&e->msg.link);
        free(e);
    }
    h2o_multithread_unregister_receiver(l->queue, &l->events);
    budget_loop_close(&l->budget);
    bodybound_loop_close(&l->bodies);
    h2o_timeout_dispose(core_loop_evloop(l->core), &l->write_check);
    h2o_multithread_destroy_queue(l->queue);
}

/* ---- lifecycle ---- */

static void cql_server_free(cql_server *s)
{
    pthread_mutex_destroy(&s->mu);
    free(s->loops);
    free(s);
}

int cql_server_start(qr_db *db, const cql_server_config *cfg, cql_server **out, char *errbuf,
                     size_t errlen)
{
    *out = NULL;
    cql_server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    s->cfg = *cfg;
    s->db = db;
    if (s->cfg.max_frame == 0) s->cfg.max_frame = CQL_DEFAULT_MAX_FRAME;
    unsigned loops = cfg->loops ? cfg->loops : 1;
    s->loops = calloc(loops, sizeof *s->loops);
    if (s->loops == NULL) {
        free(s);
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    s->proto = (core_protocol){.loop_state_size = sizeof(cql_loop),
                               .arg = s,
                               .loop_open = cql_loop_open,
                               .serve = cql_serve,
                               .drain = cql_drain,
                               .closed = cql_closed,
                               .turn_end = cql_turn_end,
                               .in_flight = cql_in_flight,
                               .loop_close = cql_loop_close};
    core_config cc = {.db = db,
                      .addr = cfg->addr,
                      .addr_len = cfg->addr_len,
                      .loops = loops,
                      .pin_loops = cfg->pin_loops,
                      .workers = cfg->workers,
                      .max_connections = cfg->max_connections};
    if (core_start(&cc, &s->proto, &s->core, errbuf, errlen)) {
        cql_server_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

unsigned cql_server_port(const cql_server *s)
{
    return core_port(s->core);
}

void cql_server_drain(cql_server *s)
{
    core_drain(s->core);
}

unsigned cql_server_in_flight(const cql_server *s)
{
    return core_in_flight(s->core);
}

unsigned long cql_server_calls(const cql_server *s)
{
    return core_calls(s->core);
}

void cql_server_stop(cql_server *s)
{
    if (s == NULL) return;
    core_stop(s->core);
    cql_server_free(s);
}
