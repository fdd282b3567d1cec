/* test_storedrow.c — stored rows read into flat nodes (cql/storedrow.h) against jansson.
 *
 * Every text jansson reads as an object must be read, into the same value: by the row
 * reader's own pass, or by jansson when that pass declines it. Texts are hand-picked edge
 * cases (escapes, \u escapes, nesting, numbers, white space, strings longer than the
 * scan's widths) and mutations of a stored row; whatever jansson refuses must give an
 * answer, never a crash (run under ASan). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cql/storedrow.h"
#include "util/jsonread.h"

#include "check.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Distinct keys among object node i's members. */
static size_t distinct_keys(const cql_srow *r, uint32_t i)
{
    size_t n = 0;
    const cql_snode *o = cql_srow_node(r, i);
    for (uint32_t m = i + 1; m < o->end; m = cql_srow_node(r, m)->end) {
        size_t klen;
        const char *k = cql_srow_key(r, m, &klen);
        if (cql_srow_member(r, i, k, klen) == m) n++; /* the last of its name */
    }
    return n;
}

/* Whether node i of r holds the value v. */
static int same(const json_t *v, const cql_srow *r, uint32_t i)
{
    if (i == CQL_SNONE) return 0;
    const cql_snode *nd = cql_srow_node(r, i);
    size_t len;
    const char *s;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (nd->kind != CQL_SN_OBJECT || distinct_keys(r, i) != json_object_size(v)) return 0;
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
        {
            if (!same(m, r, cql_srow_member(r, i, k, strlen(k)))) return 0;
        }
        return 1;
    }
    case JSON_ARRAY:
        if (nd->kind != CQL_SN_ARRAY || nd->n != json_array_size(v)) return 0;
        for (size_t k = 0; k < json_array_size(v); k++)
            if (!same(json_array_get(v, k), r, cql_srow_at(r, i, (uint32_t)k))) return 0;
        return 1;
    case JSON_STRING:
        s = cql_srow_str(r, i, &len);
        return s && len == json_string_length(v) && memcmp(s, json_string_value(v), len) == 0;
    case JSON_INTEGER:
    case JSON_REAL:
        return nd->kind == CQL_SN_NUMBER &&
               strtod(r->text.data + nd->str, NULL) == json_number_value(v);
    case JSON_TRUE:
        return nd->kind == CQL_SN_TRUE;
    case JSON_FALSE:
        return nd->kind == CQL_SN_FALSE;
    default:
        return nd->kind == CQL_SN_NULL;
    }
}

/* Reads text both ways: jansson's object must be read the same; 1 when it was one. */
static int agree(cql_srow *r, const char *text, size_t len)
{
    json_t *v = json_loadb(text, len, JSON_ALLOW_NUL, NULL);
    int rc = cql_srow_parse(r, text, len);
    if (json_is_object(v)) {
        CHECK(rc == 0, "jansson reads %.*s, the row reader does not", (int)len, text);
        if (rc == 0) CHECK(same(v, r, 0), "%.*s read differently", (int)len, text);
    }
    int object = json_is_object(v);
    json_decref(v);
    return object;
}

/* A picker for the tests: reads the members whose key does not start with 's', and
 * records each member's node in the slot of its key's length (up to 7). */
static int pick_test(const void *arg, cql_srow *r, const char *key, size_t klen, uint32_t node)
{
    (void)arg;
    if (klen < r->nslot) r->slot[klen] = node;
    return klen == 0 || key[0] != 's';
}

/* Reads text with the picker, from the text and from jansson's value: each member of
 * jansson's object is read the same, or passed over, as the picker chose, and the slots
 * hold the last member of each length. */
