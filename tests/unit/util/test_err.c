/* test_err.c — DynamoDB's words for a broken constraint, formed in one place: each kind of
 * violation text (a value shown, null, or not shown; a length, a value range, an enum, a
 * pattern) and the one-error envelope err_violation puts around it. */
#include <string.h>

#include "util/err.h"

#include "check.h"

int main(void)
{
    char text[QR_ERR_MSG_MAX], set[64];
    static const char *const modes[] = {"INDEXES", "TOTAL", "NONE", NULL};
    CHECK_STR(err_enum_list(set, sizeof set, modes), "INDEXES, TOTAL, NONE");
    CHECK_STR(err_enum_list(set, 12, modes), "INDEXES, TO"); /* cut to fit, ended */
    CHECK_THAT(err_violation_text(text, sizeof text, "BAD", "returnConsumedCapacity", QR_MSG_ENUM,
                                  err_enum_list(set, sizeof set, modes)) == -1);
    CHECK_STR(text, "Value 'BAD' at 'returnConsumedCapacity' failed to satisfy constraint: Member "
                    "must satisfy enum value set: [INDEXES, TOTAL, NONE]");
    err_violation_text(text, sizeof text, NULL, "key", QR_MSG_NOT_NULL);
    CHECK_STR(text, "Value null at 'key' failed to satisfy constraint: Member must not be null");
    err_violation_text(text, sizeof text, err_value_unshown, "statements", QR_MSG_LENGTH_AT_MOST,
                       25LL);
    CHECK_STR(text, "Value at 'statements' failed to satisfy constraint: Member must have length "
                    "less than or equal to 25");
    err_violation_text(text, sizeof text, "", "backupName", QR_MSG_PATTERN, "[a-zA-Z0-9_.-]+");
    CHECK_STR(text, "Value '' at 'backupName' failed to satisfy constraint: Member must satisfy "
                    "regular expression pattern: [a-zA-Z0-9_.-]+");
    err_violation_text(text, 21, "0", "limit", QR_MSG_VALUE_AT_LEAST, 1LL);
    CHECK_STR(text, "Value '0' at 'limit'"); /* cut to the buffer */

    qr_err e;
    err_init(&e);
    CHECK_THAT(err_violation(&e, "[]", "keySchema", QR_MSG_LENGTH_AT_LEAST, 1LL) == -1);
    CHECK_STR(e.type, QR_E_VALIDATION);
    CHECK_STR(e.msg, "1 validation error detected: Value '[]' at 'keySchema' failed to satisfy "
                     "constraint: Member must have length greater than or equal to 1");
    /* the first error set wins */
    err_violation(&e, "0", "limit", QR_MSG_VALUE_AT_LEAST, 1LL);
    CHECK_THAT(strstr(e.msg, "keySchema") != NULL);
    err_clear(&e);
    err_not_null(&e, "requestItems.%s.member.keys", "T");
    CHECK_STR(e.msg, "1 validation error detected: Value null at 'requestItems.T.member.keys' "
                     "failed to satisfy constraint: Member must not be null");
    err_clear(&e);
    return check_report("test_err");
}
