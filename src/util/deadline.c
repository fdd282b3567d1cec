/* deadline.c — the absolute time ms milliseconds from now, normalised (tv_nsec below one
 * second), for pthread_cond_timedwait. */
#include "util/deadline.h"

struct timespec deadline_after_ms(clockid_t clock, long ms)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}