static void agree_picked(cql_srow *r, const char *text, size_t len)
{
    json_t *v = json_loadb(text, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        return;
    }
    const cql_srow_picker p = {.pick = pick_test, .nslot = 8};
    for (int from = 0; from < 2; from++) {
        int rc =
            from ? cql_srow_from_json_picked(r, v, &p) : cql_srow_parse_picked(r, text, len, &p);
        CHECK(rc == 0, "picked read of %.*s (%s)", (int)len, text, from ? "jansson" : "text");
        if (rc != 0) continue;
        CHECK(r->nslot == 8, "the picker's slots");
        uint32_t last[8];
        for (int k = 0; k < 8; k++)
            last[k] = CQL_SNONE;
        const cql_snode *top = cql_srow_node(r, 0);
        for (uint32_t m = 1; m < top->end; m = cql_srow_node(r, m)->end) {
            size_t klen;
            const char *k = cql_srow_key(r, m, &klen);
            if (klen < 8) last[klen] = m;
            json_t *jm = json_object_getn(v, k, klen);
            if (cql_srow_member(r, 0, k, klen) != m) continue; /* a duplicate, overridden */
            if (klen && k[0] == 's')
                CHECK(cql_srow_node(r, m)->kind == CQL_SN_SKIPPED &&
                          cql_srow_node(r, m)->end == m + 1,
                      "%.*s: member %s passed over", (int)len, text, k);
            else
                CHECK(same(jm, r, m), "%.*s: member %s read as jansson reads it", (int)len, text,
                      k);
        }
        for (int k = 0; k < 8; k++)
            CHECK(r->slot[k] == last[k], "%.*s: slot %d", (int)len, text, k);
    }
    json_decref(v);
}

static const char *const cases[] = {
    "{}",
    " {\"a\" : {\"S\" : \"x\"} } \n",
    "{\"$pk\":{\"B\":\"cGFydA==\"},\"$ck\":{\"B\":\"AQ==\"},\"v\":{\"N\":\"-1.5e3\"}}",
    "{\"e\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"}",
    "{\"k\\n\\\"\":\"v\"}",
    "{\"u\":\"caf\\u00e9 \\ud83d\\ude00\"}",
    "{\"z\":\"a\\u0000b\"}",
    "{\"l\":{\"L\":[{\"S\":\"a\"},{\"NULL\":true},{\"BOOL\":false},[],{},[[[1]]]]}}",
    "{\"n\":[0,-0,1.25,1e5,-7,1234567890123456789]}",
    "{\"t\":true,\"f\":false,\"x\":null}",
    "{\"dup\":1,\"dup\":{\"S\":\"second\"}}",
    "{\"\":\"\"}",
    "{\"a\":\"\\\\u0041 is not an escape\"}",
    "{\"deep\":[[[[[[[[[[[[[[[[{\"a\":[[[[[[[[\"b\"]]]]]]]]}]]]]]]]]]]]]]]]]}",
    "{\"utf8\":\"\xc3\xa9\xe2\x82\xac\"}",
    "{\"skip\":{\"M\":{\"a\":[1,{\"b\":\"}]\\\"\"}]}},\"keep\":{\"S\":\"x\"},\"s\":\"str\",\"sn\":"
    "5,"
    "\"st\":[],\"last\":{\"N\":\"1\"}}",
    "{\"sv\":\"caf\\u00e9\",\"kv\":[\"\\u0041\"]}",
    /* strings longer than the scan's 16 and 8 bytes, what stops it at every place */
    "{\"long\":\"0123456789abcdef0123456789abcdef\",\"0123456789abcdefg\":1}",
    "{\"esc\":\"0123456789abcdef\\\"0123456\\\\89abcdef\\n\"}",
    "{\"e7\":\"0123456\\tabc\",\"e15\":\"0123456789abcde\\\"\",\"e16\":\"0123456789abcdef\\/\"}",
    "{\"hi\":"
    "\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x82\xac\xe2\x82"
    "\xac\"}",
    "{\"skipme\":{\"M\":{\"0123456789abcdef0123\":{\"S\":\"}}]]0123456789abcdef\\\"{{\"}}},\"k\":"
    "2}",
};

static const char *const refused[] = {
    "",
    "[]",
    "\"s\"",
    "{",
    "{\"a\":}",
    "{\"a\":1}x",
    "{\"a\":1}{}",
    "{\"a\" 1}",
    "{1:2}",
    "{\"a\":tru}",
    "{\"a\":\"unterminated}",
    "{\"a\":\"0123456789abcdef0123456789\x01"
    "abc\"}",
    "{\"a\":\"0123456789abc\x1f\"}",
    "{\"a\":\"0123456789abcdef0123456789abcdef",
    "{\"a\":\"0123456789abcdef\\x\"}",
};

