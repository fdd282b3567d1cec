/* exec_ddl.c — the schema statements: CREATE, ALTER and DROP of keyspaces, tables and
 * user types, and TRUNCATE, each changing a copy of the schema document (schema.h) and
 * the engine's tables, then storing it; answered with SCHEMA_CHANGE and the event for
 * the connections registered, with Cassandra 4's messages for what it refuses.
 *
 * Rows are exec_write.c's and exec_select.c's; this file never reads or writes them. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cql/exec_int.h"
#include "cql/types.h"
#include "engine/engine.h"
#include "engine/meta.h"
#include "ops/ops.h"

int cql_schema_changed(cql_call *c, const char *change, const char *target, const char *ks,
                       const char *name)
{
    cql_schema_change sc = {.change = change, .target = target, .keyspace = ks, .name = name};
    buf_reset(&c->body);
    buf_reset(&c->event);
    if (cql_write_schema_change_result(&c->body, &sc) != 0 ||
        cql_write_schema_event(&c->event, &sc) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    c->has_event = 1;
    return 0;
}

/* A statement that changed nothing (IF [NOT] EXISTS): a Void result. */
static int answer_void(cql_call *c)
{
    buf_reset(&c->body);
    if (cql_write_void(&c->body) != 0) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    return 0;
}

/* Cassandra's names: \w+, at most 48 characters. */
static int name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 48) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_') return 0;
    return 1;
}

/* ---- property values ---- */

/* A constant's text (numbers, strings, booleans, words) into a JSON string, NULL for a map. */
static json_t *prop_text(const cql_expr *e)
{
    switch (e->kind) {
    case CQL_E_STRING:
    case CQL_E_INTEGER:
    case CQL_E_FLOAT:
    case CQL_E_BOOLEAN:
    case CQL_E_WORD:
    case CQL_E_UUID:
    case CQL_E_DURATION:
        return json_string(e->text);
    default:
        return NULL;
    }
}

/* A map property ({'class': 'X', 'n': 1}) as an object of strings; NULL if not a map. */
static json_t *prop_map(const cql_expr *e)
{
    if (e->kind != CQL_E_MAP) return NULL;
    json_t *o = json_object();
    for (size_t i = 0; i + 1 < e->nitems; i += 2) {
        json_t *k = prop_text(e->items[i]), *v = prop_text(e->items[i + 1]);
        if (k && v) json_object_set(o, json_string_value(k), v);
        json_decref(k);
        json_decref(v);
    }
    return o;
}

/* ---- keyspaces ---- */

static const char *const strategies[] = {"SimpleStrategy", "NetworkTopologyStrategy",
                                         "LocalStrategy", "EverywhereStrategy",
                                         "OldNetworkTopologyStrategy"};
#define STRATEGY_PREFIX "org.apache.cassandra.locator."

/* The one data centre system.local names. */
#define LOCAL_DATACENTER "datacenter1"

/* Cassandra's checks on a strategy's options: SimpleStrategy takes replication_factor,
 * NetworkTopologyStrategy that or a factor per known data centre; each factor a
 * non-negative integer. Returns 1 with a ConfigurationException set. */
static int replication_options_invalid(cql_call *c, json_t *m, const char *strategy,
                                       const char *ksname)
{
    int simple = strcmp(strategy, "SimpleStrategy") == 0;
    int nts = strcmp(strategy, "NetworkTopologyStrategy") == 0;
    if (nts && json_object_size(m) == 1) {
        cql_fail(c, CQL_ERR_CONFIG, "Configuration for at least one datacenter must be present");
        return 1;
    }
    const char *key;
    json_t *v;
    json_object_foreach(m, key, v)
    {
        if (strcmp(key, "class") == 0) continue;
        int factor_key =
            strcmp(key, "replication_factor") == 0 || (nts && strcmp(key, LOCAL_DATACENTER) == 0);
        if ((simple || nts) && !factor_key) {
            cql_fail(c, CQL_ERR_CONFIG,
                     "Unrecognized strategy option {%s} passed to %s for keyspace %s", key,
                     strategy, ksname);
            return 1;
        }
        if (!factor_key) continue;
        const char *text = json_string_value(v);
        char *end = NULL;
        long n = text ? strtol(text, &end, 10) : -1;
        if (text == NULL || end == text || *end != '\0' || n < 0 || n > 2147483647) {
            cql_fail(c, CQL_ERR_CONFIG,
                     "Replication factor must be non-negative integer; found: %s",
                     text ? text : "(none)");
            return 1;
        }
    }
    return 0;
}

/* Reads WITH replication = {...} AND durable_writes = b into ks (an object), Cassandra's
 * checks on the way. creating: replication is mandatory. */
static int keyspace_props(cql_call *c, const cql_props *p, const char *ksname, json_t *ks,
                          int creating)
{
    int has_repl = 0;
    for (size_t i = 0; i < p->n; i++) {
        const cql_property *pr = &p->items[i];
        if (strcmp(pr->name, "replication") == 0) {
            json_t *m = prop_map(pr->value);
            if (m == NULL)
                return cql_fail(c, CQL_ERR_SYNTAX,
                                "Invalid value for property 'replication'. It should be a map.");
            json_t *cls = json_object_get(m, "class");
            if (cls == NULL) {
                json_decref(m);
                return cql_fail(c, CQL_ERR_CONFIG, "Missing replication strategy class");
            }
            const char *name = json_string_value(cls);
            const char *shortname = strncmp(name, STRATEGY_PREFIX, strlen(STRATEGY_PREFIX)) == 0
                                        ? name + strlen(STRATEGY_PREFIX)
                                        : name;
            int known = 0;
            for (size_t k = 0; k < sizeof strategies / sizeof strategies[0]; k++)
                known |= strcmp(shortname, strategies[k]) == 0;
            if (!known) {
                cql_fail(c, CQL_ERR_CONFIG, "Unable to find replication strategy class '%s%s'",
                         name == shortname ? STRATEGY_PREFIX : "", name);
                json_decref(m);
                return -1;
            }
            if (strcmp(shortname, "LocalStrategy") == 0) {
                json_decref(m);
                return cql_fail(c, CQL_ERR_INVALID,
                                "Unable to use given strategy class: LocalStrategy is reserved for "
                                "internal use.");
            }
            if (strcmp(shortname, "SimpleStrategy") == 0 &&
                json_object_get(m, "replication_factor") == NULL) {
                json_decref(m);
                return cql_fail(c, CQL_ERR_CONFIG,
                                "SimpleStrategy requires a replication_factor strategy option.");
            }
            if (replication_options_invalid(c, m, shortname, ksname)) {
                json_decref(m);
                return -1;
            }
            /* NetworkTopologyStrategy spreads replication_factor over the data centres */
            json_t *rf = json_object_get(m, "replication_factor");
            if (strcmp(shortname, "NetworkTopologyStrategy") == 0 && rf) {
                if (json_object_get(m, LOCAL_DATACENTER) == NULL)
                    json_object_set(m, LOCAL_DATACENTER, rf);
                json_object_del(m, "replication_factor");
            }
            char full[256];
            snprintf(full, sizeof full, "%s%s", STRATEGY_PREFIX, shortname);
            json_object_set_new(m, "class", json_string(full));
            json_object_set_new(ks, "replication", m);
            has_repl = 1;
        } else if (strcmp(pr->name, "durable_writes") == 0) {
            const char *t = pr->value->text;
            if (pr->value->kind == CQL_E_MAP || t == NULL ||
                (strcasecmp(t, "true") != 0 && strcasecmp(t, "false") != 0))
                return cql_fail(c, CQL_ERR_SYNTAX,
                                "Invalid boolean value %s for 'durable_writes'. Only 'true' and "
                                "'false' are accepted",
                                t ? t : "(map)");
            json_object_set_new(ks, "durable_writes", json_boolean(strcasecmp(t, "true") == 0));
        } else {
            return cql_fail(c, CQL_ERR_SYNTAX, "Unknown property '%s'", pr->name);
        }
    }
    if (creating && !has_repl)
        return cql_fail(c, CQL_ERR_INVALID, "Missing mandatory option 'replication'");
    return 0;
}

/* Runs change on a copy of the document, stores it, then makes it the schema. */
typedef int (*doc_change_fn)(cql_run *r, const cql_stmt *s, json_t *doc, void *arg);

static int commit_doc(cql_call *c, cql_state *st, json_t *next)
{
    qr_err err;
    err_init(&err);
    cql_schema tmp = {next};
    if (cql_schema_save(c->db, &tmp, &err) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "the schema could not be stored: %s", err.msg);
    json_decref(st->schema->doc);
    st->schema->doc = json_incref(next);
    return 0;
}

static json_t *keyspaces_of(json_t *doc)
{
    return json_object_get(doc, "keyspaces");
}

static int create_keyspace(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const char *name = s->name.name;
    if (!name_valid(name))
        return cql_fail(c, CQL_ERR_INVALID,
                        "Keyspace name must not be empty, more than 48 characters long, or "
                        "contain non-alphanumeric-underscore characters (got \"%s\")",
                        name);
    if (cql_system_keyspace(name) || cql_schema_keyspace(st->schema, name)) {
        if (s->if_not_exists) return answer_void(c);
        snprintf(c->err_keyspace, sizeof c->err_keyspace, "%s", name);
        c->err_name[0] = '\0';
        return cql_fail(c, CQL_ERR_ALREADY_EXISTS, "Cannot add existing keyspace \"%s\"", name);
    }
    json_t *ks = json_pack("{s:b, s:{}, s:{}}", "durable_writes", 1, "tables", "types");
    if (keyspace_props(c, &s->u.keyspace.props, name, ks, 1) != 0) {
        json_decref(ks);
        return -1;
    }
    json_t *next = json_deep_copy(st->schema->doc);
    json_object_set_new(keyspaces_of(next), name, ks);
    int rc = commit_doc(c, st, next);
    json_decref(next);
    return rc ? rc : cql_schema_changed(c, "CREATED", "KEYSPACE", name, NULL);
}

static int alter_keyspace(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const char *name = s->name.name;
    if (cql_system_keyspace(name))
        return cql_fail(c, CQL_ERR_UNAUTHORIZED, "Cannot alter system keyspace %s", name);
    if (!cql_schema_keyspace(st->schema, name)) {
        if (s->if_exists) return answer_void(c);
        return cql_fail(c, CQL_ERR_INVALID, "Keyspace '%s' doesn't exist", name);
    }
    json_t *next = json_deep_copy(st->schema->doc);
    json_t *ks = json_object_get(keyspaces_of(next), name);
    int rc = keyspace_props(c, &s->u.keyspace.props, name, ks, 0);
    if (rc == 0) rc = commit_doc(c, st, next);
    json_decref(next);
    return rc ? rc : cql_schema_changed(c, "UPDATED", "KEYSPACE", name, NULL);
}

/* Removes the engine table of ks.name (nothing when there is none). */
static int drop_engine_table(cql_call *c, const char *ks, const char *name)
{
    char full[128];
    snprintf(full, sizeof full, "%s.%s", ks, name);
    table *t = catalog_get(c->db, full);
    if (t == NULL) return 0;
    qr_err err;
    err_init(&err);
    int rc = catalog_delete(c->db, t, &err);
    if (rc == 0) meta_setting_forget_all(c->db, t); /* what the table kept beside it */
    catalog_release(c->db, t);
    if (rc) return cql_fail(c, CQL_ERR_SERVER, "table %s could not be dropped: %s", full, err.msg);
    return 0;
}

static int drop_keyspace(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const char *name = s->name.name;
    if (cql_system_keyspace(name))
        return cql_fail(c, CQL_ERR_UNAUTHORIZED, "Cannot DROP <keyspace %s>", name);
    json_t *ks = cql_schema_keyspace(st->schema, name);
    if (ks == NULL) {
        if (s->if_exists) return answer_void(c);
        return cql_fail(c, CQL_ERR_INVALID, "Keyspace '%s' doesn't exist", name);
    }
    json_t *old = json_incref(json_object_get(ks, "tables"));
    json_t *next = json_deep_copy(st->schema->doc);
    json_object_del(keyspaces_of(next), name);
    int rc = commit_doc(c, st, next);
    json_decref(next);
    if (rc) {
        json_decref(old);
        return rc;
    }
    /* the tables' rows go once the schema no longer names them */
    const char *tname;
    json_t *tv;
    json_object_foreach(old, tname, tv)
    {
        if (drop_engine_table(c, name, tname) != 0) break;
    }
    json_decref(old);
    if (c->failed) return -1;
    return cql_schema_changed(c, "DROPPED", "KEYSPACE", name, NULL);
}

/* ---- tables ---- */

/* The table options Cassandra 4.1 keeps, with their defaults; kind 'n' a number, 'i' an
 * integer, 't' text, 'b' boolean, 'm' a map of text. */
typedef struct table_opt {
    const char *name;
    char kind;
    const char *dflt; /* JSON text */
} table_opt;
static const table_opt table_opts[] = {
    {"additional_write_policy", 't', "\"99p\""},
    {"bloom_filter_fp_chance", 'n', "0.01"},
    {"caching", 'm', "{\"keys\": \"ALL\", \"rows_per_partition\": \"NONE\"}"},
    {"cdc", 'b', "false"},
    {"comment", 't', "\"\""},
    {"compaction", 'm',
     "{\"class\": \"org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy\", "
     "\"max_threshold\": \"32\", \"min_threshold\": \"4\"}"},
    {"compression", 'm',
     "{\"chunk_length_in_kb\": \"16\", \"class\": "
     "\"org.apache.cassandra.io.compress.LZ4Compressor\"}"},
    {"crc_check_chance", 'n', "1.0"},
    {"default_time_to_live", 'i', "0"},
    {"gc_grace_seconds", 'i', "864000"},
    {"max_index_interval", 'i', "2048"},
    {"memtable", 't', "\"default\""},
    {"memtable_flush_period_in_ms", 'i', "0"},
    {"min_index_interval", 'i', "128"},
    {"read_repair", 't', "\"BLOCKING\""},
    {"speculative_retry", 't', "\"99p\""},
};
#define NTABLE_OPTS (sizeof table_opts / sizeof table_opts[0])

static json_t *default_options(void)
{
    json_t *o = json_object();
    for (size_t i = 0; i < NTABLE_OPTS; i++)
        json_object_set_new(o, table_opts[i].name,
                            json_loads(table_opts[i].dflt, JSON_DECODE_ANY, NULL));
    return o;
}

/* Cassandra's range checks on the numeric options (TableParams.validate), as
 * ConfigurationException. Returns 1 with the call's error set. */
