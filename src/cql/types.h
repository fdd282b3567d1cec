/* types.h — CQL column types: a type as written (cql_type_expr) resolved to the wire type
 * tree (cql_type) with frozen-ness kept at every node, user-defined types found through
 * the caller's lookup, Cassandra's refusals of types it does not allow, and the names
 * system_schema writes ("frozen<list<int>>", "map<text, int>") both ways.
 *
 * No values (value.h) and no schema: which column may have which type is the executor's. */
#ifndef QR_CQL_TYPES_H
#define QR_CQL_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "cql/ast.h"
#include "cqlwire/cql_codec.h"
#include "util/buf.h"

/* Errors: functions that fail fill a cql_parse_error (ast.h) the caller zeroed; the first
 * error set wins (a later one leaves it as it is).
 *
 * A resolved type. wire is what result metadata writes (pass &t->wire to value.h and
 * cql_put_type); wire.params[i] is &args[i]->wire, so a cql_type taken from a tree built
 * here may be turned back with cqltype_of. args are the element type (list, set), key and
 * value (map), components (tuple) or field types (UDT, named by wire.field_names). */
typedef struct cql_ctype cql_ctype;
struct cql_ctype {
    cql_type wire;
    const cql_ctype *const *args;
    int frozen; /* 1: a frozen collection or UDT, or a tuple (always frozen); 0: a native
                   type or a multi-cell (non-frozen) collection or UDT */
    /* UDT: the keys its fields are stored under, which stay when ALTER TYPE renames a
     * field (NULL: the field names) */
    const char *const *stored_names;
};

/* The key field i of UDT t is stored under. */
const char *cqltype_stored_name(const cql_ctype *t, uint16_t i);

/* The definition of user type ks.name: a cql_ctype of id CQL_TYPE_UDT with its fields
 * (frozen or not does not matter), or NULL when there is none. It is copied, so it need
 * only stay valid during the call. */
typedef const cql_ctype *(*cqltype_udt_fn)(void *ctx, const char *ks, const char *name);

/* Where a type is resolved: the statement's keyspace (user types are looked up in it)
 * and the lookup (NULL: no user type exists). */
typedef struct cqltype_env {
    const char *keyspace;
    cqltype_udt_fn udt;
    void *ctx;
} cqltype_env;

/* The shared, immutable type of a native id (CQL_TYPE_INT, CQL_TYPE_VARCHAR, ...), or
 * NULL for an id that is not a native type. */
const cql_ctype *cqltype_native(uint16_t id);

/* Resolves te (from a parse) into a tree allocated from a. Returns 0 with *out, or -1
 * with err (CQL_ERR_INVALID) set to Cassandra's message: "Unknown type ks.t",
 * "Non-frozen UDTs are not allowed inside collections: list<t>", "Non-frozen collections
 * are not allowed inside collections: list<set<int>>", "Counters are not allowed inside
 * collections: list<counter>", "Counters are not allowed inside tuples", "Durations are
 * not allowed inside sets: set<duration>", "Durations are not allowed as map keys: ...",
 * "frozen<> is only allowed on collections, tuples, and user-defined types (got int)",
 * "Statement on keyspace a cannot refer to a user type in keyspace b; ...", or
 * CQL_ERR_SERVER when a is full. A type nested in a frozen one is frozen, as Cassandra
 * freezes it; tuple components are frozen too. */
int cqltype_resolve(arena *a, const cql_type_expr *te, const cqltype_env *env,
                    const cql_ctype **out, cql_parse_error *err);

/* Parses a type string as system_schema writes it (what cqltype_name writes; also
 * 'varchar', quoted names and spaces anywhere) into a tree from a. UDT names are looked
 * up in env->keyspace. 0, or -1 with err: CQL_ERR_SYNTAX for text that is not a type,
 * CQL_ERR_INVALID as cqltype_resolve for a type Cassandra refuses. */
int cqltype_parse(arena *a, const char *text, size_t len, const cqltype_env *env,
                  const cql_ctype **out, cql_parse_error *err);

/* Appends t's name as system_schema.columns.type writes it: "text", "frozen<list<int>>",
 * "map<text, int>", "frozen<tuple<int, text>>", a UDT's name (quoted when it must be)
 * without its keyspace, frozen<...> around a frozen one. 0, or -1 when out is full. */
int cqltype_name(const cql_ctype *t, buf *out);

/* A deep copy of t in a (NULL when a is full): for a schema that outlives the parse. */
const cql_ctype *cqltype_copy(arena *a, const cql_ctype *t);

/* 1 when a and b are the same type (frozen-ness included), 0 otherwise. */
int cqltype_equal(const cql_ctype *a, const cql_ctype *b);

/* The cql_ctype whose wire member t is; t must come from a tree built by this module. */
static inline const cql_ctype *cqltype_of(const cql_type *t)
{
    return (const cql_ctype *)t;
}

/* 1 for list, set and map; 1 for a multi-cell (non-frozen) collection or UDT in
 * cqltype_is_multicell; 1 when t is or holds a counter / a duration anywhere. */
int cqltype_is_collection(const cql_ctype *t);
int cqltype_is_multicell(const cql_ctype *t);
int cqltype_has_counter(const cql_ctype *t);
int cqltype_has_duration(const cql_ctype *t);
/* 1 when t is or holds user type ks.name (for DROP TYPE's "still in use" check). */
int cqltype_uses_udt(const cql_ctype *t, const char *ks, const char *name);

/* Checks that t may be the type of PRIMARY KEY column `column`, with Cassandra's messages:
 * "Invalid non-frozen collection type for PRIMARY KEY component k", "Invalid non-frozen
 * user-defined type for PRIMARY KEY component k", "counter type is not
 * supported for PRIMARY KEY column 'k'", "duration type is not supported for PRIMARY KEY
 * column 'k'". 0, or -1 with err (CQL_ERR_INVALID). */
int cqltype_check_primary_key(const cql_ctype *t, const char *column, cql_parse_error *err);

/* Checks the fields of CREATE TYPE (names[i] of type types[i], as written) as Cassandra
 * does before resolving them: "Duplicate field name x in type t", "A user type cannot
 * contain counters", "A user type cannot contain non-frozen UDTs". 0, or -1 with err. */
int cqltype_check_udt_fields(const char *type_name, const char *const *names,
                             const cql_type_expr *const *types, size_t n, cql_parse_error *err);

#endif
