/* func.c — Cassandra's native scalar functions and CAST (see func.h).
 *
 * The functions are a table of overloads (name, argument types, result type, what they
 * do), resolved by argument assignability as Cassandra's FunctionResolver does: an exact
 * match wins, one weak match is taken, several are ambiguous. Timeuuids come from one
 * process-wide clock under a mutex. */
#include "cql/func.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cql/arith.h"
#include "cqlwire/cql_value.h"

static const char *tname(const cql_ctype *t, char *s, size_t n)
{
    buf b;
    buf_init(&b, 4096);
    cqltype_name(t, &b);
    snprintf(s, n, "%s", b.data ? b.data : "");
    buf_free(&b);
    return s;
}

/* ---- timeuuids ---- */

/* 100 ns intervals from 1582-10-15 (the uuid epoch) to 1970-01-01. */
#define UUID_EPOCH 0x01b21dd213814000ull

static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_tick;
static uint64_t clock_lsb;

static void random_bytes(uint8_t *p, size_t n)
{
    while (n) {
        ssize_t got = getrandom(p, n, 0);
        if (got <= 0) {
            /* no entropy source: the time and the address of a local still differ per
             * process and call */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uintptr_t)&ts;
            for (; n; n--, p++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                *p = (uint8_t)(x >> 56);
            }
            return;
        }
        p += got;
        n -= (size_t)got;
    }
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* A version 1 uuid's first 8 bytes for a 60-bit uuid timestamp. */
static void put_time(uint8_t *out, uint64_t tick)
{
    uint64_t msb = (tick & 0xffffffffull) << 32 | ((tick >> 32) & 0xffff) << 16 | 0x1000 |
                   ((tick >> 48) & 0x0fff);
    put_u64(out, msb);
}

void cqlfn_timeuuid_now(uint8_t out[16])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t tick = (uint64_t)ts.tv_sec * 10000000ull + (uint64_t)ts.tv_nsec / 100 + UUID_EPOCH;
    pthread_mutex_lock(&clock_lock);
    if (!clock_lsb) {
        uint8_t r[8];
        random_bytes(r, 8);
        uint64_t x = get_u64(r);
        /* variant 10, a random clock sequence, a random node with the multicast bit set */
        clock_lsb = (x & 0x3fffffffffffffffull) | 0x8000000000000000ull | 0x010000000000ull;
    }
    if (tick <= last_tick) tick = last_tick + 1;
    last_tick = tick;
    uint64_t lsb = clock_lsb;
    pthread_mutex_unlock(&clock_lock);
    put_time(out, tick);
    put_u64(out + 8, lsb);
}

void cqlfn_timeuuid_min(int64_t ms, uint8_t out[16])
{
    put_time(out, (uint64_t)ms * 10000 + UUID_EPOCH);
    put_u64(out + 8, 0x8080808080808080ull);
}

void cqlfn_timeuuid_max(int64_t ms, uint8_t out[16])
{
    put_time(out, (uint64_t)(ms + 1) * 10000 - 1 + UUID_EPOCH);
    put_u64(out + 8, 0x7f7f7f7f7f7f7f7full);
}

int64_t cqlfn_timeuuid_ms(const uint8_t u[16])
{
    uint64_t msb = get_u64(u);
    uint64_t tick = (msb & 0x0fff) << 48 | ((msb >> 16) & 0xffff) << 32 | msb >> 32;
    int64_t t = (int64_t)(tick - UUID_EPOCH);
    return t >= 0 ? t / 10000 : -((-t + 9999) / 10000);
}

void cqlfn_uuid_random(uint8_t out[16])
{
    random_bytes(out, 16);
    out[6] = (uint8_t)((out[6] & 0x0f) | 0x40);
    out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
}

/* ---- the table ---- */

#define ANY 0xffff      /* toJson's argument */
#define RECEIVER 0xfffe /* fromJson's result */

typedef enum kind {
    K_NOW,
    K_UUID,
    K_CURRENT_TIMESTAMP,
    K_CURRENT_DATE,
    K_CURRENT_TIME,
    K_TO_TIMESTAMP,
    K_TO_DATE,
    K_TO_UNIX,
    K_MIN_TIMEUUID,
    K_MAX_TIMEUUID,
    K_BLOB_AS,
    K_AS_BLOB,
    K_TO_JSON,
    K_FROM_JSON
} kind;

struct cqlfn_fn {
    const char *name, *full;
    uint16_t ret;
    uint8_t nargs;
    uint16_t arg;
    kind k;
};

#define F0(n, r, k)                                                                                \
    {                                                                                              \
        n, "system." n, r, 0, 0, k                                                                 \
    }
#define F1(n, a, r, k)                                                                             \
    {                                                                                              \
        n, "system." n, r, 1, a, k                                                                 \
    }
#define CONV(tn, id)                                                                               \
    F1("blobas" tn, CQL_TYPE_BLOB, id, K_BLOB_AS), F1(tn "asblob", id, CQL_TYPE_BLOB, K_AS_BLOB)

