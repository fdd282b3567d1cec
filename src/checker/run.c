/* run.c — `quarry model check --run`: each access pattern's plan executed on sample data.
 *
 * Sample items are generated from every entity's key templates and attribute formats (a few
 * partitions of a few items each, values from a fixed seed), loaded into a private in-memory
 * database created with the model's tables and indexes through quarry.h, and each pattern's
 * planned GetItem, Query or write is run with values taken from those items. What comes back
 * is compared with what the model declares: only the pattern's entities, only items its
 * values select, in its order, within its limit, with the attributes it reads. Plans come
 * from check.c unchanged; CQL tables and patterns no plan serves are not run. */
#include "checker/run.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checker/keymatch.h"
#include "checker/output.h"
#include "quarry.h"

/* Partitions per entity and items per partition (entities with a constant sort key get one
 * item per partition, twice as many partitions). Counts below these are kept. */
#define RUN_PARTITIONS 3
#define RUN_PER_PARTITION 6
#define RUN_MAX_BIND 32
#define RUN_TEXT 160

/* 2026-01-01T00:00:00Z, the first instant of the sample times. */
#define RUN_EPOCH 1767225600L

typedef struct sval {
    char text[RUN_TEXT];
    double rank; /* the declared order, when ranked */
    int ranked;  /* 0: values order as text */
} sval;

typedef struct sample {
    const m_entity *e;
    int k;
    sval *vals; /* one per attribute of e */
    char pk[2 * RUN_TEXT + 256], sk[2 * RUN_TEXT + 256];
    char name[4 * RUN_TEXT + 520]; /* "pk / sk" (the partition key alone without a sort key) */
    int deleted;
} sample;

typedef struct binding {
    const char *name;
    char value[RUN_TEXT];
} binding;

typedef struct run_ctx {
    const ck_report *r;
    const qr_model *m;
    run_report *out;
    qr_db *db;
    sample *s;
    size_t ns, cap;
    int *count;               /* items generated per entity, in model order */
    const char **table_error; /* per table: why the database refused it, or NULL */
    const char **load_error;  /* per entity: why one of its samples was refused, or NULL */
} run_ctx;

#define A(...) ck_arena_printf(&c->out->arena, __VA_ARGS__)

/* Appends to the text in buf, cut to size. */
static void appendf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
    size_t o = strlen(buf);
    if (o + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + o, size - o, fmt, ap);
    va_end(ap);
}

/* ---- sample values ---- */

/* A fixed permutation of 0..1008 (multiplied by 1009 over the golden ratio, offset by the
 * seed): item order is not value order, nor is it correlated with the parity that picks
 * two-valued attributes. */
static long shuffle(int n)
{
    return ((long)n * 623 + RUN_SEED) % 1009 + 1009L * (n / 1009);
}

/* A number of one, two or three digits by turns, so neighbouring items' numbers sort
 * differently as text (9 after 10) than as numbers. */
static long mixed_width(int n)
{
    long low = n % 3 == 0 ? 1 : n % 3 == 1 ? 10 : 100;
    return low + shuffle(n) * 37 % (9 * low);
}

static unsigned long long mix(unsigned long long x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static unsigned long long name_hash(const char *s, int n)
{
    unsigned long long h = 1469598103934665603ULL ^ (unsigned long long)RUN_SEED;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return mix(h + (unsigned long long)n);
}

static void fill_date(const char *pat, time_t t, char *buf, size_t size)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t o = 0;
    for (const char *s = pat; *s && o + 8 < size;) {
        if (strncmp(s, "YYYY", 4) == 0)
            o += (size_t)snprintf(buf + o, size - o, "%04d", tm.tm_year + 1900), s += 4;
        else if (strncmp(s, "MM", 2) == 0)
            o += (size_t)snprintf(buf + o, size - o, "%02d", tm.tm_mon + 1), s += 2;
        else if (strncmp(s, "DD", 2) == 0)
            o += (size_t)snprintf(buf + o, size - o, "%02d", tm.tm_mday), s += 2;
        else if (*s == 'M')
            o += (size_t)snprintf(buf + o, size - o, "%d", tm.tm_mon + 1), s++;
        else if (*s == 'D')
            o += (size_t)snprintf(buf + o, size - o, "%d", tm.tm_mday), s++;
        else
            buf[o++] = *s++;
    }
    buf[o] = '\0';
}

/* Value n of attribute a: the same for every entity that has an attribute of that name and
 * format, so entities sharing a key variable share item collections. */
static void gen_value(const m_attr *a, int n, sval *v)
{
    static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    long sh = shuffle(n);
    v->ranked = 1;
    v->rank = (double)sh;
    switch (a->format) {
    case MF_TIMESTAMP: {
        time_t t = RUN_EPOCH + sh * 5 * 3600 + n;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(v->text, sizeof v->text, "%Y-%m-%dT%H:%M:%SZ", &tm);
        v->rank = (double)t;
        return;
    }
    case MF_DATE: {
        time_t t = RUN_EPOCH + sh * 3 * 86400;
        fill_date(a->pattern ? a->pattern : "YYYY-MM-DD", t, v->text, sizeof v->text);
        v->rank = (double)t;
        return;
    }
    case MF_MONTH:
        snprintf(v->text, sizeof v->text, "%04ld-%02ld", 2023 + sh % 48 / 12, sh % 12 + 1);
        v->rank = (double)(sh % 48);
        return;
    case MF_YEAR:
        snprintf(v->text, sizeof v->text, "%ld", 1925 + sh);
        return;
    case MF_EPOCH:
        snprintf(v->text, sizeof v->text, "%ld", RUN_EPOCH + sh * 3600);
        v->rank = (double)(RUN_EPOCH + sh * 3600);
        return;
    case MF_PADDED: {
        int w = a->width < 1 ? 1 : a->width > 18 ? 18 : a->width;
        long long mod = 1;
        for (int i = 0; i < w; i++)
            mod *= 10;
        long long x = ((long long)sh * 7919 + n) % mod;
        snprintf(v->text, sizeof v->text, "%0*lld", w, x);
        v->rank = (double)x;
        return;
    }
    case MF_ENUM:
        snprintf(v->text, sizeof v->text, "%s", a->values[(size_t)n % a->nvalues]);
        v->rank = (double)((size_t)n % a->nvalues);
        return;
    case MF_UUID: {
        unsigned long long h1 = name_hash(a->name, n), h2 = mix(h1);
        snprintf(v->text, sizeof v->text, "%08llx-%04llx-4%03llx-a%03llx-%012llx", h1 >> 32,
                 (h1 >> 16) & 0xffff, h1 & 0xfff, (h2 >> 52) & 0xfff, h2 & 0xffffffffffffULL);
        v->ranked = 0;
        return;
    }
    case MF_ULID: {
        unsigned long long ms =
            (unsigned long long)RUN_EPOCH * 1000 + (unsigned long long)sh * 60000;
        unsigned long long h = name_hash(a->name, n);
        for (int i = 9; i >= 0; i--, ms >>= 5)
            v->text[i] = crockford[ms & 31];
        for (int i = 10; i < 26; i++, h = mix(h))
            v->text[i] = crockford[h & 31];
        v->text[26] = '\0';
        return;
    }
    case MF_SHARD:
        snprintf(v->text, sizeof v->text, "%d", a->shards > 0 ? n % a->shards : 0);
        v->rank = a->shards > 0 ? n % a->shards : 0;
        return;
    case MF_INTEGER:
        snprintf(v->text, sizeof v->text, "%ld", mixed_width(n));
        v->rank = (double)mixed_width(n);
        return;
    default:
        break;
    }
    if (a->type == MT_NUMBER) {
        snprintf(v->text, sizeof v->text, "%ld", mixed_width(n));
        v->rank = (double)mixed_width(n);
    } else if (a->type == MT_BOOLEAN) {
        snprintf(v->text, sizeof v->text, "%s", n % 2 ? "false" : "true");
        v->rank = n % 2;
    } else if (a->format == MF_ID) {
        /* userId -> user-101 */
        char stem[64];
        check_id_stem(a->name, stem, sizeof stem);
        snprintf(v->text, sizeof v->text, "%s-%d", stem[0] ? stem : "id", 101 + n);
        v->ranked = 0;
    } else {
        snprintf(v->text, sizeof v->text, "%.60s %03ld", a->name, sh);
        v->ranked = 0;
    }
}

/* The order the model declares for two values of one attribute. */
static int value_cmp(const sval *x, const sval *y)
{
    if (x->ranked && y->ranked) return (x->rank > y->rank) - (x->rank < y->rank);
    return strcmp(x->text, y->text);
}

/* ---- sample items ---- */

static int template_has(const m_template *t, const char *name)
{
    for (size_t i = 0; t->text && i < t->nseg; i++)
        if (t->seg[i].is_var && strcmp(t->seg[i].text, name) == 0) return 1;
    return 0;
}

static size_t template_vars(const m_template *t)
{
    size_t n = 0;
    for (size_t i = 0; t->text && i < t->nseg; i++)
        n += t->seg[i].is_var;
    return n;
}

/* Another entity of e's table keys on a variable of this name: a parent's id (OrderItem's
 * orderId names an Order). */
