/* parser.c — the recursive-descent parser of CQL, after Cassandra 4's Parser.g: the DDL of
 * keyspaces, tables, types, indexes and materialized views, the DML (SELECT, INSERT,
 * UPDATE, DELETE, BATCH), USE, TRUNCATE and DESCRIBE, into the tree of ast.h.
 *
 * Errors are Cassandra's SyntaxException messages, worded as its ANTLR parser words them
 * ("line 1:7 no viable alternative at input 'FROM' (SELECT [FROM]...)", "mismatched input
 * ';' expecting K_FROM"), with the snippet its ErrorCollector appends, and the checks its
 * grammar's actions make ("Only expressions of the form X = <value> + X are supported.").
 * Checks against a schema are the executor's. Roles, permissions, functions, aggregates
 * and triggers are refused as statements quarry does not run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cql/lexer.h"
#include "util/buf.h"

#define MAX_DEPTH 100

typedef struct parser {
    const char *src;
    size_t srclen;
    lexed lx;
    size_t *real; /* raw indexes of the tokens that are not hidden, EOF last */
    size_t nreal;
    size_t at;      /* index into real of the token at hand */
    size_t fetched; /* the furthest raw token looked at: ANTLR's stream size less one */
    arena *ar;
    cql_parse_error *err;
    int failed;
    int spec; /* > 0 while trying an alternative: errors are not written */
    int depth;
    cql_bind *binds;
    size_t nbinds, capbinds;
} parser;

/* ---- tokens ---- */

static token *la(parser *p, size_t k)
{
    size_t i = p->at + k;
    if (i >= p->nreal) i = p->nreal - 1;
    size_t raw = p->real[i];
    if (raw > p->fetched) p->fetched = raw;
    return &p->lx.toks[raw];
}
#define CUR(p) la((p), 0)

static void consume(parser *p)
{
    if (p->at + 1 < p->nreal) p->at++;
    (void)la(p, 0);
}

static int is_kw(const token *t, kw_id k)
{
    return t->kind == TK_WORD && t->kw == k;
}
static int is_p(const token *t, const char *s)
{
    return t->kind == TK_PUNCT && strcmp(t->text, s) == 0;
}

static int is_native_kw(kw_id k)
{
    switch (k) {
    case KW_ASCII:
    case KW_BIGINT:
    case KW_BLOB:
    case KW_BOOLEAN:
    case KW_COUNTER:
    case KW_DECIMAL:
    case KW_DOUBLE:
    case KW_DURATION:
    case KW_FLOAT:
    case KW_INET:
    case KW_INT:
    case KW_SMALLINT:
    case KW_TEXT:
    case KW_TIMESTAMP:
    case KW_TINYINT:
    case KW_UUID:
    case KW_VARCHAR:
    case KW_VARINT:
    case KW_TIMEUUID:
    case KW_DATE:
    case KW_TIME:
        return 1;
    default:
        return 0;
    }
}

/* The unreserved keywords other than the native types and the selector words. */
static int is_basic_unreserved(kw_id k)
{
    if (!k || cql_keyword_reserved(k) || is_native_kw(k)) return 0;
    switch (k) {
    case KW_TTL:
    case KW_COUNT:
    case KW_WRITETIME:
    case KW_KEY:
    case KW_CAST:
    case KW_JSON:
    case KW_DISTINCT:
        return 0;
    default:
        return 1;
    }
}

/* ident: IDENT | QUOTED_NAME | unreserved_keyword */
static int is_ident(const token *t)
{
    return t->kind == TK_QUOTED || (t->kind == TK_WORD && !cql_keyword_reserved(t->kw));
}
static int is_cident(const token *t)
{
    return is_ident(t) || t->kind == TK_EMPTY_QUOTED;
}
/* non_type_ident: a user type's own name */
static int is_non_type_ident(const token *t)
{
    return t->kind == TK_QUOTED ||
           (t->kind == TK_WORD &&
            (t->kw == KW_NONE || is_basic_unreserved(t->kw) || t->kw == KW_KEY));
}
/* allowedFunctionName */
static int is_function_name(const token *t)
{
    return t->kind == TK_QUOTED ||
           (t->kind == TK_WORD && (t->kw == KW_NONE || is_basic_unreserved(t->kw) ||
                                   is_native_kw(t->kw) || t->kw == KW_TOKEN || t->kw == KW_COUNT));
}
static int is_constant(const token *t)
{
    switch (t->kind) {
    case TK_STRING:
    case TK_INTEGER:
    case TK_FLOAT:
    case TK_BOOLEAN:
    case TK_DURATION:
    case TK_UUID:
    case TK_HEX:
    case TK_NEG_NAN:
    case TK_NEG_INF:
        return 1;
    case TK_WORD:
        return t->kw == KW_POSITIVE_NAN || t->kw == KW_POSITIVE_INFINITY;
    default:
        return 0;
    }
}
static int is_relation_type(const token *t)
{
    static const char *const ops[] = {"=", "<", "<=", ">", ">=", "!=", NULL};
    for (int i = 0; ops[i]; i++)
        if (is_p(t, ops[i])) return 1;
    return 0;
}

/* ---- errors ---- */

static void oom(parser *p)
{
    if (!p->failed && !p->spec) {
        p->err->code = CQL_ERR_SERVER;
        snprintf(p->err->msg, sizeof p->err->msg, "out of memory");
    }
    p->failed = 1;
}

/* The lexer's error comes first once the parser has read up to where the lexer stopped. */
static int lexer_error_first(parser *p)
{
    if (!p->lx.failed || p->fetched < p->lx.fail_tok) return 0;
    p->err->code = CQL_ERR_SYNTAX;
    snprintf(p->err->msg, sizeof p->err->msg, "%s", p->lx.fail_msg);
    return 1;
}

/* A message of the grammar's own checks: no position, as Cassandra words them. */
static void *fail_plain(parser *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void *fail_plain(parser *p, int code, const char *fmt, ...)
{
    if (!p->failed && !p->spec && !lexer_error_first(p)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
        va_end(ap);
        p->err->code = code;
    }
    p->failed = 1;
    return NULL;
}

/* ANTLR's getTokenErrorDisplay: the text in quotes with line breaks and tabs escaped. */
static void token_display(const token *t, char *out, size_t size)
{
    size_t o = 0;
    if (size < 8) return;
    out[o++] = '\'';
    if (t->kind == TK_EOF) {
        memcpy(out + o, "<EOF>", 5);
        o += 5;
    } else {
        for (size_t i = 0; i < t->text_len && o + 4 < size; i++) {
            char c = t->text[i];
            const char *esc = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
            if (esc) {
                out[o++] = esc[0];
                out[o++] = esc[1];
            } else {
                out[o++] = c;
            }
        }
        /* never end inside a UTF-8 sequence */
        while (o > 1 && ((unsigned char)out[o - 1] & 0xC0) == 0x80)
            o--;
        if (o > 1 && ((unsigned char)out[o - 1] & 0xC0) == 0xC0) o--;
    }
    out[o++] = '\'';
    out[o] = '\0';
}

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *t = realloc(b->s, cap);
        if (t == NULL) return;
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

/* The byte offset within s[0..n) of UTF-16 unit u (clamped to n). */
static size_t unit_offset(const char *s, size_t n, long u)
{
    size_t i = 0;
    long k = 0;
    while (i < n && k < u) {
        unsigned char c = (unsigned char)s[i];
        size_t l = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        k += c >= 0xF0 ? 2 : 1;
        i += l;
    }
    return i < n ? i : n;
}

static long units_of(const char *s, size_t n)
{
    long u = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80) u += c >= 0xF0 ? 2 : 1;
    }
    return u;
}

static int token_valid(const token *t)
{
    return t->line > 0 && t->col >= 0;
}

/* ErrorCollector.appendSnippet: " (" + the tokens from ten before the one at hand to two
 * after it (as far as the parser had read), with the one at hand in [brackets], "..." where
 * the statement goes on; nothing when one of those tokens has no position (EOF). */
static void append_snippet(parser *p, sbuf *b, size_t index)
{
    size_t size = p->fetched + 1;
    size_t from_i = index >= 10 ? index - 10 : 0;
    size_t to_i = index + 2 < size - 1 ? index + 2 : size - 1;
    size_t off_i = index < size - 1 ? index : size - 1;
    const token *from = &p->lx.toks[from_i], *to = &p->lx.toks[to_i], *off = &p->lx.toks[off_i];
    if (!token_valid(from) || !token_valid(to) || !token_valid(off)) return;

    /* the lines of the text, as Java's split("\n") gives them (trailing empty ones dropped) */
    size_t nlines = 1;
    for (size_t i = 0; i < p->srclen; i++)
        if (p->src[i] == '\n') nlines++;
    size_t *start = malloc(nlines * sizeof *start), *len = malloc(nlines * sizeof *len);
    if (start == NULL || len == NULL) {
        free(start);
        free(len);
        return;
    }
    size_t k = 0, s0 = 0;
    for (size_t i = 0; i <= p->srclen; i++)
        if (i == p->srclen || p->src[i] == '\n') {
            start[k] = s0;
            len[k] = i - s0;
            k++;
            s0 = i + 1;
        }
    while (nlines > 0 && len[nlines - 1] == 0)
        nlines--;
    if ((size_t)to->line > nlines || (size_t)from->line > nlines || (size_t)off->line > nlines) {
        free(start);
        free(len);
        return;
    }
    long to_end = to->col + (long)to->text_units;
    long off_end = off->col + (long)off->text_units;
    int with_start = from->line == 1 && from->col == 0;
    size_t last = nlines - 1;
    int with_end =
        (size_t)to->line == nlines && to_end == units_of(p->src + start[last], len[last]);
    sb_add(b, " (", 2);
    if (!with_start) sb_add(b, "...", 3);
    for (size_t li = (size_t)from->line - 1; li <= (size_t)to->line - 1; li++) {
        const char *ls = p->src + start[li];
        size_t ln = len[li];
        if (li == (size_t)to->line - 1) ln = unit_offset(ls, ln, to_end);
        /* the line with [ and ] inserted around the token at hand, then cut at from */
        size_t ob = li == (size_t)off->line - 1 ? unit_offset(ls, ln, off->col) : ln + 1;
        size_t oe = li == (size_t)off->line - 1 ? unit_offset(ls, ln, off_end) : ln + 1;
        size_t fb = li == (size_t)from->line - 1 ? unit_offset(ls, ln, from->col) : 0;
        for (size_t i = 0; i <= ln; i++) {
            if (i == ob && i >= fb) sb_add(b, "[", 1);
            if (i == oe) sb_add(b, "]", 1);
            if (i < ln && i >= fb) sb_add(b, ls + i, 1);
        }
    }
    if (!with_end) sb_add(b, "...", 3);
    sb_add(b, ")", 1);
    free(start);
    free(len);
}

/* "line L:C <what> <token>" + snippet: the message names the token at msg_at (raw index),
 * the snippet brackets the token at snippet_at, where the parser's decision began. */
static void *fail_at(parser *p, size_t msg_at, size_t snippet_at, const char *what,
                     const char *tail)
{
    if (!p->failed && !p->spec && !lexer_error_first(p)) {
        const token *t = &p->lx.toks[msg_at];
        char shown[256];
        token_display(t, shown, sizeof shown);
        sbuf b = {0};
        char head[400];
        int n = snprintf(head, sizeof head, "line %d:%d %s %s%s", t->line, t->col, what, shown,
                         tail ? tail : "");
        sb_add(&b, head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1);
        append_snippet(p, &b, snippet_at);
        p->err->code = CQL_ERR_SYNTAX;
        snprintf(p->err->msg, sizeof p->err->msg, "%s", b.s ? b.s : head);
        free(b.s);
    }
    p->failed = 1;
    return NULL;
}

static size_t raw_at(parser *p, size_t k)
{
    (void)la(p, k);
    size_t i = p->at + k;
    return p->real[i < p->nreal ? i : p->nreal - 1];
}

