/* workbench.c — NoSQL Workbench for DynamoDB data models: export and import. Workbench's own
 * fields carry what it has (tables, GSIs, facets, attribute types, sample-data formats and,
 * since Workbench 3.20, access patterns); what it has no field for (key templates, formats,
 * counts, sizes, rates, LSIs, denormalised copies) travels beside them in "Quarry" objects
 * holding the model file's own text for that element, which Workbench passes over. Import
 * reads those back, so a model survives export and import; an element Workbench added is
 * inferred from its fields alone. */
#include "checker/output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define EXAMPLES 2

static int all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
}

static const char *av_type(const m_attr *a)
{
    switch (a->type) {
    case MT_NUMBER:
        return "N";
    case MT_BOOLEAN:
        return "BOOL";
    case MT_BINARY:
        return "B";
    case MT_MAP:
        return "M";
    case MT_LIST:
        return "L";
    case MT_SET:
        return "SS";
    default:
        return "S";
    }
}

static int has_name(json_t *arr, const char *key, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        json_t *s = key ? json_object_get(v, key) : v;
        if (json_is_string(s) && strcmp(json_string_value(s), name) == 0) return 1;
    }
    return 0;
}

static json_t *key_attrs(const m_keyattr *pk, const m_keyattr *sk)
{
    json_t *o = json_object();
    const char *t[] = {pk->type == 'N'   ? "N"
                       : pk->type == 'B' ? "B"
                                         : "S",
                       sk->type == 'N'   ? "N"
                       : sk->type == 'B' ? "B"
                                         : "S"};
    json_object_set_new(o, "PartitionKey",
                        json_pack("{s:s, s:s}", "AttributeName", pk->name, "AttributeType", t[0]));
    if (sk->name)
        json_object_set_new(
            o, "SortKey",
            json_pack("{s:s, s:s}", "AttributeName", sk->name, "AttributeType", t[1]));
    return o;
}

/* An AttributeValue holding example text for an attribute (or a key, as a string). */
static json_t *av(const m_attr *a, const char *text, char keytype)
{
    if (a == NULL) return json_pack("{s:s}", keytype == 'N' ? "N" : "S", text);
    switch (a->type) {
    case MT_NUMBER:
        return json_pack("{s:s}", "N", text);
    case MT_BOOLEAN:
        return json_pack("{s:b}", "BOOL", strcmp(text, "true") == 0);
    case MT_BINARY:
        return json_pack("{s:s}", "B", "cXVhcnJ5");
    case MT_MAP:
        return json_pack("{s:{}}", "M");
    case MT_LIST:
        return json_pack("{s:[]}", "L");
    case MT_SET:
        return json_pack("{s:[s]}", "SS", text);
    default:
        return json_pack("{s:s}", "S", text);
    }
}

static json_t *example_item(const m_entity *e, int k)
{
    json_t *item = json_object();
    char buf[512];
    const m_table *t = e->table;
    check_item_key(e, &e->pk, k, buf, sizeof buf);
    json_object_set_new(item, t->pk.name, av(NULL, buf, t->pk.type));
    if (e->sk.text) {
        check_item_key(e, &e->sk, k, buf, sizeof buf);
        json_object_set_new(item, t->sk.name, av(NULL, buf, t->sk.type));
    }
    for (size_t i = 0; i < e->nkeys; i++) {
        const m_entkey *ek = &e->keys[i];
        if (!check_item_in_index(e, ek, k)) continue;
        if (!ek->index->local) {
            check_item_key(e, &ek->pk, k, buf, sizeof buf);
            json_object_set_new(item, ek->index->pk.name, av(NULL, buf, ek->index->pk.type));
        }
        if (ek->sk.text) {
            check_item_key(e, &ek->sk, k, buf, sizeof buf);
            json_object_set_new(item, ek->index->sk.name, av(NULL, buf, ek->index->sk.type));
        }
    }
    for (size_t i = 0; i < e->nattrs; i++) {
        if (json_object_get(item, e->attrs[i].name)) continue;
        check_item_value(e, &e->attrs[i], k, buf, sizeof buf);
        json_object_set_new(item, e->attrs[i].name, av(&e->attrs[i], buf, 'S'));
    }
    return item;
}

/* A model file's node as JSON, so that writing it back as YAML (yaml_value) and parsing it
 * again gives the same JSON: plain true/false become booleans, plain null, ~ and empty
 * become null, plain decimal integers become integers, everything else is a string. */
