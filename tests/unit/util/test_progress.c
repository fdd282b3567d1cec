/* test_progress.c — the progress meter says the right thing at the right time: a line at
 * each tenth of a known total and every PROGRESS_SECONDS, none in between, counts with
 * thousands separators and the rate over the time so far, and one last line at the end. */
#include <string.h>

#include "util/progress.h"

#include "check.h"

typedef struct seen {
    char lines[64][400];
    int last[64];
    int n;
} seen;

static void keep(void *arg, const char *line, int last)
{
    seen *s = arg;
    if (s->n >= 64) return;
    snprintf(s->lines[s->n], sizeof s->lines[0], "%s", line);
    s->last[s->n++] = last;
}

int main(void)
{
    seen s = {0};
    progress p;
    progress_start(&p, "backfill of Shop.GSI1", 10000, 100.0, keep, &s);
    /* under a tenth and under five seconds: nothing */
    CHECK_THAT(progress_update(&p, 500, 101.0) == 0);
    CHECK_THAT(s.n == 0);
    /* a tenth: a line, with the rate over the two seconds so far */
    CHECK_THAT(progress_update(&p, 1000, 102.0) == 1);
    CHECK_THAT(s.n == 1);
    CHECK_STR(s.lines[0], "backfill of Shop.GSI1: 1,000 of 10,000 items (10%), 500 items/s");
    CHECK_THAT(s.last[0] == 0);
    /* the same tenth again soon after: nothing */
    CHECK_THAT(progress_update(&p, 1500, 103.0) == 0);
    /* five seconds after the last line, though no tenth passed: a line */
    CHECK_THAT(progress_update(&p, 1900, 107.0) == 1);
    CHECK_STR(s.lines[1], "backfill of Shop.GSI1: 1,900 of 10,000 items (19%), 271 items/s");
    /* several tenths at once: one line */
    CHECK_THAT(progress_update(&p, 5000, 107.5) == 1);
    CHECK_THAT(s.n == 3);
    /* the whole is the last line's to say */
    CHECK_THAT(progress_update(&p, 10000, 108.0) == 0);
    progress_finish(&p, 110.0);
    CHECK_THAT(s.n == 4);
    CHECK_STR(s.lines[3], "backfill of Shop.GSI1: done, 10,000 items in 10.0 s, 1,000 items/s");
    CHECK_THAT(s.last[3] == 1);

    /* an unknown total: lines by time only, without a share */
    seen u = {0};
    progress_start(&p, "reconcile", 0, 0.0, keep, &u);
    p.unit = "copies";
    CHECK_THAT(progress_update(&p, 1234567, 1.0) == 0);
    CHECK_THAT(progress_update(&p, 2469134, 5.0) == 1);
    CHECK_STR(u.lines[0], "reconcile: 2,469,134 copies, 493,827 copies/s");

    /* a total passed (the table grew while it was read): 100%, not more */
    seen o = {0};
    progress_start(&p, "restore of T", 100, 0.0, keep, &o);
    progress_update(&p, 50, 1.0);
    char line[400];
    p.done = 150;
    progress_format(&p, 2.0, line, sizeof line);
    CHECK_STR(line, "restore of T: 150 of 100 items (100%), 75 items/s");

    /* no sink: the meter still counts and says when a line was due */
    progress_start(&p, "quiet", 10, 0.0, NULL, NULL);
    CHECK_THAT(progress_update(&p, 5, 0.1) == 1);
    progress_finish(&p, 1.0);
    return check_report("test_progress");
}
