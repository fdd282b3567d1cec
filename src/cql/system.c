/* system.c — the tables drivers read to connect and to learn the schema, answered as a
 * single-node Cassandra 4.1 would: system.local, system.peers and system.peers_v2 (no
 * peers), system."IndexInfo" (the secondary indexes built, as the engine's catalog has
 * them), and the system_schema tables made from the schema document (schema.h).
 *
 * Each is a virtual table: its columns, in Cassandra's order, and a function that makes
 * its rows; a SELECT of one takes columns, selectors computed from constants (now(),
 * toTimestamp(now()), (int)1), equality and IN restrictions on any column and LIMIT. It
 * reads no engine table. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/aggregate.h"
#include "cql/exec_int.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"
#include "engine/engine.h"

/* ---- the types of system columns ---- */
#define T(id_)                                                                                     \
    {                                                                                              \
        .id = (id_)                                                                                \
    }
static const cql_type t_text = T(CQL_TYPE_VARCHAR), t_int = T(CQL_TYPE_INT),
                      t_uuid = T(CQL_TYPE_UUID), t_inet = T(CQL_TYPE_INET),
                      t_blob = T(CQL_TYPE_BLOB), t_bool = T(CQL_TYPE_BOOLEAN),
                      t_double = T(CQL_TYPE_DOUBLE), t_timestamp = T(CQL_TYPE_TIMESTAMP);
static const cql_type *const p_text[] = {&t_text, &t_text};
static const cql_type *const p_uuid_blob[] = {&t_uuid, &t_blob};
static const cql_type t_set_text = {.id = CQL_TYPE_SET, .params = p_text, .n = 1};
static const cql_type t_map_text = {.id = CQL_TYPE_MAP, .params = p_text, .n = 2};
static const cql_type *const p_text_blob[] = {&t_text, &t_blob};
static const cql_type t_map_text_blob = {.id = CQL_TYPE_MAP, .params = p_text_blob, .n = 2};
static const cql_type t_list_text = {.id = CQL_TYPE_LIST, .params = p_text, .n = 1};
static const cql_type t_map_uuid_blob = {.id = CQL_TYPE_MAP, .params = p_uuid_blob, .n = 2};
#undef T

/* ---- virtual tables ---- */

typedef struct vcol {
    const char *name;
    const cql_type *type;
} vcol;

typedef struct vtab vtab;
typedef int (*vfill_fn)(cql_run *r, const vtab *v, cql_rows *rows);
struct vtab {
    const char *ks, *name;
    const vcol *cols;
    size_t ncols;
    vfill_fn fill;
};

/* Appends a text value. */
static int put_text(cql_rows *rs, const char *s)
{
    if (s == NULL) return cql_rows_put(rs, NULL, -1);
    return cql_rows_put(rs, s, (int32_t)strlen(s));
}

static int put_int(cql_rows *rs, int32_t v)
{
    uint8_t b[4];
    cql_int_encode(v, b);
    return cql_rows_put(rs, b, 4);
}

static int put_bool(cql_rows *rs, int v)
{
    uint8_t b[1];
    cql_boolean_encode(v, b);
    return cql_rows_put(rs, b, 1);
}

static int put_double(cql_rows *rs, double v)
{
    uint8_t b[8];
    cql_double_encode(v, b);
    return cql_rows_put(rs, b, 8);
}

static int put_bigint(cql_rows *rs, int64_t v)
{
    uint8_t b[8];
    cql_bigint_encode(v, b);
    return cql_rows_put(rs, b, 8);
}

/* A JSON array of strings as a list or set of text. */
static int put_text_array(cql_rows *rs, json_t *a)
{
    size_t n = json_array_size(a);
    const char **items = calloc(n + 1, sizeof *items);
    if (items == NULL) return -1;
    for (size_t i = 0; i < n; i++)
        items[i] = json_string_value(json_array_get(a, i));
    int rc = 0;
    buf b;
    buf_init(&b, 0);
    size_t at = cql_collection_begin(&b);
    rc = at == (size_t)-1 ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = cql_element_put(&b, items[i], (int32_t)strlen(items[i] ? items[i] : ""));
    if (rc == 0) {
        cql_collection_end(&b, at, (uint32_t)n);
        rc = cql_rows_put(rs, b.data, (int32_t)b.len);
    }
    buf_free(&b);
    free(items);
    return rc;
}

static int put_uuid(cql_rows *rs, const char *text)
{
    uint8_t b[16];
    if (text == NULL || cql_uuid_parse(text, b) != 0) return cql_rows_put(rs, NULL, -1);
    return cql_rows_put(rs, b, 16);
}

static int put_inet(cql_rows *rs, const char *addr)
{
    uint8_t b[16];
    if (inet_pton(AF_INET, addr, b) == 1) return cql_rows_put(rs, b, 4);
    if (inet_pton(AF_INET6, addr, b) == 1) return cql_rows_put(rs, b, 16);
    return cql_rows_put(rs, NULL, -1);
}

