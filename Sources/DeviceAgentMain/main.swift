print("rescind-agent: not built yet")