static const cqlfn_fn fns[] = {
    F0("now", CQL_TYPE_TIMEUUID, K_NOW),
    F0("currenttimeuuid", CQL_TYPE_TIMEUUID, K_NOW),
    F0("uuid", CQL_TYPE_UUID, K_UUID),
    F0("currenttimestamp", CQL_TYPE_TIMESTAMP, K_CURRENT_TIMESTAMP),
    F0("currentdate", CQL_TYPE_DATE, K_CURRENT_DATE),
    F0("currenttime", CQL_TYPE_TIME, K_CURRENT_TIME),
    F1("totimestamp", CQL_TYPE_TIMEUUID, CQL_TYPE_TIMESTAMP, K_TO_TIMESTAMP),
    F1("totimestamp", CQL_TYPE_DATE, CQL_TYPE_TIMESTAMP, K_TO_TIMESTAMP),
    F1("todate", CQL_TYPE_TIMEUUID, CQL_TYPE_DATE, K_TO_DATE),
    F1("todate", CQL_TYPE_TIMESTAMP, CQL_TYPE_DATE, K_TO_DATE),
    F1("tounixtimestamp", CQL_TYPE_TIMEUUID, CQL_TYPE_BIGINT, K_TO_UNIX),
    F1("tounixtimestamp", CQL_TYPE_TIMESTAMP, CQL_TYPE_BIGINT, K_TO_UNIX),
    F1("tounixtimestamp", CQL_TYPE_DATE, CQL_TYPE_BIGINT, K_TO_UNIX),
    F1("dateof", CQL_TYPE_TIMEUUID, CQL_TYPE_TIMESTAMP, K_TO_TIMESTAMP),
    F1("unixtimestampof", CQL_TYPE_TIMEUUID, CQL_TYPE_BIGINT, K_TO_UNIX),
    F1("mintimeuuid", CQL_TYPE_TIMESTAMP, CQL_TYPE_TIMEUUID, K_MIN_TIMEUUID),
    F1("maxtimeuuid", CQL_TYPE_TIMESTAMP, CQL_TYPE_TIMEUUID, K_MAX_TIMEUUID),
    F1("tojson", ANY, CQL_TYPE_VARCHAR, K_TO_JSON),
    F1("fromjson", CQL_TYPE_VARCHAR, RECEIVER, K_FROM_JSON),
    CONV("ascii", CQL_TYPE_ASCII),
    CONV("bigint", CQL_TYPE_BIGINT),
    CONV("boolean", CQL_TYPE_BOOLEAN),
    CONV("counter", CQL_TYPE_COUNTER),
    CONV("date", CQL_TYPE_DATE),
    CONV("decimal", CQL_TYPE_DECIMAL),
    CONV("double", CQL_TYPE_DOUBLE),
    CONV("duration", CQL_TYPE_DURATION),
    CONV("float", CQL_TYPE_FLOAT),
    CONV("inet", CQL_TYPE_INET),
    CONV("int", CQL_TYPE_INT),
    CONV("smallint", CQL_TYPE_SMALLINT),
    CONV("text", CQL_TYPE_VARCHAR),
    CONV("time", CQL_TYPE_TIME),
    CONV("timestamp", CQL_TYPE_TIMESTAMP),
    CONV("timeuuid", CQL_TYPE_TIMEUUID),
    CONV("tinyint", CQL_TYPE_TINYINT),
    CONV("uuid", CQL_TYPE_UUID),
    CONV("varchar", CQL_TYPE_VARCHAR),
    CONV("varint", CQL_TYPE_VARINT),
};

const char *cqlfn_name(const cqlfn_fn *f)
{
    return f->full;
}

const cql_ctype *cqlfn_return_type(const cqlfn_fn *f, const cql_ctype *receiver)
{
    return f->ret == RECEIVER ? receiver : cqltype_native(f->ret);
}

const cql_ctype *cqlfn_arg_type(const cqlfn_fn *f, size_t i, const cql_ctype *actual)
{
    if (i >= f->nargs) return NULL;
    return f->arg == ANY ? actual : cqltype_native(f->arg);
}

/* Whether a value of type from may stand where type to is expected (Cassandra's
 * isValueCompatibleWith, as far as native types go): 2 the same type, 1 compatible. */
static int compatible(const cql_ctype *to, const cql_ctype *from)
{
    if (cqltype_equal(to, from)) return 2;
    uint16_t t = to->wire.id, f = from->wire.id;
    if (t == f && !cqltype_native(t)) {
        /* the same shape, frozen or not */
        if (to->wire.n != from->wire.n) return 0;
        for (uint16_t i = 0; i < to->wire.n; i++)
            if (!compatible(to->args[i], from->args[i])) return 0;
        if (t == CQL_TYPE_UDT &&
            (!to->wire.name || !from->wire.name || strcmp(to->wire.name, from->wire.name) != 0))
            return 0;
        return 1;
    }
    if (t == CQL_TYPE_UUID && f == CQL_TYPE_TIMEUUID) return 1;
    if (t == CQL_TYPE_VARCHAR && f == CQL_TYPE_ASCII) return 1;
    if (t == CQL_TYPE_BLOB && cqltype_native(f)) return 1;
    if (t == CQL_TYPE_VARINT && (f == CQL_TYPE_INT || f == CQL_TYPE_BIGINT ||
                                 f == CQL_TYPE_SMALLINT || f == CQL_TYPE_TINYINT))
        return 1;
    return 0;
}

int cqlfn_compatible(const cql_ctype *to, const cql_ctype *from)
{
    return compatible(to, from);
}

/* How well argument i (type or term) matches overload f: 2 exact, 1 weak, 0 not. */
static int arg_match(const cqlfn_fn *f, const cql_ctype *type, const cql_expr *e)
{
    if (f->arg == ANY) return type ? 2 : e && e->kind == CQL_E_NULL ? 0 : 1;
    const cql_ctype *p = cqltype_native(f->arg);
    if (type) return compatible(p, type);
    if (!e) return 1;
    return cqlval_assignable(p, e);
}

