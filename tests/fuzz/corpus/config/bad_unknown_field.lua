return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "random",
  repeates = 3,
}
