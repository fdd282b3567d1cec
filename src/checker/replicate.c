/* replicate.c — the replicator of replicate.h, one loop, no threads. Per table: check the
 * source's stream, create the table on the target, copy the items by Scan, then read the
 * shards (parents first) from TRIM_HORIZON and apply each record's new image or delete, in
 * batches of distinct keys. Replaying what a kill cut short, or changes older than the copy,
 * re-applies whole images in order: an item may go back a moment, never ends wrong. Not a
 * transformer: items land as they are, in tables of the same names. */
#include "checker/replicate.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STATE_VERSION 1
#define GET_RECORDS_LIMIT 1000
/* BatchWriteItem's limit of requests. */
#define BATCH_WRITES 25
/* Items per page of the copy, and so between two checkpoints of it. */
#define COPY_PAGE_ITEMS 500
#define SAMPLES 5

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* err's message behind a prefix ("cannot reach URL"); err->type kept. Returns -1. */
static int err_prefix(qr_err *err, const char *prefix)
{
    char msg[sizeof err->msg];
    const char *type = err->type;
    snprintf(msg, sizeof msg, "%s", err->msg);
    err_clear(err);
    return err_set(err, type, "%s: %s", prefix, msg);
}

static int stopped(const rp_options *o)
{
    return o && o->stop && *o->stop;
}

/* Sleeps ms, in slices, returning early once a stop is asked. */
static void pause_ms(const rp_options *o, int ms)
{
    while (ms > 0 && !stopped(o)) {
        int slice = ms < 50 ? ms : 50;
        usleep((useconds_t)slice * 1000);
        ms -= slice;
    }
}

/* An error no retry can mend: the request itself is wrong, or names nothing. */
static int permanent(const qr_err *e)
{
    return e->type &&
           (strcmp(e->type, QR_E_VALIDATION) == 0 || strcmp(e->type, QR_E_SERIALIZATION) == 0 ||
            strcmp(e->type, QR_E_NOT_FOUND) == 0 || strcmp(e->type, QR_E_IN_USE) == 0 ||
            strcmp(e->type, QR_E_LIMIT) == 0);
}

/* conn_call, waiting out what passes: a server restarting (connection refused), 5xx
 * answers, throttling. Says once per episode what it waits for. Returns 0, or -1 with err
 * set for a permanent error or a stop. */
static int call(conn *c, const rp_options *o, const char *op, json_t *body, json_t **out,
                qr_err *err)
{
    if (o == NULL) return conn_call(c, op, body, out, err); /* the comparison: no waiting */
    int wait = 100, told = 0;
    for (;;) {
        qr_err e;
        err_init(&e);
        if (conn_call(c, op, body, out, &e) == 0) {
            if (told) fprintf(stderr, "quarry replicate: %s answers again\n", c->where);
            return 0;
        }
        if (permanent(&e) || strstr(e.msg, "ExpiredIteratorException") ||
            strstr(e.msg, "TrimmedDataAccessException")) {
            err_set(err, e.type, "%s", e.msg);
            return -1;
        }
        if (!told) /* the client's messages name the endpoint when it did not answer */
            fprintf(stderr, "quarry replicate: %s%s%s; trying again until it answers\n",
                    strstr(e.msg, c->where) ? "" : c->where, strstr(e.msg, c->where) ? "" : ": ",
                    e.msg);
        told = 1;
        if (stopped(o)) return err_set(err, QR_E_INTERNAL, "stopped");
        pause_ms(o, wait);
        if (wait < 2000) wait *= 2;
    }
}

/* ---- the state file ---- */

static int save_state(const rp_options *o, json_t *state, qr_err *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->state_path);
    char *text = json_dumps(state, JSON_INDENT(1) | JSON_SORT_KEYS);
    if (text == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t n = strlen(text), done = 0;
    int ok = fd >= 0;
    while (ok && done < n) {
        ssize_t w = write(fd, text + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        if (ok) done += (size_t)w;
    }
    ok = ok && fsync(fd) == 0;
    if (fd >= 0) close(fd);
    free(text);
    if (!ok || rename(tmp, o->state_path) != 0)
        return err_set(err, QR_E_INTERNAL, "cannot write the state file %s: %s", o->state_path,
                       strerror(errno));
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", o->state_path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd); /* the rename itself survives a crash */
        close(dfd);
    }
    return 0;
}

/* The state of an earlier run, or a new one; refuses one made for other endpoints. */
static json_t *load_state(const rp_options *o, qr_err *err)
{
    if (access(o->state_path, F_OK) != 0)
        return json_pack("{s:i,s:s,s:s,s:{}}", "version", STATE_VERSION, "from", o->from, "to",
                         o->to, "tables");
    json_error_t je;
    json_t *s = json_load_file(o->state_path, 0, &je);
    if (s == NULL || !json_is_object(json_object_get(s, "tables"))) {
        json_decref(s);
        err_validation(err, "the state file %s is not one quarry replicate wrote (%s)",
                       o->state_path, je.text);
        return NULL;
    }
    const char *from = json_string_value(json_object_get(s, "from"));
    const char *to = json_string_value(json_object_get(s, "to"));
    if (from == NULL || to == NULL || strcmp(from, o->from) != 0 || strcmp(to, o->to) != 0) {
        err_validation(err,
                       "the state file %s is of a replication from %s to %s, not from %s to %s: "
                       "give another --state",
                       o->state_path, from ? from : "?", to ? to : "?", o->from, o->to);
        json_decref(s);
        return NULL;
    }
    return s;
}

