-- placeto-check.lua — Placeto with the placeto-gnn embedding (20 episodes, the embedding paper's
-- runs) against random search and the single-device placement, on graphs 00-07 of cifar10, ptb
-- and nmt at 3, 5 and 8 devices (the embedding paper's Table 1 setting).
--
-- Placeto runs twice per graph: best_from = "all" returns the best placement of every episode
-- (greedy eval episodes included, as the reference's best-placement file), best_from =
-- "training" the best of training episodes only (the reference's best-so-far log).
--
-- Random search gets about Placeto's simulator budget: a config cannot give each graph its own
-- option value, so each family has a profile whose random budget is 20 episodes x (mean node
-- count of its 8 graphs + 1) simulator calls; Placeto makes at most 20 x (nodes + 1) calls and
-- fewer in practice (a step that keeps its node's device reuses the last simulation), so on
-- average it makes fewer calls than random search, though a few runs on the larger graphs make
-- more, as the report's "sim calls" column shows.
--
-- Setup (the same graphs as datasets/<family>/<family>-00 .. -07):
--   for f in cifar10 ptb nmt; do placebench dataset gen $f --count 8 --out datasets/check8/$f; done
-- Run (one profile per family, one results file):
--   for f in cifar10 ptb nmt; do placebench run configs/placeto-check.lua --profile $f -j 2; done
--   placebench report results/placeto-check.db
--
-- Profile ptb-long: the ptb graphs (datasets/ptb/ptb-00 .. -07, as the repro configs name them)
-- at 100 episodes, random search with 100 x (mean nodes + 1) simulator calls, into
-- results/placeto-check-ptb-long.db: does Placeto catch up with random search on ptb when it
-- trains longer?
--   placebench run configs/placeto-check.lua --profile ptb-long -j 2

local g = include("repro/graphs.lua")

-- Mean group count of graphs 00-07 of each family (generator seed 1).
local mean_nodes = { cifar10 = 277, ptb = 485, nmt = 181 }
local episodes = 20

local function placers(family, eps)
  local n = mean_nodes[family]
  return {
    { "placeto", best_from = { "all", "training" } },
    { "random", sim_calls = eps * (n + 1) },
    "single-device",
  }
end

local function profile(family)
  return { datasets = { "datasets/check8/" .. family }, placer = placers(family, episodes) }
end

return experiment {
  name      = "placeto-check",
  datasets  = { "datasets/check8/cifar10", "datasets/check8/ptb", "datasets/check8/nmt" },
  devices   = { 3, 5, 8 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = { { "placeto", best_from = { "all", "training" } }, "single-device" },
  embedding = "placeto-gnn",
  episodes  = episodes,
  seed      = 1,
  timeout   = 900,
  profiles  = {
    cifar10 = profile("cifar10"),
    ptb     = profile("ptb"),
    nmt     = profile("nmt"),
    ["ptb-long"] = {
      datasets = g.files("ptb", g.first(8)),
      placer   = placers("ptb", 100),
      episodes = 100,
      timeout  = 1800,
      results  = "results/placeto-check-ptb-long.db",
    },
  },
}
