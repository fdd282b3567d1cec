/* streams.c — the DynamoDB Streams API (ListStreams, DescribeStream, GetShardIterator,
 * GetRecords) over the streams engine/stream.c keeps. Each stream has one shard, open while the
 * stream is enabled and closed (given an EndingSequenceNumber) when it is disabled or its table
 * deleted. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "engine/engine.h"
#include "ops/ops.h"

#define MAX_RECORDS_BYTES (1 << 20) /* GetRecords answers at most 1 MB */

/* Optional string parameter key with DynamoDB's length constraint [min, max], checked
 * before anything is looked up. *whole is 0 if the string holds a NUL character: such a
 * string names nothing, since no ARN, shard id, number or iterator contains one. */
static int text_param(json_t *req, const char *key, const char *field, size_t min, size_t max,
                      const char **out, int *whole, qr_err *err)
{
    if (param_string(req, key, out, err)) return -1;
    *whole = 1;
    if (*out == NULL) return 0;
    size_t n = json_string_length(json_object_get(req, key));
    *whole = strlen(*out) == n;
    if (n < min) return err_violation(err, *out, field, QR_MSG_LENGTH_AT_LEAST, (long long)min);
    if (n > max) return err_violation(err, *out, field, QR_MSG_LENGTH_AT_MOST, (long long)max);
    return 0;
}

/* A stream ARN's shape: arn:…:table/<name>/stream/<label> (its length is text_param's). */
static int check_stream_arn(const char *arn, qr_err *err)
{
    if (strncmp(arn, "arn:", 4) != 0 || strstr(arn, ":table/") == NULL ||
        strstr(arn, "/stream/") == NULL)
        return err_validation(err, "Invalid StreamArn");
    return 0;
}

/* The stream named by parameter key (required): its descriptor, a copy. */
static int find_stream(qr_db *db, json_t *req, const char *key, const char *field, json_t **out,
                       qr_err *err)
{
    const char *arn;
    int whole;
    if (text_param(req, key, field, 37, 1024, &arn, &whole, err)) return -1;
    if (arn == NULL) return param_null(field, err);
    if (check_stream_arn(arn, err)) return -1;
    if (!whole || (*out = stream_find(db, arn)) == NULL)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_STREAM_NOT_FOUND, arn);
    return 0;
}

static uint64_t field_u64(const json_t *d, const char *key)
{
    return (uint64_t)json_integer_value(json_object_get(d, key));
}

static const char *sequence_text(uint64_t seq, char *out, size_t cap)
{
    snprintf(out, cap, "%021" PRIu64, seq);
    return out;
}

/* The id of the stream's one shard: its creation time, then a hash of its ARN. */
static void shard_id(const json_t *d, char *out, size_t cap)
{
    const char *arn = json_string_value(json_object_get(d, "StreamArn"));
    uint64_t ms = (uint64_t)(json_number_value(json_object_get(d, "Created")) * 1000);
    snprintf(out, cap, "shardId-%020" PRIu64 "-%08" PRIx32, ms,
             (uint32_t)XXH3_64bits(arn, strlen(arn)));
}

static int is_closed(const json_t *d)
{
    return json_object_get(d, "End") != NULL;
}