/* No alternative of a decision matches the token at hand. */
static void *no_viable(parser *p)
{
    size_t r = raw_at(p, 0);
    return fail_at(p, r, r, "no viable alternative at input", NULL);
}

/* A decision that began at the token at hand failed k tokens further. */
static void *no_viable_ahead(parser *p, size_t k)
{
    return fail_at(p, raw_at(p, k), raw_at(p, 0), "no viable alternative at input", NULL);
}

/* The token at hand is not the one the grammar requires: expected is its token name. */
static void *mismatched(parser *p, const char *expected)
{
    size_t r = raw_at(p, 0);
    char tail[64];
    snprintf(tail, sizeof tail, " expecting %s", expected);
    return fail_at(p, r, r, "mismatched input", tail);
}

static int expect_kw(parser *p, kw_id k)
{
    if (is_kw(CUR(p), k)) {
        consume(p);
        return 0;
    }
    mismatched(p, cql_keyword_token_name(k));
    return -1;
}

static int expect_p(parser *p, const char *s)
{
    if (is_p(CUR(p), s)) {
        consume(p);
        return 0;
    }
    char name[8];
    snprintf(name, sizeof name, "'%s'", s);
    mismatched(p, name);
    return -1;
}

static int accept_kw(parser *p, kw_id k)
{
    if (!is_kw(CUR(p), k)) return 0;
    consume(p);
    return 1;
}

static int accept_p(parser *p, const char *s)
{
    if (!is_p(CUR(p), s)) return 0;
    consume(p);
    return 1;
}

static int enter(parser *p)
{
    if (++p->depth > MAX_DEPTH) {
        size_t r = raw_at(p, 0);
        char tail[64];
        snprintf(tail, sizeof tail, " (more than %d levels)", MAX_DEPTH);
        fail_at(p, r, r, "nesting too deep at input", tail);
        return -1;
    }
    return 0;
}
static void leave(parser *p)
{
    p->depth--;
}

/* ---- memory ---- */

static void *alloc(parser *p, size_t n)
{
    void *m = arena_alloc(p->ar, n);
    if (m == NULL) oom(p);
    return m;
}

static cql_expr *new_expr(parser *p, cql_expr_kind k)
{
    cql_expr *e = alloc(p, sizeof *e);
    if (e) e->kind = k;
    return e;
}

/* Appends elem (size bytes) to the arena array *arr of *n elements with room for *cap. */
static int push_elem(parser *p, void **arr, size_t *n, size_t *cap, size_t size, const void *elem)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        void *na = alloc(p, nc * size);
        if (na == NULL) return -1;
        if (*n) memcpy(na, *arr, *n * size);
        *arr = na;
        *cap = nc;
    }
    memcpy((char *)*arr + *n * size, elem, size);
    (*n)++;
    return 0;
}
#define PUSH(p, arr, n, cap, val)                                                                  \
    push_elem((p), (void **)&(arr), &(n), &(cap), sizeof *(arr), &(val))

/* ---- names ---- */

static const char *ident_value(parser *p, const token *t)
{
    if (t->kind == TK_QUOTED) return t->text;
    if (t->kind == TK_EMPTY_QUOTED) return "";
    char *s = arena_strndup(p->ar, t->text, t->text_len);
    if (s == NULL) {
        oom(p);
        return NULL;
    }
    for (char *c = s; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c + 32);
    return s;
}

static const char *parse_ident(parser *p)
{
    token *t = CUR(p);
    if (!is_ident(t)) return no_viable(p);
    consume(p);
    return ident_value(p, t);
}

static const char *parse_cident(parser *p)
{
    token *t = CUR(p);
    if (!is_cident(t)) return no_viable(p);
    consume(p);
    return ident_value(p, t);
}

/* (ksName '.')? name, where what says which names ("table", "index") a bind marker
 * cannot stand for. */
static int parse_qname(parser *p, cql_qname *q, const char *what)
{
    token *t = CUR(p);
    if ((is_ident(t) || t->kind == TK_QMARK) && is_p(la(p, 1), ".")) {
        if (t->kind == TK_QMARK) {
            fail_plain(p, CQL_ERR_SYNTAX, "Bind variables cannot be used for keyspace names");
            return -1;
        }
        consume(p);
        q->ks = ident_value(p, t);
        consume(p);
        t = CUR(p);
    }
    if (t->kind == TK_QMARK) {
        fail_plain(p, CQL_ERR_SYNTAX, "Bind variables cannot be used for %s names", what);
        return -1;
    }
    q->name = parse_ident(p);
    return q->name ? 0 : -1;
}

static const char *parse_keyspace(parser *p)
{
    if (CUR(p)->kind == TK_QMARK)
        return fail_plain(p, CQL_ERR_SYNTAX, "Bind variables cannot be used for keyspace names");
    return parse_ident(p);
}

static int parse_type_name(parser *p, cql_qname *q)
{
    token *t = CUR(p);
    if (is_ident(t) && is_p(la(p, 1), ".")) {
        consume(p);
        q->ks = ident_value(p, t);
        consume(p);
        t = CUR(p);
    }
    if (!is_non_type_ident(t)) {
        no_viable(p);
        return -1;
    }
    if (t->kind == TK_WORD && t->kw == KW_NONE) {
        static const char *const reserved_types[] = {"byte",     "complex", "enum",      "date",
                                                     "interval", "macaddr", "bitstring", NULL};
        /* an unquoted name is read in lower case: Byte is byte */
        for (int i = 0; reserved_types[i]; i++)
            if (strlen(reserved_types[i]) == t->text_len &&
                strncasecmp(reserved_types[i], t->text, t->text_len) == 0) {
                fail_plain(p, CQL_ERR_SYNTAX, "Invalid (reserved) user type name %s",
                           reserved_types[i]);
                return -1;
            }
    }
    consume(p);
    q->name = ident_value(p, t);
    return q->name ? 0 : -1;
}

/* ---- bind markers ---- */

static cql_expr *new_bind(parser *p, const char *name, size_t offset)
{
    cql_expr *e = new_expr(p, CQL_E_BIND);
    if (e == NULL) return NULL;
    e->text = name;
    e->bind = (int)p->nbinds;
    cql_bind b = {name, offset, e};
    if (p->nbinds == p->capbinds) {
        size_t cap = p->capbinds ? p->capbinds * 2 : 8;
        cql_bind *nb = realloc(p->binds, cap * sizeof *nb);
        if (nb == NULL) {
            oom(p);
            return NULL;
        }
        p->binds = nb;
        p->capbinds = cap;
    }
    p->binds[p->nbinds++] = b;
    return e;
}

/* marker: QMARK | ':' noncol_ident. Returns NULL without an error when there is none. */
static cql_expr *parse_marker_opt(parser *p)
{
    token *t = CUR(p);
    if (t->kind == TK_QMARK) {
        consume(p);
        return new_bind(p, NULL, t->off);
    }
    if (is_p(t, ":")) {
        consume(p);
        const char *name = parse_ident(p);
        if (name == NULL) return NULL;
        return new_bind(p, name, t->off);
    }
    return NULL;
}

/* ---- types ---- */

static cql_type_expr *parse_type(parser *p);

/* '<' type (',' type)* '>', with exactly arity types, or one or more when arity is 0 */
static cql_type_expr *type_args(parser *p, cql_type_expr *ty, size_t arity)
{
    if (expect_p(p, "<")) return NULL;
    size_t cap = 0;
    for (;;) {
        cql_type_expr *a = parse_type(p);
        if (a == NULL || PUSH(p, ty->args, ty->nargs, cap, a)) return NULL;
        if (arity ? ty->nargs == arity : !is_p(CUR(p), ",")) break;
        if (expect_p(p, ",")) return NULL;
    }
    if (expect_p(p, ">")) return NULL;
    return ty;
}

static cql_type_expr *parse_type(parser *p)
{
    if (enter(p)) return NULL;
    token *t = CUR(p);
    cql_type_expr *ty = alloc(p, sizeof *ty);
    cql_type_expr *r = NULL;
    if (ty == NULL) goto out;
    int angle =
        (is_kw(t, KW_MAP) || is_kw(t, KW_LIST) || is_kw(t, KW_TUPLE) || is_kw(t, KW_FROZEN)) &&
        is_p(la(p, 1), "<");
    if (t->kind == TK_WORD && is_native_kw(t->kw)) {
        ty->kind = CQL_TE_NATIVE;
        ty->name = cql_keyword_word(t->kw);
        consume(p);
        r = ty;
    } else if (is_kw(t, KW_SET) || (angle && (is_kw(t, KW_MAP) || is_kw(t, KW_LIST)))) {
        ty->kind = t->kw == KW_MAP ? CQL_TE_MAP : t->kw == KW_LIST ? CQL_TE_LIST : CQL_TE_SET;
        consume(p);
        r = type_args(p, ty, ty->kind == CQL_TE_MAP ? 2 : 1);
    } else if (angle && is_kw(t, KW_TUPLE)) {
        ty->kind = CQL_TE_TUPLE;
        consume(p);
        r = type_args(p, ty, 0);
    } else if (is_kw(t, KW_FROZEN) && angle) {
        ty->kind = CQL_TE_FROZEN;
        consume(p);
        r = type_args(p, ty, 1);
    } else if (t->kind == TK_STRING) {
        ty->kind = CQL_TE_CUSTOM;
        ty->name = t->text;
        consume(p);
        r = ty;
    } else if (is_non_type_ident(t) || (is_ident(t) && is_p(la(p, 1), "."))) {
        ty->kind = CQL_TE_UDT;
        r = parse_type_name(p, &ty->udt) ? NULL : ty;
    } else {
        no_viable(p);
    }
out:
    leave(p);
    return r;
}

/* ---- terms ---- */

static cql_expr *parse_term(parser *p);

static cql_expr *parse_constant(parser *p)
{
    token *t = CUR(p);
    cql_expr_kind k;
    switch (t->kind) {
    case TK_STRING:
        k = CQL_E_STRING;
        break;
    case TK_INTEGER:
        k = CQL_E_INTEGER;
        break;
    case TK_FLOAT:
        k = CQL_E_FLOAT;
        break;
    case TK_BOOLEAN:
        k = CQL_E_BOOLEAN;
        break;
    case TK_DURATION:
        k = CQL_E_DURATION;
        break;
    case TK_UUID:
        k = CQL_E_UUID;
        break;
    case TK_HEX:
        k = CQL_E_HEX;
        break;
    case TK_NEG_NAN:
        k = CQL_E_NAN;
        break;
    case TK_NEG_INF:
        k = CQL_E_INFINITY;
        break;
    default:
        if (is_kw(t, KW_POSITIVE_NAN))
            k = CQL_E_NAN;
        else if (is_kw(t, KW_POSITIVE_INFINITY))
            k = CQL_E_INFINITY;
        else
            return no_viable(p);
    }
    cql_expr *e = new_expr(p, k);
    if (e == NULL) return NULL;
    consume(p);
    e->negative = t->kind == TK_NEG_NAN || t->kind == TK_NEG_INF;
    if (k == CQL_E_BOOLEAN) {
        e->text = (t->text[0] | 0x20) == 't' ? "true" : "false";
    } else {
        e->text = t->text;
    }
    return e;
}

static int push_item(parser *p, cql_expr *e, size_t *cap, cql_expr *item)
{
    return item == NULL || PUSH(p, e->items, e->nitems, *cap, item) ? -1 : 0;
}

/* '(' term (',' term)* ')' */
static cql_expr *parse_tuple_literal(parser *p)
{
    if (expect_p(p, "(")) return NULL;
    cql_expr *e = new_expr(p, CQL_E_TUPLE);
    size_t cap = 0;
    if (e == NULL || push_item(p, e, &cap, parse_term(p))) return NULL;
    while (accept_p(p, ","))
        if (push_item(p, e, &cap, parse_term(p))) return NULL;
    if (expect_p(p, ")")) return NULL;
    return e;
}

