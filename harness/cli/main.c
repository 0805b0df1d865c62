/* main.c — the placebench command-line tool: dispatches to one command per file. */
#include "cli.h"

#include "core/version.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct cli_command {
    const char *name;
    cli_command_fn fn;
    const char *summary;
} cli_command;

static const cli_command cli_commands[] = {
    {"run", cmd_run, "run an experiment: placebench run CONFIG [-j N] [--shard i/N] ..."},
    {"check", cmd_check, "parse, expand and load plugins of a config; print the run count"},
    {"list", cmd_list, "list the plugins found on the plugin path"},
    {"help", cmd_help, "show a command's usage, or a plugin's options: help KIND/NAME"},
    /* Further commands, one line each. */
    {"place", cmd_place, "one placer on one graph: place --graph G --placer NAME [--json]"},
    {"dataset", cmd_dataset, "graph datasets: dataset gen|stats|export|import|list"},
    {"simulate", cmd_simulate, "step time and peak memory of one placement of a graph"},
    {"bench", cmd_bench,
     "speed benchmarks: bench simulator [GRAPH.json | DIR]... | bench placer | bench sfb"},
    {"report", cmd_report, "summary table of a results file: report DB [--csv] [--out FILE]"},
    {"export", cmd_export, "runs or curves of a results file as CSV or JSON lines"},
    {"merge", cmd_merge, "join shard results files: merge OUT SHARD.db..."},
    {"plot", cmd_plot, "learning curves and best step times with gnuplot: plot DB"},
    {"order", cmd_order, "print a graph's nodes in a traversal order: --graph G --traversal T"},
    {"cluster", cmd_cluster, "cluster presets: cluster list | cluster show NAME --devices N"},
    {"compare", cmd_compare, "rank a placer plugin against the built-in ones: compare PLUGIN.so"},
    {"new", cmd_new, "start an out-of-tree plugin: new placer NAME (C file + CMake project)"},
};

int cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("placebench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

int cli_usage(const char *usage)
{
    fprintf(stderr, "usage: %s\n", usage);
    return 2;
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_parse_u64(const char *text, unsigned long long *out)
{
    if (!text[0] || text[0] == '-' || text[0] == '+')
        return -1;
    char *end;
    errno = 0;
    *out = strtoull(text, &end, 10);
    return errno || *end ? -1 : 0;
}

int cli_parse_devices(const char *text, int *counts, int max, int *n)
{
    *n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 1 || v > 4096 || (*end && *end != ',') || *n == max)
            return -1;
        counts[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static void cli_print_commands(FILE *f)
{
    fputs("usage: placebench COMMAND [ARGS]\n\n"
          "placebench runs device-placement experiments described in Lua: placers, embeddings,\n"
          "traversal orders and simulators are plugins; results go to SQLite.\n\ncommands:\n",
          f);
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++)
        fprintf(f, "  %-10s %s\n", cli_commands[i].name, cli_commands[i].summary);
    fputs("\n'placebench COMMAND --help' describes a command; 'placebench help KIND/NAME' a "
          "plugin.\n",
          f);
}

/* Looks a command up by name; NULL when there is none. */
static const cli_command *cli_find(const char *name)
{
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++)
        if (strcmp(cli_commands[i].name, name) == 0)
            return &cli_commands[i];
    return NULL;
}

int cli_dispatch(int argc, char **argv)
{
    const cli_command *c = cli_find(argv[0]);
    if (!c) {
        cli_error("unknown command '%s' (try 'placebench --help')", argv[0]);
        return 2;
    }
    return c->fn(argc, argv);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_print_commands(stderr);
        return 2;
    }
    if (cli_is_help(argv[1])) {
        cli_print_commands(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("placebench %s\n", pb_version_string());
        return 0;
    }
    return cli_dispatch(argc - 1, argv + 1);
}
