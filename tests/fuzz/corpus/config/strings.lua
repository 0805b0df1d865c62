--[==[ Long comments, long strings and escapes;
the scanner that locates fields must skip them. ]==]
local note = [[
placer = "not this one"
]]
return experiment {
  name = 'quoted\tname',
  datasets = [[graphs/tiny.json]],
  devices = 0x2,
  simulator = "fake", -- placer = "commented"
  placer = { "random", label = "a\"b\\c", [ "weird key" ] = 1e3 },
}
