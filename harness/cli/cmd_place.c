/* cmd_place.c — `placebench place`: one placer on one graph without a config; prints the
 * result and writes the placement. */
#include "cli.h"

#include "cli_output.h"
#include "config/cluster.h"
#include "model/graph.h"
#include "plugin/loader.h"
#include "data/nodelink.h"
#include "run/place.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char place_usage[] =
    "placebench place --graph G.json --placer NAME [--embedding E] [--traversal T] "
    "[--devices N] [--episodes K | --sim-calls K] [--seed S] [--out P.json] [--json] "
    "[--cluster C] [--simulator S] [--opt KIND.KEY=VALUE]... [--timeout S]";

static void place_print_help(void)
{
    printf("usage: %s\n\n"
           "Runs one placer on one graph in this process, as one run of an experiment would\n"
           "(same cluster presets, simulator, host services and seeds), and prints the step\n"
           "time of the initial placement and of the best placement found.\n\n"
           "  --graph G.json    networkx node-link JSON; a grouped graph is placed by group\n"
           "  --placer NAME     placer plugin (placebench list)\n"
           "  --embedding E     embedding plugin, for learned placers (placeto needs one, e.g.\n"
           "                    placeto-gnn)\n"
           "  --traversal T     traversal plugin giving the order placers visit nodes in\n"
           "  --devices N       devices of the cluster; default 3\n"
           "  --episodes K      learned placers train for K episodes\n"
           "  --sim-calls K     search placers (random, ...) get K simulator calls\n"
           "                    (without either, each plugin's own default)\n"
           "  --seed S          run seed (each plugin gets a seed derived from it); default 1\n"
           "  --out P.json      write the best placement as {node name: device}, the format\n"
           "                    'placebench simulate --placement' reads (refused for the\n"
           "                    replicated strategies of dp-nccl, dp-nccl-p, pure-mcts, tag)\n"
           "  --json            print {\"initial_step_time_us\", \"best_step_time_us\",\n"
           "                    \"simulator_calls\", \"wall_s\", \"feasible\", \"throughput\",\n"
           "                    \"monetary_cost\", \"strategy\"} instead of text (throughput\n"
           "                    and cost: 0 unless the simulator models them, as heterps and\n"
           "                    topology do; strategy: placement, replicated or provisioned),\n"
           "                    and for a strategy that duplicates single ops (dp-nccl with\n"
           "                    sfb=true) \"duplicated_ops\": their names\n"
           "  --cluster C       cluster preset; default placeto-k80\n"
           "  --simulator S     simulator plugin; default placeto\n"
           "  --opt KIND.KEY=VALUE  an option of the placer, embedding, traversal or\n"
           "                    simulator plugin, e.g. --opt placer.reward=forks (repeatable;\n"
           "                    'placebench help placer/NAME' lists them)\n"
           "  --timeout S       the host's deadline passes after 90%% of S seconds\n",
           place_usage);
}

#define PLACE_MAX_OPTS 64

typedef struct place_args {
    const char *graph, *placer, *embedding, *traversal, *cluster, *simulator, *out;
    int devices, json;
    long long episodes, sim_calls;
    unsigned long long seed;
    double timeout;
    /* --opt values by kind (pb_kind index), each "KEY=VALUE" */
    const char *opts[PB_KIND_PLACER + 1][PLACE_MAX_OPTS];
    int n_opts[PB_KIND_PLACER + 1];
} place_args;

