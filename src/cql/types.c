/* types.c — CQL types as written resolved to wire type trees, checked as Cassandra's
 * CQL3Type.Raw.prepare checks them, and written and read as system_schema names.
 *
 * Trees live in the caller's arena; the native types are static singletons shared by
 * every tree. Nothing here looks at a table's columns. */
#include "cql/types.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- native singletons ---- */

#define NATIVE(id)                                                                                 \
    {                                                                                              \
        {(id), NULL, NULL, NULL, NULL, 0}, NULL, 0, NULL                                           \
    }
static const cql_ctype natives[] = {
    NATIVE(CQL_TYPE_ASCII),     NATIVE(CQL_TYPE_BIGINT),   NATIVE(CQL_TYPE_BLOB),
    NATIVE(CQL_TYPE_BOOLEAN),   NATIVE(CQL_TYPE_COUNTER),  NATIVE(CQL_TYPE_DECIMAL),
    NATIVE(CQL_TYPE_DOUBLE),    NATIVE(CQL_TYPE_FLOAT),    NATIVE(CQL_TYPE_INT),
    NATIVE(CQL_TYPE_TIMESTAMP), NATIVE(CQL_TYPE_UUID),     NATIVE(CQL_TYPE_VARCHAR),
    NATIVE(CQL_TYPE_VARINT),    NATIVE(CQL_TYPE_TIMEUUID), NATIVE(CQL_TYPE_INET),
    NATIVE(CQL_TYPE_DATE),      NATIVE(CQL_TYPE_TIME),     NATIVE(CQL_TYPE_SMALLINT),
    NATIVE(CQL_TYPE_TINYINT),   NATIVE(CQL_TYPE_DURATION),
};

const cql_ctype *cqltype_native(uint16_t id)
{
    for (size_t i = 0; i < sizeof natives / sizeof natives[0]; i++)
        if (natives[i].wire.id == id) return &natives[i];
    return NULL;
}

/* The native type a name as written denotes, or NULL. */
static const cql_ctype *native_named(const char *name)
{
    if (strcmp(name, "varchar") == 0) return cqltype_native(CQL_TYPE_VARCHAR);
    for (size_t i = 0; i < sizeof natives / sizeof natives[0]; i++)
        if (strcmp(cql_type_name(natives[i].wire.id), name) == 0) return &natives[i];
    return NULL;
}

/* The native type a custom type's class is ("org.apache.cassandra.db.marshal.UTF8Type",
 * or the class alone), or NULL. */
static const cql_ctype *marshal_class(const char *name)
{
    static const struct {
        const char *cls;
        uint16_t id;
    } classes[] = {{"AsciiType", CQL_TYPE_ASCII},
                   {"LongType", CQL_TYPE_BIGINT},
                   {"BytesType", CQL_TYPE_BLOB},
                   {"BooleanType", CQL_TYPE_BOOLEAN},
                   {"CounterColumnType", CQL_TYPE_COUNTER},
                   {"DecimalType", CQL_TYPE_DECIMAL},
                   {"DoubleType", CQL_TYPE_DOUBLE},
                   {"FloatType", CQL_TYPE_FLOAT},
                   {"Int32Type", CQL_TYPE_INT},
                   {"TimestampType", CQL_TYPE_TIMESTAMP},
                   {"UUIDType", CQL_TYPE_UUID},
                   {"UTF8Type", CQL_TYPE_VARCHAR},
                   {"IntegerType", CQL_TYPE_VARINT},
                   {"TimeUUIDType", CQL_TYPE_TIMEUUID},
                   {"InetAddressType", CQL_TYPE_INET},
                   {"SimpleDateType", CQL_TYPE_DATE},
                   {"TimeType", CQL_TYPE_TIME},
                   {"ShortType", CQL_TYPE_SMALLINT},
                   {"ByteType", CQL_TYPE_TINYINT},
                   {"DurationType", CQL_TYPE_DURATION}};
    static const char prefix[] = "org.apache.cassandra.db.marshal.";
    if (strncmp(name, prefix, sizeof prefix - 1) == 0) name += sizeof prefix - 1;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strcmp(name, classes[i].cls) == 0) return cqltype_native(classes[i].id);
    return NULL;
}

