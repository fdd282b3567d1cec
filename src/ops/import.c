/* import.c — ImportTable, DescribeImport and ListImports: every object under an S3 key
 * prefix (s3dir.h), uncompressed, gzip'd or zstd'd, read as DYNAMODB_JSON lines, Ion lines
 * (ion.h) or CSV, into a new table made from TableCreationParameters. An item that does
 * not parse or fit the table is counted (ErrorCount) and logged, as DynamoDB logs it to
 * CloudWatch, and the rest go on; an import that fails as a whole (no bucket, the store)
 * leaves no table. The call checks the request and makes the table, CREATING until its
 * last item is in; a job thread reads the objects and ends the record (meta.h) COMPLETED
 * or FAILED. A record a killed process left IN_PROGRESS is FAILED when next read, and its
 * table removed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include "engine/engine.h"
#include "model/value.h"
#include "ops/ion.h"
#include "ops/ops.h"
#include "ops/s3dir.h"
#include "util/jsonread.h"

#define IMPORT_BATCH_ITEMS 100
#define IMPORT_LOG_MAX 10000 /* error lines logged at most; all are counted */
#define LIST_IMPORTS_MAX 25
#define TABLE_ARN_PREFIX "arn:aws:dynamodb:ddblocal:" QR_ACCOUNT ":table/"
#define LOG_GROUP_ARN "arn:aws:logs:ddblocal:" QR_ACCOUNT ":log-group:/aws-dynamodb/imports:*"
/* Below the S3 root, where no bucket can be (no bucket name starts with '_'). */
#define ERROR_LOG_FOLDER "_aws-dynamodb-imports"

typedef struct importer {
    qr_db *db;
    table *t;
    const char *format; /* DYNAMODB_JSON, ION or CSV */
    const char *bucket;
    const char *import_arn;
    json_t *defs;     /* AttributeDefinitions: CSV's typed columns */
    char delimiter;   /* CSV */
    json_t *header;   /* CSV: the columns (HeaderList, or each file's first line) */
    int header_given; /* HeaderList was given */
    const char *key;  /* the object being read */
    uint64_t index;   /* its item being read, from 0 */
    uint64_t processed, imported, errors, bytes;
    FILE *log; /* the error log, opened at the first error */
    char log_path[S3_PATH_MAX];
    /* the batch being gathered */
    json_t *items[IMPORT_BATCH_ITEMS];
    size_t sizes[IMPORT_BATCH_ITEMS];
    buf keys[IMPORT_BATCH_ITEMS];
    size_t n;
} importer;