static json_t *doc_json(const doc_node *n)
{
    if (n == NULL) return json_null();
    if (n->kind == DOC_MAP) {
        json_t *o = json_object();
        for (size_t i = 0; i < n->n; i++)
            if (n->keys[i]->kind == DOC_SCALAR)
                json_object_set_new(o, n->keys[i]->str, doc_json(n->vals[i]));
        return o;
    }
    if (n->kind == DOC_SEQ) {
        json_t *a = json_array();
        for (size_t i = 0; i < n->n; i++)
            json_array_append_new(a, doc_json(n->vals[i]));
        return a;
    }
    const char *s = n->str;
    if (!n->quoted) {
        if (strcmp(s, "true") == 0) return json_true();
        if (strcmp(s, "false") == 0) return json_false();
        if (*s == '\0' || strcmp(s, "null") == 0 || strcmp(s, "~") == 0) return json_null();
        const char *d = s + (*s == '-');
        size_t len = strlen(d);
        if (len && len <= 15 && (len == 1 || d[0] != '0') && all_digits(d, len))
            return json_integer(strtoll(s, NULL, 10));
    }
    return json_string(s);
}

/* The model file's node for the element named name under the root's field (a map of
 * names), or NULL. */
static const doc_node *doc_named(const qr_model *m, const char *field, const char *name)
{
    return m->doc ? doc_get(doc_get(m->doc, field), name) : NULL;
}

/* The node of pattern i: the access_patterns entry of that name, else the i-th one. */
static const doc_node *doc_pattern(const qr_model *m, size_t i)
{
    const doc_node *seq = m->doc ? doc_get(m->doc, "access_patterns") : NULL;
    if (seq == NULL || seq->kind != DOC_SEQ) return NULL;
    for (size_t k = 0; k < seq->n; k++) {
        const doc_node *nm = doc_get(seq->vals[k], "name");
        if (nm && nm->kind == DOC_SCALAR && strcmp(nm->str, m->patterns[i].name) == 0)
            return seq->vals[k];
    }
    return i < seq->n ? seq->vals[i] : NULL;
}

/* The model file's top-level fields that no Workbench element holds. */
static json_t *doc_rest(const qr_model *m)
{
    static const char *const held[] = {"name",     "description",     "tables",
                                       "entities", "access_patterns", NULL};
    json_t *o = json_object();
    if (m->doc == NULL || m->doc->kind != DOC_MAP) return o;
    for (size_t i = 0; i < m->doc->n; i++) {
        const char *k = m->doc->keys[i]->str;
        int skip = 0;
        for (size_t h = 0; held[h]; h++)
            skip |= strcmp(k, held[h]) == 0;
        if (!skip) json_object_set_new(o, k, doc_json(m->doc->vals[i]));
    }
    return o;
}

/* Workbench's access-pattern types (Scan, Query, GetItem, PutItem, UpdateItem, DeleteItem):
 * a transaction, which it has no type for, is listed as the PutItem it starts with. */
static const char *wb_type(m_kind k)
{
    switch (k) {
    case MK_GET:
        return "GetItem";
    case MK_QUERY:
        return "Query";
    case MK_UPDATE:
        return "UpdateItem";
    case MK_DELETE:
        return "DeleteItem";
    default:
        return "PutItem";
    }
}

/* The Data Modeler's access patterns: name, description, type and the table or GSI it
 * runs against, with the pattern as the model file says it. */
static json_t *access_patterns(const qr_model *m)
{
    json_t *list = json_array();
    for (size_t i = 0; i < m->npatterns; i++) {
        const m_pattern *p = &m->patterns[i];
        json_t *ap = json_object();
        json_object_set_new(ap, "Name", json_string(p->name));
        json_object_set_new(ap, "Description", json_string(p->sentence ? p->sentence : ""));
        json_object_set_new(ap, "Type", json_string(wb_type(p->kind)));
        if (p->entity && p->entity->table)
            json_object_set_new(ap, "TableName", json_string(p->entity->table->name));
        const m_index *ix = p->index && p->entity && p->entity->table
                                ? model_table_index(p->entity->table, p->index)
                                : NULL;
        if (ix && !ix->local) json_object_set_new(ap, "IndexName", json_string(ix->name));
        const doc_node *n = doc_pattern(m, i);
        if (n) json_object_set_new(ap, "Quarry", doc_json(n));
        json_array_append_new(list, ap);
    }
    return list;
}

/* Workbench's sample-data format of an attribute ([category, format], as its
 * SampleDataFormats holds them), for the formats whose Workbench name is known. */
static json_t *sample_format(const m_attr *a)
{
    if (a->format == MF_TIMESTAMP) return json_pack("[s, s]", "date", "ISO 8601 date and time");
    if (a->type == MT_STRING && a->format == MF_NONE)
        return json_pack("[s, s]", "dataTypes", "String");
    return NULL;
}

/* Writes the Workbench JSON (ModelName, ModelMetadata, DataModel with one entry per table:
 * KeyAttributes, NonKeyAttributes, TableFacets, GlobalSecondaryIndexes, TableData,
 * BillingMode). Each entity becomes a facet whose key aliases are its key templates, with
 * example items. */
