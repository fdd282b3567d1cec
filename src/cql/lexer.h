/* lexer.h — CQL's tokens and keywords, private to src/cql.
 *
 * The lexer turns the whole text into tokens at once, whitespace and comments included
 * (as hidden tokens, so error snippets can count them as Cassandra's ANTLR stream does),
 * with Cassandra's line and 0-based column of each. It stops at the first character it
 * cannot read and says so as Cassandra's lexer would; the parser decides when that error
 * is reported. Keywords are plain words here: whether one is a keyword is the parser's. */
#ifndef QR_CQL_LEXER_H
#define QR_CQL_LEXER_H

#include <stddef.h>

#include "cql/ast.h"

typedef enum tok_kind {
    TK_EOF,
    TK_HIDDEN, /* whitespace or a comment */
    TK_WORD,   /* an identifier or keyword; kw says which keyword, if any */
    TK_QUOTED, /* "Name": text is the name */
    TK_EMPTY_QUOTED,
    TK_STRING, /* text is the contents */
    TK_INTEGER,
    TK_FLOAT,
    TK_BOOLEAN,
    TK_DURATION,
    TK_UUID,
    TK_HEX,
    TK_NEG_NAN, /* -NaN */
    TK_NEG_INF, /* -Infinity */
    TK_QMARK,
    TK_RANGE, /* .. */
    TK_PUNCT  /* text: ( ) , ; . : [ ] { } = < > <= >= != + - * / % += -= */
} tok_kind;

/* Keywords: an X-macro of (name, word, reserved). The token name Cassandra's messages use
 * is "K_" + name. "table" spells COLUMNFAMILY, "schema" KEYSPACE and "columnfamilies"
 * TABLES, as in Cassandra's lexer. */
