/* engine.c — opening the database, the table catalog, item keys, item locks and table
 * statistics (see engine.h). Request handling lives in src/ops. */
#include "engine/engine_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/keycodec.h"
#include "model/value.h"
#include "util/jsonread.h"
#include "util/murmur3.h"

#define CATALOG_PREFIX "\0C"
#define CATALOG_PREFIX_LEN 2
#define ITEM_FORMAT_JSON 2  /* size, then the JSON text: as written before page sizes were */
#define ITEM_FORMAT_PAGED 3 /* size, page size, then the JSON text */
#define ITEM_HEADER_JSON_LEN 5

/* ---- open and close ---- */

/* Builds the in-memory table for a TableDescription (desc stolen). */
static table *table_from_desc(uint32_t id, json_t *desc, json_t *ids)
{
    table *t = calloc(1, sizeof *t);
    t->index_ids = ids ? ids : json_object();
    t->nindexes = index_list_from_desc(desc, t->index_ids, &t->indexes);
    t->name = strdup(json_string_value(json_object_get(desc, "TableName")));
    t->id = id;
    t->desc = desc;
    const char *order = json_string_value(json_object_get(desc, QR_PARTITION_ORDER_FIELD));
    t->token_order = order && strcmp(order, QR_PARTITION_ORDER_TOKEN) == 0;
    t->owner = json_object_get(desc, QR_CQL_TABLE_FIELD) ? "CQL" : NULL;
    t->stats = calloc(1, sizeof *t->stats);
    t->stats[0] = (range_stats){.id = 0, .count = -1};
    t->nstats = 1;
    pthread_mutex_init(&t->stats_lock, NULL);
    pthread_mutex_init(&t->count_lock, NULL);
    json_t *ks = json_object_get(desc, "KeySchema"),
           *defs = json_object_get(desc, "AttributeDefinitions");
    size_t i, j;
    json_t *k, *d;
    json_array_foreach(ks, i, k)
    {
        const char *name = json_string_value(json_object_get(k, "AttributeName"));
        const char *role = json_string_value(json_object_get(k, "KeyType"));
        key_attr *ka = strcmp(role, "HASH") == 0 ? &t->pk : &t->sk;
        ka->name = strdup(name);
        json_array_foreach(defs, j, d)
        {
            if (strcmp(json_string_value(json_object_get(d, "AttributeName")), name) == 0)
                ka->type = json_string_value(json_object_get(d, "AttributeType"))[0];
        }
    }
    return t;
}

static table *table_from_record(const char *v, size_t len)
{
    json_t *rec = json_read(v, len, 0, NULL);
    if (rec == NULL) return NULL;
    json_t *desc = json_incref(json_object_get(rec, "Table"));
    json_t *ids = json_incref(json_object_get(rec, "IndexIds"));
    uint32_t id = (uint32_t)json_integer_value(json_object_get(rec, "Id"));
    json_decref(rec);
    if (!json_is_object(desc)) {
        json_decref(desc);
        json_decref(ids);
        return NULL;
    }
    return table_from_desc(id, desc, ids);
}

static void table_free(table *t)
{
    free(t->name);
    free(t->pk.name);
    free(t->sk.name);
    json_decref(t->desc);
    json_decref(t->index_ids);
    index_list_free(t->indexes, t->nindexes);
    capacity_forget(t);
    pthread_mutex_destroy(&t->stats_lock);
    pthread_mutex_destroy(&t->count_lock);
    free(t->stats);
    free(t);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp((*(table *const *)a)->name, (*(table *const *)b)->name);
}

static int catalog_load(qr_db *db)
{
    store_iter *it = store_iter_new(db->st, NULL, CATALOG_PREFIX, CATALOG_PREFIX_LEN, "\0D", 2);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t vl;
        const char *v = store_iter_value(it, &vl);
        table *t = table_from_record(v, vl);
        if (t == NULL) continue;
        t->db = db;
        capacity_follow(db, t);
        if (db->ntables == db->cap) {
            db->cap = db->cap ? db->cap * 2 : 16;
            db->tables = realloc(db->tables, db->cap * sizeof *db->tables);
        }
        t->refs = 1;
        db->tables[db->ntables++] = t;
        if (t->id >= db->next_table_id) db->next_table_id = t->id + 1;
    }
    qr_err e;
    err_init(&e);
    int rc = store_iter_status(it, &e);
    store_iter_free(it);
    if (db->ntables > 1) qsort(db->tables, db->ntables, sizeof *db->tables, name_cmp);
    return rc;
}

static int id_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Deletes the keys of prefix | be32 id for every id in [from, to), if there are any;
 * to may be 2^32, for every id from on. */
static void sweep_ids(qr_db *db, store_batch *b, const char *prefix, size_t plen, uint64_t from,
                      uint64_t to)
{
    char lo[8], hi[8];
    memcpy(lo, prefix, plen);
    memcpy(hi, prefix, plen);
    for (int k = 0; k < 4; k++) {
        lo[plen + k] = (char)(from >> (24 - 8 * k));
        hi[plen + k] = (char)(to >> (24 - 8 * k));
    }
    size_t hi_len = plen + 4;
    if (to > UINT32_MAX) { /* the first key past the prefix */
        hi[plen - 1] = (char)(hi[plen - 1] + 1);
        hi_len = plen;
    }
    store_iter *it = store_iter_new(db->st, NULL, lo, plen + 4, hi, hi_len);
    store_iter_first(it);
    if (store_iter_valid(it)) store_batch_delete_range(b, lo, plen + 4, hi, hi_len);
    store_iter_free(it);
}

/* Removes what writes still in flight when a table was deleted left under its id (they
 * can land after DeleteTable's range delete): every id the catalog does not know loses
 * its items and its point-in-time history. That includes the ids from the next one up:
 * the next id is recomputed from the catalog at each open, so the id of a deleted table
 * that had the highest one is given again, and the new table must not find the old
 * one's late items under it. */
static void sweep_dropped_tables(qr_db *db)
{
    uint32_t *ids = malloc((db->ntables ? db->ntables : 1) * sizeof *ids);
    size_t n = 0;
    for (size_t i = 0; i < db->ntables; i++)
        ids[n++] = db->tables[i]->id;
    qsort(ids, n, sizeof *ids, id_cmp);
    uint64_t from = 1;
    store_batch *b = store_batch_new();
    for (size_t i = 0; i <= n; i++) {
        uint64_t to = i < n ? ids[i] : (uint64_t)UINT32_MAX + 1; /* past the last table, every id */
        if (to > from) {
            sweep_ids(db, b, "t", 1, from, to);
            sweep_ids(db, b, QR_PITR_PREFIX, QR_PITR_PREFIX_LEN, from, to);
        }
        if (i < n) from = (uint64_t)ids[i] + 1;
    }
    qr_err e;
    err_init(&e);
    if (store_batch_count(b)) store_write(db->st, b, &e);
    store_batch_free(b);
    free(ids);
}

