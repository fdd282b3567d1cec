/* run.h — `quarry model check --run`: every access pattern's planned operation executed on
 * sample items, in a private in-memory database, and what came back compared with what the
 * model declares (its entities, its order, its limit, the attributes it reads). It takes the
 * plans check.c made; it neither plans nor judges the model's design by estimates. */
#ifndef QR_CHECKER_RUN_H
#define QR_CHECKER_RUN_H

#include <jansson.h>
#include <stdio.h>

#include "checker/check.h"

/* The fixed seed of the sample values: the same model gives the same items every run. */
#define RUN_SEED 53

typedef enum run_verdict { RUN_PASS, RUN_FAIL, RUN_SKIPPED } run_verdict;

typedef struct run_result {
    const m_pattern *pattern;
    run_verdict verdict;
    const char *problem; /* on RUN_FAIL: "entity", "condition", "order", "limit", "missing",
                            "projection", "write", or "table" / "load" when the database
                            refused the table or a sample item; else NULL */
    const char *ran;     /* what ran, with the sample values: "Query table T: PK = ..." */
    const char *got;     /* what came back: "4 items: 3 Order, 1 OrderItem" */
    const char *message; /* on RUN_FAIL what was wrong, on RUN_SKIPPED why; else NULL */
    json_t *request;     /* the request body sent (owned), or NULL when nothing ran */
    size_t returned, expected;
} run_result;

typedef struct run_report {
    ck_arena arena;      /* owns the strings */
    run_result *results; /* one per plan, in file order */
    size_t nresults;
    size_t items;    /* sample items loaded */
    size_t entities; /* entities they are of */
    int passed, failed, skipped;
} run_report;

/* Generates the sample items of r's model, loads them into an in-memory database with the
 * model's tables and indexes, runs each plan of r and compares. On success *out is a report
 * the caller frees with model_run_free (failing patterns, and tables or items the database
 * refuses, do not make this fail); -1 with err set when the database cannot be opened or
 * memory runs out. */
int model_run(const ck_report *r, run_report **out, qr_err *err);
void model_run_free(run_report *run);

/* The run for people (after the check's report), and as --json's "run" member (a new
 * reference; NULL when memory runs out). */
void model_run_text(const run_report *run, FILE *f, int color);
json_t *model_run_json(const run_report *run);

#endif
