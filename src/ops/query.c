/* query.c — Query and Scan: reading a key range a page at a time.
 *
 * Handlers read a request into a query_request that query_read and scan_read run (as
 * PartiQL's SELECT does). The filter runs after the read (so filtered items still count
 * in ScannedCount and capacity), then the projection. */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "model/keycodec.h"
#include "model/value.h"
#include "ops/ops.h"
#include "util/jsonread.h"

#define PAGE_BYTES (1024 * 1024)

typedef struct range_read {
    buf lower, upper; /* [lower, upper) */
    int forward;
    long long limit; /* 0: no limit */
    const expr_cond *filter;
    const expr_proj *projection;
    int count_only;
    int consistent;
    const qr_index *index; /* the index read, or NULL for the table */
    int fetch_base;        /* return each entry's base item (an LSI asked for more than it holds) */
    long long segment, total_segments; /* a Scan's part of the table */
    size_t count, scanned;             /* set by range_run: items returned and read */
} range_read;

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

/* Reads the base item behind an index entry into *base (NULL if it is gone meanwhile). */
static int read_base(qr_db *db, table *t, const json_t *entry, int consistent, json_t **base,
                     qr_err *err)
{
    buf key;
    buf_init(&key, 0);
    *base = NULL;
    int rc = key_item(&key, t, entry, err);
    if (rc == 0) rc = item_get_parsed(db, t, NULL, &key, consistent, base, err);
    buf_free(&key);
    return rc < 0 ? -1 : 0;
}

/* Both turn their request into a byte range [lower, upper) of the table's keys — one partition
 * narrowed by the sort-key condition for Query, a slice of the hash-ordered partitions for a
 * Scan segment — and read it in one direction, stopping at Limit items or once 1 MB of items
 * has been read, as DynamoDB does.
 *
 * Runs the read, writing the opening of the response — Items, Count, ScannedCount and
 * LastEvaluatedKey, without the closing brace — to out, and sets *bytes to the size of
 * all items read and *fetch_units to what reading base items behind an LSI's entries
 * cost. Stored items are copied into the response as they are unless a filter or
 * projection needs them parsed. */
