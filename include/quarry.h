/* quarry.h — the public API of quarry, DynamoDB's data model on RocksDB as a C library.
 * Ownership: qr_open makes a qr_db and qr_close frees it; every qr_response is filled by
 * qr_call and released by qr_response_free; strings passed in are borrowed for the call
 * only. A qr_db may be used from many threads at once; each call is independent.
 * Return codes: 0 (QR_OK) for success, QR_ERR (a negative number) for failure. */

/* This is the only header users include. Requests and responses are the JSON documents of
 * DynamoDB's JSON protocol (API 2012-08-10), so an application that speaks DynamoDB speaks
 * quarry: qr_call("PutItem", "{...}") is the PutItem HTTP request without the HTTP.
 * `quarry serve` puts this same call behind DynamoDB's wire protocol. */
#ifndef QUARRY_H
#define QUARRY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QR_OK 0
#define QR_ERR (-1)

/* The version of this header and library, as `quarry --version` prints it. */
#define QR_VERSION "0.1.0"

typedef struct qr_db qr_db;

typedef struct qr_options {
    /* Non-zero: acknowledge writes once in the OS page cache, not once fsync'd in the
     * WAL. Faster bulk loads; a machine crash may lose recent acknowledged writes. */
    int no_sync;
    /* Non-zero: fail if the data directory holds no database yet. */
    int must_exist;
    /* Global secondary indexes are updated asynchronously; this holds each update back
     * for at least this many milliseconds, so applications can be tested against the
     * eventual consistency they will meet in production. 0: apply as soon as possible. */
    int gsi_lag_ms;
    /* The item collection size limit of tables with local secondary indexes, in bytes;
     * 0 means DynamoDB's 10 GB. Lower it to test ItemCollectionSizeLimitExceeded. */
    unsigned long long lsi_collection_limit;
    /* How often, in milliseconds, items whose TTL has passed are looked for and deleted;
     * 0 means every 60 seconds. (DynamoDB deletes expired items within a few days; until
     * then they are still read, as here between sweeps.) */
    int ttl_interval_ms;
    /* Capacity as DynamoDB meters it (QR_CAPACITY_*): ENFORCE (0, the default) throttles
     * what exceeds a table's, an index's or a partition's capacity, as DynamoDB does;
     * OBSERVE meters and counts what would be throttled but throttles nothing; OFF does
     * not meter (bulk loads). */
    int capacity;
    /* QR_CLOCK_MANUAL: the capacity clock stands still but for qr_clock_advance, so tests
     * of throttling are deterministic. */
    int capacity_clock;
    /* The account's per-table quota of read and of write request units a second for
     * on-demand tables; 0 means DynamoDB's default, QR_ACCOUNT_TABLE_UNITS; negative
     * means none. */
    double account_table_units;
    /* How long, in seconds, a partition stays hot (over half its ceiling used) before it
     * splits for heat; 0 means DynamoDB's few minutes (300). */
    double capacity_split_seconds;
    /* Where the engine says how its long work goes (a global index's backfill, a
     * restore): a line every few seconds and at each tenth, "backfill of T.I: 3,000 of
     * 10,000 items (30%), 1,520 items/s", without a newline, from the thread doing the
     * work; last is 1 for the line that ends a piece of work (a terminal's progress line
     * ends there). NULL: the engine says nothing. */
    void (*log)(void *log_arg, const char *line, int last);
    void *log_arg;
    /* Non-zero: open the data read-only and without taking its lock, beside the process
     * that holds it (a running server): reads see the data as of the open, every write
     * fails, and no background work (index propagation, TTL, backfills) runs. */
    int read_only;
    /* Model files (docs/model.md), a NULL-terminated array of paths, or NULL for none.
     * With models, every data-plane request is matched to one of their declared access
     * patterns or recorded as a finding (a Scan, an undeclared key shape, an over-read,
     * an item no entity's key templates match, ...); QuarryDescribeModel lists both, and
     * findings are logged on standard error once per pattern and minute. qr_open fails
     * with the loader's "FILE:LINE:COL: message" when a model does not load; a model
     * whose tables differ from the database's is reported and the database opens. */
    const char *const *models;
    /* Non-zero with models: a Scan, or a read matching no declared access pattern, is
     * refused with ValidationException naming what the model lacks. */
    int model_strict;
    /* The folder that stands for Amazon S3 in ExportTableToPointInTime and ImportTable:
     * bucket B is its subfolder B, an object's key a path below it (borrowed: it must
     * outlive the database). NULL: those operations are refused. */
    const char *s3_root;
    /* Non-zero: keep the whole database in memory (RocksDB's in-memory environment), as
     * DynamoDB Local's -inMemory: dir only names it, no file is written, and everything is
     * gone at qr_close. */
    int in_memory;
    /* Milliseconds that tables and global indexes stay CREATING, UPDATING or DELETING after
     * the request that changed them, as DynamoDB Local's -delayTransientStatuses: a table
     * being created or deleted is not found by the item operations, and one in any of
     * these states refuses UpdateTable and DeleteTable (ResourceInUseException), so
     * waiters and retry code run as against DynamoDB. 0: every change is ACTIVE at once. */
    int transient_ms;
    /* Bytes of memory for the storage engine's caches and write buffers together: the
     * memtables (two of a sixteenth each, at most 8 MB each), the cache of recently read
     * items (an eighth) and RocksDB's block cache with the files' indexes and filters
     * (the rest). The process's memory stays within it plus a constant for its code,
     * threads and requests in flight (bench/README.md measures it). 0 means 256 MB; the
     * least is 8 MB. Nothing is allocated up front: an idle database uses little of it. */
    unsigned long long cache_size;
} qr_options;

