/* dataio.c — `quarry export` and `quarry import`: ExportTableToPointInTime and ImportTable
 * run in-process on a data directory, with a local folder for the S3 bucket. The folder is
 * reached through a temporary S3 root holding one link to it, so any folder name will do
 * (S3's bucket names are narrower). Prints the export's or import's final description;
 * exits 0 when it COMPLETED, 1 when it failed, 2 on bad usage. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "quarry.h"

#define LINK_BUCKET "local-bucket"

typedef struct s3_link {
    char root[64];
    char link[128];
} s3_link;

/* A temporary S3 root whose bucket LINK_BUCKET is folder. */
static int link_open(s3_link *l, const char *folder, const char *prog)
{
    char real[PATH_MAX];
    if (realpath(folder, real) == NULL) {
        fprintf(stderr, "%s: %s: ", prog, folder);
        perror(NULL);
        return -1;
    }
    snprintf(l->root, sizeof l->root, "/tmp/quarry-s3-XXXXXX");
    if (mkdtemp(l->root) == NULL) {
        perror(prog);
        return -1;
    }
    snprintf(l->link, sizeof l->link, "%s/" LINK_BUCKET, l->root);
    if (symlink(real, l->link)) {
        perror(prog);
        rmdir(l->root);
        return -1;
    }
    return 0;
}

static void link_close(s3_link *l)
{
    unlink(l->link);
    rmdir(l->root);
}

/* Runs op with request on db and prints the description under member, described again
 * by describe (ARN member arn_member) once the operation returns. */
static int run(qr_db *db, const char *prog, const char *op, json_t *request, const char *member,
               const char *describe, const char *arn_member, const char *status_member)
{
    char *text = json_dumps(request, JSON_COMPACT);
    qr_response resp;
    int rc = qr_call(db, op, text, strlen(text), &resp);
    free(text);
    if (rc != QR_OK) {
        fprintf(stderr, "%s: %.*s\n", prog, (int)resp.len, resp.body);
        if (resp.error_type &&
            strcmp(resp.error_type, "PointInTimeRecoveryUnavailableException") == 0)
            fprintf(stderr,
                    "%s: enable it with: quarry call --data DIR UpdateContinuousBackups "
                    "'{\"TableName\":\"…\",\"PointInTimeRecoverySpecification\":"
                    "{\"PointInTimeRecoveryEnabled\":true}}'\n",
                    prog);
        qr_response_free(&resp);
        return 1;
    }
    json_t *answer = json_loadb(resp.body, resp.len, 0, NULL);
    qr_response_free(&resp);
    json_t *arn = json_object_get(json_object_get(answer, member), arn_member);
    json_t *ask = json_pack("{s:O}", arn_member, arn);
    text = json_dumps(ask, JSON_COMPACT);
    json_decref(ask);
    json_decref(answer);
    /* The work runs on a thread of its own: asked about until it ends. */
    json_t *final = NULL;
    const char *status = NULL;
    for (;;) {
        rc = qr_call(db, describe, text, strlen(text), &resp);
        json_decref(final);
        final = rc == QR_OK ? json_loadb(resp.body, resp.len, 0, NULL) : NULL;
        status = json_string_value(json_object_get(json_object_get(final, member), status_member));
        if (status == NULL || strcmp(status, "IN_PROGRESS") != 0) break;
        qr_response_free(&resp);
        usleep(20000);
    }
    free(text);
    fwrite(resp.body, 1, resp.len, stdout);
    fputc('\n', stdout);
    int ok = status && strcmp(status, "COMPLETED") == 0;
    if (!ok)
        fprintf(stderr, "%s: %s %s\n", prog, status ? status : "failed",
                json_string_value(json_object_get(json_object_get(final, member), "FailureMessage"))
                    ?: "");
    json_decref(final);
    qr_response_free(&resp);
    return ok ? 0 : 1;
}

static int open_db(const char *dir, qr_options *opts, const char *prog, qr_db **db)
{
    char *errmsg = NULL;
    if (qr_open(dir, opts, db, &errmsg) == QR_OK) return 0;
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, dir, errmsg ? errmsg : "unknown error");
    free(errmsg);
    return -1;
}

