/* progress.h — how far long work has gone: items done of a total, the rate, and when to
 * say so. A meter is told each step's count and the time; it decides when a line is due
 * (every PROGRESS_SECONDS, at each tenth of the total, and at the end) and hands the line
 * to its sink. It knows no clock and no terminal: callers pass the time, and the sink
 * decides whether a line goes to a log or rewrites itself on a terminal. */
#ifndef QR_PROGRESS_H
#define QR_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#define PROGRESS_SECONDS 5.0

/* Receives each line (no newline); last is 1 for the line that ends the work. */
typedef void (*progress_sink)(void *arg, const char *line, int last);

typedef struct progress {
    char what[200];   /* e.g. "backfill of Shop.GSI1" */
    const char *unit; /* "items" unless set */
    uint64_t total;   /* 0: not known */
    uint64_t done;
    double interval;           /* seconds between lines (PROGRESS_SECONDS unless set) */
    double started, last_line; /* seconds, on the caller's clock */
    int last_tenth;            /* the tenth of total last reported */
    int tenths;                /* a line at each tenth of total too (1 unless set) */
    progress_sink sink;
    void *arg;
} progress;

/* Starts a meter for work named what (copied) of total items (0 when unknown) at time now. */
void progress_start(progress *p, const char *what, uint64_t total, double now, progress_sink sink,
                    void *arg);
/* Sets the items done to done at time now, and sends a line when one is due: 1 if it did. */
int progress_update(progress *p, uint64_t done, double now);
/* Sends the last line: what was done in how long. */
void progress_finish(progress *p, double now);
/* Writes the meter's line at time now into out (cap bytes, NUL-terminated). */
void progress_format(const progress *p, double now, char *out, size_t cap);

/* A sink for command-line tools, on stderr: on a terminal the line rewrites itself (\r)
 * and the last one ends it; elsewhere each line is a line of its own. arg is unused. */
void progress_to_stderr(void *arg, const char *line, int last);
/* Starts p as progress_start does, for a command-line tool: lines go to stderr, several a
 * second on a terminal, every PROGRESS_SECONDS elsewhere (not at tenths), and the last;
 * quiet: no lines at all. */
void progress_start_stderr(progress *p, const char *what, uint64_t total, int quiet);

/* The monotonic clock, in seconds, for callers with no clock of their own. */
double progress_now(void);

#endif
