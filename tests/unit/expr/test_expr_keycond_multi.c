/* test_expr_keycond_multi.c — key conditions on multi-attribute GSI keys (up to four
 * partition-key and four sort-key attributes): KeyConditionExpression and the legacy
 * KeyConditions, accepted forms and their results, DynamoDB's error messages, operand
 * types, unused names and values, ownership, and a randomised run for crashes and leaks
 * (run it under `make SANITIZE=1`). It also checks that the single-attribute functions
 * agree with the multi-attribute ones given a one-attribute schema. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "model/value.h"

static int failures, passed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        } else {                                                                                   \
            passed++;                                                                              \
        }                                                                                          \
    } while (0)

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
    if (j == NULL) {
        fprintf(stderr, "bad JSON in test: %s: %s\n", text, e.text);
        exit(2);
    }
    return j;
}

/* ---- key schemas ---- */
static const expr_key_schema P2 = {.npk = 2, .pk_names = {"h1", "h2"}, .pk_types = {'S', 'N'}};
static const expr_key_schema P3S1 = {.npk = 3,
                                     .nsk = 1,
                                     .pk_names = {"h1", "h2", "h3"},
                                     .pk_types = {'S', 'N', 'B'},
                                     .sk_names = {"s1"},
                                     .sk_types = {'S'}};
static const expr_key_schema P4S4 = {.npk = 4,
                                     .nsk = 4,
                                     .pk_names = {"h1", "h2", "h3", "h4"},
                                     .pk_types = {'S', 'N', 'B', 'S'},
                                     .sk_names = {"s1", "s2", "s3", "s4"},
                                     .sk_types = {'S', 'N', 'B', 'S'}};
static const expr_key_schema P1S3 = {.npk = 1,
                                     .nsk = 3,
                                     .pk_names = {"h1"},
                                     .pk_types = {'S'},
                                     .sk_names = {"s1", "s2", "s3"},
                                     .sk_types = {'S', 'N', 'B'}};

#define VALUES                                                                                     \
    "{\":h1\":{\"S\":\"a\"},\":h2\":{\"N\":\"2\"},\":h3\":{\"B\":\"AQ==\"},\":h4\":{\"S\":\"d\"}," \
    "\":s1\":{\"S\":\"x\"},\":s2\":{\"N\":\"5\"},\":s2b\":{\"N\":\"7\"},\":s3\":{\"B\":\"Ag==\"}," \
    "\":s4\":{\"S\":\"z\"},\":s4b\":{\"S\":\"zz\"},\":n\":{\"N\":\"1\"}}"

/* The four partition-key equalities of P4S4. */
#define PK4 "h1 = :h1 AND h2 = :h2 AND h3 = :h3 AND h4 = :h4"
#define PK4_JSON "\"pk\":[{\"S\":\"a\"},{\"N\":\"2\"},{\"B\":\"AQ==\"},{\"S\":\"d\"}]"

#define MISMATCH                                                                                   \
    "One or more parameter values were invalid: Condition parameter type does not match schema "   \
    "type"
#define RANGE_MSG(a, b)                                                                            \
    "RANGE key attributes " a " must have equality conditions specified in the query because a "   \
    "condition is present on key attribute " b

typedef struct kcase {
    const expr_key_schema *schema;
    const char *expr;   /* a KeyConditionExpression, or NULL for legacy */
    const char *legacy; /* KeyConditions as JSON when expr is NULL */
    const char *values; /* ExpressionAttributeValues (VALUES if NULL) */
    const char *names;  /* ExpressionAttributeNames, or NULL */
    int check_unused;
    const char *want;  /* the result as JSON (see result_json), or NULL */
    const char *error; /* the exact error message, or NULL */
} kcase;

static const char *const op_names[] = {"NONE", "EQ", "LT",      "LE",
                                       "GT",   "GE", "BETWEEN", "BEGINS_WITH"};

