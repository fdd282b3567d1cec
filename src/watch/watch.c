/* watch.c — the model watch's state: the models loaded, each access pattern's observed
 * figures, the findings, their log lines and QuarryDescribeModel's answer. Matching a
 * request's shape is match.c's; this file decides what is counted where, keeps it under
 * locks (one per pattern, one for the findings) and writes a finding to standard error
 * once per kind, pattern and window. It reads the database only for a table's size (a
 * Scan's finding) and its key schema (how a model differs from the live tables). */
#include "watch/watch.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checker/check.h"
#include "checker/model.h"
#include "watch/match.h"

/* Messages and keys are cut to their buffers on purpose: a finding names its request,
 * it does not copy it whole. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* A finding is written to the log once per window (and counted every time). */
#define WINDOW_SECONDS 60.0
/* Distinct findings kept; past it new ones are counted in dropped only. */
#define MAX_FINDINGS 1000
/* Latency histogram: bucket i starts at 2^(i/4) microseconds. */
#define HIST_BUCKETS 96
/* A filter that keeps at most a quarter of at least this many items read is heavy. */
#define FILTER_HEAVY_MIN 10
/* An over-read reads more than twice a pattern's declared limit or result size. */
#define OVER_READ_FACTOR 2.0
/* A pattern runs far above its declared rate past twice it in one second. */
#define RATE_FACTOR 2.0

typedef struct w_stats {
    pthread_mutex_t lock;
    uint64_t requests, items_read, items_returned;
    double read_units, write_units;
    double first, last; /* epoch seconds */
    uint64_t hist[HIST_BUCKETS];
    int64_t second; /* the second in_second counts */
    uint32_t in_second, peak;
} w_stats;

typedef struct w_pattern {
    const char *file;
    const m_pattern *p;
    const ck_plan *pl;
    int read; /* served by GetItem or Query: plan holds its shape */
    wm_plan plan;
    w_stats st;
} w_pattern;

typedef struct w_table {
    const char *name;
    const qr_model *m;
    const m_table *mt;
    size_t model;
    int *pats; /* read patterns on this table (indices into watch.pats) */
    size_t npats;
    int used[QR_MODEL_MAX_INDEXES + 1]; /* [0] the table, [1 + i] index i: read (atomic) */
} w_table;

typedef struct w_finding {
    const char *kind;
    char *key; /* kind, table, index, pattern and shape: what is counted together */
    char *table, *index, *pattern, *op;
    char *message;
    json_t *sample;
    uint64_t count;
    double first, last, logged;
} w_finding;

typedef struct w_model {
    qr_model *m;
    ck_report *r;
} w_model;

typedef struct watch {
    qr_db *db;
    int strict;
    w_model *models;
    size_t nmodels;
    w_pattern *pats;
    size_t npats;
    w_table *tables;
    size_t ntables;
    pthread_mutex_t lock; /* the findings */
    w_finding *findings;
    size_t nfindings, cap;
    uint64_t dropped;
} watch;

static _Thread_local watch_call current;

/* ---- clocks and log ---- */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One line on standard error, stamped as the server's log lines are. */
static void log_line(const char *level, const char *fmt, ...)
{
    char line[4096];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ %s model ", ts.tv_nsec / 1000000,
                          level);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) return;
    n += (size_t)m;
    if (n > sizeof line - 2) n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}

/* ---- loading ---- */

static void watch_free(void *arg)
{
    watch *w = arg;
    if (w == NULL) return;
    for (size_t i = 0; i < w->npats; i++)
        pthread_mutex_destroy(&w->pats[i].st.lock);
    for (size_t i = 0; i < w->ntables; i++)
        free(w->tables[i].pats);
    for (size_t i = 0; i < w->nfindings; i++) {
        w_finding *f = &w->findings[i];
        free(f->key), free(f->table), free(f->index), free(f->pattern), free(f->op);
        free(f->message);
        json_decref(f->sample);
    }
    for (size_t i = 0; i < w->nmodels; i++) {
        check_free(w->models[i].r);
        model_free(w->models[i].m);
    }
    pthread_mutex_destroy(&w->lock);
    free(w->findings), free(w->pats), free(w->tables), free(w->models);
    free(w);
}

static w_table *find_table(watch *w, const char *name)
{
    for (size_t i = 0; i < w->ntables; i++)
        if (strcmp(w->tables[i].name, name) == 0) return &w->tables[i];
    return NULL;
}

static int index_slot(const w_table *tab, const char *index)
{
    if (index == NULL) return 0;
    for (size_t i = 0; i < tab->mt->nidx && i < QR_MODEL_MAX_INDEXES; i++)
        if (strcmp(tab->mt->idx[i].name, index) == 0) return (int)i + 1;
    return -1;
}

static void add_mismatch(json_t *list, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    json_array_append_new(list, json_string(text));
}

static const char *or_none(const char *s)
{
    return s ? s : "none";
}

/* How model mt's table differs from the live one: a new array of sentences. */
static json_t *table_mismatches(qr_db *db, const m_table *mt)
{
    json_t *list = json_array();
    table *t = catalog_get(db, mt->name);
    if (t == NULL) {
        add_mismatch(list, "table %s: not in the database", mt->name);
        return list;
    }
    const key_attr *pk = table_pk(t), *sk = table_sk(t);
    if (strcmp(pk->name, mt->pk.name) != 0 || pk->type != mt->pk.type)
        add_mismatch(list, "table %s: partition key is %s (%c), the model says %s (%c)", mt->name,
                     pk->name, pk->type, mt->pk.name, mt->pk.type);
    if ((sk->name == NULL) != (mt->sk.name == NULL) ||
        (sk->name && (strcmp(sk->name, mt->sk.name) != 0 || sk->type != mt->sk.type)))
        add_mismatch(list, "table %s: sort key is %s, the model says %s", mt->name,
                     or_none(sk->name), or_none(mt->sk.name));
    for (size_t i = 0; i < mt->nidx; i++) {
        const m_index *mi = &mt->idx[i];
        const qr_index *ix = table_index(t, mi->name);
        if (ix == NULL) {
            add_mismatch(list, "table %s: index %s is not in the live table", mt->name, mi->name);
            continue;
        }
        if (ix->global == mi->local)
            add_mismatch(list, "table %s: index %s is %s, the model says %s", mt->name, mi->name,
                         ix->global ? "global" : "local", mi->local ? "local" : "global");
        const char *lpk = ix->npk ? ix->pk[0] : NULL, *lsk = ix->nsk ? ix->sk[0] : NULL;
        const char *mpk = mi->local ? mt->pk.name : mi->pk.name;
        if (lpk && mpk && strcmp(lpk, mpk) != 0)
            add_mismatch(list, "table %s: index %s has partition key %s, the model says %s",
                         mt->name, mi->name, lpk, mpk);
        if ((lsk == NULL) != (mi->sk.name == NULL) || (lsk && strcmp(lsk, mi->sk.name) != 0))
            add_mismatch(list, "table %s: index %s has sort key %s, the model says %s", mt->name,
                         mi->name, or_none(lsk), or_none(mi->sk.name));
    }
    size_t n = table_index_count(t);
    const qr_index *live = table_indexes(t);
    for (size_t i = 0; i < n; i++)
        if (model_table_index(mt, live[i].name) == NULL)
            add_mismatch(list, "table %s: index %s is not in the model", mt->name, live[i].name);
    catalog_release(db, t);
    return list;
}

