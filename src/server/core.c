/* core.c — the event loops, workers and connections under every protocol (see core.h).
 *
 * h2o event loops share one listening socket and deal new connections among themselves.
 * Calls that may wait for a disk sync run on worker threads, so that writes waiting
 * together share one group commit, and come back to the loop as h2o messages; a worker is
 * made when a call finds none free, and ends after a while without calls, so an idle
 * server holds none. Likewise the loops: one starts with the server, the others when
 * connections come while the running ones all serve some. Nothing here parses a
 * protocol's bytes or frames its answers. */
#include "server/core.h"
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* TCP_NODELAY, and TCP_INFO's tcpi_bytes_acked */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long core_stop waits for connections to close once it has shut them down. */
#define STOP_GRACE_MS 2000
/* A worker with no call for this long ends, so that an idle server does not keep the
 * threads a burst of writes started (and their stacks' pages); starting one again costs
 * tens of microseconds. */
#define WORKER_IDLE_SECONDS 5

/* A worker thread's place in the pool. */
typedef struct worker {
    struct core *c;
    pthread_t thread;
    int state; /* under pool_mu: WORKER_FREE, _RUNNING, or _ENDED (to be joined) */
} worker;
enum { WORKER_FREE, WORKER_RUNNING, WORKER_ENDED };

struct core {
    core_config cfg;
    const core_protocol *proto;
    struct sockaddr_storage addr;
    int listen_fd;
    unsigned port;
    core_loop *loops;
    unsigned n_loops;
    atomic_uint connections; /* open, across loops */
    atomic_uint next_loop;   /* round robin of new connections over the loops */
    int *pin_cpus;           /* with pin_loops: the CPUs the process may use, ascending */
    unsigned n_pin_cpus;
    int *cpu_slot; /* CPU number -> its index in pin_cpus, or -1 (CPU_SETSIZE of them) */
    atomic_int draining;
    atomic_uint drain_acks;   /* loops that have stopped accepting */
    pthread_mutex_t ready_mu; /* loops' starts, and their reports once built */
    pthread_cond_t ready_cv;
    int go;        /* the first loop is built (or the start failed): loops may run */
    int no_starts; /* under ready_mu: draining, no loop starts any more */

    /* The worker pool (only when writes are offloaded): cfg.workers places, n_workers of
     * them running, idle_workers of those waiting for a call, queued calls not yet taken. */
    worker *workers;
    unsigned n_workers, idle_workers, queued;
    pthread_mutex_t pool_mu;
    pthread_cond_t pool_cv;
    struct core_job *queue_head, *queue_tail;
    int pool_stopping;
};

/* One event loop and the connections it serves; only its own thread touches it, except
 * for the atomics and the receivers (h2o's thread-safe message queues). */
struct core_loop {
    core *c;
    void *proto_state; /* the protocol's loop_state_size bytes */
    pthread_t thread;
    atomic_int started; /* its thread was created (set under ready_mu) */
    atomic_int ready; /* 0 until its thread has run: 1 once it built the loop, -1 if that failed */
    h2o_linklist_t parked; /* under ready_mu: handoffs that came before it was built */
    h2o_evloop_t *ev;
    h2o_multithread_queue_t *queue;
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
    h2o_linklist_t answers; /* core_call.turn_link: made on the loop this turn, sent at its end */
    h2o_timeout_t turn_end; /* 0 ms: its entries run once this turn's requests have */
    h2o_timeout_entry_t answers_due; /* linked to turn_end while answers is not empty */
    int draining, stopping;
    atomic_uint in_flight; /* recounted on every turn while draining */
    atomic_ulong calls;    /* started here since the start (written by its thread only) */
};

/* An open connection, so that core_stop can shut it down. */
typedef struct conn {
    h2o_linklist_t link;
    core_loop *owner;
    h2o_socket_t *sock;
    int linger_fd; /* a duplicate of the socket kept past its close, or -1 */
    size_t linger_limit;
    void *proto_data; /* core_conn_attach */
} conn;

/* A closed connection whose unread bytes are still being read and dropped. */
typedef struct lingerer {
    h2o_linklist_t link;
    core_loop *owner;
    h2o_socket_t *sock;
    h2o_timeout_entry_t timeout;
    size_t dropped, limit;
} lingerer;

/* A call handed to the worker pool. It owns copies of its inputs (the body, and a CQL
 * request's keyspace and user after it), since the requester may go away meanwhile; call
 * is cleared when it does, and the worker touches nothing but the job. */
typedef struct core_job {
    h2o_multithread_message_t msg;
    struct core_job *next;
    core_loop *owner;
    core_call *call;
    core_call_kind kind;
    const char *op;
    char region[64];    /* "" if unknown */
    qr_cql_request cql; /* pointing into data */
    core_result result;
    size_t len;
    char data[];
} core_job;

/* ---- logging ---- */

void core_log(const char *fmt, ...)
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

