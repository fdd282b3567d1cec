/* keyenc.h — the keys of a CQL table on the engine: clustering values in a byte encoding
 * whose order is Cassandra's order of the types (a DESC column's bytes inverted), the
 * key ranges that clustering restrictions select, the partition key serialized as
 * Cassandra serializes it, and Murmur3Partitioner's token of it.
 *
 * Values are wire bytes (value.h); this module decides no restriction's legality (the
 * executor does) and reads no storage. */
#ifndef QR_CQL_KEYENC_H
#define QR_CQL_KEYENC_H

#include <stddef.h>
#include <stdint.h>

#include "cql/ast.h"
#include "cql/types.h"
#include "cqlwire/cql_codec.h"
#include "util/buf.h"

/* One clustering column: its type and whether its CLUSTERING ORDER is DESC. */
typedef struct cqlkey_col {
    const cql_ctype *type;
    int desc;
} cqlkey_col;

/* ---- clustering keys ----
 * A clustering key is the concatenation of one encoded component per clustering column.
 * Components are self-delimiting, so the key of a prefix of the columns is a byte prefix
 * of every key that starts with those values, and byte order is the rows' order. Every
 * component's first byte is at least 0x02 (after inversion at most 0xfd), so no row key is
 * empty: the empty key is free for a partition's static row, which sorts first. Values
 * equal to Cassandra (1.5 and 1.50, varints with redundant sign bytes, NaNs) encode to
 * the same bytes, and decode to one canonical form of them. */

/* Appends the encoding of value v (len bytes; len 0 is the empty value) of column col.
 * 0, or -1 with err: Invalid for a duration (not orderable) or a value that does not
 * validate, Server when out is full. */
int cqlkey_put(buf *out, const cqlkey_col *col, const uint8_t *v, size_t len, cql_parse_error *err);

/* Appends the encoding of values[0..n) of cols[0..n) (a whole key, or a prefix of one).
 * A null value (len CQL_NULL) is refused: clustering values are never null. */
int cqlkey_encode(buf *out, const cqlkey_col *cols, size_t n, const cql_value *values,
                  cql_parse_error *err);

/* Decodes the component at key[*pos] for col, appending its wire bytes to out and moving
 * *pos past it. 0, or -1 (err Server) when the bytes are no such component. */
int cqlkey_get(const uint8_t *key, size_t len, size_t *pos, const cqlkey_col *col, buf *out,
               cql_parse_error *err);

/* Decodes a whole key of n columns: the wire bytes of column i are out->data[at[i] ..
 * at[i + 1]) (at has n + 1 entries, offsets into out from where it stood). 0 or -1. */
int cqlkey_decode(const uint8_t *key, size_t len, const cqlkey_col *cols, size_t n, buf *out,
                  size_t *at, cql_parse_error *err);

/* ---- ranges of clustering keys ---- */

/* Keys k with lo <= k < hi in byte order; no_hi: no upper limit. */
typedef struct cqlkey_range {
    buf lo, hi;
    int no_hi;
} cqlkey_range;

/* Ranges in ascending byte order, disjoint and not adjacent (read them backwards to read
 * the rows in reverse order). */
typedef struct cqlkey_ranges {
    cqlkey_range *r;
    size_t n;
} cqlkey_ranges;

void cqlkey_ranges_free(cqlkey_ranges *rs);

/* One side of a slice over the columns after the equal ones: (c_neq, ..., c_neq+n-1)
 * compared with values[0..n) as Cassandra compares tuples (lexicographically, in each
 * column's value order, whatever its clustering order). A single-column slice has n 1. */
typedef struct cqlkey_bound {
    const cql_value *values;
    size_t n;
    int inclusive; /* >= or <= rather than > or < */
} cqlkey_bound;

/* The ranges of the rows of one partition with cols[0..neq) equal to eq[0..neq) and, when
 * given, the slice's lower (c > x, c >= x) and upper (c < y, c <= y) bounds: "all rows"
 * for neq 0 and no bound, "c1 = x" for neq 1, "c1 = x AND c2 > y", "(c1, c2) >= (x, y)",
 * "c1 > x AND c1 <= y". Mixed clustering orders within a multi-column slice give several
 * ranges, as in Cassandra. The static row (the empty key) is never in a range. Fills *out
 * (free with cqlkey_ranges_free); 0, or -1 with err (a value that cannot be encoded). */
int cqlkey_ranges_for(const cqlkey_col *cols, size_t ncols, const cql_value *eq, size_t neq,
                      const cqlkey_bound *lower, const cqlkey_bound *upper, cqlkey_ranges *out,
                      cql_parse_error *err);

/* ---- partition keys and tokens ---- */

/* Appends the partition key's serialized form as Cassandra builds it: one column, its
 * bytes; several (CompositeType), each as [2-byte length][bytes][0x00]. 0, or -1 with err
 * (Invalid "Key length of N is longer than maximum of 65535", a null component: "Invalid
 * null value for partition key part k"), names[i] naming column i in messages. */
int cqlkey_partition(buf *out, const cql_value *values, const char *const *names, size_t n,
                     cql_parse_error *err);

/* Splits a serialized partition key of n columns back into its values (pointing into
 * key). 0, or -1 when key is not such a form. */
int cqlkey_partition_split(const uint8_t *key, size_t len, size_t n, cql_value *values);

/* Murmur3Partitioner's token of a serialized partition key: the first half of Cassandra's
 * MurmurHash3 x64_128 (seed 0, tail bytes sign-extended, as MurmurHash.hash3_x64_128
 * reads them), with Long.MIN_VALUE answered as Long.MAX_VALUE. */
int64_t cqlkey_token(const uint8_t *key, size_t len);

/* The token as a value of the bigint type token() returns (8 bytes, big-endian). */
void cqlkey_token_bytes(int64_t token, uint8_t out[8]);

#endif