/* Parses a whole decimal number in [lo, hi]. */
static int place_parse_ll(const char *text, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* --opt KIND.KEY=VALUE */
static int place_add_opt(place_args *a, const char *value)
{
    const char *dot = strchr(value, '.');
    char kind[16];
    size_t len = dot ? (size_t)(dot - value) : 0;
    if (!dot || len == 0 || len >= sizeof kind || !strchr(dot, '='))
        return cli_error("place: --opt wants KIND.KEY=VALUE (KIND placer, embedding, traversal "
                         "or simulator), not '%s'",
                         value);
    memcpy(kind, value, len);
    kind[len] = '\0';
    int k = loader_kind_from_name(kind);
    if (!k)
        return cli_error("place: --opt '%s': unknown plugin kind '%s'", value, kind);
    if (a->n_opts[k] == PLACE_MAX_OPTS)
        return cli_error("place: more than %d --opt for the %s", PLACE_MAX_OPTS, kind);
    a->opts[k][a->n_opts[k]++] = dot + 1;
    return 0;
}

static int place_numeric_arg(place_args *a, const char *arg, const char *value)
{
    long long v;
    if (strcmp(arg, "--devices") == 0) {
        if (place_parse_ll(value, 1, 4096, &v))
            return cli_error("place: --devices wants an integer in 1..4096, not '%s'", value);
        a->devices = (int)v;
    } else if (strcmp(arg, "--episodes") == 0) {
        if (place_parse_ll(value, 1, 1000000000, &a->episodes))
            return cli_error("place: --episodes wants a positive integer, not '%s'", value);
    } else if (strcmp(arg, "--sim-calls") == 0) {
        if (place_parse_ll(value, 1, (long long)1e15, &a->sim_calls))
            return cli_error("place: --sim-calls wants a positive integer, not '%s'", value);
    } else if (strcmp(arg, "--seed") == 0) {
        /* Any 64-bit run seed, so that a stored run (export's seed column) can be re-run. */
        if (cli_parse_u64(value, &a->seed))
            return cli_error("place: --seed wants a non-negative integer, not '%s'", value);
    } else {
        char *end;
        errno = 0;
        a->timeout = strtod(value, &end);
        if (errno || end == value || *end || !(a->timeout > 0) || isinf(a->timeout))
            return cli_error("place: --timeout wants a positive number of seconds, not '%s'",
                             value);
    }
    return 0;
}

static int place_value_arg(place_args *a, const char *arg, const char *value)
{
    const char **slot = strcmp(arg, "--graph") == 0       ? &a->graph
                        : strcmp(arg, "--placer") == 0    ? &a->placer
                        : strcmp(arg, "--embedding") == 0 ? &a->embedding
                        : strcmp(arg, "--traversal") == 0 ? &a->traversal
                        : strcmp(arg, "--cluster") == 0   ? &a->cluster
                        : strcmp(arg, "--simulator") == 0 ? &a->simulator
                        : strcmp(arg, "--out") == 0       ? &a->out
                                                          : NULL;
    if (slot) {
        *slot = value;
        return 0;
    }
    if (strcmp(arg, "--opt") == 0)
        return place_add_opt(a, value);
    static const char *const numeric[] = {"--devices", "--episodes", "--sim-calls", "--seed",
                                          "--timeout"};
    for (size_t i = 0; i < sizeof numeric / sizeof numeric[0]; i++)
        if (strcmp(arg, numeric[i]) == 0)
            return place_numeric_arg(a, arg, value);
    return cli_error("place: unknown argument '%s' (see 'placebench place --help')", arg);
}

/* Returns 0 on success, an exit status otherwise, -1 after printing the help (exit 0). */
static int place_parse_args(int argc, char **argv, place_args *a)
{
    memset(a, 0, sizeof *a);
    a->devices = 3;
    a->seed = 1;
    a->cluster = "placeto-k80";
    a->simulator = "placeto";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            place_print_help();
            return -1;
        }
        if (strcmp(arg, "--json") == 0) {
            a->json = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0)
            return cli_error("place: unexpected argument '%s' (see 'placebench place --help')",
                             arg);
        if (i + 1 >= argc)
            return cli_error("place: %s needs a value", arg);
        int rc = place_value_arg(a, arg, argv[++i]);
        if (rc)
            return rc;
    }
    if (!a->graph || !a->placer)
        return cli_usage(place_usage);
    if (a->episodes && a->sim_calls)
        return cli_error("place: give --episodes or --sim-calls, not both");
    return 0;
}

/* The plugins of the run, resolved with their --opt values. */
typedef struct place_plugins {
    plan_plugin simulator, placer, embedding, traversal;
} place_plugins;

