/* check.c — planning access patterns and running the modelling checklist (see check.h).
 *
 * Each rule is one static function named rule_<what>, reading the model and the plans and
 * adding findings. Nothing here formats output. */
#include "checker/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIGH_CARDINALITY 1e6
#define HORIZON_DAYS 3650.0

/* ---- small helpers ---- */

size_t check_id_stem(const char *name, char *stem, size_t size)
{
    snprintf(stem, size, "%s", name);
    size_t l = strlen(stem);
    if (l > 2 && (strcmp(stem + l - 2, "Id") == 0 || strcmp(stem + l - 2, "ID") == 0))
        stem[l - 2] = '\0';
    else if (l > 3 && strcmp(stem + l - 3, "_id") == 0)
        stem[l - 3] = '\0';
    for (char *c = stem; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    return l;
}

const char *check_severity_name(ck_severity s)
{
    return s == CK_ERROR ? "error" : s == CK_WARNING ? "warning" : "note";
}

static int add(ck_report *r, ck_severity sev, const char *rule, const char *subject, m_pos pos,
               const char *message, const char *explanation, const char *fix)
{
    if (message == NULL || subject == NULL) return -1; /* an ck_arena_printf ran out of memory */
    if (r->nfindings == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 32;
        ck_finding *nf = ck_arena_alloc(&r->arena, nc * sizeof *nf);
        if (nf == NULL) return -1;
        if (r->nfindings) memcpy(nf, r->findings, r->nfindings * sizeof *nf);
        r->findings = nf;
        r->cap = nc;
    }
    r->findings[r->nfindings++] = (ck_finding){sev, rule, subject, pos, message, explanation, fix};
    if (sev == CK_ERROR)
        r->errors++;
    else if (sev == CK_WARNING)
        r->warnings++;
    else
        r->notes++;
    return 0;
}

#define P(...) ck_arena_printf(&r->arena, __VA_ARGS__)

static const m_given *given(const m_pattern *p, const char *name)
{
    for (size_t i = 0; p && i < p->ngiven; i++)
        if (strcmp(p->given[i].name, name) == 0) return &p->given[i];
    return NULL;
}

static int is_time(const m_attr *a)
{
    return a->format == MF_TIMESTAMP || a->format == MF_DATE || a->format == MF_MONTH ||
           a->format == MF_YEAR || a->format == MF_EPOCH;
}

/* Time granularity: 1 year … 4 instant; 0 for non-time attributes. */
static int time_rank(const m_attr *a)
{
    switch (a->format) {
    case MF_YEAR:
        return 1;
    case MF_MONTH:
        return 2;
    case MF_DATE:
        return 3;
    case MF_TIMESTAMP:
    case MF_EPOCH:
    case MF_ULID:
        return 4;
    default:
        return 0;
    }
}

/* True if a date pattern sorts as text: fixed-width fields running year, month, day. */
static int date_pattern_sorts(const char *pat)
{
    if (pat == NULL) return 1;
    const char *y = strstr(pat, "YYYY"), *m = strstr(pat, "MM"), *d = strstr(pat, "DD");
    if (y == NULL) return 0;
    if (m == NULL && strchr(pat, 'M')) return 0; /* single-letter month: 3 sorts after 12 */
    if (d == NULL && strchr(pat, 'D')) return 0;
    if (m && m < y) return 0;
    if (d && (d < y || (m && d < m))) return 0;
    return 1;
}

/* Why a variable in a string key does not sort, or NULL if it does. */
static const char *unsorted_reason(const m_attr *a)
{
    if (a->format == MF_DATE && !date_pattern_sorts(a->pattern))
        return "a date whose fields do not run year-month-day at fixed width";
    if (a->format == MF_INTEGER || (a->type == MT_NUMBER && (a->format == MF_NONE)))
        return "a number without zero-padding (9 sorts after 10)";
    return NULL;
}

/* Why a range or order on this attribute is meaningless, or NULL. */
static const char *unordered_reason(const m_attr *a)
{
    const char *u = unsorted_reason(a);
    if (u) return u;
    if (a->format == MF_UUID) return "a random UUID, which has no meaningful order";
    if (a->format == MF_ENUM)
        return "an enum, whose values sort alphabetically, not in any business order";
    if (a->type == MT_BOOLEAN) return "a boolean";
    if (a->format == MF_SHARD) return "a shard suffix";
    return NULL;
}

static double var_cardinality(const m_entity *e, const m_attr *a)
{
    if (a->cardinality > 0) return a->cardinality;
    if (a->type == MT_BOOLEAN) return 2;
    if (a->format == MF_ENUM) return (double)a->nvalues;
    if (a->format == MF_SHARD) return a->shards;
    if (is_time(a)) return 1; /* all current traffic lands in the current bucket */
    return e->count > 0 ? e->count : HIGH_CARDINALITY;
}

size_t check_paths(const m_entity *e, ck_path *out)
{
    size_t n = 0;
    out[n++] = (ck_path){e->table, NULL, &e->pk, &e->sk, NULL};
    for (size_t i = 0; i < e->nkeys; i++) {
        const m_entkey *k = &e->keys[i];
        out[n++] = (ck_path){e->table, k->index, k->index->local ? &e->pk : &k->pk, &k->sk, k};
    }
    return n;
}

/* "(a, b)" for a multi-attribute key's parts. */
static const char *parts_label(const m_keyattr *parts, size_t n)
{
    static char buf[2][300];
    static int which;
    char *b = buf[which ^= 1];
    b[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(b + strlen(b), 300 - strlen(b), "%s%s", i ? " + " : "", parts[i].name);
    return b;
}

static const char *pk_name(const ck_path *p)
{
    if (p->index && p->index->npk_parts > 1)
        return parts_label(p->index->pk_parts, p->index->npk_parts);
    return p->index ? p->index->pk.name : p->table->pk.name;
}

static const char *sk_name(const ck_path *p)
{
    if (p->index && p->index->nsk_parts > 1)
        return parts_label(p->index->sk_parts, p->index->nsk_parts);
    return p->index ? p->index->sk.name : p->table->sk.name;
}

static const char *path_name(ck_report *r, const ck_path *p)
{
    if (p->index)
        return P("%s %s of table %s", p->index->local ? "LSI" : "GSI", p->index->name,
                 p->table->name);
    return P("table %s", p->table->name);
}

static int same_path(const ck_path *a, const ck_path *b)
{
    return a->table == b->table && a->index == b->index;
}

/* ---- examples ---- */

void check_example_value(const m_attr *a, int n, char *buf, size_t size)
{
    static const int nums[] = {42, 7, 1337, 256};
    static const int days[] = {14, 9, 21, 3};
    static const int months[] = {3, 2, 1, 4};
    static const char *const uuids[] = {
        "3f2a9c1e-7b4d-4e2a-9c1f-5d8e2b7a6c40", "a71c02d9-1e5b-4f3a-8d26-0b9e4c7f1a53",
        "5e9b7d13-c2a8-4b61-a0f4-9d3e8c2b1f77", "c04d8e2f-6a1b-4c93-b7e5-2f8a1d9c3e06"};
    static const char *const ulids[] = {"01HV6Z3K8Q2M7N4P5R6S7T8V9W", "01HV6Z3M1A2B3C4D5E6F7G8H9J",
                                        "01HV6Z3P9K8J7H6G5F4E3D2C1B", "01HV6Z3R4T5V6W7X8Y9Z0A1B2C"};
    int k = n % 4;
    if (a->example && n == 0) {
        snprintf(buf, size, "%s", a->example);
        return;
    }
    switch (a->format) {
    case MF_TIMESTAMP:
        snprintf(buf, size, "2026-03-%02dT09:%02d:00Z", days[k], 14 + k * 7);
        return;
    case MF_MONTH:
        snprintf(buf, size, "2026-%02d", months[k]);
        return;
    case MF_YEAR:
        snprintf(buf, size, "%d", 2026 - k);
        return;
    case MF_EPOCH:
        snprintf(buf, size, "%ld", 1773479640L + 86400L * k);
        return;
    case MF_PADDED:
        snprintf(buf, size, "%0*d", a->width, nums[k]);
        return;
    case MF_INTEGER:
        snprintf(buf, size, "%d", nums[k]);
        return;
    case MF_ENUM:
        snprintf(buf, size, "%s", a->values[(size_t)n % a->nvalues]);
        return;
    case MF_UUID:
        snprintf(buf, size, "%s", uuids[k]);
        return;
    case MF_ULID:
        snprintf(buf, size, "%s", ulids[k]);
        return;
    case MF_SHARD:
        snprintf(buf, size, "%d", n % a->shards);
        return;
    case MF_DATE: {
        const char *pat = a->pattern ? a->pattern : "YYYY-MM-DD";
        size_t o = 0;
        for (const char *s = pat; *s && o + 8 < size;) {
            if (strncmp(s, "YYYY", 4) == 0)
                o += (size_t)snprintf(buf + o, size - o, "2026"), s += 4;
            else if (strncmp(s, "MM", 2) == 0)
                o += (size_t)snprintf(buf + o, size - o, "03"), s += 2;
            else if (strncmp(s, "DD", 2) == 0)
                o += (size_t)snprintf(buf + o, size - o, "%02d", days[k]), s += 2;
            else if (*s == 'M')
                o += (size_t)snprintf(buf + o, size - o, "3"), s++;
            else if (*s == 'D')
                o += (size_t)snprintf(buf + o, size - o, "%d", days[k]), s++;
            else
                buf[o++] = *s++;
        }
        buf[o < size ? o : size - 1] = '\0';
        return;
    }
    default:
        break;
    }
    if (a->type == MT_BOOLEAN)
        snprintf(buf, size, "%s", n % 2 ? "false" : "true");
    else if (a->type == MT_NUMBER)
        snprintf(buf, size, "%d", nums[k]);
    else {
        /* userId -> user-101: readable ids that differ per example */
        char stem[64];
        size_t l = check_id_stem(a->name, stem, sizeof stem);
        if (a->format == MF_ID || stem[0] == '\0' || strlen(stem) != l)
            snprintf(buf, size, "%s-%d", stem[0] ? stem : "id", 101 + k);
        else
            snprintf(buf, size, "%s %c", a->name, 'A' + k);
    }
}

void check_partition_value(const m_entity *e, const m_attr *a, int part, int k, char *buf,
                           size_t size)
{
    int in_pk = 0;
    for (size_t i = 0; i < e->pk.nseg; i++)
        in_pk |= e->pk.seg[i].is_var && e->pk.seg[i].attr == a;
    check_example_value(a, in_pk ? part : k, buf, size);
}

void check_partition_key(const m_entity *e, const m_template *t, int part, int k, char *buf,
                         size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->nseg && o + 1 < size; i++) {
        char v[256];
        if (t->seg[i].is_var)
            check_partition_value(e, t->seg[i].attr, part, k, v, sizeof v);
        else
            snprintf(v, sizeof v, "%s", t->seg[i].text);
        o += (size_t)snprintf(buf + o, size - o, "%s", v);
    }
}

int check_partition_in_index(const m_entity *e, const m_entkey *ek, int part, int k)
{
    for (size_t i = 0; i < ek->nwhen; i++) {
        const m_attr *a = model_entity_attr(e, ek->when[i].name);
        char v[256];
        check_partition_value(e, a, part, k, v, sizeof v);
        if (strcmp(v, ek->when[i].value) != 0) return 0;
    }
    return 1;
}

void check_item_value(const m_entity *e, const m_attr *a, int k, char *buf, size_t size)
{
    check_partition_value(e, a, 0, k, buf, size);
}

void check_item_key(const m_entity *e, const m_template *t, int k, char *buf, size_t size)
{
    check_partition_key(e, t, 0, k, buf, size);
}

int check_item_in_index(const m_entity *e, const m_entkey *ek, int k)
{
    return check_partition_in_index(e, ek, 0, k);
}

/* ---- planning ---- */

typedef struct match {
    int usable;          /* partition key fully known (and sparse conditions met) */
    int eq_all;          /* sort key fully known */
    const m_seg *range;  /* first sort-key variable not given */
    size_t prefix_nseg;  /* segments before it */
    int scatter;         /* shards to fan out over */
    const char *missing; /* first partition-key variable not given */
    const char *filters; /* given attributes the key does not use, comma-separated */
    int cond_ok, order_ok;
    const char *why; /* what is wrong when usable but not clean */
} match;

static int template_uses(const m_template *t, size_t upto, const char *name)
{
    for (size_t i = 0; i < t->nseg && i < upto; i++)
        if (t->seg[i].is_var && strcmp(t->seg[i].text, name) == 0) return 1;
    return 0;
}

static match match_path(ck_report *r, const m_pattern *p, const ck_path *path)
{
    match mt = {.usable = 1, .scatter = 1, .cond_ok = 1, .order_ok = 1};
    for (size_t i = 0; i < path->pk->nseg; i++) {
        const m_seg *s = &path->pk->seg[i];
        if (!s->is_var) continue;
        if (s->attr->format == MF_SHARD && !given(p, s->text))
            mt.scatter *= s->attr->shards;
        else if (!given(p, s->text)) {
            mt.usable = 0;
            if (mt.missing == NULL) mt.missing = s->text;
        }
    }
    if (path->key)
        for (size_t i = 0; i < path->key->nwhen; i++) {
            const m_given *g = given(p, path->key->when[i].name);
            if (g == NULL || g->value == NULL || strcmp(g->value, path->key->when[i].value) != 0) {
                mt.usable = 0;
                if (mt.missing == NULL) mt.missing = path->key->when[i].name;
            }
        }
    const m_template *sk = path->sk;
    size_t i = 0;
    for (; sk->text && i < sk->nseg; i++) {
        const m_seg *s = &sk->seg[i];
        if (s->is_var && !given(p, s->text)) break;
        /* an attribute the pattern ranges over ends the equality prefix even when given */
        if (s->is_var && p->sk_attr && strcmp(p->sk_op, "=") != 0 &&
            strcmp(s->text, p->sk_attr) == 0)
            break;
    }
    mt.eq_all = sk->text == NULL || i == sk->nseg;
    mt.prefix_nseg = i;
    mt.range = mt.eq_all ? NULL : &sk->seg[i];
    /* given attributes the key does not use become filters */
    char list[512] = "";
    for (size_t g = 0; g < p->ngiven; g++) {
        const char *name = p->given[g].name;
        int used = template_uses(path->pk, path->pk->nseg, name) ||
                   (sk->text && template_uses(sk, mt.prefix_nseg, name));
        if (path->key)
            for (size_t w = 0; w < path->key->nwhen; w++)
                used |= strcmp(path->key->when[w].name, name) == 0;
        if (!used && p->sk_attr && strcmp(p->sk_attr, name) == 0 && mt.range &&
            strcmp(mt.range->text, name) == 0)
            used = 1;
        if (!used) {
            if (list[0]) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, name, sizeof list - strlen(list) - 1);
        }
    }
    if (list[0]) mt.filters = P("%s", list);
    if (p->sk_attr) {
        int on_range = mt.range && strcmp(mt.range->text, p->sk_attr) == 0;
        int on_eq =
            strcmp(p->sk_op, "=") == 0 && sk->text && template_uses(sk, mt.prefix_nseg, p->sk_attr);
        if (!on_range && !on_eq) {
            mt.cond_ok = 0;
            mt.why = P("the condition on %s is not on the next sort-key component", p->sk_attr);
        }
    }
    if (p->order_by && !(mt.range && strcmp(mt.range->text, p->order_by) == 0)) {
        int single = sk->text && sk->nseg == 1 && sk->seg[0].is_var &&
                     strcmp(sk->seg[0].text, p->order_by) == 0;
        if (!single) {
            mt.order_ok = 0;
            mt.why = P("the sort key does not order by %s", p->order_by);
        }
    }
    if (mt.filters && mt.why == NULL) mt.why = P("the key does not use %s", mt.filters);
    return mt;
}

/* Text of the template's first n segments (variables kept as {name}, or the pattern's
 * fixed value for them when p is not NULL). */
static const char *template_head(ck_report *r, const m_template *t, size_t n, const m_pattern *p)
{
    char buf[600] = "";
    for (size_t i = 0; i < n && i < t->nseg; i++) {
        const m_given *g = p && t->seg[i].is_var ? given(p, t->seg[i].text) : NULL;
        if (g && g->value) {
            strncat(buf, g->value, sizeof buf - strlen(buf) - 1);
        } else if (t->seg[i].is_var) {
            strncat(buf, "{", sizeof buf - strlen(buf) - 1);
            strncat(buf, t->seg[i].text, sizeof buf - strlen(buf) - 1);
            strncat(buf, "}", sizeof buf - strlen(buf) - 1);
        } else {
            strncat(buf, t->seg[i].text, sizeof buf - strlen(buf) - 1);
        }
    }
    return P("%s", buf);
}

