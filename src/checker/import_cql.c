/* import_cql.c — `quarry model import --cql`: a CQL schema (CREATE KEYSPACE / TABLE / TYPE /
 * INDEX / MATERIALIZED VIEW, ALTER, DROP, USE) and the application's queries (SELECT, INSERT,
 * UPDATE, DELETE, BATCH), parsed by src/cql's parser, written as a model file: each table a
 * model table with one entity whose key templates are its partition and clustering columns,
 * each query an access pattern keeping its statement. It refuses what Cassandra refuses when
 * the model could not express it (unknown tables and columns, INSERTs missing key columns,
 * counters set or mixed); judging the design is check.c's job, not this file's. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "checker/output.h"
#include "cql/ast.h"
#include "util/readfile.h"

#define MAX_CQL_FILE ((size_t)16 << 20)
#define NAMELEN 160

typedef struct column {
    const char *name;
    char type[512]; /* the CQL type as written, canonical */
    const cql_type_expr *te;
    int is_static;
} column;

/* key: value comments written just before a statement */
typedef struct notes {
    char count[32], item_size[32], growth[32];                                /* tables */
    char name[NAMELEN], rps[32], latency[32], result_size[32], consistent[8]; /* queries */
    char sentence[400];
} notes;

typedef struct ctable {
    char ks[NAMELEN], name[NAMELEN];
    char model_name[2 * NAMELEN + 2], entity[2 * NAMELEN + 2];
    column *cols;
    size_t ncols, capcols;
    const char **part;
    size_t npart;
    const char **clus;
    int *desc;
    size_t nclus;
    const char *indexes[64];
    char index_names[64][NAMELEN]; /* as named, else Cassandra's TABLE_COLUMN_idx */
    size_t nindexes;
    double ttl_seconds;
    int view, dropped;
    char source[600];
    notes nt;
} ctable;

/* A user-defined type: its fields as the schema left them (CREATE TYPE, then ALTER TYPE). */
typedef struct utype {
    char ks[NAMELEN], name[NAMELEN];
    const char **fields; /* borrowed from the parse */
    const cql_type_expr **types;
    size_t n, cap;
    int dropped;
} utype;

typedef struct importer {
    const char *file; /* the file being read, for messages */
    const char *text; /* its text */
    size_t len;
    qr_err *err;
    ctable *tables;
    size_t ntables, cap;
    utype *types;
    size_t ntypes, captypes;
    char keyspace[NAMELEN]; /* set by USE */
    char first_ks[NAMELEN]; /* the first keyspace named, for the model's name */
    int nks;
    char *names[4096]; /* pattern names given so far */
    size_t nnames;
    FILE *out;            /* access patterns are written here as they are read */
    const cql_stmt *stmt; /* the statement being read, for positions */
    size_t prev_end;      /* end of the previous statement, where its comments start */
    const char *lc_text;  /* line_col's last position: in this text, */
    size_t lc_off;        /* at this offset, */
    int lc_line, lc_col;  /* this line and column */
} importer;

/* ---- positions and errors ---- */

/* Line and column (1-based) of byte off, counted on from the last position asked for when
 * it is further on, so that a file's positions cost one pass over it. */
static void line_col(importer *im, size_t off, int *line, int *col)
{
    if (im->lc_text != im->text || off < im->lc_off) {
        im->lc_text = im->text;
        im->lc_off = 0;
        im->lc_line = im->lc_col = 1;
    }
    for (size_t i = im->lc_off; i < off && i < im->len; i++) {
        if (im->text[i] == '\n') {
            im->lc_line++;
            im->lc_col = 1;
        } else {
            im->lc_col++;
        }
    }
    im->lc_off = off < im->len ? off : im->len;
    *line = im->lc_line;
    *col = im->lc_col;
}

/* The offset of identifier word in the current statement, outside string literals; the
 * statement's start when it is not found. */
static size_t word_at(const importer *im, const char *word)
{
    const cql_stmt *s = im->stmt;
    if (s == NULL) return 0;
    size_t wl = strlen(word), end = s->offset + s->length;
    for (size_t i = s->offset; i + wl <= end && i < im->len; i++) {
        char c = im->text[i];
        if (c == '\'') { /* skip a string literal ('' inside it stays inside) */
            for (i++;
                 i < end && !(im->text[i] == '\'' && (i + 1 >= end || im->text[i + 1] != '\''));
                 i++)
                if (im->text[i] == '\'') i++;
            continue;
        }
        int start =
            i == s->offset || !(isalnum((unsigned char)im->text[i - 1]) || im->text[i - 1] == '_');
        if (start && strncasecmp(im->text + i, word, wl) == 0 &&
            (i + wl == end ||
             !(isalnum((unsigned char)im->text[i + wl]) || im->text[i + wl] == '_')))
            return i;
    }
    return s->offset;
}

