/* bodybound.h — a server-wide bound on the bytes the connections' input buffers hold for
 * requests: a request's head and body from its first byte read until its connection is
 * done with it (answered, or closed). Past the bound, a connection whose request is still
 * arriving is read no further (TCP backpressure) until bytes are freed. It does not parse
 * HTTP, answer requests or count answers (budget.h counts those): it watches sockets that
 * a protocol reads with h2o. */
#ifndef QR_SERVER_BODYBOUND_H
#define QR_SERVER_BODYBOUND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#ifndef H2O_USE_LIBUV
#define H2O_USE_LIBUV 0
#endif
#include <h2o.h>

/* A connection holding less than this is never paused: a small request whose head and
 * body arrive in separate reads is served even while big bodies fill the bound. */
#define BODYBOUND_SMALL ((size_t)64 << 10)

/* The receive buffer of a watched socket (SO_RCVBUF; the kernel doubles it). h2o reads
 * all the kernel holds at once, and more while the client keeps pace: a read brings at
 * most about twice the buffer, so that a connection is judged after at most that much.
 * It also caps the TCP window: a client uploads at most this much per round trip. */
#define BODYBOUND_RCVBUF (256 << 10)

typedef struct bodybound_loop bodybound_loop;

/* The server's bound; its fields are the module's. */
typedef struct bodybound {
    size_t limit;
    atomic_size_t held; /* charged over all loops */
    atomic_size_t peak; /* the most held at once since the start */
    atomic_uint paused; /* connections paused, over all loops */
    atomic_uint moving; /* connections holding BODYBOUND_SMALL or more, not paused */
    pthread_mutex_t mu; /* guards loops */
    bodybound_loop **loops;
    unsigned n_loops, cap;
} bodybound;

/* One event loop's part: the connections holding bytes, and those paused, in the order
 * they were first paused (one resumed and paused again keeps its place).
 * Only the loop's thread touches it, except for the atomics and the receiver. */
struct bodybound_loop {
    bodybound *b;
    h2o_linklist_t holding; /* bodybound_conn.hold_link */
    h2o_linklist_t paused;  /* bodybound_conn.pause_link, by ticket */
    uint64_t tickets;       /* handed out */
    atomic_uint n_paused;
    atomic_int wake_sent;
    h2o_multithread_receiver_t wake;
    h2o_multithread_message_t wake_msg;
};

/* A watched connection (the module's fields). */
typedef struct bodybound_conn {
    bodybound_loop *bl;
    h2o_socket_t *sock;
    h2o_socket_cb read; /* the protocol's read callback, which the module's calls */
    size_t charge;      /* what it holds now, as last seen */
    size_t elsewhere;   /* held for its request outside sock->input (bodybound_hold) */
    int big;            /* charge >= BODYBOUND_SMALL: counted in moving unless paused */
    int paused;         /* read stopped by the module, to be started by it */
    int in_read;        /* inside the protocol's read callback */
    int closed;         /* the socket closed during that callback */
    int precharged;     /* resumed, and charged what the kernel held for it, until read */
    uint64_t ticket;    /* its place among the loop's paused, from its first pause until its
                           request is answered (0: none) */
    h2o_linklist_t hold_link, pause_link;
} bodybound_conn;

/* Pure rules, for the tests. A connection holding charge may read on while less than the
 * limit is held or while it holds less than BODYBOUND_SMALL. A paused one may resume
 * while less than the limit is held, or when no connection holding BODYBOUND_SMALL or
 * more is left unpaused (moving): then the oldest resumes alone and reads its whole
 * request, so that a request larger than the bound completes. */
int bodybound_may_read(size_t held, size_t limit, size_t charge);
int bodybound_may_resume(size_t held, size_t limit, unsigned moving);

/* limit: bytes (more than 0); max_loops: how many loops may take part at once. Returns 0,
 * or -1 if out of memory. */
int bodybound_init(bodybound *b, size_t limit, unsigned max_loops);
/* Once every loop is closed. */
void bodybound_dispose(bodybound *b);

/* On the loop's thread: bl takes part in b, woken through queue (the loop's message
 * queue, which must outlive bl's part). */
void bodybound_loop_open(bodybound *b, bodybound_loop *bl, h2o_multithread_queue_t *queue);
/* On the loop's thread, once its connections are gone. */
void bodybound_loop_close(bodybound_loop *bl);

/* Watches sock, a connection the core accepted (core.h) which the protocol has started
 * reading (h2o_socket_read_start): the module's callback takes the protocol's place and
 * calls it after each read, and finds the result with core_conn_data, so the protocol
 * attaches it (core_conn_attach) and passes it to bodybound_closed when sock closes
 * (core_protocol.closed). NULL if out of memory. */
bodybound_conn *bodybound_watch(bodybound_loop *bl, h2o_socket_t *sock);

/* For a protocol that starts and stops its own reads (CQL's): starts reading c's socket
 * again, through the module's callback, unless the module has paused it (it starts it
 * when it resumes it; the protocol then stops it again if it wants no more). */
void bodybound_read_start(bodybound_conn *c);

/* For a protocol that moves a request's bytes out of sock->input before it is complete
 * (CQL v5's large envelopes, gathered from segments): c holds bytes of it there too,
 * charged with the input from the next read or end of turn on. */
void bodybound_hold(bodybound_conn *c, size_t bytes);

/* sock is closing: what it held is freed, and c with it (now, or once the read callback
 * it is closing in returns). */
void bodybound_closed(bodybound_conn *c);

/* At the end of each turn of the loop, before it polls again: what the connections hold
 * is counted afresh (answered requests free their bytes), and those the protocol started
 * reading again with its own callback are watched again. */
void bodybound_turn_end(bodybound_loop *bl);

/* Resumes every connection the loop paused (the server drains or stops: they are to see
 * the end of their streams). */
void bodybound_resume_all(bodybound_loop *bl);

/* Bytes held now, the most held at once, and connections paused (for GET /metrics). */
size_t bodybound_held(const bodybound *b);
size_t bodybound_peak(const bodybound *b);
unsigned bodybound_paused(const bodybound *b);

#endif