/* ---- errors ---- */

static int no_memory(cql_parse_error *err)
{
    return cql_error_record(err, CQL_ERR_SERVER, "Out of memory resolving a type");
}

/* ---- a type as written, for messages (Cassandra's Raw.toString) ---- */

static int supports_freezing(const cql_type_expr *t)
{
    return t->kind == CQL_TE_LIST || t->kind == CQL_TE_SET || t->kind == CQL_TE_MAP ||
           t->kind == CQL_TE_TUPLE || t->kind == CQL_TE_UDT || t->kind == CQL_TE_FROZEN;
}

/* frozen: the text sits inside a frozen<> (Cassandra freezes what is nested in it). */
static void raw_print(buf *b, const cql_type_expr *t, int frozen)
{
    switch (t->kind) {
    case CQL_TE_NATIVE:
        buf_puts(b, t->name);
        return;
    case CQL_TE_CUSTOM:
        buf_printf(b, "'%s'", t->name);
        return;
    case CQL_TE_FROZEN:
        if (supports_freezing(t->args[0])) {
            raw_print(b, t->args[0], 1);
        } else {
            raw_print(b, t->args[0], 0);
        }
        return;
    case CQL_TE_UDT:
        if (frozen) buf_puts(b, "frozen<");
        if (t->udt.ks) buf_printf(b, "%s.", t->udt.ks);
        buf_puts(b, t->udt.name);
        if (frozen) buf_puts(b, ">");
        return;
    case CQL_TE_TUPLE:
        buf_puts(b, "tuple<");
        for (size_t i = 0; i < t->nargs; i++) {
            if (i) buf_puts(b, ", ");
            raw_print(b, t->args[i], supports_freezing(t->args[i]));
        }
        buf_puts(b, ">");
        return;
    default: {
        static const char *const open[] = {"", "list<", "set<", "map<"};
        if (frozen) buf_puts(b, "frozen<");
        buf_puts(b, open[t->kind]);
        for (size_t i = 0; i < t->nargs; i++) {
            if (i) buf_puts(b, ", ");
            raw_print(b, t->args[i], frozen && supports_freezing(t->args[i]));
        }
        buf_puts(b, ">");
        if (frozen) buf_puts(b, ">");
        return;
    }
    }
}

/* Sets err to "<what>: <t as written>". */
static int fail_type(cql_parse_error *err, const char *what, const cql_type_expr *t, int frozen)
{
    buf b;
    buf_init(&b, 4096);
    raw_print(&b, t, frozen);
    cql_error_record(err, CQL_ERR_INVALID, "%s: %s", what, b.data ? b.data : "");
    buf_free(&b);
    return -1;
}

/* ---- resolving ---- */

static int is_native(const cql_type_expr *t, const char *name)
{
    return t->kind == CQL_TE_NATIVE &&
           (strcmp(t->name, name) == 0 ||
            (strcmp(name, "text") == 0 && strcmp(t->name, "varchar") == 0));
}

/* t without its frozen<> wrappers, and whether one was there. */
static const cql_type_expr *unwrap(const cql_type_expr *t, int *frozen)
{
    *frozen = 0;
    while (t->kind == CQL_TE_FROZEN && supports_freezing(t->args[0])) {
        *frozen = 1;
        t = t->args[0];
    }
    return t;
}

static cql_ctype *new_node(arena *a, uint16_t id, size_t n)
{
    cql_ctype *c = arena_alloc(a, sizeof *c);
    if (!c) return NULL;
    c->wire.id = id;
    c->wire.n = (uint16_t)n;
    if (n) {
        const cql_type **params = arena_alloc(a, n * sizeof *params);
        const cql_ctype **args = arena_alloc(a, n * sizeof *args);
        if (!params || !args) return NULL;
        c->wire.params = params;
        c->args = args;
    }
    return c;
}

