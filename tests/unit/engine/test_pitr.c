/* test_pitr.c — point-in-time recovery's history (engine/pitr.c) where the HTTP tests
 * cannot reach: it survives closing and reopening the database and keeps its order
 * across the reopening; pitr_changes_since gives each item as it was at the asked time
 * (the first record after it); pitr_trim, given a clock past the recovery period, drops
 * what is older; disabling recovery drops the history; and a restore after a reopening
 * puts the table back as it was. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_int.h"
#include "quarry.h"

#include "call.h"

static void put(qr_db *db, const char *id, int n)
{
    json_decref(call(
        db, "PutItem", 1,
        "{\"TableName\":\"hist\",\"Item\":{\"id\":{\"S\":\"%s\"},\"n\":{\"N\":\"%d\"}}}", id, n));
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t id_of_table(qr_db *db)
{
    table *t = catalog_get(db, "hist");
    uint32_t id = t ? t->id : 0;
    catalog_release(db, t);
    return id;
}

/* The value of n the history gives item id at when: -1 when it did not exist then, -2
 * when it has not changed since. */
static int n_at(qr_db *db, double when, const char *id)
{
    json_t *changes;
    qr_err e;
    err_init(&e);
    CHECK(pitr_changes_since(db, id_of_table(db), when, &changes, &e) == 0, "history read: %s",
          e.msg);
    err_clear(&e);
    char key[128];
    snprintf(key, sizeof key, "{\"id\":{\"S\":\"%s\"}}", id);
    json_t *rec = json_object_get(changes, key);
    int n = rec == NULL ? -2
            : json_object_get(rec, "O") == NULL
                ? -1
                : atoi(json_string_value(
                      json_object_get(json_object_get(json_object_get(rec, "O"), "n"), "N")));
    json_decref(changes);
    return n;
}

static size_t history_size(qr_db *db, double when)
{
    json_t *changes;
    qr_err e;
    err_init(&e);
    pitr_changes_since(db, id_of_table(db), when, &changes, &e);
    err_clear(&e);
    size_t n = json_object_size(changes);
    json_decref(changes);
    return n;
}

int main(void)
{
    char dir[] = "/tmp/quarry-pitr-XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    qr_db *db;
    char *err;
    qr_options o = {.ttl_interval_ms = 3600 * 1000}; /* sweeps only when this test runs them */
    if (qr_open(dir, &o, &db, &err) != QR_OK) return 1;
    json_decref(call(
        db, "CreateTable", 1,
        "{\"TableName\":\"hist\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":["
        "{\"AttributeName\":\"id\",\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
        "\"id\","
        "\"KeyType\":\"HASH\"}]}"));
    put(db, "a", 1);
    put(db, "b", 1); /* before the window: never in the history */
    json_decref(call(db, "UpdateContinuousBackups", 1,
                     "{\"TableName\":\"hist\",\"PointInTimeRecoverySpecification\":"
                     "{\"PointInTimeRecoveryEnabled\":true,"
                     "\"RecoveryPeriodInDays\":1}}"));
    double t0 = now_seconds();
    usleep(5000);
    put(db, "a", 2);
    put(db, "c", 1);
    usleep(5000);
    double t1 = now_seconds();
    usleep(5000);
    put(db, "a", 3);
    CHECK(n_at(db, t0, "a") == 1 && n_at(db, t0, "c") == -1 && n_at(db, t0, "b") == -2,
          "state at t0");
    CHECK(n_at(db, t1, "a") == 2 && n_at(db, t1, "c") == -2, "state at t1");

    /* Reopened, the history is there and what is written next comes after it. */
    qr_close(db);
    if (qr_open(dir, &o, &db, &err) != QR_OK) return 1;
    usleep(5000);
    double t2 = now_seconds();
    usleep(5000);
    json_decref(
        call(db, "DeleteItem", 1, "{\"TableName\":\"hist\",\"Key\":{\"id\":{\"S\":\"a\"}}}"));
    CHECK(n_at(db, t0, "a") == 1, "the first record after t0 survives the reopening");
    CHECK(n_at(db, t2, "a") == 3, "the delete after the reopening records the item it removed");
    CHECK(history_size(db, t0) == 2, "a and c changed since t0: %zu", history_size(db, t0));

    /* A trim with a clock two days ahead drops everything older than a day. */
    pitr_trim(db, now_seconds() + 2 * 86400.0);
    CHECK(history_size(db, t0) == 0, "trimmed past the recovery period: %zu", history_size(db, t0));
    put(db, "d", 1);
    CHECK(history_size(db, t0) == 1, "recording goes on after a trim");

    /* Disabling forgets the history; enabling again starts with none. */
    json_decref(call(db, "UpdateContinuousBackups", 1,
                     "{\"TableName\":\"hist\",\"PointInTimeRecoverySpecification\":"
                     "{\"PointInTimeRecoveryEnabled\":false}}"));
    CHECK(history_size(db, t0) == 0, "disabled: no history");
    put(db, "e", 1);
    CHECK(history_size(db, t0) == 0, "disabled: nothing recorded");
    json_decref(call(db, "UpdateContinuousBackups", 1,
                     "{\"TableName\":\"hist\",\"PointInTimeRecoverySpecification\":"
                     "{\"PointInTimeRecoveryEnabled\":true}}"));
    double t3 = now_seconds();
    usleep(5000);
    put(db, "e", 2);
    CHECK(n_at(db, t3, "e") == 1, "enabled again: the window's history");

    /* A restore after a reopening rebuilds the table at the window's start. */
    qr_close(db);
    if (qr_open(dir, &o, &db, &err) != QR_OK) return 1;
    json_decref(call(db, "RestoreTableToPointInTime", 1,
                     "{\"SourceTableName\":\"hist\",\"TargetTableName\":\"back\","
                     "\"UseLatestRestorableTime\":true}"));
    json_t *got = call(db, "GetItem", 1, "{\"TableName\":\"back\",\"Key\":{\"id\":{\"S\":\"e\"}}}");
    CHECK_STR(
        json_string_value(json_object_get(json_object_get(json_object_get(got, "Item"), "n"), "N")),
        "1");
    json_decref(got);

    /* Deleting the table drops its history with it. */
    uint32_t id = id_of_table(db);
    json_decref(call(db, "DeleteTable", 1, "{\"TableName\":\"hist\"}"));
    json_t *changes;
    qr_err e;
    err_init(&e);
    CHECK(pitr_changes_since(db, id, 0, &changes, &e) == 0 && json_object_size(changes) == 0,
          "deleted with the table");
    json_decref(changes);
    err_clear(&e);
    qr_close(db);
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    printf("test_pitr: %d passed, %d failed\n", check_count - check_failures, check_failures);
    return check_failures ? 1 : 0;
}
