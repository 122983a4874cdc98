import os


class ConfigError(Exception):
    pass


def database_url():
    try:
        return os.environ["DATABASE_URL"]
    except KeyError as e:
        raise ConfigError("DATABASE_URL is not set") from e
