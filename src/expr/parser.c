/* parser.c — DynamoDB's expression grammar: tokens to trees, then one checking pass.
 *
 * Recursive descent over the token array, backtracking where a parenthesis may open a
 * condition or an operand; a syntax error names the furthest token reached and its
 * neighbours, as DynamoDB does. The checking pass resolves #names and :values and
 * reports the most important semantic error first. Evaluation lives elsewhere. */
#include "expr/ast.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/value.h"

/* Kinds of semantic error, in the order DynamoDB reports them when several occur. */
enum sem_cat {
    SEM_PARENS,
    SEM_UNKNOWN_FUNC,
    SEM_MISUSED,
    SEM_DEPTH,
    SEM_RESERVED,
    SEM_SECTION,
    SEM_NAMEVAL,
    SEM_OVERLAP,
    SEM_CONFLICT,
    SEM_OPERAND, /* ADD and DELETE operand types */
    SEM_OPCOUNT,
    SEM_DISTINCT,
    SEM_FUNCTION,
    SEM_COUNT
};

#define MAX_NESTING 200
#define MAX_IN_OPERANDS 100
#define MAX_EXPRESSION_BYTES 4096 /* DynamoDB's limit on one expression string */

typedef struct parser {
    expr_ctx *cx;
    arena *ar;
    const char *which;
    char label[64]; /* "Invalid <which>: ", or "" when the context is bare */
    const char *text;
    token *t;
    int nt;
    int pos;
    int far;   /* furthest token index at which an alternative failed */
    int depth; /* nesting of parentheses and functions */
    int oom;
    int update; /* SET, REMOVE, ADD, DELETE are keywords */
    int cond;   /* AND, OR, NOT, BETWEEN, IN are keywords */
    char *sem[SEM_COUNT];
    char *cond_err; /* conditions: the error of the first predicate that had one */
} parser;

/* ---- helpers ---- */

static void *palloc(parser *p, size_t n)
{
    void *m = arena_alloc(p->ar, n);
    if (m == NULL) p->oom = 1;
    return m;
}

static void *fail(parser *p)
{
    if (p->pos > p->far) p->far = p->pos;
    return NULL;
}

static const token *tok(parser *p, int i)
{
    return &p->t[i < p->nt ? i : p->nt - 1];
}

static int at(parser *p, tok_kind k)
{
    return tok(p, p->pos)->kind == k;
}

static int accept(parser *p, tok_kind k)
{
    if (!at(p, k)) return 0;
    p->pos++;
    return 1;
}

static int word_is(parser *p, int i, const char *kw)
{
    const token *k = tok(p, i);
    size_t n = strlen(kw);
    return k->kind == TK_IDENT && k->len == n && strncasecmp(p->text + k->start, kw, n) == 0;
}

static int is_keyword(parser *p, int i)
{
    if (p->cond && (word_is(p, i, "AND") || word_is(p, i, "OR") || word_is(p, i, "NOT") ||
                    word_is(p, i, "BETWEEN") || word_is(p, i, "IN")))
        return 1;
    if (p->update && (word_is(p, i, "SET") || word_is(p, i, "REMOVE") || word_is(p, i, "ADD") ||
                      word_is(p, i, "DELETE")))
        return 1;
    return 0;
}

static char *tok_text(parser *p, int i)
{
    const token *k = tok(p, i);
    char *s = arena_strndup(p->ar, p->text + k->start, k->len);
    if (s == NULL) p->oom = 1;
    return s;
}

