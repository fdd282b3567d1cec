/* print.c — a parsed CQL statement written back as canonical CQL: keywords in upper case,
 * one space between tokens, names quoted only when they must be (not lower-case words, or
 * keywords), strings in '...', shorthand forms spelt out (c += 1 is c = c + 1). Parsing
 * the output gives a tree that prints the same; bind markers keep their order. It does
 * not pretty-print (one line per statement) and does not check the tree. */
#include <stdlib.h>
#include <string.h>

#include "cql/lexer.h"
#include "util/buf.h"

typedef struct out {
    buf b;
    int failed;
    int guard; /* printing a select clause's first selector: JSON and DISTINCT are quoted */
} out;

static void put(out *o, const char *s)
{
    if (!o->failed && buf_puts(&o->b, s)) o->failed = 1;
}

static void putn(out *o, const char *s, size_t n)
{
    if (!o->failed && buf_append(&o->b, s, n)) o->failed = 1;
}

/* A lower-case word, which the lexer reads back as the same word. */
static int lower_word(const char *s)
{
    if (!(s[0] >= 'a' && s[0] <= 'z')) return 0;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return 0;
    return strcmp(s, "true") != 0 && strcmp(s, "false") != 0;
}

/* A name bare when it reads back as itself: a lower-case word that is no reserved keyword
 * (the unreserved ones are names wherever a name can stand). */
static int bare_ok(const char *s)
{
    return lower_word(s) && !cql_is_reserved(s, strlen(s));
}

/* No keyword at all: a function's or a type's name, where some unreserved ones mean more. */
static int plain_word(const char *s)
{
    return lower_word(s) && cql_keyword(s, strlen(s)) == KW_NONE;
}

static void quoted(out *o, const char *s, char q)
{
    char qs[2] = {q, 0};
    put(o, qs);
    for (const char *c = s; *c; c++) {
        const char *e = strchr(c, q);
        if (e == NULL) {
            put(o, c);
            break;
        }
        putn(o, c, (size_t)(e - c) + 1);
        put(o, qs);
        c = e;
    }
    put(o, qs);
}

static void name(out *o, const char *s)
{
    if (bare_ok(s))
        put(o, s);
    else
        quoted(o, s, '"');
}

static void qname(out *o, const cql_qname *q)
{
    if (q->ks) {
        name(o, q->ks);
        put(o, ".");
    }
    name(o, q->name);
}

static void names(out *o, const char *const *n, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (i) put(o, ", ");
        name(o, n[i]);
    }
}

static void type(out *o, const cql_type_expr *t)
{
    static const char *const open[] = {"", "list<", "set<", "map<", "tuple<", "frozen<"};
    switch (t->kind) {
    case CQL_TE_NATIVE:
        put(o, t->name);
        return;
    case CQL_TE_UDT: {
        if (t->udt.ks) {
            name(o, t->udt.ks);
            put(o, ".");
        }
        /* a type's own name is no native type's (and not ttl, count, ...): key and the
         * basic unreserved keywords may stay bare */
        kw_id k = cql_keyword(t->udt.name, strlen(t->udt.name));
        int bare =
            plain_word(t->udt.name) ||
            (lower_word(t->udt.name) && k != KW_NONE && !cql_keyword_reserved(k) && k != KW_TTL &&
             k != KW_COUNT && k != KW_WRITETIME && k != KW_CAST && k != KW_JSON &&
             k != KW_DISTINCT && k != KW_ASCII && k != KW_BIGINT && k != KW_BLOB &&
             k != KW_BOOLEAN && k != KW_COUNTER && k != KW_DECIMAL && k != KW_DOUBLE &&
             k != KW_DURATION && k != KW_FLOAT && k != KW_INET && k != KW_INT && k != KW_SMALLINT &&
             k != KW_TEXT && k != KW_TIMESTAMP && k != KW_TINYINT && k != KW_UUID &&
             k != KW_VARCHAR && k != KW_VARINT && k != KW_TIMEUUID && k != KW_DATE && k != KW_TIME);
        if (bare)
            put(o, t->udt.name);
        else
            quoted(o, t->udt.name, '"');
        return;
    }
    case CQL_TE_CUSTOM:
        quoted(o, t->name, '\'');
        return;
    default:
        put(o, open[t->kind]);
        for (size_t i = 0; i < t->nargs; i++) {
            if (i) put(o, ", ");
            type(o, t->args[i]);
        }
        put(o, ">");
    }
}

