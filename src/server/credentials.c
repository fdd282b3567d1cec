/* credentials.c — the keyring: access keys read from an AWS shared-credentials file.
 *
 * The file is the one the AWS CLI and SDKs read (~/.aws/credentials): [profile]
 * sections of "key = value" lines. Every profile with both aws_access_key_id and
 * aws_secret_access_key contributes a key, with its aws_session_token if it has one
 * (temporary credentials); other settings (region, ...) are ignored. This is not a
 * general INI parser: no interpolation, no inline comments. */
#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/sigv4.h"
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

static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s))
        (*s)++, (*n)--;
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* The profile being read: its name and the two values, until the next section. */
typedef struct pending {
    char *profile;
    char *id;
    char *secret;
    char *token;
    int line;
} pending;

static void pending_clear(pending *p)
{
    free(p->profile);
    free(p->id);
    free(p->secret);
    free(p->token);
    memset(p, 0, sizeof *p);
}

/* Moves a complete profile into the ring; an incomplete one is an error. */
static int flush(sigv4_keyring *kr, pending *p, const char *name, char *errbuf, size_t errlen)
{
    if (p->profile == NULL) return 0;
    if (p->id == NULL && p->secret == NULL && p->token == NULL) {
        pending_clear(p);
        return 0;
    }
    if (p->id == NULL || p->secret == NULL) {
        snprintf(errbuf, errlen, "%s: profile [%s] (line %d) has %s but no %s", name, p->profile,
                 p->line,
                 p->id       ? "aws_access_key_id"
                 : p->secret ? "aws_secret_access_key"
                             : "aws_session_token",
                 p->id ? "aws_secret_access_key" : "aws_access_key_id");
        return -1;
    }
    sigv4_key *k = realloc(kr->keys, (kr->n + 1) * sizeof *k);
    if (k == NULL) {
        snprintf(errbuf, errlen, "%s: out of memory", name);
        return -1;
    }
    kr->keys = k;
    kr->keys[kr->n].access_key = p->id;
    kr->keys[kr->n].secret = p->secret;
    kr->keys[kr->n].profile = p->profile;
    kr->keys[kr->n].session_token = p->token;
    kr->n++;
    memset(p, 0, sizeof *p);
    return 0;
}

int sigv4_keyring_parse(sigv4_keyring *kr, const char *text, size_t len, const char *name,
                        char *errbuf, size_t errlen)
{
    kr->keys = NULL;
    kr->n = 0;
    pending p = {0};
    int lineno = 0;
    int nested = 0; /* after "key =" with no value, indented lines belong to that key */
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        lineno++;
        const char *s = text + i;
        size_t n = j - i;
        int indented = n > 0 && (s[0] == ' ' || s[0] == '\t');
        i = j + 1;
        trim(&s, &n);
        if (n == 0 || s[0] == '#' || s[0] == ';') continue;
        if (indented && nested) continue;
        nested = 0;
        if (memchr(s, '\0', n)) {
            snprintf(errbuf, errlen, "%s: line %d: unexpected NUL byte", name, lineno);
            goto fail;
        }
        if (s[0] == '[') {
            if (s[n - 1] != ']') {
                snprintf(errbuf, errlen, "%s: line %d: a section header must end with ']'", name,
                         lineno);
                goto fail;
            }
            if (flush(kr, &p, name, errbuf, errlen)) goto fail;
            const char *sec = s + 1;
            size_t sn = n - 2;
            trim(&sec, &sn);
            if (sn > 8 && strncmp(sec, "profile", 7) == 0 && isspace((unsigned char)sec[7])) {
                sec += 8;
                sn -= 8;
                trim(&sec, &sn);
            }
            if (sn == 0) {
                snprintf(errbuf, errlen, "%s: line %d: empty profile name", name, lineno);
                goto fail;
            }
            p.profile = dup_n(sec, sn);
            p.line = lineno;
            if (p.profile == NULL) goto oom;
            continue;
        }
        const char *eq = memchr(s, '=', n);
        if (eq == NULL) {
            snprintf(errbuf, errlen, "%s: line %d: expected 'key = value' or '[profile]'", name,
                     lineno);
            goto fail;
        }
        if (p.profile == NULL) {
            snprintf(errbuf, errlen, "%s: line %d: setting outside of any [profile] section", name,
                     lineno);
            goto fail;
        }
        const char *k = s, *v = eq + 1;
        size_t kn = (size_t)(eq - s), vn = n - kn - 1;
        trim(&k, &kn);
        trim(&v, &vn);
        if (vn == 0) nested = 1;
        char **slot = NULL;
        if (kn == 17 && strncasecmp(k, "aws_access_key_id", 17) == 0)
            slot = &p.id;
        else if (kn == 21 && strncasecmp(k, "aws_secret_access_key", 21) == 0)
            slot = &p.secret;
        else if (kn == 17 && strncasecmp(k, "aws_session_token", 17) == 0)
            slot = &p.token;
        if (slot == NULL) continue;
        if (vn == 0) {
            snprintf(errbuf, errlen, "%s: line %d: %.*s is empty", name, lineno, (int)kn, k);
            goto fail;
        }
        free(*slot);
        *slot = dup_n(v, vn);
        if (*slot == NULL) goto oom;
    }
    if (flush(kr, &p, name, errbuf, errlen)) goto fail;
    if (kr->n == 0) {
        snprintf(errbuf, errlen,
                 "%s: no profile with both aws_access_key_id and aws_secret_access_key", name);
        goto fail;
    }
    return 0;
oom:
    snprintf(errbuf, errlen, "%s: out of memory", name);
fail:
    pending_clear(&p);
    sigv4_keyring_free(kr);
    return -1;
}

int sigv4_keyring_load(sigv4_keyring *kr, const char *path, char *errbuf, size_t errlen)
{
    kr->keys = NULL;
    kr->n = 0;
    char *text;
    size_t n;
    if (readfile_path(path, MAX_CREDENTIALS_FILE, &text, &n) != 0) {
        if (errno == EFBIG)
            snprintf(errbuf, errlen, "%s: larger than %zu bytes", path, MAX_CREDENTIALS_FILE);
        else
            snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = sigv4_keyring_parse(kr, text, n, path, errbuf, errlen);
    readfile_free_secret(text, n);
    return rc;
}

const sigv4_key *sigv4_keyring_key(const sigv4_keyring *kr, const char *access_key, size_t len)
{
    if (kr == NULL) return NULL;
    for (size_t i = 0; i < kr->n; i++)
        if (strlen(kr->keys[i].access_key) == len &&
            memcmp(kr->keys[i].access_key, access_key, len) == 0)
            return &kr->keys[i];
    return NULL;
}

const char *sigv4_keyring_find(const sigv4_keyring *kr, const char *access_key, size_t len)
{
    const sigv4_key *k = sigv4_keyring_key(kr, access_key, len);
    return k ? k->secret : NULL;
}

void sigv4_keyring_free(sigv4_keyring *kr)
{
    for (size_t i = 0; i < kr->n; i++) {
        free(kr->keys[i].access_key);
        if (kr->keys[i].secret) OPENSSL_cleanse(kr->keys[i].secret, strlen(kr->keys[i].secret));
        free(kr->keys[i].secret);
        if (kr->keys[i].session_token)
            OPENSSL_cleanse(kr->keys[i].session_token, strlen(kr->keys[i].session_token));
        free(kr->keys[i].session_token);
        free(kr->keys[i].profile);
    }
    free(kr->keys);
    kr->keys = NULL;
    kr->n = 0;
}
