/* index.c — secondary index definitions, entries, projections and staged upkeep.
 *
 * See index.h for the layout. This file turns a table description into index
 * definitions, checks CreateTable/UpdateTable index definitions with DynamoDB's
 * messages, computes an item's entry in an index, and stages the index work of a base
 * write. The asynchronous worker and backfill are in propagate.c. */
#include "engine/index.h"

#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "engine/engine_int.h"
#include "model/keycodec.h"
#include "model/value.h"

/* ---- definitions ---- */

static char attr_type(json_t *defs, const char *name)
{
    size_t i;
    json_t *d;
    json_array_foreach(defs, i, d)
    {
        if (strcmp(json_string_value(json_object_get(d, "AttributeName")), name) == 0)
            return json_string_value(json_object_get(d, "AttributeType"))[0];
    }
    return 0;
}

static void index_from_json(qr_index *ix, json_t *def, json_t *defs, int global, uint16_t id)
{
    memset(ix, 0, sizeof *ix);
    ix->name = strdup(json_string_value(json_object_get(def, "IndexName")));
    ix->id = id;
    ix->global = global;
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(def, "KeySchema"), i, k)
    {
        const char *name = json_string_value(json_object_get(k, "AttributeName"));
        if (strcmp(json_string_value(json_object_get(k, "KeyType")), "HASH") == 0) {
            if (ix->npk == QR_MAX_KEY_ATTRS) continue;
            ix->pk_type[ix->npk] = attr_type(defs, name);
            ix->pk[ix->npk++] = strdup(name);
        } else {
            if (ix->nsk == QR_MAX_KEY_ATTRS) continue;
            ix->sk_type[ix->nsk] = attr_type(defs, name);
            ix->sk[ix->nsk++] = strdup(name);
        }
    }
    json_t *proj = json_object_get(def, "Projection");
    const char *type = json_string_value(json_object_get(proj, "ProjectionType"));
    ix->projection = type && strcmp(type, "ALL") == 0       ? QR_PROJ_ALL
                     : type && strcmp(type, "INCLUDE") == 0 ? QR_PROJ_INCLUDE
                                                            : QR_PROJ_KEYS_ONLY;
    if (ix->projection == QR_PROJ_INCLUDE)
        ix->include = json_incref(json_object_get(proj, "NonKeyAttributes"));
    const char *order = json_string_value(json_object_get(def, QR_INDEX_ORDER_FIELD));
    ix->token_order = global && order && strcmp(order, QR_PARTITION_ORDER_TOKEN) == 0;
    ix->creating =
        json_is_true(json_object_get(def, "Backfilling")) ||
        (json_object_get(def, "IndexStatus") &&
         strcmp(json_string_value(json_object_get(def, "IndexStatus")), "CREATING") == 0);
}

size_t index_list_from_desc(json_t *desc, json_t *ids, qr_index **out)
{
    json_t *lsis = json_object_get(desc, "LocalSecondaryIndexes"),
           *gsis = json_object_get(desc, "GlobalSecondaryIndexes");
    json_t *defs = json_object_get(desc, "AttributeDefinitions");
    size_t n = json_array_size(lsis) + json_array_size(gsis), k = 0, i;
    *out = n ? calloc(n, sizeof **out) : NULL;
    json_t *def;
    json_array_foreach(lsis, i, def)
    {
        uint16_t id = (uint16_t)json_integer_value(
            json_object_get(ids, json_string_value(json_object_get(def, "IndexName"))));
        index_from_json(&(*out)[k++], def, defs, 0, id);
    }
    json_array_foreach(gsis, i, def)
    {
        uint16_t id = (uint16_t)json_integer_value(
            json_object_get(ids, json_string_value(json_object_get(def, "IndexName"))));
        index_from_json(&(*out)[k++], def, defs, 1, id);
    }
    return n;
}

void index_list_free(qr_index *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(list[i].name);
        for (int k = 0; k < list[i].npk; k++)
            free(list[i].pk[k]);
        for (int k = 0; k < list[i].nsk; k++)
            free(list[i].sk[k]);
        json_decref(list[i].include);
    }
    free(list);
}

/* ---- checking definitions ---- */

void index_definition_names(json_t *defs, char *out, size_t cap)
{
    size_t i, used = 0;
    json_t *d;
    if (cap) out[0] = '\0';
    json_array_foreach(defs, i, d)
    {
        const char *name = json_string_value(json_object_get(d, "AttributeName"));
        int n = snprintf(out + used, cap - used, "%s%s", i ? ", " : "", name ? name : "");
        if (n < 0 || (size_t)n >= cap - used) break;
        used += (size_t)n;
    }
}