int engine_open(const char *dir, const qr_options *opts, qr_db **out, char **errmsg)
{
    qr_db *db = calloc(1, sizeof *db);
    if (db == NULL) return QR_ERR;
    db->pitr_seq = (uint64_t)(engine_now_seconds() * 1e6);
    if (opts) db->opts = *opts;
    db->clock_base = 1e6; /* where a manual capacity clock starts */
    store_config sc = {.no_sync = db->opts.no_sync,
                       .read_only = db->opts.read_only,
                       .in_memory = db->opts.in_memory,
                       .cache_bytes = (size_t)db->opts.cache_size};
    if (store_open(dir, &sc, &db->st, errmsg)) {
        free(db);
        return QR_ERR;
    }
    pthread_mutex_init(&db->catalog_lock, NULL);
    for (int i = 0; i < QR_LOCK_STRIPES; i++)
        pthread_mutex_init(&db->stripes[i], NULL);
    pthread_mutex_init(&db->txn_lock, NULL);
    pthread_rwlock_init(&db->schema_lock, NULL);
    pthread_mutex_init(&db->coll_lock, NULL);
    db->collections = json_object();
    db->next_table_id = 1;
    if (meta_open(db)) {
        if (errmsg) *errmsg = strdup("out of memory");
        qr_close(db);
        return QR_ERR;
    }
    if (catalog_load(db) || hotkeys_open(db) || stream_open(db) ||
        (!db->opts.read_only && (propagate_start(db) || expire_start(db)))) {
        if (errmsg) *errmsg = strdup("cannot read the table catalog");
        qr_close(db);
        return QR_ERR;
    }
    if (db->opts.read_only) { /* what the writer left is the writer's to finish */
        *out = db;
        return QR_OK;
    }
    sweep_dropped_tables(db);
    /* Resume the backfill of any global index a previous run left CREATING. */
    for (size_t i = 0; i < db->ntables; i++)
        for (size_t j = 0; j < db->tables[i]->nindexes; j++)
            if (db->tables[i]->indexes[j].creating)
                backfill_start(db, db->tables[i]->name, db->tables[i]->indexes[j].name);
    *out = db;
    return QR_OK;
}

void qr_defer_flushes(int on)
{
    store_defer_flushes(on);
}

int qr_flush_pending(void)
{
    return store_flush_owed_pending();
}

/* The message of this thread's last failed qr_flush_deferred. */
static __thread char tl_flush_error[QR_ERR_MSG_MAX];

int qr_flush_deferred(void)
{
    qr_err e;
    err_init(&e);
    if (store_flush_owed(&e) == 0) return QR_OK;
    snprintf(tl_flush_error, sizeof tl_flush_error, "%s", e.msg);
    return QR_ERR;
}

const char *qr_flush_error(void)
{
    return tl_flush_error;
}

int qr_wait_compactions(qr_db *db, int timeout_ms)
{
    return store_settle(db->st, timeout_ms) == 0 ? QR_OK : QR_ERR;
}

void qr_close(qr_db *db)
{
    qr_shutdown(db, NULL);
}

int qr_shutdown(qr_db *db, char **errmsg)
{
    if (errmsg) *errmsg = NULL;
    if (db == NULL) return QR_OK;
    /* This thread's staged writes first: they hold items and tables the threads stopped
     * below may wait for. (Other deferring threads must have flushed, see quarry.h.) */
    store_commit_staged(NULL);
    meta_jobs_wait(db); /* exports and imports finish first: they read and write items */
    /* Leave no index work behind for the next process when it can be done now. */
    if (db->prop_ready && db->opts.gsi_lag_ms == 0) propagate_drain(db, 10000);
    expire_stop(db);
    if (db->prop_ready) propagate_stop(db);
    for (size_t i = 0; i < db->ntables; i++)
        table_free(db->tables[i]);
    free(db->tables);
    stream_close(db);
    hotkeys_close(db);
    meta_close(db);
    int rc = store_close(db->st, errmsg) ? QR_ERR : QR_OK;
    pthread_mutex_destroy(&db->catalog_lock);
    for (int i = 0; i < QR_LOCK_STRIPES; i++)
        pthread_mutex_destroy(&db->stripes[i]);
    pthread_mutex_destroy(&db->txn_lock);
    pthread_rwlock_destroy(&db->schema_lock);
    pthread_mutex_destroy(&db->coll_lock);
    json_decref(db->collections);
    free(db->txn_keys);
    if (db->api_state && db->api_state_free) db->api_state_free(db->api_state);
    if (db->model_state && db->model_state_free) db->model_state_free(db->model_state);
    if (db->cql_state && db->cql_state_free) db->cql_state_free(db->cql_state);
    free(db);
    return rc;
}

void *engine_api_state(qr_db *db)
{
    return __atomic_load_n(&db->api_state, __ATOMIC_ACQUIRE);
}

void *engine_api_state_set(qr_db *db, void *state, void (*free_fn)(void *))
{
    void *none = NULL;
    if (__atomic_compare_exchange_n(&db->api_state, &none, state, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        db->api_state_free = free_fn; /* read by qr_close alone, after every call */
        return state;
    }
    return none; /* the state another thread installed first */
}

void *engine_cql_state(qr_db *db)
{
    return __atomic_load_n(&db->cql_state, __ATOMIC_ACQUIRE);
}

void *engine_cql_state_set(qr_db *db, void *state, void (*free_fn)(void *))
{
    void *none = NULL;
    if (__atomic_compare_exchange_n(&db->cql_state, &none, state, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        db->cql_state_free = free_fn; /* read by qr_close alone, after every call */
        return state;
    }
    return none;
}

void *engine_model_state(const qr_db *db)
{
    return __atomic_load_n(&db->model_state, __ATOMIC_ACQUIRE);
}

void engine_model_state_set(qr_db *db, void *state, void (*free_fn)(void *))
{
    db->model_state_free = free_fn;
    __atomic_store_n(&db->model_state, state, __ATOMIC_RELEASE);
}

int table_has_indexes(const table *t)
{
    return t->nindexes > 0;
}

/* ---- catalog ---- */

static size_t find_slot(qr_db *db, const char *name, int *found)
{
    size_t lo = 0, hi = db->ntables;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(db->tables[mid]->name, name);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

table *catalog_get(qr_db *db, const char *name)
{
    int found;
    pthread_rwlock_rdlock(&db->schema_lock);
    pthread_mutex_lock(&db->catalog_lock);
    size_t i = find_slot(db, name, &found);
    table *t = found ? db->tables[i] : NULL;
    if (t) __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&db->catalog_lock);
    if (t == NULL) pthread_rwlock_unlock(&db->schema_lock);
    return t;
}

table *catalog_get_by_id(qr_db *db, uint32_t id)
{
    table *t = NULL;
    pthread_rwlock_rdlock(&db->schema_lock);
    pthread_mutex_lock(&db->catalog_lock);
    for (size_t i = 0; i < db->ntables && t == NULL; i++)
        if (db->tables[i]->id == id) t = db->tables[i];
    if (t) __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&db->catalog_lock);
    if (t == NULL) pthread_rwlock_unlock(&db->schema_lock);
    return t;
}

static void release_after_commit(void *t, uint64_t unused, int written)
{
    (void)unused;
    (void)written;
    catalog_release(((table *)t)->db, t);
}

void catalog_release_after_writes(table *t)
{
    if (t) store_after_commit(release_after_commit, t, 0);
}

/* Without the catalog lock: a staged write lets go of its table after its commit, and
 * that commit can happen inside another write of the same thread, such as CreateTable's
 * or DeleteTable's, made with the catalog lock held. The last reference can only be let
 * go once the table has left the catalog, so nobody can take a new one meanwhile. */
void catalog_release(qr_db *db, table *t)
{
    if (t == NULL) return;
    if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) table_free(t);
    pthread_rwlock_unlock(&db->schema_lock);
}