void server_log_line(void *arg, const char *line, int last)
{
    (void)arg;
    (void)last;
    core_log("%s", line);
}

long core_elapsed_us(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000000L + (now.tv_nsec - start->tv_nsec) / 1000;
}

/* ---- the worker pool ---- */

static void *worker_main(void *arg);

/* Under pool_mu: starts a worker in a free place, if there is one; 0, or -1 if none could
 * be started (the calls queued wait for a running worker). */
static int worker_add(core *c)
{
    for (unsigned i = 0; i < c->cfg.workers; i++) {
        worker *w = &c->workers[i];
        if (w->state == WORKER_RUNNING) continue;
        if (w->state == WORKER_ENDED) pthread_join(w->thread, NULL); /* it has let go of pool_mu */
        w->state = WORKER_FREE;
        w->c = c;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) return -1;
        w->state = WORKER_RUNNING;
        c->n_workers++;
        return 0;
    }
    return -1;
}

/* Queues j; a worker is started for it unless one is free to take it. Returns -1, with
 * nothing queued, when no worker runs and none can be started. */
static int pool_push(core *c, core_job *j)
{
    pthread_mutex_lock(&c->pool_mu);
    if (c->pool_stopping || (c->queued >= c->idle_workers && c->n_workers < c->cfg.workers &&
                             worker_add(c) != 0 && c->n_workers == 0)) {
        pthread_mutex_unlock(&c->pool_mu);
        return -1;
    }
    j->next = NULL;
    if (c->queue_tail)
        c->queue_tail->next = j;
    else
        c->queue_head = j;
    c->queue_tail = j;
    c->queued++;
    pthread_cond_signal(&c->pool_cv);
    pthread_mutex_unlock(&c->pool_mu);
    return 0;
}

static void result_free(core_result *r)
{
    qr_response_free(&r->resp);
    qr_cql_response_free(&r->cql);
}

/* Whether c's call may write, and so goes to the pool when there is one. */
static int call_writes(qr_db *db, const core_call *c)
{
    return c->kind == CORE_CALL_CQL ? qr_cql_writes(db, &c->cql) : qr_operation_writes(c->op);
}

/* Runs a call into out; the one place either kind of call runs, on a loop or a worker. */
static void call_run(qr_db *db, core_call_kind kind, const char *op, const char *body, size_t len,
                     const char *region, const qr_cql_request *cql, core_result *out)
{
    *out = (core_result){0};
    if (kind == CORE_CALL_CQL) {
        qr_cql_call(db, cql, &out->cql);
        return;
    }
    qr_call_context ctx = {.region = region};
    qr_call_in(db, &ctx, op, body, len, &out->resp);
}

/* Appends s (NULL stays NULL) to a job's data at *at and returns the copy. */
static const char *job_copy(core_job *j, size_t *at, const char *s)
{
    if (s == NULL) return NULL;
    size_t n = strlen(s) + 1;
    char *p = j->data + *at;
    memcpy(p, s, n);
    *at += n;
    return p;
}

/* A job for call, owning copies of its inputs; NULL if out of memory. */
static core_job *job_new(core_loop *l, core_call *call)
{
    int cql = call->kind == CORE_CALL_CQL;
    const void *body = cql ? call->cql.body : call->body;
    size_t len = cql ? call->cql.len : call->len;
    size_t extra = cql ? (call->cql.keyspace ? strlen(call->cql.keyspace) + 1 : 0) +
                             (call->cql.user ? strlen(call->cql.user) + 1 : 0)
                       : 0;
    core_job *j = malloc(sizeof *j + len + 1 + extra);
    if (j == NULL) return NULL;
    memset(j, 0, sizeof *j);
    if (len) memcpy(j->data, body, len);
    j->data[len] = '\0';
    j->len = len;
    j->owner = l;
    j->call = call;
    j->kind = call->kind;
    j->op = call->op;
    if (cql) {
        size_t at = len + 1;
        j->cql = call->cql;
        j->cql.body = j->data;
        j->cql.keyspace = job_copy(j, &at, call->cql.keyspace);
        j->cql.user = job_copy(j, &at, call->cql.user);
    } else {
        snprintf(j->region, sizeof j->region, "%s", call->region ? call->region : "");
    }
    return j;
}

/* Delivers job's answer if its call still stands, and frees the job. */
static void job_answer(core_job *j)
{
    core_call *call = j->call;
    if (call) {
        call->job = NULL;
        call->answer(call, &j->result, 0);
    }
    result_free(&j->result);
    free(j);
}

