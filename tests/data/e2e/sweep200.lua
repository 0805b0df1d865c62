-- 200 runs of cheap random search on two tiny graphs, for the kill-and-resume test.
return experiment {
  name = "sweep200",
  datasets = { "graphs/diamond.json", "graphs/grouped.json" },
  devices = { 2, 3, 4, 5 },
  simulator = "fake",
  placer = { "random", sim_calls = 40000 },
  repeats = 25,
  seed = 7,
}
