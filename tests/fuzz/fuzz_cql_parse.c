/* fuzz_cql_parse.c — libFuzzer harness for the CQL parser and printer (src/cql).
 *
 * The input is CQL text of its exact length (no NUL after it), parsed as one statement
 * (cql_parse) and as a script (cql_parse_script). Either may refuse it, with an error code
 * and a non-empty message; what parses must print as text that parses again to the same
 * print with as many bind markers, numbered 0.. in order. Not a test of Cassandra's exact
 * messages: those are in tests/unit/cql/test_cql_parse.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/ast.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_cql_parse: check failed at line %d: %s\n", __LINE__, #c);        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void check_error(const cql_parse_error *e)
{
    CHECK(e->code == CQL_ERR_SYNTAX || e->code == CQL_ERR_INVALID || e->code == CQL_ERR_SERVER);
    CHECK(memchr(e->msg, '\0', sizeof e->msg) != NULL);
    CHECK(e->msg[0] != '\0');
}

/* print → parse → print gives the same text and the same markers. */
static void round_trip(const cql_stmt *s, size_t nbinds, int counted)
{
    char *text = cql_print(s);
    CHECK(text != NULL);
    cql_parsed again;
    cql_parse_error e;
    if (cql_parse(text, strlen(text), &again, &e) != 0) {
        fprintf(stderr, "fuzz_cql_parse: the print does not parse: %s\n  %s\n", e.msg, text);
        abort();
    }
    CHECK(again.nstmts == 1);
    char *text2 = cql_print(again.stmts[0]);
    if (text2 == NULL || strcmp(text, text2) != 0) {
        fprintf(stderr, "fuzz_cql_parse: print changed:\n  %s\n  %s\n", text, text2);
        abort();
    }
    if (counted) CHECK(again.nbinds == nbinds);
    for (size_t i = 0; i < again.nbinds; i++)
        CHECK(again.binds[i].node->bind == (int)i);
    free(text2);
    free(text);
    cql_parsed_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes, so reading past the end is caught */
    char *text = malloc(size ? size : 1);
    if (text == NULL) return 0;
    if (size) memcpy(text, data, size);

    cql_parsed p;
    cql_parse_error e;
    if (cql_parse(text, size, &p, &e) == 0) {
        CHECK(p.nstmts == 1);
        for (size_t i = 0; i < p.nbinds; i++) {
            CHECK(p.binds[i].node->bind == (int)i);
            CHECK(p.binds[i].offset < size);
        }
        round_trip(p.stmts[0], p.nbinds, 1);
        cql_parsed_free(&p);
    } else {
        check_error(&e);
        CHECK(p.nstmts == 0);
    }

    if (cql_parse_script(text, size, &p, &e) == 0) {
        for (size_t i = 0; i < p.nstmts; i++) {
            CHECK(p.stmts[i]->offset + p.stmts[i]->length <= size);
            round_trip(p.stmts[i], 0, 0);
        }
        cql_parsed_free(&p);
    } else {
        check_error(&e);
    }
    free(text);
    return 0;
}
