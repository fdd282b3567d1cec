/* output.h — everything quarry derives from a checked model: the check report (text, JSON), the
 * rendered layout, table definitions for CloudFormation, Terraform, CQL and NoSQL Workbench,
 * ElectroDB and dynamodb-toolbox entities, the Workbench importer, and apply. One file per format
 * implements these; none decides whether the model is good (check.c does), exits or parses
 * arguments (src/cli/model.c does). */
#ifndef QR_CHECKER_OUTPUT_H
#define QR_CHECKER_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

#include "checker/check.h"

/* report.c: the check report for people (ANSI colours when color is set) or as JSON
 * (a new reference the caller decrefs; NULL when memory runs out). */
void model_report_text(const ck_report *r, FILE *f, int color);
/* The monthly costs of check_price (nothing when r->money is NULL), for check and render. */
void model_money_text(const ck_report *r, FILE *f);
/* The price table's file as reports name it: the shipped one as share/quarry/prices.yaml
 * wherever it was found, another as given. */
const char *model_prices_name(const model_prices *p);
json_t *model_report_json(const ck_report *r);

/* render.c: the single-table layout with example items and each index's view; the HTML
 * page shows the check's findings too. */
void model_render_text(const ck_report *r, FILE *f);
void model_render_html(const ck_report *r, FILE *f);
/* The HTML page of a model file that does not load: errs (in file order) listed, the
 * layout of the parts that load (model_load_partial), and each error beside its line of
 * the file at path. */
void model_render_html_load_errors(const char *path, const model_errors *errs, FILE *f);

/* export_*.c: table definitions. Return 0, or -1 with err set. */
int model_export_cloudformation(const qr_model *m, FILE *f, qr_err *err);
int model_export_terraform(const qr_model *m, FILE *f, qr_err *err);
int model_export_cql(const ck_report *r, FILE *f, qr_err *err);
/* export_cql.c: name as CQL reads it back (bare when it is a lower-case word that is no
 * reserved keyword, else double-quoted with quotes doubled) into buf, cut to size; the
 * length it needs, as snprintf answers. */
size_t model_cql_name(char *buf, size_t size, const char *name);
int model_export_workbench(const qr_model *m, FILE *f, qr_err *err);
int model_export_electrodb(const qr_model *m, FILE *f, qr_err *err);
/* export_dynamodb_toolbox.c: nothing is written when the model has what the library cannot
 * express (err says what). */
int model_export_dynamodb_toolbox(const qr_model *m, FILE *f, qr_err *err);

/* s in double quotes with \\, \" and control characters (\xNN) escaped: a YAML
 * double-quoted scalar and a JavaScript string literal alike. */
void model_write_quoted(FILE *f, const char *s);

/* workbench.c: reads a NoSQL Workbench model (JSON at path) and writes the equivalent
 * model file (YAML) to f. */
int model_import_workbench(const char *path, FILE *f, qr_err *err);

/* import_cql.c: reads a CQL schema (and, when queries is not NULL, the application's
 * queries) and writes the model file (YAML) to f: a table and an entity per CQL table, an
 * access pattern per statement. Errors name "FILE:LINE:COL". */
int model_import_cql(const char *schema, const char *queries, FILE *f, qr_err *err);
/* The same from texts in memory (schema_len and queries_len bytes, not NUL-terminated;
 * queries NULL for none); the names are the files' for messages. */
int model_import_cql_text(const char *schema_name, const char *schema, size_t schema_len,
                          const char *queries_name, const char *queries, size_t queries_len,
                          FILE *f, qr_err *err);

/* The CreateTable request body for table t (a new reference), shared by the exporters
 * and apply. Streams are enabled when a "stream" update strategy reads from the table. */
json_t *model_export_create_table(const qr_model *m, const m_table *t);

/* apply.c: creates missing tables, adds missing GSIs and enables TTL through the
 * DynamoDB API at endpoint, logging each step to log. */
int model_apply(const qr_model *m, const char *endpoint, FILE *log, qr_err *err);

/* observe.c: `quarry model observe`, and the price table (model_prices, check.h) it and
 * check_price use, read from share/quarry/prices.yaml's form. */
int model_prices_load(const char *path, model_prices *out, qr_err *err);
/* Reads QuarryDescribeModel (and, for each table, its hottest partition keys) from the
 * server at endpoint and sets the declared figures beside the observed ones, with monthly
 * costs at prices: *out a new object (--json's form). m, when not NULL, keeps only its
 * tables and gives the declared hottest shares. */
int model_observe(const char *endpoint, const qr_model *m, const model_prices *prices, json_t **out,
                  qr_err *err);
void model_observe_text(const json_t *report, FILE *f);
/* Puts the observed rate (and a Query's observed result size) of each pattern of an
 * observe --json report into m's patterns, for check_run: returns how many patterns took
 * figures, or -1 with err set when the report is not one. */
int model_apply_observed(qr_model *m, const json_t *observed, qr_err *err);

#endif
