/* cql_codec.h — the bodies of CQL native protocol messages (versions 3 to 5).
 *
 * The notation types of section 3 read with bounds checks and written into capped
 * buffers; request bodies decoded into structs (STARTUP, AUTH_RESPONSE, OPTIONS, QUERY,
 * PREPARE, EXECUTE, BATCH, REGISTER); response bodies written (ERROR, READY,
 * AUTHENTICATE, SUPPORTED, RESULT of every kind, EVENT, AUTH_CHALLENGE, AUTH_SUCCESS).
 * Envelopes are cql_frame.h's, value bytes cql_value.h's; nothing here runs a query. */
#ifndef QR_CQL_CODEC_H
#define QR_CQL_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "cqlwire/cql_frame.h"
#include "util/buf.h"

/* Text and bytes borrowed from a body: not NUL-terminated, valid while the body is. */
typedef struct cql_str {
    const char *p;
    size_t len;
} cql_str;

/* A [bytes] or [value]: len >= 0 bytes at p, or CQL_NULL, or (a [value] only) CQL_UNSET. */
#define CQL_NULL (-1)
#define CQL_UNSET (-2)
typedef struct cql_value {
    const uint8_t *p;
    int32_t len;
} cql_value;

/* Memory that lives as long as one decoded request: arrays of its values, names, pairs. */
typedef struct cql_pool_block cql_pool_block;
typedef struct cql_pool {
    cql_pool_block *head;
} cql_pool;

void *cql_pool_alloc(cql_pool *pool, size_t size); /* zeroed; NULL when out of memory */
void cql_pool_free(cql_pool *pool);

/* ---- reading the notation types ---- */

/* A cursor over a body. Every read checks the bytes left; the first failure is kept in
 * err ("" while none) and every later read fails too, so a decoder may read on and
 * check once. what names the field in the message ("the query's [long string]"). */
typedef struct cql_reader {
    const uint8_t *p;
    size_t len, pos;
    cql_pool *pool; /* for the reads that return arrays */
    char err[256];
} cql_reader;