static void sem(parser *p, enum sem_cat cat, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void sem(parser *p, enum sem_cat cat, const char *fmt, ...)
{
    if (p->sem[cat]) return;
    char msg[QR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->sem[cat] = arena_strndup(p->ar, msg, strlen(msg));
    if (p->sem[cat] == NULL) p->oom = 1;
}

/* ---- grammar: paths and operands ---- */

static int add_elem(parser *p, path *pa, int *cap, path_elem el)
{
    if (pa->n == *cap) {
        int ncap = *cap ? *cap * 2 : 4;
        path_elem *e = palloc(p, (size_t)ncap * sizeof *e);
        if (e == NULL) return -1;
        if (pa->n) memcpy(e, pa->e, (size_t)pa->n * sizeof *e);
        pa->e = e;
        *cap = ncap;
    }
    pa->e[pa->n++] = el;
    return 0;
}

static int path_word(parser *p, path_elem *el)
{
    const token *k = tok(p, p->pos);
    if ((k->kind == TK_IDENT && !is_keyword(p, p->pos)) || k->kind == TK_NAME) {
        el->tok = p->pos;
        el->raw = tok_text(p, p->pos);
        p->pos++;
        return el->raw ? 0 : -1;
    }
    fail(p);
    return -1;
}

/* The .name and [index] elements after a path's start, appended to out (cap is the room
 * out->e has). */
static int parse_path_tail(parser *p, path *out, int cap)
{
    path_elem el;
    for (;;) {
        if (accept(p, TK_DOT)) {
            memset(&el, 0, sizeof el);
            if (path_word(p, &el) || add_elem(p, out, &cap, el)) return -1;
        } else if (accept(p, TK_LBRACKET)) {
            const token *k = tok(p, p->pos);
            if (k->kind != TK_NUM || k->len > 9) {
                fail(p);
                return -1;
            }
            memset(&el, 0, sizeof el);
            el.tok = p->pos;
            el.index = strtol(p->text + k->start, NULL, 10);
            p->pos++;
            if (!accept(p, TK_RBRACKET)) {
                fail(p);
                return -1;
            }
            if (add_elem(p, out, &cap, el)) return -1;
        } else {
            return 0;
        }
    }
}

/* DynamoDB refuses a document path of more than 32 levels (the top-level name counts)
 * in a projection or condition. An update's path is left to the write, which refuses
 * an item nested too deeply ("Nesting Levels have exceeded supported limits"). */
static void check_depth(parser *p, const path *pa)
{
    if (!p->update && pa->n > QR_MAX_DEPTH)
        sem(p, SEM_DEPTH, "The document path has too many nesting levels; nesting levels: %d",
            pa->n);
}

static int parse_path(parser *p, path *out)
{
    int cap = 0;
    path_elem el = {0};
    memset(out, 0, sizeof *out);
    if (path_word(p, &el) || add_elem(p, out, &cap, el)) return -1;
    if (parse_path_tail(p, out, cap)) return -1;
    check_depth(p, out);
    return 0;
}

static operand *parse_operand(parser *p);

static operand *parse_call(parser *p)
{
    operand *o = palloc(p, sizeof *o);
    if (o == NULL) return NULL;
    o->kind = OP_CALL;
    o->fname = tok_text(p, p->pos);
    p->pos += 2; /* name ( */
    int cap = 0;
    for (;;) {
        operand *a = parse_operand(p);
        if (a == NULL) return NULL;
        if (o->na == cap) {
            cap = cap ? cap * 2 : 2;
            operand **na = palloc(p, (size_t)cap * sizeof *na);
            if (na == NULL) return NULL;
            if (o->na) memcpy(na, o->a, (size_t)o->na * sizeof *na);
            o->a = na;
        }
        o->a[o->na++] = a;
        if (accept(p, TK_COMMA)) continue;
        if (accept(p, TK_RPAREN)) return o;
        return fail(p);
    }
}

static operand *parse_operand(parser *p)
{
    if (++p->depth > MAX_NESTING) {
        p->depth--;
        return fail(p);
    }
    operand *o = NULL;
    if (accept(p, TK_LPAREN)) {
        o = parse_operand(p);
        if (o && accept(p, TK_RPAREN)) {
            if (o->paren) o->redundant = 1;
            o->paren = 1;
            /* In conditions a parenthesised path may go on: (a.b).c is a.b.c. */
            if (p->cond && o->kind == OP_PATH && (at(p, TK_DOT) || at(p, TK_LBRACKET))) {
                o->paren = 0;
                if (parse_path_tail(p, &o->path, o->path.n))
                    o = NULL;
                else
                    check_depth(p, &o->path);
            }
        } else {
            o = fail(p);
        }
    } else if (at(p, TK_IDENT) && tok(p, p->pos + 1)->kind == TK_LPAREN && !is_keyword(p, p->pos)) {
        o = parse_call(p);
    } else if (at(p, TK_VALUE)) {
        o = palloc(p, sizeof *o);
        if (o) {
            o->kind = OP_VALUE;
            o->vname = tok_text(p, p->pos);
            p->pos++;
        }
    } else {
        o = palloc(p, sizeof *o);
        if (o) {
            o->kind = OP_PATH;
            if (parse_path(p, &o->path)) o = NULL;
        }
    }
    p->depth--;
    return o;
}

/* ---- grammar: conditions ---- */

cnode *cnode_new(arena *ar, cond_kind kind)
{
    cnode *c = arena_alloc(ar, sizeof *c);
    if (c) c->kind = kind;
    return c;
}

static cnode *mk(parser *p, cond_kind kind, cnode *l, cnode *r)
{
    cnode *c = cnode_new(p->ar, kind);
    if (c == NULL) {
        p->oom = 1;
        return NULL;
    }
    c->l = l;
    c->r = r;
    return c;
}

static int set_args(parser *p, cnode *c, int n)
{
    c->a = palloc(p, (size_t)n * sizeof *c->a);
    c->na = n;
    return c->a ? 0 : -1;
}

static cnode *parse_or(parser *p);

static cnode *parse_predicate(parser *p)
{
    operand *l = parse_operand(p);
    if (l == NULL) return NULL;
    const token *k = tok(p, p->pos);
    static const struct {
        tok_kind t;
        cmp_op op;
    } cmps[] = {
        {TK_EQ, CMP_EQ}, {TK_NE, CMP_NE}, {TK_LT, CMP_LT},
        {TK_LE, CMP_LE}, {TK_GT, CMP_GT}, {TK_GE, CMP_GE},
    };
    for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++) {
        if (k->kind != cmps[i].t) continue;
        p->pos++;
        operand *r = parse_operand(p);
        if (r == NULL) return NULL;
        cnode *c = mk(p, C_CMP, NULL, NULL);
        if (c == NULL || set_args(p, c, 2)) return NULL;
        c->op = cmps[i].op;
        c->a[0] = l;
        c->a[1] = r;
        return c;
    }
    if (word_is(p, p->pos, "BETWEEN")) {
        p->pos++;
        operand *lo = parse_operand(p);
        if (lo == NULL) return NULL;
        if (!word_is(p, p->pos, "AND")) return fail(p);
        p->pos++;
        operand *hi = parse_operand(p);
        if (hi == NULL) return NULL;
        cnode *c = mk(p, C_BETWEEN, NULL, NULL);
        if (c == NULL || set_args(p, c, 3)) return NULL;
        c->a[0] = l;
        c->a[1] = lo;
        c->a[2] = hi;
        return c;
    }
    if (word_is(p, p->pos, "IN")) {
        p->pos++;
        if (!accept(p, TK_LPAREN)) return fail(p);
        int n = 1, cap = 8;
        operand **a = palloc(p, (size_t)cap * sizeof *a);
        if (a == NULL) return NULL;
        a[0] = l;
        for (;;) {
            operand *o = parse_operand(p);
            if (o == NULL) return NULL;
            if (n == cap) {
                operand **na = palloc(p, (size_t)cap * 2 * sizeof *na);
                if (na == NULL) return NULL;
                memcpy(na, a, (size_t)n * sizeof *na);
                a = na;
                cap *= 2;
            }
            a[n++] = o;
            if (accept(p, TK_COMMA)) continue;
            if (accept(p, TK_RPAREN)) break;
            return fail(p);
        }
        cnode *c = mk(p, C_IN, NULL, NULL);
        if (c == NULL) return NULL;
        c->a = a;
        c->na = n;
        return c;
    }
    if (l->kind == OP_CALL && !l->paren) {
        cnode *c = mk(p, C_CALL, NULL, NULL);
        if (c == NULL || set_args(p, c, 1)) return NULL;
        c->a[0] = l;
        return c;
    }
    return fail(p);
}

static cnode *parse_primary(parser *p)
{
    int save = p->pos;
    cnode *c = parse_predicate(p);
    if (c || p->oom) return c;
    p->pos = save;
    if (!accept(p, TK_LPAREN)) return fail(p);
    c = parse_or(p);
    if (c == NULL) return NULL;
    if (!accept(p, TK_RPAREN)) return fail(p);
    if (c->paren) c->redundant = 1;
    c->paren = 1;
    return c;
}

static cnode *parse_not(parser *p)
{
    int negate = word_is(p, p->pos, "NOT");
    if (negate) p->pos++;
    cnode *c = NULL;
    if (p->depth < MAX_NESTING) {
        p->depth++;
        c = negate ? parse_not(p) : parse_primary(p);
        p->depth--;
    } else {
        fail(p);
    }
    return c && negate ? mk(p, C_NOT, c, NULL) : c;
}

static cnode *parse_and(parser *p)
{
    cnode *l = parse_not(p);
    while (l && word_is(p, p->pos, "AND")) {
        p->pos++;
        cnode *r = parse_not(p);
        l = r ? mk(p, C_AND, l, r) : NULL;
    }
    return l;
}

static cnode *parse_or(parser *p)
{
    cnode *l = parse_and(p);
    while (l && word_is(p, p->pos, "OR")) {
        p->pos++;
        cnode *r = parse_and(p);
        l = r ? mk(p, C_OR, l, r) : NULL;
    }
    return l;
}

/* ---- messages ---- */

void path_describe(const path *p, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (n < cap) n += (size_t)snprintf(out + n, cap - n, __VA_ARGS__);                         \
    } while (0)
    PUT("[");
    for (int i = 0; i < p->n; i++) {
        if (i) PUT(", ");
        if (p->e[i].name)
            PUT("%s", p->e[i].name);
        else
            PUT("[%ld]", p->e[i].index);
    }
    PUT("]");
#undef PUT
}