/* {"pk":[...],"eq":[...],"op":"GT","v1":...,"v2":...}; "eq", v1 and v2 only when present. */
static json_t *result_json(const expr_keycond_multi *k, int npk)
{
    json_t *j = json_object(), *pk = json_array();
    for (int i = 0; i < npk; i++)
        json_array_append(pk, k->pk_values[i] ? k->pk_values[i] : json_null());
    json_object_set_new(j, "pk", pk);
    if (k->nsk_eq > 0) {
        json_t *eq = json_array();
        for (int i = 0; i < k->nsk_eq; i++)
            json_array_append(eq, k->sk_eq[i]);
        json_object_set_new(j, "eq", eq);
    }
    json_object_set_new(j, "op", json_string(op_names[k->last_op]));
    if (k->last_v1) json_object_set(j, "v1", k->last_v1);
    if (k->last_v2) json_object_set(j, "v2", k->last_v2);
    return j;
}

static void run_case(size_t idx, const kcase *c)
{
    json_t *values = J(c->values ? c->values : VALUES);
    json_t *names = c->names ? J(c->names) : NULL;
    const char *label = c->expr ? c->expr : c->legacy;
    qr_err err;
    err_init(&err);
    const char *key;
    json_t *v;
    json_object_foreach(values, key, v)
    {
        if (value_validate(v, 1, key, &err)) {
            CHECK(0, "case %zu: invalid value in case: %s", idx, err.msg);
            goto out;
        }
    }
    expr_ctx cx;
    expr_ctx_init(&cx, names, values, &err);
    expr_keycond_multi k;
    json_t *conds = c->expr ? NULL : J(c->legacy);
    int rc = c->expr ? expr_parse_key_condition_multi(&cx, c->expr, c->schema, &k)
                     : expr_from_key_conditions_multi(conds, c->schema, &k, &err);
    int parsed = rc == 0;
    if (rc == 0 && c->check_unused) rc = expr_ctx_check_unused(&cx);
    if (c->error) {
        CHECK(rc != 0, "case %zu (%s): expected error \"%s\"", idx, label, c->error);
        if (rc != 0) {
            CHECK(strcmp(err.msg, c->error) == 0, "case %zu (%s):\n   want: %s\n    got: %s", idx,
                  label, c->error, err.msg);
            CHECK(err.type && strcmp(err.type, QR_E_VALIDATION) == 0, "case %zu: error type %s",
                  idx, err.type);
        }
    } else {
        CHECK(rc == 0, "case %zu (%s): unexpected error \"%s\"", idx, label, err.msg);
    }
    if (parsed && c->want) {
        json_t *want = J(c->want), *got = result_json(&k, c->schema->npk);
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        CHECK(json_equal(want, got), "case %zu (%s):\n   want: %s\n    got: %s", idx, label,
              c->want, g);
        free(g);
        json_decref(want);
        json_decref(got);
    }
    if (parsed) expr_keycond_multi_free(&k);
    json_decref(conds);
    expr_ctx_free(&cx);
out:
    err_clear(&err);
    json_decref(values);
    json_decref(names);
}