/* The template's text with the pattern's fixed given values filled in ("STATUS#PENDING"). */
static const char *bound(ck_report *r, const m_pattern *p, const m_template *t)
{
    return template_head(r, t, t->nseg, p);
}

/* "a = {a}" (or the fixed value), one equality per part of template t up to n segments. */
static const char *parts_equal(ck_report *r, const m_pattern *p, const m_template *t, size_t n)
{
    char buf[800] = "";
    for (size_t i = 0; i < n && i < t->nseg; i++) {
        if (!t->seg[i].is_var) continue;
        const m_given *g = given(p, t->seg[i].text);
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s = %s%s%s",
                 buf[0] ? " AND " : "", t->seg[i].text, g && g->value ? "\"" : "{",
                 g && g->value ? g->value : t->seg[i].text, g && g->value ? "\"" : "}");
    }
    return P("%s", buf);
}

/* The key condition on a multi-attribute key: every partition-key part by equality, the
 * sort-key parts left to right by equality, and a range on the next one. */
static const char *multi_condition(ck_report *r, const m_pattern *p, const ck_path *path,
                                   const match *mt)
{
    const char *c = path->index->npk_parts ? parts_equal(r, p, path->pk, path->pk->nseg)
                                           : P("%s = \"%s\"", pk_name(path), bound(r, p, path->pk));
    const m_template *sk = path->sk;
    if (sk->text == NULL) return c;
    if (path->index->nsk_parts == 0) {
        if (mt->eq_all) return P("%s AND %s = \"%s\"", c, path->index->sk.name, bound(r, p, sk));
        return c;
    }
    size_t eq = mt->eq_all ? sk->nseg : mt->prefix_nseg;
    const char *sc = parts_equal(r, p, sk, eq);
    if (sc[0]) c = P("%s AND %s", c, sc);
    if (!mt->eq_all && p->sk_attr && mt->range && strcmp(mt->range->text, p->sk_attr) == 0) {
        const char *v = mt->range->text;
        if (strcmp(p->sk_op, "between") == 0)
            return P("%s AND %s BETWEEN {%s:from} AND {%s:to}", c, v, v, v);
        if (strcmp(p->sk_op, "begins_with") == 0) return P("%s AND begins_with(%s, {%s})", c, v, v);
        return P("%s AND %s %s {%s}", c, v, p->sk_op, v);
    }
    return c;
}

/* The character after the separator that follows sort-key segment range ("$" after "#"),
 * 0 when the segment is the last. */
static char range_past(const m_template *sk, size_t range)
{
    if (range + 1 >= sk->nseg || sk->seg[range + 1].is_var) return 0;
    unsigned char c = (unsigned char)sk->seg[range + 1].text[0];
    return c && c < 127 ? (char)(c + 1) : 0;
}

const char *check_range_bounds(const char *op, const m_template *sk, size_t range,
                               const char *prefix, const char *v1, const char *v2, int for_people,
                               char *lo, char *hi, size_t size)
{
    char past[2] = {range_past(sk, range), '\0'}, succ[600];
    size_t pl = strlen(prefix);
    int bounded = pl > 0 && pl < sizeof succ && (unsigned char)prefix[pl - 1] < 127;
    if (bounded) {
        memcpy(succ, prefix, pl + 1);
        succ[pl - 1]++;
    }
    hi[0] = '\0';
    if (strcmp(op, "between") == 0) {
        snprintf(lo, size, "%s%s", prefix, v1);
        snprintf(hi, size, "%s%s%s", prefix, v2, past);
        return "BETWEEN";
    }
    if (strcmp(op, "begins_with") == 0) {
        snprintf(lo, size, "%s%s", prefix, v1);
        return "begins_with";
    }
    if (strcmp(op, ">") == 0 || strcmp(op, ">=") == 0) {
        int gt = op[1] == '\0';
        /* after the last segment the least string above the value is the value and U+0001 */
        const char *above = past[0] ? past : for_people ? "\\u0001" : "\x01";
        snprintf(lo, size, "%s%s%s", prefix, v1, gt ? above : "");
        if (gt && !past[0] && !bounded) {
            snprintf(lo, size, "%s%s", prefix, v1);
            return ">";
        }
        if (!bounded) return op;
        snprintf(hi, size, "%s", succ);
        return "BETWEEN";
    }
    if (strcmp(op, "<") == 0) {
        snprintf(lo, size, "%s%s", prefix, v1);
        if (!past[0] || pl == 0) return "<";
        snprintf(hi, size, "%s", lo);
        snprintf(lo, size, "%s", prefix);
        return "BETWEEN";
    }
    snprintf(lo, size, "%s%s%s", prefix, v1, past); /* <= */
    if (pl == 0) return op;
    snprintf(hi, size, "%s", lo);
    snprintf(lo, size, "%s", prefix);
    return "BETWEEN";
}

static const char *key_condition(ck_report *r, const m_pattern *p, const ck_path *path,
                                 const match *mt)
{
    if (path->index && (path->index->npk_parts || path->index->nsk_parts))
        return multi_condition(r, p, path, mt);
    const char *pkc = P("%s = \"%s\"", pk_name(path), bound(r, p, path->pk));
    const m_template *sk = path->sk;
    if (sk->text == NULL) return pkc;
    const char *skn = sk_name(path);
    if (mt->eq_all) return P("%s AND %s = \"%s\"", pkc, skn, bound(r, p, sk));
    const char *prefix = template_head(r, sk, mt->prefix_nseg, p);
    if (p->sk_attr && mt->range && strcmp(mt->range->text, p->sk_attr) == 0) {
        const char *v = mt->range->text;
        char lo[700], hi[700];
        int between = strcmp(p->sk_op, "between") == 0;
        const char *op = check_range_bounds(p->sk_op, sk, mt->prefix_nseg, prefix,
                                            P(between ? "{%s:from}" : "{%s}", v), P("{%s:to}", v),
                                            1, lo, hi, sizeof lo);
        if (strcmp(op, "BETWEEN") == 0)
            return P("%s AND %s BETWEEN \"%s\" AND \"%s\"", pkc, skn, lo, hi);
        if (strcmp(op, "begins_with") == 0)
            return P("%s AND begins_with(%s, \"%s\")", pkc, skn, lo);
        return P("%s AND %s %s \"%s\"", pkc, skn, op, lo);
    }
    if (prefix[0]) return P("%s AND begins_with(%s, \"%s\")", pkc, skn, prefix);
    return pkc;
}

void check_prefix_narrow(char *common, const char *head)
{
    size_t c = 0;
    while (common[c] && head[c] == common[c])
        c++;
    common[c] = '\0';
}

size_t check_prefix_cut(char *common)
{
    size_t len = strlen(common);
    while (len && common[len - 1] != '#' && common[len - 1] != '}')
        len--;
    common[len] = '\0';
    return len;
}

/* A Query reading several entity types of one item collection: the partition key and the
 * sort-key prefix all their given parts share. */
static const char *collection_condition(ck_report *r, const m_pattern *p, const ck_path *path)
{
    const char *pkc = P("%s = \"%s\"", pk_name(path), bound(r, p, path->pk));
    if (path->sk->text == NULL) return pkc;
    char common[600];
    match mt = match_path(r, p, path);
    snprintf(common, sizeof common, "%s", template_head(r, path->sk, mt.prefix_nseg, p));
    for (size_t i = 0; i < p->nalso; i++) {
        const m_entity *o = p->also[i];
        ck_path op[1 + QR_MODEL_MAX_INDEXES];
        size_t n = check_paths(o, op);
        for (size_t k = 0; k < n; k++) {
            if (!same_path(&op[k], path)) continue;
            match om = match_path(r, p, &op[k]);
            check_prefix_narrow(
                common, op[k].sk->text ? template_head(r, op[k].sk, om.prefix_nseg, p) : "");
        }
    }
    if (check_prefix_cut(common) == 0) return pkc;
    return P("%s AND begins_with(%s, \"%s\")", pkc, sk_name(path), common);
}

static int is_read(m_kind k)
{
    return k == MK_GET || k == MK_QUERY;
}

static int is_write(m_kind k)
{
    return !is_read(k);
}

/* A GSI proposal for a pattern no key serves: partition on the given attributes, sort on
 * the condition or order attribute. */
static const char *propose_index(ck_report *r, const m_pattern *p)
{
    const m_entity *e = p->entity;
    char pk[300] = "", sk[200] = "";
    int fixed_only = p->ngiven > 0, list_attr = 0;
    const char *list_name = NULL;
    for (size_t i = 0; i < p->ngiven; i++) {
        const m_attr *a = model_entity_attr(e, p->given[i].name);
        if (a == NULL) continue;
        if (p->given[i].value == NULL) fixed_only = 0;
        if (a->type == MT_LIST || a->type == MT_SET) {
            list_attr = 1;
            list_name = a->name;
        }
        if (p->sk_attr && strcmp(p->sk_attr, a->name) == 0 && strcmp(p->sk_op, "=") != 0) continue;
        if (pk[0]) strncat(pk, "#", sizeof pk - strlen(pk) - 1);
        char part[120];
        snprintf(part, sizeof part, "%.40s#{%.40s}", a->name, a->name);
        for (char *c = part; *c && *c != '#'; c++)
            if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
        strncat(pk, part, sizeof pk - strlen(pk) - 1);
    }
    const char *sortby = p->sk_attr ? p->sk_attr : p->order_by;
    if (sortby)
        snprintf(sk, sizeof sk, "{%s}", sortby);
    else if (e->sk.text)
        snprintf(sk, sizeof sk, "%s", e->sk.text);
    /* a free GSI of the table that this entity does not use yet can be overloaded */
    const char *reuse = NULL;
    for (size_t i = 0; i < e->table->nidx; i++)
        if (!e->table->idx[i].local && model_entity_key(e, &e->table->idx[i]) == NULL)
            reuse = e->table->idx[i].name;
    const char *where = reuse ? P("overload GSI %s (give entity %s keys for it)", reuse, e->name)
                              : P("add a GSI (e.g. GSI%zu) and give entity %s keys for it",
                                  e->table->nidx + 1, e->name);
    if (list_attr)
        return P("an inverted index: write one item per element of %s with pk \"%s#{element}\" and "
                 "sk \"%s\" "
                 "(or a GSI on that item), then Query by the element",
                 list_name, list_name, e->pk.text);
    if (fixed_only) {
        const m_given *g = &p->given[0];
        return P("a sparse index: %s with pk \"%s\"%s%s%s written only while %s = %s (remove it "
                 "when that changes), "
                 "so the index holds exactly the matching items (shard the pk if writes are heavy)"
                 "; or, to serve every value of %s, %s with pk \"%s\"",
                 where, g->value, sk[0] ? " and sk \"" : "", sk, sk[0] ? "\"" : "", g->name,
                 g->value, g->name, where, pk);
    }
    if (pk[0] == '\0')
        return P("give the pattern the attributes that identify the partition; a pattern with no "
                 "given values reads the whole table");
    return P("%s with pk \"%s\"%s%s%s", where, pk, sk[0] ? " and sk \"" : "", sk,
             sk[0] ? "\"" : "");
}

static int plan_cql(ck_report *r, const m_pattern *p, ck_plan *pl);

