/* reconcile.c — reconcile.h. Each table holding copies is read once with a consistent
 * Scan; each item is given its entity by its key (keymatch.h), and each copy attribute of
 * that entity its source's key, from the model's templates. Copies wait in a batch of
 * BATCH until their sources are read with one consistent BatchGetItem, then each is
 * compared, and with repair rewritten at once: a TransactWriteItems of a ConditionCheck
 * that the source still holds the value read and an Update of the copy conditioned on
 * the copy still holding its stale value, so neither a newer copy nor a newer source is
 * overwritten by what this run read. */
#include "checker/reconcile.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "checker/keymatch.h"
#include "util/progress.h"

#define BATCH 100 /* BatchGetItem's most keys */

/* A copy read, waiting for its source. */
typedef struct pending {
    rc_copy *copy;
    json_t *item;       /* the copy item (a reference) */
    json_t *source_key; /* the source's Key */
} pending;

typedef struct run {
    conn *c;
    const qr_model *m;
    const rc_options *o;
    rc_report *r;
    const m_table *table; /* the table being read */
    pending batch[BATCH];
    size_t n;
    size_t items;
    progress meter;
    qr_err *err;
} run;

int reconcile_stamp_seconds(const m_attr *a, const json_t *av, double *out)
{
    const char *s = keymatch_scalar(av);
    if (s == NULL) return -1;
    if (a->format == MF_EPOCH) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || *end) return -1;
        *out = v;
        return 0;
    }
    struct tm tm = {0};
    int frac_at = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &frac_at) != 6)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    double secs = (double)timegm(&tm);
    const char *p = s + frac_at;
    if (*p == '.') {
        char *end;
        secs += strtod(p, &end);
        p = end;
    }
    int oh, om;
    if (*p == '+' || *p == '-') {
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2) return -1;
        secs -= (*p == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
    } else if (*p != 'Z' && *p != '\0') {
        return -1;
    }
    *out = secs;
    return 0;
}

/* A timestamp both the copy's entity and its source have (the same name and a time
 * format), preferring one named like updatedAt: how far behind a copy is. */
static const m_attr *common_stamp(const m_entity *e, const m_entity *src)
{
    const m_attr *found = NULL;
    for (size_t i = 0; i < e->nattrs; i++) {
        const m_attr *a = &e->attrs[i];
        if (a->format != MF_TIMESTAMP && a->format != MF_EPOCH) continue;
        const m_attr *b = model_entity_attr(src, a->name);
        if (b == NULL || b->format != a->format) continue;
        char lower[128];
        size_t k = 0;
        for (; a->name[k] && k < sizeof lower - 1; k++)
            lower[k] = (char)tolower((unsigned char)a->name[k]);
        lower[k] = '\0';
        if (strstr(lower, "updated") || strstr(lower, "modified")) return a;
        if (found == NULL) found = a;
    }
    return found;
}