/* A set or list of text. */
static int put_texts(cql_rows *rs, const char *const *items, size_t n)
{
    buf b;
    buf_init(&b, 0);
    size_t at = cql_collection_begin(&b);
    int rc = at == (size_t)-1 ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = cql_element_put(&b, items[i], (int32_t)strlen(items[i]));
    if (rc == 0) {
        cql_collection_end(&b, at, (uint32_t)n);
        rc = cql_rows_put(rs, b.data, (int32_t)b.len);
    }
    buf_free(&b);
    return rc;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A map<text, text> from a JSON object whose values are strings, numbers or booleans, its
 * keys in order as a map's are. */
static int put_text_map(cql_rows *rs, json_t *obj)
{
    size_t nkeys = json_object_size(obj), i = 0;
    const char **keys = nkeys ? malloc(nkeys * sizeof *keys) : NULL;
    if (nkeys && keys == NULL) return -1;
    const char *k;
    json_t *val;
    json_object_foreach(obj, k, val) keys[i++] = k;
    if (nkeys) qsort(keys, nkeys, sizeof *keys, by_key);
    buf b, v;
    buf_init(&b, 0);
    buf_init(&v, 0);
    size_t at = cql_collection_begin(&b);
    int rc = at == (size_t)-1 ? -1 : 0;
    uint32_t n = 0;
    for (i = 0; i < nkeys; i++) {
        k = keys[i];
        val = json_object_get(obj, k);
        if (rc) break;
        buf_reset(&v);
        if (json_is_string(val))
            buf_puts(&v, json_string_value(val));
        else if (json_is_integer(val))
            buf_printf(&v, "%lld", (long long)json_integer_value(val));
        else if (json_is_real(val))
            buf_printf(&v, "%g", json_real_value(val));
        else if (json_is_boolean(val))
            buf_puts(&v, json_is_true(val) ? "true" : "false");
        else
            continue;
        rc = cql_element_put(&b, k, (int32_t)strlen(k));
        if (rc == 0) rc = cql_element_put(&b, v.data ? v.data : "", (int32_t)v.len);
        n++;
    }
    if (rc == 0) {
        cql_collection_end(&b, at, n);
        rc = cql_rows_put(rs, b.data, (int32_t)b.len);
    }
    buf_free(&b);
    buf_free(&v);
    free(keys);
    return rc;
}

/* ---- system.local, system.peers, system.peers_v2 ---- */

#define NODE_ADDRESS "127.0.0.1"
#define NODE_TOKEN "0" /* one token: the node owns the whole ring */

static const vcol local_cols[] = {
    {"key", &t_text},
    {"bootstrapped", &t_text},
    {"broadcast_address", &t_inet},
    {"broadcast_port", &t_int},
    {"cluster_name", &t_text},
    {"cql_version", &t_text},
    {"data_center", &t_text},
    {"gossip_generation", &t_int},
    {"host_id", &t_uuid},
    {"listen_address", &t_inet},
    {"listen_port", &t_int},
    {"native_protocol_version", &t_text},
    {"partitioner", &t_text},
    {"rack", &t_text},
    {"release_version", &t_text},
    {"rpc_address", &t_inet},
    {"rpc_port", &t_int},
    {"schema_version", &t_uuid},
    {"tokens", &t_set_text},
    {"truncated_at", &t_map_uuid_blob},
};

static int fill_local(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)v;
    cql_state *st = cql_state_of(r->call);
    if (st == NULL) return -1;
    char host[40], version[40];
    pthread_mutex_lock(&st->lock);
    snprintf(host, sizeof host, "%s", cql_schema_host_id(st->schema));
    snprintf(version, sizeof version, "%s", cql_schema_version(st->schema));
    pthread_mutex_unlock(&st->lock);
    static const char *const tokens[] = {NODE_TOKEN};
    int rc = put_text(rs, "local");
    rc |= put_text(rs, "COMPLETED");
    rc |= put_inet(rs, NODE_ADDRESS);
    rc |= put_int(rs, 7000);
    rc |= put_text(rs, CQL_CLUSTER_NAME);
    rc |= put_text(rs, "3.4.6");
    rc |= put_text(rs, "datacenter1");
    rc |= put_int(rs, 1);
    rc |= put_uuid(rs, host);
    rc |= put_inet(rs, NODE_ADDRESS);
    rc |= put_int(rs, 7000);
    rc |= put_text(rs, "5");
    rc |= put_text(rs, "org.apache.cassandra.dht.Murmur3Partitioner");
    rc |= put_text(rs, "rack1");
    rc |= put_text(rs, "4.1.3");
    rc |= put_inet(rs, NODE_ADDRESS);
    rc |= put_int(rs, 9042);
    rc |= put_uuid(rs, version);
    rc |= put_texts(rs, tokens, 1);
    rc |= cql_rows_put(rs, NULL, -1);
    if (rc) return cql_fail(r->call, CQL_ERR_SERVER, "out of memory");
    rs->nrows++;
    return 0;
}

static const vcol peers_cols[] = {
    {"peer", &t_inet},         {"data_center", &t_text},    {"host_id", &t_uuid},
    {"preferred_ip", &t_inet}, {"rack", &t_text},           {"release_version", &t_text},
    {"rpc_address", &t_inet},  {"schema_version", &t_uuid}, {"tokens", &t_set_text},
};

static const vcol peers_v2_cols[] = {
    {"peer", &t_inet},           {"peer_port", &t_int},
    {"data_center", &t_text},    {"host_id", &t_uuid},
    {"native_address", &t_inet}, {"native_port", &t_int},
    {"preferred_ip", &t_inet},   {"preferred_port", &t_int},
    {"rack", &t_text},           {"release_version", &t_text},
    {"schema_version", &t_uuid}, {"tokens", &t_set_text},
};

/* A single node has no peers. */
static int fill_none(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)r;
    (void)v;
    (void)rs;
    return 0;
}

/* ---- system_schema ---- */

static const vcol keyspaces_cols[] = {
    {"keyspace_name", &t_text},
    {"durable_writes", &t_bool},
    {"replication", &t_map_text},
};

/* The system keyspaces, as a single node shows them. */
typedef struct sys_ks {
    const char *name, *strategy, *rf;
} sys_ks;
static const sys_ks system_ks[] = {
    {"system", "org.apache.cassandra.locator.LocalStrategy", NULL},
    {"system_schema", "org.apache.cassandra.locator.LocalStrategy", NULL},
    {"system_auth", "org.apache.cassandra.locator.SimpleStrategy", "1"},
    {"system_distributed", "org.apache.cassandra.locator.SimpleStrategy", "3"},
    {"system_traces", "org.apache.cassandra.locator.SimpleStrategy", "2"},
};
#define NSYSTEM_KS (sizeof system_ks / sizeof system_ks[0])

