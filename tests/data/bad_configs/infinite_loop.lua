-- expect: config ran too long
local n = 0
while true do
  n = n + 1
end
return experiment { datasets = "graphs/tiny.json", devices = 2, placer = "random" }