qr_index *table_index_mut(const table *t, const char *name)
{
    for (size_t i = 0; i < t->nindexes; i++)
        if (strcmp(t->indexes[i].name, name) == 0) return &t->indexes[i];
    return NULL;
}

const qr_index *table_index(const table *t, const char *name)
{
    return table_index_mut(t, name);
}

const qr_index *table_index_by_id(const table *t, uint16_t id)
{
    for (size_t i = 0; i < t->nindexes; i++)
        if (t->indexes[i].id == id) return &t->indexes[i];
    return NULL;
}

const char *table_name(const table *t)
{
    return t->name;
}

const char *table_owner(const table *t)
{
    return t->owner;
}

int table_refuse_owned(const table *t, qr_err *err)
{
    if (t->owner == NULL) return 0;
    return err_set(err, QR_E_VALIDATION,
                   "Table %s is owned by %s: its rows and schema are changed through %s, not "
                   "through the DynamoDB API",
                   t->name, t->owner, t->owner);
}

uint32_t table_id(const table *t)
{
    return t->id;
}

const key_attr *table_pk(const table *t)
{
    return &t->pk;
}

const key_attr *table_sk(const table *t)
{
    return &t->sk;
}

const qr_index *table_indexes(const table *t)
{
    return t->indexes;
}

size_t table_index_count(const table *t)
{
    return t->nindexes;
}

json_t *table_description(table *t)
{
    pthread_mutex_lock(&t->db->catalog_lock);
    json_t *copy = json_deep_copy(t->desc);
    pthread_mutex_unlock(&t->db->catalog_lock);
    return copy;
}

json_t *table_desc_member(table *t, const char *member)
{
    pthread_mutex_lock(&t->db->catalog_lock);
    json_t *copy = json_deep_copy(json_object_get(t->desc, member));
    pthread_mutex_unlock(&t->db->catalog_lock);
    return copy;
}

static void catalog_record_key(buf *k, const char *name)
{
    buf_append(k, CATALOG_PREFIX, CATALOG_PREFIX_LEN);
    buf_puts(k, name);
}

static int persist(qr_db *db, const char *name, uint32_t id, json_t *desc, json_t *ids, qr_err *err)
{
    json_t *rec = json_pack("{s:I,s:O,s:O}", "Id", (json_int_t)id, "Table", desc, "IndexIds", ids);
    char *text = json_dumps(rec, JSON_COMPACT);
    json_decref(rec);
    buf k;
    buf_init(&k, 0);
    catalog_record_key(&k, name);
    int rc = store_put(db->st, k.data, k.len, text, strlen(text), err);
    buf_free(&k);
    free(text);
    return rc;
}

int catalog_create(qr_db *db, json_t *desc, table **out, qr_err *err)
{
    const char *name = json_string_value(json_object_get(desc, "TableName"));
    int found;
    pthread_rwlock_rdlock(&db->schema_lock); /* held with the reference handed back */
    pthread_mutex_lock(&db->catalog_lock);
    size_t slot = find_slot(db, name, &found);
    if (found) {
        pthread_mutex_unlock(&db->catalog_lock);
        pthread_rwlock_unlock(&db->schema_lock);
        err_set(err, QR_E_IN_USE, QR_MSG_TABLE_EXISTS, name); /* name lives in desc */
        json_decref(desc);
        return -1;
    }
    uint32_t id = db->next_table_id++;
    json_t *ids = json_object();
    const char *lists[2] = {"LocalSecondaryIndexes", "GlobalSecondaryIndexes"};
    json_int_t next = 1;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *def;
        json_array_foreach(json_object_get(desc, lists[l]), i, def) json_object_set_new(
            ids, json_string_value(json_object_get(def, "IndexName")), json_integer(next++));
    }
    if (persist(db, name, id, desc, ids, err)) {
        pthread_mutex_unlock(&db->catalog_lock);
        pthread_rwlock_unlock(&db->schema_lock);
        json_decref(desc);
        json_decref(ids);
        return -1;
    }
    qr_err stream_err; /* a stream left unrecorded is recorded at the next open */
    err_init(&stream_err);
    stream_follow(db, name, desc, &stream_err);
    table *t = table_from_desc(id, desc, ids);
    t->db = db;
    capacity_follow(db, t);
    /* A new table and its indexes are empty: every figure is known. */
    t->stats = realloc(t->stats, (1 + t->nindexes) * sizeof *t->stats);
    t->stats[0].count = 0;
    for (size_t i = 0; i < t->nindexes; i++)
        t->stats[1 + i] = (range_stats){.id = t->indexes[i].id};
    t->nstats = 1 + t->nindexes;
    if (db->ntables == db->cap) {
        db->cap = db->cap ? db->cap * 2 : 16;
        db->tables = realloc(db->tables, db->cap * sizeof *db->tables);
    }
    memmove(db->tables + slot + 1, db->tables + slot, (db->ntables - slot) * sizeof *db->tables);
    db->tables[slot] = t;
    db->ntables++;
    t->refs = 2; /* the catalog's and the caller's */
    pthread_mutex_unlock(&db->catalog_lock);
    expire_need(db); /* a table may have items to expire, stream records to trim */
    *out = t;
    return 0;
}

/* Statistics for a changed index list (schema write lock held): an index new to t has
 * a fresh id, so nothing can be stored under it yet and no writer has seen it: it is
 * empty, its counts known. A deleted index's counts are dropped. */
