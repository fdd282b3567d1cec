/* query.c — Query and Scan: reading a key range a page at a time.
 *
 * Both turn their request into a byte range [lower, upper) of the table's keys — one
 * partition narrowed by the sort-key condition for Query, a slice of the hash-ordered
 * partitions for a Scan segment — and read it in one direction, stopping at Limit items
 * or once 1 MB of items has been read, as DynamoDB does. The filter runs after the read
 * (so filtered items still count in ScannedCount and capacity), then the projection. */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "model/keycodec.h"
#include "model/value.h"
#include "ops/ops.h"

#define PAGE_BYTES (1024 * 1024)

static const char *const capacity_modes[] = {"INDEXES", "TOTAL", "NONE", NULL};
static const char *const select_modes[] = {"ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES", "SPECIFIC_ATTRIBUTES",
                                           "COUNT", NULL};

typedef struct range_read {
    buf lower, upper;     /* [lower, upper) */
    int forward;
    long long limit;      /* 0: no limit */
    const expr_cond *filter;
    const expr_proj *projection;
    int count_only;
    int consistent;
    const qr_index *index; /* the index read, or NULL for the table */
    int fetch_base;        /* read each entry's base item (an LSI asked for more than it holds) */
} range_read;

/* Replaces a prefix by the smallest key greater than every key that starts with it.
 * Returns -1 if there is none (the prefix is all 0xff), leaving it empty. */
static int prefix_successor(buf *b)
{
    while (b->len > 0) {
        unsigned char *last = (unsigned char *)b->data + b->len - 1;
        if (*last != 0xff) {
            (*last)++;
            return 0;
        }
        b->len--;
    }
    return -1;
}

static void set_buf(buf *dst, const buf *src)
{
    buf_reset(dst);
    buf_append(dst, src->data, src->len);
}

