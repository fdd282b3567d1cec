/* cqlexec_helper.h — what the executor's tests share: request bodies made with the wire
 * codec's writers (QUERY, PREPARE, EXECUTE, BATCH), qr_cql_call on them, and the RESULT
 * and ERROR bodies read back into plain structs (rows as their columns' bytes).
 *
 * Test code only; it checks nothing itself. */
#ifndef QR_TEST_CQLEXEC_HELPER_H
#define QR_TEST_CQLEXEC_HELPER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cqlwire/cql_codec.h"
#include "cqlwire/cql_value.h"
#include "quarry.h"

/* A bound value: bytes, or len CQL_NULL / CQL_UNSET; name for named values. */
typedef struct tv {
    const void *p;
    int32_t len;
    const char *name;
} tv;

/* Query parameters of a test request. */
typedef struct tparams {
    const tv *values;
    uint16_t n;
    int32_t page_size; /* 0: none */
    const uint8_t *paging_state;
    size_t paging_len;
    int64_t timestamp; /* 0: none */
} tparams;

static inline void put_params(buf *b, uint8_t version, const tparams *p)
{
    uint32_t flags = 0;
    if (p && p->n) flags |= CQL_QF_VALUES;
    if (p && p->n && p->values[0].name) flags |= CQL_QF_NAMES_FOR_VALUES;
    if (p && p->page_size) flags |= CQL_QF_PAGE_SIZE;
    if (p && p->paging_state) flags |= CQL_QF_PAGING_STATE;
    if (p && p->timestamp) flags |= CQL_QF_DEFAULT_TIMESTAMP;
    cql_put_consistency(b, CQL_CL_ONE);
    if (version >= 5)
        cql_put_int(b, (int32_t)flags);
    else
        cql_put_byte(b, (uint8_t)flags);
    if (flags & CQL_QF_VALUES) {
        cql_put_short(b, p->n);
        for (uint16_t i = 0; i < p->n; i++) {
            if (flags & CQL_QF_NAMES_FOR_VALUES) cql_put_string(b, p->values[i].name);
            cql_put_value(b, p->values[i].p, p->values[i].len);
        }
    }
    if (flags & CQL_QF_PAGE_SIZE) cql_put_int(b, p->page_size);
    if (flags & CQL_QF_PAGING_STATE) cql_put_bytes(b, p->paging_state, (int32_t)p->paging_len);
    if (flags & CQL_QF_DEFAULT_TIMESTAMP) cql_put_long(b, p->timestamp);
}

static inline void body_query(buf *b, uint8_t version, const char *text, const tparams *p)
{
    cql_put_long_string(b, text, strlen(text));
    put_params(b, version, p);
}

static inline void body_prepare(buf *b, uint8_t version, const char *text)
{
    cql_put_long_string(b, text, strlen(text));
    if (version >= 5) cql_put_int(b, 0);
}

static inline void body_execute(buf *b, uint8_t version, const uint8_t *id, size_t id_len,
                                const tparams *p)
{
    cql_put_short_bytes(b, id, id_len);
    if (version >= 5) cql_put_short_bytes(b, id, 0);
    put_params(b, version, p);
}

/* A BATCH of n statements: texts[i] (or, with ids[i] set, a prepared id of 16 bytes),
 * each with its values. */
typedef struct tbatch_stmt {
    const char *text;
    const uint8_t *id;
    size_t id_len;
    const tv *values;
    uint16_t n;
} tbatch_stmt;

static inline void body_batch(buf *b, uint8_t version, uint8_t type, const tbatch_stmt *s,
                              uint16_t n)
{
    cql_put_byte(b, type);
    cql_put_short(b, n);
    for (uint16_t i = 0; i < n; i++) {
        if (s[i].id) {
            cql_put_byte(b, 1);
            cql_put_short_bytes(b, s[i].id, s[i].id_len);
        } else {
            cql_put_byte(b, 0);
            cql_put_long_string(b, s[i].text, strlen(s[i].text));
        }
        cql_put_short(b, s[i].n);
        for (uint16_t j = 0; j < s[i].n; j++)
            cql_put_value(b, s[i].values[j].p, s[i].values[j].len);
    }
    cql_put_consistency(b, CQL_CL_ONE);
    if (version >= 5)
        cql_put_int(b, 0);
    else
        cql_put_byte(b, 0);
}

/* ---- answers ---- */

