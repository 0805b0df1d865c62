/* nodelink.c — networkx node-link JSON reader and writer (Jansson). */
#include "nodelink.h"

#include "core/fileio.h"
#include "model/graph.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text form of a node id (string, or integer printed in decimal). */
static int nodelink_id(json_t *v, char *buf, size_t n)
{
    if (json_is_string(v)) {
        snprintf(buf, n, "%s", json_string_value(v));
        return 0;
    }
    if (json_is_integer(v)) {
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
        return 0;
    }
    return -1;
}

/* Non-zero when v is one of the strings nodelink_quote_nonfinite puts in place of NaN/Infinity. */
static int nodelink_is_nonfinite(json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    return strcmp(s, "NaN") == 0 || strcmp(s, "Infinity") == 0 || strcmp(s, "-Infinity") == 0;
}

/* The upper bound of a node's numeric field. */
static double nodelink_max(const char *key)
{
    if (strcmp(key, "cost") == 0)
        return NODELINK_MAX_COST_US;
    if (strcmp(key, "flops") == 0)
        return NODELINK_MAX_FLOPS;
    if (strcmp(key, "colocation") == 0)
        return INT_MAX;
    return NODELINK_MAX_BYTES;
}

static int nodelink_number(json_t *node, const char *key, double *out, const char *label,
                           const char *id, pb_error *err)
{
    json_t *v = json_object_get(node, key);
    if (!v || json_is_null(v))
        return PB_OK;
    if (nodelink_is_nonfinite(v))
        return pb_errorf(err, "%s: node '%s': field '%s' is %s (must be finite and >= 0)", label,
                         id, key, json_string_value(v));
    if (!json_is_number(v))
        return pb_errorf(err, "%s: node '%s': field '%s' is not a number", label, id, key);
    *out = json_number_value(v);
    if (!isfinite(*out) || *out < 0)
        return pb_errorf(err, "%s: node '%s': field '%s' is %g (must be finite and >= 0)", label,
                         id, key, *out);
    if (*out > nodelink_max(key))
        return pb_errorf(err, "%s: node '%s': field '%s' is %g, above the bound of %g", label, id,
                         key, *out, nodelink_max(key));
    return PB_OK;
}

/* Words of the "role" and "split" attributes, indexed by pb_node_role and pb_split_class. */
static const char *const nodelink_roles[] = {"op", "parameter", "gradient", "apply"};
static const char *const nodelink_splits[] = {"", "batch", "sum", "none"};

/* The index of string attribute `key` of node in words[0..n) (words[0] "" is not accepted);
 * *out is left alone when the attribute is absent. */
static int nodelink_word(json_t *node, const char *key, const char *const *words, int n, int *out,
                         const char *label, const char *id, pb_error *err)
{
    json_t *v = json_object_get(node, key);
    if (!v || json_is_null(v))
        return PB_OK;
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    for (int i = 0; s && i < n; i++)
        if (words[i][0] && strcmp(s, words[i]) == 0) {
            *out = i;
            return PB_OK;
        }
    char known[128] = "";
    for (int i = 0; i < n; i++)
        if (words[i][0])
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s'%s'",
                     known[0] ? ", " : "", words[i]);
    return pb_errorf(err, "%s: node '%s': '%s' must be one of %s", label, id, key, known);
}

/* "replica_cost": {"2": 52, ...} (µs of one of n even replicas) into a's arrays (caller frees
 * *ns and *us). */