void value_describe(const json_t *av, char *out, size_t cap)
{
    qr_type t = value_type(av);
    json_t *pl = value_payload(av);
    if (json_is_string(pl)) {
        snprintf(out, cap, "AttributeValue: {%s:%s}", value_type_name(t), json_string_value(pl));
    } else {
        char *s = json_dumps(pl, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(out, cap, "AttributeValue: {%s:%s}", value_type_name(t), s ? s : "");
        free(s);
    }
}

static void syntax_error(parser *p)
{
    int i = p->far < 0 ? p->pos : p->far;
    if (i >= p->nt) i = p->nt - 1;
    const token *k = &p->t[i];
    size_t start = i > 0 ? p->t[i - 1].start : k->start;
    size_t end;
    if (k->kind == TK_EOF)
        end = i > 0 ? p->t[i - 1].start + p->t[i - 1].len : start;
    else if (i + 1 < p->nt && p->t[i + 1].kind != TK_EOF)
        end = p->t[i + 1].start + p->t[i + 1].len;
    else
        end = k->start + k->len;
    if (k->kind == TK_EOF)
        err_validation(p->cx->err, "%sSyntax error; token: \"<EOF>\", near: \"%.*s\"", p->label,
                       (int)(end - start), p->text + start);
    else
        err_validation(p->cx->err, "%sSyntax error; token: \"%.*s\", near: \"%.*s\"", p->label,
                       (int)k->len, p->text + k->start, (int)(end - start), p->text + start);
}

/* ---- checking: names, values, functions ---- */

static void mark_used(json_t *set, const char *key)
{
    if (set) json_object_set_new(set, key, json_true());
}

static void resolve_path(parser *p, path *pa)
{
    for (int i = 0; i < pa->n; i++) {
        path_elem *e = &pa->e[i];
        if (e->raw == NULL || e->name) continue;
        if (e->raw[0] == '#') {
            json_t *v = p->cx->names ? json_object_get(p->cx->names, e->raw) : NULL;
            if (!json_is_string(v)) {
                sem(p, SEM_NAMEVAL,
                    "An expression attribute name used in the document path is not defined; "
                    "attribute name: %s",
                    e->raw);
                e->name = e->raw;
                continue;
            }
            mark_used(p->cx->used_names, e->raw);
            if (json_string_length(v) > QR_MAX_NAME_SIZE)
                sem(p, SEM_NAMEVAL,
                    "Attribute name is too large, must be less than 65536 bytes; attribute name: "
                    "%s",
                    e->raw);
            e->name = arena_strndup(p->ar, json_string_value(v), json_string_length(v));
            if (e->name == NULL) {
                p->oom = 1;
                e->name = e->raw;
            }
        } else {
            if (is_reserved_word(e->raw, strlen(e->raw)))
                sem(p, SEM_RESERVED, "Attribute name is a reserved keyword; reserved keyword: %s",
                    e->raw);
            e->name = e->raw;
        }
    }
}

static void resolve_value(parser *p, operand *o)
{
    if (o->value) return;
    json_t *v = p->cx->values ? json_object_get(p->cx->values, o->vname) : NULL;
    if (v == NULL) {
        sem(p, SEM_NAMEVAL,
            "An expression attribute value used in expression is not defined; attribute value: %s",
            o->vname);
        return;
    }
    mark_used(p->cx->used_values, o->vname);
    o->value = arena_keep(p->ar, v);
    if (o->value == NULL) p->oom = 1;
}

/* The type an operand is known to have before evaluation, or NULL. */
static const char *static_type(const operand *o)
{
    if (o->kind == OP_VALUE && o->value) return value_type_name(value_type(o->value));
    if (o->kind == OP_SIZE || o->kind == OP_PLUS || o->kind == OP_MINUS) return "N";
    if (o->kind == OP_LIST_APPEND) return "L";
    return NULL;
}

static int paths_equal(const path *a, const path *b)
{
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++) {
        const path_elem *x = &a->e[i], *y = &b->e[i];
        if ((x->name == NULL) != (y->name == NULL)) return 0;
        if (x->name ? strcmp(x->name, y->name) != 0 : x->index != y->index) return 0;
    }
    return 1;
}

