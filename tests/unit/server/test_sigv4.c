/* test_sigv4.c — SigV4 verification against AWS's published test suite, and its errors.
 *
 * The signed requests below are vectors of AWS's SigV4 test suite (access key
 * AKIDEXAMPLE, region us-east-1, service "service", 20150830T123600Z): each must verify,
 * and altered copies must fail with DynamoDB's error types and messages. Also covers
 * reading AWS shared-credentials files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/sigv4.h"

#include "check.h"

#define SUITE_NOW 1440938160 /* 2015-08-30T12:36:00Z */
#define SUITE_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_CREDENTIALS                                                                          \
    "# the test suite's key\n[default]\naws_access_key_id = AKIDEXAMPLE\n"                         \
    "aws_secret_access_key = " SUITE_SECRET "\n"
#define SCOPE "Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "

/* A raw HTTP request of the test suite, split into a sigv4_request (pointing into text). */
typedef struct parsed {
    char *text;
    char method[16];
    char *path;
    sigv4_pair query[16];
    sigv4_pair headers[16];
    sigv4_request req;
} parsed;

static void parse_raw(parsed *p, const char *raw)
{
    memset(p, 0, sizeof *p);
    p->text = strdup(raw);
    char *line = p->text, *nl = strchr(line, '\n');
    *nl = '\0';
    char *sp = strchr(line, ' ');
    snprintf(p->method, sizeof p->method, "%.*s", (int)(sp - line), line);
    char *target = sp + 1;
    char *ver = strstr(target, " HTTP/1.1");
    *ver = '\0';
    char *q = strchr(target, '?');
    size_t nq = 0;
    if (q) {
        *q++ = '\0';
        while (q && *q) {
            char *amp = strchr(q, '&');
            if (amp) *amp = '\0';
            char *eq = strchr(q, '=');
            sigv4_pair *pr = &p->query[nq++];
            pr->name = q;
            pr->name_len = eq ? (size_t)(eq - q) : strlen(q);
            pr->value = eq ? eq + 1 : NULL;
            pr->value_len = eq ? strlen(eq + 1) : 0;
            q = amp ? amp + 1 : NULL;
        }
    }
    p->path = target;
    size_t nh = 0;
    line = nl + 1;
    while (*line != '\n') {
        nl = strchr(line, '\n');
        *nl = '\0';
        char *colon = strchr(line, ':');
        sigv4_pair *h = &p->headers[nh++];
        h->name = line;
        h->name_len = (size_t)(colon - line);
        h->value = colon + 1;
        h->value_len = strlen(colon + 1);
        line = nl + 1;
    }
    char *body = line + 1;
    p->req = (sigv4_request){p->method, p->path, p->query, nq, p->headers, nh, body, strlen(body)};
}

static sigv4_keyring suite_keys(void)
{
    sigv4_keyring kr;
    char err[256];
    if (sigv4_keyring_parse(&kr, SUITE_CREDENTIALS, strlen(SUITE_CREDENTIALS), "suite", err,
                            sizeof err)) {
        fprintf(stderr, "cannot parse the suite's credentials: %s\n", err);
        exit(1);
    }
    return kr;
}

/* Verifies raw with the suite's key and clock; returns the error type or NULL. */
static const char *verify_raw(const char *raw, const sigv4_keyring *kr, const char *service,
                              long now, qr_err *e)
{
    parsed p;
    parse_raw(&p, raw);
    err_init(e);
    int rc = sigv4_verify(&p.req, kr, service, (time_t)now, NULL, 0, e);
    free(p.text);
    return rc == 0 ? NULL : e->type;
}

typedef struct vector {
    const char *name;
    const char *raw;
} vector;