static void stats_follow_schema(table *t, const qr_index *old, size_t nold)
{
    for (size_t i = 0; i < t->nindexes; i++) {
        int known = 0;
        for (size_t j = 0; j < nold; j++)
            known |= old[j].id == t->indexes[i].id;
        if (!known) index_stats_created(t, t->indexes[i].id);
    }
    for (size_t j = 0; j < nold; j++)
        if (table_index_by_id(t, old[j].id) == NULL) index_stats_forget(t, old[j].id);
}

int catalog_change_schema(qr_db *db, const char *name, schema_change_fn change, void *arg,
                          qr_err *err)
{
    int found, rc = -1;
    /* A thread waiting for an item's lock, which this one may hold for a staged write,
     * can hold the schema lock for reading (see keys_lock). */
    if (store_commit_staged(err)) return -1;
    pthread_rwlock_wrlock(&db->schema_lock);
    pthread_mutex_lock(&db->catalog_lock);
    size_t slot = find_slot(db, name, &found);
    if (!found) {
        err_set(err, QR_E_NOT_FOUND, QR_MSG_TABLE_NOT_FOUND, name);
        goto out;
    }
    table *t = db->tables[slot];
    json_t *desc = json_deep_copy(t->desc), *ids = json_deep_copy(t->index_ids);
    if (change(desc, ids, arg, err) || persist(db, t->name, t->id, desc, ids, err)) {
        json_decref(desc);
        json_decref(ids);
        goto out;
    }
    qr_index *old = t->indexes;
    size_t nold = t->nindexes;
    json_decref(t->desc);
    json_decref(t->index_ids);
    t->desc = desc;
    t->index_ids = ids;
    t->nindexes = index_list_from_desc(desc, ids, &t->indexes);
    stats_follow_schema(t, old, nold);
    capacity_follow(db, t);
    qr_err stream_err; /* a stream left unrecorded is recorded at the next open */
    err_init(&stream_err);
    stream_follow(db, t->name, desc, &stream_err);
    index_list_free(old, nold);
    rc = 0;
out:
    pthread_mutex_unlock(&db->catalog_lock);
    pthread_rwlock_unlock(&db->schema_lock);
    return rc;
}

int catalog_delete(qr_db *db, table *t, qr_err *err)
{
    pthread_mutex_lock(&db->catalog_lock);
    int found;
    size_t slot = find_slot(db, t->name, &found);
    if (!found || db->tables[slot] != t) {
        pthread_mutex_unlock(&db->catalog_lock);
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_TABLE_NOT_FOUND, t->name);
    }
    buf k, lo, hi;
    buf_init(&k, 0);
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    catalog_record_key(&k, t->name);
    buf_putc(&lo, 't');
    buf_put_be32(&lo, t->id);
    buf_putc(&hi, 't');
    buf_put_be32(&hi, t->id + 1);
    store_batch *b = store_batch_new();
    store_batch_delete(b, k.data, k.len);
    store_batch_delete_range(b, lo.data, lo.len, hi.data, hi.len);
    pitr_stage_drop(b, t->id);
    int rc = store_write(db->st, b, err);
    store_batch_free(b);
    /* The range deletion hides the items at once; the compaction gives their space back
     * and spares reads the deletion. */
    if (rc == 0) store_compact_range(db->st, lo.data, lo.len, hi.data, hi.len);
    buf_free(&k);
    buf_free(&lo);
    buf_free(&hi);
    if (rc == 0) {
        memmove(db->tables + slot, db->tables + slot + 1,
                (db->ntables - slot - 1) * sizeof *db->tables);
        db->ntables--;
        t->dropped = 1;
        stream_table_dropped(db, t->name);
        __atomic_sub_fetch(&t->refs, 1,
                           __ATOMIC_ACQ_REL); /* the catalog's; the caller still holds one */
        collection_forget_all(db);
    }
    pthread_mutex_unlock(&db->catalog_lock);
    if (rc == 0) hotkeys_forget(db, t->id, -1);
    return rc;
}

/* Under gsi_lock: the propagation worker checks that an index exists and writes its
 * entries under it, so work it found for the index before the index left the catalog
 * is in the store before the range is deleted, and none can follow. (A backfill holds
 * its table, so the schema change waited for its last chunk.) */
int catalog_drop_index_entries(qr_db *db, const table *t, uint16_t id, qr_err *err)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    key_table_prefix(&lo, t, id);
    key_table_prefix(&hi, t, (uint16_t)(id + 1));
    pthread_mutex_lock(&db->gsi_lock);
    int rc = store_delete_range(db->st, lo.data, lo.len, hi.data, hi.len, err);
    pthread_mutex_unlock(&db->gsi_lock);
    if (rc == 0) store_compact_range(db->st, lo.data, lo.len, hi.data, hi.len);
    buf_free(&lo);
    buf_free(&hi);
    if (rc == 0) hotkeys_forget(db, t->id, id);
    return rc;
}

json_t *catalog_names(qr_db *db)
{
    json_t *a = json_array();
    pthread_mutex_lock(&db->catalog_lock);
    for (size_t i = 0; i < db->ntables; i++)
        json_array_append_new(a, json_string(db->tables[i]->name));
    pthread_mutex_unlock(&db->catalog_lock);
    return a;
}

/* ---- keys ---- */

void key_table_prefix(buf *out, const table *t, uint16_t index_id)
{
    buf_putc(out, 't');
    buf_put_be32(out, t->id);
    buf_put_be16(out, index_id);
}

/* Room for one value of Cassandra's largest partition key, 65535 bytes, with every byte
 * escaped (keycodec writes a zero byte as two), and its end mark. */
#define KEY_ENCODED_MAX (2 * 65535 + 2)

/* The placement bytes of a token: its sign bit flipped, so that unsigned byte order is
 * the tokens' order. */
static uint64_t token_placement(int64_t token)
{
    return (uint64_t)token ^ ((uint64_t)1 << 63);
}

int key_partition_tuple(buf *out, const table *t, uint16_t index_id, const json_t *const *values,
                        int n, qr_err *err)
{
    /* The encoded values go straight after the prefix and a place for their hash, which
     * is filled in once they are all there; they may take at most KEY_ENCODED_MAX bytes. */
    size_t base = out->len;
    key_table_prefix(out, t, index_id);
    int rc = buf_put_be64(out, 0);
    size_t start = out->len, max = out->max;
    if (max - start > KEY_ENCODED_MAX) out->max = start + KEY_ENCODED_MAX;
    for (int i = 0; rc == 0 && i < n; i++)
        rc = keycodec_append(out, values[i], 0, err);
    out->max = max;
    if (rc) {
        out->len = base;
        if (out->data) out->data[base] = '\0';
        return -1;
    }
    uint64_t h;
    if (index_id == 0 && t->token_order) {
        unsigned char *raw = NULL;
        size_t rl = 0;
        if (value_binary(values[0], &raw, &rl) != 0) {
            out->len = base;
            out->data[base] = '\0';
            return err_validation(err, "The partition key of %s must be binary", t->name);
        }
        h = token_placement(murmur3_token(raw, rl));
        free(raw);
    } else {
        h = keycodec_hash(out->data + start, out->len - start);
    }
    for (int i = 0; i < 8; i++)
        out->data[start - 8 + i] = (char)(h >> (56 - 8 * i));
    return 0;
}

