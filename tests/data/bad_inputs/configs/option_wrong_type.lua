-- expect: sim_calls
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = { "random", sim_calls = "many" },
}
