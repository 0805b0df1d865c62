-- expect: field 'memory_limit'
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
  memory_limit = 1e9,
}
