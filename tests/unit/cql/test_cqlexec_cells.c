/* test_cqlexec_cells.c — a non-frozen collection's elements in an engine item (exec_row.c's
 * cql_coll_* and the cell functions over them), on items made by hand: the last write wins
 * per element and a tombstone wins a tie, a deletion of the collection keeps newer
 * elements, list places keep appends and prepends in order, expired elements turn into
 * tombstones that gc_grace drops, the item's $expires follows its elements, the stored
 * form reads back as written, and a collection stored whole (one cell's times) reads as
 * elements. No engine, no statements: tests/server/test_cql_cells.py runs those. */
#include <string.h>

#include "cql/ast.h"
#include "cql/exec_int.h"
#include "cql/types.h"
#include "cqlwire/cql_value.h"

#include "check.h"

#define NOW 1700000000
#define GC_GRACE 864000

static arena test_arena;

static cql_tcol column(const char *name, const char *type)
{
    cql_parse_error err = {0};
    const cql_ctype *t = NULL;
    CHECK(cqltype_parse(&test_arena, type, strlen(type), NULL, &t, &err) == 0, "type %s: %s", type,
          err.msg);
    cql_tcol c = {.name = name, .type = t, .kind = 'r', .pos = -1, .dropped_at = INT64_MIN};
    return c;
}

static const uint8_t *text(const char *s)
{
    return (const uint8_t *)s;
}

/* The live value of col in item, its elements' texts (a map's keys) joined by ','. */
static const char *live(json_t *item, const cql_tcol *col, int64_t now_s, char *out, size_t cap)
{
    buf v;
    buf_init(&v, 0);
    out[0] = '\0';
    int got = cql_cell_read(item, col, now_s, &v);
    if (got == 1) {
        cql_elements e;
        uint32_t n;
        int map = col->type->wire.id == CQL_TYPE_MAP;
        cql_collection_open(&e, (const uint8_t *)v.data, v.len, map, &n);
        const uint8_t *p;
        int32_t len;
        size_t used = 0;
        for (uint32_t i = 0; i < n && cql_element_next(&e, &p, &len) == 1; i++) {
            if (map) cql_element_next(&e, &(const uint8_t *){0}, &(int32_t){0});
            used += (size_t)snprintf(out + used, cap - used, "%s%.*s", i ? "," : "", (int)len,
                                     (const char *)p);
        }
    } else if (got < 0) {
        snprintf(out, cap, "(malformed)");
    }
    buf_free(&v);
    return out;
}

static void test_last_write_wins_per_element(void)
{
    cql_tcol s = column("s", "set<text>");
    json_t *item = json_object();
    cql_coll c;
    CHECK_THAT(cql_coll_load(item, &s, &c) == 0 && c.n == 0);
    CHECK_THAT(cql_coll_put(&c, text("a"), 1, 0, text(""), 0, 10, 0, NOW) == 1);
    CHECK(cql_coll_put(&c, text("a"), 1, 0, text(""), 0, 5, 0, NOW) == 0, "an older write loses");
    CHECK_THAT(cql_coll_put(&c, text("b"), 1, 0, NULL, -1, 10, 0, NOW) == 1);
    CHECK(cql_coll_put(&c, text("b"), 1, 0, text(""), 0, 10, 0, NOW) == 0,
          "a tombstone wins a tie");
    CHECK_THAT(cql_coll_put(&c, text("c"), 1, 0, text(""), 0, 3, 0, NOW) == 1);
    CHECK_THAT(c.n == 3 && c.el[1].dead);
    CHECK_THAT(cql_coll_store(item, &c, NOW) == 0);
    cql_coll_free(&c);
    char out[128];
    CHECK_STR(live(item, &s, NOW, out, sizeof out), "a,c");
    /* what a DynamoDB reader sees, and the times beside it in the same order */
    json_t *want = json_loads("{\"L\": [{\"S\": \"a\"}, {\"S\": \"c\"}]}", 0, NULL);
    CHECK(json_equal(json_object_get(item, "s"), want), "the attribute: %s",
          json_dumps(json_object_get(item, "s"), JSON_COMPACT));
    json_decref(want);
    json_t *m = json_object_get(json_object_get(json_object_get(item, "$el"), "M"), "s");
    json_t *t = json_object_get(json_object_get(json_object_get(m, "M"), "t"), "L");
    CHECK_THAT(json_array_size(t) == 2 &&
               strcmp(json_string_value(json_object_get(json_array_get(t, 0), "N")), "10") == 0);
    /* read back: the tombstone too */
    CHECK_THAT(cql_coll_load(item, &s, &c) == 0 && c.n == 3 && c.el[1].dead && c.el[1].ts == 10);
    CHECK(cql_coll_put(&c, text("b"), 1, 0, text(""), 0, 9, 0, NOW) == 0,
          "the stored tombstone keeps an older write out");
    cql_coll_free(&c);
    json_decref(item);
}

