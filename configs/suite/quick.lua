-- quick.lua — the standard quick suite: every built-in placer that applies on 4 graphs of each
-- Placeto family (cifar10, nmt, ptb) at 3 and 5 devices on the Placeto simulator, 2 repeats,
-- 1000 simulator calls for search placers and 20 episodes for Placeto.  `placebench compare
-- PLUGIN.so` ranks a placer against these runs (cached in results/suite-quick.db).  Generate the
-- graphs first: placebench dataset gen FAMILY --out datasets/FAMILY (cifar10, nmt, ptb).
local problems = include("placeto_problems.lua")

return experiment(problems {
  name       = "suite-quick",
  graphs     = { 0, 1, 2, 3 },
  devices    = { 3, 5 },
  embeddings = "placeto-gnn",
  traversals = "topo",
  sim_calls  = 1000,
  episodes   = 20,
  timeout    = 300,
  repeats    = 2,
})
