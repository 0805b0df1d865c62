/* cmd_order.c — `placebench order`: print a graph's nodes in the order of a traversal plugin. */
#include "cli.h"

#include "model/graph.h"
#include "plugin/loader.h"
#include "plugin/options.h"
#include "data/nodelink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char order_usage[] = "placebench order --graph G.json --traversal NAME [--seed S]";

static void order_print_help(void)
{
    printf("usage: %s\n\n"
           "Prints the nodes of a graph, one name per line, in the order the traversal plugin\n"
           "NAME visits them (lexico, topo, reversed-topo, dfs-preorder, dfs-postorder, bfs,\n"
           "lexico-topo, random; 'placebench list' shows the plugins found).\n\n"
           "  --graph G.json    networkx node-link JSON; node and link order are kept, they\n"
           "                    decide the order's tie-breaks\n"
           "  --traversal NAME  traversal plugin name\n"
           "  --seed S          seed handed to the plugin (used by 'random'); default 0\n\n"
           "When the graph has a grouping (nodes with a 'group'), the grouped graph is ordered,\n"
           "as placers see it, and the group names are printed.\n",
           order_usage);
}

typedef struct order_args {
    const char *graph;
    const char *traversal;
    unsigned long long seed;
} order_args;

/* Returns 0 on success, an exit status otherwise, -1 after printing the help (exit 0). */
static int order_parse_args(int argc, char **argv, order_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            order_print_help();
            return -1;
        }
        if (strcmp(arg, "--graph") != 0 && strcmp(arg, "--traversal") != 0 &&
            strcmp(arg, "--seed") != 0)
            return cli_error("order: unknown argument '%s' (see 'placebench order --help')", arg);
        if (i + 1 >= argc)
            return cli_error("order: %s needs a value", arg);
        const char *value = argv[++i];
        if (strcmp(arg, "--graph") == 0)
            a->graph = value;
        else if (strcmp(arg, "--traversal") == 0)
            a->traversal = value;
        else if (cli_parse_u64(value, &a->seed))
            return cli_error("order: --seed '%s' is not a non-negative integer", value);
    }
    if (!a->graph || !a->traversal)
        return cli_usage(order_usage);
    return 0;
}

/* Creates the plugin's instance, orders g into order[], destroys the instance. */
static int order_run_plugin(const pb_plugin_desc *desc, const pb_graph *g, unsigned long long seed,
                            int *order, pb_error *err)
{
    const pb_traversal_ops *ops = desc->ops;
    pb_create_args args = options_create_args(NULL, NULL, (uint64_t)seed);
    void *instance = NULL;
    if (ops->create(&args, &instance, err) != PB_OK)
        return PB_ERR;
    int rc = ops->order(instance, g, order, err);
    ops->destroy(instance);
    return rc;
}

/* The plugin must return a permutation; a faulty one is reported, not printed. */
static int order_check_permutation(const int *order, int n, const char *name, pb_error *err)
{
    unsigned char *seen = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!seen)
        return pb_errorf(err, "out of memory");
    int rc = PB_OK;
    for (int i = 0; i < n && rc == PB_OK; i++) {
        if (order[i] < 0 || order[i] >= n || seen[order[i]])
            rc = pb_errorf(err, "traversal '%s' returned no permutation (position %d holds %d)",
                           name, i, order[i]);
        else
            seen[order[i]] = 1;
    }
    free(seen);
    return rc;
}

static int order_with_loader(const order_args *a, const pb_graph *g, int *order, pb_error *err)
{
    loader *l = loader_new(NULL, 0, err);
    if (!l)
        return PB_ERR;
    const loader_entry *entry = NULL;
    int rc = loader_find(l, PB_KIND_TRAVERSAL, a->traversal, &entry, err);
    if (rc == PB_OK)
        rc = order_run_plugin(entry->desc, g, a->seed, order, err);
    if (rc == PB_OK)
        rc = order_check_permutation(order, g->n_nodes, a->traversal, err);
    loader_free(l);
    return rc;
}

int cmd_order(int argc, char **argv)
{
    order_args a = {NULL, NULL, 0};
    int status = order_parse_args(argc, argv, &a);
    if (status)
        return status < 0 ? 0 : status;
    pb_error err;
    pb_graph *graph = NULL;
    if (nodelink_read(a.graph, &graph, &err) != PB_OK)
        return cli_error("%s", err.msg);
    const pb_graph *g = graph->grouped; /* what placers place */
    int *order = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof(int));
    if (!order) {
        graph_free(graph);
        return cli_error("out of memory");
    }
    int rc = order_with_loader(&a, g, order, &err);
    if (rc == PB_OK)
        for (int i = 0; i < g->n_nodes; i++)
            printf("%s\n", g->node_name[order[i]]);
    free(order);
    graph_free(graph);
    if (rc != PB_OK)
        return cli_error("order: %s", err.msg);
    if (fflush(stdout) != 0)
        return cli_error("order: cannot write to stdout");
    return 0;
}
