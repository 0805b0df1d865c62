-- No seed: the default seed 1 seeds math.random (tests/unit/config/test_config.c).
return experiment {
  episodes = math.random(1, 1000000),
  sim_calls = math.random(1, 1000000),
  datasets = "graphs/tiny.json",
  devices = 2,
  placer = "random",
}