static const kcase cases[] = {
    /* Two to four partition-key attributes, all given, in any order. */
    {&P2, "h1 = :h1 AND h2 = :h2",
     .want = "{\"pk\":[{\"S\":\"a\"},{\"N\":\"2\"}],\"op\":\"NONE\"}"},
    {&P2, ":h2 = h2 AND (h1 = :h1)",
     .want = "{\"pk\":[{\"S\":\"a\"},{\"N\":\"2\"}],\"op\":\"NONE\"}"},
    {&P3S1, "h3 = :h3 AND h1 = :h1 AND h2 = :h2",
     .want = "{\"pk\":[{\"S\":\"a\"},{\"N\":\"2\"},{\"B\":\"AQ==\"}],\"op\":\"NONE\"}"},
    {&P4S4, PK4, .want = "{" PK4_JSON ",\"op\":\"NONE\"}"},
    {&P4S4, "h4 = :h4 AND h2 = :h2 AND h1 = :h1 AND h3 = :h3",
     .want = "{" PK4_JSON ",\"op\":\"NONE\"}"},
    /* A missing partition-key attribute: the first missing one in schema order. */
    {&P2, "h1 = :h1", .error = "Query condition missed key schema element: h2"},
    {&P2, "h2 = :h2", .error = "Query condition missed key schema element: h1"},
    {&P3S1, "h1 = :h1 AND h3 = :h3 AND s1 = :s1",
     .error = "Query condition missed key schema element: h2"},
    {&P4S4, "h1 = :h1 AND h2 = :h2 AND h3 = :h3 AND s1 = :s1",
     .error = "Query condition missed key schema element: h4"},
    {&P4S4, "s1 = :s1", .error = "Query condition missed key schema element: h1"},
    /* Partition-key attributes take only equality. */
    {&P2, "h1 = :h1 AND h2 > :h2", .error = "Query key condition not supported"},
    {&P4S4, "h1 = :h1 AND h2 = :h2 AND begins_with(h4, :h4) AND h3 = :h3",
     .error = "Query key condition not supported"},
    {&P3S1, "h1 = :h1 AND h2 BETWEEN :h2 AND :h2 AND h3 = :h3",
     .error = "Query key condition not supported"},
    /* Zero to four sort-key attributes: equalities, then one range at the end. */
    {&P4S4, PK4 " AND s1 = :s1", .want = "{" PK4_JSON ",\"eq\":[{\"S\":\"x\"}],\"op\":\"NONE\"}"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2",
     .want = "{" PK4_JSON ",\"eq\":[{\"S\":\"x\"},{\"N\":\"5\"}],\"op\":\"NONE\"}"},
    {&P4S4, "s2 = :s2 AND s4 = :s4 AND " PK4 " AND s3 = :s3 AND s1 = :s1",
     .want = "{" PK4_JSON ",\"eq\":[{\"S\":\"x\"},{\"N\":\"5\"},{\"B\":\"Ag==\"},{\"S\":\"z\"}],"
             "\"op\":\"NONE\"}"},
    {&P4S4, PK4 " AND s1 > :s1", .want = "{" PK4_JSON ",\"op\":\"GT\",\"v1\":{\"S\":\"x\"}}"},
    {&P4S4, PK4 " AND :s1 < s1", .want = "{" PK4_JSON ",\"op\":\"GT\",\"v1\":{\"S\":\"x\"}}"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 BETWEEN :s2 AND :s2b",
     .want = "{" PK4_JSON ",\"eq\":[{\"S\":\"x\"}],\"op\":\"BETWEEN\",\"v1\":{\"N\":\"5\"},"
             "\"v2\":{\"N\":\"7\"}}"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2 AND s3 <= :s3",
     .want = "{" PK4_JSON ",\"eq\":[{\"S\":\"x\"},{\"N\":\"5\"}],\"op\":\"LE\","
             "\"v1\":{\"B\":\"Ag==\"}}"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2 AND begins_with(s3, :s3)",
     .want = "{" PK4_JSON ",\"eq\":[{\"S\":\"x\"},{\"N\":\"5\"}],\"op\":\"BEGINS_WITH\","
             "\"v1\":{\"B\":\"Ag==\"}}"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2 AND s3 = :s3 AND s4 BETWEEN :s4 AND :s4b",
     .want = "{" PK4_JSON ",\"eq\":[{\"S\":\"x\"},{\"N\":\"5\"},{\"B\":\"Ag==\"}],"
             "\"op\":\"BETWEEN\",\"v1\":{\"S\":\"z\"},\"v2\":{\"S\":\"zz\"}}"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2 AND s3 = :s3 AND begins_with(s4, :s4)",
     .want = "{" PK4_JSON ",\"eq\":[{\"S\":\"x\"},{\"N\":\"5\"},{\"B\":\"Ag==\"}],"
             "\"op\":\"BEGINS_WITH\",\"v1\":{\"S\":\"z\"}}"},
    {&P1S3, "h1 = :h1 AND s1 = :s1 AND s2 >= :s2",
     .want = "{\"pk\":[{\"S\":\"a\"}],\"eq\":[{\"S\":\"x\"}],\"op\":\"GE\",\"v1\":{\"N\":\"5\"}}"},
    {&P1S3, "h1 = :h1 AND s1 < :s1",
     .want = "{\"pk\":[{\"S\":\"a\"}],\"op\":\"LT\",\"v1\":{\"S\":\"x\"}}"},
    /* A skipped sort-key attribute. */
    {&P4S4, PK4 " AND s2 = :s2", .error = RANGE_MSG("s1", "s2")},
    {&P4S4, PK4 " AND s1 = :s1 AND s3 = :s3", .error = RANGE_MSG("s2", "s3")},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2 AND s4 > :s4", .error = RANGE_MSG("s3", "s4")},
    {&P1S3, "h1 = :h1 AND begins_with(s3, :s3)", .error = RANGE_MSG("s1", "s3")},
    /* A range before an equality, or before another range. */
    {&P4S4, PK4 " AND s1 > :s1 AND s2 = :s2", .error = RANGE_MSG("s1", "s2")},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 >= :s2 AND s3 = :s3 AND s4 = :s4",
     .error = RANGE_MSG("s2", "s3")},
    {&P1S3, "h1 = :h1 AND begins_with(s1, :s1) AND s2 < :s2", .error = RANGE_MSG("s1", "s2")},
    {&P1S3, "h1 = :h1 AND s2 < :s2 AND s1 BETWEEN :s1 AND :s1", .error = RANGE_MSG("s1", "s2")},
    /* Type mismatches: each attribute against its own type. */
    {&P2, "h1 = :h1 AND h2 = :h1", .error = MISMATCH},
    {&P2, "h1 = :n AND h2 = :h2", .error = MISMATCH},
    {&P3S1, "h1 = :h1 AND h2 = :h2 AND h3 = :h4", .error = MISMATCH},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s1", .error = MISMATCH},
    {&P4S4, PK4 " AND s1 = :s2", .error = MISMATCH},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2 AND s3 BETWEEN :s2 AND :s2b", .error = MISMATCH},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2 AND begins_with(s3, :s4)", .error = MISMATCH},
    {&P4S4, PK4 " AND s1 = :s1 AND begins_with(s2, :s2)",
     .error = "Invalid KeyConditionExpression: Incorrect operand type for operator or function; "
              "operator or function: begins_with, operand type: N"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 BETWEEN :s2b AND :s2",
     .error = "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be "
              "greater than or equal to lower bound; lower bound operand: AttributeValue: {N:7}, "
              "upper bound operand: AttributeValue: {N:5}"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 BETWEEN :s2 AND :s1",
     .error = "Invalid KeyConditionExpression: The BETWEEN operator requires same data type for "
              "lower and upper bounds; lower bound operand: AttributeValue: {N:5}, upper bound "
              "operand: AttributeValue: {S:x}"},
    /* Conditions outside the key, and the operators and forms a key condition refuses. */
    {&P4S4, PK4 " AND s1 = :s1 AND x = :n",
     .error = "Query condition missed key schema element: s2"},
    {&P2, "h1 = :h1 AND h2 = :h2 AND x = :n",
     .error = "The number of query conditions (3) exceeds the number of key attributes defined in "
              "the schema (2)"},
    {&P3S1, "h1 = :h1 AND h2 = :h2 AND h3 = :h3 AND s1 = :s1 AND x = :n",
     .error = "Query condition missed key schema element: h1"},
    {&P4S4, PK4 " AND s1 = :s1 AND s2 = :s2 AND s3 = :s3 AND s4 = :s4 AND x = :n",
     .error = "Query condition missed key schema element: h1"},
    {&P2, "h1 = :h1 AND h2 = :h2 AND h1 = :h1",
     .error = "Invalid KeyConditionExpression: KeyConditionExpressions must only contain one "
              "condition per key"},
    {&P2, "h1 = :h1 OR h2 = :h2", .error = "Invalid operator used in KeyConditionExpression: OR"},
    {&P4S4, PK4 " AND s1 <> :s1", .error = "Invalid operator used in KeyConditionExpression: <>"},
    {&P2, "h1.x = :h1 AND h2 = :h2",
     .error = "KeyConditionExpressions cannot have conditions on nested attributes"},
    /* Names and values, used, undefined and unused, through expr_ctx. */
    {&P2, "#a = :h1 AND #b = :h2", .names = "{\"#a\":\"h1\",\"#b\":\"h2\"}",
     .values = "{\":h1\":{\"S\":\"a\"},\":h2\":{\"N\":\"2\"}}", .check_unused = 1,
     .want = "{\"pk\":[{\"S\":\"a\"},{\"N\":\"2\"}],\"op\":\"NONE\"}"},
    {&P2, "h1 = :h1 AND h2 = :zz",
     .error = "Invalid KeyConditionExpression: An expression attribute value used in expression "
              "is not defined; attribute value: :zz"},
    {&P2, "h1 = :h1 AND h2 = :h2",
     .values = "{\":h1\":{\"S\":\"a\"},\":h2\":{\"N\":\"2\"},"
               "\":zz\":{\"S\":\"q\"}}",
     .check_unused = 1,
     .error = "Value provided in ExpressionAttributeValues unused in expressions: keys: {:zz}"},
    {&P2, "#a = :h1 AND h2 = :h2", .names = "{\"#a\":\"h1\",\"#u\":\"h2\"}",
     .values = "{\":h1\":{\"S\":\"a\"},\":h2\":{\"N\":\"2\"}}", .check_unused = 1,
     .error = "Value provided in ExpressionAttributeNames unused in expressions: keys: {#u}"},

    /* The legacy KeyConditions. */
    {&P2, NULL,
     "{\"h2\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"N\":\"2\"}]},"
     "\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]}}",
     .want = "{\"pk\":[{\"S\":\"a\"},{\"N\":\"2\"}],\"op\":\"NONE\"}"},
    {&P2, NULL, "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]}}",
     .error = "Query condition missed key schema element: h2"},
    {&P2, NULL, "{}", .error = "Conditions can be of length 1 or 2 only"},
    {&P3S1, NULL, "{}", .error = "Query condition missed key schema element: h1"},
    {&P1S3, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"s1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"x\"}]},"
     "\"s2\":{\"ComparisonOperator\":\"BETWEEN\",\"AttributeValueList\":[{\"N\":\"1\"},{\"N\":"
     "\"9\"}]}}",
     .want = "{\"pk\":[{\"S\":\"a\"}],\"eq\":[{\"S\":\"x\"}],\"op\":\"BETWEEN\","
             "\"v1\":{\"N\":\"1\"},\"v2\":{\"N\":\"9\"}}"},
    {&P1S3, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"s1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"x\"}]},"
     "\"s2\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"N\":\"1\"}]},"
     "\"s3\":{\"ComparisonOperator\":\"BEGINS_WITH\",\"AttributeValueList\":[{\"B\":\"Ag==\"}]}}",
     .want = "{\"pk\":[{\"S\":\"a\"}],\"eq\":[{\"S\":\"x\"},{\"N\":\"1\"}],\"op\":\"BEGINS_WITH\","
             "\"v1\":{\"B\":\"Ag==\"}}"},
    {&P1S3, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"s2\":{\"ComparisonOperator\":\"GT\",\"AttributeValueList\":[{\"N\":\"1\"}]}}",
     .error = RANGE_MSG("s1", "s2")},
    {&P1S3, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"s1\":{\"ComparisonOperator\":\"GE\",\"AttributeValueList\":[{\"S\":\"x\"}]},"
     "\"s2\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"N\":\"1\"}]}}",
     .error = RANGE_MSG("s1", "s2")},
    {&P1S3, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"s1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"N\":\"1\"}]}}",
     .error = MISMATCH},
    {&P1S3, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"s1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"x\"}]},"
     "\"s2\":{\"ComparisonOperator\":\"BETWEEN\",\"AttributeValueList\":[{\"N\":\"9\"},{\"N\":"
     "\"1\"}]}}",
     .error = "The BETWEEN condition was provided a range where the lower bound is greater than "
              "the upper bound"},
    {&P1S3, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"s1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"x\"}]},"
     "\"s2\":{\"ComparisonOperator\":\"BEGINS_WITH\",\"AttributeValueList\":[{\"N\":\"1\"}]}}",
     .error = "One or more parameter values were invalid: ComparisonOperator BEGINS_WITH is not "
              "valid for N AttributeValue type"},
    {&P1S3, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"s1\":{\"ComparisonOperator\":\"NE\",\"AttributeValueList\":[{\"S\":\"x\"}]}}",
     .error = "Attempted conditional constraint is not an indexable operation"},
    {&P2, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"h2\":{\"ComparisonOperator\":\"LT\",\"AttributeValueList\":[{\"N\":\"2\"}]}}",
     .error = "Query key condition not supported"},
    {&P3S1, NULL,
     "{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
     "\"h2\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"N\":\"2\"}]},"
     "\"h3\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"B\":\"AQ==\"}]},"
     "\"x\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"q\"}]}}",
     .error = "Query condition missed key schema element: s1"},
    {&P2, NULL, "[]", .error = "KeyConditions must be a map"},
};

