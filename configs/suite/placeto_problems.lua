-- placeto_problems.lua — the suites' problems on the Placeto simulator: generated graphs of the
-- Placeto families (cifar10, ptb, nmt) on the Placeto K80 box, with every placer that places a
-- plain placement on it.  Returns a function of the suite's sizes that builds the experiment
-- table; quick.lua and full.lua call it.
--
-- Problems of the other simulators (the model zoo on the topology simulator's TAG clusters,
-- HeterPS models on the heterps cost model) will be further files like this one, each with the
-- placers that can solve them; they need simulators and graphs that do not exist yet.
return function(s)
  local datasets = {}
  for _, family in ipairs({ "cifar10", "nmt", "ptb" }) do
    for _, i in ipairs(s.graphs) do
      datasets[#datasets + 1] = string.format("datasets/%s/%s-%02d.json", family, family, i)
    end
  end
  return {
    name      = s.name,
    datasets  = datasets,
    devices   = s.devices,
    cluster   = "placeto-k80",
    simulator = "placeto",
    placer    = {
      -- baselines
      "single-device",
      "round-robin",
      "random",
      -- Baechi (Jeon et al., SoCC 2020)
      "m-topo",
      "m-etf",
      "m-sct",
      -- learned
      "placeto",
    },
    embedding = s.embeddings,
    traversal = s.traversals,
    -- Fixed budgets: every search placer gets sim_calls simulator calls, learned placers
    -- `episodes` episodes, and each run at most `timeout` seconds.
    sim_calls = s.sim_calls,
    episodes  = s.episodes,
    timeout   = s.timeout,
    repeats   = s.repeats,
    seed      = 1,
  }
end
