/* cli_strategy.c — reading strategy files and printing topology-aware simulator results. */
#include "cli_strategy.h"

#include "core/strmap.h"
#include "plugin/options.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The option words of a strategy file, indexed by pb_replication. */
static const char *const strategy_options[] = {"none", "allreduce", "ps", "duplicate", "split"};
enum { STRATEGY_N_OPTIONS = 5 };

void cli_strategy_free(cli_strategy *s)
{
    for (int i = 0; s->group_names && i < s->n_groups; i++)
        free(s->group_names[i]);
    free(s->group_names);
    free(s->device);
    free(s->replication);
    free(s->group_start);
    free(s->group_devices);
    free(s->share);
    memset(s, 0, sizeof *s);
}

/* "device_groups": {"NAME": [device, ...], ...}, numbered in file order. */
static int strategy_groups(json_t *groups, const char *path, cli_strategy *s, strmap *names,
                           pb_error *err)
{
    if (!json_is_object(groups) || json_object_size(groups) == 0)
        return pb_errorf(err, "%s: 'device_groups' must map group names to lists of devices", path);
    size_t n = json_object_size(groups), total = 0;
    const char *key;
    json_t *list;
    json_object_foreach(groups, key, list)
    {
        if (!json_is_array(list) || json_array_size(list) == 0)
            return pb_errorf(err, "%s: device group '%s' must be a non-empty list of devices", path,
                             key);
        total += json_array_size(list);
    }
    s->group_names = calloc(n, sizeof(char *));
    s->group_start = malloc((n + 1) * sizeof(int));
    s->group_devices = malloc(total * sizeof(int));
    if (!s->group_names || !s->group_start || !s->group_devices)
        return pb_errorf(err, "out of memory");
    int at = 0;
    s->group_start[0] = 0;
    json_object_foreach(groups, key, list)
    {
        size_t i;
        json_t *d;
        json_array_foreach(list, i, d)
        {
            json_int_t x = json_is_integer(d) ? json_integer_value(d) : -1;
            if (x < 0 || x > 4095)
                return pb_errorf(err,
                                 "%s: device group '%s': device #%zu is not an integer in "
                                 "0..4095",
                                 path, key, i);
            for (int j = s->group_start[s->n_groups]; j < at; j++)
                if (s->group_devices[j] == (int)x)
                    return pb_errorf(err, "%s: device group '%s' names device %d twice", path, key,
                                     (int)x);
            s->group_devices[at++] = (int)x;
            s->max_device = (int)x > s->max_device ? (int)x : s->max_device;
        }
        s->group_names[s->n_groups] = strdup(key);
        if (!s->group_names[s->n_groups] || strmap_put(names, key, s->n_groups))
            return pb_errorf(err, "out of memory");
        s->group_start[++s->n_groups] = at;
    }
    return PB_OK;
}

/* An unknown group name, with a did-you-mean or the list of groups. */
static int strategy_unknown_group(const char *path, const char *what, const char *name,
                                  const cli_strategy *s, pb_error *err)
{
    const char *near = options_did_you_mean(name, (const char *const *)s->group_names, s->n_groups);
    if (near)
        return pb_errorf(err, "%s: %s: unknown device group '%s' (did you mean '%s'?)", path, what,
                         name, near);
    char list[256] = "";
    for (int i = 0; i < s->n_groups; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 s->group_names[i]);
    return pb_errorf(err, "%s: %s: unknown device group '%s' (groups: %s)", path, what, name, list);
}

