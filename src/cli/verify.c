/* verify.c — `quarry verify`: check that every secondary index matches its table.
 *
 * With --data, opens the folder (read-only when a running server holds it), lets pending
 * index updates drain when it may, and compares each index with the projection of its
 * base items (qr_verify); with --endpoint, makes the same comparison through the API
 * (verify_api.h). Prints what it checked and every difference; exits 0 when all agree, 1
 * on drift, 2 when the data cannot be reached. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker/conn.h"
#include "checker/verify_api.h"
#include "cli/cli.h"
#include "quarry.h"
#include "util/progress.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: quarry verify [--data DIR | --endpoint URL] [--quiet] [TABLE]\n"
               "       quarry verify --help\n"
               "\n"
               "Checks that every secondary index of TABLE (every table without one) holds\n"
               "exactly the projection of its base items, and that the counts DescribeTable\n"
               "reports match what is stored.\n"
               "  --data DIR       the database folder (default ./data); one a running server\n"
               "                   holds is read read-only, as it was when opened\n"
               "  --endpoint URL   compare through the API of a server instead (Scan)\n"
               "  --quiet          no progress lines on standard error\n"
               "Exit status: 0 when all agree, 1 on a difference, 2 when the data cannot be\n"
               "reached.\n");
    return f == stdout ? 0 : 2;
}

int cli_verify(int argc, char **argv)
{
    const char *dir = NULL, *endpoint = NULL, *table = NULL;
    int quiet = 0;
    if (cli_wants_help(argc, argv)) return usage(stdout);
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
            endpoint = argv[++i];
        else if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else if (argv[i][0] == '-' || table)
            return usage(stderr);
        else
            table = argv[i];
    }
    if (dir && endpoint) return usage(stderr);
    if (endpoint == NULL && dir == NULL) dir = "./data";
    conn c;
    qr_err err;
    err_init(&err);
    int rc = endpoint ? conn_open_endpoint(&c, endpoint, &err)
                      : conn_open_data(&c, dir, 1, quiet ? NULL : progress_to_stderr, &err);
    if (rc) {
        fprintf(stderr, "quarry verify: %s\n", err.msg);
        return 2;
    }
    if (c.read_only)
        fprintf(stderr,
                "quarry verify: %s is held by another process (a running server): reading it "
                "read-only, as it was when opened\n",
                dir);
    int status;
    if (endpoint) {
        buf report;
        buf_init(&report, 0);
        long diffs = verify_api(&c, table, quiet, &report, &err);
        if (report.len) fwrite(report.data, 1, report.len, stdout);
        buf_free(&report);
        if (diffs < 0) fprintf(stderr, "quarry verify: %s\n", err.msg);
        status = diffs < 0 ? 2 : diffs > 0;
    } else {
        char *report = NULL;
        status = qr_verify(c.db, table, &report) == QR_OK ? 0 : 1;
        fputs(report, stdout);
        free(report);
    }
    conn_close(&c);
    return status;
}
