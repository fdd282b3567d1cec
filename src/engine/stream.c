/* stream.c — DynamoDB Streams: stream descriptors, record staging, reading and trimming.
 * The registry below keeps the descriptors in memory with the sequence counter and the
 * numbers that writers hold but have not yet committed. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "engine/engine_int.h"
#include "engine/stream.h"
#include "model/value.h"
#include "util/jsonread.h"

#define DESC_PREFIX "\0D"
#define DESC_END "\0E" /* the first key past every descriptor */
#define RECORD_PREFIX "\0R"
#define PREFIX_LEN 2

typedef struct stream_registry {
    pthread_mutex_t lock;
    json_t *streams; /* descriptors, oldest first */
    uint32_t next_id;
    uint64_t next_seq;
    uint64_t *held; /* numbers given to writers whose batches are not yet done */
    size_t nheld, cap;
} stream_registry;

static _Thread_local int service_origin;

void stream_set_service_origin(int on)
{
    service_origin = on;
}

/* Keys:  "\0D" | stream id (4 bytes BE)                      -> descriptor (JSON)
 *        "\0R" | stream id (4 bytes BE) | sequence (8 BE)    -> record: time in ms (8 bytes
 *                                                               BE), then its JSON */
static void desc_key(buf *k, uint32_t id)
{
    buf_append(k, DESC_PREFIX, PREFIX_LEN);
    buf_put_be32(k, id);
}

static void record_key(buf *k, uint32_t id, uint64_t seq)
{
    buf_append(k, RECORD_PREFIX, PREFIX_LEN);
    buf_put_be32(k, id);
    buf_put_be64(k, seq);
}

/* The key range of every record of stream id: [lo, hi). */
static void record_range(uint32_t id, buf *lo, buf *hi)
{
    buf_init(lo, 0);
    buf_init(hi, 0);
    record_key(lo, id, 0);
    record_key(hi, id + 1, 0);
}

static uint32_t desc_id(const json_t *d)
{
    return (uint32_t)json_integer_value(json_object_get(d, "Id"));
}

/* A descriptor is written when a table's new stream is first seen by stream_follow and
 * rewritten when the stream closes. */
static int persist_desc(qr_db *db, const json_t *d, qr_err *err)
{
    char *text = json_dumps(d, JSON_COMPACT);
    if (text == NULL) return err_set(err, QR_E_INTERNAL, "cannot encode a stream descriptor");
    buf k;
    buf_init(&k, 0);
    desc_key(&k, desc_id(d));
    int rc = store_put(db->st, k.data, k.len, text, strlen(text), err);
    buf_free(&k);
    free(text);
    return rc;
}

/* The last sequence number stored in stream id, or 0. */
static uint64_t last_stored(qr_db *db, uint32_t id)
{
    buf lo, hi;
    record_range(id, &lo, &hi);
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    store_iter_last(it);
    uint64_t seq = 0;
    size_t kl;
    if (store_iter_valid(it)) {
        const char *k = store_iter_key(it, &kl);
        if (kl == PREFIX_LEN + 12) seq = be64_read(k + PREFIX_LEN + 4);
    }
    store_iter_free(it);
    buf_free(&lo);
    buf_free(&hi);
    return seq;
}

/* Closes stream d (registry lock held): no record numbered after End belongs to it. */
static void close_locked(qr_db *db, stream_registry *r, json_t *d)
{
    if (json_object_get(d, "End")) return;
    uint64_t start = (uint64_t)json_integer_value(json_object_get(d, "Start"));
    uint64_t end = r->next_seq > start ? r->next_seq - 1 : start;
    json_object_set_new(d, "End", json_integer((json_int_t)end));
    json_object_set_new(d, "Closed", json_real(engine_now_seconds()));
    qr_err e;
    err_init(&e);
    persist_desc(db, d, &e); /* if it fails, the next open closes the stream again */
}