static int buf_cmp(const buf *a, const buf *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    if (c) return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* Replaces an index entry by its base item (consumes entry). NULL with err set if the
 * base item cannot be read; an entry whose item is gone meanwhile yields the entry. */
static json_t *fetch_base(qr_db *db, table *t, json_t *entry, qr_err *err)
{
    buf key;
    buf_init(&key, 0);
    json_t *item = NULL;
    int rc = key_item(&key, t, entry, err);
    if (rc == 0) rc = item_read(db, NULL, &key, &item, err);
    buf_free(&key);
    if (rc < 0) {
        json_decref(entry);
        return NULL;
    }
    if (rc == 0) return entry;
    json_decref(entry);
    return item;
}

/* Runs the read, writing the opening of the response — Items, Count, ScannedCount and
 * LastEvaluatedKey, without the closing brace — to out, and sets *bytes to the size of
 * all items read. Stored items are copied into the response as they are unless a filter
 * or projection needs them parsed. */
static int range_run(qr_db *db, table *t, range_read *r, buf *out, size_t *bytes, qr_err *err)
{
    size_t count = 0, scanned = 0, read_bytes = 0;
    int stopped = 0, rc = 0;
    buf last;
    buf_init(&last, 0);
    buf_puts(out, r->count_only ? "{" : "{\"Items\":[");
    store_iter *it = store_iter_new(db->st, NULL, r->lower.data, r->lower.len, r->upper.data, r->upper.len);
    if (r->forward) store_iter_first(it);
    else store_iter_last(it);
    for (; store_iter_valid(it); r->forward ? store_iter_next(it) : store_iter_prev(it)) {
        size_t vl, jlen, size;
        const char *v = store_iter_value(it, &vl), *json;
        if (item_stored(v, vl, &json, &jlen, &size)) continue;
        scanned++;
        read_bytes += size;
        json_t *item = NULL;
        int keep = 1;
        if (r->filter || r->fetch_base || (r->projection && !r->count_only)) {
            if ((item = json_loadb(json, jlen, 0, NULL)) == NULL) {
                rc = err_set(err, QR_E_INTERNAL, "stored item is corrupt");
                break;
            }
        }
        if (r->fetch_base && (item = fetch_base(db, t, item, err)) == NULL) {
            rc = -1;
            break;
        }
        if (r->filter && (keep = expr_cond_eval(r->filter, item, err)) < 0) {
            json_decref(item);
            rc = -1;
            break;
        }
        if (keep) {
            if (!r->count_only) {
                if (count) buf_putc(out, ',');
                if (r->projection) {
                    json_t *p = expr_project(r->projection, item);
                    json_append(out, p);
                    json_decref(p);
                } else if (r->fetch_base) {
                    json_append(out, item);
                } else {
                    buf_append(out, json, jlen);
                }
            }
            count++;
        }
        json_decref(item);
        buf_reset(&last);
        buf_append(&last, json, jlen);
        if ((r->limit && (long long)scanned >= r->limit) || read_bytes >= PAGE_BYTES) {
            stopped = 1;
            break;
        }
    }
    if (rc == 0) rc = store_iter_status(it, err);
    store_iter_free(it);
    if (rc == 0) {
        buf_printf(out, "%s\"Count\":%zu,\"ScannedCount\":%zu", r->count_only ? "" : "],", count, scanned);
        if (stopped && last.len) {
            json_t *item = json_loadb(last.data, last.len, 0, NULL), *k = item ? key_of_item(t, item) : NULL;
            const qr_index *ix = r->index;
            if (k && ix) {
                json_object_set(k, ix->pk, json_object_get(item, ix->pk));
                if (ix->sk) json_object_set(k, ix->sk, json_object_get(item, ix->sk));
            }
            if (k) {
                buf_puts(out, ",\"LastEvaluatedKey\":");
                json_append(out, k);
            }
            json_decref(k);
            json_decref(item);
        }
        *bytes = read_bytes;
    }
    buf_free(&last);
    return rc;
}

/* Closes a Query or Scan response with its consumed capacity. */
static void finish_response(buf *out, const char *capacity, const table *t, size_t bytes, int consistent)
{
    json_t *cc = capacity_object(capacity, t->name, capacity_read_units(bytes, consistent), 0);
    if (cc) {
        buf_puts(out, ",\"ConsumedCapacity\":");
        json_append(out, cc);
        json_decref(cc);
    }
    buf_putc(out, '}');
}

/* Reads the parameters Query and Scan share. */
static int read_common(json_t *req, table *t, range_read *r, const char **capacity, req_exprs *x, qr_err *err)
{
    const char *select, *index;
    int has_limit;
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, "NONE", capacity, err)) return -1;
    if (param_int(req, "Limit", 1, 0x7fffffffLL, &r->limit, &has_limit, err)) return -1;
    if (!has_limit) r->limit = 0;
    if (param_bool(req, "ConsistentRead", 0, &r->consistent, err)) return -1;
    if (param_string(req, "IndexName", &index, err)) return -1;
    if (index) {
        if ((r->index = table_index(t, index)) == NULL)
            return err_validation(err, "The table does not have the specified index: %s", index);
        if (r->index->creating)
            return err_validation(err, "Cannot read from backfilling global secondary index: %s", index);
        if (r->index->global && r->consistent)
            return err_validation(err, "Consistent reads are not supported on global secondary indexes");
    }
    if (param_enum(req, "Select", select_modes, NULL, &select, err)) return -1;
    int projecting = json_object_get(req, "ProjectionExpression") || json_object_get(req, "AttributesToGet");
    if (select && strcmp(select, "ALL_PROJECTED_ATTRIBUTES") == 0 && !r->index)
        return err_validation(err, "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
    if (select && strcmp(select, "SPECIFIC_ATTRIBUTES") == 0 && !projecting)
        return err_validation(err, "SPECIFIC_ATTRIBUTES requires ProjectionExpression or AttributesToGet");
    if (select && projecting && strcmp(select, "SPECIFIC_ATTRIBUTES") != 0)
        return err_validation(err, "Cannot specify the %s when choosing to get %s",
                              json_object_get(req, "ProjectionExpression") ? "ProjectionExpression" : "AttributesToGet",
                              select);
    r->count_only = select && strcmp(select, "COUNT") == 0;
    r->filter = x->filter;
    r->projection = x->projection;
    if (r->index && r->index->projection != QR_PROJ_ALL) {
        int wants_all = select && strcmp(select, "ALL_ATTRIBUTES") == 0;
        if (wants_all && r->index->global)
            return err_validation(err, "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not "
                                       "supported for global secondary index %s because its projection type is not ALL",
                                  r->index->name);
        /* A local index reads the table for what it does not hold, as DynamoDB does. */
        if (!r->index->global && (wants_all || projecting || r->filter)) r->fetch_base = 1;
    }
    return 0;
}

