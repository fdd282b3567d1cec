/* exec_row.c — a CQL row in its engine item (the contract's storage mapping): the
 * partition key's serialized form ($pk) and the clustering key's order-preserving form
 * ($ck: 0x01 and the components, or 0x00 alone for a partition's static row) as the two
 * binary key attributes; every column's value as an attribute in value.h's stored form;
 * per cell its write timestamp ($ts, microseconds) and expiry ($exp, seconds); the row
 * marker an INSERT leaves ($row, $rowexp); and the item's expiry for the TTL sweeper
 * ($expires) once everything in it expires. A non-frozen list, set or map is a cell per
 * element: its attribute holds the live elements, and $el the elements' times (t),
 * expiries (e) and, for a list, places (k) in the same order, its tombstones (x: key,
 * time, when made) and the whole collection's deletion time (d). A deletion is a
 * tombstone kept in the item it deletes: the row's deletion time ($del); in a partition's
 * static row item, the partition's ($del) and its range deletions ($rt); and until when
 * they are kept ($delexp, gc_grace_seconds on). An item whose tombstones are all it holds
 * stays, without its key columns' attributes, until the sweeper removes it.
 *
 * It reads and changes one item at a time; which items a statement touches is
 * exec_write.c's and exec_select.c's. */
#include <assert.h>
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

int cql_pk_serialize(cql_call *c, const cql_tinfo *t, const cql_value *vals, buf *out)
{
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < t->ncols && n < 64; i++)
        if (t->cols[i].kind == 'p') names[t->cols[i].pos] = t->cols[i].name, n++;
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    if (cqlkey_partition(out, vals, names, t->npk, &perr) == 0) return 0;
    if (c == NULL) return -1;
    return cql_fail(c, perr.code ? (cql_error_code)perr.code : CQL_ERR_INVALID, "%s", perr.msg);
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
    size_t extra = name[0] == '$', n = strlen(name);
    if (cap == 0) return;
    if (extra + n >= cap) n = cap - 1 - extra;
    out[0] = '$';
    memcpy(out + extra, name, n);
    out[extra + n] = '\0';
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

static int coll_write(json_t *item, const cql_tcol *col, const uint8_t *p, int32_t len, int64_t ts,
                      int64_t exp_s);

/* Whether a live write of value p (len bytes) loses to the cell already in item at the same
 * timestamp, as Cassandra reconciles a tie: a tombstone wins, else the greater value (its
 * bytes compared as Java's ByteBuffer does, signed). */
static int loses_tie(json_t *item, const cql_tcol *col, const char *attr, const uint8_t *p,
                     int32_t len)
{
    if (json_object_get(item, attr) == NULL) return 1; /* deleted at that time */
    buf cur;
    buf_init(&cur, 0);
    int got = cql_cell_read(item, col, INT64_MIN, &cur);
    int loses = 0;
    if (got == 1) {
        size_t n = cur.len < (size_t)len ? cur.len : (size_t)len;
        int c = 0;
        for (size_t i = 0; i < n && c == 0; i++)
            c = (int8_t)p[i] - (int8_t)cur.data[i];
        loses = c < 0 || (c == 0 && (size_t)len <= cur.len);
    }
    buf_free(&cur);
    return loses;
}

int cql_cell_write(json_t *item, const cql_tcol *col, const uint8_t *p, int32_t len, int64_t ts,
                   int64_t exp_s)
{
    if (cql_coll_col(col)) return coll_write(item, col, p, len, ts, exp_s);
    const char *stored = cql_col_stored(col);
    int64_t had = cql_cell_ts(item, stored);
    if (ts < had) return 0; /* an older write loses */
    char attr[CQL_NAME_MAX + 2];
    cql_cell_attr(stored, attr, sizeof attr);
    if (ts == had && len >= 0 && loses_tie(item, col, attr, p, len)) return 0;
    if (len < 0) {
        json_object_del(item, attr);
        json_object_del(meta_map(item, "$exp", 0), stored);
        /* the deletion's time stays, so that an older write cannot bring the cell back */
        json_object_set_new(meta_map(item, "$ts", 1), stored, num(ts));
        return 1;
    }
    json_t *av = col->type ? cqlval_to_item(col->type, p, (size_t)len) : NULL;
    if (av == NULL) return -1;
    json_object_set_new(item, attr, av);
    json_object_set_new(meta_map(item, "$ts", 1), stored, num(ts));
    if (exp_s > 0)
        json_object_set_new(meta_map(item, "$exp", 1), stored, num(exp_s));
    else /* not made to delete from: it would stay, empty, in every row without a TTL */
        json_object_del(meta_map(item, "$exp", 0), stored);
    return 1;
}

static json_t *coll_meta(json_t *item, const char *col);

/* Calls fn for the time and expiry of each element a non-frozen collection's attribute
 * holds, until fn answers non-zero; 0 when it never did. -1 when col has its cell's times
 * instead (a collection stored whole). */
static int each_el_time(json_t *item, const cql_tcol *col,
                        int (*fn)(void *arg, int64_t ts, int64_t exp), void *arg)
{
    json_t *m = cql_coll_col(col) ? coll_meta(item, cql_col_stored(col)) : NULL;
    if (m == NULL) return -1;
    json_t *t = json_object_get(json_object_get(m, "t"), "L"),
           *e = json_object_get(json_object_get(m, "e"), "L");
    for (size_t i = 0; i < json_array_size(t); i++) {
        int rc = fn(arg, num_of(json_array_get(t, i)), num_of(json_array_get(e, i)));
        if (rc) return rc;
    }
    return 0;
}

/* ---- reading a stored row (storedrow.h) ---- */

