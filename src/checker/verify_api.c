/* verify_api.c — verify_api.h: each table is read with a consistent Scan, and for each of
 * its indexes the entries it should hold are made from the items by the key schema and
 * projection DescribeTable gives (an item lacking an index key attribute, or holding it
 * with another type, is not in the index: sparse indexes); each index is read with Scan
 * and the two sets are compared with util/entrydiff's merge, the comparison qr_verify
 * makes of stored entries. An entry's key is the canonical JSON of its index and table
 * key attributes, its value the canonical JSON of the projected item. A global index is
 * updated after its table, so a table showing differences is read once more after a
 * second and the second reading is the one reported. */
#include "checker/verify_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/entrydiff.h"
#include "util/progress.h"

#define MAX_KEY_ATTRS 16

typedef struct index_def {
    const char *name;
    const char *keys[MAX_KEY_ATTRS]; /* the index's key attributes, then the table's */
    size_t nkeys, nown;              /* all of them; the index's own */
    json_t *include;                 /* INCLUDE's NonKeyAttributes, or NULL */
    int all;                         /* ALL; else the keys, and include when INCLUDE */
    int global;
    diff_set want, held;
} index_def;

typedef struct table_check {
    const char *table;
    json_t *types;        /* attribute name -> "S" | "N" | "B", from AttributeDefinitions */
    const char *tkeys[2]; /* the table's key attributes */
    size_t ntkeys;
    index_def *ix;
    size_t nix;
    size_t items; /* base items read */
    progress meter;
    index_def *reading; /* the index being read, or NULL for the table */
} table_check;

static char *canonical(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
}

/* The key of item in index x: its key attributes, or NULL when the item is not indexed. */
static json_t *entry_key(const table_check *tc, const index_def *x, const json_t *item)
{
    json_t *k = json_object();
    for (size_t i = 0; i < x->nkeys; i++) {
        json_t *v = json_object_get(item, x->keys[i]);
        const char *type = json_string_value(json_object_get(tc->types, x->keys[i]));
        if (v == NULL || !json_is_object(v) || type == NULL || json_object_get(v, type) == NULL) {
            json_decref(k);
            return NULL;
        }
        json_object_set(k, x->keys[i], v);
    }
    return k;
}

/* What index x holds of item: all of it, its keys, or its keys and INCLUDE's attributes. */
static json_t *project(const index_def *x, json_t *item)
{
    if (x->all) return json_incref(item);
    json_t *p = json_object();
    for (size_t i = 0; i < x->nkeys; i++)
        json_object_set(p, x->keys[i], json_object_get(item, x->keys[i]));
    size_t i;
    json_t *a;
    json_array_foreach(x->include, i, a)
    {
        json_t *v = json_object_get(item, json_string_value(a));
        if (v) json_object_set(p, json_string_value(a), v);
    }
    return p;
}

static int add_entry(diff_set *s, json_t *key, json_t *val)
{
    char *k = canonical(key), *v = canonical(val);
    int rc = k && v ? diff_set_add(s, k, strlen(k), v, strlen(v)) : -1;
    free(k);
    free(v);
    return rc;
}

/* The entry index x should hold of item, if any. */
static int want_entry(table_check *tc, index_def *x, json_t *item)
{
    json_t *k = entry_key(tc, x, item);
    if (k == NULL) return 0;
    json_t *p = project(x, item);
    int rc = add_entry(&x->want, k, p);
    json_decref(k);
    json_decref(p);
    return rc;
}

/* The elements of item's set under the one key attribute of global index x, or NULL. A
 * DynamoDB table cannot hold a set there (the write is refused), so only a CQL table's
 * index on a collection does: it holds one entry per element, the item as it would be
 * with the attribute holding that element alone. */
static const json_t *key_set(const table_check *tc, const index_def *x, const json_t *item,
                             char *set_type)
{
    const char *type = json_string_value(json_object_get(tc->types, x->keys[0]));
    if (!x->global || x->nown != 1 || type == NULL || strlen(type) != 1) return NULL;
    set_type[0] = type[0];
    set_type[1] = 'S';
    set_type[2] = 0;
    const json_t *els = json_object_get(json_object_get(item, x->keys[0]), set_type);
    return json_is_array(els) ? els : NULL;
}

