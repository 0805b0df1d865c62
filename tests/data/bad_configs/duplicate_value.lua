-- expect: field 'devices' lists 2 twice
return experiment {
  datasets = "graphs/tiny.json",
  devices = { 2, 3, 2 },
  simulator = "fake",
  placer = "random",
}