static void expr(out *o, const cql_expr *e);

static void items(out *o, const cql_expr *e, size_t from)
{
    for (size_t i = from; i < e->nitems; i++) {
        if (i > from) put(o, ", ");
        expr(o, e->items[i]);
    }
}

/* A function's name bare when that reads back as the same call. */
static void function_name(out *o, const cql_expr *e)
{
    const char *n = e->fn.name;
    if (e->fn.ks) {
        name(o, e->fn.ks);
        put(o, ".");
    }
    kw_id k = cql_keyword(n, strlen(n));
    int bare = 0;
    if (k == KW_NONE || k == KW_TOKEN || k == KW_COUNT)
        bare = 1;
    else if (k == KW_TTL || k == KW_WRITETIME)
        bare = e->fn.ks == NULL && e->nitems == 1 &&
               (e->items[0]->kind == CQL_E_COLUMN || e->items[0]->kind == CQL_E_FIELD ||
                e->items[0]->kind == CQL_E_ELEMENT || e->items[0]->kind == CQL_E_SLICE);
    else if (!cql_keyword_reserved(k))
        bare = k != KW_CAST && k != KW_KEY && k != KW_JSON && k != KW_DISTINCT;
    int lower = 1;
    for (const char *c = n; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) lower = 0;
    if (bare && lower && n[0] >= 'a' && n[0] <= 'z')
        put(o, n);
    else
        quoted(o, n, '"');
}

static void expr(out *o, const cql_expr *e)
{
    switch (e->kind) {
    case CQL_E_STRING:
        quoted(o, e->text, '\'');
        return;
    case CQL_E_INTEGER:
    case CQL_E_FLOAT:
    case CQL_E_BOOLEAN:
    case CQL_E_DURATION:
    case CQL_E_UUID:
    case CQL_E_HEX:
    case CQL_E_WORD:
        put(o, e->text);
        return;
    case CQL_E_NAN:
        put(o, e->negative ? "-NaN" : "NaN");
        return;
    case CQL_E_INFINITY:
        put(o, e->negative ? "-Infinity" : "Infinity");
        return;
    case CQL_E_NULL:
        put(o, "NULL");
        return;
    case CQL_E_BIND:
        if (e->text) {
            put(o, ":");
            name(o, e->text);
        } else {
            put(o, "?");
        }
        return;
    case CQL_E_LIST:
        put(o, "[");
        items(o, e, 0);
        put(o, "]");
        return;
    case CQL_E_SET:
        put(o, "{");
        items(o, e, 0);
        put(o, "}");
        return;
    case CQL_E_MAP:
    case CQL_E_UDT:
        put(o, "{");
        for (size_t i = 0; e->kind == CQL_E_MAP ? i + 1 < e->nitems : i < e->nitems;
             i += e->kind == CQL_E_MAP ? 2 : 1) {
            if (i) put(o, ", ");
            if (e->kind == CQL_E_MAP) {
                expr(o, e->items[i]);
                put(o, ": ");
                expr(o, e->items[i + 1]);
            } else {
                name(o, e->fields[i]);
                put(o, ": ");
                expr(o, e->items[i]);
            }
        }
        put(o, "}");
        return;
    case CQL_E_TUPLE:
        put(o, "(");
        items(o, e, 0);
        put(o, ")");
        return;
    case CQL_E_FUNCTION:
        if (e->star) {
            put(o, "COUNT(*)");
            return;
        }
        function_name(o, e);
        put(o, "(");
        items(o, e, 0);
        put(o, ")");
        return;
    case CQL_E_CAST:
        put(o, "CAST(");
        expr(o, e->items[0]);
        put(o, " AS ");
        type(o, e->type);
        put(o, ")");
        return;
    case CQL_E_HINT:
        put(o, "(");
        type(o, e->type);
        put(o, ") ");
        expr(o, e->items[0]);
        return;
    case CQL_E_NEGATE:
        put(o, "- ");
        expr(o, e->items[0]);
        return;
    case CQL_E_BINARY: {
        char op[4] = {' ', e->op, ' ', 0};
        expr(o, e->items[0]);
        put(o, op);
        expr(o, e->items[1]);
        return;
    }
    case CQL_E_COLUMN:
        if (o->guard && (strcmp(e->text, "json") == 0 || strcmp(e->text, "distinct") == 0))
            quoted(o, e->text, '"');
        else
            name(o, e->text);
        o->guard = 0;
        return;
    case CQL_E_FIELD:
        expr(o, e->items[0]);
        put(o, ".");
        name(o, e->text);
        return;
    case CQL_E_ELEMENT:
    case CQL_E_SLICE:
        expr(o, e->items[0]);
        put(o, "[");
        if (e->items[1]) expr(o, e->items[1]);
        if (e->kind == CQL_E_SLICE) {
            put(o, e->items[1] ? " .." : "..");
            if (e->items[2]) {
                put(o, " ");
                expr(o, e->items[2]);
            }
        }
        put(o, "]");
        return;
    }
}

