-- expect: '}' expected (to close '{' at line 2) near 'devices'
return experiment {
  datasets = "graphs/tiny.json"
  devices = 2,
  simulator = "fake",
  placer = "random",
}