static void check_distinct(parser *p, const char *op, operand *a, operand *b)
{
    if (a->kind != OP_PATH || b->kind != OP_PATH || !paths_equal(&a->path, &b->path)) return;
    char d[512];
    path_describe(&a->path, d, sizeof d);
    sem(p, SEM_DISTINCT,
        "The first operand must be distinct from the remaining operands for this operator or "
        "function; operator: %s, first operand: %s",
        op, d);
}

static int is_cond_function(const char *f)
{
    return strcmp(f, "attribute_exists") == 0 || strcmp(f, "attribute_not_exists") == 0 ||
           strcmp(f, "attribute_type") == 0 || strcmp(f, "begins_with") == 0 ||
           strcmp(f, "contains") == 0 || strcmp(f, "size") == 0;
}

/* The functions only an update expression's SET may use. */
static int is_update_function(const char *f)
{
    return strcmp(f, "if_not_exists") == 0 || strcmp(f, "list_append") == 0;
}

static void check_arity(parser *p, operand *call, int n)
{
    if (call->na != n)
        sem(p, SEM_OPCOUNT,
            "Incorrect number of operands for operator or function; operator or function: %s, "
            "number of operands: %d",
            call->fname, call->na);
}

static void check_operand_type(parser *p, const char *fn, operand *o, const char *ok1,
                               const char *ok2)
{
    const char *t = static_type(o);
    if (t && strcmp(t, ok1) != 0 && (ok2 == NULL || strcmp(t, ok2) != 0))
        sem(p, SEM_FUNCTION,
            "Incorrect operand type for operator or function; operator or function: %s, operand "
            "type: %s",
            fn, t);
}

static void check_operand(parser *p, operand *o, int update);

static void check_args(parser *p, operand *call, int update)
{
    for (int i = 0; i < call->na; i++)
        check_operand(p, call->a[i], update);
}

