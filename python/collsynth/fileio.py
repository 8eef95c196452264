"""File output: nothing is ever written half-way, nothing we do not own is replaced, and files
get the umask's mode. File input: every kind of input is read no further than its cap."""

import errno
import os
import signal
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

Data = str | bytes | Callable[[str], None]


def _bad_input(message: str):
    from collsynth._core import BadInput

    return BadInput(message)


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def check_output_dir(path: str | os.PathLike, option: str = "-o") -> None:
    """Refuse, before any work, an output directory that is empty, names a file or lies under
    one (it is created when the files are written)."""
    if not str(path):
        raise _bad_input(f"{option}: empty path")
    d = Path(path)
    for p in (d, *d.parents):
        try:
            exists = p.exists()
        except OSError as e:  # a name too long
            raise _bad_input(f"{option} {path}: {_reason(e)}") from None
        if exists:
            if not p.is_dir():
                raise _bad_input(f"{option} {path}: {p} exists and is not a directory")
            return


def _make_dir(d: Path, path) -> None:
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _bad_input(f"cannot write {path}: cannot create the directory {d}: {_reason(e)}") from None


class _Planned:
    """One output: written in place (a character device, a FIFO that has a reader) or through a
    temporary file next to the file it becomes."""

    def __init__(self, path, data: Data):
        self.path = path
        self.data = data
        self.tmp: Path | None = None
        self.final: Path | None = None  # where the temporary file is renamed to
        self.in_place = False
        self.fd: int | None = None  # the device or FIFO written in place, opened when planned

    def plan(self) -> None:
        """Decide how the output is written, refusing what is not ours to write."""
        path = self.path
        if not str(path):
            raise _bad_input("cannot write '': empty path")
        target = Path(path)
        try:
            # A link is followed: its final target is what gets written, the link stays.
            kind = os.stat(target).st_mode
        except (FileNotFoundError, NotADirectoryError):  # the directory check below says which
            kind = None
        except OSError as e:
            raise _bad_input(f"cannot write {path}: {_reason(e)}") from None
        if kind is None or stat.S_ISREG(kind):
            final = Path(os.path.realpath(target)) if target.is_symlink() else target
            parent = final.parent if str(final.parent) else Path(".")
            check_output_dir(parent, option=f"cannot write {path}:")
            self.final = final
        elif stat.S_ISDIR(kind):
            raise _bad_input(f"cannot write {path}: is a directory")
        elif stat.S_ISCHR(kind) or stat.S_ISFIFO(kind):
            self.in_place = True
            self.fd = _open_in_place(path)
        else:
            what = "a socket" if stat.S_ISSOCK(kind) else "a block device"
            raise _bad_input(f"cannot write {path}: it is {what} (neither written nor replaced)")

    def prepare(self) -> None:
        """The output's bytes in a temporary file (next to the target, or, for an output
        written in place, in the system's temporary directory)."""
        if self.in_place:
            import tempfile  # here, not at start-up of every command (README, "Start-up")

            parent = Path(tempfile.gettempdir())
            name = "collsynth-out"
        else:
            assert self.final is not None
            parent = self.final.parent if str(self.final.parent) else Path(".")
            _make_dir(parent, self.path)
            # Short enough that a target name the file system takes leaves room for the suffix.
            name = self.final.name[:100]
        mode = "wb" if isinstance(self.data, bytes) else "w"
        try:
            for _ in range(100):
                # The name is known before the file exists, so a signal that lands while it is
                # created still finds it to remove (mkstemp would hand it back only after).
                self.tmp = parent / f".{name}.{os.urandom(8).hex()}"
                try:
                    # mode 0666: the umask applies, as it does to a file `open` creates
                    fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                    break
                except FileExistsError:
                    continue
            else:
                raise _bad_input(f"cannot write {self.path}: no free temporary name in {parent}")
            if callable(self.data):
                os.close(fd)
                self.data(str(self.tmp))
            else:
                with os.fdopen(fd, mode) as f:
                    f.write(self.data)
        except OSError as e:
            raise _bad_input(f"cannot write {self.path}: {_reason(e)}") from None

    def commit(self) -> None:
        assert self.tmp is not None
        try:
            if self.fd is not None:
                import shutil  # here, not at start-up of every command (README, "Start-up")

                with os.fdopen(self.fd, "wb") as out, open(self.tmp, "rb") as src:
                    self.fd = None
                    shutil.copyfileobj(src, out)
                self.tmp.unlink()
            else:
                os.replace(self.tmp, self.final)  # type: ignore[arg-type]
            self.tmp = None
        except OSError as e:
            raise _bad_input(f"cannot write {self.path}: {_reason(e)}") from None

    def discard(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
            self.tmp = None


def _open_in_place(path) -> int:
    """The device or FIFO at ``path`` opened for writing in place, as `cp` does. A FIFO is
    opened without blocking: with no reader that fails (ENXIO) at once, where a blocking open
    would wait for a reader forever."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise _bad_input(f"cannot write {path}: it is a FIFO that nothing reads (not written)") from None
        raise _bad_input(f"cannot write {path}: {_reason(e)}") from None
    os.set_blocking(fd, True)
    return fd


def atomic_write_all(outputs: Iterable[tuple[str | os.PathLike, Data]]) -> None:
    """Write every (path, data) or none: all are checked and written to temporary files first,
    then renamed into place, so a failure leaves no partial set (say a schedule.json without
    the .xml asked for with it). A regular file or a new name is replaced atomically; a link
    is followed and its target written, the link itself kept; a character device, or a FIFO
    that has a reader, is written in place (as `cp` does); a socket, a block device and a
    directory are refused. The temporary files get mode 0666 minus the umask, and a failure,
    Ctrl-C or SIGTERM (see :func:`remove_temp_files_on_signals`) leaves none behind; a path
    that cannot be written is BadInput. ``data`` may be a writer instead of the text: called
    with the temporary file's path, it fills that file (the core streams large files this way
    rather than building their text)."""
    planned = [_Planned(path, data) for path, data in outputs]
    try:
        for p in planned:
            p.plan()
        for p in planned:
            p.prepare()
        # Outputs written in place first: a device can still fail (/dev/full: no space), and a
        # rename, which does not, must not have put a file of the set in place before it.
        for p in sorted(planned, key=lambda p: not p.in_place):
            p.commit()
    finally:
        for p in planned:
            p.discard()


def atomic_write(path: str | os.PathLike, data: Data) -> None:
    """One output, as :func:`atomic_write_all` writes each."""
    atomic_write_all([(path, data)])


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that ``finally`` / ``except`` clean-ups run."""


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def remove_temp_files_on_signals() -> None:
    """Make SIGTERM unwind like Ctrl-C (KeyboardInterrupt) does, so that :func:`atomic_write`
    removes its temporary file; the CLI exits 143 (resp. 130) afterwards."""
    signal.signal(signal.SIGTERM, _raise_terminated)


def read_text(path: str | os.PathLike, kind: str) -> str:
    """The text of an input file read as ``kind`` (``"schedule JSON"``, ``"MSCCL XML"``,
    ``"topology JSON"``, ``"NCCL topology XML"``), or :class:`collsynth.BadInput` naming the
    file and why it can't be read. Reading stops past the kind's cap (``/dev/zero`` costs the
    cap, not all memory): the core's one reader of inputs does it."""
    from collsynth._core import read_input

    return read_input(os.fspath(path), kind)