/* The single-attribute functions give the same result and message as the multi-attribute
 * ones given the equivalent one-attribute schema. */
static void test_single_agrees(void)
{
    static const char *const exprs[] = {"pk = :p",
                                        "pk = :p AND sk = :n",
                                        "pk = :p AND sk < :n",
                                        ":n >= sk AND pk = :p",
                                        "pk = :p AND sk BETWEEN :n AND :n5",
                                        "pk = :p AND begins_with(sk, :s)",
                                        "sk = :n",
                                        "pk > :p",
                                        "pk = :p AND extra = :n",
                                        "pk = :n",
                                        "pk = :p AND sk = :s",
                                        "pk = :p AND sk BETWEEN :n5 AND :n",
                                        "pk = :p AND pk = :p",
                                        ":p = pk and sk = :n and :n = c",
                                        "pk = :p OR sk = :n",
                                        "pk = :zz",
                                        ""};
    static const char *const legacy[] = {
        "{\"pk\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]}}",
        "{\"pk\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
        "\"sk\":{\"ComparisonOperator\":\"GE\",\"AttributeValueList\":[{\"N\":\"1\"}]}}",
        "{\"sk\":{\"ComparisonOperator\":\"GE\",\"AttributeValueList\":[{\"N\":\"1\"}]}}",
        "{}",
        "{\"a\":{\"ComparisonOperator\":\"NULL\"},\"b\":{\"ComparisonOperator\":\"NULL\"},"
        "\"c\":{\"ComparisonOperator\":\"NULL\"}}",
        "{\"pk\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]},"
        "\"x\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"N\":\"1\"}]}}"};
    json_t *values = J("{\":p\":{\"S\":\"a\"},\":n\":{\"N\":\"1\"},\":n5\":{\"N\":\"5\"},"
                       "\":s\":{\"S\":\"x\"}}");
    for (int with_sk = 0; with_sk <= 1; with_sk++) {
        const char *sk = with_sk ? "sk" : NULL;
        char skt = with_sk ? 'N' : 'S';
        expr_key_schema s = {.npk = 1,
                             .nsk = with_sk,
                             .pk_names = {"pk"},
                             .pk_types = {'S'},
                             .sk_names = {sk},
                             .sk_types = {skt}};
        for (size_t i = 0; i < sizeof exprs / sizeof exprs[0] + sizeof legacy / sizeof legacy[0];
             i++) {
            int is_expr = i < sizeof exprs / sizeof exprs[0];
            const char *in = is_expr ? exprs[i] : legacy[i - sizeof exprs / sizeof exprs[0]];
            qr_err e1, e2;
            err_init(&e1);
            err_init(&e2);
            expr_ctx c1, c2;
            expr_ctx_init(&c1, NULL, values, &e1);
            expr_ctx_init(&c2, NULL, values, &e2);
            json_t *conds = is_expr ? NULL : J(in);
            expr_keycond k1;
            expr_keycond_multi k2;
            int r1 = is_expr ? expr_parse_key_condition(&c1, in, "pk", 'S', sk, skt, &k1)
                             : expr_from_key_conditions(conds, "pk", 'S', sk, skt, &k1, &e1);
            int r2 = is_expr ? expr_parse_key_condition_multi(&c2, in, &s, &k2)
                             : expr_from_key_conditions_multi(conds, &s, &k2, &e2);
            CHECK(r1 == r2, "single/multi disagree on %s (sk %d): %d %d", in, with_sk, r1, r2);
            if (r1 && r2)
                CHECK(strcmp(e1.msg, e2.msg) == 0, "messages differ on %s: %s / %s", in, e1.msg,
                      e2.msg);
            if (r1 == 0 && r2 == 0) {
                expr_key_op op = k2.nsk_eq ? EXPR_KEY_EQ : k2.last_op;
                json_t *v1 = k2.nsk_eq ? k2.sk_eq[0] : k2.last_v1;
                CHECK(json_equal(k1.pk_value, k2.pk_values[0]) && k1.sk_op == op &&
                          (k1.sk_value1 == v1 || json_equal(k1.sk_value1, v1)) &&
                          (k1.sk_value2 == k2.last_v2 || json_equal(k1.sk_value2, k2.last_v2)),
                      "results differ on %s", in);
            }
            if (r1 == 0) expr_keycond_free(&k1);
            if (r2 == 0) expr_keycond_multi_free(&k2);
            json_decref(conds);
            expr_ctx_free(&c1);
            expr_ctx_free(&c2);
            err_clear(&e1);
            err_clear(&e2);
        }
    }
    json_decref(values);
}

