/* progress.c — the progress meter of progress.h: when a line is due and what it says
 * ("backfill of Shop.GSI1: 3,000 of 10,000 items (30%), 1,520 items/s"). Where the line
 * goes is the sink's business. */
#include "util/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void progress_start(progress *p, const char *what, uint64_t total, double now, progress_sink sink,
                    void *arg)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "%s", what);
    p->unit = "items";
    p->interval = PROGRESS_SECONDS;
    p->tenths = 1;
    p->total = total;
    p->started = p->last_line = now;
    p->sink = sink;
    p->arg = arg;
}

/* n with thousands separators. */
static const char *grouped(uint64_t n, char *out, size_t cap)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return out;
}

void progress_format(const progress *p, double now, char *out, size_t cap)
{
    char d[32], t[32], r[32];
    double secs = now - p->started;
    uint64_t rate = secs > 0 ? (uint64_t)((double)p->done / secs + 0.5) : 0;
    if (p->total)
        snprintf(out, cap, "%s: %s of %s %s (%d%%), %s %s/s", p->what,
                 grouped(p->done, d, sizeof d), grouped(p->total, t, sizeof t), p->unit,
                 (int)(p->done >= p->total ? 100 : p->done * 100 / p->total),
                 grouped(rate, r, sizeof r), p->unit);
    else
        snprintf(out, cap, "%s: %s %s, %s %s/s", p->what, grouped(p->done, d, sizeof d), p->unit,
                 grouped(rate, r, sizeof r), p->unit);
}

int progress_update(progress *p, uint64_t done, double now)
{
    p->done = done;
    int tenth =
        p->total && p->tenths ? (int)((done >= p->total ? p->total : done) * 10 / p->total) : 0;
    if (now - p->last_line < p->interval && tenth <= p->last_tenth) return 0;
    if (tenth >= 10) return 0; /* the whole: progress_finish says so */
    p->last_line = now;
    p->last_tenth = tenth;
    if (p->sink == NULL) return 1;
    char line[400];
    progress_format(p, now, line, sizeof line);
    p->sink(p->arg, line, 0);
    return 1;
}

void progress_finish(progress *p, double now)
{
    if (p->sink == NULL) return;
    char d[32], r[32], line[400];
    double secs = now - p->started;
    uint64_t rate = secs > 0 ? (uint64_t)((double)p->done / secs + 0.5) : 0;
    snprintf(line, sizeof line, "%s: done, %s %s in %.1f s, %s %s/s", p->what,
             grouped(p->done, d, sizeof d), p->unit, secs, grouped(rate, r, sizeof r), p->unit);
    p->sink(p->arg, line, 1);
}

double progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_to_stderr(void *arg, const char *line, int last)
{
    (void)arg;
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r%s\033[K%s", line, last ? "\n" : "");
    else
        fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void progress_start_stderr(progress *p, const char *what, uint64_t total, int quiet)
{
    progress_start(p, what, total, progress_now(), quiet ? NULL : progress_to_stderr, NULL);
    p->tenths = 0;
    if (isatty(STDERR_FILENO)) p->interval = 0.25;
}
