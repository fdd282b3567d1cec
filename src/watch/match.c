/* match.c — key values against key templates, reads against planned access patterns,
 * items against entities, values against formats: the pure functions match.h declares.
 * Nothing here allocates or locks; a request's classification is a few string
 * comparisons per pattern of its table. */
#include "watch/match.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *fixed_value(const m_pattern *p, const char *name)
{
    if (p == NULL) return NULL;
    for (size_t i = 0; i < p->ngiven; i++)
        if (p->given[i].value && strcmp(p->given[i].name, name) == 0) return p->given[i].value;
    return NULL;
}

/* The first occurrence of lit (n bytes) in v[from, len), or len when none. */
static size_t find(const char *v, size_t from, size_t len, const char *lit, size_t n)
{
    for (size_t i = from; i + n <= len; i++)
        if (memcmp(v + i, lit, n) == 0) return i;
    return len;
}

int wm_template(const m_template *t, size_t nseg, const m_pattern *p, const char *v, size_t len,
                int whole, wm_span *vars)
{
    if (t == NULL || t->text == NULL || v == NULL) return 0;
    if (nseg > t->nseg) nseg = t->nseg;
    size_t pos = 0;
    for (size_t i = 0; i < nseg; i++) {
        const m_seg *s = &t->seg[i];
        if (!s->is_var) {
            size_t n = strlen(s->text);
            if (pos + n > len || memcmp(v + pos, s->text, n) != 0) return 0;
            pos += n;
            continue;
        }
        const char *fixed = fixed_value(p, s->text);
        size_t end;
        if (fixed) {
            size_t n = strlen(fixed);
            if (pos + n > len || memcmp(v + pos, fixed, n) != 0) return 0;
            end = pos + n;
        } else if (i + 1 < t->nseg && !t->seg[i + 1].is_var) {
            const char *lit = t->seg[i + 1].text;
            end = find(v, pos + 1, len, lit, strlen(lit));
        } else {
            end = len;
        }
        if (end <= pos) return 0; /* a variable is never empty */
        if (vars) vars[i] = (wm_span){v + pos, end - pos};
        pos = end;
    }
    return whole ? pos == len : 1;
}

size_t wm_literal_len(const m_template *t)
{
    size_t n = 0;
    for (size_t i = 0; t && t->text && i < t->nseg; i++)
        if (!t->seg[i].is_var) n += strlen(t->seg[i].text);
    return n;
}