/* '[' (term (',' term)*)? ']' */
static cql_expr *parse_list_literal(parser *p)
{
    if (expect_p(p, "[")) return NULL;
    cql_expr *e = new_expr(p, CQL_E_LIST);
    size_t cap = 0;
    if (e == NULL) return NULL;
    if (!is_p(CUR(p), "]")) {
        if (push_item(p, e, &cap, parse_term(p))) return NULL;
        while (accept_p(p, ","))
            if (push_item(p, e, &cap, parse_term(p))) return NULL;
    }
    if (expect_p(p, "]")) return NULL;
    return e;
}

/* '{' ... '}': a user type literal when it opens with a field name and ':', else a set or
 * map ({} is an empty set). */
static cql_expr *parse_brace_literal(parser *p)
{
    if (expect_p(p, "{")) return NULL;
    size_t cap = 0, fcap = 0;
    if (accept_p(p, "}")) return new_expr(p, CQL_E_SET);
    if (is_ident(CUR(p)) && is_p(la(p, 1), ":")) {
        cql_expr *e = new_expr(p, CQL_E_UDT);
        if (e == NULL) return NULL;
        do {
            const char *f = parse_ident(p);
            size_t nf = e->nitems;
            if (f == NULL || PUSH(p, e->fields, nf, fcap, f)) return NULL;
            if (expect_p(p, ":") || push_item(p, e, &cap, parse_term(p))) return NULL;
        } while (accept_p(p, ","));
        if (expect_p(p, "}")) return NULL;
        return e;
    }
    cql_expr *first = parse_term(p);
    if (first == NULL) return NULL;
    cql_expr *e = new_expr(p, is_p(CUR(p), ":") ? CQL_E_MAP : CQL_E_SET);
    if (e == NULL || push_item(p, e, &cap, first)) return NULL;
    if (e->kind == CQL_E_MAP) {
        consume(p);
        if (push_item(p, e, &cap, parse_term(p))) return NULL;
        while (accept_p(p, ",")) {
            if (push_item(p, e, &cap, parse_term(p)) || expect_p(p, ":") ||
                push_item(p, e, &cap, parse_term(p)))
                return NULL;
        }
    } else {
        while (accept_p(p, ","))
            if (push_item(p, e, &cap, parse_term(p))) return NULL;
    }
    if (expect_p(p, "}")) return NULL;
    return e;
}

/* functionName '(' args? ')', where the name is (keyspace '.')? allowedFunctionName */
static int function_ahead(parser *p)
{
    token *t = CUR(p);
    if (is_function_name(t) && is_p(la(p, 1), "(")) return 1;
    return is_ident(t) && is_p(la(p, 1), ".") && is_function_name(la(p, 2)) && is_p(la(p, 3), "(");
}

static int parse_function_name(parser *p, cql_qname *fn)
{
    token *t = CUR(p);
    if (is_p(la(p, 1), ".")) {
        consume(p);
        fn->ks = ident_value(p, t);
        consume(p);
        t = CUR(p);
    }
    if (!is_function_name(t)) {
        no_viable(p);
        return -1;
    }
    consume(p);
    fn->name = ident_value(p, t);
    return fn->name ? 0 : -1;
}

static cql_expr *parse_function_term(parser *p)
{
    cql_expr *e = new_expr(p, CQL_E_FUNCTION);
    size_t cap = 0;
    if (e == NULL || parse_function_name(p, &e->fn) || expect_p(p, "(")) return NULL;
    if (!is_p(CUR(p), ")")) {
        if (push_item(p, e, &cap, parse_term(p))) return NULL;
        while (accept_p(p, ","))
            if (push_item(p, e, &cap, parse_term(p))) return NULL;
    }
    if (expect_p(p, ")")) return NULL;
    return e;
}

static cql_expr *parse_simple_term(parser *p);

/* Tries alt at the token at hand without reporting its errors; on failure the parser is
 * back where it was (markers numbered in the attempt are forgotten). */
typedef void *(*alt_fn)(parser *p, void *arg);
static void *attempt(parser *p, alt_fn fn, void *arg)
{
    size_t at = p->at, nbinds = p->nbinds;
    int depth = p->depth;
    if (p->failed) return NULL;
    p->spec++;
    void *r = fn(p, arg);
    p->spec--;
    if (p->failed || r == NULL) {
        p->failed = 0;
        p->at = at;
        p->nbinds = nbinds;
        p->depth = depth;
        return NULL;
    }
    return r;
}

/* '(' comparatorType ')' simpleTerm */
static void *type_hint_term(parser *p, void *arg)
{
    (void)arg;
    if (expect_p(p, "(")) return NULL;
    cql_type_expr *ty = parse_type(p);
    if (ty == NULL || expect_p(p, ")")) return NULL;
    cql_expr *v = parse_simple_term(p);
    if (v == NULL) return NULL;
    cql_expr *e = new_expr(p, CQL_E_HINT);
    size_t cap = 0;
    if (e == NULL || push_item(p, e, &cap, v)) return NULL;
    e->type = ty;
    return e;
}

static cql_expr *parse_simple_term(parser *p)
{
    if (enter(p)) return NULL;
    token *t = CUR(p);
    cql_expr *e = NULL;
    if (is_constant(t)) {
        e = parse_constant(p);
    } else if (is_kw(t, KW_NULL)) {
        consume(p);
        e = new_expr(p, CQL_E_NULL);
    } else if (t->kind == TK_QMARK || is_p(t, ":")) {
        e = parse_marker_opt(p);
    } else if (is_p(t, "[")) {
        e = parse_list_literal(p);
    } else if (is_p(t, "{")) {
        e = parse_brace_literal(p);
    } else if (is_p(t, "(")) {
        e = attempt(p, type_hint_term, NULL);
        if (e == NULL && !p->failed) e = parse_tuple_literal(p);
    } else if (is_kw(t, KW_CAST) && is_p(la(p, 1), "(")) {
        consume(p);
        consume(p);
        cql_expr *v = parse_simple_term(p);
        if (v && expect_kw(p, KW_AS) == 0) {
            token *ty = CUR(p);
            if (ty->kind != TK_WORD || !is_native_kw(ty->kw)) {
                no_viable(p);
            } else {
                consume(p);
                e = new_expr(p, CQL_E_CAST);
                size_t cap = 0;
                if (e &&
                    (push_item(p, e, &cap, v) || (e->type = alloc(p, sizeof *e->type)) == NULL))
                    e = NULL;
                if (e) {
                    e->type->kind = CQL_TE_NATIVE;
                    e->type->name = cql_keyword_word(ty->kw);
                }
                if (e && expect_p(p, ")")) e = NULL;
            }
        }
    } else if (function_ahead(p)) {
        e = parse_function_term(p);
    } else {
        no_viable(p);
    }
    leave(p);
    return e;
}

static cql_expr *binary(parser *p, char op, cql_expr *l, cql_expr *r)
{
    if (r == NULL) return NULL;
    cql_expr *e = new_expr(p, CQL_E_BINARY);
    size_t cap = 0;
    if (e == NULL || push_item(p, e, &cap, l) || push_item(p, e, &cap, r)) return NULL;
    e->op = op;
    return e;
}

/* termGroup: '-' simpleTerm | simpleTerm */
static cql_expr *parse_term_group(parser *p)
{
    if (is_p(CUR(p), "-")) {
        consume(p);
        cql_expr *v = parse_simple_term(p);
        if (v == NULL) return NULL;
        cql_expr *e = new_expr(p, CQL_E_NEGATE);
        size_t cap = 0;
        if (e == NULL || push_item(p, e, &cap, v)) return NULL;
        return e;
    }
    return parse_simple_term(p);
}

static cql_expr *parse_term_mul(parser *p)
{
    cql_expr *l = parse_term_group(p);
    while (l && (is_p(CUR(p), "*") || is_p(CUR(p), "/") || is_p(CUR(p), "%"))) {
        char op = CUR(p)->text[0];
        consume(p);
        l = binary(p, op, l, parse_term_group(p));
    }
    return l;
}

/* A '+' followed by a bare column name ends a term: `c = [1] + c` prepends. */
static int bare_name_ahead(parser *p, size_t k)
{
    return is_cident(la(p, k)) && !is_p(la(p, k + 1), "(") && !is_p(la(p, k + 1), ".");
}

static cql_expr *parse_term(parser *p)
{
    if (enter(p)) return NULL;
    cql_expr *l = parse_term_mul(p);
    while (l && (is_p(CUR(p), "+") || is_p(CUR(p), "-"))) {
        char op = CUR(p)->text[0];
        if (op == '+' && bare_name_ahead(p, 1)) break;
        consume(p);
        l = binary(p, op, l, parse_term_mul(p));
    }
    leave(p);
    return l;
}

/* intValue: INTEGER | marker */
static cql_expr *parse_int_value(parser *p)
{
    token *t = CUR(p);
    if (t->kind == TK_INTEGER) return parse_constant(p);
    if (t->kind == TK_QMARK || is_p(t, ":")) return parse_marker_opt(p);
    return no_viable(p);
}

/* ---- selectors ---- */

static cql_expr *parse_selector_expr(parser *p);
static cql_expr *parse_selector_group(parser *p);

static cql_expr *wrap1(parser *p, cql_expr_kind k, cql_expr *inner)
{
    if (inner == NULL) return NULL;
    cql_expr *e = new_expr(p, k);
    size_t cap = 0;
    if (e == NULL || push_item(p, e, &cap, inner)) return NULL;
    return e;
}

/* ('.' field | '[' element ']' | '[' a .. b ']')* after a selector */
static cql_expr *selector_modifiers(parser *p, cql_expr *e)
{
    while (e) {
        if (is_p(CUR(p), ".")) {
            consume(p);
            const char *f = parse_ident(p);
            e = f ? wrap1(p, CQL_E_FIELD, e) : NULL;
            if (e) e->text = f;
        } else if (is_p(CUR(p), "[")) {
            consume(p);
            cql_expr *a = NULL, *b = NULL;
            int slice = 0;
            if (CUR(p)->kind == TK_RANGE) {
                consume(p);
                slice = 1;
                if ((b = parse_term(p)) == NULL) return NULL;
            } else {
                if ((a = parse_term(p)) == NULL) return NULL;
                if (CUR(p)->kind == TK_RANGE) {
                    consume(p);
                    slice = 1;
                    if (!is_p(CUR(p), "]") && (b = parse_term(p)) == NULL) return NULL;
                }
            }
            cql_expr *n = new_expr(p, slice ? CQL_E_SLICE : CQL_E_ELEMENT);
            if (n == NULL || (n->items = alloc(p, 3 * sizeof *n->items)) == NULL) return NULL;
            n->items[0] = e;
            n->items[1] = a;
            n->items[2] = b;
            n->nitems = slice ? 3 : 2;
            e = expect_p(p, "]") ? NULL : n;
        } else {
            break;
        }
    }
    return e;
}

/* '(' comparatorType ')' selectionGroupWithoutField */
static void *type_hint_selector(parser *p, void *arg)
{
    (void)arg;
    if (expect_p(p, "(")) return NULL;
    cql_type_expr *ty = parse_type(p);
    if (ty == NULL || expect_p(p, ")")) return NULL;
    cql_expr *e = wrap1(p, CQL_E_HINT, parse_selector_group(p));
    if (e) e->type = ty;
    return e;
}

static cql_expr *selector_list(parser *p, cql_expr *e, const char *close)
{
    size_t cap = 0;
    if (e == NULL) return NULL;
    if (!is_p(CUR(p), close)) {
        if (push_item(p, e, &cap, parse_selector_expr(p))) return NULL;
        while (accept_p(p, ","))
            if (push_item(p, e, &cap, parse_selector_expr(p))) return NULL;
    }
    return expect_p(p, close) ? NULL : e;
}

