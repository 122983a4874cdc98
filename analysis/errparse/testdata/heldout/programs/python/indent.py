def total(prices):
    result = 0
    for p in prices:
        result += p
      return result


print(total([1, 2]))
