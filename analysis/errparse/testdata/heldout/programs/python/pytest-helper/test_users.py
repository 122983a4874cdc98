from checks import check_user


def test_ana():
    check_user({"email": "ana@example.org"})


def test_bob():
    check_user({"email": "bob.example.org"})
