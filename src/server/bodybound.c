/* bodybound.c — the server-wide bound on bytes held for requests (bodybound.h). It relies
 * on how h2o 2.2's evloop reads: on each readiness it reads all the kernel holds into
 * sock->input and then calls sock->_cb.read, the callback given to h2o_socket_read_start,
 * which is the module's in place of the protocol's (HTTP/1's keeps a request's bytes in
 * sock->input until it is answered, stops reading while it serves one and starts again,
 * with its own callback, after the answer: the end of the turn watches it again). Pausing
 * is h2o_socket_read_stop, and only of a socket that reads; resuming starts it again. */
#include "server/bodybound.h"
#include "server/core.h"

#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

int bodybound_may_read(size_t held, size_t limit, size_t charge)
{
    return held < limit || charge < BODYBOUND_SMALL;
}

int bodybound_may_resume(size_t held, size_t limit, unsigned moving)
{
    return held < limit || moving == 0;
}

int bodybound_init(bodybound *b, size_t limit, unsigned max_loops)
{
    b->limit = limit;
    atomic_init(&b->held, 0);
    atomic_init(&b->peak, 0);
    atomic_init(&b->paused, 0);
    atomic_init(&b->moving, 0);
    b->n_loops = 0;
    b->cap = max_loops ? max_loops : 1;
    b->loops = calloc(b->cap, sizeof *b->loops);
    if (b->loops == NULL) return -1;
    if (pthread_mutex_init(&b->mu, NULL)) {
        free(b->loops);
        b->loops = NULL;
        return -1;
    }
    return 0;
}

void bodybound_dispose(bodybound *b)
{
    free(b->loops);
    b->loops = NULL;
    pthread_mutex_destroy(&b->mu);
}

/* ---- waking loops with paused connections ---- */

static void wake(bodybound_loop *bl)
{
    if (atomic_load(&bl->n_paused) && !atomic_exchange(&bl->wake_sent, 1))
        h2o_multithread_send_message(&bl->wake, &bl->wake_msg);
}

/* Bytes were freed, or a connection stopped moving: loops with connections paused are
 * told if one may now resume. */
static void wake_if_due(bodybound *b)
{
    if (atomic_load(&b->paused) == 0 ||
        !bodybound_may_resume(atomic_load(&b->held), b->limit, atomic_load(&b->moving)))
        return;
    pthread_mutex_lock(&b->mu);
    for (unsigned i = 0; i < b->n_loops; i++)
        wake(b->loops[i]);
    pthread_mutex_unlock(&b->mu);
}

/* ---- charges ---- */

static void note_peak(bodybound *b, size_t held)
{
    size_t p = atomic_load(&b->peak);
    while (held > p && !atomic_compare_exchange_weak(&b->peak, &p, held))
        ;
}

/* Sets what c holds to bytes: the loop's holding list, the total and the moving count
 * follow. */
static void set_charge(bodybound_conn *c, size_t bytes)
{
    bodybound_loop *bl = c->bl;
    bodybound *b = bl->b;
    size_t was = c->charge;
    c->charge = bytes;
    if (bytes > was) note_peak(b, atomic_fetch_add(&b->held, bytes - was) + (bytes - was));
    if (bytes < was) atomic_fetch_sub(&b->held, was - bytes);
    if (bytes && !h2o_linklist_is_linked(&c->hold_link))
        h2o_linklist_insert(&bl->holding, &c->hold_link);
    else if (!bytes && h2o_linklist_is_linked(&c->hold_link))
        h2o_linklist_unlink(&c->hold_link);
    int big = bytes >= BODYBOUND_SMALL;
    int stopped_moving = 0;
    if (!big) c->ticket = 0; /* its request is answered, or never was big */
    if (big != c->big) {
        c->big = big;
        if (!c->paused && big) atomic_fetch_add(&b->moving, 1);
        if (!c->paused && !big) {
            atomic_fetch_sub(&b->moving, 1);
            stopped_moving = 1;
        }
    }
    if (bytes < was || stopped_moving) wake_if_due(b);
}

/* ---- pausing and resuming ---- */

static void on_read(h2o_socket_t *sock, const char *err);

