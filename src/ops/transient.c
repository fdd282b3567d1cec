/* transient.c — qr_options.transient_ms (serve --delay-transient-states), as DynamoDB Local's
 * -delayTransientStatuses: tables and global indexes show CREATING, UPDATING or DELETING for
 * a while after a change, by marks in the catalog's description (they outlive a restart)
 * that transient_describe shows and strips. The engine knows nothing of it: the item
 * operations find no table CREATING or DELETING (ops_table_get), and UpdateTable and
 * DeleteTable refuse a table in any of the three. */
#include <string.h>

#include "ops/ops.h"

#define TABLE_MARK "QuarryTransient"                 /* {"Status": "CREATING", "Until": seconds} */
#define INDEX_MARK "QuarryTransientUntil"            /* in a global index being created */
#define GONE_INDEXES "QuarryTransientDeletedIndexes" /* [{index description, "Until"}] */

static double until(qr_db *db)
{
    return ops_now_seconds() + engine_transient_ms(db) / 1000.0;
}

void transient_mark(qr_db *db, json_t *desc, const char *status)
{
    if (engine_transient_ms(db) <= 0) return;
    json_object_set_new(desc, TABLE_MARK,
                        json_pack("{s:s,s:f}", "Status", status, "Until", until(db)));
}

void transient_mark_index(qr_db *db, json_t *gsi)
{
    if (engine_transient_ms(db) > 0) json_object_set_new(gsi, INDEX_MARK, json_real(until(db)));
}

void transient_mark_deleted_index(qr_db *db, json_t *desc, const json_t *gsi)
{
    if (engine_transient_ms(db) <= 0) return;
    double now = ops_now_seconds();
    json_t *kept = json_array(), *old = json_object_get(desc, GONE_INDEXES), *g;
    size_t i;
    json_array_foreach(old, i, g) /* the ones whose time is up are forgotten here */
        if (json_number_value(json_object_get(g, "Until")) > now) json_array_append(kept, g);
    json_t *copy = json_deep_copy(gsi);
    json_object_del(copy, INDEX_MARK);
    json_object_set_new(copy, "Until", json_real(until(db)));
    json_array_append_new(kept, copy);
    json_object_set_new(desc, GONE_INDEXES, kept);
}

/* The status desc's mark gives now, or NULL when it has none or its time is up. */
static const char *marked_status(const json_t *mark, double now)
{
    if (mark == NULL || json_number_value(json_object_get(mark, "Until")) <= now) return NULL;
    return json_string_value(json_object_get(mark, "Status"));
}

void transient_describe(json_t *desc)
{
    double now = ops_now_seconds();
    const char *status = marked_status(json_object_get(desc, TABLE_MARK), now);
    size_t i;
    json_t *g;
    if (status) {
        json_object_set_new(desc, "TableStatus", json_string(status));
        if (strcmp(status, "CREATING") == 0)
            json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
                json_object_set_new(g, "IndexStatus", json_string("CREATING"));
    }
    json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
    {
        if (json_number_value(json_object_get(g, INDEX_MARK)) > now)
            json_object_set_new(g, "IndexStatus", json_string("CREATING"));
        json_object_del(g, INDEX_MARK);
    }
    json_array_foreach(json_object_get(desc, GONE_INDEXES), i, g)
    {
        if (json_number_value(json_object_get(g, "Until")) <= now) continue;
        json_t *shown = json_deep_copy(g);
        json_object_del(shown, "Until");
        json_object_set_new(shown, "IndexStatus", json_string("DELETING"));
        json_t *list = json_object_get(desc, "GlobalSecondaryIndexes");
        if (list == NULL) json_object_set_new(desc, "GlobalSecondaryIndexes", list = json_array());
        json_array_append_new(list, shown);
    }
    json_object_del(desc, TABLE_MARK);
    json_object_del(desc, GONE_INDEXES);
}

const char *transient_status(qr_db *db, table *t)
{
    if (engine_transient_ms(db) <= 0) return NULL;
    json_t *mark = table_desc_member(t, TABLE_MARK);
    const char *s = marked_status(mark, ops_now_seconds());
    /* The status words are static; the copy of the mark is not. */
    static const char *const words[] = {"CREATING", "UPDATING", "DELETING"};
    const char *word = NULL;
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, words[i]) == 0) word = words[i];
    json_decref(mark);
    return word;
}

int transient_deleted(qr_db *db, table *t)
{
    if (engine_transient_ms(db) <= 0) return 0;
    json_t *mark = table_desc_member(t, TABLE_MARK);
    const char *s = json_string_value(json_object_get(mark, "Status"));
    int gone = s && strcmp(s, "DELETING") == 0 && marked_status(mark, ops_now_seconds()) == NULL;
    json_decref(mark);
    return gone;
}

int transient_refuse_change(qr_db *db, table *t, qr_err *err)
{
    const char *s = transient_status(db, t);
    if (s == NULL) return 0;
    return err_set(err, QR_E_IN_USE,
                   "Attempt to change a resource which is still in use: Table is being %s: %s",
                   s[0] == 'C'   ? "created"
                   : s[0] == 'U' ? "updated"
                                 : "deleted",
                   table_name(t));
}

table *ops_table_get(qr_db *db, const char *name)
{
    table *t = catalog_get(db, name);
    if (t == NULL || engine_transient_ms(db) <= 0) return t;
    const char *s = transient_status(db, t);
    if (s && strcmp(s, "UPDATING") != 0) {
        catalog_release(db, t);
        return NULL;
    }
    if (s == NULL && transient_deleted(db, t)) { /* deleted, its DELETING time over */
        catalog_release(db, t);
        return NULL;
    }
    return t;
}
