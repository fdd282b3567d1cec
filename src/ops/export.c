/* export.c — ExportTableToPointInTime, DescribeExport and ListExports: a table's items at one
 * moment (full) or its changes over a window (incremental), written into an S3 bucket
 * (s3dir.h) as DynamoDB writes them: AWSDynamoDB/<ExportId>/ with _started, the summary
 * and files manifests with their MD5 .checksum files, and gzip'd DYNAMODB_JSON or Ion
 * (ion.h) data files. The items come from one read view, put back to the export time with
 * the point-in-time history (pitr.h). The call checks the request, stores the export's
 * record (meta.h) IN_PROGRESS and opens the view; a job thread writes the files and ends
 * the record COMPLETED or FAILED. Reading files back is import.c's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <zlib.h>

#include "engine/engine.h"
#include "model/value.h"
#include "ops/ion.h"
#include "ops/ops.h"
#include "ops/s3dir.h"
#include "util/jsonread.h"

#define EXPORT_FILE_ITEMS 100000 /* items per data file at most */
#define LIST_EXPORTS_MAX 25
#define INCREMENTAL_MAX_SECONDS (24 * 3600.0) /* DynamoDB's longest incremental export */

void job_id(char out[JOB_ID_LEN])
{
    unsigned char r[4] = {0};
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        uint32_t x = (uint32_t)clock() ^ (uint32_t)time(NULL) * 2654435761u;
        memcpy(r, &x, sizeof r);
    }
    snprintf(out, JOB_ID_LEN, "%014" PRIu64 "-%02x%02x%02x%02x",
             (uint64_t)(engine_now_seconds() * 1000.0), r[0], r[1], r[2], r[3]);
}

