/* test_backfill_hook.c — a global index's backfill reads and writes through the interface.
 *
 * 1. A table of items, some without the index's key attribute, gets a global index: the
 *    hook hears one read of the engine's own per base item and one write of its own per
 *    entry, naming the index, with the entry's partition and size; the index then holds
 *    exactly the items' entries, and its counts say so.
 * 2. The backfill of a second index is held in the middle of a chunk (the hook blocks one
 *    of its reads) while requests update, delete and put items in the chunks before, in
 *    the one held, and after it; once done, the index holds exactly the items' entries. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_int.h"

#include "call.h"

#define NITEMS 300
#define MAX_EVENTS 8192

typedef struct seen {
    char index[32]; /* "" for the table's own items */
    uint64_t partition;
    size_t bytes;
    int write, system;
} seen;

/* What the hook heard, from the requests' thread and the backfill's. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static seen events[MAX_EVENTS];
static size_t nevents, lost;
/* The backfill is held at its pause_at-th read of its own (0: never), until released. */
static size_t own_reads, pause_at;
static int paused, released;

static void record(void *arg, const engine_access *a)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    if (nevents < MAX_EVENTS) {
        seen *s = &events[nevents++];
        snprintf(s->index, sizeof s->index, "%s", a->index ? a->index : "");
        s->partition = a->partition;
        s->bytes = a->bytes;
        s->write = a->write;
        s->system = a->system;
    } else {
        lost++;
    }
    if (a->system && !a->write && ++own_reads == pause_at) {
        paused = 1;
        pthread_cond_broadcast(&changed);
        while (!released)
            pthread_cond_wait(&changed, &lock);
    }
    pthread_mutex_unlock(&lock);
}

static size_t events_now(void)
{
    pthread_mutex_lock(&lock);
    size_t n = nevents;
    pthread_mutex_unlock(&lock);
    return n;
}

static void drop(json_t *doc)
{
    json_decref(doc);
}

static int pair_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : x[1] > y[1];
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every page of a Scan of the table (index NULL) or of an index, as one array. */
static json_t *scan_all(qr_db *db, const char *index)
{
    json_t *all = json_array(), *start = NULL;
    for (;;) {
        char *from = start ? json_dumps(start, JSON_COMPACT) : NULL;
        char idx[64] = "";
        if (index) snprintf(idx, sizeof idx, ",\"IndexName\":\"%s\"", index);
        char excl[600] = "";
        if (from) snprintf(excl, sizeof excl, ",\"ExclusiveStartKey\":%s", from);
        free(from);
        json_t *page = call(db, "Scan", 1, "{\"TableName\":\"Fill\"%s%s}", idx, excl);
        json_array_extend(all, json_object_get(page, "Items"));
        json_decref(start);
        start = json_incref(json_object_get(page, "LastEvaluatedKey"));
        json_decref(page);
        if (start == NULL) return all;
    }
}

/* The item's pk and its value of attr ("pk=value"), or NULL if it has none (malloc'd). */
static char *pair_of(const json_t *item, const char *attr)
{
    const char *v = json_string_value(json_object_get(json_object_get(item, attr), "S"));
    if (v == NULL) return NULL;
    char *s;
    if (asprintf(&s, "%s=%s", json_string_value(json_object_get(json_object_get(item, "pk"), "S")),
                 v) < 0)
        return NULL;
    return s;
}

/* The sorted "pk=value" pairs of attr in items; returns how many. */
static size_t pairs(json_t *items, const char *attr, char ***out)
{
    size_t i, n = 0;
    json_t *it;
    *out = calloc(json_array_size(items) + 1, sizeof **out);
    json_array_foreach(items, i, it)
    {
        char *p = pair_of(it, attr);
        if (p) (*out)[n++] = p;
    }
    qsort(*out, n, sizeof **out, str_cmp);
    return n;
}

static void free_pairs(char **p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
    free(p);
}

/* The index holds exactly the entries of the table's items that have attr. */
static void check_index_matches(qr_db *db, const char *index, const char *attr)
{
    json_t *items = scan_all(db, NULL), *entries = scan_all(db, index);
    char **want, **got;
    size_t nw = pairs(items, attr, &want), ng = pairs(entries, attr, &got);
    CHECK(json_array_size(entries) == ng, "%s: every entry has its key attribute", index);
    CHECK(nw == ng, "%s holds %zu entries for the table's %zu items that have %s", index, ng, nw,
          attr);
    size_t same = 0;
    for (size_t i = 0; i < nw && i < ng; i++)
        same += strcmp(want[i], got[i]) == 0;
    CHECK(same == nw && nw == ng, "%s: %zu of %zu entries match their items", index, same, nw);
    for (size_t i = 0, shown = 0; i < nw && i < ng && shown < 5; i++)
        if (strcmp(want[i], got[i])) {
            fprintf(stderr, "  item %s, entry %s\n", want[i], got[i]);
            shown++;
        }
    free_pairs(want, nw);
    free_pairs(got, ng);
    json_decref(items);
    json_decref(entries);
}