static int shared_key_name(const qr_model *m, const m_entity *e, const char *name)
{
    for (size_t i = 0; i < m->nentities; i++) {
        const m_entity *o = &m->entities[i];
        if (o == e || o->table != e->table) continue;
        if (template_has(&o->pk, name) || template_has(&o->sk, name)) return 1;
    }
    return 0;
}

/* Which value item k of e gets for attribute a: one per partition for the partition key's
 * variables, two items per value for a parent's id in the sort key, two values in all for
 * a GSI's partition key, else one per item. */
static int value_index(const qr_model *m, const m_entity *e, const m_attr *a, int k, int per)
{
    int p = k / per, o = k % per;
    if (template_has(&e->pk, a->name)) return p;
    size_t nv = template_vars(&e->sk), j = 0;
    for (size_t i = 0; e->sk.text && i < e->sk.nseg; i++) {
        if (!e->sk.seg[i].is_var) continue;
        if (strcmp(e->sk.seg[i].text, a->name) == 0) {
            size_t later = nv - 1 - j;
            if (later > 0 && shared_key_name(m, e, a->name)) return p * per + (o >> later);
            return k;
        }
        j++;
    }
    if (a->format != MF_ENUM && a->type != MT_BOOLEAN && a->format != MF_SHARD)
        for (size_t i = 0; i < e->nkeys; i++)
            if (!e->keys[i].index->local && template_has(&e->keys[i].pk, a->name)) return k % 2;
    return k;
}

/* A GSI partition key that is literal text then the variable named name alone: the text,
 * or NULL when template t is not one. */
static const char *lone_var_prefix(const m_template *t, const char *name)
{
    if (t->text == NULL || t->nseg == 0 || t->nseg > 2) return NULL;
    const m_seg *last = &t->seg[t->nseg - 1];
    if (!last->is_var || strcmp(last->text, name) != 0) return NULL;
    if (t->nseg == 2 && t->seg[0].is_var) return NULL;
    return t->nseg == 2 ? t->seg[0].text : "";
}

/* The attribute of another entity whose values free-text attribute a of e should take: the
 * two write the same GSI with partition keys of the same literal text then one variable
 * (an overloaded index without distinct prefixes), so a department named OPEN shares a
 * partition with the OPEN orders, as it would in production. NULL when there is none. */
static const m_attr *colliding_attr(const qr_model *m, const m_entity *e, const m_attr *a)
{
    if (a->type != MT_STRING || a->format != MF_NONE) return NULL;
    for (size_t i = 0; i < e->nkeys; i++) {
        const m_entkey *k = &e->keys[i];
        const char *pre = k->index->local ? NULL : lone_var_prefix(&k->pk, a->name);
        if (pre == NULL) continue;
        for (size_t j = 0; j < m->nentities; j++) {
            const m_entity *o = &m->entities[j];
            const m_entkey *ok = o == e ? NULL : model_entity_key(o, k->index);
            if (ok == NULL || ok->pk.text == NULL || ok->pk.nseg == 0) continue;
            const m_seg *v = &ok->pk.seg[ok->pk.nseg - 1];
            const char *opre = v->is_var ? lone_var_prefix(&ok->pk, v->text) : NULL;
            const m_attr *oa = opre ? model_entity_attr(o, v->text) : NULL;
            if (oa && strcmp(opre, pre) == 0 && oa->format == MF_ENUM) return oa;
        }
    }
    return NULL;
}

static const sval *sample_val(const sample *s, const char *name)
{
    const m_attr *a = model_entity_attr(s->e, name);
    return a ? &s->vals[a - s->e->attrs] : NULL;
}

static const char *bound_value(const binding *b, size_t nb, const char *name)
{
    for (size_t i = 0; i < nb; i++)
        if (strcmp(b[i].name, name) == 0) return b[i].value;
    return NULL;
}

/* Template t's first n segments with each variable's value: from the bindings first, else
 * from sample s (NULL: none). Returns 0, or -1 when a variable has no value. */
static int expand_n(const m_template *t, size_t n, const sample *s, const binding *b, size_t nb,
                    char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->nseg && i < n; i++) {
        const char *v = t->seg[i].text;
        if (t->seg[i].is_var) {
            v = bound_value(b, nb, t->seg[i].text);
            const sval *sv = v == NULL && s ? sample_val(s, t->seg[i].text) : NULL;
            if (sv) v = sv->text;
            if (v == NULL) return -1;
        }
        int w = snprintf(buf + o, size - o, "%s", v);
        if (w < 0 || (size_t)w >= size - o) return -1;
        o += (size_t)w;
    }
    return 0;
}

static int expand(const m_template *t, const sample *s, char *buf, size_t size)
{
    return expand_n(t, t->nseg, s, NULL, 0, buf, size);
}

static int in_index(const sample *s, const m_entkey *ek)
{
    for (size_t i = 0; ek && i < ek->nwhen; i++) {
        const sval *v = sample_val(s, ek->when[i].name);
        if (v == NULL || strcmp(v->text, ek->when[i].value) != 0) return 0;
    }
    return 1;
}

/* A binary value's bytes are its text, in base64 on the wire (OpenSSL's encoder). */
static json_t *binary(const char *text)
{
    size_t n = strlen(text);
    unsigned char *out = malloc(4 * (n / 3 + 1) + 1);
    if (out == NULL) return NULL;
    EVP_EncodeBlock(out, (const unsigned char *)text, (int)n);
    json_t *v = json_pack("{s:s}", "B", (const char *)out);
    free(out);
    return v;
}

static json_t *typed(char type, const char *text)
{
    if (type == 'B') return binary(text);
    return json_pack("{s:s}", type == 'N' ? "N" : "S", text);
}

/* The text of a returned key attribute (a binary one decoded) in buf, or NULL. */
static const char *returned_key(const json_t *av, char *buf, size_t size)
{
    const char *b64 = json_string_value(json_object_get(av, "B"));
    if (b64 == NULL) return keymatch_scalar(av);
    size_t n = strlen(b64);
    if (n % 4 || n / 4 * 3 >= size) return NULL;
    int len = EVP_DecodeBlock((unsigned char *)buf, (const unsigned char *)b64, (int)n);
    if (len < 0) return NULL;
    while (n && b64[n - 1] == '=')
        n--, len--;
    buf[len] = '\0';
    return buf;
}

/* An attribute's value as DynamoDB JSON. */
static json_t *attr_value(const m_attr *a, const sval *v)
{
    switch (a->type) {
    case MT_NUMBER:
        return json_pack("{s:s}", "N", v->text);
    case MT_BOOLEAN:
        return json_pack("{s:b}", "BOOL", strcmp(v->text, "true") == 0);
    case MT_BINARY:
        return binary(v->text);
    case MT_MAP:
        return json_pack("{s:{s:{s:s}}}", "M", "value", "S", v->text);
    case MT_LIST:
        return json_pack("{s:[{s:s}]}", "L", "S", v->text);
    case MT_SET:
        return json_pack("{s:[s]}", "SS", v->text);
    default:
        return json_pack("{s:s}", "S", v->text);
    }
}

/* Sample s as the item PutItem stores: its attributes, the table's key and each index key
 * it writes (a sparse key only while its 'when' holds). NULL when memory runs out or a key
 * cannot be built. */
static json_t *sample_item(const sample *s)
{
    const m_entity *e = s->e;
    const m_table *t = e->table;
    json_t *item = json_object();
    char buf[2 * RUN_TEXT + 256];
    for (size_t i = 0; item && i < e->nattrs; i++)
        json_object_set_new(item, e->attrs[i].name, attr_value(&e->attrs[i], &s->vals[i]));
    if (item == NULL) return NULL;
    json_object_set_new(item, t->pk.name, typed(t->pk.type, s->pk));
    if (t->sk.name && e->sk.text) json_object_set_new(item, t->sk.name, typed(t->sk.type, s->sk));
    for (size_t i = 0; i < e->nkeys; i++) {
        const m_entkey *k = &e->keys[i];
        const m_index *ix = k->index;
        if (!in_index(s, k)) continue;
        if (!ix->local && ix->npk_parts == 0 && k->pk.text) {
            if (expand(&k->pk, s, buf, sizeof buf)) goto fail;
            json_object_set_new(item, ix->pk.name, typed(ix->pk.type, buf));
        }
        if (ix->sk.name && ix->nsk_parts == 0 && k->sk.text) {
            if (expand(&k->sk, s, buf, sizeof buf)) goto fail;
            json_object_set_new(item, ix->sk.name, typed(ix->sk.type, buf));
        }
    }
    return item;
fail:
    json_decref(item);
    return NULL;
}

static int same_key(char type, const char *a, const char *b)
{
    if (type == 'N') return strtod(a, NULL) == strtod(b, NULL);
    return strcmp(a, b) == 0;
}

static sample *find_sample(run_ctx *c, const m_table *t, const char *pk, const char *sk)
{
    for (size_t i = 0; i < c->ns; i++) {
        sample *s = &c->s[i];
        if (s->e->table != t || !same_key(t->pk.type, s->pk, pk)) continue;
        if (t->sk.name && (sk == NULL || !same_key(t->sk.type, s->sk, sk))) continue;
        return s;
    }
    return NULL;
}