int key_append_token(buf *out, const table *t, const json_t *pk_value, qr_err *err)
{
    unsigned char *raw = NULL;
    size_t rl = 0;
    if (value_binary(pk_value, &raw, &rl) != 0)
        return err_validation(err, "The partition key of %s must be binary", t->name);
    int rc = buf_put_be64(out, token_placement(murmur3_token(raw, rl)));
    free(raw);
    return rc ? err_set(err, QR_E_INTERNAL, "out of memory") : 0;
}

int table_token_order(const table *t)
{
    return t->token_order;
}

void key_token_bound(buf *out, const table *t, int64_t token)
{
    key_table_prefix(out, t, 0);
    buf_put_be64(out, token_placement(token));
}

int key_partition(buf *out, const table *t, uint16_t index_id, const json_t *pk_value, qr_err *err)
{
    return key_partition_tuple(out, t, index_id, &pk_value, 1, err);
}

int key_item(buf *out, const table *t, const json_t *item, qr_err *err)
{
    if (key_partition(out, t, 0, json_object_get(item, t->pk.name), err)) return -1;
    if (t->sk.name && keycodec_append(out, json_object_get(item, t->sk.name), 0, err)) return -1;
    return 0;
}

size_t key_partition_len(const table *t, const char *key, size_t len)
{
    if (len < 15 || key[0] != 't') return 0;
    uint16_t id = (uint16_t)((unsigned char)key[5] << 8 | (unsigned char)key[6]);
    const qr_index *ix = id ? table_index_by_id(t, id) : NULL;
    if (id && ix == NULL) return 0;
    int n = ix ? ix->npk : 1;
    size_t at = 15;
    for (int i = 0; i < n; i++) {
        json_t *av = NULL;
        char type = ix ? ix->pk_type[i] : t->pk.type;
        size_t used = keycodec_decode((const uint8_t *)key + at, len - at, type, 0, &av);
        json_decref(av);
        if (used == 0) return 0;
        at += used;
    }
    return at;
}

double engine_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

json_t *key_of_item(const table *t, const json_t *item)
{
    json_t *k = json_object();
    json_object_set(k, t->pk.name, json_object_get(item, t->pk.name));
    if (t->sk.name) json_object_set(k, t->sk.name, json_object_get(item, t->sk.name));
    return k;
}

/* Checks one key attribute value of an item or Key map. */
static int check_key_value(const key_attr *ka, json_t *v, int is_sort, int in_item, qr_err *err)
{
    if (v == NULL) {
        if (in_item)
            return err_validation(err, QR_MSG_INVALID_PARAMETER "Missing the key %s in the item",
                                  ka->name);
        return err_validation(err, QR_MSG_KEY_SCHEMA);
    }
    if (value_validate(v, 1, ka->name, err)) return -1;
    qr_type t = value_type(v);
    char actual = t == QR_T_S ? 'S' : t == QR_T_N ? 'N' : t == QR_T_B ? 'B' : '?';
    if (actual != ka->type) {
        if (in_item)
            return err_validation(err,
                                  QR_MSG_INVALID_PARAMETER "Type mismatch for "
                                                           "key %s expected: %c actual: %s",
                                  ka->name, ka->type, value_type_name(t));
        return err_validation(err, QR_MSG_KEY_SCHEMA);
    }
    size_t size = value_size(v);
    if (size == 0 && actual != 'N')
        return err_validation(err, QR_MSG_EMPTY_KEY, actual == 'S' ? "string" : "binary", ka->name);
    if (!is_sort && size > QR_MAX_PK_SIZE)
        return err_validation(err, QR_MSG_INVALID_PARAMETER
                              "Size of hashkey has "
                              "exceeded the maximum size limit of2048 bytes");
    if (is_sort && size > QR_MAX_SK_SIZE)
        return err_validation(err, QR_MSG_INVALID_PARAMETER
                              "Aggregated size of "
                              "all range keys has exceeded the size limit of 1024 bytes");
    return 0;
}

int key_check_key(const table *t, json_t *key, qr_err *err)
{
    if (!json_is_object(key)) return err_validation(err, QR_MSG_KEY_SCHEMA);
    size_t want = t->sk.name ? 2 : 1;
    if (json_object_size(key) != want) return err_validation(err, QR_MSG_KEY_SCHEMA);
    if (check_key_value(&t->pk, json_object_get(key, t->pk.name), 0, 0, err)) return -1;
    if (t->sk.name && check_key_value(&t->sk, json_object_get(key, t->sk.name), 1, 0, err))
        return -1;
    return 0;
}

int key_check_item(const table *t, json_t *item, qr_err *err)
{
    if (check_key_value(&t->pk, json_object_get(item, t->pk.name), 0, 1, err)) return -1;
    if (t->sk.name && check_key_value(&t->sk, json_object_get(item, t->sk.name), 1, 1, err))
        return -1;
    return 0;
}

/* ---- items ---- */

int item_encode(const table *t, const json_t *item, buf *out)
{
    return item_encode_sized(item, item_size(item), item_page_size(item, t->sk.name), out);
}

int item_encode_sized(const json_t *item, size_t size, size_t page, buf *out)
{
    size_t start = out->len;
    if (buf_putc(out, ITEM_FORMAT_PAGED) || buf_put_be32(out, (uint32_t)size) ||
        buf_put_be32(out, (uint32_t)page) || !(json_is_object(item) || json_is_array(item)) ||
        value_dump(out, item)) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return -1;
    }
    return 0;
}

int item_encode_open(buf *out)
{
    return buf_putc(out, ITEM_FORMAT_PAGED) || buf_put_be32(out, 0) || buf_put_be32(out, 0);
}

void item_encode_close(buf *out, size_t start, size_t size, size_t page)
{
    for (int i = 0; i < 4; i++) {
        out->data[start + 1 + i] = (char)(size >> (24 - 8 * i));
        out->data[start + 5 + i] = (char)(page >> (24 - 8 * i));
    }
}

/* The header's length for a stored form's format byte, 0 if it is none. */
static size_t header_len(const char *v, size_t len)
{
    size_t n = len == 0                    ? 0
               : v[0] == ITEM_FORMAT_PAGED ? ITEM_HEADER_LEN
               : v[0] == ITEM_FORMAT_JSON  ? ITEM_HEADER_JSON_LEN
                                           : 0;
    return len < n ? 0 : n;
}