static int each_base_item(void *arg, json_t *item)
{
    table_check *tc = arg;
    for (size_t i = 0; i < tc->nix; i++) {
        index_def *x = &tc->ix[i];
        char set_type[3];
        const json_t *els = key_set(tc, x, item, set_type);
        if (els == NULL) {
            if (want_entry(tc, x, item)) return -1;
            continue;
        }
        json_t *one = json_copy(item);
        if (one == NULL) return -1;
        size_t e;
        json_t *el;
        int rc = 0;
        json_array_foreach((json_t *)els, e, el)
        {
            set_type[1] = 0;
            json_object_set_new(one, x->keys[0], json_pack("{s:O}", set_type, el));
            set_type[1] = 'S';
            if ((rc = want_entry(tc, x, one)) != 0) break;
        }
        json_decref(one);
        if (rc) return -1;
    }
    progress_update(&tc->meter, ++tc->items, progress_now());
    return 0;
}

static int each_index_item(void *arg, json_t *item)
{
    table_check *tc = arg;
    index_def *x = tc->reading;
    /* an entry held without its own keys is still compared, under what it has */
    json_t *k = json_object();
    for (size_t i = 0; i < x->nkeys; i++) {
        json_t *v = json_object_get(item, x->keys[i]);
        if (v) json_object_set(k, x->keys[i], v);
    }
    int rc = add_entry(&x->held, k, item);
    json_decref(k);
    return rc;
}

static void describe(void *arg, buf *out, const diff_entry *e)
{
    (void)arg;
    buf_append(out, e->val, e->vlen > 200 ? 200 : e->vlen);
}

typedef struct held_walk {
    const diff_set *s;
    size_t i;
} held_walk;

static int next_held(void *arg, diff_entry *e)
{
    held_walk *w = arg;
    if (w->i >= w->s->n) return 0;
    *e = w->s->e[w->i++];
    return 1;
}

/* Reads the index definitions of DescribeTable's answer d into tc. */
static int read_defs(table_check *tc, const json_t *d, qr_err *err)
{
    tc->types = json_object();
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(d, "AttributeDefinitions"), i, a)
    {
        json_object_set(tc->types, json_string_value(json_object_get(a, "AttributeName")),
                        json_object_get(a, "AttributeType"));
    }
    json_array_foreach(json_object_get(d, "KeySchema"), i, a)
    {
        if (tc->ntkeys < 2)
            tc->tkeys[tc->ntkeys++] = json_string_value(json_object_get(a, "AttributeName"));
    }
    const char *lists[2] = {"LocalSecondaryIndexes", "GlobalSecondaryIndexes"};
    size_t total = json_array_size(json_object_get(d, lists[0])) +
                   json_array_size(json_object_get(d, lists[1]));
    tc->ix = calloc(total ? total : 1, sizeof *tc->ix);
    if (tc->ix == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    for (int g = 0; g < 2; g++) {
        json_array_foreach(json_object_get(d, lists[g]), i, a)
        {
            const char *status = json_string_value(json_object_get(a, "IndexStatus"));
            if (status && strcmp(status, "ACTIVE") != 0) continue; /* still being built */
            index_def *x = &tc->ix[tc->nix++];
            x->name = json_string_value(json_object_get(a, "IndexName"));
            x->global = g;
            size_t k;
            json_t *ks;
            json_array_foreach(json_object_get(a, "KeySchema"), k, ks)
            {
                if (x->nkeys < MAX_KEY_ATTRS - 2)
                    x->keys[x->nkeys++] = json_string_value(json_object_get(ks, "AttributeName"));
            }
            x->nown = x->nkeys;
            for (size_t t = 0; t < tc->ntkeys; t++) {
                int dup = 0;
                for (size_t o = 0; o < x->nkeys; o++)
                    dup |= strcmp(x->keys[o], tc->tkeys[t]) == 0;
                if (!dup) x->keys[x->nkeys++] = tc->tkeys[t];
            }
            json_t *pr = json_object_get(a, "Projection");
            const char *type = json_string_value(json_object_get(pr, "ProjectionType"));
            x->all = type == NULL || strcmp(type, "ALL") == 0;
            if (type && strcmp(type, "INCLUDE") == 0)
                x->include = json_object_get(pr, "NonKeyAttributes");
        }
    }
    return 0;
}

static void free_check(table_check *tc)
{
    for (size_t i = 0; i < tc->nix; i++) {
        diff_set_free(&tc->ix[i].want);
        diff_set_free(&tc->ix[i].held);
    }
    free(tc->ix);
    json_decref(tc->types);
    memset(tc, 0, sizeof *tc);
}