static void signatures(buf *b, const char *name)
{
    int first = 1;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        if (strcmp(fns[i].name, name) != 0) continue;
        buf_printf(b, "%s%s : (%s) -> %s", first ? "" : ", ", fns[i].full,
                   fns[i].nargs == 0   ? ""
                   : fns[i].arg == ANY ? "any"
                                       : cql_type_name(fns[i].arg),
                   fns[i].ret == RECEIVER ? "any" : cql_type_name(fns[i].ret));
        first = 0;
    }
}

int cqlfn_is_selection_only(const char *name)
{
    if (strncmp(name, "system.", 7) == 0) name += 7;
    return strcmp(name, "tojson") == 0;
}

int cqlfn_selection_only_error(cql_parse_error *err)
{
    return cql_error_record(err, CQL_ERR_INVALID,
                            "toJson() may only be used within the selection clause of SELECT "
                            "statements");
}

const cqlfn_fn *cqlfn_resolve(const char *name, const cql_ctype *const *types,
                              const cql_expr *const *exprs, size_t n, const cql_ctype *receiver,
                              cql_parse_error *err)
{
    if (receiver && cqlfn_is_selection_only(name)) {
        cqlfn_selection_only_error(err);
        return NULL;
    }
    if (strncmp(name, "system.", 7) == 0) name += 7;
    const cqlfn_fn *weak[8];
    size_t nweak = 0, candidates = 0;
    const cqlfn_fn *any = NULL;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        const cqlfn_fn *f = &fns[i];
        if (strcmp(f->name, name) != 0) continue;
        candidates++;
        any = f;
        if (f->nargs != n) continue;
        int m = 2;
        for (size_t a = 0; a < n && m; a++) {
            int x = arg_match(f, types ? types[a] : NULL, exprs ? exprs[a] : NULL);
            if (x < m) m = x;
        }
        if (m == 2) {
            nweak = 0;
            weak[nweak++] = f;
            break;
        }
        if (m == 1 && nweak < 8) weak[nweak++] = f;
    }
    if (!candidates) {
        cql_error_record(err, CQL_ERR_INVALID, "Unknown function %s", name);
        return NULL;
    }
    if (candidates == 1 && any->nargs != n) {
        cql_error_record(
            err, CQL_ERR_INVALID,
            "Invalid number of arguments in call to function %s: %u required but %zu provided",
            any->full, any->nargs, n);
        return NULL;
    }
    if (nweak == 1) {
        if (weak[0]->ret == RECEIVER && !receiver) {
            cql_error_record(
                err, CQL_ERR_INVALID,
                "fromJson() cannot be used in the selection clause of a SELECT statement");
            return NULL;
        }
        return weak[0];
    }
    if (nweak == 0 && candidates == 1 && exprs && any->arg != ANY) {
        /* one overload: FunctionResolver's validateTypes names the argument that fails */
        for (size_t a = 0; a < n; a++) {
            if (!exprs[a] || arg_match(any, types ? types[a] : NULL, exprs[a])) continue;
            char *text = cql_print_expr(exprs[a]);
            cql_error_record(err, CQL_ERR_INVALID,
                             "Type error: %s cannot be passed as argument %zu of function %s of "
                             "type %s",
                             text ? text : "?", a, any->full, cql_type_name(any->arg));
            free(text);
            return NULL;
        }
    }
    buf b;
    buf_init(&b, 4096);
    if (nweak == 0) {
        signatures(&b, name);
        cql_error_record(
            err, CQL_ERR_INVALID,
            "Invalid call to function system.%s, none of its type signatures match (known type "
            "signatures: %s)",
            name, b.data ? b.data : "");
    } else {
        for (size_t i = 0; i < nweak; i++)
            buf_printf(&b, "%s%s : (%s) -> %s", i ? ", " : "", weak[i]->full,
                       weak[i]->arg == ANY ? "any" : cql_type_name(weak[i]->arg),
                       weak[i]->ret == RECEIVER ? "any" : cql_type_name(weak[i]->ret));
        cql_error_record(
            err, CQL_ERR_INVALID,
            "Ambiguous call to function system.%s (can be matched by following signatures: %s): "
            "use type casts to disambiguate",
            name, b.data ? b.data : "");
    }
    buf_free(&b);
    return NULL;
}

/* ---- calls ---- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && ((a < 0) != (b < 0)));
}

/* The milliseconds of a timeuuid, timestamp or date value. */
static int to_ms(uint16_t id, const uint8_t *p, size_t len, int64_t *ms)
{
    int64_t v;
    switch (id) {
    case CQL_TYPE_TIMEUUID:
        if (len != 16) return -1;
        *ms = cqlfn_timeuuid_ms(p);
        return 0;
    case CQL_TYPE_TIMESTAMP:
        if (cql_bigint_decode(p, len, &v)) return -1;
        *ms = v;
        return 0;
    case CQL_TYPE_DATE:
        if (cql_date_decode(p, len, &v)) return -1;
        *ms = v * 86400000;
        return 0;
    default:
        return -1;
    }
}

static int put_bigint(buf *out, int64_t v)
{
    uint8_t b[8];
    cql_bigint_encode(v, b);
    return buf_append(out, b, 8);
}

