-- expect: datasets
return experiment {
  name = "bad",
  datasets = {},
  devices = 2,
  simulator = "fake",
  placer = "single-device",
}