int item_stored(const char *v, size_t len, const char **json, size_t *json_len, size_t *size)
{
    size_t h = header_len(v, len);
    if (h == 0) return -1;
    *size = be32_read(v + 1);
    *json = v + h;
    *json_len = len - h;
    return 0;
}

size_t item_stored_page(const char *v, size_t len)
{
    size_t h = header_len(v, len);
    return h == ITEM_HEADER_LEN ? be32_read(v + 5) : h ? be32_read(v + 1) : 0;
}

json_t *item_decode(const char *v, size_t len)
{
    const char *json;
    size_t jlen, size;
    if (item_stored(v, len, &json, &jlen, &size)) return NULL;
    return json_read(json, jlen, JSON_ALLOW_NUL, NULL);
}

/* Checks what a read of an item found. */
static int item_found(int rc, char **val, size_t len, qr_err *err)
{
    if (rc == 1 && len < ITEM_HEADER_JSON_LEN) {
        free(*val);
        *val = NULL;
        return err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    }
    return rc;
}

int item_read_raw(qr_db *db, const store_snapshot *snap, const buf *key, char **val, size_t *len,
                  qr_err *err)
{
    int rc = store_get(db->st, snap, key->data, key->len, val, len, err);
    return item_found(rc, val, *len, err);
}

int item_read_raw_before_write(qr_db *db, const buf *key, char **val, size_t *len, qr_err *err)
{
    int rc = store_get_before_write(db->st, key->data, key->len, val, len, err);
    return item_found(rc, val, *len, err);
}

/* Parses the stored item v (which it frees) read with rc. */
static int item_parsed(int rc, char *v, size_t vl, json_t **item, qr_err *err)
{
    if (rc <= 0) return rc;
    *item = item_decode(v, vl);
    free(v);
    if (*item == NULL) return err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    return 1;
}

int item_read(qr_db *db, const store_snapshot *snap, const buf *key, json_t **item, qr_err *err)
{
    char *v;
    size_t vl;
    int rc = item_read_raw(db, snap, key, &v, &vl, err);
    return item_parsed(rc, v, vl, item, err);
}

pthread_mutex_t *item_lock_for(qr_db *db, const buf *key)
{
    return &db->stripes[keycodec_hash(key->data, key->len) % QR_LOCK_STRIPES];
}

static int txn_holds(qr_db *db, const buf *key)
{
    int held = 0;
    pthread_mutex_lock(&db->txn_lock);
    for (size_t i = 0; i < db->ntxn_keys && !held; i++)
        held = db->txn_keys[i].len == key->len &&
               memcmp(db->txn_keys[i].data, key->data, key->len) == 0;
    pthread_mutex_unlock(&db->txn_lock);
    return held;
}

int item_lock(qr_db *db, const buf *key, pthread_mutex_t **out, qr_err *err)
{
    pthread_mutex_t *m = item_lock_for(db, key);
    if (pthread_mutex_trylock(m) != 0) {
        /* This thread may hold it itself, for a write it staged (store_write_staged); and
         * it waits for no lock while holding any for staged writes. */
        if (store_staged_pending()) {
            if (store_commit_staged(err)) return -1;
            if (pthread_mutex_trylock(m) == 0) goto locked;
        }
        if (txn_holds(db, key))
            return err_set(err, QR_E_TXN_CONFLICT, "Transaction is ongoing for the item");
        pthread_mutex_lock(m);
    }
locked:
    *out = m;
    return 0;
}

static int stripe_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct stripes of keys, ascending; returns how many (at most n). */
static size_t stripes_of(qr_db *db, const buf *keys, size_t n, size_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (size_t)(item_lock_for(db, &keys[i]) - db->stripes);
    qsort(out, n, sizeof *out, stripe_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || out[i] != out[m - 1]) out[m++] = out[i];
    return m;
}

void keys_lock(qr_db *db, const buf *keys, size_t n)
{
    /* Not while holding locks for staged writes (see item_lock); a failed commit is
     * reported when the thread's turn ends. */
    store_commit_staged(NULL);
    size_t *stripes = malloc((n ? n : 1) * sizeof *stripes);
    size_t m = stripes_of(db, keys, n, stripes);
    for (size_t i = 0; i < m; i++)
        pthread_mutex_lock(&db->stripes[stripes[i]]);
    free(stripes);
}

void keys_unlock(qr_db *db, const buf *keys, size_t n)
{
    size_t *stripes = malloc((n ? n : 1) * sizeof *stripes);
    size_t m = stripes_of(db, keys, n, stripes);
    for (size_t i = m; i > 0; i--)
        pthread_mutex_unlock(&db->stripes[stripes[i - 1]]);
    free(stripes);
}

void txn_lock_keys(qr_db *db, const buf *keys, size_t n)
{
    pthread_mutex_lock(&db->txn_lock);
    if (db->ntxn_keys + n > db->txn_cap) {
        db->txn_cap = (db->ntxn_keys + n) * 2;
        db->txn_keys = realloc(db->txn_keys, db->txn_cap * sizeof *db->txn_keys);
    }
    for (size_t i = 0; i < n; i++)
        db->txn_keys[db->ntxn_keys++] = keys[i]; /* shallow: the caller owns the bytes */
    pthread_mutex_unlock(&db->txn_lock);
    keys_lock(db, keys, n);
}

void txn_unlock_keys(qr_db *db, const buf *keys, size_t n)
{
    keys_unlock(db, keys, n);
    pthread_mutex_lock(&db->txn_lock);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < db->ntxn_keys; j++)
            if (db->txn_keys[j].data == keys[i].data) {
                db->txn_keys[j] = db->txn_keys[--db->ntxn_keys];
                break;
            }
    pthread_mutex_unlock(&db->txn_lock);
}

/* ---- statistics ---- */

/* The index changes staged on this thread for the batch it is building (see engine.h).
 * The most one batch can change: 100 transaction items, each in five local indexes. */
#define STAGED_MAX 512
typedef struct staged {
    table *t;
    uint16_t id;
    int64_t items, bytes;
} staged;
/* What a write's staging noted, but its index changes themselves. */
typedef struct stats_head {
    qr_db *db;
    uint64_t epoch;
    int64_t logged;
    uint64_t lowest_seq; /* of the log records staged (when logged > 0) */
    size_t n;            /* index changes */
} stats_head;
/* Most writes change a handful of figures (the table's and its local indexes'), which
 * the thread's inline array holds; a thread whose batch needs more gets a STAGED_MAX
 * array, kept until the thread ends. (A thread's zero-filled TLS is written when the
 * thread starts, so a STAGED_MAX array inline would cost every thread 16 KB.) */
