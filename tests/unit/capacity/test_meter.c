/* test_meter.c — the capacity rules of capacity/meter.h on a clock the test moves: units,
 * the provisioned burst bank and its refill, debt, partition ceilings, the on-demand ramp
 * to double the previous peak, OnDemandThroughput maxima, the account quota, and how
 * UpdateTable's changes keep or reset what is banked. No storage is involved. */
#include <stdint.h>
#include <stdio.h>

#include "capacity/meter.h"

#include "check.h"

/* Writes of one unit, each in partition hash, until one is refused; returns how many went. */
static int writes_until_refused(meter *m, uint64_t hash, double now, meter_verdict *why)
{
    int n = 0;
    for (; n < 1000000; n++) {
        *why = meter_admit(m, 1, 1, hash, NULL, 0, now);
        if (*why != METER_OK) break;
        meter_charge(m, 1, 1.0, now);
        meter_charge_partition(m, 1, hash, NULL, 0, 1.0, now);
    }
    return n;
}

static void test_units(void)
{
    CHECK_THAT(meter_read_units(0, 1) == 1.0);
    CHECK_THAT(meter_read_units(4096, 1) == 1.0);
    CHECK_THAT(meter_read_units(4097, 1) == 2.0);
    CHECK_THAT(meter_read_units(4097, 0) == 1.0);
    CHECK_THAT(meter_read_units(1, 0) == 0.5);
    CHECK_THAT(meter_write_units(0) == 1.0);
    CHECK_THAT(meter_write_units(1024) == 1.0);
    CHECK_THAT(meter_write_units(1025) == 2.0);
}

static void test_provisioned_burst(void)
{
    meter_limits l = {.rcu = 10, .wcu = 5};
    meter *m = meter_new(&l, 100.0);
    meter_verdict why;
    /* A new table banks 300 seconds of its rate, 1,500 write units at 5 WCU, but its one
     * partition serves at most 1,000 a second. */
    int n = writes_until_refused(m, 1, 100.0, &why);
    CHECK(n == 1000, "%d writes at once", n);
    CHECK_THAT(why == METER_KEY_RANGE);
    /* A second later the rest of the bank and a second's rate: 505 more. */
    n = writes_until_refused(m, 1, 101.0, &why);
    CHECK(n == 505, "%d writes after a second", n);
    CHECK_THAT(why == METER_PROVISIONED);
    n = writes_until_refused(m, 1, 102.0, &why);
    CHECK(n == 5, "%d writes a second later", n);
    /* A large charge goes into debt: nothing is admitted until it is paid back. */
    meter_charge(m, 1, 50.0, 102.0);
    CHECK_THAT(meter_admit(m, 1, 1, 1, NULL, 0, 111.0) == METER_PROVISIONED);
    CHECK_THAT(meter_admit(m, 1, 1, 1, NULL, 0, 112.5) == METER_OK);
    /* Reads are a bucket of their own. */
    CHECK_THAT(meter_admit(m, 0, 1, 1, NULL, 0, 112.5) == METER_OK);
    meter_totals t;
    meter_totals_get(m, 112.5, &t);
    CHECK(t.write_units == 1560.0, "write units %f", t.write_units);
    /* The one key that spent its partition was isolated: hashes below it, it, above it. */
    CHECK(t.partitions == 3, "%u partitions", t.partitions);
    meter_free(m);
}

static void test_update_keeps_bank(void)
{
    meter_limits l = {.rcu = 10, .wcu = 10};
    meter *m = meter_new(&l, 0.0);
    meter_charge(m, 1, 2000.0, 0.0); /* 1,000 of 3,000 left */
    l.wcu = 2;                       /* a bank of 600: what is left is cut to it */
    meter_configure(m, &l, 0.0);
    meter_totals t;
    meter_totals_get(m, 0.0, &t);
    CHECK(t.write_tokens == 600.0, "banked %f after a decrease", t.write_tokens);
    l.wcu = 100; /* an increase keeps the bank and refills faster */
    meter_configure(m, &l, 0.0);
    meter_totals_get(m, 1.0, &t);
    CHECK(t.write_tokens == 700.0, "banked %f after an increase", t.write_tokens);
    meter_free(m);
}