static int numeric_option_out_of_range(cql_call *c, const table_opt *o, double d, const char *text)
{
    /* the smallest false-positive chance a bloom filter of 20 buckets per key reaches */
    const double min_fp_chance = 6.71e-05;
    if (strcmp(o->name, "bloom_filter_fp_chance") == 0 && (d <= min_fp_chance || d > 1.0)) {
        cql_fail(c, CQL_ERR_CONFIG,
                 "bloom_filter_fp_chance must be larger than %g and less than or equal to 1.0 "
                 "(got %s)",
                 min_fp_chance, text);
        return 1;
    }
    if (strcmp(o->name, "crc_check_chance") == 0 && (d < 0.0 || d > 1.0)) {
        cql_fail(c, CQL_ERR_CONFIG, "crc_check_chance should be between 0.0 and 1.0");
        return 1;
    }
    if (o->kind == 'i' && d < 0) {
        cql_fail(c, CQL_ERR_CONFIG, "%s must be greater than or equal to 0 (got %s)", o->name,
                 text);
        return 1;
    }
    if (strcmp(o->name, "min_index_interval") == 0 && d < 1) {
        cql_fail(c, CQL_ERR_CONFIG,
                 "min_index_interval must be greater than or equal to 1 (got %s)", text);
        return 1;
    }
    return 0;
}

static const char *const compaction_classes[] = {
    "SizeTieredCompactionStrategy", "LeveledCompactionStrategy", "TimeWindowCompactionStrategy",
    "DateTieredCompactionStrategy", "UnifiedCompactionStrategy"};
static const char *const compressor_classes[] = {
    "LZ4Compressor", "SnappyCompressor", "DeflateCompressor", "ZstdCompressor", "NoopCompressor"};

/* Expands a short class name (or checks a full one) against Cassandra's package and list;
 * writes the full name to out. Returns 0 if it names a known class. */
static int resolve_class(const char *name, const char *package, const char *const *known,
                         size_t nknown, char *out, size_t outlen)
{
    size_t plen = strlen(package);
    const char *shortname = strncmp(name, package, plen) == 0 ? name + plen : name;
    snprintf(out, outlen, "%s%s", strchr(shortname, '.') ? "" : package, shortname);
    for (size_t i = 0; i < nknown; i++)
        if (strcmp(shortname, known[i]) == 0) return 0;
    return -1;
}

/* caching = {'keys': ALL|NONE, 'rows_per_partition': ALL|NONE|n}, Cassandra's checks. */
static int caching_invalid(cql_call *c, json_t *m)
{
    const char *key;
    json_t *v;
    json_object_foreach(m, key, v)
    {
        const char *text = json_string_value(v) ? json_string_value(v) : "";
        int all_none = strcasecmp(text, "ALL") == 0 || strcasecmp(text, "NONE") == 0;
        if (strcmp(key, "keys") == 0) {
            if (!all_none)
                return cql_fail(c, CQL_ERR_CONFIG,
                                "Invalid value '%s' for caching sub-option 'keys': only 'ALL' and "
                                "'NONE' are supported",
                                text);
        } else if (strcmp(key, "rows_per_partition") == 0) {
            char *end = NULL;
            long n = strtol(text, &end, 10);
            if (!all_none && (end == text || *end != '\0' || n <= 0))
                return cql_fail(c, CQL_ERR_CONFIG,
                                "Invalid value '%s' for caching sub-option 'rows_per_partition': "
                                "only 'ALL', 'NONE' or a positive integer are supported",
                                text);
        } else {
            return cql_fail(c, CQL_ERR_CONFIG,
                            "Invalid caching sub-options [%s]: only 'keys' and "
                            "'rows_per_partition' are allowed",
                            key);
        }
    }
    return 0;
}

/* The sub-options a compaction strategy's validateOptions takes: AbstractCompactionStrategy's
 * and SizeTieredCompactionStrategyOptions' for each, then the strategy's own. */
static const char *const compaction_common_opts[] = {"class",
                                                     "enabled",
                                                     "min_threshold",
                                                     "max_threshold",
                                                     "tombstone_threshold",
                                                     "tombstone_compaction_interval",
                                                     "unchecked_tombstone_compaction",
                                                     "log_all",
                                                     "only_purge_repaired_tombstones",
                                                     "provide_overlapping_tombstones",
                                                     "min_sstable_size",
                                                     "bucket_low",
                                                     "bucket_high",
                                                     NULL};
static const struct {
    const char *strategy;
    const char *const opts[6];
} compaction_own_opts[] = {
    {"SizeTieredCompactionStrategy", {NULL}},
    {"LeveledCompactionStrategy",
     {"sstable_size_in_mb", "fanout_size", "single_sstable_uplevel", NULL}},
    {"TimeWindowCompactionStrategy",
     {"compaction_window_unit", "compaction_window_size", "timestamp_resolution",
      "expired_sstable_check_frequency_seconds", "unsafe_aggressive_sstable_expiration", NULL}},
};

static int listed(const char *const *names, const char *name)
{
    for (size_t i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

/* CompactionParams.validate: sub-options the strategy (cls, its full class name) does not
 * take are refused. 1 with a ConfigurationException set; 0 for the others' strategies,
 * whose options are kept as given. */
static int compaction_options_unknown(cql_call *c, json_t *m, const char *cls)
{
    const char *dot = strrchr(cls, '.');
    const char *simple = dot ? dot + 1 : cls;
    const char *const *own = NULL;
    for (size_t i = 0; i < sizeof compaction_own_opts / sizeof compaction_own_opts[0]; i++)
        if (strcmp(compaction_own_opts[i].strategy, simple) == 0) own = compaction_own_opts[i].opts;
    if (own == NULL) return 0;
    buf unknown;
    buf_init(&unknown, 1024);
    const char *key;
    json_t *v;
    json_object_foreach(m, key, v)
    {
        if (listed(compaction_common_opts, key) || listed(own, key)) continue;
        buf_printf(&unknown, "%s%s", unknown.len ? ", " : "", key);
    }
    int bad = unknown.len > 0;
    if (bad)
        cql_fail(c, CQL_ERR_CONFIG, "Properties specified [%s] are not understood by %s",
                 unknown.data, simple);
    buf_free(&unknown);
    return bad;
}

/* Java's Boolean.parseBoolean: "true" in any case, else false. */
static int java_true(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && strcasecmp(s, "true") == 0;
}

/* compression = {...} as CompressionParams.fromMap reads it and asMap stores it: disabled
 * as {'enabled': 'false'} alone; else the class named in full, the chunk length in kb
 * (chunk_length_kb its old name) and min_compress_ratio as a Java double, when not 0. */
static int normalise_compression(cql_call *c, json_t *m)
{
    json_t *enabled = json_object_get(m, "enabled");
    json_t *cls = json_object_get(m, "class");
    json_t *old_cls = json_object_get(m, "sstable_compression");
    if (json_object_size(m) == 0) return 0;
    if ((enabled == NULL || java_true(enabled)) && cls == NULL && old_cls == NULL)
        return cql_fail(c, CQL_ERR_CONFIG,
                        "Missing sub-option 'class' for the 'compression' "
                        "option.");
    if (enabled && !java_true(enabled)) {
        if (json_object_size(m) > 1)
            return cql_fail(c, CQL_ERR_CONFIG,
                            "If the 'enabled' option is set to false no other "
                            "options must be specified");
        json_object_set_new(m, "enabled", json_string("false"));
        return 0;
    }
    if (cls && old_cls)
        return cql_fail(c, CQL_ERR_CONFIG,
                        "The 'sstable_compression' option must not be used if the compression "
                        "algorithm is already specified by the 'class' option");
    const char *name = json_string_value(cls ? cls : old_cls);
    if (cls && (name == NULL || *name == '\0'))
        return cql_fail(c, CQL_ERR_CONFIG,
                        "The 'class' option must not be empty. To disable "
                        "compression use 'enabled' : false");
    json_t *chunk = json_object_get(m, "chunk_length_in_kb");
    json_t *old_chunk = json_object_get(m, "chunk_length_kb");
    if (chunk && old_chunk)
        return cql_fail(c, CQL_ERR_CONFIG,
                        "The 'chunk_length_kb' option must not be used if the chunk length is "
                        "already specified by the 'chunk_length_in_kb' option");
    long kb = 16;
    if (chunk || old_chunk) {
        const char *text = json_string_value(chunk ? chunk : old_chunk);
        char *end = NULL;
        errno = 0;
        kb = text ? strtol(text, &end, 10) : 0;
        if (text == NULL || end == text || *end != '\0' || errno || kb < INT32_MIN ||
            kb > INT32_MAX)
            return cql_fail(c, CQL_ERR_CONFIG, "Invalid value for chunk_length_in_kb: %s",
                            text ? text : "(none)");
        if (kb > INT32_MAX / 1024)
            return cql_fail(c, CQL_ERR_CONFIG, "Value of chunk_length_in_kb is too large (%ld)",
                            kb);
        if (kb <= 0)
            return cql_fail(c, CQL_ERR_CONFIG, "Invalid negative or null chunk_length_in_kb");
        if ((kb & (kb - 1)) != 0)
            return cql_fail(c, CQL_ERR_CONFIG, "chunk_length_in_kb must be a power of 2");
    }
    double ratio = 0;
    json_t *ratio_v = json_object_get(m, "min_compress_ratio");
    if (ratio_v) {
        const char *text = json_string_value(ratio_v);
        char *end = NULL;
        ratio = text ? strtod(text, &end) : 0;
        if (text == NULL || end == text || *end != '\0' || isnan(ratio))
            return cql_fail(c, CQL_ERR_CONFIG, "Invalid value for min_compress_ratio: %s",
                            text ? text : "(none)");
        /* calcMaxCompressedLength: ceil(min(chunk / ratio, Integer.MAX_VALUE)) */
        double max_len = ratio == 0 ? INFINITY : (double)(kb * 1024) / ratio;
        if (max_len < 0) return cql_fail(c, CQL_ERR_CONFIG, "Invalid negative min_compress_ratio");
        if (max_len > (double)(kb * 1024) && max_len < (double)INT32_MAX)
            return cql_fail(c, CQL_ERR_CONFIG,
                            "min_compress_ratio can either be 0 or greater than or equal to 1");
    }
    char full[256];
    if (resolve_class(name, "org.apache.cassandra.io.compress.", compressor_classes,
                      sizeof compressor_classes / sizeof compressor_classes[0], full,
                      sizeof full) != 0)
        return cql_fail(c, CQL_ERR_CONFIG, "Could not create Compression for type %s", full);
    json_object_del(m, "sstable_compression");
    json_object_del(m, "chunk_length_kb");
    json_object_del(m, "enabled");
    json_object_set_new(m, "class", json_string(full));
    char text[64];
    snprintf(text, sizeof text, "%ld", kb);
    json_object_set_new(m, "chunk_length_in_kb", json_string(text));
    json_object_del(m, "min_compress_ratio");
    if (ratio != 0) {
        /* String.valueOf(double): 2 is stored as 2.0 */
        uint8_t be[8];
        uint64_t bits;
        memcpy(&bits, &ratio, 8);
        for (int i = 0; i < 8; i++)
            be[i] = (uint8_t)(bits >> (56 - 8 * i));
        buf d;
        buf_init(&d, 64);
        int rc = cqlval_to_text(cqltype_native(CQL_TYPE_DOUBLE), be, 8, &d);
        if (rc == 0) json_object_set_new(m, "min_compress_ratio", json_string(d.data));
        buf_free(&d);
        if (rc) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    }
    return 0;
}

/* compaction = {...} and compression = {...} as Cassandra stores them: the class named in
 * full, compaction's thresholds defaulted; a missing or unknown class is refused. */
static int normalise_map_option(cql_call *c, const char *option, json_t *m)
{
    if (strcmp(option, "caching") == 0) return caching_invalid(c, m);
    int compaction = strcmp(option, "compaction") == 0;
    if (!compaction && strcmp(option, "compression") != 0) return 0;
    if (!compaction) return normalise_compression(c, m);
    json_t *cls = json_object_get(m, "class");
    if (cls == NULL)
        return cql_fail(c, CQL_ERR_CONFIG, "Missing sub-option 'class' for the '%s' option.",
                        option);
    char full[256];
    const char *name = json_string_value(cls);
    if (resolve_class(name, "org.apache.cassandra.db.compaction.", compaction_classes,
                      sizeof compaction_classes / sizeof compaction_classes[0], full,
                      sizeof full) != 0)
        return cql_fail(c, CQL_ERR_CONFIG, "Unable to find compaction strategy class '%s'", full);
    if (compaction_options_unknown(c, m, full)) return -1;
    json_object_set_new(m, "class", json_string(full));
    if (json_object_get(m, "min_threshold") == NULL)
        json_object_set_new(m, "min_threshold", json_string("4"));
    if (json_object_get(m, "max_threshold") == NULL)
        json_object_set_new(m, "max_threshold", json_string("32"));
    return 0;
}

/* ---- speculative_retry and additional_write_policy ---- */

/* A number as those policies write it ([0-9.]+, read as a Java double): 0 and *v, or -1. */
static int policy_number(const char *s, size_t len, double *v)
{
    char text[64];
    if (len == 0 || len >= sizeof text || strspn(s, "0123456789.") < len) return -1;
    memcpy(text, s, len);
    text[len] = '\0';
    char *end = NULL;
    *v = strtod(text, &end);
    return *end == '\0' ? 0 : -1;
}

/* Java's DecimalFormat("#.####") of v (HALF_EVEN at the fourth decimal). */
static void four_decimals(double v, char *out, size_t cap)
{
    double scaled = nearbyint(v * 10000.0); /* the default rounding is to even */
    snprintf(out, cap, "%.4f", scaled / 10000.0);
    char *dot = strchr(out, '.');
    if (dot == NULL) return;
    char *end = out + strlen(out) - 1;
    while (end > dot && *end == '0')
        *end-- = '\0';
    if (end == dot) *end = '\0';
}

/* One policy (ALWAYS, NEVER or NONE, Np / Npercentile, Nms) as Cassandra prints it, into
 * out: its kind ('a', 'n', 'p', 'f'), 0 when the text is none of them, 'x' for a number
 * that does not read, 'r' for a percentile outside (0, 100). */
static int simple_policy(const char *s, size_t len, char *out, size_t cap)
{
    double v;
    if (len == 6 && strncasecmp(s, "ALWAYS", 6) == 0) {
        snprintf(out, cap, "ALWAYS");
        return 'a';
    }
    if ((len == 5 && strncasecmp(s, "NEVER", 5) == 0) ||
        (len == 4 && strncasecmp(s, "NONE", 4) == 0)) {
        snprintf(out, cap, "NEVER");
        return 'n';
    }
    size_t digits = strspn(s, "0123456789.");
    if (digits > len) digits = len;
    const char *unit = s + digits;
    size_t ulen = len - digits;
    int pct = (ulen == 1 && strncasecmp(unit, "p", 1) == 0) ||
              (ulen == 10 && strncasecmp(unit, "percentile", 10) == 0);
    int ms = ulen == 2 && strncasecmp(unit, "ms", 2) == 0;
    if (!digits || (!pct && !ms)) return 0;
    if (policy_number(s, digits, &v) != 0) return 'x';
    if (ms) {
        snprintf(out, cap, "%dms", (int)v);
        return 'f';
    }
    if (v <= 0.0 || v >= 100.0) return 'r';
    char num[64];
    four_decimals(v, num, sizeof num);
    snprintf(out, cap, "%sp", num);
    return 'p';
}

/* [0-9.]+[a-z]+: the shape of a MIN()/MAX() argument. */
static int hybrid_arg(const char *s, size_t len)
{
    size_t d = strspn(s, "0123456789.");
    if (d == 0 || d >= len) return 0;
    for (size_t i = d; i < len; i++)
        if (!isalpha((unsigned char)s[i])) return 0;
    return 1;
}

/* A speculative retry policy checked and written as Cassandra stores it ("99p", "10ms",
 * "MIN(99p,10ms)", "ALWAYS", "NEVER") into out: 0, or -1 with its ConfigurationException. */
static int retry_policy(cql_call *c, const char *text, char *out, size_t cap)
{
    size_t len = strlen(text);
    int k = simple_policy(text, len, out, cap);
    if (k == 'r')
        return cql_fail(c, CQL_ERR_CONFIG,
                        "Invalid value %s for PERCENTILE option 'speculative_retry': must be "
                        "between (0.0 and 100.0)",
                        text);
    if (k && k != 'x') return 0;
    /* MIN(a, b) / MAX(a, b): one percentile and one fixed delay */
    const char *comma = len > 5 ? memchr(text + 4, ',', len - 5) : NULL;
    if (k == 0 && comma &&
        (strncasecmp(text, "MIN(", 4) == 0 || strncasecmp(text, "MAX(", 4) == 0) &&
        text[len - 1] == ')') {
        const char *a = text + 4, *ae = comma, *b = comma + 1, *be = text + len - 1;
        while (ae > a && isspace((unsigned char)ae[-1]))
            ae--;
        while (b < be && isspace((unsigned char)*b))
            b++;
        if (hybrid_arg(a, (size_t)(ae - a)) && hybrid_arg(b, (size_t)(be - b))) {
            char pa[64], pb[64];
            int ka = simple_policy(a, (size_t)(ae - a), pa, sizeof pa);
            int kb = simple_policy(b, (size_t)(be - b), pb, sizeof pb);
            int ok_a = ka == 'p' || ka == 'f', ok_b = kb == 'p' || kb == 'f';
            if (ok_a && ok_b && ka == kb)
                return cql_fail(c, CQL_ERR_CONFIG,
                                "Invalid value %s for option 'speculative_retry': MIN()/MAX() "
                                "arguments should be of different types, but both are of type %s",
                                text, ka == 'p' ? "PERCENTILE" : "FIXED");
            if (ok_a && ok_b) {
                snprintf(out, cap, "%c%c%c(%s,%s)", toupper((unsigned char)text[0]),
                         toupper((unsigned char)text[1]), toupper((unsigned char)text[2]),
                         ka == 'p' ? pa : pb, ka == 'p' ? pb : pa);
                return 0;
            }
        }
    }
    return cql_fail(c, CQL_ERR_CONFIG, "Invalid value %s for option 'speculative_retry'", text);
}

/* 1 when s is a UUID's text (8-4-4-4-12 hex digits). */
static int uuid_text(const char *s)
{
    if (s == NULL || strlen(s) != 36) return 0;
    for (size_t i = 0; i < 36; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i])) return 0;
    }
    return 1;
}

