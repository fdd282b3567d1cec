/* origin.h — who may reach a server that has no credentials: the Host names a request may
 * be addressed to (loopback names and addresses, and those --allow-host lists), and the
 * browser origins that may call it (its own, loopback pages on its port, and those
 * --cors-origin lists). Pure functions over the header values; a server with credentials
 * does not ask them, since signatures protect it. */
#ifndef QR_SERVER_ORIGIN_H
#define QR_SERVER_ORIGIN_H

#include <stddef.h>

/* The most names of each list a server takes. */
#define ORIGIN_MAX_NAMES 32

typedef struct origin_policy {
    const char *const *hosts; /* --allow-host NAME: names (no port) also allowed as Host */
    size_t n_hosts;
    const char *const *origins; /* --cors-origin ORIGIN: "scheme://host[:port]", exactly */
    size_t n_origins;
    unsigned port; /* the port the server listens on */
} origin_policy;

/* Whether name (no port; an IPv6 address in brackets) is "localhost", a name under
 * ".localhost", an address in 127.0.0.0/8, ::1, or ::ffff:127.x.x.x. A trailing dot and
 * case do not matter. */
int origin_is_loopback(const char *name, size_t len);

/* Whether a request whose Host header is host (len bytes, "name[:port]") may be answered:
 * a loopback name or address, or a name the policy lists. */
int origin_host_allowed(const origin_policy *p, const char *host, size_t len);

/* Whether a browser page of origin (the Origin header, len bytes) may call the server,
 * reached at host (its Host header, NULL if none): an origin the policy lists, one whose
 * host:port is the request's Host (the page is the server's own, such as the console),
 * or an http or https origin with a loopback host on the server's port. */
int origin_allowed(const origin_policy *p, const char *origin, size_t len, const char *host,
                   size_t hlen);

#endif