static int range_run(qr_db *db, table *t, range_read *r, buf *out, size_t *bytes,
                     double *fetch_units, qr_err *err)
{
    size_t count = 0, scanned = 0, read_bytes = 0, page_bytes = 0;
    double fetched = 0;
    int stopped = 0, rc = 0;
    buf last;
    buf_init(&last, 0);
    buf_puts(out, r->count_only ? "{" : "{\"Items\":[");
    range_cursor *c =
        cursor_open(db, t, r->index, &r->lower, &r->upper, r->forward, r->consistent, NULL);
    if (c == NULL) rc = err_set(err, QR_E_INTERNAL, "out of memory");
    while (rc == 0) {
        size_t jlen, size;
        const char *json;
        int got = cursor_next(c, &json, &jlen, &size, err);
        if (got <= 0) {
            rc = got;
            break;
        }
        scanned++;
        read_bytes += size;
        /* The page's 1 MB counts what was read (the entry, for an index) as DynamoDB
         * counts it, which is not its item_size (item_page_size). */
        page_bytes += cursor_page_size(c);
        json_t *item = NULL;
        int keep = 1;
        if (r->filter || r->fetch_base || (r->projection && !r->count_only)) {
            if ((item = json_read(json, jlen, JSON_ALLOW_NUL, NULL)) == NULL) {
                rc = err_set(err, QR_E_INTERNAL, "stored item is corrupt");
                break;
            }
        }
        /* An LSI asked for what it does not hold reads every entry's base item, each
         * read charged to the table on its own (its size rounded up to 4 KB), whether
         * the filter keeps the entry or not (recorded by the public conformance suite). */
        json_t *base = NULL;
        if (r->fetch_base) {
            if (read_base(db, t, item, r->consistent, &base, err)) {
                json_decref(item);
                rc = -1;
                break;
            }
            if (base) fetched += meter_read_units(item_size(base), r->consistent);
        }
        /* The filter sees what the read holds: an index entry, not the item behind it. */
        if (r->filter && (keep = expr_cond_eval(r->filter, item, err)) < 0) {
            json_decref(item);
            json_decref(base);
            rc = -1;
            break;
        }
        if (base) {
            json_decref(item);
            item = base;
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
        if ((r->limit && (long long)scanned >= r->limit) || page_bytes >= PAGE_BYTES) {
            stopped = 1;
            break;
        }
    }
    cursor_close(c);
    if (rc == 0) {
        buf_printf(out, "%s\"Count\":%zu,\"ScannedCount\":%zu", r->count_only ? "" : "],", count,
                   scanned);
        if (stopped && last.len) {
            json_t *item = json_read(last.data, last.len, JSON_ALLOW_NUL, NULL),
                   *k = item ? key_of_item(t, item) : NULL;
            const qr_index *ix = r->index;
            for (int i = 0; k && ix && i < ix->npk + ix->nsk; i++) {
                const char *name = i < ix->npk ? ix->pk[i] : ix->sk[i - ix->npk];
                json_object_set(k, name, json_object_get(item, name));
            }
            if (k) {
                buf_puts(out, ",\"LastEvaluatedKey\":");
                json_append(out, k);
            }
            json_decref(k);
            json_decref(item);
        }
        *bytes = read_bytes;
        *fetch_units = fetched;
        r->count = count;
        r->scanned = scanned;
    }
    buf_free(&last);
    return rc;
}

/* Closes a Query or Scan response with its consumed capacity (the index's, when one was
 * read, and the table's for base items fetched behind it). */
static void finish_response(buf *out, const char *capacity, const table *t, const qr_index *ix,
                            size_t bytes, double fetch_units, int consistent)
{
    double units = meter_read_units(bytes, consistent), idx[QR_MAX_INDEXES] = {0};
    if (ix) idx[ix - table_indexes(t)] = units;
    json_t *cc = ix ? capacity_object_indexed(capacity, t, fetch_units, idx, 0)
                    : capacity_object(capacity, table_name(t), units, 0);
    if (cc) {
        buf_puts(out, ",\"ConsumedCapacity\":");
        json_append(out, cc);
        json_decref(cc);
    }
    buf_putc(out, '}');
}

static int asks_beyond(const table *t, const qr_index *ix, const expr_proj *p);

/* The integer member key of req, and whether it has one (its shape checked already). */
static int member_count(const json_t *req, const char *key, long long *out)
{
    json_t *v = json_object_get(req, key);
    if (!json_is_integer(v)) return 0;
    *out = json_integer_value(v);
    return 1;
}

int query_index(const table *t, const char *name, int consistent, const qr_index **out, qr_err *err)
{
    *out = NULL;
    if (name == NULL) return 0;
    const qr_index *ix = table_index(t, name);
    if (ix == NULL)
        return err_validation(err, "The table does not have the specified index: %s", name);
    if (ix->creating)
        return err_validation(err, "Cannot read from backfilling global secondary index: %s", name);
    if (ix->global && consistent) {
        watch_strong_read(table_name(t), name);
        return err_validation(err,
                              "Consistent reads are not supported on global secondary indexes");
    }
    *out = ix;
    return 0;
}

/* Reads the parameters Query and Scan share into q, with the expressions x parsed. */
static int read_common(json_t *req, table *t, query_request *q, req_exprs *x, int is_query,
                       qr_err *err)
{
    q->t = t;
    q->capacity = param_text(req, "ReturnConsumedCapacity", "NONE");
    if (!member_count(req, "Limit", &q->limit)) q->limit = 0;
    if (param_bool(req, "ConsistentRead", 0, &q->consistent, err)) return -1;
    const char *index = param_text(req, "IndexName", NULL);
    if (query_index(t, index, q->consistent, &q->index, err)) return -1;
    const char *select = param_text(req, "Select", NULL);
    int projecting =
        json_object_get(req, "ProjectionExpression") || json_object_get(req, "AttributesToGet");
    /* A projection beside ALL_PROJECTED_ATTRIBUTES is refused before the missing index
     * (recorded by the public conformance suite, for Query and Scan). */
    int projected_all = select && strcmp(select, "ALL_PROJECTED_ATTRIBUTES") == 0;
    if (projected_all && !q->index && !projecting)
        return err_validation(
            err, "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
    if (select && strcmp(select, "SPECIFIC_ATTRIBUTES") == 0 && !projecting)
        return err_validation(
            err,
            "%sMust specify the AttributesToGet or ProjectionExpression when choosing to "
            "get SPECIFIC_ATTRIBUTES",
            is_query ? "1 validation error detected: " : "");
    if (select && projecting && strcmp(select, "SPECIFIC_ATTRIBUTES") != 0) {
        int count = strcmp(select, "COUNT") == 0;
        return err_validation(err, "%sCannot specify the %s when choosing to get %s",
                              is_query && count ? "1 validation error detected: " : "",
                              json_object_get(req, "ProjectionExpression") ? "ProjectionExpression"
                                                                           : "AttributesToGet",
                              count ? "only the Count" : select);
    }
    q->select = select;
    q->filter = x->filter;
    q->projection = x->projection;
    if (q->index && q->index->projection != QR_PROJ_ALL && q->index->global && select &&
        strcmp(select, "ALL_ATTRIBUTES") == 0)
        return err_validation(
            err,
            QR_MSG_INVALID_PARAMETER
            "Select type ALL_ATTRIBUTES is not "
            "supported for global secondary index %s because its projection type is not ALL",
            q->index->name);
    q->start_key = json_object_get(req, "ExclusiveStartKey");
    return 0;
}

/* The read q describes, without its range. */
static void range_init(const query_request *q, range_read *r)
{
    memset(r, 0, sizeof *r);
    buf_init(&r->lower, 0);
    buf_init(&r->upper, 0);
    r->forward = q->forward;
    r->limit = q->limit;
    r->filter = q->filter;
    r->projection = q->projection;
    r->count_only = q->select && strcmp(q->select, "COUNT") == 0;
    r->consistent = q->consistent;
    r->index = q->index;
    /* A local index reads the table for attributes asked for that it does not hold,
     * as DynamoDB does; its filter sees only what it holds (check_filter_projection).
     * Asked only for what it holds, it reads the index alone. */
    const qr_index *ix = q->index;
    if (ix && ix->projection != QR_PROJ_ALL && !ix->global &&
        ((q->select && strcmp(q->select, "ALL_ATTRIBUTES") == 0) ||
         (q->projection && asks_beyond(q->t, ix, q->projection))))
        r->fetch_base = 1;
}

/* True if an index of t projects the top-level attribute name. */
static int index_holds(const table *t, const qr_index *ix, const char *name)
{
    if (ix->projection == QR_PROJ_ALL || strcmp(name, table_pk(t)->name) == 0 ||
        (table_sk(t)->name && strcmp(name, table_sk(t)->name) == 0))
        return 1;
    for (int i = 0; i < ix->npk + ix->nsk; i++)
        if (strcmp(name, i < ix->npk ? ix->pk[i] : ix->sk[i - ix->npk]) == 0) return 1;
    size_t i;
    json_t *v;
    json_array_foreach(ix->include, i, v)
    {
        if (strcmp(name, json_string_value(v)) == 0) return 1;
    }
    return 0;
}

/* True if projection p names a top-level attribute the index does not hold. */
static int asks_beyond(const table *t, const qr_index *ix, const expr_proj *p)
{
    json_t *names = expr_proj_top_names(p);
    size_t i;
    json_t *v;
    int beyond = names == NULL; /* out of memory: read the table, which holds everything */
    json_array_foreach(names, i, v)
    {
        if (!index_holds(t, ix, json_string_value(v))) beyond = 1;
    }
    json_decref(names);
    return beyond;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* Takes names (a new JSON array of distinct top-level names) and, if the index lacks any,
 * sets DynamoDB's error "<kind> index <name> does not project <what>[a, b]" (the names
 * sorted if asked, else in request order). */
static int refuse_unprojected(const table *t, const qr_index *ix, json_t *names, int sorted,
                              const char *kind, const char *what, qr_err *err)
{
    size_t n = json_array_size(names), nmissing = 0;
    json_t **missing = malloc((n ? n : 1) * sizeof *missing);
    int rc = 0;
    if (missing == NULL) {
        rc = err_set(err, QR_E_INTERNAL, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) {
            json_t *name = json_array_get(names, i);
            if (!index_holds(t, ix, json_string_value(name))) missing[nmissing++] = name;
        }
        if (sorted) qsort(missing, nmissing, sizeof *missing, by_name);
        if (nmissing) {
            buf list;
            buf_init(&list, 0);
            for (size_t i = 0; i < nmissing; i++)
                buf_printf(&list, "%s%s", i ? ", " : "", json_string_value(missing[i]));
            rc = err_validation(err, QR_MSG_INVALID_PARAMETER "%s index %s does not project %s[%s]",
                                kind, ix->name, what, list.data);
            buf_free(&list);
        }
    }
    free(missing);
    json_decref(names);
    return rc;
}

/* A Query of an index that does not project every attribute may filter only on what
 * it projects: DynamoDB refuses a QueryFilter or FilterExpression on any other attribute
 * (a Scan's filter just finds it missing). */
static int check_filter_projection(const table *t, const qr_index *ix, const expr_cond *filter,
                                   qr_err *err)
{
    if (ix == NULL || ix->projection == QR_PROJ_ALL || filter == NULL) return 0;
    return refuse_unprojected(t, ix, expr_cond_top_names(filter), 1, "Secondary",
                              "one or more filter attributes: ", err);
}

/* A global index cannot fetch what it does not project, so DynamoDB refuses a
 * ProjectionExpression or AttributesToGet naming any other top-level attribute. */
static int check_index_projection(const table *t, const qr_index *ix, const expr_proj *projection,
                                  qr_err *err)
{
    if (ix == NULL || !ix->global || ix->projection == QR_PROJ_ALL || projection == NULL) return 0;
    return refuse_unprojected(t, ix, expr_proj_top_names(projection), 0, "Global secondary", "",
                              err);
}

/* Query and Scan refuse an ExpressionAttributeValue nested deeper than an item may be. */
static int check_value_nesting(json_t *req, qr_err *err)
{
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(req, "ExpressionAttributeValues"), k, v)
    {
        if (value_nesting(v) > QR_MAX_DEPTH)
            return err_validation(err,
                                  QR_MSG_INVALID_VALUE "Nesting Levels have "
                                                       "exceeded supported limits for key %s",
                                  k);
    }
    return 0;
}

/* The number of attributes a start key for an index read holds: the table's key
 * attributes and the index's, each once. */
static size_t index_start_key_size(const table *t, const qr_index *ix)
{
    const char *names[2 + QR_MAX_KEY_ATTRS * 2];
    size_t n = 0;
    names[n++] = table_pk(t)->name;
    if (table_sk(t)->name) names[n++] = table_sk(t)->name;
    for (int i = 0; i < ix->npk + ix->nsk; i++) {
        const char *name = i < ix->npk ? ix->pk[i] : ix->sk[i - ix->npk];
        size_t j = 0;
        while (j < n && strcmp(names[j], name) != 0)
            j++;
        if (j == n) names[n++] = name;
    }
    return n;
}

/* Encodes a start key as the read's position: an index entry's key, or the item's key. */
static int encode_start_key(table *t, const range_read *r, json_t *esk, int is_query, buf *k,
                            qr_err *err)
{
    /* Most regions still tell a Scan why its key is refused (28 of 33 in October 2026). */
    const char *bad_text =
        is_query ? "The provided starting key is invalid"
                 : "The provided starting key is invalid: The provided key element does not match "
                   "the schema";
    qr_err inner;
    err_init(&inner);
    /* A malformed number or a repeated set member is reported as what it is, before
     * the key is judged (recorded in four regions, October 2026). */
    const char *name;
    json_t *v;
    json_object_foreach(esk, name, v)
    {
        if (value_validate(v, 1, name, &inner) && value_error_is_malformed(&inner)) {
            err_set(err, inner.type, "%s", inner.msg);
            err_clear(&inner);
            return -1;
        }
        err_clear(&inner);
    }
    if (r->index) {
        json_t *base = key_of_item(t, esk);
        int bad = json_object_size(esk) != index_start_key_size(t, r->index) ||
                  key_check_key(t, base, &inner) ||
                  index_entry_key(t, r->index, esk, k, &inner) != 1;
        json_decref(base);
        if (bad) return err_validation(err, "%s", bad_text);
        return 0;
    }
    if (key_check_key(t, esk, &inner)) return err_validation(err, "%s", bad_text);
    return key_item(k, t, esk, err);
}

static int in_range(const buf *k, const range_read *r)
{
    return buf_cmp(k, &r->lower) >= 0 && buf_cmp(k, &r->upper) < 0;
}

/* Checks a Query's start key against its key condition (ks and kcm given) as DynamoDB
 * does: its sort key must satisfy the sort-key condition, then its partition must be the
 * one queried. k is the start key's position. */
static int check_query_start(table *t, const range_read *r, json_t *esk, const buf *k,
                             const expr_key_schema *ks, const expr_keycond_multi *kcm, qr_err *err)
{
    int same_partition = 1;
    for (int i = 0; i < ks->npk; i++)
        same_partition &= value_equal(json_object_get(esk, ks->pk_names[i]), kcm->pk_values[i]);
    int rc = 0, satisfies = in_range(k, r);
    if (!same_partition) {
        /* Judge the sort key as if the start key were in the queried partition. */
        json_t *moved = json_copy(esk);
        for (int i = 0; i < ks->npk; i++)
            json_object_set(moved, ks->pk_names[i], kcm->pk_values[i]);
        buf k2;
        buf_init(&k2, 0);
        rc = encode_start_key(t, r, moved, 1, &k2, err);
        satisfies = rc == 0 && in_range(&k2, r);
        buf_free(&k2);
        json_decref(moved);
    }
    if (rc) return -1;
    if (!satisfies)
        return err_validation(err,
                              "The provided starting key does not match the range key predicate");
    if (!same_partition)
        return err_validation(
            err, kcm->nsk_eq || kcm->last_op != EXPR_KEY_NONE
                     ? "The query can return at most one row and cannot be restarted"
                     : "The provided starting key is outside query boundaries based on provided "
                       "conditions");
    return 0;
}

/* Narrows the range to start after ExclusiveStartKey esk, as given (in the read's
 * direction). A Query's start key (ks and kcm given) must match its key condition; a
 * Scan's must lie in the segment read. */
static int apply_start_key(json_t *esk, table *t, range_read *r, const expr_key_schema *ks,
                           const expr_keycond_multi *kcm, qr_err *err)
{
    if (esk == NULL || json_is_null(esk)) return 0;
    if (value_wire_check(esk, WIRE_MAP, 1, NULL, err)) return -1;
    buf k;
    buf_init(&k, 0);
    int rc = encode_start_key(t, r, esk, ks != NULL, &k, err);
    if (rc == 0 && ks && kcm)
        rc = check_query_start(t, r, esk, &k, ks, kcm, err);
    else if (rc == 0 && !in_range(&k, r))
        rc = err_validation(
            err,
            "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use "
            "ExclusiveStartKey with correct Segment. TotalSegments: %lld Segment: %lld",
            r->total_segments, r->segment);
    if (rc == 0) {
        if (r->forward) {
            buf_putc(&k, 0);
            if (buf_cmp(&k, &r->lower) > 0) set_buf(&r->lower, &k);
        } else if (buf_cmp(&k, &r->upper) < 0) {
            set_buf(&r->upper, &k);
        }
    }
    buf_free(&k);
    return rc;
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
        if (buf_prefix_successor(&b) == 0)
            out = json_pack("{s:o}", "S", json_stringn_nocheck(b.data, b.len));
    } else {
        unsigned char *raw;
        size_t n;
        if (value_binary(v, &raw, &n) == 0) {
            buf_append(&b, raw, n);
            free(raw);
            if (buf_prefix_successor(&b) == 0) {
                char *enc = malloc(4 * ((b.len + 2) / 3) + 1);
                int m = EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)b.data,
                                        (int)b.len);
                out = json_pack("{s:s%}", "B", enc, (size_t)m);
                free(enc);
            }
        }
    }
    buf_free(&b);
    return out;
}