static int put_date(buf *out, int64_t ms)
{
    uint8_t b[4];
    cql_date_encode(floor_div(ms, 86400000), b);
    return buf_append(out, b, 4);
}

int cqlfn_call(const cqlfn_fn *f, const cql_ctype *const *types, const cql_value *args, size_t n,
               const cql_ctype *ret, buf *out, cql_parse_error *err)
{
    size_t start = out->len;
    int rc = 0;
    uint8_t u[16];
    if (n != f->nargs)
        return cql_error_record(
            err, CQL_ERR_INVALID,
            "Invalid number of arguments in call to function %s: %u required but %zu provided",
            f->full, f->nargs, n);
    const uint8_t *p = n ? args[0].p : NULL;
    size_t len = n && args[0].len > 0 ? (size_t)args[0].len : 0;
    if (n && args[0].len < 0 && f->k != K_TO_JSON) return CQLVAL_NULL;
    int64_t ms;
    switch (f->k) {
    case K_NOW:
        cqlfn_timeuuid_now(u);
        rc = buf_append(out, u, 16);
        break;
    case K_UUID:
        cqlfn_uuid_random(u);
        rc = buf_append(out, u, 16);
        break;
    case K_CURRENT_TIMESTAMP:
        rc = put_bigint(out, now_ms());
        break;
    case K_CURRENT_DATE:
        rc = put_date(out, now_ms());
        break;
    case K_CURRENT_TIME: {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint8_t b[8];
        cql_time_encode((int64_t)(ts.tv_sec % 86400) * 1000000000LL + ts.tv_nsec, b);
        rc = buf_append(out, b, 8);
        break;
    }
    case K_TO_TIMESTAMP:
    case K_TO_DATE:
    case K_TO_UNIX:
        if (len == 0) return CQLVAL_NULL;
        if (to_ms(f->arg, p, len, &ms))
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "In call to function %s, the argument is not a valid %s",
                                    f->full, cql_type_name(f->arg));
        rc = f->k == K_TO_DATE ? put_date(out, ms) : put_bigint(out, ms);
        break;
    case K_MIN_TIMEUUID:
    case K_MAX_TIMEUUID:
        if (len == 0) return CQLVAL_NULL;
        if (to_ms(CQL_TYPE_TIMESTAMP, p, len, &ms))
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "In call to function %s, the argument is not a valid timestamp",
                                    f->full);
        if (f->k == K_MIN_TIMEUUID)
            cqlfn_timeuuid_min(ms, u);
        else
            cqlfn_timeuuid_max(ms, u);
        rc = buf_append(out, u, 16);
        break;
    case K_BLOB_AS: {
        cql_parse_error inner = {0};
        if (cqlval_validate(ret, p, len, &inner)) {
            buf h;
            buf_init(&h, 0);
            cqlval_to_cql(cqltype_native(CQL_TYPE_BLOB), p, len, &h);
            char tn[256];
            cql_error_record(
                err, CQL_ERR_INVALID,
                "In call to function %s, value %s is not a valid binary representation for type "
                "%s",
                f->full, h.data ? h.data : "0x", tname(ret, tn, sizeof tn));
            buf_free(&h);
            return CQLVAL_ERROR;
        }
        rc = buf_append(out, p, len);
        break;
    }
    case K_AS_BLOB:
        rc = buf_append(out, p, len);
        break;
    case K_TO_JSON:
        if (args[0].len < 0)
            rc = buf_puts(out, "null");
        else if (cqlval_to_json(types[0], p, len, out))
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "In call to function %s, the argument is malformed", f->full);
        break;
    case K_FROM_JSON: {
        /* a text that is not JSON of the receiver's type fails the function's execution:
         * Cassandra's FunctionFailure, not Invalid */
        json_t *j = cqlval_json_parse((const char *)p, len, err);
        int r = j ? cqlval_from_json(ret, "fromJson", j, out, err) : CQLVAL_ERROR;
        json_decref(j);
        if (r == CQLVAL_ERROR && err && err->code == CQL_ERR_INVALID) {
            static const char *const text[] = {"text"};
            err->code = CQL_ERR_FUNCTION_FAILURE;
            cql_error_function(err, f->name, text, 1);
        }
        return r;
    }
    }
    if (rc) {
        out->len = start;
        if (err && !err->code && !err->msg[0]) {
            err->code = CQL_ERR_SERVER;
            snprintf(err->msg, sizeof err->msg, "The result of %s is too large", f->full);
        }
        return CQLVAL_ERROR;
    }
    return CQLVAL_OK;
}

/* ---- CAST ---- */

static int is_numeric(uint16_t id)
{
    switch (id) {
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
    case CQL_TYPE_VARINT:
    case CQL_TYPE_DECIMAL:
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE:
        return 1;
    default:
        return 0;
    }
}

/* The casts CastFcts defines (a cast to the value's own type is the value). */
static int cast_ok(uint16_t from, uint16_t to)
{
    if (from == to) return 1;
    int text = to == CQL_TYPE_VARCHAR || to == CQL_TYPE_ASCII;
    if (is_numeric(from)) return (is_numeric(to) && to != CQL_TYPE_COUNTER) || text;
    switch (from) {
    case CQL_TYPE_ASCII:
        return to == CQL_TYPE_VARCHAR;
    case CQL_TYPE_INET:
    case CQL_TYPE_BOOLEAN:
    case CQL_TYPE_TIME:
    case CQL_TYPE_UUID:
        return text;
    case CQL_TYPE_TIMEUUID:
        return text || to == CQL_TYPE_DATE || to == CQL_TYPE_TIMESTAMP;
    case CQL_TYPE_TIMESTAMP:
        return text || to == CQL_TYPE_DATE;
    case CQL_TYPE_DATE:
        return text || to == CQL_TYPE_TIMESTAMP;
    default:
        return 0;
    }
}

