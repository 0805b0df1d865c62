-- Only the required fields: every default applies (tests/unit/config/test_config.c).
return experiment { datasets = "graphs/tiny.json", devices = 2, placer = "random" }
