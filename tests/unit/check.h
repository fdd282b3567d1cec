/* check.h — the one assertion the C unit tests share.
 *
 * CHECK(cond, fmt, ...) counts a check, and a failure it prints where and why, without
 * stopping the test (CHECK_THAT and CHECK_STR are shorthands), so one run reports every broken case; a test's main returns non-zero when
 * check_failures is not zero. At most 50 failures are printed. */
#ifndef QR_TEST_CHECK_H
#define QR_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(cond)) {                                                                             \
            if (++check_failures <= 50) {                                                          \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                               \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* CHECK with the condition's own text as the message. */
#define CHECK_THAT(cond) CHECK(cond, "check failed: %s", #cond)

/* Two NUL-terminated strings are equal (got may be NULL, which fails). */
#define CHECK_STR(got, want)                                                                       \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        CHECK(g_ != NULL && strcmp(g_, w_) == 0, "got '%s'\n  want '%s'", g_ ? g_ : "(null)", w_);  \
    } while (0)

#endif