int op_list_streams(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    const char *table_name, *start;
    long long limit = 100;
    int given, start_whole;
    if (param_optional_table_name(req, &table_name, err) ||
        param_int(req, "Limit", 1, 100, &limit, &given, err) ||
        text_param(req, "ExclusiveStartStreamArn", "exclusiveStartStreamArn", 37, 1024, &start,
                   &start_whole, err) ||
        (start && check_stream_arn(start, err)))
        return -1;
    json_t *all = stream_list(db);
    size_t i, first = 0;
    json_t *d;
    if (start) {
        first = SIZE_MAX;
        json_array_foreach(all, i, d) if (strcmp(json_string_value(json_object_get(d, "StreamArn")),
                                                 start) == 0) first = i + 1;
        if (first == SIZE_MAX) {
            json_decref(all);
            return err_set(err, QR_E_NOT_FOUND, QR_MSG_STREAM_NOT_FOUND, start);
        }
    }
    json_t *streams = json_array();
    const char *last = NULL;
    int more = 0;
    for (i = first; i < json_array_size(all); i++) {
        d = json_array_get(all, i);
        if (table_name &&
            strcmp(json_string_value(json_object_get(d, "TableName")), table_name) != 0)
            continue;
        if ((long long)json_array_size(streams) == limit) {
            more = 1;
            break;
        }
        json_array_append_new(streams, json_pack("{s:O,s:O,s:O}", "StreamArn",
                                                 json_object_get(d, "StreamArn"), "TableName",
                                                 json_object_get(d, "TableName"), "StreamLabel",
                                                 json_object_get(d, "StreamLabel")));
        last = json_string_value(json_object_get(d, "StreamArn"));
    }
    c->answer = json_pack("{s:o}", "Streams", streams);
    if (more && last) json_object_set_new(c->answer, "LastEvaluatedStreamArn", json_string(last));
    json_decref(all);
    return 0;
}

int op_describe_stream(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    json_t *d, *filter;
    const char *after;
    long long limit = 100;
    int given, after_whole;
    if (param_int(req, "Limit", 1, 100, &limit, &given, err) ||
        text_param(req, "ExclusiveStartShardId", "exclusiveStartShardId", 28, 65, &after,
                   &after_whole, err) ||
        param_object(req, "ShardFilter", &filter, err))
        return -1;
    /* ShardFilter {Type: CHILD_SHARDS, ShardId} asks for the children of a shard of the
     * stream: both members, in their constraints, then a shard that is there. */
    const char *ftype = NULL, *parent = NULL;
    int parent_whole = 1;
    if (filter) {
        if (param_string(filter, "Type", &ftype, err) ||
            text_param(filter, "ShardId", "shardFilter.shardId", 28, 65, &parent, &parent_whole,
                       err))
            return -1;
        if (ftype && strcmp(ftype, "CHILD_SHARDS") != 0)
            return err_violation(err, ftype, "shardFilter.type", QR_MSG_ENUM, "CHILD_SHARDS");
        if (ftype == NULL)
            return err_validation(err, "ShardFilter must have a Type: CHILD_SHARDS is the one "
                                       "filter DescribeStream knows");
        if (parent == NULL)
            return err_validation(err, "ShardFilter of Type CHILD_SHARDS must name the ShardId "
                                       "whose child shards it lists");
    }
    if (find_stream(db, req, "StreamArn", "streamArn", &d, err)) return -1;
    char id[96], seq[32];
    shard_id(d, id, sizeof id);
    if (parent && (!parent_whole || strcmp(parent, id) != 0)) {
        json_decref(d);
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_SHARD_NOT_FOUND);
    }
    json_t *shards = json_array();
    /* Shards are listed in the order of their ids, after ExclusiveStartShardId; the one
     * shard is nobody's child, so CHILD_SHARDS lists none. */
    if ((after == NULL || strcmp(after, id) < 0) && filter == NULL) {
        json_t *range = json_pack("{s:s}", "StartingSequenceNumber",
                                  sequence_text(field_u64(d, "Start"), seq, sizeof seq));
        if (is_closed(d))
            json_object_set_new(range, "EndingSequenceNumber",
                                json_string(sequence_text(field_u64(d, "End"), seq, sizeof seq)));
        json_array_append_new(shards,
                              json_pack("{s:s,s:o}", "ShardId", id, "SequenceNumberRange", range));
    }
    json_t *sd =
        json_pack("{s:O,s:O,s:s,s:O,s:O,s:O,s:O,s:o}", "StreamArn", json_object_get(d, "StreamArn"),
                  "StreamLabel", json_object_get(d, "StreamLabel"), "StreamStatus",
                  is_closed(d) ? "DISABLED" : "ENABLED", "StreamViewType",
                  json_object_get(d, "StreamViewType"), "CreationRequestDateTime",
                  json_object_get(d, "Created"), "TableName", json_object_get(d, "TableName"),
                  "KeySchema", json_object_get(d, "KeySchema"), "Shards", shards);
    json_decref(d);
    c->answer = json_pack("{s:o}", "StreamDescription", sd);
    return 0;
}

