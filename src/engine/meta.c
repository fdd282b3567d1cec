/* meta.c — a database's metadata records and the in-memory state that goes with them
 * (see meta.h): on-demand backups, per-table settings, policy revisions and client
 * request tokens, all held by the qr_db. It does not judge requests or shape answers:
 * backup_ondemand.c, settings.c, insights.c, policy.c and transact.c do, through meta.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "engine/engine_int.h"
#include "engine/meta.h"
#include "util/jsonread.h"

/* Keys:  "\0B" | backup id (4 bytes BE) | 0x00               -> the backup's record (JSON)
 *        "\0B" | backup id (4 bytes BE) | 0x01 | n (8 BE)    -> item n (its JSON text)
 *        "\0S" | kind | the table's TableId | "\0" | sub     -> a setting (JSON)
 *        "\0X" | kind | id                                  -> a record (JSON) */
#define BACKUP_PREFIX "\0B"
#define BACKUP_PREFIX_END "\0C"
#define BACKUP_RECORD 0
#define BACKUP_ITEM 1
#define COPY_BATCH_ITEMS 512
#define SETTINGS_PREFIX "\0S"
#define RECORDS_PREFIX "\0X"

typedef struct token_entry {
    char *token;           /* NULL: the slot is free */
    XXH128_hash_t request; /* digest of the request's canonical text */
    time_t done_at;        /* 0 while the first request is still running */
    char *response;        /* what a repeat answers, once done */
} token_entry;

struct meta_state {
    pthread_mutex_t backups_lock;
    uint32_t next_backup_id; /* under backups_lock; 0 until read from the store */
    pthread_mutex_t settings_lock;
    uint64_t last_revision; /* atomic */
    pthread_mutex_t tokens_lock;
    token_entry tokens[META_TOKEN_SLOTS];
    size_t ntokens;
    pthread_mutex_t jobs_lock;
    pthread_mutex_t claim_lock;
    pthread_cond_t jobs_done;
    int jobs_running; /* under jobs_lock */
    uint64_t run_id;
};

int meta_open(qr_db *db)
{
    meta_state *m = calloc(1, sizeof *m);
    if (m == NULL) return -1;
    pthread_mutex_init(&m->backups_lock, NULL);
    pthread_mutex_init(&m->settings_lock, NULL);
    pthread_mutex_init(&m->tokens_lock, NULL);
    pthread_mutex_init(&m->jobs_lock, NULL);
    pthread_mutex_init(&m->claim_lock, NULL);
    pthread_cond_init(&m->jobs_done, NULL);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    m->run_id = ((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec) ^
                ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)m;
    db->meta = m;
    return 0;
}

void meta_close(qr_db *db)
{
    meta_state *m = db->meta;
    if (m == NULL) return;
    for (size_t i = 0; i < m->ntokens; i++) {
        free(m->tokens[i].token);
        free(m->tokens[i].response);
    }
    pthread_mutex_destroy(&m->backups_lock);
    pthread_mutex_destroy(&m->settings_lock);
    pthread_mutex_destroy(&m->tokens_lock);
    pthread_mutex_destroy(&m->jobs_lock);
    pthread_mutex_destroy(&m->claim_lock);
    pthread_cond_destroy(&m->jobs_done);
    free(m);
    db->meta = NULL;
}

/* ---- on-demand backups ---- */

static void backup_key(buf *k, uint32_t id, int part)
{
    buf_append(k, BACKUP_PREFIX, 2);
    buf_put_be32(k, id);
    buf_putc(k, (uint8_t)part);
}

static uint32_t key_backup_id(const char *key)
{
    const unsigned char *k = (const unsigned char *)key;
    return (uint32_t)k[2] << 24 | (uint32_t)k[3] << 16 | (uint32_t)k[4] << 8 | k[5];
}

/* Makes next_backup_id known: one above the highest id stored. Called with backups_lock
 * held. */
static void read_next_id(qr_db *db)
{
    meta_state *m = db->meta;
    if (m->next_backup_id != 0) return;
    m->next_backup_id = 1;
    store_iter *it = store_iter_new(db->st, NULL, BACKUP_PREFIX, 2, BACKUP_PREFIX_END, 2);
    store_iter_last(it);
    if (store_iter_valid(it)) {
        size_t kl;
        const char *k = store_iter_key(it, &kl);
        if (kl >= 6) m->next_backup_id = key_backup_id(k) + 1;
    }
    store_iter_free(it);
}

