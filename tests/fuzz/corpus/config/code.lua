-- Lists built by code: ipairs loops, string and table functions, load, computed keys.
local devices = {}
for _, n in ipairs({ 2, 4, 6, 8 }) do
  devices[#devices + 1] = n
end
local orders = {}
for _, name in ipairs({ "topo", "lexico", "bfs" }) do
  table.insert(orders, name)
end
local f = load("return 1 + 2")
local graphs = {}
for i, name in ipairs({ "tiny", "diamond", "grouped" }) do
  graphs[i] = string.format("graphs/%s.json", name)
end
local exp = {
  datasets = graphs,
  devices = devices,
  simulator = "fake",
  placer = { "random", sim_calls = f() * 10, tag = table.concat(orders, "+") },
  traversal = orders,
  ["name"] = string.rep("ab", 3) .. "-" .. #orders,
}
return experiment(exp)
