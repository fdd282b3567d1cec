/* client.c — the DynamoDB HTTP client of client.h: credentials from the environment or
 * ~/.aws/credentials, one libcurl handle per client, responses read into a capped buffer
 * and parsed, DynamoDB's error documents turned into qr_err. No retries: callers decide.
 * libcurl is loaded (dlopen) by the first client, not linked: a process that never calls
 * out, as `quarry serve`, does not map it and the two dozen libraries it needs. */
#include "checker/client.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#define MAX_RESPONSE ((size_t)4 << 20)

/* The libcurl functions the client calls, found in libcurl.so.4 by client_init. */
static struct {
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_failure[300]; /* why libcurl could not be loaded, or empty */

/* Object pointers and function pointers share a representation on every POSIX system;
 * dlsym's result is converted through memcpy, as ISO C has no cast between them. */
static int find(void *lib, const char *name, void *fn, size_t size)
{
    void *sym = dlsym(lib, name);
    if (sym == NULL) {
        snprintf(curl_failure, sizeof curl_failure, "libcurl.so.4 has no %s", name);
        return -1;
    }
    memcpy(fn, &sym, size);
    return 0;
}

static void load_curl(void)
{
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(curl_failure, sizeof curl_failure, "cannot load libcurl: %s", dlerror());
        return;
    }
    CURLcode (*global_init)(long) = NULL;
    if (find(lib, "curl_global_init", &global_init, sizeof global_init) ||
        find(lib, "curl_easy_init", &curl.easy_init, sizeof curl.easy_init) ||
        find(lib, "curl_easy_cleanup", &curl.easy_cleanup, sizeof curl.easy_cleanup) ||
        find(lib, "curl_easy_reset", &curl.easy_reset, sizeof curl.easy_reset) ||
        find(lib, "curl_easy_setopt", &curl.easy_setopt, sizeof curl.easy_setopt) ||
        find(lib, "curl_easy_perform", &curl.easy_perform, sizeof curl.easy_perform) ||
        find(lib, "curl_easy_getinfo", &curl.easy_getinfo, sizeof curl.easy_getinfo) ||
        find(lib, "curl_easy_strerror", &curl.easy_strerror, sizeof curl.easy_strerror) ||
        find(lib, "curl_slist_append", &curl.slist_append, sizeof curl.slist_append) ||
        find(lib, "curl_slist_free_all", &curl.slist_free_all, sizeof curl.slist_free_all))
        return;
    if (global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        snprintf(curl_failure, sizeof curl_failure, "libcurl could not start");
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    buf *b = ud;
    return buf_append(b, p, size * n) ? 0 : size * n;
}

/* Reads key = value from the [default] profile of ~/.aws/credentials. */
static int profile_value(const char *key, char *out, size_t size)
{
    const char *home = getenv("HOME");
    if (home == NULL) return -1;
    char path[1024];
    snprintf(path, sizeof path, "%s/.aws/credentials", home);
    FILE *f = fopen(path, "r");
    if (f == NULL) return -1;
    char line[1024];
    int in_default = 0, found = -1;
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        s[strcspn(s, "\r\n")] = '\0';
        if (*s == '[') {
            in_default = strncmp(s, "[default]", 9) == 0;
            continue;
        }
        if (!in_default) continue;
        size_t kl = strlen(key);
        if (strncmp(s, key, kl) != 0) continue;
        char *v = s + kl;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v != '=') continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vl = strlen(v);
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
            v[--vl] = '\0';
        snprintf(out, size, "%s", v);
        found = 0;
    }
    fclose(f);
    return found;
}

