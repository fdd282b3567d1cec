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

void cql_error_function(cql_parse_error *err, const char *name, const char *const *args, unsigned n)
{
    if (err == NULL) return;
    snprintf(err->fn_name, sizeof err->fn_name, "%s", name);
    err->fn_nargs = n < CQL_ERR_FN_ARGS ? n : CQL_ERR_FN_ARGS;
    for (unsigned i = 0; i < err->fn_nargs; i++)
        snprintf(err->fn_args[i], sizeof err->fn_args[i], "%s", args[i]);
}
