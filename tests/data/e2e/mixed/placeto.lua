-- A folder suite for a test (tests/e2e/compare_new_placer.sh): the tiny graph on the Placeto
-- simulator with placers of every strategy kind; dp-nccl (replicated) and greedy (HeterPS only)
-- do not apply here and are skipped.
return experiment {
  name      = "mixed-placeto",
  datasets  = "graphs/tiny.json",
  devices   = 2,
  cluster   = "placeto-k80",
  simulator = "placeto",
  placer    = { "single-device", "random", "dp-nccl", "greedy" },
  sim_calls = 20,
  repeats   = 1,
  seed      = 1,
}
