/* ops.h — DynamoDB's operations: the one handler type, what handlers share (parameter
 * checks, expressions of a request, capacity), and the item operations as functions of
 * parsed requests, which the handlers and PartiQL both call.
 *
 * The operation table (src/api/call.c) hands each handler one call: the request's text
 * and, parsed, its JSON object. Handlers check their own parameters with the param_*
 * helpers, which give DynamoDB's "1 validation error detected: …" messages. */
#ifndef QR_OPS_H
#define QR_OPS_H

#include <jansson.h>

#include "engine/engine.h"
#include "expr/expr.h"
#include "util/err.h"
#include "watch/watch.h"

/* One call of an operation. The request is borrowed for the call; the handler answers
 * with a document in answer (which the caller then owns and frees) or by writing the
 * answer's text into out itself, as GetItem, Query and Scan do to copy stored items into
 * it without parsing them. */
typedef struct op_call {
    const char *text; /* the request body as received */
    size_t len;
    json_t *req;  /* the body parsed: a JSON object, set before the handler runs unless
                     its operation reads the text first (op_call_parse then sets it) */
    char *tables; /* where the request's table names go, for log lines (qr_response's) */
    size_t tables_cap;
    json_t *answer;
    buf out;
    const struct shape_operation *input; /* the operation's input shape (ops/shapes.h), which
                                  op_call_parse checks the request against; or NULL */
} op_call;
typedef int (*op_handler)(qr_db *db, op_call *c, qr_err *err);
/* Parses c's text into c->req (a JSON object), notes its table names and checks its
 * members' types against c->input; -1 with DynamoDB's SerializationException when it is
 * not an object or a member is not of its type. */
int op_call_parse(op_call *c, qr_err *err);
/* Lets go of what a call holds: its parsed request and its answer. */
void op_call_done(op_call *c);
/* Runs handler h for a request one operation made for another (req borrowed): *answer is
 * its answer as a document (a new reference, parsed if the handler wrote text), or NULL
 * when it failed (err says why). */
int op_run(qr_db *db, op_handler h, json_t *req, json_t **answer, qr_err *err);
/* The table names a parsed request names, for log lines (see qr_response.tables). */
void ops_request_tables(const json_t *req, char *out, size_t cap);

/* ValidationException (table_refuse_owned's) when the table req's TableName names (or
 * its ARN) is owned by another front end (a CQL table): for the operations that change a
 * table's schema, which the dispatcher asks before their handlers run. 0 otherwise,
 * a missing or unknown table included (the handler answers for it). */
int ops_refuse_owned_table(qr_db *db, const json_t *req, qr_err *err);

/* Appends v serialised as compact JSON. */
int json_append(buf *out, const json_t *v);

/* transient.c: the states of qr_options.transient_ms, marked in a table's description.
 * Each does nothing while transient_ms is 0. */
/* Marks desc (the catalog's copy being changed) status ("CREATING", "UPDATING",
 * "DELETING") until transient_ms from now. */
void transient_mark(qr_db *db, json_t *desc, const char *status);
/* Marks a global index being created CREATING until transient_ms from now. */
void transient_mark_index(qr_db *db, json_t *gsi);
/* Keeps a copy of the description of gsi, deleted from desc, to show as DELETING. */
void transient_mark_deleted_index(qr_db *db, json_t *desc, const json_t *gsi);
/* On a copy of a description being answered: the states its marks give now, marks removed. */
void transient_describe(json_t *desc);
/* t's status while its time runs (a static word), or NULL. */
const char *transient_status(qr_db *db, table *t);
/* 1 when t was deleted and its DELETING time is over: it is to be dropped now. */
int transient_deleted(qr_db *db, table *t);
/* ResourceInUseException while t is CREATING, UPDATING or DELETING. */
int transient_refuse_change(qr_db *db, table *t, qr_err *err);
/* catalog_get for the item operations: NULL also for a table CREATING or DELETING. */
table *ops_table_get(qr_db *db, const char *name);

/* tables.c */
int op_create_table(qr_db *db, op_call *c, qr_err *err);
int op_describe_table(qr_db *db, op_call *c, qr_err *err);
int op_list_tables(qr_db *db, op_call *c, qr_err *err);
int op_delete_table(qr_db *db, op_call *c, qr_err *err);
int op_update_table(qr_db *db, op_call *c, qr_err *err);
/* items.c */
int op_put_item(qr_db *db, op_call *c, qr_err *err);
/* plain.c: a plain PutItem or GetItem (see plain_decode) read from its text. plain_decode
 * returns 1 and fills d when text is one, with a reference to its table in d->t that the
 * caller lets go (catalog_release, or catalog_release_after_writes after a write) and the
 * rest freed by plain_free; else 0, with nothing held. d's attributes are slices of text. */
