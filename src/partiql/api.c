/* api.c — ExecuteStatement, BatchExecuteStatement and ExecuteTransaction: DynamoDB's PartiQL
 * API over the parser, the planner and the executor. It writes no request of an item operation
 * (execute.c does) and decides no plan (plan.c does). */
#include <limits.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "model/layer.h"
#include "model/value.h"
#include "ops/ops.h"
#include "partiql/api.h"
#include "partiql/execute.h"
#include "partiql/plan.h"
#include "partiql/statement.h"
#include "util/jsonread.h"

#define STATEMENT_MAX 8192
#define NEXT_TOKEN_MAX 32768
#define BATCH_MAX 25
#define TXN_MAX 100

static const char E_DUPLICATE[] = "DuplicateItemException";
static const char MSG_DUPLICATE[] = "Duplicate primary key exists in table";
static const char MSG_BAD_TOKEN[] = "Invalid NextToken";
/* A batch reads by GetItem: by the table's key, never from an index */
static const char MSG_BATCH_KEY[] =
    "Select statements within BatchExecuteStatement must specify the primary key in the where "
    "clause.";
static const char MSG_TXN_KEY[] =
    "Select statements within ExecuteTransaction must specify the primary key in the where clause.";

static int out_of_memory(qr_err *err)
{
    return err_set(err, QR_E_INTERNAL, "out of memory");
}

static const char *const capacity_modes[] = {"INDEXES", "TOTAL", "NONE", NULL};
static const char *const on_failure_modes[] = {"ALL_OLD", "NONE", NULL};

/* ---- consumed capacity ---- */

/* Adds the capacity units of more into acc, field by field, into the Table and per-index
 * maps too (a field acc lacks is copied). */
static void units_add(json_t *acc, const json_t *more)
{
    const char *k;
    json_t *b;
    json_object_foreach((json_t *)more, k, b)
    {
        json_t *a = json_object_get(acc, k);
        if (a == NULL)
            json_object_set_new(acc, k, json_deep_copy(b));
        else if (json_is_number(a) && json_is_number(b))
            json_object_set_new(acc, k, json_real(json_number_value(a) + json_number_value(b)));
        else if (json_is_object(a) && json_is_object(b))
            units_add(a, b);
    }
}

/* Adds ConsumedCapacity object cc to the running total *acc. */
static void capacity_merge(json_t **acc, const json_t *cc)
{
    if (!json_is_object(cc)) return;
    if (*acc == NULL)
        *acc = json_deep_copy(cc);
    else
        units_add(*acc, cc);
}

/* Adds cc to a list of ConsumedCapacity objects, one per table. */
static void capacity_list_add(json_t *list, const json_t *cc)
{
    if (!json_is_object(cc)) return;
    const char *name = json_string_value(json_object_get(cc, "TableName"));
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "TableName"));
        if (n && name && strcmp(n, name) == 0) {
            capacity_merge(&e, cc);
            return;
        }
    }
    json_array_append_new(list, json_deep_copy(cc));
}

typedef struct opts {
    const char *capacity;   /* ReturnConsumedCapacity (NULL: absent) */
    const char *on_failure; /* ReturnValuesOnConditionCheckFailure (NULL: absent) */
    int consistent;
    long long limit;        /* 0: none */
    const char *next_token; /* NULL: none */
    XXH64_hash_t hash;      /* of the statement and its parameters, for NextToken */
} opts;

/* ---- plans ---- */

/* The plan of an INSERT, UPDATE, DELETE or EXISTS (i: its place in a transaction). */
static int plan_write(qr_db *db, const pq_stmt *st, size_t i, pq_plan *p, qr_err *err)
{
    pq_schema s;
    if (st->index) /* UPDATE and DELETE parse "table"."index"; INSERT does not */
        return err_validation(err, st->kind == PQ_EXISTS
                                       ? "Operations on indices are not supported in transactions"
                                       : "This operation is not supported on an index");
    if (pq_schema_load(db, st, &s, err)) return -1;
    return pq_plan_write(st, &s, i, p, err);
}

/* The plan of a SELECT that names one item of a table by its full key and nothing else
 * (GetItem and TransactGetItems take no filter, and DynamoDB refuses a read in a batch or
 * a transaction whose WHERE adds any condition to the key's equalities); missing is the
 * message when it does not, or reads an index. */