/* Counts one item's error and logs it as DynamoDB's CloudWatch entries read. */
static void item_error(importer *im, const char *message)
{
    im->errors++;
    if (im->errors > IMPORT_LOG_MAX) return;
    if (im->log == NULL) {
        char dir[S3_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", im->log_path);
        for (char *p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
            *p = '\0';
            mkdir(dir, 0777);
            *p = '/';
        }
        im->log = fopen(im->log_path, "a");
        if (im->log == NULL) return;
    }
    json_t *e = json_pack("{s:{s:s,s:s,s:I},s:s,s:[s]}", "itemS3Pointer", "bucket", im->bucket,
                          "key", im->key, "itemIndex", (json_int_t)im->index, "importArn",
                          im->import_arn, "errorMessages", message);
    char *text = e ? json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (text) fprintf(im->log, "%s\n", text);
    free(text);
    json_decref(e);
}

static int flush_batch(importer *im, qr_err *err)
{
    if (im->n == 0) return 0;
    table *tables[IMPORT_BATCH_ITEMS];
    for (size_t i = 0; i < im->n; i++)
        tables[i] = im->t;
    item_txn *x = NULL;
    int rc = txn_begin(im->db, TXN_BATCH | TXN_SYSTEM, im->n, tables, im->keys, &x, err);
    for (size_t i = 0; rc == 0 && i < im->n; i++)
        rc = txn_put(x, i, im->items[i], im->sizes[i], err);
    if (rc == 0) rc = txn_commit(x, err);
    txn_end(x);
    for (size_t i = 0; i < im->n; i++)
        json_decref(im->items[i]);
    im->n = 0;
    return rc;
}

/* Checks item (stolen) against the table and adds it to the batch; an item that does not
 * fit is an item's error. -1 only when the store fails. */
static int add_item(importer *im, json_t *item, qr_err *err)
{
    im->processed++;
    if (!json_is_object(item)) {
        json_decref(item);
        item_error(im, "The item is not a map of attribute values");
        return 0;
    }
    qr_err e;
    err_init(&e);
    size_t size;
    buf *k = &im->keys[im->n];
    buf_reset(k);
    if (item_check_put(im->t, item, &size, &e) || index_check_item(im->t, item, &e) ||
        key_item(k, im->t, item, &e)) {
        item_error(im, e.msg);
        err_clear(&e);
        json_decref(item);
        return 0;
    }
    err_clear(&e);
    im->imported++; /* a later item of the same key overwrites it, as in DynamoDB */
    /* Two items of one key in a batch: the later wins, as in DynamoDB's import. */
    for (size_t i = 0; i < im->n; i++)
        if (im->keys[i].len == k->len && memcmp(im->keys[i].data, k->data, k->len) == 0) {
            json_decref(im->items[i]);
            im->items[i] = item;
            im->sizes[i] = size;
            return 0;
        }
    im->items[im->n] = item;
    im->sizes[im->n] = size;
    if (++im->n == IMPORT_BATCH_ITEMS) return flush_batch(im, err);
    return 0;
}

/* ---- the formats ---- */

/* One DYNAMODB_JSON value (doc, stolen): {"Item": {...}}. */
static int json_item(importer *im, json_t *doc, qr_err *err)
{
    json_t *item = json_object_get(doc, "Item");
    if (!json_is_object(item) || json_object_size(doc) != 1) {
        im->processed++;
        item_error(im, "A DynamoDB JSON line must be an object with one member, Item, holding "
                       "the item's attributes");
        json_decref(doc);
        return 0;
    }
    json_incref(item);
    json_decref(doc);
    return add_item(im, item, err);
}

/* Reads Ion text: its top-level structs, each {Item: {...}}, however laid out. */
static int ion_text(importer *im, const char *s, size_t len, qr_err *err)
{
    size_t pos = 0;
    int rc = 0;
    while (rc == 0) {
        char msg[300];
        json_t *doc;
        int got = ion_read_next(s, len, &pos, &doc, msg, sizeof msg);
        if (got == 0) break;
        if (got < 0) {
            im->processed++;
            item_error(im, msg);
        } else {
            json_t *map = json_object_get(json_object_get(doc, "Item"), "M");
            if (map == NULL || json_object_size(doc) != 1) {
                im->processed++;
                item_error(im, "An Ion value must be a struct with one field, Item, a struct of "
                               "the item's attributes");
            } else {
                rc = add_item(im, json_incref(map), err);
            }
            json_decref(doc);
        }
        im->index++;
    }
    return rc;
}

/* The AttributeValue type CSV gives column name: its AttributeDefinitions type, else S. */
static const char *csv_type(importer *im, const char *name)
{
    size_t i;
    json_t *d;
    json_array_foreach(im->defs, i, d)
    {
        const char *n = json_string_value(json_object_get(d, "AttributeName"));
        if (n && strcmp(n, name) == 0) {
            const char *t = json_string_value(json_object_get(d, "AttributeType"));
            return t ? t : "S";
        }
    }
    return "S";
}

/* One CSV record's fields (fields: an array of strings). */
static int csv_record(importer *im, json_t *fields, qr_err *err)
{
    if (im->header == NULL) { /* the file's first line names its columns */
        im->header = json_copy(fields);
        return 0;
    }
    if (json_array_size(fields) == 1 && json_string_length(json_array_get(fields, 0)) == 0)
        return 0; /* a blank line */
    if (json_array_size(fields) != json_array_size(im->header)) {
        im->processed++;
        char msg[200];
        s3_format(msg, sizeof msg, "The CSV line has %zu fields where the header has %zu",
                  json_array_size(fields), json_array_size(im->header));
        item_error(im, msg);
        return 0;
    }
    json_t *item = json_object();
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f)
    {
        const char *name = json_string_value(json_array_get(im->header, i));
        if (json_string_length(f) == 0 || name == NULL || *name == '\0') continue;
        json_t *av = json_object();
        json_object_set(av, csv_type(im, name), f);
        json_object_set_new(item, name, av);
    }
    return add_item(im, item, err);
}

