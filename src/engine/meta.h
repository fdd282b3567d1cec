/* meta.h — a database's metadata beside its tables: on-demand backups ("\0B"), per-table
 * settings ("\0S": contributor insights, resource policies, billing switches, whether a
 * CQL table keeps partition deletions), and the in-memory state that goes with them
 * (backup ids, a settings lock, policy revisions, client request tokens), all held by one
 * qr_db, so two databases in one process share nothing. It keeps records and numbers;
 * what they mean to DynamoDB (ARNs, messages, the records' JSON) is ops'. */
#ifndef QR_ENGINE_META_H
#define QR_ENGINE_META_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "quarry.h"
#include "util/err.h"

/* Memory: a json_t * or char * returned through an out-parameter is the caller's to
 * release (json_decref, free); arguments are borrowed for the call and copied if kept.
 * Functions returning int give 0 (or a documented count or flag) on success and -1 with
 * err set on failure, as the rest of the engine does. */
struct table;
struct read_view;

/* ---- on-demand backups ----
 * A backup is numbered (1, 2, … per database, never reused while a higher one exists) and
 * is a record (JSON, the caller's) plus a copy of a table's items. The record is written
 * last, so a backup whose record exists is complete; meta_backup_drop removes both. */

/* Takes a new backup id. */
uint32_t meta_backup_id_take(qr_db *db);
/* The id the next meta_backup_id_take will give (every existing backup's is below it). */
uint32_t meta_backup_id_peek(qr_db *db);
/* Copies every item of table t, as read view v holds them (NULL: a view taken for the
 * copy), under backup id, and counts them: *items and their DynamoDB *bytes. The items
 * are not reported to the database's hook (a backup is no request's read). */
int meta_backup_copy(qr_db *db, const struct table *t, const struct read_view *v, uint32_t id,
                     int64_t *items, int64_t *bytes, qr_err *err);
/* Calls fn with the JSON text and DynamoDB size of every item of t as read view v holds
 * them (NULL: a view taken for the walk), in key order, unmetered and unreported to the
 * hook (an export is no request's read). A non-zero return of fn stops the walk and is
 * returned. */
typedef int (*meta_item_fn)(void *arg, const char *json, size_t len, size_t size, qr_err *err);
int meta_table_items(qr_db *db, const struct table *t, const struct read_view *v, meta_item_fn fn,
                     void *arg, qr_err *err);
/* The item of t whose key attributes are key, as v holds it, unmetered and unreported:
 * 1 with *item a new reference, 0 with *item NULL when there is none. */
int meta_table_item(qr_db *db, const struct table *t, const struct read_view *v, const json_t *key,
                    json_t **item, qr_err *err);
/* Stores rec as backup id's record (synced: the items copied before it are then durable
 * too). */
int meta_backup_put(qr_db *db, uint32_t id, const json_t *rec, qr_err *err);
/* Backup id's record: returns 1 with *rec set (a new reference), 0 with *rec NULL if
 * there is none (or it cannot be decoded), -1 on a storage error. */
int meta_backup_get(qr_db *db, uint32_t id, json_t **rec, qr_err *err);
/* The backup with the lowest id above after and below before: returns 1 with *id and
 * *rec (a new reference) set, 0 if there is none, -1 on a storage error. Backups without
 * a record (being made, or failed) are passed over. */
int meta_backup_next(qr_db *db, uint32_t after, uint32_t before, uint32_t *id, json_t **rec,
                     qr_err *err);
/* Removes backup id: its record and its items. */
int meta_backup_drop(qr_db *db, uint32_t id, qr_err *err);

/* The items of a backup, in the order they were copied (a restore reads them). */
typedef struct meta_backup_items meta_backup_items;
meta_backup_items *meta_backup_items_open(qr_db *db, uint32_t id);
/* Steps to the next item: returns 1 with *json and *len set to its JSON text (borrowed,
 * valid until the next step or meta_backup_items_close), 0 at the end, -1 with err set on
 * a storage error. */
int meta_backup_items_next(meta_backup_items *it, const char **json, size_t *len, qr_err *err);
void meta_backup_items_close(meta_backup_items *it);

/* ---- per-table settings ----
 * One JSON value per (table, kind, sub-name), keyed by the table's TableId, so a table
 * created again under an old name starts with none of the settings of the one deleted.
 * sub is an index name, a stream's "stream/LABEL", or NULL for the table's own. */
#define META_SETTING_INSIGHTS 'I'
#define META_SETTING_POLICY 'P'
#define META_SETTING_BILLING 'B'       /* the times of switches to on-demand (UpdateTable) */
#define META_SETTING_CQL_DELETIONS 'D' /* a CQL table keeps deletions of partitions or ranges */

