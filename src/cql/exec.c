/* exec.c — the executor's entry points (exec.h): a call's error and result, the
 * database's CQL state, the rows of a result, and the dispatch of a parsed statement to
 * the system tables, the schema statements or the row statements.
 *
 * Parsing is ast.h's, value codecs are value.h's; each statement kind runs in its own
 * file (exec_ddl.c, system.c, ...). */
#include "cql/exec.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cql/exec_int.h"
#include "cql/aggregate.h"
#include "cql/func.h"
#include "cql/keyenc.h"
#include "cql/types.h"
#include "cql/value.h"
#include "cqlwire/cql_value.h"
#include "engine/engine.h"
#include "engine/meta.h"

/* ---- the call ---- */

void cql_call_init(cql_call *c, qr_db *db, uint8_t version, const char *keyspace, const char *user)
{
    memset(c, 0, sizeof *c);
    c->db = db;
    c->version = version;
    c->keyspace = keyspace && keyspace[0] ? keyspace : NULL;
    c->user = user;
    buf_init(&c->body, 0);
    buf_init(&c->event, 0);
}

void cql_call_free(cql_call *c)
{
    buf_free(&c->body);
    buf_free(&c->event);
    for (uint16_t i = 0; i < c->n_warnings; i++)
        free(c->warnings[i]);
    c->n_warnings = 0;
}

void cql_warn(cql_call *c, const char *fmt, ...)
{
    if (c->n_warnings >= CQL_CALL_MAX_WARNINGS) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s == NULL) return;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    c->warnings[c->n_warnings++] = s;
}

