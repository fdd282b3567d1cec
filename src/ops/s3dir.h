/* s3dir.h — Amazon S3 as a local folder, for exports and imports: bucket B is the folder
 * B under the database's S3 root (qr_options.s3_root), an object's key a path below it.
 * Objects are written whole (a temporary file renamed into place) and listed by key
 * prefix. It knows nothing of DynamoDB's file formats; export.c and import.c do. */
#ifndef QR_OPS_S3DIR_H
#define QR_OPS_S3DIR_H

#include <jansson.h>
#include <stddef.h>

#include "quarry.h"
#include "util/buf.h"
#include "util/err.h"

#define S3_PATH_MAX 4096

/* Why an object could not be read or written, as DynamoDB's FailureCode names it. */
#define S3_NO_SUCH_BUCKET "S3NoSuchBucket"
#define S3_ACCESS_DENIED "S3AccessDenied"

/* Checks a bucket name as S3 does (3-63 of a-z, 0-9, '.', '-'; the first and last a
 * letter or digit) and that db has an S3 root: -1 with ValidationException if not.
 * *out is the bucket's folder (existing or not). */
int s3_bucket_path(qr_db *db, const char *bucket, char *out, size_t cap, qr_err *err);
/* 1 when the bucket folder exists. */
int s3_bucket_exists(const char *bucket_path);
/* Checks a key or key prefix: no segment "." or "..", no leading '/', no NUL. */
int s3_key_ok(const char *key);
/* Writes object key of bucket_path with data, its folders made as needed. -1 with
 * *code (S3_ACCESS_DENIED) and msg (why, naming the file) when it cannot be written. */
int s3_put(const char *bucket_path, const char *key, const void *data, size_t len,
           const char **code, char *msg, size_t msg_cap);
/* The keys of bucket_path's objects that start with prefix (NULL: all), in key order:
 * *keys a new array of strings. -1 with msg set if a folder cannot be read. */
int s3_list(const char *bucket_path, const char *prefix, json_t **keys, char *msg, size_t msg_cap);
/* Reads object key whole into out. -1 with msg set when it cannot be read. */
int s3_get(const char *bucket_path, const char *key, buf *out, char *msg, size_t msg_cap);

/* printf into out (cap bytes), cut short if it does not fit: for paths and messages. */
void s3_format(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The MD5 digest of data. */
void s3_md5(const void *data, size_t len, unsigned char digest[16]);
/* digest in lowercase hex (33 bytes with the NUL), and in base64 (25 bytes). */
void s3_hex(const unsigned char digest[16], char out[33]);
void s3_base64(const unsigned char digest[16], char out[25]);

#endif
