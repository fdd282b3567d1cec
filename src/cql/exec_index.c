/* exec_index.c — secondary indexes on collections and frozen collections: values(c),
 * keys(m), entries(m) and full(f), and plain indexes on a type no engine key type holds
 * (a float, boolean, tuple..., keyed by its bytes as full() is). Each such index is a
 * multi-valued global index of the
 * engine table (engine/index.h) on an attribute of the row's item that holds, as a binary
 * set, one key per element the index serves; this file makes that attribute at every
 * write of a row, makes the key a restriction looks up, and writes the attribute into the
 * rows already stored when the index is created.
 *
 * Not the other plain indexes (the column's own attribute is their key) and not the
 * reads (exec_select.c): an index only narrows what is read, the restriction still
 * filters every row it gives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "cql/exec_int.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"
#include "engine/engine.h"
#include "model/value.h"

/* A key holds the indexed bytes behind a 0x01, or, past this many, their 128-bit hash
 * behind a 0x02 (engine keys are at most 2048 bytes; a collision only reads a row more,
 * which the restriction then refuses). */
#define KEY_BYTES_MAX 1024

static const char *const kind_names[] = {
    [CQL_INDEX_KEYS] = "keys",
    [CQL_INDEX_VALUES] = "values",
    [CQL_INDEX_ENTRIES] = "entries",
    [CQL_INDEX_FULL] = "full",
};

const char *cql_index_kind_name(int kind)
{
    return kind > CQL_INDEX_SIMPLE && kind <= CQL_INDEX_FULL ? kind_names[kind] : "";
}

/* A target's column as Cassandra writes it (a name in double quotes exact, "" read as ")
 * from p[0..n) into column. */
static void target_column(const char *p, size_t n, char *column, size_t cap)
{
    if (n < 2 || p[0] != '"' || p[n - 1] != '"') {
        snprintf(column, cap, "%.*s", (int)n, p);
        return;
    }
    size_t o = 0;
    for (size_t i = 1; i + 1 < n && o + 1 < cap; i++) {
        column[o++] = p[i];
        if (p[i] == '"' && i + 2 < n && p[i + 1] == '"') i++;
    }
    column[o] = '\0';
}

int cql_index_target_parse(const char *target, int *kind, char *column, size_t cap)
{
    *kind = CQL_INDEX_SIMPLE;
    const char *open = strchr(target, '(');
    size_t n = strlen(target);
    if (target[0] != '"' && open && n > 0 && target[n - 1] == ')') {
        for (int k = CQL_INDEX_KEYS; k <= CQL_INDEX_FULL; k++)
            if (strlen(kind_names[k]) == (size_t)(open - target) &&
                strncmp(target, kind_names[k], (size_t)(open - target)) == 0) {
                *kind = k;
                target_column(open + 1, n - (size_t)(open - target) - 2, column, cap);
                return 0;
            }
    }
    target_column(target, n, column, cap);
    return 0;
}

int cql_index_target_format(int kind, const char *column, char *out, size_t cap)
{
    buf b;
    buf_init(&b, 0);
    int rc = 0;
    if (kind != CQL_INDEX_SIMPLE) {
        buf_puts(&b, kind_names[kind]);
        buf_putc(&b, '(');
    }
    rc |= cql_print_name(&b, column);
    if (kind != CQL_INDEX_SIMPLE) buf_putc(&b, ')');
    if (rc == 0 && b.len < cap)
        snprintf(out, cap, "%.*s", (int)b.len, b.data);
    else
        rc = -1;
    buf_free(&b);
    return rc;
}

void cql_index_attr(const char *index, char *out, size_t cap)
{
    snprintf(out, cap, "$i:%s", index);
}

/* The key of the indexed bytes p[0..len) appended to out. */
static void key_bytes(const uint8_t *p, size_t len, buf *out)
{
    if (len <= KEY_BYTES_MAX) {
        buf_putc(out, 0x01);
        buf_append(out, p, len);
        return;
    }
    XXH128_hash_t h = XXH3_128bits(p, len);
    uint8_t b[17];
    b[0] = 0x02;
    for (int i = 0; i < 8; i++) {
        b[1 + i] = (uint8_t)(h.high64 >> (56 - 8 * i));
        b[9 + i] = (uint8_t)(h.low64 >> (56 - 8 * i));
    }
    buf_append(out, b, sizeof b);
}

