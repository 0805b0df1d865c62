/* cmd_merge.c — placebench merge: joins the shard files of one experiment into one. */
#include "cli.h"

#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char cmd_merge_usage[] =
    "placebench merge OUT SHARD.db... [--prefer first|last]\n"
    "\n"
    "Copies the runs and learning curves of every SHARD.db into OUT (created when missing).  All\n"
    "files must hold the same experiment.  Runs already in OUT (same run_id) are kept as they "
    "are,\n"
    "so merging again, or merging overlapping shards, stores every run once.\n"
    "\n"
    "A run id whose results differ between two files (status, step times, simulator calls,\n"
    "settings or graph checksum; not its timing) is an error naming the runs and the files, and\n"
    "nothing is written.  --prefer first keeps the row of the earlier file (OUT, then the shards "
    "in\n"
    "order), --prefer last the later one with its curve; the resolved runs are reported.";

/* Runs in an existing results file; 0 when it does not exist yet. */
static long long cmd_merge_count(const char *path)
{
    struct stat sb;
    store *s;
    pb_error err;
    if (stat(path, &sb) != 0 || store_open_readonly(path, &s, &err))
        return 0;
    long long n = store_count_runs(s);
    store_close(s);
    return n < 0 ? 0 : n;
}

int cmd_merge(int argc, char **argv)
{
    int prefer = STORE_PREFER_NONE, n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            puts(cmd_merge_usage);
            return 0;
        }
        if (strcmp(argv[i], "--prefer") == 0) {
            const char *side = i + 1 < argc ? argv[++i] : "";
            if (strcmp(side, "first") != 0 && strcmp(side, "last") != 0)
                return cli_error("merge: --prefer takes 'first' or 'last', not '%s'", side);
            prefer = side[0] == 'f' ? STORE_PREFER_FIRST : STORE_PREFER_LAST;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_error("merge: unknown option '%s' (see 'placebench merge --help')", argv[i]);
        argv[++n_files] = argv[i]; /* the files, in order, over the options */
    }
    if (n_files < 2)
        return cli_usage(cmd_merge_usage);
    const char *out = argv[1];
    int n_shards = n_files - 1;
    long long before = cmd_merge_count(out);
    pb_error err = {{0}};
    char *resolved = NULL;
    if (store_merge(out, (const char *const *)argv + 2, n_shards, prefer, &resolved, &err))
        return cli_error("%s", err.msg);
    long long after = cmd_merge_count(out);
    if (resolved)
        printf("%s\n", resolved);
    free(resolved);
    printf("%s: %lld runs (%lld added from %d shard file%s)\n", out, after, after - before,
           n_shards, n_shards == 1 ? "" : "s");
    return 0;
}
