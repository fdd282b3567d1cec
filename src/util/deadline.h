/* deadline.h — the absolute time ms milliseconds from now on a given clock, as
 * pthread_cond_timedwait takes it (CLOCK_REALTIME for a default condition variable,
 * CLOCK_MONOTONIC for one made with pthread_condattr_setclock). Nothing else: no
 * timers, no sleeping. */
#ifndef QR_DEADLINE_H
#define QR_DEADLINE_H

#include <time.h>

struct timespec deadline_after_ms(clockid_t clock, long ms);

#endif
