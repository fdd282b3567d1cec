/* export_dynamodb_toolbox.c — `quarry model export --format dynamodb-toolbox`: an ES module
 * with a dynamodb-toolbox Table per DynamoDB table of the model (its GSIs, multi-attribute
 * ones included, and LSIs) and an Entity per entity, its item schema the model's attributes
 * and its keys the model's templates as linked attributes ("CUSTOMER#{customerId}" as
 * `CUSTOMER#${customerId}`, zero-padded attributes padded). CQL tables and their entities are
 * left out. It writes code; whether the model is good is check.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker/export_js.h"
#include "checker/output.h"

static const char *key_type(char t)
{
    return t == 'N' ? "number" : t == 'B' ? "binary" : "string";
}

static const char *attr_schema(const m_attr *a)
{
    switch (a->type) {
    case MT_STRING:
        return "string()";
    case MT_NUMBER:
        return "number()";
    case MT_BOOLEAN:
        return "boolean()";
    case MT_BINARY:
        return "binary()";
    default:
        return "any()"; /* maps, lists and sets: their content is not modelled */
    }
}

/* True when the attribute holding t is a itself: the template is "{a}" alone. */
static const m_attr *direct(const m_template *t)
{
    return t->nseg == 1 && t->seg[0].is_var ? t->seg[0].attr : NULL;
}

/* `i["a"]`, padded to its width when the attribute is zero-padded. */
static void var_value(FILE *f, const m_seg *s)
{
    if (s->attr && s->attr->format == MF_PADDED && s->attr->width > 0) {
        fprintf(f, "String(i[");
        model_write_quoted(f, s->text);
        fprintf(f, "]).padStart(%d, \"0\")", s->attr->width);
        return;
    }
    fprintf(f, "i[");
    model_write_quoted(f, s->text);
    fprintf(f, "]");
}

/* The template's value for the item i: a template literal, or for a number key attribute
 * its one variable as a number. */
static void template_expr(FILE *f, const m_template *t, char type)
{
    if (type == 'N') {
        fprintf(f, "Number(");
        var_value(f, &t->seg[0]);
        fprintf(f, ")");
        return;
    }
    fputc('`', f);
    for (size_t k = 0; k < t->nseg; k++) {
        if (t->seg[k].is_var) {
            fprintf(f, "${");
            var_value(f, &t->seg[k]);
            fprintf(f, "}");
            continue;
        }
        for (const char *c = t->seg[k].text; *c; c++) {
            if (*c == '`' || *c == '\\' || (*c == '$' && c[1] == '{')) fputc('\\', f);
            fputc(*c, f);
        }
    }
    fputc('`', f);
}

/* A sparse index's condition on the item i: its `when` values hold. */
static void when_expr(FILE *f, const m_entkey *k)
{
    for (size_t w = 0; w < k->nwhen; w++) {
        fprintf(f, "%sString(i[", w ? " && " : "");
        model_write_quoted(f, k->when[w].name);
        fprintf(f, "]) === ");
        model_write_quoted(f, k->when[w].value ? k->when[w].value : "");
    }
}

/* The attributes an index key's template reads, then those its condition reads. */
static void reads(FILE *f, const m_template *t, const m_entkey *k)
{
    fprintf(f, "[");
    size_t n = 0;
    for (size_t s = 0; s < t->nseg; s++)
        if (t->seg[s].is_var) {
            if (n++) fprintf(f, ", ");
            model_write_quoted(f, t->seg[s].text);
        }
    fprintf(f, "], [");
    for (size_t w = 0; w < k->nwhen; w++) {
        if (w) fprintf(f, ", ");
        model_write_quoted(f, k->when[w].name);
    }
    fprintf(f, "]");
}

/* The key attributes of one entity, each written once: primary ones as linked keys, index
 * ones as linked attributes written on put and on update. */
typedef struct written {
    const char *name[2 + 2 * QR_MODEL_MAX_INDEXES];
    const m_template *tpl[2 + 2 * QR_MODEL_MAX_INDEXES];
    size_t n;
} written;

/* 0 when attribute name, holding template t, can be written (once); 1 when it is already;
 * -1 with err set when the entity cannot say it. */