static int plan_pattern(ck_report *r, const m_pattern *p, ck_plan *pl)
{
    const m_entity *e = p->entity;
    if (e->table->cql) return plan_cql(r, p, pl);
    ck_path paths[1 + QR_MODEL_MAX_INDEXES];
    size_t np = check_paths(e, paths);
    pl->pattern = p;
    pl->scatter = 1;
    pl->forward = p->direction >= 0;
    const char *subject = P("pattern %s", p->name);

    if (p->kind == MK_PUT || p->kind == MK_TRANSACTION) {
        pl->served = 1;
        pl->path = paths[0];
        pl->key_condition = e->sk.text ? P("%s = \"%s\", %s = \"%s\"", e->table->pk.name,
                                           e->pk.text, e->table->sk.name, e->sk.text)
                                       : P("%s = \"%s\"", e->table->pk.name, e->pk.text);
        if (p->kind == MK_PUT) {
            pl->operation = "PutItem";
            pl->text = P("PutItem on table %s: %s", e->table->name, pl->key_condition);
        } else {
            pl->operation = "TransactWriteItems";
            char names[512] = "";
            strncat(names, e->name, sizeof names - 1);
            for (size_t i = 0; i < p->nalso; i++) {
                strncat(names, ", ", sizeof names - strlen(names) - 1);
                strncat(names, p->also[i]->name, sizeof names - strlen(names) - 1);
            }
            pl->text =
                P("TransactWriteItems with %zu items (%s), all or nothing", 1 + p->nalso, names);
            if (1 + p->nalso > 100) {
                pl->served = 0;
                return add(
                    r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
                    P("pattern %s writes %zu items in one transaction; TransactWriteItems takes at "
                      "most 100",
                      p->name, 1 + p->nalso),
                    "DynamoDB rejects transactions of more than 100 items (and more than 4 MB).",
                    "split the write, or keep the invariant in fewer items (a counter item, one "
                    "aggregate item)");
            }
        }
        return pl->text ? 0 : -1;
    }

    /* reads, updates and deletes: find the best path */
    int best = -1;
    match bm = {0};
    int gsi_only_consistent = 0;
    for (size_t i = 0; i < np; i++) {
        const ck_path *path = &paths[i];
        if (p->index && (path->index == NULL || strcmp(path->index->name, p->index) != 0)) continue;
        if (is_write(p->kind) && path->index) continue;
        match mt = match_path(r, p, path);
        if (!mt.usable) continue;
        int clean = mt.filters == NULL && mt.cond_ok && mt.order_ok;
        if (is_write(p->kind)) clean = mt.eq_all && mt.scatter == 1;
        if (p->kind == MK_GET && !mt.eq_all) clean = 0;
        if (clean && p->consistent && path->index && !path->index->local) {
            gsi_only_consistent = 1;
            continue;
        }
        if (clean) {
            best = (int)i;
            bm = mt;
            break;
        }
    }
    if (best >= 0) {
        const ck_path *path = &paths[best];
        pl->served = 1;
        pl->path = *path;
        pl->scatter = bm.scatter;
        pl->sk_given = bm.prefix_nseg;
        pl->sk_whole = bm.eq_all;
        pl->key_condition = p->nalso && p->kind == MK_QUERY ? collection_condition(r, p, path)
                                                            : key_condition(r, p, path, &bm);
        const char *where = path_name(r, path);
        const char *item_key = path->sk->text
                                   ? P("%s = \"%s\", %s = \"%s\"", pk_name(path),
                                       bound(r, p, path->pk), sk_name(path), bound(r, p, path->sk))
                                   : P("%s = \"%s\"", pk_name(path), bound(r, p, path->pk));
        if (is_write(p->kind) || (p->kind == MK_GET && path->index == NULL && bm.scatter == 1))
            pl->key_condition = item_key;
        if (is_write(p->kind)) {
            pl->operation = p->kind == MK_UPDATE ? "UpdateItem" : "DeleteItem";
            pl->text = P("%s on %s: Key %s", pl->operation, where, pl->key_condition);
        } else if (p->kind == MK_GET && path->index == NULL && bm.scatter == 1) {
            pl->operation = "GetItem";
            pl->text = P("GetItem on %s: Key %s%s", where, pl->key_condition,
                         p->consistent ? ", ConsistentRead=true" : "");
        } else {
            pl->operation = "Query";
            char extra[200] = "";
            if (p->direction < 0)
                strncat(extra, ", ScanIndexForward=false", sizeof extra - strlen(extra) - 1);
            if (p->limit > 0)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", Limit=%.0f",
                         p->limit);
            else if (p->kind == MK_GET)
                strncat(extra, ", Limit=1", sizeof extra - strlen(extra) - 1);
            if (p->consistent)
                strncat(extra, ", ConsistentRead=true", sizeof extra - strlen(extra) - 1);
            if (bm.scatter > 1)
                snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                         "; x%d (one Query per shard, merged by the client)", bm.scatter);
            pl->text = P("Query %s: %s%s", where, pl->key_condition, extra);
        }
        return pl->text ? 0 : -1;
    }

    /* not served: say why, and what would serve it */
    pl->served = 0;
    pl->operation = "Scan";
    const char *sentence = p->sentence ? P(" (\"%s\")", p->sentence) : "";
    if (gsi_only_consistent && !match_path(r, p, &paths[0]).usable) {
        /* an LSI shares the table's partition key: it cannot serve another one */
        match bm0 = match_path(r, p, &paths[0]);
        pl->text = P("no strongly consistent path: only a GSI has the key");
        return add(
            r, CK_ERROR, "index-lsi-at-creation", subject, p->pos,
            P("pattern %s%s needs strongly consistent reads, but only a global index serves it, "
              "and its partition key is not the table's (the pattern does not give %s of \"%s\")",
              p->name, sentence, bm0.missing ? bm0.missing : "the partition key", e->pk.text),
            "GSIs are eventually consistent; only the base table and local indexes offer "
            "ConsistentRead, and a local index shares the table's partition key, so no LSI can "
            "serve a read by another partition key.",
            P("accept eventual consistency (reads may miss writes of the last second or so); or "
              "make what the pattern gives the partition key of the base table (of table %s, or "
              "of a table of its own written in the same transaction), so a consistent Query on "
              "it works",
              e->table->name));
    }
    if (gsi_only_consistent) {
        pl->text = P("no strongly consistent path: only a GSI has the key");
        return add(
            r, CK_ERROR, "index-lsi-at-creation", subject, p->pos,
            P("pattern %s%s needs strongly consistent reads, but only a global index serves it",
              p->name, sentence),
            "GSIs are eventually consistent; only the base table and local indexes offer "
            "ConsistentRead. "
            "Local indexes must be declared when the table is created: they cannot be added later.",
            e->table->existing
                ? P("table %s exists already, so no LSI can be added to it: accept eventual "
                    "consistency, or create a new table with the LSI and move the items to it",
                    e->table->name)
                : P("declare an LSI on table %s now, with the sort key this pattern needs, or "
                    "accept eventual consistency",
                    e->table->name));
    }
    if (is_write(p->kind)) {
        pl->text =
            P("no single-item %s: the full primary key is not given", model_kind_name(p->kind));
        return add(
            r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
            P("pattern %s%s does not give the full primary key (%s%s%s) of %s", p->name, sentence,
              e->pk.text, e->sk.text ? ", " : "", e->sk.text ? e->sk.text : "", e->name),
            "UpdateItem and DeleteItem address one item by its whole key; without it the "
            "application must first "
            "Query (or Scan) to find the key, which is two round trips and a race between them.",
            P("give the pattern every attribute of the key templates of %s, or design the key from "
              "what the caller knows",
              e->name));
    }
    /* the designer named an index that cannot serve the pattern */
    if (p->index) {
        const ck_path *hinted = NULL, *clean = NULL;
        match cm = {0};
        for (size_t i = 0; i < np; i++) {
            if (paths[i].index && strcmp(paths[i].index->name, p->index) == 0) hinted = &paths[i];
            match mt = match_path(r, p, &paths[i]);
            int ok = mt.usable && mt.filters == NULL && mt.cond_ok && mt.order_ok &&
                     (p->kind != MK_GET || mt.eq_all);
            if (ok && clean == NULL) {
                clean = &paths[i];
                cm = mt;
            }
        }
        const char *why;
        if (hinted) {
            match hm = match_path(r, p, hinted);
            why = !hm.usable
                      ? P("its partition key \"%s\" needs %s, which the pattern is not given",
                          hinted->pk->text, hm.missing ? hm.missing : "a value")
                  : hm.why ? hm.why
                           : "its key does not select the items";
        } else {
            why = P("entity %s writes no keys for it", e->name);
        }
        pl->text = P("index %s does not serve it: %s", p->index, why);
        return add(r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
                   P("pattern %s%s names index %s, which does not serve it: %s", p->name, sentence,
                     p->index, why),
                   "The index a pattern names is the one the application will query; if its keys "
                   "cannot be built from the pattern's values, the application ends up scanning or "
                   "filtering.",
                   clean ? P("drop 'index: %s': %s serves it with %s", p->index,
                             path_name(r, clean), key_condition(r, p, clean, &cm))
                         : propose_index(r, p));
    }
    /* a usable path that needs a filter, or sorting by the application */
    for (size_t i = 0; i < np; i++) {
        match mt = match_path(r, p, &paths[i]);
        if (!mt.usable) continue;
        const char *where = path_name(r, &paths[i]);
        pl->path = paths[i];
        pl->operation = "Query";
        pl->key_condition = key_condition(r, p, &paths[i], &mt);
        const char *prefix = template_head(r, paths[i].sk, mt.prefix_nseg, NULL);
        const char *want_attr = mt.filters && !(p->sk_attr && !mt.cond_ok) ? mt.filters
                                : p->sk_attr && !mt.cond_ok                ? p->sk_attr
                                : p->order_by                              ? p->order_by
                                                                           : mt.filters;
        const char *skn = sk_name(&paths[i]) ? sk_name(&paths[i]) : "the sort key";
        const char *alt =
            e->table->existing
                ? P("(or %s; table %s exists, so an LSI is no longer possible)",
                    propose_index(r, p), e->table->name)
                : P("(or, on the same partition, an LSI with that sort key, which can only "
                    "be created with the table; or %s)",
                    propose_index(r, p));
        if (p->kind == MK_GET && mt.filters == NULL && mt.cond_ok && mt.order_ok) {
            const char *next = mt.range && mt.range->is_var ? mt.range->text : NULL;
            const char *need =
                next ? P("%s, the next component of %s \"%s\", is not given", next, skn,
                         paths[i].sk->text)
                     : P("the given values do not fix the whole %s \"%s\"", skn, paths[i].sk->text);
            pl->text = P("no GetItem on %s: %s", where, need);
            return add(r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
                       P("pattern %s%s is a get, but on %s %s", p->name, sentence, where, need),
                       "GetItem reads one item by its whole primary key; with part of the sort "
                       "key only a Query can find it.",
                       next ? P("give the pattern %s, or make it a query (limit: 1) if any item "
                                "of the partition will do",
                                next)
                            : "give the pattern every attribute of the key, or make it a query "
                              "(limit: 1)");
        }
        if (mt.filters || !mt.cond_ok) {
            pl->text = P("Query %s then filter: %s", where, mt.why);
            return add(
                r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
                P("pattern %s%s needs a filter on %s: %s", p->name, sentence, where, mt.why),
                "A FilterExpression runs after the read: DynamoDB reads and bills every item "
                "in the key range and then discards those that do not match, so cost and "
                "latency grow with the partition, not the result.",
                P("make the sort key continue with the filtered attribute: %s = "
                  "\"%s{%s}...\" %s",
                  skn, prefix, want_attr ? want_attr : "?", alt));
        }
        pl->text = P("Query %s, then sort in the application: %s", where, mt.why);
        return add(
            r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
            P("pattern %s%s cannot be read in order from %s: %s", p->name, sentence, where, mt.why),
            "DynamoDB returns a partition in sort-key order only. Any other order means "
            "reading the whole partition (every page of it) and sorting in the application, "
            "which defeats Limit.",
            P("make the sort key continue with the order attribute: %s = \"%s{%s}...\" %s", skn,
              prefix, want_attr ? want_attr : "?", alt));
    }
    pl->text =
        P("Scan of table %s: no table or index has a partition key built from the given values",
          e->table->name);
    return add(r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
               P("pattern %s%s needs a Scan: no key of %s can be built from what it is given",
                 p->name, sentence, e->name),
               "A Query needs exactly one partition key value. Without one, the only way to answer "
               "is a Scan, which reads the "
               "whole table: its cost and latency grow with the table, not with the result.",
               propose_index(r, p));
}

/* ---- traffic estimates ---- */

static double projected_size(const m_entity *e, const ck_path *path)
{
    if (path->index == NULL || path->index->projection == MP_ALL) return model_item_size(e);
    double keys = 0;
    const m_template *ts[] = {&e->pk, &e->sk, path->pk, path->sk};
    for (size_t t = 0; t < 4; t++)
        for (size_t i = 0; ts[t]->text && i < ts[t]->nseg; i++)
            keys += ts[t]->seg[i].is_var ? model_attr_size(ts[t]->seg[i].attr)
                                         : (double)strlen(ts[t]->seg[i].text);
    keys += 40; /* attribute names */
    if (path->index->projection == MP_INCLUDE)
        for (size_t i = 0; i < path->index->ninclude; i++) {
            const m_attr *a = model_entity_attr(e, path->index->include[i]);
            if (a) keys += model_attr_size(a) + strlen(a->name);
        }
    return keys < model_item_size(e) ? keys : model_item_size(e);
}

/* Estimates use DynamoDB's published units: a read unit is 4 KB (half a unit when eventually
 * consistent), a write unit is 1 KB, and one partition serves at most 3,000 read and 1,000
 * write units per second. The numbers are estimates for a design review, not a capacity
 * planner. */
static double read_units(const ck_plan *pl)
{
    const m_pattern *p = pl->pattern;
    double items = p->kind == MK_GET    ? 1
                   : p->limit > 0       ? p->limit
                   : p->result_size > 0 ? p->result_size
                                        : 1;
    double bytes = items * projected_size(p->entity, &pl->path);
    double units = ceil(bytes / 4096);
    if (units < 1) units = 1;
    return p->consistent ? units : units / 2;
}

static double write_units(double size)
{
    double u = ceil(size / 1024);
    return u < 1 ? 1 : u;
}

/* Share of pattern p's requests that reach the busiest value of template t of entity e: a
 * value the pattern fixes in 'given' takes all of them, else the attribute's hottest share
 * or one over its cardinality. */
static double key_share(const m_pattern *p, const m_entity *e, const m_template *t)
{
    double share = 1;
    for (size_t i = 0; i < t->nseg; i++) {
        if (!t->seg[i].is_var) continue;
        const m_given *g = p ? given(p, t->seg[i].text) : NULL;
        if (g && g->value) continue;
        const m_attr *a = t->seg[i].attr;
        double s = a->hottest > 0 ? a->hottest : 1.0 / fmax(1, var_cardinality(e, a));
        share *= s > 1 ? 1 : s;
    }
    return share;
}

/* Share of pattern p's writes of e that land in a sparse index (its 'when' values hold). */
static double sparse_share(const m_pattern *p, const m_entity *e, const ck_path *path)
{
    double share = 1;
    for (size_t i = 0; path->key && i < path->key->nwhen; i++) {
        const m_given *g = given(p, path->key->when[i].name);
        if (g && g->value) {
            if (strcmp(g->value, path->key->when[i].value) != 0) return 0;
            continue;
        }
        const m_attr *a = model_entity_attr(e, path->key->when[i].name);
        if (a) share *= a->hottest > 0 ? a->hottest : 1.0 / fmax(1, var_cardinality(e, a));
    }
    return share;
}

static int in_names(const char *const *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], name) == 0) return 1;
    return 0;
}

/* Index entries one request of write pattern p rewrites on path for entity e, as DynamoDB
 * counts them: an update that changes an attribute of the index's key deletes the old entry
 * and puts a new one (two writes); one that changes only attributes the index does not
 * project writes nothing there; one that changes a sparse index's 'when' attribute adds or
 * removes the entry. Updates that do not say what they set ('sets') count one write. */
static double index_writes(const m_pattern *p, const ck_path *path)
{
    if (path->index == NULL || p->kind != MK_UPDATE || p->sets == NULL) return 1;
    int key = 0, when = 0, projected = 0;
    for (size_t i = 0; i < p->nsets; i++) {
        const char *a = p->sets[i];
        key |= template_uses(path->pk, path->pk->nseg, a) ||
               (path->sk->text && template_uses(path->sk, path->sk->nseg, a));
        for (size_t w = 0; path->key && w < path->key->nwhen; w++)
            when |= strcmp(path->key->when[w].name, a) == 0;
        projected |= path->index->projection == MP_ALL ||
                     (path->index->projection == MP_INCLUDE &&
                      in_names(path->index->include, path->index->ninclude, a));
    }
    return key ? 2 : when || projected ? 1 : 0;
}

static int writes_entity(const m_pattern *p, const m_entity *e)
{
    if (!is_write(p->kind)) return 0;
    int touches = p->entity == e;
    for (size_t j = 0; j < p->nalso; j++)
        touches |= p->also[j] == e;
    return touches;
}

/* Write units one request of p puts on path for entity e (a transaction bills twice). */
static double pattern_write_units(const m_pattern *p, const m_entity *e, const ck_path *path)
{
    double u = write_units(projected_size(e, path)) * index_writes(p, path);
    if (p->kind == MK_TRANSACTION) u *= 2;
    double in = sparse_share(p, e, path);
    /* changing a 'when' attribute moves the item in or out: one write whatever the share */
    if (path->key && path->key->nwhen && p->kind == MK_UPDATE && p->sets)
        for (size_t i = 0; i < path->key->nwhen; i++)
            if (in_names(p->sets, p->nsets, path->key->when[i].name)) in = 1;
    return u * in;
}

/* Write units per second an entity's writes put on one path (all its partitions). */
static double entity_write_load(const ck_report *r, const m_entity *e, const ck_path *path)
{
    double load = 0;
    for (size_t i = 0; i < r->nplans; i++) {
        const m_pattern *p = r->plans[i].pattern;
        if (p->rps > 0 && writes_entity(p, e)) load += p->rps * pattern_write_units(p, e, path);
    }
    return load;
}

/* ---- rules ---- */

/* Runs fn on every key path (the table's and each index's) of every entity, stopping at
 * the first -1. */
static int each_path(ck_report *r, int (*fn)(ck_report *, const m_entity *, const ck_path *))
{
    const qr_model *m = r->model;
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        ck_path paths[1 + QR_MODEL_MAX_INDEXES];
        size_t np = check_paths(e, paths);
        for (size_t pi = 0; pi < np; pi++)
            if (fn(r, e, &paths[pi])) return -1;
    }
    return 0;
}

/* The shard attribute of a partition-key template, or NULL. */
static const m_attr *shard_var(const m_template *t)
{
    for (size_t i = 0; i < t->nseg; i++)
        if (t->seg[i].is_var && t->seg[i].attr->format == MF_SHARD) return t->seg[i].attr;
    return NULL;
}

static int pk_cardinality(ck_report *r, const m_entity *e, const ck_path *path)
{
    if (path->index && path->index->local) return 0; /* same partition key as the table */
    double share = key_share(NULL, e, path->pk);
    if (share <= 0.02) return 0;
    /* how much traffic the busiest partition carries, if rates are known */
    double wload = entity_write_load(r, e, path), rload = 0;
    int known = 0;
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        if (pl->pattern->rps > 0) known = 1;
        if (pl->served && pl->pattern->entity == e && same_path(&pl->path, path) &&
            is_read(pl->pattern->kind))
            rload += pl->pattern->rps * read_units(pl);
    }
    double hot = fmax(rload * share / CK_PARTITION_RCU, wload * share / CK_PARTITION_WCU);
    char vars[300] = "";
    for (size_t i = 0; i < path->pk->nseg; i++) {
        const m_seg *s = &path->pk->seg[i];
        if (!s->is_var) continue;
        char d[120];
        double c = var_cardinality(e, s->attr);
        if (is_time(s->attr))
            snprintf(d, sizeof d, "%s (a %s: today's traffic all lands on one value)", s->text,
                     model_format_name(s->attr->format));
        else if (c < 1000)
            snprintf(d, sizeof d, "%s (%.0f values)", s->text, c);
        else
            continue;
        if (vars[0]) strncat(vars, ", ", sizeof vars - strlen(vars) - 1);
        strncat(vars, d, sizeof vars - strlen(vars) - 1);
    }
    const char *what = model_template_is_constant(path->pk)
                           ? P("is the constant \"%s\"", path->pk->text)
                       : vars[0] ? P("is built from low-cardinality %s", vars)
                                 : P("has a value that carries %.0f%% of the traffic", share * 100);
    ck_severity sev = (!known || hot > 0.1) ? CK_WARNING : CK_NOTE;
    const char *why = sev == CK_WARNING
                          ? "Throughput is divided by partition and traffic is not: a key "
                            "with few values concentrates "
                            "requests on a few partitions, each capped at 3,000 RCU and "
                            "1,000 WCU per second. Aim for no "
                            "value above 1-2% of the traffic."
                          : P("At the stated rates the busiest partition uses %.1f%% of "
                              "its ceiling, so this is acceptable "
                              "now; it becomes a hot partition if traffic grows.",
                              hot * 100);
    if (add(r, sev, "partition-key-cardinality", P("entity %s on %s", e->name, path_name(r, path)),
            path->pk->pos,
            P("partition key %s = \"%s\" %s; its busiest value would carry %.0f%% of the "
              "traffic",
              pk_name(path), path->pk->text, what, share * 100),
            why,
            rload / CK_PARTITION_RCU > wload / CK_PARTITION_WCU &&
                    model_template_is_constant(&e->sk)
                ? P("reads dominate and each key holds one %s item: cache it (DAX, or the "
                    "application's) or keep replicated copies under a copy suffix, each read "
                    "picking one; write sharding would only multiply the reads",
                    e->name)
            : shard_var(path->pk)
                ? P("add a high-cardinality attribute to the partition key, or raise shards of "
                    "%s (now %d)",
                    shard_var(path->pk)->name, shard_var(path->pk)->shards)
                : P("add a high-cardinality attribute to the partition key, or shard it: "
                    "\"%s#{shard}\" with a shard attribute "
                    "(format shard, shards: N) chosen at write time, and read all N shards",
                    path->pk->text)))
        return -1;
    return 0;
}

