/* reconcile.c — `quarry reconcile --model FILE (--endpoint URL | --data DIR) [--repair]
 * [--json]`: compares every denormalised copy the model declares with its source and
 * reports the stale ones (reconcile.h); --repair rewrites them, conditionally. Exits 0
 * when no stale copy is left, 1 when some are, 2 for usage errors, a model that does not
 * load, or data that cannot be reached. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker/conn.h"
#include "checker/model.h"
#include "checker/reconcile.h"
#include "cli/cli.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: quarry reconcile --model FILE (--endpoint URL | --data DIR) [--repair]\n"
               "                        [--json] [--samples N] [--quiet]\n"
               "       quarry reconcile --help\n"
               "\n"
               "Compares every denormalised copy the model declares (copy_of) with its source.\n"
               "  --model FILE     the model file (docs/model.md)\n"
               "  --endpoint URL   a server's API, or\n"
               "  --data DIR       a database folder (read-only when a server holds it)\n"
               "  --repair         rewrite the stale copies, conditionally\n"
               "  --json           the report as JSON\n"
               "  --samples N      stale copies listed per relation (default 10)\n"
               "  --quiet          no progress lines on standard error\n"
               "Exit status: 0 when no stale copy is left, 1 when some are, 2 for usage\n"
               "errors, a model that does not load, or data that cannot be reached.\n");
    return f == stdout ? 0 : 2;
}

int cli_reconcile(int argc, char **argv)
{
    const char *model_path = NULL, *endpoint = NULL, *dir = NULL;
    int json = 0;
    rc_options o = {0};
    if (cli_wants_help(argc, argv)) return usage(stdout);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--model") == 0 && i + 1 < argc)
            model_path = argv[++i];
        else if (strcmp(a, "--endpoint") == 0 && i + 1 < argc)
            endpoint = argv[++i];
        else if (strcmp(a, "--data") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(a, "--repair") == 0)
            o.repair = 1;
        else if (strcmp(a, "--json") == 0)
            json = 1;
        else if (strcmp(a, "--quiet") == 0)
            o.quiet = 1;
        else if (strcmp(a, "--samples") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 100000) {
                fprintf(stderr, "quarry reconcile: --samples wants a number from 1 to 100000\n");
                return 2;
            }
            o.samples = (size_t)n;
        } else {
            fprintf(stderr, "quarry reconcile: unknown option or missing value: '%s'\n", a);
            return usage(stderr);
        }
    }
    if (model_path == NULL || (endpoint == NULL) == (dir == NULL)) return usage(stderr);
    qr_err err;
    err_init(&err);
    qr_model *m;
    if (model_load(model_path, NULL, 0, &m, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    conn c;
    /* Reading may share a folder a server holds; repairing writes, so it may not. */
    int rc = endpoint ? conn_open_endpoint(&c, endpoint, &err)
                      : conn_open_data(&c, dir, !o.repair, NULL, &err);
    if (rc) {
        fprintf(stderr, "quarry reconcile: %s%s\n", err.msg,
                dir && o.repair ? " (to repair the data a running server holds, use --endpoint)"
                                : "");
        model_free(m);
        return 2;
    }
    rc_report r;
    int status = 2;
    if (reconcile_run(&c, m, &o, &r, &err) == 0) {
        if (json) {
            json_t *doc = reconcile_json(&r, o.repair);
            char *text = json_dumps(doc, JSON_INDENT(2));
            if (text) puts(text);
            free(text);
            json_decref(doc);
        } else {
            buf out;
            buf_init(&out, 0);
            reconcile_text(&r, o.repair, &out);
            if (out.len) fwrite(out.data, 1, out.len, stdout);
            buf_free(&out);
        }
        status = r.stale > r.repaired;
        reconcile_free(&r);
    } else {
        fprintf(stderr, "quarry reconcile: %s\n", err.msg);
    }
    conn_close(&c);
    model_free(m);
    return status;
}
