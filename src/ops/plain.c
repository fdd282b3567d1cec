/* plain.c — the decoder of plain item requests: a PutItem or GetItem read straight from its
 * text into what its write or read needs, without building jansson values.
 *
 * What is plain, and what is not decoded, is said at plain_decode. Both ways of reading a
 * request meet in one write or read (items.c), so what is stored and answered is byte for
 * byte the same (tests/unit/ops/test_put_fast.c compares the two on many requests). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "model/layer.h"
#include "model/number.h"
#include "model/value.h"
#include "ops/ops.h"
#include "util/jsonread.h"

typedef enum expect {
    TOP_START,   /* the body's '{' */
    TOP_KEY,     /* TableName, Item, or the body's end */
    TABLE_NAME,  /* its string */
    CONSISTENT,  /* ConsistentRead's boolean */
    ITEM_START,  /* the item's '{' */
    ATTR_NAME,   /* an attribute's name, or the item's end */
    VALUE_START, /* the attribute value's '{' */
    VALUE_TYPE,  /* "S" or "N" */
    VALUE_TEXT,  /* its string */
    VALUE_END,   /* the attribute value's '}' */
    DONE         /* after the body's '}' */
} expect;

typedef struct fast_put {
    const char *text; /* the request */
    size_t len, end;  /* end: bytes up to the body's '}' */
    expect next;
    const char *table;
    size_t table_len;
    const char *map; /* the member holding the attributes: "Item" or "Key" */
    int reads;       /* a GetItem: ConsistentRead may be given */
    int seen_item, seen_consistent;
    plain_request *d; /* its attributes */
    size_t size;      /* item_size */
    buf *stored;      /* the item in the stored form, its text as value_dump writes it */
    yajl_handle yajl;
} fast_put;

/* Whether s (n bytes handed over by YAJL) lies in the request text itself, which it
 * does only for a string without escapes, and is printable ASCII (as put_quoted writes
 * without jansson). */
static int plain_in_text(const fast_put *f, const char *s, size_t n)
{
    if (s < f->text || s + n > f->text + f->len) return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f) return 0;
    return 1;
}

static int put_string(buf *b, const char *s, size_t n)
{
    return buf_putc(b, '"') || buf_append(b, s, n) || buf_putc(b, '"');
}

static int on_start_map(void *ctx)
{
    fast_put *f = ctx;
    switch (f->next) {
    case TOP_START:
        f->next = TOP_KEY;
        return 1;
    case ITEM_START:
        f->next = ATTR_NAME;
        return buf_putc(f->stored, '{') == 0;
    case VALUE_START:
        f->next = VALUE_TYPE;
        return 1;
    default:
        return 0;
    }
}

static int on_map_key(void *ctx, const unsigned char *key, size_t n)
{
    fast_put *f = ctx;
    const char *k = (const char *)key;
    switch (f->next) {
    case TOP_KEY:
        if (n == 9 && memcmp(k, "TableName", 9) == 0 && f->table == NULL) {
            f->next = TABLE_NAME;
            return 1;
        }
        if (n == strlen(f->map) && memcmp(k, f->map, n) == 0 && !f->seen_item) {
            f->seen_item = 1;
            f->next = ITEM_START;
            return 1;
        }
        if (f->reads && n == 14 && memcmp(k, "ConsistentRead", 14) == 0 && !f->seen_consistent) {
            f->seen_consistent = 1;
            f->next = CONSISTENT;
            return 1;
        }
        return 0;
    case ATTR_NAME: {
        if (n == 0 || n > QR_MAX_NAME_SIZE || f->d->nattrs == PLAIN_ATTRS ||
            !plain_in_text(f, k, n))
            return 0;
        for (size_t i = 0; i < f->d->nattrs; i++)
            if (f->d->attrs[i].name_len == n && memcmp(f->d->attrs[i].name, k, n) == 0) return 0;
        f->d->attrs[f->d->nattrs] = (plain_attr){.name = k, .name_len = n};
        f->size += n;
        f->next = VALUE_START;
        return (f->d->nattrs == 0 || buf_putc(f->stored, ',') == 0) &&
               put_string(f->stored, k, n) == 0 && buf_putc(f->stored, ':') == 0;
    }
    case VALUE_TYPE:
        if (n != 1 || (k[0] != 'S' && k[0] != 'N')) return 0;
        f->d->attrs[f->d->nattrs].number = k[0] == 'N';
        f->next = VALUE_TEXT;
        return 1;
    default:
        return 0;
    }
}

