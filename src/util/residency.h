/* residency.h — hands back the pages of code and read-only data that a process's start
 * touched, so that what stays mapped is what it runs afterwards. Only the loaded objects'
 * segments that are never written are released (code, read-only data, the loader's
 * tables): their pages are the files' own, clean, and stay in the page cache, and the next
 * use maps them again (a minor fault). Writable segments, RELRO inside them, the vDSO, the
 * heap and the stacks are left alone. */
#ifndef QR_RESIDENCY_H
#define QR_RESIDENCY_H

#include <stddef.h>

/* Unmaps the resident pages of every loaded object's read-only segments (whole pages
 * inside them only). Returns 0, or -1 with errno when the kernel refused a range (the
 * others are released all the same); *bytes, if not NULL, is set to the address space
 * covered. */
int residency_release_readonly(size_t *bytes);

#endif
