/* value.c — validating, comparing and sizing DynamoDB AttributeValues (see value.h).
 *
 * Values stay in their JSON wire form; validation normalises numbers in place so that
 * everything stored and compared afterwards is canonical. Binary payloads are base64
 * text, decoded with libcrypto when their bytes matter. */
#include "model/value.h"
#include "model/layer.h"

#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <strings.h>

static const char *const type_names[] = {"",  "S", "N",  "B",  "BOOL", "NULL",
                                         "M", "L", "SS", "NS", "BS"};

const char *value_type_name(qr_type t)
{
    return (t > QR_T_NONE && t <= QR_T_BS) ? type_names[t] : "";
}

qr_type value_type_from_name(const char *name)
{
    /* Decided by the first two bytes, then confirmed whole: this runs for every value of
     * every request. */
    qr_type t = QR_T_NONE;
    switch (name[0]) {
    case 'S':
        t = name[1] == 'S' ? QR_T_SS : QR_T_S;
        break;
    case 'N':
        t = name[1] == 'S' ? QR_T_NS : name[1] == 'U' ? QR_T_NULL : QR_T_N;
        break;
    case 'B':
        t = name[1] == 'S' ? QR_T_BS : name[1] == 'O' ? QR_T_BOOL : QR_T_B;
        break;
    case 'M':
        t = QR_T_M;
        break;
    case 'L':
        t = QR_T_L;
        break;
    default:
        return QR_T_NONE;
    }
    return strcmp(name, type_names[t]) == 0 ? t : QR_T_NONE;
}

qr_type value_type(const json_t *av)
{
    if (!json_is_object(av) || json_object_size(av) != 1) return QR_T_NONE;
    const char *k = json_object_iter_key(json_object_iter((json_t *)av));
    return value_type_from_name(k);
}

json_t *value_payload(const json_t *av)
{
    return json_object_iter_value(json_object_iter((json_t *)av));
}

/* ---- base64 ---- */

int value_base64_decode(const char *s, size_t n, unsigned char *out, size_t *len)
{
    *len = 0;
    if (n % 4 != 0) return -1;
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '+' || c == '/' || (c == '=' && i >= n - 2);
        if (!ok || (c != '=' && i > 0 && s[i - 1] == '=')) return -1;
    }
    int got = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
    if (got < 0) return -1;
    size_t m = (size_t)got;
    if (s[n - 1] == '=') m--;
    if (s[n - 2] == '=') m--;
    *len = m;
    return 0;
}

int value_binary(const json_t *av, unsigned char **out, size_t *len)
{
    const json_t *p = json_is_string(av) ? av : value_payload(av);
    const char *s = json_string_value(p);
    size_t n = json_string_length(p);
    *out = NULL;
    *len = 0;
    if (s == NULL || n % 4 != 0) return -1;
    unsigned char *d = malloc(n / 4 * 3 + 1);
    if (d == NULL) return -1;
    if (value_base64_decode(s, n, d, len) != 0) {
        free(d);
        return -1;
    }
    *out = d;
    return 0;
}

/* ---- numbers ---- */

int value_number(const json_t *av, qr_num *out)
{
    const json_t *p = json_is_string(av) ? av : value_payload(av);
    if (!json_is_string(p)) return -1;
    qr_err e;
    err_init(&e);
    return num_parse(json_string_value(p), json_string_length(p), out, &e);
}

json_t *value_from_number(const qr_num *n)
{
    char text[NUM_FMT_MAX];
    size_t len = num_format(n, text);
    return json_pack("{s:s%}", "N", text, len);
}

/* DynamoDB's reader's messages for a value it did not expect where it stands. */
#define OBJECT_NOT_EXPECTED "Start of structure or map found where not expected"
#define LIST_NOT_EXPECTED "UnknownError"
#define UNEXPECTED_FIELD "Unexpected field type"
#define UNEXPECTED_VALUE "Unexpected value type in payload"

