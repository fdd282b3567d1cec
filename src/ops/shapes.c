/* shapes.c — the generic checker of a request against its operation's input shape
 * (shapes.h): the JSON type of every member, with DynamoDB's SerializationException
 * messages. It reads the shapes as data and knows no operation by name. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "ops/shapes.h"

const shape *shapes_input(const char *name)
{
    size_t lo = 0, hi = shape_noperations;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, shape_operations[mid].name);
        if (c == 0) return shape_operations[mid].input;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* DynamoDB's messages for a value its reader did not expect where it stands. */
#define OBJECT_NOT_EXPECTED "Start of structure or map found where not expected"
#define LIST_NOT_EXPECTED "UnknownError"
#define UNEXPECTED_FIELD "Unexpected field type"
#define UNEXPECTED_VALUE "Unexpected value type in payload"
#define NOT_BASE64 "only base-64-encoded strings are convertible to bytes"
#define NOT_A_BOOLEAN_WORD "Unexpected token received from parser"

/* Deeper than this the walk stops: DynamoDB's own nesting limit (32 levels of an
 * attribute value) is judged later, and the walk must not run out of stack. */
#define MAX_DEPTH 256

static int refuse(qr_err *err, const char *msg)
{
    return err_set(err, QR_E_SERIALIZATION, "%s", msg);
}

/* The reader's name for the token v is: "NUMBER_VALUE", "TRUE_VALUE", ... */
static const char *token_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        return "NUMBER_VALUE";
    case JSON_REAL:
        return "DECIMAL_VALUE";
    case JSON_TRUE:
        return "TRUE_VALUE";
    case JSON_FALSE:
        return "FALSE_VALUE";
    default:
        return "STRING_VALUE";
    }
}

static int not_convertible(const json_t *v, const char *to, qr_err *err)
{
    return err_set(err, QR_E_SERIALIZATION, "%s cannot be converted to %s", token_name(v), to);
}

static int is_boolean_word(const char *s)
{
    return strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0;
}

/* DynamoDB's reader converts what it accepts for a boolean or an integer: a boolean's
 * words ("TRUE", "false") and a number with a fraction (5.5 is 5). *fixed is then the
 * converted value (a new reference) for the caller to put in v's place. */
static int check_scalar(const shape *s, const json_t *v, json_t **fixed, qr_err *err)
{
    if (json_is_object(v)) return refuse(err, OBJECT_NOT_EXPECTED);
    if (json_is_array(v)) return refuse(err, LIST_NOT_EXPECTED);
    switch (s->type) {
    case SHAPE_STRING:
        return json_is_string(v) ? 0 : not_convertible(v, "String", err);
    case SHAPE_INTEGER:
    case SHAPE_LONG:
        if (!json_is_number(v))
            return not_convertible(v, s->type == SHAPE_LONG ? "Long" : "Integer", err);
        if (json_is_real(v)) *fixed = json_integer((json_int_t)floor(json_real_value(v)));
        return 0;
    case SHAPE_DOUBLE:
        return json_is_number(v) ? 0 : not_convertible(v, "Double", err);
    case SHAPE_TIMESTAMP:
        return json_is_number(v) ? 0 : not_convertible(v, "Date", err);
    case SHAPE_BLOB:
        return json_is_string(v) ? 0 : refuse(err, NOT_BASE64);
    case SHAPE_BOOLEAN:
        if (json_is_string(v)) {
            const char *word = json_string_value(v);
            if (!is_boolean_word(word)) return refuse(err, NOT_A_BOOLEAN_WORD);
            *fixed = json_boolean(strcasecmp(word, "true") == 0);
            return 0;
        }
        return json_is_boolean(v) ? 0 : not_convertible(v, "Boolean", err);
    default:
        return 0;
    }
}

/* Checks v against s; member says whether v is a structure's member (else an element of a
 * list or a value of a map), which changes what DynamoDB calls a misplaced container.
 * *fixed is what check_scalar converted v to, or left NULL. */
static int check_value(const shape *s, json_t *v, int member, int depth, json_t **fixed,
                       qr_err *err)
{
    json_t *f = NULL;
    if (json_is_null(v) || depth > MAX_DEPTH) return 0;
    switch (s->type) {
    case SHAPE_STRUCTURE:
        if (json_is_array(v)) return refuse(err, LIST_NOT_EXPECTED);
        if (!json_is_object(v)) return refuse(err, member ? UNEXPECTED_FIELD : UNEXPECTED_VALUE);
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
    case SHAPE_LIST:
        if (json_is_object(v)) return refuse(err, OBJECT_NOT_EXPECTED);
        if (!json_is_array(v)) return refuse(err, member ? UNEXPECTED_FIELD : LIST_NOT_EXPECTED);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (check_value(s->element, json_array_get(v, i), 0, depth + 1, &f, err)) return -1;
            if (f) json_array_set_new(v, i, f);
            f = NULL;
        }
        return 0;
    case SHAPE_MAP:
        if (json_is_array(v)) return refuse(err, LIST_NOT_EXPECTED);
        if (!json_is_object(v)) return refuse(err, member ? UNEXPECTED_FIELD : LIST_NOT_EXPECTED);
        const char *key;
        json_t *ev;
        json_object_foreach(v, key, ev)
        {
            if (check_value(s->element, ev, 0, depth + 1, &f, err)) return -1;
            if (f) json_object_set_new(v, key, f);
            f = NULL;
        }
        return 0;
    default:
        return check_scalar(s, v, fixed, err);
    }
}

int shapes_check_types(const shape *input, json_t *req, qr_err *err)
{
    json_t *top = NULL; /* never set: req is an object */
    return input ? check_value(input, req, 1, 0, &top, err) : 0;
}