static int nodelink_replica_costs(json_t *node, graph_node_attrs *a, int **ns, double **us,
                                  const char *label, const char *id, pb_error *err)
{
    *ns = NULL;
    *us = NULL;
    json_t *obj = json_object_get(node, "replica_cost");
    if (!obj || json_is_null(obj))
        return PB_OK;
    if (!json_is_object(obj))
        return pb_errorf(err, "%s: node '%s': 'replica_cost' must map replica counts to us", label,
                         id);
    size_t n = json_object_size(obj);
    *ns = malloc((n ? n : 1) * sizeof(int));
    *us = malloc((n ? n : 1) * sizeof(double));
    if (!*ns || !*us)
        return pb_errorf(err, "out of memory");
    const char *key;
    json_t *value;
    int i = 0;
    json_object_foreach(obj, key, value)
    {
        char *end;
        errno = 0;
        long k = strtol(key, &end, 10);
        if (errno || !*key || *end || k < 1 || k > INT_MAX)
            return pb_errorf(err, "%s: node '%s': replica_cost key '%s' is not a count >= 1", label,
                             id, key);
        double t = json_is_number(value) ? json_number_value(value) : NAN;
        if (!isfinite(t) || t < 0)
            return pb_errorf(err, "%s: node '%s': replica_cost['%s'] must be a number >= 0", label,
                             id, key);
        (*ns)[i] = (int)k;
        (*us)[i++] = t;
    }
    a->n_replica_costs = i;
    a->replica_cost_n = *ns;
    a->replica_cost_us = *us;
    return PB_OK;
}

static int nodelink_node(graph_builder *b, json_t *node, size_t index, const char *label,
                         pb_error *err)
{
    char id[512], group[512];
    if (!json_is_object(node) || nodelink_id(json_object_get(node, "id"), id, sizeof id))
        return pb_errorf(err, "%s: node #%zu has no string or integer 'id'", label, index);
    graph_node_attrs a = {0};
    a.colocation = -1;
    json_t *type = json_object_get(node, "type");
    if (!type)
        type = json_object_get(node, "op");
    a.type = json_is_string(type) ? json_string_value(type) : NULL;
    double out_size = 0, coloc = -1;
    if (nodelink_number(node, "cost", &a.cost_us, label, id, err) ||
        nodelink_number(node, "mem", &a.param_bytes, label, id, err) ||
        nodelink_number(node, "flops", &a.flops, label, id, err) ||
        nodelink_number(node, "bytes", &a.bytes_accessed, label, id, err) ||
        nodelink_number(node, "out_size", &out_size, label, id, err) ||
        nodelink_number(node, "colocation", &coloc, label, id, err))
        return PB_ERR;
    if (coloc != -1 && (coloc != floor(coloc) || coloc > INT_MAX))
        return pb_errorf(err, "%s: node '%s': field 'colocation' is %g (must be an integer class)",
                         label, id, coloc);
    a.colocation = (int)coloc;
    if (nodelink_word(node, "role", nodelink_roles, 4, &a.role, label, id, err) ||
        nodelink_word(node, "split", nodelink_splits, 4, &a.split, label, id, err))
        return PB_ERR;
    int *cost_n;
    double *cost_us;
    if (nodelink_replica_costs(node, &a, &cost_n, &cost_us, label, id, err)) {
        free(cost_n);
        free(cost_us);
        return PB_ERR;
    }
    double *ports = NULL;
    json_t *sizes = json_object_get(node, "out_sizes");
    if (sizes && json_is_array(sizes)) {
        a.n_ports = (int)json_array_size(sizes);
        ports = malloc((size_t)(a.n_ports ? a.n_ports : 1) * sizeof(double));
        for (int p = 0; ports && p < a.n_ports; p++) {
            json_t *s = json_array_get(sizes, (size_t)p);
            double d = json_is_number(s) ? json_number_value(s) : NAN;
            if (!isfinite(d) || d < 0) {
                free(ports);
                free(cost_n);
                free(cost_us);
                return pb_errorf(
                    err, "%s: node '%s': out_sizes[%d] is %s (must be finite and >= 0)", label, id,
                    p, nodelink_is_nonfinite(s) ? json_string_value(s) : "not a size");
            }
            if (d > NODELINK_MAX_BYTES) {
                free(ports);
                return pb_errorf(err, "%s: node '%s': out_sizes[%d] is %g, above the bound of %g",
                                 label, id, p, d, NODELINK_MAX_BYTES);
            }
            ports[p] = d;
        }
    } else if (json_object_get(node, "out_size")) {
        a.n_ports = 1;
        ports = malloc(sizeof(double));
        if (ports)
            ports[0] = out_size;
    }
    a.port_bytes = ports;
    json_t *g = json_object_get(node, "group");
    if (g && !json_is_null(g)) {
        if (nodelink_id(g, group, sizeof group)) {
            free(ports);
            free(cost_n);
            free(cost_us);
            return pb_errorf(err, "%s: node '%s': 'group' is not a string or integer", label, id);
        }
        a.group = group;
    }
    pb_error inner;
    int rc = graph_add_node(b, id, &a, &inner);
    free(ports);
    free(cost_n);
    free(cost_us);
    if (rc < 0)
        return pb_errorf(err, "%s: %s", label, inner.msg);
    return PB_OK;
}

