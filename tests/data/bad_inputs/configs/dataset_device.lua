-- expect: not a regular file or folder
return experiment {
  name = "bad",
  datasets = { "/dev/zero" },
  devices = 2,
  simulator = "fake",
  placer = "single-device",
}