static const char *op_text(cql_op op)
{
    static const char *const t[] = {
        "=", "<", "<=", ">", ">=", "!=", "IN", "CONTAINS", "CONTAINS KEY", "LIKE", "IS NOT NULL"};
    return t[op];
}

static void relation(out *o, const cql_relation *r)
{
    switch (r->kind) {
    case CQL_REL_COLUMN:
        name(o, r->columns[0]);
        break;
    case CQL_REL_ELEMENT:
        name(o, r->columns[0]);
        put(o, "[");
        expr(o, r->key);
        put(o, "]");
        break;
    case CQL_REL_FIELD:
        name(o, r->columns[0]);
        put(o, ".");
        name(o, r->field);
        break;
    case CQL_REL_TOKEN:
        put(o, "TOKEN(");
        names(o, r->columns, r->ncolumns);
        put(o, ")");
        break;
    case CQL_REL_TUPLE:
        put(o, "(");
        names(o, r->columns, r->ncolumns);
        put(o, ")");
        break;
    }
    put(o, " ");
    put(o, op_text(r->op));
    if (r->op == CQL_OP_IS_NOT_NULL) return;
    put(o, " ");
    if (r->op == CQL_OP_IN && r->value == NULL) {
        put(o, "(");
        for (size_t i = 0; i < r->nvalues; i++) {
            if (i) put(o, ", ");
            expr(o, r->values[i]);
        }
        put(o, ")");
        return;
    }
    expr(o, r->value);
}

static void relations(out *o, const cql_relation *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i) put(o, " AND ");
        relation(o, &r[i]);
    }
}

static void where(out *o, const cql_where *w)
{
    if (w->n == 0) return;
    put(o, " WHERE ");
    relations(o, w->rels, w->n);
}

static void if_clause(out *o, int if_exists, const cql_relation *conds, size_t n)
{
    if (if_exists) put(o, " IF EXISTS");
    if (n) {
        put(o, " IF ");
        relations(o, conds, n);
    }
}

static void using(out *o, const cql_using *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        put(o, i ? " AND " : " USING ");
        put(o, u[i].ttl ? "TTL " : "TIMESTAMP ");
        expr(o, u[i].value);
    }
}

static void selectors(out *o, const cql_selector *s, size_t n)
{
    if (n == 0) put(o, "*");
    for (size_t i = 0; i < n; i++) {
        if (i) put(o, ", ");
        o->guard = i == 0;
        expr(o, s[i].expr);
        o->guard = 0;
        if (s[i].alias) {
            put(o, " AS ");
            name(o, s[i].alias);
        }
    }
}