/* Makes item k of entity e (values only; not stored). Returns 0, 1 when its key repeats an
 * earlier sample's, 2 when its key is too long to build, -1 when memory runs out. */
static int make_sample(run_ctx *c, const m_entity *e, int k, int per, sample *out)
{
    out->e = e;
    out->k = k;
    out->deleted = 0;
    out->vals = ck_arena_alloc(&c->out->arena, (e->nattrs + 1) * sizeof *out->vals);
    if (out->vals == NULL) return -1;
    for (size_t i = 0; i < e->nattrs; i++) {
        const m_attr *a = &e->attrs[i], *twin = colliding_attr(c->m, e, a);
        gen_value(twin ? twin : a, value_index(c->m, e, a, k, per), &out->vals[i]);
    }
    out->sk[0] = '\0';
    if (expand(&e->pk, out, out->pk, sizeof out->pk) ||
        (e->sk.text && expand(&e->sk, out, out->sk, sizeof out->sk)))
        return 2;
    snprintf(out->name, sizeof out->name, "%s%s%s", out->pk, e->sk.text ? " / " : "", out->sk);
    return find_sample(c, e->table, out->pk, e->table->sk.name ? out->sk : NULL) ? 1 : 0;
}

static int entity_index(const qr_model *m, const m_entity *e)
{
    return (int)(e - m->entities);
}

static int per_partition(const m_entity *e)
{
    return template_vars(&e->sk) ? RUN_PER_PARTITION : 1;
}

static int generate(run_ctx *c)
{
    for (size_t i = 0; i < c->m->nentities; i++) {
        const m_entity *e = &c->m->entities[i];
        if (e->table->cql) continue;
        int per = per_partition(e);
        int n = per * (per > 1 ? RUN_PARTITIONS : 2 * RUN_PARTITIONS);
        if (e->count >= 1 && e->count < n) n = (int)e->count;
        c->out->entities++;
        for (int k = 0; k < n; k++) {
            if (c->ns == c->cap) {
                size_t cap = c->cap ? 2 * c->cap : 64;
                sample *s = realloc(c->s, cap * sizeof *s);
                if (s == NULL) return -1;
                c->s = s;
                c->cap = cap;
            }
            int rc = make_sample(c, e, k, per, &c->s[c->ns]);
            if (rc < 0) return -1;
            if (rc == 2 && c->load_error[i] == NULL)
                c->load_error[i] =
                    A("the key of a sample item of %s is too long to build", e->name);
            if (rc == 0) c->ns++;
        }
        c->count[i] = n;
    }
    return 0;
}

/* ---- calling the database ---- */

/* Runs one operation; *resp_body a new reference to the parsed response (NULL on error,
 * with *error the error's type and message). */
static int call(run_ctx *c, const char *op, json_t *req, json_t **resp_body, const char **error)
{
    char *body = json_dumps(req, JSON_COMPACT);
    *resp_body = NULL;
    *error = NULL;
    if (body == NULL) return -1;
    qr_response resp;
    int rc = qr_call(c->db, op, body, strlen(body), &resp);
    free(body);
    if (rc != QR_OK) {
        json_t *doc = json_loads(resp.body ? resp.body : "", 0, NULL);
        const char *msg = json_string_value(json_object_get(doc, "message"));
        if (msg == NULL) msg = json_string_value(json_object_get(doc, "Message"));
        *error = A("%s: %s", resp.error_type ? resp.error_type : "error", msg ? msg : "");
        json_decref(doc);
        qr_response_free(&resp);
        return *error ? 1 : -1;
    }
    *resp_body = json_loads(resp.body, 0, NULL);
    qr_response_free(&resp);
    return *resp_body ? 0 : -1;
}

/* Creates the tables and stores the samples. A table the database refuses, or an item,
 * is not an error of the run but of the patterns that need it (table_error, load_error);
 * -1 only when memory runs out or the indexes do not catch up. */
static int load(run_ctx *c, qr_err *err)
{
    for (size_t i = 0; i < c->m->ntables; i++) {
        const m_table *t = &c->m->tables[i];
        if (t->cql) continue;
        json_t *req = model_export_create_table(c->m, t), *resp;
        const char *error;
        if (req == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
        int rc = call(c, "CreateTable", req, &resp, &error);
        json_decref(req);
        json_decref(resp);
        if (rc < 0) return err_set(err, QR_E_INTERNAL, "out of memory");
        if (rc) c->table_error[i] = A("CreateTable of table %s was refused: %s", t->name, error);
    }
    for (size_t i = 0; i < c->ns; i++) {
        const sample *s = &c->s[i];
        size_t ti = (size_t)(s->e->table - c->m->tables), ei = (size_t)entity_index(c->m, s->e);
        if (c->table_error[ti]) continue;
        json_t *item = sample_item(s), *resp = NULL;
        const char *error = "its index keys cannot be built";
        json_t *req =
            item ? json_pack("{s:s,s:o}", "TableName", s->e->table->name, "Item", item) : NULL;
        int rc = req ? call(c, "PutItem", req, &resp, &error) : 1;
        json_decref(req);
        json_decref(resp);
        if (rc < 0) return err_set(err, QR_E_INTERNAL, "out of memory");
        if (rc) {
            if (c->load_error[ei] == NULL)
                c->load_error[ei] =
                    A("sample item %s of %s could not be stored: %s", s->name, s->e->name, error);
            continue;
        }
        c->out->items++;
    }
    if (qr_wait_indexes(c->db, 10000) != QR_OK)
        return err_set(err, QR_E_INTERNAL, "the sample items did not reach the indexes in 10 s");
    return 0;
}

/* ---- reads ---- */

typedef struct expr {
    json_t *names, *values;
    char text[1024];  /* the expression for the request */
    char shown[1536]; /* the same with names and values, for people */
    int n;
} expr;

static const char *placeholder(expr *x, const char *name, char type, const char *value, char *buf,
                               size_t size)
{
    char nk[16], vk[16];
    snprintf(nk, sizeof nk, "#n%d", x->n);
    snprintf(vk, sizeof vk, ":v%d", x->n);
    x->n++;
    json_object_set_new(x->names, nk, json_string(name));
    json_object_set_new(x->values, vk, typed(type, value));
    snprintf(buf, size, "%s %s", nk, vk);
    return buf;
}

/* Adds "NAME OP VALUE" (op "=", "<", …, "begins_with", or "between" with value2). */
static void add_cond(expr *x, const char *name, char type, const char *op, const char *value,
                     const char *value2)
{
    char nv[64], nv2[64];
    placeholder(x, name, type, value, nv, sizeof nv);
    char *vk = strchr(nv, ' ');
    *vk++ = '\0';
    size_t o = strlen(x->text), so = strlen(x->shown);
    const char *and = o ? " AND " : "";
    const char *q = type == 'N' ? "" : "\"";
    if (strcmp(op, "begins_with") == 0) {
        snprintf(x->text + o, sizeof x->text - o, "%sbegins_with(%s, %s)", and, nv, vk);
        snprintf(x->shown + so, sizeof x->shown - so, "%sbegins_with(%s, %s%s%s)", and, name, q,
                 value, q);
    } else if (strcmp(op, "between") == 0) {
        snprintf(nv2, sizeof nv2, ":v%d", x->n++);
        json_object_set_new(x->values, nv2, typed(type, value2));
        snprintf(x->text + o, sizeof x->text - o, "%s%s BETWEEN %s AND %s", and, nv, vk, nv2);
        snprintf(x->shown + so, sizeof x->shown - so, "%s%s BETWEEN %s%s%s AND %s%s%s", and, name,
                 q, value, q, q, value2, q);
    } else {
        snprintf(x->text + o, sizeof x->text - o, "%s%s %s %s", and, nv, op, vk);
        snprintf(x->shown + so, sizeof x->shown - so, "%s%s %s %s%s%s", and, name, op, q, value, q);
    }
}

static char attr_type(const m_attr *a)
{
    return a && a->type == MT_NUMBER ? 'N' : 'S';
}

static int is_range(const m_pattern *p)
{
    return p->sk_attr && strcmp(p->sk_op, "=") != 0;
}

/* The equality prefix of sort-key template sk under the pattern's bindings: segments up to
 * the first variable not bound (or the one the pattern ranges over). */
static size_t eq_prefix(const m_pattern *p, const m_template *sk, const binding *b, size_t nb)
{
    size_t i = 0;
    for (; sk->text && i < sk->nseg; i++) {
        if (!sk->seg[i].is_var) continue;
        if (bound_value(b, nb, sk->seg[i].text) == NULL) break;
        if (is_range(p) && strcmp(sk->seg[i].text, p->sk_attr) == 0) break;
    }
    return i;
}

/* Template text of the first n segments, variables as {name} (a collection's common
 * prefix is found on these, as check.c finds it). */
static void template_text(const m_template *t, size_t n, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < t->nseg && o + 1 < size; i++)
        o += (size_t)snprintf(buf + o, size - o, t->seg[i].is_var ? "{%s}" : "%s", t->seg[i].text);
}