/* ---- shard iterators: "<stream arn>|1|<id 8 hex><position 16><expiry 16><check 16>" ---- */

static uint64_t iterator_check(const char *arn, const char *payload, size_t len)
{
    XXH3_state_t *st = XXH3_createState();
    XXH3_64bits_reset_withSeed(st, 0x71756172727973ULL);
    XXH3_64bits_update(st, arn, strlen(arn));
    XXH3_64bits_update(st, payload, len);
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

/* A shard iterator is the stream's ARN, then a position (the next sequence number to read) and
 * an expiry time with a checksum, so a mangled or foreign iterator is refused rather than read. */
static json_t *make_iterator(const json_t *d, uint64_t position)
{
    const char *arn = json_string_value(json_object_get(d, "StreamArn"));
    char payload[64];
    int n = snprintf(payload, sizeof payload, "%08" PRIx32 "%016" PRIx64 "%016" PRIx64,
                     (uint32_t)field_u64(d, "Id"), position,
                     (uint64_t)ops_now_seconds() + QR_STREAM_ITERATOR_S);
    char text[1200];
    snprintf(text, sizeof text, "%s|1|%s%016" PRIx64, arn, payload,
             iterator_check(arn, payload, (size_t)n));
    return json_string(text);
}

static int hex_field(const char *s, size_t n, uint64_t *out)
{
    *out = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return -1;
        *out = *out << 4 | (uint64_t)v;
    }
    return 0;
}

/* Reads a shard iterator: its stream (a copy) and position. */
static int read_iterator(qr_db *db, const char *it, json_t **stream, uint64_t *position,
                         qr_err *err)
{
    const char *bar = strrchr(it, '|');
    size_t alen = bar && bar - it > 2 ? (size_t)(bar - it) - 2 : 0;
    uint64_t id, expires, check;
    if (alen == 0 || strncmp(it + alen, "|1|", 3) != 0 || strlen(bar + 1) != 56 ||
        hex_field(bar + 1, 8, &id) || hex_field(bar + 9, 16, position) ||
        hex_field(bar + 25, 16, &expires) || hex_field(bar + 41, 16, &check))
        return err_validation(err, "Invalid ShardIterator");
    char *arn = strndup(it, alen);
    int ok = arn && iterator_check(arn, bar + 1, 40) == check;
    json_t *d = ok ? stream_find(db, arn) : NULL;
    free(arn);
    if (!ok) return err_validation(err, "Invalid ShardIterator");
    if (d == NULL || field_u64(d, "Id") != id)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_NOT_FOUND ": Stream: %.*s not found", (int)alen,
                       it);
    if ((uint64_t)ops_now_seconds() > expires) {
        json_decref(d);
        return err_set(err, "ExpiredIteratorException",
                       "Iterator expired. The iterator was created more than "
                       "15 minutes ago.");
    }
    *stream = d;
    return 0;
}

