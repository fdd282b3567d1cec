/* top.c — `quarry top --endpoint URL [TABLE [INDEX]]`: the hottest keys of a server's
 * tables, refreshed like `nodetool toppartitions`. For each table and global index whose
 * contributor insights are on, it asks GetInsightRuleReport for each rule Describe names
 * and prints each key's share of the traffic and its units per second against its
 * partition's ceiling. A client of the DynamoDB API (checker/client.h), nothing more: what
 * is counted, and how, is the server's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checker/client.h"
#include "cli/cli.h"

typedef struct top_opts {
    const char *table, *index;
    int window;   /* seconds of traffic shown */
    int count;    /* keys per rule */
    double every; /* seconds between refreshes */
    int once, large;
} top_opts;

static const char *const rule_titles[][2] = {
    {"-PKC-", "most accessed partition keys"},
    {"-SKC-", "most accessed partition and sort keys"},
    {"-PKT-", "most throttled partition keys"},
    {"-SKT-", "most throttled partition and sort keys"},
};

/* Prints one rule's report. */
static void print_rule(const char *title, int accessed, const json_t *rep, int window)
{
    double total = json_number_value(json_object_get(rep, "AggregateValue"));
    double span = json_number_value(json_object_get(rep, "QuarryEndTime")) -
                  json_number_value(json_object_get(rep, "QuarryStartTime"));
    const json_t *ceiling = json_object_get(rep, "QuarryPartitionCeiling");
    double rcu_max = json_number_value(json_object_get(ceiling, "ReadUnitsPerSecond"));
    double wcu_max = json_number_value(json_object_get(ceiling, "WriteUnitsPerSecond"));
    if (span <= 0) span = window;
    printf("  %s (%.0f %s in %.0f s)\n", title, total, accessed ? "accesses" : "throttled", span);
    if (json_array_size(json_object_get(rep, "Contributors")) == 0) {
        printf("    (none)\n");
        return;
    }
    if (accessed)
        printf("    %-40s %7s %9s %9s %9s %9s\n", "key", "share", "count", "RCU/s", "WCU/s",
               "ceiling");
    else
        printf("    %-40s %7s %9s\n", "key", "share", "count");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(rep, "Contributors"), i, c)
    {
        char key[512];
        size_t at = 0, j;
        json_t *k;
        key[0] = '\0';
        json_array_foreach(json_object_get(c, "Keys"), j, k)
        {
            if (at < sizeof key)
                at += (size_t)snprintf(key + at, sizeof key - at, "%s%s", j ? " | " : "",
                                       json_string_value(k));
        }
        double v = json_number_value(json_object_get(c, "ApproximateAggregateValue"));
        double share = total > 0 ? 100.0 * v / total : 0;
        if (!accessed) {
            printf("    %-40.40s %6.1f%% %9.0f\n", key, share, v);
            continue;
        }
        double rcu = json_number_value(json_object_get(c, "QuarryReadUnits")) / span;
        double wcu = json_number_value(json_object_get(c, "QuarryWriteUnits")) / span;
        double of_ceiling = 100.0 * (rcu / rcu_max > wcu / wcu_max ? rcu / rcu_max : wcu / wcu_max);
        printf("    %-40.40s %6.1f%% %9.0f %9.1f %9.1f %8.1f%%\n", key, share, v, rcu, wcu,
               of_ceiling);
    }
}

/* Prints the rules of one table or index with insights on. */
static int print_target(client *cl, const top_opts *o, const char *table, const char *index)
{
    qr_err err;
    err_init(&err);
    json_t *req = json_pack("{s:s}", "TableName", table), *d = NULL;
    if (index) json_object_set_new(req, "IndexName", json_string(index));
    int rc = client_call(cl, "DescribeContributorInsights", req, &d, &err);
    json_decref(req);
    if (rc) {
        fprintf(stderr, "quarry top: %s\n", err.msg);
        err_clear(&err);
        return -1;
    }
    const char *mode = json_string_value(json_object_get(d, "ContributorInsightsMode"));
    printf("%s%s%s  (%s)\n", table, index ? " / index " : "", index ? index : "",
           mode ? mode : "DISABLED");
    json_t *rules = json_object_get(d, "ContributorInsightsRuleList");
    for (size_t kind = 0; kind < 4; kind++) {
        size_t i;
        json_t *r;
        json_array_foreach(rules, i, r)
        {
            const char *name = json_string_value(r);
            if (strstr(name, rule_titles[kind][0]) == NULL) continue;
            json_t *q = json_pack("{s:s,s:i,s:i,s:i}", "RuleName", name, "QuarryLastSeconds",
                                  o->window, "Period", o->window, "MaxContributorCount", o->count),
                   *rep = NULL;
            if (client_call(cl, "GetInsightRuleReport", q, &rep, &err) == 0)
                print_rule(rule_titles[kind][1], kind < 2, rep, o->window);
            else {
                fprintf(stderr, "quarry top: %s: %s\n", name, err.msg);
                err_clear(&err);
                rc = -1;
            }
            json_decref(q);
            json_decref(rep);
        }
    }
    if (o->large) {
        json_t *q = json_pack("{s:s}", "TableName", table), *l = NULL;
        if (index) json_object_set_new(q, "IndexName", json_string(index));
        if (client_call(cl, "QuarryLargeItemCollections", q, &l, &err) == 0) {
            json_t *all = json_object_get(l, "LargeItemCollections"), *e;
            size_t i;
            printf("  large item collections: %zu\n", json_array_size(all));
            json_array_foreach(all, i, e)
            {
                char *key = json_dumps(json_object_get(e, "Key"), JSON_COMPACT);
                printf("    %-40.40s %12lld bytes %9lld items\n", key ? key : "?",
                       (long long)json_integer_value(json_object_get(e, "SizeBytes")),
                       (long long)json_integer_value(json_object_get(e, "ItemCount")));
                free(key);
            }
        } else {
            fprintf(stderr, "quarry top: %s\n", err.msg);
            err_clear(&err);
            rc = -1;
        }
        json_decref(q);
        json_decref(l);
    }
    json_decref(d);
    printf("\n");
    return rc;
}