int cqlfn_cast_check_as(const cql_ctype *from, const cql_ctype *to, const char *what,
                        cql_parse_error *err)
{
    uint16_t f = from->wire.id, t = to->wire.id;
    if (cqltype_native(t) && cqltype_native(f) && cast_ok(f, t)) return 0;
    char tn[256];
    return cql_error_record(err, CQL_ERR_INVALID, "%s cannot be cast to %s", what,
                            tname(to, tn, sizeof tn));
}

int cqlfn_cast_check(const cql_ctype *from, const cql_ctype *to, cql_parse_error *err)
{
    char fn[256];
    return cqlfn_cast_check_as(from, to, tname(from, fn, sizeof fn), err);
}

/* A numeric value read out: exactly as int64, as a double, or as decimal text. */
typedef struct number {
    int is_int, is_float;
    int64_t i;
    double d;
    buf text; /* a plain or E-notation decimal, for varint and decimal */
} number;

static int read_number(uint16_t id, const uint8_t *p, size_t len, number *n)
{
    memset(n, 0, sizeof *n);
    buf_init(&n->text, 0);
    switch (id) {
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER: {
        int64_t v = (int8_t)p[0];
        for (size_t i = 1; i < len; i++)
            v = v * 256 + p[i];
        n->is_int = 1;
        n->i = v;
        return 0;
    }
    case CQL_TYPE_FLOAT: {
        float f;
        if (cql_float_decode(p, len, &f)) return -1;
        n->is_float = 1;
        n->d = f;
        return 0;
    }
    case CQL_TYPE_DOUBLE:
        n->is_float = 1;
        return cql_double_decode(p, len, &n->d);
    case CQL_TYPE_VARINT:
        return cql_varint_to_text(p, len, &n->text);
    case CQL_TYPE_DECIMAL:
        return cql_decimal_to_text(p, len, &n->text);
    default:
        return -1;
    }
}

/* Decimal text (digits, '.', E exponent) truncated toward zero to integer digits. */
static int truncate_text(const char *s, buf *out)
{
    int neg = s[0] == '-';
    if (neg || s[0] == '+') s++;
    const char *e = strpbrk(s, "eE");
    long exp = e ? strtol(e + 1, NULL, 10) : 0;
    buf digits;
    buf_init(&digits, 0);
    long point = -1;
    for (const char *c = s; *c && c != e; c++) {
        if (*c == '.')
            point = (long)digits.len;
        else
            buf_putc(&digits, (uint8_t)*c);
    }
    if (point < 0) point = (long)digits.len;
    point += exp; /* integer digits */
    int rc = 0;
    if (neg) rc = buf_putc(out, '-');
    if (point <= 0) {
        rc = rc ? rc : buf_putc(out, '0');
    } else if (point > CQL_NUMBER_DIGITS) {
        rc = -1;
    } else {
        for (long i = 0; i < point && !rc; i++)
            rc = buf_putc(out, i < (long)digits.len ? (uint8_t)digits.data[i] : '0');
    }
    buf_free(&digits);
    return rc;
}

/* BigInteger.longValue and BigDecimal.longValue: the integer part's low 64 bits. */
static int text_low64(const char *text, int64_t *v)
{
    buf ib, vb;
    buf_init(&ib, 0);
    buf_init(&vb, 0);
    int rc = truncate_text(text, &ib);
    rc = rc ? rc : cql_varint_from_text(ib.data, ib.len, &vb);
    uint64_t low = 0;
    if (!rc) {
        uint8_t sign = (vb.data[0] & 0x80) ? 0xff : 0x00;
        for (size_t i = 0; i < 8; i++) {
            size_t at = vb.len >= 8 - i ? vb.len - (8 - i) : (size_t)-1;
            low = low << 8 | (at == (size_t)-1 ? sign : (uint8_t)vb.data[at]);
        }
    }
    buf_free(&ib);
    buf_free(&vb);
    *v = (int64_t)low;
    return rc;
}

/* Java's (long) of a double: NaN is 0, beyond the range saturates. */
static int64_t java_long(double d)
{
    if (isnan(d)) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
}

static int32_t java_int(double d)
{
    if (isnan(d)) return 0;
    if (d >= 2147483647.0) return INT32_MAX;
    if (d <= -2147483648.0) return INT32_MIN;
    return (int32_t)d;
}

static int put_width(buf *out, uint16_t id, int64_t v)
{
    uint8_t b[8];
    switch (id) {
    case CQL_TYPE_TINYINT:
        return buf_putc(out, (uint8_t)v);
    case CQL_TYPE_SMALLINT:
        cql_smallint_encode((int16_t)v, b);
        return buf_append(out, b, 2);
    case CQL_TYPE_INT:
        cql_int_encode((int32_t)v, b);
        return buf_append(out, b, 4);
    default:
        return put_bigint(out, v);
    }
}

