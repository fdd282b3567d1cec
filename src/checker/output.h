/* output.h — everything quarry derives from a checked model: the check report (text, JSON), the
 * rendered layout, table definitions for CloudFormation, Terraform, CQL and NoSQL Workbench,
 * the Workbench importer, and apply. One file per format implements these; none decides whether
 * the model is good (check.c does), exits or parses arguments (src/cli/model.c does). */
#ifndef QR_CHECKER_OUTPUT_H
#define QR_CHECKER_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

#include "checker/check.h"

/* report.c: the check report for people (ANSI colours when color is set) or as JSON
 * (a new reference the caller decrefs; NULL when memory runs out). */
void model_report_text(const ck_report *r, FILE *f, int color);
json_t *model_report_json(const ck_report *r);

/* render.c: the single-table layout with example items and each index's view. */
void model_render_text(const ck_report *r, FILE *f);
void model_render_html(const ck_report *r, FILE *f);

/* export_*.c: table definitions. Return 0, or -1 with err set. */
int model_export_cloudformation(const qr_model *m, FILE *f, qr_err *err);
int model_export_terraform(const qr_model *m, FILE *f, qr_err *err);
int model_export_cql(const ck_report *r, FILE *f, qr_err *err);
int model_export_workbench(const qr_model *m, FILE *f, qr_err *err);

/* workbench.c: reads a NoSQL Workbench model (JSON at path) and writes the equivalent
 * model file (YAML) to f. */
int model_import_workbench(const char *path, FILE *f, qr_err *err);

/* The CreateTable request body for table t (a new reference), shared by the exporters
 * and apply. Streams are enabled when a "stream" update strategy reads from the table. */
json_t *model_export_create_table(const qr_model *m, const m_table *t);

/* apply.c: creates missing tables, adds missing GSIs and enables TTL through the
 * DynamoDB API at endpoint, logging each step to log. */
int model_apply(const qr_model *m, const char *endpoint, FILE *log, qr_err *err);

#endif