static int same_index(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static int key_matches(const m_template *t, size_t nseg, const m_pattern *p, const wm_value *v,
                       int whole)
{
    return (v->type == 'S' || v->type == 'N') &&
           wm_template(t, nseg, p, v->text, v->len, whole, NULL);
}

/* Whether v is the upper fence of a range on the first nseg segments of sort key t: that
 * prefix with its last character's successor ("MSG$" above every "MSG#..."), the bound
 * check_range_bounds plans a one-sided range with. */
static int is_fence(const m_template *t, size_t nseg, const m_pattern *p, const wm_value *v)
{
    char buf[1024];
    if (v->type != 'S' || v->len == 0 || v->len > sizeof buf) return 0;
    memcpy(buf, v->text, v->len);
    buf[v->len - 1]--;
    return wm_template(t, nseg, p, buf, v->len, 1, NULL);
}

/* The sort-key part of wm_read_differs. */
static int sk_differs(const wm_plan *plan, const wm_read *r)
{
    const m_template *sk = plan->sk;
    const m_pattern *p = plan->p;
    if (sk == NULL || sk->text == NULL) return r->sk != WM_SK_NONE;
    if (!plan->query) return r->sk != WM_SK_EQ || !key_matches(sk, sk->nseg, p, &r->sk1, 1);
    /* a Query reading several entities of one collection: begins_with their common
     * prefix, which this entity's fixed sort-key segments start with */
    if (p->nalso) {
        if (r->sk == WM_SK_NONE) return 0;
        if (r->sk != WM_SK_BEGINS || r->sk1.type == 0) return 1;
        if (wm_template(sk, plan->sk_given, p, r->sk1.text, r->sk1.len, 0, NULL)) return 0;
        size_t lead = 0; /* or the literal text before the first variable */
        while (lead < sk->nseg && !sk->seg[lead].is_var)
            lead++;
        return !(lead && wm_template(sk, lead, p, r->sk1.text, r->sk1.len, 1, NULL));
    }
    if (plan->sk_whole) return r->sk != WM_SK_EQ || !key_matches(sk, sk->nseg, p, &r->sk1, 1);
    int ranged = p->sk_op && strcmp(p->sk_op, "=") != 0;
    if (ranged) {
        wm_sk want = strcmp(p->sk_op, "begins_with") == 0 ? WM_SK_BEGINS : WM_SK_RANGE;
        if (r->sk != want) return 1;
        return !key_matches(sk, plan->sk_given, p, &r->sk1, 0) ||
               (r->sk2.type && !key_matches(sk, plan->sk_given, p, &r->sk2, 0) &&
                !is_fence(sk, plan->sk_given, p, &r->sk2));
    }
    if (plan->sk_given == 0) return r->sk != WM_SK_NONE;
    return r->sk != WM_SK_BEGINS || !key_matches(sk, plan->sk_given, p, &r->sk1, 0);
}

int wm_read_differs(const wm_plan *plan, const wm_read *r)
{
    int diff = 0;
    if (!same_index(plan->index, r->index)) diff |= WM_DIFF_INDEX;
    /* a Query of the whole key reads what GetItem would: the same pattern */
    int as_get = !plan->query && r->query && r->sk == WM_SK_EQ;
    if (plan->query != r->query && !as_get) diff |= WM_DIFF_OPERATION;
    if (!key_matches(plan->pk, plan->pk ? plan->pk->nseg : 0, plan->p, &r->pk, 1))
        diff |= WM_DIFF_PK;
    if (sk_differs(plan, r)) diff |= WM_DIFF_SK;
    if (plan->query && r->query && plan->p->direction != 0 &&
        r->forward != (plan->p->direction > 0))
        diff |= WM_DIFF_DIRECTION;
    return diff;
}

int wm_read_nearness(const wm_plan *plan, const wm_read *r)
{
    int d = wm_read_differs(plan, r);
    return 32 - ((d & WM_DIFF_INDEX) ? 12 : 0) - ((d & WM_DIFF_PK) ? 8 : 0) -
           ((d & WM_DIFF_SK) ? 4 : 0) - ((d & WM_DIFF_OPERATION) ? 2 : 0) -
           ((d & WM_DIFF_DIRECTION) ? 1 : 0);
}

void wm_diff_text(int diff, char *buf, size_t cap)
{
    static const struct {
        int bit;
        const char *text;
    } parts[] = {{WM_DIFF_INDEX, "another index"},
                 {WM_DIFF_OPERATION, "another operation"},
                 {WM_DIFF_PK, "a partition key outside its template"},
                 {WM_DIFF_SK, "another sort-key condition"},
                 {WM_DIFF_DIRECTION, "the other direction"}};
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!(diff & parts[i].bit)) continue;
        int w = snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", parts[i].text);
        if (w > 0) n += (size_t)w;
    }
}

const m_entity *wm_entity_of(const qr_model *m, const m_table *t, const void *item, wm_get_fn get,
                             wm_span *pk_vars, wm_span *sk_vars)
{
    wm_value pk = {0}, sk = {0};
    if (!get(item, t->pk.name, &pk)) return NULL;
    int has_sk = t->sk.name && get(item, t->sk.name, &sk);
    const m_entity *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < m->nentities; i++) {
        const m_entity *e = &m->entities[i];
        if (e->table != t || e->pk.nseg > QR_WM_MAX_SEG || e->sk.nseg > QR_WM_MAX_SEG) continue;
        if (!key_matches(&e->pk, e->pk.nseg, NULL, &pk, 1)) continue;
        if (t->sk.name && (!has_sk || !key_matches(&e->sk, e->sk.nseg, NULL, &sk, 1))) continue;
        size_t len = wm_literal_len(&e->pk) + wm_literal_len(&e->sk);
        if (best == NULL || len > best_len) best = e, best_len = len;
    }
    if (best) {
        wm_template(&best->pk, best->pk.nseg, NULL, pk.text, pk.len, 1, pk_vars);
        if (has_sk && best->sk.text)
            wm_template(&best->sk, best->sk.nseg, NULL, sk.text, sk.len, 1, sk_vars);
    }
    return best;
}

