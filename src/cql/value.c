/* value.c — typed CQL values (see value.h): literals and text parsed as Cassandra's
 * Constants and fromString do, bound bytes validated, values compared as its comparators
 * order them, written as CAST text, CQL literals and JSON, read from JSON, and stored as
 * DynamoDB AttributeValues.
 *
 * Byte layouts are cqlwire/cql_value.h's. Dates and times are proleptic Gregorian UTC;
 * floats are printed as Java prints them (shortest digits that read back the same). */
#include "cql/value.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cqlwire/cql_value.h"
#include "model/number.h"

/* ---- errors ---- */

static int fail_server(cql_parse_error *err, const char *what)
{
    if (err && !err->code && !err->msg[0]) {
        err->code = CQL_ERR_SERVER;
        snprintf(err->msg, sizeof err->msg, "%s", what);
    }
    return CQLVAL_ERROR;
}

/* The type's name for messages, in a small rotating set of per-thread buffers. */
static const char *tname(const cql_ctype *t)
{
    static _Thread_local char names[4][512]; /* messages are made on many threads */
    static _Thread_local int next;
    char *s = names[next++ % 4];
    buf b;
    buf_init(&b, 4096);
    cqltype_name(t, &b);
    snprintf(s, 512, "%s", b.data ? b.data : "");
    buf_free(&b);
    return s;
}

static uint16_t id_of(const cql_ctype *t)
{
    return t->wire.id;
}

static int is_textual(uint16_t id)
{
    return id == CQL_TYPE_VARCHAR || id == CQL_TYPE_ASCII;
}

/* Types whose empty (zero-byte) value Cassandra accepts besides text and blob. */
static int allows_empty(uint16_t id)
{
    switch (id) {
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_DATE:
    case CQL_TYPE_TIME:
    case CQL_TYPE_DURATION:
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_MAP:
        return 0;
    default:
        return 1;
    }
}

static void varint_trim(const uint8_t **p, size_t *len);

/* ---- calendar ---- */

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return dm[m - 1];
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && ((a < 0) != (b < 0)));
}

/* ---- small parsers over (text, len) ---- */

typedef struct cursor {
    const char *p, *end;
} cursor;

static int digits(cursor *c, int min, int max, int64_t *v)
{
    int n = 0;
    int64_t r = 0;
    while (c->p < c->end && isdigit((unsigned char)*c->p) && n < max) {
        int digit = *c->p++ - '0';
        if (r > (INT64_MAX - digit) / 10) return -1;
        r = r * 10 + digit;
        n++;
    }
    if (n < min) return -1;
    *v = r;
    return 0;
}

static int lit(cursor *c, char ch)
{
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A whole signed decimal integer within [min, max]. */
static int parse_int(const char *s, size_t len, int64_t min, int64_t max, int64_t *v)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == len) return -1;
    uint64_t r = 0, lim = neg ? (uint64_t)(-(min + 1)) + 1 : (uint64_t)max;
    for (; i < len; i++) {
        if (!isdigit((unsigned char)s[i])) return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (r > (lim - d) / 10) return -1;
        r = r * 10 + d;
    }
    *v = neg ? (int64_t)(0 - r) : (int64_t)r;
    return 0;
}

static int all_digits(const char *s, size_t len, int sign_ok)
{
    size_t i = 0;
    if (sign_ok && i < len && s[i] == '-') i++;
    if (i == len) return 0;
    for (; i < len; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
}

/* A zone after a time: Z, UTC, GMT, [GMT|UTC]+hh[[:]mm]; minutes east in *off. */
static int zone(cursor *c, int64_t *off)
{
    *off = 0;
    if (c->p == c->end) return 0;
    if (lit(c, ' ') && c->p == c->end) return -1;
    if (lit(c, 'Z') || lit(c, 'z')) return c->p == c->end ? 0 : -1;
    if ((size_t)(c->end - c->p) >= 3 &&
        (strncmp(c->p, "UTC", 3) == 0 || strncmp(c->p, "GMT", 3) == 0)) {
        c->p += 3;
        if (c->p == c->end) return 0;
    }
    int neg;
    if (lit(c, '+'))
        neg = 0;
    else if (lit(c, '-'))
        neg = 1;
    else
        return -1;
    int64_t h, m = 0;
    if (digits(c, 2, 2, &h)) return -1;
    lit(c, ':');
    if (c->p < c->end && digits(c, 2, 2, &m)) return -1;
    if (c->p != c->end || h > 23 || m > 59) return -1;
    *off = (neg ? -1 : 1) * (h * 60 + m);
    return 0;
}

/* yyyy-mm-dd (years may be negative or longer); days since the epoch. */
static int parse_ymd(cursor *c, int64_t *days)
{
    int neg = lit(c, '-');
    int64_t y, m, d;
    if (digits(c, 1, 9, &y) || !lit(c, '-') || digits(c, 1, 2, &m) || !lit(c, '-') ||
        digits(c, 1, 2, &d))
        return -1;
    if (neg) y = -y;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, (int)m)) return -1;
    *days = days_from_civil(y, m, d);
    return 0;
}

/* A timestamp string as TimestampSerializer's patterns take it: yyyy-mm-dd, then
 * optionally ' ' or 'T', hh:mm, optionally :ss and .fraction, then optionally a zone. */
static int parse_timestamp_text(const char *s, size_t len, int64_t *ms)
{
    cursor c = {s, s + len};
    int64_t days, h = 0, mi = 0, sec = 0, frac = 0, off = 0;
    if (parse_ymd(&c, &days)) return -1;
    if (c.p < c.end && (*c.p == ' ' || *c.p == 'T') && c.p + 1 < c.end &&
        isdigit((unsigned char)c.p[1])) {
        c.p++;
        if (digits(&c, 2, 2, &h) || !lit(&c, ':') || digits(&c, 2, 2, &mi)) return -1;
        if (lit(&c, ':')) {
            if (digits(&c, 2, 2, &sec)) return -1;
            if (lit(&c, '.')) {
                int n = 0;
                while (c.p < c.end && isdigit((unsigned char)*c.p)) {
                    if (n < 3) frac = frac * 10 + (*c.p - '0');
                    n++;
                    c.p++;
                }
                if (n == 0) return -1;
                for (; n < 3; n++)
                    frac *= 10;
            }
        }
        if (h > 23 || mi > 59 || sec > 59) return -1;
    }
    if (zone(&c, &off)) return -1;
    *ms = ((days * 24 + h) * 60 + mi - off) * 60000 + sec * 1000 + frac;
    return 0;
}

/* ---- hex, uuids, base64 ---- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int hex_decode(const char *s, size_t len, buf *out)
{
    if (len % 2) return -1;
    if (buf_reserve(out, len / 2)) return -1;
    for (size_t i = 0; i < len; i += 2) {
        int a = hexval(s[i]), b = hexval(s[i + 1]);
        if (a < 0 || b < 0) return -1;
        out->data[out->len++] = (char)(a << 4 | b);
    }
    out->data[out->len] = '\0';
    return 0;
}

static int hex_put(buf *out, const uint8_t *p, size_t len)
{
    static const char hx[] = "0123456789abcdef";
    if (buf_reserve(out, 2 + len * 2)) return -1;
    out->data[out->len++] = '0';
    out->data[out->len++] = 'x';
    for (size_t i = 0; i < len; i++) {
        out->data[out->len++] = hx[p[i] >> 4];
        out->data[out->len++] = hx[p[i] & 15];
    }
    out->data[out->len] = '\0';
    return 0;
}

static int parse_uuid(const char *s, size_t len, uint8_t out[16])
{
    if (len != 36) return -1;
    int k = 0;
    for (size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') return -1;
            i++;
            continue;
        }
        int a = hexval(s[i]), b = hexval(s[i + 1]);
        if (a < 0 || b < 0) return -1;
        out[k++] = (uint8_t)(a << 4 | b);
        i += 2;
    }
    return 0;
}

static int uuid_put(buf *out, const uint8_t *u)
{
    return buf_printf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                      u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                      u[12], u[13], u[14], u[15]);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64_encode(const uint8_t *p, size_t len)
{
    char *s = malloc((len + 2) / 3 * 4 + 1), *o = s;
    if (!s) return NULL;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < len ? p[i + 2] : 0);
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
        *o++ = i + 2 < len ? b64[v & 63] : '=';
    }
    *o = '\0';
    return s;
}

static int base64_decode(const char *s, size_t len, buf *out)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t i = 0;
    for (; i < len && s[i] != '='; i++) {
        const char *at = strchr(b64, s[i]);
        if (!at || !s[i]) return -1;
        acc = acc << 6 | (uint32_t)(at - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (buf_putc(out, (uint8_t)(acc >> bits))) return -1;
        }
    }
    for (; i < len; i++)
        if (s[i] != '=') return -1;
    return 0;
}

/* ---- durations ---- */

typedef struct duration {
    int64_t months, days, nanos;
    int unit;             /* the index in duration_units of the last unit added, 0 before any */
    const char *too_many; /* after a failed parse: "months" or "days" when one overflowed */
    const char *misordered[2]; /* after a failed parse: a unit given after a smaller one */
} duration;

/* Duration.Builder's units, largest first: what each adds, and its name in messages. */
static const struct duration_unit_def {
    const char *symbol, *alias, *name;
    int64_t months, days, nanos;
} duration_units[] = {
    {"", NULL, "", 0, 0, 0},
    {"y", NULL, "years", 12, 0, 0},
    {"mo", NULL, "months", 1, 0, 0},
    {"w", NULL, "weeks", 0, 7, 0},
    {"d", NULL, "days", 0, 1, 0},
    {"h", NULL, "hours", 0, 0, 3600000000000LL},
    {"m", NULL, "minutes", 0, 0, 60000000000LL},
    {"s", NULL, "seconds", 0, 0, 1000000000LL},
    {"ms", NULL, "milliseconds", 0, 0, 1000000LL},
    {"us", "\xc2\xb5s", "microseconds", 0, 0, 1000LL},
    {"ns", NULL, "nanoseconds", 0, 0, 1},
};

static int unit_is(const char *unit, size_t ulen, const char *s)
{
    return s && ulen == strlen(s) && strncasecmp(unit, s, ulen) == 0;
}

/* Adds n of unit to d, each unit once and largest first, as Duration.Builder does. */
static int dur_add(duration *d, int64_t n, const char *unit, size_t ulen)
{
    int k = 1;
    int count = (int)(sizeof duration_units / sizeof duration_units[0]);
    while (k < count && !unit_is(unit, ulen, duration_units[k].symbol) &&
           !unit_is(unit, ulen, duration_units[k].alias))
        k++;
    if (k == count) return -1;
    if (k <= d->unit) {
        d->misordered[0] = duration_units[d->unit].name;
        d->misordered[1] = duration_units[k].name;
        return -1;
    }
    d->unit = k;
    const struct duration_unit_def *u = &duration_units[k];
    if (u->months) {
        if (n > (INT32_MAX - d->months) / u->months) return d->too_many = "months", -1;
        d->months += n * u->months;
    } else if (u->days) {
        if (n > (INT32_MAX - d->days) / u->days) return d->too_many = "days", -1;
        d->days += n * u->days;
    } else {
        if (n > (INT64_MAX - d->nanos) / u->nanos) return -1;
        d->nanos += n * u->nanos;
    }
    return 0;
}

/* Duration.from: 1h30m, P1Y2M3DT4H5M6S, P2W, P0001-02-03T04:05:06; '-' before any. */
static int parse_duration(const char *s, size_t len, duration *d)
{
    memset(d, 0, sizeof *d);
    cursor c = {s, s + len};
    int neg = lit(&c, '-');
    if (c.p == c.end) return -1;
    if (lit(&c, 'P')) {
        if (c.end - c.p >= 2 && c.end[-1] == 'W' && all_digits(c.p, (size_t)(c.end - c.p - 1), 0)) {
            int64_t w;
            if (parse_int(c.p, (size_t)(c.end - c.p - 1), 0, INT32_MAX, &w) ||
                dur_add(d, w, "w", 1))
                return -1;
        } else if (memchr(c.p, '-', (size_t)(c.end - c.p))) {
            int64_t y, mo, dd, h, mi, sec;
            if (digits(&c, 4, 4, &y) || !lit(&c, '-') || digits(&c, 2, 2, &mo) || !lit(&c, '-') ||
                digits(&c, 2, 2, &dd) || !lit(&c, 'T') || digits(&c, 2, 2, &h) || !lit(&c, ':') ||
                digits(&c, 2, 2, &mi) || !lit(&c, ':') || digits(&c, 2, 2, &sec) || c.p != c.end)
                return -1;
            if (dur_add(d, y, "y", 1) || dur_add(d, mo, "mo", 2) || dur_add(d, dd, "d", 1) ||
                dur_add(d, h, "h", 1) || dur_add(d, mi, "m", 1) || dur_add(d, sec, "s", 1))
                return -1;
        } else {
            int in_time = 0, any = 0;
            while (c.p < c.end) {
                if (!in_time && lit(&c, 'T')) {
                    in_time = 1;
                    continue;
                }
                int64_t n;
                if (digits(&c, 1, 19, &n) || c.p == c.end) return -1;
                char u = *c.p++;
                const char *unit = !in_time ? (u == 'Y'   ? "y"
                                               : u == 'M' ? "mo"
                                               : u == 'D' ? "d"
                                                          : NULL)
                                            : (u == 'H'   ? "h"
                                               : u == 'M' ? "m"
                                               : u == 'S' ? "s"
                                                          : NULL);
                if (!unit || dur_add(d, n, unit, strlen(unit))) return -1;
                any = 1;
            }
            if (!any) return -1;
        }
    } else {
        while (c.p < c.end) {
            int64_t n;
            if (digits(&c, 1, 19, &n)) return -1;
            const char *u = c.p;
            while (c.p < c.end && !isdigit((unsigned char)*c.p))
                c.p++;
            if (c.p == u || dur_add(d, n, u, (size_t)(c.p - u))) return -1;
        }
    }
    if (neg) {
        d->months = -d->months;
        d->days = -d->days;
        d->nanos = -d->nanos;
    }
    return 0;
}

/* Cassandra's message for a duration text that failed to parse into d. */
static int duration_error(cql_parse_error *err, const char *s, size_t len, const duration *d)
{
    if (d->misordered[0] && d->misordered[0] == d->misordered[1])
        return cql_error_record(err, CQL_ERR_INVALID,
                                "Invalid duration. The %s are specified multiple times",
                                d->misordered[0]);
    if (d->misordered[0])
        return cql_error_record(err, CQL_ERR_INVALID, "Invalid duration. The %s should be after %s",
                                d->misordered[0], d->misordered[1]);
    if (d->too_many)
        return cql_error_record(err, CQL_ERR_INVALID,
                                "Invalid duration. The total number of %s must be less or equal "
                                "to %d",
                                d->too_many, INT32_MAX);
    return cql_error_record(err, CQL_ERR_INVALID, "Unable to convert '%.*s' to a duration",
                            (int)len, s);
}

static int64_t dur_part(buf *out, int64_t v, int64_t unit, const char *name)
{
    if (v == 0 || v < unit) return v;
    buf_printf(out, "%lld%s", (long long)(v / unit), name);
    return v % unit;
}

