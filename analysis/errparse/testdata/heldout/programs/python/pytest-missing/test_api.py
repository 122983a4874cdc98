import pytest


@pytest.fixture
def client():
    return {"status": 200}


def test_status(clinet):
    assert clinet["status"] == 200
