/* export_aws.c — DynamoDB table definitions: the CreateTable request (used by apply),
 * CloudFormation JSON and Terraform (aws_dynamodb_table).
 *
 * Only tables, keys, indexes, billing and TTL are exported: entities and access patterns
 * live in the model file, not in the infrastructure. */
#include "checker/output.h"

#include <ctype.h>
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
    json_array_foreach(defs, i, v) if (strcmp(json_string_value(json_object_get(v, "AttributeName")), k->name) == 0) return;
    json_array_append_new(defs, json_pack("{s:s, s:s}", "AttributeName", k->name, "AttributeType", type_str(k->type)));
}

static json_t *key_schema(const m_keyattr *pk, const m_keyattr *sk)
{
    json_t *ks = json_array();
    json_array_append_new(ks, json_pack("{s:s, s:s}", "AttributeName", pk->name, "KeyType", "HASH"));
    if (sk->name) json_array_append_new(ks, json_pack("{s:s, s:s}", "AttributeName", sk->name, "KeyType", "RANGE"));
    return ks;
}

static json_t *throughput(double r, double w)
{
    return json_pack("{s:I, s:I}", "ReadCapacityUnits", (json_int_t)(r > 0 ? r : 1), "WriteCapacityUnits", (json_int_t)(w > 0 ? w : 1));
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
        add_attrdef(defs, &t->idx[i].pk);
        add_attrdef(defs, &t->idx[i].sk);
    }
    json_object_set_new(req, "TableName", json_string(t->name));
    json_object_set_new(req, "AttributeDefinitions", defs);
    json_object_set_new(req, "KeySchema", key_schema(&t->pk, &t->sk));
    json_object_set_new(req, "BillingMode", json_string(t->provisioned ? "PROVISIONED" : "PAY_PER_REQUEST"));
    if (t->provisioned) json_object_set_new(req, "ProvisionedThroughput", throughput(t->rcu, t->wcu));
    json_t *gsis = json_array(), *lsis = json_array();
    for (size_t i = 0; i < t->nidx; i++) {
        const m_index *ix = &t->idx[i];
        json_t *o = json_object(), *proj = json_object();
        json_object_set_new(o, "IndexName", json_string(ix->name));
        json_object_set_new(o, "KeySchema", key_schema(&ix->pk, &ix->sk));
        json_object_set_new(proj, "ProjectionType",
                            json_string(ix->projection == MP_ALL ? "ALL" : ix->projection == MP_KEYS_ONLY ? "KEYS_ONLY" : "INCLUDE"));
        if (ix->projection == MP_INCLUDE) {
            json_t *nk = json_array();
            for (size_t k = 0; k < ix->ninclude; k++) json_array_append_new(nk, json_string(ix->include[k]));
            json_object_set_new(proj, "NonKeyAttributes", nk);
        }
        json_object_set_new(o, "Projection", proj);
        if (!ix->local && t->provisioned) json_object_set_new(o, "ProvisionedThroughput", throughput(ix->rcu ? ix->rcu : t->rcu, ix->wcu ? ix->wcu : t->wcu));
        json_array_append_new(ix->local ? lsis : gsis, o);
    }
    if (json_array_size(gsis)) json_object_set_new(req, "GlobalSecondaryIndexes", gsis);
    else json_decref(gsis);
    if (json_array_size(lsis)) json_object_set_new(req, "LocalSecondaryIndexes", lsis);
    else json_decref(lsis);
    if (model_table_needs_stream(m, t))
        json_object_set_new(req, "StreamSpecification", json_pack("{s:b, s:s}", "StreamEnabled", 1, "StreamViewType", "NEW_AND_OLD_IMAGES"));
    return req;
}

/* A CloudFormation logical id: letters and digits only, starting with a letter. */
static void logical_id(const char *name, char *out, size_t size)
{
    size_t o = 0;
    for (const char *s = name; *s && o + 6 < size; s++)
        if (isalnum((unsigned char)*s)) out[o++] = *s;
    if (o == 0 || !isalpha((unsigned char)out[0])) {
        memmove(out + 1, out, o);
        out[0] = 'T';
        o++;
    }
    snprintf(out + o, size - o, "Table");
}