#define STAGED_INLINE 16
static _Thread_local struct {
    stats_head h;
    staged *s; /* inline, or the thread's large array; NULL until the first use */
    size_t cap;
    staged inline_s[STAGED_INLINE];
} notes;

static pthread_key_t large_notes_key;
static int large_notes_key_ok;

static void make_large_notes_key(void)
{
    large_notes_key_ok = pthread_key_create(&large_notes_key, free) == 0;
}

/* Room for one more figure in notes.s; -1 if STAGED_MAX are there, or if memory for
 * more runs out. */
static int notes_room(void)
{
    if (notes.s == NULL) {
        notes.s = notes.inline_s;
        notes.cap = STAGED_INLINE;
    }
    if (notes.h.n < notes.cap) return 0;
    if (notes.cap == STAGED_MAX) return -1;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_large_notes_key);
    staged *large = large_notes_key_ok ? malloc(STAGED_MAX * sizeof *large) : NULL;
    if (large == NULL || pthread_setspecific(large_notes_key, large) != 0) {
        free(large);
        return -1;
    }
    memcpy(large, notes.s, notes.h.n * sizeof *large);
    notes.s = large;
    notes.cap = STAGED_MAX;
    return 0;
}

static range_stats *stats_find(table *t, uint16_t id)
{
    for (size_t i = 0; i < t->nstats; i++)
        if (t->stats[i].id == id) return &t->stats[i];
    return NULL;
}

/* Called with stats_lock held; epoch is the stats epoch the write was staged at. */
static void stats_add_locked(range_stats *s, int64_t items, int64_t bytes, uint64_t epoch)
{
    if (s == NULL || epoch < s->since) return;
    if (s->count >= 0) {
        s->count += items;
        s->bytes += bytes;
        if (s->count < 0 || s->bytes < 0) s->count = -1; /* drifted: count again */
    } else if (s->counting) {
        s->acc_count += items;
        s->acc_bytes += bytes;
    }
}

static void stats_adjust(table *t, uint16_t id, int64_t items, int64_t bytes, uint64_t epoch)
{
    if (items == 0 && bytes == 0) return;
    pthread_mutex_lock(&t->stats_lock);
    stats_add_locked(stats_find(t, id), items, bytes, epoch);
    pthread_mutex_unlock(&t->stats_lock);
}

void index_stats_adjust(table *t, uint16_t id, int64_t items, int64_t bytes)
{
    stats_adjust(t, id, items, bytes, UINT64_MAX); /* gsi_lock orders these with counts */
}

void index_stats_created(table *t, uint16_t id)
{
    pthread_mutex_lock(&t->stats_lock);
    range_stats *s = stats_find(t, id);
    if (s == NULL) {
        t->stats = realloc(t->stats, (t->nstats + 1) * sizeof *t->stats);
        s = &t->stats[t->nstats++];
    }
    *s = (range_stats){.id = id};
    pthread_mutex_unlock(&t->stats_lock);
}

void index_stats_forget(table *t, uint16_t id)
{
    pthread_mutex_lock(&t->stats_lock);
    range_stats *s = stats_find(t, id);
    if (s) *s = t->stats[--t->nstats];
    pthread_mutex_unlock(&t->stats_lock);
}

void stats_stage_begin(qr_db *db, store_batch *b)
{
    if (store_batch_count(b) == 0) {
        notes.h.n = 0;
        notes.h.logged = 0;
        notes.h.epoch = __atomic_load_n(&db->stats_epoch, __ATOMIC_RELAXED);
    }
}

int stats_stage_index(table *t, uint16_t id, int64_t items, int64_t bytes, qr_err *err)
{
    if (items == 0 && bytes == 0) return 0;
    for (size_t i = 0; i < notes.h.n; i++)
        if (notes.s[i].t == t && notes.s[i].id == id) {
            notes.s[i].items += items;
            notes.s[i].bytes += bytes;
            return 0;
        }
    if (notes_room())
        return notes.cap == STAGED_MAX
                   ? err_set(err, QR_E_INTERNAL, "one write changes more than %d index figures",
                             STAGED_MAX)
                   : err_set(err, QR_E_INTERNAL, "out of memory");
    notes.s[notes.h.n++] = (staged){t, id, items, bytes};
    return 0;
}

void stats_stage_logged(qr_db *db, uint64_t seq)
{
    notes.h.db = db;
    if (notes.h.logged == 0 || seq < notes.h.lowest_seq) notes.h.lowest_seq = seq;
    notes.h.logged++;
}

/* Applies one write's figures: the table's, and what its staging noted. */
static void stats_apply(table *t, int64_t items, int64_t bytes, const stats_head *h,
                        const staged *s)
{
    stats_adjust(t, 0, items, bytes, h->epoch);
    for (size_t i = 0; i < h->n; i++)
        stats_adjust(s[i].t, s[i].id, s[i].items, s[i].bytes, h->epoch);
    if (h->logged) {
        __atomic_add_fetch(&h->db->log_pending, h->logged, __ATOMIC_RELAXED);
        propagate_committed(h->db, h->lowest_seq);
    }
}

void table_stats_adjust(table *t, int64_t items, int64_t bytes)
{
    stats_apply(t, items, bytes, &notes.h, notes.s);
    notes.h.n = 0;
    notes.h.logged = 0;
}

/* A staged write's figures, kept until its commit. */
typedef struct late_stats {
    table *t;
    int64_t items, bytes;
    stats_head h;
    staged s[];
} late_stats;

static void stats_apply_late(void *a, uint64_t unused, int written)
{
    (void)unused;
    late_stats *l = a;
    if (written) stats_apply(l->t, l->items, l->bytes, &l->h, l->s);
    free(l);
}

void table_stats_adjust_after_commit(table *t, int64_t items, int64_t bytes)
{
    if (!store_staged_pending()) {
        table_stats_adjust(t, items, bytes);
        return;
    }
    late_stats *l = malloc(sizeof *l + notes.h.n * sizeof *l->s);
    if (l == NULL) { /* out of memory: commit now, and count now if that worked */
        if (store_commit_staged(NULL) == 0) {
            table_stats_adjust(t, items, bytes);
        } else {
            notes.h.n = 0;
            notes.h.logged = 0;
        }
        return;
    }
    *l = (late_stats){.t = t, .items = items, .bytes = bytes, .h = notes.h};
    if (notes.h.n) memcpy(l->s, notes.s, notes.h.n * sizeof *l->s);
    notes.h.n = 0;
    notes.h.logged = 0;
    store_after_commit(stats_apply_late, l, 0);
}

