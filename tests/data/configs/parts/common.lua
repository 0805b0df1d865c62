-- Shared settings, included by ../include_main.lua; includes a sibling to test nested includes.
local base = include("devices.lua")
return { datasets = "graphs/tiny.json", devices = base, placer = "round-robin" }