static const vector suite[] = {
    {"get-vanilla",
     "GET / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:20150830T123600Z\n"
     "Authorization:AWS4-HMAC-SHA256 " SCOPE "SignedHeaders=host;x-amz-date, "
     "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31\n\n"},
    {"post-vanilla",
     "POST / HTTP/1.1\nHost:example.amazonaws.com\nX-Amz-Date:20150830T123600Z\n"
     "Authorization:AWS4-HMAC-SHA256 " SCOPE "SignedHeaders=host;x-amz-date, "
     "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b\n\n"},
    {"get-vanilla-query-order-key-case",
     "GET /?Param2=value2&Param1=value1 HTTP/1.1\nHost:example.amazonaws.com\n"
     "Authorization:AWS4-HMAC-SHA256 " SCOPE "SignedHeaders=host;x-amz-date, "
     "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"get-header-key-duplicate",
     "GET / HTTP/1.1\nHost:example.amazonaws.com\nMy-Header1:value2\nMy-Header1:value2\n"
     "My-Header1:value1\nAuthorization:AWS4-HMAC-SHA256 " SCOPE
     "SignedHeaders=host;my-header1;x-amz-date, "
     "Signature=c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"get-header-value-trim",
     "GET / HTTP/1.1\nHost:example.amazonaws.com\nMy-Header1: value1\nMy-Header2: \"a   b   c\"\n"
     "Authorization:AWS4-HMAC-SHA256 " SCOPE "SignedHeaders=host;my-header1;my-header2;x-amz-date, "
     "Signature=acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"get-unreserved",
     "GET /-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz HTTP/1.1\n"
     "Host:example.amazonaws.com\nAuthorization:AWS4-HMAC-SHA256 " SCOPE
     "SignedHeaders=host;x-amz-date, "
     "Signature=07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"get-utf8",
     "GET /\xe1\x88\xb4 HTTP/1.1\nHost:example.amazonaws.com\nAuthorization:AWS4-HMAC-SHA256 " SCOPE
     "SignedHeaders=host;x-amz-date, "
     "Signature=8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"get-space-normalized",
     "GET /example space/ "
     "HTTP/1.1\nHost:example.amazonaws.com\nAuthorization:AWS4-HMAC-SHA256 " SCOPE
     "SignedHeaders=host;x-amz-date, "
     "Signature=652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"get-slash-dot-slash-normalized",
     "GET /./ HTTP/1.1\nHost:example.amazonaws.com\nAuthorization:AWS4-HMAC-SHA256 " SCOPE
     "SignedHeaders=host;x-amz-date, "
     "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"get-vanilla-utf8-query",
     "GET /?\xe1\x88\xb4=bar "
     "HTTP/1.1\nHost:example.amazonaws.com\nAuthorization:AWS4-HMAC-SHA256 " SCOPE
     "SignedHeaders=host;x-amz-date, "
     "Signature=2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"post-header-key-sort",
     "POST / "
     "HTTP/"
     "1.1\nHost:example.amazonaws.com\nMy-Header1:value1\nAuthorization:AWS4-HMAC-SHA256 " SCOPE
     "SignedHeaders=host;my-header1;x-amz-date, "
     "Signature=c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c\n"
     "X-Amz-Date:20150830T123600Z\n\n"},
    {"post-x-www-form-urlencoded",
     "POST / HTTP/1.1\nContent-Type:application/x-www-form-urlencoded\nHost:example.amazonaws.com\n"
     "Content-Length:13\n"
     "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e\n"
     "Authorization:AWS4-HMAC-SHA256 " SCOPE
     "SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date, "
     "Signature=d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b\n"
     "X-Amz-Date:20150830T123600Z\n\nParam1=value1"},
};

static void test_suite_vectors(void)
{
    sigv4_keyring kr = suite_keys();
    for (size_t i = 0; i < sizeof suite / sizeof suite[0]; i++) {
        qr_err e;
        const char *type = verify_raw(suite[i].raw, &kr, "service", SUITE_NOW, &e);
        if (type) fprintf(stderr, "vector %s: %s: %s\n", suite[i].name, type, e.msg);
        CHECK_THAT(type == NULL);
    }
    sigv4_keyring_free(&kr);
}