static void test_deleting_the_collection(void)
{
    cql_tcol m = column("m", "map<text, int>");
    json_t *item = json_object();
    cql_coll c;
    cql_coll_load(item, &m, &c);
    uint8_t one[4];
    cql_int_encode(1, one);
    cql_coll_put(&c, text("old"), 3, 0, one, 4, 10, 0, NOW);
    cql_coll_put(&c, text("new"), 3, 0, one, 4, 30, 0, NOW);
    cql_coll_delete(&c, 20);
    CHECK_THAT(c.n == 1 && c.deleted == 20);
    CHECK(cql_coll_put(&c, text("late"), 4, 0, one, 4, 20, 0, NOW) == 0,
          "a write not newer than the deletion loses");
    cql_coll_delete(&c, 15); /* an older deletion changes nothing */
    CHECK_THAT(c.deleted == 20 && c.n == 1);
    cql_coll_store(item, &c, NOW);
    cql_coll_free(&c);
    char out[128];
    CHECK_STR(live(item, &m, NOW, out, sizeof out), "new");
    /* written whole at 25: a deletion at 24 and the new entries */
    buf v;
    buf_init(&v, 0);
    size_t at = cql_collection_begin(&v);
    cql_element_put(&v, "a", 1);
    cql_element_put(&v, one, 4);
    cql_collection_end(&v, at, 1);
    CHECK_THAT(cql_cell_write(item, &m, (const uint8_t *)v.data, (int32_t)v.len, 25, 0) == 1);
    CHECK_STR(live(item, &m, NOW, out, sizeof out), "a,new");
    CHECK_THAT(cql_cell_write(item, &m, NULL, -1, 25, 0) == 1);
    CHECK_STR(live(item, &m, NOW, out, sizeof out), "new");
    buf_free(&v);
    json_decref(item);
}

static void test_list_places(void)
{
    cql_tcol l = column("l", "list<text>");
    json_t *item = json_object();
    cql_coll c;
    cql_coll_load(item, &l, &c);
    const char *back[] = {"b", "c"};
    for (int i = 0; i < 2; i++)
        cql_coll_put(&c, NULL, 0, cql_coll_list_key(&c, 0), text(back[i]), 1, 10, 0, NOW);
    cql_coll_put(&c, NULL, 0, cql_coll_list_key(&c, 1), text("a"), 1, 5, 0, NOW);
    /* a tombstone keeps its place: the next append goes after it */
    cql_coll_put(&c, NULL, 0, cql_coll_list_key(&c, 0), text("x"), 1, 10, 0, NOW);
    cql_coll_put(&c, NULL, 0, c.el[c.n - 1].lkey, NULL, -1, 11, 0, NOW);
    int64_t next = cql_coll_list_key(&c, 0);
    CHECK(next == c.el[c.n - 1].lkey + 1, "the next place %lld", (long long)next);
    cql_coll_put(&c, NULL, 0, next, text("d"), 1, 12, 0, NOW);
    cql_coll_store(item, &c, NOW);
    cql_coll_free(&c);
    char out[128];
    CHECK_STR(live(item, &l, NOW, out, sizeof out), "a,b,c,d");
    CHECK_THAT(cql_coll_load(item, &l, &c) == 0 && c.n == 5 && c.el[3].dead);
    CHECK(c.el[0].lkey < c.el[1].lkey && c.el[3].lkey < c.el[4].lkey, "places read back");
    cql_coll_free(&c);
    json_decref(item);
}