int stream_open(qr_db *db)
{
    stream_registry *r = calloc(1, sizeof *r);
    if (r == NULL) return -1;
    pthread_mutex_init(&r->lock, NULL);
    r->streams = json_array();
    r->next_id = 1;
    r->next_seq = 1;
    db->streams = r;
    store_iter *it = store_iter_new(db->st, NULL, DESC_PREFIX, PREFIX_LEN, DESC_END, PREFIX_LEN);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t vl;
        const char *v = store_iter_value(it, &vl);
        json_t *d = json_read(v, vl, 0, NULL);
        if (!json_is_object(d)) {
            json_decref(d);
            continue;
        }
        uint32_t id = desc_id(d);
        if (id >= r->next_id) r->next_id = id + 1;
        uint64_t top = (uint64_t)json_integer_value(json_object_get(d, "Start"));
        uint64_t last = last_stored(db, id);
        if (last > top) top = last;
        if ((uint64_t)json_integer_value(json_object_get(d, "End")) > top)
            top = (uint64_t)json_integer_value(json_object_get(d, "End"));
        if (top + 1 > r->next_seq) r->next_seq = top + 1;
        json_array_append_new(r->streams, d);
    }
    store_iter_free(it);
    /* Tables may name streams the registry lacks (a crash between the catalog's write and
     * the descriptor's): their ids are taken, and stream_follow records them. */
    for (size_t i = 0; i < db->ntables; i++) {
        uint32_t id = (uint32_t)json_integer_value(
            json_object_get(json_object_get(db->tables[i]->desc, QR_STREAM_FIELD), "Id"));
        if (id >= r->next_id) r->next_id = id + 1;
    }
    qr_err e;
    err_init(&e);
    for (size_t i = 0; i < db->ntables; i++)
        stream_follow(db, db->tables[i]->name, db->tables[i]->desc, &e);
    /* Open streams no table names any more are closed. Nothing else runs yet, so the
     * registry is walked without its lock, taken only to close (catalog before registry,
     * the order every writer keeps). */
    size_t i;
    json_t *d;
    json_array_foreach(r->streams, i, d)
    {
        table *t = catalog_get(db, json_string_value(json_object_get(d, "TableName")));
        uint32_t cur = t ? (uint32_t)json_integer_value(
                               json_object_get(json_object_get(t->desc, QR_STREAM_FIELD), "Id"))
                         : 0;
        catalog_release(db, t);
        if (cur != desc_id(d)) {
            pthread_mutex_lock(&r->lock);
            close_locked(db, r, d);
            pthread_mutex_unlock(&r->lock);
        }
    }
    return 0;
}

void stream_close(qr_db *db)
{
    stream_registry *r = db->streams;
    if (r == NULL) return;
    json_decref(r->streams);
    free(r->held);
    pthread_mutex_destroy(&r->lock);
    free(r);
    db->streams = NULL;
}

/* The label of a stream made at time now: its creation time to the millisecond. */
/* The label of a stream made at ms milliseconds since the epoch: that time in ISO 8601. */
static void make_label(int64_t ms, char *out, size_t cap)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, cap, "%s.%03d", day, (int)(ms % 1000));
}

/* The time a label names, in milliseconds (0 if it is not one). */
static int64_t label_ms(const char *label)
{
    struct tm tm = {0};
    int msec;
    if (label == NULL || sscanf(label, "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon,
                                &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &msec) != 7)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000 + msec;
}

void stream_describe_new(qr_db *db, json_t *desc, const char *view_type, double now)
{
    stream_registry *r = db->streams;
    const char *name = json_string_value(json_object_get(desc, "TableName"));
    /* A table's streams are told apart by label (its ARN is the table's plus the label),
     * so a new one is labelled after every earlier stream of that table name, even one
     * enabled in the same millisecond or before the clock stepped back. */
    int64_t ms = (int64_t)(now * 1000),
            last = label_ms(json_string_value(json_object_get(desc, "LatestStreamLabel")));
    pthread_mutex_lock(&r->lock);
    uint32_t id = r->next_id++;
    size_t i;
    json_t *d;
    json_array_foreach(r->streams, i, d)
    {
        int64_t t = label_ms(json_string_value(json_object_get(d, "StreamLabel")));
        if (name && strcmp(json_string_value(json_object_get(d, "TableName")), name) == 0 &&
            t > last)
            last = t;
    }
    pthread_mutex_unlock(&r->lock);
    if (ms <= last) ms = last + 1;
    char label[64], arn[1024];
    make_label(ms, label, sizeof label);
    snprintf(arn, sizeof arn, "%s/stream/%s", json_string_value(json_object_get(desc, "TableArn")),
             label);
    json_object_set_new(
        desc, QR_STREAM_FIELD,
        json_pack("{s:I,s:s,s:f}", "Id", (json_int_t)id, "ViewType", view_type, "Created", now));
    json_object_set_new(desc, "LatestStreamArn", json_string(arn));
    json_object_set_new(desc, "LatestStreamLabel", json_string(label));
}