static void test_canonical_request(void)
{
    parsed p;
    parse_raw(&p, suite[0].raw);
    buf b;
    buf_init(&b, 0);
    char empty[65];
    sigv4_sha256_hex("", 0, empty);
    CHECK_STR(empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK_THAT(sigv4_canonical_request(&p.req, "host;x-amz-date", 15, empty, &b) == 0);
    CHECK_STR(b.data, "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
                      "host;x-amz-date\n"
                      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    char h[65];
    sigv4_sha256_hex(b.data, b.len, h);
    CHECK_STR(h, "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
    char sig[65];
    const char *sts =
        "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
        "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63";
    CHECK_THAT(
        sigv4_sign(SUITE_SECRET, "20150830", "us-east-1", "service", sts, strlen(sts), sig) == 0);
    CHECK_STR(sig, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    /* Twice, so the second answer comes from the per-thread key cache. */
    CHECK_THAT(
        sigv4_sign(SUITE_SECRET, "20150830", "us-east-1", "service", sts, strlen(sts), sig) == 0);
    CHECK_STR(sig, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
    CHECK_THAT(sigv4_sign("other", "20150830", "us-east-1", "service", sts, strlen(sts), sig) == 0);
    CHECK_THAT(strcmp(sig, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31") !=
               0);
    /* Back to the first key: the thread's keyed HMAC context must take it up again. */
    CHECK_THAT(
        sigv4_sign(SUITE_SECRET, "20150830", "us-east-1", "service", sts, strlen(sts), sig) == 0);
    CHECK_STR(sig, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");

    /* Path normalisation: dot segments, repeated slashes, and a '%' encoded again. */
    const char *paths[][2] = {
        {"/a/./b/../c//d/", "/a/c/d/"}, {"", "/"}, {"/..", "/"}, {"/%41", "/%2541"}, {"//", "/"}};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        sigv4_request r = {"GET", paths[i][0], NULL, 0, NULL, 0, "", 0};
        buf_reset(&b);
        CHECK_THAT(sigv4_canonical_request(&r, "", 0, empty, &b) == 0);
        char want[128];
        snprintf(want, sizeof want, "GET\n%s\n\n\n\n%s", paths[i][1], empty);
        CHECK_STR(b.data, want);
    }
    /* Query: decoded, re-encoded strictly, sorted by name then value; "k" means "k=". */
    sigv4_pair q[] = {{"b", 1, "2", 1}, {"a", 1, "z", 1}, {"a", 1, "y%20x", 5}, {"c", 1, NULL, 0}};
    sigv4_request r = {"GET", "/", q, 4, NULL, 0, "", 0};
    buf_reset(&b);
    CHECK_THAT(sigv4_canonical_request(&r, "", 0, empty, &b) == 0);
    CHECK_THAT(strncmp(b.data, "GET\n/\na=y%20x&a=z&b=2&c=\n", 25) == 0);
    /* Header values: trimmed, tabs and runs of blanks collapsed, single spaces kept as they
     * are (those take the one-copy course); names lowercased. */
    const char *values[][2] = {
        {" a b c ", "a b c"},   {"a\tb", "a b"},  {"\t a \t\t b  c\t", "a b c"},
        {"a  b", "a b"},        {"a b  ", "a b"}, {"  ", ""},
        {"x y z w", "x y z w"}, {"a \tb", "a b"}, {"a", "a"}};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        sigv4_pair hd[] = {{"X-Test", 6, values[i][0], strlen(values[i][0])}};
        sigv4_request hr = {"POST", "/", NULL, 0, hd, 1, "", 0};
        buf_reset(&b);
        CHECK_THAT(sigv4_canonical_request(&hr, "X-TEST", 6, empty, &b) == 0);
        char want[256];
        snprintf(want, sizeof want, "POST\n/\n\nx-test:%s\n\nX-TEST\n%s", values[i][1], empty);
        CHECK_STR(b.data, want);
    }
    buf_free(&b);
    free(p.text);
}

/* get-vanilla with one piece replaced. */
static char *variant(const char *from, const char *to)
{
    const char *raw = suite[0].raw;
    const char *at = strstr(raw, from);
    if (at == NULL) {
        fprintf(stderr, "variant: '%s' not in the vector\n", from);
        exit(1);
    }
    size_t n = strlen(raw) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - raw), raw, to, at + strlen(from));
    return out;
}

static void expect_error(const char *raw, const sigv4_keyring *kr, const char *service, long now,
                         const char *type, const char *msg_prefix)
{
    qr_err e;
    const char *got = verify_raw(raw, kr, service, now, &e);
    CHECK_STR(got, type);
    CHECK(got == NULL || strncmp(e.msg, msg_prefix, strlen(msg_prefix)) == 0,
          "message '%s'\n  does not start with '%s'", e.msg, msg_prefix);
}

static void test_errors(void)
{
    sigv4_keyring kr = suite_keys();
    char *r;

    r = variant("Authorization:AWS4-HMAC-SHA256", "X-Other:AWS4-HMAC-SHA256");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_MISSING,
                 "Request is missing Authentication Token");
    expect_error(r, NULL, "service", SUITE_NOW, SIGV4_E_MISSING,
                 "Request is missing Authentication Token");
    free(r);

    r = variant("Authorization:AWS4-HMAC-SHA256", "Authorization:Basic abc");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_MISSING,
                 "Request is missing Authentication Token");
    free(r);

    r = variant(", Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31", "");
    expect_error(
        r, &kr, "service", SUITE_NOW, SIGV4_E_INCOMPLETE,
        "Authorization header requires 'Signature' parameter. Authorization=AWS4-HMAC-SHA256 ");
    free(r);

    r = variant("X-Amz-Date:20150830T123600Z\n", "");
    expect_error(
        r, &kr, "service", SUITE_NOW, SIGV4_E_INCOMPLETE,
        "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ");
    free(r);

    r = variant("X-Amz-Date:20150830T123600Z", "X-Amz-Date:2015-08-30");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INCOMPLETE,
                 "Date must be in ISO-8601 'basic format'. Got '2015-08-30'.");
    free(r);

    /* Clock skew past 15 minutes, both ways. */
    expect_error(suite[0].raw, &kr, "service", SUITE_NOW + 16 * 60, SIGV4_E_INVALID,
                 "Signature expired: 20150830T123600Z is now earlier than 20150830T123700Z "
                 "(20150830T125200Z - 15 min.)");
    expect_error(suite[0].raw, &kr, "service", SUITE_NOW - 16 * 60, SIGV4_E_INVALID,
                 "Signature not yet current: 20150830T123600Z is still later than "
                 "20150830T123500Z (20150830T122000Z + 15 min.)");
    {
        qr_err e;
        CHECK_THAT(verify_raw(suite[0].raw, &kr, "service", SUITE_NOW + 14 * 60, &e) == NULL);
        CHECK_THAT(verify_raw(suite[0].raw, &kr, "service", SUITE_NOW - 14 * 60, &e) == NULL);
    }

    /* Dates across a leap day and a year end, parsed and formatted without the C library. */
    r = variant("X-Amz-Date:20150830T123600Z", "X-Amz-Date:20000229T235959Z");
    expect_error(r, &kr, "service", 951868799L + 16 * 60, SIGV4_E_INVALID,
                 "Signature expired: 20000229T235959Z is now earlier than 20000301T000059Z "
                 "(20000301T001559Z - 15 min.)");
    free(r);
    r = variant("X-Amz-Date:20150830T123600Z", "X-Amz-Date:20231231T235000Z");
    expect_error(r, &kr, "service", 1704066600L - 16 * 60, SIGV4_E_INVALID,
                 "Signature not yet current: 20231231T235000Z is still later than 20231231T234900Z "
                 "(20231231T233400Z + 15 min.)");
    free(r);
    r = variant("X-Amz-Date:20150830T123600Z", "X-Amz-Date:20231331T000000Z");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INCOMPLETE,
                 "Date must be in ISO-8601 'basic format'. Got '20231331T000000Z'.");
    free(r);

    r = variant("SignedHeaders=host;x-amz-date", "SignedHeaders=x-amz-date");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INVALID,
                 "'Host' must be a 'SignedHeader' in the AWS Authorization.");
    free(r);

    r = variant("Authorization:AWS4-HMAC-SHA256", "Authorization:AWS4-HMAC-SHA1");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INCOMPLETE,
                 "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA1' (only AWS4-HMAC-SHA256 for now). ");
    free(r);

    r = variant("Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request",
                "Credential=AKIDEXAMPLE/20150830/us-east-1/service");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INCOMPLETE,
                 "Credential must have exactly 5 slash-delimited elements, e.g. "
                 "keyid/date/region/service/term, got 'AKIDEXAMPLE/20150830/us-east-1/service'");
    free(r);

    /* Trailing slashes on the credential are ignored. */
    r = variant("aws4_request,", "aws4_request//,");
    {
        qr_err e;
        CHECK_THAT(verify_raw(r, &kr, "service", SUITE_NOW, &e) == NULL);
    }
    free(r);

    expect_error(suite[0].raw, &kr, "dynamodb", SUITE_NOW, SIGV4_E_INVALID,
                 "Credential should be scoped to correct service: 'dynamodb'.");

    r = variant("Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request",
                "Credential=AKIDEXAMPLE/20150831/us-east-1/service/aws4_requesx");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INVALID,
                 "Credential should be scoped with a valid terminator: 'aws4_request', not "
                 "'aws4_requesx'. Date in Credential scope does not match YYYYMMDD from ISO-8601 "
                 "version of date from HTTP: '20150831' != '20150830', from '20150830T123600Z'.");
    free(r);

    r = variant("Credential=AKIDEXAMPLE/", "Credential=AKIDOTHER/");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_UNRECOGNIZED,
                 "The security token included in the request is invalid.");
    free(r);

    r = variant("Signature=5fa0", "Signature=5fa1");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INVALID,
                 "The request signature we calculated does not match the signature you provided. "
                 "Check your AWS Secret Access Key and signing method. Consult the service "
                 "documentation for details.\n\nThe Canonical String for this request should have "
                 "been\n'GET\n/\n\nhost:example.amazonaws.com\n");
    free(r);

    /* A changed header value or body breaks the signature. */
    r = variant("Host:example.amazonaws.com", "Host:example.amazonaws.org");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INVALID,
                 "The request signature we calculated");
    free(r);
    r = variant("\n\n", "\n\n{}");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INVALID,
                 "The request signature we calculated");
    free(r);

    /* The right key id with the wrong secret. */
    sigv4_keyring wrong;
    const char *text = "[default]\naws_access_key_id=AKIDEXAMPLE\naws_secret_access_key=nope\n";
    char err[256];
    CHECK_THAT(sigv4_keyring_parse(&wrong, text, strlen(text), "t", err, sizeof err) == 0);
    expect_error(suite[0].raw, &wrong, "service", SUITE_NOW, SIGV4_E_INVALID,
                 "The request signature we calculated does not match");
    sigv4_keyring_free(&wrong);

    sigv4_keyring_free(&kr);
}