/* The result holds its own references; freeing twice is harmless. A bad schema is an
 * internal error, never a crash. */
static void test_ownership_and_bad_schema(void)
{
    qr_err err;
    err_init(&err);
    json_t *values = J(VALUES);
    expr_ctx cx;
    expr_ctx_init(&cx, NULL, values, &err);
    expr_keycond_multi k;
    CHECK(expr_parse_key_condition_multi(&cx, PK4 " AND s1 = :s1 AND s2 BETWEEN :s2 AND :s2b",
                                         &P4S4, &k) == 0,
          "%s", err.msg);
    expr_ctx_free(&cx);
    json_decref(values);
    CHECK(k.nsk_eq == 1 && k.last_op == EXPR_KEY_BETWEEN, "shape");
    CHECK(strcmp(json_string_value(json_object_get(k.pk_values[3], "S")), "d") == 0, "pk 4");
    CHECK(strcmp(json_string_value(json_object_get(k.last_v2, "N")), "7") == 0, "upper bound");
    expr_keycond_multi_free(&k);
    CHECK(k.pk_values[0] == NULL && k.nsk_eq == 0 && k.last_op == EXPR_KEY_NONE, "free resets");
    expr_keycond_multi_free(&k);
    expr_keycond_multi_free(NULL);

    values = J(VALUES);
    expr_key_schema bad[3] = {{.npk = 0}, {.npk = 5}, {.npk = 1, .nsk = 1, .pk_names = {"h1"}}};
    for (int i = 0; i <= 3; i++) {
        err_clear(&err);
        err_init(&err);
        expr_ctx_init(&cx, NULL, values, &err);
        const expr_key_schema *s = i < 3 ? &bad[i] : NULL;
        CHECK(expr_parse_key_condition_multi(&cx, "h1 = :h1", s, &k) != 0, "bad schema %d", i);
        CHECK(err.type && strcmp(err.type, QR_E_INTERNAL) == 0, "bad schema %d: %s", i, err.type);
        expr_ctx_free(&cx);
        err_clear(&err);
        err_init(&err);
        json_t *conds =
            J("{\"h1\":{\"ComparisonOperator\":\"EQ\",\"AttributeValueList\":[{\"S\":\"a\"}]}}");
        CHECK(expr_from_key_conditions_multi(conds, s, &k, &err) != 0, "bad schema %d (legacy)", i);
        json_decref(conds);
    }
    err_clear(&err);
    json_decref(values);
}