static void test_partition_ceiling(void)
{
    /* Provisioned far above one partition: the partition's 1,000 WCU still holds. */
    meter_limits l = {.rcu = 100, .wcu = 5000};
    meter *m = meter_new(&l, 0.0);
    meter_totals t;
    meter_totals_get(m, 0.0, &t);
    CHECK(t.partitions == 6, "%u partitions for 5,000 WCU and 100 RCU", t.partitions);
    meter_verdict why;
    int n = writes_until_refused(m, 42, 0.0, &why);
    CHECK(n == 1000, "%d writes to one partition", n);
    CHECK_THAT(why == METER_KEY_RANGE);
    /* Another partition is untouched. */
    CHECK_THAT(meter_admit(m, 1, 1, UINT64_MAX - 42, NULL, 0, 0.0) == METER_OK);
    /* A read of several partitions (a Scan) is judged by the table alone. */
    CHECK_THAT(meter_admit(m, 1, 0, 0, NULL, 0, 0.0) == METER_OK);
    meter_free(m);
}

/* Writes to keys spread over every partition at time now until one is refused; returns
 * how many were admitted. */
static int spread_writes(meter *m, int most, double now)
{
    int n = 0;
    for (; n < most; n++) {
        uint64_t hash = (uint64_t)n * 0x9E3779B97F4A7C15ULL;
        if (meter_admit(m, 1, 1, hash, NULL, 0, now) != METER_OK) break;
        meter_charge(m, 1, 1.0, now);
        meter_charge_partition(m, 1, hash, NULL, 0, 1.0, now);
    }
    return n;
}

static void test_on_demand(void)
{
    meter_limits l = {.on_demand = 1};
    meter *m = meter_new(&l, 0.0);
    meter_totals t;
    meter_totals_get(m, 0.0, &t);
    CHECK(t.partitions == 8, "%u partitions for 12,000 RRU and 4,000 WRU", t.partitions);
    /* 4,000 write units at once, spread over the partitions, then the ramp stops them. */
    meter_verdict why = METER_OK;
    int n = 0;
    for (; n < 100000; n++) {
        uint64_t hash = (uint64_t)n * 0x9E3779B97F4A7C15ULL;
        if ((why = meter_admit(m, 1, 1, hash, NULL, 0, 0.0)) != METER_OK) break;
        meter_charge(m, 1, 1.0, 0.0);
        meter_charge_partition(m, 1, hash, NULL, 0, 1.0, 0.0);
    }
    CHECK(n >= 4000 && n <= 4100, "%d writes at once", n);
    CHECK(why == METER_KEY_RANGE, "refused with %d", why);
    /* The peak of 4,000 becomes the previous peak only after 30 minutes: until then the
     * table serves 4,000 a second, then double the peak. */
    double at[] = {1.0, 600.0, 1799.0, 1900.0};
    int want[] = {4000, 4000, 4000, 8000};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        n = spread_writes(m, 100000, at[k]);
        CHECK(n >= want[k] * 0.99 && n <= want[k] + 100, "%d writes in the second at %.0f s", n,
              at[k]);
    }
    meter_totals_get(m, 1900.0, &t);
    CHECK(t.partitions >= 12, "%u partitions after the peak of 8,000", t.partitions);
    meter_free(m);

    /* OnDemandThroughput's maximum is its own refusal. */
    meter_limits capped = {.on_demand = 1, .max_wru = 10};
    m = meter_new(&capped, 0.0);
    n = writes_until_refused(m, 7, 0.0, &why);
    CHECK(n == 10, "%d writes under a maximum of 10", n);
    CHECK_THAT(why == METER_ON_DEMAND_MAX);
    meter_free(m);

    meter_limits quota = {.on_demand = 1, .account_wru = 20};
    m = meter_new(&quota, 0.0);
    n = writes_until_refused(m, 7, 0.0, &why);
    CHECK(n == 20, "%d writes under a quota of 20", n);
    CHECK_THAT(why == METER_ACCOUNT);
    meter_free(m);
}

static void test_switch_to_on_demand(void)
{
    /* A table provisioned at 30,000 RCU switches with 15,000 as its previous peak. */
    meter_limits l = {.rcu = 30000, .wcu = 10};
    meter *m = meter_new(&l, 0.0);
    meter_limits od = {.on_demand = 1};
    meter_configure(m, &od, 0.0);
    int n = 0;
    for (; n < 100000; n++) {
        uint64_t hash = (uint64_t)n * 0x9E3779B97F4A7C15ULL;
        if (meter_admit(m, 0, 1, hash, NULL, 0, 0.0) != METER_OK) break;
        meter_charge(m, 0, 1.0, 0.0);
        meter_charge_partition(m, 0, hash, NULL, 0, 1.0, 0.0);
    }
    CHECK(n >= 30000 && n <= 30100, "%d reads at once after the switch", n);
    meter_free(m);
}