/* Without a keyring any key passes once the header is complete; the key id is reported. */
static void test_open_mode(void)
{
    parsed p;
    char *r = variant("Signature=5fa0", "Signature=0000");
    parse_raw(&p, r);
    qr_err e;
    err_init(&e);
    char ak[32];
    CHECK_THAT(sigv4_verify(&p.req, NULL, "dynamodb", SUITE_NOW + 86400, ak, sizeof ak, &e) == 0);
    CHECK_STR(ak, "AKIDEXAMPLE");
    free(p.text);
    free(r);
    r = variant(", SignedHeaders=host;x-amz-date", "");
    qr_err e2;
    CHECK_STR(verify_raw(r, NULL, "dynamodb", SUITE_NOW, &e2), SIGV4_E_INCOMPLETE);
    free(r);
}

/* A request dated by the HTTP Date header (RFC 1123) instead of X-Amz-Date. */
static void test_date_header(void)
{
    sigv4_keyring kr = suite_keys();
    sigv4_pair h[2] = {{"Host", 4, "example.amazonaws.com", 21},
                       {"Date", 4, "Sun, 30 Aug 2015 12:36:00 GMT", 29}};
    sigv4_request req = {"GET", "/", NULL, 0, h, 2, "", 0};
    buf canon;
    buf_init(&canon, 0);
    char empty[65], ch[65], sig[65];
    sigv4_sha256_hex("", 0, empty);
    CHECK_THAT(sigv4_canonical_request(&req, "date;host", 9, empty, &canon) == 0);
    sigv4_sha256_hex(canon.data, canon.len, ch);
    char sts[256];
    snprintf(sts, sizeof sts,
             "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n%s", ch);
    CHECK_THAT(
        sigv4_sign(SUITE_SECRET, "20150830", "us-east-1", "service", sts, strlen(sts), sig) == 0);
    char auth[256];
    snprintf(auth, sizeof auth, "AWS4-HMAC-SHA256 " SCOPE "SignedHeaders=date;host, Signature=%s",
             sig);
    sigv4_pair h3[3] = {h[0], h[1], {"Authorization", 13, auth, strlen(auth)}};
    req.headers = h3;
    req.n_headers = 3;
    qr_err e;
    err_init(&e);
    int rc = sigv4_verify(&req, &kr, "service", SUITE_NOW, NULL, 0, &e);
    if (rc) fprintf(stderr, "date header: %s: %s\n", e.type, e.msg);
    CHECK_THAT(rc == 0);
    buf_free(&canon);
    sigv4_keyring_free(&kr);
}