static int add_model(watch *w, const char *path, char **errmsg)
{
    qr_err err;
    err_init(&err);
    qr_model *m = NULL;
    ck_report *r = NULL;
    if (model_load(path, NULL, 0, &m, &err) || check_run(m, &r, &err)) {
        *errmsg = strdup(err.msg[0] ? err.msg : "the model could not be loaded");
        err_clear(&err);
        model_free(m);
        return -1;
    }
    w_model *models = realloc(w->models, (w->nmodels + 1) * sizeof *models);
    w_pattern *pats = realloc(w->pats, (w->npats + r->nplans) * sizeof *pats);
    w_table *tables = realloc(w->tables, (w->ntables + m->ntables) * sizeof *tables);
    if (models) w->models = models;
    if (pats) w->pats = pats;
    if (tables) w->tables = tables;
    if (!models || !pats || !tables) {
        *errmsg = strdup("out of memory loading the model");
        check_free(r);
        model_free(m);
        return -1;
    }
    size_t mi = w->nmodels++;
    w->models[mi] = (w_model){m, r};
    for (size_t i = 0; i < m->ntables; i++) {
        if (find_table(w, m->tables[i].name)) {
            log_line("warn",
                     "model=%s table=%s message=\"the table is in an earlier model too; "
                     "that one is used\"",
                     path, m->tables[i].name);
            continue;
        }
        w->tables[w->ntables++] =
            (w_table){.name = m->tables[i].name, .m = m, .mt = &m->tables[i], .model = mi};
    }
    for (size_t i = 0; i < r->nplans; i++) {
        const ck_plan *pl = &r->plans[i];
        w_pattern *wp = &w->pats[w->npats++];
        memset(wp, 0, sizeof *wp);
        pthread_mutex_init(&wp->st.lock, NULL);
        wp->file = m->path;
        wp->p = pl->pattern;
        wp->pl = pl;
        int get_or_query = pl->pattern->kind == MK_GET || pl->pattern->kind == MK_QUERY;
        if (pl->served && get_or_query && pl->path.table) {
            wp->read = 1;
            wp->plan = (wm_plan){.p = pl->pattern,
                                 .pl = pl,
                                 .query = strcmp(pl->operation, "Query") == 0,
                                 .table = pl->path.table,
                                 .index = pl->path.index ? pl->path.index->name : NULL,
                                 .pk = pl->path.pk,
                                 .sk = pl->path.sk,
                                 .sk_given = pl->sk_given,
                                 .sk_whole = pl->sk_whole};
        }
    }
    return 0;
}

int watch_open(qr_db *db, const char *const *paths, int strict, char **errmsg)
{
    *errmsg = NULL;
    if (paths == NULL || paths[0] == NULL) return 0;
    watch *w = calloc(1, sizeof *w);
    if (w == NULL) {
        *errmsg = strdup("out of memory");
        return -1;
    }
    w->db = db;
    w->strict = strict;
    pthread_mutex_init(&w->lock, NULL);
    for (size_t i = 0; paths[i]; i++)
        if (add_model(w, paths[i], errmsg)) {
            watch_free(w);
            return -1;
        }
    /* each table's read patterns, in file order */
    for (size_t t = 0; t < w->ntables; t++) {
        w_table *tab = &w->tables[t];
        tab->pats = calloc(w->npats ? w->npats : 1, sizeof *tab->pats);
        if (tab->pats == NULL) {
            *errmsg = strdup("out of memory");
            watch_free(w);
            return -1;
        }
        for (size_t i = 0; i < w->npats; i++)
            if (w->pats[i].read && w->pats[i].plan.table == tab->mt)
                tab->pats[tab->npats++] = (int)i;
    }
    for (size_t i = 0; i < w->nmodels; i++) {
        const qr_model *m = w->models[i].m;
        size_t nmis = 0;
        for (size_t t = 0; t < m->ntables; t++) {
            json_t *list = table_mismatches(db, &m->tables[t]);
            size_t k;
            json_t *s;
            json_array_foreach(list, k, s)
            {
                log_line("warn", "model=%s mismatch=\"%s\"", m->path, json_string_value(s));
                nmis++;
            }
            json_decref(list);
        }
        log_line("info", "model=%s tables=%zu patterns=%zu mismatches=%zu strict=%s", m->path,
                 m->ntables, m->npatterns, nmis, strict ? "yes" : "no");
    }
    engine_model_state_set(db, w, watch_free);
    return 0;
}

/* ---- the running call ---- */

watch_call watch_enter_call(qr_db *db, const char *op, const char *text, size_t len)
{
    watch_call outer = current;
    watch *w = engine_model_state(db);
    if (w || current.w) current = (watch_call){.w = w, .op = op, .text = text, .len = len};
    return outer;
}

void watch_leave_call(const watch_call *outer)
{
    if (current.w || outer->w) current = *outer;
}

/* 1 the first time this call counts pattern i as a request. */
static int first_in_call(int i)
{
    if (current.w == NULL) return 1;
    for (int k = 0; k < current.ncounted; k++)
        if (current.counted[k] == i) return 0;
    if (current.ncounted < WATCH_CALL_COUNTED) current.counted[current.ncounted++] = i;
    return 1;
}

/* ---- findings ---- */

