/* test_shapes.c — the generic shape checker's departures from "every violation at once",
 * on small hand-made shapes rather than DynamoDB's: members judged alone before or after
 * the rest, bounds worded without their value, a joint message, a map's keys and values in
 * their own forms (echoed as JSON or as Java prints them, ARN keys left alone), and a
 * length message for a map under its minimum. The operations' own cases are
 * tests/server/cases/, one JSON file each. */
#include <jansson.h>
#include <string.h>

#include "ops/shapes.h"

#include "check.h"

static const char *const modes_enum[] = {"ONE", "TWO", NULL};
static const shape modes = {
    .type = WIRE_STRING, .name = "Modes", .constrained = 1, .enums = modes_enum};
static const shape positive = {
    .type = WIRE_INTEGER, .name = "Positive", .constrained = 1, .has_min = 1, .min = 1};
static const shape name3 = {.type = WIRE_STRING,
                            .name = "Name",
                            .constrained = 1,
                            .has_min = 1,
                            .min = 3,
                            .has_max = 1,
                            .max = 8,
                            .pattern = "[a-z]+",
                            .ere = "^([a-z]+)$"};
static const shape text = {.type = WIRE_STRING, .name = "Text"};
static const shape_member box_members[] = {{"Tag", &text, 0, NULL}};
static const char *const box_fields[] = {"Tag", "Hidden", NULL};
static const shape box = {.type = WIRE_STRUCTURE,
                          .name = "Box",
                          .members = box_members,
                          .nmembers = 1,
                          .java_fields = box_fields};
static const shape_member entry_members[] = {{"Label", &name3, 1, NULL}, {"Box", &box, 0, NULL}};
static const shape entry = {.type = WIRE_STRUCTURE,
                            .name = "Entry",
                            .constrained = 1,
                            .members = entry_members,
                            .nmembers = 2};
static const shape entries = {.type = WIRE_LIST,
                              .name = "Entries",
                              .constrained = 1,
                              .has_min = 1,
                              .min = 1,
                              .has_max = 1,
                              .max = 2,
                              .element = &entry};
static const shape_member held_members[] = {{"Labels", &entries, 1, NULL}};
static const char *const held_unshown[] = {"Labels", NULL};
static const shape held = {.type = WIRE_STRUCTURE,
                           .name = "Held",
                           .constrained = 1,
                           .members = held_members,
                           .nmembers = 1,
                           .unshown = held_unshown};
static const shape by_name_json = {.type = WIRE_MAP,
                                   .name = "ByName",
                                   .constrained = 1,
                                   .has_min = 1,
                                   .min = 1,
                                   .map_echo = SHAPE_ECHO_JSON,
                                   .arn_keys = 1,
                                   .key = &name3,
                                   .element = &held};
static const shape by_name_java = {.type = WIRE_MAP,
                                   .name = "Lists",
                                   .constrained = 1,
                                   .has_min = 1,
                                   .min = 1,
                                   .map_echo = SHAPE_ECHO_JAVA,
                                   .key = &name3,
                                   .element = &entries};

static const shape_member request_members[] = {
    {"Mode", &modes, 0, NULL},
    {"Count", &positive, 0, NULL},
    {"Other", &modes, 0, NULL},
    {"Name", &name3, 0, NULL},
    {"Last", &positive, 0, NULL},
    {"Items", &by_name_json, 0, NULL},
    {"Lists", &by_name_java, 0, "Lists are required"},
};
/* Lists is judged after the rest, as BatchWriteItem's RequestItems is: a member with a
 * length message of its own is otherwise judged by nothing else. */
static const char *const request_before[] = {"Mode", "Count", NULL};
static const char *const request_after[] = {"Last", "Lists", NULL};
static const char *const request_unshown[] = {"Count", "Items", NULL};
static const char *const joint_broken[] = {"Other", "Name", NULL};
static const shape_joint request_joints[] = {{joint_broken, "Items", 2, "Both are wrong"}};
static const shape request = {.type = WIRE_STRUCTURE,
                              .name = "Request",
                              .constrained = 1,
                              .members = request_members,
                              .nmembers = 7,
                              .alone_before = request_before,
                              .alone_after = request_after,
                              .unshown = request_unshown,
                              .joints = request_joints,
                              .njoints = 1};

/* The message the checker answers for the request text (NULL: none). */
static const char *judged(const char *text_json, char *out, size_t cap)
{
    json_t *req = json_loads(text_json, 0, NULL);
    qr_err err;
    err_init(&err);
    int rc = shapes_check_constraints(&request, req, &err);
    snprintf(out, cap, "%s", rc ? err.msg : "");
    err_clear(&err);
    json_decref(req);
    return rc ? out : NULL;
}

