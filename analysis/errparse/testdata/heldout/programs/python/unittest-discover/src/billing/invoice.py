def total(lines):
    return sum(qty * price for qty, price in lines)


def with_tax(lines, rate):
    return total(lines) * (1 + rate)
