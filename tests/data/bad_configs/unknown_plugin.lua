-- expect: unknown placer 'randon'
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "randon",
}
