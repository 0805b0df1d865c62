-- expect: attempt to call a nil value (global 'experimnt')
return experimnt {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "random",
}
