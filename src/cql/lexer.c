/* lexer.c — CQL text to tokens, after Cassandra 4's Lexer.g: case-insensitive keywords,
 * 'strings' and $$strings$$, "Quoted" names, integers and floats with an optional leading
 * minus, durations (1h30m, P1DT2H, P0001-02-03T04:05:06), uuids, 0x blobs, -NaN and
 * -Infinity, comments (--, //, / * * /) and the punctuation of the grammar. Where two
 * token forms could both start at a place, the longer wins, the first listed on a tie, as
 * ANTLR chooses. It does not decide which words are keywords in context (the parser). */
#include "cql/lexer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct kwent {
    const char *word;
    kw_id id;
} kwent;

#define X(name, word, reserved) {word, KW_##name},
static kwent words[] = {CQL_KEYWORDS(X){"table", KW_COLUMNFAMILY},
                        {"schema", KW_KEYSPACE},
                        {"columnfamilies", KW_TABLES}};
#undef X
#define NWORDS (sizeof words / sizeof words[0])

#define X(name, word, reserved) reserved,
static const char kw_reserved[] = {0, CQL_KEYWORDS(X)};
#undef X
#define X(name, word, reserved) "K_" #name,
static const char *const kw_names[] = {"", CQL_KEYWORDS(X)};
#undef X
#define X(name, word, reserved) word,
static const char *const kw_words[] = {"", CQL_KEYWORDS(X)};
#undef X

static pthread_once_t words_once = PTHREAD_ONCE_INIT;

static int cmp_kwent(const void *a, const void *b)
{
    return strcmp(((const kwent *)a)->word, ((const kwent *)b)->word);
}

static void sort_words(void)
{
    qsort(words, NWORDS, sizeof words[0], cmp_kwent);
}

kw_id cql_keyword(const char *word, size_t len)
{
    char low[32];
    if (len == 0 || len >= sizeof low) return KW_NONE;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)word[i];
        low[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    low[len] = '\0';
    pthread_once(&words_once, sort_words);
    kwent key = {low, KW_NONE};
    const kwent *e = bsearch(&key, words, NWORDS, sizeof words[0], cmp_kwent);
    return e ? e->id : KW_NONE;
}

int cql_keyword_reserved(kw_id k)
{
    return k > KW_NONE && k < KW_COUNT_ && kw_reserved[k];
}

const char *cql_keyword_token_name(kw_id k)
{
    return k > KW_NONE && k < KW_COUNT_ ? kw_names[k] : "";
}

const char *cql_keyword_word(kw_id k)
{
    return k > KW_NONE && k < KW_COUNT_ ? kw_words[k] : "";
}

int cql_is_reserved(const char *word, size_t len)
{
    return cql_keyword_reserved(cql_keyword(word, len));
}

/* ---- character classes ---- */

static int is_letter(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}
static int is_hex(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

typedef struct lexer {
    const char *s;
    size_t n;
    arena *ar;
    lexed *out;
    size_t cap;
    int line;
    int col; /* where the next token starts: line and column in UTF-16 units */
} lexer;

/* UTF-16 units of the UTF-8 bytes s[0..n): 2 for a 4-byte sequence, else 1 per character. */
static size_t utf16_units(const char *s, size_t n)
{
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) == 0x80) continue;
        u += c >= 0xF0 ? 2 : 1;
    }
    return u;
}

/* Moves line and column over s[from..to). */
static void advance_pos(lexer *lx, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)lx->s[i];
        if (c == '\n') {
            lx->line++;
            lx->col = 0;
        } else if ((c & 0xC0) != 0x80) {
            lx->col += c >= 0xF0 ? 2 : 1;
        }
    }
}