/* Malformed Authorization and date headers: always an authentication error, never a
 * crash or an overrun (run under ASan by make test). */
static void test_malformed(void)
{
    sigv4_keyring kr = suite_keys();
    static char big[9000];
    memset(big, 'A', sizeof big - 1);
    char longcred[9200];
    snprintf(longcred, sizeof longcred,
             "AWS4-HMAC-SHA256 Credential=%s/20150830/us-east-1/service/aws4_request, "
             "SignedHeaders=host, Signature=00",
             big);
    char longalg[9200];
    snprintf(longalg, sizeof longalg, "AWS4-%s Credential=a", big);
    const char *auths[] = {
        "AWS4-",
        "AWS4-HMAC-SHA256",
        "AWS4-HMAC-SHA256 ",
        "AWS4-HMAC-SHA256 Credential",
        "AWS4-HMAC-SHA256 Credential=, SignedHeaders=, Signature=",
        "AWS4-HMAC-SHA256 Credential=a/b/c/d/e/f/g, SignedHeaders=host, Signature=x",
        "AWS4-HMAC-SHA256 ,,,,,===,=,",
        "AWS4-HMAC-SHA256 Credential=////, SignedHeaders=host, Signature=x",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        "SignedHeaders=;;;host;;;;, "
        "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        "SignedHeaders=host;x-amz-date;missing-header, Signature=5fa0",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830//service/aws4_request, "
        "SignedHeaders=host, Signature=5fa0",
        longcred,
        longalg,
    };
    const char *dates[] = {"20150830T123600Z",
                           "99999999T999999Z",
                           "",
                           "2015",
                           "00000000T000000Z",
                           "Sun, 30 Aug 2015 12:36:00 GMT",
                           "Sun, 99 Foo 2015 12:36:00 GMT"};
    for (size_t i = 0; i < sizeof auths / sizeof auths[0]; i++) {
        for (size_t d = 0; d < sizeof dates / sizeof dates[0]; d++) {
            sigv4_pair h[3] = {
                {"Host", 4, "example.amazonaws.com", 21},
                {d < 5 ? "X-Amz-Date" : "Date", d < 5 ? 10u : 4u, dates[d], strlen(dates[d])},
                {"Authorization", 13, auths[i], strlen(auths[i])}};
            sigv4_request req = {"GET", "/", NULL, 0, h, 3, "", 0};
            for (int open = 0; open < 2; open++) {
                qr_err e;
                err_init(&e);
                char ak[64];
                int rc =
                    sigv4_verify(&req, open ? NULL : &kr, "service", SUITE_NOW, ak, sizeof ak, &e);
                if (open) continue; /* without keys some of these are acceptable */
                CHECK_THAT(rc == -1);
                CHECK_THAT(e.type != NULL && (strcmp(e.type, SIGV4_E_INCOMPLETE) == 0 ||
                                              strcmp(e.type, SIGV4_E_INVALID) == 0 ||
                                              strcmp(e.type, SIGV4_E_UNRECOGNIZED) == 0 ||
                                              strcmp(e.type, SIGV4_E_MISSING) == 0));
            }
        }
    }
    sigv4_keyring_free(&kr);
}