static char *canonical(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* The copy item's own key. */
static json_t *item_key(const m_table *tb, const json_t *item)
{
    json_t *k = json_pack("{s:O}", tb->pk.name, json_object_get(item, tb->pk.name));
    if (tb->sk.name) json_object_set(k, tb->sk.name, json_object_get(item, tb->sk.name));
    return k;
}

/* Reads the sources of the batch: table name -> {canonical key -> item}. */
static json_t *read_sources(run *u)
{
    json_t *byTable = json_object(), *found = json_object();
    for (size_t i = 0; i < u->n; i++) {
        const char *t = u->batch[i].copy->attr->copy_entity->table->name;
        json_t *keys = json_object_get(byTable, t);
        if (keys == NULL) json_object_set_new(byTable, t, keys = json_object());
        char *k = canonical(u->batch[i].source_key);
        if (k) json_object_set(keys, k, u->batch[i].source_key);
        free(k);
    }
    const char *t;
    json_t *keys;
    json_object_foreach(byTable, t, keys)
    {
        json_t *items = json_object();
        json_object_set_new(found, t, items);
        json_t *list = json_array();
        const char *k;
        json_t *key;
        json_object_foreach(keys, k, key)
        {
            json_array_append(list, key);
        }
        json_t *req =
            json_pack("{s:{s:{s:o,s:b}}}", "RequestItems", t, "Keys", list, "ConsistentRead", 1);
        while (req) {
            json_t *resp;
            if (conn_call(u->c, "BatchGetItem", req, &resp, u->err)) {
                json_decref(req);
                json_decref(byTable);
                json_decref(found);
                return NULL;
            }
            size_t i;
            json_t *item;
            json_array_foreach(json_object_get(json_object_get(resp, "Responses"), t), i, item)
            {
                const m_table *tb = u->batch[0].copy->attr->copy_entity->table;
                for (size_t b = 0; b < u->n; b++)
                    if (strcmp(u->batch[b].copy->attr->copy_entity->table->name, t) == 0)
                        tb = u->batch[b].copy->attr->copy_entity->table;
                json_t *ik = item_key(tb, item);
                char *ck = canonical(ik);
                if (ck) json_object_set(items, ck, item);
                free(ck);
                json_decref(ik);
            }
            json_t *left = json_object_get(resp, "UnprocessedKeys");
            json_decref(req);
            req = left && json_object_size(left) ? json_pack("{s:O}", "RequestItems", left) : NULL;
            json_decref(resp);
        }
    }
    json_decref(byTable);
    return found;
}

/* Rewrites one stale copy; 1 repaired, 0 skipped (changed since read), -1 failed. */
static int repair(run *u, pending *p, json_t *value, json_t *source_value)
{
    const m_attr *a = p->copy->attr, *sa = a->copy_attr;
    const m_table *tb = u->table, *stb = a->copy_entity->table;
    json_t *check = json_pack("{s:s,s:O,s:{s:s}}", "TableName", stb->name, "Key", p->source_key,
                              "ExpressionAttributeNames", "#s", sa->name);
    if (source_value) {
        json_object_set_new(check, "ConditionExpression", json_string("#s = :s"));
        json_object_set_new(check, "ExpressionAttributeValues",
                            json_pack("{s:O}", ":s", source_value));
    } else {
        json_object_set_new(check, "ConditionExpression", json_string("attribute_not_exists(#s)"));
    }
    json_t *key = item_key(tb, p->item);
    json_t *update = json_pack("{s:s,s:o,s:{s:s}}", "TableName", tb->name, "Key", key,
                               "ExpressionAttributeNames", "#c", a->name);
    json_t *names = json_object_get(update, "ExpressionAttributeNames"), *values = json_object();
    json_object_set_new(update, "UpdateExpression",
                        json_string(source_value ? "SET #c = :s" : "REMOVE #c"));
    if (source_value) json_object_set(values, ":s", source_value);
    if (value) {
        json_object_set_new(update, "ConditionExpression", json_string("#c = :c"));
        json_object_set(values, ":c", value);
    } else {
        json_object_set_new(update, "ConditionExpression",
                            json_string("attribute_exists(#k) AND attribute_not_exists(#c)"));
        json_object_set_new(names, "#k", json_string(tb->pk.name));
    }
    if (json_object_size(values)) json_object_set(update, "ExpressionAttributeValues", values);
    json_decref(values);
    json_t *req =
        json_pack("{s:[{s:o},{s:o}]}", "TransactItems", "ConditionCheck", check, "Update", update);
    int outcome = -1;
    for (int attempt = 0; attempt < 5; attempt++) {
        json_t *resp = NULL;
        qr_err e;
        err_init(&e);
        if (conn_call(u->c, "TransactWriteItems", req, &resp, &e) == 0) {
            json_decref(resp);
            outcome = 1;
            break;
        }
        int conflict = e.type && (strcmp(e.type, QR_E_TXN_CONFLICT) == 0 ||
                                  (strcmp(e.type, QR_E_TXN_CANCELED) == 0 &&
                                   strstr(e.msg, "ConditionalCheckFailed") == NULL));
        if (e.type && strcmp(e.type, QR_E_TXN_CANCELED) == 0 &&
            strstr(e.msg, "ConditionalCheckFailed")) {
            outcome = 0; /* the copy or its source changed since it was read */
            err_clear(&e);
            break;
        }
        if (!conflict || attempt == 4) {
            if (p->copy->error[0] == '\0')
                snprintf(p->copy->error, sizeof p->copy->error, "%s", e.msg);
            err_clear(&e);
            break;
        }
        err_clear(&e);
    }
    json_decref(req);
    return outcome;
}

static void note_stale(run *u, pending *p, const json_t *source, const json_t *value,
                       const json_t *source_value)
{
    rc_copy *c = p->copy;
    c->stale++;
    u->r->stale++;
    json_t *sample = NULL;
    size_t most = u->o->samples ? u->o->samples : 10;
    if (json_array_size(c->samples) < most) {
        sample = json_pack("{s:o,s:O,s:O,s:O}", "key", item_key(u->table, p->item), "source_key",
                           p->source_key, "value", value ? value : json_null(), "source_value",
                           source_value ? source_value : json_null());
    }
    double a, b;
    if (c->stamp &&
        reconcile_stamp_seconds(c->stamp, json_object_get(p->item, c->stamp->name), &a) == 0 &&
        reconcile_stamp_seconds(c->stamp, json_object_get(source, c->stamp->name), &b) == 0) {
        double behind = b - a;
        if (!c->behind_known || behind > c->max_behind) c->max_behind = behind;
        c->behind_known = 1;
        if (sample) json_object_set_new(sample, "behind_seconds", json_real(behind));
    }
    if (sample) json_array_append_new(c->samples, sample);
}

/* Compares (and repairs) the batch's copies with their sources. */
static int flush(run *u)
{
    if (u->n == 0) return 0;
    json_t *found = read_sources(u);
    if (found == NULL) return -1;
    for (size_t i = 0; i < u->n; i++) {
        pending *p = &u->batch[i];
        rc_copy *c = p->copy;
        char *k = canonical(p->source_key);
        json_t *source =
            k ? json_object_get(json_object_get(found, c->attr->copy_entity->table->name), k)
              : NULL;
        free(k);
        c->checked++;
        if (source == NULL) {
            c->orphans++;
            if (json_array_size(c->orphan_samples) < (u->o->samples ? u->o->samples : 10))
                json_array_append_new(c->orphan_samples, item_key(u->table, p->item));
            continue;
        }
        json_t *value = json_object_get(p->item, c->attr->name),
               *source_value = json_object_get(source, c->attr->copy_attr->name);
        int same = value && source_value ? json_equal(value, source_value)
                                         : value == NULL && source_value == NULL;
        if (same) continue;
        note_stale(u, p, source, value, source_value);
        if (!u->o->repair) continue;
        int done = repair(u, p, value, source_value);
        if (done > 0) {
            c->repaired++;
            u->r->repaired++;
        } else if (done == 0) {
            c->skipped++;
        } else {
            c->failed++;
        }
    }
    json_decref(found);
    for (size_t i = 0; i < u->n; i++) {
        json_decref(u->batch[i].item);
        json_decref(u->batch[i].source_key);
    }
    u->n = 0;
    return 0;
}

static int each_item(void *arg, json_t *item)
{
    run *u = arg;
    progress_update(&u->meter, ++u->items, progress_now());
    json_t *vars = NULL;
    const m_entity *e = keymatch_entity(u->m, u->table, item, &vars);
    for (size_t i = 0; e && i < u->r->ncopies; i++) {
        rc_copy *c = &u->r->copies[i];
        if (c->entity != e) continue;
        const char *missing = NULL;
        json_t *sk = keymatch_source_key(e, c->attr, item, vars, &missing);
        if (sk == NULL) {
            c->unresolved++;
            continue;
        }
        if (u->n == BATCH && flush(u)) {
            json_decref(sk);
            json_decref(vars);
            return -1;
        }
        u->batch[u->n++] = (pending){c, json_incref(item), sk};
    }
    json_decref(vars);
    return 0;
}

/* The live table's key schema must be the model's. */
static int check_table(run *u, const m_table *tb, json_int_t *count)
{
    json_t *req = json_pack("{s:s}", "TableName", tb->name), *resp;
    int rc = conn_call(u->c, "DescribeTable", req, &resp, u->err);
    json_decref(req);
    if (rc) return -1;
    const json_t *d = json_object_get(resp, "Table");
    *count = json_integer_value(json_object_get(d, "ItemCount"));
    const char *hash = NULL, *range = NULL;
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(d, "KeySchema"), i, k)
    {
        const char *type = json_string_value(json_object_get(k, "KeyType"));
        const char *name = json_string_value(json_object_get(k, "AttributeName"));
        if (type && strcmp(type, "HASH") == 0) hash = name;
        if (type && strcmp(type, "RANGE") == 0) range = name;
    }
    int same = hash && strcmp(hash, tb->pk.name) == 0 &&
               (range && tb->sk.name ? strcmp(range, tb->sk.name) == 0 : !range && !tb->sk.name);
    if (!same)
        err_validation(u->err, "table %s's key is (%s%s%s) where the model says (%s%s%s)", tb->name,
                       hash ? hash : "?", range ? ", " : "", range ? range : "", tb->pk.name,
                       tb->sk.name ? ", " : "", tb->sk.name ? tb->sk.name : "");
    json_decref(resp);
    return same ? 0 : -1;
}

