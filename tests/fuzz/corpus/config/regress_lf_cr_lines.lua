-- a
-- b
-- c
-- d
return experiment { datasets = "graphs/tiny.json", devices = 2, placer = "random",
  repeates = 3 }