int stream_follow(qr_db *db, const char *name, const json_t *desc, qr_err *err)
{
    stream_registry *r = db->streams;
    json_t *cur = json_object_get(desc, QR_STREAM_FIELD);
    uint32_t cur_id = (uint32_t)json_integer_value(json_object_get(cur, "Id"));
    int rc = 0, known = 0;
    /* It writes under the registry's lock, which the commit of a staged write into a
     * table with a stream takes (release_seq): what this thread staged goes first. */
    if (store_commit_staged(err)) return -1;
    pthread_mutex_lock(&r->lock);
    size_t i;
    json_t *d;
    json_array_foreach(r->streams, i, d)
    {
        if (desc_id(d) == cur_id)
            known = 1;
        else if (strcmp(json_string_value(json_object_get(d, "TableName")), name) == 0)
            close_locked(db, r, d);
    }
    if (cur && !known) {
        json_t *nd = json_pack("{s:I,s:O,s:O,s:s,s:O,s:O,s:O,s:I}", "Id", (json_int_t)cur_id,
                               "StreamArn", json_object_get(desc, "LatestStreamArn"), "StreamLabel",
                               json_object_get(desc, "LatestStreamLabel"), "TableName", name,
                               "KeySchema", json_object_get(desc, "KeySchema"), "StreamViewType",
                               json_object_get(cur, "ViewType"), "Created",
                               json_object_get(cur, "Created"), "Start", (json_int_t)r->next_seq);
        if (nd == NULL)
            rc = err_set(err, QR_E_INTERNAL, "cannot describe the stream of table %s", name);
        else if ((rc = persist_desc(db, nd, err)) == 0)
            json_array_append(r->streams, nd);
        json_decref(nd);
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

void stream_table_dropped(qr_db *db, const char *name)
{
    stream_registry *r = db->streams;
    store_commit_staged(NULL); /* as in stream_follow: close_locked writes under the lock */
    pthread_mutex_lock(&r->lock);
    size_t i;
    json_t *d;
    json_array_foreach(r->streams, i,
                       d) if (strcmp(json_string_value(json_object_get(d, "TableName")), name) == 0)
        close_locked(db, r, d);
    pthread_mutex_unlock(&r->lock);
}

/* ---- writes ---- */

static int same_value(const json_t *a, const json_t *b);

/* Two maps of attribute values with the same names and equal values. */
static int same_map(const json_t *a, const json_t *b)
{
    if (json_object_size(a) != json_object_size(b)) return 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        json_t *w = json_object_get(b, k);
        if (w == NULL || !same_value(v, w)) return 0;
    }
    return 1;
}

/* Two attribute values are equal; sets (SS, NS, BS) have no order. Numbers and binaries
 * arrive normalised, so equal members are equal strings. */
static int same_value(const json_t *a, const json_t *b)
{
    if (json_object_size(a) != 1 || json_object_size(b) != 1)
        return json_equal((json_t *)a, (json_t *)b);
    void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
    const char *ta = json_object_iter_key(ia), *tb = json_object_iter_key(ib);
    json_t *va = json_object_iter_value(ia), *vb = json_object_iter_value(ib);
    if (strcmp(ta, tb) != 0) return 0;
    if (strcmp(ta, "M") == 0) return same_map(va, vb);
    if (strcmp(ta, "L") == 0) {
        if (json_array_size(va) != json_array_size(vb)) return 0;
        for (size_t i = 0; i < json_array_size(va); i++)
            if (!same_value(json_array_get(va, i), json_array_get(vb, i))) return 0;
        return 1;
    }
    if (strcmp(ta, "SS") == 0 || strcmp(ta, "NS") == 0 || strcmp(ta, "BS") == 0) {
        if (json_array_size(va) != json_array_size(vb)) return 0;
        size_t i, j;
        json_t *x, *y;
        json_array_foreach(va, i, x)
        { /* members are distinct, so same size + each found = same set */
            int found = 0;
            json_array_foreach(vb, j, y) if (json_equal(x, y))
            {
                found = 1;
                break;
            }
            if (!found) return 0;
        }
        return 1;
    }
    return json_equal(va, vb);
}

int stream_enabled(const table *t)
{
    return json_object_get(t->desc, QR_STREAM_FIELD) != NULL;
}

static void release_seq(void *arg, uint64_t seq, int written)
{
    (void)written;
    stream_registry *r = arg;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->nheld; i++)
        if (r->held[i] == seq) {
            r->held[i] = r->held[--r->nheld];
            break;
        }
    pthread_mutex_unlock(&r->lock);
}

static int reserve_seq(stream_registry *r, uint64_t *seq)
{
    pthread_mutex_lock(&r->lock);
    if (r->nheld == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        uint64_t *held = realloc(r->held, cap * sizeof *held);
        if (held == NULL) {
            pthread_mutex_unlock(&r->lock);
            return -1;
        }
        r->held = held;
        r->cap = cap;
    }
    *seq = r->next_seq++;
    r->held[r->nheld++] = *seq;
    pthread_mutex_unlock(&r->lock);
    return 0;
}

