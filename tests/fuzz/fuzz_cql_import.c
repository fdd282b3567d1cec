/* fuzz_cql_import.c — libFuzzer harness for `quarry model import --cql` (src/checker/
 * import_cql.c). The input is a CQL schema, then, after the first NUL byte if there is one,
 * the queries. The import may refuse it, with a message naming a position; what it accepts
 * must be a model that loads (the importer loads it back itself, and fails with an internal
 * error if it does not) and checks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker/check.h"
#include "checker/output.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_cql_import: check failed at line %d: %s\n", __LINE__, #c);       \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t slen = nul ? (size_t)(nul - text) : size;
    const char *queries = nul ? nul + 1 : NULL;
    size_t qlen = nul ? size - slen - 1 : 0;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    CHECK(f != NULL);
    qr_err err;
    err_init(&err);
    int rc = model_import_cql_text("schema.cql", text, slen, "queries.cql", queries, qlen, f, &err);
    CHECK(fclose(f) == 0);
    if (rc) {
        CHECK(err.type != NULL && err.msg[0] != '\0');
        CHECK(strncmp(err.msg, "schema.cql", 10) == 0 || strncmp(err.msg, "queries.cql", 11) == 0);
        /* bad input is a ValidationException; an internal error would be the importer's
         * own output failing to load */
        if (strcmp(err.type, QR_E_VALIDATION) != 0) {
            fprintf(stderr, "fuzz_cql_import: %s: %s\n", err.type, err.msg);
            abort();
        }
        err_clear(&err);
    } else {
        qr_model *m = NULL;
        ck_report *r = NULL;
        CHECK(model_load("model.yaml", out, len, &m, &err) == 0);
        CHECK(check_run(m, &r, &err) == 0);
        check_free(r);
        model_free(m);
    }
    free(out);
    return 0;
}
