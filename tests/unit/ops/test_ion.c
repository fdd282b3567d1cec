/* test_ion.c — the Ion text of exports and imports (ops/ion.h).
 *
 * Numbers are written as DynamoDB writes them (103 as "103.", 600 as "6d2") and every
 * AttributeValue written reads back equal; Ion that a hand or another writer lays out
 * differently (ints, exponents, underscores, hex, quoted names, comments, escapes, several
 * lines) reads as the same values; what DynamoDB has no type for, or broken text, is an
 * error naming the column, and the reader then goes on at the next line. */
#include <string.h>

#include "ops/ion.h"

#include "check.h"

static char *write_value(const char *av_text)
{
    json_t *av = json_loads(av_text, 0, NULL);
    buf b;
    buf_init(&b, 0);
    int rc = av ? ion_write_value(&b, av) : -1;
    buf_putc(&b, 0);
    json_decref(av);
    if (rc) {
        buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

static void check_number(const char *n, const char *ion)
{
    char av[128];
    snprintf(av, sizeof av, "{\"N\":\"%s\"}", n);
    char *got = write_value(av);
    CHECK(got && strcmp(got, ion) == 0, "N %s: got %s, want %s", n, got ? got : "(error)", ion);
    free(got);
}

/* text, one struct, reads as the map want (JSON). */
static void check_reads(const char *text, const char *want)
{
    size_t pos = 0;
    json_t *got = NULL, *w = json_loads(want, 0, NULL);
    char msg[300] = "";
    int rc = ion_read_next(text, strlen(text), &pos, &got, msg, sizeof msg);
    char *g = got ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    CHECK(rc == 1 && json_equal(got, w), "%s:\n  got %s (%s)\n  want %s", text, g ? g : "-", msg,
          want);
    free(g);
    json_decref(got);
    json_decref(w);
}

static void check_refused(const char *text, const char *words)
{
    size_t pos = 0;
    json_t *got = NULL;
    char msg[300] = "";
    int rc = ion_read_next(text, strlen(text), &pos, &got, msg, sizeof msg);
    CHECK(rc == -1 && strstr(msg, words) && strstr(msg, "column"), "%s: rc %d, message '%s'", text,
          rc, msg);
    json_decref(got);
}

int main(void)
{
    check_number("103", "103.");
    check_number("600", "6d2");
    check_number("2000", "2d3");
    check_number("0", "0.");
    check_number("1.5", "1.5");
    check_number("-0.25", "-0.25");
    check_number("0.000001", "0.000001");
    check_number("1E-130", "1d-130");
    check_number("-12.5e3", "-125d2");
    check_number("9.9999999999999999999999999999999999999E+125",
                 "99999999999999999999999999999999999999d88");

    /* Every type written reads back as it was. */
    static const char *const items[] = {
        "{\"s\":{\"S\":\"a \\\"q\\\" \\\\ \\n\\t\\u0001 \\u00e9\"},\"n\":{\"N\":\"-3.25\"}}",
        "{\"b\":{\"B\":\"AAEC/w==\"},\"t\":{\"BOOL\":true},\"f\":{\"BOOL\":false},"
        "\"z\":{\"NULL\":true}}",
        "{\"ss\":{\"SS\":[\"x\",\"y z\"]},\"ns\":{\"NS\":[\"1\",\"600\",\"0.5\"]},"
        "\"bs\":{\"BS\":[\"eA==\",\"eXo=\"]}}",
        "{\"l\":{\"L\":[{\"S\":\"x\"},{\"L\":[]},{\"M\":{}}]},\"m\":{\"M\":{\"weird name!\":{\"S\":"
        "\"v\"},\"null\":{\"N\":\"1\"},\"$x\":{\"S\":\"y\"}}}}",
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        json_t *item = json_loads(items[i], 0, NULL);
        buf b;
        buf_init(&b, 0);
        buf_puts(&b, "$ion_1_0 ");
        CHECK(ion_write_struct(&b, item) == 0, "item %zu not written", i);
        buf_putc(&b, 0);
        check_reads((const char *)b.data, items[i]);
        buf_free(&b);
        json_decref(item);
    }

    /* Ion laid out otherwise reads as the same values. */
    check_reads("{a:103, b:6d2, c:1_000, d:0x1F, e:1.5e0, f:-0d0}",
                "{\"a\":{\"N\":\"103\"},\"b\":{\"N\":\"600\"},\"c\":{\"N\":\"1000\"},"
                "\"d\":{\"N\":\"31\"},\"e\":{\"N\":\"1.5\"},\"f\":{\"N\":\"0\"}}");
    check_reads("$ion_1_0\n// a comment\n{ 'quoted name' : \"v\", \"string name\": '''long''' "
                "'''string''', /* c */ n: null.struct, }",
                "{\"quoted name\":{\"S\":\"v\"},\"string name\":{\"S\":\"longstring\"},"
                "\"n\":{\"NULL\":true}}");
    check_reads("{s:\"\\x41\\u00e9\\U0001F600\"}", "{\"s\":{\"S\":\"A\\u00e9\\ud83d\\ude00\"}}");
    check_reads("{set:'$dynamodb_SS'::[\"a\"]}", "{\"set\":{\"SS\":[\"a\"]}}");

    check_refused("[1]", "struct was expected");
    check_refused("{a:2007-02-23T12:14Z}", "timestamp");
    check_refused("{a:sym}", "symbol");
    check_refused("{a:$dynamodb_NS::[\"x\"]}", "not of its type");
    check_refused("{a:$dynamodb_SS::\"x\"}", "not a list");
    check_refused("{a:1.5d}", "not a DynamoDB number");
    check_refused("{a:{{\"clob\"}}}", "clob");
    check_refused("{a:\"open", "unterminated");
    check_refused("{a:1 b:2}", "',' or '}'");
    check_refused("{a:+inf}", "infinity");

    /* After a broken value the reader goes on at the next line. */
    const char *two = "{a:oops}\n$ion_1_0 {b:true}\n";
    size_t pos = 0;
    json_t *v = NULL;
    char msg[300];
    CHECK_THAT(ion_read_next(two, strlen(two), &pos, &v, msg, sizeof msg) == -1);
    CHECK_THAT(ion_read_next(two, strlen(two), &pos, &v, msg, sizeof msg) == 1);
    CHECK_THAT(json_is_true(json_object_get(json_object_get(v, "b"), "BOOL")));
    json_decref(v);
    CHECK_THAT(ion_read_next(two, strlen(two), &pos, &v, msg, sizeof msg) == 0);

    if (check_failures)
        fprintf(stderr, "test_ion: %d of %d checks failed\n", check_failures, check_count);
    else
        printf("test_ion: %d checks ok\n", check_count);
    return check_failures != 0;
}
