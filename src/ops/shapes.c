/* shapes.c — the generic checker of a request against its operation's input shape
 * (shapes.h): the JSON type of every member, with DynamoDB's SerializationException
 * messages, then the model's constraints, every one a request breaks reported together as
 * DynamoDB's ValidationException. It reads the shapes as data and knows no operation by
 * name; the operations' own rules and resources are their handlers'. */
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "ops/shapes.h"

const shape_operation *shapes_operation(const char *name)
{
    size_t lo = 0, hi = shape_noperations;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, shape_operations[mid].name);
        if (c == 0) return &shape_operations[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* Deeper than this the walk stops: DynamoDB's own nesting limit (32 levels of an
 * attribute value) is judged later, and the walk must not run out of stack. */
#define MAX_DEPTH 256

/* Checks v against s; member says whether v is a structure's member (else an element of a
 * list or a value of a map), which changes what DynamoDB calls a misplaced container.
 * *fixed is what the reader converted v to (value_wire_check), or left NULL. */
static int check_value(const shape *s, json_t *v, int member, int depth, json_t **fixed,
                       qr_err *err)
{
    json_t *f = NULL;
    if (json_is_null(v) || depth > MAX_DEPTH) return 0;
    if (value_wire_check(v, s->type, member, fixed, err)) return -1;
    switch (s->type) {
    case WIRE_STRUCTURE: {
        const char *name;
        json_t *mv;
        json_object_foreach(v, name, mv)
        {
            for (size_t i = 0; i < s->nmembers; i++)
                if (strcmp(s->members[i].name, name) == 0) {
                    if (check_value(s->members[i].shape, mv, 1, depth + 1, &f, err)) return -1;
                    if (f) json_object_set_new(v, name, f); /* in place: the walk goes on */
                    f = NULL;
                    break;
                }
        }
        return 0;
    }
    case WIRE_LIST:
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (check_value(s->element, json_array_get(v, i), 0, depth + 1, &f, err)) return -1;
            if (f) json_array_set_new(v, i, f);
            f = NULL;
        }
        return 0;
    case WIRE_MAP: {
        const char *key;
        json_t *ev;
        json_object_foreach(v, key, ev)
        {
            if (check_value(s->element, ev, 0, depth + 1, &f, err)) return -1;
            if (f) json_object_set_new(v, key, f);
            f = NULL;
        }
        return 0;
    }
    default:
        return 0;
    }
}

int shapes_check_types(const shape *input, json_t *req, qr_err *err)
{
    json_t *top = NULL; /* never set: req is an object */
    return input ? check_value(input, req, 1, 0, &top, err) : 0;
}

/* ---- constraints ---- */

/* The compiled ere of each shape that has one, compiled on first use. */
typedef struct compiled_pattern {
    const char *ere;
    regex_t re;
    int ok;
} compiled_pattern;
static compiled_pattern patterns[32];
static size_t npatterns;
static pthread_mutex_t patterns_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 when s matches ere, 0 when not; 1 too when ere cannot be compiled (nothing judged). */
static int pattern_matches(const char *ere, const char *s)
{
    pthread_mutex_lock(&patterns_lock);
    compiled_pattern *p = NULL;
    for (size_t i = 0; i < npatterns && !p; i++)
        if (patterns[i].ere == ere) p = &patterns[i];
    if (p == NULL && npatterns < sizeof patterns / sizeof patterns[0]) {
        p = &patterns[npatterns++];
        p->ere = ere;
        p->ok = regcomp(&p->re, ere, REG_EXTENDED | REG_NOSUB) == 0;
    }
    pthread_mutex_unlock(&patterns_lock);
    if (p == NULL || !p->ok) return 1;
    return regexec(&p->re, s, 0, NULL, 0) == 0; /* regexec on a compiled regex_t is
                                                   thread-safe */
}

/* Longer echoes are cut to ECHO_CUT characters and "...", so the constraint after them
 * always fits the message. */
#define ECHO_MAX 256
#define ECHO_CUT 64

