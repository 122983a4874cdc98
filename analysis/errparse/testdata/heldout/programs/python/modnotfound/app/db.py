import sqlalchemyx


def connect(host):
    return sqlalchemyx.create_engine(host)
