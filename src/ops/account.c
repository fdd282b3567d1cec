/* account.c — the small operations SDKs and tools call around the data plane:
 * DescribeEndpoints, DescribeLimits, TagResource, UntagResource, ListTagsOfResource.
 *
 * Tags are kept in the table's catalog description (not shown by DescribeTable, as in
 * DynamoDB) and addressed by the table's ARN, as DynamoDB addresses them; keys, values
 * and their count are checked against DynamoDB's limits before anything is stored. */
#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "ops/ops.h"

#define TAGS_FIELD "QuarryTags"
#define MAX_TAGS 50

int op_describe_endpoints(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    (void)db;
    (void)req;
    (void)err;
    c->answer = json_pack("{s:[{s:s,s:i}]}", "Endpoints", "Address", "localhost",
                          "CachePeriodInMinutes", 1440);
    return 0;
}

int op_describe_limits(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    (void)db;
    (void)req;
    (void)err;
    c->answer = json_pack("{s:i,s:i,s:i,s:i}", "AccountMaxReadCapacityUnits", 80000,
                          "AccountMaxWriteCapacityUnits", 80000, "TableMaxReadCapacityUnits", 40000,
                          "TableMaxWriteCapacityUnits", 40000);
    return 0;
}

/* The table named by a ResourceArn of operation op ("arn:aws:dynamodb:REGION:ACCOUNT:
 * table/NAME"). Fills name. Only a table's own ARN carries tags: anything else is a
 * ValidationException in DynamoDB's words for its kind; a table of another account is
 * refused as IAM refuses it, since no table of that account lives here. */
static int arn_table(json_t *req, const char *op, char *name, size_t cap, qr_err *err)
{
    const char *arn; /* (its presence is the shape checker's: "Invalid TableArn") */
    if (param_string(req, "ResourceArn", &arn, err)) return -1;
    arn_parts a;
    if (arn_split_resource(arn, &a, err)) return -1;
    if (a.sub && arn_is(a.sub, a.sub_len, "index"))
        return err_validation(err,
                              QR_MSG_INVALID_PARAMETER
                              "Invalid resource arn provided, only "
                              "table or stream is accepted. Provided resource arn: %s",
                              arn);
    int digits = a.account_len > 0;
    for (size_t i = 0; i < a.account_len; i++)
        digits = digits && a.account[i] >= '0' && a.account[i] <= '9';
    if (a.sub || !arn_is(a.partition, a.partition_len, "aws") || a.region_len == 0 || !digits ||
        a.table_len < 3 || a.table_len > 255 || a.table_len >= cap)
        return err_validation(err, "Invalid TableArn: Invalid ResourceArn provided as input %s",
                              arn);
    if (!arn_is(a.account, a.account_len, QR_ACCOUNT))
        return err_set(
            err, "AccessDeniedException",
            "User: arn:aws:iam::" QR_ACCOUNT ":root is not authorized to "
            "perform: dynamodb:%s on resource: %s because no resource-based policy allows the "
            "dynamodb:%s action",
            op, arn, op);
    memcpy(name, a.table, a.table_len);
    name[a.table_len] = '\0';
    return 0;
}

/* The length of a JSON string in characters, as DynamoDB measures tag keys and values
 * (jansson holds valid UTF-8: every byte but a continuation byte starts a character). */
static size_t chars(const json_t *s)
{
    const char *p = json_string_value(s);
    size_t n = 0, len = json_string_length(s);
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)p[i] & 0xC0) != 0x80;
    return n;
}

/* The C.UTF-8 character classes, which know every Unicode letter and digit; (locale_t)0
 * when the system has no such locale. */