static int cast_number(uint16_t from, uint16_t to, const uint8_t *p, size_t len, buf *out,
                       cql_parse_error *err)
{
    number n;
    if (read_number(from, p, len, &n)) {
        buf_free(&n.text);
        return cql_error_record(err, CQL_ERR_INVALID, "The value to cast is not a valid %s",
                                cql_type_name(from));
    }
    int rc = 0;
    switch (to) {
    case CQL_TYPE_TINYINT:
    case CQL_TYPE_SMALLINT:
    case CQL_TYPE_INT:
    case CQL_TYPE_BIGINT:
    case CQL_TYPE_COUNTER:
        if (n.is_int) {
            rc = put_width(out, to, n.i);
        } else if (n.is_float) {
            rc = put_width(out, to,
                           to == CQL_TYPE_BIGINT || to == CQL_TYPE_COUNTER ? java_long(n.d)
                                                                           : java_int(n.d));
        } else {
            /* BigInteger and BigDecimal narrowing keep the low bits */
            int64_t low;
            rc = text_low64(n.text.data, &low);
            rc = rc ? rc : put_width(out, to, low);
        }
        break;
    case CQL_TYPE_FLOAT:
    case CQL_TYPE_DOUBLE: {
        double d = n.is_int ? (double)n.i : n.is_float ? n.d : strtod(n.text.data, NULL);
        uint8_t b[8];
        if (to == CQL_TYPE_FLOAT) {
            float f = n.is_int ? (float)n.i : n.is_float ? (float)n.d : strtof(n.text.data, NULL);
            cql_float_encode(f, b);
            rc = buf_append(out, b, 4);
        } else {
            cql_double_encode(d, b);
            rc = buf_append(out, b, 8);
        }
        break;
    }
    case CQL_TYPE_VARINT: {
        /* BigInteger.valueOf(p.longValue()) */
        int64_t v = 0;
        if (n.is_int)
            v = n.i;
        else if (n.is_float)
            v = java_long(n.d);
        else
            rc = text_low64(n.text.data, &v);
        rc = rc ? rc : cql_varint_from_int64(v, out);
        break;
    }
    case CQL_TYPE_DECIMAL: {
        /* integers exactly: new BigDecimal(BigInteger), BigDecimal.valueOf(p.longValue()) */
        if (n.is_int || from == CQL_TYPE_VARINT) {
            char digits[32];
            if (n.is_int) snprintf(digits, sizeof digits, "%lld", (long long)n.i);
            const char *text = n.is_int ? digits : n.text.data;
            rc = cql_decimal_from_text(text, strlen(text), out);
            break;
        }
        /* floats: BigDecimal.valueOf(p.doubleValue()), the double's shortest text */
        double d = n.is_int ? (double)n.i : n.is_float ? n.d : strtod(n.text.data, NULL);
        if (!isfinite(d)) {
            buf_free(&n.text);
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Cannot cast %s to decimal: Infinite or NaN",
                                    isnan(d) ? "NaN" : "Infinity");
        }
        uint8_t b[8];
        cql_double_encode(d, b);
        buf text;
        buf_init(&text, 0);
        rc = cqlval_to_text(cqltype_native(CQL_TYPE_DOUBLE), b, 8, &text);
        rc = rc ? rc : cql_decimal_from_text(text.data, text.len, out);
        buf_free(&text);
        break;
    }
    default:
        rc = -1;
    }
    buf_free(&n.text);
    if (rc)
        return cql_error_record(err, CQL_ERR_INVALID, "Cannot cast the %s value to %s",
                                cql_type_name(from), cql_type_name(to));
    return CQLVAL_OK;
}

int cqlfn_cast(const cql_ctype *from, const cql_ctype *to, const uint8_t *v, size_t len, buf *out,
               cql_parse_error *err)
{
    if (cqlfn_cast_check(from, to, err)) return CQLVAL_ERROR;
    uint16_t f = from->wire.id, t = to->wire.id;
    size_t start = out->len;
    int rc = 0;
    int64_t ms;
    if (len == 0 && !(t == CQL_TYPE_VARCHAR || t == CQL_TYPE_ASCII)) return CQLVAL_NULL;
    if (f == t) {
        rc = buf_append(out, v, len);
    } else if (t == CQL_TYPE_VARCHAR || t == CQL_TYPE_ASCII) {
        rc = cqlval_to_text(from, v, len, out);
        if (!rc && t == CQL_TYPE_ASCII &&
            !cql_ascii_valid((uint8_t *)out->data + start, out->len - start)) {
            out->len = start;
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "The %s value cannot be cast to ascii: it is not ASCII text",
                                    cql_type_name(f));
        }
    } else if (t == CQL_TYPE_DATE || t == CQL_TYPE_TIMESTAMP) {
        if (to_ms(f, v, len, &ms))
            return cql_error_record(err, CQL_ERR_INVALID, "The value to cast is not a valid %s",
                                    cql_type_name(f));
        rc = t == CQL_TYPE_DATE ? put_date(out, ms) : put_bigint(out, ms);
    } else {
        int r = cast_number(f, t, v, len, out, err);
        if (r != CQLVAL_OK) out->len = start;
        return r;
    }
    if (rc) {
        out->len = start;
        return cql_error_record(err, CQL_ERR_INVALID, "Cannot cast the %s value to %s",
                                cql_type_name(f), cql_type_name(t));
    }
    return CQLVAL_OK;
}

/* ---- terms ---- */

static const cql_ctype *term_type(const cqlfn_env *env, const cql_expr *e, cql_parse_error *err);

