/* check.h — the one assertion the C unit tests share.
 *
 * CHECK(cond, fmt, ...) counts a failure and prints where and why, without stopping the
 * test, so one run reports every broken case; a test's main returns non-zero when
 * check_failures is not zero. At most 50 failures are printed. */
#ifndef QR_TEST_CHECK_H
#define QR_TEST_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (++check_failures <= 50) {                                                          \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                               \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#endif