/* The reader's name for the token v is. */
static const char *token_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        return "NUMBER_VALUE";
    case JSON_REAL:
        return "DECIMAL_VALUE";
    case JSON_TRUE:
        return "TRUE_VALUE";
    case JSON_FALSE:
        return "FALSE_VALUE";
    default:
        return "STRING_VALUE";
    }
}

static int wire_refuse(qr_err *err, const char *msg)
{
    return err_set(err, QR_E_SERIALIZATION, "%s", msg);
}

static int not_convertible(const json_t *v, const char *to, qr_err *err)
{
    return err_set(err, QR_E_SERIALIZATION, "%s cannot be converted to %s", token_name(v), to);
}

int value_wire_check(const json_t *v, wire_type want, int member, json_t **fixed, qr_err *err)
{
    switch (want) {
    case WIRE_STRUCTURE:
        if (json_is_array(v)) return wire_refuse(err, LIST_NOT_EXPECTED);
        if (!json_is_object(v))
            return wire_refuse(err, member ? UNEXPECTED_FIELD : UNEXPECTED_VALUE);
        return 0;
    case WIRE_LIST:
        if (json_is_object(v)) return wire_refuse(err, OBJECT_NOT_EXPECTED);
        if (!json_is_array(v))
            return wire_refuse(err, member ? UNEXPECTED_FIELD : LIST_NOT_EXPECTED);
        return 0;
    case WIRE_MAP:
        if (json_is_array(v)) return wire_refuse(err, LIST_NOT_EXPECTED);
        if (!json_is_object(v))
            return wire_refuse(err, member ? UNEXPECTED_FIELD : LIST_NOT_EXPECTED);
        return 0;
    default:
        break;
    }
    if (json_is_object(v)) return wire_refuse(err, OBJECT_NOT_EXPECTED);
    if (json_is_array(v)) return wire_refuse(err, LIST_NOT_EXPECTED);
    switch (want) {
    case WIRE_STRING:
        return json_is_string(v) ? 0 : not_convertible(v, "String", err);
    case WIRE_INTEGER:
    case WIRE_LONG:
        if (!json_is_number(v))
            return not_convertible(v, want == WIRE_LONG ? "Long" : "Integer", err);
        if (json_is_real(v) && fixed) *fixed = json_integer((json_int_t)floor(json_real_value(v)));
        return 0;
    case WIRE_DOUBLE:
        return json_is_number(v) ? 0 : not_convertible(v, "Double", err);
    case WIRE_TIMESTAMP:
        return json_is_number(v) ? 0 : not_convertible(v, "Date", err);
    case WIRE_BLOB:
        return json_is_string(v)
                   ? 0
                   : wire_refuse(err, "only base-64-encoded strings are convertible to bytes");
    case WIRE_BOOLEAN:
        if (json_is_string(v)) {
            const char *word = json_string_value(v);
            int yes = strcasecmp(word, "true") == 0;
            if (!yes && strcasecmp(word, "false") != 0)
                return wire_refuse(err, "Unexpected token received from parser");
            if (fixed) *fixed = json_boolean(yes);
            return 0;
        }
        return json_is_boolean(v) ? 0 : not_convertible(v, "Boolean", err);
    default:
        return 0;
    }
}

/* Parses and rewrites one number string in canonical form. */
static int normalise_number(json_t *str, qr_err *err)
{
    if (value_wire_check(str, WIRE_STRING, 1, NULL, err)) return -1;
    qr_num n;
    if (num_parse(json_string_value(str), json_string_length(str), &n, err)) return -1;
    char text[NUM_FMT_MAX];
    size_t len = num_format(&n, text);
    json_string_setn(str, text, len);
    return 0;
}

/* ---- set order ---- */

typedef struct set_member {
    json_t *v;
    unsigned char *bytes; /* BS: decoded (owned); SS: the string's own bytes */
    size_t len;
    qr_num num; /* NS */
    int owned;
} set_member;

static int cmp_bytes(const void *a, const void *b)
{
    const set_member *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->bytes, y->bytes, n) : 0;
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Members as written: a repeat is the same text (two base64 spellings of the same bytes
 * are not one), so equal keys are ordered by their text to put repeats side by side. */
