/* cli_genopt.c — the generator option flags of `placebench dataset gen|stats` and the
 * compute/transfer balance report (`dataset stats --balance`). */
#include "cli_genopt.h"
#include "model/devcost.h"

#include "cli.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Placeto K80 box's bus (bytes per µs) and delta1, the µs a device stays busy after an op
 * that costs more than 0 (configs/clusters.lua, specs/placeto.md 1.1). */
#define CLI_BALANCE_BUS_BYTES_PER_US 7600.0
#define CLI_BALANCE_DELTA1_US 5.7

const char cli_genopt_help[] =
    "      Family options (README \"Reference measurement semantics and colocation\";\n"
    "      each family's defaults: `placebench dataset list`):\n"
    "        --kernelless free|charged  free: ops without a GPU kernel (Identity, NoOp,\n"
    "              Const, VariableV2, Reshape, shape ops, ...) cost 0 us, as in the\n"
    "              reference's step stats, so no delta1 follows them; charged: 1 us host ops\n"
    "              and kernel costs for Reshape and the like\n"
    "        --ports first|all  first: only output port 0 has a size, as the reference reads\n"
    "              it from step stats; all: every port its tensor's size\n"
    "        --colocate on|off  on: update ops and slots run on their variable's device, as\n"
    "              TensorFlow's loc:@ colocation (node attribute placed_with)\n"
    "        --batch N, --width N  batch size; cifar10 filters, ptb/nmt hidden size\n"
    "        --layers N  cifar10 num_layers of every graph (default 3-6 by index); nmt LSTM\n"
    "              layers\n"
    "        --steps A[-B]  ptb BPTT steps, nmt source and target steps, spread over the\n"
    "              graphs (default ptb 9-18, nmt 5-9 and 3-7)\n";

void cli_genopt_init(cli_genopt *o)
{
    memset(o, 0, sizeof *o);
    o->kernelless_free = o->first_port_only = o->colocate = -1;
}

/* word -> 1, other -> 0, neither -> -1. */
static int cli_genopt_word(const char *v, const char *word, const char *other)
{
    return strcmp(v, word) == 0 ? 1 : strcmp(v, other) == 0 ? 0 : -1;
}

static long long cli_genopt_number(const char *text, const char **end)
{
    if (text[0] < '0' || text[0] > '9')
        return -1;
    char *e;
    errno = 0;
    long long v = strtoll(text, &e, 10);
    *end = e;
    return errno || v > 100000 ? -1 : v;
}

/* The flags: a word pair (yes, no) for the switches, NULL for the sizes; the field they set. */
static const struct {
    const char *flag, *yes, *no;
    size_t offset;
} cli_genopt_flags[] = {
    {"--kernelless", "free", "charged", offsetof(cli_genopt, kernelless_free)},
    {"--ports", "first", "all", offsetof(cli_genopt, first_port_only)},
    {"--colocate", "on", "off", offsetof(cli_genopt, colocate)},
    {"--batch", NULL, NULL, offsetof(cli_genopt, batch)},
    {"--width", NULL, NULL, offsetof(cli_genopt, width)},
    {"--layers", NULL, NULL, offsetof(cli_genopt, layers)},
    {"--steps", NULL, NULL, offsetof(cli_genopt, steps_min)},
};

int cli_genopt_parse(const char *cmd, int argc, char **argv, int *i, cli_genopt *o)
{
    const char *arg = argv[*i];
    size_t k = 0, n = sizeof cli_genopt_flags / sizeof cli_genopt_flags[0];
    while (k < n && strcmp(arg, cli_genopt_flags[k].flag) != 0)
        k++;
    if (k == n)
        return 0;
    if (*i + 1 >= argc) {
        cli_error("%s: %s needs a value", cmd, arg);
        return -1;
    }
    const char *v = argv[++*i], *end = "", *yes = cli_genopt_flags[k].yes;
    long long *field = (long long *)(void *)((char *)o + cli_genopt_flags[k].offset);
    if (yes) {
        long long word = cli_genopt_word(v, yes, cli_genopt_flags[k].no);
        if (word < 0) {
            cli_error("%s: %s '%s' (must be %s or %s)", cmd, arg, v, yes, cli_genopt_flags[k].no);
            return -1;
        }
        *field = word;
        return 1;
    }
    int steps = field == &o->steps_min;
    long long num = cli_genopt_number(v, &end), hi = num;
    if (steps && num >= 1 && *end == '-') { /* --steps A-B */
        hi = cli_genopt_number(end + 1, &end);
        if (hi < num)
            num = -1;
    }
    if (num < 1 || *end) {
        cli_error("%s: %s '%s' is not %s", cmd, arg, v,
                  steps ? "a step count 1..100000 or a range A-B" : "an integer 1..100000");
        return -1;
    }
    *field = num;
    if (steps)
        o->steps_max = hi;
    return 1;
}

int cli_genopt_family_only(const cli_genopt *o)
{
    return o->kernelless_free >= 0 || o->first_port_only >= 0 || o->colocate >= 0 || o->width ||
           o->steps_min;
}

void cli_genopt_resolve(const cli_genopt *o, const gen_family *f, gen_options *out)
{
    *out = f->defaults;
    if (o->kernelless_free >= 0)
        out->kernelless_free = (int)o->kernelless_free;
    if (o->first_port_only >= 0)
        out->first_port_only = (int)o->first_port_only;
    if (o->colocate >= 0)
        out->colocate = (int)o->colocate;
    if (o->batch)
        out->batch = (int)o->batch;
    if (o->width)
        out->width = (int)o->width;
    if (o->layers)
        out->layers = (int)o->layers;
    if (o->steps_min) {
        out->steps_min = (int)o->steps_min;
        out->steps_max = (int)o->steps_max;
    }
}