#define TMAX_COLS 64
typedef struct tresult {
    int ok;            /* 1: RESULT, 0: ERROR */
    int32_t kind;      /* RESULT kind */
    uint16_t err_code; /* ERROR */
    char msg[1024];
    char ks[64];   /* SET_KEYSPACE, SCHEMA_CHANGE, ALREADY_EXISTS */
    char name[64]; /* SCHEMA_CHANGE, ALREADY_EXISTS */
    char change[16], target[16];
    int has_event;
    char keyspace_after[64];
    /* rows */
    uint32_t ncols, nrows;
    char cols[TMAX_COLS][64];
    uint16_t col_types[TMAX_COLS];
    cql_value *vals; /* nrows * ncols, pointing into body */
    uint8_t paging[512];
    int32_t paging_len; /* -1: none */
    /* prepared */
    uint8_t id[64];
    size_t id_len;
    uint32_t nmarkers;
    unsigned char *body;
    size_t len;
    cql_pool pool;
} tresult;

static inline void tresult_free(tresult *r)
{
    free(r->vals);
    free(r->body);
    cql_pool_free(&r->pool);
    memset(r, 0, sizeof *r);
}

static inline void str_copy(char *out, size_t cap, cql_str s)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    memcpy(out, s.p ? s.p : "", n);
    out[n] = '\0';
}

/* Reads a rows metadata block; keeps the column names and types when cols is set. */
static inline void read_metadata(cql_reader *rd, tresult *r, int cols)
{
    int32_t flags = 0, ncols = 0;
    cql_read_int(rd, "flags", &flags);
    cql_read_int(rd, "columns", &ncols);
    r->paging_len = -1;
    if (flags & CQL_ROWS_HAS_MORE_PAGES) {
        cql_value ps;
        cql_read_bytes(rd, "paging state", &ps);
        if (ps.len >= 0 && (size_t)ps.len <= sizeof r->paging) {
            memcpy(r->paging, ps.p, (size_t)ps.len);
            r->paging_len = ps.len;
        }
    }
    if (flags & CQL_ROWS_METADATA_CHANGED) {
        cql_str id;
        cql_read_short_bytes(rd, "new metadata id", &id);
    }
    if (flags & CQL_ROWS_NO_METADATA) return;
    cql_str s;
    if (flags & CQL_ROWS_GLOBAL_TABLES_SPEC) {
        cql_read_string(rd, "ks", &s);
        cql_read_string(rd, "table", &s);
    }
    for (int32_t i = 0; i < ncols && i < TMAX_COLS; i++) {
        if (!(flags & CQL_ROWS_GLOBAL_TABLES_SPEC)) {
            cql_read_string(rd, "ks", &s);
            cql_read_string(rd, "table", &s);
        }
        cql_read_string(rd, "name", &s);
        cql_type *t = NULL;
        cql_read_type(rd, "type", &t);
        if (cols) {
            str_copy(r->cols[i], sizeof r->cols[i], s);
            r->col_types[i] = t ? t->id : 0;
        }
    }
    if (cols) r->ncols = (uint32_t)ncols;
}