/* Applies WITH properties to opts (an object holding every option). id: where a CREATE
 * keeps the table id WITH id = names (lower case), NULL for an ALTER, which cannot. */
static int table_props(cql_call *c, const cql_props *p, json_t *opts, char id[37])
{
    for (size_t i = 0; i < p->n; i++) {
        const cql_property *pr = &p->items[i];
        const table_opt *o = NULL;
        for (size_t k = 0; k < NTABLE_OPTS; k++)
            if (strcmp(table_opts[k].name, pr->name) == 0) o = &table_opts[k];
        if (o == NULL && strcmp(pr->name, "id") == 0) {
            if (id == NULL) return cql_fail(c, CQL_ERR_CONFIG, "Cannot alter table id.");
            const char *text = pr->value ? pr->value->text : NULL;
            if ((pr->value->kind != CQL_E_STRING && pr->value->kind != CQL_E_UUID) ||
                !uuid_text(text))
                return cql_fail(c, CQL_ERR_CONFIG, "Invalid table id");
            for (size_t k = 0; k < 36; k++)
                id[k] = (char)tolower((unsigned char)text[k]);
            id[36] = '\0';
            continue;
        }
        if (o == NULL) {
            /* options Cassandra 4 still accepts and ignores */
            if (strcmp(pr->name, "read_repair_chance") == 0 ||
                strcmp(pr->name, "dclocal_read_repair_chance") == 0 ||
                strcmp(pr->name, "extensions") == 0)
                continue;
            return cql_fail(c, CQL_ERR_SYNTAX, "Unknown property '%s'", pr->name);
        }
        const cql_expr *e = pr->value;
        json_t *v = NULL;
        if (o->kind == 'm') {
            v = prop_map(e);
            if (v == NULL)
                return cql_fail(c, CQL_ERR_SYNTAX,
                                "Invalid value for property '%s'. It should be a map.", o->name);
            if (normalise_map_option(c, o->name, v) != 0) {
                json_decref(v);
                return -1;
            }
        } else if (o->kind == 'n' || o->kind == 'i') {
            char *end = NULL;
            double d = e->text ? strtod(e->text, &end) : 0;
            if (e->text == NULL || end == e->text || *end != '\0' ||
                (o->kind == 'i' && (d != (double)(long long)d || d > 2147483647)))
                return cql_fail(c, CQL_ERR_SYNTAX, "Invalid %s value for '%s': %s",
                                o->kind == 'i' ? "integer" : "double", o->name,
                                e->text ? e->text : "(map)");
            if (numeric_option_out_of_range(c, o, d, e->text)) return -1;
            v = o->kind == 'i' ? json_integer((json_int_t)d) : json_real(d);
        } else if (o->kind == 'b') {
            if (e->text == NULL || (strcasecmp(e->text, "true") && strcasecmp(e->text, "false")))
                return cql_fail(c, CQL_ERR_SYNTAX, "Invalid boolean value for '%s'", o->name);
            v = json_boolean(strcasecmp(e->text, "true") == 0);
        } else {
            if (e->text == NULL)
                return cql_fail(c, CQL_ERR_SYNTAX, "Invalid value for '%s'", o->name);
            char policy[160];
            if (strcmp(o->name, "speculative_retry") == 0 ||
                strcmp(o->name, "additional_write_policy") == 0) {
                if (retry_policy(c, e->text, policy, sizeof policy) != 0) return -1;
                v = json_string(policy);
            } else {
                v = json_string(e->text);
            }
        }
        if (strcmp(o->name, "default_time_to_live") == 0 &&
            json_integer_value(v) > 20 * 365 * 86400LL) {
            json_decref(v);
            return cql_fail(c, CQL_ERR_CONFIG,
                            "default_time_to_live must be less than or equal to %d (got %s)",
                            20 * 365 * 86400, e->text);
        }
        json_object_set_new(opts, o->name, v);
    }
    json_int_t lo = json_integer_value(json_object_get(opts, "min_index_interval"));
    json_int_t hi = json_integer_value(json_object_get(opts, "max_index_interval"));
    if (hi < lo)
        return cql_fail(c, CQL_ERR_CONFIG,
                        "max_index_interval must be greater than or equal to min_index_interval "
                        "(%lld) (got %lld)",
                        (long long)lo, (long long)hi);
    return 0;
}

/* Cassandra stores a non-frozen UDT field by field and cannot split a field further:
 * such a column may not have a non-frozen collection field. Returns 1 with the error set. */
static int udt_nests_multicell(cql_call *c, const cql_ctype *t)
{
    if (t->wire.id != CQL_TYPE_UDT || !cqltype_is_multicell(t)) return 0;
    for (uint16_t i = 0; i < t->wire.n; i++)
        if (t->args[i]->wire.id != CQL_TYPE_UDT && cqltype_is_multicell(t->args[i])) {
            cql_fail(c, CQL_ERR_INVALID,
                     "Non-frozen UDTs with nested non-frozen collections are not supported");
            return 1;
        }
    return 0;
}

/* A type's schema name, or NULL with the call's error set. */
static char *type_name_of(cql_call *c, const cql_ctype *t)
{
    buf b;
    buf_init(&b, 0);
    if (cqltype_name(t, &b) != 0) {
        buf_free(&b);
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        return NULL;
    }
    return buf_detach(&b, NULL);
}

static int col_index(const cql_create_table *ct, const char *name)
{
    for (size_t i = 0; i < ct->ncols; i++)
        if (strcmp(ct->cols[i].name, name) == 0) return (int)i;
    return -1;
}

/* Static columns before regular ones, each by name: the order SELECT * answers in. */
static int by_name(const void *a, const void *b)
{
    json_t *ca = *(json_t *const *)a, *cb = *(json_t *const *)b;
    int sa = strcmp(json_string_value(json_object_get(ca, "kind")), "static") == 0;
    int sb = strcmp(json_string_value(json_object_get(cb, "kind")), "static") == 0;
    if (sa != sb) return sb - sa;
    return strcmp(json_string_value(json_object_get(ca, "name")),
                  json_string_value(json_object_get(cb, "name")));
}

/* Sorts the columns after the key's. */
static void sort_columns(json_t *cols)
{
    size_t first = 0, n = json_array_size(cols);
    while (first < n) {
        const char *k = json_string_value(json_object_get(json_array_get(cols, first), "kind"));
        if (strcmp(k, "partition_key") != 0 && strcmp(k, "clustering") != 0) break;
        first++;
    }
    json_t **rest = calloc(n - first + 1, sizeof *rest);
    if (rest == NULL) return;
    for (size_t i = first; i < n; i++)
        rest[i - first] = json_incref(json_array_get(cols, i));
    qsort(rest, n - first, sizeof *rest, by_name);
    for (size_t i = first; i < n; i++)
        json_array_set_new(cols, i, rest[i - first]);
    free(rest);
}

/* Cassandra's refusal of a table or view name: too long, or empty or with characters
 * other than letters, digits and '_'. */
static int bad_table_name(cql_call *c, const char *ks, const char *name)
{
    size_t n = strlen(name);
    if (n > 48)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Table name is too long, it needs to fit 48 characters (got table name "
                        "of %zu chars for %s.%s)",
                        n, ks, name);
    return cql_fail(c, CQL_ERR_INVALID,
                    "%s.%s: Table name must not be empty or not contain "
                    "non-alphanumeric-underscore characters (got \"%s\")",
                    ks, name, name);
}

/* The engine table of a CQL table: "ks.t", a binary partition key (its partitions in
 * token order) and, with clustering columns, a binary sort key. */
