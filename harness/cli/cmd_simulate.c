/* cmd_simulate.c — `placebench simulate`: step time and peak memory of one placement of a graph. */
#include "cli.h"

#include "cli_output.h"
#include "cli_sim.h"
#include "cli_strategy.h"
#include "config/cluster.h"
#include "model/graph.h"
#include "plugin/loader.h"
#include "data/nodelink.h"
#include "plugin/options.h"
#include "model/strategy.h"
#include "core/clock.h"
#include "core/strmap.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char simulate_usage[] =
    "placebench simulate --graph G.json (--placement P.json | --strategy S.json) [--devices N] "
    "[--simulator NAME] [--cluster NAME] [--json] [--trace T.json] [--compiled C.json] "
    "[--repeat K] [--opt simulator.KEY=VALUE]...";

static void simulate_print_help(void)
{
    printf(
        "usage: %s\n\n"
        "Evaluates one placement of one graph with the Placeto event simulator (plugin\n"
        "'placeto', cluster preset 'placeto-k80': N K80s, one outgoing bus each, 7600 B/us,\n"
        "delta1 5.7 us, delta2 25 us) and prints the step time and each device's peak memory.\n\n"
        "  --graph G.json      networkx node-link JSON: node 'cost' (us), 'out_size' or\n"
        "                      'out_sizes' (bytes per output port), optional 'group'; link\n"
        "                      'port'.  Node and link order matter (tie-breaks).\n"
        "  --placement P.json  a JSON object mapping every op name, or every group name of a\n"
        "                      grouped graph, to a device index (0-based); a group placement\n"
        "                      is expanded to the ops of each group, as the runner does\n"
        "  --devices N         number of devices; default 1 + the largest index in P.json\n"
        "  --json              print {\"step_time_us\": ..., \"peak_memory_bytes\": [...],\n"
        "                      \"n_events\": ...} with every number exact (shortest text that\n"
        "                      reads back the same); n_events is the number of events the\n"
        "                      reference simulator pops, idle wake-ups included\n"
        "  --trace T.json      write a Chrome trace-event file (ui.perfetto.dev or\n"
        "                      chrome://tracing), times in us.  One process per device\n"
        "                      (\"GPU:0\", ...) with two threads: \"compute\" (tid 0), one\n"
        "                      event per op from its start to its end; \"bus (outgoing)\"\n"
        "                      (tid 1), one event per transfer the device's bus sent, named\n"
        "                      <producer>:<port>, from the start of sending to the arrival of\n"
        "                      the data, with args bytes and to (the destination devices; one\n"
        "                      transfer serves every remote consumer of the port).  The bus\n"
        "                      then stays busy delta2 more, which is not drawn.\n"
        "  --repeat K          evaluate the placement K times after loading and report the\n"
        "                      mean wall time of one simulator evaluation (\"eval_ns\"; the\n"
        "                      text output adds it divided by the events)\n"
        "  --strategy S.json   a strategy with device groups and replication options\n"
        "                      (README \"Strategy files\"); implies --simulator topology\n"
        "  --simulator NAME    the simulator plugin (default placeto; topology with\n"
        "                      --strategy)\n"
        "  --cluster NAME      the cluster preset (default placeto-k80; see 'placebench\n"
        "                      cluster list'); a simulator other than placeto prints per\n"
        "                      device its type, peak memory, compute and outgoing-link time,\n"
        "                      and --json adds feasible, busy_us, link_busy_us (from x to:\n"
        "                      row-major), throughput and monetary_cost; its --trace has a\n"
        "                      process per device with threads \"compute\", \"collectives\"\n"
        "                      (AllReduce members) and \"to <j>\" (transfers to device j)\n"
        "  --compiled C.json   also write, as node-link JSON, the distributed graph the\n"
        "                      strategy compiler makes of the strategy or placement (replicas\n"
        "                      and Split, Concat, AddN and AllReduce nodes, with devices,\n"
        "                      costs and bytes; not for model-parallel split)\n"
        "  --opt simulator.KEY=VALUE\n"
        "                      an option of the simulator plugin, as in 'placebench place'\n"
        "                      (repeatable; 'placebench help simulator/NAME' lists them)\n",
        simulate_usage);
}

enum { SIMULATE_MAX_OPTS = 32 };

