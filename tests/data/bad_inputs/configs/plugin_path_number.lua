-- expect: plugin_path
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
  plugin_path = 5,
}