static int plan_key_read(qr_db *db, const pq_stmt *st, const char *missing, int consistent,
                         pq_plan *p, qr_err *err)
{
    pq_schema s;
    if (st->index) return pq_schema_refuse_index_read(db, st, missing, err);
    if (pq_schema_load(db, st, &s, err)) return -1;
    return pq_plan_get_item(st, &s, missing, consistent, p, err);
}

/* INSERT, UPDATE or DELETE on its own: answers {"Items": [...]} as DynamoDB does. */
static int exec_write(qr_db *db, const pq_stmt *st, const opts *o, json_t **resp, qr_err *err)
{
    pq_plan p;
    pq_result out;
    if (plan_write(db, st, 0, &p, err)) return -1;
    int rc = pq_exec_write(db, &p, o->capacity, o->on_failure, &out, err);
    pq_plan_free(&p);
    if (rc) {
        if (st->kind == PQ_INSERT && err->type && strcmp(err->type, QR_E_CONDITION) == 0) {
            err_clear(err);
            err_set(err, E_DUPLICATE, "%s", MSG_DUPLICATE);
        }
        return -1;
    }
    *resp = json_pack("{s:[]}", "Items");
    if (out.item) json_array_append(json_object_get(*resp, "Items"), (json_t *)out.item);
    if (out.capacity) json_object_set(*resp, "ConsumedCapacity", (json_t *)out.capacity);
    pq_result_free(&out);
    return 0;
}

/* ---- items read ---- */

/* The value at path in item (a map of attribute name -> AttributeValue), or NULL. */
static const json_t *path_value(const json_t *item, const json_t *path)
{
    const json_t *v = NULL, *c;
    size_t i;
    json_array_foreach(path, i, c)
    {
        if (i == 0)
            v = json_object_get(item, json_string_value(c));
        else if (json_is_integer(c))
            v = json_array_get(json_object_get(v, "L"), (size_t)json_integer_value(c));
        else
            v = json_object_get(json_object_get(v, "M"), json_string_value(c));
        if (v == NULL) return NULL;
    }
    return v;
}

/* The item as a SELECT returns it. Each projected path yields its value under the name
 * of the path's last component (SELECT a.b gives {"b": ...}, not {"a": {"b": ...}}), or
 * under "_N" (N: its place in the list, from 1) when the path ends with a list index, as
 * PartiQL names a select item it cannot name otherwise. Paths the item lacks are left
 * out. NULL when out of memory. */
