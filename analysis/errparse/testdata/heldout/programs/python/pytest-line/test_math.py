def half(n):
    return n // 2


def test_half_odd():
    assert half(7) == 3.5
