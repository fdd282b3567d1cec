/* api.h — the PartiQL API: ExecuteStatement, BatchExecuteStatement, ExecuteTransaction.
 *
 * The handlers of the operation table (ops/optable.c), with op_handler's signature. They
 * read and check the request's parameters, parse, plan and execute its statements and
 * shape DynamoDB's answer; they do not evaluate expressions or touch storage themselves. */
#ifndef QR_PARTIQL_API_H
#define QR_PARTIQL_API_H

#include <jansson.h>

#include "engine/engine.h"
#include "util/err.h"

int op_execute_statement(qr_db *db, op_call *c, qr_err *err);
int op_batch_execute_statement(qr_db *db, op_call *c, qr_err *err);
int op_execute_transaction(qr_db *db, op_call *c, qr_err *err);

#endif