static int claim(written *w, const m_entity *e, const char *name, const m_template *t, char type,
                 qr_err *err)
{
    for (size_t i = 0; i < w->n; i++) {
        if (strcmp(w->name[i], name)) continue;
        if (strcmp(w->tpl[i]->text, t->text) == 0) return 1;
        return err_validation(err,
                              "entity %s writes key attribute %s as both \"%s\" and \"%s\", "
                              "which one dynamodb-toolbox attribute cannot hold",
                              e->name, name, w->tpl[i]->text, t->text);
    }
    const m_attr *own = model_entity_attr(e, name);
    if (own && direct(t) != own)
        return err_validation(err,
                              "attribute %s of entity %s is also the key attribute that holds "
                              "\"%s\": dynamodb-toolbox cannot store both under one name",
                              name, e->name, t->text);
    if (own && (type == 'N') != (own->type == MT_NUMBER))
        return err_validation(err,
                              "attribute %s of entity %s is a %s, but the key attribute of that "
                              "name is a %s: dynamodb-toolbox stores one type under one name",
                              name, e->name, model_type_name(own->type), key_type(type));
    if (type == 'B' && !own)
        return err_validation(err,
                              "key attribute %s of entity %s is binary: dynamodb-toolbox cannot "
                              "build it from the template \"%s\"",
                              name, e->name, t->text);
    w->name[w->n] = name;
    w->tpl[w->n++] = t;
    return own ? 1 : 0; /* an attribute that is its own key needs nothing more */
}

static int primary_key(FILE *f, written *w, const m_entity *e, const m_keyattr *k,
                       const m_template *t, qr_err *err)
{
    int rc = claim(w, e, k->name, t, k->type, err);
    if (rc) return rc < 0 ? -1 : 0;
    fprintf(f, "        ");
    model_write_quoted(f, k->name);
    fprintf(f, ": %s().key().hidden().link((i) => ", key_type(k->type));
    template_expr(f, t, k->type);
    fprintf(f, "),\n");
    return 0;
}

static int index_key(FILE *f, written *w, const m_entity *e, const m_entkey *ek, const m_keyattr *k,
                     const m_template *t, qr_err *err)
{
    int rc = claim(w, e, k->name, t, k->type, err);
    if (rc) return rc < 0 ? -1 : 0;
    fprintf(f, "        ");
    model_write_quoted(f, k->name);
    fprintf(f, ": %s()\n          .hidden()\n          .optional()\n          .putLink((i) => ",
            key_type(k->type));
    if (ek->nwhen) {
        fprintf(f, "(");
        when_expr(f, ek);
        fprintf(f, " ? ");
        template_expr(f, t, k->type);
        fprintf(f, " : undefined)");
    } else {
        template_expr(f, t, k->type);
    }
    fprintf(f, ")\n          .updateLink((u) =>\n            onUpdate(u, ");
    reads(f, t, ek);
    if (ek->nwhen) {
        fprintf(f, ", (i) => ");
        when_expr(f, ek);
    } else {
        fprintf(f, ", () => true");
    }
    fprintf(f, ", (i) => ");
    template_expr(f, t, k->type);
    fprintf(f, "),\n          ),\n");
    return 0;
}

/* True when the sparse index keys of e read a (so a may be absent). */
static int only_sparse(const m_entity *e, const m_attr *a)
{
    if (js_in_template(&e->pk, a) || js_in_template(&e->sk, a)) return 0;
    int sparse = 0;
    for (size_t k = 0; k < e->nkeys; k++) {
        const m_entkey *ek = &e->keys[k];
        if (!js_in_template(&ek->pk, a) && !js_in_template(&ek->sk, a)) continue;
        if (ek->nwhen == 0) return 0;
        sparse = 1;
    }
    return sparse;
}

/* Whether a is a part of a multi-attribute key of e's table (then it must be there to
 * write the index, and it is one of the item's own attributes). */
