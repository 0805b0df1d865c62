-- A folder suite for a test: a HeterPS chain (copied from datasets/heterps) on the HeterPS cost
-- model with two resource types, ranked by monetary cost.
return experiment {
  name      = "mixed-heterps",
  datasets  = "e2e/heterps/nce.json",
  devices   = 2,
  cluster   = "heterps-types",
  simulator = "heterps",
  objective = "cost",
  placer    = { "single-device", "all-cpu", "all-gpu", "brute-force" },
  sim_calls = 200,
  repeats   = 1,
  seed      = 1,
}
