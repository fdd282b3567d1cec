/* meter.c — token buckets for one table or global index (see meter.h).
 *
 * Each bucket refills at its rate up to its size; an access is admitted while the
 * buckets it draws on are above zero and charged afterwards, so buckets may go into
 * debt. The partitions and their ceilings are partmap.c's. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "capacity/meter.h"
#include "capacity/partmap.h"

double meter_read_units(size_t bytes, int consistent)
{
    size_t units = (bytes + 4095) / 4096;
    if (units == 0) units = 1;
    return consistent ? (double)units : (double)units / 2.0;
}

double meter_write_units(size_t bytes)
{
    size_t units = (bytes + 1023) / 1024;
    return units == 0 ? 1.0 : (double)units;
}

typedef struct bucket {
    double tokens, rate, size, at;
} bucket;

static void bucket_set(bucket *b, double rate, double size, double now, int fill)
{
    if (fill) b->tokens = size;
    if (b->tokens > size) b->tokens = size;
    b->rate = rate;
    b->size = size;
    b->at = now;
}

static void bucket_refill(bucket *b, double now)
{
    if (now <= b->at) return;
    b->tokens += b->rate * (now - b->at);
    if (b->tokens > b->size) b->tokens = b->size;
    b->at = now;
}

/* Minutes of peaks kept until they are adopted: more than METER_PEAK_WINDOW's 30. */
#define PEAK_MINUTES 32

/* The highest units consumed in one second of one minute, not yet the previous peak. */
typedef struct minute_peak {
    double minute; /* floor(time / 60) */
    double units;
} minute_peak;

/* One direction (reads or writes) of a meter. */
typedef struct direction {
    bucket provisioned;               /* provisioned mode: the rate with its burst bank */
    bucket ramp;                      /* on-demand: up to double the previous peak, per second */
    bucket max;                       /* on-demand: OnDemandThroughput's maximum (rate 0: none) */
    bucket account;                   /* on-demand: the per-table account quota (rate 0: none) */
    double peak;                      /* on-demand: the previous peak, the highest units consumed
                                         in one second at least METER_PEAK_WINDOW ago */
    minute_peak recent[PEAK_MINUTES]; /* on-demand: higher seconds, not yet adopted */
    double adopted_at;                /* the second recent was last looked at */
    double most_provisioned;          /* the highest provisioned rate the table has had */
    double second_units;
    double second; /* the whole second second_units counts */
    double units;
    uint64_t throttles[5];
} direction;

struct meter {
    pthread_mutex_t lock;
    meter_limits l;
    partmap *parts;
    direction d[2]; /* [0] reads, [1] writes */
    uint64_t online_index_throttles;
};

static double initial_rate(int write)
{
    return write ? METER_ON_DEMAND_WRU : METER_ON_DEMAND_RRU;
}

/* What an on-demand direction serves at once: double its previous peak, at least the
 * initial rate. */
static double ramp_rate(const direction *d, int write)
{
    double r = 2.0 * d->peak;
    return r > initial_rate(write) ? r : initial_rate(write);
}

/* DynamoDB's partition count: enough for the throughput (provisioned, or on-demand's
 * warm rates) and for the data, 10 GB each. */
static unsigned partitions_needed(const meter *m)
{
    double r = m->l.on_demand ? ramp_rate(&m->d[0], 0) : m->l.rcu;
    double w = m->l.on_demand ? ramp_rate(&m->d[1], 1) : m->l.wcu;
    if (m->l.warm_rru > r) r = m->l.warm_rru; /* WarmThroughput pre-splits */
    if (m->l.warm_wru > w) w = m->l.warm_wru;
    double by_rate = ceil(r / METER_PARTITION_RCU + w / METER_PARTITION_WCU);
    double by_size = ceil((double)m->l.bytes / (double)METER_PARTITION_BYTES);
    double n = by_rate > by_size ? by_rate : by_size;
    if (n < 1) n = 1;
    if (n > 65536) n = 65536;
    return (unsigned)n;
}

/* Provisioned to on-demand: DynamoDB takes half the highest rate ever provisioned as the
 * previous peak. The burst bank is kept across changes of the provisioned rate, cut to
 * the new bank's size, and filled when a table starts or returns to provisioned mode. */