/* ---- the tables ---- */

static json_t *describe(conn *c, const rp_options *o, const char *table, qr_err *err)
{
    json_t *req = json_pack("{s:s}", "TableName", table), *out = NULL;
    int rc = call(c, o, "DescribeTable", req, &out, err);
    json_decref(req);
    if (rc) return NULL;
    json_t *t = json_incref(json_object_get(out, "Table"));
    json_decref(out);
    return t;
}

/* Every table of the source, when --tables named none. */
static json_t *list_tables(conn *c, const rp_options *o, qr_err *err)
{
    json_t *names = json_array(), *req = json_object();
    for (;;) {
        json_t *out;
        if (call(c, o, "ListTables", req, &out, err)) {
            json_decref(names);
            names = NULL;
            break;
        }
        json_array_extend(names, json_object_get(out, "TableNames"));
        json_t *last = json_object_get(out, "LastEvaluatedTableName");
        if (last) json_object_set(req, "ExclusiveStartTableName", last);
        json_decref(out);
        if (last == NULL) break;
    }
    json_decref(req);
    return names;
}

/* The CreateTable request that makes on the target the table desc describes. */
static json_t *create_request(const json_t *desc)
{
    json_t *req = json_object();
    const char *copy[] = {"TableName", "AttributeDefinitions", "KeySchema",
                          "DeletionProtectionEnabled", NULL};
    for (int i = 0; copy[i]; i++) {
        json_t *v = json_object_get(desc, copy[i]);
        if (v) json_object_set(req, copy[i], v);
    }
    const char *mode = json_string_value(
        json_object_get(json_object_get(desc, "BillingModeSummary"), "BillingMode"));
    int on_demand = mode && strcmp(mode, "PAY_PER_REQUEST") == 0;
    json_object_set_new(req, "BillingMode",
                        json_string(on_demand ? "PAY_PER_REQUEST" : "PROVISIONED"));
    json_t *pt = json_object_get(desc, "ProvisionedThroughput");
    if (!on_demand && pt)
        json_object_set_new(
            req, "ProvisionedThroughput",
            json_pack("{s:O,s:O}", "ReadCapacityUnits", json_object_get(pt, "ReadCapacityUnits"),
                      "WriteCapacityUnits", json_object_get(pt, "WriteCapacityUnits")));
    const char *lists[2] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};
    for (int l = 0; l < 2; l++) {
        json_t *src = json_object_get(desc, lists[l]);
        if (json_array_size(src) == 0) continue;
        json_t *dst = json_array();
        size_t i;
        json_t *ix;
        json_array_foreach(src, i, ix)
        {
            json_t *d = json_pack("{s:O,s:O,s:O}", "IndexName", json_object_get(ix, "IndexName"),
                                  "KeySchema", json_object_get(ix, "KeySchema"), "Projection",
                                  json_object_get(ix, "Projection"));
            json_t *ipt = json_object_get(ix, "ProvisionedThroughput");
            if (l == 0 && !on_demand && ipt)
                json_object_set_new(d, "ProvisionedThroughput",
                                    json_pack("{s:O,s:O}", "ReadCapacityUnits",
                                              json_object_get(ipt, "ReadCapacityUnits"),
                                              "WriteCapacityUnits",
                                              json_object_get(ipt, "WriteCapacityUnits")));
            json_array_append_new(dst, d);
        }
        json_object_set_new(req, lists[l], dst);
    }
    json_t *ss = json_object_get(desc, "StreamSpecification");
    if (json_is_true(json_object_get(ss, "StreamEnabled")))
        json_object_set_new(req, "StreamSpecification",
                            json_pack("{s:b,s:O}", "StreamEnabled", 1, "StreamViewType",
                                      json_object_get(ss, "StreamViewType")));
    json_t *cls = json_object_get(json_object_get(desc, "TableClassSummary"), "TableClass");
    if (cls) json_object_set(req, "TableClass", cls);
    return req;
}

/* Whether desc and every global index of it are ACTIVE. */
static int active(const json_t *desc)
{
    const char *st = json_string_value(json_object_get(desc, "TableStatus"));
    if (st && strcmp(st, "ACTIVE") != 0) return 0;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(desc, "GlobalSecondaryIndexes"), i, g)
    {
        const char *is = json_string_value(json_object_get(g, "IndexStatus"));
        if (is && strcmp(is, "ACTIVE") != 0) return 0;
    }
    return 1;
}