/* Checks an operand of a condition (update = 0) or of a SET value (update = 1). */
static void check_operand(parser *p, operand *o, int update)
{
    if (o->redundant) sem(p, SEM_PARENS, "The expression has redundant parentheses;");
    switch (o->kind) {
    case OP_PATH:
        resolve_path(p, &o->path);
        return;
    case OP_VALUE:
        resolve_value(p, o);
        return;
    case OP_PLUS:
    case OP_MINUS:
        check_operand(p, o->a[0], update);
        check_operand(p, o->a[1], update);
        for (int i = 0; i < 2; i++)
            check_operand_type(p, o->kind == OP_PLUS ? "+" : "-", o->a[i], "N", NULL);
        return;
    case OP_CALL:
        break;
    default:
        return;
    }
    check_args(p, o, update);
    /* Of the update functions only if_not_exists may stand as another function's
     * operand: list_append(list_append(...), ...) is refused (as in DynamoDB's own
     * clients), while list_append(if_not_exists(a, :empty), :v) is the common idiom.
     * As if_not_exists's first operand it is the missing document path that is told. */
    int path_first = strcmp(o->fname, "if_not_exists") == 0;
    for (int i = path_first; update && i < o->na; i++)
        if (o->a[i]->kind == OP_LIST_APPEND)
            sem(p, SEM_MISUSED,
                "The function is not allowed to be used this way in an expression; function: %s",
                o->a[i]->fname);
    if (update && strcmp(o->fname, "if_not_exists") == 0) {
        check_arity(p, o, 2);
        if (o->na >= 1 && o->a[0]->kind != OP_PATH)
            sem(p, SEM_FUNCTION,
                "Operator or function requires a document path; operator or function: %s",
                o->fname);
        o->kind = OP_IF_NOT_EXISTS;
    } else if (update && strcmp(o->fname, "list_append") == 0) {
        check_arity(p, o, 2);
        for (int i = 0; i < o->na; i++)
            check_operand_type(p, o->fname, o->a[i], "L", NULL);
        o->kind = OP_LIST_APPEND;
    } else if (!update && strcmp(o->fname, "size") == 0) {
        check_arity(p, o, 1);
        const char *t = o->na >= 1 ? static_type(o->a[0]) : NULL;
        if (t && (strcmp(t, "N") == 0 || strcmp(t, "BOOL") == 0 || strcmp(t, "NULL") == 0))
            sem(p, SEM_FUNCTION,
                "Incorrect operand type for operator or function; operator or function: size, "
                "operand type: %s",
                t);
        o->kind = OP_SIZE;
    } else if (!update && is_cond_function(o->fname)) {
        sem(p, SEM_MISUSED,
            "The function is not allowed to be used this way in an expression; function: %s",
            o->fname);
    } else if (update && is_cond_function(o->fname)) {
        /* A function DynamoDB knows, in the wrong kind of expression: named as such (it
         * ranks with an unknown name). */
        sem(p, SEM_UNKNOWN_FUNC,
            "The function is not allowed in an update expression; function: %s", o->fname);
    } else if (!update && is_update_function(o->fname)) {
        sem(p, SEM_UNKNOWN_FUNC,
            "The function is not allowed in a condition expression; function: %s", o->fname);
    } else {
        sem(p, SEM_UNKNOWN_FUNC, "Invalid function name; function: %s", o->fname);
    }
}

static const char *const type_list = "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}";

static void check_call_cond(parser *p, cnode *c)
{
    operand *call = c->a[0];
    const char *f = call->fname;
    check_args(p, call, 0);
    if (strcmp(f, "attribute_exists") == 0 || strcmp(f, "attribute_not_exists") == 0) {
        check_arity(p, call, 1);
        if (call->na >= 1 && call->a[0]->kind != OP_PATH)
            sem(p, SEM_FUNCTION,
                "Operator or function requires a document path; operator or function: %s", f);
        c->kind = f[10] == 'e' ? C_EXISTS : C_NOT_EXISTS;
    } else if (strcmp(f, "attribute_type") == 0) {
        /* The first operand may be any operand, a :value too (DynamoDB accepts
         * attribute_type(:v, :t), unlike attribute_exists(:v)). */
        check_arity(p, call, 2);
        if (call->na == 2) check_distinct(p, f, call->a[0], call->a[1]);
        if (call->na >= 2) {
            const char *t = static_type(call->a[1]);
            if (t == NULL || strcmp(t, "S") != 0) {
                sem(p, SEM_FUNCTION,
                    "Incorrect operand type for operator or function; operator or function: %s, "
                    "operand type: %s",
                    f, t ? t : type_list);
            } else {
                const char *name = json_string_value(value_payload(call->a[1]->value));
                if (value_type_from_name(name) == QR_T_NONE)
                    sem(p, SEM_FUNCTION,
                        "Invalid attribute type name found; type: %s, valid types: "
                        "{B,NULL,SS,BOOL,L,BS,N,NS,S,M}",
                        name);
            }
        }
        c->kind = C_TYPE;
    } else if (strcmp(f, "begins_with") == 0 || strcmp(f, "contains") == 0) {
        check_arity(p, call, 2);
        if (call->na == 2) check_distinct(p, f, call->a[0], call->a[1]);
        if (f[0] == 'b')
            for (int i = 0; i < call->na; i++)
                check_operand_type(p, f, call->a[i], "S", "B");
        c->kind = f[0] == 'b' ? C_BEGINS : C_CONTAINS;
    } else if (strcmp(f, "size") == 0) {
        sem(p, SEM_MISUSED,
            "The function is not allowed to be used this way in an expression; function: %s", f);
    } else if (is_update_function(f)) {
        sem(p, SEM_UNKNOWN_FUNC,
            "The function is not allowed in a condition expression; function: %s", f);
    } else {
        sem(p, SEM_UNKNOWN_FUNC, "Invalid function name; function: %s", f);
    }
    c->a = call->a;
    c->na = call->na;
}