/* The length of UTF-8 text as DynamoDB measures a string's length constraint: in UTF-16
 * code units (a character beyond the BMP, 4 bytes in UTF-8, counts 2). */
static size_t utf16_length(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xc0) != 0x80) n += c >= 0xf0 ? 2 : 1;
    }
    return n;
}

/* Appends text, cut after ECHO_CUT characters (never inside one) when longer than
 * ECHO_MAX bytes. */
static void echo_text(buf *out, const char *text, size_t len)
{
    if (len <= ECHO_MAX) {
        buf_append(out, text, len);
        return;
    }
    size_t end = 0;
    for (size_t chars = 0; end < len && chars <= ECHO_CUT; end++)
        if (((unsigned char)text[end] & 0xc0) != 0x80 && chars++ == ECHO_CUT) break;
    buf_append(out, text, end);
    buf_puts(out, "...");
}

/* v as DynamoDB echoes it in "Value '…' at": a string as it is, a number as written, an
 * empty list as [], a longer list or a map as compact JSON, or [...] when that is long. */
static void render_value(const json_t *v, buf *out)
{
    if (json_is_string(v)) {
        echo_text(out, json_string_value(v), json_string_length(v));
    } else if (json_is_integer(v)) {
        buf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (text && strlen(text) <= ECHO_MAX)
            buf_puts(out, text);
        else
            buf_puts(out, json_is_array(v) ? "[...]" : "{...}");
        free(text);
    }
}