static int cmp_text(const set_member *x, const set_member *y)
{
    size_t xl = json_string_length(x->v), yl = json_string_length(y->v), n = xl < yl ? xl : yl;
    int c = memcmp(json_string_value(x->v), json_string_value(y->v), n);
    return c ? c : (xl > yl) - (xl < yl);
}

static int cmp_bytes_then_text(const void *a, const void *b)
{
    int c = cmp_bytes(a, b);
    return c ? c : cmp_text(a, b);
}

static int cmp_numbers_then_text(const void *a, const void *b)
{
    int c = num_cmp(&((const set_member *)a)->num, &((const set_member *)b)->num);
    return c ? c : cmp_text(a, b);
}

static void set_members_free(set_member *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(m[i].v);
        if (m[i].owned) free(m[i].bytes);
    }
    free(m);
}

/* The members of a set (array arr of type t) with what orders them: their bytes, or
 * their numbers. NULL if out of memory or a member cannot be read. */
static set_member *set_members_load(json_t *arr, qr_type t)
{
    size_t n = json_array_size(arr);
    set_member *m = calloc(n ? n : 1, sizeof *m);
    int ok = m != NULL;
    for (size_t i = 0; i < n && ok; i++) {
        json_t *e = json_array_get(arr, i);
        m[i].v = json_incref(e);
        if (!json_is_string(e)) {
            ok = 0;
        } else if (t == QR_T_NS) {
            qr_err ignored;
            err_init(&ignored);
            ok = num_parse(json_string_value(e), json_string_length(e), &m[i].num, &ignored) == 0;
            err_clear(&ignored);
        } else if (t == QR_T_BS) {
            ok = value_binary(e, &m[i].bytes, &m[i].len) == 0 && (m[i].owned = 1);
        } else {
            m[i].bytes = (unsigned char *)json_string_value(e);
            m[i].len = json_string_length(e);
        }
    }
    if (!ok && m) {
        set_members_free(m, n);
        m = NULL;
    }
    return m;
}

/* Puts the members of set arr (type t) in DynamoDB's order: strings and binaries by
 * their bytes, numbers by value. Returns 0 once in order; 1, leaving arr as sent, when a
 * member is repeated; -1 if a member cannot be read or memory runs out. */
static int order_set(json_t *arr, qr_type t)
{
    size_t n = json_array_size(arr);
    if (n < 2) return 0;
    set_member *m = set_members_load(arr, t);
    if (m == NULL) return -1;
    qsort(m, n, sizeof *m, t == QR_T_NS ? cmp_numbers_then_text : cmp_bytes_then_text);
    int repeated = 0;
    for (size_t i = 1; i < n && !repeated; i++)
        repeated = cmp_text(&m[i - 1], &m[i]) == 0;
    if (!repeated) {
        json_array_clear(arr);
        for (size_t i = 0; i < n; i++)
            json_array_append(arr, m[i].v);
    }
    set_members_free(m, n);
    return repeated;
}

void value_sort_set(json_t *av)
{
    qr_type t = value_type(av);
    if (t == QR_T_SS || t == QR_T_NS || t == QR_T_BS) order_set(value_payload(av), t);
}

/* ---- validation ---- */

/* Appends member i of a set as a message shows it: quoted or not, BS as its base64. */
static void describe_member(buf *b, json_t *arr, size_t i, int quoted)
{
    const char *q = quoted ? "\"" : "";
    buf_printf(b, "%s%s%s", q, json_string_value(json_array_get(arr, i)), q);
}

/* The older layer lists a set's members as sent, unquoted: "b, a, b". */
static void describe_as_sent(json_t *arr, buf *b)
{
    for (size_t i = 0; i < json_array_size(arr) && b->len < 200; i++) {
        if (i) buf_puts(b, ", ");
        describe_member(b, arr, i, 0);
    }
}

/* The current layer gathers members into a sorted set until one repeats: it lists the
 * set gathered so far in byte order, then the repeat, then the rest as sent, each
 * quoted (BS without a space after the comma): ["a", "b", "b"]. */