typedef enum plain_kind { PLAIN_PUT, PLAIN_GET } plain_kind;
#define PLAIN_ATTRS 64
typedef struct plain_attr {
    const char *name, *text;
    size_t name_len, text_len;
    int number;
    size_t size; /* the value's DynamoDB size */
} plain_attr;
typedef struct plain_request {
    table *t;       /* the table it names */
    json_t *key;    /* the key attributes, a Key map */
    buf stored;     /* PLAIN_PUT: the item in the stored form */
    int consistent; /* PLAIN_GET: ConsistentRead */
    char table[256];
    plain_attr attrs[PLAIN_ATTRS];
    size_t nattrs;
} plain_request;
int plain_decode(qr_db *db, plain_kind kind, const char *text, size_t len, plain_request *d);
void plain_free(plain_request *d);
int op_get_item(qr_db *db, op_call *c, qr_err *err);
int op_delete_item(qr_db *db, op_call *c, qr_err *err);
int op_update_item(qr_db *db, op_call *c, qr_err *err);
/* query.c */
int op_query(qr_db *db, op_call *c, qr_err *err);
int op_scan(qr_db *db, op_call *c, qr_err *err);
/* Query and Scan of parsed requests, which their handlers read and check and PartiQL's
 * SELECT plans; every pointer is borrowed for the call. */
typedef struct query_request {
    table *t;
    const qr_index *index;             /* IndexName's (query_index); NULL: the table */
    const expr_keycond_multi *key;     /* Query: the key condition on query_key_schema's key */
    const expr_cond *filter;           /* NULL: none */
    int legacy_filter;                 /* Query: the filter is a QueryFilter (messages say so) */
    const expr_proj *projection;       /* NULL: every attribute */
    const char *select;                /* Select, or NULL */
    long long limit;                   /* 0: none */
    json_t *start_key;                 /* ExclusiveStartKey as given, or NULL */
    int consistent;                    /* ConsistentRead */
    int forward;                       /* Query: ScanIndexForward */
    long long segment, total_segments; /* Scan: its part of the table (0 of 1: all) */
    const char *capacity;              /* ReturnConsumedCapacity */
} query_request;
/* The index name of t a read may read (NULL: none, *out NULL): refuses one t lacks, one
 * still backfilling and a consistent read of a global one, with DynamoDB's messages. */
int query_index(const table *t, const char *name, int consistent, const qr_index **out,
                qr_err *err);
/* The key a Query of t reads: index ix's, or the table's (ix NULL). */
void query_key_schema(const table *t, const qr_index *ix, expr_key_schema *ks);
/* Each appends its answer's text to out: Items (or only the Count), Count, ScannedCount,
 * LastEvaluatedKey and ConsumedCapacity; refusals of a filter on a key attribute, of
 * paths into keys and of attributes an index does not project are theirs. */
int query_read(qr_db *db, const query_request *q, buf *out, qr_err *err);
int scan_read(qr_db *db, const query_request *q, buf *out, qr_err *err);
/* ttl.c */
int op_update_time_to_live(qr_db *db, op_call *c, qr_err *err);
int op_describe_time_to_live(qr_db *db, op_call *c, qr_err *err);
int op_describe_continuous_backups(qr_db *db, op_call *c, qr_err *err);
int op_update_continuous_backups(qr_db *db, op_call *c, qr_err *err);
/* account.c */
int op_describe_endpoints(qr_db *db, op_call *c, qr_err *err);
int op_describe_limits(qr_db *db, op_call *c, qr_err *err);
int op_tag_resource(qr_db *db, op_call *c, qr_err *err);
int op_untag_resource(qr_db *db, op_call *c, qr_err *err);
int op_list_tags_of_resource(qr_db *db, op_call *c, qr_err *err);
/* Applies CreateTable's Tags to the new table. */
int account_tag_new_table(qr_db *db, const char *name, json_t *tags, qr_err *err);
/* Checks a Tags list against DynamoDB's rules (at most 50; keys 1-128 and values up to
 * 256 characters, of letters, digits, spaces and _.:/=+-@). */