/* {name} placeholders of text replaced by their bound values. */
static void substitute(const char *text, const binding *b, size_t nb, char *buf, size_t size)
{
    size_t o = 0;
    for (const char *s = text; *s && o + 1 < size;) {
        const char *end = *s == '{' ? strchr(s, '}') : NULL;
        if (end) {
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(end - s - 1), s + 1);
            const char *v = bound_value(b, nb, name);
            o += (size_t)snprintf(buf + o, size - o, "%s", v ? v : "");
            s = end + 1;
        } else {
            buf[o++] = *s++;
        }
    }
    buf[o < size ? o : size - 1] = '\0';
}

static int entity_in(const m_pattern *p, const m_entity *e)
{
    if (p->entity == e) return 1;
    for (size_t i = 0; i < p->nalso; i++)
        if (p->also[i] == e) return 1;
    return 0;
}

typedef struct cond {
    const char *attr; /* the ranged attribute, or NULL */
    const char *op;
    sval v1, v2;
} cond;

/* True if sample s is one the pattern's values select. */
static int selected(const m_pattern *p, const sample *s, const binding *b, size_t nb,
                    const cond *cd)
{
    if (s->deleted || !entity_in(p, s->e)) return 0;
    for (size_t i = 0; i < nb; i++) {
        const sval *v = sample_val(s, b[i].name);
        if (v == NULL) {
            if (s->e == p->entity) return 0;
            continue;
        }
        if (strcmp(v->text, b[i].value) != 0) return 0;
    }
    if (cd->attr == NULL) return 1;
    const sval *v = sample_val(s, cd->attr);
    if (v == NULL) return s->e != p->entity;
    int c1 = value_cmp(v, &cd->v1);
    const char *op = cd->op;
    if (strcmp(op, "<") == 0) return c1 < 0;
    if (strcmp(op, "<=") == 0) return c1 <= 0;
    if (strcmp(op, ">") == 0) return c1 > 0;
    if (strcmp(op, ">=") == 0) return c1 >= 0;
    if (strcmp(op, "between") == 0) return c1 >= 0 && value_cmp(v, &cd->v2) <= 0;
    if (strcmp(op, "begins_with") == 0)
        return strncmp(v->text, cd->v1.text, strlen(cd->v1.text)) == 0;
    return c1 == 0;
}

/* The anchor of a pattern: an item of its entity in the middle partition that has the
 * pattern's fixed values (and so is in a sparse index whose 'when' they give). */
static sample *anchor(run_ctx *c, const m_pattern *p, int last)
{
    const m_entity *e = p->entity;
    int n = c->count[entity_index(c->m, e)], per = per_partition(e);
    int start = n > per ? per : 0;
    if (last) start += per - 1 < n - start - 1 ? per - 1 : n - start - 1;
    for (int step = 0; step < n; step++) {
        int k = (start + (last ? n - step : step)) % n;
        for (size_t i = 0; i < c->ns; i++) {
            sample *s = &c->s[i];
            if (s->e != e || s->k != k || s->deleted) continue;
            int ok = 1;
            for (size_t g = 0; g < p->ngiven && ok; g++) {
                const sval *v = sample_val(s, p->given[g].name);
                ok = p->given[g].value == NULL || (v && strcmp(v->text, p->given[g].value) == 0);
            }
            if (ok) return s;
        }
    }
    return NULL;
}

static int cmp_samples(const void *a, const void *b, void *attr)
{
    const sample *x = *(sample *const *)a, *y = *(sample *const *)b;
    return value_cmp(sample_val(x, attr), sample_val(y, attr));
}

/* "4 items: 3 Order, 1 OrderItem" */
static const char *got_text(run_ctx *c, sample **got, size_t n, size_t unknown)
{
    if (n == 0 && unknown == 0) return "no items";
    char buf[600];
    snprintf(buf, sizeof buf, "%zu item%s: ", n + unknown, n + unknown == 1 ? "" : "s");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= got[j]->e == got[i]->e;
        if (seen) continue;
        size_t cnt = 0;
        for (size_t j = i; j < n; j++)
            cnt += got[j]->e == got[i]->e;
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%zu %s", first ? "" : ", ", cnt,
                 got[i]->e->name);
        first = 0;
    }
    if (unknown)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%zu of no entity",
                 first ? "" : ", ", unknown);
    return A("%s", buf);
}

static const char *projection_name(const m_index *ix)
{
    return ix->projection == MP_ALL         ? "all"
           : ix->projection == MP_KEYS_ONLY ? "keys only"
                                            : "a list";
}

/* True if pattern p reads attribute name: one of its 'returns', all without them. */
static int reads_attr(const m_pattern *p, const char *name)
{
    if (p->returns == NULL) return 1;
    for (size_t i = 0; i < p->nreturns; i++)
        if (strcmp(p->returns[i], name) == 0) return 1;
    return 0;
}

/* The attributes of s's entity that returned item lacks: neither stored in it, nor
 * readable from a key template whose key it holds, nor given by the request. */
static const char *lacking(run_ctx *c, const m_pattern *p, const sample *s, const json_t *item,
                           const binding *b, size_t nb)
{
    const m_entity *e = s->e;
    const m_table *t = e->table;
    char buf[600] = "";
    for (size_t i = 0; i < e->nattrs; i++) {
        const char *name = e->attrs[i].name;
        if (json_object_get(item, name) || bound_value(b, nb, name)) continue;
        if (!reads_attr(p, name)) continue;
        int from_key =
            (json_object_get(item, t->pk.name) && template_has(&e->pk, name)) ||
            (t->sk.name && json_object_get(item, t->sk.name) && template_has(&e->sk, name));
        for (size_t k = 0; k < e->nkeys && !from_key; k++) {
            const m_index *ix = e->keys[k].index;
            from_key = (!ix->local && ix->pk.name && json_object_get(item, ix->pk.name) &&
                        template_has(&e->keys[k].pk, name)) ||
                       (ix->sk.name && json_object_get(item, ix->sk.name) &&
                        template_has(&e->keys[k].sk, name));
        }
        if (from_key) continue;
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? ", " : "", name);
    }
    return buf[0] ? A("%s", buf) : NULL;
}

static const char *where_name(run_ctx *c, const ck_path *path)
{
    if (path->index)
        return A("%s %s of table %s", path->index->local ? "LSI" : "GSI", path->index->name,
                 path->table->name);
    return A("table %s", path->table->name);
}

static void set_fail(run_result *res, const char *problem, const char *msg)
{
    if (res->verdict == RUN_FAIL) return; /* the first problem is the one reported */
    res->verdict = RUN_FAIL;
    res->problem = problem;
    res->message = msg;
}

/* The given attributes the path's key does not use: filters of a plan that needs them. */
static int key_uses(const ck_path *path, const m_pattern *p, size_t skn, const char *name)
{
    if (template_has(path->pk, name)) return 1;
    for (size_t i = 0; i < skn && path->sk->text && i < path->sk->nseg; i++)
        if (path->sk->seg[i].is_var && strcmp(path->sk->seg[i].text, name) == 0) return 1;
    if (path->key)
        for (size_t w = 0; w < path->key->nwhen; w++)
            if (strcmp(path->key->when[w].name, name) == 0) return 1;
    (void)p;
    return 0;
}

