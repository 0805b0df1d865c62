-- expect: seed
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
  seed = 1.5,
}
