/* test_msr.c — the MSR dnn-partitioning graphs import, and their human-expert splits place every
 * node. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/graph.h"
#include "data/msr.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const test_graphs[] = {
    "LayerGraphs/bert24_inference.json",       "LayerGraphs/bert24_training.json",
    "LayerGraphs/gnmt_inference.json",         "LayerGraphs/gnmt_training.json",
    "LayerGraphs/inceptionv3_inference.json",  "LayerGraphs/inceptionv3_training.json",
    "LayerGraphs/resnet50_inference.json",     "LayerGraphs/resnet50_training.json",
    "OperatorGraphs/bert_l-12_inference.json", "OperatorGraphs/bert_l-3_inference.json",
    "OperatorGraphs/bert_l-3_training.json",   "OperatorGraphs/bert_l-6_inference.json",
    "OperatorGraphs/bert_l-6_training.json",   "OperatorGraphs/resnet50_inference.json",
    "OperatorGraphs/resnet50_training.json",
};

/* The expert splits and the graph each one splits. */
static const char *const test_experts[][2] = {
    {"bert24_inference_expert.json", "LayerGraphs/bert24_inference.json"},
    {"bert24_training_expert.json", "LayerGraphs/bert24_training.json"},
    {"gnmt_inference_expert.json", "LayerGraphs/gnmt_inference.json"},
    {"gnmt_training_expert.json", "LayerGraphs/gnmt_training.json"},
    {"inceptionv3_inference_expert.json", "LayerGraphs/inceptionv3_inference.json"},
    {"resnet50_inference_expert.json", "LayerGraphs/resnet50_inference.json"},
};

static void test_path(char *buf, size_t n, const char *rel)
{
    const char *src = getenv("PB_SRC");
    snprintf(buf, n, "%s/datasets/msr-dnn-partitioning/%s", src ? src : ".", rel);
}

/* Every graph imports with the file's node and edge counts, costs in µs and sizes as mem. */
static void test_all_graphs_import(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof test_graphs / sizeof test_graphs[0]; k++) {
        char path[4096];
        test_path(path, sizeof path, test_graphs[k]);
        json_error_t je;
        json_t *root = json_load_file(path, 0, &je);
        if (!root)
            fail_msg("%s: %s", path, je.text);
        json_t *nodes = json_object_get(root, "nodes"), *edges = json_object_get(root, "edges");
        pb_graph *g = NULL;
        pb_error err;
        msr_limits lim;
        if (msr_read(path, &g, &lim, &err) != PB_OK)
            fail_msg("%s", err.msg);
        assert_int_equal(g->n_nodes, (int)json_array_size(nodes));
        assert_int_equal(g->n_edges, (int)json_array_size(edges)); /* no parallel links */
        assert_int_equal(lim.max_accelerators,
                         (int)json_number_value(json_object_get(root, "maxFPGAs")));
        assert_non_null(g->colocation);
        for (int v = 0; v < g->n_nodes; v++) {
            json_t *n = json_array_get(nodes, (size_t)v);
            assert_string_equal(g->node_name[v], json_string_value(json_object_get(n, "name")));
            double ms = json_number_value(json_object_get(n, "fpgaLatency"));
            assert_true(fabs(g->cost_us[v] - 1000.0 * ms) <= 1e-9 * (1 + 1000.0 * ms));
            assert_true(g->param_bytes[v] == json_number_value(json_object_get(n, "size")));
            json_t *color = json_object_get(n, "colorClass");
            assert_int_equal(g->colocation[v], color ? (int)json_integer_value(color) : -1);
        }
        /* each link carries its own size */
        for (int e = 0; e < g->n_edges; e++) {
            json_t *l = json_array_get(edges, (size_t)e);
            assert_true(g->edge_bytes[e] == json_number_value(json_object_get(l, "size")));
        }
        graph_free(g);
        json_decref(root);
    }
}

/* Accelerators come first, CPUs after: every node is on a device below n_devices, and the
 * devices' node counts are the lengths of the split's lists. */