int wm_entity_of_pk_is(const m_entity *e, const m_table *t, const char *index, const wm_value *v,
                       const m_template **tmpl)
{
    const m_index *ix = index ? model_table_index(t, index) : NULL;
    if ((index && ix == NULL) || e->table != t) return 0;
    const m_template *pk = &e->pk;
    if (ix && !ix->local) {
        const m_entkey *k = model_entity_key(e, ix);
        if (k == NULL) return 0;
        pk = &k->pk;
    }
    *tmpl = pk;
    return key_matches(pk, pk->nseg, NULL, v, 1);
}

const m_entity *wm_entity_of_pk(const qr_model *m, const m_table *t, const char *index,
                                const wm_value *v, const m_template **tmpl)
{
    const m_index *ix = index ? model_table_index(t, index) : NULL;
    const m_entity *best = NULL;
    size_t best_len = 0;
    *tmpl = NULL;
    if (index && ix == NULL) return NULL;
    for (size_t i = 0; i < m->nentities; i++) {
        const m_entity *e = &m->entities[i];
        if (e->table != t) continue;
        const m_template *pk = &e->pk;
        if (ix && !ix->local) {
            const m_entkey *k = model_entity_key(e, ix);
            if (k == NULL) continue;
            pk = &k->pk;
        }
        if (!key_matches(pk, pk->nseg, NULL, v, 1)) continue;
        size_t len = wm_literal_len(pk);
        if (best == NULL || len > best_len) best = e, best_len = len, *tmpl = pk;
    }
    return best;
}

/* ---- formats ---- */

static int all_digits(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
}

/* Whether s follows a date pattern: YYYY, MM and DD take that many digits, M and D one
 * or two, every other character itself. */
static int date_follows(const char *pat, const char *s, size_t n)
{
    size_t pos = 0;
    for (const char *c = pat; *c;) {
        size_t run = 1;
        while (c[run] == c[0] && (c[0] == 'Y' || c[0] == 'M' || c[0] == 'D'))
            run++;
        if (c[0] == 'Y' || c[0] == 'M' || c[0] == 'D') {
            size_t lo = run, hi = run == 1 ? 2 : run;
            size_t k = 0;
            while (pos + k < n && k < hi && isdigit((unsigned char)s[pos + k]))
                k++;
            if (k < lo) return 0;
            pos += k;
            c += run;
        } else {
            if (pos >= n || s[pos] != *c) return 0;
            pos++;
            c++;
        }
    }
    return pos == n;
}

/* An ISO-8601 date-time: YYYY-MM-DDTHH:MM, then optional :SS, fraction and zone. */
static int timestamp_follows(const char *s, size_t n)
{
    if (n < 16 || !date_follows("YYYY-MM-DD", s, 10) || (s[10] != 'T' && s[10] != ' ') ||
        !all_digits(s + 11, 2) || s[13] != ':' || !all_digits(s + 14, 2))
        return 0;
    size_t pos = 16;
    if (pos < n && s[pos] == ':') {
        if (pos + 3 > n || !all_digits(s + pos + 1, 2)) return 0;
        pos += 3;
        if (pos < n && s[pos] == '.') {
            size_t k = pos + 1;
            while (k < n && isdigit((unsigned char)s[k]))
                k++;
            if (k == pos + 1) return 0;
            pos = k;
        }
    }
    if (pos == n) return 1;
    if (s[pos] == 'Z') return pos + 1 == n;
    if (s[pos] == '+' || s[pos] == '-')
        return (n - pos == 6 && all_digits(s + pos + 1, 2) && s[pos + 3] == ':' &&
                all_digits(s + pos + 4, 2)) ||
               (n - pos == 5 && all_digits(s + pos + 1, 4));
    return 0;
}

static int hex_run(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i])) return 0;
    return 1;
}

static int is_uuid(const char *s, size_t n)
{
    return n == 36 && hex_run(s, 8) && s[8] == '-' && hex_run(s + 9, 4) && s[13] == '-' &&
           hex_run(s + 14, 4) && s[18] == '-' && hex_run(s + 19, 4) && s[23] == '-' &&
           hex_run(s + 24, 12);
}

