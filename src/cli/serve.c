/* serve.c — `quarry serve`: DynamoDB's wire protocol on a TCP port, until a signal.
 *
 * Parses the options, loads the credentials file, opens the database, starts the HTTP
 * server (src/server/) and waits for SIGTERM or SIGINT; then it stops accepting
 * connections, lets in-flight requests finish (a second signal cuts that short), stops
 * the server and closes the database. The HTTP and SigV4 work is the server's. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "checker/model.h"
#include "cli/cli.h"
#include "quarry.h"
#include "server/origin.h"
#include "server/cql.h"
#include "server/server.h"
#include "util/residency.h"

#define DRAIN_SECONDS 30
/* How often the main thread looks whether calls came: a server that started none over a
 * whole period after serving some hands back the memory the load left it. */
#define IDLE_CHECK_SECONDS 5

/* jemalloc's control interface: the program links jemalloc, the sanitizer builds do not
 * (then it is NULL and the allocator keeps what it keeps). */
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
    __attribute__((weak));

/* What a load left and an idle server does not need: the pages jemalloc keeps of freed
 * memory (it returns them over dirty_decay_ms, but only while it allocates, so an idle
 * server would keep them), and the code and read-only pages serving ran through (mapped
 * again at their next use, as after the start). The caches, memtables and connections
 * are not touched. */
static void release_idle_memory(void)
{
    if (mallctl) (void)mallctl("arena.4096.purge", NULL, NULL, NULL, 0); /* MALLCTL_ARENAS_ALL */
    (void)residency_release_readonly(NULL);
}
/* Descriptors kept for what is not a client connection: RocksDB's files, the listener,
 * the event loops' own. */
#define FD_RESERVE 1024

/* Makes room for max_conn connections in the process's descriptor limit, raising the
 * soft limit toward the hard one as servers do (Debian starts a shell at 1024); if the
 * hard limit is lower, serves fewer connections and says so. A client that leaks idle
 * keep-alive connections (a test suite making a client per file) then meets the
 * connection limit, not a failing accept. */
