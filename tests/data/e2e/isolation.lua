-- Fixture placers that crash, abort, hang, exit or fail to start, beside a healthy one.
return experiment {
  name = "isolation",
  datasets = { "graphs/diamond.json" },
  devices = { 2 },
  simulator = "fake",
  placer = { "random", "crash", "abort", "hang", "exit", "fail-create" },
  repeats = 3,
  timeout = 1.5,
  seed = 3,
}
