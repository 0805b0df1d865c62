-- The fixture plugins of tests/fixtures (config_load does not check plugin names).
return experiment {
  name = "fixtures",
  datasets = { "graphs/tiny.json", "graphs/diamond.json", "graphs/grouped.json" },
  devices = { 1, 2, 3 },
  cluster = "placeto-k80",
  simulator = { "fake", step_us = 10 },
  placer = { "no-place", "fail-create", { "random", sim_calls = 5 } },
  repeats = 2,
  timeout = 0.5,
  results = "results/fixtures.db",
}