/* Checks an index's Projection against the rules (its members' constraints are the
 * shape checker's). */
static int check_projection(json_t *def, json_t *key_names, size_t *projected, qr_err *err)
{
    json_t *proj = json_object_get(def, "Projection");
    json_t *type = json_object_get(proj, "ProjectionType"),
           *nka = json_object_get(proj, "NonKeyAttributes");
    if (type == NULL || json_is_null(type))
        return err_validation(err, QR_MSG_INVALID_PARAMETER "Unknown ProjectionType: null");
    const char *ts = json_is_string(type) ? json_string_value(type) : "";
    if (strcmp(ts, "INCLUDE") == 0) {
        if (!json_is_array(nka))
            return err_validation(err,
                                  QR_MSG_INVALID_PARAMETER "ProjectionType is INCLUDE, but "
                                                           "NonKeyAttributes is not specified");
        size_t i, j;
        json_t *a;
        json_array_foreach(nka, i, a)
        {
            for (j = 0; j < i; j++)
                if (json_equal(json_array_get(nka, j), a))
                    return err_validation(err,
                                          QR_MSG_INVALID_PARAMETER "Duplicate element in "
                                                                   "NonKeyAttributes: %s",
                                          json_string_value(a));
        }
        /* Key attributes may be listed; they are projected anyway and count for nothing. */
        json_array_foreach(nka, i, a)
        {
            int is_key = 0;
            json_array_foreach(key_names, j, type) is_key |= json_equal(type, a);
            *projected += !is_key;
        }
        if (*projected > QR_MAX_PROJECTED)
            return err_validation(
                err,
                QR_MSG_INVALID_PARAMETER
                "Number of projected attributes "
                "in all indexes exceeds limit of %d, number of projected attributes:%zu",
                QR_MAX_PROJECTED, *projected);
    } else if (nka && json_array_size(nka) > 0) {
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER "ProjectionType is %s, but "
                                                       "NonKeyAttributes is specified",
                              ts);
    }
    return 0;
}

/* Checks an index's KeySchema against the rules and the definitions: its size, in
 * DynamoDB's words for an index (an index may have several key attributes of each kind);
 * fills key_names with its attribute names. */
