"""``python -m collsynth.run``: the documented name of :mod:`collsynth.mpi.run` (the MPI
entry point lives with the rest of the MPI runtime; this alias keeps the old command working)."""

from collsynth.mpi.run import _entry, main

__all__ = ["main"]

if __name__ == "__main__":
    _entry()
