def fill_rate(shipped, ordered):
    return shipped / ordered


def report(rows):
    return {sku: fill_rate(s, o) for sku, s, o in rows}