#define QR_CAPACITY_ENFORCE 0
#define QR_CAPACITY_OBSERVE 1
#define QR_CAPACITY_OFF 2
#define QR_CLOCK_MONOTONIC 0
#define QR_CLOCK_MANUAL 1
#define QR_ACCOUNT_TABLE_UNITS 40000.0

/* Moves the capacity clock forward by seconds (buckets refill as if that time passed). */
void qr_clock_advance(qr_db *db, double seconds);

/* Opens (creating if needed) the database in directory dir. opts may be NULL for the
 * defaults (durable writes). On failure returns QR_ERR and, if errmsg is not NULL,
 * sets *errmsg to a malloc'd message the caller frees with free(); the usual cause is
 * another process holding the directory's lock. */
int qr_open(const char *dir, const qr_options *opts, qr_db **out, char **errmsg);

/* Closes the database: waits for background work, flushes, releases the lock. */
void qr_close(qr_db *db);
/* qr_close, saying whether every write to the write-ahead log since qr_open, and the
 * close's own last one, reached it: QR_OK, or QR_ERR with *errmsg set (malloc'd, the
 * caller frees it; "the disk is full (...)" when that was the cause) if errmsg is not
 * NULL. The database is closed either way; what failed was never acknowledged. */
int qr_shutdown(qr_db *db, char **errmsg);

typedef struct qr_response {
    char *body;             /* JSON text, NUL-terminated (owned; see qr_response_free) */
    size_t len;             /* bytes in body, without the NUL */
    int http_status;        /* 200, or the status DynamoDB uses for the error */
    const char *error_type; /* NULL on success, else e.g. "ValidationException" (static) */
    char tables[128];       /* for log lines: the request's TableName, or the tables of its
                               RequestItems or TransactItems joined by ',' (cut to fit);
                               "" when it names none or is not a JSON object */
} qr_response;

/* Runs one DynamoDB operation. operation is its name ("PutItem", "Query", …); request
 * is the JSON request body of len bytes. Always fills *resp: on success with the
 * response document, on failure with DynamoDB's error document
 *   {"__type":"com.amazon.coral.validate#ValidationException","message":"…"}
 * Returns QR_OK or QR_ERR accordingly. */
int qr_call(qr_db *db, const char *operation, const char *request, size_t len, qr_response *resp);

/* What a call's transport knows that its JSON does not. */
typedef struct qr_call_context {
    const char *region; /* the AWS region the request was signed for, or NULL */
} qr_call_context;

/* qr_call with a context (ctx may be NULL). The region names where the request was
 * received, as DynamoDB Streams records report it (awsRegion); without one it is
 * "ddblocal", as DynamoDB Local reports it. */
int qr_call_in(qr_db *db, const qr_call_context *ctx, const char *operation, const char *request,
               size_t len, qr_response *resp);

/* For a server that answers many requests per turn of its event loop, on a database
 * opened with no_sync. After qr_defer_flushes(1), the writes the calling thread makes
 * stay in the write-ahead log's buffer in this process, instead of each being handed to
 * the operating system by a write(2) of its own; qr_flush_pending() then says whether
 * any wait, and qr_flush_deferred() hands them all over at once (QR_OK, or QR_ERR if
 * the log could not be written). A deferred write is lost if the process dies before
 * its flush: answer a request that wrote only after qr_flush_deferred. A read can see
 * another thread's write before its flush; such a read leaves a flush pending too, so
 * answer every request after qr_flush_pending() says 0 or qr_flush_deferred returns.
 * The thread's PutItem, UpdateItem and DeleteItem writes are also staged: they reach the
 * database together, as one write, at qr_flush_deferred (or sooner, when the thread needs
 * an item one of them holds, or makes any other kind of write); until then they cannot
 * be read, and their items stay locked. A thread that ends with writes staged writes them
 * as it ends; every deferring thread must flush (or end) before qr_close. Databases
 * opened durably are not affected. */