static int run_read(run_ctx *c, const ck_plan *pl, run_result *res)
{
    const m_pattern *p = pl->pattern;
    const m_entity *e = p->entity;
    const ck_path *path = &pl->path;
    const m_table *t = path->table;
    const m_index *ix = path->index;
    sample *an = anchor(c, p, 0);
    if (an == NULL) {
        res->verdict = RUN_SKIPPED;
        res->message = A("no sample item of %s has the pattern's fixed values", e->name);
        return 0;
    }
    /* the request's values: fixed, else the anchor's */
    binding b[RUN_MAX_BIND];
    size_t nb = 0;
    for (size_t g = 0; g < p->ngiven && nb < RUN_MAX_BIND; g++) {
        if (is_range(p) && strcmp(p->given[g].name, p->sk_attr) == 0) continue;
        const sval *v = sample_val(an, p->given[g].name);
        if (p->given[g].value == NULL && v == NULL) continue;
        b[nb].name = p->given[g].name;
        snprintf(b[nb].value, sizeof b[nb].value, "%s",
                 p->given[g].value ? p->given[g].value : v->text);
        nb++;
    }
    cond cd = {0};
    if (p->sk_attr && !is_range(p) && !bound_value(b, nb, p->sk_attr) && nb < RUN_MAX_BIND) {
        const sval *v = sample_val(an, p->sk_attr);
        if (v) {
            b[nb].name = p->sk_attr;
            snprintf(b[nb].value, sizeof b[nb].value, "%s", v->text);
            nb++;
        }
    }
    if (is_range(p) && sample_val(an, p->sk_attr)) {
        /* a value inside the partition's range: from its sorted values */
        sample **eq = calloc(c->ns + 1, sizeof *eq);
        size_t ne = 0;
        if (eq == NULL) return -1;
        cond none = {0};
        for (size_t i = 0; i < c->ns; i++)
            if (c->s[i].e == e && selected(p, &c->s[i], b, nb, &none)) eq[ne++] = &c->s[i];
        qsort_r(eq, ne, sizeof *eq, cmp_samples, (void *)p->sk_attr);
        cd.attr = p->sk_attr;
        cd.op = p->sk_op;
        size_t i1 = strcmp(cd.op, ">") == 0 || strcmp(cd.op, ">=") == 0 ? (ne - 1) / 2
                    : strcmp(cd.op, "between") == 0                     ? ne / 4
                                                                        : ne / 2;
        size_t i2 = ne * 3 / 4 < ne ? ne * 3 / 4 : ne - 1;
        cd.v1 = *sample_val(ne ? eq[i1] : an, p->sk_attr);
        cd.v2 = *sample_val(ne ? eq[i2] : an, p->sk_attr);
        if (strcmp(cd.op, "begins_with") == 0) cd.v1 = *sample_val(an, p->sk_attr);
        free(eq);
    }

    /* the request */
    json_t *req = json_object();
    expr kx = {.names = json_object(), .values = json_object()};
    expr fx = {.names = kx.names, .values = kx.values};
    if (req == NULL || kx.names == NULL || kx.values == NULL) goto oom;
    json_object_set_new(req, "TableName", json_string(t->name));
    const char *op = pl->operation;
    int get = strcmp(op, "GetItem") == 0;
    char pkv[600], skv[600], tmp[600];
    const m_attr *shard = NULL;
    for (size_t i = 0; i < path->pk->nseg; i++)
        if (path->pk->seg[i].is_var && path->pk->seg[i].attr &&
            path->pk->seg[i].attr->format == MF_SHARD && !bound_value(b, nb, path->pk->seg[i].text))
            shard = path->pk->seg[i].attr;
    int shards = shard && shard->shards > 0 ? shard->shards : 1;
    size_t skn = path->sk->text ? eq_prefix(p, path->sk, b, nb) : 0;
    if (get) {
        if (expand_n(path->pk, path->pk->nseg, NULL, b, nb, pkv, sizeof pkv) ||
            (path->sk->text && expand_n(path->sk, path->sk->nseg, NULL, b, nb, skv, sizeof skv))) {
            res->verdict = RUN_SKIPPED;
            res->message = "the pattern does not give every variable of the key";
            goto done;
        }
        json_t *key = json_object();
        json_object_set_new(key, t->pk.name, typed(t->pk.type, pkv));
        if (path->sk->text) json_object_set_new(key, t->sk.name, typed(t->sk.type, skv));
        json_object_set_new(req, "Key", key);
        if (p->consistent) json_object_set_new(req, "ConsistentRead", json_true());
        res->ran =
            A("GetItem on table %s: Key %s = \"%s\"%s%s%s%s%s", t->name, t->pk.name, pkv,
              path->sk->text ? ", " : "", path->sk->text ? t->sk.name : "",
              path->sk->text ? " = \"" : "", path->sk->text ? skv : "", path->sk->text ? "\"" : "");
    } else {
        if (ix) json_object_set_new(req, "IndexName", json_string(ix->name));
        /* partition key */
        if (ix && ix->npk_parts) {
            for (size_t i = 0; i < ix->npk_parts; i++) {
                const char *v = bound_value(b, nb, ix->pk_parts[i].name);
                add_cond(&kx, ix->pk_parts[i].name, ix->pk_parts[i].type, "=", v ? v : "", NULL);
            }
        } else {
            const char *pkname = ix && !ix->local ? ix->pk.name : t->pk.name;
            char type = ix && !ix->local ? ix->pk.type : t->pk.type;
            if (shard && nb < RUN_MAX_BIND) {
                b[nb].name = shard->name;
                snprintf(b[nb].value, sizeof b[nb].value, "0");
                nb++;
            }
            if (expand_n(path->pk, path->pk->nseg, NULL, b, nb, pkv, sizeof pkv)) {
                res->verdict = RUN_SKIPPED;
                res->message = "the pattern does not give every variable of the partition key";
                goto done;
            }
            add_cond(&kx, pkname, type, "=", pkv, NULL);
        }
        /* sort key */
        const char *skname = ix ? ix->sk.name : t->sk.name;
        if (path->sk->text && ix && ix->nsk_parts) {
            size_t parts = 0;
            for (size_t i = 0; i < path->sk->nseg && parts < ix->nsk_parts; i++) {
                if (!path->sk->seg[i].is_var) continue;
                const char *name = path->sk->seg[i].text;
                char type = ix->sk_parts[parts++].type;
                if (i < skn) {
                    add_cond(&kx, name, type, "=", bound_value(b, nb, name), NULL);
                } else {
                    if (cd.attr && strcmp(cd.attr, name) == 0)
                        add_cond(&kx, name, type, cd.op, cd.v1.text, cd.v2.text);
                    break;
                }
            }
        } else if (path->sk->text && p->nalso && p->kind == MK_QUERY) {
            /* a collection: the sort-key prefix every entity's given part shares */
            char common[600];
            template_text(path->sk, skn, common, sizeof common);
            for (size_t i = 0; i < p->nalso; i++) {
                ck_path op_[1 + QR_MODEL_MAX_INDEXES];
                size_t n = check_paths(p->also[i], op_);
                for (size_t k = 0; k < n; k++) {
                    if (op_[k].table != path->table || op_[k].index != path->index) continue;
                    char head[600] = "";
                    if (op_[k].sk->text)
                        template_text(op_[k].sk, eq_prefix(p, op_[k].sk, b, nb), head, sizeof head);
                    check_prefix_narrow(common, head);
                }
            }
            check_prefix_cut(common);
            substitute(common, b, nb, skv, sizeof skv);
            if (skv[0])
                add_cond(&kx, skname, ix ? ix->sk.type : t->sk.type, "begins_with", skv, NULL);
        } else if (path->sk->text) {
            char type = ix ? ix->sk.type : t->sk.type;
            expand_n(path->sk, skn, NULL, b, nb, skv, sizeof skv);
            const m_seg *next = skn < path->sk->nseg ? &path->sk->seg[skn] : NULL;
            if (next == NULL) {
                add_cond(&kx, skname, type, "=", skv, NULL);
            } else if (next->is_var && cd.attr && strcmp(next->text, cd.attr) == 0) {
                char v2[600];
                const char *bop = check_range_bounds(cd.op, path->sk, skn, skv, cd.v1.text,
                                                     cd.v2.text, 0, tmp, v2, sizeof tmp);
                add_cond(&kx, skname, type, strcmp(bop, "BETWEEN") == 0 ? "between" : bop, tmp, v2);
            } else if (skv[0]) {
                add_cond(&kx, skname, type, "begins_with", skv, NULL);
            }
        }
        json_object_set_new(req, "KeyConditionExpression", json_string(kx.text));
        /* filters: given values (and a condition) the key does not use */
        fx.n = kx.n;
        for (size_t i = 0; i < nb; i++) {
            if (key_uses(path, p, skn, b[i].name)) continue;
            if (shard && strcmp(b[i].name, shard->name) == 0) continue;
            if (ix && ix->npk_parts) {
                int part = 0;
                for (size_t k = 0; k < ix->npk_parts; k++)
                    part |= strcmp(ix->pk_parts[k].name, b[i].name) == 0;
                for (size_t k = 0; k < ix->nsk_parts && k < skn; k++)
                    part |= strcmp(ix->sk_parts[k].name, b[i].name) == 0;
                if (part) continue;
            }
            add_cond(&fx, b[i].name, attr_type(model_entity_attr(e, b[i].name)), "=", b[i].value,
                     NULL);
        }
        if (cd.attr && strstr(kx.shown, cd.attr) == NULL && !template_has(path->sk, cd.attr))
            add_cond(&fx, cd.attr, attr_type(model_entity_attr(e, cd.attr)), cd.op, cd.v1.text,
                     cd.v2.text);
        if (fx.text[0]) json_object_set_new(req, "FilterExpression", json_string(fx.text));
        json_object_set(req, "ExpressionAttributeNames", kx.names);
        json_object_set(req, "ExpressionAttributeValues", kx.values);
        if (p->direction < 0) json_object_set_new(req, "ScanIndexForward", json_false());
        double limit = p->limit > 0 ? p->limit : p->kind == MK_GET ? 1 : 0;
        if (limit > 0) json_object_set_new(req, "Limit", json_integer((json_int_t)limit));
        if (p->consistent) json_object_set_new(req, "ConsistentRead", json_true());
        /* an LSI reads what it does not project from the table, as DynamoDB does */
        if (ix && ix->local && ix->projection != MP_ALL)
            json_object_set_new(req, "Select", json_string("ALL_ATTRIBUTES"));
        char extra[2000] = "";
        if (fx.text[0]) appendf(extra, sizeof extra, ", FilterExpression %s", fx.shown);
        if (p->direction < 0)
            strncat(extra, ", ScanIndexForward=false", sizeof extra - strlen(extra) - 1);
        if (limit > 0)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", Limit=%.0f", limit);
        if (p->consistent)
            strncat(extra, ", ConsistentRead=true", sizeof extra - strlen(extra) - 1);
        if (shards > 1)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                     "; x%d, %s = 0..%d, merged", shards, shard->name, shards - 1);
        res->ran = A("Query %s: %s%s", where_name(c, path), kx.shown, extra);
    }
    res->request = json_incref(req);

    /* run it (each shard in turn, merged by the sort key as a client would) */
    json_t *items = json_array();
    for (int sh = 0; sh < shards; sh++) {
        if (shards > 1) {
            snprintf(b[nb - 1].value, sizeof b[nb - 1].value, "%d", sh);
            expand_n(path->pk, path->pk->nseg, NULL, b, nb, pkv, sizeof pkv);
            json_object_set_new(kx.values, ":v0",
                                typed(ix && !ix->local ? ix->pk.type : t->pk.type, pkv));
        }
        json_t *resp;
        const char *error;
        int rc = call(c, op, req, &resp, &error);
        if (rc < 0) {
            json_decref(items);
            goto oom;
        }
        if (rc > 0) {
            set_fail(res, "request", A("the request was refused: %s", error));
            json_decref(items);
            goto done;
        }
        if (get) {
            json_t *it = json_object_get(resp, "Item");
            if (it) json_array_append(items, it);
        } else {
            json_array_extend(items, json_object_get(resp, "Items"));
        }
        json_decref(resp);
    }
    if (shards > 1) {
        nb--; /* every shard's items are the pattern's */
        /* the client's merge: by the sort key, in the pattern's direction, then the limit */
        const char *skname = ix ? ix->sk.name : t->sk.name;
        size_t n = json_array_size(items);
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0; j--) {
                const char *x =
                    keymatch_scalar(json_object_get(json_array_get(items, j - 1), skname));
                const char *y = keymatch_scalar(json_object_get(json_array_get(items, j), skname));
                int cmp = x && y ? strcmp(x, y) : 0;
                if ((p->direction < 0 ? -cmp : cmp) <= 0) break;
                json_t *tj = json_incref(json_array_get(items, j - 1));
                json_array_set(items, j - 1, json_array_get(items, j));
                json_array_set_new(items, j, tj);
            }
        while (p->limit > 0 && json_array_size(items) > (size_t)p->limit)
            json_array_remove(items, json_array_size(items) - 1);
    }

    /* compare */
    size_t n = json_array_size(items), unknown = 0, ng = 0;
    sample **got = calloc(n + 1, sizeof *got);
    json_t **got_item = calloc(n + 1, sizeof *got_item);
    if (got == NULL || got_item == NULL) {
        free(got);
        free(got_item);
        json_decref(items);
        goto oom;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *it = json_array_get(items, i);
        char pkb[600], skb[600];
        const char *pk = returned_key(json_object_get(it, t->pk.name), pkb, sizeof pkb);
        const char *sk =
            t->sk.name ? returned_key(json_object_get(it, t->sk.name), skb, sizeof skb) : NULL;
        sample *s = pk ? find_sample(c, t, pk, sk) : NULL;
        if (s == NULL) {
            unknown++;
            continue;
        }
        got_item[ng] = it;
        got[ng++] = s;
    }
    res->returned = n;
    res->got = got_text(c, got, ng, unknown);
    size_t expected = 0;
    for (size_t i = 0; i < c->ns; i++)
        expected += selected(p, &c->s[i], b, nb, &cd);
    double limit = p->limit > 0 ? p->limit : p->kind == MK_GET ? 1 : 0;
    res->expected = limit > 0 && expected > limit ? (size_t)limit : expected;
    const char *order = p->order_by ? p->order_by : cd.attr;
    int dir = p->direction < 0 ? -1 : 1;

    /* another entity's items */
    for (size_t i = 0; i < ng; i++)
        if (!entity_in(p, got[i]->e)) {
            set_fail(res, "entity",
                     strstr(kx.text, " AND ")
                         ? A("the key condition also returns %s items (%s), which the pattern "
                             "does not read: give %s a sort-key prefix of its own, or make the "
                             "condition longer",
                             got[i]->e->name, got[i]->name, got[i]->e->name)
                         : A("the partition also holds %s items (%s), which the pattern does not "
                             "read: give each entity's partition key a prefix of its own, or "
                             "add a sort-key condition that only %s's items meet",
                             got[i]->e->name, got[i]->name, e->name));
            break;
        }
    if (unknown)
        set_fail(res, "entity", A("%zu returned items are no sample item of the model", unknown));
    /* items the values do not select */
    for (size_t i = 0; i < ng; i++)
        if (entity_in(p, got[i]->e) && !selected(p, got[i], b, nb, &cd)) {
            const binding *off = NULL;
            for (size_t k = 0; k < nb && off == NULL; k++) {
                const sval *w = sample_val(got[i], b[k].name);
                if (w && strcmp(w->text, b[k].value) != 0) off = &b[k];
            }
            const sval *v = cd.attr ? sample_val(got[i], cd.attr) : NULL;
            if (off)
                set_fail(res, "condition",
                         A("%s %s came back, but its %s is %s, not %s: the key condition does "
                           "not select by %s alone",
                           got[i]->e->name, got[i]->name, off->name,
                           sample_val(got[i], off->name)->text, off->value, off->name));
            else
                set_fail(res, "condition",
                         A("%s %s came back, but its %s %s is not %s %s%s%s: the sort key does not "
                           "compare %s as the model declares",
                           got[i]->e->name, got[i]->name, cd.attr, v ? v->text : "", cd.op,
                           cd.v1.text, strcmp(cd.op, "between") == 0 ? " and " : "",
                           strcmp(cd.op, "between") == 0 ? cd.v2.text : "", cd.attr));
            break;
        }
    if (limit > 0 && n > limit)
        set_fail(res, "limit", A("%zu items came back, more than the limit of %.0f", n, limit));
    /* the declared order */
    const sample *prev = NULL;
    for (size_t i = 0; order && i < ng; i++) {
        if (got[i]->e != e || !sample_val(got[i], order)) continue;
        if (prev && value_cmp(sample_val(prev, order), sample_val(got[i], order)) * dir > 0) {
            set_fail(res, "order",
                     A("%s %s (%s %s) came back before %s (%s %s), against the "
                       "declared %s order by %s: the sort key does not sort it as the model "
                       "declares",
                       e->name, prev->name, order, sample_val(prev, order)->text, got[i]->name,
                       order, sample_val(got[i], order)->text, dir > 0 ? "ascending" : "descending",
                       order));
            break;
        }
        prev = got[i];
    }
    /* the first items in that order, all of them without a limit */
    size_t want = res->expected, hit = 0;
    for (size_t i = 0; i < ng; i++)
        hit += entity_in(p, got[i]->e) && selected(p, got[i], b, nb, &cd);
    if (hit < want) {
        const sample *left = NULL;
        for (size_t i = 0; i < c->ns && left == NULL; i++) {
            if (!selected(p, &c->s[i], b, nb, &cd)) continue;
            int found = 0;
            for (size_t j = 0; j < ng; j++)
                found |= got[j] == &c->s[i];
            if (!found) left = &c->s[i];
        }
        set_fail(res, "missing",
                 A("%zu of the %zu expected items came back; %s %s is missing%s", hit, want,
                   left ? left->e->name : "", left ? left->name : "an item",
                   fx.text[0] ? " (the filter runs after Limit and the read)" : ""));
    } else if (order && limit > 0 && prev) {
        for (size_t i = 0; i < c->ns; i++) {
            const sample *s = &c->s[i];
            if (s->e != e || !selected(p, s, b, nb, &cd)) continue;
            int found = 0;
            for (size_t j = 0; j < ng; j++)
                found |= got[j] == s;
            if (!found && sample_val(s, order) &&
                value_cmp(sample_val(s, order), sample_val(prev, order)) * dir < 0) {
                set_fail(res, "order",
                         A("%s %s (%s %s) should be among the first %.0f by %s, but the "
                           "sort key put it later",
                           e->name, s->name, order, sample_val(s, order)->text, limit, order));
                break;
            }
        }
    }
    /* the attributes the pattern reads */
    for (size_t i = 0; i < ng && res->verdict != RUN_FAIL; i++) {
        if (!entity_in(p, got[i]->e)) continue;
        const char *miss = lacking(c, p, got[i], got_item[i], b, nb);
        if (miss)
            set_fail(res, "projection",
                     ix ? A("%s items from %s (projection: %s) lack %s, which the pattern reads: "
                            "project them, or read the items from the table by key afterwards",
                            got[i]->e->name, where_name(c, path), projection_name(ix), miss)
                        : A("%s items lack %s", got[i]->e->name, miss));
    }
    free(got);
    free(got_item);
    json_decref(items);
    if (res->verdict != RUN_FAIL) res->verdict = RUN_PASS;
