-- expect: missing field 'placer'
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
}