static void describe_gathered(json_t *arr, qr_type t, buf *b)
{
    size_t n = json_array_size(arr), *order = malloc((n ? n : 1) * sizeof *order), kept = 0, i;
    set_member *m = set_members_load(arr, t);
    if (order == NULL || m == NULL) {
        free(order);
        if (m) set_members_free(m, n);
        return;
    }
    for (i = 0; i < n; i++) {
        size_t at = kept;
        int repeat = 0;
        for (size_t k = 0; k < kept; k++) {
            int c = cmp_bytes(&m[i], &m[order[k]]);
            if (c == 0) repeat = 1;
            if (c <= 0) {
                at = k;
                break;
            }
        }
        if (repeat) break;
        memmove(order + at + 1, order + at, (kept - at) * sizeof *order);
        order[at] = i;
        kept++;
    }
    const char *sep = t == QR_T_BS ? "," : ", ";
    size_t shown = 0;
    for (size_t k = 0; k < kept && b->len < 200; k++, shown++) {
        if (shown) buf_puts(b, sep);
        describe_member(b, arr, order[k], 1);
    }
    for (; i < n && b->len < 200; i++, shown++) {
        if (shown) buf_puts(b, sep);
        describe_member(b, arr, i, 1);
    }
    set_members_free(m, n);
    free(order);
}

/* DynamoDB's message for a set with a repeated member, in the request's layer. */
static int duplicates_error(json_t *arr, qr_type t, qr_err *err)
{
    int older = value_layer_now() == VALUE_LAYER_OLDER;
    if (t == QR_T_NS) /* no members named, in either layer */
        return older ? err_validation(err, "Input collection contains duplicates")
                     : err_validation(err,
                                      QR_MSG_INVALID_PARAMETER "Input "
                                                               "collection contains duplicates.");
    buf b;
    buf_init(&b, 0);
    if (older)
        describe_as_sent(arr, &b);
    else
        describe_gathered(arr, t, &b);
    const char *desc = b.data ? b.data : "";
    if (t == QR_T_BS) /* sic: DynamoDB puts no space before "of" */
        err_validation(err,
                       QR_MSG_INVALID_PARAMETER "Input collection [%s]of type BS "
                                                "contains duplicates.",
                       desc);
    else
        err_validation(err, QR_MSG_INVALID_PARAMETER "Input collection [%s] contains duplicates.",
                       desc);
    buf_free(&b);
    return -1;
}

static int validate_set(json_t *arr, qr_type t, qr_err *err)
{
    static const char *const set_words[] = {
        [QR_T_SS] = "string", [QR_T_NS] = "number", [QR_T_BS] = "binary"};
    if (value_wire_check(arr, WIRE_LIST, 1, NULL, err)) return -1;
    if (json_array_size(arr) == 0) {
        /* DynamoDB words the binary case differently from the other two. */
        if (t == QR_T_BS)
            return err_validation(err, QR_MSG_INVALID_PARAMETER "Binary sets should not be empty");
        return err_validation(err, QR_MSG_INVALID_PARAMETER "An %s set  may not be empty",
                              set_words[t]);
    }
    size_t i;
    json_t *el;
    json_array_foreach(arr, i, el)
    {
        if (value_wire_check(el, t == QR_T_BS ? WIRE_BLOB : WIRE_STRING, 0, NULL, err)) return -1;
        if (t == QR_T_NS && normalise_number(el, err)) return -1;
        if (t == QR_T_BS) {
            unsigned char *d;
            size_t len;
            if (value_binary(el, &d, &len))
                return err_set(
                    err, QR_E_SERIALIZATION,
                    "Base64 encoded length is expected a multiple of 4 bytes but found: %zu",
                    json_string_length(el));
            free(d);
        }
    }
    /* DynamoDB keeps a set's members in its own order (GetItem answers in it, not as
     * written); sorting them also finds a repeated member, side by side. */
    int ordered = order_set(arr, t);
    if (ordered == 1) return duplicates_error(arr, t, err);
    if (ordered < 0) return err_set(err, QR_E_INTERNAL, "out of memory ordering a set");
    return 0;
}