static void set_arg(cql_ctype *c, size_t i, const cql_ctype *arg)
{
    ((const cql_type **)c->wire.params)[i] = &arg->wire;
    ((const cql_ctype **)c->args)[i] = arg;
}

static const cql_ctype *copy_frozen(arena *a, const cql_ctype *t, int freeze);

static int resolve(arena *a, const cql_type_expr *te, int frozen, const cqltype_env *env,
                   const cql_ctype **out, cql_parse_error *err)
{
    int wrapped;
    const cql_type_expr *t = unwrap(te, &wrapped);
    frozen = frozen || wrapped;
    switch (t->kind) {
    case CQL_TE_FROZEN: { /* frozen<> around a type that cannot be frozen */
        buf b;
        buf_init(&b, 4096);
        raw_print(&b, t->args[0], 0);
        cql_error_record(
            err, CQL_ERR_INVALID,
            "frozen<> is only allowed on collections, tuples, and user-defined types (got %s)",
            b.data ? b.data : "");
        buf_free(&b);
        return -1;
    }
    case CQL_TE_NATIVE:
        *out = native_named(t->name);
        if (!*out) return cql_error_record(err, CQL_ERR_INVALID, "Unknown type %s", t->name);
        return 0;
    case CQL_TE_CUSTOM: {
        const cql_ctype *known = marshal_class(t->name);
        if (known) { /* a native type named by its class is that type */
            *out = known;
            return 0;
        }
        cql_ctype *c = new_node(a, CQL_TYPE_CUSTOM, 0);
        if (!c || !(c->wire.name = arena_strndup(a, t->name, strlen(t->name))))
            return no_memory(err);
        *out = c;
        return 0;
    }
    case CQL_TE_LIST:
    case CQL_TE_SET:
    case CQL_TE_MAP: {
        const cql_type_expr *values = t->args[t->nargs - 1];
        const cql_type_expr *keys = t->kind == CQL_TE_MAP ? t->args[0] : NULL;
        int vf, kf = 0;
        const cql_type_expr *vu = unwrap(values, &vf), *ku = keys ? unwrap(keys, &kf) : NULL;
        if (!frozen && !vf &&
            (vu->kind == CQL_TE_LIST || vu->kind == CQL_TE_SET || vu->kind == CQL_TE_MAP))
            return fail_type(err, "Non-frozen collections are not allowed inside collections", t,
                             frozen);
        if (!frozen && !vf && vu->kind == CQL_TE_UDT)
            return fail_type(err, "Non-frozen UDTs are not allowed inside collections", t, frozen);
        if (is_native(values, "counter"))
            return fail_type(err, "Counters are not allowed inside collections", t, frozen);
        if (is_native(values, "duration") && t->kind == CQL_TE_SET)
            return fail_type(err, "Durations are not allowed inside sets", t, frozen);
        if (keys) {
            if (is_native(keys, "counter"))
                return fail_type(err, "Counters are not allowed inside collections", t, frozen);
            if (is_native(keys, "duration"))
                return fail_type(err, "Durations are not allowed as map keys", t, frozen);
            if (!frozen && !kf &&
                (ku->kind == CQL_TE_LIST || ku->kind == CQL_TE_SET || ku->kind == CQL_TE_MAP))
                return fail_type(err, "Non-frozen collections are not allowed inside collections",
                                 t, frozen);
            if (!frozen && !kf && ku->kind == CQL_TE_UDT)
                return fail_type(err, "Non-frozen UDTs are not allowed inside collections", t,
                                 frozen);
        }
        uint16_t id = t->kind == CQL_TE_LIST  ? CQL_TYPE_LIST
                      : t->kind == CQL_TE_SET ? CQL_TYPE_SET
                                              : CQL_TYPE_MAP;
        cql_ctype *c = new_node(a, id, t->nargs);
        if (!c) return no_memory(err);
        c->frozen = frozen;
        for (size_t i = 0; i < t->nargs; i++) {
            const cql_ctype *sub;
            /* elements of a collection are frozen whether written so or not */
            if (resolve(a, t->args[i], 1, env, &sub, err)) return -1;
            set_arg(c, i, sub);
        }
        *out = c;
        return 0;
    }
    case CQL_TE_TUPLE: {
        cql_ctype *c = new_node(a, CQL_TYPE_TUPLE, t->nargs);
        if (!c) return no_memory(err);
        c->frozen = 1;
        for (size_t i = 0; i < t->nargs; i++) {
            if (is_native(t->args[i], "counter"))
                return cql_error_record(err, CQL_ERR_INVALID,
                                        "Counters are not allowed inside tuples");
            const cql_ctype *sub;
            if (resolve(a, t->args[i], 1, env, &sub, err)) return -1;
            set_arg(c, i, sub);
        }
        *out = c;
        return 0;
    }
    case CQL_TE_UDT: {
        const char *ks = t->udt.ks ? t->udt.ks : env ? env->keyspace : NULL;
        if (t->udt.ks && env && env->keyspace && strcmp(t->udt.ks, env->keyspace) != 0)
            return cql_error_record(
                err, CQL_ERR_INVALID,
                "Statement on keyspace %s cannot refer to a user type in keyspace %s; "
                "user types can only be used in the keyspace they are defined in",
                env->keyspace, t->udt.ks);
        if (!ks)
            return cql_error_record(
                err, CQL_ERR_INVALID,
                "No keyspace has been specified. USE a keyspace, or explicitly specify "
                "keyspace.tablename");
        const cql_ctype *def = env && env->udt ? env->udt(env->ctx, ks, t->udt.name) : NULL;
        if (!def || def->wire.id != CQL_TYPE_UDT)
            return cql_error_record(err, CQL_ERR_INVALID, "Unknown type %s.%s", ks, t->udt.name);
        const cql_ctype *c = copy_frozen(a, def, frozen);
        if (!c) return no_memory(err);
        ((cql_ctype *)c)->frozen = frozen;
        *out = c;
        return 0;
    }
    }
    return cql_error_record(err, CQL_ERR_INVALID, "Unknown type");
}