/* {"group": NAME, "option": WORD} into (*group, *option); `what` names the entry. */
static int strategy_choice(json_t *entry, const char *path, const char *what, const cli_strategy *s,
                           const strmap *names, int *group, int *option, pb_error *err)
{
    if (!json_is_object(entry))
        return pb_errorf(err, "%s: %s: expected {\"group\": NAME, \"option\": WORD}", path, what);
    const char *key;
    json_t *value;
    json_object_foreach(entry, key, value)
    {
        if (strcmp(key, "group") != 0 && strcmp(key, "option") != 0)
            return pb_errorf(err, "%s: %s: unknown key '%s' (keys: group, option)", path, what,
                             key);
    }
    json_t *g = json_object_get(entry, "group"), *o = json_object_get(entry, "option");
    if (!json_is_string(g))
        return pb_errorf(err, "%s: %s: 'group' must name a device group", path, what);
    *group = strmap_get(names, json_string_value(g));
    if (*group < 0)
        return strategy_unknown_group(path, what, json_string_value(g), s, err);
    int size = s->group_start[*group + 1] - s->group_start[*group];
    const char *gname = s->group_names[*group];
    if (!o) {
        if (size > 1)
            return pb_errorf(err,
                             "%s: %s: device group '%s' has %d devices: give an 'option' "
                             "(allreduce, ps, duplicate or split)",
                             path, what, gname, size);
        *option = PB_REPL_NONE;
        return PB_OK;
    }
    const char *word = json_is_string(o) ? json_string_value(o) : "";
    for (*option = 0; *option < STRATEGY_N_OPTIONS; (*option)++)
        if (strcmp(word, strategy_options[*option]) == 0)
            break;
    if (*option == STRATEGY_N_OPTIONS)
        return pb_errorf(err,
                         "%s: %s: unknown option '%s' (none, allreduce, ps, duplicate or split)",
                         path, what, word);
    if (*option == PB_REPL_NONE && size != 1)
        return pb_errorf(err,
                         "%s: %s: option 'none' puts an op on one device, but device group '%s' "
                         "has %d",
                         path, what, gname, size);
    return PB_OK;
}

/* "shares": {"GROUP": [share per device], ...}. */
static int strategy_shares(json_t *shares, const char *path, cli_strategy *s, const strmap *names,
                           pb_error *err)
{
    if (!json_is_object(shares))
        return pb_errorf(err, "%s: 'shares' must map device groups to lists of batch shares", path);
    int total = s->group_start[s->n_groups];
    s->share = malloc((size_t)total * sizeof(double));
    if (!s->share)
        return pb_errorf(err, "out of memory");
    for (int g = 0; g < s->n_groups; g++) {
        int size = s->group_start[g + 1] - s->group_start[g];
        for (int i = s->group_start[g]; i < s->group_start[g + 1]; i++)
            s->share[i] = 1.0 / size;
    }
    const char *key;
    json_t *list;
    json_object_foreach(shares, key, list)
    {
        int g = strmap_get(names, key);
        if (g < 0)
            return strategy_unknown_group(path, "shares", key, s, err);
        int size = s->group_start[g + 1] - s->group_start[g];
        if (!json_is_array(list) || (int)json_array_size(list) != size)
            return pb_errorf(err, "%s: shares of device group '%s': expected a list of %d numbers",
                             path, key, size);
        double sum = 0;
        for (int i = 0; i < size; i++) {
            json_t *x = json_array_get(list, (size_t)i);
            double v = json_is_number(x) ? json_number_value(x) : -1;
            if (!(v > 0) || !isfinite(v))
                return pb_errorf(err, "%s: shares of device group '%s': #%d is not a number > 0",
                                 path, key, i);
            s->share[s->group_start[g] + i] = v;
            sum += v;
        }
        for (int i = 0; i < size; i++) /* proportions: normalised to sum to 1 */
            s->share[s->group_start[g] + i] /= sum;
    }
    return PB_OK;
}

/* "ops": {"NAME": {...}}: an op name, or a group name of a grouped graph (all its ops; an op's
 * own entry wins). */
static int strategy_ops(json_t *ops, const char *path, const pb_graph *g, cli_strategy *s,
                        const strmap *names, pb_error *err)
{
    if (!json_is_object(ops))
        return pb_errorf(err, "%s: 'ops' must map op names to {\"group\", \"option\"}", path);
    strmap opn, grp;
    strmap_init(&opn);
    strmap_init(&grp);
    int rc = PB_OK;
    for (int v = 0; v < g->n_nodes && rc == PB_OK; v++)
        rc = strmap_put(&opn, g->node_name[v], v) ? pb_errorf(err, "out of memory") : PB_OK;
    for (int v = 0; g->grouped != g && v < g->grouped->n_nodes && rc == PB_OK; v++)
        rc =
            strmap_put(&grp, g->grouped->node_name[v], v) ? pb_errorf(err, "out of memory") : PB_OK;
    for (int pass = 0; pass < 2 && rc == PB_OK; pass++) { /* groups first, then ops */
        const char *key;
        json_t *entry;
        json_object_foreach(ops, key, entry)
        {
            int op = strmap_get(&opn, key), group = op < 0 ? strmap_get(&grp, key) : -1;
            if (op < 0 && group < 0) {
                rc = pb_errorf(err, "%s: ops: '%s' is neither an op nor a group of the graph", path,
                               key);
                break;
            }
            if ((pass == 0) != (op < 0))
                continue;
            char what[300];
            snprintf(what, sizeof what, "op '%s'", key);
            int dg, opt;
            rc = strategy_choice(entry, path, what, s, names, &dg, &opt, err);
            if (rc != PB_OK)
                break;
            for (int v = 0; v < g->n_nodes; v++)
                if (v == op || (op < 0 && g->group_of[v] == group)) {
                    s->device[v] = dg;
                    s->replication[v] = opt;
                }
        }
    }
    strmap_free(&opn);
    strmap_free(&grp);
    return rc;
}

