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

-- `count` distinct graph indices of 0..31 drawn with the config's seeded math.random, sorted.
local function pick(count)
  local idx = {}
  for i = 0, 31 do
    idx[#idx + 1] = i
  end
  for i = 1, count do
    local j = math.random(i, #idx)
    idx[i], idx[j] = idx[j], idx[i]
  end
  local chosen = {}
  for i = 1, count do
    chosen[i] = idx[i]
  end
  table.sort(chosen)
  return chosen
end

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
  name      = "embeddings",
  datasets  = concat(graphs("cifar10", pick(17)), graphs("nmt", pick(17)), graphs("ptb", pick(17))),
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
    -- Two graphs per family, the smaller ones (cifar10 203 and 203 groups, nmt 192 and 140,
    -- ptb 254 and 284): 54 runs.
    quick = {
      datasets = concat(graphs("cifar10", { 1, 4 }), graphs("nmt", { 0, 1 }),
                        graphs("ptb", { 17, 30 })),
      timeout  = 600,
      results  = "results/embeddings-quick.db",
    },
  },
}