int cqltype_resolve(arena *a, const cql_type_expr *te, const cqltype_env *env,
                    const cql_ctype **out, cql_parse_error *err)
{
    return resolve(a, te, 0, env, out, err);
}

/* ---- copies ---- */

static const char *dup(arena *a, const char *s, int *bad)
{
    if (!s) return NULL;
    char *d = arena_strndup(a, s, strlen(s));
    if (!d) *bad = 1;
    return d;
}

/* A deep copy of t; freeze: every nested collection and UDT frozen in the copy. */
static const cql_ctype *copy_frozen(arena *a, const cql_ctype *t, int freeze)
{
    const cql_ctype *n = cqltype_native(t->wire.id);
    if (n) return n;
    cql_ctype *c = new_node(a, t->wire.id, t->wire.n);
    if (!c) return NULL;
    int bad = 0;
    c->frozen = t->wire.id == CQL_TYPE_CUSTOM ? 0 : t->frozen || freeze;
    c->wire.name = dup(a, t->wire.name, &bad);
    c->wire.keyspace = dup(a, t->wire.keyspace, &bad);
    if (t->wire.field_names && t->wire.n) {
        const char **names = arena_alloc(a, t->wire.n * sizeof *names);
        if (!names) return NULL;
        for (uint16_t i = 0; i < t->wire.n; i++)
            names[i] = dup(a, t->wire.field_names[i], &bad);
        c->wire.field_names = names;
    }
    if (t->stored_names && t->wire.n) {
        const char **stored = arena_alloc(a, t->wire.n * sizeof *stored);
        if (!stored) return NULL;
        for (uint16_t i = 0; i < t->wire.n; i++)
            stored[i] = dup(a, t->stored_names[i], &bad);
        c->stored_names = stored;
    }
    if (bad) return NULL;
    /* what a collection or tuple holds is frozen; a UDT's fields are when it is */
    int inner = t->wire.id == CQL_TYPE_UDT ? c->frozen : 1;
    for (uint16_t i = 0; i < t->wire.n; i++) {
        const cql_ctype *sub = copy_frozen(a, t->args[i], inner);
        if (!sub) return NULL;
        set_arg(c, i, sub);
    }
    return c;
}