typedef struct simulate_args {
    const char *graph, *placement, *trace, *strategy, *simulator, *cluster, *compiled;
    int devices; /* 0: from the placement */
    int json;
    long repeat;                       /* 0: evaluate once, untimed */
    option_kv opts[SIMULATE_MAX_OPTS]; /* --opt simulator.KEY=VALUE */
    int n_opts;
} simulate_args;

/* A whole decimal number in [lo, hi]; -1 otherwise. */
static long simulate_parse_count(const char *text, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || !*text || *end || v < lo || v > hi)
        return -1;
    return v;
}

/* --opt simulator.KEY=VALUE: the key and value point into the argument (kept as given). */
static int simulate_add_opt(simulate_args *a, char *value)
{
    static const char prefix[] = "simulator.";
    char *eq = strchr(value, '=');
    if (strncmp(value, prefix, sizeof prefix - 1) != 0 || !eq || eq == value + sizeof prefix - 1)
        return cli_error("simulate: --opt wants simulator.KEY=VALUE, not '%s'", value);
    if (a->n_opts == SIMULATE_MAX_OPTS)
        return cli_error("simulate: more than %d --opt", SIMULATE_MAX_OPTS);
    *eq = '\0';
    a->opts[a->n_opts++] = (option_kv){value + sizeof prefix - 1, eq + 1};
    return 0;
}

static int simulate_option_value(const char *arg, int argc, char **argv, int *i, simulate_args *a)
{
    static const char *const known[] = {"--graph",    "--placement", "--trace",     "--devices",
                                        "--repeat",   "--strategy",  "--simulator", "--cluster",
                                        "--compiled", "--opt"};
    int is_known = 0;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        is_known |= strcmp(arg, known[k]) == 0;
    if (!is_known)
        return cli_error("simulate: unknown argument '%s' (see 'placebench simulate --help')", arg);
    if (*i + 1 >= argc)
        return cli_error("simulate: %s needs a value", arg);
    char *value = argv[++*i];
    if (strcmp(arg, "--graph") == 0)
        a->graph = value;
    else if (strcmp(arg, "--placement") == 0)
        a->placement = value;
    else if (strcmp(arg, "--trace") == 0)
        a->trace = value;
    else if (strcmp(arg, "--strategy") == 0)
        a->strategy = value;
    else if (strcmp(arg, "--simulator") == 0)
        a->simulator = value;
    else if (strcmp(arg, "--cluster") == 0)
        a->cluster = value;
    else if (strcmp(arg, "--compiled") == 0)
        a->compiled = value;
    else if (strcmp(arg, "--opt") == 0)
        return simulate_add_opt(a, value);
    else if (strcmp(arg, "--devices") == 0) {
        a->devices = (int)simulate_parse_count(value, 1, 4096);
        if (a->devices < 0)
            return cli_error("simulate: --devices '%s' is not a number in 1..4096", value);
    } else if (strcmp(arg, "--repeat") == 0) {
        a->repeat = simulate_parse_count(value, 1, 1000000000L);
        if (a->repeat < 0)
            return cli_error("simulate: --repeat '%s' is not a number in 1..1e9", value);
    }
    return 0;
}

/* Returns 0 on success, an exit status otherwise, -1 after printing the help (exit 0). */
static int simulate_parse_args(int argc, char **argv, simulate_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            simulate_print_help();
            return -1;
        }
        if (strcmp(arg, "--json") == 0) {
            a->json = 1;
            continue;
        }
        int status = simulate_option_value(arg, argc, argv, &i, a);
        if (status)
            return status;
    }
    if (!a->graph || !a->placement == !a->strategy)
        return cli_usage(simulate_usage);
    if (!a->simulator)
        a->simulator = a->strategy ? "topology" : "placeto";
    if (!a->cluster)
        a->cluster = "placeto-k80";
    return 0;
}

/* ---------------------------------------------------------------- the placement file */

/* A placement as read: device per node of the level it names (ops or groups). */
typedef struct simulate_placement {
    int by_group;   /* keys are group names of a grouped graph */
    int n;          /* nodes of that level */
    int *device;    /* [n] */
    int max_device; /* largest index used */
} simulate_placement;

static int simulate_map_names(strmap *m, const pb_graph *g, pb_error *err)
{
    for (int v = 0; v < g->n_nodes; v++)
        if (strmap_put(m, g->node_name[v], v))
            return pb_errorf(err, "out of memory");
    return PB_OK;
}