static int check_index_keys(json_t *def, json_t *defs, int global, const char *table_pk,
                            json_t *key_names, qr_err *err)
{
    const char *name = json_string_value(json_object_get(def, "IndexName"));
    json_t *ks = json_object_get(def, "KeySchema");
    if (!json_is_array(ks) || json_array_size(ks) == 0) return err_not_null(err, "keySchema");
    size_t max = global ? 2 * QR_MAX_KEY_ATTRS : 2;
    if (json_array_size(ks) > max) {
        char path[160];
        snprintf(path, sizeof path, "%s.keySchema", name);
        return err_violation(err, err_value_unshown, path, QR_MSG_LENGTH_AT_MOST, (long long)max);
    }
    size_t i;
    json_t *k;
    int nhash = 0, nrange = 0;
    json_array_foreach(ks, i, k)
    {
        /* (an element's members are the shape checker's to judge) */
        json_t *an = json_object_get(k, "AttributeName");
        const char *role = json_string_value(json_object_get(k, "KeyType"));
        int hash = role && strcmp(role, "HASH") == 0;
        if (i == 0 && !hash)
            return err_validation(
                err, "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
        if (hash && nrange)
            return err_validation(err, QR_MSG_INVALID_PARAMETER
                                  "All HASH key attributes must "
                                  "precede RANGE key attributes in the KeySchema");
        if (hash ? ++nhash > QR_MAX_KEY_ATTRS : ++nrange > QR_MAX_KEY_ATTRS)
            return err_validation(err,
                                  QR_MSG_INVALID_PARAMETER "The KeySchema exceeds the maximum "
                                                           "allowed number of %s key attributes",
                                  hash ? "HASH" : "RANGE");
        if (!global && i == 1 && hash)
            return err_validation(
                err, "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
        for (size_t j = 0; j < i; j++)
            if (json_equal(json_object_get(json_array_get(ks, j), "AttributeName"), an))
                return json_array_size(ks) == 2 && nrange == 1
                           ? err_validation(err, "Both the Hash Key and the Range Key element in "
                                                 "the KeySchema have "
                                                 "the same name")
                           : err_validation(err, "The KeySchema contains multiple key attributes "
                                                 "with the same name");
        if (!attr_type(defs, json_string_value(an))) {
            char names[512];
            index_definition_names(defs, names, sizeof names);
            return err_validation(
                err,
                QR_MSG_INVALID_PARAMETER
                "Some index key attributes are "
                "not defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]",
                json_string_value(an), names);
        }
        json_array_append(key_names, an);
    }
    if (!global) {
        if (json_array_size(ks) != 2)
            return err_validation(err,
                                  QR_MSG_INVALID_PARAMETER "Index KeySchema does not have a "
                                                           "range key for index: %s",
                                  name);
        if (strcmp(json_string_value(json_object_get(json_array_get(ks, 0), "AttributeName")),
                   table_pk))
            return err_validation(
                err,
                QR_MSG_INVALID_PARAMETER
                "Index KeySchema does not have the "
                "same leading hash key as table KeySchema for index: %s. index hash key: %s, "
                "table hash key: %s",
                name, json_string_value(json_object_get(json_array_get(ks, 0), "AttributeName")),
                table_pk);
    }
    return 0;
}

int index_check_gsi(json_t *gsi, json_t *defs, qr_err *err)
{
    size_t projected = 0;
    json_t *names = json_array();
    int rc = check_index_keys(gsi, defs, 1, NULL, names, err) ||
             check_projection(gsi, names, &projected, err);
    json_decref(names);
    return rc ? -1 : 0;
}

/* With indexes, DynamoDB answers an unused definition by listing the definitions and
 * the key attributes the table and its indexes use (each once, in request order). */
static int unused_definitions(json_t *defs, json_t *ks, json_t *gsis, json_t *lsis, qr_err *err)
{
    buf given, used;
    buf_init(&given, 0);
    buf_init(&used, 0);
    json_t *seen = json_object();
    size_t i, j;
    json_t *d, *def, *e;
    json_array_foreach(defs, i, d) buf_printf(
        &given, "%s%s", i ? ", " : "", json_string_value(json_object_get(d, "AttributeName")));
    json_t *lists[3] = {NULL, lsis, gsis};
    for (int l = 0; l < 3; l++) {
        json_t *one = json_pack("[{s:O}]", "KeySchema", ks);
        json_array_foreach(l ? lists[l] : one, i, def)
        {
            json_array_foreach(json_object_get(def, "KeySchema"), j, e)
            {
                const char *an = json_string_value(json_object_get(e, "AttributeName"));
                if (an == NULL || json_object_get(seen, an)) continue;
                json_object_set_new(seen, an, json_true());
                buf_printf(&used, "%s%s", json_object_size(seen) > 1 ? ", " : "", an);
            }
        }
        json_decref(one);
    }
    err_validation(err,
                   QR_MSG_INVALID_PARAMETER "Some AttributeDefinitions are not used. "
                                            "AttributeDefinitions: [%s], keys used: [%s]",
                   given.data ? given.data : "", used.data ? used.data : "");
    json_decref(seen);
    buf_free(&given);
    buf_free(&used);
    return -1;
}

int index_check_definitions(json_t *req, qr_err *err)
{
    json_t *defs = json_object_get(req, "AttributeDefinitions"),
           *ks = json_object_get(req, "KeySchema");
    json_t *lsis = json_object_get(req, "LocalSecondaryIndexes"),
           *gsis = json_object_get(req, "GlobalSecondaryIndexes");
    const char *pk = json_string_value(json_object_get(json_array_get(ks, 0), "AttributeName"));
    int has_sk = json_array_size(ks) == 2;
    size_t projected = 0;
    if (lsis && json_array_size(lsis) == 0)
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER "List of LocalSecondaryIndexes is empty");
    if (gsis && json_array_size(gsis) == 0)
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER "List of GlobalSecondaryIndexes is empty");
    if (json_array_size(lsis) > QR_MAX_LSI)
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER "Number of LocalSecondaryIndexes "
                                                       "exceeds per-table limit of %d",
                              QR_MAX_LSI);
    if (json_array_size(gsis) > QR_MAX_GSI)
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER "GlobalSecondaryIndex count exceeds "
                                                       "the per-table limit of %d",
                              QR_MAX_GSI);
    if (lsis && !has_sk)
        return err_validation(err, QR_MSG_INVALID_PARAMETER
                              "Table KeySchema does not have a range "
                              "key, which is required when specifying a LocalSecondaryIndex");
    json_t *seen = json_object();
    int rc = 0;
    for (int global = 0; global < 2 && rc == 0; global++) {
        size_t i;
        json_t *def;
        json_array_foreach(global ? gsis : lsis, i, def)
        {
            json_t *name = json_object_get(def, "IndexName"); /* (judged by the shape checker) */
            if (json_object_get(seen, json_string_value(name))) {
                rc = err_validation(err, QR_MSG_INVALID_PARAMETER "Duplicate index name: %s",
                                    json_string_value(name));
                break;
            }
            json_object_set_new(seen, json_string_value(name), json_true());
            json_t *names = json_array();
            rc = check_index_keys(def, defs, global, pk, names, err) ||
                 check_projection(def, names, &projected, err);
            json_decref(names);
            if (rc) break;
        }
    }
    json_decref(seen);
    if (rc) return -1;
    /* Every attribute definition must be used by the table or an index key. */
    size_t i;
    json_t *d;
    json_array_foreach(defs, i, d)
    {
        const char *an = json_string_value(json_object_get(d, "AttributeName"));
        int used = 0;
        size_t j, k;
        json_t *e, *def;
        json_array_foreach(ks, j, e) used |=
            strcmp(json_string_value(json_object_get(e, "AttributeName")), an) == 0;
        for (int g = 0; g < 2; g++)
            json_array_foreach(g ? gsis : lsis, k, def)
            {
                json_array_foreach(json_object_get(def, "KeySchema"), j, e) used |=
                    strcmp(json_string_value(json_object_get(e, "AttributeName")), an) == 0;
            }
        if (!used && (gsis || lsis)) return unused_definitions(defs, ks, gsis, lsis, err);
        if (!used)
            return err_validation(
                err, QR_MSG_INVALID_PARAMETER
                "Number of attributes in KeySchema "
                "does not exactly match number of attributes defined in AttributeDefinitions");
    }
    return 0;
}

