from shop.cart import average_price


def test_average_one():
    assert average_price([{"price": 4}]) == 4


def test_average_empty():
    assert average_price([]) == 0
