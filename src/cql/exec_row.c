/* exec_row.c — a CQL row in its engine item (the contract's storage mapping): the
 * partition key's serialized form ($pk) and the clustering key's order-preserving form
 * ($ck: 0x01 and the components, or 0x00 alone for a partition's static row) as the two
 * binary key attributes; every column's value as an attribute in value.h's stored form;
 * per cell its write timestamp ($ts, microseconds) and expiry ($exp, seconds); the row
 * marker an INSERT leaves ($row, $rowexp); and the item's expiry for the TTL sweeper
 * ($expires) once everything in it expires.
 *
 * It reads and changes one item at a time; which items a statement touches is
 * exec_write.c's and exec_select.c's. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cql/exec_int.h"
#include "cql/keyenc.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"
#include "engine/engine.h"
#include "model/value.h"

/* ---- bytes in items ---- */

json_t *cql_b64(const void *p, size_t len)
{
    size_t cap = 4 * ((len + 2) / 3) + 1;
    char *s = malloc(cap);
    if (s == NULL) return NULL;
    EVP_EncodeBlock((unsigned char *)s, p, (int)len);
    json_t *av = json_pack("{s:s}", "B", s);
    free(s);
    return av;
}

int cql_unb64(const json_t *av, buf *out)
{
    unsigned char *bytes;
    size_t len;
    if (value_binary(av, &bytes, &len) != 0) return -1;
    int rc = buf_append(out, bytes, len);
    free(bytes);
    return rc;
}

int64_t cql_now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* ---- keys ---- */

int cql_pk_serialize(const cql_tinfo *t, const cql_value *vals, buf *out)
{
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < t->ncols && n < 64; i++)
        if (t->cols[i].kind == 'p') names[t->cols[i].pos] = t->cols[i].name, n++;
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    return cqlkey_partition(out, vals, names, t->npk, &perr);
}

int cql_ck_append(buf *out, const cql_tcol *col, const uint8_t *p, size_t len)
{
    cqlkey_col kc = {.type = col->type, .desc = col->desc};
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    return cqlkey_put(out, &kc, p, len, &perr);
}

/* ---- the item of a row ---- */

int cql_row_key(const table *et, const buf *pk, const buf *ck, buf *key, qr_err *err)
{
    json_t *item = json_object();
    json_object_set_new(item, CQL_PK_ATTR, cql_b64(pk->data ? pk->data : "", pk->len));
    if (ck) json_object_set_new(item, CQL_CK_ATTR, cql_b64(ck->data ? ck->data : "", ck->len));
    int rc = key_item(key, et, item, err);
    json_decref(item);
    return rc;
}

json_t *cql_row_new(const buf *pk, const buf *ck)
{
    json_t *item = json_object();
    json_object_set_new(item, CQL_PK_ATTR, cql_b64(pk->data ? pk->data : "", pk->len));
    if (ck) json_object_set_new(item, CQL_CK_ATTR, cql_b64(ck->data ? ck->data : "", ck->len));
    return item;
}

/* The attribute holding column name: the name, with one more '$' before a name that
 * starts with '$' (the executor's own attributes start with one). */
void cql_cell_attr(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", name[0] == '$' ? "$" : "", name);
}

static json_t *meta_map(json_t *item, const char *which, int make)
{
    json_t *m = json_object_get(json_object_get(item, which), "M");
    if (m == NULL && make) {
        m = json_object();
        json_object_set_new(item, which, json_pack("{s:o}", "M", m));
    }
    return m;
}

static int64_t num_of(const json_t *av)
{
    const char *s = json_string_value(json_object_get(av, "N"));
    return s ? strtoll(s, NULL, 10) : 0;
}

static json_t *num(int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)v);
    return json_pack("{s:s}", "N", b);
}

int64_t cql_cell_ts(json_t *item, const char *col)
{
    json_t *t = json_object_get(meta_map(item, "$ts", 0), col);
    return t ? num_of(t) : INT64_MIN;
}

int64_t cql_cell_exp(json_t *item, const char *col)
{
    json_t *e = json_object_get(meta_map(item, "$exp", 0), col);
    return e ? num_of(e) : 0;
}

int cql_cell_live(json_t *item, const char *col, int64_t now_s)
{
    char attr[CQL_NAME_MAX + 2];
    cql_cell_attr(col, attr, sizeof attr);
    if (json_object_get(item, attr) == NULL) return 0;
    int64_t e = cql_cell_exp(item, col);
    return e == 0 || e > now_s;
}