/* ---- entries ---- */

/* The item's value of a key attribute if present with the right type, else NULL. */
static json_t *key_value(const json_t *item, const char *name, char type)
{
    json_t *v = json_object_get(item, name);
    const char *actual = v ? value_type_name(value_type(v)) : "";
    return strlen(actual) == 1 && actual[0] == type ? v : NULL;
}

/* Whether an empty string or binary is a key value of t's indexes: not in DynamoDB's
 * tables, but in a CQL table's, whose views and indexes Cassandra keys by any value,
 * the empty text and blob included. */
static int empty_keys_allowed(const table *t)
{
    return t->owner != NULL;
}

/* The largest key value of t's indexes: DynamoDB's 2048 bytes for a partition attribute
 * (and 1024 for the sort attributes together), or, in a CQL table, Cassandra's 65535
 * bytes for each key column, partition or clustering alike. */
#define OWNED_KEY_PART_MAX 65535
static size_t partition_value_max(const table *t)
{
    return t->owner ? OWNED_KEY_PART_MAX : QR_MAX_PK_SIZE;
}

/* Whether sort values of size bytes, sort_bytes with those before, fit t's indexes. */
static int sort_value_fits(const table *t, size_t size, size_t sort_bytes)
{
    return t->owner ? size <= OWNED_KEY_PART_MAX : sort_bytes <= QR_MAX_SK_SIZE;
}

/* The refusal of a key value over partition_value_max or sort_value_fits. */
static int key_value_too_large(const table *t, int sort, size_t size, qr_err *err)
{
    if (t->owner)
        return err_validation(err, "Key length of %zu is longer than maximum of %d", size,
                              OWNED_KEY_PART_MAX);
    if (sort)
        return err_validation(err, QR_MSG_INVALID_PARAMETER
                              "Aggregated size of all range "
                              "keys has exceeded the size limit of 1024 bytes");
    return err_validation(err, QR_MSG_INVALID_PARAMETER
                          "Size of hashkey has exceeded the maximum size limit of2048 bytes");
}

/* Whether an item's index key values fit the key rules: no empty string or binary
 * (unless t allows them), sizes within partition_value_max and sort_value_fits. Writes are refused
 * otherwise (index_check_item); an item stored before the index existed is left out of it. */