static int key_part(const m_entity *e, const m_attr *a)
{
    const m_table *t = e->table;
    for (size_t i = 0; i < t->nidx; i++) {
        for (size_t p = 0; p < t->idx[i].npk_parts; p++)
            if (strcmp(t->idx[i].pk_parts[p].name, a->name) == 0) return 1;
        for (size_t p = 0; p < t->idx[i].nsk_parts; p++)
            if (strcmp(t->idx[i].sk_parts[p].name, a->name) == 0) return 1;
    }
    return 0;
}

static void attribute(FILE *f, const m_entity *e, const m_attr *a)
{
    fprintf(f, "      ");
    model_write_quoted(f, a->name);
    fprintf(f, ": ");
    if (a->format == MF_ENUM && a->nvalues && a->type == MT_STRING) {
        fprintf(f, "string().enum(");
        for (size_t i = 0; i < a->nvalues; i++) {
            if (i) fprintf(f, ", ");
            model_write_quoted(f, a->values[i]);
        }
        fprintf(f, ")");
    } else {
        fprintf(f, "%s", attr_schema(a));
    }
    if (js_in_template(&e->pk, a) || js_in_template(&e->sk, a))
        fprintf(f, ".key()");
    else if ((!js_in_any_key(e, a) && !key_part(e, a)) || only_sparse(e, a))
        fprintf(f, ".optional()");
    fprintf(f, ",\n");
}

static int entity(FILE *f, const m_entity *e, qr_err *err)
{
    const m_table *t = e->table;
    for (size_t i = 0; i < e->nattrs; i++)
        if (strcmp(e->attrs[i].name, "entity") == 0 || strcmp(e->attrs[i].name, "_et") == 0)
            return err_validation(err,
                                  "attribute %s of entity %s is the name dynamodb-toolbox keeps "
                                  "for its entity attribute",
                                  e->attrs[i].name, e->name);
    fprintf(f, "  ");
    model_write_quoted(f, e->name);
    fprintf(f, ": (table) =>\n    new Entity({\n      name: ");
    model_write_quoted(f, e->name);
    fprintf(f, ",\n      table,\n      timestamps: false,\n      schema: item({\n");
    for (size_t i = 0; i < e->nattrs; i++) {
        fprintf(f, "  ");
        attribute(f, e, &e->attrs[i]);
    }
    fprintf(f, "      }).and({\n");
    written w = {0};
    if (primary_key(f, &w, e, &t->pk, &e->pk, err)) return -1;
    if (t->sk.name && e->sk.text && primary_key(f, &w, e, &t->sk, &e->sk, err)) return -1;
    for (size_t k = 0; k < e->nkeys; k++) {
        const m_entkey *ek = &e->keys[k];
        const m_index *ix = ek->index;
        if (ix == NULL) continue;
        if (!ix->local && ix->npk_parts == 0 && ek->pk.text &&
            index_key(f, &w, e, ek, &ix->pk, &ek->pk, err))
            return -1;
        if (ix->sk.name && ix->nsk_parts == 0 && ek->sk.text &&
            index_key(f, &w, e, ek, &ix->sk, &ek->sk, err))
            return -1;
    }
    fprintf(f, "      }),\n    }),\n");
    return 0;
}

static void key_def(FILE *f, const char *field, const m_keyattr *k)
{
    fprintf(f, "%s: { name: ", field);
    model_write_quoted(f, k->name);
    fprintf(f, ", type: \"%s\" }", key_type(k->type));
}

static void key_parts(FILE *f, const char *field, const m_keyattr *parts, size_t n)
{
    fprintf(f, "%s: [", field);
    for (size_t p = 0; p < n; p++) {
        fprintf(f, "%s{ name: ", p ? ", " : "");
        model_write_quoted(f, parts[p].name);
        fprintf(f, ", type: \"%s\" }", key_type(parts[p].type));
    }
    fprintf(f, "]");
}

