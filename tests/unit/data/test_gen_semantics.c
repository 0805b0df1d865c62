/* test_gen_semantics.c — the generator options of issue 13 §2 on a tiny training graph whose
 * costs, port sizes and colocations are derived by hand: kernel-less ops cost 0, only port 0 has
 * a size, update ops placed with their variable (pb_graph.placed_with) and strategy expansion
 * honouring it; placed_with through node-link JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "data/gen/gen.h"
#include "data/nodelink.h"
#include "model/graph.h"
#include "model/strategy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The graph (batch 4): group "input": IteratorGetNext with ports x [4, 2] (32 bytes) and labels
 * [4, 3] (48 bytes); group "dense": w [2, 3], its read, MatMul x w [4, 3], a Reshape to [4, 3];
 * group "loss": softmax cross-entropy (ports loss [4] = 16 bytes, backprop [4, 3] = 48 bytes)
 * and its Mean; then momentum training: the gradient of w (one MatMul in "gradients/dense", since
 * x needs no gradient), the slot dense/w/Momentum and ApplyMomentum in "gradients/dense".
 */
static pb_graph *test_tiny(int kernelless_free, int first_port_only, int colocate, int adam)
{
    gen_ctx g;
    gen_init(&g, 1, 4);
    g.opt.kernelless_free = kernelless_free;
    g.opt.first_port_only = first_port_only;
    g.opt.colocate = colocate;
    gen_push(&g, GEN_GROUP, "input");
    gen_shape io[2] = {gen_shape2(4, 2), gen_shape2(4, 3)};
    gen_tensor x = gen_source(&g, "IteratorGetNext", "IteratorGetNext", io, 2);
    gen_pop(&g);
    gen_tensor y;
    if (adam) { /* two layers, "z" first: Adam's beta powers go with the first variable by name */
        gen_push(&g, GEN_GROUP, "z");
        y = gen_dense(&g, x, 2, 0);
        gen_pop(&g);
        gen_push(&g, GEN_GROUP, "a");
        y = gen_dense(&g, y, 3, 0);
        gen_pop(&g);
    } else {
        gen_push(&g, GEN_GROUP, "dense");
        y = gen_reshape(&g, gen_dense(&g, x, 3, 0), gen_shape2(4, 3));
        gen_pop(&g);
    }
    gen_push(&g, GEN_GROUP, "loss");
    gen_tensor loss = gen_xent_loss(&g, y, gen_port(x, 1));
    gen_pop(&g);
    gen_train(&g, loss, adam ? GEN_OPT_ADAM : GEN_OPT_MOMENTUM, 0);
    pb_graph *out = NULL;
    pb_error err;
    if (gen_finish(&g, "tiny", &out, &err) != PB_OK)
        fail_msg("%s", err.msg);
    gen_free(&g);
    return out;
}

/* The first node whose name (field = g->node_name) or type (g->node_type) is `what`. */
static int test_find(const pb_graph *g, const char *const *field, const char *what)
{
    for (int v = 0; v < g->n_nodes; v++)
        if (strcmp(field[v], what) == 0)
            return v;
    fail_msg("no node with name or type '%s'", what);
    return -1;
}

#define test_node(g, name) test_find((g), (g)->node_name, (name))
#define test_type(g, type) test_find((g), (g)->node_type, (type))

static double test_port(const pb_graph *g, int v, int port)
{
    return g->port_bytes[g->port_start[v] + port];
}

/* Kernel-less ops cost 0 with the option and GEN_HOST_OP_US (host ops) or a kernel's cost
 * (Reshape: the cost model's for 0 FLOPs and 96 bytes, its input and output) without it; kernels
 * cost the same either way. */
