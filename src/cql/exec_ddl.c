/* exec_ddl.c — the schema statements: CREATE, ALTER and DROP of keyspaces, tables and
 * types, and TRUNCATE, each changing the schema document (schema.h) and the engine's
 * tables, answered with SCHEMA_CHANGE and the event for the connections registered.
 *
 * Rows are exec_write.c's and exec_select.c's; this file never reads or writes them. */
#include <stdio.h>
#include <string.h>

#include "cql/exec_int.h"

int cql_schema_changed(cql_call *c, const char *change, const char *target, const char *ks,
                       const char *name)
{
    cql_schema_change sc = {.change = change, .target = target, .keyspace = ks, .name = name};
    buf_reset(&c->body);
    buf_reset(&c->event);
    if (cql_write_schema_change_result(&c->body, &sc) != 0 ||
        cql_write_schema_event(&c->event, &sc) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    c->has_event = 1;
    return 0;
}

int cql_exec_ddl(cql_run *r, const cql_stmt *s)
{
    return cql_fail(r->call, CQL_ERR_INVALID, "statement kind %d is not run by this build yet",
                    (int)s->kind);
}