static int key_values_fit(const table *t, const qr_index *ix, const json_t *item)
{
    size_t sort_bytes = 0;
    for (int k = 0; k < ix->npk + ix->nsk; k++) {
        const char *name = k < ix->npk ? ix->pk[k] : ix->sk[k - ix->npk];
        char type = k < ix->npk ? ix->pk_type[k] : ix->sk_type[k - ix->npk];
        size_t size = value_size(json_object_get(item, name));
        if (type != 'N' && size == 0 && !empty_keys_allowed(t)) return 0;
        if (k < ix->npk && size > partition_value_max(t)) return 0;
        if (k >= ix->npk && !sort_value_fits(t, size, sort_bytes += size)) return 0;
    }
    return 1;
}

int index_entry_key(const table *t, const qr_index *ix, const json_t *item, buf *out, qr_err *err)
{
    const json_t *pks[QR_MAX_KEY_ATTRS];
    for (int i = 0; i < ix->npk; i++)
        if ((pks[i] = key_value(item, ix->pk[i], ix->pk_type[i])) == NULL) return 0;
    for (int i = 0; i < ix->nsk; i++)
        if (key_value(item, ix->sk[i], ix->sk_type[i]) == NULL) return 0;
    if (!key_values_fit(t, ix, item)) return 0;
    if (key_partition_tuple(out, t, ix->id, pks, ix->npk, err)) return -1;
    for (int i = 0; i < ix->nsk; i++)
        if (keycodec_append(out, json_object_get(item, ix->sk[i]), 0, err)) return -1;
    /* a table in token order keeps its order within a global index's key too */
    const json_t *pk = json_object_get(item, t->pk.name);
    if (ix->token_order && key_append_token(out, t, pk, err)) return -1;
    if (keycodec_append(out, pk, 0, err)) return -1;
    if (t->sk.name && keycodec_append(out, json_object_get(item, t->sk.name), 0, err)) return -1;
    return 1;
}

/* The elements of item's multi-valued key attribute of ix (a JSON array), or NULL. */
static const json_t *multi_elements(const table *t, const qr_index *ix, const json_t *item,
                                    char *elem_type)
{
    if (t->owner == NULL || !ix->global || ix->npk != 1 || ix->nsk != 0 || item == NULL)
        return NULL;
    const char set[3] = {ix->pk_type[0], 'S', 0};
    const json_t *els = json_object_get(json_object_get(item, ix->pk[0]), set);
    elem_type[0] = ix->pk_type[0];
    elem_type[1] = 0;
    return json_is_array(els) ? els : NULL;
}

int index_item_multi(const table *t, const qr_index *ix, const json_t *item)
{
    char type[2];
    return multi_elements(t, ix, item, type) != NULL;
}

