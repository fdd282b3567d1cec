/* doc.c — turning a YAML or JSON model file into a positioned tree (see doc.h).
 *
 * libyaml's event parser does the reading; this file only builds nodes from its events
 * and keeps each node's start mark. It does not interpret any value. */
#include "checker/doc.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define ARENA_BLOCK 65536
#define DOC_MAX_DEPTH 64

struct ck_arena_block {
    ck_arena_block *next;
    size_t used, size;
    max_align_t data[];
};

void *ck_arena_alloc(ck_arena *a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (n == 0) n = sizeof(max_align_t);
    ck_arena_block *b = a->head;
    if (b == NULL || b->size - b->used < n) {
        size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        b = malloc(sizeof *b + size);
        if (b == NULL) return NULL;
        b->size = size;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *ck_arena_strdup(ck_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *p = ck_arena_alloc(a, n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

char *ck_arena_printf(ck_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = ck_arena_alloc(a, (size_t)n + 1);
    if (p == NULL) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void ck_arena_free(ck_arena *a)
{
    while (a->head) {
        ck_arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

typedef struct reader {
    ck_arena *a;
    const char *path;
    yaml_parser_t parser;
    qr_err *err;
} reader;

static int fail_at(reader *r, size_t line0, size_t col0, const char *what)
{
    return err_validation(r->err, "%s:%zu:%zu: %s", r->path, line0 + 1, col0 + 1, what);
}

static int next_event(reader *r, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&r->parser, ev)) {
        const yaml_mark_t *m = &r->parser.problem_mark;
        char msg[512];
        snprintf(msg, sizeof msg, "syntax error: %s%s%s",
                 r->parser.problem ? r->parser.problem : "invalid YAML",
                 r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
        return fail_at(r, m->line, m->column, msg);
    }
    return 0;
}

static doc_node *new_node(reader *r, doc_kind kind, const yaml_mark_t *m)
{
    doc_node *n = ck_arena_alloc(r->a, sizeof *n);
    if (n == NULL) return NULL;
    n->kind = kind;
    n->line = (int)m->line + 1;
    n->col = (int)m->column + 1;
    return n;
}

/* Appends child (and key, for maps) to n, growing its arrays inside the arena. */
static int add_child(reader *r, doc_node *n, size_t *cap, doc_node *key, doc_node *val)
{
    if (n->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        doc_node **nv = ck_arena_alloc(r->a, nc * sizeof *nv);
        doc_node **nk = n->kind == DOC_MAP ? ck_arena_alloc(r->a, nc * sizeof *nk) : NULL;
        if (nv == NULL || (n->kind == DOC_MAP && nk == NULL))
            return err_set(r->err, QR_E_INTERNAL, "out of memory");
        if (n->n) memcpy(nv, n->vals, n->n * sizeof *nv);
        if (nk && n->n) memcpy(nk, n->keys, n->n * sizeof *nk);
        n->vals = nv;
        if (nk) n->keys = nk;
        *cap = nc;
    }
    if (key) n->keys[n->n] = key;
    n->vals[n->n++] = val;
    return 0;
}

static int read_node(reader *r, yaml_event_t *ev, int depth, doc_node **out);

/* Reads the events after a MAPPING-START or SEQUENCE-START up to the matching end. */
static int read_children(reader *r, doc_node *n, int depth)
{
    size_t cap = 0;
    for (;;) {
        yaml_event_t ev;
        if (next_event(r, &ev)) return -1;
        if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        doc_node *key = NULL, *val = NULL;
        if (n->kind == DOC_MAP) {
            if (ev.type != YAML_SCALAR_EVENT) {
                fail_at(r, ev.start_mark.line, ev.start_mark.column,
                        "a map key must be a plain name");
                yaml_event_delete(&ev);
                return -1;
            }
            if (read_node(r, &ev, depth + 1, &key)) return -1;
            for (size_t i = 0; i < n->n; i++)
                if (strcmp(n->keys[i]->str, key->str) == 0) {
                    char msg[300];
                    snprintf(msg, sizeof msg, "duplicate key '%.200s'", key->str);
                    return fail_at(r, (size_t)key->line - 1, (size_t)key->col - 1, msg);
                }
            if (next_event(r, &ev)) return -1;
        }
        if (read_node(r, &ev, depth + 1, &val)) return -1;
        if (add_child(r, n, &cap, key, val)) return -1;
    }
}

/* Builds the node that starts with event ev (which it consumes). */
static int read_node(reader *r, yaml_event_t *ev, int depth, doc_node **out)
{
    int rc = -1;
    if (depth > DOC_MAX_DEPTH) {
        fail_at(r, ev->start_mark.line, ev->start_mark.column, "nesting is too deep");
        goto done;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        doc_node *n = new_node(r, DOC_SCALAR, &ev->start_mark);
        char *s = n ? ck_arena_alloc(r->a, ev->data.scalar.length + 1) : NULL;
        if (s == NULL) {
            err_set(r->err, QR_E_INTERNAL, "out of memory");
            goto done;
        }
        memcpy(s, ev->data.scalar.value, ev->data.scalar.length);
        if (memchr(s, '\0', ev->data.scalar.length)) {
            fail_at(r, ev->start_mark.line, ev->start_mark.column,
                    "a value contains a NUL character");
            goto done;
        }
        n->str = s;
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        *out = n;
        rc = 0;
        break;
    }
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
        doc_node *n =
            new_node(r, ev->type == YAML_MAPPING_START_EVENT ? DOC_MAP : DOC_SEQ, &ev->start_mark);
        if (n == NULL) {
            err_set(r->err, QR_E_INTERNAL, "out of memory");
            goto done;
        }
        yaml_event_delete(ev);
        if (read_children(r, n, depth)) return -1;
        *out = n;
        return 0;
    }
    case YAML_ALIAS_EVENT:
        fail_at(r, ev->start_mark.line, ev->start_mark.column,
                "anchors and aliases are not supported in model files");
        break;
    default:
        fail_at(r, ev->start_mark.line, ev->start_mark.column, "unexpected YAML event");
        break;
    }
done:
    yaml_event_delete(ev);
    return rc;
}

/* JSON gets jansson's syntax check first: its messages name the JSON problem exactly. */
static int check_json(const char *path, const char *text, size_t len, qr_err *err)
{
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (j == NULL)
        return err_validation(err, "%s:%d:%d: syntax error: %s", path, je.line, je.column, je.text);
    json_decref(j);
    return 0;
}

int doc_parse(ck_arena *a, const char *path, const char *text, size_t len, doc_node **out,
              qr_err *err)
{
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    char *copy = NULL;
    size_t pl = strlen(path);
    int json_name = pl >= 5 && strcmp(path + pl - 5, ".json") == 0;
    int json_like = i < len && (text[i] == '{' || text[i] == '[');
    /* a .json file must be JSON; a YAML file may still be written in flow style */
    if (json_like && !json_name) {
        qr_err probe;
        err_init(&probe);
        json_like = check_json(path, text, len, &probe) == 0;
    }
    if (json_name || json_like) {
        if (check_json(path, text, len, err)) return -1;
        /* Valid JSON has tabs only between tokens; YAML wants spaces there. */
        copy = malloc(len ? len : 1);
        if (copy == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
        for (size_t k = 0; k < len; k++)
            copy[k] = text[k] == '\t' ? ' ' : text[k];
        text = copy;
    }
    reader r = {.a = a, .path = path, .err = err};
    if (!yaml_parser_initialize(&r.parser)) {
        free(copy);
        return err_set(err, QR_E_INTERNAL, "cannot start the YAML parser");
    }
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
    int rc = -1;
    yaml_event_t ev;
    *out = NULL;
    for (;;) {
        if (next_event(&r, &ev)) goto done;
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
            ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT) {
            if (*out != NULL) {
                fail_at(&r, ev.start_mark.line, ev.start_mark.column,
                        "a model file holds one document");
                yaml_event_delete(&ev);
                goto done;
            }
            if (read_node(&r, &ev, 0, out)) goto done;
        } else {
            yaml_event_delete(&ev);
        }
    }
    if (*out == NULL || (*out)->kind != DOC_MAP) {
        err_validation(
            err,
            "%s:1:1: a model file must be a map with 'tables', 'entities' and 'access_patterns'",
            path);
        goto done;
    }
    rc = 0;
done:
    yaml_parser_delete(&r.parser);
    free(copy);
    return rc;
}

doc_node *doc_get(const doc_node *map, const char *key)
{
    if (map == NULL || map->kind != DOC_MAP) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->str, key) == 0) return map->vals[i];
    return NULL;
}
