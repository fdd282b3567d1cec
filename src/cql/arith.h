/* arith.h — Cassandra 4's arithmetic operators (its OperationFcts): + - * / % between the
 * numeric types (tinyint, smallint, int, bigint, counter, float, double, varint, decimal),
 * a timestamp or date plus or minus a duration, and negation; which overload an operation
 * of given operands resolves to, its result type, and the computation as Java does it.
 *
 * Not how the operands' types are found (func.c for terms, exec_selector.c for selectors):
 * the caller answers, for each operand, how well it fits a type. Values are wire bytes. */
#ifndef QR_CQL_ARITH_H
#define QR_CQL_ARITH_H

#include <stddef.h>
#include <stdint.h>

#include "cql/ast.h"
#include "cqlwire/cql_codec.h"
#include "util/buf.h"

/* One overload: op is one of + - * / % or 'n' for negation (one operand, left). */
typedef struct cqlarith_op {
    char op;
    uint16_t left, right; /* operand types (right 0 for negation) */
    uint16_t ret;
} cqlarith_op;

/* How well operand i fits a parameter of type: 2 exactly, 1 weakly, 0 not (Cassandra's
 * testAssignment). */
typedef int (*cqlarith_fit)(void *ctx, size_t i, uint16_t type);

/* Resolves op over n operands (2, or 1 for 'n') as Cassandra's FunctionResolver picks among
 * the operation's overloads: those whose result may be assigned to receiver (0: unknown,
 * as in a selector), an exact fit first, else the one weak fit, else (no operand a bind
 * marker, markers[i] saying which are) the one whose operands are both of the receiver's
 * type. texts[i] is operand i as written, for the messages. 0 and *out, or -1 with err
 * Invalid: "the '+' operation is not supported between a and b", "Ambiguous '+' operation
 * with args ? and 1: use type hint to disambiguate, example '(int) ?'", "Ambiguous
 * negation: use type casts to disambiguate". */
int cqlarith_resolve(char op, size_t n, cqlarith_fit fit, void *ctx, const int *markers,
                     const char *const *texts, uint16_t receiver, cqlarith_op *out,
                     cql_parse_error *err);

/* Computes o on the operand values l and r (r unused for negation), appending the result
 * (of type o->ret) to out: CQLVAL_OK, CQLVAL_NULL when an operand is null (len < 0), or
 * CQLVAL_ERROR with err FunctionFailure as Cassandra words it: "the operation 'int / int'
 * failed: / by zero". */
int cqlarith_apply(const cqlarith_op *o, const uint8_t *l, int32_t llen, const uint8_t *r,
                   int32_t rlen, buf *out, cql_parse_error *err);

/* The operator of an operation's overload for messages: "+", ..., "-" for negation. */
const char *cqlarith_symbol(char op);
/* The native function Cassandra runs for operation op and names in its messages: "_add",
 * "_substract", ... ('n': "_negate"). */
const char *cqlarith_function(char op);

#endif
