-- A sweep with every kind of axis, for tests/unit/config/test_config.c (line numbers are checked there).
local budget = 500

return experiment {
  name = "sweep-test",
  seed = 42,
  repeats = 3,
  datasets = { "graphs/tiny.json" },
  devices = { 2, 4 },
  cluster = "placeto-k80",
  simulator = "fake",
  placer = {
    "single-device",
    { "random", sim_calls = { 10, 20, 30 }, report_every = 5 },
  },
  traversal = { "topo", "lexico" },
  episodes = 7,
  sim_calls = budget,
  timeout = 2.5,
  plugin_path = "../plugins",
}
