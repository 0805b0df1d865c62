-- include() of a file that does not exist is an error (mutations may include other names).
local parts = include("parts/common.lua")
return experiment { datasets = "graphs/tiny.json", devices = 2, placer = "random" }
