-- expect: field 'devices': entry 2 is 0; it must be between 1 and 65536
return experiment {
  datasets = "graphs/tiny.json",
  devices = { 2, 0, 4 },
  simulator = "fake",
  placer = "random",
}