static void create_index(qr_db *db, const char *name, const char *attr, const char *projection)
{
    drop(call(db, "UpdateTable", 1,
              "{\"TableName\":\"Fill\",\"AttributeDefinitions\":[{\"AttributeName\":\"%s\","
              "\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{\"Create\":{"
              "\"IndexName\":\"%s\",\"KeySchema\":[{\"AttributeName\":\"%s\",\"KeyType\":"
              "\"HASH\"}],\"Projection\":%s}}]}",
              attr, name, attr, projection));
}

/* Part 1: the backfill of byGrp (grp, with tag projected) over NITEMS items, i%5 == 0
 * without grp and i%3 == 0 without tag: entries of pk (6 bytes) + grp (5) + tag (5). */
static void test_reports(qr_db *db)
{
    size_t at = events_now();
    create_index(db, "byGrp", "grp",
                 "{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"tag\"]}");
    CHECK(qr_wait_indexes(db, 20000) == QR_OK, "the backfill of byGrp finishes");
    size_t end = events_now();

    /* Each group's partition, from the reads of a Query of it. */
    uint64_t part[7] = {0};
    for (int g = 0; g < 7; g++) {
        size_t from = events_now();
        json_t *r =
            call(db, "Query", 1,
                 "{\"TableName\":\"Fill\",\"IndexName\":\"byGrp\",\"KeyConditionExpression\":"
                 "\"grp = :g\",\"ExpressionAttributeValues\":{\":g\":{\"S\":\"g%d\"}}}",
                 g);
        size_t n = 0;
        for (int i = 0; i < NITEMS; i++)
            n += i % 5 && i % 7 == g;
        CHECK(json_integer_value(json_object_get(r, "Count")) == (json_int_t)n,
              "group g%d holds its %zu items", g, n);
        size_t i;
        json_t *it;
        json_array_foreach(json_object_get(r, "Items"), i, it)
        {
            CHECK(json_object_size(it) == 2 + (json_object_get(it, "tag") != NULL),
                  "an entry of byGrp holds pk, grp and tag only");
        }
        json_decref(r);
        pthread_mutex_lock(&lock);
        part[g] = nevents > from ? events[from].partition : 0;
        pthread_mutex_unlock(&lock);
    }

    /* What the backfill should have reported: (partition, bytes) of each entry. */
    uint64_t want[NITEMS][2], got[NITEMS][2];
    size_t nwant = 0, ngot = 0, own_writes = 0, own_base_reads = 0, others = 0;
    int64_t bytes = 0;
    for (int i = 0; i < NITEMS; i++) {
        if (i % 5 == 0) continue;
        want[nwant][0] = part[i % 7];
        want[nwant++][1] = 11 + (i % 3 ? 5 : 0);
        bytes += 11 + (i % 3 ? 5 : 0);
    }
    pthread_mutex_lock(&lock);
    for (size_t i = at; i < end; i++) {
        const seen *s = &events[i];
        if (s->system && s->write && strcmp(s->index, "byGrp") == 0) {
            if (ngot < NITEMS) {
                got[ngot][0] = s->partition;
                got[ngot][1] = s->bytes;
            }
            ngot++;
            own_writes++;
        } else if (s->system && !s->write && *s->index == 0) {
            own_base_reads++;
        } else {
            others++;
        }
    }
    pthread_mutex_unlock(&lock);
    CHECK(own_writes == nwant, "one write of the engine's own per entry: %zu for %zu", own_writes,
          nwant);
    CHECK(own_base_reads == NITEMS, "one read of its own per base item: %zu for %d", own_base_reads,
          NITEMS);
    CHECK(others == 0, "the backfill reports nothing else (%zu)", others);
    if (ngot == nwant) {
        qsort(want, nwant, sizeof want[0], pair_cmp);
        qsort(got, ngot, sizeof got[0], pair_cmp);
        size_t same = 0;
        for (size_t i = 0; i < nwant; i++)
            same += got[i][0] == want[i][0] && got[i][1] == want[i][1];
        CHECK(same == nwant, "%zu of %zu writes name their entry's partition and size", same,
              nwant);
    }

    json_t *d = call(db, "DescribeTable", 1, "{\"TableName\":\"Fill\"}");
    json_t *g =
        json_array_get(json_object_get(json_object_get(d, "Table"), "GlobalSecondaryIndexes"), 0);
    CHECK(json_integer_value(json_object_get(g, "ItemCount")) == (json_int_t)nwant &&
              json_integer_value(json_object_get(g, "IndexSizeBytes")) == bytes,
          "byGrp counts %lld entries of %lld bytes (want %zu, %lld)",
          (long long)json_integer_value(json_object_get(g, "ItemCount")),
          (long long)json_integer_value(json_object_get(g, "IndexSizeBytes")), nwant,
          (long long)bytes);
    json_decref(d);
    check_index_matches(db, "byGrp", "grp");
}