static int push(lexer *lx, tok_kind kind, size_t off, size_t len, const char *text, size_t text_len)
{
    lexed *o = lx->out;
    if (o->n == lx->cap) {
        size_t cap = lx->cap ? lx->cap * 2 : 64;
        token *t = realloc(o->toks, cap * sizeof *t);
        if (t == NULL) return -1;
        o->toks = t;
        lx->cap = cap;
    }
    /* Whitespace and comments are never read as text: theirs is where it lies. */
    const char *copy = kind == TK_HIDDEN ? text : arena_strndup(lx->ar, text, text_len);
    if (copy == NULL) return -1;
    token *t = &o->toks[o->n++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->off = off;
    t->len = len;
    t->text = copy;
    t->text_len = text_len;
    t->text_units = utf16_units(copy, text_len);
    t->line = lx->line;
    t->col = lx->col;
    if (kind == TK_WORD) t->kw = cql_keyword(text, text_len);
    advance_pos(lx, off, off + len);
    return 0;
}

/* Cassandra's lexer error, at the position of byte at (which has not been read). */
static void lex_fail(lexer *lx, size_t at, const char *fmt, const char *what)
{
    lexed *o = lx->out;
    int line = lx->line, col = lx->col;
    /* the position of `at`: the lexer's line/col are at the start of the failed token */
    for (size_t i = o->n ? o->toks[o->n - 1].off + o->toks[o->n - 1].len : 0; i < at; i++) {
        unsigned char c = (unsigned char)lx->s[i];
        if (c == '\n') {
            line++;
            col = 0;
        } else if ((c & 0xC0) != 0x80) {
            col += c >= 0xF0 ? 2 : 1;
        }
    }
    char msg[64];
    snprintf(msg, sizeof msg, fmt, what);
    snprintf(o->fail_msg, sizeof o->fail_msg, "line %d:%d %s", line, col, msg);
    o->failed = 1;
}

/* How Cassandra shows a character in a lexer message: '<EOF>', '\n', or the character. */
static void char_display(const char *s, size_t n, size_t at, char *out, size_t size)
{
    if (at >= n) {
        snprintf(out, size, "'<EOF>'");
        return;
    }
    unsigned char c = (unsigned char)s[at];
    if (c == '\n')
        snprintf(out, size, "'\\n'");
    else if (c == '\r')
        snprintf(out, size, "'\\r'");
    else if (c == '\t')
        snprintf(out, size, "'\\t'");
    else if (c < 0x20 || c == 0x7f)
        snprintf(out, size, "'\\u%04x'", c); /* a control character, shown as Java escapes it */
    else {
        size_t l = 1;
        if (c >= 0xC0) {
            while (at + l < n && l < 4 && ((unsigned char)s[at + l] & 0xC0) == 0x80)
                l++;
        }
        snprintf(out, size, "'%.*s'", (int)l, s + at);
    }
}

/* ---- token forms: each returns the length it matches at i, 0 if none ---- */

static size_t match_uuid(const char *s, size_t n, size_t i)
{
    static const int groups[] = {8, 4, 4, 4, 12};
    size_t j = i;
    for (int g = 0; g < 5; g++) {
        for (int k = 0; k < groups[g]; k++, j++)
            if (j >= n || !is_hex((unsigned char)s[j])) return 0;
        if (g < 4) {
            if (j >= n || s[j] != '-') return 0;
            j++;
        }
    }
    return j - i;
}

static size_t digits(const char *s, size_t n, size_t j)
{
    size_t k = j;
    while (k < n && is_digit((unsigned char)s[k]))
        k++;
    return k - j;
}

/* A unit of the shorthand duration form, longest first: mo ms us µs ns y w d h m s. */
static size_t duration_unit(const char *s, size_t n, size_t j)
{
    if (j >= n) return 0;
    int c = s[j] | 0x20;
    int d = j + 1 < n ? (s[j + 1] | 0x20) : 0;
    if (c == 'm' && (d == 'o' || d == 's')) return 2;
    if ((c == 'u' || c == 'n') && d == 's') return 2;
    if ((unsigned char)s[j] == 0xC2 && j + 2 < n && (unsigned char)s[j + 1] == 0xB5 &&
        (s[j + 2] | 0x20) == 's')
        return 3;
    if (c == 'y' || c == 'w' || c == 'd' || c == 'h' || c == 'm' || c == 's') return 1;
    return 0;
}

/* '-'? DIGIT+ UNIT (DIGIT+ UNIT)* */
static size_t match_short_duration(const char *s, size_t n, size_t i)
{
    size_t j = i;
    if (j < n && s[j] == '-') j++;
    size_t d = digits(s, n, j);
    if (d == 0) return 0;
    size_t u = duration_unit(s, n, j + d);
    if (u == 0) return 0;
    j += d + u;
    for (;;) {
        d = digits(s, n, j);
        if (d == 0) break;
        u = duration_unit(s, n, j + d);
        if (u == 0) break;
        j += d + u;
    }
    return j - i;
}

/* DIGIT+ followed by one of the letters in order, each optional:
 * the designators of an ISO 8601 period ("Y", "M", "D") or time ("H", "M", "S"). */
static size_t iso_designators(const char *s, size_t n, size_t j, const char *letters)
{
    size_t start = j;
    int any = 0;
    for (const char *l = letters; *l; l++) {
        size_t d = digits(s, n, j);
        if (d == 0 || j + d >= n || s[j + d] != *l) continue;
        j += d + 1;
        any = 1;
    }
    return any ? j - start : 0;
}

/* The ISO 8601 forms: P[n Y][n M][n D][T[n H][n M][n S]], PnW, and
 * P0001-02-03T04:05:06, each with an optional leading minus. */
static size_t match_iso_duration(const char *s, size_t n, size_t i)
{
    size_t j = i;
    if (j < n && s[j] == '-') j++;
    if (j >= n || s[j] != 'P') return 0;
    j++;
    /* alternative format */
    static const char alt[] = "dddd-dd-ddTdd:dd:dd";
    size_t k = 0;
    while (alt[k] && j + k < n &&
           (alt[k] == 'd' ? is_digit((unsigned char)s[j + k]) : s[j + k] == alt[k]))
        k++;
    if (alt[k] == '\0') return j + k - i;
    size_t w = digits(s, n, j);
    if (w && j + w < n && s[j + w] == 'W') return j + w + 1 - i;
    size_t p = iso_designators(s, n, j, "YMD");
    j += p;
    size_t t = 0;
    if (j < n && s[j] == 'T') {
        t = iso_designators(s, n, j + 1, "HMS");
        if (t) t++;
    }
    if (p == 0 && t == 0) return 0;
    return j + t - i;
}

/* INTEGER: '-'? DIGIT+; FLOAT: INTEGER ('.' DIGIT*)? EXPONENT?, but "1..": INTEGER then RANGE. */
static size_t match_number(const char *s, size_t n, size_t i, int *is_float)
{
    size_t j = i;
    *is_float = 0;
    if (j < n && s[j] == '-') j++;
    size_t d = digits(s, n, j);
    if (d == 0) return 0;
    j += d;
    if (j < n && s[j] == '.' && !(j + 1 < n && s[j + 1] == '.')) {
        j++;
        j += digits(s, n, j);
        *is_float = 1;
    }
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = j + 1;
        if (k < n && (s[k] == '+' || s[k] == '-')) k++;
        size_t e = digits(s, n, k);
        if (e) {
            j = k + e;
            *is_float = 1;
        }
    }
    return j - i;
}

