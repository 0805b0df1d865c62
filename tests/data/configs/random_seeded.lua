-- math.random is seeded with the experiment seed: budgets drawn from it (tests/unit/config/test_config.c).
return experiment {
  seed = 12345,
  episodes = math.random(1, 1000000),
  sim_calls = math.random(1, 1000000),
  datasets = "graphs/tiny.json",
  devices = 2,
  placer = "random",
}
