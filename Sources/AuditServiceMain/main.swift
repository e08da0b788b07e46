print("rescind-audit-service: not built yet")