/* The key values a key condition gives are held to the sizes stored keys have, with
 * GetItem's messages: a longer one could match nothing, and its encoding must not grow
 * without bound. */
static int check_key_sizes(const expr_keycond_multi *kc, int npk, qr_err *err)
{
    for (int i = 0; i < npk; i++)
        if (kc->pk_values[i] && value_size(kc->pk_values[i]) > QR_MAX_PK_SIZE)
            return err_validation(err, QR_MSG_INVALID_PARAMETER "Size of hashkey has exceeded the "
                                                                "maximum size limit of2048 bytes");
    const json_t *sk[EXPR_KEY_MAX_ATTRS + 2];
    int n = 0;
    for (int i = 0; i < kc->nsk_eq; i++)
        sk[n++] = kc->sk_eq[i];
    sk[n++] = kc->last_v1;
    sk[n++] = kc->last_v2;
    for (int i = 0; i < n; i++)
        if (sk[i] && value_size(sk[i]) > QR_MAX_SK_SIZE)
            return err_validation(err, QR_MSG_INVALID_PARAMETER
                                  "Aggregated size of all range keys "
                                  "has exceeded the size limit of 1024 bytes");
    return 0;
}

/* Sets the range for one partition and a sort-key condition: the partition's prefix,
 * narrowed by the sort-key attributes tested for equality, then by the last test. */
