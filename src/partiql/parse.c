/* parse.c — the lexer and recursive-descent parser of DynamoDB's PartiQL: SELECT, INSERT,
 * UPDATE, DELETE and EXISTS(SELECT ...) over one table. It builds the tree of statement.h; it
 * does not check the statement against a table (the planner does). */
#include <ctype.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/value.h"
#include "partiql/statement.h"

#define MAX_NESTING 64
#define PATH_SHOWN 256 /* bytes of a literal's path shown in messages */

typedef enum tok_kind { T_EOF, T_IDENT, T_QIDENT, T_STRING, T_NUMBER, T_PARAM, T_PUNCT } tok_kind;

typedef struct token {
    tok_kind kind;
    size_t pos; /* offset in the statement */
    char *text; /* identifier / string contents (unescaped), number text, punctuation */
    size_t len;
} token;

typedef struct parser {
    const char *src;
    size_t srclen;
    token *toks;
    size_t ntoks, cap, at;
    json_t *params;
    size_t nparam; /* parameters used so far */
    int depth;
    qr_err *err;
} parser;

/* ---- lexer ---- */

static int push_token(parser *p, tok_kind kind, size_t pos, const char *text, size_t len)
{
    if (p->ntoks == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        token *t = realloc(p->toks, cap * sizeof *t);
        if (t == NULL) return err_set(p->err, QR_E_INTERNAL, "out of memory");
        p->toks = t;
        p->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL) return err_set(p->err, QR_E_INTERNAL, "out of memory");
    memcpy(copy, text, len);
    copy[len] = '\0';
    p->toks[p->ntoks++] = (token){kind, pos, copy, len};
    return 0;
}

/* A statement the lexer cannot read: DynamoDB says no more than its envelope. */
static int unreadable(parser *p)
{
    return err_validation(p->err, "%s", PARTIQL_MALFORMED);
}

/* A quoted run ('...' or "..."), the quote doubled inside standing for itself. */
static int lex_quoted(parser *p, size_t *i, char q, tok_kind kind)
{
    size_t start = *i, j = *i + 1;
    char *out = malloc(p->srclen - start + 1);
    size_t n = 0;
    if (out == NULL) return err_set(p->err, QR_E_INTERNAL, "out of memory");
    for (;;) {
        if (j >= p->srclen) {
            free(out);
            return unreadable(p);
        }
        if (p->src[j] == q) {
            if (j + 1 < p->srclen && p->src[j + 1] == q) {
                out[n++] = q;
                j += 2;
                continue;
            }
            break;
        }
        out[n++] = p->src[j++];
    }
    int rc = push_token(p, kind, start, out, n);
    free(out);
    *i = j + 1;
    return rc;
}