int model_export_workbench(const qr_model *m, FILE *f, qr_err *err)
{
    json_t *root = json_object();
    if (root == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    /* a reproducible date when SOURCE_DATE_EPOCH is set (as reproducible builds do) */
    time_t now = time(NULL);
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde && *sde) now = (time_t)strtoll(sde, NULL, 10);
    char date[64];
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%b %d, %Y, %I:%M %p", &tm);
    json_object_set_new(root, "ModelName", json_string(m->name ? m->name : "quarry model"));
    json_object_set_new(root, "ModelMetadata",
                        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "Author", "", "DateCreated",
                                  date, "DateLastModified", date, "Description",
                                  m->description ? m->description : "", "AWSService",
                                  "Amazon DynamoDB", "Version", "3.0"));
    json_t *dm = json_array();
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        json_t *tab = json_object(), *nka = json_array(), *facets = json_array(),
               *gsis = json_array(), *data = json_array();
        json_object_set_new(tab, "TableName", json_string(t->name));
        json_object_set_new(tab, "KeyAttributes", key_attrs(&t->pk, &t->sk));
        for (size_t i = 0; i < t->nidx; i++) {
            const m_keyattr *ks[2] = {&t->idx[i].pk, &t->idx[i].sk};
            for (int k = 0; k < 2; k++)
                if (ks[k]->name && strcmp(ks[k]->name, t->pk.name) &&
                    (!t->sk.name || strcmp(ks[k]->name, t->sk.name)) &&
                    !has_name(nka, "AttributeName", ks[k]->name))
                    json_array_append_new(nka, json_pack("{s:s, s:s}", "AttributeName", ks[k]->name,
                                                         "AttributeType",
                                                         ks[k]->type == 'N'   ? "N"
                                                         : ks[k]->type == 'B' ? "B"
                                                                              : "S"));
        }
        for (size_t ei = 0; ei < m->nentities; ei++) {
            const m_entity *e = &m->entities[ei];
            if (e->table != t) continue;
            json_t *fattrs = json_array(), *fdata = json_array();
            for (size_t i = 0; i < e->nkeys; i++) {
                const m_index *ix = e->keys[i].index;
                if (!ix->local && !has_name(fattrs, NULL, ix->pk.name))
                    json_array_append_new(fattrs, json_string(ix->pk.name));
                if (ix->sk.name && !has_name(fattrs, NULL, ix->sk.name))
                    json_array_append_new(fattrs, json_string(ix->sk.name));
            }
            for (size_t i = 0; i < e->nattrs; i++) {
                const m_attr *a = &e->attrs[i];
                if (!has_name(nka, "AttributeName", a->name) && strcmp(a->name, t->pk.name) &&
                    (!t->sk.name || strcmp(a->name, t->sk.name)))
                    json_array_append_new(nka, json_pack("{s:s, s:s}", "AttributeName", a->name,
                                                         "AttributeType", av_type(a)));
                if (!has_name(fattrs, NULL, a->name))
                    json_array_append_new(fattrs, json_string(a->name));
            }
            for (int k = 0; k < EXAMPLES; k++) {
                json_t *item = example_item(e, k);
                json_array_append(data, item);
                json_array_append_new(fdata, item);
            }
            json_t *alias = json_pack("{s:s}", "PartitionKeyAlias", e->pk.text ? e->pk.text : "");
            if (e->sk.text) json_object_set_new(alias, "SortKeyAlias", json_string(e->sk.text));
            json_t *facet = json_pack("{s:s, s:o, s:o, s:o, s:{s:{}}}", "FacetName", e->name,
                                      "KeyAttributeAlias", alias, "TableData", fdata,
                                      "NonKeyAttributes", fattrs, "DataAccess", "MySql");
            const doc_node *en = doc_named(m, "entities", e->name);
            if (en) json_object_set_new(facet, "Quarry", doc_json(en));
            json_array_append_new(facets, facet);
        }
        for (size_t i = 0; i < t->nidx; i++) {
            const m_index *ix = &t->idx[i];
            if (ix->local) continue;
            json_t *proj = json_pack("{s:s}", "ProjectionType",
                                     ix->projection == MP_ALL         ? "ALL"
                                     : ix->projection == MP_KEYS_ONLY ? "KEYS_ONLY"
                                                                      : "INCLUDE");
            if (ix->projection == MP_INCLUDE) {
                json_t *nk = json_array();
                for (size_t k = 0; k < ix->ninclude; k++)
                    json_array_append_new(nk, json_string(ix->include[k]));
                json_object_set_new(proj, "NonKeyAttributes", nk);
            }
            json_array_append_new(gsis, json_pack("{s:s, s:o, s:o}", "IndexName", ix->name,
                                                  "KeyAttributes", key_attrs(&ix->pk, &ix->sk),
                                                  "Projection", proj));
        }
        json_object_set_new(tab, "NonKeyAttributes", nka);
        json_object_set_new(tab, "TableFacets", facets);
        json_object_set_new(tab, "GlobalSecondaryIndexes", gsis);
        json_object_set_new(tab, "TableData", data);
        json_object_set_new(tab, "DataAccess", json_pack("{s:{}}", "MySql"));
        json_t *formats = json_object();
        for (size_t ei = 0; ei < m->nentities; ei++)
            for (size_t i = 0; m->entities[ei].table == t && i < m->entities[ei].nattrs; i++) {
                const m_attr *a = &m->entities[ei].attrs[i];
                json_t *sf = json_object_get(formats, a->name) ? NULL : sample_format(a);
                if (sf) json_object_set_new(formats, a->name, sf);
            }
        json_object_set_new(tab, "SampleDataFormats", formats);
        json_object_set_new(tab, "BillingMode",
                            json_string(t->provisioned ? "PROVISIONED" : "PAY_PER_REQUEST"));
        if (t->provisioned)
            json_object_set_new(tab, "ProvisionedCapacitySettings",
                                json_pack("{s:{s:I, s:I}}", "ProvisionedThroughput",
                                          "ReadCapacityUnits", (json_int_t)t->rcu,
                                          "WriteCapacityUnits", (json_int_t)t->wcu));
        const doc_node *tn = doc_named(m, "tables", t->name);
        if (tn) json_object_set_new(tab, "Quarry", doc_json(tn));
        json_array_append_new(dm, tab);
    }
    json_object_set_new(root, "DataModel", dm);
    json_object_set_new(root, "AccessPatterns", access_patterns(m));
    json_object_set_new(root, "Quarry", doc_rest(m));
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(root);
    return rc ? err_set(err, QR_E_INTERNAL, "cannot write the model") : 0;
}