static int fill_keyspaces(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)v;
    int rc = 0;
    for (size_t i = 0; i < NSYSTEM_KS && rc == 0; i++) {
        json_t *repl = json_pack("{s:s}", "class", system_ks[i].strategy);
        if (system_ks[i].rf)
            json_object_set_new(repl, "replication_factor", json_string(system_ks[i].rf));
        rc = put_text(rs, system_ks[i].name);
        rc |= put_bool(rs, 1);
        rc |= put_text_map(rs, repl);
        json_decref(repl);
        rs->nrows++;
    }
    cql_state *st = cql_state_of(r->call);
    if (st == NULL) return -1;
    pthread_mutex_lock(&st->lock);
    const char *name;
    json_t *ks;
    json_object_foreach(json_object_get(st->schema->doc, "keyspaces"), name, ks)
    {
        if (rc) break;
        rc = put_text(rs, name);
        rc |= put_bool(rs, !json_is_false(json_object_get(ks, "durable_writes")));
        rc |= put_text_map(rs, json_object_get(ks, "replication"));
        rs->nrows++;
    }
    pthread_mutex_unlock(&st->lock);
    return rc ? cql_fail(r->call, CQL_ERR_SERVER, "out of memory") : 0;
}

static const vcol tables_cols[] = {
    {"keyspace_name", &t_text},
    {"table_name", &t_text},
    {"additional_write_policy", &t_text},
    {"bloom_filter_fp_chance", &t_double},
    {"caching", &t_map_text},
    {"cdc", &t_bool},
    {"comment", &t_text},
    {"compaction", &t_map_text},
    {"compression", &t_map_text},
    {"crc_check_chance", &t_double},
    {"default_time_to_live", &t_int},
    {"extensions", &t_map_text_blob},
    {"flags", &t_set_text},
    {"gc_grace_seconds", &t_int},
    {"id", &t_uuid},
    {"max_index_interval", &t_int},
    {"memtable", &t_text},
    {"memtable_flush_period_in_ms", &t_int},
    {"min_index_interval", &t_int},
    {"read_repair", &t_text},
    {"speculative_retry", &t_text},
};

/* One option of a table's "options" as its column's type. */
static int put_option(cql_rows *rs, const vcol *col, json_t *v)
{
    if (v == NULL) return cql_rows_put(rs, NULL, -1);
    switch (col->type->id) {
    case CQL_TYPE_VARCHAR:
        return put_text(rs, json_string_value(v));
    case CQL_TYPE_DOUBLE:
        return put_double(rs, json_number_value(v));
    case CQL_TYPE_INT:
        return put_int(rs, (int32_t)json_integer_value(v));
    case CQL_TYPE_BOOLEAN:
        return put_bool(rs, json_is_true(v));
    case CQL_TYPE_MAP:
        return put_text_map(rs, v);
    default:
        return cql_rows_put(rs, NULL, -1);
    }
}

/* Calls fn for every user table of the schema, under the state's lock. */
typedef int (*each_table_fn)(cql_rows *rs, const char *ks, const char *name, json_t *t);
static int each_table(cql_run *r, cql_rows *rs, each_table_fn fn)
{
    cql_state *st = cql_state_of(r->call);
    if (st == NULL) return -1;
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    const char *ksname, *tname;
    json_t *ks, *t;
    json_object_foreach(json_object_get(st->schema->doc, "keyspaces"), ksname, ks)
    {
        json_object_foreach(json_object_get(ks, "tables"), tname, t)
        {
            if (rc == 0) rc = fn(rs, ksname, tname, t);
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc ? cql_fail(r->call, CQL_ERR_SERVER, "out of memory") : 0;
}

static int table_row(cql_rows *rs, const char *ks, const char *name, json_t *t)
{
    json_t *opts = json_object_get(t, "options");
    int rc = put_text(rs, ks);
    rc |= put_text(rs, name);
    for (size_t i = 2; i < sizeof tables_cols / sizeof tables_cols[0]; i++) {
        const char *c = tables_cols[i].name;
        if (strcmp(c, "id") == 0) {
            rc |= put_uuid(rs, json_string_value(json_object_get(t, "id")));
        } else if (strcmp(c, "flags") == 0) {
            static const char *const compound[] = {"compound"};
            static const char *const counter[] = {"compound", "counter"};
            int is_counter = json_is_true(json_object_get(t, "counter"));
            rc |= put_texts(rs, is_counter ? counter : compound, is_counter ? 2 : 1);
        } else if (strcmp(c, "extensions") == 0) {
            json_t *none = json_object();
            rc |= put_text_map(rs, none);
            json_decref(none);
        } else {
            rc |= put_option(rs, &tables_cols[i], json_object_get(opts, c));
        }
    }
    rs->nrows++;
    return rc;
}

static int fill_tables(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)v;
    return each_table(r, rs, table_row);
}

static const vcol columns_cols[] = {
    {"keyspace_name", &t_text},     {"table_name", &t_text},
    {"column_name", &t_text},       {"clustering_order", &t_text},
    {"column_name_bytes", &t_blob}, {"kind", &t_text},
    {"position", &t_int},           {"type", &t_text},
};

static int by_column_name(const void *a, const void *b)
{
    return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "name")),
                  json_string_value(json_object_get(*(json_t *const *)b, "name")));
}

/* A table's columns as system_schema.columns keeps them: clustered by column_name. */
static int column_rows(cql_rows *rs, const char *ks, const char *name, json_t *t)
{
    json_t *all = json_object_get(t, "columns");
    size_t n = json_array_size(all);
    json_t **sorted = calloc(n + 1, sizeof *sorted);
    if (sorted == NULL) return -1;
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(all, i);
    qsort(sorted, n, sizeof *sorted, by_column_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *col = sorted[i];
        const char *cn = json_string_value(json_object_get(col, "name"));
        rc |= put_text(rs, ks);
        rc |= put_text(rs, name);
        rc |= put_text(rs, cn);
        rc |= put_text(rs, json_string_value(json_object_get(col, "order")));
        rc |= cql_rows_put(rs, cn, (int32_t)strlen(cn));
        rc |= put_text(rs, json_string_value(json_object_get(col, "kind")));
        rc |= put_int(rs, (int32_t)json_integer_value(json_object_get(col, "position")));
        rc |= put_text(rs, json_string_value(json_object_get(col, "type")));
        rs->nrows++;
    }
    free(sorted);
    return rc;
}