static json_t *project(const pq_stmt *st, const json_t *item)
{
    if (st->nproj == 0) return json_deep_copy(item);
    json_t *out = json_object();
    for (size_t i = 0; out && i < st->nproj; i++) {
        const json_t *path = st->proj[i]->path;
        const json_t *v = path_value(item, path);
        if (v == NULL) continue;
        const json_t *last = json_array_get(path, json_array_size(path) - 1);
        char name[32];
        if (json_is_integer(last)) snprintf(name, sizeof name, "_%zu", i + 1);
        if (json_object_set_new(out, json_is_integer(last) ? name : json_string_value(last),
                                json_deep_copy(v))) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}

/* *out: item as the statement returns it (projected), or NULL if it fails f. */
static int filter_item(const pq_filter *f, const pq_stmt *st, const json_t *item, json_t **out,
                       qr_err *err)
{
    *out = NULL;
    int ok = pq_filter_passes(f, item, err);
    if (ok < 0) return -1;
    if (ok && (*out = project(st, item)) == NULL) return out_of_memory(err);
    return 0;
}

/* Applies the rest of a SELECT read by key, its WHERE and its projection, to the item
 * read (NULL: none), as GetItem and TransactGetItems take no filter. *out is the
 * projected item, or NULL when there is none or it does not satisfy the WHERE. */
static int finish_read(const pq_stmt *st, const json_t *item, json_t **out, qr_err *err)
{
    pq_filter *f;
    pq_node *where = st->where;
    pq_conds conds = {&where, 1, 1};
    *out = NULL;
    if (item == NULL) return 0;
    int rc = pq_filter_compile(where ? &conds : NULL, &f, err);
    if (rc == 0) rc = filter_item(f, st, item, out, err);
    pq_filter_free(f);
    return rc;
}

/* ---- SELECT ---- */

static int token_encode(XXH64_hash_t hash, size_t i, const json_t *lek, char **out)
{
    char h[17];
    snprintf(h, sizeof h, "%016llx", (unsigned long long)hash);
    json_t *t = json_pack("{s:s,s:I,s:O?}", "s", h, "i", (json_int_t)i, "k", lek);
    char *text = t ? json_dumps(t, JSON_COMPACT) : NULL;
    json_decref(t);
    *out = NULL;
    if (text == NULL) return -1;
    size_t n = strlen(text);
    *out = malloc(4 * ((n + 2) / 3) + 1);
    if (*out) EVP_EncodeBlock((unsigned char *)*out, (const unsigned char *)text, (int)n);
    free(text);
    return *out ? 0 : -1;
}

static int token_decode(const char *tok, XXH64_hash_t hash, size_t nkeys, size_t *i, json_t **lek,
                        qr_err *err)
{
    size_t n = strlen(tok);
    *lek = NULL;
    if (n == 0 || n % 4 || n > NEXT_TOKEN_MAX) return err_validation(err, "%s", MSG_BAD_TOKEN);
    unsigned char *raw = malloc(n);
    if (raw == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    int len = EVP_DecodeBlock(raw, (const unsigned char *)tok, (int)n);
    if (len >= 0) {
        if (tok[n - 1] == '=') len--;
        if (tok[n - 2] == '=') len--;
    }
    json_t *t =
        len > 0 ? json_read((const char *)raw, (size_t)len, JSON_REJECT_DUPLICATES, NULL) : NULL;
    free(raw);
    const char *h = json_string_value(json_object_get(t, "s"));
    json_t *k = json_object_get(t, "k");
    json_int_t at = json_integer_value(json_object_get(t, "i"));
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)hash);
    int rc = 0;
    if (h == NULL || !json_is_integer(json_object_get(t, "i")) || at < 0 || (size_t)at >= nkeys ||
        (k && !json_is_object(k)))
        rc = err_validation(err, "%s", MSG_BAD_TOKEN);
    else if (strcmp(h, want) != 0)
        rc = err_validation(err, "NextToken does not match request");
    else {
        *i = (size_t)at;
        *lek = json_incref(k);
    }
    json_decref(t);
    return rc;
}

/* A SELECT is paged across its IN values with an opaque NextToken tied to the statement and its
 * parameters.
 *
 * Runs the Query or Scan of plan p from NextToken's place to the end or to Limit, once
 * per IN value when the plan reads them in turn, passing each item read through the
 * plan's key filter and the projection; answers the items, NextToken, LastEvaluatedKey
 * and the summed ConsumedCapacity. */
static int select_pages(qr_db *db, const pq_plan *p, const opts *o, pq_read *r, json_t **resp,
                        qr_err *err)
{
    const pq_node *in = p->partition_in;
    json_t *items = json_array(), *cc = NULL, *lek = NULL, *start = NULL;
    char *token = NULL;
    int rc = -1;
    size_t nkeys = in ? in->nargs - 1 : 1, i = 0;
    if (items == NULL) return out_of_memory(err);
    if (o->next_token && token_decode(o->next_token, o->hash, nkeys, &i, &start, err)) goto done;
    long long left = o->limit;
    for (; i < nkeys; i++) {
        pq_page page;
        int repeated = 0; /* IN ['a', 'a'] reads the partition once */
        for (size_t j = 0; in && j < i && !repeated; j++)
            repeated = value_equal(in->args[j + 1]->value, in->args[i + 1]->value);
        if (repeated) continue;
        int failed =
            pq_read_page(db, r, in ? in->args[i + 1]->value : NULL, left, start, &page, err);
        start = NULL; /* taken */
        if (failed) goto done;
        size_t k;
        json_t *item;
        json_array_foreach((json_t *)page.items, k, item)
        {
            json_t *kept;
            if (filter_item(p->key_filter, p->stmt, item, &kept, err)) {
                pq_page_free(&page);
                goto done;
            }
            if (kept) json_array_append_new(items, kept);
        }
        capacity_merge(&cc, page.capacity);
        if (left) left -= page.scanned;
        if (page.last_key) {
            lek = json_incref((json_t *)page.last_key);
            pq_page_free(&page);
            if (token_encode(o->hash, i, lek, &token)) {
                out_of_memory(err);
                goto done;
            }
            break;
        }
        pq_page_free(&page);
        if (o->limit && left <= 0 && i + 1 < nkeys) {
            if (token_encode(o->hash, i + 1, NULL, &token)) {
                out_of_memory(err);
                goto done;
            }
            break;
        }
    }
    *resp = json_pack("{s:O}", "Items", items);
    if (*resp == NULL) {
        out_of_memory(err);
        goto done;
    }
    if (token) json_object_set_new(*resp, "NextToken", json_string(token));
    if (lek) json_object_set(*resp, "LastEvaluatedKey", lek);
    if (cc) json_object_set(*resp, "ConsumedCapacity", cc);
    rc = 0;
done:
    free(token);
    json_decref(start);
    json_decref(lek);
    json_decref(cc);
    json_decref(items);
    return rc;
}

