/* fuzz_storedrow.c — libFuzzer harness for the CQL stored-row reader (src/cql/storedrow.c)
 * against jansson.
 *
 * Byte 0 seeds a picker that passes over about a quarter of the top object's members (by
 * their key); the rest is the row's text, read with its exact length. It is read four ways:
 * as text into a new row, and with the picker into a row holding an earlier, larger row;
 * and jansson's value of it, with and without the picker. Where jansson reads an object no
 * deeper than CQL_SROW_MAX_DEPTH, every read succeeds, the row is well formed and holds
 * jansson's value (members passed over excepted), and a row swapped away stays intact while
 * another is read. Deeper objects are refused by every read. Where jansson refuses the text
 * for a reason the reader does not share (it leaves UTF-8 unchecked and numbers as text),
 * the reader refuses it too. It does not test the pickers of exec_row.c. Seeds: stored rows
 * of CQL tables (gen_seeds.py). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql/storedrow.h"

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_storedrow: check failed at line %d: %s: ", __LINE__, #c);        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A stored row of the shape CQL tables write, read before the input into the reused row so
 * that its memory is larger and holds other nodes and text. */
static const char earlier_row[] =
    "{\"$pk\":{\"B\":\"cGFydDAwMDAx\"},\"$ck\":{\"B\":\"AYAAAAM=\"},\"pk\":{\"S\":\"part\\\"1\"},"
    "\"sk\":{\"N\":\"3\"},\"m\":{\"M\":{\"k\":{\"L\":[{\"S\":\"a\"},{\"NULL\":true}]}}},"
    "\"l\":{\"L\":[{\"S\":\"0123456789abcdef0123456789abcdef\"},{\"N\":\"-1.5e3\"},{\"B\":\"AA==\"}"
    ","
    "{\"BOOL\":false},{\"SS\":[\"x\",\"y\"]}]},\"$ts\":{\"M\":{\"sk\":{\"N\":\"1733212345678901\"},"
    "\"m\":{\"N\":\"1733212345678901\"}}},\"$row\":{\"N\":\"1733212345678901\"},\"n\":[1,2.5,-0,"
    "true,false,null,{},[]]}";

#define NSLOT 8

/* Passes over the members whose key hashes, with the seed, to 0 mod 4; records each
 * member's node in the slot of its key's length mod NSLOT. */
static int pick_some(const void *arg, cql_srow *r, const char *key, size_t klen, uint32_t node)
{
    uint32_t h = 2166136261u ^ *(const uint8_t *)arg;
    for (size_t i = 0; i < klen; i++)
        h = (h ^ (uint8_t)key[i]) * 16777619u;
    CHECK(key[klen] == '\0', "the key handed to the picker ends with a NUL");
    r->slot[klen % NSLOT] = node;
    return (h >> 7) % 4 != 0;
}

static int passed_over(uint8_t seed, const char *key, size_t klen)
{
    cql_srow r = {0};
    uint32_t slot[NSLOT];
    r.slot = slot;
    return !pick_some(&seed, &r, key, klen, 0);
}

/* The deepest nesting of objects and arrays in v (1 for an empty object). */
static size_t depth_of(const json_t *v)
{
    size_t d = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
        {
            size_t x = depth_of(m);
            if (x > d) d = x;
        }
        return d + 1;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            size_t x = depth_of(json_array_get(v, i));
            if (x > d) d = x;
        }
        return d + 1;
    }
    return 0;
}

/* The nodes of container i are well formed: its members follow it, n of them, each inside
 * it, their keys and strings inside the text and ended by a NUL. */