done:
    json_decref(req);
    json_decref(kx.names);
    json_decref(kx.values);
    return 0;
oom:
    json_decref(req);
    json_decref(kx.names);
    json_decref(kx.values);
    return -1;
}

/* ---- writes ---- */

static json_t *key_of(const sample *s)
{
    const m_table *t = s->e->table;
    json_t *key = json_object();
    json_object_set_new(key, t->pk.name, typed(t->pk.type, s->pk));
    if (t->sk.name) json_object_set_new(key, t->sk.name, typed(t->sk.type, s->sk));
    return key;
}

/* A new item of e, beyond the loaded ones, added to the samples. NULL when its key repeats
 * a loaded item's (*dup set) or memory runs out. */
static sample *new_sample(run_ctx *c, const m_entity *e, int *dup)
{
    int idx = entity_index(c->m, e);
    *dup = 0;
    if (c->ns == c->cap) return NULL; /* reserve_writes made room for every write */
    int rc = make_sample(c, e, c->count[idx]++, per_partition(e), &c->s[c->ns]);
    if (rc) {
        *dup = rc;
        return NULL;
    }
    return &c->s[c->ns++];
}

/* Room for the items every put and transaction writes, so the samples do not move while
 * a write holds pointers to them. */
static int reserve_writes(run_ctx *c)
{
    size_t need = c->ns + 1;
    for (size_t i = 0; i < c->r->nplans; i++) {
        const m_pattern *p = c->r->plans[i].pattern;
        if (p->kind == MK_PUT || p->kind == MK_TRANSACTION) need += 1 + p->nalso;
    }
    if (need <= c->cap) return 0;
    sample *s = realloc(c->s, need * sizeof *s);
    if (s == NULL) return -1;
    c->s = s;
    c->cap = need;
    return 0;
}