/* The sample of a finding: the running call's request as sent. */
static json_t *call_sample(void)
{
    json_t *doc = NULL;
    if (current.text && current.len)
        doc = json_loadb(current.text, current.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!json_is_object(doc)) {
        json_decref(doc);
        doc = json_object();
    }
    return doc;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Counts one occurrence of the finding key: returns its slot, with *due set when its
 * message and sample are to be (re)made and logged (new, or its window passed); -1 when
 * the table of findings is full. */
static long finding_touch(watch *w, const char *kind, const char *key, int *due)
{
    double now = wall();
    *due = 0;
    pthread_mutex_lock(&w->lock);
    long slot = -1;
    for (size_t i = 0; i < w->nfindings; i++)
        if (w->findings[i].kind == kind && strcmp(w->findings[i].key, key) == 0) {
            slot = (long)i;
            break;
        }
    if (slot < 0) {
        if (w->nfindings == MAX_FINDINGS) {
            w->dropped++;
            pthread_mutex_unlock(&w->lock);
            return -1;
        }
        if (w->nfindings == w->cap) {
            size_t cap = w->cap ? w->cap * 2 : 16;
            w_finding *f = realloc(w->findings, cap * sizeof *f);
            if (f == NULL) {
                pthread_mutex_unlock(&w->lock);
                return -1;
            }
            w->findings = f;
            w->cap = cap;
        }
        slot = (long)w->nfindings++;
        w->findings[slot] = (w_finding){.kind = kind, .key = strdup(key), .first = now};
    }
    w_finding *f = &w->findings[slot];
    f->count++;
    f->last = now;
    if (f->logged == 0 || now - f->logged >= WINDOW_SECONDS) {
        f->logged = now;
        *due = 1;
    }
    pthread_mutex_unlock(&w->lock);
    return slot;
}

/* The sample of a CQL statement's finding: {"Statement": its text}. */
static json_t *cql_sample(const watch_cql *q)
{
    json_t *doc = json_object();
    char *text = q->text ? q->text(q->text_arg) : NULL;
    if (text) json_object_set_new(doc, "Statement", json_string(text));
    free(text);
    return doc;
}

/* Sets a due finding's message, names and sample (a CQL statement's when cql is not
 * NULL, else the running call's request), and logs it. */
static void finding_fill(watch *w, long slot, const char *table, const char *index,
                         const char *pattern, const char *message, const watch_cql *cql)
{
    json_t *sample = cql ? cql_sample(cql) : call_sample();
    char *text = json_dumps(sample, JSON_COMPACT);
    pthread_mutex_lock(&w->lock);
    w_finding *f = &w->findings[slot];
    free(f->table), free(f->index), free(f->pattern), free(f->op), free(f->message);
    json_decref(f->sample);
    f->table = dup_or_null(table);
    f->index = dup_or_null(index);
    f->pattern = dup_or_null(pattern);
    f->op = dup_or_null(cql ? cql->verb : current.op);
    f->message = strdup(message);
    f->sample = sample;
    uint64_t count = f->count;
    const char *kind = f->kind;
    pthread_mutex_unlock(&w->lock);
    log_line("warn",
             "finding=%s table=%s index=%s pattern=%s count=%llu message=\"%s\" sample=%.800s",
             kind, table ? table : "-", index ? index : "-", pattern ? pattern : "-",
             (unsigned long long)count, message, text ? text : "{}");
    free(text);
}

/* A finding whose message costs nothing to make, of a CQL statement or (cql NULL) of the
 * running call. */
static void finding_of(watch *w, const watch_cql *cql, const char *kind, const char *key,
                       const char *table, const char *index, const char *pattern,
                       const char *message)
{
    int due;
    long slot = finding_touch(w, kind, key, &due);
    if (slot >= 0 && due) finding_fill(w, slot, table, index, pattern, message, cql);
}

static void finding(watch *w, const char *kind, const char *key, const char *table,
                    const char *index, const char *pattern, const char *message)
{
    finding_of(w, NULL, kind, key, table, index, pattern, message);
}

/* The finding kinds (compared by address). */
static const char K_SCAN[] = "Scan", K_UNDECLARED[] = "UndeclaredPattern",
                  K_FILTER[] = "FilterHeavy", K_OVER[] = "OverRead",
                  K_STRONG[] = "StrongReadOnIndex", K_RATE[] = "RateAboveDeclared",
                  K_LATENCY[] = "LatencyOverBudget", K_UNMATCHED[] = "UnmatchedItem",
                  K_STALE[] = "StaleCopy", K_FORMAT[] = "BadFormat";

/* ---- reads ---- */

static void value_of(const json_t *av, wm_value *out)
{
    *out = (wm_value){0};
    if (!json_is_object(av) || json_object_size(av) != 1) return;
    const char *type = json_object_iter_key(json_object_iter((json_t *)av));
    json_t *v = json_object_iter_value(json_object_iter((json_t *)av));
    out->type = type[0];
    if (json_is_string(v)) {
        out->text = json_string_value(v);
        out->len = json_string_length(v);
    }
    if ((out->type != 'S' && out->type != 'N') || type[1] != '\0' || out->text == NULL)
        out->type = type[0] == 'B' && type[1] == '\0' ? 'B' : 'X';
}

/* The partition key value as a key shape: the template of the entity it follows, or its
 * text up to its last '#'. */
static void pk_shape(const w_table *tab, const char *index, const wm_value *v, char *buf,
                     size_t cap, const m_entity **entity)
{
    const m_template *tmpl = NULL;
    *entity = wm_entity_of_pk(tab->m, tab->mt, index, v, &tmpl);
    if (*entity) {
        snprintf(buf, cap, "\"%s\"", tmpl->text);
        return;
    }
    if (v->type != 'S' && v->type != 'N') {
        snprintf(buf, cap, "a value of type %c", v->type ? v->type : '?');
        return;
    }
    size_t cut = v->len;
    while (cut && v->text[cut - 1] != '#')
        cut--;
    if (cut)
        snprintf(buf, cap, "\"%.*s…\"", (int)(cut > 120 ? 120 : cut), v->text);
    else
        snprintf(buf, cap, "\"%.*s\"", (int)(v->len > 60 ? 60 : v->len), v->text);
}

static const char *sk_phrase(wm_sk sk)
{
    switch (sk) {
    case WM_SK_EQ:
        return "the whole sort key";
    case WM_SK_RANGE:
        return "a range on the sort key";
    case WM_SK_BEGINS:
        return "begins_with on the sort key";
    default:
        return "no sort-key condition";
    }
}

static void init_req(watch_req *r)
{
    r->w = NULL;
    r->tab = NULL;
    r->pattern = -1;
    r->scan = r->filter = 0;
    r->op = NULL;
    r->index = NULL;
    r->shape[0] = '\0';
    r->start_ns = 0;
    r->cql = NULL;
}

/* The model's table of t for read r (r->w and r->tab set), or NULL when none is
 * watched; r is initialised either way. */
static w_table *watched_table(qr_db *db, const table *t, watch_req *r)
{
    init_req(r);
    watch *w = engine_model_state(db);
    w_table *tab = w ? find_table(w, table_name(t)) : NULL;
    if (tab) r->w = w, r->tab = tab;
    return tab;
}

int watch_has_table(qr_db *db, const char *name)
{
    watch *w = engine_model_state(db);
    return w && find_table(w, name) != NULL;
}

static void mark_used(w_table *tab, const char *index)
{
    int slot = index_slot(tab, index);
    if (slot >= 0) __atomic_store_n(&tab->used[slot], 1, __ATOMIC_RELAXED);
}

/* Finds the declared pattern read rd is; else records the undeclared pattern (and,
 * under --strict, refuses it). */
static int classify(watch *w, w_table *tab, const wm_read *rd, watch_req *r, qr_err *err)
{
    r->w = w;
    r->tab = tab;
    r->index = rd->index;
    r->op = rd->query ? "Query" : "GetItem";
    mark_used(tab, rd->index);
    int nearest = -1, best = -1000;
    for (size_t i = 0; i < tab->npats; i++) {
        const w_pattern *wp = &w->pats[tab->pats[i]];
        if (wm_read_differs(&wp->plan, rd) == 0) {
            r->pattern = tab->pats[i];
            r->start_ns = mono_ns();
            return 0;
        }
        int near = wm_read_nearness(&wp->plan, rd);
        if (near > best) best = near, nearest = tab->pats[i];
    }
    const m_entity *e;
    char pk[200];
    pk_shape(tab, rd->index, &rd->pk, pk, sizeof pk, &e);
    const char *pkname = tab->mt->pk.name;
    if (rd->index) {
        const m_index *ix = model_table_index(tab->mt, rd->index);
        if (ix && !ix->local) pkname = ix->pk.name;
    }
    snprintf(r->shape, sizeof r->shape, "%s on %s %s%s with %s = %s and %s%s", r->op,
             rd->index ? "index" : "table", rd->index ? rd->index : tab->name, rd->index ? "" : "",
             pkname, pk, sk_phrase(rd->sk), rd->query && !rd->forward ? ", backward" : "");
    char where[300];
    if (rd->index)
        snprintf(where, sizeof where, " of table %s", tab->name);
    else
        where[0] = '\0';
    char near[900] = "";
    if (nearest >= 0) {
        const w_pattern *np = &w->pats[nearest];
        char diff[200];
        wm_diff_text(wm_read_differs(&np->plan, rd), diff, sizeof diff);
        snprintf(near, sizeof near,
                 "; the nearest declared pattern is %s (%s), which differs in %s", np->p->name,
                 np->pl->text, diff);
    } else {
        snprintf(near, sizeof near, "; the model declares no read of table %s", tab->name);
    }
    /* every entity whose partition-key template it is: a collection holds several */
    char entity[300] = "";
    if (e) {
        size_t n = 0, count = 0;
        char names[260] = "";
        for (size_t i = 0; i < tab->m->nentities; i++) {
            const m_entity *o = &tab->m->entities[i];
            const m_template *t = NULL;
            if (o->table != tab->mt || wm_entity_of_pk_is(o, tab->mt, rd->index, &rd->pk, &t) == 0)
                continue;
            int w = snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s",
                             count ? ", " : "", o->name);
            if (w > 0) n += (size_t)w;
            count++;
        }
        snprintf(entity, sizeof entity, " (entit%s %s)", count > 1 ? "ies" : "y", names);
    }
    char message[1600];
    snprintf(message, sizeof message, "%s%s%s matches no declared access pattern%s", r->shape,
             where, entity, near);
    char key[400];
    snprintf(key, sizeof key, "%s|%s", tab->name, r->shape);
    const char *npname = nearest >= 0 ? w->pats[nearest].p->name : NULL;
    finding(w, K_UNDECLARED, key, tab->name, rd->index, npname, message);
    if (w->strict) {
        r->w = NULL;
        return err_validation(err,
                              "quarry --strict: %s%s is not an access pattern of model %s%s. "
                              "Declare it in the model's access_patterns, or read by a declared "
                              "pattern",
                              r->shape, where, tab->m->path, near);
    }
    r->start_ns = mono_ns();
    return 0;
}

int watch_get(qr_db *db, const table *t, const json_t *key, int consistent, watch_req *r,
              qr_err *err)
{
    w_table *tab = watched_table(db, t, r);
    if (tab == NULL) return 0;
    watch *w = r->w;
    wm_read rd = {.query = 0, .consistent = consistent, .forward = 1};
    value_of(json_object_get(key, tab->mt->pk.name), &rd.pk);
    if (tab->mt->sk.name) {
        value_of(json_object_get(key, tab->mt->sk.name), &rd.sk1);
        rd.sk = WM_SK_EQ;
    }
    return classify(w, tab, &rd, r, err);
}