/* What the signature must cover and how the Authorization header may be written: every
 * X-Amz-* header present signed; each parameter once, none unknown; one header. */
static void test_coverage(void)
{
    sigv4_keyring kr = suite_keys();
    char *r = variant("X-Amz-Date:", "X-Amz-Target:DynamoDB_20120810.DeleteTable\nX-Amz-Date:");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INVALID,
                 "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization.");
    free(r);
    r = variant("X-Amz-Date:", "x-amz-security-token:abc\nX-Amz-Date:");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INVALID,
                 "'X-Amz-Security-Token' must be a 'SignedHeader' in the AWS Authorization.");
    free(r);
    /* Unsigned headers other than X-Amz-* stay allowed (the suite's vectors have some). */
    r = variant("X-Amz-Date:", "User-Agent:test\nX-Amz-Date:");
    qr_err e;
    CHECK_THAT(verify_raw(r, &kr, "service", SUITE_NOW, &e) == NULL);
    free(r);

    const char *forms[][2] = {
        {"SignedHeaders=host;x-amz-date, ",
         "'Credential' is given more than once in Authorization header"},
        {"SignedHeaders=host;x-amz-date, Signature=00, ",
         "'Signature' is given more than once in Authorization header"},
        {"SignedHeaders=host;x-amz-date, SignedHeaders=host, ",
         "'SignedHeaders' is given more than once in Authorization header"},
        {"SignedHeaders=host;x-amz-date, Region=us-east-1, ",
         "'Region' is not a parameter of Authorization header"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char to[200];
        snprintf(to, sizeof to, "%s%s", forms[i][0],
                 i == 0 ? "Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " : "");
        r = variant("SignedHeaders=host;x-amz-date, ", to);
        expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INCOMPLETE, forms[i][1]);
        expect_error(r, NULL, "service", SUITE_NOW, SIGV4_E_INCOMPLETE, forms[i][1]);
        free(r);
    }
    r = variant("Authorization:", "Authorization:AWS4-HMAC-SHA256 " SCOPE
                                  "SignedHeaders=host;x-amz-date, Signature=00\nAuthorization:");
    expect_error(r, &kr, "service", SUITE_NOW, SIGV4_E_INCOMPLETE,
                 "The request carries 2 Authorization headers");
    expect_error(r, NULL, "service", SUITE_NOW, SIGV4_E_INCOMPLETE,
                 "The request carries 2 Authorization headers");
    free(r);
    sigv4_keyring_free(&kr);
}

