-- expect: field 'repeats' must be an integer (got string)
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "random",
  repeats = "three",
}
