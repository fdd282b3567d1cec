/* console.h — the files of the console served at GET /console: the HTML, CSS and
 * JavaScript under share/console/, embedded in the binary when it is built. It only
 * finds a file by its URL path; dynamodb.c answers the request, and the page reads its
 * data through signed API calls like any other client. */
#ifndef QR_SERVER_CONSOLE_H
#define QR_SERVER_CONSOLE_H

#include <stddef.h>

typedef struct console_file {
    const char *path;         /* the URL path it is served at, e.g. "/console/app.js" */
    const char *content_type; /* with its charset */
    const char *data;         /* the file's bytes, in the binary's read-only data */
    size_t len;
} console_file;

/* The file served at path (len bytes, without the query) into *out: 0, or -1 when path
 * is not one of the console's. "/console" and "/console/" are the page itself. */
int console_find(const char *path, size_t len, console_file *out);

/* The i-th file into *out, for the tests: 0, or -1 past the last. */
int console_file_at(size_t i, console_file *out);

#endif