static locale_t utf8_classes;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void open_utf8_classes(void)
{
    utf8_classes = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* 1 when every character of s is one a tag may hold: a letter or number of any script,
 * white space, or one of _ . : / = + - @ (the AWS tag character set; emoji and other
 * symbols are not in it). Without the C.UTF-8 classes, characters outside ASCII are
 * taken as letters. */
static int tag_text_ok(const char *s, size_t len)
{
    pthread_once(&utf8_once, open_utf8_classes);
    locale_t was = utf8_classes ? uselocale(utf8_classes) : (locale_t)0;
    mbstate_t st;
    memset(&st, 0, sizeof st);
    int ok = 1;
    for (size_t i = 0; ok && i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            ok = c != '\0' && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                               (c >= 'A' && c <= 'Z') || strchr(" \t\n\r_.:/=+-@", c) != NULL);
            i++;
            continue;
        }
        if (!utf8_classes) {
            i++;
            continue;
        }
        wchar_t w;
        size_t n = mbrtowc(&w, s + i, len - i, &st);
        if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
            ok = 0;
            break;
        }
        ok = iswalnum((wint_t)w) || iswspace((wint_t)w);
        i += n;
    }
    if (utf8_classes) uselocale(was);
    return ok;
}

/* A tag's Key or Value, NULL when absent or null (as DynamoDB's reader takes a null). */
static json_t *tag_member(const json_t *tag, const char *name)
{
    json_t *v = json_object_get(tag, name);
    return json_is_null(v) ? NULL : v;
}

int account_check_tags(json_t *tags, qr_err *err)
{
    size_t i;
    json_t *t;
    /* The members' types are the shape checker's. */
    json_array_foreach(tags, i, t)
    {
        json_t *k = tag_member(t, "Key"), *v = tag_member(t, "Value");
        if (k == NULL) return err_validation(err, "The Tag Key provided is invalid, Key: null");
        char path[64];
        if (json_string_length(k) == 0 || chars(k) > 128) {
            snprintf(path, sizeof path, "tags.%zu.member.key", i + 1);
            return err_violation(err, json_string_value(k), path, QR_MSG_LENGTH_BETWEEN, 1LL,
                                 128LL);
        }
        if (v && chars(v) > 256) {
            snprintf(path, sizeof path, "tags.%zu.member.value", i + 1);
            return err_violation(err, json_string_value(v), path, QR_MSG_LENGTH_AT_MOST, 256LL);
        }
    }
    /* Then what DynamoDB itself checks: characters, the reserved prefix, repeats, count. */
    json_array_foreach(tags, i, t)
    {
        const char *k = json_string_value(tag_member(t, "Key")),
                   *v = json_string_value(tag_member(t, "Value"));
        if (!tag_text_ok(k, strlen(k)))
            return err_validation(err, "The Tag Key provided is invalid, Key: %s", k);
        if (v == NULL || !tag_text_ok(v, strlen(v)))
            return err_validation(err, "The Tag Value provided is invalid, Value: %s",
                                  v ? v : "null");
        if (strncmp(k, "aws:", 4) == 0)
            return err_validation(err, "Tag Key cannot be prefixed with aws:, Key: %s", k);
        for (size_t j = 0; j < i; j++)
            if (strcmp(json_string_value(json_object_get(json_array_get(tags, j), "Key")), k) == 0)
                return err_validation(
                    err, "Duplicate Tag Keys provided as input: Duplicate Tag Key found %s", k);
    }
    if (json_array_size(tags) > MAX_TAGS)
        return err_validation(
            err, "Number of Tags exceed the current limit for the provided ResourceArn");
    return 0;
}

typedef struct tag_change {
    json_t *add;    /* Tags to add (array of {Key, Value}), or NULL */
    json_t *remove; /* TagKeys to remove, or NULL */
} tag_change;