static cql_expr *parse_selector_base(parser *p)
{
    token *t = CUR(p);
    cql_expr *e;
    size_t cap = 0;
    if (is_p(t, "(")) {
        e = attempt(p, type_hint_selector, NULL);
        if (e || p->failed) return e;
        consume(p);
        e = new_expr(p, CQL_E_TUPLE);
        if (e == NULL || push_item(p, e, &cap, parse_selector_expr(p))) return NULL;
        while (accept_p(p, ","))
            if (push_item(p, e, &cap, parse_selector_expr(p))) return NULL;
        return expect_p(p, ")") ? NULL : e;
    }
    if (is_p(t, "[")) {
        consume(p);
        return selector_list(p, new_expr(p, CQL_E_LIST), "]");
    }
    if (is_p(t, "{")) {
        consume(p);
        if (accept_p(p, "}")) return new_expr(p, CQL_E_SET);
        cql_expr *first = parse_selector_expr(p);
        if (first == NULL) return NULL;
        e = new_expr(p, is_p(CUR(p), ":") ? CQL_E_MAP : CQL_E_SET);
        if (e == NULL || push_item(p, e, &cap, first)) return NULL;
        if (e->kind == CQL_E_MAP) {
            consume(p);
            if (push_item(p, e, &cap, parse_selector_expr(p))) return NULL;
            while (accept_p(p, ","))
                if (push_item(p, e, &cap, parse_selector_expr(p)) || expect_p(p, ":") ||
                    push_item(p, e, &cap, parse_selector_expr(p)))
                    return NULL;
        } else {
            while (accept_p(p, ","))
                if (push_item(p, e, &cap, parse_selector_expr(p))) return NULL;
        }
        return expect_p(p, "}") ? NULL : e;
    }
    if (is_constant(t)) return parse_constant(p);
    if (is_kw(t, KW_NULL)) {
        consume(p);
        return new_expr(p, CQL_E_NULL);
    }
    if (t->kind == TK_QMARK || is_p(t, ":")) return parse_marker_opt(p);
    int named =
        is_function_name(t) || is_kw(t, KW_WRITETIME) || is_kw(t, KW_TTL) || is_kw(t, KW_CAST);
    if (named && is_p(la(p, 1), "(")) {
        if (is_kw(t, KW_COUNT) && is_p(la(p, 2), "*")) {
            consume(p);
            consume(p);
            consume(p);
            e = new_expr(p, CQL_E_FUNCTION);
            if (e == NULL || expect_p(p, ")")) return NULL;
            e->fn.name = "count";
            e->star = 1;
            return e;
        }
        if (is_kw(t, KW_WRITETIME) || is_kw(t, KW_TTL)) {
            consume(p);
            consume(p);
            e = new_expr(p, CQL_E_FUNCTION);
            if (e == NULL) return NULL;
            e->fn.name = t->kw == KW_TTL ? "ttl" : "writetime";
            const char *c = parse_cident(p);
            cql_expr *col = c ? new_expr(p, CQL_E_COLUMN) : NULL;
            if (col == NULL) return NULL;
            col->text = c;
            col = selector_modifiers(p, col);
            if (push_item(p, e, &cap, col)) return NULL;
            return expect_p(p, ")") ? NULL : e;
        }
        if (is_kw(t, KW_CAST)) {
            consume(p);
            consume(p);
            cql_expr *v = parse_selector_expr(p);
            if (v == NULL || expect_kw(p, KW_AS)) return NULL;
            token *ty = CUR(p);
            if (ty->kind != TK_WORD || !is_native_kw(ty->kw)) return no_viable(p);
            consume(p);
            e = wrap1(p, CQL_E_CAST, v);
            if (e == NULL || (e->type = alloc(p, sizeof *e->type)) == NULL) return NULL;
            e->type->kind = CQL_TE_NATIVE;
            e->type->name = cql_keyword_word(ty->kw);
            return expect_p(p, ")") ? NULL : e;
        }
    }
    if (named && function_ahead(p)) {
        e = new_expr(p, CQL_E_FUNCTION);
        if (e == NULL || parse_function_name(p, &e->fn) || expect_p(p, "(")) return NULL;
        return selector_list(p, e, ")");
    }
    if (is_cident(t)) {
        e = new_expr(p, CQL_E_COLUMN);
        if (e == NULL) return NULL;
        e->text = parse_cident(p);
        return e->text ? e : NULL;
    }
    return no_viable(p);
}

static cql_expr *parse_selector_group(parser *p)
{
    if (enter(p)) return NULL;
    cql_expr *e;
    if (is_p(CUR(p), "-")) {
        consume(p);
        e = wrap1(p, CQL_E_NEGATE, parse_selector_group(p));
    } else {
        e = selector_modifiers(p, parse_selector_base(p));
    }
    leave(p);
    return e;
}

static cql_expr *parse_selector_expr(parser *p)
{
    if (enter(p)) return NULL;
    cql_expr *l = parse_selector_group(p);
    while (l && (is_p(CUR(p), "*") || is_p(CUR(p), "/") || is_p(CUR(p), "%"))) {
        char op = CUR(p)->text[0];
        consume(p);
        l = binary(p, op, l, parse_selector_group(p));
    }
    while (l && (is_p(CUR(p), "+") || is_p(CUR(p), "-"))) {
        char op = CUR(p)->text[0];
        consume(p);
        cql_expr *r = parse_selector_group(p);
        while (r && (is_p(CUR(p), "*") || is_p(CUR(p), "/") || is_p(CUR(p), "%"))) {
            char op2 = CUR(p)->text[0];
            consume(p);
            r = binary(p, op2, r, parse_selector_group(p));
        }
        l = binary(p, op, l, r);
    }
    leave(p);
    return l;
}

/* selectors: '*' | selector (',' selector)* where selector: expr (AS alias)? */
typedef struct sel_list {
    cql_selector *sel;
    size_t n;
    int star;
} sel_list;

static void *parse_selectors(parser *p, void *arg)
{
    sel_list *out = arg;
    memset(out, 0, sizeof *out);
    if (accept_p(p, "*")) {
        out->star = 1;
        return out;
    }
    size_t cap = 0;
    do {
        cql_selector s = {0};
        if ((s.expr = parse_selector_expr(p)) == NULL) return NULL;
        if (accept_kw(p, KW_AS) && (s.alias = parse_ident(p)) == NULL) return NULL;
        if (PUSH(p, out->sel, out->n, cap, s)) return NULL;
    } while (accept_p(p, ","));
    return out;
}

/* ---- WHERE ---- */

static cql_op relation_op(parser *p)
{
    const char *s = CUR(p)->text;
    consume(p);
    if (strcmp(s, "=") == 0) return CQL_OP_EQ;
    if (strcmp(s, "<") == 0) return CQL_OP_LT;
    if (strcmp(s, "<=") == 0) return CQL_OP_LTE;
    if (strcmp(s, ">") == 0) return CQL_OP_GT;
    if (strcmp(s, ">=") == 0) return CQL_OP_GTE;
    return CQL_OP_NEQ;
}

/* singleColumnInValues: '(' (term (',' term)*)? ')' | inMarker */
static int parse_in_values(parser *p, cql_relation *r)
{
    r->op = CQL_OP_IN;
    token *t = CUR(p);
    if (t->kind == TK_QMARK || is_p(t, ":")) {
        r->value = parse_marker_opt(p);
        return r->value ? 0 : -1;
    }
    if (!is_p(t, "(")) {
        no_viable(p);
        return -1;
    }
    consume(p);
    size_t cap = 0;
    if (!is_p(CUR(p), ")")) {
        do {
            cql_expr *v = parse_term(p);
            if (v == NULL || PUSH(p, r->values, r->nvalues, cap, v)) return -1;
        } while (accept_p(p, ","));
    }
    return expect_p(p, ")");
}

static int parse_name_list(parser *p, const char ***names, size_t *n, int cident)
{
    size_t cap = 0;
    do {
        const char *c = cident ? parse_cident(p) : parse_ident(p);
        if (c == NULL || PUSH(p, *names, *n, cap, c)) return -1;
    } while (accept_p(p, ","));
    return 0;
}

/* '(' cident (',' cident)* ')' */
static int parse_tuple_of_names(parser *p, cql_relation *r)
{
    if (expect_p(p, "(") || parse_name_list(p, &r->columns, &r->ncolumns, 1)) return -1;
    return expect_p(p, ")");
}

static int parse_relation(parser *p, cql_relation *r);

static int parse_multi_relation(parser *p, cql_relation *r)
{
    r->kind = CQL_REL_TUPLE;
    if (parse_tuple_of_names(p, r)) return -1;
    token *t = CUR(p);
    if (is_kw(t, KW_IN)) {
        consume(p);
        r->op = CQL_OP_IN;
        t = CUR(p);
        if (t->kind == TK_QMARK || is_p(t, ":")) {
            r->value = parse_marker_opt(p);
            return r->value ? 0 : -1;
        }
        if (expect_p(p, "(")) return -1;
        if (accept_p(p, ")")) return 0;
        size_t cap = 0;
        int tuples = is_p(CUR(p), "(");
        if (!tuples && CUR(p)->kind != TK_QMARK && !is_p(CUR(p), ":")) {
            no_viable(p);
            return -1;
        }
        do {
            cql_expr *v = tuples ? parse_tuple_literal(p) : parse_marker_opt(p);
            if (v == NULL) {
                if (!p->failed) no_viable(p);
                return -1;
            }
            if (PUSH(p, r->values, r->nvalues, cap, v)) return -1;
        } while (accept_p(p, ","));
        return expect_p(p, ")");
    }
    if (is_relation_type(t)) {
        r->op = relation_op(p);
        t = CUR(p);
        if (is_p(t, "("))
            r->value = parse_tuple_literal(p);
        else if (t->kind == TK_QMARK || is_p(t, ":"))
            r->value = parse_marker_opt(p);
        else
            no_viable(p);
        return r->value ? 0 : -1;
    }
    no_viable(p);
    return -1;
}

static int parse_relation(parser *p, cql_relation *r)
{
    memset(r, 0, sizeof *r);
    token *t = CUR(p);
    if (is_kw(t, KW_TOKEN)) {
        consume(p);
        r->kind = CQL_REL_TOKEN;
        if (parse_tuple_of_names(p, r)) return -1;
        if (!is_relation_type(CUR(p))) {
            no_viable(p);
            return -1;
        }
        r->op = relation_op(p);
        r->value = parse_term(p);
        return r->value ? 0 : -1;
    }
    if (is_p(t, "(")) {
        if (is_cident(la(p, 1)) && (is_p(la(p, 2), ",") || is_p(la(p, 2), ")")))
            return parse_multi_relation(p, r);
        if (enter(p)) return -1;
        consume(p);
        int rc = parse_relation(p, r);
        leave(p);
        return rc ? -1 : expect_p(p, ")");
    }
    if (!is_cident(t)) {
        no_viable(p);
        return -1;
    }
    token *op = la(p, 1);
    if (is_p(op, "[")) {
        r->kind = CQL_REL_ELEMENT;
        size_t cap = 0;
        const char *c = parse_cident(p);
        if (c == NULL || PUSH(p, r->columns, r->ncolumns, cap, c)) return -1;
        consume(p);
        if ((r->key = parse_term(p)) == NULL || expect_p(p, "]")) return -1;
        if (!is_relation_type(CUR(p))) {
            no_viable(p);
            return -1;
        }
        r->op = relation_op(p);
        r->value = parse_term(p);
        return r->value ? 0 : -1;
    }
    if (!is_relation_type(op) && !is_kw(op, KW_IN) && !is_kw(op, KW_CONTAINS) &&
        !is_kw(op, KW_IS) && !is_kw(op, KW_LIKE)) {
        no_viable_ahead(p, 1);
        return -1;
    }
    r->kind = CQL_REL_COLUMN;
    size_t cap = 0;
    const char *c = parse_cident(p);
    if (c == NULL || PUSH(p, r->columns, r->ncolumns, cap, c)) return -1;
    if (is_relation_type(op)) {
        r->op = relation_op(p);
    } else if (is_kw(op, KW_IN)) {
        consume(p);
        return parse_in_values(p, r);
    } else if (is_kw(op, KW_CONTAINS)) {
        consume(p);
        r->op = accept_kw(p, KW_KEY) ? CQL_OP_CONTAINS_KEY : CQL_OP_CONTAINS;
    } else if (is_kw(op, KW_LIKE)) {
        consume(p);
        r->op = CQL_OP_LIKE;
    } else {
        consume(p);
        if (expect_kw(p, KW_NOT) || expect_kw(p, KW_NULL)) return -1;
        r->op = CQL_OP_IS_NOT_NULL;
        return 0;
    }
    r->value = parse_term(p);
    return r->value ? 0 : -1;
}

