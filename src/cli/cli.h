/* cli.h — the subcommands of the quarry program, one file each under src/cli/.
 *
 * Each subcommand is a function taking the arguments after its name and returning the
 * process exit status. Subcommands use only the public API (quarry.h) and their own
 * layer's interface (the server, the model checker). */
#ifndef QR_CLI_H
#define QR_CLI_H

#include "quarry.h"

int cli_call(int argc, char **argv);
int cli_verify(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_model(int argc, char **argv);
int cli_top(int argc, char **argv);
int cli_reconcile(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_replicate(int argc, char **argv);

/* Whether the arguments ask for help (-h or --help among them): each subcommand then
 * prints its full usage on standard output and exits 0. */
int cli_wants_help(int argc, char **argv);

/* --capacity enforce|observe|off, --capacity-clock monotonic|manual and
 * --capacity-split-seconds N and --capacity-account-units N, shared by serve and call: sets o from
 * value and returns 0, or prints what is wrong (naming prog) and returns -1. */
int cli_capacity_option(const char *prog, const char *flag, const char *value, qr_options *o);

/* --cache-size BYTES (a number, or one with K, M or G after it: 64M), shared by serve and
 * call: sets o->cache_size and returns 0, or prints what is wrong (naming prog) and returns
 * -1. */
int cli_cache_size_option(const char *prog, const char *value, qr_options *o);
/* What --help says of --cache-size, for serve and call. */
#define CLI_CACHE_SIZE_HELP                                                                        \
    "  --cache-size BYTES    memory for the storage engine's caches and write buffers\n"           \
    "                        together (K, M or G: 64M; default 256M, at least 8M): the\n"          \
    "                        memtables, the item cache and RocksDB's block cache share it,\n"      \
    "                        and the process stays within it plus about 64 MB\n"

/* --model FILE, repeatable, for serve and call: at most this many. */
#define CLI_MAX_MODELS 16
/* Loads each model file of paths (NULL-terminated) as `quarry model check` does,
 * printing its FILE:LINE:COL errors the same way: 0 when every one loads. */
int cli_models_load(const char *const *paths);

#endif