/* Reads CSV text (RFC 4180: quoted fields, "" for a quote, new lines in quotes). */
static int csv_text(importer *im, const char *s, size_t len, qr_err *err)
{
    json_t *fields = json_array();
    buf field;
    buf_init(&field, 0);
    size_t i = 0;
    int quoted = 0, rc = 0, any = 0;
    while (rc == 0 && i <= len) {
        char c = i < len ? s[i] : '\n';
        if (quoted) {
            if (i == len) { /* the text ends inside quotes */
                im->processed++;
                item_error(im, "The CSV text ends inside a quoted field");
                json_array_clear(fields);
                any = 0;
                break;
            }
            if (c == '"' && i + 1 < len && s[i + 1] == '"') {
                buf_putc(&field, '"');
                i += 2;
                continue;
            }
            if (c == '"')
                quoted = 0;
            else
                buf_putc(&field, (uint8_t)c);
            i++;
            continue;
        }
        if (c == '"' && field.len == 0) {
            quoted = 1;
            any = 1;
        } else if (c == im->delimiter) {
            json_array_append_new(fields,
                                  json_stringn(field.data ? (char *)field.data : "", field.len));
            buf_reset(&field);
            any = 1;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < len && s[i + 1] == '\n') i++;
            if (any || field.len) {
                json_array_append_new(
                    fields, json_stringn(field.data ? (char *)field.data : "", field.len));
                rc = csv_record(im, fields, err);
                im->index++;
            }
            json_array_clear(fields);
            buf_reset(&field);
            any = 0;
        } else {
            buf_putc(&field, (uint8_t)c);
            any = 1;
        }
        i++;
    }
    buf_free(&field);
    json_decref(fields);
    return rc;
}

/* Reads DYNAMODB_JSON text: {"Item": {...}} objects, one a line as DynamoDB writes them
 * (or laid out over several lines, as its guide prints them). After a value that does not
 * parse, reading goes on at the next line. */
static int json_text(importer *im, const char *s, size_t len, qr_err *err)
{
    size_t pos = 0;
    int rc = 0;
    while (rc == 0) {
        while (pos < len && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\r' || s[pos] == '\n'))
            pos++;
        if (pos >= len) break;
        json_error_t je;
        json_t *doc =
            json_loadb(s + pos, len - pos, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je);
        if (doc == NULL) {
            im->processed++;
            char msg[300];
            s3_format(msg, sizeof msg,
                      "Unexpected token in the DynamoDB JSON at line %d, column %d: %s", je.line,
                      je.column, je.text);
            item_error(im, msg);
            const char *nl = memchr(s + pos, '\n', len - pos);
            pos = nl ? (size_t)(nl - s) + 1 : len;
        } else {
            pos += je.position;
            rc = json_item(im, doc, err);
        }
        im->index++;
    }
    return rc;
}

/* ---- decompression ---- */

/* Inflates gzip (one or more members) or zlib data into out: 0, or -1 with what was
 * decoded before the fault left in out. */
static int gunzip(const buf *in, buf *out, char *msg, size_t cap)
{
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return -1;
    z.next_in = (Bytef *)in->data;
    z.avail_in = (uInt)in->len;
    unsigned char chunk[65536];
    int rc = Z_OK;
    while (rc != Z_STREAM_END || z.avail_in > 0) {
        if (rc == Z_STREAM_END) { /* another member follows */
            inflateReset(&z);
            rc = Z_OK;
        }
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        rc = inflate(&z, Z_NO_FLUSH);
        buf_append(out, chunk, sizeof chunk - z.avail_out);
        if (rc == Z_STREAM_END) continue;
        if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
            s3_format(msg, cap, "the object is not valid GZIP data%s (after %lu bytes)",
                      rc == Z_OK || rc == Z_BUF_ERROR ? ": it is cut short" : "",
                      (unsigned long)z.total_in);
            inflateEnd(&z);
            return -1;
        }
    }
    inflateEnd(&z);
    return 0;
}