/* Creates the table on the target (unless the state says this run already did), waits
 * until it is ACTIVE, and gives it the source's TTL setting. */
static int create_target(conn *src, conn *dst, const rp_options *o, json_t *state, json_t *ts,
                         const json_t *desc, qr_err *err)
{
    const char *name = json_string_value(json_object_get(desc, "TableName"));
    int ours = json_is_true(json_object_get(ts, "creating"));
    json_t *req = create_request(desc), *out = NULL;
    json_object_set_new(ts, "creating", json_true());
    if (save_state(o, state, err)) {
        json_decref(req);
        return -1;
    }
    qr_err e;
    err_init(&e);
    int rc = call(dst, o, "CreateTable", req, &out, &e);
    json_decref(req);
    json_decref(out);
    if (rc && !(ours && e.type && strcmp(e.type, QR_E_IN_USE) == 0)) {
        qr_err ignored;
        err_init(&ignored);
        json_object_del(ts, "creating"); /* whatever is there is not this run's */
        save_state(o, state, &ignored);
        if (e.type && strcmp(e.type, QR_E_IN_USE) == 0)
            return err_validation(err,
                                  "table %s already exists on %s: quarry replicate copies into "
                                  "tables it creates; delete it, or give the --state file of "
                                  "the run that created it",
                                  name, dst->where);
        return err_set(err, e.type, "creating %s on %s: %s", name, dst->where, e.msg);
    }
    for (;;) {
        json_t *d = describe(dst, o, name, err);
        if (d == NULL) return -1;
        int ready = active(d);
        json_decref(d);
        if (ready) break;
        if (stopped(o)) return err_set(err, QR_E_INTERNAL, "stopped");
        pause_ms(o, 100);
    }
    json_t *treq = json_pack("{s:s}", "TableName", name), *ttl = NULL;
    if (call(src, o, "DescribeTimeToLive", treq, &ttl, err)) {
        json_decref(treq);
        return -1;
    }
    json_decref(treq);
    json_t *tdesc = json_object_get(ttl, "TimeToLiveDescription");
    const char *status = json_string_value(json_object_get(tdesc, "TimeToLiveStatus"));
    const char *attr = json_string_value(json_object_get(tdesc, "AttributeName"));
    rc = 0;
    if (status && attr && (strcmp(status, "ENABLED") == 0 || strcmp(status, "ENABLING") == 0)) {
        json_t *u = json_pack("{s:s,s:{s:b,s:s}}", "TableName", name, "TimeToLiveSpecification",
                              "Enabled", 1, "AttributeName", attr),
               *uo = NULL;
        rc = call(dst, o, "UpdateTimeToLive", u, &uo, err);
        json_decref(u);
        json_decref(uo);
    }
    json_decref(ttl);
    if (rc) return -1;
    json_object_del(ts, "creating");
    json_object_set_new(ts, "phase", json_string("copy"));
    fprintf(stderr, "quarry replicate: %s: created on %s\n", name, dst->where);
    return save_state(o, state, err);
}

/* Sends writes (an array of at most 25 PutRequest/DeleteRequest entries of distinct keys,
 * stolen) to table on dst with BatchWriteItem, sending again what comes back unprocessed. */
static int write_batch(conn *dst, const rp_options *o, const char *table, json_t *writes,
                       qr_err *err)
{
    json_t *req = json_pack("{s:{s:o}}", "RequestItems", table, writes);
    int wait = 20, rc = 0;
    for (;;) {
        json_t *out;
        if ((rc = call(dst, o, "BatchWriteItem", req, &out, err)) != 0) break;
        json_t *left = json_object_get(out, "UnprocessedItems");
        if (json_object_size(left) == 0) {
            json_decref(out);
            break;
        }
        json_object_set(req, "RequestItems", left);
        json_decref(out);
        pause_ms(o, wait);
        if (wait < 1000) wait *= 2;
    }
    json_decref(req);
    return rc;
}

/* Writes items (an array; a Scan's, so of distinct keys) to table on dst, 25 at a time. */
static int write_items(conn *dst, const rp_options *o, const char *table, json_t *items,
                       qr_err *err)
{
    size_t n = json_array_size(items);
    for (size_t at = 0; at < n; at += BATCH_WRITES) {
        json_t *puts = json_array();
        for (size_t i = at; i < n && i < at + BATCH_WRITES; i++)
            json_array_append_new(
                puts, json_pack("{s:{s:O}}", "PutRequest", "Item", json_array_get(items, i)));
        if (write_batch(dst, o, table, puts, err)) return -1;
    }
    return 0;
}

