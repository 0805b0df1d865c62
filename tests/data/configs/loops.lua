-- Sweep lists built by Lua code, and a text-only load (tests/unit/config/test_config.c).
local devices = {}
for n = 2, 8, 2 do
  devices[#devices + 1] = n
end
local orders = {}
for _, name in ipairs({ "topo", "lexico", "bfs" }) do
  table.insert(orders, name)
end
local f = load("return 1 + 2")
return experiment {
  datasets = "graphs/tiny.json",
  devices = devices,
  simulator = "fake",
  placer = { "random", sim_calls = f() * 10 },
  traversal = orders,
}