static int create_engine_table(cql_call *c, const char *ks, const char *name, int clustered)
{
    char full[128], arn[256];
    snprintf(full, sizeof full, "%s.%s", ks, name);
    snprintf(arn, sizeof arn, "arn:aws:dynamodb:ddblocal:000000000000:table/%s", full);
    char id[37];
    cql_uuid_random(id);
    double now = engine_now_seconds();
    json_t *defs = json_pack("[{s:s,s:s}]", "AttributeName", CQL_PK_ATTR, "AttributeType", "B");
    json_t *keys = json_pack("[{s:s,s:s}]", "AttributeName", CQL_PK_ATTR, "KeyType", "HASH");
    if (clustered) {
        json_array_append_new(
            defs, json_pack("{s:s,s:s}", "AttributeName", CQL_CK_ATTR, "AttributeType", "B"));
        json_array_append_new(
            keys, json_pack("{s:s,s:s}", "AttributeName", CQL_CK_ATTR, "KeyType", "RANGE"));
    }
    json_t *desc = json_pack(
        "{s:o, s:s, s:o, s:s, s:f, s:{s:i,s:i,s:i}, s:{s:s,s:f}, s:i, s:i, s:s, s:s, s:b, "
        "s:{s:s,s:s}, s:{s:s,s:s}, s:s}",
        "AttributeDefinitions", defs, "TableName", full, "KeySchema", keys, "TableStatus", "ACTIVE",
        "CreationDateTime", now, "ProvisionedThroughput", "NumberOfDecreasesToday", 0,
        "ReadCapacityUnits", 0, "WriteCapacityUnits", 0, "BillingModeSummary", "BillingMode",
        "PAY_PER_REQUEST", "LastUpdateToPayPerRequestDateTime", now, "TableSizeBytes", 0,
        "ItemCount", 0, "TableArn", arn, "TableId", id, "DeletionProtectionEnabled", 0,
        QR_CQL_TABLE_FIELD, "keyspace", ks, "table", name, QR_TTL_FIELD, "TimeToLiveStatus",
        "ENABLED", "AttributeName", CQL_EXPIRES_ATTR, QR_PARTITION_ORDER_FIELD,
        QR_PARTITION_ORDER_TOKEN);
    if (desc == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    qr_err err;
    err_init(&err);
    table *t;
    if (catalog_create(c->db, desc, &t, &err) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "table %s could not be created: %s", full, err.msg);
    catalog_release(c->db, t);
    return 0;
}

static int create_table(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const cql_create_table *ct = &s->u.create_table;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    const char *name = s->name.name;
    if (cql_system_keyspace(ks))
        return cql_fail(c, CQL_ERR_UNAUTHORIZED, "%s keyspace is not user-modifiable.", ks);
    if (!cql_schema_keyspace(st->schema, ks))
        return cql_fail(c, CQL_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
    if (cql_schema_table(st->schema, ks, name)) {
        if (s->if_not_exists) return answer_void(c);
        snprintf(c->err_keyspace, sizeof c->err_keyspace, "%s", ks);
        snprintf(c->err_name, sizeof c->err_name, "%s", name);
        return cql_fail(c, CQL_ERR_ALREADY_EXISTS,
                        "Cannot add already existing table \"%s\" to keyspace \"%s\"", name, ks);
    }
    if (!name_valid(name)) return bad_table_name(c, ks, name);
    for (size_t i = 0; i < ct->ncols; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(ct->cols[i].name, ct->cols[j].name) == 0)
                return cql_fail(c, CQL_ERR_INVALID,
                                "Duplicate column '%s' declaration for table '%s'",
                                ct->cols[i].name, name);
    /* the primary key: a PRIMARY KEY clause or one column's PRIMARY KEY */
    const char *single = NULL;
    size_t nkeys = ct->has_pk ? 1 : 0;
    for (size_t i = 0; i < ct->ncols; i++)
        if (ct->cols[i].primary_key) {
            single = ct->cols[i].name;
            nkeys++;
        }
    if (nkeys == 0)
        return cql_fail(c, CQL_ERR_INVALID,
                        "No PRIMARY KEY specifed for table '%s' (exactly one required)", name);
    if (nkeys > 1)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Multiple PRIMARY KEY specified for table '%s' (exactly one required)",
                        name);
    const char *const *part = ct->has_pk ? ct->pk.partition : &single;
    size_t npart = ct->has_pk ? ct->pk.npartition : 1;
    const char *const *clus = ct->has_pk ? ct->pk.clustering : NULL;
    size_t nclus = ct->has_pk ? ct->pk.nclustering : 0;

    arena arena;
    arena_init(&arena, 1 << 20);
    cqltype_env env;
    cql_type_env(st, ks, &arena, &env);
    json_t *cols = json_array(), *opts = default_options();
    const cql_ctype **types = calloc(ct->ncols + 1, sizeof *types);
    int rc = -1, counters = 0, noncounters = 0;
    char *tn = NULL;
    if (types == NULL) {
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ct->ncols; i++) {
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (cqltype_resolve(&arena, ct->cols[i].type, &env, &types[i], &perr) != 0) {
            cql_fail_parsed(c, &perr);
            goto done;
        }
        if (udt_nests_multicell(c, types[i])) goto done;
    }
    /* key columns: known, once each, of a type a key may have, not static */
    for (size_t k = 0; k < npart + nclus; k++) {
        const char *kc = k < npart ? part[k] : clus[k - npart];
        int i = col_index(ct, kc);
        if (i < 0) {
            cql_fail(c, CQL_ERR_INVALID,
                     "Unknown column '%s' referenced in PRIMARY KEY for table '%s'", kc, name);
            goto done;
        }
        for (size_t j = 0; j < k; j++)
            if (strcmp(kc, j < npart ? part[j] : clus[j - npart]) == 0) {
                cql_fail(c, CQL_ERR_INVALID,
                         "Duplicate column '%s' in PRIMARY KEY clause for table '%s'", kc, name);
                goto done;
            }
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (cqltype_check_primary_key(types[i], kc, &perr) != 0) {
            cql_fail_parsed(c, &perr);
            goto done;
        }
        if (ct->cols[i].is_static) {
            cql_fail(c, CQL_ERR_INVALID, "Static column '%s' cannot be part of the PRIMARY KEY",
                     kc);
            goto done;
        }
    }
    /* CLUSTERING ORDER BY: clustering columns, in their order */
    const cql_table_opts *to = &ct->opts;
    {
        char others[512] = "";
        size_t used = 0;
        for (size_t n = 0; n < to->norder; n++) {
            const char *col = to->clustering_order[n].column;
            int clustering = 0;
            for (size_t m = 0; m < nclus; m++)
                clustering |= strcmp(col, clus[m]) == 0;
            for (size_t m = 0; m < n; m++)
                if (strcmp(col, to->clustering_order[m].column) == 0) {
                    cql_fail(c, CQL_ERR_INVALID,
                             "Duplicate column '%s' in CLUSTERING ORDER BY clause for table '%s'",
                             col, name);
                    goto done;
                }
            if (!clustering && used < sizeof others)
                used += (size_t)snprintf(others + used, sizeof others - used, "%s%s",
                                         used ? ", " : "", col);
        }
        if (used) {
            cql_fail(c, CQL_ERR_INVALID,
                     "Only clustering key columns can be defined in CLUSTERING ORDER directive: "
                     "[%s]",
                     others);
            goto done;
        }
    }
    for (size_t n = 0; n < to->norder; n++) {
        if (strcmp(to->clustering_order[n].column, clus[n]) != 0) {
            int later = 0;
            for (size_t m = 0; m < to->norder; m++)
                later |= strcmp(to->clustering_order[m].column, clus[n]) == 0;
            if (later)
                cql_fail(c, CQL_ERR_INVALID,
                         "The order of columns in the CLUSTERING ORDER directive must match that "
                         "of the clustering columns (%s must appear before %s)",
                         clus[n], to->clustering_order[n].column);
            else
                cql_fail(c, CQL_ERR_INVALID, "Missing CLUSTERING ORDER for column %s", clus[n]);
            goto done;
        }
    }
    /* the columns, as system_schema.columns lists them */
    for (size_t k = 0; k < npart + nclus; k++) {
        int i = col_index(ct, k < npart ? part[k] : clus[k - npart]);
        tn = type_name_of(c, types[i]);
        if (tn == NULL) goto done;
        const char *order = k < npart ? "none"
                            : (k - npart < to->norder && to->clustering_order[k - npart].desc)
                                ? "desc"
                                : "asc";
        json_array_append_new(
            cols, json_pack("{s:s,s:s,s:s,s:i,s:s}", "name", ct->cols[i].name, "type", tn, "kind",
                            k < npart ? "partition_key" : "clustering", "position",
                            (int)(k < npart ? k : k - npart), "order", order));
        free(tn);
        tn = NULL;
    }
    size_t first_regular = json_array_size(cols);
    for (size_t i = 0; i < ct->ncols; i++) {
        int key = 0;
        for (size_t k = 0; k < npart + nclus; k++)
            key |= strcmp(ct->cols[i].name, k < npart ? part[k] : clus[k - npart]) == 0;
        if (key) continue;
        if (ct->cols[i].is_static && nclus == 0) {
            cql_fail(c, CQL_ERR_INVALID,
                     "Static columns are only useful (and thus allowed) if the table has at "
                     "least one clustering column");
            goto done;
        }
        if (cqltype_has_counter(types[i]))
            counters++;
        else
            noncounters++;
        tn = type_name_of(c, types[i]);
        if (tn == NULL) goto done;
        json_array_append_new(cols,
                              json_pack("{s:s,s:s,s:s,s:i,s:s}", "name", ct->cols[i].name, "type",
                                        tn, "kind", ct->cols[i].is_static ? "static" : "regular",
                                        "position", -1, "order", "none"));
        free(tn);
        tn = NULL;
    }
    if (counters && noncounters) {
        cql_fail(c, CQL_ERR_INVALID,
                 "Cannot mix counter and non counter columns in the same table");
        goto done;
    }
    (void)first_regular;
    sort_columns(cols);
    char id[37];
    cql_uuid_random(id);
    if (table_props(c, &to->props, opts, id) != 0) goto done;
    if (counters && json_integer_value(json_object_get(opts, "default_time_to_live")) > 0) {
        cql_fail(c, CQL_ERR_INVALID, "Cannot set default_time_to_live on a table with counters");
        goto done;
    }
    json_t *tdef = json_pack("{s:s, s:O, s:O, s:b}", "id", id, "columns", cols, "options", opts,
                             "counter", counters > 0);
    /* the engine table first: a schema that names a table always has its rows' table */
    if (drop_engine_table(c, ks, name) != 0 || create_engine_table(c, ks, name, nclus > 0) != 0) {
        json_decref(tdef);
        goto done;
    }
    json_t *next = json_deep_copy(st->schema->doc);
    json_object_set_new(json_object_get(json_object_get(keyspaces_of(next), ks), "tables"), name,
                        tdef);
    rc = commit_doc(c, st, next);
    json_decref(next);
    if (rc) {
        drop_engine_table(c, ks, name);
        goto done;
    }
    rc = cql_schema_changed(c, "CREATED", "TABLE", ks, name);
done:
    free(tn);
    free(types);
    json_decref(cols);
    json_decref(opts);
    arena_free(&arena);
    return rc;
}

/* The table a statement names, for ALTER, DROP and TRUNCATE: NULL (error set, or Void for
 * IF EXISTS in *voided) when there is none. */
static json_t *table_for(cql_call *c, cql_state *st, const cql_stmt *s, const char **ks_out,
                         int *voided, int truncate, const char *on_view)
{
    *voided = 0;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return NULL;
    *ks_out = ks;
    if (cql_system_keyspace(ks)) {
        cql_fail(c, CQL_ERR_UNAUTHORIZED, "%s keyspace is not user-modifiable.", ks);
        return NULL;
    }
    if (!cql_schema_keyspace(st->schema, ks)) {
        if (s->if_exists) {
            *voided = 1;
            answer_void(c);
            return NULL;
        }
        if (truncate)
            cql_fail(c, CQL_ERR_INVALID, "keyspace %s does not exist", ks);
        else
            cql_fail(c, CQL_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
        return NULL;
    }
    json_t *t = cql_schema_table(st->schema, ks, s->name.name);
    if (t == NULL && on_view &&
        json_object_get(json_object_get(cql_schema_keyspace(st->schema, ks), "views"),
                        s->name.name)) {
        cql_fail(c, CQL_ERR_INVALID, "%s", on_view);
        return NULL;
    }
    if (t == NULL) {
        if (s->if_exists) {
            *voided = 1;
            answer_void(c);
            return NULL;
        }
        if (truncate)
            cql_fail(c, CQL_ERR_INVALID, "table %s does not exist", s->name.name);
        else
            cql_fail(c, CQL_ERR_INVALID, "Table '%s.%s' doesn't exist", ks, s->name.name);
    }
    return t;
}

static int drop_table(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const char *ks = NULL;
    int voided;
    if (table_for(c, st, s, &ks, &voided, 0,
                  "Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED "
                  "VIEW instead.") == NULL)
        return voided ? 0 : -1;
    const char *vname;
    json_t *v;
    json_object_foreach(json_object_get(cql_schema_keyspace(st->schema, ks), "views"), vname, v)
    {
        if (strcmp(json_string_value(json_object_get(v, "base")), s->name.name) == 0)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Cannot drop table when materialized views still depend on it "
                            "(%s.{%s})",
                            ks, vname);
    }
    json_t *next = json_deep_copy(st->schema->doc);
    json_object_del(json_object_get(json_object_get(keyspaces_of(next), ks), "tables"),
                    s->name.name);
    int rc = commit_doc(c, st, next);
    json_decref(next);
    if (rc == 0) rc = drop_engine_table(c, ks, s->name.name);
    return rc ? rc : cql_schema_changed(c, "DROPPED", "TABLE", ks, s->name.name);
}

static int delete_row(void *arg, item_txn *x, size_t i, json_t **keep, qr_err *err)
{
    (void)arg;
    (void)keep;
    return txn_delete(x, i, err);
}

/* Deletes every item of ks.name, a hundred to a transaction, so its secondary indexes and
 * views follow as they follow any delete. */
static int delete_all(cql_call *c, const char *ks, const char *name)
{
    char full[2 * CQL_NAME_MAX + 2];
    snprintf(full, sizeof full, "%s.%s", ks, name);
    table *t = catalog_get(c->db, full);
    if (t == NULL) return cql_fail(c, CQL_ERR_SERVER, "the rows of %s cannot be found", name);
    qr_err err;
    err_init(&err);
    if (cql_each_row_in_transactions(c, t, delete_row, NULL, 0, &err) != 0)
        return cql_fail(c, CQL_ERR_TRUNCATE, "TRUNCATE of %s failed: %s", name, err.msg);
    return 0;
}

static int truncate_table(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const char *ks = NULL;
    int voided;
    json_t *t = table_for(c, st, s, &ks, &voided, 1,
                          "Cannot TRUNCATE materialized view directly; must truncate base table "
                          "instead");
    if (t == NULL) return voided ? 0 : -1;
    int indexed = json_object_size(json_object_get(t, "indexes")) > 0;
    const char *vname;
    json_t *v;
    json_object_foreach(json_object_get(cql_schema_keyspace(st->schema, ks), "views"), vname, v)
    {
        indexed |= strcmp(json_string_value(json_object_get(v, "base")), s->name.name) == 0;
    }
    if (indexed) {
        /* the engine table keeps its global indexes: its rows are deleted */
        if (delete_all(c, ks, s->name.name) != 0) return -1;
        return answer_void(c);
    }
    int clustered = 0;
    size_t i;
    json_t *col;
    json_array_foreach(json_object_get(t, "columns"), i, col)
    {
        clustered |= strcmp(json_string_value(json_object_get(col, "kind")), "clustering") == 0;
    }
    if (drop_engine_table(c, ks, s->name.name) != 0 ||
        create_engine_table(c, ks, s->name.name, clustered) != 0)
        return -1;
    return answer_void(c);
}

/* The names of t's indexes on column (plain or on the collection) into out, joined by
 * ", ": how many there are. */
static size_t indexes_on(json_t *t, const char *column, char *out, size_t cap)
{
    size_t n = 0, used = 0;
    out[0] = '\0';
    const char *name;
    json_t *iv;
    json_object_foreach(json_object_get(t, "indexes"), name, iv)
    {
        char col[CQL_NAME_MAX];
        int kind;
        const char *target = json_string_value(json_object_get(iv, "target"));
        if (target == NULL) continue;
        cql_index_target_parse(target, &kind, col, sizeof col);
        if (strcmp(col, column) != 0) continue;
        used +=
            (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s", n ? ", " : "", name);
        n++;
    }
    return n;
}

static json_t *find_column(json_t *t, const char *name, size_t *at)
{
    size_t i;
    json_t *col;
    json_array_foreach(json_object_get(t, "columns"), i, col)
    {
        if (strcmp(json_string_value(json_object_get(col, "name")), name) == 0) {
            if (at) *at = i;
            return col;
        }
    }
    return NULL;
}

/* The name column col's cells are stored under: the name it was created with, kept by a
 * rename so that stored rows stay valid. */
static const char *stored_name(const json_t *col)
{
    const char *attr = json_string_value(json_object_get(col, "attr"));
    return attr ? attr : json_string_value(json_object_get(col, "name"));
}

/* The column whose cells are stored under name, or NULL. */
static json_t *column_stored_as(json_t *t, const char *name)
{
    size_t i;
    json_t *col;
    json_array_foreach(json_object_get(t, "columns"), i, col)
    {
        if (strcmp(stored_name(col), name) == 0) return col;
    }
    return NULL;
}

/* Whether the cells of a column of t, live or dropped, are stored under name. */
static int stored_name_taken(json_t *t, const char *name)
{
    if (column_stored_as(t, name)) return 1;
    const char *dname;
    json_t *was;
    json_object_foreach(json_object_get(t, "dropped"), dname, was)
    {
        const char *attr = json_string_value(json_object_get(was, "attr"));
        if (strcmp(attr ? attr : dname, name) == 0) return 1;
    }
    return 0;
}

/* The name a column added to t as name stores its cells under, into out: its own name,
 * or the one it had when it was dropped, unless the cells of another column are stored
 * under that name (a key column renamed away from it); then the name with "#" and the
 * first number no column's cells hold. 0, or -1 when no such name fits. */
static int stored_name_for_new(json_t *t, const char *name, char *out, size_t cap)
{
    json_t *was = json_object_get(json_object_get(t, "dropped"), name);
    const char *before = json_string_value(json_object_get(was, "attr"));
    const char *want = before ? before : name;
    if (!column_stored_as(t, want)) {
        snprintf(out, cap, "%s", want);
        return 0;
    }
    for (unsigned n = 1; n < 10000; n++) {
        if ((size_t)snprintf(out, cap, "%s#%u", name, n) >= cap) return -1;
        if (!stored_name_taken(t, out)) return 0;
    }
    return -1;
}

static int is_key(json_t *col)
{
    const char *k = json_string_value(json_object_get(col, "kind"));
    return strcmp(k, "partition_key") == 0 || strcmp(k, "clustering") == 0;
}

/* Cassandra refuses to add back a dropped column with another type or kind: cells written
 * before the drop would be read with the wrong codec. Sets the call's error and returns 1. */
static int readd_conflicts(cql_call *c, json_t *t, const char *name, const char *type,
                           int is_static)
{
    json_t *was = json_object_get(json_object_get(t, "dropped"), name);
    if (was == NULL) return 0;
    const char *old_type = json_string_value(json_object_get(was, "type"));
    const char *old_kind = json_string_value(json_object_get(was, "kind"));
    if (old_type && strcmp(old_type, type) != 0) {
        cql_fail(c, CQL_ERR_INVALID,
                 "Cannot re-add previously dropped column '%s' of type %s, incompatible with "
                 "previous type %s",
                 name, type, old_type);
        return 1;
    }
    int was_static = old_kind && strcmp(old_kind, "static") == 0;
    if (old_kind && was_static != is_static) {
        cql_fail(c, CQL_ERR_INVALID,
                 "Cannot re-add previously dropped column '%s' of kind %s, incompatible with "
                 "previous kind %s",
                 name, is_static ? "STATIC" : "REGULAR", was_static ? "STATIC" : "REGULAR");
        return 1;
    }
    return 0;
}

/* Renames column from to to in the views of table base, as Cassandra does: each view's
 * column keeps its stored name, and its IS NOT NULL restriction follows the rename. */
static void rename_in_views(json_t *views, const char *base, const char *from, const char *to)
{
    const char *vname;
    json_t *v;
    json_object_foreach(views, vname, v)
    {
        if (strcmp(json_string_value(json_object_get(v, "base")), base) != 0) continue;
        json_t *col = find_column(v, from, NULL);
        if (col == NULL) continue;
        if (json_object_get(col, "attr") == NULL)
            json_object_set_new(col, "attr", json_string(stored_name(col)));
        json_object_set_new(col, "name", json_string(to));
        /* the restriction as the view was made with it: "a IS NOT NULL AND b IS NOT NULL" */
        const char *where = json_string_value(json_object_get(v, "where"));
        buf out;
        buf_init(&out, 0);
        for (const char *p = where ? where : ""; *p;) {
            const char *end = strstr(p, " AND ");
            size_t len = end ? (size_t)(end - p) : strlen(p);
            size_t flen = strlen(from);
            int renamed = len == flen + 12 && strncmp(p, from, flen) == 0 &&
                          strncmp(p + flen, " IS NOT NULL", 12) == 0;
            buf_printf(&out, "%s", out.len ? " AND " : "");
            if (renamed)
                buf_printf(&out, "%s IS NOT NULL", to);
            else
                buf_append(&out, p, len);
            p = end ? end + 5 : p + len;
        }
        json_object_set_new(v, "where", json_string(out.data ? out.data : ""));
        buf_free(&out);
    }
}

/* Whether materialized views of table ks.name exist. */
static int has_views(cql_state *st, const char *ks, const char *name)
{
    const char *vname;
    json_t *v;
    json_object_foreach(json_object_get(cql_schema_keyspace(st->schema, ks), "views"), vname, v)
    {
        const char *base = json_string_value(json_object_get(v, "base"));
        if (base && strcmp(base, name) == 0) return 1;
    }
    return 0;
}

static int alter_table(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const cql_alter_table *at = &s->u.alter_table;
    const char *ks = NULL;
    int voided;
    if (table_for(c, st, s, &ks, &voided, 0,
                  "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW "
                  "instead") == NULL)
        return voided ? 0 : -1;
    json_t *next = json_deep_copy(st->schema->doc);
    json_t *t = json_object_get(json_object_get(json_object_get(keyspaces_of(next), ks), "tables"),
                                s->name.name);
    json_t *cols = json_object_get(t, "columns");
    int rc = -1, changed = 0;
    arena arena;
    arena_init(&arena, 1 << 20);
    switch (at->what) {
    case CQL_ALTER_ADD: {
        cqltype_env env;
        cql_type_env(st, ks, &arena, &env);
        int clustered = 0;
        size_t i;
        json_t *col;
        json_array_foreach(cols, i, col)
        {
            clustered |= strcmp(json_string_value(json_object_get(col, "kind")), "clustering") == 0;
        }
        for (size_t k = 0; k < at->nadd; k++) {
            const cql_column_def *d = &at->add[k];
            if (find_column(t, d->name, NULL)) {
                if (at->if_column) continue;
                cql_fail(c, CQL_ERR_INVALID, "Column with name '%s' already exists", d->name);
                goto done;
            }
            const cql_ctype *ty;
            cql_parse_error perr;
            memset(&perr, 0, sizeof perr);
            if (cqltype_resolve(&arena, d->type, &env, &ty, &perr) != 0) {
                cql_fail_parsed(c, &perr);
                goto done;
            }
            if (udt_nests_multicell(c, ty)) goto done;
            if (d->is_static && !clustered) {
                cql_fail(c, CQL_ERR_INVALID,
                         "Static columns are only useful (and thus allowed) if the table has at "
                         "least one clustering column");
                goto done;
            }
            if (json_is_true(json_object_get(t, "counter")) != (cqltype_has_counter(ty) != 0)) {
                cql_fail(c, CQL_ERR_INVALID,
                         json_is_true(json_object_get(t, "counter"))
                             ? "Cannot add a non counter column (%s) in a counter table"
                             : "Cannot add a counter column (%s) in a non counter table",
                         d->name);
                goto done;
            }
            char stored[CQL_NAME_MAX];
            if (stored_name_for_new(t, d->name, stored, sizeof stored) != 0) {
                cql_fail(c, CQL_ERR_INVALID,
                         "Cannot add column %s to table %s: no name is free to store its cells "
                         "under",
                         d->name, s->name.name);
                goto done;
            }
            char *tn = type_name_of(c, ty);
            if (tn == NULL) goto done;
            if (readd_conflicts(c, t, d->name, tn, d->is_static)) {
                free(tn);
                goto done;
            }
            json_t *added =
                json_pack("{s:s,s:s,s:s,s:i,s:s}", "name", d->name, "type", tn, "kind",
                          d->is_static ? "static" : "regular", "position", -1, "order", "none");
            if (strcmp(stored, d->name) != 0)
                json_object_set_new(added, "attr", json_string(stored));
            json_array_append_new(cols, added);
            free(tn);
            /* a column added again after a drop starts with no cells: the drop's time
             * stays in "dropped", and cells written before it stay hidden */
            changed = 1;
        }
        sort_columns(cols);
        break;
    }
    case CQL_ALTER_DROP: {
        /* cells written after the drop's time (USING TIMESTAMP, else now) stay visible */
        int64_t drop_time = r->timestamp;
        if (at->timestamp) {
            char *end = NULL;
            errno = 0;
            long long v = at->timestamp->text ? strtoll(at->timestamp->text, &end, 10) : 0;
            if (!at->timestamp->text || *end != '\0' || errno) {
                cql_fail(c, CQL_ERR_INVALID, "Invalid timestamp for the drop: %s",
                         at->timestamp->text ? at->timestamp->text : "(none)");
                goto done;
            }
            drop_time = v;
        }
        for (size_t k = 0; k < at->nnames; k++) {
            size_t idx;
            json_t *col = find_column(t, at->names[k], &idx);
            if (col == NULL) {
                if (at->if_column) continue;
                cql_fail(c, CQL_ERR_INVALID, "Column %s was not found in table %s", at->names[k],
                         s->name.name);
                goto done;
            }
            if (is_key(col)) {
                cql_fail(c, CQL_ERR_INVALID, "Cannot drop PRIMARY KEY column %s", at->names[k]);
                goto done;
            }
            if (has_views(st, ks, s->name.name)) {
                cql_fail(c, CQL_ERR_INVALID,
                         "Cannot drop column %s on base table %s with materialized views",
                         at->names[k], s->name.name);
                goto done;
            }
            char dependent[512];
            if (indexes_on(t, at->names[k], dependent, sizeof dependent)) {
                cql_fail(c, CQL_ERR_INVALID,
                         "Cannot drop column %s because it has dependent secondary indexes (%s)",
                         at->names[k], dependent);
                goto done;
            }
            json_t *dropped = json_object_get(t, "dropped");
            if (dropped == NULL) json_object_set_new(t, "dropped", dropped = json_object());
            json_t *gone =
                json_pack("{s:I,s:O,s:O}", "time", (json_int_t)drop_time, "type",
                          json_object_get(col, "type"), "kind", json_object_get(col, "kind"));
            /* its cells stay where they were stored, hidden by the drop's time */
            if (strcmp(stored_name(col), at->names[k]) != 0)
                json_object_set_new(gone, "attr", json_string(stored_name(col)));
            json_object_set_new(dropped, at->names[k], gone);
            json_array_remove(cols, idx);
            changed = 1;
        }
        break;
    }
    case CQL_ALTER_RENAME:
        for (size_t k = 0; k < at->nnames; k++) {
            json_t *col = find_column(t, at->names[k], NULL);
            if (col == NULL) {
                if (at->if_column) continue;
                cql_fail(c, CQL_ERR_INVALID, "Column %s was not found in table %s", at->names[k],
                         s->name.name);
                goto done;
            }
            if (!is_key(col)) {
                cql_fail(c, CQL_ERR_INVALID, "Cannot rename non PRIMARY KEY column %s",
                         at->names[k]);
                goto done;
            }
            /* an index keys the column by its name */
            char dependent[512];
            if (indexes_on(t, at->names[k], dependent, sizeof dependent)) {
                cql_fail(c, CQL_ERR_INVALID,
                         "Can't rename column %s because it has dependent secondary indexes "
                         "(%s)",
                         at->names[k], dependent);
                goto done;
            }
            if (find_column(t, at->to[k], NULL)) {
                cql_fail(c, CQL_ERR_INVALID,
                         "Cannot rename column %s to %s in table '%s'; another column with that "
                         "name already exists",
                         at->names[k], at->to[k], s->name.name);
                goto done;
            }
            /* the cells keep their stored name, whichever name the column now has */
            if (json_object_get(col, "attr") == NULL)
                json_object_set_new(col, "attr", json_string(at->names[k]));
            json_object_set_new(col, "name", json_string(at->to[k]));
            rename_in_views(json_object_get(json_object_get(keyspaces_of(next), ks), "views"),
                            s->name.name, at->names[k], at->to[k]);
            changed = 1;
        }
        break;
    case CQL_ALTER_WITH:
        if (table_props(c, &at->props, json_object_get(t, "options"), NULL) != 0) goto done;
        if (has_views(st, ks, s->name.name) &&
            json_integer_value(
                json_object_get(json_object_get(t, "options"), "gc_grace_seconds")) == 0) {
            cql_fail(c, CQL_ERR_INVALID,
                     "Cannot alter gc_grace_seconds of the base table of a materialized view to "
                     "0, since this value is used to TTL undelivered updates. Setting "
                     "gc_grace_seconds too low might cause undelivered updates to expire before "
                     "being replayed.");
            goto done;
        }
        if (json_is_true(json_object_get(t, "counter")) &&
            json_integer_value(
                json_object_get(json_object_get(t, "options"), "default_time_to_live")) > 0) {
            cql_fail(c, CQL_ERR_INVALID,
                     "Cannot set default_time_to_live on a table with counters");
            goto done;
        }
        changed = 1;
        break;
    case CQL_ALTER_TYPE_OF:
        cql_fail(c, CQL_ERR_INVALID, "Altering column types is no longer supported");
        goto done;
    case CQL_ALTER_DROP_COMPACT_STORAGE:
        cql_fail(c, CQL_ERR_INVALID,
                 "Cannot DROP COMPACT STORAGE on table without COMPACT STORAGE");
        goto done;
    }
    if (!changed) {
        rc = answer_void(c);
        goto done;
    }
    rc = commit_doc(c, st, next);
    if (rc == 0) rc = cql_schema_changed(c, "UPDATED", "TABLE", ks, s->name.name);
done:
    arena_free(&arena);
    json_decref(next);
    return rc;
}

/* ---- user types ---- */

static int type_used_by(cql_call *c, cql_state *st, const char *ks, const char *name, char *by,
                        size_t cap)
{
    arena arena;
    arena_init(&arena, 1 << 20);
    cqltype_env env;
    cql_type_env(st, ks, &arena, &env);
    json_t *kso = cql_schema_keyspace(st->schema, ks);
    const char *tname;
    json_t *t;
    int used = 0;
    json_object_foreach(json_object_get(kso, "tables"), tname, t)
    {
        size_t i;
        json_t *col;
        json_array_foreach(json_object_get(t, "columns"), i, col)
        {
            const char *text = json_string_value(json_object_get(col, "type"));
            const cql_ctype *ty;
            cql_parse_error perr;
            memset(&perr, 0, sizeof perr);
            if (cqltype_parse(&arena, text, strlen(text), &env, &ty, &perr) == 0 &&
                cqltype_uses_udt(ty, ks, name)) {
                snprintf(by, cap, "%s", tname);
                used = 1;
            }
        }
    }
    json_object_foreach(json_object_get(kso, "types"), tname, t)
    {
        if (strcmp(tname, name) == 0) continue;
        size_t i;
        json_t *ft;
        json_array_foreach(json_object_get(t, "types"), i, ft)
        {
            const char *text = json_string_value(ft);
            const cql_ctype *ty;
            cql_parse_error perr;
            memset(&perr, 0, sizeof perr);
            if (cqltype_parse(&arena, text, strlen(text), &env, &ty, &perr) == 0 &&
                cqltype_uses_udt(ty, ks, name)) {
                snprintf(by, cap, "%s", tname);
                used = 2;
            }
        }
    }
    (void)c;
    arena_free(&arena);
    return used;
}

static int create_type(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const cql_create_type *cty = &s->u.create_type;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    const char *name = s->name.name;
    if (cql_system_keyspace(ks))
        return cql_fail(c, CQL_ERR_UNAUTHORIZED, "%s keyspace is not user-modifiable.", ks);
    if (!cql_schema_keyspace(st->schema, ks))
        return cql_fail(c, CQL_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
    if (cql_schema_type(st->schema, ks, name)) {
        if (s->if_not_exists) return answer_void(c);
        return cql_fail(c, CQL_ERR_INVALID, "A user type with name '%s' already exists", name);
    }
    for (size_t i = 0; i < cty->nfields; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(cty->fields[i], cty->fields[j]) == 0)
                return cql_fail(c, CQL_ERR_INVALID, "Duplicate field name '%s' in type '%s'",
                                cty->fields[i], name);
    arena arena;
    arena_init(&arena, 1 << 20);
    cqltype_env env;
    cql_type_env(st, ks, &arena, &env);
    json_t *fields = json_array(), *types = json_array();
    int rc = -1;
    for (size_t i = 0; i < cty->nfields; i++) {
        const cql_ctype *ty;
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (cqltype_resolve(&arena, cty->types[i], &env, &ty, &perr) != 0) {
            cql_fail_parsed(c, &perr);
            goto done;
        }
        if (cqltype_uses_udt(ty, ks, name)) {
            cql_fail(c, CQL_ERR_INVALID, "Cannot create type %s that references itself", name);
            goto done;
        }
        if (ty->wire.id == CQL_TYPE_UDT && cqltype_is_multicell(ty)) {
            cql_fail(c, CQL_ERR_INVALID, "A user type cannot contain non-frozen UDTs");
            goto done;
        }
        if (cqltype_has_counter(ty)) {
            cql_fail(c, CQL_ERR_INVALID, "A user type cannot contain counters");
            goto done;
        }
        char *tn = type_name_of(c, ty);
        if (tn == NULL) goto done;
        json_array_append_new(fields, json_string(cty->fields[i]));
        json_array_append_new(types, json_string(tn));
        free(tn);
    }
    json_t *next = json_deep_copy(st->schema->doc);
    json_object_set_new(json_object_get(json_object_get(keyspaces_of(next), ks), "types"), name,
                        json_pack("{s:O,s:O}", "fields", fields, "types", types));
    rc = commit_doc(c, st, next);
    json_decref(next);
    if (rc == 0) rc = cql_schema_changed(c, "CREATED", "TYPE", ks, name);
done:
    json_decref(fields);
    json_decref(types);
    arena_free(&arena);
    return rc;
}

static int drop_type(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    const char *name = s->name.name;
    if (!cql_schema_keyspace(st->schema, ks) || !cql_schema_type(st->schema, ks, name)) {
        if (s->if_exists) return answer_void(c);
        if (!cql_schema_keyspace(st->schema, ks))
            return cql_fail(c, CQL_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
        return cql_fail(c, CQL_ERR_INVALID, "Type '%s.%s' doesn't exist", ks, name);
    }
    char by[128];
    int used = type_used_by(c, st, ks, name, by, sizeof by);
    if (used == 1)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot drop user type '%s.%s' as it is still used by table %s", ks, name,
                        by);
    if (used == 2)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot drop user type '%s.%s' as it is still used by user type %s", ks,
                        name, by);
    json_t *next = json_deep_copy(st->schema->doc);
    json_object_del(json_object_get(json_object_get(keyspaces_of(next), ks), "types"), name);
    int rc = commit_doc(c, st, next);
    json_decref(next);
    return rc ? rc : cql_schema_changed(c, "DROPPED", "TYPE", ks, name);
}

/* A key for a new field of a type whose fields were renamed: its name, unless a renamed
 * field's values are stored under it, then the name with a numbered suffix. */
static json_t *unused_stored_name(json_t *stored, const char *name)
{
    char key[300];
    snprintf(key, sizeof key, "%s", name);
    for (int n = 1;; n++) {
        int used = 0;
        size_t i;
        json_t *k;
        json_array_foreach(stored, i, k) used |= strcmp(json_string_value(k), key) == 0;
        if (!used) return json_string(key);
        snprintf(key, sizeof key, "%s~%d", name, n);
    }
}

/* Whether a partition key column of a table or view of keyspace ks holds type name; out
 * gets their names ("ks.t1, ks.t2"). A type in a key may gain no field: its values would
 * no longer match the keys stored. */
static int tables_keyed_by_type(cql_state *st, const char *ks, const char *name, cqltype_env *env,
                                arena *arena, char *out, size_t cap)
{
    json_t *kso = cql_schema_keyspace(st->schema, ks);
    static const char *const kinds[] = {"tables", "views"};
    size_t len = 0;
    out[0] = '\0';
    for (size_t k = 0; k < 2; k++) {
        const char *tname;
        json_t *t;
        json_object_foreach(json_object_get(kso, kinds[k]), tname, t)
        {
            size_t i;
            json_t *col;
            json_array_foreach(json_object_get(t, "columns"), i, col)
            {
                const char *kind = json_string_value(json_object_get(col, "kind"));
                const char *text = json_string_value(json_object_get(col, "type"));
                if (!kind || strcmp(kind, "partition_key") != 0 || !text) continue;
                const cql_ctype *ty;
                cql_parse_error perr;
                memset(&perr, 0, sizeof perr);
                if (cqltype_parse(arena, text, strlen(text), env, &ty, &perr) == 0 &&
                    cqltype_uses_udt(ty, ks, name)) {
                    int n = snprintf(out + len, cap - len, "%s%s.%s", len ? ", " : "", ks, tname);
                    if (n > 0) len = len + (size_t)n < cap ? len + (size_t)n : cap - 1;
                    break;
                }
            }
        }
    }
    return len > 0;
}

static int alter_type(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const cql_alter_type *aty = &s->u.alter_type;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    const char *name = s->name.name;
    if (!cql_schema_keyspace(st->schema, ks) || !cql_schema_type(st->schema, ks, name)) {
        if (s->if_exists) return answer_void(c);
        return cql_fail(c, CQL_ERR_INVALID, "Type '%s.%s' doesn't exist", ks, name);
    }
    json_t *next = json_deep_copy(st->schema->doc);
    json_t *ty =
        json_object_get(json_object_get(json_object_get(keyspaces_of(next), ks), "types"), name);
    json_t *fields = json_object_get(ty, "fields"), *types = json_object_get(ty, "types");
    int rc = -1;
    arena arena;
    arena_init(&arena, 1 << 20);
    if (aty->what == CQL_ALTER_ADD) {
        size_t i;
        json_t *f;
        json_array_foreach(fields, i, f)
        {
            if (strcmp(json_string_value(f), aty->fields[0]) == 0) {
                if (aty->if_field) {
                    rc = answer_void(c);
                } else {
                    cql_fail(c, CQL_ERR_INVALID,
                             "Cannot add new field %s to type %s.%s: a field with name %s "
                             "already exists",
                             aty->fields[0], ks, name, aty->fields[0]);
                }
                goto done;
            }
        }
        cqltype_env env;
        cql_type_env(st, ks, &arena, &env);
        const cql_ctype *t;
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (cqltype_resolve(&arena, aty->type, &env, &t, &perr) != 0) {
            cql_fail_parsed(c, &perr);
            goto done;
        }
        if (t->wire.id == CQL_TYPE_UDT && cqltype_is_multicell(t)) {
            cql_fail(c, CQL_ERR_INVALID, "A user type cannot contain non-frozen UDTs");
            goto done;
        }
        if (cqltype_uses_udt(t, ks, name)) {
            char *tn = type_name_of(c, t);
            cql_fail(c, CQL_ERR_INVALID,
                     "Cannot add new field %s of type %s to user type %s.%s as it would create "
                     "a circular reference",
                     aty->fields[0], tn ? tn : "?", ks, name);
            free(tn);
            goto done;
        }
        char *tn = type_name_of(c, t);
        if (tn == NULL) goto done;
        char keyed[1024];
        if (tables_keyed_by_type(st, ks, name, &env, &arena, keyed, sizeof keyed)) {
            cql_fail(c, CQL_ERR_INVALID,
                     "Cannot add new field %s of type %s to user type %s.%s as the type is being "
                     "used in partition key by the following tables: %s",
                     aty->fields[0], tn, ks, name, keyed);
            free(tn);
            goto done;
        }
        json_array_append_new(fields, json_string(aty->fields[0]));
        json_array_append_new(types, json_string(tn));
        free(tn);
        json_t *stored = json_object_get(ty, "stored");
        if (stored) json_array_append_new(stored, unused_stored_name(stored, aty->fields[0]));
    } else if (aty->what == CQL_ALTER_RENAME) {
        for (size_t k = 0; k < aty->nfields; k++) {
            size_t i, found = (size_t)-1;
            json_t *f;
            json_array_foreach(fields, i, f)
            {
                if (strcmp(json_string_value(f), aty->fields[k]) == 0) found = i;
                if (strcmp(json_string_value(f), aty->to[k]) == 0) {
                    cql_fail(c, CQL_ERR_INVALID, "Duplicate field name %s in type %s", aty->to[k],
                             name);
                    goto done;
                }
            }
            if (found == (size_t)-1) {
                if (aty->if_field) continue;
                cql_fail(c, CQL_ERR_INVALID, "Unkown field %s in user type %s.%s", aty->fields[k],
                         ks, name);
                goto done;
            }
            /* the values stay under the name they were written with */
            if (json_object_get(ty, "stored") == NULL)
                json_object_set_new(ty, "stored", json_deep_copy(fields));
            json_array_set_new(fields, found, json_string(aty->to[k]));
        }
    } else {
        cql_fail(c, CQL_ERR_INVALID, "Altering field types is no longer supported");
        goto done;
    }
    rc = commit_doc(c, st, next);
    if (rc == 0) rc = cql_schema_changed(c, "UPDATED", "TYPE", ks, name);
done:
    arena_free(&arena);
    json_decref(next);
    return rc;
}

/* ---- secondary indexes: global indexes of the engine table ---- */

/* The DynamoDB type a column's stored values have (value.h's cqlval_to_item), when one
 * key type holds all of them; 0 for a type keyed by its bytes instead. */
static char index_key_type(const char *type)
{
    static const char *const strings[] = {"ascii", "text",      "varchar", "uuid", "timeuuid",
                                          "inet",  "timestamp", "date",    "time"};
    static const char *const numbers[] = {"int", "bigint", "smallint", "tinyint"};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if (strcmp(type, strings[i]) == 0) return 'S';
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        if (strcmp(type, numbers[i]) == 0) return 'N';
    if (strcmp(type, "blob") == 0) return 'B';
    return 0;
}

/* The keyspace's table holding index name, or NULL. */
static const char *index_table(json_t *ks, const char *name)
{
    const char *tname;
    json_t *t;
    json_object_foreach(json_object_get(ks, "tables"), tname, t)
    {
        if (json_object_get(json_object_get(t, "indexes"), name)) return tname;
    }
    return NULL;
}

void cql_index_engine_name(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "cql.%s", name);
}

/* Adds (create) or removes a global index of ks.table through UpdateTable. */
static int engine_index(cql_call *c, const char *ks, const char *table, const char *name,
                        const char *attr, char type, int create)
{
    char full[2 * CQL_NAME_MAX + 2], ixname[CQL_NAME_MAX + 8];
    snprintf(full, sizeof full, "%s.%s", ks, table);
    cql_index_engine_name(name, ixname, sizeof ixname);
    char t[2] = {type, 0};
    json_t *req = create
                      ? json_pack("{s:s, s:[{s:s,s:s}], s:[{s:{s:s, s:[{s:s,s:s}], s:{s:s}}}]}",
                                  "TableName", full, "AttributeDefinitions", "AttributeName", attr,
                                  "AttributeType", t, "GlobalSecondaryIndexUpdates", "Create",
                                  "IndexName", ixname, "KeySchema", "AttributeName", attr,
                                  "KeyType", "HASH", "Projection", "ProjectionType", "KEYS_ONLY")
                      : json_pack("{s:s, s:[{s:{s:s}}]}", "TableName", full,
                                  "GlobalSecondaryIndexUpdates", "Delete", "IndexName", ixname);
    if (req == NULL) return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    json_t *answer = NULL;
    qr_err err;
    err_init(&err);
    int rc = op_run(c->db, op_update_table, req, &answer, &err);
    json_decref(req);
    json_decref(answer);
    if (rc != 0)
        return cql_fail(c, CQL_ERR_INVALID, "The index %s cannot be %s: %s", name,
                        create ? "made" : "dropped", err.msg);
    return 0;
}

/* 1 when ks.table's engine table has the global index of CQL index name. */
static int engine_index_exists(cql_call *c, const char *ks, const char *table, const char *name)
{
    char full[2 * CQL_NAME_MAX + 2], ixname[CQL_NAME_MAX + 8];
    snprintf(full, sizeof full, "%s.%s", ks, table);
    cql_index_engine_name(name, ixname, sizeof ixname);
    struct table *et = catalog_get(c->db, full);
    int found = et && table_index(et, ixname) != NULL;
    if (et) catalog_release(c->db, et);
    return found;
}

/* Waits, a minute at most, until no global index of ks.table's engine table is being
 * built: the engine builds one at a time per table, as DynamoDB does, where Cassandra
 * takes CREATE INDEX statements back to back. */
static void await_index_builds(cql_call *c, const char *ks, const char *table)
{
    char full[2 * CQL_NAME_MAX + 2];
    snprintf(full, sizeof full, "%s.%s", ks, table);
    for (int waited_ms = 0; waited_ms < 60000; waited_ms += 10) {
        struct table *et = catalog_get(c->db, full);
        int busy = 0;
        for (size_t i = 0; et && i < table_index_count(et); i++)
            busy |= table_indexes(et)[i].creating;
        if (et) catalog_release(c->db, et);
        if (!busy) return;
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
}

/* Checks a target of CREATE INDEX on column name of type ty as Cassandra does, with its
 * messages, in its order; only_pk: the column is the table's only partition key column.
 * *kind becomes the kind the index has (a plain target on a collection indexes its
 * values). 0, or -1 with the error set. */
static int check_index_target(cql_call *c, const char *name, const cql_ctype *ty, int only_pk,
                              int *kind)
{
    int collection = cqltype_is_collection(ty);
    int frozen_collection = collection && ty->frozen;
    if (*kind == CQL_INDEX_SIMPLE && collection) *kind = CQL_INDEX_VALUES;
    if (cqltype_has_duration(ty))
        return cql_fail(c, CQL_ERR_INVALID, "Secondary indexes are not supported on %s",
                        collection                      ? "collections containing durations"
                        : ty->wire.id == CQL_TYPE_TUPLE ? "tuples containing durations"
                        : ty->wire.id == CQL_TYPE_UDT   ? "UDTs containing durations"
                                                        : "duration columns");
    if (only_pk)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot create secondary index on the only partition key column %s", name);
    if (frozen_collection && *kind != CQL_INDEX_FULL)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot create %s() index on frozen column %s. Frozen collections are "
                        "immutable and must be fully indexed by using the 'full(%s)' modifier",
                        cql_index_kind_name(*kind), name, name);
    if (!frozen_collection && *kind == CQL_INDEX_FULL)
        return cql_fail(c, CQL_ERR_INVALID,
                        "full() indexes can only be created on frozen collections");
    if (!collection && *kind != CQL_INDEX_SIMPLE)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot create %s() index on %s. Non-collection columns only support "
                        "simple indexes",
                        cql_index_kind_name(*kind), name);
    if ((*kind == CQL_INDEX_KEYS || *kind == CQL_INDEX_ENTRIES) &&
        (ty->wire.id != CQL_TYPE_MAP || ty->frozen))
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot create index on %s of column %s with non-map type",
                        cql_index_kind_name(*kind), name);
    if (ty->wire.id == CQL_TYPE_UDT && !ty->frozen)
        return cql_fail(c, CQL_ERR_INVALID, "Cannot create index on non-frozen UDT column %s",
                        name);
    return 0;
}

