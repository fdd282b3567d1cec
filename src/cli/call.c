/* call.c — `quarry call`: run one DynamoDB operation in-process and print the response.
 *
 * The request JSON comes from the command line, from standard input when it is "-", and
 * is {} when absent. The response (or DynamoDB's error document) goes to standard output;
 * the exit status is 0 on success, 1 on an error response and 2 on a usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "quarry.h"
#include "util/readfile.h"

#define MAX_REQUEST ((size_t)32 << 20)

static int usage(FILE *f)
{
    fprintf(f,
            "usage: quarry call [--data DIR] [--no-sync] [--gsi-lag-ms N] [--ttl-interval-ms N]\n"
            "                   [--lsi-collection-limit BYTES] [--capacity enforce|observe|off]\n"
            "                   [--capacity-split-seconds N] [--capacity-account-units N]\n"
            "                   [--cache-size BYTES] [--model FILE]... [--strict]\n"
            "                   OPERATION [JSON | -]\n"
            "       quarry call --help\n"
            "\n"
            "Runs one DynamoDB operation on the database in DIR (default ./data), in this\n"
            "process, and prints the response or DynamoDB's error document. The request is\n"
            "JSON, read from standard input when it is -, and {} when it is left out.\n"
            "Exit status: 0 on success, 1 on an error response, 2 on a usage error.\n"
            "\n" CLI_CACHE_SIZE_HELP);
    return f == stdout ? 0 : 2;
}

int cli_call(int argc, char **argv)
{
    const char *dir = "./data";
    qr_options opts = {0};
    const char *models[CLI_MAX_MODELS + 1] = {0};
    size_t nmodels = 0;
    int i = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout);
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--no-sync") == 0)
            opts.no_sync = 1;
        else if (strcmp(argv[i], "--strict") == 0)
            opts.model_strict = 1;
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc && nmodels < CLI_MAX_MODELS)
            models[nmodels++] = argv[++i];
        else if (strcmp(argv[i], "--gsi-lag-ms") == 0 && i + 1 < argc)
            opts.gsi_lag_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--ttl-interval-ms") == 0 && i + 1 < argc)
            opts.ttl_interval_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--lsi-collection-limit") == 0 && i + 1 < argc)
            opts.lsi_collection_limit = strtoull(argv[++i], NULL, 10);
        else if ((strcmp(argv[i], "--capacity") == 0 ||
                  strcmp(argv[i], "--capacity-split-seconds") == 0 ||
                  strcmp(argv[i], "--capacity-account-units") == 0) &&
                 i + 1 < argc) {
            if (cli_capacity_option("quarry call", argv[i], argv[i + 1], &opts)) return 2;
            i++;
        } else if (strcmp(argv[i], "--cache-size") == 0 && i + 1 < argc) {
            if (cli_cache_size_option("quarry call", argv[++i], &opts)) return 2;
        } else {
            fprintf(stderr, "quarry call: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (i >= argc) return usage(stderr);
    if (nmodels) {
        if (cli_models_load(models)) return 2;
        opts.models = models;
    }
    const char *op = argv[i++];
    char *request;
    size_t len;
    if (i < argc && strcmp(argv[i], "-") == 0) {
        if (readfile_stream(stdin, MAX_REQUEST, &request, &len) != 0) {
            fprintf(stderr, "quarry call: cannot read the request: %s\n",
                    errno == EFBIG ? "larger than 32 MB" : strerror(errno));
            return 2;
        }
    } else {
        const char *text = i < argc ? argv[i] : "{}";
        request = strdup(text);
        len = strlen(text);
    }
    if (request == NULL) {
        fprintf(stderr, "quarry call: out of memory reading the request\n");
        return 2;
    }
    qr_db *db;
    char *errmsg = NULL;
    if (qr_open(dir, &opts, &db, &errmsg) != QR_OK) {
        fprintf(stderr, "quarry call: cannot open %s: %s\n", dir,
                errmsg ? errmsg : "unknown error");
        free(errmsg);
        free(request);
        return 2;
    }
    qr_response resp;
    int rc = qr_call(db, op, request, len, &resp);
    fwrite(resp.body, 1, resp.len, stdout);
    fputc('\n', stdout);
    qr_response_free(&resp);
    if (qr_shutdown(db, &errmsg) != QR_OK) {
        fprintf(stderr, "quarry call: closing %s: %s\n", dir, errmsg ? errmsg : "unknown error");
        free(errmsg);
        free(request);
        return 2;
    }
    free(request);
    return rc == QR_OK ? 0 : 1;
}
