/* settings.c — what ops does with the per-table settings kept beside the catalog
 * (contributor insights, resource policies): forgets them with their table; and the
 * reading of the resource ARNs that address them and tags.
 *
 * The settings themselves, their records and their lock, are the engine's (meta.h).
 * DescribeTable does not show them. */
#include <string.h>

#include "engine/engine.h"
#include "ops/ops.h"

void setting_forget_all(qr_db *db, const table *t)
{
    meta_setting_forget_all(db, t);
}

int arn_split(const char *arn, arn_parts *out)
{
    memset(out, 0, sizeof *out);
    if (strncmp(arn, "arn:", 4) != 0) return -1;
    const char *p = arn + 4;
    const char **fields[] = {&out->partition, &out->service, &out->region, &out->account};
    size_t *lens[] = {&out->partition_len, &out->service_len, &out->region_len, &out->account_len};
    for (int i = 0; i < 4; i++) {
        const char *colon = strchr(p, ':');
        if (colon == NULL) return -1;
        *fields[i] = p;
        *lens[i] = (size_t)(colon - p);
        p = colon + 1;
    }
    out->resource = p;
    /* table/NAME[/index/INDEX | /stream/LABEL | /backup/ID | /export/ID | ...] */
    if (strncmp(p, "table/", 6) == 0) {
        out->table = p + 6;
        out->table_len = strcspn(out->table, "/");
        const char *rest = out->table + out->table_len;
        if (*rest == '/') {
            out->sub = rest + 1;
            out->sub_len = strcspn(out->sub, "/");
            out->sub_name = out->sub[out->sub_len] == '/' ? out->sub + out->sub_len + 1 : NULL;
        }
    }
    return 0;
}

int arn_is(const char *field, size_t len, const char *want)
{
    return len == strlen(want) && strncmp(field, want, len) == 0;
}

int arn_split_resource(const char *arn, arn_parts *a, qr_err *err)
{
    if (strncmp(arn, "arn:", 4) != 0)
        return err_validation(err, QR_MSG_INVALID_PARAMETER "ARNs must start with 'arn:': %s", arn);
    if (arn_split(arn, a) || !arn_is(a->service, a->service_len, "dynamodb") || a->table == NULL ||
        (a->sub && !arn_is(a->sub, a->sub_len, "index") && !arn_is(a->sub, a->sub_len, "stream")))
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER "Provided Arn is not a DynamoDB "
                                                       "resource arn: %s",
                              arn);
    return 0;
}