int account_check_tags(json_t *tags, qr_err *err);
/* batch.c */
int op_batch_get_item(qr_db *db, op_call *c, qr_err *err);
int op_batch_write_item(qr_db *db, op_call *c, qr_err *err);
/* transact.c */
int op_transact_write_items(qr_db *db, op_call *c, qr_err *err);
int op_transact_get_items(qr_db *db, op_call *c, qr_err *err);
/* The transactions of parsed members, which their handlers read and check and PartiQL's
 * ExecuteTransaction plans. A member is filled, then checked (transact_check_member),
 * its expressions parsed, then joined to those before it (transact_join). */
typedef enum transact_kind {
    TRANSACT_CHECK,
    TRANSACT_PUT,
    TRANSACT_DELETE,
    TRANSACT_UPDATE,
    TRANSACT_GET
} transact_kind;
typedef struct transact_member {
    transact_kind kind;
    table *t;                    /* a reference the member holds (transact_member_free) */
    json_t *key;                 /* Key (borrowed); a Put's is its item */
    json_t *item;                /* Put: the item (borrowed) */
    const json_t *values;        /* the ExpressionAttributeValues its expressions read, or
                                    NULL: they count in the transaction's payload */
    const expr_cond *condition;  /* NULL: none */
    const expr_update *update;   /* Update's */
    const expr_proj *projection; /* Get's; NULL: the whole item */
    const char *on_failure;      /* ReturnValuesOnConditionCheckFailure */
    /* kept by transact_join and the run */
    buf ekey;               /* the key encoded */
    json_t *old, *new_item; /* the item before and after (owned; NULL when absent) */
} transact_member;
void transact_member_free(qr_db *db, transact_member *m);
/* Checks member i of n's item or key against its table. A key that does not fit the
 * table cancels the transaction (TransactionCanceledException, the reasons in
 * err->item); any other fault fails the request. */
int transact_check_member(transact_member *m, size_t i, size_t n, qr_err *err);
/* Joins member i, its expressions set, to m[0..i): refuses an update of a key attribute,
 * a second member on one item, and a payload (*payload, summed here) over 4 MB. */
int transact_join(transact_member *m, size_t i, size_t *payload, qr_err *err);
/* What a transaction judges of a Put's item before any table: empty names, values. */
int transact_check_put_item(json_t *item, qr_err *err);
/* A transaction reports an oversized UpdateExpression without the size that UpdateItem
 * and a transaction's ConditionExpression add (recorded in ten regions, October 2026):
 * trims err's message so when it is that, in the parameter's name or in none (a bare
 * context's: then err must be the UpdateExpression's). */
void transact_trim_update_error(qr_err *err);
/* Reads and checks ClientRequestToken of req (*token NULL when absent). */
int transact_check_token(json_t *req, const char **token, qr_err *err);
typedef struct transact_write_request {
    transact_member *m; /* joined */
    size_t n;
    const char *token;    /* ClientRequestToken, or NULL */
    const char *identity; /* with a token, what it stands for: equal text for equal
                             requests, so a repeat answers as the first did and another
                             request with the token is refused */
    const char *capacity; /* ReturnConsumedCapacity */
    const char *metrics;  /* ReturnItemCollectionMetrics */
} transact_write_request;
/* Both answer their operation's answer document in *answer (the caller's). A
 * cancellation is TransactionCanceledException with its reasons in err->item. */
int transact_write(qr_db *db, const transact_write_request *r, json_t **answer, qr_err *err);
int transact_get(qr_db *db, transact_member *m, size_t n, const char *capacity, json_t **answer,
                 qr_err *err);
/* backup_ondemand.c */
int op_create_backup(qr_db *db, op_call *c, qr_err *err);
int op_describe_backup(qr_db *db, op_call *c, qr_err *err);
int op_list_backups(qr_db *db, op_call *c, qr_err *err);
int op_delete_backup(qr_db *db, op_call *c, qr_err *err);
int op_restore_table_from_backup(qr_db *db, op_call *c, qr_err *err);
int op_restore_table_to_point_in_time(qr_db *db, op_call *c, qr_err *err);
/* Takes the SYSTEM backup "<name>$DeletedTableBackup" DynamoDB keeps 35 days of a table
 * deleted with point-in-time recovery enabled; releases t. */
int backup_deleted_table(qr_db *db, table *t, qr_err *err);
/* How long a restore waits, at most, for its items' global-index entries. */
#define RESTORE_INDEX_WAIT_MS 30000
/* Deletes the table a restore was making, when the restore failed: no half-restored
 * table is left behind. */