int watch_query(qr_db *db, const table *t, const char *index, const expr_keycond_multi *kc,
                int filter, int forward, int consistent, watch_req *r, qr_err *err)
{
    w_table *tab = watched_table(db, t, r);
    if (tab == NULL) return 0;
    watch *w = r->w;
    wm_read rd = {.query = 1, .index = index, .forward = forward, .consistent = consistent};
    value_of(kc->pk_values[0], &rd.pk);
    if (kc->nsk_eq > 0) {
        rd.sk = WM_SK_EQ;
        value_of(kc->sk_eq[0], &rd.sk1);
    } else if (kc->last_op == EXPR_KEY_BEGINS_WITH) {
        rd.sk = WM_SK_BEGINS;
        value_of(kc->last_v1, &rd.sk1);
    } else if (kc->last_op != EXPR_KEY_NONE) {
        rd.sk = WM_SK_RANGE;
        value_of(kc->last_v1, &rd.sk1);
        if (kc->last_v2) value_of(kc->last_v2, &rd.sk2);
    }
    r->filter = filter;
    return classify(w, tab, &rd, r, err);
}

/* Items and bytes the model declares for table tab (index: the entities with keys for
 * it). */
static void declared_size(const w_table *tab, const char *index, double *items, double *bytes)
{
    *items = *bytes = 0;
    const m_index *ix = index ? model_table_index(tab->mt, index) : NULL;
    for (size_t i = 0; i < tab->m->nentities; i++) {
        const m_entity *e = &tab->m->entities[i];
        if (e->table != tab->mt) continue;
        if (ix && !ix->local && model_entity_key(e, ix) == NULL) continue;
        *items += e->count;
        *bytes += e->count * model_item_size(e);
    }
}

static void human_bytes(double b, char *buf, size_t cap)
{
    const char *u[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    int k = 0;
    while (b >= 1024 && k < 5)
        b /= 1024, k++;
    snprintf(buf, cap, k ? "%.1f %s" : "%.0f %s", b, u[k]);
}

/* A read of every item of table t (index: of that index) counted under key; when due,
 * its message: what shape does (what), the items there now and those the model declares.
 * cql: a CQL statement's, whose sample it keeps. */
static void scan_finding(watch *w, const w_table *tab, table *t, const char *index, const char *key,
                         const char *shape, const char *what, int consistent, const char *pattern,
                         const watch_cql *cql)
{
    int due;
    long slot = finding_touch(w, K_SCAN, key, &due);
    if (slot < 0 || !due) return;
    json_t *desc = table_description(t);
    if (desc) {
        table_stats_fill(w->db, t, desc);
        if (index) index_stats_fill(w->db, t, desc);
    }
    double live_items = json_number_value(json_object_get(desc, "ItemCount")),
           live_bytes = json_number_value(json_object_get(desc, "TableSizeBytes"));
    json_decref(desc);
    double items, bytes;
    declared_size(tab, index, &items, &bytes);
    double units = ceil(bytes / 4096.0) * (consistent ? 1.0 : 0.5);
    char lb[32], db_[32], cost[200];
    human_bytes(live_bytes, lb, sizeof lb);
    human_bytes(bytes, db_, sizeof db_);
    if (cql)
        snprintf(cost, sizeof cost, "one such read reads them all");
    else
        snprintf(cost, sizeof cost, "one full Scan reads %.0f read units", units);
    const char *noun = cql ? "rows" : "items";
    char message[1400];
    snprintf(message, sizeof message,
             "%s %s: %.0f %s (%s) now; at the model's declared %.0f %s (%s) %s, and its cost "
             "grows with the table, not with the result",
             shape, what, live_items, noun, lb, items, noun, db_, cost);
    finding_fill(w, slot, tab->name, index, pattern, message, cql);
}

int watch_scan(qr_db *db, table *t, const char *index, int filter, int consistent, watch_req *r,
               qr_err *err)
{
    w_table *tab = watched_table(db, t, r);
    if (tab == NULL) return 0;
    watch *w = r->w;
    r->scan = 1;
    r->filter = filter;
    r->index = index;
    r->op = "Scan";
    mark_used(tab, index);
    snprintf(r->shape, sizeof r->shape, "Scan of %s %s%s%s", index ? "index" : "table",
             index ? index : tab->name, index ? " of table " : "", index ? tab->name : "");
    char key[400];
    snprintf(key, sizeof key, "%s|%s|%s", tab->name, index ? index : "", filter ? "filter" : "");
    scan_finding(w, tab, t, index, key, r->shape,
                 filter ? "reads every item and filters them" : "reads every item", consistent,
                 NULL, NULL);
    if (w->strict) {
        r->w = NULL;
        return err_validation(err,
                              "quarry --strict: %s is not an access pattern of model %s: the "
                              "model declares no Scan. Declare the read as an access pattern "
                              "with a key that serves it (a GSI keyed by what the Scan looks "
                              "for), and Query it",
                              r->shape, tab->m->path);
    }
    r->start_ns = mono_ns();
    return 0;
}

void watch_strong_read(const char *table, const char *index)
{
    watch *w = current.w;
    if (w == NULL || table == NULL || index == NULL) return;
    w_table *tab = find_table(w, table);
    if (tab == NULL) return;
    const char *pattern = NULL;
    for (size_t i = 0; i < tab->npats; i++) {
        const w_pattern *wp = &w->pats[tab->pats[i]];
        if (wp->plan.index && strcmp(wp->plan.index, index) == 0) {
            pattern = wp->p->name;
            break;
        }
    }
    char key[300], message[700];
    snprintf(key, sizeof key, "%s|%s", table, index);
    snprintf(message, sizeof message,
             "a strongly consistent read of global index %s of table %s was refused: global "
             "indexes are only eventually consistent; a read that needs strong consistency "
             "needs the table or a local index (declared when the table is created)",
             index, table);
    finding(w, K_STRONG, key, table, index, pattern, message);
}

/* ---- observed figures ---- */

static int hist_bucket(uint64_t ns)
{
    double us = ns / 1000.0;
    if (us <= 1) return 0;
    int b = (int)(log2(us) * 4);
    return b < 0 ? 0 : b >= HIST_BUCKETS ? HIST_BUCKETS - 1 : b;
}

static double hist_ms(const uint64_t *hist, double q)
{
    uint64_t total = 0;
    for (int i = 0; i < HIST_BUCKETS; i++)
        total += hist[i];
    if (total == 0) return 0;
    uint64_t want = (uint64_t)ceil(q * (double)total), seen = 0;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        seen += hist[i];
        if (seen >= want && hist[i]) return pow(2.0, (i + 0.5) / 4.0) / 1000.0;
    }
    return pow(2.0, HIST_BUCKETS / 4.0) / 1000.0;
}

/* Counts one request of pattern i; returns the requests in its current second. */
static uint32_t count_request(watch *w, int i, size_t read, size_t returned, double read_units,
                              double write_units, uint64_t ns)
{
    w_stats *st = &w->pats[i].st;
    int first = first_in_call(i);
    double now = wall();
    pthread_mutex_lock(&st->lock);
    if (first) {
        st->requests++;
        if (st->first == 0) st->first = now;
        st->last = now;
        st->hist[hist_bucket(ns)]++;
        int64_t sec = (int64_t)now;
        if (st->second == sec) {
            st->in_second++;
        } else {
            st->second = sec;
            st->in_second = 1;
        }
        if (st->in_second > st->peak) st->peak = st->in_second;
    }
    st->items_read += read;
    st->items_returned += returned;
    st->read_units += read_units;
    st->write_units += write_units;
    uint32_t in_second = first ? st->in_second : 0;
    pthread_mutex_unlock(&st->lock);
    return in_second;
}

/* The checks of a declared pattern's request: its rate and its latency. cql: the CQL
 * statement it was, or NULL. */