static void set_tag(qr_db *db, const char *pk, const char *tag)
{
    drop(call(db, "UpdateItem", 1,
              "{\"TableName\":\"Fill\",\"Key\":{\"pk\":{\"S\":\"%s\"}},\"UpdateExpression\":"
              "\"SET tag = :t\",\"ExpressionAttributeValues\":{\":t\":{\"S\":\"%s\"}}}",
              pk, tag));
}

static void remove_tag(qr_db *db, const char *pk)
{
    drop(call(db, "UpdateItem", 1,
              "{\"TableName\":\"Fill\",\"Key\":{\"pk\":{\"S\":\"%s\"}},\"UpdateExpression\":"
              "\"REMOVE tag\"}",
              pk));
}

static void delete_item(qr_db *db, const char *pk)
{
    drop(call(db, "DeleteItem", 1, "{\"TableName\":\"Fill\",\"Key\":{\"pk\":{\"S\":\"%s\"}}}", pk));
}

/* Part 2: byTag's backfill held at its 100th read, in its second chunk of 64 items: the
 * first chunk's entries are written, the second's items up to the 100th read (by a
 * cursor whose view the writes below do not change). */
static void test_writes_during_backfill(qr_db *db)
{
    json_t *items = scan_all(db, NULL); /* in the order the backfill reads them */
    CHECK(json_array_size(items) == NITEMS, "the table holds its %d items", NITEMS);
    const char *pk[NITEMS];
    for (size_t i = 0; i < NITEMS && i < json_array_size(items); i++)
        pk[i] = json_string_value(
            json_object_get(json_object_get(json_array_get(items, i), "pk"), "S"));
    pthread_mutex_lock(&lock);
    own_reads = 0;
    pause_at = 100;
    pthread_mutex_unlock(&lock);
    create_index(db, "byTag", "tag", "{\"ProjectionType\":\"KEYS_ONLY\"}");

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 20;
    pthread_mutex_lock(&lock);
    int rc = 0;
    while (!paused && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&changed, &lock, &ts);
    int held = paused;
    pthread_mutex_unlock(&lock);
    CHECK(held, "the backfill is held in its second chunk");

    /* Items of the chunk written (ranks 0-63), of the chunk held, read (64-99) and not
     * yet read (100-127), and of the chunks after it. */
    static const int moved[] = {10, 70, 99, 110, 200}, removed[] = {30, 75, 120, 230},
                     deleted[] = {20, 80, 115, 210};
    char tag[32];
    for (size_t i = 0; i < sizeof moved / sizeof moved[0]; i++) {
        snprintf(tag, sizeof tag, "moved%d", moved[i]);
        set_tag(db, pk[moved[i]], tag);
    }
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++)
        remove_tag(db, pk[removed[i]]);
    for (size_t i = 0; i < sizeof deleted / sizeof deleted[0]; i++)
        delete_item(db, pk[deleted[i]]);
    for (int i = 0; i < 20; i++)
        drop(call(db, "PutItem", 1,
                  "{\"TableName\":\"Fill\",\"Item\":{\"pk\":{\"S\":\"new%d\"},\"tag\":{\"S\":"
                  "\"t%d\"}}}",
                  i, i));

    /* The worker applies what the writes logged before the backfill goes on, and
     * reports none of it: the writes did. */
    size_t reported = events_now();
    uint64_t pending = 1;
    double oldest;
    for (int i = 0; i < 2000 && pending; i++) {
        propagate_lag(db, &pending, &oldest);
        if (pending) usleep(5000);
    }
    CHECK(pending == 0, "the writes' index work is applied while the backfill is held");
    CHECK(events_now() == reported, "the worker applying it reports nothing (%zu events)",
          events_now() - reported);
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    CHECK(qr_wait_indexes(db, 20000) == QR_OK, "the backfill of byTag finishes");
    check_index_matches(db, "byTag", "tag");
    json_decref(items);
}

int main(void)
{
    char dir[] = "/tmp/quarry-backfill-hook-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    qr_db *db;
    char *msg = NULL;
    CHECK(qr_open(dir, NULL, &db, &msg) == QR_OK, "open: %s", msg ? msg : "");
    drop(call(db, "CreateTable", 1,
              "{\"TableName\":\"Fill\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
              "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
              "\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}"));
    for (int i = 0; i < NITEMS; i++) {
        char grp[40] = "", tag[40] = "";
        if (i % 5) snprintf(grp, sizeof grp, ",\"grp\":{\"S\":\"g%d\"}", i % 7);
        if (i % 3) snprintf(tag, sizeof tag, ",\"tag\":{\"S\":\"t%d\"}", i % 10);
        drop(call(db, "PutItem", 1,
                  "{\"TableName\":\"Fill\",\"Item\":{\"pk\":{\"S\":\"i%03d\"}%s%s,\"pad\":{\"S\":"
                  "\"%.*s\"}}}",
                  i, grp, tag, i % 13 + 1, "abcdefghijklmnopqrstuvwxyz"));
    }
    engine_set_hook(db, record, NULL);
    test_reports(db);
    test_writes_during_backfill(db);
    engine_set_hook(db, NULL, NULL);
    CHECK(lost == 0, "the hook's record kept every event (%zu lost)", lost);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_backfill_hook");
}
