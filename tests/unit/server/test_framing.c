/* test_framing.c — the header-block checks of framing.h: requests every client sends
 * pass, and each smuggling form (Content-Length with Transfer-Encoding, differing
 * Content-Lengths, a Transfer-Encoding other than chunked), obsolete line folding, bytes
 * RFC 9110 forbids in names and values, and a second Host are refused with a reason. */
#include <string.h>

#include "check.h"
#include "server/framing.h"

#define LINE0 "POST / HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"

static int passes(const char *head)
{
    char why[200] = "";
    size_t len = framing_head_len(head, strlen(head));
    CHECK(len == strlen(head), "head length %zu of %zu: %s", len, strlen(head), head);
    return framing_check(head, len, why, sizeof why) == 0;
}

/* Refused, with a reason that holds want. */
static void refused(const char *head, const char *want)
{
    char why[200] = "";
    int rc = framing_check(head, strlen(head), why, sizeof why);
    CHECK(rc == -1, "not refused: %s", head);
    CHECK(strstr(why, want) != NULL, "reason '%s' lacks '%s'", why, want);
}

int main(void)
{
    CHECK_THAT(passes(LINE0 "Content-Length: 2\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"
                            "Authorization: AWS4-HMAC-SHA256 Credential=a/b, Signature=c\r\n\r\n"));
    CHECK_THAT(passes(LINE0 "Transfer-Encoding: chunked\r\n\r\n"));
    CHECK_THAT(passes(LINE0 "transfer-encoding:  Chunked \r\n\r\n"));
    CHECK_THAT(passes(LINE0 "Content-Length: 5\r\ncontent-length: 5\r\n\r\n"));
    CHECK_THAT(passes(LINE0 "Content-Length: 5, 5\r\n\r\n"));
    CHECK_THAT(passes("GET / HTTP/1.0\n\n")); /* bare LF, no Host */
    CHECK_THAT(passes(LINE0 "X-Obs-Text: caf\xc3\xa9\tok\r\n\r\n"));
    CHECK_THAT(passes(LINE0 "X-Empty:\r\n\r\n"));

    refused(LINE0 "Content-Length: 12\r\nTransfer-Encoding: chunked\r\n\r\n", "both");
    refused(LINE0 "Transfer-Encoding: chunked\r\nContent-Length: 12\r\n\r\n", "both");
    refused(LINE0 "Content-Length: 2\r\nContent-Length: 40\r\n\r\n", "different");
    refused(LINE0 "Content-Length: 2, 40\r\n\r\n", "different");
    refused(LINE0 "Content-Length: +2\r\n\r\n", "not a number");
    refused(LINE0 "Content-Length: \r\n\r\n", "not a number");
    refused(LINE0 "Transfer-Encoding: gzip, chunked\r\n\r\n", "chunked");
    refused(LINE0 "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "once");
    refused(LINE0 "X-Foo: a\r\n b\r\n\r\n", "folding");
    refused(LINE0 "X-Foo: a\r\n\tb\r\n\r\n", "folding");
    refused(LINE0 "X Foo: a\r\n\r\n", "header name");
    refused(LINE0 "X-Foo : a\r\n\r\n", "header name");
    refused(LINE0 "X-F\"oo: a\r\n\r\n", "header name");
    refused(LINE0 ": a\r\n\r\n", "no field name");
    refused(LINE0 "X-Foo a\r\n\r\n", "no field name");
    refused(LINE0 "X-Foo: a\x01b\r\n\r\n", "header value");
    refused(LINE0 "X-Foo: a\x7f\r\n\r\n", "header value");
    refused(LINE0 "X-Foo: a\rb\r\n\r\n", "header value");
    {
        const char nul[] = LINE0 "X-Foo: a\0b\r\n\r\n";
        char why[200] = "";
        CHECK_THAT(framing_check(nul, sizeof nul - 1, why, sizeof why) == -1);
        CHECK_THAT(strstr(why, "NUL") != NULL);
    }
    refused(LINE0 "Host: evil.example\r\n\r\n", "Host");

    /* framing_head_len: through the empty line, and no further. */
    const char two[] = "GET / HTTP/1.1\r\nA: b\r\n\r\nGET /next HTTP/1.1\r\n\r\n";
    CHECK_THAT(framing_head_len(two, sizeof two - 1) == 24);
    CHECK_THAT(framing_head_len("GET / HTTP/1.1\r\nA: b\r\n", 22) == 0);
    size_t hl;
    const char *h = framing_host(two, sizeof two - 1, &hl);
    CHECK_THAT(h == NULL && hl == 0);
    const char *with = "GET / HTTP/1.1\r\nA: b\r\nhost:  [::1]:8000 \r\n\r\n";
    h = framing_host(with, strlen(with), &hl);
    CHECK_THAT(h && hl == 10 && strncmp(h, "[::1]:8000", 10) == 0);
    return check_report("test_framing");
}