/* Decides whether the keys name groups or ops: every key must be of one kind.  When group and
 * op names overlap and the keys fit both, groups win if the keys cover every group. */
static int simulate_choose_level(json_t *root, const strmap *ops, const strmap *groups, int grouped,
                                 int n_groups, const char *path, int *by_group, pb_error *err)
{
    const char *key, *op_only = NULL, *group_only = NULL;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        int is_op = strmap_get(ops, key) >= 0;
        int is_group = grouped && strmap_get(groups, key) >= 0;
        if (!is_op && !is_group)
            return pb_errorf(err, "%s: '%s' is neither an op nor a group of the graph", path, key);
        if (is_op && !is_group && !op_only)
            op_only = key;
        if (is_group && !is_op && !group_only)
            group_only = key;
    }
    if (op_only && group_only)
        return pb_errorf(err,
                         "%s: mixes op names ('%s') and group names ('%s'); name every op or "
                         "every group",
                         path, op_only, group_only);
    int all_groups = grouped && !op_only, all_ops = !group_only;
    *by_group = all_groups && (!all_ops || (int)json_object_size(root) == n_groups);
    return PB_OK;
}

/* Reads the device of every key into p->device; every node of the level must have one. */
static int simulate_fill_devices(json_t *root, const strmap *names, const pb_graph *level,
                                 const char *path, const char *what, simulate_placement *p,
                                 pb_error *err)
{
    for (int v = 0; v < p->n; v++)
        p->device[v] = -1;
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        if (!json_is_integer(value) || json_integer_value(value) < 0 ||
            json_integer_value(value) > 4095)
            return pb_errorf(err, "%s: %s '%s': device must be an integer in 0..4095", path, what,
                             key);
        int d = (int)json_integer_value(value);
        p->device[strmap_get(names, key)] = d;
        if (d > p->max_device)
            p->max_device = d;
    }
    for (int v = 0; v < p->n; v++)
        if (p->device[v] < 0)
            return pb_errorf(err, "%s: no device for %s '%s' (every %s needs one)", path, what,
                             level->node_name[v], what);
    return PB_OK;
}