static uint32_t backup_ids(qr_db *db, int take)
{
    meta_state *m = db->meta;
    pthread_mutex_lock(&m->backups_lock);
    read_next_id(db);
    uint32_t id = take ? m->next_backup_id++ : m->next_backup_id;
    pthread_mutex_unlock(&m->backups_lock);
    return id;
}

uint32_t meta_backup_id_take(qr_db *db)
{
    return backup_ids(db, 1);
}

uint32_t meta_backup_id_peek(qr_db *db)
{
    return backup_ids(db, 0);
}

int meta_backup_copy(qr_db *db, const table *t, const read_view *v, uint32_t id, int64_t *items,
                     int64_t *bytes, qr_err *err)
{
    buf lo, hi, k;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    buf_init(&k, 0);
    key_table_prefix(&lo, t, 0);
    key_table_prefix(&hi, t, 1);
    const store_snapshot *own = v ? NULL : store_snapshot_new(db->st);
    const store_snapshot *snap = v ? (const store_snapshot *)v : own;
    store_iter *it = store_iter_new(db->st, snap, lo.data, lo.len, hi.data, hi.len);
    store_batch *b = store_batch_new();
    int rc = 0;
    uint64_t n = 0;
    *items = *bytes = 0;
    for (store_iter_first(it); rc == 0 && store_iter_valid(it); store_iter_next(it)) {
        size_t vl, jlen, size;
        const char *val = store_iter_value(it, &vl), *json;
        if (item_stored(val, vl, &json, &jlen, &size) != 0) continue;
        k.len = 0;
        backup_key(&k, id, BACKUP_ITEM);
        buf_put_be64(&k, n++);
        store_batch_put(b, k.data, k.len, json, jlen);
        (*items)++;
        *bytes += (int64_t)size;
        if (store_batch_count(b) >= COPY_BATCH_ITEMS) {
            rc = store_write_nosync(db->st, b, err);
            store_batch_clear(b);
        }
    }
    if (rc == 0) rc = store_iter_status(it, err);
    if (rc == 0 && store_batch_count(b) > 0) rc = store_write_nosync(db->st, b, err);
    store_batch_free(b);
    store_iter_free(it);
    if (own) store_snapshot_free(db->st, own);
    buf_free(&lo);
    buf_free(&hi);
    buf_free(&k);
    return rc;
}

int meta_table_items(qr_db *db, const table *t, const read_view *v, meta_item_fn fn, void *arg,
                     qr_err *err)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    key_table_prefix(&lo, t, 0);
    key_table_prefix(&hi, t, 1);
    const store_snapshot *own = v ? NULL : store_snapshot_new(db->st);
    store_iter *it = store_iter_new(db->st, v ? (const store_snapshot *)v : own, lo.data, lo.len,
                                    hi.data, hi.len);
    int rc = 0;
    for (store_iter_first(it); rc == 0 && store_iter_valid(it); store_iter_next(it)) {
        size_t vl, jlen, size;
        const char *val = store_iter_value(it, &vl), *json;
        if (item_stored(val, vl, &json, &jlen, &size) == 0) rc = fn(arg, json, jlen, size, err);
    }
    if (rc == 0) rc = store_iter_status(it, err);
    store_iter_free(it);
    if (own) store_snapshot_free(db->st, own);
    buf_free(&lo);
    buf_free(&hi);
    return rc;
}

int meta_table_item(qr_db *db, const table *t, const read_view *v, const json_t *key, json_t **item,
                    qr_err *err)
{
    buf k;
    buf_init(&k, 0);
    char *raw = NULL;
    size_t len = 0;
    *item = NULL;
    int found = key_item(&k, t, key, err)
                    ? -1
                    : item_read_raw(db, (const store_snapshot *)v, &k, &raw, &len, err);
    if (found == 1 && (*item = item_decode(raw, len)) == NULL)
        found = err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    free(raw);
    buf_free(&k);
    return found;
}

int meta_backup_put(qr_db *db, uint32_t id, const json_t *rec, qr_err *err)
{
    char *text = json_dumps(rec, JSON_COMPACT);
    if (text == NULL) return err_set(err, QR_E_INTERNAL, "cannot encode the backup's record");
    buf k;
    buf_init(&k, 0);
    backup_key(&k, id, BACKUP_RECORD);
    store_batch *b = store_batch_new();
    store_batch_put(b, k.data, k.len, text, strlen(text));
    int rc = store_write(db->st, b, err); /* synced: the items written before it are too */
    store_batch_free(b);
    buf_free(&k);
    free(text);
    return rc;
}