#define CQL_KEYWORDS(X)                                                                            \
    X(ACCESS, "access", 0)                                                                         \
    X(ADD, "add", 1)                                                                               \
    X(AGGREGATE, "aggregate", 0)                                                                   \
    X(AGGREGATES, "aggregates", 0)                                                                 \
    X(ALL, "all", 0)                                                                               \
    X(ALLOW, "allow", 1)                                                                           \
    X(ALTER, "alter", 1)                                                                           \
    X(AND, "and", 1)                                                                               \
    X(APPLY, "apply", 1)                                                                           \
    X(AS, "as", 0)                                                                                 \
    X(ASC, "asc", 1)                                                                               \
    X(ASCII, "ascii", 0)                                                                           \
    X(AUTHORIZE, "authorize", 1)                                                                   \
    X(BATCH, "batch", 1)                                                                           \
    X(BEGIN, "begin", 1)                                                                           \
    X(BIGINT, "bigint", 0)                                                                         \
    X(BLOB, "blob", 0)                                                                             \
    X(BOOLEAN, "boolean", 0)                                                                       \
    X(BY, "by", 1)                                                                                 \
    X(CALLED, "called", 0)                                                                         \
    X(CAST, "cast", 0)                                                                             \
    X(CLUSTER, "cluster", 0)                                                                       \
    X(CLUSTERING, "clustering", 0)                                                                 \
    X(COLUMNFAMILY, "columnfamily", 1)                                                             \
    X(COMPACT, "compact", 0)                                                                       \
    X(CONTAINS, "contains", 0)                                                                     \
    X(COUNT, "count", 0)                                                                           \
    X(COUNTER, "counter", 0)                                                                       \
    X(CREATE, "create", 1)                                                                         \
    X(CUSTOM, "custom", 0)                                                                         \
    X(DATACENTERS, "datacenters", 0)                                                               \
    X(DATE, "date", 0)                                                                             \
    X(DECIMAL, "decimal", 0)                                                                       \
    X(DEFAULT, "default", 0)                                                                       \
    X(DELETE, "delete", 1)                                                                         \
    X(DESC, "desc", 1)                                                                             \
    X(DESCRIBE, "describe", 1)                                                                     \
    X(DISTINCT, "distinct", 0)                                                                     \
    X(DOUBLE, "double", 0)                                                                         \
    X(DROP, "drop", 1)                                                                             \
    X(DURATION, "duration", 0)                                                                     \
    X(ENTRIES, "entries", 1)                                                                       \
    X(EXECUTE, "execute", 1)                                                                       \
    X(EXISTS, "exists", 0)                                                                         \
    X(FILTERING, "filtering", 0)                                                                   \
    X(FINALFUNC, "finalfunc", 0)                                                                   \
    X(FLOAT, "float", 0)                                                                           \
    X(FROM, "from", 1)                                                                             \
    X(FROZEN, "frozen", 0)                                                                         \
    X(FULL, "full", 1)                                                                             \
    X(FUNCTION, "function", 0)                                                                     \
    X(FUNCTIONS, "functions", 0)                                                                   \
    X(GRANT, "grant", 1)                                                                           \
    X(GROUP, "group", 0)                                                                           \
    X(IF, "if", 1)                                                                                 \
    X(IN, "in", 1)                                                                                 \
    X(INDEX, "index", 1)                                                                           \
    X(INET, "inet", 0)                                                                             \
    X(POSITIVE_INFINITY, "infinity", 1)                                                            \
    X(INITCOND, "initcond", 0)                                                                     \
    X(INPUT, "input", 0)                                                                           \
    X(INSERT, "insert", 1)                                                                         \
    X(INT, "int", 0)                                                                               \
    X(INTERNALS, "internals", 0)                                                                   \
    X(INTO, "into", 1)                                                                             \
    X(IS, "is", 1)                                                                                 \
    X(JSON, "json", 0)                                                                             \
    X(KEY, "key", 0)                                                                               \
    X(KEYS, "keys", 0)                                                                             \
    X(KEYSPACE, "keyspace", 1)                                                                     \
    X(KEYSPACES, "keyspaces", 0)                                                                   \
    X(LANGUAGE, "language", 0)                                                                     \
    X(LIKE, "like", 0)                                                                             \
    X(LIMIT, "limit", 1)                                                                           \
    X(LIST, "list", 0)                                                                             \
    X(LOGIN, "login", 0)                                                                           \
    X(MAP, "map", 0)                                                                               \
    X(MATERIALIZED, "materialized", 1)                                                             \
    X(MBEAN, "mbean", 0)                                                                           \
    X(MBEANS, "mbeans", 0)                                                                         \
    X(MODIFY, "modify", 1)                                                                         \
    X(POSITIVE_NAN, "nan", 1)                                                                      \
    X(NOLOGIN, "nologin", 0)                                                                       \
    X(NORECURSIVE, "norecursive", 1)                                                               \
    X(NOSUPERUSER, "nosuperuser", 0)                                                               \
    X(NOT, "not", 1)                                                                               \
    X(NULL, "null", 1)                                                                             \
    X(OF, "of", 1)                                                                                 \
    X(ON, "on", 1)                                                                                 \
    X(ONLY, "only", 0)                                                                             \
    X(OPTIONS, "options", 0)                                                                       \
    X(OR, "or", 1)                                                                                 \
    X(ORDER, "order", 1)                                                                           \
    X(PARTITION, "partition", 0)                                                                   \
    X(PASSWORD, "password", 0)                                                                     \
    X(PER, "per", 0)                                                                               \
    X(PERMISSION, "permission", 0)                                                                 \
    X(PERMISSIONS, "permissions", 0)                                                               \
    X(PRIMARY, "primary", 1)                                                                       \
    X(RENAME, "rename", 1)                                                                         \
    X(REPLACE, "replace", 0)                                                                       \
    X(RETURNS, "returns", 0)                                                                       \
    X(REVOKE, "revoke", 1)                                                                         \
    X(ROLE, "role", 0)                                                                             \
    X(ROLES, "roles", 0)                                                                           \
    X(SELECT, "select", 1)                                                                         \
    X(SET, "set", 1)                                                                               \
    X(SFUNC, "sfunc", 0)                                                                           \
    X(SMALLINT, "smallint", 0)                                                                     \
    X(STATIC, "static", 0)                                                                         \
    X(STORAGE, "storage", 0)                                                                       \
    X(STYPE, "stype", 0)                                                                           \
    X(SUPERUSER, "superuser", 0)                                                                   \
    X(TABLES, "tables", 0)                                                                         \
    X(TEXT, "text", 0)                                                                             \
    X(TIME, "time", 0)                                                                             \
    X(TIMESTAMP, "timestamp", 0)                                                                   \
    X(TIMEUUID, "timeuuid", 0)                                                                     \
    X(TINYINT, "tinyint", 0)                                                                       \
    X(TO, "to", 1)                                                                                 \
    X(TOKEN, "token", 1)                                                                           \
    X(TRIGGER, "trigger", 0)                                                                       \
    X(TRUNCATE, "truncate", 1)                                                                     \
    X(TTL, "ttl", 0)                                                                               \
    X(TUPLE, "tuple", 0)                                                                           \
    X(TYPE, "type", 0)                                                                             \
    X(TYPES, "types", 0)                                                                           \
    X(UNLOGGED, "unlogged", 1)                                                                     \
    X(UNSET, "unset", 0)                                                                           \
    X(UPDATE, "update", 1)                                                                         \
    X(USE, "use", 1)                                                                               \
    X(USER, "user", 0)                                                                             \
    X(USERS, "users", 0)                                                                           \
    X(USING, "using", 1)                                                                           \
    X(UUID, "uuid", 0)                                                                             \
    X(VALUES, "values", 0)                                                                         \
    X(VARCHAR, "varchar", 0)                                                                       \
    X(VARINT, "varint", 0)                                                                         \
    X(VIEW, "view", 1)                                                                             \
    X(WHERE, "where", 1)                                                                           \
    X(WITH, "with", 1)                                                                             \
    X(WRITETIME, "writetime", 0)

