/* exec_describe.c — DESCRIBE, as Cassandra 4 answers it on the server: rows of
 * (keyspace_name, type, name) for the listings (KEYSPACES, TABLES, TYPES, ...) and of
 * (keyspace_name, type, name, create_statement) for elements (SCHEMA, KEYSPACE, TABLE,
 * TYPE, INDEX, MATERIALIZED VIEW, DESCRIBE name), the statements written from the schema
 * document in Cassandra's layout; and DESCRIBE CLUSTER's one row. Pages by row offset.
 *
 * It reads the schema and the system tables' columns; it changes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cql/exec_int.h"
#include "cql/types.h"
#include "cqlwire/cql_value.h"
#include "util/buf.h"

#define SNITCH "SimpleSnitch"
#define PARTITIONER "Murmur3Partitioner"
#define NODE_ENDPOINT "/127.0.0.1:7000"

static const cql_type t_text = {.id = CQL_TYPE_VARCHAR};
static const cql_type *const p_text[] = {&t_text};
static const cql_type t_list_text = {.id = CQL_TYPE_LIST, .params = p_text, .n = 1};
static const cql_type *const p_text_list[] = {&t_text, &t_list_text};
static const cql_type t_ownership = {.id = CQL_TYPE_MAP, .params = p_text_list, .n = 2};

/* One row: an element of the schema, its statement NULL in a listing. */
typedef struct element {
    char *ks, *type, *name, *cql;
} element;

typedef struct describer {
    cql_call *call;
    cql_state *st;
    element *els;
    size_t n, cap;
    int failed; /* out of memory */
} describer;

static char *quoted_name(const char *name)
{
    buf b;
    buf_init(&b, 0);
    if (cql_print_name(&b, name) != 0 || buf_puts(&b, "") != 0) {
        buf_free(&b);
        return NULL;
    }
    size_t len;
    return buf_detach(&b, &len);
}

/* Adds a row; cql is taken over (may be NULL for a listing's row). */
static void add(describer *d, const char *ks, const char *type, const char *name, char *cql)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        element *e = realloc(d->els, cap * sizeof *e);
        if (e == NULL) {
            free(cql);
            d->failed = 1;
            return;
        }
        d->els = e;
        d->cap = cap;
    }
    element *e = &d->els[d->n];
    e->ks = quoted_name(ks);
    e->type = strdup(type);
    e->name = quoted_name(name);
    e->cql = cql;
    if (e->ks == NULL || e->type == NULL || e->name == NULL) d->failed = 1;
    d->n++;
}

static void free_elements(describer *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->els[i].ks);
        free(d->els[i].type);
        free(d->els[i].name);
        free(d->els[i].cql);
    }
    free(d->els);
}

/* The keys of obj sorted as Cassandra sorts element names (ignoring case); a malloc'd
 * array of *n borrowed strings, or NULL when empty or out of memory. */
static int by_name(const void *a, const void *b)
{
    return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

static const char **sorted_keys(json_t *obj, size_t *n)
{
    *n = 0;
    size_t count = json_is_object(obj) ? json_object_size(obj) : 0;
    if (count == 0) return NULL;
    const char **keys = malloc(count * sizeof *keys);
    if (keys == NULL) return NULL;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        (void)v;
        keys[(*n)++] = k;
    }
    qsort(keys, *n, sizeof *keys, by_name);
    return keys;
}

/* ---- the statements ---- */

static void put_name(buf *b, const char *name)
{
    cql_print_name(b, name);
}

static void put_qualified(buf *b, const char *ks, const char *name)
{
    put_name(b, ks);
    buf_puts(b, ".");
    put_name(b, name);
}

static void put_string(buf *b, const char *s)
{
    buf_puts(b, "'");
    for (const char *c = s; *c; c++)
        buf_append(b, *c == '\'' ? "''" : c, *c == '\'' ? 2 : 1);
    buf_puts(b, "'");
}

/* A map of text as Cassandra prints one: {'k': 'v', ...}, with "class" first when
 * class_first, the other keys in order. */
