/* verify.c — `quarry verify`: check that every secondary index matches its table.
 *
 * Opens the database, lets pending index updates drain, and compares each index with
 * the projection of its base items (qr_verify). Prints what it checked and every
 * difference; exits 0 when all agree, 1 on drift, 2 when the database cannot be opened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "quarry.h"

int cli_verify(int argc, char **argv)
{
    const char *dir = "./data", *table = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: quarry verify [--data DIR] [TABLE]\n");
            return 2;
        } else
            table = argv[i];
    }
    qr_db *db;
    char *errmsg = NULL;
    qr_options opts = {0};
    if (qr_open(dir, &opts, &db, &errmsg) != QR_OK) {
        fprintf(stderr, "quarry verify: cannot open %s: %s\n", dir,
                errmsg ? errmsg : "unknown error");
        free(errmsg);
        return 2;
    }
    char *report = NULL;
    int rc = qr_verify(db, table, &report);
    fputs(report, stdout);
    free(report);
    qr_close(db);
    return rc == QR_OK ? 0 : 1;
}
