-- expect: NUL
return experiment {
  name = "bad",
  datasets = { "graphs/diamond.json\0.txt" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
}
