-- expect: placer
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = 42,
}