static int fail_at(importer *im, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(importer *im, size_t off, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line, col;
    line_col(im, off, &line, &col);
    return err_validation(im->err, "%s:%d:%d: %s", im->file, line, col, msg);
}

#define FAIL_WORD(im, w, ...) fail_at(im, word_at(im, w), __VA_ARGS__)
#define FAIL_STMT(im, ...) fail_at(im, (im)->stmt->offset, __VA_ARGS__)

static void source_of(importer *im, size_t off, char *buf, size_t size)
{
    int line, col;
    line_col(im, off, &line, &col);
    snprintf(buf, size, "%s:%d:%d", im->file, line, col);
}

static char *read_all(const char *path, size_t *len, qr_err *err)
{
    char *text;
    if (readfile_path(path, MAX_CQL_FILE, &text, len) == 0) return text;
    if (errno == EFBIG)
        err_validation(err, "%s: file is larger than 16 MB", path);
    else if (errno == ENOMEM)
        err_set(err, QR_E_INTERNAL, "out of memory reading %s", path);
    else
        err_validation(err, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
}

/* CQL text is UTF-8 without NUL bytes: anything else is refused at its position. */
static int check_text(importer *im)
{
    const unsigned char *t = (const unsigned char *)im->text;
    for (size_t i = 0; i < im->len;) {
        unsigned char c = t[i];
        size_t n = c < 0x80             ? 1
                   : (c & 0xe0) == 0xc0 ? 2
                   : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4
                                        : 0;
        int ok = c != 0 && n && i + n <= im->len;
        for (size_t k = 1; ok && k < n; k++)
            ok = (t[i + k] & 0xc0) == 0x80;
        if (ok && n > 1) {
            unsigned long cp = c & (0x7f >> n);
            for (size_t k = 1; k < n; k++)
                cp = cp << 6 | (t[i + k] & 0x3f);
            static const unsigned long least[] = {0, 0, 0x80, 0x800, 0x10000};
            ok = cp >= least[n] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
        }
        if (!ok)
            return fail_at(im, i, c == 0 ? "a NUL byte in CQL text" : "text that is not UTF-8");
        i += n;
    }
    return 0;
}

/* Parses a script; a syntax error becomes "FILE:LINE:COL: message" (the parser says
 * "line L:C", C counted from 0 as Cassandra counts it). */
static int parse_file(importer *im, cql_parsed *out)
{
    if (check_text(im)) return -1;
    cql_parse_error pe = {0};
    if (cql_parse_script(im->text, im->len, out, &pe) == 0) return 0;
    int line = 0, col = 0, used = 0;
    if (sscanf(pe.msg, "line %d:%d %n", &line, &col, &used) == 2 && used > 0)
        return err_validation(im->err, "%s:%d:%d: %s", im->file, line, col + 1, pe.msg + used);
    return err_validation(im->err, "%s: %s", im->file, pe.msg);
}

/* ---- comments: key: value notes and the sentence ---- */

static void copy_trimmed(char *dst, size_t size, const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    snprintf(dst, size, "%.*s", (int)n, s);
}

/* Reads the comment lines between the previous statement and this one. */
static int read_notes(importer *im, size_t from, size_t to, notes *nt, int queries)
{
    memset(nt, 0, sizeof *nt);
    size_t i = from;
    while (from > 0 && i < to && im->text[i] != '\n')
        i++; /* the rest of the previous statement's line is its own */
    while (i < to) {
        size_t eol = i;
        while (eol < to && im->text[eol] != '\n')
            eol++;
        const char *l = im->text + i;
        size_t n = eol - i;
        while (n && isspace((unsigned char)*l))
            l++, n--;
        if (n >= 2 && ((l[0] == '-' && l[1] == '-') || (l[0] == '/' && l[1] == '/'))) {
            l += 2, n -= 2;
            const char *colon = memchr(l, ':', n);
            char key[40] = "";
            if (colon) copy_trimmed(key, sizeof key, l, (size_t)(colon - l));
            struct {
                const char *key;
                char *dst;
                size_t size;
                int unit; /* model_quantity's unit kind, 0 for text, 'b' for a boolean */
                int for_queries;
            } known[] = {
                {"count", nt->count, sizeof nt->count, 'c', 0},
                {"item_size", nt->item_size, sizeof nt->item_size, 's', 0},
                {"growth_per_day", nt->growth, sizeof nt->growth, 'c', 0},
                {"name", nt->name, sizeof nt->name, 0, 1},
                {"rps", nt->rps, sizeof nt->rps, 'c', 1},
                {"latency", nt->latency, sizeof nt->latency, 't', 1},
                {"result_size", nt->result_size, sizeof nt->result_size, 'c', 1},
                {"consistent", nt->consistent, sizeof nt->consistent, 'b', 1},
            };
            size_t k = 0, nk = sizeof known / sizeof known[0];
            while (k < nk && !(known[k].for_queries == queries && strcmp(known[k].key, key) == 0))
                k++;
            if (k < nk) {
                copy_trimmed(known[k].dst, known[k].size, colon + 1, n - (size_t)(colon + 1 - l));
                double v;
                char msg[300];
                if (known[k].unit == 'b' && strcmp(known[k].dst, "true") &&
                    strcmp(known[k].dst, "false"))
                    return fail_at(im, (size_t)(colon + 1 - im->text),
                                   "'%s' must be true or false, not '%s'", key, known[k].dst);
                if (known[k].unit && known[k].unit != 'b' &&
                    model_quantity(known[k].dst, known[k].unit, &v, msg, sizeof msg))
                    return fail_at(im, (size_t)(colon + 1 - im->text), "%s: %s", key, msg);
                if (known[k].unit == 's' && v > QR_MODEL_CQL_MAX_ROW)
                    return fail_at(im, (size_t)(colon + 1 - im->text),
                                   "item_size %s exceeds Cassandra's largest write by default, "
                                   "16 MB",
                                   known[k].dst);
                if (known[k].unit == 0 && known[k].dst[0] == '\0')
                    return fail_at(im, (size_t)(colon + 1 - im->text), "'%s' needs a value", key);
            } else if (queries) {
                char part[300];
                copy_trimmed(part, sizeof part, l, n);
                size_t sl = strlen(nt->sentence);
                if (part[0] && sl + strlen(part) + 2 < sizeof nt->sentence)
                    snprintf(nt->sentence + sl, sizeof nt->sentence - sl, "%s%s", sl ? " " : "",
                             part);
            }
        }
        i = eol + 1;
    }
    return 0;
}

/* ---- types ---- */

static void type_text(const cql_type_expr *t, char *buf, size_t size)
{
    static const char *const open[] = {"", "list<", "set<", "map<", "tuple<", "frozen<", "", ""};
    size_t o;
    switch (t->kind) {
    case CQL_TE_NATIVE:
        snprintf(buf, size, "%s", t->name);
        return;
    case CQL_TE_UDT:
        o = t->udt.ks ? model_cql_name(buf, size, t->udt.ks) : 0;
        if (t->udt.ks && o + 1 < size) buf[o++] = '.';
        if (o < size) model_cql_name(buf + o, size - o, t->udt.name);
        return;
    case CQL_TE_CUSTOM:
        snprintf(buf, size, "'%s'", t->name);
        return;
    default:
        o = (size_t)snprintf(buf, size, "%s", open[t->kind]);
        for (size_t i = 0; i < t->nargs && o < size; i++) {
            char arg[512];
            type_text(t->args[i], arg, sizeof arg);
            o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", arg);
        }
        if (o < size) snprintf(buf + o, size - o, ">");
    }
}

static const cql_type_expr *unfrozen(const cql_type_expr *t)
{
    while (t->kind == CQL_TE_FROZEN && t->nargs == 1)
        t = t->args[0];
    return t;
}

static int native_is(const cql_type_expr *t, const char *name)
{
    t = unfrozen(t);
    return t->kind == CQL_TE_NATIVE && strcmp(t->name, name) == 0;
}

static int is_number_type(const cql_type_expr *t)
{
    static const char *const nums[] = {"int",   "bigint", "smallint", "tinyint", "varint",
                                       "float", "double", "decimal",  "counter", NULL};
    for (const char *const *n = nums; *n; n++)
        if (native_is(t, *n)) return 1;
    return 0;
}

/* The model's type or format for a column: "format: uuid", "type: number", ... A key
 * column named like a time bucket (month, year, day, date) takes that format. */
static const char *model_type(const column *c, int key)
{
    const cql_type_expr *t = unfrozen(c->te);
    if (key && !native_is(t, "timestamp") && !native_is(t, "timeuuid")) {
        if (strcmp(c->name, "month") == 0) return "format: month";
        if (strcmp(c->name, "year") == 0) return "format: year";
        if (strcmp(c->name, "day") == 0 || strcmp(c->name, "date") == 0 || native_is(t, "date"))
            return "format: date";
    }
    switch (t->kind) {
    case CQL_TE_LIST:
    case CQL_TE_TUPLE:
        return "type: list";
    case CQL_TE_SET:
        return "type: set";
    case CQL_TE_MAP:
    case CQL_TE_UDT:
        return "type: map";
    default:
        break;
    }
    if (native_is(t, "uuid")) return "format: uuid";
    if (native_is(t, "timeuuid")) return "format: ulid";
    if (native_is(t, "timestamp")) return "format: timestamp";
    if (native_is(t, "date")) return "format: date";
    if (is_number_type(t)) return "type: number";
    if (native_is(t, "boolean")) return "type: boolean";
    if (native_is(t, "blob")) return "type: binary";
    return "type: string";
}

/* ---- the schema ---- */

static ctable *find_table(importer *im, const cql_qname *q, int must)
{
    const char *ks = q->ks ? q->ks : im->keyspace[0] ? im->keyspace : NULL;
    ctable *found = NULL;
    int n = 0;
    for (size_t i = 0; i < im->ntables; i++) {
        ctable *t = &im->tables[i];
        if (t->dropped || strcmp(t->name, q->name) != 0) continue;
        if (ks && strcmp(t->ks, ks) != 0) continue;
        found = t;
        n++;
    }
    if (n > 1) {
        FAIL_WORD(im, q->name, "table %s is in several keyspaces: name it ks.%s, or USE one first",
                  q->name, q->name);
        return NULL;
    }
    if (found == NULL && must) {
        if (ks)
            FAIL_WORD(im, q->name, "unknown table %s.%s (the schema does not create it)", ks,
                      q->name);
        else
            FAIL_WORD(im, q->name, "unknown table %s (the schema does not create it)", q->name);
    }
    return found;
}

static column *find_col(const ctable *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0) return &t->cols[i];
    return NULL;
}

static int col_index(const char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0) return (int)i;
    return -1;
}

static int is_key(const ctable *t, const char *name)
{
    return col_index(t->part, t->npart, name) >= 0 || col_index(t->clus, t->nclus, name) >= 0;
}

static int is_counter_table(const ctable *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (native_is(t->cols[i].te, "counter")) return 1;
    return 0;
}

