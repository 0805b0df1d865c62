-- expect: 'os' is not available in configs
os.execute("touch pwned")
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "random",
}
