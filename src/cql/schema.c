/* schema.c — the CQL schema document (schema.h): loading it from the database record
 * "cql_schema", storing it after a change with a new version, and lookups in it.
 *
 * The statements that change it are exec_ddl.c's; this file only keeps the document. */
#include "cql/schema.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "engine/meta.h"

#define RECORD "cql_schema"

void cql_uuid_random(char out[37])
{
    uint8_t b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        /* no entropy source: the clock and a counter still make ids differ */
        static unsigned long n;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        uint64_t k = __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED);
        memcpy(b, &t, 8);
        memcpy(b + 8, &k, 8);
    }
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int cql_uuid_parse(const char *text, uint8_t out[16])
{
    size_t n = 0;
    for (size_t i = 0; text[i]; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-') return -1;
            continue;
        }
        int h = hexval(text[i]), l = text[i + 1] ? hexval(text[i + 1]) : -1;
        if (h < 0 || l < 0 || n >= 16) return -1;
        out[n++] = (uint8_t)(h << 4 | l);
        i++;
    }
    return n == 16 ? 0 : -1;
}

int cql_schema_load(qr_db *db, cql_schema *s, qr_err *err)
{
    s->doc = NULL;
    json_t *doc = NULL;
    if (meta_record_get(db, META_RECORD_SCHEMA, RECORD, &doc, err) < 0) return -1;
    if (doc == NULL) {
        char host[37], version[37];
        cql_uuid_random(host);
        cql_uuid_random(version);
        doc = json_pack("{s:s, s:s, s:{}}", "version", version, "host_id", host, "keyspaces");
        if (doc == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    }
    if (!json_is_object(json_object_get(doc, "keyspaces"))) {
        json_decref(doc);
        return err_set(err, QR_E_INTERNAL, "the stored CQL schema cannot be read");
    }
    s->doc = doc;
    return 0;
}

void cql_schema_free(cql_schema *s)
{
    json_decref(s->doc);
    s->doc = NULL;
}

int cql_schema_save(qr_db *db, cql_schema *s, qr_err *err)
{
    char version[37];
    cql_uuid_random(version);
    json_object_set_new(s->doc, "version", json_string(version));
    return meta_record_put(db, META_RECORD_SCHEMA, RECORD, s->doc, err);
}

json_t *cql_schema_keyspace(const cql_schema *s, const char *ks)
{
    return json_object_get(json_object_get(s->doc, "keyspaces"), ks);
}

json_t *cql_schema_table(const cql_schema *s, const char *ks, const char *table)
{
    return json_object_get(json_object_get(cql_schema_keyspace(s, ks), "tables"), table);
}

json_t *cql_schema_type(const cql_schema *s, const char *ks, const char *type)
{
    return json_object_get(json_object_get(cql_schema_keyspace(s, ks), "types"), type);
}

const char *cql_schema_version(const cql_schema *s)
{
    return json_string_value(json_object_get(s->doc, "version"));
}

const char *cql_schema_host_id(const cql_schema *s)
{
    return json_string_value(json_object_get(s->doc, "host_id"));
}