static int fill_columns(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)v;
    if (each_table(r, rs, column_rows) != 0) return -1;
    /* a view's columns are listed under its name */
    cql_state *st = cql_state_of(r->call);
    if (st == NULL) return -1;
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    const char *ksname, *vname;
    json_t *ks, *view;
    json_object_foreach(json_object_get(st->schema->doc, "keyspaces"), ksname, ks)
    {
        json_object_foreach(json_object_get(ks, "views"), vname, view)
        {
            if (rc == 0) rc = column_rows(rs, ksname, vname, view);
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc ? cql_fail(r->call, CQL_ERR_SERVER, "out of memory") : 0;
}

static const vcol dropped_cols[] = {
    {"keyspace_name", &t_text},     {"table_name", &t_text}, {"column_name", &t_text},
    {"dropped_time", &t_timestamp}, {"kind", &t_text},       {"type", &t_text},
};

static int dropped_rows(cql_rows *rs, const char *ks, const char *name, json_t *t)
{
    const char *cn;
    json_t *d;
    int rc = 0;
    json_object_foreach(json_object_get(t, "dropped"), cn, d)
    {
        rc |= put_text(rs, ks);
        rc |= put_text(rs, name);
        rc |= put_text(rs, cn);
        rc |= put_bigint(rs, (int64_t)json_integer_value(json_object_get(d, "time")) / 1000);
        rc |= put_text(rs, json_string_value(json_object_get(d, "kind")));
        rc |= put_text(rs, json_string_value(json_object_get(d, "type")));
        rs->nrows++;
    }
    return rc;
}

static int fill_dropped(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)v;
    return each_table(r, rs, dropped_rows);
}

static const vcol types_cols[] = {
    {"keyspace_name", &t_text},
    {"type_name", &t_text},
    {"field_names", &t_list_text},
    {"field_types", &t_list_text},
};

static int fill_types(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)v;
    cql_state *st = cql_state_of(r->call);
    if (st == NULL) return -1;
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    const char *ksname, *tname;
    json_t *ks, *t;
    json_object_foreach(json_object_get(st->schema->doc, "keyspaces"), ksname, ks)
    {
        json_object_foreach(json_object_get(ks, "types"), tname, t)
        {
            rc |= put_text(rs, ksname);
            rc |= put_text(rs, tname);
            rc |= put_text_array(rs, json_object_get(t, "fields"));
            rc |= put_text_array(rs, json_object_get(t, "types"));
            rs->nrows++;
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc ? cql_fail(r->call, CQL_ERR_SERVER, "out of memory") : 0;
}

/* The schema tables that hold nothing until their statements exist here: functions and
 * aggregates (no CREATE FUNCTION), triggers; indexes and views are made by their own
 * statements. */
static const vcol functions_cols[] = {
    {"keyspace_name", &t_text},
    {"function_name", &t_text},
    {"argument_types", &t_list_text},
    {"argument_names", &t_list_text},
    {"body", &t_text},
    {"called_on_null_input", &t_bool},
    {"language", &t_text},
    {"return_type", &t_text},
};
static const vcol aggregates_cols[] = {
    {"keyspace_name", &t_text}, {"aggregate_name", &t_text}, {"argument_types", &t_list_text},
    {"final_func", &t_text},    {"initcond", &t_text},       {"return_type", &t_text},
    {"state_func", &t_text},    {"state_type", &t_text},
};
static const vcol indexes_cols[] = {
    {"keyspace_name", &t_text}, {"table_name", &t_text},  {"index_name", &t_text},
    {"kind", &t_text},          {"options", &t_map_text},
};
static int index_rows(cql_rows *rs, const char *ks, const char *name, json_t *t)
{
    const char *iname;
    json_t *iv;
    int rc = 0;
    json_object_foreach(json_object_get(t, "indexes"), iname, iv)
    {
        json_t *opts = json_pack("{s:O}", "target", json_object_get(iv, "target"));
        rc |= put_text(rs, ks);
        rc |= put_text(rs, name);
        rc |= put_text(rs, iname);
        rc |= put_text(rs, json_string_value(json_object_get(iv, "kind")));
        rc |= put_text_map(rs, opts);
        json_decref(opts);
        rs->nrows++;
    }
    return rc;
}

static int fill_indexes(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)v;
    return each_table(r, rs, index_rows);
}

static const vcol views_cols[] = {
    {"keyspace_name", &t_text},
    {"view_name", &t_text},
    {"additional_write_policy", &t_text},
    {"base_table_id", &t_uuid},
    {"base_table_name", &t_text},
    {"bloom_filter_fp_chance", &t_double},
    {"caching", &t_map_text},
    {"cdc", &t_bool},
    {"comment", &t_text},
    {"compaction", &t_map_text},
    {"compression", &t_map_text},
    {"crc_check_chance", &t_double},
    {"default_time_to_live", &t_int},
    {"extensions", &t_map_text_blob},
    {"gc_grace_seconds", &t_int},
    {"id", &t_uuid},
    {"include_all_columns", &t_bool},
    {"max_index_interval", &t_int},
    {"memtable", &t_text},
    {"memtable_flush_period_in_ms", &t_int},
    {"min_index_interval", &t_int},
    {"read_repair", &t_text},
    {"speculative_retry", &t_text},
    {"where_clause", &t_text},
};
/* system."IndexInfo": a row per secondary index whose engine index is built, its
 * table_name the keyspace's name (as Cassandra's is), its value null. */
static const vcol index_info_cols[] = {
    {"table_name", &t_text}, {"index_name", &t_text}, {"value", &t_blob}};
