def parse_port(text):
    return int(text)


def load(settings):
    try:
        return parse_port(settings["port"])
    except ValueError as err:
        raise RuntimeError("bad port setting") from err


load({"port": "http"})
