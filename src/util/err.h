/* err.h — the error a request carries: DynamoDB's error type and a message.
 *
 * Every fallible function in quarry returns an int (0 = ok, -1 = failed) and records
 * why in a qr_err. The first error set wins, as in SQLite's parse context, so deep
 * code can report precisely and callers need not overwrite it. The type is one of the
 * QR_E_* names below (DynamoDB's short __type names); the HTTP status follows from it. */
#ifndef QR_ERR_H
#define QR_ERR_H

#include <stddef.h>

#define QR_E_VALIDATION "ValidationException"
#define QR_E_SERIALIZATION "SerializationException"
#define QR_E_NOT_FOUND "ResourceNotFoundException"
#define QR_E_IN_USE "ResourceInUseException"
#define QR_E_CONDITION "ConditionalCheckFailedException"
#define QR_E_UNKNOWN_OP "UnknownOperationException"
#define QR_E_LIMIT "LimitExceededException"
#define QR_E_THROUGHPUT "ProvisionedThroughputExceededException"
#define QR_E_THROTTLING "ThrottlingException"
#define QR_E_REQUEST_LIMIT "RequestLimitExceeded"
#define QR_E_TXN_CANCELED "TransactionCanceledException"
#define QR_E_TXN_CONFLICT "TransactionConflictException"
#define QR_E_TXN_IN_PROGRESS "TransactionInProgressException"
#define QR_E_IDEMPOTENT "IdempotentParameterMismatchException"
#define QR_E_COLLECTION_SIZE "ItemCollectionSizeLimitExceededException"
#define QR_E_INTERNAL "InternalServerError"

#define QR_ERR_MSG_MAX 1024

typedef struct qr_err {
    const char *type;         /* NULL while no error; else a QR_E_* string (static) */
    char msg[QR_ERR_MSG_MAX]; /* human-readable message naming the problem */
    void *item;               /* optional json_t* (owned) attached to the error, e.g. the
                                 item for ReturnValuesOnConditionCheckFailure; NULL if none */
} qr_err;

/* Starts a qr_err with no error. */
void err_init(qr_err *e);

/* Records an error unless one is already recorded. Always returns -1 so callers can
 * write `return err_set(e, QR_E_VALIDATION, "...", ...);`. */