static void violation(member_errors *m, const json_t *v, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void violation(member_errors *m, const json_t *v, const char *path, const char *fmt, ...)
{
    buf value;
    buf_init(&value, 0);
    if (v) render_value(v, &value);
    char constraint[512], text[QR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(constraint, sizeof constraint, fmt, ap);
    va_end(ap);
    err_violation_text(text, sizeof text, v ? (value.data ? value.data : "") : NULL, path, "%s",
                       constraint);
    member_errors_add(m, text);
    buf_free(&value);
}

/* A structure as DynamoDB's Java objects print themselves, "Name(member=value, ...)": its
 * members in the shape's order, absent ones null, lists "[a, b]". */
static void render_object(const shape *s, const json_t *v, buf *out, int depth)
{
    if (s->type == WIRE_LIST && json_is_array(v) && depth < 8) {
        buf_putc(out, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) buf_puts(out, ", ");
            render_object(s->element, json_array_get(v, i), out, depth + 1);
        }
        buf_putc(out, ']');
    } else if (s->type == WIRE_STRUCTURE && json_is_object(v) && depth < 8) {
        buf_printf(out, "%s(", s->name);
        for (size_t i = 0; i < s->nmembers; i++) {
            char field[128];
            buf_printf(out, "%s%s=", i ? ", " : "",
                       param_field(s->members[i].name, field, sizeof field));
            render_object(s->members[i].shape, json_object_get(v, s->members[i].name), out,
                          depth + 1);
        }
        buf_putc(out, ')');
    } else if (v == NULL || json_is_null(v)) {
        buf_puts(out, "null");
    } else if (json_is_string(v)) {
        buf_append(out, json_string_value(v), json_string_length(v));
    } else {
        render_value(v, out);
    }
}

/* A list of structures against its bounds, echoed as DynamoDB echoes such a list: its
 * elements as Java objects (render_object), or [...] when that is long. */
static void check_list_of_structures(const shape *s, const json_t *v, const char *path,
                                     member_errors *m)
{
    long long n = (long long)json_array_size(v);
    if (!(s->has_min && n < s->min) && !(s->has_max && n > s->max)) return;
    buf echo;
    buf_init(&echo, 0);
    render_object(s, v, &echo, 0);
    const char *shown = echo.len <= ECHO_MAX ? echo.data : "[...]";
    char text[QR_ERR_MSG_MAX];
    if (s->has_min && n < s->min) {
        err_violation_text(text, sizeof text, shown, path, QR_MSG_LENGTH_AT_LEAST, s->min);
        member_errors_add(m, text);
    }
    if (s->has_max && n > s->max) {
        err_violation_text(text, sizeof text, shown, path, QR_MSG_LENGTH_AT_MOST, s->max);
        member_errors_add(m, text);
    }
    buf_free(&echo);
}

/* A size or length against the shape's bounds. */
static void check_bounds(const shape *s, const json_t *v, long long n, const char *path,
                         member_errors *m)
{
    if (s->has_min && n < s->min) violation(m, v, path, QR_MSG_LENGTH_AT_LEAST, s->min);
    if (s->has_max && n > s->max) violation(m, v, path, QR_MSG_LENGTH_AT_MOST, s->max);
}

static void check_enum(const shape *s, const json_t *v, const char *path, member_errors *m)
{
    const char *value = json_string_value(v);
    for (size_t i = 0; s->enums[i]; i++)
        if (strcmp(value, s->enums[i]) == 0) return;
    char set[400];
    violation(m, v, path, QR_MSG_ENUM, err_enum_list(set, sizeof set, s->enums));
}

static void check_number(const shape *s, const json_t *v, const char *path, member_errors *m)
{
    double n = json_number_value(v);
    if (s->has_min && n < (double)s->min) violation(m, v, path, QR_MSG_VALUE_AT_LEAST, s->min);
    if (s->has_max && n > (double)s->max) violation(m, v, path, QR_MSG_VALUE_AT_MOST, s->max);
}

static void check_pattern(const shape *s, const json_t *v, const char *path, member_errors *m)
{
    if (s->ere && !pattern_matches(s->ere, json_string_value(v)))
        violation(m, v, path, QR_MSG_PATTERN, s->pattern);
}

/* The path of member name below path, lowerCamel as DynamoDB names it: "keySchema",
 * "provisionedThroughput.readCapacityUnits". */
static void member_path(buf *out, const char *path, const char *name)
{
    char field[128];
    if (*path) buf_printf(out, "%s.", path);
    buf_puts(out, param_field(name, field, sizeof field));
}

static void judge(const shape *s, const json_t *v, const char *path, int depth, member_errors *m);
static void judge_unshown(const shape_member *mem, const json_t *v, const char *path, int depth,
                          member_errors *m);

static void judge_map_entries(const shape *s, const json_t *v, const char *path,
                              const char *spelled, int depth, member_errors *m);

/* Whether name is one of names (NULL-terminated, or NULL). */
static int listed(const char *const *names, const char *name)
{
    for (size_t i = 0; names && names[i]; i++)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

/* Structure s's own message of kind for its member name, or NULL. */
static const char *member_message(const shape *s, const char *name, shape_message_kind kind)
{
    for (size_t i = 0; i < s->nmessages; i++)
        if (s->messages[i].kind == kind && strcmp(s->messages[i].member, name) == 0)
            return s->messages[i].text;
    return NULL;
}

static void judge_structure(const shape *s, const json_t *v, const char *path, int depth,
                            member_errors *m)
{
    for (size_t i = 0; i < s->nmembers; i++) {
        const shape_member *mem = &s->members[i];
        json_t *mv = json_object_get(v, mem->name);
        if (json_is_null(mv)) mv = NULL;
        if (listed(s->alone_before, mem->name) || listed(s->alone_after, mem->name))
            continue; /* judge_alone's */
        if (mv == NULL && !mem->required) continue;
        if (mv && (!mem->shape->constrained || mem->length_message ||
                   member_message(s, mem->name, SHAPE_MESSAGE_ENUM)))
            continue;
        buf sub;
        buf_init(&sub, 0);
        member_path(&sub, path, mem->name);
        if (mv == NULL)
            violation(m, NULL, sub.data, QR_MSG_NOT_NULL);
        else if (listed(s->unshown, mem->name))
            judge_unshown(mem, mv, path, depth + 1, m);
        else
            judge(mem->shape, mv, sub.data, depth + 1, m);
        buf_free(&sub);
    }
}

/* Adds to m every constraint v breaks of shape s (its type already checked), below path. */
static void judge(const shape *s, const json_t *v, const char *path, int depth, member_errors *m)
{
    if (depth > MAX_DEPTH) return;
    switch (s->type) {
    case WIRE_STRUCTURE:
        if (!s->handler_judges) judge_structure(s, v, path, depth, m);
        return;
    case WIRE_LIST:
        if (!s->handler_judges && s->element->type == WIRE_STRUCTURE)
            check_list_of_structures(s, v, path, m);
        else if (!s->handler_judges)
            check_bounds(s, v, (long long)json_array_size(v), path, m);
        if (!s->element->constrained) return;
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *ev = json_array_get(v, i);
            if (json_is_null(ev)) continue;
            buf sub;
            buf_init(&sub, 0);
            buf_printf(&sub, "%s.%zu.member", path, i + 1);
            judge(s->element, ev, sub.data, depth + 1, m);
            buf_free(&sub);
        }
        return;
    case WIRE_MAP:
        if (!s->handler_judges) check_bounds(s, v, (long long)json_object_size(v), path, m);
        if (s->map_echo) judge_map_entries(s, v, path, path, depth, m);
        return; /* else its keys and values are the operations' to judge */
    case WIRE_STRING:
        if (s->handler_judges) return;
        if (s->enums) {
            check_enum(s, v, path, m);
            return;
        }
        if (s->pattern_first) check_pattern(s, v, path, m);
        check_bounds(s, v, (long long)utf16_length(json_string_value(v), json_string_length(v)),
                     path, m);
        if (!s->pattern_first) check_pattern(s, v, path, m);
        return;
    case WIRE_INTEGER:
    case WIRE_LONG:
    case WIRE_DOUBLE:
        if (!s->handler_judges) check_number(s, v, path, m);
        return;
    default:
        return;
    }
}

/* The first member of req whose length breaks its bounds and that has a message of its own
 * for that (a map or list: only one under its minimum): then err is set to that message
 * alone (-1). */
static int judge_length_messages(const shape *input, const json_t *req, qr_err *err)
{
    for (size_t i = 0; i < input->nmembers; i++) {
        const shape_member *mem = &input->members[i];
        const json_t *v = json_object_get(req, mem->name);
        if (mem->length_message == NULL || v == NULL) continue;
        const shape *s = mem->shape;
        if (json_is_object(v) || json_is_array(v)) { /* worded so only when under its minimum */
            size_t size = json_is_object(v) ? json_object_size(v) : json_array_size(v);
            if (s->has_min && (long long)size < s->min)
                return err_validation(err, "%s", mem->length_message);
            continue;
        }
        if (!json_is_string(v)) continue;
        long long n = (long long)utf16_length(json_string_value(v), json_string_length(v));
        if ((s->has_min && n < s->min) || (s->has_max && n > s->max))
            return err_validation(err, "%s", mem->length_message);
    }
    return 0;
}

/* Member mem's own bounds, in DynamoDB's newer wording: "Value at 'Limit' failed to satisfy
 * constraint: …", below path as the request spells it; then the rest of its shape as judge
 * judges it, below that path. */
static void judge_unshown(const shape_member *mem, const json_t *v, const char *path, int depth,
                          member_errors *m)
{
    const shape *s = mem->shape;
    int number = s->type == WIRE_INTEGER || s->type == WIRE_LONG || s->type == WIRE_DOUBLE;
    double n = number ? json_number_value(v)
               : json_is_string(v)
                   ? (double)utf16_length(json_string_value(v), json_string_length(v))
               : json_is_object(v) ? (double)json_object_size(v)
                                   : (double)json_array_size(v);
    buf spelled;
    buf_init(&spelled, 0);
    buf_printf(&spelled, "%s%s%s", path, *path ? "." : "", mem->name);
    char text[QR_ERR_MSG_MAX];
    if (s->has_min && n < (double)s->min) {
        err_violation_text(text, sizeof text, err_value_unshown, spelled.data,
                           number ? QR_MSG_VALUE_AT_LEAST : QR_MSG_LENGTH_AT_LEAST, s->min);
        member_errors_add(m, text);
    }
    if (s->has_max && n > (double)s->max) {
        err_violation_text(text, sizeof text, err_value_unshown, spelled.data,
                           number ? QR_MSG_VALUE_AT_MOST : QR_MSG_LENGTH_AT_MOST, s->max);
        member_errors_add(m, text);
    }
    if (s->type == WIRE_MAP && s->map_echo) { /* the map's own forms name it the older way */
        buf sub;
        buf_init(&sub, 0);
        member_path(&sub, path, mem->name);
        judge_map_entries(s, v, sub.data, spelled.data, depth, m);
        buf_free(&sub);
    } else {
        shape rest = *s;
        rest.has_min = rest.has_max = 0;
        judge(&rest, v, spelled.data, depth, m);
    }
    buf_free(&spelled);
}

/* ---- a map's keys and values ---- */

/* How much of a map's echo its messages show: DynamoDB echoes it whole, which would leave
 * no room for the constraint after it. */
#define MAP_ECHO_JSON_MAX 600
#define MAP_ECHO_JAVA_MAX 700
#define MAP_ECHO_SHARED_MAX 200 /* each of two violations of one map, to fit one message */

/* v of shape s as DynamoDB's Java objects print themselves: a structure as
 * Name(field=value, ...) with every field its class has (null when absent), a map as
 * {key=value, ...}, a list as [a, b], text bare. It stops once out holds more than the
 * echo shows. */
static void render_java(const shape *s, const json_t *v, buf *out)
{
    if (out->len > MAP_ECHO_JAVA_MAX) return;
    if (v == NULL || json_is_null(v)) {
        buf_puts(out, "null");
        return;
    }
    switch (s->type) {
    case WIRE_STRUCTURE: {
        buf_printf(out, "%s(", s->name);
        size_t n = 0;
        for (; s->java_fields ? s->java_fields[n] != NULL : n < s->nmembers; n++) {
            const char *field = s->java_fields ? s->java_fields[n] : s->members[n].name;
            char lower[128];
            buf_printf(out, "%s%s=", n ? ", " : "", param_field(field, lower, sizeof lower));
            const shape_member *mem = NULL;
            for (size_t i = 0; i < s->nmembers && !mem; i++)
                if (strcmp(s->members[i].name, field) == 0) mem = &s->members[i];
            if (mem)
                render_java(mem->shape, json_object_get(v, field), out);
            else
                buf_puts(out, "null");
        }
        buf_putc(out, ')');
        return;
    }
    case WIRE_MAP: {
        const char *key;
        json_t *ev;
        int first = 1;
        buf_putc(out, '{');
        json_object_foreach((json_t *)v, key, ev)
        {
            buf_printf(out, "%s%s=", first ? "" : ", ", key);
            render_java(s->element, ev, out);
            first = 0;
        }
        buf_putc(out, '}');
        return;
    }
    case WIRE_LIST:
        buf_putc(out, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) buf_puts(out, ", ");
            render_java(s->element, json_array_get(v, i), out);
        }
        buf_putc(out, ']');
        return;
    default:
        if (json_is_string(v))
            buf_puts(out, json_string_value(v));
        else if (json_is_boolean(v))
            buf_puts(out, json_is_true(v) ? "true" : "false");
        else
            render_value(v, out);
        return;
    }
}

