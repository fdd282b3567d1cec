/* settings.c — per-table settings kept beside the catalog (contributor insights and
 * resource policies), and the reading of the resource ARNs that address them and tags.
 *
 * Each is one JSON record under "\0S" | kind | the table's TableId (its UUID) | "\0" |
 * a sub-name (an index name, or empty). Keying by TableId, not by name, means a table
 * created again under an old name starts with none of the settings of the one deleted;
 * the records of a deleted table are never read again. DescribeTable does not show them. */
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "util/jsonread.h"

#define SETTINGS_PREFIX "\0S"

static int setting_key(qr_db *db, const table *t, char kind, const char *sub, buf *k, qr_err *err)
{
    pthread_mutex_lock(&db->catalog_lock);
    const char *id = json_string_value(json_object_get(t->desc, "TableId"));
    char copy[64];
    snprintf(copy, sizeof copy, "%s", id ? id : "");
    pthread_mutex_unlock(&db->catalog_lock);
    if (copy[0] == '\0') return err_set(err, QR_E_INTERNAL, "table %s has no TableId", t->name);
    buf_append(k, SETTINGS_PREFIX, 2);
    buf_putc(k, kind);
    buf_append(k, copy, strlen(copy));
    buf_putc(k, '\0');
    buf_append(k, sub ? sub : "", sub ? strlen(sub) : 0);
    return 0;
}

void setting_forget_all(qr_db *db, const table *t)
{
    static const char kinds[] = {'I', 'P'};
    qr_err e;
    err_init(&e);
    store_batch *b = store_batch_new();
    for (size_t i = 0; i < sizeof kinds; i++) {
        buf lo, hi;
        buf_init(&lo, 0);
        buf_init(&hi, 0);
        /* Every sub-name of the kind: the key up to its "\0", then up to "\1". */
        if (setting_key(db, t, kinds[i], NULL, &lo, &e) == 0 &&
            setting_key(db, t, kinds[i], NULL, &hi, &e) == 0) {
            hi.data[hi.len - 1] = 1;
            store_batch_delete_range(b, lo.data, lo.len, hi.data, hi.len);
        }
        buf_free(&lo);
        buf_free(&hi);
    }
    if (store_batch_count(b))
        store_write(db->st, b, &e); /* if it fails, the records are only never read */
    store_batch_free(b);
}

int setting_get(qr_db *db, const table *t, char kind, const char *sub, json_t **out, qr_err *err)
{
    buf k;
    buf_init(&k, 0);
    char *v = NULL;
    size_t vl = 0;
    *out = NULL;
    int rc = setting_key(db, t, kind, sub, &k, err);
    if (rc == 0) rc = store_get(db->st, NULL, k.data, k.len, &v, &vl, err);
    buf_free(&k);
    if (rc <= 0) return rc;
    *out = json_read(v, vl, 0, NULL);
    free(v);
    return *out ? 0 : err_set(err, QR_E_INTERNAL, "a stored table setting cannot be decoded");
}

int setting_put(qr_db *db, const table *t, char kind, const char *sub, const json_t *value,
                qr_err *err)
{
    buf k;
    buf_init(&k, 0);
    if (setting_key(db, t, kind, sub, &k, err)) {
        buf_free(&k);
        return -1;
    }
    char *text = value ? json_dumps(value, JSON_COMPACT) : NULL;
    store_batch *b = store_batch_new();
    if (text)
        store_batch_put(b, k.data, k.len, text, strlen(text));
    else
        store_batch_delete(b, k.data, k.len);
    int rc = value && text == NULL ? err_set(err, QR_E_INTERNAL, "cannot encode a table setting")
                                   : store_write(db->st, b, err);
    store_batch_free(b);
    free(text);
    buf_free(&k);
    return rc;
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
        return err_validation(
            err, "One or more parameter values were invalid: ARNs must start with 'arn:': %s", arn);
    if (arn_split(arn, a) || !arn_is(a->service, a->service_len, "dynamodb") || a->table == NULL ||
        (a->sub && !arn_is(a->sub, a->sub_len, "index") && !arn_is(a->sub, a->sub_len, "stream")))
        return err_validation(
            err,
            "One or more parameter values were invalid: Provided Arn is not a DynamoDB "
            "resource arn: %s",
            arn);
    return 0;
}