/* A node's `placed_with` (the name of the op whose device it takes), once every node exists. */
static int nodelink_placed_with(graph_builder *b, json_t *node, const char *label, pb_error *err)
{
    json_t *with = json_object_get(node, "placed_with");
    if (!with || json_is_null(with))
        return PB_OK;
    char id[512], anchor[512];
    nodelink_id(json_object_get(node, "id"), id, sizeof id);
    if (nodelink_id(with, anchor, sizeof anchor))
        return pb_errorf(err, "%s: node '%s': 'placed_with' is not a string or integer", label, id);
    int a = graph_find_node(b, anchor);
    if (a < 0)
        return pb_errorf(err, "%s: node '%s': placed_with '%s' is not a node", label, id, anchor);
    pb_error inner;
    if (graph_set_placed_with(b, graph_find_node(b, id), a, &inner))
        return pb_errorf(err, "%s: %s", label, inner.msg);
    return PB_OK;
}

static int nodelink_link(graph_builder *b, json_t *link, size_t index, const char *label,
                         pb_error *err)
{
    char src[512], dst[512];
    if (!json_is_object(link) || nodelink_id(json_object_get(link, "source"), src, sizeof src) ||
        nodelink_id(json_object_get(link, "target"), dst, sizeof dst))
        return pb_errorf(err, "%s: link #%zu needs 'source' and 'target'", label, index);
    int s = graph_find_node(b, src), d = graph_find_node(b, dst);
    if (s < 0 || d < 0)
        return pb_errorf(err, "%s: link #%zu '%s' -> '%s' is dangling: no node '%s'", label, index,
                         src, dst, s < 0 ? src : dst);
    json_t *port = json_object_get(link, "port");
    int p = 0;
    if (port && !json_is_null(port)) {
        if (!json_is_integer(port) || json_integer_value(port) < 0 ||
            json_integer_value(port) > GRAPH_MAX_PORT)
            return pb_errorf(err, "%s: link '%s' -> '%s': 'port' is not an integer in 0..%d", label,
                             src, dst, GRAPH_MAX_PORT);
        p = (int)json_integer_value(port);
    }
    pb_error inner;
    if (graph_add_edge(b, s, d, p, &inner) < 0)
        return pb_errorf(err, "%s: %s", label, inner.msg);
    return PB_OK;
}

static int nodelink_from_json(json_t *root, const char *label, pb_graph **out, pb_error *err)
{
    if (!json_is_object(root))
        return pb_errorf(err, "%s: not a node-link JSON object", label);
    json_t *nodes = json_object_get(root, "nodes");
    json_t *links = json_object_get(root, "links");
    if (!links)
        links = json_object_get(root, "edges");
    if (!json_is_array(nodes) || !json_is_array(links))
        return pb_errorf(err, "%s: needs a 'nodes' array and a 'links' (or 'edges') array%s", label,
                         json_is_array(nodes) && !links ? " (it has no 'links' key)" : "");
    json_t *directed = json_object_get(root, "directed");
    if (directed && json_is_false(directed))
        return pb_errorf(err, "%s: graph is undirected ('directed': false); a DAG is required",
                         label);
    const char *base = strrchr(label, '/');
    graph_builder *b = graph_builder_new(base ? base + 1 : label);
    if (!b)
        return pb_errorf(err, "out of memory");
    json_t *origin = json_object_get(json_object_get(root, "graph"), "origin");
    if (origin && !json_is_string(origin)) {
        graph_builder_free(b);
        return pb_errorf(err, "%s: graph attribute 'origin' is not a string", label);
    }
    if (origin && graph_builder_set_origin(b, json_string_value(origin))) {
        graph_builder_free(b);
        return pb_errorf(err, "out of memory");
    }
    size_t i;
    json_t *v;
    json_array_foreach(nodes, i, v)
    {
        if (nodelink_node(b, v, i, label, err)) {
            graph_builder_free(b);
            return PB_ERR;
        }
    }
    json_array_foreach(nodes, i, v)
    {
        if (nodelink_placed_with(b, v, label, err)) {
            graph_builder_free(b);
            return PB_ERR;
        }
    }
    if (links) {
        json_array_foreach(links, i, v)
        {
            if (nodelink_link(b, v, i, label, err)) {
                graph_builder_free(b);
                return PB_ERR;
            }
        }
    }
    pb_error inner;
    if (graph_build(b, out, &inner))
        return pb_errorf(err, "%s: %s", label, inner.msg);
    return PB_OK;
}