/* Runs queued calls until told to stop and the queue is empty, or until it has waited
 * WORKER_IDLE_SECONDS for one. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    core *c = w->c;
    for (;;) {
        pthread_mutex_lock(&c->pool_mu);
        int timed_out = 0;
        c->idle_workers++;
        while (c->queue_head == NULL && !c->pool_stopping && !timed_out) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += WORKER_IDLE_SECONDS;
            timed_out = pthread_cond_timedwait(&c->pool_cv, &c->pool_mu, &until) == ETIMEDOUT;
        }
        c->idle_workers--;
        core_job *j = c->queue_head;
        if (j) {
            c->queue_head = j->next;
            if (c->queue_head == NULL) c->queue_tail = NULL;
            c->queued--;
        } else {
            w->state = WORKER_ENDED; /* joined by the next worker_add, or by pool_stop */
            c->n_workers--;
        }
        pthread_mutex_unlock(&c->pool_mu);
        if (j == NULL) return NULL;
        call_run(c->cfg.db, j->kind, j->op, j->data, j->len, j->region, &j->cql, &j->result);
        h2o_multithread_send_message(&j->owner->done, &j->msg);
    }
}

/* On the loop: answers from the pool, delivered if their calls still stand. */
static void on_jobs_done(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    core_loop *l = H2O_STRUCT_FROM_MEMBER(core_loop, done, receiver);
    while (!h2o_linklist_is_empty(messages)) {
        core_job *j = H2O_STRUCT_FROM_MEMBER(core_job, msg.link, messages->next);
        h2o_linklist_unlink(&j->msg.link);
        l->pending_jobs--;
        job_answer(j);
    }
}

/* ---- answers at the end of a turn ----
 * A call run on the loop is answered at the end of the loop's turn, with the others of
 * that turn, not as soon as it is made. Without syncs, the writes of the turn's calls
 * then reach the WAL in one write(2) before any answer that depends on them leaves (see
 * qr_defer_flushes). And the answers leave back to back: a client woken by the first
 * finds the next ones already there, instead of being woken once per answer. A call lives in its
 * requester's memory, and leaves the turn's list if the requester goes first (its client
 * gone: core_call_cancel). */