/* Duration.toString: -1y2mo3d4h5m6s7ms8us9ns, nothing for zero parts. */
static int duration_put(buf *out, int64_t months, int64_t days, int64_t nanos)
{
    size_t start = out->len;
    if (months < 0 || days < 0 || nanos < 0) buf_putc(out, '-');
    int64_t r = dur_part(out, llabs(months), 12, "y");
    dur_part(out, r, 1, "mo");
    dur_part(out, llabs(days), 1, "d");
    if (nanos) {
        uint64_t n = nanos < 0 ? (uint64_t)0 - (uint64_t)nanos : (uint64_t)nanos;
        r = dur_part(out, (int64_t)n, 3600000000000LL, "h");
        r = dur_part(out, r, 60000000000LL, "m");
        r = dur_part(out, r, 1000000000LL, "s");
        r = dur_part(out, r, 1000000LL, "ms");
        r = dur_part(out, r, 1000LL, "us");
        dur_part(out, r, 1, "ns");
    }
    return out->len >= start ? 0 : -1;
}

/* ---- floats as Java prints them ---- */

/* Float.toString / Double.toString: shortest digits that read back as the same value,
 * plain between 1e-3 and 1e7, else d.dddE±n. */
static int java_float_put(buf *out, double v, int is_float)
{
    if (isnan(v)) return buf_puts(out, "NaN");
    if (isinf(v)) return buf_puts(out, v < 0 ? "-Infinity" : "Infinity");
    if (v == 0) return buf_puts(out, signbit(v) ? "-0.0" : "0.0");
    char tmp[64];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (is_float ? strtof(tmp, NULL) == (float)v : strtod(tmp, NULL) == v) break;
    }
    /* tmp: [-]d.ddde[+-]xx */
    char dig[32];
    int nd = 0, neg = tmp[0] == '-';
    const char *q = tmp + neg;
    for (; *q && *q != 'e'; q++)
        if (isdigit((unsigned char)*q)) dig[nd++] = *q;
    int exp = atoi(q + 1);
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = '\0';
    int rc = neg ? buf_putc(out, '-') : 0;
    double a = fabs(v);
    if (a >= 1e-3 && a < 1e7) {
        if (exp >= 0) {
            for (int i = 0; i <= exp; i++)
                rc = rc ? rc : buf_putc(out, (uint8_t)(i < nd ? dig[i] : '0'));
            rc = rc ? rc : buf_putc(out, '.');
            if (nd > exp + 1)
                rc = rc ? rc : buf_puts(out, dig + exp + 1);
            else
                rc = rc ? rc : buf_putc(out, '0');
        } else {
            rc = rc ? rc : buf_puts(out, "0.");
            for (int i = 0; i < -exp - 1; i++)
                rc = rc ? rc : buf_putc(out, '0');
            rc = rc ? rc : buf_puts(out, dig);
        }
        return rc;
    }
    rc = rc ? rc : buf_putc(out, (uint8_t)dig[0]);
    rc = rc ? rc : buf_putc(out, '.');
    rc = rc ? rc : buf_puts(out, nd > 1 ? dig + 1 : "0");
    return rc ? rc : buf_printf(out, "E%d", exp);
}

/* Float.parseFloat / Double.parseDouble of a decimal text (and NaN, Infinity). */
static int parse_double(const char *s, size_t len, int is_float, double *v)
{
    char tmp[512];
    if (len == 0 || len >= sizeof tmp) return -1;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    const char *t = tmp + (tmp[0] == '-' || tmp[0] == '+');
    if (strcmp(t, "NaN") == 0) {
        *v = NAN;
        return 0;
    }
    if (strcmp(t, "Infinity") == 0) {
        *v = tmp[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    for (const char *c = tmp; *c; c++)
        if (!isdigit((unsigned char)*c) && !strchr("+-.eE", *c)) return -1;
    char *end;
    *v = is_float ? (double)strtof(tmp, &end) : strtod(tmp, &end);
    return *end == '\0' && end != tmp ? 0 : -1;
}

/* ---- decimals as BigDecimal.toString writes them ---- */

static int decimal_put(buf *out, const uint8_t *p, size_t len)
{
    int32_t scale;
    if (len < 5 || cql_int_decode(p, 4, &scale)) return -1;
    buf u;
    buf_init(&u, 0);
    if (cql_varint_to_text(p + 4, len - 4, &u)) {
        buf_free(&u);
        return -1;
    }
    const char *d = u.data;
    int neg = d[0] == '-';
    d += neg;
    int64_t nd = (int64_t)strlen(d);
    int64_t adjusted = -(int64_t)scale + (nd - 1);
    int rc = neg ? buf_putc(out, '-') : 0;
    if (scale >= 0 && adjusted >= -6) {
        if (scale == 0) {
            rc = rc ? rc : buf_puts(out, d);
        } else if (nd > scale) {
            rc = rc ? rc : buf_append(out, d, (size_t)(nd - scale));
            rc = rc ? rc : buf_putc(out, '.');
            rc = rc ? rc : buf_puts(out, d + nd - scale);
        } else {
            rc = rc ? rc : buf_puts(out, "0.");
            for (int64_t i = nd; i < scale && !rc; i++)
                rc = buf_putc(out, '0');
            rc = rc ? rc : buf_puts(out, d);
        }
    } else {
        rc = rc ? rc : buf_putc(out, (uint8_t)d[0]);
        if (nd > 1) {
            rc = rc ? rc : buf_putc(out, '.');
            rc = rc ? rc : buf_puts(out, d + 1);
        }
        rc = rc ? rc : buf_printf(out, "E%s%lld", adjusted >= 0 ? "+" : "", (long long)adjusted);
    }
    buf_free(&u);
    return rc;
}

/* A decimal as sign, significant digits (no leading or trailing zeros) and exponent e
 * such that the value is 0.digits × 10^e. Zero has sign 0. */
typedef struct decnorm {
    int sign;
    buf digits;
    int64_t exp;
} decnorm;

static int decimal_norm(const uint8_t *p, size_t len, decnorm *n)
{
    int32_t scale;
    buf_init(&n->digits, 0);
    n->sign = 0;
    n->exp = 0;
    if (len < 5 || cql_int_decode(p, 4, &scale)) return -1;
    buf u;
    buf_init(&u, 0);
    if (cql_varint_to_text(p + 4, len - 4, &u)) {
        buf_free(&u);
        return -1;
    }
    const char *d = u.data;
    int neg = d[0] == '-';
    d += neg;
    size_t nd = strlen(d);
    while (nd > 0 && d[nd - 1] == '0')
        nd--;
    if (nd == 0 || (nd == 1 && d[0] == '0')) {
        buf_free(&u);
        return 0;
    }
    n->sign = neg ? -1 : 1;
    /* value = d × 10^-scale (d with its trailing zeros) */
    n->exp = (int64_t)strlen(d) - scale;
    int rc = buf_append(&n->digits, d, nd);
    buf_free(&u);
    return rc;
}

/* ---- fromString of each native type ---- */

static int put_int(buf *out, uint16_t id, int64_t v)
{
    uint8_t b[8];
    switch (id) {
    case CQL_TYPE_INT:
        cql_int_encode((int32_t)v, b);
        return buf_append(out, b, 4);
    case CQL_TYPE_SMALLINT:
        cql_smallint_encode((int16_t)v, b);
        return buf_append(out, b, 2);
    case CQL_TYPE_TINYINT:
        cql_tinyint_encode((int8_t)v, b);
        return buf_append(out, b, 1);
    default:
        cql_bigint_encode(v, b);
        return buf_append(out, b, 8);
    }
}

static int full(cql_parse_error *err)
{
    return fail_server(err, "A value is too large for its buffer");
}

/* The text of a timestamp to milliseconds, as TimestampSerializer.dateStringToTimestamp. */
static int timestamp_from_text(const char *s, size_t len, int64_t *ms, cql_parse_error *err)
{
    if (len == 3 && strncasecmp(s, "now", 3) == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        *ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        return 0;
    }
    if (all_digits(s, len, 1)) {
        if (parse_int(s, len, INT64_MIN, INT64_MAX, ms))
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Unable to make long (for date) from: '%.*s'", (int)len, s);
        return 0;
    }
    if (parse_timestamp_text(s, len, ms))
        return cql_error_record(err, CQL_ERR_INVALID,
                                "Unable to coerce '%.*s' to a formatted date (long)", (int)len, s);
    return 0;
}

static int date_from_text(const char *s, size_t len, int64_t *days, cql_parse_error *err)
{
    if (all_digits(s, len, 1)) {
        int64_t raw;
        if (parse_int(s, len, INT64_MIN, INT64_MAX, &raw) || raw < 0 || raw > UINT32_MAX)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Unable to make unsigned int (for date) from: '%.*s'", (int)len,
                                    s);
        *days = raw - ((int64_t)1 << 31);
        return 0;
    }
    cursor c = {s, s + len};
    if (parse_ymd(&c, days) || c.p != c.end)
        return cql_error_record(err, CQL_ERR_INVALID,
                                "Unable to coerce '%.*s' to a formatted date (long)", (int)len, s);
    if (*days < INT32_MIN || *days > INT32_MAX)
        return cql_error_record(err, CQL_ERR_INVALID,
                                "Input date %.*s is out of the supported range", (int)len, s);
    return 0;
}

static int time_from_text(const char *s, size_t len, int64_t *ns, cql_parse_error *err)
{
    if (all_digits(s, len, 1)) {
        if (parse_int(s, len, INT64_MIN, INT64_MAX, ns) || *ns < 0 || *ns > CQL_TIME_MAX_NS)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Unable to make long (for time) from: '%.*s'", (int)len, s);
        return 0;
    }
    cursor c = {s, s + len};
    while (c.p < c.end && *c.p == ' ')
        c.p++;
    int64_t h, m, sec, frac = 0;
    int ok = !digits(&c, 1, 2, &h) && lit(&c, ':') && !digits(&c, 1, 2, &m) && lit(&c, ':') &&
             !digits(&c, 1, 2, &sec);
    if (ok && lit(&c, '.')) {
        int n = 0;
        while (c.p < c.end && isdigit((unsigned char)*c.p) && n < 9) {
            frac = frac * 10 + (*c.p++ - '0');
            n++;
        }
        ok = n > 0;
        for (; n < 9; n++)
            frac *= 10;
    }
    if (!ok || c.p != c.end || h > 23 || m > 59 || sec > 59)
        return cql_error_record(err, CQL_ERR_INVALID,
                                "(TimeType) Unable to coerce '%.*s' to a formatted time (long)",
                                (int)len, s);
    *ns = ((h * 60 + m) * 60 + sec) * 1000000000LL + frac;
    return 0;
}

static int inet_from_text(const char *s, size_t len, buf *out)
{
    char tmp[64];
    uint8_t a[16];
    if (len == 0 || len >= sizeof tmp) return -1;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    if (inet_pton(AF_INET, tmp, a) == 1) return buf_append(out, a, 4);
    if (inet_pton(AF_INET6, tmp, a) != 1) return -1;
    /* InetAddress.getByName makes an IPv4-mapped address (::ffff:1.2.3.4) an IPv4 one */
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(a, mapped, 12) == 0) return buf_append(out, a + 12, 4);
    return buf_append(out, a, 16);
}

int cqlval_from_text(const cql_ctype *t, const char *s, size_t len, buf *out, cql_parse_error *err)
{
    uint16_t id = id_of(t);
    size_t start = out->len;
    int rc = 0;
    if (len == 0 && allows_empty(id) && id != CQL_TYPE_CUSTOM) return CQLVAL_OK;
    switch (id) {
    case CQL_TYPE_ASCII:
        if (!cql_ascii_valid((const uint8_t *)s, len))
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Invalid ASCII character in string literal: %.*s", (int)len, s);
        rc = buf_append(out, s, len);
        break;
    case CQL_TYPE_VARCHAR:
        if (!cql_utf8_valid((const uint8_t *)s, len))
            return cql_error_record(err, CQL_ERR_INVALID, "String didn't validate.");
        rc = buf_append(out, s, len);
        break;
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_TINYINT: {
        int64_t v, lo = id == CQL_TYPE_INT        ? INT32_MIN
                        : id == CQL_TYPE_SMALLINT ? INT16_MIN
                        : id == CQL_TYPE_TINYINT  ? INT8_MIN
                                                  : INT64_MIN;
        int64_t hi = id == CQL_TYPE_INT        ? INT32_MAX
                     : id == CQL_TYPE_SMALLINT ? INT16_MAX
                     : id == CQL_TYPE_TINYINT  ? INT8_MAX
                                               : INT64_MAX;
        const char *what = id == CQL_TYPE_INT        ? "int"
                           : id == CQL_TYPE_SMALLINT ? "short"
                           : id == CQL_TYPE_TINYINT  ? "byte"
                                                     : "long";
        if (parse_int(s, len, lo, hi, &v))
            return cql_error_record(err, CQL_ERR_INVALID, "Unable to make %s from '%.*s'", what,
                                    (int)len, s);
        rc = put_int(out, id, v);
        break;
    }
    case CQL_TYPE_VARINT:
        if (cql_varint_from_text(s, len, out))
            return cql_error_record(err, CQL_ERR_INVALID, "unable to make int from '%.*s'",
                                    (int)len, s);
        break;
    case CQL_TYPE_DECIMAL:
        if (cql_decimal_from_text(s, len, out))
            return cql_error_record(err, CQL_ERR_INVALID, "unable to make BigDecimal from '%.*s'",
                                    (int)len, s);
        break;
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE: {
        double v;
        if (parse_double(s, len, id == CQL_TYPE_FLOAT, &v))
            return cql_error_record(err, CQL_ERR_INVALID, "Unable to make %s from '%.*s'",
                                    id == CQL_TYPE_FLOAT ? "float" : "double", (int)len, s);
        uint8_t b[8];
        if (id == CQL_TYPE_FLOAT) {
            cql_float_encode((float)v, b);
            rc = buf_append(out, b, 4);
        } else {
            cql_double_encode(v, b);
            rc = buf_append(out, b, 8);
        }
        break;
    }
    case CQL_TYPE_BOOLEAN: {
        uint8_t b;
        if (len == 4 && strncasecmp(s, "true", 4) == 0)
            b = 1;
        else if (len == 5 && strncasecmp(s, "false", 5) == 0)
            b = 0;
        else
            return cql_error_record(err, CQL_ERR_INVALID, "Unable to make boolean from '%.*s'",
                                    (int)len, s);
        rc = buf_putc(out, b);
        break;
    }
    case CQL_TYPE_BLOB:
    case CQL_TYPE_CUSTOM: {
        const char *h = s;
        size_t hl = len;
        if (hl >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) h += 2, hl -= 2;
        if (hex_decode(h, hl, out)) {
            out->len = start;
            return cql_error_record(err, CQL_ERR_INVALID, "cannot parse '%.*s' as hex bytes",
                                    (int)len, s);
        }
        break;
    }
    case CQL_TYPE_UUID:
    case CQL_TYPE_TIMEUUID: {
        uint8_t u[16];
        if (parse_uuid(s, len, u))
            return id == CQL_TYPE_UUID
                       ? cql_error_record(err, CQL_ERR_INVALID, "Unable to make UUID from '%.*s'",
                                          (int)len, s)
                       : cql_error_record(err, CQL_ERR_INVALID,
                                          "Unknown timeuuid representation: %.*s", (int)len, s);
        if (id == CQL_TYPE_TIMEUUID && (u[6] >> 4) != 1)
            return cql_error_record(err, CQL_ERR_INVALID, "TimeUUID supports only version 1 UUIDs");
        rc = buf_append(out, u, 16);
        break;
    }
    case CQL_TYPE_TIMESTAMP: {
        int64_t ms;
        if (timestamp_from_text(s, len, &ms, err)) return CQLVAL_ERROR;
        rc = put_int(out, CQL_TYPE_BIGINT, ms);
        break;
    }
    case CQL_TYPE_DATE: {
        int64_t days;
        if (date_from_text(s, len, &days, err)) return CQLVAL_ERROR;
        uint8_t b[4];
        cql_date_encode(days, b);
        rc = buf_append(out, b, 4);
        break;
    }
    case CQL_TYPE_TIME: {
        int64_t ns;
        if (time_from_text(s, len, &ns, err)) return CQLVAL_ERROR;
        uint8_t b[8];
        cql_time_encode(ns, b);
        rc = buf_append(out, b, 8);
        break;
    }
    case CQL_TYPE_DURATION: {
        duration d;
        if (parse_duration(s, len, &d)) return duration_error(err, s, len, &d);
        rc = cql_duration_encode((int32_t)d.months, (int32_t)d.days, d.nanos, out);
        break;
    }
    case CQL_TYPE_INET:
        if (inet_from_text(s, len, out))
            return cql_error_record(err, CQL_ERR_INVALID, "Unable to make inet address from '%.*s'",
                                    (int)len, s);
        break;
    default:
        return cql_error_record(err, CQL_ERR_INVALID, "Cannot make a value of type %s from text",
                                tname(t));
    }
    if (rc) {
        out->len = start;
        return full(err);
    }
    return CQLVAL_OK;
}