static int apply_tags(json_t *desc, json_t *ids, void *arg, qr_err *err)
{
    (void)ids;
    tag_change *c = arg;
    json_t *tags = json_object_get(desc, TAGS_FIELD);
    if (tags == NULL) json_object_set_new(desc, TAGS_FIELD, tags = json_object());
    size_t i;
    json_t *t;
    json_array_foreach(c->add, i, t)
    {
        json_t *k = json_object_get(t, "Key"), *v = json_object_get(t, "Value");
        json_object_set_new(tags, json_string_value(k),
                            json_deep_copy(v)); /* not the request's own */
    }
    json_array_foreach(c->remove, i, t)
    {
        if (json_is_string(t)) json_object_del(tags, json_string_value(t));
    }
    if (json_object_size(tags) > MAX_TAGS)
        return err_validation(
            err, "Number of Tags exceed the current limit for the provided ResourceArn");
    return 0;
}

static int change_tags(qr_db *db, json_t *req, const char *key, int adding, json_t **resp,
                       qr_err *err)
{
    char name[256];
    json_t *list; /* (present: the shape checker has judged the members' presence) */
    if (param_array(req, key, &list, err)) return -1;
    if (arn_table(req, adding ? "TagResource" : "UntagResource", name, sizeof name, err)) return -1;
    if (adding && json_array_size(list) == 0)
        return err_validation(err, "Atleast one Tag needs to be provided as Input.");
    if (!adding && json_array_size(list) == 0)
        return err_validation(err, "Atleast one Tag Key needs to be provided as Input.");
    if (!adding) {
        size_t i;
        json_t *k;
        json_array_foreach(list, i, k)
        {
            const char *key = json_string_value(k);
            if (json_string_length(k) == 0)
                return err_validation(err, "The Tag Key provided is invalid, Key: ");
            if (chars(k) > 128) {
                char path[64];
                snprintf(path, sizeof path, "tagKeys.%zu.member", i + 1);
                return err_violation(err, key, path, QR_MSG_LENGTH_BETWEEN, 1LL, 128LL);
            }
            if (!tag_text_ok(key, json_string_length(k)))
                return err_validation(err, "The Tag Key provided is invalid, Key: %s", key);
        }
        if (json_array_size(list) > MAX_TAGS)
            return err_validation(
                err, "Number of Tags exceed the current limit for the provided ResourceArn");
    }
    if (adding && account_check_tags(list, err)) return -1;
    table *t = catalog_get(db, name);
    if (t == NULL)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_ARN_NOT_FOUND,
                       json_string_value(json_object_get(req, "ResourceArn")));
    catalog_release(db, t); /* a schema change must not hold a table */
    tag_change c = {adding ? list : NULL, adding ? NULL : list};
    if (catalog_change_schema(db, name, apply_tags, &c, err)) return -1;
    *resp = json_object();
    return 0;
}

int op_tag_resource(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    return change_tags(db, req, "Tags", 1, &c->answer, err);
}

int op_untag_resource(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    return change_tags(db, req, "TagKeys", 0, &c->answer, err);
}

int op_list_tags_of_resource(qr_db *db, op_call *c, qr_err *err)
{
    json_t *req = c->req;
    char name[256];
    if (arn_table(req, "ListTagsOfResource", name, sizeof name, err)) return -1;
    table *t = catalog_get(db, name);
    if (t == NULL)
        return err_set(err, QR_E_NOT_FOUND, QR_MSG_ARN_NOT_FOUND,
                       json_string_value(json_object_get(req, "ResourceArn")));
    json_t *list = json_array();
    json_t *tags = table_desc_member(t, TAGS_FIELD);
    const char *k;
    json_t *v;
    json_object_foreach(tags, k, v)
        json_array_append_new(list, json_pack("{s:s,s:O}", "Key", k, "Value", v));
    json_decref(tags);
    catalog_release(db, t);
    c->answer = json_pack("{s:o}", "Tags", list);
    return 0;
}

int account_tag_new_table(qr_db *db, const char *name, json_t *tags, qr_err *err)
{
    if (tags == NULL || json_array_size(tags) == 0) return 0;
    if (account_check_tags(tags, err)) return -1;
    tag_change c = {tags, NULL};
    return catalog_change_schema(db, name, apply_tags, &c, err);
}