static size_t match_word(const char *s, size_t n, size_t i)
{
    size_t j = i;
    if (j >= n || !is_letter((unsigned char)s[j])) return 0;
    while (j < n &&
           (is_letter((unsigned char)s[j]) || is_digit((unsigned char)s[j]) || s[j] == '_'))
        j++;
    return j - i;
}

static int word_is(const char *s, size_t len, const char *w)
{
    return strlen(w) == len && strncasecmp(s, w, len) == 0;
}

/* A quoted run: '...' or "..." with the quote doubled inside. Returns the bytes it spans
 * (quotes included) and writes the contents to out, or 0 when the text ends first. */
static size_t match_quoted(const char *s, size_t n, size_t i, char q, char *out, size_t *olen)
{
    size_t j = i + 1, o = 0;
    for (;;) {
        if (j >= n) return 0;
        if (s[j] == q) {
            if (j + 1 < n && s[j + 1] == q) {
                out[o++] = q;
                j += 2;
                continue;
            }
            break;
        }
        out[o++] = s[j++];
    }
    *olen = o;
    return j + 1 - i;
}

int cql_lex(const char *s, size_t n, arena *ar, lexed *out)
{
    memset(out, 0, sizeof *out);
    lexer lx = {s, n, ar, out, 0, 1, 0};
    char *scratch = malloc(n + 1);
    if (scratch == NULL) return -1;
    size_t i = 0;
    int rc = 0;
    while (i < n && rc == 0) {
        unsigned char c = (unsigned char)s[i];
        char nx = i + 1 < n ? s[i + 1] : '\0';
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            size_t j = i;
            while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
                j++;
            rc = push(&lx, TK_HIDDEN, i, j - i, s + i, j - i);
            i = j;
            continue;
        }
        if ((c == '-' && nx == '-') || (c == '/' && nx == '/')) {
            size_t j = i;
            while (j < n && s[j] != '\n' && s[j] != '\r')
                j++;
            if (j < n) j++;
            rc = push(&lx, TK_HIDDEN, i, j - i, s + i, j - i);
            i = j;
            continue;
        }
        if (c == '/' && nx == '*') {
            size_t j = i + 2;
            while (j + 1 < n && !(s[j] == '*' && s[j + 1] == '/'))
                j++;
            if (j + 1 >= n) {
                lex_fail(&lx, n, "mismatched character '<EOF>' expecting %s", "'*'");
                break;
            }
            rc = push(&lx, TK_HIDDEN, i, j + 2 - i, s + i, j + 2 - i);
            i = j + 2;
            continue;
        }
        if (c == '\'' || c == '"') {
            size_t olen = 0;
            size_t m = match_quoted(s, n, i, (char)c, scratch, &olen);
            if (m == 0) {
                lex_fail(&lx, n, "mismatched character '<EOF>' expecting %s",
                         c == '\'' ? "'''" : "'\"'");
                break;
            }
            const char *nul = memchr(s + i, '\0', m);
            if (nul) { /* the tree's strings end at a NUL: one inside cannot be kept */
                lex_fail(&lx, (size_t)(nul - s), "no viable alternative at character %s",
                         "'\\u0000'");
                break;
            }
            tok_kind k = c == '\'' ? TK_STRING : (m == 2 ? TK_EMPTY_QUOTED : TK_QUOTED);
            rc = push(&lx, k, i, m, scratch, olen);
            i += m;
            continue;
        }
        if (c == '$' && nx == '$') {
            size_t j = i + 2;
            while (j + 1 < n && !(s[j] == '$' && s[j + 1] == '$'))
                j++;
            if (j + 1 >= n) {
                lex_fail(&lx, n, "mismatched character '<EOF>' expecting %s", "'$'");
                break;
            }
            const char *nul = memchr(s + i, '\0', j - i);
            if (nul) {
                lex_fail(&lx, (size_t)(nul - s), "no viable alternative at character %s",
                         "'\\u0000'");
                break;
            }
            rc = push(&lx, TK_STRING, i, j + 2 - i, s + i + 2, j - i - 2);
            i = j + 2;
            continue;
        }
        /* the forms that start with a letter, a digit or a minus, longest first */
        size_t best = 0;
        tok_kind kind = TK_EOF;
        size_t m;
        if (is_hex(c) && (m = match_uuid(s, n, i)) > best) {
            best = m;
            kind = TK_UUID;
        }
        if (c == '0' && (nx == 'x' || nx == 'X')) {
            size_t j = i + 2;
            while (j < n && is_hex((unsigned char)s[j]))
                j++;
            if (j - i > best) {
                best = j - i;
                kind = TK_HEX;
            }
        }
        int is_float = 0;
        if ((is_digit(c) || c == '-') && (m = match_number(s, n, i, &is_float)) > best) {
            best = m;
            kind = is_float ? TK_FLOAT : TK_INTEGER;
        }
        if ((is_digit(c) || c == '-') && (m = match_short_duration(s, n, i)) > best) {
            best = m;
            kind = TK_DURATION;
        }
        if ((c == 'P' || c == '-') && (m = match_iso_duration(s, n, i)) > best) {
            best = m;
            kind = TK_DURATION;
        }
        if (is_letter(c) && (m = match_word(s, n, i)) > best) {
            best = m;
            kind = TK_WORD;
            if (word_is(s + i, m, "true") || word_is(s + i, m, "false")) kind = TK_BOOLEAN;
        }
        if (c == '-' && best == 0) {
            size_t w = match_word(s, n, i + 1);
            if (w >= 3 && strncasecmp(s + i + 1, "nan", 3) == 0) {
                best = 4;
                kind = TK_NEG_NAN;
            } else if (w >= 8 && strncasecmp(s + i + 1, "infinity", 8) == 0) {
                best = 9;
                kind = TK_NEG_INF;
            }
        }
        if (best) {
            rc = push(&lx, kind, i, best, s + i, best);
            i += best;
            continue;
        }
        static const char *const two[] = {"<=", ">=", "!=", "+=", "-=", "..", NULL};
        int matched = 0;
        for (int k = 0; two[k]; k++)
            if (c == (unsigned char)two[k][0] && nx == two[k][1]) {
                rc = push(&lx, k == 5 ? TK_RANGE : TK_PUNCT, i, 2, s + i, 2);
                i += 2;
                matched = 1;
                break;
            }
        if (matched) continue;
        if (c == '?') {
            rc = push(&lx, TK_QMARK, i, 1, s + i, 1);
            i++;
            continue;
        }
        if (c != 0 && strchr("(),;.:[]{}=<>+-*/%", c)) {
            rc = push(&lx, TK_PUNCT, i, 1, s + i, 1);
            i++;
            continue;
        }
        char shown[16];
        char_display(s, n, i, shown, sizeof shown);
        lex_fail(&lx, i, "no viable alternative at character %s", shown);
        break;
    }
    free(scratch);
    if (rc) return -1;
    out->fail_tok = out->n;
    if (push(&lx, TK_EOF, n, 0, "", 0)) return -1;
    token *eof = &out->toks[out->n - 1];
    eof->line = 0;
    eof->col = -1;
    return 0;
}

void cql_lexed_free(lexed *l)
{
    free(l->toks);
    memset(l, 0, sizeof *l);
}