/* The result type of a function call, cast or hint whose type is known without a
 * receiver; NULL for other terms. */
static const cql_ctype *term_type(const cqlfn_env *env, const cql_expr *e, cql_parse_error *err)
{
    if (e->kind == CQL_E_TUPLE && e->nitems == 1) return term_type(env, e->items[0], err);
    if ((e->kind == CQL_E_CAST || e->kind == CQL_E_HINT) && e->type && env->arena) {
        const cql_ctype *t = NULL;
        cql_parse_error inner = {0};
        if (cqltype_resolve(env->arena, e->type, env->types, &t, &inner) == 0) return t;
        return NULL;
    }
    if (e->kind == CQL_E_BINARY || e->kind == CQL_E_NEGATE) {
        cqlarith_op o;
        cql_parse_error inner = {0};
        return cqlfn_operation(env, e, 0, &o, &inner) == 0 ? cqltype_native(o.ret) : NULL;
    }
    if (e->kind != CQL_E_FUNCTION || e->star) return NULL;
    const cql_ctype *types[8] = {0};
    const cql_expr *exprs[8];
    if (e->nitems > 8) return NULL;
    for (size_t i = 0; i < e->nitems; i++) {
        types[i] = term_type(env, e->items[i], err);
        exprs[i] = e->items[i];
    }
    cql_parse_error inner = {0};
    const cqlfn_fn *f = cqlfn_resolve(e->fn.name, types, exprs, e->nitems, NULL, &inner);
    return f ? cqlfn_return_type(f, NULL) : NULL;
}

/* ---- operations ---- */

typedef struct operands {
    const cqlfn_env *env;
    const cql_expr *const *items;
} operands;

/* How well term e fits a parameter of native type id (arith.h's cqlarith_fit): a marker
 * weakly, a nested operation by the result it resolves to for that parameter (weakly when
 * it resolves to none: its own error comes when it is evaluated), a cast, hint or call by
 * its result type, a constant by its assignability. */
static int term_fit(void *ctx, size_t i, uint16_t id)
{
    const operands *ops = ctx;
    const cql_expr *e = ops->items[i];
    while (e->kind == CQL_E_TUPLE && e->nitems == 1) /* (term) */
        e = e->items[0];
    const cql_ctype *pt = cqltype_native(id);
    if (e->kind == CQL_E_BIND) return 1;
    cql_parse_error inner = {0};
    if (e->kind == CQL_E_BINARY || e->kind == CQL_E_NEGATE) {
        cqlarith_op o;
        if (cqlfn_operation(ops->env, e, id, &o, &inner) != 0) return 1;
        return o.ret == id ? 2 : compatible(pt, cqltype_native(o.ret)) ? 1 : 0;
    }
    const cql_ctype *known = term_type(ops->env, e, &inner);
    if (known) return compatible(pt, known);
    return cqlval_assignable(pt, e);
}

int cqlfn_operation(const cqlfn_env *env, const cql_expr *e, uint16_t receiver, cqlarith_op *out,
                    cql_parse_error *err)
{
    size_t n = e->kind == CQL_E_NEGATE ? 1 : 2;
    if (e->nitems != n) return cql_error_record(err, CQL_ERR_INVALID, "Malformed operation");
    operands ops = {env, (const cql_expr *const *)e->items};
    int markers[2] = {0, 0};
    char *texts[2] = {NULL, NULL};
    for (size_t i = 0; i < n; i++) {
        markers[i] = e->items[i]->kind == CQL_E_BIND;
        texts[i] = cql_print_expr(e->items[i]);
    }
    const char *shown[2] = {texts[0] ? texts[0] : "?", texts[1] ? texts[1] : "?"};
    int rc = cqlarith_resolve(e->kind == CQL_E_NEGATE ? 'n' : e->op, n, term_fit, &ops, markers,
                              shown, receiver, out, err);
    free(texts[0]);
    free(texts[1]);
    return rc;
}

/* An operation where a value of type t is expected: its overload, its operands as values
 * of the overload's types, then the computation. */
static int operation_term(const cqlfn_env *env, const cql_ctype *t, const char *receiver,
                          const cql_expr *e, buf *out, cql_parse_error *err)
{
    cqlarith_op o;
    uint16_t want = t->wire.id == CQL_TYPE_CUSTOM ? 0 : t->wire.id;
    if (cqlfn_operation(env, e, want, &o, err) != 0) return CQLVAL_ERROR;
    cqlval_terms self = {cqlfn_term, (void *)env};
    buf v[2];
    int32_t len[2] = {CQL_NULL, CQL_NULL};
    int r = CQLVAL_OK;
    size_t n = e->kind == CQL_E_NEGATE ? 1 : 2;
    for (size_t i = 0; i < 2; i++)
        buf_init(&v[i], out->max);
    for (size_t i = 0; i < n && r == CQLVAL_OK; i++) {
        char an[300];
        snprintf(an, sizeof an, "arg%zu(%s)", i, cqlarith_function(o.op));
        r = cqlval_from_term(cqltype_native(i ? o.right : o.left), an, e->items[i], &self, &v[i],
                             err);
        if (r == CQLVAL_UNSET)
            r = cql_error_record(err, CQL_ERR_INVALID,
                                 "Invalid unset value for argument in call to function %s",
                                 cqlarith_function(o.op));
        if (r == CQLVAL_OK) len[i] = (int32_t)v[i].len;
        if (r == CQLVAL_NULL) r = CQLVAL_OK;
    }
    (void)receiver;
    if (r == CQLVAL_OK)
        r = cqlarith_apply(&o, (const uint8_t *)v[0].data, len[0], (const uint8_t *)v[1].data,
                           len[1], out, err);
    buf_free(&v[0]);
    buf_free(&v[1]);
    return r;
}

