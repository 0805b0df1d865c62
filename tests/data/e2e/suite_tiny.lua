-- suite_tiny.lua — a suite small enough for a test (seconds): the three tiny graphs at 2 and 3
-- devices on the Placeto simulator, with every built-in placer that applies, 2 repeats.
return experiment {
  name      = "suite-tiny",
  datasets  = { "graphs/diamond.json", "graphs/grouped.json", "graphs/tiny.json" },
  devices   = { 2, 3 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = { "single-device", "round-robin", "random", "m-topo", "m-etf", "m-sct", "placeto" },
  embedding = "placeto-gnn",
  traversal = "topo",
  sim_calls = 50,
  episodes  = 2,
  timeout   = 60,
  repeats   = 2,
  seed      = 1,
}
