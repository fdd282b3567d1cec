/* client.h — a DynamoDB client over HTTP for quarry's tools: one endpoint, requests
 * signed with libcurl's built-in SigV4 using the AWS credentials of the environment or of
 * the [default] profile. `quarry model apply` and `quarry top` talk to a server through it;
 * it knows no operation's shape, only DynamoDB's JSON protocol and its error documents. */
#ifndef QR_CHECKER_CLIENT_H
#define QR_CHECKER_CLIENT_H

#include <curl/curl.h>
#include <jansson.h>

#include "util/err.h"

typedef struct client {
    CURL *curl;
    const char *endpoint;
    char region[64];
    char userpwd[512];
    char token[2048]; /* session token, or empty */
} client;

/* Sets c up for endpoint (borrowed; an http:// or https:// URL): -1 with err set when no
 * credentials are found or libcurl cannot be loaded or started. The first call loads
 * libcurl and runs curl_global_init, once for the process; any thread may make it. */
int client_init(client *c, const char *endpoint, qr_err *err);
void client_free(client *c);
/* Calls operation op with body (a JSON object, borrowed). On success *out is the
 * response object (caller decrefs). On a DynamoDB error, err carries its type and
 * message. */
int client_call(client *c, const char *op, json_t *body, json_t **out, qr_err *err);

#endif