/* Every key of the file's object is known. */
static int strategy_keys(json_t *root, const char *path, pb_error *err)
{
    static const char *const known[] = {"device_groups", "default", "ops", "shares"};
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        int ok = 0;
        for (int i = 0; i < 4; i++)
            ok |= strcmp(key, known[i]) == 0;
        if (!ok) {
            const char *near = options_did_you_mean(key, known, 4);
            return pb_errorf(err, "%s: unknown key '%s'%s%s%s", path, key,
                             near ? " (did you mean '"
                                  : " (keys: device_groups, default, ops, "
                                    "shares",
                             near ? near : "", near ? "'?)" : ")");
        }
    }
    return PB_OK;
}

static int strategy_parse(json_t *root, const char *path, const pb_graph *g, cli_strategy *s,
                          strmap *names, pb_error *err)
{
    if (!json_is_object(root))
        return pb_errorf(err, "%s: expected a JSON object with 'device_groups'", path);
    if (strategy_keys(root, path, err) ||
        strategy_groups(json_object_get(root, "device_groups"), path, s, names, err))
        return PB_ERR;
    size_t n = (size_t)(g->n_nodes > 0 ? g->n_nodes : 1);
    s->device = malloc(n * sizeof(int));
    s->replication = malloc(n * sizeof(int));
    if (!s->device || !s->replication)
        return pb_errorf(err, "out of memory");
    int dg = -1, opt = PB_REPL_NONE;
    json_t *def = json_object_get(root, "default");
    if (def && strategy_choice(def, path, "default", s, names, &dg, &opt, err))
        return PB_ERR;
    for (int v = 0; v < g->n_nodes; v++) {
        s->device[v] = dg;
        s->replication[v] = opt;
    }
    json_t *ops = json_object_get(root, "ops"), *shares = json_object_get(root, "shares");
    if ((ops && strategy_ops(ops, path, g, s, names, err)) ||
        (shares && strategy_shares(shares, path, s, names, err)))
        return PB_ERR;
    for (int v = 0; v < g->n_nodes; v++)
        if (s->device[v] < 0)
            return pb_errorf(err,
                             "%s: op '%s' has no device group (give it one in 'ops', or a "
                             "'default')",
                             path, g->node_name[v]);
    pb_strategy_placement(&s->s, g->n_nodes, s->device);
    s->s.kind = PB_STRATEGY_REPLICATED;
    s->s.replication = s->replication;
    s->s.n_device_groups = s->n_groups;
    s->s.group_start = s->group_start;
    s->s.group_devices = s->group_devices;
    s->s.device_share = s->share;
    return PB_OK;
}

