-- expect: NUL
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json" },
  devices = 2,
  simulator = "fake",
  placer = { "random", ["sim\0calls"] = 3 },
}
