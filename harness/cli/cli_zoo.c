/* cli_zoo.c — the model zoo on the command line: generation, the stats table against the papers'
 * figures (op counts, parameter bytes) with single-device times per catalog device type. */
#include "cli_zoo.h"

#include "cli.h"
#include "cli_output.h"
#include "config/cluster.h"
#include "core/clock.h"
#include "data/nodelink.h"
#include "model/devcost.h"
#include "model/graph.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device types the stats table times a graph on, in the order; their peaks come
 * from the catalog of configs/clusters.lua. */
static const char *const cli_zoo_types[] = {"K80",    "P100", "V100-16G", "V100-32G",
                                            "1080Ti", "T4",   "A100",     "CPU"};
#define CLI_ZOO_N_TYPES ((int)(sizeof cli_zoo_types / sizeof cli_zoo_types[0]))

/*
 * The catalog entries of cli_zoo_types: a one-off preset with one device of each type, added to
 * the built-in clusters.lua chunk, so the figures are the catalog's own (one copy of them).
 */
static int cli_zoo_catalog(cfg_cluster **out)
{
    size_t len;
    const char *text = cluster_lua_text(&len);
    static const char head[] = "local catalog = (function()\n";
    char tail[1024];
    int w = snprintf(tail, sizeof tail,
                     "\nend)()\ncatalog.presets['zoo-catalog'] = { about = '', build = "
                     "function(n) local d = { devices = {}, machines = { { bandwidth = 1, "
                     "latency = 0 } } }\nfor i, t in ipairs({");
    for (int i = 0; i < CLI_ZOO_N_TYPES; i++)
        w += snprintf(tail + w, sizeof tail - (size_t)w, "%s'%s'", i ? ", " : "", cli_zoo_types[i]);
    snprintf(tail + w, sizeof tail - (size_t)w,
             "}) do d.devices[i] = { type = t, machine = 1 } end\nd.placeto = { delta1 = 0, "
             "delta2 = 0, transfer_speed = 1, init_offset = 0 }\nreturn d end }\n"
             "return catalog\n");
    size_t n = strlen(head) + len + strlen(tail);
    char *src = malloc(n + 1);
    if (!src)
        return cli_error("out of memory");
    snprintf(src, n + 1, "%s%.*s%s", head, (int)len, text, tail);
    cfg_text t = {"configs/clusters.lua", src, n};
    pb_error err;
    int rc = config_cluster(&t, "zoo-catalog", CLI_ZOO_N_TYPES, 1, out, &err);
    free(src);
    return rc == PB_OK ? 0 : cli_error("device catalog: %s", err.msg);
}

int cli_zoo_gen(const gen_model *m, const gen_model_args *a, const char *dir)
{
    double t0 = pb_clock_monotonic();
    pb_graph *g;
    pb_error err;
    if (gen_model_generate(m, a, &g, &err) != PB_OK)
        return cli_error("dataset gen: %s", err.msg);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, g->name);
    cli_output o;
    int rc = cli_output_open(&o, path);
    if (!rc) {
        int ok = nodelink_fwrite(o.f, g, &err) == PB_OK;
        if (!ok)
            cli_error("%s: %s", path, err.msg);
        rc = cli_output_close(&o, ok) || !ok;
    }
    if (!rc)
        fprintf(stderr, "placebench: wrote %s (%d ops, %d edges) to %s in %.2f s\n", g->name,
                g->n_nodes, g->n_edges, path, pb_clock_monotonic() - t0);
    graph_free(g);
    return rc;
}

/* Totals of one graph. */
typedef struct cli_zoo_row {
    double params, flops, time_us[CLI_ZOO_N_TYPES];
} cli_zoo_row;