int cli_strategy_read(const char *path, const pb_graph *g, cli_strategy *out, pb_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return pb_errorf(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    strmap names;
    strmap_init(&names);
    int rc = strategy_parse(root, path, g, out, &names, err);
    strmap_free(&names);
    json_decref(root);
    if (rc != PB_OK)
        cli_strategy_free(out);
    return rc;
}

/* ---------------------------------------------------------------- the compiled graph */

/* Names of the compiled nodes: "<op>/replica_<r>", "<op>/aux_<kind>_<k>" (k counts the op's
 * auxiliary nodes of that kind); names[v] is caller-freed. */
static int strategy_compiled_names(const pb_graph *g, const pb_compiled *cg, char **names)
{
    static const char *const kinds[] = {"op", "split", "concat", "addn", "allreduce", "shape"};
    int *count = calloc((size_t)g->n_nodes * 6 + 1, sizeof(int));
    if (!count)
        return -1;
    for (int v = 0; v < cg->n_nodes; v++) {
        const char *op = g->node_name[cg->origin[v]];
        size_t len = strlen(op) + 40;
        names[v] = malloc(len);
        if (!names[v]) {
            free(count);
            return -1;
        }
        if (cg->kind[v] == PB_CNODE_OP)
            snprintf(names[v], len, "%s/replica_%d", op, cg->replica[v]);
        else
            snprintf(names[v], len, "%s/aux_%s_%d", op, kinds[cg->kind[v]],
                     count[cg->origin[v] * 6 + cg->kind[v]]++);
    }
    free(count);
    return 0;
}

static json_t *strategy_compiled_json(const pb_graph *g, const pb_compiled *cg, char **names)
{
    static const char *const kinds[] = {"op", "split", "concat", "addn", "allreduce", "shape"};
    json_t *nodes = json_array(), *links = json_array();
    for (int v = 0; v < cg->n_nodes; v++) {
        json_t *n =
            json_pack("{s:s, s:s, s:s, s:i, s:f}", "id", names[v], "kind", kinds[cg->kind[v]], "op",
                      g->node_name[cg->origin[v]], "device", cg->device[v], "cost", cg->cost_us[v]);
        if (n && cg->kind[v] == PB_CNODE_OP)
            json_object_set_new(n, "replica", json_integer(cg->replica[v]));
        if (n && cg->collective[v] >= 0)
            json_object_set_new(n, "collective", json_integer(cg->collective[v]));
        json_array_append_new(nodes, n);
        for (int i = cg->in_start[v]; i < cg->in_start[v + 1]; i++)
            json_array_append_new(links, json_pack("{s:s, s:s, s:i, s:f}", "source",
                                                   names[cg->in_src[i]], "target", names[v], "port",
                                                   cg->in_port[i], "bytes", cg->in_bytes[i]));
    }
    return json_pack("{s:b, s:b, s:{s:s}, s:o, s:o}", "directed", 1, "multigraph", 0, "graph",
                     "name", g->name, "nodes", nodes, "links", links);
}

int cli_strategy_write_compiled(const char *path, const pb_graph *g, const pb_cluster *c,
                                const pb_strategy *s, pb_error *err)
{
    pb_compiler *compiler = pb_compiler_new();
    if (!compiler)
        return pb_errorf(err, "out of memory");
    const pb_compiled *cg;
    if (pb_compile(compiler, g, c, s, &cg, err)) {
        pb_compiler_free(compiler);
        return PB_ERR;
    }
    char **names = calloc((size_t)cg->n_nodes + 1, sizeof(char *));
    json_t *root = NULL;
    int rc = names && strategy_compiled_names(g, cg, names) == 0 ? PB_OK
                                                                 : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        root = strategy_compiled_json(g, cg, names);
    if (rc == PB_OK && !root)
        rc = pb_errorf(err, "out of memory");
    if (rc == PB_OK && json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17)))
        rc = pb_errorf(err, "%s: cannot write", path);
    json_decref(root);
    for (int v = 0; names && v < cg->n_nodes; v++)
        free(names[v]);
    free(names);
    pb_compiler_free(compiler);
    return rc;
}

/* ---------------------------------------------------------------- traces */

int cli_trace_init(cli_trace *t, const pb_graph *g, const pb_cluster *c, pb_error *err)
{
    int n = c->n_devices;
    *t = (cli_trace){.g = g, .c = c};
    json_t *events = json_array();
    t->named = calloc((size_t)n * ((size_t)n + 2), 1);
    if (!events || !t->named) {
        json_decref(events);
        free(t->named);
        return pb_errorf(err, "out of memory");
    }
    for (int d = 0; d < n; d++) {
        char name[80];
        snprintf(name, sizeof name, "%d: %s", d, pb_cluster_type(c, c->device_type[d])->name);
        json_array_append_new(events,
                              json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "process_name",
                                        "ph", "M", "pid", d, "tid", 0, "args", "name", name));
        json_array_append_new(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:i}}", "name",
                                                "process_sort_index", "ph", "M", "pid", d, "tid", 0,
                                                "args", "sort_index", d));
    }
    t->events = events;
    return PB_OK;
}

/* Names thread tid of device d on first use: 0 compute, 1 collectives, 2 + j transfers to j. */
static void trace_thread(cli_trace *t, int d, int tid)
{
    unsigned char *seen = &t->named[(size_t)d * ((size_t)t->c->n_devices + 2) + (size_t)tid];
    if (*seen)
        return;
    *seen = 1;
    char name[32];
    if (tid < 2)
        snprintf(name, sizeof name, "%s", tid == 0 ? "compute" : "collectives");
    else
        snprintf(name, sizeof name, "to %d", tid - 2);
    json_array_append_new(t->events,
                          json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph",
                                    "M", "pid", d, "tid", tid, "args", "name", name));
}

