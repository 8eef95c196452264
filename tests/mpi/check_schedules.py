"""Run under ``mpiexec -n P python tests/mpi/check_schedules.py PROGRAM.json ...``: every program
(collsynth's lowering of a synthesized schedule) through collsynth.mpi.executor.run_collective
once, on random data checked against numpy, in one launch. The mode (in place or out of place,
among those the program declares) and the dtype rotate over the programs, so that a batch covers
all of them without running each program six times. Rank 0 prints ``OK <file>`` per program,
each failure, and ``ok: P ranks`` if there was none; the exit status is 1 on failure."""

from __future__ import annotations

import json
import sys

import numpy as np
from mpi_report import finish

from collsynth import mpi
from collsynth.mpi.executor import run_collective

DTYPES = ("float32", "float64", "int32")


def main(paths: list[str]) -> int:
    comm = mpi.comm_world()
    failures, report = [], []
    for k, path in enumerate(paths):
        with open(path) as f:
            program = json.load(f)
        modes = [m for m, key in ((False, "outofplace"), (True, "inplace")) if program[key]]
        inplace, dtype = modes[k % len(modes)], DTYPES[k % len(DTYPES)]
        nbytes = program["nchunksperloop"] * 2 * np.dtype(dtype).itemsize
        res = run_collective(program, nbytes, dtype, comm, inplace, seed=k, reps=1)
        line = f"{path} ({'in place' if inplace else 'out of place'}, {dtype})"
        if res["ok"]:
            report.append(f"OK {line}")
        elif comm.rank == 0:  # the result is the same on every rank: report it once
            failures.append(f"FAIL {line}: {res['error']}")
    return finish(comm, failures, report)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