/* Copies the table's items page by page from where the state says the copy stopped. */
static int copy_items(conn *src, conn *dst, const rp_options *o, json_t *state, json_t *ts,
                      const char *name, qr_err *err)
{
    json_t *req = json_pack("{s:s,s:b,s:i}", "TableName", name, "ConsistentRead", 1, "Limit",
                            COPY_PAGE_ITEMS);
    json_t *from = json_object_get(ts, "scan_from");
    if (from) json_object_set(req, "ExclusiveStartKey", from);
    json_int_t copied = json_integer_value(json_object_get(ts, "copied"));
    double told = 0;
    int rc = 0;
    while (rc == 0) {
        if (stopped(o)) {
            rc = err_set(err, QR_E_INTERNAL, "stopped");
            break;
        }
        json_t *page;
        if ((rc = call(src, o, "Scan", req, &page, err)) != 0) break;
        json_t *items = json_object_get(page, "Items");
        rc = write_items(dst, o, name, items, err);
        json_t *last = json_object_get(page, "LastEvaluatedKey");
        if (rc == 0) {
            copied += (json_int_t)json_array_size(items);
            json_object_set_new(ts, "copied", json_integer(copied));
            if (last) {
                json_object_set(ts, "scan_from", last);
                json_object_set(req, "ExclusiveStartKey", last);
            } else {
                json_object_del(ts, "scan_from");
                json_object_set_new(ts, "phase", json_string("stream"));
            }
            rc = save_state(o, state, err);
        }
        json_decref(page);
        double now = now_seconds();
        if (rc == 0 && (last == NULL || now - told >= o->report_seconds)) {
            fprintf(stderr, "quarry replicate: %s: %lld items copied%s\n", name, (long long)copied,
                    last ? "" : "; following its stream");
            told = now;
        }
        if (last == NULL) break;
    }
    json_decref(req);
    return rc;
}

/* ---- the streams ---- */

typedef struct follow {
    const char *name;
    json_t *ts;     /* the table's state (borrowed from the state document) */
    json_t *iters;  /* shard id -> iterator, in memory only */
    double newest;  /* ApproximateCreationDateTime of the newest record applied */
    double told;    /* when the last progress line was printed */
    int caught_up;  /* the last round found nothing new */
    int pending;    /* this round left a shard unread (its iterator had expired) */
    int told_ended; /* said that its stream is disabled and read to the end */
} follow;

/* The stream's description: its StreamStatus and every shard (all pages of them). */
static json_t *describe_stream(conn *src, const rp_options *o, const char *arn, qr_err *err)
{
    json_t *shards = json_array(), *req = json_pack("{s:s}", "StreamArn", arn), *status = NULL;
    for (;;) {
        json_t *out;
        if (call(src, o, "DescribeStream", req, &out, err)) {
            json_decref(shards);
            shards = NULL;
            break;
        }
        json_t *sd = json_object_get(out, "StreamDescription");
        json_array_extend(shards, json_object_get(sd, "Shards"));
        if (status == NULL) status = json_incref(json_object_get(sd, "StreamStatus"));
        json_t *last = json_object_get(sd, "LastEvaluatedShardId");
        if (last) json_object_set(req, "ExclusiveStartShardId", last);
        json_decref(out);
        if (last == NULL) break;
    }
    json_decref(req);
    if (shards == NULL) {
        json_decref(status);
        return NULL;
    }
    return json_pack("{s:o,s:o}", "Shards", shards, "StreamStatus",
                     status ? status : json_string("ENABLED"));
}

/* The records of a GetRecords page being applied: consecutive records of distinct keys
 * go in one BatchWriteItem (their order does not matter then); a key seen again sends
 * what is pending first, so each key's changes land in their order. */
typedef struct applier {
    conn *dst;
    const rp_options *o;
    const char *table;
    json_t *writes; /* PutRequest / DeleteRequest entries */
    json_t *keys;   /* their keys' canonical text -> true */
} applier;

static int apply_flush(applier *a, qr_err *err)
{
    if (json_array_size(a->writes) == 0) return 0;
    json_t *w = a->writes;
    a->writes = json_array();
    json_object_clear(a->keys);
    return write_batch(a->dst, a->o, a->table, w, err);
}

