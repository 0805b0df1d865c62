/* cmd_merge.c — placebench merge: joins the shard files of one experiment into one. */
#include "cli.h"

#include "store/store.h"

#include <stdio.h>
#include <sys/stat.h>

static const char cmd_merge_usage[] =
    "placebench merge OUT SHARD.db...\n"
    "\n"
    "Copies the runs and learning curves of every SHARD.db into OUT (created when missing).  All\n"
    "files must hold the same experiment.  Runs already in OUT (same run_id) are kept as they "
    "are,\n"
    "so merging again, or merging overlapping shards, stores every run once.";

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
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            puts(cmd_merge_usage);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_error("merge: unknown option '%s' (see 'placebench merge --help')", argv[i]);
    }
    if (argc < 3)
        return cli_usage(cmd_merge_usage);
    const char *out = argv[1];
    long long before = cmd_merge_count(out);
    pb_error err = {{0}};
    if (store_merge(out, (const char *const *)argv + 2, argc - 2, &err))
        return cli_error("%s", err.msg);
    long long after = cmd_merge_count(out);
    printf("%s: %lld runs (%lld added from %d shard file%s)\n", out, after, after - before,
           argc - 2, argc - 2 == 1 ? "" : "s");
    return 0;
}
