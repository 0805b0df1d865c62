-- embeddings.lua — the embedding paper's experiment (Tables 1-3): Placeto with its own GNN
-- (placeto-gnn), GraphSAGE (graphsage) and P-GNN (pgnn) on 17 randomly picked graphs of each
-- family (cifar10, nmt, ptb) at 3, 5 and 8 devices, 20 episodes, initial placement all on one
-- device: 3 x 17 x 3 x 3 = 459 runs.  The report gives the improvement over the initial
-- placement, the computation time (the run's search wall time) and the EC ratio per embedding.
--
-- GraphSAGE runs with its per-node pooled output (the plugin's default), which feeds Placeto's
-- parent/child/parallel aggregation like the other two embeddings; the reference's graph-level
-- output (output = "graph") cannot (specs/placeto.md §3.4).  Placeto's settings are the plugin
-- defaults (the [M/B] configs: episodes start from the best placement so far, all on device 0
-- at first, so the initial placement is the single-device one).
--
--   placebench dataset gen cifar10 --out datasets/cifar10   (and ptb, nmt)
--   placebench run configs/repro/embeddings.lua -j 2
--   placebench report results/embeddings.db --tables embeddings
--   placebench run configs/repro/embeddings.lua --profile quick -j 2   # under 10 minutes,
--   placebench report results/embeddings-quick.db                      # its own results file
--   placebench plot results/embeddings.db

local g = include("graphs.lua")

return experiment {
  name      = "embeddings",
  datasets  = g.concat(g.files("cifar10", g.pick(17)), g.files("nmt", g.pick(17)),
                        g.files("ptb", g.pick(17))),
  devices   = { 3, 5, 8 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = "placeto",
  embedding = { "placeto-gnn", "graphsage", "pgnn" },
  episodes  = 20,
  repeats   = 1,
  seed      = 1,
  timeout   = 1800,
  profiles  = {
    -- Three graphs per family, smaller ones (cifar10 203, 203 and 195 groups, nmt 192, 140 and
    -- 128, ptb 254, 284 and 311): 81 runs.
    quick = {
      datasets = g.concat(g.files("cifar10", { 1, 4, 12 }), g.files("nmt", { 0, 1, 30 }),
                          g.files("ptb", { 11, 17, 30 })),
      timeout  = 600,
      results  = "results/embeddings-quick.db",
    },
  },
}