static void props(out *o, const cql_props *p, int first)
{
    for (size_t i = 0; i < p->n; i++) {
        put(o, first && i == 0 ? " WITH " : " AND ");
        name(o, p->items[i].name);
        put(o, " = ");
        expr(o, p->items[i].value);
    }
}

static void table_opts(out *o, const cql_table_opts *t)
{
    if (t->norder) {
        put(o, " WITH CLUSTERING ORDER BY (");
        for (size_t i = 0; i < t->norder; i++) {
            if (i) put(o, ", ");
            name(o, t->clustering_order[i].column);
            put(o, t->clustering_order[i].desc ? " DESC" : " ASC");
        }
        put(o, ")");
    }
    props(o, &t->props, t->norder == 0);
}

static void pkey(out *o, const cql_pkey *pk)
{
    put(o, "PRIMARY KEY (");
    if (pk->npartition > 1) put(o, "(");
    names(o, pk->partition, pk->npartition);
    if (pk->npartition > 1) put(o, ")");
    for (size_t i = 0; i < pk->nclustering; i++) {
        put(o, ", ");
        name(o, pk->clustering[i]);
    }
    put(o, ")");
}

static void column_def(out *o, const cql_column_def *c)
{
    name(o, c->name);
    put(o, " ");
    type(o, c->type);
    if (c->is_static) put(o, " STATIC");
    if (c->primary_key) put(o, " PRIMARY KEY");
}

static void if_not_exists(out *o, const cql_stmt *s)
{
    if (s->if_not_exists) put(o, " IF NOT EXISTS");
}
static void if_exists(out *o, const cql_stmt *s)
{
    if (s->if_exists) put(o, " IF EXISTS");
}

static void stmt(out *o, const cql_stmt *s);

static void select_stmt(out *o, const cql_stmt *s)
{
    const cql_select *q = &s->u.select;
    put(o, "SELECT ");
    if (q->json) put(o, "JSON ");
    if (q->distinct) put(o, "DISTINCT ");
    selectors(o, q->sel, q->nsel);
    put(o, " FROM ");
    qname(o, &s->name);
    where(o, &q->where);
    for (size_t i = 0; i < q->ngroup; i++) {
        put(o, i ? ", " : " GROUP BY ");
        expr(o, q->group_by[i]);
    }
    for (size_t i = 0; i < q->norder; i++) {
        put(o, i ? ", " : " ORDER BY ");
        name(o, q->order[i].column);
        put(o, q->order[i].desc ? " DESC" : " ASC");
    }
    if (q->per_partition_limit) {
        put(o, " PER PARTITION LIMIT ");
        expr(o, q->per_partition_limit);
    }
    if (q->limit) {
        put(o, " LIMIT ");
        expr(o, q->limit);
    }
    if (q->allow_filtering) put(o, " ALLOW FILTERING");
}

static void assignment(out *o, const cql_assign *a)
{
    name(o, a->column);
    switch (a->kind) {
    case CQL_SET_VALUE:
        put(o, " = ");
        break;
    case CQL_SET_ADD:
    case CQL_SET_SUB:
        put(o, " = ");
        name(o, a->column);
        put(o, a->kind == CQL_SET_ADD ? " + " : " - ");
        break;
    case CQL_SET_PREPEND:
        put(o, " = ");
        expr(o, a->value);
        put(o, " + ");
        name(o, a->column);
        return;
    case CQL_SET_ELEMENT:
        put(o, "[");
        expr(o, a->key);
        put(o, "] = ");
        break;
    case CQL_SET_FIELD:
        put(o, ".");
        name(o, a->field);
        put(o, " = ");
        break;
    }
    expr(o, a->value);
}

