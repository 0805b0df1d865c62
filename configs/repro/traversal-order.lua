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

local orders = { "lexico", "topo", "dfs-preorder", "reversed-topo", "dfs-postorder", "bfs" }

-- Graph files of a family by index, as `placebench dataset gen` names them.
local function graphs(family, indices)
  local list = {}
  for _, i in ipairs(indices) do
    list[#list + 1] = string.format("datasets/%s/%s-%02d.json", family, family, i)
  end
  return list
end

local function concat(...)
  local all = {}
  for _, list in ipairs({ ... }) do
    for _, item in ipairs(list) do
      all[#all + 1] = item
    end
  end
  return all
end

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
    -- Two graphs of each of cifar10 and nmt and one of ptb, the smaller ones of their family
    -- (cifar10 203 and 203 groups, nmt 192 and 140, ptb 254), 2 repeats: 180 runs.
    quick = {
      datasets = concat(graphs("cifar10", { 1, 4 }), graphs("nmt", { 0, 1 }), graphs("ptb", { 17 })),
      repeats  = 2,
      timeout  = 600,
      results  = "results/traversal-order-quick.db",
    },
  },
}
