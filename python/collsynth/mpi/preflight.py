"""Checks made before `mpiexec` starts, so that a run which cannot fit in memory or finish in
its time limit is refused in one line instead of failing on every rank. No mpi4py import here
(the CLI runs them in its own process)."""

from __future__ import annotations

import os

from collsynth._core import BadInput

# The longest time limit taken: a day. Beyond it the limit is no limit, and the OS's timers
# overflow (subprocess's timeout of 1e20 s is an OverflowError).
MAX_TIMEOUT_S = 86400.0
# A collective over MPI takes at least this long, however small: a lower bound used only to
# refuse repetitions that cannot end within the time limit.
MIN_COLLECTIVE_US = 1.0


def available_memory() -> int | None:
    """Bytes of memory available to new processes (Linux's MemAvailable), None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def shown(n: float) -> str:
    """Bytes for a message: 1.5 GiB, 24 TiB."""
    for unit, scale in (
        ("EiB", 1 << 60),
        ("PiB", 1 << 50),
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
    ):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} bytes"


def check_memory(what: str, processes: int, per_process: int, buffers: str) -> None:
    """Refuse ``what`` when ``processes`` x ``per_process`` bytes exceed the memory available."""
    need = processes * per_process
    have = available_memory()
    if have is not None and need > have:
        raise BadInput(
            f"{what} needs about {shown(need)} ({processes} ranks x {shown(per_process)}: {buffers}), "
            f"more than the {shown(have)} of memory available"
        )


def check_time(what: str, collectives: int, timeout_s: float) -> None:
    """Refuse ``what`` when ``collectives`` runs, each at least :data:`MIN_COLLECTIVE_US`,
    cannot end within ``timeout_s``."""
    if timeout_s > MAX_TIMEOUT_S:
        raise BadInput(f"--timeout {timeout_s:g}: at most {MAX_TIMEOUT_S:g} s (a day)")
    floor_s = collectives * MIN_COLLECTIVE_US / 1e6
    if floor_s > timeout_s:
        raise BadInput(
            f"{what}: {collectives} collectives take at least {floor_s:.3g} s, "
            f"beyond the time limit of {timeout_s:g} s"
        )
