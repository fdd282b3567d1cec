/* model.c — `quarry model check | render | export | apply | import` on the command line.
 *
 * It parses arguments, loads the model, runs the checker and hands the result to the right
 * formatter in src/checker/. It holds no modelling logic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker/output.h"
#include "cli/cli.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: quarry model check FILE [--json]\n"
               "       quarry model render FILE [--html]\n"
               "       quarry model export FILE --format cloudformation|terraform|cql|workbench\n"
               "       quarry model apply FILE --endpoint URL [--force]\n"
               "       quarry model import WORKBENCH.json\n");
    return 2;
}

/* Colour only on a terminal, and never when NO_COLOR is set (no-color.org). */
static int use_color(int fd)
{
    const char *no = getenv("NO_COLOR");
    return isatty(fd) && (no == NULL || *no == '\0');
}

typedef struct opts {
    const char *file;
    const char *format;
    const char *endpoint;
    int json, html, force;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0)
            o->json = 1;
        else if (strcmp(a, "--html") == 0)
            o->html = 1;
        else if (strcmp(a, "--force") == 0)
            o->force = 1;
        else if (strcmp(a, "--format") == 0 && i + 1 < argc)
            o->format = argv[++i];
        else if (strncmp(a, "--format=", 9) == 0)
            o->format = a + 9;
        else if (strcmp(a, "--endpoint") == 0 && i + 1 < argc)
            o->endpoint = argv[++i];
        else if (strncmp(a, "--endpoint=", 11) == 0)
            o->endpoint = a + 11;
        else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "quarry model: unknown or incomplete option '%s'\n", a);
            return -1;
        } else if (o->file == NULL)
            o->file = a;
        else {
            fprintf(stderr, "quarry model: unexpected argument '%s'\n", a);
            return -1;
        }
    }
    if (o->file == NULL) {
        fprintf(stderr, "quarry model: no model file given\n");
        return -1;
    }
    return 0;
}

/* Loads and checks the model; prints load errors. Returns 0 with *m and *r set. */
static int load_and_check(const char *file, qr_model **m, ck_report **r)
{
    qr_err err;
    err_init(&err);
    if (model_load(file, NULL, 0, m, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    if (check_run(*m, r, &err)) {
        fprintf(stderr, "quarry model: %s\n", err.msg);
        model_free(*m);
        return -1;
    }
    return 0;
}

int cli_models_load(const char *const *paths)
{
    for (size_t i = 0; paths[i]; i++) {
        qr_model *m;
        ck_report *r;
        if (load_and_check(paths[i], &m, &r)) return -1;
        check_free(r);
        model_free(m);
    }
    return 0;
}

static int cmd_check(const opts *o, qr_model *m, ck_report *r)
{
    (void)m;
    if (o->json) {
        json_t *j = model_report_json(r);
        if (j == NULL || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
            json_decref(j);
            fprintf(stderr, "quarry model: cannot write the report\n");
            return 2;
        }
        fputc('\n', stdout);
        json_decref(j);
    } else {
        model_report_text(r, stdout, use_color(STDOUT_FILENO));
    }
    return r->errors ? 1 : 0;
}

static int cmd_export(const opts *o, qr_model *m, ck_report *r)
{
    qr_err err;
    err_init(&err);
    int rc;
    if (o->format == NULL) {
        fprintf(
            stderr,
            "quarry model export: --format cloudformation|terraform|cql|workbench is required\n");
        return 2;
    }
    if (strcmp(o->format, "cloudformation") == 0)
        rc = model_export_cloudformation(m, stdout, &err);
    else if (strcmp(o->format, "terraform") == 0)
        rc = model_export_terraform(m, stdout, &err);
    else if (strcmp(o->format, "cql") == 0)
        rc = model_export_cql(r, stdout, &err);
    else if (strcmp(o->format, "workbench") == 0)
        rc = model_export_workbench(m, stdout, &err);
    else {
        fprintf(stderr,
                "quarry model export: unknown format '%s' (cloudformation, terraform, cql, "
                "workbench)\n",
                o->format);
        return 2;
    }
    if (rc) fprintf(stderr, "quarry model export: %s\n", err.msg);
    return rc ? 1 : 0;
}

static int cmd_apply(const opts *o, qr_model *m, ck_report *r)
{
    if (o->endpoint == NULL) {
        fprintf(stderr, "quarry model apply: --endpoint URL is required\n");
        return 2;
    }
    if (r->errors && !o->force) {
        model_report_text(r, stderr, use_color(STDERR_FILENO));
        fprintf(stderr,
                "quarry model apply: the model has %d error%s; nothing applied (use --force to "
                "apply anyway)\n",
                r->errors, r->errors == 1 ? "" : "s");
        return 1;
    }
    qr_err err;
    err_init(&err);
    if (model_apply(m, o->endpoint, stdout, &err)) {
        fprintf(stderr, "quarry model apply: %s%s%s\n",
                err.type && strcmp(err.type, QR_E_VALIDATION) ? err.type : "",
                err.type && strcmp(err.type, QR_E_VALIDATION) ? ": " : "", err.msg);
        return 1;
    }
    return 0;
}

/* Exit status: 0 when the model checks clean (warnings allowed), 1 when the check finds errors
 * or apply fails, 2 for usage errors and files that cannot be loaded. */
int cli_model(int argc, char **argv)
{
    if (argc < 1) return usage(stderr);
    const char *sub = argv[0];
    if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0 || strcmp(sub, "help") == 0) {
        usage(stdout);
        return 0;
    }
    opts o = {0};
    if (parse(argc - 1, argv + 1, &o)) return usage(stderr);
    if (strcmp(sub, "import") == 0) {
        qr_err err;
        err_init(&err);
        if (model_import_workbench(o.file, stdout, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
        return 0;
    }
    if (strcmp(sub, "check") && strcmp(sub, "render") && strcmp(sub, "export") &&
        strcmp(sub, "apply")) {
        fprintf(stderr, "quarry model: unknown subcommand '%s'\n", sub);
        return usage(stderr);
    }
    qr_model *m;
    ck_report *r;
    if (load_and_check(o.file, &m, &r)) return 2;
    int rc = 0;
    if (strcmp(sub, "check") == 0)
        rc = cmd_check(&o, m, r);
    else if (strcmp(sub, "render") == 0) {
        if (o.html)
            model_render_html(r, stdout);
        else
            model_render_text(r, stdout);
    } else if (strcmp(sub, "export") == 0)
        rc = cmd_export(&o, m, r);
    else
        rc = cmd_apply(&o, m, r);
    if (fflush(stdout) != 0 && rc == 0) rc = 2;
    check_free(r);
    model_free(m);
    return rc;
}
