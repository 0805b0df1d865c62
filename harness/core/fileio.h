/* fileio.h — reading whole files and listing folders, for every reader of the library. */
#ifndef PB_FILEIO_H
#define PB_FILEIO_H

#include "placebench.h"

#include <stddef.h>

/* Reads all of `path` (at most max_bytes) into *text, NUL-terminated, length in *len (may be
 * NULL).  A path that is not a regular file (a folder, a FIFO, a device) or a file holding a NUL
 * byte is an error (these are text formats).  Errors name the path.
 * Caller frees *text. */
int fileio_read(const char *path, size_t max_bytes, char **text, size_t *len, pb_error *err);

/* "a folder", "a FIFO", "a character device", ... for a stat st_mode; static storage. */
const char *fileio_kind(unsigned mode);

/* The names (not paths) of the regular files of `dir` ending in `suffix`, sorted by strcmp;
 * hidden files are skipped.  Caller frees with fileio_list_free. */
int fileio_list(const char *dir, const char *suffix, char ***names, int *n, pb_error *err);
void fileio_list_free(char **names, int n);

#endif