/* ---- import ---- */

void model_write_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* ---- writing a "Quarry" object back as the model file's YAML ---- */

/* True when s, written without quotes, reads back as the same string: a word of letters,
 * digits and _ . - that is no number, boolean or null in any YAML reader. */
static int plain_ok(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no", "null",
                                        "on",   "off",   "y",   "n",  NULL};
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '-') return 0;
    for (size_t i = 0; words[i]; i++)
        if (strcasecmp(s, words[i]) == 0) return 0;
    const char *d = s + (*s == '-');
    return !all_digits(d, strlen(d));
}

static void yaml_key(FILE *f, const char *k)
{
    if (plain_ok(k))
        fputs(k, f);
    else
        model_write_quoted(f, k);
}

/* A scalar as doc_json made it. yes and no stay plain, so a boolean written that way stays
 * one (as strings they read the same either way). */
static void yaml_scalar(FILE *f, json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (plain_ok(s) || strcmp(s, "yes") == 0 || strcmp(s, "no") == 0)
            fputs(s, f);
        else
            model_write_quoted(f, s);
    } else if (json_is_integer(v)) {
        fprintf(f, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        fprintf(f, "%.17g", json_real_value(v));
    } else if (json_is_true(v) || json_is_false(v)) {
        fputs(json_is_true(v) ? "true" : "false", f);
    } else {
        fputs("null", f);
    }
}

static int all_scalars(json_t *a)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) if (json_is_object(v) || json_is_array(v)) return 0;
    return 1;
}

static void yaml_map(FILE *f, json_t *o, int indent, int first_inline);

/* The value after "key:", then the line's end. */
static void yaml_value(FILE *f, json_t *v, int indent)
{
    if (json_is_object(v) && json_object_size(v)) {
        fputc('\n', f);
        yaml_map(f, v, indent, 0);
    } else if (json_is_object(v)) {
        fputs(" {}\n", f);
    } else if (json_is_array(v) && all_scalars(v)) {
        fputs(" [", f);
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (i) fputs(", ", f);
            yaml_scalar(f, x);
        }
        fputs("]\n", f);
    } else if (json_is_array(v)) {
        fputc('\n', f);
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            fprintf(f, "%*s-", indent, "");
            if (json_is_object(x) && json_object_size(x)) {
                fputc(' ', f);
                yaml_map(f, x, indent + 2, 1);
            } else if (json_is_object(x) || json_is_array(x)) {
                /* an empty map, or a list in a list: JSON is YAML's flow style */
                char *flow = json_dumps(x, JSON_COMPACT | JSON_PRESERVE_ORDER);
                fprintf(f, " %s\n", flow ? flow : "null");
                free(flow);
            } else {
                fputc(' ', f);
                yaml_scalar(f, x);
                fputc('\n', f);
            }
        }
    } else {
        fputc(' ', f);
        yaml_scalar(f, v);
        fputc('\n', f);
    }
}

/* A map's pairs, indent spaces in (the first without them when it follows "- "). */
static void yaml_map(FILE *f, json_t *o, int indent, int first_inline)
{
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach(o, k, v)
    {
        if (!(first && first_inline)) fprintf(f, "%*s", indent, "");
        first = 0;
        yaml_key(f, k);
        fputc(':', f);
        yaml_value(f, v, indent + 2);
    }
}

/* "  NAME:" and the element's fields from its Quarry object. */
static void yaml_element(FILE *f, const char *name, json_t *fields)
{
    fputs("  ", f);
    yaml_key(f, name);
    fputc(':', f);
    yaml_value(f, fields, 4);
}

