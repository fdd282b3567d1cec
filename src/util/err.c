/* err.c — recording the first error of a request (see err.h). */
#include "util/err.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void err_init(qr_err *e)
{
    e->type = NULL;
    e->msg[0] = '\0';
    e->item = NULL;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 if none starts there. */
static size_t utf8_sequence(const unsigned char *p, size_t n)
{
    size_t len = p[0] < 0x80             ? 1
                 : (p[0] & 0xe0) == 0xc0 ? 2
                 : (p[0] & 0xf0) == 0xe0 ? 3
                 : (p[0] & 0xf8) == 0xf0 ? 4
                                         : 0;
    if (len == 0 || len > n || (len == 2 && p[0] < 0xc2)) return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    return len;
}

/* Messages quote what the request sent, cut to fit (by the size of msg, or a %.Ns):
 * a cut can split a UTF-8 character, and a response must be valid UTF-8. Bytes that do
 * not form a character become '?'. */
void err_utf8_repair(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t len = utf8_sequence((const unsigned char *)s + i, n - i);
        if (len == 0) {
            s[i++] = '?';
            continue;
        }
        i += len;
    }
}

static int err_vset(qr_err *e, const char *type, const char *fmt, va_list ap)
{
    if (e == NULL || e->type != NULL) return -1;
    e->type = type;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    err_utf8_repair(e->msg);
    return -1;
}

int err_set(qr_err *e, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, type, fmt, ap);
    va_end(ap);
    return -1;
}

int err_validation(qr_err *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, QR_E_VALIDATION, fmt, ap);
    va_end(ap);
    return -1;
}

const char *err_enum_list(char *out, size_t cap, const char *const *set)
{
    size_t used = 0;
    if (cap) out[0] = '\0';
    for (size_t i = 0; set[i] && used < cap; i++) {
        int n = snprintf(out + used, cap - used, "%s%s", i ? ", " : "", set[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
    return out;
}

const char err_value_unshown[] = "";

static void violation_text(char *out, size_t cap, const char *value, const char *path,
                           const char *constraint_fmt, va_list ap)
{
    char constraint[512];
    vsnprintf(constraint, sizeof constraint, constraint_fmt, ap);
    if (value == err_value_unshown)
        snprintf(out, cap, "Value at '%s' failed to satisfy constraint: %s", path, constraint);
    else if (value)
        snprintf(out, cap, "Value '%s' at '%s' failed to satisfy constraint: %s", value, path,
                 constraint);
    else
        snprintf(out, cap, "Value null at '%s' failed to satisfy constraint: %s", path, constraint);
}

int err_violation_text(char *out, size_t cap, const char *value, const char *path,
                       const char *constraint_fmt, ...)
{
    va_list ap;
    va_start(ap, constraint_fmt);
    violation_text(out, cap, value, path, constraint_fmt, ap);
    va_end(ap);
    return -1;
}

int err_violation(qr_err *e, const char *value, const char *path, const char *constraint_fmt, ...)
{
    char text[QR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, constraint_fmt);
    violation_text(text, sizeof text, value, path, constraint_fmt, ap);
    va_end(ap);
    return err_validation(e, "1 validation error detected: %s", text);
}

static void not_null_text(char *out, size_t cap, const char *path_fmt, va_list ap)
{
    char path[512];
    vsnprintf(path, sizeof path, path_fmt, ap);
    err_violation_text(out, cap, NULL, path, QR_MSG_NOT_NULL);
}

int err_not_null_text(char *out, size_t cap, const char *path_fmt, ...)
{
    va_list ap;
    va_start(ap, path_fmt);
    not_null_text(out, cap, path_fmt, ap);
    va_end(ap);
    return -1;
}

int err_not_null(qr_err *e, const char *path_fmt, ...)
{
    char text[640];
    va_list ap;
    va_start(ap, path_fmt);
    not_null_text(text, sizeof text, path_fmt, ap);
    va_end(ap);
    return err_validation(e, "1 validation error detected: %s", text);
}

void err_clear(qr_err *e)
{
    if (e->item) json_decref((json_t *)e->item);
    err_init(e);
}

int err_is_throttling(const qr_err *e)
{
    return e->type &&
           (strcmp(e->type, QR_E_THROUGHPUT) == 0 || strcmp(e->type, QR_E_THROTTLING) == 0 ||
            strcmp(e->type, QR_E_REQUEST_LIMIT) == 0);
}

const char *err_type_named(const char *type)
{
    static const char *const known[] = {
        QR_E_VALIDATION,      QR_E_SERIALIZATION, QR_E_NOT_FOUND,       QR_E_IN_USE,
        QR_E_CONDITION,       QR_E_UNKNOWN_OP,    QR_E_LIMIT,           QR_E_THROUGHPUT,
        QR_E_THROTTLING,      QR_E_REQUEST_LIMIT, QR_E_TXN_CANCELED,    QR_E_TXN_CONFLICT,
        QR_E_TXN_IN_PROGRESS, QR_E_IDEMPOTENT,    QR_E_COLLECTION_SIZE, QR_E_INTERNAL};
    const char *hash = type ? strrchr(type, '#') : NULL;
    const char *name = hash ? hash + 1 : type;
    for (size_t i = 0; name && i < sizeof known / sizeof known[0]; i++)
        if (strcmp(name, known[i]) == 0) return known[i];
    return QR_E_INTERNAL;
}

int err_http_status(const char *type)
{
    if (type == NULL) return 200;
    if (strcmp(type, QR_E_INTERNAL) == 0) return 500;
    return 400;
}

const char *err_namespace(const char *type)
{
    static const char *const service[] = {
        QR_E_SERIALIZATION,
        QR_E_UNKNOWN_OP,
        "RequestEntityTooLarge",
        "MissingAuthenticationTokenException",
        "IncompleteSignatureException",
        "InvalidSignatureException",
        "UnrecognizedClientException",
        "AccessDeniedException",
    };
    if (strcmp(type, QR_E_VALIDATION) == 0) return "com.amazon.coral.validate#";
    if (strcmp(type, QR_E_THROTTLING) == 0) return "com.amazon.coral.availability#";
    for (size_t i = 0; i < sizeof service / sizeof service[0]; i++)
        if (strcmp(type, service[i]) == 0) return "com.amazon.coral.service#";
    return "com.amazonaws.dynamodb.v20120810#";
}

const char *err_message_member(const char *type)
{
    static const char *const capitalised[] = {QR_E_SERIALIZATION, "AccessDeniedException",
                                              QR_E_TXN_CANCELED, QR_E_IDEMPOTENT,
                                              QR_E_TXN_IN_PROGRESS};
    for (size_t i = 0; type && i < sizeof capitalised / sizeof capitalised[0]; i++)
        if (strcmp(type, capitalised[i]) == 0) return "Message";
    return "message";
}