static ctable *new_table(importer *im)
{
    if (im->ntables == im->cap) {
        size_t nc = im->cap ? im->cap * 2 : 16;
        ctable *nt = realloc(im->tables, nc * sizeof *nt);
        if (nt == NULL) return NULL;
        im->tables = nt;
        im->cap = nc;
    }
    ctable *t = &im->tables[im->ntables++];
    memset(t, 0, sizeof *t);
    return t;
}

static void free_tables(importer *im)
{
    for (size_t i = 0; i < im->ntables; i++) {
        free(im->tables[i].cols);
        free(im->tables[i].part);
        free(im->tables[i].clus);
        free(im->tables[i].desc);
    }
    free(im->tables);
    for (size_t i = 0; i < im->ntypes; i++) {
        free(im->types[i].fields);
        free(im->types[i].types);
    }
    free(im->types);
}

/* ---- user-defined types ---- */

static utype *find_type(importer *im, const char *ks, const char *name)
{
    for (size_t i = 0; i < im->ntypes; i++)
        if (!im->types[i].dropped && strcmp(im->types[i].ks, ks) == 0 &&
            strcmp(im->types[i].name, name) == 0)
            return &im->types[i];
    return NULL;
}

static int add_field(importer *im, utype *u, const char *field, const cql_type_expr *te)
{
    if (u->n == u->cap) {
        size_t nc = u->cap ? u->cap * 2 : 8;
        const char **f = realloc(u->fields, nc * sizeof *f);
        if (f) u->fields = f;
        const cql_type_expr **t = f ? realloc(u->types, nc * sizeof *t) : NULL;
        if (t == NULL) return err_set(im->err, QR_E_INTERNAL, "out of memory");
        u->types = t;
        u->cap = nc;
    }
    u->fields[u->n] = field;
    u->types[u->n++] = te;
    return 0;
}

static const char *stmt_ks(importer *im, const cql_stmt *s)
{
    return s->name.ks ? s->name.ks : im->keyspace;
}

/* The type te names that ks has not (or NULL): a user type used before it is created. */
static const cql_type_expr *unknown_type(importer *im, const char *ks, const cql_type_expr *te)
{
    if (te->kind == CQL_TE_UDT)
        return find_type(im, te->udt.ks ? te->udt.ks : ks, te->udt.name) ? NULL : te;
    for (size_t i = 0; i < te->nargs; i++) {
        const cql_type_expr *u = unknown_type(im, ks, te->args[i]);
        if (u) return u;
    }
    return NULL;
}

static int known_types(importer *im, const char *ks, const cql_type_expr *te)
{
    const cql_type_expr *u = unknown_type(im, ks, te);
    if (u == NULL) return 0;
    return FAIL_WORD(im, u->udt.name, "Unknown type %s%s%s", u->udt.ks ? u->udt.ks : ks,
                     u->udt.ks || ks[0] ? "." : "", u->udt.name);
}

static int create_type(importer *im, const cql_stmt *s)
{
    const cql_create_type *ct = &s->u.create_type;
    const char *ks = stmt_ks(im, s);
    if (find_type(im, ks, s->name.name)) {
        if (s->if_not_exists) return 0;
        return FAIL_WORD(im, s->name.name, "A user type with name '%s' already exists",
                         s->name.name);
    }
    for (size_t i = 0; i < ct->nfields; i++)
        if (known_types(im, ks, ct->types[i])) return -1;
    if (im->ntypes == im->captypes) {
        size_t nc = im->captypes ? im->captypes * 2 : 8;
        utype *n = realloc(im->types, nc * sizeof *n);
        if (n == NULL) return err_set(im->err, QR_E_INTERNAL, "out of memory");
        im->types = n;
        im->captypes = nc;
    }
    utype *u = &im->types[im->ntypes++];
    memset(u, 0, sizeof *u);
    snprintf(u->ks, sizeof u->ks, "%s", ks);
    snprintf(u->name, sizeof u->name, "%s", s->name.name);
    for (size_t i = 0; i < ct->nfields; i++)
        if (add_field(im, u, ct->fields[i], ct->types[i])) return -1;
    return 0;
}

static int alter_type(importer *im, const cql_stmt *s)
{
    const cql_alter_type *a = &s->u.alter_type;
    const char *ks = stmt_ks(im, s);
    utype *u = find_type(im, ks, s->name.name);
    if (u == NULL)
        return FAIL_WORD(im, s->name.name, "unknown type %s (the schema does not create it)",
                         s->name.name);
    for (size_t k = 0; k < a->nfields; k++) {
        size_t at = 0;
        while (at < u->n && strcmp(u->fields[at], a->fields[k]) != 0)
            at++;
        if (a->what == CQL_ALTER_ADD) {
            if (at < u->n) {
                if (a->if_field) continue;
                return FAIL_WORD(im, a->fields[k],
                                 "Cannot add new field %s to type %s: a field "
                                 "of the same name already exists",
                                 a->fields[k], u->name);
            }
            if (known_types(im, ks, a->type) || add_field(im, u, a->fields[k], a->type)) return -1;
            continue;
        }
        if (at == u->n) {
            if (a->if_field) continue;
            return FAIL_WORD(im, a->fields[k], "Unknown field %s in type %s", a->fields[k],
                             u->name);
        }
        if (a->what == CQL_ALTER_RENAME)
            u->fields[at] = a->to[k];
        else if (a->what == CQL_ALTER_TYPE_OF)
            u->types[at] = a->type;
    }
    return 0;
}

/* Appends to list (cap entries) the user types te uses, each after the types it uses. */
static void types_used(importer *im, const char *ks, const cql_type_expr *te, const utype **list,
                       size_t *n, size_t cap, int depth)
{
    if (depth > 32) return;
    for (size_t i = 0; i < te->nargs; i++)
        types_used(im, ks, te->args[i], list, n, cap, depth + 1);
    if (te->kind != CQL_TE_UDT) return;
    const utype *u = find_type(im, te->udt.ks ? te->udt.ks : ks, te->udt.name);
    if (u == NULL) return;
    for (size_t i = 0; i < *n; i++)
        if (list[i] == u) return;
    for (size_t i = 0; i < u->n; i++)
        types_used(im, u->ks, u->types[i], list, n, cap, depth + 1);
    if (*n < cap) list[(*n)++] = u;
}

static int add_col(importer *im, ctable *t, const char *name, const cql_type_expr *te, int st)
{
    if (strpbrk(name, "{}#\"\n") || name[0] == '\0')
        return FAIL_WORD(im, name, "column name '%s' cannot be a model attribute", name);
    if (find_col(t, name))
        return FAIL_WORD(im, name, "column %s is defined twice in table %s", name, t->name);
    if (t->ncols == t->capcols) {
        size_t nc = t->capcols ? t->capcols * 2 : 16;
        column *n = realloc(t->cols, nc * sizeof *n);
        if (n == NULL) return err_set(im->err, QR_E_INTERNAL, "out of memory");
        t->cols = n;
        t->capcols = nc;
    }
    if (known_types(im, t->ks, te)) return -1;
    column *c = &t->cols[t->ncols++];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->te = te;
    c->is_static = st;
    type_text(te, c->type, sizeof c->type);
    return 0;
}

static int ttl_property(importer *im, ctable *t, const cql_props *props)
{
    for (size_t i = 0; i < props->n; i++) {
        const cql_property *p = &props->items[i];
        if (strcmp(p->name, "default_time_to_live") != 0) continue;
        char *end;
        double v = p->value && p->value->kind == CQL_E_INTEGER && p->value->text
                       ? strtod(p->value->text, &end)
                       : -1;
        if (v < 0 || v > 630720000)
            return FAIL_WORD(im, "default_time_to_live",
                             "default_time_to_live must be a number of seconds from 0 to "
                             "630720000 (20 years)");
        t->ttl_seconds = v;
    }
    return 0;
}

/* Sets the primary key (and clustering order) of t from a PRIMARY KEY clause, checking
 * the columns as Cassandra does. */
