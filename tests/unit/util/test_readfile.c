/* test_readfile.c — readfile_path and readfile_stream read a file whole, NUL-terminated,
 * at every size around the buffer's doublings and the cap, and refuse a larger file
 * (EFBIG) or a missing one (fopen's errno) without leaving anything allocated. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/readfile.h"

#include "check.h"

static void write_file(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f && i < n; i++)
        fputc('a' + (int)(i % 26), f);
    if (f) fclose(f);
}

static void read_back(const char *path, size_t n, size_t cap)
{
    write_file(path, n);
    char *text = NULL;
    size_t len = 99;
    errno = 0;
    int rc = readfile_path(path, cap, &text, &len);
    if (n <= cap) {
        CHECK(rc == 0 && text && len == n, "%zu bytes, cap %zu: rc %d len %zu", n, cap, rc, len);
        int same = text != NULL && text[len] == '\0';
        for (size_t i = 0; same && i < n; i++)
            same = text[i] == 'a' + (int)(i % 26);
        CHECK(same, "%zu bytes, cap %zu: read back different bytes", n, cap);
        readfile_free_secret(text, len);
    } else {
        CHECK(rc == -1 && errno == EFBIG && text == NULL && len == 0,
              "%zu bytes over cap %zu: rc %d errno %d", n, cap, rc, errno);
    }
}

int main(void)
{
    char path[] = "/tmp/test_readfile.XXXXXX";
    int fd = mkstemp(path);
    CHECK_THAT(fd >= 0);
    close(fd);

    static const size_t sizes[] = {0, 1, 8191, 8192, 8193, 16384, 16385, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        read_back(path, sizes[i], (size_t)1 << 20);
        read_back(path, sizes[i], sizes[i]);
        if (sizes[i] > 0) read_back(path, sizes[i], sizes[i] - 1);
    }
    read_back(path, 5000, 10);

    char *text = NULL;
    size_t len = 0;
    unlink(path);
    errno = 0;
    CHECK(readfile_path(path, 100, &text, &len) == -1 && errno == ENOENT && text == NULL,
          "a missing file: errno %d", errno);

    FILE *f = tmpfile();
    CHECK_THAT(f != NULL);
    if (f) {
        fputs("{\"TableName\":\"T\"}", f);
        rewind(f);
        CHECK(readfile_stream(f, 100, &text, &len) == 0 && len == 17 &&
                  strcmp(text, "{\"TableName\":\"T\"}") == 0,
              "a stream read as %zu bytes", len);
        free(text);
        fclose(f);
    }
    readfile_free_secret(NULL, 0);
    return check_report("test_readfile");
}
