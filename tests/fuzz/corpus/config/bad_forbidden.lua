local secret = io.open("/etc/passwd"):read("a")
os.execute("touch pwned")
return experiment { name = secret, datasets = "graphs/tiny.json", devices = 2, placer = "random" }