static void dml(out *o, const cql_stmt *s)
{
    switch (s->kind) {
    case CQL_INSERT: {
        const cql_insert *in = &s->u.insert;
        put(o, "INSERT INTO ");
        qname(o, &s->name);
        if (in->json) {
            put(o, " JSON ");
            expr(o, in->json);
            if (in->default_given) put(o, in->default_unset ? " DEFAULT UNSET" : " DEFAULT NULL");
        } else {
            put(o, " (");
            names(o, in->columns, in->ncolumns);
            put(o, ") VALUES (");
            for (size_t i = 0; i < in->nvalues; i++) {
                if (i) put(o, ", ");
                expr(o, in->values[i]);
            }
            put(o, ")");
        }
        if_not_exists(o, s);
        using(o, in->using, in->nusing);
        return;
    }
    case CQL_UPDATE: {
        const cql_update *u = &s->u.update;
        put(o, "UPDATE ");
        qname(o, &s->name);
        using(o, u->using, u->nusing);
        for (size_t i = 0; i < u->nset; i++) {
            put(o, i ? ", " : " SET ");
            assignment(o, &u->set[i]);
        }
        where(o, &u->where);
        if_clause(o, s->if_exists, u->conds, u->nconds);
        return;
    }
    case CQL_DELETE: {
        const cql_delete *d = &s->u.del;
        put(o, "DELETE");
        for (size_t i = 0; i < d->ncols; i++) {
            put(o, i ? ", " : " ");
            name(o, d->cols[i].column);
            if (d->cols[i].key) {
                put(o, "[");
                expr(o, d->cols[i].key);
                put(o, "]");
            } else if (d->cols[i].field) {
                put(o, ".");
                name(o, d->cols[i].field);
            }
        }
        put(o, " FROM ");
        qname(o, &s->name);
        using(o, d->using, d->nusing);
        where(o, &d->where);
        if_clause(o, s->if_exists, d->conds, d->nconds);
        return;
    }
    case CQL_BATCH: {
        const cql_batch_stmt *b = &s->u.batch;
        put(o, b->type == 1   ? "BEGIN UNLOGGED BATCH"
               : b->type == 2 ? "BEGIN COUNTER BATCH"
                              : "BEGIN BATCH");
        using(o, b->using, b->nusing);
        for (size_t i = 0; i < b->nstmts; i++) {
            put(o, " ");
            stmt(o, b->stmts[i]);
            put(o, ";");
        }
        put(o, " APPLY BATCH");
        return;
    }
    default:
        return;
    }
}

static void alter_table(out *o, const cql_stmt *s)
{
    const cql_alter_table *a = &s->u.alter_table;
    put(o, "ALTER TABLE");
    if_exists(o, s);
    put(o, " ");
    qname(o, &s->name);
    switch (a->what) {
    case CQL_ALTER_TYPE_OF:
        put(o, " ALTER ");
        name(o, a->add[0].name);
        put(o, " TYPE ");
        type(o, a->add[0].type);
        return;
    case CQL_ALTER_ADD:
        put(o, a->if_column ? " ADD IF NOT EXISTS " : " ADD ");
        if (a->nadd > 1) put(o, "(");
        for (size_t i = 0; i < a->nadd; i++) {
            if (i) put(o, ", ");
            column_def(o, &a->add[i]);
        }
        if (a->nadd > 1) put(o, ")");
        return;
    case CQL_ALTER_DROP:
        put(o, a->if_column ? " DROP IF EXISTS " : " DROP ");
        if (a->nnames > 1) put(o, "(");
        names(o, a->names, a->nnames);
        if (a->nnames > 1) put(o, ")");
        if (a->timestamp) {
            put(o, " USING TIMESTAMP ");
            expr(o, a->timestamp);
        }
        return;
    case CQL_ALTER_RENAME:
        put(o, a->if_column ? " RENAME IF EXISTS " : " RENAME ");
        for (size_t i = 0; i < a->nnames; i++) {
            if (i) put(o, " AND ");
            name(o, a->names[i]);
            put(o, " TO ");
            name(o, a->to[i]);
        }
        return;
    case CQL_ALTER_WITH:
        props(o, &a->props, 1);
        return;
    case CQL_ALTER_DROP_COMPACT_STORAGE:
        put(o, " DROP COMPACT STORAGE");
        return;
    }
}

