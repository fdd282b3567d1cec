/* schema.h — the CQL schema of a database: keyspaces with their replication options,
 * tables with their columns, keys and WITH options, user-defined types; kept as one JSON
 * document in memory and, after every change, as a database record (engine/meta.h), so
 * it outlives qr_close. Each CQL table is also an engine table named "ks.t".
 *
 * It holds what was declared and answers lookups; it runs no statement and checks no
 * value (exec*.c do). Callers hold the state's lock around every use. */
#ifndef QR_CQL_SCHEMA_H
#define QR_CQL_SCHEMA_H

#include <jansson.h>
#include <stdint.h>

#include "quarry.h"
#include "util/err.h"

/* The document:
 *   {"version": uuid text (changes at every change), "host_id": uuid text,
 *    "keyspaces": {ks: {"replication": {text: text}, "durable_writes": bool,
 *                       "tables": {t: TABLE}, "types": {ty: {"fields": [names],
 *                       "types": [type text]}}}}}
 * TABLE: {"id": uuid text, "columns": [{"name", "type" (as system_schema writes it),
 *         "kind": "partition_key" | "clustering" | "static" | "regular",
 *         "position": n (-1 for static and regular), "order": "asc" | "desc" | "none"}],
 *         "options": {name: value as given (numbers, text, maps of text)}} */
typedef struct cql_schema {
    json_t *doc;
} cql_schema;

/* Loads db's schema (an empty one, with a new host id, when none was stored). */
int cql_schema_load(qr_db *db, cql_schema *s, qr_err *err);
void cql_schema_free(cql_schema *s);
/* Stores the document after a change, with a new version. */
int cql_schema_save(qr_db *db, cql_schema *s, qr_err *err);

/* Borrowed views into the document (NULL when absent). */
json_t *cql_schema_keyspace(const cql_schema *s, const char *ks);
json_t *cql_schema_table(const cql_schema *s, const char *ks, const char *table);
json_t *cql_schema_type(const cql_schema *s, const char *ks, const char *type);
const char *cql_schema_version(const cql_schema *s);
const char *cql_schema_host_id(const cql_schema *s);

/* A new random (version 4) uuid as text, and uuid text to its 16 bytes (0, or -1). */
void cql_uuid_random(char out[37]);
int cql_uuid_parse(const char *text, uint8_t out[16]);

#endif
