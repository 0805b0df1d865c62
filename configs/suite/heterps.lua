-- heterps.lua — the suites' problems on the HeterPS cost model (specs/heterps.md): the layer
-- chains of datasets/heterps scheduled onto T = 2 resource types (CPU cores, V100 at 2.42 USD/h)
-- under the throughput limit, ranked by monetary cost (objective = "cost"): a plan that misses a
-- limit is not a result.  Every placer that returns a plain placement applies (a device is a
-- resource type here); the HeterPS schedulers work only with this simulator.  One file of the
-- suite folder configs/suite/ (profiles quick and full; without a profile: quick).
return experiment {
  name      = "suite-quick-heterps",
  datasets  = { "datasets/heterps/ctrdnn-16.json", "datasets/heterps/nce.json" },
  devices   = 2,
  cluster   = "heterps-types",
  simulator = "heterps",
  objective = "cost",
  placer    = {
    "single-device",
    "random",
    -- HeterPS (Liu et al.) and its baselines
    { "heterps", rounds = 200 },
    { "rl-rnn", rounds = 200 },
    "bo",
    "genetic",
    "greedy",
    "all-cpu",
    "all-gpu",
    "heuristic",
    "brute-force",
  },
  sim_calls = 200,
  timeout   = 300,
  repeats   = 2,
  seed      = 1,
  profiles  = {
    quick = {},
    full  = {
      name     = "suite-full-heterps",
      datasets = { "datasets/heterps/ctrdnn-16.json", "datasets/heterps/matchnet.json",
                   "datasets/heterps/2emb.json", "datasets/heterps/nce.json" },
      placer   = { "single-device", "random", "heterps", "rl-rnn", "bo", "genetic", "greedy",
                   "all-cpu", "all-gpu", "heuristic", "brute-force" },
      sim_calls = 1000, -- BO fits its Gaussian process to every evaluation: ~270 s a run here
      timeout  = 1800,
      repeats  = 3,
    },
  },
}