static void test_keyring(void)
{
    sigv4_keyring kr;
    char err[256];
    const char *text = "; comment\r\n"
                       "[default]\r\n"
                       "aws_access_key_id=AKIA1\r\n"
                       "aws_secret_access_key = s1 \r\n"
                       "region = eu-west-1\n"
                       "\n"
                       "[profile ci]\n"
                       "  AWS_ACCESS_KEY_ID =  AKIA2\n"
                       "aws_secret_access_key=s2/with+chars=\n"
                       "aws_session_token = token/of+ci=\n"
                       "[only-region]\n"
                       "region = us-east-1\n"
                       "s3 =\n"
                       "  max_concurrent_requests = 4\n";
    CHECK_THAT(sigv4_keyring_parse(&kr, text, strlen(text), "creds", err, sizeof err) == 0);
    CHECK_THAT(kr.n == 2);
    CHECK_STR(sigv4_keyring_find(&kr, "AKIA1", 5), "s1");
    CHECK_STR(sigv4_keyring_find(&kr, "AKIA2", 5), "s2/with+chars=");
    CHECK_THAT(sigv4_keyring_find(&kr, "AKIA", 4) == NULL);
    CHECK_THAT(sigv4_keyring_find(&kr, "AKIA3", 5) == NULL);
    CHECK_STR(kr.keys[1].profile, "ci");
    CHECK_STR(kr.keys[1].session_token, "token/of+ci=");
    CHECK_THAT(kr.keys[0].session_token == NULL);
    sigv4_keyring_free(&kr);

    const char *half =
        "[a]\naws_access_key_id = X\n[b]\naws_access_key_id=Y\naws_secret_access_key=Z\n";
    CHECK_THAT(sigv4_keyring_parse(&kr, half, strlen(half), "creds", err, sizeof err) == -1);
    CHECK_STR(err,
              "creds: profile [a] (line 1) has aws_access_key_id but no aws_secret_access_key");
    CHECK_THAT(kr.n == 0 && kr.keys == NULL);

    const char *none = "[a]\nregion = x\n";
    CHECK_THAT(sigv4_keyring_parse(&kr, none, strlen(none), "creds", err, sizeof err) == -1);
    CHECK_STR(err, "creds: no profile with both aws_access_key_id and aws_secret_access_key");

    const char *orphan = "aws_access_key_id = X\n";
    CHECK_THAT(sigv4_keyring_parse(&kr, orphan, strlen(orphan), "creds", err, sizeof err) == -1);
    CHECK_STR(err, "creds: line 1: setting outside of any [profile] section");

    const char *junk = "[a]\nthis is not a setting\n";
    CHECK_THAT(sigv4_keyring_parse(&kr, junk, strlen(junk), "creds", err, sizeof err) == -1);
    CHECK_STR(err, "creds: line 2: expected 'key = value' or '[profile]'");

    const char *open = "[a\n";
    CHECK_THAT(sigv4_keyring_parse(&kr, open, strlen(open), "creds", err, sizeof err) == -1);
    CHECK_STR(err, "creds: line 1: a section header must end with ']'");

    const char nul[] = "[a]\naws_access_key_id = X\0Y\n";
    CHECK_THAT(sigv4_keyring_parse(&kr, nul, sizeof nul - 1, "creds", err, sizeof err) == -1);

    CHECK_THAT(sigv4_keyring_load(&kr, "/nonexistent/quarry-credentials", err, sizeof err) == -1);
    CHECK_STR(err, "/nonexistent/quarry-credentials: No such file or directory");

    char path[] = "/tmp/quarry-test-credentials-XXXXXX";
    int fd = mkstemp(path);
    CHECK_THAT(fd >= 0);
    if (fd >= 0) {
        CHECK_THAT(write(fd, SUITE_CREDENTIALS, strlen(SUITE_CREDENTIALS)) ==
                   (ssize_t)strlen(SUITE_CREDENTIALS));
        close(fd);
        CHECK_THAT(sigv4_keyring_load(&kr, path, err, sizeof err) == 0);
        CHECK_STR(sigv4_keyring_find(&kr, "AKIDEXAMPLE", 11), SUITE_SECRET);
        sigv4_keyring_free(&kr);
        unlink(path);
    }
}

/* The region of an Authorization header's credential scope, and headers without one. */
static void test_credential_region(void)
{
    char r[16];
    const char *good = "AWS4-HMAC-SHA256 Credential=AKID/20261130/eu-west-1/dynamodb/aws4_request, "
                       "SignedHeaders=host, Signature=00";
    CHECK_THAT(sigv4_credential_region(good, strlen(good), r, sizeof r) == 0);
    CHECK_STR(r, "eu-west-1");
    const char *bad[] = {
        "",
        "AWS4-HMAC-SHA256",
        "AWS4-HMAC-SHA256 Credential=AKID/20261130",
        "AWS4-HMAC-SHA256 Credential=AKID/20261130/",
        "AWS4-HMAC-SHA256 Credential=AKID/20261130//dynamodb/aws4_request",
        "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1, SignedHeaders=host/a/b",
        "AWS4-HMAC-SHA256 Credential=AKID/20261130/a-region-too-long-to-fit/dynamodb/aws4_request"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strcpy(r, "x");
        CHECK_THAT(sigv4_credential_region(bad[i], strlen(bad[i]), r, sizeof r) == -1);
        CHECK_STR(r, "");
    }
    /* The length bounds the search: a region past it is not read. */
    CHECK_THAT(sigv4_credential_region(good, 40, r, sizeof r) == -1);
}

