/* client.c — the DynamoDB HTTP client of client.h: credentials from the environment or
 * ~/.aws/credentials, one libcurl handle per client, responses read into a capped buffer
 * and parsed, DynamoDB's error documents turned into qr_err. No retries: callers decide. */
#include "checker/client.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#define MAX_RESPONSE ((size_t)4 << 20)

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
    c->curl = curl_easy_init();
    if (c->curl == NULL) return err_set(err, QR_E_INTERNAL, "cannot start libcurl");
    return 0;
}

void client_free(client *c)
{
    if (c->curl) curl_easy_cleanup(c->curl);
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
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-amz-json-1.0");
    h = curl_slist_append(h, target);
    if (c->token[0]) {
        snprintf(tokenh, sizeof tokenh, "X-Amz-Security-Token: %s", c->token);
        h = curl_slist_append(h, tokenh);
    }
    buf resp;
    buf_init(&resp, MAX_RESPONSE);
    CURL *k = c->curl;
    curl_easy_reset(k);
    curl_easy_setopt(k, CURLOPT_URL, c->endpoint);
    curl_easy_setopt(k, CURLOPT_POSTFIELDS, text);
    curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(k, CURLOPT_AWS_SIGV4, sigv4);
    curl_easy_setopt(k, CURLOPT_USERPWD, c->userpwd);
    curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(k, CURLOPT_WRITEDATA, &resp);
    curl_easy_setopt(k, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
    CURLcode cc = curl_easy_perform(k);
    long status = 0;
    curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    free(text);
    int rc = -1;
    if (cc != CURLE_OK) {
        err_set(err, QR_E_INTERNAL, "%s %s: %s", op, c->endpoint, curl_easy_strerror(cc));
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
