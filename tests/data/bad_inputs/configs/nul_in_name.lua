-- expect: NUL
return experiment {
  name = "a\0b",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
}
