/* exec.h — the CQL executor: QUERY, PREPARE, EXECUTE and BATCH bodies, decoded by the
 * wire codec, run on the engine. What the api layer (src/api/cql.c) calls.
 *
 * A call carries the connection's keyspace and role in, and the RESULT or ERROR body,
 * the keyspace a USE set and a schema change's EVENT body out. Framing, negotiation,
 * authentication and event delivery are the server's; values' codecs are value.h's. */
#ifndef QR_CQL_EXEC_H
#define QR_CQL_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "cqlwire/cql_codec.h"
#include "quarry.h"
#include "util/buf.h"

#define CQL_NAME_MAX 64

/* How many client warnings one answer carries at most (Cassandra's batch checks make two). */
#define CQL_CALL_MAX_WARNINGS 4

typedef struct cql_call {
    qr_db *db;
    uint8_t version;
    const char *keyspace; /* the connection's, or NULL */
    const char *user;     /* the role, or NULL */
    /* An EXECUTE of a SELECT: the result metadata id the client holds (v5) or the one its
     * PREPARE answered (v4), and whether it asked to skip the metadata when it matches */
    const uint8_t *result_id;
    size_t result_id_len;
    int skip_metadata;

    /* out */
    buf body;                        /* the RESULT body (ERROR bodies are cql_call_answer's) */
    char new_keyspace[CQL_NAME_MAX]; /* after a USE */
    buf event;                       /* a SCHEMA_CHANGE event body, when has_event */
    int has_event;
    char *warnings[CQL_CALL_MAX_WARNINGS]; /* client warnings for the RESULT (owned) */
    uint16_t n_warnings;

    /* the first error, when failed */
    int failed;
    cql_error_code code;
    char msg[1024];
    char err_keyspace[CQL_NAME_MAX], err_name[CQL_NAME_MAX]; /* ALREADY_EXISTS */
    char err_fn[64], err_fn_args[2][64]; /* FUNCTION_FAILURE: the function, its types */
    unsigned err_fn_nargs;
    uint8_t err_id[16]; /* UNPREPARED */
    size_t err_id_len;
} cql_call;

void cql_call_init(cql_call *c, qr_db *db, uint8_t version, const char *keyspace, const char *user);
void cql_call_free(cql_call *c);
/* Records the call's error (the first one wins) and returns -1. */
int cql_fail(cql_call *c, cql_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds a client warning to the call's answer (the native protocol's WARNING flag, v4 and
 * later); past CQL_CALL_MAX_WARNINGS, or out of memory, it is dropped. */
void cql_warn(cql_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records perr, an error of the front end's modules, as the call's error (the first one
 * wins), with the function that failed for a FUNCTION_FAILURE; returns -1. */
struct cql_parse_error;
int cql_fail_parsed(cql_call *c, const struct cql_parse_error *perr);
/* Records an engine refusal held in err as the call's error: a throttled read or write (the
 * table's capacity, as DynamoDB meters it) is Cassandra's Overloaded, which drivers retry;
 * any other is code. Frees what err holds (a throttled access's reasons). Returns -1. */
struct qr_err;
int cql_fail_engine(cql_call *c, cql_error_code code, struct qr_err *err);
/* Writes the ERROR body of the call's error into out. */
int cql_call_error_body(const cql_call *c, buf *out);

/* The four requests the executor answers; 0, or -1 with the call's error set. */
int cql_exec_query(cql_call *c, const cql_query *q);
int cql_exec_prepare(cql_call *c, const cql_prepare *p);
int cql_exec_execute(cql_call *c, const cql_execute *e);
int cql_exec_batch(cql_call *c, const cql_batch *b);

/* 1 when the statement text may write (anything but SELECT and USE), without a parse. */
int cql_text_writes(const char *text, size_t len);
/* 1 when the prepared statement id names one that may write (unknown ids: 1). */
int cql_prepared_writes(qr_db *db, const uint8_t *id, size_t len);

#endif
