-- expect: option 'sim_calls' is 0, out of range (must be in [1, 1000000000])
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = { "random", sim_calls = { 100, 0 } },
}
