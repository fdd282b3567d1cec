/* core.h — the protocol-neutral part of quarry's server: loops, workers, connections.
 *
 * Event loop threads share one listener; the core accepts and counts connections, deals
 * them over the loops and hands each to a protocol (core_protocol), whose engine calls it
 * runs and answers at the end of a turn, after flushing the turn's staged writes. It knows
 * no protocol: no HTTP, no DynamoDB headers or error documents, no authentication. */
#ifndef QR_SERVER_CORE_H
#define QR_SERVER_CORE_H

#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

#ifndef H2O_USE_LIBUV
#define H2O_USE_LIBUV 0
#endif
#include <h2o.h>

#include "quarry.h"

/* How long a connection closed with unread bytes keeps reading and dropping them, and
 * how many such connections a loop keeps at once. */
#define CORE_LINGER_MS 5000
#define CORE_LINGER_MAX_PER_LOOP 64

typedef struct core core;
typedef struct core_loop core_loop;

/* What a protocol does on the core's loops. Every hook runs on the loop's own thread;
 * state is the protocol's block of loop_state_size bytes for that loop (zeroed). */
typedef struct core_protocol {
    size_t loop_state_size;
    void *arg; /* handed to loop_open */
    /* The loop's event loop exists; its connections come after this. */
    void (*loop_open)(core_loop *l, void *state, void *arg);
    /* Serves a connection accepted for this loop: the protocol reads from sock, answers and
     * closes it when done. sock->on_close is the core's: it counts the connection. */
    void (*serve)(void *state, h2o_socket_t *sock);
    /* The server drains or stops: the connections are to finish the exchange under way and
     * close, and idle ones close now. May be called more than once. */
    void (*drain)(void *state);
    /* Exchanges begun on this loop and not yet answered, or whose answer is being sent. */
    unsigned (*in_flight)(void *state);
    /* Undoes loop_open, once the loop's connections are gone and before its event loop is
     * destroyed. */
    void (*loop_close)(void *state);
    /* Optional: a connection the protocol attached data to (core_conn_attach) is closing. */
    void (*closed)(void *state, void *data);
    /* Optional: the loop's turn is over (its answers delivered); it polls next. */
    void (*turn_end)(void *state);
} core_protocol;

typedef struct core_config {
    qr_db *db;                   /* borrowed; runs every call */
    const struct sockaddr *addr; /* where to listen (copied) */
    socklen_t addr_len;
    unsigned loops;           /* event loop threads at most; 0 means 1 (see core_start) */
    int pin_loops;            /* pin loop i to the i-th CPU this process may use (modulo their
                                 number), and give each connection to a loop on the CPU its
                                 packets arrive on */
    unsigned workers;         /* threads for calls that may wait for a sync; 0 runs every
                                 call on its event loop (right when writes are not synced) */
    unsigned max_connections; /* open connections at once; more are refused; 0 means 1 */
} core_config;

/* Binds, listens and starts the first event loop; proto must outlive the core. The other
 * loops start when a connection comes while every running loop serves some (with
 * pin_loops, when one is steered to them), the workers when calls find none free.
 * *out is set before any loop serves, so the protocol's hooks may read it where it was
 * stored. Returns 0, or -1 with a message (e.g. the address is in use) in errbuf. */
int core_start(const core_config *cfg, const core_protocol *proto, core **out, char *errbuf,
               size_t errlen);

/* The port actually bound (useful when the configuration asked for port 0). */
unsigned core_port(const core *c);

/* Stops accepting connections and has every loop drain its protocol. Returns once new
 * connections are refused. */
void core_drain(core *c);

/* Whether core_drain has been called: answers should then ask their clients to close. */
int core_draining(const core *c);

/* Exchanges in flight over all loops, as the protocol counts them, recounted on every
 * turn once core_drain has been called (0 before). */
unsigned core_in_flight(const core *c);

/* Calls started over all loops since the start (from any thread): a count that stands
 * still while the server is idle. */
unsigned long core_calls(const core *c);

/* Closes every connection, stops the threads and frees the core. */
void core_stop(core *c);

/* The event loop a loop runs, for sockets and timeouts of the protocol's own. */
h2o_evloop_t *core_loop_evloop(core_loop *l);

