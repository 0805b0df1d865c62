-- _placers.lua — placer lists the suite's problem files share (included, not a problem file:
-- `compare` skips files whose name starts with '_').  Each list is a function so that every
-- includer gets a table of its own to extend.
local function plain()
  return {
    -- baselines
    "single-device",
    "round-robin",
    "random",
    -- Baechi (Jeon et al., SoCC 2020)
    "m-topo",
    "m-etf",
    "m-sct",
  }
end

-- The lists joined into one.
local function join(...)
  local all = {}
  for _, list in ipairs({ ... }) do
    for _, p in ipairs(list) do
      all[#all + 1] = p
    end
  end
  return all
end

return { plain = plain, join = join }