static int unzstd(const buf *in, buf *out, char *msg, size_t cap)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    ZSTD_initDStream(z);
    ZSTD_inBuffer ib = {in->data, in->len, 0};
    unsigned char chunk[65536];
    size_t ret = 1;
    while (ib.pos < ib.size) {
        ZSTD_outBuffer ob = {chunk, sizeof chunk, 0};
        ret = ZSTD_decompressStream(z, &ob, &ib);
        if (ZSTD_isError(ret)) {
            s3_format(msg, cap, "the object is not valid ZSTD data: %s", ZSTD_getErrorName(ret));
            ZSTD_freeDStream(z);
            return -1;
        }
        buf_append(out, chunk, ob.pos);
    }
    for (;;) { /* what the decoder still holds */
        ZSTD_outBuffer ob = {chunk, sizeof chunk, 0};
        size_t r = ZSTD_decompressStream(z, &ob, &ib);
        if (ZSTD_isError(r) || ob.pos == 0) break;
        buf_append(out, chunk, ob.pos);
        ret = r;
    }
    ZSTD_freeDStream(z);
    if (ret != 0 || in->len == 0) {
        s3_format(msg, cap, "the object is not valid ZSTD data: it is cut short");
        return -1;
    }
    return 0;
}

/* Reads one object: its text's items into the batch, its faults counted. */
static int import_object(importer *im, const char *bucket_path, const char *key,
                         const char *compression, qr_err *err)
{
    buf raw, text;
    buf_init(&raw, 0);
    buf_init(&text, 0);
    char msg[300];
    im->key = key;
    im->index = 0;
    int rc = 0, broken = 0;
    if (s3_get(bucket_path, key, &raw, msg, sizeof msg)) {
        item_error(im, msg);
        goto done;
    }
    im->bytes += raw.len;
    const buf *body = &raw;
    if (strcmp(compression, "GZIP") == 0 || strcmp(compression, "ZSTD") == 0) {
        if (raw.len > 0) /* an empty object holds no items, compressed or not */
            broken = compression[0] == 'G' ? gunzip(&raw, &text, msg, sizeof msg)
                                           : unzstd(&raw, &text, msg, sizeof msg);
        body = &text;
    }
    const char *s = body->data ? (const char *)body->data : "";
    size_t len = body->len;
    if (len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 byte order mark */
        s += 3;
        len -= 3;
    }
    if (broken) { /* the items before the fault are read; a line it cut is not */
        const char *nl = len ? memrchr(s, '\n', len) : NULL;
        len = nl ? (size_t)(nl - s) + 1 : 0;
    }
    if (strcmp(im->format, "CSV") == 0) {
        if (!im->header_given) {
            json_decref(im->header);
            im->header = NULL;
        }
        rc = csv_text(im, s, len, err);
    } else if (strcmp(im->format, "ION") == 0) {
        rc = ion_text(im, s, len, err);
    } else {
        rc = json_text(im, s, len, err);
    }
    if (broken) {
        im->processed++;
        item_error(im, msg);
    }
done:
    buf_free(&raw);
    buf_free(&text);
    return rc;
}

/* ---- the request ---- */

typedef struct import_request {
    const char *bucket, *prefix, *owner, *format, *compression, *token, *table;
    json_t *source, *options, *params;
    char delimiter;
} import_request;

static int read_request(json_t *req, import_request *r, qr_err *err)
{
    static const char *const formats[] = {"DYNAMODB_JSON", "ION", "CSV", NULL},
                             *const compressions[] = {"GZIP", "ZSTD", "NONE", NULL};
    memset(r, 0, sizeof *r);
    if (param_object(req, "S3BucketSource", &r->source, err) ||
        param_enum(req, "InputFormat", formats, NULL, &r->format, err) ||
        param_object(req, "InputFormatOptions", &r->options, err) ||
        param_enum(req, "InputCompressionType", compressions, "NONE", &r->compression, err) ||
        param_object(req, "TableCreationParameters", &r->params, err) ||
        param_string(req, "ClientToken", &r->token, err))
        return -1;
    if (r->source == NULL) return param_null("s3BucketSource", err);
    if (r->format == NULL) return param_null("inputFormat", err);
    if (r->params == NULL) return param_null("tableCreationParameters", err);
    if (param_string(r->source, "S3Bucket", &r->bucket, err) ||
        param_string(r->source, "S3KeyPrefix", &r->prefix, err) ||
        param_string(r->source, "S3BucketOwner", &r->owner, err))
        return -1;
    if (r->bucket == NULL) return param_null("s3BucketSource.s3Bucket", err);
    if (r->prefix && !s3_key_ok(r->prefix))
        return err_validation(err, "Invalid S3KeyPrefix: %s", r->prefix);
    json_t *name = json_object_get(r->params, "TableName");
    if (name == NULL) return param_null("tableCreationParameters.tableName", err);
    if (param_check_table_name(name, "tableCreationParameters.tableName", err)) return -1;
    r->table = json_string_value(name);
    r->delimiter = ',';
    json_t *csv = json_object_get(r->options, "Csv");
    if (csv && strcmp(r->format, "CSV") != 0)
        return err_validation(err, "InputFormatOptions.Csv is only valid with InputFormat CSV");
    const char *delim;
    json_t *header;
    if (csv && (param_string(csv, "Delimiter", &delim, err) ||
                param_array(csv, "HeaderList", &header, err)))
        return -1;
    if (csv && delim) {
        if (strlen(delim) != 1 || strchr(",\t:;| ", delim[0]) == NULL)
            return err_validation(err, "Invalid Delimiter '%s': one of , \\t : ; | and space",
                                  delim);
        r->delimiter = delim[0];
    }
    size_t i;
    json_t *h;
    if (csv)
        json_array_foreach(header, i, h) if (
            !json_is_string(h) ||
            json_string_length(h) ==
                0) return err_validation(err, "Invalid HeaderList: every column must have a name");
    return 0;
}

