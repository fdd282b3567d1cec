/* func.h — Cassandra's native scalar functions on typed values: now(), uuid(),
 * currentTimestamp/Date/Time/TimeUUID(), toTimestamp, toDate, toUnixTimestamp, dateOf,
 * unixTimestampOf, minTimeuuid, maxTimeuuid, blobAs<type> and <type>AsBlob, toJson,
 * fromJson, and CAST; overloads resolved as Cassandra resolves them; version 1 timeuuids
 * made monotonic within the process.
 *
 * Values are wire bytes (value.h). token(), writetime() and ttl() need a row and are the
 * executor's; aggregates are aggregate.h's. */
#ifndef QR_CQL_FUNC_H
#define QR_CQL_FUNC_H

#include <stddef.h>
#include <stdint.h>

#include "cql/ast.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_codec.h"
#include "util/buf.h"

/* ---- timeuuids ---- */

/* A new version 1 timeuuid for the current time: each call in the process gets a greater
 * timestamp than the last (by 100 ns steps when the clock has not moved), with a clock
 * sequence and node drawn at random once per process. Thread-safe. */
void cqlfn_timeuuid_now(uint8_t out[16]);
/* The smallest and greatest timeuuid of millisecond ms, as minTimeuuid and maxTimeuuid
 * make them (for range queries on timeuuid columns). */
void cqlfn_timeuuid_min(int64_t ms, uint8_t out[16]);
void cqlfn_timeuuid_max(int64_t ms, uint8_t out[16]);
/* The millisecond a version 1 uuid's timestamp falls in (toTimestamp, dateOf). */
int64_t cqlfn_timeuuid_ms(const uint8_t u[16]);
/* A random (version 4) uuid, as uuid() makes. */
void cqlfn_uuid_random(uint8_t out[16]);

/* ---- functions ---- */

/* One native function overload (static; never freed). */
typedef struct cqlfn_fn cqlfn_fn;

/* Finds the overload of function name (lower case, as the parser folds it; an optional
 * "system." keyspace) for n arguments. types[i] is argument i's type when known (a
 * column, a nested call's result), else NULL, and then exprs[i] (may be NULL) is the term,
 * tested for assignability as Cassandra does (a string literal cannot be a timeuuid, ...).
 * receiver, when not NULL, is the type the result is assigned to: fromJson takes it as its
 * return type. Returns the overload, or NULL with err Invalid: "Unknown function foo",
 * "Invalid number of arguments in call to function system.now: 0 required but 1
 * provided", "Invalid call to function system.totimestamp, none of its type signatures
 * match (known type signatures: system.totimestamp : (timeuuid) -> timestamp, ...)",
 * "Ambiguous call to function ... : use type casts to disambiguate"; with a receiver,
 * a selection-only function (toJson) is refused as cqlfn_selection_only_error says. */
/* Whether function name (system. or not) may be called only in a SELECT's selection. */
int cqlfn_is_selection_only(const char *name);

/* Records Cassandra's Invalid for a selection-only function called in a term. */
int cqlfn_selection_only_error(cql_parse_error *err);

const cqlfn_fn *cqlfn_resolve(const char *name, const cql_ctype *const *types,
                              const cql_expr *const *exprs, size_t n, const cql_ctype *receiver,
                              cql_parse_error *err);

/* The function's name as Cassandra writes it in messages and column names
 * ("system.totimestamp"). */
const char *cqlfn_name(const cqlfn_fn *f);
/* Its result type (for fromJson: receiver, which must then be given). */
const cql_ctype *cqlfn_return_type(const cqlfn_fn *f, const cql_ctype *receiver);
/* The type argument i must have; for toJson's argument: actual (the argument's own type). */
const cql_ctype *cqlfn_arg_type(const cqlfn_fn *f, size_t i, const cql_ctype *actual);

/* Calls f on n argument values (len CQL_NULL for null) of types types[i] (the argument
 * types, as cqlfn_arg_type gives them), appending the result to out. ret is the result
 * type (cqlfn_return_type). Returns CQLVAL_OK, CQLVAL_NULL (most functions answer null for
 * a null argument), or CQLVAL_ERROR with err (Invalid: "In call to function
 * system.blobasint, value 0x01 is not a valid binary representation for type int"). */
int cqlfn_call(const cqlfn_fn *f, const cql_ctype *const *types, const cql_value *args, size_t n,
               const cql_ctype *ret, buf *out, cql_parse_error *err);

/* ---- CAST ---- */

/* Checks that CAST(x AS to) is one of the casts Cassandra's CastFcts defines: between the
 * numeric types (tinyint, smallint, int, bigint, varint, decimal, float, double; counter
 * as a source only), from numeric types, inet, boolean, time, uuid, timeuuid, timestamp
 * and date to text and ascii, ascii to text, timestamp to date, date to timestamp,
 * timeuuid to both; a cast to the value's own type. 0, or -1 with err Invalid as
 * Cassandra words it, what naming the selector: "a cannot be cast to boolean". */
int cqlfn_cast_check_as(const cql_ctype *from, const cql_ctype *to, const char *what,
                        cql_parse_error *err);
/* The same with the source type's name as what ("text cannot be cast to int"). */
int cqlfn_cast_check(const cql_ctype *from, const cql_ctype *to, cql_parse_error *err);

/* Casts the value v of type from to type to as CastFcts does: Java's Number narrowing
 * (integers wrap, doubles truncate and saturate, BigInteger and BigDecimal keep the low
 * bits), decimal through the double (CAST(7 AS decimal) is 7.0), varint through the long,
 * text as the value's CQL literal. CQLVAL_OK, CQLVAL_NULL for an empty value, or
 * CQLVAL_ERROR. */
int cqlfn_cast(const cql_ctype *from, const cql_ctype *to, const uint8_t *v, size_t len, buf *out,
               cql_parse_error *err);

/* ---- terms ---- */

/* What cqlfn_term needs from the caller: its own hook for the terms that are neither
 * function calls, casts nor type hints (bind markers), and the arena where the types of
 * CAST and hints are resolved (with types, for user types). */
typedef struct cqlfn_env {
    cqlval_terms binds;
    arena *arena;
    const cqltype_env *types;
} cqlfn_env;

/* A cqlval_term_fn (ctx: a cqlfn_env) evaluating function calls (now(), toTimestamp(?),
 * blobAsInt(0x...), nested), CAST(term AS type) and type hints ((int)?) where a value of
 * type t is expected; other terms go to env->binds. The result must fit t: "Type error:
 * cannot assign result of function system.now (type timeuuid) to k (type int)". Give
 * {cqlfn_term, &env} as cqlval_from_term's terms to have literals with functions inside. */
int cqlfn_term(void *env, const cql_ctype *t, const char *receiver, const cql_expr *e, buf *out,
               cql_parse_error *err);

/* The overload of the operation e (CQL_E_BINARY, or CQL_E_NEGATE of a term that is not a
 * literal) for a receiver of native type receiver (0: none known), its operands typed as
 * cqlfn_term types them (arith.h's cqlarith_resolve). 0, or -1 with err Invalid. */
struct cqlarith_op;
int cqlfn_operation(const cqlfn_env *env, const cql_expr *e, uint16_t receiver,
                    struct cqlarith_op *out, cql_parse_error *err);
/* Whether a value of type from may stand where type to is expected (Cassandra's
 * isValueCompatibleWith for native types): 2 the same type, 1 compatible, 0 not. */
int cqlfn_compatible(const cql_ctype *to, const cql_ctype *from);

#endif