static void put_text_map(buf *b, json_t *map, int class_first)
{
    size_t n;
    const char **keys = sorted_keys(map, &n);
    buf_puts(b, "{");
    size_t written = 0;
    json_t *cls = class_first ? json_object_get(map, "class") : NULL;
    if (cls) {
        put_string(b, "class");
        buf_puts(b, ": ");
        put_string(b, json_is_string(cls) ? json_string_value(cls) : "");
        written++;
    }
    for (size_t i = 0; i < n; i++) {
        if (cls && strcmp(keys[i], "class") == 0) continue;
        json_t *v = json_object_get(map, keys[i]);
        if (written++) buf_puts(b, ", ");
        put_string(b, keys[i]);
        buf_puts(b, ": ");
        if (json_is_string(v))
            put_string(b, json_string_value(v));
        else {
            char *text = json_dumps(v, JSON_ENCODE_ANY);
            put_string(b, text ? text : "");
            free(text);
        }
    }
    buf_puts(b, "}");
    free(keys);
}

/* An option's value: text quoted, doubles as Java prints them (1.0, 0.01), maps. */
static void put_option_value(buf *b, json_t *v)
{
    if (json_is_string(v)) {
        put_string(b, json_string_value(v));
    } else if (json_is_integer(v)) {
        buf_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        char num[64];
        snprintf(num, sizeof num, "%.15g", json_real_value(v));
        buf_puts(b, num);
        if (strpbrk(num, ".eEn") == NULL) buf_puts(b, ".0");
    } else if (json_is_boolean(v)) {
        buf_puts(b, json_is_true(v) ? "true" : "false");
    } else if (json_is_object(v)) {
        put_text_map(b, v, 0);
    } else {
        buf_puts(b, "null");
    }
}

static char *finish(buf *b)
{
    if (buf_puts(b, "") != 0) {
        buf_free(b);
        return NULL;
    }
    size_t len;
    return buf_detach(b, &len);
}

static char *keyspace_cql(const char *ks, json_t *replication, int durable)
{
    buf b;
    buf_init(&b, 0);
    buf_puts(&b, "CREATE KEYSPACE ");
    put_name(&b, ks);
    buf_puts(&b, " WITH replication = ");
    put_text_map(&b, replication, 1);
    /* Cassandra writes two spaces here */
    buf_printf(&b, "  AND durable_writes = %s;", durable ? "true" : "false");
    return finish(&b);
}

static char *type_cql(const char *ks, const char *name, json_t *type)
{
    buf b;
    buf_init(&b, 0);
    buf_puts(&b, "CREATE TYPE ");
    put_qualified(&b, ks, name);
    buf_puts(&b, " (\n");
    json_t *fields = json_object_get(type, "fields"), *types = json_object_get(type, "types");
    for (size_t i = 0; i < json_array_size(fields); i++) {
        buf_puts(&b, "    ");
        put_name(&b, json_string_value(json_array_get(fields, i)));
        buf_printf(&b, " %s%s\n", json_string_value(json_array_get(types, i)),
                   i + 1 < json_array_size(fields) ? "," : "");
    }
    buf_puts(&b, ");");
    return finish(&b);
}

/* The key columns of kind ("partition_key" or "clustering") in position order. */
static size_t key_columns(json_t *cols, const char *kind, json_t **out, size_t cap)
{
    size_t n = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cols, i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "kind")), kind) != 0) continue;
        json_int_t pos = json_integer_value(json_object_get(c, "position"));
        if (pos >= 0 && (size_t)pos < cap) out[pos] = c;
        if ((size_t)pos + 1 > n) n = (size_t)pos + 1;
    }
    return n < cap ? n : cap;
}

static int by_column_name(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "name"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "name"));
    return strcmp(x, y);
}

/* PRIMARY KEY (...) and the WITH part shared by tables and views; prefix is what starts
 * the WITH ("\n) WITH " for a table, "\n    WITH " for a view). */
