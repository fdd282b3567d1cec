/* stream.h — DynamoDB Streams: the log of item changes of tables with a stream enabled.
 * Every write that changes an item of the table adds a record to its stream in the same
 * RocksDB batch as the item, so a record exists exactly when its write committed. */
#ifndef QR_STREAM_H
#define QR_STREAM_H

#include <jansson.h>
#include <stdint.h>

#include "quarry.h"
#include "util/err.h"

struct table;

/* Where a table's open stream is noted in its catalog description (stripped from
 * DescribeTable): {"Id": n, "ViewType": "NEW_IMAGE"}. */
#define QR_STREAM_FIELD "QuarryStream"

/* Enabling a stream on a table gives it a new stream (its own ARN and label, one shard).
 * Disabling the stream, or deleting the table, closes the stream; closed streams and
 * records stay readable for 24 hours, as in DynamoDB.
 *
 * How long records and closed streams are kept, and how long a shard iterator lives. */
#define QR_STREAM_RETENTION_S (24 * 3600)
#define QR_STREAM_ITERATOR_S (15 * 60)

/* Loads the streams at open (after the catalog): recovers the sequence counter,
 * registers a stream a table names but a crash left unrecorded, and closes open streams
 * no table names any more. */
int stream_open(qr_db *db);
void stream_close(qr_db *db);

/* ---- lifecycle (the catalog calls these, under its lock) ---- */
/* Gives the table described by desc a new stream of view_type: sets QR_STREAM_FIELD,
 * LatestStreamArn and LatestStreamLabel. The stream exists once the catalog has
 * persisted desc and called stream_follow. */
void stream_describe_new(qr_db *db, json_t *desc, const char *view_type, double now);
/* After the catalog persisted desc for table name: records its stream if new, and
 * closes any other open stream of that table. */
int stream_follow(qr_db *db, const char *name, const json_t *desc, qr_err *err);
/* After DeleteTable: closes the table's open stream. */
void stream_table_dropped(qr_db *db, const char *name);

/* ---- writes ---- */
/* True if t has an open stream, so writes must know the item they replace. */
int stream_enabled(const struct table *t);
/* While set on this thread, records say the service made the change (TTL expiry). */
void stream_set_service_origin(int on);

/* ---- reads ---- */
/* Copies of every stream's descriptor, oldest first: StreamArn, StreamLabel, TableName,
 * KeySchema, StreamViewType, Created (epoch seconds), Start (first sequence number),
 * once closed End (the last) and Closed, and once records were trimmed Trimmed (the
 * number of the last record dropped). */
json_t *stream_list(qr_db *db);
/* The descriptor of the stream with that ARN (a copy), or NULL. */
json_t *stream_find(qr_db *db, const char *arn);
/* Sequence numbers come from one counter per database, so they increase along each stream;
 * readers see only records below the lowest number a writer still holds, so a record
 * committed late is never skipped by a reader that already went past it.
 *
 * Every record numbered below this has committed or will never exist. */
uint64_t stream_visible(qr_db *db);
/* Appends to records the records of stream id numbered from `from` up to below (not
 * included), at most limit of them and about max_bytes; *next is one past the last
 * record read (from if none). Sets *cut if it stopped for limit or size. */
int stream_read(qr_db *db, uint32_t id, uint64_t from, uint64_t below, size_t limit,
                size_t max_bytes, json_t *records, uint64_t *next, int *cut, qr_err *err);
/* Drops records older than the retention, and closed streams past it. */
void stream_trim(qr_db *db, double now);

#endif
