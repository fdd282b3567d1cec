/* tabledef.c — the DynamoDB CreateTable request for a model table: attribute definitions,
 * key schema, billing, GSIs and LSIs with projections, and streams when a "stream" update
 * strategy needs them. Shared by the CloudFormation and Terraform exporters and by apply.
 *
 * Only tables and indexes are described: entities and access patterns live in the model
 * file, not in the infrastructure. TTL is a separate DynamoDB call, so callers add it. */
#include "checker/output.h"

#include <string.h>

static const char *type_str(char t)
{
    return t == 'N' ? "N" : t == 'B' ? "B" : "S";
}

static void add_attrdef(json_t *defs, const m_keyattr *k)
{
    if (k->name == NULL) return;
    size_t i;
    json_t *v;
    json_array_foreach(
        defs, i,
        v) if (strcmp(json_string_value(json_object_get(v, "AttributeName")), k->name) == 0) return;
    json_array_append_new(defs, json_pack("{s:s, s:s}", "AttributeName", k->name, "AttributeType",
                                          type_str(k->type)));
}

/* One element per key attribute: the HASH ones, then the RANGE ones (a multi-attribute GSI
 * key lists up to four of each, in key order). */
static json_t *key_schema(const m_keyattr *pk, size_t npk, const m_keyattr *sk, size_t nsk)
{
    json_t *ks = json_array();
    for (size_t i = 0; i < npk; i++)
        json_array_append_new(
            ks, json_pack("{s:s, s:s}", "AttributeName", pk[i].name, "KeyType", "HASH"));
    for (size_t i = 0; i < nsk && sk[i].name; i++)
        json_array_append_new(
            ks, json_pack("{s:s, s:s}", "AttributeName", sk[i].name, "KeyType", "RANGE"));
    return ks;
}

static json_t *throughput(double r, double w)
{
    return json_pack("{s:I, s:I}", "ReadCapacityUnits", (json_int_t)(r > 0 ? r : 1),
                     "WriteCapacityUnits", (json_int_t)(w > 0 ? w : 1));
}

json_t *model_export_create_table(const qr_model *m, const m_table *t)
{
    json_t *req = json_object(), *defs = json_array();
    if (req == NULL || defs == NULL) {
        json_decref(req);
        json_decref(defs);
        return NULL;
    }
    add_attrdef(defs, &t->pk);
    add_attrdef(defs, &t->sk);
    for (size_t i = 0; i < t->nidx; i++) {
        const m_index *ix = &t->idx[i];
        for (size_t k = 0; k < (ix->npk_parts ? ix->npk_parts : 1); k++)
            add_attrdef(defs, ix->npk_parts ? &ix->pk_parts[k] : &ix->pk);
        for (size_t k = 0; k < (ix->nsk_parts ? ix->nsk_parts : 1); k++)
            add_attrdef(defs, ix->nsk_parts ? &ix->sk_parts[k] : &ix->sk);
    }
    json_object_set_new(req, "TableName", json_string(t->name));
    json_object_set_new(req, "AttributeDefinitions", defs);
    json_object_set_new(req, "KeySchema", key_schema(&t->pk, 1, &t->sk, 1));
    json_object_set_new(req, "BillingMode",
                        json_string(t->provisioned ? "PROVISIONED" : "PAY_PER_REQUEST"));
    if (t->provisioned)
        json_object_set_new(req, "ProvisionedThroughput", throughput(t->rcu, t->wcu));
    json_t *gsis = json_array(), *lsis = json_array();
    for (size_t i = 0; i < t->nidx; i++) {
        const m_index *ix = &t->idx[i];
        json_t *o = json_object(), *proj = json_object();
        json_object_set_new(o, "IndexName", json_string(ix->name));
        json_object_set_new(
            o, "KeySchema",
            key_schema(ix->npk_parts ? ix->pk_parts : &ix->pk, ix->npk_parts ? ix->npk_parts : 1,
                       ix->nsk_parts ? ix->sk_parts : &ix->sk, ix->nsk_parts ? ix->nsk_parts : 1));
        json_object_set_new(proj, "ProjectionType",
                            json_string(ix->projection == MP_ALL         ? "ALL"
                                        : ix->projection == MP_KEYS_ONLY ? "KEYS_ONLY"
                                                                         : "INCLUDE"));
        if (ix->projection == MP_INCLUDE) {
            json_t *nk = json_array();
            for (size_t k = 0; k < ix->ninclude; k++)
                json_array_append_new(nk, json_string(ix->include[k]));
            json_object_set_new(proj, "NonKeyAttributes", nk);
        }
        json_object_set_new(o, "Projection", proj);
        if (!ix->local && t->provisioned)
            json_object_set_new(o, "ProvisionedThroughput",
                                throughput(ix->rcu ? ix->rcu : t->rcu, ix->wcu ? ix->wcu : t->wcu));
        json_array_append_new(ix->local ? lsis : gsis, o);
    }
    if (json_array_size(gsis))
        json_object_set_new(req, "GlobalSecondaryIndexes", gsis);
    else
        json_decref(gsis);
    if (json_array_size(lsis))
        json_object_set_new(req, "LocalSecondaryIndexes", lsis);
    else
        json_decref(lsis);
    if (model_table_needs_stream(m, t))
        json_object_set_new(
            req, "StreamSpecification",
            json_pack("{s:b, s:s}", "StreamEnabled", 1, "StreamViewType", "NEW_AND_OLD_IMAGES"));
    return req;
}