static int fill_index_info(cql_run *r, const vtab *v, cql_rows *rs)
{
    (void)v;
    cql_state *st = cql_state_of(r->call);
    if (st == NULL) return -1;
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    const char *ksname, *tname, *iname;
    json_t *ks, *t, *iv;
    json_object_foreach(json_object_get(st->schema->doc, "keyspaces"), ksname, ks)
    {
        json_object_foreach(json_object_get(ks, "tables"), tname, t)
        {
            json_t *indexes = json_object_get(t, "indexes");
            if (json_object_size(indexes) == 0) continue;
            char full[2 * CQL_NAME_MAX + 2];
            snprintf(full, sizeof full, "%s.%s", ksname, tname);
            struct table *et = catalog_get(r->call->db, full);
            json_object_foreach(indexes, iname, iv)
            {
                char ixname[CQL_NAME_MAX + 8];
                cql_index_engine_name(iname, ixname, sizeof ixname);
                const qr_index *ix = et ? table_index(et, ixname) : NULL;
                if (ix == NULL || ix->creating) continue;
                rc |= put_text(rs, ksname);
                rc |= put_text(rs, iname);
                rc |= cql_rows_put(rs, NULL, -1);
                rs->nrows++;
            }
            if (et) catalog_release(r->call->db, et);
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc ? cql_fail(r->call, CQL_ERR_SERVER, "out of memory") : 0;
}

static int fill_views(cql_run *r, const vtab *v, cql_rows *rs)
{
    cql_state *st = cql_state_of(r->call);
    if (st == NULL) return -1;
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    const char *ksname, *vname;
    json_t *ks, *view;
    json_object_foreach(json_object_get(st->schema->doc, "keyspaces"), ksname, ks)
    {
        json_object_foreach(json_object_get(ks, "views"), vname, view)
        {
            json_t *opts = json_object_get(view, "options");
            for (size_t i = 0; i < v->ncols; i++) {
                const char *cn = v->cols[i].name;
                if (strcmp(cn, "keyspace_name") == 0)
                    rc |= put_text(rs, ksname);
                else if (strcmp(cn, "view_name") == 0)
                    rc |= put_text(rs, vname);
                else if (strcmp(cn, "base_table_id") == 0)
                    rc |= put_uuid(rs, json_string_value(json_object_get(view, "base_id")));
                else if (strcmp(cn, "base_table_name") == 0)
                    rc |= put_text(rs, json_string_value(json_object_get(view, "base")));
                else if (strcmp(cn, "id") == 0)
                    rc |= put_uuid(rs, json_string_value(json_object_get(view, "id")));
                else if (strcmp(cn, "include_all_columns") == 0)
                    rc |= put_bool(rs, json_is_true(json_object_get(view, "include_all")));
                else if (strcmp(cn, "where_clause") == 0)
                    rc |= put_text(rs, json_string_value(json_object_get(view, "where")));
                else if (strcmp(cn, "extensions") == 0) {
                    json_t *none = json_object();
                    rc |= put_text_map(rs, none);
                    json_decref(none);
                } else
                    rc |= put_option(rs, &v->cols[i], json_object_get(opts, cn));
            }
            rs->nrows++;
        }
    }
    pthread_mutex_unlock(&st->lock);
    return rc ? cql_fail(r->call, CQL_ERR_SERVER, "out of memory") : 0;
}

static const vcol triggers_cols[] = {
    {"keyspace_name", &t_text},
    {"table_name", &t_text},
    {"trigger_name", &t_text},
    {"options", &t_map_text},
};
/* system_virtual_schema: Cassandra 4's virtual tables, none here. */
static const vcol vkeyspaces_cols[] = {{"keyspace_name", &t_text}};
static const vcol vtables_cols[] = {
    {"keyspace_name", &t_text}, {"table_name", &t_text}, {"comment", &t_text}};
static const vcol vcolumns_cols[] = {
    {"keyspace_name", &t_text},     {"table_name", &t_text},
    {"column_name", &t_text},       {"clustering_order", &t_text},
    {"column_name_bytes", &t_blob}, {"kind", &t_text},
    {"position", &t_int},           {"type", &t_text},
};

#define VTAB(ks, name, cols, fill)                                                                 \
    {                                                                                              \
        ks, name, cols, sizeof cols / sizeof cols[0], fill                                         \
    }
static const vtab vtabs[] = {
    VTAB("system", "local", local_cols, fill_local),
    VTAB("system", "peers", peers_cols, fill_none),
    VTAB("system", "peers_v2", peers_v2_cols, fill_none),
    VTAB("system", "IndexInfo", index_info_cols, fill_index_info),
    VTAB("system_schema", "keyspaces", keyspaces_cols, fill_keyspaces),
    VTAB("system_schema", "tables", tables_cols, fill_tables),
    VTAB("system_schema", "columns", columns_cols, fill_columns),
    VTAB("system_schema", "dropped_columns", dropped_cols, fill_dropped),
    VTAB("system_schema", "types", types_cols, fill_types),
    VTAB("system_schema", "functions", functions_cols, fill_none),
    VTAB("system_schema", "aggregates", aggregates_cols, fill_none),
    VTAB("system_schema", "indexes", indexes_cols, fill_indexes),
    VTAB("system_schema", "views", views_cols, fill_views),
    VTAB("system_schema", "triggers", triggers_cols, fill_none),
    VTAB("system_virtual_schema", "keyspaces", vkeyspaces_cols, fill_none),
    VTAB("system_virtual_schema", "tables", vtables_cols, fill_none),
    VTAB("system_virtual_schema", "columns", vcolumns_cols, fill_none),
};
#define NVTABS (sizeof vtabs / sizeof vtabs[0])

static const char *const system_keyspaces[] = {"system",        "system_schema",
                                               "system_auth",   "system_distributed",
                                               "system_traces", "system_virtual_schema"};

int cql_system_keyspace(const char *ks)
{
    for (size_t i = 0; i < sizeof system_keyspaces / sizeof system_keyspaces[0]; i++)
        if (strcmp(ks, system_keyspaces[i]) == 0) return 1;
    return 0;
}

const char *cql_system_keyspace_at(size_t i)
{
    return i < sizeof system_keyspaces / sizeof system_keyspaces[0] ? system_keyspaces[i] : NULL;
}

int cql_system_keyspace_replication(const char *ks, json_t **replication)
{
    *replication = NULL;
    for (size_t i = 0; i < NSYSTEM_KS; i++) {
        if (strcmp(system_ks[i].name, ks) != 0) continue;
        *replication = json_pack("{s:s}", "class", system_ks[i].strategy);
        if (*replication && system_ks[i].rf)
            json_object_set_new(*replication, "replication_factor", json_string(system_ks[i].rf));
    }
    return 1;
}

const char *cql_system_table_at(size_t i, const char **ks)
{
    if (i >= NVTABS) return NULL;
    *ks = vtabs[i].ks;
    return vtabs[i].name;
}

/* ---- SELECT of a virtual table ---- */

/* The bytes of one term for column col: a bind marker's value, or a literal of a text,
 * int or boolean column. 1 with the bytes in out (or *null), 0 with the error set. */
static int term_bytes(cql_run *r, const vcol *col, const cql_expr *e, buf *out, int *null)
{
    *null = 0;
    if (e->kind == CQL_E_BIND) {
        cql_value v;
        if (cql_bound(r, e, &v) != 1) return 0;
        if (v.len < 0) {
            *null = 1;
            return 1;
        }
        buf_append(out, v.p, (size_t)v.len);
        return 1;
    }
    if (e->kind == CQL_E_NULL) {
        *null = 1;
        return 1;
    }
    if (col->type->id == CQL_TYPE_VARCHAR && e->kind == CQL_E_STRING) {
        buf_puts(out, e->text);
        return 1;
    }
    if (col->type->id == CQL_TYPE_INT && e->kind == CQL_E_INTEGER) {
        char *end;
        long long v = strtoll(e->text, &end, 10);
        if (*end == '\0' && v >= INT32_MIN && v <= INT32_MAX) {
            uint8_t b[4];
            cql_int_encode((int32_t)v, b);
            buf_append(out, b, 4);
            return 1;
        }
    }
    if (col->type->id == CQL_TYPE_BOOLEAN && e->kind == CQL_E_BOOLEAN) {
        buf_putc(out, strcmp(e->text, "true") == 0);
        return 1;
    }
    if (col->type->id == CQL_TYPE_INET && e->kind == CQL_E_STRING) {
        uint8_t b[16];
        if (inet_pton(AF_INET, e->text, b) == 1) return buf_append(out, b, 4) == 0;
        if (inet_pton(AF_INET6, e->text, b) == 1) return buf_append(out, b, 16) == 0;
    }
    char *text = cql_print_expr(e);
    cql_fail(r->call, CQL_ERR_INVALID, "Invalid constant (%s) for \"%s\" of type %s",
             text ? text : "?", col->name,
             cql_type_name(col->type->id) ? cql_type_name(col->type->id) : "collection");
    free(text);
    return 0;
}

static int find_col(const vtab *v, const char *name)
{
    for (size_t i = 0; i < v->ncols; i++)
        if (strcmp(v->cols[i].name, name) == 0) return (int)i;
    return -1;
}

/* Adds a row (its columns' values vals, has) to each aggregate of a selection. 0, or -1
 * with the call's error set. */
static int feed_aggregates(cql_run *r, const cql_tinfo *vt, cql_fnagg *const *aggs, size_t n,
                           const buf *vals, const int8_t *has)
{
    for (size_t i = 0; i < n; i++) {
        cql_fnagg *a = aggs[i];
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        buf v;
        buf_init(&v, 0);
        int got = CQLVAL_OK;
        const uint8_t *p = (const uint8_t *)"";
        int32_t len = 0;
        if (a->on_fn && a->fn.kind) {
            got = cql_fnsel_value(r, vt, &a->fn, vals, has, NULL, &v);
            p = (const uint8_t *)(v.data ? v.data : "");
            len = got == CQLVAL_OK ? (int32_t)v.len : CQL_NULL;
        } else if (a->col) {
            size_t ci = (size_t)(a->col - vt->cols);
            p = (const uint8_t *)(vals[ci].data ? vals[ci].data : "");
            len = a->cellfn ? CQL_NULL : has[ci] ? (int32_t)vals[ci].len : CQL_NULL;
        }
        int rc = got == CQLVAL_ERROR                         ? -1
                 : cqlagg_add(&a->state, p, len, &perr) != 0 ? cql_fail_parsed(r->call, &perr)
                                                             : 0;
        buf_free(&v);
        if (rc) return -1;
    }
    return 0;
}

/* One row's values: each column's [bytes] at p[i], length len[i] (-1: null). */
typedef struct vrow {
    const uint8_t **p;
    int32_t *len;
} vrow;

static int row_matches(const vrow *row, const int *rel_col, const cql_where *w, buf *wanted,
                       const size_t *nwanted, const int8_t *wanted_null)
{
    size_t k = 0;
    for (size_t i = 0; i < w->n; i++) {
        int col = rel_col[i];
        int any = 0;
        for (size_t j = 0; j < nwanted[i]; j++, k++) {
            if (wanted_null[k]) {
                any |= row->len[col] < 0;
            } else if (row->len[col] >= 0 && (size_t)row->len[col] == wanted[k].len &&
                       memcmp(row->p[col], wanted[k].data ? wanted[k].data : "", wanted[k].len) ==
                           0) {
                any = 1;
            }
        }
        if (!any) return 0;
    }
    return 1;
}

/* One row of the answer: each selector's value, a column of row or a computed one over
 * vals. 0, -1 with the error set, or 1 when memory ran out. */
static int put_selected(cql_run *r, cql_tinfo *vt, const cql_fnsel *computed, buf *vals,
                        int8_t *has, const int *pick, size_t npick, const vrow *row, cql_rows *out)
{
    for (size_t i = 0; i < npick; i++) {
        if (pick[i] >= 0) {
            if (cql_rows_put(out, row->p[pick[i]], row->len[pick[i]]) != 0) return 1;
            continue;
        }
        buf val;
        buf_init(&val, 0);
        int got = cql_fnsel_value(r, vt, &computed[i], vals, has, NULL, &val);
        int put = got == CQLVAL_ERROR ? 0
                                      : cql_rows_put(out, val.data ? val.data : "",
                                                     got == CQLVAL_OK ? (int32_t)val.len : -1);
        buf_free(&val);
        if (got == CQLVAL_ERROR) return -1;
        if (put != 0) return 1;
    }
    out->nrows++;
    return 0;
}

static int vtab_select(cql_run *r, const vtab *v, const cql_stmt *s)
{
    cql_call *c = r->call;
    const cql_select *sel = &s->u.select;
    int rc = -1;
    cql_rows all, out;
    cql_rows_init(&all, v->ks, v->name);
    cql_rows_init(&out, v->ks, v->name);
    int *pick = NULL, *rel_col = NULL;
    size_t npick = 0, nterms = 0;
    buf *wanted = NULL;
    size_t *nwanted = NULL;
    int8_t *wanted_null = NULL;
    vrow row = {0};
    int64_t limit = -1;
#define MAX_VAGGS 16
    cql_fnagg *aggs[MAX_VAGGS]; /* the aggregates the selectors hold */
    size_t naggs = 0;
    cql_rows first; /* with aggregates: the first matching row, for the other selectors */
    cql_rows_init(&first, v->ks, v->name);
    cql_fnsel *computed = NULL; /* per selector, for those that are not a column */
    cql_tinfo vt;               /* the table, for resolving them */
    buf *vals = NULL;           /* a row's columns, viewing its values */
    int8_t *has = NULL;
    memset(&vt, 0, sizeof vt);

    if (sel->json || sel->distinct || sel->ngroup || sel->norder) {
        cql_fail(c, CQL_ERR_INVALID, "%s.%s answers plain selections only", v->ks, v->name);
        goto done;
    }
    /* the selection */
    npick = sel->nsel ? sel->nsel : v->ncols;
    pick = calloc(npick ? npick : 1, sizeof *pick);
    if (pick == NULL) goto oom;
    for (size_t i = 0; i < npick; i++) {
        if (!sel->nsel) {
            pick[i] = (int)i;
        } else {
            const cql_expr *e = sel->sel[i].expr;
            if (e->kind != CQL_E_COLUMN) {
                /* a computed selector: now(), toTimestamp(now()), (int)1, ... */
                char *fname = NULL;
                pick[i] = -1;
                if (computed == NULL) {
                    computed = calloc(npick, sizeof *computed);
                    vals = calloc(v->ncols, sizeof *vals);
                    has = calloc(v->ncols, 1);
                    if (computed == NULL || vals == NULL || has == NULL) goto oom;
                    arena_init(&vt.arena, 0);
                    snprintf(vt.ks, sizeof vt.ks, "%s", v->ks);
                    snprintf(vt.name, sizeof vt.name, "%s", v->name);
                    cql_system_tinfo(v->ks, v->name, &vt);
                }
                if (cql_fnsel_resolve(c, &vt, e, &computed[i], &fname) != 0) goto done;
                const char *cname = sel->sel[i].alias ? sel->sel[i].alias
                                                      : arena_strndup(&vt.arena, fname ? fname : "",
                                                                      fname ? strlen(fname) : 0);
                free(fname);
                if (cname == NULL || cql_rows_column(&out, cname, &computed[i].ret->wire) != 0)
                    goto oom;
                continue;
            }
            pick[i] = find_col(v, e->text);
            if (pick[i] < 0) {
                cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s", e->text,
                         v->ks, v->name);
                goto done;
            }
        }
        const char *name =
            sel->nsel && sel->sel[i].alias ? sel->sel[i].alias : v->cols[pick[i]].name;
        if (cql_rows_column(&out, name, v->cols[pick[i]].type) != 0) goto oom;
    }
    /* aggregates (count(*), max(position), ...): one row, over every matching row */
    for (size_t i = 0; computed && i < npick; i++) {
        int plain = 0;
        if (pick[i] < 0) {
            size_t n = cql_fnsel_aggregates(&computed[i], aggs + naggs,
                                            MAX_VAGGS > naggs ? MAX_VAGGS - naggs : 0, &plain);
            if (naggs + n > MAX_VAGGS) {
                cql_fail(c, CQL_ERR_INVALID, "%s.%s answers at most %d aggregates", v->ks, v->name,
                         MAX_VAGGS);
                goto done;
            }
            naggs += n;
        }
    }
    /* the restrictions: each an = or IN on a column */
    rel_col = calloc(sel->where.n + 1, sizeof *rel_col);
    nwanted = calloc(sel->where.n + 1, sizeof *nwanted);
    if (rel_col == NULL || nwanted == NULL) goto oom;
    for (size_t i = 0; i < sel->where.n; i++) {
        const cql_relation *rel = &sel->where.rels[i];
        if (rel->kind != CQL_REL_COLUMN || (rel->op != CQL_OP_EQ && rel->op != CQL_OP_IN)) {
            cql_fail(c, CQL_ERR_INVALID, "%s.%s is restricted by = and IN only", v->ks, v->name);
            goto done;
        }
        rel_col[i] = find_col(v, rel->columns[0]);
        if (rel_col[i] < 0) {
            cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s", rel->columns[0],
                     v->ks, v->name);
            goto done;
        }
        nwanted[i] = rel->op == CQL_OP_IN ? rel->nvalues : 1; /* none for IN () */
        if (rel->op == CQL_OP_IN && !rel->values && rel->value) {
            cql_fail(c, CQL_ERR_INVALID, "%s.%s takes IN with listed values", v->ks, v->name);
            goto done;
        }
        nterms += nwanted[i];
    }
    wanted = calloc(nterms + 1, sizeof *wanted);
    wanted_null = calloc(nterms + 1, 1);
    if (wanted == NULL || wanted_null == NULL) goto oom;
    for (size_t i = 0, k = 0; i < sel->where.n; i++) {
        const cql_relation *rel = &sel->where.rels[i];
        for (size_t j = 0; j < nwanted[i]; j++, k++) {
            buf_init(&wanted[k], 0);
            const cql_expr *e = rel->op == CQL_OP_IN ? rel->values[j] : rel->value;
            int null;
            if (!term_bytes(r, &v->cols[rel_col[i]], e, &wanted[k], &null)) goto done;
            wanted_null[k] = (int8_t)null;
        }
    }
    if (sel->limit) {
        if (sel->limit->kind == CQL_E_INTEGER) {
            limit = strtoll(sel->limit->text, NULL, 10);
        } else {
            cql_value lv;
            int32_t n32;
            if (cql_bound(r, sel->limit, &lv) != 1) goto done;
            if (cql_int_decode(lv.p, lv.len < 0 ? 0 : (size_t)lv.len, &n32) != 0) {
                cql_fail(c, CQL_ERR_INVALID, "Invalid limit value");
                goto done;
            }
            limit = n32;
        }
        if (limit <= 0) {
            cql_fail(c, CQL_ERR_INVALID, "LIMIT must be strictly positive");
            goto done;
        }
    }
    /* the rows */
    for (size_t i = 0; i < v->ncols; i++)
        if (cql_rows_column(&all, v->cols[i].name, v->cols[i].type) != 0) goto oom;
    if (v->fill(r, v, &all) != 0) goto done;
    row.p = calloc(v->ncols, sizeof *row.p);
    row.len = calloc(v->ncols, sizeof *row.len);
    if (row.p == NULL || row.len == NULL) goto oom;
    cql_reader rd;
    cql_reader_init(&rd, all.data.data, all.data.len, NULL);
    for (uint32_t n = 0; n < all.nrows; n++) {
        for (size_t i = 0; i < v->ncols; i++) {
            cql_value cv;
            cql_read_bytes(&rd, "a row's value", &cv);
            row.p[i] = cv.p;
            row.len[i] = cv.len;
        }
        if (rd.err[0]) break;
        if (!row_matches(&row, rel_col, &sel->where, wanted, nwanted, wanted_null)) continue;
        if (limit >= 0 && (int64_t)out.nrows >= limit) break;
        for (size_t i = 0; computed && i < v->ncols; i++) {
            vals[i].data = (char *)row.p[i];
            vals[i].len = row.len[i] < 0 ? 0 : (size_t)row.len[i];
            has[i] = row.len[i] >= 0;
        }
        if (naggs) {
            if (feed_aggregates(r, &vt, aggs, naggs, vals, has) != 0) goto done;
            if (first.nrows == 0) {
                for (size_t i = 0; i < v->ncols; i++)
                    if (cql_rows_put(&first, row.p[i], row.len[i]) != 0) goto oom;
                first.nrows = 1;
            }
            continue;
        }
        int put = put_selected(r, &vt, computed, vals, has, pick, npick, &row, &out);
        if (put < 0) goto done;
        if (put > 0) goto oom;
    }
    if (naggs && !rd.err[0]) {
        /* the one row: the aggregates' results, the other selectors of the first row */
        cql_reader fr;
        cql_reader_init(&fr, first.data.data, first.data.len, NULL);
        for (size_t i = 0; i < v->ncols; i++) {
            cql_value cv = {NULL, CQL_NULL};
            if (first.nrows) cql_read_bytes(&fr, "a row's value", &cv);
            row.p[i] = cv.p;
            row.len[i] = cv.len;
            vals[i].data = (char *)cv.p;
            vals[i].len = cv.len < 0 ? 0 : (size_t)cv.len;
            has[i] = cv.len >= 0;
        }
        int put = put_selected(r, &vt, computed, vals, has, pick, npick, &row, &out);
        if (put < 0) goto done;
        if (put > 0) goto oom;
    }
    rc = cql_rows_write(&out, c, NULL, 0);
    goto done;
oom:
    cql_fail(c, CQL_ERR_SERVER, "out of memory");
done:
    if (wanted)
        for (size_t k = 0; k < nterms; k++)
            buf_free(&wanted[k]);
    free(wanted);
    free(wanted_null);
    free(nwanted);
    free(rel_col);
    free(pick);
    for (size_t i = 0; i < naggs; i++)
        cqlagg_free(&aggs[i]->state);
    cql_rows_free(&first);
    if (computed) arena_free(&vt.arena);
    free(computed);
    free(vals);
    free(has);
    free(row.p);
    free(row.len);
    cql_rows_free(&all);
    cql_rows_free(&out);
    return rc;
}

