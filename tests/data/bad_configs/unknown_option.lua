-- expect: unknown option 'sim_cals' (did you mean 'sim_calls'?)
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = {
    "random",
    sim_cals = 100,
  },
}