static int simulate_read_placement(const char *path, const pb_graph *g, simulate_placement *p,
                                   pb_error *err)
{
    memset(p, 0, sizeof *p);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return pb_errorf(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    const pb_graph *gg = g->grouped;
    int grouped = gg != g;
    strmap ops, groups;
    strmap_init(&ops);
    strmap_init(&groups);
    int rc = json_is_object(root) && json_object_size(root) > 0
                 ? simulate_map_names(&ops, g, err)
                 : pb_errorf(err, "%s: expected a JSON object mapping node names to devices", path);
    if (rc == PB_OK && grouped)
        rc = simulate_map_names(&groups, gg, err);
    if (rc == PB_OK)
        rc = simulate_choose_level(root, &ops, &groups, grouped, gg->n_nodes, path, &p->by_group,
                                   err);
    if (rc == PB_OK) {
        const pb_graph *level = p->by_group ? gg : g;
        p->n = level->n_nodes;
        p->device = malloc((size_t)(p->n > 0 ? p->n : 1) * sizeof(int));
        rc = p->device ? simulate_fill_devices(root, p->by_group ? &groups : &ops, level, path,
                                               p->by_group ? "group" : "op", p, err)
                       : pb_errorf(err, "out of memory");
    }
    if (rc != PB_OK) {
        free(p->device);
        p->device = NULL;
    }
    strmap_free(&ops);
    strmap_free(&groups);
    json_decref(root);
    return rc;
}

/* The op-level placement the simulator evaluates (expanded from groups when needed). */
static int simulate_op_strategy(const pb_graph *g, const simulate_placement *p, int *op_device,
                                pb_strategy *ops, pb_error *err)
{
    pb_strategy_placement(ops, g->n_nodes, op_device);
    if (!p->by_group) {
        memcpy(op_device, p->device, (size_t)g->n_nodes * sizeof(int));
        strategy_apply_placed_with(g, ops);
        return PB_OK;
    }
    pb_strategy groups;
    pb_strategy_placement(&groups, p->n, p->device);
    return strategy_expand(g, &groups, ops, err);
}

/* ---------------------------------------------------------------- output */

static void simulate_print_number(double d)
{
    char buf[40];
    options_format_double(d, buf, sizeof buf);
    fputs(buf, stdout);
}

static void simulate_print_json(const pb_eval *ev, int n_devices, double eval_ns, int timed)
{
    fputs("{\"step_time_us\": ", stdout);
    simulate_print_number(ev->step_time_us);
    fputs(", \"peak_memory_bytes\": [", stdout);
    for (int d = 0; d < n_devices; d++) {
        if (d)
            fputs(", ", stdout);
        simulate_print_number(ev->peak_mem_bytes[d]);
    }
    fprintf(stdout, "], \"n_events\": %lld", ev->n_events);
    if (timed) {
        fputs(", \"eval_ns\": ", stdout);
        simulate_print_number(eval_ns);
    }
    fputs("}\n", stdout);
}

static void simulate_print_text(const simulate_args *a, const pb_graph *g,
                                const simulate_placement *p, const pb_cluster *c, const pb_eval *ev,
                                double eval_ns)
{
    printf("graph       %s: %d ops", a->graph, g->n_nodes);
    if (g->grouped != g)
        printf(", %d groups", g->grouped->n_nodes);
    printf("\nplacement   %s: by %s, %d devices\n", a->placement, p->by_group ? "group" : "op",
           c->n_devices);
    printf("step time   %.17g us\n", ev->step_time_us);
    printf("events      %lld\n", ev->n_events);
    printf("feasible    %s\n\n", ev->feasible ? "yes" : "no (a device exceeds its memory)");
    printf("%-8s %20s %16s %16s\n", "device", "peak memory (B)", "compute (us)", "bus (us)");
    for (int d = 0; d < c->n_devices; d++)
        printf("%-8d %20.0f %16.3f %16.3f\n", d, ev->peak_mem_bytes[d], ev->busy_us[d],
               ev->link_busy_us[d]);
    if (a->repeat > 0)
        printf("\n%ld evaluations, %.1f ns per evaluation, %.2f ns per event\n", a->repeat, eval_ns,
               ev->n_events > 0 ? eval_ns / (double)ev->n_events : 0.0);
}

/* Metadata events: a process per device named like the device, threads 0 (ops) and 1 (the
 * device's outgoing bus). */
static void simulate_trace_names(json_t *events, int n_devices)
{
    static const char *const threads[2] = {"compute", "bus (outgoing)"};
    for (int d = 0; d < n_devices; d++) {
        char name[32];
        snprintf(name, sizeof name, "GPU:%d", d);
        json_array_append_new(events,
                              json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "process_name",
                                        "ph", "M", "pid", d, "tid", 0, "args", "name", name));
        json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:i}}", "name",
                                                "process_sort_index", "ph", "M", "pid", d, "tid", 0,
                                                "args", "sort_index", d));
        for (int tid = 0; tid < 2; tid++)
            json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name",
                                                    "thread_name", "ph", "M", "pid", d, "tid", tid,
                                                    "args", "name", threads[tid]));
    }
}

/* A complete ("X") event. */
static json_t *simulate_trace_span(const char *name, const char *cat, double start, double end,
                                   int pid, int tid)
{
    return json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}", "name", name, "cat", cat, "ph", "X",
                     "ts", start, "dur", end - start, "pid", pid, "tid", tid);
}

/* The devices, in increasing order, of the consumers of port k of op v placed off v's device;
 * seen[] (n_devices entries, all != stamp on entry) is scratch. */
static json_t *simulate_trace_destinations(const pb_graph *g, const int *op_device, int v, int k,
                                           int *seen, int stamp, int n_devices)
{
    for (int i = g->succ_start[v]; i < g->succ_start[v + 1]; i++) {
        int e = g->succ_edge[i], d = op_device[g->succ[i]];
        if (g->edge_port[e] == k && d != op_device[v])
            seen[d] = stamp;
    }
    json_t *to = json_array();
    for (int d = 0; d < n_devices; d++)
        if (seen[d] == stamp)
            json_array_append_new(to, json_integer(d));
    return to;
}