/* Adds one stream record: its new image put, or its keys deleted. */
static int apply_record(applier *a, json_t *rec, qr_err *err)
{
    const char *event = json_string_value(json_object_get(rec, "eventName"));
    json_t *d = json_object_get(rec, "dynamodb"), *keys = json_object_get(d, "Keys"), *w;
    if (event && strcmp(event, "REMOVE") == 0) {
        w = json_pack("{s:{s:O}}", "DeleteRequest", "Key", keys);
    } else {
        json_t *image = json_object_get(d, "NewImage");
        if (image == NULL)
            return err_validation(err, "a %s record of %s's stream carries no NewImage",
                                  event ? event : "?", a->table);
        w = json_pack("{s:{s:O}}", "PutRequest", "Item", image);
    }
    char *k = json_dumps(keys, JSON_COMPACT | JSON_SORT_KEYS);
    if (w == NULL || k == NULL) {
        json_decref(w);
        free(k);
        return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    int rc = 0;
    if (json_object_get(a->keys, k) || json_array_size(a->writes) == BATCH_WRITES)
        rc = apply_flush(a, err);
    json_array_append_new(a->writes, w);
    json_object_set_new(a->keys, k, json_true());
    free(k);
    return rc;
}

static void report(follow *f, int caught_up, double now)
{
    json_int_t applied = json_integer_value(json_object_get(f->ts, "applied"));
    char age[64] = "no record yet";
    if (f->newest > 0) snprintf(age, sizeof age, "newest %.1f s old", now - f->newest);
    fprintf(stderr, "quarry replicate: %s: %lld records applied, %s%s\n", f->name,
            (long long)applied, age, caught_up ? ", caught up" : "");
    f->told = now;
}

/* An iterator for shard: after the last record applied, or from its first record. */
static int shard_iterator(conn *src, const rp_options *o, const char *arn, const char *shard,
                          const char *seq, char **out_it, qr_err *err)
{
    json_t *req = json_pack("{s:s,s:s,s:s}", "StreamArn", arn, "ShardId", shard,
                            "ShardIteratorType", seq ? "AFTER_SEQUENCE_NUMBER" : "TRIM_HORIZON");
    if (seq) json_object_set_new(req, "SequenceNumber", json_string(seq));
    json_t *out;
    int rc = call(src, o, "GetShardIterator", req, &out, err);
    json_decref(req);
    if (rc) return -1;
    const char *it = json_string_value(json_object_get(out, "ShardIterator"));
    *out_it = it ? strdup(it) : NULL;
    json_decref(out);
    return 0;
}

/* One GetRecords on shard, applied and checkpointed. Returns the number of records
 * applied, or -1 with err set. */
static int read_shard(conn *src, conn *dst, const rp_options *o, json_t *state, follow *f,
                      const char *arn, const char *shard, qr_err *err)
{
    json_t *shards = json_object_get(f->ts, "shards");
    json_t *ss = json_object_get(shards, shard);
    if (ss == NULL) {
        json_object_set_new(shards, shard, json_object());
        ss = json_object_get(shards, shard);
    }
    const char *seq = json_string_value(json_object_get(ss, "seq"));
    const char *it = json_string_value(json_object_get(f->iters, shard));
    if (it == NULL) {
        char *fresh = NULL;
        if (shard_iterator(src, o, arn, shard, seq, &fresh, err)) {
            if (strstr(err->msg, "TrimmedDataAccessException")) {
                const char *type = err->type;
                err_clear(err);
                err_set(err, type,
                        "%s: the records of shard %s after %s are gone from the stream (kept "
                        "24 hours): the target has missed changes; start again with a new "
                        "--state and an empty target",
                        f->name, shard, seq ? seq : "its start");
            }
            return -1;
        }
        if (fresh == NULL) { /* a closed shard with nothing after seq */
            json_object_set_new(ss, "done", json_true());
            return save_state(o, state, err) ? -1 : 0;
        }
        json_object_set_new(f->iters, shard, json_string(fresh));
        free(fresh);
        it = json_string_value(json_object_get(f->iters, shard));
    }
    json_t *req = json_pack("{s:s,s:i}", "ShardIterator", it, "Limit", GET_RECORDS_LIMIT), *out;
    int rc = call(src, o, "GetRecords", req, &out, err);
    json_decref(req);
    if (rc) {
        if (strstr(err->msg, "ExpiredIteratorException") ||
            strstr(err->msg, "TrimmedDataAccessException")) {
            /* Start again from the checkpoint, with a new iterator. */
            json_object_del(f->iters, shard);
            err_clear(err);
            f->pending = 1;
            return 0;
        }
        return -1;
    }
    json_t *records = json_object_get(out, "Records"), *rec;
    size_t i, n = 0;
    applier a = {dst, o, f->name, json_array(), json_object()};
    json_array_foreach(records, i, rec)
    {
        if ((rc = apply_record(&a, rec, err)) != 0) break;
        n++;
    }
    if (rc == 0) rc = apply_flush(&a, err);
    json_decref(a.writes);
    json_decref(a.keys);
    if (rc) n = 0; /* what a failed batch held may be partly applied: from the checkpoint again */
    json_array_foreach(records, i, rec)
    {
        if (i >= n) break;
        json_t *d = json_object_get(rec, "dynamodb");
        json_object_set(ss, "seq", json_object_get(d, "SequenceNumber"));
        double when = json_number_value(json_object_get(d, "ApproximateCreationDateTime"));
        if (when > f->newest) f->newest = when;
    }
    if (n) {
        json_int_t applied = json_integer_value(json_object_get(f->ts, "applied"));
        json_object_set_new(f->ts, "applied", json_integer(applied + (json_int_t)n));
    }
    json_t *next = json_object_get(out, "NextShardIterator");
    if (rc == 0) {
        if (next && !json_is_null(next))
            json_object_set(f->iters, shard, next);
        else {
            json_object_del(f->iters, shard);
            json_object_set_new(ss, "done", json_true());
        }
    }
    json_decref(out);
    if (rc) return -1;
    return save_state(o, state, err) ? -1 : (int)n;
}

/* After the table's stream was read to its end and closed: the table may have a new
 * stream (disabled and enabled again), to follow from its start; or be gone from the
 * source. Says so once. Returns 0, or -1 with err set. */
static int stream_ended(conn *src, const rp_options *o, json_t *state, follow *f, qr_err *err)
{
    json_t *req = json_pack("{s:s}", "TableName", f->name), *out = NULL;
    qr_err e;
    err_init(&e);
    int rc = call(src, o, "DescribeTable", req, &out, &e);
    json_decref(req);
    if (rc) {
        if (e.type == NULL || strcmp(e.type, QR_E_NOT_FOUND) != 0)
            return err_set(err, e.type, "%s", e.msg);
        fprintf(stderr,
                "quarry replicate: %s: deleted on %s, its stream read to the end; its "
                "replication is over\n",
                f->name, src->where);
        json_object_set_new(f->ts, "phase", json_string("over"));
        return save_state(o, state, err);
    }
    json_t *t = json_object_get(out, "Table");
    const char *latest = json_string_value(json_object_get(t, "LatestStreamArn"));
    const char *view = json_string_value(
        json_object_get(json_object_get(t, "StreamSpecification"), "StreamViewType"));
    const char *arn = json_string_value(json_object_get(f->ts, "stream"));
    if (latest && strcmp(latest, arn) != 0 && view &&
        (strcmp(view, "NEW_AND_OLD_IMAGES") == 0 || strcmp(view, "NEW_IMAGE") == 0)) {
        fprintf(stderr,
                "quarry replicate: %s: its stream was disabled and a new one enabled; following "
                "it from its start (changes made while no stream was enabled are in neither: "
                "check with --compare)\n",
                f->name);
        json_object_set_new(f->ts, "stream", json_string(latest));
        json_object_set_new(f->ts, "shards", json_object());
        json_object_clear(f->iters);
        f->told_ended = 0;
        rc = save_state(o, state, err);
    } else if (!f->told_ended) {
        fprintf(stderr,
                "quarry replicate: %s: its stream on %s is disabled and read to the end; "
                "waiting for a new one with new images\n",
                f->name, src->where);
        f->told_ended = 1;
    }
    json_decref(out);
    return rc;
}

/* One round over a table's stream: every shard whose parent is done read once. Returns
 * the records applied, or -1 with err set. */
static int follow_round(conn *src, conn *dst, const rp_options *o, json_t *state, follow *f,
                        qr_err *err)
{
    if (strcmp(json_string_value(json_object_get(f->ts, "phase")), "over") == 0) return 0;
    const char *arn = json_string_value(json_object_get(f->ts, "stream"));
    json_t *sd = describe_stream(src, o, arn, err);
    if (sd == NULL) return -1;
    json_t *shards = json_object_get(sd, "Shards");
    json_t *done = json_object_get(f->ts, "shards");
    /* Shards trimmed from the stream leave the state too. */
    const char *id;
    json_t *v, *tmp;
    json_object_foreach_safe(done, tmp, id, v)
    {
        int listed = 0;
        size_t j;
        json_t *p;
        json_array_foreach(shards, j, p) listed |=
            strcmp(json_string_value(json_object_get(p, "ShardId")), id) == 0;
        if (!listed && json_is_true(json_object_get(v, "done"))) json_object_del(done, id);
    }
    int total = 0, all_done = 1;
    size_t i;
    json_t *sh;
    json_array_foreach(shards, i, sh)
    {
        id = json_string_value(json_object_get(sh, "ShardId"));
        const char *parent = json_string_value(json_object_get(sh, "ParentShardId"));
        if (id == NULL || json_is_true(json_object_get(json_object_get(done, id), "done")))
            continue;
        all_done = 0;
        if (parent) { /* a child waits for its parent, unless the parent is trimmed away */
            int listed = 0;
            size_t j;
            json_t *p;
            json_array_foreach(shards, j, p)
            {
                if (json_equal(json_object_get(p, "ShardId"), json_object_get(sh, "ParentShardId")))
                    listed = 1;
            }
            if (listed && !json_is_true(json_object_get(json_object_get(done, parent), "done")))
                continue;
        }
        int n = read_shard(src, dst, o, state, f, arn, id, err);
        if (n < 0) {
            json_decref(sd);
            return -1;
        }
        total += n;
    }
    const char *status = json_string_value(json_object_get(sd, "StreamStatus"));
    int closed = status && strcmp(status, "DISABLED") == 0;
    json_decref(sd);
    if (closed && all_done && total == 0 && stream_ended(src, o, state, f, err)) return -1;
    return total;
}

/* Checks that the source table has a stream with new images, and notes it in ts. */
static int check_stream(conn *src, const json_t *desc, json_t *ts, qr_err *err)
{
    const char *name = json_string_value(json_object_get(desc, "TableName"));
    json_t *ss = json_object_get(desc, "StreamSpecification");
    const char *view = json_string_value(json_object_get(ss, "StreamViewType"));
    const char *arn = json_string_value(json_object_get(desc, "LatestStreamArn"));
    if (!json_is_true(json_object_get(ss, "StreamEnabled")) || arn == NULL || view == NULL ||
        (strcmp(view, "NEW_AND_OLD_IMAGES") != 0 && strcmp(view, "NEW_IMAGE") != 0))
        return err_validation(
            err,
            "table %s on %s has %s: replication follows a stream with new images; enable one "
            "with: aws dynamodb update-table --table-name %s --stream-specification "
            "StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES --endpoint-url %s",
            name, src->where,
            view ? (strcmp(view, "KEYS_ONLY") == 0 ? "a KEYS_ONLY stream" : "an OLD_IMAGE stream")
                 : "no stream",
            name, src->where);
    const char *had = json_string_value(json_object_get(ts, "stream"));
    if (had && strcmp(had, arn) != 0)
        fprintf(stderr,
                "quarry replicate: %s: its stream is now %s, not %s as when replication began; "
                "following the one it began with\n",
                name, arn, had);
    if (had == NULL) json_object_set_new(ts, "stream", json_string(arn));
    return 0;
}

int replicate_run(conn *src, conn *dst, const rp_options *o, qr_err *err)
{
    int resumed = access(o->state_path, F_OK) == 0;
    json_t *state = load_state(o, err);
    if (state == NULL) return -1;
    /* A first run fails at once on an endpoint it cannot reach (a wrong URL); a resumed one
     * waits for it, as it waits during the replication. */
    conn *ends[2] = {src, dst};
    for (int i = 0; i < 2 && !resumed; i++) {
        json_t *req = json_pack("{s:i}", "Limit", 1), *out = NULL;
        int rc = call(ends[i], NULL, "ListTables", req, &out, err);
        json_decref(req);
        json_decref(out);
        if (rc) {
            json_decref(state);
            char what[600];
            snprintf(what, sizeof what, "cannot reach %s", ends[i]->where);
            return err_prefix(err, what);
        }
    }
    json_t *names = json_array();
    if (o->tables)
        for (size_t i = 0; o->tables[i]; i++)
            json_array_append_new(names, json_string(o->tables[i]));
    else {
        json_decref(names);
        if ((names = list_tables(src, o, err)) == NULL) {
            json_decref(state);
            return -1;
        }
    }
    size_t n = json_array_size(names);
    json_t *descs = json_array(), *tables = json_object_get(state, "tables");
    int rc = 0;
    /* Every table is checked before anything is written. */
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *name = json_string_value(json_array_get(names, i));
        json_t *ts = json_object_get(tables, name);
        const char *phase = json_string_value(json_object_get(ts, "phase"));
        json_t *d = describe(src, o, name, err);
        if (d == NULL && phase && (strcmp(phase, "stream") == 0 || strcmp(phase, "over") == 0) &&
            err->type && strcmp(err->type, QR_E_NOT_FOUND) == 0) {
            /* Deleted on the source since: what its stream still holds is applied, then
             * its replication is over (stream_ended). */
            err_clear(err);
            json_array_append_new(descs, json_null());
            continue;
        }
        if (d == NULL) {
            char what[600];
            snprintf(what, sizeof what, "table %s on %s", name, src->where);
            rc = err_prefix(err, what);
            break;
        }
        json_array_append_new(descs, d);
        if (ts == NULL) {
            json_object_set_new(tables, name,
                                json_pack("{s:s,s:i,s:i,s:{}}", "phase", "create", "copied", 0,
                                          "applied", 0, "shards"));
            ts = json_object_get(tables, name);
        }
        rc = check_stream(src, d, ts, err);
    }
    if (rc == 0 && n == 0) rc = err_validation(err, "%s has no table to replicate", src->where);
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_t *d = json_array_get(descs, i);
        const char *name = json_string_value(json_array_get(names, i));
        json_t *ts = json_object_get(tables, name);
        const char *phase = json_string_value(json_object_get(ts, "phase"));
        if (json_is_null(d)) continue;
        if (strcmp(phase, "create") == 0) rc = create_target(src, dst, o, state, ts, d, err);
        phase = json_string_value(json_object_get(ts, "phase"));
        if (rc == 0 && strcmp(phase, "copy") == 0)
            rc = copy_items(src, dst, o, state, ts, name, err);
    }
    follow *fs = calloc(n ? n : 1, sizeof *fs);
    for (size_t i = 0; i < n; i++) {
        fs[i].name = json_string_value(json_array_get(names, i));
        fs[i].ts = json_object_get(tables, fs[i].name);
        fs[i].iters = json_object();
    }
    while (rc == 0 && !stopped(o)) {
        int round = 0, all_caught_up = 1;
        for (size_t i = 0; i < n && rc == 0; i++) {
            fs[i].pending = 0;
            int got = follow_round(src, dst, o, state, &fs[i], err);
            if (got < 0) {
                rc = -1;
                break;
            }
            round += got;
            double now = now_seconds();
            int caught = got == 0 && !fs[i].pending;
            if (!caught) all_caught_up = 0;
            if ((got && now - fs[i].told >= o->report_seconds) || (caught && !fs[i].caught_up))
                report(&fs[i], caught, now);
            fs[i].caught_up = caught;
        }
        if (rc) break;
        if (all_caught_up && o->until_caught_up) break;
        if (round == 0) pause_ms(o, o->poll_ms);
    }
    if (rc && stopped(o) && strcmp(err->msg, "stopped") == 0) {
        err_clear(err);
        rc = 0;
    }
    if (rc == 0)
        for (size_t i = 0; i < n; i++)
            if (!fs[i].caught_up) report(&fs[i], 0, now_seconds());
    for (size_t i = 0; i < n; i++)
        json_decref(fs[i].iters);
    free(fs);
    json_decref(descs);
    json_decref(names);
    json_decref(state);
    return rc;
}

