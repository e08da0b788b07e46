print("devbroker placeholder")
