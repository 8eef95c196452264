"""collsynth's MPI runtime: round-optimal collectives (Träff's circulant schedules) over mpi4py
point-to-point. The only part of collsynth that talks MPI.

    from collsynth import mpi
    comm = mpi.comm_world()
    mpi.bcast(buf, root=0, comm=comm)                       # numpy buffers, MPI semantics
    mpi.allgatherv(mine, out, counts, comm)
    mpi.allreduce(x, y, mpi.MPI.SUM, comm)

Attributes are loaded lazily, so ``collsynth.mpi.launch`` (used by the CLI, which is not an MPI
process) does not initialise MPI.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "bcast": "collectives",
    "allgather": "collectives",
    "allgatherv": "collectives",
    "allreduce": "collectives",
    "comm_world": "collectives",
    "model": "costmodel",
    "set_model": "costmodel",
    "clear_schedule_cache": "plan",
    "execute": "executor",
}

__all__ = [*_EXPORTS, "MPI"]


def __getattr__(name: str):
    if name == "MPI":
        from mpi4py import MPI

        return MPI
    if name in _EXPORTS:
        module = importlib.import_module(f"collsynth.mpi.{_EXPORTS[name]}")
        return getattr(module, "clear_cache" if name == "clear_schedule_cache" else name)
    raise AttributeError(f"module 'collsynth.mpi' has no attribute {name!r}")
