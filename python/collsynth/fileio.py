"""File output: nothing is ever written half-way, and files get the umask's mode."""

import os
import signal
import stat
from collections.abc import Callable
from pathlib import Path


def _bad_input(message: str):
    from collsynth._core import BadInput

    return BadInput(message)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_output_dir(path: str | os.PathLike, option: str = "-o") -> None:
    """Refuse, before any work, an output directory that names a file or lies under one
    (it is created when the files are written)."""
    d = Path(path)
    for p in (d, *d.parents):
        if p.exists():
            if not p.is_dir():
                raise _bad_input(f"{option} {path}: {p} exists and is not a directory")
            return


def _make_dir(d: Path, path) -> None:
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _bad_input(f"{path}: cannot create the directory {d}: {e.strerror or e}") from None


def atomic_write(path: str | os.PathLike, data: str | bytes | Callable[[str], None]) -> None:
    """Write ``data`` to a temporary file next to ``path`` and rename it into place. The file
    gets mode 0666 minus the umask (as `open` would give it; mkstemp alone gives 0600). A
    failure, Ctrl-C or SIGTERM (see :func:`remove_temp_files_on_signals`) leaves no temporary
    file behind; a path that cannot be written is BadInput. ``data`` may be a writer instead
    of the text: called with the temporary file's path, it fills that file (the core streams
    large files this way rather than building their text)."""
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    check_output_dir(parent, option=f"cannot write {path}:")
    if target.is_dir():
        raise _bad_input(f"cannot write {path}: is a directory")
    # Only a regular file is replaced: a link, FIFO, device or socket is not ours to replace
    # (as root, renaming over /dev/null would delete the device).
    try:
        kind = os.lstat(target).st_mode
    except FileNotFoundError:
        kind = None
    except OSError as e:
        raise _bad_input(f"cannot write {path}: {e.strerror or e}") from None
    if kind is not None and not stat.S_ISREG(kind):
        raise _bad_input(f"cannot write {path}: it exists and is not a regular file (not replaced)")
    _make_dir(parent, path)
    import tempfile  # here, not at start-up of every command (README, "Start-up")

    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=parent)
    except OSError as e:
        raise _bad_input(f"cannot write {path}: {e.strerror or e}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        if callable(data):
            os.close(fd)
            data(tmp)
        else:
            with os.fdopen(fd, mode) as f:
                f.write(data)
        os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise _bad_input(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that ``finally`` / ``except`` clean-ups run."""


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def remove_temp_files_on_signals() -> None:
    """Make SIGTERM unwind like Ctrl-C (KeyboardInterrupt) does, so that :func:`atomic_write`
    removes its temporary file; the CLI exits 143 (resp. 130) afterwards."""
    signal.signal(signal.SIGTERM, _raise_terminated)


def read_text(path: str | os.PathLike) -> str:
    """The file's text, or :class:`collsynth.BadInput` naming the file and why it can't be read."""
    from collsynth._core import BadInput

    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: cannot read file: {getattr(e, 'strerror', None) or e}") from None