/* The slots of a row read against a map: the row's own members, then per column its
 * cell and its members of the $ts, $exp and $el maps. */
enum { SLOT_PK, SLOT_CK, SLOT_TS, SLOT_EXP, SLOT_EL, SLOT_ROW, SLOT_ROWEXP, SLOT_FIXED };
enum { CS_CELL, CS_TS, CS_EXP, CS_EL, CS_N };
#define COL_SLOT(ci, which) (SLOT_FIXED + (uint32_t)(ci)*CS_N + (uint32_t)(which))

static const char *const fixed_members[SLOT_FIXED] = {
    [SLOT_PK] = CQL_PK_ATTR, [SLOT_CK] = CQL_CK_ATTR, [SLOT_TS] = "$ts",        [SLOT_EXP] = "$exp",
    [SLOT_EL] = "$el",       [SLOT_ROW] = "$row",     [SLOT_ROWEXP] = "$rowexp"};

/* Names are a few bytes, looked up eight or so times a row: hashed by their first and
 * last eight bytes (four for shorter names; all of a name up to sixteen), multiplied in,
 * rather than byte by byte. */
static inline uint32_t name_hash(const char *s, size_t n)
{
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        a = x;
        b = y;
    } else if (n > 0) {
        a = (uint64_t)(uint8_t)s[0] | (uint64_t)(uint8_t)s[n / 2] << 8 |
            (uint64_t)(uint8_t)s[n - 1] << 16;
    }
    uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ n;
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* Whether tab's place at holds name s (n bytes). */
static inline int names_at(const cql_rowname *tab, uint32_t at, const char *s, size_t n)
{
    const cql_rowname *e = &tab[at];
    return e->name != NULL && e->len == n && memcmp(e->name, s, n) == 0;
}

/* The place of name in tab (mask + 1 places), or CQL_SNONE. */
static uint32_t names_place(const cql_rowname *tab, uint32_t mask, const char *s, size_t n)
{
    for (uint32_t h = name_hash(s, n) & mask;; h = (h + 1) & mask) {
        if (tab[h].name == NULL) return CQL_SNONE;
        if (names_at(tab, h, s, n)) return h;
    }
}

/* The slot of name in tab, or CQL_SNONE. */
static uint32_t names_find(const cql_rowname *tab, uint32_t mask, const char *s, size_t n)
{
    uint32_t at = names_place(tab, mask, s, n);
    return at == CQL_SNONE ? CQL_SNONE : tab[at].slot;
}

static void names_put(cql_rowname *tab, uint32_t mask, const char *s, uint32_t slot)
{
    size_t n = strlen(s);
    uint32_t h = name_hash(s, n) & mask;
    while (tab[h].name != NULL && !(tab[h].len == n && memcmp(tab[h].name, s, n) == 0))
        h = (h + 1) & mask;
    tab[h] = (cql_rowname){.name = s, .len = (uint32_t)n, .slot = slot};
}

int cql_rowmap_init(cql_rowmap *m, const cql_tcol *cols, size_t ncols)
{
    memset(m, 0, sizeof *m);
    if (ncols > (UINT32_MAX - SLOT_FIXED) / CS_N / 4) return -1;
    m->cols = cols;
    m->ncols = ncols;
    m->nslot = COL_SLOT(ncols, 0);
    uint32_t places = 16;
    while (places < 2 * (ncols + SLOT_FIXED))
        places *= 2;
    m->mask = places - 1;
    m->members = calloc(places, sizeof *m->members);
    m->colnames = calloc(places, sizeof *m->colnames);
    m->want = malloc(m->nslot);
    m->text = malloc(ncols * (CQL_NAME_MAX + 2) + 1);
    if (!m->members || !m->colnames || !m->want || !m->text) {
        cql_rowmap_free(m);
        return -1;
    }
    for (uint32_t i = 0; i < SLOT_FIXED; i++)
        names_put(m->members, m->mask, fixed_members[i], i);
    char *at = m->text;
    for (size_t i = 0; i < ncols; i++) {
        const char *stored = cql_col_stored(&cols[i]);
        cql_cell_attr(stored, at, CQL_NAME_MAX + 2);
        names_put(m->members, m->mask, at, COL_SLOT(i, CS_CELL));
        names_put(m->colnames, m->mask, stored, (uint32_t)i);
        at += strlen(at) + 1;
    }
    memset(m->want, 1, m->nslot);
    return 0;
}

void cql_rowmap_want(cql_rowmap *m, const uint8_t *cells, int times)
{
    for (size_t i = 0; i < m->ncols; i++) {
        const cql_tcol *c = &m->cols[i];
        m->want[COL_SLOT(i, CS_CELL)] = cells[i] != 0;
        if (c->dropped_at != INT64_MIN || (cells[i] && c->type && cql_coll_col(c))) times = 1;
    }
    m->want[SLOT_TS] = times != 0;
}

int cql_rowmap_reads(const cql_rowmap *m, size_t i)
{
    return i < m->ncols && m->want[COL_SLOT(i, CS_CELL)];
}

void cql_rowmap_free(cql_rowmap *m)
{
    free(m->members);
    free(m->colnames);
    free(m->want);
    free(m->text);
    memset(m, 0, sizeof *m);
}

