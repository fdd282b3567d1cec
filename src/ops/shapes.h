/* shapes.h — the input shapes of DynamoDB's operations as data (shapes_gen.c, generated from
 * DynamoDB's service model by tools/gen_shapes.py) and the generic checker that walks a
 * request against its operation's shape (shapes.c), as DynamoDB does before it runs the
 * operation. The operations' own rules (expressions, keys, limits) stay in their handlers. */
#ifndef QR_OPS_SHAPES_H
#define QR_OPS_SHAPES_H

#include <jansson.h>
#include <stddef.h>

#include "model/value.h"
#include "util/err.h"

/* A shape's type is one of the model's, as model/value.h names them (WIRE_STRING, ...). */

typedef struct shape shape;
typedef struct shape_member {
    const char *name; /* as the request spells it: "TableName" */
    const shape *shape;
    int required;
    const char *length_message; /* or NULL; else a length outside the shape's bounds is
                                   answered with this alone, once the walk finds nothing
                                   else, and the member is judged by nothing else
                                   (tools/shapes_overrides.json, length_messages) */
} shape_member;

/* A message DynamoDB answers, bare and alone, when every member of broken (NULL-terminated)
 * breaks a constraint while member beside holds at least beside_min entries
 * (tools/shapes_overrides.json, joint_messages). */
typedef struct shape_joint {
    const char *const *broken;
    const char *beside;
    size_t beside_min;
    const char *message;
} shape_joint;

/* What DynamoDB answers for one member of a structure instead of the model's words
 * (tools/shapes_overrides.json). Alone: ABSENT, the member left out or null, before anything
 * else is judged (absent_messages); EMPTY, the member given as "", the same (empty_messages);
 * ENUM, a value outside the member's enum, once the walk finds nothing else, the member then
 * judged by nothing else (enum_messages). AMONG: the member's violation worded so (without
 * its value or place) when others are reported with it (among_messages). */
typedef enum shape_message_kind {
    SHAPE_MESSAGE_ABSENT,
    SHAPE_MESSAGE_ENUM,
    SHAPE_MESSAGE_EMPTY,
    SHAPE_MESSAGE_AMONG
} shape_message_kind;
typedef struct shape_message {
    const char *member; /* as the request spells it */
    shape_message_kind kind;
    const char *text;
} shape_message;

struct shape {
    wire_type type;
    const char *name;            /* the model's name for the shape: "TableName" */
    int has_min, has_max;        /* length of a string, size of a list or map, or a number's */
    long long min, max;          /* range, as the model bounds them */
    int constrained;             /* it or a shape below it has constraints to judge */
    int handler_judges;          /* its constraints are judged by the operations, with DynamoDB's
                                    messages for them (tools/shapes_overrides.json) */
    const char *pattern;         /* a string's regular expression as DynamoDB names it, or NULL */
    const char *ere;             /* the same as an anchored POSIX extended expression */
    int pattern_first;           /* its pattern is reported before its length, as DynamoDB
                                    does for some names (tools/shapes_overrides.json) */
    const char *const *enums;    /* a string's allowed values, NULL-terminated, or NULL */
    const shape_member *members; /* a structure's, in the model's order */
    size_t nmembers;
    const shape_message *messages; /* a structure's members' own messages, or NULL */
    size_t nmessages;
    int one_member_at_a_time;   /* a request's violations are those of its first member (in
                                   the structure's order) that has any (AMONG words then
                                   apply when later members have some too) */
    const char *variant_member; /* when this member of a request is left out (or null), */
    const shape *variant;       /* the request is judged against this structure instead */
    const shape *key;           /* a map's keys */
    const shape *element;       /* a list's elements, a map's values */
    /* Members of an operation's input judged each by itself, the first that breaks a
     * constraint answered alone: before the rest, or after once the rest break nothing
     * (NULL-terminated, or NULL; tools/shapes_overrides.json, judged_alone). */
    const char *const *alone_before, *const *alone_after;
    /* Members whose own bounds' violations show no value and name the member as the
     * request spells it, "Value at 'Limit' …" (NULL-terminated, or NULL; unshown_values). */
    const char *const *unshown;
    const shape_joint *joints; /* a structure's joint messages, judged before all else */
    size_t njoints;
    /* A map whose keys and values the walk judges (else they are the operations'), in
     * DynamoDB's forms for them: "Map keys must satisfy constraint: [...]" and "Map value
     * must satisfy constraint: [...]" at the map, which they echo as map_echo says; a value
     * that is a structure is judged below "<map>.<key>.member". Keys that are ARNs
     * ("arn:…") are the operations' when arn_keys is set (map_entries). */
    enum { SHAPE_ECHO_NONE, SHAPE_ECHO_JSON, SHAPE_ECHO_JAVA } map_echo;
    int arn_keys;
    /* The fields a structure's echo as Java prints it lists, in order, members or not
     * (NULL-terminated; NULL: its members; java_fields). */
    const char *const *java_fields;
};

typedef struct shape_operation {
    const char *name; /* "PutItem" */
    const shape *input;
    int constraints; /* its constraints are judged here; else by its handler, with the
                        messages and order DynamoDB gives that operation */
} shape_operation;

/* Every operation of the models, sorted by name. */
extern const shape_operation shape_operations[];
extern const size_t shape_noperations;

/* The shape of operation name's input, or NULL when the models have none. */
const shape_operation *shapes_operation(const char *name);

/* Checks req, the request of operation op (NULL: nothing is checked): its types
 * (shapes_check_types), then, if op's constraints are judged here, its constraints
 * (shapes_check_constraints). */
int shapes_check(const shape_operation *op, json_t *req, qr_err *err);

/* Checks that every member of req has the JSON type input says, reading req in order and
 * stopping at the first that has not, as DynamoDB's reader does: then SerializationException
 * with DynamoDB's message for what it found ("NUMBER_VALUE cannot be converted to String").
 * A null member counts as absent, and members the shape does not know are left alone. What
 * DynamoDB's reader converts it converts in req: a boolean's words ("TRUE") to a boolean,
 * a number with a fraction to the integer below it where an integer is expected. */
int shapes_check_types(const shape *input, json_t *req, qr_err *err);

/* Checks req (its types checked) against the constraints of input: required members,
 * lengths, patterns, enum values, numeric ranges, list and map sizes, reporting all it
 * breaks in one ValidationException, "N validation errors detected: Value '…' at '…'
 * failed to satisfy constraint: …; …". Shapes marked handler_judges are skipped. req is
 * judged against input's variant when variant_member is left out. In order: its members'
 * own absent and empty messages, its joint messages, its members judged alone before the
 * rest, the rest together (or one member at a time; AMONG words where others are listed),
 * its members' own length and enum messages, then its members judged alone after the rest;
 * the first of these that finds anything answers. */
int shapes_check_constraints(const shape *input, const json_t *req, qr_err *err);

#endif
