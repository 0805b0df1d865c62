/* msr.c — reader of the MSR dnn-partitioning graph and human-expert split files (Jansson). */
#include "msr.h"

#include "model/graph.h"
#include "core/strmap.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A numeric field of an MSR object (JSON true/false count as 1/0); def when absent. */
static int msr_number(json_t *obj, const char *key, double def, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 0;
    }
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

/* Node ids in file order, as integers; the id -> index map goes into ids. */
static int msr_node_ids(json_t *nodes, const char *path, strmap *ids, pb_error *err)
{
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        json_t *id = json_object_get(n, "id");
        if (!json_is_integer(id))
            return pb_errorf(err, "%s: node #%zu has no integer 'id'", path, i);
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(id));
        if (strmap_get(ids, key) >= 0)
            return pb_errorf(err, "%s: duplicate node id %s", path, key);
        if (strmap_put(ids, key, (int)i))
            return pb_errorf(err, "out of memory");
    }
    return PB_OK;
}

/* Output ports of every node: one per distinct link size, in order of first appearance.
 * port_of[e] receives link e's port; sizes[v] the sizes of node v's ports. */
typedef struct msr_ports {
    double **sizes;
    int *n;
    int *port_of;
} msr_ports;

static void msr_ports_free(msr_ports *p, int n_nodes)
{
    for (int v = 0; p->sizes && v < n_nodes; v++)
        free(p->sizes[v]);
    free(p->sizes);
    free(p->n);
    free(p->port_of);
}

static int msr_port_for(msr_ports *p, int v, double size)
{
    for (int k = 0; k < p->n[v]; k++)
        if (p->sizes[v][k] == size)
            return k;
    double *grown = realloc(p->sizes[v], (size_t)(p->n[v] + 1) * sizeof *grown);
    if (!grown)
        return -1;
    p->sizes[v] = grown;
    grown[p->n[v]] = size;
    return p->n[v]++;
}

/* Resolves each link's endpoints and port; checks sizes. */
static int msr_links(json_t *edges, const char *path, const strmap *ids, int n_nodes, int *src,
                     int *dst, msr_ports *p, pb_error *err)
{
    size_t i;
    json_t *e;
    json_array_foreach(edges, i, e)
    {
        json_t *s = json_object_get(e, "sourceId"), *d = json_object_get(e, "destId");
        if (!json_is_integer(s) || !json_is_integer(d))
            return pb_errorf(err, "%s: edge #%zu needs integer 'sourceId' and 'destId'", path, i);
        char ks[32], kd[32];
        snprintf(ks, sizeof ks, "%lld", (long long)json_integer_value(s));
        snprintf(kd, sizeof kd, "%lld", (long long)json_integer_value(d));
        src[i] = strmap_get(ids, ks);
        dst[i] = strmap_get(ids, kd);
        if (src[i] < 0 || dst[i] < 0)
            return pb_errorf(err, "%s: edge #%zu %s -> %s is dangling: no node with id %s", path, i,
                             ks, kd, src[i] < 0 ? ks : kd);
        double size;
        if (msr_number(e, "size", 0.0, &size) || !isfinite(size) || size < 0)
            return pb_errorf(err, "%s: edge #%zu %s -> %s: 'size' is not a finite number >= 0",
                             path, i, ks, kd);
        if (src[i] >= n_nodes || (p->port_of[i] = msr_port_for(p, src[i], size)) < 0)
            return pb_errorf(err, "out of memory");
    }
    return PB_OK;
}

/* Adds node i of the file to b. */
static int msr_add_node(graph_builder *b, json_t *n, size_t i, const msr_ports *p, const char *path,
                        pb_error *err)
{
    char name[512];
    json_t *nm = json_object_get(n, "name");
    if (json_is_string(nm))
        snprintf(name, sizeof name, "%s", json_string_value(nm));
    else
        snprintf(name, sizeof name, "%lld",
                 (long long)json_integer_value(json_object_get(n, "id")));
    double latency_ms, size, backward, color;
    if (msr_number(n, "fpgaLatency", 0.0, &latency_ms) || msr_number(n, "size", 0.0, &size) ||
        msr_number(n, "isBackwardNode", 0.0, &backward) ||
        msr_number(n, "colorClass", -1.0, &color))
        return pb_errorf(err,
                         "%s: node '%s': fpgaLatency, size, isBackwardNode and colorClass "
                         "must be numbers",
                         path, name);
    if (color != floor(color) || color < -1 || color > 1e9)
        return pb_errorf(err, "%s: node '%s': colorClass %g is not a class number", path, name,
                         color);
    graph_node_attrs a = {0};
    a.type = backward != 0 ? "backward" : "forward";
    a.cost_us = latency_ms * 1000.0;
    a.param_bytes = size;
    a.n_ports = p->n[i];
    a.port_bytes = p->sizes[i];
    a.colocation = (int)color;
    pb_error inner;
    if (graph_add_node(b, name, &a, &inner) < 0)
        return pb_errorf(err, "%s: %s", path, inner.msg);
    return PB_OK;
}