static void test_kernelless(void **state)
{
    (void)state;
    pb_graph *free_g = test_tiny(1, 0, 0, 0), *charged = test_tiny(0, 0, 0, 0);
    static const char *const kernelless[] = {"input/IteratorGetNext", "dense/w", "dense/w/read",
                                             "dense/Reshape", "dense/w/Momentum"};
    for (size_t k = 0; k < sizeof kernelless / sizeof kernelless[0]; k++)
        assert_true(free_g->cost_us[test_node(free_g, kernelless[k])] == 0.0);
    assert_true(charged->cost_us[test_node(charged, "dense/w/read")] == GEN_HOST_OP_US);
    assert_true(charged->cost_us[test_node(charged, "input/IteratorGetNext")] == GEN_HOST_OP_US);
    assert_true(fabs(charged->cost_us[test_node(charged, "dense/Reshape")] -
                     gen_roofline_us(0, 96.0)) < 1e-9);
    int mm = test_node(free_g, "dense/MatMul");
    assert_true(free_g->cost_us[mm] > 0);
    assert_true(free_g->cost_us[mm] == charged->cost_us[test_node(charged, "dense/MatMul")]);
    assert_true(free_g->cost_us[test_type(free_g, "ApplyMomentum")] > 0);
    assert_true(gen_kernelless("NoOp") && gen_kernelless("Identity") && gen_kernelless("Const"));
    assert_false(gen_kernelless("MatMul") || gen_kernelless("ConcatV2") ||
                 gen_kernelless("Assign"));
    graph_free(free_g);
    graph_free(charged);
}

/* Only port 0 has a size: labels (port 1 of IteratorGetNext, 48 bytes) and the backprop port of
 * the cross-entropy (48 bytes) move 0 bytes, and so does the edge that reads the labels. */
static void test_first_port_only(void **state)
{
    (void)state;
    pb_graph *first = test_tiny(0, 1, 0, 0), *all = test_tiny(0, 0, 0, 0);
    int it = test_node(all, "input/IteratorGetNext");
    int xe = test_type(all, "SoftmaxCrossEntropyWithLogits");
    assert_true(test_port(all, it, 0) == 32 && test_port(all, it, 1) == 48);
    assert_true(test_port(first, it, 0) == 32 && test_port(first, it, 1) == 0);
    assert_true(test_port(all, xe, 0) == 16 && test_port(all, xe, 1) == 48);
    assert_true(test_port(first, xe, 0) == 16 && test_port(first, xe, 1) == 0);
    assert_true(first->out_bytes[it] == 32 && all->out_bytes[it] == 80);
    for (int e = 0; e < first->n_edges; e++)
        if (first->edge_src[e] == it && first->edge_dst[e] == xe) {
            assert_int_equal(first->edge_port[e], 1);
            assert_true(first->edge_bytes[e] == 0);
        }
    graph_free(first);
    graph_free(all);
}

/* The update and the slot are placed with their variable; nothing else is.  A group placement
 * that puts "gradients/dense" on device 1 and everything else on 0 runs the gradient MatMul on 1
 * but ApplyMomentum and the slot on 0, where dense/w lives. */
static void test_colocate(void **state)
{
    (void)state;
    pb_graph *off = test_tiny(0, 0, 0, 0), *g = test_tiny(0, 0, 1, 0);
    assert_null(off->placed_with);
    assert_non_null(g->placed_with);
    int w = test_node(g, "dense/w"), slot = test_node(g, "dense/w/Momentum");
    int apply = test_type(g, "ApplyMomentum");
    assert_int_equal(g->placed_with[apply], w);
    assert_int_equal(g->placed_with[slot], w);
    int anchored = 0;
    for (int v = 0; v < g->n_nodes; v++)
        anchored += g->placed_with[v] >= 0;
    assert_int_equal(anchored, 2);
    assert_string_not_equal(g->checksum, off->checksum);
    assert_string_equal(g->grouped->checksum, off->grouped->checksum); /* same grouping */
    const char *upd = g->grouped->node_name[g->group_of[apply]];
    assert_string_equal(upd, "gradients/dense");
    int n = g->grouped->n_nodes;
    int *gdev = calloc((size_t)n, sizeof *gdev), *odev = calloc((size_t)g->n_nodes, sizeof *odev);
    gdev[g->group_of[apply]] = 1;
    pb_strategy grouped = {.struct_size = sizeof grouped, .n_nodes = n, .device = gdev};
    pb_strategy ops = {.struct_size = sizeof ops, .device = odev};
    pb_error err;
    assert_int_equal(strategy_expand(g, &grouped, &ops, &err), PB_OK);
    assert_int_equal(odev[apply], 0);
    assert_int_equal(odev[slot], 0);
    int grad_mm = -1;
    for (int v = 0; v < g->n_nodes; v++)
        if (strcmp(g->node_type[v], "MatMul") == 0 && g->group_of[v] == g->group_of[apply])
            grad_mm = v;
    assert_true(grad_mm >= 0);
    assert_int_equal(odev[grad_mm], 1);
    free(gdev);
    free(odev);
    graph_free(off);
    graph_free(g);
}