#define ONE "1 validation error detected: "

int main(void)
{
    char m[QR_ERR_MSG_MAX];
    CHECK_THAT(judged("{}", m, sizeof m) == NULL);
    /* alone before the rest, in their order, and the first that breaks answered alone */
    CHECK_STR(judged("{\"Count\": 0, \"Mode\": \"X\", \"Name\": \"a\"}", m, sizeof m),
              ONE "Value 'X' at 'mode' failed to satisfy constraint: Member must satisfy enum "
                  "value set: [ONE, TWO]");
    CHECK_STR(judged("{\"Count\": 0, \"Name\": \"a\"}", m, sizeof m),
              ONE "Value at 'Count' failed to satisfy constraint: Member must have value greater "
                  "than or equal to 1");
    /* the rest together, then the members judged after, alone */
    CHECK_STR(judged("{\"Other\": \"X\", \"Name\": \"a\", \"Last\": 0}", m, sizeof m),
              "2 validation errors detected: Value 'X' at 'other' failed to satisfy constraint: "
              "Member must satisfy enum value set: [ONE, TWO]; Value 'a' at 'name' failed to "
              "satisfy constraint: Member must have length greater than or equal to 3");
    CHECK_STR(judged("{\"Last\": 0}", m, sizeof m),
              ONE "Value '0' at 'last' failed to satisfy constraint: Member must have value "
                  "greater than or equal to 1");
    /* a joint message, only beside enough entries */
    CHECK_STR(judged("{\"Other\": \"X\", \"Name\": \"a\", \"Items\": {\"abc\": {\"Labels\": "
                     "[{\"Label\": \"abc\"}]}, \"abd\": {\"Labels\": [{\"Label\": \"abc\"}]}}}",
                     m, sizeof m),
              "Both are wrong");
    /* a map's keys in their form, the map echoed as JSON; an ARN key left alone; a value's
     * members below the map's path as the request spells it */
    CHECK_STR(judged("{\"Items\": {\"A!\": {\"Labels\": [{\"Label\": \"abc\"}]}, \"arn:x\": "
                     "{\"Labels\": []}}}",
                     m, sizeof m),
              "2 validation errors detected: Value '{\"A!\":{\"Labels\":[{\"Label\":\"abc\"}]},"
              "\"arn:x\":{\"Labels\":[]}}' at 'items' failed to satisfy constraint: Map keys must "
              "satisfy constraint: [Member must have length less than or equal to 8, Member must "
              "have length greater than or equal to 3, Member must satisfy regular expression "
              "pattern: [a-z]+]; Value at 'Items.arn:x.member.Labels' failed to satisfy "
              "constraint: Member must have length greater than or equal to 1");
    CHECK_STR(judged("{\"Items\": {}}", m, sizeof m),
              ONE "Value at 'Items' failed to satisfy constraint: Member must have length greater "
                  "than or equal to 1");
    /* a map's values in their form, echoed as Java prints the map, and the lists' elements
     * below "<map>.<key>.member.<n>.member" */
    CHECK_STR(
        judged("{\"Lists\": {\"abc\": [], \"abd\": [{}]}}", m, sizeof m),
        "2 validation errors detected: Value '{abc=[], abd=[Entry(label=null, box=null)]}' at "
        "'lists' failed "
        "to satisfy constraint: Map value must satisfy constraint: [Member must have length less "
        "than or equal to 2, Member must have length greater than or equal to 1]; Value null at "
        "'lists.abd.member.1.member.label' failed to satisfy constraint: Member must not be null");
    /* a map under its minimum with a message of its own: that message alone */
    CHECK_STR(judged("{\"Lists\": {}}", m, sizeof m), "Lists are required");
    /* Java's fields: those a structure names, members or not, null when absent */
    CHECK_STR(judged("{\"Lists\": {\"ab\": [{\"Label\": \"abc\", \"Box\": {\"Tag\": \"t\"}}]}}", m,
                     sizeof m),
              ONE
              "Value '{ab=[Entry(label=abc, box=Box(tag=t, hidden=null))]}' at 'lists' failed to "
              "satisfy constraint: Map keys must satisfy constraint: [Member must have length "
              "less than or equal to 8, Member must have length greater than or equal to 3, "
              "Member must satisfy regular expression pattern: [a-z]+]");
    return check_report("test_shapes");
}