static int msr_build(json_t *root, const char *path, pb_graph **out, pb_error *err)
{
    json_t *nodes = json_object_get(root, "nodes"), *edges = json_object_get(root, "edges");
    if (!json_is_array(nodes) || !json_is_array(edges))
        return pb_errorf(err, "%s: not an MSR graph (needs 'nodes' and 'edges' arrays)", path);
    int n = (int)json_array_size(nodes), m = (int)json_array_size(edges);
    strmap ids;
    strmap_init(&ids);
    msr_ports p = {calloc((size_t)n + 1, sizeof(double *)), calloc((size_t)n + 1, sizeof(int)),
                   calloc((size_t)m + 1, sizeof(int))};
    int *src = calloc((size_t)m + 1, sizeof(int)), *dst = calloc((size_t)m + 1, sizeof(int));
    const char *base = strrchr(path, '/');
    graph_builder *b = graph_builder_new(base ? base + 1 : path);
    int rc =
        p.sizes && p.n && p.port_of && src && dst && b ? PB_OK : pb_errorf(err, "out of memory");
    if (rc == PB_OK)
        rc = msr_node_ids(nodes, path, &ids, err);
    if (rc == PB_OK)
        rc = msr_links(edges, path, &ids, n, src, dst, &p, err);
    for (int i = 0; rc == PB_OK && i < n; i++)
        rc = msr_add_node(b, json_array_get(nodes, (size_t)i), (size_t)i, &p, path, err);
    pb_error inner;
    for (int e = 0; rc == PB_OK && e < m; e++)
        if (graph_add_edge(b, src[e], dst[e], p.port_of[e], &inner) < 0)
            rc = pb_errorf(err, "%s: edge #%d: %s", path, e, inner.msg);
    if (rc == PB_OK) {
        rc = graph_build(b, out, &inner);
        b = NULL;
        if (rc != PB_OK)
            pb_errorf(err, "%s: %s", path, inner.msg);
    }
    graph_builder_free(b);
    msr_ports_free(&p, n);
    free(src);
    free(dst);
    strmap_free(&ids);
    return rc;
}

int msr_read(const char *path, pb_graph **out, msr_limits *limits, pb_error *err)
{
    *out = NULL;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return pb_errorf(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    int rc = json_is_object(root) ? msr_build(root, path, out, err)
                                  : pb_errorf(err, "%s: not a JSON object", path);
    if (rc == PB_OK && limits) {
        double v;
        /* Counts beyond INT_MAX are not machines anyone has: clamp before converting. */
        limits->max_accelerators =
            msr_number(root, "maxFPGAs", 0, &v) == 0 ? (int)(v < INT_MAX ? v : INT_MAX) : 0;
        limits->max_cpus =
            msr_number(root, "maxCPUs", 0, &v) == 0 ? (int)(v < INT_MAX ? v : INT_MAX) : 0;
        limits->max_accel_memory = msr_number(root, "maxSizePerFPGA", 0, &v) == 0 ? v : 0;
    }
    json_decref(root);
    return rc;
}

/* Places the nodes listed by devices[k].nodes on device first + k. */
static int msr_expert_devices(json_t *devices, int first, const strmap *ids, const pb_graph *g,
                              int *device, const char *path, pb_error *err)
{
    size_t k, i;
    json_t *d, *id;
    json_array_foreach(devices, k, d)
    {
        json_t *list = json_object_get(d, "nodes");
        if (!json_is_array(list))
            return pb_errorf(err, "%s: device %d has no 'nodes' list", path, first + (int)k);
        json_array_foreach(list, i, id)
        {
            char key[32];
            snprintf(key, sizeof key, "%lld", (long long)json_integer_value(id));
            int v = json_is_integer(id) ? strmap_get(ids, key) : -1;
            if (v < 0 || v >= g->n_nodes)
                return pb_errorf(err, "%s: device %d lists node id %s, which the graph lacks", path,
                                 first + (int)k, json_is_integer(id) ? key : "(not an id)");
            if (device[v] >= 0)
                return pb_errorf(err, "%s: node id %s ('%s') is placed on devices %d and %d", path,
                                 key, g->node_name[v], device[v], first + (int)k);
            device[v] = first + (int)k;
        }
    }
    return PB_OK;
}

int msr_read_expert(const char *graph_path, const char *expert_path, const pb_graph *g, int *device,
                    int *n_devices, pb_error *err)
{
    json_error_t je;
    json_t *graph = json_load_file(graph_path, 0, &je);
    if (!graph)
        return pb_errorf(err, "%s:%d:%d: %s", graph_path, je.line, je.column, je.text);
    json_t *expert = json_load_file(expert_path, 0, &je);
    if (!expert) {
        json_decref(graph);
        return pb_errorf(err, "%s:%d:%d: %s", expert_path, je.line, je.column, je.text);
    }
    strmap ids;
    strmap_init(&ids);
    json_t *nodes = json_object_get(graph, "nodes");
    json_t *fpgas = json_object_get(expert, "fpgas"), *cpus = json_object_get(expert, "cpus");
    int rc = PB_OK;
    if (!json_is_array(nodes) || (int)json_array_size(nodes) != g->n_nodes)
        rc = pb_errorf(err, "%s: its nodes are not those of the graph given", graph_path);
    else if (!json_is_array(fpgas) || (cpus && !json_is_array(cpus)))
        rc = pb_errorf(err, "%s: needs an 'fpgas' array (and optionally 'cpus')", expert_path);
    if (rc == PB_OK)
        rc = msr_node_ids(nodes, graph_path, &ids, err);
    for (int v = 0; v < g->n_nodes; v++)
        device[v] = -1;
    int nf = json_is_array(fpgas) ? (int)json_array_size(fpgas) : 0;
    if (rc == PB_OK)
        rc = msr_expert_devices(fpgas, 0, &ids, g, device, expert_path, err);
    if (rc == PB_OK && cpus)
        rc = msr_expert_devices(cpus, nf, &ids, g, device, expert_path, err);
    for (int v = 0; rc == PB_OK && v < g->n_nodes; v++)
        if (device[v] < 0)
            rc = pb_errorf(err, "%s: node '%s' is on no device", expert_path, g->node_name[v]);
    if (rc == PB_OK)
        *n_devices = nf + (cpus ? (int)json_array_size(cpus) : 0);
    strmap_free(&ids);
    json_decref(graph);
    json_decref(expert);
    return rc;
}