int reconcile_run(conn *c, const qr_model *m, const rc_options *o, rc_report *out, qr_err *err)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < m->nentities; i++)
        for (size_t j = 0; j < m->entities[i].nattrs; j++)
            n += m->entities[i].attrs[j].copy_attr != NULL;
    if (n == 0)
        return err_validation(err, "%s declares no denormalised copies (attributes with copy_of)",
                              m->path);
    out->copies = calloc(n, sizeof *out->copies);
    if (out->copies == NULL) return err_set(err, QR_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < m->nentities; i++)
        for (size_t j = 0; j < m->entities[i].nattrs; j++) {
            const m_attr *a = &m->entities[i].attrs[j];
            if (a->copy_attr == NULL) continue;
            rc_copy *cp = &out->copies[out->ncopies++];
            cp->entity = &m->entities[i];
            cp->attr = a;
            cp->stamp = common_stamp(cp->entity, a->copy_entity);
            cp->samples = json_array();
            cp->orphan_samples = json_array();
        }
    run u = {.c = c, .m = m, .o = o, .r = out, .err = err};
    int rc = 0;
    for (size_t t = 0; rc == 0 && t < m->ntables; t++) {
        const m_table *tb = &m->tables[t];
        int has = 0;
        for (size_t i = 0; i < out->ncopies; i++)
            has |= out->copies[i].entity->table == tb;
        if (!has) continue;
        json_int_t count = 0;
        if ((rc = check_table(&u, tb, &count)) != 0) break;
        u.table = tb;
        u.items = 0;
        char what[300];
        snprintf(what, sizeof what, "reconcile of %s", tb->name);
        progress_start_stderr(&u.meter, what, count > 0 ? (uint64_t)count : 0, o->quiet);
        json_t *req = json_pack("{s:s,s:b}", "TableName", tb->name, "ConsistentRead", 1);
        rc = conn_scan(c, req, each_item, &u, err);
        json_decref(req);
        if (rc == 0) rc = flush(&u);
        if (rc == 0) progress_finish(&u.meter, progress_now());
        for (size_t i = 0; i < u.n; i++) {
            json_decref(u.batch[i].item);
            json_decref(u.batch[i].source_key);
        }
        u.n = 0;
    }
    if (rc) {
        if (err->type == NULL) err_set(err, QR_E_INTERNAL, "out of memory");
        reconcile_free(out);
        return -1;
    }
    return 0;
}