static void set_limits(meter *m, const meter_limits *l, double now, int fresh)
{
    int was_on_demand = !fresh && m->l.on_demand;
    m->l = *l;
    for (int w = 0; w < 2; w++) {
        direction *d = &m->d[w];
        double rate = w ? l->wcu : l->rcu;
        if (!l->on_demand) {
            if (rate > d->most_provisioned) d->most_provisioned = rate;
            if (!fresh) bucket_refill(&d->provisioned, now);
            bucket_set(&d->provisioned, rate, rate * METER_BURST_SECONDS, now,
                       fresh || was_on_demand);
            d->ramp = d->max = d->account = (bucket){0};
            continue;
        }
        if (d->most_provisioned / 2.0 > d->peak) d->peak = d->most_provisioned / 2.0;
        double warm = w ? l->warm_wru : l->warm_rru; /* served at once: WarmThroughput */
        if (warm / 2.0 > d->peak) d->peak = warm / 2.0;
        d->provisioned = (bucket){0};
        bucket_set(&d->ramp, ramp_rate(d, w), ramp_rate(d, w), now, fresh || !was_on_demand);
        double max = w ? l->max_wru : l->max_rru;
        bucket_set(&d->max, max > 0 ? max : 0, max > 0 ? max : 0, now, 1);
        double acct = w ? l->account_wru : l->account_rru;
        bucket_set(&d->account, acct > 0 ? acct : 0, acct > 0 ? acct : 0, now, 1);
    }
}

meter *meter_new(const meter_limits *l, double now)
{
    meter *m = calloc(1, sizeof *m);
    if (m == NULL) return NULL;
    pthread_mutex_init(&m->lock, NULL);
    set_limits(m, l, now, 1);
    if ((m->parts = partmap_new(now)) == NULL) {
        meter_free(m);
        return NULL;
    }
    partmap_configure(m->parts, l->split_after, l->sort_key_splits);
    partmap_grow(m->parts, partitions_needed(m), now);
    return m;
}

void meter_configure(meter *m, const meter_limits *l, double now)
{
    pthread_mutex_lock(&m->lock);
    set_limits(m, l, now, 0);
    partmap_configure(m->parts, l->split_after, l->sort_key_splits);
    partmap_grow(m->parts, partitions_needed(m), now);
    pthread_mutex_unlock(&m->lock);
}

void meter_free(meter *m)
{
    if (m == NULL) return;
    partmap_free(m->parts);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* Adopts units as the previous peak if higher: the ramp, and the partitions it needs,
 * grow with it. The lock is held. */
static void raise_peak(meter *m, direction *d, int write, double units, double now)
{
    if (units <= d->peak) return;
    d->peak = units;
    bucket_refill(&d->ramp, now);
    double grown = ramp_rate(d, write) - d->ramp.size; /* served at once */
    d->ramp.rate = d->ramp.size = ramp_rate(d, write);
    if (grown > 0) d->ramp.tokens += grown;
    partmap_grow(m->parts, partitions_needed(m), now);
}

/* On-demand: a second's units become the previous peak once METER_PEAK_WINDOW has
 * passed, so traffic may double at most once per window, as DynamoDB's "more than double
 * the previous peak within 30 minutes can throttle" has it. Peaks wait by the minute and
 * are adopted whole minutes late at most. Looks once per second; the lock is held. */
static void adopt_peaks(meter *m, direction *d, int write, double now)
{
    double second = floor(now);
    if (second == d->adopted_at) return;
    d->adopted_at = second;
    double peak = d->peak;
    for (size_t i = 0; i < PEAK_MINUTES; i++) {
        minute_peak *p = &d->recent[i];
        if (p->units <= 0 || (p->minute + 1.0) * 60.0 > now - METER_PEAK_WINDOW) continue;
        if (p->units > peak) peak = p->units;
        p->units = 0;
    }
    raise_peak(m, d, write, peak, now);
}

/* A bucket with rate 0 is not in force. */
static int spent(bucket *b, double now)
{
    if (b->rate <= 0) return 0;
    bucket_refill(b, now);
    return b->tokens <= 0;
}

meter_verdict meter_admit(meter *m, int write, int in_partition, uint64_t hash, const void *suffix,
                          size_t len, double now)
{
    meter_verdict v = METER_OK;
    pthread_mutex_lock(&m->lock);
    direction *d = &m->d[write ? 1 : 0];
    if (!m->l.on_demand) {
        if (spent(&d->provisioned, now)) v = METER_PROVISIONED;
    } else if (spent(&d->max, now)) {
        v = METER_ON_DEMAND_MAX;
    } else if (spent(&d->account, now)) {
        v = METER_ACCOUNT;
    } else {
        adopt_peaks(m, d, write ? 1 : 0, now);
        if (spent(&d->ramp, now)) v = METER_KEY_RANGE;
    }
    if (v == METER_OK && in_partition && partmap_spent(m->parts, write, hash, suffix, len, now))
        v = METER_KEY_RANGE;
    pthread_mutex_unlock(&m->lock);
    return v;
}

/* On-demand: counts units in whole seconds; a second above the previous peak waits in
 * its minute's slot to be adopted. The lock is held. */
static void follow_peak(meter *m, direction *d, int write, double units, double now)
{
    double second = floor(now);
    if (second != d->second) {
        d->second = second;
        d->second_units = 0;
    }
    d->second_units += units;
    adopt_peaks(m, d, write, now);
    if (d->second_units <= d->peak) return;
    double minute = floor(now / 60.0);
    minute_peak *p = &d->recent[(uint64_t)minute % PEAK_MINUTES];
    if (p->minute != minute) {
        /* The slot's last minute is PEAK_MINUTES old, past the window: adopt it first. */
        raise_peak(m, d, write, p->units, now);
        p->minute = minute;
        p->units = 0;
    }
    if (d->second_units > p->units) p->units = d->second_units;
}

/* Charges the table-level buckets; the lock is held. */
static void charge_locked(meter *m, int write, double units, double now)
{
    direction *d = &m->d[write ? 1 : 0];
    d->units += units;
    bucket *all[] = {&d->provisioned, &d->ramp, &d->max, &d->account};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (all[i]->rate <= 0) continue;
        bucket_refill(all[i], now);
        all[i]->tokens -= units;
    }
    if (m->l.on_demand) follow_peak(m, d, write, units, now);
}