/* Narrows the range to start after ExclusiveStartKey (in the read's direction). */
static int apply_start_key(json_t *req, table *t, range_read *r, qr_err *err)
{
    json_t *esk;
    if (param_object(req, "ExclusiveStartKey", &esk, err)) return -1;
    if (esk == NULL) return 0;
    qr_err inner;
    err_init(&inner);
    buf k;
    buf_init(&k, 0);
    if (r->index) {
        json_t *base = key_of_item(t, esk);
        int bad = key_check_key(t, base, &inner) || index_entry_key(t, r->index, esk, &k, &inner) != 1;
        json_decref(base);
        if (bad) {
            buf_free(&k);
            return err_validation(err, "The provided starting key is invalid: %s",
                                  inner.type ? inner.msg : "The provided key element does not match the schema");
        }
    } else {
        if (key_check_key(t, esk, &inner)) {
            buf_free(&k);
            return err_validation(err, "The provided starting key is invalid: %s", inner.msg);
        }
        if (key_item(&k, t, esk, err)) {
            buf_free(&k);
            return -1;
        }
    }
    if (r->forward) {
        buf_putc(&k, 0);
        if (buf_cmp(&k, &r->lower) > 0) set_buf(&r->lower, &k);
    } else if (buf_cmp(&k, &r->upper) < 0) {
        set_buf(&r->upper, &k);
    }
    buf_free(&k);
    return 0;
}

static void range_free(range_read *r)
{
    buf_free(&r->lower);
    buf_free(&r->upper);
}

/* A new AttributeValue: the smallest S or B value greater than every value that begins
 * with v, or NULL if there is none. */
static json_t *prefix_value_successor(const json_t *v)
{
    buf b;
    buf_init(&b, 0);
    json_t *out = NULL;
    if (value_type(v) == QR_T_S) {
        json_t *p = value_payload(v);
        buf_append(&b, json_string_value(p), json_string_length(p));
        if (prefix_successor(&b) == 0) out = json_pack("{s:o}", "S", json_stringn_nocheck(b.data, b.len));
    } else {
        unsigned char *raw;
        size_t n;
        if (value_binary(v, &raw, &n) == 0) {
            buf_append(&b, raw, n);
            free(raw);
            if (prefix_successor(&b) == 0) {
                char *enc = malloc(4 * ((b.len + 2) / 3) + 1);
                int m = EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)b.data, (int)b.len);
                out = json_pack("{s:s%}", "B", enc, (size_t)m);
                free(enc);
            }
        }
    }
    buf_free(&b);
    return out;
}

/* Sets the range for one partition and a sort-key condition. */
static int query_range(table *t, uint16_t index_id, const expr_keycond *kc, range_read *r, qr_err *err)
{
    buf part;
    buf_init(&part, 0);
    if (key_partition(&part, t, index_id, kc->pk_value, err)) {
        buf_free(&part);
        return -1;
    }
    set_buf(&r->lower, &part);
    set_buf(&r->upper, &part);
    prefix_successor(&r->upper);
    int rc = 0;
    if (kc->sk_op != EXPR_KEY_NONE) {
        buf a, b;
        buf_init(&a, 0);
        buf_init(&b, 0);
        set_buf(&a, &part);
        rc = keycodec_append(&a, kc->sk_value1, 0, err);
        if (rc == 0 && kc->sk_op == EXPR_KEY_BETWEEN) {
            set_buf(&b, &part);
            rc = keycodec_append(&b, kc->sk_value2, 0, err);
        }
        if (rc == 0) switch (kc->sk_op) {
            /* An index entry's key continues after the sort key (with the table's key), so
             * "just after value v" is the successor of every key starting with v. */
            case EXPR_KEY_EQ:
                set_buf(&r->lower, &a);
                prefix_successor(&a);
                set_buf(&r->upper, &a);
                break;
            case EXPR_KEY_LT: set_buf(&r->upper, &a); break;
            case EXPR_KEY_LE:
                prefix_successor(&a);
                set_buf(&r->upper, &a);
                break;
            case EXPR_KEY_GT:
                prefix_successor(&a);
                set_buf(&r->lower, &a);
                break;
            case EXPR_KEY_GE: set_buf(&r->lower, &a); break;
            case EXPR_KEY_BETWEEN:
                set_buf(&r->lower, &a);
                prefix_successor(&b);
                set_buf(&r->upper, &b);
                break;
            case EXPR_KEY_BEGINS_WITH: {
                set_buf(&r->lower, &a);
                json_t *succ = prefix_value_successor(kc->sk_value1);
                if (succ) {
                    set_buf(&b, &part);
                    rc = keycodec_append(&b, succ, 0, err);
                    json_decref(succ);
                    if (rc == 0) set_buf(&r->upper, &b);
                }
                break;
            }
            default: break;
            }
        buf_free(&a);
        buf_free(&b);
    }
    buf_free(&part);
    return rc;
}

static int check_filter_keys(const table *t, const qr_index *ix, const expr_cond *filter, qr_err *err)
{
    if (filter == NULL) return 0;
    const char *keys[2] = {ix ? ix->pk : t->pk.name, ix ? ix->sk : t->sk.name};
    for (int i = 0; i < 2; i++)
        if (keys[i] && expr_cond_mentions(filter, keys[i]))
            return err_validation(err, "Filter Expression can only contain non-primary key attributes: "
                                       "Primary key attribute: %s", keys[i]);
    return 0;
}