int cql_system_select(cql_run *r, const cql_stmt *s, const char *ks, int *rc)
{
    for (size_t i = 0; i < NVTABS; i++) {
        if (strcmp(vtabs[i].ks, ks) == 0 && strcmp(vtabs[i].name, s->name.name) == 0) {
            *rc = vtab_select(r, &vtabs[i], s);
            return 1;
        }
    }
    if (cql_system_keyspace(ks)) {
        *rc = cql_fail(r->call, CQL_ERR_INVALID, "table %s does not exist", s->name.name);
        return 1;
    }
    return 0;
}

int cql_system_tinfo(const char *ks, const char *name, cql_tinfo *t)
{
    for (size_t i = 0; i < NVTABS; i++) {
        const vtab *v = &vtabs[i];
        if (strcmp(v->ks, ks) != 0 || strcmp(v->name, name) != 0) continue;
        t->system = 1;
        t->ncols = v->ncols;
        t->cols = arena_alloc(&t->arena, (v->ncols + 1) * sizeof *t->cols);
        if (t->cols == NULL) return 0;
        for (size_t k = 0; k < v->ncols; k++) {
            t->cols[k].name = v->cols[k].name;
            t->cols[k].wire = v->cols[k].type;
            /* native columns take functions and aggregates; collections are answered whole */
            t->cols[k].type = v->cols[k].type->n == 0 ? cqltype_native(v->cols[k].type->id) : NULL;
            t->cols[k].kind = k == 0 ? 'p' : 'r';
            t->cols[k].pos = k == 0 ? 0 : -1;
            t->cols[k].dropped_at = INT64_MIN;
        }
        t->npk = 1;
        return 1;
    }
    return 0;
}
