/* schema.c — the key schema a PartiQL statement works with, read from the catalog.
 *
 * Copies the table's key, and the key and projection of the index a SELECT reads, into a
 * pq_schema (plan.h) the planner reads without holding the table; refuses a missing table,
 * a missing index and one PartiQL cannot read. It plans and runs nothing. */
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "partiql/execute.h"
#include "partiql/plan.h"

void pq_schema_free(pq_schema *s)
{
    free(s->table);
    free(s->pk);
    free(s->sk);
    for (int i = 0; i < QR_MAX_KEY_ATTRS; i++) {
        free(s->rpk[i]);
        free(s->rsk[i]);
    }
    free(s->index);
    json_decref(s->include);
    memset(s, 0, sizeof *s);
}

/* What DynamoDB refuses in a statement once it has found the index it reads, before
 * anything else about the index, its key or the WHERE clause: any statement on a global
 * index whose key has more than one HASH or more than one RANGE attribute (multi-attribute
 * keys, which PartiQL does not read, though the table's other indexes and the table itself
 * stay readable), then a call in the projection. ix NULL: the statement reads the table. */
static int check_source(const qr_index *ix, const pq_stmt *st, qr_err *err)
{
    if (ix && (ix->npk > 1 || ix->nsk > 1))
        return err_validation(err, "PartiQL statements cannot be executed on tables with "
                                   "multi-attribute HASH keys or multi-attribute RANGE keys.");
    if (st->proj_error) return err_validation(err, "%s", st->proj_error);
    return 0;
}

int pq_schema_load(qr_db *db, const pq_stmt *st, pq_schema *s, qr_err *err)
{
    memset(s, 0, sizeof *s);
    if (pq_check_operand_types(st, err)) return -1;
    /* param_table reads the name from an object, checking it as the item operations do */
    json_t *name = json_string(st->table);
    json_t *probe = json_pack("{s:o}", "TableName", name);
    if (probe == NULL)
        return err_validation(err,
                              "Table name should be within the length [3, 255] and only contain "
                              "'a-z', 'A-Z', '0-9', '-', '_', '.'.");
    table *t = NULL;
    int rc = param_table(db, probe, "TableName", &t, err);
    json_decref(probe);
    if (rc) return -1;
    int oom = (s->table = strdup(table_name(t))) == NULL;
    oom |= (s->pk = strdup(table_pk(t)->name)) == NULL;
    if (table_sk(t)->name) oom |= (s->sk = strdup(table_sk(t)->name)) == NULL;
    const qr_index *ix = st->index ? table_index(t, st->index) : NULL;
    if (st->index && ix == NULL) {
        /* Query and Scan name the index in this message; PartiQL does not */
        catalog_release(db, t);
        pq_schema_free(s);
        return err_validation(err, "The table does not have the specified index");
    }
    if (check_source(ix, st, err)) {
        catalog_release(db, t);
        pq_schema_free(s);
        return -1;
    }
    s->projection = QR_PROJ_ALL;
    if (ix) {
        s->global = ix->global;
        s->projection = ix->projection;
        s->include = json_deep_copy(ix->include);
        oom |= (s->index = strdup(ix->name)) == NULL || (ix->include && s->include == NULL);
        s->npk = ix->npk;
        s->nsk = ix->nsk;
        for (int i = 0; i < ix->npk; i++)
            oom |= (s->rpk[i] = strdup(ix->pk[i])) == NULL;
        for (int i = 0; i < ix->nsk; i++)
            oom |= (s->rsk[i] = strdup(ix->sk[i])) == NULL;
    } else {
        s->npk = 1;
        oom |= (s->rpk[0] = strdup(table_pk(t)->name)) == NULL;
        if (table_sk(t)->name) {
            s->nsk = 1;
            oom |= (s->rsk[0] = strdup(table_sk(t)->name)) == NULL;
        }
    }
    catalog_release(db, t);
    if (oom) {
        pq_schema_free(s);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    return 0;
}

int pq_schema_refuse_index_read(qr_db *db, const pq_stmt *st, const char *missing, qr_err *err)
{
    json_t *probe = json_pack("{s:s}", "TableName", st->table);
    table *t = NULL;
    qr_err quiet;
    err_init(&quiet);
    int found = probe && param_table(db, probe, "TableName", &t, &quiet) == 0;
    json_decref(probe);
    err_clear(&quiet);
    const qr_index *ix = found ? table_index(t, st->index) : NULL;
    int rc = ix ? check_source(ix, st, err) : 0;
    if (found) catalog_release(db, t);
    return rc ? rc : err_validation(err, "%s", missing);
}
