/* paper_traversal_order.c — the traversal-order paper's published figures: Tables II-IV, the
 * graphs (of 32 per family) on which each traversal order found the best placement. */
#include "papers.h"

enum { PAPER_TO_ORDERS = 6, PAPER_TO_FAMILIES = 3, PAPER_TO_DEVICES = 3, PAPER_TO_EPISODES = 3 };

/* The paper's columns lexico, topo, dfs_pre, rev_topo, dfs_post, bfs as placebench names them. */
static const char *const paper_traversal_order_orders[PAPER_TO_ORDERS] = {
    "lexico", "topo", "dfs-preorder", "reversed-topo", "dfs-postorder", "bfs"};
static const char *const paper_traversal_order_families[PAPER_TO_FAMILIES] = {"cifar10", "nmt",
                                                                              "ptb"};
static const int paper_traversal_order_devices[PAPER_TO_DEVICES] = {3, 5, 8};
static const int paper_traversal_order_episodes[PAPER_TO_EPISODES] = {9, 19, 49};

/* [family][devices][episode][order], as printed: Table II (cifar10), III (nmt), IV (ptb). */
static const signed char paper_traversal_order_wins
    [PAPER_TO_FAMILIES][PAPER_TO_DEVICES][PAPER_TO_EPISODES][PAPER_TO_ORDERS] = {
        {{{1, 6, 10, 10, 4, 1}, {3, 3, 7, 8, 11, 0}, {5, 4, 5, 8, 8, 2}},
         {{0, 9, 6, 6, 9, 2}, {0, 9, 3, 10, 8, 2}, {2, 6, 6, 9, 6, 3}},
         {{0, 8, 3, 10, 11, 0}, {1, 4, 2, 8, 17, 0}, {0, 5, 1, 11, 15, 0}}},
        {{{0, 2, 0, 22, 1, 7}, {0, 0, 1, 23, 1, 7}, {0, 0, 1, 24, 1, 6}},
         {{0, 0, 1, 24, 1, 6}, {0, 0, 2, 26, 0, 4}, {0, 0, 0, 27, 0, 5}},
         {{0, 0, 0, 23, 3, 6}, {0, 0, 0, 24, 1, 7}, {0, 0, 0, 24, 3, 5}}},
        {{{0, 1, 6, 1, 0, 24}, {0, 1, 10, 1, 2, 18}, {0, 1, 8, 5, 2, 16}},
         {{0, 0, 3, 0, 2, 27}, {0, 1, 3, 2, 2, 24}, {0, 1, 2, 6, 5, 18}},
         {{0, 0, 2, 1, 1, 28}, {0, 0, 2, 5, 4, 21}, {0, 0, 2, 13, 5, 12}}}};

static const papers_order_table paper_traversal_order_tables = {
    .tables = "Tables II-IV",
    .orders = paper_traversal_order_orders,
    .n_orders = PAPER_TO_ORDERS,
    .families = paper_traversal_order_families,
    .n_families = PAPER_TO_FAMILIES,
    .devices = paper_traversal_order_devices,
    .n_devices = PAPER_TO_DEVICES,
    .episodes = paper_traversal_order_episodes,
    .n_episodes = PAPER_TO_EPISODES,
    .n_graphs = 32,
    .wins = &paper_traversal_order_wins[0][0][0][0],
};

const papers_paper paper_traversal_order = {
    .name = "traversal-order paper",
    .title = "Accelerate Model Parallel Training by Using Efficient Graph Traversal Order in "
             "Device Placement",
    .placer = "placeto",
    .orders = &paper_traversal_order_tables,
};
