-- expect: attempt to load a binary chunk (mode is 't')
local f = assert(load(string.dump(function() return 1 end)))
return experiment { datasets = "graphs/tiny.json", devices = 2, placer = "random" }
