/* cql_auth.c — the CQL listener's roles: the credentials file and SASL PLAIN tokens.
 *
 * The file's format is in cql.h; a token is judged as Cassandra's PasswordAuthenticator
 * judges it, with its messages. Passwords are compared in constant time. No hashing, no
 * role hierarchy, no permissions: a role that authenticates may run every statement. */
#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cql.h"
#include "util/readfile.h"

#define MAX_CREDENTIALS_FILE ((size_t)1 << 20)

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p == NULL) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void cql_credentials_free(cql_credentials *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->roles[i].user);
        if (c->roles[i].password) {
            OPENSSL_cleanse(c->roles[i].password, strlen(c->roles[i].password));
            free(c->roles[i].password);
        }
    }
    free(c->roles);
    c->roles = NULL;
    c->n = 0;
}

static int fail(cql_credentials *out, char *errbuf, size_t errlen, const char *name, int line,
                const char *what)
{
    snprintf(errbuf, errlen, "%s: line %d: %s", name, line, what);
    cql_credentials_free(out);
    return -1;
}

int cql_credentials_parse(cql_credentials *out, const char *text, size_t len, const char *name,
                          char *errbuf, size_t errlen)
{
    out->roles = NULL;
    out->n = 0;
    size_t cap = 0;
    int line = 0;
    for (size_t at = 0; at < len;) {
        const char *p = text + at;
        const char *nl = memchr(p, '\n', len - at);
        size_t n = nl ? (size_t)(nl - p) : len - at;
        at += n + (nl != NULL);
        line++;
        if (n && p[n - 1] == '\r') n--;
        size_t lead = 0;
        while (lead < n && (p[lead] == ' ' || p[lead] == '\t'))
            lead++;
        if (lead == n || p[lead] == '#') continue;
        if (memchr(p, '\0', n)) return fail(out, errbuf, errlen, name, line, "holds a NUL byte");
        const char *colon = memchr(p, ':', n);
        if (colon == NULL)
            return fail(out, errbuf, errlen, name, line, "expected username:password");
        size_t ulen = (size_t)(colon - p);
        size_t plen = n - ulen - 1;
        if (ulen == 0) return fail(out, errbuf, errlen, name, line, "the username is empty");
        if (plen == 0) return fail(out, errbuf, errlen, name, line, "the password is empty");
        for (size_t i = 0; i < out->n; i++)
            if (strlen(out->roles[i].user) == ulen && memcmp(out->roles[i].user, p, ulen) == 0)
                return fail(out, errbuf, errlen, name, line, "the username is given twice");
        if (out->n == cap) {
            size_t ncap = cap ? 2 * cap : 8;
            cql_role *r = realloc(out->roles, ncap * sizeof *r);
            if (r == NULL) return fail(out, errbuf, errlen, name, line, "out of memory");
            out->roles = r;
            cap = ncap;
        }
        cql_role *r = &out->roles[out->n];
        r->user = dup_n(p, ulen);
        r->password = dup_n(colon + 1, plen);
        out->n++;
        if (r->user == NULL || r->password == NULL)
            return fail(out, errbuf, errlen, name, line, "out of memory");
    }
    if (out->n == 0) {
        snprintf(errbuf, errlen, "%s: no username:password line", name);
        return -1;
    }
    return 0;
}

int cql_credentials_load(cql_credentials *out, const char *path, char *errbuf, size_t errlen)
{
    out->roles = NULL;
    out->n = 0;
    char *text;
    size_t len;
    if (readfile_path(path, MAX_CREDENTIALS_FILE, &text, &len) != 0) {
        if (errno == EFBIG)
            snprintf(errbuf, errlen, "%s is larger than %zu bytes", path, MAX_CREDENTIALS_FILE);
        else
            snprintf(errbuf, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = cql_credentials_parse(out, text, len, path, errbuf, errlen);
    readfile_free_secret(text, len);
    return rc;
}

int cql_credentials_check(const cql_credentials *c, const void *token, int32_t len, char *user,
                          size_t userlen, char *msg, size_t msglen)
{
    const unsigned char *t = token;
    /* Read from the end: the password after the last NUL, the user before it. */
    const unsigned char *pass = NULL, *name = NULL;
    size_t pass_len = 0, name_len = 0;
    size_t end = len > 0 ? (size_t)len : 0;
    for (size_t i = end; t && i-- > 0;) {
        if (t[i] != '\0') continue;
        if (pass == NULL) {
            pass = t + i + 1;
            pass_len = end - i - 1;
        } else if (name == NULL) {
            name = t + i + 1;
            name_len = end - i - 1;
        } else {
            snprintf(msg, msglen,
                     "Credential format error: username or password is empty or "
                     "contains NUL(\\0) character");
            return -1;
        }
        end = i;
    }
    if (pass == NULL || pass_len == 0) {
        snprintf(msg, msglen, "Password must not be null");
        return -1;
    }
    if (name == NULL || name_len == 0) {
        snprintf(msg, msglen, "Authentication ID must not be null");
        return -1;
    }
    for (size_t i = 0; i < c->n; i++) {
        const cql_role *r = &c->roles[i];
        if (strlen(r->user) != name_len || memcmp(r->user, name, name_len) != 0) continue;
        size_t plen = strlen(r->password);
        if (plen == pass_len && CRYPTO_memcmp(r->password, pass, plen) == 0) {
            snprintf(user, userlen, "%s", r->user);
            return 0;
        }
        break;
    }
    snprintf(msg, msglen, "Provided username %.*s and/or password are incorrect",
             (int)(name_len > 200 ? 200 : name_len), (const char *)name);
    return -1;
}
