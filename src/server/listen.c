/* listen.c — the server's option helpers: listen addresses and log levels.
 *
 * Kept apart from dynamodb.c so that they can be used and tested without the engine or
 * h2o. Resolution uses getaddrinfo; the one socket opened here is server_check_listen's
 * probe, closed at once. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/server.h"

int server_log_level_parse(const char *word, server_log_level *out)
{
    static const char *const names[] = {"debug", "info", "warn", "error", "none"};
    for (int i = 0; i <= SERVER_LOG_NONE; i++)
        if (strcmp(word, names[i]) == 0) {
            *out = (server_log_level)i;
            return 0;
        }
    return -1;
}

int server_parse_listen(const char *spec, struct sockaddr_storage *addr, socklen_t *len,
                        char *errbuf, size_t errlen)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (close == NULL || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host) {
            snprintf(errbuf, errlen, "bad listen address '%s' (expected [IPV6]:PORT)", spec);
            return -1;
        }
        memcpy(host, spec + 1, (size_t)(close - spec - 1));
        host[close - spec - 1] = '\0';
        port = close + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (colon == NULL || (size_t)(colon - spec) >= sizeof host || colon == spec) {
            snprintf(errbuf, errlen, "bad listen address '%s' (expected HOST:PORT)", spec);
            return -1;
        }
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
        port = colon + 1;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (*port == '\0' || *end != '\0' || p < 0 || p > 65535) {
        snprintf(errbuf, errlen, "bad port in listen address '%s'", spec);
        return -1;
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || res == NULL) {
        snprintf(errbuf, errlen, "cannot resolve '%s': %s", host, gai_strerror(rc));
        return -1;
    }
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int server_addr_is_loopback(const struct sockaddr *addr)
{
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return 1;
        return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
    }
    return 0;
}

int server_check_listen(const char *spec, const struct sockaddr *addr, socklen_t len, char *errbuf,
                        size_t errlen)
{
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(errbuf, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1, rc = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (addr->sa_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, addr, len) != 0) {
        snprintf(errbuf, errlen, "cannot listen on %s: %s", spec, strerror(errno));
        rc = -1;
    }
    close(fd);
    return rc;
}
