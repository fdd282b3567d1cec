/* model.c — QuarryDescribeModel, quarry's own operation: what the model watch (watch.h)
 * knows of the models loaded with qr_options.models (serve --model): each access pattern
 * declared and observed, the findings with their sample requests, indexes no traffic
 * read and patterns no traffic exercised. Request {} or {"TableName": T}; with no model
 * loaded every list is empty. */
#include "ops/ops.h"

int op_quarry_describe_model(qr_db *db, op_call *c, qr_err *err)
{
    const char *table = NULL;
    if (param_string(c->req, "TableName", &table, err)) return -1;
    return watch_describe(db, table, &c->answer);
}
