from calc import mean, parse_port


def test_mean():
    assert mean([1, 2, 3]) == 3


def test_mean_empty():
    assert mean([]) == 0


def test_port():
    assert parse_port("80") == 80