int client_init(client *c, const char *endpoint, qr_err *err)
{
    memset(c, 0, sizeof *c);
    c->endpoint = endpoint;
    const char *region = getenv("AWS_REGION");
    if (region == NULL || *region == '\0') region = getenv("AWS_DEFAULT_REGION");
    snprintf(c->region, sizeof c->region, "%s", region && *region ? region : "us-east-1");
    char key[256] = "", secret[256] = "";
    const char *ek = getenv("AWS_ACCESS_KEY_ID"), *es = getenv("AWS_SECRET_ACCESS_KEY"),
               *et = getenv("AWS_SESSION_TOKEN");
    if (ek && *ek && es && *es) {
        snprintf(key, sizeof key, "%s", ek);
        snprintf(secret, sizeof secret, "%s", es);
        if (et) snprintf(c->token, sizeof c->token, "%s", et);
    } else if (profile_value("aws_access_key_id", key, sizeof key) ||
               profile_value("aws_secret_access_key", secret, sizeof secret)) {
        return err_validation(
            err, "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a "
                 "[default] profile "
                 "in ~/.aws/credentials (any values work for quarry and DynamoDB Local)");
    } else {
        profile_value("aws_session_token", c->token, sizeof c->token);
    }
    snprintf(c->userpwd, sizeof c->userpwd, "%s:%s", key, secret);
    pthread_once(&curl_once, load_curl);
    if (curl_failure[0]) return err_set(err, QR_E_INTERNAL, "%s", curl_failure);
    c->curl = curl.easy_init();
    if (c->curl == NULL) return err_set(err, QR_E_INTERNAL, "cannot start libcurl");
    return 0;
}

void client_free(client *c)
{
    if (c->curl) curl.easy_cleanup(c->curl);
}

int client_call(client *c, const char *op, json_t *body, json_t **out, qr_err *err)
{
    *out = NULL;
    char *text = json_dumps(body, JSON_COMPACT);
    if (text == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    char target[128], sigv4[128], tokenh[2100];
    /* The Streams API has its own target prefix (and, on AWS, its own endpoint). */
    static const char *const stream_ops[] = {"ListStreams", "DescribeStream", "GetShardIterator",
                                             "GetRecords", NULL};
    const char *api = "DynamoDB_20120810";
    for (int i = 0; stream_ops[i]; i++)
        if (strcmp(op, stream_ops[i]) == 0) api = "DynamoDBStreams_20120810";
    snprintf(target, sizeof target, "X-Amz-Target: %s.%s", api, op);
    snprintf(sigv4, sizeof sigv4, "aws:amz:%s:dynamodb", c->region);
    struct curl_slist *h = curl.slist_append(NULL, "Content-Type: application/x-amz-json-1.0");
    h = curl.slist_append(h, target);
    if (c->token[0]) {
        snprintf(tokenh, sizeof tokenh, "X-Amz-Security-Token: %s", c->token);
        h = curl.slist_append(h, tokenh);
    }
    buf resp;
    buf_init(&resp, MAX_RESPONSE);
    CURL *k = c->curl;
    curl.easy_reset(k);
    curl.easy_setopt(k, CURLOPT_URL, c->endpoint);
    curl.easy_setopt(k, CURLOPT_POSTFIELDS, text);
    curl.easy_setopt(k, CURLOPT_HTTPHEADER, h);
    curl.easy_setopt(k, CURLOPT_AWS_SIGV4, sigv4);
    curl.easy_setopt(k, CURLOPT_USERPWD, c->userpwd);
    curl.easy_setopt(k, CURLOPT_WRITEFUNCTION, on_data);
    curl.easy_setopt(k, CURLOPT_WRITEDATA, &resp);
    curl.easy_setopt(k, CURLOPT_TIMEOUT, 60L);
    curl.easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
    CURLcode cc = curl.easy_perform(k);
    long status = 0;
    curl.easy_getinfo(k, CURLINFO_RESPONSE_CODE, &status);
    curl.slist_free_all(h);
    free(text);
    int rc = -1;
    if (cc != CURLE_OK) {
        err_set(err, QR_E_INTERNAL, "%s %s: %s", op, c->endpoint, curl.easy_strerror(cc));
        goto done;
    }
    json_error_t je;
    json_t *j = resp.len ? json_loadb(resp.data, resp.len, 0, &je) : json_object();
    if (status != 200) {
        const char *type = j ? json_string_value(json_object_get(j, "__type")) : NULL;
        const char *msg = j ? json_string_value(json_object_get(j, "message")) : NULL;
        if (msg == NULL && j) msg = json_string_value(json_object_get(j, "Message"));
        const char *hash = type ? strrchr(type, '#') : NULL;
        err_set(err, err_type_named(type), "%s: HTTP %ld %s: %s", op, status,
                hash   ? hash + 1
                : type ? type
                       : "",
                msg         ? msg
                : resp.data ? resp.data
                            : "");
        json_decref(j);
        goto done;
    }
    if (j == NULL) {
        err_set(err, QR_E_INTERNAL, "%s: response is not JSON", op);
        goto done;
    }
    *out = j;
    rc = 0;
done:
    buf_free(&resp);
    return rc;
}
