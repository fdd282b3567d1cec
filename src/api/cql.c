/* cql.c — qr_cql_call, the CQL front end's entry point: a QUERY, PREPARE, EXECUTE or BATCH
 * body decoded by the wire codec and handed to the executor (src/cql/exec.h), and the
 * RESULT or ERROR body, USE's keyspace and a schema change's event handed back.
 *
 * Framing, compression, authentication and event delivery are the server's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/exec.h"
#include "cqlwire/cql_codec.h"
#include "quarry.h"

static int decode(const qr_cql_request *req, cql_request *out, char *err, size_t errlen)
{
    cql_envelope env;
    memset(&env, 0, sizeof env);
    env.version = req->version;
    env.opcode = req->opcode;
    env.length = (uint32_t)req->len;
    env.body = req->body;
    return cql_request_decode(&env, out, err, errlen);
}

static void answer_error(qr_cql_response *resp, uint8_t version, cql_error_code code,
                         const char *msg)
{
    buf b;
    buf_init(&b, 0);
    cql_error e;
    memset(&e, 0, sizeof e);
    e.code = code;
    e.message = msg;
    cql_write_error(&b, version, &e);
    resp->opcode = CQL_OP_ERROR;
    resp->body = (unsigned char *)buf_detach(&b, &resp->len);
}

int qr_cql_call(qr_db *db, const qr_cql_request *req, qr_cql_response *resp)
{
    memset(resp, 0, sizeof *resp);
    uint8_t version = req->version >= 3 && req->version <= 5 ? req->version : 4;
    if (req->opcode != CQL_OP_QUERY && req->opcode != CQL_OP_PREPARE &&
        req->opcode != CQL_OP_EXECUTE && req->opcode != CQL_OP_BATCH) {
        answer_error(resp, version, CQL_ERR_PROTOCOL,
                     "qr_cql_call runs QUERY, PREPARE, EXECUTE and BATCH only");
        return QR_ERR;
    }
    if (req->len > UINT32_MAX) {
        answer_error(resp, version, CQL_ERR_PROTOCOL, "the message body is too long");
        return QR_ERR;
    }
    cql_request r;
    char err[256];
    if (decode(req, &r, err, sizeof err) != 0) {
        cql_request_free(&r);
        answer_error(resp, version, CQL_ERR_PROTOCOL, err);
        return QR_ERR;
    }
    cql_call c;
    cql_call_init(&c, db, version, req->keyspace, req->user);
    int rc;
    switch (req->opcode) {
    case CQL_OP_QUERY:
        rc = cql_exec_query(&c, &r.u.query);
        break;
    case CQL_OP_PREPARE:
        rc = cql_exec_prepare(&c, &r.u.prepare);
        break;
    case CQL_OP_EXECUTE:
        rc = cql_exec_execute(&c, &r.u.execute);
        break;
    default:
        rc = cql_exec_batch(&c, &r.u.batch);
        break;
    }
    if (rc != 0) {
        buf b;
        buf_init(&b, 0);
        cql_call_error_body(&c, &b);
        resp->opcode = CQL_OP_ERROR;
        resp->body = (unsigned char *)buf_detach(&b, &resp->len);
    } else {
        resp->opcode = CQL_OP_RESULT;
        resp->body = (unsigned char *)buf_detach(&c.body, &resp->len);
        snprintf(resp->keyspace, sizeof resp->keyspace, "%s", c.new_keyspace);
        if (c.has_event) resp->event = (unsigned char *)buf_detach(&c.event, &resp->event_len);
        if (c.n_warnings && (resp->warnings = calloc(c.n_warnings, sizeof(char *)))) {
            for (uint16_t i = 0; i < c.n_warnings; i++)
                resp->warnings[i] = c.warnings[i];
            resp->n_warnings = c.n_warnings;
            c.n_warnings = 0;
        }
    }
    cql_call_free(&c);
    cql_request_free(&r);
    return rc == 0 ? QR_OK : QR_ERR;
}

void qr_cql_response_free(qr_cql_response *resp)
{
    if (resp == NULL) return;
    free(resp->body);
    free(resp->event);
    for (size_t i = 0; i < resp->n_warnings; i++)
        free(resp->warnings[i]);
    free(resp->warnings);
    resp->warnings = NULL;
    resp->n_warnings = 0;
    resp->body = NULL;
    resp->event = NULL;
    resp->len = resp->event_len = 0;
}

int qr_cql_writes(qr_db *db, const qr_cql_request *req)
{
    if (req->opcode == CQL_OP_BATCH) return 1;
    if (req->opcode != CQL_OP_QUERY && req->opcode != CQL_OP_EXECUTE) return 0;
    cql_request r;
    char err[256];
    int writes = 1;
    if (decode(req, &r, err, sizeof err) == 0) {
        if (req->opcode == CQL_OP_QUERY)
            writes = cql_text_writes(r.u.query.query.p, r.u.query.query.len);
        else
            writes = cql_prepared_writes(db, (const uint8_t *)r.u.execute.id.p, r.u.execute.id.len);
    }
    cql_request_free(&r);
    return writes;
}