int cqlfn_term(void *ctx, const cql_ctype *t, const char *receiver, const cql_expr *e, buf *out,
               cql_parse_error *err)
{
    cqlfn_env *env = ctx;
    cqlval_terms self = {cqlfn_term, env};
    char tn[256], rn[256];
    if (e->kind == CQL_E_HINT || e->kind == CQL_E_CAST) {
        const cql_ctype *h = NULL;
        if (!env->arena || cqltype_resolve(env->arena, e->type, env->types, &h, err))
            return env->arena
                       ? CQLVAL_ERROR
                       : cql_error_record(err, CQL_ERR_INVALID, "A type cannot be resolved here");
        if (e->kind == CQL_E_HINT) {
            if (!compatible(t, h))
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "Cannot assign value of type %s to %s of type %s",
                                        tname(h, tn, sizeof tn), receiver, tname(t, rn, sizeof rn));
            return cqlval_from_term(h, receiver, e->items[0], &self, out, err);
        }
        /* CAST(term AS type): the term's own type must be known */
        const cql_ctype *from = term_type(env, e->items[0], err);
        if (!from)
            return cql_error_record(
                err, CQL_ERR_INVALID,
                "Cannot cast %s: its type is not known (cast a column or a function's result)",
                receiver);
        if (!compatible(t, h))
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "Cannot assign value of type %s to %s of type %s",
                                    tname(h, tn, sizeof tn), receiver, tname(t, rn, sizeof rn));
        if (cqlfn_cast_check_as(from, h, receiver, err)) return CQLVAL_ERROR;
        buf v;
        buf_init(&v, out->max);
        int r = cqlval_from_term(from, receiver, e->items[0], &self, &v, err);
        if (r == CQLVAL_OK) r = cqlfn_cast(from, h, (const uint8_t *)v.data, v.len, out, err);
        buf_free(&v);
        return r;
    }
    if (e->kind == CQL_E_BINARY || e->kind == CQL_E_NEGATE)
        return operation_term(env, t, receiver, e, out, err);
    if (e->kind != CQL_E_FUNCTION) {
        if (env->binds.fn) return env->binds.fn(env->binds.ctx, t, receiver, e, out, err);
        return cql_error_record(
            err, CQL_ERR_INVALID,
            "Invalid term for \"%s\" of type %s: only constants and functions are allowed here",
            receiver, tname(t, tn, sizeof tn));
    }
    if (e->star)
        return cql_error_record(err, CQL_ERR_INVALID, "Invalid use of * in a call to %s",
                                e->fn.name);
    size_t n = e->nitems;
    if (n > 8)
        return cql_error_record(err, CQL_ERR_INVALID, "Too many arguments in call to function %s",
                                e->fn.name);
    const cql_ctype *types[8] = {0};
    const cql_expr *exprs[8];
    for (size_t i = 0; i < n; i++) {
        types[i] = term_type(env, e->items[i], err);
        exprs[i] = e->items[i];
    }
    const cqlfn_fn *f = cqlfn_resolve(e->fn.name, types, exprs, n, t, err);
    if (!f) return CQLVAL_ERROR;
    const cql_ctype *ret = cqlfn_return_type(f, t);
    if (!compatible(t, ret))
        return cql_error_record(
            err, CQL_ERR_INVALID,
            "Type error: cannot assign result of function %s (type %s) to %s (type %s)", f->full,
            tname(ret, tn, sizeof tn), receiver, tname(t, rn, sizeof rn));
    buf vals;
    buf_init(&vals, out->max);
    size_t at[8];
    int32_t lens[8];
    const cql_ctype *argt[8];
    int r = CQLVAL_OK;
    for (size_t i = 0; i < n && r == CQLVAL_OK; i++) {
        argt[i] = cqlfn_arg_type(f, i, types[i]);
        if (!argt[i]) {
            r = cql_error_record(
                err, CQL_ERR_INVALID,
                "Ambiguous call to function %s: the type of argument %zu is not known; use "
                "type casts to disambiguate",
                f->full, i);
            break;
        }
        char an[300];
        snprintf(an, sizeof an, "arg%zu(%s)", i, f->full);
        at[i] = vals.len;
        r = cqlval_from_term(argt[i], an, e->items[i], &self, &vals, err);
        lens[i] = r == CQLVAL_OK ? (int32_t)(vals.len - at[i]) : CQL_NULL;
        if (r == CQLVAL_UNSET) {
            const char *dot = strrchr(f->full, '.');
            r = cql_error_record(err, CQL_ERR_INVALID,
                                 "Invalid unset value for argument in call to function %s",
                                 dot ? dot + 1 : f->full);
            break;
        }
        if (r == CQLVAL_NULL) r = CQLVAL_OK;
    }
    if (r == CQLVAL_OK) {
        cql_value args[8];
        for (size_t i = 0; i < n; i++) {
            args[i].p = lens[i] >= 0 ? (const uint8_t *)vals.data + at[i] : NULL;
            args[i].len = lens[i];
        }
        r = cqlfn_call(f, argt, args, n, ret, out, err);
    }
    buf_free(&vals);
    return r;
}