void restore_abandon(qr_db *db, const char *name);
/* Checks a restore's own rules on its members, after the shape checker and before anything
 * is looked up: the characters of TargetTableName and the on-demand override's limits. 0
 * with *target borrowed from req, or -1 with err set in DynamoDB's words. */
int restore_check_request(const json_t *req, json_t **target, qr_err *err);
/* export.c: ExportTableToPointInTime into a folder standing for S3 (s3dir.h) */
int op_export_table_to_point_in_time(qr_db *db, op_call *c, qr_err *err);
int op_describe_export(qr_db *db, op_call *c, qr_err *err);
int op_list_exports(qr_db *db, op_call *c, qr_err *err);
/* An export's or import's id, as DynamoDB's: the milliseconds of now in 14 digits, '-',
 * 8 random hex digits ("01234567890123-a1b2c3d4"), so ids sort by when they began. */
#define JOB_ID_LEN 24
void job_id(char out[JOB_ID_LEN]);
/* seconds as ISO 8601 with milliseconds, "2020-11-04T07:28:34.028Z". */
void job_iso_time(double seconds, char out[32]);
/* The table name of a table ARN (field names it in messages). */
int job_table_of_arn(const char *arn, const char *field, char *name, size_t cap, qr_err *err);
/* import.c: ImportTable from a folder standing for S3, always into a new table */
int op_import_table(qr_db *db, op_call *c, qr_err *err);
int op_describe_import(qr_db *db, op_call *c, qr_err *err);
int op_list_imports(qr_db *db, op_call *c, qr_err *err);
/* insights.c */
int op_describe_contributor_insights(qr_db *db, op_call *c, qr_err *err);
int op_update_contributor_insights(qr_db *db, op_call *c, qr_err *err);
int op_list_contributor_insights(qr_db *db, op_call *c, qr_err *err);
int op_get_insight_rule_report(qr_db *db, op_call *c, qr_err *err);
int op_quarry_large_item_collections(qr_db *db, op_call *c, qr_err *err);
/* model.c: QuarryDescribeModel, the model watch's figures and findings (watch.h) */
int op_quarry_describe_model(qr_db *db, op_call *c, qr_err *err);
/* policy.c */
int op_put_resource_policy(qr_db *db, op_call *c, qr_err *err);
int op_get_resource_policy(qr_db *db, op_call *c, qr_err *err);
int op_delete_resource_policy(qr_db *db, op_call *c, qr_err *err);
/* settings.c: the settings kept per table outside its description (meta_setting_*).
 * Removes every setting of t (DeleteTable), so none is left behind in the store. */
void setting_forget_all(qr_db *db, const table *t);
/* The parts of an ARN "arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE" (slices of it, not
 * NUL-terminated; lengths beside). For a DynamoDB resource "table/NAME[/SUB/SUB_NAME]",
 * table is NAME and sub, when present, the kind after it (index, stream, backup, ...). */
typedef struct arn_parts {
    const char *partition, *service, *region, *account, *resource;
    size_t partition_len, service_len, region_len, account_len;
    const char *table, *sub, *sub_name; /* NULL when absent; sub_name runs to the end */
    size_t table_len, sub_len;
} arn_parts;
/* Splits arn; -1 if it is not "arn:" and five more colon-separated fields. */
int arn_split(const char *arn, arn_parts *out);
/* 1 when the slice (field, len) is exactly want. */
int arn_is(const char *field, size_t len, const char *want);
/* arn_split for a ResourceArn that must name a DynamoDB table, or an index or stream of
 * one, with DynamoDB's messages for what is not (not an ARN; not such a resource). */
int arn_split_resource(const char *arn, arn_parts *out, qr_err *err);
/* The account quarry's ARNs name. */
#define QR_ACCOUNT "000000000000"
/* streams.c: the DynamoDB Streams API */
int op_list_streams(qr_db *db, op_call *c, qr_err *err);
int op_describe_stream(qr_db *db, op_call *c, qr_err *err);
int op_get_shard_iterator(qr_db *db, op_call *c, qr_err *err);
int op_get_records(qr_db *db, op_call *c, qr_err *err);

/* clock.c */
int op_quarry_advance_clock(qr_db *db, op_call *c, qr_err *err);

/* ---- params.c: request parameters ---- */
/* Some of a request's members DynamoDB judges together, reporting every one that breaks
 * its constraint in one message: "2 validation errors detected: <a>; <b>". */
