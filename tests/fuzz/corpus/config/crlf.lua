-- Windows line endings.
return experiment {
  datasets = "graphs/tiny.json",
  devices = { 2, 3 },
  placer = "random",
}
