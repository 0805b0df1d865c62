-- Profiles override top-level fields when selected (tests/unit/config/test_config.c).
return experiment {
  datasets = "graphs/tiny.json",
  devices = { 2, 3, 4 },
  simulator = "fake",
  placer = { "random", sim_calls = 100 },
  repeats = 10,
  profiles = {
    quick = {
      repeats = 1,
      devices = 2,
    },
    wide = {
      placer = { "random", "round-robin" },
      results = "results/wide.db",
    },
  },
}
