/* aggregate.h — CQL's native aggregates over a stream of values: COUNT(*), COUNT(col),
 * MIN, MAX, SUM and AVG, with Cassandra's result types and arithmetic (SUM of int is an
 * int that wraps, AVG of int truncates, float and double sums are Kahan-compensated,
 * decimal and varint are exact, AVG of decimal rounds half-even as it goes).
 *
 * One cqlagg per aggregate selector and group; the executor feeds it the rows' values and
 * decides the groups (GROUP BY). Values are wire bytes (value.h). */
#ifndef QR_CQL_AGGREGATE_H
#define QR_CQL_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "cql/ast.h"
#include "cql/types.h"
#include "cql/value.h"
#include "util/buf.h"

typedef enum cqlagg_kind {
    CQLAGG_COUNT_ROWS, /* COUNT(*) and COUNT(1) */
    CQLAGG_COUNT,      /* COUNT(col): the values that are not null */
    CQLAGG_MIN,
    CQLAGG_MAX,
    CQLAGG_SUM,
    CQLAGG_AVG
} cqlagg_kind;

/* The aggregate a function call names: 1 with *kind for count (star or a constant
 * argument: COUNT(*), COUNT(1)), min, max, sum and avg (any case, optional "system."),
 * 0 for a name that is not an aggregate. */
int cqlagg_lookup(const char *name, int star, int constant_arg, cqlagg_kind *kind);

/* The state of one aggregate over one group. Opaque; sized for the stack. */
typedef struct cqlagg {
    cqlagg_kind kind;
    const cql_ctype *arg;    /* the argument's type (NULL for COUNT_ROWS) */
    const cql_ctype *result; /* bigint for the counts, else the argument's type */
    int64_t count;
    __int128 isum;            /* integer SUM and AVG */
    double sum, comp, simple; /* float and double: Kahan's sum, compensation, plain sum */
    int overflow;             /* AVG of float/double: the double sum overflowed */
    buf big; /* decimal and varint: the exact sum or average as decimal text; the float
                average's sum after an overflow; MIN and MAX: the best value so far */
    int32_t big_scale;
    int have; /* MIN, MAX: a value has been seen */
} cqlagg;

/* Starts aggregate kind over values of type arg (NULL for COUNT_ROWS). 0, or -1 with err
 * Invalid for a type the aggregate is not defined on: "Invalid call to function
 * system.sum, none of its type signatures match (known type signatures: system.sum :
 * (tinyint) -> tinyint, ...)". Release with cqlagg_free. */
int cqlagg_init(cqlagg *a, cqlagg_kind kind, const cql_ctype *arg, cql_parse_error *err);

/* Adds one row's value (len CQL_NULL for null, which only COUNT(*) counts); for
 * COUNT_ROWS, call once per row with any value. 0, or -1 with err (a malformed value, a
 * decimal sum past CQL_NUMBER_DIGITS digits, out of memory). */
int cqlagg_add(cqlagg *a, const uint8_t *v, int32_t len, cql_parse_error *err);

/* Appends the result to out: CQLVAL_OK, CQLVAL_NULL (MIN and MAX of no value), or
 * CQLVAL_ERROR with err. SUM and AVG of no value are 0, as in Cassandra. */
int cqlagg_result(cqlagg *a, buf *out, cql_parse_error *err);

/* Starts the same aggregate again for the next group. */
void cqlagg_reset(cqlagg *a);
void cqlagg_free(cqlagg *a);

/* The result column's name as Cassandra names it: "count" for COUNT(*), else
 * "system.<fn>(<column>)" ("system.max(v)"); appended to out. */
int cqlagg_column_name(cqlagg_kind kind, const char *column, buf *out);

#endif
