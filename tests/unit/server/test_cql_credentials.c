/* test_cql_credentials.c — the CQL listener's roles file and SASL PLAIN check (cql_auth.c).
 *
 * Parsing: comments, blank lines, CR LF endings, passwords with spaces and colons, and each
 * refusal with its line; checking: a good token with and without an authzid, a wrong
 * password, an unknown user, and the malformed tokens with Cassandra's messages. */
#include "check.h"
#include "server/cql.h"

static int check_token(const cql_credentials *c, const char *token, size_t len, char *user,
                       char *msg)
{
    return cql_credentials_check(c, token, (int32_t)len, user, 128, msg, 300);
}

int main(void)
{
    cql_credentials c;
    char err[300], user[128], msg[300];
    const char text[] = "# roles\n\n  # indented comment\nalice:wonder land\r\nbob:a:b:c\n";
    CHECK(cql_credentials_parse(&c, text, sizeof text - 1, "roles", err, sizeof err) == 0, "%s",
          err);
    CHECK(c.n == 2, "%zu roles", c.n);
    if (c.n == 2) {
        CHECK_STR(c.roles[0].user, "alice");
        CHECK_STR(c.roles[0].password, "wonder land");
        CHECK_STR(c.roles[1].user, "bob");
        CHECK_STR(c.roles[1].password, "a:b:c");
    }

    static const char good[] = "\0alice\0wonder land";
    CHECK(check_token(&c, good, sizeof good - 1, user, msg) == 0, "%s", msg);
    CHECK_STR(user, "alice");
    static const char authzid[] = "admin\0bob\0a:b:c";
    CHECK(check_token(&c, authzid, sizeof authzid - 1, user, msg) == 0, "%s", msg);
    CHECK_STR(user, "bob");
    static const char wrong[] = "\0alice\0wonder";
    CHECK(check_token(&c, wrong, sizeof wrong - 1, user, msg) == -1, "a wrong password passed");
    CHECK_STR(msg, "Provided username alice and/or password are incorrect");
    static const char unknown[] = "\0carol\0wonder land";
    CHECK(check_token(&c, unknown, sizeof unknown - 1, user, msg) == -1, "an unknown user");
    CHECK_STR(msg, "Provided username carol and/or password are incorrect");
    static const char no_pass[] = "\0alice\0";
    CHECK(check_token(&c, no_pass, sizeof no_pass - 1, user, msg) == -1, "an empty password");
    CHECK_STR(msg, "Password must not be null");
    static const char no_user[] = "alice\0wonder land";
    CHECK(check_token(&c, no_user, sizeof no_user - 1, user, msg) == -1, "no user read");
    CHECK_STR(msg, "Authentication ID must not be null");
    static const char three[] = "\0\0alice\0x";
    CHECK(check_token(&c, three, sizeof three - 1, user, msg) == -1, "three NULs");
    CHECK(strncmp(msg, "Credential format error", 23) == 0, "%s", msg);
    CHECK(check_token(&c, NULL, -1, user, msg) == -1, "a null token");
    CHECK_STR(msg, "Password must not be null");
    cql_credentials_free(&c);

    static const struct {
        const char *text, *why;
    } bad[] = {
        {"alice\n", "roles: line 1: expected username:password"},
        {"# x\n:pw\n", "roles: line 2: the username is empty"},
        {"alice:\n", "roles: line 1: the password is empty"},
        {"a:1\na:2\n", "roles: line 2: the username is given twice"},
        {"\n# only comments\n", "roles: no username:password line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(cql_credentials_parse(&c, bad[i].text, strlen(bad[i].text), "roles", err,
                                    sizeof err) == -1,
              "'%s' was accepted", bad[i].text);
        CHECK_STR(err, bad[i].why);
        CHECK(c.n == 0 && c.roles == NULL, "a refused file left roles");
    }
    const char nul[] = "a:b\0c\n";
    CHECK(cql_credentials_parse(&c, nul, sizeof nul - 1, "roles", err, sizeof err) == -1,
          "a NUL byte passed");
    CHECK_STR(err, "roles: line 1: holds a NUL byte");
    CHECK(cql_credentials_load(&c, "/nonexistent/roles", err, sizeof err) == -1, "no file");
    CHECK(strstr(err, "cannot open /nonexistent/roles") != NULL, "%s", err);
    return check_report("test_cql_credentials");
}
