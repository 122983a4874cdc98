"""Settings of the app."""


def load(settings):
    """Returns the host and port of settings."""
    try:
        host = settings["host"]
        port = settings["port"]
    except KeyError as e:
        raise ValueError("port missing") from e
    return host, int(port)


def timeout(settings):
    try:
        return int(settings["timeout"])
    except ValueError:
        return settings["default_timeout"]