/* Takes the protocol's callback off sock, if h2o runs it there, and puts the module's. */
static void rewatch(bodybound_conn *c)
{
    h2o_socket_t *sock = c->sock;
    if (!h2o_socket_is_reading(sock) || sock->_cb.read == on_read) return;
    c->read = sock->_cb.read;
    h2o_socket_read_start(sock, on_read);
}

/* Stops reading c, which reads and holds BODYBOUND_SMALL or more, unless it is the last
 * such connection moving. Returns 1 if it paused it. */
static int pause_conn(bodybound_conn *c)
{
    bodybound_loop *bl = c->bl;
    bodybound *b = bl->b;
    if (c->paused || !c->big || !h2o_socket_is_reading(c->sock)) return 0;
    if (atomic_fetch_sub(&b->moving, 1) <= 1) {
        atomic_fetch_add(&b->moving, 1);
        return 0;
    }
    rewatch(c); /* resumed with the module's callback, which calls the protocol's */
    h2o_socket_read_stop(c->sock);
    c->paused = 1;
    /* Behind those paused before it: a request resumed and paused again goes on first. */
    if (c->ticket == 0) c->ticket = ++bl->tickets;
    h2o_linklist_t *at = bl->paused.next;
    while (at != &bl->paused &&
           H2O_STRUCT_FROM_MEMBER(bodybound_conn, pause_link, at)->ticket < c->ticket)
        at = at->next;
    h2o_linklist_insert(at, &c->pause_link);
    atomic_fetch_add(&bl->n_paused, 1);
    atomic_fetch_add(&b->paused, 1);
    /* Bytes freed after the look at the total and before the count above woke no one:
     * look again, and let the loop resume it in a turn of its own. */
    if (bodybound_may_resume(atomic_load(&b->held), b->limit, atomic_load(&b->moving))) wake(bl);
    return 1;
}

static void unpause(bodybound_conn *c)
{
    bodybound *b = c->bl->b;
    h2o_linklist_unlink(&c->pause_link);
    atomic_fetch_sub(&c->bl->n_paused, 1);
    atomic_fetch_sub(&b->paused, 1);
    c->paused = 0;
}

/* Reads c again. What the kernel holds for it arrives with its next read: it is charged
 * now (a receive buffer's worth at least, what a read may bring), so that the next resume
 * is judged with it counted. */
static void resume_conn(bodybound_conn *c)
{
    bodybound *b = c->bl->b;
    unpause(c);
    if (c->big) atomic_fetch_add(&b->moving, 1);
    /* Still stopped as the module left it (h2o starts no read of a connection whose
     * request is arriving; if it did, it reads already). */
    if (h2o_socket_is_reading(c->sock)) return;
    int pending = 0;
    if (ioctl(h2o_socket_get_fd(c->sock), FIONREAD, &pending) != 0 || pending < BODYBOUND_RCVBUF)
        pending = BODYBOUND_RCVBUF;
    c->precharged = 1;
    set_charge(c, c->charge + (size_t)pending);
    h2o_socket_read_start(c->sock, on_read);
}

/* Resumes the loop's oldest paused connections while one may. */
static void resume_due(bodybound_loop *bl)
{
    bodybound *b = bl->b;
    while (!h2o_linklist_is_empty(&bl->paused) &&
           bodybound_may_resume(atomic_load(&b->held), b->limit, atomic_load(&b->moving)))
        resume_conn(H2O_STRUCT_FROM_MEMBER(bodybound_conn, pause_link, bl->paused.next));
}

static void on_wake(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    bodybound_loop *bl = H2O_STRUCT_FROM_MEMBER(bodybound_loop, wake, receiver);
    while (!h2o_linklist_is_empty(messages))
        h2o_linklist_unlink(messages->next);
    /* Cleared before the list is read: a release from now on sends another message. */
    atomic_store(&bl->wake_sent, 0);
    resume_due(bl);
}

/* The total has just reached the limit: the loop's other connections that read and hold
 * BODYBOUND_SMALL or more stop now, before their next reads. */
static void pause_readers(bodybound_loop *bl)
{
    for (h2o_linklist_t *n = bl->holding.next; n != &bl->holding; n = n->next)
        pause_conn(H2O_STRUCT_FROM_MEMBER(bodybound_conn, hold_link, n));
}

/* h2o has read what the kernel held for sock: the protocol's callback takes it, then what
 * the connection holds is charged, and it pauses if the total is at the limit. */
