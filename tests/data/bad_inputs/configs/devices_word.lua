-- expect: devices
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = "two",
  simulator = "fake",
  placer = "single-device",
}