int model_export_cloudformation(const qr_model *m, FILE *f, qr_err *err)
{
    json_t *root = json_object(), *res = json_object();
    json_object_set_new(root, "AWSTemplateFormatVersion", json_string("2010-09-09"));
    json_object_set_new(root, "Description", json_string(m->description ? m->description : m->name ? m->name : "quarry model"));
    for (size_t i = 0; i < m->ntables; i++) {
        const m_table *t = &m->tables[i];
        json_t *props = model_export_create_table(m, t);
        if (props == NULL) {
            json_decref(root);
            json_decref(res);
            return err_set(err, QR_E_INTERNAL, "out of memory");
        }
        if (t->ttl) json_object_set_new(props, "TimeToLiveSpecification", json_pack("{s:s, s:b}", "AttributeName", t->ttl, "Enabled", 1));
        char id[300];
        logical_id(t->name, id, sizeof id);
        json_object_set_new(res, id, json_pack("{s:s, s:o}", "Type", "AWS::DynamoDB::Table", "Properties", props));
    }
    json_object_set_new(root, "Resources", res);
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    fputc('\n', f);
    return rc ? err_set(err, QR_E_INTERNAL, "cannot write the template") : 0;
}

static void tf_name(const char *name, char *out, size_t size)
{
    size_t o = 0;
    for (const char *s = name; *s && o + 2 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (isupper(c) && o > 0 && out[o - 1] != '_' && islower((unsigned char)s[-1])) out[o++] = '_';
        out[o++] = isalnum(c) ? (char)tolower(c) : '_';
    }
    if (o == 0 || isdigit((unsigned char)out[0])) {
        memmove(out + 1, out, o);
        out[0] = 't';
        o++;
    }
    out[o] = '\0';
}

int model_export_terraform(const qr_model *m, FILE *f, qr_err *err)
{
    (void)err;
    fprintf(f, "# Generated by quarry model export%s%s.\n", m->name ? " from model " : "", m->name ? m->name : "");
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        char rn[300];
        tf_name(t->name, rn, sizeof rn);
        fprintf(f, "\nresource \"aws_dynamodb_table\" \"%s\" {\n", rn);
        fprintf(f, "  name         = \"%s\"\n", t->name);
        fprintf(f, "  billing_mode = \"%s\"\n", t->provisioned ? "PROVISIONED" : "PAY_PER_REQUEST");
        if (t->provisioned) fprintf(f, "  read_capacity  = %.0f\n  write_capacity = %.0f\n", t->rcu, t->wcu);
        fprintf(f, "  hash_key     = \"%s\"\n", t->pk.name);
        if (t->sk.name) fprintf(f, "  range_key    = \"%s\"\n", t->sk.name);
        json_t *req = model_export_create_table(m, t);
        if (req == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
        size_t i;
        json_t *d;
        json_array_foreach(json_object_get(req, "AttributeDefinitions"), i, d)
            fprintf(f, "\n  attribute {\n    name = \"%s\"\n    type = \"%s\"\n  }\n", json_string_value(json_object_get(d, "AttributeName")),
                    json_string_value(json_object_get(d, "AttributeType")));
        json_decref(req);
        for (size_t k = 0; k < t->nidx; k++) {
            const m_index *ix = &t->idx[k];
            const char *pt = ix->projection == MP_ALL ? "ALL" : ix->projection == MP_KEYS_ONLY ? "KEYS_ONLY" : "INCLUDE";
            if (ix->local) {
                fprintf(f, "\n  local_secondary_index {\n    name            = \"%s\"\n    range_key       = \"%s\"\n    projection_type = \"%s\"\n",
                        ix->name, ix->sk.name, pt);
            } else {
                fprintf(f, "\n  global_secondary_index {\n    name            = \"%s\"\n    hash_key        = \"%s\"\n", ix->name, ix->pk.name);
                if (ix->sk.name) fprintf(f, "    range_key       = \"%s\"\n", ix->sk.name);
                fprintf(f, "    projection_type = \"%s\"\n", pt);
                if (t->provisioned)
                    fprintf(f, "    read_capacity   = %.0f\n    write_capacity  = %.0f\n", ix->rcu ? ix->rcu : t->rcu, ix->wcu ? ix->wcu : t->wcu);
            }
            if (ix->projection == MP_INCLUDE) {
                fprintf(f, "    non_key_attributes = [");
                for (size_t a = 0; a < ix->ninclude; a++) fprintf(f, "%s\"%s\"", a ? ", " : "", ix->include[a]);
                fprintf(f, "]\n");
            }
            fprintf(f, "  }\n");
        }
        if (model_table_needs_stream(m, t))
            fprintf(f, "\n  # copies are kept current from the stream (denormalised or aggregate strategy: stream)\n"
                       "  stream_enabled   = true\n  stream_view_type = \"NEW_AND_OLD_IMAGES\"\n");
        if (t->ttl) fprintf(f, "\n  ttl {\n    attribute_name = \"%s\"\n    enabled        = true\n  }\n", t->ttl);
        fprintf(f, "}\n");
    }
    return 0;
}
