-- expect: no-such-cluster
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
  cluster = "no-such-cluster",
}