int index_each_entry(const table *t, const qr_index *ix, const json_t *item, index_entry_fn fn,
                     void *arg, qr_err *err)
{
    buf key;
    buf_init(&key, 0);
    char type[2];
    const json_t *els = multi_elements(t, ix, item, type);
    int rc = 0;
    if (els == NULL) {
        int got = index_entry_key(t, ix, item, &key, err);
        rc = got < 0 ? -1 : got ? fn(arg, &key, item) : 0;
        buf_free(&key);
        return rc;
    }
    /* each element: the item as it would be with the attribute holding it alone */
    json_t *one = json_copy((json_t *)item);
    if (one == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    size_t i;
    json_t *el;
    json_array_foreach((json_t *)els, i, el)
    {
        json_object_set_new(one, ix->pk[0], json_pack("{s:O}", type, el));
        buf_reset(&key);
        int got = index_entry_key(t, ix, one, &key, err);
        rc = got < 0 ? -1 : got ? fn(arg, &key, one) : 0;
        if (rc) break;
    }
    json_decref(one);
    buf_free(&key);
    return rc;
}

json_t *index_project(const table *t, const qr_index *ix, const json_t *item)
{
    if (ix->projection == QR_PROJ_ALL) return json_incref((json_t *)item);
    json_t *p = key_of_item(t, item);
    for (int i = 0; i < ix->npk + ix->nsk; i++) {
        const char *name = i < ix->npk ? ix->pk[i] : ix->sk[i - ix->npk];
        json_t *v = json_object_get(item, name);
        if (v) json_object_set(p, name, v);
    }
    size_t i;
    json_t *name;
    json_array_foreach(ix->include, i, name)
    {
        json_t *v = json_object_get(item, json_string_value(name));
        if (v) json_object_set(p, json_string_value(name), v);
    }
    return p;
}

static int by_index_name(const void *a, const void *b)
{
    return strcmp((*(const qr_index *const *)a)->name, (*(const qr_index *const *)b)->name);
}

int index_check_item(const table *t, const json_t *item, qr_err *err)
{
    /* DynamoDB names, of the indexes an item's value breaks, the first by name. */
    const qr_index *order[QR_MAX_INDEXES];
    size_t n = t->nindexes < QR_MAX_INDEXES ? t->nindexes : QR_MAX_INDEXES;
    for (size_t i = 0; i < n; i++)
        order[i] = &t->indexes[i];
    qsort(order, n, sizeof order[0], by_index_name);
    for (size_t i = 0; i < t->nindexes; i++) {
        const qr_index *ix = i < n ? order[i] : &t->indexes[i];
        size_t sort_bytes = 0;
        for (int k = 0; k < ix->npk + ix->nsk; k++) {
            const char *name = k < ix->npk ? ix->pk[k] : ix->sk[k - ix->npk];
            char type = k < ix->npk ? ix->pk_type[k] : ix->sk_type[k - ix->npk];
            json_t *v = json_object_get(item, name);
            if (v == NULL) continue;
            char et[2];
            const json_t *els = multi_elements(t, ix, item, et);
            if (els) {
                /* each element as a key of its own */
                size_t e;
                json_t *el;
                json_array_foreach((json_t *)els, e, el)
                {
                    json_t *one = json_pack("{s:O}", et, el);
                    size_t size = value_size(one);
                    json_decref(one);
                    if (type != 'N' && size == 0 && !empty_keys_allowed(t))
                        return err_validation(err, QR_MSG_EMPTY_INDEX_KEY,
                                              type == 'S' ? "string" : "binary", ix->name, name);
                    if (size > partition_value_max(t)) return key_value_too_large(t, 0, size, err);
                }
                continue;
            }
            const char *actual = value_type_name(value_type(v));
            if (strlen(actual) != 1 || actual[0] != type)
                return err_validation(err,
                                      QR_MSG_INVALID_PARAMETER
                                      "Type mismatch for Index Key %s "
                                      "Expected: %c Actual: %s IndexName: %s",
                                      name, type, actual, ix->name);
            if (type != 'N' && value_size(v) == 0 && !empty_keys_allowed(t))
                return err_validation(err, QR_MSG_EMPTY_INDEX_KEY,
                                      type == 'S' ? "string" : "binary", ix->name, name);
            size_t size = value_size(v);
            if (k < ix->npk && size > partition_value_max(t))
                return key_value_too_large(t, 0, size, err);
            if (k >= ix->npk && !sort_value_fits(t, size, sort_bytes += size))
                return key_value_too_large(t, 1, size, err);
        }
    }
    return 0;
}

size_t index_write_bytes(const table *t, const qr_index *ix, const json_t *old_item,
                         const json_t *new_item, int *writes)
{
    buf ok, nk;
    buf_init(&ok, 0);
    buf_init(&nk, 0);
    qr_err e;
    err_init(&e);
    int has_old = old_item && index_entry_key(t, ix, old_item, &ok, &e) == 1;
    int has_new = new_item && index_entry_key(t, ix, new_item, &nk, &e) == 1;
    int moved = has_old && has_new && (ok.len != nk.len || memcmp(ok.data, nk.data, ok.len) != 0);
    buf_free(&ok);
    buf_free(&nk);
    *writes = has_new + (has_old && (!has_new || moved));
    const json_t *basis = has_new ? new_item : has_old ? old_item : NULL;
    if (basis == NULL) return 0;
    json_t *p = index_project(t, ix, basis);
    size_t size = item_size(p);
    if (has_old && has_new && !moved) {
        /* DynamoDB charges an index only when the write changes what it stores. */
        json_t *before = index_project(t, ix, old_item);
        if (json_equal(before, p)) {
            *writes = 0;
            size = 0;
        }
        json_decref(before);
    }
    json_decref(p);
    return size;
}

/* ---- staging ---- */

/* Appends one operation of a log record: 'P' key value, or 'D' key. */
static void log_op(buf *rec, char op, const buf *key, const buf *val)
{
    buf_putc(rec, (uint8_t)op);
    buf_put_be32(rec, (uint32_t)key->len);
    buf_append(rec, key->data, key->len);
    if (op == 'P') {
        buf_put_be32(rec, (uint32_t)val->len);
        buf_append(rec, val->data, val->len);
    }
}

/* The entries of one item in a multi-valued index: their keys and stored values. */
typedef struct entry_list {
    const table *t;
    const qr_index *ix;
    int with_values;
    buf *keys, *vals;
    size_t *sizes; /* with_values: each entry's item_size */
    size_t n, cap;
} entry_list;

static int collect_entry(void *arg, const buf *key, const json_t *entry_item)
{
    entry_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        buf *k = realloc(l->keys, cap * sizeof *k),
            *v = k ? realloc(l->vals, cap * sizeof *v) : NULL;
        if (k) l->keys = k;
        if (v == NULL) return -1;
        l->vals = v;
        size_t *sz = realloc(l->sizes, cap * sizeof *sz);
        if (sz == NULL) return -1;
        l->sizes = sz;
        l->cap = cap;
    }
    buf_init(&l->keys[l->n], 0);
    buf_init(&l->vals[l->n], 0);
    buf_append(&l->keys[l->n], key->data, key->len);
    int rc = 0;
    l->sizes[l->n] = 0;
    if (l->with_values) {
        json_t *p = index_project(l->t, l->ix, entry_item);
        rc = p ? item_encode(l->t, p, &l->vals[l->n]) : -1;
        if (p) l->sizes[l->n] = item_size(p);
        json_decref(p);
    }
    l->n++;
    return rc;
}