static void on_read(h2o_socket_t *sock, const char *err)
{
    bodybound_conn *c = core_conn_data(sock);
    bodybound *b = c->bl->b;
    c->precharged = 0;
    c->in_read = 1;
    c->read(sock, err);
    c->in_read = 0;
    if (c->closed) { /* bodybound_closed has released it */
        free(c);
        return;
    }
    rewatch(c);
    size_t before = atomic_load(&b->held);
    set_charge(c, sock->input->size + c->elsewhere);
    size_t held = atomic_load(&b->held);
    if (bodybound_may_read(held, b->limit, c->charge)) return;
    pause_conn(c);
    if (before < b->limit) pause_readers(c->bl);
}

/* ---- the public side ---- */

void bodybound_loop_open(bodybound *b, bodybound_loop *bl, h2o_multithread_queue_t *queue)
{
    bl->b = b;
    h2o_linklist_init_anchor(&bl->holding);
    h2o_linklist_init_anchor(&bl->paused);
    atomic_init(&bl->n_paused, 0);
    atomic_init(&bl->wake_sent, 0);
    bl->tickets = 0;
    bl->wake_msg = (h2o_multithread_message_t){{NULL, NULL}};
    h2o_multithread_register_receiver(queue, &bl->wake, on_wake);
    pthread_mutex_lock(&b->mu);
    if (b->n_loops < b->cap) b->loops[b->n_loops++] = bl;
    pthread_mutex_unlock(&b->mu);
}

void bodybound_loop_close(bodybound_loop *bl)
{
    bodybound *b = bl->b;
    if (b == NULL) return;
    pthread_mutex_lock(&b->mu);
    for (unsigned i = 0; i < b->n_loops; i++)
        if (b->loops[i] == bl) {
            b->loops[i] = b->loops[--b->n_loops];
            break;
        }
    pthread_mutex_unlock(&b->mu);
    if (h2o_linklist_is_linked(&bl->wake_msg.link)) h2o_linklist_unlink(&bl->wake_msg.link);
    h2o_multithread_unregister_receiver(bl->wake.queue, &bl->wake);
    bl->b = NULL;
}

bodybound_conn *bodybound_watch(bodybound_loop *bl, h2o_socket_t *sock)
{
    bodybound_conn *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->bl = bl;
    c->sock = sock;
    int rcvbuf = BODYBOUND_RCVBUF;
    setsockopt(h2o_socket_get_fd(sock), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    rewatch(c);
    return c;
}

void bodybound_read_start(bodybound_conn *c)
{
    if (c->paused || h2o_socket_is_reading(c->sock)) return;
    h2o_socket_read_start(c->sock, on_read);
}

void bodybound_hold(bodybound_conn *c, size_t bytes)
{
    c->elsewhere = bytes;
}

void bodybound_closed(bodybound_conn *c)
{
    if (c == NULL) return;
    if (c->paused) {
        unpause(c);
        c->big = 0; /* a paused connection is not counted moving */
    }
    set_charge(c, 0);
    if (c->in_read)
        c->closed = 1;
    else
        free(c);
}

void bodybound_turn_end(bodybound_loop *bl)
{
    for (h2o_linklist_t *n = bl->holding.next, *next; n != &bl->holding; n = next) {
        next = n->next;
        bodybound_conn *c = H2O_STRUCT_FROM_MEMBER(bodybound_conn, hold_link, n);
        if (c->paused) continue;
        rewatch(c);
        size_t bytes = c->sock->input->size + c->elsewhere;
        if (c->precharged && bytes < c->charge) bytes = c->charge; /* its read is to come */
        set_charge(c, bytes);
    }
}

void bodybound_resume_all(bodybound_loop *bl)
{
    while (!h2o_linklist_is_empty(&bl->paused))
        resume_conn(H2O_STRUCT_FROM_MEMBER(bodybound_conn, pause_link, bl->paused.next));
}

size_t bodybound_held(const bodybound *b)
{
    return atomic_load(&((bodybound *)b)->held);
}

size_t bodybound_peak(const bodybound *b)
{
    return atomic_load(&((bodybound *)b)->peak);
}

unsigned bodybound_paused(const bodybound *b)
{
    return atomic_load(&((bodybound *)b)->paused);
}