/* One reading of a table and its indexes; the differences found, or -1. */
static long check_table(conn *c, const char *name, int quiet, buf *report, size_t *checked,
                        qr_err *err)
{
    json_t *req = json_pack("{s:s}", "TableName", name), *resp = NULL;
    int rc = conn_call(c, "DescribeTable", req, &resp, err);
    json_decref(req);
    if (rc) return -1;
    const json_t *d = json_object_get(resp, "Table");
    table_check tc = {0};
    tc.table = name;
    long diffs = 0;
    if (read_defs(&tc, d, err)) {
        diffs = -1;
        goto done;
    }
    char what[300];
    snprintf(what, sizeof what, "verify of %s", name);
    json_int_t counted = json_integer_value(json_object_get(d, "ItemCount"));
    progress_start_stderr(&tc.meter, what, counted > 0 ? (uint64_t)counted : 0, quiet);
    req = json_pack("{s:s,s:b}", "TableName", name, "ConsistentRead", 1);
    rc = conn_scan(c, req, each_base_item, &tc, err);
    json_decref(req);
    if (rc) {
        if (err->type == NULL) err_set(err, QR_E_INTERNAL, "out of memory reading %s", name);
        diffs = -1;
        goto done;
    }
    progress_finish(&tc.meter, progress_now());
    if ((json_int_t)tc.items != counted) {
        buf_printf(report, "  %s: DescribeTable counts %lld items, %zu are stored\n", name,
                   (long long)counted, tc.items);
        diffs++;
    }
    if (tc.nix == 0) buf_printf(report, "%s: no secondary indexes\n", name);
    for (size_t i = 0; i < tc.nix; i++) {
        index_def *x = &tc.ix[i];
        tc.reading = x;
        req = json_pack("{s:s,s:s,s:b}", "TableName", name, "IndexName", x->name, "ConsistentRead",
                        !x->global);
        rc = conn_scan(c, req, each_index_item, &tc, err);
        json_decref(req);
        if (rc) {
            if (err->type == NULL) err_set(err, QR_E_INTERNAL, "out of memory reading %s", name);
            diffs = -1;
            goto done;
        }
        diff_set_sort(&x->want);
        diff_set_sort(&x->held);
        held_walk w = {&x->held, 0};
        diff_ops ops = {NULL, describe, next_held, &w};
        char ixname[300];
        snprintf(ixname, sizeof ixname, "%s.%s", name, x->name);
        size_t held = 0;
        size_t n = diff_merge(&x->want, &ops, ixname, report, &held);
        diff_summary(report, name, x->name, x->want.n, held, n);
        diffs += (long)n;
        (*checked)++;
    }
done:
    free_check(&tc);
    json_decref(resp);
    return diffs;
}

/* The names of every table, page after page of ListTables. */
static json_t *table_names(conn *c, qr_err *err)
{
    json_t *names = json_array(), *req = json_object();
    for (;;) {
        json_t *resp;
        if (conn_call(c, "ListTables", req, &resp, err)) {
            json_decref(names);
            names = NULL;
            break;
        }
        json_array_extend(names, json_object_get(resp, "TableNames"));
        json_t *last = json_object_get(resp, "LastEvaluatedTableName");
        if (last) json_object_set(req, "ExclusiveStartTableName", last);
        json_decref(resp);
        if (last == NULL) break;
    }
    json_decref(req);
    return names;
}

long verify_api(conn *c, const char *table, int quiet, buf *report, qr_err *err)
{
    json_t *names = table ? json_pack("[s]", table) : table_names(c, err);
    if (names == NULL) return -1;
    long diffs = 0;
    size_t checked = 0, i;
    json_t *n;
    json_array_foreach(names, i, n)
    {
        const char *name = json_string_value(n);
        buf one;
        buf_init(&one, 0);
        size_t ix = 0;
        long d = check_table(c, name, quiet, &one, &ix, err);
        if (d > 0) { /* a global index may not have caught up yet: read it all again */
            sleep(1);
            buf_reset(&one);
            ix = 0;
            buf_printf(report, "%s: differences on a first reading; read again after 1 s\n", name);
            d = check_table(c, name, quiet, &one, &ix, err);
        }
        if (d < 0) {
            buf_free(&one);
            if (table && err->type && strcmp(err->type, QR_E_NOT_FOUND) == 0) {
                err_clear(err);
                buf_printf(report, "no table named %s\n", table);
                diffs++;
                break;
            }
            json_decref(names);
            return -1;
        }
        buf_append(report, one.data, one.len);
        buf_free(&one);
        diffs += d;
        checked += ix;
    }
    json_decref(names);
    buf_printf(report, "%zu index%s checked, %ld difference%s\n", checked, checked == 1 ? "" : "es",
               diffs, diffs == 1 ? "" : "s");
    return diffs;
}