/* ---- the comparison ---- */

/* The item's key (its key attributes, canonical JSON) under which it is matched. */
static char *key_text(const json_t *schema, const json_t *item)
{
    json_t *k = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(schema, i, e)
    {
        const char *a = json_string_value(json_object_get(e, "AttributeName"));
        if (a) json_object_set(k, a, json_object_get(item, a));
    }
    char *t = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(k);
    return t;
}

typedef struct side {
    const json_t *schema;
    json_t *items; /* key text -> item */
} side;

static int gather(void *arg, json_t *item)
{
    side *s = arg;
    char *k = key_text(s->schema, item);
    if (k == NULL) return -1;
    json_object_set(s->items, k, item);
    free(k);
    return 0;
}

static json_t *index_names(const json_t *desc)
{
    json_t *names = json_object();
    const char *lists[2] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *ix;
        json_array_foreach(json_object_get(desc, lists[l]), i, ix)
        {
            const char *n = json_string_value(json_object_get(ix, "IndexName"));
            if (n) json_object_set(names, n, json_object_get(ix, "KeySchema"));
        }
    }
    return names;
}

static long compare_table(conn *src, conn *dst, const char *name, buf *out, qr_err *err)
{
    json_t *a = describe(src, NULL, name, err);
    if (a == NULL) return -1;
    json_t *b = describe(dst, NULL, name, err);
    if (b == NULL) {
        json_decref(a);
        if (err->type == NULL || strcmp(err->type, QR_E_NOT_FOUND) != 0) return -1;
        err_clear(err);
        buf_printf(out, "%s: missing on the target\n", name);
        return 1;
    }
    long diffs = 0;
    const json_t *schema = json_object_get(a, "KeySchema");
    if (!json_equal(json_object_get(a, "KeySchema"), json_object_get(b, "KeySchema"))) {
        buf_printf(out, "%s: the key schemas differ\n", name);
        diffs++;
    }
    json_t *ia = index_names(a), *ib = index_names(b);
    if (!json_equal(ia, ib)) {
        buf_printf(out, "%s: the secondary indexes differ\n", name);
        diffs++;
    }
    json_decref(ia);
    json_decref(ib);
    side sa = {schema, json_object()}, sb = {schema, json_object()};
    json_t *req = json_pack("{s:s,s:b}", "TableName", name, "ConsistentRead", 1);
    int rc = conn_scan(src, req, gather, &sa, err);
    if (rc == 0) rc = conn_scan(dst, req, gather, &sb, err);
    json_decref(req);
    if (rc == 0) {
        long missing = 0, extra = 0, differ = 0;
        const char *k;
        json_t *v;
        json_object_foreach(sa.items, k, v)
        {
            json_t *w = json_object_get(sb.items, k);
            if (w == NULL) {
                if (missing++ < SAMPLES)
                    buf_printf(out, "%s: %s is missing on the target\n", name, k);
            } else if (!json_equal(v, w)) {
                if (differ++ < SAMPLES) buf_printf(out, "%s: %s differs\n", name, k);
            }
        }
        json_object_foreach(sb.items, k, v)
        {
            if (json_object_get(sa.items, k) == NULL && extra++ < SAMPLES)
                buf_printf(out, "%s: %s is on the target only\n", name, k);
        }
        diffs += missing + extra + differ;
        buf_printf(out,
                   "%s: %zu items on the source, %zu on the target: %ld missing, %ld extra, %ld "
                   "different\n",
                   name, json_object_size(sa.items), json_object_size(sb.items), missing, extra,
                   differ);
    }
    json_decref(sa.items);
    json_decref(sb.items);
    json_decref(a);
    json_decref(b);
    return rc ? -1 : diffs;
}

long replicate_compare(conn *src, conn *dst, const char *const *tables, buf *report, qr_err *err)
{
    json_t *names = json_array();
    if (tables)
        for (size_t i = 0; tables[i]; i++)
            json_array_append_new(names, json_string(tables[i]));
    else {
        json_decref(names);
        if ((names = list_tables(src, NULL, err)) == NULL) return -1;
    }
    long total = 0;
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n)
    {
        long d = compare_table(src, dst, json_string_value(n), report, err);
        if (d < 0) {
            total = -1;
            break;
        }
        total += d;
    }
    json_decref(names);
    return total;
}