static const char *str_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Guesses a model format from an example value. */
static const char *guess_format(const char *v, int *width)
{
    size_t n = strlen(v);
    *width = 0;
    if (n == 20 && all_digits(v, 4) && v[4] == '-' && v[10] == 'T' && v[19] == 'Z')
        return "timestamp";
    if (n == 10 && all_digits(v, 4) && v[4] == '-' && v[7] == '-') return "date";
    if (n == 7 && all_digits(v, 4) && v[4] == '-' && all_digits(v + 5, 2)) return "month";
    if (n == 36 && v[8] == '-' && v[13] == '-' && v[18] == '-' && v[23] == '-') return "uuid";
    if (n > 1 && v[0] == '0' && all_digits(v, n)) {
        *width = (int)n;
        return "zero-padded";
    }
    return NULL;
}

static const char *av_text(json_t *av, char *buf, size_t size)
{
    const char *s = str_of(av, "S");
    if (s == NULL) s = str_of(av, "N");
    if (s == NULL) return NULL;
    snprintf(buf, size, "%s", s);
    return buf;
}

/* Turns a key value from an example item into a template by replacing the values of the
 * item's other attributes with {name}, longest values first. */
static void infer_template(json_t *item, const char *value, json_t *keynames, char *out,
                           size_t size)
{
    char cur[1024];
    snprintf(cur, sizeof cur, "%s", value);
    for (;;) {
        const char *best = NULL, *bestv = NULL;
        size_t bestlen = 0;
        const char *k;
        json_t *v;
        json_object_foreach(item, k, v)
        {
            if (has_name(keynames, NULL, k)) continue;
            const char *s = str_of(v, "S") ? str_of(v, "S") : str_of(v, "N");
            if (s == NULL || strlen(s) < 2 || strlen(s) <= bestlen || strstr(cur, s) == NULL)
                continue;
            /* do not replace inside an existing {variable} */
            const char *at = strstr(cur, s);
            const char *open = at, *close = NULL;
            while (open > cur && *open != '{' && *open != '}')
                open--;
            if (*open == '{') close = strchr(open, '}');
            if (close && close > at) continue;
            best = k;
            bestv = s;
            bestlen = strlen(s);
        }
        if (best == NULL) break;
        char next[1024];
        const char *at = strstr(cur, bestv);
        snprintf(next, sizeof next, "%.*s{%s}%s", (int)(at - cur), cur, best, at + bestlen);
        snprintf(cur, sizeof cur, "%s", next);
    }
    snprintf(out, size, "%s", cur);
}

/* The facet's template for key attribute keyname: the alias when it is a template, else
 * inferred from the facet's first example item, else "{alias}". */
static void facet_template(json_t *facet, const char *alias, const char *keyname, json_t *keynames,
                           char *out, size_t size, json_t *extra_attrs)
{
    if (alias && strchr(alias, '{')) {
        snprintf(out, size, "%s", alias);
        return;
    }
    json_t *item = json_array_get(json_object_get(facet, "TableData"), 0);
    char buf[1024];
    if (item && av_text(json_object_get(item, keyname), buf, sizeof buf)) {
        infer_template(item, buf, keynames, out, size);
        return;
    }
    const char *name = alias && *alias ? alias : keyname;
    snprintf(out, size, "{%s}", name);
    if (!has_name(extra_attrs, NULL, name)) json_array_append_new(extra_attrs, json_string(name));
}

static void key_yaml(FILE *f, const char *field, json_t *key, const char *indent)
{
    const char *name = str_of(key, "AttributeName"), *type = str_of(key, "AttributeType");
    fprintf(f, "%s%s: {name: ", indent, field);
    model_write_quoted(f, name ? name : "");
    fprintf(f, ", type: %s}\n",
            type && (strcmp(type, "N") == 0 || strcmp(type, "B") == 0) ? type : "S");
}

static const char *attr_type_word(const char *t)
{
    if (t == NULL) return "string";
    if (strcmp(t, "N") == 0) return "number";
    if (strcmp(t, "BOOL") == 0) return "boolean";
    if (strcmp(t, "B") == 0) return "binary";
    if (strcmp(t, "M") == 0) return "map";
    if (strcmp(t, "L") == 0) return "list";
    if (strcmp(t, "SS") == 0 || strcmp(t, "NS") == 0 || strcmp(t, "BS") == 0) return "set";
    return "string";
}