static int exec_select(qr_db *db, const pq_stmt *st, const opts *o, json_t **resp, qr_err *err)
{
    pq_schema s;
    pq_plan p;
    pq_read *r;
    if (pq_schema_load(db, st, &s, err)) return -1;
    if (pq_plan_select(st, &s, o->consistent, &p, err)) return -1;
    int rc = pq_read_prepare(&p, o->capacity, &r, err);
    if (rc == 0) rc = select_pages(db, &p, o, r, resp, err);
    pq_read_free(r);
    pq_plan_free(&p);
    return rc;
}

/* ---- request parameters ---- */

/* The length of UTF-8 text as DynamoDB measures a string's length constraint: in UTF-16
 * code units (a character beyond the BMP, 4 bytes in UTF-8, counts 2). */
static size_t text_length(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xc0) != 0x80) n += c >= 0xf0 ? 2 : 1;
    }
    return n;
}

/* Statement and Parameters of one statement (field: where they sit, for messages), the
 * parameters validated into a new array *params (NULL if none). */
static int statement_params(json_t *obj, const char *field, const char **text, size_t *len,
                            json_t **params, qr_err *err)
{
    char where[96];
    json_t *s = json_object_get(obj, "Statement"), *p;
    *params = NULL;
    snprintf(where, sizeof where, "%sstatement", field);
    if (s == NULL || json_is_null(s)) return param_null(where, err);
    if (param_string(obj, "Statement", text, err)) return -1;
    *len = json_string_length(s);
    size_t chars = text_length(*text, *len);
    if (chars == 0 || chars > STATEMENT_MAX) {
        char shown[72];
        snprintf(shown, sizeof shown, "%.64s", *text);
        err_utf8_repair(shown);
        if (chars > 64) strcat(shown, "...");
        return err_violation(err, shown, where,
                             chars ? QR_MSG_LENGTH_AT_MOST : QR_MSG_LENGTH_AT_LEAST,
                             chars ? (long long)STATEMENT_MAX : 1LL);
    }
    if (param_array(obj, "Parameters", &p, err)) return -1;
    if (p == NULL) return 0;
    if (json_array_size(p) == 0) {
        char path[96];
        snprintf(path, sizeof path, "%sparameters", field);
        return err_violation(err, "[]", path, QR_MSG_LENGTH_AT_LEAST, 1LL);
    }
    *params = json_deep_copy(p);
    return *params ? 0 : err_set(err, QR_E_INTERNAL, "out of memory");
}

/* True if s is a number as DynamoDB's PartiQL reads a parameter (as Java's BigDecimal
 * reads a string): digits with an optional point and exponent, the exponent and the
 * scale it leaves within 32 bits. */
static int convertible(const char *s)
{
    long long frac = 0, exp = 0;
    int digits = 0;
    if (*s == '+' || *s == '-') s++;
    for (; *s >= '0' && *s <= '9'; s++)
        digits = 1;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, frac++)
            digits = 1;
    if (!digits) return 0;
    if (*s == 'e' || *s == 'E') {
        int neg = s[1] == '-';
        s += 1 + (s[1] == '+' || s[1] == '-');
        if (*s < '0' || *s > '9') return 0;
        for (; *s >= '0' && *s <= '9'; s++)
            if ((exp = exp * 10 + (*s - '0')) > INT32_MAX + 1LL) return 0;
        if (neg) exp = -exp;
        if (exp > INT32_MAX || frac - exp > INT32_MAX || frac - exp < INT32_MIN) return 0;
    }
    return *s == '\0';
}

