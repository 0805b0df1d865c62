-- expect: 'require' is not available in configs
local sys = require("os")
return experiment {
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "random",
}