static int parse_where(parser *p, cql_where *w)
{
    size_t cap = 0;
    do {
        cql_relation r;
        if (parse_relation(p, &r) || PUSH(p, w->rels, w->n, cap, r)) return -1;
    } while (accept_kw(p, KW_AND));
    return 0;
}

/* columnCondition (the IF of UPDATE and DELETE) */
static int parse_condition(parser *p, cql_relation *r)
{
    memset(r, 0, sizeof *r);
    size_t cap = 0;
    const char *c = parse_cident(p);
    if (c == NULL || PUSH(p, r->columns, r->ncolumns, cap, c)) return -1;
    r->kind = CQL_REL_COLUMN;
    if (is_p(CUR(p), "[")) {
        consume(p);
        r->kind = CQL_REL_ELEMENT;
        if ((r->key = parse_term(p)) == NULL || expect_p(p, "]")) return -1;
    } else if (is_p(CUR(p), ".")) {
        consume(p);
        r->kind = CQL_REL_FIELD;
        if ((r->field = parse_ident(p)) == NULL) return -1;
    }
    token *t = CUR(p);
    if (is_relation_type(t)) {
        r->op = relation_op(p);
    } else if (is_kw(t, KW_IN)) {
        consume(p);
        return parse_in_values(p, r);
    } else {
        /* CONTAINS among them: Cassandra 4's conditions have no CONTAINS (5.0 added it) */
        no_viable(p);
        return -1;
    }
    r->value = parse_term(p);
    return r->value ? 0 : -1;
}

/* IF EXISTS | IF condition (AND condition)*, after IF */
static int parse_if(parser *p, int *if_exists, cql_relation **conds, size_t *n)
{
    token *t = CUR(p), *next = is_kw(t, KW_EXISTS) ? la(p, 1) : NULL;
    if (next && !is_relation_type(next) && !is_kw(next, KW_IN) && !is_p(next, "[") &&
        !is_p(next, ".") && !is_kw(next, KW_CONTAINS)) {
        consume(p);
        *if_exists = 1;
        return 0;
    }
    size_t cap = 0;
    do {
        cql_relation r;
        if (parse_condition(p, &r) || PUSH(p, *conds, *n, cap, r)) return -1;
    } while (accept_kw(p, KW_AND));
    return 0;
}

/* USING (TIMESTAMP | TTL) intValue (AND ...)*, after USING */
static int parse_using(parser *p, cql_using **u, size_t *n, int timestamp_only)
{
    size_t cap = 0;
    do {
        cql_using x = {0};
        token *t = CUR(p);
        if (timestamp_only) {
            if (expect_kw(p, KW_TIMESTAMP)) return -1;
        } else if (is_kw(t, KW_TIMESTAMP) || is_kw(t, KW_TTL)) {
            x.ttl = t->kw == KW_TTL;
            consume(p);
        } else {
            no_viable(p);
            return -1;
        }
        if ((x.value = parse_int_value(p)) == NULL || PUSH(p, *u, *n, cap, x)) return -1;
    } while (!timestamp_only && accept_kw(p, KW_AND));
    return 0;
}

static int if_not_exists(parser *p, int *flag)
{
    if (!accept_kw(p, KW_IF)) return 0;
    if (expect_kw(p, KW_NOT) || expect_kw(p, KW_EXISTS)) return -1;
    *flag = 1;
    return 0;
}

static int if_exists(parser *p, int *flag)
{
    if (!accept_kw(p, KW_IF)) return 0;
    if (expect_kw(p, KW_EXISTS)) return -1;
    *flag = 1;
    return 0;
}

/* ---- properties ---- */

static int is_literal_constant(const cql_expr *e)
{
    return e->kind <= CQL_E_INFINITY;
}

char *cql_print_expr(const cql_expr *e);

static int check_property_map(parser *p, cql_expr *m)
{
    for (size_t i = 0; i + 1 < m->nitems; i += 2) {
        cql_expr *k = m->items[i], *v = m->items[i + 1];
        if (!is_literal_constant(k) || !is_literal_constant(v)) {
            char *ks = cql_print_expr(k), *vs = cql_print_expr(v);
            int bad_key = !is_literal_constant(k);
            cql_expr *bad = bad_key ? k : v;
            if (bad_key)
                fail_plain(p, CQL_ERR_SYNTAX, "Invalid property name: %s%s", ks ? ks : "?",
                           bad->kind == CQL_E_BIND
                               ? " (bind variables are not supported in DDL queries)"
                               : "");
            else
                fail_plain(p, CQL_ERR_SYNTAX, "Invalid property value: %s for property: %s%s",
                           vs ? vs : "?", ks ? ks : "?",
                           bad->kind == CQL_E_BIND
                               ? " (bind variables are not supported in DDL queries)"
                               : "");
            free(ks);
            free(vs);
            return -1;
        }
        for (size_t j = 0; j < i; j += 2)
            if (strcmp(m->items[j]->text, k->text) == 0) {
                fail_plain(p, CQL_ERR_SYNTAX, "Multiple definition for property %s", k->text);
                return -1;
            }
    }
    return 0;
}

/* property: noncol_ident '=' (constant | unreserved_keyword | fullMapLiteral) */
static int parse_property(parser *p, cql_props *props, size_t *cap)
{
    cql_property pr = {0};
    if ((pr.name = parse_ident(p)) == NULL || expect_p(p, "=")) return -1;
    token *t = CUR(p);
    if (is_p(t, "{")) {
        consume(p);
        cql_expr *m = new_expr(p, CQL_E_MAP);
        size_t mcap = 0;
        if (m == NULL) return -1;
        if (!is_p(CUR(p), "}")) {
            do {
                if (push_item(p, m, &mcap, parse_term(p)) || expect_p(p, ":") ||
                    push_item(p, m, &mcap, parse_term(p)))
                    return -1;
            } while (accept_p(p, ","));
        }
        if (expect_p(p, "}") || check_property_map(p, m)) return -1;
        pr.value = m;
    } else if (is_constant(t)) {
        if ((pr.value = parse_constant(p)) == NULL) return -1;
    } else if (t->kind == TK_WORD && t->kw != KW_NONE && !cql_keyword_reserved(t->kw)) {
        if ((pr.value = new_expr(p, CQL_E_WORD)) == NULL) return -1;
        pr.value->text = cql_keyword_word(t->kw);
        consume(p);
    } else {
        no_viable(p);
        return -1;
    }
    for (size_t i = 0; i < props->n; i++)
        if (strcmp(props->items[i].name, pr.name) == 0) {
            fail_plain(p, CQL_ERR_SYNTAX, "Multiple definition for property %s", pr.name);
            return -1;
        }
    return PUSH(p, props->items, props->n, *cap, pr);
}

static int parse_properties(parser *p, cql_props *props)
{
    size_t cap = 0;
    do {
        if (parse_property(p, props, &cap)) return -1;
    } while (accept_kw(p, KW_AND));
    return 0;
}

/* WITH (property | CLUSTERING ORDER BY (c ASC|DESC, ...) | COMPACT STORAGE) (AND ...)* */
static int parse_table_options(parser *p, cql_table_opts *o)
{
    size_t pcap = 0, ocap = 0;
    do {
        token *t = CUR(p);
        if (is_kw(t, KW_COMPACT) && is_kw(la(p, 1), KW_STORAGE)) {
            fail_plain(p, CQL_ERR_SYNTAX,
                       "COMPACT STORAGE tables are not allowed starting with version 4.0");
            return -1;
        }
        if (is_kw(t, KW_CLUSTERING) && is_kw(la(p, 1), KW_ORDER)) {
            consume(p);
            consume(p);
            if (expect_kw(p, KW_BY) || expect_p(p, "(")) return -1;
            do {
                cql_order ord = {0};
                if ((ord.column = parse_ident(p)) == NULL) return -1;
                if (is_kw(CUR(p), KW_ASC) || is_kw(CUR(p), KW_DESC)) {
                    ord.desc = CUR(p)->kw == KW_DESC;
                    consume(p);
                } else {
                    no_viable(p);
                    return -1;
                }
                if (PUSH(p, o->clustering_order, o->norder, ocap, ord)) return -1;
            } while (accept_p(p, ","));
            if (expect_p(p, ")")) return -1;
            continue;
        }
        if (parse_property(p, &o->props, &pcap)) return -1;
    } while (accept_kw(p, KW_AND));
    return 0;
}

/* PRIMARY KEY '(' (ident | '(' ident, ... ')') (',' ident)* ')', after PRIMARY KEY */
static int parse_pkey(parser *p, cql_pkey *pk)
{
    if (expect_p(p, "(")) return -1;
    if (accept_p(p, "(")) {
        if (parse_name_list(p, &pk->partition, &pk->npartition, 0) || expect_p(p, ")")) return -1;
    } else {
        size_t cap = 0;
        const char *c = parse_ident(p);
        if (c == NULL || PUSH(p, pk->partition, pk->npartition, cap, c)) return -1;
    }
    if (accept_p(p, ",") && parse_name_list(p, &pk->clustering, &pk->nclustering, 0)) return -1;
    return expect_p(p, ")");
}

/* ---- statements ---- */

typedef cql_stmt *(*stmt_fn)(parser *p, cql_stmt *s);

static cql_stmt *parse_select(parser *p, cql_stmt *s);
static cql_stmt *parse_insert(parser *p, cql_stmt *s);
static cql_stmt *parse_update(parser *p, cql_stmt *s);
static cql_stmt *parse_delete(parser *p, cql_stmt *s);

/* selectClause after SELECT [JSON] */
static void *distinct_selectors(parser *p, void *arg)
{
    if (expect_kw(p, KW_DISTINCT)) return NULL;
    return parse_selectors(p, arg);
}

static void *json_select_clause(parser *p, void *arg)
{
    if (expect_kw(p, KW_JSON)) return NULL;
    if (attempt(p, distinct_selectors, arg)) return arg;
    if (p->failed) return NULL;
    return parse_selectors(p, arg);
}

static cql_stmt *parse_select(parser *p, cql_stmt *s)
{
    cql_select *q = &s->u.select;
    sel_list sl;
    consume(p); /* SELECT */
    /* JSON and DISTINCT are also column names: each is the keyword when a select clause
     * follows it, as Cassandra's syntactic predicates decide */
    if (is_kw(CUR(p), KW_JSON)) {
        size_t at = p->at, nb = p->nbinds;
        if (attempt(p, json_select_clause, &sl)) {
            p->at = at;
            p->nbinds = nb;
            consume(p);
            q->json = 1;
        }
        if (p->failed) return NULL;
    }
    if (is_kw(CUR(p), KW_DISTINCT) && attempt(p, distinct_selectors, &sl)) {
        q->distinct = 1;
    } else if (p->failed || parse_selectors(p, &sl) == NULL) {
        return NULL;
    }
    q->sel = sl.sel;
    q->nsel = sl.n;
    if (expect_kw(p, KW_FROM) || parse_qname(p, &s->name, "table")) return NULL;
    if (accept_kw(p, KW_WHERE) && parse_where(p, &q->where)) return NULL;
    if (is_kw(CUR(p), KW_GROUP)) {
        consume(p);
        if (expect_kw(p, KW_BY)) return NULL;
        size_t cap = 0;
        do {
            cql_expr *g = parse_selector_expr(p);
            if (g == NULL || PUSH(p, q->group_by, q->ngroup, cap, g)) return NULL;
        } while (accept_p(p, ","));
    }
    if (accept_kw(p, KW_ORDER)) {
        if (expect_kw(p, KW_BY)) return NULL;
        size_t cap = 0;
        do {
            cql_order o = {0};
            if ((o.column = parse_cident(p)) == NULL) return NULL;
            if (is_kw(CUR(p), KW_ASC) || is_kw(CUR(p), KW_DESC)) {
                o.desc = CUR(p)->kw == KW_DESC;
                consume(p);
            }
            if (PUSH(p, q->order, q->norder, cap, o)) return NULL;
        } while (accept_p(p, ","));
    }
    if (is_kw(CUR(p), KW_PER)) {
        consume(p);
        if (expect_kw(p, KW_PARTITION) || expect_kw(p, KW_LIMIT)) return NULL;
        if ((q->per_partition_limit = parse_int_value(p)) == NULL) return NULL;
    }
    if (accept_kw(p, KW_LIMIT) && (q->limit = parse_int_value(p)) == NULL) return NULL;
    if (accept_kw(p, KW_ALLOW)) {
        if (expect_kw(p, KW_FILTERING)) return NULL;
        q->allow_filtering = 1;
    }
    return s;
}

