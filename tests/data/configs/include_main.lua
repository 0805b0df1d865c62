-- Builds its experiment from a file included from a subfolder (tests/unit/config/test_config.c).
local common = include("parts/common.lua")
return experiment {
  datasets = common.datasets,
  devices = common.devices,
  simulator = "fake",
  placer = common.placer,
}