static int pick_member(const void *arg, cql_srow *r, const char *key, size_t klen, uint32_t node)
{
    const cql_rowmap *m = arg;
    /* the rows of a table have their members in one order, mostly: the place the member
     * in this place had in the last row is tried first */
    uint32_t *hint = r->member < CQL_SROW_HINTS ? &r->hint[r->member] : NULL;
    uint32_t at = hint ? *hint : CQL_SNONE;
    if (at > m->mask || !names_at(m->members, at, key, klen)) {
        at = names_place(m->members, m->mask, key, klen);
        if (hint) *hint = at;
        if (at == CQL_SNONE) return 0; /* no column's: an index's, or a dropped column's */
    }
    uint32_t slot = m->members[at].slot;
    r->slot[slot] = node;
    return m->want[slot];
}

/* The members of the $ts, $exp and $el maps ({"M": {column: ...}}) into their columns'
 * slots. */
static void resolve_times(cql_srow *r, const cql_rowmap *m)
{
    static const uint8_t which[] = {[SLOT_TS] = CS_TS, [SLOT_EXP] = CS_EXP, [SLOT_EL] = CS_EL};
    for (uint32_t s = SLOT_TS; s <= SLOT_EL; s++) {
        const char *tag;
        uint32_t map = cql_srow_tagged(r, r->slot[s], &tag);
        if (map == CQL_SNONE || strcmp(tag, "M") != 0 || !cql_srow_is(r, map, CQL_SN_OBJECT))
            continue;
        uint32_t end = cql_srow_node(r, map)->end;
        for (uint32_t i = map + 1; i < end; i = cql_srow_node(r, i)->end) {
            size_t klen;
            const char *k = cql_srow_key(r, i, &klen);
            uint32_t ci = names_find(m->colnames, m->mask, k, klen);
            if (ci != CQL_SNONE) r->slot[COL_SLOT(ci, which[s])] = i;
        }
    }
}

static cql_srow_picker picker_of(const cql_rowmap *m)
{
    return (cql_srow_picker){.pick = pick_member, .arg = m, .nslot = m->nslot, .map = m};
}

int cql_row_parse(cql_srow *r, const cql_rowmap *m, const char *json, size_t len)
{
    cql_srow_picker p = picker_of(m);
    if (cql_srow_parse_picked(r, json, len, &p) != 0) return -1;
    resolve_times(r, m);
    return 0;
}

int cql_row_from_json(cql_srow *r, const cql_rowmap *m, const json_t *item)
{
    cql_srow_picker p = picker_of(m);
    if (!json_is_object(item) || cql_srow_from_json_picked(r, item, &p) != 0) return -1;
    resolve_times(r, m);
    return 0;
}

uint32_t cql_srow_pk(const cql_srow *r)
{
    return r->map ? r->slot[SLOT_PK] : CQL_SNONE;
}

uint32_t cql_srow_ck(const cql_srow *r)
{
    return r->map ? r->slot[SLOT_CK] : CQL_SNONE;
}

/* Column col's slot which (CS_*) in row r: its node, or CQL_SNONE. */
static uint32_t col_slot(const cql_srow *r, const cql_tcol *col, int which)
{
    const cql_rowmap *m = r->map;
    assert(m && col >= m->cols && col < m->cols + m->ncols);
    if (m == NULL || col < m->cols || col >= m->cols + m->ncols) return CQL_SNONE;
    return r->slot[COL_SLOT(col - m->cols, which)];
}

/* The attribute node of column col (see cql_cell_attr), or CQL_SNONE. */
static uint32_t srow_cell(const cql_srow *r, const cql_tcol *col)
{
    return col_slot(r, col, CS_CELL);
}

/* The value of a {"N": ...} node, 0 for anything else. */
static int64_t srow_num(const cql_srow *r, uint32_t av)
{
    size_t len;
    const char *s = cql_srow_str(r, cql_srow_get(r, av, "N"), &len);
    return s ? strtoll(s, NULL, 10) : 0;
}

int64_t cql_srow_cell_ts(const cql_srow *r, const cql_tcol *col)
{
    assert(r->map && r->map->want[SLOT_TS]);
    uint32_t t = col_slot(r, col, CS_TS);
    return t != CQL_SNONE ? srow_num(r, t) : INT64_MIN;
}

int64_t cql_srow_cell_exp(const cql_srow *r, const cql_tcol *col)
{
    uint32_t e = col_slot(r, col, CS_EXP);
    return e != CQL_SNONE ? srow_num(r, e) : 0;
}

int cql_srow_unb64(const cql_srow *r, uint32_t av, buf *out)
{
    size_t len;
    const char *s = cql_srow_str(r, cql_srow_get(r, av, "B"), &len);
    if (s == NULL || buf_reserve(out, len / 4 * 3 + 1) != 0) return -1;
    size_t n;
    if (value_base64_decode(s, len, (unsigned char *)out->data + out->len, &n) != 0) return -1;
    out->len += n;
    out->data[out->len] = '\0';
    return 0;
}

/* Whether an element of a non-frozen collection with times ts and exp is visible: 1, or
 * 0 (expired, or older than a drop of the column's name). */
static int el_visible(const cql_tcol *col, int64_t ts, int64_t exp, int64_t now_s)
{
    return (exp == 0 || exp > now_s) && ts > col->dropped_at;
}