/* The name Cassandra gives an index made without one: table_column_idx without the
 * characters that are not word characters, and _1, _2, ... after it when the keyspace has
 * an index of that name. 0, or -1 with the error set when it does not fit. */
static int default_index_name(cql_call *c, json_t *kso, const char *table, const char *column,
                              char *out, size_t cap)
{
    char base[3 * CQL_NAME_MAX + 8];
    size_t n = 0;
    const char *parts[3] = {table, column, "idx"};
    for (size_t p = 0; p < 3; p++) {
        if (p) base[n++] = '_';
        for (const char *q = parts[p]; *q && n + 1 < sizeof base; q++)
            if (*q == '_' || (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') ||
                (*q >= 'A' && *q <= 'Z'))
                base[n++] = *q;
    }
    base[n] = '\0';
    int fits = snprintf(out, cap, "%s", base) < (int)cap;
    for (unsigned i = 1; fits && index_table(kso, out); i++)
        fits = snprintf(out, cap, "%s_%u", base, i) < (int)cap;
    if (!fits)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Index name %s is longer than the %d characters an index name may have "
                        "here: name the index",
                        base, (int)cap - 1);
    return 0;
}

static int create_index(cql_run *r, const cql_stmt *s, cql_state *st, char *made)
{
    cql_call *c = r->call;
    const cql_create_index *ci = &s->u.create_index;
    const char *ks = NULL;
    int voided;
    cql_stmt named = *s;
    named.if_exists = 0;
    made[0] = '\0';
    json_t *t = table_for(c, st, &named, &ks, &voided, 0,
                          "Secondary indexes on materialized views aren't supported");
    if (t == NULL) return -1;
    json_t *kso = cql_schema_keyspace(st->schema, ks);
    if (ci->index && index_table(kso, ci->index)) {
        if (s->if_not_exists) return answer_void(c);
        return cql_fail(c, CQL_ERR_INVALID, "Index '%s' already exists", ci->index);
    }
    if (json_is_true(json_object_get(t, "counter")))
        return cql_fail(c, CQL_ERR_INVALID, "Secondary indexes on counter tables aren't supported");
    if (ci->custom || ci->using_class)
        return cql_fail(c, CQL_ERR_INVALID, "Custom indexes are not supported here: %s",
                        ci->using_class ? ci->using_class : "CUSTOM");
    if (ci->ntargets != 1)
        return cql_fail(c, CQL_ERR_INVALID, "Only CUSTOM indexes support multiple columns");
    const cql_index_target *tg = &ci->targets[0];
    json_t *col = find_column(t, tg->column, NULL);
    if (col == NULL)
        return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s", tg->column,
                        ks, s->name.name);
    const char *type = json_string_value(json_object_get(col, "type"));
    const char *kind = json_string_value(json_object_get(col, "kind"));
    size_t npk = 0, i;
    json_t *key_col;
    json_array_foreach(json_object_get(t, "columns"), i, key_col)
    {
        npk += strcmp(json_string_value(json_object_get(key_col, "kind")), "partition_key") == 0;
    }
    arena arena;
    arena_init(&arena, 0);
    cqltype_env env;
    cql_type_env(st, ks, &arena, &env);
    const cql_ctype *ty = NULL;
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    int target_kind = (int)tg->kind;
    int rc = cqltype_parse(&arena, type, strlen(type), &env, &ty, &perr) != 0
                 ? cql_fail(c, CQL_ERR_SERVER, "the stored type of %s cannot be read", tg->column)
                 : check_index_target(c, tg->column, ty,
                                      strcmp(kind, "partition_key") == 0 && npk == 1, &target_kind);
    arena_free(&arena);
    if (rc) return -1;
    /* A column of a type no engine key type holds (floats, booleans, decimals, varints,
     * tuples, frozen UDTs), or whose values may be empty or longer than an engine key
     * (text, ascii, blob: Cassandra indexes '' and values up to 64 KB), is keyed as a
     * frozen collection is: by its value's bytes (hashed past a length), in an attribute
     * each write makes (keyed "bytes"). */
    char kt = target_kind == CQL_INDEX_SIMPLE ? index_key_type(type) : 'B';
    int by_bytes = target_kind == CQL_INDEX_SIMPLE &&
                   (kt == 0 || strcmp(type, "text") == 0 || strcmp(type, "varchar") == 0 ||
                    strcmp(type, "ascii") == 0 || strcmp(type, "blob") == 0);
    if (by_bytes) kt = 'B';
    char name[CQL_NAME_MAX];
    if (ci->index) {
        /* Cassandra's names of indexes are word characters */
        size_t n = strlen(ci->index);
        int word = n > 0;
        for (const char *q = ci->index; *q; q++)
            word &= *q == '_' || (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') ||
                    (*q >= 'A' && *q <= 'Z');
        if (!word) return cql_fail(c, CQL_ERR_CONFIG, "Illegal index name %s", ci->index);
        if (n >= sizeof name)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Index name %.*s... is longer than the %d characters an index name "
                            "may have here",
                            24, ci->index, (int)sizeof name - 1);
        snprintf(name, sizeof name, "%s", ci->index);
    } else if (default_index_name(c, kso, s->name.name, tg->column, name, sizeof name) != 0) {
        return -1;
    }
    /* the target as system_schema.indexes gives it: values(tags), or the column */
    char target[2 * CQL_NAME_MAX + 16];
    if (cql_index_target_format(target_kind, tg->column, target, sizeof target) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "the target of index %s cannot be written", name);
    /* an index on the same target, whatever its name, is a duplicate */
    const char *other;
    json_t *iv;
    json_object_foreach(json_object_get(t, "indexes"), other, iv)
    {
        char ocol[CQL_NAME_MAX];
        int okind;
        const char *otarget = json_string_value(json_object_get(iv, "target"));
        if (otarget == NULL) continue;
        cql_index_target_parse(otarget, &okind, ocol, sizeof ocol);
        if (okind == target_kind && strcmp(ocol, tg->column) == 0) {
            if (s->if_not_exists) return answer_void(c);
            return cql_fail(c, CQL_ERR_INVALID, "Index %s is a duplicate of existing index %s",
                            name, other);
        }
    }
    /* A plain index (on a regular, static, clustering or partition key column: every row
     * holds the key columns' attributes too) keys the column's own attribute. An index on
     * a collection keys an attribute each write makes from the collection: the schema
     * names the index first, so writes make it, and the engine index follows once the
     * stored rows have it (index_stored_rows, after this statement). */
    if (target_kind == CQL_INDEX_SIMPLE && !by_bytes) {
        char attr[CQL_NAME_MAX + 2];
        const json_t *tcol = find_column(t, tg->column, NULL);
        cql_cell_attr(tcol ? stored_name(tcol) : tg->column, attr, sizeof attr);
        if (engine_index(c, ks, s->name.name, name, attr, kt, 1) != 0) return -1;
    }
    json_t *next = json_deep_copy(st->schema->doc);
    json_t *nt = json_object_get(json_object_get(json_object_get(keyspaces_of(next), ks), "tables"),
                                 s->name.name);
    json_t *ni = json_object_get(nt, "indexes");
    if (ni == NULL) json_object_set_new(nt, "indexes", ni = json_object());
    json_t *iv_new = json_pack("{s:s,s:s}", "target", target, "kind", "COMPOSITES");
    if (by_bytes) json_object_set_new(iv_new, "keyed", json_string("bytes"));
    json_object_set_new(ni, name, iv_new);
    rc = commit_doc(c, st, next);
    json_decref(next);
    if (rc == 0 && (target_kind != CQL_INDEX_SIMPLE || by_bytes))
        snprintf(made, CQL_NAME_MAX, "%s", name);
    return rc ? rc : cql_schema_changed(c, "UPDATED", "TABLE", ks, s->name.name);
}