/* The constraints of s as DynamoDB lists them for a map's keys or values: its maximum
 * length, its minimum, its pattern, joined by QR_MSG_AND. */
static void list_constraints(const shape *s, buf *out)
{
    char text[256];
    const char *sep = "";
    if (s->has_max) {
        snprintf(text, sizeof text, QR_MSG_LENGTH_AT_MOST, s->max);
        buf_printf(out, "%s%s", sep, text);
        sep = QR_MSG_AND;
    }
    if (s->has_min) {
        snprintf(text, sizeof text, QR_MSG_LENGTH_AT_LEAST, s->min);
        buf_printf(out, "%s%s", sep, text);
        sep = QR_MSG_AND;
    }
    if (s->pattern) buf_printf(out, "%s" QR_MSG_PATTERN, sep, s->pattern);
}

/* Whether text, or a value's size (a list's or map's), breaks s's bounds or pattern. */
static int breaks_own(const shape *s, const json_t *v)
{
    long long n = json_is_string(v)
                      ? (long long)utf16_length(json_string_value(v), json_string_length(v))
                  : json_is_object(v) ? (long long)json_object_size(v)
                                      : (long long)json_array_size(v);
    if ((s->has_min && n < s->min) || (s->has_max && n > s->max)) return 1;
    return json_is_string(v) && s->ere && !pattern_matches(s->ere, json_string_value(v));
}