int meta_backup_get(qr_db *db, uint32_t id, json_t **rec, qr_err *err)
{
    buf k;
    buf_init(&k, 0);
    backup_key(&k, id, BACKUP_RECORD);
    char *v = NULL;
    size_t vl;
    *rec = NULL;
    int rc = store_get(db->st, NULL, k.data, k.len, &v, &vl, err);
    buf_free(&k);
    if (rc <= 0) return rc;
    *rec = json_read(v, vl, 0, NULL);
    free(v);
    return *rec != NULL;
}

int meta_backup_next(qr_db *db, uint32_t after, uint32_t before, uint32_t *id, json_t **rec,
                     qr_err *err)
{
    *rec = NULL;
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    backup_key(&hi, before, BACKUP_RECORD);
    int rc = 0;
    /* From the record key of each candidate id on: the first key found is either a
     * record, or the items of a backup without one, which are passed over at once. */
    for (uint64_t from = (uint64_t)after + 1; rc == 0 && from < before;) {
        lo.len = 0;
        backup_key(&lo, (uint32_t)from, BACKUP_RECORD);
        store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
        store_iter_first(it);
        size_t kl = 0, vl;
        const char *k = store_iter_valid(it) ? store_iter_key(it, &kl) : NULL;
        if (k == NULL || kl < 7) {
            rc = store_iter_status(it, err);
            store_iter_free(it);
            break;
        }
        uint32_t found = key_backup_id(k);
        if (kl == 7 && k[6] == BACKUP_RECORD) {
            const char *v = store_iter_value(it, &vl);
            *rec = json_read(v, vl, 0, NULL);
            if (*rec) {
                *id = found;
                rc = 1;
            }
        }
        store_iter_free(it);
        from = (uint64_t)found + 1;
    }
    buf_free(&lo);
    buf_free(&hi);
    return rc;
}

int meta_backup_drop(qr_db *db, uint32_t id, qr_err *err)
{
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    backup_key(&lo, id, BACKUP_RECORD);
    backup_key(&hi, id, BACKUP_ITEM + 1);
    int rc = store_delete_range(db->st, lo.data, lo.len, hi.data, hi.len, err);
    if (rc == 0) store_compact_range(db->st, lo.data, lo.len, hi.data, hi.len);
    buf_free(&lo);
    buf_free(&hi);
    return rc;
}

struct meta_backup_items {
    store_iter *it;
    int started;
};

meta_backup_items *meta_backup_items_open(qr_db *db, uint32_t id)
{
    meta_backup_items *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    backup_key(&lo, id, BACKUP_ITEM);
    backup_key(&hi, id, BACKUP_ITEM + 1);
    r->it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    buf_free(&lo);
    buf_free(&hi);
    return r;
}