const char *cqltype_stored_name(const cql_ctype *t, uint16_t i)
{
    return t->stored_names ? t->stored_names[i] : t->wire.field_names[i];
}

const cql_ctype *cqltype_copy(arena *a, const cql_ctype *t)
{
    return copy_frozen(a, t, 0);
}

int cqltype_equal(const cql_ctype *a, const cql_ctype *b)
{
    if (a == b) return 1;
    if (a->wire.id != b->wire.id || a->wire.n != b->wire.n || a->frozen != b->frozen) return 0;
    if ((a->wire.name || b->wire.name) &&
        (!a->wire.name || !b->wire.name || strcmp(a->wire.name, b->wire.name) != 0))
        return 0;
    if ((a->wire.keyspace || b->wire.keyspace) &&
        (!a->wire.keyspace || !b->wire.keyspace || strcmp(a->wire.keyspace, b->wire.keyspace)))
        return 0;
    for (uint16_t i = 0; i < a->wire.n; i++) {
        if (a->wire.field_names && strcmp(a->wire.field_names[i], b->wire.field_names[i]) != 0)
            return 0;
        if (!cqltype_equal(a->args[i], b->args[i])) return 0;
    }
    return 1;
}

/* ---- properties ---- */

int cqltype_is_collection(const cql_ctype *t)
{
    return t->wire.id == CQL_TYPE_LIST || t->wire.id == CQL_TYPE_SET || t->wire.id == CQL_TYPE_MAP;
}

int cqltype_is_multicell(const cql_ctype *t)
{
    return (cqltype_is_collection(t) || t->wire.id == CQL_TYPE_UDT) && !t->frozen;
}

static int holds(const cql_ctype *t, uint16_t id)
{
    if (t->wire.id == id) return 1;
    for (uint16_t i = 0; i < t->wire.n; i++)
        if (holds(t->args[i], id)) return 1;
    return 0;
}

int cqltype_has_counter(const cql_ctype *t)
{
    return holds(t, CQL_TYPE_COUNTER);
}

int cqltype_has_duration(const cql_ctype *t)
{
    return holds(t, CQL_TYPE_DURATION);
}

int cqltype_uses_udt(const cql_ctype *t, const char *ks, const char *name)
{
    if (t->wire.id == CQL_TYPE_UDT && t->wire.name && strcmp(t->wire.name, name) == 0 &&
        (!t->wire.keyspace || !ks || strcmp(t->wire.keyspace, ks) == 0))
        return 1;
    for (uint16_t i = 0; i < t->wire.n; i++)
        if (cqltype_uses_udt(t->args[i], ks, name)) return 1;
    return 0;
}

int cqltype_check_primary_key(const cql_ctype *t, const char *column, cql_parse_error *err)
{
    if (cqltype_is_multicell(t)) {
        if (cqltype_is_collection(t))
            return cql_error_record(
                err, CQL_ERR_INVALID,
                "Invalid non-frozen collection type for PRIMARY KEY component %s", column);
        return cql_error_record(err, CQL_ERR_INVALID,
                                "Invalid non-frozen user-defined type for PRIMARY KEY component %s",
                                column);
    }
    if (t->wire.id == CQL_TYPE_COUNTER)
        return cql_error_record(err, CQL_ERR_INVALID,
                                "counter type is not supported for PRIMARY KEY column '%s'",
                                column);
    if (cqltype_has_duration(t))
        return cql_error_record(err, CQL_ERR_INVALID,
                                "duration type is not supported for PRIMARY KEY column '%s'",
                                column);
    return 0;
}

int cqltype_check_udt_fields(const char *type_name, const char *const *names,
                             const cql_type_expr *const *types, size_t n, cql_parse_error *err)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < i; k++)
            if (strcmp(names[i], names[k]) == 0)
                return cql_error_record(err, CQL_ERR_INVALID, "Duplicate field name %s in type %s",
                                        names[i], type_name);
    for (size_t i = 0; i < n; i++)
        if (is_native(types[i], "counter"))
            return cql_error_record(err, CQL_ERR_INVALID, "A user type cannot contain counters");
    for (size_t i = 0; i < n; i++)
        if (types[i]->kind == CQL_TE_UDT)
            return cql_error_record(err, CQL_ERR_INVALID,
                                    "A user type cannot contain non-frozen UDTs");
    return 0;
}

