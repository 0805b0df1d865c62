-- full.lua — the standard full suite: every built-in placer that applies on all 32 graphs of each
-- Placeto family (cifar10, nmt, ptb) at 3, 5 and 8 devices on the Placeto simulator, Placeto with
-- each of its embeddings, 3 repeats, 5000 simulator calls for search placers and 50 episodes for
-- Placeto (the papers' budget).  Measure its time first with
-- `placebench run configs/suite/full.lua --sample 60 -j 2 --results /tmp/sample.db`.
local problems = include("placeto_problems.lua")

local graphs = {}
for i = 0, 31 do
  graphs[#graphs + 1] = i
end

return experiment(problems {
  name       = "suite-full",
  graphs     = graphs,
  devices    = { 3, 5, 8 },
  embeddings = { "placeto-gnn", "graphsage", "pgnn" },
  traversals = "topo",
  sim_calls  = 5000,
  episodes   = 50,
  timeout    = 900,
  repeats    = 3,
})