/* An entry's indexed bytes: the key's length, the key, then the value. */
static void entry_bytes(const uint8_t *k, size_t klen, const uint8_t *v, size_t vlen, buf *out)
{
    buf_put_be32(out, (uint32_t)klen);
    buf_append(out, k, klen);
    buf_append(out, v, vlen);
}

/* Adds the key of p[0..len) to the binary set (a JSON array of base64 strings) once. */
static int add_key(json_t *set, const uint8_t *p, size_t len)
{
    buf k;
    buf_init(&k, 0);
    key_bytes(p, len, &k);
    json_t *b = cql_b64(k.data, k.len); /* {"B": ...} */
    buf_free(&k);
    if (b == NULL) return -1;
    json_t *text = json_object_get(b, "B");
    for (size_t i = 0; i < json_array_size(set); i++)
        if (json_equal(json_array_get(set, i), text)) {
            json_decref(b);
            return 0;
        }
    int rc = json_array_append(set, text);
    json_decref(b);
    return rc;
}

/* The keys index ix serves for the column value v[0..len) into set. */
static int value_keys(const cql_tindex *ix, const uint8_t *v, size_t len, json_t *set)
{
    if (ix->kind == CQL_INDEX_FULL) return add_key(set, v, len);
    int map = ix->col->type->wire.id == CQL_TYPE_MAP;
    cql_elements e;
    uint32_t n;
    if (cql_collection_open(&e, v, len, map, &n) != 0) return -1;
    const uint8_t *p, *k = NULL;
    int32_t plen, klen = 0;
    int got, rc = 0;
    for (size_t i = 0; rc == 0 && (got = cql_element_next(&e, &p, &plen)) == 1; i++) {
        if (plen < 0) continue;
        if (map && i % 2 == 0) {
            k = p;
            klen = plen;
            if (ix->kind == CQL_INDEX_KEYS) rc = add_key(set, p, (size_t)plen);
            continue;
        }
        if (ix->kind == CQL_INDEX_VALUES) {
            rc = add_key(set, p, (size_t)plen);
        } else if (ix->kind == CQL_INDEX_ENTRIES && k) {
            buf b;
            buf_init(&b, 0);
            entry_bytes(k, (size_t)klen, p, (size_t)plen, &b);
            rc = add_key(set, (const uint8_t *)b.data, b.len);
            buf_free(&b);
        }
    }
    return rc == 0 && got == 0 ? 0 : -1;
}

int cql_row_index(json_t *item, const cql_tinfo *t, int64_t now_s)
{
    buf v;
    buf_init(&v, 0);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < t->nindexes; i++) {
        const cql_tindex *ix = &t->indexes[i];
        char attr[CQL_NAME_MAX + 4];
        cql_index_attr(ix->name, attr, sizeof attr);
        buf_reset(&v);
        int got = cql_cell_read(item, ix->col, now_s, &v);
        json_t *set = json_array();
        if (got < 0 || set == NULL ||
            (got == 1 && value_keys(ix, (const uint8_t *)v.data, v.len, set) != 0)) {
            json_decref(set);
            rc = -1;
            break;
        }
        if (json_array_size(set) == 0)
            json_object_del(item, attr);
        else
            json_object_set_new(item, attr, json_pack("{s:o}", "BS", set));
        if (json_array_size(set) == 0) json_decref(set);
    }
    buf_free(&v);
    /* the attributes of indexes dropped since the row was written go with its next write */
    const char *name;
    json_t *val, *tmp;
    json_object_foreach_safe(item, tmp, name, val)
    {
        if (strncmp(name, "$i:", 3) != 0) continue;
        size_t i = 0;
        while (i < t->nindexes && strcmp(t->indexes[i].name, name + 3) != 0)
            i++;
        if (i == t->nindexes) json_object_del(item, name);
    }
    return rc;
}

/* A term of type as canonical bytes into out: CQLVAL_OK, or another CQLVAL_* code (the
 * call's error set for CQLVAL_ERROR). */
static int canonical_term(cql_run *r, const cql_ctype *type, const char *receiver,
                          const cql_expr *e, buf *out)
{
    buf raw;
    buf_init(&raw, 0);
    int rc = cql_term(r, type, receiver, e, &raw);
    if (rc == CQLVAL_OK && cqlval_canonical(type, (const uint8_t *)raw.data, raw.len, out) != 0) {
        cql_fail(r->call, CQL_ERR_INVALID, "Invalid value for %s", receiver);
        rc = CQLVAL_ERROR;
    }
    buf_free(&raw);
    return rc;
}

