/* sigv4.c — AWS Signature Version 4 verification (see sigv4.h), following AWS's published
 * algorithm. SHA-256 and HMAC are nettle's; the signing key is cached per thread. */
#include "server/sigv4.h"

#include <ctype.h>
#include <nettle/hmac.h>
#include <nettle/sha2.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALGORITHM "AWS4-HMAC-SHA256"
#define TERMINATOR "aws4_request"

/* ---- hashing ----
 *
 * nettle rather than libcrypto: libcrypto 3's first fetch of an algorithm loads its
 * configuration and registers every algorithm of its providers, which grows an idle
 * server by about 2 MB at its first signed request; nettle's functions are plain code
 * over caller-held state (with the CPU's SHA extensions where it has them). */

static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static pthread_key_t ctx_key;
static int ctx_key_ok;

#define SCRATCH_BUFS 7
#define SCRATCH_KEEP (16 << 10) /* a working buffer grown past this is not kept */

/* Each thread keeps an HMAC state keyed with the last signing key (whose padded key
 * blocks are then hashed once, not per request) and sigv4_verify's working buffers.
 * Both are freed when the thread ends. */
typedef struct crypto_ctx {
    struct hmac_sha256_ctx keyed;
    int keyed_ready; /* keyed holds keyed_key */
    unsigned char keyed_key[32];
    buf scratch[SCRATCH_BUFS];
} crypto_ctx;

static void ctx_free(void *p)
{
    crypto_ctx *c = p;
    if (c == NULL) return;
    OPENSSL_cleanse(&c->keyed, sizeof c->keyed);
    OPENSSL_cleanse(c->keyed_key, sizeof c->keyed_key);
    for (int i = 0; i < SCRATCH_BUFS; i++)
        buf_free(&c->scratch[i]);
    free(c);
}

static void crypto_init(void)
{
    ctx_key_ok = pthread_key_create(&ctx_key, ctx_free) == 0;
}

/* This thread's state, or NULL (then callers use one-off state). */
static crypto_ctx *thread_ctx(void)
{
    pthread_once(&crypto_once, crypto_init);
    if (!ctx_key_ok) return NULL;
    crypto_ctx *c = pthread_getspecific(ctx_key);
    if (c) return c;
    c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    for (int i = 0; i < SCRATCH_BUFS; i++)
        buf_init(&c->scratch[i], 0);
    if (pthread_setspecific(ctx_key, c) != 0) {
        ctx_free(c);
        return NULL;
    }
    return c;
}

static void mac_sha256(const void *key, size_t klen, const void *data, size_t n,
                       unsigned char out[32])
{
    struct hmac_sha256_ctx c;
    hmac_sha256_set_key(&c, klen, key);
    hmac_sha256_update(&c, n, data);
    hmac_sha256_digest(&c, SHA256_DIGEST_SIZE, out);
    OPENSSL_cleanse(&c, sizeof c);
}

/* HMAC-SHA256 with a 32-byte key through the thread's keyed state: when the key is the
 * one it already holds, the state's hashed pads are used again (nettle's digest leaves
 * the state ready for the next message under the same key). */
static void mac_sha256_key32(const unsigned char key[32], const void *data, size_t n,
                             unsigned char out[32])
{
    crypto_ctx *tc = thread_ctx();
    if (tc == NULL) {
        mac_sha256(key, 32, data, n, out);
        return;
    }
    if (!tc->keyed_ready || CRYPTO_memcmp(tc->keyed_key, key, 32) != 0) {
        hmac_sha256_set_key(&tc->keyed, 32, key);
        memcpy(tc->keyed_key, key, 32);
        tc->keyed_ready = 1;
    }
    hmac_sha256_update(&tc->keyed, n, data);
    hmac_sha256_digest(&tc->keyed, SHA256_DIGEST_SIZE, out);
}

static void to_hex(const unsigned char *p, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[p[i] >> 4];
        hex[2 * i + 1] = digits[p[i] & 15];
    }
    hex[2 * n] = '\0';
}

