/* server.h — quarry's HTTP server: DynamoDB's JSON protocol in front of a qr_db. It does
 * not open or close the database, parse options or handle signals: that is `quarry serve`
 * (src/cli/serve.c). */
#ifndef QR_SERVER_H
#define QR_SERVER_H

#include <stddef.h>
#include <sys/socket.h>

#include "quarry.h"
#include "server/sigv4.h"

/* DynamoDB's limit on the size of one HTTP request body. */
#define SERVER_MAX_BODY ((size_t)16 << 20)

/* What the exchanges under way may hold together: the answers built and not yet sent
 * and the request bodies of their calls. A call starts only while less is held; others
 * wait (in order, on their event loop) for sends to complete. So one larger than this
 * still goes out, alone, and the memory answers hold does not grow with the number of
 * connections: it passes this by at most what the calls already started build. */
#define SERVER_EXCHANGE_BUDGET ((size_t)16 << 20)

/* What the connections' input buffers may hold for requests together: their heads and
 * bodies, from the first byte read until the request is answered (a body being run counts
 * here and in the budget above). Past it, a connection whose request is still arriving and
 * holds 64 KB or more is read no further, so that its client waits on TCP's flow control,
 * until bytes are freed; paused connections resume on each loop in the order they were
 * first paused. One request always reads on, so one larger than this completes, alone.
 * What is held passes the bound by at most that request (max_body) and, per connection
 * that starts a request while the bound is full, one read: about 1 MB at most, since each
 * connection's receive buffer is 256 KB (bodybound.h). A paused connection is still cut by
 * h2o's request timeout (timeout_seconds from when the connection began to wait for the
 * request, whether or not bytes arrive): its client sees the connection closed, or reset,
 * before any answer to that request, and nothing of it has run. */
#define SERVER_BODY_BOUND ((size_t)16 << 20)

typedef enum server_log_level {
    SERVER_LOG_DEBUG,
    SERVER_LOG_INFO,  /* one line per request */
    SERVER_LOG_WARN,  /* requests answered with an error, and server warnings */
    SERVER_LOG_ERROR, /* requests answered with a 5xx, and server errors */
    SERVER_LOG_NONE
} server_log_level;

/* "debug", "info", "warn", "error" or "none". Returns 0, or -1 for another word. */
int server_log_level_parse(const char *word, server_log_level *out);

/* Writes line to the server's log (stderr, stamped with the time, as requests are logged);
 * the shape of qr_options.log, so the engine's progress lines join the log. arg is unused. */
void server_log_line(void *arg, const char *line, int last);

/* Parses "HOST:PORT" or "[IPV6]:PORT" (HOST may be a name, resolved now). */
int server_parse_listen(const char *spec, struct sockaddr_storage *addr, socklen_t *len,
                        char *errbuf, size_t errlen);
/* Whether the server could listen on addr (spec, its text, for the message): binds a socket
 * there and closes it, so that a server that cannot listen finds out before it opens (and
 * creates) its database. 0, or -1 with the reason in errbuf (the address is in use). */
int server_check_listen(const char *spec, const struct sockaddr *addr, socklen_t len, char *errbuf,
                        size_t errlen);
/* Whether addr is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x.x.x). */
int server_addr_is_loopback(const struct sockaddr *addr);

typedef struct server_config {
    const struct sockaddr *addr; /* where to listen (copied) */
    socklen_t addr_len;
    unsigned loops;           /* event loop threads; 0 means 1 */
    int pin_loops;            /* pin loop i to the i-th CPU this process may use (modulo their
                                 number), and give each connection to a loop on the CPU its
                                 packets arrive on */
    unsigned workers;         /* threads for calls that may wait for a sync; 0 runs every
                                 call on its event loop (right when writes are not synced) */
    unsigned max_connections; /* open connections at once; more are refused */
    unsigned timeout_seconds; /* an idle connection is closed after this, and one whose
                                 client takes nothing of an answer for as long is cut */
    size_t max_body;          /* bytes; 0 means SERVER_MAX_BODY */
    server_log_level log_level;
    const sigv4_keyring *keys; /* borrowed; NULL accepts any access key */
    /* Without keys, requests are answered only when addressed to a loopback name or one
     * of allow_hosts, and browsers only from the server's own origin, loopback pages on
     * its port and cors_origins (origin.h). Borrowed, like keys. */
    const char *const *allow_hosts;
    size_t n_allow_hosts;
    const char *const *cors_origins;
    size_t n_cors_origins;
} server_config;

typedef struct server server;

/* h2o does the HTTP/1.1 (keep-alive, pipelining, chunked bodies, timeouts) on the event
 * loop threads of the server core (core.h), which also runs writes that wait for a disk
 * sync on a pool of workers; dynamodb.c routes POST / by X-Amz-Target to qr_call, verifies
 * SigV4, bounds request bodies, adds DynamoDB's response headers and logs one line per
 * request; it answers GET / (the health check), GET /metrics (qr_metrics, signed like
 * any API request) and GET /console (the console's files, console.h) itself.
 *
 * Binds, listens and starts the event loops and workers. db is borrowed and must outlive the
 * server. Returns 0, or -1 with a message (e.g. the address is in use) in errbuf. */
int server_start(qr_db *db, const server_config *cfg, server **out, char *errbuf, size_t errlen);
/* The server's exchange budget (budget.h), which the loops of another listener (CQL's)
 * may charge too; it lives until server_stop. */
struct budget *server_exchange_budget(server *s);
/* The server's bound on requests' bytes (bodybound.h, SERVER_BODY_BOUND), which the loops
 * of another listener (CQL's, with as many loops as the server's) may take part in too; it
 * lives until server_stop. */
struct bodybound *server_body_bound(server *s);

/* The port actually bound (useful when the configuration asked for port 0). */
unsigned server_port(const server *s);

/* Stops accepting connections and closes idle ones; requests already begun still
 * complete, and their responses ask the client to close the connection. Returns once
 * new connections are refused. */
void server_drain(server *s);

/* Requests begun and not yet answered (or whose answer is still being sent), counted
 * by the event loops once server_drain has been called (0 before). */
unsigned server_in_flight(const server *s);

/* Calls started since the start; it stands still while no request comes. */
unsigned long server_calls(const server *s);

/* Closes every connection, stops the threads and frees the server. */
void server_stop(server *s);

#endif