typedef struct member_errors {
    buf list;
    int count;
} member_errors;
void member_errors_init(member_errors *m);
/* Adds one member's error: the text of a single-error message, its "1 validation error
 * detected: " envelope dropped. */
void member_errors_add(member_errors *m, const char *msg);
/* Sets err to the combined message if any error was added (then returns -1, else 0), and
 * frees the list either way. */
int member_errors_finish(member_errors *m, qr_err *err);
/* Checks a table name's length and characters; field is the lowerCamel parameter name
 * used in messages ("tableName"). */
int param_check_table_name(json_t *v, const char *field, qr_err *err);
/* DynamoDB's error for a required member left out: field names it in lowerCamel case
 * ("timeToLiveSpecification.enabled"). */
int param_null(const char *field, qr_err *err);
/* Now, in seconds since the epoch to the millisecond, as DynamoDB's dates are given. */
double ops_now_seconds(void);

/* context.c: the AWS region the running call was received for (qr_call_in), or
 * "ddblocal"; ops_enter_context sets the thread's call context and returns the one it
 * replaces. */
const char *ops_request_region(void);
const qr_call_context *ops_enter_context(const qr_call_context *ctx);
/* Reads TableName (or another field) and finds the table, taking a reference the caller
 * drops with catalog_release. ResourceNotFoundException if it does not exist. */
int param_table(qr_db *db, json_t *req, const char *key, table **out, qr_err *err);
/* The optional TableName that narrows a listing (ListBackups, ListStreams,
 * ListContributorInsights): a table's name or ARN, checked as a name; *out is the bare
 * name, or NULL when absent. */
int param_optional_table_name(json_t *req, const char **out, qr_err *err);
/* Optional string parameter; *out is NULL when absent. SerializationException if not a
 * string. */
int param_string(json_t *req, const char *key, const char **out, qr_err *err);
/* The text of member key of req, or dflt when it has none: for members the shape checker
 * has judged already (ops/shapes.h), which need no checking again. */
const char *param_text(const json_t *req, const char *key, const char *dflt);
/* Optional enum parameter; *out is dflt when absent. allowed is NULL-terminated. */
int param_enum(json_t *req, const char *key, const char *const *allowed, const char *dflt,
               const char **out, qr_err *err);
int param_bool(json_t *req, const char *key, int dflt, int *out, qr_err *err);
/* Optional integer parameter in [min, max]; *present tells whether it was given. */
int param_int(json_t *req, const char *key, long long min, long long max, long long *out,
              int *present, qr_err *err);
/* Optional object / array parameter (borrowed); NULL when absent. */
int param_object(json_t *req, const char *key, json_t **out, qr_err *err);
int param_array(json_t *req, const char *key, json_t **out, qr_err *err);
/* The lowerCamel name DynamoDB uses for a parameter in validation messages. */
const char *param_field(const char *key, char *out, size_t cap);

/* ---- exprs.c: the expressions of one request ---- */
typedef struct req_exprs {
    expr_ctx cx;
    expr_cond *condition;  /* ConditionExpression or Expected */
    expr_cond *filter;     /* FilterExpression, QueryFilter or ScanFilter */
    expr_update *update;   /* UpdateExpression or AttributeUpdates */
    expr_proj *projection; /* ProjectionExpression or AttributesToGet */
    int has_key_condition; /* KeyConditionExpression present (parsed by the caller) */
} req_exprs;

enum {
    EXPRS_CONDITION = 1,
    EXPRS_FILTER = 2,
    EXPRS_UPDATE = 4,
    EXPRS_PROJECTION = 8,
    EXPRS_KEY_CONDITION = 16
};
/* Parses the expression parameters the operation allows (EXPRS_* flags) from req, and
 * their legacy equivalents, checking DynamoDB's rules on mixing them and on unused
 * names and values. For EXPRS_KEY_CONDITION only the bookkeeping is done here; the
 * caller parses the key condition with exprs.cx before calling exprs_finish. */
int exprs_parse(req_exprs *x, json_t *req, int allowed, qr_err *err);
/* Fails, with DynamoDB's message, if the projection or the filter looks inside a key
 * attribute of table t or of one of its indexes (a.b or a[0]): keys are scalars. */
