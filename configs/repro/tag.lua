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

-- Tables 7 and 8 (specs/tag.md §11; configs/repro/tag-tables78.sh trains the networks first).
-- Table 7: on random unseen 8-GPU topologies (tag-random, one per repeat, drawn from this
-- experiment's seed: the training's topologies come from other seeds), MCTS playouts until the
-- search first beats DP-NCCL, TAG (GNN priors, at most 200 playouts) against pure MCTS (at most
-- 2000), each stopping there (stop_when_better), as TAG's generalization scripts do.  The paper's
-- five models; 20 topologies each = the paper's 100 runs.  Table 8: TAG with the network trained
-- on every model and TAG- with one trained without the model searched ("-without-MODEL." in the
-- file name: report --tables tag files those runs as the hold-out), against DP-NCCL on the
-- testbed.  The quick variants: the two models and the networks of tag-train.sh's quick profile
-- (Table 7: 10 topologies).
local t7_models = { "datasets/zoo/inceptionv3.json", "datasets/zoo/resnet101.json",
                    "datasets/zoo/vgg19.json", "datasets/zoo/transformer.json",
                    "datasets/zoo/bert-small.json" }
local quick_models = { "datasets/zoo/vgg19.json", "datasets/zoo/inceptionv3.json" }
-- Table 8's models: those of Table 8 that tag-train.sh's full profile trains on (its records
-- have no Transformer, so a Transformer row would compare two networks that never saw it).
local t8_models = { "datasets/zoo/inceptionv3.json", "datasets/zoo/resnet101.json",
                    "datasets/zoo/vgg19.json", "datasets/zoo/bert-small.json" }

local function table7(params, pure_playouts, tag_playouts)
  return {
    { "pure-mcts", playouts = pure_playouts, device_groups = "type", stop_when_better = true },
    { "tag", playouts = tag_playouts, device_groups = "type", stop_when_better = true,
      params = params },
  }
end

-- DP-NCCL, TAG with `all`, and TAG- with `prefix .. "-without-" .. MODEL .. ".params"` per model.
local function table8(list, all, prefix, playouts)
  local p = { "dp-nccl", { "tag", playouts = playouts, device_groups = "type", params = all } }
  for _, path in ipairs(list) do
    local m = path:match("([^/]+)%.json$")
    p[#p + 1] = { "tag", playouts = playouts, device_groups = "type",
                  params = prefix .. "-without-" .. m .. ".params" }
  end
  return p
end

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
    table7 = {
      datasets = t7_models, cluster = "tag-random", devices = 8,
      placer   = table7("results/tag-gnn.params", 2000, 200),
      repeats  = 20,
      results  = "results/tag-table7.db",
    },
    ["table7-quick"] = {
      datasets = quick_models, cluster = "tag-random", devices = 8,
      placer   = table7("results/tag-gnn-quick.params", 200, 200),
      repeats  = 10,
      timeout  = 600,
      results  = "results/tag-table7-quick.db",
    },
    table8 = {
      datasets = t8_models,
      placer   = table8(t8_models, "results/tag-gnn.params", "results/tag-gnn", 800),
      repeats  = 3,
      results  = "results/tag-table8.db",
    },
    ["table8-quick"] = {
      datasets = quick_models,
      placer   = table8(quick_models, "results/tag-gnn-quick.params", "results/tag-gnn-quick", 100),
      repeats  = 1,
      timeout  = 600,
      results  = "results/tag-table8-quick.db",
    },
  },
}
