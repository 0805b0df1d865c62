-- expect: is outside the config's folder
local graph = include("../graphs/tiny.json")
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "random",
}