int main(void)
{
    cql_srow r;
    cql_srow_init(&r);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK(agree(&r, cases[i], strlen(cases[i])), "case %zu is an object to jansson", i);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        agree_picked(&r, cases[i], strlen(cases[i]));
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        json_t *v = json_loadb(refused[i], strlen(refused[i]), 0, NULL);
        CHECK(!json_is_object(v), "jansson reads no object from %s", refused[i]);
        json_decref(v);
        CHECK(cql_srow_parse(&r, refused[i], strlen(refused[i])) != 0, "%s is refused", refused[i]);
    }

    /* as deep as a row may be, and one level deeper: an AttributeValue innermost is an
     * object like any other, with or without a \u escape elsewhere in the row */
    for (int extra = 0; extra < 2; extra++)
        for (int escape = 0; escape < 2; escape++) {
            char deep[1024];
            int arrays = CQL_SROW_MAX_DEPTH - 2 + extra, n = 0;
            n += snprintf(deep + n, sizeof deep - (size_t)n,
                          "{%s\"a\":", escape ? "\"\\u0065\":1," : "");
            for (int i = 0; i < arrays; i++)
                deep[n++] = '[';
            n += snprintf(deep + n, sizeof deep - (size_t)n, "{\"S\":\"x\"}");
            for (int i = 0; i < arrays; i++)
                deep[n++] = ']';
            deep[n++] = '}';
            CHECK((cql_srow_parse(&r, deep, (size_t)n) == 0) == !extra,
                  "a row %d levels deep (escape %d)", CQL_SROW_MAX_DEPTH + extra, escape);
        }

    /* a row read, kept (swapped away) while another is read into the other's memory */
    cql_srow keep;
    cql_srow_init(&keep);
    const char *a = "{\"$ck\":{\"B\":\"AA==\"},\"s\":{\"S\":\"static\"}}";
    CHECK_THAT(cql_srow_parse(&r, a, strlen(a)) == 0);
    cql_srow_swap(&r, &keep);
    CHECK_THAT(cql_srow_parse(&r, cases[2], strlen(cases[2])) == 0);
    size_t len;
    const char *s =
        cql_srow_str(&keep, cql_srow_get(&keep, cql_srow_get(&keep, 0, "s"), "S"), &len);
    CHECK(s && strcmp(s, "static") == 0, "the kept row is intact");
    const char *tag = NULL;
    uint32_t x = cql_srow_tagged(&r, cql_srow_get(&r, 0, "v"), &tag);
    CHECK(x != CQL_SNONE && strcmp(tag, "N") == 0, "a tagged AttributeValue");
    CHECK_THAT(cql_srow_get(&r, 0, "missing") == CQL_SNONE);
    CHECK_THAT(cql_srow_get(&r, CQL_SNONE, "v") == CQL_SNONE);
    CHECK_THAT(cql_srow_at(&r, 0, 99) == CQL_SNONE);
    cql_srow_free(&keep);

    /* a jansson value of another kind sits in an object, under "" */
    json_t *str = json_string("alone");
    CHECK_THAT(cql_srow_from_json(&r, str) == 0 && same(str, &r, cql_srow_get(&r, 0, "")));
    json_decref(str);

    /* mutations of a stored row */
    const char *row = "{\"$pk\":{\"B\":\"cGFydDAwMDAx\"},\"$ck\":{\"B\":\"AYAAAAM=\"},"
                      "\"pk\":{\"S\":\"part\\\"1\"},\"sk\":{\"N\":\"3\"},\"m\":{\"M\":{\"k\":"
                      "{\"L\":[{\"S\":\"a\"},{\"NULL\":true}]}}},\"$ts\":{\"M\":{\"sk\":{\"N\":"
                      "\"1733212345678901\"}}},\"$row\":{\"N\":\"1733212345678901\"}}";
    static const char alphabet[] = "{}[]\":,\\ u0a9-.etrfnl";
    size_t objects = 0;
    for (int round = 0; round < 20000; round++) {
        char text[512];
        size_t n = strlen(row);
        memcpy(text, row, n);
        int edits = 1 + (int)(rnd() % 3);
        for (int e = 0; e < edits; e++) {
            size_t at = rnd() % n;
            switch (rnd() % 3) {
            case 0:
                text[at] = alphabet[rnd() % (sizeof alphabet - 1)];
                break;
            case 1:
                n = at; /* cut short */
                break;
            default:
                text[at] = (char)(rnd() & 0xff);
                break;
            }
            if (n == 0) break;
        }
        objects += (size_t)agree(&r, text, n);
        agree_picked(&r, text, n);
    }
    CHECK(objects > 100, "some mutations are still objects (%zu)", objects);
    cql_srow_free(&r);
    printf("test_storedrow: %d checks, %d failed\n", check_count, check_failures);
    return check_failures != 0;
}
