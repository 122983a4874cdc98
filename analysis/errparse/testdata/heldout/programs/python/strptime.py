from datetime import datetime


def parse_day(text):
    return datetime.strptime(text, "%Y-%m-%d")


def report(days):
    return [parse_day(d).weekday() for d in days]


print(report(["2024-01-05", "2024-13-01"]))
