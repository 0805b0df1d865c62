-- quickstart.lua — the README's main job: the baseline placers on all generated cifar10, ptb and
-- nmt graphs (32 each) on the Placeto K80 simulator with 2 and 4 devices.  Generate the graphs
-- first (the quick-start command does): placebench dataset gen FAMILY --out datasets/FAMILY
return experiment {
  name      = "quickstart",
  datasets  = { "cifar10", "ptb", "nmt" },
  devices   = { 2, 4 },
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = { "single-device", { "random", sim_calls = 300 }, "round-robin" },
  repeats   = 1,
  seed      = 1,
  timeout   = 300,
}
