-- expect: the sweep lists the same run twice (graph graphs/tiny.json, 2 devices
return experiment {
  datasets = { "graphs", "graphs/tiny.json" },
  devices = 2,
  simulator = "fake",
  placer = "random",
}