/* Length of the JSON number or NaN/Infinity token at p (outside strings), 0 if there is none. */
static size_t nodelink_token(const char *p)
{
    size_t n = 0;
    if (p[n] == '-')
        n++;
    if (strncmp(p + n, "NaN", 3) == 0)
        return n + 3;
    if (strncmp(p + n, "Infinity", 8) == 0)
        return n + 8;
    if (p[n] < '0' || p[n] > '9')
        return 0;
    while (p[n] && strchr("0123456789.eE+-", p[n]))
        n++;
    return n;
}

/*
 * Python's json (and so networkx) writes float('nan') and float('inf') as bare NaN, Infinity and
 * -Infinity, which Jansson rejects without saying where.  This copy of text turns them, and
 * numbers too large for a double, into the strings "NaN", "Infinity" and "-Infinity", so the
 * reader can name the node and field that holds one.  Caller frees; NULL when out of memory.
 */
static char *nodelink_quote_nonfinite(const char *text)
{
    size_t len = strlen(text);
    /* A token of n chars becomes at most 11 ("-Infinity" quoted), and overflowing numbers have
     * at least 5 chars, so the text at most doubles. */
    char *out = malloc(len * 2 + 16), *w = out;
    if (!out)
        return NULL;
    int in_string = 0;
    for (const char *p = text; *p;) {
        if (in_string) {
            if (*p == '\\' && p[1]) {
                *w++ = *p++;
            } else if (*p == '"') {
                in_string = 0;
            }
            *w++ = *p++;
            continue;
        }
        if (*p == '"') {
            in_string = 1;
            *w++ = *p++;
            continue;
        }
        size_t n = nodelink_token(p);
        if (n == 0) {
            *w++ = *p++;
            continue;
        }
        double d = strchr("NI", p[p[0] == '-']) ? NAN : strtod(p, NULL);
        const char *word = p[p[0] == '-'] == 'N' ? "NaN"
                           : isinf(d) || p[p[0] == '-'] == 'I'
                               ? (p[0] == '-' ? "-Infinity" : "Infinity")
                               : NULL;
        if (word) {
            w += sprintf(w, "\"%s\"", word);
        } else {
            memcpy(w, p, n);
            w += n;
        }
        p += n;
    }
    *w = '\0';
    return out;
}

