def mean(xs):
    return sum(xs) / len(xs)


def parse_port(s):
    return int(s)
