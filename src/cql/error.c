/* error.c — the front end's one way of recording an error: the first failure of a
 * statement is kept in its cql_parse_error, with the protocol's code and Cassandra's
 * message; later ones are dropped. No messages live here: each module words its own. */
#include <stdarg.h>
#include <stdio.h>

#include "cql/ast.h"

int cql_error_record(cql_parse_error *err, int code, const char *fmt, ...)
{
    if (err == NULL || err->code || err->msg[0]) return -1;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}
