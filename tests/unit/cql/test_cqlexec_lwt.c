/* test_cqlexec_lwt.c — lightweight transactions under concurrency through qr_cql_call:
 * threads racing compare-and-set increments of one row (UPDATE ... IF v = old) lose no
 * update (the final value is the number of increments applied), and threads racing
 * INSERT ... IF NOT EXISTS for one key see exactly one applied. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cqlexec_helper.h"
#include "quarry.h"

#include "check.h"

#define THREADS 8
#define ROUNDS 40

static qr_db *db;
static int applied[THREADS], claims[THREADS], errors[THREADS];

static int read_v(void)
{
    tresult r;
    int v = -1;
    if (tquery(db, "ks", "SELECT v FROM c WHERE k = 1", NULL, &r) == QR_OK && r.nrows == 1) {
        cql_value x = tval(&r, 0, "v");
        int32_t i;
        if (x.len == 4 && cql_int_decode(x.p, 4, &i) == 0) v = i;
    }
    tresult_free(&r);
    return v;
}

static void *racer(void *arg)
{
    int me = (int)(long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int v = read_v();
        char q[128];
        snprintf(q, sizeof q, "UPDATE c SET v = %d WHERE k = 1 IF v = %d", v + 1, v);
        tresult r;
        if (tquery(db, "ks", q, NULL, &r) == QR_OK && r.nrows == 1) {
            cql_value a = tval(&r, 0, "[applied]");
            if (a.len == 1 && a.p[0]) applied[me]++;
        } else {
            errors[me]++;
        }
        tresult_free(&r);
    }
    for (int i = 0; i < 10; i++) {
        char q[128];
        snprintf(q, sizeof q, "INSERT INTO c (k, v) VALUES (%d, %d) IF NOT EXISTS", 100 + i, me);
        tresult r;
        if (tquery(db, "ks", q, NULL, &r) == QR_OK && r.nrows == 1) {
            cql_value a = tval(&r, 0, "[applied]");
            if (a.len == 1 && a.p[0]) claims[me]++;
        }
        tresult_free(&r);
    }
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/qr_cqlexec_lwt_XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    char *msg = NULL;
    if (qr_open(dir, NULL, &db, &msg) != QR_OK) {
        fprintf(stderr, "open: %s\n", msg);
        return 1;
    }
    tresult r;
    tquery(db, NULL,
           "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
           "'replication_factor': 1}",
           NULL, &r);
    tresult_free(&r);
    tquery(db, "ks", "CREATE TABLE c (k int PRIMARY KEY, v int)", NULL, &r);
    tresult_free(&r);
    tquery(db, "ks", "INSERT INTO c (k, v) VALUES (1, 0)", NULL, &r);
    tresult_free(&r);
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, racer, (void *)i);
    int total = 0, claimed = 0, failed = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        total += applied[i];
        claimed += claims[i];
        failed += errors[i];
    }
    CHECK(failed == 0, "%d conditional updates failed instead of answering [applied]", failed);
    int v = read_v();
    CHECK(total > 0, "some increments applied");
    CHECK(v == total, "no lost update: v = %d after %d applied increments", v, total);
    CHECK(claimed == 10, "each key claimed once: %d claims for 10 keys", claimed);
    qr_close(db);
    check_remove_tree(dir);
    return check_report("test_cqlexec_lwt");
}