static int query_range(table *t, uint16_t index_id, const expr_keycond_multi *kc, int npk,
                       range_read *r, qr_err *err)
{
    if (check_key_sizes(kc, npk, err)) return -1;
    buf part;
    buf_init(&part, 0);
    int rc =
        key_partition_tuple(&part, t, index_id, (const json_t *const *)kc->pk_values, npk, err);
    for (int i = 0; rc == 0 && i < kc->nsk_eq; i++)
        rc = keycodec_append(&part, kc->sk_eq[i], 0, err);
    if (rc) {
        buf_free(&part);
        return -1;
    }
    set_buf(&r->lower, &part);
    set_buf(&r->upper, &part);
    buf_prefix_successor(&r->upper);
    if (kc->last_op != EXPR_KEY_NONE) {
        buf a, b;
        buf_init(&a, 0);
        buf_init(&b, 0);
        set_buf(&a, &part);
        rc = keycodec_append(&a, kc->last_v1, 0, err);
        if (rc == 0 && kc->last_op == EXPR_KEY_BETWEEN) {
            set_buf(&b, &part);
            rc = keycodec_append(&b, kc->last_v2, 0, err);
        }
        /* Entries continue after the sort key (an index entry ends with the table's key),
         * so "just after value v" is the successor of every key starting with v. */
        if (rc == 0) switch (kc->last_op) {
            case EXPR_KEY_LT:
                set_buf(&r->upper, &a);
                break;
            case EXPR_KEY_LE:
                buf_prefix_successor(&a);
                set_buf(&r->upper, &a);
                break;
            case EXPR_KEY_GT:
                buf_prefix_successor(&a);
                set_buf(&r->lower, &a);
                break;
            case EXPR_KEY_GE:
                set_buf(&r->lower, &a);
                break;
            case EXPR_KEY_BETWEEN:
                set_buf(&r->lower, &a);
                buf_prefix_successor(&b);
                set_buf(&r->upper, &b);
                break;
            case EXPR_KEY_BEGINS_WITH: {
                set_buf(&r->lower, &a);
                json_t *succ = prefix_value_successor(kc->last_v1);
                if (succ) {
                    set_buf(&b, &part);
                    rc = keycodec_append(&b, succ, 0, err);
                    json_decref(succ);
                    if (rc == 0) set_buf(&r->upper, &b);
                }
                break;
            }
            default:
                break;
            }
        buf_free(&a);
        buf_free(&b);
    }
    buf_free(&part);
    return rc;
}