static int set_key(importer *im, ctable *t, const cql_pkey *pk, const cql_table_opts *opts)
{
    t->part = calloc(pk->npartition + 1, sizeof *t->part);
    t->clus = calloc(pk->nclustering + 1, sizeof *t->clus);
    t->desc = calloc(pk->nclustering + 1, sizeof *t->desc);
    if (!t->part || !t->clus || !t->desc) return err_set(im->err, QR_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < pk->npartition; i++) {
        const char *c = pk->partition[i];
        if (find_col(t, c) == NULL)
            return FAIL_WORD(im, c, "unknown definition %s referenced in PRIMARY KEY", c);
        if (is_key(t, c)) return FAIL_WORD(im, c, "column %s appears twice in PRIMARY KEY", c);
        t->part[t->npart++] = c;
    }
    for (size_t i = 0; i < pk->nclustering; i++) {
        const char *c = pk->clustering[i];
        if (find_col(t, c) == NULL)
            return FAIL_WORD(im, c, "unknown definition %s referenced in PRIMARY KEY", c);
        if (is_key(t, c)) return FAIL_WORD(im, c, "column %s appears twice in PRIMARY KEY", c);
        t->clus[t->nclus++] = c;
    }
    if (opts->norder > t->nclus)
        return FAIL_WORD(
            im, "CLUSTERING",
            "Only clustering key columns can be defined in CLUSTERING ORDER directive");
    for (size_t i = 0; i < opts->norder; i++) {
        const cql_order *o = &opts->clustering_order[i];
        if (strcmp(o->column, t->clus[i]) != 0)
            return FAIL_WORD(im, o->column,
                             "The order of columns in the CLUSTERING ORDER directive must match "
                             "that of the clustering columns (%s before %s)",
                             t->clus[i], o->column);
        t->desc[i] = o->desc;
    }
    for (size_t i = 0; i < t->ncols; i++) {
        const column *c = &t->cols[i];
        int key = is_key(t, c->name);
        if (key && native_is(c->te, "counter"))
            return FAIL_WORD(im, c->name, "counter type is not supported for PRIMARY KEY column %s",
                             c->name);
        if (key && c->is_static)
            return FAIL_WORD(im, c->name, "Static column %s cannot be part of the PRIMARY KEY",
                             c->name);
        if (c->is_static && t->nclus == 0)
            return FAIL_WORD(im, c->name,
                             "Static columns are only useful (and thus allowed) if the table has "
                             "at least one clustering column");
    }
    int counters = 0, others = 0;
    for (size_t i = 0; i < t->ncols; i++)
        if (!is_key(t, t->cols[i].name)) {
            if (native_is(t->cols[i].te, "counter"))
                counters++;
            else
                others++;
        }
    if (counters && others)
        return FAIL_STMT(im, "Cannot mix counter and non counter columns in the same table %s",
                         t->name);
    return 0;
}

static void table_names(importer *im, ctable *t, const cql_qname *q)
{
    const char *ks = q->ks ? q->ks : im->keyspace;
    snprintf(t->ks, sizeof t->ks, "%s", ks);
    snprintf(t->name, sizeof t->name, "%s", q->name);
    source_of(im, im->stmt->offset, t->source, sizeof t->source);
}

static int create_table(importer *im, const cql_stmt *s)
{
    const cql_create_table *c = &s->u.create_table;
    if (find_table(im, &s->name, 0)) {
        if (s->if_not_exists) return 0;
        return FAIL_WORD(im, s->name.name, "table %s already exists", s->name.name);
    }
    ctable *t = new_table(im);
    if (t == NULL) return err_set(im->err, QR_E_INTERNAL, "out of memory");
    table_names(im, t, &s->name);
    if (read_notes(im, im->prev_end, s->offset, &t->nt, 0)) return -1;
    const char *single = NULL;
    for (size_t i = 0; i < c->ncols; i++) {
        if (add_col(im, t, c->cols[i].name, c->cols[i].type, c->cols[i].is_static)) return -1;
        if (c->cols[i].primary_key) {
            if (single || c->has_pk)
                return FAIL_WORD(im, c->cols[i].name,
                                 "Multiple PRIMARY KEYs specified (exactly one required)");
            single = c->cols[i].name;
        }
    }
    cql_pkey pk = c->pk;
    if (single) {
        pk = (cql_pkey){&single, 1, NULL, 0};
    } else if (!c->has_pk) {
        return FAIL_STMT(im, "No PRIMARY KEY specified for table %s (exactly one required)",
                         t->name);
    }
    if (set_key(im, t, &pk, &c->opts)) return -1;
    return ttl_property(im, t, &c->opts.props);
}

static int create_view(importer *im, const cql_stmt *s)
{
    const cql_create_view *v = &s->u.create_view;
    if (find_table(im, &s->name, 0)) {
        if (s->if_not_exists) return 0;
        return FAIL_WORD(im, s->name.name, "materialized view %s already exists", s->name.name);
    }
    const ctable *base = find_table(im, &v->base, 1);
    if (base == NULL) return -1;
    size_t bi = (size_t)(base - im->tables);
    ctable *t = new_table(im);
    if (t == NULL) return err_set(im->err, QR_E_INTERNAL, "out of memory");
    base = &im->tables[bi]; /* new_table may have moved the array */
    table_names(im, t, &s->name);
    t->view = 1;
    if (read_notes(im, im->prev_end, s->offset, &t->nt, 0)) return -1;
    for (size_t i = 0; i < base->ncols; i++) {
        const column *bc = &base->cols[i];
        int keep = v->sel == NULL || col_index(v->pk.partition, v->pk.npartition, bc->name) >= 0 ||
                   col_index(v->pk.clustering, v->pk.nclustering, bc->name) >= 0;
        for (size_t k = 0; v->sel && k < v->nsel; k++)
            keep |=
                v->sel[k].expr->kind == CQL_E_COLUMN && strcmp(v->sel[k].expr->text, bc->name) == 0;
        if (keep && add_col(im, t, bc->name, bc->te, 0)) return -1;
    }
    for (size_t k = 0; v->sel && k < v->nsel; k++)
        if (v->sel[k].expr->kind == CQL_E_COLUMN && find_col(base, v->sel[k].expr->text) == NULL)
            return FAIL_WORD(im, v->sel[k].expr->text, "unknown column %s in table %s",
                             v->sel[k].expr->text, base->name);
    if (set_key(im, t, &v->pk, &v->opts)) return -1;
    t->ttl_seconds = base->ttl_seconds; /* a view's rows expire with the base's */
    return ttl_property(im, t, &v->opts.props);
}

static int create_index(importer *im, const cql_stmt *s)
{
    const cql_create_index *c = &s->u.create_index;
    ctable *t = find_table(im, &s->name, 1);
    if (t == NULL) return -1;
    for (size_t i = 0; i < c->ntargets; i++) {
        const char *col = c->targets[i].column;
        if (find_col(t, col) == NULL)
            return FAIL_WORD(im, col, "unknown column %s in table %s", col, t->name);
        if (t->nindexes >= sizeof t->indexes / sizeof t->indexes[0])
            return FAIL_STMT(im, "too many indexes on table %s", t->name);
        if (c->index)
            snprintf(t->index_names[t->nindexes], NAMELEN, "%s", c->index);
        else
            snprintf(t->index_names[t->nindexes], NAMELEN, "%.70s_%.70s_idx", t->name, col);
        t->indexes[t->nindexes++] = col;
    }
    return 0;
}

