/* murmur3.h — Cassandra's Murmur3Partitioner token of a partition key's bytes, for the
 * CQL front end's token() and for the engine's tables whose partitions are kept in token
 * order. Only the hash: serializing the key is the caller's. */
#ifndef QR_MURMUR3_H
#define QR_MURMUR3_H

#include <stddef.h>
#include <stdint.h>

/* The token of len bytes: the first half of MurmurHash3 x64_128 (seed 0, tail bytes
 * sign-extended, as MurmurHash.hash3_x64_128 reads them), with Long.MIN_VALUE answered
 * as Long.MAX_VALUE; the empty key's token is Long.MIN_VALUE (the partitioner's minimum,
 * which no stored key has). */
int64_t murmur3_token(const void *data, size_t len);

#endif
