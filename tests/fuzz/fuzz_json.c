/* fuzz_json.c — libFuzzer harness for json_read (src/util/jsonread.h) against jansson.
 *
 * The input is JSON text of any bytes. For each set of decoding flags quarry uses,
 * json_read and json_loadb must agree: both refuse it with the same error text and
 * position, or both read values that are equal and serialise alike (key order too).
 * The fixed cases and a seeded mutation run of the same check are in
 * tests/unit/util/test_jsonread.c, which make test runs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonread.h"

#define CHECK(c)                                                                      \
    do {                                                                              \
        if (!(c)) {                                                                   \
            fprintf(stderr, "fuzz_json: check failed at line %d: %s\n", __LINE__, #c); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

static const size_t flag_sets[] = {0, JSON_ALLOW_NUL, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, JSON_DECODE_ANY};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
        json_error_t ours, theirs;
        memset(&ours, 0, sizeof ours);
        memset(&theirs, 0, sizeof theirs);
        json_t *a = json_read(text, size, flag_sets[f], &ours), *b = json_loadb(text, size, flag_sets[f], &theirs);
        CHECK((a == NULL) == (b == NULL));
        if (a) {
            CHECK(json_equal(a, b));
            char *da = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY), *db = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
            CHECK(da && db && strcmp(da, db) == 0);
            free(da);
            free(db);
        } else {
            CHECK(strcmp(ours.text, theirs.text) == 0 && ours.line == theirs.line && ours.column == theirs.column &&
                  ours.position == theirs.position);
        }
        json_decref(a);
        json_decref(b);
    }
    return 0;
}