int core_call_start(core_loop *l, core_call *c)
{
    /* Only this loop's thread writes it: a plain store, no locked add on the hot path. */
    atomic_store_explicit(&l->calls, atomic_load_explicit(&l->calls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    c->job = NULL;
    c->turn_link = (h2o_linklist_t){NULL, NULL};
    c->result = (core_result){0};
    c->after_write = 0;
    if (l->c->workers && call_writes(l->c->cfg.db, c)) {
        core_job *j = job_new(l, c);
        if (j == NULL) return -1;
        if (pool_push(l->c, j) != 0) {
            free(j);
            return -1;
        }
        c->job = j;
        l->pending_jobs++;
        return 0;
    }
    call_run(l->c->cfg.db, c->kind, c->op, c->body, c->len, c->region, &c->cql, &c->result);
    c->after_write = qr_flush_pending();
    h2o_linklist_insert(&l->answers, &c->turn_link);
    if (!h2o_timeout_is_linked(&l->answers_due))
        h2o_timeout_link(l->ev, &l->turn_end, &l->answers_due);
    return 0;
}

size_t core_call_held(const core_call *c)
{
    return c->job ? 0 : c->result.resp.len + c->result.cql.len;
}

void core_call_cancel(core_call *c)
{
    if (h2o_linklist_is_linked(&c->turn_link)) h2o_linklist_unlink(&c->turn_link);
    if (c->job) c->job->call = NULL;
    c->job = NULL;
    result_free(&c->result);
}

/* Flushes the turn's deferred writes, then delivers its answers in the order they were
 * made; if the flush failed, those made after a write are told so. A protocol may start
 * calls while it delivers (a connection reads on once answered): those are answered in a
 * further round, after their own writes were flushed, never with the round that was
 * flushed before they ran. h2o runs it as a 0 ms timeout, after the turn's reads and
 * before it polls again, so that the connections' next reads are set up in the same turn:
 * answered after the turn (loop_main calls it too, for any left), each connection cost two
 * more epoll_ctl calls. */
static void answer_turn(core_loop *l)
{
    do {
        /* Writes staged this turn are committed and flushed even with nothing to answer:
         * they hold their items' locks until then. */
        int failed = qr_flush_pending() && qr_flush_deferred() != QR_OK;
        h2o_linklist_t round;
        h2o_linklist_init_anchor(&round);
        h2o_linklist_insert_list(&round, &l->answers);
        while (!h2o_linklist_is_empty(&round)) {
            core_call *c = H2O_STRUCT_FROM_MEMBER(core_call, turn_link, round.next);
            h2o_linklist_unlink(&c->turn_link);
            /* Delivering may free the call, or cancel others of the round. */
            core_result r = c->result;
            c->result = (core_result){0};
            c->answer(c, &r, failed && c->after_write);
            result_free(&r);
        }
    } while (!h2o_linklist_is_empty(&l->answers));
    if (h2o_timeout_is_linked(&l->answers_due)) h2o_timeout_unlink(&l->answers_due);
}

static void on_turn_end(h2o_timeout_entry_t *entry)
{
    answer_turn(H2O_STRUCT_FROM_MEMBER(core_loop, answers_due, entry));
}

/* ---- connections ---- */

/* Closing a socket with unread bytes makes the kernel send a reset, and the client, still
 * sending, loses the answer already sent. So the socket is duplicated before its protocol
 * closes it (core_linger_on_close), and when the protocol has closed its descriptor, the
 * duplicate finishes the connection the way HTTP servers close after an error: the answer
 * is followed by our end of the stream, and what the client still sends is read and
 * dropped until it closes, CORE_LINGER_MS pass, or the limit's worth arrived. */
void core_linger_on_close(h2o_socket_t *sock, size_t drop_limit)
{
    conn *c = sock ? sock->on_close.data : NULL;
    if (c == NULL || c->linger_fd >= 0 || c->owner->n_lingering >= CORE_LINGER_MAX_PER_LOOP) return;
    c->linger_fd = fcntl(h2o_socket_get_fd(sock), F_DUPFD_CLOEXEC, 0);
    c->linger_limit = drop_limit;
}

static void linger_end(lingerer *g)
{
    core_loop *l = g->owner;
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
        if (g->dropped <= g->limit) return;
    }
    linger_end(g);
}

static void linger_start(core_loop *l, int fd, size_t limit)
{
    lingerer *g = l->stopping ? NULL : calloc(1, sizeof *g);
    if (g == NULL) {
        close(fd);
        return;
    }
    shutdown(fd, SHUT_WR); /* after the answer the protocol already handed to the kernel */
    g->owner = l;
    g->limit = limit;
    g->sock = h2o_evloop_socket_create(l->ev, fd, 0);
    g->sock->data = g;
    g->timeout.cb = on_linger_timeout;
    h2o_linklist_insert(&l->lingering, &g->link);
    l->n_lingering++;
    h2o_timeout_link(l->ev, &l->linger_timeout, &g->timeout);
    h2o_socket_read_start(g->sock, on_linger_read);
}

static void linger_end_all(core_loop *l)
{
    while (!h2o_linklist_is_empty(&l->lingering))
        linger_end(H2O_STRUCT_FROM_MEMBER(lingerer, link, l->lingering.next));
}

uint64_t core_bytes_taken(h2o_socket_t *sock)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (getsockopt(h2o_socket_get_fd(sock), IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof ti.tcpi_bytes_acked)
        return 0;
    return ti.tcpi_bytes_acked;
}

static void on_conn_close(void *data)
{
    conn *c = data;
    core_loop *l = c->owner;
    h2o_linklist_unlink(&c->link);
    l->n_conns--;
    atomic_fetch_sub(&l->serving, 1);
    atomic_fetch_sub(&l->c->connections, 1);
    if (c->proto_data && l->c->proto->closed) l->c->proto->closed(l->proto_state, c->proto_data);
    if (c->linger_fd >= 0) linger_start(l, c->linger_fd, c->linger_limit);
    free(c);
}

void core_conn_attach(h2o_socket_t *sock, void *data)
{
    ((conn *)sock->on_close.data)->proto_data = data;
}

void *core_conn_data(h2o_socket_t *sock)
{
    return ((conn *)sock->on_close.data)->proto_data;
}

/* A connection accepted by one loop for another. */
typedef struct handoff {
    h2o_multithread_message_t msg;
    int fd;
} handoff;

/* Starts serving an accepted connection on loop l. */
static void adopt(core_loop *l, int fd)
{
    conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        close(fd);
        atomic_fetch_sub(&l->serving, 1);
        atomic_fetch_sub(&l->c->connections, 1);
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
    l->c->proto->serve(l->proto_state, sock);
}

static void on_handoffs(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    core_loop *l = H2O_STRUCT_FROM_MEMBER(core_loop, incoming, receiver);
    while (!h2o_linklist_is_empty(messages)) {
        handoff *h = H2O_STRUCT_FROM_MEMBER(handoff, msg.link, messages->next);
        h2o_linklist_unlink(&h->msg.link);
        if (l->stopping) {
            close(h->fd);
            atomic_fetch_sub(&l->serving, 1);
            atomic_fetch_sub(&l->c->connections, 1);
        } else {
            adopt(l, h->fd);
        }
        free(h);
        atomic_fetch_sub(&l->handoffs, 1);
    }
}

/* The loop a new connection goes to. A running loop that serves no connection takes it (the
 * accepting one first), else a loop not started yet, so that a server with few clients
 * keeps to the loops it has and one with many starts them all; once all run, it goes in
 * turn over all loops or, with pinned loops (which start as connections arrive on their
 * CPUs), over
 * those pinned to the CPU the connection's packets arrive on (SO_INCOMING_CPU; for a
 * client on this machine, the CPU its thread ran on). The connection is then served
 * where its client runs, and a client thread and the loops it talks to take turns on one
 * CPU instead of waking each other across two. But a client whose threads all happened to run on
 * one CPU when they connected would leave the other CPUs' loops idle, pinned loops cannot move, and
 * the client's threads may spread later: so a loop that serves more than twice as many connections
 * as the least busy one, and STEER_SLACK more, gets no more until the others catch up. The slack is
 * large enough not to divert connections while a client's threads are still connecting. */
#define STEER_SLACK 8

static core_loop *loop_for(core *c, core_loop *here, int fd)
{
    unsigned turn = atomic_fetch_add(&c->next_loop, 1);
    if (c->cpu_slot == NULL) {
        if (atomic_load(&here->serving) == 0) return here;
        for (unsigned i = 0; i < c->n_loops; i++)
            if (atomic_load(&c->loops[i].ready) > 0 && atomic_load(&c->loops[i].serving) == 0)
                return &c->loops[i];
        for (unsigned i = 0; i < c->n_loops; i++)
            if (!atomic_load(&c->loops[i].started)) return &c->loops[i];
    }
    core_loop *target = &c->loops[turn % c->n_loops];
    int cpu = -1;
    socklen_t len = sizeof cpu;
    if (c->cpu_slot && getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &len) == 0 && cpu >= 0 &&
        cpu < CPU_SETSIZE && c->cpu_slot[cpu] >= 0 && (unsigned)c->cpu_slot[cpu] < c->n_loops) {
        unsigned slot = (unsigned)c->cpu_slot[cpu], n = c->n_pin_cpus;
        unsigned on_cpu = (c->n_loops - slot + n - 1) / n; /* loops slot, slot + n, ... */
        target = &c->loops[slot + (turn % on_cpu) * n];
        core_loop *idlest = target;
        unsigned there = atomic_load(&target->serving), least = there;
        for (unsigned i = 0; i < c->n_loops; i++) {
            unsigned serving = atomic_load(&c->loops[i].serving);
            if (serving < least) {
                least = serving;
                idlest = &c->loops[i];
            }
        }
        if (there > 2 * least + STEER_SLACK) target = idlest;
    }
    return target;
}