/* One violation of the whole map v at path, of form ("Map keys ..." or "Map value ...")
 * over the constraints of shape of, the map echoed as s says (shared: in the room two such
 * violations of one map each have in one message). */
static void map_violation(const shape *s, const json_t *v, const char *path, const char *form,
                          const shape *of, int shared, member_errors *m)
{
    buf echo, constraints;
    buf_init(&echo, 0);
    buf_init(&constraints, 0);
    size_t cap = MAP_ECHO_JSON_MAX;
    if (s->map_echo == SHAPE_ECHO_JAVA) {
        render_java(s, v, &echo);
        cap = MAP_ECHO_JAVA_MAX;
    } else {
        char *text = json_dumps(v, JSON_COMPACT);
        if (text) buf_puts(&echo, text);
        free(text);
    }
    if (shared) cap = MAP_ECHO_SHARED_MAX;
    list_constraints(of, &constraints);
    char shown[MAP_ECHO_JAVA_MAX + 1], text[QR_ERR_MSG_MAX];
    snprintf(shown, cap + 1 < sizeof shown ? cap + 1 : sizeof shown, "%s",
             echo.data ? echo.data : "");
    err_violation_text(text, sizeof text, shown, path, "%s: [%s]", form,
                       constraints.data ? constraints.data : "");
    member_errors_add(m, text);
    buf_free(&echo);
    buf_free(&constraints);
}