/* ---- names ---- */

/* A name as Cassandra's ColumnIdentifier.maybeQuote writes it. */
static int put_name(buf *out, const char *s)
{
    int bare = s[0] >= 'a' && s[0] <= 'z' && !cql_is_reserved(s, strlen(s));
    for (const char *c = s; bare && *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) bare = 0;
    if (bare) return buf_puts(out, s);
    int rc = buf_putc(out, '"');
    for (const char *c = s; *c && rc == 0; c++)
        rc = *c == '"' ? buf_puts(out, "\"\"") : buf_putc(out, (uint8_t)*c);
    return rc ? rc : buf_putc(out, '"');
}

int cqltype_name(const cql_ctype *t, buf *out)
{
    int rc = 0;
    const char *native = cql_type_name(t->wire.id);
    if (native) return buf_puts(out, native);
    if (t->frozen) rc = buf_puts(out, "frozen<");
    switch (t->wire.id) {
    case CQL_TYPE_CUSTOM:
        rc = rc ? rc : buf_printf(out, "'%s'", t->wire.name ? t->wire.name : "");
        break;
    case CQL_TYPE_UDT:
        rc = rc ? rc : put_name(out, t->wire.name ? t->wire.name : "");
        break;
    default: {
        const char *open = t->wire.id == CQL_TYPE_LIST  ? "list<"
                           : t->wire.id == CQL_TYPE_SET ? "set<"
                           : t->wire.id == CQL_TYPE_MAP ? "map<"
                                                        : "tuple<";
        rc = rc ? rc : buf_puts(out, open);
        for (uint16_t i = 0; i < t->wire.n && rc == 0; i++) {
            if (i) rc = buf_puts(out, ", ");
            if (rc == 0) rc = cqltype_name(t->args[i], out);
        }
        if (rc == 0) rc = buf_putc(out, '>');
    }
    }
    if (rc == 0 && t->frozen) rc = buf_putc(out, '>');
    return rc;
}

/* ---- parsing system_schema names ---- */

typedef struct scan {
    const char *start, *p, *end;
    arena *a;
    cql_parse_error *err;
    int depth;
} scan;