void reconcile_free(rc_report *r)
{
    for (size_t i = 0; i < r->ncopies; i++) {
        json_decref(r->copies[i].samples);
        json_decref(r->copies[i].orphan_samples);
    }
    free(r->copies);
    memset(r, 0, sizeof *r);
}

json_t *reconcile_json(const rc_report *r, int repair)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->ncopies; i++) {
        const rc_copy *c = &r->copies[i];
        json_t *o =
            json_pack("{s:s++,s:s,s:s,s:I,s:I,s:I,s:I,s:O,s:O}", "copy", c->entity->name, ".",
                      c->attr->name, "source", c->attr->copy_of, "table", c->entity->table->name,
                      "checked", (json_int_t)c->checked, "stale", (json_int_t)c->stale, "orphans",
                      (json_int_t)c->orphans, "unresolved", (json_int_t)c->unresolved, "samples",
                      c->samples, "orphan_samples", c->orphan_samples);
        json_object_set_new(o, "stamp", c->stamp ? json_string(c->stamp->name) : json_null());
        json_object_set_new(o, "max_behind_seconds",
                            c->behind_known ? json_real(c->max_behind) : json_null());
        if (repair) {
            json_object_set_new(o, "repaired", json_integer((json_int_t)c->repaired));
            json_object_set_new(o, "skipped", json_integer((json_int_t)c->skipped));
            json_object_set_new(o, "failed", json_integer((json_int_t)c->failed));
            if (c->error[0]) json_object_set_new(o, "error", json_string(c->error));
        }
        json_array_append_new(list, o);
    }
    json_t *doc = json_pack("{s:o,s:I}", "copies", list, "stale", (json_int_t)r->stale);
    if (repair) json_object_set_new(doc, "repaired", json_integer((json_int_t)r->repaired));
    return doc;
}

