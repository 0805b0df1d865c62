/* cmd_cluster.c — `placebench cluster`: list the cluster presets, show one cluster's devices,
 * machines and links. */
#include "cli.h"

#include "config/cluster.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Above this many devices the device-level matrix is printed only on request (--matrix). */
#define CMD_CLUSTER_MATRIX_MAX 32

static const char cmd_cluster_usage[] =
    "placebench cluster list | placebench cluster show NAME --devices N [--seed S] [--matrix]";

static void cmd_cluster_help(void)
{
    printf("usage: %s\n\n"
           "Cluster presets are described in Lua (configs/clusters.lua, built into placebench):\n"
           "a device-type catalog (FLOP/s, memory bandwidth, memory, price per hour) and\n"
           "presets that lay devices out on machines joined by links.\n\n"
           "  list                 the presets with a one-line description each\n"
           "  show NAME            one preset built for N devices: its device types, machines,\n"
           "                       devices, links between machines and the Placeto bus\n"
           "                       constants; device numbers and machine numbers start at 0\n"
           "    --devices N        number of devices (required; as `devices` in a config)\n"
           "    --seed S           seed of the preset's random draws (tag-random); default 1\n"
           "    --matrix           also print the device-by-device bandwidth matrix when there\n"
           "                       are more than %d devices (it is printed up to that)\n\n"
           "Bandwidths are in bytes per microsecond (1 B/us = 1 MB/s), latencies in us.\n",
           cmd_cluster_usage, CMD_CLUSTER_MATRIX_MAX);
}

typedef struct cmd_cluster_args {
    const char *name;
    int n_devices;
    unsigned long long seed;
    int matrix;
} cmd_cluster_args;

/* A decimal integer in [lo, hi]; the whole text must be a number. */
static int cmd_cluster_number(const char *text, unsigned long long lo, unsigned long long hi,
                              unsigned long long *out)
{
    return cli_parse_u64(text, out) || *out < lo || *out > hi ? -1 : 0;
}

/* Returns 0 on success, an exit status otherwise, -1 after printing the help (exit 0). */
static int cmd_cluster_parse(int argc, char **argv, cmd_cluster_args *a)
{
    unsigned long long v;
    a->seed = 1;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            cmd_cluster_help();
            return -1;
        }
        if (strcmp(arg, "--matrix") == 0) {
            a->matrix = 1;
        } else if (strcmp(arg, "--devices") == 0 || strcmp(arg, "--seed") == 0) {
            if (i + 1 >= argc)
                return cli_error("cluster: %s needs a value", arg);
            const char *value = argv[++i];
            int devices = strcmp(arg, "--devices") == 0;
            if (cmd_cluster_number(value, devices ? 1 : 0, devices ? 1000000 : ~0ULL, &v))
                return cli_error("cluster: %s '%s' is not %s", arg, value,
                                 devices ? "an integer >= 1" : "a non-negative integer");
            if (devices)
                a->n_devices = (int)v;
            else
                a->seed = v;
        } else if (arg[0] == '-' || a->name) {
            return cli_error("cluster: unexpected argument '%s' (see 'placebench cluster --help')",
                             arg);
        } else {
            a->name = arg;
        }
    }
    if (!a->name)
        return cli_usage(cmd_cluster_usage);
    if (!a->n_devices)
        return cli_error("cluster show %s: --devices N is required", a->name);
    return 0;
}

static int cmd_cluster_list(void)
{
    cfg_preset *p;
    int n;
    pb_error err;
    if (cluster_presets(&p, &n, &err))
        return cli_error("%s", err.msg);
    for (int i = 0; i < n; i++)
        printf("%-12s %s\n", p[i].name, p[i].about);
    config_cluster_presets_free(p, n);
    return 0;
}

static void cmd_cluster_types(const pb_cluster *c)
{
    printf("\ndevice types\n  %-9s %9s %9s %11s %8s %9s\n", "type", "TFLOP/s", "mem GB/s",
           "memory GiB", "USD/h", "speed");
    for (int t = 0; t < c->n_types; t++) {
        const pb_device_type *d = &c->types[t];
        printf("  %-9s %9.3f %9.1f %11.2f %8.4f %9.4f\n", d->name, d->peak_flops / 1e12,
               d->mem_bandwidth / 1e9, d->memory_bytes / (1024.0 * 1024.0 * 1024.0),
               d->price_per_hour, d->speed_vs_ref);
    }
    puts("  (speed: peak FLOP/s relative to the K80, the device graph costs are measured on)");
}

