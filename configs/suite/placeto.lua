-- placeto.lua — the suites' problems on the Placeto simulator: generated graphs of the Placeto
-- families (cifar10, ptb, nmt) on the Placeto K80 box, with every placer that returns a plain
-- placement.  One file of the suite folder configs/suite/: `placebench compare PLUGIN.so --suite
-- quick` runs every file of the folder with its profile `quick` (`full` likewise).
--   quick: 4 graphs of each family at 3 and 5 devices, 2 repeats, 1000 simulator calls for search
--          placers and 20 episodes for Placeto (results/suite-quick.db).
--   full:  all 32 graphs at 3, 5 and 8 devices, Placeto with each of its embeddings, 3 repeats,
--          5000 simulator calls and 50 episodes (the papers' budget).  Measure its time first
--          with `placebench run configs/suite/placeto.lua --profile full --sample 60 -j 2
--          --results /tmp/sample.db`.
-- Generate the graphs first: placebench dataset gen FAMILY --out datasets/FAMILY (cifar10, nmt,
-- ptb).  Without a profile the file is the quick problems.
local placers = include("_placers.lua")

local function graphs(list)
  local datasets = {}
  for _, family in ipairs({ "cifar10", "nmt", "ptb" }) do
    for _, i in ipairs(list) do
      datasets[#datasets + 1] = string.format("datasets/%s/%s-%02d.json", family, family, i)
    end
  end
  return datasets
end

local all = {}
for i = 0, 31 do
  all[#all + 1] = i
end

return experiment {
  name      = "suite-quick",
  datasets  = graphs({ 0, 1, 2, 3 }),
  devices   = { 3, 5 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  -- the plain-placement baselines and Baechi's placers, then the learned ones
  placer    = placers.join(placers.plain(), { "placeto" }),
  embedding = "placeto-gnn",
  traversal = "topo",
  -- Fixed budgets: every search placer gets sim_calls simulator calls, learned placers `episodes`
  -- episodes, and each run at most `timeout` seconds.
  sim_calls = 1000,
  episodes  = 20,
  timeout   = 300,
  repeats   = 2,
  seed      = 1,
  profiles  = {
    quick = {},
    full  = {
      name      = "suite-full",
      datasets  = graphs(all),
      devices   = { 3, 5, 8 },
      embedding = { "placeto-gnn", "graphsage", "pgnn" },
      sim_calls = 5000,
      episodes  = 50,
      timeout   = 900,
      repeats   = 3,
    },
  },
}
