-- random_seeded.lua with another seed: the draws must differ (tests/unit/config/test_config.c).
return experiment {
  seed = 54321,
  episodes = math.random(1, 1000000),
  sim_calls = math.random(1, 1000000),
  datasets = "graphs/tiny.json",
  devices = 2,
  placer = "random",
}
