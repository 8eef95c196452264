"""Arguments of the Python API checked at the boundary, so that a value the core cannot hold
(a negative or huge int, a float for a count) is BadInput naming it, never OverflowError."""

from __future__ import annotations

import operator

from collsynth._core import BadInput

# The core's counts and indices are 64-bit.
MAX_WHOLE = 2**63 - 1


def whole(name: str, value, lo: int = 0, hi: int = MAX_WHOLE) -> int:
    """``value`` as a whole number in lo..hi, else BadInput naming ``name``."""
    if isinstance(value, bool):
        raise BadInput(f"{name} must be a whole number, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise BadInput(f"{name} must be a whole number, got {value!r}") from None
    if not lo <= v <= hi:
        raise BadInput(f"{name} must be a whole number from {lo} to {hi}, got {v}")
    return v


def text(name: str, value) -> str:
    """``value`` as text for the core: a str, or an int (a size in bytes, a rank count)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput(f"{name} is not valid UTF-8: {value!r}") from None
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise BadInput(f"{name} must be a string or a whole number, got {value!r}")


def instance(name: str, value, cls):
    """``value`` if it is a ``cls`` (a Schedule, a Topology), else BadInput naming ``name``."""
    if not isinstance(value, cls):
        raise BadInput(f"{name} must be a {cls.__name__}, got {type(value).__name__}")
    return value
