/* s3dir.c — Amazon S3 as a local folder (see s3dir.h): bucket and key checks, whole-object
 * writes through a temporary file and a rename, listings by prefix, MD5 digests. It does
 * not read or write DynamoDB's formats. */
#include "ops/s3dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"

int s3_bucket_path(qr_db *db, const char *bucket, char *out, size_t cap, qr_err *err)
{
    const char *root = engine_s3_root(db);
    if (root == NULL)
        return err_validation(err, "S3 is not available: start quarry serve with --s3-root DIR "
                                   "to map buckets to folders of DIR");
    size_t n = bucket ? strlen(bucket) : 0;
    int ok = n >= 3 && n <= 63;
    for (size_t i = 0; ok && i < n; i++) {
        char c = bucket[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        ok = alnum || ((c == '.' || c == '-') && i > 0 && i + 1 < n);
    }
    if (ok && strstr(bucket, "..")) ok = 0;
    if (!ok)
        return err_validation(err,
                              "Invalid S3 bucket name: '%s' (3 to 63 lowercase letters, "
                              "digits, '.' and '-')",
                              bucket ? bucket : "");
    if ((size_t)snprintf(out, cap, "%s/%s", root, bucket) >= cap)
        return err_validation(err, "The S3 bucket's path is too long");
    return 0;
}

int s3_bucket_exists(const char *bucket_path)
{
    struct stat st;
    return stat(bucket_path, &st) == 0 && S_ISDIR(st.st_mode);
}

int s3_key_ok(const char *key)
{
    if (key == NULL) return 1;
    if (key[0] == '/') return 0;
    for (const char *s = key; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return 0;
        if (e == NULL) break;
        s = e + 1;
    }
    return 1;
}

/* Makes every folder of path above its last '/'. */
static int make_parents(char *path)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        int rc = mkdir(path, 0777);
        int e = errno;
        *p = '/';
        if (rc && e != EEXIST) return -1;
    }
    return 0;
}

int s3_put(const char *bucket_path, const char *key, const void *data, size_t len,
           const char **code, char *msg, size_t msg_cap)
{
    char path[S3_PATH_MAX], tmp[S3_PATH_MAX + 32];
    *code = S3_ACCESS_DENIED;
    if (!s3_key_ok(key) ||
        (size_t)snprintf(path, sizeof path, "%s/%s", bucket_path, key) >= sizeof path) {
        snprintf(msg, msg_cap, "Invalid S3 key: %s", key);
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = -1;
    const char *step = "create";
    if (make_parents(path) == 0 && (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666)) >= 0) {
        const char *p = data;
        size_t left = len;
        step = "write";
        while (left > 0) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            p += w;
            left -= (size_t)w;
        }
        if (left == 0 && fsync(fd) == 0 && close(fd) == 0) {
            fd = -1;
            step = "rename";
            if (rename(tmp, path) == 0) return 0;
        }
    }
    int e = errno;
    if (fd >= 0) close(fd);
    unlink(tmp);
    snprintf(msg, msg_cap, "Access Denied: cannot %s s3://%s (%s)", step, key, strerror(e));
    return -1;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds the files below folder dir (key so far: rel) to keys. */
static int walk(const char *dir, const char *rel, const char *prefix, json_t *keys, char *msg,
                size_t msg_cap)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        snprintf(msg, msg_cap, "cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        char path[S3_PATH_MAX], key[S3_PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= sizeof path ||
            (size_t)snprintf(key, sizeof key, "%s%s", rel, de->d_name) >= sizeof key)
            continue;
        /* A link to a file is its object; a link to a folder is not followed (no loops). */
        struct stat st;
        if (lstat(path, &st)) continue;
        if (S_ISLNK(st.st_mode) && (stat(path, &st) || S_ISDIR(st.st_mode))) continue;
        if (S_ISDIR(st.st_mode)) {
            size_t n = strlen(key);
            key[n] = '/';
            key[n + 1] = '\0';
            /* A folder holds no key of the prefix unless one starts the other. */
            size_t pl = prefix ? strlen(prefix) : 0, kl = n + 1;
            if (pl && strncmp(key, prefix, kl < pl ? kl : pl) != 0) continue;
            rc = walk(path, key, prefix, keys, msg, msg_cap);
        } else if (S_ISREG(st.st_mode) && (!prefix || strncmp(key, prefix, strlen(prefix)) == 0)) {
            json_array_append_new(keys, json_string(key));
        }
    }
    closedir(d);
    return rc;
}

int s3_list(const char *bucket_path, const char *prefix, json_t **keys, char *msg, size_t msg_cap)
{
    json_t *found = json_array();
    if (walk(bucket_path, "", prefix, found, msg, msg_cap)) {
        json_decref(found);
        return -1;
    }
    size_t n = json_array_size(found);
    const char **names = malloc((n ? n : 1) * sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = json_string_value(json_array_get(found, i));
    qsort(names, n, sizeof *names, by_string);
    *keys = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(*keys, json_string(names[i]));
    free(names);
    json_decref(found);
    return 0;
}

int s3_get(const char *bucket_path, const char *key, buf *out, char *msg, size_t msg_cap)
{
    char path[S3_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", bucket_path, key);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(msg, msg_cap, "cannot read s3 object %s: %s", key, strerror(errno));
        return -1;
    }
    char chunk[65536];
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        rc = buf_append(out, chunk, n);
    if (rc == 0 && ferror(f)) rc = -1;
    fclose(f);
    if (rc) snprintf(msg, msg_cap, "cannot read s3 object %s", key);
    return rc;
}

void s3_format(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
}

void s3_md5(const void *data, size_t len, unsigned char digest[16])
{
    unsigned int n = 16;
    EVP_Digest(data, len, digest, &n, EVP_md5(), NULL);
}

void s3_hex(const unsigned char digest[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

void s3_base64(const unsigned char digest[16], char out[25])
{
    EVP_EncodeBlock((unsigned char *)out, digest, 16);
}
