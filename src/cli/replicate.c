/* replicate.c — `quarry replicate`: the command line of the replicator (checker/replicate.h):
 * the two endpoints, the tables, the state file, and SIGINT/SIGTERM as "stop after the
 * batch being applied"; `--compare` compares the two sides instead. Exits 0 when stopped
 * or caught up (or, comparing, when both sides agree), 1 on a difference, 2 on an error. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker/conn.h"
#include "checker/replicate.h"
#include "cli/cli.h"

#define MAX_TABLES 256

static volatile sig_atomic_t stop_asked;

static void on_signal(int sig)
{
    (void)sig;
    stop_asked = 1;
}

static int usage(FILE *f)
{
    fprintf(f,
            "usage: quarry replicate --from URL --to URL [--tables T1,T2,...] [--state FILE]\n"
            "                        [--until-caught-up] [--poll-ms N] [--report-seconds S]\n"
            "       quarry replicate --compare --from URL --to URL [--tables T1,T2,...]\n"
            "       quarry replicate --help\n"
            "\n"
            "Copies tables from one DynamoDB-API endpoint to another (key schema, indexes,\n"
            "billing, stream and TTL settings, then every item by Scan) and then follows the\n"
            "source's streams, applying every change in order, until stopped (SIGINT or\n"
            "SIGTERM stop it after the batch being applied). Each source table needs a stream\n"
            "with new images (NEW_AND_OLD_IMAGES or NEW_IMAGE); the target tables must not\n"
            "exist yet. Requests are signed with the AWS credentials of the environment (or\n"
            "the [default] profile of ~/.aws/credentials).\n"
            "\n"
            "  --from URL, --to URL  the source and the target endpoint\n"
            "  --tables T1,T2        the tables to replicate (default: every source table)\n"
            "  --state FILE          the checkpoint (default quarry-replicate.json), rewritten\n"
            "                        atomically after each applied batch: a run stopped\n"
            "                        anywhere, even by kill -9, resumes from it\n"
            "  --until-caught-up     stop once every stream has been read to its end\n"
            "  --poll-ms N           pause between reads of a quiet stream (default 250)\n"
            "  --report-seconds S    at most one progress line per table this often (default 5)\n"
            "  --compare             compare the tables of both sides, item by item, instead\n"
            "Progress lines on stderr: \"T: 120 records applied, newest 0.4 s old\", the lag.\n"
            "Exit status: 0 when stopped or caught up (comparing: both sides agree), 1 when\n"
            "the comparison finds a difference, 2 on a usage error or a failure.\n");
    return f == stdout ? 0 : 2;
}

int cli_replicate(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) return usage(stdout);
    rp_options o = {.state_path = "quarry-replicate.json", .poll_ms = 250, .report_seconds = 5};
    char *tables_arg = NULL;
    const char *tables[MAX_TABLES + 1] = {0};
    int compare = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--from") == 0 && v)
            o.from = argv[++i];
        else if (strcmp(a, "--to") == 0 && v)
            o.to = argv[++i];
        else if (strcmp(a, "--tables") == 0 && v)
            tables_arg = argv[++i];
        else if (strcmp(a, "--state") == 0 && v)
            o.state_path = argv[++i];
        else if (strcmp(a, "--until-caught-up") == 0)
            o.until_caught_up = 1;
        else if (strcmp(a, "--compare") == 0)
            compare = 1;
        else if (strcmp(a, "--poll-ms") == 0 && v) {
            char *end;
            long ms = strtol(argv[++i], &end, 10);
            if (*end || ms < 1 || ms > 60000) {
                fprintf(stderr, "quarry replicate: --poll-ms wants 1 to 60000, not '%s'\n", v);
                return 2;
            }
            o.poll_ms = (int)ms;
        } else if (strcmp(a, "--report-seconds") == 0 && v) {
            char *end;
            o.report_seconds = strtod(argv[++i], &end);
            if (*end || o.report_seconds < 0 || o.report_seconds > 86400) {
                fprintf(stderr, "quarry replicate: --report-seconds wants 0 to 86400, not '%s'\n",
                        v);
                return 2;
            }
        } else {
            fprintf(stderr, "quarry replicate: unknown option or missing value: '%s'\n", a);
            return usage(stderr);
        }
    }
    if (o.from == NULL || o.to == NULL) return usage(stderr);
    if (strcmp(o.from, o.to) == 0) {
        fprintf(stderr, "quarry replicate: --from and --to are the same endpoint\n");
        return 2;
    }
    char *copy = tables_arg ? strdup(tables_arg) : NULL;
    if (copy) {
        size_t n = 0;
        for (char *save, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (n == MAX_TABLES) {
                fprintf(stderr, "quarry replicate: at most %d --tables\n", MAX_TABLES);
                free(copy);
                return 2;
            }
            tables[n++] = t;
        }
        if (n == 0) {
            fprintf(stderr, "quarry replicate: --tables names no table\n");
            free(copy);
            return 2;
        }
        o.tables = tables;
    }
    qr_err err;
    err_init(&err);
    conn src, dst;
    if (conn_open_endpoint(&src, o.from, &err)) {
        fprintf(stderr, "quarry replicate: %s\n", err.msg);
        free(copy);
        return 2;
    }
    if (conn_open_endpoint(&dst, o.to, &err)) {
        fprintf(stderr, "quarry replicate: %s\n", err.msg);
        conn_close(&src);
        free(copy);
        return 2;
    }
    int status;
    if (compare) {
        buf report;
        buf_init(&report, 0);
        long diffs = replicate_compare(&src, &dst, o.tables, &report, &err);
        if (report.len) fwrite(report.data, 1, report.len, stdout);
        buf_free(&report);
        if (diffs < 0) fprintf(stderr, "quarry replicate: %s\n", err.msg);
        status = diffs < 0 ? 2 : diffs > 0;
    } else {
        struct sigaction sa = {0};
        sa.sa_handler = on_signal; /* no SA_RESTART: a pause ends at once */
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        o.stop = &stop_asked;
        status = replicate_run(&src, &dst, &o, &err) == 0 ? 0 : 2;
        if (status) fprintf(stderr, "quarry replicate: %s\n", err.msg);
    }
    conn_close(&src);
    conn_close(&dst);
    free(copy);
    return status;
}
