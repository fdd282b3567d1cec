/* params.c — reading and checking request parameters, with DynamoDB's messages.
 *
 * DynamoDB reports a parameter of the wrong JSON type as a SerializationException and a
 * value outside its constraints as "1 validation error detected: Value 'x' at 'field'
 * failed to satisfy constraint: Member must …", naming the field in lowerCamel case. */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "model/value.h"
#include "ops/ops.h"

int param_null(const char *field, qr_err *err)
{
    return err_not_null(err, "%s", field);
}

const char *param_field(const char *key, char *out, size_t cap)
{
    if (cap == 0) return out;
    size_t n = strnlen(key, cap - 1);
    memcpy(out, key, n);
    out[n] = '\0';
    if (out[0]) out[0] = (char)tolower((unsigned char)out[0]);
    return out;
}

/* A parameter of the wrong JSON type, worded as DynamoDB's reader words it (the request
 * checker has refused it already where the operation's shape names it). */
static int wrong_type(const json_t *v, wire_type want, qr_err *err)
{
    if (value_wire_check(v, want, 1, NULL, err) == 0)
        err_set(err, QR_E_SERIALIZATION, "Unexpected field type");
    return -1;
}

/* Whether the parameter field takes a table's ARN as well as its name: a TableName
 * ("tableName", or a member's "….tableName"). The ListTables cursor, a restore's target
 * and BatchGetItem/BatchWriteItem map keys take names only. */
static int takes_arn(const char *field)
{
    size_t n = strlen(field);
    return strcmp(field, "tableName") == 0 || strcmp(field, "sourceTableArn") == 0 ||
           (n > 10 && strcmp(field + n - 10, ".tableName") == 0);
}

/* The pattern a table name must match, as DynamoDB names it. */
#define TABLE_NAME_PATTERN "[a-zA-Z0-9_.-]+"

/* s as a table name's messages echo it: its first 700 bytes. Returns out. */
static const char *echo(char *out, size_t cap, const char *s)
{
    snprintf(out, cap < 701 ? cap : 701, "%s", s);
    return out;
}

/* A table's ARN given for its name, "arn:aws:dynamodb:REGION:ACCOUNT:table/NAME": when it
 * names a table of this account, in quarry's region or the call's own, v becomes NAME
 * (DynamoDB answers with the bare name, and names it when the table is missing). *arn is
 * set when v was an ARN; anything else starting "arn:" fails the name pattern. */
static int resolve_arn(json_t *v, const char *field, int *arn, qr_err *err)
{
    const char *s = json_string_value(v);
    arn_parts a;
    *arn = 0;
    if (strncmp(s, "arn:", 4) != 0) return 0;
    if (arn_split(s, &a) || !arn_is(a.partition, a.partition_len, "aws") ||
        !arn_is(a.service, a.service_len, "dynamodb") || a.table == NULL || a.sub ||
        a.table_len == 0 || a.table[a.table_len] != '\0')
        return err_violation(err, s, field, QR_MSG_PATTERN, TABLE_NAME_PATTERN);
    if (!arn_is(a.region, a.region_len, "ddblocal") &&
        !arn_is(a.region, a.region_len, ops_request_region()))
        return err_validation(err, "1 validation error detected: Invalid AWS region in '%s'", s);
    if (!arn_is(a.account, a.account_len, QR_ACCOUNT))
        return err_set(err, "AccessDeniedException", "Access is denied");
    *arn = 1;
    json_string_set(v, a.table);
    return 0;
}

/* Checks a table name's length (from min to 255) and characters, reporting both when
 * both fail (the ListTables cursor lists the pattern first, as DynamoDB does); DynamoDB
 * echoes the whole name in its messages. Where a TableName is read, a table's ARN (at
 * most 1024 characters) is taken for the name it ends in: v is rewritten to that name,
 * so the caller reads the bare name from it. */