/* ---- canonical collections: sets and maps sorted, duplicates dropped ---- */

typedef struct span {
    const uint8_t *p;
    int32_t len;
    const uint8_t *vp; /* maps: the value */
    int32_t vlen;
    size_t index;
} span;

static int span_cmp(const void *a, const void *b, void *ctx)
{
    const span *x = a, *y = b;
    int c = cqlval_compare(ctx, x->p, (size_t)x->len, y->p, (size_t)y->len);
    if (c) return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int canonical(const cql_ctype *t, const uint8_t *p, size_t len, buf *out);

/* Appends [bytes] of element v (canonicalised) to out. */
static int put_canonical_element(const cql_ctype *t, const uint8_t *v, int32_t vlen, buf *out)
{
    if (vlen < 0) return cql_element_put(out, NULL, -1);
    size_t at = out->len;
    uint8_t zero[4] = {0};
    if (buf_append(out, zero, 4)) return -1;
    if (canonical(t, v, (size_t)vlen, out)) return -1;
    cql_int_encode((int32_t)(out->len - at - 4), (uint8_t *)out->data + at);
    return 0;
}

static int canonical(const cql_ctype *t, const uint8_t *p, size_t len, buf *out)
{
    uint16_t id = id_of(t);
    if (len == 0 || (id != CQL_TYPE_LIST && id != CQL_TYPE_SET && id != CQL_TYPE_MAP &&
                     id != CQL_TYPE_TUPLE && id != CQL_TYPE_UDT))
        return buf_append(out, p, len);
    cql_elements e;
    const uint8_t *v;
    int32_t vlen;
    if (id == CQL_TYPE_TUPLE || id == CQL_TYPE_UDT) {
        cql_fields_open(&e, p, len);
        for (uint16_t i = 0; i < t->wire.n; i++) {
            int r = cql_element_next(&e, &v, &vlen);
            if (r < 0) return -1;
            if (r == 0) break;
            if (put_canonical_element(t->args[i], v, vlen, out)) return -1;
        }
        return 0;
    }
    uint32_t count;
    int pairs = id == CQL_TYPE_MAP;
    if (cql_collection_open(&e, p, len, pairs, &count)) return -1;
    span *s = count ? malloc(count * sizeof *s) : NULL;
    if (count && !s) return -1;
    int rc = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        if (cql_element_next(&e, &s[i].p, &s[i].len) != 1) rc = -1;
        if (!rc && pairs && cql_element_next(&e, &s[i].vp, &s[i].vlen) != 1) rc = -1;
        s[i].index = i;
    }
    const cql_ctype *et = t->args[0];
    if (!rc && id != CQL_TYPE_LIST && count > 1) qsort_r(s, count, sizeof *s, span_cmp, (void *)et);
    size_t at = rc ? 0 : cql_collection_begin(out);
    if (at == (size_t)-1) rc = -1;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < count && !rc; i++) {
        /* of equal keys keep the last written: the last of its run after the sort */
        if (id != CQL_TYPE_LIST && i + 1 < count && s[i].len >= 0 && s[i + 1].len >= 0 &&
            cqlval_compare(et, s[i].p, (size_t)s[i].len, s[i + 1].p, (size_t)s[i + 1].len) == 0)
            continue;
        rc = put_canonical_element(et, s[i].p, s[i].len, out);
        if (!rc && pairs) rc = put_canonical_element(t->args[1], s[i].vp, s[i].vlen, out);
        kept++;
    }
    if (!rc) cql_collection_end(out, at, kept);
    free(s);
    return rc;
}

int cqlval_canonical(const cql_ctype *t, const uint8_t *p, size_t len, buf *out)
{
    size_t start = out->len;
    int rc = canonical(t, p, len, out);
    if (rc) out->len = start;
    return rc;
}

/* ---- terms ---- */

static const char *const constant_names[] = {
    [CQL_E_STRING] = "STRING",   [CQL_E_INTEGER] = "INTEGER",   [CQL_E_FLOAT] = "FLOAT",
    [CQL_E_BOOLEAN] = "BOOLEAN", [CQL_E_DURATION] = "DURATION", [CQL_E_UUID] = "UUID",
    [CQL_E_HEX] = "HEX",         [CQL_E_NAN] = "FLOAT",         [CQL_E_INFINITY] = "FLOAT"};

/* Whether a constant of kind k may be assigned to native type id (Constants.Literal's
 * testAssignment). */
static int assignable(cql_expr_kind k, uint16_t id)
{
    if (id == CQL_TYPE_CUSTOM) return 1;
    switch (k) {
    case CQL_E_STRING:
        return id == CQL_TYPE_ASCII || id == CQL_TYPE_VARCHAR || id == CQL_TYPE_INET ||
               id == CQL_TYPE_DATE || id == CQL_TYPE_TIME || id == CQL_TYPE_TIMESTAMP;
    case CQL_E_INTEGER:
        return id == CQL_TYPE_BIGINT || id == CQL_TYPE_COUNTER || id == CQL_TYPE_DATE ||
               id == CQL_TYPE_DECIMAL || id == CQL_TYPE_DOUBLE || id == CQL_TYPE_DURATION ||
               id == CQL_TYPE_FLOAT || id == CQL_TYPE_INT || id == CQL_TYPE_SMALLINT ||
               id == CQL_TYPE_TIME || id == CQL_TYPE_TIMESTAMP || id == CQL_TYPE_TINYINT ||
               id == CQL_TYPE_VARINT;
    case CQL_E_UUID:
        return id == CQL_TYPE_UUID || id == CQL_TYPE_TIMEUUID;
    case CQL_E_FLOAT:
    case CQL_E_NAN:
    case CQL_E_INFINITY:
        return id == CQL_TYPE_DECIMAL || id == CQL_TYPE_DOUBLE || id == CQL_TYPE_FLOAT;
    case CQL_E_BOOLEAN:
        return id == CQL_TYPE_BOOLEAN;
    case CQL_E_HEX:
        return id == CQL_TYPE_BLOB;
    case CQL_E_DURATION:
        return id == CQL_TYPE_DURATION;
    default:
        return 0;
    }
}

static int is_constant(cql_expr_kind k)
{
    return k == CQL_E_STRING || k == CQL_E_INTEGER || k == CQL_E_FLOAT || k == CQL_E_BOOLEAN ||
           k == CQL_E_DURATION || k == CQL_E_UUID || k == CQL_E_HEX || k == CQL_E_NAN ||
           k == CQL_E_INFINITY;
}

/* Cassandra's TupleType.fromString: components split on each ':' not after a '\\', "@" for
 * a null component, "\\:" and "\\@" read as ':' and '@', each component by its type's
 * fromString; fewer components than the type has leave the rest unset, as a tuple literal
 * does. */
static int tuple_from_text(const cql_ctype *t, const char *s, size_t len, buf *out,
                           cql_parse_error *err, int depth)
{
    size_t nparts = len ? 1 : 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] == ':' && (i == 0 || s[i - 1] != '\\')) nparts++;
    if (nparts > t->wire.n)
        return cql_error_record(err, CQL_ERR_INVALID,
                                "Invalid tuple literal: too many elements. Type %s expects %u "
                                "but got %zu",
                                tname(t), (unsigned)t->wire.n, nparts);
    buf part, val;
    buf_init(&part, len + 1);
    buf_init(&val, out->max);
    int rc = CQLVAL_OK;
    size_t start = 0;
    for (size_t k = 0; k < nparts && rc == CQLVAL_OK; k++) {
        size_t end = start;
        while (end < len && !(s[end] == ':' && (end == 0 || s[end - 1] != '\\')))
            end++;
        if (end - start == 1 && s[start] == '@') {
            if (cql_element_put(out, NULL, -1)) rc = full(err);
            start = end + 1;
            continue;
        }
        part.len = val.len = 0;
        for (size_t i = start; i < end && rc == CQLVAL_OK; i++) {
            int escaped = s[i] == '\\' && i + 1 < end && (s[i + 1] == ':' || s[i + 1] == '@');
            if (buf_putc(&part, escaped ? s[++i] : s[i])) rc = full(err);
        }
        const cql_ctype *ct = t->args[k];
        if (rc == CQLVAL_OK && id_of(ct) == CQL_TYPE_TUPLE && depth < CQL_TYPE_MAX_DEPTH)
            rc = tuple_from_text(ct, part.data ? part.data : "", part.len, &val, err, depth + 1);
        else if (rc == CQLVAL_OK && (cqltype_native(id_of(ct)) || id_of(ct) == CQL_TYPE_CUSTOM))
            rc = cqlval_from_text(ct, part.data ? part.data : "", part.len, &val, err);
        else if (rc == CQLVAL_OK)
            rc = cql_error_record(err, CQL_ERR_INVALID, "Invalid STRING constant (%.*s) for %s",
                                  (int)len, s, tname(t));
        if (rc == CQLVAL_OK && cql_element_put(out, val.data, (int32_t)val.len)) rc = full(err);
        start = end + 1;
    }
    buf_free(&part);
    buf_free(&val);
    return rc;
}

static int constant(const cql_ctype *t, const char *receiver, const cql_expr *e, buf *out,
                    cql_parse_error *err)
{
    char text[64];
    const char *s = e->text;
    if (e->kind == CQL_E_NAN || e->kind == CQL_E_INFINITY) {
        snprintf(text, sizeof text, "%s%s", e->negative ? "-" : "",
                 e->kind == CQL_E_NAN ? "NaN" : "Infinity");
        s = text;
    }
    uint16_t id = id_of(t);
    if (id == CQL_TYPE_TUPLE && e->kind == CQL_E_STRING)
        return tuple_from_text(t, s, strlen(s), out, err, 0);
    int native = cqltype_native(id) != NULL || id == CQL_TYPE_CUSTOM;
    if (!native || !assignable(e->kind, id))
        return cql_error_record(err, CQL_ERR_INVALID,
                                "Invalid %s constant (%s) for \"%s\" of type %s",
                                constant_names[e->kind], s, receiver, tname(t));
    if (e->kind == CQL_E_HEX) {
        size_t start = out->len;
        if (hex_decode(s + 2, strlen(s) - 2, out)) {
            out->len = start;
            return cql_error_record(err, CQL_ERR_INVALID, "cannot parse '%s' as hex bytes", s + 2);
        }
        return CQLVAL_OK;
    }
    if (e->kind == CQL_E_BOOLEAN) return buf_putc(out, strcmp(s, "true") == 0) ? full(err) : 0;
    if (e->kind == CQL_E_DURATION || (id == CQL_TYPE_DURATION && e->kind == CQL_E_INTEGER)) {
        duration d;
        if (parse_duration(s, strlen(s), &d)) return duration_error(err, s, strlen(s), &d);
        if (id != CQL_TYPE_DURATION)
            return cql_error_record(err, CQL_ERR_INVALID, "Invalid DURATION constant (%s)", s);
        return cql_duration_encode((int32_t)d.months, (int32_t)d.days, d.nanos, out) ? full(err)
                                                                                     : 0;
    }
    return cqlval_from_text(t, s, strlen(s), out, err);
}

int cqlval_assignable(const cql_ctype *t, const cql_expr *e)
{
    uint16_t id = id_of(t);
    switch (e->kind) {
    case CQL_E_NULL:
        return id == CQL_TYPE_COUNTER ? 0 : 1;
    case CQL_E_LIST:
        return id == CQL_TYPE_LIST;
    case CQL_E_SET:
        return id == CQL_TYPE_SET || (id == CQL_TYPE_MAP && e->nitems == 0);
    case CQL_E_MAP:
        return id == CQL_TYPE_MAP;
    case CQL_E_TUPLE:
        if (id != CQL_TYPE_TUPLE && e->nitems == 1) return cqlval_assignable(t, e->items[0]);
        return id == CQL_TYPE_TUPLE;
    case CQL_E_UDT:
        return id == CQL_TYPE_UDT;
    default:
        break;
    }
    if (!is_constant(e->kind)) return 1;
    if (id == CQL_TYPE_TUPLE && e->kind == CQL_E_STRING) return 1;
    if (!cqltype_native(id) && id != CQL_TYPE_CUSTOM) return 0;
    if (!assignable(e->kind, id)) return 0;
    uint16_t preferred = 0;
    switch (e->kind) {
    case CQL_E_STRING:
        preferred = cql_ascii_valid((const uint8_t *)e->text, strlen(e->text)) ? CQL_TYPE_ASCII
                                                                               : CQL_TYPE_VARCHAR;
        break;
    case CQL_E_INTEGER: {
        int64_t v;
        size_t n = strlen(e->text);
        preferred = parse_int(e->text, n, INT32_MIN, INT32_MAX, &v) == 0   ? CQL_TYPE_INT
                    : parse_int(e->text, n, INT64_MIN, INT64_MAX, &v) == 0 ? CQL_TYPE_BIGINT
                                                                           : CQL_TYPE_VARINT;
        break;
    }
    case CQL_E_UUID:
        preferred = strlen(e->text) > 14 && e->text[14] == '1' ? CQL_TYPE_TIMEUUID : CQL_TYPE_UUID;
        break;
    case CQL_E_FLOAT:
    case CQL_E_NAN:
    case CQL_E_INFINITY:
        preferred = CQL_TYPE_DOUBLE;
        break;
    case CQL_E_BOOLEAN:
        preferred = CQL_TYPE_BOOLEAN;
        break;
    case CQL_E_HEX:
        preferred = CQL_TYPE_BLOB;
        break;
    case CQL_E_DURATION:
        preferred = CQL_TYPE_DURATION;
        break;
    default:
        break;
    }
    return preferred == id ? 2 : 1;
}

/* Runs the caller's hook for a non-constant term, or fails. */
static int hook(const cqlval_terms *terms, const cql_ctype *t, const char *receiver,
                const cql_expr *e, buf *out, cql_parse_error *err)
{
    if (terms && terms->fn) return terms->fn(terms->ctx, t, receiver, e, out, err);
    return cql_error_record(err, CQL_ERR_INVALID,
                            "Invalid term for \"%s\" of type %s: only constants are allowed here",
                            receiver, tname(t));
}

static int term(const cql_ctype *t, const char *receiver, const cql_expr *e,
                const cqlval_terms *terms, buf *out, cql_parse_error *err, int depth);

