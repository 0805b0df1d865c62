-- quickstart.lua — the README's main job: a small real sweep of the baseline placers over
-- generated cifar10, ptb and nmt graphs on the Placeto K80 simulator, 2 and 4 devices.
return experiment {
  name      = "quickstart",
  datasets  = { "cifar10", "ptb", "nmt" },
  devices   = { 2, 4 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = { "single-device", { "random", sim_calls = 200 }, "round-robin" },
  traversal = { "topo", "bfs" },
  repeats   = 1,
  seed      = 1,
  timeout   = 300,
}