/* The single-attribute key condition in the multi-attribute form (takes its refs). */
static void keycond_as_multi(expr_keycond *k, expr_keycond_multi *m)
{
    memset(m, 0, sizeof *m);
    m->pk_values[0] = k->pk_value;
    if (k->sk_op == EXPR_KEY_EQ) {
        m->nsk_eq = 1;
        m->sk_eq[0] = k->sk_value1;
        json_decref(k->sk_value2);
    } else {
        m->last_op = k->sk_op;
        m->last_v1 = k->sk_value1;
        m->last_v2 = k->sk_value2;
    }
    memset(k, 0, sizeof *k);
}

static int check_filter_keys(const expr_key_schema *ks, const expr_cond *filter, int legacy,
                             qr_err *err)
{
    if (filter == NULL) return 0;
    for (int i = 0; i < ks->npk + ks->nsk; i++) {
        const char *name = i < ks->npk ? ks->pk_names[i] : ks->sk_names[i - ks->npk];
        if (expr_cond_mentions(filter, name))
            return err_validation(
                err, "%s can only contain non-primary key attributes: Primary key attribute: %s",
                legacy ? "QueryFilter" : "Filter Expression", name);
    }
    return 0;
}

void query_key_schema(const table *t, const qr_index *ix, expr_key_schema *ks)
{
    memset(ks, 0, sizeof *ks);
    if (ix) {
        ks->npk = ix->npk;
        ks->nsk = ix->nsk;
        for (int i = 0; i < ix->npk; i++)
            ks->pk_names[i] = ix->pk[i], ks->pk_types[i] = ix->pk_type[i];
        for (int i = 0; i < ix->nsk; i++)
            ks->sk_names[i] = ix->sk[i], ks->sk_types[i] = ix->sk_type[i];
        return;
    }
    ks->npk = 1;
    const key_attr *pk = table_pk(t), *sk = table_sk(t);
    ks->pk_names[0] = pk->name;
    ks->pk_types[0] = pk->type;
    if (sk->name) {
        ks->nsk = 1;
        ks->sk_names[0] = sk->name;
        ks->sk_types[0] = sk->type;
    }
}

