/* lexer.c — splits expression text into tokens for the parser.
 *
 * Tokens are byte ranges of the text, so messages can quote the source exactly. Words
 * (identifiers, #names, :values) follow DynamoDB's character rules; any other byte
 * becomes a TK_BAD token that the parser reports as a syntax error. It does not know
 * keywords: the parser decides what a word means where it stands. */
#include "expr/ast.h"

#include <stdlib.h>

/* A bare word (attribute or function name) starts with a letter, as DynamoDB's lexer
 * wants: "_a" or "1a" is a syntax error. After the first character, and anywhere in a
 * #name or :value, letters, digits and '_' may follow. */
static int is_word_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_word(unsigned char c)
{
    return is_word_start(c) || (c >= '0' && c <= '9') || c == '_';
}

static size_t utf8_len(unsigned char c)
{
    if (c >= 0xf0) return 4;
    if (c >= 0xe0) return 3;
    if (c >= 0xc0) return 2;
    return 1;
}

int lex(const char *text, token **out, int *ntok)
{
    size_t cap = 16, n = 0, i = 0;
    token *t = malloc(cap * sizeof *t);
    if (t == NULL) return -1;
    for (;;) {
        const unsigned char *s = (const unsigned char *)text;
        while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
            i++;
        if (n + 1 >= cap) {
            cap *= 2;
            token *nt = realloc(t, cap * sizeof *t);
            if (nt == NULL) {
                free(t);
                return -1;
            }
            t = nt;
        }
        token *k = &t[n++];
        k->start = i;
        unsigned char c = s[i];
        if (c == '\0') {
            k->kind = TK_EOF;
            k->len = 0;
            break;
        }
        size_t j = i + 1;
        if (is_word_start(c)) {
            while (is_word(s[j]))
                j++;
            k->kind = TK_IDENT;
        } else if (c >= '0' && c <= '9') {
            while (s[j] >= '0' && s[j] <= '9')
                j++;
            k->kind = TK_NUM;
        } else if ((c == '#' || c == ':') && is_word(s[j])) {
            while (is_word(s[j]))
                j++;
            k->kind = c == '#' ? TK_NAME : TK_VALUE;
        } else {
            switch (c) {
            case '=':
                k->kind = TK_EQ;
                break;
            case '<':
                if (s[j] == '>')
                    k->kind = TK_NE, j++;
                else if (s[j] == '=')
                    k->kind = TK_LE, j++;
                else
                    k->kind = TK_LT;
                break;
            case '>':
                if (s[j] == '=')
                    k->kind = TK_GE, j++;
                else
                    k->kind = TK_GT;
                break;
            case '(':
                k->kind = TK_LPAREN;
                break;
            case ')':
                k->kind = TK_RPAREN;
                break;
            case '[':
                k->kind = TK_LBRACKET;
                break;
            case ']':
                k->kind = TK_RBRACKET;
                break;
            case ',':
                k->kind = TK_COMMA;
                break;
            case '.':
                k->kind = TK_DOT;
                break;
            case '+':
                k->kind = TK_PLUS;
                break;
            case '-':
                k->kind = TK_MINUS;
                break;
            default: {
                k->kind = TK_BAD;
                size_t l = utf8_len(c);
                for (j = i + 1; j < i + l && s[j] != '\0'; j++) {
                }
            }
            }
        }
        k->len = j - i;
        i = j;
    }
    *out = t;
    *ntok = (int)n;
    return 0;
}