/* Adam: both beta powers and the ops that advance them follow the first variable by name,
 * a/w (created after z/w). */
static void test_colocate_adam(void **state)
{
    (void)state;
    pb_graph *g = test_tiny(0, 0, 1, 1);
    int a = test_node(g, "a/w"), z = test_node(g, "z/w");
    assert_int_equal(g->placed_with[test_node(g, "beta1_power")], a);
    assert_int_equal(g->placed_with[test_node(g, "beta2_power")], a);
    assert_int_equal(g->placed_with[test_node(g, "Adam/mul")], a);
    assert_int_equal(g->placed_with[test_node(g, "Adam/Assign_1")], a);
    assert_int_equal(g->placed_with[test_node(g, "z/w/Adam_1")], z);
    int applies = 0;
    for (int v = 0; v < g->n_nodes; v++)
        if (strcmp(g->node_type[v], "ApplyAdam") == 0) {
            int var = g->pred[g->pred_start[v]]; /* input 0: the variable */
            assert_int_equal(g->placed_with[v], var);
            applies++;
        }
    assert_int_equal(applies, 2);
    assert_int_equal(g->placed_with[a], -1);
    graph_free(g);
}

/* A chain, an unknown name or the node itself as placed_with is an error naming the file and the
 * node.  (Generated graphs carry placed_with by default, so test_datasets' node-link round trip
 * covers reading and writing it: the checksum includes it.) */
static void test_placed_with_nodelink(void **state)
{
    (void)state;
    pb_graph *back = NULL;
    pb_error err;
    const char *chain = "{\"nodes\": [{\"id\": \"a\"}, {\"id\": \"b\", \"placed_with\": \"a\"}, "
                        "{\"id\": \"c\", \"placed_with\": \"b\"}], \"links\": []}";
    assert_int_equal(nodelink_parse(chain, "bad.json", &back, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "bad.json"));
    assert_non_null(strstr(err.msg, "'c' is placed with 'b'"));
    const char *ghost = "{\"nodes\": [{\"id\": \"a\", \"placed_with\": \"ghost\"}], \"links\": []}";
    assert_int_equal(nodelink_parse(ghost, "bad.json", &back, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "node 'a': placed_with 'ghost' is not a node"));
    const char *self = "{\"nodes\": [{\"id\": \"a\", \"placed_with\": \"a\"}], \"links\": []}";
    assert_int_equal(nodelink_parse(self, "bad.json", &back, &err), PB_ERR);
    assert_non_null(strstr(err.msg, "'a' is placed with itself"));
}

/* The families' options reach the graphs: with every option on, no op of a kernel-less type
 * costs anything, no port beyond 0 has a size, and every Apply op is placed with input 0. */
static void test_family_options(void **state)
{
    (void)state;
    for (int k = 0; k < gen_family_count(); k++) {
        const gen_family *fam = gen_family_at(k);
        gen_options opt = fam->defaults;
        opt.kernelless_free = opt.first_port_only = opt.colocate = 1;
        pb_graph *g = NULL;
        pb_error err;
        if (gen_graph_with(fam, 1, 0, &opt, &g, &err) != PB_OK)
            fail_msg("%s", err.msg);
        int applies = 0;
        for (int v = 0; v < g->n_nodes; v++) {
            if (gen_kernelless(g->node_type[v]))
                assert_true(g->cost_us[v] == 0);
            for (int p = g->port_start[v] + 1; p < g->port_start[v + 1]; p++)
                assert_true(g->port_bytes[p] == 0);
            if (strncmp(g->node_type[v], "Apply", 5) == 0) {
                assert_int_equal(g->placed_with[v], g->pred[g->pred_start[v]]);
                applies++;
            }
        }
        assert_true(applies > 0);
        graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernelless),
        cmocka_unit_test(test_first_port_only),
        cmocka_unit_test(test_colocate),
        cmocka_unit_test(test_colocate_adam),
        cmocka_unit_test(test_placed_with_nodelink),
        cmocka_unit_test(test_family_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
