/* collection.c — item collection sizes for tables with local secondary indexes, which DynamoDB
 * caps at 10 GB (all items with one partition key value, plus their local index entries) and
 * reports as ItemCollectionMetrics. Sizes are kept in memory only. */
#include <stdio.h>
#include <string.h>

#include "engine/engine_int.h"
#include "model/value.h"

#define MAX_CACHED 100000

size_t table_lsi_count(const table *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nindexes; i++)
        n += !t->indexes[i].global;
    return n;
}

static void hex_key(const buf *b, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < b->len; i++) {
        out[2 * i] = digits[(unsigned char)b->data[i] >> 4];
        out[2 * i + 1] = digits[(unsigned char)b->data[i] & 15];
    }
    out[2 * b->len] = '\0';
}

static uint64_t range_bytes(qr_db *db, const buf *prefix)
{
    buf hi;
    buf_init(&hi, 0);
    buf_append(&hi, prefix->data, prefix->len);
    buf_prefix_successor(&hi);
    uint64_t total = 0;
    store_iter *it =
        store_iter_new(db->st, NULL, prefix->data, prefix->len, hi.len ? hi.data : NULL, hi.len);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t vl, jlen, size;
        const char *v = store_iter_value(it, &vl), *json;
        if (item_stored(v, vl, &json, &jlen, &size) == 0) total += size;
    }
    store_iter_free(it);
    buf_free(&hi);
    return total;
}

/* A collection's size is computed by scanning it the first time a write touches it, then
 * adjusted by every write's delta. The cache is bounded and simply starts over when full.
 *
 * Looks up (computing if needed) the cached size; returns the cache slot's name. */
static uint64_t cached_size(qr_db *db, const table *t, const json_t *pk_value, char *name,
                            size_t cap)
{
    buf p;
    buf_init(&p, 0);
    qr_err e;
    err_init(&e);
    key_partition(&p, t, 0, pk_value, &e);
    if (p.len * 2 + 1 > cap) p.len = (cap - 1) / 2;
    hex_key(&p, name);
    json_t *v = json_object_get(db->collections, name);
    if (v) {
        buf_free(&p);
        return (uint64_t)json_integer_value(v);
    }
    uint64_t total = range_bytes(db, &p);
    for (size_t i = 0; i < t->nindexes; i++) {
        if (t->indexes[i].global) continue;
        buf q;
        buf_init(&q, 0);
        key_partition(&q, t, t->indexes[i].id, pk_value, &e);
        total += range_bytes(db, &q);
        buf_free(&q);
    }
    buf_free(&p);
    if (json_object_size(db->collections) >= MAX_CACHED) json_object_clear(db->collections);
    json_object_set_new(db->collections, name, json_integer((json_int_t)total));
    return total;
}

int collection_adjust(qr_db *db, const table *t, const json_t *pk_value, int64_t delta, qr_err *err)
{
    char name[2 * (QR_KEY_PREFIX_LEN + QR_MAX_PK_SIZE + 16) + 1];
    uint64_t limit =
        db->opts.lsi_collection_limit ? db->opts.lsi_collection_limit : QR_COLLECTION_LIMIT;
    pthread_mutex_lock(&db->coll_lock);
    uint64_t size = cached_size(db, t, pk_value, name, sizeof name);
    int64_t next = (int64_t)size + delta;
    if (next < 0) next = 0;
    int rc = 0;
    if (delta > 0 && (uint64_t)next > limit)
        rc = err_set(err, QR_E_COLLECTION_SIZE, "Collection size exceeded.");
    else
        json_object_set_new(db->collections, name, json_integer(next));
    pthread_mutex_unlock(&db->coll_lock);
    return rc;
}

uint64_t collection_size(qr_db *db, const table *t, const json_t *pk_value)
{
    char name[2 * (QR_KEY_PREFIX_LEN + QR_MAX_PK_SIZE + 16) + 1];
    pthread_mutex_lock(&db->coll_lock);
    uint64_t size = cached_size(db, t, pk_value, name, sizeof name);
    pthread_mutex_unlock(&db->coll_lock);
    return size;
}

json_t *collection_metrics(qr_db *db, const table *t, const json_t *item)
{
    json_t *pk = json_object_get(item, t->pk.name);
    if (pk == NULL) return json_object();
    double gb = (double)collection_size(db, t, pk) / (double)(1ULL << 30);
    double lo = (double)(long long)gb;
    return json_pack("{s:{s:O},s:[f,f]}", "ItemCollectionKey", t->pk.name, pk,
                     "SizeEstimateRangeGB", lo, lo + 1.0);
}

void collection_forget_all(qr_db *db)
{
    pthread_mutex_lock(&db->coll_lock);
    json_object_clear(db->collections);
    pthread_mutex_unlock(&db->coll_lock);
}