void sigv4_sha256_hex(const void *data, size_t len, char hex[65])
{
    struct sha256_ctx c;
    unsigned char md[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    sha256_update(&c, len, data);
    sha256_digest(&c, sizeof md, md);
    to_hex(md, sizeof md, hex);
}

/* The signing key of the last secret/date/region/service this thread used. It changes
 * once a day per client, so caching it saves four HMACs on almost every request. */
typedef struct key_cache {
    int valid;
    char secret[128];
    char date[9];
    char region[64];
    char service[64];
    unsigned char key[32];
} key_cache;

static __thread key_cache tl_keys;

static int fits(const char *s, size_t cap)
{
    return strlen(s) < cap;
}

static int signing_key(const char *secret, const char *date, const char *region,
                       const char *service, unsigned char key[32])
{
    key_cache *c = &tl_keys;
    int cacheable = fits(secret, sizeof c->secret) && fits(date, sizeof c->date) &&
                    fits(region, sizeof c->region) && fits(service, sizeof c->service);
    if (cacheable && c->valid && strcmp(c->secret, secret) == 0 && strcmp(c->date, date) == 0 &&
        strcmp(c->region, region) == 0 && strcmp(c->service, service) == 0) {
        memcpy(key, c->key, 32);
        return 0;
    }
    buf k;
    buf_init(&k, 0);
    int rc = -1;
    unsigned char a[32], b[32];
    if (buf_puts(&k, "AWS4") || buf_puts(&k, secret)) goto done;
    mac_sha256(k.data, k.len, date, strlen(date), a);
    mac_sha256(a, 32, region, strlen(region), b);
    mac_sha256(b, 32, service, strlen(service), a);
    mac_sha256(a, 32, TERMINATOR, strlen(TERMINATOR), key);
    rc = 0;
    if (cacheable) {
        strcpy(c->secret, secret);
        strcpy(c->date, date);
        strcpy(c->region, region);
        strcpy(c->service, service);
        memcpy(c->key, key, 32);
        c->valid = 1;
    }
done:
    OPENSSL_cleanse(a, sizeof a);
    OPENSSL_cleanse(b, sizeof b);
    if (k.data) OPENSSL_cleanse(k.data, k.len);
    buf_free(&k);
    return rc;
}

int sigv4_sign(const char *secret, const char *date, const char *region, const char *service,
               const char *string_to_sign, size_t sts_len, char hex[65])
{
    unsigned char key[32], sig[32];
    if (signing_key(secret, date, region, service, key)) return -1;
    mac_sha256_key32(key, string_to_sign, sts_len, sig);
    OPENSSL_cleanse(key, sizeof key);
    to_hex(sig, 32, hex);
    return 0;
}

/* ---- canonical request ---- */

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '~';
}

/* RFC 3986 encoding as SigV4 wants it: unreserved bytes stay, others become %XX. */
static int uri_encode(buf *out, const char *s, size_t n, int keep_slash)
{
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && (unreserved((unsigned char)s[j]) || (keep_slash && s[j] == '/')))
            j++;
        if (j > i && buf_append(out, s + i, j - i)) return -1;
        if (j == n) break;
        unsigned char c = (unsigned char)s[j];
        char e[3] = {'%', digits[c >> 4], digits[c & 15]};
        if (buf_append(out, e, 3)) return -1;
        i = j + 1;
    }
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes %XX escapes (a malformed escape is kept as it is). */
static int uri_decode(buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 &&
            (l = hexval(s[i + 2])) >= 0) {
            if (buf_putc(out, (uint8_t)(h * 16 + l))) return -1;
            i += 2;
        } else if (buf_putc(out, (uint8_t)s[i])) {
            return -1;
        }
    }
    return 0;
}

/* The path with empty and "." segments dropped and ".." applied, as the AWS SDKs
 * normalise it, then URI-encoded (so a '%' already in the path is encoded again). */
static int canonical_path(buf *out, const char *path)
{
    size_t n = strlen(path);
    if (n == 0) return buf_putc(out, '/');
    /* Segment boundaries of the output, to undo on "..". */
    size_t nseg = 0, cap = 16;
    size_t *starts = malloc(cap * sizeof *starts);
    if (starts == NULL) return -1;
    buf tmp;
    buf_init(&tmp, 0);
    int rc = -1;
    if (path[0] == '/' && buf_putc(&tmp, '/')) goto done;
    size_t base = tmp.len;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && path[j] != '/')
            j++;
        size_t len = j - i;
        if (len == 0 || (len == 1 && path[i] == '.')) {
            /* skip */
        } else if (len == 2 && path[i] == '.' && path[i + 1] == '.') {
            if (nseg > 0) {
                tmp.len = starts[--nseg];
                tmp.data[tmp.len] = '\0';
            }
        } else {
            if (nseg == cap) {
                size_t *p = realloc(starts, 2 * cap * sizeof *starts);
                if (p == NULL) goto done;
                starts = p;
                cap *= 2;
            }
            starts[nseg++] = tmp.len;
            if (tmp.len > base && buf_putc(&tmp, '/')) goto done;
            if (buf_append(&tmp, path + i, len)) goto done;
        }
        i = j + 1;
    }
    if (path[n - 1] == '/' && nseg > 0 && buf_putc(&tmp, '/')) goto done;
    if (tmp.len == 0 && buf_putc(&tmp, '/')) goto done;
    rc = uri_encode(out, tmp.data, tmp.len, 1);
done:
    free(starts);
    buf_free(&tmp);
    return rc;
}

typedef struct qpair {
    char *name;
    char *value;
} qpair;