/* An element of a literal: appends [bytes]; nulls only where allowed. */
static int element(const cql_ctype *t, const char *receiver, const cql_expr *e,
                   const cqlval_terms *terms, buf *out, cql_parse_error *err, int depth,
                   int null_ok)
{
    size_t at = out->len;
    uint8_t zero[4] = {0};
    if (buf_append(out, zero, 4)) return full(err);
    int r = term(t, receiver, e, terms, out, err, depth + 1);
    if (r == CQLVAL_ERROR) return r;
    if (r == CQLVAL_UNSET) { /* the caller decides what an unset element means */
        out->len = at;
        return CQLVAL_UNSET;
    }
    if (r == CQLVAL_NULL) {
        out->len = at;
        if (!null_ok)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "null is not supported inside collections");
        return cql_element_put(out, NULL, -1) ? full(err) : CQLVAL_OK;
    }
    cql_int_encode((int32_t)(out->len - at - 4), (uint8_t *)out->data + at);
    return CQLVAL_OK;
}

/* Whether tuple literal e could be assigned to t: a tuple type with at least as many
 * components, each nested tuple literal fitting its component (Cassandra's
 * Tuples.Literal.testAssignment, which tells a mismatch before any value is read). */
static int tuple_literal_fits(const cql_ctype *t, const cql_expr *e, int depth)
{
    if (id_of(t) != CQL_TYPE_TUPLE) return e->nitems == 1;
    if (e->nitems > t->wire.n || depth > CQL_TYPE_MAX_DEPTH) return 0;
    for (size_t i = 0; i < e->nitems; i++)
        if (e->items[i]->kind == CQL_E_TUPLE &&
            !tuple_literal_fits(t->args[i], e->items[i], depth + 1))
            return 0;
    return 1;
}

static int term(const cql_ctype *t, const char *receiver, const cql_expr *e,
                const cqlval_terms *terms, buf *out, cql_parse_error *err, int depth)
{
    uint16_t id = id_of(t);
    char sub[300];
    if (depth > CQL_TYPE_MAX_DEPTH)
        return cql_error_record(err, CQL_ERR_INVALID, "Literal for \"%s\" is nested too deep",
                                receiver);
    if (e->kind == CQL_E_NULL) {
        if (id == CQL_TYPE_COUNTER)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Invalid null value for counter increment/decrement");
        return CQLVAL_NULL;
    }
    if (is_constant(e->kind)) return constant(t, receiver, e, out, err);
    switch (e->kind) {
    case CQL_E_LIST: {
        if (id != CQL_TYPE_LIST)
            return cql_error_record(err, CQL_ERR_INVALID, "Invalid list literal for %s of type %s",
                                    receiver, tname(t));
        snprintf(sub, sizeof sub, "value(%s)", receiver);
        size_t at = cql_collection_begin(out);
        if (at == (size_t)-1) return full(err);
        for (size_t i = 0; i < e->nitems; i++) {
            /* an unset element leaves the whole list unset, as in Cassandra */
            int r = element(t->args[0], sub, e->items[i], terms, out, err, depth, 0);
            if (r != CQLVAL_OK) return r;
        }
        cql_collection_end(out, at, (uint32_t)e->nitems);
        return CQLVAL_OK;
    }
    case CQL_E_SET:
        if (id == CQL_TYPE_MAP && e->nitems == 0) {
            size_t at = cql_collection_begin(out);
            if (at == (size_t)-1) return full(err);
            return CQLVAL_OK;
        }
        if (id != CQL_TYPE_SET)
            return cql_error_record(err, CQL_ERR_INVALID, "Invalid set literal for %s of type %s",
                                    receiver, tname(t));
        /* fall through: written like a list, sorted below */
        {
            snprintf(sub, sizeof sub, "value(%s)", receiver);
            buf raw;
            buf_init(&raw, out->max);
            size_t at = cql_collection_begin(&raw);
            if (at == (size_t)-1) return full(err);
            for (size_t i = 0; i < e->nitems; i++) {
                int r = element(t->args[0], sub, e->items[i], terms, &raw, err, depth, 0);
                if (r != CQLVAL_OK) {
                    buf_free(&raw);
                    return r;
                }
            }
            cql_collection_end(&raw, at, (uint32_t)e->nitems);
            int rc = cqlval_canonical(t, (const uint8_t *)raw.data, raw.len, out);
            buf_free(&raw);
            return rc ? full(err) : CQLVAL_OK;
        }
    case CQL_E_MAP: {
        if (id != CQL_TYPE_MAP)
            return cql_error_record(err, CQL_ERR_INVALID, "Invalid map literal for %s of type %s",
                                    receiver, tname(t));
        char ksub[300];
        snprintf(ksub, sizeof ksub, "key(%s)", receiver);
        snprintf(sub, sizeof sub, "value(%s)", receiver);
        buf raw;
        buf_init(&raw, out->max);
        size_t at = cql_collection_begin(&raw);
        if (at == (size_t)-1) return full(err);
        for (size_t i = 0; i + 1 < e->nitems; i += 2) {
            int r = element(t->args[0], ksub, e->items[i], terms, &raw, err, depth, 0);
            if (r == CQLVAL_UNSET)
                r = cql_error_record(err, CQL_ERR_INVALID,
                                     "unset value is not supported for map keys");
            if (r == CQLVAL_OK)
                r = element(t->args[1], sub, e->items[i + 1], terms, &raw, err, depth, 0);
            if (r != CQLVAL_OK) {
                buf_free(&raw);
                return r;
            }
        }
        cql_collection_end(&raw, at, (uint32_t)(e->nitems / 2));
        int rc = cqlval_canonical(t, (const uint8_t *)raw.data, raw.len, out);
        buf_free(&raw);
        return rc ? full(err) : CQLVAL_OK;
    }
    case CQL_E_TUPLE: {
        /* one term in parentheses reads as a tuple only where a tuple is expected */
        if (id != CQL_TYPE_TUPLE && e->nitems == 1)
            return term(t, receiver, e->items[0], terms, out, err, depth + 1);
        if (id != CQL_TYPE_TUPLE)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Invalid tuple type literal for %s of type %s", receiver,
                                    tname(t));
        if (e->nitems > t->wire.n)
            return cql_error_record(
                err, CQL_ERR_INVALID,
                "Invalid tuple literal for %s: too many elements. Type %s expects %u but "
                "got %zu",
                receiver, tname(t), (unsigned)t->wire.n, e->nitems);
        for (size_t i = 0; i < e->nitems; i++)
            if (e->items[i]->kind == CQL_E_TUPLE &&
                !tuple_literal_fits(t->args[i], e->items[i], depth + 1))
                return cql_error_record(
                    err, CQL_ERR_INVALID,
                    "Invalid tuple literal for %s: component %zu is not of type %s", receiver, i,
                    tname(t->args[i]));
        for (size_t i = 0; i < e->nitems; i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", receiver, i);
            int r = element(t->args[i], sub, e->items[i], terms, out, err, depth, 1);
            if (r == CQLVAL_UNSET)
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "Invalid unset value for tuple field number %zu", i);
            if (r != CQLVAL_OK) return r;
        }
        return CQLVAL_OK;
    }
    case CQL_E_UDT: {
        if (id != CQL_TYPE_UDT)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Invalid user type literal for %s of type %s", receiver,
                                    tname(t));
        for (size_t i = 0; i < e->nitems; i++) {
            uint16_t f = 0;
            while (f < t->wire.n && strcmp(t->wire.field_names[f], e->fields[i]) != 0)
                f++;
            if (f == t->wire.n)
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "Unknown field '%s' in value of user defined type %s",
                                        e->fields[i], t->wire.name);
        }
        for (uint16_t f = 0; f < t->wire.n; f++) {
            const cql_expr *v = NULL;
            for (size_t i = 0; i < e->nitems; i++)
                if (strcmp(t->wire.field_names[f], e->fields[i]) == 0) v = e->items[i];
            if (!v) {
                if (cql_element_put(out, NULL, -1)) return full(err);
                continue;
            }
            snprintf(sub, sizeof sub, "%s.%s", receiver, t->wire.field_names[f]);
            int r = element(t->args[f], sub, v, terms, out, err, depth, 1);
            if (r == CQLVAL_UNSET)
                return cql_error_record(
                    err, CQL_ERR_INVALID,
                    "Invalid unset value for field '%s' of user defined type %s",
                    t->wire.field_names[f], t->wire.name);
            if (r != CQLVAL_OK) return r;
        }
        return CQLVAL_OK;
    }
    case CQL_E_WORD:
    case CQL_E_COLUMN:
        return cql_error_record(err, CQL_ERR_INVALID, "Invalid term %s for \"%s\" of type %s",
                                e->text ? e->text : "", receiver, tname(t));
    default:
        return hook(terms, t, receiver, e, out, err);
    }
}

int cqlval_from_term(const cql_ctype *t, const char *receiver, const cql_expr *e,
                     const cqlval_terms *terms, buf *out, cql_parse_error *err)
{
    size_t start = out->len;
    int r = term(t, receiver, e, terms, out, err, 0);
    if (r != CQLVAL_OK) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
    }
    return r;
}

/* ---- validation ---- */

static int validate(const cql_ctype *t, const uint8_t *p, size_t len, cql_parse_error *err,
                    int depth)
{
    uint16_t id = id_of(t);
    if (depth > CQL_TYPE_MAX_DEPTH)
        return cql_error_record(err, CQL_ERR_INVALID, "Value nested too deep");
    if (len == 0 && (allows_empty(id) || is_textual(id))) return 0;
    switch (id) {
    case CQL_TYPE_INT:
        return len == 4
                   ? 0
                   : cql_error_record(err, CQL_ERR_INVALID, "Expected 4 or 0 byte int (%zu)", len);
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
        return len == 8
                   ? 0
                   : cql_error_record(err, CQL_ERR_INVALID, "Expected 8 or 0 byte long (%zu)", len);
    case CQL_TYPE_SMALLINT:
        return len == 2 ? 0
                        : cql_error_record(err, CQL_ERR_INVALID,
                                           "Expected 2 bytes for a smallint (%zu)", len);
    case CQL_TYPE_TINYINT:
        return len == 1 ? 0
                        : cql_error_record(err, CQL_ERR_INVALID,
                                           "Expected 1 byte for a tinyint (%zu)", len);
    case CQL_TYPE_FLOAT:
        return len == 4 ? 0
                        : cql_error_record(err, CQL_ERR_INVALID,
                                           "Expected 4 or 0 byte value for a float (%zu)", len);
    case CQL_TYPE_DOUBLE:
        return len == 8 ? 0
                        : cql_error_record(err, CQL_ERR_INVALID,
                                           "Expected 8 or 0 byte value for a double (%zu)", len);
    case CQL_TYPE_BOOLEAN:
        return len == 1 ? 0
                        : cql_error_record(err, CQL_ERR_INVALID, "Expected 1 or 0 byte value (%zu)",
                                           len);
    case CQL_TYPE_TIMESTAMP:
        return len == 8 ? 0
                        : cql_error_record(err, CQL_ERR_INVALID,
                                           "Expected 8 or 0 byte long for date (%zu)", len);
    case CQL_TYPE_DATE:
        return len == 4 ? 0
                        : cql_error_record(err, CQL_ERR_INVALID,
                                           "Expected 4 byte long for date (%zu)", len);
    case CQL_TYPE_TIME: {
        int64_t ns;
        if (len != 8)
            return cql_error_record(err, CQL_ERR_INVALID, "Expected 8 byte long for time (%zu)",
                                    len);
        if (cql_time_decode(p, len, &ns))
            return cql_error_record(err, CQL_ERR_INVALID, "Time value out of bounds");
        return 0;
    }
    case CQL_TYPE_UUID:
        return len == 16 ? 0
                         : cql_error_record(err, CQL_ERR_INVALID,
                                            "UUID should be 16 or 0 bytes (%zu)", len);
    case CQL_TYPE_TIMEUUID:
        if (len != 16)
            return cql_error_record(err, CQL_ERR_INVALID, "UUID should be 16 or 0 bytes (%zu)",
                                    len);
        return (p[6] >> 4) == 1
                   ? 0
                   : cql_error_record(err, CQL_ERR_INVALID, "Invalid version for TimeUUID type.");
    case CQL_TYPE_INET:
        return len == 4 || len == 16
                   ? 0
                   : cql_error_record(err, CQL_ERR_INVALID,
                                      "Expected 4 or 16 byte inetaddress; got %zu bytes", len);
    case CQL_TYPE_VARINT:
    case CQL_TYPE_BLOB:
    case CQL_TYPE_CUSTOM:
        return 0;
    case CQL_TYPE_DECIMAL:
        return len >= 5 ? 0
                        : cql_error_record(err, CQL_ERR_INVALID,
                                           "Expected 0 or at least 5 bytes (%zu)", len);
    case CQL_TYPE_ASCII:
        for (size_t i = 0; i < len; i++)
            if (p[i] & 0x80)
                return cql_error_record(err, CQL_ERR_INVALID, "Invalid byte for ascii: %d",
                                        (int)(int8_t)p[i]);
        return 0;
    case CQL_TYPE_VARCHAR:
        return cql_utf8_valid(p, len)
                   ? 0
                   : cql_error_record(err, CQL_ERR_INVALID, "String didn't validate.");
    case CQL_TYPE_DURATION: {
        int32_t m, d;
        int64_t n;
        char why[200];
        if (len < 3)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Expected at least 3 bytes for a duration (%zu)", len);
        if (cql_duration_decode(p, len, &m, &d, &n, why, sizeof why))
            return cql_error_record(err, CQL_ERR_INVALID, "%s", why);
        return 0;
    }
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_MAP: {
        cql_elements e;
        uint32_t count;
        int pairs = id == CQL_TYPE_MAP;
        if (cql_collection_open(&e, p, len, pairs, &count))
            return cql_error_record(err, CQL_ERR_INVALID, "Not enough bytes to read a %s",
                                    id == CQL_TYPE_MAP   ? "map"
                                    : id == CQL_TYPE_SET ? "set"
                                                         : "list");
        const uint8_t *v;
        int32_t vlen;
        for (uint64_t i = 0; i < (uint64_t)count * (pairs ? 2 : 1); i++) {
            if (cql_element_next(&e, &v, &vlen) != 1)
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "Not enough bytes to read %s element %llu", tname(t),
                                        (unsigned long long)i);
            if (vlen < 0)
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "null is not supported inside collections");
            if (validate(t->args[pairs ? i % 2 : 0], v, (size_t)vlen, err, depth + 1)) return -1;
        }
        if (cql_element_next(&e, &v, &vlen) != 0)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Unexpected extraneous bytes after %s value", tname(t));
        return 0;
    }
    case CQL_TYPE_TUPLE:
    case CQL_TYPE_UDT: {
        cql_elements e;
        cql_fields_open(&e, p, len);
        const uint8_t *v;
        int32_t vlen;
        for (uint16_t i = 0;; i++) {
            int r = cql_element_next(&e, &v, &vlen);
            if (r == 0) return 0;
            if (r < 0)
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "Not enough bytes to read field %u of %s", i, tname(t));
            if (i >= t->wire.n)
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "Invalid remaining data after end of %s value",
                                        id == CQL_TYPE_UDT ? "UDT" : "tuple");
            if (vlen >= 0 && validate(t->args[i], v, (size_t)vlen, err, depth + 1)) return -1;
        }
    }
    }
    return cql_error_record(err, CQL_ERR_INVALID, "Unknown type %s", tname(t));
}

int cqlval_validate(const cql_ctype *t, const uint8_t *p, size_t len, cql_parse_error *err)
{
    return validate(t, p, len, err, 0) ? -1 : 0;
}

/* ---- comparison ---- */

static int cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return alen < blen ? -1 : alen > blen;
}

/* Strips bytes that only repeat the sign. */
static void varint_trim(const uint8_t **p, size_t *len)
{
    while (*len > 1 &&
           (((*p)[0] == 0x00 && !((*p)[1] & 0x80)) || ((*p)[0] == 0xff && ((*p)[1] & 0x80)))) {
        (*p)++;
        (*len)--;
    }
}