static cql_stmt *parse_insert(parser *p, cql_stmt *s)
{
    consume(p); /* INSERT */
    if (expect_kw(p, KW_INTO) || parse_qname(p, &s->name, "table")) return NULL;
    token *t = CUR(p);
    if (is_p(t, "(")) {
        consume(p);
        if (parse_name_list(p, &s->u.insert.columns, &s->u.insert.ncolumns, 1) ||
            expect_p(p, ")") || expect_kw(p, KW_VALUES) || expect_p(p, "("))
            return NULL;
        size_t cap = 0, n = 0;
        do {
            cql_expr *v = parse_term(p);
            if (v == NULL || PUSH(p, s->u.insert.values, n, cap, v)) return NULL;
        } while (accept_p(p, ","));
        if (expect_p(p, ")")) return NULL;
        s->u.insert.nvalues = n;
    } else if (is_kw(t, KW_JSON)) {
        consume(p);
        t = CUR(p);
        if (t->kind == TK_STRING) {
            s->u.insert.json = parse_constant(p);
        } else if (t->kind == TK_QMARK || is_p(t, ":")) {
            s->u.insert.json = parse_marker_opt(p);
        } else {
            return no_viable(p);
        }
        if (s->u.insert.json == NULL) return NULL;
        if (accept_kw(p, KW_DEFAULT)) {
            s->u.insert.default_given = 1;
            if (is_kw(CUR(p), KW_UNSET))
                s->u.insert.default_unset = 1;
            else if (!is_kw(CUR(p), KW_NULL))
                return no_viable(p);
            consume(p);
        }
    } else {
        return no_viable(p);
    }
    if (if_not_exists(p, &s->if_not_exists)) return NULL;
    if (accept_kw(p, KW_USING) && parse_using(p, &s->u.insert.using, &s->u.insert.nusing, 0))
        return NULL;
    return s;
}