static void test_expiry(void)
{
    cql_tcol m = column("m", "map<text, int>");
    cql_tcol cols[1] = {m};
    cql_tinfo t;
    memset(&t, 0, sizeof t);
    t.cols = cols;
    t.ncols = 1;
    json_t *item = json_object();
    cql_coll c;
    cql_coll_load(item, &m, &c);
    uint8_t one[4];
    cql_int_encode(1, one);
    cql_coll_put(&c, text("a"), 1, 0, one, 4, 10, NOW + 100, NOW);
    cql_coll_put(&c, text("b"), 1, 0, one, 4, 10, NOW + 50, NOW);
    cql_coll_store(item, &c, NOW);
    cql_coll_free(&c);
    char out[128];
    CHECK_STR(live(item, &m, NOW + 60, out, sizeof out), "a");
    CHECK_THAT(cql_row_live(item, &t, NOW + 60));
    CHECK_THAT(!cql_row_live(item, &t, NOW + 100));
    cql_row_seal(item, &t);
    json_t *exp = json_object_get(item, CQL_EXPIRES_ATTR);
    CHECK(exp && strtoll(json_string_value(json_object_get(exp, "N")), NULL, 10) == NOW + 100,
          "the item expires with its last element");
    /* rewritten later: the expired one is a tombstone from its expiry */
    cql_coll_load(item, &m, &c);
    cql_coll_put(&c, text("c"), 1, 0, one, 4, 20, 0, NOW + 60);
    cql_coll_store(item, &c, NOW + 60);
    cql_coll_free(&c);
    CHECK_STR(live(item, &m, NOW + 60, out, sizeof out), "a,c");
    cql_row_seal(item, &t);
    CHECK(json_object_get(item, CQL_EXPIRES_ATTR) == NULL, "an element that never expires");
    cql_coll_load(item, &m, &c);
    CHECK_THAT(c.n == 3 && c.el[1].dead && c.el[1].exp == NOW + 50);
    /* gc_grace after the expiry the tombstones are gone */
    cql_coll_store(item, &c, NOW + 100 + GC_GRACE + 1);
    cql_coll_free(&c);
    cql_coll_load(item, &m, &c);
    CHECK(c.n == 1 && !c.el[0].dead, "left: %zu", c.n);
    cql_coll_free(&c);
    json_decref(item);
}

static void test_stored_whole(void)
{
    /* a collection with its cell's times ($ts, $exp) rather than its elements' */
    cql_tcol s = column("s", "set<text>");
    json_t *item = json_loads("{\"s\": {\"L\": [{\"S\": \"p\"}, {\"S\": \"q\"}]},"
                              " \"$ts\": {\"M\": {\"s\": {\"N\": \"7\"}}},"
                              " \"$exp\": {\"M\": {\"s\": {\"N\": \"1700000100\"}}}}",
                              0, NULL);
    CHECK_THAT(item != NULL);
    char out[128];
    CHECK_STR(live(item, &s, NOW, out, sizeof out), "p,q");
    CHECK_STR(live(item, &s, NOW + 100, out, sizeof out), "");
    cql_coll c;
    CHECK_THAT(cql_coll_load(item, &s, &c) == 0 && c.n == 2 && c.el[0].ts == 7 &&
               c.el[1].exp == NOW + 100);
    cql_coll_put(&c, text("r"), 1, 0, text(""), 0, 8, 0, NOW);
    cql_coll_store(item, &c, NOW);
    cql_coll_free(&c);
    CHECK(json_object_get(json_object_get(json_object_get(item, "$ts"), "M"), "s") == NULL,
          "the cell's times are the elements' now");
    CHECK_STR(live(item, &s, NOW + 100, out, sizeof out), "r");
    /* a malformed stored form is refused, not read */
    json_object_set_new(item, "s", json_pack("{s:s}", "N", "1"));
    CHECK_THAT(cql_coll_load(item, &s, &c) == -1);
    cql_coll_free(&c);
    json_decref(item);
}

int main(void)
{
    arena_init(&test_arena, 0);
    test_last_write_wins_per_element();
    test_deleting_the_collection();
    test_list_places();
    test_expiry();
    test_stored_whole();
    arena_free(&test_arena);
    return check_report("test_cqlexec_cells");
}