/* A presigned request: its signing parameters in the query, its signature over the query
 * without X-Amz-Signature; good until X-Amz-Expires after X-Amz-Date. */
static void presigned_verify(const char *expires, const char *drop, long long when,
                             const char *type, const char *msg_part)
{
    sigv4_keyring kr = suite_keys();
    static const char body[] = "{}";
    sigv4_pair h[1] = {{"Host", 4, "example.amazonaws.com", 21}};
    sigv4_pair q[7] = {
        {"X-Amz-Algorithm", 15, "AWS4-HMAC-SHA256", 16},
        {"X-Amz-Credential", 16, "AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice%2Faws4_request", 59},
        {"X-Amz-Date", 10, "20150830T123600Z", 16},
        {"X-Amz-Expires", 13, expires, strlen(expires)},
        {"X-Amz-SignedHeaders", 19, "host", 4}};
    sigv4_request req = {"POST", "/", q, 5, h, 1, body, 2};
    buf canon;
    buf_init(&canon, 0);
    char payload[65], ch[65], sig[65], sts[256];
    sigv4_sha256_hex(body, 2, payload);
    CHECK_THAT(sigv4_canonical_request(&req, "host", 4, payload, &canon) == 0);
    sigv4_sha256_hex(canon.data, canon.len, ch);
    snprintf(sts, sizeof sts,
             "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n%s", ch);
    CHECK_THAT(
        sigv4_sign(SUITE_SECRET, "20150830", "us-east-1", "service", sts, strlen(sts), sig) == 0);
    q[5] = (sigv4_pair){"X-Amz-Signature", 15, sig, 64};
    size_t n = 0;
    for (size_t i = 0; i < 6; i++)
        if (drop == NULL || strncmp(q[i].name, drop, q[i].name_len) != 0) q[n++] = q[i];
    req.n_query = n;
    qr_err e;
    err_init(&e);
    char ak[32];
    int rc = sigv4_verify(&req, &kr, "service", (time_t)when, ak, sizeof ak, &e);
    if (type == NULL) {
        if (rc) fprintf(stderr, "presigned: %s: %s\n", e.type, e.msg);
        CHECK_THAT(rc == 0);
        CHECK_STR(ak, "AKIDEXAMPLE");
    } else {
        CHECK_THAT(rc == -1 && strcmp(e.type, type) == 0 && strstr(e.msg, msg_part) != NULL);
        if (rc == 0 || strstr(e.msg, msg_part) == NULL) fprintf(stderr, "presigned: %s\n", e.msg);
    }
    buf_free(&canon);
    sigv4_keyring_free(&kr);
}

static void test_presigned(void)
{
    presigned_verify("3600", NULL, SUITE_NOW, NULL, NULL);
    presigned_verify("3600", NULL, SUITE_NOW + 3600, NULL, NULL);
    presigned_verify("3600", NULL, SUITE_NOW + 3601, SIGV4_E_INVALID,
                     "Signature expired: 20150830T123600Z is now earlier than 20150830T123601Z "
                     "(20150830T133601Z - 3600 sec.)");
    presigned_verify("3600", NULL, SUITE_NOW - 901, SIGV4_E_INVALID, "Signature not yet current");
    presigned_verify("0", NULL, SUITE_NOW, SIGV4_E_INCOMPLETE,
                     "X-Amz-Expires must be a whole number of seconds from 1 to 604800, not '0'.");
    presigned_verify("3600", "X-Amz-Signature", SUITE_NOW, SIGV4_E_INCOMPLETE,
                     "AWS query-string parameters must include 'X-Amz-Signature'.");
    presigned_verify("3600", "X-Amz-Date", SUITE_NOW, SIGV4_E_INCOMPLETE,
                     "must include 'X-Amz-Date'");
    /* Without X-Amz-Expires the clock skew of a signed header bounds it. */
    presigned_verify("3600", "X-Amz-Expires", SUITE_NOW, SIGV4_E_INVALID,
                     "The request signature we calculated does not match");
}

int main(void)
{
    test_suite_vectors();
    test_canonical_request();
    test_errors();
    test_open_mode();
    test_date_header();
    test_malformed();
    test_coverage();
    test_keyring();
    test_credential_region();
    test_presigned();
    printf("test_sigv4: %d passed, %d failed\n", check_count - check_failures, check_failures);
    return check_failures ? 1 : 0;
}
