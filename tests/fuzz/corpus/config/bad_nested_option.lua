return experiment {
  datasets = "graphs/tiny.json",
  devices = { 2, 0, 4 },
  simulator = "fake",
  placer = { "random", sim_calls = { { 10 } } },
}
