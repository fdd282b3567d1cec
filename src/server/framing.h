/* framing.h — the checks of a request's header block that no HTTP library may be trusted
 * to make the same way (RFC 9112 section 6.3, RFC 9110 section 5.5): ambiguous framing
 * (Content-Length with Transfer-Encoding, Content-Length values that differ, a
 * Transfer-Encoding other than chunked), obsolete line folding, bytes a field name or
 * value may not hold, and more than one Host. Pure functions over bytes; it neither
 * parses the request for use nor reads its body. */
#ifndef QR_SERVER_FRAMING_H
#define QR_SERVER_FRAMING_H

#include <stddef.h>

/* Checks head, a request's bytes from its request line to the empty line that ends its
 * header block (len bytes; lines end with CRLF or LF; the empty line may be left out).
 * Returns 0 if the request may be answered, or -1 and writes why not to why (cap bytes,
 * NUL-terminated): such a request is answered 400 and its connection closed. */
int framing_check(const char *head, size_t len, char *why, size_t cap);

/* The length of the header block at head, through its empty line: the first LF that
 * follows an LF (or an LF, CR pair), looking at no more than cap bytes; 0 if none. */
size_t framing_head_len(const char *head, size_t cap);

/* The value of the header block's Host line, trimmed (NULL and 0 if there is none). */
const char *framing_host(const char *head, size_t len, size_t *host_len);

#endif