static int cmp_varint(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    varint_trim(&a, &alen);
    varint_trim(&b, &blen);
    int an = a[0] & 0x80, bn = b[0] & 0x80;
    if (an != bn) return an ? -1 : 1;
    if (alen != blen) return (alen < blen) == !an ? -1 : 1;
    int c = memcmp(a, b, alen);
    return c < 0 ? -1 : c > 0;
}

static int cmp_decimal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    decnorm x, y;
    decimal_norm(a, alen, &x);
    decimal_norm(b, blen, &y);
    int c;
    if (x.sign != y.sign) {
        c = x.sign < y.sign ? -1 : 1;
    } else if (x.sign == 0) {
        c = 0;
    } else if (x.exp != y.exp) {
        c = (x.exp < y.exp ? -1 : 1) * x.sign;
    } else {
        c = cmp_bytes((const uint8_t *)x.digits.data, x.digits.len, (const uint8_t *)y.digits.data,
                      y.digits.len) *
            x.sign;
    }
    buf_free(&x.digits);
    buf_free(&y.digits);
    return c;
}

/* Float.compare and Double.compare: -0.0 before 0.0, NaN after everything. */
static uint64_t float_key(const uint8_t *p, size_t len)
{
    uint64_t bits = 0;
    if (len == 4) {
        float f;
        cql_float_decode(p, 4, &f);
        if (isnan(f)) return UINT64_MAX;
        bits = be32_read(p);
        return (bits & 0x80000000u) ? ~bits & 0xffffffffu : bits | 0x80000000u;
    }
    double d;
    cql_double_decode(p, 8, &d);
    if (isnan(d)) return UINT64_MAX;
    bits = be64_read(p);
    return (bits & 0x8000000000000000ull) ? ~bits : bits | 0x8000000000000000ull;
}

static uint64_t timeuuid_time(const uint8_t *u)
{
    uint64_t msb = be64_read(u);
    return ((msb & 0x0fff) << 48) | (((msb >> 16) & 0xffff) << 32) | (msb >> 32);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_uuid(const uint8_t *a, const uint8_t *b, int timeuuid)
{
    int va = a[6] >> 4, vb = b[6] >> 4;
    if (!timeuuid && va != vb) return va < vb ? -1 : 1;
    int c;
    if (timeuuid || va == 1)
        c = cmp_u64(timeuuid_time(a), timeuuid_time(b));
    else
        c = cmp_u64(be64_read(a), be64_read(b));
    if (c) return c;
    if (timeuuid) {
        for (int i = 8; i < 16; i++)
            if (a[i] != b[i]) return (int8_t)a[i] < (int8_t)b[i] ? -1 : 1;
        return 0;
    }
    return cmp_u64(be64_read(a + 8), be64_read(b + 8));
}

static int cmp_elements(const cql_ctype *t, const uint8_t *a, size_t alen, const uint8_t *b,
                        size_t blen)
{
    uint16_t id = id_of(t);
    cql_elements x, y;
    const uint8_t *xv, *yv;
    int32_t xl, yl;
    if (id == CQL_TYPE_TUPLE || id == CQL_TYPE_UDT) {
        cql_fields_open(&x, a, alen);
        cql_fields_open(&y, b, blen);
        for (uint16_t i = 0;; i++) {
            int rx = cql_element_next(&x, &xv, &xl), ry = cql_element_next(&y, &yv, &yl);
            if (rx != 1 && ry != 1) return 0;
            if (rx != 1) return yl < 0 ? 0 : -1;
            if (ry != 1) return xl < 0 ? 0 : 1;
            if (i >= t->wire.n) return 0;
            if (xl < 0 || yl < 0) {
                if (xl < 0 && yl < 0) continue;
                return xl < 0 ? -1 : 1;
            }
            int c = cqlval_compare(t->args[i], xv, (size_t)xl, yv, (size_t)yl);
            if (c) return c;
        }
    }
    uint32_t nx, ny;
    int pairs = id == CQL_TYPE_MAP;
    if (cql_collection_open(&x, a, alen, pairs, &nx) ||
        cql_collection_open(&y, b, blen, pairs, &ny))
        return cmp_bytes(a, alen, b, blen);
    uint64_t n = (uint64_t)(nx < ny ? nx : ny) * (pairs ? 2 : 1);
    for (uint64_t i = 0; i < n; i++) {
        if (cql_element_next(&x, &xv, &xl) != 1 || cql_element_next(&y, &yv, &yl) != 1 || xl < 0 ||
            yl < 0)
            return cmp_bytes(a, alen, b, blen);
        int c = cqlval_compare(t->args[pairs ? i % 2 : 0], xv, (size_t)xl, yv, (size_t)yl);
        if (c) return c;
    }
    return nx < ny ? -1 : nx > ny;
}

int cqlval_compare(const cql_ctype *t, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    if (alen == 0 || blen == 0) return alen == blen ? 0 : alen == 0 ? -1 : 1;
    switch (id_of(t)) {
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_TIMESTAMP:
    case CQL_TYPE_TIME: {
        if (alen != blen || alen > 8) return cmp_bytes(a, alen, b, blen);
        int64_t x = (int8_t)a[0], y = (int8_t)b[0];
        for (size_t i = 1; i < alen; i++) {
            x = x * 256 + a[i];
            y = y * 256 + b[i];
        }
        return cmp_i64(x, y);
    }
    case CQL_TYPE_VARINT:
        return cmp_varint(a, alen, b, blen);
    case CQL_TYPE_DECIMAL:
        return cmp_decimal(a, alen, b, blen);
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE:
        if (alen != blen || (alen != 4 && alen != 8)) return cmp_bytes(a, alen, b, blen);
        return cmp_u64(float_key(a, alen), float_key(b, blen));
    case CQL_TYPE_UUID:
    case CQL_TYPE_TIMEUUID:
        if (alen != 16 || blen != 16) return cmp_bytes(a, alen, b, blen);
        return cmp_uuid(a, b, id_of(t) == CQL_TYPE_TIMEUUID);
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_MAP:
    case CQL_TYPE_TUPLE:
    case CQL_TYPE_UDT:
        return cmp_elements(t, a, alen, b, blen);
    default: /* text, ascii, blob, inet, boolean, date, duration, custom: by bytes */
        return cmp_bytes(a, alen, b, blen);
    }
}

/* ---- writing values as text ---- */

static int timestamp_put(buf *out, int64_t ms, char sep, int json)
{
    int64_t days = floor_div(ms, 86400000), rem = ms - days * 86400000;
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    return buf_printf(out, "%04lld-%02d-%02d%c%02d:%02d:%02d.%03dZ", (long long)y, m, d, sep,
                      (int)(rem / 3600000), (int)(rem / 60000 % 60), (int)(rem / 1000 % 60),
                      (int)(rem % 1000)) +
           (json ? 0 : 0);
}

static int date_put(buf *out, int64_t days)
{
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    return buf_printf(out, "%04lld-%02d-%02d", (long long)y, m, d);
}

static int time_put(buf *out, int64_t ns)
{
    int64_t s = ns / 1000000000LL;
    return buf_printf(out, "%02d:%02d:%02d.%09lld", (int)(s / 3600), (int)(s / 60 % 60),
                      (int)(s % 60), (long long)(ns % 1000000000LL));
}

static int inet_put(buf *out, const uint8_t *p, size_t len)
{
    if (len == 4) return buf_printf(out, "%u.%u.%u.%u", p[0], p[1], p[2], p[3]);
    int rc = 0;
    for (int i = 0; i < 8 && !rc; i++)
        rc = buf_printf(out, i ? ":%x" : "%x", (unsigned)(p[2 * i] << 8 | p[2 * i + 1]));
    return rc;
}

static int quoted_put(buf *out, const uint8_t *p, size_t len)
{
    int rc = buf_putc(out, '\'');
    for (size_t i = 0; i < len && !rc; i++)
        rc = p[i] == '\'' ? buf_puts(out, "''") : buf_putc(out, p[i]);
    return rc ? rc : buf_putc(out, '\'');
}

/* The value of a native type as getString writes it; how: 0 text, 1 CQL literal. */
static int native_put(const cql_ctype *t, const uint8_t *p, size_t len, buf *out, int cql)
{
    uint16_t id = id_of(t);
    int64_t v;
    if (len == 0)
        return cql ? buf_puts(out, is_textual(id) || id == CQL_TYPE_BLOB
                                       ? (id == CQL_TYPE_BLOB ? "0x" : "''")
                                       : "null")
                   : 0;
    switch (id) {
    case CQL_TYPE_ASCII:
    case CQL_TYPE_VARCHAR:
        return cql ? quoted_put(out, p, len) : buf_append(out, p, len);
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_TINYINT: {
        v = (int8_t)p[0];
        for (size_t i = 1; i < len; i++)
            v = v * 256 + p[i];
        return buf_printf(out, "%lld", (long long)v);
    }
    case CQL_TYPE_VARINT:
        return cql_varint_to_text(p, len, out);
    case CQL_TYPE_DECIMAL:
        return decimal_put(out, p, len);
    case CQL_TYPE_FLOAT: {
        float f;
        if (cql_float_decode(p, len, &f)) return -1;
        return java_float_put(out, f, 1);
    }
    case CQL_TYPE_DOUBLE: {
        double d;
        if (cql_double_decode(p, len, &d)) return -1;
        return java_float_put(out, d, 0);
    }
    case CQL_TYPE_BOOLEAN:
        return buf_puts(out, p[0] ? "true" : "false");
    case CQL_TYPE_BLOB:
    case CQL_TYPE_CUSTOM:
        return hex_put(out, p, len);
    case CQL_TYPE_UUID:
    case CQL_TYPE_TIMEUUID:
        return len == 16 ? uuid_put(out, p) : -1;
    case CQL_TYPE_TIMESTAMP: {
        if (cql_bigint_decode(p, len, &v)) return -1;
        int rc = cql ? buf_putc(out, '\'') : 0;
        rc = rc ? rc : timestamp_put(out, v, 'T', 0);
        return rc ? rc : cql ? buf_putc(out, '\'') : 0;
    }
    case CQL_TYPE_DATE: {
        if (cql_date_decode(p, len, &v)) return -1;
        int rc = cql ? buf_putc(out, '\'') : 0;
        rc = rc ? rc : date_put(out, v);
        return rc ? rc : cql ? buf_putc(out, '\'') : 0;
    }
    case CQL_TYPE_TIME: {
        if (cql_time_decode(p, len, &v)) return -1;
        int rc = cql ? buf_putc(out, '\'') : 0;
        rc = rc ? rc : time_put(out, v);
        return rc ? rc : cql ? buf_putc(out, '\'') : 0;
    }
    case CQL_TYPE_DURATION: {
        int32_t m, d;
        int64_t n;
        char why[200];
        if (cql_duration_decode(p, len, &m, &d, &n, why, sizeof why)) return -1;
        if (cql && m == 0 && d == 0 && n == 0) return buf_puts(out, "0s");
        return duration_put(out, m, d, n);
    }
    case CQL_TYPE_INET: {
        int rc = cql ? buf_putc(out, '\'') : 0;
        rc = rc ? rc : inet_put(out, p, len);
        return rc ? rc : cql ? buf_putc(out, '\'') : 0;
    }
    }
    return -1;
}

static int literal_put(const cql_ctype *t, const uint8_t *p, size_t len, buf *out, int depth);

static int field_name_put(buf *out, const char *name)
{
    int bare = name[0] >= 'a' && name[0] <= 'z' && !cql_is_reserved(name, strlen(name));
    for (const char *c = name; bare && *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) bare = 0;
    if (bare) return buf_puts(out, name);
    int rc = buf_putc(out, '"');
    for (const char *c = name; *c && !rc; c++)
        rc = *c == '"' ? buf_puts(out, "\"\"") : buf_putc(out, (uint8_t)*c);
    return rc ? rc : buf_putc(out, '"');
}

static int composite_put(const cql_ctype *t, const uint8_t *p, size_t len, buf *out, int depth)
{
    uint16_t id = id_of(t);
    cql_elements e;
    const uint8_t *v;
    int32_t vlen;
    int rc = 0;
    if (depth > CQL_TYPE_MAX_DEPTH) return -1;
    if (id == CQL_TYPE_TUPLE || id == CQL_TYPE_UDT) {
        cql_fields_open(&e, p, len);
        rc = buf_putc(out, id == CQL_TYPE_TUPLE ? '(' : '{');
        for (uint16_t i = 0; i < t->wire.n && !rc; i++) {
            int r = cql_element_next(&e, &v, &vlen);
            if (r < 0) return -1;
            if (r == 0) break;
            if (i) rc = buf_puts(out, ", ");
            if (!rc && id == CQL_TYPE_UDT) {
                rc = field_name_put(out, t->wire.field_names[i]);
                rc = rc ? rc : buf_puts(out, ": ");
            }
            if (!rc)
                rc = vlen < 0 ? buf_puts(out, "null")
                              : literal_put(t->args[i], v, (size_t)vlen, out, depth + 1);
        }
        return rc ? rc : buf_putc(out, id == CQL_TYPE_TUPLE ? ')' : '}');
    }
    uint32_t count;
    int pairs = id == CQL_TYPE_MAP;
    if (cql_collection_open(&e, p, len, pairs, &count)) return -1;
    rc = buf_putc(out, id == CQL_TYPE_LIST ? '[' : '{');
    for (uint32_t i = 0; i < count && !rc; i++) {
        if (i) rc = buf_puts(out, ", ");
        if (rc || cql_element_next(&e, &v, &vlen) != 1 || vlen < 0) return -1;
        rc = literal_put(t->args[0], v, (size_t)vlen, out, depth + 1);
        if (pairs && !rc) {
            rc = buf_puts(out, ": ");
            if (rc || cql_element_next(&e, &v, &vlen) != 1 || vlen < 0) return -1;
            rc = literal_put(t->args[1], v, (size_t)vlen, out, depth + 1);
        }
    }
    return rc ? rc : buf_putc(out, id == CQL_TYPE_LIST ? ']' : '}');
}

static int literal_put(const cql_ctype *t, const uint8_t *p, size_t len, buf *out, int depth)
{
    uint16_t id = id_of(t);
    if ((id == CQL_TYPE_LIST || id == CQL_TYPE_SET || id == CQL_TYPE_MAP || id == CQL_TYPE_TUPLE ||
         id == CQL_TYPE_UDT)) {
        if (len == 0) return buf_puts(out, "null");
        return composite_put(t, p, len, out, depth);
    }
    return native_put(t, p, len, out, 1);
}

int cqlval_to_text(const cql_ctype *t, const uint8_t *p, size_t len, buf *out)
{
    size_t start = out->len;
    uint16_t id = id_of(t);
    int rc = (id == CQL_TYPE_LIST || id == CQL_TYPE_SET || id == CQL_TYPE_MAP ||
              id == CQL_TYPE_TUPLE || id == CQL_TYPE_UDT)
                 ? literal_put(t, p, len, out, 0)
                 : native_put(t, p, len, out, 0);
    if (rc) out->len = start;
    return rc ? -1 : 0;
}

int cqlval_to_cql(const cql_ctype *t, const uint8_t *p, size_t len, buf *out)
{
    size_t start = out->len;
    int rc = literal_put(t, p, len, out, 0);
    if (rc) out->len = start;
    return rc ? -1 : 0;
}

/* ---- JSON ---- */

static int json_string_put(buf *out, const char *s, size_t len)
{
    int rc = buf_putc(out, '"');
    for (size_t i = 0; i < len && !rc; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"')
            rc = buf_puts(out, "\\\"");
        else if (c == '\\')
            rc = buf_puts(out, "\\\\");
        else if (c == '\n')
            rc = buf_puts(out, "\\n");
        else if (c == '\r')
            rc = buf_puts(out, "\\r");
        else if (c == '\t')
            rc = buf_puts(out, "\\t");
        else if (c == '\b')
            rc = buf_puts(out, "\\b");
        else if (c == '\f')
            rc = buf_puts(out, "\\f");
        else if (c < 0x20)
            rc = buf_printf(out, "\\u%04x", c);
        else
            rc = buf_putc(out, c);
    }
    return rc ? rc : buf_putc(out, '"');
}

static int json_put(const cql_ctype *t, const uint8_t *p, size_t len, buf *out, int depth);

static int json_composite(const cql_ctype *t, const uint8_t *p, size_t len, buf *out, int depth)
{
    uint16_t id = id_of(t);
    cql_elements e;
    const uint8_t *v;
    int32_t vlen;
    int rc;
    if (id == CQL_TYPE_TUPLE || id == CQL_TYPE_UDT) {
        cql_fields_open(&e, p, len);
        rc = buf_putc(out, id == CQL_TYPE_TUPLE ? '[' : '{');
        for (uint16_t i = 0; i < t->wire.n && !rc; i++) {
            int r = cql_element_next(&e, &v, &vlen);
            if (r < 0) return -1;
            /* a value shorter than its type: the rest are nulls, as TupleType writes */
            if (i) rc = buf_puts(out, ", ");
            if (!rc && id == CQL_TYPE_UDT) {
                const char *name = t->wire.field_names[i];
                int lower = 1;
                for (const char *c = name; *c; c++)
                    if (*c >= 'A' && *c <= 'Z') lower = 0;
                if (lower) {
                    rc = json_string_put(out, name, strlen(name));
                } else {
                    buf q;
                    buf_init(&q, 0);
                    buf_printf(&q, "\"%s\"", name);
                    rc = json_string_put(out, q.data, q.len);
                    buf_free(&q);
                }
                rc = rc ? rc : buf_puts(out, ": ");
            }
            if (!rc)
                rc = r == 0 || vlen < 0 ? buf_puts(out, "null")
                                        : json_put(t->args[i], v, (size_t)vlen, out, depth + 1);
        }
        return rc ? rc : buf_putc(out, id == CQL_TYPE_TUPLE ? ']' : '}');
    }
    uint32_t count;
    int pairs = id == CQL_TYPE_MAP;
    if (cql_collection_open(&e, p, len, pairs, &count)) return -1;
    rc = buf_putc(out, pairs ? '{' : '[');
    for (uint32_t i = 0; i < count && !rc; i++) {
        if (i) rc = buf_puts(out, ", ");
        if (rc || cql_element_next(&e, &v, &vlen) != 1 || vlen < 0) return -1;
        if (pairs && !is_textual(id_of(t->args[0]))) {
            /* a key that is not text: its JSON, as a JSON string */
            buf k;
            buf_init(&k, out->max);
            rc = json_put(t->args[0], v, (size_t)vlen, &k, depth + 1);
            rc = rc ? rc : json_string_put(out, k.data, k.len);
            buf_free(&k);
        } else {
            rc = json_put(t->args[0], v, (size_t)vlen, out, depth + 1);
        }
        if (pairs && !rc) {
            rc = buf_puts(out, ": ");
            if (rc || cql_element_next(&e, &v, &vlen) != 1 || vlen < 0) return -1;
            rc = json_put(t->args[1], v, (size_t)vlen, out, depth + 1);
        }
    }
    return rc ? rc : buf_putc(out, pairs ? '}' : ']');
}

static int json_put(const cql_ctype *t, const uint8_t *p, size_t len, buf *out, int depth)
{
    uint16_t id = id_of(t);
    if (depth > CQL_TYPE_MAX_DEPTH) return -1;
    /* an empty value is "" (Cassandra's toJSONString of a value that deserializes to null) */
    if (len == 0 && !is_textual(id) && id != CQL_TYPE_BLOB)
        return buf_puts(out, cqltype_native(id) ? "\"\"" : "null");
    switch (id) {
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_MAP:
    case CQL_TYPE_TUPLE:
    case CQL_TYPE_UDT:
        return json_composite(t, p, len, out, depth);
    case CQL_TYPE_ASCII:
    case CQL_TYPE_VARCHAR:
        return json_string_put(out, len ? (const char *)p : "", len);
    case CQL_TYPE_BLOB: {
        buf s;
        buf_init(&s, 0);
        int rc = hex_put(&s, p, len);
        rc = rc ? rc : json_string_put(out, s.data, s.len);
        buf_free(&s);
        return rc;
    }
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_VARINT:
    case CQL_TYPE_DECIMAL:
    case CQL_TYPE_BOOLEAN:
        return native_put(t, p, len, out, 0);
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE: {
        buf s;
        buf_init(&s, 0);
        int rc = native_put(t, p, len, &s, 0);
        int finite = rc == 0 && (isdigit((unsigned char)s.data[0]) ||
                                 (s.data[0] == '-' && isdigit((unsigned char)s.data[1])));
        /* JSON has no NaN or Infinity: Cassandra writes null for them */
        if (rc == 0) rc = finite ? buf_append(out, s.data, s.len) : buf_puts(out, "null");
        buf_free(&s);
        return rc;
    }
    case CQL_TYPE_TIMESTAMP: {
        int64_t ms;
        if (cql_bigint_decode(p, len, &ms)) return -1;
        buf s;
        buf_init(&s, 0);
        int rc = timestamp_put(&s, ms, ' ', 1);
        rc = rc ? rc : json_string_put(out, s.data, s.len);
        buf_free(&s);
        return rc;
    }
    default: {
        buf s;
        buf_init(&s, 0);
        int rc = native_put(t, p, len, &s, 0);
        rc = rc ? rc : json_string_put(out, s.data ? s.data : "", s.len);
        buf_free(&s);
        return rc;
    }
    }
}

int cqlval_to_json(const cql_ctype *t, const uint8_t *p, size_t len, buf *out)
{
    size_t start = out->len;
    int rc = json_put(t, p, len, out, 0);
    if (rc) out->len = start;
    return rc ? -1 : 0;
}

/* ---- JSON text read exactly ----
 * cqlval_json_parse builds a jansson tree in which each number is a string holding a
 * 0xff byte and then the number's text as written (no JSON string decodes to a 0xff
 * byte, which is not UTF-8), so decimals keep their scale and varints their digits. */

#define JSON_NUMBER_MARK '\xff'

typedef struct jscan {
    const char *p, *start, *end;
    const char *why;
} jscan;

static void jskip(jscan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static json_t *jfail(jscan *s, const char *why)
{
    if (!s->why) s->why = why;
    return NULL;
}

static int jhex4(jscan *s, uint32_t *v)
{
    *v = 0;
    if (s->end - s->p < 4) return -1;
    for (int i = 0; i < 4; i++) {
        int h = hexval(*s->p++);
        if (h < 0) return -1;
        *v = *v << 4 | (uint32_t)h;
    }
    return 0;
}

static int utf8_put(buf *b, uint32_t cp)
{
    uint8_t u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (uint8_t)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (uint8_t)(0xc0 | cp >> 6);
        u[1] = (uint8_t)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (uint8_t)(0xe0 | cp >> 12);
        u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (uint8_t)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (uint8_t)(0xf0 | cp >> 18);
        u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (uint8_t)(0x80 | (cp & 0x3f));
        n = 4;
    }
    return buf_append(b, u, n);
}

/* A JSON string at s->p (after the opening quote) into b. */
static int jstring(jscan *s, buf *b)
{
    for (;;) {
        if (s->p >= s->end) return jfail(s, "unterminated string"), -1;
        unsigned char c = (unsigned char)*s->p++;
        if (c == '"') break;
        if (c < 0x20) return jfail(s, "control character in string"), -1;
        if (c != '\\') {
            if (buf_putc(b, c)) return -1;
            continue;
        }
        if (s->p >= s->end) return jfail(s, "unterminated string"), -1;
        char e = *s->p++;
        const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
        const char *m = strchr(map, e);
        if (e && m && (m - map) % 2 == 0) {
            if (buf_putc(b, (uint8_t)m[1])) return -1;
            continue;
        }
        if (e != 'u') return jfail(s, "invalid escape in string"), -1;
        uint32_t cp, lo;
        if (jhex4(s, &cp)) return jfail(s, "invalid \\u escape"), -1;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u')
                return jfail(s, "lone surrogate"), -1;
            s->p += 2;
            if (jhex4(s, &lo) || lo < 0xdc00 || lo > 0xdfff) return jfail(s, "lone surrogate"), -1;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return jfail(s, "lone surrogate"), -1;
        }
        if (utf8_put(b, cp)) return -1;
    }
    if (!cql_utf8_valid((const uint8_t *)b->data, b->len))
        return jfail(s, "invalid UTF-8 in string"), -1;
    return 0;
}

