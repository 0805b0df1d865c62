-- embeddings-check.lua — the embedding paper's Tables 1 and 2 in small: Placeto with its own
-- GNN (placeto-gnn), GraphSAGE (graphsage, per-node pooled output, the default) and P-GNN (pgnn),
-- 20 episodes each, on 3, 5 and 8 devices, on the first 8 graphs of each family.  The report gives
-- per graph the improvement of the best placement over the initial one (all nodes on device 0,
-- the configs' init_best_pl) and the search time; average them per family for the tables.
--
--   for f in cifar10 ptb nmt; do placebench dataset gen $f --out datasets/$f; done
--   OPENBLAS_NUM_THREADS=1 placebench run configs/embeddings-check.lua -j 2
--   placebench report results/embeddings-check.db
--
-- 216 runs, about 60 CPU-minutes, most of them on ptb (520-node graphs, where a GraphSAGE or
-- P-GNN run takes 40-70 s).  `--profile subset` keeps 8 cifar10 and 8 nmt graphs but only ptb-00
-- and ptb-01 (162 runs, about 28 CPU-minutes).

local g = include("repro/graphs.lua")
local function graphs(family, count)
  return g.files(family, g.first(count))
end

return experiment {
  name      = "embeddings-check",
  datasets  = g.concat(graphs("cifar10", 8), graphs("ptb", 8), graphs("nmt", 8)),
  devices   = { 3, 5, 8 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = "placeto",
  embedding = { "placeto-gnn", "graphsage", "pgnn" },
  episodes  = 20,
  repeats   = 1,
  seed      = 1,
  timeout   = 900,
  profiles  = {
    subset = { datasets = g.concat(graphs("cifar10", 8), graphs("ptb", 2), graphs("nmt", 8)) },
  },
}
