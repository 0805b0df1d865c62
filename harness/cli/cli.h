/* cli.h — the placebench commands and the small helpers they share. */
#ifndef PB_CLI_H
#define PB_CLI_H

#include <stdio.h>

/* A command: argv[0] is the command's name; returns the process exit status. */
typedef int (*cli_command_fn)(int argc, char **argv);

/* Prints "placebench: <message>" on stderr and returns 1 (use as `return cli_error(...)`). */
int cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Prints "placebench <cmd>: usage ..." on stderr and returns 2. */
int cli_usage(const char *usage);
/* Runs the command named argv[0]; unknown names are an error (exit 2). */
int cli_dispatch(int argc, char **argv);
/* Non-zero when argv[i] is -h or --help. */
int cli_is_help(const char *arg);
/* Parses a list of device counts such as "3,5,8" (each 1..4096, at most `max` of them) into
 * counts[0..*n).  Returns 0 (*n is 0 for ""), or -1 when `text` is no such list. */
int cli_parse_devices(const char *text, int *counts, int max, int *n);
/* Parses a whole decimal text (no sign, no overflow) into *out, such as a 64-bit seed.  Returns 0,
 * or -1 when `text` is no such number. */
int cli_parse_u64(const char *text, unsigned long long *out);

/* The commands (one file each: cmd_<name>.c). */
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_help(int argc, char **argv);
/* Further commands are declared below this line, one per file. */
int bench_placer(int argc, char **argv); /* bench_placer.c: `bench placer` */
int bench_sfb(int argc, char **argv);    /* bench_sfb.c: `bench sfb` */
/* Sorts v[0..n) (n > 0) and returns its median (cmd_bench.c). */
double cli_median_sort(double *v, int n);
int cmd_place(int argc, char **argv);
int cmd_dataset(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_order(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_new(int argc, char **argv);
int cmd_compare(int argc, char **argv);

#endif