static unsigned fit_descriptor_limit(unsigned max_conn)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return max_conn;
    rlim_t want = (rlim_t)max_conn + FD_RESERVE;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        rlim_t raised = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
        struct rlimit next = {raised, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &next) == 0) rl.rlim_cur = raised;
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        unsigned fit = rl.rlim_cur > 2 * FD_RESERVE ? (unsigned)(rl.rlim_cur - FD_RESERVE)
                                                    : (unsigned)(rl.rlim_cur / 2);
        fprintf(
            stderr,
            "quarry serve: the descriptor limit (%llu) leaves room for %u connections, not %u\n",
            (unsigned long long)rl.rlim_cur, fit, max_conn);
        return fit ? fit : 1;
    }
    return max_conn;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: quarry serve [--listen HOST:PORT] [--data DIR] [--credentials FILE]\n"
        "                    [--log-level debug|info|warn|error|none] [--no-sync]\n"
        "                    [--insecure-no-auth] [--loops N] [--pin-loops] [--threads N]\n"
        "                    [--max-connections N] [--timeout SECONDS] [--gsi-lag-ms N]\n"
        "                    [--ttl-interval-ms N] [--lsi-collection-limit BYTES]\n"
        "                    [--capacity enforce|observe|off] [--capacity-clock manual]\n"
        "                    [--capacity-split-seconds N] [--capacity-account-units N]\n"
        "                    [--model FILE]... [--strict] [--s3-root DIR] [--in-memory]\n"
        "                    [--allow-host NAME]... [--cors-origin ORIGIN]...\n"
        "                    [--delay-transient-states] [--transient-ms N]\n"
        "                    [--cache-size BYTES]\n"
        "       quarry serve --help\n"
        "                    [--cql HOST:PORT] [--cql-credentials FILE] [--cql-max-frame BYTES]\n"
        "\n"
        "  --listen HOST:PORT    address to serve on (default 127.0.0.1:8000; port 0 picks one)\n"
        "  --data DIR            database directory (default ./data), created with its\n"
        "                        parents once the address is known to be free\n"
        "  --in-memory           keep the whole database in memory: no file is written, and\n"
        "                        every table is gone when the server stops (DynamoDB Local's\n"
        "                        -inMemory)\n"
        "  --delay-transient-states  tables and global indexes stay CREATING, UPDATING or\n"
        "                        DELETING for a while after the request that changed them\n"
        "                        (DynamoDB Local's -delayTransientStatuses), so waiters and\n"
        "                        retry code run; the item operations do not find a table\n"
        "                        being created or deleted\n"
        "  --transient-ms N      how long, in milliseconds (default 5000; implies the above)\n"
        "  --credentials FILE    AWS shared-credentials file; requests must be SigV4-signed\n"
        "                        with one of its keys. Without it, any key is accepted, which\n"
        "                        is allowed only on a loopback address\n"
        "  --insecure-no-auth    accept any key, and CQL clients without --cql-credentials,\n"
        "                        on a non-loopback address too\n"
        "  --allow-host NAME     without --credentials, answer requests addressed to NAME\n"
        "                        (the Host header) as well as to loopback names (repeatable)\n"
        "  --cors-origin ORIGIN  without --credentials, let browser pages of ORIGIN\n"
        "                        (http[s]://host[:port]) call the server, besides its own\n"
        "                        and loopback pages on its port (repeatable)\n" CLI_CACHE_SIZE_HELP
        "                        under any load: answers being sent (HTTP's and CQL's)\n"
        "                        and HTTP requests' bodies take 16 MB of it, and a call\n"
        "                        waits for sends to complete while they hold more; requests\n"
        "                        being read take another 16 MB: past it, connections whose\n"
        "                        bodies are still arriving are read no further until bytes\n"
        "                        are freed (one body always reads on, and a connection\n"
        "                        starting one brings up to 1 MB before it is judged)\n"
        "  --log-level LEVEL     info logs every request, warn only errors (default info)\n"
        "  --no-sync             acknowledge writes before they are fsync'd\n"
        "  --loops N             HTTP event loop threads at most (default 2 per CPU): one\n"
        "                        starts with the server, the others as connections come\n"
        "                        while every running loop serves some\n"
        "  --pin-loops           run each event loop on one CPU, and serve each connection\n"
        "                        on a loop of the CPU its packets arrive on: more requests\n"
        "                        per second under load, when quarry need not share its CPUs\n"
        "  --threads N           threads for writes (default 16 per CPU, 16..128: a write\n"
        "                        waits for its fsync, and writes that wait together share\n"
        "                        one; none with --no-sync, where every call runs on the\n"
        "                        event loops)\n"
        "  --max-connections N   open connections at once (default 10000); one past it is\n"
        "                        closed unanswered\n"
        "  --timeout SECONDS     close idle HTTP connections after this (default 60), and\n"
        "                        cut an HTTP or CQL connection whose client has read\n"
        "                        nothing of an answer for as long\n"
        "  --gsi-lag-ms N        hold every global index update back at least N ms, to test an\n"
        "                        application against eventual consistency (default 0)\n"
        "  --ttl-interval-ms N   how often expired items are swept (default 60000)\n"
        "  --lsi-collection-limit BYTES   item collection limit of tables with local\n"
        "                        indexes (default DynamoDB's 10 GB)\n"
        "  --capacity MODE       enforce (default): meter every request as DynamoDB does and\n"
        "                        throttle what exceeds a table's, an index's or a partition's\n"
        "                        capacity; observe: meter and count, never throttle; off: no\n"
        "                        metering (bulk loads); tables made over CQL are metered but\n"
        "                        never throttled\n"
        "  --capacity-clock manual  the capacity clock stands still until a\n"
        "                        QuarryAdvanceClock request moves it (deterministic tests)\n"
        "  --capacity-split-seconds N  how long a partition stays hot before it splits for\n"
        "                        heat (default 300)\n"
        "  --capacity-account-units N  the account's per-table quota of read and of write\n"
        "                        request units a second for on-demand tables (default\n"
        "                        DynamoDB's 40000; 0: none)\n"
        "  --model FILE          a model file (docs/model.md; repeat for each table group):\n"
        "                        every request is matched to its declared access patterns,\n"
        "                        and Scans, undeclared patterns, over-reads and items off\n"
        "                        their key templates are logged and listed by\n"
        "                        QuarryDescribeModel (quarry model observe)\n"
        "  --strict              with --model: refuse a Scan or an undeclared read with\n"
        "                        ValidationException, naming what the model lacks\n"
        "  --s3-root DIR         the folder standing for S3 in ExportTableToPointInTime and\n"
        "                        ImportTable: bucket B is DIR/B, which must exist\n"

        "  --cql HOST:PORT       also serve Cassandra's native protocol (v3 to v5) there, on the\n"
        "                        same database (off unless given; Cassandra's port is 9042)\n"
        "  --cql-credentials FILE  roles for the CQL listener's PasswordAuthenticator, one\n"
        "                        username:password a line ('#' comments); without it clients\n"
        "                        connect unauthenticated, which is allowed only on a loopback\n"
        "                        address (or with --insecure-no-auth)\n"
        "  --cql-max-frame BYTES the largest CQL envelope accepted (default 16 MiB, as\n"
        "                        Cassandra's native_transport_max_frame_size)\n");
}

