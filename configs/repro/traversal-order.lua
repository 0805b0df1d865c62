-- traversal-order.lua — the traversal-order paper's experiment (Tables II-IV): Placeto with the
-- placeto-gnn embedding on the 32 graphs of each family (cifar10, nmt, ptb) at 3, 5 and 8
-- devices, visiting nodes in each of six traversal orders, 10 repeats of 50 episodes:
-- 3 x 32 x 3 x 6 x 10 = 17,280 runs.  The report counts, per family, device count and episode
-- 9/19/49, the graphs on which each order found the lowest best step time (mean over repeats).
--
-- Placeto's settings are the plugin defaults, which follow the configs of the paper's released
-- code ([B] in specs: rewards on log run time, eval every 5th episode, episodes starting from the
-- best placement so far, all on device 0 at first).
--
--   placebench dataset gen cifar10 --out datasets/cifar10   (and ptb, nmt)
--   placebench run configs/repro/traversal-order.lua -j 2                 # the full sweep
--   placebench report results/traversal-order.db --tables orders
--   placebench plot results/traversal-order.db
--   placebench run configs/repro/traversal-order.lua --profile quick -j 2 # under 10 minutes,
--   placebench report results/traversal-order-quick.db                    # its own results file
--
-- REPRODUCE.md gives the wall times measured on a 2-core machine and the tables.

local g = include("graphs.lua")

local orders = { "lexico", "topo", "dfs-preorder", "reversed-topo", "dfs-postorder", "bfs" }

return experiment {
  name      = "traversal-order",
  datasets  = { "cifar10", "nmt", "ptb" },
  devices   = { 3, 5, 8 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = "placeto",
  embedding = "placeto-gnn",
  traversal = orders,
  episodes  = 50,
  repeats   = 10,
  seed      = 1,
  timeout   = 1800,
  profiles  = {
    -- Three graphs of each of cifar10 and nmt and two of ptb, the smaller ones of their family
    -- (cifar10 203, 203 and 195 groups, nmt 192, 140 and 128, ptb 254 and 284), 2 repeats:
    -- 288 runs.
    quick = {
      datasets = g.concat(g.files("cifar10", { 1, 4, 12 }), g.files("nmt", { 0, 1, 30 }),
                          g.files("ptb", { 17, 30 })),
      repeats  = 2,
      timeout  = 600,
      results  = "results/traversal-order-quick.db",
    },
  },
}