static void export_usage(FILE *f)
{
    fprintf(
        f,
        "usage: quarry export [--data DIR] [--format DYNAMODB_JSON|ION] [--time EPOCH]\n"
        "                     [--from EPOCH [--to EPOCH] [--view NEW_IMAGE|NEW_AND_OLD_IMAGES]]\n"
        "                     TABLE OUT\n"
        "  writes TABLE (with point-in-time recovery enabled) as DynamoDB's export to S3\n"
        "  does, into folder OUT: OUT/AWSDynamoDB/<ExportId>/...; --from makes it an\n"
        "  incremental export of the changes from --from to --to (default now)\n");
}

int cli_export(int argc, char **argv)
{
    const char *dir = "./data", *format = "DYNAMODB_JSON", *view = NULL;
    double when = 0, from = 0, to = 0;
    int i = 0;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0) {
            export_usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) break;
        if (strcmp(a, "--data") == 0)
            dir = argv[++i];
        else if (strcmp(a, "--format") == 0)
            format = argv[++i];
        else if (strcmp(a, "--time") == 0)
            when = atof(argv[++i]);
        else if (strcmp(a, "--from") == 0)
            from = atof(argv[++i]);
        else if (strcmp(a, "--to") == 0)
            to = atof(argv[++i]);
        else if (strcmp(a, "--view") == 0)
            view = argv[++i];
        else
            break;
    }
    if (argc - i != 2) {
        export_usage(stderr);
        return 2;
    }
    const char *name = argv[i], *out = argv[i + 1];
    if (mkdir(out, 0777) && access(out, W_OK)) {
        fprintf(stderr, "quarry export: cannot write to %s: ", out);
        perror(NULL);
        return 1;
    }
    s3_link l;
    if (link_open(&l, out, "quarry export")) return 1;
    qr_options opts = {0};
    opts.s3_root = l.root;
    opts.must_exist = 1; /* an export reads a database that is there */
    qr_db *db;
    if (open_db(dir, &opts, "quarry export", &db)) {
        link_close(&l);
        return 1;
    }
    char arn[600];
    snprintf(arn, sizeof arn, "arn:aws:dynamodb:ddblocal:000000000000:table/%s", name);
    json_t *req = json_pack("{s:s,s:s,s:s}", "TableArn", arn, "S3Bucket", LINK_BUCKET,
                            "ExportFormat", format);
    if (when > 0) json_object_set_new(req, "ExportTime", json_real(when));
    if (from > 0) {
        json_t *spec = json_pack("{s:f}", "ExportFromTime", from);
        if (to > 0) json_object_set_new(spec, "ExportToTime", json_real(to));
        if (view) json_object_set_new(spec, "ExportViewType", json_string(view));
        json_object_set_new(req, "ExportType", json_string("INCREMENTAL_EXPORT"));
        json_object_set_new(req, "IncrementalExportSpecification", spec);
    }
    int rc = run(db, "quarry export", "ExportTableToPointInTime", req, "ExportDescription",
                 "DescribeExport", "ExportArn", "ExportStatus");
    json_decref(req);
    qr_close(db);
    link_close(&l);
    return rc;
}

static void import_usage(FILE *f)
{
    fprintf(f, "usage: quarry import [--data DIR] [--format DYNAMODB_JSON|ION|CSV]\n"
               "                     [--compression GZIP|ZSTD|NONE] [--prefix KEY_PREFIX]\n"
               "                     [--delimiter C] [--header NAME,NAME,...]\n"
               "                     (--key NAME:S|N|B[,NAME:S|N|B] | --parameters JSON) TABLE IN\n"
               "  makes the new table TABLE from the files under folder IN (those whose path\n"
               "  below IN starts with KEY_PREFIX), as DynamoDB's ImportTable reads S3\n");
}

