/* test_stored_form.c — items stored before the page size was stored (format byte 2, a
 * 5-byte header) still read, page and verify, with their item_size as their page size,
 * and items written now carry item_page_size.
 *
 * A database is written, its items and index entries are rewritten into the older form
 * through the store, and it is reopened. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_int.h"
#include "quarry.h"

#include "call.h"

#define ITEMS 25
#define BLOB 37000 /* 25 items pass 1 MB by item_size, not by what DynamoDB counts */

static qr_db *open_db(const char *dir)
{
    qr_db *db = NULL;
    char *err = NULL;
    qr_options o = {.no_sync = 1, .capacity = QR_CAPACITY_OFF};
    if (qr_open(dir, &o, &db, &err) != QR_OK) {
        fprintf(stderr, "open %s: %s\n", dir, err);
        exit(1);
    }
    return db;
}

/* An item with 20 attributes of 255-character names (item_size counts them, a page
 * does not) and a BLOB-letter string. */
static void put_item(qr_db *db, int i)
{
    json_t *item =
        json_pack("{s{ss}s{ss}s{ss}}", "a", "S", "1234567890", "b", "S", "", "e", "S", "");
    char b[8], name[256];
    snprintf(b, sizeof b, "%02d", i);
    json_object_set_new(json_object_get(item, "b"), "S", json_string(b));
    char *blob = malloc(BLOB + 1);
    memset(blob, 'e', BLOB);
    blob[BLOB] = '\0';
    json_object_set_new(json_object_get(item, "e"), "S", json_string(blob));
    free(blob);
    for (int n = 0; n < 20; n++) {
        snprintf(name, sizeof name, "%02d", n);
        memset(name + 2, 'x', 253);
        name[255] = '\0';
        json_object_set_new(item, name, json_pack("{ss}", "S", "v"));
    }
    json_t *req = json_pack("{ssso}", "TableName", "paged", "Item", item);
    char *body = json_dumps(req, JSON_COMPACT);
    qr_response r;
    CHECK(qr_call(db, "PutItem", body, strlen(body), &r) == QR_OK, "PutItem: %s", r.body);
    qr_response_free(&r);
    free(body);
    json_decref(req);
}

/* Rewrites every stored item and index entry into the 5-byte header of format 2. */
static size_t to_format_2(qr_db *db)
{
    size_t n = 0;
    store_iter *it = store_iter_new(db->st, NULL, "t", 1, "u", 1);
    qr_err e;
    err_init(&e);
    for (store_iter_first(it); store_iter_valid(it); store_iter_next(it)) {
        size_t kl, vl;
        const char *k = store_iter_key(it, &kl), *v = store_iter_value(it, &vl);
        if (vl < ITEM_HEADER_LEN || v[0] != 3) continue;
        char *old = malloc(vl - 4);
        old[0] = 2;
        memcpy(old + 1, v + 1, 4);
        memcpy(old + 5, v + ITEM_HEADER_LEN, vl - ITEM_HEADER_LEN);
        CHECK(store_put(db->st, k, kl, old, vl - 4, &e) == 0, "rewrite: %s", e.msg);
        free(old);
        n++;
    }
    store_iter_free(it);
    err_clear(&e);
    return n;
}

/* A COUNT Query of the partition, by the table or its index: Count and the sort key
 * LastEvaluatedKey names ("" for none). */
static void count_page(qr_db *db, const char *index, int want_count, const char *want_last)
{
    json_t *r = call(db, "Query", 1,
                     "{\"TableName\":\"paged\",%s%s%s\"Select\":\"COUNT\","
                     "\"KeyConditionExpression\":\"a = :a\","
                     "\"ExpressionAttributeValues\":{\":a\":{\"S\":\"1234567890\"}}}",
                     index ? "\"IndexName\":\"" : "", index ? index : "", index ? "\"," : "");
    json_int_t count = json_integer_value(json_object_get(r, "Count"));
    json_t *last =
        json_object_get(json_object_get(json_object_get(r, "LastEvaluatedKey"), "b"), "S");
    CHECK(count == want_count, "%s: Count %lld, want %d", index ? index : "table", (long long)count,
          want_count);
    CHECK_STR(last ? json_string_value(last) : "", want_last);
    json_decref(r);
}

int main(void)
{
    char dir[] = "/tmp/qr_stored_form_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    qr_db *db = open_db(dir);
    json_decref(call(db, "CreateTable", 1,
                     "{\"TableName\":\"paged\",\"BillingMode\":\"PAY_PER_REQUEST\","
                     "\"AttributeDefinitions\":[{\"AttributeName\":\"a\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"b\",\"AttributeType\":\"S\"}],"
                     "\"KeySchema\":[{\"AttributeName\":\"a\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"b\",\"KeyType\":\"RANGE\"}],"
                     "\"LocalSecondaryIndexes\":[{\"IndexName\":\"all\",\"KeySchema\":["
                     "{\"AttributeName\":\"a\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"b\",\"KeyType\":\"RANGE\"}],"
                     "\"Projection\":{\"ProjectionType\":\"ALL\"}}]}"));
    for (int i = 0; i < ITEMS; i++)
        put_item(db, i);

    /* Written now: counted as DynamoDB counts them, the 25 fit one page. */
    count_page(db, NULL, ITEMS, "");
    count_page(db, "all", ITEMS, "");

    CHECK(to_format_2(db) == 2 * ITEMS, "items and entries rewritten");
    qr_close(db);
    db = open_db(dir);

    /* Stored in the older form: read as ever, their item_size their page size, so the
     * 25th item passes 1 MB and ends the page. */
    count_page(db, NULL, ITEMS, "24");
    count_page(db, "all", ITEMS, "24");
    json_t *got = call(db, "GetItem", 1,
                       "{\"TableName\":\"paged\",\"Key\":{\"a\":{\"S\":\"1234567890\"},"
                       "\"b\":{\"S\":\"07\"}},\"ProjectionExpression\":\"b\"}");
    CHECK_STR(
        json_string_value(json_object_get(json_object_get(json_object_get(got, "Item"), "b"), "S")),
        "07");
    json_decref(got);
    char *report = NULL;
    CHECK(qr_verify(db, "paged", &report) == QR_OK, "verify: %s", report ? report : "");
    free(report);

    /* Items written again take the new form: with two of them, one page holds all. */
    put_item(db, 0);
    put_item(db, 1);
    count_page(db, NULL, ITEMS, "");
    count_page(db, "all", ITEMS, "");
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_stored_form");
}