/* DynamoDB checks the operand types of a KeyConditionExpression before it looks for the
 * table (recorded by the public conformance suite, eu-west-2, October 2026): when the
 * table is missing (err says so), an operand of the wrong type is reported instead. */
static void key_condition_operands_first(json_t *req, qr_err *err)
{
    json_t *kce = json_object_get(req, "KeyConditionExpression");
    if (err->type == NULL || strcmp(err->type, QR_E_NOT_FOUND) != 0 || !json_is_string(kce)) return;
    qr_err e;
    err_init(&e);
    if (exprs_operand_type_error(kce, json_object_get(req, "ExpressionAttributeNames"),
                                 json_object_get(req, "ExpressionAttributeValues"), &e)) {
        err_clear(err);
        err_validation(err, "Invalid KeyConditionExpression: %s", e.msg);
    }
    err_clear(&e);
}

int query_read(qr_db *db, const query_request *q, buf *out, qr_err *err)
{
    table *t = q->t;
    range_read r;
    expr_key_schema ks;
    size_t bytes = 0;
    double fetch_units = 0;
    int rc = -1;
    range_init(q, &r);
    query_key_schema(t, q->index, &ks);
    if (check_filter_keys(&ks, q->filter, q->legacy_filter, err)) goto done;
    if (exprs_check_paths(q->projection, q->filter, t, err) ||
        check_filter_projection(t, r.index, q->filter, err) ||
        check_index_projection(t, r.index, q->projection, err))
        goto done;
    if (query_range(t, r.index ? r.index->id : 0, q->key, ks.npk, &r, err)) goto done;
    if (apply_start_key(q->start_key, t, &r, &ks, q->key, err)) goto done;
    watch_req w;
    if (watch_query(db, t, r.index ? r.index->name : NULL, q->key, q->filter != NULL, r.forward,
                    r.consistent, &w, err))
        goto done;
    if (range_run(db, t, &r, out, &bytes, &fetch_units, err)) goto done;
    finish_response(out, q->capacity, t, r.index, bytes, fetch_units, r.consistent);
    watch_read_done(&w, r.scanned, r.count, meter_read_units(bytes, r.consistent) + fetch_units);
    rc = 0;
done:
    range_free(&r);
    return rc;
}

