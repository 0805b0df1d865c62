-- expect: config used more than 256 MB of memory
local chunk = string.rep("x", 1 << 20)
local hoard = {}
for i = 1, 100000 do
  hoard[i] = chunk .. i
end
return experiment { datasets = "graphs/tiny.json", devices = 2, placer = "random" }
