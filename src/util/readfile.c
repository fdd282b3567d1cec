/* readfile.c — reading a small file whole, with a cap (see readfile.h). The buffer
 * doubles from 8 KiB, so a file costs at most twice its size while it is read. */
#include "util/readfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int readfile_stream(FILE *f, size_t cap, char **text, size_t *len)
{
    size_t size = 8192, n = 0;
    char *p = malloc(size + 1);
    *text = NULL;
    *len = 0;
    for (;;) {
        if (p == NULL) {
            errno = ENOMEM;
            return -1;
        }
        if (n == size) {
            if (size > cap) break;
            char *q = realloc(p, 2 * size + 1);
            if (q == NULL) {
                free(p);
                p = NULL;
                continue;
            }
            p = q;
            size *= 2;
        }
        size_t got = fread(p + n, 1, size - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        readfile_free_secret(p, n);
        errno = EIO;
        return -1;
    }
    if (n > cap) {
        readfile_free_secret(p, n);
        errno = EFBIG;
        return -1;
    }
    p[n] = '\0';
    *text = p;
    *len = n;
    return 0;
}

int readfile_path(const char *path, size_t cap, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return -1;
    int rc = readfile_stream(f, cap, text, len);
    int saved = errno;
    fclose(f);
    errno = saved;
    return rc;
}

void readfile_free_secret(char *text, size_t len)
{
    if (text == NULL) return;
    explicit_bzero(text, len);
    free(text);
}