static int parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "quarry serve: %s wants a number from %u to %u, not '%s'\n", opt, lo, hi,
                s);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

/* Durable writes block their thread for an fsync, and only writes that wait together
 * share one; so durable servers hand writes to many threads. Without fsync nothing
 * blocks, and the event loops run every call themselves. */
static unsigned default_write_threads(int no_sync)
{
    if (no_sync) return 0;
    long n = sysconf(_SC_NPROCESSORS_ONLN) * 16;
    return (unsigned)(n < 16 ? 16 : n > 128 ? 128 : n);
}

/* Two event loops per CPU: a loop that sleeps in epoll_wait between bursts leaves its
 * CPU to the other. */
static unsigned default_loops(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return (unsigned)(n < 1 ? 2 : n > 32 ? 64 : 2 * n);
}

int cli_serve(int argc, char **argv)
{
    const char *listen = "127.0.0.1:8000", *dir = "./data", *cred_path = NULL;
    const char *level_word = "info";
    const char *cql_listen = NULL, *cql_cred_path = NULL;
    size_t cql_max_frame = CQL_DEFAULT_MAX_FRAME;
    int insecure = 0, pin_loops = 0;
    qr_options opts = {0};
    unsigned threads = 0, loops = 0, max_conn = 10000, timeout = 60;
    int threads_given = 0;
    const char *models[CLI_MAX_MODELS + 1] = {0};
    size_t nmodels = 0;
    const char *hosts[ORIGIN_MAX_NAMES], *origins[ORIGIN_MAX_NAMES];
    size_t nhosts = 0, norigins = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--no-sync") == 0) {
            opts.no_sync = 1;
        } else if (strcmp(a, "--insecure-no-auth") == 0) {
            insecure = 1;
        } else if (strcmp(a, "--pin-loops") == 0) {
            pin_loops = 1;
        } else if (strcmp(a, "--strict") == 0) {
            opts.model_strict = 1;
        } else if (strcmp(a, "--in-memory") == 0) {
            opts.in_memory = 1;
        } else if (strcmp(a, "--delay-transient-states") == 0) {
            if (opts.transient_ms == 0) opts.transient_ms = 5000;
        } else if (!has_value) {
            fprintf(stderr, "quarry serve: unknown option or missing value: '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (strcmp(a, "--s3-root") == 0) {
            opts.s3_root = argv[++i];
        } else if (strcmp(a, "--model") == 0) {
            if (nmodels == CLI_MAX_MODELS) {
                fprintf(stderr, "quarry serve: at most %d --model files\n", CLI_MAX_MODELS);
                return 2;
            }
            models[nmodels++] = argv[++i];
        } else if (strcmp(a, "--allow-host") == 0 || strcmp(a, "--cors-origin") == 0) {
            int is_host = a[2] == 'a';
            const char *v = argv[++i];
            if ((is_host ? nhosts : norigins) == ORIGIN_MAX_NAMES) {
                fprintf(stderr, "quarry serve: at most %d %s values\n", ORIGIN_MAX_NAMES, a);
                return 2;
            }
            if (!is_host && ((strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0) ||
                             strchr(strstr(v, "//") + 2, '/'))) {
                fprintf(stderr,
                        "quarry serve: --cors-origin wants http[s]://host[:port], not '%s'\n", v);
                return 2;
            }
            if (is_host)
                hosts[nhosts++] = v;
            else
                origins[norigins++] = v;
        } else if (strcmp(a, "--listen") == 0) {
            listen = argv[++i];
        } else if (strcmp(a, "--data") == 0) {
            dir = argv[++i];
        } else if (strcmp(a, "--credentials") == 0) {
            cred_path = argv[++i];
        } else if (strcmp(a, "--cql") == 0) {
            cql_listen = argv[++i];
        } else if (strcmp(a, "--cql-credentials") == 0) {
            cql_cred_path = argv[++i];
        } else if (strcmp(a, "--cql-max-frame") == 0) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            /* At least a header and a small body; at most the protocol's 256 MiB. */
            if (errno || *end != '\0' || v < 1024 || v > ((unsigned long long)256 << 20)) {
                fprintf(stderr,
                        "quarry serve: --cql-max-frame wants a number of bytes from 1024 to "
                        "268435456, not '%s'\n",
                        argv[i]);
                return 2;
            }
            cql_max_frame = (size_t)v;
        } else if (strcmp(a, "--log-level") == 0) {
            level_word = argv[++i];
        } else if (strcmp(a, "--loops") == 0) {
            if (parse_uint(a, argv[++i], 1, 256, &loops)) return 2;
        } else if (strcmp(a, "--threads") == 0) {
            if (parse_uint(a, argv[++i], 1, 256, &threads)) return 2;
            threads_given = 1;
        } else if (strcmp(a, "--max-connections") == 0) {
            if (parse_uint(a, argv[++i], 1, 100000, &max_conn)) return 2;
        } else if (strcmp(a, "--timeout") == 0) {
            if (parse_uint(a, argv[++i], 1, 86400, &timeout)) return 2;
        } else if (strcmp(a, "--gsi-lag-ms") == 0) {
            unsigned v;
            if (parse_uint(a, argv[++i], 0, 3600000, &v)) return 2;
            opts.gsi_lag_ms = (int)v;
        } else if (strcmp(a, "--transient-ms") == 0) {
            unsigned v;
            if (parse_uint(a, argv[++i], 1, 3600000, &v)) return 2;
            opts.transient_ms = (int)v;
        } else if (strcmp(a, "--ttl-interval-ms") == 0) {
            unsigned v;
            if (parse_uint(a, argv[++i], 10, 86400000, &v)) return 2;
            opts.ttl_interval_ms = (int)v;
        } else if (strcmp(a, "--capacity") == 0 || strcmp(a, "--capacity-clock") == 0 ||
                   strcmp(a, "--capacity-split-seconds") == 0 ||
                   strcmp(a, "--capacity-account-units") == 0) {
            if (cli_capacity_option("quarry serve", a, argv[++i], &opts)) return 2;
        } else if (strcmp(a, "--cache-size") == 0) {
            if (cli_cache_size_option("quarry serve", argv[++i], &opts)) return 2;
        } else if (strcmp(a, "--lsi-collection-limit") == 0) {
            char *end;
            errno = 0;
            opts.lsi_collection_limit = strtoull(argv[++i], &end, 10);
            if (errno || *end != '\0' || opts.lsi_collection_limit == 0) {
                fprintf(stderr,
                        "quarry serve: --lsi-collection-limit wants a number of bytes, not '%s'\n",
                        argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "quarry serve: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }

    if (opts.model_strict && nmodels == 0) {
        fprintf(stderr, "quarry serve: --strict needs --model FILE\n");
        return 2;
    }
    if (nmodels) {
        if (cli_models_load(models)) return 2;
        opts.models = models;
    }
    if (!threads_given) threads = default_write_threads(opts.no_sync);
    if (loops == 0) loops = default_loops();
    server_log_level level;
    if (server_log_level_parse(level_word, &level)) {
        fprintf(stderr,
                "quarry serve: --log-level is one of debug, info, warn, error, none; not '%s'\n",
                level_word);
        return 2;
    }
    char err[512];
    struct sockaddr_storage addr;
    socklen_t addr_len;
    if (server_parse_listen(listen, &addr, &addr_len, err, sizeof err)) {
        fprintf(stderr, "quarry serve: %s\n", err);
        return 2;
    }
    if (server_check_listen(listen, (struct sockaddr *)&addr, addr_len, err, sizeof err)) {
        fprintf(stderr, "quarry serve: %s\n", err);
        return 1;
    }
    int loopback = server_addr_is_loopback((struct sockaddr *)&addr);
    if (cred_path == NULL && !loopback && !insecure) {
        fprintf(stderr,
                "quarry serve: refusing to listen on %s without --credentials: anyone who can "
                "reach it could read and write every table. Give --credentials FILE, or "
                "--insecure-no-auth to accept any key.\n",
                listen);
        return 2;
    }
    struct sockaddr_storage cql_addr;
    socklen_t cql_addr_len = 0;
    if (cql_cred_path && cql_listen == NULL) {
        fprintf(stderr, "quarry serve: --cql-credentials needs --cql HOST:PORT\n");
        return 2;
    }
    if (cql_listen) {
        if (server_parse_listen(cql_listen, &cql_addr, &cql_addr_len, err, sizeof err)) {
            fprintf(stderr, "quarry serve: --cql: %s\n", err);
            return 2;
        }
        if (cql_cred_path == NULL && !insecure &&
            !server_addr_is_loopback((struct sockaddr *)&cql_addr)) {
            fprintf(stderr,
                    "quarry serve: refusing to serve CQL on %s without --cql-credentials: anyone "
                    "who can reach it could read and write every table. Give "
                    "--cql-credentials FILE, or --insecure-no-auth to let any client in.\n",
                    cql_listen);
            return 2;
        }
    }
    sigv4_keyring keys = {0};
    if (cred_path && sigv4_keyring_load(&keys, cred_path, err, sizeof err)) {
        fprintf(stderr, "quarry serve: credentials: %s\n", err);
        return 2;
    }
    cql_credentials roles = {0};
    if (cql_cred_path && cql_credentials_load(&roles, cql_cred_path, err, sizeof err)) {
        fprintf(stderr, "quarry serve: CQL credentials: %s\n", err);
        sigv4_keyring_free(&keys);
        return 2;
    }

    /* Signals are taken synchronously by this thread; the server's threads inherit the
     * mask and never see them. */
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
    signal(SIGPIPE, SIG_IGN);

    qr_db *db = NULL;
    char *errmsg = NULL;
    if (level <= SERVER_LOG_WARN) opts.log = server_log_line; /* backfill and restore progress */
    if (qr_open(dir, &opts, &db, &errmsg) != QR_OK) {
        fprintf(stderr, "quarry serve: cannot open the database in %s: %s\n", dir,
                errmsg ? errmsg : "unknown error");
        free(errmsg);
        sigv4_keyring_free(&keys);
        cql_credentials_free(&roles);
        return 1;
    }
    max_conn = fit_descriptor_limit(max_conn);
    server_config cfg = {.addr = (struct sockaddr *)&addr,
                         .addr_len = addr_len,
                         .loops = loops,
                         .pin_loops = pin_loops,
                         .workers = threads,
                         .max_connections = max_conn,
                         .timeout_seconds = timeout,
                         .max_body = SERVER_MAX_BODY,
                         .log_level = level,
                         .keys = cred_path ? &keys : NULL,
                         .allow_hosts = hosts,
                         .n_allow_hosts = nhosts,
                         .cors_origins = origins,
                         .n_cors_origins = norigins};
    server *srv;
    if (server_start(db, &cfg, &srv, err, sizeof err)) {
        fprintf(stderr, "quarry serve: %s\n", err);
        qr_close(db);
        sigv4_keyring_free(&keys);
        cql_credentials_free(&roles);
        return 1;
    }
    cql_server *cql = NULL;
    if (cql_listen) {
        cql_server_config cc = {.addr = (struct sockaddr *)&cql_addr,
                                .addr_len = cql_addr_len,
                                .loops = loops,
                                .pin_loops = pin_loops,
                                .workers = threads,
                                .max_connections = max_conn,
                                .max_frame = cql_max_frame,
                                .log_level = level,
                                .timeout_seconds = timeout,
                                .credentials = cql_cred_path ? &roles : NULL,
                                .budget = server_exchange_budget(srv),
                                .bodies = server_body_bound(srv)};
        if (cql_server_start(db, &cc, &cql, err, sizeof err)) {
            fprintf(stderr, "quarry serve: CQL: %s\n", err);
            server_stop(srv);
            qr_close(db);
            sigv4_keyring_free(&keys);
            cql_credentials_free(&roles);
            return 1;
        }
    }

    char url[300];
    char host[260];
    const char *colon = strrchr(listen, ':');
    snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
    snprintf(url, sizeof url, "http://%s:%u", host, server_port(srv));
    printf(
        "quarry serve: listening on %s (data %s, %s writes, %u event loops%s, %u write threads)\n",
        url, opts.in_memory ? "in memory" : dir, opts.no_sync ? "unsynced" : "durable", cfg.loops,
        pin_loops ? " pinned to CPUs" : "", threads);
    if (cred_path) {
        printf("Requests must be signed with a key from %s (%zu key%s).\n", cred_path, keys.n,
               keys.n == 1 ? "" : "s");
        printf("Point the AWS CLI at it:\n"
               "  AWS_SHARED_CREDENTIALS_FILE=%s aws --profile %s --region us-east-1 \\\n"
               "    dynamodb list-tables --endpoint-url %s\n",
               cred_path, keys.keys[0].profile, url);
    } else {
        printf("Any access key is accepted%s.\n",
               loopback ? " (loopback only)" : " (--insecure-no-auth)");
        printf("Point the AWS CLI at it:\n"
               "  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_DEFAULT_REGION=us-east-1 "
               "\\\n"
               "    aws dynamodb list-tables --endpoint-url %s\n",
               url);
    }
    if (cql) {
        char cql_host[260];
        const char *cc = strrchr(cql_listen, ':');
        snprintf(cql_host, sizeof cql_host, "%.*s", (int)(cc - cql_listen), cql_listen);
        if (cql_host[0] == '[') { /* [::1] as cqlsh and the drivers write it: ::1 */
            memmove(cql_host, cql_host + 1, strlen(cql_host));
            cql_host[strcspn(cql_host, "]")] = '\0';
        }
        printf("CQL: listening on %s port %u (protocol v3 to v5, max frame %zu bytes, %s).\n",
               cql_host, cql_server_port(cql), cql_max_frame,
               cql_cred_path ? "PasswordAuthenticator" : "no authentication");
        if (cql_cred_path)
            printf("Point cqlsh or a driver at it with a role from %s (%zu role%s):\n"
                   "  cqlsh %s %u -u %s -p PASSWORD\n",
                   cql_cred_path, roles.n, roles.n == 1 ? "" : "s", cql_host, cql_server_port(cql),
                   roles.roles[0].user);
        else
            printf("Point cqlsh or a driver at it:\n"
                   "  cqlsh %s %u    (Python: Cluster(['%s'], port=%u).connect())\n",
                   cql_host, cql_server_port(cql), cql_host, cql_server_port(cql));
    }
    fflush(stdout);
    /* The code and read-only data the start ran through (RocksDB's static initializers
     * and its open, the loader's tables) are not needed again: their pages go back to the
     * page cache, and the server keeps mapped what serving touches, mapped again at its
     * first use (bench/footprint.py). A refusal leaves them mapped, which costs nothing
     * else. */
    (void)residency_release_readonly(NULL);

    /* Waits for a stop signal; every IDLE_CHECK_SECONDS without a call after some calls,
     * once, the memory the load left goes back. */
    int sig = 0;
    unsigned long seen = 0, released = 0;
    for (;;) {
        struct timespec period = {IDLE_CHECK_SECONDS, 0};
        sig = sigtimedwait(&stop_set, NULL, &period);
        if (sig > 0) break;
        if (errno != EAGAIN) continue; /* interrupted */
        unsigned long calls = server_calls(srv) + (cql ? cql_server_calls(cql) : 0);
        if (calls == seen && calls != released) {
            release_idle_memory();
            released = calls;
        }
        seen = calls;
    }
    server_drain(srv);
    if (cql) cql_server_drain(cql);
    unsigned pending = server_in_flight(srv) + (cql ? cql_server_in_flight(cql) : 0);
    if (level <= SERVER_LOG_WARN || pending)
        fprintf(stderr, "quarry serve: %s: finishing %u request%s in flight\n", strsignal(sig),
                pending, pending == 1 ? "" : "s");
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += DRAIN_SECONDS;
    while (server_in_flight(srv) + (cql ? cql_server_in_flight(cql) : 0) > 0) {
        struct timespec now, tick = {0, 20 * 1000 * 1000};
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > deadline.tv_sec) {
            fprintf(stderr, "quarry serve: %u requests still running after %d s; stopping\n",
                    server_in_flight(srv) + (cql ? cql_server_in_flight(cql) : 0), DRAIN_SECONDS);
            break;
        }
        if (sigtimedwait(&stop_set, NULL, &tick) > 0) {
            fprintf(stderr, "quarry serve: second signal; stopping without waiting\n");
            break;
        }
    }
    cql_server_stop(cql);
    server_stop(srv);
    int closed = qr_shutdown(db, &errmsg) == QR_OK;
    if (!closed) fprintf(stderr, "quarry serve: closing the database in %s: %s\n", dir, errmsg);
    free(errmsg);
    sigv4_keyring_free(&keys);
    cql_credentials_free(&roles);
    if (closed && level <= SERVER_LOG_WARN)
        fprintf(stderr, "quarry serve: stopped; database closed\n");
    return closed ? 0 : 1;
}
