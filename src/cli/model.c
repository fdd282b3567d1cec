/* model.c — `quarry model check | render | export | apply | import` on the command line.
 *
 * It parses arguments, loads the model, runs the checker and hands the result to the right
 * formatter in src/checker/. It holds no modelling logic. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker/output.h"
#include "cli/cli.h"

static int usage(FILE *f)
{
    fprintf(f,
            "usage: quarry model check FILE [--json] [--prices FILE]\n"
            "       quarry model render FILE [--html] [--prices FILE]\n"
            "       quarry model export FILE --format "
            "cloudformation|terraform|cql|workbench|electrodb|dynamodb-toolbox\n"
            "       quarry model apply FILE --endpoint URL [--force]\n"
            "       quarry model import WORKBENCH.json [-o OUT.yaml]\n"
            "       quarry model import --cql SCHEMA.cql [--queries QUERIES.cql] [-o OUT.yaml]\n"
            "       quarry model observe --endpoint URL [--model FILE] [--prices FILE] [--json]\n"
            "       quarry model check FILE --observed OBSERVED.json [--json]\n"
            "       quarry model --help\n"
            "\n"
            "  check      the modelling checklist over the model's access patterns\n"
            "  render     the model as text, or as an HTML page with --html (the check's\n"
            "             findings marked; for a model that does not load, its errors)\n"
            "  export     the tables as CloudFormation, Terraform, CQL or NoSQL Workbench, or\n"
            "             entities for ElectroDB or dynamodb-toolbox\n"
            "  apply      create the model's tables on a server (--force: replace differing ones)\n"
            "  import     a NoSQL Workbench model as a model file, on standard output\n"
            "  observe    declared against observed traffic of a server run with --model,\n"
            "             with --prices FILE for the monthly cost\n"
            "  --json     the report as JSON\n"
            "Exit status: 0 when the model checks clean (warnings allowed), 1 when the check\n"
            "finds errors or apply fails, 2 for usage errors and files that cannot be loaded;\n"
            "render --html exits 0 whenever it writes the page.\n");
    return f == stdout ? 0 : 2;
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
    const char *observed; /* check: an observe --json report */
    const char *prices;   /* observe: the price table */
    const char *cql;      /* import: the CQL schema */
    const char *queries;  /* import --cql: the application's CQL statements */
    const char *out;      /* import: the model file to write (else stdout) */
    int json, html, force;
} opts;

static int parse(int argc, char **argv, opts *o, int needs_file)
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
        else if (strcmp(a, "--observed") == 0 && i + 1 < argc)
            o->observed = argv[++i];
        else if (strcmp(a, "--prices") == 0 && i + 1 < argc)
            o->prices = argv[++i];
        else if (strcmp(a, "--cql") == 0 && i + 1 < argc)
            o->cql = argv[++i];
        else if (strcmp(a, "--queries") == 0 && i + 1 < argc)
            o->queries = argv[++i];
        else if (strcmp(a, "-o") == 0 && i + 1 < argc)
            o->out = argv[++i];
        else if (strcmp(a, "--model") == 0 && i + 1 < argc && o->file == NULL)
            o->file = argv[++i];
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
    if (o->file == NULL && needs_file) {
        fprintf(stderr, "quarry model: no model file given\n");
        return -1;
    }
    return 0;
}

/* Loads and checks the model (with the figures of an observe --json report in place of
 * its estimates, when observed is not NULL); prints load errors. Returns 0 with *m and *r
 * set. */
/* Prints every error of a model file that did not load: one "FILE:LINE:COL: message" line
 * each on stderr, or, with json, {"file", "errors": [{line, column, message}], "summary"}
 * on stdout. */