static int number_param(const char *n, qr_err *err)
{
    if (n == NULL || convertible(n)) return 0; /* (not a string: value_validate says so) */
    if (*n == '\0')
        return err_validation(err, "The parameter cannot be converted to a numeric value");
    return err_validation(err, "The parameter cannot be converted to a numeric value: %.100s", n);
}

/* The first problem of a parameter in document order, nesting too deep or a number
 * that cannot be read, as DynamoDB reports them for PartiQL parameters. */
static int param_scan(const json_t *v, int depth, qr_err *err)
{
    if (depth > QR_MAX_DEPTH) return err_validation(err, QR_MSG_TOO_DEEP);
    const json_t *p = value_payload(v), *c;
    const char *k;
    size_t i;
    switch (value_type(v)) {
    case QR_T_N:
        return number_param(json_string_value(p), err);
    case QR_T_NS:
        json_array_foreach((json_t *)p, i,
                           c) if (number_param(json_string_value(c), err)) return -1;
        return 0;
    case QR_T_L:
        json_array_foreach((json_t *)p, i, c) if (param_scan(c, depth + 1, err)) return -1;
        return 0;
    case QR_T_M:
        json_object_foreach((json_t *)p, k, c) if (param_scan(c, depth + 1, err)) return -1;
        return 0;
    default:
        return 0;
    }
}

/* Validates (and normalises) a statement's parameters. DynamoDB reads them in its older
 * layer (model/layer.h), as Java's BigDecimal reads a number; literals in the statement
 * are read in the current one. */
static int params_check(json_t *params, qr_err *err)
{
    size_t i;
    json_t *v;
    int rc = 0;
    value_layer outer = value_layer_enter(VALUE_LAYER_OLDER);
    json_array_foreach(params, i, v)
    {
        char what[48];
        snprintf(what, sizeof what, "parameters[%zu]", i);
        if (value_type(v) == QR_T_NONE) {
            rc = err_validation(err, "Supplied AttributeValue is empty, must contain exactly "
                                     "one of the supported datatypes");
            break;
        }
        if (param_scan(v, 1, err) || value_validate(v, 1, what, err)) {
            rc = -1;
            break;
        }
    }
    value_layer_enter(outer);
    return rc;
}

static XXH64_hash_t statement_hash(const char *text, size_t len, const json_t *params)
{
    XXH64_hash_t h = XXH64(text, len, 0x5157);
    char *p = params ? json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (p) h = XXH64(p, strlen(p), h);
    free(p);
    return h;
}

/* ---- ExecuteStatement ---- */

int op_execute_statement(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    const char *text;
    size_t len;
    json_t *params = NULL;
    pq_stmt *st = NULL;
    opts o = {0};
    int present, rc = -1;
    if (statement_params(req, "", &text, &len, &params, err)) return -1;
    if (params_check(params, err)) goto done;
    if (param_bool(req, "ConsistentRead", 0, &o.consistent, err)) goto done;
    if (param_string(req, "NextToken", &o.next_token, err)) goto done;
    if (o.next_token && (*o.next_token == '\0' || strlen(o.next_token) > NEXT_TOKEN_MAX)) {
        err_validation(err,
                       "1 validation error detected: Value at 'nextToken' failed to satisfy "
                       "constraint: Member must "
                       "have length %s",
                       *o.next_token ? "less than or equal to 32768"
                                     : "greater than or equal to 1");
        goto done;
    }
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, NULL, &o.capacity, err))
        goto done;
    if (param_enum(req, "ReturnValuesOnConditionCheckFailure", on_failure_modes, NULL,
                   &o.on_failure, err))
        goto done;
    if (param_int(req, "Limit", 1, INT_MAX, &o.limit, &present, err)) goto done;
    if (partiql_parse(text, len, params, &st, err)) goto done;
    o.hash = statement_hash(text, len, params);
    if (st->kind == PQ_SELECT)
        rc = exec_select(db, st, &o, &c->answer, err);
    else if (st->kind == PQ_EXISTS)
        err_validation(err, "EXISTS can only be used in ExecuteTransaction write requests.");
    else
        rc = exec_write(db, st, &o, &c->answer, err);
done:
    partiql_free(st);
    json_decref(params);
    return rc;
}

