-- expect: devices
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 1e12,
  simulator = "fake",
  placer = "single-device",
}
