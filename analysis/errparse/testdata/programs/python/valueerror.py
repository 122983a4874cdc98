import json


def parse_port(text):
    return int(text)


def load(raw):
    cfg = json.loads(raw)
    return parse_port(cfg["port"])


load('{"port": "http"}')