static void check_pattern(watch *w, int i, uint32_t in_second, uint64_t ns, const watch_cql *cql)
{
    const w_pattern *wp = &w->pats[i];
    const m_pattern *p = wp->p;
    const char *table = p->entity && p->entity->table ? p->entity->table->name : NULL;
    const char *index = wp->read ? wp->plan.index : NULL;
    char message[600];
    if (p->rps > 0 && in_second > RATE_FACTOR * p->rps && in_second >= 2) {
        snprintf(message, sizeof message,
                 "pattern %s ran %u requests in one second, more than %.0f times its declared %g "
                 "per second: partition and capacity estimates made at the declared rate no "
                 "longer hold",
                 p->name, in_second, RATE_FACTOR, p->rps);
        finding_of(w, cql, K_RATE, p->name, table, index, p->name, message);
    }
    double ms = ns / 1e6;
    if (p->latency_ms > 0 && ms > p->latency_ms) {
        snprintf(message, sizeof message,
                 "a request of pattern %s took %.3f ms inside quarry, over its latency budget of "
                 "%g ms (before any network time)",
                 p->name, ms, p->latency_ms);
        finding_of(w, cql, K_LATENCY, p->name, table, index, p->name, message);
    }
}

void watch_read_done(watch_req *r, size_t read, size_t returned, double units)
{
    watch *w = r->w;
    if (w == NULL) return;
    uint64_t ns = mono_ns() - r->start_ns;
    const char *table = r->tab->name;
    const char *pattern = r->pattern >= 0 ? w->pats[r->pattern].p->name : NULL;
    char key[400], message[1000];
    if (r->filter && read >= FILTER_HEAVY_MIN && returned * 4 <= read) {
        snprintf(key, sizeof key, "%s|%s", table, pattern ? pattern : r->shape);
        snprintf(message, sizeof message,
                 "%s%s read %zu %s and its filter kept %zu: %s waits for every %s read, so the "
                 "cost follows the %s read, not the result; a key that selects what the filter "
                 "keeps avoids it",
                 pattern ? "a request of pattern " : "", pattern ? pattern : r->shape, read,
                 r->cql ? "rows" : "items", returned, r->cql ? "Cassandra" : "DynamoDB bills and",
                 r->cql ? "row" : "item", r->cql ? "rows" : "items");
        finding_of(w, r->cql, K_FILTER, key, table, r->index, pattern, message);
    }
    if (r->pattern < 0) return;
    const w_pattern *wp = &w->pats[r->pattern];
    uint32_t in_second = count_request(w, r->pattern, read, returned, units, 0, ns);
    double declared = wp->p->limit > 0 ? wp->p->limit : wp->p->result_size;
    int query = wp->plan.query || (r->cql && wp->p->kind == MK_QUERY);
    if (query && declared > 0 && read > OVER_READ_FACTOR * declared) {
        snprintf(message, sizeof message,
                 "a %s of pattern %s read %zu %s, more than %.0f times its declared %s of "
                 "%g: give the request %s, or narrow its %s condition",
                 r->cql ? "SELECT" : "Query", wp->p->name, read, r->cql ? "rows" : "items",
                 OVER_READ_FACTOR, wp->p->limit > 0 ? "limit" : "result size", declared,
                 r->cql ? "a LIMIT" : "Limit", r->cql ? "clustering" : "sort-key");
        finding_of(w, r->cql, K_OVER, wp->p->name, table, r->index, wp->p->name, message);
    }
    check_pattern(w, r->pattern, in_second, ns, r->cql);
}

/* ---- writes ---- */

typedef struct item_view {
    const json_t *json;
    const watch_attr *attrs;
    size_t nattrs;
} item_view;

static int get_attr(const void *item, const char *name, wm_value *out)
{
    const item_view *v = item;
    *out = (wm_value){0};
    if (v->json) {
        json_t *av = json_object_get(v->json, name);
        if (av == NULL) return 0;
        value_of(av, out);
        return 1;
    }
    size_t n = strlen(name);
    for (size_t i = 0; i < v->nattrs; i++)
        if (v->attrs[i].name_len == n && memcmp(v->attrs[i].name, name, n) == 0) {
            *out =
                (wm_value){v->attrs[i].number ? 'N' : 'S', v->attrs[i].text, v->attrs[i].text_len};
            return 1;
        }
    return 0;
}

uint64_t watch_begin_write(qr_db *db)
{
    return engine_model_state(db) ? mono_ns() : 0;
}

static const char *write_op(watch_write_kind kind)
{
    static const char *const names[] = {"PutItem", "UpdateItem", "DeleteItem",
                                        "TransactWriteItems"};
    return names[kind];
}

/* Checks the variables of template t as key attribute name of item (value v) holds them. */
static void check_vars(watch *w, const w_table *tab, const m_entity *e, const m_template *t,
                       const char *attr, const wm_value *v)
{
    wm_span vars[QR_WM_MAX_SEG];
    if (t->nseg > QR_WM_MAX_SEG || !wm_template(t, t->nseg, NULL, v->text, v->len, 1, vars)) return;
    for (size_t i = 0; i < t->nseg; i++) {
        const m_seg *s = &t->seg[i];
        if (!s->is_var || s->attr == NULL) continue;
        wm_value part = {'S', vars[i].at, vars[i].len};
        char why[200];
        if (!wm_format_problem(s->attr, &part, why, sizeof why)) continue;
        char key[400], message[900];
        snprintf(key, sizeof key, "%s|%s|%s|%s", tab->name, e->name, attr, s->text);
        snprintf(message, sizeof message,
                 "%s item written with %s = \"%.*s\": %s in it %s (template %s); such keys do not "
                 "sort or match as the model's patterns expect",
                 e->name, attr, (int)(v->len > 120 ? 120 : v->len), v->text, s->text, why, t->text);
        finding(w, K_FORMAT, key, tab->name, NULL, NULL, message);
    }
}

static void check_item(watch *w, const w_table *tab, const m_entity *e, const item_view *item)
{
    const m_table *mt = tab->mt;
    wm_value v;
    if (get_attr(item, mt->pk.name, &v) && v.type == 'S')
        check_vars(w, tab, e, &e->pk, mt->pk.name, &v);
    if (mt->sk.name && e->sk.text && get_attr(item, mt->sk.name, &v) && v.type == 'S')
        check_vars(w, tab, e, &e->sk, mt->sk.name, &v);
    char key[400], message[900], why[200];
    for (size_t i = 0; i < e->nkeys; i++) {
        const m_entkey *k = &e->keys[i];
        const m_index *ix = k->index;
        const m_keyattr *names[2] = {ix->local ? NULL : &ix->pk, &ix->sk};
        const m_template *tmpls[2] = {&k->pk, &k->sk};
        for (int j = 0; j < 2; j++) {
            if (names[j] == NULL || names[j]->name == NULL || tmpls[j]->text == NULL) continue;
            if (!get_attr(item, names[j]->name, &v) || (v.type != 'S' && v.type != 'N')) continue;
            if (!wm_template(tmpls[j], tmpls[j]->nseg, NULL, v.text, v.len, 1, NULL)) {
                snprintf(key, sizeof key, "%s|%s|%s", tab->name, e->name, names[j]->name);
                snprintf(message, sizeof message,
                         "%s item written with %s = \"%.*s\", which does not follow its template "
                         "%s for index %s",
                         e->name, names[j]->name, (int)(v.len > 120 ? 120 : v.len), v.text,
                         tmpls[j]->text, ix->name);
                finding(w, K_FORMAT, key, tab->name, ix->name, NULL, message);
            } else if (v.type == 'S') {
                check_vars(w, tab, e, tmpls[j], names[j]->name, &v);
            }
        }
    }
    for (size_t i = 0; i < e->nattrs; i++) {
        const m_attr *a = &e->attrs[i];
        if (!get_attr(item, a->name, &v) || v.type == 0) continue;
        if (v.type == 'N' && a->format == MF_PADDED) continue; /* the number beside its key */
        if (!wm_format_problem(a, &v, why, sizeof why)) continue;
        snprintf(key, sizeof key, "%s|%s|%s", tab->name, e->name, a->name);
        snprintf(message, sizeof message, "%s item written with attribute %s that %s", e->name,
                 a->name, why);
        finding(w, K_FORMAT, key, tab->name, NULL, NULL, message);
    }
}