static void key_and_options(buf *b, json_t *cols, json_t *opts, const char *prefix)
{
    json_t *pk[64] = {0}, *ck[64] = {0};
    size_t npk = key_columns(cols, "partition_key", pk, 64);
    size_t nck = key_columns(cols, "clustering", ck, 64);
    buf_puts(b, "PRIMARY KEY (");
    if (npk > 1) buf_puts(b, "(");
    for (size_t i = 0; i < npk; i++) {
        if (i) buf_puts(b, ", ");
        if (pk[i]) put_name(b, json_string_value(json_object_get(pk[i], "name")));
    }
    if (npk > 1) buf_puts(b, ")");
    for (size_t i = 0; i < nck; i++) {
        buf_puts(b, ", ");
        if (ck[i]) put_name(b, json_string_value(json_object_get(ck[i], "name")));
    }
    buf_puts(b, ")");
    buf_puts(b, prefix);
    int first = 1;
    if (nck) {
        buf_puts(b, "CLUSTERING ORDER BY (");
        for (size_t i = 0; i < nck; i++) {
            if (i) buf_puts(b, ", ");
            if (ck[i] == NULL) continue;
            put_name(b, json_string_value(json_object_get(ck[i], "name")));
            const char *order = json_string_value(json_object_get(ck[i], "order"));
            buf_puts(b, order && strcmp(order, "desc") == 0 ? " DESC" : " ASC");
        }
        buf_puts(b, ")");
        first = 0;
    }
    size_t n;
    const char **keys = sorted_keys(opts, &n);
    for (size_t i = 0; i < n; i++) {
        buf_puts(b, first ? "" : "\n    AND ");
        first = 0;
        buf_puts(b, keys[i]);
        buf_puts(b, " = ");
        put_option_value(b, json_object_get(opts, keys[i]));
    }
    free(keys);
    buf_puts(b, ";");
}

/* CREATE TABLE in Cassandra's layout: the key columns first, then the others by name, a
 * lone partition key written "k type PRIMARY KEY". */
static char *table_cql(const char *ks, const char *name, json_t *t)
{
    json_t *cols = json_object_get(t, "columns");
    json_t *pk[64] = {0}, *ck[64] = {0};
    size_t npk = key_columns(cols, "partition_key", pk, 64);
    size_t nck = key_columns(cols, "clustering", ck, 64);
    size_t ncols = json_array_size(cols), nrest = 0;
    json_t **rest = malloc((ncols + 1) * sizeof *rest);
    if (rest == NULL) return NULL;
    size_t i;
    json_t *c;
    json_array_foreach(cols, i, c)
    {
        const char *kind = json_string_value(json_object_get(c, "kind"));
        if (strcmp(kind, "partition_key") != 0 && strcmp(kind, "clustering") != 0)
            rest[nrest++] = c;
    }
    qsort(rest, nrest, sizeof *rest, by_column_name);
    int lone = npk == 1 && nck == 0;
    buf b;
    buf_init(&b, 0);
    buf_puts(&b, "CREATE TABLE ");
    put_qualified(&b, ks, name);
    buf_puts(&b, " (\n");
    for (size_t k = 0; k < npk + nck + nrest; k++) {
        json_t *col = k < npk ? pk[k] : k < npk + nck ? ck[k - npk] : rest[k - npk - nck];
        if (col == NULL) continue;
        buf_puts(&b, "    ");
        put_name(&b, json_string_value(json_object_get(col, "name")));
        buf_printf(&b, " %s", json_string_value(json_object_get(col, "type")));
        if (strcmp(json_string_value(json_object_get(col, "kind")), "static") == 0)
            buf_puts(&b, " static");
        if (lone && k == 0) buf_puts(&b, " PRIMARY KEY");
        buf_puts(&b, lone && k + 1 == npk + nck + nrest ? "\n" : ",\n");
    }
    free(rest);
    if (lone) {
        /* no PRIMARY KEY clause: the options follow the column list */
        buf_puts(&b, ") WITH ");
        size_t n;
        const char **keys = sorted_keys(json_object_get(t, "options"), &n);
        for (size_t k = 0; k < n; k++) {
            if (k) buf_puts(&b, "\n    AND ");
            buf_puts(&b, keys[k]);
            buf_puts(&b, " = ");
            put_option_value(&b, json_object_get(json_object_get(t, "options"), keys[k]));
        }
        free(keys);
        buf_puts(&b, ";");
    } else {
        buf_puts(&b, "    ");
        key_and_options(&b, cols, json_object_get(t, "options"), "\n) WITH ");
    }
    return finish(&b);
}