/* One second of a client writing want times, evenly, at time now to key (hash, the
 * suffix "sk<i % nsks>"); returns how many were admitted. */
static int second_of_writes(meter *m, uint64_t hash, int nsks, int want, double now)
{
    char sk[32];
    int n = 0;
    for (int i = 0; i < want; i++) {
        int len = snprintf(sk, sizeof sk, "pk-sk%05d", nsks ? i % nsks : 0);
        double at = now + (double)i / want;
        if (meter_admit(m, 1, 1, hash, sk, (size_t)len, at) != METER_OK) continue;
        meter_charge(m, 1, 1.0, at);
        meter_charge_partition(m, 1, hash, sk, (size_t)len, 1.0, at);
        n++;
    }
    return n;
}

/* Writes served a second, on average over seconds [from, to) of a run at 1,500 a second. */
static double served(meter *m, uint64_t hash, int nsks, int from, int to)
{
    int total = 0;
    for (int s = 0; s < to; s++) {
        int n = second_of_writes(m, hash, nsks, 1500, (double)s);
        if (s >= from) total += n;
    }
    return (double)total / (to - from);
}

static void test_split_for_heat(void)
{
    /* One partition key with many sort keys, written at 1,500 a second: held to 1,000
     * until its partition has been hot for split_after seconds, then split. */
    meter_limits l = {.on_demand = 1, .split_after = 10, .sort_key_splits = 1};
    meter *m = meter_new(&l, 0.0);
    meter_totals t;
    double early = served(m, 77, 500, 3, 9);
    meter_free(m);
    CHECK(early > 950 && early < 1050, "%.0f a second before the split", early);
    m = meter_new(&l, 0.0);
    double late = served(m, 77, 500, 40, 50);
    meter_totals_get(m, 50.0, &t);
    CHECK(late == 1500, "%.0f a second after the split", late);
    CHECK(t.partitions > 8, "%u partitions after the split", t.partitions);
    meter_free(m);

    /* One item: never more than its partition's 1,000, however long it stays hot. */
    m = meter_new(&l, 0.0);
    late = served(m, 77, 1, 40, 50);
    CHECK(late > 950 && late < 1050, "one item served %.0f a second", late);
    meter_free(m);

    /* Without sort-key splits (a table with local indexes) the key's items stay together. */
    meter_limits lsi = {.on_demand = 1, .split_after = 10};
    m = meter_new(&lsi, 0.0);
    late = served(m, 77, 500, 40, 50);
    CHECK(late > 950 && late < 1050, "a key bound by local indexes served %.0f", late);
    meter_free(m);

    /* A hot key beside a cold one in its partition: the first refusal isolates the hot
     * one, which keeps its partition's ceiling (and debt), and the cold one is never held
     * back for it. */
    meter_limits one = {.rcu = 1, .wcu = 500, .split_after = 300};
    m = meter_new(&one, 0.0);
    meter_totals_get(m, 0.0, &t);
    CHECK(t.partitions == 1, "%u partitions", t.partitions);
    int cold_refused = 0, hot_served = 0;
    for (int s = 0; s < 20; s++) {
        int hot = second_of_writes(m, 1000, 1, 2000, (double)s);
        if (s >= 10) hot_served += hot;
        cold_refused += second_of_writes(m, 5000000000ULL, 1, 50, s + 0.5) < 50;
    }
    meter_totals_get(m, 20.0, &t);
    CHECK(cold_refused == 0, "cold key refused in %d seconds", cold_refused);
    CHECK(hot_served >= 9500 && hot_served <= 10500, "the hot key served %d in 10 s", hot_served);
    CHECK(t.partitions >= 2, "%u partitions after the isolation", t.partitions);
    meter_free(m);
}

int main(void)
{
    test_units();
    test_provisioned_burst();
    test_update_keeps_bank();
    test_partition_ceiling();
    test_on_demand();
    test_switch_to_on_demand();
    test_split_for_heat();
    return check_report("test_meter");
}
