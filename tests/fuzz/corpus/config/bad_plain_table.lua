return {
  datasets = "graphs/tiny.json",
  devices = 2,
  placer = "random",
}