static char *index_cql(const char *ks, const char *table, const char *name, json_t *ix)
{
    buf b;
    buf_init(&b, 0);
    buf_puts(&b, "CREATE INDEX ");
    put_name(&b, name);
    buf_puts(&b, " ON ");
    put_qualified(&b, ks, table);
    buf_puts(&b, " (");
    /* values(tags): the kind, then the column's name as CQL writes it */
    char column[CQL_NAME_MAX];
    int kind;
    cql_index_target_parse(json_string_value(json_object_get(ix, "target")), &kind, column,
                           sizeof column);
    if (kind != CQL_INDEX_SIMPLE) {
        buf_puts(&b, cql_index_kind_name(kind));
        buf_puts(&b, "(");
    }
    put_name(&b, column);
    buf_puts(&b, kind != CQL_INDEX_SIMPLE ? "));" : ");");
    return finish(&b);
}

static char *view_cql(const char *ks, const char *name, json_t *v)
{
    json_t *cols = json_object_get(v, "columns");
    buf b;
    buf_init(&b, 0);
    buf_puts(&b, "CREATE MATERIALIZED VIEW ");
    put_qualified(&b, ks, name);
    buf_puts(&b, " AS\n    SELECT ");
    if (json_is_true(json_object_get(v, "include_all"))) {
        buf_puts(&b, "*");
    } else {
        size_t i;
        json_t *c;
        json_array_foreach(cols, i, c)
        {
            if (i) buf_puts(&b, ", ");
            put_name(&b, json_string_value(json_object_get(c, "name")));
        }
    }
    buf_puts(&b, "\n    FROM ");
    put_qualified(&b, ks, json_string_value(json_object_get(v, "base")));
    const char *where = json_string_value(json_object_get(v, "where"));
    if (where && *where) buf_printf(&b, "\n    WHERE %s", where);
    buf_puts(&b, "\n    ");
    key_and_options(&b, cols, json_object_get(v, "options"), "\n    WITH ");
    return finish(&b);
}

/* ---- the system keyspaces, from the system tables' own columns ---- */

/* A system column's wire type as CQL writes it: natives by their name, collections of them. */
static void put_wire_type(buf *b, const cql_type *t)
{
    if (t->id == CQL_TYPE_LIST || t->id == CQL_TYPE_SET || t->id == CQL_TYPE_MAP) {
        buf_puts(b, t->id == CQL_TYPE_LIST ? "list<" : t->id == CQL_TYPE_SET ? "set<" : "map<");
        for (uint16_t i = 0; i < t->n; i++) {
            if (i) buf_puts(b, ", ");
            put_wire_type(b, t->params[i]);
        }
        buf_puts(b, ">");
        return;
    }
    const cql_ctype *native = cqltype_native(t->id);
    if (native) cqltype_name(native, b);
}

static char *system_table_cql(const char *ks, const char *name)
{
    cql_tinfo t;
    memset(&t, 0, sizeof t);
    arena_init(&t.arena, 0);
    if (!cql_system_tinfo(ks, name, &t)) {
        cql_tinfo_free(&t);
        return NULL;
    }
    buf b;
    buf_init(&b, 0);
    buf_puts(&b, "CREATE TABLE ");
    put_qualified(&b, ks, name);
    buf_puts(&b, " (\n");
    for (size_t i = 0; i < t.ncols; i++) {
        buf_puts(&b, "    ");
        put_name(&b, t.cols[i].name);
        buf_puts(&b, " ");
        put_wire_type(&b, t.cols[i].wire);
        buf_puts(&b, i == 0 ? " PRIMARY KEY" : "");
        buf_puts(&b, i + 1 < t.ncols ? ",\n" : "\n");
    }
    buf_puts(&b, ");");
    cql_tinfo_free(&t);
    return finish(&b);
}

/* ---- the elements of a keyspace ---- */