static void check_tree(const cql_srow *r, uint32_t i)
{
    const cql_snode *nd = cql_srow_node(r, i);
    CHECK(nd->end > i && nd->end <= r->n, "node %u ends at %u of %u", i, nd->end, r->n);
    if (nd->kind == CQL_SN_STRING || nd->kind == CQL_SN_NUMBER) {
        CHECK((size_t)nd->str + nd->slen < r->text.len && r->text.data[nd->str + nd->slen] == '\0',
              "node %u's text inside the row's, ended by a NUL", i);
        CHECK(nd->kind == CQL_SN_STRING || nd->slen > 0, "node %u: an empty number", i);
    }
    if (nd->kind != CQL_SN_OBJECT && nd->kind != CQL_SN_ARRAY) {
        CHECK(nd->end == i + 1, "scalar node %u has nothing under it", i);
        return;
    }
    uint32_t count = 0, m = i + 1;
    for (; m < nd->end; m = cql_srow_node(r, m)->end) {
        CHECK(cql_srow_at(r, i, count) == m, "member %u of node %u", count, i);
        const cql_snode *c = cql_srow_node(r, m);
        if (nd->kind == CQL_SN_OBJECT)
            CHECK((size_t)c->key + c->klen < r->text.len && r->text.data[c->key + c->klen] == '\0',
                  "node %u's key inside the row's text, ended by a NUL", m);
        CHECK(c->kind != CQL_SN_SKIPPED || i == 0, "only members of the top object passed over");
        check_tree(r, m);
        count++;
    }
    CHECK(m == nd->end && count == nd->n, "node %u: %u members, %u counted", i, nd->n, count);
    CHECK(cql_srow_at(r, i, count) == CQL_SNONE, "no member past the last of node %u", i);
    const char *tag = NULL;
    uint32_t t = cql_srow_tagged(r, i, &tag);
    CHECK(t == (nd->kind == CQL_SN_OBJECT && nd->n == 1 ? i + 1 : CQL_SNONE), "node %u tagged", i);
}

/* Distinct keys among object node i's members. */
static size_t distinct_keys(const cql_srow *r, uint32_t i)
{
    size_t n = 0;
    for (uint32_t m = i + 1; m < cql_srow_node(r, i)->end; m = cql_srow_node(r, m)->end) {
        size_t klen;
        const char *k = cql_srow_key(r, m, &klen);
        if (cql_srow_member(r, i, k, klen) == m) n++; /* the last of its name */
    }
    return n;
}

/* Whether a number's text is the JSON number v. */
static int same_number(const json_t *v, const char *text)
{
    char *end;
    if (json_is_integer(v)) {
        if (strpbrk(text, ".eE")) return 0;
        errno = 0;
        long long x = strtoll(text, &end, 10);
        return errno == 0 && *end == '\0' && x == json_integer_value(v);
    }
    double x = strtod(text, &end);
    return *end == '\0' && x == json_real_value(v);
}

/* Whether node i of r holds v; members of the top object that seed's picker passes over
 * (when picked) must be CQL_SN_SKIPPED instead. */
static int same(const json_t *v, const cql_srow *r, uint32_t i, int picked, uint8_t seed)
{
    if (i == CQL_SNONE) return 0;
    const cql_snode *nd = cql_srow_node(r, i);
    const char *s;
    size_t len;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (nd->kind != CQL_SN_OBJECT || distinct_keys(r, i) != json_object_size(v)) return 0;
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
        {
            uint32_t at = cql_srow_member(r, i, k, strlen(k));
            if (i == 0 && picked && passed_over(seed, k, strlen(k))) {
                if (!cql_srow_is(r, at, CQL_SN_SKIPPED)) return 0;
            } else if (!same(m, r, at, 0, seed)) {
                return 0;
            }
        }
        return 1;
    }
    case JSON_ARRAY:
        if (nd->kind != CQL_SN_ARRAY || nd->n != json_array_size(v)) return 0;
        for (size_t k = 0; k < json_array_size(v); k++)
            if (!same(json_array_get(v, k), r, cql_srow_at(r, i, (uint32_t)k), 0, seed)) return 0;
        return 1;
    case JSON_STRING:
        s = cql_srow_str(r, i, &len);
        return s && len == json_string_length(v) && memcmp(s, json_string_value(v), len) == 0;
    case JSON_INTEGER:
    case JSON_REAL:
        return nd->kind == CQL_SN_NUMBER && same_number(v, r->text.data + nd->str);
    case JSON_TRUE:
        return nd->kind == CQL_SN_TRUE;
    case JSON_FALSE:
        return nd->kind == CQL_SN_FALSE;
    default:
        return nd->kind == CQL_SN_NULL;
    }
}

/* The slots hold, for each key length mod NSLOT, the last member of the top object with
 * such a key. */
