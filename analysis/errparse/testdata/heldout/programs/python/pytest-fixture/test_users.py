import json

import pytest


@pytest.fixture
def users():
    with open("users.json") as f:
        return json.load(f)


def test_has_admin(users):
    assert "admin" in users