static int check_table_name(json_t *v, const char *field, size_t min, qr_err *err)
{
    char shown[701];
    if (v == NULL) return param_null(field, err);
    if (!json_is_string(v)) return wrong_type(v, WIRE_STRING, err);
    if (takes_arn(field)) {
        if (json_string_length(v) > 1024)
            return err_violation(err, echo(shown, sizeof shown, json_string_value(v)), field,
                                 QR_MSG_LENGTH_AT_MOST, 1024LL);
        int arn;
        if (resolve_arn(v, field, &arn, err)) return -1;
        if (arn) min = 3; /* an ARN names a table, and tables have names of 3 or more characters */
    }
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    char length[900] = "", pattern[900] = "";
    if (n < min)
        err_violation_text(length, sizeof length, s, field, QR_MSG_LENGTH_AT_LEAST, (long long)min);
    if (n > 255)
        err_violation_text(length, sizeof length, echo(shown, sizeof shown, s), field,
                           QR_MSG_LENGTH_AT_MOST, 255LL);
    int bad_char = n == 0 && min > 1; /* the pattern asks for one character or more */
    for (size_t i = 0; i < n && !bad_char; i++) {
        char c = s[i];
        bad_char = !(isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.');
    }
    if (bad_char)
        err_violation_text(pattern, sizeof pattern, echo(shown, sizeof shown, s), field,
                           QR_MSG_PATTERN, TABLE_NAME_PATTERN);
    member_errors m;
    member_errors_init(&m);
    int pattern_first = strcmp(field, "exclusiveStartTableName") == 0;
    if (pattern_first && *pattern) member_errors_add(&m, pattern);
    if (*length) member_errors_add(&m, length);
    if (!pattern_first && *pattern) member_errors_add(&m, pattern);
    return member_errors_finish(&m, err);
}

int param_check_table_name(json_t *v, const char *field, qr_err *err)
{
    return check_table_name(v, field, 3, err);
}

int param_table(qr_db *db, json_t *req, const char *key, table **out, qr_err *err)
{
    char field[64];
    json_t *v = json_object_get(req, key);
    /* The item operations take any name of at least one character: a shorter name than
     * CreateTable allows names no table. */
    if (check_table_name(v, param_field(key, field, sizeof field), 1, err)) return -1;
    *out = ops_table_get(db, json_string_value(v));
    if (*out == NULL) return err_set(err, QR_E_NOT_FOUND, QR_MSG_NOT_FOUND);
    return 0;
}

int param_optional_table_name(json_t *req, const char **out, qr_err *err)
{
    json_t *v = json_object_get(req, "TableName");
    *out = NULL;
    if (v == NULL || json_is_null(v)) return 0;
    if (!json_is_string(v)) return wrong_type(v, WIRE_STRING, err);
    /* The check rewrites an ARN to the name it ends in, so the text is read after it. */
    if (param_check_table_name(v, "tableName", err)) return -1;
    *out = json_string_value(v);
    return 0;
}

int param_string(json_t *req, const char *key, const char **out, qr_err *err)
{
    json_t *v = json_object_get(req, key);
    *out = NULL;
    if (v == NULL || json_is_null(v)) return 0;
    if (!json_is_string(v)) return wrong_type(v, WIRE_STRING, err);
    *out = json_string_value(v);
    return 0;
}

const char *param_text(const json_t *req, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(req, key));
    return s ? s : dflt;
}

int param_enum(json_t *req, const char *key, const char *const *allowed, const char *dflt,
               const char **out, qr_err *err)
{
    const char *s;
    if (param_string(req, key, &s, err)) return -1;
    *out = dflt;
    if (s == NULL) return 0;
    for (size_t i = 0; allowed[i]; i++)
        if (strcmp(s, allowed[i]) == 0) {
            *out = allowed[i];
            return 0;
        }
    char field[64], set[256];
    return err_violation(err, s, param_field(key, field, sizeof field), QR_MSG_ENUM,
                         err_enum_list(set, sizeof set, allowed));
}

int param_bool(json_t *req, const char *key, int dflt, int *out, qr_err *err)
{
    json_t *v = json_object_get(req, key);
    *out = dflt;
    if (v == NULL || json_is_null(v)) return 0;
    json_t *fixed = NULL;
    if (value_wire_check(v, WIRE_BOOLEAN, 1, &fixed, err)) return -1;
    *out = fixed ? json_is_true(fixed) : json_is_true(v);
    json_decref(fixed);
    return 0;
}

int param_int(json_t *req, const char *key, long long min, long long max, long long *out,
              int *present, qr_err *err)
{
    json_t *v = json_object_get(req, key);
    *present = 0;
    if (v == NULL || json_is_null(v)) return 0;
    if (!json_is_number(v)) return wrong_type(v, WIRE_LONG, err);
    long long n = json_is_integer(v) ? json_integer_value(v) : (long long)floor(json_real_value(v));
    char field[64], shown[32];
    snprintf(shown, sizeof shown, "%lld", n);
    if (n < min)
        return err_violation(err, shown, param_field(key, field, sizeof field),
                             QR_MSG_VALUE_AT_LEAST, min);
    if (n > max)
        return err_violation(err, shown, param_field(key, field, sizeof field),
                             QR_MSG_VALUE_AT_MOST, max);
    *out = n;
    *present = 1;
    return 0;
}

int param_object(json_t *req, const char *key, json_t **out, qr_err *err)
{
    json_t *v = json_object_get(req, key);
    *out = NULL;
    if (v == NULL || json_is_null(v)) return 0;
    if (!json_is_object(v)) return wrong_type(v, WIRE_STRUCTURE, err);
    *out = v;
    return 0;
}

int param_array(json_t *req, const char *key, json_t **out, qr_err *err)
{
    json_t *v = json_object_get(req, key);
    *out = NULL;
    if (v == NULL || json_is_null(v)) return 0;
    if (!json_is_array(v)) return wrong_type(v, WIRE_LIST, err);
    *out = v;
    return 0;
}

void member_errors_init(member_errors *m)
{
    buf_init(&m->list, 0);
    m->count = 0;
}

void member_errors_add(member_errors *m, const char *msg)
{
    static const char envelope[] = "1 validation error detected: ";
    if (strncmp(msg, envelope, sizeof envelope - 1) == 0) msg += sizeof envelope - 1;
    if (m->count++) buf_puts(&m->list, "; ");
    buf_puts(&m->list, msg);
}

int member_errors_finish(member_errors *m, qr_err *err)
{
    int n = m->count;
    if (n)
        err_validation(err, "%d validation error%s detected: %s", n, n > 1 ? "s" : "",
                       m->list.data);
    buf_free(&m->list);
    return n ? -1 : 0;
}