static void entry_list_free(entry_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        buf_free(&l->keys[i]);
        buf_free(&l->vals[i]);
    }
    free(l->keys);
    free(l->vals);
    free(l->sizes);
}

/* Index of key in l, or -1. */
static long find_key(const entry_list *l, const buf *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->keys[i].len == key->len && memcmp(l->keys[i].data, key->data, key->len) == 0)
            return (long)i;
    return -1;
}

int index_multi_writes(const table *t, const qr_index *ix, const json_t *old_item,
                       const json_t *new_item, index_write_fn fn, void *arg, qr_err *err)
{
    entry_list before = {t, ix, 1, NULL, NULL, NULL, 0, 0},
               after = {t, ix, 1, NULL, NULL, NULL, 0, 0};
    int rc = old_item ? index_each_entry(t, ix, old_item, collect_entry, &before, err) : 0;
    if (rc == 0 && new_item) rc = index_each_entry(t, ix, new_item, collect_entry, &after, err);
    if (rc != 0 && err->type == NULL) err_set(err, QR_E_INTERNAL, "out of memory");
    for (size_t i = 0; rc == 0 && i < before.n; i++)
        if (find_key(&after, &before.keys[i]) < 0)
            rc = fn(arg, &before.keys[i], before.sizes[i], 0);
    for (size_t i = 0; rc == 0 && i < after.n; i++) {
        long was = find_key(&before, &after.keys[i]);
        /* an entry stays unwritten unless what it stores changes */
        if (was < 0 || before.vals[was].len != after.vals[i].len ||
            memcmp(before.vals[was].data, after.vals[i].data, after.vals[i].len) != 0)
            rc = fn(arg, &after.keys[i], after.sizes[i], 1);
    }
    entry_list_free(&before);
    entry_list_free(&after);
    return rc;
}

/* Logs the work of one write in a multi-valued global index: the entries of elements gone
 * deleted, those of new elements put (every entry when the projection holds more than
 * the keys). 1 when something was logged, 0 when nothing, -1 on error. */
static int stage_multi(const table *t, const qr_index *ix, const json_t *old_item,
                       const json_t *new_item, buf *rec, qr_err *err)
{
    entry_list before = {t, ix, 0, NULL, NULL, NULL, 0, 0},
               after = {t, ix, 1, NULL, NULL, NULL, 0, 0};
    int rc = old_item ? index_each_entry(t, ix, old_item, collect_entry, &before, err) : 0;
    if (rc == 0 && new_item) rc = index_each_entry(t, ix, new_item, collect_entry, &after, err);
    int logged = 0;
    if (rc == 0) {
        for (size_t i = 0; i < before.n; i++)
            if (find_key(&after, &before.keys[i]) < 0) {
                log_op(rec, 'D', &before.keys[i], NULL);
                logged = 1;
            }
        for (size_t i = 0; i < after.n; i++)
            if (ix->projection != QR_PROJ_KEYS_ONLY || find_key(&before, &after.keys[i]) < 0) {
                log_op(rec, 'P', &after.keys[i], &after.vals[i]);
                logged = 1;
            }
    } else if (err->type == NULL) {
        err_set(err, QR_E_INTERNAL, "out of memory");
    }
    entry_list_free(&before);
    entry_list_free(&after);
    return rc ? -1 : logged;
}