/* After CREATE INDEX on a collection committed its schema (the state's lock let go):
 * the stored rows get the index's attribute, then the engine index is made over them;
 * reads refuse the index as being built until it is. */
static int index_stored_rows(cql_call *c, const cql_stmt *s, cql_state *st, const char *name)
{
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    cql_tinfo t;
    int rc = cql_tinfo_load(c, ks, s->name.name, &t);
    if (rc == 0) rc = cql_index_rows(c, &t);
    cql_tinfo_free(&t);
    if (rc) return -1;
    char attr[CQL_NAME_MAX + 4];
    cql_index_attr(name, attr, sizeof attr);
    await_index_builds(c, ks, s->name.name);
    pthread_mutex_lock(&st->lock);
    rc = engine_index(c, ks, s->name.name, name, attr, 'B', 1);
    pthread_mutex_unlock(&st->lock);
    if (rc) return rc;
    /* A write that began before the schema named the index, and committed after its row
     * was indexed, wrote the row without the attribute: once the engine index is built,
     * a second pass writes what such rows lack (through the index now). */
    await_index_builds(c, ks, s->name.name);
    rc = cql_tinfo_load(c, ks, s->name.name, &t);
    if (rc == 0) rc = cql_index_rows(c, &t);
    cql_tinfo_free(&t);
    return rc;
}

