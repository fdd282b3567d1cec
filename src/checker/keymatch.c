/* keymatch.c — keymatch.h: a backtracking match of key text against a template's
 * literal and variable segments (templates are short, and variables never touch), and the
 * same templates filled the other way to build a source's key. */
#include "checker/keymatch.h"

#include <stdlib.h>
#include <string.h>

const char *keymatch_scalar(const json_t *av)
{
    const char *s = json_string_value(json_object_get(av, "S"));
    return s ? s : json_string_value(json_object_get(av, "N"));
}

/* Does the stored attribute name of item (if any) hold value? */
static int agrees(const json_t *item, const char *name, const char *value, size_t len)
{
    const char *stored = item ? keymatch_scalar(json_object_get(item, name)) : NULL;
    return stored == NULL || (strlen(stored) == len && memcmp(stored, value, len) == 0);
}

static int match_from(const m_template *t, size_t i, const char *text, size_t pos, size_t len,
                      const json_t *item, json_t *vars)
{
    if (i == t->nseg) return pos == len;
    const m_seg *sg = &t->seg[i];
    if (!sg->is_var) {
        size_t n = strlen(sg->text);
        return pos + n <= len && memcmp(text + pos, sg->text, n) == 0 &&
               match_from(t, i + 1, text, pos + n, len, item, vars);
    }
    /* a variable holds at least one character; the last one holds the rest */
    for (size_t end = i + 1 == t->nseg ? len : pos + 1; end <= len; end++) {
        if (!agrees(item, sg->text, text + pos, end - pos)) continue;
        if (match_from(t, i + 1, text, end, len, item, vars)) {
            json_object_set_new(vars, sg->text, json_stringn(text + pos, end - pos));
            return 1;
        }
    }
    return 0;
}

int keymatch_template(const m_template *t, const char *text, const json_t *item, json_t *vars)
{
    size_t len = strlen(text);
    if (len == 0) return 0;
    return match_from(t, 0, text, 0, len, item, vars);
}

static size_t literal_length(const m_template *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nseg; i++)
        if (!t->seg[i].is_var) n += strlen(t->seg[i].text);
    return n;
}

const m_entity *keymatch_entity(const qr_model *m, const m_table *tb, const json_t *item,
                                json_t **vars)
{
    const char *pk = keymatch_scalar(json_object_get(item, tb->pk.name));
    const char *sk = tb->sk.name ? keymatch_scalar(json_object_get(item, tb->sk.name)) : NULL;
    if (vars) *vars = NULL;
    if (pk == NULL || (tb->sk.name && sk == NULL)) return NULL;
    const m_entity *best = NULL;
    size_t best_len = 0;
    json_t *best_vars = NULL;
    for (size_t i = 0; i < m->nentities; i++) {
        const m_entity *e = &m->entities[i];
        if (e->table != tb) continue;
        json_t *v = json_object();
        int ok = keymatch_template(&e->pk, pk, item, v) &&
                 (tb->sk.name == NULL || (e->sk.text && keymatch_template(&e->sk, sk, item, v)));
        size_t lit = literal_length(&e->pk) + literal_length(&e->sk);
        if (ok && (best == NULL || lit > best_len)) {
            best = e;
            best_len = lit;
            json_decref(best_vars);
            best_vars = v;
        } else {
            json_decref(v);
        }
    }
    if (vars)
        *vars = best_vars;
    else
        json_decref(best_vars);
    return best;
}

/* Fills template t with the values of the copy's attributes; NULL with *missing. */
static char *fill(const m_template *t, const m_entity *e, const m_attr *a, const json_t *item,
                  const json_t *vars, const char **missing)
{
    size_t cap = 256, n = 0;
    char *out = malloc(cap);
    if (out == NULL) return NULL;
    out[0] = '\0';
    for (size_t i = 0; i < t->nseg; i++) {
        const char *piece = t->seg[i].text;
        if (t->seg[i].is_var) {
            const m_attr *from = model_copy_key_attr(e, a, piece);
            piece = from ? keymatch_scalar(json_object_get(item, from->name)) : NULL;
            if (piece == NULL && from) piece = json_string_value(json_object_get(vars, from->name));
            if (piece == NULL) {
                *missing = t->seg[i].text;
                free(out);
                return NULL;
            }
        }
        size_t len = strlen(piece);
        if (n + len + 1 > cap) {
            while (n + len + 1 > cap)
                cap *= 2;
            char *grown = realloc(out, cap);
            if (grown == NULL) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + n, piece, len + 1);
        n += len;
    }
    return out;
}

static json_t *attribute_value(char type, const char *text)
{
    return json_pack("{s:s}", type == 'N' ? "N" : "S", text);
}

json_t *keymatch_source_key(const m_entity *e, const m_attr *a, const json_t *item,
                            const json_t *vars, const char **missing)
{
    const m_entity *src = a->copy_entity;
    *missing = NULL;
    if (src == NULL) return NULL;
    const m_table *tb = src->table;
    char *pk = fill(&src->pk, e, a, item, vars, missing);
    if (pk == NULL) return NULL;
    json_t *key = json_pack("{s:o}", tb->pk.name, attribute_value(tb->pk.type, pk));
    free(pk);
    if (tb->sk.name && src->sk.text) {
        char *sk = fill(&src->sk, e, a, item, vars, missing);
        if (sk == NULL) {
            json_decref(key);
            return NULL;
        }
        json_object_set_new(key, tb->sk.name, attribute_value(tb->sk.type, sk));
        free(sk);
    }
    return key;
}