static int rule_pk_cardinality(ck_report *r)
{
    return each_path(r, pk_cardinality);
}

/* How the busiest value of path's partition key gets pattern p's share of traffic. */
static const char *heat_cause(ck_report *r, const m_pattern *p, const m_entity *e,
                              const ck_path *path)
{
    char buf[400] = "";
    for (size_t i = 0; i < path->pk->nseg; i++) {
        const m_seg *sg = &path->pk->seg[i];
        if (!sg->is_var) continue;
        const m_given *g = p ? given(p, sg->text) : NULL;
        char d[300];
        if (g && g->value)
            snprintf(d, sizeof d,
                     "pattern %.60s fixes %.40s = %.40s, so all its traffic goes to one key",
                     p->name, sg->text, g->value);
        else if (sg->attr->hottest > 0)
            snprintf(d, sizeof d, "the most common %.40s carries %.0f%% of the traffic (hottest)",
                     sg->text, sg->attr->hottest * 100);
        else if (var_cardinality(e, sg->attr) < 1000)
            snprintf(d, sizeof d, "%.40s has %.0f value%s", sg->text, var_cardinality(e, sg->attr),
                     var_cardinality(e, sg->attr) == 1 ? "" : "s");
        else
            continue;
        if (buf[0]) strncat(buf, "; ", sizeof buf - strlen(buf) - 1);
        strncat(buf, d, sizeof buf - strlen(buf) - 1);
    }
    if (model_template_is_constant(path->pk))
        snprintf(buf, sizeof buf, "the key is the constant \"%s\"", path->pk->text);
    return buf[0] ? P("%s", buf) : NULL;
}

/* The write-sharding fix for a write-hot key: n suffixes, or more of the shard the key has. */
static const char *shard_fix(ck_report *r, const ck_path *path, int n, double wcu, double reads)
{
    const m_attr *sh = shard_var(path->pk);
    if (sh) {
        double total = wcu * sh->shards;
        int want = (int)ceil(total / (CK_PARTITION_WCU / 2));
        if (want <= sh->shards) want = sh->shards * 2;
        return P("raise shards of %s from %d to %d (do not add a second shard variable), which "
                 "spreads the %.0f WCU to about %.0f per shard; every read of the logical "
                 "partition then makes %d Queries instead of %d",
                 sh->name, sh->shards, want, total, total / want, want, sh->shards);
    }
    return P("write sharding: \"%s#{shard}\" with %d suffixes (0..%d) chosen at random or "
             "by hash on write, which spreads the load to about %.0f WCU per shard; the cost "
             "is on reads: every read of the logical partition becomes %d Queries, about %.0f "
             "requests per second instead of %.0f",
             path->pk->text, n, n - 1, wcu / n, n, reads * n, reads);
}

/* Throughput that lands on the busiest partition-key value of one path, from every source:
 * each pattern's rate over the key's cardinality or its hottest share (all of it when the
 * pattern fixes the value in 'given'), and the entity's growth_per_day; against the 1,000
 * WCU and 3,000 RCU one partition serves. The fix follows the cause: write sharding for
 * write heat; for a read-hot item a cache or replicated copies (sharding would multiply the
 * reads). */
static int partition_throughput(ck_report *r, const m_entity *e, const ck_path *path)
{
    if (path->table->cql) return 0; /* DynamoDB's per-partition ceilings */
    double wcu = 0, rcu = 0, reads = 0, top_w = 0, top_r = 0;
    const m_pattern *wp = NULL;
    const ck_plan *rp = NULL;
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        if (p->rps <= 0) continue;
        if (writes_entity(p, e)) {
            double w = p->rps * pattern_write_units(p, e, path) * key_share(p, e, path->pk);
            wcu += w;
            if (w > top_w) top_w = w, wp = p;
        } else if (pl->served && p->entity == e && same_path(&pl->path, path) && is_read(p->kind)) {
            double share = key_share(p, e, path->pk);
            double u = p->rps * read_units(pl) * share / pl->scatter;
            rcu += u;
            reads += p->rps * share;
            if (u > top_r) top_r = u, rp = pl;
        }
    }
    const char *growth = NULL;
    if (e->growth_per_day > 0 && (path->index == NULL || path->index->local)) {
        double g = e->growth_per_day / 86400.0 * write_units(projected_size(e, path));
        if (g > wcu) {
            wcu = g;
            wp = NULL;
            growth =
                P("growth_per_day: %.0f new items a day on the busiest key", e->growth_per_day);
        }
    }
    int wover = wcu > CK_PARTITION_WCU, rover = rcu > CK_PARTITION_RCU;
    double use = fmax(wcu / CK_PARTITION_WCU, rcu / CK_PARTITION_RCU);
    if (use <= 0.5) return 0;
    int write_hot = wcu / CK_PARTITION_WCU >= rcu / CK_PARTITION_RCU;
    const char *cause = growth             ? growth
                        : write_hot && wp  ? heat_cause(r, wp, e, path)
                        : !write_hot && rp ? heat_cause(r, rp->pattern, e, path)
                                           : NULL;
    const char *by = write_hot && wp    ? P(", most of it from pattern %s", wp->name)
                     : !write_hot && rp ? P(", most of it from pattern %s", rp->pattern->name)
                                        : "";
    const char *because = cause ? P(" (%s)", cause) : "";
    int n = (int)ceil(use * 2);
    if (n < 2) n = 2;
    const char *fix;
    if (write_hot) {
        fix = shard_fix(r, path, n, wcu, reads);
    } else if (rp && (rp->sk_whole || rp->pattern->kind == MK_GET)) {
        fix =
            P("one item is read-hot: put a cache in front of it (DAX, or the application's), "
              "or keep %d replicated copies of it (\"%s\" with a copy suffix 0..%d, written "
              "together, each read picking one at random)%s; write sharding would not help: the "
              "item stays one key, and sharding multiplies the reads",
              n, path->pk->text, n - 1,
              rp->pattern->consistent ? ", or read it eventually consistent (half the units)" : "");
    } else {
        fix =
            P("the partition is read-hot: cache the Query's result (DAX, or the "
              "application's)%s, or keep %d replicated copies of the partition (\"%s\" with a "
              "copy suffix, each read picking one); write sharding would spread the items but "
              "make every read %d Queries",
              rp && rp->pattern->consistent ? ", read eventually consistent (half the units)" : "",
              n, path->pk->text, n);
    }
    const char *subject = P("entity %s on %s", e->name, path_name(r, path));
    if (!wover && !rover)
        return add(r, CK_WARNING, "partition-throughput", subject, path->pk->pos,
                   P("the busiest partition of %s = \"%s\" runs at %.0f%% of its ceiling "
                     "(%.0f WCU, %.0f RCU per second%s)%s",
                     pk_name(path), path->pk->text, use * 100, wcu, rcu, by, because),
                   "A partition serves at most 3,000 RCU and 1,000 WCU per second; a burst or "
                   "modest growth will throttle it.",
                   P("before traffic grows: %s", fix));
    return add(r, CK_ERROR, "partition-throughput", subject, path->pk->pos,
               P("the busiest partition of %s = \"%s\" needs %.0f WCU and %.0f RCU per "
                 "second%s, over the per-partition ceiling of %s%s",
                 pk_name(path), path->pk->text, wcu, rcu, by,
                 wover && rover ? "1,000 WCU and 3,000 RCU"
                 : wover        ? "1,000 WCU"
                                : "3,000 RCU",
                 because),
               "A single partition key value lives on one partition, which serves at most "
               "3,000 read units and 1,000 write units per second however much capacity the "
               "table has; beyond that requests are throttled.",
               fix);
}

static int rule_partition_throughput(ck_report *r)
{
    return each_path(r, partition_throughput);
}

static int check_sort_template(ck_report *r, const m_entity *e, const ck_path *path)
{
    const m_template *t = path->sk;
    if (t->text == NULL) return 0;
    char keytype = path->index ? path->index->sk.type : path->table->sk.type;
    int single = t->nseg == 1 && t->seg[0].is_var;
    int last_rank = 0;
    const char *last_name = NULL;
    for (size_t i = 0; i < t->nseg; i++) {
        const m_seg *s = &t->seg[i];
        if (!s->is_var) continue;
        const m_attr *a = s->attr;
        /* CQL clustering columns are typed and sort by their type, not as text */
        const char *why = path->table->cql ? NULL : unsorted_reason(a);
        /* a number part of a multi-attribute key compares as a number */
        if (path->index && path->index->nsk_parts && a->type == MT_NUMBER) why = NULL;
        if (why && !(single && keytype == 'N' && a->type == MT_NUMBER)) {
            /* an error when some pattern ranges or orders on it, a warning otherwise */
            int used = 0;
            for (size_t k = 0; k < r->model->npatterns; k++) {
                const m_pattern *p = &r->model->patterns[k];
                if (p->entity != e) continue;
                if ((p->sk_attr && strcmp(p->sk_attr, a->name) == 0 &&
                     strcmp(p->sk_op, "=") != 0) ||
                    (p->order_by && strcmp(p->order_by, a->name) == 0))
                    used = 1;
            }
            char ex1[64], ex2[64];
            check_example_value(a, 0, ex1, sizeof ex1);
            check_example_value(a, 1, ex2, sizeof ex2);
            const char *fix =
                a->format == MF_DATE
                    ? P("store %s as YYYY-MM-DD (format date with no pattern, or timestamp)",
                        a->name)
                    : P("store %s zero-padded to a fixed width (format zero-padded, width: N)",
                        a->name);
            if (add(r, used ? CK_ERROR : CK_WARNING, "sort-key-order",
                    P("entity %s on %s", e->name, path_name(r, path)), t->pos,
                    P("sort key %s = \"%s\" contains %s, which is %s: \"%s\" and \"%s\" compare as "
                      "text",
                      sk_name(path), t->text, a->name, why, ex1, ex2),
                    "Sort keys compare as UTF-8 bytes. Values that do not sort as text make range "
                    "conditions and "
                    "ScanIndexForward return items in the wrong order, silently: no error, just "
                    "wrong results.",
                    fix))
                return -1;
        }
        int rank = time_rank(a);
        if (rank) {
            if (last_rank > rank) {
                if (add(r, CK_WARNING, "sort-key-order",
                        P("entity %s on %s", e->name, path_name(r, path)), t->pos,
                        P("sort key \"%s\" puts %s before the coarser %s: components run fine to "
                          "coarse",
                          t->text, last_name, a->name),
                        "begins_with only cuts a sort key from the left, so components must run "
                        "coarse to fine "
                        "(year, month, day, time) for a prefix to select a year or a month.",
                        P("reorder the sort key so %s comes before %s", a->name, last_name)))
                    return -1;
            }
            last_rank = rank;
            last_name = a->name;
        }
    }
    return 0;
}

static int rule_sort_order(ck_report *r)
{
    const qr_model *m = r->model;
    if (each_path(r, check_sort_template)) return -1;
    /* ranges and orders on attributes with no meaningful order */
    for (size_t i = 0; i < m->npatterns; i++) {
        const m_pattern *p = &m->patterns[i];
        const char *names[2] = {p->sk_op && strcmp(p->sk_op, "=") && strcmp(p->sk_op, "begins_with")
                                    ? p->sk_attr
                                    : NULL,
                                p->order_by};
        for (int k = 0; k < 2; k++) {
            if (names[k] == NULL) continue;
            const m_attr *a = model_entity_attr(p->entity, names[k]);
            if (a == NULL || unsorted_reason(a))
                continue; /* unsorted ones were reported with their key */
            const char *why = unordered_reason(a);
            if (why == NULL) continue;
            if (add(r, CK_ERROR, "sort-key-order", P("pattern %s", p->name), p->pos,
                    P("pattern %s %s %s, which is %s", p->name,
                      k == 0 ? "ranges over" : "orders by", a->name, why),
                    "A range or an order on a value without a meaningful order returns an "
                    "arbitrary slice.",
                    P("range or order on an ordered attribute (a timestamp, a ULID, a zero-padded "
                      "number) instead of %s",
                      a->name)))
                return -1;
        }
    }
    return 0;
}

/* Days one partition of this key accumulates items for: bounded by its finest time variable. */
static double bucket_days(const m_template *pk)
{
    double d = INFINITY;
    for (size_t i = 0; i < pk->nseg; i++) {
        if (!pk->seg[i].is_var) continue;
        switch (pk->seg[i].attr->format) {
        case MF_YEAR:
            d = fmin(d, 366);
            break;
        case MF_MONTH:
            d = fmin(d, 31);
            break;
        case MF_DATE:
            d = fmin(d, 1);
            break;
        case MF_TIMESTAMP:
        case MF_EPOCH:
            d = fmin(d, 1.0 / 86400);
            break;
        default:
            break;
        }
    }
    return d;
}

/* Same partition-key shape: same literals and variable names. */
static int same_shape(const m_template *a, const m_template *b)
{
    if (a->nseg != b->nseg) return 0;
    for (size_t i = 0; i < a->nseg; i++)
        if (a->seg[i].is_var != b->seg[i].is_var || strcmp(a->seg[i].text, b->seg[i].text) != 0)
            return 0;
    return 1;
}

static int rule_collection_size(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        if (e->table->cql) continue; /* rule_partition_size */
        /* report each collection once, at its first entity */
        int first = 1;
        for (size_t j = 0; j < ei; j++)
            if (m->entities[j].table == e->table && same_shape(&m->entities[j].pk, &e->pk))
                first = 0;
        if (!first) continue;
        double bytes = 0, span_days = 0, lsi_bytes = 0;
        int unbounded = 0;
        char members[400] = "";
        for (size_t j = ei; j < m->nentities; j++) {
            const m_entity *o = &m->entities[j];
            if (o->table != e->table || !same_shape(&o->pk, &e->pk) || o->growth_per_day <= 0)
                continue;
            double keep = o->retention_days > 0 ? o->retention_days : HORIZON_DAYS;
            if (o->retention_days <= 0) unbounded = 1;
            double days = fmin(keep, bucket_days(&o->pk));
            span_days = fmax(span_days, days);
            bytes += o->growth_per_day * model_item_size(o) * days;
            /* LSI entries count toward the 10 GB: projected attributes, both keys and 100
             * bytes of overhead each */
            for (size_t k = 0; k < o->nkeys; k++) {
                if (!o->keys[k].index->local) continue;
                ck_path lp = {o->table, o->keys[k].index, &o->pk, &o->keys[k].sk, &o->keys[k]};
                lsi_bytes += o->growth_per_day * days * (projected_size(o, &lp) + 100);
            }
            if (members[0]) strncat(members, ", ", sizeof members - strlen(members) - 1);
            strncat(members, o->name, sizeof members - strlen(members) - 1);
        }
        bytes += lsi_bytes;
        if (bytes <= CK_COLLECTION_LIMIT) continue;
        int has_lsi = 0;
        for (size_t i = 0; i < e->table->nidx; i++)
            has_lsi |= e->table->idx[i].local;
        double per_day = bytes / span_days;
        const char *bucket = per_day * 31 < CK_COLLECTION_LIMIT * 0.5 ? "month"
                             : per_day < CK_COLLECTION_LIMIT * 0.5    ? "date"
                                                                      : NULL;
        const char *fix = bucket ? P("bucket the partition by time: \"%s#{%s}\" with a %s "
                                     "attribute (format %s), e.g. \"USER#123#2024-01\"; "
                                     "readers walk buckets newest first",
                                     e->pk.text, bucket, bucket, bucket)
                                 : P("the collection grows faster than 10 GB a day: shard it "
                                     "(\"%s#{shard}\") as well as bucketing by date",
                                     e->pk.text);
        if (add(r, has_lsi ? CK_ERROR : CK_WARNING, "item-collection-size",
                P("collection %s on table %s", e->pk.text, e->table->name), e->pk.pos,
                P("item collection \"%s\" (%s) reaches %.1f GB%s in %.0f days%s", e->pk.text,
                  members, bytes / 1073741824.0,
                  lsi_bytes > 0 ? P(" (%.1f GB of it LSI entries)", lsi_bytes / 1073741824.0) : "",
                  span_days,
                  unbounded && span_days >= HORIZON_DAYS
                      ? " and has no retention: it grows without bound"
                      : ""),
                has_lsi ? "The table has a local secondary index, so each item collection is "
                          "capped at 10 GB: writes past it fail with "
                          "ItemCollectionSizeLimitExceededException."
                        : "Without an LSI there is no hard cap, but one huge collection is one hot "
                          "key range that cannot spread "
                          "its reads, and every Query over it pages through gigabytes.",
                fix))
            return -1;
    }
    return 0;
}

