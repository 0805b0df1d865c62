-- expect: devices
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 0,
  simulator = "fake",
  placer = "single-device",
}
