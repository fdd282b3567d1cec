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

static int err_vset(qr_err *e, const char *type, const char *fmt, va_list ap)
{
    if (e == NULL || e->type != NULL) return -1;
    e->type = type;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
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

void err_clear(qr_err *e)
{
    if (e->item) json_decref((json_t *)e->item);
    err_init(e);
}

int err_http_status(const char *type)
{
    if (type == NULL) return 200;
    if (strcmp(type, QR_E_INTERNAL) == 0) return 500;
    return 400;
}
