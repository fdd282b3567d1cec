/* account.c — the small operations SDKs and tools call around the data plane:
 * DescribeEndpoints, DescribeLimits, TagResource, UntagResource, ListTagsOfResource.
 *
 * Tags are kept in the table's catalog description (not shown by DescribeTable, as in
 * DynamoDB) and addressed by the table's ARN, as DynamoDB addresses them. */
#include <string.h>

#include "ops/ops.h"

#define TAGS_FIELD "QuarryTags"
#define MAX_TAGS 50

int op_describe_endpoints(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    (void)db;
    (void)req;
    (void)err;
    *resp = json_pack("{s:[{s:s,s:i}]}", "Endpoints", "Address", "localhost", "CachePeriodInMinutes", 1440);
    return 0;
}

int op_describe_limits(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    (void)db;
    (void)req;
    (void)err;
    *resp = json_pack("{s:i,s:i,s:i,s:i}", "AccountMaxReadCapacityUnits", 80000, "AccountMaxWriteCapacityUnits", 80000,
                      "TableMaxReadCapacityUnits", 40000, "TableMaxWriteCapacityUnits", 40000);
    return 0;
}

/* The table named by a ResourceArn ("arn:…:table/NAME", or NAME). Fills name. */
static int arn_table(json_t *req, char *name, size_t cap, qr_err *err)
{
    const char *arn;
    if (param_string(req, "ResourceArn", &arn, err)) return -1;
    if (arn == NULL)
        return err_validation(err, "1 validation error detected: Value null at 'resourceArn' failed to satisfy "
                                   "constraint: Member must not be null");
    const char *slash = strstr(arn, ":table/");
    const char *table = slash ? slash + 7 : arn;
    size_t n = strcspn(table, "/");
    if (n == 0 || n >= cap) return err_validation(err, "Invalid TableArn: %s", arn);
    memcpy(name, table, n);
    name[n] = '\0';
    return 0;
}

typedef struct tag_change {
    json_t *add;    /* Tags to add (array of {Key, Value}), or NULL */
    json_t *remove; /* TagKeys to remove, or NULL */
} tag_change;

static int apply_tags(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    tag_change *c = arg;
    json_t *tags = json_object_get(desc, TAGS_FIELD);
    if (tags == NULL) json_object_set_new(desc, TAGS_FIELD, tags = json_object());
    size_t i;
    json_t *t;
    json_array_foreach(c->add, i, t) {
        json_t *k = json_object_get(t, "Key"), *v = json_object_get(t, "Value");
        if (!json_is_string(k) || !json_is_string(v) || json_string_length(k) == 0 || json_string_length(k) > 128 ||
            json_string_length(v) > 256)
            return err_validation(err, "One or more parameter values were invalid: a tag needs a Key of 1 to 128 "
                                       "characters and a Value of at most 256");
        json_object_set(tags, json_string_value(k), v);
    }
    json_array_foreach(c->remove, i, t) {
        if (json_is_string(t)) json_object_del(tags, json_string_value(t));
    }
    if (json_object_size(tags) > MAX_TAGS)
        return err_set(err, QR_E_LIMIT, "The number of tags exceeds the limit of %d per resource", MAX_TAGS);
    return 0;
}

static int change_tags(qr_db *db, json_t *req, const char *key, int adding, json_t **resp, qr_err *err)
{
    char name[256];
    json_t *list;
    if (arn_table(req, name, sizeof name, err)) return -1;
    if (param_array(req, key, &list, err)) return -1;
    if (list == NULL)
        return err_validation(err, "1 validation error detected: Value null at '%s' failed to satisfy constraint: "
                                   "Member must not be null", adding ? "tags" : "tagKeys");
    tag_change c = {adding ? list : NULL, adding ? NULL : list};
    if (catalog_change_schema(db, name, apply_tags, &c, err)) return -1;
    *resp = json_object();
    return 0;
}

int op_tag_resource(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    return change_tags(db, req, "Tags", 1, resp, err);
}

int op_untag_resource(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    return change_tags(db, req, "TagKeys", 0, resp, err);
}

int op_list_tags_of_resource(qr_db *db, json_t *req, json_t **resp, qr_err *err)
{
    char name[256];
    if (arn_table(req, name, sizeof name, err)) return -1;
    table *t = catalog_get(db, name);
    if (t == NULL) return err_set(err, QR_E_NOT_FOUND, "Requested resource not found: ResourcArn: %s not found", name);
    json_t *list = json_array();
    pthread_mutex_lock(&db->catalog_lock);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(t->desc, TAGS_FIELD), k, v)
        json_array_append_new(list, json_pack("{s:s,s:O}", "Key", k, "Value", v));
    pthread_mutex_unlock(&db->catalog_lock);
    catalog_release(db, t);
    *resp = json_pack("{s:o}", "Tags", list);
    return 0;
}

int account_tag_new_table(qr_db *db, const char *name, json_t *tags, qr_err *err)
{
    if (tags == NULL || json_array_size(tags) == 0) return 0;
    tag_change c = {tags, NULL};
    return catalog_change_schema(db, name, apply_tags, &c, err);
}
