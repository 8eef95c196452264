"""Starting MPI jobs from a non-MPI process (the CLI, the tests). No mpi4py import here."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from collsynth._core import BadInput


def mpiexec() -> str:
    """$COLLSYNTH_MPIEXEC, else the mpiexec next to this Python (the `mpich` wheel in .venv),
    else the first on PATH."""
    if env := os.environ.get("COLLSYNTH_MPIEXEC"):
        return env
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    if found := shutil.which("mpiexec"):
        return found
    raise BadInput("no mpiexec found: run `make install` (the mpich wheel) or set COLLSYNTH_MPIEXEC")


def command(np_: int, argv: list[str], extra: list[str] | None = None) -> list[str]:
    """mpiexec -n NP [extra] argv. MPICH's hydra starts any number of processes on the local host
    and does not bind them by default, so oversubscription needs no option; `extra` passes others
    (Open MPI needs --oversubscribe)."""
    if np_ < 1:
        raise BadInput(f"--np must be at least 1, got {np_}")
    return [mpiexec(), "-n", str(np_), *(extra or []), *argv]