static const char *cmp_text(cmp_op op)
{
    static const char *const t[] = {"=", "<>", "<", "<=", ">", ">="};
    return t[op];
}

static void check_between(parser *p, operand *lo, operand *hi)
{
    if (lo->kind != OP_VALUE || hi->kind != OP_VALUE || !lo->value || !hi->value) return;
    char a[600], b[600];
    value_describe(lo->value, a, sizeof a);
    value_describe(hi->value, b, sizeof b);
    if (value_type(lo->value) != value_type(hi->value)) {
        sem(p, SEM_FUNCTION,
            "The BETWEEN operator requires same data type for lower and upper bounds; lower bound "
            "operand: %s, upper bound operand: %s",
            a, b);
        return;
    }
    int cmp;
    if (value_compare(lo->value, hi->value, &cmp) == 0 && cmp > 0)
        sem(p, SEM_FUNCTION,
            "The BETWEEN operator requires upper bound to be greater than or equal to lower "
            "bound; lower bound operand: %s, upper bound operand: %s",
            a, b);
}

/* Conditions report names, values, operand counts, distinctness and operand types per
 * predicate: the first predicate with such an error decides, by this priority. */
static void settle_predicate(parser *p)
{
    static const enum sem_cat order[] = {SEM_NAMEVAL, SEM_OPCOUNT, SEM_DISTINCT, SEM_FUNCTION};
    for (size_t i = 0; !p->cond_err && i < sizeof order / sizeof order[0]; i++)
        p->cond_err = p->sem[order[i]];
}

static void check_cond(parser *p, cnode *c)
{
    if (c->redundant) sem(p, SEM_PARENS, "The expression has redundant parentheses;");
    switch (c->kind) {
    case C_OR:
    case C_AND:
        check_cond(p, c->l);
        check_cond(p, c->r);
        return;
    case C_NOT:
        check_cond(p, c->l);
        return;
    case C_CALL:
        check_call_cond(p, c);
        settle_predicate(p);
        return;
    default:
        break;
    }
    for (int i = 0; i < c->na; i++)
        check_operand(p, c->a[i], 0);
    /* Ordering needs S, N or B: a constant of another type can never satisfy it. */
    if ((c->kind == C_CMP && c->op >= CMP_LT) || c->kind == C_BETWEEN) {
        for (int i = 0; i < c->na; i++) {
            const char *t = static_type(c->a[i]);
            if (t && strcmp(t, "S") != 0 && strcmp(t, "N") != 0 && strcmp(t, "B") != 0)
                sem(p, SEM_FUNCTION,
                    "Incorrect operand type for operator or function; operator or function: %s, "
                    "operand type: %s",
                    c->kind == C_BETWEEN ? "BETWEEN" : cmp_text(c->op), t);
        }
    }
    if (c->kind == C_CMP) {
        check_distinct(p, cmp_text(c->op), c->a[0], c->a[1]);
    } else if (c->kind == C_BETWEEN) {
        check_between(p, c->a[1], c->a[2]);
    } else if (c->kind == C_IN && c->na - 1 > MAX_IN_OPERANDS) {
        sem(p, SEM_FUNCTION,
            "The IN operator is provided with too many operands; number of operands: %d",
            c->na - 1);
    }
    settle_predicate(p);
}

/* Two paths of one update or projection may not overlap (one a prefix of the other)
 * nor conflict (a name and an index at the same place). */
static void check_overlap(parser *p, const path *a, const path *b)
{
    int n = a->n < b->n ? a->n : b->n;
    char d1[512], d2[512];
    for (int i = 0; i < n; i++) {
        const path_elem *x = &a->e[i], *y = &b->e[i];
        if ((x->name == NULL) != (y->name == NULL)) {
            path_describe(a, d1, sizeof d1);
            path_describe(b, d2, sizeof d2);
            sem(p, SEM_CONFLICT,
                "Two document paths conflict with each other; must remove or rewrite one of these "
                "paths; path one: %s, path two: %s",
                d1, d2);
            return;
        }
        if (x->name ? strcmp(x->name, y->name) != 0 : x->index != y->index) return;
    }
    path_describe(a, d1, sizeof d1);
    path_describe(b, d2, sizeof d2);
    sem(p, SEM_OVERLAP,
        "Two document paths overlap with each other; must remove or rewrite one of these paths; "
        "path one: %s, path two: %s",
        d1, d2);
}

/* ---- entry points ---- */

static int start(parser *p, expr_ctx *cx, const char *which, const char *text, arena *ar)
{
    memset(p, 0, sizeof *p);
    p->cx = cx;
    p->ar = ar;
    p->which = which;
    if (!cx->bare) snprintf(p->label, sizeof p->label, "Invalid %s: ", which);
    p->text = text ? text : "";
    p->far = -1;
    if (p->text[strspn(p->text, " \t\r\n")] == '\0')
        return err_validation(cx->err, "%sThe expression can not be empty;", p->label);
    size_t len = strlen(p->text);
    if (len > MAX_EXPRESSION_BYTES)
        return err_validation(cx->err,
                              "%sExpression size has exceeded the maximum allowed size; "
                              "expression size: %zu",
                              p->label, len);
    if (lex(p->text, &p->t, &p->nt))
        return err_set(cx->err, QR_E_INTERNAL, "out of memory parsing %s", which);
    return 0;
}