static void check_slots(const cql_srow *r)
{
    uint32_t last[NSLOT];
    for (int k = 0; k < NSLOT; k++)
        last[k] = CQL_SNONE;
    for (uint32_t m = 1; m < cql_srow_node(r, 0)->end; m = cql_srow_node(r, m)->end) {
        size_t klen;
        cql_srow_key(r, m, &klen);
        last[klen % NSLOT] = m;
    }
    CHECK(r->nslot == NSLOT, "the picker's slots");
    for (int k = 0; k < NSLOT; k++)
        CHECK(r->slot[k] == last[k], "slot %d holds %u, not %u", k, r->slot[k], last[k]);
}

/* A read that succeeded: well formed, and holding v when v is given. */
static void check_read(const cql_srow *r, const json_t *v, int picked, uint8_t seed,
                       const char *how)
{
    CHECK(r->n > 0 && cql_srow_node(r, 0)->kind == CQL_SN_OBJECT, "%s: the top node", how);
    CHECK(cql_srow_node(r, 0)->end == r->n, "%s: the top object holds every node", how);
    check_tree(r, 0);
    if (picked) check_slots(r);
    if (v) CHECK(same(v, r, 0, picked, seed), "%s: the row is not jansson's object", how);
}

/* Whether the reader may read text that jansson does not read as an object: it does not
 * check UTF-8 and keeps numbers as text, so the text with every byte above 0x7f made ASCII
 * and its integers read as reals must be an object no deeper than CQL_SROW_MAX_DEPTH to
 * jansson, or be refused only for a number out of range. */
static int may_read(const char *text, size_t len)
{
    char *ascii = malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++)
        ascii[i] = (unsigned char)text[i] >= 0x80 ? 'x' : text[i];
    json_error_t e;
    json_t *v = json_loadb(ascii, len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &e);
    free(ascii);
    int may = v ? json_is_object(v) && depth_of(v) <= CQL_SROW_MAX_DEPTH
                : json_error_code(&e) == json_error_numeric_overflow;
    json_decref(v);
    return may;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t seed = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    const cql_srow_picker picker = {.pick = pick_some, .arg = &seed, .nslot = NSLOT};

    json_t *v = json_loadb(text, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        v = NULL;
    }
    int readable = v && depth_of(v) <= CQL_SROW_MAX_DEPTH;

    cql_srow fresh, reused, keep;
    cql_srow_init(&fresh);
    cql_srow_init(&reused);
    cql_srow_init(&keep);
    CHECK(cql_srow_parse_picked(&reused, earlier_row, strlen(earlier_row), &picker) == 0,
          "the earlier row is read");

    int rc = cql_srow_parse(&fresh, text, len);
    if (v)
        CHECK(rc == (readable ? 0 : -1), "jansson's object (%s) read: %d",
              readable ? "readable" : "too deep", rc);
    if (!v && rc == 0) CHECK(may_read(text, len), "jansson reads no object, the reader reads one");
    if (rc == 0)
        check_read(&fresh, v, 0, seed, "text");
    else
        CHECK(fresh.n == 0, "a refused read leaves no nodes");

    int prc = cql_srow_parse_picked(&reused, text, len, &picker);
    if (v) CHECK(prc == rc, "picked text read: %d, unpicked: %d", prc, rc);
    if (prc == 0) check_read(&reused, v, 1, seed, "picked text");

    if (rc == 0) {
        /* the row kept aside while another is read into the memory it had */
        cql_srow_swap(&fresh, &keep);
        CHECK(cql_srow_parse(&fresh, earlier_row, strlen(earlier_row)) == 0, "the earlier row");
        check_read(&keep, v, 0, seed, "the kept row");
    }

    if (v) {
        cql_srow from;
        cql_srow_init(&from);
        rc = cql_srow_from_json(&from, v);
        CHECK(rc == (readable ? 0 : -1), "jansson's value read: %d", rc);
        if (rc == 0) check_read(&from, v, 0, seed, "jansson's value");
        rc = cql_srow_from_json_picked(&reused, v, &picker);
        CHECK(rc == (readable ? 0 : -1), "jansson's value picked: %d", rc);
        if (rc == 0) check_read(&reused, v, 1, seed, "jansson's value picked");
        cql_srow_free(&from);
    }
    cql_srow_free(&fresh);
    cql_srow_free(&reused);
    cql_srow_free(&keep);
    json_decref(v);
    return 0;
}