/* Node ids and Jansson's excerpts in a message may hold line breaks; errors stay one line. */
static void nodelink_one_line(pb_error *err)
{
    for (char *p = err ? err->msg : NULL; p && *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

int nodelink_parse(const char *text, const char *label, pb_graph **out, pb_error *err)
{
    json_error_t je;
    *out = NULL;
    char *quoted = nodelink_quote_nonfinite(text);
    if (!quoted)
        return pb_errorf(err, "%s: out of memory", label);
    json_t *root = json_loads(quoted, 0, &je);
    free(quoted);
    int rc = root ? nodelink_from_json(root, label, out, err)
                  : pb_errorf(err, "%s:%d:%d: %s", label, je.line, je.column, je.text);
    json_decref(root);
    if (rc != PB_OK)
        nodelink_one_line(err);
    return rc;
}

int nodelink_read(const char *path, pb_graph **out, pb_error *err)
{
    *out = NULL;
    char *text;
    /* Graph files of real models reach tens of MB; a gigabyte is not a graph. */
    if (fileio_read(path, (size_t)1 << 30, &text, NULL, err))
        return PB_ERR;
    int rc = nodelink_parse(text, path, out, err);
    free(text);
    return rc;
}

static json_t *nodelink_node_json(const pb_graph *g, int v)
{
    json_t *n = json_object();
    json_object_set_new(n, "id", json_string(g->node_name[v]));
    if (g->node_type[v][0])
        json_object_set_new(n, "type", json_string(g->node_type[v]));
    json_object_set_new(n, "cost", json_real(g->cost_us[v]));
    json_object_set_new(n, "out_size", json_real(g->out_bytes[v]));
    json_t *ports = json_array();
    for (int p = g->port_start[v]; p < g->port_start[v + 1]; p++)
        json_array_append_new(ports, json_real(g->port_bytes[p]));
    json_object_set_new(n, "out_sizes", ports);
    json_object_set_new(n, "mem", json_real(g->param_bytes[v]));
    if (g->flops[v] > 0)
        json_object_set_new(n, "flops", json_real(g->flops[v]));
    if (g->bytes_accessed[v] > 0)
        json_object_set_new(n, "bytes", json_real(g->bytes_accessed[v]));
    if (g->group_of)
        json_object_set_new(n, "group", json_string(g->grouped->node_name[g->group_of[v]]));
    if (g->colocation && g->colocation[v] >= 0)
        json_object_set_new(n, "colocation", json_integer(g->colocation[v]));
    if (g->placed_with && g->placed_with[v] >= 0)
        json_object_set_new(n, "placed_with", json_string(g->node_name[g->placed_with[v]]));
    if (g->node_role && g->node_role[v] != PB_ROLE_OP)
        json_object_set_new(n, "role", json_string(nodelink_roles[g->node_role[v]]));
    if (g->node_split && g->node_split[v] != PB_SPLIT_UNSET)
        json_object_set_new(n, "split", json_string(nodelink_splits[g->node_split[v]]));
    if (g->replica_cost_start && g->replica_cost_start[v + 1] > g->replica_cost_start[v]) {
        json_t *costs = json_object();
        for (int i = g->replica_cost_start[v]; i < g->replica_cost_start[v + 1]; i++) {
            char key[16];
            snprintf(key, sizeof key, "%d", g->replica_cost_n[i]);
            json_object_set_new(costs, key, json_real(g->replica_cost_us[i]));
        }
        json_object_set_new(n, "replica_cost", costs);
    }
    return n;
}

/* The node-link JSON object of g; caller decrefs. */
static json_t *nodelink_to_json(const pb_graph *g)
{
    json_t *root = json_object();
    json_object_set_new(root, "directed", json_true());
    json_object_set_new(root, "multigraph", json_false());
    json_t *meta = json_object();
    json_object_set_new(meta, "name", json_string(g->name));
    if (graph_origin(g))
        json_object_set_new(meta, "origin", json_string(graph_origin(g)));
    json_object_set_new(root, "graph", meta);
    json_t *nodes = json_array(), *links = json_array();
    for (int v = 0; v < g->n_nodes; v++)
        json_array_append_new(nodes, nodelink_node_json(g, v));
    for (int e = 0; e < g->n_edges; e++) {
        json_t *l = json_object();
        json_object_set_new(l, "source", json_string(g->node_name[g->edge_src[e]]));
        json_object_set_new(l, "target", json_string(g->node_name[g->edge_dst[e]]));
        json_object_set_new(l, "port", json_integer(g->edge_port[e]));
        json_array_append_new(links, l);
    }
    json_object_set_new(root, "nodes", nodes);
    json_object_set_new(root, "links", links);
    return root;
}

int nodelink_write(const char *path, const pb_graph *g, pb_error *err)
{
    json_t *root = nodelink_to_json(g);
    int rc = json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    json_decref(root);
    if (rc != 0)
        return pb_errorf(err, "%s: cannot write", path);
    return PB_OK;
}

int nodelink_fwrite(FILE *f, const pb_graph *g, pb_error *err)
{
    json_t *root = nodelink_to_json(g);
    int rc = json_dumpf(root, f, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    json_decref(root);
    if (rc != 0 || fputc('\n', f) == EOF)
        return pb_errorf(err, "cannot write the node-link JSON");
    return PB_OK;
}