/* Drops the index; *unindexed names its table when the index was on a collection, whose
 * rows then hold its attribute until unindex_stored_rows removes it. */
static int drop_index(cql_run *r, const cql_stmt *s, cql_state *st, char *unindexed)
{
    cql_call *c = r->call;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    json_t *kso = cql_schema_keyspace(st->schema, ks);
    const char *table = kso ? index_table(kso, s->name.name) : NULL;
    if (table == NULL) {
        if (s->if_exists) return answer_void(c);
        return cql_fail(c, CQL_ERR_INVALID, "Index '%s.%s' doesn't exist", ks, s->name.name);
    }
    char tname[CQL_NAME_MAX];
    snprintf(tname, sizeof tname, "%s", table);
    json_t *iv = json_object_get(
        json_object_get(json_object_get(json_object_get(kso, "tables"), tname), "indexes"),
        s->name.name);
    int kind = CQL_INDEX_SIMPLE;
    char column[CQL_NAME_MAX];
    const char *target = json_string_value(json_object_get(iv, "target"));
    if (target) cql_index_target_parse(target, &kind, column, sizeof column);
    int keyed_by_bytes = json_object_get(iv, "keyed") != NULL;
    /* an index on a collection has no engine index until its rows are indexed */
    if (engine_index_exists(c, ks, tname, s->name.name) &&
        engine_index(c, ks, tname, s->name.name, NULL, 0, 0) != 0)
        return -1;
    json_t *next = json_deep_copy(st->schema->doc);
    json_object_del(
        json_object_get(
            json_object_get(json_object_get(json_object_get(keyspaces_of(next), ks), "tables"),
                            tname),
            "indexes"),
        s->name.name);
    int rc = commit_doc(c, st, next);
    json_decref(next);
    if (rc == 0 && (kind != CQL_INDEX_SIMPLE || keyed_by_bytes))
        snprintf(unindexed, CQL_NAME_MAX, "%s", tname);
    return rc ? rc : cql_schema_changed(c, "UPDATED", "TABLE", ks, tname);
}

/* After DROP INDEX of an index on a collection committed its schema (the state's lock let
 * go): the stored rows of table lose the index's attribute, which no read sees and no
 * size should count. */
static int unindex_stored_rows(cql_call *c, const cql_stmt *s, const char *table)
{
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    cql_tinfo t;
    int rc = cql_tinfo_load(c, ks, table, &t);
    if (rc == 0) rc = cql_index_rows(c, &t);
    cql_tinfo_free(&t);
    return rc;
}

/* ---- materialized views: global indexes of the base's engine table ---- */

