/* murmur3.c — Cassandra's Murmur3Partitioner token (see murmur3.h): MurmurHash3 x64_128
 * as org.apache.cassandra.utils.MurmurHash.hash3_x64_128 computes it, first half.
 *
 * A pure function of the bytes; what is hashed (a serialized partition key) is the
 * callers'. */
#include "util/murmur3.h"

static uint64_t rotl64(uint64_t v, int n)
{
    return (v << n) | (v >> (64 - n));
}

static uint64_t fmix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

static uint64_t block(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* A tail byte as Java reads it: signed, sign-extended to 64 bits. */
static uint64_t sx(uint8_t b)
{
    return (uint64_t)(int64_t)(int8_t)b;
}

int64_t murmur3_token(const void *data, size_t len)
{
    const uint8_t *key = data;
    if (len == 0) return INT64_MIN; /* Murmur3Partitioner.MINIMUM, without hashing */
    const uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
    uint64_t h1 = 0, h2 = 0;
    size_t nblocks = len / 16;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = block(key + i * 16), k2 = block(key + i * 16 + 8);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *tail = key + nblocks * 16;
    size_t rest = len & 15;
    uint64_t k1 = 0, k2 = 0;
    for (size_t i = rest; i > 8; i--)
        k2 ^= sx(tail[i - 1]) << (8 * (i - 9));
    if (rest > 8) {
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    for (size_t i = rest < 8 ? rest : 8; i > 0; i--)
        k1 ^= sx(tail[i - 1]) << (8 * (i - 1));
    if (rest > 0) {
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }
    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 += h2;
    int64_t t = (int64_t)h1;
    return t == INT64_MIN ? INT64_MAX : t;
}
