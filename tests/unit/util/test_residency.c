/* test_residency.c — residency_release_readonly unmaps the pages of read-only segments
 * (a page of .rodata read before is no longer mapped afterwards, per /proc/self/pagemap)
 * and loses nothing: the read-only data reads back the same, a relocated table of
 * function pointers (RELRO) still calls the right functions, written variables keep their
 * values, and the code keeps running. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/residency.h"

#include "check.h"

/* 256 KB of read-only data with a known pattern, a page in its middle checked: the kernel
 * maps up to 64 KB around a page it faults in (fault-around), so reading other read-only
 * data (a string) must not map it again. */
#define PATTERN_BYTES (256 * 1024)
static const unsigned char pattern[PATTERN_BYTES] = {
    [0] = 7, [20000] = 11, [PATTERN_BYTES / 2] = 13, [PATTERN_BYTES - 1] = 17};

static int add(int a, int b)
{
    return a + b;
}
static int mul(int a, int b)
{
    return a * b;
}
/* Pointers the loader writes at start (PIE), in RELRO: a writable segment made read-only. */
static int (*const ops[])(int, int) = {add, mul};

static int written = 41;

/* 1 if the page holding p is mapped in this process, 0 if not, -1 if unknown; pagemap is
 * /proc/self/pagemap, opened before. */
static int mapped(int pagemap, const void *p)
{
    uint64_t entry = 0;
    off_t at = (off_t)((uintptr_t)p / (uintptr_t)sysconf(_SC_PAGESIZE) * sizeof entry);
    if (pread(pagemap, &entry, sizeof entry, at) != (ssize_t)sizeof entry) return -1;
    return (int)(entry >> 63);
}

int main(void)
{
    int pagemap = open("/proc/self/pagemap", O_RDONLY);
    CHECK_THAT(pagemap >= 0);
    volatile const unsigned char *middle = &pattern[PATTERN_BYTES / 2];
    CHECK_THAT(*middle == 13);
    CHECK(mapped(pagemap, (const void *)middle) == 1, "a page of .rodata just read is mapped");
    written++;

    size_t bytes = 0;
    int rc = residency_release_readonly(&bytes);
    int after = mapped(pagemap, (const void *)middle); /* before any string is read */
    CHECK_THAT(rc == 0);
    CHECK(bytes >= sizeof pattern, "released %zu bytes, which should cover .rodata", bytes);
    CHECK(after == 0, "the page of .rodata is no longer mapped");

    CHECK_THAT(pattern[0] == 7 && pattern[20000] == 11 && *middle == 13 &&
               pattern[PATTERN_BYTES - 1] == 17);
    int zeros = 0;
    for (size_t i = 1; i < sizeof pattern - 1; i++)
        zeros += pattern[i] == 0;
    CHECK(zeros == (int)sizeof pattern - 4, "the rest of .rodata reads back as zeros");
    CHECK(mapped(pagemap, (const void *)middle) == 1, "and is mapped again once read");
    volatile int pick = 1;
    CHECK(ops[0](6, 7) == 13 && ops[pick](6, 7) == 42, "the relocated function table still calls");
    CHECK(written == 42, "a written variable keeps its value: %d", written);
    char buf[32];
    snprintf(buf, sizeof buf, "%d", ops[pick](3, 5));
    CHECK_STR(buf, "15");

    CHECK_THAT(residency_release_readonly(NULL) == 0); /* again: nothing breaks */
    CHECK_THAT(pattern[20000] == 11);
    close(pagemap);
    return check_report("residency");
}