static int on_string(void *ctx, const unsigned char *str, size_t n)
{
    fast_put *f = ctx;
    const char *s = (const char *)str;
    if (f->next == TABLE_NAME) {
        if (!plain_in_text(f, s, n)) return 0;
        f->table = s;
        f->table_len = n;
        f->next = TOP_KEY;
        return 1;
    }
    if (f->next != VALUE_TEXT || !plain_in_text(f, s, n)) return 0;
    plain_attr *a = &f->d->attrs[f->d->nattrs];
    a->text = s;
    a->text_len = n;
    f->next = VALUE_END;
    if (!a->number) {
        a->size = n;
        f->size += n;
        return buf_append(f->stored, "{\"S\":", 5) == 0 && put_string(f->stored, s, n) == 0;
    }
    qr_num num;
    qr_err err;
    err_init(&err);
    if (num_parse(s, n, &num, &err)) return 0;
    char canonical[NUM_FMT_MAX];
    size_t clen = num_format(&num, canonical);
    a->size = num_size(&num);
    f->size += a->size;
    return buf_append(f->stored, "{\"N\":", 5) == 0 && put_string(f->stored, canonical, clen) == 0;
}

static int on_end_map(void *ctx)
{
    fast_put *f = ctx;
    switch (f->next) {
    case VALUE_END:
        f->d->nattrs++;
        f->next = ATTR_NAME;
        return buf_putc(f->stored, '}') == 0;
    case ATTR_NAME:
        f->next = TOP_KEY;
        return buf_putc(f->stored, '}') == 0;
    case TOP_KEY:
        f->next = DONE;
        f->end = yajl_get_bytes_consumed(f->yajl);
        return 1;
    default:
        return 0;
    }
}

/* Null, booleans, numbers and arrays are never part of the plain case. (A callback left
 * out would not stop YAJL: it would skip the value, and an array around a string would
 * pass for the string.) */
static int on_other(void *ctx)
{
    (void)ctx;
    return 0;
}

static int on_boolean(void *ctx, int value)
{
    fast_put *f = ctx;
    if (f->next != CONSISTENT) return 0;
    f->d->consistent = value != 0;
    f->next = TOP_KEY;
    return 1;
}

static int on_number(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    (void)s;
    (void)n;
    return 0;
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_other,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_start_array = on_other,
    .yajl_end_array = on_other,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end_map,
};

/* Whether text is a plain request, read into f. */
static int read_request(fast_put *f)
{
    if (json_has_yajl_space(f->text, f->len)) return 0;
    f->yajl = yajl_alloc(&callbacks, NULL, f);
    if (f->yajl == NULL) return 0;
    int ok = yajl_parse(f->yajl, (const unsigned char *)f->text, f->len) == yajl_status_ok &&
             yajl_complete_parse(f->yajl) == yajl_status_ok && f->next == DONE &&
             json_only_space_after(f->text, f->len, f->end) && f->table && f->seen_item;
    yajl_free(f->yajl);
    return ok;
}