static int import_table(json_t *tab, FILE *f, qr_err *err, json_t *entities_out)
{
    const char *tname = str_of(tab, "TableName");
    json_t *ka = json_object_get(tab, "KeyAttributes");
    json_t *pk = json_object_get(ka, "PartitionKey"), *sk = json_object_get(ka, "SortKey");
    if (tname == NULL || !json_is_object(pk) || str_of(pk, "AttributeName") == NULL)
        return err_validation(err,
                              "a DataModel table needs TableName and KeyAttributes.PartitionKey");
    size_t i;
    json_t *fc;
    json_array_foreach(json_object_get(tab, "TableFacets"), i, fc)
        json_array_append_new(entities_out, json_pack("{s:O, s:O}", "facet", fc, "table", tab));
    json_t *carried = json_object_get(tab, "Quarry");
    if (json_is_object(carried)) {
        yaml_element(f, tname, carried);
        return 0;
    }
    fprintf(f, "  ");
    model_write_quoted(f, tname);
    fprintf(f, ":\n");
    key_yaml(f, "partition_key", pk, "    ");
    if (json_is_object(sk)) key_yaml(f, "sort_key", sk, "    ");
    const char *billing = str_of(tab, "BillingMode");
    if (billing && strcmp(billing, "PROVISIONED") == 0) {
        json_t *pt = json_object_get(json_object_get(tab, "ProvisionedCapacitySettings"),
                                     "ProvisionedThroughput");
        json_int_t r = json_integer_value(json_object_get(pt, "ReadCapacityUnits")),
                   w = json_integer_value(json_object_get(pt, "WriteCapacityUnits"));
        fprintf(f, "    billing: provisioned\n    read_capacity: %lld\n    write_capacity: %lld\n",
                (long long)(r > 0 ? r : 1), (long long)(w > 0 ? w : 1));
    } else {
        fprintf(f, "    billing: on-demand\n");
    }
    json_t *gsis = json_object_get(tab, "GlobalSecondaryIndexes");
    if (json_array_size(gsis)) {
        fprintf(f, "    gsis:\n");
        json_t *g;
        json_array_foreach(gsis, i, g)
        {
            json_t *gk = json_object_get(g, "KeyAttributes");
            if (str_of(g, "IndexName") == NULL ||
                !json_is_object(json_object_get(gk, "PartitionKey")))
                return err_validation(
                    err,
                    "a GlobalSecondaryIndexes entry of table %s needs IndexName and KeyAttributes",
                    tname);
            fprintf(f, "      - name: ");
            model_write_quoted(f, str_of(g, "IndexName"));
            fprintf(f, "\n");
            key_yaml(f, "partition_key", json_object_get(gk, "PartitionKey"), "        ");
            if (json_is_object(json_object_get(gk, "SortKey")))
                key_yaml(f, "sort_key", json_object_get(gk, "SortKey"), "        ");
            json_t *proj = json_object_get(g, "Projection");
            const char *pt = str_of(proj, "ProjectionType");
            if (pt && strcmp(pt, "KEYS_ONLY") == 0)
                fprintf(f, "        projection: keys_only\n");
            else if (pt && strcmp(pt, "INCLUDE") == 0) {
                fprintf(f, "        projection: [");
                size_t k;
                json_t *a;
                json_array_foreach(json_object_get(proj, "NonKeyAttributes"), k, a)
                {
                    if (!json_is_string(a)) continue;
                    if (k) fprintf(f, ", ");
                    model_write_quoted(f, json_string_value(a));
                }
                fprintf(f, "]\n");
            } else
                fprintf(f, "        projection: all\n");
        }
    }
    return 0;
}