/* A live cell not older than a drop of its column's name. */
static int srow_cell_visible(const cql_srow *r, const cql_tcol *col, uint32_t av, int64_t now_s)
{
    if (av == CQL_SNONE) return 0;
    uint32_t m = cql_coll_col(col) ? cql_srow_get(r, col_slot(r, col, CS_EL), "M") : CQL_SNONE;
    if (m != CQL_SNONE) {
        /* a non-frozen collection: visible while one of its elements is */
        uint32_t t = cql_srow_get(r, cql_srow_get(r, m, "t"), "L"),
                 e = cql_srow_get(r, cql_srow_get(r, m, "e"), "L");
        uint32_t nt = cql_srow_is(r, t, CQL_SN_ARRAY) ? cql_srow_node(r, t)->n : 0;
        uint32_t ne = cql_srow_is(r, e, CQL_SN_ARRAY) ? cql_srow_node(r, e)->n : 0;
        uint32_t ti = nt ? t + 1 : CQL_SNONE, ei = ne ? e + 1 : CQL_SNONE;
        for (uint32_t i = 0; i < nt; i++) {
            int64_t exp = i < ne ? srow_num(r, ei) : 0;
            if (el_visible(col, srow_num(r, ti), exp, now_s)) return 1;
            ti = cql_srow_node(r, ti)->end;
            if (i + 1 < ne) ei = cql_srow_node(r, ei)->end;
        }
        return 0;
    }
    int64_t exp = cql_srow_cell_exp(r, col);
    if (exp != 0 && exp <= now_s) return 0;
    return col->dropped_at == INT64_MIN || col->kind == 'p' || col->kind == 'c' ||
           cql_srow_cell_ts(r, col) > col->dropped_at;
}

int cql_srow_cell_read(const cql_srow *r, const cql_tcol *col, int64_t now_s, buf *out)
{
    uint32_t av = srow_cell(r, col);
    if (!srow_cell_visible(r, col, av, now_s)) return 0;
    /* a cell the map passed over is never read (cql_rowmap_want) */
    assert(cql_srow_node(r, av)->kind != CQL_SN_SKIPPED);
    if (cql_srow_node(r, av)->kind == CQL_SN_SKIPPED) return -1;
    if (cql_coll_col(col)) {
        cql_coll c;
        long n = cql_srow_coll_load(r, col, &c) == 0 ? cql_coll_value(&c, now_s, out) : -1;
        cql_coll_free(&c);
        return n < 0 ? -1 : n > 0;
    }
    cql_parse_error perr; /* unread: only its emptiness counts, not 1 KB of zeros a cell */
    perr.code = 0;
    perr.msg[0] = '\0';
    if (cqlval_from_stored(col->type, r, av, out, &perr) != 0) return -1;
    return 1;
}

int cql_srow_row_live(const cql_srow *r, const cql_tinfo *t, int64_t now_s)
{
    assert(r->map && r->map->cols == t->cols);
    (void)t;
    if (r->map == NULL) return 0;
    uint32_t mark = r->slot[SLOT_ROW];
    if (mark != CQL_SNONE) {
        uint32_t e = r->slot[SLOT_ROWEXP];
        if (e == CQL_SNONE || srow_num(r, e) > now_s) return 1;
    }
    const cql_rowmap *m = r->map;
    for (size_t i = 0; i < m->ncols; i++)
        if ((m->cols[i].kind == 'r' || m->cols[i].kind == 's') &&
            srow_cell_visible(r, &m->cols[i], srow_cell(r, &m->cols[i]), now_s))
            return 1;
    return 0;
}

/* As the cql_srow_ readers, of a jansson item (converted first: the rules are written
 * once, on the stored form). */
int cql_cell_read(json_t *item, const cql_tcol *col, int64_t now_s, buf *out)
{
    cql_rowmap m;
    if (cql_rowmap_init(&m, col, 1) != 0) return -1;
    cql_srow r;
    cql_srow_init(&r);
    int rc = cql_row_from_json(&r, &m, item) == 0 ? cql_srow_cell_read(&r, col, now_s, out) : -1;
    cql_srow_free(&r);
    cql_rowmap_free(&m);
    return rc;
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
    cql_rowmap m;
    if (cql_rowmap_init(&m, t->cols, t->ncols) != 0) return 0;
    cql_srow r;
    cql_srow_init(&r);
    int rc = cql_row_from_json(&r, &m, item) == 0 ? cql_srow_row_live(&r, t, now_s) : 0;
    cql_srow_free(&r);
    cql_rowmap_free(&m);
    return rc;
}

typedef struct last_exp {
    int64_t last;
    int forever;
} last_exp;

static int el_expiry(void *arg, int64_t ts, int64_t exp)
{
    (void)ts;
    last_exp *l = arg;
    if (exp == 0) return l->forever = 1;
    if (exp > l->last) l->last = exp;
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
        cql_cell_attr(cql_col_stored(c), attr, sizeof attr);
        if (json_object_get(item, attr) == NULL) continue;
        last_exp l = {last, 0};
        if (each_el_time(item, c, el_expiry, &l) >= 0) {
            forever = l.forever;
            last = l.last;
            continue;
        }
        int64_t e = cql_cell_exp(item, cql_col_stored(c));
        if (e == 0)
            forever = 1;
        else if (e > last)
            last = e;
    }
    /* and its tombstones, once they have been kept gc_grace_seconds */
    json_t *del_exp = json_object_get(item, CQL_DELEXP_ATTR);
    if (del_exp && num_of(del_exp) > last) last = num_of(del_exp);
    if (!forever && last > 0)
        json_object_set_new(item, CQL_EXPIRES_ATTR, num(last));
    else
        json_object_del(item, CQL_EXPIRES_ATTR);
}

/* ---- tombstones ---- */

int64_t cql_row_deleted(json_t *item)
{
    json_t *d = json_object_get(item, CQL_DEL_ATTR);
    return d ? num_of(d) : INT64_MIN;
}

void cql_tombstone_keep(json_t *item, int64_t until_s)
{
    json_t *had = json_object_get(item, CQL_DELEXP_ATTR);
    if (had == NULL || num_of(had) < until_s)
        json_object_set_new(item, CQL_DELEXP_ATTR, num(until_s));
}