json_t *cql_index_lookup(cql_run *r, const cql_tindex *ix, const cql_relation *rel)
{
    const cql_ctype *type = ix->col->type;
    int map = type->wire.id == CQL_TYPE_MAP;
    buf want, key;
    buf_init(&want, 0);
    buf_init(&key, 0);
    int rc;
    if (ix->kind == CQL_INDEX_ENTRIES) {
        buf k;
        buf_init(&k, 0);
        rc = canonical_term(r, type->args[0], ix->col->name, rel->key, &k);
        if (rc == CQLVAL_OK)
            rc = canonical_term(r, type->args[1], ix->col->name, rel->value, &want);
        if (rc == CQLVAL_OK) {
            buf e;
            buf_init(&e, 0);
            entry_bytes((const uint8_t *)k.data, k.len, (const uint8_t *)want.data, want.len, &e);
            buf_free(&want);
            want = e;
        }
        buf_free(&k);
    } else {
        const cql_ctype *et = ix->kind == CQL_INDEX_FULL           ? type
                              : ix->kind == CQL_INDEX_KEYS || !map ? type->args[0]
                                                                   : type->args[1];
        rc = canonical_term(r, et, ix->col->name, rel->value, &want);
    }
    json_t *av = NULL;
    if (rc == CQLVAL_OK) {
        key_bytes((const uint8_t *)want.data, want.len, &key);
        av = cql_b64(key.data, key.len);
        if (av == NULL) cql_fail(r->call, CQL_ERR_SERVER, "out of memory");
    } else if (rc != CQLVAL_ERROR) {
        cql_fail(r->call, CQL_ERR_INVALID, "Unsupported null value for column %s", ix->col->name);
    }
    buf_free(&want);
    buf_free(&key);
    return av;
}

const cql_tindex *cql_index_serving(const cql_tinfo *t, const cql_relation *rel)
{
    if (rel->ncolumns != 1) return NULL;
    for (size_t i = 0; i < t->nindexes; i++) {
        const cql_tindex *ix = &t->indexes[i];
        if (strcmp(ix->col->name, rel->columns[0]) != 0) continue;
        int served = 0;
        switch (ix->kind) {
        case CQL_INDEX_VALUES:
            served = rel->kind == CQL_REL_COLUMN && rel->op == CQL_OP_CONTAINS;
            break;
        case CQL_INDEX_KEYS:
            served = rel->kind == CQL_REL_COLUMN && rel->op == CQL_OP_CONTAINS_KEY;
            break;
        case CQL_INDEX_ENTRIES:
            served = rel->kind == CQL_REL_ELEMENT && rel->op == CQL_OP_EQ;
            break;
        case CQL_INDEX_FULL:
            served = rel->kind == CQL_REL_COLUMN && rel->op == CQL_OP_EQ;
            break;
        }
        if (served) return ix;
    }
    return NULL;
}

/* cql_index_rows' step: row i read again in the transaction, its index attributes written
 * (and those of dropped indexes removed). */
typedef struct index_walk {
    const cql_tinfo *t;
    int64_t now_s;
} index_walk;

static int index_row(void *arg, item_txn *x, size_t i, json_t **keep, qr_err *err)
{
    index_walk *w = arg;
    const json_t *cur_item = NULL;
    int got = txn_read(x, i, &cur_item, err);
    if (got != 1) return got < 0 ? -1 : 0;
    *keep = json_deep_copy(cur_item);
    if (*keep == NULL || cql_row_index(*keep, w->t, w->now_s) != 0)
        return err_set(err, QR_E_INTERNAL, "a row of %s cannot be indexed", w->t->name);
    return json_equal(*keep, cur_item) ? 0 : txn_put(x, i, *keep, item_size(*keep), err);
}

int cql_index_rows(cql_call *c, const cql_tinfo *t)
{
    table *et = cql_engine_table(c, t);
    if (et == NULL) return -1;
    qr_err err;
    err_init(&err);
    index_walk w = {t, (int64_t)time(NULL)};
    if (cql_each_row_in_transactions(c, et, index_row, &w, 1, &err) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "the rows of %s cannot be indexed: %s", t->name,
                        err.msg);
    return 0;
}
