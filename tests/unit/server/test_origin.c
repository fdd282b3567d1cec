/* test_origin.c — the Host and Origin checks of a server without credentials: loopback
 * names and addresses pass and a rebinding name does not, listed names and origins pass,
 * a loopback origin passes on the server's port only, and the server's own origin does. */
#include <string.h>

#include "check.h"
#include "server/origin.h"

static const char *const hosts[] = {"devbox.example", "quarry.internal."};
static const char *const origins[] = {"http://localhost:3000", "https://app.example"};
static const origin_policy none = {.port = 8000};
static const origin_policy some = {hosts, 2, origins, 2, 8000};

static int host_ok(const origin_policy *p, const char *h)
{
    return origin_host_allowed(p, h, strlen(h));
}

static int origin_ok(const origin_policy *p, const char *o, const char *host)
{
    return origin_allowed(p, o, strlen(o), host, host ? strlen(host) : 0);
}

int main(void)
{
    const char *loopback[] = {
        "localhost",  "LOCALHOST:8000",    "localhost.:8000",      "app.localhost",
        "127.0.0.1",  "127.0.0.1:8000",    "127.9.8.7:1",          "[::1]",
        "[::1]:8000", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]:80"};
    for (size_t i = 0; i < sizeof loopback / sizeof loopback[0]; i++)
        CHECK(host_ok(&none, loopback[i]), "%s refused", loopback[i]);
    const char *foreign[] = {"evil.example",
                             "evil.example:8000",
                             "localhost.evil.example",
                             "evillocalhost",
                             "128.0.0.1",
                             "10.0.0.1:8000",
                             "[::2]",
                             "[::ffff:10.0.0.1]",
                             "localhost:80x",
                             "",
                             "[::1",
                             "devbox.example:8000"};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
        CHECK(!host_ok(&none, foreign[i]), "%s allowed", foreign[i]);
    CHECK_THAT(host_ok(&some, "devbox.example:8000"));
    CHECK_THAT(host_ok(&some, "DevBox.Example."));
    CHECK_THAT(host_ok(&some, "quarry.internal"));
    CHECK_THAT(!host_ok(&some, "evil.example"));
    CHECK_THAT(!host_ok(&some, "sub.devbox.example"));

    CHECK_THAT(origin_ok(&none, "http://localhost:8000", "127.0.0.1:8000"));
    CHECK_THAT(origin_ok(&none, "http://127.0.0.1:8000", "localhost:8000"));
    CHECK_THAT(origin_ok(&none, "http://[::1]:8000", NULL));
    CHECK_THAT(!origin_ok(&none, "http://localhost:3000", "127.0.0.1:8000"));
    CHECK_THAT(!origin_ok(&none, "http://localhost", "127.0.0.1:8000")); /* port 80 */
    CHECK_THAT(!origin_ok(&none, "http://evil.example", "127.0.0.1:8000"));
    CHECK_THAT(!origin_ok(&none, "http://evil.example:8000", "127.0.0.1:8000"));
    CHECK_THAT(!origin_ok(&none, "null", "127.0.0.1:8000"));
    CHECK_THAT(!origin_ok(&none, "file://", "127.0.0.1:8000"));
    CHECK_THAT(!origin_ok(&none, "http://localhost:8000/x", "127.0.0.1:8000"));
    /* The server's own origin, as the console at an allowed name sends it. */
    CHECK_THAT(origin_ok(&some, "http://devbox.example:8000", "devbox.example:8000"));
    CHECK_THAT(!origin_ok(&some, "http://devbox.example:8000", "127.0.0.1:8000"));
    CHECK_THAT(origin_ok(&some, "http://localhost:3000", "127.0.0.1:8000"));
    CHECK_THAT(origin_ok(&some, "HTTPS://APP.EXAMPLE", "127.0.0.1:8000"));
    CHECK_THAT(!origin_ok(&some, "https://app.example:444", "127.0.0.1:8000"));
    CHECK_THAT(!origin_ok(&some, "http://app.example", "127.0.0.1:8000"));
    return check_report("test_origin");
}
