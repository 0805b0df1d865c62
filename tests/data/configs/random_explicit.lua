-- The same draws as random_seeded.lua, after seeding math.random explicitly with its seed.
math.randomseed(12345)
return experiment {
  seed = 12345,
  episodes = math.random(1, 1000000),
  sim_calls = math.random(1, 1000000),
  datasets = "graphs/tiny.json",
  devices = 2,
  placer = "random",
}