void cli_trace_record(void *ctx, const pb_task_record *r)
{
    cli_trace *t = ctx;
    const char *op = t->g->node_name[r->op];
    char name[600];
    int tid = r->kind == PB_TASK_TRANSFER ? 2 + r->dst_device : r->kind;
    if (r->kind == PB_TASK_COMPUTE && r->replica >= 0)
        snprintf(name, sizeof name, "%s/replica_%d", op, r->replica);
    else
        snprintf(name, sizeof name, "%s/%s", op, r->what);
    trace_thread(t, r->src_device, tid);
    json_t *e = json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}", "name", name, "cat", r->what, "ph",
                          "X", "ts", r->start_us, "dur", r->end_us - r->start_us, "pid",
                          r->src_device, "tid", tid);
    if (e && r->kind != PB_TASK_COMPUTE)
        json_object_set_new(e, "args", json_pack("{s:f}", "bytes", r->bytes));
    t->failed |= !e || json_array_append_new(t->events, e) != 0;
}

int cli_trace_write(cli_trace *t, const char *path, pb_error *err)
{
    if (t->failed)
        return pb_errorf(err, "out of memory while recording the trace");
    json_t *root =
        json_pack("{s:O, s:s}", "traceEvents", (json_t *)t->events, "displayTimeUnit", "ns");
    int rc = root && json_dump_file(root, path, JSON_COMPACT | JSON_REAL_PRECISION(17)) == 0
                 ? PB_OK
                 : pb_errorf(err, "%s: cannot write the trace", path);
    json_decref(root);
    return rc;
}

void cli_trace_free(cli_trace *t)
{
    json_decref(t->events);
    free(t->named);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- output */

static void strategy_print_number(double d)
{
    char buf[40];
    options_format_double(d, buf, sizeof buf);
    fputs(buf, stdout);
}

/* Time device d's outgoing links were busy. */
static double strategy_link_out(const pb_eval *ev, int n, int d)
{
    double sum = 0;
    for (int j = 0; j < n; j++)
        sum += ev->link_busy_us[d * n + j];
    return sum;
}

void cli_strategy_print_text(const pb_eval *ev, const pb_cluster *c)
{
    int n = c->n_devices;
    printf("cluster     %s: %d devices on %d machine%s\n", c->name, n, c->n_machines,
           c->n_machines == 1 ? "" : "s");
    printf("step time   %.17g us\n", ev->step_time_us);
    printf("events      %lld\n", ev->n_events);
    printf("feasible    %s\n", ev->feasible ? "yes" : "no (a device exceeds its memory)");
    if (ev->throughput > 0)
        printf("throughput  %.6g samples/s\n", ev->throughput);
    printf("cost        %.6g USD per step\n\n", ev->monetary_cost);
    printf("%-7s %-10s %20s %16s %16s\n", "device", "type", "peak memory (B)", "compute (us)",
           "links out (us)");
    for (int d = 0; d < n; d++)
        printf("%-7d %-10s %20.0f %16.3f %16.3f\n", d, pb_cluster_type(c, c->device_type[d])->name,
               ev->peak_mem_bytes[d], ev->busy_us[d], strategy_link_out(ev, n, d));
}

static void strategy_print_array(const char *key, const double *a, int n)
{
    printf(", \"%s\": [", key);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", stdout);
        strategy_print_number(a[i]);
    }
    fputs("]", stdout);
}

void cli_strategy_print_json(const pb_eval *ev, const pb_cluster *c, double eval_ns)
{
    int n = c->n_devices;
    fputs("{\"step_time_us\": ", stdout);
    strategy_print_number(ev->step_time_us);
    printf(", \"feasible\": %s", ev->feasible ? "true" : "false");
    strategy_print_array("peak_memory_bytes", ev->peak_mem_bytes, n);
    strategy_print_array("busy_us", ev->busy_us, n);
    strategy_print_array("link_busy_us", ev->link_busy_us, n * n);
    fputs(", \"throughput\": ", stdout);
    strategy_print_number(ev->throughput);
    fputs(", \"monetary_cost\": ", stdout);
    strategy_print_number(ev->monetary_cost);
    printf(", \"n_events\": %lld", ev->n_events);
    if (eval_ns >= 0) {
        fputs(", \"eval_ns\": ", stdout);
        strategy_print_number(eval_ns);
    }
    fputs("}\n", stdout);
}
