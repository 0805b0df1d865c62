/* cli_genopt.h — the generator options of `placebench dataset gen|stats` for the families
 * (gen_options: reference measurement semantics, colocation, sizes) and the balance report. */
#ifndef PB_CLI_GENOPT_H
#define PB_CLI_GENOPT_H

#include "data/gen/gen.h"

/* The flags a command line gave; -1 (or 0 for sizes) where it gave none. */
typedef struct cli_genopt {
    long long kernelless_free, first_port_only, colocate; /* -1: the family's default */
    long long batch, width, layers, steps_min, steps_max; /* 0: the default */
} cli_genopt;

void cli_genopt_init(cli_genopt *o);

/*
 * Tries argv[*i] as a generator flag (--kernelless free|charged, --ports first|all,
 * --colocate on|off, --batch N, --width N, --layers N, --steps A[-B]).  Returns 1 and advances
 * *i past its value when it is one, 0 when it is not, -1 after printing an error that names
 * `cmd` and the flag.
 */
int cli_genopt_parse(const char *cmd, int argc, char **argv, int *i, cli_genopt *o);

/* Did the command line set any flag that only a family (not a zoo model) takes? */
int cli_genopt_family_only(const cli_genopt *o);

/* f's defaults with the given flags over them. */
void cli_genopt_resolve(const cli_genopt *o, const gen_family *f, gen_options *out);

/* The options as one line ("kernelless=free ports=first colocate=on batch=128 ..."). */
void cli_genopt_describe(const gen_options *opt, char *buf, size_t size);

/* The help text of the flags, for `dataset --help`. */
extern const char cli_genopt_help[];

/*
 * The compute/transfer balance of graphs (`dataset stats --balance`): mean compute µs and mean
 * µs to send the outputs over the Placeto bus (7600 B/µs) per op, their ratio, and the shares of
 * the bytes crossing group boundaries that are variable -> update edges and reads of variables.
 * Prints one line per set.
 */
void cli_balance_print(const char *set, const pb_graph *const *graphs, int n);
void cli_balance_header(void);

#endif