static void test_expert_splits(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof test_experts / sizeof test_experts[0]; k++) {
        char gpath[4096], epath[4096], rel[256];
        test_path(gpath, sizeof gpath, test_experts[k][1]);
        snprintf(rel, sizeof rel, "human-experts/%s", test_experts[k][0]);
        test_path(epath, sizeof epath, rel);
        pb_graph *g = NULL;
        pb_error err;
        if (msr_read(gpath, &g, NULL, &err) != PB_OK)
            fail_msg("%s", err.msg);
        int *device = malloc((size_t)g->n_nodes * sizeof *device), n_dev = 0;
        if (msr_read_expert(gpath, epath, g, device, &n_dev, &err) != PB_OK)
            fail_msg("%s", err.msg);
        json_t *ex = json_load_file(epath, 0, NULL);
        json_t *fpgas = json_object_get(ex, "fpgas"), *cpus = json_object_get(ex, "cpus");
        int nf = (int)json_array_size(fpgas), nc = (int)json_array_size(cpus);
        assert_int_equal(n_dev, nf + nc);
        int *count = calloc((size_t)n_dev, sizeof *count);
        for (int v = 0; v < g->n_nodes; v++) {
            assert_true(device[v] >= 0 && device[v] < n_dev);
            count[device[v]]++;
        }
        for (int d = 0; d < n_dev; d++) {
            json_t *dev = json_array_get(d < nf ? fpgas : cpus, (size_t)(d < nf ? d : d - nf));
            assert_int_equal(count[d], (int)json_array_size(json_object_get(dev, "nodes")));
        }
        free(count);
        free(device);
        json_decref(ex);
        graph_free(g);
    }
}

/* Writes text to a temporary file; returns its path (static buffer per call site). */
static void test_write_tmp(char *path, const char *text)
{
    strcpy(path, "/tmp/pb_test_msr_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static void test_bad_files(void **state)
{
    (void)state;
    char graph[64], expert[64], dangling[64];
    test_write_tmp(graph, "{\"maxFPGAs\": 2, \"maxCPUs\": 1, \"nodes\": ["
                          "{\"id\": 1, \"name\": \"in\", \"fpgaLatency\": 0.5, \"size\": 8},"
                          "{\"id\": 2, \"name\": \"mid\", \"fpgaLatency\": 1.5, \"size\": 0,"
                          " \"colorClass\": 4},"
                          "{\"id\": 3, \"name\": \"out\", \"fpgaLatency\": 0, \"size\": 0,"
                          " \"colorClass\": 4}],"
                          "\"edges\": [{\"sourceId\": 1, \"destId\": 2, \"cost\": 0, \"size\": 64},"
                          "{\"sourceId\": 1, \"destId\": 3, \"cost\": 0, \"size\": 32},"
                          "{\"sourceId\": 2, \"destId\": 3, \"cost\": 0}]}");
    pb_graph *g = NULL;
    pb_error err;
    if (msr_read(graph, &g, NULL, &err) != PB_OK)
        fail_msg("%s", err.msg);
    /* node 'in' sends 64 and 32 bytes: two ports; 'mid' sends nothing sized: 0 bytes */
    assert_int_equal(g->port_start[1] - g->port_start[0], 2);
    assert_true(g->edge_bytes[0] == 64 && g->edge_bytes[1] == 32 && g->edge_bytes[2] == 0);
    assert_true(g->cost_us[1] == 1500.0);
    assert_int_equal(g->colocation[0], -1);
    assert_int_equal(g->colocation[1], g->colocation[2]);
    int device[3], n_dev;
    test_write_tmp(expert, "{\"fpgas\": [{\"nodes\": [1]}, {\"nodes\": [2]}], \"cpus\": "
                           "[{\"nodes\": []}]}");
    assert_int_equal(msr_read_expert(graph, expert, g, device, &n_dev, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'out'")); /* the node left out is named */
    remove(expert);
    test_write_tmp(expert, "{\"fpgas\": [{\"nodes\": [1, 2]}], \"cpus\": [{\"nodes\": [3, 2]}]}");
    assert_int_equal(msr_read_expert(graph, expert, g, device, &n_dev, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'mid'")); /* placed twice */
    remove(expert);
    test_write_tmp(expert, "{\"fpgas\": [{\"nodes\": [1, 2]}], \"cpus\": [{\"nodes\": [3]}]}");
    assert_int_equal(msr_read_expert(graph, expert, g, device, &n_dev, &err), PB_OK);
    assert_int_equal(n_dev, 2);
    assert_int_equal(device[0], 0);
    assert_int_equal(device[2], 1); /* the CPU comes after the one accelerator */
    remove(expert);
    graph_free(g);
    test_write_tmp(dangling, "{\"nodes\": [{\"id\": 1, \"name\": \"a\"}], \"edges\": "
                             "[{\"sourceId\": 1, \"destId\": 9, \"cost\": 0}]}");
    g = (pb_graph *)&g;
    assert_int_equal(msr_read(dangling, &g, NULL, &err), PB_ERR);
    assert_null(g);
    assert_non_null(strstr(err.msg, "9"));
    remove(dangling);
    remove(graph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_graphs_import),
        cmocka_unit_test(test_expert_splits),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
