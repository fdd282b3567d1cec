/* cql.h — quarry's CQL listener: Cassandra's native protocol (versions 3 to 5) in front of a
 * qr_db, on a server core of its own beside the DynamoDB one.
 *
 * It frames, negotiates, authenticates and registers connections for events; every QUERY,
 * PREPARE, EXECUTE and BATCH goes to qr_cql_call. It does not parse CQL, open the
 * database or read options (that is `quarry serve`, src/cli/serve.c). */
#ifndef QR_SERVER_CQL_H
#define QR_SERVER_CQL_H

#include <stddef.h>
#include <sys/socket.h>

#include "quarry.h"
#include "server/server.h"

/* Cassandra's native_transport_max_frame_size: the largest envelope accepted by default. */
#define CQL_DEFAULT_MAX_FRAME ((size_t)16 << 20)
/* Requests of one connection run at once; past them the connection is not read until
 * answers have gone, so that a client's memory on the server stays bounded. */
#define CQL_MAX_IN_FLIGHT 1024
/* Answers waiting for one connection's socket past which it is not read either. */
#define CQL_MAX_PENDING_OUT ((size_t)16 << 20)
/* The authenticator named in AUTHENTICATE, as Cassandra's PasswordAuthenticator is. */
#define CQL_AUTHENTICATOR "org.apache.cassandra.auth.PasswordAuthenticator"

/* ---- the credentials file (--cql-credentials) ----
 * One role a line, "username:password": the username runs to the first ':' (and may not be
 * empty or hold one), the password is the rest of the line, spaces included (it may not be
 * empty). Blank lines and lines whose first non-blank character is '#' are skipped; a line
 * ending in CR LF loses the CR. A username given twice is an error. */
typedef struct cql_role {
    char *user, *password;
} cql_role;
typedef struct cql_credentials {
    cql_role *roles;
    size_t n;
} cql_credentials;

/* Parses text (len bytes, named name in messages). 0, or -1 with the line at fault in
 * errbuf; *out is then empty. */
int cql_credentials_parse(cql_credentials *out, const char *text, size_t len, const char *name,
                          char *errbuf, size_t errlen);
/* Reads and parses the file at path (at most 1 MiB). */
int cql_credentials_load(cql_credentials *out, const char *path, char *errbuf, size_t errlen);
void cql_credentials_free(cql_credentials *c);

/* Judges a SASL PLAIN token ("[authzid] NUL user NUL password", read from its end as
 * Cassandra reads it) against the roles. Returns 0 with the role's name in user (NUL-
 * terminated, cut to userlen), or -1 with Cassandra's message for AUTHENTICATION_ERROR. */
int cql_credentials_check(const cql_credentials *c, const void *token, int32_t len, char *user,
                          size_t userlen, char *msg, size_t msglen);

/* ---- the listener ---- */

typedef struct cql_server_config {
    const struct sockaddr *addr; /* where to listen (copied) */
    socklen_t addr_len;
    unsigned loops; /* event loop threads; 0 means 1 */
    int pin_loops;
    unsigned workers;         /* threads for requests that may write (see core_config) */
    unsigned max_connections; /* open connections at once */
    size_t max_frame;         /* bytes an envelope may take; 0 means CQL_DEFAULT_MAX_FRAME */
    server_log_level log_level;
    const cql_credentials *credentials; /* borrowed; NULL: no authentication (READY) */
    unsigned timeout_seconds; /* a write the client takes nothing of for this long cuts the
                                 connection; 0: none */
    struct budget *budget;    /* borrowed (the DynamoDB server's: server_exchange_budget),
                                 outliving the listener; charged the answers not yet written to
                                 their sockets (budget.h) */
    struct bodybound *bodies; /* borrowed (the DynamoDB server's: server_body_bound), outliving
                                 the listener; charged the bytes of envelopes arrived and not
                                 yet handled, and a connection holding 64 KB or more of them
                                 is read no further while it is full (bodybound.h) */
} cql_server_config;

typedef struct cql_server cql_server;

/* Binds, listens and starts the loops and workers. db is borrowed and must outlive the
 * server. Returns 0, or -1 with a message (the address is in use) in errbuf. */
int cql_server_start(qr_db *db, const cql_server_config *cfg, cql_server **out, char *errbuf,
                     size_t errlen);
unsigned cql_server_port(const cql_server *s);
/* Stops accepting connections and reading requests; connections close once their
 * requests under way are answered, idle ones at once. */
void cql_server_drain(cql_server *s);
/* Requests begun and not yet answered or sent, counted once draining (0 before). */
unsigned cql_server_in_flight(const cql_server *s);
/* QUERY, PREPARE, EXECUTE and BATCH calls started since the start. */
unsigned long cql_server_calls(const cql_server *s);
/* Closes every connection, stops the threads and frees the server. */
void cql_server_stop(cql_server *s);

#endif