int op_query(qr_db *db, json_t *req, buf *out, qr_err *err)
{
    table *t = NULL;
    req_exprs x = {0};
    expr_keycond kc = {0};
    range_read r = {0};
    const char *capacity;
    size_t bytes = 0;
    int rc = -1;
    buf_init(&r.lower, 0);
    buf_init(&r.upper, 0);
    if (param_table(db, req, "TableName", &t, err)) goto done;
    if (exprs_parse(&x, req, EXPRS_FILTER | EXPRS_PROJECTION | EXPRS_KEY_CONDITION, err)) goto done;
    if (read_common(req, t, &r, &capacity, &x, err)) goto done;
    if (param_bool(req, "ScanIndexForward", 1, &r.forward, err)) goto done;
    json_t *kcs;
    if (param_object(req, "KeyConditions", &kcs, err)) goto done;
    const char *pkn = r.index ? r.index->pk : t->pk.name, *skn = r.index ? r.index->sk : t->sk.name;
    char pkt = r.index ? r.index->pk_type : t->pk.type;
    char skt = r.index ? (r.index->sk ? r.index->sk_type : 0) : (t->sk.name ? t->sk.type : 0);
    if (x.has_key_condition) {
        if (expr_parse_key_condition(&x.cx, json_string_value(json_object_get(req, "KeyConditionExpression")), pkn,
                                     pkt, skn, skt, &kc))
            goto done;
    } else if (kcs) {
        if (expr_from_key_conditions(kcs, pkn, pkt, skn, skt, &kc, err)) goto done;
    } else {
        err_validation(err, "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.");
        goto done;
    }
    if (exprs_finish(&x)) goto done;
    if (check_filter_keys(t, r.index, x.filter, err)) goto done;
    if (query_range(t, r.index ? r.index->id : 0, &kc, &r, err)) goto done;
    if (apply_start_key(req, t, &r, err)) goto done;
    if (range_run(db, t, &r, out, &bytes, err)) goto done;
    finish_response(out, capacity, t, bytes, r.consistent);
    rc = 0;
done:
    expr_keycond_free(&kc);
    exprs_free(&x);
    range_free(&r);
    catalog_release(db, t);
    return rc;
}

int op_scan(qr_db *db, json_t *req, buf *out, qr_err *err)
{
    table *t = NULL;
    req_exprs x = {0};
    range_read r = {0};
    const char *capacity;
    long long segment = 0, total = 1;
    int has_segment, has_total, rc = -1;
    size_t bytes = 0;
    buf_init(&r.lower, 0);
    buf_init(&r.upper, 0);
    r.forward = 1;
    if (param_table(db, req, "TableName", &t, err)) goto done;
    if (exprs_parse(&x, req, EXPRS_FILTER | EXPRS_PROJECTION, err) || exprs_finish(&x)) goto done;
    if (read_common(req, t, &r, &capacity, &x, err)) goto done;
    if (param_int(req, "Segment", 0, 999999, &segment, &has_segment, err)) goto done;
    if (param_int(req, "TotalSegments", 1, 1000000, &total, &has_total, err)) goto done;
    if (has_segment != has_total) {
        err_validation(err, has_segment ? "The TotalSegments parameter is required but was not present in the request when Segment parameter is present"
                                        : "The Segment parameter is required but was not present in the request when parameter TotalSegments is present");
        goto done;
    }
    if (!has_total) total = 1, segment = 0;
    if (segment >= total) {
        err_validation(err, "The Segment parameter is zero-based and must be less than parameter TotalSegments: "
                            "Segment: %lld is not less than TotalSegments: %lld", segment, total);
        goto done;
    }
    /* Segment s of n holds the partitions whose hash lies in [s*2^64/n, (s+1)*2^64/n). */
    key_table_prefix(&r.lower, t, r.index ? r.index->id : 0);
    key_table_prefix(&r.upper, t, r.index ? r.index->id : 0);
    unsigned __int128 span = ((unsigned __int128)1) << 64;
    buf_put_be64(&r.lower, (uint64_t)(span * (unsigned long long)segment / (unsigned long long)total));
    if (segment + 1 < total) buf_put_be64(&r.upper, (uint64_t)(span * (unsigned long long)(segment + 1) / (unsigned long long)total));
    else prefix_successor(&r.upper);
    if (apply_start_key(req, t, &r, err)) goto done;
    if (range_run(db, t, &r, out, &bytes, err)) goto done;
    finish_response(out, capacity, t, bytes, r.consistent);
    rc = 0;
done:
    exprs_free(&x);
    range_free(&r);
    catalog_release(db, t);
    return rc;
}
