/* test_budget.c — the exchange budget on two loops' parts sharing one event loop: calls
 * start while less than the limit is held (one larger than it too, when nothing is),
 * queue in order once it is spent, start again as charges fall under it (woken by the
 * loops' messages, one call per fall while each start refills it), a cancelled waiter
 * never starts, and an admit that queues its requester's next call ends the loop's turn
 * instead of admitting it over and over. */
#include "check.h"
#include "server/budget.h"

#ifdef __SANITIZE_ADDRESS__
/* This version of h2o_multithread_destroy_queue does not free the queue (core.c, which
 * tells LeakSanitizer so for the server, is not linked here). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:h2o_multithread_create_queue\n";
}
#endif

typedef struct call {
    budget_wait wait;
    budget_loop *loop;
    size_t charge, builds; /* what it holds; what it charges once it starts */
    int started;
} call;

static void on_admit(budget_wait *w)
{
    call *c = H2O_STRUCT_FROM_MEMBER(call, wait, w);
    c->started++;
    budget_charge(c->loop, &c->charge, c->builds);
}

/* Admits c now or queues it; 1 if it started. */
static int try_start(call *c)
{
    c->wait.admit = on_admit;
    if (!budget_admit(c->loop, &c->wait)) return 0;
    on_admit(&c->wait);
    return 1;
}

/* A requester that, once started, asks for its next call at once (a CQL connection with
 * requests pipelined): it queues behind the others, until it has started three. */
typedef struct requester {
    budget_wait wait;
    budget_loop *loop;
    int starts;
} requester;

static void on_admit_ask_again(budget_wait *w)
{
    requester *r = H2O_STRUCT_FROM_MEMBER(requester, wait, w);
    while (++r->starts < 3 && budget_admit(r->loop, &r->wait)) {
    }
}

static void turn(h2o_evloop_t *ev)
{
    for (int i = 0; i < 5; i++)
        h2o_evloop_run(ev, 0);
}

int main(void)
{
    h2o_evloop_t *ev = h2o_evloop_create();
    h2o_multithread_queue_t *queue = h2o_multithread_create_queue(ev);
    budget b;
    CHECK(budget_init(&b, 100) == 0, "init");
    budget_loop one, two;
    budget_loop_open(&b, &one, queue);
    budget_loop_open(&b, &two, queue);

    call big = {.loop = &one, .builds = 1000};
    CHECK(try_start(&big), "a call larger than the budget starts when nothing is held");
    CHECK(budget_held(&b) == 1000, "held %zu", budget_held(&b));
    budget_charge(&one, &big.charge, 0);

    call a = {.loop = &one, .builds = 60}, c = {.loop = &two, .builds = 50};
    CHECK(try_start(&a) && try_start(&c), "calls start while less than the limit is held");
    CHECK(budget_held(&b) == 110, "held %zu", budget_held(&b));

    call w1 = {.loop = &one, .builds = 50}, w2 = {.loop = &two, .builds = 50};
    call w3 = {.loop = &one, .builds = 10}, w4 = {.loop = &two, .builds = 10};
    CHECK(!try_start(&w1) && !try_start(&w2) && !try_start(&w3) && !try_start(&w4),
          "calls wait once the limit is held");
    CHECK(budget_waiting(&b) == 4, "waiting %u", budget_waiting(&b));
    budget_cancel(&two, &w4.wait);
    budget_cancel(&two, &w4.wait); /* twice: nothing more */
    CHECK(budget_waiting(&b) == 3, "waiting %u after a cancel", budget_waiting(&b));
    turn(ev);
    CHECK(!w1.started && !w2.started && !w3.started, "nothing starts while the limit is held");

    /* 110 - 50 = 60: under the limit. Both loops are woken; the first to start a call
     * refills the budget (110), so the other's waits on. */
    budget_charge(&two, &c.charge, 0);
    turn(ev);
    CHECK(w1.started + w2.started == 1, "one call started, not %d", w1.started + w2.started);
    CHECK(!w3.started, "w3 waits behind w1 on its loop");
    CHECK(budget_held(&b) == 110, "held %zu", budget_held(&b));
    CHECK(budget_waiting(&b) == 2, "waiting %u", budget_waiting(&b));

    /* A fresh call on a loop with calls waiting queues behind them. */
    call late = {.loop = w1.started ? &two : &one, .builds = 1};
    budget_charge(&one, &a.charge, 0); /* 50 held */
    CHECK(!try_start(&late), "a new call waits behind its loop's queue");
    turn(ev);
    CHECK(w1.started && w2.started, "the other call started");
    /* Each loop started what it could while less than 100 was held: the budget is spent
     * again, and the call queued last waits. */
    CHECK(budget_held(&b) >= 100, "held %zu", budget_held(&b));
    CHECK(!late.started, "the last call waits");
    budget_charge(&one, &w1.charge, 0);
    budget_charge(&two, &w2.charge, 0);
    turn(ev);
    CHECK(w3.started == 1 && late.started == 1, "the last calls started");
    CHECK(!w4.started, "a cancelled call never starts");
    CHECK(budget_waiting(&b) == 0, "waiting %u", budget_waiting(&b));
    budget_charge(&one, &w3.charge, 0);
    budget_charge(late.loop, &late.charge, 0);
    CHECK(budget_held(&b) == 0, "held %zu at the end", budget_held(&b));

    /* Two requesters that ask again from their admits: each wake starts each once (else
     * this would never return), and a wake of its own starts each one's next. */
    call hold = {.loop = &one, .builds = 100};
    CHECK(try_start(&hold), "a call holds the whole budget");
    requester r1 = {.wait.admit = on_admit_ask_again, .loop = &one};
    requester r2 = {.wait.admit = on_admit_ask_again, .loop = &one};
    CHECK(!budget_admit(&one, &r1.wait) && !budget_admit(&one, &r2.wait), "requesters wait");
    budget_charge(&one, &hold.charge, 0);
    turn(ev);
    CHECK(r1.starts == 3 && r2.starts == 3, "each started its three: %d and %d", r1.starts,
          r2.starts);
    CHECK(budget_waiting(&b) == 0, "waiting %u", budget_waiting(&b));

    budget_loop_close(&one);
    budget_loop_close(&two);
    budget_dispose(&b);
    h2o_multithread_destroy_queue(queue);
    h2o_evloop_destroy(ev);
    return check_report("test_budget");
}
