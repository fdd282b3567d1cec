/* test_console.c — the console's embedded files: each is found at its path and at no
 * other, "/console" and "/console/" are the page, and every file the page loads is one of
 * them (a file added under share/console/ but not to console.c would 404 in the browser). */
#include <string.h>

#include "check.h"
#include "server/console.h"

static int found(const char *path, console_file *f)
{
    return console_find(path, strlen(path), f) == 0;
}

int main(void)
{
    console_file f, page;
    CHECK_THAT(found("/console", &page));
    CHECK_THAT(strcmp(page.path, "/console/index.html") == 0);
    CHECK_THAT(strncmp(page.content_type, "text/html", 9) == 0);
    CHECK_THAT(found("/console/", &f) && f.data == page.data);
    CHECK_THAT(page.len > 0 && page.data[page.len] == '\0');
    CHECK_THAT(memcmp(page.data, "<!doctype html>", 15) == 0);
    size_t n = 0;
    for (size_t i = 0; console_file_at(i, &f) == 0; i++, n++) {
        console_file again;
        CHECK(found(f.path, &again) && again.data == f.data && again.len == f.len, "%s", f.path);
        CHECK(f.len > 100, "%s is %zu bytes", f.path, f.len);
        CHECK(memchr(f.data, '\0', f.len) == NULL, "%s holds a NUL", f.path);
        /* Each script other than app.js is imported by another file; app.js by the page. */
        const char *name = strrchr(f.path, '/') + 1;
        int used = 0;
        for (size_t j = 0; console_file_at(j, &again) == 0; j++)
            if (j != i && memmem(again.data, again.len, name, strlen(name))) used = 1;
        CHECK(used || f.data == page.data, "%s is loaded by no other file", f.path);
    }
    CHECK_THAT(n == 8);
    CHECK_THAT(!found("/console/missing.js", &f));
    CHECK_THAT(!found("/console/app.js/", &f));
    CHECK_THAT(!found("/consoleapp.js", &f));
    CHECK_THAT(!found("/", &f));
    CHECK_THAT(console_find("/console/app.jsx", 15, &f) == 0); /* the length given counts */
    return check_report("test_console");
}