/* ---- BatchExecuteStatement ---- */

/* The Code of a BatchStatementError for an error type. */
static const char *batch_code(const char *type, char *out, size_t cap)
{
    if (strcmp(type, QR_E_VALIDATION) == 0 || strcmp(type, QR_E_SERIALIZATION) == 0)
        return "ValidationError";
    if (strcmp(type, QR_E_INTERNAL) == 0) return "InternalServerError";
    size_t n = strlen(type);
    if (n > 9 && strcmp(type + n - 9, "Exception") == 0) n -= 9;
    snprintf(out, cap, "%.*s", (int)n, type);
    return out;
}

/* Reads the one item a batch SELECT names. */
static int batch_read(qr_db *db, const pq_stmt *st, int consistent, const char *capacity,
                      json_t **item, json_t *ccs, qr_err *err)
{
    pq_plan p;
    pq_result out;
    *item = NULL;
    if (plan_key_read(db, st, MSG_BATCH_KEY, consistent, &p, err)) return -1;
    int rc = pq_exec_get_item(db, &p, capacity, &out, err);
    pq_plan_free(&p);
    if (rc == 0) {
        capacity_list_add(ccs, out.capacity);
        rc = finish_read(st, out.item, item, err);
    }
    pq_result_free(&out);
    return rc;
}

int op_batch_execute_statement(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *list, *ccs = NULL, *responses = NULL;
    pq_stmt *sts[BATCH_MAX] = {0};
    qr_err errs[BATCH_MAX];
    const char *capacity;
    size_t n = 0;
    int rc = -1, reads = 0, writes = 0;
    for (int i = 0; i < BATCH_MAX; i++)
        err_init(&errs[i]);
    if (param_array(req, "Statements", &list, err)) return -1;
    if (list == NULL) return param_null("statements", err);
    n = json_array_size(list);
    if (n == 0 || n > BATCH_MAX)
        return err_violation(err, err_value_unshown, "statements",
                             n ? QR_MSG_LENGTH_AT_MOST : QR_MSG_LENGTH_AT_LEAST,
                             n ? (long long)BATCH_MAX : 1LL);
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, NULL, &capacity, err)) return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i), *params = NULL;
        char field[48];
        const char *text, *on_failure;
        size_t len;
        int consistent;
        if (value_wire_check(e, WIRE_STRUCTURE, 0, NULL, err)) goto done;
        snprintf(field, sizeof field, "statements.%zu.member.", i + 1);
        if (statement_params(e, field, &text, &len, &params, err) ||
            param_bool(e, "ConsistentRead", 0, &consistent, err) ||
            param_enum(e, "ReturnValuesOnConditionCheckFailure", on_failure_modes, NULL,
                       &on_failure, err)) {
            json_decref(params);
            goto done;
        }
        /* a parameter's value, like the statement, is the member's own error */
        if (params_check(params, &errs[i]) == 0 &&
            partiql_parse(text, len, params, &sts[i], &errs[i]) == 0) {
            if (sts[i]->kind == PQ_SELECT)
                reads++;
            else if (sts[i]->kind != PQ_EXISTS) /* refused on its own below */
                writes++;
        }
        json_decref(params);
    }
    if (reads && writes) {
        err_validation(
            err,
            "Unsupported operation: a batch must contain either only reads (SELECT) or only writes "
            "(INSERT, UPDATE, DELETE)");
        goto done;
    }
    responses = json_array();
    ccs = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i), *r = json_object(), *item = NULL;
        json_array_append_new(responses, r);
        if (sts[i] && sts[i]->kind == PQ_SELECT) {
            batch_read(db, sts[i], json_is_true(json_object_get(e, "ConsistentRead")), capacity,
                       &item, ccs, &errs[i]);
        } else if (sts[i] && sts[i]->kind == PQ_EXISTS) {
            err_validation(&errs[i],
                           "EXISTS can only be used in ExecuteTransaction write requests.");
        } else if (sts[i]) {
            /* RETURNING is honoured (its item is the response's Item), while
             * ReturnValuesOnConditionCheckFailure is not: a failed member has no Item */
            opts o = {.capacity = capacity};
            json_t *out = NULL;
            if (exec_write(db, sts[i], &o, &out, &errs[i]) == 0) {
                capacity_list_add(ccs, json_object_get(out, "ConsumedCapacity"));
                item = json_incref(json_array_get(json_object_get(out, "Items"), 0));
            }
            json_decref(out);
        }
        /* A member refused before it reached its table does not name it */
        if (sts[i] && (errs[i].type == NULL || strcmp(errs[i].type, QR_E_VALIDATION) != 0))
            json_object_set_new(r, "TableName", json_string(sts[i]->table));
        if (item) json_object_set_new(r, "Item", item);
        if (errs[i].type) {
            char code[64];
            json_object_set_new(r, "Error",
                                json_pack("{s:s,s:s}", "Code",
                                          batch_code(errs[i].type, code, sizeof code), "Message",
                                          errs[i].msg));
        }
    }
    c->answer = json_pack("{s:O}", "Responses", responses);
    if (c->answer && capacity && strcmp(capacity, "NONE") != 0 && json_array_size(ccs))
        json_object_set(c->answer, "ConsumedCapacity", ccs);
    rc = c->answer ? 0 : err_set(err, QR_E_INTERNAL, "out of memory");
