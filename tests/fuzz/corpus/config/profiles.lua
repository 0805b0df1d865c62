-- Profiles override top-level fields when selected.
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
      placer = "no-place",
    },
    wide = {
      placer = { "random", "round-robin" },
      results = "results/wide.db",
    },
  },
}