static void describe(out *o, const cql_stmt *s)
{
    static const char *const words[] = {[CQL_DESC_CLUSTER] = "CLUSTER",
                                        [CQL_DESC_SCHEMA] = "SCHEMA",
                                        [CQL_DESC_KEYSPACES] = "KEYSPACES",
                                        [CQL_DESC_KEYSPACE] = "KEYSPACE",
                                        [CQL_DESC_TABLES] = "TABLES",
                                        [CQL_DESC_TABLE] = "TABLE",
                                        [CQL_DESC_TYPES] = "TYPES",
                                        [CQL_DESC_TYPE] = "TYPE",
                                        [CQL_DESC_FUNCTIONS] = "FUNCTIONS",
                                        [CQL_DESC_FUNCTION] = "FUNCTION",
                                        [CQL_DESC_AGGREGATES] = "AGGREGATES",
                                        [CQL_DESC_AGGREGATE] = "AGGREGATE",
                                        [CQL_DESC_INDEX] = "INDEX",
                                        [CQL_DESC_VIEW] = "MATERIALIZED VIEW",
                                        [CQL_DESC_ANY] = NULL};
    const cql_describe *d = &s->u.describe;
    put(o, "DESCRIBE");
    if (d->full) put(o, " FULL");
    if (d->only) put(o, " ONLY");
    if (words[d->what]) {
        put(o, " ");
        put(o, words[d->what]);
    }
    if (s->name.name) {
        put(o, " ");
        qname(o, &s->name);
    }
    if (d->internals) put(o, " WITH INTERNALS");
}

