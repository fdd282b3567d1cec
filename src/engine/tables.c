/* tables.c — what the layers above ask of a database and its tables beyond items: the
 * opening's identity and the removal of a dropped index's entries (see engine.h). */
#include "engine/engine_int.h"

uint64_t engine_instance(const qr_db *db)
{
    return db->instance;
}

int catalog_drop_index_entries(qr_db *db, const table *t, uint16_t id, qr_err *err)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    key_table_prefix(&lo, t, id);
    key_table_prefix(&hi, t, (uint16_t)(id + 1));
    store_batch *b = store_batch_new();
    store_batch_delete_range(b, lo.data, lo.len, hi.data, hi.len);
    int rc = store_write(db->st, b, err);
    store_batch_free(b);
    buf_free(&lo);
    buf_free(&hi);
    return rc;
}