/* The boolean member type ("BOOL", "NULL") of av, a boolean's word read as DynamoDB's
 * reader reads it. */
static int read_boolean(json_t *av, const char *type, qr_err *err)
{
    json_t *fixed = NULL;
    if (value_wire_check(json_object_get(av, type), WIRE_BOOLEAN, 1, &fixed, err)) return -1;
    if (fixed) json_object_set_new(av, type, fixed);
    return 0;
}

/* value_validate with the deepest nesting allowed as a parameter. */
static int validate(json_t *av, int depth, int limit, const char *what, qr_err *err)
{
    if (value_wire_check(av, WIRE_STRUCTURE, 0, NULL, err)) return -1;
    if (json_object_size(av) == 0)
        return err_validation(err, "Supplied AttributeValue is empty, must contain exactly one of "
                                   "the supported datatypes");
    if (json_object_size(av) > 1)
        return err_validation(err, "Supplied AttributeValue has more than one datatypes set, must "
                                   "contain exactly one of the supported datatypes");
    qr_type t = value_type(av);
    if (t == QR_T_NONE)
        return err_validation(err, "Supplied AttributeValue is empty, must contain exactly one of "
                                   "the supported datatypes");
    if (depth > limit) return err_validation(err, QR_MSG_TOO_DEEP);
    json_t *p = value_payload(av);
    switch (t) {
    case QR_T_S:
        return value_wire_check(p, WIRE_STRING, 1, NULL, err);
    case QR_T_N:
        return normalise_number(p, err);
    case QR_T_B: {
        if (value_wire_check(p, WIRE_BLOB, 1, NULL, err)) return -1;
        unsigned char *d;
        size_t len;
        if (value_binary(p, &d, &len))
            return err_set(err, QR_E_SERIALIZATION,
                           "Base64 encoded length is expected a multiple of 4 bytes but found: %zu",
                           json_string_length(p));
        free(d);
        return 0;
    }
    case QR_T_BOOL:
        return read_boolean(av, "BOOL", err);
    case QR_T_NULL:
        if (read_boolean(av, "NULL", err)) return -1;
        if (!json_is_true(value_payload(av)))
            return err_validation(err, QR_MSG_INVALID_PARAMETER
                                  "Null attribute "
                                  "value types must have the value of true");
        return 0;
    case QR_T_M: {
        if (value_wire_check(p, WIRE_MAP, 1, NULL, err)) return -1;
        const char *k;
        json_t *v;
        json_object_foreach(p, k, v)
        {
            if (validate(v, depth + 1, limit, k, err)) return -1;
        }
        return 0;
    }
    case QR_T_L: {
        if (value_wire_check(p, WIRE_LIST, 1, NULL, err)) return -1;
        size_t i;
        json_t *v;
        json_array_foreach(p, i, v)
        {
            if (validate(v, depth + 1, limit, what, err)) return -1;
        }
        return 0;
    }
    case QR_T_SS:
    case QR_T_NS:
    case QR_T_BS:
        return validate_set(p, t, err);
    default:
        return err_validation(err, "Supplied AttributeValue is empty, must contain exactly one of "
                                   "the supported datatypes");
    }
}

int value_validate(json_t *av, int depth, const char *what, qr_err *err)
{
    return validate(av, depth, QR_MAX_DEPTH, what, err);
}

int value_validate_any_depth(json_t *av, const char *what, qr_err *err)
{
    return validate(av, 1, INT_MAX, what, err);
}

int value_error_is_malformed(const qr_err *e)
{
    static const char *const starts[] = {"The parameter cannot be converted to a numeric value",
                                         "Number overflow.",
                                         "Number underflow.",
                                         "Attempting to store more than 38 significant digits",
                                         "Input collection contains duplicates",
                                         QR_MSG_INVALID_PARAMETER "Input collection ",
                                         NULL};
    if (e->type == NULL || strcmp(e->type, QR_E_VALIDATION) != 0) return 0;
    for (int i = 0; starts[i]; i++)
        if (strncmp(e->msg, starts[i], strlen(starts[i])) == 0) return 1;
    return 0;
}

