/* batch.c — BatchGetItem and BatchWriteItem.
 *
 * Every request of a batch is validated before any is carried out, so a malformed batch changes
 * nothing. */
#include <stdlib.h>
#include <string.h>

#include "model/value.h"
#include "ops/ops.h"

#define BATCH_GET_MAX 100
#define BATCH_WRITE_MAX 25
#define BATCH_RESPONSE_MAX (16u * 1024 * 1024)

/* A RequestItems key (its shape checked already) given as a table's ARN becomes the table's
 * name, or err says why the ARN names no table of this account and region. DynamoDB takes
 * both and answers under the key given. */
static int resolve_key(json_t *nm, qr_err *err)
{
    if (strncmp(json_string_value(nm), "arn:", 4) != 0) return 0;
    return param_check_table_name(nm, "tableName", err);
}

/* DynamoDB refuses a BatchGetItem that projects with ProjectionExpression for one table
 * and with AttributesToGet for another, as it refuses both in one table's entry. */
static int check_projection_styles(json_t *items, qr_err *err)
{
    int expression = 0, legacy = 0;
    const char *name;
    json_t *spec;
    json_object_foreach(items, name, spec)
    {
        json_t *pe = json_object_get(spec, "ProjectionExpression"),
               *atg = json_object_get(spec, "AttributesToGet");
        expression |= pe != NULL && !json_is_null(pe);
        legacy |= atg != NULL && !json_is_null(atg);
    }
    if (expression && legacy)
        return err_validation(err, QR_MSG_MIXED_EXPRESSIONS
                              "Non-expression parameters: {AttributesToGet} Expression parameters: "
                              "{ProjectionExpression}");
    return 0;
}

/* One table's part of a batch. */
typedef struct batch_table {
    table *t;
    const char *name;
    json_t *spec; /* the request's entry for this table (borrowed) */
    req_exprs x;
    int consistent;
    double units;
    double index_units[QR_MAX_INDEXES]; /* a BatchWriteItem's, per index of t */
} batch_table;

static void tables_free(qr_db *db, batch_table *bt, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        exprs_free(&bt[i].x);
        catalog_release(db, bt[i].t);
    }
    free(bt);
}

/* True if some earlier key in keys (encoded in enc) equals enc[i]. */
static int duplicate_key(buf *enc, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (enc[j].len == enc[i].len && memcmp(enc[j].data, enc[i].data, enc[i].len) == 0) return 1;
    return 0;
}

