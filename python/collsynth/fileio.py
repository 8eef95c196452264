"""Atomic file output: nothing is ever written half-way."""

import os
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` to a temporary file next to ``path`` and rename it into place."""
    target = Path(path)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_text(path: str | os.PathLike) -> str:
    """The file's text, or :class:`collsynth.BadInput` naming the file and why it can't be read."""
    from collsynth._core import BadInput

    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: cannot read file: {getattr(e, 'strerror', None) or e}") from None