void job_iso_time(double seconds, char out[32])
{
    time_t s = (time_t)seconds;
    struct tm tm;
    gmtime_r(&s, &tm);
    int ms = (int)((seconds - (double)s) * 1000.0);
    if (ms > 999) ms = 999;
    s3_format(out, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
              tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

int job_table_of_arn(const char *arn, const char *field, char *name, size_t cap, qr_err *err)
{
    arn_parts a;
    if (arn == NULL) return param_null(field, err);
    if (arn_split(arn, &a) || a.table == NULL || !arn_is(a.service, a.service_len, "dynamodb") ||
        a.table_len == 0 || a.table_len >= cap || a.sub != NULL)
        return err_validation(err, "Invalid TableArn: %s", arn);
    memcpy(name, a.table, a.table_len);
    name[a.table_len] = '\0';
    return 0;
}

/* ---- the data files ---- */

typedef struct exporter {
    qr_db *db;
    const char *bucket_path; /* the bucket's folder */
    const char *dir;         /* the key prefix of the data files: ".../data/" */
    int ion;                 /* ExportFormat ION, else DYNAMODB_JSON */
    z_stream z;
    int z_open;
    buf gz;   /* the file being written, compressed */
    buf line; /* one line before compression */
    uint64_t in_file;
    uint64_t items, bytes;
    json_t *manifest; /* the files written: manifest-files.json's lines */
    const char *code; /* when it fails: DynamoDB's FailureCode and message */
    char msg[512];
} exporter;

static void file_begin(exporter *x)
{
    memset(&x->z, 0, sizeof x->z);
    deflateInit2(&x->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    x->z_open = 1;
    buf_reset(&x->gz);
    x->in_file = 0;
}

static int deflate_some(exporter *x, const void *data, size_t len, int flush)
{
    x->z.next_in = (Bytef *)data;
    x->z.avail_in = (uInt)len;
    unsigned char chunk[65536];
    int rc;
    do {
        x->z.next_out = chunk;
        x->z.avail_out = sizeof chunk;
        rc = deflate(&x->z, flush);
        if (rc == Z_STREAM_ERROR) return -1;
        if (buf_append(&x->gz, chunk, sizeof chunk - x->z.avail_out)) return -1;
    } while (x->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return 0;
}

/* A data file's random name, as DynamoDB's: 26 base32 characters. */
static void file_name(char out[27])
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
    unsigned char r[26] = {0};
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        for (int i = 0; i < 26; i++)
            r[i] = (unsigned char)(rand() & 0xff);
    for (int i = 0; i < 26; i++)
        out[i] = alphabet[r[i] & 31];
    out[26] = '\0';
}

/* Ends the file being written, puts it in the bucket and notes it in the manifest. */
static int file_end(exporter *x)
{
    if (!x->z_open) return 0;
    int rc = deflate_some(x, NULL, 0, Z_FINISH);
    deflateEnd(&x->z);
    x->z_open = 0;
    if (rc) {
        x->code = "UNKNOWN";
        s3_format(x->msg, sizeof x->msg, "compression failed");
        return -1;
    }
    char name[27], key[S3_PATH_MAX];
    file_name(name);
    s3_format(key, sizeof key, "%s%s.%s.gz", x->dir, name, x->ion ? "ion" : "json");
    if (s3_put(x->bucket_path, key, x->gz.data, x->gz.len, &x->code, x->msg, sizeof x->msg))
        return -1;
    unsigned char md5[16], part[16];
    char b64[25], hex[33], etag[40];
    s3_md5(x->gz.data, x->gz.len, md5);
    s3_base64(md5, b64);
    /* S3's ETag of an object uploaded in one part of a multipart upload. */
    s3_md5(md5, sizeof md5, part);
    s3_hex(part, hex);
    snprintf(etag, sizeof etag, "%s-1", hex);
    json_t *entry = json_object();
    json_object_set_new(entry, "itemCount", json_integer((json_int_t)x->in_file));
    json_object_set_new(entry, "md5Checksum", json_string(b64));
    json_object_set_new(entry, "etag", json_string(etag));
    json_object_set_new(entry, "dataFileS3Key", json_string(key));
    json_array_append_new(x->manifest, entry);
    return 0;
}

/* Writes one line (x->line) into the current file. */
static int emit_line(exporter *x)
{
    if (!x->z_open) file_begin(x);
    if (deflate_some(x, x->line.data, x->line.len, Z_NO_FLUSH)) {
        x->code = "UNKNOWN";
        s3_format(x->msg, sizeof x->msg, "compression failed");
        return -1;
    }
    x->items++;
    if (++x->in_file >= EXPORT_FILE_ITEMS) return file_end(x);
    return 0;
}

/* The line of a full export for an item given as JSON text (json, len) or parsed (item). */
static int emit_item(exporter *x, const char *json, size_t len, const json_t *item)
{
    buf_reset(&x->line);
    json_t *own = NULL;
    if (x->ion) {
        if (item == NULL) item = own = json_read(json, len, JSON_ALLOW_NUL, NULL);
        buf_puts(&x->line, "$ion_1_0 {Item:");
        int rc = item ? ion_write_struct(&x->line, item) : -1;
        json_decref(own);
        if (rc) {
            x->code = "UNKNOWN";
            s3_format(x->msg, sizeof x->msg, "an item could not be written as Ion");
            return -1;
        }
        buf_puts(&x->line, "}\n");
    } else {
        buf_puts(&x->line, "{\"Item\":");
        if (item)
            json_append(&x->line, item);
        else
            buf_append(&x->line, json, len);
        buf_puts(&x->line, "}\n");
    }
    return emit_line(x);
}

/* ---- full exports ---- */

typedef struct full_walk {
    exporter *x;
    const table *t;
    json_t *changes; /* pitr_changes_between after the export time; NULL: none */
} full_walk;

static char *key_text(const table *t, const json_t *item)
{
    json_t *k = key_of_item(t, item);
    char *s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(k);
    return s;
}

static int full_item(void *arg, const char *json, size_t len, size_t size, qr_err *err)
{
    (void)err;
    full_walk *w = arg;
    if (json_object_size(w->changes) == 0) {
        w->x->bytes += size;
        return emit_item(w->x, json, len, NULL);
    }
    json_t *item = json_read(json, len, JSON_ALLOW_NUL, NULL);
    char *k = item ? key_text(w->t, item) : NULL;
    json_t *change = k ? json_object_get(w->changes, k) : NULL;
    free(k);
    int rc = 0;
    if (change == NULL) {
        w->x->bytes += size;
        rc = emit_item(w->x, json, len, item);
    } else {
        /* Changed since the export time: the item as it was then, if it was. */
        json_object_set_new(change, "done", json_true());
        json_t *old = json_object_get(change, "O");
        if (old) {
            w->x->bytes += item_size(old);
            rc = emit_item(w->x, NULL, 0, old);
        }
    }
    json_decref(item);
    return rc;
}

static int export_full(exporter *x, const table *t, const read_view *v, double when, qr_err *err)
{
    full_walk w = {x, t, NULL};
    uint64_t ms = (uint64_t)(when * 1000.0) + 1;
    if (pitr_changes_between(x->db, table_id(t), ms, UINT64_MAX, &w.changes, err)) return -1;
    int rc = meta_table_items(x->db, t, v, full_item, &w, err);
    /* Items deleted since the export time, not in the view, as they were then. */
    const char *k;
    json_t *change;
    json_object_foreach(w.changes, k, change)
    {
        json_t *old = json_object_get(change, "O");
        if (rc || old == NULL || json_object_get(change, "done")) continue;
        x->bytes += item_size(old);
        rc = emit_item(x, NULL, 0, old);
    }
    json_decref(w.changes);
    return rc;
}

/* ---- incremental exports ---- */

static int emit_change(exporter *x, uint64_t ms, const json_t *keys, const json_t *new_image,
                       const json_t *old_image)
{
    char micros[32];
    snprintf(micros, sizeof micros, "%" PRIu64, ms * 1000);
    json_t *meta = json_pack("{s:{s:s}}", "WriteTimestampMicros", "N", micros);
    buf_reset(&x->line);
    int rc = 0;
    if (x->ion) {
        buf_puts(&x->line, "$ion_1_0 {Metadata:");
        rc |= ion_write_struct(&x->line, meta);
        buf_puts(&x->line, ",Keys:");
        rc |= ion_write_struct(&x->line, keys);
        if (new_image) {
            buf_puts(&x->line, ",NewImage:");
            rc |= ion_write_struct(&x->line, new_image);
        }
        if (old_image) {
            buf_puts(&x->line, ",OldImage:");
            rc |= ion_write_struct(&x->line, old_image);
        }
        buf_puts(&x->line, "}\n");
    } else {
        json_t *line = json_pack("{s:O,s:O}", "Metadata", meta, "Keys", keys);
        if (new_image) json_object_set(line, "NewImage", (json_t *)new_image);
        if (old_image) json_object_set(line, "OldImage", (json_t *)old_image);
        rc = json_append(&x->line, line);
        json_decref(line);
        buf_putc(&x->line, '\n');
    }
    json_decref(meta);
    if (rc) {
        x->code = "UNKNOWN";
        s3_format(x->msg, sizeof x->msg, "a change could not be written");
        return -1;
    }
    if (new_image) x->bytes += item_size(new_image);
    return emit_line(x);
}

/* Each item changed in [from, to): its state at to against its state at from, one line
 * each (an item back where it was is not listed, as DynamoDB compacts a window). */
static int export_incremental(exporter *x, const table *t, const read_view *v, double from,
                              double to, int old_images, qr_err *err)
{
    json_t *window = NULL, *after = NULL;
    uint64_t from_ms = (uint64_t)(from * 1000.0), to_ms = (uint64_t)(to * 1000.0);
    int rc = pitr_changes_between(x->db, table_id(t), from_ms, to_ms, &window, err);
    if (rc == 0) rc = pitr_changes_between(x->db, table_id(t), to_ms, UINT64_MAX, &after, err);
    const char *k;
    json_t *change;
    json_object_foreach(window, k, change)
    {
        if (rc) break;
        json_t *keys = json_object_get(change, "K"), *old = json_object_get(change, "O"),
               *now = NULL;
        json_t *later = json_object_get(after, k);
        if (later)
            now = json_incref(json_object_get(later, "O"));
        else if (meta_table_item(x->db, t, v, keys, &now, err) < 0)
            rc = -1;
        if (rc == 0 && !(old == NULL && now == NULL) && !(old && now && json_equal(old, now)))
            rc = emit_change(x, (uint64_t)json_integer_value(json_object_get(change, "T")), keys,
                             now, old_images ? old : NULL);
        json_decref(now);
    }
    json_decref(window);
    json_decref(after);
    return rc;
}

/* ---- the request ---- */

typedef struct export_request {
    char table[256];
    const char *bucket, *prefix, *owner, *sse, *kms, *format, *type, *token, *view;
    double when, from, to;
    json_t *incremental; /* IncrementalExportSpecification as answered */
} export_request;

static int read_time(json_t *obj, const char *key, double *out, int *present, qr_err *err)
{
    json_t *v = json_object_get(obj, key);
    *present = v != NULL && !json_is_null(v);
    if (*present && !json_is_number(v))
        return err_set(err, QR_E_SERIALIZATION, "%s must be a timestamp", key);
    if (*present) *out = json_number_value(v);
    return 0;
}

static int read_request(json_t *req, export_request *r, qr_err *err)
{
    static const char *const formats[] = {"DYNAMODB_JSON", "ION", NULL},
                             *const types[] = {"FULL_EXPORT", "INCREMENTAL_EXPORT", NULL},
                             *const sses[] = {"AES256", "KMS", NULL},
                             *const views[] = {"NEW_IMAGE", "NEW_AND_OLD_IMAGES", NULL};
    const char *arn;
    memset(r, 0, sizeof *r);
    if (param_string(req, "TableArn", &arn, err) ||
        job_table_of_arn(arn, "tableArn", r->table, sizeof r->table, err) ||
        param_string(req, "S3Bucket", &r->bucket, err) ||
        param_string(req, "S3Prefix", &r->prefix, err) ||
        param_string(req, "S3BucketOwner", &r->owner, err) ||
        param_enum(req, "S3SseAlgorithm", sses, "AES256", &r->sse, err) ||
        param_string(req, "S3SseKmsKeyId", &r->kms, err) ||
        param_enum(req, "ExportFormat", formats, "DYNAMODB_JSON", &r->format, err) ||
        param_enum(req, "ExportType", types, "FULL_EXPORT", &r->type, err) ||
        param_string(req, "ClientToken", &r->token, err))
        return -1;
    if (r->bucket == NULL) return param_null("s3Bucket", err);
    if (r->prefix && !s3_key_ok(r->prefix))
        return err_validation(err, "Invalid S3Prefix: %s", r->prefix);
    int at, from, to;
    if (read_time(req, "ExportTime", &r->when, &at, err)) return -1;
    json_t *spec = json_object_get(req, "IncrementalExportSpecification");
    if (spec && !json_is_object(spec))
        return err_set(err, QR_E_SERIALIZATION,
                       "IncrementalExportSpecification must be a structure");
    if (strcmp(r->type, "FULL_EXPORT") == 0) {
        if (spec)
            return err_validation(err, "IncrementalExportSpecification is only valid with "
                                       "ExportType INCREMENTAL_EXPORT");
        if (!at) r->when = ops_now_seconds();
        return 0;
    }
    if (at)
        return err_validation(err, "ExportTime is not valid with ExportType INCREMENTAL_EXPORT; "
                                   "use IncrementalExportSpecification");
    if (spec == NULL) return param_null("incrementalExportSpecification", err);
    if (read_time(spec, "ExportFromTime", &r->from, &from, err) ||
        read_time(spec, "ExportToTime", &r->to, &to, err) ||
        param_enum(spec, "ExportViewType", views, "NEW_AND_OLD_IMAGES", &r->view, err))
        return -1;
    if (!from) return param_null("incrementalExportSpecification.exportFromTime", err);
    if (!to) r->to = ops_now_seconds();
    if (r->from >= r->to)
        return err_validation(err, "ExportFromTime must be earlier than ExportToTime");
    if (r->to - r->from > INCREMENTAL_MAX_SECONDS)
        return err_validation(err, "The incremental export period from ExportFromTime to "
                                   "ExportToTime must be at most 24 hours");
    r->incremental = json_pack("{s:f,s:f,s:s}", "ExportFromTime", r->from, "ExportToTime", r->to,
                               "ExportViewType", r->view);
    return 0;
}

/* The request without ClientToken, for a repeat to be known by. */
static json_t *request_identity(json_t *req)
{
    json_t *id = json_deep_copy(req);
    json_object_del(id, "ClientToken");
    return id;
}

static json_t *public_description(const json_t *rec)
{
    json_t *d = json_deep_copy(rec);
    json_object_del(d, "QuarryRequest");
    json_object_del(d, "QuarryRun");
    return d;
}

/* The export's key prefix: "PREFIX/" (or "" with none) + "AWSDynamoDB/". */
static void key_base(const char *prefix, char *out, size_t cap)
{
    size_t n = prefix ? strlen(prefix) : 0;
    snprintf(out, cap, "%s%sAWSDynamoDB/", n ? prefix : "", n && prefix[n - 1] != '/' ? "/" : "");
}

/* Writes a manifest and its MD5 beside it, twice: NAME.md5 holding it in base64, as
 * DynamoDB's exports have it, and NAME.checksum in hex, as DynamoDB's guide names it. */
static int put_with_checksum(exporter *x, const char *key, const char *text)
{
    if (s3_put(x->bucket_path, key, text, strlen(text), &x->code, x->msg, sizeof x->msg)) return -1;
    unsigned char md5[16];
    char hex[33], b64[25], sum[S3_PATH_MAX];
    s3_md5(text, strlen(text), md5);
    s3_hex(md5, hex);
    s3_base64(md5, b64);
    int stem = (int)(strlen(key) - 5); /* less ".json" */
    s3_format(sum, sizeof sum, "%.*s.md5", stem, key);
    if (s3_put(x->bucket_path, sum, b64, strlen(b64), &x->code, x->msg, sizeof x->msg)) return -1;
    s3_format(sum, sizeof sum, "%.*s.checksum", stem, key);
    return s3_put(x->bucket_path, sum, hex, strlen(hex), &x->code, x->msg, sizeof x->msg);
}

/* Writes the export's files; on failure x->code and x->msg say why. */
static int write_export(exporter *x, const export_request *r, const table *t, const read_view *v,
                        json_t *rec, qr_err *err)
{
    const char *id = json_string_value(json_object_get(rec, "QuarryExportId"));
    char base[S3_PATH_MAX], key[S3_PATH_MAX], data[S3_PATH_MAX];
    key_base(r->prefix, base, sizeof base);
    if (!s3_bucket_exists(x->bucket_path)) {
        x->code = S3_NO_SUCH_BUCKET;
        s3_format(x->msg, sizeof x->msg, "The specified bucket does not exist: %s", r->bucket);
        return -1;
    }
    s3_format(key, sizeof key, "%s%s/_started", base, id);
    if (s3_put(x->bucket_path, key, "", 0, &x->code, x->msg, sizeof x->msg)) return -1;
    int incremental = r->incremental != NULL;
    /* An incremental export's data files go in the prefix's shared data folder. */
    if (incremental)
        s3_format(data, sizeof data, "%sdata/", base);
    else
        s3_format(data, sizeof data, "%s%s/data/", base, id);
    x->dir = data;
    int rc = incremental ? export_incremental(x, t, v, r->from, r->to,
                                              strcmp(r->view, "NEW_AND_OLD_IMAGES") == 0, err)
                         : export_full(x, t, v, r->when, err);
    if (rc && x->code == NULL) { /* the store failed */
        x->code = "UNKNOWN";
        s3_format(x->msg, sizeof x->msg, "%s", err->msg);
        err_clear(err);
        err_init(err);
    }
    /* At least one file, empty when there is nothing to export. */
    if (rc == 0 && x->items == 0 && !x->z_open) file_begin(x);
    if (rc == 0) rc = file_end(x);
    if (rc) return -1;
    buf files;
    buf_init(&files, 0);
    size_t i;
    json_t *entry;
    json_array_foreach(x->manifest, i, entry)
    {
        json_append(&files, entry);
        buf_putc(&files, '\n');
    }
    buf_putc(&files, '\0');
    char files_key[S3_PATH_MAX];
    s3_format(files_key, sizeof files_key, "%s%s/manifest-files.json", base, id);
    rc = put_with_checksum(x, files_key, (const char *)files.data);
    buf_free(&files);
    if (rc) return -1;
    char start[32], end[32], at[32];
    job_iso_time(json_number_value(json_object_get(rec, "StartTime")), start);
    job_iso_time(ops_now_seconds(), end);
    job_iso_time(r->when, at);
    json_t *summary = json_object();
    json_object_set_new(summary, "version", json_string("2020-06-30"));
    json_object_set(summary, "exportArn", json_object_get(rec, "ExportArn"));
    json_object_set_new(summary, "startTime", json_string(start));
    json_object_set_new(summary, "endTime", json_string(end));
    json_object_set(summary, "tableArn", json_object_get(rec, "TableArn"));
    json_object_set(summary, "tableId", json_object_get(rec, "TableId"));
    if (!incremental) json_object_set_new(summary, "exportTime", json_string(at));
    json_object_set_new(summary, "s3Bucket", json_string(r->bucket));
    json_object_set_new(summary, "s3Prefix", r->prefix ? json_string(r->prefix) : json_null());
    json_object_set_new(summary, "s3SseAlgorithm", json_string(r->sse));
    json_object_set_new(summary, "s3SseKmsKeyId", r->kms ? json_string(r->kms) : json_null());
    json_object_set_new(summary, "manifestFilesS3Key", json_string(files_key));
    json_object_set_new(summary, "billedSizeBytes", json_integer((json_int_t)x->bytes));
    json_object_set_new(summary, "itemCount", json_integer((json_int_t)x->items));
    json_object_set_new(summary, "outputFormat", json_string(r->format));
    if (incremental) {
        json_object_set_new(summary, "outputView", json_string(r->view));
        json_object_set_new(summary, "exportType", json_string("INCREMENTAL_EXPORT"));
    }
    char *text = json_dumps(summary, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(summary);
    s3_format(key, sizeof key, "%s%s/manifest-summary.json", base, id);
    rc = text ? put_with_checksum(x, key, text) : -1;
    free(text);
    return rc;
}

/* An export under way: what its thread needs, all its own. */
typedef struct export_job {
    json_t *req; /* the request, with the times it was given filled in */
    export_request r;
    json_t *rec; /* the record, IN_PROGRESS */
    char id[JOB_ID_LEN];
    char bucket_path[S3_PATH_MAX];
    char manifest[S3_PATH_MAX];
    table *t;
    const read_view *v;
} export_job;

static void export_job_free(qr_db *db, export_job *j)
{
    if (j->v) read_view_close(db, j->v);
    catalog_release(db, j->t);
    json_decref(j->r.incremental);
    json_decref(j->rec);
    json_decref(j->req);
    free(j);
}

/* The export's work, on its own thread: the files, then the record's end. */
static void export_run(qr_db *db, void *arg)
{
    export_job *j = arg;
    qr_err err;
    err_init(&err);
    exporter x = {.db = db, .bucket_path = j->bucket_path, .ion = strcmp(j->r.format, "ION") == 0};
    buf_init(&x.gz, 0);
    buf_init(&x.line, 0);
    x.manifest = json_array();
    json_object_set_new(j->rec, "QuarryExportId", json_string(j->id));
    int failed = write_export(&x, &j->r, j->t, j->v, j->rec, &err);
    json_object_del(j->rec, "QuarryExportId");
    if (x.z_open) deflateEnd(&x.z);
    buf_free(&x.gz);
    buf_free(&x.line);
    json_decref(x.manifest);
    json_t *rec = j->rec;
    json_object_set_new(rec, "ExportStatus", json_string(failed ? "FAILED" : "COMPLETED"));
    json_object_set_new(rec, "EndTime", json_real(ops_now_seconds()));
    if (failed) {
        json_object_set_new(rec, "FailureCode", json_string(x.code ? x.code : "UNKNOWN"));
        json_object_set_new(rec, "FailureMessage",
                            json_string(x.code     ? x.msg
                                        : err.type ? err.msg
                                                   : "the export failed"));
    } else {
        json_object_set_new(rec, "ExportManifest", json_string(j->manifest));
        json_object_set_new(rec, "BilledSizeBytes", json_integer((json_int_t)x.bytes));
        json_object_set_new(rec, "ItemCount", json_integer((json_int_t)x.items));
    }
    err_clear(&err);
    err_init(&err);
    if (meta_record_put(db, META_RECORD_EXPORT, j->id, rec, &err))
        engine_log(db, "export %s: its record cannot be stored: %s", j->id, err.msg);
    err_clear(&err);
    export_job_free(db, j);
}

/* A record left IN_PROGRESS by a process that ended before the export did: FAILED. */
static json_t *settle(qr_db *db, json_t *rec)
{
    json_t *run = json_object_get(rec, "QuarryRun");
    if (strcmp(json_string_value(json_object_get(rec, "ExportStatus")) ?: "", "IN_PROGRESS") ||
        (json_is_integer(run) && (uint64_t)json_integer_value(run) == meta_run_id(db) >> 1))
        return rec;
    json_object_set_new(rec, "ExportStatus", json_string("FAILED"));
    json_object_set_new(rec, "FailureCode", json_string("UNKNOWN"));
    json_object_set_new(rec, "FailureMessage",
                        json_string("The server stopped before the export finished"));
    json_object_set_new(rec, "EndTime", json_real(ops_now_seconds()));
    json_object_del(rec, "QuarryRun");
    qr_err err;
    err_init(&err);
    const char *arn = json_string_value(json_object_get(rec, "ExportArn"));
    const char *slash = arn ? strstr(arn, "/export/") : NULL;
    if (slash) meta_record_put(db, META_RECORD_EXPORT, slash + 8, rec, &err);
    err_clear(&err);
    return rec;
}

int op_export_table_to_point_in_time(qr_db *db, op_call *c, qr_err *err)
{
    export_job *j = calloc(1, sizeof *j);
    if (j == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    export_request *r = &j->r;
    json_t *identity = NULL, *pitr = NULL;
    int rc = -1, claimed = 0;
    if (read_request(c->req, r, err)) goto done;
    if (s3_bucket_path(db, r->bucket, j->bucket_path, sizeof j->bucket_path, err)) goto done;
    /* A repeat of a request with its ClientToken answers as the first did. */
    identity = request_identity(c->req);
    meta_claim_lock(db);
    claimed = 1;
    if (r->token) {
        json_t *all;
        if (meta_record_list(db, META_RECORD_EXPORT, &all, err)) goto done;
        size_t i;
        json_t *e;
        json_array_foreach(all, i, e)
        {
            if (!json_equal(json_object_get(e, "ClientToken"),
                            json_object_get(c->req, "ClientToken")))
                continue;
            if (!json_equal(json_object_get(e, "QuarryRequest"), identity)) {
                json_decref(all);
                err_set(err, "ExportConflictException",
                        "There was a conflict when writing to the specified S3 bucket: "
                        "ClientToken %s was used by another request",
                        r->token);
                goto done;
            }
            c->answer = json_pack("{s:o}", "ExportDescription", public_description(settle(db, e)));
            json_decref(all);
            rc = 0;
            goto done;
        }
        json_decref(all);
    }
    j->t = catalog_get(db, r->table);
    if (j->t == NULL) {
        err_set(err, "TableNotFoundException", "Table not found: %s", r->table);
        goto done;
    }
    pitr = table_desc_member(j->t, QR_PITR_FIELD);
    double now = ops_now_seconds(), earliest, latest;
    if (pitr_window(pitr, now, &earliest, &latest)) {
        err_set(err, "PointInTimeRecoveryUnavailableException",
                "Point in time recovery is not enabled for table '%s'", r->table);
        goto done;
    }
    if (r->incremental == NULL && (r->when < earliest - 0.001 || r->when > now + 1)) {
        err_set(err, "InvalidExportTimeException",
                "Invalid Request: ExportTime must be within the table's point in time recovery "
                "window, between EarliestRestorableDateTime and the current time");
        goto done;
    }
    if (r->incremental && (r->from < earliest - 0.001 || r->to > now + 1)) {
        err_set(err, "InvalidExportTimeException",
                "Invalid Request: ExportFromTime and ExportToTime must be within the table's "
                "point in time recovery window, between EarliestRestorableDateTime and the "
                "current time");
        goto done;
    }
    /* The job's own copy of the request, its times as now fixed. */
    j->req = json_deep_copy(c->req);
    if (r->incremental)
        json_object_set_new(json_object_get(j->req, "IncrementalExportSpecification"),
                            "ExportToTime", json_real(r->to));
    else
        json_object_set_new(j->req, "ExportTime", json_real(r->when));
    json_decref(r->incremental);
    if (read_request(j->req, r, err)) goto done;
    char arn[1024];
    job_id(j->id);
    json_t *table_arn = table_desc_member(j->t, "TableArn"),
           *table_uuid = table_desc_member(j->t, "TableId");
    s3_format(arn, sizeof arn, "%s/export/%s", json_string_value(table_arn), j->id);
    char base[S3_PATH_MAX];
    key_base(r->prefix, base, sizeof base);
    s3_format(j->manifest, sizeof j->manifest, "%s%s/manifest-summary.json", base, j->id);
    json_t *rec = j->rec = json_object();
    json_object_set_new(rec, "ExportArn", json_string(arn));
    json_object_set_new(rec, "ExportStatus", json_string("IN_PROGRESS"));
    json_object_set_new(rec, "StartTime", json_real(now));
    json_object_set_new(rec, "TableArn", table_arn);
    json_object_set_new(rec, "TableId", table_uuid);
    if (!r->incremental) json_object_set_new(rec, "ExportTime", json_real(r->when));
    if (r->token) json_object_set(rec, "ClientToken", json_object_get(c->req, "ClientToken"));
    json_object_set_new(rec, "S3Bucket", json_string(r->bucket));
    if (r->owner) json_object_set_new(rec, "S3BucketOwner", json_string(r->owner));
    if (r->prefix) json_object_set_new(rec, "S3Prefix", json_string(r->prefix));
    json_object_set_new(rec, "S3SseAlgorithm", json_string(r->sse));
    if (r->kms) json_object_set_new(rec, "S3SseKmsKeyId", json_string(r->kms));
    json_object_set_new(rec, "ExportFormat", json_string(r->format));
    json_object_set_new(rec, "ExportType", json_string(r->type));
    if (r->incremental) json_object_set(rec, "IncrementalExportSpecification", r->incremental);
    json_object_set(rec, "QuarryRequest", identity);
    json_object_set_new(rec, "QuarryRun", json_integer((json_int_t)(meta_run_id(db) >> 1)));
    /* Stored before the work starts, so that a retry with the token finds it. */
    int stored = meta_record_put(db, META_RECORD_EXPORT, j->id, rec, err);
    meta_claim_unlock(db);
    claimed = 0;
    if (stored) goto done;
    json_t *answer = public_description(rec);
    j->v = read_view_open(db);
    if (meta_job_start(db, export_run, j, err)) {
        json_decref(answer);
        json_object_set_new(rec, "ExportStatus", json_string("FAILED"));
        json_object_set_new(rec, "FailureCode", json_string("UNKNOWN"));
        json_object_set_new(rec, "FailureMessage", json_string(err->msg));
        qr_err ignored;
        err_init(&ignored);
        meta_record_put(db, META_RECORD_EXPORT, j->id, rec, &ignored);
        err_clear(&ignored);
        goto done;
    }
    j = NULL; /* the job's now */
    c->answer = json_pack("{s:o}", "ExportDescription", answer);
    rc = 0;
done:
    if (claimed) meta_claim_unlock(db);
    if (j) export_job_free(db, j);
    json_decref(identity);
    json_decref(pitr);
    return rc;
}

/* The record an ExportArn names, or ExportNotFoundException. */
static int find_export(qr_db *db, const char *arn, json_t **rec, qr_err *err)
{
    const char *slash = arn ? strstr(arn, "/export/") : NULL;
    *rec = NULL;
    if (slash && meta_record_get(db, META_RECORD_EXPORT, slash + 8, rec, err) < 0) return -1;
    const char *stored = json_string_value(json_object_get(*rec, "ExportArn"));
    if (stored == NULL || strcmp(stored, arn) != 0) {
        json_decref(*rec);
        *rec = NULL;
        return err_set(err, "ExportNotFoundException", "Export not found: %s", arn);
    }
    return 0;
}

int op_describe_export(qr_db *db, op_call *c, qr_err *err)
{
    const char *arn;
    if (param_string(c->req, "ExportArn", &arn, err)) return -1;
    if (arn == NULL) return param_null("exportArn", err);
    json_t *rec;
    if (find_export(db, arn, &rec, err)) return -1;
    c->answer = json_pack("{s:o}", "ExportDescription", public_description(settle(db, rec)));
    json_decref(rec);
    return 0;
}

int op_list_exports(qr_db *db, op_call *c, qr_err *err)
{
    const char *table_arn, *next;
    long long max;
    int given;
    if (param_string(c->req, "TableArn", &table_arn, err) ||
        param_string(c->req, "NextToken", &next, err) ||
        param_int(c->req, "MaxResults", 1, LIST_EXPORTS_MAX, &max, &given, err))
        return -1;
    if (!given) max = LIST_EXPORTS_MAX;
    json_t *all;
    if (meta_record_list(db, META_RECORD_EXPORT, &all, err)) return -1;
    json_t *list = json_array();
    const char *last = NULL;
    int more = 0, started = next == NULL;
    /* Newest first, as DynamoDB lists them. */
    for (size_t i = json_array_size(all); i-- > 0;) {
        json_t *e = json_array_get(all, i);
        const char *arn = json_string_value(json_object_get(e, "ExportArn"));
        if (!started) {
            started = arn && strcmp(arn, next) == 0;
            continue;
        }
        if (table_arn && strcmp(table_arn, json_string_value(json_object_get(e, "TableArn"))))
            continue;
        if ((long long)json_array_size(list) == max) {
            more = 1;
            break;
        }
        settle(db, e);
        json_array_append_new(list, json_pack("{s:O,s:O,s:O}", "ExportArn",
                                              json_object_get(e, "ExportArn"), "ExportStatus",
                                              json_object_get(e, "ExportStatus"), "ExportType",
                                              json_object_get(e, "ExportType")));
        last = arn;
    }
    c->answer = json_pack("{s:o}", "ExportSummaries", list);
    if (more && last) json_object_set_new(c->answer, "NextToken", json_string(last));
    json_decref(all);
    return 0;
}
