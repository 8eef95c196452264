"""(in progress)"""

from __future__ import annotations


def register(sub) -> None:
    """Adds no command yet."""