#define X(name, word, reserved) KW_##name,
typedef enum kw_id { KW_NONE, CQL_KEYWORDS(X) KW_COUNT_ } kw_id;
#undef X

typedef struct token {
    tok_kind kind;
    kw_id kw;          /* for TK_WORD: the keyword it spells, else KW_NONE */
    size_t off, len;   /* its bytes in the text */
    const char *text;  /* what Cassandra's token text is (string and name contents unescaped,
                          else the bytes as written); NUL-terminated, in the arena, but
                          for TK_HIDDEN the bytes in the text itself, not terminated */
    size_t text_len;   /* bytes of text */
    size_t text_units; /* its length in UTF-16 units, as Java measures it */
    int line, col;     /* 1-based line, 0-based column in UTF-16 units; EOF: 0 and -1 */
} token;

typedef struct lexed {
    token *toks; /* malloc'd; the last is TK_EOF */
    size_t n;
    int failed;      /* 1 when the lexer stopped at a character it cannot read */
    size_t fail_tok; /* then: the index of the token it was reading (the EOF after it) */
    char fail_msg[CQL_ERR_MSG_MAX];
} lexed;

/* Reads text; returns 0, or -1 only when out of memory. A character it cannot read sets
 * failed and ends the tokens there. */
int cql_lex(const char *text, size_t len, arena *ar, lexed *out);
void cql_lexed_free(lexed *l);

/* The keyword a word spells (any case), KW_NONE if none. */
kw_id cql_keyword(const char *word, size_t len);
int cql_keyword_reserved(kw_id k);
/* "K_SELECT", "K_COLUMNFAMILY", ... as Cassandra's messages name the token. */
const char *cql_keyword_token_name(kw_id k);
/* The word in lower case. */
const char *cql_keyword_word(kw_id k);

#endif