static json_t *keyspaces(describer *d)
{
    return json_object_get(d->st->schema->doc, "keyspaces");
}

static void add_table_elements(describer *d, const char *ks, const char *name, json_t *t,
                               json_t *views, int with_views)
{
    add(d, ks, "table", name, table_cql(ks, name, t));
    size_t n;
    const char **ix = sorted_keys(json_object_get(t, "indexes"), &n);
    for (size_t i = 0; i < n; i++)
        add(d, ks, "index", ix[i],
            index_cql(ks, name, ix[i], json_object_get(json_object_get(t, "indexes"), ix[i])));
    free(ix);
    if (!with_views) return;
    const char **vs = sorted_keys(views, &n);
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_object_get(views, vs[i]);
        if (strcmp(json_string_value(json_object_get(v, "base")), name) == 0)
            add(d, ks, "materialized_view", vs[i], view_cql(ks, vs[i], v));
    }
    free(vs);
}

static void add_system_keyspace(describer *d, const char *ks, int only)
{
    json_t *repl = NULL;
    int durable = cql_system_keyspace_replication(ks, &repl);
    add(d, ks, "keyspace", ks, repl ? keyspace_cql(ks, repl, durable) : NULL);
    json_decref(repl);
    if (only) return;
    const char *tks;
    for (size_t i = 0; cql_system_table_at(i, &tks) != NULL; i++)
        if (strcmp(tks, ks) == 0) {
            const char *name = cql_system_table_at(i, &tks);
            add(d, ks, "table", name, system_table_cql(ks, name));
        }
}

static void add_keyspace(describer *d, const char *ks, int only)
{
    if (cql_system_keyspace(ks)) {
        add_system_keyspace(d, ks, only);
        return;
    }
    json_t *k = json_object_get(keyspaces(d), ks);
    add(d, ks, "keyspace", ks,
        keyspace_cql(ks, json_object_get(k, "replication"),
                     !json_is_false(json_object_get(k, "durable_writes"))));
    if (only) return;
    size_t n;
    const char **types = sorted_keys(json_object_get(k, "types"), &n);
    for (size_t i = 0; i < n; i++)
        add(d, ks, "type", types[i],
            type_cql(ks, types[i], json_object_get(json_object_get(k, "types"), types[i])));
    free(types);
    const char **tables = sorted_keys(json_object_get(k, "tables"), &n);
    for (size_t i = 0; i < n; i++)
        add_table_elements(d, ks, tables[i],
                           json_object_get(json_object_get(k, "tables"), tables[i]),
                           json_object_get(k, "views"), 1);
    free(tables);
}

/* Every keyspace's name, user ones and system ones, sorted as Cassandra sorts them. */
static const char **all_keyspaces(describer *d, size_t *n)
{
    json_t *kss = keyspaces(d);
    size_t nuser = json_object_size(kss), nsys = 0;
    while (cql_system_keyspace_at(nsys) != NULL)
        nsys++;
    const char **names = malloc((nuser + nsys + 1) * sizeof *names);
    *n = 0;
    if (names == NULL) return NULL;
    for (size_t i = 0; i < nsys; i++)
        names[(*n)++] = cql_system_keyspace_at(i);
    const char *k;
    json_t *v;
    json_object_foreach(kss, k, v)
    {
        (void)v;
        names[(*n)++] = k;
    }
    qsort(names, *n, sizeof *names, by_name);
    return names;
}

static int known_keyspace(describer *d, const char *ks)
{
    return cql_system_keyspace(ks) || json_object_get(keyspaces(d), ks) != NULL;
}

/* The listing of one kind ("table", "type") in ks. */
static void add_listing(describer *d, const char *ks, const char *kind)
{
    if (strcmp(kind, "table") == 0 && cql_system_keyspace(ks)) {
        const char *tks, *name;
        for (size_t i = 0; (name = cql_system_table_at(i, &tks)) != NULL; i++)
            if (strcmp(tks, ks) == 0) add(d, ks, "table", name, NULL);
        return;
    }
    json_t *k = json_object_get(keyspaces(d), ks);
    size_t n;
    const char **names =
        sorted_keys(json_object_get(k, strcmp(kind, "table") == 0 ? "tables" : "types"), &n);
    for (size_t i = 0; i < n; i++)
        add(d, ks, kind, names[i], NULL);
    free(names);
}

