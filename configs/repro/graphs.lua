-- graphs.lua — lists of generated graph files, shared by the configs (include("graphs.lua")
-- from configs/repro/, include("repro/graphs.lua") from configs/).
local graphs = {}

-- The files of the given graph indices of a family, as `placebench dataset gen` names them.
function graphs.files(family, indices)
  local list = {}
  for _, i in ipairs(indices) do
    list[#list + 1] = string.format("datasets/%s/%s-%02d.json", family, family, i)
  end
  return list
end

-- Indices 0 .. count-1.
function graphs.first(count)
  local list = {}
  for i = 0, count - 1 do
    list[#list + 1] = i
  end
  return list
end

-- `count` distinct indices of 0 .. 31 drawn with the config's seeded math.random, sorted.
function graphs.pick(count)
  local idx = graphs.first(32)
  for i = 1, count do
    local j = math.random(i, #idx)
    idx[i], idx[j] = idx[j], idx[i]
  end
  local chosen = {}
  for i = 1, count do
    chosen[i] = idx[i]
  end
  table.sort(chosen)
  return chosen
end

-- The concatenation of lists.
function graphs.concat(...)
  local all = {}
  for _, list in ipairs({ ... }) do
    for _, item in ipairs(list) do
      all[#all + 1] = item
    end
  end
  return all
end

return graphs
