-- expect: devices
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2.5,
  simulator = "fake",
  placer = "single-device",
}