/* The keys and values of map v (shape s) below path: one violation for the keys that break
 * the key shape, one for the values that break the value shape's own bounds, then what each
 * value holds below "<spelled>.<key>.member" (spelled: path as the request spells it, where
 * the map's member is named so): a structure's members, a list's elements. */
static void judge_map_entries(const shape *s, const json_t *v, const char *path,
                              const char *spelled, int depth, member_errors *m)
{
    const char *key;
    json_t *ev;
    int bad_key = 0, bad_value = 0;
    json_object_foreach((json_t *)v, key, ev)
    {
        json_t *k = json_string(key);
        if (k && !(s->arn_keys && strncmp(key, "arn:", 4) == 0) && breaks_own(s->key, k))
            bad_key = 1;
        json_decref(k);
        if (s->element->type != WIRE_STRUCTURE && breaks_own(s->element, ev))
            bad_value = 1; /* a null value counts as an empty one */
    }
    int both = bad_key && bad_value;
    if (bad_key) map_violation(s, v, path, "Map keys must satisfy constraint", s->key, both, m);
    if (bad_value)
        map_violation(s, v, path, "Map value must satisfy constraint", s->element, both, m);
    if (!s->element->constrained) return;
    /* What a value holds, below it; its own bounds were judged above, in the map's form. */
    shape below = *s->element;
    below.has_min = below.has_max = 0;
    json_t *empty = json_object(); /* what a null structure is judged as */
    json_object_foreach((json_t *)v, key, ev)
    {
        if (json_is_null(ev) && below.type != WIRE_STRUCTURE) continue;
        buf sub;
        buf_init(&sub, 0);
        buf_printf(&sub, "%s.%s.member", spelled, key);
        judge(&below, json_is_null(ev) ? empty : ev, sub.data, depth + 1, m);
        buf_free(&sub);
    }
    json_decref(empty);
}

