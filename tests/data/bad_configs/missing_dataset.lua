-- expect: dataset 'no-such-family' not found
return experiment {
  datasets = { "graphs/tiny.json", "no-such-family" },
  devices = 2,
  simulator = "fake",
  placer = "random",
}