static int alter_table(importer *im, const cql_stmt *s)
{
    const cql_alter_table *a = &s->u.alter_table;
    ctable *t = find_table(im, &s->name, 1);
    if (t == NULL) return -1;
    switch (a->what) {
    case CQL_ALTER_ADD:
        for (size_t i = 0; i < a->nadd; i++) {
            if (a->if_column && find_col(t, a->add[i].name)) continue;
            if (add_col(im, t, a->add[i].name, a->add[i].type, a->add[i].is_static)) return -1;
        }
        return 0;
    case CQL_ALTER_DROP:
        for (size_t i = 0; i < a->nnames; i++) {
            column *c = find_col(t, a->names[i]);
            if (c == NULL) {
                if (a->if_column) continue;
                return FAIL_WORD(im, a->names[i], "column %s was not found in table %s",
                                 a->names[i], t->name);
            }
            if (is_key(t, c->name))
                return FAIL_WORD(im, c->name, "Cannot drop PRIMARY KEY column %s", c->name);
            for (size_t k = 0; k < t->nindexes; k++)
                if (strcmp(t->indexes[k], c->name) == 0)
                    return FAIL_WORD(im, c->name,
                                     "Cannot drop column %s because it has dependent secondary "
                                     "indexes (%s)",
                                     c->name, t->index_names[k]);
            size_t at = (size_t)(c - t->cols);
            memmove(c, c + 1, (t->ncols - at - 1) * sizeof *c);
            t->ncols--;
        }
        return 0;
    case CQL_ALTER_WITH:
        return ttl_property(im, t, &a->props);
    default:
        return FAIL_STMT(im, "quarry model import reads ALTER TABLE ... ADD, DROP and WITH only");
    }
}

/* DROP INDEX [ks.]name: the index of that name on a table of the keyspace. */
static int drop_index(importer *im, const cql_stmt *s)
{
    const char *ks = s->name.ks ? s->name.ks : im->keyspace;
    for (size_t i = 0; i < im->ntables; i++) {
        ctable *t = &im->tables[i];
        if (t->dropped || (ks[0] && strcmp(t->ks, ks) != 0)) continue;
        for (size_t k = 0; k < t->nindexes; k++)
            if (strcmp(t->index_names[k], s->name.name) == 0) {
                memmove(&t->indexes[k], &t->indexes[k + 1],
                        (t->nindexes - k - 1) * sizeof t->indexes[0]);
                memmove(&t->index_names[k], &t->index_names[k + 1],
                        (t->nindexes - k - 1) * sizeof t->index_names[0]);
                t->nindexes--;
                return 0;
            }
    }
    if (s->if_exists) return 0;
    return FAIL_WORD(im, s->name.name, "unknown index %s (the schema does not create it)",
                     s->name.name);
}

static int read_schema(importer *im, const cql_parsed *p)
{
    for (size_t i = 0; i < p->nstmts; i++) {
        const cql_stmt *s = p->stmts[i];
        im->stmt = s;
        int rc = 0;
        switch (s->kind) {
        case CQL_CREATE_KEYSPACE:
            if (im->nks++ == 0) snprintf(im->first_ks, sizeof im->first_ks, "%s", s->name.name);
            break;
        case CQL_USE:
            snprintf(im->keyspace, sizeof im->keyspace, "%s", s->name.name);
            break;
        case CQL_CREATE_TYPE:
            rc = create_type(im, s);
            break;
        case CQL_ALTER_KEYSPACE:
            break; /* replication does not shape the model */
        case CQL_CREATE_TABLE:
            rc = create_table(im, s);
            break;
        case CQL_CREATE_VIEW:
            rc = create_view(im, s);
            break;
        case CQL_CREATE_INDEX:
            rc = create_index(im, s);
            break;
        case CQL_ALTER_TABLE:
            rc = alter_table(im, s);
            break;
        case CQL_DROP_TABLE:
        case CQL_DROP_VIEW: {
            ctable *t = find_table(im, &s->name, !s->if_exists);
            if (t)
                t->dropped = 1;
            else if (!s->if_exists)
                rc = -1;
            break;
        }
        case CQL_DROP_INDEX:
            rc = drop_index(im, s);
            break;
        case CQL_DROP_KEYSPACE:
            for (size_t k = 0; k < im->ntables; k++)
                if (strcmp(im->tables[k].ks, s->name.name) == 0) im->tables[k].dropped = 1;
            break;
        case CQL_DROP_TYPE: {
            utype *u = find_type(im, stmt_ks(im, s), s->name.name);
            if (u)
                u->dropped = 1;
            else if (!s->if_exists)
                rc = FAIL_WORD(im, s->name.name, "unknown type %s (the schema does not create it)",
                               s->name.name);
            break;
        }
        case CQL_ALTER_TYPE:
            rc = alter_type(im, s);
            break;
        default:
            rc = FAIL_STMT(im, "a schema holds CREATE, ALTER, DROP and USE statements; queries "
                               "belong in the --queries file");
        }
        if (rc) return -1;
        im->prev_end = s->offset + s->length;
    }
    return 0;
}

/* ---- YAML ---- */

/* A YAML double-quoted string. The text is valid UTF-8 (check_text); what YAML does not
 * allow unescaped (control characters, DEL, C1 controls, U+FEFF, U+FFFE, U+FFFF) is
 * escaped. */
static void yq(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char *u = (const unsigned char *)s;
        unsigned char c = u[0];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else if (c == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
            fprintf(f, "\\x%02x", u[1]), s++;
        else if (c == 0xef && ((u[1] == 0xbb && u[2] == 0xbf) || (u[1] == 0xbf && u[2] >= 0xbe)))
            fprintf(f, "\\u%s", u[1] == 0xbb ? "FEFF" : u[2] == 0xbe ? "FFFE" : "FFFF"), s += 2;
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void duration(FILE *f, double seconds)
{
    long long s = (long long)seconds;
    if (s % 86400 == 0)
        fprintf(f, "%lldd", s / 86400);
    else if (s % 3600 == 0)
        fprintf(f, "%lldh", s / 3600);
    else
        fprintf(f, "%llds", s);
}

/* "      types: {name: fields, ...}": the user types t's columns use, each after those it
 * uses, with its fields as CQL. */
static void write_types(importer *im, FILE *f, const ctable *t)
{
    const utype *list[256];
    size_t n = 0;
    for (size_t i = 0; i < t->ncols; i++)
        types_used(im, t->ks, t->cols[i].te, list, &n, sizeof list / sizeof list[0], 0);
    if (n == 0) return;
    fprintf(f, "      types: {");
    for (size_t k = 0; k < n; k++) {
        char fields[4096] = "", name[NAMELEN * 2 + 3], type[512];
        size_t o = 0;
        for (size_t i = 0; i < list[k]->n && o < sizeof fields; i++) {
            model_cql_name(name, sizeof name, list[k]->fields[i]);
            type_text(list[k]->types[i], type, sizeof type);
            o += (size_t)snprintf(fields + o, sizeof fields - o, "%s%s %s", i ? ", " : "", name,
                                  type);
        }
        fprintf(f, "%s", k ? ", " : "");
        yq(f, list[k]->name);
        fprintf(f, ": ");
        yq(f, fields);
    }
    fprintf(f, "}\n");
}

static void write_table(importer *im, FILE *f, const ctable *t)
{
    fprintf(f, "  ");
    yq(f, t->model_name);
    fprintf(f, ":\n    partition_key: {name: \"$pk\", type: B}\n");
    if (t->nclus) fprintf(f, "    sort_key: {name: \"$ck\", type: B}\n");
    fprintf(f, "    cql:\n      source: ");
    yq(f, t->source);
    fputc('\n', f);
    if (t->nclus) {
        fprintf(f, "      clustering_order: {");
        for (size_t i = 0; i < t->nclus; i++) {
            fprintf(f, "%s", i ? ", " : "");
            yq(f, t->clus[i]);
            fprintf(f, ": %s", t->desc[i] ? "desc" : "asc");
        }
        fprintf(f, "}\n");
    }
    if (t->ttl_seconds > 0) {
        fprintf(f, "      default_time_to_live: ");
        duration(f, t->ttl_seconds);
        fputc('\n', f);
    }
    if (t->nindexes) {
        fprintf(f, "      indexes: [");
        for (size_t i = 0; i < t->nindexes; i++)
            fprintf(f, "%s", i ? ", " : ""), yq(f, t->indexes[i]);
        fprintf(f, "]\n");
    }
    write_types(im, f, t);
}

static void write_template(FILE *f, const char *const *cols, size_t n)
{
    char buf[2048] = "";
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "%s{%s}", i ? "#" : "", cols[i]);
    }
    yq(f, buf);
}