/* Whether member name of input, in req, breaks any constraint of its shape. */
static int member_breaks(const shape *input, const json_t *req, const char *name)
{
    for (size_t i = 0; i < input->nmembers; i++) {
        const shape_member *mem = &input->members[i];
        if (strcmp(mem->name, name) != 0) continue;
        const json_t *mv = json_object_get(req, name);
        if (mv == NULL || json_is_null(mv)) return mem->required;
        member_errors m;
        member_errors_init(&m);
        judge(mem->shape, mv, "", 1, &m);
        int broken = m.count > 0;
        buf_free(&m.list);
        return broken;
    }
    return 0;
}

/* The first member of req left out (or null), or given as "", that has a message of its
 * own for that: then err is set to that message alone (-1). */
static int judge_absent_messages(const shape *input, const json_t *req, qr_err *err)
{
    for (size_t i = 0; i < input->nmessages; i++) {
        const shape_message *mm = &input->messages[i];
        const json_t *v = json_object_get(req, mm->member);
        if ((mm->kind == SHAPE_MESSAGE_ABSENT && (v == NULL || json_is_null(v))) ||
            (mm->kind == SHAPE_MESSAGE_EMPTY && json_is_string(v) && json_string_length(v) == 0))
            return err_validation(err, "%s", mm->text);
    }
    return 0;
}

/* Where m reports several violations, each member of input with an AMONG message has its
 * own violations' texts in m (one, as such members have) replaced by that message. */
static void word_among_others(const shape *input, const json_t *req, member_errors *m)
{
    for (size_t i = 0; i < input->nmessages && m->count > 1; i++) {
        const shape_message *mm = &input->messages[i];
        const shape_member *mem = NULL;
        for (size_t k = 0; k < input->nmembers && mem == NULL; k++)
            if (strcmp(input->members[k].name, mm->member) == 0) mem = &input->members[k];
        const json_t *v = json_object_get(req, mm->member);
        if (mm->kind != SHAPE_MESSAGE_AMONG || mem == NULL || v == NULL || json_is_null(v))
            continue;
        member_errors own;
        member_errors_init(&own);
        char path[128];
        judge(mem->shape, v, param_field(mem->name, path, sizeof path), 1, &own);
        char *at = own.count == 1 ? strstr(m->list.data, own.list.data) : NULL;
        if (at) {
            buf out;
            buf_init(&out, 0);
            buf_append(&out, m->list.data, (size_t)(at - m->list.data));
            buf_puts(&out, mm->text);
            buf_puts(&out, at + own.list.len);
            buf_free(&m->list);
            m->list = out;
        }
        buf_free(&own.list);
    }
}

/* The first member of req outside its enum that has a message of its own for that: then
 * err is set to that message alone (-1). */
static int judge_enum_messages(const shape *input, const json_t *req, qr_err *err)
{
    for (size_t i = 0; i < input->nmembers; i++) {
        const shape_member *mem = &input->members[i];
        const json_t *v = json_object_get(req, mem->name);
        const char *text = member_message(input, mem->name, SHAPE_MESSAGE_ENUM);
        if (text == NULL || !json_is_string(v) || mem->shape->enums == NULL) continue;
        size_t k = 0;
        while (mem->shape->enums[k] && strcmp(mem->shape->enums[k], json_string_value(v)))
            k++;
        if (mem->shape->enums[k] == NULL) return err_validation(err, "%s", text);
    }
    return 0;
}

/* The first of input's joint messages whose members all break their constraints beside
 * enough entries of its other member: err set to that message, bare (-1). */