static json_t *public_description(const json_t *rec)
{
    json_t *d = json_deep_copy(rec);
    json_object_del(d, "QuarryRequest");
    json_object_del(d, "QuarryRun");
    return d;
}

static int set_status(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    (void)err;
    json_object_set_new(desc, "TableStatus", json_string(arg));
    return 0;
}

/* Makes the table, CREATING until its import ends; the request's error (CreateTable's)
 * if it cannot be made. */
static int create_table(qr_db *db, const import_request *r, qr_err *err)
{
    static const char *const members[] = {
        "TableName",        "AttributeDefinitions",   "KeySchema",
        "BillingMode",      "ProvisionedThroughput",  "OnDemandThroughput",
        "SSESpecification", "GlobalSecondaryIndexes", NULL};
    json_t *create = json_object();
    for (int i = 0; members[i]; i++) {
        json_t *v = json_object_get(r->params, members[i]);
        if (v) json_object_set(create, members[i], v);
    }
    json_t *created = NULL;
    int rc = op_run(db, op_create_table, create, &created, err);
    json_decref(create);
    json_decref(created);
    if (rc == 0 && catalog_change_schema(db, r->table, set_status, "CREATING", err)) {
        restore_abandon(db, r->table);
        rc = -1;
    }
    return rc;
}

/* Reads every object into the table. *code and msg say why the import failed as a
 * whole (then the caller removes the table). */
static int load(qr_db *db, const import_request *r, const char *bucket_path, importer *im,
                const char **code, char *msg, size_t cap)
{
    json_t *keys = NULL;
    if (!s3_bucket_exists(bucket_path)) {
        *code = S3_NO_SUCH_BUCKET;
        s3_format(msg, cap, "The specified bucket does not exist: %s", r->bucket);
        return -1;
    }
    if (s3_list(bucket_path, r->prefix, &keys, msg, cap)) {
        *code = S3_ACCESS_DENIED;
        return -1;
    }
    /* An export's own files are not its data: a prefix over a whole export reads its
     * data files alone. */
    static const char *const bookkeeping[] = {"_started",
                                              "manifest-summary.json",
                                              "manifest-summary.md5",
                                              "manifest-summary.checksum",
                                              "manifest-files.json",
                                              "manifest-files.md5",
                                              "manifest-files.checksum",
                                              NULL};
    for (size_t i = json_array_size(keys); i-- > 0;) {
        const char *key = json_string_value(json_array_get(keys, i)), *slash = strrchr(key, '/');
        const char *base = slash ? slash + 1 : key;
        int skip = strstr(key, "AWSDynamoDB/") != NULL; /* in an export's folder */
        for (int b = 0; skip && bookkeeping[b]; b++)
            if (strcmp(base, bookkeeping[b]) == 0) {
                json_array_remove(keys, i);
                break;
            }
    }
    if (json_array_size(keys) == 0) {
        json_decref(keys);
        *code = "S3NoSuchKey";
        s3_format(msg, cap, "No objects were found in bucket %s under the key prefix '%s'",
                  r->bucket, r->prefix ? r->prefix : "");
        return -1;
    }
    qr_err err;
    err_init(&err);
    im->t = catalog_get(db, r->table);
    int rc = im->t ? 0 : err_set(&err, QR_E_NOT_FOUND, "the table was deleted");
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        if (rc) break;
        rc = import_object(im, bucket_path, json_string_value(k), r->compression, &err);
    }
    if (rc == 0) rc = flush_batch(im, &err);
    for (size_t j = 0; j < im->n; j++)
        json_decref(im->items[j]);
    im->n = 0;
    if (im->t) catalog_release_after_writes(im->t);
    im->t = NULL;
    if (rc == 0) propagate_drain(db, RESTORE_INDEX_WAIT_MS);
    if (rc == 0) rc = catalog_change_schema(db, r->table, set_status, "ACTIVE", &err);
    if (rc) {
        *code = "UNKNOWN";
        s3_format(msg, cap, "The import could not write the table: %s", err.msg);
    }
    err_clear(&err);
    json_decref(keys);
    return rc;
}

