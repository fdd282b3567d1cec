/* export_cloudformation.c — `quarry model export --format cloudformation`: a template with
 * one AWS::DynamoDB::Table resource per model table (tabledef.c's CreateTable properties
 * plus TimeToLiveSpecification, less what only the API takes). Nothing but tables: no IAM,
 * no outputs. */
#include "checker/output.h"

#include <ctype.h>
#include <string.h>

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
    json_object_set_new(root, "Description",
                        json_string(m->description ? m->description
                                    : m->name      ? m->name
                                                   : "quarry model"));
    for (size_t i = 0; i < m->ntables; i++) {
        const m_table *t = &m->tables[i];
        json_t *props = model_export_create_table(m, t);
        if (props == NULL) {
            json_decref(root);
            json_decref(res);
            return err_set(err, QR_E_INTERNAL, "out of memory");
        }
        /* CloudFormation's StreamSpecification is the view type alone: the stream is on
         * when it is given (StreamEnabled is CreateTable's, not the resource's) */
        json_object_del(json_object_get(props, "StreamSpecification"), "StreamEnabled");
        if (t->ttl)
            json_object_set_new(props, "TimeToLiveSpecification",
                                json_pack("{s:s, s:b}", "AttributeName", t->ttl, "Enabled", 1));
        char id[300];
        logical_id(t->name, id, sizeof id);
        json_object_set_new(
            res, id, json_pack("{s:s, s:o}", "Type", "AWS::DynamoDB::Table", "Properties", props));
    }
    json_object_set_new(root, "Resources", res);
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    fputc('\n', f);
    return rc ? err_set(err, QR_E_INTERNAL, "cannot write the template") : 0;
}