/* One screen: every target with insights on (or the one asked for). */
static int refresh(client *cl, const top_opts *o, const char *endpoint)
{
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    printf("quarry top  %s  %s  (the last %d s)\n\n", endpoint, when, o->window);
    if (o->table) return print_target(cl, o, o->table, o->index);
    qr_err err;
    err_init(&err);
    json_t *req = json_object(), *list = NULL;
    int rc = client_call(cl, "ListContributorInsights", req, &list, &err);
    json_decref(req);
    if (rc) {
        fprintf(stderr, "quarry top: %s\n", err.msg);
        err_clear(&err);
        return -1;
    }
    size_t i;
    json_t *s;
    json_t *all = json_object_get(list, "ContributorInsightsSummaries");
    if (json_array_size(all) == 0)
        printf("no table has contributor insights on (UpdateContributorInsights enables them)\n");
    json_array_foreach(all, i, s)
    {
        if (print_target(cl, o, json_string_value(json_object_get(s, "TableName")),
                         json_string_value(json_object_get(s, "IndexName"))))
            rc = -1;
    }
    json_decref(list);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: quarry top --endpoint URL [--interval SECONDS] [--window SECONDS]\n"
               "                  [--count N] [--large] [--once] [TABLE [INDEX]]\n"
               "       quarry top --help\n"
               "  the hottest keys of the tables (or of TABLE, or its global INDEX) whose\n"
               "  contributor insights are on, refreshed every --interval seconds (2);\n"
               "  --window: the seconds of traffic counted (60); --count: keys per rule (10);\n"
               "  --large: list the large item collections too (a full read of each table);\n"
               "  --once: print once and exit (scripts, tests)\n");
}

int cli_top(int argc, char **argv)
{
    top_opts o = {.window = 60, .count = 10, .every = 2};
    const char *endpoint = NULL, *args[2];
    int rest = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--endpoint") == 0 && v)
            endpoint = argv[++i];
        else if (strcmp(a, "--interval") == 0 && v)
            o.every = atof(argv[++i]);
        else if (strcmp(a, "--window") == 0 && v)
            o.window = atoi(argv[++i]);
        else if (strcmp(a, "--count") == 0 && v)
            o.count = atoi(argv[++i]);
        else if (strcmp(a, "--large") == 0)
            o.large = 1;
        else if (strcmp(a, "--once") == 0)
            o.once = 1;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' || rest == 2) {
            usage(stderr);
            return 2;
        } else
            args[rest++] = a;
    }
    if (endpoint == NULL || rest > 2 || o.every <= 0 || o.window < 1 || o.window > 900 ||
        o.count < 1 || o.count > 100) {
        usage(stderr);
        return 2;
    }
    if (strncmp(endpoint, "http://", 7) != 0 && strncmp(endpoint, "https://", 8) != 0) {
        fprintf(stderr, "quarry top: endpoint '%s' must be an http:// or https:// URL\n", endpoint);
        return 2;
    }
    o.table = rest > 0 ? args[0] : NULL;
    o.index = rest > 1 ? args[1] : NULL;
    client cl;
    qr_err err;
    err_init(&err);
    if (client_init(&cl, endpoint, &err)) {
        fprintf(stderr, "quarry top: %s\n", err.msg);
        err_clear(&err);
        return 1;
    }
    int rc = 0, tty = isatty(STDOUT_FILENO);
    for (;;) {
        if (tty && !o.once) printf("\033[H\033[2J"); /* a fresh screen, as top does */
        rc = refresh(&cl, &o, endpoint) ? 1 : 0;
        fflush(stdout);
        if (o.once) break;
        struct timespec ts = {(time_t)o.every, (long)((o.every - (double)(time_t)o.every) * 1e9)};
        nanosleep(&ts, NULL);
    }
    client_free(&cl);
    return rc;
}