/* first[k]: the first device of machine k. */
static void cmd_cluster_machines(const pb_cluster *c, const int *first)
{
    int n = c->n_devices;
    printf("\nmachines (link inside: bandwidth B/us, latency us)\n");
    for (int k = 0; k < c->n_machines; k++) {
        printf("  machine %-3d", k);
        const char *sep = "";
        for (int t = 0; t < c->n_types; t++) {
            int count = 0;
            for (int i = 0; i < n; i++)
                count += c->device_machine[i] == k && c->device_type[i] == t;
            if (count)
                printf("%s%d x %s", sep, count, c->types[t].name);
            sep = count ? " + " : sep;
        }
        size_t at = (size_t)first[k] * (size_t)n + (size_t)first[k];
        printf("; link %.6g B/us, %.6g us\n", c->link_bandwidth[at], c->link_latency[at]);
    }
}

/* Consecutive devices of one type on one machine, one line per run. */
static void cmd_cluster_devices(const pb_cluster *c)
{
    printf("\ndevices\n");
    for (int i = 0; i < c->n_devices;) {
        int j = i;
        while (j + 1 < c->n_devices && c->device_type[j + 1] == c->device_type[i] &&
               c->device_machine[j + 1] == c->device_machine[i])
            j++;
        char range[32];
        snprintf(range, sizeof range, j > i ? "%d-%d" : "%d", i, j);
        printf("  %-9s %-9s machine %d\n", range, c->types[c->device_type[i]].name,
               c->device_machine[i]);
        i = j + 1;
    }
}

/* A square matrix of n rows; row r's entry s is value[idx[r] * stride + idx[s]]. */
static void cmd_cluster_matrix(const char *title, const double *value, int stride, const int *idx,
                               int n)
{
    printf("\n%s\n%6s", title, "");
    for (int s = 0; s < n; s++)
        printf(" %9d", s);
    putchar('\n');
    for (int r = 0; r < n; r++) {
        printf("%6d", r);
        for (int s = 0; s < n; s++)
            printf(" %9.6g", value[(size_t)idx[r] * (size_t)stride + (size_t)idx[s]]);
        putchar('\n');
    }
}

static void cmd_cluster_print(const pb_cluster *c, const cmd_cluster_args *a, const int *first,
                              const int *all)
{
    printf("cluster %s: %d devices on %d machine%s (seed %llu)\n", c->name, c->n_devices,
           c->n_machines, c->n_machines == 1 ? "" : "s", a->seed);
    cmd_cluster_types(c);
    cmd_cluster_machines(c, first);
    cmd_cluster_devices(c);
    if (c->n_machines > 1) {
        cmd_cluster_matrix("bandwidth between machines, B/us (diagonal: inside the machine)",
                           c->link_bandwidth, c->n_devices, first, c->n_machines);
        cmd_cluster_matrix("latency between machines, us (diagonal: inside the machine)",
                           c->link_latency, c->n_devices, first, c->n_machines);
    }
    if (a->matrix || c->n_devices <= CMD_CLUSTER_MATRIX_MAX)
        cmd_cluster_matrix("bandwidth between devices, B/us (row: from, column: to)",
                           c->link_bandwidth, c->n_devices, all, c->n_devices);
    else
        printf("\n(device-by-device bandwidth matrix not printed for %d devices; add --matrix)\n",
               c->n_devices);
    printf("\nPlaceto bus model: delta1 %.6g us, delta2 %.6g us, transfer speed %.6g B/us, "
           "init offset %.6g us\n",
           c->delta1_us, c->delta2_us, c->transfer_speed, c->init_offset_us);
}

static int cmd_cluster_show(const cmd_cluster_args *a)
{
    pb_cluster *c;
    pb_error err;
    if (cluster_preset_seeded(a->name, a->n_devices, a->seed, &c, &err))
        return cli_error("%s", err.msg);
    int *first = malloc((size_t)c->n_machines * sizeof(int));
    int *all = malloc((size_t)c->n_devices * sizeof(int));
    if (!first || !all) {
        free(first);
        free(all);
        cluster_free(c);
        return cli_error("out of memory");
    }
    for (int k = 0; k < c->n_machines; k++)
        first[k] = -1;
    for (int i = c->n_devices - 1; i >= 0; i--) {
        first[c->device_machine[i]] = i;
        all[i] = i;
    }
    cmd_cluster_print(c, a, first, all);
    free(first);
    free(all);
    cluster_free(c);
    if (fflush(stdout) != 0)
        return cli_error("cluster: cannot write the output: %s", strerror(errno));
    return 0;
}

int cmd_cluster(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage(cmd_cluster_usage);
    if (cli_is_help(argv[1])) {
        cmd_cluster_help();
        return 0;
    }
    if (strcmp(argv[1], "list") == 0) {
        if (argc > 2 && cli_is_help(argv[2])) {
            cmd_cluster_help();
            return 0;
        }
        if (argc > 2)
            return cli_error("cluster list: unexpected argument '%s'", argv[2]);
        return cmd_cluster_list();
    }
    if (strcmp(argv[1], "show") != 0)
        return cli_error("cluster: unknown subcommand '%s' (list or show)", argv[1]);
    cmd_cluster_args a = {0};
    int rc = cmd_cluster_parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    return cmd_cluster_show(&a);
}