/* The setting: 0 with *out a new reference, or NULL if there is none. */
int meta_setting_get(qr_db *db, const struct table *t, char kind, const char *sub, json_t **out,
                     qr_err *err);
/* A read-modify-write of one setting, atomic with respect to every other change of db's
 * settings: change is given the current value (borrowed; NULL if none) and returns 0 with
 * *next the new value (a new reference, taken over by meta_setting_update; NULL leaves
 * the setting as it is), or -1 with err set to change nothing. It runs under db's
 * settings lock, so it must not call meta_setting_* itself. */
typedef int (*meta_setting_change_fn)(const json_t *cur, json_t **next, void *arg, qr_err *err);
int meta_setting_update(qr_db *db, const struct table *t, char kind, const char *sub,
                        meta_setting_change_fn change, void *arg, qr_err *err);
/* Removes every setting of t, of every kind above (DeleteTable). A failure is not
 * reported: the records of a deleted table are never read again. */
void meta_setting_forget_all(qr_db *db, const struct table *t);

/* ---- the database's records ----
 * One JSON record per (kind, id), written durably and kept until the database is removed:
 * long-running jobs (exports, imports: ids are texts that sort in the order the jobs
 * began) and a front end's schema kept beside the catalog (the CQL keyspaces and types). */
#define META_RECORD_EXPORT 'E'
#define META_RECORD_IMPORT 'I'
#define META_RECORD_SCHEMA 'S'
/* Stores rec as the record (kind, id), replacing any (synced). */
int meta_record_put(qr_db *db, char kind, const char *id, const json_t *rec, qr_err *err);
/* The record (kind, id): 1 with *rec a new reference, 0 with *rec NULL if there is none. */
int meta_record_get(qr_db *db, char kind, const char *id, json_t **rec, qr_err *err);
/* Every record of kind, in id order: *out a new array. */
int meta_record_list(qr_db *db, char kind, json_t **out, qr_err *err);

/* ---- background jobs (exports, imports) ----
 * A job runs fn(db, arg) on a thread of its own; qr_close waits for every job before it
 * closes anything. meta_run_id names this opening of db: a record a job left unfinished
 * under another id was cut short by the process ending. */
typedef void (*meta_job_fn)(qr_db *db, void *arg);
int meta_job_start(qr_db *db, meta_job_fn fn, void *arg, qr_err *err);
void meta_jobs_wait(qr_db *db);
uint64_t meta_run_id(const qr_db *db);
/* Held by a request from the look-up of its ClientToken among the records to the storing
 * of its own, so two requests with one token start one job. */
void meta_claim_lock(qr_db *db);
void meta_claim_unlock(qr_db *db);

/* A number above every one this function gave for db before, and at least at_least
 * (resource policies' revision ids: the time of the change in milliseconds, unique). */
uint64_t meta_revision_next(qr_db *db, uint64_t at_least);

/* ---- client request tokens (TransactWriteItems' idempotency) ----
 * db remembers, in memory only (not across a restart), the requests made with a client
 * request token: while the first runs, and for META_TOKEN_TTL_SECONDS after it completed,
 * with its response; at most META_TOKEN_SLOTS tokens at once, the oldest completed one
 * forgotten first. A request is known by its canonical text (of which a digest is kept). */
#define META_TOKEN_TTL_SECONDS 600
#define META_TOKEN_SLOTS 1024
typedef enum meta_token_state {
    META_TOKEN_CLAIMED = 0,   /* the token is new (or expired): this request owns it now */
    META_TOKEN_DONE = 1,      /* the same request completed: *replay is its response */
    META_TOKEN_MISMATCH = -1, /* the token was used by a different request */
    META_TOKEN_RUNNING = -2,  /* the same request is still running */
    META_TOKEN_FULL = -3,     /* every slot holds a request still running */
    META_TOKEN_NO_MEMORY = -4
} meta_token_state;
/* Looks token up for the request whose canonical text is request (len bytes). On
 * META_TOKEN_DONE, *replay is a copy of the response meta_token_finish kept (malloc'd:
 * the caller frees it); otherwise *replay is NULL. */
meta_token_state meta_token_claim(qr_db *db, const char *token, const char *request, size_t len,
                                  char **replay);
/* Ends the claim META_TOKEN_CLAIMED gave: keeps a copy of response, what a repeat of the
 * request answers, or with response NULL (the request failed) forgets the token, so that
 * a retry runs again. */
void meta_token_finish(qr_db *db, const char *token, const char *response);

#endif
