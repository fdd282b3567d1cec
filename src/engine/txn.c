/* txn.c — item transactions: the one write path of items (see engine.h).
 *
 * Single-item writes, batches, TransactWriteItems, TTL expiry, restores and the backfill
 * of global indexes (txn_fill) all write through here, so index upkeep, item collection
 * sizes, stream records, recovery history, statistics, the hook and the staged commit of
 * serve --no-sync can never be skipped by one kind of write. Conditions and the shape of
 * requests are the callers' part. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "model/value.h"

typedef struct txn_slot {
    table *t;
    const buf *key;
    int read;  /* the current item was read */
    char *raw; /* its stored form, NULL if there is none */
    size_t raw_len;
    size_t old_size;  /* its DynamoDB size */
    json_t *old;      /* parsed on demand */
    int written;      /* put or deleted (staged) */
    json_t *new_item; /* what was put (a reference), when parsed; NULL for a delete */
    size_t new_size;  /* its DynamoDB size, or that of the entry filled */
    int put;
    const qr_index *filled;   /* txn_fill staged the item's entry in this index */
    uint64_t entry_partition; /* that entry's partition hash */
    int64_t entry_before;     /* the size of the entry it replaces; -1 if none */
} txn_slot;

/* Whether t keeps nothing beside its items that a write must update: no index, no
 * stream, no recovery history. */
static int table_keeps_items_only(const table *t);

struct item_txn {
    qr_db *db;
    txn_kind kind;
    int system;
    size_t n;
    const buf *keys;
    txn_slot *slots;
    pthread_mutex_t *lock; /* TXN_ITEM's stripe, while this transaction holds it */
    int locked;            /* TXN_BATCH and TXN_ATOMIC: their stripes are held */
    int filling;           /* txn_fill was called: the transaction writes index entries only */
    int gsi_locked;        /* it holds gsi_lock, from its first fill to its commit */
    store_batch *b;
    txn_slot one; /* the slot of a single-item transaction, which needs no other allocation */
};

