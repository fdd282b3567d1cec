/* workbench.c — NoSQL Workbench for DynamoDB data models: export and import. Access
 * patterns are not part of Workbench's format, so an imported model has none until they are
 * written down. */
#include "checker/output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXAMPLES 2

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
            json_t *alias = json_pack("{s:s}", "PartitionKeyAlias", e->pk.text);
            if (e->sk.text) json_object_set_new(alias, "SortKeyAlias", json_string(e->sk.text));
            json_array_append_new(facets,
                                  json_pack("{s:s, s:o, s:o, s:o, s:{s:{}}}", "FacetName", e->name,
                                            "KeyAttributeAlias", alias, "TableData", fdata,
                                            "NonKeyAttributes", fattrs, "DataAccess", "MySql"));
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
        json_object_set_new(tab, "BillingMode",
                            json_string(t->provisioned ? "PROVISIONED" : "PAY_PER_REQUEST"));
        if (t->provisioned)
            json_object_set_new(tab, "ProvisionedCapacitySettings",
                                json_pack("{s:{s:I, s:I}}", "ProvisionedThroughput",
                                          "ReadCapacityUnits", (json_int_t)t->rcu,
                                          "WriteCapacityUnits", (json_int_t)t->wcu));
        json_array_append_new(dm, tab);
    }
    json_object_set_new(root, "DataModel", dm);
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

static const char *str_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
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
        size_t i;
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
    /* remember the facets to write as entities after all tables */
    size_t i;
    json_t *fc;
    json_array_foreach(json_object_get(tab, "TableFacets"), i, fc)
        json_array_append_new(entities_out, json_pack("{s:O, s:O}", "facet", fc, "table", tab));
    return 0;
}

static int import_entity(json_t *pair, FILE *f, qr_err *err)
{
    json_t *facet = json_object_get(pair, "facet"), *tab = json_object_get(pair, "table");
    const char *name = str_of(facet, "FacetName"), *tname = str_of(tab, "TableName");
    if (name == NULL) return err_validation(err, "a facet of table %s has no FacetName", tname);
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

/* Reads such a file back into a model file: facets become entities, and key templates are
 * recovered from the aliases, or inferred from a facet's example items when the aliases are
 * plain names. */
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
    fprintf(f, "# Workbench has no access patterns: list them under access_patterns, then run "
               "quarry model check.\n");
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
    json_array_foreach(ents, i, pair) if (import_entity(pair, f, err)) goto done;
    fprintf(f, "access_patterns: []\n");
    rc = 0;
done:
    json_decref(ents);
    json_decref(root);
    return rc;
}