int exprs_check_key_paths(const req_exprs *x, const table *t, qr_err *err);
/* The same for projection p and filter f (either may be NULL). */
int exprs_check_paths(const expr_proj *p, const expr_cond *f, const table *t, qr_err *err);
/* Runs the unused names/values check once every expression is parsed. */
int exprs_finish(req_exprs *x);
/* Some checks DynamoDB makes before it looks a table up: parses filter (a JSON string)
 * with names and values as a FilterExpression and, if an operand there has a type its
 * operator or function refuses, sets err to that refusal from "Incorrect operand type"
 * on and returns -1; else returns 0 and leaves err alone. */
int exprs_operand_type_error(json_t *filter, json_t *names, json_t *values, qr_err *err);
void exprs_free(req_exprs *x);

/* ---- capacity.c ---- (the unit rules are capacity/meter.h's: meter_read_units, ...) */
/* The ConsumedCapacity object itself (for batch responses), or NULL for NONE. */
json_t *capacity_object(const char *mode, const char *table, double units, int is_write);
/* The same for a table whose indexes took part: index_units[i] is what index
 * t->indexes[i] consumed (0: untouched). The total includes them; INDEXES mode lists
 * them under GlobalSecondaryIndexes / LocalSecondaryIndexes. */
json_t *capacity_object_indexed(const char *mode, const table *t, double table_units,
                                const double *index_units, int is_write);
/* Fills index_units (t->nindexes entries) for one write old -> new. */
void capacity_index_writes(const table *t, const json_t *old_item, const json_t *new_item,
                           double *index_units);

/* ---- items.c: the single-item operations of parsed requests ----
 * The handlers read and check a request, then run it with these; PartiQL runs its plans
 * with them. Every pointer is borrowed for the call (the table is the caller's
 * reference); the strings are the parameters' values, "NONE" for an absent one. */
typedef struct item_request {
    table *t;
    const json_t *key;           /* the Key, checked (key_check_key, item_check_key); for
                                    PutItem the item, or a map of its key attributes */
    const json_t *item;          /* PutItem: the item (item_check_put), NULL when stored */
    const buf *stored;           /* PutItem: the item in the stored form, or NULL */
    size_t size;                 /* PutItem: item_size of item */
    const expr_cond *condition;  /* ConditionExpression or Expected; NULL: none */
    const expr_update *update;   /* UpdateItem: UpdateExpression or AttributeUpdates */
    const expr_proj *projection; /* GetItem; NULL: the whole item */
    const char *return_values;   /* ReturnValues */
    const char *on_failure;      /* ReturnValuesOnConditionCheckFailure */
    const char *capacity;        /* ReturnConsumedCapacity */
    const char *metrics;         /* ReturnItemCollectionMetrics */
    int consistent;              /* GetItem: ConsistentRead */
    /* UpdateItem: also hold what the update writes to the item size limit, as UpdateItem
     * does for an UpdateExpression (a transaction or PartiQL judges the item alone) */
    int measure_update;
    /* PutItem read from its text (item NULL): its attributes, for the model watch */
    const watch_attr *attrs;
    size_t nattrs;
} item_request;
/* Checks PutItem's item against t (its key, its values and its size) with PutItem's
 * messages; *size is its item_size. */
int item_check_put(const table *t, json_t *item, size_t *size, qr_err *err);
/* Checks the Key of an UpdateItem or a DeleteItem against t, with their messages. */
int item_check_key(const table *t, json_t *key, qr_err *err);
/* Each answers its operation's answer document in *answer (the caller's), or fails with
 * the operation's errors: ConditionalCheckFailedException with the item in err->item
 * when on_failure is ALL_OLD. */
int items_put(qr_db *db, const item_request *r, json_t **answer, qr_err *err);
int items_update(qr_db *db, const item_request *r, json_t **answer, qr_err *err);
int items_delete(qr_db *db, const item_request *r, json_t **answer, qr_err *err);
/* GetItem answers in text, appended to out, its stored item copied as it is. */
int items_get(qr_db *db, const item_request *r, buf *out, qr_err *err);
/* 1 when update u, applied to an absent item, left only the key (its actions only removed):
 * DynamoDB then writes no item. An update with no actions at all still creates one. */
int item_update_leaves_none(const table *t, const json_t *old, const expr_update *u,
                            const json_t *item);
/* Refuses (as DynamoDB does, naming it) an update u that would write a key attribute of t;
 * 0 when u is NULL or writes none. UpdateItem and TransactWriteItems' Update share it. */
int item_update_check_keys(const table *t, const expr_update *u, qr_err *err);
#endif