void cql_reader_init(cql_reader *r, const void *p, size_t len, cql_pool *pool);
size_t cql_reader_left(const cql_reader *r);
/* Records a failure (unless one is recorded) and returns -1. */
int cql_reader_fail(cql_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cql_read_byte(cql_reader *r, const char *what, uint8_t *v);
int cql_read_short(cql_reader *r, const char *what, uint16_t *v);
int cql_read_int(cql_reader *r, const char *what, int32_t *v);
int cql_read_long(cql_reader *r, const char *what, int64_t *v);
int cql_read_string(cql_reader *r, const char *what, cql_str *s);
int cql_read_long_string(cql_reader *r, const char *what, cql_str *s);
int cql_read_uuid(cql_reader *r, const char *what, uint8_t out[16]);
int cql_read_string_list(cql_reader *r, const char *what, cql_str **items, uint16_t *n);
int cql_read_bytes(cql_reader *r, const char *what, cql_value *v); /* null for n < 0 */
int cql_read_value(cql_reader *r, const char *what, cql_value *v); /* null, not set; n < -2 fails */
int cql_read_short_bytes(cql_reader *r, const char *what, cql_str *v);
int cql_read_uvint(cql_reader *r, const char *what, uint64_t *v);
int cql_read_vint(cql_reader *r, const char *what, int64_t *v);
/* [inet]: address of 4 or 16 bytes and an [int] port; [inetaddr]: the address only. */
typedef struct cql_inet {
    uint8_t len; /* 4 or 16 */
    uint8_t addr[16];
    int32_t port;
} cql_inet;
int cql_read_inet(cql_reader *r, const char *what, cql_inet *v);
int cql_read_inetaddr(cql_reader *r, const char *what, cql_inet *v);
/* [consistency]: one of CQL_CL_*; another code fails. */
int cql_read_consistency(cql_reader *r, const char *what, uint16_t *v);

typedef struct cql_pair {
    cql_str key, value;
} cql_pair;
typedef struct cql_multi {
    cql_str key;
    cql_str *values;
    uint16_t n;
} cql_multi;
typedef struct cql_bytes_pair {
    cql_str key;
    cql_value value;
} cql_bytes_pair;
int cql_read_string_map(cql_reader *r, const char *what, cql_pair **pairs, uint16_t *n);
int cql_read_string_multimap(cql_reader *r, const char *what, cql_multi **entries, uint16_t *n);
int cql_read_bytes_map(cql_reader *r, const char *what, cql_bytes_pair **pairs, uint16_t *n);

/* ---- CQL types, the [option]s of result metadata ---- */

typedef enum cql_type_id {
    CQL_TYPE_CUSTOM = 0x0000,
    CQL_TYPE_ASCII = 0x0001,
    CQL_TYPE_BIGINT = 0x0002,
    CQL_TYPE_BLOB = 0x0003,
    CQL_TYPE_BOOLEAN = 0x0004,
    CQL_TYPE_COUNTER = 0x0005,
    CQL_TYPE_DECIMAL = 0x0006,
    CQL_TYPE_DOUBLE = 0x0007,
    CQL_TYPE_FLOAT = 0x0008,
    CQL_TYPE_INT = 0x0009,
    CQL_TYPE_TIMESTAMP = 0x000B,
    CQL_TYPE_UUID = 0x000C,
    CQL_TYPE_VARCHAR = 0x000D,
    CQL_TYPE_VARINT = 0x000E,
    CQL_TYPE_TIMEUUID = 0x000F,
    CQL_TYPE_INET = 0x0010,
    CQL_TYPE_DATE = 0x0011,
    CQL_TYPE_TIME = 0x0012,
    CQL_TYPE_SMALLINT = 0x0013,
    CQL_TYPE_TINYINT = 0x0014,
    CQL_TYPE_DURATION = 0x0015,
    CQL_TYPE_LIST = 0x0020,
    CQL_TYPE_MAP = 0x0021,
    CQL_TYPE_SET = 0x0022,
    CQL_TYPE_UDT = 0x0030,
    CQL_TYPE_TUPLE = 0x0031,
} cql_type_id;

/* A type as a tree: list and set have one parameter, map two (key, value), tuple n, a
 * UDT n field types named by field_names, in keyspace; custom names its class. */
typedef struct cql_type {
    uint16_t id;
    const char *name;     /* custom: the class; UDT: the type's name */
    const char *keyspace; /* UDT */
    const struct cql_type *const *params;
    const char *const *field_names; /* UDT */
    uint16_t n;
} cql_type;

/* A native type's name as CQL writes it ("int", "text"), or NULL for the other ids. */
const char *cql_type_name(uint16_t id);

/* Reads an [option] naming a type, nested at most CQL_TYPE_MAX_DEPTH deep; the tree is
 * allocated from the reader's pool and its strings are NUL-terminated copies (a name holding a NUL
 * byte is refused). */
#define CQL_TYPE_MAX_DEPTH 32
int cql_read_type(cql_reader *r, const char *what, cql_type **t);
/* [option list]. */
int cql_read_type_list(cql_reader *r, const char *what, cql_type ***types, uint16_t *n);

/* ---- writing the notation types ----
 * Each appends to out and returns 0, or -1 when out's cap is reached or a length does
 * not fit its prefix (a [string] over 65535 bytes); a failed write may leave part of a
 * composite written: callers discard the envelope on -1. */

int cql_put_byte(buf *out, uint8_t v);
int cql_put_short(buf *out, uint16_t v);
int cql_put_int(buf *out, int32_t v);
int cql_put_long(buf *out, int64_t v);
int cql_put_string(buf *out, const char *s); /* NUL-terminated */
int cql_put_string_n(buf *out, const char *p, size_t len);
int cql_put_long_string(buf *out, const char *p, size_t len);
int cql_put_uuid(buf *out, const uint8_t v[16]);
int cql_put_string_list(buf *out, const char *const *items, uint16_t n);
int cql_put_bytes(buf *out, const void *p, int32_t len); /* len < 0: null */
int cql_put_value(buf *out, const void *p, int32_t len); /* CQL_NULL, CQL_UNSET */
int cql_put_short_bytes(buf *out, const void *p, size_t len);
int cql_put_uvint(buf *out, uint64_t v);
int cql_put_vint(buf *out, int64_t v);
int cql_put_inet(buf *out, const cql_inet *v);
int cql_put_inetaddr(buf *out, const cql_inet *v);
int cql_put_consistency(buf *out, uint16_t v);
/* Maps from arrays of NUL-terminated strings. */
typedef struct cql_text_pair {
    const char *key, *value;
} cql_text_pair;
typedef struct cql_text_multi {
    const char *key;
    const char *const *values;
    uint16_t n;
} cql_text_multi;
typedef struct cql_text_bytes {
    const char *key;
    const void *value;
    int32_t len; /* < 0: null */
} cql_text_bytes;
int cql_put_string_map(buf *out, const cql_text_pair *pairs, uint16_t n);
int cql_put_string_multimap(buf *out, const cql_text_multi *entries, uint16_t n);
int cql_put_bytes_map(buf *out, const cql_text_bytes *pairs, uint16_t n);
/* An [option] for the type, and an [option list]. */
int cql_put_type(buf *out, const cql_type *t);
int cql_put_type_list(buf *out, const cql_type *const *types, uint16_t n);

/* ---- requests ---- */

typedef enum cql_consistency {
    CQL_CL_ANY = 0x0000,
    CQL_CL_ONE = 0x0001,
    CQL_CL_TWO = 0x0002,
    CQL_CL_THREE = 0x0003,
    CQL_CL_QUORUM = 0x0004,
    CQL_CL_ALL = 0x0005,
    CQL_CL_LOCAL_QUORUM = 0x0006,
    CQL_CL_EACH_QUORUM = 0x0007,
    CQL_CL_SERIAL = 0x0008,
    CQL_CL_LOCAL_SERIAL = 0x0009,
    CQL_CL_LOCAL_ONE = 0x000A,
} cql_consistency;

/* The consistency's name ("LOCAL_QUORUM"), or NULL for another code. */
const char *cql_consistency_name(uint16_t code);

/* Query parameter flags (a [byte] before v5, an [int] from v5). */
#define CQL_QF_VALUES 0x0001
#define CQL_QF_SKIP_METADATA 0x0002
#define CQL_QF_PAGE_SIZE 0x0004
#define CQL_QF_PAGING_STATE 0x0008
#define CQL_QF_SERIAL_CONSISTENCY 0x0010
#define CQL_QF_DEFAULT_TIMESTAMP 0x0020
#define CQL_QF_NAMES_FOR_VALUES 0x0040
#define CQL_QF_KEYSPACE 0x0080       /* v5 */
#define CQL_QF_NOW_IN_SECONDS 0x0100 /* v5 */

/* Bound values: positional, or named when names is not NULL (names[i] for values[i]). */
typedef struct cql_values {
    cql_value *values;
    cql_str *names;
    uint16_t n;
} cql_values;

/* <query_parameters> of QUERY and EXECUTE. Absent fields hold their defaults. */
typedef struct cql_query_params {
    uint16_t consistency;
    uint32_t flags;
    cql_values values;
    int32_t page_size;           /* -1 when absent */
    cql_value paging_state;      /* len CQL_NULL when absent */
    uint16_t serial_consistency; /* SERIAL when absent */
    int64_t timestamp;           /* microseconds; INT64_MIN when absent */
    cql_str keyspace;            /* p NULL when absent */
    int32_t now_in_seconds;      /* 0 when absent */
} cql_query_params;

typedef enum cql_compression { CQL_COMPRESSION_NONE = 0, CQL_COMPRESSION_LZ4 } cql_compression;

typedef struct cql_startup {
    cql_pair *options;
    uint16_t n;
    cql_str cql_version; /* checked: present, a version >= 3.0.0 */
    cql_compression compression;
    cql_str driver_name, driver_version; /* p NULL when absent */
    int throw_on_overload;
} cql_startup;

typedef struct cql_query {
    cql_str query;
    cql_query_params params;
} cql_query;

#define CQL_PREPARE_KEYSPACE 0x01 /* v5 */
typedef struct cql_prepare {
    cql_str query;
    uint32_t flags;
    cql_str keyspace; /* p NULL when absent */
} cql_prepare;

typedef struct cql_execute {
    cql_str id;
    cql_str result_metadata_id; /* v5; p NULL before */
    cql_query_params params;
} cql_execute;

typedef enum cql_batch_type {
    CQL_BATCH_LOGGED = 0,
    CQL_BATCH_UNLOGGED = 1,
    CQL_BATCH_COUNTER = 2
} cql_batch_type;
typedef struct cql_batch_statement {
    int prepared;  /* kind 1: id is a prepared id; kind 0: query is CQL text */
    cql_str query; /* or the id */
    cql_values values;
} cql_batch_statement;
typedef struct cql_batch {
    uint8_t type;
    cql_batch_statement *statements;
    uint16_t n;
    uint16_t consistency;
    uint32_t flags;
    uint16_t serial_consistency;
    int64_t timestamp;
    cql_str keyspace;
    int32_t now_in_seconds;
} cql_batch;

/* Event types, as a REGISTER's mask. */
#define CQL_EVENT_TOPOLOGY_CHANGE 0x1
#define CQL_EVENT_STATUS_CHANGE 0x2
#define CQL_EVENT_SCHEMA_CHANGE 0x4
typedef struct cql_register {
    unsigned events;
} cql_register;

typedef struct cql_request {
    uint8_t version, flags, opcode;
    int16_t stream;
    cql_bytes_pair *custom_payload; /* flag 0x04 */
    uint16_t n_custom;
    union {
        cql_startup startup;
        cql_value auth_token; /* AUTH_RESPONSE */
        cql_query query;
        cql_prepare prepare;
        cql_execute execute;
        cql_batch batch;
        cql_register reg;
    } u;
    cql_pool pool;
} cql_request;

/* Decodes the body of env, a request (already decompressed if it was), into req, which
 * borrows env's body. 0, or -1 with a message naming what is wrong in err (answered as
 * PROTOCOL_ERROR). req must be freed with cql_request_free either way. Bytes after a
 * well-formed body are ignored, as the specification allows. */
int cql_request_decode(const cql_envelope *env, cql_request *req, char *err, size_t errlen);
void cql_request_free(cql_request *req);

/* ---- responses ----
 * Bodies are appended to out (after cql_envelope_begin); 0, or -1 when out is full. */

/* What precedes a response's body when its flags say so: a tracing id (0x02), warnings
 * (0x08), a custom payload (0x04). Writes the header with those flags and the prefix;
 * returns the envelope's start for cql_envelope_end, or (size_t)-1. x may be NULL. */
typedef struct cql_response_extras {
    const uint8_t *tracing_id; /* 16 bytes, or NULL */
    const char *const *warnings;
    uint16_t n_warnings;
    const cql_text_bytes *custom_payload;
    uint16_t n_custom;
} cql_response_extras;
size_t cql_response_begin(buf *out, uint8_t version, int16_t stream, uint8_t opcode,
                          const cql_response_extras *x);

/* ERROR. The fields after message are those its code carries; unused ones are ignored. */
typedef struct cql_failure_reason {
    cql_inet endpoint; /* the address only */
    uint16_t code;
} cql_failure_reason;
typedef struct cql_error {
    cql_error_code code;
    const char *message;
    uint16_t consistency;              /* UNAVAILABLE, timeouts, failures, CAS_WRITE_UNKNOWN */
    int32_t required, alive;           /* UNAVAILABLE */
    int32_t received, block_for;       /* timeouts, failures, CAS_WRITE_UNKNOWN */
    const char *write_type;            /* WRITE_TIMEOUT, WRITE_FAILURE ("SIMPLE", "CAS", ...) */
    uint16_t contentions;              /* WRITE_TIMEOUT of write type CAS, v5 */
    int data_present;                  /* READ_TIMEOUT, READ_FAILURE */
    const cql_failure_reason *reasons; /* failures: v5 writes the map, v4 its count */
    uint32_t n_reasons;
    const char *keyspace;         /* FUNCTION_FAILURE, ALREADY_EXISTS */
    const char *name;             /* the function (FUNCTION_FAILURE), table (ALREADY_EXISTS) */
    const char *const *arg_types; /* FUNCTION_FAILURE */
    uint16_t n_arg_types;
    const uint8_t *id; /* UNPREPARED */
    size_t id_len;
} cql_error;
int cql_write_error(buf *out, uint8_t version, const cql_error *e);

/* AUTHENTICATE: the authenticator's class name. AUTH_CHALLENGE and AUTH_SUCCESS: a
 * [bytes] token (len < 0 for null). READY has an empty body. */
int cql_write_authenticate(buf *out, const char *authenticator);
int cql_write_auth_token(buf *out, const void *token, int32_t len);
/* SUPPORTED: a [string multimap]. */
int cql_write_supported(buf *out, const cql_text_multi *options, uint16_t n);

/* RESULT kinds. */
#define CQL_RESULT_VOID 0x0001
#define CQL_RESULT_ROWS 0x0002
#define CQL_RESULT_SET_KEYSPACE 0x0003
#define CQL_RESULT_PREPARED 0x0004
#define CQL_RESULT_SCHEMA_CHANGE 0x0005

/* Rows metadata flags. */
#define CQL_ROWS_GLOBAL_TABLES_SPEC 0x0001
#define CQL_ROWS_HAS_MORE_PAGES 0x0002
#define CQL_ROWS_NO_METADATA 0x0004
#define CQL_ROWS_METADATA_CHANGED 0x0008

typedef struct cql_column {
    const char *keyspace, *table; /* ignored under a global table spec */
    const char *name;
    const cql_type *type;
} cql_column;

/* A result's metadata. The global table spec is used when keyspace and table are set
 * (every column then belongs to them); paging_state (has more pages) when not NULL;
 * new_metadata_id (metadata changed, v5) when not NULL; no_metadata writes only the
 * flags, the count and the paging state. */
typedef struct cql_metadata {
    const char *keyspace, *table;
    const cql_column *columns;
    uint32_t n_columns;
    int no_metadata;
    const uint8_t *paging_state;
    size_t paging_len;
    const uint8_t *new_metadata_id;
    size_t new_metadata_id_len;
} cql_metadata;

int cql_write_void(buf *out);
/* Rows: the kind, the metadata and a row count of 0, whose offset *count_at receives;
 * each row follows as n_columns [bytes] (cql_put_bytes); cql_write_rows_count sets the
 * count once they are written. */
int cql_write_rows_begin(buf *out, uint8_t version, const cql_metadata *m, size_t *count_at);
void cql_write_rows_count(buf *out, size_t count_at, uint32_t rows);
int cql_write_set_keyspace(buf *out, const char *keyspace);

/* Prepared: the id, the v5 result metadata id, the bind markers' metadata (with the
 * indexes of the partition key's markers) and the result's metadata. */
typedef struct cql_prepared {
    const uint8_t *id;
    size_t id_len;
    const uint8_t *result_metadata_id; /* v5 */
    size_t result_metadata_id_len;
    const char *keyspace, *table; /* global table spec of the markers, when set */
    const cql_column *markers;
    uint32_t n_markers;
    const uint16_t *pk_indexes;
    uint32_t n_pk;
    const cql_metadata *result; /* NULL: no metadata, no column */
} cql_prepared;
int cql_write_prepared(buf *out, uint8_t version, const cql_prepared *p);

/* Schema_change results and SCHEMA_CHANGE events: change "CREATED", "UPDATED" or
 * "DROPPED"; target "KEYSPACE" (keyspace only), "TABLE" or "TYPE" (and name),
 * "FUNCTION" or "AGGREGATE" (and name and argument types). */
typedef struct cql_schema_change {
    const char *change, *target, *keyspace, *name;
    const char *const *arg_types;
    uint16_t n_arg_types;
} cql_schema_change;
int cql_write_schema_change_result(buf *out, const cql_schema_change *c);

/* EVENT bodies. change is "NEW_NODE" or "REMOVED_NODE" (topology), "UP" or "DOWN"
 * (status). Events go on stream -1. */
int cql_write_topology_event(buf *out, const char *change, const cql_inet *node);
int cql_write_status_event(buf *out, const char *change, const cql_inet *node);
int cql_write_schema_event(buf *out, const cql_schema_change *c);

#endif