static void ddl(out *o, const cql_stmt *s)
{
    switch (s->kind) {
    case CQL_DESCRIBE:
        describe(o, s);
        return;
    case CQL_USE:
        put(o, "USE ");
        name(o, s->name.name);
        return;
    case CQL_TRUNCATE:
        put(o, "TRUNCATE ");
        qname(o, &s->name);
        return;
    case CQL_CREATE_KEYSPACE:
    case CQL_ALTER_KEYSPACE:
        put(o, s->kind == CQL_CREATE_KEYSPACE ? "CREATE KEYSPACE" : "ALTER KEYSPACE");
        if_not_exists(o, s);
        if_exists(o, s);
        put(o, " ");
        name(o, s->name.name);
        props(o, &s->u.keyspace.props, 1);
        return;
    case CQL_DROP_KEYSPACE:
        put(o, "DROP KEYSPACE");
        if_exists(o, s);
        put(o, " ");
        name(o, s->name.name);
        return;
    case CQL_CREATE_TABLE: {
        const cql_create_table *t = &s->u.create_table;
        put(o, "CREATE TABLE");
        if_not_exists(o, s);
        put(o, " ");
        qname(o, &s->name);
        put(o, " (");
        for (size_t i = 0; i < t->ncols; i++) {
            if (i) put(o, ", ");
            column_def(o, &t->cols[i]);
        }
        if (t->has_pk) {
            if (t->ncols) put(o, ", ");
            pkey(o, &t->pk);
        }
        put(o, ")");
        table_opts(o, &t->opts);
        return;
    }
    case CQL_ALTER_TABLE:
        alter_table(o, s);
        return;
    case CQL_DROP_TABLE:
    case CQL_DROP_TYPE:
    case CQL_DROP_INDEX:
    case CQL_DROP_VIEW:
        put(o, s->kind == CQL_DROP_TABLE   ? "DROP TABLE"
               : s->kind == CQL_DROP_TYPE  ? "DROP TYPE"
               : s->kind == CQL_DROP_INDEX ? "DROP INDEX"
                                           : "DROP MATERIALIZED VIEW");
        if_exists(o, s);
        put(o, " ");
        qname(o, &s->name);
        return;
    case CQL_CREATE_TYPE: {
        const cql_create_type *t = &s->u.create_type;
        put(o, "CREATE TYPE");
        if_not_exists(o, s);
        put(o, " ");
        qname(o, &s->name);
        put(o, " (");
        for (size_t i = 0; i < t->nfields; i++) {
            if (i) put(o, ", ");
            name(o, t->fields[i]);
            put(o, " ");
            type(o, t->types[i]);
        }
        put(o, ")");
        return;
    }
    case CQL_ALTER_TYPE: {
        const cql_alter_type *a = &s->u.alter_type;
        put(o, "ALTER TYPE");
        if_exists(o, s);
        put(o, " ");
        qname(o, &s->name);
        if (a->what == CQL_ALTER_RENAME) {
            put(o, a->if_field ? " RENAME IF EXISTS " : " RENAME ");
            for (size_t i = 0; i < a->nfields; i++) {
                if (i) put(o, " AND ");
                name(o, a->fields[i]);
                put(o, " TO ");
                name(o, a->to[i]);
            }
            return;
        }
        put(o,
            a->what == CQL_ALTER_ADD ? (a->if_field ? " ADD IF NOT EXISTS " : " ADD ") : " ALTER ");
        name(o, a->fields[0]);
        put(o, a->what == CQL_ALTER_ADD ? " " : " TYPE ");
        type(o, a->type);
        return;
    }
    case CQL_CREATE_INDEX: {
        static const char *const kinds[] = {"", "KEYS(", "VALUES(", "ENTRIES(", "FULL("};
        const cql_create_index *c = &s->u.create_index;
        put(o, c->custom ? "CREATE CUSTOM INDEX" : "CREATE INDEX");
        if_not_exists(o, s);
        if (c->index) {
            put(o, " ");
            name(o, c->index);
        }
        put(o, " ON ");
        qname(o, &s->name);
        put(o, " (");
        for (size_t i = 0; i < c->ntargets; i++) {
            if (i) put(o, ", ");
            put(o, kinds[c->targets[i].kind]);
            name(o, c->targets[i].column);
            if (c->targets[i].kind != CQL_INDEX_SIMPLE) put(o, ")");
        }
        put(o, ")");
        if (c->using_class) {
            put(o, " USING ");
            quoted(o, c->using_class, '\'');
        }
        props(o, &c->props, 1);
        return;
    }
    case CQL_CREATE_VIEW: {
        const cql_create_view *v = &s->u.create_view;
        put(o, "CREATE MATERIALIZED VIEW");
        if_not_exists(o, s);
        put(o, " ");
        qname(o, &s->name);
        put(o, " AS SELECT ");
        selectors(o, v->sel, v->nsel);
        put(o, " FROM ");
        qname(o, &v->base);
        where(o, &v->where);
        put(o, " ");
        pkey(o, &v->pk);
        table_opts(o, &v->opts);
        return;
    }
    case CQL_ALTER_VIEW:
        put(o, "ALTER MATERIALIZED VIEW");
        if_exists(o, s);
        put(o, " ");
        qname(o, &s->name);
        props(o, &s->u.alter_view.props, 1);
        return;
    default:
        return;
    }
}

static void stmt(out *o, const cql_stmt *s)
{
    switch (s->kind) {
    case CQL_SELECT:
        select_stmt(o, s);
        return;
    case CQL_INSERT:
    case CQL_UPDATE:
    case CQL_DELETE:
    case CQL_BATCH:
        dml(o, s);
        return;
    default:
        ddl(o, s);
    }
}

static char *finish(out *o)
{
    put(o, "");
    if (o->failed) {
        buf_free(&o->b);
        return NULL;
    }
    size_t len;
    char *s = buf_detach(&o->b, &len);
    if (s == NULL) s = strdup("");
    return s;
}

char *cql_print(const cql_stmt *s)
{
    out o = {{0}, 0, 0};
    buf_init(&o.b, 0);
    stmt(&o, s);
    return finish(&o);
}

int cql_print_name(buf *b, const char *s)
{
    out o = {*b, 0, 0};
    name(&o, s);
    *b = o.b;
    return o.failed ? -1 : 0;
}

char *cql_print_expr(const cql_expr *e)
{
    out o = {{0}, 0, 0};
    buf_init(&o.b, 0);
    expr(&o, e);
    return finish(&o);
}