int op_query(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t = NULL;
    req_exprs x = {0};
    expr_keycond kc = {0};
    expr_keycond_multi kcm = {0};
    expr_key_schema ks;
    query_request q = {0};
    int rc = -1;
    if (param_table(db, req, "TableName", &t, err)) {
        key_condition_operands_first(req, err);
        goto done;
    }
    /* KeyConditions may be combined with FilterExpression and ProjectionExpression, as
     * DynamoDB allows; exprs_parse lets only KeyConditionExpression exclude it. */
    if (exprs_parse(&x, req, EXPRS_FILTER | EXPRS_PROJECTION | EXPRS_KEY_CONDITION, err) ||
        check_value_nesting(req, err))
        goto done;
    if (read_common(req, t, &q, &x, 1, err)) goto done;
    if (param_bool(req, "ScanIndexForward", 1, &q.forward, err)) goto done;
    json_t *kcs;
    if (param_object(req, "KeyConditions", &kcs, err)) goto done;
    query_key_schema(t, q.index, &ks);
    const char *text = json_string_value(json_object_get(req, "KeyConditionExpression"));
    int multi = ks.npk > 1 || ks.nsk > 1;
    const char *skn = ks.nsk ? ks.sk_names[0] : NULL;
    char skt = ks.nsk ? ks.sk_types[0] : 0;
    if (!x.has_key_condition && !kcs) {
        err_validation(err, "Either the KeyConditions or KeyConditionExpression parameter must be "
                            "specified in the request.");
        goto done;
    }
    if (multi) {
        if (x.has_key_condition ? expr_parse_key_condition_multi(&x.cx, text, &ks, &kcm)
                                : expr_from_key_conditions_multi(kcs, &ks, &kcm, err))
            goto done;
    } else {
        if (x.has_key_condition
                ? expr_parse_key_condition(&x.cx, text, ks.pk_names[0], ks.pk_types[0], skn, skt,
                                           &kc)
                : expr_from_key_conditions(kcs, ks.pk_names[0], ks.pk_types[0], skn, skt, &kc, err))
            goto done;
        keycond_as_multi(&kc, &kcm);
    }
    if (exprs_finish(&x)) goto done;
    q.key = &kcm;
    q.legacy_filter = json_object_get(req, "QueryFilter") != NULL;
    rc = query_read(db, &q, &c->out, err);
done:
    expr_keycond_free(&kc);
    expr_keycond_multi_free(&kcm);
    exprs_free(&x);
    catalog_release(db, t);
    return rc;
}