static int import_entity(json_t *pair, size_t ntables, FILE *f, qr_err *err)
{
    json_t *facet = json_object_get(pair, "facet"), *tab = json_object_get(pair, "table");
    const char *name = str_of(facet, "FacetName"), *tname = str_of(tab, "TableName");
    if (name == NULL) return err_validation(err, "a facet of table %s has no FacetName", tname);
    json_t *carried = json_object_get(facet, "Quarry");
    if (json_is_object(carried)) {
        /* its table named when the one-table model it came from has gained another */
        json_t *fields = json_deep_copy(carried);
        if (ntables > 1 && json_object_get(fields, "table") == NULL)
            json_object_set_new(fields, "table", json_string(tname));
        yaml_element(f, name, fields);
        json_decref(fields);
        return 0;
    }
    json_t *ka = json_object_get(tab, "KeyAttributes");
    const char *pkn = str_of(json_object_get(ka, "PartitionKey"), "AttributeName");
    const char *skn = str_of(json_object_get(ka, "SortKey"), "AttributeName");
    json_t *alias = json_object_get(facet, "KeyAttributeAlias");
    json_t *keynames = json_array(), *extra = json_array();
    json_array_append_new(keynames, json_string(pkn));
    if (skn) json_array_append_new(keynames, json_string(skn));
    json_t *gsis = json_object_get(tab, "GlobalSecondaryIndexes");
    size_t i;
    json_t *g;
    json_array_foreach(gsis, i, g)
    {
        json_t *gk = json_object_get(g, "KeyAttributes");
        const char *a = str_of(json_object_get(gk, "PartitionKey"), "AttributeName"),
                   *b = str_of(json_object_get(gk, "SortKey"), "AttributeName");
        if (a) json_array_append_new(keynames, json_string(a));
        if (b) json_array_append_new(keynames, json_string(b));
    }
    char pkt[1024], skt[1024] = "";
    facet_template(facet, str_of(alias, "PartitionKeyAlias"), pkn, keynames, pkt, sizeof pkt,
                   extra);
    if (skn)
        facet_template(facet, str_of(alias, "SortKeyAlias"), skn, keynames, skt, sizeof skt, extra);
    fprintf(f, "  ");
    model_write_quoted(f, name);
    fprintf(f, ":\n    table: ");
    model_write_quoted(f, tname);
    fprintf(f, "\n    pk: ");
    model_write_quoted(f, pkt);
    fprintf(f, "\n");
    if (skn) {
        fprintf(f, "    sk: ");
        model_write_quoted(f, skt);
        fprintf(f, "\n");
    }
    /* index keys the facet writes */
    json_t *fattrs = json_object_get(facet, "NonKeyAttributes");
    int wrote_ix = 0;
    json_array_foreach(gsis, i, g)
    {
        json_t *gk = json_object_get(g, "KeyAttributes");
        const char *a = str_of(json_object_get(gk, "PartitionKey"), "AttributeName"),
                   *b = str_of(json_object_get(gk, "SortKey"), "AttributeName");
        if (a == NULL || !has_name(fattrs, NULL, a)) continue;
        if (!wrote_ix) fprintf(f, "    indexes:\n");
        wrote_ix = 1;
        char t1[1024], t2[1024];
        facet_template(facet, NULL, a, keynames, t1, sizeof t1, extra);
        fprintf(f, "      ");
        model_write_quoted(f, str_of(g, "IndexName"));
        fprintf(f, ": {pk: ");
        model_write_quoted(f, t1);
        if (b) {
            facet_template(facet, NULL, b, keynames, t2, sizeof t2, extra);
            fprintf(f, ", sk: ");
            model_write_quoted(f, t2);
        }
        fprintf(f, "}\n");
    }
    /* attributes: the facet's non-key attributes with the table's types */
    json_t *item = json_array_get(json_object_get(facet, "TableData"), 0);
    fprintf(f, "    attributes:\n");
    int any = 0;
    json_t *a;
    json_t *all = json_array();
    json_array_foreach(fattrs, i,
                       a) if (json_is_string(a) && !has_name(keynames, NULL, json_string_value(a)))
        json_array_append(all, a);
    json_array_foreach(extra, i, a) if (!has_name(all, NULL, json_string_value(a)))
        json_array_append(all, a);
    json_array_foreach(all, i, a)
    {
        const char *an = json_string_value(a), *type = NULL;
        size_t k;
        json_t *d;
        json_array_foreach(json_object_get(tab, "NonKeyAttributes"), k,
                           d) if (str_of(d, "AttributeName") &&
                                  strcmp(str_of(d, "AttributeName"), an) == 0) type =
            str_of(d, "AttributeType");
        const char *word = attr_type_word(type);
        char buf[512];
        int width = 0;
        const char *fmt = NULL;
        if (item && strcmp(word, "string") == 0 &&
            av_text(json_object_get(item, an), buf, sizeof buf))
            fmt = guess_format(buf, &width);
        /* Workbench's sample-data format, when it names one a model file has */
        json_t *sf = json_object_get(json_object_get(tab, "SampleDataFormats"), an);
        if (json_is_string(json_array_get(sf, 1)) &&
            strcmp(json_string_value(json_array_get(sf, 1)), "ISO 8601 date and time") == 0)
            fmt = "timestamp", width = 0;
        fprintf(f, "      ");
        model_write_quoted(f, an);
        if (fmt && width)
            fprintf(f, ": {format: %s, width: %d}\n", fmt, width);
        else
            fprintf(f, ": %s\n", fmt ? fmt : word);
        any = 1;
    }
    if (!any) fprintf(f, "      {}\n");
    json_decref(all);
    json_decref(keynames);
    json_decref(extra);
    return 0;
}

/* A kind for one of Workbench's access-pattern types, or NULL (Scan has none). */
static const char *kind_of_type(const char *type)
{
    static const char *const map[][2] = {{"GetItem", "get"},       {"Query", "query"},
                                         {"PutItem", "put"},       {"UpdateItem", "update"},
                                         {"DeleteItem", "delete"}, {NULL, NULL}};
    for (size_t i = 0; type && map[i][0]; i++)
        if (strcmp(type, map[i][0]) == 0) return map[i][1];
    return NULL;
}

/* The facet an access pattern added in Workbench stands on: the first of its table that
 * holds the partition-key attribute of its GSI, else the table's first. */
static const char *pattern_facet(json_t *tab, const char *index)
{
    json_t *facets = json_object_get(tab, "TableFacets");
    const char *pk = NULL;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(tab, "GlobalSecondaryIndexes"), i, g)
    {
        const char *n = str_of(g, "IndexName");
        if (index && n && strcmp(n, index) == 0)
            pk = str_of(json_object_get(json_object_get(g, "KeyAttributes"), "PartitionKey"),
                        "AttributeName");
    }
    json_t *fc;
    json_array_foreach(facets, i, fc) if (pk && has_name(json_object_get(fc, "NonKeyAttributes"),
                                                         NULL, pk)) return str_of(fc, "FacetName");
    return str_of(json_array_get(facets, 0), "FacetName");
}

