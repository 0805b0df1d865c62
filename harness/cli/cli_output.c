/* cli_output.c — command output to stdout or to a file that appears only when complete. */
#include "cli_output.h"

#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_output_open(cli_output *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    size_t n = strlen(path) + 5;
    o->path = strdup(path);
    o->tmp = malloc(n);
    if (!o->path || !o->tmp) {
        cli_output_close(o, 0);
        return cli_error("%s: out of memory", path);
    }
    snprintf(o->tmp, n, "%s.tmp", path);
    if (!(o->f = fopen(o->tmp, "w"))) {
        int e = errno;
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return cli_error("%s: cannot write: %s", path, strerror(e));
    }
    return 0;
}

int cli_output_close(cli_output *o, int ok)
{
    int rc = 0;
    if (o->f == stdout) {
        if (fflush(stdout) != 0 && ok)
            rc = cli_error("writing to stdout failed: %s", strerror(errno));
    } else if (o->f) {
        int failed = ferror(o->f) | (fclose(o->f) != 0);
        if (ok && failed)
            rc = cli_error("%s: writing failed: %s", o->path, strerror(errno));
        else if (ok && rename(o->tmp, o->path) != 0)
            rc = cli_error("%s: cannot rename %s into place: %s", o->path, o->tmp, strerror(errno));
        if (!ok || rc)
            remove(o->tmp);
    }
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return rc;
}
