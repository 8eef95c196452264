"""The MPI benchmark, run on every rank: ``mpiexec -n P python -m collsynth.mpi.bench``.

For each size: our bcast (root 0) and allgatherv against the library's ``Bcast`` and
``Allgatherv``. As in Träff's paper: each operation timed on its own after a barrier, the slowest
rank's time taken, the minimum over `reps` (35) runs reported, and our schedule computation
included (the schedule cache is cleared before every timed call). The alpha-beta measurement
happens once per communicator, before the timings (it is cached in real use too).

Allgatherv uses the paper's irregular pattern: rank r < p - 1 contributes (r mod 3) units, the
last rank the rest, for `size` bytes in total."""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial

import numpy as np
from mpi4py import MPI

from collsynth.fileio import atomic_write
from collsynth.mpi import collectives, plan
from collsynth.mpi.costmodel import model

OPS = ("bcast", "allgatherv")


def irregular_counts(p: int, size: int) -> list[int]:
    weights = [r % 3 for r in range(p - 1)]
    unit = size // (sum(weights) + 1)
    counts = [w * unit for w in weights]
    return [*counts, size - sum(counts)]


def slowest_min(comm: MPI.Comm, fn, reps: int, clear: bool) -> float:
    """min over reps of the slowest rank's time of fn(), in microseconds."""
    fn()  # warm-up (connections, caches of the library)
    best = float("inf")
    for _ in range(reps):
        comm.Barrier()
        if clear:
            plan.clear_cache()
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best = min(best, comm.allreduce(dt, op=MPI.MAX))
    return best * 1e6


def run(comm: MPI.Comm, sizes: list[int], reps: int, ops: list[str]) -> dict:
    p, rank = comm.Get_size(), comm.Get_rank()
    ab = model(comm)
    records = []
    for op in ops:
        for size in sizes:
            if op == "bcast":
                buf = np.zeros(size, dtype=np.uint8)
                nbytes = size
                ours = partial(collectives.bcast, buf, 0, comm)
                lib = partial(comm.Bcast, buf, 0)
            else:
                counts = irregular_counts(p, size)
                mine = np.full(counts[rank], rank % 251, dtype=np.uint8)
                out = np.zeros(size, dtype=np.uint8)
                nbytes = size
                ours = partial(collectives.allgatherv, mine, out, counts, comm)
                lib = partial(comm.Allgatherv, mine, [out, counts])
            ours_us = slowest_min(comm, ours, reps, clear=True)
            lib_us = slowest_min(comm, lib, reps, clear=False)
            n = plan.choose_blocks(p, nbytes, ab["alpha_us"], ab["beta_us_per_byte"])
            records.append(
                {
                    "op": op,
                    "size_bytes": size,
                    "ours_us": ours_us,
                    "library_us": lib_us,
                    "ratio": ours_us / lib_us if lib_us > 0 else float("nan"),
                    "blocks": n,
                    "rounds": 0 if p == 1 else plan.n_rounds_per_phase(p) + n - 1,
                }
            )
    return {
        "np": p,
        "library": " ".join(MPI.Get_library_version().splitlines()[0].split()),
        "mpi4py": __import__("mpi4py").__version__,
        "reps": reps,
        "alpha_us": ab["alpha_us"],
        "beta_us_per_byte": ab["beta_us_per_byte"],
        "records": records,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m collsynth.mpi.bench")
    ap.add_argument("--sizes", default="1,1024,65536", help="comma-separated sizes (4096, 4KiB, 1MB)")
    ap.add_argument("--reps", type=int, default=35)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--out", help="write the JSON result here (rank 0) instead of stdout")
    args = ap.parse_args(argv)
    comm = collectives.comm_world()
    from collsynth.cli.bench_mpi import parse_sizes  # the one size parser (the core's)

    result = run(comm, parse_sizes(args.sizes), args.reps, args.ops.split(","))
    if comm.Get_rank() == 0:
        text = json.dumps(result, indent=2) + "\n"
        if args.out:
            atomic_write(args.out, text)
        else:
            sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
