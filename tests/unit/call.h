/* call.h — one qr_call with a formatted body, checked and parsed, for the C unit tests.
 *
 * call(db, op, expect_ok, fmt, ...) formats the request body (up to 2 KB), runs it, counts
 * a failed check (check.h) when it failed though expected to succeed or the reverse, and
 * returns the answer parsed (a new reference; NULL if it was not JSON). */
#ifndef QR_TEST_CALL_H
#define QR_TEST_CALL_H

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "quarry.h"

#include "check.h"

static json_t *call(qr_db *db, const char *op, int expect_ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static json_t *call(qr_db *db, const char *op, int expect_ok, const char *fmt, ...)
{
    char body[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    qr_response r;
    int rc = qr_call(db, op, body, strlen(body), &r);
    CHECK((rc == QR_OK) == expect_ok, "%s %s: %s", op, body, r.body);
    json_t *doc = json_loads(r.body, 0, NULL);
    qr_response_free(&r);
    return doc;
}

#endif
