-- expect: 'io' is not available in configs
local secret = io.open("/etc/passwd"):read("a")
return experiment {
  name = secret,
  datasets = "graphs/tiny.json",
  devices = 2,
  simulator = "fake",
  placer = "random",
}