static json_t *jvalue(jscan *s, int depth)
{
    jskip(s);
    if (depth > 64) return jfail(s, "nested too deep");
    if (s->p >= s->end) return jfail(s, "unexpected end of input");
    char c = *s->p;
    if (c == '{' || c == '[') {
        int obj = c == '{';
        s->p++;
        json_t *v = obj ? json_object() : json_array();
        if (!v) return jfail(s, "out of memory");
        jskip(s);
        if (s->p < s->end && *s->p == (obj ? '}' : ']')) {
            s->p++;
            return v;
        }
        for (;;) {
            buf key;
            buf_init(&key, 0);
            if (obj) {
                jskip(s);
                if (s->p >= s->end || *s->p != '"') {
                    json_decref(v);
                    return jfail(s, "expected a member name");
                }
                s->p++;
                if (jstring(s, &key)) {
                    buf_free(&key);
                    json_decref(v);
                    return jfail(s, "bad member name");
                }
                jskip(s);
                if (s->p >= s->end || *s->p != ':') {
                    buf_free(&key);
                    json_decref(v);
                    return jfail(s, "expected ':'");
                }
                s->p++;
            }
            json_t *x = jvalue(s, depth + 1);
            int bad = !x || (obj ? json_object_setn_new(v, key.data ? key.data : "", key.len, x)
                                 : json_array_append_new(v, x));
            buf_free(&key);
            if (bad) {
                json_decref(v);
                return jfail(s, "out of memory");
            }
            jskip(s);
            if (s->p < s->end && *s->p == ',') {
                s->p++;
                continue;
            }
            if (s->p < s->end && *s->p == (obj ? '}' : ']')) {
                s->p++;
                return v;
            }
            json_decref(v);
            return jfail(s, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (c == '"') {
        s->p++;
        buf b;
        buf_init(&b, 0);
        json_t *v = jstring(s, &b) ? NULL : json_stringn(b.data ? b.data : "", b.len);
        buf_free(&b);
        return v ? v : jfail(s, "bad string");
    }
    static const struct {
        const char *word;
        int kind;
    } words[] = {{"true", 1}, {"false", 2}, {"null", 3}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(s->end - s->p) >= n && strncmp(s->p, words[i].word, n) == 0) {
            s->p += n;
            return words[i].kind == 1   ? json_true()
                   : words[i].kind == 2 ? json_false()
                                        : json_null();
        }
    }
    const char *n0 = s->p;
    if (s->p < s->end && *s->p == '-') s->p++;
    const char *d0 = s->p;
    while (s->p < s->end && isdigit((unsigned char)*s->p))
        s->p++;
    if (s->p == d0 || (*d0 == '0' && s->p - d0 > 1)) return jfail(s, "unexpected character");
    if (s->p < s->end && *s->p == '.') {
        const char *f = ++s->p;
        while (s->p < s->end && isdigit((unsigned char)*s->p))
            s->p++;
        if (s->p == f) return jfail(s, "expected a digit after '.'");
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
        const char *e = s->p;
        while (s->p < s->end && isdigit((unsigned char)*s->p))
            s->p++;
        if (s->p == e) return jfail(s, "expected a digit in the exponent");
    }
    size_t n = (size_t)(s->p - n0);
    char *t = malloc(n + 1);
    if (!t) return jfail(s, "out of memory");
    t[0] = JSON_NUMBER_MARK;
    memcpy(t + 1, n0, n);
    json_t *v = json_stringn_nocheck(t, n + 1);
    free(t);
    return v ? v : jfail(s, "out of memory");
}

json_t *cqlval_json_parse(const char *text, size_t len, cql_parse_error *err)
{
    jscan s = {text, text, text + len, NULL};
    json_t *v = jvalue(&s, 0);
    if (v) {
        jskip(&s);
        if (s.p != s.end) {
            json_decref(v);
            v = jfail(&s, "unexpected text after the value");
        }
    }
    if (!v)
        cql_error_record(err, CQL_ERR_INVALID,
                         "Could not decode JSON string '%.*s': %s at character %zu",
                         (int)(len > 200 ? 200 : len), text, s.why ? s.why : "invalid JSON",
                         (size_t)(s.p - s.start));
    return v;
}

json_t *cqlval_json_object(const char *text, size_t len, cql_parse_error *err)
{
    cql_parse_error inner = {0};
    json_t *j = cqlval_json_parse(text, len, &inner);
    if (j && json_is_object(j)) return j;
    if (j && json_is_null(j)) {
        json_decref(j);
        cql_error_record(err, CQL_ERR_INVALID, "Got null for INSERT JSON values");
        return NULL;
    }
    json_decref(j);
    const char *why = strstr(inner.msg, "': ");
    cql_error_record(err, CQL_ERR_INVALID, "Could not decode JSON string as a map: %s",
                     j     ? "the value is not a JSON object"
                     : why ? why + 3
                           : "invalid JSON");
    return NULL;
}

int cqlval_json_name(const char *key, buf *out)
{
    size_t n = strlen(key);
    if (n >= 2 && key[0] == '"' && key[n - 1] == '"') return buf_append(out, key + 1, n - 2);
    for (size_t i = 0; i < n; i++)
        if (buf_putc(out, (uint8_t)tolower((unsigned char)key[i]))) return -1;
    return 0;
}

/* A JSON number: from cqlval_json_parse (its text as written) or from jansson (printed as
 * Java prints it). 1 with *text and *integral, 0 when j is no number. */
static int json_number(const json_t *j, char *tmp, size_t n, const char **text, int *integral)
{
    if (json_is_string(j) && json_string_length(j) > 0 &&
        json_string_value(j)[0] == JSON_NUMBER_MARK) {
        *text = json_string_value(j) + 1;
        *integral = !strpbrk(*text, ".eE");
        return 1;
    }
    if (json_is_integer(j)) {
        snprintf(tmp, n, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        *text = tmp;
        *integral = 1;
        return 1;
    }
    if (json_is_real(j)) {
        buf s;
        buf_init(&s, 0);
        java_float_put(&s, json_real_value(j), 0);
        snprintf(tmp, n, "%s", s.data ? s.data : "");
        buf_free(&s);
        *text = tmp;
        *integral = 0;
        return 1;
    }
    return 0;
}

/* A JSON string proper (not a number cqlval_json_parse kept as text). */
static int json_text_string(const json_t *j)
{
    return json_is_string(j) &&
           (json_string_length(j) == 0 || json_string_value(j)[0] != JSON_NUMBER_MARK);
}

static const char *json_kind(const json_t *j)
{
    char tmp[64];
    const char *t;
    int integral;
    if (json_number(j, tmp, sizeof tmp, &t, &integral)) return integral ? "Integer" : "Double";
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return "LinkedHashMap";
    case JSON_ARRAY:
        return "ArrayList";
    case JSON_STRING:
        return "String";
    case JSON_TRUE:
    case JSON_FALSE:
        return "Boolean";
    default:
        return "null";
    }
}

/* Appends j as compact JSON, numbers as written. */
static void json_msg_put(buf *b, const json_t *j, int depth)
{
    char tmp[64];
    const char *t;
    int integral;
    if (depth > 64 || b->len > 300) return;
    if (json_number(j, tmp, sizeof tmp, &t, &integral)) {
        buf_puts(b, t);
    } else if (json_is_array(j)) {
        size_t i;
        json_t *v;
        buf_putc(b, '[');
        json_array_foreach(j, i, v)
        {
            if (i) buf_putc(b, ',');
            json_msg_put(b, v, depth + 1);
        }
        buf_putc(b, ']');
    } else if (json_is_object(j)) {
        const char *k;
        json_t *v;
        int first = 1;
        buf_putc(b, '{');
        json_object_foreach((json_t *)j, k, v)
        {
            if (!first) buf_putc(b, ',');
            first = 0;
            json_string_put(b, k, strlen(k));
            buf_putc(b, ':');
            json_msg_put(b, v, depth + 1);
        }
        buf_putc(b, '}');
    } else {
        char *d = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        buf_puts(b, d ? d : "?");
        free(d);
    }
}

/* The JSON text of j, for messages (a per-thread buffer). */
static const char *json_text(const json_t *j)
{
    static _Thread_local char s[256];
    buf b;
    buf_init(&b, 4096);
    json_msg_put(&b, j, 0);
    snprintf(s, sizeof s, "%s", b.data ? b.data : "");
    buf_free(&b);
    return s;
}

static int from_json(const cql_ctype *t, const char *receiver, const json_t *j, buf *out,
                     cql_parse_error *err, int depth);

static int json_element(const cql_ctype *t, const char *receiver, const json_t *j, buf *out,
                        cql_parse_error *err, int depth, int null_ok)
{
    size_t at = out->len;
    uint8_t zero[4] = {0};
    if (buf_append(out, zero, 4)) return full(err);
    int r = from_json(t, receiver, j, out, err, depth + 1);
    if (r == CQLVAL_ERROR) return r;
    if (r == CQLVAL_NULL) {
        out->len = at;
        if (!null_ok)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Invalid null element in collection for %s", receiver);
        return cql_element_put(out, NULL, -1) ? full(err) : CQLVAL_OK;
    }
    cql_int_encode((int32_t)(out->len - at - 4), (uint8_t *)out->data + at);
    return CQLVAL_OK;
}

/* A varint or decimal from a JSON number (num, its text) or string (num NULL), read as
 * BigInteger and BigDecimal read the text: the empty string is no number. */
static int json_big_number(const cql_ctype *t, const json_t *j, const char *num, buf *out,
                           cql_parse_error *err)
{
    const char *text = num ? num : json_string_value(j);
    size_t len = num ? strlen(num) : json_string_length(j);
    cql_parse_error ignored = {0};
    size_t at = out->len;
    if (len > 0 && cqlval_from_text(t, text, len, out, &ignored) == CQLVAL_OK) return CQLVAL_OK;
    out->len = at;
    return cql_error_record(err, CQL_ERR_INVALID,
                            "Value '%.*s' is not a valid representation of a %s value",
                            (int)(len > 200 ? 200 : len), text, tname(t));
}

static int from_json(const cql_ctype *t, const char *receiver, const json_t *j, buf *out,
                     cql_parse_error *err, int depth)
{
    uint16_t id = id_of(t);
    char tmp[64];
    if (depth > CQL_TYPE_MAX_DEPTH)
        return cql_error_record(err, CQL_ERR_INVALID, "JSON value for %s nested too deep",
                                receiver);
    if (json_is_null(j)) return CQLVAL_NULL;
    const char *num;
    int integral;
    int is_num = json_number(j, tmp, sizeof tmp, &num, &integral);
    int is_str = json_text_string(j);
    switch (id) {
    case CQL_TYPE_ASCII:
    case CQL_TYPE_VARCHAR:
        if (!is_str)
            return cql_error_record(err, CQL_ERR_INVALID, "Expected %s string, but got a %s: %s",
                                    id == CQL_TYPE_ASCII ? "an ascii" : "a UTF-8", json_kind(j),
                                    json_text(j));
        return cqlval_from_text(t, json_string_value(j), json_string_length(j), out, err);
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_VARINT:
        if (is_str && id == CQL_TYPE_VARINT) return json_big_number(t, j, NULL, out, err);
        if (is_str)
            return cqlval_from_text(t, json_string_value(j), json_string_length(j), out, err);
        if (!is_num)
            return cql_error_record(err, CQL_ERR_INVALID, "Expected an int value, but got a %s: %s",
                                    json_kind(j), json_text(j));
        if (id == CQL_TYPE_INT || id == CQL_TYPE_BIGINT || id == CQL_TYPE_COUNTER) {
            /* Jackson's number class decides: Integer, Long, BigInteger or Double */
            int64_t v;
            size_t nl = strlen(num);
            int fits32 = integral && parse_int(num, nl, INT32_MIN, INT32_MAX, &v) == 0;
            int fits64 = integral && parse_int(num, nl, INT64_MIN, INT64_MAX, &v) == 0;
            const char *cls = !integral ? "Double"
                              : fits32  ? "Integer"
                              : fits64  ? "Long"
                                        : "BigInteger";
            if (id == CQL_TYPE_INT ? !fits32 : !fits64)
                return cql_error_record(err, CQL_ERR_INVALID, "Expected %s value, but got a %s: %s",
                                        id == CQL_TYPE_INT ? "an int" : "a bigint", cls, num);
        }
        if (id == CQL_TYPE_VARINT) return json_big_number(t, j, num, out, err);
        /* smallint and tinyint read the number's text */
        return cqlval_from_text(t, num, strlen(num), out, err);
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE:
    case CQL_TYPE_DECIMAL:
        if (is_str && id == CQL_TYPE_DECIMAL) return json_big_number(t, j, NULL, out, err);
        if (is_str)
            return cqlval_from_text(t, json_string_value(j), json_string_length(j), out, err);
        if (!is_num)
            return cql_error_record(err, CQL_ERR_INVALID, "Expected a %s value, but got a %s: %s",
                                    tname(t), json_kind(j), json_text(j));
        if (id == CQL_TYPE_DECIMAL) return json_big_number(t, j, num, out, err);
        return cqlval_from_text(t, num, strlen(num), out, err);
    case CQL_TYPE_BOOLEAN:
        if (json_is_boolean(j)) return buf_putc(out, json_is_true(j)) ? full(err) : CQLVAL_OK;
        if (is_str)
            return cqlval_from_text(t, json_string_value(j), json_string_length(j), out, err);
        return cql_error_record(err, CQL_ERR_INVALID, "Expected a boolean value, but got a %s: %s",
                                json_kind(j), json_text(j));
    case CQL_TYPE_BLOB:
        if (!is_str)
            return cql_error_record(
                err, CQL_ERR_INVALID,
                "Expected a string representation of a blob value, but got a %s: %s", json_kind(j),
                json_text(j));
        if (strncmp(json_string_value(j), "0x", 2) != 0)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "String representation of blob is missing 0x prefix: %s",
                                    json_string_value(j));
        return cqlval_from_text(t, json_string_value(j), json_string_length(j), out, err);
    case CQL_TYPE_TIMESTAMP:
        if (is_num && integral) return cqlval_from_text(t, num, strlen(num), out, err);
        /* fall through */
    case CQL_TYPE_UUID:
    case CQL_TYPE_TIMEUUID:
    case CQL_TYPE_DATE:
    case CQL_TYPE_TIME:
    case CQL_TYPE_DURATION:
    case CQL_TYPE_INET:
    case CQL_TYPE_CUSTOM:
        if (!is_str)
            return cql_error_record(
                err, CQL_ERR_INVALID,
                "Expected a string representation of a %s value, but got a %s: %s", tname(t),
                json_kind(j), json_text(j));
        return cqlval_from_text(t, json_string_value(j), json_string_length(j), out, err);
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET: {
        if (!json_is_array(j))
            return cql_error_record(err, CQL_ERR_INVALID, "Expected a list, but got a %s: %s",
                                    json_kind(j), json_text(j));
        char sub[300];
        snprintf(sub, sizeof sub, "value(%s)", receiver);
        buf raw;
        buf_init(&raw, out->max);
        size_t at = cql_collection_begin(&raw);
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v)
        {
            if (json_element(t->args[0], sub, v, &raw, err, depth, 0)) {
                buf_free(&raw);
                return CQLVAL_ERROR;
            }
        }
        cql_collection_end(&raw, at, (uint32_t)json_array_size(j));
        int rc = cqlval_canonical(t, (const uint8_t *)raw.data, raw.len, out);
        buf_free(&raw);
        return rc ? full(err) : CQLVAL_OK;
    }
    case CQL_TYPE_MAP: {
        if (!json_is_object(j))
            return cql_error_record(err, CQL_ERR_INVALID, "Expected a map, but got a %s: %s",
                                    json_kind(j), json_text(j));
        char ksub[300], sub[300];
        snprintf(ksub, sizeof ksub, "key(%s)", receiver);
        snprintf(sub, sizeof sub, "value(%s)", receiver);
        buf raw;
        buf_init(&raw, out->max);
        size_t at = cql_collection_begin(&raw);
        const char *k;
        json_t *v;
        int rc = 0;
        json_object_foreach((json_t *)j, k, v)
        {
            json_t *key;
            if (is_textual(id_of(t->args[0]))) {
                key = json_string(k);
            } else {
                cql_parse_error ignored = {0};
                key = cqlval_json_parse(k, strlen(k), &ignored);
                if (!key) key = json_string(k);
            }
            rc = !key || json_element(t->args[0], ksub, key, &raw, err, depth, 0) ||
                 json_element(t->args[1], sub, v, &raw, err, depth, 0);
            json_decref(key);
            if (rc) break;
        }
        if (rc) {
            buf_free(&raw);
            return CQLVAL_ERROR;
        }
        cql_collection_end(&raw, at, (uint32_t)json_object_size(j));
        rc = cqlval_canonical(t, (const uint8_t *)raw.data, raw.len, out);
        buf_free(&raw);
        return rc ? full(err) : CQLVAL_OK;
    }
    case CQL_TYPE_TUPLE: {
        if (!json_is_array(j))
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Expected a list representation of a tuple, but got a %s: %s",
                                    json_kind(j), json_text(j));
        if (json_array_size(j) > t->wire.n)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Tuple contains extra items (expected %u): %s",
                                    (unsigned)t->wire.n, json_text(j));
        if (json_array_size(j) < t->wire.n)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Tuple is missing items (expected %u): %s", (unsigned)t->wire.n,
                                    json_text(j));
        for (size_t i = 0; i < json_array_size(j); i++) {
            char sub[300];
            snprintf(sub, sizeof sub, "%s[%zu]", receiver, i);
            if (json_element(t->args[i], sub, json_array_get(j, i), out, err, depth, 1))
                return CQLVAL_ERROR;
        }
        return CQLVAL_OK;
    }
    case CQL_TYPE_UDT: {
        if (!json_is_object(j))
            return cql_error_record(err, CQL_ERR_INVALID, "Expected a map, but got a %s: %s",
                                    json_kind(j), json_text(j));
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)j, k, v)
        {
            char name[256];
            size_t kl = strlen(k);
            if (kl >= 2 && k[0] == '"' && k[kl - 1] == '"') {
                snprintf(name, sizeof name, "%.*s", (int)(kl - 2), k + 1);
            } else {
                snprintf(name, sizeof name, "%s", k);
                for (char *c = name; *c; c++)
                    *c = (char)tolower((unsigned char)*c);
            }
            uint16_t f = 0;
            while (f < t->wire.n && strcmp(t->wire.field_names[f], name) != 0)
                f++;
            if (f == t->wire.n)
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "Unknown field '%s' in value of user defined type %s", name,
                                        t->wire.name);
        }
        for (uint16_t f = 0; f < t->wire.n; f++) {
            const json_t *fv = NULL;
            json_object_foreach((json_t *)j, k, v)
            {
                buf name;
                buf_init(&name, 0);
                if (cqlval_json_name(k, &name) == 0 &&
                    strcmp(name.data ? name.data : "", t->wire.field_names[f]) == 0)
                    fv = v;
                buf_free(&name);
            }
            if (!fv) {
                if (cql_element_put(out, NULL, -1)) return full(err);
                continue;
            }
            char sub[300];
            snprintf(sub, sizeof sub, "%s.%s", receiver, t->wire.field_names[f]);
            if (json_element(t->args[f], sub, fv, out, err, depth, 1)) return CQLVAL_ERROR;
        }
        return CQLVAL_OK;
    }
    }
    return cql_error_record(err, CQL_ERR_INVALID, "Unknown type %s", tname(t));
}