/* Random conjunctions over the key attributes of P4S4 and a stranger: never a crash or
 * leak, and whatever is accepted obeys the rules. */
static void test_random(void)
{
    static const char *const attrs[] = {"h1", "h2", "h3", "h4", "s1", "s2", "s3", "s4", "x"};
    static const char *const vals[] = {":h1",  ":h2", ":h3", ":h4",  ":s1", ":s2",
                                       ":s2b", ":s3", ":s4", ":s4b", ":n",  ":zz"};
    json_t *values = J(VALUES);
    unsigned seed = 12345;
    int accepted = 0;
    for (int round = 0; round < 5000; round++) {
        /* Half the rounds start from the partition key, so that some are accepted. */
        char text[1024] = "";
        if (round % 2) strcpy(text, PK4);
        int nconds = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 10 + (round % 2 ? 0 : 1);
        for (int c = 0; c < nconds; c++) {
            seed = seed * 1103515245u + 12345u;
            const char *a = attrs[(seed >> 16) % 9];
            seed = seed * 1103515245u + 12345u;
            const char *v = vals[(seed >> 16) % 12];
            seed = seed * 1103515245u + 12345u;
            const char *w = vals[(seed >> 8) % 12];
            char part[128];
            switch ((seed >> 20) % 6) {
            case 0:
            case 1:
            case 2:
                snprintf(part, sizeof part, "%s = %s", a, v);
                break;
            case 3:
                snprintf(part, sizeof part, "%s > %s", a, v);
                break;
            case 4:
                snprintf(part, sizeof part, "%s BETWEEN %s AND %s", a, v, w);
                break;
            default:
                snprintf(part, sizeof part, "begins_with(%s, %s)", a, v);
                break;
            }
            if (text[0]) strcat(text, " AND ");
            strcat(text, part);
        }
        qr_err err;
        err_init(&err);
        expr_ctx cx;
        expr_ctx_init(&cx, NULL, values, &err);
        expr_keycond_multi k;
        if (expr_parse_key_condition_multi(&cx, text, &P4S4, &k) == 0) {
            accepted++;
            int ok = k.nsk_eq + (k.last_op != EXPR_KEY_NONE) <= 4 && k.last_op != EXPR_KEY_EQ;
            for (int i = 0; i < 4; i++)
                ok = ok && k.pk_values[i] != NULL;
            CHECK(ok, "accepted %s with a bad shape", text);
            expr_keycond_multi_free(&k);
        } else {
            CHECK(err.msg[0] != '\0', "rejected %s without a message", text);
        }
        expr_ctx_free(&cx);
        err_clear(&err);
    }
    CHECK(accepted > 0, "random run accepted nothing");
    printf("random run: %d of 5000 conditions accepted\n", accepted);
    json_decref(values);
}

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(i, &cases[i]);
    test_single_agrees();
    test_ownership_and_bad_schema();
    test_random();
    if (failures) {
        fprintf(stderr, "test_expr_keycond_multi: %d failures (%d checks passed)\n", failures,
                passed);
        return 1;
    }
    printf("test_expr_keycond_multi: %d checks passed\n", passed);
    return 0;
}