/* Reads each key and returns what does not fit in the 16 MB response as UnprocessedKeys. */
int op_batch_get_item(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *items = json_object_get(req, "RequestItems");
    const char *capacity = param_text(req, "ReturnConsumedCapacity", "NONE");
    size_t ntables = json_object_size(items), n = 0, total = 0;
    batch_table *bt = calloc(ntables, sizeof *bt);
    buf *enc = NULL;
    size_t nenc = 0;
    int rc = -1;
    const char *name;
    json_t *spec;
    if (check_projection_styles(items, err)) goto done;
    json_object_foreach(items, name, spec)
    {
        batch_table *b = &bt[n++];
        b->name = name;
        b->spec = spec;
        json_t *nm = json_string(name);
        if (resolve_key(nm, err)) {
            json_decref(nm);
            goto done;
        }
        b->t = ops_table_get(db, json_string_value(nm));
        json_decref(nm);
        /* One table's list over the limit breaks its shape (judged already); only a total
         * spread over several tables gets the "Too many items" text. */
        json_t *keys = json_object_get(spec, "Keys");
        total += json_array_size(keys);
        if (total > BATCH_GET_MAX) {
            err_validation(err, "Too many items requested for the BatchGetItem call");
            goto done;
        }
        if (b->t == NULL) {
            err_set(err, QR_E_NOT_FOUND, QR_MSG_NOT_FOUND);
            goto done;
        }
        if (param_bool(spec, "ConsistentRead", 0, &b->consistent, err)) goto done;
        if (exprs_parse(&b->x, spec, EXPRS_PROJECTION, err) || exprs_finish(&b->x)) goto done;
        if (exprs_check_key_paths(&b->x, b->t, err)) goto done;
        enc = realloc(enc, (nenc + json_array_size(keys)) * sizeof *enc);
        size_t base = nenc, i;
        json_t *k;
        json_array_foreach(keys, i, k)
        {
            buf_init(&enc[nenc], 0);
            nenc++;
            if (key_check_key(b->t, k, err) || key_item(&enc[nenc - 1], b->t, k, err)) goto done;
            if (duplicate_key(enc + base, nenc - 1 - base)) {
                err_validation(err, QR_MSG_DUPLICATE_KEYS);
                goto done;
            }
        }
    }
    json_t *responses = json_object(), *unprocessed = json_object();
    size_t e = 0, response_bytes = 0, nthrottled = 0;
    /* A key refused for capacity is returned in UnprocessedKeys; when every key is, the
     * request fails with the first refusal's error. */
    qr_err refused;
    err_init(&refused);
    for (size_t ti = 0; ti < n; ti++) {
        batch_table *b = &bt[ti];
        json_t *list = json_array(), *keys = json_object_get(b->spec, "Keys"), *left = NULL;
        size_t i, bytes = 0;
        json_t *k;
        json_array_foreach(keys, i, k)
        {
            buf *key = &enc[e++];
            if (response_bytes >= BATCH_RESPONSE_MAX) {
                if (left == NULL) left = json_array();
                json_array_append(left, k);
                continue;
            }
            json_t *item = NULL;
            watch_req watched;
            int found = watch_get(db, b->t, k, b->consistent, &watched, err)
                            ? -1
                            : item_get_parsed(db, b->t, NULL, key, b->consistent, &item, err);
            if (found >= 0)
                watch_read_done(&watched, found, found,
                                meter_read_units(found ? item_size(item) : 0, b->consistent));
            if (found < 0 && err_is_throttling(err)) {
                nthrottled++;
                if (refused.type == NULL) {
                    refused = *err;
                    err_init(err);
                } else {
                    err_clear(err);
                }
                if (left == NULL) left = json_array();
                json_array_append(left, k);
                continue;
            }
            if (found < 0) {
                err_clear(&refused);
                json_decref(list);
                json_decref(left);
                json_decref(responses);
                json_decref(unprocessed);
                goto done;
            }
            size_t sz = found ? item_size(item) : 0;
            if (response_bytes + sz > BATCH_RESPONSE_MAX) {
                /* The item would take the answer past 16 MB: it and every key after it
                 * are left unprocessed (DynamoDB returns what fits, never more). */
                json_decref(item);
                response_bytes = BATCH_RESPONSE_MAX;
                if (left == NULL) left = json_array();
                json_array_append(left, k);
                continue;
            }
            /* Each key is read as a GetItem is: a missing item still costs one 4 KB unit. */
            bytes += found ? (sz + 4095) / 4096 * 4096 : 4096;
            if (found) {
                response_bytes += sz;
                json_array_append_new(list, b->x.projection ? expr_project(b->x.projection, item)
                                                            : json_incref(item));
                json_decref(item);
            }
        }
        b->units = 0;
        if (bytes == 0 && json_array_size(keys) > 0) bytes = 1;
        b->units = meter_read_units(bytes, b->consistent);
        json_object_set_new(responses, b->name, list);
        if (left) {
            json_t *rest = json_deep_copy(b->spec);
            json_object_set_new(rest, "Keys", left);
            json_object_set_new(unprocessed, b->name, rest);
        }
    }
    if (nthrottled > 0 && nthrottled == total) {
        *err = refused;
        json_decref(responses);
        json_decref(unprocessed);
        goto done;
    }
    err_clear(&refused);
    c->answer = json_pack("{s:o,s:o}", "Responses", responses, "UnprocessedKeys", unprocessed);
    if (strcmp(capacity, "NONE") != 0) {
        json_t *cc = json_array();
        for (size_t ti = 0; ti < n; ti++)
            json_array_append_new(cc, capacity_object(capacity, bt[ti].name, bt[ti].units, 0));
        json_object_set_new(c->answer, "ConsumedCapacity", cc);
    }
    rc = 0;
done:
    for (size_t i = 0; i < nenc; i++)
        buf_free(&enc[i]);
    free(enc);
    tables_free(db, bt, n);
    return rc;
}

/* One write of a BatchWriteItem. */
typedef struct batch_write {
    batch_table *bt;
    json_t *item; /* PutRequest.Item (borrowed), or NULL for a delete */
    buf *key;     /* its key, in the batch's array of keys */
    json_t *old;
    json_t *request; /* the WriteRequest as given (borrowed) */
    int throttled;   /* refused for capacity: returned in UnprocessedItems */
} batch_write;