static int create_view(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const cql_create_view *cv = &s->u.create_view;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    const char *bks = cv->base.ks ? cv->base.ks : ks;
    if (strcmp(bks, ks) != 0)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot create a materialized view on a table in a different keyspace");
    json_t *kso = cql_schema_keyspace(st->schema, ks);
    if (kso == NULL) return cql_fail(c, CQL_ERR_INVALID, "Keyspace '%s' doesn't exist", ks);
    const char *name = s->name.name;
    if (json_object_get(json_object_get(kso, "views"), name) ||
        json_object_get(json_object_get(kso, "tables"), name)) {
        if (s->if_not_exists) return answer_void(c);
        snprintf(c->err_keyspace, sizeof c->err_keyspace, "%s", ks);
        snprintf(c->err_name, sizeof c->err_name, "%s", name);
        return cql_fail(c, CQL_ERR_ALREADY_EXISTS,
                        "Cannot add already existing table \"%s\" to keyspace \"%s\"", name, ks);
    }
    if (!name_valid(name)) return bad_table_name(c, ks, name);
    json_t *base = json_object_get(json_object_get(kso, "tables"), cv->base.name);
    if (base == NULL) return cql_fail(c, CQL_ERR_INVALID, "table %s does not exist", cv->base.name);
    if (json_is_true(json_object_get(base, "counter")))
        return cql_fail(c, CQL_ERR_INVALID,
                        "Materialized views are not supported on counter tables");
    const cql_pkey *pk = &cv->pk;
    size_t nkey = pk->npartition + pk->nclustering;
    if (pk->npartition > 4 || pk->nclustering > 4)
        return cql_fail(c, CQL_ERR_INVALID,
                        "A view's key here has at most 4 partition and 4 clustering columns");
    /* every base key column in the view's key, at most one other column */
    size_t nonkey = 0;
    char others[256] = "";
    for (size_t i = 0; i < nkey; i++) {
        const char *kc = i < pk->npartition ? pk->partition[i] : pk->clustering[i - pk->npartition];
        json_t *col = find_column(base, kc, NULL);
        if (col == NULL)
            return cql_fail(
                c, CQL_ERR_INVALID,
                "Unknown column name detected in CREATE MATERIALIZED VIEW statement: %s", kc);
        const char *kind = json_string_value(json_object_get(col, "kind"));
        if (strcmp(kind, "static") == 0)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Cannot use Static column '%s' in PRIMARY KEY of materialized view",
                            kc);
        if (!is_key(col)) {
            nonkey++;
            snprintf(others + strlen(others), sizeof others - strlen(others), "%s%s",
                     others[0] ? ", " : "", kc);
        }
        if (index_key_type(json_string_value(json_object_get(col, "type"))) == 0)
            return cql_fail(c, CQL_ERR_INVALID,
                            "The view key column %s has a type a view here cannot key: %s", kc,
                            json_string_value(json_object_get(col, "type")));
        int restricted = 0;
        for (size_t w = 0; w < cv->where.n; w++)
            restricted |= cv->where.rels[w].op == CQL_OP_IS_NOT_NULL &&
                          strcmp(cv->where.rels[w].columns[0], kc) == 0;
        if (!restricted)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Primary key column '%s' is required to be filtered by 'IS NOT NULL'",
                            kc);
    }
    if (nonkey > 1)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot include more than one non-primary key column in materialized view "
                        "primary key (got %s)",
                        others);
    size_t i;
    json_t *bc;
    json_array_foreach(json_object_get(base, "columns"), i, bc)
    {
        if (!is_key(bc)) continue;
        const char *bn = json_string_value(json_object_get(bc, "name"));
        int in = 0;
        for (size_t k = 0; k < nkey; k++)
            in |= strcmp(bn, k < pk->npartition ? pk->partition[k]
                                                : pk->clustering[k - pk->npartition]) == 0;
        if (!in)
            return cql_fail(c, CQL_ERR_INVALID,
                            "Cannot create Materialized View %s without primary key columns from "
                            "base %s (%s)",
                            name, cv->base.name, bn);
    }
    for (size_t w = 0; w < cv->where.n; w++)
        if (cv->where.rels[w].op != CQL_OP_IS_NOT_NULL)
            return cql_fail(c, CQL_ERR_INVALID, "A view here is restricted by IS NOT NULL only");
    /* the view's columns: its key, then the selected (or every) other column */
    json_t *cols = json_array();
    for (size_t k = 0; k < nkey; k++) {
        const char *kc = k < pk->npartition ? pk->partition[k] : pk->clustering[k - pk->npartition];
        json_t *col = json_deep_copy(find_column(base, kc, NULL));
        int part = k < pk->npartition;
        size_t pos = part ? k : k - pk->npartition;
        int desc = !part && pos < cv->opts.norder && cv->opts.clustering_order[pos].desc;
        json_object_set_new(col, "kind", json_string(part ? "partition_key" : "clustering"));
        json_object_set_new(col, "position", json_integer((json_int_t)pos));
        json_object_set_new(col, "order", json_string(part ? "none" : desc ? "desc" : "asc"));
        json_array_append_new(cols, col);
    }
    json_array_foreach(json_object_get(base, "columns"), i, bc)
    {
        const char *bn = json_string_value(json_object_get(bc, "name"));
        int keyed = 0;
        for (size_t k = 0; k < nkey; k++)
            keyed |= strcmp(bn, k < pk->npartition ? pk->partition[k]
                                                   : pk->clustering[k - pk->npartition]) == 0;
        if (keyed || strcmp(json_string_value(json_object_get(bc, "kind")), "static") == 0)
            continue;
        int selected = cv->nsel == 0;
        for (size_t k = 0; k < cv->nsel; k++)
            selected |=
                cv->sel[k].expr->kind == CQL_E_COLUMN && strcmp(cv->sel[k].expr->text, bn) == 0;
        if (!selected) continue;
        json_t *col = json_deep_copy(bc);
        json_object_set_new(col, "kind", json_string("regular"));
        json_object_set_new(col, "position", json_integer(-1));
        json_object_set_new(col, "order", json_string("none"));
        json_array_append_new(cols, col);
    }
    sort_columns(cols);
    json_t *opts = default_options();
    char id[37];
    cql_uuid_random(id);
    if (table_props(c, &cv->opts.props, opts, id) != 0) {
        json_decref(cols);
        json_decref(opts);
        return -1;
    }
    if (json_integer_value(json_object_get(opts, "default_time_to_live")) > 0) {
        json_decref(cols);
        json_decref(opts);
        return cql_fail(c, CQL_ERR_INVALID,
                        "Cannot set default_time_to_live for a materialized view. Data in a "
                        "materialized view always expire at the same time than the "
                        "corresponding data in the parent table.");
    }
    /* the engine's index: the view's partition key and clustering as its key, all of the
     * item projected */
    char full[2 * CQL_NAME_MAX + 2];
    snprintf(full, sizeof full, "%s.%s", ks, cv->base.name);
    json_t *defs = json_array(), *keys = json_array();
    for (size_t k = 0; k < nkey; k++) {
        const char *kc = k < pk->npartition ? pk->partition[k] : pk->clustering[k - pk->npartition];
        char attr[CQL_NAME_MAX + 2];
        const json_t *kcol = find_column(base, kc, NULL);
        cql_cell_attr(kcol ? stored_name(kcol) : kc, attr, sizeof attr);
        char t[2] = {
            index_key_type(json_string_value(json_object_get(find_column(base, kc, NULL), "type"))),
            0};
        json_array_append_new(defs,
                              json_pack("{s:s,s:s}", "AttributeName", attr, "AttributeType", t));
        json_array_append_new(keys, json_pack("{s:s,s:s}", "AttributeName", attr, "KeyType",
                                              k < pk->npartition ? "HASH" : "RANGE"));
    }
    char ixname[CQL_NAME_MAX + 8];
    cql_index_engine_name(name, ixname, sizeof ixname);
    json_t *req =
        json_pack("{s:s, s:o, s:[{s:{s:s, s:o, s:{s:s}}}]}", "TableName", full,
                  "AttributeDefinitions", defs, "GlobalSecondaryIndexUpdates", "Create",
                  "IndexName", ixname, "KeySchema", keys, "Projection", "ProjectionType", "ALL");
    json_t *answer = NULL;
    qr_err err;
    err_init(&err);
    int rc = op_run(c->db, op_update_table, req, &answer, &err);
    json_decref(answer);
    json_decref(req);
    if (rc != 0) {
        json_decref(cols);
        json_decref(opts);
        return cql_fail(c, CQL_ERR_INVALID, "The view %s cannot be made: %s", name, err.msg);
    }
    buf where;
    buf_init(&where, 0);
    for (size_t w = 0; w < cv->where.n; w++)
        buf_printf(&where, "%s%s IS NOT NULL", w ? " AND " : "", cv->where.rels[w].columns[0]);
    json_t *next = json_deep_copy(st->schema->doc);
    json_t *nks = json_object_get(keyspaces_of(next), ks);
    json_t *views = json_object_get(nks, "views");
    if (views == NULL) json_object_set_new(nks, "views", views = json_object());
    json_object_set_new(views, name,
                        json_pack("{s:s, s:s, s:O, s:O, s:s, s:b, s:O}", "id", id, "base",
                                  cv->base.name, "columns", cols, "options", opts, "where",
                                  where.data ? where.data : "", "include_all", cv->nsel == 0,
                                  "base_id", json_object_get(base, "id")));
    buf_free(&where);
    json_decref(cols);
    json_decref(opts);
    rc = commit_doc(c, st, next);
    json_decref(next);
    return rc ? rc : cql_schema_changed(c, "CREATED", "TABLE", ks, name);
}

static int drop_view(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    json_t *v = json_object_get(json_object_get(cql_schema_keyspace(st->schema, ks), "views"),
                                s->name.name);
    if (v == NULL) {
        if (s->if_exists) return answer_void(c);
        return cql_fail(c, CQL_ERR_INVALID, "Materialized view '%s' doesn't exist", s->name.name);
    }
    char base[CQL_NAME_MAX];
    snprintf(base, sizeof base, "%s", json_string_value(json_object_get(v, "base")));
    if (engine_index(c, ks, base, s->name.name, NULL, 0, 0) != 0) return -1;
    json_t *next = json_deep_copy(st->schema->doc);
    json_object_del(json_object_get(json_object_get(keyspaces_of(next), ks), "views"),
                    s->name.name);
    int rc = commit_doc(c, st, next);
    json_decref(next);
    return rc ? rc : cql_schema_changed(c, "DROPPED", "TABLE", ks, s->name.name);
}

/* ALTER MATERIALIZED VIEW v WITH ...: the view's options, as AlterViewStatement checks
 * them (no default TTL of its own, gc_grace_seconds not 0). */
static int alter_view(cql_run *r, const cql_stmt *s, cql_state *st)
{
    cql_call *c = r->call;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    if (json_object_get(json_object_get(cql_schema_keyspace(st->schema, ks), "views"),
                        s->name.name) == NULL) {
        if (s->if_exists) return answer_void(c);
        return cql_fail(c, CQL_ERR_INVALID, "Materialized view '%s.%s' doesn't exist", ks,
                        s->name.name);
    }
    json_t *next = json_deep_copy(st->schema->doc);
    json_t *v = json_object_get(json_object_get(json_object_get(keyspaces_of(next), ks), "views"),
                                s->name.name);
    json_t *opts = json_object_get(v, "options");
    int rc = table_props(c, &s->u.alter_view.props, opts, NULL);
    if (rc == 0 && json_integer_value(json_object_get(opts, "gc_grace_seconds")) == 0)
        rc = cql_fail(c, CQL_ERR_INVALID,
                      "Cannot alter gc_grace_seconds of a materialized view to 0, since this "
                      "value is used to TTL undelivered updates. Setting gc_grace_seconds too "
                      "low might cause undelivered updates to expire before being replayed.");
    if (rc == 0 && json_integer_value(json_object_get(opts, "default_time_to_live")) > 0)
        rc = cql_fail(c, CQL_ERR_INVALID,
                      "Cannot set or alter default_time_to_live for a materialized view. Data in "
                      "a materialized view always expire at the same time than the "
                      "corresponding data in the parent table.");
    if (rc == 0) rc = commit_doc(c, st, next);
    json_decref(next);
    return rc ? rc : cql_schema_changed(c, "UPDATED", "TABLE", ks, s->name.name);
}

int cql_exec_ddl(cql_run *r, const cql_stmt *s)
{
    cql_call *c = r->call;
    cql_state *st = cql_state_of(c);
    if (st == NULL) return -1;
    /* an index or a view is a global index of an engine table: one is built at a time */
    const cql_qname *indexed = s->kind == CQL_CREATE_INDEX  ? &s->name
                               : s->kind == CQL_CREATE_VIEW ? &s->u.create_view.base
                                                            : NULL;
    const char *indexed_ks = indexed ? cql_keyspace_of(c, indexed) : NULL;
    if (indexed && indexed_ks == NULL) return -1;
    if (indexed) await_index_builds(c, indexed_ks, indexed->name);
    pthread_mutex_lock(&st->lock);
    int rc;
    char unindexed[CQL_NAME_MAX] = "", to_index[CQL_NAME_MAX] = "";
    switch (s->kind) {
    case CQL_CREATE_KEYSPACE:
        rc = create_keyspace(r, s, st);
        break;
    case CQL_ALTER_KEYSPACE:
        rc = alter_keyspace(r, s, st);
        break;
    case CQL_DROP_KEYSPACE:
        rc = drop_keyspace(r, s, st);
        break;
    case CQL_CREATE_TABLE:
        rc = create_table(r, s, st);
        break;
    case CQL_ALTER_TABLE:
        rc = alter_table(r, s, st);
        break;
    case CQL_DROP_TABLE:
        rc = drop_table(r, s, st);
        break;
    case CQL_TRUNCATE:
        rc = truncate_table(r, s, st);
        break;
    case CQL_CREATE_TYPE:
        rc = create_type(r, s, st);
        break;
    case CQL_ALTER_TYPE:
        rc = alter_type(r, s, st);
        break;
    case CQL_DROP_TYPE:
        rc = drop_type(r, s, st);
        break;
    case CQL_CREATE_INDEX:
        rc = create_index(r, s, st, to_index);
        break;
    case CQL_DROP_INDEX:
        rc = drop_index(r, s, st, unindexed);
        break;
    case CQL_CREATE_VIEW:
        rc = create_view(r, s, st);
        break;
    case CQL_DROP_VIEW:
        rc = drop_view(r, s, st);
        break;
    case CQL_ALTER_VIEW:
        rc = alter_view(r, s, st);
        break;
    default:
        rc = cql_fail(c, CQL_ERR_INVALID, "%s is not a schema statement this executor runs",
                      "this statement");
        break;
    }
    pthread_mutex_unlock(&st->lock);
    if (rc == 0 && to_index[0]) rc = index_stored_rows(c, s, st, to_index);
    if (rc == 0 && unindexed[0]) rc = unindex_stored_rows(c, s, unindexed);
    return rc;
}