/* Line and block comments are whitespace. */
static int lex(parser *p)
{
    static const char *const two[] = {"<>", "!=", "<=", ">=", "<<", ">>", NULL};
    size_t i = 0;
    while (i < p->srclen) {
        unsigned char c = (unsigned char)p->src[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
        } else if (c == '-' && i + 1 < p->srclen &&
                   p->src[i + 1] == '-') { /* comment to the end of the line */
            while (i < p->srclen && p->src[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < p->srclen && p->src[i + 1] == '*') { /* block comment */
            for (i += 2; i + 1 < p->srclen && !(p->src[i] == '*' && p->src[i + 1] == '/'); i++)
                ;
            if (i + 1 >= p->srclen) return unreadable(p);
            i += 2;
        } else if (c == '\'' || c == '"') {
            if (lex_quoted(p, &i, (char)c, c == '\'' ? T_STRING : T_QIDENT)) return -1;
        } else if (isalpha(c) || c == '_') {
            size_t j = i;
            while (j < p->srclen &&
                   (isalnum((unsigned char)p->src[j]) || p->src[j] == '_' || p->src[j] == '$'))
                j++;
            if (push_token(p, T_IDENT, i, p->src + i, j - i)) return -1;
            i = j;
        } else if (isdigit(c) ||
                   (c == '.' && i + 1 < p->srclen && isdigit((unsigned char)p->src[i + 1]))) {
            size_t j = i;
            while (j < p->srclen && isdigit((unsigned char)p->src[j]))
                j++;
            if (j < p->srclen && p->src[j] == '.') {
                j++;
                while (j < p->srclen && isdigit((unsigned char)p->src[j]))
                    j++;
            }
            if (j < p->srclen && (p->src[j] == 'e' || p->src[j] == 'E')) {
                size_t k = j + 1;
                if (k < p->srclen && (p->src[k] == '+' || p->src[k] == '-')) k++;
                if (k < p->srclen && isdigit((unsigned char)p->src[k])) {
                    while (k < p->srclen && isdigit((unsigned char)p->src[k]))
                        k++;
                    j = k;
                }
            }
            if (push_token(p, T_NUMBER, i, p->src + i, j - i)) return -1;
            i = j;
        } else if (c == '?') {
            if (push_token(p, T_PARAM, i, "?", 1)) return -1;
            i++;
        } else {
            int matched = 0;
            for (int k = 0; two[k]; k++)
                if (i + 1 < p->srclen && p->src[i] == two[k][0] && p->src[i + 1] == two[k][1]) {
                    if (push_token(p, T_PUNCT, i, two[k], 2)) return -1;
                    i += 2;
                    matched = 1;
                    break;
                }
            if (matched) continue;
            if (c == 0 || strchr("()[]{},.:=<>*+-;", c) == NULL) return unreadable(p);
            if (push_token(p, T_PUNCT, i, p->src + i, 1)) return -1;
            i++;
        }
    }
    return push_token(p, T_EOF, p->srclen, "", 0);
}

/* ---- token helpers ---- */

static token *peek(parser *p)
{
    return &p->toks[p->at];
}
static token *peek2(parser *p)
{
    return &p->toks[p->at + 1 < p->ntoks ? p->at + 1 : p->at];
}
static token *next(parser *p)
{
    token *t = &p->toks[p->at];
    if (t->kind != T_EOF) p->at++;
    return t;
}

static int is_kw(const token *t, const char *kw)
{
    return t->kind == T_IDENT && strcasecmp(t->text, kw) == 0;
}
static int is_punct(const token *t, const char *s)
{
    return t->kind == T_PUNCT && strcmp(t->text, s) == 0;
}

/* True if t is a comparison operator (=, <>, !=, <, <=, >, >=). */
static int is_comparison(const token *t)
{
    static const char *const ops[] = {"=", "<>", "!=", "<", "<=", ">", ">=", NULL};
    for (int i = 0; t->kind == T_PUNCT && ops[i]; i++)
        if (strcmp(t->text, ops[i]) == 0) return 1;
    return 0;
}

static int accept_kw(parser *p, const char *kw)
{
    if (!is_kw(peek(p), kw)) return 0;
    p->at++;
    return 1;
}

static int accept_punct(parser *p, const char *s)
{
    if (!is_punct(peek(p), s)) return 0;
    p->at++;
    return 1;
}

/* The error for the token at hand: what the parser expected there. */
static int unexpected(parser *p, const char *expected)
{
    token *t = peek(p);
    if (t->kind == T_EOF)
        return err_validation(p->err, PARTIQL_MALFORMED "unexpected end of statement, expected %s",
                              expected);
    char shown[48];
    snprintf(shown, sizeof shown, "%.40s%s", t->text, t->len > 40 ? "..." : "");
    err_utf8_repair(shown);
    return err_validation(p->err,
                          PARTIQL_MALFORMED "unexpected %s '%s' at position %zu, expected %s",
                          t->kind == T_STRING   ? "string"
                          : t->kind == T_NUMBER ? "number"
                                                : "token",
                          shown, t->pos + 1, expected);
}

static int expect_punct(parser *p, const char *s)
{
    if (accept_punct(p, s)) return 0;
    char want[16];
    snprintf(want, sizeof want, "'%s'", s);
    return unexpected(p, want);
}

static int expect_kw(parser *p, const char *kw)
{
    return accept_kw(p, kw) ? 0 : unexpected(p, kw);
}

/* A token after a complete statement. */
static int leftover(parser *p)
{
    return err_validation(p->err, PARTIQL_MALFORMED "Unexpected token after expression");
}

/* Nesting is bounded, so no statement can exhaust the stack. */
static int enter(parser *p)
{
    if (++p->depth > MAX_NESTING)
        return err_validation(
            p->err, PARTIQL_MALFORMED "the statement nests more than %d levels deep", MAX_NESTING);
    return 0;
}

/* ---- nodes ---- */

static void node_free(pq_node *n)
{
    if (n == NULL) return;
    for (size_t i = 0; i < n->nargs; i++)
        node_free(n->args[i]);
    free(n->args);
    json_decref(n->path);
    json_decref(n->value);
    free(n);
}

static pq_node *node_new(parser *p, pq_node_kind kind)
{
    pq_node *n = calloc(1, sizeof *n);
    if (n == NULL)
        err_set(p->err, QR_E_INTERNAL, "out of memory");
    else
        n->kind = kind;
    return n;
}

static int node_add(parser *p, pq_node *n, pq_node *arg)
{
    pq_node **a = realloc(n->args, (n->nargs + 1) * sizeof *a);
    if (a == NULL) {
        node_free(arg);
        return err_set(p->err, QR_E_INTERNAL, "out of memory");
    }
    n->args = a;
    n->args[n->nargs++] = arg;
    return 0;
}

/* A node of kind with the given arguments (all owned; freed on failure). */
static pq_node *node_of(parser *p, pq_node_kind kind, pq_node *a, pq_node *b, pq_node *c)
{
    pq_node *args[3] = {a, b, c};
    pq_node *n = node_new(p, kind);
    for (int i = 0; i < 3; i++) {
        if (args[i] == NULL) continue;
        if (n == NULL) {
            node_free(args[i]);
        } else if (node_add(p, n, args[i])) { /* node_add freed args[i] */
            node_free(n);
            n = NULL;
        }
    }
    return n;
}

/* ---- values ---- */

static json_t *parse_value(parser *p, const char *path);
static const char *at(const parser *p, const token *t, char *out, size_t cap);

static json_t *av(const char *type, json_t *payload)
{
    if (payload == NULL) return NULL;
    json_t *v = json_object();
    if (v && json_object_set_new(v, type, payload) == 0) return v;
    json_decref(v);
    return NULL;
}

static json_t *string_av(parser *p, const token *t)
{
    json_t *s = json_stringn(t->text, t->len);
    if (s == NULL) {
        err_validation(p->err, PARTIQL_MALFORMED "the string at position %zu is not valid UTF-8",
                       t->pos + 1);
        return NULL;
    }
    return av("S", s);
}

static json_t *take_param(parser *p)
{
    if (p->nparam >= json_array_size(p->params)) {
        err_validation(p->err, QR_MSG_PQ_PARAM_COUNT);
        return NULL;
    }
    return json_deep_copy(json_array_get(p->params, p->nparam++));
}

static int member_cmp(const void *a, const void *b)
{
    int cmp = 0;
    value_compare(*(const json_t *const *)a, *(const json_t *const *)b, &cmp);
    return cmp;
}

/* Refuses a set whose members (AttributeValues, all S, all N or all B) repeat one,
 * numbers compared by value, in the words DynamoDB answers a PartiQL set literal with:
 * the members as written for a string set (a binary one adds its type), none for a
 * number set. Sorted, so that thousands of ? members cost n log n comparisons. */
static int set_unique(parser *p, const char *type, json_t *members)
{
    size_t n = json_array_size(members);
    int dup = 0;
    const json_t **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (sorted == NULL) return err_set(p->err, QR_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(members, i);
    qsort(sorted, n, sizeof *sorted, member_cmp);
    for (size_t i = 1; i < n && !dup; i++)
        dup = member_cmp(&sorted[i - 1], &sorted[i]) == 0;
    free(sorted);
    if (!dup) return 0;
    if (strcmp(type, "NS") == 0)
        return err_validation(p->err, "Input collection contains duplicates");
    buf shown;
    buf_init(&shown, 0);
    for (size_t i = 0; i < n && shown.len < 512; i++)
        buf_printf(&shown, "%s%s", i ? ", " : "",
                   json_string_value(value_payload(json_array_get(members, i))));
    int rc =
        err_validation(p->err,
                       QR_MSG_INVALID_PARAMETER "Input collection [%.600s]%s "
                                                "contains duplicates.",
                       shown.data ? shown.data : "", strcmp(type, "BS") == 0 ? "of type BS" : "");
    buf_free(&shown);
    return rc;
}

/* <<v, ...>>: a string, number or binary set; path names it in messages. */
static json_t *parse_set(parser *p, const char *path)
{
    json_t *members = json_array(), *elems = json_array();
    const char *type = NULL;
    if (members == NULL || elems == NULL) goto fail;
    if (!is_punct(peek(p), ">>")) {
        do {
            json_t *v = parse_value(p, path);
            if (v == NULL) goto fail;
            qr_type t = value_type(v);
            const char *st = t == QR_T_S ? "SS" : t == QR_T_N ? "NS" : t == QR_T_B ? "BS" : NULL;
            if (st == NULL || (type && strcmp(type, st) != 0)) {
                json_decref(v);
                err_validation(p->err, "Unsupported data type in Bag. DynamoDB only supports "
                                       "either numbers or strings in bags");
                goto fail;
            }
            type = st;
            json_array_append(elems, value_payload(v));
            json_array_append_new(members, v);
        } while (accept_punct(p, ","));
    }
    if (expect_punct(p, ">>")) goto fail;
    if (type == NULL) {
        err_validation(p->err, "Empty bags are not supported");
        goto fail;
    }
    if (set_unique(p, type, members)) goto fail;
    json_decref(members);
    return av(type, elems);
fail:
    json_decref(members);
    json_decref(elems);
    return NULL;
}

/* [v, ...] with the [ already seen; path names it in messages. */
static json_t *parse_list(parser *p, const char *path)
{
    json_t *list = json_array();
    if (list == NULL) return NULL;
    if (!is_punct(peek(p), "]")) {
        do {
            char at[PATH_SHOWN];
            snprintf(at, sizeof at, "%s[%zu]", path ? path : "root", json_array_size(list));
            json_t *v = parse_value(p, at);
            if (v == NULL || json_array_append_new(list, v)) goto fail;
        } while (accept_punct(p, ","));
    }
    if (expect_punct(p, "]")) goto fail;
    return av("L", list);
fail:
    json_decref(list);
    return NULL;
}

/* One 'key': value of a map literal; path names the map in messages. */
static int parse_map_entry(parser *p, json_t *map, const char *path)
{
    token *k = peek(p);
    if (k->kind != T_STRING) {
        if (k->kind == T_EOF || k->kind == T_PUNCT) return unexpected(p, "a string key");
        return err_validation(p->err, "Tuple keys must be of type String. Actual type: %s under %s",
                              k->kind == T_NUMBER ? "DECIMAL" : "SYMBOL", "tuple");
    }
    next(p);
    if (strlen(k->text) != k->len)
        return err_validation(p->err, PARTIQL_MALFORMED "a key holds a NUL character");
    json_t *probe = json_stringn(k->text, k->len);
    json_decref(probe);
    if (probe == NULL)
        return err_validation(
            p->err, PARTIQL_MALFORMED "the key at position %zu is not valid UTF-8", k->pos + 1);
    if (json_object_get(map, k->text))
        return err_validation(p->err, "Duplicate keys in tuple. Key: %.200s under tuple", k->text);
    if (expect_punct(p, ":")) return -1;
    char at[PATH_SHOWN];
    if (path)
        snprintf(at, sizeof at, "%s.%s", path, k->text);
    else
        snprintf(at, sizeof at, "root");
    json_t *v = parse_value(p, at);
    if (v == NULL) return -1;
    return json_object_set_new(map, k->text, v) ? err_set(p->err, QR_E_INTERNAL, "out of memory")
                                                : 0;
}

/* {'key': v, ...} with the { already seen; path names it in messages. */
static json_t *parse_map(parser *p, const char *path)
{
    json_t *map = json_object();
    if (map == NULL) return NULL;
    if (!is_punct(peek(p), "}")) {
        do {
            if (parse_map_entry(p, map, path)) goto fail;
        } while (accept_punct(p, ","));
    }
    if (expect_punct(p, "}")) goto fail;
    return av("M", map);
fail:
    json_decref(map);
    return NULL;
}

/* The {"N": ...} of a number literal (sign and token), checked as DynamoDB checks it: an
 * exponent or scale beyond 32 bits is unreadable, a number DynamoDB cannot store is
 * refused with its message and where the literal sits (path). */
static json_t *number_av(parser *p, int neg, const token *n, const char *path)
{
    const char *e = strpbrk(n->text, "eE"), *dot = strchr(n->text, '.');
    long long exp = 0, frac = 0;
    if (dot) frac = (long long)((e ? (size_t)(e - dot) : strlen(dot)) - 1);
    if (e) {
        const char *d = e + 1 + (e[1] == '+' || e[1] == '-');
        for (; *d && exp <= INT32_MAX + 1LL; d++)
            exp = exp * 10 + (*d - '0');
        if (e[1] == '-') exp = -exp;
    }
    if (exp > INT32_MAX || exp < INT32_MIN || frac - exp > INT32_MAX || frac - exp < INT32_MIN) {
        unreadable(p);
        return NULL;
    }
    char *text = malloc(n->len + 2);
    if (text == NULL) return NULL;
    snprintf(text, n->len + 2, "%s%s", neg ? "-" : "", n->text);
    json_t *out = av("N", json_string(text));
    free(text);
    qr_err why;
    err_init(&why);
    if (out && value_validate(out, 1, "number", &why)) {
        err_validation(p->err, "%s under %s", why.msg, path ? path : "root");
        json_decref(out);
        out = NULL;
    }
    err_clear(&why);
    return out;
}

/* Literals: strings, numbers, TRUE/FALSE, NULL, lists, maps and sets, and ? parameters; the
 * grammar around them has document paths and the conditions and functions DynamoDB documents.
 *
 * A literal (or ?); path names where it sits ("root", "root.k", "root[1]"), for the
 * messages about its numbers. NULL: an INSERT's item, each value of which is a root. */
static json_t *parse_value(parser *p, const char *path)
{
    if (enter(p)) return NULL;
    json_t *out = NULL;
    token *t = peek(p);
    if (t->kind == T_STRING) {
        next(p);
        out = string_av(p, t);
    } else if (t->kind == T_NUMBER || (is_punct(t, "-") && peek2(p)->kind == T_NUMBER) ||
               (is_punct(t, "+") && peek2(p)->kind == T_NUMBER)) {
        int neg = is_punct(t, "-");
        if (t->kind == T_PUNCT) next(p);
        out = number_av(p, neg, next(p), path);
    } else if (t->kind == T_PARAM) {
        next(p);
        out = take_param(p);
    } else if (is_kw(t, "TRUE") || is_kw(t, "FALSE")) {
        next(p);
        out = av("BOOL", json_boolean(is_kw(t, "TRUE")));
    } else if (is_kw(t, "NULL")) {
        next(p);
        out = av("NULL", json_true());
    } else if (is_kw(t, "MISSING")) {
        err_validation(p->err, "MISSING must be compared using IS operator");
    } else if (accept_punct(p, "[")) {
        out = parse_list(p, path);
    } else if (accept_punct(p, "{")) {
        out = parse_map(p, path);
    } else if (is_punct(t, "<<")) {
        next(p);
        out = parse_set(p, path);
    } else if (t->kind == T_IDENT && is_punct(peek2(p), "(")) {
        char pos[64];
        err_validation(p->err, "Unsupported data type: %.64s under key %s%s", t->text,
                       path ? path : "root", at(p, t, pos, sizeof pos));
    } else if (is_comparison(t)) {
        err_validation(p->err, PARTIQL_MALFORMED "Unexpected operator");
    } else if (t->kind == T_EOF || (t->kind == T_PUNCT && !is_punct(t, "(") && !is_punct(t, "-") &&
                                    !is_punct(t, "+"))) {
        /* the statement ends, or a token that starts no term: PartiQL's own words */
        err_validation(p->err, PARTIQL_MALFORMED "Unexpected term");
    } else {
        unexpected(p, "a value");
    }
    p->depth--;
    if (out == NULL && p->err->type == NULL) err_set(p->err, QR_E_INTERNAL, "out of memory");
    return out;
}

/* ---- paths ---- */

static int is_name(const token *t)
{
    return t->kind == T_IDENT || t->kind == T_QIDENT;
}

static int name_ok(parser *p, const token *t)
{
    if (t->len == 0) return err_validation(p->err, "Path component cannot be an empty string");
    if (strlen(t->text) != t->len)
        return err_validation(p->err, PARTIQL_MALFORMED "a name holds a NUL character");
    return 0;
}

static json_t *name_json(parser *p, const token *t)
{
    if (name_ok(p, t)) return NULL;
    json_t *s = json_stringn(t->text, t->len);
    if (s == NULL)
        err_validation(p->err, PARTIQL_MALFORMED "the name at position %zu is not valid UTF-8",
                       t->pos + 1);
    return s;
}

/* The words PartiQL's lexer reads as keywords rather than names: SQL-92's and the few
 * PartiQL added (MISSING, PIVOT, the Ion type names, ...), as in the early releases of
 * the reference parser DynamoDB's dialect grew from; sorted for bsearch. After a
 * '.' in a path DynamoDB takes only a name, so m.inner or m.value must be written
 * m."inner" or m."value". */
static const char *const keywords[] = {"absolute",
                                       "action",
                                       "add",
                                       "all",
                                       "allocate",
                                       "alter",
                                       "and",
                                       "any",
                                       "are",
                                       "as",
                                       "asc",
                                       "assertion",
                                       "at",
                                       "authorization",
                                       "avg",
                                       "bag",
                                       "begin",
                                       "between",
                                       "bit",
                                       "bit_length",
                                       "blob",
                                       "bool",
                                       "boolean",
                                       "by",
                                       "cascade",
                                       "cascaded",
                                       "case",
                                       "cast",
                                       "catalog",
                                       "char",
                                       "char_length",
                                       "character",
                                       "character_length",
                                       "check",
                                       "clob",
                                       "close",
                                       "coalesce",
                                       "collate",
                                       "collation",
                                       "column",
                                       "commit",
                                       "connect",
                                       "connection",
                                       "constraint",
                                       "constraints",
                                       "continue",
                                       "convert",
                                       "corresponding",
                                       "count",
                                       "create",
                                       "cross",
                                       "current",
                                       "current_date",
                                       "current_time",
                                       "current_timestamp",
                                       "current_user",
                                       "cursor",
                                       "date",
                                       "date_add",
                                       "date_diff",
                                       "deallocate",
                                       "dec",
                                       "decimal",
                                       "declare",
                                       "default",
                                       "deferrable",
                                       "deferred",
                                       "delete",
                                       "desc",
                                       "describe",
                                       "descriptor",
                                       "diagnostics",
                                       "disconnect",
                                       "distinct",
                                       "domain",
                                       "double",
                                       "drop",
                                       "else",
                                       "end",
                                       "escape",
                                       "except",
                                       "exception",
                                       "exec",
                                       "execute",
                                       "exists",
                                       "external",
                                       "extract",
                                       "false",
                                       "fetch",
                                       "first",
                                       "float",
                                       "for",
                                       "foreign",
                                       "found",
                                       "from",
                                       "full",
                                       "get",
                                       "global",
                                       "go",
                                       "goto",
                                       "grant",
                                       "group",
                                       "having",
                                       "identity",
                                       "immediate",
                                       "in",
                                       "index",
                                       "indicator",
                                       "initially",
                                       "inner",
                                       "input",
                                       "insensitive",
                                       "insert",
                                       "int",
                                       "integer",
                                       "intersect",
                                       "interval",
                                       "into",
                                       "is",
                                       "isolation",
                                       "join",
                                       "key",
                                       "language",
                                       "last",
                                       "left",
                                       "level",
                                       "like",
                                       "limit",
                                       "list",
                                       "local",
                                       "lower",
                                       "match",
                                       "max",
                                       "min",
                                       "missing",
                                       "module",
                                       "names",
                                       "national",
                                       "natural",
                                       "nchar",
                                       "next",
                                       "no",
                                       "not",
                                       "null",
                                       "nullif",
                                       "numeric",
                                       "octet_length",
                                       "of",
                                       "on",
                                       "only",
                                       "open",
                                       "option",
                                       "or",
                                       "order",
                                       "outer",
                                       "output",
                                       "overlaps",
                                       "pad",
                                       "partial",
                                       "pivot",
                                       "position",
                                       "precision",
                                       "prepare",
                                       "preserve",
                                       "primary",
                                       "prior",
                                       "privileges",
                                       "procedure",
                                       "public",
                                       "read",
                                       "real",
                                       "references",
                                       "relative",
                                       "remove",
                                       "restrict",
                                       "revoke",
                                       "right",
                                       "rollback",
                                       "rows",
                                       "schema",
                                       "scroll",
                                       "section",
                                       "select",
                                       "session",
                                       "session_user",
                                       "set",
                                       "sexp",
                                       "size",
                                       "smallint",
                                       "some",
                                       "space",
                                       "sql",
                                       "sqlcode",
                                       "sqlerror",
                                       "sqlstate",
                                       "string",
                                       "struct",
                                       "substring",
                                       "sum",
                                       "symbol",
                                       "system_user",
                                       "table",
                                       "temporary",
                                       "then",
                                       "time",
                                       "timestamp",
                                       "to",
                                       "transaction",
                                       "translate",
                                       "translation",
                                       "trim",
                                       "true",
                                       "tuple",
                                       "union",
                                       "unique",
                                       "unknown",
                                       "unpivot",
                                       "update",
                                       "upper",
                                       "usage",
                                       "user",
                                       "using",
                                       "value",
                                       "values",
                                       "varchar",
                                       "varying",
                                       "view",
                                       "when",
                                       "whenever",
                                       "where",
                                       "with",
                                       "work",
                                       "write",
                                       "zone"};

static int keyword_cmp(const void *key, const void *elem)
{
    return strcasecmp((const char *)key, *(const char *const *)elem);
}

/* True if t is a bare word PartiQL reads as a keyword. */
static int is_keyword(const token *t)
{
    return t->kind == T_IDENT && bsearch(t->text, keywords, sizeof keywords / sizeof keywords[0],
                                         sizeof keywords[0], keyword_cmp) != NULL;
}

/* name ( .name | [index] | ['key'] )* */
static pq_node *parse_path(parser *p)
{
    token *t = peek(p);
    if (!is_name(t)) {
        unexpected(p, "an attribute name");
        return NULL;
    }
    next(p);
    pq_node *n = node_new(p, PQN_PATH);
    if (n == NULL) return NULL;
    n->path = json_array();
    json_t *first = name_json(p, t);
    if (n->path == NULL || first == NULL) goto fail;
    json_array_append_new(n->path, first);
    for (;;) {
        if (json_array_size(n->path) > 256) {
            err_validation(p->err, PARTIQL_MALFORMED "a path has too many components");
            goto fail;
        }
        if (accept_punct(p, ".")) {
            token *c = peek(p);
            if (is_keyword(c)) {
                err_validation(p->err, PARTIQL_MALFORMED "Invalid path dot component");
                goto fail;
            }
            if (!is_name(c)) {
                unexpected(p, "an attribute name after '.'");
                goto fail;
            }
            next(p);
            json_t *s = name_json(p, c);
            if (s == NULL) goto fail;
            json_array_append_new(n->path, s);
        } else if (accept_punct(p, "[")) {
            token *c = peek(p);
            if (c->kind == T_NUMBER) {
                for (size_t i = 0; i < c->len; i++)
                    if (!isdigit((unsigned char)c->text[i]) || c->len > 9) {
                        err_validation(
                            p->err, "List index is not within the allowable range; index: [%.20s]",
                            c->text);
                        goto fail;
                    }
                json_array_append_new(n->path, json_integer(atol(c->text)));
            } else if (c->kind == T_STRING) {
                json_t *s = name_json(p, c);
                if (s == NULL) goto fail;
                json_array_append_new(n->path, s);
            } else {
                unexpected(p, "a list index or a quoted key");
                goto fail;
            }
            next(p);
            if (expect_punct(p, "]")) goto fail;
        } else {
            return n;
        }
    }
fail:
    node_free(n);
    return NULL;
}

/* ---- conditions ---- */

static pq_node *parse_cond(parser *p);

static int starts_function(parser *p, const char *name)
{
    return is_kw(peek(p), name) && is_punct(peek2(p), "(");
}

/* fn ( [operand , ...] ): the name and ( are the next tokens; the caller checks the
 * arguments' number (nargs: the number it takes, or 0 for the caller to check). */
static pq_node *parse_call(parser *p, const char *fn, size_t nargs);

/* " at line:column:length" for token t, in characters from 1, as DynamoDB points at a
 * token in some of its messages. */
static const char *at(const parser *p, const token *t, char *out, size_t cap)
{
    size_t line = 1, col = 1, len = 0;
    for (size_t i = 0; i < t->pos && i < p->srclen; i++) {
        unsigned char c = (unsigned char)p->src[i];
        if (c == '\n') {
            line++;
            col = 1;
        } else if ((c & 0xc0) != 0x80) {
            col++;
        }
    }
    for (size_t i = t->pos; i < p->srclen && i < t->pos + t->len; i++)
        len += ((unsigned char)p->src[i] & 0xc0) != 0x80;
    snprintf(out, cap, " at %zu:%zu:%zu", line, col, len);
    return out;
}

/* A name followed by ( that is no function here. */
static int unrecognized(parser *p, const token *t)
{
    char name[65], pos[64];
    size_t i = 0;
    for (; i + 1 < sizeof name && t->text[i]; i++)
        name[i] = (char)tolower((unsigned char)t->text[i]);
    name[i] = '\0';
    return err_validation(p->err, "Unrecognized function: %s%s", name, at(p, t, pos, sizeof pos));
}

/* True if t is a bare word that begins or names a clause of a statement. */
static int is_clause_word(const token *t)
{
    static const char *const clauses[] = {"SELECT", "FROM",   "WHERE",     "ORDER",  "BY",
                                          "SET",    "REMOVE", "RETURNING", "INSERT", "INTO",
                                          "UPDATE", "DELETE", NULL};
    for (int i = 0; t->kind == T_IDENT && clauses[i]; i++)
        if (is_kw(t, clauses[i])) return 1;
    return 0;
}

/* After an infix operator (AND, OR, a comparison, BETWEEN, IN, + or -): the statement
 * must go on, in PartiQL's words when it does not. */
static int rhs_follows(parser *p)
{
    if (peek(p)->kind != T_EOF) return 0;
    return err_validation(p->err,
                          PARTIQL_MALFORMED "Missing right-hand side expression of infix operator");
}

/* True if t names a type of PartiQL's (its words, and the first word of DOUBLE PRECISION
 * and CHARACTER VARYING), which IS may test for though DynamoDB supports only some. */
static int is_type_name(const token *t)
{
    static const char *const types[] = {
        "ANY",     "BAG",  "BIGINT",    "BLOB",    "BOOL",     "BOOLEAN",  "CHAR",     "CHARACTER",
        "CLOB",    "DATE", "DEC",       "DECIMAL", "DOUBLE",   "ES_ANY",   "FLOAT",    "INT",
        "INT2",    "INT4", "INT8",      "INTEGER", "INTEGER2", "INTEGER4", "INTEGER8", "LIST",
        "MISSING", "NULL", "NUMERIC",   "REAL",    "SEXP",     "SMALLINT", "STRING",   "STRUCT",
        "SYMBOL",  "TIME", "TIMESTAMP", "TUPLE",   "VARCHAR",  NULL};
    for (int i = 0; t->kind == T_IDENT && types[i]; i++)
        if (is_kw(t, types[i])) return 1;
    return 0;
}

/* A word where a term should start that PartiQL reads as an operator, or as a clause of
 * a statement: no name, as PartiQL's parser says. (Other keywords are taken as names
 * here, as the lenient reading.) */
static int term_word(parser *p, const token *t)
{
    static const char *const operators[] = {"AND", "OR", "IS", "IN", "LIKE", "BETWEEN", NULL};
    for (int i = 0; t->kind == T_IDENT && operators[i]; i++)
        if (is_kw(t, operators[i]))
            return err_validation(p->err, PARTIQL_MALFORMED "Unexpected operator");
    if (is_clause_word(t)) return err_validation(p->err, PARTIQL_MALFORMED "Unexpected keyword");
    return 0;
}

/* A path, a value, or size(path). */
static pq_node *parse_operand(parser *p)
{
    token *t = peek(p);
    if (term_word(p, t)) return NULL;
    if (starts_function(p, "size")) return parse_call(p, "size", 1);
    if (t->kind == T_QIDENT || (t->kind == T_IDENT && !is_kw(t, "TRUE") && !is_kw(t, "FALSE") &&
                                !is_kw(t, "NULL") && !is_kw(t, "MISSING"))) {
        if (t->kind == T_IDENT && is_punct(peek2(p), "(")) {
            unrecognized(p, t);
            return NULL;
        }
        return parse_path(p);
    }
    json_t *v = parse_value(p, "root");
    if (v == NULL) return NULL;
    pq_node *n = node_new(p, PQN_VALUE);
    if (n == NULL) {
        json_decref(v);
        return NULL;
    }
    n->value = v;
    return n;
}

static pq_node *parse_call(parser *p, const char *fn, size_t nargs)
{
    next(p);                   /* the name */
    next(p);                   /* ( */
    if (enter(p)) return NULL; /* size(size(...)) nests */
    pq_node *n = node_new(p, PQN_FUNC);
    if (n == NULL) goto fail;
    snprintf(n->fn, sizeof n->fn, "%s", fn);
    if (!is_punct(peek(p), ")")) {
        do {
            pq_node *a = parse_operand(p);
            if (a == NULL || node_add(p, n, a)) goto fail;
        } while (accept_punct(p, ","));
    }
    if (expect_punct(p, ")")) goto fail;
    if (nargs && n->nargs != nargs) {
        err_validation(p->err,
                       "Incorrect number of operands for operator or function; operator or "
                       "function: %s, number of operands: %zu",
                       fn, n->nargs);
        goto fail;
    }
    if (strncmp(fn, "attribute_", 10) == 0 && strcmp(fn, "attribute_type") != 0 &&
        n->args[0]->kind != PQN_PATH) {
        err_validation(
            p->err, "Operator or function requires a document path; operator or function: %s", fn);
        goto fail;
    }
    p->depth--;
    return n;
fail:
    node_free(n);
    p->depth--;
    return NULL;
}

/* A condition function may be compared with TRUE or FALSE: f(...) = TRUE is f(...),
 * f(...) = FALSE (or <> TRUE) is NOT f(...). Takes and returns ownership of c. */
static pq_node *compared_to_bool(parser *p, pq_node *c)
{
    token *op = peek(p), *v = peek2(p);
    if (c == NULL || !(is_punct(op, "=") || is_punct(op, "<>") || is_punct(op, "!=")) ||
        !(is_kw(v, "TRUE") || is_kw(v, "FALSE")))
        return c;
    int keep = is_punct(op, "=") == is_kw(v, "TRUE");
    next(p);
    next(p);
    return keep ? c : node_of(p, PQN_NOT, c, NULL, NULL);
}

static const char *comparator(const token *t)
{
    static const char *const ops[] = {"=", "<>", "!=", "<", "<=", ">", ">=", NULL};
    if (t->kind != T_PUNCT) return NULL;
    for (int i = 0; ops[i]; i++)
        if (strcmp(t->text, ops[i]) == 0) return strcmp(ops[i], "!=") == 0 ? "<>" : ops[i];
    return NULL;
}

static pq_node *parse_predicate(parser *p)
{
    if (accept_punct(p, "(")) {
        pq_node *c = parse_cond(p);
        if (c && expect_punct(p, ")")) {
            node_free(c);
            return NULL;
        }
        return c;
    }
    static const struct {
        const char *name;
        size_t nargs;
    } funcs[] = {{"begins_with", 2},          {"contains", 2},
                 {"attribute_type", 2},       {"attribute_exists", 1},
                 {"attribute_not_exists", 1}, {NULL, 0}};
    for (int i = 0; funcs[i].name; i++)
        if (starts_function(p, funcs[i].name))
            return compared_to_bool(p, parse_call(p, funcs[i].name, funcs[i].nargs));
    if (starts_function(p, "exists")) {
        if (is_kw(&p->toks[p->at + 2 < p->ntoks ? p->at + 2 : p->at], "SELECT"))
            err_validation(p->err, "EXISTS can only be used in ExecuteTransaction write requests.");
        else
            unrecognized(p, peek(p));
        return NULL;
    }
    pq_node *l = parse_operand(p);
    if (l == NULL) return NULL;
    const char *op = comparator(peek(p));
    if (op) {
        next(p);
        pq_node *r = rhs_follows(p) ? NULL : parse_operand(p);
        pq_node *n = r ? node_of(p, PQN_CMP, l, r, NULL) : (node_free(l), NULL);
        if (n) snprintf(n->op, sizeof n->op, "%s", op);
        return n;
    }
    if (accept_kw(p, "BETWEEN")) {
        pq_node *lo = rhs_follows(p) ? NULL : parse_operand(p), *hi = NULL;
        if (lo && expect_kw(p, "AND") == 0) {
            if (peek(p)->kind == T_EOF)
                err_validation(p->err, PARTIQL_MALFORMED "Expected expression after AND");
            else
                hi = parse_operand(p);
        }
        if (hi == NULL) {
            node_free(l);
            node_free(lo);
            return NULL;
        }
        return node_of(p, PQN_BETWEEN, l, lo, hi);
    }
    if (accept_kw(p, "IN")) {
        if (rhs_follows(p)) {
            node_free(l);
            return NULL;
        }
        const char *close = accept_punct(p, "[") ? "]" : accept_punct(p, "(") ? ")" : NULL;
        pq_node *n = node_of(p, PQN_IN, l, NULL, NULL);
        if (n == NULL) return NULL;
        if (close == NULL || is_punct(peek(p), close)) {
            err_validation(
                p->err,
                "IN operator must have a left hand argument of type Variable Reference and right "
                "hand argument of type Seq with at least one member");
            node_free(n);
            return NULL;
        }
        do {
            pq_node *v = parse_operand(p);
            if (v == NULL || node_add(p, n, v)) {
                node_free(n);
                return NULL;
            }
        } while (accept_punct(p, ","));
        if (expect_punct(p, close)) {
            node_free(n);
            return NULL;
        }
        return n;
    }
    if (accept_kw(p, "IS")) {
        /* PartiQL's type names, as DynamoDB types */
        static const char *const types[][2] = {
            {"NULL", "NULL"}, {"BOOLEAN", "BOOL"}, {"BOOL", "BOOL"}, {"BLOB", "B"}, {"STRING", "S"},
            {"NUMERIC", "N"}, {"STRUCT", "M"},     {"TUPLE", "M"},   {"LIST", "L"}, {NULL, NULL}};
        pq_node *n = node_of(p, PQN_IS, l, NULL, NULL);
        if (n == NULL) return NULL;
        n->negated = accept_kw(p, "NOT");
        int found = accept_kw(p, "MISSING");
        for (int i = 0; !found && types[i][0]; i++)
            if (accept_kw(p, types[i][0])) {
                snprintf(n->is_type, sizeof n->is_type, "%s", types[i][1]);
                found = 1;
            }
        if (!found) {
            token *t = peek(p);
            if (!is_type_name(t))
                err_validation(p->err, PARTIQL_MALFORMED "Expected type name");
            else
                err_validation(
                    p->err,
                    "Unsupported data type for IS operator: %.40s. Supported data types are "
                    "[MISSING, NULL, BOOLEAN, BLOB, STRING, NUMERIC, STRUCT, TUPLE, LIST]",
                    t->text);
            node_free(n);
            return NULL;
        }
        if (l->kind != PQN_PATH) {
            err_validation(
                p->err,
                "The left hand side argument to IS must be a Variable Reference, Literal, or Path");
            node_free(n);
            return NULL;
        }
        return n;
    }
    unexpected(p, "a comparison");
    node_free(l);
    return NULL;
}

static pq_node *parse_not(parser *p)
{
    if (enter(p)) return NULL;
    pq_node *n;
    if (accept_kw(p, "NOT")) {
        pq_node *a = parse_not(p);
        n = a ? node_of(p, PQN_NOT, a, NULL, NULL) : NULL;
    } else {
        n = parse_predicate(p);
    }
    p->depth--;
    return n;
}

static pq_node *parse_and(parser *p)
{
    pq_node *l = parse_not(p);
    while (l && accept_kw(p, "AND")) {
        pq_node *r = rhs_follows(p) ? NULL : parse_not(p);
        l = r ? node_of(p, PQN_AND, l, r, NULL) : (node_free(l), NULL);
    }
    return l;
}

static pq_node *parse_cond(parser *p)
{
    if (enter(p)) return NULL;
    pq_node *l = parse_and(p);
    while (l && accept_kw(p, "OR")) {
        pq_node *r = rhs_follows(p) ? NULL : parse_and(p);
        l = r ? node_of(p, PQN_OR, l, r, NULL) : (node_free(l), NULL);
    }
    p->depth--;
    return l;
}

/* ---- statements ---- */

static int parse_table(parser *p, pq_stmt *s, int allow_index)
{
    token *t = peek(p);
    if (!is_name(t) || is_clause_word(t)) {
        /* PartiQL reads DELETE's table as a simple path, SELECT's FROM as a term */
        if (s->kind == PQ_DELETE)
            return err_validation(p->err, PARTIQL_MALFORMED "Expected identifier for simple path");
        if (s->kind == PQ_SELECT && is_clause_word(t))
            return err_validation(p->err, PARTIQL_MALFORMED "Unexpected keyword");
        if (s->kind == PQ_SELECT && (t->kind == T_EOF || t->kind == T_PUNCT))
            return err_validation(p->err, PARTIQL_MALFORMED "Unexpected term");
        if (!is_name(t)) return unexpected(p, "a table name");
    }
    next(p);
    if (name_ok(p, t)) return -1;
    s->table = strdup(t->text);
    if (s->table == NULL) return err_set(p->err, QR_E_INTERNAL, "out of memory");
    if (accept_punct(p, ".")) {
        token *i = peek(p);
        if (!is_name(i)) return unexpected(p, "an index name");
        if (!allow_index)
            return err_validation(
                p->err,
                "FROM clause may only contain a single table name in data manipulation statements");
        next(p);
        if (name_ok(p, i)) return -1;
        s->index = strdup(i->text);
        if (s->index == NULL) return err_set(p->err, QR_E_INTERNAL, "out of memory");
        if (is_punct(peek(p), "."))
            return err_validation(p->err,
                                  "A path may contain at most 2 components in the FROM clause");
    }
    return 0;
}

/* A name (or AS name) after the table is an alias, which DynamoDB refuses. */
static int no_alias(parser *p)
{
    static const char *const clauses[] = {"WHERE", "ORDER", "SET", "REMOVE", "RETURNING", NULL};
    token *t = peek(p);
    if (!is_name(t)) return 0;
    for (int i = 0; t->kind == T_IDENT && clauses[i]; i++)
        if (is_kw(t, clauses[i])) return 0;
    return err_validation(p->err, "Aliasing is not supported");
}

static int parse_where(parser *p, pq_stmt *s)
{
    s->where = parse_cond(p);
    return s->where ? 0 : -1;
}

/* A call in SELECT's projection (COUNT(*), attribute_exists(a), ...), which DynamoDB
 * refuses only once it has found the table and index it reads: its message is kept for
 * then (the first call's), and the call is passed over to its closing parenthesis. */
static int skip_call(parser *p, pq_stmt *s)
{
    char pos[64];
    if (s->proj_error == NULL) {
        char msg[96];
        snprintf(msg, sizeof msg, "Unexpected path component%s", at(p, peek(p), pos, sizeof pos));
        if ((s->proj_error = strdup(msg)) == NULL)
            return err_set(p->err, QR_E_INTERNAL, "out of memory");
    }
    next(p); /* the name */
    next(p); /* ( */
    for (int open = 1; open > 0;) {
        token *t = next(p);
        if (t->kind == T_EOF) return unexpected(p, "')'");
        open += is_punct(t, "(") - is_punct(t, ")");
    }
    return 0;
}

static int parse_select(parser *p, pq_stmt *s)
{
    if (accept_punct(p, "*")) {
        if (is_punct(peek(p), ","))
            return err_validation(
                p->err,
                "Other attributes should not be present in the projection when '*' is used.");
    } else {
        do {
            if (is_punct(peek(p), "*"))
                return err_validation(
                    p->err,
                    "Other attributes should not be present in the projection when '*' is used.");
            if (peek(p)->kind == T_IDENT && is_punct(peek2(p), "(")) {
                if (skip_call(p, s)) return -1;
                continue;
            }
            pq_node *path = parse_path(p);
            if (path == NULL) return -1;
            pq_node **a = realloc(s->proj, (s->nproj + 1) * sizeof *a);
            if (a == NULL) {
                node_free(path);
                return err_set(p->err, QR_E_INTERNAL, "out of memory");
            }
            s->proj = a;
            s->proj[s->nproj++] = path;
            if (is_kw(peek(p), "AS")) return err_validation(p->err, "Aliasing is not supported");
        } while (accept_punct(p, ","));
    }
    if (expect_kw(p, "FROM") || parse_table(p, s, 1) || no_alias(p)) return -1;
    if (accept_kw(p, "WHERE") && parse_where(p, s)) return -1;
    if (accept_kw(p, "ORDER")) {
        if (expect_kw(p, "BY")) return -1;
        do {
            token *k = peek(p);
            if (!is_name(k)) return unexpected(p, "a key attribute name");
            next(p);
            int desc = accept_kw(p, "DESC");
            if (!desc) accept_kw(p, "ASC");
            if (s->order_by == NULL) {
                s->order_by = strdup(k->text);
                s->order_desc = desc;
                if (s->order_by == NULL) return err_set(p->err, QR_E_INTERNAL, "out of memory");
            }
        } while (accept_punct(p, ","));
        /* (a WHERE after ORDER BY is a token left over) */
        if (s->where == NULL && !is_kw(peek(p), "WHERE"))
            return err_validation(
                p->err, "Must have WHERE clause in the statement when using ORDER BY clause.");
    }
    return 0;
}

/* Appends a to UPDATE's actions, which then own its nodes (freed on failure). */
static int add_action(parser *p, pq_stmt *s, pq_action a)
{
    pq_action *list = realloc(s->actions, (s->nactions + 1) * sizeof *list);
    if (list == NULL) {
        node_free(a.target);
        node_free(a.value);
        return err_set(p->err, QR_E_INTERNAL, "out of memory");
    }
    s->actions = list;
    s->actions[s->nactions++] = a;
    return 0;
}

/* The right side of SET path = ...: a value or path, a sum or difference of two, or
 * list_append / set_add / set_delete. */
static int parse_set_action(parser *p, pq_stmt *s, pq_node *target)
{
    pq_action a = {PQA_SET, target, NULL};
    if (starts_function(p, "list_append")) {
        a.value = parse_call(p, "list_append", 2);
    } else if (starts_function(p, "set_add") || starts_function(p, "set_delete")) {
        int add = starts_function(p, "set_add");
        token *name = peek(p), *first = &p->toks[p->at + 2 < p->ntoks ? p->at + 2 : p->at];
        char pos[64];
        pq_node *call = parse_call(p, add ? "set_add" : "set_delete", 0);
        if (call == NULL) goto fail;
        const char *fn = add ? "ADD" : "DELETE";
        const char *why = NULL;
        if (call->nargs != 2)
            why = "SET_%s must have exactly two arguments%s";
        else if (call->args[0]->kind != PQN_PATH || !json_equal(call->args[0]->path, target->path))
            why = "The first argument to SET_%s must equal the assignment value%s";
        if (why == NULL) {
            qr_type t =
                call->args[1]->kind == PQN_VALUE ? value_type(call->args[1]->value) : QR_T_NONE;
            if (t != QR_T_SS && t != QR_T_NS && t != QR_T_BS) {
                node_free(call);
                err_validation(p->err,
                               "The second argument to SET_%s must be a value with type SET%s", fn,
                               at(p, first, pos, sizeof pos));
                goto fail;
            }
        } else {
            node_free(call);
            err_validation(p->err, why, fn, at(p, name, pos, sizeof pos));
            goto fail;
        }
        a.kind = add ? PQA_ADD : PQA_DELETE;
        a.value = call->args[1];
        call->args[1] = NULL;
        call->nargs = 1;
        node_free(call);
    } else {
        pq_node *l = parse_operand(p);
        if (l && (is_punct(peek(p), "+") || is_punct(peek(p), "-"))) {
            int plus = is_punct(next(p), "+");
            pq_node *r = rhs_follows(p) ? NULL : parse_operand(p);
            l = r ? node_of(p, plus ? PQN_ADD : PQN_SUB, l, r, NULL) : (node_free(l), NULL);
        }
        a.value = l;
    }
    if (a.value == NULL) goto fail;
    return add_action(p, s, a);
fail:
    node_free(target);
    return -1;
}

/* UPDATE's SET and REMOVE clauses, one or more, in any order. */
static int parse_actions(parser *p, pq_stmt *s)
{
    for (;;) {
        if (accept_kw(p, "SET")) {
            do {
                pq_node *target = parse_path(p);
                if (target == NULL) return -1;
                if (expect_punct(p, "=")) {
                    node_free(target);
                    return -1;
                }
                if (parse_set_action(p, s, target)) return -1;
            } while (accept_punct(p, ","));
        } else if (accept_kw(p, "REMOVE")) {
            do {
                pq_node *target = parse_path(p);
                if (target == NULL || add_action(p, s, (pq_action){PQA_REMOVE, target, NULL}))
                    return -1;
            } while (accept_punct(p, ","));
        } else {
            break;
        }
    }
    if (s->nactions) return 0;
    token *t = peek(p);
    if (t->kind == T_IDENT && !is_kw(t, "WHERE") && !is_kw(t, "RETURNING"))
        return err_validation(
            p->err, "Only SET and REMOVE are supported in update expressions at this time");
    return unexpected(p, "SET or REMOVE");
}

/* UPDATE table SET ... | REMOVE ... WHERE cond */
static int parse_update(parser *p, pq_stmt *s)
{
    if (parse_table(p, s, 1) || no_alias(p) || parse_actions(p, s))
        return -1; /* (an index is refused when translated) */
    if (!accept_kw(p, "WHERE")) {
        if (peek(p)->kind == T_EOF) return err_validation(p->err, QR_MSG_PQ_KEY_EQUALITY);
        return unexpected(p, "SET, REMOVE or WHERE");
    }
    return parse_where(p, s);
}

/* PartiQL's FROM-first UPDATE: FROM table WHERE cond SET ... | REMOVE ... */
static int parse_from_update(parser *p, pq_stmt *s)
{
    if (parse_table(p, s, 1) || no_alias(p)) return -1;
    if (!accept_kw(p, "WHERE")) {
        if (!is_kw(peek(p), "SET") && !is_kw(peek(p), "REMOVE") && peek(p)->kind != T_EOF)
            return unexpected(p, "WHERE");
        /* the actions with no WHERE before them: a WHERE after them is a token left over */
        if (peek(p)->kind != T_EOF && parse_actions(p, s)) return -1;
        accept_punct(p, ";");
        if (peek(p)->kind != T_EOF) return leftover(p);
        return err_validation(p->err, QR_MSG_PQ_KEY_EQUALITY);
    }
    return parse_where(p, s) || parse_actions(p, s) ? -1 : 0;
}

static int parse_returning(parser *p, pq_stmt *s)
{
    if (!accept_kw(p, "RETURNING")) return 0;
    if (s->kind == PQ_SELECT || s->kind == PQ_EXISTS) return leftover(p);
    if (s->kind == PQ_INSERT) return err_validation(p->err, "RETURNING is not supported in INSERT");
    int all = accept_kw(p, "ALL");
    if (!all && !accept_kw(p, "MODIFIED")) return unexpected(p, "ALL or MODIFIED");
    int new = accept_kw(p, "NEW");
    if (!new && !accept_kw(p, "OLD")) return unexpected(p, "NEW or OLD");
    if (!accept_punct(p, "*"))
        return err_validation(
            p->err, "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause");
    if (is_punct(peek(p), ","))
        return err_validation(
            p->err, "Invalid syntax with multiple returning elements in RETURNING clause");
    s->returning = all ? (new ? "ALL_NEW" : "ALL_OLD") : (new ? "UPDATED_NEW" : "UPDATED_OLD");
    if (s->kind == PQ_DELETE && strcmp(s->returning, "ALL_OLD") != 0)
        return err_validation(
            p->err,
            "Invalid returning clause: RETURNING %s %s *. Only RETURNING ALL OLD * is allowed in "
            "DELETE statements.",
            all ? "ALL" : "MODIFIED", new ? "NEW" : "OLD");
    return 0;
}

/* True if the statement, from where the parser stands, is no more than a type test of a
 * path, "<path> IS [NOT] <type name>": PartiQL reads it as an expression, which DynamoDB
 * refuses as an operation it does not support rather than as a malformed statement. */
static int bare_type_test(parser *p)
{
    size_t i = p->at;
    const token *t = &p->toks[i];
    if ((t->kind != T_IDENT && t->kind != T_QIDENT) || is_clause_word(t) || is_kw(t, "IS"))
        return 0;
    for (i++;;) {
        t = &p->toks[i];
        if (is_punct(t, ".") && (t[1].kind == T_IDENT || t[1].kind == T_QIDENT))
            i += 2;
        else if (is_punct(t, "[") && t[1].kind == T_NUMBER && is_punct(&t[2], "]"))
            i += 3;
        else
            break;
    }
    if (!is_kw(&p->toks[i++], "IS")) return 0;
    if (is_kw(&p->toks[i], "NOT")) i++;
    t = &p->toks[i++];
    if (!is_type_name(t)) return 0;
    if (is_kw(t, "DOUBLE") && !is_kw(&p->toks[i++], "PRECISION")) return 0;
    if (is_kw(t, "CHARACTER") && is_kw(&p->toks[i], "VARYING")) i++;
    if (is_punct(&p->toks[i], ";")) i++;
    return p->toks[i].kind == T_EOF;
}

static int parse_statement(parser *p, pq_stmt *s)
{
    if (accept_kw(p, "SELECT")) {
        s->kind = PQ_SELECT;
        if (parse_select(p, s)) return -1;
    } else if (accept_kw(p, "EXISTS")) {
        s->kind = PQ_EXISTS;
        if (expect_punct(p, "(") || expect_kw(p, "SELECT") || parse_select(p, s) ||
            expect_punct(p, ")"))
            return -1;
    } else if (accept_kw(p, "INSERT")) {
        s->kind = PQ_INSERT;
        if (expect_kw(p, "INTO") || parse_table(p, s, 0)) return -1;
        if (is_kw(peek(p), "VALUES") || is_punct(peek(p), "<<"))
            return err_validation(
                p->err,
                "Unsupported operation: Inserting multiple items in a single statement is not "
                "supported, use \"INSERT INTO tableName VALUE item\" instead");
        if (is_name(peek(p)) && !is_kw(peek(p), "VALUE")) return leftover(p);
        if (expect_kw(p, "VALUE")) return -1;
        json_t *v = parse_value(p, NULL);
        if (v == NULL) return -1;
        if (value_type(v) != QR_T_M) {
            json_decref(v);
            return err_validation(
                p->err,
                "Unsupported format in item expression. Please use struct format {...} to express "
                "item values for insert statement.");
        }
        s->item = json_incref(value_payload(v));
        json_decref(v);
        if (is_kw(peek(p), "WHERE") || is_kw(peek(p), "FROM"))
            return err_validation(p->err,
                                  "Unsupported FROM ... WHERE ... clause in INSERT statement.");
    } else if (accept_kw(p, "UPDATE")) {
        s->kind = PQ_UPDATE;
        if (parse_update(p, s)) return -1;
    } else if (accept_kw(p, "FROM")) {
        s->kind = PQ_UPDATE;
        if (parse_from_update(p, s)) return -1;
    } else if (accept_kw(p, "DELETE")) {
        s->kind = PQ_DELETE;
        if (expect_kw(p, "FROM") || parse_table(p, s, 1) || no_alias(p)) return -1;
        if (!accept_kw(p, "WHERE")) {
            if (peek(p)->kind == T_EOF || is_kw(peek(p), "RETURNING"))
                return err_validation(p->err, QR_MSG_PQ_KEY_EQUALITY);
            return unexpected(p, "WHERE");
        }
        if (parse_where(p, s)) return -1;
    } else if (bare_type_test(p)) {
        return err_validation(p->err, "Unsupported operation: IsType");
    } else {
        return err_validation(p->err, PARTIQL_MALFORMED "Expected data manipulation");
    }
    if (parse_returning(p, s)) return -1;
    accept_punct(p, ";");
    if (peek(p)->kind != T_EOF) {
        if (is_kw(peek(p), "SELECT") || is_kw(peek(p), "INSERT") || is_kw(peek(p), "UPDATE") ||
            is_kw(peek(p), "DELETE"))
            return err_validation(p->err, "Only one operation is allowed in a statement.");
        return leftover(p);
    }
    if (p->nparam != json_array_size(p->params))
        return err_validation(p->err, QR_MSG_PQ_PARAM_COUNT);
    return 0;
}

int partiql_parse(const char *text, size_t len, json_t *params, pq_stmt **out, qr_err *err)
{
    parser p = {.src = text, .srclen = len, .params = params, .err = err};
    *out = NULL;
    pq_stmt *s = calloc(1, sizeof *s);
    int rc = -1;
    if (s == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    if (lex(&p) == 0 && parse_statement(&p, s) == 0) rc = 0;
    for (size_t i = 0; i < p.ntoks; i++)
        free(p.toks[i].text);
    free(p.toks);
    if (rc) {
        if (err->type == NULL) err_set(err, QR_E_INTERNAL, "out of memory");
        partiql_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void partiql_free(pq_stmt *s)
{
    if (s == NULL) return;
    free(s->table);
    free(s->index);
    for (size_t i = 0; i < s->nproj; i++)
        node_free(s->proj[i]);
    free(s->proj);
    node_free(s->where);
    free(s->order_by);
    free(s->proj_error);
    json_decref(s->item);
    for (size_t i = 0; i < s->nactions; i++) {
        node_free(s->actions[i].target);
        node_free(s->actions[i].value);
    }
    free(s->actions);
    free(s);
}