static void write_entity(FILE *f, const ctable *t)
{
    fprintf(f, "  ");
    yq(f, t->entity);
    fprintf(f, ":\n    table: ");
    yq(f, t->model_name);
    fprintf(f, "\n    pk: ");
    write_template(f, t->part, t->npart);
    if (t->nclus) {
        fprintf(f, "\n    sk: ");
        write_template(f, t->clus, t->nclus);
    }
    fputc('\n', f);
    if (is_counter_table(t)) fprintf(f, "    counter: true\n");
    if (t->ttl_seconds > 0) {
        fprintf(f, "    retention: ");
        duration(f, t->ttl_seconds);
        fputc('\n', f);
    }
    if (t->nt.count[0]) fprintf(f, "    count: %s\n", t->nt.count);
    if (t->nt.item_size[0]) fprintf(f, "    item_size: %s\n", t->nt.item_size);
    if (t->nt.growth[0]) fprintf(f, "    growth_per_day: %s\n", t->nt.growth);
    fprintf(f, "    attributes:\n");
    for (size_t i = 0; i < t->ncols; i++) {
        const column *c = &t->cols[i];
        {
            fprintf(f, "      ");
            yq(f, c->name);
            fprintf(f, ": {%s, cql_type: ", model_type(c, is_key(t, c->name)));
        }
        yq(f, c->type);
        fprintf(f, "%s}\n", c->is_static ? ", static: true" : "");
    }
}

/* ---- queries ---- */

typedef struct pattern {
    const char *kind;
    const ctable *t;
    const char *given[128];
    size_t ngiven;
    const char *in[128]; /* given by IN */
    size_t nin;
    const char *range_col, *range_op;
    const char *order_by;
    int direction;
    const char *limit;
    const char *aggregate;
    int allow_filtering;
    double ttl;
    int ttl_request;
    int static_only;
} pattern;

static int add_given(importer *im, pattern *pt, const char *col)
{
    for (size_t i = 0; i < pt->ngiven; i++)
        if (strcmp(pt->given[i], col) == 0) return 0;
    if (pt->ngiven == sizeof pt->given / sizeof pt->given[0])
        return FAIL_STMT(im, "too many restrictions in one statement");
    pt->given[pt->ngiven++] = col;
    return 0;
}

static int add_in(importer *im, pattern *pt, const char *col)
{
    for (size_t i = 0; i < pt->nin; i++)
        if (strcmp(pt->in[i], col) == 0) return 0;
    if (pt->nin == sizeof pt->in / sizeof pt->in[0])
        return FAIL_STMT(im, "too many restrictions in one statement");
    pt->in[pt->nin++] = col;
    return 0;
}

static const char *range_op(cql_op op)
{
    switch (op) {
    case CQL_OP_LT:
        return "<";
    case CQL_OP_LTE:
        return "<=";
    case CQL_OP_GT:
        return ">";
    case CQL_OP_GTE:
        return ">=";
    default:
        return NULL;
    }
}

static int add_range(importer *im, pattern *pt, const char *col, const char *op)
{
    if (pt->range_col == NULL) {
        pt->range_col = col;
        pt->range_op = op;
        return 0;
    }
    if (strcmp(pt->range_col, col) == 0) {
        if ((pt->range_op[0] == '>') != (op[0] == '>')) pt->range_op = "between";
        return 0;
    }
    /* a second range on another column can only be filtered */
    return add_given(im, pt, col);
}

static const column *need_col(importer *im, const ctable *t, const char *name)
{
    const column *c = find_col(t, name);
    if (c == NULL) FAIL_WORD(im, name, "unknown column %s in table %s", name, t->name);
    return c;
}

/* True for a relation that ranges over a clustering column: read first, so that it is the
 * pattern's sort-key condition whatever order the WHERE clause lists things in. */
static int clustering_range(const ctable *t, const cql_relation *r)
{
    return r->kind != CQL_REL_TOKEN && range_op(r->op) &&
           col_index(t->clus, t->nclus, r->columns[0]) >= 0;
}

/* = and IN restrictions become given values, a range the sort-key condition (a clustering
 * column's first, else a regular column's, which the checker reports as filtering); a
 * further range can only be filtered, so it is given too. */
static int read_where(importer *im, pattern *pt, const cql_where *w)
{
    const ctable *t = pt->t;
    for (size_t i = 0; i < w->n; i++)
        for (size_t k = 0; k < w->rels[i].ncolumns; k++)
            if (need_col(im, t, w->rels[i].columns[k]) == NULL) return -1;
    for (size_t i = 0; i < w->n; i++)
        if (clustering_range(t, &w->rels[i]) &&
            add_range(im, pt, w->rels[i].columns[0], range_op(w->rels[i].op)))
            return -1;
    for (size_t i = 0; i < w->n; i++) {
        const cql_relation *r = &w->rels[i];
        if (r->kind == CQL_REL_TOKEN || clustering_range(t, r))
            continue; /* a token range gives no partition */
        const char *c = r->columns[0];
        int part = col_index(t->part, t->npart, c) >= 0;
        int clus = col_index(t->clus, t->nclus, c) >= 0;
        if (r->kind == CQL_REL_TUPLE) {
            for (size_t k = 0; k < r->ncolumns && (r->op == CQL_OP_EQ || r->op == CQL_OP_IN); k++)
                if (add_given(im, pt, r->columns[k]) ||
                    (r->op == CQL_OP_IN && add_in(im, pt, r->columns[k])))
                    return -1;
            continue;
        }
        if (r->kind == CQL_REL_ELEMENT || r->kind == CQL_REL_FIELD) {
            if (add_given(im, pt, c)) return -1;
            continue;
        }
        switch (r->op) {
        case CQL_OP_EQ:
            if (add_given(im, pt, c)) return -1;
            break;
        case CQL_OP_IN:
            if (add_given(im, pt, c) || add_in(im, pt, c)) return -1;
            break;
        case CQL_OP_LT:
        case CQL_OP_LTE:
        case CQL_OP_GT:
        case CQL_OP_GTE:
            if (part) break; /* only token() ranges over partitions: none is given */
            if (add_range(im, pt, c, range_op(r->op))) return -1;
            break;
        case CQL_OP_IS_NOT_NULL:
            break;
        default: /* CONTAINS, CONTAINS KEY, LIKE, != */
            if (part || clus)
                return FAIL_WORD(im, c,
                                 "this relation on primary key column %s is not supported: "
                                 "restrict key columns with =, IN or a range",
                                 c);
            if (add_given(im, pt, c)) return -1;
        }
    }
    return 0;
}

static int read_using(importer *im, pattern *pt, const cql_using *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!u[i].ttl) continue;
        if (u[i].value->kind == CQL_E_BIND) {
            pt->ttl_request = 1;
        } else if (u[i].value->kind == CQL_E_INTEGER) {
            pt->ttl = strtod(u[i].value->text, NULL);
            if (pt->ttl < 0 || pt->ttl > 630720000)
                return FAIL_WORD(im, "TTL", "TTL must be from 0 to 630720000 seconds (20 years)");
        } else {
            return FAIL_WORD(im, "TTL", "TTL must be an integer or a bind marker");
        }
    }
    return 0;
}

static const char *aggregate_of(const cql_select *s)
{
    for (size_t i = 0; i < s->nsel; i++) {
        const cql_expr *e = s->sel[i].expr;
        if (e->kind != CQL_E_FUNCTION || e->fn.name == NULL) continue;
        if (e->fn.ks && strcmp(e->fn.ks, "system") != 0) continue;
        static const char *const fns[] = {"count", "sum", "min", "max", "avg", NULL};
        for (const char *const *f = fns; *f; f++)
            if (strcasecmp(e->fn.name, *f) == 0) return *f;
    }
    return NULL;
}