int stream_stage(qr_db *db, const table *t, store_batch *b, const json_t *old_item,
                 const json_t *new_item, qr_err *err)
{
    json_t *s = json_object_get(t->desc, QR_STREAM_FIELD);
    if (s == NULL || (old_item == NULL && new_item == NULL)) return 0;
    /* A write that leaves the item as it was makes no record, as in DynamoDB. */
    if (old_item && new_item && same_map(old_item, new_item)) return 0;
    uint32_t id = (uint32_t)json_integer_value(json_object_get(s, "Id"));
    const char *view = json_string_value(json_object_get(s, "ViewType"));
    stream_registry *r = db->streams;
    uint64_t seq;
    if (reserve_seq(r, &seq)) return err_set(err, QR_E_INTERNAL, "out of memory");
    if (store_batch_on_done(b, release_seq, r, seq)) {
        release_seq(r, seq, 0);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    double now = engine_now_seconds();
    json_t *keys = key_of_item(t, new_item ? new_item : old_item);
    size_t size = item_size(keys);
    char seqtext[32];
    snprintf(seqtext, sizeof seqtext, "%021" PRIu64, seq);
    json_t *ddb = json_pack("{s:I,s:o,s:s,s:s}", "ApproximateCreationDateTime", (json_int_t)now,
                            "Keys", keys, "SequenceNumber", seqtext, "StreamViewType", view);
    int want_new = strcmp(view, "NEW_IMAGE") == 0 || strcmp(view, "NEW_AND_OLD_IMAGES") == 0;
    int want_old = strcmp(view, "OLD_IMAGE") == 0 || strcmp(view, "NEW_AND_OLD_IMAGES") == 0;
    if (want_new && new_item) {
        json_object_set(ddb, "NewImage", (json_t *)new_item);
        size += item_size(new_item);
    }
    if (want_old && old_item) {
        json_object_set(ddb, "OldImage", (json_t *)old_item);
        size += item_size(old_item);
    }
    json_object_set_new(ddb, "SizeBytes", json_integer((json_int_t)size));
    uint64_t where[2] = {id, seq};
    XXH128_hash_t h = XXH3_128bits(where, sizeof where);
    char event_id[40];
    snprintf(event_id, sizeof event_id, "%016" PRIx64 "%016" PRIx64, h.high64, h.low64);
    const char *name = !old_item ? "INSERT" : !new_item ? "REMOVE" : "MODIFY";
    json_t *rec = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "eventID", event_id, "eventName", name,
                            "eventVersion", "1.1", "eventSource", "aws:dynamodb", "awsRegion",
                            "ddblocal", "dynamodb", ddb);
    if (rec && service_origin)
        json_object_set_new(
            rec, "userIdentity",
            json_pack("{s:s,s:s}", "PrincipalId", "dynamodb.amazonaws.com", "Type", "Service"));
    char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
    json_decref(rec);
    if (text == NULL) return err_set(err, QR_E_INTERNAL, "cannot encode a stream record");
    buf k, v;
    buf_init(&k, 0);
    buf_init(&v, 0);
    record_key(&k, id, seq);
    buf_put_be64(&v, (uint64_t)(now * 1000));
    buf_puts(&v, text);
    store_batch_put(b, k.data, k.len, v.data, v.len);
    buf_free(&k);
    buf_free(&v);
    free(text);
    return 0;
}

/* ---- reads ---- */

json_t *stream_list(qr_db *db)
{
    stream_registry *r = db->streams;
    pthread_mutex_lock(&r->lock);
    json_t *copy = json_deep_copy(r->streams);
    pthread_mutex_unlock(&r->lock);
    return copy;
}

json_t *stream_find(qr_db *db, const char *arn)
{
    stream_registry *r = db->streams;
    json_t *found = NULL;
    pthread_mutex_lock(&r->lock);
    size_t i;
    json_t *d;
    json_array_foreach(r->streams, i,
                       d) if (strcmp(json_string_value(json_object_get(d, "StreamArn")), arn) == 0)
        found = json_deep_copy(d);
    pthread_mutex_unlock(&r->lock);
    return found;
}

uint64_t stream_visible(qr_db *db)
{
    stream_registry *r = db->streams;
    pthread_mutex_lock(&r->lock);
    uint64_t low = r->next_seq;
    for (size_t i = 0; i < r->nheld; i++)
        if (r->held[i] < low) low = r->held[i];
    pthread_mutex_unlock(&r->lock);
    return low;
}

