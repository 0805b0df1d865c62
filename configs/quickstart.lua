-- quickstart.lua — the README's main job, a small real experiment: Placeto with each of its three
-- graph embeddings (placeto-gnn, GraphSAGE, P-GNN) visiting nodes in three traversal orders,
-- beside the single-device placement and random search, on one generated graph of each family
-- (cifar10, nmt, ptb; the smaller ones) at 3 and 5 devices on the Placeto K80 simulator.
-- Generate the graphs first (the quick-start command does):
--   placebench dataset gen FAMILY --out datasets/FAMILY
-- then `placebench run configs/quickstart.lua -j 2`, `placebench report results/quickstart.db`
-- and `placebench plot results/quickstart.db`.
local episodes = 10

return experiment {
  name      = "quickstart",
  datasets  = { "datasets/cifar10/cifar10-01.json", "datasets/nmt/nmt-01.json",
                "datasets/ptb/ptb-17.json" },
  devices   = { 3, 5 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = {
    "placeto",
    -- about Placeto's simulator budget: episodes x (groups + 1) on the largest of the graphs
    { "random", sim_calls = episodes * 255 },
    "single-device",
  },
  embedding = { "placeto-gnn", "graphsage", "pgnn" },
  traversal = { "topo", "reversed-topo", "bfs" },
  episodes  = episodes,
  repeats   = 1,
  seed      = 1,
  timeout   = 300,
}