/* An import under way: what its thread needs, all its own. */
typedef struct import_job {
    json_t *req; /* the request */
    import_request r;
    json_t *rec; /* the record, IN_PROGRESS */
    char id[JOB_ID_LEN];
    char arn[1024];
    char bucket_path[S3_PATH_MAX];
} import_job;

static void import_job_free(import_job *j)
{
    json_decref(j->rec);
    json_decref(j->req);
    free(j);
}

static void import_run(qr_db *db, void *arg)
{
    import_job *j = arg;
    const import_request *r = &j->r;
    importer im = {.db = db,
                   .format = r->format,
                   .bucket = r->bucket,
                   .import_arn = j->arn,
                   .delimiter = r->delimiter};
    im.defs = json_object_get(r->params, "AttributeDefinitions");
    im.header = json_incref(json_object_get(json_object_get(r->options, "Csv"), "HeaderList"));
    im.header_given = im.header != NULL;
    for (size_t i = 0; i < IMPORT_BATCH_ITEMS; i++)
        buf_init(&im.keys[i], 0);
    s3_format(im.log_path, sizeof im.log_path, "%s/" ERROR_LOG_FOLDER "/%s/error.log",
              engine_s3_root(db), j->id);
    const char *code = NULL;
    char msg[600] = "";
    int failed = load(db, r, j->bucket_path, &im, &code, msg, sizeof msg) != 0;
    if (failed) restore_abandon(db, r->table); /* no half-made table is left */
    if (im.log) fclose(im.log);
    json_decref(im.header);
    for (size_t i = 0; i < IMPORT_BATCH_ITEMS; i++)
        buf_free(&im.keys[i]);
    json_t *rec = j->rec;
    json_object_set_new(rec, "ImportStatus", json_string(failed ? "FAILED" : "COMPLETED"));
    json_object_set_new(rec, "EndTime", json_real(ops_now_seconds()));
    json_object_set_new(rec, "ErrorCount", json_integer((json_int_t)im.errors));
    json_object_set_new(rec, "ProcessedSizeBytes", json_integer((json_int_t)im.bytes));
    json_object_set_new(rec, "ProcessedItemCount", json_integer((json_int_t)im.processed));
    json_object_set_new(rec, "ImportedItemCount",
                        json_integer(failed ? 0 : (json_int_t)im.imported));
    if (failed) {
        json_object_set_new(rec, "FailureCode", json_string(code));
        json_object_set_new(rec, "FailureMessage", json_string(msg));
    }
    if (im.errors) json_object_set_new(rec, "QuarryErrorLog", json_string(im.log_path));
    qr_err err;
    err_init(&err);
    if (meta_record_put(db, META_RECORD_IMPORT, j->id, rec, &err))
        engine_log(db, "import %s: its record cannot be stored: %s", j->id, err.msg);
    err_clear(&err);
    import_job_free(j);
}

/* A record left IN_PROGRESS by a process that ended before the import did: FAILED, and
 * the table it was making (still CREATING) removed. */
