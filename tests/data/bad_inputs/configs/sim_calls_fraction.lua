-- expect: sim_calls
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
  sim_calls = 10.5,
}