int value_nesting_most(const json_t *values)
{
    int deepest = 0, d;
    const char *k;
    size_t i;
    json_t *v;
    if (json_is_object(values)) {
        json_object_foreach((json_t *)values, k, v) if ((d = value_nesting(v)) > deepest) deepest =
            d;
    } else if (json_is_array(values)) {
        json_array_foreach((json_t *)values, i, v) if ((d = value_nesting(v)) > deepest) deepest =
            d;
    }
    return deepest;
}

int value_nesting(const json_t *av)
{
    qr_type t = value_type(av);
    if (t != QR_T_M && t != QR_T_L) return 1;
    return 1 + value_nesting_most(value_payload(av));
}

int item_validate(json_t *item, qr_err *err)
{
    size_t size;
    return item_validate_size(item, &size, err);
}

/* True if no map inside the (valid) AttributeValue av has a key longer than DynamoDB
 * allows: the limit holds for names at every depth, not only at the top. */
static int nested_names_fit(const json_t *av)
{
    qr_type t = value_type(av);
    json_t *p = value_payload(av);
    if (t == QR_T_M) {
        const char *k;
        json_t *v;
        json_object_foreach(p, k, v)
        {
            if (strlen(k) > QR_MAX_NAME_SIZE || !nested_names_fit(v)) return 0;
        }
    } else if (t == QR_T_L) {
        size_t i;
        json_t *v;
        json_array_foreach(p, i, v)
        {
            if (!nested_names_fit(v)) return 0;
        }
    }
    return 1;
}

int item_check_names(const json_t *item, qr_err *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)item, k, v)
    {
        if (strlen(k) > QR_MAX_NAME_SIZE || !nested_names_fit(v))
            return err_validation(err, QR_MSG_NAME_TOO_LARGE);
    }
    return 0;
}

int item_validate_size(json_t *item, size_t *size, qr_err *err)
{
    if (!json_is_object(item))
        return err_set(err, QR_E_SERIALIZATION, "Item must be a map of attribute names to values");
    const char *k;
    json_t *v;
    json_object_foreach(item, k, v)
    {
        if (k[0] == '\0')
            return err_validation(err, QR_MSG_INVALID_PARAMETER
                                  "An "
                                  "AttributeValue may not contain an empty attribute name");
        if (strlen(k) > QR_MAX_NAME_SIZE) return err_validation(err, QR_MSG_NAME_TOO_LARGE);
        if (value_validate(v, 1, k, err)) return -1;
        if (!nested_names_fit(v)) return err_validation(err, QR_MSG_NAME_TOO_LARGE);
    }
    *size = item_size(item);
    if (*size > QR_MAX_ITEM_SIZE) return err_validation(err, QR_MSG_ITEM_TOO_LARGE);
    return 0;
}

/* ---- comparison ---- */

static int bytes_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn ? 1 : 0;
}

int value_compare(const json_t *a, const json_t *b, int *cmp)
{
    qr_type ta = value_type(a), tb = value_type(b);
    if (ta != tb) return -1;
    json_t *pa = value_payload(a), *pb = value_payload(b);
    switch (ta) {
    case QR_T_S:
        *cmp = bytes_cmp((const unsigned char *)json_string_value(pa), json_string_length(pa),
                         (const unsigned char *)json_string_value(pb), json_string_length(pb));
        return 0;
    case QR_T_N: {
        qr_num x, y;
        if (value_number(pa, &x) || value_number(pb, &y)) return -1;
        *cmp = num_cmp(&x, &y);
        return 0;
    }
    case QR_T_B: {
        unsigned char *x, *y;
        size_t xn, yn;
        if (value_binary(pa, &x, &xn)) return -1;
        if (value_binary(pb, &y, &yn)) {
            free(x);
            return -1;
        }
        *cmp = bytes_cmp(x, xn, y, yn);
        free(x);
        free(y);
        return 0;
    }
    default:
        return -1;
    }
}

