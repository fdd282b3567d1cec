/* export_electrodb.c — `quarry model export --format electrodb`: an ES module with one
 * ElectroDB Entity factory per entity of a DynamoDB table, its keys the model's templates
 * ("CUSTOMER#{customerId}" as template "CUSTOMER#${customerId}" over composite
 * [customerId], casing kept), its indexes the model's GSIs and LSIs (a sparse index's
 * `when` as ElectroDB's index condition), zero-padded attributes padded in keys. CQL tables'
 * entities are left out. It writes code; whether the model is good is check.c's. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "checker/export_js.h"
#include "checker/output.h"

/* An identifier for the entity's factory: its name with anything else than letters,
 * digits, _ and $ made _, and a leading digit prefixed. */
static void js_ident(FILE *f, const char *s)
{
    if (isdigit((unsigned char)*s)) fputc('_', f);
    for (; *s; s++)
        fputc(isalnum((unsigned char)*s) || *s == '_' || *s == '$' ? *s : '_', f);
}

static void attribute(FILE *f, const m_entity *e, const m_attr *a)
{
    fprintf(f, "      ");
    model_write_quoted(f, a->name);
    fprintf(f, ": { type: ");
    if (a->format == MF_ENUM && a->nvalues) {
        fprintf(f, "[");
        for (size_t i = 0; i < a->nvalues; i++) {
            if (i) fprintf(f, ", ");
            model_write_quoted(f, a->values[i]);
        }
        fprintf(f, "]");
    } else {
        fprintf(f, "\"%s\"",
                a->type == MT_STRING    ? "string"
                : a->type == MT_NUMBER  ? "number"
                : a->type == MT_BOOLEAN ? "boolean"
                                        : "any");
    }
    if (js_in_any_key(e, a)) fprintf(f, ", required: true");
    if (a->format == MF_PADDED && a->width > 0)
        fprintf(f, ", padding: { length: %d, char: \"0\" }", a->width);
    fprintf(f, " },\n");
}

/* pk: or sk: of an index: the key attribute, the template's variables and the template. */
static void key(FILE *f, const char *which, const char *field, char type, const m_template *t)
{
    fprintf(f, "        %s: { field: ", which);
    model_write_quoted(f, field);
    fprintf(f, ", composite: [");
    size_t nvars = 0, nlit = 0;
    for (size_t i = 0; i < t->nseg; i++) {
        if (!t->seg[i].is_var) {
            nlit++;
            continue;
        }
        if (nvars++) fprintf(f, ", ");
        model_write_quoted(f, t->seg[i].text);
    }
    fprintf(f, "], template: \"");
    for (size_t i = 0; i < t->nseg; i++) {
        const char *s = t->seg[i].text;
        if (t->seg[i].is_var) fprintf(f, "${");
        for (; *s; s++)
            if (*s == '"' || *s == '\\')
                fprintf(f, "\\%c", *s);
            else
                fputc(*s, f);
        if (t->seg[i].is_var) fprintf(f, "}");
    }
    fprintf(f, "\", casing: \"none\"");
    /* a number key attribute holding one variable alone is written as a number */
    if (type == 'N' && nvars == 1 && nlit == 0) fprintf(f, ", cast: \"number\"");
    fprintf(f, " },\n");
}