/* The Data Modeler's access patterns: each as its Quarry object says (with the name and
 * description Workbench shows), or, for one added in Workbench, its type as the kind on the
 * first facet of its table, the attributes the request gives left to be written down. */
static int import_patterns(json_t *root, json_t *dm, FILE *f, qr_err *err)
{
    json_t *aps = json_object_get(root, "AccessPatterns");
    if (!json_is_array(aps) || json_array_size(aps) == 0) {
        fprintf(f, "access_patterns: []\n");
        return 0;
    }
    fprintf(f, "access_patterns:\n");
    size_t i;
    json_t *ap;
    json_array_foreach(aps, i, ap)
    {
        const char *name = str_of(ap, "Name"), *desc = str_of(ap, "Description");
        if (name == NULL) return err_validation(err, "access pattern %zu has no Name", i + 1);
        json_t *carried = json_object_get(ap, "Quarry");
        if (json_is_object(carried)) {
            json_t *fields = json_deep_copy(carried);
            if (!json_equal(json_object_get(fields, "name"), json_object_get(ap, "Name")))
                json_object_set_new(fields, "name", json_string(name));
            if (desc && *desc &&
                !json_equal(json_object_get(fields, "sentence"),
                            json_object_get(ap, "Description")))
                json_object_set_new(fields, "sentence", json_string(desc));
            fputs("  - ", f);
            yaml_map(f, fields, 4, 1);
            json_decref(fields);
            continue;
        }
        const char *kind = kind_of_type(str_of(ap, "Type")), *tname = str_of(ap, "TableName");
        const char *entity = NULL;
        size_t k;
        json_t *tab;
        json_array_foreach(dm, k, tab) if (tname && str_of(tab, "TableName") &&
                                           strcmp(str_of(tab, "TableName"), tname) == 0) entity =
            pattern_facet(tab, str_of(ap, "IndexName"));
        if (kind == NULL || entity == NULL) {
            fprintf(f, "  # Workbench access pattern ");
            model_write_quoted(f, name);
            fprintf(f, " is left out: %s\n",
                    kind ? "its table has no facet to stand for the entity"
                         : "its type has no kind in a model file");
            continue;
        }
        fprintf(f, "  # from Workbench: write down the attributes its request gives\n  - name: ");
        model_write_quoted(f, name);
        if (desc && *desc) {
            fprintf(f, "\n    sentence: ");
            model_write_quoted(f, desc);
        }
        fprintf(f, "\n    kind: %s\n    entity: ", kind);
        model_write_quoted(f, entity);
        fprintf(f, "\n    given: []\n");
        if (str_of(ap, "IndexName")) {
            fprintf(f, "    index: ");
            model_write_quoted(f, str_of(ap, "IndexName"));
            fprintf(f, "\n");
        }
    }
    return 0;
}

/* Reads such a file back into a model file: each table, facet (as an entity) and access
 * pattern from its Quarry object when it has one; else facets' key templates are recovered
 * from the aliases, or inferred from a facet's example items when the aliases are plain
 * names. */
int model_import_workbench(const char *path, FILE *f, qr_err *err)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL) return err_validation(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    int rc = -1;
    json_t *dm = json_object_get(root, "DataModel"), *ents = json_array();
    if (!json_is_array(dm) || json_array_size(dm) == 0) {
        err_validation(err, "%s: not a NoSQL Workbench model (no DataModel array)", path);
        goto done;
    }
    fprintf(f, "# Imported from NoSQL Workbench model %s by quarry model import.\n", path);
    if (str_of(root, "ModelName")) {
        fprintf(f, "name: ");
        model_write_quoted(f, str_of(root, "ModelName"));
        fprintf(f, "\n");
    }
    const char *desc = str_of(json_object_get(root, "ModelMetadata"), "Description");
    if (desc && *desc) {
        fprintf(f, "description: ");
        model_write_quoted(f, desc);
        fprintf(f, "\n");
    }
    fprintf(f, "tables:\n");
    size_t i;
    json_t *tab;
    json_array_foreach(dm, i, tab) if (import_table(tab, f, err, ents)) goto done;
    fprintf(f, "entities:\n");
    if (json_array_size(ents) == 0) fprintf(f, "  {}\n");
    json_t *pair;
    json_array_foreach(ents, i,
                       pair) if (import_entity(pair, json_array_size(dm), f, err)) goto done;
    if (import_patterns(root, dm, f, err)) goto done;
    json_t *rest = json_object_get(root, "Quarry");
    if (json_is_object(rest)) yaml_map(f, rest, 0, 0);
    rc = 0;
done:
    json_decref(ents);
    json_decref(root);
    return rc;
}