static int is_ulid(const char *s, size_t n)
{
    if (n != 26) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = (char)toupper((unsigned char)s[i]);
        if (!isdigit((unsigned char)c) && !(c >= 'A' && c <= 'Z')) return 0;
        if (c == 'I' || c == 'L' || c == 'O' || c == 'U') return 0;
    }
    return 1;
}

static int is_integer(const char *s, size_t n)
{
    if (n && (s[0] == '-' || s[0] == '+')) s++, n--;
    return all_digits(s, n);
}

int wm_format_problem(const m_attr *a, const wm_value *v, char *buf, size_t cap)
{
    int shown = v->len > 40 ? 40 : (int)v->len;
    const char *text = v->text ? v->text : "";
    /* a value from a key template is text whatever the attribute's own type */
    if (v->type == 'N' && a->type == MT_STRING && a->format != MF_PADDED) {
        snprintf(buf, cap, "is the number %.*s, the model says a string", shown, text);
        return 1;
    }
    if (v->type == 'S' && a->type == MT_NUMBER && a->format != MF_EPOCH &&
        a->format != MF_INTEGER && a->format != MF_SHARD) {
        snprintf(buf, cap, "is the string \"%.*s\", the model says a number", shown, text);
        return 1;
    }
    if (v->type != 'S' && v->type != 'N') return 0;
    const char *n = text;
    size_t len = v->len;
    switch (a->format) {
    case MF_PADDED:
        if (len != (size_t)a->width || !all_digits(n, len)) {
            snprintf(buf, cap, "is \"%.*s\", not zero-padded to %d digits", shown, text, a->width);
            return 1;
        }
        return 0;
    case MF_INTEGER:
    case MF_EPOCH:
        if (!is_integer(n, len)) {
            snprintf(buf, cap, "is \"%.*s\", not %s", shown, text,
                     a->format == MF_EPOCH ? "seconds since 1970" : "an integer");
            return 1;
        }
        return 0;
    case MF_SHARD: {
        long s = -1;
        if (len && len < 10 && all_digits(n, len))
            for (size_t i = 0; i < len; i++)
                s = (i ? s : 0) * 10 + (n[i] - '0');
        if (s < 0 || s >= a->shards) {
            snprintf(buf, cap, "is \"%.*s\", not a shard number from 0 to %d", shown, text,
                     a->shards - 1);
            return 1;
        }
        return 0;
    }
    case MF_TIMESTAMP:
        if (!timestamp_follows(n, len)) {
            snprintf(buf, cap, "is \"%.*s\", not an ISO-8601 date-time (2026-03-14T09:14:00Z)",
                     shown, text);
            return 1;
        }
        return 0;
    case MF_DATE: {
        const char *pat = a->pattern ? a->pattern : "YYYY-MM-DD";
        if (!date_follows(pat, n, len)) {
            snprintf(buf, cap, "is \"%.*s\", not a date of the form %s", shown, text, pat);
            return 1;
        }
        return 0;
    }
    case MF_MONTH:
        if (!date_follows("YYYY-MM", n, len)) {
            snprintf(buf, cap, "is \"%.*s\", not a month of the form YYYY-MM", shown, text);
            return 1;
        }
        return 0;
    case MF_YEAR:
        if (!date_follows("YYYY", n, len)) {
            snprintf(buf, cap, "is \"%.*s\", not a four-digit year", shown, text);
            return 1;
        }
        return 0;
    case MF_ENUM:
        for (size_t i = 0; i < a->nvalues; i++)
            if (strlen(a->values[i]) == len && memcmp(a->values[i], n, len) == 0) return 0;
        snprintf(buf, cap, "is \"%.*s\", not one of its %zu declared values", shown, text,
                 a->nvalues);
        return 1;
    case MF_UUID:
        if (!is_uuid(n, len)) {
            snprintf(buf, cap, "is \"%.*s\", not a UUID", shown, text);
            return 1;
        }
        return 0;
    case MF_ULID:
        if (!is_ulid(n, len)) {
            snprintf(buf, cap, "is \"%.*s\", not a ULID (26 characters of Crockford's base 32)",
                     shown, text);
            return 1;
        }
        return 0;
    default:
        return 0;
    }
}