void cli_genopt_describe(const gen_options *opt, char *buf, size_t size)
{
    char layers[32], steps[48];
    snprintf(layers, sizeof layers, opt->layers ? "%d" : "default", opt->layers);
    snprintf(steps, sizeof steps, opt->steps_min ? "%d-%d" : "default", opt->steps_min,
             opt->steps_max);
    snprintf(buf, size,
             "kernelless=%s ports=%s colocate=%s batch=%d width=%d layers=%s steps=%s "
             "cost_model=%s",
             opt->kernelless_free ? "free" : "charged", opt->first_port_only ? "first" : "all",
             opt->colocate ? "on" : "off", opt->batch, opt->width, layers, steps,
             devcost_model_name((devcost_model)opt->cost_model));
}

/* ------------------------------------------------------------------ balance */

/* One crossing of a group boundary: producer, port, consuming placement unit, its kind. */
typedef struct cli_cross {
    int src, port, unit, kind;
} cli_cross;

enum { CLI_CROSS_OTHER = 0, CLI_CROSS_UPDATE = 1, CLI_CROSS_READ = 2 };

static int cli_cross_cmp(const void *pa, const void *pb)
{
    const cli_cross *a = pa, *b = pb;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->port != b->port)
        return a->port < b->port ? -1 : 1;
    return (a->unit > b->unit) - (a->unit < b->unit);
}

/* The group an op is placed with: its anchor's (pb_graph.placed_with) or its own. */
static int cli_unit(const pb_graph *g, int v)
{
    int a = g->placed_with && g->placed_with[v] >= 0 ? g->placed_with[v] : v;
    return g->group_of ? g->group_of[a] : a;
}

/* Is v a read of a variable (an Identity whose only input is a VariableV2)? */
static int cli_is_read(const pb_graph *g, int v)
{
    if (strcmp(g->node_type[v], "Identity") != 0 || g->pred_start[v + 1] - g->pred_start[v] != 1)
        return 0;
    return strcmp(g->node_type[g->pred[g->pred_start[v]]], "VariableV2") == 0;
}

/* Bytes and transfers crossing placement units in g per kind ([3] each); one transfer per
 * (producer, port, consuming unit), as the grouped graph's edges carry them. */
static int cli_crossing(const pb_graph *g, double *bytes, double *count)
{
    cli_cross *c = malloc((size_t)(g->n_edges ? g->n_edges : 1) * sizeof *c);
    if (!c)
        return -1;
    int n = 0;
    for (int e = 0; e < g->n_edges; e++) {
        int u = g->edge_src[e], w = g->edge_dst[e];
        if (cli_unit(g, u) == cli_unit(g, w))
            continue;
        int kind =
            strcmp(g->node_type[u], "VariableV2") == 0 && strncmp(g->node_type[w], "Apply", 5) == 0
                ? CLI_CROSS_UPDATE
            : cli_is_read(g, u) ? CLI_CROSS_READ
                                : CLI_CROSS_OTHER;
        c[n++] = (cli_cross){u, g->edge_port[e], cli_unit(g, w), kind};
    }
    qsort(c, (size_t)n, sizeof *c, cli_cross_cmp);
    for (int k = 0; k < n; k++) {
        if (k > 0 && cli_cross_cmp(&c[k - 1], &c[k]) == 0)
            continue;
        bytes[c[k].kind] += g->port_bytes[g->port_start[c[k].src] + c[k].port];
        count[c[k].kind] += 1;
    }
    free(c);
    return 0;
}

void cli_balance_header(void)
{
    printf("%-22s %6s %9s %9s %9s %7s %7s %10s %7s %7s %7s %7s\n", "set", "graphs", "comp-us",
           "busy-us", "xfer-us", "ratio", "free-%", "cross-MB", "upd-%", "read-%", "upd-n%",
           "read-n%");
}

void cli_balance_print(const char *set, const pb_graph *const *graphs, int n)
{
    double cost = 0, busy = 0, out = 0, ops = 0, free_ops = 0, cross[3] = {0, 0, 0};
    double sends[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        const pb_graph *g = graphs[i];
        for (int v = 0; v < g->n_nodes; v++) {
            cost += g->cost_us[v];
            busy += g->cost_us[v] > 0 ? g->cost_us[v] + CLI_BALANCE_DELTA1_US : 0;
            out += g->out_bytes[v];
            free_ops += g->cost_us[v] == 0;
        }
        ops += g->n_nodes;
        if (cli_crossing(g, cross, sends)) {
            cli_error("out of memory");
            return;
        }
    }
    double total = cross[0] + cross[1] + cross[2], n_sends = sends[0] + sends[1] + sends[2];
    double comp = ops > 0 ? cost / ops : 0,
           xfer = ops > 0 ? out / CLI_BALANCE_BUS_BYTES_PER_US / ops : 0;
    printf("%-22s %6d %9.2f %9.2f %9.2f %7.2f %7.1f %10.2f %7.1f %7.1f %7.1f %7.1f\n", set, n, comp,
           ops > 0 ? busy / ops : 0, xfer, comp > 0 ? xfer / comp : 0,
           ops > 0 ? 100 * free_ops / ops : 0, n > 0 ? total / n / 1e6 : 0,
           total > 0 ? 100 * cross[1] / total : 0, total > 0 ? 100 * cross[2] / total : 0,
           n_sends > 0 ? 100 * sends[1] / n_sends : 0, n_sends > 0 ? 100 * sends[2] / n_sends : 0);
}
