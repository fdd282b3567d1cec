/* sigv4.h — verifying AWS Signature Version 4 on requests, signed in their Authorization
 * header or presigned in their query string, and the keys it checks against. It does not
 * speak HTTP or read files other than the credentials file. */
#ifndef QR_SIGV4_H
#define QR_SIGV4_H

#include <stddef.h>
#include <time.h>

#include "util/buf.h"
#include "util/err.h"

/* The error types DynamoDB answers authentication failures with (all HTTP 400). */
#define SIGV4_E_MISSING "MissingAuthenticationTokenException"
#define SIGV4_E_INCOMPLETE "IncompleteSignatureException"
#define SIGV4_E_INVALID "InvalidSignatureException"
#define SIGV4_E_UNRECOGNIZED "UnrecognizedClientException"

/* Requests whose date is further than this from the server's clock are refused. */
#define SIGV4_MAX_SKEW_SECONDS (15 * 60)

/* A name/value pair; neither is NUL-terminated necessarily (lengths given). */
typedef struct sigv4_pair {
    const char *name;
    size_t name_len;
    const char *value; /* may be NULL for a query key without '=' */
    size_t value_len;
} sigv4_pair;

/* A request as received. All memory is borrowed for the duration of sigv4_verify. */
typedef struct sigv4_request {
    const char *method;      /* "POST" */
    const char *path;        /* raw path as sent, without the query ("/") */
    const sigv4_pair *query; /* raw (still percent-encoded) query parameters */
    size_t n_query;
    const sigv4_pair *headers; /* every header line, in arrival order */
    size_t n_headers;
    const void *body;
    size_t body_len;
} sigv4_request;

typedef struct sigv4_key {
    char *access_key;    /* aws_access_key_id */
    char *secret;        /* aws_secret_access_key */
    char *profile;       /* the [section] it came from */
    char *session_token; /* aws_session_token: requests must carry it; NULL: must carry none */
} sigv4_key;

/* The access keys a server accepts; every profile of the credentials file counts. */
typedef struct sigv4_keyring {
    sigv4_key *keys; /* owned */
    size_t n;
} sigv4_keyring;

/* Parses AWS shared-credentials text ([profile] sections with aws_access_key_id and
 * aws_secret_access_key, and aws_session_token for temporary keys; '#' and ';'
 * comments). name labels error messages. Returns 0, or -1 with a message in errbuf naming
 * the line. A profile with one key but not the other is an error; a file with no complete
 * profile is an error. */
int sigv4_keyring_parse(sigv4_keyring *kr, const char *text, size_t len, const char *name,
                        char *errbuf, size_t errlen);
/* Reads and parses the file at path (at most 1 MB). */
int sigv4_keyring_load(sigv4_keyring *kr, const char *path, char *errbuf, size_t errlen);
/* The key of an access key id, or NULL if it is not in the ring (borrowed from kr). */
const sigv4_key *sigv4_keyring_key(const sigv4_keyring *kr, const char *access_key, size_t len);
/* The secret for an access key id, or NULL if the key is not in the ring. */
const char *sigv4_keyring_find(const sigv4_keyring *kr, const char *access_key, size_t len);
void sigv4_keyring_free(sigv4_keyring *kr);

/* The server hands over a request as it arrived (raw path, raw query pairs, headers in arrival
 * order, body); sigv4_verify rebuilds the canonical request, the string to sign and the signing
 * key (HMAC-SHA256 and SHA-256 from libcrypto) and answers with DynamoDB's own errors and
 * messages.
 *
 * A request with no Authorization header whose query string carries X-Amz-Algorithm,
 * X-Amz-Credential, X-Amz-Signature or X-Amz-SignedHeaders is presigned: those, with
 * X-Amz-Date, must all be there (once each); X-Amz-Expires (1 to 604800 seconds) bounds
 * how long after X-Amz-Date it is good (without it, SIGV4_MAX_SKEW_SECONDS does); its
 * X-Amz-Security-Token may be in the query or a header; the canonical request holds the
 * query without X-Amz-Signature and, as for any request, the SHA-256 of the body. The
 * checks after reading the parameters are the header's.
 *
 * Checks the request's Authorization header, in DynamoDB's order: one header, present,
 * each of its parameters known and given once, complete, date well formed and within
 * SIGV4_MAX_SKEW_SECONDS of now, Host and every X-Amz-* header present signed,
 * algorithm, credential scope (service must equal `service`, date must match), access
 * key known, X-Amz-Security-Token the key's session token (or absent for a key without
 * one), signature. With keys == NULL any access key is accepted and only the header's
 * presence and shape are checked (DynamoDB Local's behaviour). Returns 0 if the request
 * is authentic, else -1 with e set to one of the SIGV4_E_* types and DynamoDB's message.
 * If access_key is not NULL it receives the access key id (up to akcap-1 bytes). */
int sigv4_verify(const sigv4_request *req, const sigv4_keyring *keys, const char *service,
                 time_t now, char *access_key, size_t akcap, qr_err *e);

/* Copies the region of an Authorization header's credential scope
 * ("… Credential=AKID/20261130/us-east-1/dynamodb/aws4_request, …") into out (cap bytes,
 * NUL-terminated). Returns 0, or -1 (out empty) when the header names no region. */
int sigv4_credential_region(const char *authorization, size_t len, char *out, size_t cap);

/* The region of a presigned request's X-Amz-Credential in its raw query string (len bytes,
 * without the '?'), as sigv4_credential_region reads a header's. */
int sigv4_presigned_region(const char *query, size_t len, char *out, size_t cap);

/* The pieces of the computation, exposed for tests. */
/* The canonical request for req given the SignedHeaders list and the payload's hash. */
int sigv4_canonical_request(const sigv4_request *req, const char *signed_headers, size_t sh_len,
                            const char *payload_hash_hex, buf *out);
/* Lowercase hex SHA-256 of data into hex (65 bytes with the NUL). */
void sigv4_sha256_hex(const void *data, size_t len, char hex[65]);
/* The signature (lowercase hex) for string_to_sign with the key derived from secret,
 * date (YYYYMMDD), region and service. */
int sigv4_sign(const char *secret, const char *date, const char *region, const char *service,
               const char *string_to_sign, size_t sts_len, char hex[65]);

#endif
