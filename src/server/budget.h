/* budget.h — a server-wide budget for the bytes that exchanges hold: the answers built and
 * not yet sent, and the request bodies of the calls that make them. A call may start
 * while less than the limit is held; otherwise it waits, on its own event loop, until
 * sends complete and release what they held. It does not read or write sockets, time
 * sends out or know HTTP: the protocol charges what it holds and releases it when the
 * exchange ends. */
#ifndef QR_SERVER_BUDGET_H
#define QR_SERVER_BUDGET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#ifndef H2O_USE_LIBUV
#define H2O_USE_LIBUV 0
#endif
#include <h2o.h>

typedef struct budget_loop budget_loop;

/* The server's budget; its fields are the module's. */
typedef struct budget {
    size_t limit;
    atomic_size_t held;   /* charged over all loops */
    atomic_uint waiting;  /* calls waiting, over all loops */
    pthread_mutex_t mu;   /* guards loops */
    h2o_linklist_t loops; /* budget_loop.link: those open, to wake */
} budget;

/* A call waiting for the budget, in its requester's memory. */
typedef struct budget_wait {
    h2o_linklist_t link;
    void (*admit)(struct budget_wait *w); /* on the waiter's loop, once it may start */
} budget_wait;

/* One event loop's part: its waiting calls, oldest first, and the message that wakes it.
 * Only the loop's thread touches it, except for the atomics and the receiver. */
struct budget_loop {
    budget *b;
    h2o_linklist_t link;    /* in b->loops, under b->mu */
    h2o_linklist_t waiting; /* budget_wait.link */
    atomic_uint n_waiting;
    atomic_int wake_sent; /* wake_msg is on its way */
    h2o_multithread_receiver_t wake;
    h2o_multithread_message_t wake_msg;
};

/* limit: bytes (more than 0). Any number of loops, of any listener, may take part. Returns
 * 0, or -1 if its mutex could not be made. */
int budget_init(budget *b, size_t limit);
/* Once every loop is closed. */
void budget_dispose(budget *b);

/* On the loop's thread: bl takes part in b, woken through queue (the loop's message queue,
 * which must outlive bl's part). */
void budget_loop_open(budget *b, budget_loop *bl, h2o_multithread_queue_t *queue);
/* On the loop's thread, once it has no call waiting. */
void budget_loop_close(budget_loop *bl);

/* Whether a call may start now: 1 if less than the limit is held and none of the loop's
 * calls waits before it; else 0, and w is queued: w->admit is called on this loop when
 * the budget allows, unless budget_cancel comes first. Nothing is charged either way.
 * w->admit means the call starts: it must not ask budget_admit again for that call (it
 * would queue behind the others anew). A wake admits at most the calls that waited when
 * it came, so a w->admit that queues another call leaves it to a later wake. */
int budget_admit(budget_loop *bl, budget_wait *w);

/* Takes w out of the queue if it waits there (its requester is gone). */
void budget_cancel(budget_loop *bl, budget_wait *w);

/* Sets what an exchange holds, *charge (0 at first), to bytes; calls that wait may then
 * start. Release is budget_charge(bl, charge, 0). On a loop's thread. */
void budget_charge(budget_loop *bl, size_t *charge, size_t bytes);

/* Bytes charged now, and calls waiting (for GET /metrics). */
size_t budget_held(const budget *b);
unsigned budget_waiting(const budget *b);

#endif