static void skip_space(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int syntax(scan *s, const char *what)
{
    return cql_error_record(s->err, CQL_ERR_SYNTAX, "Invalid type string: %s at offset %d", what,
                            (int)(s->p - s->start));
}

static int expect(scan *s, char c)
{
    skip_space(s);
    if (s->p >= s->end || *s->p != c) {
        char what[32];
        snprintf(what, sizeof what, "expected '%c'", c);
        return cql_error_record(s->err, CQL_ERR_SYNTAX, "Invalid type string: %s", what);
    }
    s->p++;
    return 0;
}

/* A word ([A-Za-z0-9_]+, folded to lower case) or a "quoted" name (as is); NULL on none. */
static char *word(scan *s, int *quoted)
{
    skip_space(s);
    *quoted = 0;
    if (s->p < s->end && *s->p == '"') {
        buf b;
        buf_init(&b, 65536);
        s->p++;
        for (;;) {
            if (s->p >= s->end) {
                buf_free(&b);
                return NULL;
            }
            if (*s->p == '"') {
                if (s->p + 1 < s->end && s->p[1] == '"') {
                    buf_putc(&b, '"');
                    s->p += 2;
                    continue;
                }
                s->p++;
                break;
            }
            buf_putc(&b, (uint8_t)*s->p++);
        }
        char *w = arena_strndup(s->a, b.data ? b.data : "", b.len);
        buf_free(&b);
        *quoted = 1;
        return w;
    }
    const char *start = s->p;
    while (s->p < s->end && ((*s->p >= 'a' && *s->p <= 'z') || (*s->p >= 'A' && *s->p <= 'Z') ||
                             (*s->p >= '0' && *s->p <= '9') || *s->p == '_'))
        s->p++;
    if (s->p == start) return NULL;
    char *w = arena_strndup(s->a, start, (size_t)(s->p - start));
    for (char *c = w; w && *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    return w;
}

static int peek(scan *s, char c)
{
    skip_space(s);
    return s->p < s->end && *s->p == c;
}

static int parse_expr(scan *s, cql_type_expr **out)
{
    if (++s->depth > CQL_TYPE_MAX_DEPTH)
        return cql_error_record(s->err, CQL_ERR_SYNTAX, "Invalid type string: nested too deep");
    cql_type_expr *t = arena_alloc(s->a, sizeof *t);
    if (!t) return no_memory(s->err);
    skip_space(s);
    if (s->p < s->end && *s->p == '\'') {
        const char *start = ++s->p;
        while (s->p < s->end && *s->p != '\'')
            s->p++;
        if (s->p >= s->end) return syntax(s, "unterminated custom type");
        t->kind = CQL_TE_CUSTOM;
        t->name = arena_strndup(s->a, start, (size_t)(s->p - start));
        s->p++;
        *out = t;
        s->depth--;
        return t->name ? 0 : no_memory(s->err);
    }
    int quoted;
    char *w = word(s, &quoted);
    if (!w) return syntax(s, "expected a type");
    static const struct {
        const char *name;
        cql_type_expr_kind kind;
        int nargs; /* -1: one or more */
    } shapes[] = {{"frozen", CQL_TE_FROZEN, 1},
                  {"list", CQL_TE_LIST, 1},
                  {"set", CQL_TE_SET, 1},
                  {"map", CQL_TE_MAP, 2},
                  {"tuple", CQL_TE_TUPLE, -1}};
    for (size_t i = 0; !quoted && i < sizeof shapes / sizeof shapes[0]; i++) {
        if (strcmp(w, shapes[i].name) != 0 || !peek(s, '<')) continue;
        s->p++;
        cql_type_expr *args[256];
        size_t n = 0;
        for (;;) {
            if (n == sizeof args / sizeof args[0])
                return cql_error_record(s->err, CQL_ERR_SYNTAX,
                                        "Invalid type string: too many components");
            if (parse_expr(s, &args[n])) return -1;
            n++;
            if (!peek(s, ',')) break;
            s->p++;
        }
        if (expect(s, '>')) return -1;
        if (shapes[i].nargs >= 0 && n != (size_t)shapes[i].nargs)
            return cql_error_record(s->err, CQL_ERR_SYNTAX,
                                    "Invalid type string: %s takes %d type(s), not %zu",
                                    shapes[i].name, shapes[i].nargs, n);
        t->kind = shapes[i].kind;
        t->nargs = n;
        t->args = arena_alloc(s->a, n * sizeof *t->args);
        if (!t->args) return no_memory(s->err);
        memcpy(t->args, args, n * sizeof *args);
        *out = t;
        s->depth--;
        return 0;
    }
    if (!quoted && native_named(w)) {
        t->kind = CQL_TE_NATIVE;
        t->name = w;
    } else {
        t->kind = CQL_TE_UDT;
        t->udt.name = w;
        if (peek(s, '.')) {
            s->p++;
            char *n2 = word(s, &quoted);
            if (!n2) return syntax(s, "expected a type name after '.'");
            t->udt.ks = w;
            t->udt.name = n2;
        }
    }
    *out = t;
    s->depth--;
    return 0;
}

int cqltype_parse(arena *a, const char *text, size_t len, const cqltype_env *env,
                  const cql_ctype **out, cql_parse_error *err)
{
    scan s = {text, text, text + len, a, err, 0};
    cql_type_expr *te;
    if (parse_expr(&s, &te)) return -1;
    skip_space(&s);
    if (s.p != s.end)
        return cql_error_record(err, CQL_ERR_SYNTAX,
                                "Invalid type string: unexpected '%c' after the type", *s.p);
    return cqltype_resolve(a, te, env, out, err);
}