int cql_row_delete(json_t *item, const cql_tinfo *t, int64_t ts, int64_t until_s)
{
    if (cql_row_deleted(item) < ts) json_object_set_new(item, CQL_DEL_ATTR, num(ts));
    cql_tombstone_keep(item, until_s);
    json_t *mark = json_object_get(item, "$row");
    if (mark && num_of(mark) <= ts) {
        json_object_del(item, "$row");
        json_object_del(item, "$rowexp");
    }
    /* what the deletion covers goes now: reads need not apply it */
    for (size_t i = 0; i < t->ncols; i++) {
        const cql_tcol *c = &t->cols[i];
        if (c->kind == 'p' || c->kind == 'c') continue;
        const char *stored = cql_col_stored(c);
        char attr[CQL_NAME_MAX + 2];
        cql_cell_attr(stored, attr, sizeof attr);
        if (cql_coll_col(c)) {
            json_t *m = coll_meta(item, stored);
            if (m == NULL && json_object_get(item, attr) == NULL) continue;
            if (cql_cell_write(item, c, NULL, -1, ts, 0) < 0) return -1;
            continue;
        }
        if (cql_cell_ts(item, stored) > ts) continue;
        json_object_del(item, attr);
        json_object_del(meta_map(item, "$exp", 0), stored);
        /* the row's deletion time stands for the cell's */
        json_object_del(meta_map(item, "$ts", 0), stored);
    }
    return 0;
}

int cql_row_tombstoned(json_t *item)
{
    if (json_object_get(item, CQL_DEL_ATTR) || json_object_get(item, CQL_RT_ATTR)) return 1;
    json_t *ts = meta_map(item, "$ts", 0), *el = meta_map(item, "$el", 0);
    return json_object_size(ts) > 0 || json_object_size(el) > 0;
}

void cql_row_bury(json_t *item, const cql_tinfo *t, int64_t until_s)
{
    for (size_t i = 0; i < t->ncols; i++) {
        const cql_tcol *c = &t->cols[i];
        if (c->kind != 'p' && c->kind != 'c') continue;
        char attr[CQL_NAME_MAX + 2];
        cql_cell_attr(cql_col_stored(c), attr, sizeof attr);
        json_object_del(item, attr);
    }
    cql_tombstone_keep(item, until_s);
}

/* A range tombstone in a partition's item: {"L": [lo, hi, time, kept until]}, lo and hi
 * {"B"} ($ck bytes, empty: unbounded), the times {"N"}. */
static int rt_read(json_t *rt, buf *lo, buf *hi, int64_t *ts, int64_t *until)
{
    json_t *l = json_object_get(rt, "L");
    if (json_array_size(l) != 4) return -1;
    buf_reset(lo);
    buf_reset(hi);
    if (cql_unb64(json_array_get(l, 0), lo) != 0 || cql_unb64(json_array_get(l, 1), hi) != 0)
        return -1;
    *ts = num_of(json_array_get(l, 2));
    *until = num_of(json_array_get(l, 3));
    return 0;
}

static int bytes_cmp(const buf *a, const buf *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int ck_in(const buf *ck, const buf *lo, const buf *hi)
{
    return bytes_cmp(ck, lo) >= 0 && (hi->len == 0 || bytes_cmp(ck, hi) < 0);
}

/* Whether [lo, hi) holds all of [l, h) (an empty hi: to the end). */
static int range_holds(const buf *lo, const buf *hi, const buf *l, const buf *h)
{
    return bytes_cmp(lo, l) <= 0 && (hi->len == 0 || (h->len && bytes_cmp(h, hi) <= 0));
}

int cql_range_delete(json_t *part, const buf *lo, const buf *hi, int64_t ts, int64_t until_s,
                     int64_t now_s)
{
    json_t *list = json_object_get(json_object_get(part, CQL_RT_ATTR), "L");
    json_t *kept = json_array();
    if (kept == NULL) return -1;
    buf l, h;
    buf_init(&l, 0);
    buf_init(&h, 0);
    int64_t pdel = cql_row_deleted(part), rts, runtil;
    int covered = ts <= pdel; /* the new range adds nothing */
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *rt = json_array_get(list, i);
        if (rt_read(rt, &l, &h, &rts, &runtil) != 0) continue;
        if (runtil < now_s || rts <= pdel) continue; /* purged, or under the partition's */
        /* one the new range holds, no newer, goes; one holding it, no older, makes it
         * needless (so a partition trimmed by ever larger ranges keeps one) */
        if (rts <= ts && runtil <= until_s && range_holds(lo, hi, &l, &h)) continue;
        if (rts >= ts && range_holds(&l, &h, lo, hi)) covered = 1;
        json_array_append(kept, rt);
    }
    if (!covered)
        json_array_append_new(kept, json_pack("{s:[o,o,o,o]}", "L", cql_b64(lo->data, lo->len),
                                              cql_b64(hi->data, hi->len), num(ts), num(until_s)));
    buf_free(&l);
    buf_free(&h);
    if (json_array_size(kept) == 0) {
        json_decref(kept);
        json_object_del(part, CQL_RT_ATTR);
    } else if (json_object_set_new(part, CQL_RT_ATTR, json_pack("{s:o}", "L", kept)) != 0) {
        return -1;
    }
    cql_tombstone_keep(part, until_s);
    return 0;
}