int err_set(qr_err *e, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Shorthand for a ValidationException. Returns -1. */
int err_validation(qr_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* DynamoDB's words for the constraints a member breaks, the one place each is spelled:
 * the text after "failed to satisfy constraint: ". The bounds are long longs; the enum's
 * set is its values listed by err_enum_list. */
#define QR_MSG_NOT_NULL "Member must not be null"
#define QR_MSG_LENGTH_AT_LEAST "Member must have length greater than or equal to %lld"
#define QR_MSG_LENGTH_AT_MOST "Member must have length less than or equal to %lld"
#define QR_MSG_VALUE_AT_LEAST "Member must have value greater than or equal to %lld"
#define QR_MSG_VALUE_AT_MOST "Member must have value less than or equal to %lld"
#define QR_MSG_ENUM "Member must satisfy enum value set: [%s]"
#define QR_MSG_PATTERN "Member must satisfy regular expression pattern: %s"
#define QR_MSG_LENGTH_BETWEEN "Member must have length between %lld and %lld"
/* A constraint reported without the member's value or path, as DynamoDB reports some
 * among others: QR_MSG_UNPLACED then the constraint. */
#define QR_MSG_UNPLACED "Failed to satisfy constraint: "
/* Constraints on every element of a list, the keys of a map or its values: the brackets
 * hold the element's constraints (QR_MSG_* texts joined by QR_MSG_AND, in the order
 * DynamoDB lists them). */
#define QR_MSG_AND ", "
#define QR_MSG_EVERY_MEMBER(constraints) "Member must satisfy constraint: [" constraints "]"
#define QR_MSG_MAP_KEYS(constraints) "Map keys must satisfy constraint: [" constraints "]"
#define QR_MSG_MAP_VALUE(constraints) "Map value must satisfy constraint: [" constraints "]"

/* DynamoDB's texts for the mistakes several operations (and their batch, transaction and
 * PartiQL forms) report, the one place each is spelled. A "%s" is the name the text
 * carries (table, stream, resource ARN; an index then its table). */
#define QR_MSG_NOT_FOUND "Requested resource not found"
#define QR_MSG_TABLE_NOT_FOUND QR_MSG_NOT_FOUND ": Table: %s not found"
#define QR_MSG_STREAM_NOT_FOUND QR_MSG_NOT_FOUND ": Stream: %s not found"
#define QR_MSG_SHARD_NOT_FOUND QR_MSG_NOT_FOUND ": Shard does not exist"
#define QR_MSG_ARN_NOT_FOUND QR_MSG_NOT_FOUND ": ResourceArn: %s not found"
#define QR_MSG_INDEX_NOT_FOUND QR_MSG_NOT_FOUND ": Index: %s not found for table: %s"
/* UpdateTable's words for an index update naming no index of the table, which DynamoDB
 * spells unlike the other operations' QR_MSG_INDEX_NOT_FOUND. */
#define QR_MSG_INDEX_UPDATE_NOT_FOUND QR_MSG_NOT_FOUND ": Index %s for table %s"
#define QR_MSG_TABLE_EXISTS "Table already exists: %s"
#define QR_MSG_KEY_SCHEMA "The provided key element does not match the schema"
#define QR_MSG_ITEM_TOO_LARGE "Item size has exceeded the maximum allowed size"
#define QR_MSG_UPDATE_TOO_LARGE "Item size to update has exceeded the maximum allowed size"
#define QR_MSG_DUPLICATE_KEYS "Provided list of item keys contains duplicates"
/* The start of a refusal of a parameter's value; the problem follows it. */
#define QR_MSG_INVALID_PARAMETER "One or more parameter values were invalid: "
/* A key attribute's or an index key's empty S or B value (the START texts are what the
 * messages begin with): "string" or "binary", then the key's name; an index's name then
 * its key's. An update that would empty an index key is told so in its own words. */
#define QR_MSG_NOT_VALID "One or more parameter values are not valid. "
#define QR_MSG_EMPTY_KEY_START                                                                     \
    QR_MSG_NOT_VALID "The AttributeValue for a key attribute cannot contain an empty "
#define QR_MSG_EMPTY_KEY QR_MSG_EMPTY_KEY_START "%s value. Key: %s"
#define QR_MSG_EMPTY_INDEX_KEY_START                                                               \
    QR_MSG_NOT_VALID "A value specified for a secondary index key is not supported. The "          \
                     "AttributeValue for a key attribute cannot contain an empty "
#define QR_MSG_EMPTY_INDEX_KEY QR_MSG_EMPTY_INDEX_KEY_START "%s value. IndexName: %s, IndexKey: %s"
#define QR_MSG_EMPTY_INDEX_UPDATE                                                                  \
    QR_MSG_NOT_VALID "The update expression attempted to update a secondary index key to a "       \
                     "value that is not supported. The AttributeValue for a key attribute "        \
                     "cannot contain an empty %s value."
/* The start of a refusal of an ExpressionAttributeValues member; the problem follows. */
#define QR_MSG_INVALID_VALUE "ExpressionAttributeValues contains invalid value: "
/* The start of a refusal of a request that mixes expressions with legacy parameters. */
#define QR_MSG_MIXED_EXPRESSIONS                                                                   \
    "Can not use both expression and non-expression parameters in the same request: "
/* A cancelled transaction: the text then "[" and its reasons' codes joined by ", ", "]". */
#define QR_MSG_TXN_CANCELED                                                                        \
    "Transaction cancelled, please refer cancellation reasons for specific reasons "
/* A PartiQL transaction's statement refused: its index (from 0) then why. */
#define QR_MSG_TXN_STATEMENT_INVALID "Validation failed in TransactStatements[%zu]: %s"
#define QR_MSG_PQ_KEY_EQUALITY                                                                     \
    "Where clause does not contain a mandatory equality on all key attributes"
#define QR_MSG_PQ_PARAM_COUNT "Number of parameters in request and statement don't match."

/* The values of set (NULL-terminated) as DynamoDB lists them in QR_MSG_ENUM, "A, B, C",
 * written to out (cut to cap bytes). Returns out. */
const char *err_enum_list(char *out, size_t cap, const char *const *set);

/* One validation error's text, "Value 'VALUE' at 'PATH' failed to satisfy constraint: "
 * and the constraint (constraint_fmt formatted: a QR_MSG_* text), written to out (cut to
 * cap bytes); VALUE is the member as DynamoDB echoes it, NULL for "Value null at", or
 * err_value_unshown for "Value at" (DynamoDB shows no value for some members).
 * err_violation sets e's ValidationException to it as the request's one error ("1
 * validation error detected: ..."). Both return -1. */
extern const char err_value_unshown[];
int err_violation_text(char *out, size_t cap, const char *value, const char *path,
                       const char *constraint_fmt, ...) __attribute__((format(printf, 5, 6)));
int err_violation(qr_err *e, const char *value, const char *path, const char *constraint_fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "Value null at 'PATH' failed to satisfy constraint: Member must not be null", the
 * text of one validation error; PATH is path_fmt formatted (the lowerCamel member path,
 * "requestItems.T.member.keys"). err_not_null_text writes it to out; err_not_null sets
 * e's ValidationException to it as the request's one error. Both return -1. */
int err_not_null_text(char *out, size_t cap, const char *path_fmt, ...)
    __attribute__((format(printf, 3, 4)));
int err_not_null(qr_err *e, const char *path_fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 when e is one of the errors of a throttled request (capacity exceeded). */
int err_is_throttling(const qr_err *e);

/* Forgets the recorded error (and frees an attached item). */
void err_clear(qr_err *e);

/* Replaces, in place, every byte of s that does not belong to a valid UTF-8 character
 * with '?', so text cut to fit (which can split a character) can go into JSON. */
void err_utf8_repair(char *s);

/* The QR_E_* constant (static) for an error document's __type, with or without its
 * namespace ("com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"), or
 * QR_E_INTERNAL for a type quarry does not name. */
const char *err_type_named(const char *type);

/* The HTTP status DynamoDB answers with for this error type (400 or 500). */
int err_http_status(const char *type);

/* The namespace DynamoDB writes before an error type in __type: "com.amazon.coral.
 * validate#" for ValidationException, "com.amazon.coral.service#" for the errors of the
 * request itself (serialization, unknown operation, authentication, size), else
 * "com.amazonaws.dynamodb.v20120810#". */
const char *err_namespace(const char *type);

/* The member of an error document that carries its text, as DynamoDB spells it for type:
 * "Message" for SerializationException and AccessDeniedException (Coral's own) and for
 * the three errors whose shapes name it so in DynamoDB's service model
 * (TransactionCanceledException, IdempotentParameterMismatchException,
 * TransactionInProgressException); "message" for every other. */
const char *err_message_member(const char *type);

#endif
