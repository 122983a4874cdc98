import pytest

from slug import slugify


@pytest.mark.parametrize("text,want", [("Hello World", "hello-world"), ("a  b", "a-b")])
def test_slugify(text, want):
    assert slugify(text) == want