static void print_load_errors(const char *file, const model_errors *errs, const qr_err *err,
                              int json)
{
    if (json) {
        json_t *root = json_object(), *list = json_array(), *sum = json_object();
        json_object_set_new(root, "file", json_string(file));
        for (size_t i = 0; i < errs->n; i++) {
            json_t *o = json_object();
            json_object_set_new(o, "line", json_integer(errs->v[i].line));
            json_object_set_new(o, "column", json_integer(errs->v[i].col));
            json_object_set_new(o, "message", json_string(errs->v[i].message));
            json_array_append_new(list, o);
        }
        if (errs->n == 0) {
            json_t *o = json_object();
            json_object_set_new(o, "message", json_string(err->msg));
            json_array_append_new(list, o);
        }
        json_object_set_new(root, "errors", list);
        json_object_set_new(sum, "errors", json_integer((json_int_t)(errs->n ? errs->n : 1)));
        json_object_set_new(sum, "loaded", json_false());
        json_object_set_new(root, "summary", sum);
        json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(root);
    }
    if (errs->n == 0) {
        fprintf(stderr, "%s\n", err->msg);
        return;
    }
    for (size_t i = 0; i < errs->n; i++)
        fprintf(stderr, "%s:%d:%d: %s\n", file, errs->v[i].line, errs->v[i].col,
                errs->v[i].message);
    if (errs->dropped) fprintf(stderr, "%s: %zu more errors not shown\n", file, errs->dropped);
    if (errs->n + errs->dropped > 1)
        fprintf(stderr, "%s: %zu errors\n", file, errs->n + errs->dropped);
}

/* Returns 1 instead when the file read but did not load and html is set: the page of its
 * errors is on stdout then. */
static int load_and_check_observed(const char *file, const char *observed, int json, int html,
                                   qr_model **m, ck_report **r)
{
    qr_err err;
    err_init(&err);
    model_errors errs = {0};
    int rc = model_load_all(file, NULL, 0, m, &errs, &err);
    if (rc) print_load_errors(file, &errs, &err, json);
    if (rc && html && errs.n) {
        model_render_html_load_errors(file, &errs, stdout);
        rc = 1;
    }
    model_errors_free(&errs);
    if (rc) return rc > 0 ? 1 : -1;
    if (observed) {
        json_error_t je;
        json_t *doc = json_load_file(observed, 0, &je);
        int n = doc ? model_apply_observed(*m, doc, &err) : -1;
        json_decref(doc);
        if (n < 0) {
            fprintf(stderr, "%s:%d:%d: %s\n", observed, doc ? 1 : je.line, doc ? 1 : je.column,
                    doc ? err.msg : je.text);
            err_clear(&err);
            model_free(*m);
            return -1;
        }
        fprintf(stderr, "quarry model check: rates and result sizes of %d pattern%s from %s\n", n,
                n == 1 ? "" : "s", observed);
    }
    if (check_run(*m, r, &err)) {
        fprintf(stderr, "quarry model: %s\n", err.msg);
        model_free(*m);
        return -1;
    }
    return 0;
}

