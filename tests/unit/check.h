/* check.h — the one assertion the C unit tests share.
 *
 * CHECK(cond, fmt, ...) counts a check, and a failure it prints where and why, without
 * stopping the test (CHECK_THAT and CHECK_STR are shorthands), so one run reports every broken
 * case; a test's main returns non-zero when check_failures is not zero. At most 50 failures are
 * printed. check_report ends a main that way, and check_remove_tree removes a test's temporary tree
 * as one more check. */
#ifndef QR_TEST_CHECK_H
#define QR_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
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
        CHECK(g_ != NULL && strcmp(g_, w_) == 0, "got '%s'\n  want '%s'", g_ ? g_ : "(null)", w_); \
    } while (0)

/* Removes dir, a test's temporary tree, as one more check. */
static inline void check_remove_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "could not remove %s", dir);
}

/* Ends a test's main: says how many checks failed (on stderr) or passed, under name;
 * returns the exit status. */
static inline int check_report(const char *name)
{
    if (check_failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, check_failures);
        return 1;
    }
    printf("%s: %d checks passed\n", name, check_count);
    return 0;
}

#endif
