-- Only the required fields.
return experiment { datasets = "graphs/tiny.json", devices = 2, placer = "random" }