int meta_backup_items_next(meta_backup_items *r, const char **json, size_t *len, qr_err *err)
{
    if (r == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    if (r->started)
        store_iter_next(r->it);
    else
        store_iter_first(r->it);
    r->started = 1;
    if (!store_iter_valid(r->it)) return store_iter_status(r->it, err);
    *json = store_iter_value(r->it, len);
    return 1;
}

void meta_backup_items_close(meta_backup_items *r)
{
    if (r == NULL) return;
    store_iter_free(r->it);
    free(r);
}

/* ---- per-table settings ---- */

static int setting_key(qr_db *db, const table *t, char kind, const char *sub, buf *k, qr_err *err)
{
    pthread_mutex_lock(&db->catalog_lock);
    const char *id = json_string_value(json_object_get(t->desc, "TableId"));
    char copy[64];
    snprintf(copy, sizeof copy, "%s", id ? id : "");
    pthread_mutex_unlock(&db->catalog_lock);
    if (copy[0] == '\0') return err_set(err, QR_E_INTERNAL, "table %s has no TableId", t->name);
    buf_append(k, SETTINGS_PREFIX, 2);
    buf_putc(k, (uint8_t)kind);
    buf_append(k, copy, strlen(copy));
    buf_putc(k, '\0');
    buf_append(k, sub ? sub : "", sub ? strlen(sub) : 0);
    return 0;
}

/* The setting under key k: 0 with *out a new reference or NULL. */
static int setting_read(qr_db *db, const buf *k, json_t **out, qr_err *err)
{
    char *v = NULL;
    size_t vl = 0;
    *out = NULL;
    int rc = store_get(db->st, NULL, k->data, k->len, &v, &vl, err);
    if (rc <= 0) return rc;
    *out = json_read(v, vl, 0, NULL);
    free(v);
    return *out ? 0 : err_set(err, QR_E_INTERNAL, "a stored table setting cannot be decoded");
}

static int setting_write(qr_db *db, const buf *k, const json_t *value, qr_err *err)
{
    char *text = json_dumps(value, JSON_COMPACT);
    if (text == NULL) return err_set(err, QR_E_INTERNAL, "cannot encode a table setting");
    store_batch *b = store_batch_new();
    store_batch_put(b, k->data, k->len, text, strlen(text));
    int rc = store_write(db->st, b, err);
    store_batch_free(b);
    free(text);
    return rc;
}

int meta_setting_get(qr_db *db, const table *t, char kind, const char *sub, json_t **out,
                     qr_err *err)
{
    buf k;
    buf_init(&k, 0);
    *out = NULL;
    int rc = setting_key(db, t, kind, sub, &k, err);
    if (rc == 0) rc = setting_read(db, &k, out, err);
    buf_free(&k);
    return rc;
}

int meta_setting_update(qr_db *db, const table *t, char kind, const char *sub,
                        meta_setting_change_fn change, void *arg, qr_err *err)
{
    buf k;
    buf_init(&k, 0);
    json_t *cur = NULL, *next = NULL;
    int rc = setting_key(db, t, kind, sub, &k, err);
    if (rc == 0) {
        pthread_mutex_lock(&db->meta->settings_lock);
        rc = setting_read(db, &k, &cur, err);
        if (rc == 0) rc = change(cur, &next, arg, err);
        if (rc == 0 && next) rc = setting_write(db, &k, next, err);
        pthread_mutex_unlock(&db->meta->settings_lock);
    }
    json_decref(cur);
    json_decref(next);
    buf_free(&k);
    return rc;
}

/* ---- database records ---- */

void meta_setting_forget_all(qr_db *db, const table *t)
{
    static const char kinds[] = {META_SETTING_INSIGHTS, META_SETTING_POLICY,
                                 META_SETTING_CQL_DELETIONS};
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
    pthread_mutex_lock(&db->meta->settings_lock);
    if (store_batch_count(b))
        store_write(db->st, b, &e); /* if it fails, the records are only never read */
    pthread_mutex_unlock(&db->meta->settings_lock);
    store_batch_free(b);
    err_clear(&e);
}

/* ---- background jobs ---- */

typedef struct job {
    qr_db *db;
    meta_job_fn fn;
    void *arg;
} job;

static void *job_main(void *p)
{
    job j = *(job *)p;
    free(p);
    j.fn(j.db, j.arg);
    meta_state *m = j.db->meta;
    pthread_mutex_lock(&m->jobs_lock);
    m->jobs_running--;
    pthread_cond_broadcast(&m->jobs_done);
    pthread_mutex_unlock(&m->jobs_lock);
    return NULL;
}

int meta_job_start(qr_db *db, meta_job_fn fn, void *arg, qr_err *err)
{
    meta_state *m = db->meta;
    job *j = malloc(sizeof *j);
    if (j == NULL) return err_set(err, QR_E_INTERNAL, "out of memory starting a job");
    *j = (job){db, fn, arg};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&m->jobs_lock);
    m->jobs_running++;
    pthread_t t;
    int rc = pthread_create(&t, &attr, job_main, j);
    if (rc) m->jobs_running--;
    pthread_mutex_unlock(&m->jobs_lock);
    pthread_attr_destroy(&attr);
    if (rc) {
        free(j);
        return err_set(err, QR_E_INTERNAL, "cannot start a thread for the job");
    }
    return 0;
}

void meta_jobs_wait(qr_db *db)
{
    meta_state *m = db->meta;
    if (m == NULL) return;
    pthread_mutex_lock(&m->jobs_lock);
    while (m->jobs_running > 0)
        pthread_cond_wait(&m->jobs_done, &m->jobs_lock);
    pthread_mutex_unlock(&m->jobs_lock);
}

uint64_t meta_run_id(const qr_db *db)
{
    return db->meta->run_id;
}

void meta_claim_lock(qr_db *db)
{
    pthread_mutex_lock(&db->meta->claim_lock);
}

void meta_claim_unlock(qr_db *db)
{
    pthread_mutex_unlock(&db->meta->claim_lock);
}

/* ---- records of long-running jobs ---- */

static void record_key(buf *k, char kind, const char *id)
{
    buf_append(k, RECORDS_PREFIX, 2);
    buf_putc(k, (uint8_t)kind);
    buf_append(k, id, strlen(id));
}

int meta_record_put(qr_db *db, char kind, const char *id, const json_t *rec, qr_err *err)
{
    buf k;
    buf_init(&k, 0);
    record_key(&k, kind, id);
    int rc = setting_write(db, &k, rec, err);
    buf_free(&k);
    return rc;
}