/* The element named s->name (DESCRIBE TABLE, TYPE, INDEX, MATERIALIZED VIEW, name). */
static int add_named(describer *d, const cql_stmt *s, cql_describe_what what)
{
    cql_call *c = d->call;
    const char *ks = s->name.ks ? s->name.ks : c->keyspace;
    const char *name = s->name.name;
    if (what == CQL_DESC_ANY && s->name.ks == NULL && known_keyspace(d, name)) {
        add_keyspace(d, name, 0);
        return 0;
    }
    if (ks == NULL && what == CQL_DESC_ANY) ks = name;
    if (ks == NULL)
        return cql_fail(c, CQL_ERR_INVALID, "No keyspace specified and no current keyspace");
    if (!known_keyspace(d, ks))
        return cql_fail(c, CQL_ERR_INVALID, "'%s' not found in keyspaces", ks);
    json_t *k = json_object_get(keyspaces(d), ks);
    json_t *tables = json_object_get(k, "tables"), *views = json_object_get(k, "views");
    int any = what == CQL_DESC_ANY;
    if (what == CQL_DESC_TABLE || any) {
        json_t *t = json_object_get(tables, name);
        if (t) {
            add_table_elements(d, ks, name, t, views, 0);
            return 0;
        }
        if (cql_system_keyspace(ks)) {
            char *cql = system_table_cql(ks, name);
            if (cql) {
                add(d, ks, "table", name, cql);
                return 0;
            }
        }
        if (json_object_get(views, name) && !any) {
            add(d, ks, "materialized_view", name, view_cql(ks, name, json_object_get(views, name)));
            return 0;
        }
        if (!any)
            return cql_fail(c, CQL_ERR_INVALID, "Table '%s' not found in keyspace '%s'", name, ks);
    }
    if (what == CQL_DESC_INDEX || any) {
        const char *tn;
        json_t *t;
        json_object_foreach(tables, tn, t)
        {
            json_t *ix = json_object_get(json_object_get(t, "indexes"), name);
            if (ix) {
                add(d, ks, "index", name, index_cql(ks, tn, name, ix));
                return 0;
            }
        }
        if (!any) return cql_fail(c, CQL_ERR_INVALID, "Index '%s' not found in '%s'", name, ks);
    }
    if (what == CQL_DESC_VIEW || any) {
        json_t *v = json_object_get(views, name);
        if (v) {
            add(d, ks, "materialized_view", name, view_cql(ks, name, v));
            return 0;
        }
        if (!any)
            return cql_fail(c, CQL_ERR_INVALID, "Materialized view '%s' not found in '%s'", name,
                            ks);
        return cql_fail(c, CQL_ERR_INVALID, "'%s' not found in keyspace '%s'", name, ks);
    }
    json_t *ty = json_object_get(json_object_get(k, "types"), name);
    if (ty == NULL)
        return cql_fail(c, CQL_ERR_INVALID, "User defined type '%s' not found in '%s'", name, ks);
    add(d, ks, "type", name, type_cql(ks, name, ty));
    return 0;
}