/* A BatchWriteItem put whose key attribute is missing or has another type than the
 * schema's is told only that the key does not match (PutItem names the attribute). */
static int check_key_types(const table *t, json_t *item, qr_err *err)
{
    const key_attr *keys[2] = {table_pk(t), table_sk(t)->name ? table_sk(t) : NULL};
    for (int i = 0; i < 2 && keys[i]; i++) {
        json_t *v = json_object_get(item, keys[i]->name);
        if (v == NULL) return err_validation(err, QR_MSG_KEY_SCHEMA);
        if (!json_is_object(v) || json_object_size(v) != 1) continue;
        qr_type ty = value_type(v);
        char actual = ty == QR_T_S ? 'S' : ty == QR_T_N ? 'N' : ty == QR_T_B ? 'B' : '?';
        if (ty != QR_T_NONE && actual != keys[i]->type)
            return err_validation(err, QR_MSG_KEY_SCHEMA);
    }
    return 0;
}

static int parse_write(batch_table *b, json_t *wr, batch_write *w, qr_err *err)
{
    if (!json_is_object(wr) || json_object_size(wr) != 1)
        return err_not_null(err, "requestItems.%s.member.writeRequest", b->name);
    json_t *put = json_object_get(wr, "PutRequest"), *del = json_object_get(wr, "DeleteRequest");
    if (put) {
        json_t *item = json_object_get(put, "Item");
        if (!json_is_object(item))
            return err_not_null(err, "requestItems.%s.member.putRequest.item", b->name);
        if (check_key_types(b->t, item, err) || key_check_item(b->t, item, err) ||
            item_validate(item, err))
            return -1;
        w->item = item;
        return key_item(w->key, b->t, item, err);
    }
    if (del) {
        json_t *key = json_object_get(del, "Key");
        if (!json_is_object(key))
            return err_not_null(err, "requestItems.%s.member.deleteRequest.key", b->name);
        if (key_check_key(b->t, key, err)) return -1;
        return key_item(w->key, b->t, key, err);
    }
    return err_not_null(err, "requestItems.%s.member.writeRequest", b->name);
}

/* Runs all the puts and deletes as one engine item transaction (TXN_BATCH): it locks the items
 * in stripe order, so two batches cannot deadlock, and writes them in one durable batch: one
 * WAL sync for up to 25 writes. */
