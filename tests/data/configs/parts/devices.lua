-- Included by common.lua, from the same folder.
return { 3, 5 }
