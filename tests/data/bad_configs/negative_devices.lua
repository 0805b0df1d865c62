-- expect: field 'devices' is -3; it must be between 1 and 65536
return experiment {
  datasets = "graphs/tiny.json",
  devices = -3,
  simulator = "fake",
  placer = "random",
}