static void index_entry(FILE *f, const m_entity *e, const m_entkey *k)
{
    const m_table *t = e->table;
    const m_index *ix = k->index;
    fprintf(f, "      ");
    model_write_quoted(f, ix->name);
    fprintf(f, ": {\n        index: ");
    model_write_quoted(f, ix->name);
    fprintf(f, ",\n");
    /* what the index holds: ElectroDB needs it to read items without their entity markers */
    if (ix->projection == MP_KEYS_ONLY) {
        fprintf(f, "        projection: \"keys_only\",\n");
    } else if (ix->projection == MP_INCLUDE) {
        /* of the attributes projected, the ones this entity has (the index is shared) */
        fprintf(f, "        projection: [");
        size_t n = 0;
        for (size_t a = 0; a < ix->ninclude; a++)
            for (size_t i = 0; i < e->nattrs; i++)
                if (strcmp(e->attrs[i].name, ix->include[a]) == 0) {
                    if (n++) fprintf(f, ", ");
                    model_write_quoted(f, ix->include[a]);
                }
        fprintf(f, "],\n");
    }
    if (k->nwhen) {
        /* a sparse index: its keys are written only while these attributes hold */
        fprintf(f, "        condition: (attr) =>");
        for (size_t w = 0; w < k->nwhen; w++) {
            fprintf(f, "%s String(attr[", w ? " &&" : "");
            model_write_quoted(f, k->when[w].name);
            fprintf(f, "]) === ");
            model_write_quoted(f, k->when[w].value ? k->when[w].value : "");
        }
        fprintf(f, ",\n");
    }
    if (ix->local)
        key(f, "pk", t->pk.name, t->pk.type, &e->pk); /* an LSI shares the table's key */
    else
        key(f, "pk", ix->pk.name, ix->pk.type, &k->pk);
    if (ix->sk.name && k->sk.text) key(f, "sk", ix->sk.name, ix->sk.type, &k->sk);
    fprintf(f, "      },\n");
}

int model_export_electrodb(const qr_model *m, FILE *f, qr_err *err)
{
    for (size_t ti = 0; ti < m->ntables; ti++)
        for (size_t i = 0; i < m->tables[ti].nidx; i++)
            if (m->tables[ti].idx[i].npk_parts > 1 || m->tables[ti].idx[i].nsk_parts > 1)
                return err_validation(err,
                                      "index %s of table %s has a multi-attribute key, which "
                                      "ElectroDB's indexes cannot express",
                                      m->tables[ti].idx[i].name, m->tables[ti].name);
    const char *service = m->name ? m->name : "quarry";
    fprintf(f, "// Generated by quarry model export from model %s: ElectroDB entities.\n", service);
    fprintf(f, "// Each factory takes a DynamoDB client and, optionally, another table name.\n");
    fprintf(f, "import { Entity } from \"electrodb\";\n");
    size_t written = 0;
    for (size_t i = 0; i < m->nentities; i++) {
        const m_entity *e = &m->entities[i];
        const m_table *t = e->table;
        if (!js_exports_entity(e)) continue;
        fprintf(f, "\nexport function ");
        js_ident(f, e->name);
        fprintf(f, "(client, table = ");
        model_write_quoted(f, t->name);
        fprintf(f, ") {\n  return new Entity({\n    model: { entity: ");
        model_write_quoted(f, e->name);
        fprintf(f, ", version: \"1\", service: ");
        model_write_quoted(f, service);
        fprintf(f, " },\n    attributes: {\n");
        for (size_t a = 0; a < e->nattrs; a++)
            attribute(f, e, &e->attrs[a]);
        fprintf(f, "    },\n    indexes: {\n      primary: {\n");
        key(f, "pk", t->pk.name, t->pk.type, &e->pk);
        if (t->sk.name && e->sk.text) key(f, "sk", t->sk.name, t->sk.type, &e->sk);
        fprintf(f, "      },\n");
        for (size_t k = 0; k < e->nkeys; k++)
            if (e->keys[k].index) index_entry(f, e, &e->keys[k]);
        fprintf(f, "    },\n  }, { client, table });\n}\n");
        written++;
    }
    fprintf(f, "\nexport const entities = {");
    size_t n = 0;
    for (size_t i = 0; i < m->nentities; i++) {
        const m_entity *e = &m->entities[i];
        if (!js_exports_entity(e)) continue;
        fprintf(f, "%s ", n++ ? "," : "");
        model_write_quoted(f, e->name);
        fprintf(f, ": ");
        js_ident(f, e->name);
    }
    fprintf(f, "%s};\n", written ? " " : "");
    return 0;
}