void qr_defer_flushes(int on);
int qr_flush_pending(void);
int qr_flush_deferred(void);
/* Why this thread's last qr_flush_deferred returned QR_ERR ("" before any did); valid
 * until the thread's next qr_flush_deferred. */
const char *qr_flush_error(void);

/* The table names a request body names, for log lines, as qr_response.tables gives
 * them; "" when it names none or is not JSON. */
void qr_request_tables(const char *body, size_t len, char *out, size_t cap);

/* Frees the body of a response filled by qr_call. */
void qr_response_free(qr_response *resp);

/* Waits until every pending global secondary index update has been applied, or
 * timeout_ms passes. Returns QR_OK once drained, QR_ERR on timeout. */
int qr_wait_indexes(qr_db *db, int timeout_ms);

/* Waits until the storage engine's background work is done: the flushes of its write
 * buffers and the compactions RocksDB runs or still owes (after a large load, those can
 * run for minutes), and the flushes and compactions that deletes asked for. For
 * benchmarks and tests that measure reads of a settled database. Returns QR_OK once
 * nothing is running or owed, QR_ERR if something still was after timeout_ms. */
int qr_wait_compactions(qr_db *db, int timeout_ms);

/* Checks that every secondary index of table (every table when NULL) holds exactly the
 * projection of its base items, after draining pending updates, and that the item counts
 * and sizes DescribeTable reports (kept in memory, when known) match what is stored.
 * Returns QR_OK when all agree and QR_ERR otherwise; *report (malloc'd, free()) describes what was
 * checked and every difference found. */
int qr_verify(qr_db *db, const char *table, char **report);

/* The database's metrics in Prometheus's text exposition format (version 0.0.4), as
 * `quarry serve` answers GET /metrics: the calls qr_call ran since qr_open, by operation
 * (counts, errors by type, a histogram of the time spent in qr_call), and each table's
 * and secondary index's item count and size with the global-index propagation lag, as
 * DescribeTable reports them (so a table's items are counted the first time, as there).
 * Counting a call costs a few atomic additions, no lock. On success returns QR_OK with
 * *text malloc'd and NUL-terminated (the caller frees it with free()) and, if len is not
 * NULL, *len its length; QR_ERR (out of memory) with *text NULL. */
int qr_metrics(qr_db *db, char **text, size_t *len);

/* Names of the operations of DynamoDB's API that qr_call accepts, as a NULL-terminated
 * array (static); qr_stream_operations lists those of the DynamoDB Streams API, which
 * qr_call accepts too. */
const char *const *qr_operations(void);
const char *const *qr_stream_operations(void);

/* 1 when the operation called name (one qr_call accepts) may write, and so may wait for
 * a disk sync; 0 for the operations that only read. Unknown names count as writes. */
int qr_operation_writes(const char *name);

/* ---- CQL: Cassandra's native protocol, run on the same database ---- */
typedef struct qr_cql_request {
    unsigned char version; /* the envelope's protocol version: 3, 4 or 5 */
    unsigned char opcode;  /* QUERY 0x07, PREPARE 0x09, EXECUTE 0x0A or BATCH 0x0D */
    const void *body;      /* the message body, decompressed; len bytes */
    size_t len;
    const char *keyspace; /* the connection's keyspace (set by USE), or NULL */
    const char *user;     /* the authenticated role, or NULL when authentication is off */
} qr_cql_request;

typedef struct qr_cql_response {
    unsigned char opcode; /* RESULT 0x08 or ERROR 0x00 */
    unsigned char *body;  /* the response body (owned) */
    size_t len;
    char keyspace[64];    /* after a USE that succeeded: the connection's keyspace now; else "" */
    unsigned char *event; /* after a schema change: the SCHEMA_CHANGE EVENT body for the
                             connections REGISTERed for it (owned), or NULL */
    size_t event_len;
    char **warnings; /* a RESULT's client warnings, each NUL-terminated (the array and
                        its strings owned), or NULL; the server sends them in v4 and v5 */
    size_t n_warnings;
} qr_cql_response;

/* Runs one request. Always fills *resp (an ERROR body with the spec's code and
 * Cassandra's message on failure). Returns QR_OK, or QR_ERR when resp is an ERROR. */
int qr_cql_call(qr_db *db, const qr_cql_request *req, qr_cql_response *resp);
void qr_cql_response_free(qr_cql_response *resp);
/* 1 when the request may write (the server runs it on a worker when writes wait for a
 * sync), 0 when it only reads. Cheap: no parse beyond what is needed. */
int qr_cql_writes(qr_db *db, const qr_cql_request *req);

#ifdef __cplusplus
}
#endif
#endif
