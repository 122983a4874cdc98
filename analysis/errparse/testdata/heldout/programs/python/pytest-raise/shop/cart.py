def average_price(items):
    total = sum(i["price"] for i in items)
    return total / len(items)