/* Reads s back by its key: 0 when it is there with its entity's attributes. */
static const char *read_back(run_ctx *c, const sample *s)
{
    json_t *req = json_pack("{s:s,s:o,s:b}", "TableName", s->e->table->name, "Key", key_of(s),
                            "ConsistentRead", 1);
    json_t *resp;
    const char *error;
    int rc = req ? call(c, "GetItem", req, &resp, &error) : -1;
    json_decref(req);
    if (rc) return rc > 0 ? error : "out of memory";
    const char *why = json_object_get(resp, "Item")
                          ? NULL
                          : A("%s %s is not there after the write", s->e->name, s->name);
    json_decref(resp);
    return why;
}

static int run_write(run_ctx *c, const ck_plan *pl, run_result *res)
{
    const m_pattern *p = pl->pattern;
    const m_entity *e = p->entity;
    const m_table *t = e->table;
    json_t *req = NULL, *resp = NULL;
    const char *error;
    int rc;
    if (p->kind == MK_PUT || p->kind == MK_TRANSACTION) {
        const m_entity *ents[1 + 100];
        size_t ne = 0;
        ents[ne++] = e;
        for (size_t i = 0; i < p->nalso && ne < 101; i++)
            ents[ne++] = p->also[i];
        sample *made[101];
        json_t *acts = json_array();
        char names[600] = "";
        for (size_t i = 0; i < ne; i++) {
            int dup;
            made[i] = new_sample(c, ents[i], &dup);
            if (made[i] == NULL) {
                json_decref(acts);
                if (!dup) return -1;
                set_fail(res, "write",
                         dup == 2 ? A("the key of a new %s is too long to build", ents[i]->name)
                                  : A("a new %s has the key of an item already stored: its key "
                                      "templates cannot tell the items apart",
                                      ents[i]->name));
                return 0;
            }
            json_t *put =
                json_pack("{s:s,s:o,s:s,s:{s:s}}", "TableName", ents[i]->table->name, "Item",
                          sample_item(made[i]), "ConditionExpression", "attribute_not_exists(#k)",
                          "ExpressionAttributeNames", "#k", ents[i]->table->pk.name);
            json_array_append_new(acts, p->kind == MK_PUT ? put : json_pack("{s:o}", "Put", put));
            appendf(names, sizeof names, "%s%s %s", i ? ", " : "", ents[i]->name, made[i]->name);
        }
        if (p->kind == MK_PUT) {
            req = json_incref(json_array_get(acts, 0));
            json_decref(acts);
            res->ran = A("PutItem on table %s: %s, if no item has that key", t->name, names);
        } else {
            req = json_pack("{s:o}", "TransactItems", acts);
            res->ran = A("TransactWriteItems with %zu puts: %s", ne, names);
        }
        res->request = json_incref(req);
        rc = call(c, p->kind == MK_PUT ? "PutItem" : "TransactWriteItems", req, &resp, &error);
        json_decref(req);
        json_decref(resp);
        if (rc < 0) return -1;
        if (rc > 0) {
            set_fail(res, "write", A("the write was refused: %s", error));
            return 0;
        }
        for (size_t i = 0; i < ne; i++) {
            const char *why = read_back(c, made[i]);
            if (why) {
                set_fail(res, "write", why);
                return 0;
            }
        }
        res->returned = res->expected = ne;
        res->got = A("%zu item%s written and read back", ne, ne == 1 ? "" : "s");
        res->verdict = RUN_PASS;
        return 0;
    }
    /* update, delete: the anchor's key, which must name an item of the entity */
    sample *an = anchor(c, p, p->kind == MK_DELETE);
    if (an == NULL) {
        res->verdict = RUN_SKIPPED;
        res->message = A("no sample item of %s has the pattern's fixed values", e->name);
        return 0;
    }
    req = json_pack("{s:s,s:o,s:s,s:s}", "TableName", t->name, "Key", key_of(an),
                    "ConditionExpression", "attribute_exists(#k)", "ReturnValues",
                    p->kind == MK_UPDATE ? "ALL_NEW" : "ALL_OLD");
    json_t *names = json_pack("{s:s}", "#k", t->pk.name);
    if (req == NULL || names == NULL) {
        json_decref(req);
        json_decref(names);
        return -1;
    }
    const char *what = "";
    size_t changed = (size_t)-1; /* the attribute the update changes, restored if refused */
    sval before;
    if (p->kind == MK_UPDATE) {
        /* the attributes it sets (else the first that is in no key) to another value */
        const m_attr *a = NULL;
        for (size_t i = 0; i < e->nattrs && a == NULL; i++) {
            const m_attr *x = &e->attrs[i];
            int in = p->nsets ? 0 : 1;
            for (size_t k = 0; k < p->nsets; k++)
                in |= strcmp(p->sets[k], x->name) == 0;
            if (!in || template_has(&e->pk, x->name) || template_has(&e->sk, x->name)) continue;
            if (strcmp(x->name, t->pk.name) == 0 ||
                (t->sk.name && strcmp(x->name, t->sk.name) == 0))
                continue;
            a = x;
        }
        int same = 0; /* no attribute outside the keys: one set to what it holds */
        for (size_t i = 0; i < e->nattrs && a == NULL; i++) {
            const m_attr *x = &e->attrs[i];
            if (strcmp(x->name, t->pk.name) && (t->sk.name == NULL || strcmp(x->name, t->sk.name)))
                a = x, same = 1;
        }
        if (a) {
            size_t ai = (size_t)(a - e->attrs);
            sval nv = an->vals[ai];
            if (!same) gen_value(a, an->k + 1, &nv);
            char expr_text[1024] = "SET #a = :a", removes[512] = "", shown[512] = "",
                 gone[512] = "";
            json_t *values = json_pack("{s:o}", ":a", attr_value(a, &nv));
            json_object_set_new(names, "#a", json_string(a->name));
            /* the index keys built from it follow, as the application must write them: a
             * sparse index's keys go when its 'when' stops holding */
            changed = ai;
            before = an->vals[ai];
            an->vals[ai] = nv;
            for (size_t k = 0; k < e->nkeys && !same; k++) {
                const m_entkey *ek = &e->keys[k];
                const m_index *ix = ek->index;
                int uses = template_has(&ek->pk, a->name) || template_has(&ek->sk, a->name);
                for (size_t w = 0; w < ek->nwhen; w++)
                    uses |= strcmp(ek->when[w].name, a->name) == 0;
                if (!uses || ix->npk_parts || ix->nsk_parts) continue;
                const char *key_names[2] = {ix->local ? NULL : ix->pk.name, ix->sk.name};
                const m_template *key_tpl[2] = {&ek->pk, &ek->sk};
                char key_type[2] = {ix->pk.type, ix->sk.type};
                for (int h = 0; h < 2; h++) {
                    char buf[2 * RUN_TEXT + 256], nk[48], vk[48];
                    if (key_names[h] == NULL || key_tpl[h]->text == NULL) continue;
                    snprintf(nk, sizeof nk, "#x%zu%d", k, h);
                    json_object_set_new(names, nk, json_string(key_names[h]));
                    if (in_index(an, ek) && expand(key_tpl[h], an, buf, sizeof buf) == 0) {
                        snprintf(vk, sizeof vk, ":x%zu%d", k, h);
                        json_object_set_new(values, vk, typed(key_type[h], buf));
                        appendf(expr_text, sizeof expr_text, ", %s = %s", nk, vk);
                        appendf(shown, sizeof shown, ", %s", key_names[h]);
                    } else {
                        appendf(removes, sizeof removes, "%s%s", removes[0] ? ", " : " REMOVE ",
                                nk);
                        appendf(gone, sizeof gone, "%s%s", gone[0] ? ", " : " REMOVE ",
                                key_names[h]);
                    }
                }
            }
            appendf(expr_text, sizeof expr_text, "%s", removes);
            json_object_set_new(req, "UpdateExpression", json_string(expr_text));
            json_object_set_new(req, "ExpressionAttributeValues", values);
            what = A(": SET %s%s%s", a->name, shown, gone);
        }
    }
    json_object_set_new(req, "ExpressionAttributeNames", names);
    res->ran = A("%s on table %s: Key %s = \"%s\"%s%s%s%s%s, if it exists%s",
                 p->kind == MK_UPDATE ? "UpdateItem" : "DeleteItem", t->name, t->pk.name, an->pk,
                 t->sk.name ? ", " : "", t->sk.name ? t->sk.name : "", t->sk.name ? " = \"" : "",
                 t->sk.name ? an->sk : "", t->sk.name ? "\"" : "", what);
    res->request = json_incref(req);
    rc = call(c, p->kind == MK_UPDATE ? "UpdateItem" : "DeleteItem", req, &resp, &error);
    json_decref(req);
    if (rc && changed != (size_t)-1) an->vals[changed] = before;
    if (rc < 0) return -1;
    if (rc > 0) {
        set_fail(res, "write", A("the write was refused: %s", error));
        return 0;
    }
    json_t *attrs = json_object_get(resp, "Attributes");
    char pkb[600], skb[600];
    const char *pk = returned_key(json_object_get(attrs, t->pk.name), pkb, sizeof pkb);
    const char *sk =
        t->sk.name ? returned_key(json_object_get(attrs, t->sk.name), skb, sizeof skb) : NULL;
    sample *s = pk ? find_sample(c, t, pk, sk) : NULL;
    json_decref(resp);
    if (s != an) {
        set_fail(res, "write", A("the key did not name the %s it was built from", e->name));
        return 0;
    }
    if (p->kind == MK_DELETE) an->deleted = 1;
    res->returned = res->expected = 1;
    res->got = A("%s %s %s", e->name, an->name, p->kind == MK_UPDATE ? "updated" : "deleted");
    res->verdict = RUN_PASS;
    return 0;
}