/* ---- calls and their answers ---- */

typedef struct core_call core_call;

/* What a call runs: one of DynamoDB's operations (qr_call_in) or a request of Cassandra's
 * native protocol (qr_cql_call). */
typedef enum core_call_kind { CORE_CALL_DYNAMODB = 0, CORE_CALL_CQL } core_call_kind;

/* A call's answer: resp for a DynamoDB call, cql for a CQL one (the other is zeroed). */
typedef struct core_result {
    qr_response resp;
    qr_cql_response cql;
} core_result;

/* Delivers a call's answer on its loop. unflushed: the turn's staged writes could not be
 * flushed and the call ran after one of them, so the answer must report a failure instead
 * of r. r is freed by the core after this returns (a protocol may take its owned buffers,
 * setting their pointers to NULL); c may be freed inside. */
typedef void (*core_answer_fn)(core_call *c, core_result *r, int unflushed);

/* One engine call a protocol asks for. The protocol owns the memory (typically inside its
 * request's), fills the first fields, zeroes the rest, which are the core's, and calls
 * core_call_start. */
struct core_call {
    core_call_kind kind;
    /* CORE_CALL_DYNAMODB */
    const char *op;   /* a name from qr_operations() or qr_stream_operations() */
    const char *body; /* the request document; needed only until core_call_start returns */
    size_t len;
    const char *region; /* the region the client addressed; "" if unknown (likewise) */
    /* CORE_CALL_CQL: the request; its body, keyspace and user are needed only until
     * core_call_start returns */
    qr_cql_request cql;
    core_answer_fn answer;

    h2o_linklist_t turn_link; /* in its loop's answers of this turn */
    struct core_job *job;     /* on the worker pool, until its answer is delivered */
    core_result result;
    int after_write; /* made while a write of this turn waited for the WAL's flush */
};

/* Runs c's call: on a worker if the pool exists and the call may write (qr_operation_writes,
 * qr_cql_writes; its inputs copied), else on the loop now. Either way its answer comes back
 * through c->answer on loop l: a call run on the loop at the end of the turn, after the
 * turn's staged writes were flushed (qr_flush_deferred), in the order the calls were made;
 * a worker's as soon as the loop receives it, its writes flushed by the worker. Returns 0,
 * or -1 (out of memory) when nothing ran and no answer will come. */
int core_call_start(core_loop *l, core_call *c);

/* Bytes of the answer the core holds for c until it delivers it: the body a call run on
 * the loop has made; 0 for a call on a worker (its answer is the worker's until it comes). */
size_t core_call_held(const core_call *c);

/* The requester went away: c's answer, if still to come, is dropped and c is the core's
 * no more (a worker running it works on its own copies and its answer is freed unread).
 * Safe to call after the answer was delivered. */
void core_call_cancel(core_call *c);

/* ---- connections ---- */

/* Once sock, a connection the core accepted, has been closed by its protocol, the core
 * ends our half of the stream after what was sent and reads and drops what the peer still
 * sends until it closes, CORE_LINGER_MS pass, or more than drop_limit bytes arrive: so
 * that a client still sending reads the answer instead of a reset. Call it before the
 * close; a second call for the connection, or one while its loop already lingers
 * CORE_LINGER_MAX_PER_LOOP connections, does nothing. */
void core_linger_on_close(h2o_socket_t *sock, size_t drop_limit);

/* The protocol's data for sock, a connection the core accepted, handed to
 * core_protocol.closed when it closes; core_conn_data returns it (NULL before). */
void core_conn_attach(h2o_socket_t *sock, void *data);
void *core_conn_data(h2o_socket_t *sock);

/* Bytes written to sock that its peer has taken (acknowledged; TCP_INFO's
 * tcpi_bytes_acked): it grows while a client reads what it is sent, and stands still when
 * the client stops, so that a write's progress can be told from the socket. 0 if the
 * kernel cannot say. */
uint64_t core_bytes_taken(h2o_socket_t *sock);

/* ---- logging ---- */

/* One line on stderr, stamped with the UTC time, written with a single write(2) so that
 * lines from threads never interleave. */
void core_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Microseconds since start (CLOCK_MONOTONIC). */
long core_elapsed_us(const struct timespec *start);

#endif