int stream_read(qr_db *db, uint32_t id, uint64_t from, uint64_t below, size_t limit,
                size_t max_bytes, json_t *records, uint64_t *next, int *cut, qr_err *err)
{
    *next = from;
    *cut = 0;
    if (from >= below) return 0;
    buf lo, hi;
    buf_init(&lo, 0);
    buf_init(&hi, 0);
    record_key(&lo, id, from);
    record_key(&hi, id, below);
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    size_t n = 0, bytes = 0;
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t kl, vl;
        const char *k = store_iter_key(it, &kl), *v = store_iter_value(it, &vl);
        if (n == limit || (n > 0 && bytes + vl > max_bytes)) { /* a page never passes the limit */
            *cut = 1;
            break;
        }
        if (kl != PREFIX_LEN + 12 || vl < 8) continue;
        json_t *rec = json_read(v + 8, vl - 8, 0, NULL);
        if (rec == NULL) continue;
        json_array_append_new(records, rec);
        n++;
        bytes += vl;
        *next = be64_read(k + PREFIX_LEN + 4) + 1;
    }
    int rc = store_iter_status(it, err);
    store_iter_free(it);
    buf_free(&lo);
    buf_free(&hi);
    return rc;
}

/* Deletes the records of stream id stamped before cutoff_ms (they are in time order);
 * returns the number of the last one deleted, or 0. */
static uint64_t trim_records(qr_db *db, uint32_t id, uint64_t cutoff_ms)
{
    buf lo, hi;
    record_range(id, &lo, &hi);
    store_iter *it = store_iter_new(db->st, NULL, lo.data, lo.len, hi.data, hi.len);
    buf upto;
    buf_init(&upto, 0);
    uint64_t last = 0;
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t kl, vl;
        const char *k = store_iter_key(it, &kl), *v = store_iter_value(it, &vl);
        if (vl >= 8 && be64_read(v) >= cutoff_ms) break;
        buf_reset(&upto);
        buf_append(&upto, k, kl);
        buf_putc(&upto, 0);
        if (kl == PREFIX_LEN + 12) last = be64_read(k + PREFIX_LEN + 4);
    }
    store_iter_free(it);
    if (upto.len) {
        store_batch *b = store_batch_new();
        store_batch_delete_range(b, lo.data, lo.len, upto.data, upto.len);
        qr_err e;
        err_init(&e);
        if (store_write(db->st, b, &e)) last = 0;
        store_batch_free(b);
    }
    buf_free(&upto);
    buf_free(&lo);
    buf_free(&hi);
    return last;
}

void stream_trim(qr_db *db, double now)
{
    stream_registry *r = db->streams;
    uint64_t cutoff_ms = (uint64_t)((now - QR_STREAM_RETENTION_S) * 1000);
    json_t *all = stream_list(db);
    size_t i;
    json_t *d;
    json_array_foreach(all, i, d)
    {
        uint32_t id = desc_id(d);
        json_t *closed = json_object_get(d, "Closed");
        if (closed && json_number_value(closed) < now - QR_STREAM_RETENTION_S) {
            buf k, lo, hi;
            buf_init(&k, 0);
            desc_key(&k, id);
            record_range(id, &lo, &hi);
            store_batch *b = store_batch_new();
            store_batch_delete(b, k.data, k.len);
            store_batch_delete_range(b, lo.data, lo.len, hi.data, hi.len);
            qr_err e;
            err_init(&e);
            if (store_write(db->st, b, &e) == 0) {
                pthread_mutex_lock(&r->lock);
                size_t j;
                json_t *x;
                json_array_foreach(r->streams, j, x) if (desc_id(x) == id)
                {
                    json_array_remove(r->streams, j);
                    break;
                }
                pthread_mutex_unlock(&r->lock);
            }
            store_batch_free(b);
            buf_free(&k);
            buf_free(&lo);
            buf_free(&hi);
        } else {
            /* The trim horizon moves past what was dropped, so readers can tell. */
            uint64_t last = trim_records(db, id, cutoff_ms);
            if (last == 0) continue;
            pthread_mutex_lock(&r->lock);
            size_t j;
            json_t *x;
            json_array_foreach(r->streams, j, x) if (desc_id(x) == id)
            {
                json_object_set_new(x, "Trimmed", json_integer((json_int_t)last));
                qr_err e;
                err_init(&e);
                persist_desc(db, x, &e);
            }
            pthread_mutex_unlock(&r->lock);
        }
    }
    json_decref(all);
}
