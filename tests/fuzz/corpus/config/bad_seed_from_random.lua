return experiment {
  seed = math.random(2, 1000000),
  datasets = "graphs/tiny.json",
  devices = 2,
  placer = "random",
}
