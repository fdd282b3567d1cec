/* main.c — the quarry program: finds the subcommand in a table and runs it; `quarry
 * --version` and `quarry --help` it answers itself. Each subcommand answers its own --help. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* jemalloc's options, read before main (the program links jemalloc; the sanitizer builds
 * and hosts of libquarry do not, and ignore this). One arena per CPU, with threads using
 * the arena of the CPU they run on, instead of four per CPU: each arena touched holds
 * ~100 KB of its own, and an idle server's RSS falls by 0.7 MB (bench/footprint.py).
 * MALLOC_CONF in the environment still overrides it. */
const char *malloc_conf = "percpu_arena:percpu";

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} command;

static const command commands[] = {
    {"call", cli_call,
     "call [--data DIR] [--no-sync] OPERATION [JSON | -]   run one DynamoDB operation"},
    {"verify", cli_verify,
     "verify [--data DIR | --endpoint URL] [TABLE]   check that every index matches its table"},
    {"serve", cli_serve,
     "serve [--listen HOST:PORT] [--data DIR] [--credentials FILE] ...   serve DynamoDB's API over "
     "HTTP"},
    {"model", cli_model,
     "model check|render|export|apply|import FILE [OPTIONS]   check and use an access-pattern "
     "model"},
    {"reconcile", cli_reconcile,
     "reconcile --model FILE (--endpoint URL | --data DIR) [--repair] [--json]   find (and "
     "repair) stale denormalised copies"},
    {"export", cli_export,
     "export [--data DIR] [--format DYNAMODB_JSON|ION] TABLE OUT   write a table as DynamoDB's "
     "export to S3 does"},
    {"import", cli_import,
     "import [--data DIR] [--format F] (--key K | --parameters JSON) TABLE IN   a new table from "
     "DynamoDB's import formats"},
    {"top", cli_top,
     "top --endpoint URL [--interval S] [--once] [TABLE [INDEX]]   the hottest keys of a server's "
     "tables"},
    {"replicate", cli_replicate,
     "replicate --from URL --to URL [--tables T1,T2] [--state FILE]   copy tables to another "
     "endpoint and follow their streams"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: quarry COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  quarry %s\n", commands[i].usage);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("quarry %s\n", QR_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "quarry: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