/* The rows of s into d: 0, or -1 with the call's error set. */
static int collect(describer *d, const cql_stmt *s)
{
    cql_call *c = d->call;
    const cql_describe *w = &s->u.describe;
    size_t n;
    const char **kss;
    switch (w->what) {
    case CQL_DESC_KEYSPACES:
        kss = all_keyspaces(d, &n);
        for (size_t i = 0; i < n; i++)
            add(d, kss[i], "keyspace", kss[i], NULL);
        free(kss);
        return 0;
    case CQL_DESC_SCHEMA:
        kss = all_keyspaces(d, &n);
        for (size_t i = 0; i < n; i++)
            if (w->full || !cql_system_keyspace(kss[i])) add_keyspace(d, kss[i], 0);
        free(kss);
        return 0;
    case CQL_DESC_KEYSPACE: {
        const char *ks = s->name.name ? s->name.name : c->keyspace;
        if (ks == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "No keyspace specified and no current keyspace");
        if (!known_keyspace(d, ks))
            return cql_fail(c, CQL_ERR_INVALID, "'%s' not found in keyspaces", ks);
        add_keyspace(d, ks, w->only);
        return 0;
    }
    case CQL_DESC_TABLES:
    case CQL_DESC_TYPES: {
        const char *kind = w->what == CQL_DESC_TABLES ? "table" : "type";
        if (c->keyspace) {
            if (!known_keyspace(d, c->keyspace))
                return cql_fail(c, CQL_ERR_INVALID, "'%s' not found in keyspaces", c->keyspace);
            add_listing(d, c->keyspace, kind);
            return 0;
        }
        kss = all_keyspaces(d, &n);
        for (size_t i = 0; i < n; i++)
            add_listing(d, kss[i], kind);
        free(kss);
        return 0;
    }
    case CQL_DESC_FUNCTIONS:
    case CQL_DESC_AGGREGATES:
        /* no user-defined functions or aggregates exist here */
        return 0;
    case CQL_DESC_FUNCTION:
    case CQL_DESC_AGGREGATE: {
        const char *ks = s->name.ks ? s->name.ks : c->keyspace;
        if (ks == NULL)
            return cql_fail(c, CQL_ERR_INVALID, "No keyspace specified and no current keyspace");
        if (!known_keyspace(d, ks))
            return cql_fail(c, CQL_ERR_INVALID, "'%s' not found in keyspaces", ks);
        return cql_fail(c, CQL_ERR_INVALID, "User defined %s '%s' not found in '%s'",
                        w->what == CQL_DESC_FUNCTION ? "function" : "aggregate", s->name.name, ks);
    }
    case CQL_DESC_TABLE:
    case CQL_DESC_TYPE:
    case CQL_DESC_INDEX:
    case CQL_DESC_VIEW:
    case CQL_DESC_ANY:
        return add_named(d, s, w->what);
    case CQL_DESC_CLUSTER:
        break;
    }
    return 0;
}

/* DESCRIBE CLUSTER: the cluster's name, partitioner and snitch, and with a user keyspace
 * in use the ring's one range, owned by this node. */
static int describe_cluster(cql_run *r)
{
    cql_call *c = r->call;
    int ranges = c->keyspace && !cql_system_keyspace(c->keyspace);
    cql_rows rs;
    cql_rows_init(&rs, "system", "describe");
    int rc = cql_rows_column(&rs, "cluster", &t_text);
    rc |= cql_rows_column(&rs, "partitioner", &t_text);
    rc |= cql_rows_column(&rs, "snitch", &t_text);
    if (ranges) rc |= cql_rows_column(&rs, "range_ownership", &t_ownership);
    rc |= cql_rows_put(&rs, CQL_CLUSTER_NAME, (int32_t)strlen(CQL_CLUSTER_NAME));
    rc |= cql_rows_put(&rs, PARTITIONER, (int32_t)strlen(PARTITIONER));
    rc |= cql_rows_put(&rs, SNITCH, (int32_t)strlen(SNITCH));
    if (ranges) {
        /* {'0': ['/127.0.0.1:7000']}: map of one text key to a list of one text */
        buf m;
        buf_init(&m, 0);
        uint8_t n4[4];
        const char *token = "0";
        const size_t tl = strlen(token), el = strlen(NODE_ENDPOINT);
        cql_int_encode(1, n4);
        buf_append(&m, n4, 4);
        cql_int_encode((int32_t)tl, n4);
        buf_append(&m, n4, 4);
        buf_append(&m, token, tl);
        cql_int_encode((int32_t)(4 + 4 + el), n4);
        buf_append(&m, n4, 4);
        cql_int_encode(1, n4);
        buf_append(&m, n4, 4);
        cql_int_encode((int32_t)el, n4);
        buf_append(&m, n4, 4);
        buf_append(&m, NODE_ENDPOINT, el);
        rc |= cql_rows_put(&rs, m.data, (int32_t)m.len);
        buf_free(&m);
    }
    rs.nrows = 1;
    if (rc == 0)
        rc = cql_rows_write(&rs, c, NULL, 0);
    else
        rc = cql_fail(c, CQL_ERR_SERVER, "out of memory");
    cql_rows_free(&rs);
    return rc;
}