int index_stage(qr_db *db, table *t, store_batch *b, const json_t *old_item, const json_t *new_item,
                const buf *new_stored, qr_err *err)
{
    if (t->nindexes == 0) return 0;
    if (new_item && index_check_item(t, new_item, err)) return -1;
    buf ok, nk, val, rec;
    buf_init(&ok, 0);
    buf_init(&nk, 0);
    buf_init(&val, 0);
    buf_init(&rec, 0);
    int rc = 0, logged = 0;
    /* Growth of the item collection: the base item and its local index entries. */
    int64_t coll_delta = (new_item ? (int64_t)item_size(new_item) : 0) -
                         (old_item ? (int64_t)item_size(old_item) : 0);
    size_t nlocal = 0;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    buf_put_be64(&rec, (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec);
    for (size_t i = 0; i < t->nindexes && rc == 0; i++) {
        const qr_index *ix = &t->indexes[i];
        if (ix->global &&
            (index_item_multi(t, ix, old_item) || index_item_multi(t, ix, new_item))) {
            int got = stage_multi(t, ix, old_item, new_item, &rec, err);
            if (got < 0) rc = -1;
            logged |= got > 0;
            continue;
        }
        buf_reset(&ok);
        buf_reset(&nk);
        buf_reset(&val);
        int has_old = old_item ? index_entry_key(t, ix, old_item, &ok, err) : 0;
        int has_new = new_item ? index_entry_key(t, ix, new_item, &nk, err) : 0;
        if (has_old < 0 || has_new < 0) {
            rc = -1;
            break;
        }
        int same = has_old && has_new && ok.len == nk.len && memcmp(ok.data, nk.data, ok.len) == 0;
        int64_t new_size = 0, old_size = 0;
        /* Sizes of the local entries written and replaced: the collection's growth and
         * the index's statistics. */
        if (has_new && ix->projection == QR_PROJ_ALL && new_stored) {
            buf_append(&val, new_stored->data, new_stored->len);
            if (!ix->global)
                new_size = (int64_t)be32_read(new_stored->data + 1); /* the stored form's size */
        } else if (has_new) {
            json_t *p = index_project(t, ix, new_item);
            rc = item_encode(t, p, &val);
            if (!ix->global) new_size = (int64_t)item_size(p);
            json_decref(p);
        }
        if (has_old && !ix->global) {
            json_t *p = ix->projection == QR_PROJ_ALL ? NULL : index_project(t, ix, old_item);
            old_size = (int64_t)item_size(p ? p : old_item);
            json_decref(p);
        }
        nlocal += !ix->global;
        if (ix->global) {
            if (has_old && !same) log_op(&rec, 'D', &ok, NULL);
            if (has_new) log_op(&rec, 'P', &nk, &val);
            logged |= has_old || has_new;
        } else {
            coll_delta += new_size - old_size;
            if (has_old && !same) store_batch_delete(b, ok.data, ok.len);
            if (has_new) store_batch_put(b, nk.data, nk.len, val.data, val.len);
            /* Written in this batch, so the entry exists exactly when old_item has one. */
            if (rc == 0)
                rc = stats_stage_index(t, ix->id, has_new - has_old, new_size - old_size, err);
        }
    }
    if (rc == 0 && nlocal) {
        const json_t *any = new_item ? new_item : old_item;
        if (any) rc = collection_adjust(db, t, json_object_get(any, t->pk.name), coll_delta, err);
    }
    if (rc == 0 && logged) {
        buf lk;
        buf_init(&lk, 0);
        buf_append(&lk, QR_LOG_PREFIX, QR_LOG_PREFIX_LEN);
        uint64_t seq = propagate_next_seq(db);
        buf_put_be64(&lk, seq);
        store_batch_put(b, lk.data, lk.len, rec.data, rec.len);
        stats_stage_logged(db, seq);
        buf_free(&lk);
        propagate_kick(db);
    }
    buf_free(&ok);
    buf_free(&nk);
    buf_free(&val);
    buf_free(&rec);
    return rc;
}