/* DynamoDB allows at most 300 operators in one expression: comparisons, AND, OR, NOT,
 * BETWEEN (whose AND is part of it), IN, and + and - in updates; parentheses, function
 * calls and SET's '=' do not count. The count is checked once the expression parses,
 * before its semantic errors; one nested deeper than MAX_NESTING is a syntax error. */
#define MAX_OPERATORS 300

static int count_operators(parser *p)
{
    int n = 0, between = 0;
    for (int i = 0; i < p->nt && n <= MAX_OPERATORS; i++) {
        switch (p->t[i].kind) {
        case TK_PLUS:
        case TK_MINUS:
            n++;
            break;
        case TK_EQ:
        case TK_NE:
        case TK_LT:
        case TK_LE:
        case TK_GT:
        case TK_GE:
            if (p->cond) n++;
            break;
        case TK_IDENT:
            if (!p->cond) break;
            if (word_is(p, i, "BETWEEN")) {
                between++;
                n++;
            } else if (word_is(p, i, "AND") && between) {
                between--;
            } else if (word_is(p, i, "AND") || word_is(p, i, "OR") || word_is(p, i, "NOT") ||
                       word_is(p, i, "IN")) {
                n++;
            }
            break;
        default:
            break;
        }
    }
    if (n <= MAX_OPERATORS) return 0;
    return err_validation(p->cx->err,
                          "%sThe expression contains too many operators; operator count: %d",
                          p->label, n);
}

/* Reports what the parse found: a syntax error, else the first semantic error. */
static int finish(parser *p, int parsed)
{
    int rc = 0;
    if (p->oom) {
        rc = err_set(p->cx->err, QR_E_INTERNAL, "out of memory parsing %s", p->which);
    } else if (!parsed) {
        syntax_error(p);
        rc = -1;
    } else if (count_operators(p)) {
        rc = -1;
    } else {
        const char *msg = NULL;
        for (int i = 0; !msg && i < SEM_COUNT; i++) {
            /* Conditions: errors past the reserved-word check are chosen per predicate. */
            if (p->cond && i > SEM_RESERVED)
                msg = p->cond_err;
            else
                msg = p->sem[i];
        }
        if (msg) rc = err_validation(p->cx->err, "%s%s", p->label, msg);
    }
    free(p->t);
    p->t = NULL;
    return rc;
}

int parse_condition(expr_ctx *cx, const char *which, const char *text, arena *ar, cnode **out)
{
    parser p;
    if (start(&p, cx, which, text, ar)) return -1;
    p.cond = 1;
    cnode *c = parse_or(&p);
    if (c && !at(&p, TK_EOF)) c = fail(&p);
    if (c) check_cond(&p, c);
    if (finish(&p, c != NULL)) return -1;
    *out = c;
    return 0;
}

static int add_action(parser *p, upd_action **acts, int *n, int *cap, upd_action a)
{
    if (*n == *cap) {
        int ncap = *cap ? *cap * 2 : 4;
        upd_action *na = palloc(p, (size_t)ncap * sizeof *na);
        if (na == NULL) return -1;
        if (*n) memcpy(na, *acts, (size_t)*n * sizeof *na);
        *acts = na;
        *cap = ncap;
    }
    (*acts)[(*n)++] = a;
    return 0;
}

static operand *parse_set_value_inner(parser *p)
{
    operand *a = parse_operand(p);
    if (a == NULL) return NULL;
    if (at(p, TK_PLUS) || at(p, TK_MINUS)) {
        opnd_kind k = at(p, TK_PLUS) ? OP_PLUS : OP_MINUS;
        p->pos++;
        operand *b = parse_operand(p);
        if (b == NULL) return NULL;
        operand *o = palloc(p, sizeof *o);
        if (o == NULL) return NULL;
        o->kind = k;
        o->a = palloc(p, 2 * sizeof *o->a);
        if (o->a == NULL) return NULL;
        o->a[0] = a;
        o->a[1] = b;
        o->na = 2;
        o->fname = k == OP_PLUS ? "+" : "-";
        return o;
    }
    return a;
}

static operand *parse_set_value(parser *p)
{
    int save = p->pos;
    operand *v = parse_set_value_inner(p);
    if (v && (at(p, TK_COMMA) || at(p, TK_EOF) || is_keyword(p, p->pos))) return v;
    if (p->oom) return NULL;
    int after = p->pos;
    p->pos = save;
    if (accept(p, TK_LPAREN)) {
        operand *w = parse_set_value_inner(p);
        if (w && accept(p, TK_RPAREN)) return w;
    }
    if (v) {
        p->pos = after;
        return v;
    }
    return fail(p);
}