static json_t *settle(qr_db *db, json_t *rec)
{
    json_t *run = json_object_get(rec, "QuarryRun");
    if (strcmp(json_string_value(json_object_get(rec, "ImportStatus")) ?: "", "IN_PROGRESS") ||
        (json_is_integer(run) && (uint64_t)json_integer_value(run) == meta_run_id(db) >> 1))
        return rec;
    const char *arn = json_string_value(json_object_get(rec, "TableArn"));
    const char *name = arn ? strstr(arn, ":table/") : NULL;
    table *t = name ? catalog_get(db, name + 7) : NULL;
    if (t) {
        json_t *id = table_desc_member(t, "TableId"), *status = table_desc_member(t, "TableStatus");
        int ours = json_equal(id, json_object_get(rec, "TableId")) &&
                   strcmp(json_string_value(status) ?: "", "CREATING") == 0;
        json_decref(id);
        json_decref(status);
        catalog_release(db, t);
        if (ours) restore_abandon(db, name + 7);
    }
    json_object_set_new(rec, "ImportStatus", json_string("FAILED"));
    json_object_set_new(rec, "FailureCode", json_string("UNKNOWN"));
    json_object_set_new(rec, "FailureMessage",
                        json_string("The server stopped before the import finished; the table "
                                    "it was making was removed"));
    json_object_set_new(rec, "EndTime", json_real(ops_now_seconds()));
    json_object_del(rec, "QuarryRun");
    qr_err err;
    err_init(&err);
    const char *iarn = json_string_value(json_object_get(rec, "ImportArn"));
    const char *slash = iarn ? strstr(iarn, "/import/") : NULL;
    if (slash) meta_record_put(db, META_RECORD_IMPORT, slash + 8, rec, &err);
    err_clear(&err);
    return rec;
}