static void unmatched(watch *w, const w_table *tab, const item_view *item, watch_write_kind kind)
{
    wm_value pk = {0}, sk = {0};
    get_attr(item, tab->mt->pk.name, &pk);
    if (tab->mt->sk.name) get_attr(item, tab->mt->sk.name, &sk);
    char shape[200], list[600] = "";
    size_t cut = pk.len;
    while (cut && pk.text[cut - 1] != '#')
        cut--;
    size_t skcut = sk.len;
    while (skcut && sk.text[skcut - 1] != '#')
        skcut--;
    snprintf(shape, sizeof shape, "%.*s|%.*s", (int)(cut > 80 ? 80 : cut), pk.text ? pk.text : "",
             (int)(skcut > 80 ? 80 : skcut), sk.text ? sk.text : "");
    size_t n = 0;
    for (size_t i = 0; i < tab->m->nentities && n < sizeof list - 100; i++) {
        const m_entity *e = &tab->m->entities[i];
        if (e->table != tab->mt) continue;
        int wr = snprintf(list + n, sizeof list - n, "%s%s %s%s%s", n ? ", " : "", e->name,
                          e->pk.text, e->sk.text ? " / " : "", e->sk.text ? e->sk.text : "");
        if (wr > 0) n += (size_t)wr;
    }
    char keytext[400];
    if (sk.type)
        snprintf(keytext, sizeof keytext, "%s = \"%.*s\", %s = \"%.*s\"", tab->mt->pk.name,
                 (int)(pk.len > 120 ? 120 : pk.len), pk.text ? pk.text : "", tab->mt->sk.name,
                 (int)(sk.len > 120 ? 120 : sk.len), sk.text ? sk.text : "");
    else
        snprintf(keytext, sizeof keytext, "%s = \"%.*s\"", tab->mt->pk.name,
                 (int)(pk.len > 120 ? 120 : pk.len), pk.text ? pk.text : "");
    char key[300], message[1200];
    snprintf(key, sizeof key, "%s|%s", tab->name, shape);
    snprintf(message, sizeof message,
             "%s wrote an item to table %s whose key %s follows no entity's key templates (%s)",
             write_op(kind), tab->name, keytext, list[0] ? list : "the model declares none on it");
    finding(w, K_UNMATCHED, key, tab->name, NULL, NULL, message);
}

static m_kind pattern_kind(watch_write_kind kind)
{
    return kind == WATCH_PUT      ? MK_PUT
           : kind == WATCH_UPDATE ? MK_UPDATE
           : kind == WATCH_DELETE ? MK_DELETE
                                  : MK_TRANSACTION;
}

static int pattern_writes(const m_pattern *p, const m_entity *e)
{
    if (p->entity == e) return 1;
    for (size_t i = 0; i < p->nalso; i++)
        if (p->also[i] == e) return 1;
    return 0;
}

void watch_write(qr_db *db, const table *t, watch_write_kind kind, const json_t *item,
                 const watch_attr *attrs, size_t nattrs, double units, uint64_t start)
{
    watch *w = engine_model_state(db);
    if (w == NULL || (item == NULL && attrs == NULL)) return;
    w_table *tab = find_table(w, table_name(t));
    if (tab == NULL) return;
    item_view view = {item, attrs, nattrs};
    wm_span pkv[QR_WM_MAX_SEG], skv[QR_WM_MAX_SEG];
    const m_entity *e = wm_entity_of(tab->m, tab->mt, &view, get_attr, pkv, skv);
    if (e == NULL) {
        if (kind != WATCH_DELETE) unmatched(w, tab, &view, kind);
        return;
    }
    if (kind != WATCH_DELETE) check_item(w, tab, e, &view);
    m_kind want = pattern_kind(kind);
    uint64_t ns = start ? mono_ns() - start : 0;
    for (size_t i = 0; i < w->npats; i++) {
        const m_pattern *p = w->pats[i].p;
        if (p->kind != want || !pattern_writes(p, e)) continue;
        uint32_t in_second = count_request(w, (int)i, 0, 0, 0, units, ns);
        check_pattern(w, (int)i, in_second, ns, NULL);
        break;
    }
}

/* ---- CQL statements ----
 * A CQL table's model (quarry model import --cql) keeps each statement as a pattern: its
 * given columns and sort-key condition are the columns its WHERE names, its order_by and
 * direction its ORDER BY. A statement run is matched to the patterns by those. */

enum {
    WC_DIFF_KIND = 1,      /* another kind of statement */
    WC_DIFF_COLUMNS = 2,   /* its WHERE names other columns */
    WC_DIFF_RANGE = 4,     /* its range is on another column, or it has none where one is */
    WC_DIFF_ORDER = 8,     /* it reads the other way */
    WC_DIFF_AGGREGATE = 16 /* one aggregates, the other does not */
};

/* Whether pattern p is given column col by equality (its range aside). */
static int pattern_given(const m_pattern *p, const char *col)
{
    for (size_t i = 0; i < p->ngiven; i++)
        if (strcmp(p->given[i].name, col) == 0) return 1;
    return 0;
}

/* Whether statement q names column col other than by its range. */
static int statement_given(const watch_cql *q, const char *col)
{
    for (size_t i = 0; i < q->ncolumns; i++)
        if (strcmp(q->columns[i], col) == 0 && (q->range == NULL || strcmp(col, q->range) != 0))
            return 1;
    return 0;
}

/* Whether pattern p reads its table against the clustering order. */
static int pattern_reversed(const m_table *mt, const m_pattern *p)
{
    if (p->order_by == NULL || p->direction == 0 || mt->cql == NULL) return 0;
    for (size_t i = 0; i < mt->cql->norder; i++)
        if (strcmp(mt->cql->order[i].column, p->order_by) == 0)
            return (p->direction < 0) != (mt->cql->order[i].desc != 0);
    return 0;
}

/* What differs between statement q of kind want and pattern p (bits; 0: q is p). An
 * INSERT names no WHERE: any put pattern of the entity is it. */
static int cql_differs(const m_table *mt, const m_pattern *p, m_kind want, const watch_cql *q)
{
    int read = want == MK_GET || want == MK_QUERY;
    int diff = 0;
    if (read ? p->kind != MK_GET && p->kind != MK_QUERY : p->kind != want) diff |= WC_DIFF_KIND;
    if (want == MK_PUT) return diff;
    for (size_t i = 0; i < q->ncolumns; i++)
        if (statement_given(q, q->columns[i]) && !pattern_given(p, q->columns[i]))
            diff |= WC_DIFF_COLUMNS;
    for (size_t i = 0; i < p->ngiven; i++)
        if (!statement_given(q, p->given[i].name)) diff |= WC_DIFF_COLUMNS;
    if ((p->sk_attr == NULL) != (q->range == NULL) ||
        (q->range && strcmp(p->sk_attr, q->range) != 0))
        diff |= WC_DIFF_RANGE;
    if (!read) return diff;
    if (pattern_reversed(mt, p) != (q->reversed != 0)) diff |= WC_DIFF_ORDER;
    if ((p->aggregate != NULL) != (q->aggregate != 0)) diff |= WC_DIFF_AGGREGATE;
    return diff;
}

static void cql_diff_text(int diff, char *buf, size_t cap)
{
    static const char *const parts[] = {"the kind of statement", "the columns its WHERE names",
                                        "its range", "its direction", "its aggregate"};
    size_t n = 0;
    buf[0] = '\0';
    for (int b = 0; b < 5; b++)
        if (diff & (1 << b)) {
            int wr = snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", parts[b]);
            if (wr > 0) n += (size_t)wr;
        }
}

