-- expect: name
return experiment {
  name = "a/b",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
}
