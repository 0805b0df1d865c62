-- expect: unknown field 'repeates' (did you mean 'repeats'?)
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "random",
  repeates = 3,
}