static int bits(int v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* The pattern of entity e's table that q is (kind want): its index in w->pats, or -1 with
 * *nearest the one that differs least (-1: none of a kind). */
static int cql_pattern(watch *w, const w_table *tab, m_kind want, const watch_cql *q, int *nearest)
{
    int best = 100;
    *nearest = -1;
    for (size_t i = 0; i < w->npats; i++) {
        const m_pattern *p = w->pats[i].p;
        if (p->entity == NULL || p->entity->table != tab->mt) continue;
        int diff = cql_differs(tab->mt, p, want, q);
        if (diff == 0) return (int)i;
        if (!(diff & WC_DIFF_KIND) && bits(diff) < best) best = bits(diff), *nearest = (int)i;
    }
    return -1;
}

/* "SELECT of app.t restricting a, b (a range on b), backward, aggregating" */
static void cql_shape(const w_table *tab, const watch_cql *q, char *buf, size_t cap)
{
    char cols[160] = "";
    size_t n = 0;
    for (size_t i = 0; i < q->ncolumns; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= strcmp(q->columns[j], q->columns[i]) == 0;
        if (dup) continue;
        int wr = snprintf(cols + n, n < sizeof cols ? sizeof cols - n : 0, "%s%s", n ? ", " : "",
                          q->columns[i]);
        if (wr > 0) n += (size_t)wr;
    }
    snprintf(buf, cap, "%s of %s %s%s%s%s%s%s%s%s", q->verb, tab->name,
             q->ncolumns ? "restricting " : "restricting nothing", cols,
             q->range ? " (a range on " : "", q->range ? q->range : "", q->range ? ")" : "",
             q->index ? " through its secondary index" : "", q->reversed ? ", backward" : "",
             q->aggregate ? ", aggregating" : "");
}

int watch_cql_read(qr_db *db, table *t, const watch_cql *q, watch_req *r, qr_err *err)
{
    w_table *tab;
    if (q->table) {
        init_req(r);
        watch *mw = engine_model_state(db);
        tab = mw ? find_table(mw, q->table) : NULL;
        if (tab) r->w = mw, r->tab = tab;
    } else {
        tab = watched_table(db, t, r);
    }
    if (tab == NULL) return 0;
    watch *w = r->w;
    r->cql = q;
    r->op = q->verb;
    r->filter = q->filtering;
    mark_used(tab, NULL);
    cql_shape(tab, q, r->shape, sizeof r->shape);
    int nearest;
    r->pattern = cql_pattern(w, tab, MK_QUERY, q, &nearest);
    const char *pname = r->pattern >= 0 ? w->pats[r->pattern].p->name : NULL;
    char key[400];
    snprintf(key, sizeof key, "%s|%s", tab->name, r->shape);
    int scan = !q->partitions && q->index == NULL;
    if (scan)
        scan_finding(w, tab, t, NULL, key, r->shape,
                     q->filtering ? "reads every partition and discards the rows its filter "
                                    "refuses (ALLOW FILTERING)"
                                  : "reads every partition",
                     0, pname, q);
    else if (q->filtering) {
        char message[800];
        snprintf(message, sizeof message,
                 "%s reads every row of %s and discards those its filter refuses (ALLOW "
                 "FILTERING): its cost follows the %s, not the result; a table clustered by the "
                 "filtered columns serves it",
                 r->shape, q->index ? "the rows its index gives" : "the partitions it names",
                 q->index ? "rows indexed" : "partitions' size");
        finding_of(w, q, K_SCAN, key, tab->name, q->index, pname, message);
    }
    if (r->pattern < 0 && !scan) {
        char message[1400], diff[200], near[900];
        if (nearest >= 0) {
            const w_pattern *np = &w->pats[nearest];
            cql_diff_text(cql_differs(tab->mt, np->p, MK_QUERY, q), diff, sizeof diff);
            snprintf(near, sizeof near,
                     "; the nearest declared pattern is %s (%s), which differs in %s", np->p->name,
                     np->p->statement ? np->p->statement : np->pl->text, diff);
        } else {
            snprintf(near, sizeof near, "; the model declares no read of table %s", tab->name);
        }
        snprintf(message, sizeof message, "%s matches no declared access pattern%s", r->shape,
                 near);
        finding_of(w, q, K_UNDECLARED, key, tab->name, NULL,
                   nearest >= 0 ? w->pats[nearest].p->name : NULL, message);
    }
    if (w->strict && (scan || q->filtering || r->pattern < 0)) {
        r->w = NULL;
        return err_validation(err,
                              "quarry --strict: %s is not an access pattern of model %s%s. "
                              "Declare it in the model's access_patterns with a key that "
                              "serves it (a table keyed by what the query restricts)",
                              r->shape, tab->m->path,
                              scan           ? ": it reads every partition"
                              : q->filtering ? ": it filters rows (ALLOW FILTERING)"
                                             : "");
    }
    r->start_ns = mono_ns();
    return 0;
}

void watch_cql_write(qr_db *db, const table *t, const watch_cql *q, uint64_t start)
{
    watch *w = engine_model_state(db);
    if (w == NULL) return;
    w_table *tab = find_table(w, table_name(t));
    if (tab == NULL) return;
    m_kind want = strcmp(q->verb, "INSERT") == 0   ? MK_PUT
                  : strcmp(q->verb, "UPDATE") == 0 ? MK_UPDATE
                                                   : MK_DELETE;
    int nearest;
    int i = cql_pattern(w, tab, want, q, &nearest);
    if (i < 0) return;
    uint64_t ns = start ? mono_ns() - start : 0;
    uint32_t in_second = count_request(w, i, 0, 0, 0, 0, ns);
    check_pattern(w, i, in_second, ns, q);
}

/* ---- denormalised copies kept in the same transaction ---- */

static const m_entity *entity_named(const qr_model *m, const char *name, size_t len)
{
    for (size_t i = 0; i < m->nentities; i++)
        if (strlen(m->entities[i].name) == len && memcmp(m->entities[i].name, name, len) == 0)
            return &m->entities[i];
    return NULL;
}

/* The entity a member's item is, by its table's templates; NULL if none or no item. */
static const m_entity *member_entity(watch *w, const table *t, const json_t *item,
                                     const qr_model **model)
{
    w_table *tab = item ? find_table(w, table_name(t)) : NULL;
    if (tab == NULL) return NULL;
    item_view view = {item, NULL, 0};
    wm_span pkv[QR_WM_MAX_SEG], skv[QR_WM_MAX_SEG];
    *model = tab->m;
    return wm_entity_of(tab->m, tab->mt, &view, get_attr, pkv, skv);
}

/* Whether a member other than skip writes an item of entity e whose attr holds value. */
static int copy_written(watch *w, size_t n, const table *const *tables, const json_t *const *news,
                        size_t skip, const m_entity *e, const char *attr, const json_t *value)
{
    for (size_t j = 0; j < n; j++) {
        const qr_model *m;
        if (j == skip || member_entity(w, tables[j], news[j], &m) != e) continue;
        if (json_equal(json_object_get(news[j], attr), (json_t *)value)) return 1;
    }
    return 0;
}

void watch_transaction(qr_db *db, size_t n, const table *const *tables, const json_t *const *olds,
                       const json_t *const *news)
{
    watch *w = engine_model_state(db);
    if (w == NULL) return;
    for (size_t i = 0; i < n; i++) {
        const qr_model *m = NULL;
        const m_entity *src = member_entity(w, tables[i], news[i], &m);
        if (src == NULL || olds[i] == NULL) continue;
        for (size_t d = 0; d < m->ndenorms; d++) {
            const m_denorm *dn = &m->denorms[d];
            const char *dot = dn->source ? strchr(dn->source, '.') : NULL;
            if (dn->strategy != MS_TRANSACTION || dot == NULL ||
                entity_named(m, dn->source, (size_t)(dot - dn->source)) != src)
                continue;
            const json_t *now = json_object_get(news[i], dot + 1);
            if (now == NULL || json_equal(json_object_get(olds[i], dot + 1), (json_t *)now))
                continue; /* the source attribute did not change */
            for (size_t c = 0; c < dn->ncopies; c++) {
                const char *cdot = strchr(dn->copies[c], '.');
                const m_entity *ce =
                    cdot ? entity_named(m, dn->copies[c], (size_t)(cdot - dn->copies[c])) : NULL;
                if (ce == NULL || copy_written(w, n, tables, news, i, ce, cdot + 1, now)) continue;
                char key[512], message[1024];
                snprintf(key, sizeof key, "%s>%s", dn->source, dn->copies[c]);
                snprintf(message, sizeof message,
                         "TransactWriteItems changed %s but left its copy %s unchanged: the "
                         "model keeps the copies in the same transaction (strategy "
                         "same-transaction), so every copy must be written with the new value",
                         dn->source, dn->copies[c]);
                finding(w, K_STALE, key, table_name(tables[i]), NULL, NULL, message);
            }
        }
    }
}

/* ---- QuarryDescribeModel ---- */

static const char *pattern_table(const w_pattern *wp)
{
    return wp->p->entity && wp->p->entity->table ? wp->p->entity->table->name : NULL;
}

static json_t *pattern_json(w_pattern *wp)
{
    const m_pattern *p = wp->p;
    json_t *o = json_object();
    json_object_set_new(o, "Name", json_string(p->name));
    if (p->sentence) json_object_set_new(o, "Sentence", json_string(p->sentence));
    json_object_set_new(o, "File", json_string(wp->file));
    if (pattern_table(wp)) json_object_set_new(o, "Table", json_string(pattern_table(wp)));
    if (wp->pl->path.index) json_object_set_new(o, "Index", json_string(wp->pl->path.index->name));
    if (p->entity) json_object_set_new(o, "Entity", json_string(p->entity->name));
    json_object_set_new(o, "Kind", json_string(model_kind_name(p->kind)));
    json_object_set_new(o, "Operation", json_string(wp->pl->operation ? wp->pl->operation : "-"));
    json_object_set_new(o, "Served", json_boolean(wp->pl->served));
    if (wp->pl->text) json_object_set_new(o, "Plan", json_string(wp->pl->text));
    json_t *d = json_object();
    json_object_set_new(d, "Rps", json_real(p->rps));
    json_object_set_new(d, "LatencyMs", json_real(p->latency_ms));
    json_object_set_new(d, "Limit", json_real(p->limit));
    json_object_set_new(d, "ResultSize", json_real(p->result_size));
    json_object_set_new(d, "Consistency", json_string(p->consistent ? "strong" : "eventual"));
    json_object_set_new(d, "Direction",
                        json_string(p->direction > 0   ? "asc"
                                    : p->direction < 0 ? "desc"
                                                       : "any"));
    json_object_set_new(o, "Declared", d);
    w_stats *st = &wp->st;
    pthread_mutex_lock(&st->lock);
    double span = st->last - st->first;
    json_t *ob = json_object();
    json_object_set_new(ob, "Requests", json_integer((json_int_t)st->requests));
    json_object_set_new(ob, "Rps",
                        json_real(st->requests ? st->requests / (span < 1 ? 1 : span) : 0));
    json_object_set_new(ob, "PeakRps", json_integer(st->peak));
    json_object_set_new(ob, "P50Ms", json_real(hist_ms(st->hist, 0.50)));
    json_object_set_new(ob, "P99Ms", json_real(hist_ms(st->hist, 0.99)));
    json_object_set_new(ob, "ItemsRead", json_integer((json_int_t)st->items_read));
    json_object_set_new(ob, "ItemsReturned", json_integer((json_int_t)st->items_returned));
    json_object_set_new(ob, "ReadUnits", json_real(st->read_units));
    json_object_set_new(ob, "WriteUnits", json_real(st->write_units));
    if (st->requests) {
        json_object_set_new(ob, "FirstSeen", json_real(st->first));
        json_object_set_new(ob, "LastSeen", json_real(st->last));
    }
    pthread_mutex_unlock(&st->lock);
    json_object_set_new(o, "Observed", ob);
    return o;
}

static int wanted(const char *filter, const char *table)
{
    return filter == NULL || (table && strcmp(filter, table) == 0);
}

/* Each entity of m in a wanted table with its key templates, for a client that tells
 * items apart by them (the console): {Name, Table, PartitionKey, SortKey, Indexes:
 * {index: {PartitionKey, SortKey}}}, a template absent when the model has none. */
static json_t *entities_json(const qr_model *m, const char *table)
{
    json_t *all = json_array();
    for (size_t i = 0; i < m->nentities; i++) {
        const m_entity *e = &m->entities[i];
        if (e->table == NULL || !wanted(table, e->table->name)) continue;
        json_t *o = json_pack("{s:s,s:s}", "Name", e->name, "Table", e->table->name);
        if (e->pk.text) json_object_set_new(o, "PartitionKey", json_string(e->pk.text));
        if (e->sk.text) json_object_set_new(o, "SortKey", json_string(e->sk.text));
        json_t *ix = json_object();
        for (size_t k = 0; k < e->nkeys; k++) {
            const m_entkey *ek = &e->keys[k];
            if (ek->index == NULL || ek->index->name == NULL) continue;
            json_t *ko = json_object();
            if (ek->pk.text) json_object_set_new(ko, "PartitionKey", json_string(ek->pk.text));
            if (ek->sk.text) json_object_set_new(ko, "SortKey", json_string(ek->sk.text));
            json_object_set_new(ix, ek->index->name, ko);
        }
        json_object_set_new(o, "Indexes", ix);
        json_array_append_new(all, o);
    }
    return all;
}

int watch_describe(qr_db *db, const char *table, json_t **out)
{
    json_t *o = json_object(), *models = json_array(), *pats = json_array(), *finds = json_array(),
           *unused = json_array(), *unexercised = json_array();
    json_object_set_new(o, "Models", models);
    json_object_set_new(o, "Patterns", pats);
    json_object_set_new(o, "Findings", finds);
    json_object_set_new(o, "UnusedIndexes", unused);
    json_object_set_new(o, "UnexercisedPatterns", unexercised);
    *out = o;
    watch *w = engine_model_state(db);
    if (w == NULL) return 0;
    json_object_set_new(o, "Strict", json_boolean(w->strict));
    for (size_t i = 0; i < w->nmodels; i++) {
        const qr_model *m = w->models[i].m;
        json_t *mo = json_object(), *tables = json_array(), *mis = json_array();
        int any = 0;
        for (size_t t = 0; t < m->ntables; t++) {
            if (!wanted(table, m->tables[t].name)) continue;
            any = 1;
            json_array_append_new(tables, json_string(m->tables[t].name));
            json_t *l = table_mismatches(db, &m->tables[t]);
            json_array_extend(mis, l);
            json_decref(l);
        }
        json_object_set_new(mo, "File", json_string(m->path));
        if (m->name) json_object_set_new(mo, "Name", json_string(m->name));
        json_object_set_new(mo, "Entities", entities_json(m, table));
        json_object_set_new(mo, "Tables", tables);
        json_object_set_new(mo, "Mismatches", mis);
        if (any)
            json_array_append_new(models, mo);
        else
            json_decref(mo);
    }
    for (size_t i = 0; i < w->npats; i++) {
        w_pattern *wp = &w->pats[i];
        if (!wanted(table, pattern_table(wp))) continue;
        json_t *pj = pattern_json(wp);
        json_array_append_new(pats, pj);
        if (json_integer_value(json_object_get(json_object_get(pj, "Observed"), "Requests")) == 0)
            json_array_append_new(unexercised, json_string(wp->p->name));
    }
    for (size_t t = 0; t < w->ntables; t++) {
        w_table *tab = &w->tables[t];
        if (!wanted(table, tab->name)) continue;
        for (size_t i = 0; i < tab->mt->nidx && i < QR_MODEL_MAX_INDEXES; i++)
            if (!__atomic_load_n(&tab->used[i + 1], __ATOMIC_RELAXED))
                json_array_append_new(unused, json_pack("{s:s,s:s}", "Table", tab->name, "Index",
                                                        tab->mt->idx[i].name));
    }
    pthread_mutex_lock(&w->lock);
    for (size_t i = 0; i < w->nfindings; i++) {
        const w_finding *f = &w->findings[i];
        if (f->message == NULL || !wanted(table, f->table)) continue;
        json_t *fo = json_object();
        json_object_set_new(fo, "Kind", json_string(f->kind));
        if (f->table) json_object_set_new(fo, "Table", json_string(f->table));
        if (f->index) json_object_set_new(fo, "Index", json_string(f->index));
        if (f->pattern) json_object_set_new(fo, "Pattern", json_string(f->pattern));
        if (f->op) json_object_set_new(fo, "Operation", json_string(f->op));
        json_object_set_new(fo, "Message", json_string(f->message));
        json_object_set_new(fo, "Count", json_integer((json_int_t)f->count));
        json_object_set_new(fo, "FirstSeen", json_real(f->first));
        json_object_set_new(fo, "LastSeen", json_real(f->last));
        json_object_set_new(fo, "Sample", f->sample ? json_deep_copy(f->sample) : json_object());
        json_array_append_new(finds, fo);
    }
    if (w->dropped) json_object_set_new(o, "FindingsDropped", json_integer((json_int_t)w->dropped));
    pthread_mutex_unlock(&w->lock);
    return 0;
}