int txn_begin(qr_db *db, int kind, size_t n, table *const *tables, const buf *keys, item_txn **out,
              qr_err *err)
{
    *out = NULL;
    if (!(kind & (TXN_SYSTEM | TXN_OWNER)))
        for (size_t i = 0; i < n; i++)
            if (table_refuse_owned(tables[i], err)) return -1;
    item_txn *x = calloc(1, sizeof *x);
    txn_slot *slots = x == NULL ? NULL : n <= 1 ? &x->one : calloc(n, sizeof *slots);
    if (slots == NULL) {
        free(x);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    x->db = db;
    x->kind = (txn_kind)(kind & 0xff);
    x->system = (kind & TXN_SYSTEM) != 0;
    x->n = n;
    x->keys = keys;
    x->slots = slots;
    for (size_t i = 0; i < n; i++) {
        slots[i].t = tables[i];
        slots[i].key = &keys[i];
    }
    if (x->kind == TXN_ITEM) {
        if (n != 1 || item_lock(db, &keys[0], &x->lock, err)) {
            if (n != 1) err_set(err, QR_E_INTERNAL, "a single-item transaction of %zu items", n);
            if (slots != &x->one) free(slots);
            free(x);
            return -1;
        }
    } else if (x->kind == TXN_BATCH) {
        keys_lock(db, keys, n);
        x->locked = 1;
    } else {
        txn_lock_keys(db, keys, n);
        x->locked = 1;
    }
    *out = x;
    return 0;
}

/* Reads item i's stored form once. */
static int slot_read(item_txn *x, txn_slot *s, qr_err *err)
{
    if (s->read) return s->raw != NULL;
    int found = item_read_raw_before_write(x->db, s->key, &s->raw, &s->raw_len, err);
    if (found < 0) return -1;
    s->read = 1;
    if (!found) return 0;
    const char *json;
    size_t len;
    if (item_stored(s->raw, s->raw_len, &json, &len, &s->old_size)) {
        free(s->raw);
        s->raw = NULL;
        return err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    }
    return 1;
}

int txn_read_size(item_txn *x, size_t i, size_t *size, qr_err *err)
{
    txn_slot *s = &x->slots[i];
    int found = slot_read(x, s, err);
    *size = found > 0 ? s->old_size : 0;
    return found;
}

int txn_read(item_txn *x, size_t i, const json_t **item, qr_err *err)
{
    txn_slot *s = &x->slots[i];
    *item = NULL;
    int found = slot_read(x, s, err);
    if (found <= 0) return found;
    if (s->old == NULL && (s->old = item_decode(s->raw, s->raw_len)) == NULL)
        return err_set(err, QR_E_INTERNAL, "stored item is corrupt");
    *item = s->old;
    return 1;
}

int txn_check(item_txn *x, size_t i, const expr_cond *c, const char *on_failure, qr_err *err)
{
    if (c == NULL) return 0;
    const json_t *old;
    txn_slot *s = &x->slots[i];
    /* A throttled write is refused before its condition is looked at. */
    int metered = s->t->meters && !x->system;
    if (metered && capacity_admit_write(x->db, s->t, s->key, NULL, NULL, err)) return -1;
    if (txn_read(x, i, &old, err) < 0) return -1;
    int ok = expr_cond_eval(c, old, err);
    if (ok < 0) return -1;
    if (ok) return 0;
    /* DynamoDB charges a write whose condition fails as a write of the item it found. */
    if (metered)
        capacity_charge(x->db, s->t, NULL, 1, s->key->data, s->key->len,
                        meter_write_units(s->old_size) * (x->kind == TXN_ATOMIC ? 2.0 : 1.0));
    err_set(err, QR_E_CONDITION, "The conditional request failed");
    if (old && strcmp(on_failure, "ALL_OLD") == 0 && err->item == NULL)
        err->item = json_deep_copy(old);
    return -1;
}

/* An item written over is often written or read again soon (updates, counters), and
 * the row cache keeps its new value. A new item's is not kept, as keeping it would cost
 * every insert a copy; its first read caches it. */
static void put_item_value(store_batch *b, const buf *key, int replacing, const buf *val)
{
    if (replacing)
        store_batch_put_cached(b, key->data, key->len, val->data, val->len);
    else
        store_batch_put(b, key->data, key->len, val->data, val->len);
}

/* Stages the write of item i: new_item (parsed, or NULL when the table needs no parse)
 * stored as val, or a delete when val is NULL. */
static int stage(item_txn *x, size_t i, const json_t *new_item, const buf *val, size_t size,
                 qr_err *err)
{
    txn_slot *s = &x->slots[i];
    if (s->written) return err_set(err, QR_E_INTERNAL, "an item written twice in one transaction");
    if (x->filling)
        return err_set(err, QR_E_INTERNAL, "an item written by a transaction that fills");
    int found = slot_read(x, s, err);
    if (found < 0) return -1;
    if (val == NULL && !found) return 0; /* deleting nothing writes nothing */
    const json_t *old = NULL;
    json_t *parsed = NULL;
    int keeps_more = !table_keeps_items_only(s->t);
    if (keeps_more) {
        if (txn_read(x, i, &old, err) < 0) return -1;
        if (val && new_item == NULL &&
            (new_item = parsed = item_decode(val->data, val->len)) == NULL)
            return err_set(err, QR_E_INTERNAL, "cannot read the item to write");
    }
    /* Throttled before anything is staged: a refused item leaves the batch as it was. */
    if (!x->system && s->t->meters &&
        capacity_admit_write(x->db, s->t, s->key, old, new_item, err)) {
        json_decref(parsed);
        return -1;
    }
    if (x->b == NULL && (x->b = store_batch_new()) == NULL) {
        json_decref(parsed);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    stats_stage_begin(x->db, x->b);
    if (keeps_more) {
        int rc = index_stage(x->db, s->t, x->b, old, new_item, val, err) ||
                         stream_stage(x->db, s->t, x->b, old, new_item, err) ||
                         pitr_stage(x->db, s->t, x->b, old, new_item, err)
                     ? -1
                     : 0;
        if (rc == 0 && new_item)
            s->new_item = parsed ? parsed : json_incref((json_t *)new_item);
        else
            json_decref(parsed);
        if (rc) return -1;
    }
    if (val)
        put_item_value(x->b, s->key, found, val);
    else
        store_batch_delete(x->b, s->key->data, s->key->len);
    s->written = 1;
    s->put = val != NULL;
    s->new_size = val ? size : 0;
    return 0;
}

int txn_put(item_txn *x, size_t i, const json_t *item, size_t size, qr_err *err)
{
    buf val;
    buf_init(&val, 0);
    int rc = item_encode_sized(item, size, item_page_size(item, x->slots[i].t->sk.name), &val)
                 ? err_set(err, QR_E_INTERNAL, "cannot encode the item")
                 : stage(x, i, item, &val, size, err);
    buf_free(&val);
    return rc;
}

int txn_put_stored(item_txn *x, size_t i, const buf *stored, qr_err *err)
{
    const char *json;
    size_t len, size;
    if (item_stored(stored->data, stored->len, &json, &len, &size))
        return err_set(err, QR_E_INTERNAL, "not an item in the stored form");
    return stage(x, i, NULL, stored, size, err);
}

int txn_delete(item_txn *x, size_t i, qr_err *err)
{
    return stage(x, i, NULL, NULL, 0, err);
}

/* The DynamoDB size of a stored entry, or -1 if it is not a stored item (the counts of
 * an index leave those out). */
static int64_t stored_size(const char *v, size_t len)
{
    const char *json;
    size_t jlen, size;
    return item_stored(v, len, &json, &jlen, &size) == 0 ? (int64_t)size : -1;
}

typedef struct fill_ctx {
    item_txn *x;
    txn_slot *s;
    const qr_index *ix;
    qr_err *err;
} fill_ctx;

/* Stages one entry of the filled item (its first is the one reported and charged). */
static int fill_entry(void *arg, const buf *ek, const json_t *entry_item)
{
    fill_ctx *f = arg;
    item_txn *x = f->x;
    txn_slot *s = f->s;
    qr_err *err = f->err;
    buf val;
    buf_init(&val, 0);
    json_t *entry = index_project(s->t, f->ix, entry_item);
    size_t size = item_size(entry);
    int rc = item_encode_sized(entry, size, item_page_size(entry, s->t->sk.name), &val)
                 ? err_set(err, QR_E_INTERNAL, "cannot encode the entry")
                 : 0;
    json_decref(entry);
    if (rc == 0 && x->b == NULL && (x->b = store_batch_new()) == NULL)
        rc = err_set(err, QR_E_INTERNAL, "out of memory");
    if (rc) goto out;
    if (!x->gsi_locked) {
        pthread_mutex_lock(&x->db->gsi_lock);
        x->gsi_locked = 1;
    }
    char *old;
    size_t old_len;
    int had = item_read_raw_before_write(x->db, ek, &old, &old_len, err);
    if (had < 0) {
        rc = -1;
        goto out;
    }
    int64_t before = had ? stored_size(old, old_len) : -1;
    if (had) free(old);
    store_batch_put(x->b, ek->data, ek->len, val.data, val.len);
    if (s->filled == NULL) {
        s->entry_before = before;
        s->filled = f->ix;
        s->entry_partition = key_partition_hash(ek->data, ek->len);
        s->new_size = size;
    }
out:
    buf_free(&val);
    return rc < 0 ? -1 : 0;
}

int txn_fill(item_txn *x, size_t i, const qr_index *ix, qr_err *err)
{
    txn_slot *s = &x->slots[i];
    if (x->kind != TXN_BATCH || !ix->global)
        return err_set(err, QR_E_INTERNAL, "a fill outside a batch, or of a local index");
    if (x->b && !x->filling)
        return err_set(err, QR_E_INTERNAL, "a fill in a transaction that writes items");
    if (s->filled) return err_set(err, QR_E_INTERNAL, "an item filled twice in one transaction");
    x->filling = 1;
    const json_t *item;
    int found = txn_read(x, i, &item, err);
    if (found <= 0) return found;
    fill_ctx f = {x, s, ix, err};
    /* no entry when the item lacks a key attribute of the index; one per element of a
     * multi-valued index's set */
    return index_each_entry(s->t, ix, item, fill_entry, &f, err) < 0 ? -1 : 0;
}

uint64_t key_partition_hash(const char *key, size_t len)
{
    uint64_t h = 0;
    for (size_t i = 7; i < 15 && i < len; i++)
        h = h << 8 | (unsigned char)key[i];
    return h;
}

/* The size of item's entry in index ix. */
static size_t entry_size(const table *t, const qr_index *ix, const json_t *item)
{
    json_t *entry = index_project(t, ix, item);
    size_t size = entry ? item_size(entry) : 0;
    json_decref(entry);
    return size;
}

/* Reports one write of an item (ix NULL) or index entry to the hook, and charges it: an
 * item the larger of its sizes before and after, an index entry its own, in 1 KB write
 * units, twice over in TransactWriteItems. The engine's own work is not charged. */
static void report_write(item_txn *x, const txn_slot *s, const qr_index *ix, const engine_access *a)
{
    engine_report(x->db, a);
    if (s->t->meters == NULL || x->system) return;
    size_t bytes = ix == NULL && a->old_bytes > a->bytes ? a->old_bytes : a->bytes;
    double units = meter_write_units(bytes) * (a->transactional ? 2.0 : 1.0);
    capacity_charge(x->db, s->t, ix, 1, a->key, a->key_len, units);
}

/* One entry write of a multi-valued index, reported and charged as report_write does. */
typedef struct entry_report {
    item_txn *x;
    const txn_slot *s;
    const qr_index *ix;
    engine_access a;
} entry_report;

static int report_entry(void *arg, const buf *key, size_t bytes, int put)
{
    entry_report *r = arg;
    (void)put;
    r->a.partition = key_partition_hash(key->data, key->len);
    r->a.bytes = bytes;
    r->a.key = key->data;
    r->a.key_len = key->len;
    report_write(r->x, r->s, r->ix, &r->a);
    return 0;
}

/* Reports the index entries one written item changes: the entry put, and the entry
 * removed when the item leaves the index or its entry moves to another key; in a
 * multi-valued index, each element's entry so changed. */
static void report_index_writes(item_txn *x, const txn_slot *s, engine_access a)
{
    buf ok, nk;
    buf_init(&ok, 0);
    buf_init(&nk, 0);
    for (size_t j = 0; j < s->t->nindexes; j++) {
        const qr_index *ix = &s->t->indexes[j];
        if (index_item_multi(s->t, ix, s->old) || index_item_multi(s->t, ix, s->new_item)) {
            entry_report r = {x, s, ix, a};
            r.a.index = ix->name;
            qr_err e;
            err_init(&e);
            index_multi_writes(s->t, ix, s->old, s->new_item, report_entry, &r, &e);
            err_clear(&e);
            continue;
        }
        int writes = 0;
        index_write_bytes(s->t, ix, s->old, s->new_item, &writes);
        if (writes == 0) continue;
        qr_err e;
        err_init(&e);
        buf_reset(&ok);
        buf_reset(&nk);
        int has_old = s->old && index_entry_key(s->t, ix, s->old, &ok, &e) == 1;
        int has_new = s->new_item && index_entry_key(s->t, ix, s->new_item, &nk, &e) == 1;
        err_clear(&e);
        a.index = ix->name;
        if (has_old && !(has_new && ok.len == nk.len && memcmp(ok.data, nk.data, ok.len) == 0)) {
            a.partition = key_partition_hash(ok.data, ok.len);
            a.bytes = entry_size(s->t, ix, s->old);
            a.key = ok.data;
            a.key_len = ok.len;
            report_write(x, s, ix, &a);
        }
        if (has_new) {
            a.partition = key_partition_hash(nk.data, nk.len);
            a.bytes = entry_size(s->t, ix, s->new_item);
            a.key = nk.data;
            a.key_len = nk.len;
            report_write(x, s, ix, &a);
        }
    }
    buf_free(&ok);
    buf_free(&nk);
}

static void report_writes(item_txn *x)
{
    for (size_t i = 0; i < x->n; i++) {
        const txn_slot *s = &x->slots[i];
        if (s->filled) {
            engine_access a = {.table = s->t->name,
                               .index = s->filled->name,
                               .partition = s->entry_partition,
                               .bytes = s->new_size,
                               .write = 1,
                               .system = x->system};
            engine_report(x->db, &a);
            /* A backfill spends its index's write capacity (capacity_backfill_spent). */
            if (s->t->meters)
                capacity_charge_hash(x->db, s->t, s->filled, 1, s->entry_partition,
                                     meter_write_units(s->new_size));
        }
        if (!s->written) continue;
        engine_access a = {.table = s->t->name,
                           .partition = key_partition_hash(s->key->data, s->key->len),
                           .bytes = s->put ? s->new_size : s->old_size,
                           .old_bytes = s->raw ? s->old_size : 0,
                           .write = 1,
                           .system = x->system,
                           .transactional = x->kind == TXN_ATOMIC,
                           .key = s->key->data,
                           .key_len = s->key->len};
        report_write(x, s, NULL, &a);
        a.old_bytes = 0;
        if (s->t->nindexes) report_index_writes(x, s, a);
    }
}

static void unlock_stripe(void *m, uint64_t unused, int written)
{
    (void)unused;
    (void)written;
    pthread_mutex_unlock(m);
}

int txn_commit(item_txn *x, qr_err *err)
{
    if (x->b == NULL || store_batch_count(x->b) == 0) return 0;
    int rc;
    if (x->kind == TXN_ITEM) {
        const txn_slot *s = &x->slots[0];
        /* The item stays locked until its staged write is in the store. */
        rc = store_write_staged(x->db->st, x->b, err);
        if (rc == 0)
            table_stats_adjust_after_commit(s->t, s->put - (s->raw != NULL),
                                            (int64_t)s->new_size - (int64_t)s->old_size);
        store_after_commit(unlock_stripe, x->lock, 0);
        x->lock = NULL;
    } else if (x->filling) {
        /* Not synced: a backfill lost in a crash is done again, as its index is still
         * CREATING at the next open; the synced write that makes the index ACTIVE makes
         * the writes before it durable too. */
        rc = store_write_nosync(x->db->st, x->b, err);
        for (size_t i = 0; rc == 0 && i < x->n; i++) {
            const txn_slot *s = &x->slots[i];
            int64_t after = (int64_t)s->new_size, before = s->entry_before;
            if (s->filled)
                index_stats_adjust(s->t, s->filled->id, 1 - (before >= 0),
                                   after - (before > 0 ? before : 0));
        }
        if (x->gsi_locked) pthread_mutex_unlock(&x->db->gsi_lock);
        x->gsi_locked = 0;
    } else {
        rc = store_write(x->db->st, x->b, err);
        for (size_t i = 0; rc == 0 && i < x->n; i++) {
            const txn_slot *s = &x->slots[i];
            if (s->written)
                table_stats_adjust(s->t, s->put - (s->raw != NULL),
                                   (int64_t)s->new_size - (int64_t)s->old_size);
        }
    }
    if (rc == 0 && (engine_watched(x->db) || x->db->opts.capacity != QR_CAPACITY_OFF))
        report_writes(x);
    return rc;
}

void txn_end(item_txn *x)
{
    if (x == NULL) return;
    if (x->lock) pthread_mutex_unlock(x->lock);
    if (x->gsi_locked) pthread_mutex_unlock(&x->db->gsi_lock);
    if (x->locked) {
        if (x->kind == TXN_BATCH)
            keys_unlock(x->db, x->keys, x->n);
        else
            txn_unlock_keys(x->db, x->keys, x->n);
    }
    for (size_t i = 0; i < x->n; i++) {
        free(x->slots[i].raw);
        json_decref(x->slots[i].old);
        json_decref(x->slots[i].new_item);
    }
    store_batch_free(x->b);
    if (x->slots != &x->one) free(x->slots);
    free(x);
}

static int table_keeps_items_only(const table *t)
{
    return t->nindexes == 0 && !stream_enabled(t) && !pitr_enabled(t);
}

void engine_set_hook(qr_db *db, engine_hook_fn fn, void *arg)
{
    db->hook_arg = arg;
    db->hook = fn;
}

void engine_report(qr_db *db, const engine_access *a)
{
    if (db->hook) db->hook(db->hook_arg, a);
    if (__atomic_load_n(&db->hotkeys_on, __ATOMIC_RELAXED)) hotkeys_note(db, a);
}