static int read_select(importer *im, pattern *pt, const cql_select *s)
{
    if (read_where(im, pt, &s->where)) return -1;
    const ctable *t = pt->t;
    pt->aggregate = aggregate_of(s);
    pt->allow_filtering = s->allow_filtering;
    if (s->limit && s->limit->kind == CQL_E_INTEGER) pt->limit = s->limit->text;
    int reversed = 0, last = -1;
    for (size_t i = 0; i < s->norder; i++) {
        const cql_order *o = &s->order[i];
        if (need_col(im, t, o->column) == NULL) return -1;
        int ci = col_index(t->clus, t->nclus, o->column);
        if (i == 0) {
            pt->order_by = o->column;
            pt->direction = o->desc ? -1 : 1;
            if (ci < 0) return 0; /* the checker says the partition cannot be read so */
            reversed = o->desc != t->desc[ci];
        } else if (ci <= last || (o->desc != t->desc[ci]) != reversed) {
            return FAIL_WORD(im, o->column,
                             "Unsupported order by relation: ORDER BY %s %s does not follow the "
                             "clustering order of %s or its reverse",
                             o->column, o->desc ? "DESC" : "ASC", t->name);
        }
        last = ci;
    }
    /* the whole primary key by equality: one row */
    size_t eq = 0;
    for (size_t i = 0; i < pt->ngiven; i++)
        eq += is_key(t, pt->given[i]);
    pt->kind =
        eq == t->npart + t->nclus && pt->range_col == NULL && pt->aggregate == NULL && pt->nin == 0
            ? "get"
            : "query";
    return 0;
}

static int read_insert(importer *im, pattern *pt, const cql_insert *s)
{
    const ctable *t = pt->t;
    if (is_counter_table(t))
        return FAIL_STMT(im, "INSERT statements are not allowed on counter tables, use UPDATE "
                             "instead");
    for (size_t i = 0; i < s->ncolumns; i++)
        if (need_col(im, t, s->columns[i]) == NULL) return -1;
    if (s->json == NULL) {
        const char *const *keys[2] = {t->part, t->clus};
        size_t nk[2] = {t->npart, t->nclus};
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < nk[k]; i++)
                if (col_index(s->columns, s->ncolumns, keys[k][i]) < 0)
                    return FAIL_STMT(im, "Some %s are missing: %s",
                                     k == 0 ? "partition key parts" : "clustering keys",
                                     keys[k][i]);
    }
    pt->kind = "put";
    return read_using(im, pt, s->using, s->nusing);
}

static int read_update(importer *im, pattern *pt, const cql_update *s)
{
    const ctable *t = pt->t;
    int counters = is_counter_table(t);
    for (size_t i = 0; i < s->nset; i++) {
        const cql_assign *a = &s->set[i];
        const column *c = need_col(im, t, a->column);
        if (c == NULL) return -1;
        if (is_key(t, c->name))
            return FAIL_WORD(im, c->name, "PRIMARY KEY part %s found in SET part", c->name);
        int inc = a->kind == CQL_SET_ADD || a->kind == CQL_SET_SUB;
        if (counters && !inc)
            return FAIL_WORD(im, c->name,
                             "Cannot set the value of counter column %s (counters can only be "
                             "incremented/decremented, not set)",
                             c->name);
        if (!counters && inc && is_number_type(c->te))
            return FAIL_WORD(im, c->name,
                             "Invalid operation (%s = %s %c ?) for non counter column %s", c->name,
                             c->name, a->kind == CQL_SET_ADD ? '+' : '-', c->name);
    }
    int statics = s->nset > 0;
    for (size_t i = 0; i < s->nset; i++)
        statics &= find_col(t, s->set[i].column)->is_static;
    pt->static_only = statics;
    if (read_where(im, pt, &s->where)) return -1;
    pt->kind = "update";
    return read_using(im, pt, s->using, s->nusing);
}

static int read_delete(importer *im, pattern *pt, const cql_delete *s)
{
    for (size_t i = 0; i < s->ncols; i++)
        if (need_col(im, pt->t, s->cols[i].column) == NULL) return -1;
    pt->kind = "delete";
    return read_where(im, pt, &s->where);
}

static const char *verb(cql_stmt_kind k)
{
    return k == CQL_SELECT   ? "select"
           : k == CQL_INSERT ? "insert"
           : k == CQL_UPDATE ? "update"
                             : "delete";
}

/* A name no earlier pattern has: base, else base-2, base-3, ... */
static const char *unique_name(importer *im, const char *base, char *buf, size_t size)
{
    snprintf(buf, size, "%s", base);
    for (int n = 2;; n++) {
        int used = 0;
        for (size_t i = 0; i < im->nnames; i++)
            used |= strcmp(im->names[i], buf) == 0;
        if (!used) break;
        snprintf(buf, size, "%s-%d", base, n);
    }
    if (im->nnames == sizeof im->names / sizeof im->names[0]) {
        FAIL_STMT(im, "more than %zu statements: split the queries file", im->nnames);
        return NULL;
    }
    if ((im->names[im->nnames] = strdup(buf)) == NULL) {
        err_set(im->err, QR_E_INTERNAL, "out of memory");
        return NULL;
    }
    im->nnames++;
    return buf;
}

static int write_pattern(importer *im, const cql_stmt *s, const notes *nt, const char *name)
{
    FILE *f = im->out;
    pattern pt = {0};
    if ((pt.t = find_table(im, &s->name, 1)) == NULL) return -1;
    int rc = s->kind == CQL_SELECT   ? read_select(im, &pt, &s->u.select)
             : s->kind == CQL_INSERT ? read_insert(im, &pt, &s->u.insert)
             : s->kind == CQL_UPDATE ? read_update(im, &pt, &s->u.update)
                                     : read_delete(im, &pt, &s->u.del);
    if (rc) return -1;
    char base[NAMELEN + 64], uniq[NAMELEN + 80];
    if (name)
        snprintf(base, sizeof base, "%s", name);
    else
        snprintf(base, sizeof base, "%s-%s", verb(s->kind), pt.t->name);
    if (unique_name(im, base, uniq, sizeof uniq) == NULL) return -1;
    fprintf(f, "  - name: ");
    yq(f, uniq);
    if (nt->sentence[0]) {
        fprintf(f, "\n    sentence: ");
        yq(f, nt->sentence);
    }
    fprintf(f, "\n    kind: %s\n    entity: ", pt.kind);
    yq(f, pt.t->entity);
    fputc('\n', f);
    if (pt.ngiven) {
        fprintf(f, "    given: [");
        for (size_t i = 0; i < pt.ngiven; i++)
            fprintf(f, "%s", i ? ", " : ""), yq(f, pt.given[i]);
        fprintf(f, "]\n");
    }
    if (pt.nin) {
        fprintf(f, "    in: [");
        for (size_t i = 0; i < pt.nin; i++)
            fprintf(f, "%s", i ? ", " : ""), yq(f, pt.in[i]);
        fprintf(f, "]\n");
    }
    if (pt.range_col) {
        fprintf(f, "    sk_condition: {op: \"%s\", attribute: ", pt.range_op);
        yq(f, pt.range_col);
        fprintf(f, "}\n");
    }
    if (pt.order_by) {
        fprintf(f, "    order_by: ");
        yq(f, pt.order_by);
        fprintf(f, "\n    direction: %s\n", pt.direction < 0 ? "desc" : "asc");
    }
    if (pt.limit) fprintf(f, "    limit: %s\n", pt.limit);
    if (pt.aggregate) fprintf(f, "    aggregate: %s\n", pt.aggregate);
    if (pt.allow_filtering) fprintf(f, "    allow_filtering: true\n");
    if (pt.static_only) fprintf(f, "    static_only: true\n");
    if (pt.ttl_request)
        fprintf(f, "    ttl: request\n");
    else if (pt.ttl > 0) {
        fprintf(f, "    ttl: ");
        duration(f, pt.ttl);
        fputc('\n', f);
    }
    if (nt->rps[0]) fprintf(f, "    rps: %s\n", nt->rps);
    if (nt->latency[0]) fprintf(f, "    latency: %s\n", nt->latency);
    if (nt->result_size[0]) fprintf(f, "    result_size: %s\n", nt->result_size);
    if (nt->consistent[0]) fprintf(f, "    consistent: %s\n", nt->consistent);
    char *text = cql_print(s);
    if (text == NULL) return err_set(im->err, QR_E_INTERNAL, "out of memory");
    fprintf(f, "    statement: ");
    yq(f, text);
    free(text);
    char src[600];
    source_of(im, s->offset, src, sizeof src);
    fprintf(f, "\n    source: ");
    yq(f, src);
    fputc('\n', f);
    return 0;
}