static int same_name(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* columnOperation: c = v | c = c + v | c = c - v | c = v + c | c += v | c -= v | c[k] = v |
 * c.f = v */
static int parse_assignment(parser *p, cql_assign *a)
{
    memset(a, 0, sizeof *a);
    if ((a->column = parse_cident(p)) == NULL) return -1;
    token *t = CUR(p);
    if (is_p(t, "+=") || is_p(t, "-=")) {
        a->kind = t->text[0] == '+' ? CQL_SET_ADD : CQL_SET_SUB;
        consume(p);
        a->value = parse_term(p);
        return a->value ? 0 : -1;
    }
    if (is_p(t, "[")) {
        consume(p);
        a->kind = CQL_SET_ELEMENT;
        if ((a->key = parse_term(p)) == NULL || expect_p(p, "]") || expect_p(p, "=")) return -1;
        a->value = parse_term(p);
        return a->value ? 0 : -1;
    }
    if (is_p(t, ".")) {
        consume(p);
        a->kind = CQL_SET_FIELD;
        if ((a->field = parse_ident(p)) == NULL || expect_p(p, "=")) return -1;
        a->value = parse_term(p);
        return a->value ? 0 : -1;
    }
    if (!is_p(t, "=")) {
        no_viable(p);
        return -1;
    }
    consume(p);
    t = CUR(p);
    token *next = is_cident(t) ? la(p, 1) : t;
    if (is_cident(t) && (is_p(next, "+") || is_p(next, "-"))) {
        const char *c = parse_cident(p);
        char sig = CUR(p)->text[0];
        consume(p);
        if ((a->value = parse_term(p)) == NULL) return -1;
        if (!same_name(c, a->column)) {
            fail_plain(p, CQL_ERR_SYNTAX,
                       "Only expressions of the form X = X %c<value> are supported.", sig);
            return -1;
        }
        a->kind = sig == '+' ? CQL_SET_ADD : CQL_SET_SUB;
        return 0;
    }
    if (is_cident(t) && next->kind == TK_INTEGER) {
        const char *c = parse_cident(p);
        token *i = CUR(p);
        if ((a->value = parse_constant(p)) == NULL) return -1;
        if (!same_name(c, a->column)) {
            fail_plain(p, CQL_ERR_SYNTAX,
                       "Only expressions of the form X = X %c <value> are supported.",
                       i->text[0] == '-' ? '-' : '+');
            return -1;
        }
        a->kind = CQL_SET_ADD;
        return 0;
    }
    if (is_cident(t) && !is_p(next, "(") && !is_p(next, ".")) {
        no_viable_ahead(p, 1);
        return -1;
    }
    if ((a->value = parse_term(p)) == NULL) return -1;
    a->kind = CQL_SET_VALUE;
    if (accept_p(p, "+")) {
        const char *c = parse_cident(p);
        if (c == NULL) return -1;
        if (!same_name(c, a->column)) {
            fail_plain(p, CQL_ERR_SYNTAX,
                       "Only expressions of the form X = <value> + X are supported.");
            return -1;
        }
        a->kind = CQL_SET_PREPEND;
    }
    return 0;
}

/* Cassandra's addRawUpdate: the last of n assignments refused when an earlier one sets the
 * same column and either of the two sets its whole value, or both set one field. 0, or -1
 * with the grammar's own error. */
static int incompatible_setting(parser *p, const cql_assign *set, size_t n)
{
    const cql_assign *a = &set[n - 1];
    for (size_t i = 0; i + 1 < n; i++) {
        const cql_assign *b = &set[i];
        if (!same_name(a->column, b->column)) continue;
        if (a->kind != CQL_SET_VALUE && b->kind != CQL_SET_VALUE &&
            !(a->kind == CQL_SET_FIELD && b->kind == CQL_SET_FIELD &&
              same_name(a->field, b->field)))
            continue;
        buf name;
        buf_init(&name, 0);
        cql_print_name(&name, a->column);
        fail_plain(p, CQL_ERR_SYNTAX, "Multiple incompatible setting of column %s",
                   name.data ? name.data : a->column);
        buf_free(&name);
        return -1;
    }
    return 0;
}

static cql_stmt *parse_update(parser *p, cql_stmt *s)
{
    consume(p); /* UPDATE */
    if (parse_qname(p, &s->name, "table")) return NULL;
    if (accept_kw(p, KW_USING) && parse_using(p, &s->u.update.using, &s->u.update.nusing, 0))
        return NULL;
    if (expect_kw(p, KW_SET)) return NULL;
    size_t cap = 0;
    do {
        cql_assign a;
        if (parse_assignment(p, &a) || PUSH(p, s->u.update.set, s->u.update.nset, cap, a) ||
            incompatible_setting(p, s->u.update.set, s->u.update.nset))
            return NULL;
    } while (accept_p(p, ","));
    if (expect_kw(p, KW_WHERE) || parse_where(p, &s->u.update.where)) return NULL;
    if (accept_kw(p, KW_IF) && parse_if(p, &s->if_exists, &s->u.update.conds, &s->u.update.nconds))
        return NULL;
    return s;
}

static cql_stmt *parse_delete(parser *p, cql_stmt *s)
{
    consume(p); /* DELETE */
    if (!is_kw(CUR(p), KW_FROM)) {
        size_t cap = 0;
        do {
            cql_deletion d = {0};
            if ((d.column = parse_cident(p)) == NULL) return NULL;
            if (accept_p(p, "[")) {
                if ((d.key = parse_term(p)) == NULL || expect_p(p, "]")) return NULL;
            } else if (accept_p(p, ".")) {
                if ((d.field = parse_ident(p)) == NULL) return NULL;
            }
            if (PUSH(p, s->u.del.cols, s->u.del.ncols, cap, d)) return NULL;
        } while (accept_p(p, ","));
    }
    if (expect_kw(p, KW_FROM) || parse_qname(p, &s->name, "table")) return NULL;
    if (accept_kw(p, KW_USING) && parse_using(p, &s->u.del.using, &s->u.del.nusing, 1)) return NULL;
    if (expect_kw(p, KW_WHERE) || parse_where(p, &s->u.del.where)) return NULL;
    if (accept_kw(p, KW_IF) && parse_if(p, &s->if_exists, &s->u.del.conds, &s->u.del.nconds))
        return NULL;
    return s;
}

static cql_stmt *new_stmt(parser *p, cql_stmt_kind k)
{
    cql_stmt *s = alloc(p, sizeof *s);
    if (s == NULL) return NULL;
    s->kind = k;
    s->offset = CUR(p)->off;
    return s;
}

static void stmt_end(parser *p, cql_stmt *s)
{
    size_t last = p->at ? p->real[p->at - 1] : p->real[0];
    const token *t = &p->lx.toks[last];
    s->length = t->off + t->len > s->offset ? t->off + t->len - s->offset : 0;
}

static cql_stmt *parse_batch(parser *p, cql_stmt *s)
{
    consume(p); /* BEGIN */
    if (accept_kw(p, KW_UNLOGGED))
        s->u.batch.type = 1;
    else if (accept_kw(p, KW_COUNTER))
        s->u.batch.type = 2;
    if (expect_kw(p, KW_BATCH)) return NULL;
    if (accept_kw(p, KW_USING) && parse_using(p, &s->u.batch.using, &s->u.batch.nusing, 0))
        return NULL;
    size_t cap = 0;
    for (;;) {
        token *t = CUR(p);
        stmt_fn fn = is_kw(t, KW_INSERT)   ? parse_insert
                     : is_kw(t, KW_UPDATE) ? parse_update
                     : is_kw(t, KW_DELETE) ? parse_delete
                                           : NULL;
        if (fn == NULL) break;
        cql_stmt *sub = new_stmt(p, fn == parse_insert   ? CQL_INSERT
                                    : fn == parse_update ? CQL_UPDATE
                                                         : CQL_DELETE);
        if (sub == NULL || fn(p, sub) == NULL) return NULL;
        stmt_end(p, sub);
        if (PUSH(p, s->u.batch.stmts, s->u.batch.nstmts, cap, sub)) return NULL;
        accept_p(p, ";");
    }
    if (expect_kw(p, KW_APPLY) || expect_kw(p, KW_BATCH)) return NULL;
    return s;
}

static int parse_column_def(parser *p, cql_column_def *c, int allow_pk)
{
    memset(c, 0, sizeof *c);
    if ((c->name = parse_ident(p)) == NULL || (c->type = parse_type(p)) == NULL) return -1;
    if (accept_kw(p, KW_STATIC)) c->is_static = 1;
    if (allow_pk && accept_kw(p, KW_PRIMARY)) {
        if (expect_kw(p, KW_KEY)) return -1;
        c->primary_key = 1;
    }
    return 0;
}

static cql_stmt *parse_create_table(parser *p, cql_stmt *s)
{
    if (if_not_exists(p, &s->if_not_exists) || parse_qname(p, &s->name, "table") ||
        expect_p(p, "("))
        return NULL;
    size_t cap = 0;
    int first = 1;
    do {
        token *t = CUR(p);
        if (!first && !is_ident(t) && !is_kw(t, KW_PRIMARY)) continue; /* trailing ',' */
        first = 0;
        if (is_kw(t, KW_PRIMARY)) {
            consume(p);
            if (expect_kw(p, KW_KEY)) return NULL;
            cql_pkey pk = {0};
            if (parse_pkey(p, &pk)) return NULL;
            if (s->u.create_table.has_pk++ == 0) s->u.create_table.pk = pk;
        } else if (is_ident(t)) {
            cql_column_def c;
            if (parse_column_def(p, &c, 1) ||
                PUSH(p, s->u.create_table.cols, s->u.create_table.ncols, cap, c))
                return NULL;
        } else {
            return no_viable(p);
        }
    } while (accept_p(p, ","));
    if (expect_p(p, ")")) return NULL;
    if (accept_kw(p, KW_WITH) && parse_table_options(p, &s->u.create_table.opts)) return NULL;
    return s;
}

static cql_stmt *parse_alter_table(parser *p, cql_stmt *s)
{
    if (if_exists(p, &s->if_exists) || parse_qname(p, &s->name, "table")) return NULL;
    cql_alter_table *a = &s->u.alter_table;
    token *t = CUR(p);
    size_t cap = 0;
    if (is_kw(t, KW_ALTER)) {
        consume(p);
        a->what = CQL_ALTER_TYPE_OF;
        cql_column_def c = {0};
        if ((c.name = parse_cident(p)) == NULL || expect_kw(p, KW_TYPE) ||
            (c.type = parse_type(p)) == NULL || PUSH(p, a->add, a->nadd, cap, c))
            return NULL;
    } else if (is_kw(t, KW_ADD)) {
        consume(p);
        a->what = CQL_ALTER_ADD;
        if (if_not_exists(p, &a->if_column)) return NULL;
        int paren = accept_p(p, "(");
        do {
            cql_column_def c;
            if (parse_column_def(p, &c, 0) || PUSH(p, a->add, a->nadd, cap, c)) return NULL;
        } while (paren && accept_p(p, ","));
        if (paren && expect_p(p, ")")) return NULL;
    } else if (is_kw(t, KW_DROP) && is_kw(la(p, 1), KW_COMPACT) && is_kw(la(p, 2), KW_STORAGE)) {
        consume(p);
        consume(p);
        consume(p);
        a->what = CQL_ALTER_DROP_COMPACT_STORAGE;
    } else if (is_kw(t, KW_DROP)) {
        consume(p);
        a->what = CQL_ALTER_DROP;
        if (if_exists(p, &a->if_column)) return NULL;
        if (accept_p(p, "(")) {
            if (parse_name_list(p, &a->names, &a->nnames, 0) || expect_p(p, ")")) return NULL;
        } else {
            const char *c = parse_ident(p);
            if (c == NULL || PUSH(p, a->names, a->nnames, cap, c)) return NULL;
        }
        if (accept_kw(p, KW_USING)) {
            if (expect_kw(p, KW_TIMESTAMP)) return NULL;
            if (CUR(p)->kind != TK_INTEGER) return mismatched(p, "INTEGER");
            if ((a->timestamp = parse_constant(p)) == NULL) return NULL;
        }
    } else if (is_kw(t, KW_RENAME)) {
        consume(p);
        a->what = CQL_ALTER_RENAME;
        if (if_exists(p, &a->if_column)) return NULL;
        size_t tcap = 0, nto = 0;
        do {
            const char *from = parse_ident(p);
            if (from == NULL || PUSH(p, a->names, a->nnames, cap, from) || expect_kw(p, KW_TO))
                return NULL;
            const char *to = parse_ident(p);
            if (to == NULL || PUSH(p, a->to, nto, tcap, to)) return NULL;
        } while (accept_kw(p, KW_AND));
    } else if (is_kw(t, KW_WITH)) {
        consume(p);
        a->what = CQL_ALTER_WITH;
        if (parse_properties(p, &a->props)) return NULL;
    } else {
        return no_viable(p);
    }
    return s;
}

static cql_stmt *parse_create_type(parser *p, cql_stmt *s)
{
    if (if_not_exists(p, &s->if_not_exists) || parse_type_name(p, &s->name) || expect_p(p, "("))
        return NULL;
    cql_create_type *c = &s->u.create_type;
    size_t fcap = 0, tcap = 0, nt = 0;
    int first = 1;
    do {
        if (!first && !is_ident(CUR(p))) continue;
        first = 0;
        const char *f = parse_ident(p);
        cql_type_expr *ty = f ? parse_type(p) : NULL;
        if (ty == NULL || PUSH(p, c->fields, c->nfields, fcap, f) ||
            PUSH(p, c->types, nt, tcap, ty))
            return NULL;
    } while (accept_p(p, ","));
    return expect_p(p, ")") ? NULL : s;
}

static cql_stmt *parse_alter_type(parser *p, cql_stmt *s)
{
    if (if_exists(p, &s->if_exists) || parse_type_name(p, &s->name)) return NULL;
    cql_alter_type *a = &s->u.alter_type;
    token *t = CUR(p);
    size_t cap = 0, tcap = 0, nto = 0;
    if (is_kw(t, KW_ALTER) || is_kw(t, KW_ADD)) {
        consume(p);
        a->what = t->kw == KW_ALTER ? CQL_ALTER_TYPE_OF : CQL_ALTER_ADD;
        if (a->what == CQL_ALTER_ADD && if_not_exists(p, &a->if_field)) return NULL;
        const char *f = parse_ident(p);
        if (f == NULL || PUSH(p, a->fields, a->nfields, cap, f)) return NULL;
        if (a->what == CQL_ALTER_TYPE_OF && expect_kw(p, KW_TYPE)) return NULL;
        return (a->type = parse_type(p)) ? s : NULL;
    }
    if (is_kw(t, KW_RENAME)) {
        consume(p);
        a->what = CQL_ALTER_RENAME;
        if (if_exists(p, &a->if_field)) return NULL;
        do {
            const char *from = parse_ident(p);
            if (from == NULL || PUSH(p, a->fields, a->nfields, cap, from) || expect_kw(p, KW_TO))
                return NULL;
            const char *to = parse_ident(p);
            if (to == NULL || PUSH(p, a->to, nto, tcap, to)) return NULL;
        } while (accept_kw(p, KW_AND));
        return s;
    }
    return no_viable(p);
}

static cql_stmt *parse_create_index(parser *p, cql_stmt *s)
{
    cql_create_index *c = &s->u.create_index;
    if (accept_kw(p, KW_CUSTOM)) c->custom = 1;
    if (expect_kw(p, KW_INDEX) || if_not_exists(p, &s->if_not_exists)) return NULL;
    if (!is_kw(CUR(p), KW_ON)) {
        if (CUR(p)->kind == TK_QMARK)
            return fail_plain(p, CQL_ERR_SYNTAX, "Bind variables cannot be used for index names");
        if ((c->index = parse_ident(p)) == NULL) return NULL;
    }
    if (expect_kw(p, KW_ON) || parse_qname(p, &s->name, "table") || expect_p(p, "(")) return NULL;
    size_t cap = 0;
    if (!is_p(CUR(p), ")")) {
        do {
            cql_index_target tg = {0};
            token *t = CUR(p);
            if ((is_kw(t, KW_VALUES) || is_kw(t, KW_KEYS) || is_kw(t, KW_ENTRIES) ||
                 is_kw(t, KW_FULL)) &&
                is_p(la(p, 1), "(")) {
                tg.kind = t->kw == KW_VALUES    ? CQL_INDEX_VALUES
                          : t->kw == KW_KEYS    ? CQL_INDEX_KEYS
                          : t->kw == KW_ENTRIES ? CQL_INDEX_ENTRIES
                                                : CQL_INDEX_FULL;
                consume(p);
                consume(p);
                if ((tg.column = parse_cident(p)) == NULL || expect_p(p, ")")) return NULL;
            } else {
                if ((tg.column = parse_cident(p)) == NULL) return NULL;
            }
            if (PUSH(p, c->targets, c->ntargets, cap, tg)) return NULL;
        } while (accept_p(p, ","));
    }
    if (expect_p(p, ")")) return NULL;
    if (accept_kw(p, KW_USING)) {
        if (CUR(p)->kind != TK_STRING) return mismatched(p, "STRING_LITERAL");
        c->using_class = CUR(p)->text;
        consume(p);
    }
    if (accept_kw(p, KW_WITH) && parse_properties(p, &c->props)) return NULL;
    return s;
}

static cql_stmt *parse_create_view(parser *p, cql_stmt *s)
{
    cql_create_view *v = &s->u.create_view;
    if (expect_kw(p, KW_VIEW) || if_not_exists(p, &s->if_not_exists) ||
        parse_qname(p, &s->name, "table") || expect_kw(p, KW_AS) || expect_kw(p, KW_SELECT))
        return NULL;
    sel_list sl;
    if (parse_selectors(p, &sl) == NULL) return NULL;
    v->sel = sl.sel;
    v->nsel = sl.n;
    if (expect_kw(p, KW_FROM) || parse_qname(p, &v->base, "table")) return NULL;
    if (accept_kw(p, KW_WHERE) && parse_where(p, &v->where)) return NULL;
    if (expect_kw(p, KW_PRIMARY) || expect_kw(p, KW_KEY) || parse_pkey(p, &v->pk)) return NULL;
    if (accept_kw(p, KW_WITH) && parse_table_options(p, &v->opts)) return NULL;
    return s;
}

/* The word a token was written as, ignoring case ("schema" lexes as KEYSPACE). */
static int spelt(const token *t, const char *word)
{
    return t->kind == TK_WORD && t->text_len == strlen(word) &&
           strncasecmp(t->text, word, t->text_len) == 0;
}

/* DESCRIBE | DESC, then what it describes, then WITH INTERNALS if given. */
static cql_stmt *parse_describe(parser *p, cql_stmt *s)
{
    cql_describe *d = &s->u.describe;
    consume(p);
    token *t = CUR(p);
    kw_id k = t->kind == TK_WORD ? t->kw : KW_NONE;
    int rc = 0;
    if (k == KW_FULL) {
        consume(p);
        if (!spelt(CUR(p), "schema")) return mismatched(p, "K_SCHEMA");
        consume(p);
        d->what = CQL_DESC_SCHEMA;
        d->full = 1;
    } else if (k == KW_KEYSPACE && spelt(t, "schema")) {
        consume(p);
        d->what = CQL_DESC_SCHEMA;
    } else if (k == KW_CLUSTER && !is_p(la(p, 1), ".")) {
        consume(p);
        d->what = CQL_DESC_CLUSTER;
    } else if (k == KW_ONLY || k == KW_KEYSPACE) {
        d->only = k == KW_ONLY;
        consume(p);
        if (d->only && expect_kw(p, KW_KEYSPACE)) return NULL;
        d->what = CQL_DESC_KEYSPACE;
        if (is_ident(CUR(p)) || CUR(p)->kind == TK_QMARK)
            rc = (s->name.name = parse_keyspace(p)) ? 0 : -1;
    } else if ((k == KW_KEYSPACES || k == KW_TABLES || k == KW_TYPES || k == KW_FUNCTIONS ||
                k == KW_AGGREGATES) &&
               !is_p(la(p, 1), ".")) {
        consume(p);
        d->what = k == KW_KEYSPACES   ? CQL_DESC_KEYSPACES
                  : k == KW_TABLES    ? CQL_DESC_TABLES
                  : k == KW_TYPES     ? CQL_DESC_TYPES
                  : k == KW_FUNCTIONS ? CQL_DESC_FUNCTIONS
                                      : CQL_DESC_AGGREGATES;
    } else if (k == KW_COLUMNFAMILY || k == KW_INDEX) {
        consume(p);
        d->what = k == KW_INDEX ? CQL_DESC_INDEX : CQL_DESC_TABLE;
        rc = parse_qname(p, &s->name, k == KW_INDEX ? "index" : "table");
    } else if (k == KW_TYPE) {
        consume(p);
        d->what = CQL_DESC_TYPE;
        rc = parse_type_name(p, &s->name);
    } else if (k == KW_FUNCTION || k == KW_AGGREGATE) {
        consume(p);
        d->what = k == KW_FUNCTION ? CQL_DESC_FUNCTION : CQL_DESC_AGGREGATE;
        rc = parse_function_name(p, &s->name);
    } else if (k == KW_MATERIALIZED) {
        consume(p);
        if (expect_kw(p, KW_VIEW)) return NULL;
        d->what = CQL_DESC_VIEW;
        rc = parse_qname(p, &s->name, "table");
    } else {
        d->what = CQL_DESC_ANY;
        rc = parse_qname(p, &s->name, "table");
    }
    if (rc) return NULL;
    if (accept_kw(p, KW_WITH)) {
        if (expect_kw(p, KW_INTERNALS)) return NULL;
        d->internals = 1;
    }
    return s;
}

/* Statements of Cassandra's language that quarry does not run. */
static cql_stmt *refuse(parser *p, const char *what)
{
    return fail_plain(p, CQL_ERR_INVALID,
                      "%s statements are not supported by quarry (roles, permissions, "
                      "functions, aggregates and triggers are outside its CQL)",
                      what);
}

static cql_stmt *parse_statement(parser *p)
{
    token *t = CUR(p), *t2 = NULL;
    cql_stmt *s = NULL;
    if (is_kw(t, KW_CREATE) || is_kw(t, KW_ALTER) || is_kw(t, KW_DROP) || is_kw(t, KW_LIST))
        t2 = la(p, 1); /* the statement is told by its second word */
    switch (t->kind == TK_WORD ? t->kw : KW_NONE) {
    case KW_SELECT:
        s = new_stmt(p, CQL_SELECT);
        return s ? parse_select(p, s) : NULL;
    case KW_INSERT:
        s = new_stmt(p, CQL_INSERT);
        return s ? parse_insert(p, s) : NULL;
    case KW_UPDATE:
        s = new_stmt(p, CQL_UPDATE);
        return s ? parse_update(p, s) : NULL;
    case KW_DELETE:
        s = new_stmt(p, CQL_DELETE);
        return s ? parse_delete(p, s) : NULL;
    case KW_BEGIN:
        s = new_stmt(p, CQL_BATCH);
        return s ? parse_batch(p, s) : NULL;
    case KW_USE:
        if ((s = new_stmt(p, CQL_USE)) == NULL) return NULL;
        consume(p);
        return (s->name.name = parse_keyspace(p)) ? s : NULL;
    case KW_TRUNCATE:
        if ((s = new_stmt(p, CQL_TRUNCATE)) == NULL) return NULL;
        consume(p);
        accept_kw(p, KW_COLUMNFAMILY);
        return parse_qname(p, &s->name, "table") ? NULL : s;
    case KW_DESCRIBE:
    case KW_DESC:
        s = new_stmt(p, CQL_DESCRIBE);
        return s ? parse_describe(p, s) : NULL;
    case KW_GRANT:
    case KW_REVOKE:
        return refuse(p, cql_keyword_token_name(t->kw) + 2);
    case KW_LIST:
        return t2->kind == TK_WORD ? refuse(p, "LIST") : no_viable_ahead(p, 1);
    case KW_CREATE:
        switch (t2->kind == TK_WORD ? t2->kw : KW_NONE) {
        case KW_KEYSPACE:
            if ((s = new_stmt(p, CQL_CREATE_KEYSPACE)) == NULL) return NULL;
            consume(p);
            consume(p);
            if (if_not_exists(p, &s->if_not_exists) || (s->name.name = parse_keyspace(p)) == NULL ||
                expect_kw(p, KW_WITH) || parse_properties(p, &s->u.keyspace.props))
                return NULL;
            return s;
        case KW_COLUMNFAMILY:
            if ((s = new_stmt(p, CQL_CREATE_TABLE)) == NULL) return NULL;
            consume(p);
            consume(p);
            return parse_create_table(p, s);
        case KW_TYPE:
            if ((s = new_stmt(p, CQL_CREATE_TYPE)) == NULL) return NULL;
            consume(p);
            consume(p);
            return parse_create_type(p, s);
        case KW_INDEX:
        case KW_CUSTOM:
            if ((s = new_stmt(p, CQL_CREATE_INDEX)) == NULL) return NULL;
            consume(p);
            return parse_create_index(p, s);
        case KW_MATERIALIZED:
            if ((s = new_stmt(p, CQL_CREATE_VIEW)) == NULL) return NULL;
            consume(p);
            consume(p);
            return parse_create_view(p, s);
        case KW_TRIGGER:
        case KW_FUNCTION:
        case KW_AGGREGATE:
        case KW_USER:
        case KW_ROLE:
            return refuse(p, t2->kw == KW_TRIGGER     ? "CREATE TRIGGER"
                             : t2->kw == KW_FUNCTION  ? "CREATE FUNCTION"
                             : t2->kw == KW_AGGREGATE ? "CREATE AGGREGATE"
                             : t2->kw == KW_USER      ? "CREATE USER"
                                                      : "CREATE ROLE");
        case KW_OR:
            return refuse(p, "CREATE OR REPLACE");
        default:
            return no_viable_ahead(p, 1);
        }
    case KW_ALTER:
        switch (t2->kind == TK_WORD ? t2->kw : KW_NONE) {
        case KW_KEYSPACE:
            if ((s = new_stmt(p, CQL_ALTER_KEYSPACE)) == NULL) return NULL;
            consume(p);
            consume(p);
            if (if_exists(p, &s->if_exists) || (s->name.name = parse_keyspace(p)) == NULL ||
                expect_kw(p, KW_WITH) || parse_properties(p, &s->u.keyspace.props))
                return NULL;
            return s;
        case KW_COLUMNFAMILY:
            if ((s = new_stmt(p, CQL_ALTER_TABLE)) == NULL) return NULL;
            consume(p);
            consume(p);
            return parse_alter_table(p, s);
        case KW_TYPE:
            if ((s = new_stmt(p, CQL_ALTER_TYPE)) == NULL) return NULL;
            consume(p);
            consume(p);
            return parse_alter_type(p, s);
        case KW_MATERIALIZED:
            if ((s = new_stmt(p, CQL_ALTER_VIEW)) == NULL) return NULL;
            consume(p);
            consume(p);
            if (expect_kw(p, KW_VIEW) || if_exists(p, &s->if_exists) ||
                parse_qname(p, &s->name, "table") || expect_kw(p, KW_WITH) ||
                parse_properties(p, &s->u.alter_view.props))
                return NULL;
            return s;
        case KW_USER:
        case KW_ROLE:
            return refuse(p, t2->kw == KW_USER ? "ALTER USER" : "ALTER ROLE");
        default:
            return no_viable_ahead(p, 1);
        }
    case KW_DROP: {
        cql_stmt_kind k;
        switch (t2->kind == TK_WORD ? t2->kw : KW_NONE) {
        case KW_KEYSPACE:
            k = CQL_DROP_KEYSPACE;
            break;
        case KW_COLUMNFAMILY:
            k = CQL_DROP_TABLE;
            break;
        case KW_INDEX:
            k = CQL_DROP_INDEX;
            break;
        case KW_TYPE:
            k = CQL_DROP_TYPE;
            break;
        case KW_MATERIALIZED:
            k = CQL_DROP_VIEW;
            break;
        case KW_TRIGGER:
        case KW_FUNCTION:
        case KW_AGGREGATE:
        case KW_USER:
        case KW_ROLE:
            return refuse(p, t2->kw == KW_TRIGGER     ? "DROP TRIGGER"
                             : t2->kw == KW_FUNCTION  ? "DROP FUNCTION"
                             : t2->kw == KW_AGGREGATE ? "DROP AGGREGATE"
                             : t2->kw == KW_USER      ? "DROP USER"
                                                      : "DROP ROLE");
        default:
            return no_viable_ahead(p, 1);
        }
        if ((s = new_stmt(p, k)) == NULL) return NULL;
        consume(p);
        consume(p);
        if (k == CQL_DROP_VIEW && expect_kw(p, KW_VIEW)) return NULL;
        if (if_exists(p, &s->if_exists)) return NULL;
        int rc;
        if (k == CQL_DROP_KEYSPACE)
            rc = (s->name.name = parse_keyspace(p)) ? 0 : -1;
        else if (k == CQL_DROP_TYPE)
            rc = parse_type_name(p, &s->name);
        else
            rc = parse_qname(p, &s->name, k == CQL_DROP_INDEX ? "index" : "table");
        return rc ? NULL : s;
    }
    default:
        return no_viable(p);
    }
}

/* ---- entry points ---- */

static int setup(parser *p, const char *text, size_t len, cql_parsed *out, cql_parse_error *err)
{
    memset(p, 0, sizeof *p);
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    p->src = text;
    p->srclen = len;
    p->err = err;
    /* a tree is at most a few dozen bytes per byte of text */
    arena_init(&out->arena, 64 * len + ((size_t)1 << 20));
    p->ar = &out->arena;
    if (cql_lex(text, len, p->ar, &p->lx)) goto oom;
    p->real = malloc(p->lx.n * sizeof *p->real);
    if (p->real == NULL) goto oom;
    for (size_t i = 0; i < p->lx.n; i++)
        if (p->lx.toks[i].kind != TK_HIDDEN) p->real[p->nreal++] = i;
    p->fetched = 0;
    (void)la(p, 0);
    return 0;
oom:
    err->code = CQL_ERR_SERVER;
    snprintf(err->msg, sizeof err->msg, "out of memory");
    return -1;
}

static int finish(parser *p, cql_parsed *out, int ok)
{
    if (ok && lexer_error_first(p)) ok = 0;
    if (ok && p->nbinds) {
        out->binds = arena_alloc(p->ar, p->nbinds * sizeof *out->binds);
        if (out->binds == NULL) {
            oom(p);
            ok = 0;
        } else {
            memcpy(out->binds, p->binds, p->nbinds * sizeof *out->binds);
            out->nbinds = p->nbinds;
        }
    }
    free(p->binds);
    free(p->real);
    cql_lexed_free(&p->lx);
    if (!ok) {
        if (p->err->code == 0) {
            p->err->code = CQL_ERR_SERVER;
            snprintf(p->err->msg, sizeof p->err->msg, "out of memory");
        }
        cql_parsed_free(out);
        return -1;
    }
    return 0;
}

static int add_stmt(parser *p, cql_parsed *out, size_t *cap, cql_stmt *s)
{
    return PUSH(p, out->stmts, out->nstmts, *cap, s);
}

int cql_parse(const char *text, size_t len, cql_parsed *out, cql_parse_error *err)
{
    parser p;
    if (setup(&p, text, len, out, err)) return finish(&p, out, 0);
    size_t cap = 0;
    cql_stmt *s = parse_statement(&p);
    if (s == NULL || add_stmt(&p, out, &cap, s)) return finish(&p, out, 0);
    stmt_end(&p, s);
    while (accept_p(&p, ";"))
        ;
    if (CUR(&p)->kind != TK_EOF) {
        mismatched(&p, "EOF");
        return finish(&p, out, 0);
    }
    return finish(&p, out, 1);
}

int cql_parse_script(const char *text, size_t len, cql_parsed *out, cql_parse_error *err)
{
    parser p;
    if (setup(&p, text, len, out, err)) return finish(&p, out, 0);
    size_t cap = 0;
    for (;;) {
        while (accept_p(&p, ";"))
            ;
        if (CUR(&p)->kind == TK_EOF) break;
        p.nbinds = 0;
        cql_stmt *s = parse_statement(&p);
        if (s == NULL || add_stmt(&p, out, &cap, s)) return finish(&p, out, 0);
        stmt_end(&p, s);
        if (CUR(&p)->kind != TK_EOF && !is_p(CUR(&p), ";")) {
            mismatched(&p, "';'");
            return finish(&p, out, 0);
        }
    }
    p.nbinds = 0;
    return finish(&p, out, 1);
}

void cql_parsed_free(cql_parsed *p)
{
    arena_free(&p->arena);
    p->stmts = NULL;
    p->nstmts = 0;
    p->binds = NULL;
    p->nbinds = 0;
}
