/* cmd_report.c — placebench report: the summary table of a results file. */
#include "cli.h"
#include "cli_output.h"

#include "store.h"

#include <string.h>

static const char cmd_report_usage[] =
    "placebench report DB [--csv] [--out FILE]\n"
    "\n"
    "Prints one row per (dataset, devices, placer, embedding, traversal) of the results file DB:\n"
    "runs ok and failed, then over the ok runs the mean initial and best step time (us), the mean\n"
    "improvement over the initial placement (%), the mean search wall time (s) and the mean\n"
    "number of simulator calls.  Markdown by default, with the runs that did not finish ok\n"
    "listed below the table.\n"
    "\n"
    "  --csv        write the table as CSV (full-precision numbers, no failed-run list)\n"
    "  --out FILE   write to FILE instead of stdout (FILE appears only when complete)";

int cmd_report(int argc, char **argv)
{
    const char *db = NULL, *out = NULL;
    int format = STORE_REPORT_MARKDOWN;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 >= argc)
            return cli_error("report: %s needs a value", argv[i]);
        if (cli_is_help(argv[i])) {
            puts(cmd_report_usage);
            return 0;
        }
        if (strcmp(argv[i], "--csv") == 0)
            format = STORE_REPORT_CSV;
        else if (strcmp(argv[i], "--out") == 0)
            out = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_error("report: unknown option '%s' (see 'placebench report --help')",
                             argv[i]);
        else if (!db)
            db = argv[i];
        else
            return cli_error("report: one results file only ('%s' is a second one)", argv[i]);
    }
    if (!db)
        return cli_usage(cmd_report_usage);
    pb_error err = {{0}};
    store *s;
    if (store_open_readonly(db, &s, &err))
        return cli_error("%s", err.msg);
    cli_output o;
    if (cli_output_open(&o, out)) {
        store_close(s);
        return 1;
    }
    int rc = store_report_summary(s, o.f, format, &err);
    store_close(s);
    if (rc) {
        cli_output_close(&o, 0);
        return cli_error("%s", err.msg);
    }
    return cli_output_close(&o, 1);
}