/* Counts the stored items (or index entries) of t's index_id in snap, and their sizes. */
static void count_stored(qr_db *db, const table *t, uint16_t index_id, const store_snapshot *snap,
                         int64_t *n, int64_t *bytes)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    key_table_prefix(&lo, t, index_id);
    key_table_prefix(&hi, t, (uint16_t)(index_id + 1));
    *n = *bytes = 0;
    store_iter *it = store_iter_new(db->st, snap, lo.data, lo.len, hi.data, hi.len);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t vl, jlen, size;
        const char *v = store_iter_value(it, &vl), *json;
        if (item_stored(v, vl, &json, &jlen, &size) == 0) {
            (*n)++;
            *bytes += (int64_t)size;
        }
    }
    store_iter_free(it);
    buf_free(&lo);
    buf_free(&hi);
}

/* Makes the counts of t's id known, counting them if they are not. The snapshot is
 * taken where it splits writers cleanly. Base items and local index entries are staged
 * and written under their item's stripe lock: with every stripe held, the epoch is
 * bumped and the snapshot taken, so a write staged at an older epoch is in the
 * snapshot (its adjustment is ignored, however late it comes) and one staged at the new
 * epoch is not (it adjusts acc_*, which the count then adds). Global index entries are
 * read, written and adjusted under gsi_lock, so holding it while the snapshot is taken
 * leaves no writer half done. */
static void stats_count(qr_db *db, table *t, uint16_t id, int global)
{
    store_commit_staged(NULL); /* it takes every stripe (see keys_lock) */
    pthread_mutex_lock(&t->count_lock);
    pthread_mutex_lock(&t->stats_lock);
    range_stats *s = stats_find(t, id);
    int known = s && s->count >= 0;
    pthread_mutex_unlock(&t->stats_lock);
    if (!known) {
        uint64_t since = 0;
        if (global) {
            pthread_mutex_lock(&db->gsi_lock);
        } else {
            for (int i = 0; i < QR_LOCK_STRIPES; i++)
                pthread_mutex_lock(&db->stripes[i]);
            since = __atomic_add_fetch(&db->stats_epoch, 1, __ATOMIC_RELAXED);
        }
        const store_snapshot *snap = store_snapshot_new(db->st);
        pthread_mutex_lock(&t->stats_lock);
        if ((s = stats_find(t, id)) == NULL) {
            t->stats = realloc(t->stats, (t->nstats + 1) * sizeof *t->stats);
            s = &t->stats[t->nstats++];
        }
        *s = (range_stats){.id = id, .count = -1, .counting = 1, .since = since};
        pthread_mutex_unlock(&t->stats_lock);
        if (global)
            pthread_mutex_unlock(&db->gsi_lock);
        else
            for (int i = QR_LOCK_STRIPES; i > 0; i--)
                pthread_mutex_unlock(&db->stripes[i - 1]);
        int64_t n, bytes;
        count_stored(db, t, id, snap, &n, &bytes);
        store_snapshot_free(db->st, snap);
        pthread_mutex_lock(&t->stats_lock);
        if ((s = stats_find(t, id)) != NULL && s->counting) {
            s->count = n + s->acc_count;
            s->bytes = bytes + s->acc_bytes;
            s->counting = 0;
        }
        pthread_mutex_unlock(&t->stats_lock);
    }
    pthread_mutex_unlock(&t->count_lock);
}

/* The counts of t's id (0 if unknown, which stats_count has just ruled out). */
static void stats_read(table *t, uint16_t id, int64_t *n, int64_t *bytes)
{
    pthread_mutex_lock(&t->stats_lock);
    range_stats *s = stats_find(t, id);
    *n = s && s->count >= 0 ? s->count : 0;
    *bytes = s && s->count >= 0 ? s->bytes : 0;
    pthread_mutex_unlock(&t->stats_lock);
}

int stats_peek(table *t, uint16_t id, int64_t *items, int64_t *bytes)
{
    pthread_mutex_lock(&t->stats_lock);
    range_stats *s = stats_find(t, id);
    int known = s && s->count >= 0;
    *items = known ? s->count : 0;
    *bytes = known ? s->bytes : 0;
    pthread_mutex_unlock(&t->stats_lock);
    return known;
}

int64_t table_item_count(qr_db *db, table *t)
{
    int64_t n, bytes;
    stats_count(db, t, 0, 0);
    stats_read(t, 0, &n, &bytes);
    return n;
}

const char *engine_s3_root(const qr_db *db)
{
    return db->opts.s3_root;
}

int engine_transient_ms(const qr_db *db)
{
    return db->opts.transient_ms;
}

void engine_log(qr_db *db, const char *fmt, ...)
{
    if (db->opts.log == NULL) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    db->opts.log(db->opts.log_arg, line, 0);
}

void engine_log_progress(qr_db *db, const char *line, int last)
{
    if (db->opts.log) db->opts.log(db->opts.log_arg, line, last);
}

void engine_progress_sink(void *db, const char *line, int last)
{
    engine_log_progress(db, line, last);
}

void table_stats_fill(qr_db *db, table *t, json_t *desc)
{
    int64_t n, bytes;
    stats_count(db, t, 0, 0);
    stats_read(t, 0, &n, &bytes);
    json_object_set_new(desc, "ItemCount", json_integer(n));
    json_object_set_new(desc, "TableSizeBytes", json_integer(bytes));
}

void index_stats_fill(qr_db *db, table *t, json_t *desc)
{
    const char *lists[2] = {"LocalSecondaryIndexes", "GlobalSecondaryIndexes"};
    int any_global = 0;
    for (int g = 0; g < 2; g++) {
        size_t i;
        json_t *d;
        json_array_foreach(json_object_get(desc, lists[g]), i, d)
        {
            qr_index *ix = table_index_mut(t, json_string_value(json_object_get(d, "IndexName")));
            if (ix == NULL) continue;
            any_global |= g;
            int64_t n, bytes;
            stats_count(db, t, ix->id, ix->global);
            stats_read(t, ix->id, &n, &bytes);
            json_object_set_new(d, "ItemCount", json_integer(n));
            json_object_set_new(d, "IndexSizeBytes", json_integer(bytes));
        }
    }
    if (any_global) {
        uint64_t pending, applied;
        double oldest, p50, p99;
        propagate_lag(db, &pending, &oldest);
        propagate_lag_percentiles(db, &p50, &p99, &applied);
        json_object_set_new(desc, "QuarryIndexPropagation",
                            json_pack("{s:I,s:f,s:i,s:I,s:f,s:f}", "PendingUpdates",
                                      (json_int_t)pending, "OldestPendingMillis", oldest,
                                      "InjectedLagMillis", db->opts.gsi_lag_ms, "AppliedUpdates",
                                      (json_int_t)applied, "LagP50Millis", p50, "LagP99Millis",
                                      p99));
    }
}
