/* projection.c — ProjectionExpression and AttributesToGet: copying the named parts of an item.
 * Parsing lives in parser.c and legacy.c. */
#include "expr/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/value.h"

/* While building, a list being collected is {"L#": {"<index>": value, …}}; finish()
 * turns it into {"L": [values in index order]}. No AttributeValue has an "L#" key. */
#define PARTIAL_LIST "L#"

/* Stores the part of src (the value at p->e[0..i-1]) named by p->e[i..] as dst[key].
 * The caller has checked that the path resolves, so no empty container is left behind. */
static void put(const json_t *src, json_t *dst, const char *key, const path *p, int i)
{
    if (i == p->n) {
        json_object_set_new(dst, key, json_deep_copy(src));
        return;
    }
    const path_elem *e = &p->e[i];
    json_t *slot = json_object_get(dst, key);
    if (e->name) {
        json_t *child =
            value_type(src) == QR_T_M ? json_object_get(value_payload(src), e->name) : NULL;
        if (child == NULL) return;
        if (slot == NULL) {
            slot = json_pack("{s:{}}", "M");
            json_object_set_new(dst, key, slot);
        }
        if (value_type(slot) != QR_T_M) return;
        put(child, value_payload(slot), e->name, p, i + 1);
    } else {
        json_t *arr = value_payload(src);
        if (value_type(src) != QR_T_L || (size_t)e->index >= json_array_size(arr)) return;
        if (slot == NULL) {
            slot = json_pack("{s:{}}", PARTIAL_LIST);
            json_object_set_new(dst, key, slot);
        }
        json_t *partial = json_object_get(slot, PARTIAL_LIST);
        if (partial == NULL) return;
        char idx[24];
        snprintf(idx, sizeof idx, "%ld", e->index);
        put(json_array_get(arr, (size_t)e->index), partial, idx, p, i + 1);
    }
}

static int cmp_index(const void *a, const void *b)
{
    long x = strtol(*(const char *const *)a, NULL, 10),
         y = strtol(*(const char *const *)b, NULL, 10);
    return (x > y) - (x < y);
}

static void finish(json_t *obj);

/* Converts the partial lists inside one AttributeValue, in place. */
static void finish_value(json_t *av)
{
    json_t *partial = json_object_get(av, PARTIAL_LIST);
    if (partial) {
        size_t n = json_object_size(partial), k = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        json_t *list = json_array();
        if (keys && list) {
            const char *key;
            json_t *v;
            json_object_foreach(partial, key, v) keys[k++] = key;
            qsort(keys, n, sizeof *keys, cmp_index);
            for (k = 0; k < n; k++) {
                json_t *v2 = json_object_get(partial, keys[k]);
                finish_value(v2);
                json_array_append(list, v2);
            }
        }
        free(keys);
        json_object_set_new(av, "L", list ? list : json_array());
        json_object_del(av, PARTIAL_LIST);
    } else if (value_type(av) == QR_T_M) {
        finish(value_payload(av));
    }
}

static void finish(json_t *obj)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) finish_value(v);
}

/* Nested paths keep their nesting: a map keeps only the named entries and a list keeps only the
 * named elements, in index order (so l[3], l[1] yields [l[1], l[3]]). Paths that name nothing
 * contribute nothing, not even an empty parent. */
json_t *expr_project(const expr_proj *p, const json_t *item)
{
    json_t *out = json_object();
    if (out == NULL || item == NULL) return out;
    for (int i = 0; i < p->npaths; i++) {
        const path *pa = &p->paths[i];
        const json_t *top = json_object_get(item, pa->e[0].name);
        if (top && path_get(item, pa)) put(top, out, pa->e[0].name, pa, 1);
    }
    finish(out);
    return out;
}

int expr_parse_projection(expr_ctx *cx, const char *text, expr_proj **out)
{
    expr_proj *p = calloc(1, sizeof *p);
    if (p == NULL) return err_set(cx->err, QR_E_INTERNAL, "out of memory");
    arena_init(&p->ar, 0);
    if (parse_projection(cx, text, &p->ar, &p->paths, &p->npaths)) {
        expr_proj_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int expr_proj_nests_into(const expr_proj *p, const char *top_name)
{
    for (int i = 0; p && i < p->npaths; i++)
        if (p->paths[i].n > 1 && p->paths[i].e[0].name &&
            strcmp(p->paths[i].e[0].name, top_name) == 0)
            return 1;
    return 0;
}

json_t *expr_proj_top_names(const expr_proj *p)
{
    json_t *names = json_array();
    for (int i = 0; names && p && i < p->npaths; i++)
        path_add_top_name(names, &p->paths[i]);
    return names;
}

void expr_proj_free(expr_proj *p)
{
    if (p == NULL) return;
    arena_free(&p->ar);
    free(p);
}
