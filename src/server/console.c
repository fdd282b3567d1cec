/* console.c — the console's files (share/console/), embedded at build time by the
 * assembler's .incbin, so that the binary carries them and no build tool is needed
 * beyond gcc; the Makefile rebuilds this file when one of them changes. It maps URL paths
 * to the files and their content types; it reads no disk at run time and serves nothing
 * itself (dynamodb.c does, without authentication: the files hold no data). */
#include "server/console.h"

#include <string.h>

/* Each file between two symbols in .rodata, console_<id>_start and console_<id>_end,
 * followed by a NUL so that a debugger can print it. */
#define EMBED(id, file)                                                                            \
    __asm__(".pushsection .rodata\n"                                                               \
            ".balign 16\n"                                                                         \
            ".globl console_" #id "_start\n"                                                       \
            ".hidden console_" #id "_start\n"                                                      \
            "console_" #id "_start:\n"                                                             \
            ".incbin \"share/console/" file "\"\n"                                                 \
            ".globl console_" #id "_end\n"                                                         \
            ".hidden console_" #id "_end\n"                                                        \
            "console_" #id "_end:\n"                                                               \
            ".byte 0\n"                                                                            \
            ".popsection\n");                                                                      \
    extern const char console_##id##_start[], console_##id##_end[]

EMBED(index, "index.html");
EMBED(css, "console.css");
EMBED(app, "app.js");
EMBED(api, "api.js");
EMBED(sigv4, "sigv4.js");
EMBED(model, "model.js");
EMBED(render, "render.js");
EMBED(charts, "charts.js");

#define HTML "text/html; charset=utf-8"
#define CSS "text/css; charset=utf-8"
#define JS "text/javascript; charset=utf-8"

static const struct {
    const char *path, *content_type, *start, *end;
} files[] = {
    {"/console/index.html", HTML, console_index_start, console_index_end},
    {"/console/console.css", CSS, console_css_start, console_css_end},
    {"/console/app.js", JS, console_app_start, console_app_end},
    {"/console/api.js", JS, console_api_start, console_api_end},
    {"/console/sigv4.js", JS, console_sigv4_start, console_sigv4_end},
    {"/console/model.js", JS, console_model_start, console_model_end},
    {"/console/render.js", JS, console_render_start, console_render_end},
    {"/console/charts.js", JS, console_charts_start, console_charts_end},
};

int console_file_at(size_t i, console_file *out)
{
    if (i >= sizeof files / sizeof files[0]) return -1;
    *out = (console_file){files[i].path, files[i].content_type, files[i].start,
                          (size_t)(files[i].end - files[i].start)};
    return 0;
}

int console_find(const char *path, size_t len, console_file *out)
{
    if ((len == 8 && memcmp(path, "/console", 8) == 0) ||
        (len == 9 && memcmp(path, "/console/", 9) == 0))
        return console_file_at(0, out);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (strlen(files[i].path) == len && memcmp(files[i].path, path, len) == 0)
            return console_file_at(i, out);
    return -1;
}
