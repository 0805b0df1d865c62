/* fileio.c — whole-file reads and sorted folder listings. */
#include "fileio.h"

#include "array.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fileio_read(const char *path, size_t max_bytes, char **text, size_t *len, pb_error *err)
{
    *text = NULL;
    /* Non-blocking, so that a FIFO is refused below instead of waited on. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return pb_errorf(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return pb_errorf(err, "%s: not a regular file (%s)", path, fileio_kind(st.st_mode));
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return pb_errorf(err, "%s: cannot open: %s", path, strerror(errno));
    }
    size_t cap = 1 << 14, n = 0;
    char *buf = malloc(cap);
    int too_big = 0;
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        if (cap - 1 >= max_bytes) {
            too_big = 1;
            break;
        }
        char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
        } else {
            buf = grown;
            cap *= 2;
        }
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed || too_big || n > max_bytes) {
        free(buf);
        if (too_big || n > max_bytes)
            return pb_errorf(err, "%s: larger than %zu bytes", path, max_bytes);
        return pb_errorf(err, "%s: cannot read%s", path, buf ? "" : " (out of memory)");
    }
    buf[n] = '\0';
    if (strlen(buf) != n) {
        free(buf);
        return pb_errorf(err, "%s: holds a NUL byte (not a text file)", path);
    }
    *text = buf;
    if (len)
        *len = n;
    return PB_OK;
}

const char *fileio_kind(unsigned mode)
{
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return S_ISREG(mode) ? "a regular file" : "not a file";
}

static int fileio_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether dir/name is a regular file (following links). */
static int fileio_is_file(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (!path)
        return 0;
    snprintf(path, n, "%s/%s", dir, name);
    struct stat st;
    int ok = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

int fileio_list(const char *dir, const char *suffix, char ***names, int *n, pb_error *err)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return pb_errorf(err, "%s: cannot open folder: %s", dir, strerror(errno));
    size_t sl = strlen(suffix);
    int cap = 0, rc = PB_OK;
    for (struct dirent *e; rc == PB_OK && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len <= sl || strcmp(e->d_name + len - sl, suffix) != 0 ||
            !fileio_is_file(dir, e->d_name))
            continue;
        char *copy = strdup(e->d_name);
        if (!copy || array_grow(names, &cap, *n + 1, sizeof(char *))) {
            free(copy);
            rc = pb_errorf(err, "%s: out of memory listing the folder", dir);
            break;
        }
        (*names)[(*n)++] = copy;
    }
    closedir(d);
    if (rc != PB_OK) {
        fileio_list_free(*names, *n);
        *names = NULL;
        *n = 0;
        return rc;
    }
    if (*n > 1)
        qsort(*names, (size_t)*n, sizeof(char *), fileio_name_cmp);
    return PB_OK;
}

void fileio_list_free(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