static void cli_zoo_measure(const gen_model *m, const pb_graph *g, const cfg_cluster *cat,
                            cli_zoo_row *r)
{
    memset(r, 0, sizeof *r);
    int applies = 0;
    for (int v = 0; v < g->n_nodes; v++) {
        r->flops += g->flops ? g->flops[v] : 0;
        if (strncmp(g->node_type[v], "Apply", 5) != 0 || g->pred_start[v + 1] == g->pred_start[v])
            continue;
        applies++; /* input 0 of an optimizer op is the trainable variable it updates */
        int var = g->pred[g->pred_start[v]];
        if (!m->paper_param_exclude || !strstr(g->node_name[var], m->paper_param_exclude))
            r->params += g->param_bytes[var];
    }
    for (int v = 0; !applies && v < g->n_nodes; v++) /* a layer chain: every weight */
        r->params += g->param_bytes[v];
    for (int k = 0; k < cat->n_types; k++) {
        pb_device_type t = {
            cat->types[k].name, cat->types[k].peak_flops, cat->types[k].mem_bandwidth, 0, 0, 0};
        for (int v = 0; v < g->n_nodes; v++)
            r->time_us[k] += devcost_op_us(&t, g->flops ? g->flops[v] : 0,
                                           g->bytes_accessed ? g->bytes_accessed[v] : 0);
    }
}

static double cli_zoo_pct(double ours, double paper)
{
    return paper > 0 ? 100.0 * (ours - paper) / paper : 0;
}

static void cli_zoo_header(const cfg_cluster *cat)
{
    printf("%-18s %6s %8s %8s %7s %8s %9s %9s %7s %10s", "model", "batch", "ops", "paper", "diff",
           "edges", "params", "paper", "diff", "GFLOP");
    for (int k = 0; k < cat->n_types; k++)
        printf(" %9s", cat->types[k].name);
    printf("\n%-18s %6s %8s %8s %7s %8s %9s %9s %7s %10s", "", "", "", "", "", "", "MiB", "MiB", "",
           "");
    for (int k = 0; k < cat->n_types; k++)
        printf(" %9s", "ms");
    printf("\n");
}

static void cli_zoo_print(const gen_model *m, int layers, const pb_graph *g, int batch,
                          const cli_zoo_row *r, const cfg_cluster *cat)
{
    const gen_model_paper *p = gen_model_figure(m, layers);
    printf("%-18s %6d %8d", g->name, batch, g->n_nodes);
    if (p)
        printf(" %8.0f %+6.1f%%", p->ops, cli_zoo_pct(g->n_nodes, p->ops));
    else
        printf(" %8s %7s", "-", "");
    printf(" %8d %9.1f", g->n_edges, r->params / (1024.0 * 1024.0));
    if (p && p->param_bytes > 0)
        printf(" %9.1f %+6.1f%%", p->param_bytes / (1024.0 * 1024.0),
               cli_zoo_pct(r->params, p->param_bytes));
    else
        printf(" %9s %7s", "-", "");
    printf(" %10.1f", r->flops / 1e9);
    for (int k = 0; k < cat->n_types; k++)
        printf(" %9.1f", r->time_us[k] / 1000.0);
    printf("\n");
}

static int cli_zoo_print_json(const gen_model *m, int layers, const pb_graph *g, int batch,
                              const cli_zoo_row *r, const cfg_cluster *cat)
{
    const gen_model_paper *p = gen_model_figure(m, layers);
    json_t *o = json_object(), *t = json_object();
    json_object_set_new(o, "model", json_string(m->name));
    json_object_set_new(o, "graph", json_string(g->name));
    json_object_set_new(o, "checksum", json_string(g->checksum));
    json_object_set_new(o, "batch", json_integer(batch));
    json_object_set_new(o, "layers", json_integer(layers));
    json_object_set_new(o, "ops", json_integer(g->n_nodes));
    json_object_set_new(o, "edges", json_integer(g->n_edges));
    json_object_set_new(o, "param_bytes", json_real(r->params));
    json_object_set_new(o, "flops", json_real(r->flops));
    for (int k = 0; k < cat->n_types; k++)
        json_object_set_new(t, cat->types[k].name, json_real(r->time_us[k]));
    json_object_set_new(o, "time_us", t);
    json_object_set_new(o, "paper_ops", p ? json_real(p->ops) : json_null());
    json_object_set_new(o, "paper_param_bytes",
                        p && p->param_bytes > 0 ? json_real(p->param_bytes) : json_null());
    json_object_set_new(o, "paper_source", p ? json_string(p->where) : json_null());
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (!text)
        return cli_error("out of memory");
    puts(text);
    free(text);
    return 0;
}

