/* cmd_export.c — placebench export: runs or curve points of a results file as CSV or JSON lines. */
#include "cli.h"
#include "cli_output.h"

#include "store/store.h"

#include <string.h>

static const char cmd_export_usage[] =
    "placebench export DB [--curves | --logs] [--format csv|jsonl] [--out FILE]\n"
    "\n"
    "Writes every run of the results file DB (one row each, all columns, sorted by run_id), or\n"
    "with --curves every learning-curve point (run_id, episode, episode_best_us, best_so_far_us,\n"
    "sim_calls, wall_s), or with --logs what each run's plugins wrote on stdout and stderr\n"
    "(run_id, text; runs that wrote nothing have none).  Numbers are written with full precision; "
    "absent values are empty in CSV\n"
    "and null in JSON (as are infinite step times, which JSON cannot hold).\n"
    "\n"
    "  --curves               export curve points instead of runs\n"
    "  --logs                 export the runs' logs instead of runs\n"
    "  --format csv|jsonl     CSV with a header line (default) or one JSON object per line\n"
    "  --out FILE             write to FILE instead of stdout (FILE appears only when complete)";

int cmd_export(int argc, char **argv)
{
    const char *db = NULL, *out = NULL;
    int table = 0, jsonl = 0; /* table: 0 runs, 1 curve points, 2 logs */
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--format") == 0) && i + 1 >= argc)
            return cli_error("export: %s needs a value", argv[i]);
        if (cli_is_help(argv[i])) {
            puts(cmd_export_usage);
            return 0;
        }
        if (strcmp(argv[i], "--curves") == 0) {
            table = 1;
        } else if (strcmp(argv[i], "--logs") == 0) {
            table = 2;
        } else if (strcmp(argv[i], "--format") == 0) {
            const char *f = argv[++i];
            if (strcmp(f, "csv") != 0 && strcmp(f, "jsonl") != 0)
                return cli_error("export: --format '%s': expected csv or jsonl", f);
            jsonl = strcmp(f, "jsonl") == 0;
        } else if (strcmp(argv[i], "--out") == 0) {
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_error("export: unknown option '%s' (see 'placebench export --help')",
                             argv[i]);
        } else if (!db) {
            db = argv[i];
        } else {
            return cli_error("export: one results file only ('%s' is a second one)", argv[i]);
        }
    }
    if (!db)
        return cli_usage(cmd_export_usage);
    pb_error err = {{0}};
    store *s;
    if (store_open_readonly(db, &s, &err))
        return cli_error("%s", err.msg);
    cli_output o;
    if (cli_output_open(&o, out)) {
        store_close(s);
        return 1;
    }
    int rc = table == 2   ? store_export_logs(s, o.f, jsonl, &err)
             : table == 1 ? store_export_curves(s, o.f, jsonl, &err)
                          : store_export_runs(s, o.f, jsonl, &err);
    store_close(s);
    if (rc) {
        cli_output_close(&o, 0);
        return cli_error("%s", err.msg);
    }
    return cli_output_close(&o, 1);
}