/* "A, B and C" */
static const char *list_names(ck_report *r, const char *const *v, size_t n)
{
    char buf[400] = "";
    for (size_t i = 0; i < n; i++) {
        if (i) strncat(buf, i + 1 == n ? " and " : ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, v[i], sizeof buf - strlen(buf) - 1);
    }
    return P("%s", buf);
}

static int index_costs(ck_report *r, const m_table *t);

static int rule_indexes(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        size_t ng = 0, nl = 0;
        for (size_t i = 0; i < t->nidx; i++) {
            if (t->idx[i].local)
                nl++;
            else
                ng++;
        }
        if (ng > CK_MAX_GSI && add(r, CK_ERROR, "index-count", P("table %s", t->name), t->pos,
                                   P("table %s has %zu GSIs; DynamoDB allows 20", t->name, ng),
                                   "The default quota is 20 global secondary indexes per table.",
                                   "overload indexes: give them generic key names (GSI1PK, GSI1SK) "
                                   "and let each entity type populate them"))
            return -1;
        if (nl > CK_MAX_LSI && add(r, CK_ERROR, "index-count", P("table %s", t->name), t->pos,
                                   P("table %s has %zu LSIs; DynamoDB allows 5", t->name, nl),
                                   "A table can have at most 5 local secondary indexes.",
                                   "turn the least-used LSIs into GSIs"))
            return -1;
        for (size_t i = 0; t->existing && i < t->nidx; i++) {
            const m_index *ix = &t->idx[i];
            int had = 0;
            for (size_t k = 0; k < t->nexisting_lsis; k++)
                had |= strcmp(t->existing_lsis[k], ix->name) == 0;
            if (!ix->local || had) continue;
            if (add(r, CK_ERROR, "index-lsi-at-creation", P("index %s", ix->name), ix->pos,
                    P("LSI %s is declared on table %s, which exists already%s: an LSI cannot be "
                      "added to it",
                      ix->name, t->name,
                      t->nexisting_lsis
                          ? P(" with LSIs %s", list_names(r, t->existing_lsis, t->nexisting_lsis))
                          : " without LSIs"),
                    "Local secondary indexes exist only from the table's creation: CreateTable "
                    "takes them, UpdateTable does not, so `model apply` would fail on it.",
                    P("make %s a GSI (eventually consistent reads), or create a new table with "
                      "the LSI and move the items to it; if the table has it already, list it in "
                      "existing: {lsis: [%s]}",
                      ix->name, ix->name)))
                return -1;
        }
        if (index_costs(r, t)) return -1;
    }
    return 0;
}

/* An update pattern of e that changes an attribute of path's key, or NULL. */
static const m_pattern *key_changer(const ck_report *r, const m_entity *e, const ck_path *path)
{
    for (size_t i = 0; i < r->nplans; i++) {
        const m_pattern *p = r->plans[i].pattern;
        if (writes_entity(p, e) && index_writes(p, path) == 2) return p;
    }
    return NULL;
}

/* Write cost of the base table and of each index of t, in WCU/s at the declared rates: an
 * index costing more than the table (an update changing its key is a delete and a put
 * there), and all of them together costing more. */
static int index_costs(ck_report *r, const m_table *t)
{
    const qr_model *m = r->model;
    double base = 0, all_idx = 0;
    int rates = 0;
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        if (e->table != t) continue;
        ck_path bp = {t, NULL, &e->pk, &e->sk, NULL};
        base += entity_write_load(r, e, &bp);
        for (size_t i = 0; i < r->nplans; i++)
            rates |= writes_entity(r->plans[i].pattern, e) && r->plans[i].pattern->rps > 0;
    }
    char each[600] = "";
    for (size_t i = 0; i < t->nidx; i++) {
        const m_index *ix = &t->idx[i];
        double cost = 0, bytes = 0;
        size_t ents = 0;
        char names[300] = "", why2[300] = "";
        for (size_t ei = 0; ei < m->nentities; ei++) {
            const m_entity *e = &m->entities[ei];
            const m_entkey *k = model_entity_key(e, ix);
            if (e->table != t || k == NULL) continue;
            ck_path path = {t, ix, ix->local ? &e->pk : &k->pk, &k->sk, k};
            cost += entity_write_load(r, e, &path);
            bytes = fmax(bytes, projected_size(e, &path));
            ents++;
            if (names[0]) strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, e->name, sizeof names - strlen(names) - 1);
            const m_pattern *kc = key_changer(r, e, &path);
            if (kc && why2[0] == '\0')
                snprintf(why2, sizeof why2,
                         "; pattern %.80s changes its key, which is a delete and a put in the "
                         "index (two writes) per update",
                         kc->name);
        }
        all_idx += cost;
        const char *kind = ix->local ? "LSI" : "GSI";
        if (each[0]) strncat(each, ", ", sizeof each - strlen(each) - 1);
        snprintf(each + strlen(each), sizeof each - strlen(each), "%s %.0f", ix->name, cost);
        int used = 0;
        for (size_t k = 0; k < r->nplans; k++)
            used |= r->plans[k].path.index == ix && r->plans[k].served;
        const char *subject = P("index %s", ix->name);
        if (!used &&
            add(r, CK_WARNING, "index-unused", subject, ix->pos,
                P("%s %s of table %s serves no access pattern", kind, ix->name, t->name),
                ents ? "Every write to an item with the index keys is copied to the index and "
                       "billed again, for no read."
                     : "No entity writes keys for it, so it is empty, and no pattern reads it.",
                rates ? P("remove index %s (saving about %.0f WCU/s), or name the pattern that "
                          "needs it",
                          ix->name, cost)
                      : P("remove index %s, or name the pattern that needs it", ix->name)))
            return -1;
        const char *proj = ix->projection == MP_ALL         ? "all attributes"
                           : ix->projection == MP_KEYS_ONLY ? "keys only"
                                                            : "keys and included attributes";
        if (ents &&
            add(r, CK_NOTE, "index-cost", subject, ix->pos,
                rates ? P("%s %s: %s written for %s, up to %.0f bytes projected per item, about "
                          "%.0f WCU/s against %.0f WCU/s for the base table%s",
                          kind, ix->name, proj, names, bytes, cost, base, why2)
                      : P("%s %s: %s written for %s, up to %.0f bytes projected per item (no "
                          "write pattern declares an rps, so its cost is not estimated)",
                          kind, ix->name, proj, names, bytes),
                "Every base-table write that touches an item with the index keys is replicated "
                "to the index and billed there too (write amplification).",
                ix->projection == MP_ALL
                    ? "project only what the patterns on this index read (keys_only or a list)"
                    : "none: the projection is already limited to what is listed"))
            return -1;
        if (cost > base && base > 0 &&
            add(r, CK_WARNING, "index-cost", subject, ix->pos,
                P("%s %s costs %.0f WCU/s, more than the base table's %.0f WCU/s%s", kind, ix->name,
                  cost, base, why2),
                "An index that costs more to maintain than the table it indexes is usually "
                "projecting too much, indexing items no pattern reads through it, or keyed on an "
                "attribute that changes often.",
                why2[0] ? "key the index on attributes that do not change, or make it sparse "
                          "(keys only while the item is in the state the pattern reads), and "
                          "project fewer attributes"
                        : "project fewer attributes, or make the index sparse (write its keys "
                          "only on the items the pattern needs)"))
            return -1;
    }
    if (base > 0 && all_idx > base && t->nidx > 1 &&
        add(r, CK_WARNING, "index-cost", P("table %s", t->name), t->pos,
            P("the indexes of table %s together cost %.0f WCU/s (%s), more than the table's own "
              "%.0f WCU/s",
              t->name, all_idx, each, base),
            "Each index was added for a locally reasonable reason; together they multiply "
            "every write.",
            "overload one GSI for several patterns, make indexes sparse, or project fewer "
            "attributes"))
        return -1;
    return 0;
}

/* Read units per second a served read plan consumes (a fanned-out Query reads each shard,
 * at least half a unit each). */
static double plan_read_load(const ck_plan *pl)
{
    const m_pattern *p = pl->pattern;
    double per = fmax(read_units(pl), pl->scatter * (p->consistent ? 1 : 0.5));
    return p->rps > 0 ? p->rps * per : 0;
}

/* One provisioned capacity against the load the patterns declare on it. */
static int capacity_finding(ck_report *r, const char *what, const char *subject, m_pos pos,
                            const char *unit, double load, double have, int gsi_writes,
                            const char *table)
{
    if (have <= 0 || load <= 0) return 0;
    if (load > have)
        return add(
            r, CK_ERROR, "provisioned-capacity", subject, pos,
            P("%s is provisioned with %.0f %s, but the patterns declare about %.0f %s per second",
              what, have, unit, load, unit),
            gsi_writes
                ? P("A GSI without the write capacity for its share of the table's writes "
                    "throttles the base table (back-pressure): writes to table %s that touch the "
                    "index fail with ProvisionedThroughputExceededException once the burst "
                    "capacity (300 seconds of unused capacity) is spent.",
                    table)
                : "Provisioned capacity is a ceiling: beyond it requests are throttled once the "
                  "burst capacity (up to 300 seconds of unused capacity) is spent.",
            P("provision at least %.0f %s (with headroom, %.0f), or use on-demand billing", load,
              unit, ceil(load * 1.25)));
    if (load > have * 0.8)
        return add(r, CK_WARNING, "provisioned-capacity", subject, pos,
                   P("%s runs at %.0f%% of its %.0f %s (about %.0f per second): only burst "
                     "capacity would carry a spike",
                     what, load / have * 100, have, unit, load),
                   "Burst capacity keeps up to 300 seconds of unused capacity; a spike longer "
                   "than that, or one after the burst is spent, is throttled.",
                   P("provision about %.0f %s, or enable auto scaling or on-demand billing",
                     ceil(load * 1.25), unit));
    return 0;
}

/* Provisioned tables and GSIs against the declared load: reads (by item size and
 * consistency) and writes of the patterns on the table and its LSIs, which share its
 * capacity, and on each GSI, which has its own. */
static int rule_capacity(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        if (!t->provisioned || t->cql) continue;
        double trcu = 0, twcu = 0;
        double grcu[QR_MODEL_MAX_INDEXES] = {0}, gwcu[QR_MODEL_MAX_INDEXES] = {0};
        for (size_t i = 0; i < r->nplans; i++) {
            const ck_plan *pl = &r->plans[i];
            if (!pl->served || pl->path.table != t || !is_read(pl->pattern->kind)) continue;
            if (pl->path.index && !pl->path.index->local)
                grcu[pl->path.index - t->idx] += plan_read_load(pl);
            else
                trcu += plan_read_load(pl);
        }
        for (size_t ei = 0; ei < m->nentities; ei++) {
            const m_entity *e = &m->entities[ei];
            if (e->table != t) continue;
            ck_path paths[1 + QR_MODEL_MAX_INDEXES];
            size_t np = check_paths(e, paths);
            for (size_t k = 0; k < np; k++) {
                double w = entity_write_load(r, e, &paths[k]);
                if (paths[k].index && !paths[k].index->local)
                    gwcu[paths[k].index - t->idx] += w;
                else
                    twcu += w;
            }
        }
        const char *tw = P("table %s", t->name);
        if (capacity_finding(r, tw, tw, t->pos, "RCU", trcu, t->rcu, 0, t->name) ||
            capacity_finding(r, tw, tw, t->pos, "WCU", twcu, t->wcu, 0, t->name))
            return -1;
        for (size_t i = 0; i < t->nidx; i++) {
            const m_index *ix = &t->idx[i];
            if (ix->local) continue;
            const char *what = P("GSI %s of table %s", ix->name, t->name);
            const char *subject = P("index %s", ix->name);
            if (capacity_finding(r, what, subject, ix->pos, "RCU", grcu[i], ix->rcu, 0, t->name) ||
                capacity_finding(r, what, subject, ix->pos, "WCU", gwcu[i], ix->wcu, 1, t->name))
                return -1;
            /* no declared write rates: the table's own capacity is the best guess of the load */
            if (twcu <= 0 && ix->wcu > 0 && ix->wcu < t->wcu &&
                add(r, CK_WARNING, "provisioned-capacity", subject, ix->pos,
                    P("GSI %s is provisioned with %.0f WCU, less than the table's %.0f, and no "
                      "write pattern declares an rps to show that is enough",
                      ix->name, ix->wcu, t->wcu),
                    "Writes to the table propagate to the index; an index with less write "
                    "capacity than its share of them throttles the base table's writes "
                    "(back-pressure).",
                    P("give the write patterns an rps, or GSI %s at least %.0f write capacity "
                      "units",
                      ix->name, t->wcu)))
                return -1;
        }
    }
    return 0;
}

static const char *upper(ck_report *r, const char *s)
{
    char *u = ck_arena_strdup(&r->arena, s);
    for (char *c = u; c && *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    return u ? u : s;
}

/* An overloaded GSI is safe only while each entity type's partition keys carry a prefix
 * of their own: without one, a department called OPEN lands in the orders' partition. */
static int rule_index_overload(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t ti = 0; ti < m->ntables; ti++) {
        const m_table *t = &m->tables[ti];
        for (size_t i = 0; i < t->nidx; i++) {
            const m_index *ix = &t->idx[i];
            if (ix->local) continue;
            for (size_t a = 0; a < m->nentities; a++) {
                const m_entkey *ka = model_entity_key(&m->entities[a], ix);
                if (m->entities[a].table != t || ka == NULL) continue;
                for (size_t b = a + 1; b < m->nentities; b++) {
                    const m_entkey *kb = model_entity_key(&m->entities[b], ix);
                    if (m->entities[b].table != t || kb == NULL) continue;
                    const char *pa = model_template_prefix(&r->arena, &ka->pk),
                               *pb = model_template_prefix(&r->arena, &kb->pk);
                    if (pa == NULL || pb == NULL) return -1;
                    size_t la = strlen(pa), lb = strlen(pb);
                    if (strncmp(pa, pb, la < lb ? la : lb) != 0) continue;
                    if (add(r, CK_ERROR, "index-overload", P("index %s", ix->name), ka->pk.pos,
                            P("entities %s and %s share GSI %s, but their partition keys \"%s\" "
                              "and \"%s\" have no distinct prefix",
                              m->entities[a].name, m->entities[b].name, ix->name, ka->pk.text,
                              kb->pk.text),
                            "An overloaded index is safe because every query supplies its entity's "
                            "prefix. Without distinct "
                            "prefixes, values of the two attributes can coincide and a Query on "
                            "one returns items of the other.",
                            P("prefix each entity's index keys with its own tag, e.g. \"%s#...\" "
                              "and \"%s#...\"",
                              upper(r, m->entities[a].name), upper(r, m->entities[b].name))))
                        return -1;
                }
            }
        }
    }
    return 0;
}