int op_import_table(qr_db *db, op_call *c, qr_err *err)
{
    import_job *j = calloc(1, sizeof *j);
    if (j == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    j->req = json_deep_copy(c->req);
    import_request *r = &j->r;
    json_t *identity = json_deep_copy(c->req);
    json_object_del(identity, "ClientToken");
    int rc = -1, claimed = 0;
    if (read_request(j->req, r, err) ||
        s3_bucket_path(db, r->bucket, j->bucket_path, sizeof j->bucket_path, err))
        goto done;
    meta_claim_lock(db);
    claimed = 1;
    if (r->token) {
        json_t *all;
        if (meta_record_list(db, META_RECORD_IMPORT, &all, err)) goto done;
        size_t i;
        json_t *e;
        json_array_foreach(all, i, e)
        {
            const char *tok = json_string_value(json_object_get(e, "ClientToken"));
            if (tok == NULL || strcmp(tok, r->token) != 0) continue;
            if (!json_equal(json_object_get(e, "QuarryRequest"), identity)) {
                json_decref(all);
                err_set(err, "ImportConflictException",
                        "There was a conflict when importing from the specified S3 source. This "
                        "can occur when the current import conflicts with a previous import "
                        "request that had the same client token.");
                goto done;
            }
            c->answer =
                json_pack("{s:o}", "ImportTableDescription", public_description(settle(db, e)));
            json_decref(all);
            rc = 0;
            goto done;
        }
        json_decref(all);
    }
    table *existing = catalog_get(db, r->table);
    if (existing) {
        catalog_release(db, existing);
        err_set(err, QR_E_IN_USE, QR_MSG_TABLE_EXISTS, r->table);
        goto done;
    }
    char table_arn[600];
    job_id(j->id);
    s3_format(table_arn, sizeof table_arn, TABLE_ARN_PREFIX "%s", r->table);
    s3_format(j->arn, sizeof j->arn, "%s/import/%s", table_arn, j->id);
    if (create_table(db, r, err)) goto done;
    json_t *rec = j->rec = json_object();
    json_object_set_new(rec, "ImportArn", json_string(j->arn));
    json_object_set_new(rec, "ImportStatus", json_string("IN_PROGRESS"));
    json_object_set_new(rec, "TableArn", json_string(table_arn));
    table *t = catalog_get(db, r->table);
    if (t) {
        json_object_set_new(rec, "TableId", table_desc_member(t, "TableId"));
        catalog_release(db, t);
    }
    if (r->token) json_object_set(rec, "ClientToken", json_object_get(c->req, "ClientToken"));
    json_object_set(rec, "S3BucketSource", r->source);
    json_object_set_new(rec, "ErrorCount", json_integer(0));
    json_object_set_new(rec, "CloudWatchLogGroupArn", json_string(LOG_GROUP_ARN));
    json_object_set_new(rec, "InputFormat", json_string(r->format));
    if (r->options) json_object_set(rec, "InputFormatOptions", r->options);
    json_object_set_new(rec, "InputCompressionType", json_string(r->compression));
    json_object_set(rec, "TableCreationParameters", r->params);
    json_object_set_new(rec, "StartTime", json_real(ops_now_seconds()));
    json_object_set_new(rec, "ProcessedSizeBytes", json_integer(0));
    json_object_set_new(rec, "ProcessedItemCount", json_integer(0));
    json_object_set_new(rec, "ImportedItemCount", json_integer(0));
    json_object_set(rec, "QuarryRequest", identity);
    json_object_set_new(rec, "QuarryRun", json_integer((json_int_t)(meta_run_id(db) >> 1)));
    /* Stored before the work starts, so that a retry with the token finds it. */
    int stored = meta_record_put(db, META_RECORD_IMPORT, j->id, rec, err);
    meta_claim_unlock(db);
    claimed = 0;
    if (stored) {
        restore_abandon(db, r->table);
        goto done;
    }
    json_t *answer = public_description(rec); /* before the job may change rec */
    if (meta_job_start(db, import_run, j, err)) {
        json_decref(answer);
        restore_abandon(db, r->table);
        json_object_set_new(rec, "ImportStatus", json_string("FAILED"));
        json_object_set_new(rec, "FailureCode", json_string("UNKNOWN"));
        json_object_set_new(rec, "FailureMessage", json_string(err->msg));
        qr_err ignored;
        err_init(&ignored);
        meta_record_put(db, META_RECORD_IMPORT, j->id, rec, &ignored);
        err_clear(&ignored);
        goto done;
    }
    c->answer = json_pack("{s:o}", "ImportTableDescription", answer);
    j = NULL; /* the job's now */
    rc = 0;
done:
    if (claimed) meta_claim_unlock(db);
    if (j) import_job_free(j);
    json_decref(identity);
    return rc;
}

int op_describe_import(qr_db *db, op_call *c, qr_err *err)
{
    const char *arn;
    if (param_string(c->req, "ImportArn", &arn, err)) return -1;
    if (arn == NULL) return param_null("importArn", err);
    const char *slash = strstr(arn, "/import/");
    json_t *rec = NULL;
    if (slash && meta_record_get(db, META_RECORD_IMPORT, slash + 8, &rec, err) < 0) return -1;
    const char *stored = json_string_value(json_object_get(rec, "ImportArn"));
    if (stored == NULL || strcmp(stored, arn) != 0) {
        json_decref(rec);
        return err_set(err, "ImportNotFoundException", "Import not found: %s", arn);
    }
    c->answer = json_pack("{s:o}", "ImportTableDescription", public_description(settle(db, rec)));
    json_decref(rec);
    return 0;
}

int op_list_imports(qr_db *db, op_call *c, qr_err *err)
{
    const char *table_arn, *next;
    long long max;
    int given;
    if (param_string(c->req, "TableArn", &table_arn, err) ||
        param_string(c->req, "NextToken", &next, err) ||
        param_int(c->req, "PageSize", 1, LIST_IMPORTS_MAX, &max, &given, err))
        return -1;
    if (!given) max = LIST_IMPORTS_MAX;
    json_t *all;
    if (meta_record_list(db, META_RECORD_IMPORT, &all, err)) return -1;
    json_t *list = json_array();
    size_t i;
    json_t *e;
    const char *last = NULL;
    int more = 0, started = next == NULL;
    static const char *const fields[] = {"ImportArn",
                                         "ImportStatus",
                                         "TableArn",
                                         "S3BucketSource",
                                         "CloudWatchLogGroupArn",
                                         "InputFormat",
                                         "StartTime",
                                         "EndTime",
                                         NULL};
    json_array_foreach(all, i, e)
    {
        const char *arn = json_string_value(json_object_get(e, "ImportArn"));
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
        json_t *s = json_object();
        for (int f = 0; fields[f]; f++)
            if (json_object_get(e, fields[f]))
                json_object_set(s, fields[f], json_object_get(e, fields[f]));
        json_array_append_new(list, s);
        last = arn;
    }
    c->answer = json_pack("{s:o}", "ImportSummaryList", list);
    if (more && last) json_object_set_new(c->answer, "NextToken", json_string(last));
    json_decref(all);
    return 0;
}