int cql_cell_write(json_t *item, const cql_tcol *col, const uint8_t *p, int32_t len, int64_t ts,
                   int64_t exp_s)
{
    if (ts < cql_cell_ts(item, col->name)) return 0; /* an older write loses */
    char attr[CQL_NAME_MAX + 2];
    cql_cell_attr(col->name, attr, sizeof attr);
    if (len < 0) {
        json_object_del(item, attr);
        json_object_del(meta_map(item, "$exp", 1), col->name);
        /* the deletion's time stays, so that an older write cannot bring the cell back */
        json_object_set_new(meta_map(item, "$ts", 1), col->name, num(ts));
        return 1;
    }
    json_t *av = col->type ? cqlval_to_item(col->type, p, (size_t)len) : NULL;
    if (av == NULL) return -1;
    json_object_set_new(item, attr, av);
    json_object_set_new(meta_map(item, "$ts", 1), col->name, num(ts));
    if (exp_s > 0)
        json_object_set_new(meta_map(item, "$exp", 1), col->name, num(exp_s));
    else
        json_object_del(meta_map(item, "$exp", 1), col->name);
    return 1;
}

/* A live cell not older than a drop of its column's name. */
static int cell_visible(json_t *item, const cql_tcol *col, int64_t now_s)
{
    if (!cql_cell_live(item, col->name, now_s)) return 0;
    return col->dropped_at == INT64_MIN || col->kind == 'p' || col->kind == 'c' ||
           cql_cell_ts(item, col->name) > col->dropped_at;
}

int cql_cell_read(json_t *item, const cql_tcol *col, int64_t now_s, buf *out)
{
    if (!cell_visible(item, col, now_s)) return 0;
    char attr[CQL_NAME_MAX + 2];
    cql_cell_attr(col->name, attr, sizeof attr);
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    if (cqlval_from_item(col->type, json_object_get(item, attr), out, &perr) != 0) return -1;
    return 1;
}

void cql_row_mark(json_t *item, int64_t ts, int64_t exp_s)
{
    int64_t old = json_object_get(item, "$row") ? num_of(json_object_get(item, "$row")) : INT64_MIN;
    if (ts < old) return;
    json_object_set_new(item, "$row", num(ts));
    if (exp_s > 0)
        json_object_set_new(item, "$rowexp", num(exp_s));
    else
        json_object_del(item, "$rowexp");
}

int cql_row_live(json_t *item, const cql_tinfo *t, int64_t now_s)
{
    json_t *mark = json_object_get(item, "$row");
    if (mark) {
        json_t *e = json_object_get(item, "$rowexp");
        if (e == NULL || num_of(e) > now_s) return 1;
    }
    for (size_t i = 0; i < t->ncols; i++)
        if ((t->cols[i].kind == 'r' || t->cols[i].kind == 's') &&
            cell_visible(item, &t->cols[i], now_s))
            return 1;
    return 0;
}

void cql_row_seal(json_t *item, const cql_tinfo *t)
{
    /* the item expires when its marker and every cell do */
    int64_t last = 0;
    int forever = 0;
    json_t *mark = json_object_get(item, "$row");
    if (mark) {
        json_t *e = json_object_get(item, "$rowexp");
        if (e == NULL)
            forever = 1;
        else if (num_of(e) > last)
            last = num_of(e);
    }
    for (size_t i = 0; i < t->ncols && !forever; i++) {
        const cql_tcol *c = &t->cols[i];
        if (c->kind != 'r' && c->kind != 's') continue;
        char attr[CQL_NAME_MAX + 2];
        cql_cell_attr(c->name, attr, sizeof attr);
        if (json_object_get(item, attr) == NULL) continue;
        int64_t e = cql_cell_exp(item, c->name);
        if (e == 0)
            forever = 1;
        else if (e > last)
            last = e;
    }
    if (!forever && last > 0)
        json_object_set_new(item, CQL_EXPIRES_ATTR, num(last));
    else
        json_object_del(item, CQL_EXPIRES_ATTR);
}

int64_t cql_cell_writetime(json_t *item, const char *col)
{
    return cql_cell_ts(item, col);
}

/* ---- the engine table ---- */

table *cql_engine_table(cql_call *c, const cql_tinfo *t)
{
    char full[2 * CQL_NAME_MAX + 2];
    snprintf(full, sizeof full, "%s.%s", t->ks, t->engine[0] ? t->engine : t->name);
    table *et = catalog_get(c->db, full);
    if (et == NULL)
        cql_fail(c, CQL_ERR_SERVER, "the rows of %s cannot be found (no engine table %s)", t->name,
                 full);
    return et;
}