static void table(FILE *f, const m_table *t)
{
    fprintf(f, "  ");
    model_write_quoted(f, t->name);
    fprintf(f, ": (documentClient, name = ");
    model_write_quoted(f, t->name);
    fprintf(f, ") =>\n    new Table({\n      documentClient,\n      name,\n      ");
    key_def(f, "partitionKey", &t->pk);
    fprintf(f, ",\n");
    if (t->sk.name) {
        fprintf(f, "      ");
        key_def(f, "sortKey", &t->sk);
        fprintf(f, ",\n");
    }
    if (t->nidx) fprintf(f, "      indexes: {\n");
    for (size_t i = 0; i < t->nidx; i++) {
        const m_index *ix = &t->idx[i];
        fprintf(f, "        ");
        model_write_quoted(f, ix->name);
        fprintf(f, ": { type: \"%s\"", ix->local ? "local" : "global");
        if (!ix->local) {
            fprintf(f, ", ");
            if (ix->npk_parts)
                key_parts(f, "partitionKeys", ix->pk_parts, ix->npk_parts);
            else
                key_def(f, "partitionKey", &ix->pk);
        }
        if (ix->nsk_parts) {
            fprintf(f, ", ");
            key_parts(f, "sortKeys", ix->sk_parts, ix->nsk_parts);
        } else if (ix->sk.name) {
            fprintf(f, ", ");
            key_def(f, "sortKey", &ix->sk);
        }
        fprintf(f, " },\n");
    }
    if (t->nidx) fprintf(f, "      },\n");
    fprintf(f, "    }),\n");
}

static int module(const qr_model *m, FILE *f, qr_err *err)
{
    const char *service = m->name ? m->name : "quarry";
    fprintf(f, "// Generated by quarry model export from model %s: dynamodb-toolbox tables and\n",
            service);
    fprintf(
        f, "// entities. tables[NAME](documentClient, name?) makes a Table, entities[NAME](table)\n"
           "// an Entity on the table tableOf[NAME] names. Key attributes are linked to the\n"
           "// model's templates and hidden when read; an index key is written on put (a sparse\n"
           "// one while its condition holds) and on update when the update gives every\n"
           "// attribute it reads. A KEYS_ONLY or INCLUDE index lacks the entity attribute:\n"
           "// query it without .entities() and read whole items by their keys.\n");
    fprintf(f, "import { Table, Entity, item, string, number, boolean, binary, any, $remove } "
               "from \"dynamodb-toolbox\";\n\n");
    fprintf(f, "// An index key on update: removed when the update takes the item out of a sparse "
               "index\n// (it gives the attributes the condition reads, and they fail it), its "
               "template's\n// value when it gives every attribute the key reads, else left as "
               "stored.\n");
    fprintf(f, "const onUpdate = (i, reads, conditionReads, holds, make) => {\n"
               "  const given = (names) => names.every((n) => i[n] !== undefined);\n"
               "  if (conditionReads.length && given(conditionReads) && !holds(i)) return "
               "$remove();\n"
               "  return given(reads) && given(conditionReads) ? make(i) : undefined;\n};\n\n");
    fprintf(f, "export const tables = {\n");
    for (size_t ti = 0; ti < m->ntables; ti++)
        if (m->tables[ti].cql == NULL) table(f, &m->tables[ti]);
    fprintf(f, "};\n\nexport const entities = {\n");
    for (size_t i = 0; i < m->nentities; i++)
        if (js_exports_entity(&m->entities[i]) && entity(f, &m->entities[i], err)) return -1;
    fprintf(f, "};\n\nexport const tableOf = {");
    size_t n = 0;
    for (size_t i = 0; i < m->nentities; i++) {
        const m_entity *e = &m->entities[i];
        if (!js_exports_entity(e)) continue;
        fprintf(f, "%s\n  ", n++ ? "," : "");
        model_write_quoted(f, e->name);
        fprintf(f, ": ");
        model_write_quoted(f, e->table->name);
    }
    fprintf(f, "%s};\n", n ? ",\n" : "");
    return 0;
}

/* Written to memory first, so a model the library cannot express writes nothing. */
int model_export_dynamodb_toolbox(const qr_model *m, FILE *f, qr_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    int rc = module(m, mem, err);
    if (fclose(mem) != 0 && rc == 0) rc = err_set(err, QR_E_INTERNAL, "out of memory");
    if (rc == 0 && fwrite(text, 1, len, f) != len)
        rc = err_set(err, QR_E_INTERNAL, "cannot write the module");
    free(text);
    return rc;
}