int parse_update(expr_ctx *cx, const char *text, arena *ar, upd_action **acts, int *nacts)
{
    parser p;
    if (start(&p, cx, "UpdateExpression", text, ar)) return -1;
    p.update = 1;
    static const char *const sections[] = {"SET", "REMOVE", "ADD", "DELETE"};
    int seen[4] = {0}, n = 0, cap = 0, ok = 1;
    upd_action *a = NULL;
    do {
        int s;
        for (s = 0; s < 4 && !word_is(&p, p.pos, sections[s]); s++) {
        }
        if (s == 4) {
            ok = 0;
            fail(&p);
            break;
        }
        if (seen[s]++)
            sem(&p, SEM_SECTION,
                "The \"%s\" section can only be used once in an update expression;", sections[s]);
        p.pos++;
        do {
            upd_action act = {.kind = (upd_kind)s};
            if (parse_path(&p, &act.path)) {
                ok = 0;
                break;
            }
            if (s == U_SET) {
                if (!accept(&p, TK_EQ) || (act.value = parse_set_value(&p)) == NULL) {
                    fail(&p);
                    ok = 0;
                    break;
                }
            } else if (s == U_ADD || s == U_DELETE) {
                if (!at(&p, TK_VALUE)) {
                    fail(&p);
                    ok = 0;
                    break;
                }
                act.value = parse_operand(&p);
                if (act.value == NULL) {
                    ok = 0;
                    break;
                }
            }
            if (add_action(&p, &a, &n, &cap, act)) {
                ok = 0;
                break;
            }
        } while (accept(&p, TK_COMMA));
    } while (ok && !at(&p, TK_EOF));
    if (ok) {
        for (int i = 0; i < n; i++) {
            resolve_path(&p, &a[i].path);
            if (a[i].kind == U_SET) {
                check_operand(&p, a[i].value, 1);
            } else if (a[i].value) {
                resolve_value(&p, a[i].value);
                json_t *v = a[i].value->value;
                qr_type t = value_type(v);
                int good = t == QR_T_SS || t == QR_T_NS || t == QR_T_BS ||
                           (a[i].kind == U_ADD && t == QR_T_N);
                static const char *const long_names[] = {"",        "STRING", "NUMBER", "BINARY",
                                                         "BOOLEAN", "NULL",   "MAP",    "LIST"};
                if (v && !good && t <= QR_T_L)
                    sem(&p, SEM_OPERAND,
                        "Incorrect operand type for operator or function; operator: %s, operand "
                        "type: %s, typeSet: ALLOWED_FOR_%s_OPERAND",
                        sections[a[i].kind], long_names[t], sections[a[i].kind]);
            }
            for (int j = 0; j < i; j++)
                check_overlap(&p, &a[j].path, &a[i].path);
        }
    }
    if (finish(&p, ok)) return -1;
    *acts = a;
    *nacts = n;
    return 0;
}

int parse_projection(expr_ctx *cx, const char *text, arena *ar, path **paths, int *npaths)
{
    parser p;
    if (start(&p, cx, "ProjectionExpression", text, ar)) return -1;
    int n = 0, cap = 0, ok = 1;
    path *ps = NULL;
    do {
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            path *np = palloc(&p, (size_t)cap * sizeof *np);
            if (np == NULL) {
                ok = 0;
                break;
            }
            if (n) memcpy(np, ps, (size_t)n * sizeof *np);
            ps = np;
        }
        if (parse_path(&p, &ps[n])) {
            ok = 0;
            break;
        }
        n++;
    } while (accept(&p, TK_COMMA));
    if (ok && !at(&p, TK_EOF)) {
        fail(&p);
        ok = 0;
    }
    if (ok) {
        for (int i = 0; i < n; i++) {
            resolve_path(&p, &ps[i]);
            for (int j = 0; j < i; j++)
                check_overlap(&p, &ps[j], &ps[i]);
        }
    }
    if (finish(&p, ok)) return -1;
    *paths = ps;
    *npaths = n;
    return 0;
}

/* ---- the context ---- */

void expr_ctx_init(expr_ctx *cx, json_t *names, json_t *values, qr_err *err)
{
    cx->names = names;
    cx->values = values;
    /* A name or value is only ever marked used when the request supplied it, so the
     * sets are needed only then (and most requests supply none). */
    cx->used_names = names ? json_object() : NULL;
    cx->used_values = values ? json_object() : NULL;
    cx->err = err;
    cx->bare = 0;
}

void expr_ctx_free(expr_ctx *cx)
{
    json_decref(cx->used_names);
    json_decref(cx->used_values);
    cx->used_names = cx->used_values = NULL;
}

static int check_unused(expr_ctx *cx, json_t *given, json_t *used, const char *param)
{
    if (!json_is_object(given)) return 0;
    char list[QR_ERR_MSG_MAX];
    size_t n = 0;
    const char *key;
    json_t *v;
    list[0] = '\0';
    json_object_foreach(given, key, v)
    {
        if (used && json_object_get(used, key)) continue;
        if (n < sizeof list)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", key);
    }
    if (n == 0) return 0;
    return err_validation(cx->err, "Value provided in %s unused in expressions: keys: {%s}", param,
                          list);
}

int expr_ctx_check_unused(expr_ctx *cx)
{
    if (check_unused(cx, cx->names, cx->used_names, "ExpressionAttributeNames")) return -1;
    return check_unused(cx, cx->values, cx->used_values, "ExpressionAttributeValues");
}