static int qpair_cmp(const void *a, const void *b)
{
    const qpair *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

/* name=value pairs, each decoded then strictly re-encoded, sorted, joined by '&'. */
static int canonical_query(buf *out, const sigv4_pair *q, size_t n)
{
    if (n == 0) return 0;
    qpair *pairs = calloc(n, sizeof *pairs);
    if (pairs == NULL) return -1;
    size_t m = 0;
    int rc = -1;
    buf dec, enc;
    buf_init(&dec, 0);
    buf_init(&enc, 0);
    for (size_t i = 0; i < n; i++) {
        if (q[i].name_len == 0 && q[i].value == NULL) continue;
        buf_reset(&dec);
        buf_reset(&enc);
        if (uri_decode(&dec, q[i].name, q[i].name_len) || uri_encode(&enc, dec.data, dec.len, 0))
            goto done;
        pairs[m].name = buf_detach(&enc, NULL);
        buf_reset(&dec);
        if (q[i].value && uri_decode(&dec, q[i].value, q[i].value_len)) goto done;
        if (uri_encode(&enc, dec.data ? dec.data : "", dec.len, 0)) goto done;
        pairs[m].value = buf_detach(&enc, NULL);
        m++;
        if (pairs[m - 1].name == NULL || pairs[m - 1].value == NULL) goto done;
    }
    qsort(pairs, m, sizeof *pairs, qpair_cmp);
    for (size_t i = 0; i < m; i++) {
        if (i && buf_putc(out, '&')) goto done;
        if (buf_puts(out, pairs[i].name) || buf_putc(out, '=') || buf_puts(out, pairs[i].value))
            goto done;
    }
    rc = 0;
done:
    for (size_t i = 0; i < m; i++) {
        free(pairs[i].name);
        free(pairs[i].value);
    }
    free(pairs);
    buf_free(&dec);
    buf_free(&enc);
    return rc;
}

static int name_eq(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && strncasecmp(a, b, an) == 0;
}

/* Whether n bytes at s hold a tab or two spaces in a row. */
static int collapsible(const char *s, size_t n)
{
    if (memchr(s, '\t', n)) return 1;
    for (const char *p = s, *end = s + n;
         (p = memchr(p, ' ', (size_t)(end - p))) != NULL && p + 1 < end; p++)
        if (p[1] == ' ') return 1;
    return 0;
}

/* Appends a header value trimmed, with runs of spaces and tabs collapsed to one space. */
static int put_trimmed(buf *out, const char *v, size_t n)
{
    size_t i = 0;
    while (i < n && (v[i] == ' ' || v[i] == '\t'))
        i++;
    while (n > i && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    /* Usually there is nothing inside to collapse: then one copy. */
    if (!collapsible(v + i, n - i)) return buf_append(out, v + i, n - i);
    while (i < n) {
        size_t j = i;
        while (j < n && v[j] != ' ' && v[j] != '\t')
            j++;
        if (buf_append(out, v + i, j - i)) return -1;
        if (j == n) break;
        while (v[j] == ' ' || v[j] == '\t')
            j++; /* the value is trimmed: a word follows */
        if (buf_putc(out, ' ')) return -1;
        i = j;
    }
    return 0;
}

/* Gives an empty buffer room for n bytes at once, sparing the doublings of small appends. */
static void reserve(buf *b, size_t n)
{
    if (b->data != NULL || n > b->max) return;
    b->data = malloc(n);
    if (b->data == NULL) return;
    b->cap = n;
    b->data[0] = '\0';
}

/* The canonical request: method, normalised and URI-encoded path, sorted query, signed headers
 * with trimmed values, SHA-256 of the body. */
int sigv4_canonical_request(const sigv4_request *req, const char *signed_headers, size_t sh_len,
                            const char *payload_hash_hex, buf *out)
{
    if (buf_puts(out, req->method) || buf_putc(out, '\n')) return -1;
    if (canonical_path(out, req->path) || buf_putc(out, '\n')) return -1;
    if (canonical_query(out, req->query, req->n_query) || buf_putc(out, '\n')) return -1;
    for (size_t i = 0; i < sh_len;) {
        size_t j = i;
        while (j < sh_len && signed_headers[j] != ';')
            j++;
        if (j > i) {
            if (buf_reserve(out, j - i + 1)) return -1;
            char *w = out->data + out->len;
            for (size_t k = i; k < j; k++)
                *w++ = (char)tolower((unsigned char)signed_headers[k]);
            *w++ = ':';
            out->len += j - i + 1;
            out->data[out->len] = '\0';
            int first = 1;
            for (size_t h = 0; h < req->n_headers; h++) {
                const sigv4_pair *hd = &req->headers[h];
                if (!name_eq(hd->name, hd->name_len, signed_headers + i, j - i)) continue;
                if (!first && buf_putc(out, ',')) return -1;
                first = 0;
                if (put_trimmed(out, hd->value ? hd->value : "", hd->value ? hd->value_len : 0))
                    return -1;
            }
            if (buf_putc(out, '\n')) return -1;
        }
        i = j + 1;
    }
    if (buf_putc(out, '\n')) return -1;
    if (buf_append(out, signed_headers, sh_len) || buf_putc(out, '\n')) return -1;
    return buf_puts(out, payload_hash_hex);
}

/* ---- the Authorization header ---- */

int sigv4_credential_region(const char *authorization, size_t len, char *out, size_t cap)
{
    static const char key[] = "Credential=";
    if (cap == 0) return -1;
    out[0] = '\0';
    const char *end = authorization + len, *p = authorization;
    while ((size_t)(end - p) >= sizeof key - 1 && memcmp(p, key, sizeof key - 1) != 0)
        p++;
    if ((size_t)(end - p) < sizeof key - 1) return -1;
    p += sizeof key - 1;
    for (int slash = 0; slash < 2; p++) { /* past key id and date */
        if (p == end || *p == ',' || *p == ' ') return -1;
        if (*p == '/') slash++;
    }
    size_t n = 0;
    while (p + n < end && p[n] != '/' && p[n] != ',' && p[n] != ' ')
        n++;
    if (n == 0 || p + n == end || p[n] != '/' || n >= cap) return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

int sigv4_presigned_region(const char *query, size_t len, char *out, size_t cap)
{
    static const char key[] = "X-Amz-Credential=";
    if (cap == 0) return -1;
    out[0] = '\0';
    for (size_t i = 0; i < len;) {
        size_t end = i;
        while (end < len && query[end] != '&')
            end++;
        if (end - i >= sizeof key - 1 && memcmp(query + i, key, sizeof key - 1) == 0) {
            buf b;
            buf_init(&b, 0);
            int rc = buf_puts(&b, "Credential=") ||
                             uri_decode(&b, query + i + sizeof key - 1, end - i - (sizeof key - 1))
                         ? -1
                         : sigv4_credential_region(b.data, b.len, out, cap);
            buf_free(&b);
            return rc;
        }
        i = end + 1;
    }
    return -1;
}

static const sigv4_pair *find_header(const sigv4_request *req, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < req->n_headers; i++)
        if (name_eq(req->headers[i].name, req->headers[i].name_len, name, n) &&
            req->headers[i].value)
            return &req->headers[i];
    return NULL;
}

/* Copies a header value, trimmed, as a C string (into b). */
static const char *header_string(const sigv4_pair *h, buf *b)
{
    buf_reset(b);
    if (h == NULL) return NULL;
    if (put_trimmed(b, h->value, h->value_len)) return NULL;
    if (b->data == NULL && buf_append(b, "", 0)) return NULL;
    return b->data;
}

typedef struct auth_params {
    char algorithm[64];
    const char *credential;     /* into the parsed copy */
    const char *signed_headers; /* into the parsed copy */
    const char *signature;      /* into the parsed copy */
    const char *no_equals;      /* the first component without '=', if any (parsed copy) */
    const char *repeated;       /* the first parameter given twice, if any */
    const char *unknown;        /* the first parameter not one of the three, if any */
} auth_params;

/* Whether c starts a "Name=" component (letters, then '='). */
static int starts_component(const char *c)
{
    size_t n = 0;
    while ((c[n] >= 'A' && c[n] <= 'Z') || (c[n] >= 'a' && c[n] <= 'z'))
        n++;
    return n > 0 && c[n] == '=';
}

/* Splits "ALG Credential=…, SignedHeaders=…, Signature=…" as DynamoDB does: the first
 * word is the algorithm; the rest, with spaces removed, is split on ',' and '='. Spaces
 * alone also part two components ("Credential=… SignedHeaders=…"), which DynamoDB
 * reads too. A component without '=' is noted (DynamoDB refuses the header for it), and
 * so are a parameter given twice (the first is kept: a verifier that kept the last and
 * one that kept the first would disagree) and one not among the three. The values point
 * into work, which must outlive p. */
static int parse_authorization(const char *auth, auth_params *p, buf *work)
{
    memset(p, 0, sizeof *p);
    const char *sp = strchr(auth, ' ');
    size_t alen = sp ? (size_t)(sp - auth) : strlen(auth);
    if (alen >= sizeof p->algorithm) alen = sizeof p->algorithm - 1;
    memcpy(p->algorithm, auth, alen);
    p->algorithm[alen] = '\0';
    buf_reset(work);
    reserve(work, strlen(auth) + 2);
    for (const char *c = sp; c && *c;) {
        size_t n = strcspn(c, " ");
        if (n && buf_append(work, c, n)) return -1;
        c += n;
        while (*c == ' ')
            c++;
        char last = work->len ? work->data[work->len - 1] : ',';
        if (*c && last != ',' && last != '=' && starts_component(c) && buf_putc(work, ','))
            return -1;
    }
    if (buf_putc(work, '\0')) return -1; /* room for the terminator of the last field */
    char *s = work->data;
    while (s && *s) {
        char *comma = strchr(s, ',');
        if (comma) *comma = '\0';
        char *eq = strchr(s, '=');
        if (eq == NULL && *s && p->no_equals == NULL) p->no_equals = s;
        if (eq) {
            *eq = '\0';
            const char *v = eq + 1, **slot = NULL;
            if (strcmp(s, "Credential") == 0)
                slot = &p->credential;
            else if (strcmp(s, "SignedHeaders") == 0)
                slot = &p->signed_headers;
            else if (strcmp(s, "Signature") == 0)
                slot = &p->signature;
            else if (p->unknown == NULL)
                p->unknown = s;
            if (slot && *slot && p->repeated == NULL) p->repeated = s;
            if (slot && *slot == NULL) *slot = v;
        }
        s = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date, and back: plain arithmetic, so
 * that no per-request call takes glibc's time-zone lock as timegm and gmtime_r do. */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

static void civil_from_days(long long z, long long *y, unsigned *m, unsigned *d)
{
    z += 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (long long)yoe + era * 400 + (*m <= 2);
}

static int num(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* YYYYMMDD'T'HHMMSS'Z' */
static int parse_iso_basic(const char *s, time_t *t)
{
    if (strlen(s) != 16 || !digits(s, 8) || s[8] != 'T' || !digits(s + 9, 6) || s[15] != 'Z')
        return -1;
    int mon = num(s + 4, 2), day = num(s + 6, 2), hour = num(s + 9, 2), min = num(s + 11, 2),
        sec = num(s + 13, 2);
    if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) return -1;
    long long days = days_from_civil(num(s, 4), (unsigned)mon, (unsigned)day);
    *t = (time_t)(days * 86400 + hour * 3600 + min * 60 + sec);
    return 0;
}

/* RFC 1123, the form of the HTTP Date header: "Sun, 30 Aug 2015 12:36:00 GMT". */
static int parse_http_date(const char *s, time_t *t)
{
    struct tm tm = {0};
    const char *end = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (end == NULL || *end != '\0') return -1;
    *t = timegm(&tm);
    return 0;
}

static void iso_basic(time_t t, char out[17])
{
    long long days = (long long)t / 86400, secs = (long long)t % 86400;
    if (secs < 0) {
        secs += 86400;
        days--;
    }
    long long y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) y = 0;
    unsigned v[6] = {
        (unsigned)y,          m, d, (unsigned)(secs / 3600), (unsigned)(secs / 60 % 60),
        (unsigned)(secs % 60)};
    static const int width[6] = {4, 2, 2, 2, 2, 2};
    char *p = out;
    for (int i = 0; i < 6; i++) {
        if (i == 3) *p++ = 'T';
        for (int k = width[i] - 1; k >= 0; k--) {
            p[k] = (char)('0' + v[i] % 10);
            v[i] /= 10;
        }
        p += width[i];
    }
    *p++ = 'Z';
    *p = '\0';
}

/* Whether name is one of the ';'-separated entries of list (case-insensitively). */
static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = list; *s;) {
        const char *e = strchr(s, ';');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (name_eq(s, len, name, n)) return 1;
        if (e == NULL) break;
        s = e + 1;
    }
    return 0;
}

static size_t count_headers(const sigv4_request *req, const char *name)
{
    size_t n = 0, len = strlen(name);
    for (size_t i = 0; i < req->n_headers; i++)
        n += name_eq(req->headers[i].name, req->headers[i].name_len, name, len);
    return n;
}

/* The first header named X-Amz-* that the SignedHeaders list leaves out, or NULL. */
static const sigv4_pair *unsigned_amz_header(const sigv4_request *req, const char *list)
{
    for (size_t i = 0; i < req->n_headers; i++) {
        const sigv4_pair *h = &req->headers[i];
        if (h->name_len < 6 || strncasecmp(h->name, "x-amz-", 6) != 0) continue;
        size_t n = strlen(list);
        int found = 0;
        for (size_t s = 0; s < n && !found;) {
            size_t e = s;
            while (e < n && list[e] != ';')
                e++;
            found = name_eq(list + s, e - s, h->name, h->name_len);
            s = e + 1;
        }
        if (!found) return h;
    }
    return NULL;
}

/* A header's name as AWS writes it: "X-Amz-Security-Token" (into b). */
static const char *display_name(const sigv4_pair *h, buf *b)
{
    buf_reset(b);
    int up = 1;
    for (size_t i = 0; i < h->name_len; i++) {
        char c = h->name[i];
        if (buf_putc(b, (uint8_t)(up ? toupper((unsigned char)c) : tolower((unsigned char)c))))
            return "X-Amz-*";
        up = c == '-';
    }
    return b->data ? b->data : "X-Amz-*";
}

/* Whether the request's X-Amz-Security-Token (got, NULL when it has none) is what key
 * asks: its session token, or none for a key without one. Compared in constant time. */
static int token_matches(const sigv4_key *key, const char *got)
{
    if (key->session_token == NULL) return got == NULL;
    if (got == NULL) return 0;
    size_t n = strlen(key->session_token);
    return strlen(got) == n && CRYPTO_memcmp(got, key->session_token, n) == 0;
}

static void copy_key(char *dst, size_t cap, const char *src, size_t n)
{
    if (dst == NULL || cap == 0) return;
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* What a request says of its signature, from its Authorization header or, presigned, from
 * its query string (values decoded). Strings point into the caller's buffers. */
typedef struct signed_params {
    const char *algorithm;
    const char *credential;
    const char *signed_headers;
    const char *signature;
    const char *date;        /* X-Amz-Date's (or Date's) value */
    int date_is_amz;         /* the date came from X-Amz-Date: only the ISO form is read */
    const char *expires;     /* presigned: X-Amz-Expires, or NULL when absent */
    const char *token;       /* X-Amz-Security-Token, or NULL */
    const sigv4_pair *query; /* the query pairs the canonical request holds */
    size_t n_query;
    int presigned;
} signed_params;

#define PRESIGN_MAX_EXPIRES 604800 /* seven days, the longest SigV4 presigning allows */

static const char *const query_auth_names[] = {
    "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Date"};

/* The request's query pair named name (compared decoded), or NULL; *count gets how many
 * there are. dec is scratch. */
static const sigv4_pair *query_pair(const sigv4_request *req, const char *name, size_t *count,
                                    buf *dec)
{
    const sigv4_pair *found = NULL;
    *count = 0;
    for (size_t i = 0; i < req->n_query; i++) {
        buf_reset(dec);
        if (uri_decode(dec, req->query[i].name, req->query[i].name_len)) return NULL;
        if (dec->len != strlen(name) || memcmp(dec->data, name, dec->len) != 0) continue;
        if (found == NULL) found = &req->query[i];
        ++*count;
    }
    return found;
}

/* Whether the request is signed in its query string: it has no Authorization header and
 * carries one of SigV4's query parameters. */
static int is_presigned(const sigv4_request *req, buf *dec)
{
    if (find_header(req, "Authorization")) return 0;
    size_t n;
    for (size_t i = 0; i < 4; i++)
        if (query_pair(req, query_auth_names[i], &n, dec)) return 1;
    return 0;
}

/* Reads a presigned request's parameters into p, each value decoded into its own buffer
 * of vals (7 of them); the canonical query is the request's without X-Amz-Signature
 * (*kept, allocated, freed by the caller). Returns 0, or -1 with e set. */
static int read_query_params(const sigv4_request *req, signed_params *p, buf *vals,
                             sigv4_pair **kept, qr_err *e)
{
    static const char *const names[] = {
        "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature",     "X-Amz-SignedHeaders",
        "X-Amz-Date",      "X-Amz-Expires",    "X-Amz-Security-Token"};
    const char **slots[] = {&p->algorithm, &p->credential, &p->signature, &p->signed_headers,
                            &p->date,      &p->expires,    &p->token};
    buf dec;
    buf_init(&dec, 0);
    int rc = -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t count;
        const sigv4_pair *q = query_pair(req, names[i], &count, &dec);
        if (count > 1) {
            err_set(e, SIGV4_E_INCOMPLETE,
                    "'%s' is given more than once in the query string; a presigned request "
                    "carries each of its signing parameters once.",
                    names[i]);
            goto done;
        }
        if (q == NULL) continue;
        if ((q->value && uri_decode(&vals[i], q->value, q->value_len)) ||
            buf_append(&vals[i], "", 0))
            goto oom;
        *slots[i] = vals[i].data;
    }
    for (size_t i = 0; i < 5; i++) {
        if (*slots[i] == NULL) {
            err_set(e, SIGV4_E_INCOMPLETE,
                    "AWS query-string parameters must include '%s'. Re-examine the query-string "
                    "parameters.",
                    names[i]);
            goto done;
        }
    }
    p->date_is_amz = 1;
    p->presigned = 1;
    *kept = malloc((req->n_query ? req->n_query : 1) * sizeof **kept);
    if (*kept == NULL) goto oom;
    size_t n = 0;
    for (size_t i = 0; i < req->n_query; i++) {
        buf_reset(&dec);
        if (uri_decode(&dec, req->query[i].name, req->query[i].name_len)) goto oom;
        if (dec.len == 15 && memcmp(dec.data, "X-Amz-Signature", 15) == 0) continue;
        (*kept)[n++] = req->query[i];
    }
    p->query = *kept;
    p->n_query = n;
    rc = 0;
    goto done;
oom:
    err_set(e, QR_E_INTERNAL, "out of memory reading the query string");
done:
    buf_free(&dec);
    return rc;
}

/* Checks the signature p describes, in DynamoDB's order: the date (well formed, then
 * within SIGV4_MAX_SKEW_SECONDS of now, or for a presigned request within its
 * X-Amz-Expires), Host and every X-Amz-* header signed, the algorithm, the credential
 * scope, the access key, the session token, the signature. */
static int check_signature(const sigv4_request *req, const signed_params *p,
                           const sigv4_keyring *keys, const char *service, time_t now, buf *bufs,
                           qr_err *e)
{
    buf *date_b = &bufs[1], *scope_b = &bufs[3], *canon = &bufs[4], *sts = &bufs[5];
    const char *date = p->date;
    int rc = -1;
    /* The date: well formed, then within the allowed skew. */
    time_t t;
    int parsed = p->date_is_amz ? parse_iso_basic(date, &t)
                                : (parse_iso_basic(date, &t) == 0 ? 0 : parse_http_date(date, &t));
    if (parsed) {
        err_set(e, SIGV4_E_INCOMPLETE,
                "Date must be in ISO-8601 'basic format'. Got '%s'. See "
                "http://en.wikipedia.org/wiki/ISO_8601",
                date);
        goto done;
    }
    long long expires = 0;
    if (p->presigned && p->expires) {
        char *end = NULL;
        expires = strtoll(p->expires, &end, 10);
        if (!*p->expires || !digits(p->expires, (int)strlen(p->expires)) || *end || expires < 1 ||
            expires > PRESIGN_MAX_EXPIRES) {
            err_set(e, SIGV4_E_INCOMPLETE,
                    "X-Amz-Expires must be a whole number of seconds from 1 to %d, not '%s'.",
                    PRESIGN_MAX_EXPIRES, p->expires);
            goto done;
        }
    }
    char when[17], now_s[17], limit[17];
    iso_basic(t, when);
    if (!expires && t < now - SIGV4_MAX_SKEW_SECONDS) {
        iso_basic(now, now_s);
        iso_basic(now - SIGV4_MAX_SKEW_SECONDS, limit);
        err_set(e, SIGV4_E_INVALID, "Signature expired: %s is now earlier than %s (%s - 15 min.)",
                when, limit, now_s);
        goto done;
    }
    if (expires && t < now - expires) {
        iso_basic(now, now_s);
        iso_basic(now - expires, limit);
        err_set(e, SIGV4_E_INVALID, "Signature expired: %s is now earlier than %s (%s - %lld sec.)",
                when, limit, now_s, expires);
        goto done;
    }
    if (t > now + SIGV4_MAX_SKEW_SECONDS) {
        iso_basic(now, now_s);
        iso_basic(now + SIGV4_MAX_SKEW_SECONDS, limit);
        err_set(e, SIGV4_E_INVALID,
                "Signature not yet current: %s is still later than %s (%s + 15 min.)", when, limit,
                now_s);
        goto done;
    }

    if (!list_has(p->signed_headers, "host")) {
        err_set(e, SIGV4_E_INVALID, "'Host' must be a 'SignedHeader' in the AWS Authorization.");
        goto done;
    }
    /* Every X-Amz-* header present decides what the request does or who sends it
     * (X-Amz-Target, X-Amz-Date, X-Amz-Security-Token, ...): every SDK signs them, and one
     * left out could be changed by whoever replays the request. */
    const sigv4_pair *unsigned_h = unsigned_amz_header(req, p->signed_headers);
    if (unsigned_h) {
        err_set(e, SIGV4_E_INVALID, "'%s' must be a 'SignedHeader' in the AWS Authorization.",
                display_name(unsigned_h, date_b));
        goto done;
    }
    if (strcmp(p->algorithm, ALGORITHM) != 0) {
        err_set(e, SIGV4_E_INCOMPLETE,
                "Unsupported AWS 'algorithm': '%s' (only AWS4-HMAC-SHA256 for now). ",
                p->algorithm);
        goto done;
    }

    /* Credential: keyid/date/region/service/aws4_request (trailing slashes ignored). */
    if (buf_puts(scope_b, p->credential)) goto oom;
    while (scope_b->len > 0 && scope_b->data[scope_b->len - 1] == '/')
        scope_b->data[--scope_b->len] = '\0';
    char *part[5] = {0};
    int nparts = 0;
    for (char *s = scope_b->data; s; nparts++) {
        char *sl = strchr(s, '/');
        if (nparts < 5) part[nparts] = s;
        if (sl) *sl = '\0';
        s = sl ? sl + 1 : NULL;
    }
    if (nparts != 5) {
        err_set(e, SIGV4_E_INCOMPLETE,
                "Credential must have exactly 5 slash-delimited elements, e.g. "
                "keyid/date/region/service/term, got '%s'",
                p->credential);
        goto done;
    }
    const char *kid = part[0], *sdate = part[1], *region = part[2], *svc = part[3], *term = part[4];
    char scope_err[QR_ERR_MSG_MAX] = "";
    size_t sl = 0;
    if (!*region)
        sl += (size_t)snprintf(scope_err + sl, sizeof scope_err - sl,
                               "Credential should be scoped to a valid region, not '%s'. ", region);
    if (sl < sizeof scope_err && strcmp(svc, service) != 0)
        sl += (size_t)snprintf(scope_err + sl, sizeof scope_err - sl,
                               "Credential should be scoped to correct service: '%s'. ", service);
    if (sl < sizeof scope_err && strcmp(term, TERMINATOR) != 0)
        sl += (size_t)snprintf(scope_err + sl, sizeof scope_err - sl,
                               "Credential should be scoped with a valid terminator: '%s', not "
                               "'%s'. ",
                               TERMINATOR, term);
    if (sl < sizeof scope_err && strncmp(sdate, when, 8) != 0)
        sl += (size_t)snprintf(scope_err + sl, sizeof scope_err - sl,
                               "Date in Credential scope does not match YYYYMMDD from ISO-8601 "
                               "version of date from HTTP: '%s' != '%.8s', from '%s'.",
                               sdate, when, when);
    if (scope_err[0]) {
        size_t n = strlen(scope_err);
        if (n && scope_err[n - 1] == ' ') scope_err[n - 1] = '\0';
        err_set(e, SIGV4_E_INVALID, "%s", scope_err);
        goto done;
    }

    const sigv4_key *key = sigv4_keyring_key(keys, kid, strlen(kid));
    int token_ok = key && token_matches(key, p->token);
    buf_reset(sts);
    if (!token_ok) {
        err_set(e, SIGV4_E_UNRECOGNIZED, "The security token included in the request is invalid.");
        goto done;
    }
    const char *secret = key->secret;

    reserve(canon, 1024);
    reserve(sts, 256);
    char payload[65];
    sigv4_sha256_hex(req->body ? req->body : "", req->body_len, payload);
    sigv4_request as_signed = *req;
    as_signed.query = p->query;
    as_signed.n_query = p->n_query;
    if (sigv4_canonical_request(&as_signed, p->signed_headers, strlen(p->signed_headers), payload,
                                canon))
        goto oom;
    char canon_hash[65];
    sigv4_sha256_hex(canon->data, canon->len, canon_hash);
    const char *sts_parts[] = {ALGORITHM, "\n", when, "\n", sdate, "/",       region,
                               "/",       svc,  "/",  term, "\n",  canon_hash};
    for (size_t i = 0; i < sizeof sts_parts / sizeof sts_parts[0]; i++)
        if (buf_puts(sts, sts_parts[i])) goto oom;
    char expect[65];
    if (sigv4_sign(secret, sdate, region, svc, sts->data, sts->len, expect)) goto oom;
    if (strlen(p->signature) != 64 || CRYPTO_memcmp(expect, p->signature, 64) != 0) {
        err_set(e, SIGV4_E_INVALID,
                "The request signature we calculated does not match the signature you "
                "provided. Check your AWS Secret Access Key and signing method. Consult the "
                "service documentation for details.\n\nThe Canonical String for this request "
                "should have been\n'%s'\n\nThe String-to-Sign should have been\n'%s'\n",
                canon->data, sts->data);
        goto done;
    }
    rc = 0;
    goto done;
oom:
    err_set(e, QR_E_INTERNAL, "out of memory verifying the request signature");
done:
    return rc;
}

/* From the canonical request, the string to sign and the signing key (derived by four
 * HMACs); the final HMAC is compared in constant time. The checks run in the order
 * DynamoDB applies them, so a client sees the same first error. */
int sigv4_verify(const sigv4_request *req, const sigv4_keyring *keys, const char *service,
                 time_t now, char *access_key, size_t akcap, qr_err *e)
{
    /* The thread's working buffers (no allocation once they have grown), or local ones. */
    crypto_ctx *tc = thread_ctx();
    buf local[SCRATCH_BUFS], *bufs = tc ? tc->scratch : local;
    for (int i = 0; i < SCRATCH_BUFS; i++) {
        if (tc)
            buf_reset(&bufs[i]);
        else
            buf_init(&bufs[i], 0);
    }
    buf *auth_b = &bufs[0], *date_b = &bufs[1], *work = &bufs[2], *token_b = &bufs[6];
    buf vals[7];
    for (int i = 0; i < 7; i++)
        buf_init(&vals[i], 0);
    sigv4_pair *kept = NULL;
    auth_params p;
    int rc = -1;
    copy_key(access_key, akcap, "", 0);
    signed_params sp = {.query = req->query, .n_query = req->n_query};

    size_t n_auth = count_headers(req, "Authorization");
    if (n_auth > 1) {
        err_set(e, SIGV4_E_INCOMPLETE,
                "The request carries %zu Authorization headers; a request is signed by exactly "
                "one.",
                n_auth);
        goto done;
    }
    if (is_presigned(req, work)) {
        if (read_query_params(req, &sp, vals, &kept, e)) goto done;
        if (sp.token == NULL)
            sp.token = header_string(find_header(req, "X-Amz-Security-Token"), token_b);
    } else {
        const char *auth = header_string(find_header(req, "Authorization"), auth_b);
        if (auth == NULL || strncmp(auth, "AWS4-", 5) != 0) {
            err_set(e, SIGV4_E_MISSING, "Request is missing Authentication Token");
            goto done;
        }
        if (parse_authorization(auth, &p, work)) {
            err_set(e, QR_E_INTERNAL, "out of memory reading the Authorization header");
            goto done;
        }
        if (p.no_equals) {
            err_set(e, SIGV4_E_INCOMPLETE,
                    "'%s' not a valid key=value pair (missing equal-sign) in Authorization header: "
                    "'%s'.",
                    p.no_equals, auth);
            goto done;
        }
        const sigv4_pair *amz_date = find_header(req, "X-Amz-Date");
        const char *date = header_string(amz_date ? amz_date : find_header(req, "Date"), date_b);
        sp.date_is_amz = amz_date != NULL;

        char missing[512] = "";
        if (p.credential == NULL || !*p.credential)
            strcat(missing, "Authorization header requires 'Credential' parameter. ");
        if (p.signature == NULL || !*p.signature)
            strcat(missing, "Authorization header requires 'Signature' parameter. ");
        if (p.signed_headers == NULL)
            strcat(missing, "Authorization header requires 'SignedHeaders' parameter. ");
        if (date == NULL)
            strcat(missing, "Authorization header requires existence of either a 'X-Amz-Date' or "
                            "a 'Date' header. ");
        if (missing[0]) {
            err_set(e, SIGV4_E_INCOMPLETE, "%sAuthorization=%s", missing, auth);
            goto done;
        }
        /* DynamoDB names a missing parameter first, even one misspelt into an unknown one. */
        if (p.repeated) {
            err_set(e, SIGV4_E_INCOMPLETE,
                    "'%s' is given more than once in Authorization header: '%s'. Each of "
                    "Credential, SignedHeaders and Signature must appear once.",
                    p.repeated, auth);
            goto done;
        }
        if (p.unknown) {
            err_set(e, SIGV4_E_INCOMPLETE,
                    "'%s' is not a parameter of Authorization header: '%s'. Only Credential, "
                    "SignedHeaders and Signature are.",
                    p.unknown, auth);
            goto done;
        }
        sp.algorithm = p.algorithm;
        sp.credential = p.credential;
        sp.signed_headers = p.signed_headers;
        sp.signature = p.signature;
        sp.date = date;
        sp.token = header_string(find_header(req, "X-Amz-Security-Token"), token_b);
    }

    const char *slash = strchr(sp.credential, '/');
    copy_key(access_key, akcap, sp.credential,
             slash ? (size_t)(slash - sp.credential) : strlen(sp.credential));
    if (keys == NULL) {
        rc = 0; /* any key: DynamoDB Local checks no more than this */
        goto done;
    }
    rc = check_signature(req, &sp, keys, service, now, bufs, e);
done:
    free(kept);
    for (int i = 0; i < 7; i++)
        buf_free(&vals[i]);
    for (int i = 0; i < SCRATCH_BUFS; i++)
        if (!tc || bufs[i].cap > SCRATCH_KEEP) buf_free(&bufs[i]);
    return rc;
}