/* Equality of two set elements of type elem given as JSON strings. */
static int element_equal(const json_t *a, const json_t *b, qr_type elem)
{
    if (elem == QR_T_N) {
        qr_num x, y;
        if (value_number(a, &x) || value_number(b, &y)) return json_equal((json_t *)a, (json_t *)b);
        return num_cmp(&x, &y) == 0;
    }
    return json_string_length(a) == json_string_length(b) &&
           memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
}

int value_equal(const json_t *a, const json_t *b)
{
    qr_type t = value_type(a);
    if (t == QR_T_NONE || t != value_type(b)) return 0;
    json_t *pa = value_payload(a), *pb = value_payload(b);
    switch (t) {
    case QR_T_S:
    case QR_T_B:
        return element_equal(pa, pb, t);
    case QR_T_N:
        return element_equal(pa, pb, QR_T_N);
    case QR_T_BOOL:
    case QR_T_NULL:
        return json_is_true(pa) == json_is_true(pb);
    case QR_T_L: {
        size_t n = json_array_size(pa);
        if (n != json_array_size(pb)) return 0;
        for (size_t i = 0; i < n; i++)
            if (!value_equal(json_array_get(pa, i), json_array_get(pb, i))) return 0;
        return 1;
    }
    case QR_T_M: {
        if (json_object_size(pa) != json_object_size(pb)) return 0;
        const char *k;
        json_t *v;
        json_object_foreach(pa, k, v)
        {
            json_t *w = json_object_get(pb, k);
            if (w == NULL || !value_equal(v, w)) return 0;
        }
        return 1;
    }
    case QR_T_SS:
    case QR_T_NS:
    case QR_T_BS: {
        qr_type elem = t == QR_T_SS ? QR_T_S : t == QR_T_NS ? QR_T_N : QR_T_B;
        size_t n = json_array_size(pa);
        if (n != json_array_size(pb)) return 0;
        for (size_t i = 0; i < n; i++) {
            int found = 0;
            for (size_t j = 0; j < n && !found; j++)
                found = element_equal(json_array_get(pa, i), json_array_get(pb, j), elem);
            if (!found) return 0;
        }
        return 1;
    }
    default:
        return 0;
    }
}

/* ---- text ---- */

#define DUMP_MAX_DEPTH 64

/* Whether n bytes at s go into a JSON string unescaped by jansson, and are ASCII. */
static int plain_text(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return 0;
    }
    return 1;
}

static int put_quoted(buf *out, const char *s, size_t n)
{
    if (!plain_text(s, n) || buf_reserve(out, n + 2)) return -1;
    char *p = out->data + out->len;
    p[0] = '"';
    memcpy(p + 1, s, n);
    p[n + 1] = '"';
    out->len += n + 2;
    out->data[out->len] = '\0';
    return 0;
}

/* Writes v, or returns -1 when it holds something left to jansson (or out is full). */
static int dump_plain(buf *out, const json_t *v, int depth)
{
    if (depth > DUMP_MAX_DEPTH) return -1;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (buf_putc(out, '{')) return -1;
        int first = 1;
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            if (!first && buf_putc(out, ',')) return -1;
            first = 0;
            if (put_quoted(out, json_object_iter_key(it), json_object_iter_key_len(it)) ||
                buf_putc(out, ':') || dump_plain(out, json_object_iter_value(it), depth + 1))
                return -1;
        }
        return buf_putc(out, '}');
    }
    case JSON_ARRAY: {
        if (buf_putc(out, '[')) return -1;
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++)
            if ((i && buf_putc(out, ',')) || dump_plain(out, json_array_get(v, i), depth + 1))
                return -1;
        return buf_putc(out, ']');
    }
    case JSON_STRING:
        return put_quoted(out, json_string_value(v), json_string_length(v));
    case JSON_TRUE:
        return buf_append(out, "true", 4);
    case JSON_FALSE:
        return buf_append(out, "false", 5);
    case JSON_NULL:
        return buf_append(out, "null", 4);
    default:
        return -1; /* numbers: jansson's formatting */
    }
}