int64_t cql_partition_floor(json_t *part, const buf *ck, int64_t now_s, int64_t *until_s)
{
    int64_t floor = cql_row_deleted(part);
    *until_s = floor != INT64_MIN ? num_of(json_object_get(part, CQL_DELEXP_ATTR)) : 0;
    json_t *list = json_object_get(json_object_get(part, CQL_RT_ATTR), "L");
    if (json_array_size(list) == 0) return floor;
    buf l, h;
    buf_init(&l, 0);
    buf_init(&h, 0);
    int64_t rts, runtil;
    for (size_t i = 0; i < json_array_size(list); i++)
        if (rt_read(json_array_get(list, i), &l, &h, &rts, &runtil) == 0 && runtil >= now_s &&
            rts > floor && ck_in(ck, &l, &h)) {
            floor = rts;
            if (runtil > *until_s) *until_s = runtil;
        }
    buf_free(&l);
    buf_free(&h);
    return floor;
}

int64_t cql_cell_writetime(json_t *item, const char *col)
{
    return cql_cell_ts(item, col);
}

/* ---- non-frozen collections ---- */

/* How long a tombstone of an element stays (Cassandra's default gc_grace_seconds). */
#define GC_GRACE_S 864000

int cql_coll_col(const cql_tcol *col)
{
    return col->type && cqltype_is_collection(col->type) && cqltype_is_multicell(col->type);
}

static json_t *coll_meta(json_t *item, const char *col)
{
    return json_object_get(json_object_get(meta_map(item, "$el", 0), col), "M");
}

void cql_coll_free(cql_coll *c)
{
    free(c->el);
    buf_free(&c->bytes);
    memset(c, 0, sizeof *c);
}

static const uint8_t *el_key(const cql_coll *c, const cql_coll_el *e)
{
    return c->bytes.data ? (const uint8_t *)c->bytes.data + e->koff : (const uint8_t *)"";
}

static const uint8_t *el_value(const cql_coll *c, const cql_coll_el *e)
{
    return c->bytes.data ? (const uint8_t *)c->bytes.data + e->voff : (const uint8_t *)"";
}

/* Where key (lkey for a list) is, or goes, in c's order: *found when it is there. */
static size_t coll_find(const cql_coll *c, const uint8_t *k, uint32_t klen, int64_t lkey,
                        int *found)
{
    size_t lo = 0, hi = c->n;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cql_coll_el *e = &c->el[mid];
        int cmp = c->list ? (e->lkey > lkey) - (e->lkey < lkey)
                          : cqlval_compare(c->col->type->args[0], el_key(c, e), e->klen, k, klen);
        if (cmp == 0) {
            *found = 1;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int coll_bytes(cql_coll *c, const uint8_t *p, uint32_t len, size_t *off)
{
    *off = c->bytes.len;
    return len ? buf_append(&c->bytes, p, len) : 0;
}

static int coll_insert(cql_coll *c, size_t at, const cql_coll_el *e)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        cql_coll_el *n = realloc(c->el, cap * sizeof *n);
        if (n == NULL) return -1;
        c->el = n;
        c->cap = cap;
    }
    memmove(c->el + at + 1, c->el + at, (c->n - at) * sizeof *c->el);
    c->el[at] = *e;
    c->n++;
    return 0;
}

int cql_coll_put(cql_coll *c, const uint8_t *k, uint32_t klen, int64_t lkey, const uint8_t *v,
                 int32_t vlen, int64_t ts, int64_t exp_s, int64_t now_s)
{
    if (ts <= c->deleted) return 0;
    int found;
    size_t at = coll_find(c, k, klen, lkey, &found);
    cql_coll_el e = {.lkey = lkey, .ts = ts, .dead = vlen < 0, .exp = vlen < 0 ? now_s : exp_s};
    if (found) {
        const cql_coll_el *old = &c->el[at];
        /* the newer wins; of two at one time, the tombstone */
        if (old->ts > ts || (old->ts == ts && old->dead)) return 0;
        e.koff = old->koff;
        e.klen = old->klen;
    } else if (coll_bytes(c, k, klen, &e.koff)) {
        return -1;
    } else {
        e.klen = klen;
    }
    if (vlen > 0 && coll_bytes(c, v, (uint32_t)vlen, &e.voff)) return -1;
    e.vlen = vlen > 0 ? (uint32_t)vlen : 0;
    if (found)
        c->el[at] = e;
    else if (coll_insert(c, at, &e))
        return -1;
    return 1;
}

void cql_coll_delete(cql_coll *c, int64_t ts)
{
    if (ts <= c->deleted) return;
    c->deleted = ts;
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->el[i].ts > ts) c->el[kept++] = c->el[i];
    c->n = kept;
}

int64_t cql_coll_list_key(const cql_coll *c, int front)
{
    if (c->n == 0) return 0;
    return front ? c->el[0].lkey - 1 : c->el[c->n - 1].lkey + 1;
}

int cql_coll_el_live(const cql_coll *c, size_t i, int64_t now_s)
{
    const cql_coll_el *e = &c->el[i];
    return !e->dead && (e->exp == 0 || e->exp > now_s) &&
           (c->col->dropped_at == INT64_MIN || e->ts > c->col->dropped_at);
}

long cql_coll_value(const cql_coll *c, int64_t now_s, buf *out)
{
    size_t start = out->len, at = cql_collection_begin(out);
    if (at == (size_t)-1) return -1;
    long n = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (!cql_coll_el_live(c, i, now_s)) continue;
        const cql_coll_el *e = &c->el[i];
        if ((!c->list && cql_element_put(out, el_key(c, e), (int32_t)e->klen)) ||
            ((c->list || c->map) && cql_element_put(out, el_value(c, e), (int32_t)e->vlen))) {
            out->len = start;
            return -1;
        }
        n++;
    }
    if (n == 0)
        out->len = start;
    else
        cql_collection_end(out, at, (uint32_t)n);
    return n;
}