/* Generates m at `layers` and prints its row. */
static int cli_zoo_row_of(const gen_model *m, const gen_model_args *a, int layers, int as_json,
                          const cfg_cluster *cat)
{
    gen_model_args one = *a;
    one.layers = m->layers ? layers : 0;
    pb_graph *g;
    pb_error err;
    if (gen_model_generate(m, &one, &g, &err) != PB_OK)
        return cli_error("dataset stats: %s", err.msg);
    cli_zoo_row r;
    cli_zoo_measure(m, g, cat, &r);
    int batch = a->batch ? a->batch : m->batch, rc = 0;
    if (as_json)
        rc = cli_zoo_print_json(m, one.layers, g, batch, &r, cat);
    else
        cli_zoo_print(m, one.layers, g, batch, &r, cat);
    graph_free(g);
    return rc;
}

/* m at a->layers, or at its default and every depth the paper reports. */
static int cli_zoo_model(const gen_model *m, const gen_model_args *a, int as_json,
                         const cfg_cluster *cat)
{
    if (a->layers || !m->layers)
        return cli_zoo_row_of(m, a, a->layers ? a->layers : m->layers, as_json, cat);
    int rc = cli_zoo_row_of(m, a, m->layers, as_json, cat);
    for (int i = 0; !rc && i < m->n_figures; i++)
        if (m->figures[i].layers != m->layers)
            rc = cli_zoo_row_of(m, a, m->figures[i].layers, as_json, cat);
    return rc;
}

int cli_zoo_stats(const char *what, const gen_model_args *a, int as_json)
{
    const gen_model *one = strcmp(what, "zoo") == 0 ? NULL : gen_model_find(what);
    if (!one && strcmp(what, "zoo") != 0)
        return cli_error("dataset stats: unknown model '%s'", what);
    cfg_cluster *cat;
    if (cli_zoo_catalog(&cat))
        return 1;
    if (!as_json)
        cli_zoo_header(cat);
    int rc = 0;
    for (int i = 0; !rc && gen_model_at(i); i++)
        if (!one || gen_model_at(i) == one)
            rc = cli_zoo_model(gen_model_at(i), a, as_json, cat);
    if (!rc && !as_json)
        printf("(paper: the op count and parameter MiB the model's paper reports; time: sum of "
               "the ops' roofline times on one device, model/devcost.h)\n");
    config_cluster_free(cat);
    return rc;
}

void cli_zoo_list(void)
{
    printf("\n%-15s %-8s %6s %7s  %s\n", "model", "paper", "batch", "layers", "built from");
    for (int i = 0; gen_model_at(i); i++) {
        const gen_model *m = gen_model_at(i);
        char layers[32] = "-";
        if (m->layers)
            snprintf(layers, sizeof layers, "%d", m->layers);
        printf("%-15s %-8s %6d %7s  %s", m->name, m->paper, m->batch, layers, m->description);
        if (m->layers)
            printf(" (--layers %d..%d: %s)", m->min_layers, m->max_layers, m->layers_meaning);
        printf("\n");
        for (int k = 0; k < m->n_opts; k++)
            printf("%-15s   --opt %s=%d (%d..%d): %s\n", "", m->opts[k].key, m->opts[k].def,
                   m->opts[k].min, m->opts[k].max, m->opts[k].help);
    }
}
