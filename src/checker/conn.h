/* conn.h — the DynamoDB API of quarry's tools (reconcile, verify), whichever way the data
 * is reached: a server's endpoint over HTTP (client.h, SigV4), or a data folder opened
 * in-process through quarry.h (qr_call). Requests and answers are the same JSON either
 * way, so a tool is written once over conn_call. It knows no operation's shape. */
#ifndef QR_CHECKER_CONN_H
#define QR_CHECKER_CONN_H

#include <jansson.h>

#include "checker/client.h"
#include "quarry.h"
#include "util/err.h"

typedef struct conn conn;
struct conn {
    /* Runs one operation: conn_call's contract. Set by conn_open_*; a caller may wrap it
     * (keeping the one it replaces) to watch or interleave requests. */
    int (*call)(conn *c, const char *op, json_t *body, json_t **out, qr_err *err);
    void *arg;         /* the wrapper's own */
    const char *where; /* the endpoint or the folder (borrowed), for messages */
    client http;       /* with an endpoint */
    qr_db *db;         /* with a data folder */
    int read_only;     /* the folder is open read-only (another process holds it) */
};

/* Talks to the server at url (borrowed; http:// or https://) with the environment's AWS
 * credentials. -1 with err set when there are none or libcurl cannot start. */
int conn_open_endpoint(conn *c, const char *url, qr_err *err);
/* Opens the database in dir (borrowed), which must exist. may_share: when another process
 * (a running server) holds it, open it read-only instead of failing (c->read_only says
 * so). -1 with err set when it cannot be opened. */
int conn_open_data(conn *c, const char *dir, int may_share, qr_err *err);
void conn_close(conn *c);

/* Calls operation op with body (borrowed). On success returns 0 and *out is the answer
 * (the caller decrefs it); on a DynamoDB error returns -1 with err carrying its type
 * (err_type_named) and message. */
int conn_call(conn *c, const char *op, json_t *body, json_t **out, qr_err *err);
/* conn_call against c->db, what conn_open_data installs (for wrappers to forward to). */
int conn_call_db(conn *c, const char *op, json_t *body, json_t **out, qr_err *err);

#endif
