import pytest

from app import conf


@pytest.fixture
def settings():
    return conf.load({"host": "db"})


def test_load():
    assert conf.load({"host": "db"}) == ("db", 5432)


def test_timeout():
    assert conf.timeout({"timeout": "soon"}) == 30


def test_fix(settings):
    assert settings[1] == 5432