void meter_charge(meter *m, int write, double units, double now)
{
    pthread_mutex_lock(&m->lock);
    charge_locked(m, write, units, now);
    pthread_mutex_unlock(&m->lock);
}

void meter_charge_partition(meter *m, int write, uint64_t hash, const void *suffix, size_t len,
                            double units, double now)
{
    pthread_mutex_lock(&m->lock);
    partmap_charge(m->parts, write, hash, suffix, len, units, now);
    pthread_mutex_unlock(&m->lock);
}

void meter_charge_key(meter *m, int write, uint64_t hash, const void *suffix, size_t len,
                      double units, double now)
{
    pthread_mutex_lock(&m->lock);
    charge_locked(m, write, units, now);
    partmap_charge(m->parts, write, hash, suffix, len, units, now);
    pthread_mutex_unlock(&m->lock);
}

int meter_sort_key_split(meter *m, uint64_t hash)
{
    pthread_mutex_lock(&m->lock);
    int split = partmap_sort_key_split(m->parts, hash);
    pthread_mutex_unlock(&m->lock);
    return split;
}

void meter_count_throttle(meter *m, int write, meter_verdict v)
{
    pthread_mutex_lock(&m->lock);
    m->d[write ? 1 : 0].throttles[v]++;
    pthread_mutex_unlock(&m->lock);
}

void meter_count_online_throttle(meter *m)
{
    pthread_mutex_lock(&m->lock);
    m->online_index_throttles++;
    pthread_mutex_unlock(&m->lock);
}

void meter_totals_get(meter *m, double now, meter_totals *out)
{
    pthread_mutex_lock(&m->lock);
    memset(out, 0, sizeof *out);
    out->read_units = m->d[0].units;
    out->write_units = m->d[1].units;
    memcpy(out->read_throttles, m->d[0].throttles, sizeof out->read_throttles);
    memcpy(out->write_throttles, m->d[1].throttles, sizeof out->write_throttles);
    out->partitions = partmap_count(m->parts);
    out->online_index_throttles = m->online_index_throttles;
    for (int w = 0; w < 2; w++) {
        if (m->l.on_demand) adopt_peaks(m, &m->d[w], w, now);
        bucket *b = m->l.on_demand ? &m->d[w].ramp : &m->d[w].provisioned;
        bucket_refill(b, now);
        *(w ? &out->write_tokens : &out->read_tokens) = b->tokens;
        *(w ? &out->write_at_once : &out->read_at_once) =
            m->l.on_demand ? ramp_rate(&m->d[w], w) : (w ? m->l.wcu : m->l.rcu);
    }
    pthread_mutex_unlock(&m->lock);
}