int cqlval_from_json(const cql_ctype *t, const char *receiver, const json_t *j, buf *out,
                     cql_parse_error *err)
{
    size_t start = out->len;
    int r = from_json(t, receiver, j, out, err, 0);
    if (r != CQLVAL_OK) out->len = start;
    return r;
}

/* ---- the stored form ---- */

static json_t *av(const char *type, json_t *payload)
{
    if (!payload) return NULL;
    json_t *o = json_object();
    if (!o || json_object_set_new(o, type, payload)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *av_text(const char *type, const buf *b)
{
    return av(type, json_stringn(b->data ? b->data : "", b->len));
}

/* The canonical DynamoDB number text of s, or "" when DynamoDB's N cannot hold it. */
static void n_canonical(const char *s, size_t len, char out[NUM_FMT_MAX])
{
    qr_num n;
    qr_err e;
    memset(&e, 0, sizeof e);
    out[0] = '\0';
    if (num_parse(s, len, &n, &e) != 0) return;
    num_format(&n, out);
}

static json_t *to_item(const cql_ctype *t, const uint8_t *p, size_t len, int depth);

static json_t *native_item(const cql_ctype *t, const uint8_t *p, size_t len, int depth);

static json_t *item_element(const cql_ctype *t, const uint8_t *v, int32_t vlen, int depth)
{
    if (vlen < 0) return av("NULL", json_true());
    if (cqltype_native(t->wire.id)) return native_item(t, v, (size_t)vlen, depth + 1);
    return to_item(t, v, (size_t)vlen, depth + 1);
}

static json_t *to_item(const cql_ctype *t, const uint8_t *p, size_t len, int depth)
{
    uint16_t id = id_of(t);
    if (depth > CQL_TYPE_MAX_DEPTH) return NULL;
    if (len == 0 && !is_textual(id) && id != CQL_TYPE_BLOB) return av("B", json_string(""));
    buf s;
    buf_init(&s, 0);
    json_t *r = NULL;
    switch (id) {
    case CQL_TYPE_ASCII:
    case CQL_TYPE_VARCHAR:
        r = av("S", json_stringn(len ? (const char *)p : "", len));
        break;
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_TINYINT:
        if (native_put(t, p, len, &s, 0) == 0) r = av_text("N", &s);
        break;
    case CQL_TYPE_VARINT:
    case CQL_TYPE_DECIMAL:
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE: {
        if (id == CQL_TYPE_FLOAT || id == CQL_TYPE_DOUBLE) {
            /* the shortest text that reads back as the same value, as DynamoDB writes it */
            if (native_put(t, p, len, &s, 0)) break;
            char n[NUM_FMT_MAX];
            n_canonical(s.data, s.len, n);
            double back =
                n[0] ? (id == CQL_TYPE_FLOAT ? (double)strtof(n, NULL) : strtod(n, NULL)) : 0;
            double v;
            if (id == CQL_TYPE_FLOAT) {
                float f;
                cql_float_decode(p, len, &f);
                v = f;
            } else {
                cql_double_decode(p, len, &v);
            }
            if (n[0] && back == v && !(v == 0 && signbit(v))) {
                r = av("N", json_string(n));
            } else if (isnan(v) && (len == 4 ? be32_read(p) != 0x7fc00000u
                                             : be64_read(p) != 0x7ff8000000000000ull)) {
                /* a NaN other than Java's canonical one keeps its bits */
                char *b = base64_encode(p, len);
                r = b ? av("B", json_string(b)) : NULL;
                free(b);
            } else {
                r = av_text("S", &s);
            }
            break;
        }
        /* a varint with redundant sign bytes (valid, kept as sent) is stored as its bytes:
         * its text would read back shorter */
        const uint8_t *vp = id == CQL_TYPE_VARINT ? p : p + 4;
        size_t vl = id == CQL_TYPE_VARINT ? len : len - 4, tl = vl;
        varint_trim(&vp, &tl);
        if (tl != vl) {
            char *b = base64_encode(p, len);
            r = b ? av("B", json_string(b)) : NULL;
            free(b);
            break;
        }
        if ((id == CQL_TYPE_VARINT ? cql_varint_to_text(p, len, &s)
                                   : cql_decimal_to_text(p, len, &s)))
            break;
        char n[NUM_FMT_MAX];
        n_canonical(s.data, s.len, n);
        if (n[0] && strcmp(n, s.data) == 0)
            r = av_text("N", &s);
        else
            r = av_text("S", &s);
        break;
    }
    case CQL_TYPE_BOOLEAN:
        if (p[0] > 1) { /* true, but not as 0x01: keep the byte */
            char *b = base64_encode(p, len);
            r = b ? av("B", json_string(b)) : NULL;
            free(b);
        } else {
            r = av("BOOL", json_boolean(p[0] != 0));
        }
        break;
    case CQL_TYPE_BLOB:
    case CQL_TYPE_CUSTOM: {
        char *b = base64_encode(p, len);
        r = b ? av("B", json_string(b)) : NULL;
        free(b);
        break;
    }
    case CQL_TYPE_TIMESTAMP: {
        int64_t ms;
        if (cql_bigint_decode(p, len, &ms)) break;
        /* ISO text while the year has four digits; milliseconds outside that */
        if (ms >= -62167219200000LL && ms <= 253402300799999LL) {
            timestamp_put(&s, ms, 'T', 0);
            r = av_text("S", &s);
        } else {
            buf_printf(&s, "%lld", (long long)ms);
            r = av_text("N", &s);
        }
        break;
    }
    case CQL_TYPE_DATE: {
        int64_t days;
        if (cql_date_decode(p, len, &days)) break;
        if (days >= -719528 && days <= 2932896) {
            date_put(&s, days);
            r = av_text("S", &s);
        } else {
            buf_printf(&s, "%lld", (long long)days);
            r = av_text("N", &s);
        }
        break;
    }
    case CQL_TYPE_TIME:
    case CQL_TYPE_UUID:
    case CQL_TYPE_TIMEUUID:
    case CQL_TYPE_DURATION:
    case CQL_TYPE_INET:
        if (native_put(t, p, len, &s, 0) == 0) r = av_text("S", &s);
        break;
    case CQL_TYPE_LIST:
    case CQL_TYPE_SET:
    case CQL_TYPE_TUPLE: {
        json_t *l = json_array();
        cql_elements e;
        const uint8_t *v;
        int32_t vlen;
        uint32_t count = 0;
        int ok = l != NULL;
        if (id == CQL_TYPE_TUPLE)
            cql_fields_open(&e, p, len);
        else
            ok = ok && cql_collection_open(&e, p, len, 0, &count) == 0;
        for (uint16_t i = 0; ok; i++) {
            int n = cql_element_next(&e, &v, &vlen);
            if (n == 0) break;
            if (n < 0 || (id == CQL_TYPE_TUPLE && i >= t->wire.n)) {
                ok = 0;
                break;
            }
            json_t *x = item_element(t->args[id == CQL_TYPE_TUPLE ? i : 0], v, vlen, depth);
            ok = x && json_array_append_new(l, x) == 0;
        }
        r = ok ? av("L", l) : NULL;
        if (!ok) json_decref(l);
        break;
    }
    case CQL_TYPE_MAP: {
        const cql_ctype *kt = t->args[0];
        uint16_t kid = id_of(kt);
        int keyed = cqltype_native(kid) != NULL;
        json_t *c = keyed ? json_object() : json_array();
        cql_elements e;
        const uint8_t *k, *v;
        int32_t klen, vlen;
        uint32_t count;
        int ok = c && cql_collection_open(&e, p, len, 1, &count) == 0;
        for (uint32_t i = 0; ok && i < count; i++) {
            ok = cql_element_next(&e, &k, &klen) == 1 && cql_element_next(&e, &v, &vlen) == 1 &&
                 klen >= 0;
            if (!ok) break;
            json_t *x = item_element(t->args[1], v, vlen, depth);
            if (keyed) {
                buf ks;
                buf_init(&ks, 0);
                ok = x && native_put(kt, k, (size_t)klen, &ks, 0) == 0 &&
                     json_object_setn_new(c, ks.data ? ks.data : "", ks.len, x) == 0;
                buf_free(&ks);
            } else {
                json_t *kx = item_element(kt, k, klen, depth);
                json_t *pair = json_array();
                ok = x && kx && pair && json_array_append_new(pair, kx) == 0 &&
                     json_array_append_new(pair, x) == 0 &&
                     json_array_append_new(c, av("L", pair)) == 0;
                if (!ok) json_decref(pair);
            }
        }
        r = ok ? av(keyed ? "M" : "L", c) : NULL;
        if (!ok) json_decref(c);
        break;
    }
    case CQL_TYPE_UDT: {
        json_t *m = json_object();
        cql_elements e;
        const uint8_t *v;
        int32_t vlen;
        int ok = m != NULL;
        cql_fields_open(&e, p, len);
        for (uint16_t i = 0; ok; i++) {
            int n = cql_element_next(&e, &v, &vlen);
            if (n == 0) break;
            if (n < 0 || i >= t->wire.n) {
                ok = 0;
                break;
            }
            json_t *x = item_element(t->args[i], v, vlen, depth);
            ok = x && json_object_set_new(m, cqltype_stored_name(t, i), x) == 0;
        }
        r = ok ? av("M", m) : NULL;
        if (!ok) json_decref(m);
        break;
    }
    }
    buf_free(&s);
    return r;
}

static int from_item(const cql_ctype *t, const json_t *a, buf *out, cql_parse_error *err,
                     int depth);

json_t *cqlval_to_item(const cql_ctype *t, const uint8_t *p, size_t len)
{
    if (cqltype_native(t->wire.id)) return native_item(t, p, len, 0);
    return to_item(t, p, len, 0);
}

/* A native value's stored form, or its bytes ({"B"}) when the natural form would not read
 * back to the same bytes (valid but unusual encodings: vints or varints longer than they
 * need be, a boolean true other than 0x01, NaN payloads). */
static json_t *native_item(const cql_ctype *t, const uint8_t *p, size_t len, int depth)
{
    json_t *r = to_item(t, p, len, depth);
    if (!r || json_object_get(r, "B")) return r;
    /* fixed-width values and text read back as they are; the rest is checked */
    uint16_t id = t->wire.id;
    if (id != CQL_TYPE_DURATION && id != CQL_TYPE_FLOAT && id != CQL_TYPE_DOUBLE &&
        id != CQL_TYPE_VARINT && id != CQL_TYPE_DECIMAL)
        return r;
    buf back;
    buf_init(&back, 0);
    cql_parse_error err = {0};
    int same = from_item(t, r, &back, &err, depth) == 0 && back.len == len &&
               (len == 0 || memcmp(back.data, p, len) == 0);
    buf_free(&back);
    if (same) return r;
    json_decref(r);
    char *b = base64_encode(p, len);
    r = b ? av("B", json_string(b)) : NULL;
    free(b);
    return r;
}

static int not_stored(const cql_ctype *t, cql_parse_error *err)
{
    if (err && !err->code && !err->msg[0]) {
        err->code = CQL_ERR_SERVER;
        snprintf(err->msg, sizeof err->msg, "A stored value is not a value of type %s", tname(t));
    }
    return -1;
}

static int from_stored(const cql_ctype *t, const cql_srow *r, uint32_t a, buf *out,
                       cql_parse_error *err, int depth);

static int item_element_put(const cql_ctype *t, const cql_srow *r, uint32_t a, buf *out,
                            cql_parse_error *err, int depth)
{
    if (cql_srow_get(r, a, "NULL") != CQL_SNONE) return cql_element_put(out, NULL, -1);
    size_t at = out->len;
    uint8_t zero[4] = {0};
    if (buf_append(out, zero, 4)) return -1;
    if (from_stored(t, r, a, out, err, depth + 1)) return -1;
    cql_int_encode((int32_t)(out->len - at - 4), (uint8_t *)out->data + at);
    return 0;
}

static int from_stored(const cql_ctype *t, const cql_srow *r, uint32_t a, buf *out,
                       cql_parse_error *err, int depth)
{
    uint16_t id = id_of(t);
    const char *kind;
    uint32_t x = depth > CQL_TYPE_MAX_DEPTH ? CQL_SNONE : cql_srow_tagged(r, a, &kind);
    if (x == CQL_SNONE) return not_stored(t, err);
    cql_parse_error inner; /* empty, as cql_error_record reads it, without 1 KB of zeros */
    inner.code = 0;
    inner.msg[0] = '\0';
    size_t len = 0;
    const char *s = cql_srow_str(r, x, &len);
    /* S and N, the commonest tags, told apart without a call */
    int text = (kind[0] == 'S' || kind[0] == 'N') && kind[1] == '\0';
    if (!text && strcmp(kind, "B") == 0) {
        if (s == NULL || base64_decode(s, len, out)) return not_stored(t, err);
        return 0;
    }
    if (!text && strcmp(kind, "BOOL") == 0 && id == CQL_TYPE_BOOLEAN)
        return buf_putc(out, cql_srow_is(r, x, CQL_SN_TRUE)) ? -1 : 0;
    if (text) {
        if (s == NULL) return not_stored(t, err);
        uint8_t b[8];
        switch (id) {
        case CQL_TYPE_TIMESTAMP:
            if (kind[0] == 'N') {
                int64_t ms;
                if (parse_int(s, len, INT64_MIN, INT64_MAX, &ms)) return not_stored(t, err);
                cql_bigint_encode(ms, b);
                return buf_append(out, b, 8);
            }
            break;
        case CQL_TYPE_DATE:
            if (kind[0] == 'N') {
                int64_t days;
                if (parse_int(s, len, INT32_MIN, INT32_MAX, &days)) return not_stored(t, err);
                cql_date_encode(days, b);
                return buf_append(out, b, 4);
            }
            break;
        case CQL_TYPE_DURATION:
            if (len == 0) return cql_duration_encode(0, 0, 0, out);
            break;
        default:
            break;
        }
        if (cqlval_from_text(t, s, len, out, &inner) != CQLVAL_OK) return not_stored(t, err);
        return 0;
    }
    uint32_t n = cql_srow_node(r, x)->n;
    if (strcmp(kind, "L") == 0 && cql_srow_is(r, x, CQL_SN_ARRAY)) {
        if (id == CQL_TYPE_TUPLE) {
            if (n > t->wire.n) return not_stored(t, err);
            uint32_t el = x + 1;
            for (uint32_t i = 0; i < n; i++, el = cql_srow_node(r, el)->end)
                if (item_element_put(t->args[i], r, el, out, err, depth)) return -1;
            return 0;
        }
        if (id != CQL_TYPE_LIST && id != CQL_TYPE_SET && id != CQL_TYPE_MAP)
            return not_stored(t, err);
        size_t at = cql_collection_begin(out);
        if (at == (size_t)-1) return -1;
        uint32_t el = x + 1;
        for (uint32_t i = 0; i < n; i++, el = cql_srow_node(r, el)->end) {
            if (id == CQL_TYPE_MAP) {
                uint32_t pair = cql_srow_get(r, el, "L");
                if (!cql_srow_is(r, pair, CQL_SN_ARRAY) || cql_srow_node(r, pair)->n != 2 ||
                    item_element_put(t->args[0], r, pair + 1, out, err, depth) ||
                    item_element_put(t->args[1], r, cql_srow_node(r, pair + 1)->end, out, err,
                                     depth))
                    return not_stored(t, err);
            } else if (item_element_put(t->args[0], r, el, out, err, depth)) {
                return -1;
            }
        }
        cql_collection_end(out, at, n);
        return 0;
    }
    if (strcmp(kind, "M") == 0 && cql_srow_is(r, x, CQL_SN_OBJECT)) {
        if (id == CQL_TYPE_UDT) {
            uint16_t last = 0;
            for (uint16_t f = 0; f < t->wire.n; f++)
                if (cql_srow_get(r, x, cqltype_stored_name(t, f)) != CQL_SNONE)
                    last = (uint16_t)(f + 1);
            if (n > last) return not_stored(t, err);
            for (uint16_t f = 0; f < last; f++) {
                uint32_t fv = cql_srow_get(r, x, cqltype_stored_name(t, f));
                if (fv == CQL_SNONE) return not_stored(t, err);
                if (item_element_put(t->args[f], r, fv, out, err, depth)) return -1;
            }
            return 0;
        }
        if (id != CQL_TYPE_MAP) return not_stored(t, err);
        buf raw;
        buf_init(&raw, out->max);
        size_t at = cql_collection_begin(&raw);
        int rc = at == (size_t)-1;
        uint32_t v = x + 1;
        for (uint32_t i = 0; i < n && !rc; i++, v = cql_srow_node(r, v)->end) {
            size_t klen;
            const char *k = cql_srow_key(r, v, &klen);
            size_t kat = raw.len;
            uint8_t zero[4] = {0};
            rc = buf_append(&raw, zero, 4) ||
                 cqlval_from_text(t->args[0], k, klen, &raw, &inner) != CQLVAL_OK;
            if (!rc) cql_int_encode((int32_t)(raw.len - kat - 4), (uint8_t *)raw.data + kat);
            rc = rc || item_element_put(t->args[1], r, v, &raw, err, depth);
        }
        if (!rc) cql_collection_end(&raw, at, n);
        /* keys come back in the map's order */
        rc = rc || cqlval_canonical(t, (const uint8_t *)raw.data, raw.len, out);
        buf_free(&raw);
        return rc ? not_stored(t, err) : 0;
    }
    return not_stored(t, err);
}

/* from_stored of a jansson AttributeValue (NULL: none). */
static int from_item(const cql_ctype *t, const json_t *a, buf *out, cql_parse_error *err, int depth)
{
    cql_srow r;
    cql_srow_init(&r);
    int rc = a && json_is_object(a) && cql_srow_from_json(&r, a) == 0
                 ? from_stored(t, &r, 0, out, err, depth)
                 : not_stored(t, err);
    cql_srow_free(&r);
    return rc;
}

int cqlval_from_stored(const cql_ctype *t, const cql_srow *r, uint32_t av, buf *out,
                       cql_parse_error *err)
{
    size_t start = out->len;
    int rc = from_stored(t, r, av, out, err, 0);
    if (rc) {
        out->len = start;
        not_stored(t, err);
    }
    return rc ? -1 : 0;
}

int cqlval_from_item(const cql_ctype *t, const json_t *a, buf *out, cql_parse_error *err)
{
    size_t start = out->len;
    int rc = from_item(t, a, out, err, 0);
    if (rc) {
        out->len = start;
        not_stored(t, err);
    }
    return rc ? -1 : 0;
}