/* TableCreationParameters of "pk:S,sk:N", on demand. */
static json_t *key_parameters(const char *name, const char *spec)
{
    json_t *defs = json_array(), *schema = json_array();
    char copy[512];
    snprintf(copy, sizeof copy, "%s", spec);
    int n = 0;
    for (char *save = NULL, *part = strtok_r(copy, ",", &save); part;
         part = strtok_r(NULL, ",", &save), n++) {
        char *colon = strrchr(part, ':');
        if (colon == NULL || n == 2 ||
            (strcmp(colon + 1, "S") && strcmp(colon + 1, "N") && strcmp(colon + 1, "B"))) {
            json_decref(defs);
            json_decref(schema);
            return NULL;
        }
        *colon = '\0';
        json_array_append_new(
            defs, json_pack("{s:s,s:s}", "AttributeName", part, "AttributeType", colon + 1));
        json_array_append_new(schema, json_pack("{s:s,s:s}", "AttributeName", part, "KeyType",
                                                n == 0 ? "HASH" : "RANGE"));
    }
    return json_pack("{s:s,s:o,s:o,s:s}", "TableName", name, "AttributeDefinitions", defs,
                     "KeySchema", schema, "BillingMode", "PAY_PER_REQUEST");
}

int cli_import(int argc, char **argv)
{
    const char *dir = "./data", *format = "DYNAMODB_JSON", *compression = "NONE", *prefix = NULL,
               *delimiter = NULL, *header = NULL, *key = NULL, *parameters = NULL;
    int i = 0;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0) {
            import_usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) break;
        const char **slot = strcmp(a, "--data") == 0          ? &dir
                            : strcmp(a, "--format") == 0      ? &format
                            : strcmp(a, "--compression") == 0 ? &compression
                            : strcmp(a, "--prefix") == 0      ? &prefix
                            : strcmp(a, "--delimiter") == 0   ? &delimiter
                            : strcmp(a, "--header") == 0      ? &header
                            : strcmp(a, "--key") == 0         ? &key
                            : strcmp(a, "--parameters") == 0  ? &parameters
                                                              : NULL;
        if (slot == NULL) break;
        *slot = argv[++i];
    }
    if (argc - i != 2 || (key == NULL) == (parameters == NULL)) {
        import_usage(stderr);
        return 2;
    }
    const char *name = argv[i], *in = argv[i + 1];
    json_t *params;
    if (key) {
        params = key_parameters(name, key);
    } else {
        params = json_loads(parameters, 0, NULL);
        if (json_is_object(params)) json_object_set_new(params, "TableName", json_string(name));
    }
    if (!json_is_object(params)) {
        fprintf(stderr,
                "quarry import: %s is not a key (NAME:TYPE[,NAME:TYPE]) or a JSON object "
                "of TableCreationParameters\n",
                key ? key : parameters);
        json_decref(params);
        return 2;
    }
    json_t *req =
        json_pack("{s:{s:s},s:s,s:s,s:o}", "S3BucketSource", "S3Bucket", LINK_BUCKET, "InputFormat",
                  format, "InputCompressionType", compression, "TableCreationParameters", params);
    if (prefix)
        json_object_set_new(json_object_get(req, "S3BucketSource"), "S3KeyPrefix",
                            json_string(prefix));
    if (delimiter || header) {
        json_t *csv = json_object();
        if (delimiter) json_object_set_new(csv, "Delimiter", json_string(delimiter));
        if (header) {
            json_t *cols = json_array();
            char copy[4096];
            snprintf(copy, sizeof copy, "%s", header);
            for (char *save = NULL, *c = strtok_r(copy, ",", &save); c;
                 c = strtok_r(NULL, ",", &save))
                json_array_append_new(cols, json_string(c));
            json_object_set_new(csv, "HeaderList", cols);
        }
        json_object_set_new(req, "InputFormatOptions", json_pack("{s:o}", "Csv", csv));
    }
    s3_link l;
    if (link_open(&l, in, "quarry import")) {
        json_decref(req);
        return 1;
    }
    qr_options opts = {0};
    opts.s3_root = l.root;
    qr_db *db;
    int rc = 1;
    if (open_db(dir, &opts, "quarry import", &db) == 0) {
        rc = run(db, "quarry import", "ImportTable", req, "ImportTableDescription",
                 "DescribeImport", "ImportArn", "ImportStatus");
        qr_close(db);
    }
    link_close(&l);
    json_decref(req);
    return rc;
}
