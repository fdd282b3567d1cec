/* origin.c — the Host and Origin checks of a server without credentials (see origin.h).
 * A DNS-rebinding page reaches the server under the attacker's name, which is not
 * loopback and not listed; a cross-origin page sends its own Origin. Neither parses URLs
 * beyond scheme, host and port. */
#include "server/origin.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Splits "name[:port]" or "[v6][:port]": the name's length; *port gets the port's text. */
static size_t split_port(const char *s, size_t len, const char **port, size_t *plen)
{
    size_t name = len;
    if (len && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        name = close ? (size_t)(close - s) + 1 : len;
    } else {
        const char *colon = memchr(s, ':', len);
        if (colon) name = (size_t)(colon - s);
    }
    *port = NULL;
    *plen = 0;
    if (name < len && s[name] == ':') {
        *port = s + name + 1;
        *plen = len - name - 1;
    }
    return name;
}

/* The port's number, or -1 if the text is not one. */
static long port_number(const char *s, size_t n)
{
    if (n == 0 || n > 5) return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= 65535 ? v : -1;
}

int origin_is_loopback(const char *name, size_t len)
{
    if (len && name[len - 1] == '.') len--;
    if (len == 0 || len > 255) return 0;
    if (len == 9 && strncasecmp(name, "localhost", 9) == 0) return 1;
    if (len > 10 && strncasecmp(name + len - 10, ".localhost", 10) == 0) return 1;
    char text[256];
    if (name[0] == '[') {
        if (len < 3 || name[len - 1] != ']') return 0;
        snprintf(text, sizeof text, "%.*s", (int)(len - 2), name + 1);
        struct in6_addr a6;
        if (inet_pton(AF_INET6, text, &a6) != 1) return 0;
        if (IN6_IS_ADDR_LOOPBACK(&a6)) return 1;
        return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
    }
    snprintf(text, sizeof text, "%.*s", (int)len, name);
    struct in_addr a4;
    return inet_pton(AF_INET, text, &a4) == 1 && ((const unsigned char *)&a4)[0] == 127;
}

/* Whether name (no port) is one the list holds, case and a trailing dot aside. */
static int listed(const char *const *names, size_t n, const char *name, size_t len)
{
    if (len && name[len - 1] == '.') len--;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(names[i]);
        if (k && names[i][k - 1] == '.') k--;
        if (k == len && strncasecmp(names[i], name, len) == 0) return 1;
    }
    return 0;
}

int origin_host_allowed(const origin_policy *p, const char *host, size_t len)
{
    const char *port;
    size_t plen;
    size_t name = split_port(host, len, &port, &plen);
    if (port && port_number(port, plen) < 0) return 0;
    return origin_is_loopback(host, name) || listed(p->hosts, p->n_hosts, host, name);
}

int origin_allowed(const origin_policy *p, const char *origin, size_t len, const char *host,
                   size_t hlen)
{
    for (size_t i = 0; i < p->n_origins; i++)
        if (strlen(p->origins[i]) == len && strncasecmp(p->origins[i], origin, len) == 0) return 1;
    long default_port;
    size_t skip;
    if (len > 7 && strncasecmp(origin, "http://", 7) == 0) {
        skip = 7;
        default_port = 80;
    } else if (len > 8 && strncasecmp(origin, "https://", 8) == 0) {
        skip = 8;
        default_port = 443;
    } else {
        return 0; /* "null", or a scheme no page of this server has */
    }
    const char *auth = origin + skip;
    size_t alen = len - skip;
    if (memchr(auth, '/', alen)) return 0;
    if (host && hlen == alen && strncasecmp(host, auth, alen) == 0) return 1;
    const char *port;
    size_t plen;
    size_t name = split_port(auth, alen, &port, &plen);
    long n = port ? port_number(port, plen) : default_port;
    return n == (long)p->port && origin_is_loopback(auth, name);
}
