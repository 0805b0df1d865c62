-- expect: the config must return experiment { ... } (it returned a plain table)
return {
  datasets = "graphs/tiny.json",
  devices = 2,
  placer = "random",
}
