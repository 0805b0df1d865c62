-- expect: option 'sim_calls' of 'random' must be a string, number or boolean, or a list of those (got table)
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = { "random", sim_calls = { { 10 } } },
}