static int loop_spawn(core *c, core_loop *l);

/* Sends h, a connection accepted for target, to it; a loop not started yet is started,
 * and one not built yet gets it once built. Returns -1 if target cannot be started (the
 * server drains, or the thread could not be made): h is then the caller's. */
static int hand_off(core *c, core_loop *target, handoff *h)
{
    if (atomic_load(&target->ready) <= 0) {
        int rc = 0, parked = 0;
        pthread_mutex_lock(&c->ready_mu);
        if (atomic_load(&target->ready) < 0 || loop_spawn(c, target) != 0) {
            rc = -1;
        } else if (atomic_load(&target->ready) == 0) {
            h2o_linklist_insert(&target->parked, &h->msg.link); /* the loop may free h now */
            parked = 1;
        }
        pthread_mutex_unlock(&c->ready_mu);
        if (rc != 0 || parked) return rc;
    }
    h2o_multithread_send_message(&target->incoming, &h->msg);
    return 0;
}

/* Every loop watches the listening socket; whichever wakes accepts what is waiting and
 * deals the connections round robin, so that each loop serves its share (left to the
 * kernel, 32 connections could split 28 to 4 and leave a CPU idle). */
static void on_accept(h2o_socket_t *listener, const char *err)
{
    core_loop *l = listener->data;
    core *c = l->c;
    if (err != NULL) return;
    for (int i = 0; i < 64; i++) {
        int fd = accept4(h2o_socket_get_fd(listener), NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        if (atomic_fetch_add(&c->connections, 1) >= c->cfg.max_connections) {
            /* Past the limit: closed unanswered. */
            atomic_fetch_sub(&c->connections, 1);
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        core_loop *target = loop_for(c, l, fd);
        handoff *h = target == l ? NULL : calloc(1, sizeof *h);
        if (h) {
            h->fd = fd;
            atomic_fetch_add(&target->serving, 1);
            atomic_fetch_add(&target->handoffs, 1);
            if (hand_off(c, target, h) == 0) continue;
            atomic_fetch_sub(&target->handoffs, 1);
            atomic_fetch_sub(&target->serving, 1);
            free(h);
        }
        /* Served here, also when the handoff cannot be made. */
        atomic_fetch_add(&l->serving, 1);
        adopt(l, fd);
    }
}

/* ---- draining, stopping and the loop itself ---- */

static void recount_in_flight(core_loop *l)
{
    atomic_store(&l->in_flight, l->c->proto->in_flight(l->proto_state));
}

static void close_listener(core_loop *l)
{
    if (l->listener == NULL) return;
    h2o_socket_read_stop(l->listener);
    h2o_socket_close(l->listener);
    l->listener = NULL;
}

static void on_control(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    core_loop *l = H2O_STRUCT_FROM_MEMBER(core_loop, control, receiver);
    while (!h2o_linklist_is_empty(messages)) {
        h2o_multithread_message_t *m =
            H2O_STRUCT_FROM_MEMBER(h2o_multithread_message_t, link, messages->next);
        h2o_linklist_unlink(&m->link);
        if (m == &l->drain_msg) {
            l->draining = 1;
            close_listener(l);
            l->c->proto->drain(l->proto_state);
            recount_in_flight(l);
            atomic_fetch_add(&l->c->drain_acks, 1);
        } else if (m == &l->stop_msg) {
            l->stopping = 1;
            close_listener(l);
            linger_end_all(l);
            l->c->proto->drain(l->proto_state);
            /* Whatever is left is cut: the protocol sees the end of each stream and closes
             * it. */
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

/* Builds loop l's event loop, message queue, listener (a duplicate of the listening
 * socket, so that each loop closes its own) and the protocol's part. It runs on the
 * loop's own thread: h2o ties a socket's buffers to the memory caches of the thread that
 * made it. */
static int loop_init(core_loop *l)
{
    core *c = l->c;
    h2o_linklist_init_anchor(&l->conns);
    h2o_linklist_init_anchor(&l->lingering);
    h2o_linklist_init_anchor(&l->answers);
    int fd = fcntl(c->listen_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return -1;
    l->ev = h2o_evloop_create();
    h2o_timeout_init(l->ev, &l->linger_timeout, CORE_LINGER_MS);
    h2o_timeout_init(l->ev, &l->turn_end, 0);
    l->answers_due.cb = on_turn_end;
    l->queue = h2o_multithread_create_queue(l->ev);
    h2o_multithread_register_receiver(l->queue, &l->done, on_jobs_done);
    h2o_multithread_register_receiver(l->queue, &l->control, on_control);
    h2o_multithread_register_receiver(l->queue, &l->incoming, on_handoffs);
    c->proto->loop_open(l, l->proto_state, c->proto->arg);
    l->listener = h2o_evloop_socket_create(l->ev, fd, H2O_SOCKET_FLAG_DONT_READ);
    l->listener->data = l;
    h2o_socket_read_start(l->listener, on_accept);
    return 0;
}

/* Undoes loop_init, on the loop's thread, once its connections are gone. */
static void loop_dispose(core_loop *l)
{
    close_listener(l);
    linger_end_all(l);
    /* Connections that outlived the grace period are left to the process's exit. */
    if (l->n_conns || l->pending_jobs || atomic_load(&l->handoffs)) return;
    l->c->proto->loop_close(l->proto_state);
    h2o_multithread_unregister_receiver(l->queue, &l->done);
    h2o_multithread_unregister_receiver(l->queue, &l->control);
    h2o_multithread_unregister_receiver(l->queue, &l->incoming);
    h2o_multithread_destroy_queue(l->queue);
    h2o_timeout_dispose(l->ev, &l->linger_timeout);
    h2o_timeout_dispose(l->ev, &l->turn_end);
    h2o_evloop_destroy(l->ev);
    l->ev = NULL;
}

/* Says the loop is built (ready 1) or could not be (-1), and moves the connections handed
 * to it meanwhile into *parked. */
static void loop_report(core_loop *l, int ready, h2o_linklist_t *parked)
{
    pthread_mutex_lock(&l->c->ready_mu);
    atomic_store(&l->ready, ready);
    h2o_linklist_insert_list(parked, &l->parked);
    pthread_cond_broadcast(&l->c->ready_cv);
    pthread_mutex_unlock(&l->c->ready_mu);
}

static void *loop_main(void *arg)
{
    core_loop *l = arg;
    h2o_linklist_t parked;
    h2o_linklist_init_anchor(&parked);
    if (loop_init(l)) {
        loop_report(l, -1, &parked);
        if (l != &l->c->loops[0]) /* the first one's failure is core_start's to report */
            core_log("an event loop could not be built: %s; its connections are closed",
                     strerror(errno));
        while (!h2o_linklist_is_empty(&parked)) { /* closed unanswered */
            handoff *h = H2O_STRUCT_FROM_MEMBER(handoff, msg.link, parked.next);
            h2o_linklist_unlink(&h->msg.link);
            close(h->fd);
            atomic_fetch_sub(&l->serving, 1);
            atomic_fetch_sub(&l->c->connections, 1);
            atomic_fetch_sub(&l->handoffs, 1);
            free(h);
        }
        return NULL;
    }
    loop_report(l, 1, &parked);
    /* The first loop waits until core_start has handed the core out. */
    pthread_mutex_lock(&l->c->ready_mu);
    while (!l->c->go)
        pthread_cond_wait(&l->c->ready_cv, &l->c->ready_mu);
    pthread_mutex_unlock(&l->c->ready_mu);
    on_handoffs(&l->incoming, &parked);
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
        if (l->c->proto->turn_end) l->c->proto->turn_end(l->proto_state);
        if (l->draining) recount_in_flight(l);
    }
    qr_defer_flushes(0); /* answer_turn left nothing staged; this frees the thread's buffers */
    loop_dispose(l);
    return NULL;
}

static void pool_stop(core *c)
{
    if (c->workers == NULL) return;
    pthread_mutex_lock(&c->pool_mu);
    c->pool_stopping = 1;
    pthread_cond_broadcast(&c->pool_cv);
    pthread_mutex_unlock(&c->pool_mu);
    /* No worker starts now (pool_push refuses), so a place only goes from running to ended. */
    for (unsigned i = 0; i < c->cfg.workers; i++) {
        pthread_mutex_lock(&c->pool_mu);
        int started = c->workers[i].state != WORKER_FREE;
        pthread_mutex_unlock(&c->pool_mu);
        if (started) pthread_join(c->workers[i].thread, NULL);
    }
    free(c->workers);
    c->workers = NULL;
}

static void core_free(core *c)
{
    if (c->loops)
        for (unsigned i = 0; i < c->n_loops; i++)
            free(c->loops[i].proto_state);
    free(c->loops);
    free(c->pin_cpus);
    free(c->cpu_slot);
    pthread_mutex_destroy(&c->pool_mu);
    pthread_cond_destroy(&c->pool_cv);
    pthread_mutex_destroy(&c->ready_mu);
    pthread_cond_destroy(&c->ready_cv);
    if (c->listen_fd >= 0) close(c->listen_fd);
    free(c);
}

/* For pin_loops: the CPUs this process may run on (its affinity, which taskset or a
 * cpuset may have narrowed), in order, and each one's place among them. */
static int plan_pins(core *c, char *errbuf, size_t errlen)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        snprintf(errbuf, errlen, "cannot pin the event loops: cannot read the CPUs allowed: %s",
                 strerror(errno));
        return -1;
    }
    c->pin_cpus = malloc((size_t)CPU_COUNT(&allowed) * sizeof *c->pin_cpus);
    c->cpu_slot = malloc(CPU_SETSIZE * sizeof *c->cpu_slot);
    if (c->pin_cpus == NULL || c->cpu_slot == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        c->cpu_slot[cpu] = -1;
        if (CPU_ISSET(cpu, &allowed)) {
            c->cpu_slot[cpu] = (int)c->n_pin_cpus;
            c->pin_cpus[c->n_pin_cpus++] = cpu;
        }
    }
    return 0;
}

/* Under ready_mu: starts l's thread unless it was; pinned to its CPU with pin_loops (a
 * thread would otherwise take the affinity of the loop that starts it). 0, or an errno. */
static int loop_spawn(core *c, core_loop *l)
{
    if (atomic_load(&l->started)) return 0;
    if (c->no_starts) return EAGAIN;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int rc = 0;
    if (c->pin_cpus) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(c->pin_cpus[(unsigned)(l - c->loops) % c->n_pin_cpus], &one);
        rc = pthread_attr_setaffinity_np(&attr, sizeof one, &one);
    }
    if (rc == 0) rc = pthread_create(&l->thread, &attr, loop_main, l);
    pthread_attr_destroy(&attr);
    if (rc == 0) atomic_store(&l->started, 1);
    return rc;
}

int core_start(const core_config *cfg, const core_protocol *proto, core **out, char *errbuf,
               size_t errlen)
{
    *out = NULL;
    if (cfg->addr_len > sizeof(struct sockaddr_storage)) {
        snprintf(errbuf, errlen, "listen address too long");
        return -1;
    }
    core *c = calloc(1, sizeof *c);
    if (c == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    c->cfg = *cfg;
    c->proto = proto;
    if (c->cfg.max_connections == 0) c->cfg.max_connections = 1;
    memcpy(&c->addr, cfg->addr, cfg->addr_len);
    c->cfg.addr = (const struct sockaddr *)&c->addr;
    atomic_init(&c->connections, 0);
    atomic_init(&c->next_loop, 0);
    atomic_init(&c->draining, 0);
    atomic_init(&c->drain_acks, 0);
    pthread_mutex_init(&c->pool_mu, NULL);
    pthread_cond_init(&c->pool_cv, NULL);
    pthread_mutex_init(&c->ready_mu, NULL);
    pthread_cond_init(&c->ready_cv, NULL);

    c->listen_fd = open_listener(c->cfg.addr, cfg->addr_len, errbuf, errlen);
    if (c->listen_fd < 0) {
        core_free(c);
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof bound;
    if (getsockname(c->listen_fd, (struct sockaddr *)&bound, &bl) == 0)
        c->port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                              : ntohs(((struct sockaddr_in *)&bound)->sin_port);

    c->n_loops = c->cfg.loops ? c->cfg.loops : 1;
    c->loops = calloc(c->n_loops, sizeof *c->loops);
    if (c->loops == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        core_free(c);
        return -1;
    }
    for (unsigned i = 0; i < c->n_loops; i++) {
        c->loops[i].c = c;
        atomic_init(&c->loops[i].ready, 0);
        atomic_init(&c->loops[i].started, 0);
        h2o_linklist_init_anchor(&c->loops[i].parked);
        atomic_init(&c->loops[i].in_flight, 0);
        atomic_init(&c->loops[i].handoffs, 0);
        atomic_init(&c->loops[i].serving, 0);
        c->loops[i].proto_state = calloc(1, proto->loop_state_size ? proto->loop_state_size : 1);
        if (c->loops[i].proto_state == NULL) {
            snprintf(errbuf, errlen, "out of memory");
            core_free(c);
            return -1;
        }
    }
    if (c->cfg.pin_loops && plan_pins(c, errbuf, errlen)) {
        core_free(c);
        return -1;
    }
    if (c->cfg.workers) {
        c->workers = calloc(c->cfg.workers, sizeof *c->workers);
        if (c->workers == NULL) {
            snprintf(errbuf, errlen, "out of memory");
            core_free(c);
            return -1;
        }
    }
    /* The first loop now; the others when connections need them (hand_off). */
    int failed = 0;
    pthread_mutex_lock(&c->ready_mu);
    int rc = loop_spawn(c, &c->loops[0]);
    while (rc == 0 && atomic_load(&c->loops[0].ready) == 0)
        pthread_cond_wait(&c->ready_cv, &c->ready_mu);
    pthread_mutex_unlock(&c->ready_mu);
    if (rc != 0) {
        if (c->pin_cpus)
            snprintf(errbuf, errlen, "cannot start an event loop thread on CPU %d: %s",
                     c->pin_cpus[0], strerror(rc));
        else
            snprintf(errbuf, errlen, "cannot start an event loop thread: %s", strerror(rc));
        failed = 1;
    } else if (atomic_load(&c->loops[0].ready) < 0) {
        snprintf(errbuf, errlen, "cannot duplicate the listening socket: %s", strerror(errno));
        failed = 1;
    }
    /* The core is handed out before the loops go, under the lock they wait on: the
     * protocol keeps it where the loops read it (a caller's *out may be its own state). */
    pthread_mutex_lock(&c->ready_mu);
    if (!failed) *out = c;
    c->go = 1;
    pthread_cond_broadcast(&c->ready_cv);
    pthread_mutex_unlock(&c->ready_mu);
    if (failed) {
        core_stop(c);
        return -1;
    }
    return 0;
}

unsigned core_port(const core *c)
{
    return c->port;
}

h2o_evloop_t *core_loop_evloop(core_loop *l)
{
    return l->ev;
}

int core_draining(const core *c)
{
    return atomic_load_explicit(&((core *)c)->draining, memory_order_relaxed);
}

void core_drain(core *c)
{
    if (atomic_exchange(&c->draining, 1)) return;
    /* No loop starts from now on; those started are waited for until built. */
    pthread_mutex_lock(&c->ready_mu);
    c->no_starts = 1;
    for (unsigned i = 0; i < c->n_loops; i++)
        while (atomic_load(&c->loops[i].started) && atomic_load(&c->loops[i].ready) == 0)
            pthread_cond_wait(&c->ready_cv, &c->ready_mu);
    pthread_mutex_unlock(&c->ready_mu);
    unsigned started = 0;
    for (unsigned i = 0; i < c->n_loops; i++) {
        if (atomic_load(&c->loops[i].ready) <= 0) continue;
        started++;
        h2o_multithread_send_message(&c->loops[i].control, &c->loops[i].drain_msg);
    }
    /* Once every loop has let go of its listener, the socket stops accepting for good. */
    while (atomic_load(&c->drain_acks) < started) {
        struct timespec tick = {0, 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    shutdown(c->listen_fd, SHUT_RDWR);
    close(c->listen_fd);
    c->listen_fd = -1;
}

unsigned core_in_flight(const core *c)
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->n_loops; i++)
        n += atomic_load(&((core *)c)->loops[i].in_flight);
    return n;
}

unsigned long core_calls(const core *c)
{
    unsigned long n = 0;
    for (unsigned i = 0; i < c->n_loops; i++)
        n += atomic_load_explicit(&((core *)c)->loops[i].calls, memory_order_relaxed);
    return n;
}

void core_stop(core *c)
{
    if (c == NULL) return;
    /* Listeners first: once every loop has closed its own, no loop hands another a
     * connection, and each loop can tell when it has taken all it was sent. */
    core_drain(c);
    /* Calls already queued still run; their answers go back to the loops, which are
     * still turning. */
    pool_stop(c);
    for (unsigned i = 0; i < c->n_loops; i++)
        if (atomic_load(&c->loops[i].ready) > 0)
            h2o_multithread_send_message(&c->loops[i].control, &c->loops[i].stop_msg);
    for (unsigned i = 0; i < c->n_loops; i++)
        if (atomic_load(&c->loops[i].started)) pthread_join(c->loops[i].thread, NULL);
    core_free(c);
}