int op_batch_write_item(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *items = json_object_get(req, "RequestItems");
    const char *capacity = param_text(req, "ReturnConsumedCapacity", "NONE"),
               *metrics = param_text(req, "ReturnItemCollectionMetrics", "NONE");
    size_t ntables = json_object_size(items), n = 0, nw = 0, total = 0;
    batch_table *bt = calloc(ntables, sizeof *bt);
    batch_write *w = calloc(BATCH_WRITE_MAX, sizeof *w);
    buf keys[BATCH_WRITE_MAX];
    item_txn *tx = NULL;
    int rc = -1;
    const char *name;
    json_t *list;
    json_object_foreach(items, name, list)
    {
        batch_table *b = &bt[n++];
        b->name = name;
        json_t *nm = json_string(name);
        if (resolve_key(nm, err)) {
            json_decref(nm);
            goto done;
        }
        b->t = ops_table_get(db, json_string_value(nm));
        json_decref(nm);
        /* One table's list over the limit breaks the map's value constraint (judged
         * already); only a total spread over several tables gets the "Too many items" text. */
        total += json_array_size(list);
        if (total > BATCH_WRITE_MAX) {
            err_validation(err, "Too many items requested for the BatchWriteItem call");
            goto done;
        }
        if (b->t == NULL) {
            err_set(err, QR_E_NOT_FOUND, QR_MSG_NOT_FOUND);
            goto done;
        }
        size_t i;
        json_t *wr;
        json_array_foreach(list, i, wr)
        {
            batch_write *x = &w[nw];
            x->bt = b;
            x->key = &keys[nw];
            buf_init(x->key, 0);
            x->request = wr;
            nw++;
            if (parse_write(b, wr, x, err)) goto done;
            for (size_t j = 0; j + 1 < nw; j++)
                if (keys[j].len == x->key->len &&
                    memcmp(keys[j].data, x->key->data, x->key->len) == 0) {
                    err_validation(err, QR_MSG_DUPLICATE_KEYS);
                    goto done;
                }
        }
    }
    table **tables = malloc((nw ? nw : 1) * sizeof *tables);
    if (tables == NULL) {
        err_set(err, QR_E_INTERNAL, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nw; i++)
        tables[i] = w[i].bt->t;
    /* An item refused for capacity is left out and handed back in UnprocessedItems; only
     * when every item is refused does the request fail, with the first refusal's error. */
    qr_err refused;
    err_init(&refused);
    size_t nrefused = 0;
    uint64_t watched = watch_begin_write(db);
    int wrote = txn_begin(db, TXN_BATCH, nw, tables, keys, &tx, err) == 0;
    for (size_t i = 0; wrote && i < nw; i++) {
        const json_t *old;
        if (txn_read(tx, i, &old, err) < 0)
            wrote = 0;
        else
            w[i].old = json_incref((json_t *)old);
        if (wrote && (w[i].item ? txn_put(tx, i, w[i].item, item_size(w[i].item), err)
                                : txn_delete(tx, i, err))) {
            if (!err_is_throttling(err)) {
                wrote = 0;
                continue;
            }
            w[i].throttled = 1;
            nrefused++;
            if (refused.type == NULL) {
                refused = *err;
                err_init(err);
            } else {
                err_clear(err);
            }
        }
    }
    if (wrote && nw > 0 && nrefused == nw) {
        *err = refused;
        err_init(&refused);
        wrote = 0;
    }
    err_clear(&refused);
    wrote = wrote && txn_commit(tx, err) == 0;
    txn_end(tx);
    tx = NULL;
    free(tables);
    if (!wrote) goto done;
    for (size_t i = 0; watched && i < nw; i++) {
        if (w[i].throttled || (w[i].item == NULL && w[i].old == NULL)) continue;
        size_t os = w[i].old ? item_size(w[i].old) : 0, ns = w[i].item ? item_size(w[i].item) : 0;
        watch_write(db, w[i].bt->t, w[i].item ? WATCH_PUT : WATCH_DELETE,
                    w[i].item ? w[i].item : w[i].old, NULL, 0, meter_write_units(os > ns ? os : ns),
                    watched);
    }
    json_t *unprocessed = json_object();
    for (size_t i = 0; i < nw; i++) {
        const json_t *o = w[i].old, *nv = w[i].item;
        if (w[i].throttled) {
            const char *name = table_name(w[i].bt->t);
            json_t *list = json_object_get(unprocessed, name);
            if (list == NULL) json_object_set_new(unprocessed, name, list = json_array());
            json_array_append(list, w[i].request);
            continue;
        }
        size_t os = o ? item_size(o) : 0, ns = nv ? item_size(nv) : 0;
        w[i].bt->units += meter_write_units(os > ns ? os : ns);
        if (strcmp(capacity, "NONE") == 0) continue; /* index units are only ever reported */
        double idx[QR_MAX_INDEXES] = {0};
        capacity_index_writes(w[i].bt->t, o, nv, idx);
        for (size_t k = 0; k < table_index_count(w[i].bt->t) && k < QR_MAX_INDEXES; k++)
            w[i].bt->index_units[k] += idx[k];
    }
    c->answer = json_pack("{s:o}", "UnprocessedItems", unprocessed);
    if (strcmp(capacity, "NONE") != 0) {
        json_t *cc = json_array();
        for (size_t ti = 0; ti < n; ti++)
            json_array_append_new(cc, capacity_object_indexed(capacity, bt[ti].t, bt[ti].units,
                                                              bt[ti].index_units, 1));
        json_object_set_new(c->answer, "ConsumedCapacity", cc);
    }
    if (strcmp(metrics, "SIZE") == 0) {
        json_t *icm = json_object();
        for (size_t i = 0; i < nw; i++) {
            table *t = w[i].bt->t;
            const json_t *item = w[i].item ? w[i].item : w[i].old;
            if (item == NULL || w[i].throttled || table_lsi_count(t) == 0) continue;
            json_t *list = json_object_get(icm, table_name(t));
            if (list == NULL) json_object_set_new(icm, table_name(t), list = json_array());
            json_array_append_new(list, collection_metrics(db, t, item));
        }
        json_object_set_new(c->answer, "ItemCollectionMetrics", icm);
    }
    rc = 0;
done:
    for (size_t i = 0; i < nw; i++) {
        buf_free(&keys[i]);
        json_decref(w[i].old);
    }
    free(w);
    tables_free(db, bt, n);
    return rc;
}