done:
    for (size_t i = 0; i < BATCH_MAX; i++) {
        partiql_free(sts[i]);
        err_clear(&errs[i]);
    }
    json_decref(responses);
    json_decref(ccs);
    return rc;
}

/* ---- ExecuteTransaction ---- */

/* INSERTs whose item existed fail their Put's condition: DynamoDB names that DuplicateItem. */
static void rename_duplicates(pq_stmt **sts, size_t n, qr_err *err)
{
    json_t *reasons = json_object_get(err->item, "CancellationReasons");
    if (reasons == NULL) return;
    buf msg;
    buf_init(&msg, 0);
    buf_puts(&msg, QR_MSG_TXN_CANCELED "[");
    for (size_t i = 0; i < json_array_size(reasons); i++) {
        json_t *r = json_array_get(reasons, i);
        const char *code = json_string_value(json_object_get(r, "Code"));
        if (i < n && sts[i]->kind == PQ_INSERT && code &&
            strcmp(code, "ConditionalCheckFailed") == 0) {
            json_object_set_new(r, "Code", json_string("DuplicateItem"));
            json_object_set_new(r, "Message", json_string(MSG_DUPLICATE));
            json_object_del(r, "Item");
        }
        buf_printf(&msg, "%s%s", i ? ", " : "", json_string_value(json_object_get(r, "Code")));
    }
    buf_puts(&msg, "]");
    if (msg.data) {
        snprintf(err->msg, sizeof err->msg, "%s", msg.data);
        json_object_set_new(err->item, "Message", json_string(msg.data));
    }
    buf_free(&msg);
}

static int txn_reads(qr_db *db, pq_stmt **sts, size_t n, const char *capacity, json_t **resp,
                     qr_err *err)
{
    json_t *responses = NULL;
    pq_plan *plans = calloc(n, sizeof *plans);
    const json_t **items = calloc(n, sizeof *items);
    pq_result out = {0};
    int rc = -1;
    if (plans == NULL || items == NULL) {
        out_of_memory(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (sts[i]->index) {
            pq_refuse_in_transaction(err, i,
                                     "Reads on indices are not supported within transactions.");
            goto done;
        }
        char missing[256];
        snprintf(missing, sizeof missing, QR_MSG_TXN_STATEMENT_INVALID, i, MSG_TXN_KEY);
        if (plan_key_read(db, sts[i], missing, 0, &plans[i], err)) goto done;
    }
    if (pq_exec_transact_get(db, plans, n, capacity, items, &out, err)) goto done;
    responses = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *item, *e = json_object();
        if (finish_read(sts[i], items[i], &item, err)) {
            json_decref(e);
            goto done;
        }
        if (item) json_object_set_new(e, "Item", item);
        json_array_append_new(responses, e);
    }
    *resp = json_pack("{s:O}", "Responses", responses);
    if (*resp && out.capacity) json_object_set(*resp, "ConsumedCapacity", (json_t *)out.capacity);
    rc = *resp ? 0 : out_of_memory(err);
done:
    for (size_t i = 0; plans && i < n; i++)
        pq_plan_free(&plans[i]);
    free(plans);
    free(items);
    json_decref(responses);
    pq_result_free(&out);
    return rc;
}