static int rule_ttl(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        if (e->retention_days <= 0 || e->table->cql) continue; /* CQL: rule_cql_ttl */
        const char *subject = P("entity %s", e->name);
        if (e->table->ttl == NULL) {
            if (add(r, CK_WARNING, "ttl", subject, e->pos,
                    P("entity %s is kept for %.0f days, but table %s has no TTL attribute", e->name,
                      e->retention_days, e->table->name),
                    "Without TTL the application must find and delete expired items itself: a Scan "
                    "or an index to find them, "
                    "and a write unit per delete. DynamoDB's TTL deletes expired items at no write "
                    "cost.",
                    P("set ttl: expiresAt on table %s and give %s an expiresAt attribute (format "
                      "epoch) = creation + %.0f days",
                      e->table->name, e->name, e->retention_days)))
                return -1;
            continue;
        }
        const m_attr *a = model_entity_attr(e, e->table->ttl);
        if (a == NULL) {
            if (add(r, CK_WARNING, "ttl", subject, e->pos,
                    P("entity %s is kept for %.0f days but has no %s attribute, the TTL attribute "
                      "of table %s",
                      e->name, e->retention_days, e->table->ttl, e->table->name),
                    "TTL only expires items that carry the TTL attribute.",
                    P("give %s an attribute %s (format epoch) set to the expiry time", e->name,
                      e->table->ttl)))
                return -1;
        } else if (a->type != MT_NUMBER) {
            if (add(r, CK_ERROR, "ttl", subject, a->pos,
                    P("TTL attribute %s of entity %s is a %s; TTL needs a number of seconds since "
                      "the epoch",
                      a->name, e->name, model_type_name(a->type)),
                    "DynamoDB ignores TTL attributes that are not Numbers holding epoch seconds: "
                    "the items never expire.",
                    P("make %s format epoch", a->name)))
                return -1;
        }
    }
    return 0;
}

/* Deletes by the application cost a write unit each (and become tombstones in Cassandra);
 * when items leave by age, TTL removes them for nothing. */
static int rule_ttl_deletes(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t i = 0; i < m->npatterns; i++) {
        const m_pattern *p = &m->patterns[i];
        const m_entity *e = p->entity;
        if (p->kind != MK_DELETE || e->retention_days > 0 || e->table->cql) continue;
        if (e->table->ttl && model_entity_attr(e, e->table->ttl)) continue;
        if (add(r, CK_NOTE, "ttl", P("pattern %s", p->name), p->pos,
                P("pattern %s deletes %s items one by one%s", p->name, e->name,
                  p->rps > 0 ? P(" (%.0f per second, %.0f WCU/s)", p->rps,
                                 p->rps * write_units(model_item_size(e)))
                             : ""),
                "Each DeleteItem is a billed write, and in Cassandra or ScyllaDB a tombstone that "
                "slows reads until "
                "compaction. Items that leave because of their age are better expired by TTL, "
                "which deletes for free.",
                P("if %s items expire by age, give them a retention and an epoch TTL attribute; if "
                  "they are "
                  "'deleted' by users, consider a status update instead",
                  e->name)))
            return -1;
    }
    return 0;
}

static int cross_partition(ck_report *r, const m_pattern *p);
static int cql_aggregate_in_partition(ck_report *r, const m_pattern *p);

static int rule_aggregates(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t i = 0; i < m->npatterns; i++) {
        const m_pattern *p = &m->patterns[i];
        if (p->aggregate == NULL || p->entity->counter || cross_partition(r, p)) continue;
        if (p->entity->table->cql) {
            if (cql_aggregate_in_partition(r, p)) return -1;
            continue;
        }
        double items = p->result_size > 0 ? p->result_size : 0;
        /* reading more than a thousand items a second to recompute one number is an error */
        ck_severity sev = items * (p->rps > 0 ? p->rps : 1) > 1000 ? CK_ERROR : CK_WARNING;
        if (add(r, sev, "aggregate-by-query", P("pattern %s", p->name), p->pos,
                P("pattern %s computes a %s over %s items by reading them%s", p->name, p->aggregate,
                  p->entity->name, items > 0 ? P(" (about %.0f per request)", items) : ""),
                "DynamoDB has no COUNT or SUM: an aggregate is computed by reading every item it "
                "covers, so its cost grows "
                "with the data. Keep it in a counter item instead.",
                P("add a counter entity (counter: true) in the same item collection, e.g. sk "
                  "\"COUNT#%s\", updated with "
                  "ADD in the same transaction as each write of %s, and read it with GetItem",
                  p->entity->name, p->entity->name)))
            return -1;
    }
    for (size_t i = 0; i < m->naggregates; i++) {
        const m_aggregate *g = &m->aggregates[i];
        const char *subject = P("aggregate %s", g->name);
        if (g->counter == NULL) {
            if (add(r, CK_WARNING, "aggregate-by-query", subject, g->pos,
                    P("aggregate %s (%s of %s) has no counter item", g->name, g->function,
                      g->of->name),
                    "Without a counter item the aggregate can only be computed by reading every "
                    "item.",
                    P("name a counter entity for %s and update it with ADD when %s items are "
                      "written",
                      g->name, g->of->name)))
                return -1;
        } else if (g->strategy == MS_NONE) {
            if (add(r, CK_WARNING, "aggregate-by-query", subject, g->pos,
                    P("aggregate %s names counter %s but not how it is kept current", g->name,
                      g->counter->name),
                    "A counter that is not updated on the same path as the items drifts.",
                    "strategy: same-transaction (TransactWriteItems with the item and an ADD on "
                    "the counter), or stream"))
                return -1;
        }
    }
    return 0;
}

/* A copy's source item must be findable from the copy: every variable of the source's
 * key templates given by an attribute of the copy's entity (copy_key's, or the one of the
 * same name), or nothing can tell which item the copy came from. */
static int source_key_check(ck_report *r, const m_entity *e, const m_attr *a, const char *self)
{
    const m_entity *src = a->copy_entity;
    if (src == NULL) return 0;
    const m_template *ts[2] = {&src->pk, &src->sk};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < ts[t]->nseg; i++) {
            const m_seg *sg = &ts[t]->seg[i];
            if (!sg->is_var || model_copy_key_attr(e, a, sg->text)) continue;
            if (add(r, CK_ERROR, "denormalised-source-key", P("attribute %s", self), a->pos,
                    P("%s is a copy of %s, but %s has no attribute giving %s's key variable %s",
                      self, a->copy_of, e->name, src->name, sg->text),
                    "Without the source's key in the copy, nothing can tell which item a copy came "
                    "from: updates cannot find the copies of a source, and quarry reconcile cannot "
                    "compare them.",
                    P("add attribute %s to %s, or copy_key: {%s: ATTRIBUTE} to %s", sg->text,
                      e->name, sg->text, self)))
                return -1;
        }
    return 0;
}

/* The entity of an "Entity.attribute" reference (checked at load). */
static const m_entity *ref_entity(const qr_model *m, const char *ref)
{
    const char *dot = strchr(ref, '.');
    for (size_t i = 0; dot && i < m->nentities; i++)
        if (strlen(m->entities[i].name) == (size_t)(dot - ref) &&
            strncmp(m->entities[i].name, ref, (size_t)(dot - ref)) == 0)
            return &m->entities[i];
    return NULL;
}

/* TransactWriteItems takes at most 100 actions and 4 MB. */
#define CK_TXN_ACTIONS 100.0
#define CK_TXN_BYTES (4.0 * 1024 * 1024)

/* Copies of one source item that a same-transaction update must rewrite: fan_out when the
 * model gives it, else the copies in the source's own item collection (growth_per_day over
 * the retention), else the average (copy count over source count). *basis says which. */
static double fan_out(const ck_report *r, const m_denorm *d, const m_entity *src,
                      const char **basis)
{
    if (d->fan_out > 0) {
        *basis = "fan_out";
        return d->fan_out;
    }
    double fan = 0;
    *basis = NULL;
    for (size_t c = 0; c < d->ncopies; c++) {
        const m_entity *ce = ref_entity(r->model, d->copies[c]);
        if (ce == NULL || ce == src) continue;
        if (ce->growth_per_day > 0 && ce->table == src->table && same_shape(&ce->pk, &src->pk)) {
            fan +=
                ce->growth_per_day * (ce->retention_days > 0 ? ce->retention_days : HORIZON_DAYS);
            *basis = "growth_per_day over the retention";
        } else if (ce->count > 0 && src->count > 0) {
            fan += ce->count / src->count;
            if (*basis == NULL) *basis = "the average, count over count (the busiest has more)";
        }
    }
    return fan;
}

/* A same-transaction copy is only possible while one source change and all its copies fit
 * in one TransactWriteItems. */
static int transaction_fan_out(ck_report *r, const m_denorm *d)
{
    const m_entity *src = ref_entity(r->model, d->source);
    if (src == NULL) return 0;
    const char *basis;
    double fan = fan_out(r, d, src, &basis);
    if (fan <= 0 || basis == NULL) return 0;
    double copy_size = 0;
    for (size_t c = 0; c < d->ncopies; c++) {
        const m_entity *ce = ref_entity(r->model, d->copies[c]);
        if (ce) copy_size = fmax(copy_size, model_item_size(ce));
    }
    double actions = 1 + ceil(fan), bytes = model_item_size(src) + ceil(fan) * copy_size;
    if (actions <= CK_TXN_ACTIONS && bytes <= CK_TXN_BYTES) return 0;
    return add(r, CK_ERROR, "denormalised-update", P("denormalised %s", d->source), d->pos,
               P("%s is kept in the same transaction as its copies, but one %s has about %.0f "
                 "copies (%s): %.0f actions and %.1f MB, over TransactWriteItems' %s",
                 d->source, src->name, ceil(fan), basis, actions, bytes / 1048576.0,
                 actions > CK_TXN_ACTIONS && bytes > CK_TXN_BYTES ? "100 actions and 4 MB"
                 : actions > CK_TXN_ACTIONS                       ? "100 actions"
                                                                  : "4 MB"),
               "A transaction takes at most 100 actions and 4 MB: past that the update of the "
               "source cannot be written at all, not just slowly.",
               P("strategy: stream (DynamoDB Streams and a consumer that rewrites the copies of "
                 "each changed %s) or background-job, with a bound on staleness; or stop copying "
                 "%s and read it from its item",
                 src->name, d->source));
}

static int rule_denormalised(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t i = 0; i < m->ndenorms; i++) {
        const m_denorm *d = &m->denorms[i];
        const char *subject = P("denormalised %s", d->source);
        if (d->strategy == MS_NONE) {
            if (add(r, CK_ERROR, "denormalised-update", subject, d->pos,
                    P("%s is copied to %zu place%s with no update strategy", d->source, d->ncopies,
                      d->ncopies == 1 ? "" : "s"),
                    "No foreign key keeps copies in step: when the source changes, some code path "
                    "must update every copy, or "
                    "old values stay visible indefinitely.",
                    "strategy: same-transaction, stream, background-job, or accepted-staleness "
                    "with a staleness bound"))
                return -1;
        } else if (d->strategy == MS_STALE && d->staleness == NULL) {
            if (add(r, CK_WARNING, "denormalised-update", subject, d->pos,
                    P("%s accepts staleness without saying how much", d->source),
                    "Accepted staleness is a contract: readers need to know how old a copy may be.",
                    "add staleness: e.g. \"1h\""))
                return -1;
        } else if (d->strategy == MS_TRANSACTION) {
            if (transaction_fan_out(r, d)) return -1;
        } else if (d->strategy == MS_JOB) {
            if (add(r, CK_NOTE, "denormalised-update", subject, d->pos,
                    P("%s copies are updated by a background job", d->source),
                    "A job that fails or falls behind leaves copies stale silently: the failure is "
                    "not an error, just old data.",
                    "run a periodic reconciliation comparing the source with its copies"))
                return -1;
        }
    }
    /* attributes that declare themselves copies must be covered */
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        for (size_t ai = 0; ai < e->nattrs; ai++) {
            const m_attr *a = &e->attrs[ai];
            if (a->copy_of == NULL) continue;
            char self[300];
            snprintf(self, sizeof self, "%s.%s", e->name, a->name);
            int covered = 0;
            for (size_t i = 0; i < m->ndenorms; i++)
                for (size_t c = 0; c < m->denorms[i].ncopies; c++)
                    covered |= strcmp(m->denorms[i].copies[c], self) == 0 &&
                               m->denorms[i].strategy != MS_NONE;
            if (!covered && add(r, CK_ERROR, "denormalised-update", P("attribute %s", self), a->pos,
                                P("%s is a copy of %s with no update strategy", self, a->copy_of),
                                "A copied attribute with no documented update path goes stale when "
                                "its source changes.",
                                P("add to denormalised: {source: %s, copies: [%s], strategy: ...}",
                                  a->copy_of, self)))
                return -1;
            if (source_key_check(r, e, a, self)) return -1;
        }
    }
    return 0;
}

static int rule_relational(ck_report *r)
{
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        if (!is_read(p->kind) || p->nalso == 0 || !pl->served) continue;
        for (size_t j = 0; j < p->nalso; j++) {
            const m_entity *o = p->also[j];
            int together = 0;
            ck_path paths[1 + QR_MODEL_MAX_INDEXES];
            size_t np = check_paths(o, paths);
            for (size_t k = 0; k < np; k++)
                if (same_path(&paths[k], &pl->path) && same_shape(paths[k].pk, pl->path.pk))
                    together = 1;
            if (together) continue;
            if (add(r, CK_WARNING, "relational-smell", P("pattern %s", p->name), p->pos,
                    P("pattern %s reads %s and %s, which live in different partitions: two round "
                      "trips and a join in the "
                      "application",
                      p->name, p->entity->name, o->name),
                    "Latency doubles and failures multiply when one request needs two reads; "
                    "single-table design exists to "
                    "turn that join into one Query over one item collection.",
                    P("store %s in the item collection of %s: pk \"%s\" and an sk with its own "
                      "prefix (e.g. \"%s#...\"), so one "
                      "Query on %s returns both",
                      o->name, p->entity->name, pl->path.pk->text, o->name, pl->path.pk->text)))
                return -1;
        }
    }
    return 0;
}

/* A DynamoDB request answers in single-digit milliseconds and returns at most 1 MB per
 * page; a plan that needs more pages or round trips than the budget allows will miss it. */
#define CK_MS_PER_REQUEST 10.0
#define CK_PAGE_BYTES (1024.0 * 1024)

static int rule_latency(ck_report *r)
{
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        if (p->latency_ms <= 0 || !pl->served || !is_read(p->kind)) continue;
        double items = p->kind == MK_GET    ? 1
                       : p->limit > 0       ? p->limit
                       : p->result_size > 0 ? p->result_size
                                            : 1;
        double pages = ceil(items * projected_size(p->entity, &pl->path) / CK_PAGE_BYTES);
        double trips = 1;
        for (size_t j = 0; j < r->nfindings; j++)
            if (strcmp(r->findings[j].rule, "relational-smell") == 0 &&
                strcmp(r->findings[j].subject, P("pattern %s", p->name)) == 0)
                trips++;
        double ms = (pages < 1 ? 1 : pages) * trips * CK_MS_PER_REQUEST;
        if (ms <= p->latency_ms) continue;
        if (add(r, CK_WARNING, "latency-budget", P("pattern %s", p->name), p->pos,
                P("pattern %s has a %.0f ms budget but needs about %.0f request%s in sequence "
                  "(%.0f page%s of up to 1 MB%s), "
                  "about %.0f ms",
                  p->name, p->latency_ms, (pages < 1 ? 1 : pages) * trips,
                  (pages < 1 ? 1 : pages) * trips == 1 ? "" : "s", pages < 1 ? 1 : pages,
                  pages > 1 ? "s" : "", trips > 1 ? ", and a second round trip" : "", ms),
                "A Query returns at most 1 MB per call, and dependent requests run one after "
                "another; each costs "
                "single-digit milliseconds at best.",
                "read less per request (a lower Limit, a projection of the attributes needed, "
                "smaller items), or raise the budget"))
            return -1;
    }
    return 0;
}

/* ---- CQL tables ----
 *
 * A table with a 'cql' section is a Cassandra or ScyllaDB table: its key templates are its
 * partition and clustering columns, a query is served when it restricts the whole partition
 * key and a prefix of the clustering columns, and the checklist adds what the method says of
 * CQL: ALLOW FILTERING is always a red flag, aggregates belong in counter tables, partitions
 * are bucketed before they grow past 100 MB or 100,000 rows, clustering order follows the
 * queries' direction, and rows that leave by age expire by TTL instead of tombstones. */

/* Cassandra's advice for one partition, and the write-ups' hard figure. */
#define CQL_PARTITION_BYTES (100.0 * 1024 * 1024)
#define CQL_PARTITION_ROWS 100000.0
#define CQL_PARTITION_LIMIT (10.0 * 1024 * 1024 * 1024)
/* gc_grace_seconds: how long a tombstone is kept before compaction may drop it */
#define CQL_GC_GRACE_DAYS 10.0
/* deletes per second from which tombstones are a design problem rather than a note */
#define CQL_HIGH_DELETE_RPS 100.0