static int judge_joints(const shape *input, const json_t *req, qr_err *err)
{
    for (size_t j = 0; j < input->njoints; j++) {
        const shape_joint *jt = &input->joints[j];
        const json_t *beside = json_object_get(req, jt->beside);
        size_t n = json_is_object(beside) ? json_object_size(beside) : json_array_size(beside);
        int all = n >= jt->beside_min;
        for (size_t k = 0; all && jt->broken[k]; k++)
            all = member_breaks(input, req, jt->broken[k]);
        if (all) return err_validation(err, "%s", jt->message);
    }
    return 0;
}

/* The members of input named by alone, judged each by itself in that order: err set to what
 * the first that breaks a constraint breaks (-1). */
static int judge_alone(const shape *input, const json_t *req, const char *const *alone, qr_err *err)
{
    for (size_t k = 0; alone && alone[k]; k++)
        for (size_t i = 0; i < input->nmembers; i++) {
            const shape_member *mem = &input->members[i];
            const json_t *mv = json_object_get(req, mem->name);
            if (json_is_null(mv)) mv = NULL;
            if (strcmp(mem->name, alone[k]) != 0 || (mv == NULL && !mem->required)) continue;
            member_errors m;
            member_errors_init(&m);
            char path[128];
            param_field(mem->name, path, sizeof path);
            if (mv == NULL)
                violation(&m, NULL, path, QR_MSG_NOT_NULL);
            else if (listed(input->unshown, mem->name))
                judge_unshown(mem, mv, "", 1, &m);
            else
                judge(mem->shape, mv, path, 1, &m);
            if (member_errors_finish(&m, err)) return -1;
        }
    return 0;
}

/* The violations of the first member of input (in its order) that has any, into m; worded
 * by the member's AMONG message when a later member has some too. */
static void judge_first_member(const shape *input, const json_t *req, member_errors *m)
{
    const shape_member *first = NULL;
    for (size_t i = 0; i < input->nmembers; i++) {
        shape one = *input;
        one.members = &input->members[i];
        one.nmembers = 1;
        member_errors own;
        member_errors_init(&own);
        judge_structure(&one, req, "", 0, &own);
        if (own.count && first == NULL) {
            buf_free(&m->list);
            *m = own;
            first = &input->members[i];
            continue;
        }
        buf_free(&own.list);
        if (own.count == 0) continue;
        const char *among = member_message(input, first->name, SHAPE_MESSAGE_AMONG);
        if (among) {
            buf_free(&m->list);
            member_errors_init(m);
            member_errors_add(m, among);
        }
        return;
    }
}

/* The structure req is judged against: input, or its variant when the member that selects
 * it is left out. */
static const shape *judged_shape(const shape *input, const json_t *req)
{
    if (input->type != WIRE_STRUCTURE || input->variant == NULL) return input;
    const json_t *v = json_object_get(req, input->variant_member);
    return v == NULL || json_is_null(v) ? input->variant : input;
}

int shapes_check_constraints(const shape *input, const json_t *req, qr_err *err)
{
    if (input == NULL || !input->constrained) return 0;
    input = judged_shape(input, req);
    int structure = input->type == WIRE_STRUCTURE;
    if (structure && (judge_absent_messages(input, req, err) || judge_joints(input, req, err) ||
                      judge_alone(input, req, input->alone_before, err)))
        return -1;
    member_errors m;
    member_errors_init(&m);
    if (input->one_member_at_a_time) {
        judge_first_member(input, req, &m);
    } else {
        judge(input, req, "", 0, &m);
        if (input->type == WIRE_STRUCTURE) word_among_others(input, req, &m);
    }
    if (member_errors_finish(&m, err)) return -1;
    if (!structure) return 0;
    return judge_length_messages(input, req, err) || judge_enum_messages(input, req, err) ||
                   judge_alone(input, req, input->alone_after, err)
               ? -1
               : 0;
}

int shapes_check(const shape_operation *op, json_t *req, qr_err *err)
{
    if (op == NULL) return 0;
    if (shapes_check_types(op->input, req, err)) return -1;
    return op->constraints ? shapes_check_constraints(op->input, req, err) : 0;
}