static int load_and_check(const char *file, qr_model **m, ck_report **r)
{
    return load_and_check_observed(file, NULL, 0, 0, m, r);
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

/* The price table: --prices, $QUARRY_PRICES, or share/quarry/prices.yaml beside the
 * program's folder (build/quarry and /usr/bin/quarry alike). */
static const char *prices_path(const opts *o, char *buf, size_t cap)
{
    if (o->prices) return o->prices;
    const char *env = getenv("QUARRY_PRICES");
    if (env && *env) return env;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return "share/quarry/prices.yaml";
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(buf, cap, "%s/../share/quarry/prices.yaml", exe);
    return buf;
}

/* Monthly costs for check and render: a price table given with --prices must load; the
 * default one missing only leaves the costs out (said on stderr). */
static int price(const opts *o, ck_report *r)
{
    char buf[4200];
    qr_err err;
    err_init(&err);
    model_prices prices;
    if (model_prices_load(prices_path(o, buf, sizeof buf), &prices, &err)) {
        fprintf(stderr, "quarry model: %s%s\n", err.msg, o->prices ? "" : "; costs left out");
        err_clear(&err);
        return o->prices ? -1 : 0;
    }
    if (check_price(r, &prices)) {
        fprintf(stderr, "quarry model: out of memory pricing the model\n");
        return -1;
    }
    return 0;
}

static int cmd_observe(const opts *o)
{
    if (o->endpoint == NULL) {
        fprintf(stderr, "quarry model observe: --endpoint URL is required\n");
        return 2;
    }
    qr_model *m = NULL;
    ck_report *r = NULL;
    if (o->file && load_and_check(o->file, &m, &r)) return 2;
    char buf[4200];
    qr_err err;
    err_init(&err);
    model_prices prices;
    json_t *report = NULL;
    int rc = 0;
    if (model_prices_load(prices_path(o, buf, sizeof buf), &prices, &err) ||
        model_observe(o->endpoint, m, &prices, &report, &err)) {
        fprintf(stderr, "quarry model observe: %s\n", err.msg);
        err_clear(&err);
        rc = 1;
    } else if (o->json) {
        json_dumpf(report, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
    } else {
        model_observe_text(report, stdout);
    }
    json_decref(report);
    check_free(r);
    model_free(m);
    return rc;
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
        fprintf(stderr, "quarry model export: --format "
                        "cloudformation|terraform|cql|workbench|electrodb|dynamodb-toolbox is "
                        "required\n");
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
    else if (strcmp(o->format, "electrodb") == 0)
        rc = model_export_electrodb(m, stdout, &err);
    else if (strcmp(o->format, "dynamodb-toolbox") == 0)
        rc = model_export_dynamodb_toolbox(m, stdout, &err);
    else {
        fprintf(stderr,
                "quarry model export: unknown format '%s' (cloudformation, terraform, cql, "
                "workbench, electrodb, dynamodb-toolbox)\n",
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

/* Writes the imported model to o->out through a temporary file renamed over it, so a
 * failed import never leaves a partial model file; to stdout without -o. */
static int cmd_import(const opts *o)
{
    if ((o->cql == NULL) == (o->file == NULL) || (o->queries && o->cql == NULL)) {
        fprintf(stderr, "quarry model import: give WORKBENCH.json, or --cql SCHEMA.cql "
                        "[--queries QUERIES.cql]\n");
        return usage(stderr);
    }
    char tmp[4200];
    FILE *f = stdout;
    if (o->out) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", o->out, (long)getpid());
        if ((f = fopen(tmp, "w")) == NULL) {
            fprintf(stderr, "quarry model import: cannot write %s: %s\n", tmp, strerror(errno));
            return 2;
        }
    }
    qr_err err;
    err_init(&err);
    int rc = o->cql ? model_import_cql(o->cql, o->queries, f, &err)
                    : model_import_workbench(o->file, f, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    if (o->out) {
        int bad = fclose(f) != 0;
        if (rc == 0 && bad) fprintf(stderr, "quarry model import: cannot write %s\n", tmp);
        if (rc == 0 && !bad && rename(tmp, o->out) != 0) {
            fprintf(stderr, "quarry model import: cannot write %s: %s\n", o->out, strerror(errno));
            bad = 1;
        }
        if (rc || bad) remove(tmp);
        rc |= bad;
    } else if (fflush(stdout) != 0) {
        rc = -1;
    }
    return rc ? 2 : 0;
}

/* Exit status: 0 when the model checks clean (warnings allowed), 1 when the check finds errors
 * or apply fails, 2 for usage errors and files that cannot be loaded. */
int cli_model(int argc, char **argv)
{
    if (argc < 1) return usage(stderr);
    const char *sub = argv[0];
    if (strcmp(sub, "help") == 0 || cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    opts o = {0};
    int import = strcmp(sub, "import") == 0;
    if (parse(argc - 1, argv + 1, &o, strcmp(sub, "observe") != 0 && !import)) return usage(stderr);
    if (import) return cmd_import(&o);
    if (strcmp(sub, "observe") == 0) return cmd_observe(&o);
    if (strcmp(sub, "check") && strcmp(sub, "render") && strcmp(sub, "export") &&
        strcmp(sub, "apply")) {
        fprintf(stderr, "quarry model: unknown subcommand '%s'\n", sub);
        return usage(stderr);
    }
    qr_model *m;
    ck_report *r;
    int loaded = load_and_check_observed(o.file, strcmp(sub, "check") == 0 ? o.observed : NULL,
                                         o.json && strcmp(sub, "check") == 0,
                                         o.html && strcmp(sub, "render") == 0, &m, &r);
    if (loaded) return loaded > 0 && fflush(stdout) == 0 ? 0 : 2;
    int rc = 0;
    if ((strcmp(sub, "check") == 0 || strcmp(sub, "render") == 0) && price(&o, r)) {
        check_free(r);
        model_free(m);
        return 2;
    }
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