int value_dump(buf *out, const json_t *v)
{
    size_t start = out->len;
    if (v && dump_plain(out, v, 0) == 0) return 0;
    out->len = start;
    if (out->data) out->data[start] = '\0';
    if (v == NULL) return -1;
    /* jansson straight into the buffer: guess the room, and retry once with the size it
     * reports if the guess was short (json_dumpb counts rather than failing). */
    size_t room = out->max - start < 512 ? out->max - start : 512;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (buf_reserve(out, room)) break;
        size_t n = json_dumpb(v, out->data + start, room, JSON_COMPACT | JSON_ENCODE_ANY);
        if (n == 0) break;
        if (n <= room) {
            out->len = start + n;
            out->data[out->len] = '\0';
            return 0;
        }
        room = n;
    }
    if (out->data) out->data[start] = '\0';
    return -1;
}

/* ---- size ---- */

static size_t b64_decoded_len(const json_t *s)
{
    size_t n = json_string_length(s);
    const char *p = json_string_value(s);
    if (n < 4) return 0;
    size_t m = n / 4 * 3;
    if (p[n - 1] == '=') m--;
    if (p[n - 2] == '=') m--;
    return m;
}

static size_t number_text_size(const json_t *s)
{
    qr_num n;
    if (value_number(s, &n)) return json_string_length(s);
    return num_size(&n);
}

size_t value_size(const json_t *av)
{
    json_t *p = value_payload(av);
    size_t size = 0, i;
    json_t *v;
    const char *k;
    switch (value_type(av)) {
    case QR_T_S:
        return json_string_length(p);
    case QR_T_N:
        return number_text_size(p);
    case QR_T_B:
        return b64_decoded_len(p);
    case QR_T_BOOL:
    case QR_T_NULL:
        return 1;
    case QR_T_M:
        size = 3;
        json_object_foreach(p, k, v) size += strlen(k) + value_size(v) + 1;
        return size;
    case QR_T_L:
        size = 3;
        json_array_foreach(p, i, v) size += value_size(v) + 1;
        return size;
    case QR_T_SS:
        json_array_foreach(p, i, v) size += json_string_length(v);
        return size;
    case QR_T_NS:
        json_array_foreach(p, i, v) size += number_text_size(v);
        return size;
    case QR_T_BS:
        json_array_foreach(p, i, v) size += b64_decoded_len(v);
        return size;
    default:
        return 0;
    }
}

size_t item_size(const json_t *item)
{
    size_t size = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)item, k, v) size += strlen(k) + value_size(v);
    return size;
}

/* ---- what an item counts toward a Query or Scan page ---- */

size_t scalar_page_size(qr_type type, size_t size)
{
    if (type != QR_T_S) return size + 1;
    return size + (size < 128 ? 1 : size < 16384 ? 2 : 3);
}

/* A value's count inside the item: its size and the bytes that frame it. */
static size_t value_page_size(const json_t *av)
{
    json_t *p = value_payload(av), *v;
    size_t size, i;
    const char *k;
    switch (value_type(av)) {
    case QR_T_S:
    case QR_T_N:
    case QR_T_B:
        return scalar_page_size(value_type(av), value_size(av));
    case QR_T_SS:
    case QR_T_NS:
    case QR_T_BS:
        return value_size(av) + json_array_size(p) + 1;
    case QR_T_BOOL:
        return 1;
    case QR_T_M:
        size = 3;
        json_object_foreach(p, k, v) size += 2 + value_page_size(v);
        return size;
    case QR_T_L:
        size = 3;
        json_array_foreach(p, i, v) size += 1 + value_page_size(v);
        return size;
    default: /* NULL */
        return 0;
    }
}

size_t item_page_size(const json_t *item, const char *range_key)
{
    size_t rest = 0, range = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)item, k, v)
    {
        if (range_key && strcmp(k, range_key) == 0)
            range = value_size(v);
        else
            rest += 1 + value_page_size(v);
    }
    return item_page_total(rest, range);
}

size_t item_page_total(size_t rest, size_t range)
{
    return 2 + rest + (1 + (1 + rest) / 3072) * (18 + range);
}