/* A table name as CreateTable allows it (anything else, an ARN say, goes the whole way). */
static int plain_table_name(const char *s, size_t n)
{
    if (n < 3 || n > 255) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

/* The key attributes of the item under t's key schema, as a Key map for key_check_item
 * and key_item: NULL when one is missing (key_check_item would refuse the item). */
static json_t *key_attrs(const plain_request *d, const table *t)
{
    json_t *keys = json_object();
    const key_attr *parts[2] = {table_pk(t), table_sk(t)->name ? table_sk(t) : NULL};
    for (int p = 0; keys && p < 2 && parts[p]; p++) {
        const plain_attr *a = NULL;
        size_t nl = strlen(parts[p]->name);
        for (size_t i = 0; i < d->nattrs && a == NULL; i++)
            if (d->attrs[i].name_len == nl && memcmp(d->attrs[i].name, parts[p]->name, nl) == 0)
                a = &d->attrs[i];
        json_t *text = a ? json_stringn(a->text, a->text_len) : NULL;
        json_t *av = text ? json_object() : NULL;
        if (av == NULL || json_object_set_new(av, a->number ? "N" : "S", text) ||
            json_object_set_new(keys, parts[p]->name, av)) {
            if (av == NULL) json_decref(text);
            json_decref(keys);
            return NULL;
        }
    }
    return keys;
}

/* What the item counts toward a Query or Scan page of t: item_page_size, from its
 * attributes (strings and numbers only). */
static size_t plain_page_size(const plain_request *d, const table *t)
{
    const char *sk = table_sk(t)->name;
    size_t rest = 0, range = 0, skl = sk ? strlen(sk) : 0;
    for (size_t i = 0; i < d->nattrs; i++) {
        const plain_attr *a = &d->attrs[i];
        if (sk && a->name_len == skl && memcmp(a->name, sk, skl) == 0)
            range = a->size;
        else
            rest += 1 + scalar_page_size(a->number ? QR_T_N : QR_T_S, a->size);
    }
    return item_page_total(rest, range);
}

/* Plain: TableName (of an existing table) and Item or Key, and for GetItem ConsistentRead,
 * each once and nothing else; every attribute a string or a number of ASCII text without
 * escapes, its name too, no name twice, each number one num_parse takes; an Item's key
 * attributes as key_check_item wants them and the item within the size limit; a Key of
 * exactly the key attributes, as key_check_key wants them. Anything else is not decoded,
 * and the operation reads the request the whole way, which also answers every error. */
int plain_decode(qr_db *db, plain_kind kind, const char *text, size_t len, plain_request *d)
{
    fast_put f = {.text = text,
                  .len = len,
                  .d = d,
                  .stored = &d->stored,
                  .map = kind == PLAIN_PUT ? "Item" : "Key",
                  .reads = kind == PLAIN_GET};
    memset(d, 0, offsetof(plain_request, attrs));
    d->nattrs = 0;
    buf_init(&d->stored, 0);
    int plain = buf_reserve(&d->stored, len + ITEM_HEADER_LEN) == 0 &&
                item_encode_open(&d->stored) == 0 && read_request(&f) &&
                plain_table_name(f.table, f.table_len) && f.size <= QR_MAX_ITEM_SIZE;
    if (plain) {
        memcpy(d->table, f.table, f.table_len);
        d->table[f.table_len] = '\0';
        d->t = ops_table_get(db, d->table);
        if (d->t) item_encode_close(&d->stored, 0, f.size, plain_page_size(d, d->t));
        d->key = d->t ? key_attrs(d, d->t) : NULL;
        qr_err quiet;
        err_init(&quiet);
        plain = d->key && (kind == PLAIN_PUT ? key_check_item(d->t, d->key, &quiet) == 0
                                             : json_object_size(d->key) == d->nattrs &&
                                                   key_check_key(d->t, d->key, &quiet) == 0);
        err_clear(&quiet);
    }
    if (!plain) {
        catalog_release(db, d->t);
        plain_free(d);
    }
    return plain;
}

void plain_free(plain_request *d)
{
    json_decref(d->key);
    d->key = NULL;
    buf_free(&d->stored);
}
