"""Account service."""

from .models import Usr


def register(name):
    return Usr(name)
