/* ast.h — private to src/expr: the parsed forms of expressions and what the lexer,
 * parser, checker, evaluators and legacy translators share.
 *
 * Every parsed expression owns one arena; its nodes, strings and references to the
 * request's AttributeValues die with it in one free. Nothing here is used outside
 * src/expr; the public interface is expr.h. */
#ifndef QR_EXPR_AST_H
#define QR_EXPR_AST_H

#include <jansson.h>
#include <stddef.h>

#include "expr/expr.h"
#include "util/arena.h"
#include "util/err.h"

/* ---- lexer ---- */
typedef enum tok_kind {
    TK_EOF,
    TK_IDENT,
    TK_NAME,
    TK_VALUE,
    TK_NUM,
    TK_EQ,
    TK_NE,
    TK_LT,
    TK_LE,
    TK_GT,
    TK_GE,
    TK_LPAREN,
    TK_RPAREN,
    TK_LBRACKET,
    TK_RBRACKET,
    TK_COMMA,
    TK_DOT,
    TK_PLUS,
    TK_MINUS,
    TK_BAD
} tok_kind;

typedef struct token {
    tok_kind kind;
    size_t start, len; /* bytes of the expression text */
} token;

/* Splits text into tokens ending with one TK_EOF; *out is malloc'd. -1 on no memory. */
int lex(const char *text, token **out, int *ntok);

/* ---- document paths ---- */
typedef struct path_elem {
    const char *name; /* attribute name after #name substitution; NULL for an index */
    long index;       /* list index when name is NULL */
    int tok;          /* token index in the source (-1 for translated legacy paths) */
    const char *raw;  /* the text as written: an identifier or a #name */
} path_elem;

typedef struct path {
    int n;
    path_elem *e;
} path;

/* ---- operands ---- */
typedef enum opnd_kind {
    OP_PATH,          /* path */
    OP_VALUE,         /* :value (value) */
    OP_CALL,          /* a function call before checking: fname(args) */
    OP_SIZE,          /* size(a[0]) */
    OP_IF_NOT_EXISTS, /* if_not_exists(a[0] path, a[1]) */
    OP_LIST_APPEND,   /* list_append(a[0], a[1]) */
    OP_PLUS,          /* a[0] + a[1] */
    OP_MINUS          /* a[0] - a[1] */
} opnd_kind;

typedef struct operand {
    opnd_kind kind;
    int paren;          /* written inside parentheses */
    int redundant;      /* written inside two pairs of parentheses */
    path path;          /* OP_PATH */
    const char *vname;  /* OP_VALUE: the :name as written */
    json_t *value;      /* OP_VALUE: the AttributeValue (arena reference) once resolved */
    const char *fname;  /* OP_CALL: function name */
    struct operand **a; /* arguments */
    int na;
} operand;

/* ---- conditions ---- */
typedef enum cond_kind {
    C_OR,
    C_AND,
    C_NOT,
    C_CMP,
    C_BETWEEN,
    C_IN,
    C_CALL, /* a function used as a condition, before checking: a[0] is an OP_CALL */
    C_EXISTS,
    C_NOT_EXISTS,
    C_TYPE,
    C_BEGINS,
    C_CONTAINS,
    C_TRUE /* always true: an empty legacy condition */
} cond_kind;

typedef enum cmp_op { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } cmp_op;

typedef struct cnode {
    cond_kind kind;
    cmp_op op;           /* C_CMP */
    int redundant;       /* written inside two pairs of parentheses */
    int paren;           /* written inside parentheses */
    struct cnode *l, *r; /* C_OR, C_AND (both), C_NOT (l) */
    operand **a;         /* operands of the other kinds */
    int na;
} cnode;

struct expr_cond {
    arena ar;
    cnode *root;
};

/* ---- updates ---- */
typedef enum upd_kind { U_SET, U_REMOVE, U_ADD, U_DELETE } upd_kind;

typedef struct upd_action {
    upd_kind kind;
    path path;
    operand *value; /* SET: the value; ADD/DELETE: an OP_VALUE; REMOVE: NULL */
} upd_action;

struct expr_update {
    arena ar;
    upd_action *acts;
    int nacts;
    int legacy; /* from AttributeUpdates: type errors use the legacy message */
};

struct expr_proj {
    arena ar;
    path *paths;
    int npaths;
};

/* ---- parsing (parser.c) ---- */
/* Parses and checks a condition into ar; which names the parameter in messages
 * ("ConditionExpression", "FilterExpression", "KeyConditionExpression"). */
int parse_condition(expr_ctx *cx, const char *which, const char *text, arena *ar, cnode **out);
int parse_update(expr_ctx *cx, const char *text, arena *ar, upd_action **acts, int *nacts);
int parse_projection(expr_ctx *cx, const char *text, arena *ar, path **paths, int *npaths);

/* "[a, b, [2]]" as DynamoDB prints a path in messages. */
void path_describe(const path *p, char *out, size_t cap);
/* "AttributeValue: {N:5}"-style text for a scalar value in messages. */
void value_describe(const json_t *av, char *out, size_t cap);

/* ---- reserved words (reserved.c) ---- */
int is_reserved_word(const char *s, size_t n);

/* ---- evaluation (eval.c) ---- */
/* The AttributeValue at p in item (an item object), or NULL if any part is missing. */
const json_t *path_get(const json_t *item, const path *p);
/* Evaluates an operand of a condition: a new reference, or NULL if it has no value
 * (a missing path, or size() of a value that has no size). */
json_t *cond_operand_eval(const operand *o, const json_t *item);
int cnode_eval(const cnode *c, const json_t *item, qr_err *err);
/* Appends p's top-level attribute name to names (a JSON array of strings) unless it is
 * there already: the top names of an expression, distinct, in first-use order. */
void path_add_top_name(json_t *names, const path *p);

/* ---- key conditions (keycond.c) ---- */
typedef struct key_part {
    const char *name; /* key attribute */
    expr_key_op op;
    json_t *v1, *v2; /* operands (borrowed) */
} key_part;

/* The most conditions keycond_finish looks at one by one; past these only the count n
 * matters (a key has at most 2 * EXPR_KEY_MAX_ATTRS attributes). */
#define KEY_PARTS_MAX (2 * EXPR_KEY_MAX_ATTRS)

/* Checks conditions on key attributes against the key schema and fills out (taking new
 * references). parts holds the first min(n, KEY_PARTS_MAX) of the n conditions. Shared
 * by KeyConditionExpression (expression: what its messages start with, "Invalid
 * KeyConditionExpression: " or "") and the legacy KeyConditions (expression NULL),
 * single- or multi-attribute; the two differ only in which of several errors is reported
 * first. */
int keycond_finish(const key_part *parts, int n, const expr_key_schema *schema,
                   const char *expression, expr_keycond_multi *out, qr_err *err);
/* The key schema of a single-attribute key (sk_name NULL if none). */
void keycond_schema1(expr_key_schema *s, const char *pk_name, char pk_type, const char *sk_name,
                     char sk_type);
/* Moves the references of m (for a single-attribute schema) into out; m is left empty. */
void keycond_to_single(expr_keycond_multi *m, expr_keycond *out);

/* ---- construction helpers (for legacy.c and keycond.c) ---- */
cnode *cnode_new(arena *ar, cond_kind kind);
operand *operand_path1(arena *ar, const char *name);
operand *operand_value(arena *ar, json_t *av);

#endif
