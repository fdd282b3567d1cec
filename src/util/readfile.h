/* readfile.h — a whole small file (or stream) read into memory, up to a cap: the model
 * files, CQL schemas, credentials and request bodies the command line and the server
 * read at start. It formats no messages: callers name the file and the reason (errno),
 * in their own error kind. Not for data files or anything streamed. */
#ifndef QR_READFILE_H
#define QR_READFILE_H

#include <stddef.h>
#include <stdio.h>

/* Reads all of f into *text (NUL-terminated, freed with free) and its length into *len.
 * Returns 0, or -1 with errno EFBIG (more than cap bytes), ENOMEM or EIO (a read error). */
int readfile_stream(FILE *f, size_t cap, char **text, size_t *len);

/* The same for the file at path; errno is fopen's when it cannot be opened. */
int readfile_path(const char *path, size_t cap, char **text, size_t *len);

/* Clears and frees what readfile_* returned, for files that hold secrets. */
void readfile_free_secret(char *text, size_t len);

#endif