int op_get_shard_iterator(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    static const char *const types[] = {"TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER",
                                        "AFTER_SEQUENCE_NUMBER", NULL};
    const char *type, *shard, *seq_text;
    int shard_whole, seq_whole;
    if (json_object_get(req, "ShardIteratorType") == NULL)
        return param_null("shardIteratorType", err);
    if (param_enum(req, "ShardIteratorType", types, NULL, &type, err) ||
        text_param(req, "ShardId", "shardId", 28, 65, &shard, &shard_whole, err))
        return -1;
    if (shard == NULL) return param_null("shardId", err);
    if (text_param(req, "SequenceNumber", "sequenceNumber", 21, 40, &seq_text, &seq_whole, err))
        return -1;
    int at = strcmp(type, "AT_SEQUENCE_NUMBER") == 0,
        after = strcmp(type, "AFTER_SEQUENCE_NUMBER") == 0;
    if ((at || after) && seq_text == NULL)
        return err_validation(err, "Must provide a SequenceNumber for ShardIteratorType %s", type);
    if (!(at || after) && seq_text)
        return err_validation(err, "Must not provide a SequenceNumber for ShardIteratorType %s",
                              type);
    uint64_t seq = 0;
    if (seq_text) {
        size_t n = strlen(seq_text);
        int digits = seq_whole;
        for (size_t i = 0; digits && i < n; i++)
            digits = seq_text[i] >= '0' && seq_text[i] <= '9';
        char *end;
        unsigned long long v = digits ? strtoull(seq_text, &end, 10) : 0;
        if (!digits || v == ULLONG_MAX)
            return err_validation(err, "Invalid SequenceNumber: %s", seq_text);
        seq = v;
    }
    json_t *d = NULL;
    if (find_stream(db, req, "StreamArn", "streamArn", &d, err)) return -1;
    char id[96];
    shard_id(d, id, sizeof id);
    int rc = -1;
    if (!shard_whole || strcmp(shard, id) != 0) {
        err_set(err, QR_E_NOT_FOUND, QR_MSG_SHARD_NOT_FOUND);
        goto done;
    }
    uint64_t start = field_u64(d, "Start"), end = is_closed(d) ? field_u64(d, "End") : UINT64_MAX;
    if (seq_text && (seq < start || seq > end)) {
        char s1[32], s2[32];
        err_validation(
            err,
            "Invalid SequenceNumber %s for shard %s: the shard holds sequence numbers from %s%s%s",
            seq_text, id, sequence_text(start, s1, sizeof s1), is_closed(d) ? " to " : "",
            is_closed(d) ? sequence_text(end, s2, sizeof s2) : "");
        goto done;
    }
    uint64_t trimmed = field_u64(d, "Trimmed");
    if (seq_text && seq <= trimmed) {
        err_set(err, "TrimmedDataAccessException",
                "Sequence number %s is beyond the trim horizon: records up to %021" PRIu64
                " are older than 24 hours and have been trimmed",
                seq_text, trimmed);
        goto done;
    }
    uint64_t position = trimmed >= start ? trimmed + 1 : start;
    if (at)
        position = seq;
    else if (after)
        position = seq + 1;
    else if (strcmp(type, "LATEST") == 0) {
        position = stream_visible(db);
        if (is_closed(d) && position > end + 1) position = end + 1;
    }
    c->answer = json_pack("{s:o}", "ShardIterator", make_iterator(d, position));
    rc = 0;
done:
    json_decref(d);
    return rc;
}

int op_get_records(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    const char *it;
    long long limit = 1000;
    int given, whole;
    if (text_param(req, "ShardIterator", "shardIterator", 1, 2048, &it, &whole, err)) return -1;
    if (it == NULL) return param_null("shardIterator", err);
    if (!whole) return err_validation(err, "Invalid ShardIterator");
    if (param_int(req, "Limit", 1, 1000, &limit, &given, err)) return -1;
    json_t *d = NULL;
    uint64_t position = 0;
    if (read_iterator(db, it, &d, &position, err)) return -1;
    /* Only records below every number a writer still holds: one committing late must not
     * land behind a position already handed out. */
    uint64_t below = stream_visible(db);
    int closed = is_closed(d);
    uint64_t end = field_u64(d, "End");
    if (closed && below > end + 1) below = end + 1;
    json_t *records = json_array();
    uint64_t next;
    int cut;
    if (stream_read(db, (uint32_t)field_u64(d, "Id"), position, below, (size_t)limit,
                    MAX_RECORDS_BYTES, records, &next, &cut, err)) {
        json_decref(records);
        json_decref(d);
        return -1;
    }
    if (!cut && below > next)
        next = below; /* nothing more below: resume where the next records will be */
    /* A record names the region its GetRecords was received in, not the one it was
     * written in (the stored "ddblocal" is only a place holder keeping the field's order). */
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec)
        json_object_set_new(rec, "awsRegion", json_string(ops_request_region()));
    c->answer = json_pack("{s:o}", "Records", records);
    /* A closed shard read to its end has no next iterator. */
    if (!(closed && !cut && next > end))
        json_object_set_new(c->answer, "NextShardIterator", make_iterator(d, next));
    json_decref(d);
    return 0;
}
