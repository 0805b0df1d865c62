-- zoo.lua — the suites' problems on the topology simulator: model-zoo training graphs on the TAG
-- testbed (V100-32G NVLink, 1080Ti and P100 machines, 100 Gbps) and on GDP's P100 machine (a
-- host CPU first, then the P100s), with every placer that returns a plain placement or a
-- replicated strategy.  One file of the suite folder configs/suite/ (profiles quick and full;
-- without a profile: quick).  Generate the graphs first:
--   placebench dataset gen vgg19 --out datasets/zoo          (and bert-small; full: every model)
local placers = include("_placers.lua")

return experiment {
  name      = "suite-quick-zoo",
  datasets  = { "datasets/zoo/vgg19.json", "datasets/zoo/bert-small.json" },
  devices   = { 4, 8 },
  cluster   = { "tag-testbed", "gdp-p100" },
  simulator = "topology",
  -- the plain-placement baselines and Baechi's placers, GDP's placer and its METIS baseline,
  -- data parallelism (TAG's baselines) and TAG's search with uniform priors.  In the full profile
  -- also HDP (about 80 s a run at 200 steps on BERT-Small here) and `expert` (placements for
  -- RNNLM, GNMT and Inception only).  `tag` needs trained GNN parameters
  -- (configs/repro/tag-train.sh): run it with configs/repro/tag.lua.
  placer    = placers.join(placers.plain(), { "gdp", "metis", "dp-nccl", "dp-nccl-p",
                                              "pure-mcts" }),
  traversal = "topo",
  sim_calls = 200,
  timeout   = 300,
  repeats   = 2,
  seed      = 1,
  profiles  = {
    quick = {},
    full  = {
      name      = "suite-full-zoo",
      datasets  = "datasets/zoo",
      placer    = placers.join(placers.plain(), { "gdp", "metis", "hdp", "expert", "dp-nccl",
                                                  "dp-nccl-p", "pure-mcts" }),
      devices   = { 2, 4, 8 },
      sim_calls = 1000,
      timeout   = 1800,
      repeats   = 3,
    },
  },
}
