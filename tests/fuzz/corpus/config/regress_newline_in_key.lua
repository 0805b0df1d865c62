-- Regression (fuzz): a key holding a line break made a two-line "unknown field" error.
return experiment { datasets = "graphs/tiny.json", devices = 2, placer = "random", ["a\r\nb"] = 1 }