static void place_plugins_free(place_plugins *pp)
{
    place_plugin_free(&pp->simulator);
    place_plugin_free(&pp->placer);
    place_plugin_free(&pp->embedding);
    place_plugin_free(&pp->traversal);
}

static int place_resolve_all(loader *l, const place_args *a, place_plugins *pp, pb_error *err)
{
    memset(pp, 0, sizeof *pp);
    struct {
        int kind;
        const char *name;
        plan_plugin *out;
    } want[] = {{PB_KIND_SIMULATOR, a->simulator, &pp->simulator},
                {PB_KIND_PLACER, a->placer, &pp->placer},
                {PB_KIND_EMBEDDING, a->embedding, &pp->embedding},
                {PB_KIND_TRAVERSAL, a->traversal, &pp->traversal}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!want[i].name) {
            if (a->n_opts[want[i].kind])
                return pb_errorf(err, "--opt %s.%s: no %s was named",
                                 loader_kind_name(want[i].kind), a->opts[want[i].kind][0],
                                 loader_kind_name(want[i].kind));
            continue;
        }
        char where[300];
        snprintf(where, sizeof where, "%s '%s'", loader_kind_name(want[i].kind), want[i].name);
        if (place_plugin_resolve(l, want[i].kind, want[i].name, a->opts[want[i].kind],
                                 a->n_opts[want[i].kind], where, want[i].out, err))
            return PB_ERR;
    }
    return PB_OK;
}