int meta_record_get(qr_db *db, char kind, const char *id, json_t **rec, qr_err *err)
{
    buf k;
    buf_init(&k, 0);
    record_key(&k, kind, id);
    int rc = setting_read(db, &k, rec, err);
    buf_free(&k);
    return rc < 0 ? -1 : *rec != NULL;
}

int meta_record_list(qr_db *db, char kind, json_t **out, qr_err *err)
{
    char lo[3] = {'\0', 'X', kind}, hi[3] = {'\0', 'X', (char)(kind + 1)};
    *out = json_array();
    store_iter *it = store_iter_new(db->st, NULL, lo, 3, hi, 3);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t vl;
        const char *v = store_iter_value(it, &vl);
        json_t *rec = json_read(v, vl, 0, NULL);
        if (rec) json_array_append_new(*out, rec);
    }
    int rc = store_iter_status(it, err);
    store_iter_free(it);
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

uint64_t meta_revision_next(qr_db *db, uint64_t at_least)
{
    uint64_t *last = &db->meta->last_revision;
    uint64_t was = __atomic_load_n(last, __ATOMIC_RELAXED), r;
    do
        r = at_least > was ? at_least : was + 1;
    while (!__atomic_compare_exchange_n(last, &was, r, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return r;
}

/* ---- client request tokens ---- */

static time_t token_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1; /* never 0, which means "in progress" */
}

static void token_remove(meta_state *m, size_t i)
{
    free(m->tokens[i].token);
    free(m->tokens[i].response);
    m->tokens[i] = m->tokens[--m->ntokens];
    memset(&m->tokens[m->ntokens], 0, sizeof m->tokens[m->ntokens]);
}

/* Drops expired entries; if the table is still full, the oldest completed one. Returns
 * 0 if a slot is free. Called with tokens_lock held. */
static int token_make_room(meta_state *m, time_t now)
{
    for (size_t i = m->ntokens; i > 0; i--)
        if (m->tokens[i - 1].done_at && now - m->tokens[i - 1].done_at >= META_TOKEN_TTL_SECONDS)
            token_remove(m, i - 1);
    if (m->ntokens < META_TOKEN_SLOTS) return 0;
    size_t oldest = m->ntokens;
    for (size_t i = 0; i < m->ntokens; i++)
        if (m->tokens[i].done_at &&
            (oldest == m->ntokens || m->tokens[i].done_at < m->tokens[oldest].done_at))
            oldest = i;
    if (oldest == m->ntokens) return -1;
    token_remove(m, oldest);
    return 0;
}

meta_token_state meta_token_claim(qr_db *db, const char *token, const char *request, size_t len,
                                  char **replay)
{
    meta_state *m = db->meta;
    XXH128_hash_t h = XXH3_128bits(request, len);
    time_t now = token_clock();
    meta_token_state st = META_TOKEN_CLAIMED;
    *replay = NULL;
    pthread_mutex_lock(&m->tokens_lock);
    for (size_t i = 0; i < m->ntokens; i++) {
        token_entry *e = &m->tokens[i];
        if (strcmp(e->token, token) != 0) continue;
        if (e->done_at && now - e->done_at >= META_TOKEN_TTL_SECONDS) {
            token_remove(m, i);
            break;
        }
        if (!XXH128_isEqual(e->request, h))
            st = META_TOKEN_MISMATCH;
        else if (e->done_at == 0)
            st = META_TOKEN_RUNNING;
        else
            st = (*replay = strdup(e->response)) ? META_TOKEN_DONE : META_TOKEN_NO_MEMORY;
        pthread_mutex_unlock(&m->tokens_lock);
        return st;
    }
    char *copy = NULL;
    if (token_make_room(m, now))
        st = META_TOKEN_FULL;
    else if ((copy = strdup(token)) == NULL)
        st = META_TOKEN_NO_MEMORY;
    else
        m->tokens[m->ntokens++] = (token_entry){.token = copy, .request = h};
    pthread_mutex_unlock(&m->tokens_lock);
    return st;
}

void meta_token_finish(qr_db *db, const char *token, const char *response)
{
    meta_state *m = db->meta;
    pthread_mutex_lock(&m->tokens_lock);
    for (size_t i = 0; i < m->ntokens; i++) {
        token_entry *e = &m->tokens[i];
        if (e->done_at != 0 || strcmp(e->token, token) != 0) continue;
        e->response = response ? strdup(response) : NULL;
        if (e->response == NULL)
            token_remove(m, i);
        else
            e->done_at = token_clock();
        break;
    }
    pthread_mutex_unlock(&m->tokens_lock);
}