/* A ScanFilter value nested past the limit is refused before the table is looked up
 * (seven of ten regions, October 2026, by the public conformance suite; the other three
 * first refuse a ConditionalOperator beside a single condition). */
static int scan_filter_too_deep(json_t *req, qr_err *err)
{
    const char *name;
    json_t *cond;
    json_object_foreach(json_object_get(req, "ScanFilter"), name, cond)
    {
        if (value_nesting_most(json_object_get(cond, "AttributeValueList")) > QR_MAX_DEPTH)
            return err_validation(err, QR_MSG_TOO_DEEP);
    }
    return 0;
}

int scan_read(qr_db *db, const query_request *q, buf *out, qr_err *err)
{
    table *t = q->t;
    range_read r;
    size_t bytes = 0;
    double fetch_units = 0;
    int rc = -1;
    range_init(q, &r);
    r.forward = 1;
    r.segment = q->segment;
    r.total_segments = q->total_segments;
    /* Segment s of n holds the partitions whose hash lies in [s*2^64/n, (s+1)*2^64/n). */
    unsigned long long segment = (unsigned long long)q->segment,
                       total = (unsigned long long)q->total_segments;
    key_table_prefix(&r.lower, t, r.index ? r.index->id : 0);
    key_table_prefix(&r.upper, t, r.index ? r.index->id : 0);
    unsigned __int128 span = ((unsigned __int128)1) << 64;
    buf_put_be64(&r.lower, (uint64_t)(span * segment / total));
    if (segment + 1 < total)
        buf_put_be64(&r.upper, (uint64_t)(span * (segment + 1) / total));
    else
        buf_prefix_successor(&r.upper);
    if (apply_start_key(q->start_key, t, &r, NULL, NULL, err)) goto done;
    if (exprs_check_paths(q->projection, q->filter, t, err) ||
        check_index_projection(t, r.index, q->projection, err))
        goto done;
    watch_req w;
    if (watch_scan(db, t, r.index ? r.index->name : NULL, q->filter != NULL, r.consistent, &w, err))
        goto done;
    if (range_run(db, t, &r, out, &bytes, &fetch_units, err)) goto done;
    finish_response(out, q->capacity, t, r.index, bytes, fetch_units, r.consistent);
    watch_read_done(&w, r.scanned, r.count, meter_read_units(bytes, r.consistent) + fetch_units);
    rc = 0;
done:
    range_free(&r);
    return rc;
}

int op_scan(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    table *t = NULL;
    req_exprs x = {0};
    query_request q = {0};
    long long segment = 0, total = 1;
    int rc = -1;
    if (scan_filter_too_deep(req, err)) goto done;
    if (param_table(db, req, "TableName", &t, err)) goto done;
    if (exprs_parse(&x, req, EXPRS_FILTER | EXPRS_PROJECTION, err) ||
        check_value_nesting(req, err) || exprs_finish(&x))
        goto done;
    if (read_common(req, t, &q, &x, 0, err)) goto done;
    int has_segment = member_count(req, "Segment", &segment),
        has_total = member_count(req, "TotalSegments", &total);
    if (has_segment != has_total) {
        err_validation(err, has_segment ? "The TotalSegments parameter is required but was not "
                                          "present in the request when Segment parameter is present"
                                        : "The Segment parameter is required but was not present "
                                          "in the request when parameter TotalSegments is present");
        goto done;
    }
    if (!has_total) total = 1, segment = 0;
    if (segment >= total) {
        /* Most regions (28 of 33 in October 2026) still add the values. */
        err_validation(
            err,
            "The Segment parameter is zero-based and must be less than parameter TotalSegments: "
            "Segment: %lld is not less than TotalSegments: %lld",
            segment, total);
        goto done;
    }
    q.segment = segment;
    q.total_segments = total;
    rc = scan_read(db, &q, &c->out, err);
done:
    exprs_free(&x);
    catalog_release(db, t);
    return rc;
}