int cql_coll_each(const uint8_t *p, size_t len, int list, int map, cql_coll_fn fn, void *arg)
{
    cql_elements e;
    uint32_t count;
    if (cql_collection_open(&e, p, len, map, &count) != 0) return -1;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *k = (const uint8_t *)"", *v = (const uint8_t *)"";
        int32_t klen = 0, vlen = 0;
        if ((!list && cql_element_next(&e, &k, &klen) != 1) ||
            ((list || map) && cql_element_next(&e, &v, &vlen) != 1) || klen < 0 || vlen < 0)
            return -1;
        int rc = fn(arg, k, (uint32_t)klen, v, (uint32_t)vlen);
        if (rc) return rc;
    }
    return 0;
}

/* Reading a stored collection's elements: their times from the lists beside them, or
 * the cell's own for a collection stored whole (before elements had times). */
typedef struct srow_list {
    uint32_t list, next; /* the list node and its next element (CQL_SNONE: none left) */
} srow_list;

/* The list of meta's member name ({"L": [...]}). */
static srow_list meta_list(const cql_srow *r, uint32_t meta, const char *name)
{
    uint32_t l = cql_srow_get(r, cql_srow_get(r, meta, name), "L");
    srow_list out = {CQL_SNONE, CQL_SNONE};
    if (cql_srow_is(r, l, CQL_SN_ARRAY)) {
        out.list = l;
        out.next = cql_srow_node(r, l)->n ? l + 1 : CQL_SNONE;
    }
    return out;
}

/* The list's next element (CQL_SNONE past its end), and the list moved past it. */
static uint32_t list_take(const cql_srow *r, srow_list *l)
{
    uint32_t el = l->next;
    if (el != CQL_SNONE) {
        uint32_t after = cql_srow_node(r, el)->end;
        l->next = after < cql_srow_node(r, l->list)->end ? after : CQL_SNONE;
    }
    return el;
}

typedef struct loading {
    cql_coll *c;
    const cql_srow *r;
    int lists; /* the elements' times are in t, e (and k) */
    srow_list t, e, k;
    int64_t ts, exp;
} loading;

static int load_live(void *arg, const uint8_t *k, uint32_t klen, const uint8_t *v, uint32_t vlen)
{
    loading *l = arg;
    cql_coll *c = l->c;
    size_t i = c->n;
    cql_coll_el el = {.lkey = (int64_t)i, .ts = l->ts, .exp = l->exp, .klen = klen, .vlen = vlen};
    if (l->lists) {
        uint32_t t = list_take(l->r, &l->t), x = list_take(l->r, &l->e);
        uint32_t lk = c->list ? list_take(l->r, &l->k) : CQL_SNONE;
        if (t == CQL_SNONE || x == CQL_SNONE || (c->list && lk == CQL_SNONE)) return -1;
        el.ts = srow_num(l->r, t);
        el.exp = srow_num(l->r, x);
        if (lk != CQL_SNONE) el.lkey = srow_num(l->r, lk);
    }
    if (coll_bytes(c, k, klen, &el.koff) || coll_bytes(c, v, vlen, &el.voff)) return -1;
    return coll_insert(c, c->n, &el);
}

static int load_tombstone(cql_coll *c, const cql_srow *r, uint32_t x)
{
    uint32_t parts = cql_srow_get(r, x, "L");
    if (!cql_srow_is(r, parts, CQL_SN_ARRAY) || cql_srow_node(r, parts)->n != 3) return -1;
    uint32_t key = cql_srow_at(r, parts, 0);
    cql_coll_el el = {.dead = 1,
                      .ts = srow_num(r, cql_srow_at(r, parts, 1)),
                      .exp = srow_num(r, cql_srow_at(r, parts, 2))};
    buf k;
    buf_init(&k, 0);
    if (c->list)
        el.lkey = srow_num(r, key);
    else if (cql_srow_unb64(r, key, &k) != 0) {
        buf_free(&k);
        return -1;
    }
    int found;
    size_t at = coll_find(c, (const uint8_t *)k.data, (uint32_t)k.len, el.lkey, &found);
    el.klen = (uint32_t)k.len;
    int rc = found || coll_bytes(c, (const uint8_t *)k.data, el.klen, &el.koff) ||
             coll_insert(c, at, &el);
    buf_free(&k);
    return rc ? -1 : 0;
}

int cql_srow_coll_load(const cql_srow *r, const cql_tcol *col, cql_coll *c)
{
    memset(c, 0, sizeof *c);
    buf_init(&c->bytes, 0);
    c->col = col;
    c->list = col->type->wire.id == CQL_TYPE_LIST;
    c->map = col->type->wire.id == CQL_TYPE_MAP;
    c->deleted = INT64_MIN;
    uint32_t meta = cql_srow_get(r, col_slot(r, col, CS_EL), "M");
    uint32_t av = srow_cell(r, col);
    uint32_t d = cql_srow_get(r, meta, "d");
    if (d != CQL_SNONE)
        c->deleted = srow_num(r, d);
    else if (meta == CQL_SNONE && av == CQL_SNONE)
        c->deleted = cql_srow_cell_ts(r, col); /* stored whole, and deleted */
    int rc = 0;
    if (av != CQL_SNONE) {
        buf wire;
        buf_init(&wire, 0);
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        loading l = {.c = c,
                     .r = r,
                     .t = meta_list(r, meta, "t"),
                     .e = meta_list(r, meta, "e"),
                     .k = meta_list(r, meta, "k"),
                     .ts = cql_srow_cell_ts(r, col),
                     .exp = cql_srow_cell_exp(r, col)};
        l.lists = l.t.list != CQL_SNONE;
        rc = cqlval_from_stored(col->type, r, av, &wire, &perr) ||
             cql_coll_each((const uint8_t *)wire.data, wire.len, c->list, c->map, load_live, &l);
        buf_free(&wire);
    }
    srow_list x = meta_list(r, meta, "x");
    for (uint32_t el = list_take(r, &x); rc == 0 && el != CQL_SNONE; el = list_take(r, &x))
        rc = load_tombstone(c, r, el);
    return rc ? -1 : 0;
}