/* Runs one request and reads its answer into *r. */
static inline int tcall(qr_db *db, uint8_t version, uint8_t opcode, const buf *body, const char *ks,
                        tresult *r)
{
    memset(r, 0, sizeof *r);
    r->paging_len = -1;
    qr_cql_request req = {.version = version,
                          .opcode = opcode,
                          .body = body->data,
                          .len = body->len,
                          .keyspace = ks,
                          .user = NULL};
    qr_cql_response resp;
    int rc = qr_cql_call(db, &req, &resp);
    r->body = resp.body;
    r->len = resp.len;
    r->has_event = resp.event != NULL;
    snprintf(r->keyspace_after, sizeof r->keyspace_after, "%s", resp.keyspace);
    free(resp.event);
    cql_reader rd;
    cql_reader_init(&rd, r->body, r->len, &r->pool);
    if (resp.opcode == CQL_OP_ERROR) {
        int32_t code = 0;
        cql_str m;
        cql_read_int(&rd, "code", &code);
        cql_read_string(&rd, "message", &m);
        r->err_code = (uint16_t)code;
        str_copy(r->msg, sizeof r->msg, m);
        if (code == CQL_ERR_ALREADY_EXISTS) {
            cql_str a, b;
            cql_read_string(&rd, "ks", &a);
            cql_read_string(&rd, "table", &b);
            str_copy(r->ks, sizeof r->ks, a);
            str_copy(r->name, sizeof r->name, b);
        }
        return rc;
    }
    r->ok = 1;
    cql_read_int(&rd, "kind", &r->kind);
    cql_str s;
    if (r->kind == CQL_RESULT_SET_KEYSPACE) {
        cql_read_string(&rd, "ks", &s);
        str_copy(r->ks, sizeof r->ks, s);
    } else if (r->kind == CQL_RESULT_SCHEMA_CHANGE) {
        cql_read_string(&rd, "change", &s);
        str_copy(r->change, sizeof r->change, s);
        cql_read_string(&rd, "target", &s);
        str_copy(r->target, sizeof r->target, s);
        cql_read_string(&rd, "ks", &s);
        str_copy(r->ks, sizeof r->ks, s);
        if (strcmp(r->target, "KEYSPACE") != 0) {
            cql_read_string(&rd, "name", &s);
            str_copy(r->name, sizeof r->name, s);
        }
    } else if (r->kind == CQL_RESULT_ROWS) {
        read_metadata(&rd, r, 1);
        int32_t n = 0;
        cql_read_int(&rd, "rows", &n);
        r->nrows = (uint32_t)(n > 0 ? n : 0);
        r->vals = calloc((size_t)r->nrows * r->ncols + 1, sizeof *r->vals);
        for (size_t i = 0; i < (size_t)r->nrows * r->ncols; i++)
            cql_read_bytes(&rd, "value", &r->vals[i]);
    } else if (r->kind == CQL_RESULT_PREPARED) {
        cql_read_short_bytes(&rd, "id", &s);
        r->id_len = s.len < sizeof r->id ? s.len : sizeof r->id;
        memcpy(r->id, s.p, r->id_len);
        if (version >= 5) cql_read_short_bytes(&rd, "metadata id", &s);
        int32_t flags = 0, n = 0, npk = 0;
        cql_read_int(&rd, "flags", &flags);
        cql_read_int(&rd, "markers", &n);
        r->nmarkers = (uint32_t)n;
        if (version >= 4) {
            cql_read_int(&rd, "pk count", &npk);
            for (int32_t i = 0; i < npk; i++) {
                uint16_t x;
                cql_read_short(&rd, "pk index", &x);
            }
        }
        if (flags & CQL_ROWS_GLOBAL_TABLES_SPEC) {
            cql_read_string(&rd, "ks", &s);
            cql_read_string(&rd, "table", &s);
        }
        for (int32_t i = 0; i < n; i++) {
            if (!(flags & CQL_ROWS_GLOBAL_TABLES_SPEC)) {
                cql_read_string(&rd, "ks", &s);
                cql_read_string(&rd, "table", &s);
            }
            cql_read_string(&rd, "name", &s);
            cql_type *t;
            cql_read_type(&rd, "type", &t);
        }
        read_metadata(&rd, r, 1);
    }
    if (rd.err[0]) snprintf(r->msg, sizeof r->msg, "unreadable answer: %s", rd.err);
    return rc;
}

/* QUERY text (values in p, which may be NULL) in keyspace ks (may be NULL), version 4. */
static inline int tquery(qr_db *db, const char *ks, const char *text, const tparams *p, tresult *r)
{
    buf b;
    buf_init(&b, 0);
    body_query(&b, 4, text, p);
    int rc = tcall(db, 4, CQL_OP_QUERY, &b, ks, r);
    buf_free(&b);
    return rc;
}

/* The column named name in *r, or -1. */
static inline int tcol(const tresult *r, const char *name)
{
    for (uint32_t i = 0; i < r->ncols; i++)
        if (strcmp(r->cols[i], name) == 0) return (int)i;
    return -1;
}

/* Row i's value of column name (len -1 when null or absent). */
static inline cql_value tval(const tresult *r, uint32_t row, const char *name)
{
    cql_value none = {NULL, -1};
    int c = tcol(r, name);
    if (c < 0 || row >= r->nrows) return none;
    return r->vals[(size_t)row * r->ncols + (size_t)c];
}

/* Row i's text value of column name, copied into out ("" when null). */
static inline const char *ttext(const tresult *r, uint32_t row, const char *name, char *out,
                                size_t cap)
{
    cql_value v = tval(r, row, name);
    size_t n = v.len < 0 ? 0 : (size_t)v.len;
    if (n >= cap) n = cap - 1;
    memcpy(out, v.p ? (const char *)v.p : "", n);
    out[n] = '\0';
    return out;
}

#endif