/* One event per transfer on the sending device's bus thread (tid 1). */
static int simulate_trace_transfers(json_t *events, const pb_graph *g, const int *op_device,
                                    int n_devices, const pb_eval *ev)
{
    int *seen = malloc((size_t)n_devices * sizeof(int));
    if (!seen)
        return -1;
    for (int d = 0; d < n_devices; d++)
        seen[d] = -1;
    for (int v = 0; v < g->n_nodes; v++) {
        for (int p = g->port_start[v]; p < g->port_start[v + 1]; p++) {
            if (ev->port_send_us[p] < 0)
                continue;
            int k = p - g->port_start[v];
            size_t len = strlen(g->node_name[v]) + 16;
            char *name = malloc(len);
            if (!name) {
                free(seen);
                return -1;
            }
            snprintf(name, len, "%s:%d", g->node_name[v], k);
            json_t *e = simulate_trace_span(name, "transfer", ev->port_send_us[p],
                                            ev->port_arrive_us[p], op_device[v], 1);
            free(name);
            json_t *to = simulate_trace_destinations(g, op_device, v, k, seen, p, n_devices);
            double bytes = g->port_bytes[p];
            json_t *size = bytes == trunc(bytes) && fabs(bytes) < 9007199254740992.0
                               ? json_integer((json_int_t)bytes)
                               : json_real(bytes);
            if (e)
                json_object_set_new(e, "args", json_pack("{s:o, s:o}", "bytes", size, "to", to));
            else {
                json_decref(size);
                json_decref(to);
            }
            json_array_append_new(events, e);
        }
    }
    free(seen);
    return 0;
}

/* The trace: names, one event per op on its device's compute thread, one per transfer. */
static json_t *simulate_trace_json(const pb_graph *g, const int *op_device, int n_devices,
                                   const pb_eval *ev)
{
    json_t *events = json_array();
    if (!events)
        return NULL;
    simulate_trace_names(events, n_devices);
    for (int v = 0; v < g->n_nodes; v++) {
        json_t *e = simulate_trace_span(g->node_name[v], "op", ev->node_start_us[v],
                                        ev->node_end_us[v], op_device[v], 0);
        if (e && g->group_of)
            json_object_set_new(e, "args",
                                json_pack("{s:s}", "group", g->grouped->node_name[g->group_of[v]]));
        json_array_append_new(events, e);
    }
    if (simulate_trace_transfers(events, g, op_device, n_devices, ev) != 0) {
        json_decref(events);
        return NULL;
    }
    return json_pack("{s:o, s:s}", "traceEvents", events, "displayTimeUnit", "ns");
}

static int simulate_write_trace(const char *path, const pb_graph *g, const int *op_device,
                                int n_devices, const pb_eval *ev)
{
    json_t *root = simulate_trace_json(g, op_device, n_devices, ev);
    if (!root)
        return cli_error("simulate: out of memory building the trace");
    cli_output o;
    if (cli_output_open(&o, path)) {
        json_decref(root);
        return 1;
    }
    int ok = json_dumpf(root, o.f, JSON_COMPACT | JSON_REAL_PRECISION(17)) == 0;
    json_decref(root);
    if (!ok)
        cli_error("simulate: cannot write %s", path);
    return cli_output_close(&o, ok) || !ok;
}

/* ---------------------------------------------------------------- running */

/* One more evaluation with the simulator's task records collected into a trace at path. */
static int simulate_task_trace(const char *path, cli_sim *s, const pb_graph *g, const pb_cluster *c,
                               const pb_strategy *ops, pb_eval *ev)
{
    pb_error err;
    cli_trace t;
    if (cli_trace_init(&t, g, c, &err) != PB_OK)
        return cli_error("simulate: %s", err.msg);
    ev->task_record = cli_trace_record;
    ev->task_ctx = &t;
    int rc = cli_sim_evaluate(s, ops, ev, &err);
    ev->task_record = NULL;
    ev->task_ctx = NULL;
    if (rc == PB_OK)
        rc = cli_trace_write(&t, path, &err);
    cli_trace_free(&t);
    return rc == PB_OK ? 0 : cli_error("simulate: %s", err.msg);
}

/* Evaluates once, or a->repeat times with the mean wall time per evaluation in *eval_ns. */
static int simulate_evaluate(cli_sim *s, const simulate_args *a, const pb_strategy *ops,
                             pb_eval *ev, double *eval_ns, pb_error *err)
{
    long k = a->repeat > 0 ? a->repeat : 1;
    double t0 = pb_clock_monotonic();
    for (long i = 0; i < k; i++)
        if (cli_sim_evaluate(s, ops, ev, err) != PB_OK)
            return PB_ERR;
    *eval_ns = (pb_clock_monotonic() - t0) * 1e9 / (double)k;
    return PB_OK;
}