/* Writes {node name: device} of the placed (grouped) graph. */
static int place_write_placement(const char *path, const pb_graph *g, const int *device)
{
    json_t *root = json_object();
    for (int v = 0; root && v < g->n_nodes; v++)
        if (json_object_set_new(root, g->node_name[v], json_integer(device[v])))
            root = NULL;
    if (!root)
        return cli_error("place: out of memory");
    cli_output o;
    if (cli_output_open(&o, path)) {
        json_decref(root);
        return 1;
    }
    int ok = json_dumpf(root, o.f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0;
    if (ok)
        fputc('\n', o.f);
    json_decref(root);
    return cli_output_close(&o, ok);
}

/* --out: a placement file for plain placements (and HeterPS resource types); a replicated
 * strategy's device groups are not devices, so writing them as a placement would mislead. */
static int place_write_out(const place_args *a, const pb_graph *grouped, const place_result *r)
{
    if (r->kind == PB_STRATEGY_REPLICATED)
        return cli_error("place: --out writes plain placements; %s returned a replicated "
                         "strategy (device groups and replication options), which it cannot hold",
                         a->placer);
    return place_write_placement(a->out, grouped, r->best_device);
}

static const char *place_kind_name(int kind)
{
    return kind == PB_STRATEGY_REPLICATED    ? "replicated"
           : kind == PB_STRATEGY_PROVISIONED ? "provisioned"
                                             : "placement";
}

/* The ops the returned strategy duplicates one by one (SFB), as a JSON array text (caller
 * frees), or NULL when there are none. */
static char *place_duplicated_json(const place_result *r, const pb_graph *g)
{
    json_t *names = json_array();
    for (int v = 0; names && v < g->n_nodes; v++)
        if (r->best_op_replication[v] == PB_REPL_DUPLICATE)
            json_array_append_new(names, json_string(g->node_name[v]));
    char *text = names && json_array_size(names) ? json_dumps(names, JSON_COMPACT) : NULL;
    json_decref(names);
    return text;
}

static void place_print(const place_args *a, const place_result *r, const pb_graph *g)
{
    char *dup = place_duplicated_json(r, g);
    if (a->json) {
        /* JSON has no NaN: a placer without an initial placement gets null. */
        char initial[32] = "null";
        if (!isnan(r->initial_us))
            snprintf(initial, sizeof initial, "%.17g", r->initial_us);
        printf("{\"initial_step_time_us\": %s, \"best_step_time_us\": %.17g, "
               "\"simulator_calls\": %lld, \"wall_s\": %.17g, \"feasible\": %s, "
               "\"throughput\": %.17g, \"monetary_cost\": %.17g, \"strategy\": \"%s\"",
               initial, r->best_us, r->sim_calls, r->wall_s, r->feasible ? "true" : "false",
               r->throughput, r->monetary_cost, place_kind_name(r->kind));
        if (dup)
            printf(", \"duplicated_ops\": %s", dup);
        printf("}\n");
        free(dup);
        return;
    }
    free(dup);
    printf("graph       %s (%d nodes placed)\n", g->name, g->grouped->n_nodes);
    printf("placer      %s on %d devices (%s strategy)\n", a->placer, a->devices,
           place_kind_name(r->kind));
    if (isnan(r->initial_us))
        printf("initial     -\n");
    else
        printf("initial     %.3f us\n", r->initial_us);
    printf("best        %.3f us", r->best_us);
    if (!isnan(r->initial_us) && r->initial_us > 0)
        printf("  (%.2f%% better than the initial placement)",
               100.0 * (r->initial_us - r->best_us) / r->initial_us);
    printf("\nsim calls   %lld\nwall        %.3f s\n", r->sim_calls, r->wall_s);
    int n_dup = 0;
    for (int v = 0; v < g->n_nodes; v++)
        n_dup += r->best_op_replication[v] == PB_REPL_DUPLICATE;
    if (n_dup)
        printf("duplicated  %d ops (SFB; --json lists them)\n", n_dup);
    if (r->throughput > 0 || r->monetary_cost > 0)
        printf("throughput  %.6g samples/s\ncost        %.6g USD%s\n", r->throughput,
               r->monetary_cost, r->feasible ? "" : " (infeasible)");
}

/* Builds the cluster, runs the placer on it and writes and prints the result; returns the exit
 * status. */
static int place_on_cluster(const place_args *a, const pb_graph *g, const place_plugins *pp,
                            int *device)
{
    pb_error err;
    pb_cluster *c;
    if (cluster_preset_seeded(a->cluster, a->devices, pb_seed_derive(a->seed, "cluster#0"), &c,
                              &err))
        return cli_error("%s", err.msg);
    place_request q = {.graph = g,
                       .cluster = c,
                       .simulator = &pp->simulator,
                       .placer = &pp->placer,
                       .embedding = &pp->embedding,
                       .traversal = &pp->traversal,
                       .seed = a->seed,
                       .episodes = (int)a->episodes,
                       .sim_calls = a->sim_calls,
                       .timeout_s = a->timeout,
                       .log_id = "place"};
    int *op_repl = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof(int));
    if (!op_repl) {
        cluster_free(c);
        return cli_error("out of memory");
    }
    place_result r = {.best_device = device, .best_op_replication = op_repl};
    int status = 1;
    if (place_run(&q, &r, &err) == PB_OK) {
        status = a->out ? place_write_out(a, g->grouped, &r) : 0;
        if (status == 0)
            place_print(a, &r, g);
    } else {
        cli_error("%s", err.msg);
    }
    free(op_repl);
    cluster_free(c);
    return status;
}

/* Loads the graph, resolves the plugins and runs; returns the exit status. */
static int place_execute(const place_args *a)
{
    pb_error err;
    pb_graph *g;
    if (nodelink_read(a->graph, &g, &err))
        return cli_error("%s", err.msg);
    if (g->n_nodes == 0) {
        graph_free(g);
        return cli_error("%s: graph has no nodes", a->graph);
    }
    loader *l = loader_new(NULL, 0, &err);
    place_plugins pp;
    int status = 1;
    int *device = malloc((size_t)g->grouped->n_nodes * sizeof(int));
    if (!l || !device) {
        cli_error("%s", l ? "out of memory" : err.msg);
    } else if (place_resolve_all(l, a, &pp, &err) == PB_OK) {
        status = place_on_cluster(a, g, &pp, device);
        place_plugins_free(&pp);
    } else {
        cli_error("%s", err.msg);
    }
    free(device);
    loader_free(l);
    graph_free(g);
    return status;
}

int cmd_place(int argc, char **argv)
{
    place_args a;
    int rc = place_parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    return place_execute(&a);
}
