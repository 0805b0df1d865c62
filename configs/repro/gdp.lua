-- gdp.lua — GDP's Table 1 (specs/gdp.md §12): GDP-one against its baselines HP (`expert`), METIS
-- (`metis`) and HDP (`hdp`) on GDP's machine (cluster gdp-p100: a host CPU and up to 8 P100s;
-- devices = 1 + the GPUs, so 3, 5, 9 are Table 1's 2, 4, 8 GPUs) with the topology simulator
-- (TF FIFO scheduling, OOM = infeasible).  The graphs come from the model zoo, generated in the
-- working directory first (REPRODUCE.md, "GDP"):
--
--   placebench dataset gen rnnlm --layers 2 --out datasets/zoo      (and --layers 4)
--   placebench dataset gen gnmt  --layers 2 --out datasets/zoo      (and --layers 4, 8)
--
--   placebench run configs/repro/gdp.lua -j 2                        # Table 1, every model x 2/4/8
--   placebench run configs/repro/gdp.lua --profile quick -j 2        # 2-layer RNNLM and GNMT, short
--   placebench run configs/repro/gdp.lua --profile baselines -j 2    # Table 1 without GDP-one
--   placebench report results/gdp.db                                 # Table 1 beside the paper's
--
-- GDP-one is the `gdp` placer plugin.  Where it is not built, `check` and `run` stop with
-- "unknown placer 'gdp'": run the profiles `baselines` or `quick-baselines` instead, and the
-- report leaves the GDP-one column and the speed-ups over it empty.
--
-- Of Table 1's 12 graphs the zoo generates 2/4-layer RNNLM and 2/4/8-layer GNMT.  Not in it yet
-- (so not in the sweep): 2/4/8-layer Transformer-XL, GDP's Inception-V3 (24,713 ops; the zoo's
-- `inceptionv3` is TAG's 224x224 graph, not this one), AmoebaNet, 2-stack 18-layer and 4-stack
-- 36-layer WaveNet; add their files to `models` when the zoo has them.
--
-- HDP gets GDP's rollout budget (spec §6.4: 10 PPO iterations x 400 rollouts = 4000 controller
-- steps, stopping early after 800 steps without a 1 % improvement: `patience`); METIS and HP
-- place once.  Three repeats: HDP (and GDP) vary with the seed, the fixed
-- placements do not.

local models = { "datasets/zoo/rnnlm-2l.json", "datasets/zoo/rnnlm-4l.json",
                 "datasets/zoo/gnmt-2l.json", "datasets/zoo/gnmt-4l.json",
                 "datasets/zoo/gnmt-8l.json" }
local baselines = { "expert", "metis", { "hdp", steps = 4000 } }
local methods = { "gdp", "expert", "metis", { "hdp", steps = 4000 } }

return experiment {
  name      = "gdp",
  datasets  = models,
  devices   = { 3, 5, 9 },
  cluster   = "gdp-p100",
  simulator = "topology",
  placer    = methods,
  repeats   = 3,
  seed      = 1,
  timeout   = 7200,
  results   = "results/gdp.db",
  profiles  = {
    baselines = {
      placer  = baselines,
      results = "results/gdp-baselines.db",
    },
    -- Under 10 minutes on 2 cores: the two 2-layer models at 2 and 4 GPUs, one seed, HDP for 40
    -- steps (its curve, not its converged result).
    quick = {
      datasets = { "datasets/zoo/rnnlm-2l.json", "datasets/zoo/gnmt-2l.json" },
      devices  = { 3, 5 },
      placer   = { "gdp", "expert", "metis", { "hdp", steps = 40 } },
      repeats  = 1,
      timeout  = 240,
      results  = "results/gdp-quick.db",
    },
    ["quick-baselines"] = {
      datasets = { "datasets/zoo/rnnlm-2l.json", "datasets/zoo/gnmt-2l.json" },
      devices  = { 3, 5 },
      placer   = { "expert", "metis", { "hdp", steps = 40 } },
      repeats  = 1,
      timeout  = 240,
      results  = "results/gdp-quick-baselines.db",
    },
  },
}