/* The paging state of DESCRIBE: the schema version's 16 bytes and the next row's offset,
 * so a page asked for after a schema change is refused as Cassandra refuses it. */
static int page_offset(cql_run *r, const uint8_t version[16], uint64_t *offset)
{
    *offset = 0;
    const cql_query_params *p = r->params;
    if (p == NULL || p->paging_state.len == CQL_NULL || p->paging_state.p == NULL) return 0;
    const uint8_t *s = (const uint8_t *)p->paging_state.p;
    if (p->paging_state.len != 24)
        return cql_fail(r->call, CQL_ERR_INVALID, "Invalid paging state.");
    if (memcmp(s, version, 16) != 0)
        return cql_fail(r->call, CQL_ERR_INVALID,
                        "The schema has changed since the previous page of the DESCRIBE "
                        "statement result. Please retry the DESCRIBE statement.");
    for (int i = 0; i < 8; i++)
        *offset = *offset << 8 | s[16 + i];
    return 0;
}

int cql_exec_describe(cql_run *r, const cql_stmt *s)
{
    cql_call *c = r->call;
    if (s->u.describe.what == CQL_DESC_CLUSTER) return describe_cluster(r);
    cql_state *st = cql_state_of(c);
    if (st == NULL) return -1;
    describer d = {.call = c, .st = st};
    uint8_t version[16] = {0};
    pthread_mutex_lock(&st->lock);
    cql_uuid_parse(cql_schema_version(st->schema), version);
    int rc = collect(&d, s);
    pthread_mutex_unlock(&st->lock);
    int listing = s->u.describe.what == CQL_DESC_KEYSPACES ||
                  s->u.describe.what == CQL_DESC_TABLES || s->u.describe.what == CQL_DESC_TYPES ||
                  s->u.describe.what == CQL_DESC_FUNCTIONS ||
                  s->u.describe.what == CQL_DESC_AGGREGATES;
    uint64_t offset = 0;
    if (rc == 0 && d.failed) rc = cql_fail(c, CQL_ERR_SERVER, "out of memory");
    if (rc == 0) rc = page_offset(r, version, &offset);
    if (rc != 0) {
        free_elements(&d);
        return -1;
    }
    cql_rows rs;
    cql_rows_init(&rs, "system", "describe");
    int bad = cql_rows_column(&rs, "keyspace_name", &t_text);
    bad |= cql_rows_column(&rs, "type", &t_text);
    bad |= cql_rows_column(&rs, "name", &t_text);
    if (!listing) bad |= cql_rows_column(&rs, "create_statement", &t_text);
    int32_t page = r->params && r->params->page_size > 0 ? r->params->page_size : INT32_MAX;
    size_t i = offset < d.n ? (size_t)offset : d.n;
    for (; i < d.n && rs.nrows < (uint32_t)page && !bad; i++) {
        const element *e = &d.els[i];
        bad |= cql_rows_put(&rs, e->ks, (int32_t)strlen(e->ks));
        bad |= cql_rows_put(&rs, e->type, (int32_t)strlen(e->type));
        bad |= cql_rows_put(&rs, e->name, (int32_t)strlen(e->name));
        if (!listing) bad |= cql_rows_put(&rs, e->cql, e->cql ? (int32_t)strlen(e->cql) : -1);
        rs.nrows++;
    }
    uint8_t state[24];
    int more = i < d.n;
    if (more) {
        memcpy(state, version, 16);
        for (int k = 0; k < 8; k++)
            state[16 + k] = (uint8_t)((uint64_t)i >> (56 - 8 * k));
    }
    rc = bad ? cql_fail(c, CQL_ERR_SERVER, "out of memory")
             : cql_rows_write(&rs, c, more ? state : NULL, more ? sizeof state : 0);
    cql_rows_free(&rs);
    free_elements(&d);
    return rc;
}
