def check_user(u):
    assert "@" in u["email"], f"bad email {u['email']}"