static int is_cql(const m_pattern *p)
{
    return p->entity->table->cql != NULL;
}

/* " (FILE:LINE:COL: STATEMENT)" when the pattern came from CQL, else "". */
static const char *quoted(ck_report *r, const m_pattern *p)
{
    if (p->statement == NULL) return "";
    return P(" (%s%s%s)", p->source ? p->source : "", p->source ? ": " : "", p->statement);
}

/* The template's variables as a column list: "user_id, month". */
static const char *columns(ck_report *r, const m_template *t, size_t from)
{
    char buf[600] = "";
    for (size_t i = from; t->text && i < t->nseg; i++)
        if (t->seg[i].is_var) {
            if (buf[0]) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
            strncat(buf, t->seg[i].text, sizeof buf - strlen(buf) - 1);
        }
    return P("%s", buf);
}

/* The pattern's WHERE clause as CQL: given columns by equality, then its range. */
static const char *cql_where(ck_report *r, const m_pattern *p)
{
    char buf[800] = "";
    for (size_t i = 0; i < p->ngiven; i++) {
        if (p->sk_attr && strcmp(p->sk_attr, p->given[i].name) == 0) continue;
        size_t l = strlen(buf);
        int in = 0;
        for (size_t k = 0; k < p->nin; k++)
            in |= strcmp(p->in[k], p->given[i].name) == 0;
        if (in)
            snprintf(buf + l, sizeof buf - l, "%s%s IN ?", l ? " AND " : "", p->given[i].name);
        else if (p->given[i].value)
            snprintf(buf + l, sizeof buf - l, "%s%s = '%s'", l ? " AND " : "", p->given[i].name,
                     p->given[i].value);
        else
            snprintf(buf + l, sizeof buf - l, "%s%s = ?", l ? " AND " : "", p->given[i].name);
    }
    if (p->sk_attr) {
        size_t l = strlen(buf);
        if (strcmp(p->sk_op, "between") == 0)
            snprintf(buf + l, sizeof buf - l, "%s%s >= ? AND %s <= ?", l ? " AND " : "", p->sk_attr,
                     p->sk_attr);
        else
            snprintf(buf + l, sizeof buf - l, "%s%s %s ?", l ? " AND " : "", p->sk_attr,
                     strcmp(p->sk_op, "begins_with") == 0 ? ">=" : p->sk_op);
    }
    return P("%s", buf);
}

static int is_indexed(const m_table *t, const char *col)
{
    for (size_t i = 0; t->cql && i < t->cql->nindexes; i++)
        if (strcmp(t->cql->indexes[i], col) == 0) return 1;
    return 0;
}

/* A table keyed by the query, as the method builds one for each access pattern: the
 * given columns as the partition key, the range or order column next, then the entity's
 * own key columns for uniqueness. */
static const char *propose_table(ck_report *r, const m_pattern *p)
{
    const m_entity *e = p->entity;
    char part[400] = "", clus[400] = "", name[200];
    /* orders_by_user asked by status: orders_by_status */
    const char *by = strstr(e->name, "_by_");
    snprintf(name, sizeof name, "%.*s_by", by ? (int)(by - e->name) : (int)strlen(e->name),
             e->name);
    for (size_t i = 0; i < p->ngiven; i++) {
        const char *g = p->given[i].name;
        if (p->sk_attr && strcmp(p->sk_attr, g) == 0) continue;
        if (part[0]) strncat(part, ", ", sizeof part - strlen(part) - 1);
        strncat(part, g, sizeof part - strlen(part) - 1);
        strncat(name, "_", sizeof name - strlen(name) - 1);
        strncat(name, g, sizeof name - strlen(name) - 1);
    }
    const char *next = p->sk_attr ? p->sk_attr : p->order_by;
    if (next) strncat(clus, next, sizeof clus - strlen(clus) - 1);
    const m_template *ts[2] = {&e->pk, &e->sk};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; ts[t]->text && i < ts[t]->nseg; i++) {
            const char *v = ts[t]->seg[i].text;
            if (!ts[t]->seg[i].is_var || given(p, v) || (next && strcmp(next, v) == 0)) continue;
            if (clus[0]) strncat(clus, ", ", sizeof clus - strlen(clus) - 1);
            strncat(clus, v, sizeof clus - strlen(clus) - 1);
        }
    if (part[0] == '\0')
        return P("give the query the columns that identify one partition; a query restricting "
                 "no partition key reads the whole table");
    return P("a table keyed by this query, written beside %s by every write of it (a logged "
             "BATCH): CREATE TABLE %s (... PRIMARY KEY ((%s)%s%s))%s%s%s",
             e->table->name, name, part, clus[0] ? ", " : "", clus,
             next && p->direction < 0 ? " WITH CLUSTERING ORDER BY (" : "",
             next && p->direction < 0 ? next : "", next && p->direction < 0 ? " DESC)" : "");
}

/* True if the pattern reads more than one partition to compute its aggregate. */
static int cross_partition(ck_report *r, const m_pattern *p)
{
    if (p->aggregate == NULL) return 0;
    ck_path paths[1 + QR_MODEL_MAX_INDEXES];
    size_t np = check_paths(p->entity, paths);
    for (size_t i = 0; i < np; i++)
        if (match_path(r, p, &paths[i]).usable) return 0;
    return 1;
}

/* The partition key columns the pattern restricts with IN ("user_id"), or NULL. */
static const char *partition_in(ck_report *r, const m_pattern *p)
{
    char buf[400] = "";
    for (size_t i = 0; i < p->nin; i++)
        if (template_uses(&p->entity->pk, p->entity->pk.nseg, p->in[i])) {
            if (buf[0]) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
            strncat(buf, p->in[i], sizeof buf - strlen(buf) - 1);
        }
    return buf[0] ? P("%s", buf) : NULL;
}

static int plan_cql(ck_report *r, const m_pattern *p, ck_plan *pl)
{
    const m_entity *e = p->entity;
    const m_table *t = e->table;
    ck_path path = {t, NULL, &e->pk, &e->sk, NULL};
    pl->pattern = p;
    pl->path = path;
    pl->scatter = 1;
    pl->forward = p->direction >= 0;
    pl->key_condition = cql_where(r, p);
    const char *subject = P("pattern %s", p->name), *q = quoted(r, p);
    const char *pcols = columns(r, &e->pk, 0);
    match mt = match_path(r, p, &path);
    pl->sk_given = mt.prefix_nseg;
    pl->sk_whole = mt.eq_all;
    if (p->kind == MK_PUT || p->kind == MK_TRANSACTION) {
        pl->served = 1;
        pl->operation = p->kind == MK_PUT ? "INSERT" : "BATCH";
        pl->key_condition = NULL;
        pl->text = p->kind == MK_PUT
                       ? P("INSERT into %s: one row of the partition (%s)", t->name, pcols)
                       : P("logged BATCH of %zu rows", 1 + p->nalso);
        return pl->text ? 0 : -1;
    }
    if (p->kind == MK_UPDATE || p->kind == MK_DELETE) {
        int upd = p->kind == MK_UPDATE;
        pl->operation = upd ? "UPDATE" : "DELETE";
        /* an UPDATE names one row; a DELETE one partition, a clustering range, or a row */
        int ok = mt.usable && mt.filters == NULL &&
                 (upd ? mt.eq_all || (p->static_only && mt.prefix_nseg == 0) : mt.cond_ok);
        if (ok) {
            pl->served = 1;
            pl->text =
                P("%s in one partition of %s: WHERE %s", pl->operation, t->name, pl->key_condition);
            return pl->text ? 0 : -1;
        }
        pl->text = P("%s that does not name %s", pl->operation,
                     upd ? "the whole primary key" : "one partition");
        return add(
            r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
            P("pattern %s%s does not give %s (%s%s%s) of %s%s", p->name, q,
              upd ? "the whole primary key" : "the whole partition key", pcols,
              upd && e->sk.text ? ", " : "", upd ? columns(r, &e->sk, 0) : "", t->name,
              mt.filters ? P("; it restricts %s, which is not a key column", mt.filters) : ""),
            upd ? "Cassandra refuses an UPDATE without every primary key column: it "
                  "writes one row, found by its key, never by a search."
                : "Cassandra refuses a DELETE without the whole partition key, or with "
                  "restrictions on regular columns: it deletes by key, never by search.",
            P("give the statement every %s column, or read the keys first from a table "
              "keyed by what the application knows",
              upd ? "primary key" : "partition key"));
    }
    /* reads */
    const char *order =
        p->order_by ? P(", ORDER BY %s %s", p->order_by, p->direction < 0 ? "DESC" : "ASC") : "";
    const char *limit = p->limit > 0 ? P(", LIMIT %.0f", p->limit) : "";
    if (mt.usable && mt.filters == NULL && mt.cond_ok && mt.order_ok) {
        pl->served = 1;
        pl->operation = "SELECT";
        const char *in = partition_in(r, p);
        const char *from = in ? P("%s, one partition per value of %s", t->name, in)
                              : P("one partition of %s", t->name);
        pl->text = P("SELECT from %s: WHERE %s%s%s%s", from, pl->key_condition, order, limit,
                     p->kind == MK_GET && mt.eq_all ? " (one row)" : "");
        return pl->text ? 0 : -1;
    }
    pl->served = 0;
    pl->operation = "SELECT";
    if (!mt.usable) {
        pl->text = P("SELECT over every partition of %s: the partition key (%s) is not "
                     "restricted",
                     t->name, pcols);
        if (cross_partition(r, p)) return 0; /* rule_cross_partition_aggregate says it */
        const char *indexed = NULL;
        for (size_t i = 0; i < p->ngiven; i++)
            if (is_indexed(t, p->given[i].name)) indexed = p->given[i].name;
        if (indexed)
            return add(r, CK_WARNING, "access-pattern-coverage", subject, p->pos,
                       P("pattern %s%s is served by the secondary index on %s, not by one "
                         "partition: every node of the cluster is asked",
                         p->name, q, indexed),
                       "A Cassandra secondary index is local to each node, so a query by it "
                       "fans out to the whole cluster; its latency grows with the cluster, and "
                       "an index on a high- or low-cardinality column is slow either way.",
                       propose_table(r, p));
        return add(r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
                   P("pattern %s%s does not restrict the whole partition key of %s (%s; "
                     "missing %s): it reads every partition",
                     p->name, q, t->name, pcols, mt.missing ? mt.missing : "?"),
                   "Only the partition key routes a query to one replica set. Without it "
                   "Cassandra must scan every partition of the cluster (it refuses unless ALLOW "
                   "FILTERING is given): cost and latency grow with the table, not with the "
                   "result.",
                   propose_table(r, p));
    }
    if (mt.filters || !mt.cond_ok) {
        const char *next = mt.range ? P(" (%s)", mt.range->text) : "";
        const char *why =
            mt.filters
                ? P("it restricts %s, which is not the next clustering column%s", mt.filters, next)
                : P("its range on %s is not on the next clustering column%s", p->sk_attr, next);
        pl->text = P("SELECT from one partition of %s, filtering: %s", t->name, why);
        return add(r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
                   P("pattern %s%s needs filtering within the partition of %s: %s", p->name, q,
                     t->name, why),
                   "Cassandra serves restrictions on the partition key and on a prefix of the "
                   "clustering columns (the last one may be a range); anything else reads every "
                   "row of the partition and discards what does not match (ALLOW FILTERING).",
                   P("cluster the rows by %s %s (the clustering order cannot be altered: "
                     "%s)",
                     mt.filters ? mt.filters : p->sk_attr,
                     mt.prefix_nseg ? P("after %s", template_head(r, &e->sk, mt.prefix_nseg, NULL))
                                    : "first",
                     propose_table(r, p)));
    }
    pl->text = P("SELECT from one partition of %s, then sort: ORDER BY %s is not the next "
                 "clustering column",
                 t->name, p->order_by);
    return add(r, CK_ERROR, "access-pattern-coverage", subject, p->pos,
               P("pattern %s%s orders by %s, which is not the next clustering column of %s "
                 "(%s)",
                 p->name, q, p->order_by, t->name, columns(r, &e->sk, 0)),
               "A partition is stored in clustering order only: Cassandra refuses ORDER BY on "
               "anything else, and sorting in the application means reading the whole "
               "partition, which defeats LIMIT.",
               propose_table(r, p));
}

static int rule_multi_partition(ck_report *r)
{
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        const char *in = is_cql(p) && pl->served ? partition_in(r, p) : NULL;
        if (in == NULL) continue;
        if (add(r, CK_WARNING, "multi-partition", P("pattern %s", p->name), p->pos,
                P("pattern %s%s restricts the partition key column %s with IN: one partition "
                  "per value, gathered by one coordinator",
                  p->name, quoted(r, p), in),
                "Each value of an IN on the partition key is another partition, often on other "
                "replicas: the coordinator waits for the slowest, holds every result, and the "
                "request fails if any of them does. Each query should be served by one "
                "partition.",
                "run one query per value, in parallel (a token-aware driver sends each to its "
                "replicas), or key a table by what the request knows so that one partition "
                "holds the answer"))
            return -1;
    }
    return 0;
}

static int rule_allow_filtering(ck_report *r)
{
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        if (!p->allow_filtering) continue;
        if (add(r, CK_ERROR, "allow-filtering", P("pattern %s", p->name), p->pos,
                P("pattern %s%s says ALLOW FILTERING%s", p->name, quoted(r, p),
                  pl->served ? ", which the key does not need"
                             : ": Cassandra reads rows it then discards"),
                "ALLOW FILTERING is always a red flag: it silences Cassandra's refusal of a "
                "query that scans (every partition, or a whole partition), so the query works "
                "on test data and times out in production. A query the key serves does not "
                "need it, and keeping it hides the next schema change that makes it scan.",
                pl->served ? "remove ALLOW FILTERING: the partition key and clustering columns "
                             "serve this query"
                           : propose_table(r, p)))
            return -1;
    }
    return 0;
}

static const char *counter_fix(ck_report *r, const m_pattern *p, const char *keys)
{
    const m_entity *e = p->entity;
    if (strcmp(p->aggregate, "min") == 0 || strcmp(p->aggregate, "max") == 0)
        return P("keep the %s in a row written with each write of %s: a table keyed by %s "
                 "clustered by the value %s, read with LIMIT 1",
                 p->aggregate, e->name, keys[0] ? keys : "the group",
                 strcmp(p->aggregate, "max") == 0 ? "DESC" : "ASC");
    if (is_cql(p))
        return P("a counter table: CREATE TABLE %s_counts (%s, total counter, PRIMARY KEY "
                 "(%s)), incremented with UPDATE %s_counts SET total = total + %s WHERE ... "
                 "beside each write of %s, and read with one SELECT",
                 e->name, keys[0] ? keys : "bucket text", keys[0] ? keys : "bucket", e->name,
                 strcmp(p->aggregate, "count") == 0 ? "1" : "?", e->name);
    return P("a counter item (counter: true) keyed by %s, updated with ADD in the same "
             "transaction as each write of %s, and read with GetItem",
             keys[0] ? keys : "a constant key", e->name);
}

static int rule_cross_partition_aggregate(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t i = 0; i < m->npatterns; i++) {
        const m_pattern *p = &m->patterns[i];
        if (p->entity->counter || !cross_partition(r, p)) continue;
        char keys[300] = "";
        for (size_t g = 0; g < p->ngiven; g++) {
            if (keys[0]) strncat(keys, ", ", sizeof keys - strlen(keys) - 1);
            strncat(keys, p->given[g].name, sizeof keys - strlen(keys) - 1);
        }
        if (add(r, CK_ERROR, "cross-partition-aggregate", P("pattern %s", p->name), p->pos,
                P("pattern %s%s computes %s over %s without its whole partition key: it reads "
                  "every partition",
                  p->name, quoted(r, p), p->aggregate, p->entity->name),
                "An aggregate over several partitions is a full scan of the cluster (DynamoDB: "
                "of the table) at every request, and it gets slower as the data grows. The "
                "method pre-computes aggregates in dedicated counter tables, never with "
                "SELECT COUNT(*).",
                counter_fix(r, p, keys)))
            return -1;
    }
    return 0;
}

