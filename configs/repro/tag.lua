-- tag.lua — the TAG paper's testbed experiments (Fig. 5, Table 4, search time; specs/tag.md §11)
-- on the model zoo: TAG's MCTS search (`tag` with its GNN's priors, `pure-mcts` with uniform
-- priors) against DP-NCCL and DP-NCCL-P on the 16-GPU testbed (4 V100, 8 1080Ti, 4 P100) under
-- the topology simulator.  Every run stores its step time, search time and simulator calls; the
-- MCTS placers' run logs keep the strategy (`placebench report DB --tables tag` reads them).
--
--   for m in inceptionv3 resnet101 vgg19 transformer bert-small bert-large; do
--     placebench dataset gen $m --out datasets/zoo; done
--   placebench run configs/repro/tag.lua --profile quick -j 2     # minutes
--   placebench run configs/repro/tag.lua -j 2                     # 800 playouts, 3 seeds
--   placebench report results/tag-quick.db --tables tag
--   placebench plot results/tag-quick.db
--
-- `tag` reads its GNN's parameters from results/tag-gnn.params, which
-- `configs/repro/tag-train.sh full results/tag-gnn.params` writes (without the file its runs are
-- stored as failed with the load error); pure MCTS is TAG's search without the GNN.  The MCTS
-- placers group devices by GPU type (device_groups = "type"), as TAG's code simulates the testbed (3 device groups, 21
-- actions per op group); by machine the testbed has 7 (381 actions).

local models = { "datasets/zoo/inceptionv3.json", "datasets/zoo/resnet101.json",
                 "datasets/zoo/vgg19.json", "datasets/zoo/transformer.json",
                 "datasets/zoo/bert-small.json", "datasets/zoo/bert-large.json" }

return experiment {
  name      = "tag",
  datasets  = models,
  devices   = 16,
  cluster   = "tag-testbed",
  simulator = "topology",
  placer    = { "dp-nccl", "dp-nccl-p",
                { "pure-mcts", playouts = 800, device_groups = "type" },
                { "tag", playouts = 800, device_groups = "type", params = "results/tag-gnn.params" } },
  repeats   = 3,
  seed      = 1,
  timeout   = 3600,
  results   = "results/tag.db",
  profiles  = {
    -- One seed, 100 playouts of pure MCTS and the two baselines: every model in a few minutes.
    quick = {
      placer  = { "dp-nccl", "dp-nccl-p", { "pure-mcts", playouts = 100, device_groups = "type" } },
      repeats = 1,
      timeout = 600,
      results = "results/tag-quick.db",
    },
  },
}
