-- A small sweep over both tiny graphs and three placers, for shard/merge and determinism.
return experiment {
  name = "shards",
  datasets = { "graphs/diamond.json", "graphs/grouped.json" },
  devices = { 2, 3 },
  simulator = "fake",
  placer = { { "random", sim_calls = { 50, 200 } }, "round-robin", "single-device" },
  traversal = { "topo", "lexico" },
  repeats = 2,
  seed = 11,
}