static int read_queries(importer *im, const cql_parsed *p)
{
    for (size_t i = 0; i < p->nstmts; i++) {
        const cql_stmt *s = p->stmts[i];
        im->stmt = s;
        notes nt;
        if (read_notes(im, im->prev_end, s->offset, &nt, 1)) return -1;
        im->prev_end = s->offset + s->length;
        switch (s->kind) {
        case CQL_USE:
            snprintf(im->keyspace, sizeof im->keyspace, "%s", s->name.name);
            break;
        case CQL_SELECT:
        case CQL_INSERT:
        case CQL_UPDATE:
        case CQL_DELETE:
            if (write_pattern(im, s, &nt, nt.name[0] ? nt.name : NULL)) return -1;
            break;
        case CQL_BATCH:
            for (size_t k = 0; k < s->u.batch.nstmts; k++) {
                char name[NAMELEN + 32];
                const cql_stmt *inner = s->u.batch.stmts[k];
                im->stmt = inner;
                snprintf(name, sizeof name, "%s-%zu", nt.name[0] ? nt.name : "batch", k + 1);
                if (write_pattern(im, inner, &nt, name)) return -1;
            }
            break;
        default:
            return FAIL_STMT(im, "the queries file holds SELECT, INSERT, UPDATE, DELETE, BATCH "
                                 "and USE statements; CREATE and ALTER belong in the schema");
        }
    }
    return 0;
}

/* ---- the model file ---- */

static void name_tables(importer *im)
{
    for (size_t i = 0; i < im->ntables; i++) {
        ctable *t = &im->tables[i];
        if (t->ks[0])
            snprintf(t->model_name, sizeof t->model_name, "%s.%s", t->ks, t->name);
        else
            snprintf(t->model_name, sizeof t->model_name, "%s", t->name);
        int shared = 0;
        for (size_t j = 0; j < im->ntables; j++)
            shared |= j != i && !im->tables[j].dropped && strcmp(im->tables[j].name, t->name) == 0;
        if (shared && t->ks[0])
            snprintf(t->entity, sizeof t->entity, "%s_%s", t->ks, t->name);
        else
            snprintf(t->entity, sizeof t->entity, "%s", t->name);
    }
}

/* A file name for a YAML comment: control characters become '?'. */
static void comment_name(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
}

static int run(importer *im, const char *schema, const char *stext, size_t slen,
               const char *queries, const char *qtext, size_t qlen, FILE *out)
{
    cql_parsed sp = {0}, qp = {0};
    char *body = NULL;
    size_t bodylen = 0;
    FILE *mem = NULL;
    int rc = -1, sparsed = 0, qparsed = 0;
    im->file = schema;
    im->text = stext;
    im->len = slen;
    if (parse_file(im, &sp)) goto done;
    sparsed = 1;
    if (read_schema(im, &sp)) goto done;
    name_tables(im);
    if ((mem = open_memstream(&body, &bodylen)) == NULL) {
        err_set(im->err, QR_E_INTERNAL, "out of memory");
        goto done;
    }
    im->out = mem;
    if (queries) {
        im->file = queries;
        im->text = qtext;
        im->len = qlen;
        im->prev_end = 0;
        im->stmt = NULL;
        im->keyspace[0] = '\0';
        if (parse_file(im, &qp)) goto done;
        qparsed = 1;
        if (read_queries(im, &qp)) goto done;
    }
    if (fflush(mem) != 0) {
        err_set(im->err, QR_E_INTERNAL, "out of memory");
        goto done;
    }
    fprintf(out, "# Imported by quarry model import --cql from ");
    comment_name(out, schema);
    if (queries) {
        fprintf(out, " and ");
        comment_name(out, queries);
    }
    fprintf(out,
            ".\n"
            "# Each CQL table is a table and an entity whose key templates are its partition\n"
            "# and clustering columns; each query is an access pattern. Figures (count,\n"
            "# item_size, growth_per_day, rps, ...) come from `-- key: value` comments before\n"
            "# a statement; add more here for the size and rate checks.\n");
    const char *slash = strrchr(schema, '/');
    char name[NAMELEN];
    snprintf(name, sizeof name, "%s", im->nks == 1 ? im->first_ks : slash ? slash + 1 : schema);
    char *dot = im->nks == 1 ? NULL : strrchr(name, '.');
    if (dot) *dot = '\0';
    fprintf(out, "name: ");
    yq(out, name);
    fprintf(out, "\ntables:\n");
    size_t live = 0;
    for (size_t i = 0; i < im->ntables; i++)
        if (!im->tables[i].dropped) write_table(im, out, &im->tables[i]), live++;
    if (live == 0) {
        im->file = schema;
        err_validation(im->err, "%s: the schema creates no table", schema);
        goto done;
    }
    fprintf(out, "entities:\n");
    for (size_t i = 0; i < im->ntables; i++)
        if (!im->tables[i].dropped) write_entity(out, &im->tables[i]);
    fprintf(out, "access_patterns:%s\n", bodylen ? "" : " []");
    fwrite(body, 1, bodylen, out);
    rc = 0;
done:
    if (mem) fclose(mem);
    free(body);
    if (sparsed) cql_parsed_free(&sp);
    if (qparsed) cql_parsed_free(&qp);
    for (size_t i = 0; i < im->nnames; i++)
        free(im->names[i]);
    free_tables(im);
    return rc;
}

/* The model is written to memory and loaded back before it is written out: what import
 * writes is always a model that `model check` loads. */
int model_import_cql_text(const char *schema_name, const char *schema, size_t schema_len,
                          const char *queries_name, const char *queries, size_t queries_len,
                          FILE *out, qr_err *err)
{
    importer im;
    memset(&im, 0, sizeof im);
    im.err = err;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    int rc = run(&im, schema_name, schema, schema_len, queries ? queries_name : NULL, queries,
                 queries_len, mem);
    if (fclose(mem) != 0 && rc == 0) rc = err_set(err, QR_E_INTERNAL, "out of memory");
    qr_model *m = NULL;
    qr_err lerr;
    err_init(&lerr);
    if (rc == 0 && model_load("(imported model)", text, len, &m, &lerr)) {
        rc = err_set(err, QR_E_INTERNAL, "%s: the model written from it does not load: %s",
                     schema_name, lerr.msg);
        err_clear(&lerr);
    }
    model_free(m);
    if (rc == 0 && fwrite(text, 1, len, out) != len)
        rc = err_set(err, QR_E_INTERNAL, "cannot write the model");
    free(text);
    return rc;
}

int model_import_cql(const char *schema, const char *queries, FILE *out, qr_err *err)
{
    size_t slen = 0, qlen = 0;
    char *stext = read_all(schema, &slen, err), *qtext = NULL;
    if (stext == NULL) return -1;
    if (queries && (qtext = read_all(queries, &qlen, err)) == NULL) {
        free(stext);
        return -1;
    }
    int rc = model_import_cql_text(schema, stext, slen, queries, qtext, qlen, out, err);
    free(stext);
    free(qtext);
    return rc;
}