static void duration(buf *out, double secs)
{
    if (secs < 0) {
        buf_printf(out, "ahead by ");
        secs = -secs;
    } else {
        buf_printf(out, "behind by ");
    }
    if (secs < 120)
        buf_printf(out, "%.0f s", secs);
    else if (secs < 7200)
        buf_printf(out, "%.0f min", secs / 60);
    else if (secs < 172800)
        buf_printf(out, "%.1f h", secs / 3600);
    else
        buf_printf(out, "%.1f days", secs / 86400);
}

static void put_json(buf *out, const json_t *v)
{
    char *s = canonical(v);
    buf_puts(out, s ? s : "?");
    free(s);
}

void reconcile_text(const rc_report *r, int repair, buf *out)
{
    for (size_t i = 0; i < r->ncopies; i++) {
        const rc_copy *c = &r->copies[i];
        buf_printf(out, "%s.%s, a copy of %s (table %s): %zu checked, %zu stale", c->entity->name,
                   c->attr->name, c->attr->copy_of, c->entity->table->name, c->checked, c->stale);
        if (c->orphans) buf_printf(out, ", %zu without a source item", c->orphans);
        if (c->unresolved) buf_printf(out, ", %zu without their source's key", c->unresolved);
        if (c->behind_known) {
            buf_printf(out, "; the stalest %s ", c->stamp->name);
            duration(out, c->max_behind);
        }
        buf_putc(out, '\n');
        size_t k;
        json_t *s;
        json_array_foreach(c->samples, k, s)
        {
            buf_puts(out, "  stale ");
            put_json(out, json_object_get(s, "key"));
            buf_puts(out, " holds ");
            put_json(out, json_object_get(s, "value"));
            buf_puts(out, ", its source ");
            put_json(out, json_object_get(s, "source_key"));
            buf_puts(out, " holds ");
            put_json(out, json_object_get(s, "source_value"));
            json_t *b = json_object_get(s, "behind_seconds");
            if (b) {
                buf_puts(out, " (");
                duration(out, json_number_value(b));
                buf_putc(out, ')');
            }
            buf_putc(out, '\n');
        }
        if (c->stale > json_array_size(c->samples))
            buf_printf(out, "  ... and %zu more\n", c->stale - json_array_size(c->samples));
        json_array_foreach(c->orphan_samples, k, s)
        {
            buf_puts(out, "  no source item for ");
            put_json(out, s);
            buf_putc(out, '\n');
        }
        if (repair) {
            buf_printf(out, "  repaired %zu", c->repaired);
            if (c->skipped)
                buf_printf(out, "; %zu left: the copy or its source changed since read",
                           c->skipped);
            if (c->failed) buf_printf(out, "; %zu failed: %s", c->failed, c->error);
            buf_putc(out, '\n');
        }
    }
    buf_printf(out, "%zu stale cop%s", r->stale, r->stale == 1 ? "y" : "ies");
    if (repair) buf_printf(out, ", %zu repaired", r->repaired);
    buf_putc(out, '\n');
}
