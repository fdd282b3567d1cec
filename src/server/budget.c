/* budget.c — the server-wide budget of bytes held by exchanges (budget.h). A call starts
 * while less than the limit is held, so one larger than the whole limit still starts once
 * the others are gone. Calls that may not start queue on their loop; a charge that brings
 * the total under the limit sends each loop with calls waiting a message, and that loop
 * starts its oldest while there is room. The fast path is an atomic load to admit and an
 * atomic add per charge: the queues are touched only when the budget is spent. */
#include "server/budget.h"

int budget_init(budget *b, size_t limit)
{
    b->limit = limit;
    atomic_init(&b->held, 0);
    atomic_init(&b->waiting, 0);
    h2o_linklist_init_anchor(&b->loops);
    return pthread_mutex_init(&b->mu, NULL) ? -1 : 0;
}

void budget_dispose(budget *b)
{
    pthread_mutex_destroy(&b->mu);
}

/* Starts the loop's oldest waiting calls while less than the limit is held; each start
 * charges what its call built before the next is judged. Only those that waited when it
 * began: a call queued by an admit (its requester's next one, behind the others) waits
 * for a wake of its own, so that this returns whatever the admits do. */
static void admit_waiting(budget_loop *bl)
{
    budget *b = bl->b;
    unsigned turns = atomic_load(&bl->n_waiting);
    while (turns-- && !h2o_linklist_is_empty(&bl->waiting) && atomic_load(&b->held) < b->limit) {
        budget_wait *w = H2O_STRUCT_FROM_MEMBER(budget_wait, link, bl->waiting.next);
        h2o_linklist_unlink(&w->link);
        atomic_fetch_sub(&bl->n_waiting, 1);
        atomic_fetch_sub(&b->waiting, 1);
        w->admit(w);
    }
}

static void on_wake(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    budget_loop *bl = H2O_STRUCT_FROM_MEMBER(budget_loop, wake, receiver);
    while (!h2o_linklist_is_empty(messages))
        h2o_linklist_unlink(messages->next);
    /* Cleared before the queue is read: a charge from now on sends another message. */
    atomic_store(&bl->wake_sent, 0);
    admit_waiting(bl);
}

static void wake(budget_loop *bl)
{
    if (atomic_load(&bl->n_waiting) && !atomic_exchange(&bl->wake_sent, 1))
        h2o_multithread_send_message(&bl->wake, &bl->wake_msg);
}

/* The total fell under the limit: every loop with calls waiting is told. */
static void wake_all(budget *b)
{
    pthread_mutex_lock(&b->mu);
    for (h2o_linklist_t *n = b->loops.next; n != &b->loops; n = n->next)
        wake(H2O_STRUCT_FROM_MEMBER(budget_loop, link, n));
    pthread_mutex_unlock(&b->mu);
}

void budget_loop_open(budget *b, budget_loop *bl, h2o_multithread_queue_t *queue)
{
    bl->b = b;
    h2o_linklist_init_anchor(&bl->waiting);
    atomic_init(&bl->n_waiting, 0);
    atomic_init(&bl->wake_sent, 0);
    bl->wake_msg = (h2o_multithread_message_t){{NULL, NULL}};
    bl->link = (h2o_linklist_t){NULL, NULL};
    h2o_multithread_register_receiver(queue, &bl->wake, on_wake);
    pthread_mutex_lock(&b->mu);
    h2o_linklist_insert(&b->loops, &bl->link);
    pthread_mutex_unlock(&b->mu);
}

void budget_loop_close(budget_loop *bl)
{
    budget *b = bl->b;
    if (b == NULL) return;
    pthread_mutex_lock(&b->mu);
    h2o_linklist_unlink(&bl->link);
    pthread_mutex_unlock(&b->mu);
    /* No loop sends it a wake now; one sent before may still wait in the receiver's
     * list, which only this thread reads. */
    if (h2o_linklist_is_linked(&bl->wake_msg.link)) h2o_linklist_unlink(&bl->wake_msg.link);
    h2o_multithread_unregister_receiver(bl->wake.queue, &bl->wake);
    bl->b = NULL;
}

int budget_admit(budget_loop *bl, budget_wait *w)
{
    budget *b = bl->b;
    if (h2o_linklist_is_empty(&bl->waiting) && atomic_load(&b->held) < b->limit) return 1;
    h2o_linklist_insert(&bl->waiting, &w->link);
    atomic_fetch_add(&bl->n_waiting, 1);
    atomic_fetch_add(&b->waiting, 1);
    /* A charge that fell under the limit before this call was counted saw no one waiting:
     * look again, and let the loop start it in a turn of its own. */
    if (atomic_load(&b->held) < b->limit) wake(bl);
    return 0;
}

void budget_cancel(budget_loop *bl, budget_wait *w)
{
    if (!h2o_linklist_is_linked(&w->link)) return;
    h2o_linklist_unlink(&w->link);
    atomic_fetch_sub(&bl->n_waiting, 1);
    atomic_fetch_sub(&bl->b->waiting, 1);
}

void budget_charge(budget_loop *bl, size_t *charge, size_t bytes)
{
    budget *b = bl->b;
    size_t was = *charge;
    *charge = bytes;
    if (bytes > was) {
        atomic_fetch_add(&b->held, bytes - was);
    } else if (bytes < was) {
        size_t held = atomic_fetch_sub(&b->held, was - bytes) - (was - bytes);
        if (held < b->limit && atomic_load(&b->waiting)) wake_all(b);
    }
}

size_t budget_held(const budget *b)
{
    return atomic_load(&((budget *)b)->held);
}

unsigned budget_waiting(const budget *b)
{
    return atomic_load(&((budget *)b)->waiting);
}