static int txn_writes(qr_db *db, pq_stmt **sts, json_t *list, size_t n, json_t *req,
                      const char *capacity, json_t **resp, qr_err *err)
{
    pq_plan *plans = calloc(n, sizeof *plans);
    const char **on_failure = calloc(n, sizeof *on_failure);
    const char *token;
    char *identity = NULL;
    pq_result out = {0};
    int rc = -1;
    if (plans == NULL || on_failure == NULL) {
        out_of_memory(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (sts[i]->returning) {
            pq_refuse_in_transaction(err, i,
                                     "RETURNING clause is not supported in ExecuteTransaction.");
            goto done;
        }
        if (plan_write(db, sts[i], i, &plans[i], err)) goto done;
        on_failure[i] = json_string_value(
            json_object_get(json_array_get(list, i), "ReturnValuesOnConditionCheckFailure"));
    }
    /* The token stands for the statements, their parameters and their
     * ReturnValuesOnConditionCheckFailure (the request's capacity shapes only the answer). */
    if (transact_check_token(req, &token, err)) goto done;
    if (token && (identity = json_dumps(list, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
        out_of_memory(err);
        goto done;
    }
    if (pq_exec_transact_write(db, plans, n, on_failure, token, identity, capacity, &out, err)) {
        if (err->type && strcmp(err->type, QR_E_TXN_CANCELED) == 0) rename_duplicates(sts, n, err);
        goto done;
    }
    *resp = json_pack("{s:[]}", "Responses"); /* DynamoDB answers writes with an empty list */
    if (*resp == NULL) {
        out_of_memory(err);
        goto done;
    }
    if (out.capacity) json_object_set(*resp, "ConsumedCapacity", (json_t *)out.capacity);
    rc = 0;
done:
    for (size_t i = 0; plans && i < n; i++)
        pq_plan_free(&plans[i]);
    free(plans);
    free(on_failure);
    free(identity);
    pq_result_free(&out);
    return rc;
}

int op_execute_transaction(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *list;
    pq_stmt *sts[TXN_MAX] = {0};
    const char *capacity;
    size_t n, reads = 0;
    int rc = -1;
    if (param_array(req, "TransactStatements", &list, err)) return -1;
    if (list == NULL) return param_null("transactStatements", err);
    n = json_array_size(list);
    if (n == 0 || n > TXN_MAX)
        return err_violation(err, err_value_unshown, "transactStatements",
                             n ? QR_MSG_LENGTH_AT_MOST : QR_MSG_LENGTH_AT_LEAST,
                             n ? (long long)TXN_MAX : 1LL);
    if (param_enum(req, "ReturnConsumedCapacity", capacity_modes, NULL, &capacity, err)) return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i), *params = NULL;
        char field[64];
        const char *text, *on_failure;
        size_t len;
        if (value_wire_check(e, WIRE_STRUCTURE, 0, NULL, err)) goto done;
        snprintf(field, sizeof field, "transactStatements.%zu.member.", i + 1);
        int bad = statement_params(e, field, &text, &len, &params, err) ||
                  param_enum(e, "ReturnValuesOnConditionCheckFailure", on_failure_modes, NULL,
                             &on_failure, err) ||
                  params_check(params, err);
        if (!bad && partiql_parse(text, len, params, &sts[i], err)) {
            bad = 1;
            /* a statement PartiQL cannot parse is named, as DynamoDB names it */
            if (strncmp(err->msg, PARTIQL_MALFORMED, sizeof PARTIQL_MALFORMED - 1) == 0) {
                char msg[sizeof err->msg];
                snprintf(msg, sizeof msg, "%s", err->msg);
                err_clear(err);
                pq_refuse_in_transaction(err, i, msg);
            }
        }
        json_decref(params);
        if (bad) goto done;
        if (sts[i]->kind == PQ_SELECT) reads++;
    }
    if (reads && reads < n) {
        err_validation(
            err,
            "Unsupported operation: a transaction must contain either only reads (SELECT) or only "
            "writes (INSERT, UPDATE, DELETE, EXISTS)");
        goto done;
    }
    rc = reads ? txn_reads(db, sts, n, capacity, &c->answer, err)
               : txn_writes(db, sts, list, n, req, capacity, &c->answer, err);
done:
    for (size_t i = 0; i < n && i < TXN_MAX; i++)
        partiql_free(sts[i]);
    return rc;
}