/* COUNT or SUM within one partition of a CQL table: every row of it is read each time. */
static int cql_aggregate_in_partition(ck_report *r, const m_pattern *p)
{
    double rows = p->result_size > 0 ? p->result_size : 0;
    ck_severity sev = rows * (p->rps > 0 ? p->rps : 1) > 1000 ? CK_ERROR : CK_WARNING;
    char keys[300] = "";
    const m_template *pk = &p->entity->pk;
    snprintf(keys, sizeof keys, "%s", columns(r, pk, 0));
    return add(r, sev, "aggregate-by-query", P("pattern %s", p->name), p->pos,
               P("pattern %s%s computes %s by reading the rows of a partition of %s%s", p->name,
                 quoted(r, p), p->aggregate, p->entity->table->name,
                 rows > 0 ? P(" (about %.0f per request)", rows) : ""),
               "Cassandra computes COUNT and SUM by reading every row they cover, at every "
               "request; a partition that grows makes the query slower. Counters are kept "
               "current on write instead.",
               counter_fix(r, p, keys));
}

/* Days a partition of e accumulates rows for: its TTL or retention, or the span of its
 * time bucket; INFINITY when nothing bounds it. */
static double partition_days(const qr_model *m, const m_entity *e)
{
    double d = bucket_days(&e->pk);
    if (e->retention_days > 0) d = fmin(d, e->retention_days);
    if (e->table->cql->default_ttl_days > 0) d = fmin(d, e->table->cql->default_ttl_days);
    for (size_t i = 0; i < m->npatterns; i++) {
        const m_pattern *p = &m->patterns[i];
        if (p->entity == e && p->ttl_days > 0) d = fmin(d, p->ttl_days);
    }
    return d;
}

/* The partition key's columns without its time buckets: "user_id". */
static const char *untimed_columns(ck_report *r, const m_template *t)
{
    char buf[600] = "";
    for (size_t i = 0; i < t->nseg; i++)
        if (t->seg[i].is_var && !is_time(t->seg[i].attr)) {
            if (buf[0]) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
            strncat(buf, t->seg[i].text, sizeof buf - strlen(buf) - 1);
        }
    return P("%s", buf);
}

static const m_attr *time_clustering(const m_entity *e)
{
    for (size_t i = 0; e->sk.text && i < e->sk.nseg; i++)
        if (e->sk.seg[i].is_var && time_rank(e->sk.seg[i].attr) >= 3) return e->sk.seg[i].attr;
    return NULL;
}

static int rule_partition_size(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        if (e->table->cql == NULL || e->sk.text == NULL) continue;
        double days = partition_days(m, e);
        const m_attr *tc = time_clustering(e);
        const char *pcols = columns(r, &e->pk, 0), *ccols = columns(r, &e->sk, 0);
        const char *subject = P("partition of %s", e->table->name);
        const char *bucket_fix =
            tc ? P("bucket the partition by time: PRIMARY KEY ((%s, month), %s) with month text "
                   "= 'YYYY-MM' of %s (or a day bucket for faster growth), and read the buckets "
                   "newest first; or expire rows with default_time_to_live",
                   untimed_columns(r, &e->pk), ccols, tc->name)
               : P("add a bucket column to the partition key, PRIMARY KEY ((%s, bucket), %s), "
                   "chosen so that each bucket stays under 100 MB",
                   pcols, ccols);
        if (e->growth_per_day <= 0) {
            if (isfinite(days) || tc == NULL) continue;
            if (add(r, CK_NOTE, "partition-size", subject, e->pk.pos,
                    P("partitions of %s (%s) grow with time without bound: rows are clustered "
                      "by %s, and neither a time bucket in the partition key nor a TTL ends a "
                      "partition",
                      e->table->name, pcols, tc->name),
                    "A partition that grows for ever ends up larger than Cassandra's advice "
                    "(100 MB, 100,000 rows) for a busy key: slow reads, compaction and repair. "
                    "Give growth_per_day to check it against the figures.",
                    bucket_fix))
                return -1;
            continue;
        }
        int unbounded = !isfinite(days);
        double span = unbounded ? HORIZON_DAYS : days;
        double rows = e->growth_per_day * span, bytes = rows * model_item_size(e);
        if (bytes <= CQL_PARTITION_BYTES && rows <= CQL_PARTITION_ROWS) continue;
        ck_severity sev = bytes > CQL_PARTITION_LIMIT ? CK_ERROR : CK_WARNING;
        /* the coarsest time bucket that keeps a partition within the advice */
        double per_day = e->growth_per_day * model_item_size(e);
        int month_ok =
            per_day * 31 <= CQL_PARTITION_BYTES && e->growth_per_day * 31 <= CQL_PARTITION_ROWS;
        int day_ok = per_day <= CQL_PARTITION_BYTES && e->growth_per_day <= CQL_PARTITION_ROWS;
        const char *keep = untimed_columns(r, &e->pk);
        const char *fix = bucket_fix;
        if (tc && (month_ok || day_ok))
            fix =
                P("bucket the partition by %s: PRIMARY KEY ((%s%s%s), %s) with %s of %s, and "
                  "read the buckets newest first%s",
                  month_ok ? "month" : "day", keep, keep[0] ? ", " : "", month_ok ? "month" : "day",
                  ccols, month_ok ? "month text = 'YYYY-MM'" : "day date", tc->name,
                  month_ok ? "" : P(" (a month would hold %.0f rows)", e->growth_per_day * 31));
        else if (tc)
            fix = P("one partition grows by %.0f rows (%.0f MB) a day: shard it as well as "
                    "bucketing by day, PRIMARY KEY ((%s%sday, shard), %s), and read every shard",
                    e->growth_per_day, per_day / 1048576.0, keep, keep[0] ? ", " : "", ccols);
        if (add(r, sev, "partition-size", subject, e->pk.pos,
                P("a partition of %s (%s) reaches %.0f rows, %.1f MB, in %.0f days%s",
                  e->table->name, pcols, rows, bytes / 1048576.0, span,
                  unbounded ? " and nothing ends it: it grows without bound" : ""),
                sev == CK_ERROR ? "Past 10 GB one partition is an outage waiting for its busiest "
                                  "key: every read, compaction and repair of it is huge."
                                : "Cassandra's advice keeps a partition under 100 MB and "
                                  "100,000 rows; larger ones make reads, compaction and repair "
                                  "slow and put one hot key range on a few replicas.",
                fix))
            return -1;
    }
    return 0;
}

/* The clustering columns of e's table in order, from index from, with their stored order
 * reversed when flip is set: "sent_at DESC, message_id DESC". */
static const char *order_text(ck_report *r, const m_table *t, int flip)
{
    char buf[600] = "";
    for (size_t i = 0; i < t->cql->norder; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "%s%s %s", l ? ", " : "", t->cql->order[i].column,
                 t->cql->order[i].desc != flip ? "DESC" : "ASC");
    }
    return P("%s", buf);
}

static int rule_clustering_order(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        const m_table *t = p->entity->table;
        if (t->cql == NULL || !pl->served || p->order_by == NULL || p->direction == 0) continue;
        int stored = model_clustering_order(t, p->order_by);
        if (stored == 0 || stored == p->direction) continue;
        /* another query reading the stored order keeps it; then this one wants its own table */
        const m_pattern *other = NULL;
        for (size_t k = 0; k < m->npatterns; k++) {
            const m_pattern *o = &m->patterns[k];
            if (o != p && o->entity == p->entity && o->order_by &&
                strcmp(o->order_by, p->order_by) == 0 && o->direction == stored)
                other = o;
        }
        const char *fix =
            other ? P("pattern %s reads %s in the stored order, so give this query a table of its "
                      "own WITH CLUSTERING ORDER BY (%s), or accept the reversed read",
                      other->name, p->order_by, order_text(r, t, 1))
                  : P("store the partition the way it is read: WITH CLUSTERING ORDER BY (%s) on "
                      "%s (a new table: the order cannot be altered), and drop the ORDER BY",
                      order_text(r, t, 1), t->name);
        if (add(r, CK_WARNING, "clustering-order", P("pattern %s", p->name), p->pos,
                P("pattern %s%s reads %s %s, but %s stores it %s (CLUSTERING ORDER BY (%s))",
                  p->name, quoted(r, p), p->order_by, p->direction < 0 ? "DESC" : "ASC", t->name,
                  stored < 0 ? "DESC" : "ASC", order_text(r, t, 0)),
                "Clustering columns define the order of rows within a partition; a query in the "
                "opposite direction is a reversed read, which Cassandra does more slowly (it "
                "walks each block backwards), and the gap grows with the partition. Design the "
                "clustering order to match the range query's direction.",
                fix))
            return -1;
    }
    return 0;
}

/* Rows of e that expire by TTL: the table's default, or writes USING TTL. */
static int expires(const qr_model *m, const m_entity *e)
{
    if (e->table->cql && e->table->cql->default_ttl_days > 0) return 1;
    for (size_t i = 0; i < m->npatterns; i++) {
        const m_pattern *p = &m->patterns[i];
        if (p->entity == e && (p->ttl_days > 0 || p->ttl_request)) return 1;
    }
    return 0;
}

static int rule_cql_ttl(ck_report *r)
{
    const qr_model *m = r->model;
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        if (e->table->cql == NULL || e->retention_days <= 0 || expires(m, e)) continue;
        if (add(r, CK_WARNING, "ttl", P("entity %s", e->name), e->pos,
                P("rows of %s are kept for %.0f days, but nothing expires them", e->table->name,
                  e->retention_days),
                "Without TTL the application must find and delete old rows itself, and every "
                "delete is a tombstone that reads scan until compaction.",
                P("WITH default_time_to_live = %.0f on %s, or USING TTL %.0f on its INSERTs",
                  e->retention_days * 86400, e->table->name, e->retention_days * 86400)))
            return -1;
    }
    for (size_t i = 0; i < m->npatterns; i++) {
        const m_pattern *p = &m->patterns[i];
        const m_entity *e = p->entity;
        if (p->kind != MK_DELETE || e->table->cql == NULL || expires(m, e)) continue;
        double tombstones = p->rps * 86400 * CQL_GC_GRACE_DAYS;
        ck_severity sev = p->rps >= CQL_HIGH_DELETE_RPS ? CK_WARNING : CK_NOTE;
        if (add(r, sev, "tombstones", P("pattern %s", p->name), p->pos,
                P("pattern %s%s deletes rows of %s, which has no default_time_to_live%s", p->name,
                  quoted(r, p), e->table->name,
                  p->rps > 0 ? P(", at %.0f per second: about %.0f tombstones live at any time "
                                 "(gc_grace_seconds, 10 days)",
                                 p->rps, tombstones)
                             : ""),
                "Every delete writes a tombstone, kept for gc_grace_seconds (10 days) and read "
                "by every query of its partition until compaction drops it; high-velocity "
                "deletes (items removed from a feed, a queue) make reads slow and, past 100,000 "
                "tombstones in one read, fail.",
                P("if rows of %s leave by age, write them USING TTL (or WITH "
                  "default_time_to_live on %s) instead of deleting them; if users remove them, "
                  "mark them with a status update, or move them to an archive table",
                  e->table->name, e->table->name)))
            return -1;
    }
    return 0;
}

/* ---- money ---- */

double check_cost_on_demand(const model_prices *p, double read_units, double write_units)
{
    return p->hours_per_month * 3600 *
           (read_units * p->read_per_million + write_units * p->write_per_million) / 1e6;
}

double check_cost_provisioned(const model_prices *p, double read_units, double write_units)
{
    return p->hours_per_month * (read_units * p->rcu_hour + write_units * p->wcu_hour);
}

/* DynamoDB bills 100 bytes of overhead with every stored item, in tables and indexes. */
#define CK_ITEM_OVERHEAD 100.0

static void cost_add(ck_cost *c, const model_prices *p, double rcu, double wcu, double bytes)
{
    c->read_units += rcu;
    c->write_units += wcu;
    c->on_demand += check_cost_on_demand(p, rcu, wcu);
    c->provisioned += check_cost_provisioned(p, rcu, wcu);
    c->storage_gb += bytes / 1073741824.0;
    c->storage += bytes / 1073741824.0 * p->storage_gb_month;
}

static void cost_sum(ck_cost *into, const ck_cost *c)
{
    into->read_units += c->read_units;
    into->write_units += c->write_units;
    into->on_demand += c->on_demand;
    into->provisioned += c->provisioned;
    into->storage_gb += c->storage_gb;
    into->storage += c->storage;
}

int check_price(ck_report *r, const model_prices *pr)
{
    const qr_model *m = r->model;
    ck_money *mo = ck_arena_alloc(&r->arena, sizeof *mo);
    if (mo == NULL) return -1;
    mo->prices = *pr;
    mo->patterns = ck_arena_alloc(&r->arena, (r->nplans + 1) * sizeof *mo->patterns);
    mo->tables = ck_arena_alloc(&r->arena, (m->ntables + 1) * sizeof *mo->tables);
    if (mo->patterns == NULL || mo->tables == NULL) return -1;
    for (size_t ti = 0; ti < m->ntables; ti++) {
        mo->tables[ti].idx = ck_arena_alloc(&r->arena, (m->tables[ti].nidx + 1) * sizeof(ck_cost));
        if (mo->tables[ti].idx == NULL) return -1;
    }
    /* reads: on the path that serves them */
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        const m_pattern *p = pl->pattern;
        if (!pl->served || !is_read(p->kind) || p->rps <= 0 || pl->path.table->cql) continue;
        ck_table_cost *tc = &mo->tables[pl->path.table - m->tables];
        double rcu = plan_read_load(pl);
        cost_add(pl->path.index ? &tc->idx[pl->path.index - pl->path.table->idx] : &tc->base, pr,
                 rcu, 0, 0);
        cost_add(&mo->patterns[i], pr, rcu, 0, 0);
        mo->priced = 1;
    }
    /* writes: every path of every entity written; items: every path at the entity's count */
    for (size_t ei = 0; ei < m->nentities; ei++) {
        const m_entity *e = &m->entities[ei];
        if (e->table->cql) continue;
        ck_table_cost *tc = &mo->tables[e->table - m->tables];
        ck_path paths[1 + QR_MODEL_MAX_INDEXES];
        size_t np = check_paths(e, paths);
        for (size_t k = 0; k < np; k++) {
            ck_cost *c = paths[k].index ? &tc->idx[paths[k].index - e->table->idx] : &tc->base;
            double items = e->count * (paths[k].index ? sparse_share(NULL, e, &paths[k]) : 1);
            double size = paths[k].index ? projected_size(e, &paths[k]) : model_item_size(e);
            cost_add(c, pr, 0, 0, items * (size + CK_ITEM_OVERHEAD));
            if (e->count > 0) mo->priced = 1;
            for (size_t i = 0; i < r->nplans; i++) {
                const m_pattern *p = r->plans[i].pattern;
                if (p->rps <= 0 || !writes_entity(p, e)) continue;
                double wcu = p->rps * pattern_write_units(p, e, &paths[k]);
                cost_add(c, pr, 0, wcu, 0);
                cost_add(&mo->patterns[i], pr, 0, wcu, 0);
                mo->priced = 1;
            }
        }
    }
    for (size_t ti = 0; ti < m->ntables; ti++) {
        ck_table_cost *tc = &mo->tables[ti];
        cost_sum(&tc->total, &tc->base);
        for (size_t i = 0; i < m->tables[ti].nidx; i++)
            cost_sum(&tc->total, &tc->idx[i]);
        cost_sum(&mo->total, &tc->total);
    }
    r->money = mo;
    return 0;
}

int check_run(const qr_model *m, ck_report **out, qr_err *err)
{
    *out = NULL;
    ck_report *r = calloc(1, sizeof *r);
    if (r == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    r->model = m;
    r->plans = ck_arena_alloc(&r->arena, (m->npatterns + 1) * sizeof *r->plans);
    if (r->plans == NULL) goto oom;
    for (size_t i = 0; i < m->npatterns; i++, r->nplans++)
        if (plan_pattern(r, &m->patterns[i], &r->plans[i])) goto oom;
    if (rule_pk_cardinality(r) || rule_partition_throughput(r) || rule_sort_order(r) ||
        rule_collection_size(r) || rule_indexes(r) || rule_capacity(r) || rule_index_overload(r) ||
        rule_ttl(r) || rule_ttl_deletes(r) || rule_aggregates(r) || rule_denormalised(r) ||
        rule_relational(r) || rule_latency(r) || rule_allow_filtering(r) ||
        rule_multi_partition(r) || rule_cross_partition_aggregate(r) || rule_partition_size(r) ||
        rule_clustering_order(r) || rule_cql_ttl(r))
        goto oom;
    *out = r;
    return 0;
oom:
    check_free(r);
    return err_set(err, QR_E_INTERNAL, "out of memory while checking the model");
}

void check_free(ck_report *r)
{
    if (r == NULL) return;
    ck_arena_free(&r->arena);
    free(r);
}