/* Everything after the graph and the placement (p) or strategy (st) are read: cluster,
 * simulator, output. */
static int simulate_run(const simulate_args *a, const pb_graph *g, const simulate_placement *p,
                        const cli_strategy *st)
{
    int n_devices = a->devices ? a->devices : 1 + (st ? st->max_device : p->max_device);
    const pb_graph *level = p->by_group ? g->grouped : g;
    for (int v = 0; v < p->n; v++)
        if (p->device[v] >= n_devices)
            return cli_error("simulate: %s: %s '%s' is placed on device %d, but --devices is %d",
                             a->placement, p->by_group ? "group" : "op", level->node_name[v],
                             p->device[v], n_devices);
    if (st && st->max_device >= n_devices)
        return cli_error("simulate: %s: names device %d, but --devices is %d", a->strategy,
                         st->max_device, n_devices);
    pb_error err;
    pb_cluster *c = NULL;
    if (cluster_preset(a->cluster, n_devices, &c, &err) != PB_OK)
        return cli_error("simulate: %s", err.msg);
    int *op_device = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof(int));
    loader *l = op_device ? loader_new(NULL, 0, &err) : NULL;
    cli_sim s = {0};
    cli_sim_result r = {0};
    pb_strategy ops;
    double eval_ns = 0;
    int rc = l ? PB_OK : (op_device ? PB_ERR : pb_errorf(&err, "out of memory"));
    if (rc == PB_OK && st)
        ops = st->s;
    else if (rc == PB_OK)
        rc = simulate_op_strategy(g, p, op_device, &ops, &err);
    if (rc == PB_OK && a->compiled)
        rc = cli_strategy_write_compiled(a->compiled, g, c, &ops, &err);
    if (rc == PB_OK)
        rc = cli_sim_result_init(&r, n_devices, g, a->trace != NULL, &err);
    if (rc == PB_OK)
        rc = cli_sim_open_with(&s, l, a->simulator, a->opts, a->n_opts, g, c, &err);
    if (rc == PB_OK)
        rc = simulate_evaluate(&s, a, &ops, &r.eval, &eval_ns, &err);
    int status = rc == PB_OK ? 0 : cli_error("simulate: %s", err.msg);
    int placeto = strcmp(a->simulator, "placeto") == 0;
    if (status == 0 && a->trace && placeto)
        status = simulate_write_trace(a->trace, g, op_device, n_devices, &r.eval);
    else if (status == 0 && a->trace)
        status = simulate_task_trace(a->trace, &s, g, c, &ops, &r.eval);
    if (status == 0 && !placeto && a->json)
        cli_strategy_print_json(&r.eval, c, a->repeat > 0 ? eval_ns : -1);
    else if (status == 0 && !placeto)
        cli_strategy_print_text(&r.eval, c);
    else if (status == 0 && a->json)
        simulate_print_json(&r.eval, n_devices, eval_ns, a->repeat > 0);
    else if (status == 0)
        simulate_print_text(a, g, p, c, &r.eval, eval_ns);
    cli_sim_close(&s);
    cli_sim_result_free(&r);
    if (l)
        loader_free(l);
    free(op_device);
    cluster_free(c);
    if (status == 0 && fflush(stdout) != 0)
        return cli_error("simulate: cannot write to stdout");
    return status;
}

int cmd_simulate(int argc, char **argv)
{
    simulate_args a = {0};
    int status = simulate_parse_args(argc, argv, &a);
    if (status)
        return status < 0 ? 0 : status;
    pb_error err;
    pb_graph *g = NULL;
    if (nodelink_read(a.graph, &g, &err) != PB_OK)
        return cli_error("simulate: %s", err.msg);
    simulate_placement p = {0};
    cli_strategy st;
    int rc = a.strategy ? cli_strategy_read(a.strategy, g, &st, &err)
                        : simulate_read_placement(a.placement, g, &p, &err);
    if (rc != PB_OK) {
        graph_free(g);
        return cli_error("simulate: %s", err.msg);
    }
    status = simulate_run(&a, g, &p, a.strategy ? &st : NULL);
    if (a.strategy)
        cli_strategy_free(&st);
    free(p.device);
    graph_free(g);
    return status;
}