int cql_coll_load(json_t *item, const cql_tcol *col, cql_coll *c)
{
    cql_rowmap m;
    cql_srow r;
    cql_srow_init(&r);
    int rc = cql_rowmap_init(&m, col, 1);
    if (rc == 0) rc = cql_row_from_json(&r, &m, item);
    if (rc == 0) {
        rc = cql_srow_coll_load(&r, col, c);
    } else {
        memset(c, 0, sizeof *c);
        buf_init(&c->bytes, 0);
    }
    cql_srow_free(&r);
    cql_rowmap_free(&m);
    return rc;
}

int cql_coll_store(json_t *item, cql_coll *c, int64_t now_s)
{
    /* an expired element is a tombstone made when it expired; one older than a drop of
     * the column's name is gone */
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        cql_coll_el *e = &c->el[i];
        if (!e->dead && e->exp != 0 && e->exp <= now_s) e->dead = 1;
        if (c->col->dropped_at != INT64_MIN && e->ts <= c->col->dropped_at) continue;
        if (!e->dead || e->exp + GC_GRACE_S >= now_s) c->el[kept++] = *e;
    }
    c->n = kept;
    char attr[CQL_NAME_MAX + 2];
    const char *stored = cql_col_stored(c->col);
    cql_cell_attr(stored, attr, sizeof attr);
    json_t *t = json_array(), *e = json_array(), *k = json_array(), *x = json_array();
    buf wire;
    buf_init(&wire, 0);
    long live = cql_coll_value(c, now_s, &wire);
    int rc = live < 0;
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        const cql_coll_el *el = &c->el[i];
        json_t *key = c->list ? num(el->lkey) : cql_b64(el_key(c, el), el->klen);
        if (el->dead) {
            rc = json_array_append_new(
                x, json_pack("{s:[o,o,o]}", "L", key, num(el->ts), num(el->exp)));
            continue;
        }
        rc = json_array_append_new(t, num(el->ts)) || json_array_append_new(e, num(el->exp)) ||
             (c->list ? json_array_append_new(k, key) : (json_decref(key), 0));
    }
    json_t *av = rc == 0 && live > 0
                     ? cqlval_to_item(c->col->type, (const uint8_t *)wire.data, wire.len)
                     : NULL;
    buf_free(&wire);
    if (rc || (live > 0 && av == NULL)) {
        json_decref(t);
        json_decref(e);
        json_decref(k);
        json_decref(x);
        return -1;
    }
    if (av)
        json_object_set_new(item, attr, av);
    else
        json_object_del(item, attr);
    json_t *meta = json_object();
    if (live > 0) {
        json_object_set_new(meta, "t", json_pack("{s:o}", "L", t));
        json_object_set_new(meta, "e", json_pack("{s:o}", "L", e));
        if (c->list) json_object_set_new(meta, "k", json_pack("{s:o}", "L", k));
    } else {
        json_decref(t);
        json_decref(e);
    }
    if (!c->list || live == 0) json_decref(k);
    if (json_array_size(x))
        json_object_set_new(meta, "x", json_pack("{s:o}", "L", x));
    else
        json_decref(x);
    if (c->deleted != INT64_MIN) json_object_set_new(meta, "d", num(c->deleted));
    /* the cell's own times are the elements' now */
    json_object_del(meta_map(item, "$ts", 0), stored);
    json_object_del(meta_map(item, "$exp", 0), stored);
    if (json_object_size(meta)) {
        json_object_set_new(meta_map(item, "$el", 1), stored, json_pack("{s:o}", "M", meta));
        return 0;
    }
    json_decref(meta);
    json_t *all = meta_map(item, "$el", 0);
    json_object_del(all, stored);
    if (all && json_object_size(all) == 0) json_object_del(item, "$el");
    return 0;
}

/* A non-frozen collection written whole (INSERT, c = ..., DELETE c, a row's deletion):
 * a deletion of the elements before ts (at ts itself for a deletion), then the value's
 * elements at ts. */
typedef struct writing {
    cql_coll *c;
    int64_t ts, exp_s, now_s;
} writing;

static int write_el(void *arg, const uint8_t *k, uint32_t klen, const uint8_t *v, uint32_t vlen)
{
    writing *w = arg;
    int64_t lkey = w->c->list ? cql_coll_list_key(w->c, 0) : 0;
    return cql_coll_put(w->c, k, klen, lkey, v, (int32_t)vlen, w->ts, w->exp_s, w->now_s) < 0;
}

static int coll_write(json_t *item, const cql_tcol *col, const uint8_t *p, int32_t len, int64_t ts,
                      int64_t exp_s)
{
    cql_coll c;
    writing w = {.c = &c, .ts = ts, .exp_s = exp_s, .now_s = cql_now_us() / 1000000};
    int rc = cql_coll_load(item, col, &c);
    cql_coll_delete(&c, len < 0 ? ts : ts - 1);
    if (rc == 0 && len >= 0) rc = cql_coll_each(p, (size_t)len, c.list, c.map, write_el, &w);
    if (rc == 0) rc = cql_coll_store(item, &c, w.now_s);
    cql_coll_free(&c);
    return rc ? -1 : 1;
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
