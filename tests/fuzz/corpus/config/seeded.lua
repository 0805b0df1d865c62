-- math.random is seeded with the experiment seed (two evaluation passes).
math.randomseed(12345)
return experiment {
  seed = 12345,
  episodes = math.random(1, 1000000),
  sim_calls = math.random(1, 1000000),
  datasets = "graphs/tiny.json",
  devices = math.random(1, 8),
  placer = "random",
}
