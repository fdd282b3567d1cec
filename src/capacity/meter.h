/* meter.h — DynamoDB's capacity rules for one table or global index: units, token
 * buckets with burst, on-demand ramps and maxima, and the per-partition ceilings.
 *
 * A pure model driven by the caller's clock: it knows nothing of items, keys or storage.
 * The engine asks it to admit each access and charges what the access consumed. */
#ifndef QR_METER_H
#define QR_METER_H

#include <stddef.h>
#include <stdint.h>

/* ---- units, as ReturnConsumedCapacity reports and the meter charges them ----
 * Reads in 4 KB units (half for an eventually consistent read), writes in 1 KB units,
 * each rounded up, at least one unit. */
double meter_read_units(size_t bytes, int consistent);
double meter_write_units(size_t bytes);

/* Every physical partition serves at most this much per second, in either mode. */
#define METER_PARTITION_RCU 3000.0
#define METER_PARTITION_WCU 1000.0
/* DynamoDB keeps up to five minutes of unused provisioned capacity for bursts. */
#define METER_BURST_SECONDS 300.0
/* What a new on-demand table serves at once, and how far past its previous peak it may
 * go within METER_PEAK_WINDOW seconds. */
#define METER_ON_DEMAND_RRU 12000.0
#define METER_ON_DEMAND_WRU 4000.0
#define METER_PEAK_WINDOW 1800.0
/* A partition holds at most 10 GB. */
#define METER_PARTITION_BYTES (10ULL << 30)

typedef struct meter_limits {
    int on_demand;                   /* PAY_PER_REQUEST */
    double rcu, wcu;                 /* provisioned units per second (on_demand 0) */
    double max_rru, max_wru;         /* OnDemandThroughput maxima; 0: none */
    double account_rru, account_wru; /* the per-table account quota; 0: none */
    uint64_t bytes;                  /* data held, for the partition count */
    double warm_rru, warm_wru;       /* WarmThroughput: what it must serve at once */
    double split_after;              /* seconds a partition stays hot before it splits
                                        (0: DynamoDB's few minutes, 300) */
    int sort_key_splits;             /* one partition key's items may split by sort key
                                        (no local indexes bind them together) */
} meter_limits;

/* Why an access was refused; METER_OK if it was not. */
typedef enum meter_verdict {
    METER_OK = 0,
    METER_PROVISIONED,   /* the provisioned rate and its burst are spent */
    METER_KEY_RANGE,     /* the partition's ceiling is reached */
    METER_ON_DEMAND_MAX, /* OnDemandThroughput's maximum */
    METER_ACCOUNT        /* the account's per-table quota, or the on-demand ramp */
} meter_verdict;

/* What a meter has counted since it was made (metrics, tests). */
typedef struct meter_totals {
    double read_units, write_units;
    uint64_t read_throttles[5], write_throttles[5]; /* by meter_verdict */
    uint64_t online_index_throttles;                /* a backfill that had to wait */
    unsigned partitions;
    double read_tokens, write_tokens;   /* the table-level buckets now (banked units) */
    double read_at_once, write_at_once; /* what it serves in a second from now on:
                                           on-demand, double the previous peak (at least
                                           the initial rates); provisioned, the rates */
} meter_totals;

typedef struct meter meter;
/* A new meter at time now (seconds, the caller's clock): a provisioned one starts with
 * a full burst bank (METER_BURST_SECONDS of its rate), an on-demand one at its initial
 * rates. NULL when out of memory. */
meter *meter_new(const meter_limits *l, double now);
/* New limits (UpdateTable): banked capacity is kept, cut to the new bank's size; a
 * switch from provisioned to on-demand takes the provisioned rates as the previous peak,
 * with at least the initial on-demand rates. The partitions only ever grow. */
void meter_configure(meter *m, const meter_limits *l, double now);
void meter_free(meter *m);

/* May an access go ahead? Reads and writes are admitted while every bucket they draw
 * on has something left: the table's (or index's), and, when the access falls in one
 * partition (hash is its partition key's hash; suffix, len what follows the hash in its
 * stored key, which places it among a split partition key's sort-key ranges), that
 * partition's. A partition that stays hot splits (partmap.h). */
meter_verdict meter_admit(meter *m, int write, int in_partition, uint64_t hash, const void *suffix,
                          size_t len, double now);
/* Charges units consumed to the table-level buckets, which may go below zero (a large
 * Query's debt); meter_charge_partition charges the partition of hash. A Scan charges
 * each partition what it read there and the table the total, rounded once. */
void meter_charge(meter *m, int write, double units, double now);
void meter_charge_partition(meter *m, int write, uint64_t hash, const void *suffix, size_t len,
                            double units, double now);
/* Both at once: the table-level buckets and the partition of the key. */
void meter_charge_key(meter *m, int write, uint64_t hash, const void *suffix, size_t len,
                      double units, double now);
/* 1 when the items of the partition key of hash lie in several partitions, split by sort
 * key: a read of a range of them charges each partition what was read there. */
int meter_sort_key_split(meter *m, uint64_t hash);
/* Counts a refusal (meter_admit's verdict v) in the totals. */
void meter_count_throttle(meter *m, int write, meter_verdict v);
void meter_count_online_throttle(meter *m);
void meter_totals_get(meter *m, double now, meter_totals *out);

#endif