/* ---- the run ---- */

static int run_plan(run_ctx *c, const ck_plan *pl, run_result *res)
{
    const m_pattern *p = pl->pattern;
    res->pattern = p;
    if (p->entity->table->cql) {
        res->verdict = RUN_SKIPPED;
        res->message = "a CQL table: its statements are not run";
        return 0;
    }
    const char *why = c->table_error[p->entity->table - c->m->tables];
    for (size_t i = 0; why == NULL && i <= p->nalso; i++) {
        const m_entity *e = i ? p->also[i - 1] : p->entity;
        why = c->load_error[entity_index(c->m, e)];
    }
    if (why) {
        res->verdict = RUN_FAIL;
        res->problem = c->table_error[p->entity->table - c->m->tables] ? "table" : "load";
        res->message = why;
        return 0;
    }
    int read = p->kind == MK_GET || p->kind == MK_QUERY;
    int runnable = pl->path.table && pl->operation &&
                   (strcmp(pl->operation, "Query") == 0 || strcmp(pl->operation, "GetItem") == 0);
    if (!read) runnable = pl->served;
    if (!runnable) {
        res->verdict = RUN_SKIPPED;
        res->message = A("no operation to run: %s", pl->text ? pl->text : "not planned");
        return 0;
    }
    return read ? run_read(c, pl, res) : run_write(c, pl, res);
}

int model_run(const ck_report *r, run_report **out, qr_err *err)
{
    *out = NULL;
    run_report *rep = calloc(1, sizeof *rep);
    run_ctx c = {.r = r, .m = r->model, .out = rep};
    if (rep == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    rep->results = ck_arena_alloc(&rep->arena, (r->nplans + 1) * sizeof *rep->results);
    c.count = calloc(r->model->nentities + 1, sizeof *c.count);
    c.table_error = calloc(r->model->ntables + 1, sizeof *c.table_error);
    c.load_error = calloc(r->model->nentities + 1, sizeof *c.load_error);
    if (rep->results == NULL || c.count == NULL || c.table_error == NULL || c.load_error == NULL)
        goto oom;
    rep->nresults = r->nplans;
    if (generate(&c)) goto oom;
    qr_options o = {0};
    o.in_memory = 1;
    o.no_sync = 1;
    o.capacity = QR_CAPACITY_OFF;
    o.ttl_interval_ms = 24 * 3600 * 1000; /* the samples' TTL times are past: keep them */
    char *msg = NULL;
    if (qr_open("/quarry-model-run", &o, &c.db, &msg) != QR_OK) {
        err_set(err, QR_E_INTERNAL, "cannot open the in-memory database: %s", msg ? msg : "");
        free(msg);
        goto fail;
    }
    if (load(&c, err)) goto fail;
    if (reserve_writes(&c)) goto oom;
    /* reads first, on the data as loaded; then the writes, in file order */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->nplans; i++) {
            const m_kind k = r->plans[i].pattern->kind;
            if ((k == MK_GET || k == MK_QUERY) != (pass == 0)) continue;
            if (run_plan(&c, &r->plans[i], &rep->results[i])) goto oom;
        }
    for (size_t i = 0; i < rep->nresults; i++) {
        run_verdict v = rep->results[i].verdict;
        rep->passed += v == RUN_PASS;
        rep->failed += v == RUN_FAIL;
        rep->skipped += v == RUN_SKIPPED;
    }
    qr_close(c.db);
    free(c.s);
    free(c.count);
    free(c.table_error);
    free(c.load_error);
    *out = rep;
    return 0;
oom:
    err_set(err, QR_E_INTERNAL, "out of memory while running the patterns");
fail:
    if (c.db) qr_close(c.db);
    free(c.s);
    free(c.count);
    free(c.table_error);
    free(c.load_error);
    model_run_free(rep);
    return -1;
}

void model_run_free(run_report *run)
{
    if (run == NULL) return;
    for (size_t i = 0; i < run->nresults; i++)
        json_decref(run->results[i].request);
    ck_arena_free(&run->arena);
    free(run);
}

/* ---- the report ---- */

static const char *verdict_name(run_verdict v)
{
    return v == RUN_PASS ? "pass" : v == RUN_FAIL ? "fail" : "skipped";
}

void model_run_text(const run_report *run, FILE *f, int color)
{
    fprintf(f, "\nRun on sample data: %zu item%s of %zu entit%s (seed %d), in memory\n", run->items,
            run->items == 1 ? "" : "s", run->entities, run->entities == 1 ? "y" : "ies", RUN_SEED);
    for (size_t i = 0; i < run->nresults; i++) {
        const run_result *x = &run->results[i];
        const char *tag = x->verdict == RUN_PASS   ? "pass"
                          : x->verdict == RUN_FAIL ? "FAIL"
                                                   : "skip";
        const char *col = x->verdict == RUN_PASS   ? "\033[32m"
                          : x->verdict == RUN_FAIL ? "\033[1;31m"
                                                   : "\033[36m";
        fprintf(f, "%s%-4s%s %s\n", color ? col : "", tag, color ? "\033[0m" : "",
                x->pattern->name);
        if (x->ran) fprintf(f, "     ran: %s\n", x->ran);
        if (x->got) {
            fprintf(f, "     got: %s", x->got);
            if (x->verdict != RUN_SKIPPED && x->ran && strncmp(x->ran, "Query", 5) == 0)
                fprintf(f, " (%zu expected)", x->expected);
            fputc('\n', f);
        }
        if (x->message)
            fprintf(f, "     %s%s%s\n", x->problem ? x->problem : "", x->problem ? ": " : "",
                    x->message);
    }
    fprintf(f, "run: %d passed, %d failed, %d skipped\n", run->passed, run->failed, run->skipped);
}

json_t *model_run_json(const run_report *run)
{
    json_t *root = json_object(), *list = json_array();
    if (root == NULL || list == NULL) {
        json_decref(root);
        json_decref(list);
        return NULL;
    }
    json_object_set_new(root, "seed", json_integer(RUN_SEED));
    json_object_set_new(root, "items", json_integer((json_int_t)run->items));
    json_object_set_new(root, "entities", json_integer((json_int_t)run->entities));
    for (size_t i = 0; i < run->nresults; i++) {
        const run_result *x = &run->results[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(x->pattern->name));
        json_object_set_new(o, "result", json_string(verdict_name(x->verdict)));
        json_object_set_new(o, "problem", x->problem ? json_string(x->problem) : json_null());
        json_object_set_new(o, "ran", x->ran ? json_string(x->ran) : json_null());
        json_object_set_new(o, "request", x->request ? json_incref(x->request) : json_null());
        json_object_set_new(o, "got", x->got ? json_string(x->got) : json_null());
        json_object_set_new(o, "returned", json_integer((json_int_t)x->returned));
        json_object_set_new(o, "expected", json_integer((json_int_t)x->expected));
        json_object_set_new(o, "message", x->message ? json_string(x->message) : json_null());
        json_array_append_new(list, o);
    }
    json_object_set_new(root, "patterns", list);
    json_object_set_new(root, "summary",
                        json_pack("{s:i,s:i,s:i}", "passed", run->passed, "failed", run->failed,
                                  "skipped", run->skipped));
    return root;
}
