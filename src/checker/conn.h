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
 * so). log: qr_options.log, where the engine's progress lines go (NULL: nowhere). -1 with
 * err set when it cannot be opened. */
int conn_open_data(conn *c, const char *dir, int may_share,
                   void (*log)(void *arg, const char *line, int last), qr_err *err);
void conn_close(conn *c);

/* Calls operation op with body (borrowed). On success returns 0 and *out is the answer
 * (the caller decrefs it); on a DynamoDB error returns -1 with err carrying its type
 * (err_type_named) and message. A throttled request is sent again after a pause that
 * doubles each time, up to a minute or so in all. */
int conn_call(conn *c, const char *op, json_t *body, json_t **out, qr_err *err);
/* conn_call against c->db, what conn_open_data installs (for wrappers to forward to). */
int conn_call_db(conn *c, const char *op, json_t *body, json_t **out, qr_err *err);

/* Reads a whole table or index: Scan with request (borrowed: TableName, IndexName,
 * ConsistentRead, ... as the caller wants), page after page through LastEvaluatedKey,
 * handing each item to each (borrowed for the call). each returns 0 to go on, -1 to stop
 * (the error its own). Returns 0, or -1 with err set. */
int conn_scan(conn *c, const json_t *request, int (*each)(void *arg, json_t *item), void *arg,
              qr_err *err);

#endif