int cql_fail(cql_call *c, cql_error_code code, const char *fmt, ...)
{
    if (c->failed) return -1;
    c->failed = 1;
    c->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int cql_fail_parsed(cql_call *c, const cql_parse_error *perr)
{
    if (c->failed) return -1;
    if (perr->code == CQL_ERR_FUNCTION_FAILURE) {
        snprintf(c->err_fn, sizeof c->err_fn, "%s", perr->fn_name);
        c->err_fn_nargs = 0;
        for (unsigned i = 0; i < perr->fn_nargs && i < 2; i++)
            snprintf(c->err_fn_args[c->err_fn_nargs++], sizeof c->err_fn_args[0], "%s",
                     perr->fn_args[i]);
    }
    return cql_fail(c, (cql_error_code)perr->code, "%s", perr->msg);
}

int cql_fail_engine(cql_call *c, cql_error_code code, qr_err *err)
{
    cql_fail(c, err_is_throttling(err) ? CQL_ERR_OVERLOADED : code, "%s", err->msg);
    err_clear(err);
    return -1;
}

int cql_call_error_body(const cql_call *c, buf *out)
{
    cql_error e;
    memset(&e, 0, sizeof e);
    e.code = c->failed ? c->code : CQL_ERR_SERVER;
    e.message = c->failed ? c->msg : "no error was recorded";
    if (e.code == CQL_ERR_ALREADY_EXISTS) {
        e.keyspace = c->err_keyspace;
        e.name = c->err_name;
    }
    const char *fn_args[2];
    if (e.code == CQL_ERR_FUNCTION_FAILURE) {
        e.keyspace = "system";
        e.name = c->err_fn;
        for (unsigned i = 0; i < c->err_fn_nargs && i < 2; i++)
            fn_args[i] = c->err_fn_args[i];
        e.arg_types = fn_args;
        e.n_arg_types = c->err_fn_nargs;
    }
    if (e.code == CQL_ERR_UNPREPARED) {
        e.id = c->err_id;
        e.id_len = c->err_id_len;
    }
    if (e.code == CQL_ERR_WRITE_FAILURE || e.code == CQL_ERR_WRITE_TIMEOUT ||
        e.code == CQL_ERR_READ_FAILURE || e.code == CQL_ERR_READ_TIMEOUT) {
        /* one node: the one replica the request needed, which did not answer it; drivers
         * read the write's type by name, so it must be one of the spec's */
        e.consistency = CQL_CL_ONE;
        e.block_for = 1;
        e.write_type = "SIMPLE";
    }
    return cql_write_error(out, c->version, &e);
}

/* ---- the database's state ---- */

static void state_free(void *p)
{
    cql_state *st = p;
    cql_schema_free(st->schema);
    free(st->schema);
    cql_tinfo_cache_clear(st);
    cql_prepared_free_all(st);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

cql_state *cql_state_of(cql_call *c)
{
    cql_state *st = engine_cql_state(c->db);
    if (st) return st;
    st = calloc(1, sizeof *st);
    cql_schema *s = calloc(1, sizeof *s);
    if (st == NULL || s == NULL) {
        free(st);
        free(s);
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        return NULL;
    }
    qr_err err;
    err_init(&err);
    if (cql_schema_load(c->db, s, &err) != 0) {
        free(st);
        free(s);
        cql_fail_engine(c, CQL_ERR_SERVER, &err);
        return NULL;
    }
    pthread_mutex_init(&st->lock, NULL);
    st->schema = s;
    cql_state *installed = engine_cql_state_set(c->db, st, state_free);
    if (installed != st) state_free(st);
    return installed;
}

/* ---- user types ---- */

typedef struct udt_ctx {
    cql_state *st;
    arena *a;
    int depth;
} udt_ctx;

static const cql_ctype *udt_lookup(void *ctx, const char *ks, const char *name)
{
    udt_ctx *u = ctx;
    json_t *ty = cql_schema_type(u->st->schema, ks, name);
    if (ty == NULL || u->depth > 16) return NULL;
    json_t *fields = json_object_get(ty, "fields"), *types = json_object_get(ty, "types");
    json_t *stored = json_object_get(ty, "stored");
    size_t n = json_array_size(fields);
    if (stored && json_array_size(stored) != n) return NULL;
    cql_ctype *t = arena_alloc(u->a, sizeof *t);
    const cql_ctype **args = arena_alloc(u->a, (n + 1) * sizeof *args);
    const cql_type **params = arena_alloc(u->a, (n + 1) * sizeof *params);
    const char **names = arena_alloc(u->a, (n + 1) * sizeof *names);
    const char **keys = stored ? arena_alloc(u->a, (n + 1) * sizeof *keys) : NULL;
    if (t == NULL || args == NULL || params == NULL || names == NULL || (stored && !keys))
        return NULL;
    cqltype_env env = {.keyspace = ks, .udt = udt_lookup, .ctx = u};
    u->depth++;
    for (size_t i = 0; i < n; i++) {
        const char *text = json_string_value(json_array_get(types, i));
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (text == NULL || cqltype_parse(u->a, text, strlen(text), &env, &args[i], &perr) != 0) {
            u->depth--;
            return NULL;
        }
        params[i] = &args[i]->wire;
        names[i] = arena_strndup(u->a, json_string_value(json_array_get(fields, i)),
                                 strlen(json_string_value(json_array_get(fields, i))));
        if (keys) {
            const char *k = json_string_value(json_array_get(stored, i));
            keys[i] = k ? arena_strndup(u->a, k, strlen(k)) : names[i];
        }
    }
    u->depth--;
    t->wire.id = CQL_TYPE_UDT;
    t->wire.name = arena_strndup(u->a, name, strlen(name));
    t->wire.keyspace = arena_strndup(u->a, ks, strlen(ks));
    t->wire.params = params;
    t->wire.field_names = names;
    t->wire.n = (uint16_t)n;
    t->args = args;
    t->frozen = 0;
    t->stored_names = keys;
    return t;
}

void cql_type_env(cql_state *st, const char *ks, arena *a, cqltype_env *env)
{
    udt_ctx *u = arena_alloc(a, sizeof *u);
    if (u) {
        u->st = st;
        u->a = a;
    }
    env->keyspace = ks;
    env->udt = u ? udt_lookup : NULL;
    env->ctx = u;
}

/* ---- names and values ---- */

const char *cql_keyspace_of(cql_call *c, const cql_qname *name)
{
    if (name->ks) return name->ks;
    if (c->keyspace) return c->keyspace;
    cql_fail(c, CQL_ERR_INVALID,
             "No keyspace has been specified. USE a keyspace, or explicitly specify "
             "keyspace.tablename");
    return NULL;
}

int cql_bound(cql_run *r, const cql_expr *marker, cql_value *v)
{
    const cql_values *vals = r->values;
    if (vals && vals->names && marker->text) {
        for (uint16_t i = 0; i < vals->n; i++) {
            if (vals->names[i].len == strlen(marker->text) &&
                memcmp(vals->names[i].p, marker->text, vals->names[i].len) == 0) {
                *v = vals->values[i];
                return 1;
            }
        }
        cql_fail(r->call, CQL_ERR_INVALID, "No value has been bound for '%s'", marker->text);
        return 0;
    }
    if (vals == NULL || marker->bind < 0 || (size_t)marker->bind >= vals->n) {
        cql_fail(r->call, CQL_ERR_INVALID,
                 "There were %zu markers(?) in CQL but %u bound variables",
                 r->parsed ? r->parsed->nbinds : (size_t)0, vals ? vals->n : 0u);
        return 0;
    }
    *v = vals->values[marker->bind];
    return 1;
}

static const cql_type t_text_type = {.id = CQL_TYPE_VARCHAR};

/* ---- terms ---- */

/* value.h's hook for the terms that are not constants: bind markers here. */
static int term_hook(void *ctx, const cql_ctype *t, const char *receiver, const cql_expr *e,
                     buf *out, cql_parse_error *err)
{
    cql_run *r = ctx;
    if (e->kind == CQL_E_BIND) {
        cql_value v;
        int got = cql_bound(r, e, &v);
        if (got != 1) {
            err->code = r->call->code ? (int)r->call->code : CQL_ERR_INVALID;
            snprintf(err->msg, sizeof err->msg, "%s", r->call->msg);
            r->call->failed = 0; /* value.h reports it through err */
            return CQLVAL_ERROR;
        }
        if (v.len == CQL_UNSET) return CQLVAL_UNSET;
        if (v.len < 0) return CQLVAL_NULL;
        (void)receiver;
        if (cqlval_validate(t, v.p, (size_t)v.len, err) != 0) return CQLVAL_ERROR;
        return buf_append(out, v.p, (size_t)v.len) == 0 ? CQLVAL_OK : CQLVAL_ERROR;
    }
    char *text = cql_print_expr(e);
    err->code = CQL_ERR_INVALID;
    snprintf(err->msg, sizeof err->msg, "Cannot use %s as the value of %s", text ? text : "?",
             receiver);
    free(text);
    return CQLVAL_ERROR;
}

int cql_term(cql_run *r, const cql_ctype *type, const char *receiver, const cql_expr *e, buf *out)
{
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    /* function calls, casts and hints by func.h, bind markers here */
    arena arena;
    arena_init(&arena, 1 << 20);
    cqltype_env types = {.keyspace = r->call->keyspace, .udt = NULL, .ctx = NULL};
    cqlfn_env env = {.binds = {.fn = term_hook, .ctx = r}, .arena = &arena, .types = &types};
    cqlval_terms terms = {.fn = cqlfn_term, .ctx = &env};
    int rc = cqlval_from_term(type, receiver, e, &terms, out, &perr);
    arena_free(&arena);
    if (rc == CQLVAL_ERROR) {
        if (!perr.code) perr.code = CQL_ERR_INVALID;
        cql_fail_parsed(r->call, &perr);
    }
    return rc;
}

int cql_int_term_opt(cql_run *r, const cql_expr *e, int64_t *v, const char *what)
{
    buf b;
    buf_init(&b, 0);
    int wide = strcmp(what, "[timestamp]") == 0;
    int rc = cql_term(r, cqltype_native(wide ? CQL_TYPE_BIGINT : CQL_TYPE_INT), what, e, &b);
    if (rc == CQLVAL_OK && b.len == 4) {
        int32_t x;
        cql_int_decode((const uint8_t *)b.data, 4, &x);
        *v = x;
    } else if (rc == CQLVAL_OK && b.len == 8) {
        cql_bigint_decode((const uint8_t *)b.data, 8, v);
    } else if (rc == CQLVAL_OK) {
        rc = cql_fail(r->call, CQL_ERR_INVALID, "Invalid %s value", what);
    }
    buf_free(&b);
    return rc;
}

int cql_int_term(cql_run *r, const cql_expr *e, int64_t *v, const char *what)
{
    int rc = cql_int_term_opt(r, e, v, what);
    if (rc == CQLVAL_NULL || rc == CQLVAL_UNSET)
        rc = cql_fail(r->call, CQL_ERR_INVALID, "Invalid null value of %s", what);
    return rc == CQLVAL_OK ? 0 : -1;
}

/* ---- rows ---- */

void cql_rows_init(cql_rows *rs, const char *keyspace, const char *table)
{
    memset(rs, 0, sizeof *rs);
    rs->keyspace = keyspace;
    rs->table = table;
    buf_init(&rs->data, 0);
}

void cql_rows_free(cql_rows *rs)
{
    free(rs->cols);
    buf_free(&rs->data);
}

int cql_rows_column(cql_rows *rs, const char *name, const cql_type *type)
{
    cql_column *n = realloc(rs->cols, (rs->ncols + 1) * sizeof *n);
    if (n == NULL) return -1;
    rs->cols = n;
    n[rs->ncols].keyspace = rs->keyspace;
    n[rs->ncols].table = rs->table;
    n[rs->ncols].name = name;
    n[rs->ncols].type = type;
    rs->ncols++;
    return 0;
}

int cql_rows_put(cql_rows *rs, const void *p, int32_t len)
{
    return cql_put_bytes(&rs->data, p, len);
}

void cql_metadata_id(uint8_t version, const cql_metadata *m, uint8_t out[16])
{
    cql_metadata specs = *m;
    specs.no_metadata = 0;
    specs.paging_state = NULL;
    specs.paging_len = 0;
    specs.new_metadata_id = NULL;
    specs.new_metadata_id_len = 0;
    buf b;
    buf_init(&b, 0);
    size_t count_at;
    unsigned int n = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_DigestInit_ex(md, EVP_md5(), NULL);
    if (cql_write_rows_begin(&b, version, &specs, &count_at) == 0)
        EVP_DigestUpdate(md, b.data ? b.data : "", b.len);
    EVP_DigestFinal_ex(md, out, &n);
    EVP_MD_CTX_free(md);
    buf_free(&b);
}

int cql_rows_write(const cql_rows *rs, cql_call *c, const uint8_t *paging_state, size_t paging_len)
{
    cql_metadata m;
    memset(&m, 0, sizeof m);
    m.keyspace = rs->keyspace;
    m.table = rs->table;
    m.columns = rs->cols;
    m.n_columns = rs->ncols;
    m.paging_state = paging_state;
    m.paging_len = paging_len;
    /* An EXECUTE's result: v5 says when the metadata is no longer the one the client
     * holds (METADATA_CHANGED, with the new id) and leaves it out when it is and the
     * client asked; v4 leaves it out when it is still the one PREPARE answered. */
    uint8_t now[16];
    if (c->result_id) {
        cql_metadata_id(c->version, &m, now);
        int same = c->result_id_len == 16 && memcmp(c->result_id, now, 16) == 0;
        if (c->version >= 5 && !same) {
            m.new_metadata_id = now;
            m.new_metadata_id_len = 16;
        } else if (same && c->skip_metadata) {
            m.no_metadata = 1;
        }
    }
    size_t count_at;
    if (cql_write_rows_begin(&c->body, c->version, &m, &count_at) != 0 ||
        buf_append(&c->body, rs->data.data, rs->data.len) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "the result is too large to answer");
    cql_write_rows_count(&c->body, count_at, rs->nrows);
    return 0;
}

/* ---- statements ---- */

/* A write's timestamp when the client gives none: the time in microseconds, and never one
 * handed out before (as Cassandra's ClientState makes them), so that two writes of the
 * same cell are ordered by their arrival even within a microsecond or when the clock
 * steps back, and equal timestamps (reconciled by value) come only from clients. */
static int64_t now_us(void)
{
    static int64_t last;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    int64_t now = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
    int64_t seen = __atomic_load_n(&last, __ATOMIC_RELAXED), next;
    do {
        next = seen >= now ? seen + 1 : now;
    } while (
        !__atomic_compare_exchange_n(&last, &seen, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return next;
}

static int run_use(cql_run *r, const cql_stmt *s)
{
    cql_call *c = r->call;
    const char *ks = s->name.name;
    cql_state *st = cql_state_of(c);
    if (st == NULL) return -1;
    pthread_mutex_lock(&st->lock);
    int known = cql_system_keyspace(ks) || cql_schema_keyspace(st->schema, ks) != NULL;
    pthread_mutex_unlock(&st->lock);
    if (!known) return cql_fail(c, CQL_ERR_INVALID, "Keyspace '%s' does not exist", ks);
    if (strlen(ks) >= sizeof c->new_keyspace)
        return cql_fail(c, CQL_ERR_INVALID, "Keyspace name %s is too long", ks);
    snprintf(c->new_keyspace, sizeof c->new_keyspace, "%s", ks);
    if (cql_write_set_keyspace(&c->body, ks) != 0)
        return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    return 0;
}

static int run_select(cql_run *r, const cql_stmt *s)
{
    cql_call *c = r->call;
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    int rc = 0;
    if (cql_system_select(r, s, ks, &rc)) return rc;
    cql_tinfo t;
    rc = cql_tinfo_load(c, ks, s->name.name, &t);
    if (rc == 0) rc = cql_exec_select(r, s, &t);
    cql_tinfo_free(&t);
    return rc;
}

static int run_batch_stmt(cql_run *r, const cql_stmt *s);

static int run_stmt(cql_run *r, const cql_stmt *s)
{
    switch (s->kind) {
    case CQL_USE:
        return run_use(r, s);
    case CQL_SELECT:
        return run_select(r, s);
    case CQL_INSERT:
    case CQL_UPDATE:
    case CQL_DELETE:
        return cql_exec_write(r, s);
    case CQL_BATCH:
        return run_batch_stmt(r, s);
    case CQL_DESCRIBE:
        return cql_exec_describe(r, s);
    default:
        return cql_exec_ddl(r, s);
    }
}

static int stmt_conditional(const cql_stmt *s);

static int serial_level(uint16_t cl)
{
    return cl == CQL_CL_SERIAL || cl == CQL_CL_LOCAL_SERIAL;
}

/* Whether consistency level cl (and serial, a conditional write's) is refused for statement
 * s, as Cassandra's ConsistencyLevel.validateForRead, validateForWrite,
 * validateCounterForWrite, validateForCas and validateForCasCommit refuse it: 0, or -1 with
 * the error set. A conditional statement of a batch is judged by the batch's levels. */
static int consistency_refused(cql_call *c, const cql_stmt *s, uint16_t cl, uint16_t serial,
                               int conditional)
{
    const char *name = cql_consistency_name(cl);
    if (s->kind == CQL_SELECT) {
        if (cl == CQL_CL_ANY)
            return cql_fail(c, CQL_ERR_INVALID,
                            "ANY ConsistencyLevel is only supported for writes");
        return 0;
    }
    if (s->kind != CQL_INSERT && s->kind != CQL_UPDATE && s->kind != CQL_DELETE) return 0;
    if (conditional) {
        if (!serial_level(serial))
            return cql_fail(c, CQL_ERR_INVALID,
                            "Invalid consistency for conditional update. "
                            "Must be one of SERIAL or LOCAL_SERIAL");
        if (serial_level(cl))
            return cql_fail(c, CQL_ERR_INVALID,
                            "%s is not supported as conditional update commit consistency. Use "
                            "ANY if you mean \"make sure it is accepted but I don't care how many "
                            "replicas commit it for non-SERIAL reads\"",
                            name ? name : "SERIAL");
        return 0;
    }
    if (cl != CQL_CL_ANY && !serial_level(cl)) return 0;
    /* ANY and the serial levels: a counter table's words differ */
    const char *ks = cql_keyspace_of(c, &s->name);
    if (ks == NULL) return -1;
    cql_tinfo t;
    if (cql_tinfo_load(c, ks, s->name.name, &t) != 0) return -1;
    int counter = t.counter;
    cql_tinfo_free(&t);
    if (counter && cl == CQL_CL_ANY)
        return cql_fail(c, CQL_ERR_INVALID,
                        "Consistency level ANY is not yet supported for counter table %s",
                        s->name.name);
    if (counter)
        return cql_fail(c, CQL_ERR_INVALID, "Counter operations are inherently non-serializable");
    if (serial_level(cl))
        return cql_fail(c, CQL_ERR_INVALID,
                        "You must use conditional updates for serializable writes");
    return 0;
}

/* Runs a parsed statement with the values bound: the QUERY's text, or the statement an
 * EXECUTE names (prepared). */
static int run_parsed(cql_call *c, const cql_parsed *parsed, const cql_query_params *params,
                      int prepared)
{
    cql_run r = {.call = c,
                 .parsed = parsed,
                 .params = params,
                 .values = params ? &params->values : NULL,
                 .timestamp =
                     params && params->timestamp != INT64_MIN ? params->timestamp : now_us()};
    /* Cassandra's QueryProcessor words the two cases differently */
    if (params && params->values.n != parsed->nbinds && !params->values.names)
        return prepared ? cql_fail(c, CQL_ERR_INVALID,
                                   "there were %zu markers(?) in CQL but %u bound variables",
                                   parsed->nbinds, params->values.n)
                        : cql_fail(c, CQL_ERR_INVALID, "Invalid amount of bind variables");
    const cql_stmt *s = parsed->stmts[0];
    if (params && s->kind == CQL_BATCH) {
        int conditional = 0;
        for (size_t i = 0; i < s->u.batch.nstmts; i++)
            conditional |= stmt_conditional(s->u.batch.stmts[i]);
        for (size_t i = 0; i < s->u.batch.nstmts && conditional; i++)
            if (consistency_refused(c, s->u.batch.stmts[i], params->consistency,
                                    params->serial_consistency, 1) != 0)
                return -1;
    } else if (params && consistency_refused(c, s, params->consistency, params->serial_consistency,
                                             stmt_conditional(s)) != 0) {
        return -1;
    }
    return run_stmt(&r, s);
}

int cql_exec_query(cql_call *c, const cql_query *q)
{
    cql_parsed parsed;
    cql_parse_error perr;
    memset(&perr, 0, sizeof perr);
    if (cql_parse(q->query.p, q->query.len, &parsed, &perr) != 0) return cql_fail_parsed(c, &perr);
    int rc = run_parsed(c, &parsed, &q->params, 0);
    cql_parsed_free(&parsed);
    return rc;
}

int cql_exec_execute(cql_call *c, const cql_execute *e)
{
    cql_plan *plan;
    if (cql_prepared_get(c, (const uint8_t *)e->id.p, e->id.len, &plan) != 0) return -1;
    const char *conn = c->keyspace;
    if (plan->keyspace) c->keyspace = plan->keyspace;
    /* a SELECT's rows say whether their metadata is still the client's */
    uint8_t prepared_result[16];
    if (plan->parsed.nstmts == 1 && plan->parsed.stmts[0]->kind == CQL_SELECT) {
        if (c->version >= 5) {
            c->result_id = (const uint8_t *)e->result_metadata_id.p;
            c->result_id_len = e->result_metadata_id.p ? e->result_metadata_id.len : 0;
        } else if (cql_prepared_result_id(c, (const uint8_t *)e->id.p, e->id.len,
                                          prepared_result)) {
            c->result_id = prepared_result;
            c->result_id_len = 16;
        }
        c->skip_metadata = (e->params.flags & CQL_QF_SKIP_METADATA) != 0;
    }
    int rc = run_parsed(c, &plan->parsed, &e->params, 1);
    c->result_id = NULL;
    c->result_id_len = 0;
    c->skip_metadata = 0;
    c->keyspace = conn;
    cql_plan_release(plan);
    return rc;
}

/* Whether a statement of a batch gives its own USING TIMESTAMP, and whether it has
 * conditions (IF ...). */
static int stmt_sets_timestamp(const cql_stmt *s)
{
    const cql_using *u = s->kind == CQL_INSERT   ? s->u.insert.using
                         : s->kind == CQL_UPDATE ? s->u.update.using
                         : s->kind == CQL_DELETE ? s->u.del.using
                                                 : NULL;
    size_t n = s->kind == CQL_INSERT   ? s->u.insert.nusing
               : s->kind == CQL_UPDATE ? s->u.update.nusing
               : s->kind == CQL_DELETE ? s->u.del.nusing
                                       : 0;
    for (size_t i = 0; u && i < n; i++)
        if (!u[i].ttl) return 1;
    return 0;
}

static int stmt_conditional(const cql_stmt *s)
{
    return s->if_exists || s->if_not_exists || (s->kind == CQL_UPDATE && s->u.update.nconds) ||
           (s->kind == CQL_DELETE && s->u.del.nconds);
}

/* A BATCH statement of CQL text (BEGIN BATCH ... APPLY BATCH): its statements share the
 * text's bound values. Its USING is checked as Cassandra's BatchStatement checks it. */
static int run_batch_stmt(cql_run *r, const cql_stmt *s)
{
    const cql_batch_stmt *b = &s->u.batch;
    cql_run *runs = calloc(b->nstmts + 1, sizeof *runs);
    cql_run **rp = calloc(b->nstmts + 1, sizeof *rp);
    int rc = runs && rp ? 0 : cql_fail(r->call, CQL_ERR_SERVER, "out of memory");
    int64_t ts = r->timestamp;
    for (size_t i = 0; rc == 0 && i < b->nusing; i++) {
        if (b->using[i].ttl) {
            rc = cql_fail(r->call, CQL_ERR_INVALID,
                          "Global TTL on the BATCH statement is not supported.");
            break;
        }
        int conditional = 0, both = 0;
        for (size_t k = 0; k < b->nstmts; k++) {
            conditional |= stmt_conditional(b->stmts[k]);
            both |= stmt_sets_timestamp(b->stmts[k]);
        }
        if (conditional)
            rc = cql_fail(r->call, CQL_ERR_INVALID,
                          "Cannot provide custom timestamp for conditional BATCH");
        else if (b->type == 2)
            rc = cql_fail(r->call, CQL_ERR_INVALID,
                          "Cannot provide custom timestamp for counter BATCH");
        else if (both)
            rc = cql_fail(r->call, CQL_ERR_INVALID,
                          "Timestamp must be set either on BATCH or individual statements");
        else
            rc = cql_int_term(r, b->using[i].value, &ts, "[timestamp]");
    }
    for (size_t i = 0; rc == 0 && i < b->nstmts; i++) {
        runs[i] = *r;
        runs[i].timestamp = ts;
        rp[i] = &runs[i];
    }
    if (rc == 0)
        rc = cql_exec_write_batch(r->call, rp, (const cql_stmt *const *)b->stmts, b->nstmts,
                                  b->type == 2, b->type == 0);
    free(runs);
    free(rp);
    return rc;
}

int cql_exec_batch(cql_call *c, const cql_batch *b)
{
    cql_plan **plans = calloc(b->n + 1, sizeof *plans);
    cql_run *runs = calloc(b->n + 1, sizeof *runs);
    cql_run **rp = calloc(b->n + 1, sizeof *rp);
    const cql_stmt **stmts = calloc(b->n + 1, sizeof *stmts);
    cql_query_params *params = calloc(b->n + 1, sizeof *params);
    int rc =
        plans && runs && rp && stmts && params ? 0 : cql_fail(c, CQL_ERR_SERVER, "out of memory");
    int64_t ts = b->timestamp != INT64_MIN ? b->timestamp : now_us();
    char ksbuf[CQL_NAME_MAX];
    if (b->keyspace.p) {
        snprintf(ksbuf, sizeof ksbuf, "%.*s", (int)b->keyspace.len, b->keyspace.p);
        c->keyspace = ksbuf;
    }
    for (size_t i = 0; rc == 0 && i < b->n; i++) {
        const cql_batch_statement *bs = &b->statements[i];
        if (bs->prepared) {
            if (cql_prepared_get(c, (const uint8_t *)bs->query.p, bs->query.len, &plans[i]) != 0) {
                rc = -1;
                break;
            }
        } else if ((plans[i] = cql_plan_parse(c, bs->query.p, bs->query.len)) == NULL) {
            rc = -1;
            break;
        }
        const cql_parsed *parsed = &plans[i]->parsed;
        const cql_stmt *s = parsed->stmts[0];
        if (s->kind != CQL_INSERT && s->kind != CQL_UPDATE && s->kind != CQL_DELETE) {
            rc = cql_fail(c, CQL_ERR_INVALID,
                          "Invalid statement in batch: only UPDATE, INSERT and DELETE statements "
                          "are allowed.");
            break;
        }
        if (bs->values.n != parsed->nbinds) {
            rc = cql_fail(c, CQL_ERR_INVALID,
                          "There were %zu markers(?) in CQL but %u bound variables", parsed->nbinds,
                          bs->values.n);
            break;
        }
        params[i].values = bs->values;
        params[i].timestamp = ts;
        params[i].page_size = -1;
        params[i].paging_state.len = CQL_NULL;
        runs[i] = (cql_run){.call = c,
                            .parsed = parsed,
                            .params = &params[i],
                            .values = &params[i].values,
                            .timestamp = ts,
                            .keyspace = plans[i]->keyspace};
        rp[i] = &runs[i];
        stmts[i] = s;
    }
    for (size_t i = 0; rc == 0 && i < b->n; i++)
        if (stmt_conditional(stmts[i]) &&
            consistency_refused(c, stmts[i], b->consistency, b->serial_consistency, 1) != 0)
            rc = -1;
    if (rc == 0)
        rc = cql_exec_write_batch(c, rp, stmts, b->n, b->type == CQL_BATCH_COUNTER,
                                  b->type == CQL_BATCH_LOGGED);
    for (size_t i = 0; plans && i < b->n; i++)
        cql_plan_release(plans[i]);
    free(plans);
    free(runs);
    free(rp);
    free(stmts);
    free(params);
    return rc;
}

/* ---- what may write ---- */

int cql_text_writes(const char *text, size_t len)
{
    size_t i = 0;
    for (;;) {
        while (i < len && isspace((unsigned char)text[i]))
            i++;
        if (i + 1 < len && text[i] == '-' && text[i + 1] == '-') {
            while (i < len && text[i] != '\n')
                i++;
            continue;
        }
        if (i + 1 < len && text[i] == '/' && text[i + 1] == '*') {
            i += 2;
            while (i + 1 < len && !(text[i] == '*' && text[i + 1] == '/'))
                i++;
            i += 2;
            continue;
        }
        break;
    }
    static const char *const readers[] = {"select", "use"};
    for (size_t k = 0; k < 2; k++) {
        size_t n = strlen(readers[k]);
        if (i + n <= len && strncasecmp(text + i, readers[k], n) == 0 &&
            (i + n == len || !isalnum((unsigned char)text[i + n])))
            return 0;
    }
    return 1;
}

/* ---- tables as statements see them ---- */

/* A schema table's description, shared by the statements of one schema version. */
struct cql_tshared {
    int refs; /* atomic: the state's and each statement's */
    cql_tinfo t;
    int deletions; /* atomic: whether the table keeps deletions of partitions or ranges,
                    * DELETIONS_* (read from the table's setting at first need) */
};

enum { DELETIONS_UNKNOWN, DELETIONS_NONE, DELETIONS_KEPT };

int cql_table_keeps_deletions(cql_call *c, const cql_tinfo *t, const table *et)
{
    int *known = t->shared ? &t->shared->deletions : NULL;
    int k = known ? __atomic_load_n(known, __ATOMIC_ACQUIRE) : DELETIONS_UNKNOWN;
    if (k != DELETIONS_UNKNOWN) return k == DELETIONS_KEPT;
    json_t *set = NULL;
    qr_err err;
    err_init(&err);
    if (meta_setting_get(c->db, et, META_SETTING_CQL_DELETIONS, NULL, &set, &err) != 0)
        return cql_fail_engine(c, CQL_ERR_SERVER, &err);
    k = json_is_true(json_object_get(set, "kept")) ? DELETIONS_KEPT : DELETIONS_NONE;
    json_decref(set);
    if (known) __atomic_store_n(known, k, __ATOMIC_RELEASE);
    return k == DELETIONS_KEPT;
}

static int deletions_kept(const json_t *cur, json_t **next, void *arg, qr_err *err)
{
    (void)arg;
    (void)err;
    *next = json_is_true(json_object_get(cur, "kept")) ? NULL : json_pack("{s:b}", "kept", 1);
    return 0;
}

int cql_table_note_deletions(cql_call *c, const cql_tinfo *t, const table *et)
{
    int *known = t->shared ? &t->shared->deletions : NULL;
    if (known && __atomic_load_n(known, __ATOMIC_ACQUIRE) == DELETIONS_KEPT) return 0;
    qr_err err;
    err_init(&err);
    if (meta_setting_update(c->db, et, META_SETTING_CQL_DELETIONS, NULL, deletions_kept, NULL,
                            &err) != 0)
        return cql_fail_engine(c, CQL_ERR_SERVER, &err);
    if (known) __atomic_store_n(known, DELETIONS_KEPT, __ATOMIC_RELEASE);
    return 0;
}

static void tshared_release(cql_tshared *sh)
{
    if (sh == NULL || __atomic_sub_fetch(&sh->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    arena_free(&sh->t.arena);
    free(sh);
}

void cql_tinfo_cache_clear(cql_state *st)
{
    for (size_t i = 0; i < st->ntables; i++)
        tshared_release(st->tables[i]);
    free(st->tables);
    st->tables = NULL;
    st->ntables = st->captables = 0;
    st->tables_version[0] = '\0';
}

/* Builds the description of ks.name into t from the schema (the state's lock held). */
static int tinfo_build(cql_call *c, cql_state *st, const char *ks, const char *name, cql_tinfo *t)
{
    int rc = 0;
    json_t *def = cql_schema_table(st->schema, ks, name);
    snprintf(t->engine, sizeof t->engine, "%s", name);
    if (def == NULL) {
        def = json_object_get(json_object_get(cql_schema_keyspace(st->schema, ks), "views"), name);
        if (def) {
            t->view = 1;
            snprintf(t->engine, sizeof t->engine, "%s",
                     json_string_value(json_object_get(def, "base")));
        }
    }
    if (cql_schema_keyspace(st->schema, ks) == NULL)
        return cql_fail(c, CQL_ERR_INVALID, "keyspace %s does not exist", ks);
    if (def == NULL) return cql_fail(c, CQL_ERR_INVALID, "table %s does not exist", name);
    json_t *cols = json_object_get(def, "columns");
    t->ncols = json_array_size(cols);
    t->cols = arena_alloc(&t->arena, (t->ncols + 1) * sizeof *t->cols);
    t->counter = json_is_true(json_object_get(def, "counter"));
    t->default_ttl = json_integer_value(
        json_object_get(json_object_get(def, "options"), "default_time_to_live"));
    json_t *gc = json_object_get(json_object_get(def, "options"), "gc_grace_seconds");
    t->gc_grace = json_is_integer(gc) ? json_integer_value(gc) : 864000;
    cqltype_env env;
    cql_type_env(st, ks, &t->arena, &env);
    size_t i;
    json_t *col;
    json_array_foreach(cols, i, col)
    {
        cql_tcol *tc = &t->cols[i];
        const char *n = json_string_value(json_object_get(col, "name"));
        const char *ty = json_string_value(json_object_get(col, "type"));
        const char *kind = json_string_value(json_object_get(col, "kind"));
        tc->name = arena_strndup(&t->arena, n, strlen(n));
        const char *stored = json_string_value(json_object_get(col, "attr"));
        tc->attr = stored ? arena_strndup(&t->arena, stored, strlen(stored)) : tc->name;
        cql_parse_error perr;
        memset(&perr, 0, sizeof perr);
        if (cqltype_parse(&t->arena, ty, strlen(ty), &env, &tc->type, &perr) != 0) {
            rc = cql_fail(c, CQL_ERR_SERVER, "the stored type of %s.%s.%s cannot be read: %s", ks,
                          name, n, perr.msg);
            break;
        }
        tc->wire = &tc->type->wire;
        tc->kind = strcmp(kind, "partition_key") == 0 ? 'p'
                   : strcmp(kind, "clustering") == 0  ? 'c'
                   : strcmp(kind, "static") == 0      ? 's'
                                                      : 'r';
        tc->pos = (int)json_integer_value(json_object_get(col, "position"));
        tc->desc = strcmp(json_string_value(json_object_get(col, "order")), "desc") == 0;
        json_t *drop = json_object_get(json_object_get(def, "dropped"), n);
        tc->dropped_at =
            drop ? (int64_t)json_integer_value(json_object_get(drop, "time")) : INT64_MIN;
        if (tc->kind == 'p') t->npk++;
        if (tc->kind == 'c') t->nck++;
    }
    const char *iname;
    json_t *iv;
    size_t nidx = json_object_size(json_object_get(def, "indexes"));
    t->indexes = nidx ? arena_alloc(&t->arena, nidx * sizeof *t->indexes) : NULL;
    json_object_foreach(json_object_get(def, "indexes"), iname, iv)
    {
        const char *target = json_string_value(json_object_get(iv, "target"));
        char column[CQL_NAME_MAX];
        int kind;
        if (target == NULL) continue;
        cql_index_target_parse(target, &kind, column, sizeof column);
        for (size_t k = 0; k < t->ncols; k++) {
            if (strcmp(t->cols[k].name, column) != 0) continue;
            const char *kept = arena_strndup(&t->arena, iname, strlen(iname));
            /* a plain index of a type no key type holds keys the value's bytes, as
             * full() does a frozen collection's */
            if (kind == CQL_INDEX_SIMPLE && json_object_get(iv, "keyed")) kind = CQL_INDEX_FULL;
            if (kind == CQL_INDEX_SIMPLE) {
                t->cols[k].index = kept;
            } else if (t->indexes) {
                t->indexes[t->nindexes++] =
                    (cql_tindex){.name = kept, .col = &t->cols[k], .kind = kind};
            }
        }
    }
    return rc;
}

/* The state's description of ks.name for the current schema version, with a reference
 * taken: built at its first use in the version (the state's lock held). */
static cql_tshared *tinfo_shared(cql_call *c, cql_state *st, const char *ks, const char *name)
{
    const char *version = cql_schema_version(st->schema);
    if (version == NULL) version = "";
    if (strcmp(st->tables_version, version) != 0) {
        cql_tinfo_cache_clear(st);
        snprintf(st->tables_version, sizeof st->tables_version, "%s", version);
    }
    for (size_t i = 0; i < st->ntables; i++) {
        cql_tshared *sh = st->tables[i];
        if (strcmp(sh->t.name, name) == 0 && strcmp(sh->t.ks, ks) == 0) {
            __atomic_add_fetch(&sh->refs, 1, __ATOMIC_RELAXED);
            return sh;
        }
    }
    cql_tshared *sh = calloc(1, sizeof *sh);
    if (sh == NULL) {
        cql_fail(c, CQL_ERR_SERVER, "out of memory");
        return NULL;
    }
    sh->refs = 1;
    arena_init(&sh->t.arena, 0);
    snprintf(sh->t.ks, sizeof sh->t.ks, "%s", ks);
    snprintf(sh->t.name, sizeof sh->t.name, "%s", name);
    if (tinfo_build(c, st, ks, name, &sh->t) != 0) {
        tshared_release(sh);
        return NULL;
    }
    if (st->ntables == st->captables) {
        size_t cap = st->captables ? 2 * st->captables : 16;
        cql_tshared **n = realloc(st->tables, cap * sizeof *n);
        if (n == NULL) return sh; /* not kept: built again next time */
        st->tables = n;
        st->captables = cap;
    }
    sh->refs++;
    st->tables[st->ntables++] = sh;
    return sh;
}

int cql_tinfo_load(cql_call *c, const char *ks, const char *name, cql_tinfo *t)
{
    memset(t, 0, sizeof *t);
    arena_init(&t->arena, 0);
    snprintf(t->ks, sizeof t->ks, "%s", ks);
    snprintf(t->name, sizeof t->name, "%s", name);
    if (cql_system_tinfo(ks, name, t)) return 0;
    if (cql_system_keyspace(ks))
        return cql_fail(c, CQL_ERR_INVALID, "table %s does not exist", name);
    cql_state *st = cql_state_of(c);
    if (st == NULL) return -1;
    pthread_mutex_lock(&st->lock);
    cql_tshared *sh = tinfo_shared(c, st, ks, name);
    pthread_mutex_unlock(&st->lock);
    if (sh == NULL) return -1;
    *t = sh->t;
    arena_init(&t->arena, 0);
    t->shared = sh;
    return 0;
}

void cql_tinfo_free(cql_tinfo *t)
{
    arena_free(&t->arena);
    tshared_release(t->shared);
    t->shared = NULL;
}

const cql_tcol *cql_tinfo_col(const cql_tinfo *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0) return &t->cols[i];
    return NULL;
}

/* ---- what a SELECT answers with ---- */

static const cql_type t_bigint = {.id = CQL_TYPE_BIGINT}, t_int = {.id = CQL_TYPE_INT};

int cql_select_metadata(cql_call *c, const cql_stmt *s, const cql_tinfo *t, cql_rows *rs)
{
    const cql_select *sel = &s->u.select;
    cqlagg_kind ak;
    rs->keyspace = t->ks;
    rs->table = t->name;
    if (sel->json)
        return cql_rows_column(rs, "[json]", &t_text_type) == 0
                   ? 0
                   : cql_fail(c, CQL_ERR_SERVER, "out of memory");
    if (sel->nsel == 0) {
        for (size_t i = 0; i < t->ncols; i++)
            if (cql_rows_column(rs, t->cols[i].name, t->cols[i].wire) != 0)
                return cql_fail(c, CQL_ERR_SERVER, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < sel->nsel; i++) {
        const cql_expr *e = sel->sel[i].expr;
        const char *alias = sel->sel[i].alias;
        const cql_type *type = NULL;
        const char *name = alias;
        char *printed = NULL;
        if (e->kind == CQL_E_COLUMN) {
            const cql_tcol *col = cql_tinfo_col(t, e->text);
            if (col == NULL)
                return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                                e->text, t->ks, t->name);
            type = col->wire;
            if (name == NULL) name = col->name;
        } else if (e->kind == CQL_E_FUNCTION && e->fn.ks == NULL &&
                   (strcmp(e->fn.name, "writetime") == 0 || strcmp(e->fn.name, "ttl") == 0) &&
                   e->nitems == 1 && e->items[0]->kind == CQL_E_COLUMN) {
            const cql_tcol *col = cql_tinfo_col(t, e->items[0]->text);
            if (col == NULL)
                return cql_fail(c, CQL_ERR_INVALID, "Undefined column name %s in table %s.%s",
                                e->items[0]->text, t->ks, t->name);
            if (col->kind == 'p' || col->kind == 'c')
                return cql_fail(c, CQL_ERR_INVALID,
                                "Cannot use selection function %s on PRIMARY KEY part %s",
                                e->fn.name, col->name);
            if (col->type && cqltype_is_multicell(col->type))
                return cql_fail(c, CQL_ERR_INVALID,
                                "Cannot use selection function %s on non-frozen %s %s",
                                e->fn.name[0] == 'w' ? "writeTime" : "ttl",
                                cqltype_is_collection(col->type) ? "collection" : "UDT", col->name);
            type = e->fn.name[0] == 'w' ? &t_bigint : &t_int;
        } else if (e->kind == CQL_E_FUNCTION &&
                   cqlagg_lookup(e->fn.name, e->star, cql_agg_literal_arg(e), &ak)) {
            const cql_tcol *col = NULL;
            const cql_ctype *argtype = NULL;
            char *argname = NULL;
            cql_fnsel f;
            int cellfn;
            if (ak != CQLAGG_COUNT_ROWS &&
                cql_agg_arg(c, t, e, &col, &cellfn, &f, &argtype, &argname) != 0)
                return -1;
            cqlagg a;
            cql_parse_error perr;
            memset(&perr, 0, sizeof perr);
            if (cqlagg_init(&a, ak, argtype, &perr) != 0) {
                free(argname);
                return cql_fail_parsed(c, &perr);
            }
            type = &a.result->wire;
            cqlagg_free(&a);
            if (name == NULL) {
                buf nb;
                buf_init(&nb, 0);
                cqlagg_column_name(ak, argname, &nb);
                name = arena_strndup((arena *)&t->arena, nb.data ? nb.data : "count",
                                     nb.len ? nb.len : 5);
                buf_free(&nb);
            }
            free(argname);
        } else {
            cql_fnsel f;
            char *fnname = NULL;
            if (cql_fnsel_resolve(c, t, e, &f, &fnname) != 0) return -1;
            type = &f.ret->wire;
            if (name == NULL && fnname)
                name = arena_strndup((arena *)&t->arena, fnname, strlen(fnname));
            free(fnname);
        }
        if (name == NULL) {
            printed = cql_print_expr(e);
            name = printed ? arena_strndup((arena *)&t->arena, printed, strlen(printed)) : "?";
            free(printed);
            for (char *q = (char *)name; *q; q++)
                *q = (char)tolower((unsigned char)*q);
        }
        if (cql_rows_column(rs, name, type) != 0)
            return cql_fail(c, CQL_ERR_SERVER, "out of memory");
    }
    return 0;
}
