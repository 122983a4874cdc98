def total(items):
    return sum(items) + offset


def report(items):
    print("total:", total(items))


report([1, 2, 3])
